/* A run's checkpoint journal (studies/checkpoint.h): an append-only file of the finished tasks'
 * results, so that a killed run can be resumed without losing what it computed.
 *
 * Layout: the header "NHCKPT1\n", the key's length (u64) and the key (the spec text, overrides and
 * version the run was made with); then one record per finished task:
 *   u32 magic, i64 task, u64 n, n doubles, u64 checksum (FNV-1a over task, n and the doubles).
 * A record is appended with one write(): once write() returns, the record survives a kill -9 of the
 * process (it is in the kernel's page cache), and a kill during the write leaves at most one
 * incomplete last record, which the checksum rejects. fdatasync() (against a crash of the machine
 * itself) runs at most every SYNC_SECONDS: syncing every record cost as much as the run. */
#define _POSIX_C_SOURCE 200809L /* fdatasync, ftruncate, clock_gettime */
#include "core/alloc.h"
#include "core/hash.h"
#include "core/text.h"
#include "studies/checkpoint.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HEADER "NHCKPT1\n"
#define RECORD_MAGIC 0x4e48434bu /* "NHCK" */
#define SYNC_SECONDS 5.0

struct nh_checkpoint {
  int fd;
  double last_sync;
  long appended, kill_after; /* records appended by this process; the fault injection below */
  long ntasks;
  off_t *offset; /* [task]: where its values start in the file, -1 until it has a record */
  size_t *count; /* [task]: how many */
  char path[NH_TEXT_PATH];
};

static double now_seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

static uint64_t record_checksum(int64_t task, uint64_t n, const double *x) {
  uint64_t h = nh_fnv1a(NH_FNV1A_BASIS, &task, sizeof task);
  h = nh_fnv1a(h, &n, sizeof n);
  return nh_fnv1a(h, x, n * sizeof *x);
}

/* read() of exactly len bytes: 0, or -1 at the end of the file or on an error. A signal (EINTR) is
 * not an error: taken for one, it would call a good journal "not a checkpoint journal". */
static int read_exact(int fd, void *buf, size_t len) {
  unsigned char *p = buf;
  while (len) {
    ssize_t got = read(fd, p, len);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    p += got, len -= (size_t)got;
  }
  return 0;
}

static int write_exact(int fd, const void *buf, size_t len) {
  const unsigned char *p = buf;
  while (len) {
    ssize_t put = write(fd, p, len);
    if (put < 0 && errno == EINTR) continue;
    if (put <= 0) return -1;
    p += put, len -= (size_t)put;
  }
  return 0;
}

static void fail(char *err, size_t errlen, const char *path, const char *what) {
  snprintf(err, errlen, "%s: %s: %s", path, what, strerror(errno ? errno : EIO));
}

/* The header of an existing journal: 1 if its key is `key`, 0 if another, -1 if unreadable,
 * NH_CHECKPOINT_NO_MEMORY if there is no room for the stored key. */
static int header_matches(int fd, const char *key) {
  char magic[sizeof HEADER - 1];
  uint64_t len;
  if (read_exact(fd, magic, sizeof magic) != 0 || memcmp(magic, HEADER, sizeof magic) ||
      read_exact(fd, &len, sizeof len) != 0)
    return -1;
  if (len != strlen(key)) return 0;
  char *stored = malloc(len); /* no terminator: compared by length */
  if (!stored) return NH_CHECKPOINT_NO_MEMORY; /* not "another run's": that would invite removing it */
  const int same = read_exact(fd, stored, len) == 0 && memcmp(stored, key, len) == 0;
  free(stored);
  return same;
}

/* Replays the complete records after the header and cuts the journal after the last of them: a
 * record cut by a kill, or damaged (its length, its checksum), and what follows it are dropped,
 * with a note. 0, -1 if it cannot truncate, or NH_CHECKPOINT_NO_MEMORY with the journal untouched
 * (its records are work). */
static int replay(nh_checkpoint *c, nh_checkpoint_fn fn, void *ctx, long *count) {
  off_t good = lseek(c->fd, 0, SEEK_CUR);
  struct stat sb;
  if (fstat(c->fd, &sb) != 0) return -1;
  /* Room for one value from the start: a record of none is handed over as a pointer too. */
  double *x = nh_malloc_array(1, sizeof *x);
  size_t cap = 1;
  long records = 0;
  if (!x) return NH_CHECKPOINT_NO_MEMORY;
  *count = 0;
  for (;;) {
    uint32_t magic;
    int64_t task;
    uint64_t n, sum;
    /* A record's length is checked against the bytes the file has left before anything is
     * allocated for it: a damaged length is a damaged record, not a request for gigabytes. */
    if (read_exact(c->fd, &magic, sizeof magic) != 0 || magic != RECORD_MAGIC ||
        read_exact(c->fd, &task, sizeof task) != 0 || read_exact(c->fd, &n, sizeof n) != 0 ||
        n > (uint64_t)(sb.st_size - lseek(c->fd, 0, SEEK_CUR)) / sizeof *x)
      break;
    if (n > cap) {
      double *bigger = realloc(x, n * sizeof *x);
      if (!bigger) {
        free(x);
        return NH_CHECKPOINT_NO_MEMORY;
      }
      x = bigger, cap = n;
    }
    const off_t at = lseek(c->fd, 0, SEEK_CUR);
    if (read_exact(c->fd, x, n * sizeof *x) != 0 || read_exact(c->fd, &sum, sizeof sum) != 0 ||
        sum != record_checksum(task, n, x))
      break;
    if (task >= 0 && task < c->ntasks) {
      *count += c->offset[task] < 0; /* tasks, not records: a task journaled twice is one */
      c->offset[task] = at, c->count[task] = (size_t)n;
    }
    fn(ctx, (long)task, x, (size_t)n);
    good = lseek(c->fd, 0, SEEK_CUR);
    records++;
  }
  free(x);
  if (good < sb.st_size)
    fprintf(stderr, "nhbench: note: %s: the last %lld bytes are no complete record (cut by a kill, or damaged) and "
            "are dropped; the %ld complete records before them are kept\n", c->path,
            (long long)(sb.st_size - good), records);
  /* Appends go after the last complete record. */
  if (ftruncate(c->fd, good) != 0 || lseek(c->fd, good, SEEK_SET) != good) return -1;
  return 0;
}

/* A journal is a regular file this program made: never a link followed (O_NOFOLLOW), never a FIFO
 * or device waited on (O_NONBLOCK, then checked). -1 with errno otherwise (ELOOP: a link; EINVAL:
 * not a regular file). */
static int open_journal(const char *path, int flags) {
  int fd = open(path, flags | O_NOFOLLOW | O_NONBLOCK, 0644);
  struct stat sb;
  if (fd >= 0 && (fstat(fd, &sb) != 0 || !S_ISREG(sb.st_mode))) {
    close(fd);
    errno = EINVAL;
    return -1;
  }
  if (fd >= 0) fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK);
  return fd;
}

int nh_checkpoint_matches(const char *path, const char *key) {
  int fd = open_journal(path, O_RDONLY);
  if (fd < 0) return -1;
  const int same = header_matches(fd, key);
  close(fd);
  return same;
}

static void free_checkpoint(nh_checkpoint *c) {
  free(c->offset), free(c->count), free(c);
}

/* --resume: opens the journal at c->path, checks its key and replays its records; 0, or -1 with
 * the reason in err (the file closed). */
static int resume_journal(nh_checkpoint *c, const char *key, nh_checkpoint_fn fn, void *ctx, long *resumed, char *err,
                          size_t errlen) {
  if ((c->fd = open_journal(c->path, O_RDWR)) < 0)
    return fail(err, errlen, c->path, "no interrupted run to resume"), -1;
  const int same = header_matches(c->fd, key);
  const int rc = same == 1 ? replay(c, fn, ctx, resumed) : same; /* the header's failure, else the replay's */
  if (rc == NH_CHECKPOINT_NO_MEMORY)
    snprintf(err, errlen, "%s: out of memory for the journal (left as it was)", c->path);
  else if (same != 1)
    snprintf(err, errlen, "%s: %s; remove it, or run without --resume to start over", c->path,
             same == 0 ? "the interrupted run was of another spec (or included file), --set, nhbench version or build"
                       : "not a checkpoint journal");
  else if (rc != 0)
    fail(err, errlen, c->path, "cannot truncate the journal");
  else
    return 0;
  close(c->fd);
  return -1;
}

nh_checkpoint *nh_checkpoint_open(const char *path, const char *key, long ntasks, int resume, nh_checkpoint_fn fn,
                                  void *ctx, long *resumed, char *err, size_t errlen) {
  nh_checkpoint *c = calloc(1, sizeof *c);
  if (c) c->ntasks = ntasks, c->offset = nh_malloc_array((size_t)ntasks, sizeof(off_t)),
         c->count = nh_calloc_array((size_t)ntasks, sizeof(size_t));
  if (!c || !c->offset || !c->count) {
    if (c) free_checkpoint(c);
    return fail(err, errlen, path, "out of memory"), NULL;
  }
  for (long t = 0; t < ntasks; t++) c->offset[t] = -1;
  snprintf(c->path, sizeof c->path, "%s", path);
  /* Fault injection for tests/faults/test_resume.c: NHBENCH_KILL_AFTER=N kills the process with SIGKILL
   * right after its N-th append, as a kill -9 at that moment would: deterministic, where a timed
   * kill would race runs of a few milliseconds. */
  const char *kill_after = getenv("NHBENCH_KILL_AFTER");
  c->kill_after = kill_after ? atol(kill_after) : 0;
  c->last_sync = now_seconds();
  *resumed = 0;
  errno = 0;
  if (resume) {
    if (resume_journal(c, key, fn, ctx, resumed, err, errlen) >= 0) return c;
    free_checkpoint(c);
    return NULL;
  }
  /* A new journal replaces an old one by unlinking it (a link planted there is removed, not
   * followed) and creating the file anew, exclusively. */
  if (unlink(path) != 0 && errno != ENOENT) c->fd = -1;
  else c->fd = open_journal(path, O_RDWR | O_CREAT | O_EXCL);
  const uint64_t len = strlen(key);
  if (c->fd < 0 || write_exact(c->fd, HEADER, sizeof HEADER - 1) != 0 || write_exact(c->fd, &len, sizeof len) != 0 ||
      write_exact(c->fd, key, len) != 0 || fdatasync(c->fd)) {
    fail(err, errlen, path, "cannot write the checkpoint journal");
    if (c->fd >= 0) close(c->fd), unlink(path);
    free_checkpoint(c);
    return NULL;
  }
  return c;
}

int nh_checkpoint_append(nh_checkpoint *c, long task, const double *x, size_t n) {
  const uint32_t magic = RECORD_MAGIC;
  const int64_t t = task;
  const uint64_t count = n, sum = record_checksum(t, count, x);
  const size_t len = sizeof magic + sizeof t + sizeof count + n * sizeof *x + sizeof sum;
  unsigned char *rec = malloc(len), *p = rec;
  if (!rec) return -1;
  memcpy(p, &magic, sizeof magic), p += sizeof magic;
  memcpy(p, &t, sizeof t), p += sizeof t;
  memcpy(p, &count, sizeof count), p += sizeof count;
  memcpy(p, x, n * sizeof *x), p += n * sizeof *x;
  memcpy(p, &sum, sizeof sum);
  const off_t at = lseek(c->fd, 0, SEEK_END);
  int rc = at < 0 || write_exact(c->fd, rec, len) != 0 ? -1 : 0;
  free(rec);
  if (rc == 0 && task >= 0 && task < c->ntasks)
    c->offset[task] = at + (off_t)(sizeof magic + sizeof t + sizeof count), c->count[task] = n;
  if (rc == 0 && ++c->appended == c->kill_after) raise(SIGKILL);
  const double now = now_seconds();
  if (rc == 0 && now - c->last_sync >= SYNC_SECONDS) {
    rc = fdatasync(c->fd) ? -1 : 0;
    c->last_sync = now;
  }
  return rc;
}

int nh_checkpoint_read(const nh_checkpoint *c, long task, size_t first, double *x, size_t n) {
  if (task < 0 || task >= c->ntasks || c->offset[task] < 0 || first + n > c->count[task]) return -1;
  unsigned char *p = (unsigned char *)x;
  size_t len = n * sizeof *x;
  off_t at = c->offset[task] + (off_t)(first * sizeof *x);
  while (len) {
    ssize_t got = pread(c->fd, p, len, at);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) return -1;
    p += got, len -= (size_t)got, at += got;
  }
  return 0;
}

void nh_checkpoint_close(nh_checkpoint *c) {
  if (!c) return;
  fdatasync(c->fd);
  close(c->fd);
  free_checkpoint(c);
}
