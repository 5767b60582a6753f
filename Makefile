# Thin wrapper over CMake. Every target installs missing Debian packages first (make deps).
BUILD     ?= build
BUILDTYPE ?= Release
NHBENCH    = $(BUILD)/nhbench
RESULTS   ?= results
JOBS      ?= 2
MAKEFLAGS += --no-print-directory
# FULL=1 runs the paper's scale (spec/newmark.md §3.2, Fig. 3: 100 initial conditions, T = 10000).
ifeq ($(FULL),1)
CHAOTIC_SET = --set ensemble.count=100 --set T=10000 --set sample_every=25
endif

.PHONY: all deps build test asan study-chaotic examples plots bench clean

all: build

deps:
	@scripts/deps.sh

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILDTYPE) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

test: build
	@$(BUILD)/nhbench_tests --jobs $(JOBS)

# Tests under AddressSanitizer and UndefinedBehaviorSanitizer.
asan: deps
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DNHBENCH_SANITIZE=ON >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 build-asan/nhbench_tests --jobs $(JOBS)

study-chaotic: build
	@mkdir -p $(RESULTS)
	$(NHBENCH) run studies/chaotic_ensemble.cfg -o $(RESULTS)/chaotic_ensemble.h5 $(CHAOTIC_SET)
	$(NHBENCH) run studies/chaotic_convergence.cfg -o $(RESULTS)/chaotic_convergence.h5
	@$(MAKE) --no-print-directory plots

# One small spec per study kind (studies/examples/), run and plotted into results/examples/.
EXAMPLES = $(sort $(wildcard studies/examples/*.cfg))
examples: build
	@mkdir -p $(RESULTS)/examples
	@for spec in $(EXAMPLES); do \
	  $(NHBENCH) run $$spec -o $(RESULTS)/examples/$$(basename $$spec .cfg).h5 || exit 1; \
	done
	@NHBENCH=$(NHBENCH) plots/make_plots.sh $(RESULTS)/examples

plots: build
	@NHBENCH=$(NHBENCH) plots/make_plots.sh $(RESULTS)

bench: build
	@$(BUILD)/nhbench_bench

clean:
	rm -rf $(BUILD) build-asan
