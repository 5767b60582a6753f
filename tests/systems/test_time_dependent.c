/* Time-dependent damping α(t) and potential W(q, t) (issue 17): the systems lane_emden,
 * time_perturbed_kepler and spin_orbit (one file each in systems/) and the methods that handle them (contact2 and
 * its compositions, rk4, the reference path). Every check compares with something independent of
 * the code under test: closed forms written out here, finite differences, Kepler's equation, the
 * rk8pd reference, or a hand computation of the splitting formula. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "integrators/integrator.h"
#include "studies/observables.h"
#include "studies/study.h"
#include "tests/checks.h"

/* ---- Lane–Emden: presets and exact solutions ---------------------------------------------------- */

/* The presets are the notebook's solutions through (1, 0) at s = 0, at s = t0 = 1: 1 − s²/6,
 * sin s/s, (1 + s²/3)^{−1/2} and their derivatives, written out here. */
Test(time_dependent, lane_emden_presets_on_the_classical_solutions) {
  const char *names[] = {"n0", "n1", "n5"};
  const double s = 1, x[] = {1 - s * s / 6, sin(s) / s, 1 / sqrt(1 + s * s / 3)};
  const double v[] = {-s / 3, (s * cos(s) - sin(s)) / (s * s), -(s / 3) * pow(1 + s * s / 3, -1.5)};
  for (int i = 0; i < 3; i++) {
    nh_system sys = test_system("lane_emden", NULL);
    nh_state x0 = test_preset(&sys, names[i]);
    cr_expect(fabs(x0.q[0] - x[i]) <= 2e-16 && fabs(x0.v[0] - v[i]) <= 2e-16, "%s: (%.17g, %.17g), formula (%.17g, %.17g)",
              names[i], x0.q[0], x0.v[0], x[i], v[i]);
    cr_expect(x0.t == 0 && sys.p[1] == 1, "%s: starts at t = 0, s = t0 = 1", names[i]);
  }
}

/* exact() against the equation ẍ + (2/s)ẋ + xⁿ = 0 by central differences (δ = 1e-4, so the
 * O(δ²) error is ~1e-8), from the presets and from a state off the classical solutions (n = 0, 1);
 * n = 5 declines a state off its homology family, and n = 2 (no closed form) declines everything. */
static double eom_residual(const nh_system *sys, const nh_state *x0, double t) {
  const double d = 1e-4, s = t + sys->p[1], n = sys->p[0];
  nh_state a, b, c;
  cr_assert(nh_exact_solution(sys, x0, t - d, &a) == 0 && nh_exact_solution(sys, x0, t, &b) == 0 &&
            nh_exact_solution(sys, x0, t + d, &c) == 0);
  const double xdd = (c.q[0] - 2 * b.q[0] + a.q[0]) / (d * d), xd = (c.q[0] - a.q[0]) / (2 * d);
  return fmax(fabs(xdd + 2 / s * b.v[0] + pow(b.q[0], n)), fabs(xd - b.v[0]));
}

Test(time_dependent, lane_emden_exact_solves_the_equation) {
  const char *cases[][2] = {{"n0", "n=0,t0=1"}, {"n1", "n=1,t0=1"}, {"n5", "n=5,t0=1"}};
  for (int i = 0; i < 3; i++) {
    nh_system sys = test_system("lane_emden", NULL);
    nh_state x0 = test_preset(&sys, cases[i][0]), x;
    cr_assert(nh_exact_solution(&sys, &x0, 0, &x) == 0);
    cr_expect(fabs(x.q[0] - x0.q[0]) <= 1e-15 && fabs(x.v[0] - x0.v[0]) <= 1e-15, "%s: exact(t0) != x0", cases[i][0]);
    for (double t = 0.3; t < 6; t += 1.1)
      cr_expect(eom_residual(&sys, &x0, t) <= 1e-6, "%s: residual %.3e at t = %g", cases[i][0],
                eom_residual(&sys, &x0, t), t);
    if (i < 2) { /* any state, started at t = 0.7 with t0 = 0.4 */
      sys = test_system("lane_emden", i == 0 ? "n=0,t0=0.4" : "n=1,t0=0.4");
      nh_state y0 = {.t = 0.7, .q = {-0.3}, .v = {1.2}};
      for (double t = 1; t < 6; t += 1.3)
        cr_expect(eom_residual(&sys, &y0, t) <= 1e-6, "%s off the classical solution: residual %.3e", cases[i][0],
                  eom_residual(&sys, &y0, t));
    }
  }
  nh_system sys = test_system("lane_emden", "n=5");
  nh_state x0 = test_preset(&sys, "n5"), x;
  x0.v[0] *= 1.01; /* off the homology family */
  cr_expect(nh_exact_solution(&sys, &x0, 1, &x) == -1, "n = 5 off its family must decline");
  sys = test_system("lane_emden", "n=2");
  cr_expect(nh_exact_solution(&sys, &x0, 1, &x) == -1, "n = 2 has no closed form");
}

/* The reference path (nh_free_force with α(t)) against the closed forms: n = 1 from an arbitrary
 * state and n = 5 from the preset, T = 8. A wrong α(t) (e.g. 2/t without t0, or a constant) would
 * miss by far more than 1e-12 (measured 4e-15 at rk8pd tolerance 1e-13). */
Test(time_dependent, lane_emden_reference_matches_exact) {
  const char *params[] = {"n=1,t0=0.4", "n=5,t0=1"};
  for (int i = 0; i < 2; i++) {
    nh_system sys = test_system("lane_emden", params[i]);
    nh_state x0 = i == 0 ? (nh_state){.t = 0.7, .q = {-0.3}, .v = {1.2}} : test_preset(&sys, "n5"), ref, ex;
    cr_assert(nh_reference_solve(&sys, &x0, x0.t + 8, 1e-13, &ref) == 0);
    cr_assert(nh_exact_solution(&sys, &x0, x0.t + 8, &ex) == 0);
    const double e = fmax(fabs(ref.q[0] - ex.q[0]), fabs(ref.v[0] - ex.v[0]));
    cr_expect(e <= 1e-12, "%s: reference vs exact %.3e", params[i], e);
  }
}

/* ---- contact2 with a time-dependent α and W: one step by hand ------------------------------------ */

/* The splitting of integrators/contact_splitting.c written out for n = 1, M = 1, at the mid time
 * tm = t + h/2: drift h/2, kick h/2 with g = U'(q̄, tm), damping e^{−α(tm)h}, kick h/2, drift h/2. */
static void hand_step(double alpha_m, double g, double U, double h, const nh_state *x, nh_state *y) {
  const double q = x->q[0] + h / 2 * x->v[0];
  double z = x->z + h / 2 * 0.5 * x->v[0] * x->v[0];
  const double e = exp(-alpha_m * h);
  const double v = e * (x->v[0] - h / 2 * g) - h / 2 * g;
  z = e * (z - h / 2 * U) - h / 2 * U;
  y->q[0] = q + h / 2 * v;
  y->v[0] = v;
  y->z = z + h / 2 * 0.5 * v * v;
}

static nh_state contact2_step(const nh_system *sys, const nh_state *x, double h) {
  nh_method *m = test_method("contact2");
  nh_cost cost = {0};
  nh_state y;
  test_step_ok(m, sys, x, &y, h, &cost);
  nh_method_free(m);
  return y;
}

static double state_gap(const nh_state *a, const nh_state *b) {
  return fmax(fabs(a->q[0] - b->q[0]), fmax(fabs(a->v[0] - b->v[0]), fabs(a->z - b->z)));
}

/* Lane–Emden n = 3, t0 = 0.5, from t = 0.3, h = 0.2: α(tm) = 2/(0.4 + 0.5). Negative controls: the
 * same formula with α at the step's start or end differs by more than 1e-4. */
Test(time_dependent, contact2_step_with_alpha_of_t_by_hand) {
  nh_system sys = test_system("lane_emden", "n=3,t0=0.5");
  const nh_state x = {.t = 0.3, .q = {0.8}, .v = {-0.4}, .z = 0.1};
  const double h = 0.2, qbar = 0.8 + h / 2 * -0.4;
  const double g = pow(qbar, 3), U = pow(qbar, 4) / 4;
  nh_state y = contact2_step(&sys, &x, h), hand, start, end;
  hand_step(2 / (0.4 + 0.5), g, U, h, &x, &hand);
  hand_step(2 / (0.3 + 0.5), g, U, h, &x, &start);
  hand_step(2 / (0.5 + 0.5), g, U, h, &x, &end);
  cr_expect(state_gap(&y, &hand) <= 1e-15, "contact2 vs hand: %.3e", state_gap(&y, &hand));
  cr_expect(y.t == 0.5, "t advances by h");
  cr_expect(state_gap(&start, &hand) > 1e-4 && state_gap(&end, &hand) > 1e-4, "controls: %.3e, %.3e",
            state_gap(&start, &hand), state_gap(&end, &hand));
}

/* Spin–orbit at e = 0 (only c_2 = 1: W = −(ε/2)cos(2q − 2t)/(1 + λ cos Ωt), written out here),
 * with a constant torque μ and tidal a: W, μ and α all at tm. Control: W at the step's start. */
Test(time_dependent, contact2_step_with_time_potential_by_hand) {
  nh_system sys = test_system("spin_orbit", "ecc=0,eps=0.3,omega=1.3,lambda=0.2,a=0.05,mu=0.02");
  const nh_state x = {.t = 0.4, .q = {0.7}, .v = {1.1}, .z = -0.2};
  const double h = 0.25, tm = x.t + h / 2, qb = 0.7 + h / 2 * 1.1, eps = 0.3, W = 1.3, l = 0.2;
  const double P = 1 / (1 + l * cos(W * tm)), alpha = -0.05 - l * W * sin(W * tm) * P;
  const double g = eps * P * sin(2 * qb - 2 * tm) - 0.02, U = -eps / 2 * P * cos(2 * qb - 2 * tm) - 0.02 * qb;
  nh_state y = contact2_step(&sys, &x, h), hand, early;
  hand_step(alpha, g, U, h, &x, &hand);
  const double P0 = 1 / (1 + l * cos(W * x.t));
  hand_step(alpha, eps * P0 * sin(2 * qb - 2 * x.t) - 0.02, -eps / 2 * P0 * cos(2 * qb - 2 * x.t) - 0.02 * qb, h, &x,
            &early);
  cr_expect(state_gap(&y, &hand) <= 1e-15, "contact2 vs hand: %.3e", state_gap(&y, &hand));
  cr_expect(state_gap(&early, &hand) > 1e-4, "control: %.3e", state_gap(&early, &hand));
}

/* ---- orders on Lane–Emden against the exact solution ---------------------------------------------- */

/* Observed order log2(e(h)/e(h/2)) at T = 4 from the n = 1 preset (h = 0.1, 0.05); the order table
 * (tests/orders/systems_lane_emden.cfg) fits the same on n = 5 over five step sizes. */
static double observed_order(const char *method, double h) {
  nh_system sys = test_system("lane_emden", NULL);
  nh_state x0 = test_preset(&sys, "n1");
  nh_state ex = test_true_state(&sys, &x0, 4);
  double e[2];
  for (int i = 0; i < 2; i++) {
    nh_state y = test_run_to(method, &sys, x0, h / (1 << i), 4);
    e[i] = fmax(fabs(y.q[0] - ex.q[0]), fabs(y.v[0] - ex.v[0]));
  }
  return log2(e[0] / e[1]);
}

Test(time_dependent, orders_on_lane_emden) {
  const char *methods[] = {"contact2", "yoshida6(contact2)", "rk4"};
  const double claimed[] = {2, 6, 4}, h[] = {0.1, 0.2, 0.1};
  for (int i = 0; i < 3; i++) {
    const double p = observed_order(methods[i], h[i]);
    cr_expect(fabs(p - claimed[i]) <= 0.15, "%s: observed order %.3f, claimed %g", methods[i], p, claimed[i]);
  }
}

/* ---- Lane–Emden from the notebook's start s = 0 (t0 = 0, issue 46 item 5) ------------------------- */

/* The closed forms through (x0, 0) at s = 0 (x0 = 1: the presets *_origin): at s = 0 the state
 * itself, elsewhere the equation (central differences, as above) and the formulas 1 − s²/6,
 * sin s/s, (1 + s²/3)^{−1/2} written out; a start with ẋ0 ≠ 0 at s = 0 is singular and declined. */
Test(time_dependent, lane_emden_exact_from_the_origin) {
  const char *names[] = {"n0_origin", "n1_origin", "n5_origin"};
  for (int i = 0; i < 3; i++) {
    nh_system sys = test_system("lane_emden", NULL);
    nh_state x0 = test_preset(&sys, names[i]), x;
    cr_expect(sys.p[1] == 0 && x0.q[0] == 1 && x0.v[0] == 0, "%s: (1, 0) at s = t0 = 0", names[i]);
    cr_assert(nh_exact_solution(&sys, &x0, 0, &x) == 0, "%s at s = 0", names[i]);
    cr_expect(x.q[0] == 1 && x.v[0] == 0, "%s: exact(0) = (%.17g, %.17g)", names[i], x.q[0], x.v[0]);
    for (double t = 0.3; t < 6; t += 1.1) {
      cr_expect(eom_residual(&sys, &x0, t) <= 1e-6, "%s: residual %.3e at s = %g", names[i], eom_residual(&sys, &x0, t), t);
      cr_assert(nh_exact_solution(&sys, &x0, t, &x) == 0);
      const double formula[] = {1 - t * t / 6, sin(t) / t, 1 / sqrt(1 + t * t / 3)};
      cr_expect(fabs(x.q[0] - formula[i]) <= 1e-15, "%s at s = %g: %.17g, formula %.17g", names[i], t, x.q[0], formula[i]);
    }
    x0.v[0] = 0.1;
    cr_expect(nh_exact_solution(&sys, &x0, 1, &x) == -1, "%s: xdot0 != 0 at s = 0 must decline", names[i]);
  }
}

/* From s = 0, where alpha = 2/s is infinite, only methods that take alpha at t_j + h/2 apply:
 * contact2 and its compositions run (and reach the exact sin s/s), rk4, newmark, ida and cvode
 * are refused with the reason, and so is a study whose truth would be the rk8pd reference (n = 2
 * has no closed form). The order from the singular start: contact2 converges at ~1.9 (h² log h:
 * its frozen alpha(h/2) = 4/h against the exact flow's v(h) = 0), and the compositions at 2 only,
 * which the test records rather than claims. Control: the same methods from t0 = 1 apply. */
Test(time_dependent, lane_emden_from_the_origin) {
  nh_system sys = test_system("lane_emden", "n=1,t0=0"), later = test_system("lane_emden", "n=1,t0=1");
  char err[512];
  const char *refused[] = {"rk4", "newmark", "ida", "cvode"};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    char e0[512];
    nh_method *m = nh_method_parse(refused[i], e0, sizeof e0);
    if (!m) continue; /* ida, cvode without SUNDIALS */
    cr_expect(nh_method_applies(m, &sys, err, sizeof err) == -1, "%s accepts the singular start", refused[i]);
    cr_expect(strstr(err, "singular at the start") && strstr(err, "contact2"), "%s: %s", refused[i], err);
    cr_expect(nh_method_applies(m, &later, err, sizeof err) == 0, "control, t0 = 1: %s", err);
    nh_method_free(m);
  }
  const char *run[] = {"contact2", "yoshida6(contact2)", "mclachlan8(contact2)"};
  nh_state x0 = test_preset(&sys, "n1_origin");
  nh_state ex = test_true_state(&sys, &x0, 4);
  for (size_t i = 0; i < sizeof run / sizeof *run; i++) {
    nh_method *m = test_method(run[i]);
    cr_expect(nh_method_applies(m, &sys, err, sizeof err) == 0, "%s: %s", run[i], err);
    nh_method_free(m);
    double e[2];
    for (int j = 0; j < 2; j++) {
      nh_state y = test_run_to(run[i], &sys, x0, 0.01 / (1 << j), 4);
      e[j] = fmax(fabs(y.q[0] - ex.q[0]), fabs(y.v[0] - ex.v[0]));
    }
    cr_expect(e[1] <= 1e-4 && log2(e[0] / e[1]) >= 1.8, "%s from s = 0: errors %.3e, %.3e at T = 4", run[i], e[0], e[1]);
    cr_log_info("%s from s = 0: order %.3f between h = 0.01 and 0.005", run[i], log2(e[0] / e[1]));
  }
  /* a study from s = 0 without a closed form is refused where the system is named */
  char path[256];
  snprintf(path, sizeof path, "/tmp/nhbench-le-origin-%d.cfg", (int)getpid());
  test_write_file(path, "study = \"convergence\";\nsystem = \"lane_emden\";\nsystem_params = { n = 2; t0 = 0.0; };\n"
                        "initial = { q = [1.0]; v = [0.0]; };\nT = 1.0;\nh0 = 0.1;\nhalvings = 2;\nmethods = [\"contact2\"];\n");
  nh_study st;
  cr_expect(nh_study_load(path, NULL, 0, &st, err, sizeof err) != 0, "n = 2 from s = 0 has no truth");
  cr_expect(strstr(err, ":2:") && strstr(err, "rk8pd reference cannot start there"), "%s", err);
  nh_study_free(&st); /* what the failed load allocated (study.h) */
  remove(path);
}

/* ---- who declines ------------------------------------------------------------------------------- */

/* Methods written for a constant α or a time-independent potential decline, naming the time
 * dependence; contact2, its compositions, rk4 and the classical Newmark (Γ(t, q, v) at the step's
 * times) accept. Control: the constant-α damped oscillator
 * is accepted by those same methods, so the refusal comes from the time dependence. */
Test(time_dependent, constant_alpha_methods_decline) {
  const char *decline[] = {"herglotz2", "herglotz1", "la1", "spark(s=2)", "triple_jump(herglotz2)"};
  const char *accept[] = {"contact2", "yoshida6(contact2)", "triple_jump(contact2)", "rk4", "newmark"};
  const char *systems[][2] = {{"lane_emden", "damping alpha(t)"},
                              {"time_perturbed_kepler", "damping alpha(t)"},
                              {"spin_orbit", "potential W(q,t)"}};
  char err[512];
  nh_system damped = test_system("damped_oscillator", NULL);
  for (int s = 0; s < 3; s++) {
    nh_system sys = test_system(systems[s][0], NULL);
    for (size_t i = 0; i < sizeof decline / sizeof *decline; i++) {
      nh_method *m = test_method(decline[i]);
      cr_expect(nh_method_applies(m, &sys, err, sizeof err) == -1, "%s accepts %s", decline[i], systems[s][0]);
      cr_expect(strstr(err, systems[s][1]) && strstr(err, "as a constant"), "%s: %s", decline[i], err);
      cr_expect(nh_method_applies(m, &damped, err, sizeof err) == 0, "control: %s", err);
      nh_method_free(m);
    }
    for (size_t i = 0; i < sizeof accept / sizeof *accept; i++) {
      nh_method *m = test_method(accept[i]);
      cr_expect(nh_method_applies(m, &sys, err, sizeof err) == 0, "%s: %s", accept[i], err);
      nh_method_free(m);
    }
  }
  /* The bits follow the parameters: α = 0 is the plain Kepler problem, λ = 0 a constant damping. */
  nh_system kep = test_system("time_perturbed_kepler", "alpha=0");
  cr_expect(nh_system_features(&kep) == 0, "alpha = 0: conservative");
  nh_system so = test_system("spin_orbit", "lambda=0,a=0.1");
  cr_expect(nh_system_features(&so) == (NH_SYS_DAMPING | NH_SYS_TIME_POTENTIAL), "constant a: %#x",
            nh_system_features(&so));
  nh_system le = test_system("lane_emden", NULL);
  cr_expect(nh_system_features(&le) == (NH_SYS_DAMPING | NH_SYS_TIME_DAMPING), "lane_emden: %#x", nh_system_features(&le));
}

/* ---- derivatives ----------------------------------------------------------------------------------- */

Test(time_dependent, derivatives_match_finite_differences) {
  test_check_system_derivatives("lane_emden", "n=3", 31);
  test_check_system_derivatives("lane_emden", "n=0", 31);
  test_check_system_derivatives("time_perturbed_kepler", NULL, 31);
  test_check_system_derivatives("spin_orbit", "ecc=0.2,eps=0.3,lambda=0.2,mu=0.1", 31);
}

/* ---- spin–orbit: the Cayley series against Kepler's equation ---------------------------------------- */

/* Σ c_k(e) cos(2q − kt) = (a/r)³ cos(2q − 2ν) + O(e⁸) [C90], with r/a = 1 − e cos E, E − e sin E = t
 * (Newton), ν the true anomaly. At e = 0.02 the truncation is ~1e-11 (measured 1.7e-11 on this grid,
 * 8.7e-12 on another in a separate computation); tolerance 3e-11 relative to ε/2. A wrong sign of k, a lost term of order
 * ≤ e⁶ or an e⁷ coefficient wrong by more than 0.2 shows. */
static double kepler_side(double e, double q, double t) {
  double E = t;
  for (int i = 0; i < 50; i++) E -= (E - e * sin(E) - t) / (1 - e * cos(E));
  const double r = 1 - e * cos(E), nu = 2 * atan2(sqrt(1 + e) * sin(E / 2), sqrt(1 - e) * cos(E / 2));
  return cos(2 * q - 2 * nu) / (r * r * r);
}

Test(time_dependent, spin_orbit_cayley_series_is_the_kepler_expansion) {
  nh_system sys = test_system("spin_orbit", "ecc=0.02,eps=0.5,lambda=0");
  double worst = 0;
  for (double q = -2; q < 2; q += 0.7)
    for (double t = 0.1; t < 6.3; t += 0.45) {
      const double W = test_time_potential(sys.type)->value(sys.p, &q, t), K = -0.25 * kepler_side(0.02, q, t);
      worst = fmax(worst, fabs(W - K) / 0.25);
    }
  cr_expect(worst <= 3e-11, "Cayley series vs Kepler: %.3e", worst);
  nh_system wrong = test_system("spin_orbit", "ecc=0.03,eps=0.5,lambda=0"); /* control: another e */
  double gap = 0;
  for (double t = 0.1; t < 6.3; t += 0.45) {
    const double q = 0.3;
    gap = fmax(gap, fabs(test_time_potential(wrong.type)->value(wrong.p, &q, t) + 0.25 * kepler_side(0.02, q, t)));
  }
  cr_expect(gap > 1e-3, "control: e = 0.03 vs 0.02 differ by %.3e", gap);
}

/* ---- time-perturbed Kepler: first integrals ------------------------------------------------------- */

/* Along the reference (T = 10): L·exp(α(1 − cos θt)/θ) constant for α = −0.07, θ = 2π, while L itself
 * is not (control, changes by 1e-2); at α = 0 the energy and L are constant (measured drifts 2e-14,
 * 7e-15, 4e-15). */
Test(time_dependent, kepler_first_integrals_along_the_reference) {
  nh_system sys = test_system("time_perturbed_kepler", NULL);
  nh_state x0 = test_preset(&sys, "k5_30"), ref;
  double d0[2], d1[2];
  nh_derived(&sys, x0.t, x0.q, x0.v, d0);
  cr_expect(fabs(d0[0] - 0.6 * sqrt(1.4 / 0.6)) <= 1e-15, "L0 = %.17g", d0[0]);
  cr_assert(nh_reference_solve(&sys, &x0, 10.25, 1e-13, &ref) == 0);
  nh_derived(&sys, ref.t, ref.q, ref.v, d1);
  cr_expect(fabs(d1[1] - d0[1]) <= 1e-11, "scaled L drifts by %.3e", d1[1] - d0[1]);
  cr_expect(fabs(d1[0] - d0[0]) > 1e-3, "control: L itself changes (by %.3e)", d1[0] - d0[0]);
  nh_system kep = test_system("time_perturbed_kepler", NULL);
  x0 = test_preset(&kep, "kepler");
  cr_assert(nh_reference_solve(&kep, &x0, 10, 1e-13, &ref) == 0);
  nh_derived(&kep, ref.t, ref.q, ref.v, d1);
  nh_derived(&kep, x0.t, x0.q, x0.v, d0);
  cr_expect(fabs(d1[0] - d0[0]) <= 1e-10, "alpha = 0: L drifts by %.3e", d1[0] - d0[0]);
  const double E0 = nh_energy(&kep, x0.q, x0.v), E1 = nh_energy(&kep, ref.q, ref.v);
  cr_expect(fabs(E0 + 0.5) <= 1e-15 && fabs(E1 - E0) <= 1e-10, "alpha = 0: E0 = %.17g (a = 1: -1/2), drift %.3e", E0,
            E1 - E0);
}

/* ---- the notebook's spin–orbit phase portrait (c-fig1a) ------------------------------------------- */

/* λ = 0.001, the notebook's settings (e = 0.01, ε = 0.0075, Ω = 1, contact2 = its `step`, h = π/10,
 * 600 points at t = 2πk): from (θ, θ̇) = (0, 1.112) the points stay on a libration curve inside the
 * 1:1 resonance, |θ mod 2π| < π/2 (the separatrix of the cos 2θ resonance reaches ±π/2), while from
 * (0, 1.137), the notebook's outermost curve, θ − t circulates and takes values past ±π/2. It fails
 * if the resonance is misplaced (a wrong sign of W puts the stable point at θ = π/2, so the first
 * orbit circulates or crosses π/2), too wide or too narrow (a wrong ε or c_2 moves the separatrix
 * across one of the two initial conditions), or if the damping pumps or drains the libration over
 * the 600 orbits. The centre (0, 1), the notebook's red cross, stays within 0.03 of itself (measured:
 * max |θ| 1.19 and 3.14 for the two curves, 0.011 from the centre). */
static void portrait(double thetadot0, double *max_theta, double *max_dev) {
  nh_system sys = test_system("spin_orbit", NULL);
  nh_state x = test_preset(&sys, "fig1a"), y;
  x.v[0] = thetadot0;
  nh_method *m = test_method("contact2");
  nh_cost cost = {0};
  test_init_ok(m, &sys, &x, M_PI / 10, &cost);
  *max_theta = *max_dev = 0;
  for (int k = 0; k < 600; k++) {
    const double th = remainder(x.q[0], 2 * M_PI);
    *max_theta = fmax(*max_theta, fabs(th));
    *max_dev = fmax(*max_dev, hypot(th, x.v[0] - 1));
    for (int j = 0; j < 20; j++) {
      test_step_ok(m, &sys, &x, &y, M_PI / 10, &cost);
      x = y;
    }
  }
  nh_method_free(m);
}

Test(time_dependent, spin_orbit_fig1a_resonance) {
  double th, dev;
  portrait(1.112, &th, &dev);
  cr_expect(th < M_PI / 2, "thetadot0 = 1.112 must librate: max |theta| = %.4f", th);
  cr_expect(th > 0.5, "thetadot0 = 1.112 librates widely: max |theta| = %.4f", th);
  portrait(1.137, &th, &dev);
  cr_expect(th > M_PI / 2, "thetadot0 = 1.137 must circulate: max |theta| = %.4f", th);
  portrait(1.0, &th, &dev);
  cr_expect(dev < 0.03, "the centre (0, 1) stays near itself: max distance %.4f", dev);
}

/* ---- the contact Hamiltonian observable ------------------------------------------------------------ */

/* By hand: spin–orbit at e = 0 (W = −(ε/2)cos(2q − 2t)/(1 + λ cos Ωt)), H = ½v² − μq + W + α(t)z; the
 * forced damped oscillator, H = ½v² + ½ω²x² − β sin(Ωt)x + αz. Along contact2 on the damped
 * oscillator (α = 1, preset damped_a1, h = 0.005, T = 3), H follows the exact H0 e^{−αt}
 * (dH/dt = −αH for an autonomous contact Hamiltonian) to O(h²) (measured 2e-8); control: H0 e^{−αt/2}. */
Test(time_dependent, contact_hamiltonian_observable) {
  const nh_observable *o = nh_observable_find("contact_hamiltonian");
  cr_assert(o != NULL);
  nh_system so = test_system("spin_orbit", "ecc=0,eps=0.3,omega=1.3,lambda=0.2,a=0.05,mu=0.02");
  nh_state x = {.t = 0.7, .q = {0.4}, .v = {0.9}, .z = 0.3};
  nh_obs_ctx c = {.sys = &so, .cur = &x};
  double H;
  o->eval(&c, &H);
  const double P = 1 / (1 + 0.2 * cos(1.3 * 0.7)), alpha = -0.05 - 0.2 * 1.3 * sin(1.3 * 0.7) * P;
  const double hand = 0.5 * 0.81 - 0.02 * 0.4 - 0.15 * P * cos(0.8 - 1.4) + alpha * 0.3;
  cr_expect(fabs(H - hand) <= 1e-15, "spin_orbit: %.17g, hand %.17g", H, hand);
  nh_system dfo = test_system("damped_oscillator", "omega=1.5,alpha=0.2,beta=0.3,omega_f=2");
  c.sys = &dfo;
  o->eval(&c, &H);
  const double hand2 = 0.5 * 0.81 + 0.5 * 2.25 * 0.16 - 0.3 * sin(1.4) * 0.4 + 0.2 * 0.3;
  cr_expect(fabs(H - hand2) <= 1e-15, "damped_oscillator: %.17g, hand %.17g", H, hand2);

  nh_system d = test_system("damped_oscillator", NULL);
  nh_state x0 = test_preset(&d, "damped_a1");
  const double H0 = nh_energy(&d, x0.q, x0.v);
  nh_state y = test_run_to("contact2", &d, x0, 0.005, 3);
  c = (nh_obs_ctx){.sys = &d, .cur = &y};
  o->eval(&c, &H);
  cr_expect(fabs(H - H0 * exp(-3)) <= 1e-7, "H(3) = %.10g, exact %.10g", H, H0 * exp(-3));
  cr_expect(fabs(H - H0 * exp(-1.5)) > 1e-2, "control");
}
