/* Studies: a declarative spec (a libconfig text file, format in README.md "Study specs") expands
 * into tasks that the runner executes in parallel with OpenMP; results go to one HDF5 file
 * (results/README.md). The runner sees systems and integrators only through their interfaces. */
#ifndef NH_STUDY_H
#define NH_STUDY_H

#include <libconfig.h>
#include <stddef.h>
#include <stdint.h>

#include "core/rng.h" /* nh_stream_seed: the stream of initial condition i is (seed, i) */
#include "integrators/evolve.h" /* the one stepping loop */
#include "integrators/integrator.h"

#include "studies/observables.h"

typedef enum {
  NH_STUDY_CONVERGENCE,    /* error at T against h, observed orders */
  NH_STUDY_ENSEMBLE,       /* many initial conditions, energy drift and its variance */
  NH_STUDY_TRAJECTORY,     /* fixed initial conditions, observables as time series */
  NH_STUDY_ONESTEP,        /* one step from exact points: local error, adjoint defect, cond(J) */
  NH_STUDY_WORK_PRECISION, /* error at T against counted work and wall time, Pareto front */
} nh_study_kind;
#define NH_STUDY_KINDS 5
/* "convergence", "ensemble", "trajectory", "onestep", "work_precision" */
const char *nh_study_kind_name(nh_study_kind kind);

/* Run status in result files: an nh_step_status (0 ok, 1 solver failed, 2 non-finite) or: */
#define NH_RUN_DIVERGED 3  /* |E(t) − E0| exceeded divergence · max(1, |E0|) */
#define NH_RUN_TIMED_OUT 4 /* work-precision: the task exceeded time_limit; the sweep went on */

/* Error norms over a vector of differences: max |d_i| or sqrt(Σ d_i²). */
typedef enum { NH_NORM_MAX = 0, NH_NORM_2 = 1 } nh_norm;

/* A parameter grid: every pair (values0[i], values1[j]) applied to a template method; at most
 * NH_MAX_GRID_POINTS pairs (the spec loader refuses more: each is a method of the study). */
#define NH_MAX_GRID_POINTS 10000
typedef struct {
  char *template_name;  /* canonical name of the template method */
  char *param[2];       /* parameter names, e.g. beta and beta2 */
  int nvalues[2];
  double *values[2];
  int *method_index;    /* [nvalues0 × nvalues1] into the study's methods; −1: skipped */
} nh_grid;

typedef struct {
  nh_study_kind kind;
  char *spec_file;
  char *spec_text;   /* the spec as read, its includes expanded (studies/spec_source.h) */
  char **spec_inputs; /* the files it was read from: the spec ("-": standard input), then each included one */
  int nspec_inputs;
  char *overrides;   /* "--set" overrides applied, "" if none */
  /* The checkpoint journal (studies/checkpoint.h) the run appends each finished task to, NULL for
   * none (an ensemble's also streams its rows; the other kinds go through nh_journaled_tasks); its
   * key (spec text, overrides, version); resume = 1 continues the journal's run. Set by the caller
   * after nh_study_load, not owned by the study. */
  const char *checkpoint, *checkpoint_key;
  int resume;
  nh_system sys;
  double T;
  int nmethods;
  nh_method **methods;
  char **method_names; /* canonical names */
  int nprimary;        /* methods[0 .. nprimary) are the spec's `methods`; the rest only grids added */

  /* Initial conditions: `initial` (a preset name, "default", or { q; v; }, or a list of these).
   * Convergence and work-precision use the first; trajectory and one-step studies, and ensembles
   * given `initial` instead of `ensemble`, use them all. */
  nh_state x0;        /* = ics[0] */
  char *initial;      /* = ic_names[0] */
  int nic;
  nh_state *ics;      /* [nic] */
  char **ic_names;    /* [nic]: preset name, "default" or "given" */

  /* Observables sampled every sample_every steps along each run (trajectory; ensemble when
   * `observables` is given), in the order the spec lists them. */
  int nobs;
  const nh_observable **obs;

  /* convergence, trajectory, one-step, work-precision: the step sizes */
  int nh;
  double *h;
  nh_norm norm;       /* the error norm the order fit and the Pareto front use (default max) */
  int fit_points;
  double error_floor;      /* errors at or below it are left out of the order fit */
  int error_floor_auto;    /* error_floor not given (or "auto"): the floor is nh_error_floor's */
  double reference_tol;    /* rk8pd's tolerance; with reference_tol_auto, the one "auto" starts from */
  int reference_tol_auto;  /* reference_tol not given (or "auto"): tightened by nh_study_reference_refine */
  double order_tolerance;  /* |observed − expected| allowed by --check-orders (default 0.15) */
  int *order_expected;     /* [method]: the claimed order, or a documented exception */
  char **order_reason;     /* [method]: "" or why the expected order differs from the claim */

  /* one-step: points are `npoints` states along the exact (or reference) solution from each
   * initial condition at t = i·T/npoints, i = 0 … npoints−1; the initial conditions are
   * `initial`, or `ensemble` random states on D (random_ics) */
  int npoints;

  /* work-precision */
  int repeats;        /* wall time: the median of this many runs (default 3) */
  double time_limit;  /* seconds per task before it is stopped as timed out (> 0, default 60) */

  /* ensemble (and trajectory: sample_every, divergence) */
  double step;       /* h */
  long nsteps;       /* T / h */
  int sample_every;  /* K: E(t) − E0 and the observables sampled every K steps */
  int round_trip;    /* trajectory: also integrate back from each end state (nh_trajectory_result) */
  double divergence; /* a trajectory stops as diverged when |E − E0| > divergence · max(1, |E0|) */
  int nsamples;      /* nsteps / K + 1, t = 0 included */
  int count;         /* number of initial conditions */
  double energy;
  uint64_t seed;
  int random_ics;    /* 1: `ensemble` draws count states on D; 0: the ensemble runs `initial` */
  int ngrids;
  nh_grid *grids;
} nh_study;

/* The whole text of a file ("-": standard input) of at most 1 MiB, NUL-terminated, malloc'd; NULL
 * with errno set when it cannot be read (EFBIG when larger). */
char *nh_read_text(const char *path);
/* nh_read_text, and its length in bytes into *len (the text may hold NUL bytes). */
char *nh_read_text_len(const char *path, size_t *len);
/* "FILE:LINE: syntax error in `the line` (hint)": libconfig's parse error of `text` (the file's
 * contents; NULL: no line shown) in cfg, for specs and claims files alike. */
void nh_config_syntax_error(const char *path, const char *text, const config_t *cfg, char *err, size_t errlen);
/* Refuses (-1, "FILE:LINE: the integer ... does not fit in 32 bits ...") a decimal integer literal of
 * text without the L suffix outside the int range, which libconfig 1.5 would silently wrap; strings
 * and comments are skipped. For specs and claims files alike. */
int nh_config_check_integers(const char *path, const char *text, char *err, size_t errlen);

/* Reads and checks a spec. overrides: "path=value" strings (libconfig paths, e.g.
 * "ensemble.count=100"). On error returns -1 with "FILE:LINE: message" in err. Either way st
 * holds what was read and is freed with nh_study_free. */
int nh_study_load(const char *path, const char *const *overrides, int noverrides, nh_study *st,
                  char *err, size_t errlen);
void nh_study_free(nh_study *st);

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

/* The reference a study measures errors at t against (studies/reference.c): the exact solution
 * (kind "exact", error 0), or rk8pd at tolerance tol (kind "rk8pd") whose error is estimated as its
 * distance, in the study's norm over (q, v), from a run at check_tol (tol/100, not below 1e-16;
 * 100·tol at 1e-16, an overestimate). */
typedef struct {
  nh_state x;
  const char *kind;
  double tol, check_tol, error;
} nh_study_reference;

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
/* The same for diag(row)·J·diag(col) of the type's newton_scaling (integrator.h): the source's own
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

/* Least-squares slope of y against t over n points (the energy drift slope); NaN if n < 2. */
double nh_drift_slope(int n, const double *t, const double *y);
/* Per column c of x (rows × cols, row-major): the mean, the unbiased variance and the number of
 * finite entries, NaN and infinite entries (stopped runs) left out; mean NaN when no entry is
 * finite, variance NaN when fewer than two are (spec/newmark.md §6 A11). */
void nh_column_stats(int rows, int cols, const double *x, double *mean, double *var, int *count);
/* Bytes of the sampled arrays the run of st keeps in memory until it writes its file (ensemble:
 * dE and the observables of every trajectory, the statistics per sample; trajectory: the
 * observables of every run); 0 for the kinds whose results are small. For the pre-flight. */
double nh_study_memory_estimate(const nh_study *st);
/* Whether the sampled results fit where they go, checked before computing (a run would otherwise
 * be killed, or fail to write, after hours): on disk, twice nh_study_memory_estimate (the journal
 * holds them uncompressed, and the file written from it is at most as large) against disk_free
 * (bytes free where the output goes); the kinds other than the ensemble (which streams) also keep
 * them in memory, against 80 % of memory (bytes). A capacity of 0 (unknown) passes. 0, or -1 with
 * what to change in err. */
int nh_study_check_room(const nh_study *st, double disk_free, double memory, char *err, size_t errlen);
/* Per column c of x (rows × cols, row-major): the p-quantile (0 ≤ p ≤ 1) of its finite entries,
 * linearly interpolated between order statistics (gsl_stats_quantile_from_sorted_data: the
 * entry at rank p(k − 1) of the k sorted ones); NaN when no entry is finite. Returns 0, or -1 out
 * of memory. */
int nh_column_quantile(int rows, int cols, const double *x, double p, double *out);

/* The evolve observer (integrators/evolve.h) of a timed run: NH_RUN_TIMED_OUT once omp_get_wtime()
 * is past the deadline at ctx (a double), looked at every 64 steps (the clock costs about as much
 * as a step of rk4); else NH_STEP_OK. */
int nh_study_time_limit(void *ctx, const nh_evolve *e);

/* count random states on D at the energy, state i drawn from the stream (seed, i) by the
 * system's sampler (nh_sample_on_D). Returns 0, nh_sample_on_D's failure code (-1, -2), or
 * NH_DRAW_NO_MEMORY (no memory for the random generator). */
#define NH_DRAW_NO_MEMORY (-3)
int nh_draw_states(const nh_system *sys, int count, double energy, uint64_t seed, nh_state *x);

/* The two "auto" rules in words, as results files state them. */
#define NH_REFERENCE_TOL_AUTO "auto: from 1e-13, tenfold tighter (not below 1e-15) until reference_error <= the smallest error / 100"
#define NH_ERROR_FLOOR_AUTO "auto: max(10 reference_error, steps eps |state|), eps = 2^-52"
/* d = (q, v) − the reference's state, qv and d of 2n entries (q then v). */
void nh_study_reference_difference(const nh_study *st, const double *qv, const nh_study_reference *ref, double *d);
/* |d| over n entries in the given norm. */
double nh_state_norm(nh_norm norm, int n, const double *d);
/* The reference at t from x0 at st->reference_tol. Returns 0 or nh_true_solution's failure. */
int nh_study_reference_at(const nh_study *st, const nh_state *x0, double t, nh_study_reference *ref);
/* With st->reference_tol_auto, tightens an rk8pd reference tenfold at a time (not below 1e-15) until
 * its estimated error is at most smallest_error/100. Returns 0 or nh_true_solution's failure. */
int nh_study_reference_refine(const nh_study *st, const nh_state *x0, double t, double smallest_error,
                              nh_study_reference *ref);
/* |(q, v)| of x in the study's norm. */
double nh_study_reference_norm(const nh_study *st, const nh_state *x);
/* The error floor of an order fit over runs of `steps` base steps (a composition's sub-steps
 * each count) whose truth has the error
 * reference_error: max(error_floor, 10 × reference_error); with error_floor_auto,
 * max(10 × reference_error, steps·ε·state_norm), twice the round-off of one rounding of a state of
 * that size per step, adding up in one direction. */
double nh_error_floor(const nh_study *st, double reference_error, double state_norm, double steps);

/* Order fit over h (ascending or not) and errors: the finest `fit_points` points whose error is
 * finite and above `floor`. Returns 0, -1 if fewer than 2 such points, or -2 if out of memory
 * (order and stderr NaN, first -1, count 0 in both failures). */
int nh_fit_order(int nh, const double *h, const double *err, int fit_points, double floor,
                 double *order, double *stderr_, int *first, int *count);
/* nh_fit_order with a floor per step size: err[i] must lie above floors[i]. */
int nh_fit_order_floors(int nh, const double *h, const double *err, int fit_points, const double *floors,
                        double *order, double *stderr_, int *first, int *count);

/* Results files: written and read by the results layer one floor up (results/results.h,
 * nh_write_<kind>). */

/* Progress on stderr for runs longer than a second (studies/progress.c). */
typedef struct {
  const char *label;
  long total;
  long done;
  double start, last_print;
  int printed;
  int threads;
  /* With kinds (nh_progress_kinds): per kind of task (e.g. a method), its tasks, those done and
   * their summed run time, so that the estimate of the time left does not take fast-failing
   * tasks of one kind for the cost of another's. */
  int nkinds;
  long *kind_total, *kind_done;
  double *kind_time;
} nh_progress;
void nh_progress_start(nh_progress *p, const char *label, long total);
/* Tasks come in nkinds kinds, kind k having total[k] of them; nh_progress_tick_kind then reports
 * each task with its kind and run time. Returns 0, or -1 out of memory (the plain estimate). */
int nh_progress_kinds(nh_progress *p, int nkinds, const long *total);
void nh_progress_tick(nh_progress *p); /* thread-safe */
void nh_progress_tick_kind(nh_progress *p, int kind, double seconds); /* thread-safe */
/* Seconds left at time `now`: with kinds, the tasks left of each kind times that kind's mean run
 * time (kinds with none done yet: the mean over the kinds that have), over the threads; without,
 * the elapsed time scaled by the tasks left per task done. */
double nh_progress_eta(const nh_progress *p, double now);
void nh_progress_end(nh_progress *p); /* also frees the kinds */
/* A study's tasks, for nh_run_tasks. run(ctx, i, record) runs task i and packs its results into
 * record (record_length ≥ 1 doubles; it may also fill its own slots of the result); take(ctx, i,
 * record, remote) receives the record on the rank that keeps the results (remote: it ran on
 * another rank, so the task's slots are still to be filled from the record): 0, or -1 when it
 * could not be kept (the run then fails). done (NULL: none) marks tasks not to run (taken from a
 * journal); kind (NULL: none) gives a task's kind, 0 … nkinds − 1, for the progress estimate. */
typedef struct {
  long count;
  const char *done;
  size_t record_length;
  void (*run)(void *ctx, long task, double *record);
  int (*take)(void *ctx, long task, const double *record, int remote);
  int (*kind)(void *ctx, long task);
  int nkinds;
  void *ctx;
} nh_task_set;
/* Runs every task not done (studies/distribute.c): over the OpenMP threads (dynamic schedule;
 * each record taken as its task ends), or in the MPI build under mpirun with more than one rank,
 * over the ranks: rank 0 hands tasks out and takes their records, the others run them with their
 * threads and keep nothing. Ticks prog (started by the caller) per task; with kinds, it first
 * gives prog the number of tasks of each kind to run (nh_progress_kinds). 0, or -1 if a take
 * failed or a record could not be allocated. */
int nh_run_tasks(const nh_task_set *ts, nh_progress *prog);
/* This process's MPI rank and the number of ranks (0 and 1 outside MPI); only rank 0 keeps
 * results, writes files and speaks. */
int nh_study_rank(void);
int nh_study_ranks(void);
/* Rank 0's rc on every rank (rc itself outside MPI): decisions only rank 0 can take (its file
 * system, the run's outcome) become every rank's, so that all exit alike. */
int nh_ranks_agree(int rc);
/* One per-task array of a result, for the checkpoint journal: task i owns the elements
 * [i·per, (i + 1)·per) of base, of the given type. */
typedef struct {
  void *base;
  enum { NH_SLOT_DOUBLE, NH_SLOT_INT, NH_SLOT_COST } type;
  size_t per;
} nh_task_slot;
/* Runs task(ctx, i) for every i in [0, count) over the OpenMP threads (dynamic schedule: tasks
 * differ in cost; each task writes only its own slots of the results, so they are the same
 * whatever the thread count), or over MPI ranks and their threads (nh_run_tasks), with progress
 * under LABEL and the study's checkpoint journal (st->checkpoint; NULL: none): each finished
 * task's elements of the slots are appended to it, and a resumed
 * run (st->resume) takes the tasks it holds from it, bit for bit, instead of running them
 * (studies/task_journal.c). A task returns 0, or -1 if it ran out of memory: its results are
 * neither kept nor journaled (a resumed run runs it again) and the study fails. Returns 0, or -1
 * with a message if the journal cannot be opened (none to resume, another run's) or a task ran
 * out of memory; a journal that fails later only notes it: the results are in memory. */
int nh_journaled_tasks(const nh_study *st, const char *label, long count, int (*task)(void *ctx, long i), void *ctx,
                       const nh_task_slot *slots, int nslots, char *err, size_t errlen);
/* The context of a study kind whose tasks need only the study and its result. */
typedef struct {
  const nh_study *st;
  void *result;
} nh_study_tasks;

#endif
