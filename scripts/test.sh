#!/bin/sh
# make test's runner: the Criterion suite (BUILD/nhbench_tests, through ctest: one test per suite,
# JOBS at a time) and, given MPI_BUILD (make test MPI=1), the MPI tests (MPI_BUILD/nhbench_mpi_tests,
# one at a time) beside it. The MPI tests spend most of their time waiting for mpirun to start and
# stop ranks, so running them beside the suite costs it little and saves their half minute. ctest
# prints a line as each suite passes or fails (the progress) and the output of the failing ones only
# (a passing test's expected failure messages stay out of sight); the MPI tests' output is kept and
# shown after it; the closing line says which failed, if any.
#   scripts/test.sh BUILD JOBS [MPI_BUILD]
# Exit status: 0 when everything run passed, 1 otherwise.
set -u
build=$1 jobs=$2 mpibuild=${3:-}
mpi="" mpirc=0
if [ -n "$mpibuild" ]; then
  log=$(mktemp "${TMPDIR:-/tmp}/nhbench-mpi-tests.XXXXXX") || exit 1
  trap 'rm -f "$log"' EXIT
  "$mpibuild/nhbench_mpi_tests" --jobs 1 >"$log" 2>&1 &
  mpi=$!
fi
ctest --test-dir "$build" -j "$jobs" --output-on-failure
suite=$?
if [ -n "$mpi" ]; then
  wait "$mpi"
  mpirc=$?
  echo
  echo "MPI tests ($mpibuild/nhbench_mpi_tests):"
  cat "$log"
fi
what="the Criterion suite of $build/"
[ -n "$mpi" ] && what="$what and the MPI tests"
if [ "$suite" -eq 0 ] && [ "$mpirc" -eq 0 ]; then
  echo "make test: passed ($what)"
  exit 0
fi
[ "$suite" -eq 0 ] || echo "make test: the Criterion suite of $build/ FAILED (exit status $suite)" >&2
[ "$mpirc" -eq 0 ] || echo "make test: the MPI tests FAILED (exit status $mpirc)" >&2
exit 1
