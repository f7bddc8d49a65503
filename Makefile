# The two commands the README gives a new user:
#   make demo   install, then rewrite examples/essay.md with the bundled default model
#   make test   install, then run the whole test suite (what CI runs, see .ci/run)
# Both use the same install: a virtual environment in .venv with pedit and its test extras.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.pedit-installed
# llama-cpp-python compiles llama.cpp from source; its multimodal part is not needed.
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF
# Everything below runs offline: no model hub at run time.
export HF_HUB_OFFLINE := 1

.PHONY: install test demo clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install -e '.[test]'
	touch $@

test: install
	$(BIN)/pytest

demo: install
	$(BIN)/pedit fix examples/essay.md --diff

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
