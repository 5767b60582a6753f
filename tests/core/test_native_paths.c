/* core/native.c: the paths tests/core/test_native.c leaves out, the failures above all: a compiler
 * killed or silent, a compiled object that does not load, a cached object that cannot be replaced,
 * cache paths too long to hold the object or the compilation's files, the compiler looked up in PATH
 * (an empty PATH, an empty entry, a file there that cannot be run), the cache directory's fallbacks
 * for an empty NHBENCH_CACHE_DIR and HOME, and calls without a message buffer. Each test has its own
 * cache directory (NHBENCH_CACHE_DIR, a fresh mkdtemp directory removed afterwards), and gives back
 * every environment variable it changes. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "core/native.h"
#include "core/text.h"
#include "tests/helpers.h"

#define SQUARE_PLUS_ONE "double f(double x) { return x * x + 1; }\n"

static char cache[64]; /* this test's NHBENCH_CACHE_DIR */

/* The variables the tests change, with their values before the test (NULL: unset). */
static const char *const saved_names[] = {"NHBENCH_CACHE_DIR", "NHBENCH_CC", "XDG_CACHE_HOME", "HOME", "PATH"};
enum { SAVED = sizeof saved_names / sizeof *saved_names };
static char *saved_values[SAVED];

static void setup(void) {
  for (int i = 0; i < SAVED; i++) {
    const char *v = getenv(saved_names[i]);
    saved_values[i] = v ? strdup(v) : NULL;
  }
  snprintf(cache, sizeof cache, "/tmp/nh-native-paths-XXXXXX");
  cr_assert(mkdtemp(cache), "mkdtemp: %s", strerror(errno));
  setenv("NHBENCH_CACHE_DIR", cache, 1);
  unsetenv("NHBENCH_CC");
}

static void teardown(void) {
  test_remove_tree(cache);
  for (int i = 0; i < SAVED; i++) {
    if (saved_values[i])
      setenv(saved_names[i], saved_values[i], 1);
    else
      unsetenv(saved_names[i]);
    free(saved_values[i]);
  }
}

TestSuite(native_paths, .init = setup, .fini = teardown);

/* How many entries dir holds (but . and ..): after a failure, no temporary directory may be left. */
static int entries(const char *dir) {
  DIR *d = opendir(dir);
  cr_assert(d, "opendir %s: %s", dir, strerror(errno));
  int n = 0;
  for (struct dirent *e; (e = readdir(d));) n += strcmp(e->d_name, ".") && strcmp(e->d_name, "..");
  closedir(d);
  return n;
}

/* An executable script at cache/name with the text given. */
static void write_script(char *path, size_t len, const char *name, const char *text) {
  snprintf(path, len, "%s/%s", cache, name);
  test_write_file(path, text);
  cr_assert_eq(chmod(path, 0700), 0, "chmod %s: %s", path, strerror(errno));
}

/* A compiler killed by a signal: said so, with the signal's number; nothing left in the cache. */
Test(native_paths, compiler_killed_by_a_signal) {
  char script[256], err[1024];
  write_script(script, sizeof script, "killed.sh", "#!/bin/sh\nkill -9 $$\n");
  setenv("NHBENCH_CC", script, 1);
  int compiled = -1;
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, &compiled, err, sizeof err));
  cr_expect(strstr(err, script) && strstr(err, "killed by signal 9"), "%s", err);
  cr_expect_eq(compiled, 0);
  unlink(script);
  cr_expect_eq(entries(cache), 0, "a temporary left in the cache directory");
}

/* Exit status 127 and no output (what a shell says of a command it cannot find): the message says
 * the compiler may not have been found; another status without output has no such remark. */
Test(native_paths, compiler_silent_exit_127) {
  char script[256], err[1024];
  write_script(script, sizeof script, "silent.sh", "#!/bin/sh\nexit 127\n");
  setenv("NHBENCH_CC", script, 1);
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  cr_expect(strstr(err, "exit status 127") && strstr(err, "without output: it may not have been found"), "%s", err);
  write_script(script, sizeof script, "silent.sh", "#!/bin/sh\nexit 4\n");
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  cr_expect(strstr(err, "exit status 4"), "%s", err);
  cr_expect_null(strstr(err, "without output"), "%s", err);
  cr_expect_null(strchr(err, '\n'), "no output, no lines: %s", err);
  unlink(script);
  cr_expect_eq(entries(cache), 0);
}

/* A source that compiles but does not load (RTLD_NOW and a symbol defined nowhere): NULL with
 * dlopen's reason; the object it renamed into place stays, and the next call, finding it
 * unloadable, compiles again and fails the same way. */
Test(native_paths, compiled_object_does_not_load) {
  const char *source = "double nhbench_defined_nowhere(double);\n"
                       "double f(double x) { return nhbench_defined_nowhere(x); }\n";
  char err[1024];
  int compiled = -1;
  cr_expect_null(nh_native_load(source, &compiled, err, sizeof err));
  cr_expect(strstr(err, "the compiled object does not load") && strstr(err, "nhbench_defined_nowhere"), "%s", err);
  cr_expect_eq(compiled, 0, "no library: not reported compiled");
  err[0] = '\0';
  cr_expect_null(nh_native_load(source, NULL, err, sizeof err));
  cr_expect(strstr(err, "does not load"), "second call: %s", err);
  cr_expect_eq(entries(cache), 1, "the object only");
}

/* The cached object's name taken by a directory that cannot be replaced: the object does not load,
 * and the compiled one cannot be renamed onto it: NULL with the path and the reason. */
Test(native_paths, cached_object_cannot_be_replaced) {
  char err[1024], path[NH_TEXT_PATH], inside[NH_TEXT_PATH + 8];
  nh_native *lib = nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err);
  cr_assert(lib, "%s", err);
  snprintf(path, sizeof path, "%s", nh_native_path(lib));
  nh_native_close(lib);
  cr_assert_eq(unlink(path), 0);
  cr_assert_eq(mkdir(path, 0700), 0);
  snprintf(inside, sizeof inside, "%s/x", path);
  test_write_file(inside, "x"); /* a directory that is not empty: rename cannot replace it */
  int compiled = -1;
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, &compiled, err, sizeof err));
  cr_expect(strstr(err, "cannot move the compiled object to") && strstr(err, path), "%s", err);
  cr_expect_eq(compiled, 0);
  cr_expect_eq(entries(cache), 1, "the directory only, no temporary");
  struct stat st;
  cr_expect(stat(path, &st) == 0 && S_ISDIR(st.st_mode), "the directory was replaced");
}

/* A directory of the given length under the test's cache (made, with components of 200 bytes). */
static void long_dir(char *dir, size_t len, size_t want) {
  snprintf(dir, len, "%s", cache);
  while (strlen(dir) < want) {
    size_t add = want - strlen(dir) - 1; /* the '/' */
    if (add > 200) add = 200;
    if (add == 0) add = 1, dir[strlen(dir) - 1] = '\0'; /* one short: lengthen the last component */
    const size_t at = strlen(dir);
    dir[at] = '/';
    memset(dir + at + 1, 'd', add);
    dir[at + 1 + add] = '\0';
    cr_assert(mkdir(dir, 0700) == 0 || errno == EEXIST, "mkdir (%zu bytes): %s", strlen(dir), strerror(errno));
  }
  cr_assert_eq(strlen(dir), want);
}

/* Cache paths that hold the directory but not what goes in it: the object's name (nhbench-HASH.so,
 * 28 bytes with its '/'), or the compilation's files in the private directory (20 bytes more, then
 * /object.so: 10): each refused with "path too long", nothing left behind; a NHBENCH_CACHE_DIR
 * longer than any path is refused before anything is made. */
Test(native_paths, cache_paths_too_long) {
  char dir[NH_TEXT_PATH], err[1024];
  long_dir(dir, sizeof dir, NH_TEXT_PATH - 20); /* the object's path does not fit */
  setenv("NHBENCH_CACHE_DIR", dir, 1);
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  cr_expect(!strncmp(err, "cache directory path too long: ", 31) && !strncmp(err + 31, dir, strlen(cache)), "%.80s",
            err);
  cr_expect_eq(entries(dir), 0);
  long_dir(dir, sizeof dir, NH_TEXT_PATH - 30); /* the object fits; w->dir/object.so does not */
  setenv("NHBENCH_CACHE_DIR", dir, 1);
  err[0] = '\0';
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  cr_expect(!strncmp(err, "cache directory path too long: ", 31) && !strncmp(err + 31, dir, strlen(cache)), "%.80s",
            err);
  cr_expect_eq(entries(dir), 0, "the private directory was not removed");
  char *huge = malloc(NH_TEXT_PATH + 16);
  cr_assert(huge);
  snprintf(huge, NH_TEXT_PATH + 16, "%s/", cache);
  memset(huge + strlen(huge), 'h', NH_TEXT_PATH + 15 - strlen(huge));
  huge[NH_TEXT_PATH + 15] = '\0';
  setenv("NHBENCH_CACHE_DIR", huge, 1);
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  cr_expect_str_eq(err, "cache directory path too long");
  free(huge);
}

/* The compiler named without a '/': looked up in PATH, in the default /bin:/usr/bin where PATH is
 * empty, in the working directory for an empty entry; a file found there that cannot be run is
 * "Permission denied", as execvp says. */
Test(native_paths, compiler_looked_up_in_path) {
  const char *real = nh_native_compiler();
  cr_assert(real && real[0] == '/', "the build's compiler as a path: %s", real ? real : "(none)");
  char script[256], text[8192], err[1024], bin[128];
  const char *path = getenv("PATH"); /* the compiler's own tools are found in the test's PATH */
  snprintf(text, sizeof text, "#!/bin/sh\nPATH='%s'\nexport PATH\nexec '%s' \"$@\"\n",
           path && path[0] ? path : "/usr/bin:/bin", real);
  write_script(script, sizeof script, "nhbench-test-cc", text);
  /* by name, in a directory of PATH (after one that does not exist) */
  snprintf(bin, sizeof bin, "/nonexistent-nhbench:%s", cache);
  setenv("PATH", bin, 1);
  setenv("NHBENCH_CC", "nhbench-test-cc", 1);
  int compiled = -1;
  nh_native *lib = nh_native_load(SQUARE_PLUS_ONE, &compiled, err, sizeof err);
  cr_assert(lib, "%s", err);
  cr_expect_eq(compiled, 1);
  double (*f)(double) = (double (*)(double))nh_native_symbol(lib, "f");
  cr_assert(f);
  cr_expect_eq(f(2), 5.0);
  nh_native_close(lib);
  /* an empty entry: the working directory */
  char cwd[NH_TEXT_PATH];
  cr_assert(getcwd(cwd, sizeof cwd));
  cr_assert_eq(chdir(cache), 0);
  setenv("PATH", "/nonexistent-nhbench:", 1);
  lib = nh_native_load("double f(double x) { return 3 * x; }\n", &compiled, err, sizeof err);
  cr_expect(lib, "an empty PATH entry: %s", err);
  cr_expect_eq(compiled, 1);
  nh_native_close(lib);
  cr_assert_eq(chdir(cwd), 0);
  /* there but not executable */
  chmod(script, 0600);
  setenv("PATH", cache, 1);
  cr_expect_null(nh_native_load("double f(double x) { return 4 * x; }\n", NULL, err, sizeof err));
  cr_expect(strstr(err, "nhbench-test-cc") && strstr(err, "NHBENCH_CC") && strstr(err, "Permission denied"), "%s", err);
  /* PATH empty: /bin:/usr/bin, where sh is (run with the compiler's arguments, it fails) */
  setenv("PATH", "", 1);
  setenv("NHBENCH_CC", "sh", 1);
  cr_expect_null(nh_native_load("double f(double x) { return 5 * x; }\n", NULL, err, sizeof err));
  cr_expect(strstr(err, "the C compiler sh failed (exit status"), "sh found in /bin:/usr/bin and run: %s", err);
  /* a name too long for any path: not found */
  char name[NH_TEXT_PATH + 8];
  memset(name, 'c', sizeof name - 1);
  name[sizeof name - 1] = '\0';
  setenv("NHBENCH_CC", name, 1);
  setenv("PATH", cache, 1);
  char *big = malloc(3 * NH_TEXT_PATH); /* the message holds the name */
  cr_assert(big);
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, big, 3 * NH_TEXT_PATH));
  cr_expect(strstr(big, "No such file"), "%s", big + strlen(big) - (strlen(big) > 60 ? 60 : strlen(big)));
  /* and as a path too long: ENAMETOOLONG */
  name[0] = '/';
  setenv("NHBENCH_CC", name, 1);
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, big, 3 * NH_TEXT_PATH));
  cr_expect(strstr(big, "File name too long"), "%s", big + strlen(big) - (strlen(big) > 60 ? 60 : strlen(big)));
  free(big);
  unlink(script);
}

/* The cache directory's rules for empty values: an empty NHBENCH_CACHE_DIR or HOME is as unset. */
Test(native_paths, cache_dir_empty_values) {
  char buf[NH_TEXT_PATH], want[64];
  setenv("NHBENCH_CACHE_DIR", "", 1);
  setenv("XDG_CACHE_HOME", "/x/cache", 1);
  cr_expect_str_eq(nh_native_cache_dir(buf, sizeof buf), "/x/cache/nhbench", "an empty NHBENCH_CACHE_DIR");
  setenv("XDG_CACHE_HOME", "", 1);
  setenv("HOME", "/home/someone", 1);
  cr_expect_str_eq(nh_native_cache_dir(buf, sizeof buf), "/home/someone/.cache/nhbench", "an empty XDG_CACHE_HOME");
  setenv("HOME", "", 1);
  snprintf(want, sizeof want, "/tmp/nhbench-%lu", (unsigned long)geteuid());
  cr_expect_str_eq(nh_native_cache_dir(buf, sizeof buf), want, "an empty HOME");
  cr_expect_null(nh_native_cache_dir(buf, 0));
  cr_expect_null(nh_native_cache_dir(buf, strlen(want)), "one byte short");
  cr_expect_str_eq(nh_native_cache_dir(buf, strlen(want) + 1), want, "just fits");
}

/* A cache directory this user does not own, or that others may write (/tmp: root's, mode 1777):
 * refused, whoever runs the test, and nothing written into it. */
Test(native_paths, shared_tmp_refused) {
  char err[1024];
  setenv("NHBENCH_CACHE_DIR", "/tmp", 1);
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  cr_expect(strstr(err, "the cache directory /tmp is") && strstr(err, "refused"), "%s", err);
  cr_expect(strstr(err, geteuid() == 0 ? "writable by others" : "not owned by this user"), "%s", err);
}

/* No source, the messages for NHBENCH_CC none or empty, and the accessors on NULL. */
Test(native_paths, no_source_and_null_arguments) {
  char err[1024] = "x";
  int compiled = -1;
  cr_expect_null(nh_native_load(NULL, &compiled, err, sizeof err));
  cr_expect_str_eq(err, "no source");
  cr_expect_eq(compiled, 0);
  cr_expect_eq(entries(cache), 0);
  setenv("NHBENCH_CC", "none", 1);
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  cr_expect_str_eq(err, "no C compiler: NHBENCH_CC is 'none'");
  setenv("NHBENCH_CC", "", 1);
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err));
  cr_expect_str_eq(err, "no C compiler: NHBENCH_CC is empty");
  setenv("NHBENCH_CC", "some-cc", 1);
  cr_expect_str_eq(nh_native_compiler(), "some-cc", "a name is taken as given");
  cr_expect_null(nh_native_symbol(NULL, "f"));
  cr_expect_null(nh_native_path(NULL));
  unsetenv("NHBENCH_CC");
  nh_native *lib = nh_native_load(SQUARE_PLUS_ONE, NULL, err, sizeof err);
  cr_assert(lib, "%s", err);
  cr_expect_null(nh_native_symbol(lib, NULL));
  nh_native_close(lib);
}

/* Failures without a message buffer (err NULL or errlen 0): NULL, and err untouched. */
Test(native_paths, failures_without_a_message_buffer) {
  char err[16] = "untouched";
  cr_expect_null(nh_native_load(NULL, NULL, NULL, 0));
  cr_expect_null(nh_native_load("double f(double x) { return x *; }\n", NULL, NULL, 0), "a syntax error");
  cr_expect_null(nh_native_load("double f(double x) { return x *; }\n", NULL, err, 0));
  cr_expect_str_eq(err, "untouched");
  char script[256];
  write_script(script, sizeof script, "silent.sh", "#!/bin/sh\nexit 127\n");
  setenv("NHBENCH_CC", script, 1);
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, NULL, 0), "127 without output");
  setenv("NHBENCH_CC", "none", 1);
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, NULL, NULL, 0));
  unlink(script);
  cr_expect_eq(entries(cache), 0);
}

/* A cache directory that passes the checks (this process's own, mode 0555) but where no private
 * directory can be made, whoever runs the test, root too: /proc/self. NULL with the reason. */
Test(native_paths, no_private_directory_in_the_cache) {
  char err[1024];
  setenv("NHBENCH_CACHE_DIR", "/proc/self", 1);
  int compiled = -1;
  cr_expect_null(nh_native_load(SQUARE_PLUS_ONE, &compiled, err, sizeof err));
  cr_expect(strstr(err, "cannot create a temporary directory in the cache directory /proc/self: "), "%s", err);
  cr_expect_eq(compiled, 0);
}
