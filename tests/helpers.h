/* Helpers shared by the Criterion test files: each fails the calling test with the library's own
 * message when set-up goes wrong. */
#ifndef NH_TEST_HELPERS_H
#define NH_TEST_HELPERS_H

#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <gsl/gsl_rng.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "integrators/integrator.h"
#include "tests/heap_guard.h"

/* Removes path and, if it is a directory, everything under it (a test's temporary directory;
 * write permission given back first, for the tests that take it away). */
static inline void test_remove_tree(const char *path) {
  if (unlink(path) == 0 || errno == ENOENT) return; /* a file, a symbolic link (not followed), or nothing */
  chmod(path, 0700);
  DIR *d = opendir(path);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    const size_t len = strlen(path) + strlen(e->d_name) + 2;
    char *sub = malloc(len);
    if (!sub) continue;
    snprintf(sub, len, "%s/%s", path, e->d_name);
    test_remove_tree(sub);
    free(sub);
  }
  if (d) closedir(d);
  rmdir(path);
}

/* fork() for a test's child process, which is killed when the test process dies: when Criterion
 * kills a test at its timeout, a child still running (a defect that makes a run endless) would
 * otherwise go on for ever, holding the runner's output open so that the suite never ends. */
static inline pid_t test_fork(void) {
  const pid_t parent = getpid(), child = fork();
  if (child == 0) {
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent) _exit(127); /* the parent died before the line above */
  }
  return child;
}

/* A system of the given type with parameters "name=value,..." (NULL or "" for the defaults). */
static inline nh_system test_system_of(const nh_system_type *t, const char *params) {
  nh_system sys;
  char err[256] = "";
  cr_assert(t != NULL, "system type missing from the registry");
  cr_assert(nh_system_init(&sys, t) == 0, "nh_system_init(%s) failed", t->name);
  cr_assert(nh_system_set_params_text(&sys, params, err, sizeof err) == 0, "%s", err);
  return sys;
}

/* The pid of a process that has ended (a child made and reaped): a pid no process has now. */
/* A system type's optional groups for the tests that read their fields: an empty group (every field
 * NULL or 0) where the type has none, so that a registry-wide test asks test_kernels(T)->acceleration
 * without first asking whether T has kernels. */
static const nh_system_forces test_no_forces = {0};
static const nh_time_potential test_no_time_potential = {0};
static const nh_system_kernels test_no_kernels = {0};
static const nh_system_knowledge test_no_knowledge = {0};
static const nh_system_invariants test_no_invariants = {0};
static const nh_system_derived test_no_derived = {0};
static inline const nh_system_forces *test_forces(const nh_system_type *t) {
  return t->forces ? t->forces : &test_no_forces;
}
static inline const nh_time_potential *test_time_potential(const nh_system_type *t) {
  return test_forces(t)->potential ? test_forces(t)->potential : &test_no_time_potential;
}
static inline const nh_system_kernels *test_kernels(const nh_system_type *t) {
  return t->kernels ? t->kernels : &test_no_kernels;
}
static inline const nh_system_knowledge *test_knowledge(const nh_system_type *t) {
  return t->knowledge ? t->knowledge : &test_no_knowledge;
}
static inline const nh_system_invariants *test_invariants(const nh_system_type *t) {
  return test_knowledge(t)->invariants ? test_knowledge(t)->invariants : &test_no_invariants;
}
static inline const nh_system_derived *test_derived(const nh_system_type *t) {
  return test_knowledge(t)->derived ? test_knowledge(t)->derived : &test_no_derived;
}

static inline long test_dead_pid(void) {
  const pid_t child = test_fork();
  if (child == 0) _exit(0);
  cr_assert_gt(child, 0);
  int status;
  cr_assert_eq(waitpid(child, &status, 0), child);
  return (long)child;
}

/* A registered system by name. */
static inline nh_system test_system(const char *name, const char *params) {
  const nh_system_type *t = nh_system_type_find(name);
  cr_assert(t != NULL, "system '%s' is not in the registry", name);
  return test_system_of(t, params);
}

/* The state of a preset (which may also set parameters of sys). */
static inline nh_state test_preset(nh_system *sys, const char *preset) {
  nh_state x;
  char err[256] = "";
  cr_assert(nh_system_apply_preset(sys, preset, &x, err, sizeof err) == 0, "%s", err);
  return x;
}

static inline nh_method *test_method(const char *text) {
  char err[512] = "";
  nh_method *m = nh_method_parse(text, err, sizeof err);
  cr_assert(m != NULL, "nh_method_parse(\"%s\") failed: %s", text, err);
  return m;
}

/* A seeded Mersenne Twister; free with gsl_rng_free. */
/* The `constraint` choice of nh_newmark and dla for equation (14) or (15) of spec/newmark.md §2.4. */
static inline const char *constraint_name(int disc) { return disc == 14 ? "point" : "average"; }

static inline gsl_rng *test_rng(unsigned long seed) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  cr_assert(r != NULL, "gsl_rng_alloc failed");
  gsl_rng_set(r, seed);
  return r;
}

/* Writes text to path (replacing it). */
static inline void test_write_file(const char *path, const char *text) {
  FILE *f = fopen(path, "w");
  cr_assert(f, "cannot write %s", path);
  fputs(text, f);
  fclose(f);
}

/* The text of the file at path into out (truncated to outlen − 1 bytes). */
static inline void test_read_file(const char *path, char *out, size_t outlen) {
  FILE *f = fopen(path, "r");
  cr_assert(f, "cannot read %s", path);
  out[fread(out, 1, outlen - 1, f)] = '\0';
  fclose(f);
}

/* The bytes of the file at path (malloc'd, the caller frees; NULL if it cannot be opened), their
 * count in *len. */
static inline char *test_file_bytes(const char *path, size_t *len) {
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  *len = (size_t)ftell(f);
  rewind(f);
  char *bytes = malloc(*len + 1);
  cr_assert(bytes && fread(bytes, 1, *len, f) == *len, "cannot read %s", path);
  fclose(f);
  return bytes;
}

/* The test process's stderr into a temporary file (test_capture_stderr, which returns it and
 * keeps the real stderr in *saved), then back (test_restore_stderr), what was written to it in
 * buf (truncated to len − 1 bytes): to check the messages of code that runs in the process. */
static inline FILE *test_capture_stderr(int *saved) {
  fflush(stderr);
  FILE *t = tmpfile();
  cr_assert(t, "no temporary file for stderr");
  *saved = dup(2);
  dup2(fileno(t), 2);
  return t;
}

static inline void test_restore_stderr(FILE *t, int saved, char *buf, size_t len) {
  fflush(stderr);
  dup2(saved, 2);
  close(saved);
  rewind(t);
  buf[fread(buf, 1, len - 1, t)] = '\0';
  fclose(t);
}

/* Runs the shell command cmd, what it prints on stdout into out (truncated to outlen − 1 bytes);
 * the exit status (128 + the signal for a child the shell saw killed), or -1 if it did not exit. */
static inline int test_run_command(const char *cmd, char *out, size_t outlen) {
  fflush(NULL);
  FILE *p = popen(cmd, "r");
  cr_assert(p, "cannot run %s", cmd);
  size_t len = fread(out, 1, outlen - 1, p);
  out[len] = '\0';
  int status = pclose(p);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* Runs `nhbench ARGS` (the binary built with the tests), stdout and stderr into out (truncated to
 * outlen − 1 bytes); the exit status, or -1 if it did not exit. */
static inline int test_run_nhbench(const char *args, char *out, size_t outlen) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s %s 2>&1", NHBENCH_EXE, args);
  return test_run_command(cmd, out, outlen);
}

/* `nhbench run tests/data/SPEC -o PATH SET`, PATH a temporary file named by the caller's file
 * (prefix, e.g. "cli-output") and TAG; it must succeed. */
static inline void test_results_file(char *path, size_t len, const char *prefix, const char *tag, const char *spec,
                                     const char *set) {
  char args[1024];
  static char out[1 << 16];
  snprintf(path, len, "/tmp/nhbench-%s-%d-%s.h5", prefix, (int)getpid(), tag);
  snprintf(args, sizeof args, "run %s/tests/data/%s -o %s %s", NHBENCH_SOURCE_DIR, spec, path, set);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
}

/* The HDF5 identifiers open in this process, of every kind our code opens: files, groups, datasets,
 * attributes, and the datatypes, dataspaces and property lists counted by tests/faults/test_hdf5_ids.c's
 * wrappers (a leaked H5Pcreate or H5Screate is no open object of a file: H5Fget_obj_count does not
 * see it, and HDF5 1.10 counts the identifiers of its own types for no one). */
long test_open_hdf5_ids(void);
/* The call of the wrapped HDF5 function NAME (tests/faults/test_hdf5_ids.c: those that make a datatype,
 * a dataspace or a property list) that comes after AFTER more successful ones fails with -1;
 * NULL: none fails. */
void test_fail_hdf5(const char *name, int after);

#define TEST_CSV_MAX_FIELDS 8
/* One RFC 4180 record from *p (fields with quotes, doubled quotes, commas); its field count, or -1
 * at the end of the text. */
static inline int test_csv_record(const char **p, char fields[TEST_CSV_MAX_FIELDS][512]) {
  const char *s = *p;
  if (!*s) return -1;
  int n = 0;
  for (;;) {
    char *f = fields[n < TEST_CSV_MAX_FIELDS ? n : TEST_CSV_MAX_FIELDS - 1];
    size_t k = 0;
    if (*s == '"') {
      for (s++; *s && !(*s == '"' && s[1] != '"'); s++) {
        if (*s == '"') s++;
        if (k < 511) f[k++] = *s;
      }
      if (*s == '"') s++;
    } else {
      while (*s && *s != ',' && *s != '\n')
        if (k < 511) f[k++] = *s++;
        else s++;
    }
    f[k] = '\0';
    n++;
    if (*s == ',') {
      s++;
      continue;
    }
    if (*s == '\n') s++;
    break;
  }
  *p = s;
  return n;
}

#endif
