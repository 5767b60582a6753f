/* Issue 16, systems/: checks that a wrong number in a system file fails the suite (the parameter
 * tables are checked in tests/contracts/test_system_parameters.c):
 *  - the spin–orbit Cayley coefficients against the Hansen coefficients of Kepler's equation,
 *    computed here from scratch (Fourier integral in the mean anomaly, Taylor coefficients in e by a
 *    Cauchy integral over complex e);
 *  - the notebook presets of spin_orbit and time_perturbed_kepler against their stated formulas. */
#include <complex.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/param.h"
#include "systems/system.h"
#include "tests/helpers.h"

#define PI 3.14159265358979323846

/* ---- spin–orbit: the Cayley coefficients are Kepler's -------------------------------------- */

/* Σ_k c_k(e) cos(2q − kt) = (a/r)³ cos(2q − 2ν) (header of systems/spin_orbit.c, [C90]), so
 * Σ_k c_k e^{ikt} = (a/r)³ e^{2iν}, with E − e sin E = t, r/a = 1 − e cos E, and
 * cos ν = (cos E − e)/(1 − e cos E), sin ν = √(1 − e²) sin E/(1 − e cos E). The truncated series of
 * the system is the Taylor polynomial of degree 7 in e of the Hansen coefficients
 *   c_k(e) = (1/2π) ∫₀^{2π} (a/r)³ [cos 2ν cos kt + sin 2ν sin kt] dt,
 * all analytic in e near 0. Here c_k(e) for complex e (|e| = ρ = 0.2; the trapezoidal rule in t
 * converges geometrically) and the Taylor coefficients by the discrete Cauchy integral
 *   a_j = (1/N) Σ_m c_k(ρω^m) (ρω^m)^{−j},  ω = e^{2πi/N}, N = 32
 * (aliasing a_{j+32}ρ³² below 1e-16; round-off ~1e-16/ρ^j ≤ 1e-11 for j ≤ 7). */
enum { CK_MIN = -5, CK_MAX = 9, CK_N = CK_MAX - CK_MIN + 1 };

static void hansen_at(double complex e, double complex c[CK_N]) {
  enum { NT = 256 };
  for (int k = 0; k < CK_N; k++) c[k] = 0;
  const double complex root = csqrt(1 - e * e);
  for (int i = 0; i < NT; i++) {
    const double t = 2 * PI * i / NT;
    double complex E = t;
    for (int it = 0; it < 40; it++) E -= (E - e * csin(E) - t) / (1 - e * ccos(E));
    const double complex d = 1 - e * ccos(E), cn = (ccos(E) - e) / d, sn = root * csin(E) / d;
    const double complex a3 = 1 / (d * d * d), c2 = a3 * (cn * cn - sn * sn), s2 = a3 * 2 * sn * cn;
    for (int k = CK_MIN; k <= CK_MAX; k++) c[k - CK_MIN] += (c2 * cos(k * t) + s2 * sin(k * t)) / NT;
  }
}

/* The Taylor coefficients a[k][j], j = 0..7, of the Hansen coefficients c_k(e). */
static void hansen_taylor(double a[CK_N][8]) {
  enum { NC = 32 };
  const double rho = 0.2;
  double complex sum[CK_N][8] = {{0}};
  for (int m = 0; m < NC; m++) {
    const double complex e = rho * cexp(2 * PI * I * m / NC);
    double complex c[CK_N];
    hansen_at(e, c);
    for (int k = 0; k < CK_N; k++)
      for (int j = 0; j < 8; j++) sum[k][j] += c[k] * cpow(e, -j) / NC;
  }
  for (int k = 0; k < CK_N; k++)
    for (int j = 0; j < 8; j++) a[k][j] = creal(sum[k][j]);
}

/* The system's c_k(e): with ε = 1, λ = 0 (no I(t) factor), W(q, t) = −½ Σ c_k cos(2q − kt), so
 * −2W(0, t) − 2iW(π/4, t) = Σ c_k e^{ikt}, inverted by a 32-point DFT in t (k = −5..9 are distinct
 * modulo 32). */
static void system_cayley(double ecc, double c[CK_N]) {
  char params[128];
  snprintf(params, sizeof params, "ecc=%.17g,eps=1,lambda=0,mu=0,a=0", ecc);
  nh_system sys = test_system("spin_orbit", params);
  const nh_time_potential *W = sys.type->forces->potential;
  enum { NT = 32 };
  double complex s[CK_N] = {0};
  for (int i = 0; i < NT; i++) {
    const double t = 2 * PI * i / NT, q0 = 0, q1 = PI / 4;
    const double complex f = -2 * W->value(sys.p, &q0, t) - 2 * I * W->value(sys.p, &q1, t);
    for (int k = CK_MIN; k <= CK_MAX; k++) s[k - CK_MIN] += f * cexp(-I * k * t) / NT;
  }
  for (int k = 0; k < CK_N; k++) c[k] = creal(s[k]);
}

/* The system's truncated series equals the Taylor polynomial of degree 7 of the Hansen
 * coefficients at e = 0.1, 0.25, 0.4, 0.5, to 1e-11 absolute (a coefficient of e^j off by δ moves
 * c_k(0.5) by δ/2^j: the smallest change of one digit of the table, 12144273/71680 → /71681, moves
 * c_9(0.5) by 1.8e-5). Control: the degree-6 polynomial misses c_9(0.5) = 1.3 (the e^7 term). */
Test(system_values, spin_orbit_cayley_coefficients_are_the_hansen_coefficients) {
  double a[CK_N][8];
  hansen_taylor(a);
  /* Sanity of the reference itself: c_2 = 1 − 5e²/2 + 13e⁴/16 − ..., c_1 = −e/2 + ... (Celletti's
   * leading terms, by hand from (a/r)³e^{2iν} = (1 + 3e cos t + ...)(1 + 4ie sin t + ...)). */
  cr_expect(fabs(a[2 - CK_MIN][0] - 1) <= 1e-12 && fabs(a[2 - CK_MIN][2] + 2.5) <= 1e-12,
            "Hansen c_2: %.17g + %.17g e^2", a[2 - CK_MIN][0], a[2 - CK_MIN][2]);
  cr_expect(fabs(a[1 - CK_MIN][1] + 0.5) <= 1e-12 && fabs(a[3 - CK_MIN][1] - 3.5) <= 1e-12,
            "Hansen c_1, c_3: %.17g e, %.17g e", a[1 - CK_MIN][1], a[3 - CK_MIN][1]);
  const double es[] = {0.1, 0.25, 0.4, 0.5};
  for (int i = 0; i < 4; i++) {
    double c[CK_N];
    system_cayley(es[i], c);
    for (int k = 0; k < CK_N; k++) {
      double poly = 0, poly6 = 0;
      for (int j = 7; j >= 0; j--) poly = poly * es[i] + a[k][j];
      for (int j = 6; j >= 0; j--) poly6 = poly6 * es[i] + a[k][j];
      cr_expect(fabs(c[k] - poly) <= 1e-11, "e = %g: c_%d = %.17g, Hansen to e^7 %.17g (diff %.3e)", es[i],
                k + CK_MIN, c[k], poly, c[k] - poly);
      if (i == 3 && k + CK_MIN == 9)
        cr_expect(fabs(c[k] - poly6) > 1, "control: the degree-6 polynomial is off by %.3e", c[k] - poly6);
    }
  }
}

/* W scales by 1/(1 + λ cos Ωt) (the moment of inertia I(t) ∝ 1 + λ cos Ωt) and by ε. */
Test(system_values, spin_orbit_potential_scales_with_the_inertia) {
  nh_system base = test_system("spin_orbit", "ecc=0.2,eps=1,lambda=0");
  nh_system mod = test_system("spin_orbit", "ecc=0.2,eps=0.3,lambda=0.4,omega=1.7");
  const double q = 0.35;
  for (double t = -2; t < 3; t += 0.37) {
    const double want = 0.3 * base.type->forces->potential->value(base.p, &q, t) / (1 + 0.4 * cos(1.7 * t));
    const double got = mod.type->forces->potential->value(mod.p, &q, t);
    cr_expect(fabs(got - want) <= 1e-15 * (1 + fabs(want)), "t = %g: W = %.17g, scaled %.17g", t, got, want);
  }
}

/* ---- notebook presets ------------------------------------------------------------------------- */

/* spin_orbit (the notebook's c-fig1a–d and non-resonant IC, systems/spin_orbit.c): the parameters
 * each sets and (θ0, θ̇0). */
Test(system_values, spin_orbit_presets) {
  const struct {
    const char *name;
    double ecc, omega, lambda, q, v;
  } cases[] = {{"fig1a", 0.01, 1, 0.001, 0, 1.0},
               {"fig1b", 0.01, 1, 0.01, 0, 0.98},
               {"fig1c", 0.01, 1, 0.1, 0, 0.9},
               {"fig1d", 0.01, 1, 0.2, 0, 0.81},
               {"nonresonant", 0.1, 1.4142135623730951, 0.01, PI, 1}};
  const nh_system_type *T = nh_system_type_find("spin_orbit");
  cr_assert(T);
  cr_expect_eq(T->knowledge->npresets, 6,
               "the five above and fig5b (tests/systems/test_system_library.c, peer runs)");
  for (int i = 0; i < 5; i++) {
    /* From parameters that no preset uses, so that each one it sets shows. */
    nh_system sys = test_system("spin_orbit", "ecc=0.3,eps=0.5,omega=3,lambda=0.5,a=1,mu=1");
    nh_state x = test_preset(&sys, cases[i].name);
    const double want[6] = {cases[i].ecc, 0.0075, cases[i].omega, cases[i].lambda, 0, 0};
    for (int j = 0; j < 6; j++)
      cr_expect_eq(sys.p[j], want[j], "%s: %s = %.17g, expected %.17g", cases[i].name, T->params[j].name, sys.p[j],
                   want[j]);
    cr_expect(x.q[0] == cases[i].q && x.v[0] == cases[i].v && x.t == 0, "%s: (q, v) = (%.17g, %.17g)",
              cases[i].name, x.q[0], x.v[0]);
  }
  /* The default state is fig1a's (the documented default IC). */
  nh_system sys = test_system("spin_orbit", NULL);
  nh_state x;
  nh_system_default_state(&sys, &x);
  cr_expect(x.q[0] == 0 && x.v[0] == 1, "default (%.17g, %.17g)", x.q[0], x.v[0]);
}

/* time_perturbed_kepler: init_ecc(e) of the notebook, q0 = (1 − e, 0), q̇0 = (0, √((1 + e)/(1 − e))),
 * and the parameters (α, θ, γ) of each preset; on the γ = −1 ellipse with a = 1 the energy is
 * −1/(2a) = −½ and the angular momentum √(1 − e²). */
Test(system_values, kepler_presets) {
  const struct {
    const char *name;
    double alpha, theta, e;
  } cases[] = {{"k5_30", -0.07, 2 * PI, 0.4},
               {"pi_55", -0.01, PI, 0.4},
               {"scattering", 1.7, 2 * PI, 0.01},
               {"small_ecc", -0.07, 2 * PI, 0.01},
               {"kepler", 0, 2 * PI, 0.4}};
  const nh_system_type *T = nh_system_type_find("time_perturbed_kepler");
  cr_assert(T);
  cr_expect_eq(T->knowledge->npresets, 9,
               "the five above and the four *_as_run (tests/systems/test_system_library.c, peer runs)");
  for (int i = 0; i < 5; i++) {
    nh_system sys = test_system("time_perturbed_kepler", "alpha=3,theta=2,gamma=-5");
    nh_state x = test_preset(&sys, cases[i].name);
    const double e = cases[i].e, vy = sqrt((1 + e) / (1 - e));
    cr_expect(sys.p[0] == cases[i].alpha && sys.p[1] == cases[i].theta && sys.p[2] == -1,
              "%s: (alpha, theta, gamma) = (%.17g, %.17g, %.17g)", cases[i].name, sys.p[0], sys.p[1], sys.p[2]);
    cr_expect(x.q[0] == 1 - e && x.q[1] == 0 && x.v[0] == 0, "%s: q0 = (%.17g, %.17g), v0_x %.17g", cases[i].name,
              x.q[0], x.q[1], x.v[0]);
    cr_expect(fabs(x.v[1] - vy) <= 2e-16 * vy, "%s: v0_y = %.17g, sqrt((1+e)/(1-e)) = %.17g", cases[i].name, x.v[1],
              vy);
    cr_expect(fabs(nh_energy(&sys, x.q, x.v) + 0.5) <= 1e-15, "%s: E0 = %.17g, -1/2", cases[i].name,
              nh_energy(&sys, x.q, x.v));
    double d[2];
    nh_derived(&sys, 0, x.q, x.v, d);
    cr_expect(fabs(d[0] - sqrt(1 - e * e)) <= 1e-15, "%s: L0 = %.17g, sqrt(1 - e^2)", cases[i].name, d[0]);
    cr_expect_eq(d[1], d[0], "%s: at t = 0 the scaled L is L", cases[i].name);
  }
}

/* ---- the text interface of systems/system.c --------------------------------------------------- */

/* nh_system_set_params_text: items separated by commas, each name=value (the last of a repeated
 * name wins), NULL and "" change nothing; each malformed item is refused with a message naming
 * the system, the item and what is wrong. nh_system_apply_preset: an unknown name lists the
 * presets (or "none"); a known one sets its parameters and a state at t = 0 with z and the
 * multipliers 0. */
Test(system_values, params_text_and_preset_messages) {
  nh_system sys = test_system("cvt", NULL);
  char err[512] = "";
  cr_expect_eq(nh_system_set_params_text(&sys, NULL, err, sizeof err), 0);
  cr_expect_eq(nh_system_set_params_text(&sys, "", err, sizeof err), 0);
  cr_expect_eq(nh_system_set_params_text(&sys, "eps=0.25,eps=-0.5", err, sizeof err), 0, "%s", err);
  cr_expect_eq(sys.p[0], -0.5, "the last eps wins: %g", sys.p[0]);
  const struct {
    const char *text, *msg;
  } bad[] = {
      {"eps", "system cvt: expected name=value, got 'eps'"},
      {"eps=0.1,eps", "system cvt: expected name=value, got 'eps'"},
      {"eps=abc", "system cvt: parameter eps='abc' is not a number"},
      {"eps=", "system cvt: parameter eps='' is not a number"},
      {"eps=0.1x", "system cvt: parameter eps='0.1x' is not a number"},
      {"eps=11", "system cvt: parameter eps=11 is out of range [-10, 10]"},
      {"epsilon=1", "system cvt: unknown parameter 'epsilon' (parameters: eps)"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err[0] = '\0';
    cr_expect_eq(nh_system_set_params_text(&sys, bad[i].text, err, sizeof err), -1, "'%s' accepted", bad[i].text);
    cr_expect_str_eq(err, bad[i].msg, "'%s'", bad[i].text);
  }
  nh_state x;
  memset(&x, 0x55, sizeof x);
  cr_expect_eq(nh_system_apply_preset(&sys, "eps1", &x, err, sizeof err), -1);
  cr_expect_str_eq(err, "system cvt has no preset 'eps1' (presets: eps0, eps0_printed, eps01)");
  nh_system cp = test_system("chaotic_particle", NULL);
  cr_expect_eq(nh_system_apply_preset(&cp, "fig2", &x, err, sizeof err), -1);
  cr_expect_str_eq(err, "system chaotic_particle has no preset 'fig2' (presets: none)");
  /* eps01 (spec/newmark.md §6 A8): ε = 0.1, q0 = (1, 1, 0), v0 = (0, 0, 2√2), E0 = 6. */
  cr_assert_eq(nh_system_apply_preset(&sys, "eps01", &x, err, sizeof err), 0, "%s", err);
  cr_expect_eq(sys.p[0], 0.1);
  cr_expect(x.t == 0 && x.z == 0 && x.lambda[0] == 0 && x.q[3] == 0 && x.v[3] == 0, "a clean state");
  cr_expect(x.q[0] == 1 && x.q[1] == 1 && x.q[2] == 0 && x.v[0] == 0 && x.v[1] == 0, "q0, v0");
  cr_expect(fabs(x.v[2] - 2 * sqrt(2.0)) <= 4e-16, "xidot0 = %.17g", x.v[2]);
  memset(&x, 0x55, sizeof x);
  nh_system_default_state(&sys, &x);
  cr_expect(x.t == 0 && x.z == 0 && x.lambda[0] == 0 && x.q[3] == 0, "the default state is clean");
  char buf[64];
  cr_expect_eq(nh_system_format(&sys, buf, sizeof buf), strlen("cvt(eps=0.1)"));
  cr_expect_str_eq(buf, "cvt(eps=0.1)");
  /* A buffer one byte short: the text is cut, still terminated, and the length is the full one. */
  memset(buf, 'x', sizeof buf);
  cr_expect_eq(nh_system_format(&sys, buf, 12), strlen("cvt(eps=0.1)"));
  cr_expect_str_eq(buf, "cvt(eps=0.1", "cut to 11 characters");
  cr_expect_eq(buf[12], 'x', "nothing written past the 12 bytes given");
}

/* nh_system_features for each system with its defaults and with the parameters that switch a
 * feature, from the definitions in systems/system.h: variable M (the falling disk), affine
 * constraints (the Foucault pendulum), damping where α(0) ≠ 0 or α depends on t, forcing where
 * F ≢ 0 (a slope alone counts, though F(0) = 0), a time-dependent potential (spin–orbit). */
Test(system_values, features_by_hand) {
  enum { VM = NH_SYS_VARIABLE_MASS, AF = NH_SYS_AFFINE_CONSTRAINTS, DA = NH_SYS_DAMPING, FO = NH_SYS_FORCING,
         TD = NH_SYS_TIME_DAMPING, TP = NH_SYS_TIME_POTENTIAL };
  const struct {
    const char *system, *params;
    unsigned want;
  } cases[] = {
      {"particle", NULL, 0},
      {"chaotic_particle_7", NULL, 0},
      {"knife_edge", NULL, 0},
      {"pendulum", NULL, 0},
      {"falling_disk", NULL, VM},
      {"falling_disk", "alpha=0.1", VM | DA},
      {"falling_disk", "F_psi_const=12", VM | FO},
      {"falling_disk", "F_psi_slope=0.0625", VM | FO},
      {"falling_disk", "F_phi_slope=0.0625", VM | FO},
      {"foucault_pendulum", NULL, AF | DA},
      {"foucault_pendulum", "alpha=0", AF},
      {"damped_oscillator", NULL, DA},
      {"damped_oscillator", "alpha=0,beta=0.3", FO},
      {"damped_oscillator", "alpha=0,beta=0", 0},
      {"oscillator", NULL, 0},
      {"lane_emden", NULL, DA | TD},
      {"time_perturbed_kepler", NULL, DA | TD},
      {"time_perturbed_kepler", "alpha=0", 0},
      {"time_perturbed_kepler", "theta=0", 0},
      {"spin_orbit", NULL, DA | TD | TP},
      {"spin_orbit", "lambda=0", TP},
      {"spin_orbit", "lambda=0,a=0.5", DA | TP},
      {"spin_orbit", "omega=0", TP},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    nh_system sys = test_system(cases[i].system, cases[i].params);
    const unsigned f = nh_system_features(&sys);
    cr_expect_eq(f, cases[i].want, "%s(%s): features %#x, expected %#x", cases[i].system,
                 cases[i].params ? cases[i].params : "", f, cases[i].want);
  }
}

/* The contact Hamiltonian H = ½vᵀMv + V(q) + W(q, t) − F(t)·q + α(t)z of the falling disk, with M
 * from its Lagrangian (spec/herglotz.md (4.10)) written out here:
 *   T = ½m(Ẋ² + Ẏ² + R² sin²θ θ̇²) + ½[I_A(ψ̇ − ϕ̇ sinθ)² + I_T(θ̇² + ϕ̇² cos²θ)], V = m g R cosθ,
 * I_A = mR²/2, I_T = mR²/4, F_ψ = c + b t, F_ϕ = s t, and α z. */
Test(system_values, falling_disk_contact_hamiltonian_by_hand) {
  nh_system sys = test_system("falling_disk", "m=3,R=0.7,g=9.5,alpha=0.3,F_psi_const=2,F_psi_slope=0.5,F_phi_slope=-0.25");
  const double m = 3, R = 0.7, g = 9.5, IA = 0.5 * m * R * R, IT = 0.25 * m * R * R, t = 1.3, z = -0.8;
  const double q[5] = {0.2, -0.1, 0.4, 0.9, -1.1}, v[5] = {0.3, -0.6, 0.7, -0.5, 1.9};
  const double st = sin(q[2]), ct = cos(q[2]), w = v[4] - v[3] * st;
  const double T = 0.5 * m * (v[0] * v[0] + v[1] * v[1] + R * R * st * st * v[2] * v[2]) +
                   0.5 * (IA * w * w + IT * (v[2] * v[2] + v[3] * v[3] * ct * ct));
  const double V = m * g * R * ct, Fpsi = 2 + 0.5 * t, Fphi = -0.25 * t;
  const double H = T + V - (Fpsi * q[4] + Fphi * q[3]) + 0.3 * z;
  const double got = nh_contact_hamiltonian(&sys, t, q, v, z);
  cr_expect(fabs(got - H) <= 1e-14 * (1 + fabs(H)), "H = %.17g, by hand %.17g", got, H);
  cr_expect(fabs(nh_energy(&sys, q, v) - (T + V)) <= 1e-14 * (T + V), "E = %.17g, by hand %.17g", nh_energy(&sys, q, v),
            T + V);
  /* M(q) by hand is the Hessian of T in v: M v = ∂T/∂v. nh_mass_solve inverts it. */
  double Mv[5] = {m * v[0], m * v[1], (m * R * R * st * st + IT) * v[2], -IA * st * w + IT * ct * ct * v[3], IA * w};
  double back[5];
  cr_assert_eq(nh_mass_solve(&sys, q, Mv, back), 0);
  for (int i = 0; i < 5; i++) cr_expect(fabs(back[i] - v[i]) <= 1e-14, "M^-1 (M v)_%d = %.17g, v %.17g", i, back[i], v[i]);
}

/* ---- sampling boxes --------------------------------------------------------------------------- */

/* The half-width X of the box "[-X,X]^n" its sampler documentation states ("pi" for π), and n
 * (1 without the exponent); 0 when the documentation names no box or says it is unused. */
static double documented_box(const char *doc, int *n) {
  const char *s = strstr(doc, "[-");
  *n = 0;
  if (!s || strstr(doc, "sample_box unused")) return 0;
  s += 2;
  double X = strncmp(s, "pi,", 3) == 0 ? PI : strtod(s, NULL);
  const char *close = strchr(s, ']');
  cr_assert(close, "unterminated box in '%s'", doc);
  *n = close[1] == '^' ? atoi(close + 2) : 1;
  return X;
}

/* Every sampler that draws q in a box: the box is the documented one, and at an energy far above
 * V on the box (E = 100, so that V(q) < E − 0.1 rejects nothing) 400 draws fill it: every
 * coordinate within [−X, X], its extremes beyond ±0.9X (missed with probability 0.95^400 < 1e-8),
 * and the mean of q_i² within 5 standard deviations (√(4/45/400) X²) of X²/3, the uniform law's.
 * The rotational-symmetry sampler's rejection of small |J| biases x and y towards the box's edge:
 * there only the range is checked. The pendulum's draws are on its circle (no box). */
Test(system_values, samplers_fill_the_documented_box) {
  int boxes = 0;
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    const nh_system_knowledge *K = test_knowledge(T);
    int nbox;
    const double X = documented_box(K->sampler_doc, &nbox);
    if (X == 0) {
      cr_expect_str_eq(T->name, "pendulum", "%s: no box documented in '%s'", T->name, K->sampler_doc);
      continue;
    }
    boxes++;
    cr_expect_eq(K->sample_box, X, "%s: sample_box %.17g, documented %.17g", T->name, K->sample_box, X);
    cr_expect_eq(nbox, T->n, "%s: documented box dimension %d, n = %d", T->name, nbox, T->n);
    nh_system sys = test_system_of(T, NULL);
    gsl_rng *r = test_rng(1000 + (unsigned long)s);
    double lo[NH_MAX_N], hi[NH_MAX_N], sq[NH_MAX_N] = {0};
    for (int i = 0; i < T->n; i++) lo[i] = INFINITY, hi[i] = -INFINITY;
    const int draws = 400;
    for (int d = 0; d < draws; d++) {
      nh_state x;
      cr_assert_eq(nh_sample_on_D(&sys, 100, r, &x), 0, "%s: no state at E = 100", T->name);
      for (int i = 0; i < T->n; i++) lo[i] = fmin(lo[i], x.q[i]), hi[i] = fmax(hi[i], x.q[i]), sq[i] += x.q[i] * x.q[i];
    }
    gsl_rng_free(r);
    for (int i = 0; i < T->n; i++) {
      cr_expect(lo[i] >= -X && hi[i] <= X, "%s: q_%d in [%.6g, %.6g], box %.6g", T->name, i, lo[i], hi[i], X);
      cr_expect(lo[i] < -0.9 * X && hi[i] > 0.9 * X, "%s: q_%d only in [%.6g, %.6g], box %.6g", T->name, i, lo[i],
                hi[i], X);
      if (strcmp(T->name, "rotational_symmetry") == 0) continue;
      const double mean = sq[i] / draws, sd = sqrt(4.0 / 45 / draws) * X * X;
      cr_expect(fabs(mean - X * X / 3) <= 5 * sd, "%s: mean q_%d^2 = %.6g, uniform %.6g (5 sd = %.3g)", T->name, i,
                mean, X * X / 3, 5 * sd);
    }
  }
  cr_expect_geq(boxes, 17, "%d samplers with a box", boxes);
}

/* ---- exact solutions at rest ------------------------------------------------------------------ */

/* The pendulum at rest stays where it is: at the bottom (k = 0) and balanced at the top (θ0 = π,
 * θ̇0 = 0: k = 1, the unstable equilibrium, which the elliptic formulas cannot represent), for any
 * t and any l, g. Control: the top with a tiny push (θ̇0 = 1e-3) moves. */
Test(system_values, pendulum_exact_at_rest) {
  nh_system sys = test_system("pendulum", "m=2,g=3,l=1.5");
  const double l = 1.5;
  const nh_state bottom = {.t = 0.3, .q = {0, -l}, .v = {0, 0}}, top = {.t = 0.3, .q = {0, l}, .v = {0, 0}};
  for (double t = -4; t <= 9; t += 2.6) {
    nh_state x;
    cr_assert_eq(nh_exact_solution(&sys, &bottom, t, &x), 0);
    cr_expect(fabs(x.q[0]) <= 1e-15 && x.q[1] == -l && x.v[0] == 0 && x.v[1] == 0 && x.t == t,
              "bottom at t = %g: q = (%g, %.17g), v = (%g, %g)", t, x.q[0], x.q[1], x.v[0], x.v[1]);
    cr_assert_eq(nh_exact_solution(&sys, &top, t, &x), 0);
    cr_expect(fabs(x.q[0]) <= 1e-15 && fabs(x.q[1] - l) <= 1e-15 && x.v[0] == 0 && x.v[1] == 0,
              "top at t = %g: q = (%g, %.17g), v = (%g, %g)", t, x.q[0], x.q[1], x.v[0], x.v[1]);
  }
  nh_state pushed = top, x;
  pushed.v[0] = -1e-3 * l; /* θ̇0 = 1e-3 at θ0 = π: v = lθ̇(cos π, sin π) */
  double fall = 0; /* it falls through the bottom about 6.6 after the start (a rotation of period ~13) */
  for (double t = 1; t <= 12; t += 1) {
    cr_assert_eq(nh_exact_solution(&sys, &pushed, t, &x), 0);
    fall = fmax(fall, l - x.q[1]);
  }
  cr_expect(fall > l, "control: the pushed pendulum falls (by %.17g at most)", fall);
}

/* Lane–Emden n = 5 from x0 = 0: the zero solution (A = 0 of the homology family) when ẋ0 = 0,
 * none when ẋ0 ≠ 0 (not on the family: declined, the reference takes over). */
Test(system_values, lane_emden_n5_from_zero) {
  nh_system sys = test_system("lane_emden", "n=5,t0=2");
  nh_state x0 = {.t = 0.5, .q = {0}, .v = {0}}, x;
  memset(&x, 0x55, sizeof x);
  cr_assert_eq(nh_exact_solution(&sys, &x0, 3.5, &x), 0);
  cr_expect(x.q[0] == 0 && x.v[0] == 0 && x.t == 3.5, "x = %g, v = %g, t = %g", x.q[0], x.v[0], x.t);
  x0.v[0] = 0.3;
  cr_expect_eq(nh_exact_solution(&sys, &x0, 3.5, &x), -1, "x0 = 0 with a velocity is not on the family");
}

/* The over-damped oscillator (α = 10 > 2ω, ζ = 5, r = √(ζ² − ω²) = √24) without forcing, forward
 * and backward in time over |rτ| up to 49 (where the code forms e^{−ζτ}cosh rτ from the dominant
 * exponential: e^{(r−ζ)τ} forward, e^{−(r+ζ)τ} backward), against the closed form of the header
 * written directly: x = e^{−ζτ}[x0 cosh rτ + (v0 + ζx0) sinh(rτ)/r],
 * v = e^{−ζτ}[v0 cosh rτ − (ζv0 + ω²x0) sinh(rτ)/r], relative 1e-13. */
Test(system_values, damped_oscillator_overdamped_both_directions) {
  nh_system sys = test_system("damped_oscillator", "omega=1,alpha=10,beta=0");
  const double zeta = 5, r = sqrt(24.0), x0 = 0.7, v0 = -1.3, t0 = 0.4;
  const nh_state s0 = {.t = t0, .q = {x0}, .v = {v0}};
  const double taus[] = {-10, -6, -4.5, -1, 1, 4.5, 6, 10};
  for (int i = 0; i < 8; i++) {
    const double tau = taus[i], e = exp(-zeta * tau), ch = cosh(r * tau), sh = sinh(r * tau) / r;
    const double x = e * (x0 * ch + (v0 + zeta * x0) * sh), v = e * (v0 * ch - (zeta * v0 + x0) * sh);
    nh_state s;
    cr_assert_eq(nh_exact_solution(&sys, &s0, t0 + tau, &s), 0);
    cr_expect(fabs(s.q[0] - x) <= 1e-13 * fabs(x) && fabs(s.v[0] - v) <= 1e-13 * fabs(v),
              "tau = %g: (%.17g, %.17g), closed form (%.17g, %.17g)", tau, s.q[0], s.v[0], x, v);
  }
}

/* ---- first integrals by hand -------------------------------------------------------------------- */

/* Every system's declared invariants, by name and by the formula its spec gives, at random states
 * with parameters away from the defaults (a conserved quantity of another form, e.g. J/θ̇, would
 * pass a conservation check but not this): cvt's driver energy ½ξ̇² + cos ξ − (ε/2) sin 2ξ
 * (spec/newmark.md §3.3), the contact oscillator's E_y = ½(y² + ẏ²) and ½(x² + (1 + εx²)z² + (1 + y²)ż²),
 * the knife edge's Jθ̇, the vertical disk's I_h φ̇ (spec/rattle.md §4 A, D), the angular momenta
 * x ẏ − y ẋ of the oscillator and the rotational symmetry (§4 E). */
Test(system_values, invariants_by_hand) {
  const struct {
    const char *system, *params, *names[2];
  } cases[] = {{"cvt", "eps=0.3", {"driver_energy"}},
               {"contact_oscillator", "eps=0.7", {"y_energy", "xz_energy"}},
               {"knife_edge", "m=1.3,J=0.7,g=9.81,alpha=0.3", {"p_theta"}},
               {"vertical_disk", "m=1.5,I_r=0.3,I_h=0.2,R=0.8", {"p_phi"}},
               {"oscillator", "omega=1.7", {"angular_momentum"}},
               {"rotational_symmetry", "omega2=2.5", {"J_z"}}};
  gsl_rng *r = test_rng(77);
  int systems = 0;
  for (int s = 0; nh_system_types[s]; s++) systems += test_invariants(nh_system_types[s])->count > 0;
  cr_expect_eq(systems, 6, "%d systems declare invariants", systems);
  for (int c = 0; c < 6; c++) {
    nh_system sys = test_system(cases[c].system, cases[c].params);
    const nh_system_type *T = sys.type;
    const int ni = cases[c].names[1] ? 2 : 1;
    cr_assert_eq(test_invariants(T)->count, ni, "%s: %d invariants", T->name, test_invariants(T)->count);
    for (int j = 0; j < ni; j++) cr_expect_str_eq(test_invariants(T)->names[j], cases[c].names[j], "%s", T->name);
    for (int trial = 0; trial < 5; trial++) {
      double q[NH_MAX_N], v[NH_MAX_N], out[NH_MAX_INVARIANTS], want[2];
      for (int i = 0; i < sys.n; i++) q[i] = 4 * gsl_rng_uniform(r) - 2, v[i] = 4 * gsl_rng_uniform(r) - 2;
      const double *p = sys.p;
      switch (c) {
      case 0: want[0] = 0.5 * v[2] * v[2] + cos(q[2]) - 0.5 * p[0] * sin(2 * q[2]); break;
      case 1:
        want[0] = 0.5 * (q[1] * q[1] + v[1] * v[1]);
        want[1] = 0.5 * (q[0] * q[0] + (1 + p[0] * q[0] * q[0]) * q[2] * q[2] + (1 + q[1] * q[1]) * v[2] * v[2]);
        break;
      case 2: want[0] = p[1] * v[2]; break;
      case 3: want[0] = p[2] * v[3]; break;
      default: want[0] = q[0] * v[1] - q[1] * v[0]; break;
      }
      test_invariants(T)->values(p, q, v, out);
      for (int j = 0; j < ni; j++)
        cr_expect(fabs(out[j] - want[j]) <= 1e-15 * (1 + fabs(want[j])), "%s: %s = %.17g, by hand %.17g", T->name,
                  cases[c].names[j], out[j], want[j]);
    }
  }
  gsl_rng_free(r);
}

/* ---- every output entry written ---------------------------------------------------------------- */

/* Every function of every system writes every entry of its output (the zeros too) and nothing past
 * it: called into a buffer of NaNs (all bits set) and into one of zeros, it gives the same bytes, and
 * the 8 doubles after its output keep their NaNs and zeros, at random (t, q, v) with the default
 * parameters and at the default state. The exact solution leaves the coordinates past n as the start
 * had them (or zero). The exact solution and the sampler fill
 * the whole state (t, q, v, z, multipliers, carry). A function that leaves an entry to whatever the
 * caller's memory held passes every test whose buffers happen to be zero, and fails here. */
typedef struct {
  double a[NH_MAX_N * NH_MAX_N * NH_MAX_N + 8];
} big_buffer;

#define SAME_BYTES(call, count, what)                                                                              \
  do {                                                                                                             \
    big_buffer nan_buf, zero_buf;                                                                                  \
    memset(&nan_buf, 0xff, sizeof nan_buf);                                                                        \
    memset(&zero_buf, 0, sizeof zero_buf);                                                                         \
    double *out = nan_buf.a;                                                                                       \
    call;                                                                                                          \
    out = zero_buf.a;                                                                                              \
    call;                                                                                                          \
    cr_expect(memcmp(nan_buf.a, zero_buf.a, sizeof(double) * (size_t)(count)) == 0, "%s: %s leaves entries unwritten", \
              T->name, what);                                                                                      \
    int past = 0; /* nothing written past the output (8 doubles checked) */                                         \
    for (int e = (count); e < (count) + 8; e++) past += !isnan(nan_buf.a[e]) || zero_buf.a[e] != 0;               \
    cr_expect_eq(past, 0, "%s: %s writes past its %d entries", T->name, what, (int)(count));                       \
    checked++;                                                                                                     \
  } while (0)

Test(system_values, every_output_entry_is_written) {
  gsl_rng *r = test_rng(4242);
  int checked = 0;
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    const nh_system_kernels *Kn = test_kernels(T);
    const nh_system_forces *F = test_forces(T);
    const nh_time_potential *W = test_time_potential(T);
    const nh_system_knowledge *K = test_knowledge(T);
    const nh_system_invariants *Iv = test_invariants(T);
    const nh_system_derived *D = test_derived(T);
    nh_system sys = test_system_of(T, NULL);
    const int n = T->n, k = T->k;
    const double *p = sys.p;
    nh_state x0;
    nh_system_default_state(&sys, &x0);
    for (int trial = 0; trial < 3; trial++) {
      double q[NH_MAX_N], v[NH_MAX_N], w[NH_MAX_N];
      const double t = trial ? 2 * gsl_rng_uniform(r) + 0.1 : x0.t;
      for (int i = 0; i < n; i++) {
        q[i] = trial ? gsl_rng_uniform(r) - 0.5 : x0.q[i];
        v[i] = trial ? 2 * gsl_rng_uniform(r) - 1 : x0.v[i];
        w[i] = 2 * gsl_rng_uniform(r) - 1;
      }
      SAME_BYTES(T->mass(p, q, out), n * n, "mass");
      if (T->mass_jacobian) SAME_BYTES(T->mass_jacobian(p, q, out), n * n * n, "mass_jacobian");
      SAME_BYTES(T->grad_potential(p, q, out), n, "grad_potential");
      SAME_BYTES(T->hess_potential(p, q, out), n * n, "hess_potential");
      SAME_BYTES(T->constraints(p, q, out), k * n, "constraints");
      SAME_BYTES(T->constraints_jacobian(p, q, out), k * n * n, "constraints_jacobian");
      if (Kn->constraint_curvature) SAME_BYTES(Kn->constraint_curvature(p, q, v, out), k, "constraint_curvature");
      if (Kn->constraint_derivative)
        SAME_BYTES(Kn->constraint_derivative(p, q, w, out), k * n, "constraint_derivative");
      if (Kn->acceleration) SAME_BYTES(Kn->acceleration(p, t, q, v, out, out + n), n + k, "acceleration");
      if (T->affine) {
        SAME_BYTES(T->affine->values(p, q, out), k, "affine->values");
        SAME_BYTES(T->affine->jacobian(p, q, out), k * n, "affine->jacobian");
      }
      if (T->holonomic) SAME_BYTES(T->holonomic(p, q, out), k, "holonomic");
      if (W->gradient) SAME_BYTES(W->gradient(p, q, t, out), n, "grad_time_potential");
      if (W->hessian) SAME_BYTES(W->hessian(p, q, t, out), n * n, "hess_time_potential");
      if (F->forcing) SAME_BYTES(F->forcing(p, t, out), n, "forcing");
      if (Iv->values) SAME_BYTES(Iv->values(p, q, v, out), Iv->count, "invariants");
      if (D->values) SAME_BYTES(D->values(p, t, q, v, out), D->count, "derived");
    }
    nh_state a, b;
    if (K->exact && K->exact(p, &x0, x0.t + 0.7, &a) == 0) {
      nh_state marked = x0; /* coordinates past n carry a mark, which no exact solution may compute with */
      for (int i = n; i < NH_MAX_N; i++) marked.q[i] = marked.v[i] = 12345;
      cr_assert_eq(K->exact(p, &marked, x0.t + 0.7, &a), 0);
      for (int i = n; i < NH_MAX_N; i++)
        cr_expect((a.q[i] == 12345 || a.q[i] == 0) && (a.v[i] == 12345 || a.v[i] == 0),
                  "%s: exact writes coordinate %d past n = %d: (%.17g, %.17g)", T->name, i, n, a.q[i], a.v[i]);
      memset(&a, 0xff, sizeof a);
      memset(&b, 0, sizeof b);
      cr_assert_eq(K->exact(p, &x0, x0.t + 0.7, &a), 0);
      cr_assert_eq(K->exact(p, &x0, x0.t + 0.7, &b), 0);
      cr_expect(memcmp(&a, &b, sizeof a) == 0, "%s: exact leaves entries unwritten", T->name);
      checked++;
    }
    if (K->sample) {
      gsl_rng *r1 = test_rng(9), *r2 = test_rng(9);
      const double E = nh_energy(&sys, x0.q, x0.v) + 1;
      memset(&a, 0xff, sizeof a);
      memset(&b, 0, sizeof b);
      cr_assert_eq(K->sample(p, E, r1, &a), 0, "%s: sample", T->name);
      cr_assert_eq(K->sample(p, E, r2, &b), 0, "%s: sample", T->name);
      cr_expect(memcmp(&a, &b, sizeof a) == 0, "%s: sample leaves entries unwritten", T->name);
      gsl_rng_free(r1), gsl_rng_free(r2);
      checked++;
    }
  }
  gsl_rng_free(r);
  cr_expect_gt(checked, 300, "%d outputs checked", checked);
}

/* ---- the papers' initial conditions, entry by entry --------------------------------------------- */

/* (system, preset or NULL for the default state, parameters the preset sets, q0, v0) from the
 * specs' statements: the particle (spec/newmark.md §3.1 Fig. 1, spec/discretization.md §3.2–3.3,
 * spec/rattle.md §4 C), the pendulum (rattle.md §4 F: θ0 = 0.5, θ̇0 = 1, q = (sin θ, −cos θ),
 * v = θ̇(cos θ, sin θ)), the knife edge (§4 A: v = s0(cos θ0, sin θ0, ·) with ω = 1), the sleigh
 * (§4 B), the vertical disk (§4 D), the chaotic particles (newmark.md §3.2 Fig. 2 and its blocks,
 * odelab's IC x = cos(π/9), ẏ1 = sin(π/9)), the Foucault pendulum (herglotz.md §3.1, §6:
 * q0 = (A, 0), v0 = (0, −sA), s = Ω sin 49°). Each entry exactly (1 ulp for the computed ones). */
typedef struct {
  const char *system, *preset, *params;
  int nset;
  double set[6];
  double q[NH_MAX_N], v[NH_MAX_N];
} preset_case;

static void check_preset_case(const preset_case *c) {
  const char *name = c->preset ? c->preset : "default";
  /* From parameters away from those the preset sets, so that setting them shows. */
  nh_system sys = test_system(c->system, c->params);
  nh_state x;
  if (c->preset) {
    x = test_preset(&sys, c->preset);
  } else {
    nh_system_default_state(&sys, &x);
  }
  for (int j = 0; j < c->nset; j++)
    cr_expect_eq(sys.p[j], c->set[j], "%s/%s: parameter %s = %.17g, expected %.17g", c->system, name,
                 sys.type->params[j].name, sys.p[j], c->set[j]);
  for (int i = 0; i < sys.n; i++) {
    cr_expect(fabs(x.q[i] - c->q[i]) <= 2.3e-16 * fabs(c->q[i]), "%s/%s: q_%d = %.17g, expected %.17g", c->system,
              name, i, x.q[i], c->q[i]);
    cr_expect(fabs(x.v[i] - c->v[i]) <= 2.3e-16 * fabs(c->v[i]), "%s/%s: v_%d = %.17g, expected %.17g", c->system,
              name, i, x.v[i], c->v[i]);
  }
}

Test(system_values, presets_entry_by_entry) {
  const double s = 7.2921159e-5 * sin(49 * PI / 180);
  const preset_case cases[] = {
      {"particle", "newmark", "omega2=3", 1, {0}, {1, 1, -1}, {1, -1, 1}},
      {"particle", NULL, NULL, 1, {0}, {1, 1, -1}, {1, -1, 1}},
      {"particle", "discretization", "omega2=3", 1, {0}, {0, 0.3, 0}, {1, 0.8, 0.3}},
      {"particle", "harmonic", "omega2=3", 1, {1}, {0.2, 0.3, 0}, {1, 0.8, 0.3}},
      {"particle", "rattle", "omega2=3", 1, {0}, {0, 1, 0}, {1, 1, 1}},
      {"pendulum", "rattle", "m=2,g=3,l=4", 3, {1, 1, 1}, {sin(0.5), -cos(0.5)}, {cos(0.5), sin(0.5)}},
      {"pendulum", "free_circle", "m=2,g=3,l=4", 3, {1, 0, 1}, {sin(0.5), -cos(0.5)}, {cos(0.5), sin(0.5)}},
      {"pendulum", NULL, NULL, 3, {1, 1, 1}, {sin(0.5), -cos(0.5)}, {cos(0.5), sin(0.5)}},
      {"knife_edge", "ic1", NULL, 0, {0}, {0, 0, 0}, {0, 0, 1}},
      {"knife_edge", "ic2", NULL, 0, {0}, {0, 0, 0.3}, {0.5 * cos(0.3), 0.5 * sin(0.3), 1}},
      {"knife_edge", NULL, NULL, 0, {0}, {0, 0, 0.3}, {0.5 * cos(0.3), 0.5 * sin(0.3), 1}},
      {"chaplygin_sleigh", "ic1", NULL, 0, {0}, {0, 0, 0}, {1, 0.5, 1}},
      {"chaplygin_sleigh", NULL, NULL, 0, {0}, {0, 0, 0}, {1, 0.5, 1}},
      {"vertical_disk", "ic1", NULL, 0, {0}, {0, 0, 0, 0}, {1, 0, 1, 1}},
      {"vertical_disk", "odelab", "m=2,I_r=3,I_h=4,R=5", 4, {1, 1, 1, 1}, {0, 0, 0, 0}, {1, 0, 1, 2}},
      {"vertical_disk", NULL, NULL, 0, {0}, {0, 0, 0, 0}, {1, 0, 1, 1}},
      {"chaotic_particle", NULL, NULL, 0, {0}, {1, 0, 1, -1, -1}, {0.05, 0.5, -0.5, -0.1, -0.05}},
      {"chaotic_particle_5", "fig2", NULL, 0, {0}, {1, 0, 1, -1, -1}, {0.05, 0.5, -0.5, -0.1, -0.05}},
      {"chaotic_particle_5", NULL, NULL, 0, {0}, {1, 0, 1, -1, -1}, {0.05, 0.5, -0.5, -0.1, -0.05}},
      {"chaotic_particle_3", "fig2_block", NULL, 0, {0}, {1, 1, -1}, {0.05, -0.5, -0.05}},
      {"chaotic_particle_3", NULL, NULL, 0, {0}, {1, 1, -1}, {0.05, -0.5, -0.05}},
      {"chaotic_particle_7", "odelab", NULL, 0, {0}, {cos(PI / 9), 0.6, 0.4, 0.2, 1, 1, 1}, {0, sin(PI / 9), 0, 0, 0, 0, 0}},
      {"chaotic_particle_7", NULL, NULL, 0, {0}, {cos(PI / 9), 0.6, 0.4, 0.2, 1, 1, 1}, {0, sin(PI / 9), 0, 0, 0, 0, 0}},
      {"chaotic_particle_7", "fig2_embedded", NULL, 0, {0}, {1, 0, 1, 0, -1, -1, 0}, {0.05, 0.5, -0.5, 0, -0.1, -0.05, 0}},
      {"foucault_pendulum", "exp1", "alpha=0.5", 6, {28, 67, 9.81, 49, 7.2921159e-5, 1e-3}, {1, 0}, {0, -s}},
      {"foucault_pendulum", "exp2", "alpha=0.5", 6, {28, 67, 9.81, 49, 7.2921159e-5, 1e-4}, {1, 0}, {0, -s}},
      {"foucault_pendulum", "amplitude3", "alpha=0.5", 6, {28, 67, 9.81, 49, 7.2921159e-5, 0.5}, {3, 0}, {0, -3 * s}},
      {"foucault_pendulum", NULL, NULL, 6, {28, 67, 9.81, 49, 7.2921159e-5, 1e-3}, {1, 0}, {0, -s}},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) check_preset_case(&cases[i]);
  /* The number of presets of each (none missed above, none extra). */
  const struct {
    const char *system;
    int n;
  } counts[] = {{"particle", 4}, {"pendulum", 2}, {"knife_edge", 2}, {"chaplygin_sleigh", 1}, {"vertical_disk", 2},
                {"chaotic_particle", 0}, {"chaotic_particle_3", 1}, {"chaotic_particle_5", 1},
                {"chaotic_particle_7", 2}, {"foucault_pendulum", 3}};
  for (size_t i = 0; i < sizeof counts / sizeof *counts; i++)
    cr_expect_eq(test_knowledge(nh_system_type_find(counts[i].system))->npresets, counts[i].n, "%s", counts[i].system);
}

/* The exact solution is stamped with the time asked for, from every preset and the default state
 * it accepts (each system with an exact solution accepts at least one), forward and backward. */
Test(system_values, exact_states_carry_their_time) {
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    if (!test_knowledge(T)->exact) continue;
    int accepted = 0;
    for (int pr = -1; pr < test_knowledge(T)->npresets; pr++) {
      nh_system sys = test_system_of(T, NULL);
      nh_state x0, x;
      if (pr < 0) nh_system_default_state(&sys, &x0);
      else x0 = test_preset(&sys, test_knowledge(T)->presets[pr].name);
      x0.t = 0.25;
      for (int dir = -1; dir <= 1; dir += 2) {
        const double t = 0.25 + dir * 1.5;
        if (test_knowledge(T)->exact(sys.p, &x0, t, &x) != 0) continue;
        accepted++;
        cr_expect_eq(x.t, t, "%s from %s: exact state at t = %.17g, asked %.17g", T->name,
                     pr < 0 ? "default" : test_knowledge(T)->presets[pr].name, x.t, t);
      }
    }
    cr_expect_gt(accepted, 0, "%s: exact declines every preset", T->name);
  }
}

/* The Foucault plane angles lie in (−π/2, π/2] (systems/foucault_pendulum.c): at random states, and
 * at the edge itself, a start from the origin along +y written with negative zeros, q = (−0, 0),
 * v = (−0, 1), whose doubled angle atan2(−0, −1) = −π must give the plane +π/2, not −π/2. */
Test(system_values, foucault_plane_angle_range) {
  nh_system sys = test_system("foucault_pendulum", NULL);
  const double q[2] = {-0.0, 0}, v[2] = {-0.0, 1};
  double out[2];
  nh_derived(&sys, 0, q, v, out);
  cr_expect(out[0] == PI / 2 && out[1] == PI / 2, "plane along y: (%.17g, %.17g), pi/2", out[0], out[1]);
  gsl_rng *r = test_rng(5);
  for (int i = 0; i < 200; i++) {
    const double x[2] = {gsl_rng_uniform(r) - 0.5, gsl_rng_uniform(r) - 0.5};
    const double w[2] = {gsl_rng_uniform(r) - 0.5, gsl_rng_uniform(r) - 0.5}, t = 1e5 * gsl_rng_uniform(r);
    nh_derived(&sys, t, x, w, out);
    cr_expect(out[0] > -PI / 2 && out[0] <= PI / 2 && out[1] > -PI / 2 && out[1] <= PI / 2, "(%.17g, %.17g)", out[0],
              out[1]);
  }
  gsl_rng_free(r);
}

/* The generic quantities of systems/system.c read only the n coordinates of q and v: with the
 * entries past n set to 7.7 instead of 0 (what a state's unused slots may hold), the energy, the
 * contact Hamiltonian, the constraint residual, the curvature term, the free force, the multiplier,
 * the acceleration and the projected velocity are the same bits, for every system at a random
 * state. */
Test(system_values, generic_quantities_read_only_n_coordinates) {
  gsl_rng *r = test_rng(808);
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    nh_system sys = test_system_of(T, NULL);
    const int n = T->n, k = T->k;
    double q[2][NH_MAX_N], v[2][NH_MAX_N];
    for (int i = 0; i < NH_MAX_N; i++) {
      const double qi = gsl_rng_uniform(r) - 0.5 + (i == 0), vi = gsl_rng_uniform(r) - 0.5;
      q[0][i] = q[1][i] = qi, v[0][i] = v[1][i] = vi;
      if (i >= n) q[0][i] = v[0][i] = 0, q[1][i] = v[1][i] = 7.7;
    }
    double E[2], H[2], res[2], curv[2][NH_MAX_K], f[2][NH_MAX_N], lam[2][NH_MAX_K], acc[2][NH_MAX_N];
    int st[2][3];
    for (int c = 0; c < 2; c++) {
      memset(curv[c], 0, sizeof curv[c]), memset(lam[c], 0, sizeof lam[c]);
      E[c] = nh_energy(&sys, q[c], v[c]);
      H[c] = nh_contact_hamiltonian(&sys, 0.6, q[c], v[c], 0.3);
      res[c] = nh_constraint_residual(&sys, q[c], v[c]);
      nh_curvature_term(&sys, q[c], v[c], curv[c]);
      nh_free_force(&sys, 0.6, q[c], v[c], f[c]);
      st[c][0] = nh_multiplier(&sys, 0.6, q[c], v[c], lam[c]);
      st[c][1] = nh_acceleration(&sys, 0.6, q[c], v[c], acc[c]);
      st[c][2] = nh_project_velocity(&sys, q[c], v[c]);
    }
    cr_expect(E[0] == E[1] && H[0] == H[1] && res[0] == res[1], "%s: E, H or the residual read past n", T->name);
    cr_expect(memcmp(st[0], st[1], sizeof st[0]) == 0, "%s: statuses differ", T->name);
    cr_expect(memcmp(curv[0], curv[1], sizeof(double) * (size_t)k) == 0, "%s: curvature reads past n", T->name);
    cr_expect(memcmp(lam[0], lam[1], sizeof(double) * (size_t)k) == 0, "%s: multiplier reads past n", T->name);
    cr_expect(memcmp(f[0], f[1], sizeof(double) * (size_t)n) == 0, "%s: free force reads past n", T->name);
    cr_expect(memcmp(acc[0], acc[1], sizeof(double) * (size_t)n) == 0, "%s: acceleration reads past n", T->name);
    cr_expect(memcmp(v[0], v[1], sizeof(double) * (size_t)n) == 0, "%s: projection reads past n", T->name);
    for (int i = n; i < NH_MAX_N; i++)
      cr_expect(v[0][i] == 0 && v[1][i] == 7.7, "%s: the projection wrote v_%d past n", T->name, i);
  }
  gsl_rng_free(r);
}

/* ---- the derived quantities write their entries and no more --------------------------------- */

#define SENTINEL 12345.678
enum { ROOM = NH_MAX_N * NH_MAX_N + 8 };

static void fill(double *b) {
  for (int i = 0; i < ROOM; i++) b[i] = SENTINEL;
}

/* Entries [0, size) of b written (none left at the sentinel, which no quantity here equals) and
 * [size, ROOM) untouched: a loop bound off by one either way fails. */
static void expect_written(const char *sys, const char *what, const double *b, int size) {
  for (int i = 0; i < size; i++) cr_expect(b[i] != SENTINEL, "%s: %s[%d] of %d not written", sys, what, i, size);
  for (int i = size; i < ROOM; i++)
    cr_expect(b[i] == SENTINEL, "%s: %s[%d] written past its %d entries", sys, what, i, size);
}

/* Every system at its default state, t = 0.3: nh_mass (n×n), nh_mass_solve (n), nh_free_force
 * (n), nh_acceleration (n), nh_multiplier (k), nh_curvature_term (k), nh_constraint_derivative
 * (k×n), nh_constraint_gram (W n×k, C k×k), nh_mass_solve_transpose (n×k, constant mass) and
 * nh_project_velocity (v, n) write exactly their documented entries (systems/system.h). */
Test(system_values, derived_quantities_write_their_entries_and_no_more) {
  static double a[ROOM], b[ROOM], A[NH_MAX_N * NH_MAX_N];
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    const char *name = T->name;
    nh_system sys = test_system_of(T, NULL);
    const int n = sys.n, k = sys.k;
    nh_state x;
    nh_system_default_state(&sys, &x);
    const double t = 0.3;
    fill(a);
    nh_mass(&sys, x.q, a);
    expect_written(name, "M", a, n * n);
    fill(a);
    cr_assert_eq(nh_mass_solve(&sys, x.q, x.v, a), 0, "%s", name);
    expect_written(name, "M^-1 p", a, n);
    fill(a);
    nh_free_force(&sys, t, x.q, x.v, a);
    expect_written(name, "f", a, n);
    fill(a);
    cr_assert_eq(nh_acceleration(&sys, t, x.q, x.v, a), 0, "%s", name);
    expect_written(name, "acceleration", a, n);
    fill(a);
    memcpy(a, x.v, sizeof(double) * (size_t)n);
    cr_assert_eq(nh_project_velocity(&sys, x.q, a), 0, "%s", name);
    expect_written(name, "projected v", a, n);
    if (k == 0) continue;
    fill(a);
    cr_assert_eq(nh_multiplier(&sys, t, x.q, x.v, a), 0, "%s", name);
    expect_written(name, "lambda", a, k);
    fill(a);
    nh_curvature_term(&sys, x.q, x.v, a);
    expect_written(name, "curvature", a, k);
    fill(a);
    nh_constraint_derivative(&sys, x.q, x.v, a);
    expect_written(name, "D", a, k * n);
    T->constraints(sys.p, x.q, A);
    fill(a), fill(b);
    cr_assert_eq(nh_constraint_gram(&sys, x.q, A, a, b), 0, "%s", name);
    expect_written(name, "W", a, n * k);
    expect_written(name, "C", b, k * k);
    if (!sys.constant_mass) continue;
    fill(a);
    nh_mass_solve_transpose(&sys, A, a);
    expect_written(name, "M^-1 A^T", a, n * k);
  }
}
