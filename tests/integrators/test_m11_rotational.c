/* The rotational-symmetry example (spec/rattle.md §4 E, systems/rotational_symmetry.c) and the
 * auxiliary leap-frog M11 (spec/rattle.md §2.7, (11a)-(11b), integrators/m11.c).
 * Every expected value comes from somewhere else than the code under test: the spec's closed forms
 * and stated values, finite differences, GSL's rk8pd reference, a hand-written implementation of
 * (11a)-(11b) in this file, or a counter wrapped around the system's A(q). Each acceptance check
 * has a negative control beside it. Orders of M11 (sleigh, §5.2 M11) and of NH-RATTLE on E are in
 * tests/orders/m11_sleigh.cfg and tests/orders/rattle_rotational.cfg.
 * Sign convention: the code base writes the constraint force +Aᵀλ, the spec −μᵀλ. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "integrators/integrator.h"
#include "tests/checks.h"

/* ---- helpers ------------------------------------------------------------------------------------ */

static double uniform(gsl_rng *r, double a) { return a * (2 * gsl_rng_uniform(r) - 1); }

static double J_of(const double *q, const double *v) { return q[0] * v[1] - q[1] * v[0]; }

/* A random state of E on D, by solving the constraint for ż: v = (a, b, −(x a + y b)/x), |x| ≥ 0.3
 * (not the system's sampler, which draws in a basis of D). */
static nh_state random_state_on_D(gsl_rng *r) {
  nh_state x;
  memset(&x, 0, sizeof x);
  x.q[0] = copysign(0.3 + 0.9 * gsl_rng_uniform(r), uniform(r, 1));
  x.q[1] = uniform(r, 1.5), x.q[2] = uniform(r, 1.5);
  x.v[0] = uniform(r, 1.5), x.v[1] = uniform(r, 1.5);
  x.v[2] = -(x.q[0] * x.v[0] + x.q[1] * x.v[1]) / x.q[0];
  return x;
}

/* ---- system E: equations of motion ---------------------------------------------------------------- */

/* d/dt at t = 0 of f(q + t v + ½t² a, v + t a), by central differences (δ = 1e-5). */
typedef double (*path_fn)(const nh_system *sys, const double *q, const double *v);

static double path_derivative(const nh_system *sys, path_fn f, const nh_state *x, const double *a) {
  const double d = 1e-5;
  double qp[NH_MAX_N], vp[NH_MAX_N], qm[NH_MAX_N], vm[NH_MAX_N];
  for (int i = 0; i < sys->n; i++) {
    qp[i] = x->q[i] + d * x->v[i] + 0.5 * d * d * a[i], vp[i] = x->v[i] + d * a[i];
    qm[i] = x->q[i] - d * x->v[i] + 0.5 * d * d * a[i], vm[i] = x->v[i] - d * a[i];
  }
  return (f(sys, qp, vp) - f(sys, qm, vm)) / (2 * d);
}

/* μ(q)·v by the spec's μ = (x, y, x), and H = ½|v|² + ½ω²(x² + y²). */
static double spec_constraint(const nh_system *sys, const double *q, const double *v) {
  (void)sys;
  return q[0] * v[0] + q[1] * v[1] + q[0] * v[2];
}

static double spec_energy(const nh_system *sys, const double *q, const double *v) {
  return 0.5 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * sys->p[0] * (q[0] * q[0] + q[1] * q[1]);
}

/* spec §4 E: λ_spec = (μ_q[v,v] − μ·V_q)/C = (ẋ² + ẏ² + ẋż − ω²(x² + y²))/(2x² + y²) and
 * q̈ = −V_q − μ λ_spec, against nh_multiplier (= −λ_spec) and nh_acceleration, with ω² = 1 (spec)
 * and 0.37 (a parameter read from the wrong slot shows). The acceleration must keep the constraint
 * and the energy: d/dt (μ·v) = 0 and dH/dt = 0 by finite differences along the motion. Controls:
 * the unconstrained acceleration −V_q breaks d/dt (μ·v) = 0 by μ_q[v,v] − μ·V_q, and the
 * potential force with the wrong sign breaks dH/dt = 0. */
Test(m11_rotational, system_equations_of_motion) {
  const char *params[] = {"", "omega2=0.37"};
  gsl_rng *r = test_rng(314);
  double worst_fd = 0, least_control = INFINITY;
  for (int p = 0; p < 2; p++) {
    nh_system sys = test_system("rotational_symmetry", params[p]);
    const double w2 = p == 0 ? 1 : 0.37;
    cr_assert(sys.p[0] == w2, "omega2 = %g", sys.p[0]);
    for (int trial = 0; trial < 20; trial++) {
      nh_state x = random_state_on_D(r);
      const double *q = x.q, *v = x.v;
      cr_assert(fabs(spec_constraint(&sys, q, v)) <= 1e-15, "test state off D");
      cr_assert(nh_constraint_residual(&sys, q, v) <= 1e-15);
      const double ls = (v[0] * v[0] + v[1] * v[1] + v[0] * v[2] - w2 * (q[0] * q[0] + q[1] * q[1])) /
                        (2 * q[0] * q[0] + q[1] * q[1]);
      const double acc_spec[3] = {-w2 * q[0] - q[0] * ls, -w2 * q[1] - q[1] * ls, -q[0] * ls};
      double lam, acc[3];
      cr_assert(nh_multiplier(&sys, 0, q, v, &lam) == 0);
      cr_assert(nh_acceleration(&sys, 0, q, v, acc) == 0);
      cr_expect(fabs(lam + ls) <= 1e-13 * (1 + fabs(ls)), "lambda = %.17g, spec (our sign) %.17g", lam, -ls);
      for (int i = 0; i < 3; i++)
        cr_expect(fabs(acc[i] - acc_spec[i]) <= 1e-13 * (1 + fabs(acc_spec[i])), "acc[%d] = %.17g, spec %.17g", i,
                  acc[i], acc_spec[i]);
      const double dc = path_derivative(&sys, spec_constraint, &x, acc);
      const double dH = path_derivative(&sys, spec_energy, &x, acc);
      cr_expect(fabs(dc) <= 1e-8 && fabs(dH) <= 1e-8, "along q'' = a: d(mu.v)/dt = %.3e, dH/dt = %.3e", dc, dH);
      worst_fd = fmax(worst_fd, fmax(fabs(dc), fabs(dH)));
      /* Controls. */
      double free_acc[3] = {-w2 * q[0], -w2 * q[1], 0}, wrong_acc[3];
      for (int i = 0; i < 3; i++) wrong_acc[i] = acc[i] + 2 * w2 * (i < 2 ? q[i] : 0);
      const double dc_free = path_derivative(&sys, spec_constraint, &x, free_acc);
      const double expect_free = v[0] * v[0] + v[1] * v[1] + v[0] * v[2] - w2 * (q[0] * q[0] + q[1] * q[1]);
      cr_expect(fabs(dc_free - expect_free) <= 1e-8 * (1 + fabs(expect_free)),
                "control: unconstrained d(mu.v)/dt = %.10g, expected mu_q[v,v] - mu.V_q = %.10g", dc_free, expect_free);
      least_control = fmin(least_control, fabs(dc_free));
      if (w2 * fabs(q[0] * v[0] + q[1] * v[1]) > 1e-3) {
        const double dH_wrong = path_derivative(&sys, spec_energy, &x, wrong_acc);
        cr_expect(fabs(dH_wrong) > 1e-4, "control: reversed potential force keeps dH/dt = %.3e", dH_wrong);
      }
    }
  }
  gsl_rng_free(r);
  cr_log_info("rotational_symmetry EOM: worst FD |d(mu.v)/dt|, |dH/dt| = %.2e; least control |d(mu.v)/dt| = %.2e",
              worst_fd, least_control);
}

/* ---- system E: preset, invariant, reference ------------------------------------------------------ */

/* spec §4 E: q0 = (1, 0, 0), p0 = (0.5, 1, −0.5) is on D, J0 = 1, λ(0) = 0; H0 = 1.25 (derived:
 * ½(0.25 + 1 + 0.25) + ½). It is the documented default. C(q0) = 2, r = 1. Control: the J of
 * another state is not 1. */
Test(m11_rotational, preset_matches_spec) {
  nh_system sys = test_system("rotational_symmetry", "omega2=0.5");
  nh_state x = test_preset(&sys, "rattle"), d;
  cr_assert(sys.p[0] == 1, "the preset sets omega2 = 1");
  nh_system_default_state(&sys, &d);
  cr_expect(memcmp(x.q, d.q, sizeof x.q) == 0 && memcmp(x.v, d.v, sizeof x.v) == 0, "default IC is preset rattle");
  const double q0[3] = {1, 0, 0}, v0[3] = {0.5, 1, -0.5};
  cr_expect(memcmp(x.q, q0, sizeof q0) == 0 && memcmp(x.v, v0, sizeof v0) == 0);
  cr_expect_eq(nh_constraint_residual(&sys, x.q, x.v), 0.0);
  double J, lam, der[2];
  nh_invariants(&sys, x.q, x.v, &J);
  cr_expect_eq(J, 1.0, "J0 = %.17g", J);
  cr_expect_str_eq(nh_invariant_name(&sys, 0), "J_z");
  cr_assert(nh_multiplier(&sys, 0, x.q, x.v, &lam) == 0);
  cr_expect(fabs(lam) <= 1e-16, "lambda(0) = %.3e, spec 0", lam);
  cr_expect(fabs(nh_energy(&sys, x.q, x.v) - 1.25) <= 1e-15, "H0 = %.17g", nh_energy(&sys, x.q, x.v));
  nh_derived(&sys, 0, x.q, x.v, der);
  cr_expect(der[0] == 2 && der[1] == 1, "C(q0) = %g, r = %g", der[0], der[1]);
  /* Away from x = 1 (where 2x² = 2x/x·x): at q = (0.6, −1.3, 0.4), C = |μ|² = 2x² + y² = 2.41 and
   * r = √(x² + y²) = √2.05. */
  const double qg[3] = {0.6, -1.3, 0.4};
  nh_derived(&sys, 0, qg, v0, der);
  cr_expect(fabs(der[0] - 2.41) <= 1e-15 && fabs(der[1] - sqrt(2.05)) <= 1e-15, "C = %.17g, r = %.17g at (0.6, -1.3, 0.4)",
            der[0], der[1]);
  const double v1[3] = {0.5, 0.8, -0.5};
  nh_invariants(&sys, x.q, v1, &J);
  cr_expect(fabs(J - 0.8) <= 1e-16, "control: J of v = (0.5, 0.8, -0.5) is %.17g", J);
}

/* J conserved along the rk8pd reference from the preset over T = 10 (sampled at t = 1 … 10), and the
 * a priori bound r ≥ |J|/√(2H) (so C ≥ r² > 0, spec §7 A14). Control: x p_z − z p_x, the momentum of
 * the rotation about y (not a symmetry), changes by O(1). */
Test(m11_rotational, J_conserved_along_reference) {
  nh_system sys = test_system("rotational_symmetry", NULL);
  nh_state x0 = test_preset(&sys, "rattle"), x = x0, y;
  const double H0 = nh_energy(&sys, x0.q, x0.v), J0 = J_of(x0.q, x0.v), bound = fabs(J0) / sqrt(2 * H0);
  double worst_J = 0, worst_H = 0, worst_res = 0, least_r = INFINITY, least_C = INFINITY, other_change = 0;
  const double other0 = x0.q[0] * x0.v[2] - x0.q[2] * x0.v[0];
  for (int s = 1; s <= 10; s++) {
    cr_assert(nh_reference_solve(&sys, &x, s, 1e-13, &y) == 0);
    double J, der[2];
    nh_invariants(&sys, y.q, y.v, &J);
    nh_derived(&sys, y.t, y.q, y.v, der);
    worst_J = fmax(worst_J, fabs(J - J0));
    worst_H = fmax(worst_H, fabs(nh_energy(&sys, y.q, y.v) - H0));
    worst_res = fmax(worst_res, nh_constraint_residual(&sys, y.q, y.v));
    least_C = fmin(least_C, der[0]), least_r = fmin(least_r, der[1]);
    cr_expect(der[1] >= bound && der[0] >= der[1] * der[1], "t = %d: r = %.4f, C = %.4f below the bound %.4f", s,
              der[1], der[0], bound);
    other_change = fmax(other_change, fabs(y.q[0] * y.v[2] - y.q[2] * y.v[0] - other0));
    x = y;
  }
  cr_expect(worst_J <= 2e-13, "J changes by %.3e along the reference", worst_J);
  cr_expect(worst_H <= 2e-13 && worst_res <= 2e-13, "reference: |H - H0| = %.3e, residual %.3e", worst_H, worst_res);
  cr_expect(other_change > 0.1, "control: x p_z - z p_x changes by only %.3e", other_change);
  cr_log_info("E reference, T = 10: |J - J0| <= %.2e, |H - H0| <= %.2e, residual <= %.2e, min r = %.4f (bound %.4f), "
              "min C = %.4f; control change %.3f",
              worst_J, worst_H, worst_res, least_r, bound, least_C, other_change);
}

/* The system's own sampler keeps |J| ≥ 0.1 √(2E) (its documented rejection rule), so every sampled
 * orbit stays r ≥ 0.1 from the z axis: checked along the reference for T = 5. */
Test(m11_rotational, sampled_orbits_stay_off_the_axis) {
  nh_system sys = test_system("rotational_symmetry", NULL);
  gsl_rng *r = test_rng(77);
  const double E = 0.8;
  double least_J = INFINITY, least_r = INFINITY;
  for (int i = 0; i < 8; i++) {
    nh_state x, y;
    cr_assert(nh_sample_on_D(&sys, E, r, &x) == 0);
    cr_expect(fabs(nh_energy(&sys, x.q, x.v) - E) <= 1e-14 * E);
    least_J = fmin(least_J, fabs(J_of(x.q, x.v)));
    for (int s = 1; s <= 5; s++) {
      cr_assert(nh_reference_solve(&sys, &x, s, 1e-12, &y) == 0);
      least_r = fmin(least_r, hypot(y.q[0], y.q[1]));
      x = y;
    }
  }
  gsl_rng_free(r);
  cr_expect(least_J >= 0.1 * sqrt(2 * E), "sampled |J| = %.4f < 0.1 sqrt(2E)", least_J);
  cr_expect(least_r >= 0.1, "a sampled orbit comes within r = %.4f of the axis", least_r);
  cr_log_info("sampler, E = %g: least |J| %.4f, least r along 8 orbits %.4f", E, least_J, least_r);
}

/* ---- NH-RATTLE on E: the discrete momentum map (spec §5.2 E, §6 item 5) ----------------------- */

/* J_d = (x_{k−1}y_k − x_k y_{k−1})/h and x_k p_{y,k} − y_k p_{x,k} over 20000 steps of h = 0.05 from
 * the preset, their spread, and max |H_k − H0| over the first and the last 2000 steps (bounded, no
 * drift). Also M11, which conserves both as well ([derived]: ⟨Φ(q,p), ξ_Q(q)⟩ = 0 and
 * ⟨p, ξ_Q(p)⟩ = 0 for the linear ξ_Q, so its leap-frog keeps ⟨p_{k−1/2}, ξ_Q(q_k)⟩, up to its
 * Newton tolerance). Control: rk4 drifts. */
typedef struct {
  double Jd_spread, J_spread, Jd_vs_J, dH_first, dH_last;
} momentum_run;

static momentum_run momentum_map_run(const char *method, double h, long N) {
  nh_system sys = test_system("rotational_symmetry", NULL);
  nh_state x = test_preset(&sys, "rattle"), y;
  nh_method *m = test_method(method);
  nh_cost cost = {0};
  const double H0 = nh_energy(&sys, x.q, x.v), J0 = J_of(x.q, x.v);
  momentum_run out = {0};
  double Jd0 = NAN;
  test_init_ok(m, &sys, &x, h, &cost);
  for (long k = 1; k <= N; k++) {
    test_step_ok(m, &sys, &x, &y, h, &cost);
    const double Jd = (x.q[0] * y.q[1] - y.q[0] * x.q[1]) / h, J = J_of(y.q, y.v);
    if (k == 1) Jd0 = Jd;
    out.Jd_spread = fmax(out.Jd_spread, fabs(Jd - Jd0));
    out.J_spread = fmax(out.J_spread, fabs(J - J0));
    out.Jd_vs_J = fmax(out.Jd_vs_J, fabs(Jd - J));
    const double dH = fabs(nh_energy(&sys, y.q, y.v) - H0);
    if (k <= 2000) out.dH_first = fmax(out.dH_first, dH);
    if (k > N - 2000) out.dH_last = fmax(out.dH_last, dH);
    x = y;
  }
  nh_method_free(m);
  return out;
}

Test(m11_rotational, rattle_discrete_momentum_map_exact) {
  const double h = 0.05;
  const long N = 20000;
  const momentum_run r = momentum_map_run("nh_rattle", h, N);
  cr_expect(r.Jd_spread <= 1e-13 && r.J_spread <= 1e-13 && r.Jd_vs_J <= 1e-13,
            "nh_rattle: J_d spread %.3e, J spread %.3e, |J_d - J| %.3e", r.Jd_spread, r.J_spread, r.Jd_vs_J);
  cr_expect(r.dH_last <= 2 * r.dH_first && r.dH_first < 0.01, "nh_rattle: max|H - H0| %.3e (first 2000), %.3e (last)",
            r.dH_first, r.dH_last);
  const momentum_run s = momentum_map_run("m11", h, N);
  cr_expect(s.Jd_spread <= 2e-13 && s.J_spread <= 2e-13 && s.Jd_vs_J <= 2e-13,
            "m11: J_d spread %.3e, J spread %.3e, |J_d - J| %.3e", s.Jd_spread, s.J_spread, s.Jd_vs_J);
  const momentum_run c = momentum_map_run("rk4", h, N);
  cr_expect(c.J_spread > 1e-8, "control: rk4 keeps J to %.3e", c.J_spread);
  cr_log_info("E, h = %g, %ld steps: nh_rattle J_d %.2e, J %.2e, |J_d - J| %.2e, max|H-H0| %.3e / %.3e; "
              "m11 J_d %.2e, J %.2e; rk4 J %.2e",
              h, N, r.Jd_spread, r.J_spread, r.Jd_vs_J, r.dH_first, r.dH_last, s.Jd_spread, s.J_spread, c.J_spread);
}

/* ---- M11 ------------------------------------------------------------------------------------------ */

/* Sleigh (spec §4 B), T = 10, N = 100 … 1600 (§5.2 M11): the constraint residual |μ(q_N)v_N| at T is
 * nonzero and O(h²): ratio ≈ 4 per halving; λ_N − λ(T) (λ of the rk8pd reference) likewise (signed
 * ratio). Control: nh_rattle's residual is at round-off. */
Test(m11_rotational, m11_constraint_residual_order_two) {
  nh_system sys = test_system("chaplygin_sleigh", NULL);
  nh_state x0 = test_preset(&sys, "ic1"), ref;
  const double T = 10;
  double lam_ref, res[5], lerr[5];
  cr_assert(nh_reference_solve(&sys, &x0, T, 1e-13, &ref) == 0);
  cr_assert(nh_multiplier(&sys, T, ref.q, ref.v, &lam_ref) == 0);
  for (int j = 0; j < 5; j++) {
    const long N = 100L << j;
    nh_state x = test_run_steps("m11", &sys, x0, T / N, N);
    cr_assert(fabs(x.t - T) < 1e-12);
    res[j] = nh_constraint_residual(&sys, x.q, x.v);
    lerr[j] = x.lambda[0] - lam_ref;
    double lam;
    cr_assert(nh_multiplier(&sys, x.t, x.q, x.v, &lam) == 0);
    cr_expect(fabs(x.lambda[0] - lam) <= 1e-13 * (1 + fabs(lam)), "y->lambda %.17g, lambda(q_N, v_N) %.17g",
              x.lambda[0], lam);
  }
  cr_expect(res[0] > 1e-5, "M11 residual at T, h = 0.1: %.3e (should not be kept)", res[0]);
  for (int j = 0; j < 4; j++) {
    cr_expect(res[j] / res[j + 1] > 3.7 && res[j] / res[j + 1] < 4.3, "residual ratio %.3f at N = %ld",
              res[j] / res[j + 1], 100L << j);
    cr_expect(lerr[j] / lerr[j + 1] > 3.5 && lerr[j] / lerr[j + 1] < 4.5, "lambda error ratio %.3f at N = %ld",
              lerr[j] / lerr[j + 1], 100L << j);
  }
  nh_state xr = test_run_steps("nh_rattle", &sys, x0, 0.1, 100);
  cr_expect(nh_constraint_residual(&sys, xr.q, xr.v) <= 1e-15, "control: nh_rattle residual %.3e",
            nh_constraint_residual(&sys, xr.q, xr.v));
  cr_log_info("M11 on the sleigh, T = 10, N = 100..1600: residual %.3e %.3e %.3e %.3e %.3e, ratios %.3f %.3f %.3f "
              "%.3f; lambda error %.3e .. %.3e, ratios %.3f %.3f %.3f %.3f",
              res[0], res[1], res[2], res[3], res[4], res[0] / res[1], res[1] / res[2], res[2] / res[3],
              res[3] / res[4], lerr[0], lerr[4], lerr[0] / lerr[1], lerr[1] / lerr[2], lerr[2] / lerr[3],
              lerr[3] / lerr[4]);
}

/* The Newton Jacobian (newton_eval) against central differences of its residual at random states
 * (q, v, v_{k+1/2}) and unknowns, h = 0.2, on five systems (k = 1 and 2, n = 3 to 5). Relative
 * error ≤ 1e-8 of max|J| (the brief asks 1e-6; 3e-10 is reached). Control: the Jacobian at a shifted unknown (X + 0.05) is off by more
 * than the tolerance, so the check sees the nonlinear term. At a step's solution
 * (newton_unknowns) the residual is at round-off; control: perturbing the unknowns by 1e-8 shows. */
Test(m11_rotational, m11_newton_jacobian_matches_finite_differences) {
  const char *systems[] = {"chaplygin_sleigh", "rotational_symmetry", "particle", "vertical_disk", "chaotic_particle"};
  const char *params[] = {NULL, NULL, "omega2=1", NULL, NULL};
  nh_method *m = test_method("m11");
  gsl_rng *r = test_rng(2718);
  double worst = 0, least_control = INFINITY, worst_F = 0;
  for (int s = 0; s < 5; s++) {
    nh_system sys = test_system(systems[s], params[s]);
    const int n = sys.n;
    cr_assert_eq(m->type->newton->size(m, &sys), n);
    for (int trial = 0; trial < 6; trial++) {
      const double h = 0.2, d = 1e-6;
      nh_state x;
      memset(&x, 0, sizeof x);
      double X[NH_MAX_N], Xs[NH_MAX_N], F[NH_MAX_N], J[NH_MAX_N * NH_MAX_N], Js[NH_MAX_N * NH_MAX_N];
      for (int i = 0; i < n; i++) {
        x.q[i] = uniform(r, 1.5), x.v[i] = uniform(r, 1.5), x.carry[i] = uniform(r, 1.5);
        X[i] = uniform(r, 1.5), Xs[i] = X[i] + 0.05;
      }
      if (strcmp(systems[s], "rotational_symmetry") == 0) x.q[0] = 0.5 + fabs(x.q[0]); /* C bounded below */
      m->type->newton->eval(m, &sys, &x, h, X, F, J);
      m->type->newton->eval(m, &sys, &x, h, Xs, F, Js);
      double scale = 0, err = 0, err_shift = 0;
      for (int l = 0; l < n; l++) {
        double Xp[NH_MAX_N], Xm[NH_MAX_N], Fp[NH_MAX_N], Fm[NH_MAX_N], Jd[NH_MAX_N * NH_MAX_N];
        memcpy(Xp, X, sizeof Xp), memcpy(Xm, X, sizeof Xm);
        Xp[l] += d, Xm[l] -= d;
        m->type->newton->eval(m, &sys, &x, h, Xp, Fp, Jd);
        m->type->newton->eval(m, &sys, &x, h, Xm, Fm, Jd);
        for (int i = 0; i < n; i++) {
          const double fd = (Fp[i] - Fm[i]) / (2 * d);
          scale = fmax(scale, fabs(J[i * n + l]));
          err = fmax(err, fabs(J[i * n + l] - fd));
          err_shift = fmax(err_shift, fabs(Js[i * n + l] - fd));
        }
      }
      cr_expect(err <= 1e-8 * scale, "%s: |J - FD| = %.3e of max|J| = %.3g", systems[s], err, scale);
      cr_expect(err_shift > 1e-8 * scale, "%s control: J at X + 0.05 within %.3e of FD at X", systems[s], err_shift);
      worst = fmax(worst, err / scale), least_control = fmin(least_control, err_shift / scale);
    }
    /* The residual at a real step's solution. */
    nh_state x0, y;
    nh_system_default_state(&sys, &x0);
    nh_cost cost = {0};
    test_init_ok(m, &sys, &x0, 0.05, &cost);
    test_step_ok(m, &sys, &x0, &y, 0.05, &cost);
    double X[NH_MAX_N], F[NH_MAX_N], J[NH_MAX_N * NH_MAX_N], Fn = 0, Fp = 0;
    m->type->newton->unknowns(m, &sys, &x0, &y, 0.05, X);
    m->type->newton->eval(m, &sys, &x0, 0.05, X, F, J);
    for (int i = 0; i < n; i++) Fn = fmax(Fn, fabs(F[i]));
    X[0] += 1e-8;
    m->type->newton->eval(m, &sys, &x0, 0.05, X, F, J);
    for (int i = 0; i < n; i++) Fp = fmax(Fp, fabs(F[i]));
    cr_expect(Fn <= 1e-14, "%s: residual %.3e at the step's solution", systems[s], Fn);
    cr_expect(Fp > 5e-9, "%s control: residual %.3e at a perturbed solution", systems[s], Fp);
    worst_F = fmax(worst_F, Fn);
  }
  gsl_rng_free(r);
  nh_method_free(m);
  cr_log_info("m11 Newton Jacobian: worst |J - FD|/max|J| %.2e, least control %.2e; residual at solutions <= %.2e",
              worst, least_control, worst_F);
}

/* ---- (11a)-(11b) by hand on the particle -------------------------------------------------------- */

/* The harmonic nonholonomic particle (spec §4 C): μ = (−y, 0, 1), C = 1 + y², μ_q[v,v] = −ẋẏ,
 * V_q = (x, y, 0), M = I. Φ(q, p) = −V_q − μ C⁻¹(μ_q[p,p] − μ·V_q), spec (5). */
static void particle_phi(const double *q, const double *p, double *phi) {
  const double mu[3] = {-q[1], 0, 1}, Vq[3] = {q[0], q[1], 0};
  const double C = 1 + q[1] * q[1], curv = -p[0] * p[1], muVq = mu[0] * Vq[0] + mu[1] * Vq[1] + mu[2] * Vq[2];
  const double ls = (curv - muVq) / C;
  for (int i = 0; i < 3; i++) phi[i] = -Vq[i] - mu[i] * ls;
}

/* (11a)-(11b) with p_{1/2} = p_0 + (h/2)Φ(q_0, p_0) (or p_0 if plain_start), the fixed point of
 * (11b) iterated to 1e-15, and p_k = (p_{k−1/2} + p_{k+1/2})/2; q and p of steps 1 … N. */
static void hand_m11(const double *q0, const double *p0, double h, int N, int plain_start, double *qs, double *ps) {
  double q[3], ph[3], phi[3];
  memcpy(q, q0, sizeof q);
  particle_phi(q0, p0, phi);
  for (int i = 0; i < 3; i++) ph[i] = p0[i] + (plain_start ? 0 : 0.5 * h * phi[i]);
  for (int k = 0; k < N; k++) {
    double next[3], bar[3];
    for (int i = 0; i < 3; i++) q[i] += h * ph[i];
    memcpy(next, ph, sizeof next);
    for (int it = 0; it < 200; it++) {
      double change = 0;
      for (int i = 0; i < 3; i++) bar[i] = 0.5 * (ph[i] + next[i]);
      particle_phi(q, bar, phi);
      for (int i = 0; i < 3; i++) {
        const double nv = ph[i] + h * phi[i];
        change = fmax(change, fabs(nv - next[i]));
        next[i] = nv;
      }
      if (change <= 1e-15) break;
      cr_assert(it < 199, "hand-written fixed point did not converge");
    }
    for (int i = 0; i < 3; i++) {
      qs[k * 3 + i] = q[i];
      ps[k * 3 + i] = 0.5 * (ph[i] + next[i]);
      ph[i] = next[i];
    }
  }
}

Test(m11_rotational, m11_equals_hand_written_11ab_on_particle) {
  enum { N = 10 };
  nh_system sys = test_system("particle", NULL);
  nh_state x = test_preset(&sys, "rattle"), y;
  char err[256];
  cr_assert(nh_system_set_params_text(&sys, "omega2=1", err, sizeof err) == 0, "%s", err);
  const double h = 0.1;
  double qs[N * 3], ps[N * 3], qc[N * 3], pc[N * 3], worst = 0, control = 0;
  hand_m11(x.q, x.v, h, N, 0, qs, ps);
  hand_m11(x.q, x.v, h, N, 1, qc, pc);
  nh_method *m = test_method("m11");
  nh_cost cost = {0};
  test_init_ok(m, &sys, &x, h, &cost);
  for (int k = 0; k < N; k++) {
    test_step_ok(m, &sys, &x, &y, h, &cost);
    for (int i = 0; i < 3; i++) {
      worst = fmax(worst, fmax(fabs(y.q[i] - qs[k * 3 + i]), fabs(y.v[i] - ps[k * 3 + i])));
      control = fmax(control, fmax(fabs(y.q[i] - qc[k * 3 + i]), fabs(y.v[i] - pc[k * 3 + i])));
    }
    x = y;
  }
  nh_method_free(m);
  cr_expect(worst <= 1e-14, "m11 differs from hand-written (11a)-(11b) by %.3e", worst);
  cr_expect(control > 1e-4, "control: with p_{1/2} = p_0 the hand-written run differs by only %.3e", control);
  cr_log_info("m11 vs hand-written (11a)-(11b), particle omega2 = 1, h = 0.1, 10 steps: %.2e (control %.2e)", worst,
              control);
}

/* Without constraints (oscillator, k = 0) (11) is Störmer–Verlet: q_{k+1} = q_k + h v_{k+1/2},
 * v_{k+1} = v_{k+1/2} − (h/2)∇V(q_{k+1}), v_{k+3/2} = v_{k+1} − (h/2)∇V(q_{k+1}); by hand, V = ½ω²|q|². */
Test(m11_rotational, m11_is_stormer_verlet_without_constraints) {
  nh_system sys = test_system("oscillator", "omega=1.7");
  nh_state x, y;
  nh_system_default_state(&sys, &x);
  const int n = sys.n;
  const double h = 0.1, w2 = sys.p[0] * sys.p[0];
  cr_assert_eq(sys.k, 0);
  double q[NH_MAX_N], v[NH_MAX_N], vh[NH_MAX_N], worst = 0;
  nh_method *m = test_method("m11");
  cr_expect_eq(m->type->newton->size(m, &sys), 0, "no nonlinear system without constraints");
  for (int i = 0; i < n; i++) q[i] = x.q[i], v[i] = x.v[i], vh[i] = v[i] - 0.5 * h * w2 * q[i];
  nh_cost cost = {0};
  test_init_ok(m, &sys, &x, h, &cost);
  for (int k = 0; k < 100; k++) {
    test_step_ok(m, &sys, &x, &y, h, &cost);
    for (int i = 0; i < n; i++) {
      q[i] += h * vh[i];
      v[i] = vh[i] - 0.5 * h * w2 * q[i];
      vh[i] = v[i] - 0.5 * h * w2 * q[i];
      worst = fmax(worst, fmax(fabs(y.q[i] - q[i]), fabs(y.v[i] - v[i])));
    }
    x = y;
  }
  nh_method_free(m);
  cr_expect(worst <= 1e-14, "m11 on the oscillator differs from Stormer-Verlet by %.3e", worst);
  cr_expect_eq(cost.newton_iterations, 0ULL);
}

/* ---- the constraint_evals counter --------------------------------------------------------------- */

/* One step of m11: one A(q), at q_{k+1} (the Newton iterations reuse it), one ∇V, one k×k
 * Cholesky plus one LU per Newton iteration; init: one A(q0). cost.constraint_evals equals the calls
 * of the system's A(q). Control: the counter sees a call made outside a step (nh_multiplier). */
Test(m11_rotational, m11_constraint_evals_counted_exactly) {
  const char *systems[] = {"rotational_symmetry", "chaplygin_sleigh", "vertical_disk"};
  nh_method *m = test_method("m11");
  for (int s = 0; s < 3; s++) {
    nh_system sys = test_counted_system(systems[s], NULL);
    nh_state x, y;
    nh_system_default_state(&sys, &x);
    nh_cost cost = {0};
    test_counted_calls = 0;
    test_init_ok(m, &sys, &x, 0.05, &cost);
    cr_expect(test_counted_calls == 1 && cost.constraint_evals == 1, "%s init: A(q) called %ld times, counted %llu",
              systems[s], test_counted_calls, cost.constraint_evals);
    for (int k = 0; k < 3; k++) {
      nh_cost one = {0};
      test_counted_calls = 0;
      test_step_ok(m, &sys, &x, &y, 0.05, &one);
      cr_expect(test_counted_calls == 1 && one.constraint_evals == 1, "%s step: A(q) called %ld times, counted %llu",
                systems[s], test_counted_calls, one.constraint_evals);
      cr_expect(one.steps == 1 && one.rhs_evals == 1, "%s: steps %llu, rhs_evals %llu", systems[s], one.steps,
                one.rhs_evals);
      cr_expect(one.newton_iterations >= 1 && one.jacobian_evals == one.newton_iterations &&
                    one.linear_solves == 1 + one.newton_iterations,
                "%s: %llu Newton iterations, %llu Jacobians, %llu linear solves", systems[s], one.newton_iterations,
                one.jacobian_evals, one.linear_solves);
      x = y;
    }
    double lam[NH_MAX_K];
    test_counted_calls = 0;
    cr_assert(nh_multiplier(&sys, 0, x.q, x.v, lam) == 0);
    cr_expect_eq(test_counted_calls, 1, "control: nh_multiplier's A(q) not seen by the counter");
  }
  nh_method_free(m);
}
