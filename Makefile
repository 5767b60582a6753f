# Thin wrapper over CMake. Every target first finds what it needs and installs only what is missing,
# where it can (scripts/deps.sh: apt-get as root or with sudo); elsewhere it stops with the packages
# to install for apt, dnf, Homebrew and conda-forge and the CMake line to run.
BUILD     ?= build
BUILDTYPE ?= Release
NHBENCH    = $(BUILD)/nhbench
RESULTS   ?= results
JOBS      ?= $(shell nproc 2>/dev/null || echo 2)
MAKEFLAGS += --no-print-directory
# The optional parts, off by default as for CMake and CI's first pass (README.md, "Install"):
#   SUNDIALS=1  the methods ida and cvode (README.md, "SUNDIALS build"), in build-sundials/: installs
#               libsundials-dev (353 MB with MPI and PETSc), make test runs their tests too and make
#               paper also the specs of studies/paper/sundials/ (herglotz item 15);
#   MPI=1       make test also builds build-mpi/ (installing OpenMPI) and runs the MPI tests beside
#               the suite (README.md, "Many nodes: MPI"; make test-mpi runs them alone).
SUNDIALS ?= 0
MPI      ?= 0
# The parts of scripts/deps.sh: the tool and its figures; the tests add Criterion and h5dump.
TOOL_PARTS = tool plots $(if $(filter 1,$(SUNDIALS)),sundials)
TEST_PARTS = $(TOOL_PARTS) tests
ifeq ($(SUNDIALS),1)
BUILD          = build-sundials
CMAKE_OPTIONS += -DNHBENCH_SUNDIALS=ON
else
CMAKE_OPTIONS += -DNHBENCH_SUNDIALS=OFF
endif
# FULL=1 runs the paper's scale (spec/newmark.md §3.2, Fig. 3: 100 initial conditions, T = 10000).
ifeq ($(FULL),1)
CHAOTIC_SET = --set ensemble.count=100 --set T=10000 --set sample_every=25
endif

.PHONY: all deps build tool test test-mpi test-mpi-build asan coverage fuzz fuzz-seeds study-chaotic studies examples plots paper paper-report bench readme-settings clean

all: build

deps:
	@scripts/deps.sh $(TEST_PARTS)

build: deps
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILDTYPE) -DBUILD_TESTING=ON $(CMAKE_OPTIONS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS)

# The nhbench command alone: what the targets that run studies and draw figures need (the test
# suite and the benchmarks are built by build, test and bench; Criterion is not needed for it).
tool:
	@scripts/deps.sh $(TOOL_PARTS)
	@cmake -S . -B $(BUILD) -DCMAKE_BUILD_TYPE=$(BUILDTYPE) $(if $(wildcard $(BUILD)/CMakeCache.txt),,-DBUILD_TESTING=OFF) $(CMAKE_OPTIONS) >/dev/null
	@cmake --build $(BUILD) -j $(JOBS) --target nhbench

# The Criterion suite through ctest (scripts/test.sh), one test per suite, a line as each ends;
# with MPI=1 also the MPI tests beside it. A closing line says whether everything passed.
test: build $(if $(filter 1,$(MPI)),test-mpi-build)
	@scripts/test.sh $(BUILD) $(JOBS) $(if $(filter 1,$(MPI)),build-mpi)

# The cluster build (README.md, "Many nodes: MPI") and its tests, which run nhbench under
# mpirun with up to 3 ranks (--oversubscribe: fewer cores are enough).
test-mpi-build:
	@scripts/deps.sh tool tests mpi
	@cmake -S . -B build-mpi -DCMAKE_BUILD_TYPE=$(BUILDTYPE) -DNHBENCH_MPI=ON >/dev/null
	@cmake --build build-mpi -j $(JOBS) --target nhbench nhbench_mpi_tests

test-mpi: test-mpi-build
	@build-mpi/nhbench_mpi_tests --jobs 1

# Tests under AddressSanitizer and UndefinedBehaviorSanitizer.
asan: deps
	@cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DNHBENCH_SANITIZE=ON $(CMAKE_OPTIONS) >/dev/null
	@cmake --build build-asan -j $(JOBS)
	@# One job: Criterion's parallel runner itself now and then leaks 48 bytes in its parent process
	@# (a libcriterion allocation, no frame of ours), which LeakSanitizer would report as ours.
	@ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 build-asan/nhbench_tests --jobs 1

# Line and branch coverage of the test suite, per source folder (gcovr; installed if missing). The
# summary is picked out of gcovr's standard output: `gcovr -o /dev/null` run as root replaces the
# device with a regular file.
COVERAGE_DIRS = core systems integrators studies results bench/cli bench/claims bench/performance
coverage: deps
	@scripts/deps.sh coverage
	@cmake -S . -B build-coverage -DCMAKE_BUILD_TYPE=Debug -DNHBENCH_COVERAGE=ON $(CMAKE_OPTIONS) >/dev/null
	@cmake --build build-coverage -j $(JOBS)
	@find build-coverage -name '*.gcda' -delete
	@build-coverage/nhbench_tests --jobs $(JOBS) >/dev/null 2>&1 || echo "coverage: some tests failed" >&2
	@printf '%-18s %8s %8s\n' folder lines branches
	@for d in $(COVERAGE_DIRS); do \
	  gcovr -r . --object-directory build-coverage --filter "$$d/" --print-summary 2>/dev/null | \
	    awk -v d=$$d '/^lines:/ {l=$$2} /^branches:/ {b=$$2} END {printf "%-18s %8s %8s\n", d, l, b}'; \
	done

# Fuzzing (README.md, "Fuzzing"): each libFuzzer target of tests/fuzz/ for FUZZ_SECONDS under ASan
# and UBSan. New inputs go to build-fuzz/corpus/TARGET (listed first, so libFuzzer writes there);
# the committed seeds in tests/fuzz/corpus/TARGET are only read. libFuzzer runs in a child process
# (-fork=1) that is restarted after a crash, leak, hang or huge allocation, with the input saved
# in build-fuzz/findings/TARGET/ (its exit status then says only that there are findings);
# scripts/fuzz_triage.sh replays each one and fails make if it is nhbench's (HDF5 1.10 crashes and
# hangs on some damaged files, and inputs that never crash alone: listed, not failing).
FUZZ_SECONDS ?= 60
FUZZ_TARGETS  = spec method results results_edit journal
FUZZ_LIMITS   = -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=1024
FUZZ_FLAGS    = -max_total_time=$(FUZZ_SECONDS) $(FUZZ_LIMITS) -fork=1 -ignore_crashes=1 -ignore_ooms=1 \
                -ignore_timeouts=1 -close_fd_mask=3
FUZZ_ENV      = LSAN_OPTIONS=suppressions=tests/fuzz/lsan.supp:print_suppressions=0
# HDF5 allocates a variable-length string's declared length (up to 4 GiB) before it reads the
# string, so a damaged length costs gigabytes and seconds inside HDF5. Refusing allocations above
# 1 GiB makes HDF5 fail the read instead, as it would under a memory limit; an unchecked huge
# allocation of nhbench's own then crashes on NULL, still a finding. Full stacks at malloc let the
# leak suppressions name HDF5's functions (it has no frame pointers).
FUZZ_ENV_results = ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=1024:fast_unwind_on_malloc=0
# The names that were shell or gnuplot code (tests/fuzz/results.dict), for both results targets.
FUZZ_FLAGS_results = -dict=tests/fuzz/results.dict
# fuzz_results_edit's inputs are edit lists, short; libFuzzer would otherwise grow them from the 1-byte seeds slowly.
FUZZ_ENV_results_edit = ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=1024
FUZZ_FLAGS_results_edit = -max_len=512 -dict=tests/fuzz/results.dict
# The journal reader may refuse a journal for want of memory (studies/checkpoint.h): an allocation
# above 1 GiB fails, as under a memory limit, instead of counting as a finding (libFuzzer's
# -malloc_limit_mb counts one of exactly 1 GiB already, hence 1023).
FUZZ_ENV_journal = ASAN_OPTIONS=allocator_may_return_null=1:max_allocation_size_mb=1023
FUZZ_FLAGS_journal = -dict=tests/fuzz/journal.dict
# The results targets' seeds are results files made by nhbench itself (scripts/fuzz_seeds.sh),
# never committed.
FUZZ_SEEDS = build-fuzz/seeds/results
FUZZ_CORPUS_results = $(FUZZ_SEEDS)
fuzz-seeds: tool
	@NHBENCH=$(NHBENCH) scripts/fuzz_seeds.sh $(FUZZ_SEEDS)

fuzz: fuzz-seeds
	@scripts/deps.sh fuzz
	@CC=clang cmake -S . -B build-fuzz -DNHBENCH_FUZZ=ON -DBUILD_TESTING=OFF >/dev/null
	@cmake --build build-fuzz -j $(JOBS) --target $(FUZZ_TARGETS:%=fuzz_%)
	@rc=0; $(foreach t,$(FUZZ_TARGETS),rm -rf build-fuzz/findings/$(t); \
	  mkdir -p build-fuzz/corpus/$(t) build-fuzz/findings/$(t); \
	  echo "fuzz: fuzz_$(t) for $(FUZZ_SECONDS) s" >&2; \
	  $(FUZZ_ENV) $(FUZZ_ENV_$(t)) build-fuzz/fuzz_$(t) $(FUZZ_FLAGS) $(FUZZ_FLAGS_$(t)) -artifact_prefix=build-fuzz/findings/$(t)/ \
	    build-fuzz/corpus/$(t) $(or $(FUZZ_CORPUS_$(t)),tests/fuzz/corpus/$(t)) || [ -n "$$(ls build-fuzz/findings/$(t))" ] || rc=1; \
	  $(FUZZ_ENV) $(FUZZ_ENV_$(t)) scripts/fuzz_triage.sh build-fuzz/fuzz_$(t) build-fuzz/findings/$(t) $(FUZZ_LIMITS) || rc=1;) \
	exit $$rc

study-chaotic: tool
	@mkdir -p $(RESULTS)
	$(NHBENCH) run studies/chaotic_ensemble.cfg -o $(RESULTS)/chaotic_ensemble.h5 $(CHAOTIC_SET)
	$(NHBENCH) run studies/chaotic_convergence.cfg -o $(RESULTS)/chaotic_convergence.h5
	@$(MAKE) --no-print-directory plots

# run-specs DIR SPECS: each spec into DIR/NAME.h5 (stopping at the first that fails), then DIR's plots.
define run-specs
@mkdir -p $(1)
@for spec in $(2); do \
  $(NHBENCH) run $$spec -o $(1)/$$(basename $$spec .cfg).h5 || exit 1; \
done
@NHBENCH=$(NHBENCH) plots/make_plots.sh $(1)
endef

# The comparison studies of studies/*.cfg (README.md, "Systems"), run and plotted into
# results/studies/; STUDIES="studies/A.cfg ..." runs only those. cvt_map.cfg is left out: a
# cluster-sized map (README.md, "Many nodes: MPI").
STUDIES ?= $(filter-out studies/cvt_map.cfg,$(sort $(wildcard studies/*.cfg)))
studies: tool
	$(call run-specs,$(RESULTS)/studies,$(STUDIES))

# One small spec per study kind (studies/examples/), run and plotted into results/examples/.
EXAMPLES = $(sort $(wildcard studies/examples/*.cfg))
examples: tool
	$(call run-specs,$(RESULTS)/examples,$(EXAMPLES))

plots: tool
	@NHBENCH=$(NHBENCH) plots/make_plots.sh $(RESULTS)

# Reproducing the papers (README.md, "Reproducing the papers"): every study spec of studies/paper/
# into results/paper/, then the claims report and the figures. FULL=1: the papers' full scale
# where the default is reduced (spec/newmark.md Fig. 3: 100 initial conditions, T = 10000).
PAPER       = $(RESULTS)/paper
PAPER_SPECS = $(sort $(wildcard studies/paper/*.cfg)) $(if $(filter 1,$(SUNDIALS)),$(sort $(wildcard studies/paper/sundials/*.cfg)))
PAPER_CLAIMS = $(sort $(wildcard studies/paper/*.claims))
ifeq ($(FULL),1)
PAPER_SET_newmark_fig3 = --set ensemble.count=100 --set T=10000 --set sample_every=25
endif
# PAPER_ONLY="newmark_fig1 ...": only these specs (the report then says which files are missing).
PAPER_RUN = $(if $(PAPER_ONLY),$(filter $(PAPER_ONLY:%=studies/paper/%.cfg),$(PAPER_SPECS)),$(PAPER_SPECS))
paper: tool
	@mkdir -p $(PAPER) $(if $(filter 1,$(SUNDIALS)),$(PAPER)/sundials)
	@$(foreach spec,$(PAPER_RUN),$(NHBENCH) run $(spec) -o $(PAPER)/$(spec:studies/paper/%.cfg=%.h5) \
	  $(PAPER_SET_$(notdir $(spec:.cfg=))) && ) true
	@$(MAKE) --no-print-directory paper-report

# The report and figures again from the results files, without recomputing.
paper-report: tool
	@$(NHBENCH) report $(PAPER_CLAIMS) --results $(PAPER) --output $(PAPER) --figures figures
	@PLOTS_DIR=$(PAPER)/figures NHBENCH=$(NHBENCH) plots/make_plots.sh $(PAPER) >/dev/null
	@echo "paper: $(PAPER)/REPORT.md, $(PAPER)/claims.csv, figures in $(PAPER)/figures/"

bench: build
	@$(BUILD)/nhbench_bench

# README.md's table of every spec setting, written again from the settings table and the kinds'
# tables (nhbench list settings --markdown) between its markers; tests/contracts/test_settings.c
# fails while the two differ.
readme-settings: tool
	@$(NHBENCH) list settings --markdown > README.md.settings
	@awk -v f=README.md.settings '/^<!-- end of nhbench list settings/ {skip = 0} !skip {print} \
	  /^<!-- nhbench list settings --markdown/ {while ((getline l < f) > 0) print l; skip = 1}' README.md > README.md.new
	@mv README.md.new README.md && rm -f README.md.settings
	@echo "README.md: the settings table written from nhbench list settings --markdown"

clean:
	rm -rf build build-asan build-coverage build-fuzz build-mpi build-sundials
