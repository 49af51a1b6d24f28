# kiln — the two quick-start commands. Both install what is missing, configure and build.
BUILD ?= build
JOBS ?= $(shell nproc)
PYTHON ?= python3
# The Python package is built in the same build (KILN_PYTHON), against a virtual environment
# that holds its build and test tools (nanobind, pytest, numpy), made once per build folder.
# KILN_TEST_TORCH=1 (CI sets it) adds PyTorch from PyPI (about 5 GB with its CUDA libraries; a
# minute to install) for kiln.torch's tests, which need no GPU: fake shapes, torch.compile and
# torch.export on meta tensors. Without it those tests skip, saying why; with it they must run.
PYENV := $(abspath $(BUILD))/pyenv
PYENV_TORCH := $(if $(filter 1,$(KILN_TEST_TORCH)),$(PYENV)/.torch)

.PHONY: deps configure build demo test sanitize fuzz clean

deps:
	@bash scripts/install-deps.sh

$(PYENV)/bin/python:
	@$(PYTHON) -m venv $(PYENV) && $(PYENV)/bin/python -m pip install -q nanobind pytest numpy

$(PYENV)/.torch: $(PYENV)/bin/python
	@$(PYENV)/bin/python -m pip install -q torch && touch $@

configure: deps $(PYENV)/bin/python $(PYENV_TORCH)
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_PYTHON=ON \
	  -DPython_EXECUTABLE=$(PYENV)/bin/python >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@bash scripts/demo.sh $(BUILD)

test: build
	@cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

# CPU tests under ASan+UBSan (build-asan) and the thread/process tests under TSan (build-tsan).
sanitize: deps
	@SANITIZE_JOBS=$(JOBS) bash scripts/sanitize.sh

fuzz: deps
	@bash scripts/fuzz.sh

clean:
	rm -rf $(BUILD) build-asan build-tsan
