/* Ensemble study: many initial conditions (random on D at an energy, or given), every method
 * from each, E(t) − E0 and the observables sampled every K steps, and the statistics across the
 * initial conditions. Trajectories [method][ic] are independent tasks over threads and MPI ranks
 * (nh_run_tasks), each drawing from its own random stream and writing only its own slots; every
 * statistic is computed afterwards in a fixed order: bit-identical whatever the thread count. */
#include <errno.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "studies/checkpoint.h"
#include "studies/columns.h"
#include "studies/kinds.h"
#include "studies/sampling.h"
#include "studies/spec_load.h"

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
             nh_system_name(&st->sys), st->energy);
  for (int ic = 0; rc == 0 && ic < st->count; ic++) {
    memcpy(r->q0 + (size_t)ic * n, x[ic].q, sizeof(double) * (size_t)n);
    memcpy(r->v0 + (size_t)ic * n, x[ic].v, sizeof(double) * (size_t)n);
    r->E0[ic] = nh_energy(&st->sys, x[ic].q, x[ic].v);
  }
  if (st->random_ics) free(x);
  return rc < 0 ? -1 : 0;
}

/* One trajectory's run: dE (and the observables) sampled every K steps, into dE (nsamples) and
 * values (nsamples × the samples' row), which are r's own rows or a streamed run's buffers. */
static nh_sampled_run trajectory_run(const nh_study *st, const nh_ensemble_result *r, long task, double *dE,
                                     double *values) {
  const int nic = st->count, n = st->sys.n, mi = (int)(task / nic), ic = (int)(task % nic);
  nh_sampled_run run = {.st = st, .m = st->methods[mi], .method_index = mi, .h = st->h[0],
                        .nsteps = st->nsteps, .K = st->sample_every, .divergence = st->divergence, .dE = dE};
  run.x0 = st->random_ics ? (nh_state){0} : st->ics[ic];
  memcpy(run.x0.q, r->q0 + (size_t)ic * n, sizeof(double) * (size_t)n);
  memcpy(run.x0.v, r->v0 + (size_t)ic * n, sizeof(double) * (size_t)n);
  if (st->nobs) {
    run.layout = &r->samples;
    run.values = values;
  }
  return run;
}

/* The trajectory's numbers from its finished run. */
static void trajectory_done(nh_ensemble_result *r, long task, const nh_sampled_run *run, nh_cost *cost) {
  r->status[task] = run->status;
  r->max_residual[task] = run->max_residual;
  r->max_abs_dE[task] = run->max_abs_dE;
  *cost = run->cost;
  /* Drift: least-squares slope of dE against t over the samples reached. */
  r->drift_slope[task] = nh_drift_slope(run->reached, r->t, run->dE);
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

/* Trajectories tasks[0 … n − 1] of one method (nh_task_set.run_group; run: n = 1), stepped in
 * lanes when the method has them: their rows straight into their records, then their numbers.
 * Each task's time is the group's over n. */
static void run_tasks(journal *j, const long *tasks, int n, double *const *rec) {
  const size_t ns = (size_t)j->st->nsamples;
  nh_sampled_run runs[NH_TASK_GROUP_MAX];
  const double t0 = omp_get_wtime();
  for (int i = 0; i < n; i++)
    runs[i] =
        trajectory_run(j->st, j->r, tasks[i], rec[i] + REC_ROWS, j->r->samples.row ? rec[i] + REC_ROWS + ns : NULL);
  nh_sampled_runs_go(runs, n);
  const double seconds = (omp_get_wtime() - t0) / n;
  for (int i = 0; i < n; i++) {
    trajectory_done(j->r, tasks[i], &runs[i], &j->task_cost[tasks[i]]);
    j->task_time[tasks[i]] = seconds;
    pack_task(j, tasks[i], rec[i]);
    rec[i][REC_OUTCOME] = runs[i].error != NH_REFERENCE_NO_MEMORY;
  }
}

static void run_task(void *vj, long task, double *rec) { run_tasks(vj, &task, 1, &rec); }

static void run_group(void *vj, const long *tasks, int n, double *const *rec) { run_tasks(vj, tasks, n, rec); }

/* A group of a method with lanes holds a lane group's trajectories. */
static int group_width(void *vj, long task) {
  const journal *j = vj;
  const nh_study *st = j->st;
  return nh_lanes_enabled() && nh_method_has_lanes(st->methods[task / st->count], &st->sys) ? NH_LANES : 1;
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
  const nh_task_set ts = {(long)traj, jr->done, record_length(jr), run_task, take_task, method_of_task,
                          nm,         jr,       group_width,       run_group};
  const int rc = nh_run_tasks(&ts, &prog);
  nh_progress_end(&prog);
  return rc;
}

/* Whether the run keeps its rows (dE, the statistics per sample) in memory: not with a journal,
 * through which they stream, nor on an MPI worker rank, whose records go to rank 0. */
static int keeps_rows(const nh_study *st) { return st->checkpoint == NULL && nh_study_rank() == 0; }
static int streams_rows(const nh_study *st) { return !keeps_rows(st); }
static const nh_column_condition in_memory = {keeps_rows, NULL}, streamed = {streams_rows, NULL};

#define RUN(field) offsetof(nh_ensemble_result, field)
#define ROWS NH_COLUMN_APART /* written row by row, from memory or the journal (results/write_kinds.c) */
/* A statistic per method and sample over the ICs, in memory unless the run streams it. */
#define PER_SAMPLE(NAME, TYPE, UNITS, DOC)                                                                             \
  { #NAME, "method,sample", NH_COLUMN_##TYPE, RUN(NAME), ROWS, &in_memory, UNITS, DOC }
/* The result's columns (studies/columns.h): trajectories [method][ic], the observables apart
 * (nh_samples). */
const nh_result_column nh_ensemble_columns[] = {
    {"t", "sample", NH_COLUMN_F64, RUN(t), NH_COLUMN_SCALE, NULL, "time", "sample times t_s = s * sample_every * h"},
    {"q0", "ic,dof", NH_COLUMN_F64, RUN(q0), NH_COLUMN_APART, NULL, "as q", "initial positions"},
    {"v0", "ic,dof", NH_COLUMN_F64, RUN(v0), NH_COLUMN_APART, NULL, "as v", "initial velocities"},
    {"E0", "ic", NH_COLUMN_F64, RUN(E0), 0, NULL, "energy", "energies of the initial conditions"},
    {"dE", "method,ic,sample", NH_COLUMN_F64, RUN(dE), ROWS, &in_memory, "energy",
     "E(t) - E0 at the samples; NaN from the first sample after a failed step"},
    {"max_abs_dE", "method,ic", NH_COLUMN_F64, RUN(max_abs_dE), 0, NULL, "energy",
     "max over the samples reached of |dE|"},
    {"drift_slope", "method,ic", NH_COLUMN_F64, RUN(drift_slope), 0, NULL, "energy/time",
     "least-squares slope of dE against t over the samples reached; NaN with fewer than 2"},
    {"max_constraint_residual", "method,ic", NH_COLUMN_F64, RUN(max_residual), 0, NULL, "as v",
     "max over the run of max_a |A_a(q) v + b_a(q)|"},
    {"status", "method,ic", NH_COLUMN_I32, RUN(status), 0, NULL, "1", "status code of the run (README: Status codes)"},
    PER_SAMPLE(dE_mean, F64, "energy", "mean of dE over the ICs still running"),
    PER_SAMPLE(dE_var, F64, "energy^2",
               "unbiased variance of dE over the ICs still running (spec/newmark.md A11); NaN if fewer than 2"),
    PER_SAMPLE(dE_count, I32, "1", "ICs with a finite dE at the sample"),
    PER_SAMPLE(dE_q10, F64, "energy",
               "10 % quantile of dE over the ICs still running (linear between order statistics); NaN if none"),
    PER_SAMPLE(dE_q50, F64, "energy", "median of dE over the ICs still running"),
    PER_SAMPLE(dE_q90, F64, "energy", "90 % quantile of dE over the ICs still running"),
    {"last_var", "method", NH_COLUMN_F64, RUN(last_var), NH_COLUMN_SCRATCH, &streamed, "energy^2",
     "dE_var at the last sample, which the summary needs, of a run that streams its rows"},
    {"last_count", "method", NH_COLUMN_I32, RUN(last_count), NH_COLUMN_SCRATCH, &streamed, "1",
     "dE_count at the last sample, of a run that streams its rows"},
    {"cost", "method", NH_COLUMN_COST, RUN(cost), 0, NULL, NULL, "cost counters, summed over the ICs"},
    {"wall_time", "method", NH_COLUMN_F64, RUN(wall_time), 0, NULL, "s", "wall time, summed over the ICs"},
    {NULL}};
#undef RUN
#undef ROWS
#undef PER_SAMPLE

/* The kind's own dimensions: sample, every sample_every steps of the one h; and ic, its count of
 * initial conditions (drawn, or the given ones). */
static void own_dims(const nh_study *st, const void *r, nh_column_dims *d) {
  (void)r;
  nh_column_dims_set(d, "sample", st->nsamples);
  nh_column_dims_set(d, "ic", st->count);
}

int nh_run_ensemble(const nh_study *st, nh_ensemble_result *r, char *err, size_t errlen) {
  const int nm = st->nmethods, nic = st->count, ns = st->nsamples;
  const size_t traj = (size_t)nm * (size_t)nic;
  const int stream = streams_rows(st);
  memset(r, 0, sizeof *r);
  nh_column_dims dims;
  nh_kind_dims(&nh_ensemble_kind, st, r, &dims);
  const int columns = nh_result_columns_alloc(nh_ensemble_columns, st, &dims, r);
  journal jr = {st, r, calloc(traj, sizeof(nh_cost)), calloc(traj, sizeof(double)), calloc(traj, 1), 0};
  double *rows = malloc(sizeof(double) * (size_t)nic * (size_t)ns);
  double *scratch = malloc(sizeof(double) * NH_STATS * (size_t)ns);
  int rc = -1;
  if (columns < 0 || !jr.task_cost || !jr.task_time || !jr.done || !rows || !scratch ||
      nh_samples_init(&r->samples, st, stream ? 0 : traj, ns) != 0) {
    snprintf(err, errlen, "%s: out of memory for %zu trajectories of %d samples", st->spec_file, traj, ns);
    goto done;
  }
  for (int s = 0; s < ns; s++) r->t[s] = (double)s * st->sample_every * st->h[0];
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
  nh_result_columns_free(nh_ensemble_columns, r);
  nh_samples_free(&r->samples);
  nh_checkpoint_close(r->journal);
  memset(r, 0, sizeof *r);
}

/* ---- its spec: the settings it takes (studies/settings.c) -------------------------------------- */

static int load_ensemble(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  if (nh_spec_one_step(c, root, st) < 0 || nh_spec_whole_steps(c, root, st) < 0) return -1;
  st->nsteps = lround(st->T / st->h[0]);
  if (nh_spec_count(c, root, "sample_every", &st->sample_every) < 0) return -1;
  if (st->nsteps % st->sample_every)
    return nh_spec_fail(c, config_setting_get_member(root, "sample_every"),
                        "sample_every = %d does not divide the number of steps %ld", st->sample_every, st->nsteps);
  if (nh_spec_sample_count(c, root, st->nsteps, st->sample_every) < 0) return -1;
  st->nsamples = (int)(st->nsteps / st->sample_every) + 1;
  if (nh_spec_divergence(c, root, st) < 0 || nh_spec_reference_tol(c, root, st) < 0) return -1;
  if (nh_spec_observables(c, root, st) < 0) return -1;
  const config_setting_t *ens = config_setting_get_member(root, "ensemble");
  const config_setting_t *given = config_setting_get_member(root, "initial");
  if (ens && given)
    return nh_spec_fail(c, given, "an ensemble takes either 'ensemble' (random states) or 'initial', not both");
  if (given) {
    if (nh_spec_initial(c, root, st) < 0) return -1;
    st->count = st->nic;
    return 0;
  }
  if (!ens) return nh_spec_fail(c, root, "missing setting 'ensemble' ({ count; energy; seed; }) or 'initial'");
  return nh_spec_random_states(c, ens, st);
}

/* The kind's table (studies/kinds.h). */
NH_STUDY_KIND_ENTRIES(ensemble)
const nh_study_kind_type nh_ensemble_kind = {
    .kind = NH_STUDY_ENSEMBLE,
    .name = "ensemble",
    .doc = "many initial conditions: the energy error E(t) - E0, its drift and its statistics across them",
    .settings = "observables sample_every divergence ensemble",
    .stores = "grids sample_every divergence count random_ics energy seed",
    .result_size = sizeof(nh_ensemble_result),
    .columns = nh_ensemble_columns,
    .load = load_ensemble,
    .run = run_kind,
    .free_result = free_kind,
    .file = {NH_KIND_ICS_DRAWN, NULL, own_dims, "method,ic", offsetof(nh_ensemble_result, samples)},
};
