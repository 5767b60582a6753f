/* Studies: a declarative spec (a libconfig text file, format in README.md "Study specs") expands
 * into tasks that the runner executes in parallel with OpenMP; results go to one HDF5 file
 * (results/README.md). The runner sees systems and integrators only through their interfaces. */
#ifndef NH_STUDY_H
#define NH_STUDY_H

#include <stddef.h>
#include <stdint.h>

#include "integrators/integrator.h"

typedef enum { NH_STUDY_CONVERGENCE, NH_STUDY_ENSEMBLE } nh_study_kind;

/* Run status in result files: an nh_step_status (0 ok, 1 solver failed, 2 non-finite) or: */
#define NH_RUN_DIVERGED 3 /* ensemble: |E(t) − E0| exceeded divergence · max(1, |E0|) */

/* A parameter grid: every pair (values0[i], values1[j]) applied to a template method. */
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
  char *spec_text;   /* the spec file as read */
  char *overrides;   /* "--set" overrides applied, "" if none */
  nh_system sys;
  double T;
  int nmethods;
  nh_method **methods;
  char **method_names; /* canonical names */

  /* convergence */
  nh_state x0;
  char *initial;      /* preset name, "default" or "given" */
  int nh;
  double *h;
  int fit_points;
  double error_floor;
  double reference_tol;
  double order_tolerance;  /* |observed − expected| allowed by --check-orders (default 0.15) */
  int *order_expected;     /* [method]: the claimed order, or a documented exception */
  char **order_reason;     /* [method]: "" or why the expected order differs from the claim */

  /* ensemble */
  double step;       /* h */
  long nsteps;       /* T / h */
  int sample_every;  /* K: E(t) − E0 sampled every K steps */
  double divergence; /* a trajectory stops as diverged when |E − E0| > divergence · max(1, |E0|) */
  int nsamples;      /* nsteps / K + 1, t = 0 included */
  int count;         /* number of initial conditions */
  double energy;
  uint64_t seed;
  int ngrids;
  nh_grid *grids;
} nh_study;

/* Reads and checks a spec. overrides: "path=value" strings (libconfig paths, e.g.
 * "ensemble.count=100"). On error returns -1 with "FILE:LINE: message" in err. */
int nh_study_load(const char *path, const char *const *overrides, int noverrides, nh_study *st,
                  char *err, size_t errlen);
void nh_study_free(nh_study *st);

typedef struct {
  /* [method][h] */
  double *err, *err_q, *err_v; /* max-norm errors at T: (q,v), q, v */
  double *residual;            /* max over the run of max_a |μ^a(q)·v| */
  int *status;                 /* nh_step_status of the run */
  double *z;                   /* the Herglotz action z at T (0 for methods that do not track it) */
  nh_cost *cost;
  double *wall_time;
  /* [method] */
  double *order, *order_stderr; /* least-squares slope of log err vs log h, and its standard error */
  int *fit_first, *fit_count;   /* the h indices used by the fit */
  int *order_ok;                /* |order − expected| <= order_tolerance */
  nh_state reference;           /* the solution at T the errors are measured against */
  const char *reference_kind;   /* "exact" or "rk8pd" */
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
  int *dE_count;       /* [method][sample], trajectories still running */
  nh_cost *cost;       /* [method], summed over ICs */
  double *wall_time;   /* [method], summed over ICs */
} nh_ensemble_result;

int nh_run_convergence(const nh_study *st, nh_convergence_result *r, char *err, size_t errlen);
void nh_convergence_result_free(nh_convergence_result *r);
int nh_run_ensemble(const nh_study *st, nh_ensemble_result *r, char *err, size_t errlen);
void nh_ensemble_result_free(nh_ensemble_result *r);

/* The random stream of initial condition `index`: derived from (seed, index) only, so results do
 * not depend on the number of threads or on task order. */
uint64_t nh_stream_seed(uint64_t seed, uint64_t index);

/* Order fit over h (ascending or not) and errors: the finest `fit_points` points whose error is
 * finite and above `floor`. Returns 0, or -1 if fewer than 2 such points. */
int nh_fit_order(int nh, const double *h, const double *err, int fit_points, double floor,
                 double *order, double *stderr_, int *first, int *count);

/* Results file (studies/h5out.c): written to PATH.tmp-PID and renamed onto PATH when complete.
 * argv is recorded as provenance. Returns 0, or -1 with a message (PATH untouched). */
int nh_write_convergence(const char *path, const nh_study *st, const nh_convergence_result *r,
                         const char *command, char *err, size_t errlen);
int nh_write_ensemble(const char *path, const nh_study *st, const nh_ensemble_result *r,
                      const char *command, char *err, size_t errlen);

/* Progress on stderr for runs longer than a second (studies/progress.c). */
typedef struct {
  const char *label;
  long total;
  long done;
  double start, last_print;
  int printed;
} nh_progress;
void nh_progress_start(nh_progress *p, const char *label, long total);
void nh_progress_tick(nh_progress *p); /* thread-safe */
void nh_progress_end(nh_progress *p);

#endif
