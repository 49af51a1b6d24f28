# kiln — the two quick-start commands. Both install what is missing, configure and build.
BUILD ?= build
JOBS ?= $(shell nproc)
PYTHON ?= python3
# The Python package is built in the same build (KILN_PYTHON), against a virtual environment
# that holds its build and test tools (nanobind, pytest, numpy), made once per build folder.
# KILN_TEST_TORCH=1 (CI sets it) adds PyTorch from PyPI (5.3 GB with its CUDA libraries for torch
# 2.15; about 3 minutes to install) for kiln.torch's tests, which need no GPU: fake shapes,
# torch.compile and torch.export on meta tensors. Without it those tests skip, saying why; with it
# they must run. pip keeps no copy of the wheels in its cache (--no-cache-dir: 3 GB less on disk),
# and a failed install prints how much disk is left there.
PYENV := $(abspath $(BUILD))/pyenv
PYENV_TORCH := $(if $(filter 1,$(KILN_TEST_TORCH)),$(PYENV)/.torch)

.PHONY: deps configure build demo test sanitize fuzz clean

deps:
	@bash scripts/install-deps.sh

# cuobjdump and nvdisasm from NVIDIA's wheels on PyPI (5.5 MB; the CUDA toolkit here has neither):
# the tests that read SASS (mma issued, 16-byte accesses, no stack frame) run with them, and read
# PTX only without them. `make test` puts their folder on PATH where the venv has it.
CUDA_SASS_TOOLS := nvidia-cuda-cuobjdump==13.5.37 nvidia-cuda-nvdisasm==13.5.37

$(PYENV)/bin/python:
	@$(PYTHON) -m venv $(PYENV) && $(PYENV)/bin/python -m pip install -q nanobind pytest numpy $(CUDA_SASS_TOOLS)

$(PYENV)/.torch: $(PYENV)/bin/python
	@$(PYENV)/bin/python -m pip install -q --no-cache-dir torch || \
	  { echo "make: installing torch into $(PYENV) failed; disk there:" >&2; df -h $(PYENV) >&2; exit 1; }
	@touch $@

# RelWithDebInfo with line tables only (-g1): backtraces, sanitizer and gdb locations work, and
# the build takes a third less time than with full -g (variable locations at -O2 are the costliest
# part of compiling kiln). Configure your own build folder for full debug information.
configure: deps $(PYENV)/bin/python $(PYENV_TORCH)
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DKILN_PYTHON=ON \
	  -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
	  -DPython_EXECUTABLE=$(PYENV)/bin/python >/dev/null

build: configure
	@cmake --build $(BUILD) -j $(JOBS)

demo: build
	@bash scripts/demo.sh $(BUILD)

test: build
	@tools=$$(ls -d $(PYENV)/lib/python*/site-packages/nvidia/cu13/bin 2>/dev/null | head -1); \
	  cd $(BUILD) && PATH="$${tools:+$$tools:}$$PATH" ctest --output-on-failure -j $(JOBS)

# CPU tests under ASan+UBSan (build-asan) and the thread/process tests under TSan (build-tsan).
sanitize: deps
	@SANITIZE_JOBS=$(JOBS) bash scripts/sanitize.sh

fuzz: deps
	@bash scripts/fuzz.sh

clean:
	rm -rf $(BUILD) build-asan build-tsan
