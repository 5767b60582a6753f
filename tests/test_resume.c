/* Checkpoint and resume (issue 12): an ensemble run killed with SIGKILL at several moments and
 * resumed with --resume writes a file whose datasets are bit-identical to an uninterrupted run's;
 * a journal of another spec, none at all, or --resume of another study kind are refused; a
 * journal cut inside a record resumes from its complete records; temporary files of killed runs
 * are removed. */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "results/results.h"
#include "tests/h5compare.h"
#include "studies/study.h"

#define SPEC NHBENCH_SOURCE_DIR "/studies/chaotic_ensemble.cfg"
#define SHORT "--set T=200 --set ensemble.count=16"

static int run(const char *args) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s run " SPEC " %s 2>/dev/null", NHBENCH_EXE, args);
  int status = system(cmd);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* run() that also says how long it took, in seconds (*seconds). */
static int timed_run(const char *args, double *seconds) {
  struct timespec t0, t1;
  clock_gettime(CLOCK_MONOTONIC, &t0);
  const int rc = run(args);
  clock_gettime(CLOCK_MONOTONIC, &t1);
  *seconds = (double)(t1.tv_sec - t0.tv_sec) + 1e-9 * (double)(t1.tv_nsec - t0.tv_nsec);
  return rc;
}

/* run() that returns how many trajectories the resumed run took from the journal (-1: none said). */
static long run_resumed(const char *args, int *rc) {
  char cmd[2048], out[4096] = "";
  snprintf(cmd, sizeof cmd, "%s run " SPEC " %s 2>&1", NHBENCH_EXE, args);
  FILE *p = popen(cmd, "r");
  size_t n = p ? fread(out, 1, sizeof out - 1, p) : 0;
  out[n] = '\0';
  int status = p ? pclose(p) : -1;
  *rc = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  const char *at = strstr(out, "resuming: ");
  long taken = -1;
  if (at) sscanf(at, "resuming: %ld", &taken);
  return taken;
}

/* Runs nhbench and kills it with SIGKILL after `seconds`; 1 if it was still running then. */
static int run_and_kill(const char *out, double seconds) {
  pid_t pid = fork();
  if (pid == 0) {
    freopen("/dev/null", "w", stderr);
    execl(NHBENCH_EXE, NHBENCH_EXE, "run", SPEC, "--set", "T=200", "--set", "ensemble.count=16", "-o", out,
          (char *)NULL);
    _exit(127);
  }
  struct timespec ts = {(time_t)seconds, (long)((seconds - (double)(time_t)seconds) * 1e9)};
  nanosleep(&ts, NULL);
  const int alive = kill(pid, SIGKILL) == 0;
  int status;
  waitpid(pid, &status, 0);
  return alive && WIFSIGNALED(status);
}

static void expect_same_results(const char *a, const char *b) {
  static const char *const names[] = {"dE",       "status",   "max_abs_dE", "drift_slope", "max_constraint_residual",
                                      "dE_mean",  "dE_var",   "dE_q10",     "dE_q50",      "dE_q90",
                                      "dE_count", "cost",     "E0",         "t"};
  for (size_t i = 0; i < sizeof names / sizeof *names; i++) {
    size_t na = 0, nb = 0;
    void *x = read_raw(a, names[i], &na), *y = read_raw(b, names[i], &nb);
    cr_expect(x && y && na == nb && memcmp(x, y, na) == 0, "dataset %s differs after resuming", names[i]);
    free(x), free(y);
  }
}

/* Datasets by path (any group). */
static void expect_same_dataset(const char *a, const char *b, const char *path) {
  size_t na = 0, nb = 0;
  void *x = read_raw(a, path, &na), *y = read_raw(b, path, &nb);
  cr_expect(x && y && na == nb && memcmp(x, y, na) == 0, "dataset %s differs between the two files", path);
  free(x), free(y);
}

static void tmp_name(char *buf, size_t len, const char *what) {
  snprintf(buf, len, "/tmp/nhbench-resume-%d-%s", (int)getpid(), what);
}

Test(resume, killed_runs_resume_to_identical_files, .timeout = 240) {
  char full[256], part[256], journal[300], args[1024];
  tmp_name(full, sizeof full, "full.h5");
  tmp_name(part, sizeof part, "part.h5");
  snprintf(journal, sizeof journal, "%s.journal", part);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  snprintf(args, sizeof args, SHORT " -o %s", full);
  double D;
  cr_assert_eq(timed_run(args, &D), 0);
  cr_expect(access(full, F_OK) == 0 && access(".journal", F_OK) != 0);
  /* Kills at 30, 60 and 90 % of an uninterrupted run's time D, whatever this machine's speed. */
  const double moments[] = {0.3 * D, 0.6 * D, 0.9 * D};
  int interrupted = 0, resumed_some = 0;
  for (size_t k = 0; k < sizeof moments / sizeof *moments; k++) {
    remove(part), remove(journal);
    if (!run_and_kill(part, moments[k])) continue; /* it finished first: nothing to resume */
    interrupted++;
    cr_expect(access(part, F_OK) != 0, "a killed run left %s", part);
    cr_expect(access(journal, F_OK) == 0, "no journal after a kill at %g s", moments[k]);
    struct stat sb;
    const long long journal_bytes = stat(journal, &sb) == 0 ? (long long)sb.st_size : 0;
    snprintf(args, sizeof args, SHORT " -o %s --resume", part);
    int rc;
    const long taken = run_resumed(args, &rc);
    cr_assert_eq(rc, 0, "resume after a kill at %g s", moments[k]);
    /* A journal of more than 32 KB holds complete records (one is about 8 KB here, the header
     * about 2 KB): they are read back, not recomputed. */
    cr_expect(journal_bytes <= 32768 || taken > 0, "a journal of %lld bytes gave %ld trajectories", journal_bytes, taken);
    resumed_some += taken > 0;
    expect_same_results(full, part);
    cr_expect(access(journal, F_OK) != 0, "the journal is removed once the file is written");
  }
  cr_expect(interrupted >= 1, "no run was still going when killed: the test checked nothing");
  cr_expect(resumed_some >= 1, "no resumed run took a trajectory from its journal");
  remove(full), remove(part);
}

Test(resume, refusals_and_a_cut_journal, .timeout = 240) {
  char full[256], part[256], journal[300], args[1024];
  tmp_name(full, sizeof full, "full2.h5");
  tmp_name(part, sizeof part, "part2.h5");
  snprintf(journal, sizeof journal, "%s.journal", part);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  remove(journal);
  snprintf(args, sizeof args, SHORT " -o %s --resume", part);
  cr_expect_eq(run(args), 2, "--resume with no journal");
  /* The uninterrupted run first, timed: the kill below comes halfway through. */
  snprintf(args, sizeof args, SHORT " -o %s", full);
  double D;
  cr_assert_eq(timed_run(args, &D), 0);
  /* A journal of the same run, with half a record appended as a kill during a write would. */
  cr_assert(run_and_kill(part, 0.5 * D), "the run finished before the kill");
  FILE *j = fopen(journal, "ab");
  cr_assert(j);
  const unsigned char half[] = {0x4b, 0x43, 0x48, 0x4e, 1, 2, 3};
  fwrite(half, 1, sizeof half, j);
  fclose(j);
  /* Another --set is another run: refused, the journal kept. */
  snprintf(args, sizeof args, SHORT " --set sample_every=10 -o %s --resume", part);
  cr_expect_eq(run(args), 2, "a journal of another spec");
  cr_expect(access(journal, F_OK) == 0);
  /* Another run whose key has the same length (count 17 for 16): refused too. */
  snprintf(args, sizeof args, "--set T=200 --set ensemble.count=17 -o %s --resume", part);
  cr_expect_eq(run(args), 2, "a journal of another spec with a key of the same length");
  cr_expect(access(journal, F_OK) == 0);
  snprintf(args, sizeof args, SHORT " -o %s --resume", part);
  cr_assert_eq(run(args), 0, "resume from a journal cut inside a record");
  expect_same_results(full, part);
  /* --resume of a convergence study that left no journal; a temporary file of a dead run is removed. */
  char cmd[1024], stale[300];
  snprintf(stale, sizeof stale, "%s.tmp-999999999", part);
  FILE *s = fopen(stale, "w");
  fputs("left by a killed run", s);
  fclose(s);
  snprintf(cmd, sizeof cmd, "%s run " NHBENCH_SOURCE_DIR "/studies/chaotic_convergence.cfg -o %s --resume 2>/dev/null",
           NHBENCH_EXE, part);
  const int status = system(cmd);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 2, "--resume of a convergence study without a journal");
  cr_expect(access(stale, F_OK) != 0, "the stale temporary file is removed");
  remove(full), remove(part), remove(stale);
}

/* The run through its journal (streamed: rows read back from the file when writing) and the
 * same study kept in memory write the same datasets, observables included. */
Test(resume, streamed_file_equals_in_memory_file, .timeout = 240) {
  char mem[256], streamed[256], args[1024], err[1024];
  tmp_name(mem, sizeof mem, "mem.h5");
  tmp_name(streamed, sizeof streamed, "stream.h5");
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  const char *ov[] = {"T=40", "ensemble.count=6", "observables=[\"q\", \"energy_error\"]"};
  nh_study st;
  nh_ensemble_result r;
  cr_assert_eq(nh_study_load(SPEC, ov, 3, &st, err, sizeof err), 0, "%s", err);
  cr_assert_eq(nh_run_ensemble(&st, &r, err, sizeof err), 0, "%s", err);
  cr_assert(r.dE != NULL && r.journal == NULL, "no journal: the rows are in memory");
  cr_assert_eq(nh_write_ensemble(mem, &st, &r, "test", err, sizeof err), 0, "%s", err);
  nh_ensemble_result_free(&r);
  nh_study_free(&st);
  snprintf(args, sizeof args, "--set T=40 --set ensemble.count=6 --set 'observables=[\"q\", \"energy_error\"]' -o %s",
           streamed);
  cr_assert_eq(run(args), 0);
  expect_same_results(mem, streamed);
  static const char *const obs[] = {"/ensemble/observables/q", "/ensemble/observables/energy_error",
                                    "/ensemble/observables_max_abs/q", "/ensemble/observables_last/energy_error"};
  for (size_t i = 0; i < sizeof obs / sizeof *obs; i++) expect_same_dataset(mem, streamed, obs[i]);
  remove(mem), remove(streamed);
}

/* ---- every other kind: killed after k journal records (NHBENCH_KILL_AFTER), resumed ---------- */

/* nhbench run SPEC -o OUT [--resume], NHBENCH_KILL_AFTER=kill (0: none); the exit status (128 +
 * signal for a killed run) and the tasks a resumed run says it took from the journal (-1: none).
 * A run that is not resumed adds resume_set (the negative control's other run). */
static const char *resume_set = "";
static int run_spec(const char *spec, const char *out, int resume, long kill, long *taken) {
  char cmd[2048], text[4096] = "";
  snprintf(cmd, sizeof cmd, "NHBENCH_KILL_AFTER=%ld %s run %s/%s -o %s%s 2>&1", kill, NHBENCH_EXE, NHBENCH_SOURCE_DIR,
           spec, out, resume ? " --resume" : resume_set);
  FILE *p = popen(cmd, "r");
  size_t n = p ? fread(text, 1, sizeof text - 1, p) : 0;
  text[n] = '\0';
  const int status = p ? pclose(p) : -1;
  const char *at = strstr(text, "resuming: ");
  *taken = -1;
  if (at) sscanf(at, "resuming: %ld", taken);
  /* the shell reports a child killed by a signal as 128 + the signal */
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Convergence, trajectory, one-step and work-precision runs killed right after their k-th task
 * is in the journal, for a k early and a k late in the run, resume from it (taking exactly k
 * tasks) to files whose datasets, timings aside, are bit-identical to an uninterrupted run's. */
Test(resume, every_kind_resumes_from_its_journal, .timeout = 240) {
  static const struct {
    const char *spec;
    long tasks; /* the study's task count: methods × h (× initial conditions or points) */
  } kinds[] = {{"studies/chaotic_convergence.cfg", 48},
               {"tests/data/trajectory_particle.cfg", 8},
               {"tests/data/onestep_random.cfg", 12},
               {"tests/data/work_precision_small.cfg", 9}};
  char full[256], part[256], journal[300];
  tmp_name(full, sizeof full, "kind-full.h5");
  tmp_name(part, sizeof part, "kind-part.h5");
  snprintf(journal, sizeof journal, "%s.journal", part);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
    long taken;
    remove(full);
    cr_assert_eq(run_spec(kinds[k].spec, full, 0, 0, &taken), 0, "%s", kinds[k].spec);
    cr_expect(access(full, F_OK) == 0, "%s: no file", kinds[k].spec);
    const long kills[] = {1, kinds[k].tasks - 1};
    for (size_t j = 0; j < 2; j++) {
      remove(part), remove(journal);
      const int rc = run_spec(kinds[k].spec, part, 0, kills[j], &taken);
      cr_expect_eq(rc, 128 + SIGKILL, "%s: not killed after %ld tasks (exit %d)", kinds[k].spec, kills[j], rc);
      cr_expect(access(part, F_OK) != 0 && access(journal, F_OK) == 0, "%s: a killed run leaves its journal only",
                kinds[k].spec);
      cr_assert_eq(run_spec(kinds[k].spec, part, 1, 0, &taken), 0, "%s: resume after %ld tasks", kinds[k].spec,
                   kills[j]);
      cr_expect_eq(taken, kills[j], "%s: %ld tasks taken from the journal of a run killed after %ld", kinds[k].spec,
                   taken, kills[j]);
      int compared;
      cr_expect_eq(differing_datasets(full, part, kinds[k].spec, &compared), 0, "%s: datasets differ after resuming",
                   kinds[k].spec);
      cr_expect(compared >= 8, "%s: only %d datasets compared", kinds[k].spec, compared);
      cr_expect(access(journal, F_OK) != 0, "%s: the journal is removed once the file is written", kinds[k].spec);
    }
  }
  /* The negative control of the comparison: the same spec with another T differs. */
  long taken;
  resume_set = " --set T=1.5";
  cr_assert_eq(run_spec("tests/data/work_precision_small.cfg", part, 0, 0, &taken), 0);
  resume_set = "";
  int compared;
  cr_expect(differing_datasets(full, part, "T = 1.5 against T = 2", &compared) >= 3,
            "the comparison does not tell a run at another T apart");
  remove(full), remove(part);
}
