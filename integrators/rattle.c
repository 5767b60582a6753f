/* SHAKE and RATTLE, nonholonomic and classical (spec/rattle.md, Ferraro, Iglesias-Ponte and
 * Martín de Diego 2009), for constant M, linear constraints μ(q) q̇ = 0, no damping or forcing:
 *   nh_rattle  one-step nonholonomic RATTLE (9a)-(9e), explicit, one k×k SPD solve per step;
 *   nh_shake   its two-step form, nonholonomic SHAKE (8a)-(8b);
 *   rattle     classical RATTLE (7a)-(7e) for a holonomic constraint φ(q) = 0 (Newton for λ_k);
 *   shake      classical SHAKE (6a)-(6b), with φ(q_{k+1}) = 0 (spec §7 A3).
 *
 * Sign convention: the spec writes ṗ = −V_q − μᵀλ (§2.1 (3)); the rest of the code base writes
 * M v̇ = −∇V + Aᵀλ. Every multiplier below, and those carried in nh_state.carry, is the spec's λ, which
 * is −1 times the code base's (nh_multiplier). p = M v; the state carries v = M⁻¹p.
 *
 * The gradient ∇V(q_k) is carried next to the multiplier or the previous position, so that
 * each step evaluates ∇V once, at q_{k+1} (spec §2.5 "Cost per step: 1 gradient", §6 item 12);
 * nh_rattle keeps the whole force ∇V(q_k) + μ(q_k)ᵀλ_k instead, so that it also evaluates μ once
 * per step, at q_{k+1} (same items: "1 evaluation of μ"). The carry is set by init; a step must
 * therefore start from init's or a previous step's output.
 *
 * Observables (integrator.h): every step leaves a multiplier in y->lambda, converted to the code
 * base's sign: nh_rattle/nh_shake λ_{k+1} of (9d)-(9e), at t_{k+1}; rattle the mean of its two
 * multipliers, at t_k + h/2; shake its λ_k of (6a), at t_k (each O(h²) at that time). All four
 * define their discrete constraint and the trapezoidal discrete Lagrangian of §2.8,
 * nh_rattle/nh_shake the discrete energy E_d of §2.9, rattle/shake their Newton system for the
 * position multiplier. constraint_evals counts every evaluation of μ(q). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "integrators/integrator.h"
#include "integrators/newton.h"

/* What a step carries to the next. One-step methods: nh_rattle [λ_k | ∇V(q_k) + μ(q_k)ᵀλ_k],
 * rattle [λ̄_k | ∇V(q_k)]; two-step methods (nh_shake, shake): [Δq_k = q_k − q_{k−1} | ∇V(q_k)].
 * The increment, not q_{k−1}: the recurrence q_{k+1} = 2q_k − q_{k−1} − h²a is run as
 * Δq_{k+1} = Δq_k − h²a, q_{k+1} = q_k + Δq_{k+1}, so p_{k+1/2} = MΔq_{k+1}/h carries no rounding of
 * q_{k+1} − q_k, which grows with |q| and as h shrinks (ulp(ξ)/h ~ 1e-9 on the CVT at ξ ~ 1.3e4,
 * h = 0.1/64: issue 46 item 1). */
typedef struct {
  double lambda[NH_MAX_K];
  double force[NH_MAX_N]; /* ∇V + μᵀλ (nh_rattle) or ∇V (rattle) at q_k */
} one_step_carry;
typedef struct {
  double increment[NH_MAX_N]; /* Δq_k = q_k − q_{k−1} as the step made it */
  double grad[NH_MAX_N];
} two_step_carry;
NH_CARRY_FITS(one_step_carry);
NH_CARRY_FITS(two_step_carry);
#define LAMBDA_OF(x) NH_CARRY(x, one_step_carry, lambda)
#define FORCE_OF(x) NH_CARRY(x, one_step_carry, force)
#define INCREMENT_OF(x) NH_CARRY(x, two_step_carry, increment)
#define GRAD_OF(x) NH_CARRY(x, two_step_carry, grad)

enum { P_LAMBDA0, P_COUNT };
enum { LAMBDA0_ZERO = 0, LAMBDA0_CONTINUOUS = 1 };

static const nh_param_desc lambda0_params[] = {
    [P_LAMBDA0] = {"lambda0", NH_PARAM_INT, LAMBDA0_CONTINUOUS, 0, 1,
     "starting multiplier: 1 = lambda(q0,p0) of the continuous formula (4) (default); 0 = the paper's "
     "lambda0 = 0 (Remark 1), which excites a period-2 parasitic mode (spec/rattle.md 3.6, 7 A4)",
     0},
};
_Static_assert(sizeof lambda0_params / sizeof *lambda0_params == P_COUNT,
               "lambda0_params[] and the P_* enum disagree");

/* ---- small linear-algebra helpers (constant M: sys->Minv) ----------------------------------- */

/* out = M⁻¹ g for the constant mass matrix cached in sys (a copy for M = I). */
static inline void minv_apply(const nh_system *sys, const double *g, double *out) {
  nh_mass_solve(sys, NULL, g, out);
}

/* f ← f + A(q)ᵀ λ. */
static void add_constraint_force(const nh_system *sys, const double *A, const double *lambda, double *f) {
  for (int i = 0; i < sys->n; i++)
    for (int a = 0; a < sys->k; a++) f[i] += A[a * sys->n + i] * lambda[a];
}

/* A(q), one counted evaluation of the constraint matrix (nh_cost.constraint_evals); nothing for
 * k = 0. */
static void constraint_matrix(const nh_system *sys, const double *q, double *A, nh_cost *cost) {
  if (sys->k == 0) return;
  sys->type->constraints(sys->p, q, A);
  cost->constraint_evals++;
}

/* The M-orthogonal projection of w onto ker A(q), for the given A = A(q), with its multiplier
 * y = C⁻¹ A w: the RATTLE half-steps need y, (h/2)λ = y in (9d)-(9e), (7d)-(7e). Returns 0, or -1
 * if C is singular. */
static int project(const nh_system *sys, const double *q, const double *A, double *w, double *y, nh_cost *cost) {
  cost->linear_solves++;
  return nh_project_onto(sys, q, A, NULL, w, y);
}

static void gradient(const nh_system *sys, const double *q, double *g, nh_cost *cost) {
  sys->type->grad_potential(sys->p, q, g);
  cost->rhs_evals++;
}

/* Half kick by a known force f: v − (h/2) M⁻¹ f (M = I: f itself, no product or copy). */
static void kick(const nh_system *sys, const double *v, const double *f, double h, double *vh) {
  double a[NH_MAX_N];
  const double *mf = f;
  if (!sys->unit_mass) minv_apply(sys, f, a), mf = a;
  for (int i = 0; i < sys->n; i++) vh[i] = v[i] - 0.5 * h * mf[i];
}

/* Second half-step shared by all four methods, (9d)-(9e) and (7d)-(7e): from the half-step
 * velocity v_{k+1/2} = M⁻¹p_{k+1/2} at q_{k+1} with g1 = ∇V(q_{k+1}) and A1 = μ(q_{k+1}),
 *   p̃ = p_{k+1/2} − (h/2) V_q(q_{k+1}),  λ̄ = (2/h) C⁻¹ μ M⁻¹ p̃,  p_{k+1} = p̃ − (h/2) μᵀλ̄
 * (spec §2.5 closed form; λ̄ as derived in §2.3). */
static int second_half_step(const nh_system *sys, const double *q1, const double *A1, const double *vh,
                            const double *g1, double h, double *v1, double *lambda1, nh_cost *cost) {
  kick(sys, vh, g1, h, v1);
  if (project(sys, q1, A1, v1, lambda1, cost) != 0) return -1;
  for (int a = 0; a < sys->k; a++) lambda1[a] *= 2 / h;
  return 0;
}

/* The code base's multiplier (+Aᵀλ, nh_multiplier) from the spec's (−μᵀλ, (3)). */
static void store_multiplier(const nh_system *sys, const double *spec_lambda, nh_state *y) {
  for (int a = 0; a < sys->k; a++) y->lambda[a] = -spec_lambda[a];
}

/* The starting multiplier λ0 in the spec's sign: from (4) (= −nh_multiplier) or 0 (Remark 1). */
static int starting_multiplier(int mode, const nh_system *sys, const nh_state *x, double *lambda, nh_cost *cost) {
  for (int a = 0; a < sys->k; a++) lambda[a] = 0;
  if (mode == LAMBDA0_ZERO || sys->k == 0) return 0;
  cost->rhs_evals++;
  cost->constraint_evals++; /* nh_multiplier evaluates A(q0) */
  if (nh_multiplier(sys, x->t, x->q, x->v, lambda) != 0) return -1;
  for (int a = 0; a < sys->k; a++) lambda[a] = -lambda[a];
  return 0;
}

/* M⁻¹(V_q + μᵀλ) for the given A = μ(q): minus the acceleration in the spec's sign, (3). */
static void minus_acceleration(const nh_system *sys, const double *A, const double *g, const double *lambda,
                               double *a) {
  double f[NH_MAX_N];
  memcpy(f, g, sizeof(double) * (size_t)sys->n);
  if (sys->k) add_constraint_force(sys, A, lambda, f);
  minv_apply(sys, f, a);
}

/* Half kick with the constraint force: v − (h/2) M⁻¹(V_q + μ(q)ᵀλ), (9a)/(7a); evaluates μ(q). */
static void half_kick(const nh_system *sys, const double *q, const double *v, const double *g,
                      const double *lambda, double h, double *vh, nh_cost *cost) {
  double a[NH_MAX_N], A[NH_MAX_K * NH_MAX_N];
  constraint_matrix(sys, q, A, cost);
  minus_acceleration(sys, A, g, lambda, a);
  for (int i = 0; i < sys->n; i++) vh[i] = v[i] - 0.5 * h * a[i];
}


/* ---- nonholonomic RATTLE (spec §2.5) --------------------------------------------------------- */

/* carry = [λ0 | ∇V(q0) + μ(q0)ᵀλ0]; y->lambda = λ0 in the code base's sign. */
static nh_step_status nh_rattle_init(const nh_method *m, const nh_system *sys, nh_state *x, double h NH_UNUSED,
                                     nh_cost *cost) {
  double A[NH_MAX_K * NH_MAX_N];
  double *lambda = LAMBDA_OF(x), *f = FORCE_OF(x);
  gradient(sys, x->q, f, cost);
  if (starting_multiplier((int)m->p[P_LAMBDA0], sys, x, lambda, cost) != 0) return NH_STEP_SOLVER_FAILED;
  if (sys->k) {
    constraint_matrix(sys, x->q, A, cost);
    add_constraint_force(sys, A, lambda, f);
  }
  store_multiplier(sys, lambda, x);
  return NH_STEP_OK;
}

/* (q_k, p_k, λ_k) ↦ (q_{k+1}, p_{k+1}, λ_{k+1}), spec §2.5 closed form:
 *   (9a) p_{k+1/2} = p_k − (h/2)(V_q(q_k) + μᵀ(q_k)λ_k)   (the force carried)
 *   (9b) q_{k+1} = q_k + h M⁻¹ p_{k+1/2}
 *   (9d)-(9e) p_{k+1}, λ_{k+1} by second_half_step, with the one evaluation of μ, at q_{k+1}. */
static nh_step_status nh_rattle_step(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, nh_state *y,
                                     double h, nh_cost *cost) {
  const int n = sys->n;
  double vh[NH_MAX_N], A1[NH_MAX_K * NH_MAX_N];
  double *lambda1 = LAMBDA_OF(y), *f1 = FORCE_OF(y);
  /* Everything else of y is written below (q, v, the multiplier and the carry): no copy of x. */
  y->t = x->t + h;
  y->z = x->z;
  cost->steps++;
  kick(sys, x->v, FORCE_OF(x), h, vh);
  for (int i = 0; i < n; i++) y->q[i] = x->q[i] + h * vh[i];
  gradient(sys, y->q, f1, cost);
  constraint_matrix(sys, y->q, A1, cost);
  if (second_half_step(sys, y->q, A1, vh, f1, h, y->v, lambda1, cost) != 0) return NH_STEP_SOLVER_FAILED;
  if (sys->k) add_constraint_force(sys, A1, lambda1, f1);
  store_multiplier(sys, lambda1, y);
  return NH_STEP_OK;
}

/* ---- nh_rattle on NH_LANES states (core/lanes.h): nh_rattle_step's operations, lane by lane ----- */

/* Lane layout of a carry field: component c of lane l at field[c * NH_LANES + l]. */
#define LANES_CARRY(X, field) (&(X)->carry[offsetof(one_step_carry, field) / sizeof(double)][0])

/* out = v − (h/2) f per lane, as kick computes it (f already M⁻¹-applied where M ≠ I). */
static inline NH_LANES_INLINE void kick_lanes_lanes(int n, const double *v, const double *f, double h, double *out) {
  for (int i = 0; i < n; i++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) out[i * NH_LANES + l] = v[i * NH_LANES + l] - 0.5 * h * f[i * NH_LANES + l];
  }
}
NH_LANES_ISA_VARIANTS(kick_lanes, (int n, const double *v, const double *f, double h, double *out), (n, v, f, h, out))

/* y's time, action and q_{k+1} = q_k + h v_{k+1/2}. */
static inline NH_LANES_INLINE void drift_lanes_lanes(int n, const nh_lanes *x, const double *vh, double h,
                                                     nh_lanes *y) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) y->t[l] = x->t[l] + h, y->z[l] = x->z[l];
  for (int i = 0; i < n; i++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) y->q[i][l] = x->q[i][l] + h * vh[i * NH_LANES + l];
  }
}
NH_LANES_ISA_VARIANTS(drift_lanes, (int n, const nh_lanes *x, const double *vh, double h, nh_lanes *y),
                      (n, x, vh, h, y))

/* λ̄ = (2/h) y, the carried force ∇V + μᵀλ̄ (add_constraint_force's sums), the stored multiplier
 * and the step's status. */
static inline NH_LANES_INLINE void finish_lanes_lanes(int n, int k, const double *A1, double h, const int *failed,
                                                      nh_step_status *status, nh_lanes *y) {
  double *lambda1 = LANES_CARRY(y, lambda), *f1 = LANES_CARRY(y, force);
  for (int a = 0; a < k; a++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) lambda1[a * NH_LANES + l] *= 2 / h;
  }
  for (int i = 0; i < n; i++)
    for (int a = 0; a < k; a++) {
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++)
        f1[i * NH_LANES + l] += A1[(a * n + i) * NH_LANES + l] * lambda1[a * NH_LANES + l];
    }
  for (int a = 0; a < k; a++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) y->lambda[a][l] = -lambda1[a * NH_LANES + l];
  }
  nh_lanes_step_status(failed, status);
}
NH_LANES_ISA_VARIANTS(finish_lanes,
                      (int n, int k, const double *A1, double h, const int *failed, nh_step_status *status,
                       nh_lanes *y),
                      (n, k, A1, h, failed, status, y))

static void nh_rattle_step_lanes(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_lanes *x, nh_lanes *y,
                                 double h, const int *live, nh_step_status *status, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  NH_LANES_ALIGNED double vh[NH_MAX_N * NH_LANES], A1[NH_MAX_K * NH_MAX_N * NH_LANES], space[NH_MAX_N * NH_LANES];
  double *lambda1 = LANES_CARRY(y, lambda), *f1 = LANES_CARRY(y, force);
  int failed[NH_LANES];
  kick_lanes(n, &x->v[0][0], nh_lanes_mass_solved(sys, LANES_CARRY(x, force), space), h, vh);
  drift_lanes(n, x, vh, h, y);
  nh_lanes_grad_potential(sys, &y->q[0][0], f1);
  if (k) nh_lanes_constraints(sys, &y->q[0][0], A1);
  kick_lanes(n, vh, nh_lanes_mass_solved(sys, f1, space), h, &y->v[0][0]); /* second_half_step */
  nh_lanes_project_onto(sys, A1, &y->v[0][0], lambda1, failed);
  finish_lanes(n, k, A1, h, failed, status, y);
  for (int l = 0; l < NH_LANES; l++) { /* live lanes' counts, without a branch per lane */
    const unsigned long long on = live[l] != 0;
    cost[l].steps += on, cost[l].rhs_evals += on, cost[l].linear_solves += on, cost[l].constraint_evals += k ? on : 0;
  }
}

/* ---- two-step forms: previous position from a backward step (spec §2.4 startup) -------------- */

/* q_{−1} = q0 − h v0 − (h²/2) M⁻¹(V_q(q0) + μᵀ(q0)λ0): RATTLE's Φ_{−h} from (q0, p0, λ0). Then
 * (8b) at k = 0 holds with SHAKE's q_1 equal to RATTLE's, and so do all later q_k (§3.4). */
static nh_step_status two_step_init(int lambda0_mode, const nh_system *sys, nh_state *x, double h,
                                    nh_cost *cost) {
  double lambda[NH_MAX_K], vh[NH_MAX_N];
  double *g = GRAD_OF(x);
  gradient(sys, x->q, g, cost);
  if (starting_multiplier(lambda0_mode, sys, x, lambda, cost) != 0) return NH_STEP_SOLVER_FAILED;
  half_kick(sys, x->q, x->v, g, lambda, -h, vh, cost);
  for (int i = 0; i < sys->n; i++) INCREMENT_OF(x)[i] = h * vh[i]; /* q_0 − q_{−1} */
  store_multiplier(sys, lambda, x);
  return NH_STEP_OK;
}

/* Ends a two-step step of increment dq: q_{k+1} = q_k + dq, the output velocity v_{k+1} by RATTLE's
 * second half-step with p_{k+1/2} = M dq/h (spec §2.4 "Momenta", §3.4), its multiplier λ_{k+1}
 * into y->lambda, and the history shift. */
static nh_step_status two_step_finish(const nh_system *sys, const nh_state *x, const double *dq, nh_state *y,
                                      double h, nh_cost *cost) {
  double vh[NH_MAX_N], lambda1[NH_MAX_K], A1[NH_MAX_K * NH_MAX_N];
  for (int i = 0; i < sys->n; i++) {
    y->q[i] = x->q[i] + dq[i];
    vh[i] = dq[i] / h;
  }
  gradient(sys, y->q, GRAD_OF(y), cost);
  constraint_matrix(sys, y->q, A1, cost);
  if (second_half_step(sys, y->q, A1, vh, GRAD_OF(y), h, y->v, lambda1, cost) != 0)
    return NH_STEP_SOLVER_FAILED;
  store_multiplier(sys, lambda1, y);
  memcpy(INCREMENT_OF(y), dq, sizeof(double) * (size_t)sys->n);
  return NH_STEP_OK;
}

/* ---- nonholonomic SHAKE (spec §2.4) ----------------------------------------------------------- */

static nh_step_status nh_shake_init(const nh_method *m, const nh_system *sys, nh_state *x, double h,
                                    nh_cost *cost) {
  return two_step_init((int)m->p[P_LAMBDA0], sys, x, h, cost);
}

/* (8a)-(8b), explicit (spec §2.4 [derived]): with r = 2(q_k − q_{k−1})/h² − M⁻¹V_q(q_k),
 * λ_k = C⁻¹ μ r and q_{k+1} = 2q_k − q_{k−1} − h² M⁻¹(V_q(q_k) + μᵀλ_k), all at q_k (one
 * evaluation of μ(q_k); the output velocity needs a second one, at q_{k+1}); in increments. */
static nh_step_status nh_shake_step(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, nh_state *y,
                                    double h, nh_cost *cost) {
  const int n = sys->n;
  const double *dq0 = INCREMENT_OF(x), *g = GRAD_OF(x);
  double r[NH_MAX_N], mg[NH_MAX_N], lambda[NH_MAX_K], a[NH_MAX_N], A[NH_MAX_K * NH_MAX_N], dq[NH_MAX_N];
  *y = *x;
  y->t = x->t + h;
  cost->steps++;
  minv_apply(sys, g, mg);
  for (int i = 0; i < n; i++) r[i] = 2 * dq0[i] / (h * h) - mg[i];
  constraint_matrix(sys, x->q, A, cost);
  if (project(sys, x->q, A, r, lambda, cost) != 0) return NH_STEP_SOLVER_FAILED;
  minus_acceleration(sys, A, g, lambda, a);
  for (int i = 0; i < n; i++) dq[i] = dq0[i] - h * h * a[i];
  return two_step_finish(sys, x, dq, y, h, cost);
}

/* ---- classical SHAKE and RATTLE (spec §2.2, §2.3): Newton for the position multiplier --------- */

/* φ(q_f − W Λ) = 0 for Λ (k): q_f is the unconstrained position, W = M⁻¹G(q_k)ᵀ. Jacobian
 * −G(q_f − WΛ) W, analytic. Λ = (h²/2)λ_k for RATTLE (7a)-(7c), h²λ_k for SHAKE (6a). */
typedef struct {
  const nh_system *sys;
  const double *qf;
  double W[NH_MAX_N * NH_MAX_K];
  nh_cost *cost;
} position_ctx;

/* d = W Λ and q = q_f − d. */
static void position_point(const position_ctx *c, const double *L, double *q, double *d) {
  const int n = c->sys->n, k = c->sys->k;
  for (int i = 0; i < n; i++) {
    d[i] = 0;
    for (int a = 0; a < k; a++) d[i] += c->W[i * k + a] * L[a];
    q[i] = c->qf[i] - d[i];
  }
}

static void position_residual(void *vctx, const double *L, double *F, double *J) {
  const position_ctx *c = vctx;
  const nh_system *sys = c->sys;
  const int n = sys->n, k = sys->k;
  double q[NH_MAX_N], d[NH_MAX_N], A[NH_MAX_K * NH_MAX_N];
  position_point(c, L, q, d);
  sys->type->holonomic(sys->p, q, F);
  constraint_matrix(sys, q, A, c->cost);
  for (int a = 0; a < k; a++)
    for (int b = 0; b < k; b++) {
      double s = 0;
      for (int i = 0; i < n; i++) s += A[a * n + i] * c->W[i * k + b];
      J[a * k + b] = -s;
    }
}

/* The Newton system of one step from x: q_f and W = M⁻¹G(q_k)ᵀ (one evaluation of G(q_k)). The
 * family runs on constant mass matrices only (RATTLE_FAMILY handles no NH_SYS_VARIABLE_MASS), for
 * which nh_constraint_gram cannot fail (it fails only where a variable M(q) is singular). */
static void position_setup(position_ctx *c, const nh_system *sys, const double *q, nh_cost *cost) {
  double A[NH_MAX_K * NH_MAX_N], C[NH_MAX_K * NH_MAX_K];
  c->sys = sys;
  c->cost = cost;
  constraint_matrix(sys, q, A, cost);
  (void)nh_constraint_gram(sys, q, A, c->W, C);
}

/* Solves φ(q_f − M⁻¹G(q)ᵀΛ) = 0 from the guess in L; writes the constrained position q1 and the
 * correction d = M⁻¹G(q)ᵀΛ = q_f − q1. */
static nh_step_status solve_position(const nh_system *sys, const double *q, const double *qf, double *L, double *q1,
                                     double *d, nh_cost *cost) {
  position_ctx c = {.qf = qf};
  position_setup(&c, sys, q, cost);
  nh_step_status st = nh_newton_solve(sys->k, L, position_residual, &c, cost);
  if (st == NH_STEP_OK) position_point(&c, L, q1, d);
  return st;
}

static int holonomic_only(const nh_method *m, const nh_system *sys, char *err, size_t errlen) {
  if (sys->type->holonomic && sys->k > 0) return 0;
  snprintf(err, errlen, "%s needs a holonomic constraint phi(q) = 0 (spec/rattle.md 2.2-2.3); %s is nonholonomic",
           m->type->name, sys->type->name);
  return -1;
}

/* carry: [λ̄_k | ∇V(q_k)]; λ̄_k, the velocity multiplier of (7d)-(7e), is the Newton guess for λ_k. */
static nh_step_status rattle_init(const nh_method *m NH_UNUSED, const nh_system *sys, nh_state *x, double h NH_UNUSED,
                                  nh_cost *cost) {
  gradient(sys, x->q, FORCE_OF(x), cost);
  if (starting_multiplier(LAMBDA0_CONTINUOUS, sys, x, LAMBDA_OF(x), cost) != 0) return NH_STEP_SOLVER_FAILED;
  store_multiplier(sys, LAMBDA_OF(x), x);
  return NH_STEP_OK;
}

/* The unconstrained position of (7a)-(7b), q_f = q_k + h v_free with v_free = v_k − (h/2)M⁻¹V_q(q_k). */
static void rattle_free_position(const nh_system *sys, const double *q, const double *v, const double *g, double h,
                                 double *vh, double *qf) {
  kick(sys, v, g, h, vh);
  for (int i = 0; i < sys->n; i++) qf[i] = q[i] + h * vh[i];
}

/* (7a)-(7c): q_{k+1} = q_k + h v_k − (h²/2)M⁻¹(V_q(q_k) + Gᵀλ_k) with φ(q_{k+1}) = 0 (Newton in
 * Λ = (h²/2)λ_k), p_{k+1/2} from (7a); (7d)-(7e) by second_half_step (linear). */
static nh_step_status rattle_step(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, nh_state *y,
                                  double h, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  double qf[NH_MAX_N], vh[NH_MAX_N], d[NH_MAX_N], L[NH_MAX_K], A1[NH_MAX_K * NH_MAX_N];
  *y = *x;
  y->t = x->t + h;
  cost->steps++;
  rattle_free_position(sys, x->q, x->v, FORCE_OF(x), h, vh, qf);
  for (int a = 0; a < k; a++) L[a] = 0.5 * h * h * LAMBDA_OF(x)[a];
  nh_step_status st = solve_position(sys, x->q, qf, L, y->q, d, cost);
  if (st != NH_STEP_OK) return st;
  /* (7a) as v_{k+1/2} = v_free − M⁻¹GᵀΛ/h: no cancellation in (q_{k+1} − q_k)/h for small h. */
  for (int i = 0; i < n; i++) vh[i] -= d[i] / h;
  gradient(sys, y->q, FORCE_OF(y), cost);
  constraint_matrix(sys, y->q, A1, cost);
  if (second_half_step(sys, y->q, A1, vh, FORCE_OF(y), h, y->v, LAMBDA_OF(y), cost) != 0)
    return NH_STEP_SOLVER_FAILED;
  /* The step's impulse −(h/2)Gᵀ(λ_k + λ̄_{k+1}) per unit time: each of λ_k, λ̄_{k+1} is only O(h) at
   * its node, their mean O(h²) at t_k + h/2. */
  for (int a = 0; a < k; a++) y->lambda[a] = -0.5 * (2 * L[a] / (h * h) + LAMBDA_OF(y)[a]);
  return NH_STEP_OK;
}

/* q_{−1} by the same backward step with the continuous λ(q0, v0). Any λ there gives the same q_1:
 * q_1 = q0 + h v0 − (h²/2)M⁻¹V_q(q0) − M⁻¹G(q0)ᵀΛ with φ(q_1) = 0 is RATTLE's q_1 (§3.4). */
static nh_step_status shake_init(const nh_method *m NH_UNUSED, const nh_system *sys, nh_state *x, double h,
                                 nh_cost *cost) {
  return two_step_init(LAMBDA0_CONTINUOUS, sys, x, h, cost);
}

/* The unconstrained position of (6a), q_f = 2q_k − q_{k−1} − h²M⁻¹V_q(q_k). */
static void shake_free_position(const nh_system *sys, const double *q, const double *dq0, const double *g,
                                double h, double *qf, double *df) {
  double mg[NH_MAX_N];
  minv_apply(sys, g, mg);
  for (int i = 0; i < sys->n; i++) {
    df[i] = dq0[i] - h * h * mg[i]; /* the free increment */
    qf[i] = q[i] + df[i];
  }
}

/* (6a) with φ(q_{k+1}) = 0 (spec §7 A3): q_{k+1} = 2q_k − q_{k−1} − h²M⁻¹(V_q(q_k) + G(q_k)ᵀλ_k),
 * Newton in Λ = h²λ_k from Λ = 0. */
static nh_step_status shake_step(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, nh_state *y,
                                 double h, nh_cost *cost) {
  double qf[NH_MAX_N], df[NH_MAX_N], d[NH_MAX_N], L[NH_MAX_K] = {0}, dq[NH_MAX_N];
  *y = *x;
  y->t = x->t + h;
  cost->steps++;
  shake_free_position(sys, x->q, INCREMENT_OF(x), GRAD_OF(x), h, qf, df);
  nh_step_status st = solve_position(sys, x->q, qf, L, y->q, d, cost);
  if (st != NH_STEP_OK) return st;
  for (int i = 0; i < sys->n; i++) dq[i] = df[i] - d[i]; /* q_{k+1} − q_k without the cancellation */
  st = two_step_finish(sys, x, dq, y, h, cost);
  /* SHAKE's own λ_k of (6a), Λ = h²λ_k: the whole impulse at q_k, O(h²) at t_k. */
  for (int a = 0; a < sys->k; a++) y->lambda[a] = -L[a] / (h * h);
  return st;
}

/* ---- what the methods define, for the observables (integrator.h) ------------------------------ */

#define LAMBDA_DOC                                                                                             \
  "lambda_{k+1} of the second half-step (9d)-(9e) (spec/rattle.md 2.5), which approximates lambda(t_{k+1}) "  \
  "(order 2 with lambda0 = 1; with lambda0 = 0 it carries the period-2 mode of 3.6), in the +A^T lambda "      \
  "sign of nh_multiplier: minus the spec's lambda of (3)"
#define RATTLE_LAMBDA_DOC                                                                                      \
  "(lambda_k + lambdabar_{k+1})/2, the mean of the position multiplier of (7a)-(7c) and the velocity "          \
  "multiplier of (7d)-(7e) (spec/rattle.md 2.3): the step's impulse -(h/2) G^T (lambda_k + lambdabar_{k+1}) "   \
  "per unit time, which approximates lambda(t_k + h/2) to O(h^2) (each alone is O(h) at its node); in the "    \
  "+A^T lambda sign of nh_multiplier: minus the spec's lambda of (3)"
#define SHAKE_LAMBDA_DOC                                                                                       \
  "lambda_k of (6a) (spec/rattle.md 2.2), the whole constraint impulse h^2 G^T lambda_k at q_k, which "         \
  "approximates lambda(t_k) to O(h^2); in the +A^T lambda sign of nh_multiplier: minus the spec's lambda of (3)"

/* (q_{k+1} − q_k)ᵀM(q_{k+1} − q_k)/h², shared by E_d and L_d. */
static double chord_norm2(const nh_system *sys, const double *q0, const double *q1, double h) {
  const int n = sys->n;
  double dq[NH_MAX_N], s = 0;
  for (int i = 0; i < n; i++) dq[i] = (q1[i] - q0[i]) / h;
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) s += dq[i] * sys->M[i * n + j] * dq[j];
  return s;
}

/* E_d = (q_{k+1} − q_k)ᵀM(q_{k+1} − q_k)/(2h²) + ½(V(q_k) + V(q_{k+1})) (spec §2.9, A5). */
static double rattle_energy(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, const nh_state *y,
                            double h) {
  const double V = 0.5 * (sys->type->potential(sys->p, x->q) + sys->type->potential(sys->p, y->q));
  return 0.5 * chord_norm2(sys, x->q, y->q, h) + V;
}

/* nh_rattle's E_d, the same quantity from the half-step velocity the step carries instead of the
 * chord: Δq/h = v_{k+1/2} = v_{k+1} + (h/2)M⁻¹(V_q(q_{k+1}) + μᵀλ_{k+1}) by (9d)-(9e), the force
 * carried in y. The chord (q_{k+1} − q_k)/h loses ulp(|q|)/h to cancellation, which grows with
 * |q| (a sleigh drifts away); this form keeps round-off relative to |v|. */
static double nh_rattle_energy(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x, const nh_state *y,
                               double h) {
  const int n = sys->n;
  double mf[NH_MAX_N], vh[NH_MAX_N], s = 0;
  minv_apply(sys, FORCE_OF(y), mf);
  for (int i = 0; i < n; i++) vh[i] = y->v[i] + 0.5 * h * mf[i];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) s += vh[i] * sys->M[i * n + j] * vh[j];
  return 0.5 * s + 0.5 * (sys->type->potential(sys->p, x->q) + sys->type->potential(sys->p, y->q));
}

/* The trapezoidal L_d of §2.8: (1/2h)ΔqᵀMΔq − (h/2)(V(q0) + V(q1)) ≈ ∫L over the step. */
static double rattle_action(const nh_method *m NH_UNUSED, const nh_system *sys, double t NH_UNUSED, const double *q0,
                            const double *q1, double h) {
  const double V = sys->type->potential(sys->p, q0) + sys->type->potential(sys->p, q1);
  return 0.5 * h * chord_norm2(sys, q0, q1, h) - 0.5 * h * V;
}

/* nh_rattle: (9e), μ(q_{k+1})M⁻¹p_{k+1} = A(q_{k+1})v_{k+1} (spec A6: the nodes carry the constraint). */
static void nh_rattle_constraint(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x NH_UNUSED,
                                 const nh_state *y, double h NH_UNUSED, double *out) {
  const int n = sys->n;
  double A[NH_MAX_K * NH_MAX_N];
  if (sys->k == 0) return;
  sys->type->constraints(sys->p, y->q, A);
  for (int a = 0; a < sys->k; a++) {
    out[a] = 0;
    for (int i = 0; i < n; i++) out[a] += A[a * n + i] * y->v[i];
  }
}

/* nh_shake: (8b) at the step's start node, μ(q_k)(q_{k+1} − q_{k−1})/(2h) = μ(q_k)M⁻¹p_k, the
 * equation the step solves, from the increments the two states carry (Δq_k + Δq_{k+1}). */
static void nh_shake_constraint(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x,
                                const nh_state *y, double h, double *out) {
  const int n = sys->n;
  const double *dq0 = INCREMENT_OF(x), *dq1 = INCREMENT_OF(y);
  double A[NH_MAX_K * NH_MAX_N];
  if (sys->k == 0) return;
  sys->type->constraints(sys->p, x->q, A);
  for (int a = 0; a < sys->k; a++) {
    out[a] = 0;
    for (int i = 0; i < n; i++) out[a] += A[a * n + i] * (dq0[i] + dq1[i]) / (2 * h);
  }
}

/* rattle, shake: (7c)/(6b) with spec A3, φ(q_{k+1}). */
static void holonomic_constraint(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x NH_UNUSED,
                                 const nh_state *y, double h NH_UNUSED, double *out) {
  sys->type->holonomic(sys->p, y->q, out);
}

static int position_size(const nh_method *m NH_UNUSED, const nh_system *sys) {
  return sys->type->holonomic ? sys->k : 0;
}

/* q_f of the step from x: (7a)-(7b) for rattle, (6a) for shake (x's history). */
static void free_position(const nh_method *m, const nh_system *sys, const nh_state *x, double h, double *qf) {
  double g[NH_MAX_N], vh[NH_MAX_N], df[NH_MAX_N];
  sys->type->grad_potential(sys->p, x->q, g);
  if (m->type->step == rattle_step) rattle_free_position(sys, x->q, x->v, g, h, vh, qf);
  else shake_free_position(sys, x->q, INCREMENT_OF(x), g, h, qf, df);
}

/* F(Λ) = φ(q_f − M⁻¹G(q_k)ᵀΛ), J = −G(q)M⁻¹G(q_k)ᵀ: the system solve_position hands to Newton. */
static void position_eval(const nh_method *m, const nh_system *sys, const nh_state *x, double h, const double *X,
                          double *F, double *J) {
  double qf[NH_MAX_N];
  nh_cost scratch = {0};
  position_ctx c = {.qf = qf};
  free_position(m, sys, x, h, qf);
  position_setup(&c, sys, x->q, &scratch);
  position_residual(&c, X, F, J);
}

/* Λ of the result: q_f − q_{k+1} = M⁻¹G(q_k)ᵀΛ, so Λ = C(q_k)⁻¹G(q_k)(q_f − q_{k+1}). */
static void position_unknowns(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                              double h, double *X) {
  const int n = sys->n, k = sys->k;
  double qf[NH_MAX_N], A[NH_MAX_K * NH_MAX_N], W[NH_MAX_N * NH_MAX_K], C[NH_MAX_K * NH_MAX_K];
  free_position(m, sys, x, h, qf);
  sys->type->constraints(sys->p, x->q, A);
  for (int a = 0; a < k; a++) {
    X[a] = 0;
    for (int i = 0; i < n; i++) X[a] += A[a * n + i] * (qf[i] - y->q[i]);
  }
  (void)nh_constraint_gram(sys, x->q, A, W, C); /* constant M: cannot fail (position_setup) */
  if (nh_spd_solve(k, C, X) != 0)
    for (int a = 0; a < k; a++) X[a] = NAN;
}

/* ---- the tables -------------------------------------------------------------------------------- */

#define RATTLE_APPLIES_DOC \
  "needs a constant mass matrix, linear homogeneous constraints and no damping or forcing (spec/rattle.md 2.0)"
#define ENERGY_DOC                                                                                             \
  "E_d = (q_{k+1} - q_k)^T M (q_{k+1} - q_k)/(2h^2) + (V(q_k) + V(q_{k+1}))/2 (spec/rattle.md 2.9); for V = 0 " \
  "this is |p_{k+1/2}|^2_{M^-1}/2, exactly conserved (Thm 5.1), with H(q_k, p_k) = E_d - (h^2/8) "              \
  "lambda_k^T C(q_k) lambda_k; for V != 0 the paper claims nothing (A5)"

/* What the four methods share, and the Newton system of the position step (rattle.md 2.3). */
#define RATTLE_FAMILY \
  .handles = 0, .applies_doc = RATTLE_APPLIES_DOC, .order = nh_order_2, .is_symmetric = nh_always_symmetric
static const nh_newton_hooks position_newton = {position_size, position_eval, position_unknowns, NULL};
#define POSITION_NEWTON .newton = &position_newton

const nh_integrator_type nh_integrator_nh_rattle = {
    RATTLE_FAMILY,
    .name = "nh_rattle",
    .doc = "Nonholonomic RATTLE (spec/rattle.md 2.5, (9a)-(9e)): explicit, one gradient, one evaluation of mu "
           "and one k x k SPD solve per step, on triples (q_k, p_k, lambda_k) with lambda_k kept in the state; "
           "mu(q)M^-1 p = 0 exactly. Order 2 (Thm 4.1), symmetric; exact energy for V = 0 (Thm 5.1). On a "
           "holonomic system it keeps G M^-1 p = 0 but phi(q) only to O(h^2) (Remark 2).",
    .params = lambda0_params,
    .nparams = P_COUNT,
    /* (9a) reads lambda_k of the previous step's (9d)-(9e) */
    .properties = NH_PRESERVES_CONSTRAINT | NH_READS_PREVIOUS_STEP,
    .init = nh_rattle_init,
    .step = nh_rattle_step,
    .step_lanes = nh_rattle_step_lanes,
    .lambda_time = NH_LAMBDA_END,
    .lambda_doc = LAMBDA_DOC,
    .discrete_constraint = nh_rattle_constraint,
    .discrete_constraint_doc = "mu(q_{k+1}) M^-1 p_{k+1} = A(q_{k+1}) v_{k+1} of (9e): the constraint holds at the "
                               "nodes with the averaged momentum (spec/rattle.md 7 A6)",
    .discrete_energy = nh_rattle_energy,
    .discrete_energy_doc = ENERGY_DOC,
    .discrete_action = rattle_action,
};

const nh_integrator_type nh_integrator_nh_shake = {
    RATTLE_FAMILY,
    .name = "nh_shake",
    .doc = "Nonholonomic SHAKE (spec/rattle.md 2.4, (8a)-(8b)): the two-step form of nh_rattle, explicit; "
           "q_{-1} from a backward nh_rattle step so its q_k equal nh_rattle's (spec 3.4, 6 item 7); output "
           "velocity from (q_k, q_{k+1}) by RATTLE's second half-step (9d)-(9e). Order 2.",
    .params = lambda0_params,
    .nparams = P_COUNT,
    .properties = NH_PRESERVES_CONSTRAINT | NH_HISTORY,
    .init = nh_shake_init,
    .step = nh_shake_step,
    .lambda_time = NH_LAMBDA_END,
    .lambda_doc = LAMBDA_DOC "; computed from p_{k+1/2} = M(q_{k+1} - q_k)/h (spec 2.4, 3.4), not SHAKE's "
                             "lambda_k of (8a), which sits at t_k",
    .discrete_constraint = nh_shake_constraint,
    .discrete_constraint_doc = "(8b) at the step's start node: mu(q_k)(q_{k+1} - q_{k-1})/(2h) = mu(q_k) M^-1 p_k "
                               "(spec/rattle.md 2.4, 7 A6)",
    .discrete_energy = rattle_energy,
    .discrete_energy_doc = ENERGY_DOC,
    .discrete_action = rattle_action,
};

const nh_integrator_type nh_integrator_rattle = {
    RATTLE_FAMILY,
    .name = "rattle",
    .doc = "Classical RATTLE (Andersen 1983; spec/rattle.md 2.3, (7a)-(7e)) for holonomic constraints: "
           "Newton (analytic Jacobian) for lambda_k in phi(q_{k+1}) = 0, then a linear velocity projection; "
           "phi(q) and G M^-1 p = 0 to round-off. Order 2, symmetric.",
    .properties = NH_PRESERVES_CONSTRAINT,
    .applies = holonomic_only,
    .init = rattle_init,
    .step = rattle_step,
    .lambda_time = NH_LAMBDA_MIDPOINT,
    .lambda_doc = RATTLE_LAMBDA_DOC,
    .discrete_constraint = holonomic_constraint,
    .discrete_constraint_doc = "phi(q_{k+1}) of (7c) (spec/rattle.md 2.3)",
    .discrete_action = rattle_action,
    POSITION_NEWTON,
};

const nh_integrator_type nh_integrator_shake = {
    RATTLE_FAMILY,
    .name = "shake",
    .doc = "Classical SHAKE (Ryckaert-Ciccotti-Berendsen; spec/rattle.md 2.2, (6a)-(6b)) for holonomic "
           "constraints, two-step, with phi(q_{k+1}) = 0 solved by Newton (spec 7 A3); output velocity by "
           "RATTLE's projection (7d)-(7e). Same q_k as rattle. Order 2.",
    .properties = NH_PRESERVES_CONSTRAINT | NH_HISTORY,
    .applies = holonomic_only,
    .init = shake_init,
    .step = shake_step,
    .lambda_time = NH_LAMBDA_START,
    .lambda_doc = SHAKE_LAMBDA_DOC,
    .discrete_constraint = holonomic_constraint,
    .discrete_constraint_doc = "phi(q_{k+1}) of (6b), read as in spec/rattle.md 7 A3",
    .discrete_action = rattle_action,
    POSITION_NEWTON,
};
