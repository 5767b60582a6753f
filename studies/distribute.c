/* Where a study's tasks run (studies/study.h, nh_run_tasks): over the OpenMP threads of this
 * process, or, in the MPI build (-DNHBENCH_MPI=ON) under mpirun with more than one rank, over the
 * ranks with their threads.
 *
 * MPI: rank 0 keeps the results (and the journal, and writes the file); every thread of every
 * other rank asks it for one task at a time and sends the task's record back with its next
 * request (dynamic scheduling down to the thread: a slow method keeps one thread busy, all the
 * others go on), and rank 0 takes every record as the local loop would, through the task set's
 * `take`. A record is the task's results as doubles, exactly what the checkpoint journal keeps,
 * so a task's numbers are the same bits on whichever rank and thread it ran: results do not
 * depend on the number of ranks or threads. Message to rank 0 (tag RESULTS): [thread, k, then
 * (task, record) if k = 1]; reply (tag TASKS + thread): one task number, or none when all are
 * handed out (the thread then stops). */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

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
    double *rec = malloc(sizeof(double) * ts->record_length);
    double seconds = omp_get_wtime();
    if (rec) ts->run(ts->ctx, i, rec);
    seconds = omp_get_wtime() - seconds;
#pragma omp critical(nh_take)
    if (!rec || ts->take(ts->ctx, i, rec, 0) < 0) failed = 1;
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
enum { TAG_RESULTS = 1, TAG_TASKS = 2 }; /* a reply goes to thread t of a worker with tag TAG_TASKS + t */
enum { MAX_THREADS = 1024 };              /* threads per worker rank: rank 0's table of send times */

/* Rank 0 waits for a worker's message without spinning for long: MPI_Probe would busy-wait
 * (OpenMPI's default) on a core that a worker on the same node needs. It polls for SPIN_US (the
 * next message of a busy run comes soon), then every WAIT_US, which costs at most that much
 * latency per task against tasks of milliseconds to hours. */
#define SPIN_US 50
#define WAIT_US 200
static void wait_for_results(MPI_Status *s) {
  const struct timespec pause = {0, WAIT_US * 1000L};
  const double spin_until = MPI_Wtime() + SPIN_US * 1e-6;
  for (;;) {
    int flag;
    MPI_Iprobe(MPI_ANY_SOURCE, TAG_RESULTS, MPI_COMM_WORLD, &flag, s);
    if (flag) return;
    if (MPI_Wtime() > spin_until) nanosleep(&pause, NULL);
  }
}

/* The threads a worker rank runs tasks on: all of them when MPI lets them call it one at a time
 * (MPI_THREAD_SERIALIZED), else one. */
static int worker_threads(void) {
  int level = MPI_THREAD_SINGLE;
  MPI_Query_thread(&level);
  return level >= MPI_THREAD_SERIALIZED ? omp_get_max_threads() : 1;
}

/* Rank 0: hands the tasks not done out one at a time to whichever worker thread asks, and takes
 * the record each request brings back. */
static int collect(const nh_task_set *ts, nh_progress *prog, int ranks) {
  const int none = 0;
  int *threads = calloc((size_t)ranks, sizeof(int)), active = 0, failed = 0;
  double *msg = malloc(sizeof(double) * (3 + ts->record_length));
  double *sent_at = calloc((size_t)ranks * MAX_THREADS, sizeof(double)); /* [rank][thread] */
  if (!threads || !msg || !sent_at) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Gather(&none, 1, MPI_INT, threads, 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int r = 1; r < ranks; r++) active += threads[r];
  long next = 0;
  while (active > 0) {
    MPI_Status s;
    wait_for_results(&s);
    MPI_Recv(msg, (int)(3 + ts->record_length), MPI_DOUBLE, s.MPI_SOURCE, TAG_RESULTS, MPI_COMM_WORLD,
             MPI_STATUS_IGNORE);
    const int thread = (int)msg[0];
    double *since = &sent_at[(size_t)s.MPI_SOURCE * MAX_THREADS + (size_t)thread % MAX_THREADS];
    if (msg[1] > 0) { /* the record of the task handed out before */
      const long task = (long)msg[2];
      if (ts->take(ts->ctx, task, msg + 3, 1) < 0) failed = 1;
      const double seconds = MPI_Wtime() - *since;
      ts->kind ? nh_progress_tick_kind(prog, ts->kind(ts->ctx, task), seconds) : nh_progress_tick(prog);
    }
    while (next < ts->count && ts->done && ts->done[next]) next++;
    const int given = next < ts->count;
    MPI_Send(&next, given, MPI_LONG, s.MPI_SOURCE, TAG_TASKS + thread, MPI_COMM_WORLD);
    *since = MPI_Wtime();
    if (given) next++;
    else active--;
  }
  free(threads), free(msg), free(sent_at);
  return failed ? -1 : 0;
}

/* A worker rank: each thread asks for a task, runs it, and sends its record with the next request
 * (MPI called by one thread at a time), until none are left. */
static int work(const nh_task_set *ts) {
  int threads = worker_threads();
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  MPI_Gather(&threads, 1, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);
#pragma omp parallel num_threads(threads)
  {
    const int me = omp_get_thread_num();
    double *msg = malloc(sizeof(double) * (3 + ts->record_length));
    if (!msg) MPI_Abort(MPI_COMM_WORLD, 1);
    msg[0] = me, msg[1] = 0;
    for (;;) {
      long task;
      int got;
#pragma omp critical(nh_mpi)
      {
        MPI_Status s;
        MPI_Send(msg, (int)(msg[1] > 0 ? 3 + ts->record_length : 2), MPI_DOUBLE, 0, TAG_RESULTS, MPI_COMM_WORLD);
        MPI_Recv(&task, 1, MPI_LONG, 0, TAG_TASKS + me, MPI_COMM_WORLD, &s);
        MPI_Get_count(&s, MPI_LONG, &got);
      }
      if (!got) break;
      msg[1] = 1, msg[2] = (double)task;
      ts->run(ts->ctx, task, msg + 3);
    }
    free(msg);
  }
  return 0;
}
#endif

/* prog's kinds: the tasks of each kind still to run. Without memory, the plain estimate. */
static void count_kinds(const nh_task_set *ts, nh_progress *prog) {
  if (!ts->kind || ts->nkinds <= 0) return;
  long *left = calloc((size_t)ts->nkinds, sizeof(long));
  for (long i = 0; left && i < ts->count; i++) {
    const int k = ts->kind(ts->ctx, i);
    if (k >= 0 && k < ts->nkinds && !(ts->done && ts->done[i])) left[k]++;
  }
  if (left) nh_progress_kinds(prog, ts->nkinds, left);
  free(left);
}

int nh_run_tasks(const nh_task_set *ts, nh_progress *prog) {
  count_kinds(ts, prog);
#ifdef NHBENCH_MPI
  const int ranks = nh_study_ranks();
  if (ranks > 1) return nh_study_rank() == 0 ? collect(ts, prog, ranks) : work(ts);
#endif
  return run_local(ts, prog);
}
