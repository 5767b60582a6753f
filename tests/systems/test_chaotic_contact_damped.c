/* The test problems of issue 17: McLachlan–Perlmutter's contact oscillator (systems/
 * contact_oscillator.c), the chaotic nonholonomic particle in R^{2m+1} (systems/chaotic_particle_n.c)
 * and the damped, forced oscillator of the contact-integrator papers (systems/damped_oscillator.c).
 * The registry-driven checks (tests/contracts/test_registry.c, tests/systems/test_systems.c,
 * tests/contracts/test_order_matrix.c) cover their derivatives, kernels and orders; here each is
 * compared with something independent of its code: odelab's formulas, the existing R⁵ system,
 * closed forms from the sources, GSL's rk8pd. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "studies/study.h"
#include "tests/checks.h"

static double max_diff(int n, const double *a, const double *b) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
  return d;
}

static double state_diff(int n, const nh_state *a, const nh_state *b) {
  return fmax(max_diff(n, a->q, b->q), max_diff(n, a->v, b->v));
}

static nh_state reference(const nh_system *sys, const nh_state *x0, double T) {
  nh_state x;
  cr_assert(nh_reference_solve(sys, x0, x0->t + T, 1e-13, &x) == 0, "%s: rk8pd failed", sys->type->name);
  return x;
}

/* ---- the chaotic particle in R^{2m+1} ----------------------------------------------------------- */

/* Everything the R⁵ system computes, at (q, v), into out (a fixed layout); returns the count. */
static int chaotic_values(const nh_system *s, const double *q, const double *v, double *out) {
  const nh_system_type *T = s->type;
  const int n = s->n;
  int c = 0;
  out[c++] = T->potential(s->p, q);
  T->grad_potential(s->p, q, out + c), c += n;
  T->hess_potential(s->p, q, out + c), c += n * n;
  T->constraints(s->p, q, out + c), c += n;
  T->constraints_jacobian(s->p, q, out + c), c += n * n;
  test_kernels(T)->constraint_curvature(s->p, q, v, out + c), c += 1;
  test_kernels(T)->constraint_derivative(s->p, q, v, out + c), c += n;
  test_kernels(T)->acceleration(s->p, 0, q, v, out + c, out + c + n), c += n + 1;
  return c;
}

/* m = 2 of the family is systems/chaotic_particle.c bit for bit: V, ∇V, the Hessian, A, dA, the
 * kernels and the fused acceleration at random points (the same floating-point operations in the
 * same order), and hence 50 steps of rk4 and nh_newmark(0.1, 0.1, ½). Control: V summed in another
 * order, the same number in exact arithmetic, differs in the last bits at some of the points, so
 * bitwise equality is a claim about the order of the operations. */
Test(chaotic_contact_damped, chaotic_m2_is_the_R5_system_bit_for_bit) {
  nh_system a = test_system("chaotic_particle", NULL), b = test_system("chaotic_particle_5", NULL);
  gsl_rng *r = test_rng(31);
  double va[2 * NH_MAX_N * NH_MAX_N + 4 * NH_MAX_N + 3], vb[sizeof va / sizeof *va]; /* chaotic_values' layout */
  int reordered_differs = 0;
  for (int trial = 0; trial < 200; trial++) {
    double q[5], v[5];
    for (int i = 0; i < 5; i++) q[i] = gsl_ran_flat(r, -2, 2), v[i] = gsl_ran_flat(r, -2, 2);
    const int c = chaotic_values(&a, q, v, va);
    cr_assert_eq(chaotic_values(&b, q, v, vb), c);
    for (int i = 0; i < c; i++)
      cr_assert(memcmp(va + i, vb + i, sizeof *va) == 0,
                "trial %d, value %d: chaotic_particle %.17g, chaotic_particle_5 %.17g", trial, i, va[i], vb[i]);
    double s = q[4] * q[4] * q[2] * q[2] + q[3] * q[3] * q[1] * q[1] + q[3] * q[3] * q[4] * q[4];
    for (int i = 4; i >= 0; i--) s += q[i] * q[i];
    reordered_differs += 0.5 * s != va[0];
  }
  cr_expect_gt(reordered_differs, 0, "control: V summed backwards always equals V");
  gsl_rng_free(r);
  const char *methods[] = {"rk4", "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)"};
  for (int mi = 0; mi < 2; mi++) {
    nh_state x0;
    nh_system_default_state(&a, &x0);
    nh_state ya = test_run_steps(methods[mi], &a, x0, 0.1, 50), yb = test_run_steps(methods[mi], &b, x0, 0.1, 50);
    cr_expect(memcmp(ya.q, yb.q, sizeof ya.q) == 0 && memcmp(ya.v, yb.v, sizeof ya.v) == 0,
              "%s: the two R5 systems part after 50 steps", methods[mi]);
  }
}

/* V of odelab's ChaoticOscillator(m), written out for m = 1 and 3 (header of chaotic_particle_n.c),
 * and μ = (1, 0.., y_1..y_m), at random points. */
Test(chaotic_contact_damped, chaotic_m1_m3_match_their_formulas) {
  gsl_rng *r = test_rng(37);
  nh_system s3 = test_system("chaotic_particle_3", NULL), s7 = test_system("chaotic_particle_7", NULL);
  for (int trial = 0; trial < 50; trial++) {
    double q[7], A[7];
    for (int i = 0; i < 7; i++) q[i] = gsl_ran_flat(r, -2, 2);
    const double x = q[0], y = q[1], z = q[2];
    const double V3 = 0.5 * (x * x + y * y + z * z + y * y * z * z);
    cr_expect(fabs(s3.type->potential(s3.p, q) - V3) <= 1e-14 * V3, "m = 1: V");
    s3.type->constraints(s3.p, q, A);
    cr_expect(A[0] == 1 && A[1] == 0 && A[2] == y, "m = 1: mu = (1, 0, y)");
    const double *Y = q + 1, *Z = q + 4;
    double V7 = Z[0] * Z[0] * Z[1] * Z[1];
    for (int i = 0; i < 7; i++) V7 += q[i] * q[i];
    for (int i = 0; i < 3; i++) V7 += Y[i] * Y[i] * Z[i] * Z[i];
    V7 *= 0.5;
    cr_expect(fabs(s7.type->potential(s7.p, q) - V7) <= 1e-14 * V7, "m = 3: V");
    s7.type->constraints(s7.p, q, A);
    cr_expect(A[0] == 1 && A[1] == 0 && A[2] == 0 && A[3] == 0 && A[4] == Y[0] && A[5] == Y[1] && A[6] == Y[2],
              "m = 3: mu = (1, 0, 0, 0, y1, y2, y3)");
  }
  gsl_rng_free(r);
}

/* (x, y, z) ↦ (x, y, 0, z, 0): the m-particle inside the (m + 1)-particle at y_{m+1} = z_{m+1} = 0. */
static void embed(int m, const double *a, double *b) {
  b[0] = a[0];
  for (int i = 0; i < m; i++) b[1 + i] = a[1 + i], b[2 + m + i] = a[1 + m + i];
  b[1 + m] = b[2 + 2 * m] = 0;
}

/* Each member is an invariant subsystem of the next: from embedded states (random on D for m = 1,
 * 2, and Fig. 2 for m = 2 in m = 3), the reference solutions agree on the old coordinates (measured:
 * bit for bit, the extra terms being exact zeros) and the new pair stays exactly 0. Control: a new
 * pair started off 0 (ẏ = 0.1) moves the old coordinates by far more. */
static void check_embedding(const char *small, const char *big, const nh_state *xs, int expect_equal) {
  nh_system a = test_system(small, NULL), b = test_system(big, NULL);
  const int m = (a.n - 1) / 2;
  nh_state xb = {.t = xs->t};
  embed(m, xs->q, xb.q), embed(m, xs->v, xb.v);
  if (!expect_equal) xb.v[1 + m] = 0.1;
  nh_state ya = reference(&a, xs, 5), yb = reference(&b, &xb, 5), yab;
  memset(&yab, 0, sizeof yab);
  embed(m, ya.q, yab.q), embed(m, ya.v, yab.v);
  const double d = state_diff(b.n, &yab, &yb);
  if (expect_equal) {
    cr_expect(d <= 1e-12, "%s inside %s: differs by %.3e at T = 5", small, big, d);
    cr_expect(yb.q[1 + m] == 0 && yb.q[2 + 2 * m] == 0 && yb.v[1 + m] == 0 && yb.v[2 + 2 * m] == 0,
              "%s inside %s: the new pair left 0", small, big);
  } else {
    cr_expect(d > 1e-4, "control: %s inside %s with the new pair moving differs by only %.3e", small, big, d);
  }
}

Test(chaotic_contact_damped, chaotic_members_embed_in_the_next) {
  gsl_rng *r = test_rng(41);
  const char *names[] = {"chaotic_particle_3", "chaotic_particle_5", "chaotic_particle_7"};
  for (int k = 0; k < 2; k++) {
    nh_system a = test_system(names[k], NULL);
    for (int trial = 0; trial < 3; trial++) {
      nh_state x;
      cr_assert(nh_sample_on_D(&a, 2.0, r, &x) == 0);
      check_embedding(names[k], names[k + 1], &x, 1);
      check_embedding(names[k], names[k + 1], &x, 0);
    }
  }
  gsl_rng_free(r);
  /* Fig. 2 inside R⁷ is the preset fig2_embedded, and moves as chaotic_particle. */
  nh_system s5 = test_system("chaotic_particle", NULL), s7 = test_system("chaotic_particle_7", NULL);
  nh_state x5, x7 = test_preset(&s7, "fig2_embedded"), e7;
  nh_system_default_state(&s5, &x5);
  memset(&e7, 0, sizeof e7);
  embed(2, x5.q, e7.q), embed(2, x5.v, e7.v);
  cr_assert(state_diff(7, &e7, &x7) == 0, "fig2_embedded is not Fig. 2 embedded");
  check_embedding("chaotic_particle", "chaotic_particle_7", &x5, 1);
}

/* Presets: on D (the registry checks that), at the documented energies. */
Test(chaotic_contact_damped, chaotic_presets_energies) {
  struct {
    const char *system, *preset;
    double E;
  } cases[] = {{"chaotic_particle_3", "fig2_block", 2.1275},
               {"chaotic_particle_5", "fig2", 3.2575},
               {"chaotic_particle_7", "odelab", 3.06},
               {"chaotic_particle_7", "fig2_embedded", 3.2575}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    nh_system s = test_system(cases[i].system, NULL);
    nh_state x = test_preset(&s, cases[i].preset);
    cr_expect(fabs(nh_energy(&s, x.q, x.v) - cases[i].E) <= 1e-14, "%s/%s: E0 = %.17g, documented %g",
              cases[i].system, cases[i].preset, nh_energy(&s, x.q, x.v), cases[i].E);
  }
}

/* Energy, the only first integral, along the reference from each default state, T = 20. */
Test(chaotic_contact_damped, chaotic_energy_along_reference) {
  const char *names[] = {"chaotic_particle_3", "chaotic_particle_7"};
  for (int k = 0; k < 2; k++) {
    nh_system s = test_system(names[k], NULL);
    nh_state x0;
    nh_system_default_state(&s, &x0);
    nh_state x = reference(&s, &x0, 20);
    const double E0 = nh_energy(&s, x0.q, x0.v), dE = fabs(nh_energy(&s, x.q, x.v) - E0);
    cr_expect(dE <= 1e-11, "%s: |E(20) - E0| = %.3e", names[k], dE); /* measured 1.7e-13 */
    cr_expect(nh_constraint_residual(&s, x.q, x.v) <= 1e-10, "%s: the reference leaves D", names[k]);
  }
}

/* ---- the contact oscillator --------------------------------------------------------------------- */

/* odelab's λ of ContactOscillator.initial_cos, for any state on D:
 * λ = (x + yz − ẏż + ε(xz² + x²yz))/(1 + y²); and a = −∇V + μλ. */
Test(chaotic_contact_damped, contact_oscillator_multiplier_is_odelabs) {
  gsl_rng *r = test_rng(43);
  const double eps[] = {0, 0.3, 1.7};
  for (int e = 0; e < 3; e++) {
    char params[32];
    snprintf(params, sizeof params, "eps=%g", eps[e]);
    nh_system s = test_system("contact_oscillator", params);
    for (int trial = 0; trial < 10; trial++) {
      double q[3], v[3], lam, acc[3];
      for (int i = 0; i < 3; i++) q[i] = gsl_ran_flat(r, -2, 2), v[i] = gsl_ran_flat(r, -2, 2);
      v[0] = -q[1] * v[2]; /* on D */
      const double x = q[0], y = q[1], z = q[2], ep = eps[e];
      const double ls = (x + y * z - v[1] * v[2] + ep * (x * z * z + x * x * y * z)) / (1 + y * y);
      cr_assert(nh_multiplier(&s, 0, q, v, &lam) == 0 && nh_acceleration(&s, 0, q, v, acc) == 0);
      cr_expect(fabs(lam - ls) <= 1e-13 * (1 + fabs(ls)), "eps = %g: lambda %.17g, odelab %.17g", ep, lam, ls);
      const double as[3] = {-x - ep * x * z * z + ls, -y, -z - ep * x * x * z + y * ls};
      cr_expect(max_diff(3, acc, as) <= 1e-13 * (1 + test_max_abs(3, as)), "eps = %g: acceleration", ep);
    }
  }
  gsl_rng_free(r);
}

/* E_y and odelab's "radius" = E − E_y on D, at random states on D. */
Test(chaotic_contact_damped, contact_oscillator_invariants_split_the_energy) {
  gsl_rng *r = test_rng(47);
  nh_system s = test_system("contact_oscillator", "eps=0.3");
  for (int trial = 0; trial < 20; trial++) {
    nh_state x;
    cr_assert(nh_sample_on_D(&s, 2.0, r, &x) == 0);
    double I[2];
    nh_invariants(&s, x.q, x.v, I);
    cr_expect(fabs(I[0] - 0.5 * (x.q[1] * x.q[1] + x.v[1] * x.v[1])) <= 1e-15, "y_energy");
    cr_expect(fabs(I[0] + I[1] - 2.0) <= 1e-14, "E_y + (E - E_y) = %.17g, E = 2", I[0] + I[1]);
  }
  gsl_rng_free(r);
}

/* Presets: E0 = 1.5, E_y = 0.5 (H0, Hy of odelab's initial_cos/sin), and the ε they set. */
Test(chaotic_contact_damped, contact_oscillator_presets) {
  const char *presets[] = {"cos_eps0", "cos_eps03", "sin_eps0", "sin_eps03"};
  const double eps[] = {0, 0.3, 0, 0.3};
  for (int i = 0; i < 4; i++) {
    nh_system s = test_system("contact_oscillator", "eps=5");
    nh_state x = test_preset(&s, presets[i]);
    double I[2];
    nh_invariants(&s, x.q, x.v, I);
    cr_expect(s.p[0] == eps[i], "%s sets eps = %g", presets[i], eps[i]);
    cr_expect(fabs(nh_energy(&s, x.q, x.v) - 1.5) <= 1e-15 && fabs(I[0] - 0.5) <= 1e-15, "%s: E0 = %.17g, E_y = %.17g",
              presets[i], nh_energy(&s, x.q, x.v), I[0]);
  }
}

/* Along the reference (T = 20) from every preset and from random states with ε = 2: the energy and
 * both invariants are conserved, and y(t) is the free oscillator's y0 cos t + ẏ0 sin t, since
 * ÿ = −y for every ε. Control: x² + z², which is no invariant, changes. */
Test(chaotic_contact_damped, contact_oscillator_invariants_along_reference) {
  gsl_rng *r = test_rng(53);
  for (int c = 0; c < 7; c++) {
    const char *presets[] = {"cos_eps0", "cos_eps03", "sin_eps0", "sin_eps03"};
    nh_system s = test_system("contact_oscillator", "eps=2");
    nh_state x0;
    if (c < 4) x0 = test_preset(&s, presets[c]);
    else cr_assert(nh_sample_on_D(&s, 1.5, r, &x0) == 0);
    const double T = 20;
    nh_state x = reference(&s, &x0, T);
    double I0[2], I[2];
    nh_invariants(&s, x0.q, x0.v, I0);
    nh_invariants(&s, x.q, x.v, I);
    const double E0 = nh_energy(&s, x0.q, x0.v);
    cr_expect(fabs(nh_energy(&s, x.q, x.v) - E0) <= 1e-11, "case %d: energy drifts", c);
    cr_expect(fabs(I[0] - I0[0]) <= 1e-11 && fabs(I[1] - I0[1]) <= 1e-11, "case %d: invariants drift by %.3e, %.3e", c,
              I[0] - I0[0], I[1] - I0[1]);
    const double y = x0.q[1] * cos(T) + x0.v[1] * sin(T), yd = -x0.q[1] * sin(T) + x0.v[1] * cos(T);
    cr_expect(fabs(x.q[1] - y) <= 1e-11 && fabs(x.v[1] - yd) <= 1e-11, "case %d: y is not the free oscillator", c);
    const double r0 = x0.q[0] * x0.q[0] + x0.q[2] * x0.q[2], r1 = x.q[0] * x.q[0] + x.q[2] * x.q[2];
    cr_expect(fabs(r1 - r0) > 1e-6, "control: x^2 + z^2 constant along case %d", c);
  }
  gsl_rng_free(r);
}

/* ---- the damped oscillator ---------------------------------------------------------------------- */

static const char *const damped_presets[] = {"damped_a001", "damped_a01", "damped_a1", "damped_a2",
                                             "forced_a001", "forced_a01", "forced_a1", "forced_a2"};

/* The exact solution against rk8pd at T = 15 and 50 from every preset and from parameter sets the
 * presets miss: over-damped, undamped resonance, the free particle (ω = 0), α near critical, and
 * a start at t0 ≠ 0 (the forcing is not autonomous). */
Test(chaotic_contact_damped, damped_exact_matches_reference) {
  for (int i = 0; i < 8; i++) {
    nh_system s = test_system("damped_oscillator", NULL);
    nh_state x0 = test_preset(&s, damped_presets[i]);
    for (int k = 0; k < 2; k++) {
      const double T = k ? 50 : 15;
      nh_state ex, ref = reference(&s, &x0, T);
      cr_assert(nh_exact_solution(&s, &x0, x0.t + T, &ex) == 0);
      cr_expect(state_diff(1, &ex, &ref) <= 5e-12, "%s, T = %g: exact - rk8pd = %.3e", damped_presets[i], T,
                state_diff(1, &ex, &ref));
    }
  }
  const char *params[] = {"alpha=3,beta=0.5", "alpha=0,beta=0.3,omega_f=1", "omega=0,alpha=0.4,beta=0.2",
                          "alpha=1.999999,beta=0.3", "alpha=2.000001", "omega=2.5,alpha=0.7,beta=-1,omega_f=4"};
  for (int i = 0; i < 6; i++) {
    nh_system s = test_system("damped_oscillator", params[i]);
    nh_state x0 = {.t = 1.3, .q = {0.4}, .v = {-0.9}}, ex, ref = reference(&s, &x0, 12);
    cr_assert(nh_exact_solution(&s, &x0, x0.t + 12, &ex) == 0);
    cr_expect(state_diff(1, &ex, &ref) <= 5e-12, "%s: exact - rk8pd = %.3e", params[i], state_diff(1, &ex, &ref));
  }
}

/* Over-damped within 1e-12 of critical (ζ = α/2 = 1 + 1e-12, r² = ζ² − ω² ≈ 2e-12): against the
 * series x(τ) = e^{−ζτ}[ξ cosh rτ + (η + ζξ) sinh(rτ)/r] with cosh rτ = 1 + s/2, sinh(rτ)/(rτ) =
 * 1 + s/6 (s = r²τ², the next terms below 1e-22), r² in long double. Forming sinh from the two
 * exponentials e^{(±r − ζ)τ} here would lose about 1e-10 to cancellation. */
Test(chaotic_contact_damped, damped_exact_next_to_critical) {
  nh_system s = test_system("damped_oscillator", "alpha=2.000000000002");
  const long double zeta = 0.5L * (long double)s.p[1], r2 = zeta * zeta - 1.0L;
  cr_assert(r2 > 1e-12L && r2 < 3e-12L, "r^2 = %Lg", r2);
  const double xi = 0.4, eta = -0.9;
  const nh_state x0 = {.t = 0, .q = {xi}, .v = {eta}};
  for (double tau = 0.25; tau <= 4; tau *= 2) {
    nh_state ex;
    cr_assert(nh_exact_solution(&s, &x0, tau, &ex) == 0);
    const long double S = r2 * tau * tau, e = expl(-zeta * tau);
    const long double C = 1 + S / 2, Sr = tau * (1 + S / 6); /* cosh rτ, sinh(rτ)/r */
    const long double Cd = r2 * Sr, Srd = C;                    /* their τ-derivatives */
    const double x = (double)(e * (xi * C + (eta + zeta * xi) * Sr));
    const double v = (double)(-zeta * e * (xi * C + (eta + zeta * xi) * Sr) + e * (xi * Cd + (eta + zeta * xi) * Srd));
    cr_expect(fabs(ex.q[0] - x) <= 1e-14 * fabs(x) && fabs(ex.v[0] - v) <= 1e-14 * fabs(v) + 1e-16,
              "tau = %g: (%.17g, %.17g), series (%.17g, %.17g)", tau, ex.q[0], ex.v[0], x, v);
  }
}

/* The forced presets start on the notebook's steady state
 * x(t) = −β/sqrt(α²Ω² + (1 − Ω²)²) sin(Ωt + φ), φ = atan2(αΩ, Ω² − 1) (DampedOscillatorWithForcing):
 * the exact solution is that formula at every t. The unforced ones start at (−0.25, 0.75). */
Test(chaotic_contact_damped, damped_presets_are_the_notebooks) {
  const double alphas[] = {0.01, 0.1, 1, 2}, W = acos(-1.0) / 3, beta = 0.3;
  for (int i = 0; i < 4; i++) {
    nh_system s = test_system("damped_oscillator", NULL);
    nh_state x0 = test_preset(&s, damped_presets[4 + i]), ex;
    const double a = alphas[i], amp = -beta / sqrt(a * a * W * W + pow(1 - W * W, 2)), phi = atan2(a * W, W * W - 1);
    cr_expect(s.p[1] == a && s.p[2] == beta && fabs(s.p[3] - W) <= 1e-16, "%s: parameters", damped_presets[4 + i]);
    for (double t = 0; t <= 50; t += 6.25) {
      nh_exact_solution(&s, &x0, t, &ex);
      cr_expect(fabs(ex.q[0] - amp * sin(W * t + phi)) <= 1e-13 && fabs(ex.v[0] - amp * W * cos(W * t + phi)) <= 1e-13,
                "%s at t = %g: (%.17g, %.17g), notebook (%.17g, %.17g)", damped_presets[4 + i], t, ex.q[0], ex.v[0],
                amp * sin(W * t + phi), amp * W * cos(W * t + phi));
    }
    nh_state u = test_preset(&s, damped_presets[i]);
    cr_expect(s.p[1] == a && s.p[2] == 0 && u.q[0] == -0.25 && u.v[0] == 0.75, "%s", damped_presets[i]);
  }
}

/* Along the exact solution: dq/dt = v and dv/dt = −αv − ω²x + F(t) by central differences
 * (δ = 1e-5), including the critical α = 2 and an over-damped α = 5. */
Test(chaotic_contact_damped, damped_exact_solves_the_equation) {
  const char *params[] = {"alpha=0.1", "alpha=2", "alpha=5,beta=0.3", "alpha=0.01,beta=0.3"};
  for (int i = 0; i < 4; i++) {
    nh_system s = test_system("damped_oscillator", params[i]);
    nh_state x0 = {.t = 0.5, .q = {-0.25}, .v = {0.75}}, x, xp, xm;
    for (double t = 0.5; t < 20; t += 2.3) {
      const double d = 1e-5;
      double acc;
      nh_exact_solution(&s, &x0, t, &x), nh_exact_solution(&s, &x0, t + d, &xp), nh_exact_solution(&s, &x0, t - d, &xm);
      cr_assert(nh_acceleration(&s, t, x.q, x.v, &acc) == 0);
      cr_expect(fabs((xp.q[0] - xm.q[0]) / (2 * d) - x.v[0]) <= 1e-7, "%s t = %g: dq/dt", params[i], t);
      cr_expect(fabs((xp.v[0] - xm.v[0]) / (2 * d) - acc) <= 1e-7, "%s t = %g: dv/dt", params[i], t);
    }
  }
}

/* The transient invariant Q = e^{αt}(½η² + ½ω²ξ² + (α/2)ξη) is constant along the reference for
 * under-, critically and over-damped, forced and unforced cases (T = min(10, 8/α)). Control: the energy,
 * which is not conserved, changes. */
Test(chaotic_contact_damped, damped_transient_invariant_along_reference) {
  const char *params[] = {"alpha=0.1", "alpha=2", "alpha=3,beta=0.3", "alpha=0.5,beta=0.3,omega=1.4"};
  for (int i = 0; i < 4; i++) {
    nh_system s = test_system("damped_oscillator", params[i]);
    /* αT ≤ 8: e^{αt} multiplies the reference's error in the transient (and cancels its decay) */
    nh_state x0 = {.t = 0.2, .q = {-0.25}, .v = {0.75}}, x = reference(&s, &x0, fmin(10, 8 / s.p[1]));
    double Q0, Q;
    nh_derived(&s, x0.t, x0.q, x0.v, &Q0);
    nh_derived(&s, x.t, x.q, x.v, &Q);
    cr_expect(fabs(Q - Q0) <= 2e-11 * (1 + fabs(Q0)), "%s: Q changes from %.17g to %.17g", params[i], Q0,
              Q); /* measured 1.4e-12 */
    const double dE = nh_energy(&s, x.q, x.v) - nh_energy(&s, x0.q, x0.v);
    cr_expect(fabs(dE) > 1e-3, "control: %s: the energy is constant (%.3e)", params[i], dE);
  }
}

/* The order-table methods that handle damping see it (nh_system_features), and the conservative
 * nonholonomic ones decline it; with alpha = beta = 0 the system is conservative. */
Test(chaotic_contact_damped, damped_features) {
  nh_system s = test_system("damped_oscillator", NULL);
  cr_expect(nh_system_features(&s) == NH_SYS_DAMPING, "default: damping only");
  s = test_system("damped_oscillator", "beta=0.3");
  cr_expect(nh_system_features(&s) == (NH_SYS_DAMPING | NH_SYS_FORCING), "forced");
  s = test_system("damped_oscillator", "alpha=0");
  cr_expect(nh_system_features(&s) == 0, "alpha = beta = 0 is conservative");
  s = test_system("damped_oscillator", NULL);
  char err[512];
  nh_method *m = test_method("nh_newmark");
  cr_expect_eq(nh_method_applies(m, &s, err, sizeof err), -1, "nh_newmark must decline damping");
  nh_method_free(m);
  m = test_method("herglotz2");
  cr_expect(nh_method_applies(m, &s, err, sizeof err) == 0, "%s", err);
  nh_method_free(m);
}
