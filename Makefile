# kiln — the two quick-start commands. Both install what is missing, configure and build.
BUILD ?= build
JOBS ?= $(shell nproc)

.PHONY: deps configure build demo test sanitize fuzz clean

deps:
	@bash scripts/install-deps.sh

configure: deps
	@cmake -S . -B $(BUILD) -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo >/dev/null

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
