/* Out-of-memory paths of the ensemble runner and the 'initial' check of every study kind (issue 16:
 * mutants that survived in studies/). The allocation failures come from the fault injection of the
 * test binary's malloc wrappers (tests/test_no_alloc.c). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "studies/study.h"
#include "tests/helpers.h"

/* ---- out of memory ------------------------------------------------------------------------- */

/* An ensemble run whose k-th allocation fails, for every k up to the run's last allocation: no
 * such run may crash on a NULL it did not check; each returns -1 with a message saying "out of
 * memory" (not a sampler's or a read-back's failure), or 0 when only the progress display lost its
 * tables (its results then those of the run without a failure); and a run with no failure
 * succeeds. */
Test(study_failures, ensemble_run_out_of_memory_at_each_allocation) {
  char path[128], err[1024] = "";
  snprintf(path, sizeof path, "/tmp/nhbench-mutoom-%d.cfg", (int)getpid());
  test_write_file(path, "study = \"ensemble\";\nsystem = \"chaotic_particle\";\nT = 2.0;\nh = 0.5;\n"
                        "methods = [\"rk4\", \"nh_rattle\"];\nensemble = { count = 2; energy = 1.535; seed = 3; };\n");
  nh_study st;
  cr_assert_eq(nh_study_load(path, NULL, 0, &st, err, sizeof err), 0, "%s", err);
  remove(path);
  /* The run without a failure, which a run that returns 0 must equal. */
  nh_ensemble_result ref;
  cr_assert_eq(nh_run_ensemble(&st, &ref, err, sizeof err), 0, "%s", err);
  const size_t nq = (size_t)st.count * st.sys.n, traj = (size_t)st.nmethods * st.count,
               stats = (size_t)st.nmethods * st.nsamples;
  int failed_runs = 0, failed_runs_refused = 0;
  for (long k = 1;; k++) {
    nh_ensemble_result r;
    memset(&r, 0, sizeof r);
    err[0] = '\0';
    test_fail_allocation = k;
    int rc = nh_run_ensemble(&st, &r, err, sizeof err);
    /* <= 0, not == 0: two threads may both see 1 and count down, one to 0 (its allocation fails),
     * the other to -1. */
    const int reached = test_fail_allocation <= 0;
    test_fail_allocation = 0;
    if (rc == 0)
      cr_expect(memcmp(r.q0, ref.q0, nq * sizeof *r.q0) == 0 && memcmp(r.E0, ref.E0, (size_t)st.count * sizeof *r.E0) == 0 &&
                    memcmp(r.max_abs_dE, ref.max_abs_dE, traj * sizeof *r.max_abs_dE) == 0 &&
                    memcmp(r.dE_q50, ref.dE_q50, stats * sizeof *r.dE_q50) == 0 &&
                    memcmp(r.dE_var, ref.dE_var, stats * sizeof *r.dE_var) == 0,
                "allocation %ld failed, yet the run returned 0 with other results", k);
    nh_ensemble_result_free(&r);
    if (!reached) { /* fewer than k allocations: nothing failed */
      cr_expect_eq(rc, 0, "run without a failed allocation: %s", err);
      break;
    }
    failed_runs++;
    /* The progress display's own tables are optional: without them the run goes on. */
    cr_expect(rc == 0 || (rc == -1 && strstr(err, "out of memory")), "allocation %ld failed: %d, '%s'", k, rc, err);
    failed_runs_refused += rc == -1;
  }
  cr_expect_gt(failed_runs_refused, 20, "only %d of %d failed allocations refused", failed_runs_refused, failed_runs);
  nh_ensemble_result_free(&ref);
  nh_study_free(&st);
}

/* The study kinds' runners with their k-th allocation failing, for every k: each failure is -1
 * with "out of memory" (not a solver's or a sampler's failure), and its result freed leaves no
 * block of ours (nor a GSL object) behind: the failure paths free what they made. A run that
 * succeeds leaves err as it was (studies/study.h). */
typedef int (*run_fn)(const nh_study *, void *, char *, size_t);
typedef void (*free_fn)(void *);

static void kind_out_of_memory(const char *spec, const char *const *overrides, int noverrides, run_fn run,
                               free_fn release, size_t result_size) {
  char path[512], err[1024] = "";
  snprintf(path, sizeof path, "%s/tests/data/%s", NHBENCH_SOURCE_DIR, spec);
  nh_study st;
  cr_assert_eq(nh_study_load(path, overrides, noverrides, &st, err, sizeof err), 0, "%s", err);
  void *r = calloc(1, result_size);
  snprintf(err, sizeof err, "untouched");
  cr_assert_eq(run(&st, r, err, sizeof err), 0, "%s: %s", spec, err); /* a warm-up */
  cr_expect_str_eq(err, "untouched", "%s: a run that succeeds leaves err as it was", spec);
  release(r);
  int failures = 0;
  for (long k = 1;; k++) {
    const long blocks = test_live_blocks();
    err[0] = '\0';
    test_fail_allocation = k;
    const int rc = run(&st, r, err, sizeof err);
    const int reached = test_fail_allocation <= 0;
    test_fail_allocation = 0;
    release(r);
    if (!reached) {
      cr_expect_eq(rc, 0, "%s: without a failed allocation: %s", spec, err);
      break;
    }
    failures++;
    cr_expect(rc == 0 || (rc == -1 && strstr(err, "out of memory")), "%s: allocation %ld failed: %d, '%s'", spec, k, rc,
              err);
    cr_expect_eq(test_live_blocks(), blocks, "%s: allocation %ld failed: %ld blocks left behind", spec, k,
                 test_live_blocks() - blocks);
  }
  cr_expect_gt(failures, 3, "%s: only %d allocations", spec, failures);
  free(r);
  nh_study_free(&st);
}

#define KIND_OUT_OF_MEMORY(name, spec, type, run, release, ...)                                                        \
  Test(study_failures, name##_out_of_memory_leaves_nothing) {                                                          \
    if (test_live_blocks() < 0) cr_skip_test("AddressSanitizer build: LeakSanitizer checks leaks there");             \
    static const char *const overrides[] = {__VA_ARGS__};                                                              \
    kind_out_of_memory(spec, overrides, sizeof overrides / sizeof *overrides, (run_fn)run, (free_fn)release,         \
                       sizeof(type));                                                                                  \
  }

/* rk8pd references (the chaotic particle has no exact solution), nh_rattle's multipliers, an
 * adjoint (nh_newmark's own), observables along the runs. */
KIND_OUT_OF_MEMORY(convergence, "convergence_norms.cfg", nh_convergence_result, nh_run_convergence,
                   nh_convergence_result_free, "methods=[\"rk4\",\"nh_rattle\"]")
KIND_OUT_OF_MEMORY(ensemble, "ensemble_observables.cfg", nh_ensemble_result, nh_run_ensemble, nh_ensemble_result_free,
                   "T=2", "observables=[\"multiplier_error\",\"q\"]")
KIND_OUT_OF_MEMORY(trajectory, "trajectory_multiplier.cfg", nh_trajectory_result, nh_run_trajectory,
                   nh_trajectory_result_free, "system=chaotic_particle", "initial=default")
KIND_OUT_OF_MEMORY(onestep, "onestep_random.cfg", nh_onestep_result, nh_run_onestep, nh_onestep_result_free,
                   "methods=[\"rk4\",\"nh_newmark(alpha=0.5)\"]")
KIND_OUT_OF_MEMORY(work_precision, "work_precision_small.cfg", nh_work_precision_result, nh_run_work_precision,
                   nh_work_precision_result_free, "T=1")

/* ---- a bad 'initial' stops every kind that takes one ------------------------------------------ */

/* Each kind's spec loads as written, and with an unknown preset as its initial condition (line 6)
 * fails with that error, not a later one (the loaders chain with ||: the first failure ends it). */
Test(study_failures, unknown_initial_preset_is_the_error_in_every_kind) {
  static const char *const kinds[] = {"convergence", "trajectory", "onestep", "work_precision"};
  char path[128], err[1024], want[512];
  snprintf(path, sizeof path, "/tmp/nhbench-mutinit-%d.cfg", (int)getpid());
  for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++)
    for (int bad = 0; bad < 2; bad++) {
      char text[512];
      snprintf(text, sizeof text, "study = \"%s\";\nsystem = \"chaotic_particle\";\nT = 1.0;\nh = [0.2, 0.1];\nmethods = [\"rk4\"];\n%s%s",
              kinds[k], bad ? "initial = \"nosuch\";\n" : "\n", k == 1 ? "observables = [\"energy_error\"];\n" : "");
      test_write_file(path, text);
      nh_study st;
      err[0] = '\0';
      int rc = nh_study_load(path, NULL, 0, &st, err, sizeof err);
      if (!bad) {
        cr_expect_eq(rc, 0, "%s: %s", kinds[k], err);
      } else {
        snprintf(want, sizeof want, "%s:6: system chaotic_particle has no preset 'nosuch' (presets: none)", path);
        cr_expect_eq(rc, -1, "%s loaded with an unknown preset", kinds[k]);
        cr_expect_str_eq(err, want, "%s", kinds[k]);
      }
      nh_study_free(&st);
    }
  remove(path);
}
