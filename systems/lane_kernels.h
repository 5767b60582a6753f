/* What the lane kernels of the systems with n = 3 (nh_system_kernels in systems/system.h,
 * core/lanes.h) share: a point, a vector or a 3×3 matrix by value (a lane loop keeps a lane's
 * numbers in registers; GCC vectorizes no lane loop over a local array), in and out of the lane
 * layout, and the generic code of systems/system.c that a lane kernel must reproduce where the
 * system has no scalar kernel of its own: the constraint residual and the index-reduced
 * acceleration for one linear homogeneous constraint and a constant mass, operation for operation
 * (the same products, zeros included, summed in the same order from the same initial 0), so that
 * each lane gets nh_constraint_residual's and nh_acceleration's bits. */
#ifndef NH_SYSTEMS_LANE_KERNELS_H
#define NH_SYSTEMS_LANE_KERNELS_H

#include <math.h>
#include <string.h>

#include "core/linalg.h"
#include "systems/system.h"

/* Components 0, 1, 2 of a point, a velocity or a matrix row (the system's names: (x, y, z),
 * (x, y, ξ), (x, y, θ)). */
typedef struct {
  double x, y, z;
} nh_vec3;

/* A 3×3 matrix by rows (row-major in memory: row x is entries 0..2). */
typedef struct {
  nh_vec3 x, y, z;
} nh_mat3;

/* Component i of x at x[i*stride + l]: the scalar functions' vectors (stride 1, l 0) and lane l of
 * NH_LANES (stride NH_LANES). */
static inline NH_LANES_INLINE nh_vec3 nh_load3(const double *x, int stride, int l) {
  return (nh_vec3){x[0 * stride + l], x[1 * stride + l], x[2 * stride + l]};
}

static inline NH_LANES_INLINE void nh_store3(double *x, int stride, int l, nh_vec3 w) {
  x[0 * stride + l] = w.x, x[1 * stride + l] = w.y, x[2 * stride + l] = w.z;
}

static inline NH_LANES_INLINE nh_mat3 nh_load_mat3(const double *m, int stride, int l) {
  return (nh_mat3){nh_load3(m, stride, l), nh_load3(m + 3 * stride, stride, l), nh_load3(m + 6 * stride, stride, l)};
}

/* Every entry, zeros included: what the scalar functions write after their memset. */
static inline NH_LANES_INLINE void nh_store_mat3(double *m, int stride, int l, nh_mat3 a) {
  nh_store3(m, stride, l, a.x), nh_store3(m + 3 * stride, stride, l, a.y), nh_store3(m + 6 * stride, stride, l, a.z);
}

/* f(x) on every lane of one component x (lanes): the transcendental functions a system's formulas
 * take are called per lane, as the scalar path calls them (a vector libm rounds otherwise), and the
 * lane loops that follow read them from out. */
static inline void nh_lane_map(double (*f)(double), const double *x, double *out) {
  for (int l = 0; l < NH_LANES; l++) out[l] = f(x[l]);
}

/* nh_lane_map of one function f that keeps its last lane group's arguments and values: the kernels
 * a method calls in turn at one point (nh_newmark's residual asks ∇V, ∇²V, A and DA at q1, each
 * taking sin ξ or cos ξ) then call f once there. f is a function of its argument alone, so a value
 * kept is the bits a call gives; the arguments are compared as bits (−0 is not 0, a NaN is its own
 * payload). Declared `static _Thread_local nh_lane_memo name = {.f = f};` in a system file: one per
 * function and thread, as OpenMP's threads step lane groups of their own. */
typedef struct {
  double (*f)(double);
  int filled;
  double x[NH_LANES], y[NH_LANES];
} nh_lane_memo;

static inline void nh_lane_map_memo(nh_lane_memo *m, const double *x, double *out) {
  if (!m->filled || memcmp(m->x, x, sizeof m->x) != 0) {
    nh_lane_map(m->f, x, m->y);
    memcpy(m->x, x, sizeof m->x);
    m->filled = 1;
  }
  memcpy(out, m->y, sizeof m->y);
}

/* a·b summed as the generic loops sum, s = 0; s += a_i b_i. */
static inline NH_LANES_INLINE double nh_dot3(nh_vec3 a, nh_vec3 b) {
  double s = 0;
  s += a.x * b.x;
  s += a.y * b.y;
  s += a.z * b.z;
  return s;
}

/* nh_matvec: row by row. */
static inline NH_LANES_INLINE nh_vec3 nh_matvec3(nh_mat3 m, nh_vec3 w) {
  return (nh_vec3){nh_dot3(m.x, w), nh_dot3(m.y, w), nh_dot3(m.z, w)};
}

/* nh_constraint_residual for one constraint μ with no affine part: nh_constraint_values' r = 0 +
 * Σ_i μ_i v_i (every product: 0·x is −0 for negative x), then fmax(0, |r|) written as the select
 * it is on |r| (NaN to 0), which vectorizes. */
static inline NH_LANES_INLINE double nh_residual_one3(nh_vec3 A, nh_vec3 v) {
  const double m = fabs(nh_dot3(A, v));
  return m > 0 ? m : 0;
}

/* M⁻¹ of a constant mass as nh_system_init caches it (the same Cholesky inverse), into Minv (3×3);
 * returns 1 when M is exactly the identity (nh_system.unit_mass: no M⁻¹ products), else 0. */
static inline int nh_lane_mass_inverse(void (*mass)(const double *p, const double *q, double *M), const double *p,
                                       double *Minv) {
  int unit = 1;
  mass(p, NULL, Minv);
  for (int i = 0; i < 9; i++) unit &= Minv[i] == (i % 4 == 0);
  nh_spd_invert(3, Minv);
  return unit;
}

/* Σ_j row_j v_j vi added to s term by term: row i of nh_curvature_term's sum. */
static inline NH_LANES_INLINE double nh_curvature_row3(double s, nh_vec3 row, nh_vec3 v, double vi) {
  s += row.x * v.x * vi;
  s += row.y * v.y * vi;
  s += row.z * v.z * vi;
  return s;
}

/* nh_acceleration's generic path (systems/system.c: nh_free_force, constraint_gram,
 * nh_curvature_term, multiplier_and_force, nh_spd_solve) for one linear homogeneous constraint
 * μ = A, its Jacobian dA (dA.x = ∂μ_x/∂q), a constant mass (Minv NULL: M = I), no forces, no
 * curvature kernel: f = −∇V (g), W = M⁻¹μ, C = μ·W, λ = (−W·f − (Dμ[v])v)/C, a = M⁻¹(f + μλ).
 * gram is C, from which nh_lane_gram_status makes nh_acceleration's return value (a and λ hold no
 * result where C is not positive and finite, as nh_acceleration leaves them). */
typedef struct {
  nh_vec3 a;
  double lambda; /* nh_multiplier's λ where C is positive and finite */
  double gram;
} nh_acceleration3;

/* nh_acceleration's return value from each lane's C (nh_acceleration3.gram): 0, or -1 where C is not
 * positive and finite. A pass of its own after the lane loop that stores C: an int stored in that
 * loop makes GCC lay all of it out in 256-bit vectors under AVX-512, and a 512-bit load of its
 * results in the next lane pass then waits for two stores to complete (no store forwarding; with the
 * chaotic particle's acceleration split this way, its rk4 ensemble took 0.92-0.94 of the time). */
static inline void nh_lane_gram_status(const double *gram, int *status) {
  for (int l = 0; l < NH_LANES; l++) status[l] = gram[l] > 0 && isfinite(gram[l]) ? 0 : -1;
}

static inline NH_LANES_INLINE nh_acceleration3 nh_acceleration_one3(const double *Minv, nh_vec3 g, nh_vec3 A,
                                                                    nh_mat3 dA, nh_vec3 v) {
  nh_vec3 f = {-g.x, -g.y, -g.z};
  const nh_vec3 W = Minv ? nh_matvec3(nh_load_mat3(Minv, 1, 0), A) : A;
  const double C = nh_dot3(A, W);
  double curv = 0;
  curv = nh_curvature_row3(curv, dA.x, v, v.x);
  curv = nh_curvature_row3(curv, dA.y, v, v.y);
  curv = nh_curvature_row3(curv, dA.z, v, v.z);
  const double lambda = (-nh_dot3(W, f) - curv) / C;
  f.x += A.x * lambda, f.y += A.y * lambda, f.z += A.z * lambda;
  return (nh_acceleration3){Minv ? nh_matvec3(nh_load_mat3(Minv, 1, 0), f) : f, lambda, C};
}

#endif
