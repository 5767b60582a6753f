/* One-step study (issue 8; spec/discretization.md §6.3, §6.4, R1, R17, R18, R19; spec/newmark.md
 * §2.5, §2.7, C8, C12): one step of every method and h from points on the exact (or rk8pd
 * reference) solution, and what that single step shows:
 *   local_err       |F_h(x) − φ_h(x)| in the study's norm over (q, v), and over q and v alone;
 *                   slope p + 1 against h for a method of order p (§6.3, R18)
 *   stepped         F_h(x); lambda, lambda_err: the step's multiplier against λ(t*) of
 *                   nh_multiplier on the true solution, t* = the method's multiplier time;
 *                   lambda_start: the multiplier it computes at its start node, where the type
 *                   defines one (nh_newmark's λ_k of (N1): C12's opposite signs)
 *   backward        F_{−h}(x), after init with −h; backward_lambda its multipliers
 *   adjoint_defect  |F*_{−h}(F_h(x)) − x|, F* = nh_method_adjoint: round-off when F* is the
 *                   true adjoint (C8), O(h^{p+1}) otherwise (nh_onestep_adjoint_defect with
 *                   F* = F for a non-symmetric F: the O(h²) negative control of C8)
 *   adjoint_defect_lambda  the λ part of that round trip, max_a |λ_a(F*_{−h}(F_h(x))) − λ_a(x)|, for a
 *                   method whose state carries λ (nh_rattle's triples (q, p, λ), spec/rattle.md §3.3);
 *                   NaN for every other method, whose y->lambda is an output, not state
 *   reversal_defect |F_{−h}(F_h(x)) − x|, F itself whatever its adjoint (C8's contrast): equal to
 *                   adjoint_defect bit for bit where the declared adjoint is F (a symmetric method:
 *                   the same computation), O(h²) for nh_newmark(alpha=0), O(h^{p+2}) for an even
 *                   order p (the h^{p+1} terms of the two steps cancel: rk4's is O(h⁶))
 *   cond            ‖J‖₁‖J⁻¹‖₁ of the method's Newton Jacobian at the step's solution (§2.5, C12, R17)
 *   cond_unscaled   the same of diag(row)·J·diag(col), the factors of its Newton hooks' scaling: the
 *                   Jacobian in the unknowns and equations of the method's source, where C12's
 *                   h^-3 and h^-5 (nh_newmark) and R17's growth without the hλ scaling (js_b) live
 *   action_err      |L_d(q(t), q(t+h)) − ∫_t^{t+h} L dt| for variational methods (R1)
 *   embedding_residual  max_i ‖ρ(t_i)‖, ρ = ∂_tG − X(G), G(t) = (1 − χ(t/h)) φ_t(x) + χ(t/h) φ_{t−h}(y),
 *                   y = F_h(x), X(q, v) = (v, a(t, q, v)) the index-reduced field at the absolute time
 *                   x.t + t, χ the smooth step of §6.2, over the interior grid t_i = i·h/(N + 1),
 *                   i = 1 … N = NH_EMBEDDING_GRID (§6.4, R19): O(h^p). The blend is taken in (q, v)
 *                   (see embedding_residual). With the rk8pd reference its floor is ~tol/h: the
 *                   truth's error enters through (χ'/h)(φ_{t−h}(y) − φ_t(x)).
 *
 * Points: for initial condition i and j = 0 … npoints−1, the true solution from ics[i] at
 * t_j = ics[i].t + j·T/npoints, point index i·npoints + j; j = 0 is ics[i] itself; the velocity of
 * the others projected onto D (the reference's round-off removed). A point keeps
 * ics[i]'s z; its multiplier and carry are zero until the method's init fills them.
 *
 * Truth per (h, point), shared by all methods and computed once: the true solution from the point
 * at t + h/2 and t + h, λ at t, t + h/2, t + h, the action integral by 20-point Gauss–Legendre
 * over [t, t + h] (L analytic, |h| small: the quadrature error is far below round-off of L_d), and
 * φ_{t_i}(x) on the embedding grid (one rk8pd run through the grid, nh_true_solution_times).
 * reference_kind is "exact" when every one of these true states came from the system's exact
 * solution, else "rk8pd". The states φ_{t_i − h}(y) back from each method's own y are the task's.
 *
 * Per task (method, h, point), OpenMP dynamic schedule, each task writing only its own slots:
 * results are bit-identical whatever the number of threads.
 *   status          the forward step's: init(x, h) then F_h(x). On failure every field of the
 *                   task is NaN but cond and cond_unscaled, taken at the step's start (failed_step_condition). A failing backward or adjoint step leaves NaN in its own field
 *                   only (the forward values stay valid; status does not record it).
 *   adjoint_defect  NaN when the method declares no adjoint (nh_method_adjoint NULL: rk4, js_a …),
 *                   and for two-step methods (NH_HISTORY: dla, nh_shake, shake, or a composition
 *                   over one): their state carries the increment made with +h, and a step of −h
 *                   from it would need the history of the reversed trajectory (q_{k+2}), which a
 *                   single step does not have; their reversibility is a property of the
 *                   recurrence, not of the map on (q, v). F*_{−h} starts from y = F_h(x) as the
 *                   step left it, carry included (RATTLE's λ_{k+1}, nh_newmark's λ_k): for a
 *                   symmetric method F* = F and that is exactly the state a next step needs; an
 *                   adjoint of another type (none today) is first initialised on y with −h. x is
 *                   the state F_h started from, after init (js_p2orig's init moves it onto D_h).
 *   cond            NaN when the type has no Newton hooks (newton_size NULL or 0: explicit
 *                   methods, compositions) or the Jacobian has a non-finite entry; +Inf when LU
 *                   meets an exactly zero pivot (nh_newmark at (β, β') = (½, 0)). The Jacobian is
 *                   newton_eval at newton_unknowns(x, y): the method's own (scaled) unknowns.
 *   reversal_defect NaN for two-step methods, as adjoint_defect (the same routine with F* = F);
 *                   defined for every other method, those without a declared adjoint included.
 *   cond_unscaled   NaN where cond is, and for a method whose Newton hooks declare no scaling:
 *                   newmark, dla, rattle, shake, herglotz1, herglotz2, la1, m11,
 *                   mp418, nh_energy and spark have Newton hooks but declare none.
 *   action_err      NaN when the type has no discrete_action, the hook returns NaN (nh_newmark
 *                   with β or β' ≠ 0), or the system has damping or forcing (L = T − V is then
 *                   not the Lagrangian of the motion).
 *   embedding_residual  NaN when a true state φ_{t_i}(x) or φ_{t_i − h}(y) could not be computed
 *                   (the reference solver failed) or the acceleration is undefined on the blend;
 *                   a reference that runs out of memory fails the study, as the shared truths do
 *                   (the task returns -1: nh_journaled_tasks drops it). φ_{t−h}(y) is the system's
 *                   exact solution when it accepts y, else rk8pd: an exact solution that checks
 *                   its start is on D (knife edge, disks, pendulums) declines an off-D y, and
 *                   rk8pd then integrates X from it. The particle's does not check and projects
 *                   an off-D start onto D (it ignores ż0), which for a method that leaves D moves
 *                   b by |μ(y)·v_y|, as large as the local error (rk4 on the particle stays on D
 *                   to round-off there: its values agree with an rk8pd b to 3 digits or better).
 *                   G starts at the point x on D, whatever the method's init does: js_p2orig, whose
 *                   init moves x onto D_h by O(h), has an O(1) residual (measured 0.31 .. 0.23 on
 *                   the particle), the spec's "the exact flow is defined only on D" (§6.3).
 * Per method: slope = nh_fit_order over h of max over points of local_err, and action_slope over
 * max over points of action_err; an h at which any point is NaN is left out of the fit. */
#include <gsl/gsl_integration.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_permutation.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "studies/kinds.h"
#include "studies/sampling.h"
#include "studies/spec_load.h"
#include "studies/study.h"

#define GL_NODES 20

/* The study norm of d (n entries); NaN if any entry is NaN (nh_norm_max alone would skip it). */
static double norm_nan(nh_norm norm, int n, const double *d) {
  for (int i = 0; i < n; i++)
    if (isnan(d[i])) return NAN;
  return norm == NH_NORM_2 ? nh_norm_2(n, d) : nh_norm_max(n, d);
}

/* (q, v) of a − b into d (2n). */
static void state_diff(int n, const nh_state *a, const nh_state *b, double *d) {
  for (int i = 0; i < n; i++) d[i] = a->q[i] - b->q[i], d[n + i] = a->v[i] - b->v[i];
}

static void fill_nan(double *p, size_t count) {
  for (size_t i = 0; i < count; i++) p[i] = NAN;
}

/* One step of m from x to y, after m's own init of x if `init`: the status of whichever failed
 * first. A one-step study does not measure cost: the counters are thrown away. */
static nh_step_status step_from(const nh_method *m, const nh_system *sys, nh_state *x, nh_state *y, double h,
                                int init) {
  nh_cost unused = {0};
  const nh_step_status status = init ? nh_method_init(m, sys, x, h, &unused) : NH_STEP_OK;
  return status == NH_STEP_OK ? nh_method_step(m, sys, x, y, h, &unused) : status;
}

/* z = adj_{−h}(y), y as m's step left it (an adjoint of another type sets it up its own way): 0, or -1
 * when there is no such step (no adjoint, a two-step method, a failed step). */
static int adjoint_round_trip(const nh_method *m, const nh_method *adj, const nh_system *sys, const nh_state *y,
                              double h, nh_state *z) {
  if (!adj || nh_method_has_history(m) || nh_method_has_history(adj)) return -1;
  nh_state start = *y;
  return step_from(adj, sys, &start, z, -h, !nh_method_same_family(adj, m)) == NH_STEP_OK ? 0 : -1;
}

double nh_onestep_adjoint_defect_lambda(const nh_method *m, const nh_method *adj, const nh_system *sys,
                                        const nh_state *x, const nh_state *y, double h) {
  nh_state z;
  if (!nh_method_reads_previous_step(m, sys) || adjoint_round_trip(m, adj, sys, y, h, &z) != 0) return NAN;
  double d[NH_MAX_K];
  for (int a = 0; a < sys->k; a++) d[a] = z.lambda[a] - x->lambda[a];
  return norm_nan(NH_NORM_MAX, sys->k, d);
}

double nh_onestep_adjoint_defect(const nh_method *m, const nh_method *adj, const nh_system *sys, const nh_state *x,
                                 const nh_state *y, double h, nh_norm norm) {
  nh_state z;
  if (adjoint_round_trip(m, adj, sys, y, h, &z) != 0) return NAN;
  double d[2 * NH_MAX_N];
  state_diff(sys->n, &z, x, d);
  return norm_nan(norm, 2 * sys->n, d);
}

/* The largest column sum of |A| (m×m, row-major, its entries finite). */
static double norm1(int m, const double *A) {
  double best = 0;
  for (int j = 0; j < m; j++) {
    double s = 0;
    for (int i = 0; i < m; i++) s += fabs(A[i * m + j]);
    best = fmax(best, s);
  }
  return best;
}

/* ‖J‖₁‖J⁻¹‖₁ by LU (J overwritten): +Inf at an exactly zero pivot, NaN if GSL fails. */
static double cond1(int dim, double *J) {
  double inv[NH_MAX_NEWTON * NH_MAX_NEWTON];
  const double nJ = norm1(dim, J);
  size_t perm_data[NH_MAX_NEWTON];
  gsl_permutation perm = {(size_t)dim, perm_data};
  gsl_matrix_view Jv = gsl_matrix_view_array(J, (size_t)dim, (size_t)dim);
  gsl_matrix_view Iv = gsl_matrix_view_array(inv, (size_t)dim, (size_t)dim);
  int signum;
  if (gsl_linalg_LU_decomp(&Jv.matrix, &perm, &signum)) return NAN;
  for (int i = 0; i < dim; i++)
    if (J[i * dim + i] == 0) return INFINITY;
  if (gsl_linalg_LU_invert(&Jv.matrix, &perm, &Iv.matrix)) return NAN;
  return nJ * norm1(dim, inv);
}

static double newton_cond(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y, double h,
                          int unscaled) {
  double J[NH_MAX_NEWTON * NH_MAX_NEWTON];
  const int dim = nh_method_newton_jacobian(m, sys, x, y, h, unscaled, J);
  return dim ? cond1(dim, J) : NAN;
}

double nh_onestep_newton_cond(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                              double h) {
  return newton_cond(m, sys, x, y, h, 0);
}

double nh_onestep_newton_cond_unscaled(const nh_method *m, const nh_system *sys, const nh_state *x,
                                       const nh_state *y, double h) {
  return newton_cond(m, sys, x, y, h, 1);
}

/* ---- the embedding residual (spec/discretization.md §6.4, R19) -------------------------------- */

/* The smooth step χ(τ) = e^{−1/τ}/(e^{−1/τ} + e^{−1/(1−τ)}) of §6.2 on 0 < τ < 1, written
 * 1/(1 + e^s) with s = 1/τ − 1/(1−τ) (no 0/0 where both exponentials underflow), and its
 * derivative χ' = −χ(1 − χ) ds/dτ = χ(1 − χ)(1/τ² + 1/(1−τ)²). */
static double smooth_step(double tau, double *dchi) {
  const double chi = 1 / (1 + exp(1 / tau - 1 / (1 - tau)));
  *dchi = chi * (1 - chi) * (1 / (tau * tau) + 1 / ((1 - tau) * (1 - tau)));
  return chi;
}

/* X(q, v) = (v, a(t, q, v)) of the index-reduced ODE (systems/system.h nh_acceleration) at the
 * state s = (q, v) (2n entries) into f: 0, or -1 where a is undefined. */
static int vector_field(const nh_system *sys, double t, const double *s, double *f) {
  const int n = sys->n;
  memcpy(f, s + n, sizeof(double) * (size_t)n);
  return nh_acceleration(sys, t, s, s + n, f + n);
}

int nh_embedding_rho(const nh_system *sys, double t_abs, double tau, double h, const double *a, const double *b,
                     double *rho) {
  const int n2 = 2 * sys->n;
  double dchi, G[2 * NH_MAX_N], Xa[2 * NH_MAX_N], Xb[2 * NH_MAX_N], XG[2 * NH_MAX_N];
  const double chi = smooth_step(tau, &dchi);
  for (int i = 0; i < n2; i++) G[i] = (1 - chi) * a[i] + chi * b[i];
  if (vector_field(sys, t_abs, a, Xa) || vector_field(sys, t_abs, b, Xb) || vector_field(sys, t_abs, G, XG))
    return -1;
  /* ∂_tG = (1−χ) X(φ_t x) + χ X(φ_{t−h} y) + (χ'(t/h)/h)(φ_{t−h} y − φ_t x) (§6.4, the spec's Ψ
   * being the flow φ): the flows' derivatives are X along them, and d/dt χ(t/h) = χ'/h. */
  for (int i = 0; i < n2; i++) rho[i] = (1 - chi) * Xa[i] + chi * Xb[i] + dchi / h * (b[i] - a[i]) - XG[i];
  return 0;
}

/* t_i = i·h/(NH_EMBEDDING_GRID + 1), i = 1 … NH_EMBEDDING_GRID (study.h), after the start. */
static double grid_time(double h, int i) { return i * h / (NH_EMBEDDING_GRID + 1); }

/* (q, v) of x into s (2n). */
static void state_vector(int n, const nh_state *x, double *s) {
  memcpy(s, x->q, sizeof(double) * (size_t)n);
  memcpy(s + n, x->v, sizeof(double) * (size_t)n);
}

/* ---------------------------------------------------------------------------------------------- */

/* The truth for one (h, point). */
typedef struct {
  nh_state end;               /* φ_h(x) */
  double lambda[3][NH_MAX_K]; /* λ at t, t + h/2, t + h (NaN if nh_multiplier failed) */
  double action;              /* ∫_t^{t+h} (T − V) dt; NaN without a Lagrangian */
  double *grid;               /* [NH_EMBEDDING_GRID][2n]: (q, v) of φ_{t_i}(x) (NaN if not computed) */
  int exact;                  /* every state from the exact solution */
} truth;

typedef struct {
  int lambda, action; /* whether any method needs them */
} needs;

/* The true states at the times t[0 … count−1] from `from` (monotone away from from->t): 0, or
 * nh_true_solution_times's failure (-1, NH_REFERENCE_NO_MEMORY). *exact = 0 unless exact. */
static int true_states(const nh_study *st, const nh_state *from, int count, const double *t, nh_state *x,
                       int *exact) {
  const char *kind = NULL;
  const int rc = nh_true_solution_times(&st->sys, from, count, t, st->reference_tol, x, &kind);
  if (rc < 0) return rc;
  if (strcmp(kind, "exact") != 0) *exact = 0;
  return 0;
}

/* The true state at t from `from`: nh_true_solution, as true_states with one time. */
static int true_state(const nh_study *st, const nh_state *from, double t, nh_state *x, int *exact) {
  return true_states(st, from, 1, &t, x, exact);
}

/* The true states from `from` at t0 + t_i, i = 1 … NH_EMBEDDING_GRID, into s ([NH_EMBEDDING_GRID][2n],
 * i = 1 first), in one sweep: ascending from a state at t0, descending (`descending`) from one at
 * t0 + h, so that the times lead away from it. 0, with NaN in s when the reference solver failed;
 * or NH_REFERENCE_NO_MEMORY. */
static int grid_states(const nh_study *st, const nh_state *from, double t0, double h, int descending, double *s,
                       int *exact) {
  const int n = st->sys.n, ng = NH_EMBEDDING_GRID;
  double t[NH_EMBEDDING_GRID];
  nh_state x[NH_EMBEDDING_GRID];
  for (int j = 0; j < ng; j++) t[j] = t0 + grid_time(h, descending ? ng - j : j + 1);
  const int rc = true_states(st, from, ng, t, x, exact);
  if (rc == NH_REFERENCE_NO_MEMORY) return rc;
  for (int j = 0; j < ng; j++) {
    const int i = descending ? ng - 1 - j : j; /* the grid index i − 1 of time t[j] */
    if (rc < 0) fill_nan(s + (size_t)i * 2 * n, 2 * (size_t)n);
    else state_vector(n, &x[j], s + (size_t)i * 2 * n);
  }
  return 0;
}


static void multiplier_at(const nh_system *sys, const nh_state *x, double *lambda) {
  if (nh_multiplier(sys, x->t, x->q, x->v, lambda) != 0) fill_nan(lambda, (size_t)sys->k);
}

static int make_truth(const nh_study *st, const nh_state *p, double h, needs nd,
                      const gsl_integration_glfixed_table *gl, truth *tr) {
  const nh_system *sys = &st->sys;
  tr->exact = 1;
  tr->action = NAN;
  fill_nan(&tr->lambda[0][0], 3 * NH_MAX_K);
  int rc;
  if ((rc = true_state(st, p, p->t + h, &tr->end, &tr->exact)) < 0) return rc;
  if ((rc = grid_states(st, p, p->t, h, 0, tr->grid, &tr->exact)) < 0) return rc;
  if (nd.lambda && sys->k) {
    nh_state mid;
    if ((rc = true_state(st, p, p->t + 0.5 * h, &mid, &tr->exact)) < 0) return rc;
    multiplier_at(sys, p, tr->lambda[0]);
    multiplier_at(sys, &mid, tr->lambda[1]);
    multiplier_at(sys, &tr->end, tr->lambda[2]);
  }
  if (nd.action && !(nh_system_features(sys) & (NH_SYS_DAMPING | NH_SYS_FORCING))) {
    double sum = 0;
    for (size_t g = 0; g < GL_NODES; g++) {
      double tg, wg;
      nh_state xg;
      gsl_integration_glfixed_point(p->t, p->t + h, g, &tg, &wg, gl);
      if ((rc = true_state(st, p, tg, &xg, &tr->exact)) < 0) return rc;
      sum += wg * (nh_kinetic_energy(sys, xg.q, xg.v) - nh_potential(sys, xg.q));
    }
    tr->action = sum;
  }
  return 0;
}

/* max_i ‖ρ(t_i)‖ of the step from `point` to y of size h (spec/discretization.md §6.4, R19), with
 * grid = φ_{t_i}(point) from the truth and φ_{t_i − h}(y) computed here, from y at point.t + h back to
 * point.t + t_i: 0 with the value in *out (NaN where a true state or the acceleration is undefined),
 * or NH_REFERENCE_NO_MEMORY. The convex combination is taken in (q, v), not in the spec's
 * Ehresmann-adapted u-coordinates, so that it is generic over the systems; the order is the same:
 * ρ = (χ'/h)(b − a) + [(1−χ)X(a) + χX(b) − X((1−χ)a + χb)], b − a = φ_{t−h}(y) − φ_{t−h}(φ_h(x)) =
 * O(|y − φ_h(x)|) = O(h^{p+1}) for an order-p map, so the first term is O(h^p) and the bracket
 * O(|b − a|) (the u-form differs from this one only in the v-components the constraint fixes, by
 * O(|b − a|²)): max ρ = O(h^p). */
static int embedding_residual(const nh_study *st, const nh_state *point, const nh_state *y, double h,
                              const double *grid, double *out) {
  const int n = st->sys.n, ng = NH_EMBEDDING_GRID;
  double back[NH_EMBEDDING_GRID * 2 * NH_MAX_N], rho[2 * NH_MAX_N], worst = 0;
  int exact_unused = 1; /* reference_kind describes the truths shared by all methods (header) */
  const int rc = grid_states(st, y, point->t, h, 1, back, &exact_unused);
  if (rc < 0) return rc;
  for (int i = 1; i <= ng; i++) {
    const double *a = grid + (size_t)(i - 1) * 2 * n, *b = back + (size_t)(i - 1) * 2 * n;
    const double t = grid_time(h, i);
    const double r = nh_embedding_rho(&st->sys, point->t + t, t / h, h, a, b, rho) == 0
                         ? norm_nan(st->norm, 2 * n, rho)
                         : NAN;
    if (isnan(r)) return *out = NAN, 0; /* (fmax would drop it) */
    worst = fmax(worst, r);
  }
  *out = worst;
  return 0;
}

/* ---------------------------------------------------------------------------------------------- */

/* A step that failed has no solution to take its Newton Jacobian at: cond and cond_unscaled are
 * then those at the step's start (the unknowns of y = x, after init), which tell an exactly
 * singular system (+Inf: nh_newmark at (β, β') = (½, 0), spec/newmark.md §2.5, C12) from one
 * where Newton did not converge. Everything else of the task stays NaN. Returns 0. */
static int failed_step_condition(const nh_method *m, const nh_system *sys, const nh_state *point, double h,
                                 nh_onestep_result *r, long task) {
  nh_state x = *point;
  nh_cost unused = {0};
  if (nh_method_init(m, sys, &x, h, &unused) != NH_STEP_OK) return 0;
  r->cond[task] = nh_onestep_newton_cond(m, sys, &x, &x, h);
  r->cond_unscaled[task] = nh_onestep_newton_cond_unscaled(m, sys, &x, &x, h);
  return 0;
}

/* What the successful step x → y (from `point`, after init) shows beyond its local error: 0, or
 * NH_REFERENCE_NO_MEMORY (embedding_residual). */
static int step_structure(const nh_study *st, nh_onestep_result *r, const truth *tr, const nh_method *m,
                          const nh_method *adj, const nh_state *point, const nh_state *x, const nh_state *y, double h,
                          long task) {
  const nh_system *sys = &st->sys;
  r->adjoint_defect[task] = nh_onestep_adjoint_defect(m, adj, sys, x, y, h, st->norm);
  r->adjoint_defect_lambda[task] = nh_onestep_adjoint_defect_lambda(m, adj, sys, x, y, h);
  /* F* = F whatever F is (C8's contrast): for a symmetric F the same computation as adjoint_defect */
  r->reversal_defect[task] = nh_onestep_adjoint_defect(m, m, sys, x, y, h, st->norm);
  r->cond[task] = nh_onestep_newton_cond(m, sys, x, y, h);
  r->cond_unscaled[task] = nh_onestep_newton_cond_unscaled(m, sys, x, y, h);
  if (nh_method_has_discrete_action(m) && isfinite(tr->action)) {
    double Ld = nh_method_discrete_action(m, sys, point->t, point->q, tr->end.q, h);
    r->action_err[task] = isnan(Ld) ? NAN : fabs(Ld - tr->action);
  }
  return embedding_residual(st, point, y, h, tr->grid, &r->embedding_residual[task]);
}

/* Task (method, h, point): 0, or NH_REFERENCE_NO_MEMORY. */
static int onestep_task(const nh_study *st, nh_onestep_result *r, const truth *truths, nh_method *const *adjoints,
                        long task) {
  const nh_system *sys = &st->sys;
  const int n = sys->n, k = sys->k, nh = st->nh, np = r->npoints;
  const int mi = (int)(task / ((long)nh * np)), hi = (int)(task / np % nh), pi = (int)(task % np);
  const nh_method *m = st->methods[mi];
  const double h = st->h[hi];
  const truth *tr = &truths[(size_t)hi * np + pi];
  const size_t s2 = (size_t)task * 2 * n, sk = (size_t)task * (size_t)k;
  nh_state point = {0}, x, y;
  double d[2 * NH_MAX_N];

  point.t = r->point_t[pi];
  point.z = st->ics[pi / st->npoints].z;
  memcpy(point.q, r->points + (size_t)pi * 2 * n, sizeof(double) * (size_t)n);
  memcpy(point.v, r->points + (size_t)pi * 2 * n + n, sizeof(double) * (size_t)n);

  /* Everything NaN until computed. */
  r->local_err[task] = r->local_err_q[task] = r->local_err_v[task] = NAN;
  r->lambda_err[task] = r->adjoint_defect[task] = r->cond[task] = r->action_err[task] = NAN;
  r->reversal_defect[task] = r->cond_unscaled[task] = r->embedding_residual[task] = NAN;
  r->adjoint_defect_lambda[task] = NAN;
  fill_nan(r->stepped + s2, 2 * (size_t)n);
  fill_nan(r->backward + s2, 2 * (size_t)n);
  fill_nan(r->lambda + sk, (size_t)k);
  fill_nan(r->backward_lambda + sk, (size_t)k);
  fill_nan(r->lambda_start + sk, (size_t)k);
  const int has_lambda = nh_method_lambda_time(m) != NH_LAMBDA_NONE;

  /* Backward step F_{−h}(x), its own init. */
  nh_state xb = point, yb;
  if (step_from(m, sys, &xb, &yb, -h, 1) == NH_STEP_OK) {
    for (int i = 0; i < n; i++) r->backward[s2 + i] = yb.q[i], r->backward[s2 + n + i] = yb.v[i];
    for (int a = 0; has_lambda && a < k; a++) r->backward_lambda[sk + a] = yb.lambda[a];
  }

  x = point;
  const nh_step_status status = step_from(m, sys, &x, &y, h, 1);
  r->status[task] = status;
  if (status != NH_STEP_OK) return failed_step_condition(m, sys, &point, h, r, task);

  for (int i = 0; i < n; i++) r->stepped[s2 + i] = y.q[i], r->stepped[s2 + n + i] = y.v[i];
  state_diff(n, &y, &tr->end, d);
  r->local_err[task] = norm_nan(st->norm, 2 * n, d);
  r->local_err_q[task] = norm_nan(st->norm, n, d);
  r->local_err_v[task] = norm_nan(st->norm, n, d + n);

  nh_lambda_time when = nh_method_lambda_time(m);
  if (when != NH_LAMBDA_NONE && k > 0) {
    const double *ref = tr->lambda[when == NH_LAMBDA_START ? 0 : when == NH_LAMBDA_MIDPOINT ? 1 : 2];
    double dl[NH_MAX_K];
    for (int a = 0; a < k; a++) r->lambda[sk + a] = y.lambda[a], dl[a] = y.lambda[a] - ref[a];
    r->lambda_err[task] = norm_nan(NH_NORM_MAX, k, dl);
  }
  if (k > 0) nh_method_start_multiplier(m, sys, &y, r->lambda_start + sk);
  return step_structure(st, r, tr, m, adjoints[mi], &point, &x, &y, h, task);
}

typedef struct {
  const nh_study *st;
  nh_onestep_result *r;
  const truth *truths;
  nh_method *const *adjoints;
  int no_memory; /* a task ran out of memory for a reference solution */
} onestep_tasks;

/* -1 for a task that ran out of memory (nh_journaled_tasks): the embedding residual's true states
 * from the stepped state (each task's own; the other truths are computed before the tasks). */
static int run_onestep_task(void *ctx, long task) {
  onestep_tasks *c = ctx;
  if (onestep_task(c->st, c->r, c->truths, c->adjoints, task) == 0) return 0;
#pragma omp atomic write
  c->no_memory = 1;
  return -1;
}

/* The largest value over the points of (method, h); NaN if any point is NaN. */
static double max_over_points(const double *v, int np) {
  double best = 0;
  for (int p = 0; p < np; p++) {
    if (isnan(v[p])) return NAN;
    best = fmax(best, v[p]);
  }
  return best;
}

#define CELL(field) offsetof(nh_onestep_result, field)
#define TASK NH_COLUMN_JOURNALED
/* A real per step [method][h][point], and TAIL's dimension (",state", ",multiplier") if not "". */
#define PER_STEP(NAME, TAIL, UNITS, DOC)                                                                               \
  { #NAME, "method,h,point" TAIL, NH_COLUMN_F64, CELL(NAME), TASK, NULL, UNITS, DOC }
/* The result's columns (studies/columns.h): steps [method][h][point]. */
const nh_result_column nh_onestep_columns[] = {
    {"point_t", "point", NH_COLUMN_F64, CELL(point_t), NH_COLUMN_SCALE, NULL, "time",
     "time of each start point along its solution"},
    {"points", "point,state", NH_COLUMN_F64, CELL(points), 0, NULL, "as q, v", "the start states (q, v)"},
    PER_STEP(local_err, "", "as q, v", "|F_h(x) - phi_h(x)| over (q, v) in the study norm"),
    PER_STEP(local_err_q, "", "as q", "the same over q"),
    PER_STEP(local_err_v, "", "as v", "the same over v"),
    PER_STEP(lambda_err, "", "as lambda", "max_a |lambda - lambda(t*)| (NaN: none)"),
    PER_STEP(adjoint_defect, "", "as q, v", "|F*_{-h}(F_h(x)) - x|, F* the declared adjoint (NaN: none declared)"),
    PER_STEP(reversal_defect, "", "as q, v",
             "|F_{-h}(F_h(x)) - x| with F itself, adjoint or not (NaN: two-step method)"),
    PER_STEP(cond, "", "1", "1-norm condition number of the Newton Jacobian at the solution (NaN: explicit method)"),
    PER_STEP(cond_unscaled, "", "1",
             "cond with the method's scaling undone: the source's unknowns and equations (NaN: no declared scaling)"),
    PER_STEP(action_err, "", "action", "|L_d(q(0), q(h)) - int_0^h L dt| (NaN: not variational)"),
    PER_STEP(embedding_residual, "", "as q, v/time",
             "max over t_i = i h/(N + 1), i = 1..N (N: attribute embedding_grid), of |dG/dt - X(G)| in the study norm, "
             "G = (1 - chi) phi_t(x) + chi phi_{t-h}(F_h(x)) (spec/discretization.md 6.4, R19; NaN: failed step)"),
    PER_STEP(stepped, ",state", "as q, v", "F_h(x)"),
    PER_STEP(backward, ",state", "as q, v", "F_{-h}(x)"),
    PER_STEP(lambda, ",multiplier", "as lambda", "the step's multipliers (NaN: the method defines none)"),
    PER_STEP(backward_lambda, ",multiplier", "as lambda",
             "the multipliers F_{-h}(x) leaves (NaN: the method defines none)"),
    PER_STEP(lambda_start, ",multiplier", "as lambda",
             "the multiplier the step computes at its start node, where the method has one (nh_newmark: lambda_k of "
             "(N1)); NaN: none"),
    PER_STEP(adjoint_defect_lambda, "", "as lambda",
             "max_a |lambda_a of F*_{-h}(F_h(x)) - lambda_a of x| for a method whose state carries lambda "
             "(nh_rattle: spec/rattle.md 3.3); NaN for every other method"),
    {"status", "method,h,point", NH_COLUMN_I32, CELL(status), TASK, NULL, "1", "status code of the step"},
    {"max_local_err", "method,h", NH_COLUMN_F64, CELL(max_local_err), 0, NULL, "as q, v",
     "max over the points of local_err (NaN if any point has none): what slope is fitted to"},
    {"max_action_err", "method,h", NH_COLUMN_F64, CELL(max_action_err), 0, NULL, "action",
     "max over the points of action_err (NaN if any is NaN)"},
    {"slope", "method", NH_COLUMN_F64, CELL(slope), 0, NULL, "1",
     "least-squares slope of log max_local_err against log h (expected: slope_expected)"},
    {"slope_stderr", "method", NH_COLUMN_F64, CELL(slope_stderr), 0, NULL, "1",
     "its standard error; NaN with 2 points"},
    {"fit_floor", "h", NH_COLUMN_F64, CELL(fit_floor), 0, NULL, "as q, v", NH_FIT_FLOOR_DOC},
    {"fit_first", "method", NH_COLUMN_I32, CELL(fit_first), 0, NULL, "1",
     "index into h of the finest step size of the fit"},
    {"fit_count", "method", NH_COLUMN_I32, CELL(fit_count), 0, NULL, "1", "number of step sizes of the fit"},
    {"action_slope", "method", NH_COLUMN_F64, CELL(action_slope), 0, NULL, "1",
     "slope of log max_action_err against log h (3 for a second-order L_d, 2 otherwise); NaN: not variational"},
    {NULL}};
#undef PER_STEP
#undef CELL
#undef TASK

/* The kind's own dimension: point, every start point of every initial condition. */
static void own_dims(const nh_study *st, const void *r, nh_column_dims *d) {
  (void)st;
  nh_column_dims_set(d, "point", ((const nh_onestep_result *)r)->npoints);
}

int nh_run_onestep(const nh_study *st, nh_onestep_result *r, char *err, size_t errlen) {
  const nh_system *sys = &st->sys;
  const int n = sys->n, nm = st->nmethods, nh = st->nh;
  memset(r, 0, sizeof *r);
  if (st->nic < 1 || st->npoints < 1 || nh < 1 || nm < 1) {
    snprintf(err, errlen, "%s: a one-step study needs initial conditions, points >= 1, step sizes and methods",
             st->spec_file);
    return -1;
  }
  r->npoints = st->nic * st->npoints;
  const int np = r->npoints;
  const size_t cells = (size_t)nm * nh * np;
  nh_column_dims dims;
  nh_kind_dims(&nh_onestep_kind, st, r, &dims);
  if (nh_result_columns_alloc(nh_onestep_columns, st, &dims, r) < 0) {
    snprintf(err, errlen, "%s: out of memory for %zu one-step tasks", st->spec_file, cells);
    return -1;
  }

  needs nd = {0, 0};
  nh_method **adjoints = calloc((size_t)nm, sizeof *adjoints);
  truth *truths = calloc((size_t)nh * np, sizeof *truths);
  const size_t per_truth = (size_t)NH_EMBEDDING_GRID * 2 * (size_t)n; /* a truth's grid */
  double *grids = calloc((size_t)nh * np * per_truth, sizeof *grids);
  gsl_integration_glfixed_table *gl = gsl_integration_glfixed_table_alloc(GL_NODES);
  if (!adjoints || !truths || !grids || !gl) {
    snprintf(err, errlen, "%s: out of memory for %zu one-step tasks", st->spec_file, cells);
    free(adjoints), free(truths), free(grids);
    if (gl) gsl_integration_glfixed_table_free(gl);
    return -1;
  }
  for (size_t c = 0; c < (size_t)nh * np; c++) truths[c].grid = grids + c * per_truth;
  for (int mi = 0; mi < nm; mi++) {
    if (!(adjoints[mi] = nh_method_adjoint(st->methods[mi])) && nh_method_has_adjoint(st->methods[mi])) {
      snprintf(err, errlen, "%s: out of memory for the adjoint of method %s", st->spec_file, st->method_names[mi]);
      goto fail;
    }
    nd.lambda |= nh_method_lambda_time(st->methods[mi]) != NH_LAMBDA_NONE;
    nd.action |= nh_method_has_discrete_action(st->methods[mi]);
  }

  /* Points along the true solution from each initial condition. */
  int failed = 0, exact = 1;
  /* failed: the least of the failure codes (-1, NH_REFERENCE_NO_MEMORY), so out of memory wins. */
#pragma omp parallel for schedule(dynamic) reduction(min : failed) reduction(& : exact)
  for (int p = 0; p < np; p++) {
    const nh_state *ic = &st->ics[p / st->npoints];
    const int j = p % st->npoints;
    nh_state x = *ic;
    double t = ic->t + (double)j * st->T / st->npoints;
    const int rc = j > 0 ? true_state(st, ic, t, &x, &exact) : 0;
    if (rc < failed) failed = rc;
    /* A state of the rk8pd reference is on D only to the reference's round-off (|A v + b| up to
     * ~5e-15 on the chaotic particle), and a method's step maps D to D: off D, an identity of the
     * map such as F*_{-h} o F_h = id (spec/newmark.md C8, <= 1e-15) would measure the distance to D,
     * not the method. The velocity is projected onto D (M-orthogonally, nh_project_velocity_multiplier:
     * a change at the reference's round-off); where the Gram matrix is singular the point stays as
     * the reference gave it (no multiplier there: the methods' steps fail on their own). The initial
     * condition itself (j = 0) is the spec's, as given. */
    double unused[NH_MAX_K];
    if (j > 0 && rc == 0) (void)nh_project_velocity_multiplier(&st->sys, x.q, x.v, unused);
    r->point_t[p] = t;
    for (int i = 0; i < n; i++)
      r->points[(size_t)p * 2 * n + i] = x.q[i], r->points[(size_t)p * 2 * n + n + i] = x.v[i];
  }
  if (failed) {
    snprintf(err, errlen, "%s: %s on the way to a point", st->spec_file, nh_truth_failure(failed));
    goto fail;
  }

  /* The truth per (h, point), shared by every method. */
#pragma omp parallel for schedule(dynamic) reduction(min : failed) reduction(& : exact)
  for (long c = 0; c < (long)nh * np; c++) {
    const int hi = (int)(c / np), p = (int)(c % np);
    nh_state x = {0};
    x.t = r->point_t[p];
    x.z = st->ics[p / st->npoints].z;
    memcpy(x.q, r->points + (size_t)p * 2 * n, sizeof(double) * (size_t)n);
    memcpy(x.v, r->points + (size_t)p * 2 * n + n, sizeof(double) * (size_t)n);
    const int rc = make_truth(st, &x, st->h[hi], nd, gl, &truths[c]);
    if (rc < failed) failed = rc;
    exact &= truths[c].exact;
  }
  if (failed) {
    snprintf(err, errlen, "%s: %s over one step from a point", st->spec_file, nh_truth_failure(failed));
    goto fail;
  }
  r->reference_kind = exact ? "exact" : "rk8pd";

  onestep_tasks ctx = {st, r, truths, adjoints, 0};
  nh_task_slot slots[NH_COLUMN_MAX_SLOTS];
  const int nslots = nh_result_columns_slots(nh_onestep_columns, st, &dims, 3, r, slots, NH_COLUMN_MAX_SLOTS);
  if (nh_journaled_tasks(st, "onestep", (long)cells, run_onestep_task, &ctx, slots, nslots, err, errlen) < 0) {
    if (ctx.no_memory) /* say what ran out, as the truths before the tasks do */
      snprintf(err, errlen, "%s: %s back from a stepped state", st->spec_file,
               nh_truth_failure(NH_REFERENCE_NO_MEMORY));
    goto fail;
  }

  /* The fits' floor: one step's round-off at the largest point, and for an rk8pd truth its error
   * over one step, at most its tolerance relative to the state plus absolute (GSL's control). */
  double size = 0;
  for (int p = 0; p < np; p++) {
    nh_state x = {0};
    memcpy(x.q, r->points + (size_t)p * 2 * n, sizeof(double) * (size_t)n);
    memcpy(x.v, r->points + (size_t)p * 2 * n + n, sizeof(double) * (size_t)n);
    size = fmax(size, nh_study_reference_norm(st, &x));
  }
  for (int hi = 0; hi < nh; hi++)
    r->fit_floor[hi] = nh_error_floor(st, exact ? 0 : st->reference_tol * (1 + size), size, 1);

  /* The maxima over the points, and the slopes over h, in a fixed order. */
  for (int mi = 0; mi < nm; mi++) {
    double *emax = r->max_local_err + (size_t)mi * nh, *amax = r->max_action_err + (size_t)mi * nh;
    for (int hi = 0; hi < nh; hi++) {
      const size_t at = ((size_t)mi * nh + hi) * np;
      emax[hi] = max_over_points(r->local_err + at, np);
      amax[hi] = max_over_points(r->action_err + at, np);
    }
    double se;
    int first, count;
    if (nh_fit_order_floors(nh, st->h, emax, st->fit_points, r->fit_floor, &r->slope[mi], &r->slope_stderr[mi],
                            &r->fit_first[mi], &r->fit_count[mi]) == -2 ||
        nh_fit_order_floors(nh, st->h, amax, st->fit_points, r->fit_floor, &r->action_slope[mi], &se, &first,
                            &count) == -2) {
      snprintf(err, errlen, "%s: out of memory for the slope fit", st->spec_file);
      goto fail;
    }
  }
  for (int mi = 0; mi < nm; mi++) nh_method_free(adjoints[mi]);
  free(adjoints), free(truths), free(grids);
  gsl_integration_glfixed_table_free(gl);
  return 0;

fail:
  for (int mi = 0; mi < nm; mi++) nh_method_free(adjoints[mi]);
  free(adjoints), free(truths), free(grids);
  gsl_integration_glfixed_table_free(gl);
  return -1; /* r: the caller frees it, whatever the outcome (study.h) */
}

void nh_onestep_result_free(nh_onestep_result *r) {
  nh_result_columns_free(nh_onestep_columns, r);
  memset(r, 0, sizeof *r);
}

/* ---- its spec: the settings it takes (studies/settings.c) -------------------------------------- */

/* One-step: points along the true solution from each initial condition. */
static int load_onestep(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  const config_setting_t *ens = config_setting_get_member(root, "ensemble");
  if (ens && config_setting_get_member(root, "initial"))
    return nh_spec_fail(c, ens, "one-step points start from either 'initial' or 'ensemble' (random states), not both");
  if (ens ? nh_spec_random_initials(c, ens, st) < 0 : nh_spec_initial(c, root, st) < 0) return -1;
  if (nh_spec_steps(c, root, st, 2) < 0 || nh_spec_count(c, root, "points", &st->npoints) < 0) return -1;
  if (nh_spec_fit(c, root, st) < 0 || nh_spec_reference_tol(c, root, st) < 0) return -1;
  return nh_spec_norm(c, root, st);
}

/* The kind's table (studies/kinds.h). */
NH_STUDY_KIND_ENTRIES(onestep)
const nh_study_kind_type nh_onestep_kind = {
    .kind = NH_STUDY_ONESTEP,
    .name = "onestep",
    .doc = "one step from exact points: local error, adjoint and reversal defects, cond(J), action error",
    .settings = "h0 halvings fit_points error_floor norm ensemble points",
    .stores = "reference_tol norm npoints random_ics energy seed", /* the last three: where the points come from */
    .result_size = sizeof(nh_onestep_result),
    .columns = nh_onestep_columns,
    .load = load_onestep,
    .run = run_kind,
    .free_result = free_kind,
    .file = {NH_KIND_ICS_GIVEN, NULL, own_dims, NULL, 0},
};
