/* SUNDIALS IDA and CVODE (integrators/sundials.c), part of `make test SUNDIALS=1` (and of CI);
 * without -DNHBENCH_SUNDIALS=ON this file compiles to nothing. The true solutions are the systems' exact
 * ones (the free particle of spec/rattle.md §4 in closed form, the knife edge, the harmonic
 * oscillator); nothing is compared with an earlier run's output. */
#ifdef NHBENCH_SUNDIALS
#include <criterion/criterion.h>
#include <cvode/cvode.h>
#include <ida/ida.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <string.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "integrators/sundials.h"
#include "tests/helpers.h"

/* Runs `text` from x0 over nsteps steps of size h; the status, the final state in *x, the work in
 * *cost and the largest |A v + b| along the run in *residual. */
static int run(const char *text, const nh_system *sys, const nh_state *x0, double h, int nsteps, nh_state *x,
               nh_cost *cost, double *residual) {
  nh_method *m = test_method(text);
  *x = *x0;
  memset(cost, 0, sizeof *cost);
  *residual = 0;
  int st = nh_method_init(m, sys, x, h, cost);
  for (int s = 0; s < nsteps && st == NH_STEP_OK; s++) {
    nh_state y;
    if ((st = nh_method_step(m, sys, x, &y, h, cost)) != NH_STEP_OK) break;
    cr_assert_float_eq(y.t, x->t + h, 1e-15, "%s: a step ends at t + h", text);
    *x = y;
    *residual = fmax(*residual, nh_constraint_residual(sys, x->q, x->v));
  }
  nh_method_free(m);
  return st;
}

/* max |(q, v) − exact| at x->t. */
static double error_vs_exact(const nh_system *sys, const nh_state *x0, const nh_state *x) {
  nh_state ex;
  cr_assert_eq(nh_exact_solution(sys, x0, x->t, &ex), 0, "%s has an exact solution here", sys->type->name);
  double e = 0;
  for (int i = 0; i < sys->n; i++) e = fmax(e, fmax(fabs(x->q[i] - ex.q[i]), fabs(x->v[i] - ex.v[i])));
  return e;
}

/* The particle's state of spec/rattle.md §4 C, q0 = (0, 1, 0), v0 = (1, 1, 1) on D (ż = y ẋ). */
static nh_state particle_state(void) {
  nh_state x = {0};
  x.q[1] = 1, x.v[0] = x.v[1] = x.v[2] = 1;
  return x;
}

/* The global error follows the tolerance: from rtol = atol = 1e-4 to 1e-8 it falls by more than
 * 10^2 (BDF error control is not proportional, but a solver that ignored rtol would not fall at
 * all), stays within 100 tol at every tolerance, and is far above round-off at the loose one
 * (negative control: the loose run is not accidentally exact). */
static void check_tolerance_scaling(const char *family, const char *system, const nh_state *given) {
  nh_system sys = test_system(system, "");
  nh_state x0;
  if (given) x0 = *given;
  else nh_system_default_state(&sys, &x0);
  const double tols[] = {1e-4, 1e-6, 1e-8};
  double err[3];
  for (int i = 0; i < 3; i++) {
    char text[128];
    snprintf(text, sizeof text, "%s(rtol=%g,atol=%g)", family, tols[i], tols[i]);
    nh_state x;
    nh_cost cost;
    double res;
    cr_assert_eq(run(text, &sys, &x0, 0.1, 20, &x, &cost, &res), NH_STEP_OK, "%s on %s", text, system);
    err[i] = error_vs_exact(&sys, &x0, &x);
    cr_expect_lt(err[i], 100 * tols[i], "%s on %s: error %.3e at T = 2", text, system, err[i]);
  }
  cr_expect_gt(err[0], 1e-9, "%s on %s: the loose run is not exact (%.3e)", family, system, err[0]);
  cr_expect_gt(err[0], 1e2 * err[2], "%s on %s: error %.3e at tol 1e-4, %.3e at 1e-8", family, system, err[0],
               err[2]);
}

Test(sundials, ida_error_follows_tolerance) {
  const nh_state p = particle_state();
  check_tolerance_scaling("ida", "particle", &p);
  check_tolerance_scaling("ida", "knife_edge", NULL);
  check_tolerance_scaling("ida", "oscillator", NULL); /* k = 0: the plain ODE as a DAE */
}

Test(sundials, cvode_error_follows_tolerance) {
  const nh_state p = particle_state();
  check_tolerance_scaling("cvode", "particle", &p);
  check_tolerance_scaling("cvode", "knife_edge", NULL);
  check_tolerance_scaling("cvode", "oscillator", NULL);
}

/* IDA keeps A v + b = 0 as an equation of every step (to its Newton tolerance, below atol);
 * CVODE on the index-reduced ODE only keeps its derivative, so its residual drifts far more
 * (the negative control: the constraint is not kept for free). Knife edge, rtol = atol = 1e-6. */
Test(sundials, ida_keeps_the_constraint) {
  nh_system sys = test_system("knife_edge", "");
  nh_state x0, x;
  nh_system_default_state(&sys, &x0);
  nh_cost cost;
  double res_ida, res_cvode;
  cr_assert_eq(run("ida", &sys, &x0, 0.1, 20, &x, &cost, &res_ida), NH_STEP_OK);
  cr_assert_eq(run("cvode", &sys, &x0, 0.1, 20, &x, &cost, &res_cvode), NH_STEP_OK);
  cr_expect_lt(res_ida, 1e-6, "ida: max |A v + b| = %.3e", res_ida);
  cr_expect_gt(res_cvode, 10 * res_ida, "cvode %.3e against ida %.3e", res_cvode, res_ida);
}

/* IDA's λ at t_{k+1} is the multiplier of the exact solution there (nh_multiplier at the exact
 * state, an independent closed form): a sign or index error in A^T λ would miss it by O(|λ|). */
Test(sundials, ida_multiplier_is_the_exact_one) {
  nh_system sys = test_system("particle", "");
  const nh_state x0 = particle_state();
  nh_state x, ex;
  nh_cost cost;
  double res, lam[NH_MAX_K];
  cr_assert_eq(run("ida(rtol=1e-8,atol=1e-8)", &sys, &x0, 0.1, 20, &x, &cost, &res), NH_STEP_OK);
  cr_assert_eq(nh_exact_solution(&sys, &x0, x.t, &ex), 0);
  cr_assert_eq(nh_multiplier(&sys, ex.t, ex.q, ex.v, lam), 0);
  cr_expect_gt(fabs(lam[0]), 1e-2, "the test needs a multiplier away from 0 (%.3e)", lam[0]);
  cr_expect_float_eq(x.lambda[0], lam[0], 1e-5, "ida λ %.10f, exact %.10f", x.lambda[0], lam[0]);
}

/* The work counters: positive, growing with a tighter tolerance, at least one internal step per
 * nhbench step (the stop time), and at least the evaluations the solver must make: one residual per
 * Newton iteration and len per difference-quotient Jacobian (dense DQ, one per column). */
static void check_work(const char *family, int len) {
  nh_system sys = test_system("knife_edge", "");
  nh_state x0, x;
  nh_system_default_state(&sys, &x0);
  nh_cost c[2];
  double res;
  for (int i = 0; i < 2; i++) {
    char text[128];
    snprintf(text, sizeof text, "%s(rtol=%g,atol=%g)", family, i ? 1e-8 : 1e-4, i ? 1e-8 : 1e-4);
    cr_assert_eq(run(text, &sys, &x0, 0.1, 20, &x, &c[i], &res), NH_STEP_OK);
    cr_expect_geq(c[i].steps, 20, "%s: %llu internal steps", text, c[i].steps);
    cr_expect_gt(c[i].jacobian_evals, 0, "%s", text);
    cr_expect_geq(c[i].rhs_evals, c[i].newton_iterations + (unsigned long long)len * c[i].jacobian_evals,
                  "%s: %llu evaluations, %llu iterations, %llu Jacobians", text, c[i].rhs_evals,
                  c[i].newton_iterations, c[i].jacobian_evals);
    cr_expect_eq(c[i].constraint_evals, c[i].rhs_evals, "%s: each evaluation assembles A once (k = 1)", text);
    cr_expect_geq(c[i].linear_solves, c[i].newton_iterations, "%s", text);
  }
  cr_expect_gt(c[1].steps, c[0].steps, "%s: steps %llu at 1e-8, %llu at 1e-4", family, c[1].steps, c[0].steps);
  cr_expect_gt(c[1].rhs_evals, c[0].rhs_evals, "%s", family);
  cr_expect_gt(c[1].newton_iterations, c[0].newton_iterations, "%s", family);
}

Test(sundials, work_is_counted) {
  check_work("ida", 2 * 3 + 1); /* knife edge: n = 3, k = 1; unknowns (q, v, λ) */
  check_work("cvode", 2 * 3);
}

/* A solver failure ends the run with NH_STEP_SOLVER_FAILED and a message naming the solver's flag
 * and the time it reached: with one internal step allowed per nhbench step of size 1, IDA stops
 * after its first (small) step, strictly inside (0, 1). The same run with the default limit
 * completes and leaves no failure (negative control). */
Test(sundials, failure_names_its_time) {
  nh_system sys = test_system("knife_edge", "");
  nh_state x0, x;
  nh_system_default_state(&sys, &x0);
  nh_cost cost;
  double res;
  cr_assert_eq(run("ida(max_steps=1)", &sys, &x0, 1.0, 1, &x, &cost, &res), NH_STEP_SOLVER_FAILED);
  const char *msg = nh_sundials_last_failure("ida");
  cr_expect(strstr(msg, "IDA_TOO_MUCH_WORK"), "message: %s", msg);
  const char *at = strstr(msg, "Failure at t = ");
  cr_assert(at, "message: %s", msg);
  const double t = strtod(at + strlen("Failure at t = "), NULL);
  cr_expect(t > 0 && t < 1, "failure time %g in (0, 1): %s", t, msg);
  cr_expect_eq(cost.steps, 1, "one internal step was allowed, %llu taken", cost.steps);
  cr_assert_eq(run("ida", &sys, &x0, 1.0, 1, &x, &cost, &res), NH_STEP_OK);
  cr_expect_str_empty(nh_sundials_last_failure("ida"));
  cr_assert_eq(run("cvode(max_steps=1)", &sys, &x0, 1.0, 1, &x, &cost, &res), NH_STEP_SOLVER_FAILED);
  msg = nh_sundials_last_failure("cvode");
  cr_expect(strstr(msg, "CV_TOO_MUCH_WORK") && strstr(msg, "Failure at t = "), "%s", msg);
}

/* A step from a state other than the one the solver returned last re-initialises it there: after
 * two steps, a step from x0 again (no nh_method_init) gives the first step's result bit for bit,
 * with the same work as init + first step (the solver's counters restart at 0). Without the
 * re-initialisation the solver would go on from t = 2h and the step would fail or land elsewhere. */
static void check_restart(const char *text) {
  nh_system sys = test_system("knife_edge", "");
  nh_method *m = test_method(text);
  nh_state x0, x, y1, y2, y1b, y2b;
  nh_system_default_state(&sys, &x0);
  const size_t bytes = sizeof(double) * (size_t)sys.n; /* the entries a step writes */
  nh_cost c1 = {0}, c2 = {0}, c3 = {0};
  const double h = 0.1;
  x = x0;
  cr_assert_eq(nh_method_init(m, &sys, &x, h, &c1), NH_STEP_OK);
  cr_assert_eq(nh_method_step(m, &sys, &x, &y1, h, &c1), NH_STEP_OK);
  cr_assert_eq(nh_method_step(m, &sys, &y1, &y2, h, &c2), NH_STEP_OK);
  cr_expect_neq(memcmp(y1.q, y2.q, bytes), 0, "%s: the run moves", text);
  cr_assert_eq(nh_method_step(m, &sys, &x0, &y1b, h, &c3), NH_STEP_OK);
  cr_expect_eq(memcmp(y1.q, y1b.q, bytes), 0, "%s: q after restart", text);
  cr_expect_eq(memcmp(y1.v, y1b.v, bytes), 0, "%s: v after restart", text);
  cr_expect_eq(c3.rhs_evals, c1.rhs_evals, "%s: evaluations %llu, first %llu", text, c3.rhs_evals, c1.rhs_evals);
  cr_expect_eq(c3.steps, c1.steps, "%s", text);
  /* Continuing from the restarted state's result is a continuation, not another restart. */
  nh_cost c4 = {0};
  cr_assert_eq(nh_method_step(m, &sys, &y1b, &y2b, h, &c4), NH_STEP_OK);
  cr_expect_eq(memcmp(y2.q, y2b.q, bytes), 0, "%s: second step after restart", text);
  cr_expect_eq(c4.rhs_evals, c2.rhs_evals, "%s", text);
  nh_method_free(m);
}

Test(sundials, restart_when_the_state_is_reset) {
  check_restart("ida");
  check_restart("cvode");
}
/* Compositions refuse a tolerance-driven base (integrators/compose.c); a fixed-step base is the
 * control that the refusal is about ida and cvode, not about compositions. */
Test(sundials, compositions_refuse_tolerance_driven_bases) {
  const char *refused[] = {"triple_jump(ida)", "adjoint_pair(cvode)", "yoshida6(ida)"};
  char err[512];
  for (int i = 0; i < 3; i++) {
    nh_method *m = nh_method_parse(refused[i], err, sizeof err);
    cr_expect(m == NULL, "%s was accepted", refused[i]);
    if (m) nh_method_free(m);
    else cr_expect(strstr(err, "tolerance-driven") != NULL, "%s: %s", refused[i], err);
  }
  nh_method *ok = nh_method_parse("triple_jump(contact2)", err, sizeof err);
  cr_expect(ok != NULL, "control triple_jump(contact2) refused: %s", err);
  nh_method_free(ok);
}

/* integrators/sundials.c (ida, cvode): checks added for mutation robustness (issue 16). Every
 * expected value is a system's exact solution, nh_multiplier at that exact state, a count the
 * header of integrators/sundials.c states, or a fresh run of the same configuration (the
 * continuation rules: a step that should re-initialise gives what init + step gives, bit for bit).
 * Without -DNHBENCH_SUNDIALS=ON this file compiles to nothing. */

/* Steps x0 nsteps times with h (after nh_method_init); the final state in *x, work in *cost. */
static nh_step_status run_steps(const nh_method *m, const nh_system *sys, const nh_state *x0, double h, int nsteps,
                                nh_state *x, nh_cost *cost) {
  *x = *x0;
  nh_step_status st = nh_method_init(m, sys, x, h, cost);
  for (int s = 0; s < nsteps && st == NH_STEP_OK; s++) {
    nh_state y;
    st = nh_method_step(m, sys, x, &y, h, cost);
    if (st == NH_STEP_OK) *x = y;
  }
  return st;
}

/* max over q, v of |x − exact| / (1 + |exact|). */
static double rel_error(const nh_system *sys, const nh_state *x0, const nh_state *x) {
  nh_state ex;
  cr_assert_eq(nh_exact_solution(sys, x0, x->t, &ex), 0, "%s: exact solution from this state", sys->type->name);
  double e = 0;
  for (int i = 0; i < sys->n; i++) {
    e = fmax(e, fabs(x->q[i] - ex.q[i]) / (1 + fabs(ex.q[i])));
    e = fmax(e, fabs(x->v[i] - ex.v[i]) / (1 + fabs(ex.v[i])));
  }
  return e;
}

typedef struct {
  const char *system, *params, *preset; /* preset NULL: the default state */
  double h;
} feature_case;

/* Every force and constraint term of IDA's residual F and of CVODE's right-hand side, each against
 * a system with that term and an exact solution: a variable mass matrix and a forcing (falling disk
 * Exp 1, with damping), an affine constraint b(q) and damping (Foucault pendulum), damping and a
 * time-dependent forcing (damped oscillator with β = 0.3), a time-dependent damping α(t) (Lane–Emden
 * n = 1). At rtol = atol = 1e-10 the error over 8 steps stays below 1e-6 (a wrong sign or a
 * missing term in F moves the solution by O(h) per step, far above that), in both directions of
 * time; IDA's multiplier is the exact solution's (nh_multiplier at the exact state). */
static const feature_case feature_cases[] = {
    {"falling_disk", "alpha=0.1", "exp1", 0.125},
    {"foucault_pendulum", "", NULL, 0.5},
    {"damped_oscillator", "beta=0.3", NULL, 0.25},
    {"lane_emden", "n=1", NULL, 0.1} /* backward: t >= -0.8 > -t0 = -1, where alpha(t) = 2/(t + t0) blows up */,
};

static void check_features(const char *family, double direction) {
  char text[128];
  snprintf(text, sizeof text, "%s(rtol=1e-10,atol=1e-10)", family);
  nh_method *m = test_method(text);
  for (size_t c = 0; c < sizeof feature_cases / sizeof *feature_cases; c++) {
    const feature_case *fc = &feature_cases[c];
    nh_system sys = test_system(fc->system, fc->params);
    nh_state x0, x;
    if (fc->preset) x0 = test_preset(&sys, fc->preset);
    else nh_system_default_state(&sys, &x0);
    x0.z = 0.375; /* carried unchanged: neither method tracks the action */
    nh_cost cost = {0};
    const double h = direction * fc->h;
    cr_assert_eq(run_steps(m, &sys, &x0, h, 8, &x, &cost), NH_STEP_OK, "%s on %s", text, fc->system);
    double te = x0.t; /* each step ends at its t + h */
    for (int s = 0; s < 8; s++) te += h;
    cr_expect_eq(x.t, te, "%s on %s: t = %.17g", text, fc->system, x.t);
    cr_expect_eq(x.z, 0.375, "%s on %s: z = %g", text, fc->system, x.z);
    const double e = rel_error(&sys, &x0, &x);
    cr_expect_lt(e, 1e-6, "%s on %s, h = %g: error %.3e", text, fc->system, h, e);
    if (sys.k == 0) continue;
    nh_state ex;
    double lam[NH_MAX_K];
    cr_assert_eq(nh_exact_solution(&sys, &x0, x.t, &ex), 0);
    cr_assert_eq(nh_multiplier(&sys, ex.t, ex.q, ex.v, lam), 0);
    for (int a = 0; a < sys.k; a++) {
      if (strcmp(family, "ida") == 0)
        cr_expect_leq(fabs(x.lambda[a] - lam[a]), 1e-5 * (1 + fabs(lam[a])), "%s on %s: λ%d %.12g, exact %.12g",
                      text, fc->system, a, x.lambda[a], lam[a]);
      else
        cr_expect(isnan(x.lambda[a]), "cvode defines no multiplier: %g", x.lambda[a]);
    }
  }
  nh_method_free(m);
}

Test(sundials, ida_every_term_of_the_residual) {
  check_features("ida", 1);
  check_features("ida", -1);
}

Test(sundials, cvode_every_term_of_the_rhs) {
  check_features("cvode", 1);
  check_features("cvode", -1);
}

/* The work of nh_method_init, exactly as the header counts it: the consistent initial values
 * evaluate nh_acceleration (one force, one A(q)) and, for IDA with k > 0, nh_multiplier (one
 * more of each); nothing else (the first workspace's warm-up step is not counted). init leaves
 * IDA's λ0 = nh_multiplier(x0) in x->lambda. */
static void check_init_cost(const char *text, const char *system, unsigned long long rhs,
                            unsigned long long constraint) {
  nh_system sys = test_system(system, "");
  nh_method *m = test_method(text);
  nh_state x;
  nh_system_default_state(&sys, &x);
  for (int a = 0; a < NH_MAX_K; a++) x.lambda[a] = -7.5;
  for (int round = 0; round < 2; round++) { /* the first call creates the workspace, the second reuses it */
    nh_cost c = {0};
    cr_assert_eq(nh_method_init(m, &sys, &x, 0.1, &c), NH_STEP_OK, "%s on %s", text, system);
    cr_expect_eq(c.rhs_evals, rhs, "%s on %s: %llu evaluations", text, system, c.rhs_evals);
    cr_expect_eq(c.constraint_evals, constraint, "%s on %s: %llu A(q)", text, system, c.constraint_evals);
    cr_expect_eq(c.steps + c.jacobian_evals + c.linear_solves + c.newton_iterations, 0, "%s on %s", text, system);
  }
  if (sys.k && strcmp(text, "ida") == 0) {
    double lam[NH_MAX_K];
    cr_assert_eq(nh_multiplier(&sys, x.t, x.q, x.v, lam), 0);
    for (int a = 0; a < sys.k; a++) cr_expect_eq(x.lambda[a], lam[a], "%s: λ0 %g, nh_multiplier %g", text, x.lambda[a], lam[a]);
  }
  nh_method_free(m);
}

Test(sundials, init_work_is_counted_exactly) {
  check_init_cost("ida", "knife_edge", 2, 2);
  check_init_cost("cvode", "knife_edge", 1, 1);
  check_init_cost("ida", "oscillator", 1, 0);
  check_init_cost("cvode", "oscillator", 1, 0);
}

/* Per step, the counters obey what the header says they are: constraint_evals = rhs_evals when
 * k > 0 and 0 when k = 0; linear_solves = iterations + setups, and every Jacobian is assembled at a
 * setup, so linear_solves >= newton_iterations + jacobian_evals; each Jacobian costs len
 * evaluations (one per column), each iteration at least one. */
static void check_step_counters(const char *family, const char *system, int len) {
  nh_system sys = test_system(system, "");
  char text[128];
  snprintf(text, sizeof text, "%s(rtol=1e-9,atol=1e-9)", family);
  nh_method *m = test_method(text);
  nh_state x;
  nh_system_default_state(&sys, &x);
  nh_cost c = {0};
  cr_assert_eq(nh_method_init(m, &sys, &x, 0.2, &c), NH_STEP_OK);
  nh_cost total = {0};
  for (int s = 0; s < 5; s++) {
    nh_cost d = {0};
    nh_state y;
    cr_assert_eq(nh_method_step(m, &sys, &x, &y, 0.2, &d), NH_STEP_OK);
    x = y;
    cr_expect_geq(d.steps, 1, "%s on %s, step %d", text, system, s);
    cr_expect_geq(d.newton_iterations, d.steps, "%s on %s, step %d", text, system, s);
    cr_expect_eq(d.constraint_evals, sys.k ? d.rhs_evals : 0, "%s on %s, step %d: %llu A(q), %llu evaluations", text,
                 system, s, d.constraint_evals, d.rhs_evals);
    cr_expect_geq(d.rhs_evals, d.newton_iterations + (unsigned long long)len * d.jacobian_evals, "%s on %s", text,
                  system);
    cr_expect_geq(d.linear_solves, d.newton_iterations + d.jacobian_evals, "%s on %s", text, system);
    nh_cost_add(&total, &d);
  }
  cr_expect_gt(total.jacobian_evals, 0, "%s on %s", text, system);
  nh_method_free(m);
}

Test(sundials, step_counters_per_step) {
  check_step_counters("ida", "oscillator", 2);
  check_step_counters("cvode", "oscillator", 2);
  check_step_counters("ida", "chaplygin_sleigh", 0); /* len unknown here: only the other relations */
  check_step_counters("cvode", "vertical_disk", 0);
}

/* When the memory continues and when it re-initialises (header of sundials.c): a step from y1,
 * the result of the previous step, with anything changed (the method's parameters, the system's
 * parameters, the direction, t beyond round-off, one bit of v) gives exactly what nh_method_init at
 * y1 and a step give; with nothing changed (t within 1e-12 relative) it continues, which differs
 * from that fresh restart. */
typedef enum { SAME, OTHER_METHOD, OTHER_SYSTEM, BACKWARD, OTHER_T, OTHER_V, NEAR_T } change;

static void one_step(const nh_method *m, const nh_system *sys, const nh_state *x, double h, int init, nh_state *y) {
  nh_state a = *x;
  nh_cost c = {0};
  if (init) cr_assert_eq(nh_method_init(m, sys, &a, h, &c), NH_STEP_OK);
  cr_assert_eq(nh_method_step(m, sys, &a, y, h, &c), NH_STEP_OK);
}

static int same_qv(const nh_system *sys, const nh_state *a, const nh_state *b) {
  const size_t bytes = sizeof(double) * (size_t)sys->n;
  return memcmp(a->q, b->q, bytes) == 0 && memcmp(a->v, b->v, bytes) == 0;
}

static void check_change(const char *family, change what) {
  char t1[64], t2[64];
  snprintf(t1, sizeof t1, "%s(rtol=1e-5,atol=1e-5)", family);
  snprintf(t2, sizeof t2, "%s(rtol=%s,atol=1e-5)", family, what == OTHER_METHOD ? "1e-8" : "1e-5");
  nh_method *m1 = test_method(t1), *m2 = test_method(t2);
  nh_system s1 = test_system("knife_edge", ""), s2 = test_system("knife_edge", what == OTHER_SYSTEM ? "m=2" : "");
  nh_state x0, y1, y2, fresh;
  nh_system_default_state(&s1, &x0);
  const double h = 0.3, h2 = what == BACKWARD ? -h : h;
  one_step(m1, &s1, &x0, h, 1, &y1);
  nh_state from = y1;
  if (what == OTHER_T) from.t += 1e-9;
  if (what == NEAR_T) from.t += 1e-14;
  if (what == OTHER_V) from.v[0] = nextafter(from.v[0], INFINITY);
  one_step(m2, &s2, &from, h2, 0, &y2); /* continues or re-initialises */
  one_step(m2, &s2, &from, h2, 1, &fresh);
  if (what == SAME || what == NEAR_T)
    cr_expect(!same_qv(&s1, &y2, &fresh), "%s, change %d: a continued step equals a restart", family, (int)what);
  else
    cr_expect(same_qv(&s1, &y2, &fresh), "%s, change %d: q0 %.17g, restart %.17g", family, (int)what, y2.q[0],
              fresh.q[0]);
  cr_expect_eq(y2.t, from.t + h2, "%s: t", family);
  nh_method_free(m1), nh_method_free(m2);
}

Test(sundials, continuation_or_restart) {
  static const char *const families[] = {"ida", "cvode"};
  for (int f = 0; f < 2; f++)
    for (int c = SAME; c <= NEAR_T; c++) check_change(families[f], (change)c);
}

/* The parameters act: max_step = 0.01 forces at least 50 internal steps per step of 0.5 (with
 * the default, far fewer: the control); max_order = 1 (backward Euler) needs
 * more steps than order 5 at a tight tolerance; lambda_error_test = 1 changes IDA's steps on the
 * knife edge (λ enters the error test). */
static unsigned long long steps_of(const char *text, const char *system, double h, int nsteps) {
  nh_system sys = test_system(system, "");
  nh_method *m = test_method(text);
  nh_state x0, x;
  nh_system_default_state(&sys, &x0);
  nh_cost c = {0};
  cr_assert_eq(run_steps(m, &sys, &x0, h, nsteps, &x, &c), NH_STEP_OK, "%s", text);
  nh_method_free(m);
  return c.steps;
}

Test(sundials, parameters_act) {
  static const char *const families[] = {"ida", "cvode"};
  for (int f = 0; f < 2; f++) {
    char text[128];
    snprintf(text, sizeof text, "%s(max_step=0.01)", families[f]);
    unsigned long long capped = steps_of(text, "knife_edge", 0.5, 4);
    unsigned long long free_ = steps_of(families[f], "knife_edge", 0.5, 4);
    cr_expect_geq(capped, 200, "%s: %llu steps", text, capped);
    cr_expect_lt(free_, 200, "%s: %llu steps", families[f], free_);
    snprintf(text, sizeof text, "%s(rtol=1e-8,atol=1e-8,max_order=1)", families[f]);
    unsigned long long euler = steps_of(text, "oscillator", 0.5, 4);
    snprintf(text, sizeof text, "%s(rtol=1e-8,atol=1e-8)", families[f]);
    unsigned long long bdf5 = steps_of(text, "oscillator", 0.5, 4);
    cr_expect_gt(euler, 2 * bdf5, "%s: %llu steps at order 1, %llu at order 5", families[f], euler, bdf5);
  }
  const unsigned long long with = steps_of("ida(lambda_error_test=1)", "knife_edge", 0.25, 4);
  const unsigned long long without = steps_of("ida(lambda_error_test=0)", "knife_edge", 0.25, 4);
  cr_expect_neq(with, without, "ida: %llu steps with λ in the error test, %llu without", with, without);
}

/* A step without nh_method_init, or on a system whose size differs from the workspace's, fails
 * (the workspace is made by init); a workspace of another size is replaced by init, and the run
 * there equals one in a fresh process... here: the same run before the replacement, bit for bit. */
Test(sundials, workspace_per_size) {
  nh_system big = test_system("knife_edge", ""), small = test_system("oscillator", "");
  nh_state xb, xs, y, r1, r2;
  nh_system_default_state(&big, &xb);
  nh_system_default_state(&small, &xs);
  static const char *const families[] = {"ida", "cvode"};
  for (int f = 0; f < 2; f++) {
    nh_method *m = test_method(families[f]);
    nh_cost c = {0};
    cr_expect_eq(nh_method_step(m, &big, &xb, &y, 0.1, &c), NH_STEP_SOLVER_FAILED, "%s: no init", families[f]);
    cr_assert_eq(run_steps(m, &big, &xb, 0.1, 3, &r1, &c), NH_STEP_OK);
    cr_expect_eq(nh_method_step(m, &small, &xs, &y, 0.1, &c), NH_STEP_SOLVER_FAILED,
                 "%s: a step on another size without init", families[f]);
    cr_assert_eq(run_steps(m, &small, &xs, 0.1, 3, &y, &c), NH_STEP_OK);
    cr_expect_lt(rel_error(&small, &xs, &y), 1e-4, "%s on the oscillator", families[f]);
    cr_assert_eq(run_steps(m, &big, &xb, 0.1, 3, &r2, &c), NH_STEP_OK);
    cr_expect(same_qv(&big, &r1, &r2), "%s: the knife edge again, q0 %.17g then %.17g", families[f], r1.q[0],
              r2.q[0]);
    nh_method_free(m);
  }
}

/* No consistent initial values where C = A M^-1 A^T is singular (the Foucault pendulum at the
 * origin, A = (−y, x) = 0): init fails with that reason and the time; a later init elsewhere
 * clears the failure (control). */
Test(sundials, singular_start_is_reported) {
  nh_system sys = test_system("foucault_pendulum", "");
  static const char *const families[] = {"ida", "cvode"};
  for (int f = 0; f < 2; f++) {
    nh_method *m = test_method(families[f]);
    nh_state x = {0};
    x.t = 0.5;
    nh_cost c = {0};
    cr_expect_eq(nh_method_init(m, &sys, &x, 0.1, &c), NH_STEP_SOLVER_FAILED, "%s", families[f]);
    char want[160];
    snprintf(want, sizeof want, "%s: no consistent initial acceleration at t = 5.000000e-01 (singular A M^-1 A^T)",
             families[f]);
    cr_expect_str_eq(nh_sundials_last_failure(families[f]), want);
    nh_system_default_state(&sys, &x);
    cr_expect_eq(nh_method_init(m, &sys, &x, 0.1, &c), NH_STEP_OK, "%s", families[f]);
    cr_expect_str_empty(nh_sundials_last_failure(families[f]));
    nh_method_free(m);
  }
  cr_expect_str_empty(nh_sundials_last_failure("neither"));
}

/* The header of sundials.c: with lambda_error_test=1 (λ kept in the error test, as ode15i must)
 * IDA aborts with IDA_ERR_FAIL on the knife edge within the first seconds. The failing step names
 * that flag, a time inside the step it failed in, and still counts its work; with λ out of the test
 * (the default) the same run completes (control). */
Test(sundials, ida_error_test_failure_with_lambda) {
  nh_system sys = test_system("knife_edge", "");
  nh_state x0, x, y;
  nh_system_default_state(&sys, &x0);
  static const char *const texts[] = {"ida(lambda_error_test=1)", "ida"};
  for (int i = 0; i < 2; i++) {
    nh_method *m = test_method(texts[i]);
    nh_cost c = {0};
    x = x0;
    cr_assert_eq(nh_method_init(m, &sys, &x, 0.5, &c), NH_STEP_OK);
    nh_step_status st = NH_STEP_OK;
    int s = 0;
    for (; s < 8 && st == NH_STEP_OK; s++) {
      nh_cost d = {0};
      st = nh_method_step(m, &sys, &x, &y, 0.5, &d);
      if (st == NH_STEP_OK) x = y;
      else cr_expect(d.steps > 0 && d.rhs_evals > 0, "the failed step's work is counted: %llu steps", d.steps);
    }
    const char *msg = nh_sundials_last_failure("ida");
    if (i == 1) {
      cr_expect_eq(st, NH_STEP_OK, "ida: %s", msg);
      cr_expect_str_empty(msg);
    } else {
      cr_assert_eq(st, NH_STEP_SOLVER_FAILED, "%s completed", texts[i]);
      cr_expect(strstr(msg, "ida: Failure at t = ") == msg && strstr(msg, "(IDA_ERR_FAIL, last internal step "), "%s",
                msg);
      const double t = strtod(msg + strlen("ida: Failure at t = "), NULL);
      cr_expect(t > x.t && t < x.t + 0.5, "failure at %g, in the step from %g", t, x.t);
      cr_expect(x.t < 4, "fails within the first seconds: last good t = %g", x.t);
    }
    nh_method_free(m);
  }
}

/* The difference-quotient Jacobian (dq_jacobian) is exact to round-off for a linear problem: on
 * the harmonic oscillator (k = 0, linear right-hand side) the Newton matrix is then right, each
 * Newton solve converges at its first or second iteration, and the Jacobian is rarely rebuilt. A
 * wrong column, increment or cj term makes Newton slow or fail, which shows as more iterations per
 * step and more Jacobians. Bounds: iterations < 1.5 per step (IDA and CVODE both stay near 1.2
 * with the exact matrix) and fewer Jacobians than half the steps. */
Test(sundials, dq_jacobian_makes_newton_converge_at_once) {
  static const char *const texts[] = {"ida(rtol=1e-9,atol=1e-9)", "cvode(rtol=1e-9,atol=1e-9)"};
  nh_system sys = test_system("oscillator", "");
  for (int i = 0; i < 2; i++) {
    nh_method *m = test_method(texts[i]);
    nh_state x0, x;
    nh_system_default_state(&sys, &x0);
    nh_cost c = {0};
    cr_assert_eq(run_steps(m, &sys, &x0, 0.5, 6, &x, &c), NH_STEP_OK, "%s", texts[i]);
    cr_expect_lt(rel_error(&sys, &x0, &x), 1e-7, "%s", texts[i]);
    cr_expect_lt((double)c.newton_iterations, 1.5 * (double)c.steps, "%s: %llu iterations in %llu steps", texts[i],
                 c.newton_iterations, c.steps);
    cr_expect_lt(2 * c.jacobian_evals, c.steps, "%s: %llu Jacobians in %llu steps", texts[i], c.jacobian_evals, c.steps);
    nh_method_free(m);
  }
}

/* SUNDIALS' constructors fail on request: linked with --wrap for each (CMakeLists.txt), so that the
 * calls of integrators/sundials.c come here. (Failing malloc instead is no way in: SUNDIALS 6.4's
 * SUNContext_Create writes through an unchecked allocation in SUNHashMap_New and crashes.) */
static const char *failing_call; /* the constructor that fails, NULL for none */
static int fails(const char *name) { return failing_call && strcmp(failing_call, name) == 0; }

/* The wrapper of `name`: `failed` when it fails, else the real call. */
#define FAILABLE(ret, name, params, args, failed)                                                                 \
  ret __real_##name params;                                                                                       \
  ret __wrap_##name params;                                                                                       \
  ret __wrap_##name params { return fails(#name) ? failed : __real_##name args; }
FAILABLE(void *, IDACreate, (SUNContext ctx), (ctx), NULL)
FAILABLE(void *, CVodeCreate, (int lmm, SUNContext ctx), (lmm, ctx), NULL)
FAILABLE(int, IDAInit, (void *mem, IDAResFn res, realtype t0, N_Vector yy, N_Vector yp), (mem, res, t0, yy, yp),
         IDA_MEM_FAIL)
FAILABLE(int, CVodeInit, (void *mem, CVRhsFn f, realtype t0, N_Vector y), (mem, f, t0, y), CV_MEM_FAIL)
FAILABLE(N_Vector, N_VNew_Serial, (sunindextype len, SUNContext ctx), (len, ctx), NULL)
FAILABLE(SUNMatrix, SUNDenseMatrix, (sunindextype rows, sunindextype cols, SUNContext ctx), (rows, cols, ctx), NULL)
FAILABLE(SUNLinearSolver, SUNLinSol_Dense, (N_Vector y, SUNMatrix A, SUNContext ctx), (y, A, ctx), NULL)
#undef FAILABLE

/* A constructor that fails while init creates the solver memory: that init fails, and nothing
 * broken is kept. Each part of the failed workspace is freed (the blocks of ours left are the same
 * whichever constructor failed), and the next init on the same system runs 3 steps equal bit for
 * bit to a run before any failure. Each round starts from a workspace of another size (the
 * oscillator's), so that the knife edge's is created anew; the last round fails nothing (the
 * control). */
Test(sundials, failed_creation_keeps_no_broken_workspace) {
  nh_system edge = test_system("knife_edge", ""), other = test_system("oscillator", "");
  nh_state xe, xo, ref, y;
  nh_system_default_state(&edge, &xe);
  nh_system_default_state(&other, &xo);
  static const char *const families[] = {"ida", "cvode"};
  static const char *const calls[2][5] = {{"N_VNew_Serial", "SUNDenseMatrix", "SUNLinSol_Dense", "IDACreate", "IDAInit"},
                                          {"N_VNew_Serial", "SUNDenseMatrix", "SUNLinSol_Dense", "CVodeCreate",
                                           "CVodeInit"}};
  for (int f = 0; f < 2; f++) {
    nh_method *m = test_method(families[f]);
    nh_cost c = {0};
    long bare = 0; /* blocks of ours with no workspace (-1 under ASan, whose LeakSanitizer checks) */
    cr_assert_eq(run_steps(m, &edge, &xe, 0.1, 3, &ref, &c), NH_STEP_OK, "%s", families[f]);
    for (int k = 0; k <= 5; k++) {
      cr_assert_eq(run_steps(m, &other, &xo, 0.1, 1, &y, &c), NH_STEP_OK, "%s on the oscillator", families[f]);
      const char *what = k < 5 ? calls[f][k] : "nothing";
      failing_call = k < 5 ? calls[f][k] : NULL;
      y = xe;
      const nh_step_status st = nh_method_init(m, &edge, &y, 0.1, &c);
      failing_call = NULL;
      if (k == 0) bare = test_live_blocks();
      if (k < 5) /* the oscillator's workspace is gone, and so is each part of the failed one */
        cr_expect_eq(test_live_blocks(), bare, "%s, %s failing: %ld blocks kept", families[f], calls[f][k],
                     test_live_blocks() - bare);
      cr_expect_eq(st, k < 5 ? NH_STEP_SOLVER_FAILED : NH_STEP_OK, "%s, %s failing: init %d", families[f], what,
                   (int)st);
      cr_assert_eq(run_steps(m, &edge, &xe, 0.1, 3, &y, &c), NH_STEP_OK, "%s: init after %s failed", families[f],
                   what);
      cr_expect(same_qv(&edge, &ref, &y), "%s: after %s failed, q0 %.17g instead of %.17g", families[f], what,
                y.q[0], ref.q[0]);
    }
    nh_method_free(m);
  }
}

/* A SUNDIALS method's name always carries its tolerances, which set its accuracy (a results file
 * then says which were used); the other parameters appear only when they differ from the default. */
Test(sundials, names_carry_the_tolerances) {
  static const char *const texts[][2] = {{"ida", "ida(rtol=1e-06,atol=1e-06)"},
                                         {"cvode", "cvode(rtol=1e-06,atol=1e-06)"},
                                         {"ida(max_order=3)", "ida(rtol=1e-06,atol=1e-06,max_order=3)"},
                                         {"cvode(atol=1e-9,max_steps=7)", "cvode(rtol=1e-06,atol=1e-09,max_steps=7)"}};
  for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
    nh_method *m = test_method(texts[i][0]);
    char name[256];
    nh_method_format(m, name, sizeof name);
    cr_expect_str_eq(name, texts[i][1], "%s", texts[i][0]);
    nh_method_free(m);
  }
}

#endif
