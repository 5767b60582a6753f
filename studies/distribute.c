/* Where a study's tasks run (studies/study.h, nh_run_tasks): over the OpenMP threads of this
 * process, or, in the MPI build (-DNHBENCH_MPI=ON) under mpirun with more than one rank, over the
 * ranks with their threads.
 *
 * MPI: rank 0 keeps the results (and the journal, and writes the file); it hands task numbers out
 * in chunks of a worker's thread count, each time a worker sends back the records of its last
 * chunk (dynamic scheduling: a slow method keeps one worker busy, the others go on), and takes
 * every record as the local loop would, through the task set's `take`. A record is the task's
 * results as doubles, exactly what the checkpoint journal keeps, so a task's numbers are the same
 * bits on whichever rank it ran: results do not depend on the number of ranks or threads.
 * Message to rank 0 (tag RESULTS): [threads, k, then k × (task, record)]; reply (tag TASKS): up to
 * `threads` task numbers, none when all are handed out (the worker then stops). */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "studies/study.h"

#ifdef NHBENCH_MPI
#include <mpi.h>
#endif

/* The tasks over this process's threads; each record is taken as soon as its task ends. */
static int run_local(const nh_task_set *ts, nh_progress *prog) {
  int failed = 0;
#pragma omp parallel for schedule(dynamic)
  for (long i = 0; i < ts->count; i++) {
    if (ts->done && ts->done[i]) continue;
    double *rec = malloc(sizeof(double) * (ts->record_length ? ts->record_length : 1));
    double seconds = omp_get_wtime();
    if (rec) ts->run(ts->ctx, i, rec);
    seconds = omp_get_wtime() - seconds;
#pragma omp critical(nh_take)
    if (!rec || ts->take(ts->ctx, i, rec, 0)) failed = 1;
    free(rec);
    ts->kind ? nh_progress_tick_kind(prog, ts->kind(ts->ctx, i), seconds) : nh_progress_tick(prog);
  }
  return failed ? -1 : 0;
}

int nh_study_rank(void) {
#ifdef NHBENCH_MPI
  int init = 0, rank = 0;
  MPI_Initialized(&init);
  if (init) MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return rank;
#else
  return 0;
#endif
}

int nh_study_ranks(void) {
#ifdef NHBENCH_MPI
  int init = 0, size = 1;
  MPI_Initialized(&init);
  if (init) MPI_Comm_size(MPI_COMM_WORLD, &size);
  return size;
#else
  return 1;
#endif
}

int nh_ranks_agree(int rc) {
#ifdef NHBENCH_MPI
  if (nh_study_ranks() > 1) MPI_Bcast(&rc, 1, MPI_INT, 0, MPI_COMM_WORLD);
#endif
  return rc;
}

#ifdef NHBENCH_MPI
enum { TAG_RESULTS = 1, TAG_TASKS = 2 };

/* Rank 0: hands out the tasks not done and takes the records that come back. */
static int collect(const nh_task_set *ts, nh_progress *prog, int ranks) {
  const size_t slot = 1 + ts->record_length;
  size_t cap = 0;
  double *msg = NULL, *sent_at = calloc((size_t)ranks, sizeof(double));
  long next = 0, *ids = NULL;
  int failed = 0, active = ranks - 1;
  if (!sent_at) MPI_Abort(MPI_COMM_WORLD, 1);
  while (active > 0) {
    MPI_Status s;
    int n;
    MPI_Probe(MPI_ANY_SOURCE, TAG_RESULTS, MPI_COMM_WORLD, &s);
    MPI_Get_count(&s, MPI_DOUBLE, &n);
    if ((size_t)n > cap) {
      double *grown = realloc(msg, sizeof(double) * (size_t)n);
      if (!grown) MPI_Abort(MPI_COMM_WORLD, 1); /* a worker's records would be lost */
      msg = grown, cap = (size_t)n;
    }
    MPI_Recv(msg, n, MPI_DOUBLE, s.MPI_SOURCE, TAG_RESULTS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const int want = (int)msg[0], k = (int)msg[1];
    /* the chunk's tasks ran side by side: each took about the time since it was handed out */
    const double seconds = MPI_Wtime() - sent_at[s.MPI_SOURCE];
    for (int j = 0; j < k; j++) {
      const double *r = msg + 2 + (size_t)j * slot;
      const long task = (long)r[0];
      if (ts->take(ts->ctx, task, r + 1, 1)) failed = 1;
      ts->kind ? nh_progress_tick_kind(prog, ts->kind(ts->ctx, task), seconds) : nh_progress_tick(prog);
    }
    long *grown = realloc(ids, sizeof(long) * (size_t)(want > 0 ? want : 1));
    if (!grown) MPI_Abort(MPI_COMM_WORLD, 1);
    ids = grown;
    int given = 0;
    for (; given < want && next < ts->count; next++)
      if (!ts->done || !ts->done[next]) ids[given++] = next;
    MPI_Send(ids, given, MPI_LONG, s.MPI_SOURCE, TAG_TASKS, MPI_COMM_WORLD);
    sent_at[s.MPI_SOURCE] = MPI_Wtime();
    if (given == 0) active--;
  }
  free(msg), free(ids), free(sent_at);
  return failed ? -1 : 0;
}

/* A worker rank: asks for as many tasks as it has threads, runs them, sends their records back
 * with the next request, until none are left. */
static int work(const nh_task_set *ts) {
  const int want = omp_get_max_threads();
  const size_t slot = 1 + ts->record_length;
  double *msg = malloc(sizeof(double) * (2 + (size_t)want * slot));
  long *ids = malloc(sizeof(long) * (size_t)want);
  if (!msg || !ids) MPI_Abort(MPI_COMM_WORLD, 1);
  int k = 0;
  for (;;) {
    msg[0] = want, msg[1] = k;
    MPI_Send(msg, (int)(2 + (size_t)k * slot), MPI_DOUBLE, 0, TAG_RESULTS, MPI_COMM_WORLD);
    MPI_Status s;
    MPI_Recv(ids, want, MPI_LONG, 0, TAG_TASKS, MPI_COMM_WORLD, &s);
    MPI_Get_count(&s, MPI_LONG, &k);
    if (k == 0) break;
#pragma omp parallel for schedule(dynamic)
    for (int j = 0; j < k; j++) {
      double *r = msg + 2 + (size_t)j * slot;
      r[0] = (double)ids[j];
      ts->run(ts->ctx, ids[j], r + 1);
    }
  }
  free(msg), free(ids);
  return 0;
}
#endif

int nh_run_tasks(const nh_task_set *ts, nh_progress *prog) {
#ifdef NHBENCH_MPI
  const int ranks = nh_study_ranks();
  if (ranks > 1) return nh_study_rank() == 0 ? collect(ts, prog, ranks) : work(ts);
#endif
  return run_local(ts, prog);
}
