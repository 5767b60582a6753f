/* The vertical rolling disk (spec/rattle.md §4 D): q = (x, y, θ, φ), θ the rolling angle and φ the
 * heading, M = diag(m, m, I_r, I_h), V = 0, two constraints (rolling without slipping)
 *   ẋ = R cos φ θ̇,  ẏ = R sin φ θ̇:   μ = [[1, 0, −R cos φ, 0], [0, 1, −R sin φ, 0]].
 * θ̇ = Ω and φ̇ = ω are constant, so the motion has a closed form; p_φ = I_h φ̇ is a
 * horizontal-symmetry momentum map (∂_φ ∈ D, L independent of φ). */
#include <math.h>
#include <string.h>

#include "systems/system.h"

enum { X, Y, TH, PHI, N = 4 };
enum { P_M, P_IR, P_IH, P_R, P_COUNT };

static const nh_param_desc params[] = {
    [P_M] = {"m", NH_PARAM_REAL, 1, 1e-6, 1e6, "mass", 0},
    [P_IR] = {"I_r", NH_PARAM_REAL, 0.5, 1e-6, 1e6, "moment of inertia about the rolling axis", 0},
    [P_IH] = {"I_h", NH_PARAM_REAL, 0.25, 1e-6, 1e6, "moment of inertia about the vertical (heading) axis", 0},
    [P_R] = {"R", NH_PARAM_REAL, 1, 1e-6, 1e6, "radius", 0},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static void mass(const double *p, const double *q NH_UNUSED, double *M) {
  memset(M, 0, N * N * sizeof *M);
  M[X * N + X] = M[Y * N + Y] = p[P_M];
  M[TH * N + TH] = p[P_IR];
  M[PHI * N + PHI] = p[P_IH];
}

static double potential(const double *p NH_UNUSED, const double *q NH_UNUSED) { return 0; }

static void grad_potential(const double *p NH_UNUSED, const double *q NH_UNUSED, double *g) {
  memset(g, 0, N * sizeof *g);
}

static void hess_potential(const double *p NH_UNUSED, const double *q NH_UNUSED, double *H) {
  memset(H, 0, N * N * sizeof *H);
}

static void constraints(const double *p, const double *q, double *A) {
  const double R = p[P_R], c = cos(q[PHI]), s = sin(q[PHI]);
  memset(A, 0, 2 * N * sizeof *A);
  A[0 * N + X] = 1;
  A[0 * N + TH] = -R * c;
  A[1 * N + Y] = 1;
  A[1 * N + TH] = -R * s;
}

static void constraints_jacobian(const double *p, const double *q, double *dA) {
  const double R = p[P_R];
  memset(dA, 0, 2 * N * N * sizeof *dA);
  dA[(0 * N + TH) * N + PHI] = R * sin(q[PHI]);  /* ∂μ^1_θ/∂φ */
  dA[(1 * N + TH) * N + PHI] = -R * cos(q[PHI]); /* ∂μ^2_θ/∂φ */
}

static double sinc(double u) { return u == 0 ? 1 : sin(u) / u; }

/* Closed form (spec/rattle.md §4 D): θ = θ0 + Ωτ, φ = φ0 + ωτ,
 *   x = x0 + (RΩ/ω)(sin φ − sin φ0),  y = y0 − (RΩ/ω)(cos φ − cos φ0),
 * written as RΩτ (cos c, sin c) sinc(ωτ/2) with c = φ0 + ωτ/2, which is also the ω = 0 limit.
 * Declines (−1) a start off D. */
static int exact(const double *p, const nh_state *x0, double t, nh_state *x) {
  const double R = p[P_R], Om = x0->v[TH], w = x0->v[PHI], phi0 = x0->q[PHI], tau = t - x0->t;
  if (fmax(fabs(x0->v[X] - R * cos(phi0) * Om), fabs(x0->v[Y] - R * sin(phi0) * Om)) > 1e-12) return -1;
  const double u = 0.5 * w * tau, c = phi0 + u, chord = R * Om * tau * sinc(u), phi = phi0 + w * tau;
  *x = *x0;
  x->t = t;
  x->q[X] = x0->q[X] + chord * cos(c);
  x->q[Y] = x0->q[Y] + chord * sin(c);
  x->q[TH] = x0->q[TH] + Om * tau;
  x->q[PHI] = phi;
  x->v[X] = R * Om * cos(phi);
  x->v[Y] = R * Om * sin(phi);
  return 0;
}

static const char *const invariant_names[] = {"p_phi"};

/* p_φ = I_h φ̇ (spec §4 D). */
static void invariants(const double *p, const double *q NH_UNUSED, const double *v, double *out) {
  out[0] = p[P_IH] * v[PHI];
}

/* spec/rattle.md §4 D: Ω = ω = 1, φ0 = 0, x0 = y0 = θ0 = 0: v0 = (RΩ cos φ0, RΩ sin φ0, Ω, ω). */
static const double q_ic1[] = {0, 0, 0, 0};
static const double v_ic1[] = {1, 0, 1, 1};
/* odelab's run (tests/scheme/test_rolling_disk.py, odelab ee3300c): VerticalRollingDisk(mass = 1,
 * radius = 1, Iflip = 1, Irot = 1), phi0 = 0, omega_phi = 2, omega_theta = 1; odelab's state
 * (x, y, phi, theta, vx, vy, omega_phi, omega_theta) is ours (x, y, theta, phi) reordered. */
static const double v_odelab[] = {1, 0, 1, 2};

static const nh_preset presets[] = {
    {"ic1", "spec/rattle.md 4 D: q0 = 0, Omega = omega = 1: v0 = (1, 0, 1, 1), H0 = 0.875, lambda(0) = (0, -1) "
            "in the spec's sign (ours: (0, 1), force +A^T lambda)",
     q_ic1, v_ic1, ""},
    {"odelab", "odelab's VerticalRollingDisk run (tests/scheme/test_rolling_disk.py, ee3300c): unit mass and "
               "inertias m = I_r = I_h = R = 1, q0 = 0, thetadot0 = 1, phidot0 = 2: v0 = (1, 0, 1, 2), E0 = 3 "
               "(odelab: h = 0.1, T = 1, against the exact solution)",
     q_ic1, v_odelab, "m=1,I_r=1,I_h=1,R=1"},
};

static const nh_system_knowledge knowledge = {
    .exact = exact,
    NH_SYSTEM_INVARIANTS(invariant_names, invariants),
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 1,
    .sampler_doc = "generic (spec/newmark.md 6 A10): q uniform in [-1,1]^4 (V = 0, so E > 0.1), v ~ N(0, I) "
                   "projected M-orthogonally on D (both rolling constraints; M = diag(m, m, I_r, I_h)) and rescaled "
                   "to kinetic energy E",
};

const nh_system_type nh_system_vertical_disk = {
    .name = "vertical_disk",
    .doc = "Vertical rolling disk: q = (x, y, theta, phi), M = diag(m, m, I_r, I_h), V = 0, constraints "
           "xdot = R cos(phi) thetadot, ydot = R sin(phi) thetadot (spec/rattle.md 4 D). Exact solution; "
           "invariant p_phi = I_h phidot.",
    .n = N,
    .k = 2,
    NH_SYSTEM_PARAMS(params),
    .q0 = q_ic1,
    .v0 = v_ic1,
    .ic_doc = "preset ic1: q0 = (0, 0, 0, 0), v0 = (1, 0, 1, 1), H0 = 0.875 (spec/rattle.md 4 D)",
    NH_SYSTEM_MECHANICS,
    .constraints_solved_first = 1, /* xdot, ydot from thetadot and phi */
    .knowledge = &knowledge,
};
