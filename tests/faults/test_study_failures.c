/* Out-of-memory paths of the ensemble runner and the 'initial' check of every study kind (issue 16:
 * mutants that survived in studies/). The allocation failures come from the fault injection of the
 * test binary's malloc wrappers (tests/contracts/test_no_alloc.c). */
#include <criterion/criterion.h>
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "studies/sampling.h"
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

/* studies/ error paths (issue 16, round 3): the failures that no other test reached, each with the
 * exact return value of the public function and its message, so that a failure reported as +1
 * anywhere on the way (where the callers test < 0) shows. */

/* The spec text loaded from a temporary file (path receives its name); the load must succeed. */
static void load_text(const char *text, const char *const *ov, int nov, nh_study *st, char *path, size_t pathlen) {
  char err[1024] = "";
  snprintf(path, pathlen, "/tmp/nhbench-mut3-studies-%d.cfg", (int)getpid());
  test_write_file(path, text);
  const int rc = nh_study_load(path, ov, nov, st, err, sizeof err);
  remove(path);
  cr_assert_eq(rc, 0, "%s\n%s", err, text);
}

/* The pendulum at its pivot: not on its circle, so no exact solution, and A(q) = qᵀ = 0 there, so
 * the multiplier and with it the rk8pd reference fail at once. */
#define AT_THE_PIVOT "system = \"pendulum\";\nT = 1.0;\nmethods = [\"rk4\"];\ninitial = { q = [0.0, 0.0]; v = [0.0, 0.0]; };\n"

/* `PATH: tail` */
static void expect_message(const char *err, const char *path, const char *tail) {
  char want[512];
  snprintf(want, sizeof want, "%s: %s", path, tail);
  cr_expect_str_eq(err, want);
}

Test(study_failures, convergence_reference_fails) {
  nh_study st;
  char path[128], err[1024] = "";
  load_text("study = \"convergence\";\nh = [0.1, 0.05];\n" AT_THE_PIVOT, NULL, 0, &st, path, sizeof path);
  nh_convergence_result r;
  cr_expect_eq(nh_run_convergence(&st, &r, err, sizeof err), -1);
  expect_message(err, path, "the reference solver (rk8pd) failed");
  nh_convergence_result_free(&r);
  nh_study_free(&st);
}

Test(study_failures, work_precision_reference_fails) {
  nh_study st;
  char path[128], err[1024] = "";
  load_text("study = \"work_precision\";\nh = [0.1];\n" AT_THE_PIVOT, NULL, 0, &st, path, sizeof path);
  nh_work_precision_result r;
  cr_expect_eq(nh_run_work_precision(&st, &r, err, sizeof err), -1);
  expect_message(err, path, "the reference solver (rk8pd) failed");
  nh_work_precision_result_free(&r);
  nh_study_free(&st);
}

/* Two points: the second is the reference at T/2, which fails; one point (the initial condition
 * itself): the truth over one step from it fails. */
Test(study_failures, onestep_reference_fails) {
  static const char *const tails[2] = {"the reference solver (rk8pd) failed over one step from a point",
                                       "the reference solver (rk8pd) failed on the way to a point"};
  for (int points = 1; points <= 2; points++) {
    nh_study st;
    char path[128], err[1024] = "", set[32];
    snprintf(set, sizeof set, "points=%d", points);
    const char *ov[] = {set};
    load_text("study = \"onestep\";\nh = [0.1, 0.05];\n" AT_THE_PIVOT, ov, 1, &st, path, sizeof path);
    nh_onestep_result r;
    cr_expect_eq(nh_run_onestep(&st, &r, err, sizeof err), -1, "points = %d", points);
    expect_message(err, path, tails[points - 1]);
    nh_onestep_result_free(&r);
    nh_study_free(&st);
  }
}

/* nh_run_trajectory on ST, which must succeed with its one run failed; what it wrote on stderr into
 * said. */
static void trajectory_stderr(nh_study *st, int status, char *said, size_t len) {
  char log[128], err[1024] = "";
  snprintf(log, sizeof log, "/tmp/nhbench-mut3-trajectory-%d.txt", (int)getpid());
  cr_assert(freopen(log, "w", stderr));
  nh_trajectory_result r;
  cr_assert_eq(nh_run_trajectory(st, &r, err, sizeof err), 0, "%s", err);
  cr_expect_eq(r.status[0], status);
  nh_trajectory_result_free(&r);
  fflush(stderr);
  FILE *f = fopen(log, "r");
  cr_assert(f);
  said[fread(said, 1, len - 1, f)] = '\0';
  fclose(f), remove(log);
}

/* A trajectory whose error observable needs the reference, which cannot be computed (a negative
 * tolerance, refused by GSL; the chaotic particle has no exact solution): the sampled run returns
 * -1 and says it failed; the study runs on with the run marked failed. */
Test(study_failures, trajectory_reference_fails) {
  nh_study st;
  char path[128];
  load_text("study = \"trajectory\";\nsystem = \"chaotic_particle\";\nT = 0.4;\nh = [0.1];\nsample_every = 2;\n"
            "methods = [\"rk4\"];\nobservables = [\"error_q_2\"];\n",
            NULL, 0, &st, path, sizeof path);
  st.reference_tol = -1;

  nh_samples layout;
  cr_assert_eq(nh_samples_init(&layout, &st, 1, 3), 0);
  nh_sampled_run run = {.st = &st, .m = st.methods[0], .method_index = 0, .h = 0.1, .nsteps = 4, .K = 2,
                        .x0 = st.ics[0], .layout = &layout, .values = layout.values};
  cr_expect_eq(nh_sampled_run_go(&run), -1);
  cr_expect_eq(run.status, NH_STEP_SOLVER_FAILED);
  cr_expect_eq(run.reached, 1, "t = 0 needs no solve; t = 0.2 does");
  cr_expect(layout.values[0] == 0 && isnan(layout.values[1]) && isnan(layout.values[2]), "%g %g %g",
            layout.values[0], layout.values[1], layout.values[2]);
  nh_samples_free(&layout);

  /* The study says so on stderr, once, with the reference's tolerance; and again when it is resumed
   * from its checkpoint journal, where the run's failed reference is taken from (not run again). */
  char journal[128], want[512], said[1024];
  snprintf(journal, sizeof journal, "/tmp/nhbench-mut3-trajectory-%d.journal", (int)getpid());
  remove(journal);
  st.checkpoint = journal, st.checkpoint_key = "key";
  const char *note = "note: the reference solution (rk8pd, tol -1) failed on some runs; they are marked failed\n";
  for (st.resume = 0; st.resume <= 1; st.resume++) {
    trajectory_stderr(&st, NH_STEP_SOLVER_FAILED, said, sizeof said);
    size_t len = 0;
    if (st.resume)
      len = (size_t)snprintf(want, sizeof want, "nhbench: resuming: 1 of 1 trajectory tasks taken from %s\n", journal);
    snprintf(want + len, sizeof want - len, "%s: %s", path, note);
    cr_expect_str_eq(said, want, "resume = %d", st.resume);
  }
  remove(journal);
  /* A reference that succeeds: no note. */
  st.checkpoint = NULL, st.resume = 0, st.reference_tol = 1e-13;
  trajectory_stderr(&st, NH_STEP_OK, said, sizeof said);
  cr_expect_str_eq(said, "");
  nh_study_free(&st);
}

/* A stand-in for a method: rk4's step that fails at the step numbered fail_at (from 1) of a run, and
 * an init that fails when init_fails is set. */
static int stand_in_steps, stand_in_fail_at, stand_in_init_fails;
static nh_step_status stand_in_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y,
                                    double h, nh_cost *cost) {
  (void)m;
  if (++stand_in_steps == stand_in_fail_at) return NH_STEP_SOLVER_FAILED;
  const nh_method rk4 = {.type = nh_integrator_type_find("rk4")};
  return rk4.type->step(&rk4, sys, x, y, h, cost);
}
static nh_step_status stand_in_init(const nh_method *m, const nh_system *sys, nh_state *x, double h, nh_cost *cost) {
  (void)m, (void)sys, (void)x, (void)h, (void)cost;
  stand_in_steps = 0;
  return stand_in_init_fails ? NH_STEP_SOLVER_FAILED : NH_STEP_OK;
}
static const nh_integrator_type stand_in = {.name = "stand_in", .step = stand_in_step, .init = stand_in_init};

/* A sampled run with an observable from the last step (the loop that keeps the previous state):
 * a step that fails mid-run ends it with its status, the samples before it kept and NaN after.
 * The same run struct then goes again with an init that fails: nothing reached, every sample NaN. */
Test(study_failures, sampled_run_stops_at_a_failed_step) {
  nh_study st;
  char path[128];
  load_text("study = \"trajectory\";\nsystem = \"chaotic_particle\";\nT = 0.8;\nh = [0.1];\nsample_every = 2;\n"
            "methods = [\"rk4\"];\nobservables = [\"energy\", \"discrete_constraint\"];\n",
            NULL, 0, &st, path, sizeof path);
  enum { NS = 5 };
  nh_samples layout;
  cr_assert_eq(nh_samples_init(&layout, &st, 1, NS), 0);
  const int row = layout.row;
  nh_method m = {.type = &stand_in};
  nh_sampled_run run = {.st = &st, .m = &m, .method_index = 0, .h = 0.1, .nsteps = 8, .K = 2,
                        .x0 = st.ics[0], .layout = &layout, .values = layout.values};
  stand_in_fail_at = 5, stand_in_init_fails = 0; /* the first step of the third sample's pair */
  cr_assert_eq(nh_sampled_run_go(&run), 0);
  cr_expect_eq(run.status, NH_STEP_SOLVER_FAILED);
  cr_expect_eq(run.reached, 3, "samples at t = 0, 0.2, 0.4");
  cr_expect_eq(run.cost.steps, 4, "rk4 counts its steps, the failing one is not rk4's: %llu", run.cost.steps);
  const double E0 = nh_energy(&st.sys, st.ics[0].q, st.ics[0].v);
  cr_expect_eq(layout.values[layout.offset[0]], E0, "the energy at t = 0");
  for (int s = 1; s < 3; s++) cr_expect(fabs(layout.values[s * row + layout.offset[0]] - E0) < 1e-3, "sample %d", s);
  for (int i = 3 * row; i < NS * row; i++) cr_expect(isnan(layout.values[i]), "entry %d after the failure", i);
  stand_in_init_fails = 1;
  cr_assert_eq(nh_sampled_run_go(&run), 0);
  cr_expect_eq(run.status, NH_STEP_SOLVER_FAILED);
  cr_expect_eq(run.reached, 0, "an init that fails reaches no sample");
  for (int i = 0; i < NS * row; i++) cr_expect(isnan(layout.values[i]), "entry %d", i);
  nh_samples_free(&layout);
  nh_study_free(&st);
}

/* A runner on st with its result freed: the runner's return value. The result holds garbage
 * before (the runner sets all of it, even when it refuses: studies/study.h). */
static int run_onestep(const nh_study *st, char *err, size_t len) {
  nh_onestep_result r;
  memset(&r, 0xa5, sizeof r);
  const int rc = nh_run_onestep(st, &r, err, len);
  return nh_onestep_result_free(&r), rc;
}

static int run_work_precision(const nh_study *st, char *err, size_t len) {
  nh_work_precision_result r;
  memset(&r, 0xa5, sizeof r);
  const int rc = nh_run_work_precision(st, &r, err, len);
  return nh_work_precision_result_free(&r), rc;
}

/* Each of st's counts set to 0 alone (and put back): run refuses with the message `tail`. */
static void refuses_each_count_at_zero(int (*run)(const nh_study *, char *, size_t), nh_study *st,
                                       int *const *counts, size_t n, const char *path, const char *tail) {
  for (size_t k = 0; k < n; k++) {
    const int kept = *counts[k];
    *counts[k] = 0;
    char err[1024] = "";
    cr_expect_eq(run(st, err, sizeof err), -1, "count %zu at 0", k);
    expect_message(err, path, tail);
    *counts[k] = kept;
  }
}

/* The runners' own checks of a study built by hand (the loader never makes these): each count
 * that the runner needs at least 1 of, at 0 alone. */
Test(study_failures, runners_refuse_an_empty_study) {
  nh_study st;
  char path[128];
  load_text("study = \"onestep\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1, 0.05];\nmethods = [\"rk4\"];\n", NULL, 0,
            &st, path, sizeof path);
  int *const onestep_counts[] = {&st.nic, &st.npoints, &st.nh, &st.nmethods};
  refuses_each_count_at_zero(run_onestep, &st, onestep_counts, 4, path,
                             "a one-step study needs initial conditions, points >= 1, step sizes and methods");
  nh_study_free(&st);

  load_text("study = \"work_precision\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1];\nmethods = [\"rk4\"];\n", NULL, 0,
            &st, path, sizeof path);
  int *const wp_counts[] = {&st.nmethods, &st.nh, &st.repeats};
  refuses_each_count_at_zero(run_work_precision, &st, wp_counts, 3, path,
                             "a work-precision study needs methods, step sizes and repeats >= 1");
  nh_study_free(&st);
}

/* Refusals of the loader that no other test reached. */
Test(study_failures, loader_refusals) {
  char path[128], err[1024] = "", want[1024];
  nh_study st;
  /* a --set name libconfig cannot hold */
  snprintf(path, sizeof path, "/tmp/nhbench-mut3-studies-%d.cfg", (int)getpid());
  test_write_file(path, "study = \"convergence\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1, 0.05];\nmethods = [\"rk4\"];\n");
  const char *bad_name[] = {"9x=1"};
  cr_expect_eq(nh_study_load(path, bad_name, 1, &st, err, sizeof err), -1);
  cr_expect_str_eq(err, "--set '9x=1': cannot set '9x'");
  nh_study_free(&st);
  /* a grid whose template does not apply to the system */
  test_write_file(path, "study = \"convergence\";\nsystem = \"damped_oscillator\";\nT = 1.0;\nh = [0.1, 0.05];\n"
                        "methods = [\"rk4\"];\ngrids = ( { method = \"nh_newmark\"; beta = [0.0]; beta2 = [0.0]; } );\n");
  err[0] = '\0';
  cr_expect_eq(nh_study_load(path, NULL, 0, &st, err, sizeof err), -1);
  snprintf(want, sizeof want, "%s:6: nh_newmark does not apply to damped_oscillator: ", path);
  cr_expect(strncmp(err, want, strlen(want)) == 0, "%s", err);
  nh_study_free(&st);
  remove(path);
}

/* nh_column_quantile out of memory (its one allocation fails): -1, and a success without. */
Test(study_failures, column_quantile_out_of_memory) {
  const double x[4] = {1, 2, 3, 4};
  double q[2];
  test_fail_allocation = 1;
  const int rc = nh_column_quantile(2, 2, x, 0.5, q);
  test_fail_allocation = 0;
  cr_expect_eq(rc, -1);
  cr_expect_eq(nh_column_quantile(2, 2, x, 0.5, q), 0);
  cr_expect(q[0] == 2 && q[1] == 3, "%g %g", q[0], q[1]);
}

/* A streamed ensemble whose journal cannot take a record (the file size limit is below one record):
 * its rows are lost, and the run says so: -1, not a later read-back failure. */
Test(study_failures, ensemble_whose_journal_cannot_take_a_record) {
  nh_study st;
  char path[128], journal[160], err[1024] = "", want[512];
  load_text("study = \"ensemble\";\nsystem = \"chaotic_particle\";\nT = 200.0;\nh = 0.2;\nmethods = [\"rk4\"];\n"
            "ensemble = { count = 2; energy = 1.535; seed = 3; };\n",
            NULL, 0, &st, path, sizeof path);
  snprintf(journal, sizeof journal, "%s.journal", path);
  st.checkpoint = journal, st.checkpoint_key = "key", st.resume = 0;
  signal(SIGXFSZ, SIG_IGN);
  struct rlimit lim = {4096, 4096}; /* the header fits, a record of 1001 samples does not */
  cr_assert_eq(setrlimit(RLIMIT_FSIZE, &lim), 0);
  nh_ensemble_result r;
  cr_expect_eq(nh_run_ensemble(&st, &r, err, sizeof err), -1);
  snprintf(want, sizeof want, "%s: trajectories lost (out of memory, or the journal %s could not be written)", path,
           journal);
  cr_expect_str_eq(err, want);
  nh_ensemble_result_free(&r);
  nh_study_free(&st);
  remove(journal);
}

/* nh_progress_kinds out of memory: -1, and the plain estimate (no kinds). */
Test(study_failures, progress_kinds_out_of_memory) {
  nh_progress p;
  const long totals[2] = {3, 4};
  nh_progress_start(&p, "test", 7);
  test_fail_allocation = 1;
  const int rc = nh_progress_kinds(&p, 2, totals);
  test_fail_allocation = 0;
  cr_expect_eq(rc, -1);
  cr_expect(p.nkinds == 0 && !p.kind_total && !p.kind_done && !p.kind_time);
  nh_progress_end(&p);
}

/* A syntax error quotes its line without the indentation, spaces and tabs alike. */
Test(study_failures, syntax_error_quotes_its_line_unindented) {
  char path[128], err[1024] = "";
  snprintf(path, sizeof path, "/tmp/nhbench-mut3-syntax-%d.cfg", (int)getpid());
  test_write_file(path, "study = \"convergence\";\nsystem = \"particle\";\nT = 1.0;\n \t h = [0.1, 0.05;\n");
  nh_study st;
  cr_expect_eq(nh_study_load(path, NULL, 0, &st, err, sizeof err), -1);
  nh_study_free(&st);
  remove(path);
  cr_expect(strstr(err, ":4: syntax error in `h = [0.1, 0.05;`") != NULL, "%s", err);
}

/* A quoted line of up to 80 characters is shown whole; a longer one is cut to its first 77 and "...". */
Test(study_failures, syntax_error_quote_cut_after_80_characters) {
  for (int len = 79; len <= 81; len++) {
    char line[128], text[256], path[128], err[1024] = "", want[160];
    const char *head = "h = [0.1, 0.05; # ";
    snprintf(line, sizeof line, "%s%.*s", head, len - (int)strlen(head),
             "abcdefghijklmnopqrstuvwxyz0123456789abcdefghijklmnopqrstuvwxyz0123456789");
    cr_assert_eq((int)strlen(line), len);
    snprintf(text, sizeof text, "study = \"convergence\";\nsystem = \"particle\";\nT = 1.0;\n  %s\n", line);
    snprintf(path, sizeof path, "/tmp/nhbench-mut3-cut-%d.cfg", (int)getpid());
    test_write_file(path, text);
    nh_study st;
    cr_expect_eq(nh_study_load(path, NULL, 0, &st, err, sizeof err), -1);
    nh_study_free(&st);
    remove(path);
    if (len <= 80) snprintf(want, sizeof want, ":4: syntax error in `%s` (", line);
    else snprintf(want, sizeof want, ":4: syntax error in `%.77s...` (", line);
    cr_expect(strstr(err, want) != NULL, "line of %d: %s", len, err);
  }
}

/* The error observable's components are q then v: on the particle (n = 3) q[0] q[1] q[2] v[0] v[1]
 * v[2]. */
Test(study_failures, error_components_are_q_then_v) {
  static const char *const want[6] = {"q[0]", "q[1]", "q[2]", "v[0]", "v[1]", "v[2]"};
  nh_system sys = test_system("particle", NULL);
  const nh_observable *ob = nh_observable_find("error");
  cr_assert(ob != NULL);
  cr_assert_eq(ob->width(&sys), 6);
  for (int i = 0; i < 6; i++) {
    char label[32] = "";
    ob->label(&sys, i, label, sizeof label);
    cr_expect_str_eq(label, want[i], "component %d", i);
  }
}

/* nh_samples_init: no observables, nothing allocated and 0 exactly; with observables, the row
 * laid out in their order (the particle: q has n = 3 entries, error_q_max and energy_error one,
 * the multiplier k = 1), absent per method (rk4 defines no multiplier), every value NaN. */
Test(study_failures, samples_layout) {
  nh_study st;
  char path[128];
  nh_samples s;
  load_text("study = \"convergence\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1, 0.05];\nmethods = [\"rk4\"];\n",
            NULL, 0, &st, path, sizeof path);
  cr_expect_eq(nh_samples_init(&s, &st, 4, 5), 0);
  cr_expect(s.nobs == 0 && s.row == 0 && !s.values && !s.width && !s.offset && !s.absent);
  nh_samples_free(&s);
  nh_study_free(&st);

  load_text("study = \"trajectory\";\nsystem = \"particle\";\nT = 1.0;\nh = [0.1];\n"
            "observables = [\"q\", \"error_q_max\", \"energy_error\", \"multiplier\"];\n"
            "methods = [\"rk4\", \"nh_newmark(alpha=0.5)\"];\n",
            NULL, 0, &st, path, sizeof path);
  cr_assert_eq(nh_samples_init(&s, &st, 2, 3), 0);
  const int width[4] = {3, 1, 1, 1}, offset[4] = {0, 3, 4, 5};
  cr_expect(s.nobs == 4 && s.row == 6, "nobs %d, row %d", s.nobs, s.row);
  for (int o = 0; o < 4; o++) cr_expect(s.width[o] == width[o] && s.offset[o] == offset[o], "observable %d", o);
  for (int o = 0; o < 4; o++)
    for (int mi = 0; mi < 2; mi++)
      cr_expect_eq(s.absent[o * 2 + mi] != NULL, o == 3 && mi == 0, "observable %d, method %d", o, mi);
  for (int i = 0; i < 2 * 3 * 6; i++) cr_expect(isnan(s.values[i]), "value %d", i);
  nh_samples_free(&s);
  nh_study_free(&st);
}

/* nh_read_text reads a spec in chunks into a buffer it doubles from 4096 bytes: every byte comes
 * back whatever the length, also a last read of one byte (lengths 1 and 4096: 4095 bytes, then
 * one) and lengths at each doubling; past 1 MiB it refuses with EFBIG. The bytes are not text
 * (NULs and all 256 values) so that a byte lost or moved shows. */
Test(study_failures, read_text_every_length) {
  static const size_t lengths[] = {0, 1, 2, 4094, 4095, 4096, 4097, 8191, 8192, 1u << 20, (1u << 20) + 1};
  char path[64];
  snprintf(path, sizeof path, "/tmp/nhbench-read-text-%d", (int)getpid());
  static unsigned char bytes[(1u << 20) + 1];
  for (size_t i = 0; i < sizeof bytes; i++) bytes[i] = (unsigned char)(i * 7 + i / 251);
  for (size_t k = 0; k < sizeof lengths / sizeof *lengths; k++) {
    const size_t n = lengths[k];
    FILE *f = fopen(path, "wb");
    cr_assert(f && fwrite(bytes, 1, n, f) == n && fclose(f) == 0);
    errno = 0;
    char *text = nh_read_text(path);
    if (n > (1u << 20)) {
      cr_expect_null(text, "%zu bytes: past 1 MiB", n);
      cr_expect_eq(errno, EFBIG, "%zu bytes: errno %d", n, errno);
    } else {
      cr_assert_not_null(text, "%zu bytes", n);
      cr_expect(memcmp(text, bytes, n) == 0 && text[n] == '\0', "%zu bytes read back", n);
    }
    free(text);
  }
  remove(path);
  cr_expect_null(nh_read_text(path), "a missing file");
}
