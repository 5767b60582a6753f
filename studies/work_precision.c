/* Work-precision study (issue 8): per (method, h), the error at T from ics[0] against counted work
 * and against wall time, and the Pareto-efficient runs (least error for their cost).
 *
 * Reference: the true solution at ics[0].t + T (nh_study_reference_at: exact, or rk8pd with its
 * estimated error), tightened after the runs to the smallest error (reference_tol = "auto").
 * Per task (method, h), `repeats` runs from ics[0]: init, then the evolve loop over lround(T/h) steps
 * with the deadline (run start) + time_limit.
 *   err[NH_WP_NORMS]  from the first run's final state (final_state), after the runs: (q,v) max, (q,v) 2, q max, q 2, v max, v 2
 *   cost              the first run's counters (init included); deterministic, the same for every
 *                     repeat and whatever the thread count
 *   work              rhs_evals + jacobian_evals + constraint_evals of that cost: the function
 *                     evaluations (∇V or the ODE right-hand side, Jacobian assemblies, A(q)).
 *                     Newton iterations and linear solves are not added (each iteration already
 *                     counts its residual and Jacobian evaluations); they stay in `cost`.
 *   wall_times[r]     seconds of run r (init + integration); wall_time is their median
 *                     (gsl_stats_median_from_sorted_data: the mean of the two middle values for an
 *                     even count)
 *   status            NH_STEP_OK, the failing nh_step_status, or NH_RUN_TIMED_OUT. A run that does
 *                     not end OK (a failed step, or any repeat past time_limit) ends the task: its
 *                     errors and wall_time are NaN, wall_times keeps the runs made (the last one
 *                     the failing run's time), NaN for the runs not made; cost and work are those
 *                     of the first run as far as it went.
 * Pareto front over all runs of the study (nh_pareto_front): pareto_work against work, pareto_time
 * against wall_time, both with the error in the study norm ((q,v) max for NH_NORM_MAX, (q,v) 2
 * for NH_NORM_2). Runs not OK are never efficient.
 *
 * Timing: the tasks run in parallel (OpenMP, dynamic schedule), so wall times are measured under
 * contention from the other threads (shared caches, memory bandwidth, turbo clocks); for clean
 * timings run with OMP_NUM_THREADS=1. Counted work and errors are exact and do not depend on the
 * thread count; only wall times (and, near time_limit, which runs time out) do. */
#include <gsl/gsl_sort.h>
#include <gsl/gsl_statistics_double.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "studies/kinds.h"
#include "studies/sampling.h"
#include "studies/spec_load.h"
#include "studies/study.h"

/* Pareto efficiency of n runs: efficient[i] = 1 when run i is ok (ok[i] != 0, err[i] and cost[i]
 * finite) and no other such run j has err[j] <= err[i] and cost[j] <= cost[i] with at least one
 * strictly smaller; else 0. Runs with equal (err, cost) do not dominate each other: both can be
 * efficient. O(n²), in a fixed order. */
void nh_pareto_front(int n, const double *err, const double *cost, const int *ok, int *efficient) {
  for (int i = 0; i < n; i++) {
    int eff = ok[i] && isfinite(err[i]) && isfinite(cost[i]);
    for (int j = 0; j < n && eff; j++) { /* j = i too: no run strictly dominates itself */
      if (!ok[j] || !isfinite(err[j]) || !isfinite(cost[j])) continue;
      if (err[j] <= err[i] && cost[j] <= cost[i] && (err[j] < err[i] || cost[j] < cost[i])) eff = 0;
    }
    efficient[i] = eff;
  }
}

static double work_of(const nh_cost *c) {
  return (double)c->rhs_evals + (double)c->jacobian_evals + (double)c->constraint_evals;
}

/* The errors of the run `task` at T, from its final state (NaN if it did not end OK). */
static void errors_at_T(const nh_study *st, nh_work_precision_result *r, long task) {
  const int n = st->sys.n;
  const double *x = r->final_state + (size_t)task * 2 * n;
  double d[2 * NH_MAX_N], *e = r->err + (size_t)task * NH_WP_NORMS;
  for (int i = 0; i < NH_WP_NORMS; i++) e[i] = NAN;
  if (r->status[task] != NH_STEP_OK) return;
  nh_study_reference_difference(st, x, &r->reference, d);
  e[0] = nh_norm_max(2 * n, d);
  e[1] = nh_norm_2(2 * n, d);
  e[2] = nh_norm_max(n, d);
  e[3] = nh_norm_2(n, d);
  e[4] = nh_norm_max(n, d + n);
  e[5] = nh_norm_2(n, d + n);
}

int nh_study_time_limit(void *ctx, const nh_evolve *e) {
  return (e->k & 63) == 0 && omp_get_wtime() > *(const double *)ctx ? NH_RUN_TIMED_OUT : NH_STEP_OK;
}

static int wp_task(void *ctx, long task) { /* allocates nothing: it cannot run out of memory */
  const nh_study *st = ((nh_study_tasks *)ctx)->st;
  nh_work_precision_result *r = ((nh_study_tasks *)ctx)->result;
  const nh_system *sys = &st->sys;
  const int nh = st->nh, R = st->repeats;
  const nh_method *m = st->methods[task / nh];
  const double h = st->h[task % nh];
  const long nsteps = lround(st->T / h);
  double *wt = r->wall_times + (size_t)task * R, *fin = r->final_state + (size_t)task * 2 * sys->n;
  int status = NH_STEP_OK;

  for (int rep = 0; rep < R; rep++) wt[rep] = NAN;
  for (int rep = 0; rep < R && status == NH_STEP_OK; rep++) {
    nh_evolve e;
    nh_evolve_start(&e, m, sys, &st->ics[0], h, 0);
    const double t0 = omp_get_wtime(), deadline = t0 + st->time_limit;
    status = nh_evolve_init(&e);
    if (status == NH_STEP_OK) status = nh_evolve_steps(&e, nsteps, nh_study_time_limit, (void *)&deadline);
    wt[rep] = omp_get_wtime() - t0;
    if (rep == 0) {
      r->cost[task] = e.cost;
      r->work[task] = work_of(&e.cost);
      for (int i = 0; i < sys->n; i++) fin[i] = e.x->q[i], fin[sys->n + i] = e.x->v[i];
    }
  }
  r->status[task] = status;
  if (status != NH_STEP_OK) {
    r->wall_time[task] = NAN;
    return 0;
  }
  double sorted[R]; /* every repetition ran: a failed one returned above */
  memcpy(sorted, wt, sizeof(double) * (size_t)R);
  gsl_sort(sorted, 1, (size_t)R);
  r->wall_time[task] = gsl_stats_median_from_sorted_data(sorted, 1, (size_t)R);
  return 0;
}

#define CELL(field) offsetof(nh_work_precision_result, field)
#define TASK NH_COLUMN_JOURNALED
/* The result's columns (studies/columns.h): runs [method][h]. */
const nh_result_column nh_work_precision_columns[] = {
    {"err", "method,h,norm", NH_COLUMN_F64, CELL(err), TASK, NULL, "as q, v",
     "error at T against the reference in each norm"},
    {"cost", "method,h", NH_COLUMN_COST, CELL(cost), TASK, NULL, NULL, "cost counters of one run"},
    {"work", "method,h", NH_COLUMN_F64, CELL(work), TASK, NULL, "1", "rhs + Jacobian + constraint evaluations of one run"},
    {"wall_time", "method,h", NH_COLUMN_F64, CELL(wall_time), TASK, NULL, "s", "median wall time over the repeats"},
    {"wall_times", "method,h,repeat", NH_COLUMN_F64, CELL(wall_times), TASK, NULL, "s", "wall time of each repeat"},
    {"status", "method,h", NH_COLUMN_I32, CELL(status), TASK, NULL, "1", "status code of the run (4: timed out)"},
    {"pareto_work", "method,h", NH_COLUMN_I32, CELL(pareto_work), 0, NULL, "1",
     "1: no other run has smaller-or-equal error (norm pareto_norm) and work, one of them strictly"},
    {"pareto_time", "method,h", NH_COLUMN_I32, CELL(pareto_time), 0, NULL, "1", "the same against wall time"},
    {"final_state", "method,h,state", NH_COLUMN_F64, CELL(final_state), TASK | NH_COLUMN_SCRATCH, NULL, "as q, v",
     "(q, v) at T of the first run"},
    {NULL}};
#undef CELL
#undef TASK

/* On failure r keeps what was allocated: the caller frees it, whatever the outcome (study.h). */
int nh_run_work_precision(const nh_study *st, nh_work_precision_result *r, char *err, size_t errlen) {
  const int nm = st->nmethods, nh = st->nh, R = st->repeats;
  const size_t cells = (size_t)nm * (size_t)nh;
  memset(r, 0, sizeof *r);
  if (nm < 1 || nh < 1 || R < 1) {
    snprintf(err, errlen, "%s: a work-precision study needs methods, step sizes and repeats >= 1", st->spec_file);
    return -1;
  }
  nh_column_dims dims;
  nh_kind_dims(&nh_work_precision_kind, st, r, &dims);
  const int columns = nh_result_columns_alloc(nh_work_precision_columns, st, &dims, r);
  double *front_err = calloc(cells, sizeof(double));
  int *ok = calloc(cells, sizeof(int));
  if (columns < 0 || !front_err || !ok) {
    snprintf(err, errlen, "%s: out of memory for %zu work-precision tasks", st->spec_file, cells);
    free(front_err), free(ok);
    return -1;
  }
  const double tT = st->ics[0].t + st->T;
  int truth = nh_study_reference_at(st, &st->ics[0], tT, &r->reference);
  if (truth < 0) {
    snprintf(err, errlen, "%s: %s", st->spec_file, nh_truth_failure(truth));
    free(front_err), free(ok);
    return -1;
  }

  nh_study_tasks ctx = {st, r};
  nh_task_slot slots[NH_COLUMN_MAX_SLOTS];
  const int nslots = nh_result_columns_slots(nh_work_precision_columns, st, &dims, 2, r, slots, NH_COLUMN_MAX_SLOTS);
  if (nh_journaled_tasks(st, "work_precision", (long)cells, wp_task, &ctx, slots, nslots, err, errlen) < 0) {
    free(front_err), free(ok);
    return -1;
  }

  /* The (q,v) error columns come first, in nh_norm's order: the study norm's column is its value. */
  _Static_assert(NH_NORM_MAX == 0, "err's first column is (q,v) max");
  _Static_assert(NH_NORM_2 == 1, "err's second column is (q,v) 2");
  const int col = (int)st->norm;
  double smallest = NAN, tol = r->reference.tol;
  for (size_t c = 0; c < cells; c++) errors_at_T(st, r, (long)c);
  for (size_t c = 0; c < cells; c++)
    if (r->err[c * NH_WP_NORMS + col] > 0) smallest = fmin(smallest, r->err[c * NH_WP_NORMS + col]);
  if ((truth = nh_study_reference_refine(st, &st->ics[0], tT, smallest, &r->reference)) < 0) {
    snprintf(err, errlen, "%s: %s", st->spec_file, nh_truth_failure(truth));
    free(front_err), free(ok);
    return -1;
  }
  for (size_t c = 0; r->reference.tol != tol && c < cells; c++) errors_at_T(st, r, (long)c);
  for (size_t c = 0; c < cells; c++) {
    front_err[c] = r->err[c * NH_WP_NORMS + col];
    ok[c] = r->status[c] == NH_STEP_OK;
  }
  nh_pareto_front((int)cells, front_err, r->work, ok, r->pareto_work);
  nh_pareto_front((int)cells, front_err, r->wall_time, ok, r->pareto_time);
  free(front_err), free(ok);
  return 0;
}

void nh_work_precision_result_free(nh_work_precision_result *r) {
  nh_result_columns_free(nh_work_precision_columns, r);
  memset(r, 0, sizeof *r);
}

/* ---- its spec: the settings it takes (studies/settings.c) -------------------------------------- */

/* Work-precision: error at T against counted work and wall time. */
static int load_work_precision(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  if (nh_spec_initial(c, root, st) < 0) return -1;
  if (st->nic != 1)
    return nh_spec_fail(c, config_setting_get_member(root, "initial"),
                        "a work-precision study takes one initial condition");
  if (nh_spec_steps(c, root, st, 1) < 0 || nh_spec_whole_steps(c, root, st) < 0 || nh_spec_norm(c, root, st) < 0)
    return -1;
  if (nh_spec_count(c, root, "repeats", &st->repeats) < 0) return -1;
  if (nh_spec_real(c, root, "time_limit", &st->time_limit) < 0 || !(st->time_limit > 0)) /* finite: get_number */
    return nh_spec_fail(c, config_setting_get_member(root, "time_limit"),
                        "time_limit must be a positive number of seconds (default 60)");
  return nh_spec_reference_tol(c, root, st);
}

const char *const nh_wp_norm_names[NH_WP_NORMS] = {"qv_max", "qv_2", "q_max", "q_2", "v_max", "v_2"};
static const nh_kind_labels norm_labels = {"norms", "norm", nh_wp_norm_names,
                                           "the error norms: (q, v), q or v, each in max-norm and 2-norm"};

/* The kind's table (studies/kinds.h). */
NH_STUDY_KIND_ENTRIES(work_precision)
const nh_study_kind_type nh_work_precision_kind = {
    .kind = NH_STUDY_WORK_PRECISION,
    .name = "work_precision",
    .doc = "error at T against counted work and wall time, and the Pareto fronts",
    .settings = "h0 halvings norm repeats time_limit",
    .stores = "initial norm repeats time_limit",
    .result_size = sizeof(nh_work_precision_result),
    .columns = nh_work_precision_columns,
    .load = load_work_precision,
    .run = run_kind,
    .free_result = free_kind,
    .file = {NH_KIND_ICS_FIRST, &norm_labels, NULL, NULL, 0},
};
