/* studies/checkpoint.c at the system calls: the journal makes its records durable (fdatasync) at
 * most once every SYNC_SECONDS = 5 s of the monotonic clock, counted from the open and from the
 * last sync; an append whose sync fails fails; reads and writes that move fewer bytes than asked,
 * or are interrupted (EINTR), still move every byte; and out of memory on --resume says so and
 * leaves the journal as it was (its records are computed work).
 * clock_gettime, fdatasync, read, write and pread are wrapped for this (CMakeLists.txt). They pass
 * straight through unless a test here sets: clock_ahead (the monotonic clock runs that many seconds
 * ahead), clock_stopped (when its tv_sec is > 0, the monotonic clock reads exactly that), sync_fails (fdatasync fails with EIO), write_fails (write fails with ENOSPC), io_chunk
 * (at most that many bytes a call), io_interrupts (that many calls of read, write or pread fail
 * with EINTR first) and io_nothing (that many calls of read, write or pread move no byte). */
#define _POSIX_C_SOURCE 200809L /* clock_gettime, pread, off_t */
#include <criterion/criterion.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "studies/checkpoint.h"
#include "tests/helpers.h"

static double clock_ahead;
static struct timespec clock_stopped;
static int syncs, sync_fails, write_fails, io_interrupts, io_nothing;
static size_t io_chunk;

int __real_clock_gettime(clockid_t clk, struct timespec *t);
int __wrap_clock_gettime(clockid_t clk, struct timespec *t);
int __real_fdatasync(int fd);
int __wrap_fdatasync(int fd);
ssize_t __real_read(int fd, void *buf, size_t len);
ssize_t __wrap_read(int fd, void *buf, size_t len);
ssize_t __real_write(int fd, const void *buf, size_t len);
ssize_t __wrap_write(int fd, const void *buf, size_t len);
ssize_t __real_pread(int fd, void *buf, size_t len, off_t at);
ssize_t __wrap_pread(int fd, void *buf, size_t len, off_t at);

int __wrap_clock_gettime(clockid_t clk, struct timespec *t) {
  if (clk == CLOCK_MONOTONIC && clock_stopped.tv_sec > 0) return *t = clock_stopped, 0;
  const int rc = __real_clock_gettime(clk, t);
  if (rc == 0 && clk == CLOCK_MONOTONIC) {
    const long ns = t->tv_nsec + (long)(clock_ahead * 1e9 + 0.5) % 1000000000L;
    t->tv_sec += (time_t)clock_ahead + ns / 1000000000L;
    t->tv_nsec = ns % 1000000000L;
  }
  return rc;
}

int __wrap_fdatasync(int fd) {
  syncs++;
  if (!sync_fails) return __real_fdatasync(fd);
  errno = EIO;
  return -1;
}

static size_t chunk(size_t len) { return io_chunk && len > io_chunk ? io_chunk : len; }

/* A call that moves no byte, on request (a file cut short under a read; a write that makes no
 * progress). */
static int moves_nothing(void) { return io_nothing > 0 ? io_nothing--, 1 : 0; }

static int interrupted(void) {
  if (io_interrupts <= 0) return 0;
  io_interrupts--;
  errno = EINTR;
  return 1;
}

ssize_t __wrap_read(int fd, void *buf, size_t len) {
  return interrupted() ? -1 : moves_nothing() ? 0 : __real_read(fd, buf, chunk(len));
}
ssize_t __wrap_write(int fd, const void *buf, size_t len) {
  if (write_fails) return errno = ENOSPC, -1;
  return interrupted() ? -1 : moves_nothing() ? 0 : __real_write(fd, buf, chunk(len));
}
ssize_t __wrap_pread(int fd, void *buf, size_t len, off_t at) {
  return interrupted() ? -1 : moves_nothing() ? 0 : __real_pread(fd, buf, chunk(len), at);
}

typedef struct {
  int calls, null_records; /* null_records: records handed over as NULL */
  long task[4];
  double x[4][3];
} replayed;

static void collect(void *ctx, long task, const double *x, size_t n) {
  replayed *r = ctx;
  r->null_records += x == NULL;
  if (r->calls < 4) r->task[r->calls] = task, memcpy(r->x[r->calls], x, sizeof(double) * (n < 3 ? n : 3));
  r->calls++;
}

static nh_checkpoint *open_journal(const char *path, int resume, replayed *r, long *resumed, char *err, size_t len) {
  return nh_checkpoint_open(path, "key of the run", 8, resume, collect, r, resumed, err, len);
}

static nh_checkpoint *new_journal(char *path, size_t len) {
  char err[512] = "";
  long resumed = -1;
  snprintf(path, len, "/tmp/nhbench-ckio-%d", (int)getpid());
  nh_checkpoint *c = open_journal(path, 0, NULL, &resumed, err, sizeof err);
  cr_assert(c, "%s", err);
  syncs = 0; /* the open's own sync (the header) is not the appends' */
  return c;
}

/* The test runs in well under a second of real time, so the clock is where the wrapper puts it. */
Test(checkpoint_io, synced_at_most_every_five_seconds_from_the_open_and_the_last_sync) {
  static const struct {
    double ahead; /* the clock, seconds after the open */
    int syncs;    /* the appends' syncs so far */
    const char *why;
  } appends[] = {{0, 0, "none right after the open"}, {4.8, 0, "none 4.8 s after the open"},
                 {5.2, 1, "one 5.2 s after the open"},  {5.2, 1, "none right after that sync"},
                 {10.0, 1, "none 4.8 s after it"},      {10.4, 2, "the next 5.2 s after it"}};
  char path[128];
  nh_checkpoint *c = new_journal(path, sizeof path);
  const double x[2] = {1, 2};
  for (long t = 0; t < (long)(sizeof appends / sizeof *appends); t++) {
    clock_ahead = appends[t].ahead;
    cr_assert_eq(nh_checkpoint_append(c, t, x, 2), 0);
    cr_expect_eq(syncs, appends[t].syncs, "append %ld: %d syncs, want %s", t, syncs, appends[t].why);
  }
  nh_checkpoint_close(c);
  unlink(path);
}

/* The clock's two fields make one time: 4.99 s after an open at a whole second (the seconds 4
 * apart, the nanoseconds 990000000) is not yet 5 s; 5.000000001 s is. */
Test(checkpoint_io, sync_due_from_seconds_and_nanoseconds) {
  char path[128];
  clock_stopped = (struct timespec){.tv_sec = 100, .tv_nsec = 0};
  nh_checkpoint *c = new_journal(path, sizeof path);
  const double x[1] = {1};
  clock_stopped = (struct timespec){.tv_sec = 104, .tv_nsec = 990000000};
  cr_assert_eq(nh_checkpoint_append(c, 0, x, 1), 0);
  cr_expect_eq(syncs, 0, "synced 4.99 s after the open");
  clock_stopped = (struct timespec){.tv_sec = 105, .tv_nsec = 1};
  cr_assert_eq(nh_checkpoint_append(c, 1, x, 1), 0);
  cr_expect_eq(syncs, 1, "not synced 5.000000001 s after the open");
  nh_checkpoint_close(c);
  unlink(path);
}

Test(checkpoint_io, a_failed_sync_fails_the_append) {
  char path[128];
  nh_checkpoint *c = new_journal(path, sizeof path);
  const double x[1] = {3};
  cr_assert_eq(nh_checkpoint_append(c, 0, x, 1), 0, "no sync due: the failure is not seen");
  sync_fails = 1;
  clock_ahead = 6;
  errno = 0;
  cr_expect_eq(nh_checkpoint_append(c, 1, x, 1), -1);
  cr_expect_eq(errno, EIO, "fdatasync's reason is kept for the message");
  cr_expect_eq(syncs, 1);
  nh_checkpoint_close(c);
  unlink(path);
}

/* Every call moves at most 3 bytes (a record is 28 + 8n), and the first two calls of each append
 * and of the resume are interrupted: the records read back and replay whole. */
/* An append whose write fails fails, and its task has no record to read, not even once the next
 * record is written where it would have been; the others keep theirs. */
Test(checkpoint_io, a_failed_write_records_nothing) {
  char path[128];
  nh_checkpoint *c = new_journal(path, sizeof path);
  const double x[2] = {3, 4};
  double got[2] = {0, 0};
  cr_assert_eq(nh_checkpoint_append(c, 2, x, 2), 0);
  write_fails = 1;
  errno = 0;
  cr_expect_eq(nh_checkpoint_append(c, 3, x, 2), -1);
  cr_expect_eq(errno, ENOSPC, "write's reason is kept for the message");
  write_fails = 0;
  const double y[2] = {5, 6};
  cr_assert_eq(nh_checkpoint_append(c, 4, y, 2), 0, "the next record where the failed one would be");
  cr_expect_eq(nh_checkpoint_read(c, 3, 0, got, 1), -1, "no record of the failed append");
  cr_expect_eq(nh_checkpoint_read(c, 2, 0, got, 2), 0);
  cr_expect(got[0] == 3 && got[1] == 4, "%g %g", got[0], got[1]);
  cr_expect_eq(nh_checkpoint_read(c, 4, 0, got, 2), 0);
  cr_expect(got[0] == 5 && got[1] == 6, "%g %g", got[0], got[1]);
  nh_checkpoint_close(c);
  unlink(path);
}

Test(checkpoint_io, short_and_interrupted_reads_and_writes_move_every_byte) {
  char path[128], err[512] = "";
  const double a[3] = {1.25, -3e-300, 7}, b[1] = {-0.5};
  io_chunk = 3;
  nh_checkpoint *c = new_journal(path, sizeof path);
  io_interrupts = 2;
  cr_assert_eq(nh_checkpoint_append(c, 6, a, 3), 0);
  io_interrupts = 2;
  cr_assert_eq(nh_checkpoint_append(c, 1, b, 1), 0);
  double got[3] = {0};
  io_interrupts = 2;
  cr_assert_eq(nh_checkpoint_read(c, 6, 0, got, 3), 0);
  cr_expect(memcmp(got, a, sizeof a) == 0, "task 6 read back: %g %g %g", got[0], got[1], got[2]);
  cr_assert_eq(nh_checkpoint_read(c, 6, 1, got, 2), 0);
  cr_expect(memcmp(got, a + 1, 2 * sizeof *a) == 0, "task 6 from its second value: %g %g", got[0], got[1]);
  nh_checkpoint_close(c);

  replayed r = {0};
  long resumed = -1;
  io_interrupts = 2;
  c = open_journal(path, 1, &r, &resumed, err, sizeof err);
  cr_assert(c, "%s", err);
  cr_expect_eq(resumed, 2);
  cr_assert_eq(r.calls, 2);
  cr_expect(r.task[0] == 6 && memcmp(r.x[0], a, sizeof a) == 0, "first record: task %ld", r.task[0]);
  cr_expect(r.task[1] == 1 && r.x[1][0] == b[0], "second record: task %ld, %g", r.task[1], r.x[1][0]);
  nh_checkpoint_close(c);
  unlink(path);
}

/* A write or a read that moves no byte (the end of the file, for a read) fails at once, where
 * retrying would never end, also after an interrupted call left errno at EINTR; the journal goes
 * on working after it, and a resume whose first read finds nothing is refused, not taken for a
 * journal, and leaves the journal whole. */
Test(checkpoint_io, a_call_that_moves_nothing_fails, .timeout = 20) {
  char path[128], err[512] = "";
  const double a[2] = {1.5, 2.5};
  double got[2] = {0, 0};
  nh_checkpoint *c = new_journal(path, sizeof path);
  io_interrupts = 1, io_nothing = 1;
  cr_expect_eq(nh_checkpoint_append(c, 0, a, 2), -1, "a write of no bytes");
  cr_assert_eq(nh_checkpoint_append(c, 1, a, 2), 0);
  io_interrupts = 1, io_nothing = 1;
  cr_expect_eq(nh_checkpoint_read(c, 1, 0, got, 2), -1, "a read of no bytes");
  cr_assert_eq(nh_checkpoint_read(c, 1, 0, got, 2), 0);
  cr_expect(got[0] == 1.5 && got[1] == 2.5, "%g %g", got[0], got[1]);
  nh_checkpoint_close(c);
  replayed r = {0};
  long resumed = -1;
  io_interrupts = 1, io_nothing = 1;
  cr_expect_null(open_journal(path, 1, &r, &resumed, err, sizeof err), "a journal read as empty");
  cr_expect_neq(err[0], '\0', "the refusal says why");
  c = open_journal(path, 1, &r, &resumed, err, sizeof err);
  cr_assert(c, "%s", err);
  cr_expect(resumed == 1 && r.calls == 1 && r.task[0] == 1, "resumed %ld, %d records", resumed, r.calls);
  nh_checkpoint_close(c);
  unlink(path);
}

/* A task recorded twice (a run that handed a journaled task out again would write it so): the
 * resumed count is of tasks, not records; both records are replayed in order, and the task reads
 * back its last one. */
Test(checkpoint_io, a_task_recorded_twice_counts_once) {
  char path[128], err[512] = "";
  const double first[1] = {1.5}, again[1] = {-2.5}, other[1] = {4};
  nh_checkpoint *c = new_journal(path, sizeof path);
  cr_assert_eq(nh_checkpoint_append(c, 3, first, 1), 0);
  cr_assert_eq(nh_checkpoint_append(c, 5, other, 1), 0);
  cr_assert_eq(nh_checkpoint_append(c, 3, again, 1), 0);
  nh_checkpoint_close(c);
  replayed r = {0};
  long resumed = -1;
  c = open_journal(path, 1, &r, &resumed, err, sizeof err);
  cr_assert(c, "%s", err);
  cr_expect_eq(resumed, 2, "%ld tasks resumed from 3 records of 2 tasks", resumed);
  cr_assert_eq(r.calls, 3);
  cr_expect(r.task[0] == 3 && r.task[1] == 5 && r.task[2] == 3 && r.x[2][0] == again[0], "replayed %ld %ld %ld",
            r.task[0], r.task[1], r.task[2]);
  double got = 0;
  cr_assert_eq(nh_checkpoint_read(c, 3, 0, &got, 1), 0);
  cr_expect_eq(got, again[0], "task 3 reads %g", got);
  nh_checkpoint_close(c);
  unlink(path);
}

/* A record of no values (the first of the journal, before any room was needed) reaches the
 * callback as a pointer, never NULL (fuzz_journal found memcpy from NULL there), and the task reads
 * back as having a record of length 0. */
Test(checkpoint_io, a_record_of_no_values_is_handed_over_as_a_pointer) {
  char path[128], err[512] = "";
  const double one[1] = {7};
  nh_checkpoint *c = new_journal(path, sizeof path);
  cr_assert_eq(nh_checkpoint_append(c, 2, one, 0), 0);
  cr_assert_eq(nh_checkpoint_append(c, 1, one, 1), 0);
  nh_checkpoint_close(c);
  replayed r = {0};
  long resumed = -1;
  c = open_journal(path, 1, &r, &resumed, err, sizeof err);
  cr_assert(c, "%s", err);
  cr_expect_eq(resumed, 2);
  cr_assert_eq(r.calls, 2);
  cr_expect_eq(r.null_records, 0, "a record handed over as NULL");
  cr_expect(r.task[0] == 2 && r.task[1] == 1 && r.x[1][0] == 7);
  nh_checkpoint_close(c);
  unlink(path);
}

/* A last record whose length reads above 2^32 values (a damaged header: no run writes one) is cut
 * like any incomplete record, not allocated: the run resumes from the records before it. */
Test(checkpoint_io, an_implausible_record_length_is_damage) {
  char path[128], err[512] = "";
  const double x[2] = {1, 2};
  nh_checkpoint *c = new_journal(path, sizeof path);
  for (long t = 0; t < 2; t++) cr_assert_eq(nh_checkpoint_append(c, t, x, 2), 0);
  nh_checkpoint_close(c);
  size_t good = 0;
  free(test_file_bytes(path, &good));
  FILE *f = fopen(path, "ab");
  cr_assert(f);
  const uint32_t magic = 0x4e48434bu; /* "NHCK", studies/checkpoint.c */
  const int64_t task = 2;
  const uint64_t n = (1ull << 32) + 1;
  cr_assert(fwrite(&magic, sizeof magic, 1, f) == 1 && fwrite(&task, sizeof task, 1, f) == 1 &&
            fwrite(&n, sizeof n, 1, f) == 1 && fwrite(x, sizeof x, 1, f) == 1);
  fclose(f);
  replayed r = {0};
  long resumed = -1;
  c = open_journal(path, 1, &r, &resumed, err, sizeof err);
  cr_assert(c, "%s", err);
  cr_expect_eq(resumed, 2);
  cr_expect_eq(r.calls, 2);
  nh_checkpoint_close(c);
  size_t now = 0;
  free(test_file_bytes(path, &now));
  cr_expect_eq(now, good, "the damaged record cut: %zu bytes, want %zu", now, good);
  unlink(path);
}

/* --resume with each allocation failing in turn: either it resumes every record, or it says out of
 * memory (not "another run's journal: remove it", which would throw the records away) and the
 * file is byte for byte as it was. nh_checkpoint_matches likewise answers -2, not 0. */
Test(checkpoint_io, out_of_memory_on_resume_says_so_and_keeps_the_journal) {
  char path[128], err[512];
  nh_checkpoint *c = new_journal(path, sizeof path);
  const double x[3] = {1, 2, 3};
  for (long t = 0; t < 3; t++) cr_assert_eq(nh_checkpoint_append(c, t, x, 3), 0);
  nh_checkpoint_close(c);
  size_t size = 0, now = 0;
  char *before = test_file_bytes(path, &size);
  cr_assert(before && size > 3 * 28 + 9 * 8, "journal of %zu bytes", size);
  int fired = 0, failures = 0;
  test_fail_fired = &fired;
  for (long k = 1; k < 50; k++) {
    replayed r = {0};
    long resumed = -1;
    fired = 0, err[0] = '\0';
    test_fail_allocation = k;
    c = open_journal(path, 1, &r, &resumed, err, sizeof err);
    test_fail_allocation = 0;
    if (!fired) {
      cr_assert(c, "%s", err);
      cr_expect_eq(resumed, 3);
      nh_checkpoint_close(c);
      break;
    }
    failures++;
    cr_expect(!c, "allocation %ld failed, yet the journal opened", k);
    cr_expect(strstr(err, "out of memory"), "allocation %ld: %s", k, err);
    char *after = test_file_bytes(path, &now);
    cr_expect(after && now == size && memcmp(before, after, size) == 0, "allocation %ld: the journal changed", k);
    free(after);
    if (c) nh_checkpoint_close(c);
  }
  cr_expect_geq(failures, 4, "the checkpoint, its two tables, the key and the records each allocate");
  fired = 0;
  test_fail_allocation = 1;
  cr_expect_eq(nh_checkpoint_matches(path, "key of the run"), NH_CHECKPOINT_NO_MEMORY);
  test_fail_allocation = 0;
  cr_expect(fired);
  cr_expect_eq(nh_checkpoint_matches(path, "key of the run"), 1);
  free(before);
  unlink(path);
}
