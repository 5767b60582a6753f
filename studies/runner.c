/* The study runner: expands a study into independent tasks and runs them with OpenMP (dynamic
 * schedule). Each task writes only its own slots and draws only from its own random stream, and
 * every statistic across tasks is computed afterwards in a fixed order: results are bit-identical
 * whatever the number of threads. */
#include <errno.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "studies/checkpoint.h"
#include "studies/sampling.h"

/* ---------------------------------------------------------------------------------------------- */
/* Convergence: per method and h, the error at T against the exact solution or the reference.     */

/* The largest |entry| of the method's own discrete constraint for the step x → y; NaN if none. */
static double discrete_residual(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                                double h) {
  double d[NH_MAX_K];
  return nh_method_own_discrete_constraint(m, sys, x, y, h, d) == 0 ? nh_norm_max(sys->k, d) : NAN;
}

/* max_a |λ_N − λ(t*)| of the run `task`, t* the time the method's last multiplier approximates,
 * into r->lambda_err (NaN if none or the true solution fails); NH_REFERENCE_NO_MEMORY if it ran
 * out of memory. */
static int multiplier_error(const nh_study *st, nh_convergence_result *r, long task, double tol) {
  const nh_system *sys = &st->sys;
  const nh_method *m = st->methods[task / st->nh];
  const double h = st->h[task % st->nh];
  const long N = lround(st->T / h); /* the step times as the run had them */
  const double t = nh_method_multiplier_time(m, st->x0.t + (double)(N - 1) * h, st->x0.t + (double)N * h);
  const double *lam_N = r->final_lambda + (size_t)task * NH_MAX_K;
  r->lambda_err[task] = NAN;
  if (isnan(t) || sys->k == 0 || isnan(lam_N[0])) return 0;
  nh_state ref;
  double lam[NH_MAX_K], d[NH_MAX_K];
  const int rc = nh_true_solution(sys, &st->x0, t, tol, &ref, NULL);
  if (rc < 0 || nh_multiplier(sys, t, ref.q, ref.v, lam) != 0) return rc == NH_REFERENCE_NO_MEMORY ? rc : 0;
  for (int a = 0; a < sys->k; a++) d[a] = lam_N[a] - lam[a];
  r->lambda_err[task] = nh_norm_max(sys->k, d);
  return 0;
}

/* The errors at T of the run `task` against r->reference, from its final state. */
static void state_errors(const nh_study *st, nh_convergence_result *r, long task) {
  const int n = st->sys.n;
  const double *fin = r->final_state + (size_t)task * 2 * n;
  double *d = r->err_coord + (size_t)task * 2 * n;
  nh_study_reference_difference(st, fin, &r->reference, d);
  if (r->status[task] != NH_STEP_OK)
    for (int i = 0; i < 2 * n; i++) d[i] = NAN;
  r->err_max[task] = nh_norm_max(2 * n, d);
  r->err_2[task] = nh_norm_2(2 * n, d);
  r->err[task] = nh_state_norm(st->norm, 2 * n, d);
  r->err_q[task] = nh_state_norm(st->norm, n, d);
  r->err_v[task] = nh_state_norm(st->norm, n, d + n);
}

/* What a convergence run keeps of its steps: the largest constraint residual and the largest
 * entry of the method's own discrete constraint over every step (task-local: per-step writes to
 * shared arrays would false-share cache lines). */
typedef struct {
  double residual, discrete;
} step_maxima;

static int convergence_step(void *ctx, const nh_evolve *e) {
  step_maxima *mx = ctx;
  nh_evolve_track_residual(&mx->residual, e);
  mx->discrete = fmax(mx->discrete, discrete_residual(e->m, e->sys, e->prev, e->x, e->h)); /* fmax drops the NaN */
  return NH_STEP_OK;
}

/* One run to T. */
static int convergence_task(void *ctx, long task) {
  const nh_study *st = ((nh_study_tasks *)ctx)->st;
  nh_convergence_result *r = ((nh_study_tasks *)ctx)->result;
  const nh_system *sys = &st->sys;
  const int nh = st->nh, n = sys->n, mi = (int)(task / nh), hi = (int)(task % nh);
  const long nsteps = lround(st->T / st->h[hi]);
  nh_evolve e;
  nh_evolve_start(&e, st->methods[mi], sys, &st->x0, st->h[hi], 1);
  step_maxima mx = {nh_constraint_residual(sys, st->x0.q, st->x0.v), NAN};
  const double t0 = omp_get_wtime();
  int status = nh_evolve_init(&e);
  if (status == NH_STEP_OK) status = nh_evolve_steps(&e, nsteps, convergence_step, &mx);
  const nh_state *x = e.x;
  r->wall_time[task] = omp_get_wtime() - t0;
  r->status[task] = status;
  r->cost[task] = e.cost;
  r->residual[task] = mx.residual;
  r->discrete_residual[task] = mx.discrete;
  r->z[task] = x->z;
  double *fin = r->final_state + (size_t)task * 2 * n, *lam = r->final_lambda + (size_t)task * NH_MAX_K;
  for (int i = 0; i < n; i++) fin[i] = x->q[i], fin[n + i] = x->v[i];
  for (int a = 0; a < NH_MAX_K; a++) lam[a] = status == NH_STEP_OK && nsteps > 0 && a < sys->k ? x->lambda[a] : NAN;
  return 0;
}

/* The smallest error at T of a run that ended (NaN if none). */
static double smallest_error(long cells, const double *err) {
  double e = NAN;
  for (long c = 0; c < cells; c++)
    if (err[c] > 0 && isfinite(err[c])) e = fmin(e, err[c]);
  return e;
}

/* After the runs: the reference tightened to the smallest error (reference_tol = "auto"), the
 * errors against it, the multiplier errors, and the order fits above each h's error floor. */
static int convergence_measure(const nh_study *st, nh_convergence_result *r, char *err, size_t errlen) {
  const int nm = st->nmethods, nh = st->nh;
  const long cells = (long)nm * nh;
  for (long c = 0; c < cells; c++) state_errors(st, r, c);
  const double tol = r->reference.tol;
  int rc = nh_study_reference_refine(st, &st->x0, st->x0.t + st->T, smallest_error(cells, r->err), &r->reference);
  if (rc < 0) return snprintf(err, errlen, "%s: %s", st->spec_file, nh_truth_failure(rc)), -1;
  if (r->reference.tol != tol)
    for (long c = 0; c < cells; c++) state_errors(st, r, c);
  int failed = 0;
#pragma omp parallel for schedule(dynamic) reduction(| : failed)
  for (long c = 0; c < cells; c++) failed |= multiplier_error(st, r, c, r->reference.tol) < 0;
  if (failed) return snprintf(err, errlen, "%s: out of memory for the reference", st->spec_file), -1;
  /* Round-off adds up over every base step, a composition's sub-steps included (cost.steps). */
  const double size = nh_study_reference_norm(st, &r->reference.x);
  for (long c = 0; c < cells; c++)
    r->fit_floor[c] = nh_error_floor(st, r->reference.error, size, (double)r->cost[c].steps);
  for (int mi = 0; mi < nm; mi++) {
    if (nh_fit_order_floors(nh, st->h, r->err + (size_t)mi * nh, st->fit_points, r->fit_floor + (size_t)mi * nh,
                            &r->order[mi],
                            &r->order_stderr[mi], &r->fit_first[mi], &r->fit_count[mi]) == -2)
      return snprintf(err, errlen, "%s: out of memory for the order fit", st->spec_file), -1;
    r->order_ok[mi] = fabs(r->order[mi] - st->order_expected[mi]) <= st->order_tolerance;
  }
  return 0;
}

int nh_run_convergence(const nh_study *st, nh_convergence_result *r, char *err, size_t errlen) {
  const int nm = st->nmethods, nh = st->nh, n = st->sys.n;
  const size_t cells = (size_t)nm * (size_t)nh;
  memset(r, 0, sizeof *r);
  double **per_cell[] = {&r->err, &r->err_q, &r->err_v, &r->err_max, &r->err_2, &r->residual, &r->wall_time,
                         &r->z, &r->lambda_err, &r->discrete_residual};
  for (size_t i = 0; i < sizeof per_cell / sizeof *per_cell; i++) *per_cell[i] = calloc(cells, sizeof(double));
  const size_t n2 = 2 * (size_t)n; /* a state's (q, v) */
  r->err_coord = calloc(cells * n2, sizeof(double));
  r->final_state = calloc(cells * n2, sizeof(double));
  r->final_lambda = calloc(cells * NH_MAX_K, sizeof(double));
  r->fit_floor = calloc(cells, sizeof(double));
  r->status = calloc(cells, sizeof *r->status);
  r->cost = calloc(cells, sizeof *r->cost);
  r->order = calloc((size_t)nm, sizeof *r->order);
  r->order_stderr = calloc((size_t)nm, sizeof *r->order_stderr);
  r->fit_first = calloc((size_t)nm, sizeof *r->fit_first);
  r->fit_count = calloc((size_t)nm, sizeof *r->fit_count);
  r->order_ok = calloc((size_t)nm, sizeof *r->order_ok);
  int ok = r->err_coord && r->final_state && r->final_lambda && r->fit_floor && r->status && r->cost && r->order &&
           r->order_stderr && r->fit_first && r->fit_count && r->order_ok;
  for (size_t i = 0; i < sizeof per_cell / sizeof *per_cell; i++) ok = ok && *per_cell[i];
  if (!ok) { /* the caller frees what was allocated (nh_convergence_result_free) */
    snprintf(err, errlen, "%s: out of memory for %zu convergence runs", st->spec_file, cells);
    return -1;
  }

  const int truth = nh_study_reference_at(st, &st->x0, st->x0.t + st->T, &r->reference);
  if (truth < 0) return snprintf(err, errlen, "%s: %s", st->spec_file, nh_truth_failure(truth)), -1;

  nh_study_tasks ctx = {st, r};
  const nh_task_slot slots[] = {{r->residual, NH_SLOT_DOUBLE, 1},   {r->wall_time, NH_SLOT_DOUBLE, 1},
                                {r->z, NH_SLOT_DOUBLE, 1},          {r->discrete_residual, NH_SLOT_DOUBLE, 1},
                                {r->final_state, NH_SLOT_DOUBLE, n2}, {r->final_lambda, NH_SLOT_DOUBLE, NH_MAX_K},
                                {r->status, NH_SLOT_INT, 1},        {r->cost, NH_SLOT_COST, 1}};
  if (nh_journaled_tasks(st, "convergence", (long)cells, convergence_task, &ctx, slots, sizeof slots / sizeof *slots,
                         err, errlen) < 0)
    return -1;
  return convergence_measure(st, r, err, errlen);
}

void nh_convergence_result_free(nh_convergence_result *r) {
  free(r->err), free(r->err_q), free(r->err_v), free(r->residual), free(r->status), free(r->cost);
  free(r->wall_time), free(r->order), free(r->order_stderr), free(r->fit_first), free(r->fit_count);
  free(r->order_ok), free(r->z), free(r->err_max), free(r->err_2), free(r->err_coord), free(r->final_state);
  free(r->lambda_err), free(r->discrete_residual), free(r->final_lambda), free(r->fit_floor);
  memset(r, 0, sizeof *r);
}

/* ---------------------------------------------------------------------------------------------- */
/* Ensemble: N random initial conditions on D at energy E, every method from each.                */

static int sample_initial_conditions(const nh_study *st, nh_ensemble_result *r, char *err, size_t errlen) {
  const int n = st->sys.n;
  nh_state *x = st->random_ics ? malloc(sizeof *x * (size_t)st->count) : (nh_state *)st->ics;
  int rc = !x ? NH_DRAW_NO_MEMORY : st->random_ics ? nh_draw_states(&st->sys, st->count, st->energy, st->seed, x) : 0;
  /* A system out of the sampler's reach (-2) is refused when the spec loads (studies/spec.c); a
   * state other than the first, drawn there too, may still find none in the box (-1). */
  if (rc == NH_DRAW_NO_MEMORY)
    snprintf(err, errlen, "%s: out of memory for %d initial conditions", st->spec_file, st->count);
  else if (rc < 0)
    snprintf(err, errlen, "%s: no initial condition of %s with energy %g found in the sample box", st->spec_file,
             st->sys.type->name, st->energy);
  for (int ic = 0; rc == 0 && ic < st->count; ic++) {
    memcpy(r->q0 + (size_t)ic * n, x[ic].q, sizeof(double) * (size_t)n);
    memcpy(r->v0 + (size_t)ic * n, x[ic].v, sizeof(double) * (size_t)n);
    r->E0[ic] = nh_energy(&st->sys, x[ic].q, x[ic].v);
  }
  if (st->random_ics) free(x);
  return rc < 0 ? -1 : 0;
}

/* One trajectory: dE (and the observables) sampled every K steps, into dE (nsamples) and values
 * (nsamples × the samples' row), which are r's own rows or a streamed run's buffers. */
static int run_trajectory(const nh_study *st, nh_ensemble_result *r, long task, double *dE, double *values,
                          nh_cost *cost) {
  const int nic = st->count, n = st->sys.n, mi = (int)(task / nic), ic = (int)(task % nic);
  nh_sampled_run run = {.st = st, .m = st->methods[mi], .method_index = mi, .h = st->step,
                        .nsteps = st->nsteps, .K = st->sample_every, .divergence = st->divergence, .dE = dE};
  run.x0 = st->random_ics ? (nh_state){0} : st->ics[ic];
  memcpy(run.x0.q, r->q0 + (size_t)ic * n, sizeof(double) * (size_t)n);
  memcpy(run.x0.v, r->v0 + (size_t)ic * n, sizeof(double) * (size_t)n);
  if (st->nobs) {
    run.layout = &r->samples;
    run.values = values;
  }
  int rc = nh_sampled_run_go(&run);
  r->status[task] = run.status;
  r->max_residual[task] = run.max_residual;
  r->max_abs_dE[task] = run.max_abs_dE;
  *cost = run.cost;
  /* Drift: least-squares slope of dE against t over the samples reached. */
  r->drift_slope[task] = nh_drift_slope(run.reached, r->t, run.dE);
  return rc; /* 0, or nh_sampled_run_go's failure */
}

/* ---- checkpointing (studies/checkpoint.h): one record per finished trajectory ---------------- */

/* A record: the outcome (1: the run went to its end; 0: it ran out of memory and its record is
 * dropped, the study fails), status, max|dE|, drift slope, max residual, wall time, the six cost
 * counters (exact as doubles below 2^53), then the trajectory's dE row and its observables' rows. */
enum { REC_OUTCOME, REC_STATUS, REC_MAX_ABS_DE, REC_DRIFT, REC_RESIDUAL, REC_TIME, REC_COST, REC_ROWS = REC_COST + 6 };

typedef struct {
  const nh_study *st;
  nh_ensemble_result *r;
  nh_cost *task_cost;
  double *task_time;
  char *done; /* [task]: replayed from the journal */
  int journal_failed;
} journal;

static size_t record_length(const journal *j) {
  return REC_ROWS + (size_t)j->st->nsamples * (1 + (size_t)j->r->samples.row);
}

static void cost_fields(nh_cost *c, unsigned long long *f[6]) {
  f[0] = &c->steps, f[1] = &c->rhs_evals, f[2] = &c->jacobian_evals, f[3] = &c->linear_solves,
  f[4] = &c->newton_iterations, f[5] = &c->constraint_evals;
}

/* The task's numbers (its rows are already in x, where the run wrote them) into its record x. */
static void pack_task(const journal *j, long task, double *x) {
  const nh_ensemble_result *r = j->r;
  unsigned long long *c[6];
  cost_fields(&j->task_cost[task], c);
  x[REC_STATUS] = r->status[task], x[REC_MAX_ABS_DE] = r->max_abs_dE[task], x[REC_DRIFT] = r->drift_slope[task];
  x[REC_RESIDUAL] = r->max_residual[task], x[REC_TIME] = j->task_time[task];
  for (int i = 0; i < 6; i++) x[REC_COST + i] = (double)*c[i];
}

/* A record into the result: the task's numbers, and its rows when they are kept in memory. */
static void unpack_task(journal *j, long task, const double *x) {
  nh_ensemble_result *r = j->r;
  const size_t ns = (size_t)j->st->nsamples, row = (size_t)r->samples.row;
  unsigned long long *c[6];
  cost_fields(&j->task_cost[task], c);
  r->status[task] = (int)x[REC_STATUS], r->max_abs_dE[task] = x[REC_MAX_ABS_DE], r->drift_slope[task] = x[REC_DRIFT];
  r->max_residual[task] = x[REC_RESIDUAL], j->task_time[task] = x[REC_TIME];
  for (int i = 0; i < 6; i++) *c[i] = (unsigned long long)x[REC_COST + i];
  if (!r->dE) return; /* streamed: the rows stay in the journal (samples.values holds none) */
  memcpy(r->dE + (size_t)task * ns, x + REC_ROWS, ns * sizeof *x);
  if (row) memcpy(r->samples.values + (size_t)task * ns * row, x + REC_ROWS + ns, ns * row * sizeof *x);
}

/* A replayed record of the journal (records of another shape or task range are ignored). */
static void replay_task(void *vj, long task, const double *x, size_t n) {
  journal *j = vj;
  if (task < 0 || task >= (long)j->st->nmethods * j->st->count || n != record_length(j) || x[REC_OUTCOME] != 1) return;
  unpack_task(j, task, x);
  j->done[task] = 1;
}

/* A streamed run's observables block, read back from its journal (ctx: the result). */
static int journal_samples(const void *ctx, long long run, double *out) {
  const nh_ensemble_result *r = ctx;
  const size_t ns = r->journal_obs - r->journal_dE; /* the dE row before the block has ns values */
  return nh_checkpoint_read(r->journal, (long)run, r->journal_obs, out, ns * (size_t)r->samples.row);
}

int nh_ensemble_dE_row(const nh_study *st, const nh_ensemble_result *r, long task, double *row) {
  const size_t ns = (size_t)st->nsamples;
  if (r->dE) return memcpy(row, r->dE + (size_t)task * ns, ns * sizeof *row), 0;
  return r->journal ? nh_checkpoint_read(r->journal, task, r->journal_dE, row, ns) : -1; /* -1: left unset */
}

/* The statistics across the ICs of method mi at every sample (spec/newmark.md §6 A11), from its
 * rows in memory or in the journal, into r's arrays, or (streamed) appended to the journal as
 * record nmethods · count + mi. rows: scratch for nic × ns values; stats for NH_STATS × ns.
 * 0, or -1 with the reason in err. */
static int method_statistics(const nh_study *st, nh_ensemble_result *r, int mi, double *rows, double *stats, char *err,
                             size_t errlen) {
  const int nic = st->count, ns = st->nsamples;
  int *count = malloc(sizeof(int) * (size_t)ns);
  const char *why = count ? NULL : "out of memory";
  for (int ic = 0; !why && ic < nic; ic++)
    if (nh_ensemble_dE_row(st, r, (long)mi * nic + ic, rows + (size_t)ic * ns) < 0)
      why = "cannot read its trajectories back";
  double *row[NH_STATS];
  for (int k = 0; k < NH_STATS; k++) row[k] = stats + (size_t)k * ns;
  if (!why) {
    nh_column_stats(nic, ns, rows, row[NH_STAT_MEAN], row[NH_STAT_VAR], count);
    if (nh_column_quantile(nic, ns, rows, 0.1, row[NH_STAT_Q10]) != 0 ||
        nh_column_quantile(nic, ns, rows, 0.5, row[NH_STAT_Q50]) != 0 ||
        nh_column_quantile(nic, ns, rows, 0.9, row[NH_STAT_Q90]) != 0)
      why = "out of memory";
    for (int j = 0; j < ns; j++) row[NH_STAT_COUNT][j] = count[j];
  }
  if (!why && r->journal) {
    if (nh_checkpoint_append(r->journal, (long)st->nmethods * nic + mi, stats, (size_t)NH_STATS * ns) < 0)
      why = errno == ENOMEM ? "out of memory" : "cannot append them to the journal";
    r->last_var[mi] = stats[(size_t)NH_STAT_VAR * ns + ns - 1], r->last_count[mi] = count[ns - 1];
  } else if (!why) {
    const size_t at = (size_t)mi * ns;
    double *const dst[NH_STAT_COUNT] = {r->dE_mean, r->dE_var, r->dE_q10, r->dE_q50, r->dE_q90};
    for (int k = 0; k < NH_STAT_COUNT; k++) memcpy(dst[k] + at, stats + (size_t)k * ns, sizeof(double) * (size_t)ns);
    memcpy(r->dE_count + at, count, sizeof(int) * (size_t)ns);
  }
  free(count);
  if (why) snprintf(err, errlen, "%s: the statistics of method %d: %s", st->spec_file, mi, why);
  return why ? -1 : 0;
}

int nh_ensemble_stat_row(const nh_study *st, const nh_ensemble_result *r, int m, int which, double *row) {
  const size_t ns = (size_t)st->nsamples;
  if (r->journal && !r->dE_mean)
    return nh_checkpoint_read(r->journal, (long)st->nmethods * st->count + m, (size_t)which * ns, row, ns);
  const double *const src[NH_STAT_COUNT] = {r->dE_mean, r->dE_var, r->dE_q10, r->dE_q50, r->dE_q90};
  if (which == NH_STAT_COUNT ? !r->dE_count : !src[which]) return -1; /* a result field left unset */
  for (size_t j = 0; j < ns; j++)
    row[j] = which == NH_STAT_COUNT ? r->dE_count[(size_t)m * ns + j] : src[which][(size_t)m * ns + j];
  return 0;
}

/* Trajectory `task` (nh_task_set.run): its rows straight into its record, then its numbers. */
static void run_task(void *vj, long task, double *rec) {
  journal *j = vj;
  const size_t ns = (size_t)j->st->nsamples;
  double t0 = omp_get_wtime();
  double *values = j->r->samples.row ? rec + REC_ROWS + ns : NULL;
  const int rc = run_trajectory(j->st, j->r, task, rec + REC_ROWS, values, &j->task_cost[task]);
  j->task_time[task] = omp_get_wtime() - t0;
  pack_task(j, task, rec);
  rec[REC_OUTCOME] = rc != NH_REFERENCE_NO_MEMORY;
}

/* A finished trajectory's record (nh_task_set.take): into the result, and into the journal. A
 * streamed run whose journal cannot be written has lost rows it cannot write: -1, a failed run;
 * so has a run that ran out of memory. */
/* remote is not read: a local record carries the same numbers as the slots its run filled. */
static int take_task(void *vj, long task, const double *rec, int remote NH_UNUSED) {
  journal *j = vj;
  if (rec[REC_OUTCOME] != 1) return -1;
  unpack_task(j, task, rec);
  if (!j->r->journal || nh_checkpoint_append(j->r->journal, task, rec, record_length(j)) == 0) return 0;
  if (!j->journal_failed)
    fprintf(stderr, "nhbench: cannot append to %s: %s\n", j->st->checkpoint, strerror(errno));
  j->journal_failed = 1;
  return j->r->dE ? 0 : -1;
}

static int method_of_task(void *vj, long task) { return (int)(task / ((journal *)vj)->st->count); }

/* Runs every trajectory not in the journal yet (nh_run_tasks: threads, or ranks and threads). */
static int run_trajectories(const nh_study *st, journal *jr, long resumed) {
  const int nm = st->nmethods, nic = st->count;
  const size_t traj = (size_t)nm * (size_t)nic;
  nh_progress prog;
  nh_progress_start(&prog, "ensemble", (long)traj - resumed);
  /* Kinds of task: the methods (a grid point that fails at once says nothing of another's cost). */
  const nh_task_set ts = {(long)traj, jr->done, record_length(jr), run_task, take_task, method_of_task, nm, jr};
  const int rc = nh_run_tasks(&ts, &prog);
  nh_progress_end(&prog);
  return rc;
}

int nh_run_ensemble(const nh_study *st, nh_ensemble_result *r, char *err, size_t errlen) {
  const int nm = st->nmethods, nic = st->count, ns = st->nsamples, n = st->sys.n;
  const size_t traj = (size_t)nm * (size_t)nic;
  /* With a journal the rows stream through it; without one they are kept in memory. An MPI
   * worker rank keeps none: its records go to rank 0. */
  const int stream = st->checkpoint != NULL || nh_study_rank() != 0;
  memset(r, 0, sizeof *r);
  r->t = malloc(sizeof(double) * (size_t)ns);
  r->q0 = calloc((size_t)nic * n, sizeof(double));
  r->v0 = calloc((size_t)nic * n, sizeof(double));
  r->E0 = calloc((size_t)nic, sizeof(double));
  r->dE = stream ? NULL : malloc(sizeof(double) * traj * (size_t)ns);
  r->max_abs_dE = calloc(traj, sizeof(double));
  r->drift_slope = calloc(traj, sizeof(double));
  r->max_residual = calloc(traj, sizeof(double));
  r->status = calloc(traj, sizeof(int));
  const size_t stats = (size_t)nm * ns; /* in memory unless streamed: then its journal keeps them */
  r->dE_mean = stream ? NULL : calloc(stats, sizeof(double));
  r->dE_var = stream ? NULL : calloc(stats, sizeof(double));
  r->dE_q10 = stream ? NULL : calloc(stats, sizeof(double));
  r->dE_q50 = stream ? NULL : calloc(stats, sizeof(double));
  r->dE_q90 = stream ? NULL : calloc(stats, sizeof(double));
  r->dE_count = stream ? NULL : calloc(stats, sizeof(int));
  r->last_var = stream ? calloc((size_t)nm, sizeof(double)) : NULL;
  r->last_count = stream ? calloc((size_t)nm, sizeof(int)) : NULL;
  r->cost = calloc((size_t)nm, sizeof(nh_cost));
  r->wall_time = calloc((size_t)nm, sizeof(double));
  journal jr = {st, r, calloc(traj, sizeof(nh_cost)), calloc(traj, sizeof(double)), calloc(traj, 1), 0};
  double *rows = malloc(sizeof(double) * (size_t)nic * (size_t)ns);
  double *scratch = malloc(sizeof(double) * NH_STATS * (size_t)ns);
  int rc = -1;
  const int stats_ok = stream ? r->last_var && r->last_count
                              : r->dE_mean && r->dE_var && r->dE_q10 && r->dE_q50 && r->dE_q90 && r->dE_count;
  if (!r->t || !r->q0 || !r->v0 || !r->E0 || (!stream && !r->dE) || !r->max_abs_dE || !r->drift_slope ||
      !r->max_residual || !r->status || !r->cost || !r->wall_time || !stats_ok || !jr.task_cost || !jr.task_time ||
      !jr.done || !rows || !scratch || nh_samples_init(&r->samples, st, stream ? 0 : traj, ns) != 0) {
    snprintf(err, errlen, "%s: out of memory for %zu trajectories of %d samples", st->spec_file, traj, ns);
    goto done;
  }
  for (int s = 0; s < ns; s++) r->t[s] = (double)s * st->sample_every * st->step;
  if (sample_initial_conditions(st, r, err, errlen) != 0) goto done;

  /* The checkpoint journal: a resumed run takes its finished trajectories from it. */
  long resumed = 0;
  if (st->checkpoint) {
    r->journal = nh_checkpoint_open(st->checkpoint, st->checkpoint_key, (long)(traj + (size_t)nm), st->resume,
                                    replay_task, &jr, &resumed, err, errlen);
    r->journal_dE = REC_ROWS, r->journal_obs = REC_ROWS + (size_t)ns;
    if (r->journal && st->nobs) r->samples.fetch = journal_samples, r->samples.fetch_ctx = r;
    /* The trajectories taken: the journal may also hold the statistics records of a run killed
     * after its last trajectory, which are no trajectories (and are appended again below). */
    resumed = 0;
    for (size_t t = 0; r->journal && t < traj; t++) resumed += jr.done[t];
    if (r->journal && st->resume)
      fprintf(stderr, "nhbench: resuming: %ld of %zu trajectories taken from %s\n", resumed, traj, st->checkpoint);
  }
  /* Under MPI only rank 0 keeps the journal: every rank learns whether it opened. */
  if (nh_ranks_agree(st->checkpoint && !r->journal ? -1 : 0) < 0) {
    if (!st->checkpoint) snprintf(err, errlen, "%s: rank 0 could not open its journal", st->spec_file);
    goto done;
  }
  if (run_trajectories(st, &jr, resumed) < 0) {
    snprintf(err, errlen, "%s: trajectories lost (out of memory, or the journal %s could not be written)",
             st->spec_file, st->checkpoint ? st->checkpoint : "");
    goto done;
  }
  if (nh_study_rank() != 0) { /* an MPI worker: its trajectories are with rank 0 */
    rc = 0;
    goto done;
  }

  /* Statistics across the ensemble, in a fixed order (spec/newmark.md §6 A11). */
  for (int mi = 0; mi < nm; mi++) {
    for (int ic = 0; ic < nic; ic++) {
      nh_cost_add(&r->cost[mi], &jr.task_cost[(size_t)mi * nic + ic]);
      r->wall_time[mi] += jr.task_time[(size_t)mi * nic + ic];
    }
    if (method_statistics(st, r, mi, rows, scratch, err, errlen) != 0) goto done;
  }
  rc = 0;
done:
  free(jr.task_cost), free(jr.task_time), free(jr.done), free(rows), free(scratch);
  return rc;
}

void nh_ensemble_result_free(nh_ensemble_result *r) {
  free(r->t), free(r->q0), free(r->v0), free(r->E0), free(r->dE), free(r->max_abs_dE);
  free(r->drift_slope), free(r->max_residual), free(r->status), free(r->dE_mean), free(r->dE_var);
  free(r->dE_q10), free(r->dE_q50), free(r->dE_q90), free(r->dE_count), free(r->cost), free(r->wall_time);
  free(r->last_var), free(r->last_count);
  nh_samples_free(&r->samples);
  nh_checkpoint_close(r->journal);
  memset(r, 0, sizeof *r);
}
