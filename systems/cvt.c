/* The pendulum-driven continuously variable transmission (spec/newmark.md §3.3, from
 * Modin–Verdier): q = (x, y, ξ), M = I,
 *   V = ½(x² + y²) + cos ξ − (ε/2) sin 2ξ,   constraint ẏ + sin ξ ẋ = 0,  μ(q) = (sin ξ, 1, 0).
 * ξ is a decoupled pendulum driver (ξ̈ = sin ξ + ε cos 2ξ); ε ≠ 0 breaks reversibility. */
#include <math.h>
#include <string.h>

#include "systems/system.h"

enum { X, Y, XI, N = 3 };
enum { P_EPS, P_COUNT };

static const nh_param_desc params[] = {
    [P_EPS] = {"eps", NH_PARAM_REAL, 0, -10, 10,
     "driver perturbation: V(xi) = cos xi - (eps/2) sin 2xi; eps = 0 is reversible, 0.1 is the paper's "
     "Fig. 5 (spec/newmark.md 3.3)",
     0},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static void mass(const double *p NH_UNUSED, const double *q NH_UNUSED, double *M) { nh_unit_mass_matrix(N, M); }

static double potential(const double *p, const double *q) {
  return 0.5 * (q[X] * q[X] + q[Y] * q[Y]) + cos(q[XI]) - 0.5 * p[P_EPS] * sin(2 * q[XI]);
}

/* ∇U = (x, y, −sin ξ − ε cos 2ξ) (spec §3.3 [derived]). */
static void grad_potential(const double *p, const double *q, double *g) {
  g[X] = q[X];
  g[Y] = q[Y];
  g[XI] = -sin(q[XI]) - p[P_EPS] * cos(2 * q[XI]);
}

static void hess_potential(const double *p, const double *q, double *H) {
  memset(H, 0, N * N * sizeof *H);
  H[X * N + X] = 1;
  H[Y * N + Y] = 1;
  H[XI * N + XI] = -cos(q[XI]) + 2 * p[P_EPS] * sin(2 * q[XI]);
}

static void constraints(const double *p NH_UNUSED, const double *q, double *A) {
  A[X] = sin(q[XI]);
  A[Y] = 1;
  A[XI] = 0;
}

static void constraints_jacobian(const double *p NH_UNUSED, const double *q, double *dA) {
  memset(dA, 0, N * N * sizeof *dA);
  dA[X * N + XI] = cos(q[XI]); /* ∂μ_x/∂ξ */
}

/* The driver's own energy ½ξ̇² + cos ξ − (ε/2) sin 2ξ: ξ is decoupled, so it is a first integral
 * (and so is the (x, y) part E − E_ξ). */
static const char *const invariant_names[] = {"driver_energy"};

static void invariants(const double *p, const double *q, const double *v, double *out) {
  out[0] = 0.5 * v[XI] * v[XI] + cos(q[XI]) - 0.5 * p[P_EPS] * sin(2 * q[XI]);
}

/* spec §3.3, §6 A7: the printed v0 ≈ (−0.4481, −0.4075, 0.1) projected onto D by
 * ẏ0 = −sin(ξ0) ẋ0 = −0.4481 sin 2 = −0.40745617696058797 (E0 = 0.2722602). */
static const double q_eps0[] = {1, 0, -2};
static const double v_eps0[] = {-0.4481, -0.40745617696058797, 0.1};
/* As printed: off D by 4.4e-5 (E0 = 0.2722781). */
static const double v_eps0_printed[] = {-0.4481, -0.4075, 0.1};
/* spec §3.3, §6 A8: ε = 0.1, q0 = (1, 1, 0), v0 = (0, 0, 2√2), E0 = 6 exactly. */
static const double q_eps01[] = {1, 1, 0};
static const double v_eps01[] = {0, 0, 2.8284271247461903};

static const nh_preset presets[] = {
    {"eps0", "paper Fig. 4 (eps = 0): q0 = (1, 0, -2), printed v0 projected on D, ydot0 = -sin(xi0) xdot0 "
             "(spec/newmark.md 6 A7), E0 = 0.2722602",
     q_eps0, v_eps0, "eps=0"},
    {"eps0_printed", "paper Fig. 4 as printed: v0 = (-0.4481, -0.4075, 0.1), off D by 4.4e-5, E0 = 0.2722781",
     q_eps0, v_eps0_printed, "eps=0"},
    {"eps01", "paper Fig. 5 (eps = 0.1): q0 = (1, 1, 0), v0 = (0, 0, 2 sqrt 2), E0 = 6 exactly (spec/newmark.md 6 A8)",
     q_eps01, v_eps01, "eps=0.1"},
};

static const nh_system_knowledge knowledge = {
    NH_SYSTEM_INVARIANTS(invariant_names, invariants),
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 3.141592653589793,
    .sampler_doc = "generic (spec/newmark.md 6 A10): q uniform in [-pi,pi]^3 with V(q) < E - 0.1, v ~ N(0, I) "
                   "projected on D (M = I) and rescaled to kinetic energy E - V(q)",
};

const nh_system_type nh_system_cvt = {
    .name = "cvt",
    .doc = "Pendulum-driven CVT (Modin-Verdier): q = (x, y, xi), M = I, V = (x^2+y^2)/2 + cos xi - (eps/2) sin 2xi, "
           "constraint ydot + sin(xi) xdot = 0 (spec/newmark.md 3.3). Invariant: the driver energy "
           "xidot^2/2 + cos xi - (eps/2) sin 2xi. No exact solution.",
    .n = N,
    .k = 1,
    NH_SYSTEM_PARAMS(params),
    .q0 = q_eps0,
    .v0 = v_eps0,
    .ic_doc = "preset eps0: q0 = (1, 0, -2), v0 = (-0.4481, -0.40745617696, 0.1) (printed v0 projected on D), "
              "E0 = 0.2722602 (paper Fig. 4, spec/newmark.md 6 A7)",
    NH_SYSTEM_MECHANICS,
    .knowledge = &knowledge,
};
