/* Trajectory study: fixed initial conditions, every method and step size, the chosen observables
 * sampled every K steps (issue 8, item 2). Runs [method][h][ic] are independent tasks (OpenMP,
 * dynamic schedule), each writing only its own slots: results do not depend on the thread count. */
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "studies/sampling.h"

static int allocate(const nh_study *st, nh_trajectory_result *r, size_t runs) {
  const int n = st->sys.n;
  r->nsamples_h = calloc((size_t)st->nh, sizeof *r->nsamples_h);
  if (!r->nsamples_h) return -1;
  for (int hi = 0; hi < st->nh; hi++) {
    r->nsamples_h[hi] = (int)(lround(st->T / st->h[hi]) / st->sample_every) + 1;
    if (r->nsamples_h[hi] > r->nsamples) r->nsamples = r->nsamples_h[hi];
  }
  r->t = malloc(sizeof(double) * (size_t)st->nh * (size_t)r->nsamples);
  r->status = calloc(runs, sizeof *r->status);
  r->cost = calloc(runs, sizeof *r->cost);
  r->wall_time = calloc(runs, sizeof *r->wall_time);
  r->final_state = calloc(runs * 2 * (size_t)n, sizeof *r->final_state);
  if (!r->t || !r->status || !r->cost || !r->wall_time || !r->final_state) return -1;
  if (st->round_trip) {
    r->round_trip_defect = calloc(runs, sizeof(double));
    r->round_trip_defect_lambda = calloc(runs, sizeof(double));
    if (!r->round_trip_defect || !r->round_trip_defect_lambda) return -1;
  }
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
  const int nm = st->nmethods, nh = st->nh, nic = st->nic, n = st->sys.n;
  const size_t runs = (size_t)nm * nh * nic;
  memset(r, 0, sizeof *r);
  if (allocate(st, r, runs) < 0) {
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
  const nh_task_slot slots[] = {
      {r->status, NH_SLOT_INT, 1},
      {r->cost, NH_SLOT_COST, 1},
      {r->wall_time, NH_SLOT_DOUBLE, 1},
      {r->final_state, NH_SLOT_DOUBLE, 2 * (size_t)n},
      {truth_failed, NH_SLOT_INT, 1},
      {r->samples.values, NH_SLOT_DOUBLE, st->nobs ? (size_t)r->nsamples * r->samples.row : 0},
      {r->round_trip_defect, NH_SLOT_DOUBLE, st->round_trip ? 1 : 0},
      {r->round_trip_defect_lambda, NH_SLOT_DOUBLE, st->round_trip ? 1 : 0}};
  if (nh_journaled_tasks(st, "trajectory", (long)runs, trajectory_task, &ctx, slots, sizeof slots / sizeof *slots, err,
                         errlen) < 0)
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
  free(r->nsamples_h), free(r->t), free(r->status), free(r->cost), free(r->wall_time), free(r->final_state);
  free(r->round_trip_defect), free(r->round_trip_defect_lambda);
  nh_samples_free(&r->samples);
  memset(r, 0, sizeof *r);
}
