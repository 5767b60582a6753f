/* Lockstep lanes (core/lanes.h, integrators/evolve.h, issue 51 item 4): every method with lanes
 * (compositions over a base with lanes included) on every system it applies to, stepped NH_LANES runs at a time, gives
 * each lane its scalar run's numbers bit for bit: the whole state (every field, those the method leaves alone
 * included), the cost counters, the status, the largest constraint residual. For every instruction set this CPU has;
 * with lanes that fail at their first step (a NaN), later (an overflow), or where the multiplier is undefined (q = 0,
 * where some systems' A(q) loses rank), and idle lanes. */
#define _POSIX_C_SOURCE 200809L /* setenv */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integrators/evolve.h"
#include "systems/defined.h"
#include "tests/helpers.h"

#define STEPS 40
/* Two step sizes: at 0.05, h / 6 and h · (1/6) happen to be one double; at 0.037 they are not. */
static const double step_sizes[] = {0.05, 0.037};
static double H = 0.05;

typedef struct {
  nh_state x;
  nh_cost cost;
  int status;
  double residual;
} scalar_run;

static scalar_run run_scalar(const nh_method *m, const nh_system *sys, const nh_state *x0) {
  nh_evolve e;
  nh_evolve_start(&e, m, sys, x0, H, 2);
  scalar_run r = {.status = nh_evolve_init(&e)};
  if (r.status == NH_STEP_OK) r.status = nh_evolve_steps(&e, STEPS, nh_evolve_track_residual, &r.residual);
  r.x = *e.x, r.cost = e.cost;
  return r;
}

/* The lanes' starting states: the default state, six perturbed ones (q and v moved by up to 0.3),
 * then one that fails: a NaN (lane 5), velocities near overflow (lane 6), q = 0 (lane 7). */
static void starting_states(const nh_system *sys, gsl_rng *rng, nh_state *x0) {
  nh_system_default_state(sys, &x0[0]);
  for (int l = 1; l < NH_LANES; l++) {
    x0[l] = x0[0];
    for (int i = 0; i < sys->n; i++)
      x0[l].q[i] += gsl_ran_flat(rng, -0.3, 0.3), x0[l].v[i] += gsl_ran_flat(rng, -0.3, 0.3);
  }
  x0[5].q[0] = NAN;
  for (int i = 0; i < sys->n; i++) x0[6].v[i] = 1e100 * (i + 1), x0[7].q[i] = 0;
}

static int same(const void *a, const void *b, size_t n) { return memcmp(a, b, n) == 0; }

/* Lanes against scalar runs for runs lanes in use; counts what failed where in failures. */
static void compare(const nh_method *m, const nh_system *sys, const nh_state *x0, int runs, int *failures) {
  char name[256];
  nh_method_format(m, name, sizeof name);
  nh_evolve_lanes e;
  nh_evolve_lanes_start(&e, m, sys, x0, runs, H, 2);
  nh_evolve_lanes_init(&e);
  int live = nh_evolve_lanes_steps(&e, STEPS, 1), still = 0;
  for (int l = 0; l < runs; l++) {
    const scalar_run s = run_scalar(m, sys, &x0[l]);
    nh_state x;
    nh_evolve_lanes_state(&e, l, &x, NULL, NULL);
    cr_expect(same(&x, &s.x, sizeof x),
              "%s on %s (%s), lane %d: the state differs (q0 %.17g vs %.17g, v0 %.17g vs %.17g)", name,
              nh_system_name(sys), nh_isa_name(nh_lanes_isa()), l, x.q[0], s.x.q[0], x.v[0], s.x.v[0]);
    cr_expect(same(&e.cost[l], &s.cost, sizeof s.cost),
              "%s on %s, lane %d: cost (steps %llu vs %llu, rhs %llu vs %llu)", name, nh_system_name(sys), l,
              e.cost[l].steps, s.cost.steps, e.cost[l].rhs_evals, s.cost.rhs_evals);
    cr_expect_eq(e.status[l], s.status, "%s on %s, lane %d: status %d, scalar %d", name, nh_system_name(sys), l,
                 e.status[l], s.status);
    cr_expect(same(&e.residual[l], &s.residual, sizeof s.residual), "%s on %s, lane %d: residual %.17g vs %.17g", name,
              nh_system_name(sys), l, e.residual[l], s.residual);
    cr_expect_eq(e.live[l], s.status == NH_STEP_OK);
    still += s.status == NH_STEP_OK;
    if (s.status != NH_STEP_OK) failures[s.status]++;
  }
  cr_expect_eq(live, still, "%s on %s: %d lanes live, %d runs went to the end", name, nh_system_name(sys), live, still);
  for (int l = runs; l < NH_LANES; l++) cr_expect_not(e.live[l], "idle lane %d runs", l);
}

/* Instances beyond the types' defaults, where a method's parameters choose another path: nh_newmark's
 * full Newton system with β and β' (symmetric or not), each discrete constraint, α at 0, ½, 1 and
 * between, and fast=0; its fast path (β = β' = 0) with α at 0, 1 and between. */
static const char *const instances[] = {
    "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)",
    "nh_newmark(beta=0.1,beta2=0.1,alpha=0)",
    "nh_newmark(beta=0.05,beta2=0.2,alpha=1,constraint=average)",
    "nh_newmark(beta=0.3,beta2=0,alpha=0.3)",
    "nh_newmark(beta=0,beta2=0.15,alpha=0.7,constraint=average)",
    "nh_newmark(fast=0,alpha=0.5)",
    "nh_newmark(alpha=1)",
    "nh_newmark(alpha=0.3,constraint=average)",
    "nh_newmark(alpha=0)",
};

/* Adds base, and every composition table over it that parses (a symmetric base of the table's
 * order), to names. */
static int add_with_compositions(const char *base, char (*names)[128], int count) {
  snprintf(names[count++], 128, "%s", base);
  for (int j = 0; nh_integrator_types[j]; j++) {
    char text[128], err[512];
    if (!nh_integrator_types[j]->takes_base || !nh_integrator_types[j]->step_lanes) continue;
    snprintf(text, sizeof text, "%s(%s)", nh_integrator_types[j]->name, base);
    nh_method *m = nh_method_parse(text, err, sizeof err);
    if (m && count < 128) memcpy(names[count++], text, 128);
    nh_method_free(m);
  }
  return count;
}

/* Every method with lanes: the types with step_lanes that take no base, the instances above, and
 * every composition table over each. */
static int lane_methods(char (*names)[128]) {
  int count = 0;
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    if (t->step_lanes && !t->takes_base) count = add_with_compositions(t->name, names, count);
  }
  for (size_t i = 0; i < sizeof instances / sizeof *instances; i++)
    count = add_with_compositions(instances[i], names, count);
  return count;
}

/* Systems beyond the registry's defaults, for lane paths the defaults do not reach: the knife edge
 * with m, J ≠ 1 has one constraint and a constant mass M ≠ I, while at their defaults the systems
 * with one constraint all have M = I (where the lane code skips the M⁻¹ products). */
static const struct { const char *name, *params; } with_params[] = {{"knife_edge", "m=2,J=0.5"}};

/* The systems of the comparison: the registry's at their defaults (j below its count), then
 * with_params; -1 past the last. */
static int lane_system(int j, nh_system *sys) {
  int registered = 0;
  while (nh_system_types[registered]) registered++;
  if (j < registered) *sys = test_system_of(nh_system_types[j], NULL);
  else if (j - registered < (int)(sizeof with_params / sizeof *with_params))
    *sys = test_system_of(nh_system_type_find(with_params[j - registered].name), with_params[j - registered].params);
  else return -1;
  return 0;
}

/* Every method with lanes on every system where it has them (the registry's, then with_params), on
 * instruction set isa (skipped where this CPU lacks it). */
static void every_method_on(nh_isa isa) {
  const nh_isa best = nh_lanes_isa();
  if (nh_lanes_use_isa(isa) != 0) cr_skip_test("this CPU has no %s", nh_isa_name(isa));
  gsl_rng *rng = test_rng(51);
  int pairs = 0, compositions = 0, alone = 0, failures[8] = {0};
  char names[128][128];
  const int count = lane_methods(names);
  for (int i = 0; i < count; i++) {
    nh_method *m = test_method(names[i]);
    nh_system sys;
    for (int j = 0; lane_system(j, &sys) == 0; j++) {
      char why[512];
      if (nh_method_applies(m, &sys, why, sizeof why) != 0) continue;
      if (!nh_method_has_lanes(m, &sys)) { /* herglotz on a system with forcing, ...: one at a time */
        alone++;
        continue;
      }
      nh_state x0[NH_LANES];
      starting_states(&sys, rng, x0);
      for (int k = 0; k < 2; k++) {
        H = step_sizes[k];
        compare(m, &sys, x0, NH_LANES, failures);
        compare(m, &sys, x0, 3, failures); /* five idle lanes */
      }
      pairs++, compositions += m->base != NULL;
    }
    nh_method_free(m);
  }
  nh_lanes_use_isa(best);
  cr_log_info("%s: %d (method, system) pairs (%d of compositions), %d more one at a time; lanes failed %d times "
              "(solver), %d (not finite)",
              nh_isa_name(isa), pairs, compositions, alone, failures[NH_STEP_SOLVER_FAILED],
              failures[NH_STEP_NONFINITE]);
  cr_expect_gt(compositions, 0, "no composition steps in lanes");
  cr_expect_geq(pairs, 19, "rk4 alone applies to every system");
  cr_expect_gt(alone, 0, "every method stepped in lanes everywhere: the herglotz schemes' limits untested");
  cr_expect_gt(failures[NH_STEP_SOLVER_FAILED], 0, "no lane met an undefined multiplier");
  cr_expect_gt(failures[NH_STEP_NONFINITE], 0, "no lane went non-finite");
  gsl_rng_free(rng);
}

Test(lanes, every_method_with_lanes_on_every_system_bit_for_bit_sse2, .timeout = 240) { every_method_on(NH_ISA_SSE2); }
Test(lanes, every_method_with_lanes_on_every_system_bit_for_bit_avx2, .timeout = 240) { every_method_on(NH_ISA_AVX2); }
Test(lanes, every_method_with_lanes_on_every_system_bit_for_bit_avx512, .timeout = 240) {
  every_method_on(NH_ISA_AVX512);
}

/* A system no built-in is: a constant mass, one linear constraint and damping without forcing, where
 * the Herglotz schemes step in lanes with their damping factors (written as a definition and
 * interpreted, so that no compiler is needed and every kernel goes lane by lane). */
Test(lanes, herglotz_with_damping_bit_for_bit) {
  static const char *const coords[] = {"x", "y", "z"};
  static const char *const row[] = {"1", "z", "0"};
  nh_system_definition def = {.name = "damped_rolling", .n = 3, .k = 1, .mass_identity = 1, .sample_box = 1};
  for (int i = 0; i < 3; i++) def.coords[i] = coords[i], def.constraints[i].text = row[i];
  def.potential.text = "0.5*(x^2 + y^2 + z^2) + 0.1*x*y*z";
  def.damping.text = "0.3";
  const void *origin;
  char err[1024], note[1024];
  nh_defined_system *d =
      nh_defined_system_build(&def, NH_DEFINED_INTERPRETED, &origin, err, sizeof err, note, sizeof note);
  cr_assert(d, "%s", err);
  nh_system sys;
  cr_assert_eq(nh_system_init(&sys, nh_defined_system_type(d)), 0);
  gsl_rng *rng = test_rng(52);
  nh_state x0[NH_LANES];
  starting_states(&sys, rng, x0);
  int failures[8] = {0}, checked = 0;
  static const char *const schemes[] = {"herglotz2", "herglotz1", "la1", "triple_jump(herglotz2)"};
  for (size_t i = 0; i < sizeof schemes / sizeof *schemes; i++) {
    nh_method *m = test_method(schemes[i]);
    cr_assert_eq(nh_method_applies(m, &sys, err, sizeof err), 0, "%s: %s", schemes[i], err);
    cr_assert(nh_method_has_lanes(m, &sys), "%s has no lanes on a damped, unforced system", schemes[i]);
    for (int k = 0; k < 2; k++) {
      H = step_sizes[k];
      compare(m, &sys, x0, NH_LANES, failures);
    }
    checked++;
    nh_method_free(m);
  }
  cr_expect_eq(checked, 4);
  gsl_rng_free(rng);
  nh_defined_system_free(d);
}

/* The comparison sees one ulp: a lane moved by one ulp at the start ends elsewhere. */
Test(lanes, comparison_sees_one_ulp) {
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_method *m = test_method("rk4");
  nh_state x0[NH_LANES], moved;
  for (int l = 0; l < NH_LANES; l++) nh_system_default_state(&sys, &x0[l]);
  moved = x0[0];
  moved.q[0] = nextafter(moved.q[0], 2);
  nh_evolve_lanes e;
  nh_evolve_lanes_start(&e, m, &sys, x0, NH_LANES, H, 0);
  nh_evolve_lanes_init(&e);
  nh_evolve_lanes_steps(&e, STEPS, 0);
  nh_state x;
  nh_evolve_lanes_state(&e, 0, &x, NULL, NULL);
  const scalar_run a = run_scalar(m, &sys, &x0[0]), b = run_scalar(m, &sys, &moved);
  cr_expect(same(&x, &a.x, sizeof x));
  cr_expect_not(same(&x, &b.x, sizeof x));
  nh_method_free(m);
}

/* The instruction sets: names, the one in use is one this CPU has, and NHBENCH_ISA's choice. */
Test(lanes, instruction_sets) {
  cr_expect_str_eq(nh_isa_name(NH_ISA_SSE2), "sse2");
  cr_expect_str_eq(nh_isa_name(NH_ISA_AVX2), "avx2");
  cr_expect_str_eq(nh_isa_name(NH_ISA_AVX512), "avx512");
  cr_expect_str_eq(nh_isa_name(NH_ISA_COUNT), "?");
  cr_expect(nh_isa_supported(NH_ISA_SSE2));
  cr_expect_not(nh_isa_supported(NH_ISA_COUNT));
  cr_expect(nh_isa_supported(nh_lanes_isa()));
  cr_expect_eq(nh_lanes_use_isa(NH_ISA_COUNT), -1);
  for (int i = 0; i < NH_ISA_COUNT; i++)
    if (nh_isa_supported((nh_isa)i)) {
      cr_expect_eq(nh_lanes_use_isa((nh_isa)i), 0);
      cr_expect_eq(nh_lanes_isa(), (nh_isa)i);
    }
}

/* NHBENCH_ISA picks the instruction set at the first call (each test is a process of its own: this
 * one decides first); a name the CPU lacks, or no name, leaves the widest it has. */
Test(lanes, nhbench_isa_chooses_at_the_first_call) {
  setenv("NHBENCH_ISA", "sse2", 1);
  cr_expect_eq(nh_lanes_isa(), NH_ISA_SSE2);
  unsetenv("NHBENCH_ISA");
  cr_expect_eq(nh_lanes_isa(), NH_ISA_SSE2, "decided once");
}

Test(lanes, nhbench_isa_unknown_name_takes_the_widest) {
  setenv("NHBENCH_ISA", "neon", 1);
  nh_isa widest = NH_ISA_SSE2;
  for (int i = 0; i < NH_ISA_COUNT; i++)
    if (nh_isa_supported((nh_isa)i)) widest = (nh_isa)i;
  cr_expect_eq(nh_lanes_isa(), widest);
  unsetenv("NHBENCH_ISA");
}

/* nh_lanes_project_onto against nh_project_onto lane by lane on sys, at the instruction set in use:
 * random A and v, lane 3 with A = 0 and a −0 in v, lane 5 with its first row doubled into the second,
 * lane 6 with an entry 1e200, lane 7 with a NaN in A and a −0 in v (all refused: the status must say
 * so, and v be left as the scalar leaves it, −0 kept). Returns the lanes the scalar refuses. */
static int projection_check(gsl_rng *rng, const nh_system *sys) {
  const int n = sys->n, k = sys->k;
  const char *isa = nh_isa_name(nh_lanes_isa());
  double A[NH_MAX_K * NH_MAX_N * NH_LANES], v[NH_MAX_N * NH_LANES], y[NH_MAX_K * NH_LANES];
  int status[NH_LANES], refused = 0;
  for (int i = 0; i < k * n * NH_LANES; i++) A[i] = gsl_ran_flat(rng, -1, 1);
  for (int i = 0; i < n * NH_LANES; i++) v[i] = gsl_ran_flat(rng, -1, 1);
  for (int i = 0; i < k * n; i++) A[i * NH_LANES + 3] = 0;
  for (int i = 0; k >= 2 && i < n; i++) A[(n + i) * NH_LANES + 5] = 2 * A[i * NH_LANES + 5];
  A[6] = 1e200;                    /* lane 6: |A|² overflows, C is not finite */
  A[(n - 1) * NH_LANES + 7] = NAN; /* lane 7: C is NaN */
  v[3] = -0.0, v[(n - 1) * NH_LANES + 7] = -0.0;
  double v0[NH_MAX_N * NH_LANES];
  memcpy(v0, v, sizeof v);
  nh_lanes_project_onto(sys, A, v, y, status);
  for (int l = 0; l < NH_LANES; l++) {
    double Al[NH_MAX_K * NH_MAX_N], vl[NH_MAX_N], yl[NH_MAX_K];
    for (int i = 0; i < k * n; i++) Al[i] = A[i * NH_LANES + l];
    for (int i = 0; i < n; i++) vl[i] = v0[i * NH_LANES + l];
    const int rc = nh_project_onto(sys, NULL, Al, NULL, vl, yl);
    cr_expect_eq(status[l], rc, "%s at %s, lane %d: status %d, scalar %d", sys->type->name, isa, l, status[l], rc);
    refused += rc != 0;
    for (int i = 0; i < n; i++)
      cr_expect(same(&v[i * NH_LANES + l], &vl[i], sizeof(double)), "%s at %s, lane %d: v[%d] %a, scalar %a",
                sys->type->name, isa, l, i, v[i * NH_LANES + l], vl[i]);
    for (int a = 0; rc == 0 && a < k; a++)
      cr_expect(same(&y[a * NH_LANES + l], &yl[a], sizeof(double)), "%s at %s, lane %d: y[%d]", sys->type->name, isa, l,
                a);
  }
  return refused;
}

/* projection_check on every system with constraints and a constant mass (the unit-mass
 * one-constraint pass in lanes, the others lane by lane), on every instruction set of this CPU. */
Test(lanes, projection_against_the_scalar_one) {
  gsl_rng *rng = test_rng(17);
  int checks = 0, refused = 0;
  const nh_isa chosen = nh_lanes_isa();
  for (int isa = 0; isa < NH_ISA_COUNT; isa++) {
    if (nh_lanes_use_isa((nh_isa)isa) != 0) continue;
    for (int j = 0; nh_system_types[j]; j++) {
      nh_system sys = test_system_of(nh_system_types[j], NULL);
      if (sys.k == 0 || !sys.constant_mass) continue;
      refused += projection_check(rng, &sys);
      checks++;
    }
  }
  nh_lanes_use_isa(chosen);
  cr_expect_geq(checks, 5);
  cr_expect_geq(refused, 3 * checks, "every system has three refused lanes (lanes 3, 6 and 7)");
  gsl_rng_free(rng);
}
