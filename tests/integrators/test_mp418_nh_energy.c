/* The comparison methods of issue 17: mp418 (McLachlan–Perlmutter 2006, (4.18), integrators/mp418.c)
 * and nh_energy (odelab's NonHolonomicEnergy with Gonzalez's discrete gradient,
 * integrators/nh_energy.c). Expected values come from exact solutions (the free particle,
 * spec/discretization.md §3.2), the rk8pd reference, js_b (spec/discretization.md §2.5), the energy
 * of the initial state, and the orders the papers claim; every acceptance check has a negative
 * control beside it. The registry-driven tests (order matrix, Newton hooks, no allocation) cover
 * both methods too; tests/orders/comparison_*.cfg hold their order tables. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "integrators/integrator.h"
#include "tests/checks.h"

/* max_i |q_i − q'_i|, |v_i − v'_i| */
static double state_dist(int n, const nh_state *a, const nh_state *b) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fmax(fabs(a->q[i] - b->q[i]), fabs(a->v[i] - b->v[i])));
  return d;
}

/* Observed order log2(e(h)/e(h/2)) of `method` at T from the preset (NULL: the default state)
 * against the true solution (exact or rk8pd at 1e-13), for h = h0 and h0/2; *err gets e(h0/2). */
static double observed_order(const char *method, const char *system, const char *preset, double T, double h0,
                             double *err) {
  nh_system sys = test_system(system, NULL);
  nh_state x0 = test_preset_or_default(&sys, preset), ex = test_true_state(&sys, &x0, T);
  nh_state a = test_run_to(method, &sys, x0, h0, T), b = test_run_to(method, &sys, x0, h0 / 2, T);
  const double e1 = state_dist(sys.n, &a, &ex), e2 = state_dist(sys.n, &b, &ex);
  if (err) *err = e2;
  return log2(e1 / e2);
}

/* Order 2 on the free particle (exact solution, T = 2, spec/discretization.md §3.2 data) and on
 * the chaotic particle (rk8pd, T = 1, spec/newmark.md §5 settings), from h = 0.025 → 0.0125 where
 * the error is asymptotic. Control: js_a, first order, measured by the same function. */
Test(mp418_nh_energy, order_two_on_both_particles) {
  const char *methods[] = {"mp418", "nh_energy"};
  for (int mi = 0; mi < 2; mi++) {
    double e;
    const double p1 = observed_order(methods[mi], "particle", "discretization", 2, 0.025, &e);
    cr_expect(fabs(p1 - 2) < 0.1, "%s on the free particle: order %.3f (error %.2e)", methods[mi], p1, e);
    const double p2 = observed_order(methods[mi], "chaotic_particle", NULL, 1, 0.025, &e);
    cr_expect(fabs(p2 - 2) < 0.1, "%s on the chaotic particle: order %.3f (error %.2e)", methods[mi], p2, e);
    cr_log_info("%s: order %.3f (free particle), %.3f (chaotic particle)", methods[mi], p1, p2);
  }
  const double pa = observed_order("js_a", "particle", "discretization", 2, 0.025, NULL);
  cr_expect(fabs(pa - 1) < 0.15, "control: js_a's order %.3f", pa);
}

/* mp418 is js_b with the force ∇V(q̄) instead of the trapezoidal ½[∇V(Q_k) + ∇V(Q_{k+1})]: for a
 * constant force (free particle: ∇V = 0; knife edge: gravity along the incline) the two maps are
 * the same up to round-off (200 steps, observed ≤ 1e-15, bound 1e-13). With the harmonic potential
 * (§3.3 preset) they differ by O(h²): the difference at T = 3 is far above round-off and falls by
 * 4 (±10%) when h halves. */
Test(mp418_nh_energy, mp418_is_js_b_for_a_constant_force) {
  const struct {
    const char *system, *preset;
  } same[] = {{"particle", "discretization"}, {"knife_edge", NULL}};
  for (int c = 0; c < 2; c++) {
    nh_system sys = test_system(same[c].system, NULL);
    nh_state x0 = test_preset_or_default(&sys, same[c].preset);
    nh_state a = test_run_steps("mp418", &sys, x0, 0.01, 200), b = test_run_steps("js_b", &sys, x0, 0.01, 200);
    const double d = state_dist(sys.n, &a, &b);
    cr_expect(d <= 1e-13 && fabs(a.lambda[0] - b.lambda[0]) <= 1e-12, "%s: |mp418 - js_b| = %.3e, lambda %.3e",
              same[c].system, d, fabs(a.lambda[0] - b.lambda[0]));
    cr_log_info("constant force, %s: |mp418 - js_b| = %.2e after 200 steps", same[c].system, d);
  }
  nh_system sys = test_system("particle", NULL);
  nh_state x0 = test_preset(&sys, "harmonic");
  double d[2];
  for (int j = 0; j < 2; j++) {
    const double h = 0.05 / (1 << j);
    nh_state a = test_run_to("mp418", &sys, x0, h, 3), b = test_run_to("js_b", &sys, x0, h, 3);
    d[j] = state_dist(sys.n, &a, &b);
  }
  cr_log_info("harmonic: |mp418 - js_b| at T = 3: %.3e (h = 0.05), %.3e (h = 0.025)", d[0], d[1]);
  cr_expect(d[1] > 1e-6, "harmonic: mp418 and js_b should differ, |difference| = %.3e", d[1]);
  cr_expect(fabs(d[0] / d[1] - 4) < 0.4, "harmonic: difference ratio %.3f (differences %.3e, %.3e), expected 4",
            d[0] / d[1], d[0], d[1]);
}

/* Max relative energy error of `method` over T from the chaotic particle's default state. */
static double max_energy_error(const char *method, double h, double T) {
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_state x;
  nh_system_default_state(&sys, &x);
  nh_method *m = test_method(method);
  nh_cost cost = {0};
  const double E0 = nh_energy(&sys, x.q, x.v);
  double worst = 0;
  for (long s = 0; s < lround(T / h); s++) {
    nh_state y;
    test_step_ok(m, &sys, &x, &y, h, &cost);
    x = y;
    worst = fmax(worst, fabs(nh_energy(&sys, x.q, x.v) - E0) / E0);
  }
  nh_method_free(m);
  return worst;
}

/* The acceptance criterion: nh_energy keeps the energy of the chaotic particle to round-off
 * (≤ 1e-12 relative; observed ~1e-14) over T = 1000 at h = 0.1, and at a large step h = 0.4 over
 * T = 200. Controls: nh_newmark(alpha=0.5) and mp418 at h = 0.1 are off by ~5e-3 (bound > 1e-4). */
Test(mp418_nh_energy, nh_energy_keeps_the_energy_to_round_off) {
  const double e = max_energy_error("nh_energy", 0.1, 1000), big = max_energy_error("nh_energy", 0.4, 200);
  cr_expect(e <= 1e-12, "nh_energy, h = 0.1, T = 1000: max relative energy error %.3e", e);
  cr_expect(big <= 1e-12, "nh_energy, h = 0.4, T = 200: max relative energy error %.3e", big);
  const double mid = max_energy_error("nh_energy(gradient=midpoint)", 0.1, 1000),
               mid_big = max_energy_error("nh_energy(gradient=midpoint)", 0.4, 200);
  cr_expect(mid <= 1e-12 && mid_big <= 1e-12, "nh_energy(gradient=midpoint): %.3e (h = 0.1), %.3e (h = 0.4)", mid,
            mid_big);
  const double nm = max_energy_error("nh_newmark(alpha=0.5)", 0.1, 1000), mp = max_energy_error("mp418", 0.1, 1000);
  cr_expect(nm > 1e-4, "control: nh_newmark(alpha=0.5) max relative energy error %.3e", nm);
  cr_expect(mp > 1e-4, "control: mp418 max relative energy error %.3e", mp);
  cr_log_info("max relative energy error over T = 1000, h = 0.1: nh_energy %.2e (h = 0.4: %.2e), "
              "nh_newmark %.2e, mp418 %.2e", e, big, nm, mp);
}

/* Issue 46 item 4, on the contact oscillator at eps = 0.3 (odelab's initial_cos, preset cos_eps03),
 * h = 0.1, T = 100: the y-equation is a harmonic oscillator the constraint xdot + y zdot = 0 does not
 * act on, and the average gradient's y-component is the chord average (y_k + y_{k+1})/2, so y
 * takes the implicit midpoint rule, which keeps E_y = (y^2 + ydot^2)/2 exactly: to round-off here.
 * Gonzalez's midpoint gradient adds c dy with c from the quartic x^2 z^2 term and lets E_y drift
 * (~1e-4, the measurement). Both keep the total energy. */
Test(mp418_nh_energy, nh_energy_average_gradient_keeps_the_y_energy) {
  nh_system sys = test_system("contact_oscillator", NULL);
  const nh_state x0 = test_preset(&sys, "cos_eps03");
  const char *const methods[] = {"nh_energy", "nh_energy(gradient=midpoint)"};
  double drift[2], energy[2];
  for (int i = 0; i < 2; i++) {
    nh_method *m = test_method(methods[i]);
    nh_state x = x0, y;
    nh_cost cost = {0};
    const double Ey0 = 0.5 * (x.q[1] * x.q[1] + x.v[1] * x.v[1]), E0 = nh_energy(&sys, x.q, x.v);
    drift[i] = energy[i] = 0;
    for (int s = 0; s < 1000; s++) {
      test_step_ok(m, &sys, &x, &y, 0.1, &cost);
      x = y;
      drift[i] = fmax(drift[i], fabs(0.5 * (x.q[1] * x.q[1] + x.v[1] * x.v[1]) - Ey0));
      energy[i] = fmax(energy[i], fabs(nh_energy(&sys, x.q, x.v) - E0));
    }
    nh_method_free(m);
  }
  cr_expect(drift[0] <= 1e-13, "nh_energy (average): max |E_y - E_y0| = %.3e", drift[0]);
  cr_expect(drift[1] > 1e-6, "control, nh_energy(gradient=midpoint): max |E_y - E_y0| = %.3e", drift[1]);
  cr_expect(energy[0] <= 1e-12 && energy[1] <= 1e-12, "total energy: %.3e (average), %.3e (midpoint)", energy[0],
            energy[1]);
  cr_log_info("contact oscillator eps = 0.3, h = 0.1, T = 100: max |E_y drift| %.2e (average), %.2e (midpoint)",
              drift[0], drift[1]);
}

/* Issue 46 item 1 for nh_energy, on the CVT (eps = 0.1), whose dynamics does not change when its
 * angle xi moves by 2 pi: two steps from xi0 = 0.3 and from xi0 + 2 pi 2000 give velocities that differ
 * only by the rounding of xi0 itself, which shrinks with h (~1e-15 at h = 0.1/64). Before, Gonzalez's
 * gradient switched to grad V(qbar) where |dq|^2 <= 1e-12 (1 + |qbar|^2), i.e. at the large angle
 * only: the two differed by 1.6e-9 at h = 0.1/64 and 3.1e-12 at h = 0.1/512; and dq was the
 * difference of the rounded positions. */
Test(mp418_nh_energy, nh_energy_does_not_depend_on_the_size_of_the_angle) {
  const char *const methods[] = {"nh_energy", "nh_energy(gradient=midpoint)"};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      const double h = j ? 0.1 / 512 : 0.1 / 64, d = test_cvt_angle_shift_gap(methods[i], h);
      cr_expect(d <= 1e-12, "%s, h = %g: |v(xi0) - v(xi0 + 2 pi 2000)| = %.3e", methods[i], h, d);
    }
}

/* The constraint where each method claims it, over T = 20 on the chaotic particle (h = 0.05, 0.025):
 * mp418 keeps μ(q)v = 0 at the nodes (declared, ≤ 1e-13); nh_energy keeps its discrete constraint
 * μ(q̄)v̄ (≤ 1e-13) but not D at the nodes: there the residual is O(h²) (ratio ≈ 4 when h halves,
 * and far above round-off), which is why it does not declare NH_PRESERVES_CONSTRAINT. */
Test(mp418_nh_energy, constraint_where_claimed) {
  nh_system sys = test_system("chaotic_particle", NULL);
  double node[2] = {0, 0};
  for (int j = 0; j < 2; j++) {
    const double h = 0.05 / (1 << j);
    nh_method *mp = test_method("mp418"), *en = test_method("nh_energy");
    cr_expect(nh_method_preserves_constraint(mp) && !nh_method_preserves_constraint(en), "declared constraint");
    nh_state xm, xe, y;
    nh_system_default_state(&sys, &xm);
    xe = xm;
    nh_cost cost = {0};
    double mp_node = 0, en_disc = 0, r[NH_MAX_K];
    for (long s = 0; s < lround(20 / h); s++) {
      test_step_ok(mp, &sys, &xm, &y, h, &cost);
      xm = y;
      mp_node = fmax(mp_node, nh_constraint_residual(&sys, xm.q, xm.v));
      test_step_ok(en, &sys, &xe, &y, h, &cost);
      en->type->discrete_constraint(en, &sys, &xe, &y, h, r);
      en_disc = fmax(en_disc, fabs(r[0]));
      xe = y;
      node[j] = fmax(node[j], nh_constraint_residual(&sys, xe.q, xe.v));
    }
    cr_expect(mp_node <= 1e-13, "mp418 (h = %g): |mu(q)v| = %.3e at a node", h, mp_node);
    cr_expect(en_disc <= 1e-13, "nh_energy (h = %g): |mu(qbar)vbar| = %.3e", h, en_disc);
    nh_method_free(mp);
    nh_method_free(en);
  }
  cr_log_info("nh_energy's node residual |mu(q)v|: %.3e (h = 0.05), %.3e (h = 0.025)", node[0], node[1]);
  cr_expect(node[1] > 1e-6 && fabs(node[0] / node[1] - 4) < 0.8,
            "nh_energy's node residual %.3e -> %.3e (ratio %.3f) should be O(h^2)", node[0], node[1],
            node[0] / node[1]);
}

/* The multiplier both methods leave is read at the step's midpoint (their lambda_time), against
 * the free particle's exact λ = ẋẏ/(1 + y²) at t_k + h/2 (T = 2). mp418's, as js_b's, is second
 * order there (signed error ratio 4 ± 10%; control: read at the step's end it is first order).
 * nh_energy's is first order (ratio 2 ± 10%) with a sign that alternates from step to step, since
 * Λ also undoes the reflected normal velocity: the errors of two consecutive steps have opposite
 * signs and their mean is 10 times smaller (observed ~1e-2 relative to the error). */
Test(mp418_nh_energy, multiplier_at_the_midpoint) {
  const char *methods[] = {"mp418", "nh_energy"};
  double e1[2], e2[2], f1, f2;
  for (int mi = 0; mi < 2; mi++) {
    nh_method *m = test_method(methods[mi]);
    cr_expect_eq(nh_method_lambda_time(m), NH_LAMBDA_MIDPOINT, "%s", methods[mi]);
    nh_method_free(m);
    e1[mi] = test_lambda_error(methods[mi], "particle", NULL, "discretization", 0, 0.02, 2, -0.5);
    e2[mi] = test_lambda_error(methods[mi], "particle", NULL, "discretization", 0, 0.01, 2, -0.5);
  }
  f1 = test_lambda_error("mp418", "particle", NULL, "discretization", 0, 0.02, 2, 0);
  f2 = test_lambda_error("mp418", "particle", NULL, "discretization", 0, 0.01, 2, 0);
  cr_expect(fabs(e1[0] / e2[0] - 4) < 0.4, "mp418: midpoint error ratio %.3f (%.3e, %.3e)", e1[0] / e2[0], e1[0], e2[0]);
  cr_expect(fabs(f1 / f2 - 2) < 0.2, "mp418: control at the step's end, ratio %.3f", f1 / f2);
  cr_expect(fabs(e1[1] / e2[1] - 2) < 0.2, "nh_energy: midpoint error ratio %.3f (%.3e, %.3e)", e1[1] / e2[1], e1[1],
            e2[1]);
  cr_log_info("midpoint lambda error ratios: mp418 %.3f, nh_energy %.3f", e1[0] / e2[0], e1[1] / e2[1]);
  const double next = test_lambda_error("nh_energy", "particle", NULL, "discretization", 0, 0.02, 2.02, -0.5);
  cr_expect(e1[1] * next < 0 && fabs(e1[1] + next) < 0.1 * fabs(e1[1]),
            "nh_energy: consecutive midpoint errors %.3e, %.3e should alternate", e1[1], next);
}

/* Triple jump γ1, γ2, γ1 of `method` (γ1 = 1/(2 − 2^{1/3}), γ2 = 1 − 2γ1) written out, N steps of h. */
static nh_state triple_jump_by_hand(const char *method, const nh_system *sys, nh_state x, double h, long N) {
  const double g1 = 1 / (2 - cbrt(2)), g[3] = {g1, 1 - 2 * g1, g1};
  nh_method *m = test_method(method);
  nh_cost cost = {0};
  for (long s = 0; s < 3 * N; s++) {
    nh_state y;
    test_step_ok(m, sys, &x, &y, g[s % 3] * h, &cost);
    x = y;
  }
  nh_method_free(m);
  return x;
}

/* nh_energy satisfies Φ_{−h} ∘ Φ_h = id (round-off, bound 1e-13) yet is not declared symmetric:
 * off D its step reflects μv instead of being near the identity, so composing it does not raise its
 * order. The triple jump written out shows it: order 2 for nh_energy, 4 for mp418 (control, a
 * symmetric map of D) on the free particle; so compositions refuse nh_energy. */
Test(mp418_nh_energy, nh_energy_is_reversible_but_compositions_refuse_it) {
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_state x, y, z;
  nh_system_default_state(&sys, &x);
  nh_method *m = test_method("nh_energy");
  nh_cost cost = {0};
  test_step_ok(m, &sys, &x, &y, 0.2, &cost);
  test_step_ok(m, &sys, &y, &z, -0.2, &cost);
  cr_expect(state_dist(sys.n, &x, &z) <= 1e-13, "Phi_{-h} Phi_h x - x = %.3e", state_dist(sys.n, &x, &z));
  nh_method *mp = test_method("mp418");
  cr_expect(!nh_method_is_symmetric(m) && nh_method_is_symmetric(mp), "declared symmetry");
  nh_method_free(m);
  nh_method_free(mp);
  char err[512] = "";
  cr_expect_null(nh_method_parse("triple_jump(nh_energy)", err, sizeof err), "triple_jump(nh_energy) accepted");
  cr_expect(strstr(err, "symmetric") != NULL, "reason: %s", err);

  nh_system p = test_system("particle", NULL);
  nh_state x0 = test_preset(&p, "discretization"), ex = test_true_state(&p, &x0, 2);
  double order[2];
  const char *methods[] = {"nh_energy", "mp418"};
  for (int mi = 0; mi < 2; mi++) {
    const nh_state a = triple_jump_by_hand(methods[mi], &p, x0, 0.1, 20);
    const nh_state b = triple_jump_by_hand(methods[mi], &p, x0, 0.05, 40);
    order[mi] = log2(state_dist(p.n, &a, &ex) / state_dist(p.n, &b, &ex));
  }
  cr_log_info("triple jump by hand: order %.3f (nh_energy), %.3f (mp418)", order[0], order[1]);
  cr_expect(fabs(order[0] - 2) < 0.2, "triple jump of nh_energy: order %.3f, expected 2", order[0]);
  cr_expect(fabs(order[1] - 4) < 0.3, "control: triple jump of mp418, order %.3f, expected 4", order[1]);
}
