/* McLachlan–Perlmutter's nonholonomic contact oscillator with coupling ε: R. McLachlan and
 * M. Perlmutter, "Integrators for nonholonomic mechanical systems", J. Nonlinear Sci. 16 (2006)
 * 283–328, Example 5.2, in the form odelab implements it (odelab/system/nonholonomic/
 * contactoscillator.py, ContactOscillator, "Example 5.2 in [MP]"):
 *   q = (x, y, z), M = I,  V = ½(x² + y² + z²) + (ε/2) x² z²,
 *   constraint ẋ + y ż = 0 (the contact distribution dx + y dz), μ(q) = (1, 0, y).
 * ε = 0 is the integrable, reversible contact oscillator (Modin–Verdier, "Integrability of
 * nonholonomically coupled oscillators", arXiv:1212.6618); ε ≠ 0 its nonlinear perturbation.
 * First integrals for every ε: the energy, the y-oscillator's energy E_y = ½(y² + ẏ²) (μ_y = 0 and
 * V is separable in y, so ÿ = −y), and hence E − E_y, which on D (ẋ = −y ż) reads odelab's
 * "radius" ½(x² + (1 + εx²) z² + (1 + y²) ż²). No closed-form solution: errors are taken against
 * the rk8pd reference. */
#include <string.h>

#include "systems/system.h"

enum { X, Y, Z, N = 3 };
enum { P_EPS, P_COUNT };

static const nh_param_desc params[] = {
    [P_EPS] = {"eps", NH_PARAM_REAL, 0, 0, 10,
               "coupling: V = |q|^2/2 + (eps/2) x^2 z^2; eps = 0 is the integrable contact oscillator. eps >= 0 "
               "keeps V confining, so that the sampler's energy shells are bounded",
               0},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static void mass(const double *p NH_UNUSED, const double *q NH_UNUSED, double *M) { nh_unit_mass_matrix(N, M); }

static double potential(const double *p, const double *q) {
  const double x = q[X], y = q[Y], z = q[Z];
  return 0.5 * (x * x + y * y + z * z) + 0.5 * p[P_EPS] * x * x * z * z;
}

/* ∇V = (x + ε x z², y, z + ε x² z), odelab's force with the opposite sign. */
static void grad_potential(const double *p, const double *q, double *g) {
  const double e = p[P_EPS], x = q[X], z = q[Z];
  g[X] = x + e * x * z * z;
  g[Y] = q[Y];
  g[Z] = z + e * x * x * z;
}

static void hess_potential(const double *p, const double *q, double *H) {
  const double e = p[P_EPS], x = q[X], z = q[Z];
  memset(H, 0, N * N * sizeof *H);
  H[X * N + X] = 1 + e * z * z;
  H[Y * N + Y] = 1;
  H[Z * N + Z] = 1 + e * x * x;
  H[X * N + Z] = H[Z * N + X] = 2 * e * x * z;
}

static void constraints(const double *p NH_UNUSED, const double *q, double *A) {
  A[X] = 1;
  A[Y] = 0;
  A[Z] = q[Y];
}

static void constraints_jacobian(const double *p NH_UNUSED, const double *q NH_UNUSED, double *dA) {
  memset(dA, 0, N * N * sizeof *dA);
  dA[Z * N + Y] = 1; /* ∂μ_z/∂y */
}

/* (Dμ[v])v = ẏ ż: the one entry of constraints_jacobian, written out. */
static void constraint_curvature(const double *p NH_UNUSED, const double *q NH_UNUSED, const double *v, double *out) {
  out[0] = v[Y] * v[Z];
}

/* D_l = Σ_i ∂_l μ_i w_i: only ∂_y μ_z = 1. */
static void constraint_derivative(const double *p NH_UNUSED, const double *q NH_UNUSED, const double *w, double *D) {
  D[X] = 0;
  D[Y] = w[Z];
  D[Z] = 0;
}

static const char *const invariant_names[] = {"y_energy", "xz_energy"};

/* E_y = ½(y² + ẏ²) and odelab's "radius" ½(x² + (1 + εx²) z² + (1 + y²) ż²) = E − E_y on D. */
static void invariants(const double *p, const double *q, const double *v, double *out) {
  const double x = q[X], y = q[Y], z = q[Z], vz = v[Z];
  out[0] = 0.5 * (y * y + v[Y] * v[Y]);
  out[1] = 0.5 * (x * x + (1 + p[P_EPS] * x * x) * z * z + (1 + y * y) * vz * vz);
}

/* odelab's initial conditions for MP's experiment (H0 = 1.5, E_y = 0.5, ż0 = 0):
 * initial_cos(z0): y(t) = cos t, q0 = (sqrt((2H0 − z0² − 1)/(1 + εz0²)), 1, z0), v0 = 0;
 * initial_sin(z0): y(t) = sin t, q0 = (sqrt((2(H0 − E_y) − z0²)/(1 + εz0²)), 0, z0), v0 = (0, 1, 0).
 * The z0 are odelab's: −√2/2 (Test_OscSolver, ε = 0), −0.55 (run_chaotic) and 0.1√2, the middle one
 * of its grid linspace(−0.9, 0.9, 10)·√2 (test_z0, ε = 0.3). E0 = 1.5 for all four. */
static const double q_cos_eps0[] = {1.224744871391589, 1, -0.7071067811865476};
static const double q_cos_eps03[] = {1.247504958910965, 1, -0.55};
static const double v_cos[] = {0, 0, 0};
static const double q_sin_eps0[] = {1.407124727947029, 0, 0.14142135623730953};
static const double q_sin_eps03[] = {1.4029222554620677, 0, 0.14142135623730953};
static const double v_sin[] = {0, 1, 0};
/* odelab's test_z0 exactly as it runs (tests/scheme/test_cvt.py, odelab ee3300c): z0 is numpy's
 * linspace(−.9, .9, 10)[5]·√2 = 0.09999999999999998·√2, one ulp below 0.1√2. */
static const double q_test_z0[] = {1.4029222554620677, 0, 0.14142135623730948};

static const nh_preset presets[] = {
    {"cos_eps0", "eps = 0, odelab initial_cos(z0 = -sqrt(2)/2): y = cos t, q0 = (sqrt(1.5), 1, -sqrt(2)/2), v0 = 0, "
                 "E0 = 1.5, E_y = 0.5",
     q_cos_eps0, v_cos, "eps=0"},
    {"cos_eps03", "eps = 0.3, odelab initial_cos(z0 = -0.55): q0 = (1.24750495891, 1, -0.55), v0 = 0, E0 = 1.5",
     q_cos_eps03, v_cos, "eps=0.3"},
    {"sin_eps0", "eps = 0, odelab initial_sin(z0 = 0.1 sqrt 2): y = sin t, q0 = (1.40712472795, 0, 0.141421356237), "
                 "v0 = (0, 1, 0), E0 = 1.5",
     q_sin_eps0, v_sin, "eps=0"},
    {"sin_eps03", "eps = 0.3, odelab initial_sin(z0 = 0.1 sqrt 2), its test_z0 case: q0 = (1.40292225546, 0, "
                  "0.141421356237), v0 = (0, 1, 0), E0 = 1.5",
     q_sin_eps03, v_sin, "eps=0.3"},
    {"odelab_test_z0", "odelab's eps = 0.3 run as it executes (tests/scheme/test_cvt.py test_z0, odelab ee3300c): "
                       "initial_sin(z0 = linspace(-.9, .9, 10)[5] sqrt 2 = 0.14142135623730948), q0 = (1.40292225546, "
                       "0, z0), v0 = (0, 1, 0), E0 = 1.5; odelab: h = 2 sin(pi/15) = 0.41582338163551863, T = 15 h = "
                       "6.23735072453278, schemes McLachlan (mp418), Spark2, Spark3 (spark), NonHolonomicEnergy "
                       "(nh_energy)",
     q_test_z0, v_sin, "eps=0.3"},
};

static const nh_system_kernels kernels = {
    .constraint_curvature = constraint_curvature,
    .constraint_derivative = constraint_derivative,
};

static const nh_system_knowledge knowledge = {
    NH_SYSTEM_INVARIANTS(invariant_names, invariants),
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 2,
    .sampler_doc = "generic (spec/newmark.md 6 A10): q uniform in [-2,2]^3 with V(q) < E - 0.1, v ~ N(0, I) "
                   "projected on D (M = I) and rescaled to kinetic energy E - V(q)",
};

const nh_system_type nh_system_contact_oscillator = {
    .name = "contact_oscillator",
    .doc = "McLachlan-Perlmutter's nonholonomic contact oscillator (J. Nonlinear Sci. 16 (2006), Example 5.2, "
           "as odelab's ContactOscillator): q = (x, y, z), M = I, V = |q|^2/2 + (eps/2) x^2 z^2, constraint "
           "xdot + y zdot = 0. eps = 0 is integrable and reversible. Invariants: E_y = (y^2 + ydot^2)/2 and "
           "E - E_y. No exact solution.",
    .n = N,
    .k = 1,
    NH_SYSTEM_PARAMS(params),
    .q0 = q_cos_eps0,
    .v0 = v_cos,
    .ic_doc = "preset cos_eps0: q0 = (sqrt(1.5), 1, -sqrt(2)/2), v0 = 0, E0 = 1.5 (odelab initial_cos, H0 = 1.5, "
              "E_y = 0.5)",
    NH_SYSTEM_MECHANICS,
    .kernels = &kernels,
    .knowledge = &knowledge,
    .constraints_solved_first = 1, /* xdot = -y zdot */
};
