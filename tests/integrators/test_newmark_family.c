/* The Newmark family and compositions (issue #3): classical newmark(beta,gamma) (spec/newmark.md
 * §2.1, typo A1 of §2.2), nh_newmark's β = β' = 0 fast path (§2.9, C9), the DLA recurrence dla(alpha)
 * (§2.6, C10) and the composition tables suzuki5, yoshida6, mclachlan8. References are exact
 * formulas (closed-form Newmark steps on a linear oscillator, the spec's explicit formulas of
 * Prop 3.8 and §3.2), independent solvers (nh_newmark's full Newton system, rk8pd) and identities
 * (adjoints, order conditions). Observed orders are in tests/orders/newmark_family_*.cfg. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "integrators/integrator.h"
#include "tests/helpers.h"
#include "tests/twisted.h"
#include "systems/system.h"

/* ---- test-only systems ------------------------------------------------------------------------ */

/* An unconstrained (k = 0) 2-D anharmonic oscillator, M = I:
 * V = ½(q1² + 2 q2²) + eps (q1⁴/4 + q1² q2²/2), optional damping −damp·v and forcing (amp cos t, 0). */
enum { A_EPS, A_DAMP, A_AMP };
static const nh_param_desc anh_params[] = {
    {"eps", NH_PARAM_REAL, 0.5, 0, 10, "anharmonicity", 0, NULL},
    {"damp", NH_PARAM_REAL, 0, 0, 10, "damping coefficient", 0, NULL},
    {"amp", NH_PARAM_REAL, 0, 0, 10, "forcing amplitude", 0, NULL},
};

static void identity_mass(const double *p, const double *q, double *M) {
  (void)p, (void)q;
  M[0] = M[3] = 1;
  M[1] = M[2] = 0;
}

static double anh_potential(const double *p, const double *q) {
  const double x = q[0], y = q[1];
  return 0.5 * (x * x + 2 * y * y) + p[A_EPS] * (x * x * x * x / 4 + x * x * y * y / 2);
}

static void anh_grad(const double *p, const double *q, double *g) {
  const double x = q[0], y = q[1];
  g[0] = x + p[A_EPS] * (x * x * x + x * y * y);
  g[1] = 2 * y + p[A_EPS] * x * x * y;
}

static void anh_hess(const double *p, const double *q, double *H) {
  const double x = q[0], y = q[1];
  H[0] = 1 + p[A_EPS] * (3 * x * x + y * y);
  H[1] = H[2] = 2 * p[A_EPS] * x * y;
  H[3] = 2 + p[A_EPS] * x * x;
}

static void no_constraints(const double *p, const double *q, double *A) { (void)p, (void)q, (void)A; }

static double anh_damping(const double *p, double t) {
  (void)t;
  return p[A_DAMP];
}

static int anh_forcing(const double *p, double t, double *F) {
  F[0] = p[A_AMP] * cos(t);
  F[1] = 0;
  return p[A_AMP] != 0;
}

static const double anh_q0[] = {0.8, -0.3}, anh_v0[] = {0.1, 0.6};

/* Alike tests/twisted.h and test_jimenez_scheurle.c's `unconstrained` in shape only: a different
 * test system's designated initializer (not merged). */
static const nh_system_forces anh_forces = {.damping = anh_damping, .forcing = anh_forcing};
static const nh_system_knowledge anh_knowledge = {.sample_box = 1};

static const nh_system_type anharmonic = {
    .name = "anharmonic_test",
    .doc = "test-only unconstrained anharmonic oscillator",
    .n = 2,
    .k = 0,
    .params = anh_params,
    .nparams = 3,
    .q0 = anh_q0,
    .v0 = anh_v0,
    .ic_doc = "",
    .mass = identity_mass,
    .potential = anh_potential,
    .grad_potential = anh_grad,
    .hess_potential = anh_hess,
    .constraints = no_constraints,
    .constraints_jacobian = no_constraints,
    .forces = &anh_forces,
    .knowledge = &anh_knowledge,
};

/* The twisted system (non-diagonal M, (N3) nonlinear in Λ0) is in tests/twisted.h. */

/* ---- helpers ---------------------------------------------------------------------------------- */

static void step_ok(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y, double h,
                    nh_cost *cost) {
  nh_step_status st = nh_method_step(m, sys, x, y, h, cost);
  cr_assert(st == NH_STEP_OK, "%s on %s: step of h=%g failed with status %d", m->type->name, sys->type->name, h,
            (int)st);
}

static nh_state default_state(const nh_system *sys) {
  nh_state x;
  nh_system_default_state(sys, &x);
  return x;
}

static double dist_q(int n, const nh_state *a, const nh_state *b) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a->q[i] - b->q[i]));
  return d;
}

static double dist_v(int n, const nh_state *a, const nh_state *b) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a->v[i] - b->v[i]));
  return d;
}

static double dist(int n, const nh_state *a, const nh_state *b) { return fmax(dist_q(n, a, b), dist_v(n, a, b)); }

/* Largest step-by-step distance of methods a and b from the same states along a's trajectory. */
static double max_step_difference(const char *ta, const char *tb, const nh_system *sys, nh_state x, double h,
                                  int steps) {
  nh_method *a = test_method(ta), *b = test_method(tb);
  nh_cost cost = {0};
  double worst = 0;
  for (int s = 0; s < steps; s++) {
    nh_state ya, yb;
    step_ok(a, sys, &x, &ya, h, &cost);
    step_ok(b, sys, &x, &yb, h, &cost);
    worst = fmax(worst, dist(sys->n, &ya, &yb));
    x = ya;
  }
  nh_method_free(a);
  nh_method_free(b);
  return worst;
}

/* A state on D at energy E drawn with a fixed seed. */
static nh_state sampled_state(const nh_system *sys, double E, unsigned long seed) {
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, seed);
  nh_state x;
  cr_assert(nh_sample_on_D(sys, E, r, &x) == 0, "nh_sample_on_D failed on %s", sys->type->name);
  gsl_rng_free(r);
  return x;
}

/* ---- newmark(beta, gamma): spec §2.1 --------------------------------------------------------- */

Test(newmark_family, newmark_linear_closed_form) {
  /* q̈ = −Ω²q, Ω² = diag(1, 2): a_{k+1} = −Ω² q_{k+1} turns eq. (1) into
   * q_{k+1} = (q_k + h q̇_k + h²(½−β) a_k)/(1 + h²βω²), q̇_{k+1} = q̇_k + h((1−γ)a_k + γ a_{k+1}). */
  static const double P[][2] = {{0.25, 0.5}, {0, 0.5}, {0.25, 0.6}, {0, 0}, {0.5, 1}, {0.1, 0.3}};
  static const double w2[2] = {1, 2};
  nh_system sys = test_system_of(&anharmonic, "eps=0");
  const double h = 0.3;
  for (size_t p = 0; p < sizeof P / sizeof P[0]; p++) {
    const double b = P[p][0], g = P[p][1];
    char text[128];
    snprintf(text, sizeof text, "newmark(beta=%.17g,gamma=%.17g)", b, g);
    nh_method *m = test_method(text);
    nh_state x = default_state(&sys), y, e = x;
    nh_cost cost = {0};
    double worst = 0;
    for (int s = 0; s < 10; s++) {
      step_ok(m, &sys, &x, &y, h, &cost);
      for (int i = 0; i < 2; i++) {
        const double a0 = -w2[i] * e.q[i];
        const double q1 = (e.q[i] + h * e.v[i] + h * h * (0.5 - b) * a0) / (1 + h * h * b * w2[i]);
        e.v[i] += h * ((1 - g) * a0 + g * (-w2[i] * q1));
        e.q[i] = q1;
      }
      worst = fmax(worst, dist(2, &y, &e));
      x = y;
    }
    cr_assert(worst <= 1e-14, "%s differs from the closed-form Newmark step by %.3e", text, worst);
    cr_assert_float_eq(x.t, 10 * h, 1e-14, "%s: time %g after 10 steps", text, x.t);
    nh_method_free(m);
  }
}

Test(newmark_family, typo_a1_gamma_of_exponential_form) {
  /* spec §2.2, A1: for k = 0, nh_newmark(β, β') is the exponential method (10), i.e. Newmark with the
   * same position β (β weighs Γ(q_{k+1}) in (N1) exactly as in (1)) and γ = ½ + β − β'. The paper's
   * γ = ½ + β' − β differs, also when β' is read as the position weight (that is the adjoint,
   * nh_newmark(β', β), for k = 0). */
  static const double P[][2] = {{0.1, 0.3}, {0.3, 0.1}, {0.2, 0}, {0, 0.2}, {0.4, 0.4}, {0, 0}, {0.5, 0.2}};
  nh_system sys = test_system_of(&anharmonic, "eps=0.5");
  const nh_state x0 = default_state(&sys);
  const double h = 0.2;
  for (size_t p = 0; p < sizeof P / sizeof P[0]; p++) {
    const double b = P[p][0], b2 = P[p][1];
    char nm[160], fixed[128], paper[128], swapped[128];
    snprintf(fixed, sizeof fixed, "newmark(beta=%.17g,gamma=%.17g)", b, 0.5 + b - b2);
    snprintf(paper, sizeof paper, "newmark(beta=%.17g,gamma=%.17g)", b, 0.5 + b2 - b);
    snprintf(swapped, sizeof swapped, "newmark(beta=%.17g,gamma=%.17g)", b2, 0.5 + b2 - b);
    for (int fast = 0; fast <= 1; fast++) { /* β = β' = 0 also through the fast path */
      snprintf(nm, sizeof nm, "nh_newmark(beta=%.17g,beta2=%.17g,fast=%d)", b, b2, fast);
      double d = max_step_difference(nm, fixed, &sys, x0, h, 20);
      cr_assert(d <= 1e-14, "%s and %s differ by %.3e", nm, fixed, d);
    }
    if (b != b2) {
      double d;
      d = max_step_difference(nm, paper, &sys, x0, h, 1);
      cr_assert(d > 1e-5, "%s equals the paper's %s (%.3e): the typo check is vacuous", nm, paper, d);
      d = max_step_difference(nm, swapped, &sys, x0, h, 1);
      cr_assert(d > 1e-5, "%s equals %s, the paper's gamma with beta' as position weight (%.3e)", nm, swapped, d);
    }
  }
}

Test(newmark_family, newmark_adjoint_identity) {
  /* Adjoint Newmark(½+β−γ, 1−γ): Φ*_{−h}(Φ_h(x)) = x, on the nonholonomic Γ(t,q,q̇) of the chaotic
   * particle (Γ depends on q̇ through λ) and on the twisted system (non-diagonal M). */
  static const double P[][2] = {{0.25, 0.5}, {0.25, 0.6}, {0.1, 0.3}, {0, 0.5}, {0.3, 0.7}};
  static const char *const expect[] = {"newmark(beta=0.25,gamma=0.5)", "newmark(beta=0.15000000000000002,gamma=0.4)",
                                       "newmark(beta=0.3,gamma=0.7)", "newmark(beta=0,gamma=0.5)",
                                       "newmark(beta=0.10000000000000009,gamma=0.30000000000000004)"};
  nh_system systems[2] = {test_system("chaotic_particle", NULL), test_system_of(&twisted, "")};
  for (size_t p = 0; p < sizeof P / sizeof P[0]; p++) {
    char text[128], name[128];
    snprintf(text, sizeof text, "newmark(beta=%.17g,gamma=%.17g)", P[p][0], P[p][1]);
    nh_method *m = test_method(text), *adj = nh_method_adjoint(m);
    cr_assert(adj != NULL, "%s has no adjoint", text);
    nh_method_format(adj, name, sizeof name);
    cr_assert_str_eq(name, expect[p], "adjoint of %s is %s, expected %s", text, name, expect[p]);
    for (int s = 0; s < 2; s++)
      for (int sign = -1; sign <= 1; sign += 2) {
        const double h = 0.2 * sign;
        nh_state x = default_state(&systems[s]), y, z;
        nh_cost cost = {0};
        step_ok(m, &systems[s], &x, &y, h, &cost);
        step_ok(adj, &systems[s], &y, &z, -h, &cost);
        cr_assert(dist(systems[s].n, &x, &z) <= 1e-13, "%s then its adjoint with -h on %s (h=%g): defect %.3e",
                  text, systems[s].type->name, h, dist(systems[s].n, &x, &z));
      }
    nh_method_free(adj);
    nh_method_free(m);
  }
  /* β* = ½ + β − γ outside [0, ½]: no Newmark adjoint. */
  nh_method *m = test_method("newmark(beta=0,gamma=0.8)");
  cr_assert(nh_method_adjoint(m) == NULL, "newmark(beta=0,gamma=0.8) has no adjoint in the family");
  nh_method_free(m);
}

Test(newmark_family, newmark_order_symmetry_and_properties) {
  nh_method *a = test_method("newmark"), *b = test_method("newmark(beta=0.25,gamma=0.6)");
  cr_assert(nh_method_order(a) == 2 && nh_method_is_symmetric(a), "newmark defaults: order 2, symmetric");
  cr_assert(nh_method_order(b) == 1 && !nh_method_is_symmetric(b), "gamma = 0.6: order 1, not symmetric");
  cr_assert(!nh_method_preserves_constraint(a), "classical Newmark does not keep the constraint");
  nh_method_free(a);
  nh_method_free(b);
  /* It ignores the constraint structure: the residual |μ·v| drifts (chaotic particle, h = 0.2). */
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_method *m = test_method("newmark(beta=0.25,gamma=0.5)");
  nh_state x = default_state(&sys), y;
  nh_cost cost = {0};
  double res = 0;
  for (int s = 0; s < 100; s++) {
    step_ok(m, &sys, &x, &y, 0.2, &cost);
    res = fmax(res, nh_constraint_residual(&sys, y.q, y.v));
    x = y;
  }
  cr_assert(res > 1e-8, "newmark kept the constraint to %.3e; expected a visible violation", res);
  nh_method_free(m);
}

Test(newmark_family, newmark_cost) {
  /* β = γ = 0 is explicit: one Γ per step, no Newton. Otherwise each Newton iteration costs n + 1 Γ
   * (residual and forward-difference columns) plus the Γ(t_k) of the step. */
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_method *e = test_method("newmark(beta=0,gamma=0)"), *i = test_method("newmark");
  nh_state x = default_state(&sys), y;
  nh_cost ce = {0}, ci = {0};
  step_ok(e, &sys, &x, &y, 0.1, &ce);
  cr_assert(ce.steps == 1 && ce.rhs_evals == 1 && ce.newton_iterations == 0 && ce.linear_solves == 0,
            "explicit newmark: steps %llu, rhs %llu, newton %llu", ce.steps, ce.rhs_evals, ce.newton_iterations);
  step_ok(i, &sys, &x, &y, 0.1, &ci);
  cr_assert(ci.newton_iterations >= 2 && ci.rhs_evals == 1 + ci.newton_iterations * (unsigned)(sys.n + 1),
            "implicit newmark: rhs %llu for %llu Newton iterations, n = %d", ci.rhs_evals, ci.newton_iterations,
            sys.n);
  nh_method_free(e);
  nh_method_free(i);
}

/* Error at T = 1 against rk8pd from the default state. */
static double error_at_one(const nh_method *m, const nh_system *sys, double h) {
  nh_state x = default_state(sys), y, ref;
  nh_cost cost = {0};
  cr_assert(nh_reference_solve(sys, &x, 1.0, 1e-13, &ref) == 0, "reference solve failed");
  for (long s = 0, N = lround(1 / h); s < N; s++) {
    step_ok(m, sys, &x, &y, h, &cost);
    x = y;
  }
  return dist(sys->n, &x, &ref);
}

Test(newmark_family, newmark_handles_damping_and_forcing) {
  /* newmark steps Γ(t, q, q̇) with every term of nh_acceleration; the Newmark-family methods that
   * need L of type (2) decline the system. Observed orders against rk8pd: 2 (γ = ½) and 1. */
  nh_system sys = test_system_of(&anharmonic, "eps=0.5,damp=0.3,amp=0.5");
  char err[256];
  nh_method *m2 = test_method("newmark(beta=0.25,gamma=0.5)"), *m1 = test_method("newmark(beta=0.25,gamma=0.6)");
  nh_method *nm = test_method("nh_newmark"), *dla = test_method("dla");
  cr_assert(nh_method_applies(m2, &sys, err, sizeof err) == 0, "newmark refused damping/forcing: %s", err);
  cr_assert_eq(nh_method_applies(nm, &sys, err, sizeof err), -1, "nh_newmark accepted a damped, forced system");
  cr_assert_eq(nh_method_applies(dla, &sys, err, sizeof err), -1, "dla accepted a damped, forced system");
  cr_assert(strstr(err, "damping") && strstr(err, "forcing"), "dla's refusal does not name the features: %s", err);
  const double p2 = log2(error_at_one(m2, &sys, 0.05) / error_at_one(m2, &sys, 0.025));
  const double p1 = log2(error_at_one(m1, &sys, 0.05) / error_at_one(m1, &sys, 0.025));
  cr_assert(fabs(p2 - 2) < 0.1, "newmark(0.25,0.5) with damping and forcing: observed order %.3f", p2);
  cr_assert(fabs(p1 - 1) < 0.15, "newmark(0.25,0.6) with damping and forcing: observed order %.3f", p1);
  nh_method_free(m2), nh_method_free(m1), nh_method_free(nm), nh_method_free(dla);
}

/* ---- nh_newmark's β = β' = 0 fast path: spec §2.9, C9 ----------------------------------------- */

Test(newmark_family, fast_path_equals_full_newton) {
  /* C9: the k-dimensional solve equals the full (N1)-(N4) Newton solution to round-off. */
  static const char *const systems[] = {"particle", "chaotic_particle"};
  static const double alphas[] = {0, 0.5, 1};
  for (int s = 0; s < 2; s++) {
    nh_system sys = test_system(systems[s], NULL);
    const nh_state starts[2] = {default_state(&sys), sampled_state(&sys, 1.535, 11)};
    for (int a = 0; a < 3; a++)
      for (int disc = 14; disc <= 15; disc++)
        for (int i = 0; i < 2; i++) {
          char fast[128], full[128];
          snprintf(fast, sizeof fast, "nh_newmark(alpha=%g,constraint=%s)", alphas[a], constraint_name(disc));
          snprintf(full, sizeof full, "nh_newmark(alpha=%g,constraint=%s,fast=0)", alphas[a], constraint_name(disc));
          double d = max_step_difference(fast, full, &sys, starts[i], 0.2, 20);
          cr_assert(d <= 1e-14, "%s on %s (start %d): fast and full Newton differ by %.3e", fast, systems[s], i, d);
        }
  }
}

Test(newmark_family, fast_path_nonlinear_constraint) {
  /* On the twisted system (N3) is nonlinear in Λ0 unless α = 0: the fast path detects it and runs
   * Newton on the k-dimensional problem, still equal to the full system to round-off. */
  nh_system sys = test_system_of(&twisted, "");
  static const double alphas[] = {0, 0.5, 1, 0.3};
  for (int a = 0; a < 4; a++)
    for (int disc = 14; disc <= 15; disc++) {
      char fast[128], full[128];
      snprintf(fast, sizeof fast, "nh_newmark(alpha=%g,constraint=%s)", alphas[a], constraint_name(disc));
      snprintf(full, sizeof full, "nh_newmark(alpha=%g,constraint=%s,fast=0)", alphas[a], constraint_name(disc));
      double d = max_step_difference(fast, full, &sys, default_state(&sys), 0.2, 20);
      cr_assert(d <= 1e-14, "%s on twisted: fast and full Newton differ by %.3e", fast, d);
      nh_method *m = test_method(fast);
      nh_state x = default_state(&sys), y;
      nh_cost cost = {0};
      step_ok(m, &sys, &x, &y, 0.2, &cost);
      if (alphas[a] == 0)
        cr_assert(cost.newton_iterations == 0, "alpha = 0 is linear in Lambda0; %llu Newton iterations",
                  cost.newton_iterations);
      else
        cr_assert(cost.newton_iterations >= 1, "%s: nonlinear (N3) solved without Newton", fast);
      cr_assert(nh_constraint_residual(&sys, y.q, y.v) <= 1e-14, "%s left D", fast);
      nh_method_free(m);
    }
}

/* One F^{0,0,α} step of the spec's explicit single-constraint formulas (M = I), from the state x:
 * α = 0: Prop 3.8 (§2.9); α = ½: the closed forms of §3.1 (particle) and §3.2 (chaotic particle). */
static nh_state spec_explicit_step(const nh_system *sys, const nh_state *x, double h, double alpha) {
  const int n = sys->n;
  double g0[NH_MAX_N], mu0[NH_MAX_N], g1[NH_MAX_N], mu1[NH_MAX_N], P[NH_MAX_N];
  sys->type->grad_potential(sys->p, x->q, g0);
  sys->type->constraints(sys->p, x->q, mu0);
  double lambda;
  for (int i = 0; i < n; i++) P[i] = h * x->v[i] - 0.5 * h * h * g0[i];
  if (alpha == 0) { /* λ_k = ⟨μ(q_k), ∇V(q_k)⟩ / |μ(q_k)|² */
    double num = 0, den = 0;
    for (int i = 0; i < n; i++) num += mu0[i] * g0[i], den += mu0[i] * mu0[i];
    lambda = num / den;
  } else if (n == 3) { /* §3.1: (h²/2)λ_k = h² ẋ_k ẏ_k / (2(1 + ȳ y_k)), ȳ = y_k + h ẏ_k/2 */
    lambda = x->v[0] * x->v[1] / (1 + (x->q[1] + 0.5 * h * x->v[1]) * x->q[1]);
  } else { /* §3.2: λ_k = −(P_x + ȳ1 P_z1 + ȳ2 P_z2) / ((h²/2)(1 + ȳ1 y1_k + ȳ2 y2_k)) */
    const double yb1 = x->q[1] + 0.5 * P[1], yb2 = x->q[2] + 0.5 * P[2]; /* y_i do not feel λ */
    lambda = -(P[0] + yb1 * P[3] + yb2 * P[4]) / (0.5 * h * h * (1 + yb1 * x->q[1] + yb2 * x->q[2]));
  }
  nh_state y = *x;
  y.t = x->t + h;
  for (int i = 0; i < n; i++) y.q[i] = x->q[i] + P[i] + 0.5 * h * h * lambda * mu0[i];
  sys->type->grad_potential(sys->p, y.q, g1);
  sys->type->constraints(sys->p, y.q, mu1);
  double mm = 0, mdq = 0, mg = 0; /* λ' = −(2/(h|μ1|²))⟨μ1, (q1−q0)/h⟩ + ⟨μ1, ∇V(q1)⟩/|μ1|² */
  for (int i = 0; i < n; i++) {
    mm += mu1[i] * mu1[i];
    mdq += mu1[i] * (y.q[i] - x->q[i]) / h;
    mg += mu1[i] * g1[i];
  }
  const double lambda1 = -2 / (h * mm) * mdq + mg / mm;
  for (int i = 0; i < n; i++) y.v[i] = (y.q[i] - x->q[i]) / h + 0.5 * h * (-g1[i] + lambda1 * mu1[i]);
  return y;
}

Test(newmark_family, fast_path_matches_spec_explicit_formulas) {
  /* C9 (Prop 3.8, §2.9) for α = 0, and the closed forms of §3.1/§3.2 for α = ½, on both particles. */
  static const char *const systems[] = {"particle", "chaotic_particle"};
  for (int s = 0; s < 2; s++)
    for (int a = 0; a < 2; a++) {
      const double alpha = a ? 0.5 : 0;
      nh_system sys = test_system(systems[s], NULL);
      char text[64];
      snprintf(text, sizeof text, "nh_newmark(alpha=%g)", alpha);
      nh_method *m = test_method(text);
      nh_state x = default_state(&sys), y;
      nh_cost cost = {0};
      double worst = 0;
      for (int k = 0; k < 20; k++) {
        nh_state e = spec_explicit_step(&sys, &x, 0.2, alpha);
        step_ok(m, &sys, &x, &y, 0.2, &cost);
        worst = fmax(worst, dist(sys.n, &y, &e));
        x = y;
      }
      cr_assert(worst <= 2e-15, "%s on %s: differs from the spec's explicit formulas by %.3e", text, systems[s],
                worst);
      nh_method_free(m);
    }
}

Test(newmark_family, fast_path_cost) {
  /* Per step: ∇V at q_k and q_{k+1}, one k×k solve for Λ0 and one for the velocity, no Newton;
   * the full system needs Newton iterations on 2n + 2k unknowns and more gradient evaluations. */
  static const char *const systems[] = {"particle", "chaotic_particle"};
  for (int s = 0; s < 2; s++) {
    nh_system sys = test_system(systems[s], NULL);
    nh_method *fast = test_method("nh_newmark(alpha=0.5)"), *full = test_method("nh_newmark(alpha=0.5,fast=0)");
    nh_state x = default_state(&sys), y;
    nh_cost cf = {0}, cn = {0};
    for (int k = 0; k < 10; k++) {
      step_ok(fast, &sys, &x, &y, 0.2, &cf);
      step_ok(full, &sys, &x, &y, 0.2, &cn);
      x = y;
    }
    cr_assert(cf.steps == 10 && cf.rhs_evals == 20 && cf.linear_solves == 20 && cf.newton_iterations == 0,
              "%s fast path: steps %llu rhs %llu linear %llu newton %llu", systems[s], cf.steps, cf.rhs_evals,
              cf.linear_solves, cf.newton_iterations);
    cr_assert(cn.newton_iterations >= 20 && cn.rhs_evals >= 40, "%s full Newton: rhs %llu newton %llu", systems[s],
              cn.rhs_evals, cn.newton_iterations);
    nh_method_free(fast);
    nh_method_free(full);
  }
}

/* ---- dla(alpha): spec §2.6, C10 ---------------------------------------------------------------- */

/* Max distance in q and in v between dla's and nh_newmark(0,0,α)'s full-Newton sequences. */
static void dla_vs_newmark(const nh_system *sys, double alpha, int disc, double h, int steps, double *dq,
                           double *dv) {
  char dtext[96], ntext[128];
  snprintf(dtext, sizeof dtext, "dla(alpha=%.17g,constraint=%s)", alpha, constraint_name(disc));
  snprintf(ntext, sizeof ntext, "nh_newmark(alpha=%.17g,constraint=%s,fast=0)", alpha, constraint_name(disc));
  nh_method *d = test_method(dtext), *nm = test_method(ntext);
  nh_state x = default_state(sys), z = x, y;
  nh_cost cost = {0};
  cr_assert(nh_method_init(d, sys, &x, h, &cost) == NH_STEP_OK, "dla init failed");
  *dq = *dv = 0;
  for (int s = 0; s < steps; s++) {
    step_ok(d, sys, &x, &y, h, &cost);
    x = y;
    step_ok(nm, sys, &z, &y, h, &cost);
    z = y;
    /* Relative to the state's size: on the free particle |q| grows to ~10 over the run. */
    double qn = 0, vn = 0;
    for (int i = 0; i < sys->n; i++) qn = fmax(qn, fabs(z.q[i])), vn = fmax(vn, fabs(z.v[i]));
    *dq = fmax(*dq, dist_q(sys->n, &x, &z) / (1 + qn));
    *dv = fmax(*dv, dist_v(sys->n, &x, &z) / (1 + vn));
  }
  nh_method_free(d);
  nh_method_free(nm);
}

Test(newmark_family, dla_equals_nh_newmark_beta_zero) {
  /* C10, Prop 3.5: dla(α) ≡ nh_newmark(β=0, β'=0, α): same q (and, by the (N2)+(N4) velocity, v)
   * over 100 steps (to 1e-13 relative to |q| and |v|), on both particles and the twisted system
   * (non-identity M, nonlinear (N3)). */
  static const double alphas[] = {0, 0.3, 0.5, 1};
  nh_system systems[3] = {test_system("particle", NULL), test_system("chaotic_particle", NULL), test_system_of(&twisted, "")};
  for (int s = 0; s < 3; s++)
    for (int a = 0; a < 4; a++)
      for (int disc = 14; disc <= 15; disc++) {
        double dq, dv;
        dla_vs_newmark(&systems[s], alphas[a], disc, 0.1, 100, &dq, &dv);
        cr_assert(dq <= 1e-13 && dv <= 1e-13, "dla(alpha=%g) with (%d) on %s: q differs by %.3e, v by %.3e (relative)",
                  alphas[a], disc, systems[s].type->name, dq, dv);
      }
}

Test(newmark_family, dla_recurrence_and_constraints) {
  /* §2.6: M(q_{k+2} − 2q_{k+1} + q_k)/h² + ∇V(q_{k+1}) lies along μ(q_{k+1}), Φ(q_{k+1}, q_{k+2}) = 0
   * ((14), α = 0.3) and μ(q)·v = 0, checked on the twisted system with its non-diagonal M. */
  nh_system sys = test_system_of(&twisted, "");
  const double h = 0.1, alpha = 0.3;
  nh_method *m = test_method("dla(alpha=0.3)");
  nh_state x = default_state(&sys), y;
  nh_cost cost = {0};
  cr_assert(nh_method_init(m, &sys, &x, h, &cost) == NH_STEP_OK, "dla init failed");
  double q0[3], worst_force = 0, worst_phi = 0, worst_res = 0;
  for (int s = 0; s < 60; s++) {
    step_ok(m, &sys, &x, &y, h, &cost);
    if (s > 0) { /* q0 = q_k, x.q = q_{k+1}, y.q = q_{k+2} */
      double r[3], g[3], mu[3], mr = 0, mm = 0;
      tw_grad(NULL, x.q, g);
      tw_constraints(NULL, x.q, mu);
      for (int i = 0; i < 3; i++) {
        r[i] = g[i];
        for (int j = 0; j < 3; j++) r[i] += tw_M[i * 3 + j] * (y.q[j] - 2 * x.q[j] + q0[j]) / (h * h);
      }
      for (int i = 0; i < 3; i++) mr += mu[i] * r[i], mm += mu[i] * mu[i];
      for (int i = 0; i < 3; i++) worst_force = fmax(worst_force, fabs(r[i] - mu[i] * mr / mm));
    }
    double qa[3], mua[3], phi = 0;
    for (int i = 0; i < 3; i++) qa[i] = (1 - alpha) * x.q[i] + alpha * y.q[i];
    tw_constraints(NULL, qa, mua);
    for (int i = 0; i < 3; i++) phi += mua[i] * (y.q[i] - x.q[i]) / h;
    worst_phi = fmax(worst_phi, fabs(phi));
    worst_res = fmax(worst_res, nh_constraint_residual(&sys, y.q, y.v));
    memcpy(q0, x.q, sizeof q0);
    x = y;
  }
  cr_assert(worst_force <= 1e-11, "DLA force not along mu(q_k+1): %.3e", worst_force);
  cr_assert(worst_phi <= 1e-14, "discrete constraint (14) violated: %.3e", worst_phi);
  cr_assert(worst_res <= 1e-14, "velocity left D: %.3e", worst_res);
  nh_method_free(m);
}

Test(newmark_family, dla_is_a_two_step_method) {
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_method *m = test_method("dla(alpha=0.5)");
  cr_assert((m->type->properties & (NH_HISTORY | NH_PRESERVES_CONSTRAINT)) == (NH_HISTORY | NH_PRESERVES_CONSTRAINT),
            "dla must declare NH_HISTORY and NH_PRESERVES_CONSTRAINT");
  nh_state x = default_state(&sys), y;
  nh_cost cost = {0};
  cr_assert(nh_method_step(m, &sys, &x, &y, 0.1, &cost) != NH_STEP_OK, "dla stepped without init");
  cr_assert(nh_method_init(m, &sys, &x, 0.1, &cost) == NH_STEP_OK, "dla init failed");
  cr_assert(nh_method_step(m, &sys, &x, &y, 0.2, &cost) != NH_STEP_OK, "dla stepped with another h than init's");
  cr_assert(nh_method_step(m, &sys, &x, &y, 0.1, &cost) == NH_STEP_OK, "dla step after init failed");
  cr_assert_float_eq(y.t, 0.1, 1e-15, "dla step time %g", y.t);
  /* Compositions change the step size: refused. */
  char err[512];
  static const char *const refused[] = {"triple_jump(dla(alpha=0.5))", "suzuki5(dla)", "adjoint_pair(dla(alpha=0))"};
  for (int i = 0; i < 3; i++) {
    nh_method *c = nh_method_parse(refused[i], err, sizeof err);
    cr_assert(c == NULL && strstr(err, "two-step"), "'%s' accepted or wrong message: %s", refused[i], err);
  }
  cr_assert(nh_method_order(m) == 2, "dla(alpha=0.5) is order 2");
  nh_method_free(m);
  m = test_method("dla(alpha=0)");
  cr_assert(nh_method_order(m) == 1, "dla(alpha=0) is order 1");
  nh_method_free(m);
}

/* ---- composition tables ------------------------------------------------------------------------ */

/* A test-only symmetric order-2 "method" that records the sub-step sizes it is called with. */
static double recorded[32];
static int nrecorded;

static nh_step_status record_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y,
                                  double h, nh_cost *cost) {
  (void)m, (void)sys, (void)cost;
  if (nrecorded < 32) recorded[nrecorded++] = h;
  *y = *x;
  y->t = x->t + h;
  return NH_STEP_OK;
}

/* These stubs match the callbacks of integrators/ files in shape only (a test-only method; not merged). */
static int order_two(const nh_method *m) {
  (void)m;
  return 2;
}

static int symmetric(const nh_method *m) {
  (void)m;
  return 1;
}

static const nh_integrator_type recorder = {.name = "recorder", .order = order_two, .is_symmetric = symmetric,
                                            .step = record_step};

/* The table of composition `name` as seen by its base: the sub-step sizes of one step h = 1. */
static int composition_coefficients(const char *name, double *c) {
  nh_method base = {.type = &recorder};
  nh_method comp = {.type = nh_integrator_type_find(name), .base = &base};
  char err[256] = "";
  cr_assert(comp.type != NULL, "%s is not registered", name);
  cr_assert(comp.type->setup(&comp, err, sizeof err) == 0, "%s refused a symmetric order-2 base: %s", name, err);
  nh_system sys = test_system("particle", NULL);
  nh_state x = default_state(&sys), y;
  nh_cost cost = {0};
  nrecorded = 0;
  step_ok(&comp, &sys, &x, &y, 1.0, &cost);
  cr_assert_float_eq(y.t, 1.0, 1e-15, "%s: step time %g", name, y.t);
  memcpy(c, recorded, sizeof(double) * (size_t)nrecorded);
  return nrecorded;
}

static double power_sum(int s, const double *c, int p) {
  double sum = 0;
  for (int i = 0; i < s; i++) sum += pow(c[i], p);
  return sum;
}

/* Stage count, symmetry c_i = c_{s+1−i}, Σc = 1, and Σc^p = 0 for odd 3 ≤ p < order (necessary
 * conditions for symmetric compositions of a symmetric order-2 method, HLW V.3.2). */
static void check_table(const char *name, int stages, int order, double *c) {
  int s = composition_coefficients(name, c);
  cr_assert(s == stages, "%s: %d stages, expected %d", name, s, stages);
  for (int i = 0; i < s; i++) cr_assert(c[i] == c[s - 1 - i], "%s: c[%d] = %.17g != c[%d]", name, i, c[i], s - 1 - i);
  cr_assert(fabs(power_sum(s, c, 1) - 1) <= 4e-16, "%s: sum c - 1 = %.3e", name, power_sum(s, c, 1) - 1);
  for (int p = 3; p < order; p += 2)
    cr_assert(fabs(power_sum(s, c, p)) <= 1e-14, "%s: sum c^%d = %.3e", name, p, power_sum(s, c, p));
  cr_assert(fabs(power_sum(s, c, order + 1)) > 1e-3, "%s: sum c^%d = %.3e vanishes too: is it order %d?", name,
            order + 1, power_sum(s, c, order + 1), order + 2);
  char text[64];
  snprintf(text, sizeof text, "%s(nh_newmark(alpha=0.5))", name);
  nh_method *m = test_method(text);
  cr_assert(nh_method_order(m) == order && nh_method_is_symmetric(m), "%s: order %d, expected %d, symmetric", text,
            nh_method_order(m), order);
  nh_method_free(m);
}

Test(newmark_family, suzuki5_table) {
  double c[32];
  check_table("suzuki5", 5, 4, c);
  const double p = 1 / (4 - cbrt(4.0));
  cr_assert(fabs(c[0] - p) <= 1e-15 && fabs(c[2] - (1 - 4 * p)) <= 1e-15,
            "Suzuki: p = %.17g (1/(4 - 4^(1/3)) = %.17g), middle %.17g", c[0], p, c[2]);
}

Test(newmark_family, yoshida6_table) {
  double c[32];
  check_table("yoshida6", 7, 6, c);
  /* Yoshida 1990, Table 1, solution A, as printed (15 digits): w1, w2, w3 = c[2], c[1], c[0]. */
  cr_assert(fabs(c[2] + 1.17767998417887) < 1e-14 && fabs(c[1] - 0.235573213359357) < 1e-14 &&
                fabs(c[0] - 0.784513610477560) < 1e-14,
            "not Yoshida's solution A: %.17g %.17g %.17g", c[2], c[1], c[0]);
}

Test(newmark_family, mclachlan8_table) {
  double c[32];
  check_table("mclachlan8", 15, 8, c);
}

Test(newmark_family, compositions_refuse_unsuitable_bases) {
  static const char *const refused[] = {"suzuki5(nh_newmark(alpha=0))", "yoshida6(rk4)",
                                        "mclachlan8(triple_jump(nh_newmark(alpha=0.5)))",
                                        "suzuki5(newmark(beta=0.25,gamma=0.6))"};
  char err[512];
  for (int i = 0; i < 4; i++) {
    nh_method *m = nh_method_parse(refused[i], err, sizeof err);
    cr_assert(m == NULL && strstr(err, "symmetric base method of order 2"), "'%s': %s", refused[i], err);
  }
}

Test(newmark_family, suzuki5_over_classical_newmark_is_order_4) {
  /* newmark(β, ½) is symmetric of order 2, so suzuki5 over it is order 4 (unconstrained anharmonic
   * oscillator, against rk8pd; the error ratio for h = 0.1 → 0.05 is 2⁴). */
  nh_system sys = test_system_of(&anharmonic, "eps=0.5");
  nh_method *m = test_method("suzuki5(newmark(beta=0.25,gamma=0.5))");
  const double p = log2(error_at_one(m, &sys, 0.1) / error_at_one(m, &sys, 0.05));
  cr_assert(fabs(p - 4) < 0.15, "suzuki5(newmark(beta=0.25,gamma=0.5)): observed order %.3f", p);
  nh_method_free(m);
}

/* ---- the general Newton path works in increments (spec/newmark.md C2, C8; issue 46) ------------ */

/* The largest |A(q_k)v_k| and |Φ(q_k, q_k+1)| over `steps` steps of method `text` on the CVT
 * (ε = 0.1) from its Fig. 5 state with the angle ξ0 moved by `shift` (V and μ are 2π-periodic in ξ:
 * the same motion). */
static void cvt_residuals(const char *text, double shift, double h, int steps, double *res, double *phi) {
  nh_system sys = test_system("cvt", "eps=0.1");
  nh_method *m = test_method(text);
  nh_state x = {0}, y;
  const double q0[3] = {1, 1, 0}, v0[3] = {0, 0, 2.8284271247461903};
  memcpy(x.q, q0, sizeof q0), memcpy(x.v, v0, sizeof v0);
  x.q[2] += shift;
  nh_cost cost = {0};
  cr_assert_eq(nh_method_init(m, &sys, &x, h, &cost), NH_STEP_OK);
  *res = *phi = 0;
  for (int s = 0; s < steps; s++) {
    cr_assert_eq(nh_method_step(m, &sys, &x, &y, h, &cost), NH_STEP_OK, "%s: step %d failed", text, s);
    double A[3], d[1];
    sys.type->constraints(sys.p, y.q, A);
    nh_method_discrete_constraint(m, &sys, &x, &y, h, d);
    *res = fmax(*res, fabs(A[0] * y.v[0] + A[1] * y.v[1] + A[2] * y.v[2]));
    *phi = fmax(*phi, fabs(d[0]));
    x = y;
  }
  nh_method_free(m);
}

/* C2 on the CVT, whose angle ξ grows without bound: a step solved for absolute positions and its
 * velocity formed from q1 − q0 lose ulp(ξ)/h, so the constraint residual grew with |ξ| (1.1e-12
 * within 200 time units from ξ0 + 2π·2000, where the same run from ξ0 stays at 6e-14); the fast
 * path (increments) stayed at round-off. With increments and (N4) imposed by projection the general
 * path is at round-off too, 2 ulp of |v| ≈ 3.5 (8.9e-16), wherever ξ is. Φ = ⟨μ̄, Δq⟩/h holds to the
 * rounding of q1 = q0 + Δq: ε|ξ||v_x| ≈ 3e-12 at |ξ| ≈ 1.3e4 in the worst case; along this run it
 * stays far below (the negative control: the old path's residual of 1.1e-12 fails the first bound). */
Test(newmark_family, general_newton_path_keeps_the_constraint_wherever_the_angle_is) {
  static const char *const methods[] = {"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "nh_newmark(alpha=0.5,fast=0)",
                                        "nh_newmark(alpha=0.5)"};
  for (int i = 0; i < 3; i++) {
    double res, phi, res_shift, phi_shift;
    cvt_residuals(methods[i], 0, 0.05, 4000, &res, &phi);
    cvt_residuals(methods[i], 12566.370614359172 /* 2 pi 2000 */, 0.05, 4000, &res_shift, &phi_shift);
    cr_expect(res <= 8.9e-16 && res_shift <= 8.9e-16, "%s: |A v| %.3e from xi0, %.3e from xi0 + 2 pi 2000", methods[i],
              res, res_shift);
    cr_expect(phi <= 1e-14 && phi_shift <= 3e-12, "%s: |Phi| %.3e, shifted %.3e", methods[i], phi, phi_shift);
  }
  /* Newton's own stagnation at large ξ (an update of ulp(ξ)·|w| ≈ 1e-13 that no longer halves, at
   * h = 0.1 and ξ ≈ 1e4, t ≈ 3700): v1 = w/h alone missed D by 1.4e-12 over T = 6000; the
   * projection that imposes (N4) keeps it at round-off. */
  double res, phi;
  cvt_residuals(methods[0], 0, 0.1, 60000, &res, &phi);
  cr_expect(res <= 8.9e-16, "NM(.1,.1,1/2), h = 0.1, T = 6000: |A v| %.3e", res);
}

/* C8: F*_{−h}(F_h(x)) = x to ≤ 1e-15 for the general Newton path at every h, from the chaotic
 * particle's exact Fig. 2 state (on D exactly, |x| ≤ 1): before, v1 = (q1 − q0)/h carried the
 * rounding of the positions, ulp(1)/h, and the defect grew like 1/h (3e-15 at h = 0.2, 3.4e-14 at
 * h = 0.2/64). */
Test(newmark_family, general_newton_path_adjoint_defect_at_round_off_for_every_h) {
  static const char *const methods[] = {"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)",
                                        "nh_newmark(beta=0.1,beta2=0.2,alpha=0.3)", "nh_newmark(alpha=0,fast=0)"};
  nh_system sys = test_system("chaotic_particle", NULL);
  for (int i = 0; i < 3; i++) {
    nh_method *m = test_method(methods[i]), *adj = nh_method_adjoint(m);
    cr_assert(adj);
    for (int j = 0; j <= 6; j++) {
      const double h = 0.2 / (1 << j);
      nh_state x = default_state(&sys), y, z;
      nh_cost cost = {0};
      cr_assert_eq(nh_method_init(m, &sys, &x, h, &cost), NH_STEP_OK);
      cr_assert_eq(nh_method_step(m, &sys, &x, &y, h, &cost), NH_STEP_OK);
      cr_assert_eq(nh_method_step(adj, &sys, &y, &z, -h, &cost), NH_STEP_OK); /* y carries what F* needs */
      double d = 0;
      for (int c = 0; c < sys.n; c++) d = fmax(d, fmax(fabs(z.q[c] - x.q[c]), fabs(z.v[c] - x.v[c])));
      cr_expect(d <= 1e-15, "%s, h = %g: |F*_-h(F_h(x)) - x| = %.3e", methods[i], h, d);
    }
    nh_method_free(adj);
    nh_method_free(m);
  }
}
