/* Tests of the Jiménez–Scheurle schemes (integrators/jimenez_scheurle.c) and the particle's
 * harmonic potential (systems/particle.c), against spec/discretization.md: the defining equations
 * (81)/(82) and (86), the closed forms of §2.6–2.7, the checklist §5 R4, R7, R8, R10, R11, R14,
 * R15, R18, R20, and the particle of §3.2–3.3. Convergence orders are rows of the order table
 * (tests/orders/js_particle.cfg, tests/orders/js_harmonic.cfg). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "integrators/integrator.h"
#include "tests/helpers.h"
#include "systems/system.h"

/* ---- helpers -------------------------------------------------------------------------------- */

/* The particle with the state of a preset (which also sets ω²). */
static nh_system particle_preset(const char *preset, nh_state *x) {
  nh_system sys = test_system("particle", "");
  char err[256] = "";
  cr_assert(nh_system_apply_preset(&sys, preset, x, err, sizeof err) == 0, "%s", err);
  return sys;
}

static void step_ok(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y, double h,
                    nh_cost *cost) {
  nh_cost local = {0};
  nh_step_status st = nh_method_step(m, sys, x, y, h, cost ? cost : &local);
  cr_assert(st == NH_STEP_OK, "step of h=%g on %s failed with status %d", h, sys->type->name, (int)st);
}

static double state_dist(int n, const nh_state *a, const nh_state *b) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fmax(fabs(a->q[i] - b->q[i]), fabs(a->v[i] - b->v[i])));
  return d;
}

static double dot(int n, const double *a, const double *b) {
  double s = 0;
  for (int i = 0; i < n; i++) s += a[i] * b[i];
  return s;
}

/* Runs two methods side by side for nsteps; the max-norm distance of their states over the run. */
static double max_distance(const char *ma, const char *mb, const nh_system *sys, const nh_state *x0, double h,
                           int nsteps) {
  nh_method *A = test_method(ma), *B = test_method(mb);
  nh_state xa = *x0, xb = *x0, y;
  double d = 0;
  for (int s = 0; s < nsteps; s++) {
    step_ok(A, sys, &xa, &y, h, NULL);
    xa = y;
    step_ok(B, sys, &xb, &y, h, NULL);
    xb = y;
    d = fmax(d, state_dist(sys->n, &xa, &xb));
  }
  nh_method_free(A);
  nh_method_free(B);
  return d;
}

/* The particle's deformed-constraint residual ζ − (y + (h/2)w)u (spec §2.7 (98), §6.5). */
static double deformed_residual(const nh_state *x, double h) {
  return x->v[2] - (x->q[1] + 0.5 * h * x->v[1]) * x->v[0];
}

/* ---- a test-only unconstrained system (spec §3.3 "unconstrained sanity limit") --------------- */

/* q = (x, y), M = diag(1, 2), V = ½x² + y² + (c/4)x⁴, k = 0; the quartic term makes Scheme B
 * genuinely implicit. With c = 0 both coordinates oscillate with unit frequency (M_yy = V_yy = 2):
 * x = x0 cos t + u0 sin t, y = y0 cos t + w0 sin t. `alpha` adds damping, to test applicability. */
static void free_mass(const double *p, const double *q, double *M) {
  (void)p, (void)q;
  M[0] = 1, M[1] = 0, M[2] = 0, M[3] = 2;
}
static double free_potential(const double *p, const double *q) {
  return 0.5 * q[0] * q[0] + q[1] * q[1] + 0.25 * p[0] * pow(q[0], 4);
}
static void free_grad(const double *p, const double *q, double *g) {
  g[0] = q[0] + p[0] * pow(q[0], 3);
  g[1] = 2 * q[1];
}
static void free_hess(const double *p, const double *q, double *H) {
  H[0] = 1 + 3 * p[0] * q[0] * q[0], H[1] = H[2] = 0, H[3] = 2;
}
static double free_damping(const double *p, double t) {
  (void)t;
  return p[1];
}

static const nh_param_desc free_params[] = {
    {"c", NH_PARAM_REAL, 0, 0, 10, "quartic coefficient", 0, NULL},
    {"alpha", NH_PARAM_REAL, 0, 0, 10, "damping", 0, NULL},
};

/* Alike test_newmark_family.c's `anharmonic` and tests/twisted.h in shape only: a designated
 * initializer of a different test system (not merged). */
static const nh_system_type unconstrained = {
    .name = "test_unconstrained",
    .doc = "test-only: M = diag(1,2), V = x^2/2 + y^2 + c x^4/4, no constraints",
    .n = 2,
    .k = 0,
    .params = free_params,
    .nparams = 2,
    .mass = free_mass,
    .potential = free_potential,
    .grad_potential = free_grad,
    .hess_potential = free_hess,
    .forces = &(const nh_system_forces){.damping = free_damping},
};

/* The trapezoidal rule q' = q + (h/2)(v + v'), M v' = M v − (h/2)(∇V(q) + ∇V(q')), by fixed-point
 * iteration to a fixed point (a contraction for h²|∇²V| small). */
static void trapezoidal_step(const nh_system *sys, const nh_state *x, nh_state *y, double h) {
  double g0[2], g1[2];
  free_grad(sys->p, x->q, g0);
  *y = *x;
  for (int it = 0; it < 200; it++) {
    nh_state prev = *y;
    free_grad(sys->p, y->q, g1);
    y->v[0] = x->v[0] - 0.5 * h * (g0[0] + g1[0]);
    y->v[1] = x->v[1] - 0.5 * h * (g0[1] + g1[1]) / 2;
    for (int i = 0; i < 2; i++) y->q[i] = x->q[i] + 0.5 * h * (x->v[i] + y->v[i]);
    if (state_dist(2, y, &prev) == 0) break;
  }
}

Test(jimenez_scheurle, scheme_b_is_trapezoidal_rule_without_constraints) {
  /* spec §2.5, §5 R8: with μ ≡ 0 Scheme B is the trapezoidal rule, up to the Newton tolerance. */
  nh_system sys = test_system_of(&unconstrained, "c=1");
  nh_method *B = test_method("js_b");
  nh_state x = {.q = {0.8, -0.5}, .v = {0.3, 0.7}}, xt = x, y;
  double d = 0;
  for (int s = 0; s < 100; s++) {
    step_ok(B, &sys, &x, &y, 0.1, NULL);
    x = y;
    trapezoidal_step(&sys, &xt, &y, 0.1);
    xt = y;
    d = fmax(d, state_dist(2, &x, &xt));
  }
  cr_assert(d <= 1e-13, "js_b vs the trapezoidal rule, 100 steps of h = 0.1: max difference %.3e", d);
  nh_method_free(B);
}

Test(jimenez_scheurle, scheme_a_is_symplectic_euler_without_constraints) {
  /* spec §3.3: with μ ≡ 0 Scheme A is position-first symplectic Euler q' = q + h v,
   * v' = v − h M⁻¹∇V(q'). */
  nh_system sys = test_system_of(&unconstrained, "c=1");
  nh_method *A = test_method("js_a");
  nh_state x = {.q = {0.8, -0.5}, .v = {0.3, 0.7}}, y;
  for (int s = 0; s < 20; s++) {
    double q[2] = {x.q[0] + 0.1 * x.v[0], x.q[1] + 0.1 * x.v[1]}, g[2];
    free_grad(sys.p, q, g);
    double v[2] = {x.v[0] - 0.1 * g[0], x.v[1] - 0.1 * g[1] / 2};
    step_ok(A, &sys, &x, &y, 0.1, NULL);
    for (int i = 0; i < 2; i++) {
      cr_assert(fabs(y.q[i] - q[i]) <= 1e-15 && fabs(y.v[i] - v[i]) <= 1e-15,
                "step %d, component %d: js_a (%.17g, %.17g), symplectic Euler (%.17g, %.17g)", s, i, y.q[i],
                y.v[i], q[i], v[i]);
    }
    x = y;
  }
  nh_method_free(A);
}

/* Max-norm error at T = 1 of js_b on the linear unconstrained system, against its exact flow. */
static double unconstrained_error(double h) {
  nh_system sys = test_system_of(&unconstrained, "c=0");
  nh_method *B = test_method("js_b");
  nh_state x = {.q = {0.8, -0.5}, .v = {0.3, 0.7}}, y;
  const nh_state x0 = x;
  for (long s = 0; s < lround(1 / h); s++) {
    step_ok(B, &sys, &x, &y, h, NULL);
    x = y;
  }
  nh_method_free(B);
  nh_state ex = {.q = {x0.q[0] * cos(1) + x0.v[0] * sin(1), x0.q[1] * cos(1) + x0.v[1] * sin(1)},
                 .v = {-x0.q[0] * sin(1) + x0.v[0] * cos(1), -x0.q[1] * sin(1) + x0.v[1] * cos(1)}};
  return state_dist(2, &x, &ex);
}

Test(jimenez_scheurle, scheme_b_order_two_without_constraints) {
  /* spec §5 R8: the trapezoidal rule is second order: the error at T = 1 drops by 4 per halving. */
  const double r1 = unconstrained_error(0.02) / unconstrained_error(0.01);
  const double r2 = unconstrained_error(0.01) / unconstrained_error(0.005);
  cr_assert(fabs(log2(r1) - 2) < 0.05 && fabs(log2(r2) - 2) < 0.05, "observed orders %.3f, %.3f, expected 2",
            log2(r1), log2(r2));
}

Test(jimenez_scheurle, general_schemes_decline_damping_particle_schemes_other_systems) {
  /* applies: A and B are for conservative systems with constant M (spec §3.1); P1/P2 are the
   * particle's closed forms (§2.6-2.7). */
  char err[512] = "";
  nh_system damped = test_system_of(&unconstrained, "alpha=0.1");
  nh_system chaotic = test_system("chaotic_particle", "");
  const char *general[] = {"js_a", "js_b"}, *particle[] = {"js_p1", "js_p2new", "js_p2orig"};
  for (int i = 0; i < 2; i++) {
    nh_method *m = test_method(general[i]);
    cr_assert_eq(nh_method_applies(m, &damped, err, sizeof err), -1, "%s accepted a damped system", general[i]);
    cr_assert(strstr(err, "damping") != NULL, "%s: reason '%s' does not name damping", general[i], err);
    cr_assert(nh_method_applies(m, &chaotic, err, sizeof err) == 0, "%s refused chaotic_particle: %s", general[i], err);
    nh_method_free(m);
  }
  for (int i = 0; i < 3; i++) {
    nh_method *m = test_method(particle[i]);
    cr_assert_eq(nh_method_applies(m, &chaotic, err, sizeof err), -1, "%s accepted chaotic_particle", particle[i]);
    cr_assert(strstr(err, "particle zdot = y xdot") != NULL, "%s: reason '%s'", particle[i], err);
    nh_system p = test_system("particle", "omega2=2");
    cr_assert(nh_method_applies(m, &p, err, sizeof err) == 0, "%s refused the particle: %s", particle[i], err);
    nh_method_free(m);
  }
}

/* ---- Scheme A (spec §2.4) ------------------------------------------------------------------- */

Test(jimenez_scheurle, scheme_a_step_solves_81_82) {
  /* spec §2.4: (81a) q1 = q0 + h v0; (81b) M v1 = M v0 − h∇V(q1) + h μ(q1)ᵀλ with λ from (82),
   * λ = C⁻¹ μ(q1)[M⁻¹∇V(q1) − v0/h]; (81c) μ(q1) v1 = 0. Chaotic particle: M = I, one constraint. */
  nh_system sys = test_system("chaotic_particle", "");
  nh_method *A = test_method("js_a");
  nh_state x, y;
  nh_system_default_state(&sys, &x);
  nh_cost cost = {0};
  const double h = 0.1;
  step_ok(A, &sys, &x, &y, h, &cost);
  double mu[5], g[5], r[5];
  sys.type->constraints(sys.p, y.q, mu);
  sys.type->grad_potential(sys.p, y.q, g);
  double lambda = 0;
  for (int i = 0; i < 5; i++) lambda += mu[i] * (g[i] - x.v[i] / h);
  lambda /= dot(5, mu, mu);
  for (int i = 0; i < 5; i++) {
    cr_assert(fabs(y.q[i] - (x.q[i] + h * x.v[i])) <= 1e-16, "(81a) fails in q[%d]", i);
    r[i] = y.v[i] - x.v[i] + h * g[i] - h * mu[i] * lambda;
    cr_assert(fabs(r[i]) <= 1e-14, "(81b) residual %.3e in component %d", r[i], i);
  }
  cr_assert(fabs(dot(5, mu, y.v)) <= 1e-15, "(81c) residual %.3e", dot(5, mu, y.v));
  cr_assert(cost.steps == 1 && cost.rhs_evals == 1 && cost.linear_solves == 1 && cost.newton_iterations == 0,
            "cost of one A step: steps %llu, rhs %llu, solves %llu, Newton %llu; expected 1, 1, 1, 0", cost.steps,
            cost.rhs_evals, cost.linear_solves, cost.newton_iterations);
  nh_method_free(A);
}

Test(jimenez_scheurle, p1_step_is_92_closed_form) {
  /* spec §2.6: free particle, λ = u w/(1 + y1²), u1 = u(1 + y y1)/(1 + y1²), w1 = w, ζ1 = y1 u1. */
  nh_state x, y;
  nh_system sys = particle_preset("discretization", &x);
  nh_method *P1 = test_method("js_p1");
  const double h = 0.05;
  for (int s = 0; s < 10; s++) {
    step_ok(P1, &sys, &x, &y, h, NULL);
    const double y1 = x.q[1] + h * x.v[1], u1 = x.v[0] * (1 + x.q[1] * y1) / (1 + y1 * y1);
    cr_assert(fabs(y.v[0] - u1) <= 1e-15, "u1 = %.17g, (92) gives %.17g", y.v[0], u1);
    cr_assert(y.v[1] == x.v[1], "w changed from %.17g to %.17g", x.v[1], y.v[1]);
    cr_assert(fabs(y.v[2] - y1 * u1) <= 1e-15, "zeta1 = %.17g, y1 u1 = %.17g", y.v[2], y1 * u1);
    x = y;
  }
  nh_method_free(P1);
}

Test(jimenez_scheurle, p1_equals_scheme_a_on_the_particle) {
  /* spec §5 R10: P1 is Scheme A specialised to the particle: the same numbers (free and harmonic). */
  const char *presets[] = {"discretization", "harmonic"};
  for (int p = 0; p < 2; p++) {
    nh_state x;
    nh_system sys = particle_preset(presets[p], &x);
    double d = max_distance("js_p1", "js_a", &sys, &x, 0.01, 300);
    cr_assert(d <= 1e-13, "%s: js_p1 and js_a differ by %.3e over 300 steps", presets[p], d);
  }
}

/* ---- Scheme B (spec §2.5) ------------------------------------------------------------------- */

Test(jimenez_scheurle, scheme_b_step_solves_86) {
  /* spec §2.5 on the chaotic particle: (86a) q̄ = Q + (h/2)W, (86b) Q' = q̄ + (h/2)W',
   * (86c) M(W' − W) + (h/2)[∇V(Q) + ∇V(Q')] = h μ(q̄)ᵀλ for some λ, i.e. parallel to μ(q̄),
   * (86d) μ(Q')W' = 0. */
  nh_system sys = test_system("chaotic_particle", "");
  nh_method *B = test_method("js_b");
  nh_state x, y;
  nh_system_default_state(&sys, &x);
  const double h = 0.1;
  step_ok(B, &sys, &x, &y, h, NULL);
  double qb[5], mu_b[5], mu1[5], g0[5], g1[5], r[5];
  for (int i = 0; i < 5; i++) qb[i] = x.q[i] + 0.5 * h * x.v[i];
  sys.type->constraints(sys.p, qb, mu_b);
  sys.type->constraints(sys.p, y.q, mu1);
  sys.type->grad_potential(sys.p, x.q, g0);
  sys.type->grad_potential(sys.p, y.q, g1);
  for (int i = 0; i < 5; i++) {
    cr_assert(fabs(y.q[i] - (qb[i] + 0.5 * h * y.v[i])) <= 1e-15, "(86b) fails in Q'[%d]", i);
    r[i] = y.v[i] - x.v[i] + 0.5 * h * (g0[i] + g1[i]);
  }
  const double c = dot(5, mu_b, r) / dot(5, mu_b, mu_b);
  for (int i = 0; i < 5; i++)
    cr_assert(fabs(r[i] - c * mu_b[i]) <= 1e-14, "(86c): the force residual is not along mu(qbar): %.3e in %d",
              r[i] - c * mu_b[i], i);
  cr_assert(fabs(c) > 1e-3, "the multiplier h lambda = %.3e vanishes: the test does not exercise (86c)", c);
  cr_assert(fabs(dot(5, mu1, y.v)) <= 1e-15, "(86d) residual %.3e", dot(5, mu1, y.v));
  nh_method_free(B);
}

/* Its set-up (chaotic particle, default state, one cost) reads like the scheme tests above by
 * accident: each checks different equations of its own scheme (not merged). */
Test(jimenez_scheurle, scheme_b_newton_converges_quadratically) {
  /* The analytic Jacobian of spec §2.5: Newton from W' = W, hλ(q̄, W) needs few iterations; a
   * wrong Jacobian would converge linearly at best. Chaotic particle, h = 0.1, 100 steps. */
  nh_system sys = test_system("chaotic_particle", "");
  nh_method *B = test_method("js_b");
  nh_state x, y;
  nh_system_default_state(&sys, &x);
  nh_cost cost = {0};
  for (int s = 0; s < 100; s++) {
    step_ok(B, &sys, &x, &y, 0.1, &cost);
    x = y;
  }
  const double its = (double)cost.newton_iterations / (double)cost.steps;
  cr_assert(its <= 4, "%.2f Newton iterations per step", its);
  cr_assert(cost.linear_solves == cost.newton_iterations && cost.jacobian_evals == cost.newton_iterations,
            "Newton counts its own Jacobians and solves");
  /* ∇V(Q_k), the λ guess and one force per iteration. */
  cr_assert(cost.rhs_evals == 2 * cost.steps + cost.newton_iterations, "rhs evals %llu for %llu steps, %llu its",
            cost.rhs_evals, cost.steps, cost.newton_iterations);
  nh_method_free(B);
}

Test(jimenez_scheurle, p2new_step_is_closed_form) {
  /* spec §2.7 (P2-new, free particle): ỹ' = ỹ + h w, w' = w, u' = u(1 + ỹ ȳ)/(1 + ỹ' ȳ) with
   * ȳ = ỹ + (h/2)w, ζ' = ỹ' u', x̃' = x̃ + (h/2)(u + u'), z̃' = z̃ + (h/2)(ζ + ζ'). */
  nh_state x, y;
  nh_system sys = particle_preset("discretization", &x);
  nh_method *P2 = test_method("js_p2new");
  const double h = 0.05;
  for (int s = 0; s < 10; s++) {
    step_ok(P2, &sys, &x, &y, h, NULL);
    const double yt1 = x.q[1] + h * x.v[1], yb = x.q[1] + 0.5 * h * x.v[1];
    const double u1 = x.v[0] * (1 + x.q[1] * yb) / (1 + yt1 * yb), z1 = yt1 * u1;
    const double expect[6] = {x.q[0] + 0.5 * h * (x.v[0] + u1), yt1, x.q[2] + 0.5 * h * (x.v[2] + z1), u1, x.v[1], z1};
    const double got[6] = {y.q[0], y.q[1], y.q[2], y.v[0], y.v[1], y.v[2]};
    for (int i = 0; i < 6; i++)
      cr_assert(fabs(got[i] - expect[i]) <= 1e-15, "step %d, entry %d: %.17g, spec 2.7 gives %.17g", s, i, got[i],
                expect[i]);
    x = y;
  }
  nh_method_free(P2);
}

Test(jimenez_scheurle, p2new_equals_scheme_b_on_the_particle) {
  /* spec §5 R11: P2-new is Scheme B specialised to the particle (free and harmonic). */
  const char *presets[] = {"discretization", "harmonic"};
  for (int p = 0; p < 2; p++) {
    nh_state x;
    nh_system sys = particle_preset(presets[p], &x);
    double d = max_distance("js_p2new", "js_b", &sys, &x, 0.01, 300);
    cr_assert(d <= 1e-12, "%s: js_p2new and js_b differ by %.3e over 300 steps", presets[p], d);
  }
}

/* |Φ_{−h}(Φ_h(x)) − x|. */
static double reversal_defect(const char *method, const nh_system *sys, const nh_state *x, double h) {
  nh_method *m = test_method(method);
  nh_state y, z;
  step_ok(m, sys, x, &y, h, NULL);
  step_ok(m, sys, &y, &z, -h, NULL);
  nh_method_free(m);
  return state_dist(sys->n, x, &z);
}

Test(jimenez_scheurle, scheme_b_is_symmetric_scheme_a_is_not) {
  /* B and P2-new are symmetric on D (Φ_{−h} ∘ Φ_h = id), which the order-4 triple jumps in
   * tests/orders/js_*.cfg rely on; A is not (O(h²) defect). */
  nh_system chaotic = test_system("chaotic_particle", "");
  nh_state x, xp;
  nh_system_default_state(&chaotic, &x);
  nh_system particle = particle_preset("harmonic", &xp);
  double dB = reversal_defect("js_b", &chaotic, &x, 0.2);
  double dP = reversal_defect("js_p2new", &particle, &xp, 0.2);
  double dA = reversal_defect("js_a", &chaotic, &x, 0.2);
  cr_assert(dB <= 1e-14, "js_b: |Phi_{-h} Phi_h x - x| = %.3e", dB);
  cr_assert(dP <= 1e-14, "js_p2new: |Phi_{-h} Phi_h x - x| = %.3e", dP);
  cr_assert(dA > 1e-4, "js_a reverses to %.3e; expected an O(h^2) defect", dA);
  nh_method *a = test_method("js_a"), *b = test_method("js_b");
  cr_assert(!nh_method_is_symmetric(a) && nh_method_is_symmetric(b), "symmetry flags");
  nh_method_free(a);
  nh_method_free(b);
}

/* ---- constraint preservation (spec §5 R4, R7, R10, R11) -------------------------------------- */

static double max_residual(const char *method, const nh_system *sys, const nh_state *x0, double h, int nsteps) {
  nh_method *m = test_method(method);
  nh_state x = *x0, y;
  double r = 0;
  for (int s = 0; s < nsteps; s++) {
    step_ok(m, sys, &x, &y, h, NULL);
    x = y;
    r = fmax(r, nh_constraint_residual(sys, x.q, x.v));
  }
  nh_method_free(m);
  return r;
}

Test(jimenez_scheurle, d_preserved_at_the_scheme_nodes) {
  /* R4 (A, original nodes), R7 (B, new nodes), R10/R11 (P1, P2-new): |μ(q)v| at round-off over
   * 2000 steps; the four declare NH_PRESERVES_CONSTRAINT, P2-orig does not. */
  nh_system chaotic = test_system("chaotic_particle", "");
  nh_state xc, xp;
  nh_system_default_state(&chaotic, &xc);
  nh_system particle = particle_preset("harmonic", &xp);
  struct {
    const char *m;
    const nh_system *sys;
    const nh_state *x;
  } runs[] = {{"js_a", &chaotic, &xc}, {"js_b", &chaotic, &xc}, {"js_a", &particle, &xp},
              {"js_b", &particle, &xp}, {"js_p1", &particle, &xp}, {"js_p2new", &particle, &xp}};
  for (size_t i = 0; i < sizeof runs / sizeof runs[0]; i++) {
    double r = max_residual(runs[i].m, runs[i].sys, runs[i].x, 0.05, 2000);
    cr_assert(r <= 1e-14, "%s on %s: max |mu(q) v| = %.3e", runs[i].m, runs[i].sys->type->name, r);
    nh_method *m = test_method(runs[i].m);
    cr_assert(nh_method_preserves_constraint(m), "%s does not declare NH_PRESERVES_CONSTRAINT", runs[i].m);
    nh_method_free(m);
  }
  nh_method *m = test_method("js_p2orig");
  cr_assert(!nh_method_preserves_constraint(m), "js_p2orig must not claim to keep D");
  nh_method_free(m);
}

/* ---- P2 at the original nodes (spec §2.7, R12-R15) ------------------------------------------ */

Test(jimenez_scheurle, p2orig_is_p2_read_at_the_original_nodes) {
  /* [derived] P2-orig and B step the same discrete trajectory q_k: from Q_0 = q_0 + (h/2)v_0,
   * W_0 = v_0, Scheme B (Newton) gives Q_k = q_k + (h/2)v_k and W_k = v_k of the closed form
   * (97)-(99). Harmonic particle, so the trapezoidal force is exercised. */
  nh_state x;
  nh_system sys = particle_preset("harmonic", &x);
  const double h = 0.02;
  nh_method *orig = test_method("js_p2orig"), *B = test_method("js_b");
  nh_state X = x, y;
  for (int i = 0; i < 3; i++) X.q[i] += 0.5 * h * x.v[i];
  double d = 0;
  for (int s = 0; s < 150; s++) {
    step_ok(orig, &sys, &x, &y, h, NULL);
    x = y;
    step_ok(B, &sys, &X, &y, h, NULL);
    X = y;
    for (int i = 0; i < 3; i++)
      d = fmax(d, fmax(fabs(X.q[i] - (x.q[i] + 0.5 * h * x.v[i])), fabs(X.v[i] - x.v[i])));
  }
  cr_assert(d <= 1e-12, "P2-orig and B at the shifted nodes differ by %.3e", d);
  nh_method_free(orig);
  nh_method_free(B);
}

Test(jimenez_scheurle, p2orig_keeps_the_deformed_constraint) {
  /* spec §5 R14: ζ_k − (y_k + (h/2)w_k)u_k at round-off from step 1 on (start on D: D → D_h),
   * while the original residual ζ − y u stays O(h) away from zero. Free and harmonic particle. */
  const char *presets[] = {"discretization", "harmonic"};
  const double h = 0.05;
  for (int p = 0; p < 2; p++) {
    nh_state x;
    nh_system sys = particle_preset(presets[p], &x);
    nh_method *m = test_method("js_p2orig");
    nh_state y;
    cr_assert(fabs(deformed_residual(&x, h)) > 1e-3, "%s: the initial state is already on D_h", presets[p]);
    double dh = 0, orig = 0;
    for (int s = 0; s < 400; s++) {
      step_ok(m, &sys, &x, &y, h, NULL);
      x = y;
      dh = fmax(dh, fabs(deformed_residual(&x, h)));
      orig = fmax(orig, nh_constraint_residual(&sys, x.q, x.v));
    }
    cr_assert(dh <= 1e-15, "%s: max |zeta - (y + h w/2) u| = %.3e (98)", presets[p], dh);
    cr_assert(orig > 1e-3, "%s: the original residual %.3e is at round-off; P2-orig should leave D", presets[p], orig);
    nh_method_free(m);
  }
}

Test(jimenez_scheurle, p2orig_start_on_dh_follows_99) {
  /* spec §2.7, second case: start=1 moves ζ0 to (y0 + (h/2)w0)u0; then each step is (99):
   * λ = u w/(1 + y1 ŷ), ŷ = y1 + (h/2)w, u1 = u − hλ y1, w1 = w, ζ1 = ζ + hλ. Free particle. */
  nh_state x;
  nh_system sys = particle_preset("discretization", &x);
  nh_method *m = test_method("js_p2orig(start=1)");
  const double h = 0.1;
  nh_cost cost = {0};
  cr_assert(nh_method_init(m, &sys, &x, h, &cost) == NH_STEP_OK, "init failed");
  cr_assert(fabs(x.v[2] - (0.3 + 0.5 * h * 0.8) * 1.0) <= 1e-16, "zeta0 = %.17g after init", x.v[2]);
  for (int s = 0; s < 10; s++) {
    nh_state y;
    step_ok(m, &sys, &x, &y, h, NULL);
    const double y1 = x.q[1] + h * x.v[1], yh = y1 + 0.5 * h * x.v[1];
    const double lam = x.v[0] * x.v[1] / (1 + y1 * yh);
    const double expect[3] = {x.v[0] - h * lam * y1, x.v[1], x.v[2] + h * lam};
    for (int i = 0; i < 3; i++) {
      cr_assert(fabs(y.q[i] - (x.q[i] + h * x.v[i])) <= 1e-16, "(97) q update, step %d", s);
      cr_assert(fabs(y.v[i] - expect[i]) <= 1e-15, "step %d, v[%d] = %.17g, (99) gives %.17g", s, i, y.v[i],
                expect[i]);
    }
    x = y;
  }
  nh_method_free(m);
}

/* Max over steps 1..N of |ζ_k − y_k u_k| of P2-orig on the free particle, and of its distance to
 * the predicted value (h/2) w u_k (spec §5 R15). */
static void p2orig_free_residual(double h, double *max_r, double *max_dev) {
  nh_state x, y;
  nh_system sys = particle_preset("discretization", &x);
  nh_method *m = test_method("js_p2orig");
  *max_r = *max_dev = 0;
  for (long s = 0; s < lround(2 / h); s++) {
    step_ok(m, &sys, &x, &y, h, NULL);
    x = y;
    const double r = x.v[2] - x.q[1] * x.v[0];
    *max_r = fmax(*max_r, fabs(r));
    *max_dev = fmax(*max_dev, fabs(r - 0.5 * h * x.v[1] * x.v[0]));
  }
  nh_method_free(m);
}

Test(jimenez_scheurle, p2orig_residual_is_half_h_w_u_and_halves_with_h) {
  /* spec §5 R15: for the free particle r_k = ζ_k − y_k u_k = (h/2) w u_k exactly; O(h): it halves
   * when h halves. */
  double r1, dev1, r2, dev2;
  p2orig_free_residual(0.02, &r1, &dev1);
  p2orig_free_residual(0.01, &r2, &dev2);
  cr_assert(dev1 <= 1e-15 && dev2 <= 1e-15, "r_k - (h/2) w u_k up to %.3e, %.3e", dev1, dev2);
  cr_assert(fabs(r1 / r2 - 2) < 0.05, "max residual %.4e at h = 0.02, %.4e at h = 0.01: ratio %.3f, expected 2", r1,
            r2, r1 / r2);
}

Test(jimenez_scheurle, p2orig_harmonic_residual_bounded_and_oscillating) {
  /* spec §5 R15/R16 [check]: with V = (x² + y²)/2, h = 0.05, 20 000 steps, the original residual
   * changes sign with the motion and does not grow: compare the first and last fifths. */
  nh_state x, y;
  nh_system sys = particle_preset("harmonic", &x);
  nh_method *m = test_method("js_p2orig");
  const int N = 20000;
  double lo = 0, hi = 0, first = 0, last = 0;
  for (int s = 1; s <= N; s++) {
    step_ok(m, &sys, &x, &y, 0.05, NULL);
    x = y;
    const double r = x.v[2] - x.q[1] * x.v[0];
    lo = fmin(lo, r), hi = fmax(hi, r);
    if (s <= N / 5) first = fmax(first, fabs(r));
    if (s > N - N / 5) last = fmax(last, fabs(r));
  }
  cr_assert(lo < -0.2 * hi && hi > 0, "residual in [%.3e, %.3e]: no sign change", lo, hi);
  cr_assert(last <= 1.5 * first, "residual grows: %.3e in the first fifth, %.3e in the last", first, last);
  cr_assert(first < 0.1, "residual %.3e is not O(h)", first);
  nh_method_free(m);
}

/* ---- local error (spec §5 R18) -------------------------------------------------------------- */

/* One-step error of `method` from a state on D of the free particle, against the exact flow. */
static double local_error(const char *method, double h) {
  nh_state x, y, ex;
  nh_system sys = particle_preset("discretization", &x);
  nh_method *m = test_method(method);
  step_ok(m, &sys, &x, &y, h, NULL);
  cr_assert(nh_exact_solution(&sys, &x, h, &ex) == 0, "exact failed");
  nh_method_free(m);
  return state_dist(3, &y, &ex);
}

Test(jimenez_scheurle, local_error_slopes) {
  /* spec §5 R18 / §6.3: one-step errors from exact points on D scale like h² (A, P1) and h³ (B, P2-new). */
  const char *methods[] = {"js_a", "js_p1", "js_b", "js_p2new"};
  const double expect[] = {2, 2, 3, 3};
  for (int i = 0; i < 4; i++) {
    const double p = log2(local_error(methods[i], 0.01) / local_error(methods[i], 0.005));
    cr_assert(fabs(p - expect[i]) < 0.1, "%s: local error slope %.3f, expected %g", methods[i], p, expect[i]);
  }
}

/* ---- energy (spec §5 R20: not claimed by the paper) ----------------------------------------- */

Test(jimenez_scheurle, energy_a_decays_on_free_particle_b_bounded_with_potential) {
  /* R20 [derived; check]: free particle, A: K_{k+1}/K_k = cos²Δθ, E decreases monotonically.
   * Harmonic particle, B: |E − E0| bounded, O(h²): a quarter when h halves (T = 100). */
  nh_state x, y;
  nh_system sys = particle_preset("discretization", &x);
  nh_method *A = test_method("js_a");
  double E = nh_energy(&sys, x.q, x.v);
  const double E0 = E;
  for (int s = 0; s < 400; s++) {
    step_ok(A, &sys, &x, &y, 0.05, NULL);
    x = y;
    double E1 = nh_energy(&sys, x.q, x.v);
    cr_assert(E1 <= E + 1e-15, "js_a: energy rises at step %d: %.17g -> %.17g", s, E, E1);
    E = E1;
  }
  cr_assert(E < E0 - 1e-4, "js_a: energy %.6f did not decrease from %.6f", E, E0);
  nh_method_free(A);

  double dE[2];
  const double hs[2] = {0.1, 0.05};
  nh_method *B = test_method("js_b");
  for (int j = 0; j < 2; j++) {
    nh_system hsys = particle_preset("harmonic", &x);
    const double H0 = nh_energy(&hsys, x.q, x.v);
    double first = 0, last = 0;
    const long N = lround(100 / hs[j]);
    for (long s = 1; s <= N; s++) {
      step_ok(B, &hsys, &x, &y, hs[j], NULL);
      x = y;
      const double d = fabs(nh_energy(&hsys, x.q, x.v) - H0);
      if (s <= N / 2) first = fmax(first, d);
      else last = fmax(last, d);
    }
    cr_assert(last <= 1.5 * first, "js_b, h = %g: |E - E0| grows, %.3e then %.3e", hs[j], first, last);
    dE[j] = fmax(first, last);
  }
  cr_assert(fabs(log2(dE[0] / dE[1]) - 2) < 0.3, "js_b: max |E - E0| %.3e (h = 0.1), %.3e (h = 0.05): not O(h^2)",
            dE[0], dE[1]);
  nh_method_free(B);
}

/* ---- the particle's harmonic potential and presets (spec §3.2-3.3) --------------------------- */

Test(jimenez_scheurle, particle_harmonic_potential_derivatives) {
  /* V = ½ω²(x² + y²): gradient and Hessian against central differences of V and ∇V. */
  nh_system sys = test_system("particle", "omega2=2.5");
  const double q[3] = {0.7, -0.4, 1.3}, d = 1e-5;
  double g[3], H[9];
  sys.type->grad_potential(sys.p, q, g);
  sys.type->hess_potential(sys.p, q, H);
  cr_assert(fabs(sys.type->potential(sys.p, q) - 0.5 * 2.5 * (0.49 + 0.16)) <= 1e-15, "V(q)");
  for (int j = 0; j < 3; j++) {
    double qp[3] = {q[0], q[1], q[2]}, qm[3] = {q[0], q[1], q[2]}, gp[3], gm[3];
    qp[j] += d, qm[j] -= d;
    const double fd = (sys.type->potential(sys.p, qp) - sys.type->potential(sys.p, qm)) / (2 * d);
    cr_assert(fabs(g[j] - fd) <= 1e-9, "dV/dq%d = %.12g, central difference %.12g", j, g[j], fd);
    sys.type->grad_potential(sys.p, qp, gp);
    sys.type->grad_potential(sys.p, qm, gm);
    for (int i = 0; i < 3; i++)
      cr_assert(fabs(H[i * 3 + j] - (gp[i] - gm[i]) / (2 * d)) <= 1e-9, "Hessian entry (%d,%d)", i, j);
  }
  /* spec §3.3: λ = (u w − ω² x y)/(1 + y²) from (77). */
  const double v[3] = {0.9, 0.6, -0.4 * 0.9};
  double lambda;
  cr_assert(nh_multiplier(&sys, 0, q, v, &lambda) == 0, "nh_multiplier failed");
  const double expect = (0.9 * 0.6 - 2.5 * 0.7 * -0.4) / (1 + 0.16);
  cr_assert(fabs(lambda - expect) <= 1e-15, "lambda = %.17g, spec 3.3 gives %.17g", lambda, expect);
}

Test(jimenez_scheurle, particle_exact_only_without_potential) {
  /* The closed form of §3.2 holds for ω² = 0 only: with the potential exact() fails loudly (−1,
   * NaN state), so the runner falls back to the reference; the reference conserves
   * E = ½|v|² + V (§3.3) and keeps D. */
  nh_state x, ex;
  nh_system sys = particle_preset("harmonic", &x);
  cr_assert(sys.p[0] == 1, "preset harmonic sets omega2 = %g, expected 1", sys.p[0]);
  cr_assert(nh_exact_solution(&sys, &x, 3, &ex) == -1, "exact() succeeded with omega2 = 1");
  cr_assert(isnan(ex.q[0]) && isnan(ex.v[2]), "exact() left a number in the state");
  nh_state ref;
  cr_assert(nh_reference_solve(&sys, &x, 3, 1e-13, &ref) == 0, "reference failed");
  const double dE = nh_energy(&sys, ref.q, ref.v) - nh_energy(&sys, x.q, x.v);
  cr_assert(fabs(dE) <= 1e-11, "reference energy error %.3e", dE);
  cr_assert(nh_constraint_residual(&sys, ref.q, ref.v) <= 1e-11, "reference leaves D");
  nh_system free_sys = particle_preset("discretization", &x);
  cr_assert(nh_exact_solution(&free_sys, &x, 2, &ex) == 0, "exact() fails for the free particle");
  char name[64];
  nh_system_format(&sys, name, sizeof name);
  cr_assert_str_eq(name, "particle(omega2=1)");
  nh_system_format(&free_sys, name, sizeof name);
  cr_assert_str_eq(name, "particle()");
}

Test(jimenez_scheurle, particle_presets_on_D) {
  /* Each preset lies on D (ż0 = y0 ẋ0) and has the state of its paper; "newmark" is the default. */
  static const struct {
    const char *name;
    double q[3], v[3], omega2;
  } expect[] = {{"newmark", {1, 1, -1}, {1, -1, 1}, 0},
                {"discretization", {0, 0.3, 0}, {1, 0.8, 0.3}, 0},
                {"harmonic", {0.2, 0.3, 0}, {1, 0.8, 0.3}, 1},
                {"rattle", {0, 1, 0}, {1, 1, 1}, 0}};
  for (size_t i = 0; i < sizeof expect / sizeof expect[0]; i++) {
    nh_state x;
    nh_system sys = particle_preset(expect[i].name, &x);
    cr_assert(nh_constraint_residual(&sys, x.q, x.v) <= 1e-16, "preset %s is off D", expect[i].name);
    cr_assert(sys.p[0] == expect[i].omega2, "preset %s: omega2 = %g", expect[i].name, sys.p[0]);
    for (int j = 0; j < 3; j++)
      cr_assert(x.q[j] == expect[i].q[j] && x.v[j] == expect[i].v[j], "preset %s, entry %d", expect[i].name, j);
  }
  nh_system sys = test_system("particle", "");
  nh_state d;
  nh_system_default_state(&sys, &d);
  cr_assert(d.q[0] == 1 && d.q[1] == 1 && d.q[2] == -1 && d.v[0] == 1 && d.v[1] == -1 && d.v[2] == 1,
            "default state is not the newmark preset");
}
