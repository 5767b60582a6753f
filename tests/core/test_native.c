/* core/native.c: C text compiled once into a cached shared object and loaded. Each test has its own
 * cache directory (NHBENCH_CACHE_DIR, a fresh mkdtemp directory removed afterwards), since the tests
 * run in parallel processes; after each load, success or failure, the directory must hold nothing
 * but finished objects. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv, truncate */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/native.h"
#include "tests/compile_cache.h"
#include "tests/helpers.h"

#define SQUARE_PLUS_ONE "double f(double x) { return x * x + 1; }\n"

TEST_CACHE_SUITE(native, "/tmp/nh-native");

/* 1 if name is a finished object, nhbench-<16 lower-case hex digits>.so. */
static int is_object(const char *name) {
  if (strlen(name) != 27 || strncmp(name, "nhbench-", 8) || strcmp(name + 24, ".so")) return 0;
  for (int i = 8; i < 24; i++)
    if (!strchr("0123456789abcdef", name[i])) return 0;
  return 1;
}

/* How many finished objects dir holds; fails the test on anything else (a temporary left over). */
static int objects_only(const char *dir) {
  DIR *d = opendir(dir);
  cr_assert(d, "opendir %s: %s", dir, strerror(errno));
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) {
    if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
    cr_expect(is_object(e->d_name), "left in the cache directory: %s", e->d_name);
    n += is_object(e->d_name);
  }
  closedir(d);
  return n;
}

/* Loads source (asserting success and whether it compiled) and returns f(x) through the object. */
static double call_f(const char *source, double x, int expect_compiled) {
  char err[1024];
  int compiled = -1;
  nh_native *lib = nh_native_load(source, &compiled, err, sizeof err);
  cr_assert(lib, "load: %s", err);
  cr_expect_eq(compiled, expect_compiled, "compiled = %d", compiled);
  double (*f)(double) = (double (*)(double))nh_native_symbol(lib, "f");
  cr_assert(f, "no symbol f");
  const double y = f(x);
  nh_native_close(lib);
  return y;
}

static off_t file_size(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 ? st.st_size : -1;
}

Test(native, loads_and_calls) {
  char err[1024];
  int compiled = -1;
  nh_native *lib = nh_native_load(SQUARE_PLUS_ONE, &compiled, err, sizeof err);
  cr_assert(lib, "load: %s", err);
  cr_expect_eq(compiled, 1);
  double (*f)(double) = (double (*)(double))nh_native_symbol(lib, "f");
  cr_assert(f);
  cr_expect_eq(f(3), 10.0);
  cr_expect_eq(f(-0.5), 1.25);
  cr_expect_null(nh_native_symbol(lib, "g"), "no such symbol");
  const char *path = nh_native_path(lib);
  cr_expect(strncmp(path, cache, strlen(cache)) == 0 && path[strlen(cache)] == '/', "path %s", path);
  cr_expect(is_object(strrchr(path, '/') + 1), "path %s", path);
  cr_expect_gt(file_size(path), 0);
  nh_native_close(lib);
  nh_native_close(NULL);
  cr_expect_eq(objects_only(cache), 1);
}

/* The same source is a cache hit, whether its object is still loaded or not; another compiles. */
Test(native, cache_hit_and_new_source) {
  cr_expect_eq(call_f(SQUARE_PLUS_ONE, 2, 1), 5.0);
  cr_expect_eq(call_f(SQUARE_PLUS_ONE, 2, 0), 5.0);
  char err[1024];
  int compiled = -1;
  nh_native *a = nh_native_load(SQUARE_PLUS_ONE, &compiled, err, sizeof err);
  nh_native *b = nh_native_load(SQUARE_PLUS_ONE, &compiled, err, sizeof err);
  cr_assert(a && b, "%s", err);
  cr_expect_eq(compiled, 0);
  cr_expect_str_eq(nh_native_path(a), nh_native_path(b));
  nh_native_close(a);
  nh_native_close(b);
  cr_expect_eq(call_f("double f(double x) { return 2 * x; }\n", 2, 1), 4.0);
  /* One byte of difference, a comment, is another source. */
  cr_expect_eq(call_f("/* */" SQUARE_PLUS_ONE, 2, 1), 5.0);
  cr_expect_eq(objects_only(cache), 3);
}

/* A syntax error: NULL, and the compiler's own message, naming source.c and the line, not the
 * private directory it was compiled in; at most 5 lines of it. */
Test(native, syntax_error_names_the_line) {
  char err[1024];
  int compiled = -1;
  nh_native *lib = nh_native_load("double f(double x) {\n  return x *;\n}\n", &compiled, err, sizeof err);
  cr_assert_null(lib);
  cr_expect(strstr(err, "failed (exit status"), "%s", err);
  cr_expect(strstr(err, "source.c:2:"), "%s", err);
  cr_expect(strstr(err, "error"), "%s", err);
  cr_expect_null(strstr(err, "nhbench-tmp-"), "%s", err);
  cr_expect_eq(compiled, 0);
  cr_expect_eq(objects_only(cache), 0);
  char many[2048] = "";
  for (int i = 0; i < 20; i++) strcat(many, "int x = ;\n");
  cr_assert_null(nh_native_load(many, NULL, err, sizeof err));
  int lines = 0;
  for (const char *s = err; (s = strchr(s, '\n')); s++) lines++;
  cr_expect(lines >= 1 && lines <= 5, "%d lines after the first: %s", lines, err);
  cr_expect_eq(objects_only(cache), 0);
}

/* NHBENCH_CC=none or empty: no compiler, said so, and the cache directory not touched. */
Test(native, no_compiler) {
  cr_expect_not_null(nh_native_compiler(), "the build's compiler");
  const char *none[] = {"none", ""};
  for (int i = 0; i < 2; i++) {
    setenv("NHBENCH_CC", none[i], 1);
    cr_expect_null(nh_native_compiler());
    char err[1024] = "x";
    int compiled = -1;
    cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, &compiled, err, sizeof err));
    cr_expect(strncmp(err, "no C compiler", 13) == 0, "%s", err);
    cr_expect_eq(compiled, 0);
  }
  cr_expect_eq(objects_only(cache), 0);
}

Test(native, compiler_not_found) {
  setenv("NHBENCH_CC", "/nonexistent/bin/cc", 1);
  char err[1024];
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  cr_expect(strstr(err, "/nonexistent/bin/cc") && strstr(err, "NHBENCH_CC") && strstr(err, "No such file"), "%s", err);
  cr_expect_eq(objects_only(cache), 0);
  setenv("NHBENCH_CC", "nhbench-no-such-compiler", 1); /* a name looked up in PATH */
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  cr_expect(strstr(err, "nhbench-no-such-compiler") && strstr(err, "No such file"), "%s", err);
  cr_expect_eq(objects_only(cache), 0);
  char file[256];
  snprintf(file, sizeof file, "%s/not-executable", cache);
  test_write_file(file, "#!/bin/sh\n");
  chmod(file, 0600);
  setenv("NHBENCH_CC", file, 1);
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  cr_expect(strstr(err, file) && strstr(err, "Permission denied"), "%s", err);
  unlink(file);
  cr_expect_eq(objects_only(cache), 0);
}

/* NHBENCH_CC is run with exactly the documented arguments (a script that logs them and runs the
 * build's compiler); another compiler is another object, and a failing one is reported. */
Test(native, nhbench_cc_and_its_arguments) {
  const char *real = nh_native_compiler();
  cr_assert(real);
  char script[256], log[256], text[2048];
  snprintf(script, sizeof script, "%s/cc.sh", cache);
  snprintf(log, sizeof log, "%s/args.txt", cache);
  snprintf(text, sizeof text, "#!/bin/sh\nprintf '%%s\\n' \"$@\" > '%s'\nexec '%s' \"$@\"\n", log, real);
  test_write_file(script, text);
  chmod(script, 0700);
  cr_expect_eq(call_f(SQUARE_PLUS_ONE, 1, 1), 2.0, "the build's compiler");
  setenv("NHBENCH_CC", script, 1);
  cr_expect_eq(call_f(SQUARE_PLUS_ONE, 1, 1), 2.0, "another compiler: another object");
  cr_expect_eq(call_f(SQUARE_PLUS_ONE, 1, 0), 2.0);
  char args[2048];
  test_read_file(log, args, sizeof args);
  const char *want[] = {"-std=c11", "-O2", "-ffp-contract=off", "-fPIC", "-shared", "-o"};
  const char *at = args;
  for (int i = 0; i < 6; i++) {
    char line[64];
    snprintf(line, sizeof line, "%s\n", want[i]);
    cr_expect(strncmp(at, line, strlen(line)) == 0, "argument %d: %s", i + 1, args);
    at += strlen(line);
  }
  cr_expect(strstr(at, "/object.so\n") && strstr(at, "/source.c\n-lm\n"), "%s", args);
  cr_expect_null(strstr(args, "fast-math"));
  snprintf(text, sizeof text, "#!/bin/sh\necho 'first line'\necho 'second line' >&2\nexit 3\n");
  test_write_file(script, text);
  char err[1024];
  cr_expect_null(nh_native_load("int unused;\n", NULL, err, sizeof err));
  cr_expect(strstr(err, "exit status 3") && strstr(err, "first line\nsecond line"), "%s", err);
  unlink(script);
  unlink(log);
  cr_expect_eq(objects_only(cache), 2);
}

/* A cached object that does not load (cut short, or not an object at all) is compiled again and
 * replaced, not trusted for ever. */
Test(native, corrupt_cache_entry_is_recompiled) {
  char err[1024], path[4096];
  nh_native *lib = nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err);
  cr_assert(lib, "%s", err);
  snprintf(path, sizeof path, "%s", nh_native_path(lib));
  nh_native_close(lib);
  const off_t size = file_size(path);
  cr_assert_eq(truncate(path, 100), 0);
  cr_expect_eq(call_f(SQUARE_PLUS_ONE, 3, 1), 10.0);
  cr_expect_eq(file_size(path), size, "replaced");
  cr_expect_eq(call_f(SQUARE_PLUS_ONE, 3, 0), 10.0);
  test_write_file(path, "not an object\n");
  cr_expect_eq(call_f(SQUARE_PLUS_ONE, 3, 1), 10.0);
  cr_expect_eq(file_size(path), size, "replaced");
  cr_expect_eq(objects_only(cache), 1);
}

/* A cache directory that cannot be made, or one that others could write code into: NULL, with the
 * path and the reason. */
Test(native, unusable_cache_dir) {
  char file[256], dir[512], err[1024];
  snprintf(file, sizeof file, "%s/file", cache);
  test_write_file(file, "x");
  snprintf(dir, sizeof dir, "%s/sub/deeper", file);
  setenv("NHBENCH_CACHE_DIR", dir, 1);
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  cr_expect(strstr(err, dir) && strstr(err, "Not a directory"), "%s", err);
  setenv("NHBENCH_CACHE_DIR", file, 1);
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  cr_expect(strstr(err, file) && strstr(err, "not a directory"), "%s", err);
  snprintf(dir, sizeof dir, "%s/shared", cache);
  cr_assert_eq(mkdir(dir, 0700), 0);
  chmod(dir, 0777); /* not through mkdir's mode, which the umask cuts */
  setenv("NHBENCH_CACHE_DIR", dir, 1);
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  cr_expect(strstr(err, dir) && strstr(err, "writable by others"), "%s", err);
  chmod(dir, 0755);
  cr_expect_eq(call_f(SQUARE_PLUS_ONE, 0, 1), 1.0, "only its owner may write it: usable");
  if (geteuid() != 0) { /* root writes anywhere */
    snprintf(dir, sizeof dir, "%s/readonly", cache);
    cr_assert_eq(mkdir(dir, 0500), 0);
    setenv("NHBENCH_CACHE_DIR", dir, 1);
    cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
    cr_expect(strstr(err, dir) && strstr(err, "Permission denied"), "%s", err);
    strcat(dir, "/sub");
    setenv("NHBENCH_CACHE_DIR", dir, 1);
    cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
    cr_expect(strstr(err, dir) && strstr(err, "Permission denied"), "%s", err);
  }
}

/* A missing cache directory is made, parents and all, with mode 0700. */
Test(native, cache_dir_is_made_private) {
  char dir[512];
  snprintf(dir, sizeof dir, "%s/a/b/c", cache);
  setenv("NHBENCH_CACHE_DIR", dir, 1);
  cr_expect_eq(call_f(SQUARE_PLUS_ONE, 1, 1), 2.0);
  struct stat st;
  cr_assert_eq(stat(dir, &st), 0);
  cr_expect_eq(st.st_mode & 0777, 0700);
  cr_expect_eq(objects_only(dir), 1);
}

/* Where the cache is: the rules of core/native.h, in order. */
Test(native, cache_dir_rules) {
  char buf[4096];
  cr_expect_str_eq(nh_native_cache_dir(buf, sizeof buf), cache);
  unsetenv("NHBENCH_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  setenv("HOME", "/home/someone", 1);
  cr_expect_str_eq(nh_native_cache_dir(buf, sizeof buf), "/x/cache/nhbench");
  setenv("XDG_CACHE_HOME", "relative", 1);
  cr_expect_str_eq(nh_native_cache_dir(buf, sizeof buf), "/home/someone/.cache/nhbench");
  unsetenv("XDG_CACHE_HOME");
  cr_expect_str_eq(nh_native_cache_dir(buf, sizeof buf), "/home/someone/.cache/nhbench");
  unsetenv("HOME");
  char want[64];
  snprintf(want, sizeof want, "/tmp/nhbench-%lu", (unsigned long)geteuid());
  cr_expect_str_eq(nh_native_cache_dir(buf, sizeof buf), want);
  cr_expect_null(nh_native_cache_dir(buf, 8), "does not fit");
  cr_expect_null(nh_native_cache_dir(NULL, 0));
}

/* Shell metacharacters in the source and in the cache directory's path are only text: the source
 * compiles as C, and no command in them runs (their marker files never appear). */
Test(native, no_shell_injection) {
  char source[2048], dir[1024], marker[7][128], err[1024];
  for (int i = 0; i < 7; i++) snprintf(marker[i], sizeof marker[i], "%s/marker%d", cache, i);
  snprintf(source, sizeof source,
           "/* $(touch %s); `touch %s`; touch %s | touch %s && touch %s */\n"
           "const char *s = \"$(touch %s)\";\n" SQUARE_PLUS_ONE,
           marker[0], marker[1], marker[2], marker[3], marker[4], marker[5]);
  snprintf(dir, sizeof dir, "%s/a b;$(touch %s)`touch %s` '\"&|<>*?\\", cache, marker[6], marker[6]);
  setenv("NHBENCH_CACHE_DIR", dir, 1);
  nh_native *lib = nh_native_load(source, NULL, err, sizeof err);
  cr_assert(lib, "%s", err);
  double (*f)(double) = (double (*)(double))nh_native_symbol(lib, "f");
  const char **s = nh_native_symbol(lib, "s");
  cr_assert(f && s);
  cr_expect_eq(f(2), 5.0);
  cr_expect(strncmp(*s, "$(touch ", 8) == 0, "%s", *s);
  nh_native_close(lib);
  for (int i = 0; i < 7; i++) cr_expect_neq(access(marker[i], F_OK), 0, "%s exists: a command ran", marker[i]);
  cr_expect_eq(objects_only(dir), 1);
  /* A failing compilation with them too. */
  strcat(source, "syntax error here $(touch x)\n");
  cr_expect_null(nh_native_load(source, NULL, err, sizeof err));
  for (int i = 0; i < 7; i++) cr_expect_neq(access(marker[i], F_OK), 0, "%s exists: a command ran", marker[i]);
  cr_expect_eq(objects_only(dir), 1);
}

/* Out of memory (tests/heap_guard.c fails the allocation): NULL with a message, nothing left. */
Test(native, allocation_failure) {
  char err[1024];
  const long live = test_live_blocks();
  test_fail_allocation = 1;
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  test_fail_allocation = 0;
  cr_expect(strstr(err, "out of memory"), "%s", err);
  cr_expect_eq(objects_only(cache), 0);
  nh_native *lib = nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err);
  cr_assert(lib, "%s", err);
  nh_native_close(lib);
  if (live >= 0) cr_expect_eq(test_live_blocks(), live, "a block not freed");
}

/* Processes (MPI ranks) loading the same new source at the same moment all succeed, and one
 * complete object is left. They start together when the parent closes the pipe they wait on. */
Test(native, concurrent_processes) {
  enum { N = 6 };
  int go[2];
  cr_assert_eq(pipe(go), 0);
  pid_t pid[N];
  for (int i = 0; i < N; i++) {
    pid[i] = test_fork();
    cr_assert_geq(pid[i], 0);
    if (pid[i] == 0) {
      char c, err[1024];
      close(go[1]);
      (void)!read(go[0], &c, 1);
      nh_native *lib = nh_native_load("double f(double x) { return x + 41; }\n", NULL, err, sizeof err);
      double (*f)(double) = lib ? (double (*)(double))nh_native_symbol(lib, "f") : NULL;
      if (!f) fprintf(stderr, "child: %s\n", err);
      _exit(f && f(1) == 42.0 ? 0 : 1);
    }
  }
  close(go[0]);
  close(go[1]);
  for (int i = 0; i < N; i++) {
    int status = -1;
    cr_assert_eq(waitpid(pid[i], &status, 0), pid[i]);
    cr_expect(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child %d: status %d", i, status);
  }
  cr_expect_eq(objects_only(cache), 1);
}

static pthread_barrier_t barrier;

static void *load_in_thread(void *arg) {
  char err[1024];
  pthread_barrier_wait(&barrier);
  nh_native *lib = nh_native_load("double f(double x) { return x - 1; }\n", NULL, err, sizeof err);
  double (*f)(double) = lib ? (double (*)(double))nh_native_symbol(lib, "f") : NULL;
  *(double *)arg = f ? f(43) : -1;
  nh_native_close(lib);
  return NULL;
}

Test(native, concurrent_threads) {
  enum { N = 4 };
  pthread_t t[N];
  double y[N];
  cr_assert_eq(pthread_barrier_init(&barrier, NULL, N), 0);
  for (int i = 0; i < N; i++) cr_assert_eq(pthread_create(&t[i], NULL, load_in_thread, &y[i]), 0);
  for (int i = 0; i < N; i++) pthread_join(t[i], NULL);
  pthread_barrier_destroy(&barrier);
  for (int i = 0; i < N; i++) cr_expect_eq(y[i], 42.0, "thread %d", i);
  cr_expect_eq(objects_only(cache), 1);
}
