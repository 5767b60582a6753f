/* Issue 16, systems/: checks that a wrong number in a system file fails the suite.
 *  - every system's parameter table (name, kind, default, range) against the documented values,
 *    each range end accepted and the next double beyond it refused with the exact message;
 *  - the spin–orbit Cayley coefficients against the Hansen coefficients of Kepler's equation,
 *    computed here from scratch (Fourier integral in the mean anomaly, Taylor coefficients in e by a
 *    Cauchy integral over complex e);
 *  - the notebook presets of spin_orbit and time_perturbed_kepler against their stated formulas. */
#include <complex.h>
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "core/param.h"
#include "systems/system.h"
#include "tests/helpers.h"

/* ---- parameter tables ------------------------------------------------------------------------ */

/* The documented parameters (`nhbench list systems NAME`, the README's Systems table and the
 * papers' values in each help text). Defaults: the papers' values (spec/rattle.md §4 for the
 * knife edge, sleigh and disk; spec/herglotz.md §3.1–3.2 for the Foucault pendulum and the falling
 * disk: m = 28, l = 67, β = 49°, Ω = 7.2921159e-5, α = 1e-3; m = 5, R = 0.5, g = 9.81; the
 * notebooks' for the contact systems). Ranges: physical quantities that must be positive (masses,
 * inertias, lengths) start at 1e-6, gravity at 0; angles stop at ±π/2 (the knife edge's plane) and
 * ±90° (latitude); the rest as documented. */
typedef struct {
  const char *system, *name;
  nh_param_kind kind;
  double def, min, max;
} param_row;

#define PI_2 1.5707963267948966
#define PI 3.14159265358979323846
static const param_row documented[] = {
    {"particle", "omega2", NH_PARAM_REAL, 0, 0, 100},
    {"cvt", "eps", NH_PARAM_REAL, 0, -10, 10},
    {"contact_oscillator", "eps", NH_PARAM_REAL, 0, 0, 10},
    {"knife_edge", "m", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"knife_edge", "J", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"knife_edge", "g", NH_PARAM_REAL, 2, 0, 1e3},
    {"knife_edge", "alpha", NH_PARAM_REAL, 0.5235987755982988, -PI_2, PI_2}, /* π/6 */
    {"chaplygin_sleigh", "m", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"chaplygin_sleigh", "I", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"chaplygin_sleigh", "a", NH_PARAM_REAL, 0.5, -1e3, 1e3},
    {"vertical_disk", "m", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"vertical_disk", "I_r", NH_PARAM_REAL, 0.5, 1e-6, 1e6},
    {"vertical_disk", "I_h", NH_PARAM_REAL, 0.25, 1e-6, 1e6},
    {"vertical_disk", "R", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"falling_disk", "m", NH_PARAM_REAL, 5, 1e-6, 1e6},
    {"falling_disk", "R", NH_PARAM_REAL, 0.5, 1e-6, 1e3},
    {"falling_disk", "g", NH_PARAM_REAL, 9.81, 0, 1e3},
    {"falling_disk", "alpha", NH_PARAM_REAL, 0, 0, 10},
    {"falling_disk", "F_psi_const", NH_PARAM_REAL, 0, -1e6, 1e6},
    {"falling_disk", "F_psi_slope", NH_PARAM_REAL, 0, -1e6, 1e6},
    {"falling_disk", "F_phi_slope", NH_PARAM_REAL, 0, -1e6, 1e6},
    {"foucault_pendulum", "m", NH_PARAM_REAL, 28, 1e-6, 1e6},
    {"foucault_pendulum", "l", NH_PARAM_REAL, 67, 1e-6, 1e6},
    {"foucault_pendulum", "g", NH_PARAM_REAL, 9.81, 0, 1e3},
    {"foucault_pendulum", "beta_deg", NH_PARAM_REAL, 49, -90, 90},
    {"foucault_pendulum", "Omega", NH_PARAM_REAL, 7.2921159e-5, 0, 1},
    {"foucault_pendulum", "alpha", NH_PARAM_REAL, 1e-3, 0, 10},
    {"pendulum", "m", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"pendulum", "g", NH_PARAM_REAL, 1, 0, 1e6},
    {"pendulum", "l", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"oscillator", "omega", NH_PARAM_REAL, 1, 0, 1e3},
    {"damped_oscillator", "omega", NH_PARAM_REAL, 1, 0, 1e3},
    {"damped_oscillator", "alpha", NH_PARAM_REAL, 0.1, 0, 10},
    {"damped_oscillator", "beta", NH_PARAM_REAL, 0, -100, 100},
    {"damped_oscillator", "omega_f", NH_PARAM_REAL, 1.0471975511965976, 0, 1e3}, /* π/3 */
    {"rotational_symmetry", "omega2", NH_PARAM_REAL, 1, 0, 100},
    {"lane_emden", "n", NH_PARAM_INT, 1, 0, 9},
    {"lane_emden", "t0", NH_PARAM_REAL, 1, 1e-3, 1e3},
    {"time_perturbed_kepler", "alpha", NH_PARAM_REAL, -0.07, -10, 10},
    {"time_perturbed_kepler", "theta", NH_PARAM_REAL, 6.283185307179586, 0, 1e3}, /* 2π */
    {"time_perturbed_kepler", "gamma", NH_PARAM_REAL, -1, -100, 100},
    {"spin_orbit", "ecc", NH_PARAM_REAL, 0.01, 0, 0.5},
    {"spin_orbit", "eps", NH_PARAM_REAL, 0.0075, 0, 1},
    {"spin_orbit", "omega", NH_PARAM_REAL, 1, 0, 1e3},
    {"spin_orbit", "lambda", NH_PARAM_REAL, 0.001, 0, 0.9},
    {"spin_orbit", "a", NH_PARAM_REAL, 0, -10, 10},
    {"spin_orbit", "mu", NH_PARAM_REAL, 0, -10, 10},
};
#define NDOC (int)(sizeof documented / sizeof documented[0])

/* The rows of `system`, in table order; their count. */
static int documented_rows(const char *system, const param_row **rows) {
  int n = 0;
  for (int i = 0; i < NDOC; i++)
    if (strcmp(documented[i].system, system) == 0) rows[n++] = &documented[i];
  return n;
}

/* The message nh_system_set_param gives for name=value outside [lo, hi]. */
static void out_of_range_message(char *buf, size_t len, const char *system, const char *name, double value, double lo,
                                 double hi) {
  char v[32], a[32], b[32];
  nh_format_double(v, sizeof v, value);
  nh_format_double(a, sizeof a, lo);
  nh_format_double(b, sizeof b, hi);
  snprintf(buf, len, "system %s: parameter %s=%s is out of range [%s, %s]", system, name, v, a, b);
}

/* Every registered system: its parameter table is the documented one, row for row; each range end
 * is accepted (inclusive ranges), the next double outside is refused with the message naming the
 * value and the range, and a refused value leaves the parameter as it was. The chaotic particles
 * take no parameter. */
Test(mut2_systems, parameter_tables_are_the_documented_ones) {
  int seen = 0;
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    const param_row *rows[NH_MAX_PARAMS + 1];
    const int nrows = documented_rows(T->name, rows);
    cr_expect_eq(T->nparams, nrows, "%s: %d parameters, documented %d", T->name, T->nparams, nrows);
    if (T->nparams != nrows) continue;
    cr_expect(T->nparams > 0 || strncmp(T->name, "chaotic_particle", 16) == 0, "%s: no parameters", T->name);
    for (int j = 0; j < nrows; j++) {
      const nh_param_desc *d = &T->params[j];
      const param_row *r = rows[j];
      seen++;
      cr_expect_str_eq(d->name, r->name, "%s: parameter %d", T->name, j);
      cr_expect_eq(d->kind, r->kind, "%s.%s: kind", T->name, r->name);
      cr_expect_eq(d->def, r->def, "%s.%s: default %.17g, documented %.17g", T->name, r->name, d->def, r->def);
      cr_expect_eq(d->min, r->min, "%s.%s: min %.17g, documented %.17g", T->name, r->name, d->min, r->min);
      cr_expect_eq(d->max, r->max, "%s.%s: max %.17g, documented %.17g", T->name, r->name, d->max, r->max);
      cr_expect(d->choices == NULL, "%s.%s: a real parameter has no choices", T->name, r->name);
      /* The ends are accepted, the doubles just outside refused (one integer step for n). */
      nh_system sys = test_system_of(T, NULL);
      char err[256] = "", want[256];
      cr_expect_eq(sys.p[j], r->def, "%s.%s: nh_system_init sets the default", T->name, r->name);
      const double ends[2] = {r->min, r->max};
      for (int e = 0; e < 2; e++) {
        const double out = r->kind == NH_PARAM_INT ? ends[e] + (e ? 1 : -1) : nextafter(ends[e], e ? INFINITY : -INFINITY);
        cr_expect_eq(nh_system_set_param(&sys, r->name, ends[e], err, sizeof err), 0, "%s.%s = %.17g refused: %s",
                     T->name, r->name, ends[e], err);
        cr_expect_eq(sys.p[j], ends[e], "%s.%s: the end %.17g is set", T->name, r->name, ends[e]);
        cr_expect_eq(nh_system_set_param(&sys, r->name, out, err, sizeof err), -1, "%s.%s = %.17g accepted", T->name,
                     r->name, out);
        out_of_range_message(want, sizeof want, T->name, r->name, out, r->min, r->max);
        cr_expect_str_eq(err, want, "%s.%s: message", T->name, r->name);
        cr_expect_eq(sys.p[j], ends[e], "%s.%s: a refused value changed the parameter", T->name, r->name);
      }
    }
  }
  cr_expect_eq(seen, NDOC, "%d documented parameters checked of %d", seen, NDOC);
}

/* nh_system_format writes every parameter (none is quiet) except the particle's omega2, which
 * appears only when it differs from its default 0 (the papers' free particle): "particle()",
 * "particle(omega2=1)", "cvt(eps=0)", "chaotic_particle()". */
Test(mut2_systems, format_names_every_parameter) {
  char buf[512], want[512];
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    nh_system sys = test_system_of(T, NULL);
    nh_system_format(&sys, buf, sizeof buf);
    size_t len = (size_t)snprintf(want, sizeof want, "%s(", T->name);
    int first = 1;
    for (int j = 0; j < T->nparams; j++) {
      if (strcmp(T->name, "particle") == 0) continue;
      char v[32];
      nh_format_double(v, sizeof v, T->params[j].def);
      len += (size_t)snprintf(want + len, sizeof want - len, "%s%s=%s", first ? "" : ",", T->params[j].name, v);
      first = 0;
    }
    snprintf(want + len, sizeof want - len, ")");
    cr_expect_str_eq(buf, want, "%s", T->name);
  }
  nh_system p = test_system("particle", "omega2=1");
  nh_system_format(&p, buf, sizeof buf);
  cr_expect_str_eq(buf, "particle(omega2=1)");
}

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
  enum { NT = 32 };
  double complex s[CK_N] = {0};
  for (int i = 0; i < NT; i++) {
    const double t = 2 * PI * i / NT, q0 = 0, q1 = PI / 4;
    const double complex f = -2 * sys.type->time_potential(sys.p, &q0, t) - 2 * I * sys.type->time_potential(sys.p, &q1, t);
    for (int k = CK_MIN; k <= CK_MAX; k++) s[k - CK_MIN] += f * cexp(-I * k * t) / NT;
  }
  for (int k = 0; k < CK_N; k++) c[k] = creal(s[k]);
}

/* The system's truncated series equals the Taylor polynomial of degree 7 of the Hansen
 * coefficients at e = 0.1, 0.25, 0.4, 0.5, to 1e-11 absolute (a coefficient of e^j off by δ moves
 * c_k(0.5) by δ/2^j: the smallest change of one digit of the table, 12144273/71680 → /71681, moves
 * c_9(0.5) by 1.8e-5). Control: the degree-6 polynomial misses c_9(0.5) = 1.3 (the e^7 term). */
Test(mut2_systems, spin_orbit_cayley_coefficients_are_the_hansen_coefficients) {
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
Test(mut2_systems, spin_orbit_potential_scales_with_the_inertia) {
  nh_system base = test_system("spin_orbit", "ecc=0.2,eps=1,lambda=0");
  nh_system mod = test_system("spin_orbit", "ecc=0.2,eps=0.3,lambda=0.4,omega=1.7");
  const double q = 0.35;
  for (double t = -2; t < 3; t += 0.37) {
    const double want = 0.3 * base.type->time_potential(base.p, &q, t) / (1 + 0.4 * cos(1.7 * t));
    const double got = mod.type->time_potential(mod.p, &q, t);
    cr_expect(fabs(got - want) <= 1e-15 * (1 + fabs(want)), "t = %g: W = %.17g, scaled %.17g", t, got, want);
  }
}

/* ---- notebook presets ------------------------------------------------------------------------- */

/* spin_orbit (the notebook's c-fig1a–d and non-resonant IC, systems/spin_orbit.c): the parameters
 * each sets and (θ0, θ̇0). */
Test(mut2_systems, spin_orbit_presets) {
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
  cr_expect_eq(T->npresets, 5);
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
Test(mut2_systems, kepler_presets) {
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
  cr_expect_eq(T->npresets, 5);
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
    sys.type->derived(sys.p, 0, x.q, x.v, d);
    cr_expect(fabs(d[0] - sqrt(1 - e * e)) <= 1e-15, "%s: L0 = %.17g, sqrt(1 - e^2)", cases[i].name, d[0]);
    cr_expect_eq(d[1], d[0], "%s: at t = 0 the scaled L is L", cases[i].name);
  }
}
