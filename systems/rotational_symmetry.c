/* The rotational horizontal symmetry example (spec/rattle.md §4 E, a constructed test system):
 * q = (x, y, z), M = I₃, V = ½ω²(x² + y²) (ω² = 1 in the spec), one constraint
 *   x ẋ + y ẏ + x ż = 0,   μ(q) = (x, y, x),
 * non-integrable where y ≠ 0 (μ∧dμ = −y dx∧dy∧dz). μ_q[v,v] = ẋ² + ẏ² + ẋż, C = μμᵀ = 2x² + y².
 * The rotation about the z axis, ξ_Q = (−y, x, 0), is a horizontal symmetry (μ·ξ_Q = 0) and leaves
 * L invariant, so J = x p_y − y p_x is conserved: a momentum map that is not a single momentum
 * coordinate (unlike p_θ of the knife edge or p_φ of the vertical disk). No closed-form solution.
 *
 * C vanishes only on the z axis (x = y = 0). Energy and J keep the motion away from it: with
 * |J| ≤ r |(ẋ, ẏ)| (r = √(x² + y²)) and ½(ẋ² + ẏ²) ≤ H − V ≤ H, r ≥ |J|/√(2H) for all t
 * (spec §7 A14), and C ≥ r². */
#include <gsl/gsl_randist.h>
#include <math.h>
#include <string.h>

#include "systems/system.h"

enum { X, Y, Z, N = 3 };
enum { P_OMEGA2, P_COUNT };

/* The guaranteed distance from the z axis along sampled orbits. */
#define SAMPLE_RMIN 0.1

static const nh_param_desc params[] = {
    [P_OMEGA2] = {"omega2", NH_PARAM_REAL, 1, 0, 100,
     "omega^2 of the rotation-invariant potential V = omega2 (x^2 + y^2)/2; 1 in spec/rattle.md 4 E, 0 gives "
     "V = 0 (exact discrete energy of nh_rattle, Thm 5.1)",
     0},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static void mass(const double *p NH_UNUSED, const double *q NH_UNUSED, double *M) { nh_unit_mass_matrix(N, M); }

static double potential(const double *p, const double *q) {
  return 0.5 * p[P_OMEGA2] * (q[X] * q[X] + q[Y] * q[Y]);
}

static void grad_potential(const double *p, const double *q, double *g) {
  g[X] = p[P_OMEGA2] * q[X];
  g[Y] = p[P_OMEGA2] * q[Y];
  g[Z] = 0;
}

static void hess_potential(const double *p, const double *q NH_UNUSED, double *H) {
  memset(H, 0, N * N * sizeof *H);
  H[X * N + X] = H[Y * N + Y] = p[P_OMEGA2];
}

static void constraints(const double *p NH_UNUSED, const double *q, double *A) {
  A[X] = q[X];
  A[Y] = q[Y];
  A[Z] = q[X];
}

/* dA[i*n + j] = ∂μ_i/∂q^j: μ_x = x, μ_y = y, μ_z = x. */
static void constraints_jacobian(const double *p NH_UNUSED, const double *q NH_UNUSED, double *dA) {
  memset(dA, 0, N * N * sizeof *dA);
  dA[X * N + X] = 1;
  dA[Y * N + Y] = 1;
  dA[Z * N + X] = 1;
}

/* One word, as the other systems' names: it labels table columns (studies/observables.c). */
static const char *const invariant_names[] = {"J_z"};

/* J = ⟨p, ξ_Q(q)⟩ = x p_y − y p_x (M = I, p = v). */
static void invariants(const double *p NH_UNUSED, const double *q, const double *v, double *out) {
  out[0] = q[X] * v[Y] - q[Y] * v[X];
}

static const char *const derived_names[] = {"constraint_gram", "radius"};
static const char *const derived_docs[] = {
    "C(q) = mu M^-1 mu^T = 2x^2 + y^2, the k x k matrix every multiplier formula inverts; it vanishes only on "
    "the z axis and stays >= r^2 >= J^2/(2H) along the exact motion (spec/rattle.md 4 E, 7 A14)",
    "r = sqrt(x^2 + y^2), the distance from the symmetry axis; r >= |J|/sqrt(2H) along the exact motion",
};

static void derived(const double *p NH_UNUSED, double t NH_UNUSED, const double *q, const double *v NH_UNUSED,
                    double *out) {
  out[0] = 2 * q[X] * q[X] + q[Y] * q[Y];
  out[1] = hypot(q[X], q[Y]);
}

/* q uniform in [-box, box]³ with V(q) < E − margin; v Gaussian on D (orthonormal basis
 * ξ/|ξ|, η/|η| of D_q, ξ = (−y, x, 0), η = μ × ξ = (−x², −xy, x² + y²)), rescaled to kinetic
 * energy E − V(q); kept only if |J| ≥ SAMPLE_RMIN √(2E), so that r ≥ SAMPLE_RMIN and
 * C ≥ SAMPLE_RMIN² along the whole exact orbit. */
static int sample(const double *p, double E, gsl_rng *rng, nh_state *x) {
  const double box = 1, jmin = SAMPLE_RMIN * sqrt(2 * fmax(E, 0));
  memset(x, 0, sizeof *x);
  for (long tries = 0; tries < NH_SAMPLE_TRIES; tries++) {
    double q[N], v[N];
    for (int i = 0; i < N; i++) q[i] = gsl_ran_flat(rng, -box, box);
    const double V = potential(p, q);
    if (V >= E - NH_SAMPLE_MARGIN) continue;
    const double a = gsl_ran_gaussian_ziggurat(rng, 1.0), b = gsl_ran_gaussian_ziggurat(rng, 1.0);
    const double r2 = q[X] * q[X] + q[Y] * q[Y], r = sqrt(r2);
    if (!(r > 0)) continue;
    const double nxi = r, neta = r * sqrt(q[X] * q[X] + r2);
    v[X] = -a * q[Y] / nxi - b * q[X] * q[X] / neta;
    v[Y] = a * q[X] / nxi - b * q[X] * q[Y] / neta;
    v[Z] = b * r2 / neta;
    const double T = 0.5 * (v[X] * v[X] + v[Y] * v[Y] + v[Z] * v[Z]);
    if (!(T > 0)) continue;
    const double scale = sqrt((E - V) / T);
    for (int i = 0; i < N; i++) v[i] *= scale;
    if (!(fabs(q[X] * v[Y] - q[Y] * v[X]) >= jmin)) continue;
    memcpy(x->q, q, sizeof q);
    memcpy(x->v, v, sizeof v);
    return 0;
  }
  return -1;
}

/* spec/rattle.md §4 E: q0 = (1, 0, 0), p0 = (0.5, 1, −0.5): x ẋ + y ẏ + x ż = 0.5 − 0.5 = 0,
 * J0 = 1, μ_q[v,v] = 0.25 + 1 − 0.25 = 1 = μ·V_q, so λ(0) = 0; H0 = 0.75 + 0.5 = 1.25. */
static const double q_rattle[] = {1, 0, 0};
static const double v_rattle[] = {0.5, 1, -0.5};

static const nh_preset presets[] = {
    {"rattle",
     "spec/rattle.md 4 E: q0 = (1, 0, 0), p0 = (0.5, 1, -0.5), omega2 = 1: J0 = 1, lambda(0) = 0, H0 = 1.25; "
     "T = 10 suggested",
     q_rattle, v_rattle, "omega2=1"},
};

static const nh_system_knowledge knowledge = {
    NH_SYSTEM_INVARIANTS(invariant_names, invariants),
    NH_SYSTEM_DERIVED(derived_names, derived_docs, NULL, derived),
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 1,
    .sample = sample,
    .sampler_doc = "own sampler: q uniform in [-1,1]^3 with V(q) < E - 0.1, v ~ N(0, I) on D (drawn in the "
                   "orthonormal basis (-y, x, 0)/r, (-x^2, -xy, r^2)/(r sqrt(x^2 + r^2)) of D), rescaled to "
                   "kinetic energy E - V(q); draws with |J| < 0.1 sqrt(2E) are rejected, so that the whole "
                   "orbit keeps r >= |J|/sqrt(2E) >= 0.1 from the z axis, where C = 2x^2 + y^2 vanishes",
};

const nh_system_type nh_system_rotational_symmetry = {
    .name = "rotational_symmetry",
    .doc = "Rotational horizontal symmetry (spec/rattle.md 4 E): q = (x, y, z), M = I, V = omega2 (x^2 + y^2)/2, "
           "constraint x xdot + y ydot + x zdot = 0 (mu = (x, y, x), C = 2x^2 + y^2). The rotation about z is "
           "a horizontal symmetry: invariant J_z = x vy - y vx (its momentum map). No exact solution.",
    .n = N,
    .k = 1,
    NH_SYSTEM_PARAMS(params),
    .q0 = q_rattle,
    .v0 = v_rattle,
    .ic_doc = "preset rattle: q0 = (1, 0, 0), v0 = (0.5, 1, -0.5), J0 = 1, lambda(0) = 0, H0 = 1.25 "
              "(spec/rattle.md 4 E)",
    NH_SYSTEM_MECHANICS,
    .knowledge = &knowledge,
};
