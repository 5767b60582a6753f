/* Sampled runs in lanes (studies/sampling.h, nh_sampled_runs_go; issue 51 items 1 and 4): a group
 * of runs stepped in lanes gives every run what nh_sampled_run_go gives it alone, to the bit: dE at
 * every sample, every observable's values (the reference's among them), the samples reached, the
 * status, max |dE|, the largest residual, the final state, the cost and the return value, for rk4 and
 * nh_rattle (whose multiplier, discrete energy and discrete constraint read the states one and two
 * steps back). With runs
 * that diverge at different samples, fail at their first step or later, a group smaller than the
 * lanes, and the lanes switched off (NHBENCH_LANES=off: the same numbers, one by one). */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "studies/sampling.h"
#include "studies/study.h"
#include "tests/helpers.h"

#define NSAMPLES 9
#define EVERY 5

static void load(const char *system, nh_study *st) {
  char path[128], text[1024], err[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-lanes-%d.cfg", (int)getpid());
  snprintf(text, sizeof text,
           "study = \"trajectory\";\nsystem = \"%s\";\nT = 1.0;\nh = [0.05];\nmethods = [\"rk4\", \"nh_rattle\"];\n"
           "observables = [\"energy_error\", \"error\", \"constraint_residual\", \"continuous_multiplier\", "
           "\"multiplier\", \"multiplier_error\", \"discrete_energy\", \"discrete_constraint\"];\n",
           system);
  test_write_file(path, text);
  cr_assert_eq(nh_study_load(path, NULL, 0, st, err, sizeof err), 0, "%s", err);
  remove(path);
}

typedef struct {
  double dE[NSAMPLES];
  double values[NSAMPLES * 64];
} rows;

static int method = 0; /* the method of st the runs take */

static nh_sampled_run run_of(const nh_study *st, const nh_samples *layout, const nh_state *x0, double divergence,
                             rows *out) {
  nh_sampled_run r = {.st = st,
                      .m = st->methods[method],
                      .method_index = method,
                      .h = 0.05,
                      .nsteps = (long)EVERY * (NSAMPLES - 1),
                      .K = EVERY,
                      .x0 = *x0,
                      .divergence = divergence,
                      .layout = layout,
                      .values = out->values,
                      .dE = out->dE};
  return r;
}

static int same(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }

/* The group's runs against each run alone. */
static void compare_group(const nh_study *st, const nh_state *x0, const double *divergence, int count) {
  nh_samples layout;
  cr_assert_eq(nh_samples_init(&layout, st, 1, NSAMPLES), 0);
  cr_assert_leq(layout.row * NSAMPLES, 64 * NSAMPLES);
  static rows lanes[NH_LANES], alone[NH_LANES];
  nh_sampled_run g[NH_LANES], a[NH_LANES];
  for (int l = 0; l < count; l++) {
    g[l] = run_of(st, &layout, &x0[l], divergence[l], &lanes[l]);
    a[l] = run_of(st, &layout, &x0[l], divergence[l], &alone[l]);
  }
  const int rc = nh_sampled_runs_go(g, count);
  int rc_alone = 0;
  for (int l = 0; l < count; l++) {
    const int got = nh_sampled_run_go(&a[l]);
    if (got < 0 && rc_alone == 0) rc_alone = got;
  }
  cr_expect_eq(rc, rc_alone);
  const char *sys = nh_system_name(&st->sys);
  for (int l = 0; l < count; l++) {
    cr_expect_eq(g[l].status, a[l].status, "%s, run %d: status %d, alone %d", sys, l, g[l].status, a[l].status);
    cr_expect_eq(g[l].reached, a[l].reached, "%s, run %d: reached %d, alone %d", sys, l, g[l].reached, a[l].reached);
    cr_expect_eq(g[l].error, a[l].error, "%s, run %d", sys, l);
    cr_expect(same(&g[l].max_abs_dE, &a[l].max_abs_dE, sizeof(double)), "%s, run %d: max|dE|", sys, l);
    cr_expect(same(&g[l].max_residual, &a[l].max_residual, sizeof(double)), "%s, run %d: residual %.17g vs %.17g", sys,
              l, g[l].max_residual, a[l].max_residual);
    cr_expect(same(&g[l].final, &a[l].final, sizeof(nh_state)), "%s, run %d: final state", sys, l);
    cr_expect(same(&g[l].cost, &a[l].cost, sizeof(nh_cost)), "%s, run %d: cost", sys, l);
    cr_expect(same(lanes[l].dE, alone[l].dE, sizeof lanes[l].dE), "%s, run %d: dE", sys, l);
    cr_expect(same(lanes[l].values, alone[l].values, sizeof(double) * (size_t)layout.row * NSAMPLES),
              "%s, run %d: observables", sys, l);
  }
  nh_samples_free(&layout);
}

/* Eight runs from the default state moved a little, run 5 from a NaN, run 6 from velocities that
 * overflow; divergence bounds that stop runs 1 and 3 at different samples: each at the first sample
 * from 2 (run 1), after run 1's stop (run 3) where its |dE| alone exceeds every earlier one, the
 * bound halfway between. stop[l]: the samples the run then reaches (0: no such sample, no bound;
 * the_group_holds_every_outcome requires both for rk4). */
static void group_of(const nh_study *st, nh_state *x0, double *divergence, int *stop) {
  nh_system_default_state(&st->sys, &x0[0]);
  for (int l = 0; l < NH_LANES; l++) {
    x0[l] = x0[0];
    for (int i = 0; l && i < st->sys.n; i++) x0[l].q[i] += 0.05 * l * (i % 2 ? 1 : -1);
    divergence[l] = 0, stop[l] = 0;
  }
  x0[5].v[0] = NAN;
  for (int i = 0; i < st->sys.n; i++) x0[6].v[i] = 1e150;
  for (int which = 1; which <= 3; which += 2) {
    static rows scratch;
    nh_sampled_run r = run_of(st, NULL, &x0[which], 0, &scratch);
    cr_assert_eq(nh_sampled_run_go(&r), 0);
    const double E0 = nh_energy(&st->sys, x0[which].q, x0[which].v);
    double below = fabs(scratch.dE[0]);
    const int from = which == 1 ? 2 : stop[1] + 1; /* run 3 stops later than run 1 */
    for (int s = 1; s < NSAMPLES && !stop[which]; s++) {
      if (s >= from && fabs(scratch.dE[s]) > below)
        divergence[which] = (below + fabs(scratch.dE[s])) / 2 / fmax(1, fabs(E0)), stop[which] = s + 1;
      below = fmax(below, fabs(scratch.dE[s]));
    }
  }
}

static void check_system(const char *system) {
  nh_study st;
  load(system, &st);
  nh_state x0[NH_LANES];
  double divergence[NH_LANES];
  int stop[NH_LANES];
  for (method = 0; method < st.nmethods; method++) {
    group_of(&st, x0, divergence, stop);
    compare_group(&st, x0, divergence, NH_LANES);
    compare_group(&st, x0 + 1, divergence + 1, 4); /* four idle lanes */
  }
  method = 0;
  nh_study_free(&st);
}

/* The chaotic particle (its own lane kernels) and the knife edge (the scalar kernels lane by lane,
 * an exact solution for `error`). */
Test(sampled_lanes, groups_match_runs_alone) {
  cr_assert(nh_lanes_enabled(), "NHBENCH_LANES is set: %s", getenv("NHBENCH_LANES"));
  check_system("chaotic_particle");
  check_system("knife_edge");
}

/* The runs that stop do stop where expected, so that the test above compares runs that stop. */
Test(sampled_lanes, the_group_holds_every_outcome) {
  nh_study st;
  load("chaotic_particle", &st);
  nh_state x0[NH_LANES];
  double divergence[NH_LANES];
  int stop[NH_LANES];
  group_of(&st, x0, divergence, stop);
  nh_samples layout;
  cr_assert_eq(nh_samples_init(&layout, &st, 1, NSAMPLES), 0);
  static rows out[NH_LANES];
  nh_sampled_run g[NH_LANES];
  for (int l = 0; l < NH_LANES; l++) g[l] = run_of(&st, &layout, &x0[l], divergence[l], &out[l]);
  cr_assert_eq(nh_sampled_runs_go(g, NH_LANES), 0);
  cr_assert(stop[1] > 0 && stop[1] < stop[3], "runs 1 and 3 stop at samples %d and %d", stop[1], stop[3]);
  for (int l = 1; l <= 3; l += 2)
    cr_expect(g[l].status == NH_RUN_DIVERGED && g[l].reached == stop[l], "run %d: status %d, reached %d", l,
              g[l].status, g[l].reached);
  cr_expect(g[5].status == NH_STEP_NONFINITE && g[5].reached == 1, "run 5: status %d, reached %d", g[5].status,
            g[5].reached);
  cr_expect(g[6].status == NH_STEP_NONFINITE && g[6].reached >= 1 && g[6].reached < NSAMPLES,
            "run 6: status %d, reached %d", g[6].status, g[6].reached);
  for (int l = 0; l < NH_LANES; l++)
    if (l != 1 && l != 3 && l != 5 && l != 6) cr_expect(g[l].status == NH_STEP_OK && g[l].reached == NSAMPLES);
  nh_samples_free(&layout);
  nh_study_free(&st);
}

/* NHBENCH_LANES=off: one by one, the same numbers (what the benchmarks compare against). */
Test(sampled_lanes, lanes_can_be_switched_off) {
  setenv("NHBENCH_LANES", "off", 1);
  cr_expect_not(nh_lanes_enabled());
  setenv("NHBENCH_LANES", "1", 1);
  cr_expect_not(nh_lanes_enabled());
  setenv("NHBENCH_LANES", "0", 1);
  cr_expect_not(nh_lanes_enabled());
  setenv("NHBENCH_LANES", "on", 1);
  cr_expect(nh_lanes_enabled());
  setenv("NHBENCH_LANES", "off", 1);
  check_system("chaotic_particle");
  unsetenv("NHBENCH_LANES");
  cr_expect(nh_lanes_enabled());
}
