# SPDX-License-Identifier: Apache-2.0
# The two commands of the README.
#   make run    build, then benchmark the ladder on the local GPU against cuBLAS: table on the
#               console, JSON and PNG charts in bench/out/ (fails with a clear message without a GPU)
#   make test   build, then run every test (GPU tests skip without a device)
#   make deps   install what is missing (scripts/install-deps.sh); build runs it first, DEPS=0 skips it
#   make sanitize  the CPU tests built with AddressSanitizer and UndefinedBehaviorSanitizer (Debug,
#               in $(SANITIZE_BUILD)): the host's size arithmetic, validation and reference, where
#               a Release build would pass over an overflow
# Variables: BUILD (build folder), ARCHS (CUDA architectures, e.g. ARCHS=90a for an H100/H200 only).
BUILD ?= build
ARCHS ?= 80;89;90a
JOBS ?= $(shell nproc)
RUN_JSON ?= bench/out/hgemm-bench.json
SANITIZE_BUILD ?= build-sanitize
DEPS ?= 1
# nvcc also from /usr/local/cuda/bin when it is not on PATH
export PATH := $(PATH):/usr/local/cuda/bin

.PHONY: deps build test sanitize run clean gpu

deps:
ifneq ($(DEPS),0)
	scripts/install-deps.sh
endif

build: deps
	@echo "make: building for CUDA architectures $(ARCHS); one is about a third of the time (ARCHS=90a for H100/H200)"
	cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=Release -DHGEMM_CUDA_ARCHS="$(ARCHS)"
	cmake --build $(BUILD) -j $(JOBS)

test: build
	cd $(BUILD) && ctest --output-on-failure -j $(JOBS)

sanitize: deps
	cmake -S . -B $(SANITIZE_BUILD) -DCMAKE_BUILD_TYPE=Debug -DHGEMM_CUDA_ARCHS="$(ARCHS)" \
	  -DCMAKE_CXX_FLAGS="-fsanitize=address,undefined -fno-sanitize-recover=all -fno-omit-frame-pointer" \
	  -DCMAKE_EXE_LINKER_FLAGS="-fsanitize=address,undefined"
	cmake --build $(SANITIZE_BUILD) -j $(JOBS) --target hgemm_cpu_tests
	UBSAN_OPTIONS=print_stacktrace=1 $(SANITIZE_BUILD)/tests/hgemm_cpu_tests --gtest_brief=1

# Checked before the build: without a GPU there is nothing to benchmark.
gpu:
	@nvidia-smi -L >/dev/null 2>&1 || { echo "make run: no CUDA GPU found (nvidia-smi -L fails); make test runs without one" >&2; exit 1; }

run: gpu build
	mkdir -p $(dir $(RUN_JSON))
	$(BUILD)/tools/hgemm-bench --suite ladder --json $(RUN_JSON) --csv $(RUN_JSON:.json=.csv)
	python3 python/plot_bench.py $(RUN_JSON) --out-dir $(dir $(RUN_JSON))

clean:
	rm -rf $(BUILD) $(SANITIZE_BUILD)
