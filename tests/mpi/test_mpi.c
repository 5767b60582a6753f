/* The cluster build (make test-mpi, -DNHBENCH_MPI=ON): `mpirun -np N nhbench run` spreads a study's
 * tasks over N ranks and writes one file whose datasets (timings aside) are bit-identical to a
 * single process's, whatever N; tasks that fail are recorded as in a single process and the run
 * completes; bad input is reported once, by rank 0, and every rank exits 2; a run killed under
 * mpirun resumes, under mpirun, from rank 0's journal; the file records the number of ranks.
 * Runs with --oversubscribe: this machine may have fewer cores than ranks. */
#define _POSIX_C_SOURCE 200809L /* popen */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "studies/study.h"
#include "tests/h5compare.h"
#include "tests/helpers.h"

/* mpirun -np RANKS nhbench run SPEC -o OUT EXTRA (RANKS 0: nhbench alone, no mpirun); the exit
 * status, and what it printed on stderr in text (may be NULL). Every run here takes seconds; one
 * that deadlocks (a rank waiting for a message that never comes) is stopped after RUN_LIMIT
 * seconds, exit status 124. Criterion's .timeout alone would not do: it kills the test, but
 * mpirun and its ranks keep the output pipe open and the suite would wait for them forever. */
#define RUN_LIMIT "120"
static int run_ranks(int ranks, const char *spec, const char *out, const char *extra, char *text, size_t len) {
  char cmd[2048], launcher[256] = "timeout -k 10 " RUN_LIMIT " ";
  const char *kill_after = getenv("NHBENCH_KILL_AFTER");
  if (ranks > 0) /* (OpenMPI refuses root unless told: CI machines run as root) */
    snprintf(launcher, sizeof launcher,
             "OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1 timeout -k 10 " RUN_LIMIT
             " %s -np %d --oversubscribe -x NHBENCH_KILL_AFTER ",
             NHBENCH_MPIRUN, ranks);
  snprintf(cmd, sizeof cmd, "cd %s && NHBENCH_KILL_AFTER=%s %s%s run %s -o %s %s 2>&1 >/dev/null", NHBENCH_SOURCE_DIR,
           kill_after ? kill_after : "0", launcher, NHBENCH_EXE, spec, out, extra);
  char sink[8192];
  if (!text) text = sink, len = sizeof sink;
  return test_run_command(cmd, text, len);
}

static void tmp_name(char *buf, size_t len, const char *what) {
  snprintf(buf, len, "/tmp/nhbench-mpi-%d-%s", (int)getpid(), what);
}

/* A process of the cluster build that never started MPI (this test, a command called in-process)
 * is rank 0 of 1, as outside MPI (studies/study.h), and keeps its own exit status. */
Test(mpi, a_process_without_mpi_is_rank_0_of_1) {
  cr_expect_eq(nh_study_rank(), 0);
  cr_expect_eq(nh_study_ranks(), 1);
  cr_expect_eq(nh_ranks_agree(7), 7);
}

/* The spec run by nhbench alone, then under mpirun with 1, 2 and 3 ranks: the same datasets. */
static void same_whatever_the_ranks(const char *spec) {
  char one[256], many[256];
  tmp_name(one, sizeof one, "one.h5");
  tmp_name(many, sizeof many, "many.h5");
  cr_assert_eq(run_ranks(0, spec, one, "", NULL, 0), 0, "%s alone", spec);
  for (int ranks = 1; ranks <= 3; ranks++) {
    remove(many);
    char text[8192];
    cr_assert_eq(run_ranks(ranks, spec, many, "", text, sizeof text), 0, "%s on %d ranks: %s", spec, ranks, text);
    int compared;
    cr_expect_eq(differing_datasets(one, many, spec, &compared), 0, "%s: %d ranks differ from one process", spec,
                 ranks);
    cr_expect(compared >= 8, "%s: only %d datasets compared", spec, compared);
    hid_t f = H5Fopen(many, H5F_ACC_RDONLY, H5P_DEFAULT);
    int recorded = 0;
    H5LTget_attribute_int(f, "/", "ranks", &recorded);
    H5Fclose(f);
    cr_expect_eq(recorded, ranks, "%s: the file records %d ranks, not %d", spec, recorded, ranks);
  }
  remove(one), remove(many);
}

Test(mpi, ensemble_with_observables_is_the_same_on_any_number_of_ranks, .timeout = 300) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  same_whatever_the_ranks("tests/data/ensemble_observables.cfg");
}

Test(mpi, every_other_kind_is_the_same_on_any_number_of_ranks, .timeout = 300) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  same_whatever_the_ranks("studies/chaotic_convergence.cfg");
  same_whatever_the_ranks("tests/data/trajectory_particle.cfg");
  same_whatever_the_ranks("tests/data/onestep_random.cfg");
  same_whatever_the_ranks("tests/data/work_precision_small.cfg");
}

/* An ensemble whose methods diverge on some initial conditions: the failed trajectories are
 * recorded (status) as a single process records them, and the run completes. */
Test(mpi, failed_tasks_are_recorded_and_the_run_completes, .timeout = 300) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  same_whatever_the_ranks("tests/data/diverging_ensemble.cfg");
  char one[256];
  tmp_name(one, sizeof one, "diverging.h5");
  cr_assert_eq(run_ranks(2, "tests/data/diverging_ensemble.cfg", one, "", NULL, 0), 0);
  size_t bytes = 0;
  int *status = read_raw(one, "status", &bytes);
  int failed = 0;
  for (size_t i = 0; status && i < bytes / sizeof *status; i++) failed += status[i] != 0;
  cr_expect(failed > 0, "no trajectory failed: the spec no longer tests failures");
  free(status);
  remove(one);
}

/* A bad spec: one message (rank 0's), exit 2 on every rank (mpirun then exits 2). */
Test(mpi, bad_input_is_reported_once, .timeout = 120) {
  char out[256], text[8192];
  tmp_name(out, sizeof out, "bad.h5");
  cr_expect_eq(run_ranks(3, "tests/data/bad_unknown_method.cfg", out, "", text, sizeof text), 2, "%s", text);
  const char *first = strstr(text, "unknown method");
  cr_expect(first && !strstr(first + 1, "unknown method"), "the message is not said exactly once:\n%s", text);
  cr_expect(access(out, F_OK) != 0, "a file was written");
  cr_expect_eq(run_ranks(2, "tests/data/small_ensemble.cfg", out, "--set T=-1", text, sizeof text), 2, "%s", text);
  /* The output is rank 0's to check, and its answer every rank's: a directory that cannot be made
   * (under a file) stops them all before the run. */
  cr_expect_eq(run_ranks(2, "tests/data/small_ensemble.cfg", "/dev/null/out.h5", "", text, sizeof text), 2, "%s", text);
  cr_expect(strstr(text, "output directory /dev/null") && !strstr(text, "study of"), "a run started:\n%s", text);
}

/* Killed under mpirun right after rank 0 journaled 5 trajectories, resumed under mpirun with
 * another number of ranks and killed again after 3 more: the journal then holds 8 tasks (rank 0
 * hands out only the tasks not journaled yet; one handed out again would be a record of a task
 * already there). Resumed once more: the file of an uninterrupted single process. */
Test(mpi, a_killed_run_resumes_on_other_ranks, .timeout = 300) {
  char one[256], part[256], journal[300], text[8192];
  tmp_name(one, sizeof one, "res-one.h5");
  tmp_name(part, sizeof part, "res-part.h5");
  snprintf(journal, sizeof journal, "%s.journal", part);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  const char *spec = "tests/data/ensemble_observables.cfg";
  cr_assert_eq(run_ranks(0, spec, one, "", NULL, 0), 0);
  remove(part), remove(journal);
  setenv("NHBENCH_KILL_AFTER", "5", 1);
  cr_expect_neq(run_ranks(2, spec, part, "", text, sizeof text), 0, "the run was not killed: %s", text);
  unsetenv("NHBENCH_KILL_AFTER");
  cr_expect(access(part, F_OK) != 0 && access(journal, F_OK) == 0, "a killed run leaves its journal only");
  setenv("NHBENCH_KILL_AFTER", "3", 1);
  cr_expect_neq(run_ranks(3, spec, part, "--resume", text, sizeof text), 0, "the resumed run was not killed: %s", text);
  unsetenv("NHBENCH_KILL_AFTER");
  cr_expect(strstr(text, "resuming: 5 of 12"), "not resumed from 5 trajectories:\n%s", text);
  cr_assert_eq(run_ranks(2, spec, part, "--resume", text, sizeof text), 0, "%s", text);
  cr_expect(strstr(text, "resuming: 8 of 12"), "not resumed from 8 trajectories:\n%s", text);
  int compared;
  cr_expect_eq(differing_datasets(one, part, spec, &compared), 0, "the resumed file differs");
  remove(one), remove(part);
}
