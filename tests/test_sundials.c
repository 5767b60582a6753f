/* SUNDIALS IDA and CVODE (integrators/sundials.c), run by `make test-sundials`; without
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
 * 10^3 (BDF error control is not proportional, but a solver that ignored rtol would not fall at
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
  cr_expect_gt(err[0], 1e3 * err[2], "%s on %s: error %.3e at tol 1e-4, %.3e at 1e-8", family, system, err[0],
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
#endif
