# The two commands the README gives a new user:
#   make demo   install, then rewrite examples/essay.md with the bundled default model
#   make test   install, then run the whole test suite (what CI runs, see .ci/run)
# Both use the same install: a virtual environment in .venv with pedit and its test extras.

PYTHON ?= python3
VENV ?= .venv
BIN := $(VENV)/bin
STAMP := $(VENV)/.pedit-installed
# llama-cpp-python compiles llama.cpp from source; its multimodal part is not needed.
# Not -march=native: on a Xeon with AMX, llama.cpp's native build runs AMX tile
# instructions the kernel has not enabled for the process (a general protection fault in
# libggml-cpu on the first quantized matmul); AVX2 runs on every x86-64 machine here, Intel
# or AMD, so a wheel pip cached on one runs on the other.
export CMAKE_ARGS ?= -DLLAVA_BUILD=OFF -DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON
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
