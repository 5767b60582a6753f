/* Checkpoint and resume (issue 12): an ensemble run killed with SIGKILL at several moments and
 * resumed with --resume writes a file whose datasets are bit-identical to an uninterrupted run's;
 * a journal of another spec, none at all, or --resume of another study kind are refused; a
 * journal cut inside a record resumes from its complete records; temporary files of killed runs
 * are removed. */
#define _GNU_SOURCE /* memmem */
#include <criterion/criterion.h>
#include <errno.h>
#include <hdf5.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "results/results.h"
#include "tests/h5compare.h"
#include "tests/helpers.h"
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
  pid_t pid = test_fork();
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
  static const char *const names[] = {"dE", "status", "max_abs_dE", "drift_slope", "max_constraint_residual", "dE_mean",
                                      "dE_var", "dE_q10", "dE_q50", "dE_q90", "dE_count", "cost", "E0", "t",
                                      /* the summary; a streamed run keeps final_var aside (last_var) */
                                      "summary/ok", "summary/failures", "summary/max_max_abs_dE",
                                      "summary/median_max_abs_dE", "summary/mean_drift_slope",
                                      "summary/median_abs_drift_slope", "summary/max_constraint_residual",
                                      "summary/final_var"};
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
    if (access(part, F_OK) == 0) { /* killed after its rename, in its last instants: complete, as any file there */
      expect_same_results(full, part);
      continue;
    }
    interrupted++;
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
  /* --resume of a convergence study that left no journal; a temporary file of a dead run (an HDF5
   * file at its pid) is removed, a file of that name that is no HDF5 file stays. */
  char cmd[1024], stale[300], other[300];
  snprintf(stale, sizeof stale, "%s.tmp-%ld", part, test_dead_pid());
  snprintf(other, sizeof other, "%s.tmp-%ld", part, test_dead_pid());
  snprintf(cmd, sizeof cmd, "cp %s %s && echo notes > %s", full, stale, other);
  cr_assert_eq(system(cmd), 0);
  snprintf(cmd, sizeof cmd, "%s run " NHBENCH_SOURCE_DIR "/studies/chaotic_convergence.cfg -o %s --resume 2>/dev/null",
           NHBENCH_EXE, part);
  const int status = system(cmd);
  cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 2, "--resume of a convergence study without a journal");
  cr_expect(access(stale, F_OK) != 0, "the stale temporary file is removed");
  cr_expect(access(other, F_OK) == 0, "a file that is no HDF5 file is not this program's temporary");
  remove(full), remove(part), remove(stale), remove(other);
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
  static const char *const obs[] = {"/ensemble/observables/q",                "/ensemble/observables/energy_error",
                                    "/ensemble/observables_max_abs/q",        "/ensemble/observables_last/q",
                                    "/ensemble/observables_max_abs/energy_error", "/ensemble/observables_last/energy_error"};
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
  const int rc = test_run_command(cmd, text, sizeof text);
  const char *at = strstr(text, "resuming: ");
  *taken = -1;
  if (at) sscanf(at, "resuming: %ld", taken);
  return rc;
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

/* ---- the journal's format and API (studies/checkpoint.c), by hand ------------------------------ */

#include <stdint.h>

#include "studies/checkpoint.h"

/* FNV-1a over the bytes, written out here from its definition (offset basis and prime of the
 * 64-bit variant), not taken from the library. */
static uint64_t fnv(uint64_t h, const void *data, size_t len) {
  for (size_t i = 0; i < len; i++) h = (h ^ ((const unsigned char *)data)[i]) * 0x100000001b3ull;
  return h;
}

typedef struct {
  int calls;
  long task[8];
  size_t n[8];
  double x[8][4];
} replayed;

static void collect(void *ctx, long task, const double *x, size_t n) {
  replayed *r = ctx;
  if (r->calls < 8) {
    r->task[r->calls] = task, r->n[r->calls] = n;
    memcpy(r->x[r->calls], x, sizeof(double) * (n < 4 ? n : 4));
  }
  r->calls++;
}

static long file_size(const char *path) {
  struct stat s;
  return stat(path, &s) == 0 ? (long)s.st_size : -1;
}

static void *file_bytes(const char *path, long *len) {
  *len = file_size(path);
  unsigned char *b = malloc((size_t)*len + 1);
  FILE *f = fopen(path, "rb");
  cr_assert(b && f && fread(b, 1, (size_t)*len, f) == (size_t)*len);
  fclose(f);
  return b;
}

static void put_bytes(const char *path, const void *b, long len) {
  FILE *f = fopen(path, "wb");
  cr_assert(f && fwrite(b, 1, (size_t)len, f) == (size_t)len);
  fclose(f);
}

/* Header "NHCKPT1\n", the key's length (u64) and the key; a record: u32 magic "NHCK", i64 task,
 * u64 n, n doubles, u64 FNV-1a over task, n and the doubles. Records read back by task and range;
 * the key compared on resume; the records replayed in order. */
Test(resume, journal_layout_and_reads_by_hand, .timeout = 60) {
  char path[128], err[512] = "";
  snprintf(path, sizeof path, "/tmp/nhbench-journal-%d", (int)getpid());
  const char *key = "spec text and version";
  long resumed = -1;
  nh_checkpoint *c = nh_checkpoint_open(path, key, 4, 0, collect, NULL, &resumed, err, sizeof err);
  cr_assert(c, "%s", err);
  cr_expect_eq(resumed, 0);
  const double a[3] = {1.5, -0.0, NAN}, b[1] = {4};
  cr_assert_eq(nh_checkpoint_append(c, 2, a, 3), 0);
  cr_assert_eq(nh_checkpoint_append(c, 0, b, 1), 0);
  double got[3] = {0, 0, 0};
  cr_expect_eq(nh_checkpoint_read(c, 2, 1, got, 2), 0);
  cr_expect(memcmp(got, a + 1, 2 * sizeof(double)) == 0, "task 2 from element 1: %g %g", got[0], got[1]);
  cr_expect_eq(nh_checkpoint_read(c, 2, 0, got, 3), 0, "the whole record");
  cr_expect_eq(nh_checkpoint_read(c, 2, 2, got, 2), -1, "past the record's end");
  cr_expect_eq(nh_checkpoint_read(c, 0, 0, got, 1), 0);
  cr_expect_eq(got[0], 4);
  cr_expect_eq(nh_checkpoint_read(c, 1, 0, got, 0), -1, "task 1 has no record");
  cr_expect_eq(nh_checkpoint_read(c, 4, 0, got, 1), -1, "task 4 is out of range");
  cr_expect_eq(nh_checkpoint_read(c, -1, 0, got, 1), -1, "task -1 is out of range");
  nh_checkpoint_close(c);

  const size_t klen = strlen(key), rec[2] = {4 + 8 + 8 + 3 * 8 + 8, 4 + 8 + 8 + 1 * 8 + 8};
  long len;
  unsigned char *bytes = file_bytes(path, &len);
  cr_assert_eq(len, (long)(8 + 8 + klen + rec[0] + rec[1]), "file of %ld bytes", len);
  cr_expect(memcmp(bytes, "NHCKPT1\n", 8) == 0);
  uint64_t u;
  memcpy(&u, bytes + 8, 8);
  cr_expect_eq(u, klen);
  cr_expect(memcmp(bytes + 16, key, klen) == 0);
  const unsigned char *r = bytes + 16 + klen;
  uint32_t magic;
  int64_t task;
  memcpy(&magic, r, 4), memcpy(&task, r + 4, 8), memcpy(&u, r + 12, 8);
  cr_expect(magic == 0x4e48434bu && task == 2 && u == 3, "record 0: %x %lld %llu", magic, (long long)task,
            (unsigned long long)u);
  cr_expect(memcmp(r + 20, a, sizeof a) == 0, "record 0's doubles, bits and all");
  uint64_t sum = fnv(fnv(fnv(0xcbf29ce484222325ull, &task, 8), &u, 8), a, sizeof a), stored;
  memcpy(&stored, r + 20 + sizeof a, 8);
  cr_expect_eq(stored, sum, "checksum %llx, FNV-1a by hand %llx", (unsigned long long)stored, (unsigned long long)sum);

  /* The key: 1 the same, 0 another (also of the same length), -1 no journal at all. */
  cr_expect_eq(nh_checkpoint_matches(path, key), 1);
  cr_expect_eq(nh_checkpoint_matches(path, "spec text and versioN"), 0);
  cr_expect_eq(nh_checkpoint_matches(path, "other"), 0);
  char nope[160];
  snprintf(nope, sizeof nope, "%s.none", path);
  cr_expect_eq(nh_checkpoint_matches(nope, key), -1);
  put_bytes(nope, "NHCKPT2\n\0\0\0\0\0\0\0\0", 16);
  cr_expect_eq(nh_checkpoint_matches(nope, key), -1, "another header");

  /* Resumed: the records in order, then reads as before. */
  replayed rp = {0};
  c = nh_checkpoint_open(path, key, 4, 1, collect, &rp, &resumed, err, sizeof err);
  cr_assert(c, "%s", err);
  cr_expect(resumed == 2 && rp.calls == 2 && rp.task[0] == 2 && rp.n[0] == 3 && rp.task[1] == 0 && rp.n[1] == 1,
            "replayed %ld: %d calls", resumed, rp.calls);
  cr_expect(memcmp(rp.x[0], a, sizeof a) == 0 && rp.x[1][0] == 4);
  cr_expect_eq(nh_checkpoint_read(c, 2, 0, got, 3), 0);
  cr_expect(memcmp(got, a, sizeof a) == 0);
  nh_checkpoint_close(c);
  cr_expect_eq(file_size(path), len, "a resume alone adds nothing");

  /* Refused: another key, no journal, not a journal. */
  cr_expect(!nh_checkpoint_open(path, "other", 4, 1, collect, &rp, &resumed, err, sizeof err));
  cr_expect(strstr(err, "the interrupted run was of another spec (or included file), --set, nhbench version or build"),
            "%s", err);
  cr_expect(!nh_checkpoint_open(nope, key, 4, 1, collect, &rp, &resumed, err, sizeof err));
  cr_expect(strstr(err, "not a checkpoint journal"), "%s", err);
  remove(nope);
  cr_expect(!nh_checkpoint_open(nope, key, 4, 1, collect, &rp, &resumed, err, sizeof err));
  cr_expect(strstr(err, "no interrupted run to resume"), "%s", err);
  free(bytes);
  remove(path);
}

/* A new journal whose header cannot be written whole (a file size limit cuts it in its magic, in the
 * key's length, in the key): NULL, the reason with strerror's, and no journal left behind. */
Test(resume, journal_header_cut_by_a_full_disk, .timeout = 60) {
  char path[128], err[512], want[512];
  snprintf(path, sizeof path, "/tmp/nhbench-journal-full-%d", (int)getpid());
  const char *key = "a key of thirty-two characters..";
  signal(SIGXFSZ, SIG_IGN); /* past the limit, write() fails with EFBIG instead */
  struct rlimit was, lim;
  cr_assert_eq(getrlimit(RLIMIT_FSIZE, &was), 0);
  const long limits[3] = {4, 12, 20}; /* the header is 8 bytes, the length 8, the key 32 */
  for (int k = 0; k < 3; k++) {
    remove(path);
    lim = was, lim.rlim_cur = (rlim_t)limits[k];
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
    long resumed;
    err[0] = '\0';
    nh_checkpoint *c = nh_checkpoint_open(path, key, 2, 0, collect, NULL, &resumed, err, sizeof err);
    cr_assert_eq(setrlimit(RLIMIT_FSIZE, &was), 0);
    cr_expect_null(c, "limit %ld: opened", limits[k]);
    if (c) nh_checkpoint_close(c);
    snprintf(want, sizeof want, "%s: cannot write the checkpoint journal: %s", path, strerror(EFBIG));
    cr_expect_str_eq(err, want, "limit %ld", limits[k]);
    cr_expect_eq(file_size(path), -1, "limit %ld: a cut journal left behind", limits[k]);
  }
}

/* A damaged last record (cut, a flipped bit in its data, its checksum or its magic) is dropped: the
 * journal is truncated after the last good record, and appends go on from there. A record of a
 * task out of range is replayed but neither readable nor counted as resumed. */
Test(resume, journal_damaged_records_are_dropped, .timeout = 60) {
  char path[128], err[512] = "";
  snprintf(path, sizeof path, "/tmp/nhbench-journal-dmg-%d", (int)getpid());
  const char *key = "k";
  const double a[2] = {1, 2}, b[2] = {3, 4};
  long resumed;
  nh_checkpoint *c = nh_checkpoint_open(path, key, 3, 0, collect, NULL, &resumed, err, sizeof err);
  cr_assert(c, "%s", err);
  cr_assert_eq(nh_checkpoint_append(c, 0, a, 2), 0);
  cr_assert_eq(nh_checkpoint_append(c, 1, b, 2), 0);
  nh_checkpoint_close(c);
  long len;
  unsigned char *good = file_bytes(path, &len);
  const long one = 8 + 8 + 1 + (4 + 8 + 8 + 16 + 8); /* the header and the first record */
  cr_assert_eq(len, one + 4 + 8 + 8 + 16 + 8);
  /* Where in the second record: cut after 10 bytes, data, checksum, magic, n beyond 2^32, n of
   * 2^31 + 2 (16 GiB: refused by its length against the file's, never allocated), n of 3 (one
   * double more than the file has). */
  const long at[7] = {-1, one + 20, one + 36, one, one + 12, one + 12, one + 12};
  for (int k = 0; k < 7; k++) {
    unsigned char *bad = malloc((size_t)len);
    memcpy(bad, good, (size_t)len);
    long blen = len;
    if (k == 0) blen = one + 10;
    else if (k == 4) bad[at[k] + 4] = 2; /* n = 2 + 2^32 */
    else if (k == 5) bad[at[k] + 3] = 0x80; /* n = 2 + 2^31 */
    else if (k == 6) bad[at[k]] = 3;
    else bad[at[k]] ^= 0x10;
    put_bytes(path, bad, blen);
    replayed rp = {0};
    char said[1024], note[256];
    int saved;
    FILE *cap = test_capture_stderr(&saved);
    c = nh_checkpoint_open(path, key, 3, 1, collect, &rp, &resumed, err, sizeof err);
    test_restore_stderr(cap, saved, said, sizeof said);
    cr_assert(c, "case %d: %s", k, err);
    snprintf(note, sizeof note, "%s: the last %ld bytes are no complete record", path, blen - one);
    cr_expect(strstr(said, note) && strstr(said, "the 1 complete records before them are kept"), "case %d: %s", k,
              said);
    cr_expect(resumed == 1 && rp.calls == 1 && rp.task[0] == 0, "case %d: %ld replayed", k, resumed);
    double got[2];
    cr_expect_eq(nh_checkpoint_read(c, 1, 0, got, 1), -1, "case %d: task 1's record was damaged", k);
    cr_expect_eq(file_size(path), one, "case %d: truncated after the good record", k);
    cr_assert_eq(nh_checkpoint_append(c, 1, b, 2), 0);
    nh_checkpoint_close(c);
    cr_expect_eq(file_size(path), len, "case %d: the record appended again", k);
    free(bad);
  }
  /* Task 7 of 3: replayed (the caller decides), not readable, and not one of the run's tasks
   * resumed (2: tasks 0 and 1). */
  replayed first = {0};
  c = nh_checkpoint_open(path, key, 3, 1, collect, &first, &resumed, err, sizeof err);
  cr_assert(c);
  cr_assert_eq(nh_checkpoint_append(c, 7, a, 2), 0);
  nh_checkpoint_close(c);
  replayed rp = {0};
  c = nh_checkpoint_open(path, key, 3, 1, collect, &rp, &resumed, err, sizeof err);
  cr_assert(c);
  cr_expect(resumed == 2 && rp.calls == 3 && rp.task[2] == 7, "%ld resumed, %d replayed", resumed, rp.calls);
  double got[2];
  cr_expect_eq(nh_checkpoint_read(c, 7, 0, got, 1), -1);
  nh_checkpoint_close(c);
  free(good);
  remove(path);
}

/* ---- tasks with a journal (studies/task_journal.c) ------------------------------------------- */

typedef struct {
  double *d;
  int *i;
  nh_cost *c;
  int ran[6];
  long out_of_memory; /* the task that says it ran out of memory (-1: none) */
} jtasks;

/* Task t's values, of every kind a slot holds: doubles with their bits (−0, a NaN payload), ints
 * (negative too), cost counters up to 2^53. */
static int jtask(void *ctx, long t) {
  jtasks *j = ctx;
  uint64_t payload = 0x7ff8000000000000ull | (uint64_t)(t + 1);
  memcpy(&j->d[2 * t], &payload, 8);
  j->d[2 * t + 1] = t % 2 ? -0.0 : 1.0 / (t + 3);
  j->i[t] = -(int)t * 1000 - 7;
  j->c[t] = (nh_cost){.steps = 1ull << 53, .rhs_evals = (unsigned long long)t, .jacobian_evals = 3, .linear_solves = 4,
                      .newton_iterations = 5 + (unsigned long long)t, .constraint_evals = 6};
  __atomic_add_fetch(&j->ran[t], 1, __ATOMIC_RELAXED);
  return t == j->out_of_memory ? -1 : 0;
}

static void jcheck(const jtasks *j, long t) {
  jtasks want;
  double d[12];
  int i[6];
  nh_cost c[6];
  want.d = d, want.i = i, want.c = c;
  memset(want.ran, 0, sizeof want.ran);
  want.out_of_memory = -1;
  jtask(&want, t);
  cr_expect(memcmp(&j->d[2 * t], &d[2 * t], 2 * sizeof(double)) == 0, "task %ld: doubles not bit-identical", t);
  cr_expect_eq(j->i[t], i[t], "task %ld: int", t);
  cr_expect(memcmp(&j->c[t], &c[t], sizeof c[t]) == 0, "task %ld: cost", t);
}

/* nh_journaled_tasks over the six tasks of jtask, what it said on stderr into said. */
static int journaled_said(const nh_study *st, jtasks *j, const nh_task_slot *slots, int nslots, char *said, size_t len,
                          char *err, size_t errlen) {
  int saved;
  FILE *cap = test_capture_stderr(&saved);
  const int rc = nh_journaled_tasks(st, "test", 6, jtask, j, slots, nslots, err, errlen);
  test_restore_stderr(cap, saved, said, len);
  return rc;
}

Test(resume, journaled_tasks_run_once_and_resume_bit_for_bit, .timeout = 60) {
  char path[128], err[512] = "";
  snprintf(path, sizeof path, "/tmp/nhbench-tasks-%d", (int)getpid());
  double d[12];
  int iv[6];
  nh_cost cv[6];
  jtasks j = {d, iv, cv, {0}, -1};
  const nh_task_slot slots[3] = {{d, NH_SLOT_DOUBLE, 2}, {iv, NH_SLOT_INT, 1}, {cv, NH_SLOT_COST, 1}};
  nh_study st;
  memset(&st, 0, sizeof st);
  st.spec_file = "test.cfg", st.checkpoint = path, st.checkpoint_key = "key";
  cr_assert_eq(nh_journaled_tasks(&st, "test", 6, jtask, &j, slots, 3, err, sizeof err), 0, "%s", err);
  for (int t = 0; t < 6; t++) cr_expect_eq(j.ran[t], 1, "task %d ran %d times", t, j.ran[t]);
  /* One record per task: the outcome, then 2 + 1 + 6 doubles. */
  cr_expect_eq(file_size(path), 8 + 8 + 3 + 6 * (4 + 8 + 8 + 10 * 8 + 8));
  /* Resumed into wiped slots: nothing runs, every value comes back. */
  memset(d, 0, sizeof d), memset(iv, 0, sizeof iv), memset(cv, 0, sizeof cv), memset(j.ran, 0, sizeof j.ran);
  st.resume = 1;
  char said[512], want[512];
  cr_assert_eq(journaled_said(&st, &j, slots, 3, said, sizeof said, err, sizeof err), 0, "%s", err);
  snprintf(want, sizeof want, "nhbench: resuming: 6 of 6 test tasks taken from %s\n", path);
  cr_expect_str_eq(said, want);
  for (int t = 0; t < 6; t++) {
    cr_expect_eq(j.ran[t], 0, "task %d ran again", t);
    jcheck(&j, t);
  }
  /* The last record cut: only its task runs again. */
  long jl;
  unsigned char *jb = file_bytes(path, &jl);
  put_bytes(path, jb, jl - 5);
  free(jb);
  memset(j.ran, 0, sizeof j.ran);
  cr_assert_eq(nh_journaled_tasks(&st, "test", 6, jtask, &j, slots, 3, err, sizeof err), 0, "%s", err);
  int again = 0;
  for (int t = 0; t < 6; t++) again += j.ran[t], jcheck(&j, t);
  cr_expect_eq(again, 1, "one task ran again, not %d", again);
  /* Records of another shape (one slot fewer) are not this run's: every task runs. */
  memset(j.ran, 0, sizeof j.ran);
  cr_assert_eq(nh_journaled_tasks(&st, "test", 6, jtask, &j, slots, 2, err, sizeof err), 0, "%s", err);
  for (int t = 0; t < 6; t++) cr_expect_eq(j.ran[t], 1, "task %d: the journal's records have 10 doubles, not 4", t);
  /* A task out of memory: the study fails saying so, its record is not journaled, and a resumed
   * run runs it (only it) again. */
  remove(path);
  st.resume = 0, j.out_of_memory = 4;
  memset(j.ran, 0, sizeof j.ran);
  cr_expect_eq(nh_journaled_tasks(&st, "test", 6, jtask, &j, slots, 3, err, sizeof err), -1);
  cr_expect(strstr(err, "out of memory"), "%s", err);
  cr_expect_eq(file_size(path), 8 + 8 + 3 + 5 * (4 + 8 + 8 + 10 * 8 + 8), "five records, not six");
  st.resume = 1, j.out_of_memory = -1;
  memset(j.ran, 0, sizeof j.ran);
  cr_assert_eq(nh_journaled_tasks(&st, "test", 6, jtask, &j, slots, 3, err, sizeof err), 0, "%s", err);
  for (int t = 0; t < 6; t++) {
    cr_expect_eq(j.ran[t], t == 4, "resumed: task %d ran %d times", t, j.ran[t]);
    jcheck(&j, t);
  }
  /* Another key: refused with a message. */
  st.checkpoint_key = "other";
  cr_expect_eq(nh_journaled_tasks(&st, "test", 6, jtask, &j, slots, 3, err, sizeof err), -1);
  cr_expect(strstr(err, "another spec"), "%s", err);
  remove(path);
}

/* A journal holding records no resumed run may take: a failed task's (outcome 0, which this code
 * never writes, but a journal is a file), and tasks past either end of the run. Only the good
 * record is taken; the failed task runs again; nothing is written outside the run's slots (the
 * slot arrays have guard elements on both sides). Records packed here by hand: the outcome, the
 * two doubles, the int, the six cost counters. */
Test(resume, journaled_tasks_skip_failed_and_out_of_range_records, .timeout = 60) {
  char path[128], err[512] = "";
  snprintf(path, sizeof path, "/tmp/nhbench-tasks-skip-%d", (int)getpid());
  enum { GUARD = 12345 };
  double dbuf[16];
  int ibuf[8];
  nh_cost cbuf[8];
  for (int k = 0; k < 16; k++) dbuf[k] = GUARD;
  for (int k = 0; k < 8; k++) ibuf[k] = GUARD, cbuf[k] = (nh_cost){.steps = GUARD};
  double *d = dbuf + 2;
  int *iv = ibuf + 1;
  nh_cost *cv = cbuf + 1;
  jtasks j = {d, iv, cv, {0}, -1};
  const nh_task_slot slots[3] = {{d, NH_SLOT_DOUBLE, 2}, {iv, NH_SLOT_INT, 1}, {cv, NH_SLOT_COST, 1}};

  jtask(&j, 0); /* task 0's values, packed into a good record */
  const double good[10] = {1, d[0], d[1], iv[0], (double)cv[0].steps, (double)cv[0].rhs_evals,
                           (double)cv[0].jacobian_evals, (double)cv[0].linear_solves,
                           (double)cv[0].newton_iterations, (double)cv[0].constraint_evals};
  double bad[10];
  for (int k = 0; k < 10; k++) bad[k] = 99;
  double failed[10];
  memcpy(failed, bad, sizeof bad), failed[0] = 0;
  bad[0] = 1; /* a finished task, only out of range */
  for (int k = 0; k < 2; k++) d[k] = GUARD;
  iv[0] = GUARD, cv[0] = (nh_cost){.steps = GUARD}, j.ran[0] = 0;

  long resumed;
  nh_checkpoint *c = nh_checkpoint_open(path, "key", 6, 0, collect, NULL, &resumed, err, sizeof err);
  cr_assert(c, "%s", err);
  cr_assert_eq(nh_checkpoint_append(c, 0, good, 10), 0);
  cr_assert_eq(nh_checkpoint_append(c, 1, failed, 10), 0);
  cr_assert_eq(nh_checkpoint_append(c, 6, bad, 10), 0);
  cr_assert_eq(nh_checkpoint_append(c, -1, bad, 10), 0);
  nh_checkpoint_close(c);

  nh_study st;
  memset(&st, 0, sizeof st);
  st.spec_file = "test.cfg", st.checkpoint = path, st.checkpoint_key = "key", st.resume = 1;
  char said[512], want[512];
  cr_assert_eq(journaled_said(&st, &j, slots, 3, said, sizeof said, err, sizeof err), 0, "%s", err);
  snprintf(want, sizeof want, "nhbench: resuming: 1 of 6 test tasks taken from %s\n", path);
  cr_expect_str_eq(said, want, "one task taken, not the two records in range");
  for (int t = 0; t < 6; t++) {
    cr_expect_eq(j.ran[t], t != 0, "task %d ran %d times", t, j.ran[t]);
    jcheck(&j, t);
  }
  cr_expect(dbuf[0] == GUARD && dbuf[1] == GUARD && dbuf[14] == GUARD && dbuf[15] == GUARD,
            "doubles written outside the slots: %g %g %g %g", dbuf[0], dbuf[1], dbuf[14], dbuf[15]);
  cr_expect(ibuf[0] == GUARD && ibuf[7] == GUARD, "ints written outside the slots: %d %d", ibuf[0], ibuf[7]);
  cr_expect(cbuf[0].steps == GUARD && cbuf[7].steps == GUARD, "costs written outside the slots");
  remove(path);
}

/* ---- an ensemble's own journal (studies/ensemble.c), in process ---------------------------------- */

/* A run through its journal, then the same study resumed from the complete journal: every
 * trajectory comes from the journal (none runs again: even the per-method wall times, sums of the
 * journal's task times, are the first run's to the bit), the results are the first run's, and the
 * journal grows only by the per-method statistics records the resumed run appends (their size by
 * hand: magic, task, n, NH_STATS·ns doubles, checksum). */
Test(resume, ensemble_resumed_from_a_complete_journal_runs_nothing, .timeout = 60) {
  char path[128], err[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-ensjournal-%d", (int)getpid());
  const char *ov[] = {"ensemble.count=3", "T=4"};
  nh_study st;
  cr_assert_eq(nh_study_load(NHBENCH_SOURCE_DIR "/tests/data/small_ensemble.cfg", ov, 2, &st, err, sizeof err), 0, "%s",
               err);
  st.checkpoint = path, st.checkpoint_key = "key";
  nh_ensemble_result a, b;
  cr_assert_eq(nh_run_ensemble(&st, &a, err, sizeof err), 0, "%s", err); /* its journal stays open */
  const int nm = st.nmethods, nic = st.count, ns = st.nsamples;
  const size_t traj = (size_t)nm * nic;
  struct stat s0;
  cr_assert_eq(stat(path, &s0), 0);
  const long size0 = (long)s0.st_size;
  /* The resumed run reads a copy of the first run's journal (a's rows stay readable in its own). */
  char copy[160], cmd[400];
  snprintf(copy, sizeof copy, "%s.copy", path);
  snprintf(cmd, sizeof cmd, "cp %s %s", path, copy);
  cr_assert_eq(system(cmd), 0);
  st.checkpoint = copy, st.resume = 1;
  cr_assert_eq(nh_run_ensemble(&st, &b, err, sizeof err), 0, "%s", err);
  for (int m = 0; m < nm; m++) {
    cr_expect(memcmp(&a.wall_time[m], &b.wall_time[m], sizeof(double)) == 0,
              "method %d: wall time %.17g resumed, %.17g run: a trajectory ran again", m, b.wall_time[m], a.wall_time[m]);
    cr_expect(memcmp(&a.cost[m], &b.cost[m], sizeof a.cost[m]) == 0, "method %d: cost", m);
    cr_expect(memcmp(&a.last_var[m], &b.last_var[m], sizeof(double)) == 0 && a.last_count[m] == b.last_count[m]);
  }
  cr_expect(memcmp(a.status, b.status, sizeof(int) * traj) == 0);
  cr_expect(memcmp(a.max_abs_dE, b.max_abs_dE, sizeof(double) * traj) == 0);
  cr_expect(memcmp(a.drift_slope, b.drift_slope, sizeof(double) * traj) == 0);
  double *ra = malloc(sizeof(double) * (size_t)ns), *rb = malloc(sizeof(double) * (size_t)ns);
  for (long t = 0; t < (long)traj; t++) {
    cr_assert_eq(nh_ensemble_dE_row(&st, &a, t, ra), 0);
    cr_assert_eq(nh_ensemble_dE_row(&st, &b, t, rb), 0);
    cr_expect(memcmp(ra, rb, sizeof(double) * (size_t)ns) == 0, "trajectory %ld: dE differs", t);
  }
  free(ra), free(rb);
  nh_ensemble_result_free(&b);
  struct stat s1;
  cr_assert_eq(stat(copy, &s1), 0);
  cr_expect_eq((long)s1.st_size, size0 + nm * (long)(4 + 8 + 8 + 8 * NH_STATS * ns + 8),
               "the resumed journal grew by %ld bytes", (long)s1.st_size - size0);
  nh_ensemble_result_free(&a);
  nh_study_free(&st);
  remove(path), remove(copy);
}

/* An ensemble killed after its last trajectory and its first statistics record (before the file
 * was written): the resumed run says it took every trajectory, 35 of 35 (the statistics record is
 * no trajectory: it said 36 of 35 before), runs none, and writes the uninterrupted run's file. */
Test(resume, ensemble_killed_among_its_statistics_records, .timeout = 120) {
  char full[256], part[256], journal[300];
  tmp_name(full, sizeof full, "stats-full.h5");
  tmp_name(part, sizeof part, "stats-part.h5");
  snprintf(journal, sizeof journal, "%s.journal", part);
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  long taken;
  remove(full), remove(part), remove(journal);
  cr_assert_eq(run_spec("tests/data/small_ensemble.cfg", full, 0, 0, &taken), 0);
  cr_assert_eq(run_spec("tests/data/small_ensemble.cfg", part, 0, 36, &taken), 128 + SIGKILL);
  cr_assert_eq(run_spec("tests/data/small_ensemble.cfg", part, 1, 0, &taken), 0);
  cr_expect_eq(taken, 35, "%ld trajectories taken, of 35", taken);
  int compared;
  cr_expect_eq(differing_datasets(full, part, "small_ensemble.cfg", &compared), 0);
  cr_expect(compared >= 8, "only %d datasets compared", compared);
  remove(full), remove(part), remove(journal);
}

/* Every kind's runner returns -1 with the journal's message when its journal cannot be written
 * (its directory does not exist) or there is none to resume, and computes nothing. */
Test(resume, runners_refuse_a_journal_they_cannot_open) {
  static const char *const specs[] = {"tests/data/order_claim.cfg", "tests/data/small_ensemble.cfg",
                                      "tests/data/trajectory_particle.cfg", "tests/data/onestep_random.cfg",
                                      "tests/data/work_precision_small.cfg"};
  cr_assert_eq(sizeof specs / sizeof *specs, NH_STUDY_KINDS, "a spec per kind");
  for (int k = 0; k < NH_STUDY_KINDS; k++) {
    for (int resume = 0; resume < 2; resume++) {
      char path[256], err[1024] = "";
      snprintf(path, sizeof path, "%s/%s", NHBENCH_SOURCE_DIR, specs[k]);
      nh_study st;
      cr_assert_eq(nh_study_load(path, NULL, 0, &st, err, sizeof err), 0, "%s", err);
      cr_assert_eq((int)st.kind, k, "%s: the spec of kind %s", specs[k], nh_study_kind_name((nh_study_kind)k));
      st.checkpoint = "/tmp/nhbench-no-such-dir/journal", st.checkpoint_key = "key", st.resume = resume;
      const nh_study_kind_type *kind = nh_study_kinds[st.kind]; /* any kind, through the registry */
      void *r = malloc(kind->result_size);
      cr_assert_not_null(r);
      const int rc = kind->run(&st, r, err, sizeof err);
      kind->free_result(r);
      free(r);
      cr_expect_eq(rc, -1, "%s, resume %d: %d", specs[k], resume, rc);
      cr_expect(strstr(err, "/tmp/nhbench-no-such-dir/journal: ") &&
                    strstr(err, resume ? "no interrupted run to resume" : "cannot write the checkpoint journal"),
                "%s, resume %d: %s", specs[k], resume, err);
      nh_study_free(&st);
    }
  }
}

/* A journal whose header cannot be written (the file size limit is 4 bytes) is refused and
 * removed, not left half-written; also when it got descriptor 0 (standard input closed). */
Test(resume, journal_that_cannot_be_written_is_removed) {
  char path[128], err[512];
  snprintf(path, sizeof path, "/tmp/nhbench-journal-full-%d", (int)getpid());
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = {4, 4};
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
  for (int closed = 0; closed < 2; closed++) {
    if (closed) close(0);
    long resumed;
    err[0] = '\0';
    nh_checkpoint *c = nh_checkpoint_open(path, "key", 2, 0, collect, NULL, &resumed, err, sizeof err);
    cr_expect(c == NULL, "stdin %s: the journal opened", closed ? "closed" : "open");
    cr_expect(strstr(err, "cannot write the checkpoint journal: File too large"), "%s", err);
    cr_expect(access(path, F_OK) != 0, "stdin %s: the half-written journal is left", closed ? "closed" : "open");
    remove(path);
  }
}

/* The journal's key is everything that determines the results (issue 47 item 4): the spec's text
 * with its includes expanded, --set, nhbench's version and its build (compiler and flags). A
 * changed included file makes a journal another run's: --resume is refused, the journal kept; the
 * file's spec_text is the expanded text. */
Test(resume, an_included_file_is_part_of_the_journal_key, .timeout = 120) {
  char dir[256], main_cfg[300], part[300], out[300], journal[320], cmd[2048], text[8192];
  tmp_name(dir, sizeof dir, "include");
  mkdir(dir, 0755);
  snprintf(main_cfg, sizeof main_cfg, "%s/main.cfg", dir);
  snprintf(part, sizeof part, "%s/part.cfg", dir);
  snprintf(out, sizeof out, "%s/out.h5", dir);
  snprintf(journal, sizeof journal, "%s.journal", out);
  test_write_file(main_cfg, "study = \"ensemble\";\nsystem = \"chaotic_particle\";\n@include \"part.cfg\"\n"
                            "h = 0.2;\nsample_every = 2;\nmethods = [\"rk4\", \"nh_rattle\"];\n");
  test_write_file(part, "T = 20.0;\nensemble = { count = 4; energy = 1.535; seed = 7; };\n");
  snprintf(cmd, sizeof cmd, "NHBENCH_KILL_AFTER=1 %s run %s -j 1 -o %s 2>&1", NHBENCH_EXE, main_cfg, out);
  cr_assert_neq(test_run_command(cmd, text, sizeof text), 0, "the run was not killed: %s", text);
  size_t len = 0;
  char *key = test_file_bytes(journal, &len);
  cr_assert(key, "the killed run left its journal");
  const char *expanded = "system = \"chaotic_particle\";\nT = 20.0;\nensemble = { count = 4; energy = 1.535; seed = 7; };"
                         "\nh = 0.2;";
  cr_expect(memmem(key, len, expanded, strlen(expanded)), "the key holds the expanded text");
  cr_expect(memmem(key, len, nh_results_version(), strlen(nh_results_version())), "the key holds the version");
  cr_expect(memmem(key, len, nh_results_compiler(), strlen(nh_results_compiler())), "the key holds the build");
  free(key);
  /* Another seed in the included file: another run. */
  test_write_file(part, "T = 20.0;\nensemble = { count = 4; energy = 1.535; seed = 8; };\n");
  snprintf(cmd, sizeof cmd, "%s run %s -j 1 -o %s --resume 2>&1", NHBENCH_EXE, main_cfg, out);
  cr_expect_eq(test_run_command(cmd, text, sizeof text), 2, "%s", text);
  cr_expect(strstr(text, "journal of another run") != NULL, "%s", text);
  cr_expect(access(journal, F_OK) == 0 && access(out, F_OK) != 0, "the journal kept, nothing written");
  /* The same text again: resumed, and the file's spec_text is the expanded spec. */
  test_write_file(part, "T = 20.0;\nensemble = { count = 4; energy = 1.535; seed = 7; };\n");
  cr_expect_eq(test_run_command(cmd, text, sizeof text), 0, "%s", text);
  cr_expect(strstr(text, "resuming: ") != NULL, "%s", text);
  char *file = test_file_bytes(out, &len);
  const char *tail = "seed = 7; };\nh = 0.2;";
  cr_expect(file && memmem(file, len, tail, strlen(tail)), "the file's spec_text is the expanded text");
  free(file);
  remove(out), remove(journal), remove(part), remove(main_cfg), rmdir(dir);
}
