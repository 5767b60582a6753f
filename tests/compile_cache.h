/* What the tests of compiled code share (systems written as definitions, core/native.h): each test
 * its own cache of compiled objects, since the tests run in parallel processes, and objects put in
 * that cache behind the build's back. Include it after `#define _POSIX_C_SOURCE 200809L` (mkdtemp,
 * setenv). */
#ifndef NH_TESTS_COMPILE_CACHE_H
#define NH_TESTS_COMPILE_CACHE_H

#include <criterion/criterion.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/native.h"
#include "studies/study.h"
#include "systems/defined.h"
#include "tests/helpers.h"

/* cache (len bytes) becomes a fresh directory named from prefix ("/tmp/nh-native" gives
 * /tmp/nh-native-XXXXXX), NHBENCH_CACHE_DIR names it, and NHBENCH_CC is unset (the compiler PATH has). */
static inline void test_cache_make(char *cache, size_t len, const char *prefix) {
  snprintf(cache, len, "%s-XXXXXX", prefix);
  cr_assert(mkdtemp(cache), "mkdtemp: %s", strerror(errno));
  setenv("NHBENCH_CACHE_DIR", cache, 1);
  unsetenv("NHBENCH_CC");
}

/* A suite whose every test has a cache of its own, `cache`, removed after the test. */
#define TEST_CACHE_SUITE(suite, prefix)                                                                                \
  static char cache[64]; /* this test's NHBENCH_CACHE_DIR */                                                           \
  static void suite##_cache_setup(void) { test_cache_make(cache, sizeof cache, prefix); }                              \
  static void suite##_cache_teardown(void) { test_remove_tree(cache); }                                                \
  TestSuite(suite, .init = suite##_cache_setup, .fini = suite##_cache_teardown)

/* The object compiled from source renamed onto path: a cached object that loads but is not what the
 * definition's source makes (one from before the lane kernels, one lacking a function). */
static inline void test_replace_object(const char *path, const char *source) {
  char err[1024], other[4096];
  nh_native *lib = nh_native_load(source, NULL, err, sizeof err);
  cr_assert(lib, "%s", err);
  snprintf(other, sizeof other, "%s", nh_native_path(lib));
  nh_native_close(lib);
  cr_assert_eq(rename(other, path), 0, "rename: %s", strerror(errno));
}

/* A study of the definition in dir/file (dir absolute), included by its path into a small trajectory
 * spec written in the directory scratch, loaded as `nhbench run` loads it: st->sys is the
 * definition's system. */
static inline void test_load_definition(const char *scratch, const char *dir, const char *file, nh_study *st) {
  char path[256], spec[2048], err[1024];
  snprintf(path, sizeof path, "%s/spec.cfg", scratch);
  snprintf(spec, sizeof spec,
           "study = \"trajectory\";\nsystem = {\n  @include \"%s/%s\"\n};\nT = 1.0;\nh = [0.1];\n"
           "observables = [\"energy_error\"];\nmethods = [\"rk4\"];\n",
           dir, file);
  test_write_file(path, spec);
  cr_assert_eq(nh_study_load(path, NULL, 0, st, err, sizeof err), 0, "%s: %s", file, err);
  cr_assert(st->defined, "%s: not read as a definition", file);
  remove(path);
}

/* The system of definition def, built in mode (compiled or interpreted); the test fails when it
 * cannot be built. */
static inline nh_defined_system *test_build_definition(const nh_system_definition *def, nh_defined_mode mode) {
  const void *origin;
  char err[1024], note[1024];
  nh_defined_system *d = nh_defined_system_build(def, mode, &origin, err, sizeof err, note, sizeof note);
  cr_assert(d, "%s: %s", def->name, err);
  return d;
}

/* An nh_system of the built definition d; the test fails when its mass matrix is not SPD. */
static inline nh_system test_defined_system(const nh_defined_system *d) {
  nh_system sys;
  cr_assert_eq(nh_system_init(&sys, nh_defined_system_type(d)), 0, "%s: mass not SPD", nh_defined_system_type(d)->name);
  return sys;
}

#endif
