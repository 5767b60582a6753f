# Thin wrapper over CMake. Every target installs missing Debian packages first (make deps).
BUILD     ?= build
BUILDTYPE ?= Release
NHBENCH    = $(BUILD)/nhbench
RESULTS   ?= results
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
MAKEFLAGS += --no-print-directory
# FULL=1 runs the paper's scale (spec/newmark.md §3.2, Fig. 3: 100 initial conditions, T = 10000).
ifeq ($(FULL),1)
CHAOTIC_SET = --set ensemble.count=100 --set T=10000 --set sample_every=25
endif

.PHONY: all deps build test asan coverage study-chaotic examples plots paper paper-report bench clean

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
	@# One job: Criterion's parallel runner itself now and then leaks 48 bytes in its parent process
	@# (a libcriterion allocation, no frame of ours), which LeakSanitizer would report as ours.
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 build-asan/nhbench_tests --jobs 1

# Line and branch coverage of the test suite, per source folder (gcovr; installed if missing).
COVERAGE_DIRS = core systems integrators studies results bench
coverage: deps
	@scripts/deps.sh gcovr
	@cmake -S . -B build-coverage -DCMAKE_BUILD_TYPE=Debug -DNHBENCH_COVERAGE=ON >/dev/null
	@cmake --build build-coverage -j $(JOBS)
	@find build-coverage -name '*.gcda' -delete
	@build-coverage/nhbench_tests --jobs $(JOBS) >/dev/null 2>&1 || echo "coverage: some tests failed" >&2
	@printf '%-12s %8s %8s\n' folder lines branches
	@for d in $(COVERAGE_DIRS); do \
	  gcovr -r . --object-directory build-coverage --filter "$$d/" --print-summary -o /dev/null 2>/dev/null | \
	    awk -v d=$$d '/^lines:/ {l=$$2} /^branches:/ {b=$$2} END {printf "%-12s %8s %8s\n", d, l, b}'; \
	done

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

# Reproducing the papers (README.md, "Reproducing the papers"): every study spec of studies/paper/
# into results/paper/, then the claims report and the figures. FULL=1: the papers' full scale
# where the default is reduced (spec/newmark.md Fig. 3: 100 initial conditions, T = 10000).
PAPER       = $(RESULTS)/paper
PAPER_SPECS = $(sort $(wildcard studies/paper/*.cfg))
PAPER_CLAIMS = $(sort $(wildcard studies/paper/*.claims))
ifeq ($(FULL),1)
PAPER_SET_newmark_fig3 = --set ensemble.count=100 --set T=10000 --set sample_every=25
endif
# PAPER_ONLY="newmark_fig1 ...": only these specs (the report then says which files are missing).
PAPER_RUN = $(if $(PAPER_ONLY),$(filter $(PAPER_ONLY:%=studies/paper/%.cfg),$(PAPER_SPECS)),$(PAPER_SPECS))
paper: build
	@mkdir -p $(PAPER)
	@$(foreach spec,$(PAPER_RUN),$(NHBENCH) run $(spec) -o $(PAPER)/$(notdir $(spec:.cfg=.h5)) \
	  $(PAPER_SET_$(notdir $(spec:.cfg=))) && ) true
	@$(MAKE) --no-print-directory paper-report

# The report and figures again from the results files, without recomputing.
paper-report: build
	@$(NHBENCH) report $(PAPER_CLAIMS) --results $(PAPER) --output $(PAPER) --figures figures
	@PLOTS_DIR=$(PAPER)/figures NHBENCH=$(NHBENCH) plots/make_plots.sh $(PAPER) >/dev/null
	@echo "paper: $(PAPER)/REPORT.md, $(PAPER)/claims.csv, figures in $(PAPER)/figures/"

bench: build
	@$(BUILD)/nhbench_bench

clean:
	rm -rf $(BUILD) build-asan build-coverage
