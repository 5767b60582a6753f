/* Runs sampled along the way (studies/sampling.c): the one loop that trajectory and ensemble
 * studies share. Internal to studies/. */
#ifndef NH_SAMPLING_H
#define NH_SAMPLING_H

#include "studies/study.h"

/* The true solution along a run, advanced forward only: the exact solution when the system has
 * one for the run's initial state, else the rk8pd reference integrated from sample to sample. */
typedef struct {
  const nh_system *sys;
  nh_state x0, x;
  double tol;
  int exact;
  const char *kind; /* "exact" or "rk8pd" */
} nh_truth;
void nh_truth_start(nh_truth *tr, const nh_system *sys, const nh_state *x0, double tol);
/* The true state at time t ≥ the last time asked. Returns 0, or nh_reference_solve's failure. */
/* What a failure of the true solution (-1, NH_REFERENCE_NO_MEMORY) was, for messages. */
const char *nh_truth_failure(int rc);
int nh_truth_at(nh_truth *tr, double t, nh_state *out);

/* Sets up the layout of st's observables: widths, offsets, and for every method why it does not
 * define each observable. values (runs × nsamples rows) is allocated, NaN-filled. Returns 0, or -1
 * out of memory. */
int nh_samples_init(nh_samples *s, const nh_study *st, size_t runs, int nsamples);
void nh_samples_free(nh_samples *s);

/* One run of a method from x0: nsteps steps of size h, sampling every K steps. */
typedef struct {
  /* in */
  const nh_study *st;
  const nh_method *m;
  int method_index;  /* into st->methods, for the absence table */
  double h;
  long nsteps;
  int K;
  nh_state x0;
  double divergence; /* stop with NH_RUN_DIVERGED when |E − E0| > divergence · max(1, |E0|); 0: never */
  const nh_samples *layout; /* NULL: no observables */
  double *values;    /* [nsamples][layout->row] when layout is given */
  double *dE;        /* [nsamples] E − E0 at the samples, or NULL */
  /* out */
  int status;
  int reached;       /* samples written (the first is t = t0) */
  double max_abs_dE, max_residual;
  nh_cost cost;
  nh_state final;
  int error; /* what nh_sampled_run_go returned for it */
} nh_sampled_run;
/* Runs r; a failed run leaves NaN in the samples it did not reach. Returns 0, or -1 when the true
 * solution that an observable needs could not be computed, NH_REFERENCE_NO_MEMORY when there was
 * no memory for it (status then says the run failed). */
int nh_sampled_run_go(nh_sampled_run *r);
/* Runs r[0 … count − 1] (count ≤ NH_LANES), which differ only in x0, values and dE: in lanes
 * (integrators/evolve.h) when their method has them and nh_lanes_enabled(), else one by one; each
 * run's outcome is nh_sampled_run_go's on it, to the bit. Returns 0, or the first failure as
 * nh_sampled_run_go returns it. */
int nh_sampled_runs_go(nh_sampled_run *r, int count);
/* Whether studies step in lanes: not when NHBENCH_LANES is "off" (or 0, 1: one lane), which the
 * benchmarks and the tests use to compare the two paths. */
int nh_lanes_enabled(void);

#endif
