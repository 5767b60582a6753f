/* The chaotic nonholonomic particle in R⁵ (spec/newmark.md §3.2, from McLachlan–Perlmutter):
 * q = (x, y1, y2, z1, z2), M = I,
 * V = ½(x² + y1² + y2² + z1² + z2² + z1²z2² + y1²z1² + y2²z2²),
 * constraint ẋ + y1 ż1 + y2 ż2 = 0, μ(q) = (1, 0, 0, y1, y2). */
#include <math.h>
#include <string.h>

#include "systems/system.h"

enum { X, Y1, Y2, Z1, Z2, N = 5 };

static void mass(const double *p NH_UNUSED, const double *q NH_UNUSED, double *M) { nh_unit_mass_matrix(N, M); }

/* One point's q, v or a, components by name: ∇V and the acceleration are written once on these, for
 * the scalar functions and for the lanes (a lane loop keeps a lane's numbers in registers). */
typedef struct {
  double x, y1, y2, z1, z2;
} vec5;

typedef struct {
  vec5 a;
  double lambda;
} acceleration5;

static inline NH_LANES_INLINE vec5 load5(const double *x, int stride, int l) {
  return (vec5){x[X * stride + l], x[Y1 * stride + l], x[Y2 * stride + l], x[Z1 * stride + l], x[Z2 * stride + l]};
}

static inline NH_LANES_INLINE void store5(double *x, int stride, int l, vec5 w) {
  x[X * stride + l] = w.x, x[Y1 * stride + l] = w.y1, x[Y2 * stride + l] = w.y2, x[Z1 * stride + l] = w.z1,
                 x[Z2 * stride + l] = w.z2;
}

static inline NH_LANES_INLINE double potential_at(vec5 q) {
  const double x = q.x, y1 = q.y1, y2 = q.y2, z1 = q.z1, z2 = q.z2;
  return 0.5 *
         (x * x + y1 * y1 + y2 * y2 + z1 * z1 + z2 * z2 + z1 * z1 * z2 * z2 + y1 * y1 * z1 * z1 + y2 * y2 * z2 * z2);
}

static double potential(const double *p NH_UNUSED, const double *q) { return potential_at(load5(q, 1, 0)); }

static inline NH_LANES_INLINE vec5 gradient_at(vec5 q) {
  const double x = q.x, y1 = q.y1, y2 = q.y2, z1 = q.z1, z2 = q.z2;
  return (vec5){x, y1 + y1 * z1 * z1, y2 + y2 * z2 * z2, z1 + z1 * z2 * z2 + y1 * y1 * z1,
                z2 + z1 * z1 * z2 + y2 * y2 * z2};
}

static void grad_potential(const double *p NH_UNUSED, const double *q, double *g) {
  store5(g, 1, 0, gradient_at(load5(q, 1, 0)));
}

/* The nonzero entries of ∇²V: the diagonal and the three symmetric pairs. */
typedef struct {
  double xx, y1y1, y2y2, z1z1, z2z2, y1z1, y2z2, z1z2;
} hessian5;

/* Written once for hess_potential and hess_potential_lanes. */
static inline NH_LANES_INLINE hessian5 hessian_at(vec5 q) {
  const double y1 = q.y1, y2 = q.y2, z1 = q.z1, z2 = q.z2;
  return (hessian5){1,           1 + z1 * z1, 1 + z2 * z2, 1 + z2 * z2 + y1 * y1, 1 + z1 * z1 + y2 * y2,
                    2 * y1 * z1, 2 * y2 * z2, 2 * z1 * z2};
}

/* h into H (N×N, entry (i, j) of lane l at H[(i*N + j)*stride + l]), row by row, every entry, zeros
 * included: in lanes a memset of the whole matrix first is a `rep stos` of 1600 bytes, which took
 * more time than the rest of the kernel. */
static inline NH_LANES_INLINE void store_hessian(double *H, int stride, int l, hessian5 h) {
  store5(H + X * N * stride, stride, l, (vec5){h.xx, 0, 0, 0, 0});
  store5(H + Y1 * N * stride, stride, l, (vec5){0, h.y1y1, 0, h.y1z1, 0});
  store5(H + Y2 * N * stride, stride, l, (vec5){0, 0, h.y2y2, 0, h.y2z2});
  store5(H + Z1 * N * stride, stride, l, (vec5){0, h.y1z1, 0, h.z1z1, h.z1z2});
  store5(H + Z2 * N * stride, stride, l, (vec5){0, 0, h.y2z2, h.z1z2, h.z2z2});
}

static void hess_potential(const double *p NH_UNUSED, const double *q, double *H) {
  store_hessian(H, 1, 0, hessian_at(load5(q, 1, 0)));
}

static void constraints(const double *p NH_UNUSED, const double *q, double *A) {
  A[X] = 1;
  A[Y1] = 0;
  A[Y2] = 0;
  A[Z1] = q[Y1];
  A[Z2] = q[Y2];
}

/* The constant Dμ (N×N, ∂μ_i/∂q_j at dA[(i*N + j)*stride + l]): its rows x, y1, y2 are 0, which the
 * callers write; rows z1 and z2, written here with their zeros, hold the nonzero entries ∂μ_z1/∂y1 =
 * ∂μ_z2/∂y2 = 1. Written once for constraints_jacobian and its lanes. */
static inline NH_LANES_INLINE void store_jacobian_z(double *dA, int stride, int l) {
  store5(dA + Z1 * N * stride, stride, l, (vec5){0, 1, 0, 0, 0});
  store5(dA + Z2 * N * stride, stride, l, (vec5){0, 0, 1, 0, 0});
}

static void constraints_jacobian(const double *p NH_UNUSED, const double *q NH_UNUSED, double *dA) {
  memset(dA, 0, Z1 * N * sizeof *dA);
  store_jacobian_z(dA, 1, 0);
}

/* (Dμ[v])v = v_y1 v_z1 + v_y2 v_z2: the two entries of constraints_jacobian, written out. */
static void constraint_curvature(const double *p NH_UNUSED, const double *q NH_UNUSED, const double *v, double *out) {
  out[0] = v[Y1] * v[Z1] + v[Y2] * v[Z2];
}

/* D_l = Σ_i ∂_l μ_i w_i: the two entries of constraints_jacobian, written out. */
static inline NH_LANES_INLINE vec5 derivative_at(vec5 w) { return (vec5){0, w.z1, w.z2, 0, 0}; }

static void constraint_derivative(const double *p NH_UNUSED, const double *q NH_UNUSED, const double *w, double *D) {
  store5(D, 1, 0, derivative_at(load5(w, 1, 0)));
}

/* The index-reduced ODE in closed form (M = I, one constraint): μ·a + (Dμ[v])v = 0 with
 * a = −∇V + μλ gives λ = (μ·∇V − (Dμ[v])v)/|μ|², |μ|² = 1 + y1² + y2²; ∇V and (Dμ[v])v as
 * grad_potential and constraint_curvature compute them. */
static inline NH_LANES_INLINE acceleration5 acceleration_at(vec5 q, vec5 v) {
  const double y1 = q.y1, y2 = q.y2;
  const vec5 g = gradient_at(q);
  const double curv = v.y1 * v.z1 + v.y2 * v.z2;
  const double l = (g.x + y1 * g.z1 + y2 * g.z2 - curv) / (1 + y1 * y1 + y2 * y2);
  return (acceleration5){{-g.x + l, -g.y1, -g.y2, -g.z1 + y1 * l, -g.z2 + y2 * l}, l};
}

static int acceleration(const double *p NH_UNUSED, double t NH_UNUSED, const double *q, const double *v, double *a,
                        double *lambda) {
  const acceleration5 r = acceleration_at(load5(q, 1, 0), load5(v, 1, 0));
  store5(a, 1, 0, r.a);
  lambda[0] = r.lambda;
  return 0;
}

/* ---- the same on NH_LANES points (core/lanes.h) -------------------------------------------------- */

static inline NH_LANES_INLINE void acceleration_lanes_lanes(const double *q, const double *v, double *a, double *lambda,
                                                            int *status) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) {
    const acceleration5 r = acceleration_at(load5(q, NH_LANES, l), load5(v, NH_LANES, l));
    store5(a, NH_LANES, l, r.a);
    lambda[l] = r.lambda;
  }
  /* A pass of its own: an int stored in the loop above made GCC lay it out in 256-bit vectors
   * under AVX-512 (systems/lane_kernels.h, nh_lane_gram_status). */
  for (int l = 0; l < NH_LANES; l++) status[l] = 0;
}
NH_LANES_ISA_VARIANTS(acceleration_lanes, (const double *q, const double *v, double *a, double *lambda, int *status),
                      (q, v, a, lambda, status))

static void acceleration_of_lanes(const double *p NH_UNUSED, const double *t NH_UNUSED, const double *q,
                                  const double *v, double *a, double *lambda, int *status) {
  acceleration_lanes(q, v, a, lambda, status);
}

/* nh_constraint_residual: |0 + μ·v| summed as nh_constraint_values sums it (μ's 1 and 0 entries
 * multiplied in: 0·x is −0 for negative x), then fmax(0, ·) written as the select it is here (NaN
 * to 0), which vectorizes. */
static inline NH_LANES_INLINE void residual_lanes_lanes(const double *q, const double *v, double *out) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) {
    const vec5 x = load5(q, NH_LANES, l), w = load5(v, NH_LANES, l);
    double r = 0;
    r += 1 * w.x;
    r += 0 * w.y1;
    r += 0 * w.y2;
    r += x.y1 * w.z1;
    r += x.y2 * w.z2;
    const double m = fabs(r);
    out[l] = m > 0 ? m : 0;
  }
}
NH_LANES_ISA_VARIANTS(residual_lanes, (const double *q, const double *v, double *out), (q, v, out))

static inline NH_LANES_INLINE void gradient_lanes_lanes(const double *q, double *g) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) store5(g, NH_LANES, l, gradient_at(load5(q, NH_LANES, l)));
}
NH_LANES_ISA_VARIANTS(gradient_lanes, (const double *q, double *g), (q, g))

static void grad_of_lanes(const double *p NH_UNUSED, const double *q, double *g) { gradient_lanes(q, g); }

/* μ(q) = (1, 0, 0, y1, y2) per lane, as constraints writes it. */
static inline NH_LANES_INLINE void constraints_lanes_lanes(const double *q, double *A) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++)
    store5(A, NH_LANES, l, (vec5){1, 0, 0, q[Y1 * NH_LANES + l], q[Y2 * NH_LANES + l]});
}
NH_LANES_ISA_VARIANTS(constraints_lanes, (const double *q, double *A), (q, A))

static void constraints_of_lanes(const double *p NH_UNUSED, const double *q, double *A) { constraints_lanes(q, A); }

static inline NH_LANES_INLINE void hessian_lanes_lanes(const double *q, double *H) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) store_hessian(H, NH_LANES, l, hessian_at(load5(q, NH_LANES, l)));
}
NH_LANES_ISA_VARIANTS(hessian_lanes, (const double *q, double *H), (q, H))

static void hess_of_lanes(const double *p NH_UNUSED, const double *q, double *H) { hessian_lanes(q, H); }

static inline NH_LANES_INLINE void jacobian_lanes_lanes(double *dA) {
  nh_lanes_zero_rows(dA, Z1 * N);
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) store_jacobian_z(dA, NH_LANES, l);
}
NH_LANES_ISA_VARIANTS(jacobian_lanes, (double *dA), (dA))

static void jacobian_of_lanes(const double *p NH_UNUSED, const double *q NH_UNUSED, double *dA) { jacobian_lanes(dA); }

static void residual_of_lanes(const double *p NH_UNUSED, const double *q, const double *v, double *out) {
  residual_lanes(q, v, out);
}

static const double q0[] = {1, 0, 1, -1, -1};
static const double v0[] = {0.05, 0.5, -0.5, -0.1, -0.05};

static inline NH_LANES_INLINE void potential_lanes_lanes(const double *q, double *V) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) V[l] = potential_at(load5(q, NH_LANES, l));
}
NH_LANES_ISA_VARIANTS(potential_lanes, (const double *q, double *V), (q, V))

static void potential_of_lanes(const double *p NH_UNUSED, const double *q, double *V) { potential_lanes(q, V); }

static inline NH_LANES_INLINE void derivative_lanes_lanes(const double *w, double *D) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) store5(D, NH_LANES, l, derivative_at(load5(w, NH_LANES, l)));
}
NH_LANES_ISA_VARIANTS(derivative_lanes, (const double *w, double *D), (w, D))

static void derivative_of_lanes(const double *p NH_UNUSED, const double *q NH_UNUSED, const double *w, double *D) {
  derivative_lanes(w, D);
}

static const nh_system_kernels kernels = {
    .constraint_curvature = constraint_curvature,
    .constraint_derivative = constraint_derivative,
    .acceleration = acceleration,
    .acceleration_lanes = acceleration_of_lanes,
    .constraint_residual_lanes = residual_of_lanes,
    .grad_potential_lanes = grad_of_lanes,
    .constraints_lanes = constraints_of_lanes,
    .hess_potential_lanes = hess_of_lanes,
    .constraints_jacobian_lanes = jacobian_of_lanes,
    .potential_lanes = potential_of_lanes,
    .constraint_derivative_lanes = derivative_of_lanes,
};

static const nh_system_knowledge knowledge = {
    .sample_box = 1,
    .sampler_doc = "generic (spec/newmark.md 6 A10): q uniform in [-1,1]^5 with V(q) < E - 0.1, v ~ N(0, I) "
                   "projected on D (M = I) and rescaled to kinetic energy E - V(q); the paper's Fig. 3 ensemble "
                   "uses E = 1.535",
};

const nh_system_type nh_system_chaotic_particle = {
    .name = "chaotic_particle",
    .doc = "Chaotic nonholonomic particle in R^5 with quartic potential, constraint "
           "xdot + y1 z1dot + y2 z2dot = 0 (spec/newmark.md 3.2).",
    .n = N,
    .k = 1,
    .params = NULL,
    .nparams = 0,
    .q0 = q0,
    .v0 = v0,
    .ic_doc = "q0 = (1, 0, 1, -1, -1), v0 = (0.05, 0.5, -0.5, -0.1, -0.05), E0 = 3.2575 (paper Fig. 2)",
    NH_SYSTEM_MECHANICS,
    .kernels = &kernels,
    .knowledge = &knowledge,
    .constraints_solved_first = 1, /* xdot = -(y1 z1dot + y2 z2dot) */
};
