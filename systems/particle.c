/* The nonholonomic particle in R³ (spec/newmark.md §3.1, spec/discretization.md §3.2):
 * L = ½|v|² − V(q), constraint ż − y ẋ = 0, μ(q) = (−y, 0, 1), with the optional harmonic
 * potential V = ½ ω² (x² + y²) (spec/discretization.md §3.3, spec/rattle.md §4 C); ω² = 0 by
 * default, the free particle of the papers. */
#include <math.h>
#include <string.h>

#include "systems/lane_kernels.h"

enum { P_OMEGA2, P_COUNT };

static const nh_param_desc params[] = {
    [P_OMEGA2] = {"omega2", NH_PARAM_REAL, 0, 0, 100,
     "omega^2 of the harmonic potential V = omega2 (x^2 + y^2)/2 (spec/discretization.md 3.3); "
     "0 = free particle, the only case with an exact solution",
     1},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static void mass(const double *p NH_UNUSED, const double *q NH_UNUSED, double *M) { nh_unit_mass_matrix(3, M); }

static double potential(const double *p, const double *q) {
  return 0.5 * p[P_OMEGA2] * (q[0] * q[0] + q[1] * q[1]);
}

/* The formulas, written once for the scalar functions and the lane kernels, on a point q and
 * ω² = w; the matrices with every entry. */
static inline NH_LANES_INLINE nh_vec3 gradient_at(double w, nh_vec3 q) { return (nh_vec3){w * q.x, w * q.y, 0}; }

static inline NH_LANES_INLINE nh_mat3 hessian_at(double w) { return (nh_mat3){{w, 0, 0}, {0, w, 0}, {0, 0, 0}}; }

static inline NH_LANES_INLINE nh_vec3 constraints_at(nh_vec3 q) { return (nh_vec3){-q.y, 0, 1}; }

static inline NH_LANES_INLINE nh_mat3 jacobian_at(void) {
  return (nh_mat3){{0, -1, 0}, {0, 0, 0}, {0, 0, 0}}; /* ∂μ_x/∂y = −1 */
}

static void grad_potential(const double *p, const double *q, double *g) {
  nh_store3(g, 1, 0, gradient_at(p[P_OMEGA2], nh_load3(q, 1, 0)));
}

static void hess_potential(const double *p, const double *q NH_UNUSED, double *H) {
  nh_store_mat3(H, 1, 0, hessian_at(p[P_OMEGA2]));
}

static void constraints(const double *p NH_UNUSED, const double *q, double *A) {
  nh_store3(A, 1, 0, constraints_at(nh_load3(q, 1, 0)));
}

static void constraints_jacobian(const double *p NH_UNUSED, const double *q NH_UNUSED, double *dA) {
  nh_store_mat3(dA, 1, 0, jacobian_at());
}

/* ---- the same on NH_LANES points (core/lanes.h) -------------------------------------------------- */

static inline NH_LANES_INLINE void gradient_lanes_lanes(double w, const double *q, double *g) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) nh_store3(g, NH_LANES, l, gradient_at(w, nh_load3(q, NH_LANES, l)));
}
NH_LANES_ISA_VARIANTS(gradient_lanes, (double w, const double *q, double *g), (w, q, g))

static void grad_of_lanes(const double *p, const double *q, double *g) { gradient_lanes(p[P_OMEGA2], q, g); }

static inline NH_LANES_INLINE void hessian_lanes_lanes(double w, double *H) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) nh_store_mat3(H, NH_LANES, l, hessian_at(w));
}
NH_LANES_ISA_VARIANTS(hessian_lanes, (double w, double *H), (w, H))

static void hess_of_lanes(const double *p, const double *q NH_UNUSED, double *H) { hessian_lanes(p[P_OMEGA2], H); }

static inline NH_LANES_INLINE void constraints_lanes_lanes(const double *q, double *A) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) nh_store3(A, NH_LANES, l, constraints_at(nh_load3(q, NH_LANES, l)));
}
NH_LANES_ISA_VARIANTS(constraints_lanes, (const double *q, double *A), (q, A))

static void constraints_of_lanes(const double *p NH_UNUSED, const double *q, double *A) { constraints_lanes(q, A); }

static inline NH_LANES_INLINE void jacobian_lanes_lanes(double *dA) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) nh_store_mat3(dA, NH_LANES, l, jacobian_at());
}
NH_LANES_ISA_VARIANTS(jacobian_lanes, (double *dA), (dA))

static void jacobian_of_lanes(const double *p NH_UNUSED, const double *q NH_UNUSED, double *dA) { jacobian_lanes(dA); }

static inline NH_LANES_INLINE void residual_lanes_lanes(const double *q, const double *v, double *out) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++)
    out[l] = nh_residual_one3(constraints_at(nh_load3(q, NH_LANES, l)), nh_load3(v, NH_LANES, l));
}
NH_LANES_ISA_VARIANTS(residual_lanes, (const double *q, const double *v, double *out), (q, v, out))

static void residual_of_lanes(const double *p NH_UNUSED, const double *q, const double *v, double *out) {
  residual_lanes(q, v, out);
}

/* nh_acceleration's generic path (M = I, one constraint; systems/lane_kernels.h) on every lane. */
static inline NH_LANES_INLINE void acceleration_lanes_lanes(double w, const double *q, const double *v, double *a,
                                                            double *lambda, int *status) {
  double gram[NH_LANES];
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) {
    const nh_vec3 x = nh_load3(q, NH_LANES, l);
    const nh_acceleration3 r =
        nh_acceleration_one3(NULL, gradient_at(w, x), constraints_at(x), jacobian_at(), nh_load3(v, NH_LANES, l));
    nh_store3(a, NH_LANES, l, r.a);
    lambda[l] = r.lambda, gram[l] = r.gram;
  }
  nh_lane_gram_status(gram, status);
}
NH_LANES_ISA_VARIANTS(acceleration_lanes,
                      (double w, const double *q, const double *v, double *a, double *lambda, int *status),
                      (w, q, v, a, lambda, status))

static void acceleration_of_lanes(const double *p, const double *t NH_UNUSED, const double *q, const double *v,
                                  double *a, double *lambda, int *status) {
  acceleration_lanes(p[P_OMEGA2], q, v, a, lambda, status);
}

static const nh_system_kernels kernels = {
    .acceleration_lanes = acceleration_of_lanes,
    .constraint_residual_lanes = residual_of_lanes,
    .grad_potential_lanes = grad_of_lanes,
    .constraints_lanes = constraints_of_lanes,
    .hess_potential_lanes = hess_of_lanes,
    .constraints_jacobian_lanes = jacobian_of_lanes,
};

/* Closed form of the free particle (spec/discretization.md §3.2): with c = ẋ0 √(1+y0²) and
 * w = ẏ0, y = y0 + w t, ẋ = c/√(1+y²), x = x0 + (c/w)(asinh y − asinh y0),
 * z = z0 + (c/w)(√(1+y²) − √(1+y0²)), ż = y ẋ; for w = 0 the motion is uniform.
 * With the harmonic potential there is no closed form (§3.3): the state is set to NaN and −1
 * returned, so a caller that ignores the status cannot mistake it for a solution. */
static int exact(const double *p, const nh_state *x0, double t, nh_state *x) {
  memset(x, 0, sizeof *x);
  x->t = t;
  if (p[P_OMEGA2] != 0) {
    for (int i = 0; i < 3; i++) x->q[i] = x->v[i] = NAN;
    return -1;
  }
  const double y0 = x0->q[1], u0 = x0->v[0], w = x0->v[1];
  const double y = y0 + w * (t - x0->t);
  const double c = u0 * sqrt(1 + y0 * y0);
  x->q[1] = y;
  x->v[1] = w;
  x->v[0] = c / sqrt(1 + y * y);
  x->v[2] = y * x->v[0];
  if (w == 0) {
    x->q[0] = x0->q[0] + u0 * (t - x0->t);
    x->q[2] = x0->q[2] + y0 * u0 * (t - x0->t);
  } else {
    x->q[0] = x0->q[0] + (c / w) * (asinh(y) - asinh(y0));
    x->q[2] = x0->q[2] + (c / w) * (sqrt(1 + y * y) - sqrt(1 + y0 * y0));
  }
  return 0;
}

/* Initial conditions of the papers; each satisfies ż0 = y0 ẋ0. */
static const double newmark_q[] = {1, 1, -1}, newmark_v[] = {1, -1, 1};
static const double discretization_q[] = {0, 0.3, 0}, discretization_v[] = {1, 0.8, 0.3};
static const double harmonic_q[] = {0.2, 0.3, 0}, harmonic_v[] = {1, 0.8, 0.3};
static const double rattle_q[] = {0, 1, 0}, rattle_v[] = {1, 1, 1};

static const nh_preset presets[] = {
    {"newmark", "q0 = (1, 1, -1), v0 = (1, -1, 1), E0 = 1.5, free particle (spec/newmark.md 3.1, paper Fig. 1)",
     newmark_q, newmark_v, "omega2=0"},
    {"discretization",
     "q0 = (0, 0.3, 0), v0 = (1, 0.8, 0.3), free particle, T = 2 suggested (spec/discretization.md 3.2)",
     discretization_q, discretization_v, "omega2=0"},
    {"harmonic",
     "q0 = (0.2, 0.3, 0), v0 = (1, 0.8, 0.3) with V = (x^2 + y^2)/2 (omega2 = 1), T = 3 suggested "
     "(spec/discretization.md 3.3)",
     harmonic_q, harmonic_v, "omega2=1"},
    {"rattle",
     "q0 = (0, 1, 0), v0 = (1, 1, 1), free particle, T = 10 suggested (spec/rattle.md 4 C); "
     "set omega2 = 1 for its harmonic case",
     rattle_q, rattle_v, "omega2=0"},
};

static const nh_system_knowledge knowledge = {
    .exact = exact,
    NH_SYSTEM_PRESETS(presets),
    .sample_box = 1,
    .sampler_doc = "generic (spec/newmark.md 6 A10): q uniform in [-1,1]^3 with V(q) < E - 0.1, v ~ N(0, I) "
                   "projected on D (M = I) and rescaled to kinetic energy E - V(q); V = 0 when omega2 = 0, so E > 0.1",
};

const nh_system_type nh_system_particle = {
    .name = "particle",
    .doc = "Nonholonomic particle in R^3, L = |v|^2/2 - V, constraint zdot = y xdot, optional harmonic "
           "potential V = omega2 (x^2 + y^2)/2; exact solution for omega2 = 0 (spec/newmark.md 3.1, "
           "spec/discretization.md 3.2-3.3).",
    .n = 3,
    .k = 1,
    NH_SYSTEM_PARAMS(params),
    .q0 = newmark_q,
    .v0 = newmark_v,
    .ic_doc = "q0 = (1, 1, -1), v0 = (1, -1, 1), E0 = 1.5 (paper Fig. 1; preset \"newmark\")",
    NH_SYSTEM_MECHANICS,
    .capabilities = NH_CAP_PARTICLE_STRUCTURE, /* the closed forms js_p1, js_p2new, js_p2orig */
    .kernels = &kernels,
    .knowledge = &knowledge,
};
