/* The Chaplygin sleigh in centre-of-mass coordinates (spec/rattle.md §4 B): q = (x, y, θ) with
 * (x, y) the centre of mass, M = diag(m, m, I), V = 0. The blade sits at the contact point
 * P = (x, y) − a(cos θ, sin θ) and points along (cos θ, sin θ); it cannot slip sideways:
 *   −ẋ sin θ + ẏ cos θ − a θ̇ = 0,   μ = (−sin θ, cos θ, −a).
 * Forward speed u = ẋ cos θ + ẏ sin θ and ω = θ̇ obey u̇ = aω², ω̇ = −(m a/(I + m a²)) u ω; no
 * horizontal symmetry, no closed form for (x, y). */
#include <math.h>
#include <string.h>

#include "systems/system.h"

enum { X, Y, TH, N = 3 };
enum { P_M, P_I, P_A, P_COUNT };

static const nh_param_desc params[] = {
    [P_M] = {"m", NH_PARAM_REAL, 1, 1e-6, 1e6, "mass", 0},
    [P_I] = {"I", NH_PARAM_REAL, 1, 1e-6, 1e6, "moment of inertia about the centre of mass", 0},
    [P_A] = {"a", NH_PARAM_REAL, 0.5, -1e3, 1e3,
     "distance from the contact point to the centre of mass, along the blade", 0},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static void mass(const double *p, const double *q NH_UNUSED, double *M) {
  memset(M, 0, N * N * sizeof *M);
  M[X * N + X] = M[Y * N + Y] = p[P_M];
  M[TH * N + TH] = p[P_I];
}

static double potential(const double *p NH_UNUSED, const double *q NH_UNUSED) { return 0; }

static void grad_potential(const double *p NH_UNUSED, const double *q NH_UNUSED, double *g) { g[X] = g[Y] = g[TH] = 0; }

static void hess_potential(const double *p NH_UNUSED, const double *q NH_UNUSED, double *H) {
  memset(H, 0, N * N * sizeof *H);
}

static void constraints(const double *p, const double *q, double *A) {
  A[X] = -sin(q[TH]);
  A[Y] = cos(q[TH]);
  A[TH] = -p[P_A];
}

static void constraints_jacobian(const double *p NH_UNUSED, const double *q, double *dA) {
  memset(dA, 0, N * N * sizeof *dA);
  dA[X * N + TH] = -cos(q[TH]); /* ∂μ_x/∂θ */
  dA[Y * N + TH] = -sin(q[TH]); /* ∂μ_y/∂θ */
}

/* The reduced velocities of spec/rattle.md §4 B: the forward speed u = ẋ cos θ + ẏ sin θ along the
 * blade and ω = θ̇, which obey u̇ = aω², ω̇ = −(m a/(I + m a²)) u ω (on D the lateral speed is aω).
 * u sets the growth rate m a u/(I + m a²) of SHAKE's parasitic period-2 mode (spec/rattle.md §3.6). */
static const char *const derived_names[] = {"forward_speed", "angular_velocity"};
static const char *const derived_units[] = {"m/s", "rad/s"};
static const char *const derived_docs[] = {
    "u = xdot cos(theta) + ydot sin(theta), the centre-of-mass speed along the blade; udot = a omega^2, "
    "u -> sqrt(2H/m); the parasitic period-2 mode grows at rate m a u/(I + m a^2) (spec/rattle.md 4 B, 3.6)",
    "omega = thetadot; omegadot = -(m a/(I + m a^2)) u omega, omega -> 0 (spec/rattle.md 4 B)",
};

static void derived(const double *p NH_UNUSED, double t NH_UNUSED, const double *q, const double *v, double *out) {
  out[0] = v[X] * cos(q[TH]) + v[Y] * sin(q[TH]);
  out[1] = v[TH];
}

/* spec/rattle.md §4 B: q0 = 0, v0 = p0 = (1, 0.5, 1): u0 = 1, ω0 = 1, lateral speed aω0 = 0.5. */
static const double q_ic1[] = {0, 0, 0};
static const double v_ic1[] = {1, 0.5, 1};

static const nh_preset presets[] = {
    {"ic1", "spec/rattle.md 4 B: q0 = (0, 0, 0), v0 = (1, 0.5, 1), H0 = 1.125, lambda(0) = -0.8 in the "
            "spec's sign (ours: +0.8, force +A^T lambda)",
     q_ic1, v_ic1, ""},
};

static const nh_system_knowledge knowledge = {
    NH_SYSTEM_DERIVED(derived_names, derived_docs, derived_units, derived),
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 1,
    .sampler_doc = "generic (spec/newmark.md 6 A10): q uniform in [-1,1]^3 (V = 0, so E > 0.1), v ~ N(0, I) "
                   "projected M-orthogonally on D (M = diag(m, m, I)) and rescaled to kinetic energy E",
};

const nh_system_type nh_system_chaplygin_sleigh = {
    .name = "chaplygin_sleigh",
    .doc = "Chaplygin sleigh in centre-of-mass coordinates: q = (x, y, theta), M = diag(m, m, I), V = 0, "
           "constraint -xdot sin(theta) + ydot cos(theta) - a thetadot = 0 (spec/rattle.md 4 B). "
           "No exact solution.",
    .n = N,
    .k = 1,
    NH_SYSTEM_PARAMS(params),
    .q0 = q_ic1,
    .v0 = v_ic1,
    .ic_doc = "preset ic1: q0 = (0, 0, 0), v0 = (1, 0.5, 1), H0 = 1.125 (spec/rattle.md 4 B)",
    NH_SYSTEM_MECHANICS,
    .knowledge = &knowledge,
};
