/* One writer per output (issue 47 item 3, README "Security"): a run holds an advisory lock on
 * OUT.h5.lock while it runs; a second run on the same output, --resume included, exits 2 naming
 * the holder's pid before it computes or touches anything; the lock file of a run that was
 * killed does not stop the next one, and a run that ends removes its lock file. */
#define _POSIX_C_SOURCE 200809L /* kill, nanosleep */
#include <criterion/criterion.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "tests/helpers.h"

#define SPEC NHBENCH_SOURCE_DIR "/tests/data/small_ensemble.cfg"

static void test_paths(char *out, char *lock, char *journal, size_t len, const char *tag) {
  snprintf(out, len, "/tmp/nhbench-writer-%d-%s.h5", (int)getpid(), tag);
  snprintf(lock, len, "%s.lock", out);
  snprintf(journal, len, "%s.journal", out);
  remove(out), remove(lock), remove(journal);
}

/* The lock this test process holds on path (created): its descriptor. */
static int hold_lock(const char *path) {
  const int fd = open(path, O_RDWR | O_CREAT, 0644);
  cr_assert_geq(fd, 0);
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  cr_assert_eq(fcntl(fd, F_SETLK, &fl), 0);
  return fd;
}

/* The pid of the process holding a lock on path, 0 if none (or no such file). */
static long lock_holder(const char *path) {
  const int fd = open(path, O_RDONLY);
  if (fd < 0) return 0;
  struct flock fl = {.l_type = F_RDLCK, .l_whence = SEEK_SET};
  const long pid = fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK ? (long)fl.l_pid : 0;
  close(fd);
  return pid;
}

/* A run killed by SIGKILL after its first journal record: the output's journal and lock file stay. */
static void killed_run(const char *out) {
  char cmd[1024], text[4096];
  snprintf(cmd, sizeof cmd, "NHBENCH_KILL_AFTER=1 %s run " SPEC " -j 1 -o %s 2>&1", NHBENCH_EXE, out);
  cr_assert_neq(test_run_command(cmd, text, sizeof text), 0, "the run was not killed: %s", text);
}

Test(one_writer, a_locked_output_is_refused_naming_the_holder, .timeout = 120) {
  char out[256], lock[256], journal[256], args[1024], text[8192], pid[32];
  test_paths(out, lock, journal, sizeof out, "held");
  const int fd = hold_lock(lock);
  snprintf(pid, sizeof pid, "pid %ld", (long)getpid());
  snprintf(args, sizeof args, "run " SPEC " -o %s", out);
  cr_expect_eq(test_run_nhbench(args, text, sizeof text), 2, "%s", text);
  cr_expect(strstr(text, pid) && strstr(text, "being written by another run"), "the holder is named: %s", text);
  cr_expect(access(out, F_OK) != 0 && access(journal, F_OK) != 0, "nothing written");
  cr_expect(access(lock, F_OK) == 0, "the holder's lock file is left alone");
  /* --resume of a killed run's journal is refused too, and the journal kept. */
  close(fd);
  killed_run(out);
  cr_assert(access(journal, F_OK) == 0, "the killed run left its journal");
  const int again = hold_lock(lock);
  snprintf(args, sizeof args, "run " SPEC " -o %s --resume", out);
  cr_expect_eq(test_run_nhbench(args, text, sizeof text), 2, "%s", text);
  cr_expect(strstr(text, pid) != NULL, "the holder is named: %s", text);
  cr_expect(access(journal, F_OK) == 0 && access(out, F_OK) != 0, "the journal kept, no results written");
  /* Released: the resume runs, and leaves neither journal nor lock file. */
  close(again);
  cr_expect_eq(test_run_nhbench(args, text, sizeof text), 0, "%s", text);
  cr_expect(access(out, F_OK) == 0, "the results are written");
  cr_expect(access(journal, F_OK) != 0 && access(lock, F_OK) != 0, "journal and lock file removed");
  remove(out);
}

/* A run holds the lock from before it computes until it ends: seen by another process while it
 * runs (its own pid in the kernel's lock table). */
Test(one_writer, a_running_run_holds_the_lock, .timeout = 120) {
  char out[256], lock[256], journal[256];
  test_paths(out, lock, journal, sizeof out, "running");
  const pid_t child = test_fork();
  if (child == 0) {
    freopen("/dev/null", "w", stderr);
    execl(NHBENCH_EXE, "nhbench", "run", SPEC, "-j", "1", "--set", "T=200000", "-o", out, (char *)NULL);
    _exit(127);
  }
  long holder = 0;
  for (int i = 0; i < 6000 && holder == 0; i++) {
    nanosleep(&(struct timespec){0, 10000000}, NULL);
    holder = lock_holder(lock);
  }
  cr_expect_eq(holder, (long)child, "the run's pid holds the lock on %s", lock);
  char text[4096];
  snprintf(text, sizeof text, "%ld\n", (long)child);
  /* The run writes its pid just after it takes the lock: wait for the whole line. */
  char stored[64] = "";
  for (int i = 0; i < 6000 && strchr(stored, '\n') == NULL; i++) {
    if (i) nanosleep(&(struct timespec){0, 10000000}, NULL);
    test_read_file(lock, stored, sizeof stored);
  }
  cr_expect_str_eq(stored, text, "the lock file holds the run's pid");
  kill(child, SIGKILL);
  waitpid(child, NULL, 0);
  cr_expect_eq(lock_holder(lock), 0, "the kernel released the killed run's lock");
  remove(out), remove(lock), remove(journal);
}

/* A lock file that no process holds (left by a killed run, or with any text in it) is taken over. */
Test(one_writer, a_stale_lock_file_is_taken_over, .timeout = 120) {
  char out[256], lock[256], journal[256], args[1024], text[8192];
  test_paths(out, lock, journal, sizeof out, "stale");
  test_write_file(lock, "not a pid\n");
  snprintf(args, sizeof args, "run " SPEC " -o %s", out);
  cr_expect_eq(test_run_nhbench(args, text, sizeof text), 0, "%s", text);
  cr_expect(access(out, F_OK) == 0 && access(lock, F_OK) != 0, "results written, lock file removed");
  /* A link at the lock file's name is not followed: refused (exit 2), its target untouched. */
  char victim[300];
  snprintf(victim, sizeof victim, "%s.victim", out);
  test_write_file(victim, "victim\n");
  cr_assert_eq(symlink(victim, lock), 0);
  cr_expect_eq(test_run_nhbench(args, text, sizeof text), 2, "%s", text);
  cr_expect(strstr(text, lock) != NULL, "the lock file is named: %s", text);
  char stored[64] = "";
  test_read_file(victim, stored, sizeof stored);
  cr_expect_str_eq(stored, "victim\n");
  remove(out), remove(lock), remove(victim), remove(journal);
}
