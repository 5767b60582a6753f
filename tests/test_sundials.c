/* SUNDIALS IDA and CVODE (integrators/sundials.c), part of `make test` (the Makefile's default
 * SUNDIALS=1); without
 * -DNHBENCH_SUNDIALS=ON this file compiles to nothing. The true solutions are the systems' exact
 * ones (the free particle of spec/rattle.md §4 in closed form, the knife edge, the harmonic
 * oscillator); nothing is compared with an earlier run's output. */
#ifdef NHBENCH_SUNDIALS
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

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
  cr_assert_eq(sys->type->exact(sys->p, x0, x->t, &ex), 0, "%s has an exact solution here", sys->type->name);
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
  cr_assert_eq(sys.type->exact(sys.p, &x0, x.t, &ex), 0);
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

#endif
