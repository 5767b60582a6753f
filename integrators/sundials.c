/* SUNDIALS IDA and CVODE as tolerance-driven comparison methods (issue 17), built only with
 * -DNHBENCH_SUNDIALS=ON (README.md, "SUNDIALS build"). The herglotz paper's reference is MATLAB's
 * ode15i, a variable-order BDF solver for implicit DAEs (spec/herglotz.md §2.10, §5 item 15);
 * IDA is its open counterpart, CVODE (BDF on the index-reduced ODE) the ode15s-like one beside it.
 *
 * How nhbench drives them. A nhbench step of size h advances the solver from x->t to t + h with
 * the stop time there (so no internal step crosses an output point, and h acts as the largest
 * internal step, ode15i's "step 10x smaller" read as max/output step 0.01, spec §6 table); the
 * error is set by rtol and atol, not by h. The solver memory lives in a per-thread workspace (one
 * per family) that nh_method_init creates (all allocation happens there: the step routines only
 * call IDASolve/CVode, which then allocate nothing; tests/contracts/test_no_alloc.c checks it with SUNDIALS
 * linked statically, so that its mallocs are counted too). A step continues the
 * solver's own history when the incoming state is the one the previous step returned (q, v bit
 * for bit, t within round-off: the runner recomputes t = t0 + s h) for the same method, system and
 * direction; any other incoming state (a study restarting a run, a test resetting the state)
 * re-initialises the memory there (IDAReInit/CVodeReInit, no allocation).
 *
 * IDA's DAE (the Lagrange–d'Alembert equations, spec/herglotz.md §2.1 with the system.h force),
 * unknowns y = (q, v, λ), 2n + k of them, residual F(t, y, y') = 0:
 *   F_q = q' − v                                     (n, differential)
 *   F_v = M(q) v' − f(t, q, v) − A(q)ᵀ λ             (n, differential)
 *   F_λ = A(q) v + b(q)                              (k, algebraic)
 * with f = nh_free_force. This is the index-2 (Hessenberg) form: λ appears in no derivative and is
 * fixed only through the velocity constraint, as the paper's multiplier formulation for ode15i
 * presumably was (its DAE form is not stated). IDASetId marks q, v differential (1) and λ
 * algebraic (0); IDASetSuppressAlg(TRUE) leaves λ out of the local error test, the standard
 * treatment of index-2 variables in a BDF code (the local error estimate of an index-2 variable
 * does not shrink with the step as the differential ones' do). `lambda_error_test=1` keeps λ in
 * the test, as ode15i, which has no such switch, must: on the rolling disk and the knife edge IDA
 * then aborts with IDA_ERR_FAIL within the first seconds (studies/paper/sundials/). Consistent initial
 * values: λ0 = nh_multiplier(t0, q0, v0) and v'0 = nh_acceleration (the index-reduced ODE at t0),
 * q'0 = v0; λ'0 = 0 is not used by F.
 *
 * CVODE integrates the index-reduced ODE q' = v, v' = nh_acceleration(t, q, v) (the plain ODE
 * M v' = f for k = 0) with BDF and Newton, as rk4 does with a fixed step.
 *
 * Jacobians: forward difference quotients, column by column (dq_jacobian). An analytic one needs
 * ∂f/∂q, which for a variable mass matrix contains second derivatives of M (the terms
 * −Ṁv + ½∂_q(vᵀMv)), and for CVODE ∂λ(q, v)/∂(q, v); the system interface supplies neither.
 * SUNDIALS' own dense difference-quotient Jacobians would do the same but clone an N_Vector (three
 * mallocs) on every call, inside the step; ours allocate nothing. They cost one residual
 * evaluation per unknown, counted in rhs_evals like every other evaluation.
 *
 * Work in nh_cost, per nhbench step, from the solver's own counters:
 *   steps             internal solver steps (IDAGetNumSteps, CVodeGetNumSteps)
 *   rhs_evals         residual/right-hand side evaluations, those of the difference-quotient
 *                     Jacobians included (GetNumResEvals/GetNumRhsEvals + dq_jacobian's count)
 *   constraint_evals  the same count when k > 0: each evaluation assembles A(q) once
 *   jacobian_evals    Jacobian assemblies (GetNumJacEvals)
 *   newton_iterations nonlinear iterations (GetNumNonlinSolvIters)
 *   linear_solves     one dense LU solve per nonlinear iteration, plus the factorisations
 *                     (GetNumLinSolvSetups)
 * A failure (IDA_CONV_FAIL, IDA_ERR_FAIL, ...) ends the run with NH_STEP_SOLVER_FAILED and one line
 * on stderr naming the flag and the time, as ode15i's "Failure at t = ..." does; the same text is
 * kept for nh_sundials_last_failure. */
#ifdef NHBENCH_SUNDIALS
#include <cvode/cvode.h>
#include <float.h>
#include <ida/ida.h>
#include <math.h>
#include <nvector/nvector_serial.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sunlinsol/sunlinsol_dense.h>
#include <sunmatrix/sunmatrix_dense.h>

#include "integrators/integrator.h"
#include "integrators/sundials.h"

/* Parameter slots, the same for both families. */
enum { P_RTOL, P_ATOL, P_MAX_ORDER, P_MAX_STEP, P_MAX_STEPS, P_LAMBDA_ERROR_TEST, P_COUNT };

static const nh_param_desc params[] = {
    {"rtol", NH_PARAM_REAL, 1e-6, 1e-14, 1, "relative tolerance (ode15i's 1e-6, spec/herglotz.md §6)", 0, NULL},
    {"atol", NH_PARAM_REAL, 1e-6, 1e-16, 1, "absolute tolerance, every component (ode15i's 1e-6)", 0, NULL},
    {"max_order", NH_PARAM_INT, 5, 1, 5, "largest BDF order (5, as ode15i's default MaxOrder)", 1, NULL},
    {"max_step", NH_PARAM_REAL, 0, 0, 1e6,
     "largest internal step; 0: none beyond the nhbench step h, which is the stop time of every call", 1, NULL},
    {"max_steps", NH_PARAM_INT, 100000, 1, 1e9, "internal steps allowed within one nhbench step", 1, NULL},
    /* ida only, the last row (cvode's nparams stops before it: it has no λ unknown). MATLAB's ode15i
     * has no way to leave a variable out of its error test, so lambda_error_test=1 is the closer
     * analogue of the paper's reference. */
    {"lambda_error_test", NH_PARAM_INT, 0, 0, 1,
     "ida: 1 keeps the index-2 multiplier in the local error test (as ode15i does); 0 leaves it out (suppressalg)",
     1, NULL},
};

/* Which solver counters a family reads, in the order of the workspace's counts[]. */
enum { C_STEPS, C_EVALS, C_DQ_EVALS, C_JACS, C_ITERS, C_SETUPS, NCOUNTERS };

typedef struct sun_ws sun_ws;
/* What differs between IDA and CVODE; the driver below is shared. */
typedef struct {
  int slot;                                        /* index of the per-thread workspace */
  const char *name;                                /* "ida" */
  int (*length)(const nh_system *sys);             /* number of unknowns */
  int (*create)(sun_ws *w);                        /* solver memory; reinit sets t0 and tolerances */
  int (*reinit)(sun_ws *w, const nh_method *m, double t0);
  int (*solve)(sun_ws *w, double tout);            /* < 0: failure flag */
  int (*counters)(void *mem, long *c);             /* c[NCOUNTERS] but C_DQ_EVALS */
  int (*current_time)(void *mem, double *t);
  int (*last_step)(void *mem, double *h);
  int (*set_stop_time)(void *mem, double t);
  const char *(*flag_name)(int flag);
  void (*free_mem)(void **mem);
} sun_family;

struct sun_ws {
  const sun_family *fam;
  SUNContext ctx;
  void *mem;
  N_Vector y, yp, id; /* yp, id: IDA only */
  SUNMatrix J;
  SUNLinearSolver LS;
  int len;
  const nh_system *sys; /* the system of the current call, for the residual */
  /* What the memory integrates now; live = 0: nothing (a failure, or just created). */
  int live;
  const nh_integrator_type *type;
  double mp[NH_MAX_PARAMS];
  const nh_system_type *stype;
  double sp[NH_MAX_PARAMS];
  nh_state last;
  double direction;
  long counts[NCOUNTERS]; /* the solver's counters at the end of the last step */
  long dq_evals;          /* evaluations made by dq_jacobian since the last re-initialisation */
  char message[512];      /* SUNDIALS' own text of the last error */
  char failure[768];      /* the last failure, as reported */
  sun_ws *next;           /* every workspace ever made, freed at exit */
};

static _Thread_local sun_ws *slots[2];
static sun_ws *all_workspaces;

static void free_workspace(sun_ws *w) {
  if (w->mem) w->fam->free_mem(&w->mem);
  if (w->LS) SUNLinSolFree(w->LS);
  if (w->J) SUNMatDestroy(w->J);
  if (w->y) N_VDestroy(w->y);
  if (w->yp) N_VDestroy(w->yp);
  if (w->id) N_VDestroy(w->id);
  if (w->ctx) SUNContext_Free(&w->ctx);
  free(w);
}

/* The workspaces outlive their threads (OpenMP keeps its pool); all go at exit. */
static void free_all_workspaces(void) {
  while (all_workspaces) {
    sun_ws *w = all_workspaces;
    all_workspaces = w->next;
    free_workspace(w);
  }
}

/* SUNDIALS' error text goes into the workspace (no output of its own): the failure line quotes it. */
static void keep_message(int code NH_UNUSED, const char *module, const char *function, char *msg, void *data) {
  sun_ws *w = data;
  snprintf(w->message, sizeof w->message, "%s/%s: %s", module, function, msg);
}

/* The iteration matrix by forward differences (header, "Jacobians"), for IDA ∂F/∂y + cj ∂F/∂y'
 * (y_j and y'_j moved together by δ and cj δ, as IDA's own difference quotient does) and for CVODE
 * ∂f/∂y (yd NULL): column j = (G(y + δ_j e_j) − G(y)) / δ_j with δ_j = √ε max(|y_j|, |h y'_j|, 1)
 * (the states are O(1) in the systems' units; 1 keeps δ away from round-off at y_j = 0). g0 is G(y),
 * gj scratch; G is evaluated len times, counted in dq_evals. Returns G's status (1: recoverable). */
static int dq_jacobian(sun_ws *w, double t, N_Vector yy, N_Vector yd, double cj, double hcur, const double *g0,
                       N_Vector gj, SUNMatrix J, int (*ida_res)(sunrealtype, N_Vector, N_Vector, N_Vector, void *),
                       int (*cv_rhs)(sunrealtype, N_Vector, N_Vector, void *)) {
  double *y = N_VGetArrayPointer(yy), *d = yd ? N_VGetArrayPointer(yd) : NULL;
  const double *g = N_VGetArrayPointer(gj), srur = sqrt(DBL_EPSILON);
  for (int j = 0; j < w->len; j++) {
    const double yj = y[j], dj = d ? d[j] : 0;
    double inc = srur * fmax(fmax(fabs(yj), fabs(hcur * dj)), 1);
    inc = (yj + inc) - yj; /* exactly representable */
    y[j] += inc;
    if (d) d[j] += cj * inc;
    const int ret = d ? ida_res(t, yy, yd, gj, w) : cv_rhs(t, yy, gj, w);
    w->dq_evals++;
    y[j] = yj;
    if (d) d[j] = dj;
    if (ret) return ret;
    double *col = SUNDenseMatrix_Column(J, j);
    for (int i = 0; i < w->len; i++) col[i] = (g[i] - g0[i]) / inc;
  }
  return 0;
}

/* ---------------------------------------------------------------------------------------------- */
/* IDA: the index-2 DAE above.                                                                      */

static int ida_length(const nh_system *sys) { return 2 * sys->n + sys->k; }

/* F(t, y, y') of the header; 1 (recoverable: IDA retries with a smaller step) where M or f is not finite. */
static int ida_residual(sunrealtype t, N_Vector yy, N_Vector yd, N_Vector rr, void *data) {
  const sun_ws *w = data;
  const nh_system *sys = w->sys;
  const int n = sys->n, k = sys->k;
  const double *y = N_VGetArrayPointer(yy), *yp = N_VGetArrayPointer(yd);
  const double *q = y, *v = y + n, *lambda = y + 2 * n, *qd = yp, *vd = yp + n;
  double *r = N_VGetArrayPointer(rr);
  double space[NH_MAX_N * NH_MAX_N], f[NH_MAX_N], A[NH_MAX_K * NH_MAX_N], b[NH_MAX_K] = {0};
  const double *M = nh_mass_at(sys, q, space);
  nh_free_force(sys, t, q, v, f);
  if (k) sys->type->constraints(sys->p, q, A);
  if (k && sys->type->affine) sys->type->affine->values(sys->p, q, b);
  for (int i = 0; i < n; i++) {
    double s = -f[i];
    for (int j = 0; j < n; j++) s += M[i * n + j] * vd[j];
    for (int a = 0; a < k; a++) s -= A[a * n + i] * lambda[a];
    r[i] = qd[i] - v[i];
    r[n + i] = s;
  }
  for (int a = 0; a < k; a++) {
    double s = b[a];
    for (int i = 0; i < n; i++) s += A[a * n + i] * v[i];
    r[2 * n + a] = s;
  }
  for (int i = 0; i < 2 * n + k; i++)
    if (!isfinite(r[i])) return 1;
  return 0;
}

static int ida_jacobian(sunrealtype t, sunrealtype cj, N_Vector yy, N_Vector yd, N_Vector rr, SUNMatrix J, void *data,
                        N_Vector t1, N_Vector t2 NH_UNUSED, N_Vector t3 NH_UNUSED) {
  sun_ws *w = data;
  double hcur = 0;
  IDAGetCurrentStep(w->mem, &hcur);
  return dq_jacobian(w, t, yy, yd, cj, hcur, N_VGetArrayPointer(rr), t1, J, ida_residual, NULL);
}

static int ida_create(sun_ws *w) {
  /* q and v differential, λ algebraic and out of the error test (header). */
  const int n = w->sys->n;
  double *id = N_VGetArrayPointer(w->id);
  for (int i = 0; i < w->len; i++) id[i] = i < 2 * n ? 1.0 : 0.0;
  return !(w->mem = IDACreate(w->ctx)) || IDAInit(w->mem, ida_residual, 0, w->y, w->yp) ||
                 IDASetUserData(w->mem, w) ||
                 IDASetErrHandlerFn(w->mem, keep_message, w) || IDASetLinearSolver(w->mem, w->LS, w->J) ||
                 IDASetJacFn(w->mem, ida_jacobian) || IDASetId(w->mem, w->id)
             ? -1
             : 0;
}

static int ida_reinit(sun_ws *w, const nh_method *m, double t0) {
  return IDAReInit(w->mem, t0, w->y, w->yp) || IDASStolerances(w->mem, m->p[P_RTOL], m->p[P_ATOL]) ||
                 IDASetMaxOrd(w->mem, (int)m->p[P_MAX_ORDER]) || IDASetMaxStep(w->mem, m->p[P_MAX_STEP]) ||
                 IDASetMaxNumSteps(w->mem, (long)m->p[P_MAX_STEPS]) ||
                 IDASetSuppressAlg(w->mem, m->p[P_LAMBDA_ERROR_TEST] ? SUNFALSE : SUNTRUE)
             ? -1
             : 0;
}

static int ida_solve(sun_ws *w, double tout) {
  double tret;
  return IDASolve(w->mem, tout, &tret, w->y, w->yp, IDA_NORMAL);
}

static int ida_counters(void *mem, long *c) {
  return IDAGetNumSteps(mem, &c[C_STEPS]) || IDAGetNumResEvals(mem, &c[C_EVALS]) ||
                 IDAGetNumJacEvals(mem, &c[C_JACS]) || IDAGetNumNonlinSolvIters(mem, &c[C_ITERS]) ||
                 IDAGetNumLinSolvSetups(mem, &c[C_SETUPS])
             ? -1
             : 0;
}

#define FLAG_NAME(f) \
  case f:            \
    return #f;
static const char *ida_flag_name(int flag) {
  switch (flag) {
    FLAG_NAME(IDA_TOO_MUCH_WORK)
    FLAG_NAME(IDA_TOO_MUCH_ACC)
    FLAG_NAME(IDA_ERR_FAIL)
    FLAG_NAME(IDA_CONV_FAIL)
    FLAG_NAME(IDA_LINIT_FAIL)
    FLAG_NAME(IDA_LSETUP_FAIL)
    FLAG_NAME(IDA_LSOLVE_FAIL)
    FLAG_NAME(IDA_RES_FAIL)
    FLAG_NAME(IDA_REP_RES_ERR)
    FLAG_NAME(IDA_CONSTR_FAIL)
    FLAG_NAME(IDA_ILL_INPUT)
    FLAG_NAME(IDA_NLS_FAIL)
  default:
    return "IDA error";
  }
}

static const sun_family ida_family = {
    .slot = 0,
    .name = "ida",
    .length = ida_length,
    .create = ida_create,
    .reinit = ida_reinit,
    .solve = ida_solve,
    .counters = ida_counters,
    .current_time = IDAGetCurrentTime,
    .last_step = IDAGetLastStep,
    .set_stop_time = IDASetStopTime,
    .flag_name = ida_flag_name,
    .free_mem = IDAFree,
};

/* ---------------------------------------------------------------------------------------------- */
/* CVODE: the index-reduced ODE.                                                                   */

static int cvode_length(const nh_system *sys) { return 2 * sys->n; }

/* (q, v)' = (v, nh_acceleration); 1 (recoverable) where the multiplier or M⁻¹ is undefined. */
static int cvode_rhs(sunrealtype t, N_Vector yy, N_Vector yd, void *data) {
  const sun_ws *w = data;
  const int n = w->sys->n;
  const double *y = N_VGetArrayPointer(yy);
  double *yp = N_VGetArrayPointer(yd);
  for (int i = 0; i < n; i++) yp[i] = y[n + i];
  return nh_acceleration(w->sys, t, y, y + n, yp + n) != 0 ? 1 : 0;
}

static int cvode_jacobian(sunrealtype t, N_Vector yy, N_Vector fy, SUNMatrix J, void *data, N_Vector t1,
                          N_Vector t2 NH_UNUSED, N_Vector t3 NH_UNUSED) {
  return dq_jacobian(data, t, yy, NULL, 0, 0, N_VGetArrayPointer(fy), t1, J, NULL, cvode_rhs);
}

static int cvode_create(sun_ws *w) {
  return !(w->mem = CVodeCreate(CV_BDF, w->ctx)) || CVodeInit(w->mem, cvode_rhs, 0, w->y) ||
                 CVodeSetUserData(w->mem, w) ||
                 CVodeSetErrHandlerFn(w->mem, keep_message, w) || CVodeSetLinearSolver(w->mem, w->LS, w->J) ||
                 CVodeSetJacFn(w->mem, cvode_jacobian)
             ? -1
             : 0;
}

static int cvode_reinit(sun_ws *w, const nh_method *m, double t0) {
  return CVodeReInit(w->mem, t0, w->y) || CVodeSStolerances(w->mem, m->p[P_RTOL], m->p[P_ATOL]) ||
                 CVodeSetMaxOrd(w->mem, (int)m->p[P_MAX_ORDER]) || CVodeSetMaxStep(w->mem, m->p[P_MAX_STEP]) ||
                 CVodeSetMaxNumSteps(w->mem, (long)m->p[P_MAX_STEPS])
             ? -1
             : 0;
}

static int cvode_solve(sun_ws *w, double tout) {
  double tret;
  return CVode(w->mem, tout, w->y, &tret, CV_NORMAL);
}

static int cvode_counters(void *mem, long *c) {
  return CVodeGetNumSteps(mem, &c[C_STEPS]) || CVodeGetNumRhsEvals(mem, &c[C_EVALS]) ||
                 CVodeGetNumJacEvals(mem, &c[C_JACS]) || CVodeGetNumNonlinSolvIters(mem, &c[C_ITERS]) ||
                 CVodeGetNumLinSolvSetups(mem, &c[C_SETUPS])
             ? -1
             : 0;
}

static const char *cvode_flag_name(int flag) {
  switch (flag) {
    FLAG_NAME(CV_TOO_MUCH_WORK)
    FLAG_NAME(CV_TOO_MUCH_ACC)
    FLAG_NAME(CV_ERR_FAILURE)
    FLAG_NAME(CV_CONV_FAILURE)
    FLAG_NAME(CV_LINIT_FAIL)
    FLAG_NAME(CV_LSETUP_FAIL)
    FLAG_NAME(CV_LSOLVE_FAIL)
    FLAG_NAME(CV_RHSFUNC_FAIL)
    FLAG_NAME(CV_REPTD_RHSFUNC_ERR)
    FLAG_NAME(CV_UNREC_RHSFUNC_ERR)
    FLAG_NAME(CV_ILL_INPUT)
    FLAG_NAME(CV_NLS_FAIL)
  default:
    return "CVODE error";
  }
}
#undef FLAG_NAME

static const sun_family cvode_family = {
    .slot = 1,
    .name = "cvode",
    .length = cvode_length,
    .create = cvode_create,
    .reinit = cvode_reinit,
    .solve = cvode_solve,
    .counters = cvode_counters,
    .current_time = CVodeGetCurrentTime,
    .last_step = CVodeGetLastStep,
    .set_stop_time = CVodeSetStopTime,
    .flag_name = cvode_flag_name,
    .free_mem = CVodeFree,
};

/* ---------------------------------------------------------------------------------------------- */
/* The shared driver.                                                                               */

static const sun_family *family_of(const nh_method *m) { return m->type->data; }

/* This thread's workspace of m's family sized for sys, created (allocating) when missing or of
 * another size; NULL when SUNDIALS cannot create it. Called by init only. */
static sun_ws *workspace_for(const sun_family *fam, const nh_system *sys, int *created) {
  sun_ws *w = slots[fam->slot];
  const int len = fam->length(sys);
  *created = 0;
  if (w && w->len == len) return w;
  *created = 1;
  if (w) { /* another size: unlinked and freed */
#pragma omp critical(nh_sundials)
    for (sun_ws **p = &all_workspaces; *p; p = &(*p)->next)
      if (*p == w) {
        *p = w->next;
        break;
      }
    free_workspace(w);
    slots[fam->slot] = NULL;
  }
  if (!(w = calloc(1, sizeof *w))) return NULL;
  w->fam = fam;
  w->len = len;
  w->sys = sys;
  if (SUNContext_Create(NULL, &w->ctx) || !(w->y = N_VNew_Serial(len, w->ctx)) ||
      !(w->yp = N_VNew_Serial(len, w->ctx)) || !(w->id = N_VNew_Serial(len, w->ctx)) ||
      !(w->J = SUNDenseMatrix(len, len, w->ctx)) || !(w->LS = SUNLinSol_Dense(w->y, w->J, w->ctx))) {
    free_workspace(w);
    return NULL;
  }
  N_VConst(0, w->y), N_VConst(0, w->yp);
  if (fam->create(w) < 0) {
    free_workspace(w);
    return NULL;
  }
#pragma omp critical(nh_sundials)
  {
    static int registered;
    if (!registered) registered = !atexit(free_all_workspaces);
    w->next = all_workspaces;
    all_workspaces = w;
  }
  return slots[fam->slot] = w;
}

/* Loads x into the solver's vectors with consistent derivatives (header) and re-initialises the
 * memory at x->t for steps in the direction of h. Sets x's multiplier (IDA: λ0). */
static nh_step_status restart(sun_ws *w, const nh_method *m, const nh_system *sys, const nh_state *x, double h,
                              double *lambda, nh_cost *cost) {
  const int n = sys->n, k = sys->k;
  double *y = N_VGetArrayPointer(w->y), *yp = N_VGetArrayPointer(w->yp);
  double lam[NH_MAX_K] = {0};
  w->sys = sys;
  w->live = 0;
  for (int i = 0; i < n; i++) y[i] = x->q[i], y[n + i] = x->v[i], yp[i] = x->v[i];
  /* nh_acceleration and nh_multiplier each evaluate the force and A(q) once. */
  const int with_lambda = w->fam == &ida_family && k > 0;
  cost->rhs_evals += 1 + with_lambda;
  if (k) cost->constraint_evals += 1 + with_lambda;
  if (nh_acceleration(sys, x->t, x->q, x->v, yp + n) != 0 ||
      (with_lambda && nh_multiplier(sys, x->t, x->q, x->v, lam) != 0)) {
    snprintf(w->failure, sizeof w->failure, "%s: no consistent initial acceleration at t = %.6e (singular A M^-1 A^T)",
             w->fam->name, x->t);
    return NH_STEP_SOLVER_FAILED;
  }
  if (w->fam == &ida_family)
    for (int a = 0; a < k; a++) y[2 * n + a] = lam[a], yp[2 * n + a] = 0;
  if (w->fam->reinit(w, m, x->t) < 0) {
    snprintf(w->failure, sizeof w->failure, "%s: re-initialisation failed at t = %.6e: %s", w->fam->name, x->t,
             w->message);
    return NH_STEP_SOLVER_FAILED;
  }
  for (int a = 0; a < k; a++) lambda[a] = lam[a];
  memset(w->counts, 0, sizeof w->counts); /* ReInit sets the solver's counters to 0 */
  w->dq_evals = 0;
  w->type = m->type;
  memcpy(w->mp, m->p, sizeof w->mp);
  w->stype = sys->type;
  memcpy(w->sp, sys->p, sizeof w->sp);
  w->last = *x;
  w->direction = h;
  w->live = 1;
  return NH_STEP_OK;
}

/* Whether a step from x continues what the memory integrates (header). */
static int continues(const sun_ws *w, const nh_method *m, const nh_system *sys, const nh_state *x, double h) {
  const int n = sys->n;
  if (!w->live || w->type != m->type || memcmp(w->mp, m->p, sizeof w->mp) || w->stype != sys->type ||
      memcmp(w->sp, sys->p, sizeof w->sp) || (h > 0) != (w->direction > 0))
    return 0;
  if (fabs(x->t - w->last.t) > 1e-12 * fmax(1, fabs(x->t))) return 0;
  return memcmp(x->q, w->last.q, sizeof(double) * (size_t)n) == 0 &&
         memcmp(x->v, w->last.v, sizeof(double) * (size_t)n) == 0;
}

static nh_step_status sun_init(const nh_method *m, const nh_system *sys, nh_state *x, double h, nh_cost *cost) {
  const sun_family *fam = family_of(m);
  int created;
  sun_ws *w = workspace_for(fam, sys, &created);
  if (!w) {
    fprintf(stderr, "%s: cannot create the SUNDIALS solver memory for %s\n", fam->name, sys->type->name);
    return NH_STEP_SOLVER_FAILED;
  }
  if (created) {
    /* CVODE allocates the copy of its Jacobian at its first solve (cvLsInitialize), and keeps it
     * across re-initialisations: one step from x, not counted and then discarded by the restart
     * below, makes that allocation here rather than in a step. */
    nh_cost scratch = {0};
    double lam[NH_MAX_K];
    if (restart(w, m, sys, x, h, lam, &scratch) == NH_STEP_OK && fam->set_stop_time(w->mem, x->t + h) >= 0)
      fam->solve(w, x->t + h);
  }
  w->failure[0] = '\0';
  nh_step_status st = restart(w, m, sys, x, h, x->lambda, cost);
  if (st != NH_STEP_OK) fprintf(stderr, "%s\n", w->failure);
  return st;
}

/* Adds the solver's work since the last step to cost (header, "Work in nh_cost"). */
static void count_work(sun_ws *w, int k, nh_cost *cost) {
  long c[NCOUNTERS];
  if (w->fam->counters(w->mem, c) < 0) return;
  c[C_DQ_EVALS] = w->dq_evals;
  unsigned long long d[NCOUNTERS];
  for (int i = 0; i < NCOUNTERS; i++) d[i] = (unsigned long long)(c[i] - w->counts[i]), w->counts[i] = c[i];
  cost->steps += d[C_STEPS];
  cost->rhs_evals += d[C_EVALS] + d[C_DQ_EVALS];
  if (k) cost->constraint_evals += d[C_EVALS] + d[C_DQ_EVALS];
  cost->jacobian_evals += d[C_JACS];
  cost->newton_iterations += d[C_ITERS];
  cost->linear_solves += d[C_ITERS] + d[C_SETUPS];
}

static nh_step_status sun_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y, double h,
                               nh_cost *cost) {
  const sun_family *fam = family_of(m);
  sun_ws *w = slots[fam->slot];
  const int n = sys->n, k = sys->k;
  if (!w || w->len != fam->length(sys)) {
    fprintf(stderr, "%s: step without nh_method_init on %s (the solver memory is made there)\n", fam->name,
            sys->type->name);
    return NH_STEP_SOLVER_FAILED;
  }
  double lam[NH_MAX_K];
  if (!continues(w, m, sys, x, h) && restart(w, m, sys, x, h, lam, cost) != NH_STEP_OK) {
    fprintf(stderr, "%s\n", w->failure);
    return NH_STEP_SOLVER_FAILED;
  }
  w->sys = sys;
  const double tout = x->t + h;
  w->message[0] = '\0';
  int flag = fam->set_stop_time(w->mem, tout);
  if (flag >= 0) flag = fam->solve(w, tout);
  count_work(w, k, cost);
  if (flag < 0) {
    double t = NAN, hlast = NAN;
    fam->current_time(w->mem, &t);
    fam->last_step(w->mem, &hlast);
    snprintf(w->failure, sizeof w->failure, "%s: Failure at t = %.6e (%s, last internal step %.3e): %s", fam->name, t,
             fam->flag_name(flag), hlast, w->message);
    fprintf(stderr, "%s\n", w->failure);
    w->live = 0;
    return NH_STEP_SOLVER_FAILED;
  }
  const double *Y = N_VGetArrayPointer(w->y);
  y->t = tout;
  y->z = x->z; /* neither tracks the Herglotz action */
  for (int i = 0; i < n; i++) y->q[i] = Y[i], y->v[i] = Y[n + i];
  for (int a = 0; a < k; a++) y->lambda[a] = fam == &ida_family ? Y[2 * n + a] : NAN;
  w->last = *y;
  return NH_STEP_OK;
}

const char *nh_sundials_last_failure(const char *method) {
  for (int s = 0; s < 2; s++)
    if (slots[s] && strcmp(slots[s]->fam->name, method) == 0) return slots[s]->failure;
  return "";
}

/* The tolerances, not h, set the error (NH_TOLERANCE_DRIVEN); the order reported is that of the
 * largest BDF formula allowed. */
static int order(const nh_method *m) { return (int)m->p[P_MAX_ORDER]; }

/* The table fields both methods share: one driver, the same parameters (but cvode stops before the
 * last, lambda_error_test), every system feature (nh_free_force and nh_acceleration take them all). */
#define SUN_METHOD_COMMON                                                                                   \
  .params = params, .properties = NH_TOLERANCE_DRIVEN,                                                      \
  .handles = NH_SYS_VARIABLE_MASS | NH_SYS_AFFINE_CONSTRAINTS | NH_SYS_DAMPING | NH_SYS_FORCING |            \
             NH_SYS_TIME_DAMPING | NH_SYS_TIME_POTENTIAL,                                                     \
  .order = order, .init = sun_init, .step = sun_step

const nh_integrator_type nh_integrator_ida = {
    .name = "ida",
    .doc = "SUNDIALS IDA (variable-order BDF, the open counterpart of MATLAB's ode15i) on the index-2 "
           "Lagrange-d'Alembert DAE q' = v, M v' = f + A^T lambda, 0 = A v + b with lambda algebraic and out of "
           "the error test; tolerance-driven: one step of size h advances the solver to t + h (the stop "
           "time). Difference-quotient Jacobian. Needs -DNHBENCH_SUNDIALS=ON.",
    SUN_METHOD_COMMON,
    .nparams = P_COUNT,
    .data = &ida_family,
    .lambda_time = NH_LAMBDA_END,
    .lambda_doc = "IDA's algebraic unknown lambda at t_{k+1} (not in its error test)",
};

const nh_integrator_type nh_integrator_cvode = {
    .name = "cvode",
    .doc = "SUNDIALS CVODE (variable-order BDF with Newton) on the index-reduced ODE q' = v, v' = M^-1(f + A^T "
           "lambda(q, v)); tolerance-driven: one step of size h advances the solver to t + h (the stop time). "
           "Difference-quotient Jacobian; the constraint is not preserved. Needs -DNHBENCH_SUNDIALS=ON.",
    SUN_METHOD_COMMON,
    .nparams = P_LAMBDA_ERROR_TEST, /* cvode has no λ unknown */
    .data = &cvode_family,
};
#endif
