/* Nonholonomic Newmark F_h^{β,β',α} (spec/newmark.md §2.3–2.5), equations (N1)–(N4):
 *   (N1) q1 = q0 + h v0 + (h²/2)[(1−2β) Γ(q0,λ0) + 2β Γ(q1,λ1)]
 *   (N2) q0 = q1 − h v1 + (h²/2)[2β' Γ(q0,λ0) + (1−2β') Γ(q1,λ1)]
 *   (N3) Φ(q0,q1) = 0, discretisation (14) or (15) with parameter α
 *   (N4) A(q1) v1 = 0
 * with Γ(q,λ) = M⁻¹(−∇V(q) + A(q)ᵀλ). Unknowns X = (q1, v1, Λ0, Λ1), scaled as Λ = (h²/2)λ, and
 * (N3) multiplied by h (§2.5, A13). (N1) and (N2) are multiplied by M so M⁻¹ never appears:
 *   R1 = M(q1 − q0 − h v0) + c[(1−2β) g0 + 2β g1] − (1−2β) A0ᵀΛ0 − 2β A1ᵀΛ1
 *   R2 = M(q0 − q1 + h v1) + c[2β' g0 + (1−2β') g1] − 2β' A0ᵀΛ0 − (1−2β') A1ᵀΛ1
 *   R3 = ⟨μ(q_α), q1 − q0⟩ (14)   or   ⟨(1−α) μ(q0) + α μ(q1), q1 − q0⟩ (15)
 *   R4 = A(q1) v1
 * with c = h²/2, g = ∇V. (R2) is linear in v1 with the constant matrix hM: solved for h v1 and
 * substituted in (R4)·h, it leaves Newton (the shared solver, analytic Jacobian) n + 2k unknowns
 * Y = (Δq = q1 − q0, Λ0, Λ1) and the equations (R1), (R3), (R4)·h (newmark_residual).
 *
 * Fast path for β = β' = 0 (spec/newmark.md §2.9, Prop 3.8 and its [derived] general-α form):
 * (N1) makes q1 = q0 + dp + M⁻¹A0ᵀΛ0 affine in Λ0, dp = h v0 − c M⁻¹g0, so (N3) is a
 * k-dimensional equation in Λ0; (N2)+(N4) are then linear in (v1, Λ1): one k×k solve
 * (nh_newmark.h). Chosen automatically; fast=0 keeps the full Newton system for comparison.
 *
 * What a step leaves besides (q1, v1), on either path (integrator.h, the observables):
 *   y->lambda = λ'_{k+1} = Λ1/c, the multiplier of (N2) at q_{k+1}, in the +Aᵀλ convention;
 *   carry.lambda_k[0..k) = λ_k = Λ0/c, the multiplier of (N1) at q_k (a fresh unknown of every step, §2.3),
 *   so that newton_unknowns can rebuild the whole solution X of the step from its result.
 * λ'_{k+1} approximates λ(t_{k+1}) to O(h) only for α = ½ [derived; not in the spec]. Multiplying
 * (N1) by A(q_k) and (N2) by A(q_{k+1}), with A_k v_k = 0 and Φ = 0 (so A_k Δq ≈ −αh²(DA[v])v and
 * A_{k+1} Δq ≈ (1−α)h²(DA[v])v), gives, with λ* the continuous multiplier and κ = C⁻¹(DA[v])v,
 *   (1−2β) λ_k + 2β λ'_{k+1} = λ* + (1−2α) κ,    2β' λ_k + (1−2β') λ'_{k+1} = λ* − (1−2α) κ + O(h),
 * so λ'_{k+1} → λ* − (1−2α)(1−2β+2β')/(1−2β−2β') κ: an O(1) offset for α ≠ ½ (e.g. the last
 * sub-step of Ψ_h, α = 1, gives λ* + κ). The determinant 1−2β−2β' is Remark 3.3's ill-conditioning.
 * The velocity-weighted (1−γ)λ_k + γλ'_{k+1}, γ = ½+β−β', is consistent for every α
 * (tests/integrators/test_method_hooks_newmark.c checks both limits).
 * The hooks: discrete_constraint Φ(q_k, q_{k+1}) of (N3) (not multiplied by h), discrete_action
 * L_d^{sym,α} for β = β' = 0 (Prop 3.5; NaN otherwise), and the Newton system (R1), (R3), (R4)·h
 * in Y, n + 2k whatever path the step takes.
 * Cost: every evaluation of A(q) is counted in constraint_evals: per Newton iteration A(q1), plus
 * A(q_α) for (14) with 0 < α < 1 ((15) and α ∈ {0, 1} reuse A(q0), A(q1)); per step A(q0), the
 * predictor's multiplier and A(q1) (with ∇V(q1)) for the solution's velocity. */
#include "integrators/nh_newmark.h"

#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "core/linalg.h"
#include "integrators/integrator.h"
#include "integrators/newton.h"

enum { P_BETA, P_BETA2, P_ALPHA, P_CONSTRAINT, P_ALLOW_ILL, P_FAST, P_COUNT };

const char *const nh_newmark_constraint_choices[] = {"point", "average", NULL};

/* What a step carries to the next: λ_k, the multiplier of (N1) at q_k (§2.3). */
typedef struct {
  double lambda_k[NH_MAX_K];
} newmark_carry;
NH_CARRY_FITS(newmark_carry);
#define LAMBDA_K(x) NH_CARRY(x, newmark_carry, lambda_k)

static const nh_param_desc params[] = {
    [P_BETA] = {"beta", NH_PARAM_REAL, 0, 0, 0.5,
     "weight of Gamma(q_{k+1}) in the forward position equation (N1)", 0},
    [P_BETA2] = {"beta2", NH_PARAM_REAL, 0, 0, 0.5, "beta': weight of Gamma(q_k) in the backward equation (N2)", 0},
    [P_ALPHA] = {"alpha", NH_PARAM_REAL, 0.5, 0, 1,
     "constraint discretisation point: mu at (1-alpha) q_k + alpha q_{k+1}", 0},
    [P_CONSTRAINT] = NH_NEWMARK_CONSTRAINT_PARAM,
    [P_ALLOW_ILL] = {"allow_ill_conditioned", NH_PARAM_INT, 0, 0, 1,
     "1 allows beta + beta2 = 1/2, ill-conditioned (Remark 3.3)", 1},
    [P_FAST] = {"fast", NH_PARAM_INT, 1, 0, 1,
     "1: for beta = beta2 = 0 solve (N3) as a k-dimensional problem, closed form when linear (Prop 3.8); "
     "0: always the full Newton system (N1)-(N4)", 1},
};
_Static_assert(sizeof params / sizeof *params == P_COUNT, "params[] and the P_* enum disagree");

static const nh_param_alias aliases[] = {
    NH_NEWMARK_DISC_ALIASES,
    {"force", "0", "allow_ill_conditioned", "0"},
    {"force", "1", "allow_ill_conditioned", "1"},
    {NULL},
};

typedef struct {
  const nh_system *sys;
  int n, k, disc;
  double beta, beta2, alpha, h, c;
  const double *q0, *v0;
  double g0[NH_MAX_N], A0[NH_MAX_K * NH_MAX_N], B0[NH_MAX_N * NH_MAX_K]; /* B0 = M⁻¹A0ᵀ */
  nh_cost *cost;
} newmark_ctx;

/* μ̄ (k×n) of (N3) for the step q0 → q1, and dμ̄ with ∂μ̄/∂q1 = α dμ̄: (14) μ and dA at
 * q_α = (1−α) q0 + α q1; (15) (1−α) μ(q0) + α μ(q1) and dA at q1. A0 = A(q0); A1, dA1 = A(q1) and
 * its derivative when the caller has them, else NULL. At most one evaluation of A, counted in cost:
 * none for α = 0 (μ̄ = A0 in both forms, exactly as q_α = q0; dμ̄ enters with the factor α and is
 * set to 0) nor when A1 is given for (15) or α = 1 (q_α = q1 exactly). */
static void discrete_constraint_matrix(const nh_system *sys, int disc, double alpha, const double *q0,
                                       const double *A0, const double *q1, const double *A1, const double *dA1,
                                       double *Abar, double *dAbar, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  if (alpha == 0) {
    memcpy(Abar, A0, sizeof(double) * (size_t)(k * n));
    memset(dAbar, 0, sizeof(double) * (size_t)(k * n * n));
    return;
  }
  if (disc == 14 && alpha != 1) {
    double qa[NH_MAX_N];
    for (int i = 0; i < n; i++) qa[i] = (1 - alpha) * q0[i] + alpha * q1[i];
    sys->type->constraints(sys->p, qa, Abar);
    sys->type->constraints_jacobian(sys->p, qa, dAbar);
    cost->constraint_evals++;
    return;
  }
  /* (15), or (14) at α = 1: μ̄ = (1−α) A0 + α A(q1) (= A(q1) for α = 1), dμ̄ = dA(q1). */
  if (A1) {
    memcpy(Abar, A1, sizeof(double) * (size_t)(k * n));
    memcpy(dAbar, dA1, sizeof(double) * (size_t)(k * n * n));
  } else {
    sys->type->constraints(sys->p, q1, Abar);
    sys->type->constraints_jacobian(sys->p, q1, dAbar);
    cost->constraint_evals++;
  }
  for (int i = 0; i < k * n; i++) Abar[i] = (1 - alpha) * A0[i] + alpha * Abar[i];
}

/* (R2) = 0 solved for the velocity, which enters (R2) linearly with the constant matrix hM:
 *   w = h v1 = Δq − M⁻¹ s,   s = c[2β' g0 + (1−2β') g1] − 2β' A0ᵀΛ0 − (1−2β') A1ᵀΛ1,
 * so that Newton works on Y = [Δq | Λ0 | Λ1] (n + 2k unknowns instead of 2n + 2k: the Schur
 * complement of the hM block; the iterates differ from full Newton's only by round-off at the
 * solution). The unknown is the increment Δq = q1 − q0, not q1: v1 = w/h then carries no
 * cancellation of q1 − q0, whose rounding (ulp(|q|)/h) would grow with |q| and as h shrinks (the
 * CVT's unbounded angle; spec/newmark.md C2, C8), and Newton's stopping rule, relative to |Y|, is
 * relative to the increment (HLW VIII.5, as the fast path). */
static void scaled_velocity(const newmark_ctx *C, const double *dq, const double *g1, const double *A1,
                            const double *L0, const double *L1, double *w) {
  const int n = C->n, k = C->k;
  const double b2 = C->beta2;
  double s[NH_MAX_N] = {0}, Mis[NH_MAX_N];
  for (int i = 0; i < n; i++) {
    double t = C->c * (2 * b2 * C->g0[i] + (1 - 2 * b2) * g1[i]);
    for (int l = 0; l < k; l++) t -= 2 * b2 * C->A0[l * n + i] * L0[l] + (1 - 2 * b2) * A1[l * n + i] * L1[l];
    s[i] = t;
  }
  nh_mass_solve(C->sys, NULL, s, Mis);
  for (int i = 0; i < n; i++) w[i] = dq[i] - Mis[i];
}

/* Residual and Jacobian of (R1), (R3) and (R4)·h = A(q1) w with w = h v1 of scaled_velocity;
 * unknown layout Y = [Δq | Λ0 | Λ1], q1 = q0 + Δq (so ∂/∂Δq = ∂/∂q1). With K = c ∇²V(q1) −
 * ∂_q1(A1ᵀΛ1) (n×n):
 *   ∂R1/∂q1 = M + 2β K,  ∂w/∂q1 = I − (1−2β') M⁻¹K,  ∂w/∂Λ0 = 2β' M⁻¹A0ᵀ,  ∂w/∂Λ1 = (1−2β') M⁻¹A1ᵀ,
 *   ∂(A1 w)/∂q1_j = Σ_i ∂_j A1_li w_i + A1 ∂w/∂q1_j. */
static void newmark_residual(void *vctx, const double *X, double *F, double *J) {
  const newmark_ctx *C = vctx;
  const nh_system *sys = C->sys;
  const int n = C->n, k = C->k, dim = n + 2 * k;
  const int iq = 0, iL0 = n, iL1 = n + k; /* column offsets */
  const int r1 = 0, r3 = n, r4 = n + k;   /* row offsets */
  const double *dq = X + iq, *L0 = X + iL0, *L1 = X + iL1;
  const double *M = sys->M, b = C->beta, b2 = C->beta2, a = C->alpha, h = C->h, c = C->c;
  double g1[NH_MAX_N], K[NH_MAX_N * NH_MAX_N], A1[NH_MAX_K * NH_MAX_N];
  double dA1[NH_MAX_K * NH_MAX_N * NH_MAX_N], q1[NH_MAX_N], w[NH_MAX_N], B1[NH_MAX_N * NH_MAX_K];
  for (int i = 0; i < n; i++) q1[i] = C->q0[i] + dq[i];

  sys->type->grad_potential(sys->p, q1, g1);
  sys->type->hess_potential(sys->p, q1, K);
  C->cost->rhs_evals++;
  if (k) {
    sys->type->constraints(sys->p, q1, A1);
    sys->type->constraints_jacobian(sys->p, q1, dA1);
    C->cost->constraint_evals++;
  }
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double dA1L1 = 0; /* ∂(A1ᵀΛ1)_i/∂q1_j */
      for (int l = 0; l < k; l++) dA1L1 += dA1[(l * n + i) * n + j] * L1[l];
      K[i * n + j] = c * K[i * n + j] - dA1L1;
    }
  for (int i = 0; i < n; i++) {
    double Mdq = 0, Mv0 = 0, A0L0 = 0, A1L1 = 0;
    for (int j = 0; j < n; j++) {
      Mdq += M[i * n + j] * dq[j];
      Mv0 += M[i * n + j] * C->v0[j];
      J[(r1 + i) * dim + iq + j] = M[i * n + j] + 2 * b * K[i * n + j];
    }
    for (int l = 0; l < k; l++) {
      A0L0 += C->A0[l * n + i] * L0[l];
      A1L1 += A1[l * n + i] * L1[l];
      J[(r1 + i) * dim + iL0 + l] = -(1 - 2 * b) * C->A0[l * n + i];
      J[(r1 + i) * dim + iL1 + l] = -2 * b * A1[l * n + i];
    }
    F[r1 + i] = Mdq - h * Mv0 + c * ((1 - 2 * b) * C->g0[i] + 2 * b * g1[i]) - (1 - 2 * b) * A0L0 - 2 * b * A1L1;
  }
  if (k == 0) return;

  /* (N3)·h: ⟨μ̄, q1 − q0⟩ with μ̄ from (14) or (15); ∂/∂q1_j = μ̄_j + α Σ_i ∂_j μ_i(point) dq_i. */
  double Abar[NH_MAX_K * NH_MAX_N], dAbar[NH_MAX_K * NH_MAX_N * NH_MAX_N];
  discrete_constraint_matrix(sys, C->disc, a, C->q0, C->A0, q1, A1, dA1, Abar, dAbar, C->cost);
  scaled_velocity(C, dq, g1, A1, L0, L1, w);
  nh_mass_solve_transpose(sys, A1, B1); /* B1 = M⁻¹A1ᵀ */
  for (int l = 0; l < k; l++) {
    double s = 0, r = 0;
    for (int i = 0; i < n; i++) {
      s += Abar[l * n + i] * dq[i];
      r += A1[l * n + i] * w[i];
    }
    F[r3 + l] = s;
    F[r4 + l] = r;
    for (int j = 0; j < n; j++) {
      double curv3 = 0, curv4 = 0, B1K = 0;
      for (int i = 0; i < n; i++) {
        curv3 += dAbar[(l * n + i) * n + j] * dq[i];
        curv4 += dA1[(l * n + i) * n + j] * w[i];
        B1K += B1[i * k + l] * K[i * n + j];
      }
      J[(r3 + l) * dim + iq + j] = Abar[l * n + j] + a * curv3;
      J[(r4 + l) * dim + iq + j] = curv4 + A1[l * n + j] - (1 - 2 * b2) * B1K;
    }
    for (int m = 0; m < k; m++) {
      double A1B0 = 0, A1B1 = 0;
      for (int i = 0; i < n; i++) {
        A1B0 += A1[l * n + i] * C->B0[i * k + m];
        A1B1 += A1[l * n + i] * B1[i * k + m];
      }
      J[(r3 + l) * dim + iL0 + m] = J[(r3 + l) * dim + iL1 + m] = 0;
      J[(r4 + l) * dim + iL0 + m] = 2 * b2 * A1B0;
      J[(r4 + l) * dim + iL1 + m] = (1 - 2 * b2) * A1B1;
    }
  }
}

/* The context of the full system for the step from x of size h: ∇V(q0) and A(q0). */
static void newmark_setup(const nh_method *m, const nh_system *sys, const nh_state *x, double h, newmark_ctx *C,
                          nh_cost *cost) {
  *C = (newmark_ctx){.sys = sys, .n = sys->n, .k = sys->k, .disc = nh_newmark_disc(m->p[P_CONSTRAINT]),
                     .beta = m->p[P_BETA], .beta2 = m->p[P_BETA2], .alpha = m->p[P_ALPHA], .h = h, .c = 0.5 * h * h,
                     .q0 = x->q, .v0 = x->v, .cost = cost};
  sys->type->grad_potential(sys->p, x->q, C->g0);
  cost->rhs_evals++;
  if (sys->k) {
    sys->type->constraints(sys->p, x->q, C->A0);
    cost->constraint_evals++;
  }
  nh_mass_solve_transpose(sys, C->A0, C->B0);
}

/* ---- β = β' = 0: the k-dimensional fast path (spec/newmark.md §2.9), shared with dla.c ------- */

void nh_newmark_minv(const nh_system *sys, const double *x, double *y) {
  const int n = sys->n;
  for (int i = 0; i < n; i++) {
    double s = 0;
    for (int j = 0; j < n; j++) s += sys->Minv[i * n + j] * x[j];
    y[i] = s;
  }
}

/* Φ(q0, q0 + dq(Λ)) with the increment dq(Λ) = dp + BΛ, B = M⁻¹A(q0)ᵀ (n×k). Increments, not
 * positions, so that dq/h in the velocity carries no cancellation error (HLW VIII.5). */
typedef struct {
  const nh_system *sys;
  int n, k, disc;
  double alpha;
  const double *q0, *dp;
  double A0[NH_MAX_K * NH_MAX_N], B[NH_MAX_N * NH_MAX_K];
  nh_cost *cost;
} constraint_ctx;

/* A0 = A(q0) (one evaluation) and B = M⁻¹A0ᵀ. */
static void constraint_setup(constraint_ctx *C) {
  const nh_system *sys = C->sys;
  const int n = C->n, k = C->k;
  sys->type->constraints(sys->p, C->q0, C->A0);
  C->cost->constraint_evals++;
  for (int i = 0; i < n; i++)
    for (int b = 0; b < k; b++) {
      double s = 0;
      for (int j = 0; j < n; j++) s += sys->Minv[i * n + j] * C->A0[b * n + j];
      C->B[i * k + b] = s;
    }
}

static void constrained_increment(const constraint_ctx *C, const double *L, double *dq) {
  for (int i = 0; i < C->n; i++) {
    double s = C->dp[i];
    for (int b = 0; b < C->k; b++) s += C->B[i * C->k + b] * L[b];
    dq[i] = s;
  }
}

/* R = h·Φ = ⟨μ̄, q1 − q0⟩ (k) and, unless J is NULL, J = ∂R/∂Λ = (μ̄ + α ∂μ̄[q1 − q0]) B (k×k),
 * with μ̄ and its derivative dμ̄ from (14) (at q0 + α(q1 − q0)) or (15) (α A(q1) + (1−α) A0) as in (R3).
 * Returns 1 when R is linear in Λ at this point: α = 0, or the constraint matrix at the
 * discretisation point does not move along the directions B, i.e. dμ̄·B vanishes exactly. */
static int constraint_eval(const constraint_ctx *C, const double *L, double *R, double *J) {
  const int n = C->n, k = C->k;
  const double a = C->alpha;
  double q1[NH_MAX_N], dq[NH_MAX_N], Abar[NH_MAX_K * NH_MAX_N], dAbar[NH_MAX_K * NH_MAX_N * NH_MAX_N];
  constrained_increment(C, L, dq);
  for (int i = 0; i < n; i++) q1[i] = C->q0[i] + dq[i];
  discrete_constraint_matrix(C->sys, C->disc, a, C->q0, C->A0, q1, NULL, NULL, Abar, dAbar, C->cost);
  int moves = 0;
  for (int l = 0; l < k; l++) {
    double r = 0;
    for (int i = 0; i < n; i++) r += Abar[l * n + i] * dq[i];
    R[l] = r;
    for (int b = 0; b < k; b++) {
      double s = 0;
      for (int i = 0; i < n; i++) {
        double t = 0; /* (dμ̄ B)_{l i b}: how μ̄^l_i moves along direction b */
        for (int j = 0; j < n; j++) t += dAbar[(l * n + i) * n + j] * C->B[j * k + b];
        moves |= t != 0;
        s += Abar[l * n + i] * C->B[i * k + b] + a * t * dq[i];
      }
      if (J) J[l * k + b] = s;
    }
  }
  return a == 0 || !moves;
}

static void constraint_newton_fn(void *ctx, const double *L, double *R, double *J) {
  constraint_eval(ctx, L, R, J);
}

void nh_newmark_increment_eval(const nh_system *sys, int disc, double alpha, const double *q0, const double *dp,
                               const double *Lambda, double *R, double *J, nh_cost *cost) {
  if (sys->k == 0) return;
  constraint_ctx C = {.sys = sys, .n = sys->n, .k = sys->k, .disc = disc, .alpha = alpha, .q0 = q0, .dp = dp,
                      .cost = cost};
  constraint_setup(&C);
  constraint_eval(&C, Lambda, R, J);
}

nh_step_status nh_newmark_constrained_increment(const nh_system *sys, int disc, double alpha, const double *q0,
                                                const double *dp, double *dq, double *Lambda, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  constraint_ctx C = {.sys = sys, .n = n, .k = k, .disc = disc, .alpha = alpha, .q0 = q0, .dp = dp, .cost = cost};
  double L[NH_MAX_K] = {0}, R[NH_MAX_K], J[NH_MAX_K * NH_MAX_K];
  if (k == 0) {
    memcpy(dq, dp, sizeof(double) * (size_t)n);
    return NH_STEP_OK;
  }
  constraint_setup(&C);
  /* One Newton step from Λ = 0; it is the exact solution when R is linear in Λ. */
  int linear = constraint_eval(&C, L, R, J);
  cost->jacobian_evals++;
  cost->linear_solves++;
  if (nh_lu_solve(k, J, R) != 0) return NH_STEP_SOLVER_FAILED;
  for (int b = 0; b < k; b++) L[b] = -R[b];
  /* A pointwise test of dμ̄·B = 0 could meet an accidental zero: it must hold at the solution too. */
  if (linear && alpha != 0) {
    linear = constraint_eval(&C, L, R, J);
    cost->jacobian_evals++;
  }
  if (!linear) {
    nh_step_status st = nh_newton_solve(k, L, constraint_newton_fn, &C, cost);
    if (st != NH_STEP_OK) return st;
  }
  constrained_increment(&C, L, dq);
  if (Lambda) memcpy(Lambda, L, sizeof(double) * (size_t)k);
  return NH_STEP_OK;
}

nh_step_status nh_newmark_end_velocity(const nh_system *sys, const double *q1, const double *dq, double h,
                                       double *v1, double *Lambda1, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  double g1[NH_MAX_N], Mg1[NH_MAX_N], y[NH_MAX_K];
  sys->type->grad_potential(sys->p, q1, g1);
  cost->rhs_evals++;
  nh_newmark_minv(sys, g1, Mg1);
  for (int i = 0; i < n; i++) v1[i] = dq[i] / h - 0.5 * h * Mg1[i];
  if (k > 0) {
    cost->linear_solves++;
    cost->constraint_evals++;
  }
  /* v1 = w − M⁻¹A1ᵀy with y = C⁻¹A1w; (N2) reads v1 = w + M⁻¹A1ᵀΛ1/h, so Λ1 = −h y. */
  if (nh_project_velocity_multiplier(sys, q1, v1, y) != 0) return NH_STEP_SOLVER_FAILED;
  if (Lambda1)
    for (int a = 0; a < k; a++) Lambda1[a] = -h * y[a];
  return NH_STEP_OK;
}

/* ---- what the method defines for the observables (integrator.h) ----------------------------- */

void nh_newmark_discrete_constraint(const nh_system *sys, int disc, double alpha, const double *q0,
                                    const double *q1, double h, double *phi) {
  const int n = sys->n, k = sys->k;
  double A0[NH_MAX_K * NH_MAX_N], Abar[NH_MAX_K * NH_MAX_N], dAbar[NH_MAX_K * NH_MAX_N * NH_MAX_N];
  nh_cost unused = {0};
  if (k == 0) return;
  sys->type->constraints(sys->p, q0, A0);
  discrete_constraint_matrix(sys, disc, alpha, q0, A0, q1, NULL, NULL, Abar, dAbar, &unused);
  for (int a = 0; a < k; a++) {
    double s = 0;
    for (int i = 0; i < n; i++) s += Abar[a * n + i] * (q1[i] - q0[i]);
    phi[a] = s / h;
  }
}

double nh_newmark_discrete_action(const nh_system *sys, double alpha, const double *q0, const double *q1, double h) {
  const int n = sys->n;
  double dq[NH_MAX_N], T = 0;
  for (int i = 0; i < n; i++) dq[i] = q1[i] - q0[i];
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) T += dq[i] * sys->M[i * n + j] * dq[j];
  return T / (2 * h) - h * ((1 - alpha) * sys->type->potential(sys->p, q0) + alpha * sys->type->potential(sys->p, q1));
}

/* The step's multipliers: y->lambda = λ'_{k+1} = Λ1/c and the carried λ_k = Λ0/c (c = h²/2). */
static void store_multipliers(int k, double c, const double *L0, const double *L1, nh_state *y) {
  for (int a = 0; a < k; a++) {
    LAMBDA_K(y)[a] = L0[a] / c;
    y->lambda[a] = L1[a] / c;
  }
}

/* F^{0,0,α}: q1 from (N1)+(N3), v1 from (N2)+(N4). */
static nh_step_status fast_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y,
                                double h, nh_cost *cost) {
  const int n = sys->n;
  double g0[NH_MAX_N], Mg0[NH_MAX_N], dp[NH_MAX_N], dq[NH_MAX_N], q1[NH_MAX_N], v1[NH_MAX_N];
  double L0[NH_MAX_K], L1[NH_MAX_K];
  sys->type->grad_potential(sys->p, x->q, g0);
  cost->rhs_evals++;
  cost->steps++;
  nh_newmark_minv(sys, g0, Mg0);
  for (int i = 0; i < n; i++) dp[i] = h * x->v[i] - 0.5 * h * h * Mg0[i];
  nh_step_status st =
      nh_newmark_constrained_increment(sys, nh_newmark_disc(m->p[P_CONSTRAINT]), m->p[P_ALPHA], x->q, dp, dq, L0, cost);
  if (st != NH_STEP_OK) return st;
  for (int i = 0; i < n; i++) q1[i] = x->q[i] + dq[i];
  if ((st = nh_newmark_end_velocity(sys, q1, dq, h, v1, L1, cost)) != NH_STEP_OK) return st;
  *y = *x;
  y->t = x->t + h;
  memcpy(y->q, q1, sizeof(double) * (size_t)n);
  memcpy(y->v, v1, sizeof(double) * (size_t)n);
  store_multipliers(sys->k, 0.5 * h * h, L0, L1, y);
  return NH_STEP_OK;
}

/* y from Newton's solution Y = [Δq | Λ0 | Λ1]: q1 = q0 + Δq, v1 = w/h (scaled_velocity) and the
 * multipliers. (N4) is then imposed exactly: v1 projected onto D at q1, which moves it by the
 * residual of (R4)/h only. That residual is not always at round-off: F depends on Δq through the
 * rounded q1 = q0 + Δq, so where |q0| is large (the CVT's angle ξ, unbounded) A(q1) and ∇V(q1) jump
 * with ulp(q0), and Newton stagnates at an update of ulp(q0)·|w| (≈ 1e-13 at ξ ≈ 1e4, h = 0.1)
 * instead of converging; v1 = w/h would then miss D by ~1e-12 (spec/newmark.md C2 asks ≤ 1e-12 at
 * every step). The fast path ends with the same projection (nh_newmark_end_velocity). */
static nh_step_status finish_step(const newmark_ctx *C, const nh_state *x, const double *Y, nh_state *y) {
  const int n = C->n, k = C->k;
  double g1[NH_MAX_N], A1[NH_MAX_K * NH_MAX_N], w[NH_MAX_N], q1[NH_MAX_N], unused[NH_MAX_K];
  for (int i = 0; i < n; i++) q1[i] = x->q[i] + Y[i];
  C->sys->type->grad_potential(C->sys->p, q1, g1);
  if (k) C->sys->type->constraints(C->sys->p, q1, A1);
  C->cost->rhs_evals++;
  if (k) C->cost->constraint_evals++;
  scaled_velocity(C, Y, g1, A1, Y + n, Y + n + k, w);
  *y = *x;
  y->t = x->t + C->h;
  memcpy(y->q, q1, sizeof(double) * (size_t)n);
  for (int i = 0; i < n; i++) y->v[i] = w[i] / C->h;
  if (k && nh_project_onto(C->sys, q1, A1, NULL, y->v, unused) != 0) return NH_STEP_SOLVER_FAILED;
  if (k) C->cost->linear_solves++;
  store_multipliers(k, C->c, Y + n, Y + n + k, y);
  return NH_STEP_OK;
}

static nh_step_status nh_newmark_step(const nh_method *m, const nh_system *sys, const nh_state *x,
                                      nh_state *y, double h, nh_cost *cost) {
  if (m->p[P_BETA] == 0 && m->p[P_BETA2] == 0 && m->p[P_FAST]) return fast_step(m, sys, x, y, h, cost);
  const int n = sys->n, k = sys->k;
  newmark_ctx C;
  newmark_setup(m, sys, x, h, &C, cost);
  cost->steps++;

  /* Predictor (§6 A13, with the eliminated multiplier λ(q0, v0)): one explicit Taylor step with
   * Γ(q0, λ) = M⁻¹(−∇V(q0) + A0ᵀλ); nh_multiplier evaluates ∇V and A once more. */
  double X[NH_NEWTON_MAX_DIM], lambda[NH_MAX_K], f[NH_MAX_N], acc[NH_MAX_N];
  if (nh_multiplier(sys, x->t, x->q, x->v, lambda) != 0) return NH_STEP_SOLVER_FAILED;
  cost->rhs_evals++;
  if (k) cost->constraint_evals++;
  for (int i = 0; i < n; i++) {
    f[i] = -C.g0[i];
    for (int l = 0; l < k; l++) f[i] += C.A0[l * n + i] * lambda[l];
  }
  nh_newmark_minv(sys, f, acc);
  for (int i = 0; i < n; i++) X[i] = h * x->v[i] + C.c * acc[i]; /* Δq */
  for (int l = 0; l < k; l++) X[n + l] = X[n + k + l] = C.c * lambda[l];

  nh_step_status st = nh_newton_solve(n + 2 * k, X, newmark_residual, &C, cost);
  if (st != NH_STEP_OK) return st;
  return finish_step(&C, x, X, y);
}

/* ---- in lanes (core/lanes.h): the steps above on NH_LANES states, lane by lane ----------------- */

/* Every array here is in lane layout (core/lanes.h: NH_LANE_ROW, NH_LANE_AT), the scalar code's
 * arrays with each entry a run of NH_LANES: vectors (n), A (k×n), dA (k×n×n), B (n×k) and the Newton
 * system. */

/* discrete_constraint_matrix on every lane (its evaluation of A counted for the running lanes);
 * returns D Ā: dA1 itself where it is given and is D Ā (no copy of it), else dAbar, written. */
static inline NH_LANES_INLINE const double *
discrete_constraint_matrix_lanes(const nh_system *sys, int disc, double alpha, const double *q0, const double *A0,
                                 const double *q1, const double *A1, const double *dA1, double *Abar, double *dAbar,
                                 const int *running, nh_cost *cost) {
  const int n = sys->n, k = sys->k, kn = k * n * NH_LANES;
  if (alpha == 0) {
    memcpy(Abar, A0, sizeof(double) * (size_t)kn);
    nh_lanes_zero_rows(dAbar, k * n * n);
    return dAbar;
  }
  if (disc == 14 && alpha != 1) {
    NH_LANES_ALIGNED double qa[NH_MAX_N * NH_LANES];
#pragma omp simd
    for (int i = 0; i < n * NH_LANES; i++) qa[i] = (1 - alpha) * q0[i] + alpha * q1[i];
    nh_lanes_constraints(sys, qa, Abar);
    nh_lanes_constraints_jacobian(sys, qa, dAbar);
    NH_LANES_COUNT(cost, running, constraint_evals);
    return dAbar;
  }
  if (!A1) {
    nh_lanes_constraints(sys, q1, Abar);
    nh_lanes_constraints_jacobian(sys, q1, dAbar);
    NH_LANES_COUNT(cost, running, constraint_evals);
    A1 = Abar, dA1 = dAbar;
  }
#pragma omp simd
  for (int i = 0; i < kn; i++) Abar[i] = (1 - alpha) * A0[i] + alpha * A1[i];
  return dA1;
}

/* The full system's context in lanes (newmark_ctx): x's lanes, ∇V(q0), A(q0), B0 = M⁻¹A0ᵀ. */
typedef struct {
  const nh_system *sys;
  int n, k, disc;
  double beta, beta2, alpha, h, c;
  const nh_lanes *x;
  NH_LANES_ALIGNED double g0[NH_MAX_N * NH_LANES];
  NH_LANES_ALIGNED double A0[NH_MAX_K * NH_MAX_N * NH_LANES];
  NH_LANES_ALIGNED double B0[NH_MAX_N * NH_MAX_K * NH_LANES];
  nh_cost *cost;
} newmark_lanes_ctx;

/* scaled_velocity on every lane. */
static inline NH_LANES_INLINE void scaled_velocity_lanes(const newmark_lanes_ctx *C, const double *dq, const double *g1,
                                                         const double *A1, const double *L0, const double *L1,
                                                         double *w, const int n, const int k) {
  const double b2 = C->beta2, c = C->c;
  NH_LANES_ALIGNED double s[NH_MAX_N * NH_LANES], space[NH_MAX_N * NH_LANES];
  for (int i = 0; i < n; i++) {
    double *const t = NH_LANE_ROW(s, i);
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++)
      t[l] = c * (2 * b2 * NH_LANE_AT(C->g0, i, l) + (1 - 2 * b2) * NH_LANE_AT(g1, i, l));
    for (int a = 0; a < k; a++) {
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++)
        t[l] -= 2 * b2 * NH_LANE_AT(C->A0, a * n + i, l) * NH_LANE_AT(L0, a, l) +
                (1 - 2 * b2) * NH_LANE_AT(A1, a * n + i, l) * NH_LANE_AT(L1, a, l);
    }
  }
  const double *Mis = nh_lanes_mass_solved(C->sys, s, space);
#pragma omp simd
  for (int i = 0; i < n * NH_LANES; i++) w[i] = dq[i] - Mis[i];
}

/* Σ_j over lanes: out[l] = Σ_{j<count} X[j·xs + xo][l] · Y[j·ys + yo][l], from 0 in increasing j
 * (the scalar code's sums). */
static inline NH_LANES_INLINE void dot_lanes(int count, const double *X, int xs, int xo, const double *Y, int ys,
                                             int yo, double *out) {
  double s[NH_LANES] = {0};
  for (int j = 0; j < count; j++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) s[l] += NH_LANE_AT(X, j * xs + xo, l) * NH_LANE_AT(Y, j * ys + yo, l);
  }
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) out[l] = s[l];
}

/* What newmark_residual computes from the kernels' values, on every lane: rows (R1), (R3), (R4)·h
 * and their Jacobian, in the lane layout of nh_newton_solve_lanes. */
typedef struct {
  const double *dq, *L0, *L1, *g1, *A1, *dA1, *Abar, *dAbar, *w, *B1;
  double *K, *F, *J;
} residual_lanes_parts;

static inline NH_LANES_INLINE void assemble_lanes(const newmark_lanes_ctx *C, const residual_lanes_parts *P,
                                                  const int n, const int k) {
  const int dim = n + 2 * k;
  const int iq = 0, iL0 = n, iL1 = n + k, r1 = 0, r3 = n, r4 = n + k;
  const double *M = C->sys->M, b = C->beta, b2 = C->beta2, a = C->alpha, h = C->h, c = C->c;
  const double *dq = P->dq, *L0 = P->L0, *L1 = P->L1, *A1 = P->A1, *dA1 = P->dA1;
  double *K = P->K, *F = P->F, *J = P->J, s[NH_LANES];
#define JL(row, col) NH_LANE_ROW(J, (row)*dim + (col))
  for (int i = 0; i < n; i++)
    for (int j = 0; j < n; j++) {
      double *const Kij = NH_LANE_ROW(K, i * n + j);
      dot_lanes(k, dA1, n * n, i * n + j, L1, 1, 0, s); /* ∂(A1ᵀΛ1)_i/∂q1_j */
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) Kij[l] = c * Kij[l] - s[l];
    }
  for (int i = 0; i < n; i++) {
    double Mdq[NH_LANES] = {0}, Mv0[NH_LANES] = {0}, A0L0[NH_LANES], A1L1[NH_LANES];
    for (int j = 0; j < n; j++) {
      const double m = M[i * n + j];
      double *const Jij = JL(r1 + i, iq + j);
      const double *const Kij = NH_LANE_ROW(K, i * n + j);
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) {
        Mdq[l] += m * NH_LANE_AT(dq, j, l);
        Mv0[l] += m * C->x->v[j][l];
        Jij[l] = m + 2 * b * Kij[l];
      }
    }
    dot_lanes(k, C->A0, n, i, L0, 1, 0, A0L0);
    dot_lanes(k, A1, n, i, L1, 1, 0, A1L1);
    for (int m = 0; m < k; m++) {
      double *const J0 = JL(r1 + i, iL0 + m), *const J1 = JL(r1 + i, iL1 + m);
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++)
        J0[l] = -(1 - 2 * b) * NH_LANE_AT(C->A0, m * n + i, l), J1[l] = -2 * b * NH_LANE_AT(A1, m * n + i, l);
    }
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++)
      NH_LANE_AT(F, r1 + i, l) = Mdq[l] - h * Mv0[l] +
                                 c * ((1 - 2 * b) * NH_LANE_AT(C->g0, i, l) + 2 * b * NH_LANE_AT(P->g1, i, l)) -
                                 (1 - 2 * b) * A0L0[l] - 2 * b * A1L1[l];
  }
  for (int m = 0; m < k; m++) {
    dot_lanes(n, P->Abar, 1, m * n, dq, 1, 0, NH_LANE_ROW(F, r3 + m));
    dot_lanes(n, A1, 1, m * n, P->w, 1, 0, NH_LANE_ROW(F, r4 + m));
    for (int j = 0; j < n; j++) {
      double curv3[NH_LANES], curv4[NH_LANES], B1K[NH_LANES];
      dot_lanes(n, P->dAbar, n, m * n * n + j, dq, 1, 0, curv3);
      dot_lanes(n, dA1, n, m * n * n + j, P->w, 1, 0, curv4);
      dot_lanes(n, P->B1, k, m, K, n, j, B1K);
      double *const J3 = JL(r3 + m, iq + j), *const J4 = JL(r4 + m, iq + j);
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) {
        J3[l] = NH_LANE_AT(P->Abar, m * n + j, l) + a * curv3[l];
        J4[l] = curv4[l] + NH_LANE_AT(A1, m * n + j, l) - (1 - 2 * b2) * B1K[l];
      }
    }
    for (int o = 0; o < k; o++) {
      double A1B0[NH_LANES], A1B1[NH_LANES];
      dot_lanes(n, A1, 1, m * n, C->B0, k, o, A1B0);
      dot_lanes(n, A1, 1, m * n, P->B1, k, o, A1B1);
      double *const J30 = JL(r3 + m, iL0 + o), *const J31 = JL(r3 + m, iL1 + o);
      double *const J40 = JL(r4 + m, iL0 + o), *const J41 = JL(r4 + m, iL1 + o);
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) {
        J30[l] = J31[l] = 0;
        J40[l] = 2 * b2 * A1B0[l];
        J41[l] = (1 - 2 * b2) * A1B1[l];
      }
    }
  }
#undef JL
}

/* newmark_residual on every lane, for n coordinates and k constraints. */
static inline NH_LANES_INLINE void residual_shaped_lanes(const newmark_lanes_ctx *C, const double *X,
                                                         const int *running, double *F, double *J, const int n,
                                                         const int k) {
  const nh_system *sys = C->sys;
  NH_LANES_ALIGNED double g1[NH_MAX_N * NH_LANES], K[NH_MAX_N * NH_MAX_N * NH_LANES],
      A1[NH_MAX_K * NH_MAX_N * NH_LANES];
  NH_LANES_ALIGNED double dA1[NH_MAX_K * NH_MAX_N * NH_MAX_N * NH_LANES], q1[NH_MAX_N * NH_LANES],
      w[NH_MAX_N * NH_LANES];
  NH_LANES_ALIGNED double B1[NH_MAX_N * NH_MAX_K * NH_LANES], Abar[NH_MAX_K * NH_MAX_N * NH_LANES];
  NH_LANES_ALIGNED double dAbar[NH_MAX_K * NH_MAX_N * NH_MAX_N * NH_LANES];
  const double *dAbar_of = dAbar, *B1_of = B1;
#pragma omp simd
  for (int i = 0; i < n * NH_LANES; i++) q1[i] = (&C->x->q[0][0])[i] + X[i];
  nh_lanes_grad_potential(sys, q1, g1);
  nh_lanes_hess_potential(sys, q1, K);
  NH_LANES_COUNT(C->cost, running, rhs_evals);
  if (k) {
    nh_lanes_constraints(sys, q1, A1);
    nh_lanes_constraints_jacobian(sys, q1, dA1);
    NH_LANES_COUNT(C->cost, running, constraint_evals);
    dAbar_of = discrete_constraint_matrix_lanes(sys, C->disc, C->alpha, &C->x->q[0][0], C->A0, q1, A1, dA1, Abar, dAbar,
                                                running, C->cost);
    scaled_velocity_lanes(C, X, g1, A1, NH_LANE_ROW(X, n), NH_LANE_ROW(X, n + k), w, n, k);
    /* B1 = M⁻¹A1ᵀ, A1 itself for M = I and one constraint (the transpose of one row is that row
     * in the lane layout: nh_lanes_mass_solve_transpose's copy) */
    if (sys->unit_mass && k == 1) B1_of = A1;
    else nh_lanes_mass_solve_transpose(sys, A1, B1);
  }
  const residual_lanes_parts P = {.dq = X,
                                  .L0 = NH_LANE_ROW(X, n),
                                  .L1 = NH_LANE_ROW(X, n + k),
                                  .g1 = g1,
                                  .A1 = A1,
                                  .dA1 = dA1,
                                  .Abar = Abar,
                                  .dAbar = dAbar_of,
                                  .w = w,
                                  .B1 = B1_of,
                                  .K = K,
                                  .F = F,
                                  .J = J};
  assemble_lanes(C, &P, n, k);
}

/* newmark_residual on every lane (nh_newton_lanes_fn). */
static inline NH_LANES_INLINE void newmark_residual_lanes_lanes(void *vctx, const double *X, const int *running,
                                                                double *F, double *J) {
  const newmark_lanes_ctx *C = vctx;
  NH_LANES_SHAPED(C->n, C->k, residual_shaped_lanes, C, X, running, F, J);
}
NH_LANES_ISA_VARIANTS(newmark_residual_lanes, (void *vctx, const double *X, const int *running, double *F, double *J), (vctx, X, running, F, J))

/* newmark_setup on every lane. */
static void newmark_setup_lanes(const nh_method *m, const nh_system *sys, const nh_lanes *x, double h,
                                newmark_lanes_ctx *C, const int *live, nh_cost *cost) {
  C->sys = sys, C->n = sys->n, C->k = sys->k, C->disc = nh_newmark_disc(m->p[P_CONSTRAINT]);
  C->beta = m->p[P_BETA], C->beta2 = m->p[P_BETA2], C->alpha = m->p[P_ALPHA], C->h = h, C->c = 0.5 * h * h;
  C->x = x, C->cost = cost;
  nh_lanes_grad_potential(sys, &x->q[0][0], C->g0);
  NH_LANES_COUNT(cost, live, rhs_evals);
  if (sys->k) {
    nh_lanes_constraints(sys, &x->q[0][0], C->A0);
    NH_LANES_COUNT(cost, live, constraint_evals);
  }
  nh_lanes_mass_solve_transpose(sys, C->A0, C->B0);
}

/* The predictor of nh_newmark_step on every lane: X = [Δq | cλ | cλ]; running[l] = 0 where the
 * multiplier is undefined. */
static inline NH_LANES_INLINE void predictor_lanes_lanes(const newmark_lanes_ctx *C, int *running, double *X) {
  const nh_system *sys = C->sys;
  const int n = C->n, k = C->k;
  const double h = C->h, c = C->c;
  NH_LANES_ALIGNED double lambda[NH_MAX_K * NH_LANES], a[NH_MAX_N * NH_LANES], f[NH_MAX_N * NH_LANES],
      acc[NH_MAX_N * NH_LANES];
  int failed[NH_LANES];
  nh_lanes_acceleration(sys, C->x->t, &C->x->q[0][0], &C->x->v[0][0], a, lambda, failed);
  for (int l = 0; l < NH_LANES; l++) running[l] = running[l] && !failed[l];
  NH_LANES_COUNT(C->cost, running, rhs_evals);
  if (k) NH_LANES_COUNT(C->cost, running, constraint_evals);
  for (int i = 0; i < n; i++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) NH_LANE_AT(f, i, l) = -NH_LANE_AT(C->g0, i, l);
    for (int b = 0; b < k; b++) {
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++)
        NH_LANE_AT(f, i, l) += NH_LANE_AT(C->A0, b * n + i, l) * NH_LANE_AT(lambda, b, l);
    }
  }
  nh_lanes_matvec(n, sys->Minv, f, acc); /* nh_newmark_minv */
  for (int i = 0; i < n; i++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) NH_LANE_AT(X, i, l) = h * C->x->v[i][l] + c * NH_LANE_AT(acc, i, l);
  }
  for (int b = 0; b < k; b++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++)
      NH_LANE_AT(X, n + b, l) = NH_LANE_AT(X, n + k + b, l) = c * NH_LANE_AT(lambda, b, l);
  }
}
NH_LANES_ISA_VARIANTS(predictor_lanes, (const newmark_lanes_ctx *C, int *running, double *X), (C, running, X))

/* y's lanes from the solution: t + h, z, q1, v1 (projected by the caller), the multipliers. Where
 * the scalar step copies all of x into y first, this writes only what the step changes and z, as
 * nh_rattle's and herglotz's steps in lanes do: y's other fields, which no step of this method
 * writes, are already x's in the evolve layer's ring (integrators/evolve.c) and in a composition's
 * (compose.c). The copy of all of x (2.4 KB, a `rep movs`) took 1 % of a step on the chaotic particle. */
static inline NH_LANES_INLINE void result_lanes(int n, int k, double h, double c, const nh_lanes *x, const double *dq,
                                                const double *v1, const double *L0, const double *L1, nh_lanes *y) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) y->t[l] = x->t[l] + h, y->z[l] = x->z[l];
  for (int i = 0; i < n; i++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++)
      y->q[i][l] = x->q[i][l] + NH_LANE_AT(dq, i, l), y->v[i][l] = NH_LANE_AT(v1, i, l);
  }
  for (int a = 0; a < k; a++) { /* store_multipliers */
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) {
      y->carry[offsetof(newmark_carry, lambda_k) / sizeof(double) + a][l] = NH_LANE_AT(L0, a, l) / c;
      y->lambda[a][l] = NH_LANE_AT(L1, a, l) / c;
    }
  }
}

/* finish_step on every lane that converged (running): v1 = w/h projected onto D at q1. */
static inline NH_LANES_INLINE void finish_shaped_lanes(const newmark_lanes_ctx *C, const double *X, int *running,
                                                       nh_lanes *y, const int n, const int k) {
  const nh_system *sys = C->sys;
  NH_LANES_ALIGNED double q1[NH_MAX_N * NH_LANES], g1[NH_MAX_N * NH_LANES], A1[NH_MAX_K * NH_MAX_N * NH_LANES],
      w[NH_MAX_N * NH_LANES];
  NH_LANES_ALIGNED double unused[NH_MAX_K * NH_LANES];
  int failed[NH_LANES];
#pragma omp simd
  for (int i = 0; i < n * NH_LANES; i++) q1[i] = (&C->x->q[0][0])[i] + X[i];
  nh_lanes_grad_potential(sys, q1, g1);
  if (k) nh_lanes_constraints(sys, q1, A1);
  NH_LANES_COUNT(C->cost, running, rhs_evals);
  if (k) NH_LANES_COUNT(C->cost, running, constraint_evals);
  scaled_velocity_lanes(C, X, g1, A1, NH_LANE_ROW(X, n), NH_LANE_ROW(X, n + k), w, n, k);
#pragma omp simd
  for (int i = 0; i < n * NH_LANES; i++) w[i] = w[i] / C->h;
  result_lanes(n, k, C->h, C->c, C->x, X, w, NH_LANE_ROW(X, n), NH_LANE_ROW(X, n + k), y);
  if (!k) return;
  nh_lanes_project_onto(sys, A1, &y->v[0][0], unused, failed);
  for (int l = 0; l < NH_LANES; l++) {
    if (running[l] && failed[l]) running[l] = 0;
    C->cost[l].linear_solves += running[l] != 0;
  }
}

static inline NH_LANES_INLINE void finish_step_lanes_lanes(const newmark_lanes_ctx *C, const double *X, int *running,
                                                           nh_lanes *y) {
  NH_LANES_SHAPED(C->n, C->k, finish_shaped_lanes, C, X, running, y);
}
NH_LANES_ISA_VARIANTS(finish_step_lanes, (const newmark_lanes_ctx *C, const double *X, int *running, nh_lanes *y), (C, X, running, y))

/* ---- the fast path in lanes: constraint_ctx, constraint_eval, fast_step on every lane --------------- */

typedef struct {
  const nh_system *sys;
  int n, k, disc;
  double alpha;
  const double *q0, *dp;
  NH_LANES_ALIGNED double A0[NH_MAX_K * NH_MAX_N * NH_LANES], B[NH_MAX_N * NH_MAX_K * NH_LANES];
  const int *counted; /* the lanes whose evaluations are counted */
  nh_cost *cost;
} constraint_lanes_ctx;

/* constraint_setup on every lane: A0 and B = M⁻¹A0ᵀ (always through M⁻¹, as there). */
static void constraint_setup_lanes(constraint_lanes_ctx *C) {
  const int n = C->n, k = C->k;
  nh_lanes_constraints(C->sys, C->q0, C->A0);
  NH_LANES_COUNT(C->cost, C->counted, constraint_evals);
  for (int i = 0; i < n; i++)
    for (int b = 0; b < k; b++) {
      double s[NH_LANES] = {0};
      for (int j = 0; j < n; j++) {
        const double m = C->sys->Minv[i * n + j];
#pragma omp simd
        for (int l = 0; l < NH_LANES; l++) s[l] += m * NH_LANE_AT(C->A0, b * n + j, l);
      }
      memcpy(NH_LANE_ROW(C->B, i * k + b), s, sizeof s);
    }
}

static void constrained_increment_lanes(const constraint_lanes_ctx *C, const double *L, double *dq) {
  for (int i = 0; i < C->n; i++) {
    double s[NH_LANES];
    memcpy(s, NH_LANE_ROW(C->dp, i), sizeof s);
    for (int b = 0; b < C->k; b++) {
#pragma omp simd
      for (int l = 0; l < NH_LANES; l++) s[l] += NH_LANE_AT(C->B, i * C->k + b, l) * NH_LANE_AT(L, b, l);
    }
    memcpy(NH_LANE_ROW(dq, i), s, sizeof s);
  }
}

/* constraint_eval on every lane; linear[l] its return value. */
static void constraint_eval_lanes(const constraint_lanes_ctx *C, const double *L, double *R, double *J, int *linear) {
  const int n = C->n, k = C->k;
  const double a = C->alpha;
  NH_LANES_ALIGNED double q1[NH_MAX_N * NH_LANES], dq[NH_MAX_N * NH_LANES], Abar[NH_MAX_K * NH_MAX_N * NH_LANES];
  NH_LANES_ALIGNED double dAbar[NH_MAX_K * NH_MAX_N * NH_MAX_N * NH_LANES], moves[NH_LANES] = {0};
  constrained_increment_lanes(C, L, dq);
#pragma omp simd
  for (int i = 0; i < n * NH_LANES; i++) q1[i] = C->q0[i] + dq[i];
  const double *dAbar_of = discrete_constraint_matrix_lanes(C->sys, C->disc, a, C->q0, C->A0, q1, NULL, NULL, Abar,
                                                            dAbar, C->counted, C->cost);
  for (int m = 0; m < k; m++) {
    dot_lanes(n, Abar, 1, m * n, dq, 1, 0, NH_LANE_ROW(R, m));
    for (int b = 0; b < k; b++) {
      double s[NH_LANES] = {0};
      for (int i = 0; i < n; i++) {
        double t[NH_LANES]; /* (dμ̄ B)_{m i b} */
        dot_lanes(n, dAbar_of, 1, (m * n + i) * n, C->B, k, b, t);
#pragma omp simd
        for (int l = 0; l < NH_LANES; l++) {
          moves[l] = t[l] != 0 ? 1 : moves[l];
          s[l] += NH_LANE_AT(Abar, m * n + i, l) * NH_LANE_AT(C->B, i * k + b, l) + a * t[l] * NH_LANE_AT(dq, i, l);
        }
      }
      if (J) memcpy(NH_LANE_ROW(J, m * k + b), s, sizeof s);
    }
  }
  for (int l = 0; l < NH_LANES; l++) linear[l] = a == 0 || moves[l] == 0;
}

static void constraint_newton_lanes_fn(void *vctx, const double *L, const int *running, double *R, double *J) {
  constraint_lanes_ctx *C = vctx;
  int linear[NH_LANES];
  C->counted = running;
  constraint_eval_lanes(C, L, R, J, linear);
}

/* nh_newmark_constrained_increment on the lanes with running[l] (cleared where it fails). */
static void constrained_increment_step_lanes(const nh_system *sys, int disc, double alpha, const double *q0,
                                             const double *dp, double *dq, double *Lambda, int *running,
                                             nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  constraint_lanes_ctx C = {
      .sys = sys, .n = n, .k = k, .disc = disc, .alpha = alpha, .q0 = q0, .dp = dp, .counted = running, .cost = cost};
  NH_LANES_ALIGNED double R[NH_MAX_K * NH_LANES], J[NH_MAX_K * NH_MAX_K * NH_LANES];
  int linear[NH_LANES], failed[NH_LANES], again[NH_LANES];
  nh_step_status solved[NH_LANES];
  if (k == 0) {
    memcpy(dq, dp, sizeof(double) * (size_t)(n * NH_LANES));
    return;
  }
  constraint_setup_lanes(&C);
  memset(Lambda, 0, sizeof(double) * (size_t)(k * NH_LANES));
  constraint_eval_lanes(&C, Lambda, R, J, linear);
  NH_LANES_COUNT(cost, running, jacobian_evals);
  NH_LANES_COUNT(cost, running, linear_solves);
  nh_lanes_lu_solve(k, J, R, failed);
  for (int l = 0; l < NH_LANES; l++) running[l] = running[l] && !failed[l];
#pragma omp simd
  for (int i = 0; i < k * NH_LANES; i++) Lambda[i] = -R[i];
  if (alpha != 0) { /* the linearity seen at Λ = 0 confirmed at the solution */
    for (int l = 0; l < NH_LANES; l++) again[l] = running[l] && linear[l];
    C.counted = again;
    int still[NH_LANES];
    constraint_eval_lanes(&C, Lambda, R, J, still);
    NH_LANES_COUNT(cost, again, jacobian_evals);
    for (int l = 0; l < NH_LANES; l++) linear[l] = again[l] ? still[l] : linear[l];
  }
  for (int l = 0; l < NH_LANES; l++) again[l] = running[l] && !linear[l];
  nh_newton_solve_lanes(k, Lambda, constraint_newton_lanes_fn, &C, again, solved, cost);
  for (int l = 0; l < NH_LANES; l++)
    if (again[l] && solved[l] != NH_STEP_OK) running[l] = 0;
  constrained_increment_lanes(&C, Lambda, dq);
}

static inline NH_LANES_INLINE void fast_step_lanes_lanes(const nh_method *m, const nh_system *sys, const nh_lanes *x, nh_lanes *y, double h,
                            int *running, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  NH_LANES_ALIGNED double g[NH_MAX_N * NH_LANES], Mg[NH_MAX_N * NH_LANES], dp[NH_MAX_N * NH_LANES],
      dq[NH_MAX_N * NH_LANES];
  NH_LANES_ALIGNED double q1[NH_MAX_N * NH_LANES], v1[NH_MAX_N * NH_LANES], A1[NH_MAX_K * NH_MAX_N * NH_LANES];
  NH_LANES_ALIGNED double L0[NH_MAX_K * NH_LANES], L1[NH_MAX_K * NH_LANES];
  int failed[NH_LANES];
  nh_lanes_grad_potential(sys, &x->q[0][0], g);
  NH_LANES_COUNT(cost, running, rhs_evals);
  NH_LANES_COUNT(cost, running, steps);
  nh_lanes_matvec(n, sys->Minv, g, Mg); /* nh_newmark_minv */
  for (int i = 0; i < n; i++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) NH_LANE_AT(dp, i, l) = h * x->v[i][l] - 0.5 * h * h * NH_LANE_AT(Mg, i, l);
  }
  constrained_increment_step_lanes(sys, nh_newmark_disc(m->p[P_CONSTRAINT]), m->p[P_ALPHA], &x->q[0][0], dp, dq, L0,
                                   running, cost);
  /* nh_newmark_end_velocity */
#pragma omp simd
  for (int i = 0; i < n * NH_LANES; i++) q1[i] = (&x->q[0][0])[i] + dq[i];
  nh_lanes_grad_potential(sys, q1, g);
  NH_LANES_COUNT(cost, running, rhs_evals);
  nh_lanes_matvec(n, sys->Minv, g, Mg);
#pragma omp simd
  for (int i = 0; i < n * NH_LANES; i++) v1[i] = dq[i] / h - 0.5 * h * Mg[i];
  if (k) {
    NH_LANES_COUNT(cost, running, linear_solves);
    NH_LANES_COUNT(cost, running, constraint_evals);
    nh_lanes_constraints(sys, q1, A1);
    nh_lanes_project_onto(sys, A1, v1, L1, failed);
    for (int l = 0; l < NH_LANES; l++) running[l] = running[l] && !failed[l];
#pragma omp simd
    for (int i = 0; i < k * NH_LANES; i++) L1[i] = -h * L1[i];
  }
  result_lanes(n, k, h, 0.5 * h * h, x, dq, v1, L0, L1, y);
}
NH_LANES_ISA_VARIANTS(fast_step_lanes, (const nh_method *m, const nh_system *sys, const nh_lanes *x, nh_lanes *y, double h,
                            int *running, nh_cost *cost), (m, sys, x, y, h, running, cost))

static void nh_newmark_step_lanes(const nh_method *m, const nh_system *sys, const nh_lanes *x, nh_lanes *y, double h,
                                  const int *live, nh_step_status *status, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  newmark_lanes_ctx C;
  NH_LANES_ALIGNED double X[NH_NEWTON_MAX_DIM * NH_LANES];
  int running[NH_LANES];
  nh_step_status solved[NH_LANES];
  for (int l = 0; l < NH_LANES; l++) running[l] = live[l];
  if (m->p[P_BETA] == 0 && m->p[P_BETA2] == 0 && m->p[P_FAST]) {
    fast_step_lanes(m, sys, x, y, h, running, cost);
  } else {
    newmark_setup_lanes(m, sys, x, h, &C, live, cost);
    NH_LANES_COUNT(cost, live, steps);
    predictor_lanes(&C, running, X);
    nh_newton_solve_lanes(n + 2 * k, X, newmark_residual_lanes, &C, running, solved, cost);
    for (int l = 0; l < NH_LANES; l++) running[l] = running[l] && solved[l] == NH_STEP_OK;
    finish_step_lanes(&C, X, running, y);
  }
  for (int l = 0; l < NH_LANES; l++)
    if (live[l]) status[l] = running[l] ? NH_STEP_OK : NH_STEP_SOLVER_FAILED;
}

/* ---- hooks ------------------------------------------------------------------------------------ */

static void discrete_constraint(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                                double h, double *out) {
  nh_newmark_discrete_constraint(sys, nh_newmark_disc(m->p[P_CONSTRAINT]), m->p[P_ALPHA], x->q, y->q, h, out);
}

/* Prop 3.5: F^{0,0,α} is DLA with L_d^{sym,α}; with β or β' ≠ 0 the method is not variational. */
static double discrete_action(const nh_method *m, const nh_system *sys, double t NH_UNUSED, const double *q0,
                              const double *q1, double h) {
  if (m->p[P_BETA] != 0 || m->p[P_BETA2] != 0) return NAN;
  return nh_newmark_discrete_action(sys, m->p[P_ALPHA], q0, q1, h);
}

/* λ_k of (N1) the step x → y solved for, carried in y (store_multipliers). */
static void start_multiplier(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *y, double *out) {
  for (int a = 0; a < sys->k; a++) out[a] = LAMBDA_K(y)[a];
}

static int newton_size(const nh_method *m NH_UNUSED, const nh_system *sys) { return sys->n + 2 * sys->k; }

static void newton_eval(const nh_method *m, const nh_system *sys, const nh_state *x, double h, const double *X,
                        double *F, double *J) {
  double Jl[NH_NEWTON_MAX_DIM * NH_NEWTON_MAX_DIM];
  nh_cost unused = {0};
  newmark_ctx C;
  newmark_setup(m, sys, x, h, &C, &unused);
  newmark_residual(&C, X, F, J ? J : Jl);
}

/* Y = [Δq | Λ0 | Λ1] from the step's result: Δq = q1 − q0 (as rounded in y), Λ0 = c λ_k (carried),
 * Λ1 = c λ'_{k+1} (y->lambda). */
static void newton_unknowns(const nh_method *m NH_UNUSED, const nh_system *sys, const nh_state *x,
                            const nh_state *y, double h, double *X) {
  const int n = sys->n, k = sys->k;
  const double c = 0.5 * h * h;
  for (int i = 0; i < n; i++) X[i] = y->q[i] - x->q[i];
  for (int a = 0; a < k; a++) {
    X[n + a] = c * LAMBDA_K(y)[a];
    X[n + k + a] = c * y->lambda[a];
  }
}

/* The paper's unscaled system (spec/newmark.md §2.5 and C12, whose h^-3 and h^-5 are of it): the
 * multipliers λ_k, λ'_{k+1} themselves, Λ = (h²/2)λ (columns n … n+2k−1 times c), and (N3), (N4)
 * as written, Φ = ⟨μ̄, q1 − q0⟩/h and A(q1)v1 = A(q1)w/h (rows n … n+2k−1 divided by h): J_paper =
 * diag(row)·J·diag(col). What stays: (N1) multiplied by M (M = I in the paper's examples; for
 * another constant M a non-diagonal factor that h does not enter) and v1 eliminated through (N2),
 * an exact Schur complement (the spec's check measures h^-3 and h^-5 with it,
 * tests/integrators/test_method_hooks_newmark.c). */
static void newton_scaling(const nh_method *m NH_UNUSED, const nh_system *sys, double h, double *row, double *col) {
  const int n = sys->n, dim = n + 2 * sys->k; /* newton_size */
  for (int i = 0; i < dim; i++) {
    row[i] = i < n ? 1 : 1 / h;
    col[i] = i < n ? 1 : 0.5 * h * h;
  }
}

static int validate(const nh_method *m, char *err, size_t errlen) {
  double s = m->p[P_BETA] + m->p[P_BETA2];
  if (fabs(s - 0.5) < 1e-12 && m->p[P_ALLOW_ILL] == 0) {
    snprintf(err, errlen,
             "nh_newmark: beta + beta2 = 1/2 makes the Newton system ill-conditioned "
             "(spec/newmark.md 2.5, Remark 3.3); add allow_ill_conditioned=1 to run it anyway");
    return -1;
  }
  return 0;
}

/* Run anyway at β + β' = ½ (allow_ill_conditioned=1): the results file says so (spec/newmark.md §2.5, C12). */
static const char *caveat(const nh_method *m) {
  if (fabs(m->p[P_BETA] + m->p[P_BETA2] - 0.5) >= 1e-12) return NULL;
  return "beta + beta2 = 1/2 (run with allow_ill_conditioned=1): the Newton system is ill-conditioned, the individual "
         "multipliers lambda_k, lambda'_k+1 are meaningless and errors grow as h shrinks (spec/newmark.md 2.5, "
         "Remark 3.3)";
}

static int is_symmetric(const nh_method *m) {
  return m->p[P_BETA] == m->p[P_BETA2] && m->p[P_ALPHA] == 0.5;
}

/* Prop 3.4: β = β' with the symmetric α = ½ is order 2; otherwise γ ≠ ½ or α ≠ ½: order 1. */
static int order(const nh_method *m) { return is_symmetric(m) ? 2 : 1; }

/* (F^{β,β',α}_h)* = F^{β',β,1−α}_h, for (14) and (15) (spec/newmark.md §2.7). */
static int adjoint(const nh_method *m, nh_method *adj) {
  *adj = *m;
  adj->p[P_BETA] = m->p[P_BETA2];
  adj->p[P_BETA2] = m->p[P_BETA];
  adj->p[P_ALPHA] = 1 - m->p[P_ALPHA];
  return 0;
}

static const nh_newton_hooks newton_hooks = {newton_size, newton_eval, newton_unknowns, newton_scaling};

const nh_integrator_type nh_integrator_nh_newmark = {
    .name = "nh_newmark",
    .doc = "Nonholonomic Newmark F_h^{beta,beta',alpha} (spec/newmark.md 2.3-2.5), equations (N1)-(N4), "
           "solved by Newton with an analytic Jacobian. For beta = beta2 = 0 (the DLA member, 2.6) a fast "
           "path (2.9, Prop 3.8) solves (N3) for the k multipliers only, in closed form when it is linear "
           "(all three paper examples), then (N2)+(N4) by one k x k solve; fast=0 forces the full Newton "
           "system. Order 2 when beta = beta2 and alpha = 1/2, else 1. "
           "Adjoint: nh_newmark(beta=beta2, beta2=beta, alpha=1-alpha).",
    .params = params,
    .nparams = P_COUNT,
    .aliases = aliases,
    .properties = NH_PRESERVES_CONSTRAINT,
    .applies_doc = "needs a constant mass matrix, linear constraints and no damping or forcing "
                   "(spec/newmark.md 2.0)",
    .validate = validate,
    .caveat = caveat,
    .order = order,
    .is_symmetric = is_symmetric,
    .adjoint = adjoint,
    .step = nh_newmark_step,
    .step_lanes = nh_newmark_step_lanes,
    .lambda_time = NH_LAMBDA_END,
    .lambda_doc = "lambda'_{k+1} of (N2) (= 2 Lambda1/h^2, the multiplier of Gamma_nh at q_{k+1}): an O(h) "
                  "approximation of lambda(t_{k+1}) for alpha = 1/2; for alpha != 1/2 it tends to lambda - c "
                  "C^-1 (DA[v])v, c = (1-2 alpha)(1-2 beta+2 beta2)/(1-2 beta-2 beta2), an O(1) offset. "
                  "The state carries lambda_k of (N1) at q_k (one-step studies: lambda_start)",
    .start_multiplier = start_multiplier,
    .discrete_constraint = discrete_constraint,
    .discrete_constraint_doc = "Phi(q_k, q_{k+1}) of (N3): constraint=point, (14) <mu((1-alpha) q_k + alpha q_{k+1}), "
                               "(q_{k+1}-q_k)/h>, or constraint=average, (15) <(1-alpha) mu(q_k) + alpha mu(q_{k+1}), "
                               "(q_{k+1}-q_k)/h> "
                               "(spec/newmark.md 2.4)",
    .discrete_action = discrete_action,
    .newton = &newton_hooks,
};
