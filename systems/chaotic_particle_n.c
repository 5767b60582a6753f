/* The chaotic nonholonomic particle in any odd dimension n = 2m + 1 (issue 17): the family of which
 * systems/chaotic_particle.c is the member m = 2 (spec/newmark.md §3.2, from McLachlan–Perlmutter,
 * J. Nonlinear Sci. 16 (2006)). q = (x, y_1..y_m, z_1..z_m), M = I,
 *   V = ½(|q|² + z_1² z_2² + Σ_i y_i² z_i²),   constraint ẋ + Σ_i y_i ż_i = 0, μ(q) = (1, 0..0, y_1..y_m).
 * The potential is odelab's ChaoticOscillator(size = m) (odelab/system/nonholonomic/__init__.py:
 * energy ½(|v|² + |q|² + Σ y_i² z_i² + z_1² z_2²), force −q − (y z², y² z + the z_1 z_2 pair)): every
 * pair (y_i, z_i) is coupled quartically as in R⁵, and only z_1, z_2 couple to each other, so the
 * term z_1² z_2² is absent for m = 1. odelab's codistribution is (1, 0, z_1..z_m), i.e.
 * ẋ + Σ z_i ż_i = 0, which is integrable (x + |z|²/2 is constant: a holonomic constraint) and
 * disagrees with the R⁵ system of spec/newmark.md §3.2; we keep the spec's nonholonomic ẋ + Σ y_i ż_i
 * for every m. m = 2 is chaotic_particle exactly (the same floating-point operations; tested), and
 * each member is an invariant subsystem of the next (y_{m+1} = z_{m+1} = 0 at rest stays so).
 * NH_MAX_N = 8 limits m to 3. One table per m from CHAOTIC_PARTICLE below; the functions take m. */
#include <string.h>

#include "systems/system.h"

/* Coordinates: x = q[0], y_i = q[1 + i], z_i = q[1 + m + i], i = 0..m-1. */
#define CP_Y(i) (1 + (i))
#define CP_Z(m, i) (1 + (m) + (i))

/* The terms are summed in chaotic_particle.c's order, so that m = 2 gives its V bit for bit. */
static double potential_m(int m, const double *q) {
  const double *y = q + 1, *z = q + 1 + m;
  double s = 0;
  for (int i = 0; i < 2 * m + 1; i++) s += q[i] * q[i];
  if (m >= 2) s += z[0] * z[0] * z[1] * z[1];
  for (int i = 0; i < m; i++) s += y[i] * y[i] * z[i] * z[i];
  return 0.5 * s;
}

/* ∂/∂z_i of ½ z_1² z_2²: z_1 z_2² and z_1² z_2 (as chaotic_particle.c writes them), else 0. */
static double pair_gradient(int m, const double *z, int i) {
  if (m < 2 || i > 1) return 0;
  return i == 0 ? z[0] * z[1] * z[1] : z[0] * z[0] * z[1];
}

static void grad_m(int m, const double *q, double *g) {
  const double *y = q + 1, *z = q + 1 + m;
  g[0] = q[0];
  for (int i = 0; i < m; i++) {
    g[CP_Y(i)] = y[i] + y[i] * z[i] * z[i];
    g[CP_Z(m, i)] = z[i] + pair_gradient(m, z, i) + y[i] * y[i] * z[i];
  }
}

static void hess_m(int m, const double *q, double *H) {
  const int n = 2 * m + 1;
  const double *y = q + 1, *z = q + 1 + m;
  memset(H, 0, (size_t)(n * n) * sizeof *H);
  H[0] = 1;
  for (int i = 0; i < m; i++) {
    const int a = CP_Y(i), b = CP_Z(m, i);
    const double partner = m >= 2 && i <= 1 ? z[1 - i] * z[1 - i] : 0; /* ∂²(½ z_1² z_2²)/∂z_i² */
    H[a * n + a] = 1 + z[i] * z[i];
    H[b * n + b] = 1 + partner + y[i] * y[i];
    H[a * n + b] = H[b * n + a] = 2 * y[i] * z[i];
  }
  if (m >= 2) H[CP_Z(m, 0) * n + CP_Z(m, 1)] = H[CP_Z(m, 1) * n + CP_Z(m, 0)] = 2 * z[0] * z[1];
}

static void constraints_m(int m, const double *q, double *A) {
  A[0] = 1;
  for (int i = 0; i < m; i++) A[CP_Y(i)] = 0, A[CP_Z(m, i)] = q[CP_Y(i)];
}

/* dA[i*n + j] = ∂μ_i/∂q_j: only ∂μ_{z_i}/∂y_i = 1. */
static void constraints_jacobian_m(int m, double *dA) {
  const int n = 2 * m + 1;
  memset(dA, 0, (size_t)(n * n) * sizeof *dA);
  for (int i = 0; i < m; i++) dA[CP_Z(m, i) * n + CP_Y(i)] = 1;
}

/* (Dμ[v])v = Σ_i ẏ_i ż_i: constraints_jacobian's m entries, written out. */
static double curvature_m(int m, const double *v) {
  double s = 0;
  for (int i = 0; i < m; i++) s += v[CP_Y(i)] * v[CP_Z(m, i)];
  return s;
}

/* D_l = Σ_i ∂_l μ_i w_i: D_{y_i} = w_{z_i}, the rest 0. */
static void derivative_m(int m, const double *w, double *D) {
  memset(D, 0, (size_t)(2 * m + 1) * sizeof *D);
  for (int i = 0; i < m; i++) D[CP_Y(i)] = w[CP_Z(m, i)];
}

/* The index-reduced ODE in closed form (M = I, one constraint), as chaotic_particle.c's for m = 2:
 * λ = (μ·∇V − (Dμ[v])v)/|μ|², |μ|² = 1 + Σ y_i², a = −∇V + μλ. */
static void acceleration_m(int m, const double *q, const double *v, double *a, double *lambda) {
  double g[NH_MAX_N];
  grad_m(m, q, g);
  const double curv = curvature_m(m, v);
  double num = g[0], den = 1;
  for (int i = 0; i < m; i++) num += q[CP_Y(i)] * g[CP_Z(m, i)];
  num -= curv;
  for (int i = 0; i < m; i++) den += q[CP_Y(i)] * q[CP_Y(i)];
  const double l = num / den;
  a[0] = -g[0] + l;
  for (int i = 0; i < m; i++) {
    a[CP_Y(i)] = -g[CP_Y(i)];
    a[CP_Z(m, i)] = -g[CP_Z(m, i)] + q[CP_Y(i)] * l;
  }
  *lambda = l;
}

/* Initial conditions. m = 1: the paper's Fig. 2 IC (spec/newmark.md §3.2) on its (x, y2, z2) block,
 * which alone is on D for m = 1 (x' + y2 z2' = 0.05 - 0.05). m = 2: Fig. 2 itself. m = 3: odelab's
 * test_energy IC for ChaoticOscillator(3) (tests/scheme/test_cvt.py: angle = 2 pi/(2 * 9)), and
 * Fig. 2 embedded with y3 = z3 = 0 at rest, whose motion is chaotic_particle's. */
static const double q0_3[] = {1, 1, -1};
static const double v0_3[] = {0.05, -0.5, -0.05};
static const double q0_5[] = {1, 0, 1, -1, -1};
static const double v0_5[] = {0.05, 0.5, -0.5, -0.1, -0.05};
static const double q0_7[] = {0.9396926207859084, 0.6, 0.4, 0.2, 1, 1, 1}; /* x = cos(pi/9) */
static const double v0_7[] = {0, 0.3420201433256687, 0, 0, 0, 0, 0};      /* y1dot = sin(pi/9) */
static const double q_fig2_7[] = {1, 0, 1, 0, -1, -1, 0};
static const double v_fig2_7[] = {0.05, 0.5, -0.5, 0, -0.1, -0.05, 0};

static const nh_preset presets_3[] = {
    {"fig2_block", "the paper's Fig. 2 IC on its (x, y2, z2) block: q0 = (1, 1, -1), v0 = (0.05, -0.5, -0.05), "
                   "E0 = 2.1275",
     q0_3, v0_3, ""},
};
static const nh_preset presets_5[] = {
    {"fig2", "paper Fig. 2: q0 = (1, 0, 1, -1, -1), v0 = (0.05, 0.5, -0.5, -0.1, -0.05), E0 = 3.2575 "
             "(chaotic_particle's default)",
     q0_5, v0_5, ""},
};
static const nh_preset presets_7[] = {
    {"odelab", "odelab's ChaoticOscillator(3) test IC: q0 = (cos(pi/9), 0.6, 0.4, 0.2, 1, 1, 1), "
               "v0 = (0, sin(pi/9), 0, 0, 0, 0, 0), E0 = 3.06",
     q0_7, v0_7, ""},
    {"fig2_embedded", "paper Fig. 2 with (y3, z3) = 0 at rest: q0 = (1, 0, 1, 0, -1, -1, 0), v0 = (0.05, 0.5, "
                      "-0.5, 0, -0.1, -0.05, 0), E0 = 3.2575; (y3, z3) stays 0 and (x, y1, y2, z1, z2) moves as "
                      "chaotic_particle from fig2",
     q_fig2_7, v_fig2_7, ""},
};

#define CP_SAMPLER_DOC(NDIM)                                                                                  \
  "generic (spec/newmark.md 6 A10): q uniform in [-1,1]^" #NDIM " with V(q) < E - 0.1, v ~ N(0, I) projected " \
  "on D (M = I) and rescaled to kinetic energy E - V(q)"

/* One registered type per m: wrappers that fix m, and the table. n = NDIM = 2M + 1. */
#define CHAOTIC_PARTICLE(M, NDIM, IC_DOC)                                                                              \
  _Static_assert(2 * (M) + 1 == (NDIM) && (NDIM) <= NH_MAX_N, "n = 2m + 1 <= NH_MAX_N");                               \
  static void mass_##NDIM(const double *p NH_UNUSED, const double *q NH_UNUSED, double *Mq) {                          \
    nh_unit_mass_matrix(NDIM, Mq);                                                                                     \
  }                                                                                                                    \
  static double potential_##NDIM(const double *p NH_UNUSED, const double *q) { return potential_m(M, q); }             \
  static void grad_##NDIM(const double *p NH_UNUSED, const double *q, double *g) { grad_m(M, q, g); }                  \
  static void hess_##NDIM(const double *p NH_UNUSED, const double *q, double *H) { hess_m(M, q, H); }                  \
  static void constraints_##NDIM(const double *p NH_UNUSED, const double *q, double *A) { constraints_m(M, q, A); }    \
  static void dA_##NDIM(const double *p NH_UNUSED, const double *q NH_UNUSED, double *dA) {                            \
    constraints_jacobian_m(M, dA);                                                                                     \
  }                                                                                                                    \
  static void curvature_##NDIM(const double *p NH_UNUSED, const double *q NH_UNUSED, const double *v, double *out) {   \
    *out = curvature_m(M, v);                                                                                          \
  }                                                                                                                    \
  static void derivative_##NDIM(const double *p NH_UNUSED, const double *q NH_UNUSED, const double *w, double *D) {    \
    derivative_m(M, w, D);                                                                                             \
  }                                                                                                                    \
  static int acceleration_##NDIM(const double *p NH_UNUSED, double t NH_UNUSED, const double *q, const double *v,      \
                                 double *a, double *lambda) {                                                          \
    acceleration_m(M, q, v, a, lambda);                                                                                \
    return 0;                                                                                                          \
  }                                                                                                                    \
  static const nh_system_kernels kernels_##NDIM = {                                                                    \
      .constraint_curvature = curvature_##NDIM,                                                                        \
      .constraint_derivative = derivative_##NDIM,                                                                      \
      .acceleration = acceleration_##NDIM,                                                                             \
  };                                                                                                                   \
  static const nh_system_knowledge knowledge_##NDIM = {                                                                \
      NH_SYSTEM_PRESETS(presets_##NDIM),                                                                               \
      .sample_box = 1,                                                                                                 \
      .sampler_doc = CP_SAMPLER_DOC(NDIM),                                                                             \
  };                                                                                                                   \
  const nh_system_type nh_system_chaotic_particle_##NDIM = {                                                           \
      .name = "chaotic_particle_" #NDIM,                                                                               \
      .doc = "Chaotic nonholonomic particle in R^" #NDIM " (m = " #M "), q = (x, y_1..y_m, z_1..z_m), M = I, "         \
             "V = (|q|^2 + z_1^2 z_2^2 [m >= 2] + sum y_i^2 z_i^2)/2 (odelab's ChaoticOscillator), constraint "        \
             "xdot + sum y_i zdot_i = 0 (spec/newmark.md 3.2 for m = 2). No exact solution.",                          \
      .n = NDIM,                                                                                                       \
      .k = 1,                                                                                                          \
      .q0 = q0_##NDIM,                                                                                                 \
      .v0 = v0_##NDIM,                                                                                                 \
      .ic_doc = IC_DOC,                                                                                                \
      .mass = mass_##NDIM,                                                                                             \
      .potential = potential_##NDIM,                                                                                   \
      .grad_potential = grad_##NDIM,                                                                                   \
      .hess_potential = hess_##NDIM,                                                                                   \
      .constraints = constraints_##NDIM,                                                                               \
      .constraints_jacobian = dA_##NDIM,                                                                               \
      .kernels = &kernels_##NDIM,                                                                                      \
      .knowledge = &knowledge_##NDIM,                                                                                  \
      .constraints_solved_first = 1, /* xdot = -sum y_i zdot_i */                                                      \
  }

CHAOTIC_PARTICLE(1, 3, "preset fig2_block: q0 = (1, 1, -1), v0 = (0.05, -0.5, -0.05), E0 = 2.1275");
CHAOTIC_PARTICLE(2, 5, "preset fig2: q0 = (1, 0, 1, -1, -1), v0 = (0.05, 0.5, -0.5, -0.1, -0.05), E0 = 3.2575");
CHAOTIC_PARTICLE(3, 7, "preset odelab: q0 = (cos(pi/9), 0.6, 0.4, 0.2, 1, 1, 1), v0 = (0, sin(pi/9), 0, ...), "
                       "E0 = 3.06");
