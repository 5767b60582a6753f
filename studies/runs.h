/* The study kinds' results and runners: one result type per kind, filled by nh_run_<kind> and
 * written by the results layer one floor up (results/results.h, nh_write_<kind>); and what the
 * runners share with the tests (Pareto fronts, one-step defects, the embedding residual). */
#ifndef NH_STUDIES_RUNS_H
#define NH_STUDIES_RUNS_H

#include "studies/columns.h"
#include "studies/reference.h"
#include "studies/spec.h"

/* Observables sampled along runs: values[run][sample][row], where one sample's row holds every
 * observable's components in turn, observable o at offset[o] with width[o] entries. */
typedef struct {
  int nobs, row;
  int *width, *offset;     /* [obs] */
  double *values;          /* [run][sample][row]; NaN where absent or after a failed step */
  const char **absent;     /* [obs × method]: NULL, or why that method does not define it (static text) */
  /* Streamed runs (values NULL): fetch fills out with run `run`'s [sample][row] block; 0, or -1. */
  int (*fetch)(const void *ctx, long long run, double *out);
  const void *fetch_ctx;
} nh_samples;

typedef struct {
  /* [method][h] */
  double *err, *err_q, *err_v; /* errors at T in the study's norm: (q,v), q, v */
  double *err_max, *err_2;     /* the (q,v) error at T in max-norm and 2-norm */
  double *err_coord;           /* [method][h][2n]: (q, v)(T) − reference, per coordinate */
  double *final_state;         /* [method][h][2n]: (q, v) at T */
  double *lambda_err;          /* max_a |λ_N − λ(t*)| of the last step, t* its multiplier time (NaN: none) */
  double *discrete_residual;   /* max over the run of the method's own discrete constraint (NaN: none) */
  double *residual;            /* max over the run of max_a |μ^a(q)·v| */
  int *status;                 /* nh_step_status of the run */
  double *z;                   /* the Herglotz action z at T (0 for methods that do not track it) */
  nh_cost *cost;
  double *wall_time;
  /* [method] */
  double *order, *order_stderr; /* least-squares slope of log err vs log h, and its standard error */
  int *fit_first, *fit_count;   /* the h indices used by the fit */
  int *order_ok;                /* |order − expected| <= order_tolerance */
  nh_study_reference reference; /* the solution at T the errors are measured against, and its error */
  double *fit_floor;            /* [method][h]: the error floor of the order fit (nh_error_floor over the
                                 * run's base steps, cost.steps) */
  double *final_lambda;         /* [method][h][NH_MAX_K]: λ of the last step (NaN: none), for lambda_err */
} nh_convergence_result;

typedef struct {
  double *t;           /* [sample] */
  double *q0, *v0;     /* [ic][n] */
  double *E0;          /* [ic] */
  double *dE;          /* [method][ic][sample], E(t) − E0; NaN after a failed step */
  double *max_abs_dE;  /* [method][ic] */
  double *drift_slope; /* [method][ic], least-squares slope of dE against t */
  double *max_residual;/* [method][ic] */
  int *status;         /* [method][ic] */
  double *dE_mean, *dE_var; /* [method][sample], across ICs; variance unbiased (spec A11) */
  double *dE_q10, *dE_q50, *dE_q90; /* [method][sample], quantiles across the ICs still running */
  int *dE_count;       /* [method][sample], trajectories still running */
  nh_cost *cost;       /* [method], summed over ICs */
  double *wall_time;   /* [method], summed over ICs */
  nh_samples samples;  /* runs [method][ic], when the spec asks for observables (nobs > 0) */
  /* A run with a checkpoint journal streams: dE and samples.values stay NULL and the rows are read
   * back from the journal (memory: the per-run and per-method arrays only). */
  /* The statistics per sample stream too: dE_mean … dE_count stay NULL, method m's six rows (mean,
   * var, q10, q50, q90, count) are the journal's record nmethods · count + m, and the last sample's
   * var and count, which the summary needs, are kept here. */
  struct nh_checkpoint *journal;
  size_t journal_dE, journal_obs; /* where a record's dE row and observables block start */
  double *last_var;               /* [method], streamed runs only */
  int *last_count;                /* [method], streamed runs only */
} nh_ensemble_result;
/* Row `task` (= method · count + ic) of dE, from memory or the journal: 0, or -1. */
int nh_ensemble_dE_row(const nh_study *st, const nh_ensemble_result *r, long task, double *row);
/* The statistics per sample, in the order of a streamed run's record. */
enum { NH_STAT_MEAN, NH_STAT_VAR, NH_STAT_Q10, NH_STAT_Q50, NH_STAT_Q90, NH_STAT_COUNT, NH_STATS };
/* Row `which` (NH_STAT_*) of method m's statistics over the samples, from memory or the journal
 * (the count as doubles): 0, or -1. */
int nh_ensemble_stat_row(const nh_study *st, const nh_ensemble_result *r, int m, int which, double *row);

/* Trajectory study: runs [method][h][ic] from fixed initial conditions. */
typedef struct {
  int nsamples;        /* the most samples of any h (T / (h K) + 1 for the smallest h) */
  int *nsamples_h;     /* [h] */
  double *t;           /* [h][nsamples]: sample times, NaN beyond nsamples_h */
  nh_samples samples;  /* runs [method][h][ic], nsamples per run */
  int *status;         /* [method][h][ic] */
  nh_cost *cost;       /* [method][h][ic] */
  double *wall_time;   /* [method][h][ic] */
  double *final_state; /* [method][h][ic][2n] (q, v) at the end of the run */
  /* round_trip: [method][h][ic], the max-norm over (q, v) of the start after init minus the state
   * reached back from the end in as many steps of −h, the carry included (spec/rattle.md §3.3), and
   * its λ part for a method whose state carries λ; NaN where there is no such run (a failed run, a
   * two-step method, no λ in the state). NULL without round_trip. */
  double *round_trip_defect, *round_trip_defect_lambda;
  const char *reference_kind; /* "exact", "rk8pd" or "none" (no error observable asked for) */
} nh_trajectory_result;

/* One-step study: one step of every method and h from every point. [method][h][point] unless
 * said otherwise; points are [ic][npoints] flattened. */
typedef struct {
  int npoints;          /* nic × npoints */
  double *point_t;      /* [point] */
  double *points;       /* [point][2n]: the start states (q, v) */
  double *local_err;    /* |F_h(x) − φ_h(x)| in the study's norm, over (q, v) */
  double *local_err_q, *local_err_v;
  double *stepped;      /* [method][h][point][2n]: F_h(x) */
  double *lambda;       /* [method][h][point][k]: the step's multipliers (NaN: none) */
  double *lambda_start; /* [method][h][point][k]: the type's start_multiplier of the step (NaN: none) */
  double *lambda_err;   /* max_a |λ − λ(t*)| (NaN: none) */
  double *backward;     /* [method][h][point][2n]: F_{−h}(x) */
  double *backward_lambda; /* [method][h][point][k]: the multipliers F_{−h}(x) leaves (NaN: none) */
  double *adjoint_defect; /* |F*_{−h}(F_h(x)) − x|, F* the declared adjoint (NaN: none declared) */
  double *adjoint_defect_lambda; /* max_a |λ_a of F*_{−h}(F_h(x)) − λ_a of x| where λ is part of the
                                    state (a method that reads its previous step, nh_rattle); else NaN */
  double *reversal_defect; /* |F_{−h}(F_h(x)) − x|, F the method itself (NaN: two-step method) */
  double *cond;         /* 1-norm condition number of the Newton Jacobian at the solution (NaN: none) */
  double *cond_unscaled; /* the same in the source's unknowns and equations (NaN: no declared scaling) */
  double *action_err;   /* |L_d(q(0), q(h)) − ∫_0^h L dt| (NaN: not variational) */
  double *embedding_residual; /* max over the grid t_i of |∂_tG − X(G)| (spec/discretization.md §6.4) */
  int *status;
  /* [method][h]: the largest local_err and action_err over the points (NaN if any is NaN) */
  double *max_local_err, *max_action_err;
  /* [method]: least-squares slope of log max_local_err against log h (expected p + 1), and of
   * log max_action_err (expected 3 for a second-order L_d, 2 otherwise). */
  double *slope, *slope_stderr;
  int *fit_first, *fit_count;
  double *action_slope;
  const char *reference_kind;
  double *fit_floor;    /* [h]: the error floor of both fits (nh_error_floor over one step) */
} nh_onestep_result;

/* Work-precision study: [method][h]; the error at T in several norms from one run. */
#define NH_WP_NORMS 6 /* (q,v) max, (q,v) 2, q max, q 2, v max, v 2 */
/* Their names, in column order (the coordinate of dimension norm). */
extern const char *const nh_wp_norm_names[NH_WP_NORMS];
typedef struct {
  double *err;          /* [method][h][NH_WP_NORMS] */
  nh_cost *cost;        /* counted work of one run */
  double *work;         /* rhs + Jacobian + constraint evaluations of one run */
  double *wall_time;    /* median over `repeats` runs */
  double *wall_times;   /* [method][h][repeat] */
  int *status;          /* NH_RUN_TIMED_OUT when a run exceeded time_limit */
  int *pareto_work;     /* 1: no other run has smaller-or-equal error (study norm) and work, one strictly */
  int *pareto_time;     /* the same against wall time */
  double *final_state;  /* [method][h][2n]: (q, v) at T of the first run */
  nh_study_reference reference; /* the solution at T the errors are measured against, and its error */
} nh_work_precision_result;

/* Each kind's result columns (studies/columns.h), defined beside its runner. */
extern const nh_result_column nh_convergence_columns[], nh_ensemble_columns[], nh_trajectory_columns[],
    nh_onestep_columns[], nh_work_precision_columns[];

/* The runners of the study kinds: 0, or -1 with the reason in err (err untouched on success). The
 * caller frees r with the matching _free, whatever the outcome; _free zeroes r, so that a second
 * call does nothing. */
int nh_run_convergence(const nh_study *st, nh_convergence_result *r, char *err, size_t errlen);
void nh_convergence_result_free(nh_convergence_result *r);
int nh_run_ensemble(const nh_study *st, nh_ensemble_result *r, char *err, size_t errlen);
void nh_ensemble_result_free(nh_ensemble_result *r);
int nh_run_trajectory(const nh_study *st, nh_trajectory_result *r, char *err, size_t errlen);
void nh_trajectory_result_free(nh_trajectory_result *r);
int nh_run_onestep(const nh_study *st, nh_onestep_result *r, char *err, size_t errlen);
void nh_onestep_result_free(nh_onestep_result *r);
int nh_run_work_precision(const nh_study *st, nh_work_precision_result *r, char *err, size_t errlen);
void nh_work_precision_result_free(nh_work_precision_result *r);

/* Pareto efficiency of n runs (studies/work_precision.c): efficient[i] = 1 when run i is ok and
 * finite and no other such run has err ≤ and cost ≤ with one strictly smaller. */
void nh_pareto_front(int n, const double *err, const double *cost, const int *ok, int *efficient);
/* |adj_{−h}(y) − x| in the norm, y = F_h(x) as the step left it (studies/onestep.c); NaN if a
 * step fails. */
/* The same round trip's multiplier defect max_a |λ_a of adj_{−h}(y) − λ_a of x|, for a method whose state
 * carries λ (nh_method_reads_previous_step on sys: nh_rattle's (q, p, λ), spec/rattle.md §3.3); NaN
 * otherwise or if a step fails. */
double nh_onestep_adjoint_defect_lambda(const nh_method *m, const nh_method *adj, const nh_system *sys,
                                        const nh_state *x, const nh_state *y, double h);
double nh_onestep_adjoint_defect(const nh_method *m, const nh_method *adj, const nh_system *sys, const nh_state *x,
                                 const nh_state *y, double h, nh_norm norm);
/* ‖J‖₁‖J⁻¹‖₁ of m's Newton Jacobian at the step x → y (studies/onestep.c); NaN without Newton
 * hooks, +Inf for an exactly singular Jacobian. */
double nh_onestep_newton_cond(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y, double h);
/* The same for diag(row)·J·diag(col) of the Newton hooks' scaling (integrator.h): the source's own
 * system, e.g. nh_newmark's in λ with (N3), (N4) as written (spec/newmark.md §2.5, C12); NaN also
 * when the type declares no scaling. */
double nh_onestep_newton_cond_unscaled(const nh_method *m, const nh_system *sys, const nh_state *x,
                                       const nh_state *y, double h);
/* The one-step study's embedding residual (spec/discretization.md §6.4, R19) is the largest norm of
 * ρ over the interior grid t_i = i·h/(NH_EMBEDDING_GRID + 1), i = 1 … NH_EMBEDDING_GRID. Interior:
 * ρ(0) = ρ(h) = 0 exactly (χ' vanishes at τ = 0, 1 with all its derivatives). 32 points: ρ is
 * dominated by (χ'/h)(b − a), and χ' is a bump of width ~½ with χ'(½) = 2, whose largest value on
 * this grid is 1.998 (0.1 % low; 1.993 with 16 points), a constant factor that leaves the slope in
 * h alone; the cost is 32 true states per (h, point) and 32 per task, one rk8pd sweep each. */
#define NH_EMBEDDING_GRID 32
/* ρ(t) = ∂_tG − X(G) of G(t) = (1 − χ(τ)) a + χ(τ) b at τ = t/h ∈ (0, 1), χ the smooth step of
 * §6.2, for a = φ_t(x) and b = φ_{t−h}(y) ((q, v), 2n entries each) and the absolute time `t_abs` =
 * x.t + t at which X(q, v) = (v, a(t, q, v)) (nh_acceleration) is evaluated: 2n entries into rho;
 * 0, or -1 where the acceleration is undefined (studies/onestep.c). */
int nh_embedding_rho(const nh_system *sys, double t_abs, double tau, double h, const double *a, const double *b,
                     double *rho);

#endif
