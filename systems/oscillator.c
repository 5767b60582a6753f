/* The unconstrained isotropic harmonic oscillator in R², the "unconstrained sanity limit" μ ≡ 0 of
 * spec/discretization.md §3.3: q = (x, y), M = I, V = ½ω²(x² + y²), k = 0 constraints.
 * Every nonholonomic method must reduce to its unconstrained parent here (e.g. nh_newmark(beta=0) to
 * Störmer–Verlet). Exact solution q = q0 cos ωτ + v0 sin(ωτ)/ω; angular momentum is conserved. */
#include <math.h>
#include <string.h>

#include "systems/system.h"

enum { X, Y, N = 2 };
enum { P_OMEGA, P_COUNT };

static const nh_param_desc params[] = {
    [P_OMEGA] = {"omega", NH_PARAM_REAL, 1, 0, 1e3, "angular frequency (omega = 0: free particle)", 0},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static void mass(const double *p NH_UNUSED, const double *q NH_UNUSED, double *M) { nh_unit_mass_matrix(N, M); }

static double potential(const double *p, const double *q) {
  const double w = p[P_OMEGA];
  return 0.5 * w * w * (q[X] * q[X] + q[Y] * q[Y]);
}

static void grad_potential(const double *p, const double *q, double *g) {
  const double w2 = p[P_OMEGA] * p[P_OMEGA];
  g[X] = w2 * q[X];
  g[Y] = w2 * q[Y];
}

static void hess_potential(const double *p, const double *q NH_UNUSED, double *H) {
  const double w2 = p[P_OMEGA] * p[P_OMEGA];
  H[0] = H[3] = w2;
  H[1] = H[2] = 0;
}

/* q = q0 cos ωτ + v0 τ sinc(ωτ), v = −ω q0 sin ωτ + v0 cos ωτ (sinc(0) = 1: the free particle). */
static int exact(const double *p, const nh_state *x0, double t, nh_state *x) {
  const double w = p[P_OMEGA], tau = t - x0->t, wt = w * tau;
  const double c = cos(wt), s = sin(wt), sinc = wt == 0 ? tau : s / w;
  *x = *x0;
  x->t = t;
  for (int i = 0; i < N; i++) {
    x->q[i] = x0->q[i] * c + x0->v[i] * sinc;
    x->v[i] = -w * x0->q[i] * s + x0->v[i] * c;
  }
  return 0;
}

static const char *const invariant_names[] = {"angular_momentum"};

/* V is rotation invariant and there are no constraints: L = x ẏ − y ẋ is conserved. */
static void invariants(const double *p NH_UNUSED, const double *q, const double *v, double *out) {
  out[0] = q[X] * v[Y] - q[Y] * v[X];
}

static const double q_ellipse[] = {1, 0};
static const double v_ellipse[] = {0, 0.5};
static const double q_circle[] = {1, 0};
static const double v_circle[] = {0, 1};

static const nh_preset presets[] = {
    {"ellipse", "q0 = (1, 0), v0 = (0, 0.5), omega = 1: an ellipse with E0 = 0.625, angular momentum 0.5",
     q_ellipse, v_ellipse, "omega=1"},
    {"circle", "q0 = (1, 0), v0 = (0, 1), omega = 1: the circular orbit, E0 = 1, angular momentum 1", q_circle,
     v_circle, "omega=1"},
};

static const nh_system_knowledge knowledge = {
    .exact = exact,
    NH_SYSTEM_INVARIANTS(invariant_names, invariants),
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 1,
    .sampler_doc = "generic (spec/newmark.md 6 A10) without constraints: q uniform in [-1,1]^2 with V(q) < E - 0.1, "
                   "v ~ N(0, I) rescaled to kinetic energy E - V(q)",
};

const nh_system_type nh_system_oscillator = {
    .name = "oscillator",
    .doc = "Unconstrained isotropic harmonic oscillator in R^2 (k = 0), V = omega^2 |q|^2 / 2, M = I: the "
           "unconstrained sanity limit of spec/discretization.md 3.3. Exact solution; invariant: angular "
           "momentum x ydot - y xdot.",
    .n = N,
    .k = 0,
    NH_SYSTEM_PARAMS(params),
    .q0 = q_ellipse,
    .v0 = v_ellipse,
    .ic_doc = "preset ellipse: q0 = (1, 0), v0 = (0, 0.5), E0 = 0.625 with omega = 1",
    NH_SYSTEM_UNCONSTRAINED_MECHANICS,
    .knowledge = &knowledge,
};
