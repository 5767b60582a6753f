/* Observables (studies/observables.c) against values computed here from the spec's formulas, and
 * the trajectory study that samples them (studies/trajectory.c) against independent runs. */
#include <criterion/criterion.h>
#include <float.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "studies/study.h"
#include "tests/checks.h"
#include "tests/helpers.h"

#define DATA NHBENCH_SOURCE_DIR "/tests/data/"

static const nh_observable *obs(const char *name) {
  const nh_observable *o = nh_observable_find(name);
  cr_assert(o != NULL, "observable %s missing from the registry", name);
  return o;
}

Test(observables, norms_by_hand) {
  const double d[] = {3, -4, 0};
  cr_expect_eq(nh_norm_max(3, d), 4);
  cr_expect_eq(nh_norm_2(3, d), 5);
  const double big[] = {3e200, 4e200}, tiny[] = {3e-200, -4e-200};
  cr_expect(fabs(nh_norm_2(2, big) - 5e200) <= 1e-15 * 5e200, "no overflow: %g", nh_norm_2(2, big));
  cr_expect(fabs(nh_norm_2(2, tiny) - 5e-200) <= 1e-15 * 5e-200, "no underflow: %g", nh_norm_2(2, tiny));
  cr_expect_eq(nh_norm_2(1, (double[]){-2}), 2);
  cr_expect_eq(nh_norm_max(0, d), 0);
  const double with_nan[] = {1, NAN, 2};
  cr_expect(isnan(nh_norm_max(3, with_nan)) && isnan(nh_norm_2(3, with_nan)), "a failed run's error is NaN, not 2");
  cr_expect(isinf(nh_norm_max(2, (double[]){1, -INFINITY})));
}

Test(observables, registry_names_unique_and_documented) {
  for (int i = 0; nh_observables[i]; i++) {
    const nh_observable *o = nh_observables[i];
    cr_expect(o->doc && strlen(o->doc) > 10 && o->units && o->units[0], "%s undocumented", o->name);
    /* An axis label (enhanced text, one line: the figures' y label), shorter than the documentation. */
    cr_expect(o->symbol && o->symbol[0] && !strpbrk(o->symbol, "\"\n") && strlen(o->symbol) < 40,
              "%s: no axis symbol, or not one short line", o->name);
    cr_expect_eq(nh_observable_find(o->name), o);
    for (int j = 0; j < i; j++) cr_expect_neq(strcmp(o->name, nh_observables[j]->name), 0, "%s twice", o->name);
  }
  cr_expect_null(nh_observable_find("energies"));
}

/* The particle (spec/newmark.md §3.1): E = ½|v|², constraint ż − y ẋ = 0, λ = ẋẏ/(1 + y²). */
Test(observables, particle_values_by_hand) {
  nh_system sys = test_system("particle", NULL);
  nh_method *m = test_method("rk4");
  nh_state x = {0}, ref = {0};
  x.t = 0.5;
  double q[] = {1, 2, 3}, v[] = {0.5, -1, 0.25};
  memcpy(x.q, q, sizeof q), memcpy(x.v, v, sizeof v);
  ref = x;
  const double e1 = 0x1p-10, e2 = 0x1p-9; /* exact in binary, so the differences are exact */
  ref.q[1] += e1, ref.v[2] -= e2;
  nh_obs_ctx c = {&sys, m, 0.1, 0.5, NULL, &x, &ref, NULL, NULL};
  double out[8];
  nh_observable_sample(obs("energy"), &c, out);
  cr_expect_eq(out[0], 0.5 * (0.25 + 1 + 0.0625));
  nh_observable_sample(obs("energy_error"), &c, out);
  cr_expect_eq(out[0], 0.5 * (0.25 + 1 + 0.0625) - 0.5);
  nh_observable_sample(obs("relative_energy_error"), &c, out);
  cr_expect(fabs(out[0] - (0.65625 - 0.5) / 0.5) < 1e-15);
  nh_observable_sample(obs("constraint_residual"), &c, out);
  cr_expect_eq(out[0], 0.25 - 2 * 0.5, "signed ż − y ẋ: %g", out[0]);
  nh_observable_sample(obs("q"), &c, out);
  cr_expect(out[0] == 1 && out[1] == 2 && out[2] == 3);
  nh_observable_sample(obs("v"), &c, out);
  cr_expect(out[0] == 0.5 && out[1] == -1 && out[2] == 0.25);
  nh_observable_sample(obs("error"), &c, out);
  cr_expect(out[0] == 0 && out[1] == -e1 && out[2] == 0 && out[3] == 0 && out[4] == 0 && out[5] == e2,
            "per coordinate, signed, q then v");
  nh_observable_sample(obs("error_max"), &c, out);
  cr_expect_eq(out[0], e2);
  nh_observable_sample(obs("error_2"), &c, out);
  cr_expect(fabs(out[0] - sqrt(e1 * e1 + e2 * e2)) < 1e-18);
  nh_observable_sample(obs("error_q_max"), &c, out);
  cr_expect_eq(out[0], e1);
  nh_observable_sample(obs("error_v_2"), &c, out);
  cr_expect_eq(out[0], e2);
  nh_observable_sample(obs("error_v_max"), &c, out);
  cr_expect_eq(out[0], e2);
  nh_observable_sample(obs("error_q_2"), &c, out);
  cr_expect_eq(out[0], e1);
  nh_observable_sample(obs("reference_energy"), &c, out);
  cr_expect(fabs(out[0] - 0.5 * (0.25 + 1 + pow(0.25 - e2, 2))) < 1e-15, "%.17g", out[0]);
  /* The first entries of q and of v: the largest difference at q[0] (entry 0 of (q, v)), and v's
   * only one at v[0] (entry n), so that a norm starting one entry late misses it. */
  const double e3 = 0x1p-8;
  ref = x, ref.q[0] += e3, ref.v[0] -= e2;
  const char *names[] = {"error_max", "error_q_max", "error_v_max", "error_2", "error_q_2", "error_v_2"};
  const double want[] = {e3, e3, e2, sqrt(e3 * e3 + e2 * e2), e3, e2};
  for (int i = 0; i < 6; i++) {
    nh_observable_sample(obs(names[i]), &c, out);
    cr_expect(fabs(out[0] - want[i]) <= 1e-18, "%s: %.17g, by hand %.17g", names[i], out[0], want[i]);
  }
  nh_method_free(m);
}

/* The Foucault pendulum's constraint is affine: −yẋ + xẏ + s(x² + y²) (spec/herglotz.md §3.1). */
Test(observables, affine_constraint_residual_includes_b) {
  nh_system sys = test_system("foucault_pendulum", NULL);
  nh_method *m = test_method("herglotz1");
  nh_state x = {0};
  x.q[0] = 2, x.q[1] = -1, x.v[0] = 0.5, x.v[1] = 0.25;
  nh_obs_ctx c = {&sys, m, 0.1, 1, NULL, &x, NULL, NULL, NULL};
  double out[2], b[1];
  sys.type->affine->values(sys.p, x.q, b);
  cr_assert(b[0] > 0, "b = s (x² + y²) > 0");
  nh_observable_sample(obs("constraint_residual"), &c, out);
  cr_expect(fabs(out[0] - (1 * 0.5 + 2 * 0.25 + b[0])) < 1e-15, "%.17g", out[0]);
  nh_method_free(m);
}

/* discrete_energy and discrete_constraint are the method's over the last step, of the context's
 * step size h (0.25 from t = 1, not 2.25 = cur.t + prev.t): nh_rattle's E_d and nh_newmark's
 * discrete constraint on the sleigh, to the bit, at a state moved off the step's solution. */
static double hook_over(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y, double h,
                        int energy) {
  double r[NH_MAX_K];
  if (energy) return m->type->discrete_energy(m, sys, x, y, h);
  m->type->discrete_constraint(m, sys, x, y, h, r);
  return r[0];
}

Test(observables, discrete_quantities_over_the_last_step) {
  const char *method[2] = {"nh_rattle(lambda0=0)", "nh_newmark"}, *name[2] = {"discrete_energy", "discrete_constraint"};
  for (int energy = 1; energy >= 0; energy--) {
    nh_system sys = test_system("chaplygin_sleigh", NULL);
    nh_method *m = test_method(method[1 - energy]);
    nh_state x = test_preset(&sys, "ic1"), y;
    const double h = 0.25;
    x.t = 1;
    nh_cost cost = {0};
    test_init_ok(m, &sys, &x, h, &cost);
    test_step_ok(m, &sys, &x, &y, h, &cost);
    cr_assert_eq(y.t, 1.25);
    y.q[0] += 0.01, y.q[1] -= 0.02; /* off the discrete constraint, which then depends on h */
    nh_obs_ctx c = {&sys, m, h, nh_energy(&sys, x.q, x.v), &x, &y, NULL, NULL, NULL};
    double out[NH_MAX_K];
    nh_observable_sample(obs(name[1 - energy]), &c, out);
    const double want = hook_over(m, &sys, &x, &y, h, energy);
    cr_expect_eq(out[0], want, "%s: %.17g, the method's %.17g", name[1 - energy], out[0], want);
    cr_expect(fabs(hook_over(m, &sys, &x, &y, 2.25, energy) - want) > 1e-3, "%s depends on the step", name[1 - energy]);
    nh_method_free(m);
  }
}

/* Absent quantities are NaN with a reason, never 0; so are step quantities at the first sample
 * and reference quantities without a reference. */
Test(observables, absence_is_nan_with_reason) {
  nh_system sys = test_system("particle", NULL);
  nh_method *rk4 = test_method("rk4");
  nh_state x = {0}, prev = {0};
  x.v[0] = 1, x.z = 7;
  nh_obs_ctx c = {&sys, rk4, 0.1, 0.5, &prev, &x, NULL, NULL, NULL};
  const char *absent_for_rk4[] = {"multiplier", "multiplier_time", "multiplier_error", "discrete_constraint",
                                  "discrete_energy", "action"};
  for (size_t i = 0; i < sizeof absent_for_rk4 / sizeof *absent_for_rk4; i++) {
    const nh_observable *o = obs(absent_for_rk4[i]);
    const char *why = o->absent(rk4, &sys);
    cr_expect(why && strlen(why) > 5, "%s: rk4 must give a reason", o->name);
    double out[4] = {0, 0, 0, 0};
    nh_observable_sample(o, &c, out);
    cr_expect(isnan(out[0]), "%s: absent must be NaN, got %g", o->name, out[0]);
  }
  double out[8];
  nh_observable_sample(obs("error"), &c, out);
  cr_expect(isnan(out[0]) && isnan(out[5]), "no reference: NaN");
  cr_expect_null(obs("energy")->absent(rk4, &sys));
  /* The action is defined for contact methods; step quantities are NaN at the first sample. */
  nh_method *h2 = test_method("herglotz2");
  c.m = h2;
  nh_observable_sample(obs("action"), &c, out);
  cr_expect_eq(out[0], 7);
  nh_system disk = test_system("falling_disk", NULL);
  c.sys = &disk;
  c.prev = NULL;
  cr_expect_null(obs("discrete_energy")->absent(h2, &disk), "herglotz2 defines a discrete energy");
  nh_observable_sample(obs("discrete_energy"), &c, out);
  cr_expect(isnan(out[0]), "no step yet at the first sample");
  /* A composition's discrete constraint is its sub-steps' (integrators/compose.c): defined over a
   * base that defines one, absent over one that does not (classical newmark); its discrete energy
   * stays absent (a sub-step's energy is not the composition's). */
  nh_method *pair = test_method("adjoint_pair(nh_newmark(alpha=0))"), *tj = test_method("triple_jump(newmark)");
  cr_expect_null(obs("discrete_constraint")->absent(pair, &sys));
  const char *why = obs("discrete_constraint")->absent(tj, &sys);
  cr_expect(why && strstr(why, "base"), "triple_jump(newmark): %s", why ? why : "(defined)");
  cr_expect_not_null(obs("discrete_energy")->absent(pair, &sys));
  c.sys = &sys, c.m = tj, c.prev = &prev;
  out[0] = 0;
  nh_observable_sample(obs("discrete_constraint"), &c, out);
  cr_expect(isnan(out[0]), "absent over classical newmark: NaN, got %g", out[0]);
  nh_method_free(tj);
  /* A system without invariants or derived quantities. */
  nh_system chaotic = test_system("chaotic_particle", NULL);
  cr_expect_not_null(obs("invariants")->absent(rk4, &chaotic));
  cr_expect_eq(obs("invariants")->width(&chaotic), 0);
  nh_method_free(rk4), nh_method_free(h2), nh_method_free(pair);
}

/* ---------------------------------------------------------------------------------------------- */
/* power and reference_power: P = −α(t) vᵀM(q)v + F(t)·v (spec/herglotz.md §2.1, §3.2)            */

static double sample1(const char *name, const nh_obs_ctx *c) {
  double out[1];
  nh_observable_sample(obs(name), c, out);
  return out[0];
}

static double power_of(const nh_system *sys, const nh_state *x) {
  nh_obs_ctx c = {sys, NULL, 0.1, 0, NULL, x, NULL, NULL, NULL};
  return sample1("power", &c);
}

/* The damped, forced oscillator ẍ + αẋ + ω²x = β sin(Ωt) (M = 1): P = −αẋ² + β sin(Ωt) ẋ, at a
 * time and state where both terms are nonzero and of opposite signs and different sizes (−0.675
 * and +0.9668), so that a sign error in either, or in both, or the force at t = 0 (0) misses. */
Test(observables, power_by_hand_on_the_damped_oscillator) {
  const double al = 0.3, be = 0.7, W = 1.3, t = 0.9, xv = 1.5;
  nh_system sys = test_system("damped_oscillator", "omega=1.5,alpha=0.3,beta=0.7,omega_f=1.3");
  nh_state x = {0};
  x.t = t, x.q[0] = 0.4, x.v[0] = xv;
  const double damping = -al * xv * xv, forcing = be * sin(W * t) * xv, want = damping + forcing;
  cr_assert(damping < -0.6 && forcing > 0.9, "both terms present: %g, %g", damping, forcing);
  const double P = power_of(&sys, &x);
  cr_expect(fabs(P - want) <= 4e-16 * (fabs(damping) + fabs(forcing)), "P = %.17g, by hand %.17g", P, want);
  nh_system damped = test_system("damped_oscillator", "omega=1.5,alpha=0.3,beta=0"),
            forced = test_system("damped_oscillator", "omega=1.5,alpha=0,beta=0.7,omega_f=1.3");
  cr_expect(fabs(power_of(&damped, &x) - damping) <= 4e-16 * fabs(damping), "damping alone: %.17g",
            power_of(&damped, &x));
  cr_expect(fabs(power_of(&forced, &x) - forcing) <= 4e-16 * fabs(forcing), "forcing alone: %.17g",
            power_of(&forced, &x));
}

/* The falling disk (spec/herglotz.md §3.2): vᵀM(q)v = 2T from the Lagrangian (4.10),
 *   2T = m(Ẋ² + Ẏ²) + mR² sin²θ θ̇² + I_A(ψ̇ − ϕ̇ sinθ)² + I_T(θ̇² + ϕ̇² cos²θ),
 * I_A = mR²/2, I_T = mR²/4, and F = (0, 0, 0, F_ϕ_slope t, F_ψ_const + F_ψ_slope t): each term
 * alone and both, at θ = 0.7 where M(q) is far from I (vᵀv would give another number). */
Test(observables, power_by_hand_on_the_falling_disk) {
  const double m = 5, R = 0.5, IA = m * R * R / 2, IT = m * R * R / 4, al = 0.2, t = 1.5;
  const double q[5] = {0.1, -0.2, 0.7, 0.3, 1.1}, v[5] = {0.4, -0.3, 0.5, 0.8, 1.2};
  const double s = sin(q[2]), co = cos(q[2]);
  const double twoT = m * (v[0] * v[0] + v[1] * v[1]) + m * R * R * s * s * v[2] * v[2] +
                      IA * (v[4] - v[3] * s) * (v[4] - v[3] * s) + IT * (v[2] * v[2] + v[3] * v[3] * co * co);
  const double damping = -al * twoT, forcing = (3 + 0.5 * t) * v[4] + 0.25 * t * v[3];
  double vv = 0;
  for (int i = 0; i < 5; i++) vv += v[i] * v[i];
  cr_assert(fabs(twoT - vv) > 0.5, "M(q) matters here: vᵀMv = %g, vᵀv = %g", twoT, vv);
  nh_state x = {0};
  x.t = t;
  memcpy(x.q, q, sizeof q), memcpy(x.v, v, sizeof v);
  static const char *const params[3] = {"alpha=0.2", "F_psi_const=3,F_psi_slope=0.5,F_phi_slope=0.25",
                                        "alpha=0.2,F_psi_const=3,F_psi_slope=0.5,F_phi_slope=0.25"};
  const double want[3] = {damping, forcing, damping + forcing};
  for (int k = 0; k < 3; k++) {
    nh_system sys = test_system("falling_disk", params[k]);
    const double P = power_of(&sys, &x);
    cr_expect(fabs(P - want[k]) <= 1e-15 * (fabs(damping) + fabs(forcing)), "%s: P = %.17g, by hand %.17g",
              params[k], P, want[k]);
  }
}

/* A conservative system does no work: P = 0 exactly, on the chaotic particle, the particle, the
 * undamped, unforced oscillator and the disk with its default (α = 0, no torque) parameters. */
Test(observables, power_is_zero_on_a_conservative_system) {
  static const char *const systems[][2] = {
      {"chaotic_particle", NULL}, {"particle", NULL}, {"damped_oscillator", "alpha=0,beta=0"}, {"falling_disk", NULL}};
  for (size_t k = 0; k < sizeof systems / sizeof *systems; k++) {
    nh_system sys = test_system(systems[k][0], systems[k][1]);
    nh_state x;
    nh_system_default_state(&sys, &x);
    x.t = 2.5;
    cr_expect(test_max_abs(sys.n, x.v) > 0, "%s: a moving state", systems[k][0]);
    cr_expect_eq(power_of(&sys, &x), 0, "%s: %g", systems[k][0], power_of(&sys, &x));
  }
}

/* reference_power is power of the reference state (its q, v and time), not of the sampled one;
 * NaN without a reference. */
Test(observables, reference_power_is_power_of_the_reference_state) {
  nh_system sys = test_system("falling_disk", "alpha=0.2,F_psi_const=3,F_psi_slope=0.5,F_phi_slope=0.25");
  nh_state x, ref;
  nh_system_default_state(&sys, &x);
  x.t = 1.5;
  ref = x;
  ref.q[2] = 0.4, ref.v[3] = -0.6, ref.v[4] = 2.5, ref.t = 1.75;
  nh_obs_ctx c = {&sys, NULL, 0.1, 0, NULL, &x, &ref, NULL, NULL};
  const double got = sample1("reference_power", &c), want = power_of(&sys, &ref);
  cr_expect_eq(got, want, "reference_power %.17g, power of the reference state %.17g", got, want);
  cr_expect(fabs(got - sample1("power", &c)) > 1, "not the sampled state's: %g", sample1("power", &c));
  ref.t = x.t;
  cr_expect(fabs(sample1("reference_power", &c) - got) > 0.1, "at the reference's time (the torques grow with t)");
  c.ref = NULL;
  cr_expect(isnan(sample1("reference_power", &c)), "no reference: NaN");
}

/* The energy balance (spec/herglotz.md §2.1; §5 item 11): along the exact solution of the forced
 * damped oscillator (α = 0.1, β = 0.3, Ω = π/3, ω = 1, from x0 = −0.25, ẋ0 = 0.75), the trapezoid
 * integral of reference_power over [0, 10] at N = 10⁵ intervals (h = 1e-4) equals E(10) − E(0),
 * E = ½ẋ² + ½ω²x² computed here. Quadrature error: |E_trap| ≤ (T h²/12) max|P''|, where
 * P = −αẋ² + β sin(Ωt)ẋ has
 *   P'' = −2α(ẍ² + ẋ x⃛) + β(−Ω² sin(Ωt) ẋ + 2Ω cos(Ωt) ẍ + sin(Ωt) x⃛),
 * and from the equation |ẍ| ≤ A1 = α|ẋ| + ω²|x| + |β|, |x⃛| ≤ A2 = αA1 + ω²|ẋ| + |β|Ω, so
 * max|P''| ≤ 2α(A1² + |ẋ|A2) + |β|(Ω²|ẋ| + 2ΩA1 + A2) with |x|, |ẋ| their maxima over the samples
 * (taken 1.01 times: between samples they exceed them by at most h max|ẋ| resp. h max|ẍ|, < 1e-3).
 * The sum's rounding adds at most N ε Σ|P| h. The bound is ~3e-8 (the error itself is ~4e-12: its
 * leading term (h²/12)(P'(T) − P'(0)) is small because P'(10) ≈ P'(0) here); each term's integral
 * is O(1), so a sign error in either (which moves the integral by twice that term's) fails. */
Test(observables, reference_power_integrates_to_the_energy_change) {
  const double al = 0.1, be = 0.3, W = 1.0471975511965976, w = 1, T = 10;
  const long N = 100000;
  const double h = T / N;
  nh_system sys = test_system("damped_oscillator", "omega=1,alpha=0.1,beta=0.3,omega_f=1.0471975511965976");
  nh_state x0 = {0}, ref;
  x0.q[0] = -0.25, x0.v[0] = 0.75;
  nh_obs_ctx c = {&sys, NULL, h, 0, NULL, &x0, &ref, NULL, NULL};
  const nh_observable *o = obs("reference_power");
  double integral = 0, magnitude = 0, damping = 0, forcing = 0, X = 0, V = 0, P;
  for (long i = 0; i <= N; i++) {
    cr_assert_eq(nh_exact_solution(&sys, &x0, (double)i * h, &ref), 0);
    const double wt = (i == 0 || i == N) ? 0.5 * h : h, v = ref.v[0];
    nh_observable_sample(o, &c, &P);
    integral += wt * P, magnitude += wt * fabs(P);
    damping += wt * (-al * v * v);
    forcing += wt * be * sin(W * ref.t) * v;
    X = fmax(X, fabs(ref.q[0])), V = fmax(V, fabs(v));
  }
  const double E0 = 0.5 * x0.v[0] * x0.v[0] + 0.5 * w * w * x0.q[0] * x0.q[0];
  const double ET = 0.5 * ref.v[0] * ref.v[0] + 0.5 * w * w * ref.q[0] * ref.q[0];
  X *= 1.01, V *= 1.01;
  const double A1 = al * V + w * w * X + be, A2 = al * A1 + w * w * V + be * W;
  const double P2 = 2 * al * (A1 * A1 + V * A2) + be * (W * W * V + 2 * W * A1 + A2);
  const double bound = T * h * h / 12 * P2 + N * DBL_EPSILON * magnitude;
  cr_expect(fabs(integral - (ET - E0)) <= bound, "∫P dt = %.15g, E(T) − E(0) = %.15g: off by %.3e > %.3e", integral,
            ET - E0, fabs(integral - (ET - E0)), bound);
  cr_expect(fabs(damping) > 1e4 * bound && fabs(forcing) > 1e4 * bound, "both terms count: %g, %g (bound %.3e)",
            damping, forcing, bound);
  cr_log_info("energy balance: off by %.3e, bound %.3e; damping %g, forcing %g", fabs(integral - (ET - E0)), bound,
              damping, forcing);
}

/* The discrete constraint of Ψ_h = adjoint_pair(nh_newmark(alpha=0)) = F^{0,0,1}_{h/2} ∘
 * F^{0,0,0}_{h/2} (spec/newmark.md (18); C2), on the chaotic particle from its default state: the
 * halves stepped here, each one's Φ of (N3) (α = 0: ⟨μ(q_k), Δq⟩/(h/2); α = 1: ⟨μ(q_k+1), Δq⟩/(h/2),
 * μ(q) = (1, 0, 0, y1, y2), checked against its hook to the rounding of the sum); the observable
 * is the one of larger magnitude with its sign, to the bit. The sample's times are a runner's
 * (t0 + s h: cur.t − prev.t is not h): the observable steps with the context's h, and a replay with
 * cur.t − prev.t does not end at y and gives NaN. */
static double phi_by_hand(const nh_state *q0, const nh_state *q1, const nh_state *at, double h, double *scale) {
  const double mu[5] = {1, 0, 0, at->q[1], at->q[2]};
  double s = 0;
  *scale = 0;
  for (int i = 0; i < 5; i++) s += mu[i] * (q1->q[i] - q0->q[i]), *scale += fabs(mu[i] * (q1->q[i] - q0->q[i]));
  *scale /= h;
  return s / h;
}

Test(observables, composition_discrete_constraint_is_the_larger_sub_step_value) {
  nh_system sys = test_system("chaotic_particle", NULL);
  nh_method *pair = test_method("adjoint_pair(nh_newmark(alpha=0))"), *F0 = test_method("nh_newmark(alpha=0)"),
            *F1 = test_method("nh_newmark(alpha=1)");
  const double h = 0.2;
  nh_state x, y, a, b;
  nh_system_default_state(&sys, &x);
  x.t = 99.8;
  nh_cost cost = {0};
  test_step_ok(pair, &sys, &x, &y, h, &cost);
  y.t = 100.0; /* t0 + 500 h as the runners write it */
  cr_assert_neq(y.t - x.t, h);
  test_step_ok(F0, &sys, &x, &a, h / 2, &cost);
  test_step_ok(F1, &sys, &a, &b, h / 2, &cost);
  cr_assert(memcmp(b.q, y.q, sizeof(double) * 5) == 0 && memcmp(b.v, y.v, sizeof(double) * 5) == 0,
            "the pair's step is its two halves, bit for bit");
  double phi[2], scale[2];
  nh_method_discrete_constraint(F0, &sys, &x, &a, h / 2, &phi[0]);
  nh_method_discrete_constraint(F1, &sys, &a, &b, h / 2, &phi[1]);
  const double hand[2] = {phi_by_hand(&x, &a, &x, h / 2, &scale[0]), phi_by_hand(&a, &b, &b, h / 2, &scale[1])};
  for (int k = 0; k < 2; k++) {
    cr_expect(fabs(phi[k] - hand[k]) <= 8 * DBL_EPSILON * scale[k], "half %d: Phi %.3e, by hand %.3e (scale %.3e)", k,
              phi[k], hand[k], scale[k]);
    cr_expect(fabs(phi[k]) <= 1e-12, "C2: half %d |Phi| = %.3e", k, fabs(phi[k]));
  }
  cr_assert(fabs(phi[0]) != fabs(phi[1]), "the halves' values must differ in size to tell them apart: %g, %g", phi[0],
            phi[1]);
  const double want = fabs(phi[0]) > fabs(phi[1]) ? phi[0] : phi[1];
  nh_obs_ctx c = {&sys, pair, h, nh_energy(&sys, x.q, x.v), &x, &y, NULL, NULL, NULL};
  const double got = sample1("discrete_constraint", &c);
  cr_expect_eq(got, want, "discrete_constraint %.17g, the larger half %.17g (halves %.17g, %.17g)", got, want, phi[0],
               phi[1]);
  cr_log_info("Psi_h halves: Phi = %.3e, %.3e", phi[0], phi[1]);
  double out;
  nh_method_discrete_constraint(pair, &sys, &x, &y, y.t - x.t, &out);
  cr_expect(isnan(out), "a replay with cur.t - prev.t = %.17g steps elsewhere: NaN, got %g", y.t - x.t, out);
  nh_method_free(pair), nh_method_free(F0), nh_method_free(F1);
}

/* The system's own quantities are offered on exactly the systems that declare them, one of them
 * (damped_oscillator's Q) as much as several (rotational_symmetry's two). */
Test(observables, invariants_and_derived_where_the_system_declares_them) {
  nh_method *rk4 = test_method("rk4");
  static const char *const derived[] = {"derived", "derived_reference"}, *const invariants[] = {"invariants",
                                                                                                  "invariants_error"};
  int declaring[2][3] = {{0}}; /* [derived, invariants][none, one, several] */
  for (int si = 0; nh_system_types[si]; si++) {
    nh_system sys = test_system_of(nh_system_types[si], NULL);
    const int n[2] = {nh_derived_count(&sys), nh_invariant_count(&sys)};
    for (int k = 0; k < 2; k++) {
      const char *name = (k ? invariants : derived)[0], *other = (k ? invariants : derived)[1];
      cr_expect_eq(obs(name)->absent(rk4, &sys) == NULL, n[k] > 0, "%s on %s (%d declared)", name, sys.type->name,
                   n[k]);
      cr_expect_eq(obs(other)->absent(rk4, &sys) == NULL, n[k] > 0, "%s on %s (%d declared)", other,
                   sys.type->name, n[k]);
      declaring[k][n[k] > 1 ? 2 : n[k]]++;
    }
  }
  for (int k = 0; k < 2; k++)
    cr_expect(declaring[k][0] && declaring[k][1], "%s: %d systems declare none, %d one, %d several",
              k ? "invariants" : "derived", declaring[k][0], declaring[k][1], declaring[k][2]);
  nh_method_free(rk4);
}

/* ---------------------------------------------------------------------------------------------- */
/* Trajectory studies                                                                             */

static void load(const char *path, const char *const *ov, int nov, nh_study *st) {
  char err[1024];
  cr_assert_eq(nh_study_load(path, ov, nov, st, err, sizeof err), 0, "%s", err);
}

/* The reference solution is followed when some observable needs it, the first one included, and
 * only then ("none"); with it, the error observables are 0 at t0 and move off 0 later. */
Test(trajectory, reference_only_when_an_observable_needs_it) {
  static const struct {
    const char *observables, *kind;
  } cases[] = {{"observables=[\"error_2\"]", "exact"},
               {"observables=[\"q\",\"energy\"]", "none"},
               {"observables=[\"q\",\"multiplier_error\"]", "exact"}};
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    nh_study st;
    nh_trajectory_result r;
    char err[1024];
    const char *ov[] = {cases[k].observables, "T=0.4"};
    load(DATA "trajectory_particle.cfg", ov, 2, &st);
    cr_assert_eq(nh_run_trajectory(&st, &r, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(r.reference_kind, cases[k].kind, "%s", cases[k].observables);
    if (k == 0) {
      const double e0 = r.samples.values[0], e1 = r.samples.values[r.samples.row];
      cr_expect(e0 == 0 && e1 > 0 && e1 < 1e-3, "error_2 of rk4 at t0 and one sample on: %g, %g", e0, e1);
    }
    nh_trajectory_result_free(&r);
    nh_study_free(&st);
  }
}

/* The samples of a trajectory equal an independent run of the same method (stepped here with
 * nh_integrate) and the exact solution of the particle; sample times are t0 + s K h. */
Test(trajectory, samples_match_independent_run) {
  nh_study st;
  nh_trajectory_result r;
  char err[1024];
  load(DATA "trajectory_particle.cfg", NULL, 0, &st);
  cr_assert_eq(st.kind, NH_STUDY_TRAJECTORY);
  cr_assert_eq(nh_run_trajectory(&st, &r, err, sizeof err), 0, "%s", err);
  cr_assert_str_eq(r.reference_kind, "exact");
  const int n = st.sys.n, nh = st.nh, nic = st.nic, K = st.sample_every, row = r.samples.row;
  cr_assert_eq(nh, 2);
  cr_expect_eq(r.nsamples_h[0], (int)lround(st.T / st.h[0]) / K + 1);
  cr_expect_eq(r.nsamples, r.nsamples_h[1], "the finer h has the most samples");
  cr_expect(isnan(r.t[r.nsamples_h[0]]) && isfinite(r.t[r.nsamples_h[0] - 1]),
            "coarser h padded with NaN from its first missing sample on");
  const int o_err = 1, o_q = 0; /* observables = ["q", "error_q_max", ...] */
  for (int mi = 0; mi < st.nmethods; mi++)
    for (int hi = 0; hi < nh; hi++)
      for (int ic = 0; ic < nic; ic++) {
        size_t run = ((size_t)mi * nh + hi) * nic + ic;
        cr_assert_eq(r.status[run], 0);
        nh_state x = st.ics[ic], ex;
        nh_cost cost = {0};
        nh_method_init(st.methods[mi], &st.sys, &x, st.h[hi], &cost);
        for (int s = 0; s < r.nsamples_h[hi]; s++) {
          double t = r.t[(size_t)hi * r.nsamples + s];
          cr_assert_eq(t, st.ics[ic].t + s * K * st.h[hi]);
          if (s) cr_assert_eq(nh_integrate(st.methods[mi], &st.sys, &x, K, st.h[hi], &cost, NULL), 0);
          const double *v = r.samples.values + (run * r.nsamples + s) * row;
          for (int i = 0; i < n; i++) cr_assert_eq(v[r.samples.offset[o_q] + i], x.q[i], "q sample %d", s);
          cr_assert_eq(nh_exact_solution(&st.sys, &st.ics[ic], t, &ex), 0);
          double e = 0;
          for (int i = 0; i < n; i++) e = fmax(e, fabs(x.q[i] - ex.q[i]));
          cr_assert_eq(v[r.samples.offset[o_err]], e, "error_q_max sample %d: %g vs %g", s, v[r.samples.offset[o_err]], e);
        }
        cr_expect_eq(memcmp(r.final_state + run * 2 * n, x.q, sizeof(double) * n), 0);
        cr_expect_eq(memcmp(r.final_state + run * 2 * n + n, x.v, sizeof(double) * n), 0);
        cr_expect_eq(memcmp(&r.cost[run], &cost, sizeof cost), 0, "run %zu: the counters of init and every step", run);
      }
  nh_trajectory_result_free(&r);
  nh_study_free(&st);
}

/* Same bits with 1 and 2 threads. */
Test(trajectory, thread_count_independent) {
  nh_study st;
  nh_trajectory_result a, b;
  char err[1024];
  load(DATA "trajectory_particle.cfg", NULL, 0, &st);
  omp_set_num_threads(1);
  cr_assert_eq(nh_run_trajectory(&st, &a, err, sizeof err), 0, "%s", err);
  omp_set_num_threads(2);
  cr_assert_eq(nh_run_trajectory(&st, &b, err, sizeof err), 0, "%s", err);
  size_t count = (size_t)st.nmethods * st.nh * st.nic * a.nsamples * a.samples.row;
  cr_expect_eq(memcmp(a.samples.values, b.samples.values, count * sizeof(double)), 0);
  nh_trajectory_result_free(&a), nh_trajectory_result_free(&b);
  nh_study_free(&st);
}

/* Bad input: an unknown observable names the file, the line and the valid names. */
Test(trajectory, unknown_observable_is_refused) {
  nh_study st;
  char err[2048];
  const char *ov[] = {"T=1"};
  cr_assert_eq(nh_study_load(DATA "bad_observable.cfg", ov, 1, &st, err, sizeof err), -1);
  cr_expect(strstr(err, "bad_observable.cfg:8:") != NULL, "file and line: %s", err);
  cr_expect(strstr(err, "'energies'") != NULL && strstr(err, "energy_error") != NULL, "value and valid names: %s", err);
  nh_study_free(&st);
}

/* An ensemble over fixed initial conditions samples its observables: energy_error equals dE. */
Test(ensemble, fixed_initial_conditions_and_observables) {
  nh_study st;
  nh_ensemble_result r;
  char err[1024];
  load(DATA "ensemble_fixed.cfg", NULL, 0, &st);
  cr_assert_eq(st.random_ics, 0);
  cr_assert_eq(st.count, 2);
  cr_assert_eq(nh_run_ensemble(&st, &r, err, sizeof err), 0, "%s", err);
  for (int ic = 0; ic < st.count; ic++)
    cr_expect_eq(memcmp(r.q0 + ic * st.sys.n, st.ics[ic].q, sizeof(double) * st.sys.n), 0);
  cr_expect_neq(r.q0[0], r.q0[st.sys.n], "two different presets");
  for (size_t run = 0; run < (size_t)st.nmethods * st.count; run++)
    for (int s = 0; s < st.nsamples; s++)
      cr_assert_eq(r.samples.values[(run * st.nsamples + s) * r.samples.row], r.dE[run * st.nsamples + s]);
  nh_ensemble_result_free(&r);
  nh_study_free(&st);
}

/* Convergence: a run whose step fails has NaN for every error coordinate and norm (never a
 * partial error), its status says why, and the other method's cells are unaffected. nh_newmark at
 * (β, β') = (½, 0) has an exactly singular Jacobian (spec/newmark.md §2.5). */
Test(convergence, failed_runs_have_nan_errors) {
  nh_study st;
  nh_convergence_result r;
  char err[1024];
  const char *ov[] = {"methods=[\"nh_newmark(beta=0.5,beta2=0,alpha=0.5,allow_ill_conditioned=1)\", \"rk4\"]"};
  load(DATA "convergence_norms.cfg", ov, 1, &st);
  cr_assert_eq(nh_run_convergence(&st, &r, err, sizeof err), 0, "%s", err);
  const int n = st.sys.n;
  for (int hi = 0; hi < st.nh; hi++) {
    const int bad = hi, good = st.nh + hi; /* cells [method][h] */
    cr_expect_eq(r.status[bad], NH_STEP_SOLVER_FAILED, "h[%d]: status %d", hi, r.status[bad]);
    cr_expect_eq(r.status[good], NH_STEP_OK);
    for (int i = 0; i < 2 * n; i++) {
      cr_expect(isnan(r.err_coord[(size_t)bad * 2 * n + i]), "failed run, error coordinate %d not NaN", i);
      cr_expect(isfinite(r.err_coord[(size_t)good * 2 * n + i]));
    }
    const double *norms[5] = {r.err, r.err_q, r.err_v, r.err_max, r.err_2};
    for (int k = 0; k < 5; k++) cr_expect(isnan(norms[k][bad]) && isfinite(norms[k][good]), "norm %d", k);
  }
  nh_convergence_result_free(&r);
  nh_study_free(&st);
}

/* Convergence: the extra error norms agree with the final state and the reference. */
Test(convergence, norms_final_state_and_coordinates) {
  nh_study st;
  nh_convergence_result r;
  char err[1024];
  const char *ov[] = {"norm=2"};
  load(DATA "convergence_norms.cfg", ov, 1, &st);
  cr_assert_eq(st.norm, NH_NORM_2);
  cr_assert_eq(nh_run_convergence(&st, &r, err, sizeof err), 0, "%s", err);
  const int n = st.sys.n;
  for (int cell = 0; cell < st.nmethods * st.nh; cell++) {
    const double *fin = r.final_state + (size_t)cell * 2 * n, *d = r.err_coord + (size_t)cell * 2 * n;
    double m = 0, s2 = 0, s2q = 0;
    for (int i = 0; i < 2 * n; i++) {
      double ref = i < n ? r.reference.x.q[i] : r.reference.x.v[i - n];
      cr_expect_eq(d[i], fin[i] - ref);
      m = fmax(m, fabs(d[i])), s2 += d[i] * d[i];
      if (i < n) s2q += d[i] * d[i];
    }
    cr_expect_eq(r.err_max[cell], m);
    cr_expect(fabs(r.err_2[cell] - sqrt(s2)) <= 1e-15 * sqrt(s2));
    cr_expect_eq(r.err[cell], r.err_2[cell], "the study norm is 2");
    cr_expect(fabs(r.err_q[cell] - sqrt(s2q)) <= 1e-15 * sqrt(s2q));
    cr_expect(r.err_2[cell] >= r.err_max[cell] && r.err_2[cell] <= sqrt(2.0 * n) * r.err_max[cell]);
  }
  /* rk4 defines neither a multiplier nor a discrete constraint. */
  cr_expect(isnan(r.lambda_err[0]) && isnan(r.discrete_residual[0]), "rk4 is method 0");
  nh_convergence_result_free(&r);
  nh_study_free(&st);
}

/* One-step points may start from random states on D: drawn like an ensemble's, from (seed, i). */
Test(onestep, random_start_states_like_an_ensemble) {
  nh_study st, ens;
  nh_onestep_result r;
  nh_ensemble_result e;
  char err[1024];
  load(DATA "onestep_random.cfg", NULL, 0, &st);
  cr_assert_eq(st.nic, 3);
  const char *ov[] = {"ensemble.count=3", "ensemble.seed=5", "ensemble.energy=1.535"};
  load(DATA "small_ensemble.cfg", ov, 3, &ens);
  cr_assert_eq(nh_run_ensemble(&ens, &e, err, sizeof err), 0, "%s", err);
  for (int i = 0; i < st.nic; i++) {
    cr_expect_eq(memcmp(st.ics[i].q, e.q0 + i * 5, sizeof(double) * 5), 0, "IC %d as the ensemble draws it", i);
    cr_expect(fabs(nh_energy(&st.sys, st.ics[i].q, st.ics[i].v) - 1.535) < 1e-13);
    char want[32];
    snprintf(want, sizeof want, "random %d", i);
    cr_expect_str_eq(st.ic_names[i], want);
  }
  cr_assert_eq(nh_run_onestep(&st, &r, err, sizeof err), 0, "%s", err);
  cr_expect_eq(r.npoints, 6);
  cr_expect_eq(memcmp(r.points + 2 * 10, st.ics[1].q, sizeof(double) * 5), 0, "point 2 is IC 1 at t0");
  nh_onestep_result_free(&r);
  nh_ensemble_result_free(&e);
  nh_study_free(&st), nh_study_free(&ens);
}

/* Registry-wide: for every observable, system and base method, after one real step, a defined
 * observable is finite with labelled components and an absent one is NaN with a reason; step
 * quantities are NaN at the first sample; reference quantities NaN without a reference. */
Test(observables, every_observable_system_and_method) {
  int checked = 0, absent = 0;
  for (int si = 0; nh_system_types[si]; si++) {
    nh_system sys = test_system_of(nh_system_types[si], NULL);
    nh_state x0;
    nh_system_default_state(&sys, &x0);
    for (int mi = 0; nh_integrator_types[mi]; mi++) {
      const nh_integrator_type *t = nh_integrator_types[mi];
      char err[512];
      nh_method *m = t->takes_base ? NULL : nh_method_parse(t->name, err, sizeof err);
      if (!m) continue;
      if (nh_method_applies(m, &sys, err, sizeof err)) {
        nh_method_free(m);
        continue;
      }
      nh_state x = x0, y, ref, refl;
      nh_cost cost = {0};
      const double h = 0.01;
      if (nh_method_init(m, &sys, &x, h, &cost) || nh_method_step(m, &sys, &x, &y, h, &cost)) {
        nh_method_free(m);
        continue;
      }
      y.t = x.t + h;
      cr_assert_eq(nh_true_solution(&sys, &x0, y.t, 1e-12, &ref, NULL), 0);
      cr_assert_eq(nh_true_solution(&sys, &x0, x.t + 0.5 * h, 1e-12, &refl, NULL), 0);
      nh_obs_ctx c = {&sys, m, h, nh_energy(&sys, x0.q, x0.v), &x, &y, &ref, &refl, &x0};
      nh_obs_ctx first = {&sys, m, h, c.E0, NULL, &x, NULL, NULL, NULL};
      for (int o = 0; nh_observables[o]; o++) {
        const nh_observable *ob = nh_observables[o];
        const int w = ob->width(&sys);
        double out[4 * NH_MAX_N];
        const char *why = ob->absent(m, &sys);
        nh_observable_sample(ob, &c, out);
        for (int i = 0; i < w; i++) {
          char label[128] = "";
          ob->label(&sys, i, label, sizeof label);
          cr_expect(strlen(label) > 0, "%s: component %d unlabelled", ob->name, i);
          if (why) cr_expect(isnan(out[i]), "%s on %s by %s: absent but %g", ob->name, sys.type->name, t->name, out[i]);
          else cr_expect(isfinite(out[i]), "%s on %s by %s: %g", ob->name, sys.type->name, t->name, out[i]);
        }
        if (why) {
          cr_expect(strlen(why) > 5, "%s: a reason", ob->name);
          absent++;
        } else {
          checked++;
        }
        nh_observable_sample(ob, &first, out);
        if (ob->needs & (NH_OBS_STEP | NH_OBS_REFERENCE | NH_OBS_LAMBDA_REFERENCE | NH_OBS_TWO_STEPS))
          for (int i = 0; i < w; i++) cr_expect(isnan(out[i]), "%s at the first sample without reference", ob->name);
      }
      nh_method_free(m);
    }
  }
  cr_expect(checked > 500 && absent > 100, "defined %d, absent %d", checked, absent);
}

/* Values by hand: the vertical disk's momentum map p_φ = I_h φ̇ (spec/rattle.md §4 D), the
 * multiplier time of a step for each declared time, and multiplier_error of nh_rattle against the
 * particle's exact λ = ẋẏ/(1 + y²) (spec/newmark.md §3.1). */
Test(observables, invariants_multiplier_time_and_error_by_hand) {
  nh_system disk = test_system("vertical_disk", NULL);
  nh_state x = {0};
  x.v[3] = 0.7;
  double out[4];
  nh_obs_ctx c = {&disk, NULL, 0.1, 0, NULL, &x, &x, NULL, NULL};
  nh_observable_sample(nh_observable_find("invariants"), &c, out);
  int ih = nh_param_index(disk.type->params, disk.type->nparams, "I_h");
  cr_assert(ih >= 0);
  cr_expect(fabs(out[0] - disk.p[ih] * 0.7) < 1e-15, "p_phi %g", out[0]);
  nh_observable_sample(nh_observable_find("invariants_error"), &c, out);
  cr_expect_eq(out[0], 0);

  nh_system sys = test_system("particle", NULL);
  const char *names[] = {"js_a", "js_b", "nh_rattle", "dla(alpha=0.5)"};
  for (int i = 0; i < 4; i++) {
    nh_method *m = test_method(names[i]);
    nh_state a = {0}, b = {0};
    a.t = 1, b.t = 1.25;
    b.q[1] = 2, b.v[0] = 3, b.v[1] = 0.5;
    b.lambda[0] = 3 * 0.5 / 5 + 0.125; /* λ(ref) + 1/8 */
    nh_obs_ctx s = {&sys, m, 0.25, 0, &a, &b, &b, &b, NULL};
    nh_observable_sample(nh_observable_find("multiplier_time"), &s, out);
    nh_lambda_time when = nh_method_lambda_time(m);
    double want = when == NH_LAMBDA_START ? 1 : when == NH_LAMBDA_MIDPOINT ? 1.125 : 1.25;
    cr_expect_eq(out[0], want, "%s: t* %g", names[i], out[0]);
    nh_observable_sample(nh_observable_find("multiplier_error"), &s, out);
    cr_expect(fabs(out[0] - 0.125) < 1e-15, "%s: λ − λ(t*) = %.17g", names[i], out[0]);
    nh_observable_sample(nh_observable_find("multiplier"), &s, out);
    cr_expect_eq(out[0], b.lambda[0]);
    nh_method_free(m);
  }
}

/* Along a trajectory, multiplier_error is taken at the time the method's multiplier approximates:
 * the step's midpoint for js_b (spec/discretization.md §6.5), its end for nh_rattle; checked
 * against the particle's exact λ = c w0 / (1 + y²)^{3/2} (spec/discretization.md §3.2). */
Test(trajectory, multiplier_error_at_the_declared_time) {
  nh_study st;
  nh_trajectory_result r;
  char err[1024];
  load(DATA "trajectory_multiplier.cfg", NULL, 0, &st);
  cr_assert_eq(nh_run_trajectory(&st, &r, err, sizeof err), 0, "%s", err);
  const nh_state *x0 = &st.ics[0];
  const double y0 = x0->q[1], u0 = x0->v[0], w0 = x0->v[1], c = u0 * sqrt(1 + y0 * y0);
  for (int mi = 0; mi < st.nmethods; mi++) {
    const double shift = mi == 0 ? 0.5 : 0; /* js_b: midpoint; nh_rattle: end */
    for (int s = 1; s < r.nsamples; s++) {
      const double h = st.h[0], t = r.t[s] - shift * h, y = y0 + w0 * t;
      const double exact = c * w0 / pow(1 + y * y, 1.5);
      const double *row = r.samples.values + ((size_t)mi * r.nsamples + s) * r.samples.row;
      const double lam = row[0] + exact; /* multiplier − λ(t*) + λ(t*) */
      const double *mrow = r.samples.values + ((size_t)mi * r.nsamples + s) * r.samples.row + r.samples.offset[1];
      cr_assert(fabs(lam - mrow[0]) < 1e-12, "%s sample %d: multiplier_error is taken at t* = t − %g h",
                st.method_names[mi], s, shift);
    }
  }
  nh_trajectory_result_free(&r);
  nh_study_free(&st);
}

/* A method run anyway at an ill-conditioned point carries a caveat into the results file and
 * `info`; a well-posed one does not (spec/newmark.md §2.5, issue 10). */
Test(results_caveats, forced_ill_conditioned_newmark_is_flagged) {
  nh_method *forced = test_method("nh_newmark(beta=0.25,beta2=0.25,alpha=0.5,allow_ill_conditioned=1)");
  nh_method *fine = test_method("nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)");
  nh_method *near = test_method("nh_newmark(beta=0.25,beta2=0.2,alpha=0.5)");
  cr_expect(nh_method_caveat(forced) && strstr(nh_method_caveat(forced), "ill-conditioned"));
  cr_expect_null(nh_method_caveat(fine));
  cr_expect_null(nh_method_caveat(near), "beta + beta2 = 0.45 is not the singular point");
  nh_method_free(forced), nh_method_free(fine), nh_method_free(near);
  char out[16384], args[512];
  snprintf(args, sizeof args, "run " DATA "caveat_forced.cfg -o /tmp/nhbench-caveat-%d.h5", (int)getpid());
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  snprintf(args, sizeof args, "info /tmp/nhbench-caveat-%d.h5", (int)getpid());
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  cr_expect(strstr(out, "CAVEAT       method 0 nh_newmark(beta=0.25,beta2=0.25") != NULL, "%s", out);
  cr_expect(strstr(out, "method 1 rk4") == NULL, "rk4 has no caveat: %s", out);
  snprintf(args, sizeof args, "/tmp/nhbench-caveat-%d.h5", (int)getpid());
  remove(args);
}

/* Provenance names the code that made a file: the version is taken at build time, so it equals
 * `git describe --always --dirty --tags` of the tree the tests were built from (issue 13). */
Test(provenance, version_is_the_built_tree) {
  char describe[128] = "", out[16384], args[512];
  FILE *p = popen("git -C " NHBENCH_SOURCE_DIR " describe --always --dirty --tags 2>/dev/null", "r");
  cr_assert(p != NULL);
  if (!fgets(describe, sizeof describe, p)) describe[0] = '\0';
  pclose(p);
  describe[strcspn(describe, "\n")] = '\0';
  if (!describe[0]) cr_skip_test("not a git checkout");
  snprintf(args, sizeof args, "run " DATA "trajectory_particle.cfg -o /tmp/nhbench-prov-%d.h5", (int)getpid());
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  snprintf(args, sizeof args, "info /tmp/nhbench-prov-%d.h5", (int)getpid());
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  char want[256];
  snprintf(want, sizeof want, "by nhbench %s (", describe);
  cr_expect(strstr(out, want) != NULL, "version %s not in:\n%.600s", describe, out);
  cr_expect(strstr(out, "flags:") != NULL, "compiler flags recorded:\n%.600s", out);
  snprintf(args, sizeof args, "--version");
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0);
  cr_expect(strstr(out, describe) != NULL, "--version says %s", out);
  snprintf(args, sizeof args, "/tmp/nhbench-prov-%d.h5", (int)getpid());
  remove(args);
}

/* Every observable's units and needs are the documented ones (README.md, "Observables";
 * `nhbench list observables`): what comes from the last step (absent at the first sample: t = t0
 * has no step) and what needs the exact or reference solution, or its multiplier. A quantity of
 * the sampled state alone, such as the contact Hamiltonian H(q, v, t, z), is there at t0 too. */
Test(observables, needs_and_units_are_the_documented_ones) {
  enum { S = NH_OBS_STEP, R = NH_OBS_REFERENCE, L = NH_OBS_LAMBDA_REFERENCE, W = NH_OBS_TWO_STEPS };
  static const struct {
    const char *name, *units;
    unsigned needs;
  } documented[] = {
      {"energy", "energy", 0},
      {"energy_error", "energy", 0},
      {"relative_energy_error", "1", 0},
      {"reference_energy", "energy", R},
      {"power", "energy/time", 0},
      {"reference_power", "energy/time", R},
      {"discrete_energy", "energy", S},
      {"discrete_energy_error", "energy", S | R},
      {"constraint_residual", "as A v", 0},
      {"discrete_constraint", "as A v", S},
      {"multiplier", "as lambda", S},
      {"multiplier_time", "time", S},
      {"multiplier_error", "as lambda", S | L},
      {"continuous_multiplier", "as lambda", 0},
      {"reference_multiplier", "as lambda", R},
      {"shifted_constraint_residual", "as A v", 0},
      {"error_v_half_step", "as v", R},
      {"central_difference_residual", "as A v", S | W},
      {"central_difference_energy", "energy", S | W},
      {"central_difference_velocity_error", "as v", S | W},
      {"impulse_energy", "energy", S},
      {"invariants_discrete", "as declared", S},
      {"holonomic_constraint", "as phi", 0},
      {"action", "action", 0},
      {"contact_hamiltonian", "energy", 0},
      {"invariants", "as declared", 0},
      {"invariants_error", "as declared", R},
      {"derived", "per component (labels)", 0},
      {"derived_reference", "per component (labels)", R},
      {"q", "as q", 0},
      {"v", "as v", 0},
      {"error", "as q, v", R},
      {"error_max", "as q, v", R},
      {"error_2", "as q, v", R},
      {"error_q_max", "as q", R},
      {"error_q_2", "as q", R},
      {"error_v_max", "as v", R},
      {"error_v_2", "as v", R},
  };
  const int ndoc = (int)(sizeof documented / sizeof documented[0]);
  int registered = 0;
  while (nh_observables[registered]) registered++;
  cr_expect_eq(registered, ndoc, "%d observables registered, %d documented", registered, ndoc);
  for (int i = 0; i < ndoc; i++) {
    const nh_observable *o = nh_observable_find(documented[i].name);
    cr_assert(o, "%s is not registered", documented[i].name);
    cr_expect_str_eq(o->units, documented[i].units, "%s: units", o->name);
    cr_expect_eq(o->needs, documented[i].needs, "%s: needs %u, documented %u", o->name, o->needs, documented[i].needs);
  }
}

/* continuous_multiplier: λ(q, v) of (77) at the sampled state, by hand on the free particle
 * (spec/newmark.md §3.1: λ = ẋẏ/(1 + y²), +μᵀλ with μ = (−y, 0, 1)) and on the knife edge IC-2
 * (spec/rattle.md §4 A: λ = m(sω + g sinα sinθ) = 0.5 + sin 0.3 in the spec's −μᵀλ sign, so
 * −0.795520 here), at t = 0 where no step has been taken; holonomic_constraint: φ(q) of the
 * pendulum, (|q|² − 1)/2, and absent on a nonholonomic system. */
Test(observables, continuous_multiplier_and_holonomic_constraint_by_hand) {
  nh_system sys = test_system("particle", NULL);
  nh_state x = {0};
  const double q[3] = {0.3, -1.7, 2}, v[3] = {1.25, 0.5, -2.125};
  memcpy(x.q, q, sizeof q), memcpy(x.v, v, sizeof v);
  nh_obs_ctx c = {&sys, NULL, 0.1, 0, NULL, &x, NULL, NULL, NULL};
  const double want = v[0] * v[1] / (1 + q[1] * q[1]);
  cr_expect(fabs(sample1("continuous_multiplier", &c) - want) <= 4.4e-16 * fabs(want), "%.17g vs %.17g",
            sample1("continuous_multiplier", &c), want);
  /* reference_multiplier: the same formula on the reference state, not the sampled one; NaN without one */
  nh_state ref = x;
  ref.q[1] = 0.4, ref.v[0] = -0.75;
  c.ref = &ref;
  const double want_ref = -0.75 * v[1] / (1 + 0.4 * 0.4);
  cr_expect(fabs(sample1("reference_multiplier", &c) - want_ref) <= 4.4e-16 * fabs(want_ref), "%.17g vs %.17g",
            sample1("reference_multiplier", &c), want_ref);
  c.ref = NULL;
  cr_expect(isnan(sample1("reference_multiplier", &c)), "no reference: NaN");
  nh_system knife = test_system("knife_edge", NULL);
  nh_state k0;
  nh_system_default_state(&knife, &k0); /* IC-2 */
  nh_obs_ctx ck = {&knife, NULL, 0.1, 0, NULL, &k0, NULL, NULL, NULL};
  cr_expect(fabs(sample1("continuous_multiplier", &ck) + (0.5 + sin(0.3))) <= 1e-15, "knife IC-2: %.17g",
            sample1("continuous_multiplier", &ck));
  const nh_observable *hc = obs("holonomic_constraint");
  cr_expect(hc->absent(NULL, &sys) != NULL, "the particle has no phi(q)");
  nh_system pend = test_system("pendulum", NULL);
  cr_expect(hc->absent(NULL, &pend) == NULL);
  nh_state p = {0};
  p.q[0] = 0.6, p.q[1] = -0.9;
  nh_obs_ctx cp = {&pend, NULL, 0.1, 0, NULL, &p, NULL, NULL, NULL};
  const double phi = (0.6 * 0.6 + 0.9 * 0.9 - 1) / 2; /* 0.085 */
  cr_expect(fabs(sample1("holonomic_constraint", &cp) - phi) <= 1e-16, "%.17g vs %.17g", sample1("holonomic_constraint", &cp), phi);
}

/* shifted_constraint_residual: μ(q ± (h/2)v)·v on the particle (μ = (−y, 0, 1)): ż − (y ± (h/2)ẏ)ẋ,
 * the + half first; error_v_half_step: |v − v(t + h/2)| with the particle's exact solution written
 * out here (spec/discretization.md §3.2: y = y0 + w0 t, u = c/√(1 + y²), ζ = y u, c = u0 √(1 + y0²)). */
Test(observables, shifted_constraint_and_half_step_velocity_error_by_hand) {
  nh_system sys = test_system("particle", NULL);
  nh_state x = {0};
  const double q[3] = {0.3, -1.7, 2}, v[3] = {1.25, 0.5, -2.125};
  memcpy(x.q, q, sizeof q), memcpy(x.v, v, sizeof v);
  const double h = 0.1;
  nh_obs_ctx c = {&sys, NULL, h, 0, NULL, &x, NULL, NULL, NULL};
  double out[2];
  nh_observable_sample(obs("shifted_constraint_residual"), &c, out);
  const double plus = v[2] - (q[1] + 0.5 * h * v[1]) * v[0], minus = v[2] - (q[1] - 0.5 * h * v[1]) * v[0];
  cr_expect(fabs(out[0] - plus) <= 4.4e-16 * 4 && fabs(out[1] - minus) <= 4.4e-16 * 4, "%.17g %.17g vs %.17g %.17g",
            out[0], out[1], plus, minus);
  cr_expect(out[0] != out[1], "the two halves differ");
  /* the true state at t = 0.4 (on D), the sampled state its velocity moved by (0.01, -0.02, 0.03) */
  nh_state ref = {0}, cur;
  const double y0 = 0.3, w0 = 0.8, u0 = 1.0, cc = u0 * sqrt(1 + y0 * y0);
  ref.t = 0.4;
  ref.q[1] = y0 + w0 * ref.t;
  ref.v[0] = cc / sqrt(1 + ref.q[1] * ref.q[1]), ref.v[1] = w0, ref.v[2] = ref.q[1] * ref.v[0];
  ref.q[0] = 0.1, ref.q[2] = -0.2;
  cur = ref;
  cur.v[0] += 0.01, cur.v[1] -= 0.02, cur.v[2] += 0.03;
  nh_obs_ctx ce = {&sys, NULL, h, 0, NULL, &cur, &ref, NULL, NULL};
  const double ym = y0 + w0 * (ref.t + 0.5 * h), um = cc / sqrt(1 + ym * ym);
  const double d0 = cur.v[0] - um, d1 = cur.v[1] - w0, d2 = cur.v[2] - ym * um;
  const double want = fmax(fabs(d0), fmax(fabs(d1), fabs(d2)));
  cr_expect(fabs(sample1("error_v_half_step", &ce) - want) <= 1e-15, "%.17g vs %.17g", sample1("error_v_half_step", &ce),
            want);
  cr_expect(fabs(want - 0.03) > 1e-3, "not the error at t itself (0.03)");
}

/* discrete_energy_error: the method's discrete energy minus E of the true solution half a step
 * before the sample. On the damped oscillator (exact solution, E not constant) herglotz2's midpoint
 * energy of one step from t = 1 against E(t + h/2) written out from the exact solution: a time of
 * t or t + h, or the energy at the end of the step, would differ by O(αh)·E. */
Test(observables, discrete_energy_error_at_the_middle_of_the_step) {
  nh_system sys = test_system("damped_oscillator", "alpha=0.5,beta=0");
  nh_method *m = test_method("herglotz2");
  nh_state x0, x, y, ref;
  nh_system_default_state(&sys, &x0);
  cr_assert_eq(nh_true_solution(&sys, &x0, 1.0, 1e-13, &x, NULL), 0); /* the true state at t = 1 */
  const double h = 0.1;
  nh_cost cost = {0};
  cr_assert_eq(nh_method_init(m, &sys, &x, h, &cost), NH_STEP_OK);
  cr_assert_eq(nh_method_step(m, &sys, &x, &y, h, &cost), NH_STEP_OK);
  cr_assert_eq(nh_true_solution(&sys, &x0, y.t, 1e-13, &ref, NULL), 0);
  nh_obs_ctx c = {&sys, m, h, 0, &x, &y, &ref, NULL, NULL};
  nh_state mid, end;
  cr_assert_eq(nh_true_solution(&sys, &x0, x.t + 0.5 * h, 1e-13, &mid, NULL), 0);
  cr_assert_eq(nh_true_solution(&sys, &x0, y.t, 1e-13, &end, NULL), 0);
  const double Ed = sample1("discrete_energy", &c);
  const double want = Ed - (0.5 * mid.v[0] * mid.v[0] + 0.5 * mid.q[0] * mid.q[0]); /* omega = 1, M = 1 */
  const double got = sample1("discrete_energy_error", &c);
  cr_expect(fabs(got - want) <= 1e-14, "%.17g vs %.17g", got, want);
  const double at_end = Ed - (0.5 * end.v[0] * end.v[0] + 0.5 * end.q[0] * end.q[0]);
  cr_expect(fabs(at_end - want) > 10 * fabs(want), "the end of the step is far off: %g vs %g", at_end, want);
  nh_obs_ctx first = {&sys, m, h, 0, NULL, &x, &ref, NULL, NULL};
  cr_expect(isnan(sample1("discrete_energy_error", &first)), "no step: NaN");
  nh_method_free(m);
}

/* The central-difference observables at the node one step before the sample: hand values from
 * three states of the particle (μ = (−y, 0, 1), M = I, V = 0), NaN without the state two steps back. */
Test(observables, central_differences_by_hand) {
  nh_system sys = test_system("particle", NULL);
  nh_state a = {0}, b = {0}, c = {0};
  const double qa[3] = {0.1, 0.2, 0.3}, qb[3] = {0.25, 0.3, 0.35}, qc[3] = {0.45, 0.41, 0.43}, vb[3] = {1.4, 1.1, 0.3};
  memcpy(a.q, qa, sizeof qa), memcpy(b.q, qb, sizeof qb), memcpy(c.q, qc, sizeof qc), memcpy(b.v, vb, sizeof vb);
  const double h = 0.1;
  nh_obs_ctx ctx = {&sys, NULL, h, 0, &b, &c, NULL, NULL, &a};
  double w[3];
  for (int i = 0; i < 3; i++) w[i] = (qc[i] - qa[i]) / (2 * h);
  double out[3];
  nh_observable_sample(obs("central_difference_residual"), &ctx, out);
  cr_expect(fabs(out[0] - (w[2] - qb[1] * w[0])) <= 1e-15, "mu(q_b).w at the middle node: %.17g", out[0]);
  cr_expect_eq(sample1("central_difference_energy", &ctx), 0.5 * (w[0] * w[0] + w[1] * w[1] + w[2] * w[2]));
  nh_observable_sample(obs("central_difference_velocity_error"), &ctx, out);
  for (int i = 0; i < 3; i++) cr_expect_eq(out[i], w[i] - vb[i], "component %d", i);
  nh_obs_ctx one_step = {&sys, NULL, h, 0, &b, &c, NULL, NULL, NULL};
  cr_expect(isnan(sample1("central_difference_energy", &one_step)), "one step only: NaN");
}

/* Along a trajectory (sample_every 1 and 2) the runner hands the observables the state two steps
 * back: nh_rattle's velocity is the central difference of its positions, p_k = (q_k+1 − q_k−1)/(2h)
 * (spec/rattle.md §3.5, identity 4), to round-off from the second step on; NaN at the first sample
 * and, with one step a sample, at the second. */
Test(trajectory, central_differences_from_the_runner) {
  for (int every = 1; every <= 2; every++) {
    nh_study st;
    nh_trajectory_result r;
    char err[1024], set[64];
    snprintf(set, sizeof set, "sample_every=%d", every);
    const char *ov[] = {"observables=[\"central_difference_velocity_error\"]", "methods=[\"nh_rattle\"]", set};
    load(DATA "trajectory_particle.cfg", ov, 3, &st);
    cr_assert_eq(nh_run_trajectory(&st, &r, err, sizeof err), 0, "%s", err);
    const int row = r.samples.row, n = st.sys.n;
    for (int s = 0; s < r.nsamples_h[0]; s++) {
      const double *v = r.samples.values + (size_t)s * row;
      const int defined = s * every >= 2;
      for (int i = 0; i < n; i++) {
        if (!defined) cr_expect(isnan(v[i]), "every %d, sample %d: NaN before two steps", every, s);
        else cr_expect(fabs(v[i]) <= 1e-14, "every %d, sample %d, component %d: %g", every, s, i, v[i]);
      }
    }
    nh_trajectory_result_free(&r);
    nh_study_free(&st);
  }
}

/* impulse_energy = (h²/8) λᵀ A M⁻¹Aᵀ λ by hand on the vertical disk (k = 2, M = diag(m, m, I_r, I_h),
 * A = [[1, 0, −R cos φ, 0], [0, 1, −R sin φ, 0]]); and nh_rattle's identity E_d = H + (h²/8)λᵀCλ
 * (spec/rattle.md §2.9) after steps on the Chaplygin sleigh (V = 0), to the round-off of E ~ 1.1. */
Test(observables, impulse_energy_by_hand_and_the_rattle_identity) {
  nh_system sys = test_system("vertical_disk", "m=2,I_r=0.5,I_h=0.25,R=0.7");
  nh_state x = {0};
  x.q[3] = 0.4, x.lambda[0] = 1.5, x.lambda[1] = -0.75;
  const double h = 0.1, m = 2, R = 0.7, I_r = 0.5, c = cos(0.4), s = sin(0.4);
  nh_obs_ctx ctx = {&sys, NULL, h, 0, &x, &x, NULL, NULL, NULL};
  /* C = A M⁻¹ Aᵀ: C11 = 1/m + R² c²/I_r, C12 = R² c s/I_r, C22 = 1/m + R² s²/I_r */
  const double C11 = 1 / m + R * R * c * c / I_r, C12 = R * R * c * s / I_r, C22 = 1 / m + R * R * s * s / I_r;
  const double l1 = 1.5, l2 = -0.75, want = h * h / 8 * (C11 * l1 * l1 + 2 * C12 * l1 * l2 + C22 * l2 * l2);
  cr_expect(fabs(sample1("impulse_energy", &ctx) - want) <= 1e-16 * want * 10, "%.17g vs %.17g",
            sample1("impulse_energy", &ctx), want);
  nh_system sleigh = test_system("chaplygin_sleigh", NULL);
  nh_method *m1 = test_method("nh_rattle(lambda0=0)");
  nh_state a, b;
  nh_system_default_state(&sleigh, &a);
  nh_cost cost = {0};
  cr_assert_eq(nh_method_init(m1, &sleigh, &a, 0.05, &cost), NH_STEP_OK);
  for (int k = 0; k < 40; k++) {
    cr_assert_eq(nh_method_step(m1, &sleigh, &a, &b, 0.05, &cost), NH_STEP_OK);
    nh_obs_ctx cs = {&sleigh, m1, 0.05, 0, &a, &b, NULL, NULL, NULL};
    const double Ed = sample1("discrete_energy", &cs), H = sample1("energy", &cs), I = sample1("impulse_energy", &cs);
    cr_expect(fabs(Ed - H - I) <= 8 * 2.2e-16 * Ed, "step %d: E_d - H - impulse = %.3e (impulse %.3e)", k, Ed - H - I, I);
    if (k == 39) cr_expect(I > 1e-6, "the impulse energy is not negligible: %g", I);
    a = b;
  }
  nh_method_free(m1);
}

/* invariants_discrete: the two-point momentum map J_d of spec/rattle.md §4 E after nh_rattle steps on
 * the rotational system, (x_k−1 y_k − x_k y_k−1)/h (V = omega2 (x² + y²)/2 is rotation-invariant, so
 * its term drops), against the formula written out here. */
Test(observables, invariants_discrete_is_the_two_point_momentum_map) {
  nh_system sys = test_system("rotational_symmetry", NULL);
  nh_method *m = test_method("nh_rattle");
  nh_state a, b;
  nh_system_default_state(&sys, &a);
  nh_cost cost = {0};
  const double h = 0.05;
  cr_assert_eq(nh_method_init(m, &sys, &a, h, &cost), NH_STEP_OK);
  for (int k = 0; k < 10; k++) {
    cr_assert_eq(nh_method_step(m, &sys, &a, &b, h, &cost), NH_STEP_OK);
    nh_obs_ctx c = {&sys, m, h, 0, &a, &b, NULL, NULL, NULL};
    const double want = (a.q[0] * b.q[1] - b.q[0] * a.q[1]) / h;
    cr_expect(fabs(sample1("invariants_discrete", &c) - want) <= 1e-14, "step %d: %.17g vs %.17g", k,
              sample1("invariants_discrete", &c), want);
    a = b;
  }
  nh_method_free(m);
}

/* round_trip (spec/rattle.md §3.3): back from each end state in as many steps of −h, compared with
 * the start after init. nh_rattle's (q, p, λ) come back to round-off (the same computation done
 * here, bit for bit); rk4 is not symmetric and misses by its global error; nh_newmark's λ is an
 * output, so its λ part is NaN; a two-step method has no round trip (NaN); without round_trip the
 * result holds none; a round_trip that is not true/false is refused at its line. */
Test(trajectory, round_trip_back_to_the_start) {
  char path[256], err[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-roundtrip-%d.cfg", (int)getpid());
  test_write_file(path, "study = \"trajectory\";\nsystem = \"rotational_symmetry\";\ninitial = \"rattle\";\nT = 10.0;\n"
                        "h = [0.1];\nsample_every = 10;\nround_trip = true;\nobservables = [\"energy_error\"];\n"
                        "methods = [\"nh_rattle\", \"rk4\", \"nh_newmark(alpha=0.5)\", \"nh_shake\"];\n");
  nh_study st;
  nh_trajectory_result r;
  load(path, NULL, 0, &st);
  cr_assert_eq(nh_run_trajectory(&st, &r, err, sizeof err), 0, "%s", err);
  cr_assert(r.round_trip_defect && r.round_trip_defect_lambda);
  nh_state x = st.ics[0], start, end;
  nh_cost cost = {0};
  cr_assert_eq(nh_method_init(st.methods[0], &st.sys, &x, 0.1, &cost), NH_STEP_OK);
  start = x;
  cr_assert_eq(nh_integrate(st.methods[0], &st.sys, &x, 100, 0.1, &cost, NULL), NH_STEP_OK);
  end = x;
  cr_assert_eq(nh_integrate(st.methods[0], &st.sys, &end, 100, -0.1, &cost, NULL), NH_STEP_OK);
  double d = 0, dl = 0;
  for (int i = 0; i < st.sys.n; i++) d = fmax(d, fmax(fabs(end.q[i] - start.q[i]), fabs(end.v[i] - start.v[i])));
  for (int a = 0; a < st.sys.k; a++) dl = fmax(dl, fabs(end.lambda[a] - start.lambda[a]));
  cr_expect_eq(r.round_trip_defect[0], d, "nh_rattle: %.17g, by hand %.17g", r.round_trip_defect[0], d);
  cr_expect_eq(r.round_trip_defect_lambda[0], dl, "nh_rattle lambda: %.17g, by hand %.17g", r.round_trip_defect_lambda[0],
               dl);
  cr_expect(d <= 1e-13 && dl <= 1e-13, "nh_rattle comes back to round-off: %.3e, lambda %.3e", d, dl);
  cr_expect(r.round_trip_defect[1] > 1e-6 && isnan(r.round_trip_defect_lambda[1]), "rk4: %.3e", r.round_trip_defect[1]);
  cr_expect(r.round_trip_defect[2] <= 1e-12 && isnan(r.round_trip_defect_lambda[2]), "nh_newmark: %.3e, lambda %g",
            r.round_trip_defect[2], r.round_trip_defect_lambda[2]);
  cr_expect(isnan(r.round_trip_defect[3]) && isnan(r.round_trip_defect_lambda[3]), "nh_shake: two-step, no round trip");
  nh_trajectory_result_free(&r);
  nh_study_free(&st);
  const char *off[] = {"round_trip=false"};
  load(path, off, 1, &st);
  cr_assert_eq(nh_run_trajectory(&st, &r, err, sizeof err), 0, "%s", err);
  cr_expect(r.round_trip_defect == NULL && r.round_trip_defect_lambda == NULL, "no round trip asked for");
  nh_trajectory_result_free(&r);
  nh_study_free(&st);
  const char *bad[] = {"round_trip=1"};
  cr_expect_neq(nh_study_load(path, bad, 1, &st, err, sizeof err), 0);
  cr_expect(strstr(err, "--set round_trip: round_trip must be true or false") != NULL, "%s", err);
  nh_study_free(&st); /* what the failed load allocated (study.h) */
  test_write_file(path, "study = \"trajectory\";\nsystem = \"rotational_symmetry\";\nT = 1.0;\nh = [0.1];\n"
                        "observables = [\"energy\"];\nmethods = [\"rk4\"];\nround_trip = 1;\n");
  cr_expect_neq(nh_study_load(path, NULL, 0, &st, err, sizeof err), 0);
  cr_expect(strstr(err, ":7: round_trip must be true or false") != NULL, "%s", err);
  nh_study_free(&st);
  remove(path);
}

/* The plots' log scale (README "Plots", results/README.md): the sizes a good method keeps small,
 * every error (a name with "error" in it) and the constraint residuals constraint_residual and
 * discrete_constraint, and nothing else. */
Test(observables, log_scale_for_errors_and_residuals) {
  int logs = 0;
  for (int i = 0; nh_observables[i]; i++) {
    const char *name = nh_observables[i]->name;
    const int documented = strstr(name, "error") != NULL || strcmp(name, "constraint_residual") == 0 ||
                           strcmp(name, "discrete_constraint") == 0;
    cr_expect_eq(nh_observables[i]->log_scale, documented, "%s", name);
    logs += nh_observables[i]->log_scale;
  }
  cr_expect_eq(logs, 16, "14 errors and 2 residuals");
}
