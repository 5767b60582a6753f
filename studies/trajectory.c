/* Trajectory study: fixed initial conditions, every method and step size, the chosen observables
 * sampled every K steps (issue 8, item 2). Runs [method][h][ic] are independent tasks (OpenMP,
 * dynamic schedule), each writing only its own slots: results do not depend on the thread count. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "studies/kinds.h"
#include "studies/sampling.h"
#include "studies/spec_load.h"

static int round_trip_on(const nh_study *st) { return st->round_trip; }
static const nh_column_condition with_round_trip = {round_trip_on, "round_trip = true"};

#define RUN(field) offsetof(nh_trajectory_result, field)
#define TASK NH_COLUMN_JOURNALED
/* The result's columns (studies/columns.h): runs [method][h][ic], the observables apart (nh_samples). */
const nh_result_column nh_trajectory_columns[] = {
    {"nsamples_h", "h", NH_COLUMN_I32, RUN(nsamples_h), 0, NULL, "1",
     "samples stored for each h (the rest of t is NaN)"},
    {"t", "h,sample", NH_COLUMN_F64, RUN(t), 0, NULL, "time", "sample times of each h; NaN beyond nsamples_h"},
    {"status", "method,h,ic", NH_COLUMN_I32, RUN(status), TASK, NULL, "1",
     "status code of the run (README: Status codes)"},
    {"cost", "method,h,ic", NH_COLUMN_COST, RUN(cost), TASK, NULL, NULL, "cost counters of the run"},
    {"wall_time", "method,h,ic", NH_COLUMN_F64, RUN(wall_time), TASK, NULL, "s", "wall time of the run"},
    {"final_state", "method,h,ic,state", NH_COLUMN_F64, RUN(final_state), TASK, NULL, "as q, v",
     "(q, v) at the end of the run"},
    {"round_trip_defect", "method,h,ic", NH_COLUMN_F64, RUN(round_trip_defect), TASK, &with_round_trip, "as q, v",
     "max over (q, v) of |x0 - the state reached back from the end in as many steps of -h| (x0 after init, the "
     "carry kept; spec/rattle.md 3.3); NaN: failed run or two-step method"},
    {"round_trip_defect_lambda", "method,h,ic", NH_COLUMN_F64, RUN(round_trip_defect_lambda), TASK, &with_round_trip,
     "as lambda",
     "the same round trip's max_a |lambda_a| difference for a method whose state carries lambda (nh_rattle); NaN "
     "for every other method"},
    {NULL}};
#undef RUN
#undef TASK

/* The samples of a run with step size h[hi]: T / (h K) + 1, t = 0 included. */
static int samples_of(const nh_study *st, int hi) { return (int)(lround(st->T / st->h[hi]) / st->sample_every) + 1; }

/* The kind's own dimension: sample, the most samples of any h. */
static void own_dims(const nh_study *st, const void *r, nh_column_dims *d) {
  (void)st;
  nh_column_dims_set(d, "sample", ((const nh_trajectory_result *)r)->nsamples);
}

static int allocate(const nh_study *st, nh_trajectory_result *r, size_t runs, nh_column_dims *dims) {
  for (int hi = 0; hi < st->nh; hi++)
    if (samples_of(st, hi) > r->nsamples) r->nsamples = samples_of(st, hi);
  nh_kind_dims(&nh_trajectory_kind, st, r, dims);
  if (nh_result_columns_alloc(nh_trajectory_columns, st, dims, r) < 0) return -1;
  for (int hi = 0; hi < st->nh; hi++) r->nsamples_h[hi] = samples_of(st, hi);
  return nh_samples_init(&r->samples, st, runs, r->nsamples);
}

/* Sample times per h: t0 + s·K·h, NaN past the end of a coarser run. */
static void sample_times(const nh_study *st, nh_trajectory_result *r) {
  for (int hi = 0; hi < st->nh; hi++)
    for (int s = 0; s < r->nsamples; s++)
      r->t[(size_t)hi * r->nsamples + s] =
          s < r->nsamples_h[hi] ? st->ics[0].t + (double)s * st->sample_every * st->h[hi] : NAN;
}

static int needs_truth(const nh_study *st) {
  for (int o = 0; o < st->nobs; o++)
    if (st->obs[o]->needs & (NH_OBS_REFERENCE | NH_OBS_LAMBDA_REFERENCE)) return 1;
  return 0;
}

typedef struct {
  const nh_study *st;
  nh_trajectory_result *r;
  int *truth_failed; /* [run]: the reference solution failed (the run is marked failed) */
} trajectory_tasks;

/* The round trip of a run that reached its end state `end` in nsteps steps of h from x0: as many
 * steps of −h from end as the step left it (carry included), compared with x0 after init — the
 * triple (q, p, λ) of nh_rattle for spec/rattle.md §3.3. NaN for a failed run, a two-step method
 * (its carry holds the increment of +h steps) or a failed backward step. */
static void round_trip(const nh_study *st, const nh_method *m, const nh_state *x0, const nh_state *end, long nsteps,
                       double h, int status, double *defect, double *defect_lambda) {
  const nh_system *sys = &st->sys;
  nh_state start = *x0, z = *end;
  nh_cost unused = {0};
  *defect = *defect_lambda = NAN;
  if (status != NH_STEP_OK || nh_method_has_history(m) || nh_method_init(m, sys, &start, h, &unused) != 0 ||
      nh_integrate(m, sys, &z, nsteps, -h, &unused, NULL) != NH_STEP_OK)
    return;
  double d[2 * NH_MAX_N];
  for (int i = 0; i < sys->n; i++) d[i] = z.q[i] - start.q[i], d[sys->n + i] = z.v[i] - start.v[i];
  *defect = nh_norm_max(2 * sys->n, d);
  if (!nh_method_reads_previous_step(m, sys)) return;
  for (int a = 0; a < sys->k; a++) d[a] = z.lambda[a] - start.lambda[a];
  *defect_lambda = nh_norm_max(sys->k, d);
}

/* Run [method][h][ic]: its observables into its block of samples.values, its end state. */
static int trajectory_task(void *vctx, long task) {
  const trajectory_tasks *c = vctx;
  const nh_study *st = c->st;
  nh_trajectory_result *r = c->r;
  const int nh = st->nh, nic = st->nic, n = st->sys.n;
  const int mi = (int)(task / ((long)nh * nic)), hi = (int)(task / nic % nh), ic = (int)(task % nic);
  nh_sampled_run run = {.st = st, .m = st->methods[mi], .method_index = mi, .h = st->h[hi],
                        .nsteps = lround(st->T / st->h[hi]), .K = st->sample_every, .x0 = st->ics[ic],
                        .divergence = st->divergence, .layout = st->nobs ? &r->samples : NULL};
  if (st->nobs) run.values = r->samples.values + (size_t)task * r->nsamples * r->samples.row;
  double t0 = omp_get_wtime();
  const int truth = nh_sampled_run_go(&run);
  c->truth_failed[task] = truth < 0;
  r->wall_time[task] = omp_get_wtime() - t0;
  r->status[task] = run.status;
  r->cost[task] = run.cost;
  memcpy(r->final_state + (size_t)task * 2 * n, run.final.q, sizeof(double) * (size_t)n);
  memcpy(r->final_state + (size_t)task * 2 * n + n, run.final.v, sizeof(double) * (size_t)n);
  if (st->round_trip)
    round_trip(st, run.m, &run.x0, &run.final, run.nsteps, run.h, run.status, &r->round_trip_defect[task],
               &r->round_trip_defect_lambda[task]);
  return truth == NH_REFERENCE_NO_MEMORY ? -1 : 0;
}

int nh_run_trajectory(const nh_study *st, nh_trajectory_result *r, char *err, size_t errlen) {
  const int nm = st->nmethods, nh = st->nh, nic = st->nic;
  const size_t runs = (size_t)nm * nh * nic;
  memset(r, 0, sizeof *r);
  nh_column_dims dims;
  if (allocate(st, r, runs, &dims) < 0) {
    snprintf(err, errlen, "%s: out of memory for %zu runs of %d samples", st->spec_file, runs, r->nsamples);
    return -1;
  }
  sample_times(st, r);
  nh_truth probe;
  nh_truth_start(&probe, &st->sys, &st->ics[0], st->reference_tol);
  r->reference_kind = needs_truth(st) ? probe.kind : "none";

  int *truth_failed = calloc(runs, sizeof(int));
  if (!truth_failed) {
    snprintf(err, errlen, "%s: out of memory for %zu runs", st->spec_file, runs);
    return -1;
  }
  trajectory_tasks ctx = {st, r, truth_failed};
  nh_task_slot slots[NH_COLUMN_MAX_SLOTS];
  /* The columns' slots, then the task's own: its truth's failure and its samples. */
  int nslots = nh_result_columns_slots(nh_trajectory_columns, st, &dims, 3, r, slots, NH_COLUMN_MAX_SLOTS - 2);
  if (nslots < 0) return free(truth_failed), snprintf(err, errlen, "%s: too many result columns", st->spec_file), -1;
  slots[nslots++] = (nh_task_slot){truth_failed, NH_SLOT_INT, 1};
  slots[nslots++] =
      (nh_task_slot){r->samples.values, NH_SLOT_DOUBLE, st->nobs ? (size_t)r->nsamples * r->samples.row : 0};
  if (nh_journaled_tasks(st, "trajectory", (long)runs, trajectory_task, &ctx, slots, nslots, err, errlen) < 0)
    return free(truth_failed), -1;
  int failed_truth = 0;
  for (size_t i = 0; i < runs; i++) failed_truth |= truth_failed[i];
  free(truth_failed);
  if (failed_truth)
    fprintf(stderr, "%s: note: the reference solution (rk8pd, tol %g) failed on some runs; they are marked failed\n",
            st->spec_file, st->reference_tol);
  return 0;
}

void nh_trajectory_result_free(nh_trajectory_result *r) {
  nh_result_columns_free(nh_trajectory_columns, r);
  nh_samples_free(&r->samples);
  memset(r, 0, sizeof *r);
}

/* ---- its spec: the settings it takes (studies/settings.c) -------------------------------------- */

static int load_trajectory(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  if (nh_spec_initial(c, root, st) < 0) return -1;
  if (nh_spec_steps(c, root, st, 1) < 0 || nh_spec_whole_steps(c, root, st) < 0) return -1;
  if (nh_spec_count(c, root, "sample_every", &st->sample_every) < 0) return -1;
  for (int i = 0; i < st->nh; i++)
    if (nh_spec_sample_count(c, root, lround(st->T / st->h[i]), st->sample_every) < 0) return -1;
  for (int i = 0; i < st->nh; i++)
    if (lround(st->T / st->h[i]) % st->sample_every)
      return nh_spec_fail(c, config_setting_get_member(root, "sample_every"),
                          "sample_every = %d does not divide the %ld steps of h = %g", st->sample_every,
                          lround(st->T / st->h[i]), st->h[i]);
  if (nh_spec_divergence(c, root, st) < 0 || nh_spec_reference_tol(c, root, st) < 0) return -1;
  if (nh_spec_flag(c, root, "round_trip", 0, &st->round_trip) < 0 || nh_spec_observables(c, root, st) < 0) return -1;
  if (st->nobs == 0)
    return nh_spec_fail(c, root,
                        "a trajectory study needs 'observables', e.g. [\"energy_error\"] (nhbench list observables)");
  return 0;
}

/* The kind's table (studies/kinds.h). */
NH_STUDY_KIND_ENTRIES(trajectory)
const nh_study_kind_type nh_trajectory_kind = {
    .kind = NH_STUDY_TRAJECTORY,
    .name = "trajectory",
    .doc = "fixed initial conditions, every method and h: observables as time series",
    .settings = "h0 halvings observables sample_every divergence round_trip",
    .stores = "reference_tol sample_every divergence",
    .result_size = sizeof(nh_trajectory_result),
    .columns = nh_trajectory_columns,
    .load = load_trajectory,
    .run = run_kind,
    .free_result = free_kind,
    .file = {NH_KIND_ICS_GIVEN, NULL, own_dims, "method,h,ic", offsetof(nh_trajectory_result, samples)},
};
