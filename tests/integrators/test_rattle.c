/* SHAKE and RATTLE, nonholonomic and classical (integrators/rattle.c), and the Cartesian pendulum
 * (systems/pendulum.c), against spec/rattle.md: the §6 checklist (exact constraint, exact energy
 * for V = 0 and its offset against λ0, symmetry and reversibility, SHAKE ≡ RATTLE, Remark 2, the
 * free circle) and the parasitic mode of §3.6. Observed orders are in tests/orders/rattle_*.cfg.
 * Multipliers are in the spec's sign (ṗ = −V_q − μᵀλ); nh_rattle carries λ_k first in nh_state.carry. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "integrators/integrator.h"
#include "tests/helpers.h"
#include "systems/system.h"

/* ---- helpers ---------------------------------------------------------------------------------- */

static void init_ok(const nh_method *m, const nh_system *sys, nh_state *x, double h, nh_cost *cost) {
  cr_assert(nh_method_init(m, sys, x, h, cost) == NH_STEP_OK, "init of %s failed", m->type->name);
}

static void step_ok(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y, double h,
                    nh_cost *cost) {
  nh_step_status st = nh_method_step(m, sys, x, y, h, cost);
  cr_assert(st == NH_STEP_OK, "%s: step of h=%g failed with status %d", m->type->name, h, (int)st);
}

/* The spec's nonholonomic particle IC (spec/rattle.md §4 C): q0 = (0,1,0), p0 = v0 = (1,1,1). */
static nh_state particle_ic(void) {
  nh_state x;
  memset(&x, 0, sizeof x);
  x.q[1] = 1;
  x.v[0] = x.v[1] = x.v[2] = 1;
  return x;
}

/* A pendulum state from the angle: q = l(sin θ, −cos θ), v = l θ̇ (cos θ, sin θ). */
static nh_state pendulum_state(double l, double th, double thd) {
  nh_state x;
  memset(&x, 0, sizeof x);
  x.q[0] = l * sin(th), x.q[1] = -l * cos(th);
  x.v[0] = l * thd * cos(th), x.v[1] = l * thd * sin(th);
  return x;
}

static double max_diff(int n, const double *a, const double *b) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
  return d;
}

static double norm2(int n, const double *v) {
  double s = 0;
  for (int i = 0; i < n; i++) s += v[i] * v[i];
  return s;
}

/* ---- the pendulum system ---------------------------------------------------------------------- */

typedef struct {
  const char *params;
  double th0, thd0, T;
  const char *what;
} pendulum_case;

/* The elliptic-function solution against GSL's rk8pd on the index-reduced ODE, to 1e-10. */
Test(rattle, pendulum_exact_matches_reference) {
  const pendulum_case cases[] = {
      {"", 0.5, 1, 10, "libration, spec IC (4 F)"},
      {"", -2.0, -0.7, 10, "libration, large amplitude, thetadot0 < 0"},
      {"m=2,g=9.81,l=0.5", 0.3, -2, 5, "libration, other parameters"},
      {"", 0.5, 3, 10, "rotation"},
      {"m=0.5,g=2,l=1.5", -1, -4, 10, "rotation, thetadot0 < 0, other parameters"},
      {"", 0, 2, 3, "separatrix k = 1"},
      {"g=0", 0.5, 1, 10, "free circle"},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    nh_system sys = test_system("pendulum", cases[c].params);
    const double l = sys.p[2];
    nh_state x0 = pendulum_state(l, cases[c].th0, cases[c].thd0), ex, ref;
    x0.t = 0.25;
    cr_assert(nh_exact_solution(&sys, &x0, x0.t, &ex) == 0);
    cr_assert_leq(max_diff(2, ex.q, x0.q) + max_diff(2, ex.v, x0.v), 1e-14, "%s: exact(t0) != x0", cases[c].what);
    for (int s = 1; s <= 4; s++) {
      double t = x0.t + 0.25 * s * cases[c].T;
      cr_assert(nh_exact_solution(&sys, &x0, t, &ex) == 0, "%s: exact failed", cases[c].what);
      /* rk8pd's own error at tol 1e-13 reaches 2e-10 in the fast rotation case; 1e-14 suffices. */
      cr_assert(nh_reference_solve(&sys, &x0, t, 1e-14, &ref) == 0);
      double d = fmax(max_diff(2, ex.q, ref.q), max_diff(2, ex.v, ref.v));
      cr_expect_leq(d, 1e-10, "%s: |exact - rk8pd| = %.3g at t = %g", cases[c].what, d, t);
      cr_expect_leq(fabs(norm2(2, ex.q) - l * l), 1e-13 * l * l, "%s: exact state off the circle", cases[c].what);
      cr_expect_eq(ex.t, t);
      double dE = fabs(nh_energy(&sys, ex.q, ex.v) - nh_energy(&sys, x0.q, x0.v));
      cr_expect_leq(dE, 1e-13 * fmax(1, fabs(nh_energy(&sys, x0.q, x0.v))), "%s: energy changes by %.3g", cases[c].what, dE);
      /* Flow property: x(t) from x(t/2) equals x(t) from x0. */
      nh_state half, again;
      cr_assert(nh_exact_solution(&sys, &x0, 0.5 * (x0.t + t), &half) == 0);
      cr_assert(nh_exact_solution(&sys, &half, t, &again) == 0);
      d = fmax(max_diff(2, ex.q, again.q), max_diff(2, ex.v, again.v));
      cr_expect_leq(d, 1e-12, "%s: flow property violated by %.3g", cases[c].what, d);
    }
  }
}

Test(rattle, pendulum_exact_declines_states_off_the_circle) {
  nh_system sys = test_system("pendulum", "");
  nh_state x0 = pendulum_state(1.1, 0.5, 1), ex;
  cr_expect_eq(nh_exact_solution(&sys, &x0, 1.0, &ex), -1, "|q| = 1.1 with l = 1 has no constrained motion");
  x0 = pendulum_state(1, 0.5, 1);
  x0.v[0] += 0.1; /* q·v ≠ 0 */
  cr_expect_eq(nh_exact_solution(&sys, &x0, 1.0, &ex), -1);
}

/* The system's functions against finite differences and the definitions of spec §4 F:
 * ∇V, A = ∂φ/∂q (holonomic consistency), dA = ∂A/∂q. */
Test(rattle, pendulum_derivatives_and_constraint) {
  nh_system sys = test_system("pendulum", "m=2,g=3,l=1.5");
  const nh_system_type *T = sys.type;
  const double q[2] = {0.7, -1.2}, eps = 1e-6;
  double g[2], A[2], dA[4], H[4];
  T->grad_potential(sys.p, q, g);
  T->constraints(sys.p, q, A);
  T->constraints_jacobian(sys.p, q, dA);
  T->hess_potential(sys.p, q, H);
  cr_expect_float_eq(T->potential(sys.p, q), 2 * 3 * -1.2, 1e-15, "V = m g y");
  for (int j = 0; j < 2; j++) {
    double qp[2] = {q[0], q[1]}, qm[2] = {q[0], q[1]}, php, phm, Ap[2], Am[2];
    qp[j] += eps, qm[j] -= eps;
    T->holonomic(sys.p, qp, &php);
    T->holonomic(sys.p, qm, &phm);
    cr_expect_float_eq(A[j], (php - phm) / (2 * eps), 1e-8, "A = dphi/dq, component %d", j);
    cr_expect_float_eq(g[j], (T->potential(sys.p, qp) - T->potential(sys.p, qm)) / (2 * eps), 1e-8);
    T->constraints(sys.p, qp, Ap);
    T->constraints(sys.p, qm, Am);
    for (int i = 0; i < 2; i++) cr_expect_float_eq(dA[i * 2 + j], (Ap[i] - Am[i]) / (2 * eps), 1e-8);
    cr_expect_eq(H[j], 0.0);
    cr_expect_eq(H[2 + j], 0.0);
  }
  double phi;
  const double on[2] = {1.5 * sin(0.3), -1.5 * cos(0.3)};
  T->holonomic(sys.p, on, &phi);
  cr_expect_leq(fabs(phi), 1e-15, "phi = 0 on the circle of radius l");
  cr_expect_float_eq(sys.M[0], 2.0, 0, "M = m I");
  cr_expect_float_eq(sys.M[3], 2.0, 0);
  cr_expect_eq(sys.M[1], 0.0);
}

Test(rattle, pendulum_presets_and_default_ic) {
  nh_system sys = test_system("pendulum", "g=5,l=2");
  nh_state x;
  char err[256];
  cr_assert(nh_system_apply_preset(&sys, "free_circle", &x, err, sizeof err) == 0, "%s", err);
  cr_expect_eq(sys.p[1], 0.0, "free_circle sets g = 0");
  cr_expect_eq(sys.p[2], 1.0, "free_circle sets l = 1");
  cr_assert(nh_system_apply_preset(&sys, "rattle", &x, err, sizeof err) == 0, "%s", err);
  cr_expect_eq(sys.p[1], 1.0, "rattle sets g = 1");
  nh_state want = pendulum_state(1, 0.5, 1), def;
  cr_expect_leq(max_diff(2, x.q, want.q) + max_diff(2, x.v, want.v), 1e-16, "theta0 = 0.5, thetadot0 = 1");
  nh_system_default_state(&sys, &def);
  cr_expect_leq(max_diff(2, def.q, want.q) + max_diff(2, def.v, want.v), 1e-16);
  cr_expect_eq(nh_constraint_residual(&sys, x.q, x.v), 0.0, "q0.v0 = 0 exactly");
}

/* ---- nonholonomic RATTLE ---------------------------------------------------------------------- */

/* spec §6 item 2 and item 12: |μ(q_k)M⁻¹p_k| at round-off; one gradient and one k×k solve per step,
 * no Newton. */
Test(rattle, nh_rattle_exact_constraint_and_cost) {
  const char *methods[] = {"nh_rattle", "nh_rattle(lambda0=0)", "nh_shake", "nh_shake(lambda0=0)"};
  const int solves_per_step[] = {1, 1, 2, 2};
  nh_system sys = test_system("particle", "");
  for (int mi = 0; mi < 4; mi++) {
    nh_method *m = test_method(methods[mi]);
    nh_state x = particle_ic(), y;
    nh_cost init = {0}, cost = {0};
    init_ok(m, &sys, &x, 0.05, &init);
    double worst = 0;
    for (int s = 0; s < 2000; s++) {
      step_ok(m, &sys, &x, &y, 0.05, &cost);
      worst = fmax(worst, nh_constraint_residual(&sys, y.q, y.v));
      x = y;
    }
    cr_expect_leq(worst, 1e-14, "%s: max |mu(q) v| = %.3g", methods[mi], worst);
    cr_expect_eq(cost.steps, 2000);
    cr_expect_eq(cost.rhs_evals, 2000, "%s: %llu gradients for 2000 steps", methods[mi], cost.rhs_evals);
    cr_expect_eq(cost.linear_solves, 2000ull * (unsigned)solves_per_step[mi]);
    cr_expect_eq(cost.newton_iterations, 0);
    nh_method_free(m);
  }
}

/* E_d = ½ p_{k+1/2}ᵀM⁻¹p_{k+1/2} with p_{k+1/2} = M(q_{k+1} − q_k)/h; the particle has M = I.
 * The difference quotient loses about ε|q|/h to cancellation. */
static double discrete_energy(const double *q0, const double *q1, double h) {
  double d[3];
  for (int i = 0; i < 3; i++) d[i] = (q1[i] - q0[i]) / h;
  return 0.5 * norm2(3, d);
}

/* The same from the state by (9a), free of that cancellation: p_{k+1/2} = M v_k − (h/2)μᵀλ_k for
 * V = 0, and E_d = ½ p_{k+1/2}ᵀM⁻¹p_{k+1/2}. Also λᵀCλ with C = μM⁻¹μᵀ, both at q_k. */
static double discrete_energy_9a(const nh_system *sys, const nh_state *x, double h, double *lCl) {
  const int n = sys->n, k = sys->k;
  double A[NH_MAX_K * NH_MAX_N], p[NH_MAX_N], f[NH_MAX_N] = {0}, Ed = 0;
  sys->type->constraints(sys->p, x->q, A);
  for (int i = 0; i < n; i++) {
    p[i] = 0;
    for (int j = 0; j < n; j++) p[i] += sys->M[i * n + j] * x->v[j];
    for (int a = 0; a < k; a++) f[i] += A[a * n + i] * x->carry[a]; /* μᵀλ */
    p[i] -= 0.5 * h * f[i];
  }
  *lCl = 0;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      Ed += 0.5 * p[i] * sys->Minv[i * n + j] * p[j];
      *lCl += f[i] * sys->Minv[i * n + j] * f[j];
    }
  return Ed;
}

/* spec §6 item 3 (Thm 5.1, V = 0): E_d constant to round-off (tol) over 10⁵ steps and equal to the
 * spec's values for λ0 = 0 and λ0 from (4); the identity H_k = E_d − (h²/8)λ_kᵀC(q_k)λ_k with that
 * constant E_d at every step. */
static void check_exact_energy(const char *system, const char *preset, nh_state x0, double h,
                               const double Ed_expected[2], double tol) {
  nh_system sys = test_system(system, "");
  if (preset) {
    char err[256];
    cr_assert(nh_system_apply_preset(&sys, preset, &x0, err, sizeof err) == 0, "%s", err);
  }
  for (int l0 = 0; l0 < 2; l0++) {
    nh_method *m = test_method(l0 ? "nh_rattle(lambda0=1)" : "nh_rattle(lambda0=0)");
    nh_state x = x0, y;
    nh_cost cost = {0};
    init_ok(m, &sys, &x, h, &cost);
    double Ed_min = INFINITY, Ed_max = -INFINITY, identity = 0, lCl;
    for (int s = 0; s < 100000; s++) {
      step_ok(m, &sys, &x, &y, h, &cost);
      double Ed = discrete_energy_9a(&sys, &x, h, &lCl);
      Ed_min = fmin(Ed_min, Ed), Ed_max = fmax(Ed_max, Ed);
      discrete_energy_9a(&sys, &y, h, &lCl);
      identity = fmax(identity, fabs(nh_energy(&sys, y.q, y.v) - (Ed_expected[l0] - h * h / 8 * lCl)));
      x = y;
    }
    cr_expect_leq(Ed_max - Ed_min, tol, "%s, lambda0=%d: E_d range %.3g over 1e5 steps", system, l0,
                  Ed_max - Ed_min);
    cr_expect_float_eq(Ed_min, Ed_expected[l0], tol, "%s, lambda0=%d: E_d = %.17g, spec 6 item 3: %.17g", system,
                       l0, Ed_min, Ed_expected[l0]);
    cr_expect_leq(identity, tol, "%s, lambda0=%d: H_k - E_d + h^2/8 lambda C lambda up to %.3g", system, l0,
                  identity);
    nh_method_free(m);
  }
}

Test(rattle, nh_rattle_exact_energy_v0) {
  const double particle[2] = {1.5, 1.50015625}, sleigh[2] = {1.125, 1.12501}, disk[2] = {0.875, 0.8753125};
  nh_state none;
  memset(&none, 0, sizeof none);
  check_exact_energy("particle", NULL, particle_ic(), 0.05, particle, 1e-13);
  /* On the sleigh the parasitic mode (spec §3.6) grows until |λ_k| reaches 10²; E_d then moves by
   * about 6e-17 per step, 6e-12 over the 10⁵ steps (T = 1000), rather than a √N random walk. */
  if (nh_system_type_find("chaplygin_sleigh")->mass)
    check_exact_energy("chaplygin_sleigh", "ic1", none, 0.01, sleigh, 1e-11);
  if (nh_system_type_find("vertical_disk")->mass) check_exact_energy("vertical_disk", "ic1", none, 0.05, disk, 1e-13);
}

/* spec §3.5 item 5: λ_k = (2/h)C⁻¹μ(p_{k−1/2} − (h/2)V_q(q_k)) with p_{k−1/2} = (q_k − q_{k−1})/h: the
 * multiplier nh_rattle carries equals the one recovered from its positions (particle, V = 0). */
Test(rattle, nh_rattle_multiplier_from_positions) {
  const double h = 0.05;
  nh_system sys = test_system("particle", "");
  nh_method *m = test_method("nh_rattle");
  nh_state x = particle_ic(), y;
  nh_cost cost = {0};
  init_ok(m, &sys, &x, h, &cost);
  double worst = 0;
  for (int s = 0; s < 200; s++) {
    step_ok(m, &sys, &x, &y, h, &cost);
    const double ph[3] = {(y.q[0] - x.q[0]) / h, (y.q[1] - x.q[1]) / h, (y.q[2] - x.q[2]) / h};
    const double C = 1 + y.q[1] * y.q[1]; /* μ = (−y, 0, 1) */
    worst = fmax(worst, fabs(y.carry[0] - (2 / h) * (-y.q[1] * ph[0] + ph[2]) / C));
    x = y;
  }
  cr_expect_leq(worst, 1e-11, "lambda_k differs from spec 3.5 item 5 by %.3g", worst);
  nh_method_free(m);
}

/* spec §6 item 5: for horizontal symmetries the momentum at (q_k, p_k) is conserved exactly:
 * p_θ = Jθ̇ on the knife edge, p_φ = I_h φ̇ on the vertical disk (spec §2.9 [derived]). */
Test(rattle, nh_rattle_momentum_map) {
  const char *systems[] = {"knife_edge", "vertical_disk"}, *presets[] = {"ic2", "ic1"};
  char err[256];
  for (int c = 0; c < 2; c++) {
    if (!nh_system_type_find(systems[c])->mass) continue; /* not written yet */
    nh_system sys = test_system(systems[c], "");
    cr_assert_eq(nh_invariant_count(&sys), 1);
    for (int l0 = 0; l0 < 2; l0++) {
      nh_method *m = test_method(l0 ? "nh_rattle" : "nh_rattle(lambda0=0)");
      nh_state x, y;
      nh_cost cost = {0};
      cr_assert(nh_system_apply_preset(&sys, presets[c], &x, err, sizeof err) == 0, "%s", err);
      init_ok(m, &sys, &x, 0.05, &cost);
      double J0, J, worst = 0;
      nh_invariants(&sys, x.q, x.v, &J0);
      for (int s = 0; s < 20000; s++) {
        step_ok(m, &sys, &x, &y, 0.05, &cost);
        nh_invariants(&sys, y.q, y.v, &J);
        worst = fmax(worst, fabs(J - J0));
        x = y;
      }
      cr_expect_leq(worst, 1e-13, "%s, lambda0=%d: %s changes by %.3g", systems[c], l0, nh_invariant_name(&sys, 0),
                    worst);
      nh_method_free(m);
    }
  }
}

/* spec §6 item 4: E_d − H_0 = 0 for λ0 = 0 and (h²/8)λ0ᵀC0λ0 = h²/16 (λ0 = −0.5, C0 = 2) for λ0
 * from (4), at several h, from the first step's positions; also the starting multiplier itself,
 * λ(0) = −0.5 (spec §4 C). */
Test(rattle, nh_rattle_energy_offset_vs_lambda0) {
  nh_system sys = test_system("particle", "");
  nh_method *zero = test_method("nh_rattle(lambda0=0)"), *cont = test_method("nh_rattle");
  const double H0 = 1.5;
  for (double h = 0.1; h > 0.005; h /= 2) {
    nh_state xz = particle_ic(), xc = particle_ic(), y;
    nh_cost cost = {0};
    const double tol = 2e-15 / h; /* cancellation in (q1 − q0)/h */
    init_ok(zero, &sys, &xz, h, &cost);
    init_ok(cont, &sys, &xc, h, &cost);
    cr_expect_eq(xz.carry[0], 0.0);
    cr_expect_float_eq(xc.carry[0], -0.5, 1e-15, "lambda(0) = %.17g, spec 4 C: -0.5", xc.carry[0]);
    step_ok(zero, &sys, &xz, &y, h, &cost);
    cr_expect_float_eq(discrete_energy(xz.q, y.q, h) - H0, 0.0, tol, "h=%g: E_d - H0 with lambda0 = 0", h);
    step_ok(cont, &sys, &xc, &y, h, &cost);
    cr_expect_float_eq(discrete_energy(xc.q, y.q, h) - H0, h * h / 16, tol, "h=%g: E_d - H0 = %.6g, want %.6g", h,
                       discrete_energy(xc.q, y.q, h) - H0, h * h / 16);
  }
  nh_method_free(zero);
  nh_method_free(cont);
}

/* spec §6 item 6, §3.3: Φ_{−h}∘Φ_h = id and ρΦ_hρΦ_h = id on (q, p, λ), ρ(q,p,λ) = (q,−p,λ). */
static void check_symmetry(const char *method, const char *system, const char *params, nh_state x, double h) {
  nh_system sys = test_system(system, params);
  nh_method *m = test_method(method);
  nh_cost cost = {0};
  const int n = sys.n, k = sys.k, lam = strncmp(method, "nh_", 3) == 0; /* rattle carries only a Newton guess */
  init_ok(m, &sys, &x, h, &cost);
  for (int s = 0; s < 20; s++) {
    nh_state y, back, r, rr;
    step_ok(m, &sys, &x, &y, h, &cost);
    step_ok(m, &sys, &y, &back, -h, &cost);
    double d = fmax(max_diff(n, back.q, x.q), max_diff(n, back.v, x.v));
    cr_expect_leq(d, 1e-14, "%s on %s, step %d: |Phi_-h Phi_h x - x| = %.3g in (q, v)", method, system, s, d);
    /* λ_{k+1} = (2/h)C⁻¹μM⁻¹p̃ divides an O(h) quantity by h: round-off ε|p|/h. */
    d = lam ? max_diff(k, back.carry, x.carry) : 0;
    cr_expect_leq(d, 1e-14 / h, "%s on %s, step %d: |Phi_-h Phi_h x - x| = %.3g in lambda", method, system, s, d);
    cr_expect_float_eq(back.t, x.t, 1e-14);
    r = y;
    for (int i = 0; i < n; i++) r.v[i] = -r.v[i];
    step_ok(m, &sys, &r, &rr, h, &cost);
    for (int i = 0; i < n; i++) rr.v[i] = -rr.v[i];
    d = fmax(max_diff(n, rr.q, x.q), max_diff(n, rr.v, x.v));
    cr_expect_leq(d, 1e-14, "%s on %s, step %d: |rho Phi_h rho Phi_h x - x| = %.3g in (q, v)", method, system, s, d);
    d = lam ? max_diff(k, rr.carry, x.carry) : 0;
    cr_expect_leq(d, 1e-14 / h, "%s on %s, step %d: |rho Phi_h rho Phi_h x - x| = %.3g in lambda", method, system,
                  s, d);
    x = y;
  }
  nh_method_free(m);
}

Test(rattle, symmetry_and_reversibility) {
  check_symmetry("nh_rattle", "particle", "", particle_ic(), 0.1);
  check_symmetry("nh_rattle(lambda0=0)", "particle", "", particle_ic(), 0.1);
  check_symmetry("nh_rattle", "pendulum", "", pendulum_state(1, 0.5, 1), 0.1);
  check_symmetry("nh_rattle", "pendulum", "m=2,g=3,l=1.5", pendulum_state(1.5, -1, 2), 0.05);
  check_symmetry("rattle", "pendulum", "", pendulum_state(1, 0.5, 1), 0.1);
  check_symmetry("rattle", "pendulum", "m=2,g=3,l=1.5", pendulum_state(1.5, -1, 2), 0.05);
}

/* spec §6 item 7, §3.4: SHAKE and RATTLE give the same q_k (≲ 1e-13 over 200 steps), and the
 * SHAKE output velocity equals RATTLE's p_k up to the round-off of (q_{k+1} − q_k)/h. The two-step
 * recursion accumulates round-off like k^{3/2} ε |q| (spec §2.2): the bound is relative to max |q_k|
 * (up to 14 on the particle), and 5e-13 for classical SHAKE, whose q_k also carry the Newton
 * solution's round-off. */
static void check_shake_equals_rattle(const char *shake, const char *rattle, const char *system, const char *params,
                                      nh_state x0, double h) {
  const double tol = strncmp(shake, "nh_", 3) == 0 ? 1e-13 : 5e-13;
  nh_system sys = test_system(system, params);
  nh_method *ms = test_method(shake), *mr = test_method(rattle);
  nh_state xs = x0, xr = x0, y;
  nh_cost cost = {0};
  init_ok(ms, &sys, &xs, h, &cost);
  init_ok(mr, &sys, &xr, h, &cost);
  double dq = 0, dv = 0, qmax = 1;
  for (int s = 0; s < 200; s++) {
    step_ok(ms, &sys, &xs, &y, h, &cost);
    xs = y;
    step_ok(mr, &sys, &xr, &y, h, &cost);
    xr = y;
    dq = fmax(dq, max_diff(sys.n, xs.q, xr.q));
    dv = fmax(dv, max_diff(sys.n, xs.v, xr.v));
    for (int i = 0; i < sys.n; i++) qmax = fmax(qmax, fabs(xr.q[i]));
  }
  cr_expect_leq(dq, tol * qmax, "%s vs %s on %s: max |q difference| = %.3g, max |q| = %.3g", shake, rattle, system,
                dq, qmax);
  cr_expect_leq(dv, 1e-11, "%s vs %s on %s: max |v difference| = %.3g", shake, rattle, system, dv);
  cr_expect_float_eq(xs.t, xr.t, 1e-12);
  nh_method_free(ms);
  nh_method_free(mr);
}

Test(rattle, shake_equals_rattle) {
  check_shake_equals_rattle("nh_shake", "nh_rattle", "particle", "", particle_ic(), 0.05);
  check_shake_equals_rattle("nh_shake(lambda0=0)", "nh_rattle(lambda0=0)", "particle", "", particle_ic(), 0.05);
  check_shake_equals_rattle("nh_shake", "nh_rattle", "pendulum", "", pendulum_state(1, 0.5, 1), 0.05);
  check_shake_equals_rattle("nh_shake(lambda0=0)", "nh_rattle(lambda0=0)", "pendulum", "m=2,g=3,l=1.5",
                            pendulum_state(1.5, -1, 2), 0.05);
  check_shake_equals_rattle("shake", "rattle", "pendulum", "", pendulum_state(1, 0.5, 1), 0.05);
  check_shake_equals_rattle("shake", "rattle", "pendulum", "m=2,g=3,l=1.5", pendulum_state(1.5, -1, 2), 0.05);
}

/* Max over k ≤ T/h of |φ(q_k)| and of |G(q_k)M⁻¹p_k| = |q_k·v_k| on the pendulum (spec §4 F). */
static void pendulum_violations(const char *method, double h, double T, double *phi_max, double *vel_max) {
  nh_system sys = test_system("pendulum", "");
  nh_method *m = test_method(method);
  nh_state x = pendulum_state(1, 0.5, 1), y;
  nh_cost cost = {0};
  init_ok(m, &sys, &x, h, &cost);
  *phi_max = *vel_max = 0;
  for (long s = 0; s < lround(T / h); s++) {
    double phi;
    step_ok(m, &sys, &x, &y, h, &cost);
    sys.type->holonomic(sys.p, y.q, &phi);
    *phi_max = fmax(*phi_max, fabs(phi));
    *vel_max = fmax(*vel_max, nh_constraint_residual(&sys, y.q, y.v));
    x = y;
  }
  nh_method_free(m);
}

/* spec §6 item 8 (Remark 2), §5.2 F: nh_rattle keeps G M⁻¹p = 0 exactly but φ(q) only to O(h²),
 * larger with λ0 = 0 than with λ0 from (4); classical rattle and shake keep φ to round-off. */
Test(rattle, remark2_holonomic_pendulum) {
  double phi1, phi2, vel, phi_zero;
  pendulum_violations("nh_rattle", 0.1, 10, &phi1, &vel);
  cr_expect_leq(vel, 1e-15, "nh_rattle: |G M^-1 p| = %.3g", vel);
  pendulum_violations("nh_rattle", 0.05, 10, &phi2, &vel);
  cr_expect_leq(vel, 1e-15);
  cr_expect_geq(phi2, 1e-5, "nh_rattle does not keep phi(q) = 0 (Remark 2): max |phi| = %.3g", phi2);
  cr_expect(phi1 / phi2 > 3.6 && phi1 / phi2 < 4.4, "max |phi| is O(h^2): ratio %.3f on halving h", phi1 / phi2);
  pendulum_violations("nh_rattle(lambda0=0)", 0.05, 10, &phi_zero, &vel);
  cr_expect_gt(phi_zero, phi2, "max |phi|: lambda0=0 %.3g, continuous %.3g", phi_zero, phi2);
  double phi100;
  pendulum_violations("nh_rattle", 0.05, 100, &phi100, &vel);
  cr_expect_leq(phi100, 1.5 * phi2, "no drift of phi up to T = 100: %.3g vs %.3g at T = 10", phi100, phi2);
  const char *classical[] = {"rattle", "shake"};
  for (int c = 0; c < 2; c++) {
    pendulum_violations(classical[c], 0.1, 10, &phi1, &vel);
    cr_expect_leq(phi1, 1e-14, "%s: max |phi| = %.3g", classical[c], phi1);
    cr_expect_leq(vel, 1e-15, "%s: max |G M^-1 p| = %.3g", classical[c], vel);
  }
}

/* spec §5.2 F, §6 item 8: on the free circle (g = 0, |v0| = 1) nh_rattle's |q_k|² − 1 alternates
 * exactly between h²|v0|² and 0 with λ0 = 0, between h⁴|v0|⁴/4 and 0 with λ0 = |v0|² from (4). */
Test(rattle, free_circle_alternation) {
  nh_system sys = test_system("pendulum", "");
  const double h = 0.05, odd[2] = {h * h, h * h * h * h / 4};
  const char *methods[2] = {"nh_rattle(lambda0=0)", "nh_rattle(lambda0=1)"};
  char err[256];
  for (int l0 = 0; l0 < 2; l0++) {
    nh_method *m = test_method(methods[l0]);
    nh_state x, y;
    nh_cost cost = {0};
    cr_assert(nh_system_apply_preset(&sys, "free_circle", &x, err, sizeof err) == 0, "%s", err);
    init_ok(m, &sys, &x, h, &cost);
    if (l0) cr_expect_float_eq(x.carry[0], 1.0, 1e-15, "lambda0 = |v0|^2 = 1, got %.17g", x.carry[0]);
    double worst = 0;
    for (int s = 1; s <= 4000; s++) {
      step_ok(m, &sys, &x, &y, h, &cost);
      worst = fmax(worst, fabs(norm2(2, y.q) - 1 - (s % 2 ? odd[l0] : 0)));
      x = y;
    }
    cr_expect_leq(worst, 1e-13, "%s: |q_k|^2 - 1 departs from the alternation by %.3g", methods[l0], worst);
    nh_method_free(m);
  }
}

/* spec §3.6: λ_k converges to λ(t_k) at order 2 with λ0 from (4); with λ0 = 0 it carries a
 * period-2 mode of amplitude |ν| = |λ(0)| √((1 + y0²)/(1 + y²)) on the particle (ν ∝ (1+y²)^{−1/2}),
 * which does not vanish as h → 0. The continuous λ(T) comes from the exact solution. */
static double lambda_error(const char *method, double h, double T) {
  nh_system sys = test_system("particle", "");
  nh_method *m = test_method(method);
  nh_state x = particle_ic(), y, ex;
  nh_cost cost = {0};
  init_ok(m, &sys, &x, h, &cost);
  for (long s = 0; s < lround(T / h); s++) {
    step_ok(m, &sys, &x, &y, h, &cost);
    x = y;
  }
  nh_state x0 = particle_ic();
  double lam;
  cr_assert(nh_exact_solution(&sys, &x0, T, &ex) == 0);
  cr_assert(nh_multiplier(&sys, T, ex.q, ex.v, &lam) == 0);
  nh_method_free(m);
  return x.carry[0] - (-lam); /* spec sign: −(code base's λ) */
}

Test(rattle, multiplier_convergence_and_parasitic_mode) {
  const double T = 2;
  double e1 = lambda_error("nh_rattle", 0.02, T), e2 = lambda_error("nh_rattle", 0.01, T);
  cr_expect(fabs(e1 / e2 - 4) < 0.2, "lambda_k with lambda0 from (4): order 2, error ratio %.3f", e1 / e2);
  const double nu = 0.5 * sqrt(2.0 / (1 + 3.0 * 3.0)); /* y(T) = y0 + T = 3 */
  for (double h = 0.02; h > 0.004; h /= 2) {
    double e = lambda_error("nh_rattle(lambda0=0)", h, T);
    cr_expect(fabs(fabs(e) - nu) < 2e-3, "lambda0=0, h=%g: |lambda_N - lambda(T)| = %.5f, parasitic mode %.5f", h,
              fabs(e), nu);
  }
}

/* ---- applicability, names ------------------------------------------------------------------- */

Test(rattle, applicability_and_names) {
  char err[512];
  nh_system particle = test_system("particle", ""), pendulum = test_system("pendulum", "");
  const char *classical[] = {"rattle", "shake"};
  for (int c = 0; c < 2; c++) {
    nh_method *m = test_method(classical[c]);
    cr_expect_eq(nh_method_applies(m, &particle, err, sizeof err), -1, "%s must decline the particle", classical[c]);
    cr_expect(strstr(err, "holonomic") != NULL, "reason: %s", err);
    cr_expect_eq(nh_method_applies(m, &pendulum, err, sizeof err), 0, "%s", err);
    cr_expect(nh_method_preserves_constraint(m));
    nh_method_free(m);
  }
  const char *nh[] = {"nh_rattle", "nh_shake"};
  for (int c = 0; c < 2; c++) {
    nh_method *m = test_method(nh[c]);
    cr_expect_eq(nh_method_applies(m, &particle, err, sizeof err), 0, "%s", err);
    cr_expect_eq(nh_method_applies(m, &pendulum, err, sizeof err), 0, "%s", err);
    cr_expect_eq(nh_method_order(m), 2);
    char name[128];
    nh_method_format(m, name, sizeof name);
    char want[128];
    snprintf(want, sizeof want, "%s(lambda0=1)", nh[c]);
    cr_expect_str_eq(name, want, "the starting multiplier is always named (spec 7 A4)");
    nh_method_free(m);
  }
  const nh_system_type *fd = nh_system_type_find("falling_disk");
  if (fd && fd->mass) { /* a configuration-dependent mass matrix, once that system is written */
    nh_system disk = test_system("falling_disk", "");
    nh_method *m = test_method("nh_rattle");
    cr_expect_eq(nh_method_applies(m, &disk, err, sizeof err), -1, "nh_rattle needs a constant mass matrix");
    cr_expect(strstr(err, "constant mass matrix") != NULL, "reason: %s", err);
    nh_method_free(m);
  }
  cr_expect_null(nh_method_parse("nh_rattle(lambda0=2)", err, sizeof err), "lambda0 is 0 or 1");
  cr_expect_null(nh_method_parse("triple_jump(nh_shake)", err, sizeof err), "two-step methods do not compose");
  cr_expect_null(nh_method_parse("adjoint_pair(shake)", err, sizeof err), "two-step methods do not compose");
  nh_method *tj = test_method("triple_jump(nh_rattle)");
  cr_expect_eq(nh_method_order(tj), 4, "nh_rattle is symmetric of order 2");
  nh_method_free(tj);
}

/* Compositions above order 4 over nh_rattle claim 4 on a constrained system, with a caveat, and
 * the table's order where there is no multiplier to carry (issue 46 item 3); rattle reads nothing
 * from its previous step and keeps the table's order. The orders themselves are measured by the
 * composition matrix (tests/contracts/test_order_matrix.c). */
Test(rattle, compositions_over_nh_rattle_claim_order_4_with_constraints) {
  nh_system pendulum = test_system("pendulum", ""), oscillator = test_system("oscillator", "");
  const struct {
    const char *name;
    int constrained, free, caveat;
  } cases[] = {
      {"triple_jump(nh_rattle)", 4, 4, 0},  {"suzuki5(nh_rattle)", 4, 4, 0},
      {"yoshida6(nh_rattle)", 4, 6, 1},     {"mclachlan8(nh_rattle)", 4, 8, 1},
      {"adjoint_pair(nh_rattle)", 2, 2, 0}, {"yoshida6(rattle)", 6, 6, 0},
      {"mclachlan8(adjoint_pair(nh_rattle))", 4, 8, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    nh_method *m = test_method(cases[i].name);
    cr_expect_eq(nh_method_order(m), cases[i].constrained, "%s: order %d", cases[i].name, nh_method_order(m));
    cr_expect_eq(nh_method_order_on(m, &pendulum), cases[i].constrained, "%s on the pendulum", cases[i].name);
    cr_expect_eq(nh_method_order_on(m, &oscillator), cases[i].free, "%s on the oscillator (k = 0)", cases[i].name);
    cr_expect_eq(nh_method_caveat(m) != NULL, cases[i].caveat, "%s: caveat %s", cases[i].name,
                 nh_method_caveat(m) ? nh_method_caveat(m) : "(none)");
    cr_expect_eq(nh_method_reads_previous_step(m, &pendulum), strstr(cases[i].name, "nh_rattle") != NULL,
                 "%s", cases[i].name);
    cr_expect_eq(nh_method_reads_previous_step(m, &oscillator), 0, "%s: no multiplier without constraints",
                 cases[i].name);
    nh_method_free(m);
  }
}
