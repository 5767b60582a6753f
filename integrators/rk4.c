/* Classical 4-stage RK4, two forms (one family, one stage routine):
 *   rk4          on the index-reduced ODE q̇ = v, v̇ = M⁻¹(−∇V + Aᵀλ(q,v)), no projection
 *                (spec/newmark.md §2.10, §6 A5). Does not preserve the constraint.
 *   rk4_reduced  on the reduced ODE of (q, w), w = the last n − k velocities, for a system whose
 *                constraints are solved for the first k (constraints_solved_first: A = [I_k | B(q)]):
 *                at every stage v_a = −(B(q) w + b(q))_a, a < k, so q̇ = v(q, w) and ẇ is the
 *                index-reduced acceleration's last n − k components. On the falling disk this is the
 *                spec's reduced (θ, ϕ, ψ) ODE with X, Y integrated from (4.11) (spec/herglotz.md §3.2,
 *                §5 item 4): the nodes keep A(q)v + b = 0 by construction, to round-off.
 * Cost per step: 4 right-hand sides, each one evaluation of ∇V and (k > 0) of A(q); rk4_reduced
 * evaluates A(q) once more per stage and at the end. No multiplier of its own. */
#include <stddef.h>
#include <stdio.h>

#include "integrators/integrator.h"

/* v_a = −(Σ_{i≥k} A_ai(q) v_i + b_a(q)) for a < k: the dependent velocities of a system whose
 * constraints are solved for them (A's leading k×k block is the identity). */
static void complete_velocity(const nh_system *sys, const double *q, double *v, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  double A[NH_MAX_K * NH_MAX_N], b[NH_MAX_K] = {0};
  sys->type->constraints(sys->p, q, A);
  if (sys->type->affine) sys->type->affine->values(sys->p, q, b);
  cost->constraint_evals++;
  for (int a = 0; a < k; a++) {
    double s = b[a];
    for (int i = k; i < n; i++) s += A[a * n + i] * v[i];
    v[a] = -s;
  }
}

/* Stage derivative at (q + s dq, v + s dv); dq = dv = NULL for the first stage. reduced: the first
 * k velocities are not integrated but completed from the constraints. */
static int stage(const nh_system *sys, const nh_state *x, const double *dq, const double *dv, double s, int reduced,
                 double *kq, double *kv, nh_cost *cost) {
  double q[NH_MAX_N], v[NH_MAX_N];
  for (int i = 0; i < sys->n; i++) {
    q[i] = dq ? x->q[i] + s * dq[i] : x->q[i];
    v[i] = dv ? x->v[i] + s * dv[i] : x->v[i];
  }
  if (reduced) complete_velocity(sys, q, v, cost);
  for (int i = 0; i < sys->n; i++) kq[i] = v[i];
  cost->rhs_evals++;
  if (sys->k) cost->constraint_evals++; /* nh_acceleration evaluates A(q) once */
  return nh_acceleration(sys, x->t + s, q, v, kv);
}

static nh_step_status rk4_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y,
                               double h, nh_cost *cost) {
  const int n = sys->n, r = m->type->data != NULL; /* rk4_reduced's data marks the reduced form */
  double k1q[NH_MAX_N], k1v[NH_MAX_N], k2q[NH_MAX_N], k2v[NH_MAX_N];
  double k3q[NH_MAX_N], k3v[NH_MAX_N], k4q[NH_MAX_N], k4v[NH_MAX_N];
  cost->steps++;
  if (stage(sys, x, NULL, NULL, 0, r, k1q, k1v, cost) != 0 || stage(sys, x, k1q, k1v, h / 2, r, k2q, k2v, cost) != 0 ||
      stage(sys, x, k2q, k2v, h / 2, r, k3q, k3v, cost) != 0 || stage(sys, x, k3q, k3v, h, r, k4q, k4v, cost) != 0)
    return NH_STEP_SOLVER_FAILED;
  /* rk4 carries nothing and defines no multiplier: of x's other fields only z goes on (no copy
   * of the whole state, a tenth of a step's cost here). */
  y->t = x->t + h;
  y->z = x->z;
  for (int i = 0; i < n; i++) {
    y->q[i] = x->q[i] + h / 6 * (k1q[i] + 2 * k2q[i] + 2 * k3q[i] + k4q[i]);
    y->v[i] = x->v[i] + h / 6 * (k1v[i] + 2 * k2v[i] + 2 * k3v[i] + k4v[i]);
  }
  if (r) complete_velocity(sys, y->q, y->v, cost); /* the integrated first k are not state */
  return NH_STEP_OK;
}

/* ---- rk4 on NH_LANES states (core/lanes.h): rk4_step's operations, lane by lane -------------------- */

typedef double lane_vec[NH_MAX_N][NH_LANES]; /* n components of every lane */

/* A later stage's point (q + s dq, v + s dv) and time t + s; the velocity is also the stage's kq.
 * (The first stage's point is x's own q and v, read in place.) */
static inline NH_LANES_INLINE void stage_point_lanes(int n, const nh_lanes *x, const lane_vec *dq, const lane_vec *dv,
                                                     double s, lane_vec *q, lane_vec *v, double *t) {
  for (int i = 0; i < n; i++) {
    const double *xq = x->q[i], *xv = x->v[i], *sq = (*dq)[i], *sv = (*dv)[i];
    double *oq = (*q)[i], *ov = (*v)[i];
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) oq[l] = xq[l] + s * sq[l], ov[l] = xv[l] + s * sv[l];
  }
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) t[l] = x->t[l] + s;
}

/* y = x + h/6 (k1 + 2 k2 + 2 k3 + k4) for q and v, t + h and z as rk4_step writes them. */
static inline NH_LANES_INLINE void combine_lanes(int n, const nh_lanes *x, nh_lanes *y, double h, const lane_vec *kq,
                                                 const lane_vec *kv) {
  for (int i = 0; i < n; i++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) { /* k1's q is x's own v */
      y->q[i][l] = x->q[i][l] + h / 6 * (x->v[i][l] + 2 * kq[1][i][l] + 2 * kq[2][i][l] + kq[3][i][l]);
      y->v[i][l] = x->v[i][l] + h / 6 * (kv[0][i][l] + 2 * kv[1][i][l] + 2 * kv[2][i][l] + kv[3][i][l]);
    }
  }
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) y->t[l] = x->t[l] + h, y->z[l] = x->z[l];
}

/* The step's passes and bookkeeping are one function compiled per instruction set, which calls the
 * system's lane kernels. */
static inline NH_LANES_INLINE void rk4_step_lanes_lanes(const nh_method *m NH_UNUSED, const nh_system *sys,
                                                        const nh_lanes *x, nh_lanes *y, double h, const int *live,
                                                        nh_step_status *status, nh_cost *cost) {
  lane_vec q, kq[4], kv[4];                        /* kq[0] unused: the first stage's point is x itself */
  NH_LANES_ALIGNED double t[NH_LANES], lambda[NH_MAX_K * NH_LANES]; /* the stages' multipliers, unused */
  int failed[NH_LANES], stages[NH_LANES] = {0}, running[NH_LANES];
  for (int l = 0; l < NH_LANES; l++) running[l] = 1;
  for (int j = 0; j < 4; j++) {
    const double s = j == 0 ? 0 : j == 3 ? h : h / 2; /* rk4_step's stages at 0, h/2, h/2, h */
    if (j == 0) {
      for (int l = 0; l < NH_LANES; l++) t[l] = x->t[l] + 0; /* rk4_step's x->t + s at s = 0 */
      nh_lanes_acceleration(sys, t, &x->q[0][0], &x->v[0][0], &kv[0][0][0], lambda, failed);
    } else {
      stage_point_lanes(sys->n, x, j == 1 ? &x->v : &kq[j - 1], &kv[j - 1], s, &q, &kq[j], t);
      nh_lanes_acceleration(sys, t, &q[0][0], &kq[j][0][0], &kv[j][0][0], lambda, failed);
    }
    /* rk4_step counts a stage before it evaluates it, and stops at the first that fails */
    for (int l = 0; l < NH_LANES; l++) stages[l] += running[l], running[l] &= failed[l] == 0;
  }
  combine_lanes(sys->n, x, y, h, kq, kv);
  for (int l = 0; l < NH_LANES; l++) { /* live lanes' counts, without a branch per lane */
    const unsigned long long on = live[l] != 0, evals = on * (unsigned long long)stages[l];
    cost[l].steps += on, cost[l].rhs_evals += evals, cost[l].constraint_evals += sys->k ? evals : 0;
  }
  /* A pass of its own: written lane by lane in the loop above, failed was loaded whole by the status
   * pass, which waited for those narrow stores (no forwarding from several stores into one load): a
   * fifth of the step's samples in `perf` at 4 lanes; the ensemble in 0.95 of the time, 0.96 at 8. */
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) failed[l] = !running[l];
  nh_lanes_step_status(failed, status);
}

NH_LANES_ISA_VARIANTS(rk4_step_lanes,
                      (const nh_method *m, const nh_system *sys, const nh_lanes *x, nh_lanes *y, double h,
                       const int *live, nh_step_status *status, nh_cost *cost),
                      (m, sys, x, y, h, live, status, cost))

static int order(const nh_method *m NH_UNUSED) { return 4; }

const nh_integrator_type nh_integrator_rk4 = {
    .name = "rk4",
    .doc = "Classical RK4 on the index-reduced ODE with the eliminated multiplier lambda(q,v), no "
           "projection (spec/newmark.md 2.10). Order 4; the constraint is not preserved.",
    .handles = NH_SYS_VARIABLE_MASS | NH_SYS_AFFINE_CONSTRAINTS | NH_SYS_DAMPING | NH_SYS_FORCING |
               NH_SYS_TIME_DAMPING | NH_SYS_TIME_POTENTIAL, /* nh_acceleration takes t */
    .order = order,
    .step = rk4_step,
    .step_lanes = rk4_step_lanes,
};

/* rk4_reduced: only where the constraints are solved for the first k velocities. */
static int reduced_applies(const nh_method *m NH_UNUSED, const nh_system *sys, char *why, size_t len) {
  if (sys->k > 0 && sys->type->constraints_solved_first) return 0;
  snprintf(why, len, "it integrates the last n - k velocities and needs constraints solved for the first k "
                     "(A(q) = [I_k | B(q)], the rolling disks, the chaotic particles)");
  return -1;
}

static const int reduced_form = 1;

const nh_integrator_type nh_integrator_rk4_reduced = {
    .name = "rk4_reduced",
    .doc = "Classical RK4 on the reduced ODE of (q, the last n - k velocities), the first k velocities completed "
           "from the constraints at every stage and at the end (a system with A(q) = [I_k | B(q)]): on the "
           "falling disk the spec's reduced (theta, phi, psi) ODE with X, Y integrated from (4.11) "
           "(spec/herglotz.md 3.2, 5 item 4). Order 4; the nodes keep the constraint by construction.",
    .data = &reduced_form,
    .properties = NH_PRESERVES_CONSTRAINT,
    .handles = NH_SYS_VARIABLE_MASS | NH_SYS_AFFINE_CONSTRAINTS | NH_SYS_DAMPING | NH_SYS_FORCING |
               NH_SYS_TIME_DAMPING | NH_SYS_TIME_POTENTIAL,
    .applies = reduced_applies,
    .order = order,
    .step = rk4_step,
};
