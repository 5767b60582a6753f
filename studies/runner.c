/* The study runner: expands a study into independent tasks and runs them with OpenMP (dynamic
 * schedule). Each task writes only its own slots and draws only from its own random stream, and
 * every statistic across tasks is computed afterwards in a fixed order: results are bit-identical
 * whatever the number of threads. */
#include <gsl/gsl_fit.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "studies/study.h"

static double max_abs_diff(int n, const double *a, const double *b) {
  double m = 0;
  for (int i = 0; i < n; i++) m = fmax(m, fabs(a[i] - b[i]));
  return m;
}

int nh_integrate(const nh_method *m, const nh_system *sys, nh_state *x, long nsteps, double h, nh_cost *cost,
                 double deadline, double *residual) {
  nh_state y;
  double t0 = x->t;
  if (residual) *residual = nh_constraint_residual(sys, x->q, x->v);
  for (long s = 0; s < nsteps; s++) {
    nh_step_status st = nh_method_step(m, sys, x, &y, h, cost);
    if (st != NH_STEP_OK) return st;
    *x = y;
    x->t = t0 + (double)(s + 1) * h; /* no accumulated round-off in t */
    if (residual) *residual = fmax(*residual, nh_constraint_residual(sys, x->q, x->v));
    if (deadline > 0 && (s & 63) == 63 && omp_get_wtime() > deadline) return NH_RUN_TIMED_OUT;
  }
  return NH_STEP_OK;
}

/* ---------------------------------------------------------------------------------------------- */
/* Convergence: per method and h, the error at T against the exact solution or the reference.     */

int nh_run_convergence(const nh_study *st, nh_convergence_result *r, char *err, size_t errlen) {
  const int nm = st->nmethods, nh = st->nh, n = st->sys.n;
  const size_t cells = (size_t)nm * (size_t)nh;
  memset(r, 0, sizeof *r);
  r->err = calloc(cells, sizeof *r->err);
  r->err_q = calloc(cells, sizeof *r->err_q);
  r->err_v = calloc(cells, sizeof *r->err_v);
  r->residual = calloc(cells, sizeof *r->residual);
  r->status = calloc(cells, sizeof *r->status);
  r->cost = calloc(cells, sizeof *r->cost);
  r->wall_time = calloc(cells, sizeof *r->wall_time);
  r->order = calloc((size_t)nm, sizeof *r->order);
  r->order_stderr = calloc((size_t)nm, sizeof *r->order_stderr);
  r->fit_first = calloc((size_t)nm, sizeof *r->fit_first);
  r->fit_count = calloc((size_t)nm, sizeof *r->fit_count);
  r->order_ok = calloc((size_t)nm, sizeof *r->order_ok);
  r->z = calloc(cells, sizeof *r->z);

  /* The exact solution when the system has one for this state and these parameters. */
  if (st->sys.type->exact && st->sys.type->exact(st->sys.p, &st->x0, st->x0.t + st->T, &r->reference) == 0) {
    r->reference_kind = "exact";
  } else {
    if (nh_reference_solve(&st->sys, &st->x0, st->x0.t + st->T, st->reference_tol, &r->reference)) {
      snprintf(err, errlen, "%s: the reference solver (rk8pd) failed", st->spec_file);
      return -1;
    }
    r->reference_kind = "rk8pd";
  }

  nh_progress prog;
  nh_progress_start(&prog, "convergence", (long)cells);
#pragma omp parallel for schedule(dynamic)
  for (long task = 0; task < (long)cells; task++) {
    const int mi = (int)(task / nh), hi = (int)(task % nh);
    const double h = st->h[hi];
    nh_state x = st->x0;
    nh_cost cost = {0};
    double t0 = omp_get_wtime(), residual = NAN;
    /* Task-local accumulators: per-step writes to shared arrays would false-share cache lines. */
    int status = nh_method_init(st->methods[mi], &st->sys, &x, h, &cost);
    if (status == NH_STEP_OK)
      status = nh_integrate(st->methods[mi], &st->sys, &x, lround(st->T / h), h, &cost, 0, &residual);
    r->wall_time[task] = omp_get_wtime() - t0;
    r->status[task] = status;
    r->cost[task] = cost;
    r->residual[task] = residual;
    r->z[task] = x.z;
    if (status == NH_STEP_OK) {
      r->err_q[task] = max_abs_diff(n, x.q, r->reference.q);
      r->err_v[task] = max_abs_diff(n, x.v, r->reference.v);
      r->err[task] = fmax(r->err_q[task], r->err_v[task]);
    } else {
      r->err_q[task] = r->err_v[task] = r->err[task] = NAN;
    }
    nh_progress_tick(&prog);
  }
  nh_progress_end(&prog);

  for (int mi = 0; mi < nm; mi++) {
    nh_fit_order(nh, st->h, r->err + (size_t)mi * nh, st->fit_points, st->error_floor, &r->order[mi],
                 &r->order_stderr[mi], &r->fit_first[mi], &r->fit_count[mi]);
    r->order_ok[mi] = fabs(r->order[mi] - st->order_expected[mi]) <= st->order_tolerance;
  }
  return 0;
}

void nh_convergence_result_free(nh_convergence_result *r) {
  free(r->err), free(r->err_q), free(r->err_v), free(r->residual), free(r->status), free(r->cost);
  free(r->wall_time), free(r->order), free(r->order_stderr), free(r->fit_first), free(r->fit_count);
  free(r->order_ok), free(r->z);
  memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------------------------------------- */
/* Ensemble: N random initial conditions on D at energy E, every method from each.                */

static int sample_initial_conditions(const nh_study *st, nh_ensemble_result *r, char *err, size_t errlen) {
  const int n = st->sys.n;
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  if (!rng) return -1;
  for (int ic = 0; ic < st->count; ic++) {
    nh_state x;
    /* The stream of IC `ic` depends on (seed, ic) only. */
    gsl_rng_set(rng, (unsigned long)nh_stream_seed(st->seed, (uint64_t)ic));
    int rc = nh_sample_on_D(&st->sys, st->energy, rng, &x);
    if (rc) {
      if (rc == -2)
        snprintf(err, errlen, "%s: the random sampler cannot draw states of %s (affine or holonomic constraints)",
                 st->spec_file, st->sys.type->name);
      else
        snprintf(err, errlen, "%s: no initial condition of %s with energy %g found in the sample box",
                 st->spec_file, st->sys.type->name, st->energy);
      gsl_rng_free(rng);
      return -1;
    }
    memcpy(r->q0 + (size_t)ic * n, x.q, sizeof(double) * (size_t)n);
    memcpy(r->v0 + (size_t)ic * n, x.v, sizeof(double) * (size_t)n);
    r->E0[ic] = nh_energy(&st->sys, x.q, x.v);
  }
  gsl_rng_free(rng);
  return 0;
}

/* One trajectory: dE sampled every K steps into series[nsamples]. */
static void run_trajectory(const nh_study *st, const nh_method *m, const double *t, const double *q0,
                           const double *v0, double E0, double *series, double *max_abs, double *slope, double *residual,
                           int *status, nh_cost *cost) {
  const int n = st->sys.n;
  nh_state x = {0};
  memcpy(x.q, q0, sizeof(double) * (size_t)n);
  memcpy(x.v, v0, sizeof(double) * (size_t)n);
  /* Task-local accumulators: per-step writes to shared arrays would false-share cache lines. */
  nh_cost c = {0};
  int stat = nh_method_init(m, &st->sys, &x, st->step, &c);
  double max_res = 0, max_dE = 0;
  series[0] = 0;
  int s = 1;
  for (; s < st->nsamples && stat == NH_STEP_OK; s++) {
    double res;
    stat = nh_integrate(m, &st->sys, &x, st->sample_every, st->step, &c, 0, &res);
    if (stat != NH_STEP_OK) break;
    max_res = fmax(max_res, res);
    series[s] = nh_energy(&st->sys, x.q, x.v) - E0;
    max_dE = fmax(max_dE, fabs(series[s]));
    /* A blown-up trajectory may stay finite for long; stop it and say so. */
    if (fabs(series[s]) > st->divergence * fmax(1, fabs(E0))) {
      stat = NH_RUN_DIVERGED;
      s++;
      break;
    }
  }
  *status = stat;
  *residual = max_res;
  *max_abs = max_dE;
  *cost = c;
  for (int rest = s; rest < st->nsamples; rest++) series[rest] = NAN;
  /* Drift: least-squares slope of dE against t over the samples reached. */
  double c0, cov00, cov01, cov11, sumsq;
  *slope = NAN;
  if (s >= 2) gsl_fit_linear(t, 1, series, 1, (size_t)s, &c0, slope, &cov00, &cov01, &cov11, &sumsq);
}

int nh_run_ensemble(const nh_study *st, nh_ensemble_result *r, char *err, size_t errlen) {
  const int nm = st->nmethods, nic = st->count, ns = st->nsamples, n = st->sys.n;
  const size_t traj = (size_t)nm * (size_t)nic;
  memset(r, 0, sizeof *r);
  r->t = malloc(sizeof(double) * (size_t)ns);
  r->q0 = calloc((size_t)nic * n, sizeof(double));
  r->v0 = calloc((size_t)nic * n, sizeof(double));
  r->E0 = calloc((size_t)nic, sizeof(double));
  r->dE = malloc(sizeof(double) * traj * (size_t)ns);
  r->max_abs_dE = calloc(traj, sizeof(double));
  r->drift_slope = calloc(traj, sizeof(double));
  r->max_residual = calloc(traj, sizeof(double));
  r->status = calloc(traj, sizeof(int));
  r->dE_mean = calloc((size_t)nm * ns, sizeof(double));
  r->dE_var = calloc((size_t)nm * ns, sizeof(double));
  r->dE_count = calloc((size_t)nm * ns, sizeof(int));
  r->cost = calloc((size_t)nm, sizeof(nh_cost));
  r->wall_time = calloc((size_t)nm, sizeof(double));
  nh_cost *task_cost = calloc(traj, sizeof(nh_cost));
  double *task_time = calloc(traj, sizeof(double));
  if (!r->t || !r->dE || !task_cost || !task_time) {
    snprintf(err, errlen, "%s: out of memory for %zu trajectories of %d samples", st->spec_file, traj, ns);
    free(task_cost), free(task_time);
    return -1;
  }
  for (int s = 0; s < ns; s++) r->t[s] = (double)s * st->sample_every * st->step;
  if (sample_initial_conditions(st, r, err, errlen)) {
    free(task_cost), free(task_time);
    return -1;
  }

  nh_progress prog;
  nh_progress_start(&prog, "ensemble", (long)traj);
#pragma omp parallel for schedule(dynamic)
  for (long task = 0; task < (long)traj; task++) {
    const int mi = (int)(task / nic), ic = (int)(task % nic);
    double t0 = omp_get_wtime();
    run_trajectory(st, st->methods[mi], r->t, r->q0 + (size_t)ic * n, r->v0 + (size_t)ic * n, r->E0[ic],
                   r->dE + (size_t)task * ns, &r->max_abs_dE[task], &r->drift_slope[task],
                   &r->max_residual[task], &r->status[task], &task_cost[task]);
    task_time[task] = omp_get_wtime() - t0;
    nh_progress_tick(&prog);
  }
  nh_progress_end(&prog);

  /* Statistics across the ensemble, in a fixed order (spec/newmark.md §6 A11). */
  for (int mi = 0; mi < nm; mi++) {
    for (int ic = 0; ic < nic; ic++) {
      const nh_cost *c = &task_cost[(size_t)mi * nic + ic];
      r->cost[mi].steps += c->steps;
      r->cost[mi].rhs_evals += c->rhs_evals;
      r->cost[mi].jacobian_evals += c->jacobian_evals;
      r->cost[mi].linear_solves += c->linear_solves;
      r->cost[mi].newton_iterations += c->newton_iterations;
      r->wall_time[mi] += task_time[(size_t)mi * nic + ic];
    }
    for (int s = 0; s < ns; s++) {
      double sum = 0, sum2 = 0;
      int count = 0;
      for (int ic = 0; ic < nic; ic++) {
        double d = r->dE[((size_t)mi * nic + ic) * ns + s];
        if (isfinite(d)) sum += d, count++;
      }
      double mean = count ? sum / count : NAN;
      for (int ic = 0; ic < nic; ic++) {
        double d = r->dE[((size_t)mi * nic + ic) * ns + s];
        if (isfinite(d)) sum2 += (d - mean) * (d - mean);
      }
      r->dE_mean[(size_t)mi * ns + s] = mean;
      r->dE_var[(size_t)mi * ns + s] = count > 1 ? sum2 / (count - 1) : NAN;
      r->dE_count[(size_t)mi * ns + s] = count;
    }
  }
  free(task_cost);
  free(task_time);
  return 0;
}

void nh_ensemble_result_free(nh_ensemble_result *r) {
  free(r->t), free(r->q0), free(r->v0), free(r->E0), free(r->dE), free(r->max_abs_dE);
  free(r->drift_slope), free(r->max_residual), free(r->status), free(r->dE_mean), free(r->dE_var);
  free(r->dE_count), free(r->cost), free(r->wall_time);
  memset(r, 0, sizeof *r);
}
