/* studies/ frees what it allocates (issue 16, round 2): loading, running and freeing a study of
 * each kind, again and again, leaves the heap as it found it. glibc's mallinfo2() counts the bytes
 * in use in the main arena; one thread keeps every allocation there, and a first round warms up
 * what libraries keep for good (stdio buffers, GSL tables; no results file is written). A free()
 * left out anywhere in a loader or a runner (a method, a name, a result array, a journal's index)
 * shows as bytes still in use after the later rounds.
 *
 * The count is exact only without glibc's per-thread cache (tcache), whose blocks count as in
 * use: the tests of studies_free_all_inner run only in a copy of this binary started with
 * GLIBC_TUNABLES=glibc.malloc.tcache_count=0 by studies_free_all/without_tcache (skipped
 * otherwise). */
#define _POSIX_C_SOURCE 200809L /* readlink */
#include <criterion/criterion.h>
#include <malloc.h>
#include <stddef.h>
#include <stdlib.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench/claims/report.h"
#include "studies/study.h"
#include "tests/helpers.h"

/* Bytes in use: in the arena, and in blocks of their own (mmap, large blocks such as a method's
 * workspace). */
static size_t in_use(void) {
  const struct mallinfo2 m = mallinfo2();
  return m.uordblks + m.hblkhd;
}

/* Under AddressSanitizer mallinfo2() does not see its allocator's blocks; LeakSanitizer checks
 * leaks there instead. */
#if defined(__SANITIZE_ADDRESS__)
#define NH_COUNTS_HEAP 0
#else
#define NH_COUNTS_HEAP 1
#endif

static int tcache_off(void) {
  const char *t = getenv("GLIBC_TUNABLES");
  return t && strstr(t, "glibc.malloc.tcache_count=0") != NULL;
}

static void inner_init(void) {
  if (!NH_COUNTS_HEAP) cr_skip_test("AddressSanitizer build: LeakSanitizer checks leaks there");
  if (!tcache_off()) cr_skip_test("run by studies_free_all/without_tcache");
}

/* This binary again, without the tcache, on the inner tests: they all pass. */
Test(studies_free_all, without_tcache, .timeout = 120) {
  if (!NH_COUNTS_HEAP) cr_skip_test("AddressSanitizer build: LeakSanitizer checks leaks there");
  char exe[4096], cmd[4300], out[65536];
  const ssize_t len = readlink("/proc/self/exe", exe, sizeof exe - 1);
  cr_assert(len > 0);
  exe[len] = '\0';
  snprintf(cmd, sizeof cmd,
           "env -i PATH=/usr/bin:/bin GLIBC_TUNABLES=glibc.malloc.tcache_count=0 '%s' --filter 'studies_free_all_inner/*' --jobs 1 2>&1", exe);
  const int rc = test_run_command(cmd, out, sizeof out);
  cr_expect_eq(rc, 0, "%s", out);
  cr_expect(strstr(out, "Tested: 9 | Passing: 9 | Failing: 0 | Crashing: 0") != NULL, "%s", out);
}

/* Runs a loaded study of any kind and frees its result: the runner's return code. */
static int run_and_free(const nh_study *stp, char *err, size_t errlen) {
  const nh_study_kind_type *kind = nh_study_kinds[stp->kind]; /* any kind, through the registry */
  /* The result on the stack: the allocation failures counted are the runner's own. */
  _Alignas(max_align_t) unsigned char r[1 << 14];
  cr_assert_leq(kind->result_size, sizeof r, "the %s result outgrew the test's room", kind->name);
  const int rc = kind->run(stp, r, err, errlen);
  kind->free_result(r);
  return rc;
}

/* One round: load the spec (with a journal when journal != NULL), run it, free everything. */
static void round_of(const char *spec, const char *journal, int resume) {
  nh_study st;
  char err[1024];
  cr_assert_eq(nh_study_load(spec, NULL, 0, &st, err, sizeof err), 0, "%s", err);
  st.checkpoint = journal, st.checkpoint_key = "leak key", st.resume = resume;
  cr_assert_eq(run_and_free(&st, err, sizeof err), 0, "%s", err);
  nh_study_free(&st);
}

static void no_leak(const char *text, int journaled) {
  char spec[128], journal[128];
  snprintf(spec, sizeof spec, "/tmp/nhbench-mut2-leak-%d.cfg", (int)getpid());
  snprintf(journal, sizeof journal, "/tmp/nhbench-mut2-leak-%d.journal", (int)getpid());
  test_write_file(spec, text);
  omp_set_num_threads(1);
  remove(journal);
  round_of(spec, journaled ? journal : NULL, 0);
  if (journaled) round_of(spec, journal, 1);
  const size_t before = in_use();
  for (int i = 0; i < 2; i++) {
    remove(journal);
    round_of(spec, journaled ? journal : NULL, 0);
    if (journaled) round_of(spec, journal, 1); /* resumed from the complete journal */
  }
  const size_t after = in_use();
  cr_expect_eq(after, before, "%zu bytes still in use after 2 rounds of\n%s", after - before, text);
  remove(spec), remove(journal);
}

Test(studies_free_all_inner, convergence, .init = inner_init) {
  no_leak("study = \"convergence\";\nsystem = \"chaotic_particle\";\nT = 0.4;\nh = [0.2, 0.1];\n"
          "methods = [\"rk4\", \"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)\", \"triple_jump(nh_newmark(alpha=0.5))\"];\n"
          "expected_orders = ( { method = \"rk4\"; order = 3; reason = \"test\"; } );\n",
          1);
}

Test(studies_free_all_inner, ensemble_in_memory_and_streamed, .init = inner_init) {
  const char *text = "study = \"ensemble\";\nsystem = \"chaotic_particle\";\nT = 0.4;\nh = 0.1;\nsample_every = 2;\n"
                     "methods = [\"rk4\"];\nensemble = { count = 3; energy = 1.535; seed = 2; };\n"
                     "observables = [\"energy\", \"error_max\", \"multiplier_error\"];\n"
                     "grids = ( { method = \"nh_newmark(alpha=0.5)\"; beta = [0.0, 0.25]; beta2 = [0.25, 0.1]; } );\n";
  no_leak(text, 0);
  no_leak(text, 1);
}

Test(studies_free_all_inner, trajectory, .init = inner_init) {
  no_leak("study = \"trajectory\";\nsystem = \"cvt\";\nT = 0.4;\nh = [0.2, 0.1];\ninitial = [\"eps01\", \"eps01\"];\n"
          "system_params = { eps = 0.2; };\nmethods = [\"rk4\", \"dla(alpha=0.5)\"];\n"
          "observables = [\"energy_error\", \"error\", \"multiplier_error\", \"discrete_constraint\"];\n",
          1);
}

Test(studies_free_all_inner, onestep, .init = inner_init) {
  no_leak("study = \"onestep\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.2, 0.1];\npoints = 2;\n"
          "methods = [\"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)\", \"dla(alpha=0.5)\", \"rk4\", \"js_b\"];\n",
          1);
  no_leak("study = \"onestep\";\nsystem = \"chaotic_particle\";\nT = 1.0;\nh = [0.2, 0.1];\npoints = 2;\n"
          "ensemble = { count = 2; energy = 1.535; seed = 1; };\nmethods = [\"nh_rattle\", \"adjoint_pair(nh_newmark(alpha=0))\"];\n",
          0);
}

Test(studies_free_all_inner, work_precision, .init = inner_init) {
  no_leak("study = \"work_precision\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1, 0.05];\nrepeats = 2;\n"
          "methods = [\"rk4\", \"js_b\"];\n",
          1);
}

/* bench/'s claims files are read with libconfig too: loading and freeing each paper's claims file
 * (and a refused one) leaves the heap as it was, libconfig's own objects included. */
Test(studies_free_all_inner, claims_files, .init = inner_init) {
  static const char *const files[] = {"studies/paper/newmark.claims", "studies/paper/rattle.claims",
                                      "studies/paper/herglotz.claims", "studies/paper/discretization.claims",
                                      "tests/data/report/quick.claims", "tests/data/no_such.claims"};
  size_t before = 0;
  for (int round = 0; round < 3; round++) {
    if (round == 1) before = in_use();
    for (size_t k = 0; k < sizeof files / sizeof *files; k++) {
      char path[512], err[1024];
      snprintf(path, sizeof path, "%s/%s", NHBENCH_SOURCE_DIR, files[k]);
      nh_claims c;
      const int rc = nh_claims_load(path, &c, err, sizeof err);
      cr_assert_eq(rc, k + 1 < sizeof files / sizeof *files ? 0 : -1, "%s: %s", files[k], err);
      if (rc == 0) nh_claims_free(&c);
    }
  }
  cr_expect_eq(in_use(), before, "two rounds of loading claims files left %ld bytes in use",
               (long)(in_use() - before));
}

/* Refused specs free what they read before the refusal. */
Test(studies_free_all_inner, refused_specs, .init = inner_init) {
  const char *texts[] = {
      "study = \"convergence\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1, 0.05];\nmethods = [\"rk4\", \"nope\"];\n",
      "study = \"ensemble\";\nsystem = \"chaotic_particle\";\nT = 1.0;\nh = 0.5;\nmethods = [\"rk4\"];\n"
      "ensemble = { count = 2; energy = 1.535; seed = 1; };\n"
      "grids = ( { method = \"nh_newmark(alpha=0.5)\"; beta = [0.0]; beta2 = [0.1]; alpha = [0.5]; } );\n",
      "study = \"trajectory\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1];\nmethods = [\"rk4\"];\n"
      "initial = { q = [0.0, 1.0, 0.0]; v = [1.0, 0.0, 0.0]; };\nobservables = [\"energy\"];\n",
      "study = \"convergence\";\nsystem = \"cvt\";\nT = 1.0;\nh = [0.1, 0.05];\nmethods = [\"rk4\"];\n"
      "initial = \"eps01\";\nsystem_params = { eps = 20.0; };\n",
      "study = \"convergence\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1, 0.05];\nmethods = [\"rk4\"];\n"
      "expected_orders = ( { method = \"js_a\"; order = 1; reason = \"r\"; } );\n",
  };
  char spec[128], err[1024];
  snprintf(spec, sizeof spec, "/tmp/nhbench-mut2-leak-%d.cfg", (int)getpid());
  for (size_t k = 0; k < sizeof texts / sizeof *texts; k++) {
    test_write_file(spec, texts[k]);
    nh_study st;
    cr_assert_eq(nh_study_load(spec, NULL, 0, &st, err, sizeof err), -1, "%s", texts[k]);
    nh_study_free(&st);
    const size_t before = in_use();
    for (int i = 0; i < 3; i++) {
      cr_assert_eq(nh_study_load(spec, NULL, 0, &st, err, sizeof err), -1);
      nh_study_free(&st);
    }
    cr_expect_eq(in_use(), before, "%zu bytes still in use after refusing\n%s", in_use() - before, texts[k]);
  }
  remove(spec);
}

/* Negative control: a block kept shows, in the arena and as a block of its own. */
Test(studies_free_all_inner, a_kept_block_shows, .init = inner_init) {
  const size_t sizes[2] = {200, 1u << 20};
  for (int k = 0; k < 2; k++) {
    const size_t before = in_use();
    void *volatile p = malloc(sizes[k]);
    cr_assert(p);
    cr_expect_geq(in_use(), before + sizes[k], "%zu bytes kept, %zu more in use", sizes[k], in_use() - before);
    free(p);
    cr_expect_eq(in_use(), before);
  }
}

/* Out of memory at every allocation of a run (the k-th fails, k = 1, 2, ... until a run makes
 * fewer): every kind returns -1 with a message, or 0 (what failed was optional), never crashes,
 * and frees on its failure path what it had allocated, the heap back where it was. */
Test(studies_free_all_inner, out_of_memory_at_each_allocation_frees_everything, .init = inner_init,
     .timeout = 120) {
  const char *texts[] = {
      "study = \"convergence\";\nsystem = \"particle\";\nT = 0.4;\nh = [0.2, 0.1];\n"
      "methods = [\"rk4\", \"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)\"];\n",
      "study = \"trajectory\";\nsystem = \"chaotic_particle\";\nT = 0.4;\nh = [0.2, 0.1];\n"
      "methods = [\"rk4\", \"dla(alpha=0.5)\"];\nobservables = [\"energy_error\", \"error\", \"multiplier_error\"];\n",
      "study = \"onestep\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.2, 0.1];\npoints = 2;\n"
      "methods = [\"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)\", \"dla(alpha=0.5)\", \"rk4\"];\n",
      "study = \"work_precision\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1, 0.05];\nrepeats = 2;\n"
      "methods = [\"rk4\", \"js_b\"];\n",
      /* no exact solution: the reference solver's allocations fail too */
      "study = \"work_precision\";\nsystem = \"chaotic_particle\";\nT = 0.4;\nh = [0.2, 0.1];\nrepeats = 1;\n"
      "methods = [\"rk4\"];\n",
      "study = \"ensemble\";\nsystem = \"chaotic_particle\";\nT = 0.4;\nh = 0.2;\n"
      "methods = [\"rk4\", \"nh_rattle\"];\nensemble = { count = 2; energy = 1.535; seed = 3; };\n"
      "observables = [\"energy\"];\n",
  };
  char spec[128], journal[128], err[1024];
  snprintf(spec, sizeof spec, "/tmp/nhbench-mut2-oom-%d.cfg", (int)getpid());
  snprintf(journal, sizeof journal, "/tmp/nhbench-mut2-oom-%d.journal", (int)getpid());
  omp_set_num_threads(1);
  for (size_t t = 0; t < sizeof texts / sizeof *texts; t++)
    for (int journaled = 0; journaled < 2; journaled++) {
      test_write_file(spec, texts[t]);
      nh_study st;
      cr_assert_eq(nh_study_load(spec, NULL, 0, &st, err, sizeof err), 0, "%s", err);
      st.checkpoint = journaled ? journal : NULL, st.checkpoint_key = "oom key";
      remove(journal);
      cr_assert_eq(run_and_free(&st, err, sizeof err), 0, "%s", err); /* warm-up */
      int refused = 0;
      long k;
      for (k = 1;; k++) {
        remove(journal);
        const size_t before = in_use();
        err[0] = '\0';
        test_fail_allocation = k;
        const int rc = run_and_free(&st, err, sizeof err);
        const int reached = test_fail_allocation <= 0;
        test_fail_allocation = 0;
        if (!reached) {
          cr_expect_eq(rc, 0, "%s", err);
          break;
        }
        cr_expect(rc == 0 || (rc == -1 && err[0] != '\0'), "spec %zu, allocation %ld: %d '%s'", t, k, rc, err);
        refused += rc == -1;
        cr_expect_eq(in_use(), before, "spec %zu (journal %d), allocation %ld failed (%s): %zd bytes kept", t, journaled, k,
                     err, (ssize_t)(in_use() - before));
      }
      cr_expect_gt(refused, 3, "spec %zu: %d of %ld failed allocations refused", t, refused, k - 1);
      nh_study_free(&st);
    }
  remove(spec), remove(journal);
}
