/* The pendulum-driven continuously variable transmission (spec/newmark.md §3.3, from
 * Modin–Verdier): q = (x, y, ξ), M = I,
 *   V = ½(x² + y²) + cos ξ − (ε/2) sin 2ξ,   constraint ẏ + sin ξ ẋ = 0,  μ(q) = (sin ξ, 1, 0).
 * ξ is a decoupled pendulum driver (ξ̈ = sin ξ + ε cos 2ξ); ε ≠ 0 breaks reversibility. */
#include <math.h>
#include <string.h>

#include "systems/lane_kernels.h"

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

static double sin_2x(double x) { return sin(2 * x); }
static double cos_2x(double x) { return cos(2 * x); }

/* The formulas, written once for the scalar functions and the lane kernels, on a point q, ε = eps
 * and the sines and cosines of ξ and 2ξ the caller takes (per lane in the lane kernels: a vector
 * libm rounds otherwise); the matrices with every entry. ∇U = (x, y, −sin ξ − ε cos 2ξ) (spec
 * §3.3 [derived]). */
static inline NH_LANES_INLINE nh_vec3 gradient_at(double eps, nh_vec3 q, double sin_xi, double cos_2xi) {
  return (nh_vec3){q.x, q.y, -sin_xi - eps * cos_2xi};
}

static inline NH_LANES_INLINE nh_mat3 hessian_at(double eps, double cos_xi, double sin_2xi) {
  return (nh_mat3){{1, 0, 0}, {0, 1, 0}, {0, 0, -cos_xi + 2 * eps * sin_2xi}};
}

static inline NH_LANES_INLINE nh_vec3 constraints_at(double sin_xi) { return (nh_vec3){sin_xi, 1, 0}; }

static inline NH_LANES_INLINE nh_mat3 jacobian_at(double cos_xi) {
  return (nh_mat3){{0, 0, cos_xi}, {0, 0, 0}, {0, 0, 0}}; /* ∂μ_x/∂ξ */
}

static void grad_potential(const double *p, const double *q, double *g) {
  nh_store3(g, 1, 0, gradient_at(p[P_EPS], nh_load3(q, 1, 0), sin(q[XI]), cos_2x(q[XI])));
}

static void hess_potential(const double *p, const double *q, double *H) {
  nh_store_mat3(H, 1, 0, hessian_at(p[P_EPS], cos(q[XI]), sin_2x(q[XI])));
}

static void constraints(const double *p NH_UNUSED, const double *q, double *A) {
  nh_store3(A, 1, 0, constraints_at(sin(q[XI])));
}

static void constraints_jacobian(const double *p NH_UNUSED, const double *q, double *dA) {
  nh_store_mat3(dA, 1, 0, jacobian_at(cos(q[XI])));
}

/* ---- the same on NH_LANES points (core/lanes.h) -------------------------------------------------- */

/* Each kernel takes its sines and cosines lane by lane (nh_lane_map, as the scalar functions call
 * them), then runs the arithmetic as one vectorized lane loop. The four functions of ξ keep their
 * last values (nh_lane_map_memo): at one point nh_newmark's residual needs sin ξ and cos ξ twice
 * each, and 2/3 of a CVT ensemble's time in lanes went to libm's sin and cos. */
static _Thread_local nh_lane_memo sin_memo = {.f = sin}, cos_memo = {.f = cos}, sin_2x_memo = {.f = sin_2x},
                                  cos_2x_memo = {.f = cos_2x};
static inline NH_LANES_INLINE void gradient_lanes_lanes(double eps, const double *q, const double *sin_xi,
                                                        const double *cos_2xi, double *g) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++)
    nh_store3(g, NH_LANES, l, gradient_at(eps, nh_load3(q, NH_LANES, l), sin_xi[l], cos_2xi[l]));
}
NH_LANES_ISA_VARIANTS(gradient_lanes, (double eps, const double *q, const double *s, const double *c2, double *g),
                      (eps, q, s, c2, g))

static void grad_of_lanes(const double *p, const double *q, double *g) {
  double s[NH_LANES], c2[NH_LANES];
  nh_lane_map_memo(&sin_memo, q + XI * NH_LANES, s), nh_lane_map_memo(&cos_2x_memo, q + XI * NH_LANES, c2);
  gradient_lanes(p[P_EPS], q, s, c2, g);
}

static inline NH_LANES_INLINE void hessian_lanes_lanes(double eps, const double *cos_xi, const double *sin_2xi,
                                                       double *H) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) nh_store_mat3(H, NH_LANES, l, hessian_at(eps, cos_xi[l], sin_2xi[l]));
}
NH_LANES_ISA_VARIANTS(hessian_lanes, (double eps, const double *c, const double *s2, double *H), (eps, c, s2, H))

static void hess_of_lanes(const double *p, const double *q, double *H) {
  double c[NH_LANES], s2[NH_LANES];
  nh_lane_map_memo(&cos_memo, q + XI * NH_LANES, c), nh_lane_map_memo(&sin_2x_memo, q + XI * NH_LANES, s2);
  hessian_lanes(p[P_EPS], c, s2, H);
}

static inline NH_LANES_INLINE void constraints_lanes_lanes(const double *sin_xi, double *A) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) nh_store3(A, NH_LANES, l, constraints_at(sin_xi[l]));
}
NH_LANES_ISA_VARIANTS(constraints_lanes, (const double *s, double *A), (s, A))

static void constraints_of_lanes(const double *p NH_UNUSED, const double *q, double *A) {
  double s[NH_LANES];
  nh_lane_map_memo(&sin_memo, q + XI * NH_LANES, s);
  constraints_lanes(s, A);
}

static inline NH_LANES_INLINE void jacobian_lanes_lanes(const double *cos_xi, double *dA) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) nh_store_mat3(dA, NH_LANES, l, jacobian_at(cos_xi[l]));
}
NH_LANES_ISA_VARIANTS(jacobian_lanes, (const double *c, double *dA), (c, dA))

static void jacobian_of_lanes(const double *p NH_UNUSED, const double *q, double *dA) {
  double c[NH_LANES];
  nh_lane_map_memo(&cos_memo, q + XI * NH_LANES, c);
  jacobian_lanes(c, dA);
}

static inline NH_LANES_INLINE void residual_lanes_lanes(const double *sin_xi, const double *v, double *out) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) out[l] = nh_residual_one3(constraints_at(sin_xi[l]), nh_load3(v, NH_LANES, l));
}
NH_LANES_ISA_VARIANTS(residual_lanes, (const double *s, const double *v, double *out), (s, v, out))

static void residual_of_lanes(const double *p NH_UNUSED, const double *q, const double *v, double *out) {
  double s[NH_LANES];
  nh_lane_map_memo(&sin_memo, q + XI * NH_LANES, s);
  residual_lanes(s, v, out);
}

/* nh_acceleration's generic path (M = I, one constraint; systems/lane_kernels.h) on every lane. */
static inline NH_LANES_INLINE void acceleration_lanes_lanes(double eps, const double *q, const double *v,
                                                            const double *sin_xi, const double *cos_xi,
                                                            const double *cos_2xi, double *a, double *lambda,
                                                            int *status) {
  double gram[NH_LANES];
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) {
    const nh_acceleration3 r =
        nh_acceleration_one3(NULL, gradient_at(eps, nh_load3(q, NH_LANES, l), sin_xi[l], cos_2xi[l]),
                             constraints_at(sin_xi[l]), jacobian_at(cos_xi[l]), nh_load3(v, NH_LANES, l));
    nh_store3(a, NH_LANES, l, r.a);
    lambda[l] = r.lambda, gram[l] = r.gram;
  }
  nh_lane_gram_status(gram, status);
}
NH_LANES_ISA_VARIANTS(acceleration_lanes,
                      (double eps, const double *q, const double *v, const double *s, const double *c, const double *c2,
                       double *a, double *lambda, int *status),
                      (eps, q, v, s, c, c2, a, lambda, status))

static void acceleration_of_lanes(const double *p, const double *t NH_UNUSED, const double *q, const double *v,
                                  double *a, double *lambda, int *status) {
  double s[NH_LANES], c[NH_LANES], c2[NH_LANES];
  const double *xi = q + XI * NH_LANES;
  nh_lane_map_memo(&sin_memo, xi, s), nh_lane_map_memo(&cos_memo, xi, c), nh_lane_map_memo(&cos_2x_memo, xi, c2);
  acceleration_lanes(p[P_EPS], q, v, s, c, c2, a, lambda, status);
}

static const nh_system_kernels kernels = {
    .acceleration_lanes = acceleration_of_lanes,
    .constraint_residual_lanes = residual_of_lanes,
    .grad_potential_lanes = grad_of_lanes,
    .constraints_lanes = constraints_of_lanes,
    .hess_potential_lanes = hess_of_lanes,
    .constraints_jacobian_lanes = jacobian_of_lanes,
};

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
    .kernels = &kernels,
    .knowledge = &knowledge,
};
