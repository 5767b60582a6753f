/* Generated C compiled once, cached and loaded (core/native.h). */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, posix_spawn, strtok_r, O_CLOEXEC, dlopen */
#include "core/native.h"

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <spawn.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/utsname.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/hash.h"
#include "core/text.h"

extern char **environ; /* POSIX: declared by the program, not by <unistd.h> */

/* The C compiler CMake found (CMakeLists.txt defines it on nhcore); none where it did not. */
#ifndef NHBENCH_C_COMPILER
#define NHBENCH_C_COMPILER ""
#endif

#define LOG_LINES 5 /* of the compiler's output, in a failure's message */

struct nh_native {
  void *handle; /* dlopen's */
  char path[];  /* the cached object */
};

/* A compilation's private directory and the three files in it. */
struct workdir {
  char dir[NH_TEXT_PATH], src[NH_TEXT_PATH], out[NH_TEXT_PATH], log[NH_TEXT_PATH];
};

/* The printf-style message into err (either may be NULL or 0 long); returns -1 for `return fail(...)`. */
#if defined(__GNUC__)
__attribute__((format(printf, 3, 4)))
#endif
static int
fail(char *err, size_t errlen, const char *fmt, ...);

static int fail(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen) return -1;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
  return -1;
}

/* dir/name into buf; -1 if it does not fit (a cut path would name another file). */
static int join(char *buf, size_t len, const char *dir, const char *name) {
  const int n = snprintf(buf, len, "%s/%s", dir, name);
  return n >= 0 && (size_t)n < len ? 0 : -1;
}

const char *nh_native_compiler(void) {
  const char *cc = getenv("NHBENCH_CC");
  if (cc) return cc[0] && strcmp(cc, "none") != 0 ? cc : NULL;
  return NHBENCH_C_COMPILER[0] ? NHBENCH_C_COMPILER : NULL;
}

const char *nh_native_cache_dir(char *buf, size_t len) {
  if (!buf || !len) return NULL;
  const char *d = getenv("NHBENCH_CACHE_DIR");
  int n;
  if (d && d[0])
    n = snprintf(buf, len, "%s", d);
  else if ((d = getenv("XDG_CACHE_HOME")) && d[0] == '/') /* the XDG rule: a relative one is ignored */
    n = snprintf(buf, len, "%s/nhbench", d);
  else if ((d = getenv("HOME")) && d[0])
    n = snprintf(buf, len, "%s/.cache/nhbench", d);
  else
    n = snprintf(buf, len, "/tmp/nhbench-%lu", (unsigned long)geteuid());
  return n >= 0 && (size_t)n < len ? buf : NULL;
}

/* mkdir -p, each missing component with mode 0700: the cache holds code this process will load. */
static int make_dirs(const char *path, char *err, size_t errlen) {
  char p[NH_TEXT_PATH];
  if (snprintf(p, sizeof p, "%s", path) >= (int)sizeof p) return fail(err, errlen, "cache directory path too long");
  for (char *s = p + 1;; s++) {
    if (*s != '/' && *s != '\0') continue;
    const char c = *s;
    *s = '\0';
    if (mkdir(p, 0700) != 0 && errno != EEXIST) {
      const int e = errno;
      if (c == '\0') return fail(err, errlen, "cannot create the cache directory %s: %s", path, strerror(e));
      return fail(err, errlen, "cannot create the cache directory %s (at %s: %s)", path, p, strerror(e));
    }
    *s = c;
    if (c == '\0') return 0;
  }
}

/* Whoever may write into the cache directory chooses the code nh_native_load runs: only its owner
 * (this user), as a directory of mode 0700 or 0755 has it. */
static int check_private(const char *dir, char *err, size_t errlen) {
  struct stat st;
  if (stat(dir, &st) != 0) return fail(err, errlen, "cannot use the cache directory %s: %s", dir, strerror(errno));
  if (!S_ISDIR(st.st_mode)) return fail(err, errlen, "the cache directory %s is not a directory", dir);
  if (st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)))
    return fail(err, errlen,
                "the cache directory %s is %s (mode %03o): refused, as the objects in it are loaded as code "
                "(NHBENCH_CACHE_DIR names another)",
                dir, st.st_uid != geteuid() ? "not owned by this user" : "writable by others",
                (unsigned)(st.st_mode & 07777));
  return 0;
}

/* The cache directory, made if missing and checked; -1 with a message if it cannot be used. */
static int prepare_cache(char *dir, size_t len, char *err, size_t errlen) {
  if (!nh_native_cache_dir(dir, len)) return fail(err, errlen, "cache directory path too long");
  if (make_dirs(dir, err, errlen) != 0) return -1;
  return check_private(dir, err, errlen);
}

/* The hash continued over the string s and its terminating zero (so "ab","c" and "a","bc" differ). */
static uint64_t hash_string(uint64_t h, const char *s) { return nh_fnv1a(h, s, strlen(s) + 1); }

/* <dir>/nhbench-<hash>.so, the hash over everything that makes the object what it is. */
static int object_path(char *buf, size_t len, const char *dir, const char *source, const char *cc, char *err,
                       size_t errlen) {
  char abi[NH_TEXT_NUMBER], name[NH_TEXT_NAME];
  struct utsname u;
  snprintf(abi, sizeof abi, "%d", NH_NATIVE_ABI);
  uint64_t h = hash_string(NH_FNV1A_BASIS, source);
  h = hash_string(h, cc);
  h = hash_string(h, NH_NATIVE_FLAGS);
  h = hash_string(h, abi);
  h = hash_string(h, uname(&u) == 0 ? u.machine : "");
  snprintf(name, sizeof name, "nhbench-%016llx.so", (unsigned long long)h);
  if (join(buf, len, dir, name) != 0) return fail(err, errlen, "cache directory path too long: %s", dir);
  return 0;
}

/* A private directory for one compilation, inside the cache directory so that rename() from it is
 * atomic (one file system): a name no other process or thread uses. */
static int make_workdir(struct workdir *w, const char *cache, char *err, size_t errlen) {
  if (join(w->dir, sizeof w->dir, cache, "nhbench-tmp-XXXXXX") != 0)
    return fail(err, errlen, "cache directory path too long: %s", cache);
  if (!mkdtemp(w->dir))
    return fail(err, errlen, "cannot create a temporary directory in the cache directory %s: %s", cache,
                strerror(errno));
  if (join(w->src, sizeof w->src, w->dir, "source.c") || join(w->out, sizeof w->out, w->dir, "object.so") ||
      join(w->log, sizeof w->log, w->dir, "compiler.txt")) {
    rmdir(w->dir);
    return fail(err, errlen, "cache directory path too long: %s", cache);
  }
  return 0;
}

/* Every path, success or failure: what the compilation left, then the directory. */
static void remove_workdir(const struct workdir *w) {
  unlink(w->src);
  unlink(w->out);
  unlink(w->log);
  rmdir(w->dir);
}

/* The text into a new file at path (mode 0600), every byte or an error. */
static int write_file(const char *path, const char *text, char *err, size_t errlen) {
  const int fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  if (fd < 0) return fail(err, errlen, "cannot create %s: %s", path, strerror(errno));
  size_t left = strlen(text);
  while (left > 0) {
    const ssize_t n = write(fd, text, left);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) {
      const int e = n < 0 ? errno : EIO;
      close(fd);
      return fail(err, errlen, "cannot write %s: %s", path, strerror(e));
    }
    text += n, left -= (size_t)n;
  }
  if (close(fd) != 0) return fail(err, errlen, "cannot write %s: %s", path, strerror(errno));
  return 0;
}

/* The first len - 1 bytes of the file at path into buf (a string; empty if it cannot be read). */
static void read_head(const char *path, char *buf, size_t len) {
  size_t have = 0;
  const int fd = open(path, O_RDONLY | O_CLOEXEC);
  while (fd >= 0 && have + 1 < len) {
    const ssize_t n = read(fd, buf + have, len - 1 - have);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    have += (size_t)n;
  }
  if (fd >= 0) close(fd);
  buf[have] = '\0';
}

/* Every occurrence of pat taken out of s: the private directory's path, which says nothing. */
static void remove_all(char *s, const char *pat) {
  const size_t n = strlen(pat);
  char *out = s;
  for (const char *in = s; *in;)
    if (n && strncmp(in, pat, n) == 0)
      in += n;
    else
      *out++ = *in++;
  *out = '\0';
}

/* The compiler's first LOG_LINES lines of output, after what happened to it. */
static int compiler_failed(const char *cc, int status, const struct workdir *w, char *err, size_t errlen) {
  char log[NH_TEXT_MESSAGE], prefix[NH_TEXT_PATH + 1];
  if (WIFSIGNALED(status))
    fail(err, errlen, "the C compiler %s was killed by signal %d", cc, WTERMSIG(status));
  else
    fail(err, errlen, "the C compiler %s failed (exit status %d)", cc, WEXITSTATUS(status));
  read_head(w->log, log, sizeof log);
  snprintf(prefix, sizeof prefix, "%s/", w->dir);
  remove_all(log, prefix);
  char *end = log;
  for (int i = 0; i < LOG_LINES && end && *end; i++) end = strchr(end, '\n') ? strchr(end, '\n') + 1 : NULL;
  if (end) *end = '\0';
  for (size_t n = strlen(log); n > 0 && log[n - 1] == '\n'; n--) log[n - 1] = '\0';
  if (log[0] && err && errlen)
    nh_text_append(err, errlen, ":\n", "%s", log);
  else if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && err && errlen) /* the shell's and execvp's code */
    nh_text_append(err, errlen, "", ", without output: it may not have been found or could not be run");
  return -1;
}

/* The flags and paths of a compilation as an argument array in argv (16 slots): no shell reads it. */
static void compiler_argv(char **argv, char *flags, const char *cc, const struct workdir *w) {
  int n = 0;
  char *save = NULL;
  argv[n++] = (char *)cc;
  for (char *t = strtok_r(flags, " ", &save); t && n < 10; t = strtok_r(NULL, " ", &save)) argv[n++] = t;
  argv[n++] = "-o";
  argv[n++] = (char *)w->out;
  argv[n++] = (char *)w->src;
  argv[n++] = "-lm";
  argv[n] = NULL;
}

/* The file exec would run for cc, into buf: cc itself if it holds a '/', else the first executable
 * cc in a directory of PATH (as execvp searches it). Looked up here, not left to posix_spawnp,
 * because where the spawn is a fork (valgrind makes it one) an exec that fails is only an exit
 * status 127, with no reason. The error number (ENOENT, EACCES, ENAMETOOLONG), or 0. */
static int find_compiler(const char *cc, char *buf, size_t len) {
  if (strchr(cc, '/')) {
    if (snprintf(buf, len, "%s", cc) >= (int)len) return ENAMETOOLONG;
    return access(buf, X_OK) == 0 ? 0 : errno;
  }
  const char *path = getenv("PATH");
  int found = ENOENT;
  for (const char *d = path && path[0] ? path : "/bin:/usr/bin"; d; d = strchr(d, ':') ? strchr(d, ':') + 1 : NULL) {
    const int n = (int)strcspn(d, ":"); /* an empty entry is the working directory */
    if (snprintf(buf, len, "%.*s%s%s", n, d, n ? "/" : "", cc) >= (int)len) continue;
    if (access(buf, X_OK) == 0) return 0;
    if (errno == EACCES) found = EACCES; /* as execvp reports it: there, but not executable */
  }
  return found;
}

/* Starts the compiler at exe (cc as named) with no standard input and its output into w->log; the
 * error number of posix_spawn. */
static int spawn_compiler(pid_t *pid, const char *exe, const char *cc, const struct workdir *w) {
  char flags[] = NH_NATIVE_FLAGS, *argv[16];
  compiler_argv(argv, flags, cc, w);
  posix_spawn_file_actions_t fa;
  int rc = posix_spawn_file_actions_init(&fa);
  if (rc) return rc;
  if (!(rc = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)) &&
      !(rc = posix_spawn_file_actions_addopen(&fa, 2, w->log, O_WRONLY | O_CREAT | O_TRUNC, 0600)) &&
      !(rc = posix_spawn_file_actions_adddup2(&fa, 2, 1)))
    rc = posix_spawn(pid, exe, &fa, NULL, argv, environ);
  posix_spawn_file_actions_destroy(&fa);
  return rc;
}

/* Compiles w->src into w->out; 0, or -1 with a message. */
static int run_compiler(const char *cc, const struct workdir *w, char *err, size_t errlen) {
  char exe[NH_TEXT_PATH];
  pid_t pid;
  int rc = find_compiler(cc, exe, sizeof exe);
  if (!rc) rc = spawn_compiler(&pid, exe, cc, w);
  if (rc) {
    if (getenv("NHBENCH_CC"))
      return fail(err, errlen, "cannot run the C compiler %s (NHBENCH_CC): %s", cc, strerror(rc));
    return fail(err, errlen,
                "no C compiler: %s (found when nhbench was built) cannot be run: %s; NHBENCH_CC names another", cc,
                strerror(rc));
  }
  int status;
  while (waitpid(pid, &status, 0) < 0)
    if (errno != EINTR) return fail(err, errlen, "cannot wait for the C compiler %s: %s", cc, strerror(errno));
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return 0;
  return compiler_failed(cc, status, w, err, errlen);
}

/* Compiles source in a private directory of the cache, renames the object onto path and loads it
 * from there (so that debuggers and profilers name the file that stays). Every nhbench process
 * renames a complete object for the same hash onto path, so whichever rename came last, what is
 * loaded is this source compiled. The handle, or NULL with a message. */
static void *compile_and_load(const char *cc, const char *source, const char *cache, const char *path, char *err,
                              size_t errlen) {
  struct workdir w;
  if (make_workdir(&w, cache, err, errlen) != 0) return NULL;
  void *handle = NULL;
  if (write_file(w.src, source, err, errlen) == 0 && run_compiler(cc, &w, err, errlen) == 0) {
    if (rename(w.out, path) != 0)
      fail(err, errlen, "cannot move the compiled object to %s: %s", path, strerror(errno));
    else if (!(handle = dlopen(path, RTLD_NOW | RTLD_LOCAL))) {
      const char *why = dlerror();
      fail(err, errlen, "the compiled object does not load: %s", why ? why : "dlopen failed");
    }
  }
  remove_workdir(&w);
  return handle;
}

static void no_compiler(char *err, size_t errlen) {
  const char *env = getenv("NHBENCH_CC");
  if (env)
    fail(err, errlen, "no C compiler: NHBENCH_CC is %s", env[0] ? "'none'" : "empty");
  else
    fail(err, errlen, "no C compiler: nhbench was built without one (NHBENCH_CC names one)");
}

nh_native *nh_native_load(const char *source, int *compiled, char *err, size_t errlen) {
  char cache[NH_TEXT_PATH], path[NH_TEXT_PATH];
  if (compiled) *compiled = 0;
  if (err && errlen) err[0] = '\0';
  const char *cc = nh_native_compiler();
  if (!cc) {
    no_compiler(err, errlen);
    return NULL;
  }
  if (!source) {
    fail(err, errlen, "no source");
    return NULL;
  }
  if (prepare_cache(cache, sizeof cache, err, errlen) != 0) return NULL;
  if (object_path(path, sizeof path, cache, source, cc, err, errlen) != 0) return NULL;
  nh_native *lib = malloc(sizeof *lib + strlen(path) + 1);
  if (!lib) {
    fail(err, errlen, "out of memory");
    return NULL;
  }
  strcpy(lib->path, path);
  /* A cached object that does not load (absent, truncated, corrupt) is compiled again and replaced;
   * dlerror() is cleared so that no caller later reads this expected failure as theirs. */
  lib->handle = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  if (!lib->handle) {
    dlerror();
    lib->handle = compile_and_load(cc, source, cache, path, err, errlen);
    if (!lib->handle) {
      free(lib);
      return NULL;
    }
    if (compiled) *compiled = 1;
  }
  return lib;
}

void *nh_native_symbol(const nh_native *lib, const char *name) { return lib && name ? dlsym(lib->handle, name) : NULL; }

const char *nh_native_path(const nh_native *lib) { return lib ? lib->path : NULL; }

void nh_native_close(nh_native *lib) {
  if (!lib) return;
  dlclose(lib->handle);
  free(lib);
}
