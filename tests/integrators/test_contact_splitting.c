/* The contact Hamiltonian splitting contact2 and its order-6 composition yoshida6(contact2)
 * (issue 17, integrators/contact_splitting.c; Bravetti, Seri, Vermeeren, Zadra, Celest. Mech. Dyn.
 * Astr. 132 (2020) 7). No registered system is unconstrained and damped (the oscillator, the only
 * k = 0 system, has neither damping nor forcing), so the damped and forced checks run on a
 * test-only system below, whose closed-form solution is written here and checked against the rk8pd
 * reference. Expected values come from elsewhere: that closed form, the Herglotz action as a
 * quadrature along it, a leapfrog step written out by hand, and the orders the source claims; every
 * acceptance check has a negative control beside it. Registry-driven tests cover contact2 too (the
 * order matrix on the oscillator, no allocation, the observables); tests/orders/contact_oscillator.cfg
 * holds its order table. */
#include <complex.h>
#include <criterion/criterion.h>
#include <gsl/gsl_integration.h>
#include <math.h>
#include <string.h>

#include "studies/observables.h"
#include "studies/study.h"
#include "tests/checks.h"

/* ---- a damped, forced oscillator with a non-diagonal mass (test-only) -------------------------- */

/* q ∈ R², constant M (non-diagonal, so that M and M⁻¹ cannot be confused), V = ½ω² qᵀMq, damping
 * −αMq̇ and F(t) = M f(t) with f = f0 (cos Ωt, sin Ωt). Then q̈ + αq̇ + ω²q = f(t) component by
 * component: a forced damped oscillator with a closed-form solution. */
enum { P_OMEGA, P_ALPHA, P_F0, P_FREQ, P_COUNT };

static const nh_param_desc dfo_params[] = {
    [P_OMEGA] = {"omega", NH_PARAM_REAL, 1, 0, 10, "angular frequency", 0, NULL},
    [P_ALPHA] = {"alpha", NH_PARAM_REAL, 0.3, 0, 10, "damping, force -alpha M qdot", 0, NULL},
    [P_F0] = {"f0", NH_PARAM_REAL, 0.5, 0, 10, "forcing amplitude, F = M f0 (cos Wt, sin Wt)", 0, NULL},
    [P_FREQ] = {"W", NH_PARAM_REAL, 1.3, 0, 10, "forcing frequency W", 0, NULL},
};

static const double dfo_M[4] = {2, 0.6, 0.6, 1};

static void dfo_mass(const double *p, const double *q, double *M) {
  (void)p, (void)q;
  memcpy(M, dfo_M, sizeof dfo_M);
}

/* ½ vᵀM v, written out. */
static double dfo_quad(const double *v) {
  return 0.5 * (dfo_M[0] * v[0] * v[0] + 2 * dfo_M[1] * v[0] * v[1] + dfo_M[3] * v[1] * v[1]);
}

static double dfo_potential(const double *p, const double *q) { return p[P_OMEGA] * p[P_OMEGA] * dfo_quad(q); }

static void dfo_grad(const double *p, const double *q, double *g) {
  const double w2 = p[P_OMEGA] * p[P_OMEGA];
  g[0] = w2 * (dfo_M[0] * q[0] + dfo_M[1] * q[1]);
  g[1] = w2 * (dfo_M[2] * q[0] + dfo_M[3] * q[1]);
}

static void dfo_hess(const double *p, const double *q, double *H) {
  (void)q;
  for (int i = 0; i < 4; i++) H[i] = p[P_OMEGA] * p[P_OMEGA] * dfo_M[i];
}

static void dfo_none(const double *p, const double *q, double *A) { (void)p, (void)q, (void)A; }

static double dfo_damping(const double *p, double t) {
  (void)t;
  return p[P_ALPHA];
}

/* f(t) = M⁻¹F(t). */
static void dfo_f(const double *p, double t, double *f) {
  f[0] = p[P_F0] * cos(p[P_FREQ] * t);
  f[1] = p[P_F0] * sin(p[P_FREQ] * t);
}

static int dfo_forcing(const double *p, double t, double *F) {
  double f[2];
  dfo_f(p, t, f);
  F[0] = dfo_M[0] * f[0] + dfo_M[1] * f[1];
  F[1] = dfo_M[2] * f[0] + dfo_M[3] * f[1];
  return p[P_F0] != 0;
}

/* x(t) = x_p(t) + e^{−ατ/2}(c1 cos ω_d τ + c2 sin ω_d τ), τ = t − t0, ω_d = √(ω² − α²/4), with the
 * particular solution x_p = Re(u a e^{iΩt}), a = f0/(ω² − Ω² + iαΩ), u = 1 (x, cos) and −i (y, sin),
 * and c1, c2 from x(t0) = x0, ẋ(t0) = v0. Underdamped only (α < 2ω). */
static int dfo_exact(const double *p, const nh_state *x0, double t, nh_state *x) {
  const double w = p[P_OMEGA], al = p[P_ALPHA], W = p[P_FREQ];
  if (al >= 2 * w) return -1;
  const double wd = sqrt(w * w - 0.25 * al * al), tau = t - x0->t;
  const double complex a = p[P_F0] / (w * w - W * W + I * al * W);
  const double decay = exp(-0.5 * al * tau), c = cos(wd * tau), s = sin(wd * tau);
  *x = *x0;
  x->t = t;
  for (int i = 0; i < 2; i++) {
    const double complex u = i == 0 ? 1 : -I;
    const double complex e0 = u * a * cexp(I * W * x0->t), e1 = u * a * cexp(I * W * t);
    const double c1 = x0->q[i] - creal(e0), c2 = (x0->v[i] - creal(I * W * e0) + 0.5 * al * c1) / wd;
    x->q[i] = creal(e1) + decay * (c1 * c + c2 * s);
    x->v[i] = creal(I * W * e1) + decay * (-0.5 * al * (c1 * c + c2 * s) + wd * (c2 * c - c1 * s));
  }
  return 0;
}

static const double dfo_q0[] = {1, -0.5}, dfo_v0[] = {0.3, 0.8};

static const nh_system_forces dfo_forces = {.damping = dfo_damping, .forcing = dfo_forcing};
static const nh_system_knowledge dfo_knowledge = {.exact = dfo_exact, .sample_box = 1};

static const nh_system_type damped_oscillator = {
    .name = "damped_forced_oscillator_test",
    .doc = "test-only: q'' + alpha q' + omega^2 q = f0 (cos Wt, sin Wt) with a non-diagonal constant M",
    .n = 2,
    .k = 0,
    .params = dfo_params,
    .nparams = P_COUNT,
    .q0 = dfo_q0,
    .v0 = dfo_v0,
    .ic_doc = "q0 = (1, -0.5), v0 = (0.3, 0.8)",
    .mass = dfo_mass,
    .potential = dfo_potential,
    .grad_potential = dfo_grad,
    .hess_potential = dfo_hess,
    .constraints = dfo_none,
    .constraints_jacobian = dfo_none,
    .forces = &dfo_forces,
    .knowledge = &dfo_knowledge,
};

static nh_system dfo(const char *params) { return test_system_of(&damped_oscillator, params); }

static nh_state dfo_start(const nh_system *sys) {
  nh_state x;
  nh_system_default_state(sys, &x);
  x.z = 0;
  return x;
}

/* ---- helpers ------------------------------------------------------------------------------------ */

/* max_i |q_i − q'_i|, |v_i − v'_i| */
static double state_dist(int n, const nh_state *a, const nh_state *b) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fmax(fabs(a->q[i] - b->q[i]), fabs(a->v[i] - b->v[i])));
  return d;
}

/* m from x (after init) for T/h steps. */
static nh_state run_method(const nh_method *m, const nh_system *sys, nh_state x, double h, double T) {
  nh_cost cost = {0};
  test_init_ok(m, sys, &x, h, &cost);
  for (long s = 0; s < lround(T / h); s++) {
    nh_state y;
    test_step_ok(m, sys, &x, &y, h, &cost);
    x = y;
  }
  return x;
}

/* The least-squares order (nh_fit_order) over h0, h0/2, h0/4 of m's error at T against the exact
 * solution from x0, in (q, v), and, in *zorder (may be NULL), of z against z_exact. */
static double observed_order(const nh_method *m, const nh_system *sys, const nh_state *x0, double T, double h0,
                             double z_exact, double *zorder) {
  nh_state ex;
  cr_assert_eq(nh_exact_solution(sys, x0, x0->t + T, &ex), 0);
  double h[3], e[3], ez[3], order, se;
  int first, count;
  for (int j = 0; j < 3; j++) {
    h[j] = h0 / (1 << j);
    const nh_state x = run_method(m, sys, *x0, h[j], T);
    e[j] = state_dist(sys->n, &x, &ex);
    ez[j] = fabs(x.z - z_exact);
  }
  if (zorder) cr_assert_eq(nh_fit_order(3, h, ez, 3, 0, zorder, &se, &first, &count), 0);
  cr_assert_eq(nh_fit_order(3, h, e, 3, 0, &order, &se, &first, &count), 0);
  return order;
}

/* ---- the Herglotz action along the exact solution ---------------------------------------------- */

typedef struct {
  const nh_system *sys;
  const nh_state *x0;
  double T, alpha; /* alpha = 0: the plain ∫L dt, the negative control */
} action_ctx;

/* e^{−α(T−s)} (T − V + F·q)(s) on the exact solution: ż = L̃ − αz, z(0) = 0 has
 * z(T) = ∫_0^T e^{−α(T−s)} L̃(s) ds (spec/herglotz.md §2.1-2.2, L̃ the z-free part of L). */
static double action_integrand(double s, void *vctx) {
  const action_ctx *c = vctx;
  nh_state x;
  double F[2];
  nh_exact_solution(c->sys, c->x0, s, &x);
  nh_forcing(c->sys, s, F);
  const double L = dfo_quad(x.v) - c->sys->type->potential(c->sys->p, x.q) + F[0] * x.q[0] + F[1] * x.q[1];
  return exp(-c->alpha * (c->T - s)) * L;
}

static double herglotz_action(const nh_system *sys, const nh_state *x0, double T, double alpha) {
  action_ctx c = {sys, x0, T, alpha};
  gsl_function fn = {action_integrand, &c};
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(200);
  double z, abserr;
  gsl_integration_qag(&fn, x0->t, x0->t + T, 1e-14, 1e-13, 200, GSL_INTEG_GAUSS61, ws, &z, &abserr);
  gsl_integration_workspace_free(ws);
  return z;
}

/* ---- a Lie–Trotter splitting (test-only): the negative control of order and symmetry ------------- */

/* C_h, then B_h, then A_h, all at t_j, written with the test system's structure (M⁻¹∇V = ω²q,
 * M⁻¹F = f): the same exact flows as contact2 but not a palindrome, so order 1 and not symmetric. */
static nh_step_status lie_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y, double h,
                               nh_cost *cost) {
  (void)m, (void)cost;
  const double *p = sys->p, w2 = p[P_OMEGA] * p[P_OMEGA];
  double f[2], F[2];
  *y = *x;
  for (int i = 0; i < 2; i++) y->q[i] += h * y->v[i];
  y->z += h * dfo_quad(y->v);
  dfo_f(p, x->t, f);
  dfo_forcing(p, x->t, F);
  for (int i = 0; i < 2; i++) y->v[i] -= h * (w2 * y->q[i] - f[i]);
  y->z -= h * (dfo_potential(p, y->q) - F[0] * y->q[0] - F[1] * y->q[1]);
  const double decay = exp(-p[P_ALPHA] * h);
  for (int i = 0; i < 2; i++) y->v[i] *= decay;
  y->z *= decay;
  y->t = x->t + h;
  return NH_STEP_OK;
}

static const nh_integrator_type lie_type = {
    .name = "lie_test", .doc = "test-only Lie-Trotter contact splitting", .order = nh_order_1, .step = lie_step};

/* ---- (a), (b): orders of q, v and z against the closed form and the Herglotz action ------------ */

Test(contact_splitting, exact_solution_matches_reference) {
  nh_system sys = dfo(NULL);
  nh_state x0 = dfo_start(&sys), ex, ref;
  x0.t = 0.4; /* the forcing's phase matters */
  cr_assert_eq(dfo_exact(sys.p, &x0, 6.4, &ex), 0);
  cr_assert_eq(nh_reference_solve(&sys, &x0, 6.4, 1e-13, &ref), 0);
  cr_expect(state_dist(2, &ex, &ref) <= 1e-11, "closed form vs rk8pd: %.3e", state_dist(2, &ex, &ref));
  /* negative control: without the particular solution's phase (forcing taken from t = 0) */
  nh_state shifted = x0;
  shifted.t = 0;
  cr_assert_eq(dfo_exact(sys.p, &shifted, 6.0, &ex), 0);
  cr_expect(state_dist(2, &ex, &ref) >= 1e-3, "a shifted forcing phase should show: %.3e", state_dist(2, &ex, &ref));
}

/* contact2: order 2 in (q, v) and z; yoshida6(contact2), the paper's step6: order 6; triple_jump 4. Step
 * sizes where all are asymptotic (measured 2.001, 6.002, 4.002) and yoshida6's finest error (4e-9)
 * is far above round-off. */
Test(contact_splitting, orders_with_damping_and_forcing) {
  nh_system sys = dfo(NULL);
  const nh_state x0 = dfo_start(&sys);
  const double T = 6, z = herglotz_action(&sys, &x0, T, dfo_damping(sys.p, 0));
  static const struct {
    const char *method;
    double h0;
    int order;
  } cases[] = {{"contact2", 0.1, 2}, {"yoshida6(contact2)", 0.3, 6}, {"triple_jump(contact2)", 0.1, 4}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    nh_method *m = test_method(cases[c].method);
    double pz, p = observed_order(m, &sys, &x0, T, cases[c].h0, z, &pz);
    cr_log_info("%s: observed order %.4f in (q, v), %.4f in z", cases[c].method, p, pz);
    cr_expect(fabs(p - cases[c].order) <= 0.1, "%s: observed order %.3f in (q, v), claimed %d", cases[c].method, p,
              cases[c].order);
    cr_expect(fabs(pz - cases[c].order) <= 0.1, "%s: observed order %.3f in z, claimed %d", cases[c].method, pz,
              cases[c].order);
    cr_expect_eq(nh_method_order(m), cases[c].order);
    nh_method_free(m);
  }
  /* Negative control: the Lie–Trotter order of the same flows is 1, and the same fit says so. */
  nh_method lie = {.type = &lie_type};
  double pz, p = observed_order(&lie, &sys, &x0, T, 0.05, z, &pz);
  cr_expect(fabs(p - 1) <= 0.1 && fabs(pz - 1) <= 0.1, "Lie-Trotter: orders %.3f (q, v), %.3f (z), expected 1", p, pz);
}

/* z is the Herglotz action with herglotz2's convention: both converge to the same quadrature of
 * ∫e^{−α(T−s)}L̃ ds (0.0888 here), at h = 0.01 to ~1e-5 (order 2, error constants of the size of z's).
 * The plain ∫L̃ dt (no −αz in L, 0.162) is the negative control: z sits far from it. */
Test(contact_splitting, action_is_the_herglotz_action_of_herglotz2) {
  nh_system sys = dfo(NULL);
  const nh_state x0 = dfo_start(&sys);
  const double T = 6, z = herglotz_action(&sys, &x0, T, dfo_damping(sys.p, 0)), plain = herglotz_action(&sys, &x0, T, 0);
  nh_state start = x0;
  start.z = 123; /* init must reset it: z_0 = 0 */
  const char *methods[] = {"contact2", "herglotz2", "yoshida6(contact2)"};
  const double tol[] = {1e-4, 1e-4, 1e-10};
  for (int i = 0; i < 3; i++) {
    nh_method *m = test_method(methods[i]);
    const nh_state x = run_method(m, &sys, start, 0.01, T);
    cr_log_info("%s: z(T) - Herglotz action = %.3e", methods[i], x.z - z);
    cr_expect(fabs(x.z - z) <= tol[i], "%s: z(T) = %.12f, Herglotz action %.12f", methods[i], x.z, z);
    cr_expect(fabs(x.z - plain) >= 0.05, "%s: z(T) = %.6f too close to the undamped action %.6f", methods[i], x.z,
              plain);
    cr_expect(nh_observable_find("action")->absent(m, &sys) == NULL, "%s: the action observable is absent", methods[i]);
    nh_method_free(m);
  }
  cr_expect(fabs(z - plain) >= 0.05, "the damping should matter: %.6f vs %.6f", z, plain);
}

/* ---- (c) symmetry --------------------------------------------------------------------------------- */

/* A step of h, then one of −h: how far from the start (q, v, z, t). */
static double round_trip(const nh_method *m, const nh_system *sys, nh_state x, double h) {
  nh_cost cost = {0};
  nh_state y, w;
  test_step_ok(m, sys, &x, &y, h, &cost);
  test_step_ok(m, sys, &y, &w, -h, &cost);
  return fmax(state_dist(sys->n, &w, &x), fabs(w.z - x.z)) + fabs(w.t - x.t);
}

Test(contact_splitting, symmetric_with_damping_and_forcing) {
  nh_system sys = dfo(NULL);
  nh_state x = dfo_start(&sys);
  x.t = 2.5, x.z = 0.37; /* a time-dependent force and a nonzero action at the start */
  const char *methods[] = {"contact2", "yoshida6(contact2)"};
  for (int i = 0; i < 2; i++) {
    nh_method *m = test_method(methods[i]);
    cr_expect(round_trip(m, &sys, x, 0.2) <= 1e-14, "%s round trip: %.3e", methods[i], round_trip(m, &sys, x, 0.2));
    cr_expect(nh_method_is_symmetric(m), "%s should declare itself symmetric", methods[i]);
    nh_method_free(m);
  }
  /* Negative controls: the Lie–Trotter splitting and herglotz1 do not return. */
  nh_method lie = {.type = &lie_type};
  cr_expect(round_trip(&lie, &sys, x, 0.2) >= 1e-4, "Lie-Trotter round trip %.3e", round_trip(&lie, &sys, x, 0.2));
  nh_method *h1 = test_method("herglotz1");
  cr_expect(round_trip(h1, &sys, x, 0.2) >= 1e-6, "herglotz1 round trip %.3e", round_trip(h1, &sys, x, 0.2));
  nh_method_free(h1);
}

/* ---- (d) alpha = 0, F = 0: the drift-kick-drift leapfrog --------------------------------------- */

/* One step, against Störmer–Verlet written out: q̄ = q + (h/2)v, v' = v − hω²q̄ (M⁻¹∇V = ω²q),
 * q' = q̄ + (h/2)v', z' = z + h[(T(v) + T(v'))/2 − V(q̄)]. */
Test(contact_splitting, undamped_step_is_leapfrog) {
  nh_system sys = dfo("alpha=0,f0=0,omega=1.7");
  const double h = 0.3, w2 = 1.7 * 1.7;
  nh_state x = dfo_start(&sys), y;
  x.t = 1.1, x.z = -0.2;
  nh_cost cost = {0};
  nh_method *m = test_method("contact2");
  test_step_ok(m, &sys, &x, &y, h, &cost);
  double qb[2], v1[2], q1[2];
  for (int i = 0; i < 2; i++) qb[i] = x.q[i] + 0.5 * h * x.v[i];
  for (int i = 0; i < 2; i++) v1[i] = x.v[i] - h * w2 * qb[i];
  for (int i = 0; i < 2; i++) q1[i] = qb[i] + 0.5 * h * v1[i];
  const double z1 = x.z + h * (0.5 * (dfo_quad(x.v) + dfo_quad(v1)) - w2 * dfo_quad(qb));
  for (int i = 0; i < 2; i++) {
    cr_expect(fabs(y.q[i] - q1[i]) <= 1e-15, "q[%d]: %.17g vs leapfrog %.17g", i, y.q[i], q1[i]);
    cr_expect(fabs(y.v[i] - v1[i]) <= 1e-15, "v[%d]: %.17g vs leapfrog %.17g", i, y.v[i], v1[i]);
  }
  cr_expect(fabs(y.z - z1) <= 1e-15, "z: %.17g vs %.17g", y.z, z1);
  cr_expect(fabs(y.t - (x.t + h)) <= 1e-15);
  /* Negative control: with damping the step is no longer leapfrog. */
  nh_system damped = dfo("alpha=0.3,f0=0,omega=1.7");
  test_step_ok(m, &damped, &x, &y, h, &cost);
  cr_expect(fabs(y.v[0] - v1[0]) >= 1e-3, "damping should change v: %.3e", fabs(y.v[0] - v1[0]));
  /* Cost: one step, one evaluation of grad V (no force when F = 0). */
  cr_expect(cost.steps == 2 && cost.rhs_evals == 2, "steps %llu, rhs_evals %llu", cost.steps, cost.rhs_evals);
  nh_method_free(m);
}

/* The registered oscillator (M = I, alpha = 0): leapfrog from the ellipse preset. */
Test(contact_splitting, oscillator_step_is_leapfrog) {
  nh_system sys = test_system("oscillator", "omega=1.3");
  nh_state x;
  nh_system_default_state(&sys, &x);
  x.z = 0;
  const double h = 0.25, w2 = 1.3 * 1.3;
  nh_state y;
  nh_cost cost = {0};
  nh_method *m = test_method("contact2");
  test_step_ok(m, &sys, &x, &y, h, &cost);
  for (int i = 0; i < 2; i++) {
    const double qb = x.q[i] + 0.5 * h * x.v[i], v1 = x.v[i] - h * w2 * qb, q1 = qb + 0.5 * h * v1;
    cr_expect(fabs(y.q[i] - q1) <= 1e-15 && fabs(y.v[i] - v1) <= 1e-15, "component %d", i);
  }
  nh_method_free(m);
}

/* ---- applicability -------------------------------------------------------------------------------- */

Test(contact_splitting, declines_constraints_and_variable_mass) {
  static const struct {
    const char *system, *why;
  } declined[] = {{"particle", "unconstrained system (k = 0)"},
                  {"foucault_pendulum", "unconstrained system (k = 0)"},
                  {"falling_disk", "configuration-dependent mass matrix"}};
  const char *methods[] = {"contact2", "yoshida6(contact2)"};
  for (int i = 0; i < 2; i++) {
    nh_method *m = test_method(methods[i]);
    char err[512];
    for (size_t s = 0; s < sizeof declined / sizeof *declined; s++) {
      nh_system sys = test_system(declined[s].system, NULL);
      cr_expect_eq(nh_method_applies(m, &sys, err, sizeof err), -1, "%s should decline %s", methods[i],
                declined[s].system);
      cr_expect(strstr(err, declined[s].why) != NULL, "%s on %s: '%s'", methods[i], declined[s].system, err);
    }
    /* and applies where it should: the oscillator and the damped, forced test system */
    nh_system osc = test_system("oscillator", NULL), d = dfo(NULL);
    cr_expect(nh_method_applies(m, &osc, err, sizeof err) == 0, "%s", err);
    cr_expect(nh_method_applies(m, &d, err, sizeof err) == 0, "%s", err);
    nh_method_free(m);
  }
}
