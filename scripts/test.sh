#!/bin/sh
# make test's runner: the MPI tests (build-mpi/nhbench_mpi_tests, one at a time) and the Criterion
# suite (BUILD/nhbench_tests, through ctest: one test per suite, JOBS at a time) side by side. The
# MPI tests spend most of their time waiting for mpirun to start and stop ranks, so running them
# beside the suite costs it little and saves their half minute. ctest prints a line as each suite
# passes or fails (the progress) and the output of the failing ones only (a passing test's expected
# failure messages stay out of sight); the MPI tests' output is kept and shown after it; the closing
# line says which of the two failed, if any.
#   scripts/test.sh BUILD JOBS
# Exit status: 0 when both passed, 1 otherwise.
set -u
build=$1 jobs=$2
log=$(mktemp "${TMPDIR:-/tmp}/nhbench-mpi-tests.XXXXXX") || exit 1
trap 'rm -f "$log"' EXIT
build-mpi/nhbench_mpi_tests --jobs 1 >"$log" 2>&1 &
mpi=$!
ctest --test-dir "$build" -j "$jobs" --output-on-failure
suite=$?
wait "$mpi"
mpirc=$?
echo
echo "MPI tests (build-mpi/nhbench_mpi_tests):"
cat "$log"
if [ "$suite" -eq 0 ] && [ "$mpirc" -eq 0 ]; then
  echo "make test: passed (the Criterion suite and the MPI tests)"
  exit 0
fi
[ "$suite" -eq 0 ] || echo "make test: the Criterion suite FAILED (exit status $suite)" >&2
[ "$mpirc" -eq 0 ] || echo "make test: the MPI tests FAILED (exit status $mpirc)" >&2
exit 1
