# The two commands the README gives a new user:
#   make demo   install, then rewrite examples/essay.md with the bundled default model
#   make test   install, then run the whole test suite (what CI runs, see .ci/run)
# Both use the same install: a virtual environment in .venv with pedit and its test extras.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.pedit-installed
# llama-cpp-python compiles llama.cpp from source. pedit/models/nativebuild.py builds it for
# this CPU (llama.cpp's own default, -march=native: AVX-512 where the CPU has it, AMX where its
# tiles run here), keeps the wheel per CPU in the user cache, and after the install checks it
# with a tiny model in a child process: a build that crashes here is replaced by the next
# safer one (native without AMX, then AVX2). docs/models.md says what each machine gets.
# Everything below runs offline: no model hub at run time.
export HF_HUB_OFFLINE := 1

.PHONY: install test demo clean

install: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python pedit/models/nativebuild.py install
	$(BIN)/python -m pip install -e '.[test]'
	$(BIN)/python -m pedit.models.nativebuild check
	touch $@

test: install
	$(BIN)/pytest

demo: install
	$(BIN)/pedit fix examples/essay.md --diff

clean:
	rm -rf $(VENV) build *.egg-info .pytest_cache
