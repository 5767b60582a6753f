/* libFuzzer target: the checkpoint journal reader (studies/checkpoint.c) on arbitrary files. The
 * input is written to a file of its own (mkstemp, removed after each input) and resumed as the
 * journal of a run of NTASKS tasks with the key KEY: every value replayed is read, every task's
 * record is read back (nh_checkpoint_read), one record is appended, and the journal is resumed a
 * second time. Whether a damaged journal is refused or cut at its last good record is the
 * reader's choice; what is checked is what checkpoint.h promises either way, a difference aborts:
 *  - nh_checkpoint_matches says 1 for a journal that opens, and a journal it says 0 or -1 for
 *    does not open; a journal refused is left as it was, and resuming one only cuts its end;
 *  - *resumed is the number of tasks 0 … NTASKS − 1 replayed, a task replayed twice counted once;
 *  - a task's values read back are those of its last record replayed, and nothing past them
 *    (nor of a task without a record) is read;
 *  - the record appended reads back, and the second resume replays the first one's records,
 *    then that record.
 * NHBENCH_FUZZ_JOURNAL_SEEDS=DIR build-fuzz/fuzz_journal writes the seed journals of
 * tests/fuzz/corpus/journal/ into DIR (through nh_checkpoint_append, as a run writes them) and exits. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, unsetenv */
#include <math.h>
#include <string.h>

#include "studies/checkpoint.h"
#include "tests/fuzz/fuzz_common.h"

#define KEY "fuzz_journal key\n"
#define NTASKS 6

typedef struct {
  long records, tasks; /* records replayed; tasks 0 … NTASKS − 1 among them */
  uint64_t hash;       /* FNV-1a over the records replayed (task, n, values), in order */
  uint64_t hash_at[2]; /* the hash after record `at`, and the last record's own hash */
  long at;
  double *last[NTASKS]; /* the values of each task's last record, NULL if none */
  size_t n[NTASKS];
  volatile double sum; /* every value replayed is read */
} replay;

static uint64_t fnv(uint64_t h, const void *p, size_t len) {
  for (size_t i = 0; i < len; i++) h = (h ^ ((const unsigned char *)p)[i]) * 1099511628211ull;
  return h;
}

static void fail(const char *what) {
  fprintf(stderr, "fuzz_journal: %s\n", what);
  abort();
}

static void on_record(void *ctx, long task, const double *x, size_t n) {
  replay *r = ctx;
  double s = 0;
  for (size_t i = 0; i < n; i++) s += x[i];
  r->sum += s;
  uint64_t one = fnv(14695981039346656037ull, &task, sizeof task);
  one = fnv(fnv(one, &n, sizeof n), x, n * sizeof *x);
  r->hash = fnv(r->hash, &one, sizeof one);
  r->hash_at[1] = one;
  if (++r->records == r->at) r->hash_at[0] = r->hash;
  if (task < 0 || task >= NTASKS) return;
  r->tasks += r->last[task] == NULL;
  free(r->last[task]);
  r->last[task] = malloc(n ? n * sizeof *x : 1);
  if (!r->last[task]) fail("out of memory");
  if (!x) fail("a record handed over as NULL");
  memcpy(r->last[task], x, n * sizeof *x);
  r->n[task] = n;
}

static void replay_free(replay *r) {
  for (int t = 0; t < NTASKS; t++) free(r->last[t]);
}

/* What each task's record reads back as, against what was replayed. */
static void check_reads(const nh_checkpoint *c, const replay *r) {
  double one;
  if (nh_checkpoint_read(c, -1, 0, &one, 1) == 0 || nh_checkpoint_read(c, NTASKS, 0, &one, 1) == 0)
    fail("a task out of range read");
  for (int t = 0; t < NTASKS; t++) {
    if (!r->last[t]) {
      if (nh_checkpoint_read(c, t, 0, &one, 1) == 0) fail("a task without a record read");
      continue;
    }
    const size_t n = r->n[t];
    double *x = malloc((n + 1) * sizeof *x);
    if (!x) fail("out of memory");
    if (nh_checkpoint_read(c, t, 0, x, n) != 0 || memcmp(x, r->last[t], n * sizeof *x) != 0)
      fail("a task's values read back are not those replayed");
    if (n > 1 && (nh_checkpoint_read(c, t, n - 1, x, 1) != 0 || memcmp(x, r->last[t] + n - 1, sizeof *x) != 0))
      fail("a task's last value read back is not the one replayed");
    if (nh_checkpoint_read(c, t, 0, x, n + 1) == 0 || nh_checkpoint_read(c, t, n, x, 1) == 0)
      fail("values past a task's record read");
    free(x);
  }
}

/* Resumes the journal at path; the checkpoint (NULL if refused) with its replay in r. */
static nh_checkpoint *resume(const char *path, replay *r, long at) {
  char err[1024] = "";
  long resumed = -1;
  memset(r, 0, sizeof *r);
  r->hash = 14695981039346656037ull, r->at = at;
  nh_checkpoint *c = nh_checkpoint_open(path, KEY, NTASKS, 1, on_record, r, &resumed, err, sizeof err);
  if (!c && strlen(err) == 0) fail("a journal refused without a message");
  if (c && resumed != r->tasks) fail("*resumed is not the number of tasks replayed");
  return c;
}

/* The file at path: 1 if it is data[0, len) for some len <= size (all of it if whole), else 0. */
static int file_is_prefix(const char *path, const uint8_t *data, size_t size, int whole) {
  FILE *f = fopen(path, "rb");
  if (!f) fail("the journal is gone");
  unsigned char buf[4096];
  size_t at = 0, got;
  int same = 1;
  while (same && (got = fread(buf, 1, sizeof buf, f)) > 0) {
    same = at + got <= size && memcmp(buf, data + at, got) == 0;
    at += got;
  }
  fclose(f);
  return same && (!whole || at == size);
}

static void run(const char *path, const uint8_t *data, size_t size) {
  const int matches = nh_checkpoint_matches(path, KEY);
  nh_checkpoint_matches(path, "another key");
  replay first;
  nh_checkpoint *c = resume(path, &first, -1);
  if (c && matches != 1) fail("a journal that opens is not said to match");
  if (!c && matches != 1 && first.records) fail("a journal said not to match replayed records");
  if (!file_is_prefix(path, data, size, !c))
    fail(c ? "resuming changed the journal's records (only a damaged end may be cut)"
           : "a journal refused was changed");
  if (!c) {
    replay_free(&first);
    return;
  }
  check_reads(c, &first);
  /* One record appended after the replayed ones, to a task chosen by the replay. */
  const long task = (long)(first.hash % NTASKS);
  const double x[3] = {(double)first.records, -0.0, NAN};
  if (nh_checkpoint_append(c, task, x, 3) != 0) fail("append failed");
  double back[3];
  if (nh_checkpoint_read(c, task, 0, back, 3) != 0 || memcmp(back, x, sizeof x) != 0)
    fail("the record appended does not read back");
  nh_checkpoint_close(c);
  /* Resumed again: the first resume's records, then the one appended. */
  replay second;
  c = resume(path, &second, first.records);
  if (!c) fail("a journal resumed and appended to does not resume again");
  if (second.records != first.records + 1 || (first.records && second.hash_at[0] != first.hash))
    fail("the second resume does not replay the first one's records");
  const size_t n = 3;
  uint64_t one = fnv(14695981039346656037ull, &task, sizeof task);
  one = fnv(fnv(one, &n, sizeof n), x, sizeof x);
  if (second.hash_at[1] != one) fail("the second resume does not end with the record appended");
  check_reads(c, &second);
  nh_checkpoint_close(c);
  replay_free(&first), replay_free(&second);
}

/* ---- the seeds ------------------------------------------------------------------------------ */

/* Seed journals as a run writes them: KEY (or another), tasks 0, 1, ... with LENS[task] values,
 * then what `extra` says. */
enum { PLAIN, TWICE, TORN, HUGE_N, BAD_SUM };
static const size_t lens[NTASKS] = {1, 3, 0, 8, 2, 5};

static void seed_record(nh_checkpoint *c, long task, size_t n) {
  double x[8];
  for (size_t i = 0; i < n; i++) x[i] = (double)task + 0.25 * (double)i;
  if (n > 2) x[1] = NAN, x[2] = -INFINITY;
  if (nh_checkpoint_append(c, task, x, n) != 0) fail("seed: append failed");
}

static void seed(const char *dir, const char *name, const char *key, int records, int extra) {
  char path[4096], err[1024];
  long resumed;
  snprintf(path, sizeof path, "%s/%s", dir, name);
  nh_checkpoint *c = nh_checkpoint_open(path, key, NTASKS, 0, NULL, NULL, &resumed, err, sizeof err);
  if (!c) fail(err);
  for (int t = 0; t < records; t++) seed_record(c, t, lens[t]);
  if (extra == TWICE) /* task 1 again, tasks out of range, task 1 once more */
    seed_record(c, 1, 2), seed_record(c, -1, 1), seed_record(c, NTASKS, 0), seed_record(c, 1, 4);
  nh_checkpoint_close(c);
  FILE *f = fopen(path, "r+b");
  if (!f) fail("seed: cannot reopen");
  /* A last record cut short, or one claiming 2^32 values (u32 magic, i64 task, u64 n). */
  const uint32_t magic = 0x4e48434bu;
  const int64_t task = 0;
  const uint64_t n = extra == HUGE_N ? 1ull << 32 : 2;
  unsigned char rec[4 + 8 + 8 + 2 * 8 + 8] = {0};
  memcpy(rec, &magic, 4), memcpy(rec + 4, &task, 8), memcpy(rec + 12, &n, 8);
  fseek(f, 0, SEEK_END);
  if (extra == TORN) fwrite(rec, 1, 4 + 8 + 8 + 5, f);
  if (extra == HUGE_N) fwrite(rec, 1, sizeof rec, f);
  /* A value of the second record changed, its checksum not: records after it are not replayed. */
  if (extra == BAD_SUM) fseek(f, (long)(8 + 8 + strlen(key) + 4 + 8 + 8 + 8 * lens[0] + 8 + 4 + 8 + 8 + 3), SEEK_SET),
                        fputc('x', f);
  if (fclose(f)) fail("seed: cannot write");
}

static void write_seeds(const char *dir) {
  seed(dir, "empty", KEY, 0, PLAIN);
  seed(dir, "one", KEY, 1, PLAIN);
  seed(dir, "all_tasks", KEY, NTASKS, PLAIN);
  seed(dir, "twice", KEY, 3, TWICE);
  seed(dir, "torn", KEY, 2, TORN);
  seed(dir, "huge_n", KEY, 2, HUGE_N);
  seed(dir, "bad_sum", KEY, 4, BAD_SUM);
  seed(dir, "other_key", "another key", 2, PLAIN);
}

/* ---- libFuzzer ------------------------------------------------------------------------------ */

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  unsetenv("NHBENCH_KILL_AFTER"); /* checkpoint.c's fault injection: a kill after the N-th append */
  const char *seeds = getenv("NHBENCH_FUZZ_JOURNAL_SEEDS");
  if (seeds && *seeds) write_seeds(seeds), exit(0);
  return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  const char *dir = getenv("TMPDIR");
  char path[4096];
  snprintf(path, sizeof path, "%s/nhbench_fuzz_journal_XXXXXX", dir && *dir ? dir : "/tmp");
  int fd = mkstemp(path);
  if (fd < 0) {
    perror(path);
    abort(); /* a broken setup, not a finding to minimise */
  }
  for (size_t at = 0; at < size;) {
    const ssize_t put = write(fd, data + at, size - at);
    if (put <= 0) perror(path), abort();
    at += (size_t)put;
  }
  close(fd);
  run(path, data, size);
  unlink(path);
  return 0;
}
