/* Where a study's tasks run (studies/tasks.h, nh_run_tasks): over the OpenMP threads of this
 * process, or, in the MPI build (-DNHBENCH_MPI=ON) under mpirun with more than one rank, over the
 * ranks with their threads.
 *
 * The unit of work is a group (studies/tasks.h): with group_width, the groups are formed once,
 * before running, on the process that keeps the results (only it knows which tasks are done); a
 * group of one runs through run, as without groups (a method without lanes keeps its one path).
 * Without group_width every task is a group of its own, numbered as the task, and nothing is
 * allocated for the groups: the run is exactly the one before groups existed.
 *
 * MPI: rank 0 keeps the results (and the journal, and writes the file); every thread of every
 * other rank asks it for one group at a time and sends the group's records back with its next
 * request (dynamic scheduling down to the thread: a slow method keeps one thread busy, all the
 * others go on), and rank 0 takes every record as the local loop would, through the task set's
 * `take`, one task at a time. A record is the task's results as doubles, exactly what the
 * checkpoint journal keeps, so a task's numbers are the same bits on whichever rank and thread it
 * ran: results do not depend on the number of ranks or threads. Message to rank 0 (tag RESULTS):
 * [thread, n, then (group, n records) if n > 0], at most 3 + NH_TASK_GROUP_MAX · record_length
 * doubles; reply (tag TASKS + thread): [group, its n tasks] as longs, or nothing when all are
 * handed out (the thread then stops). The worker learns n from the reply's length; rank 0 takes
 * a group's tasks from its own table, not from the message. */
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

/* The groups of a run. Without group_width, first and tasks are NULL and group g is task g (none
 * when it is done); with it, group g holds tasks[first[g]] ... tasks[first[g + 1] - 1]. */
typedef struct {
  long n;
  long *first;
  long *tasks;
} task_groups;

static int is_done(const nh_task_set *ts, long task) { return ts->done && ts->done[task]; }
static int kind_of(const nh_task_set *ts, long task) { return ts->kind ? ts->kind(ts->ctx, task) : 0; }

/* How many tasks a group led by task holds at most: group_width's answer, which a careless caller
 * may give as 0, negative or too wide, within [1, NH_TASK_GROUP_MAX]. */
static int width_of(const nh_task_set *ts, long task) {
  const int w = ts->group_width(ts->ctx, task);
  return w < 1 ? 1 : w > NH_TASK_GROUP_MAX ? NH_TASK_GROUP_MAX : w;
}

static void free_groups(task_groups *gs) {
  free(gs->first), free(gs->tasks);
  gs->first = gs->tasks = NULL, gs->n = 0;
}

/* gs: the groups of the tasks not done, as studies/tasks.h forms them. A group's scan ahead for
 * its kind passes over the tasks of the other kinds, and a kind's last group scans to the end:
 * O(count · kinds) at worst, against tasks that each take an integration. 0, or -1 out of memory
 * (gs then holds no groups). */
static int form_groups(const nh_task_set *ts, task_groups *gs) {
  *gs = (task_groups){ts->count, NULL, NULL};
  if (!ts->group_width) return 0;
  const size_t count = (size_t)ts->count;
  gs->first = malloc(sizeof(long) * (count + 1));
  gs->tasks = malloc(sizeof(long) * (count + 1));
  char *grouped = calloc(count + 1, 1);
  if (!gs->first || !gs->tasks || !grouped) return free(grouped), free_groups(gs), -1;
  long m = 0;
  gs->n = 0;
  for (long i = 0; i < ts->count; i++) {
    if (is_done(ts, i) || grouped[i]) continue;
    const int width = width_of(ts, i), kind = kind_of(ts, i);
    gs->first[gs->n++] = m;
    for (long j = i, held = 0; j < ts->count && held < width; j++)
      if (!is_done(ts, j) && !grouped[j] && kind_of(ts, j) == kind) grouped[j] = 1, gs->tasks[m++] = j, held++;
  }
  gs->first[gs->n] = m;
  free(grouped);
  return 0;
}

/* Group g's tasks into tasks (room for NH_TASK_GROUP_MAX) and their number; 0: a task done,
 * without groups (nothing to run). */
static int group_at(const nh_task_set *ts, const task_groups *gs, long g, long *tasks) {
  if (!gs->first) return tasks[0] = g, !is_done(ts, g);
  const int n = (int)(gs->first[g + 1] - gs->first[g]);
  memcpy(tasks, gs->tasks + gs->first[g], sizeof(long) * (size_t)n);
  return n;
}

/* records[i]: the i-th of n records laid one after the other from base. */
static void point_records(double *base, size_t length, int n, double **records) {
  for (int i = 0; i < n; i++) records[i] = base + (size_t)i * length;
}

/* Runs a group: alone through run (a group of one, or a task set that gave no run_group), else
 * through run_group. */
static void run_group(const nh_task_set *ts, const long *tasks, int n, double *const *records) {
  if (n > 1 && ts->run_group)
    ts->run_group(ts->ctx, tasks, n, records);
  else
    for (int i = 0; i < n; i++) ts->run(ts->ctx, tasks[i], records[i]);
}

/* Takes each of a group's records on its own, as a task's (records NULL: they could not be
 * allocated), and ticks each task with an even share of the group's seconds: a failed take does
 * not keep the others from being taken. 0, or -1 if one was not. */
static int take_group(const nh_task_set *ts, const long *tasks, int n, double *const *records, int remote,
                      double seconds, nh_progress *prog) {
  int failed = 0;
  for (int i = 0; i < n; i++) {
    int taken;
#pragma omp critical(nh_take)
    taken = records && ts->take(ts->ctx, tasks[i], records[i], remote) >= 0;
    failed |= !taken;
    ts->kind ? nh_progress_tick_kind(prog, ts->kind(ts->ctx, tasks[i]), seconds / n) : nh_progress_tick(prog);
  }
  return failed ? -1 : 0;
}

/* The groups over this process's threads; each group's records are taken as soon as it ends. */
static int run_local(const nh_task_set *ts, const task_groups *gs, nh_progress *prog) {
  int failed = 0;
#pragma omp parallel for schedule(dynamic)
  for (long g = 0; g < gs->n; g++) {
    long tasks[NH_TASK_GROUP_MAX];
    double *records[NH_TASK_GROUP_MAX];
    const int n = group_at(ts, gs, g, tasks);
    if (!n) continue;
    double *rec = malloc(sizeof(double) * ts->record_length * (size_t)n);
    if (rec) point_records(rec, ts->record_length, n, records);
    double seconds = omp_get_wtime();
    if (rec) run_group(ts, tasks, n, records);
    seconds = omp_get_wtime() - seconds;
    if (take_group(ts, tasks, n, rec ? records : NULL, 0, seconds, prog) < 0) {
#pragma omp atomic write
      failed = 1;
    }
    free(rec);
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
enum { MAX_THREADS = 1024 };             /* threads per worker rank: rank 0's table of send times */

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

/* The next group to hand out, from *next on (without groups, the tasks done are skipped): its
 * size, 0 when none is left; the reply to send in reply, [group, its tasks]. */
static int next_group(const nh_task_set *ts, const task_groups *gs, long *next, long *reply) {
  for (; *next < gs->n; ++*next) {
    const int n = group_at(ts, gs, *next, reply + 1);
    if (n > 0) return reply[0] = (*next)++, n;
  }
  return 0;
}

/* Rank 0's side of a worker's request: the records of the group in msg ([thread, n, group,
 * records]), taken as the local loop would (remote), with the time since the group was sent. */
static int take_remote(const nh_task_set *ts, const task_groups *gs, double *msg, double seconds, nh_progress *prog) {
  long tasks[NH_TASK_GROUP_MAX];
  double *records[NH_TASK_GROUP_MAX];
  const int n = group_at(ts, gs, (long)msg[2], tasks);
  point_records(msg + 3, ts->record_length, n, records);
  return take_group(ts, tasks, n, records, 1, seconds, prog);
}

/* Rank 0: hands the groups out one at a time to whichever worker thread asks, and takes the
 * records each request brings back. */
static int collect(const nh_task_set *ts, const task_groups *gs, nh_progress *prog, int ranks) {
  const int none = 0;
  const size_t most = 3 + NH_TASK_GROUP_MAX * ts->record_length; /* doubles in a message */
  int *threads = calloc((size_t)ranks, sizeof(int)), active = 0, failed = 0;
  double *msg = malloc(sizeof(double) * most);
  double *sent_at = calloc((size_t)ranks * MAX_THREADS, sizeof(double)); /* [rank][thread] */
  if (!threads || !msg || !sent_at) MPI_Abort(MPI_COMM_WORLD, 1);
  MPI_Gather(&none, 1, MPI_INT, threads, 1, MPI_INT, 0, MPI_COMM_WORLD);
  for (int r = 1; r < ranks; r++) active += threads[r];
  long next = 0;
  while (active > 0) {
    MPI_Status s;
    wait_for_results(&s);
    MPI_Recv(msg, (int)most, MPI_DOUBLE, s.MPI_SOURCE, TAG_RESULTS, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
    const int thread = (int)msg[0];
    double *since = &sent_at[(size_t)s.MPI_SOURCE * MAX_THREADS + (size_t)thread % MAX_THREADS];
    /* the records of the group handed out before */
    if (msg[1] > 0 && take_remote(ts, gs, msg, MPI_Wtime() - *since, prog) < 0) failed = 1;
    long reply[1 + NH_TASK_GROUP_MAX];
    const int n = next_group(ts, gs, &next, reply);
    MPI_Send(reply, n ? 1 + n : 0, MPI_LONG, s.MPI_SOURCE, TAG_TASKS + thread, MPI_COMM_WORLD);
    *since = MPI_Wtime();
    if (!n) active--;
  }
  free(threads), free(msg), free(sent_at);
  return failed ? -1 : 0;
}

/* A worker rank: each thread asks for a group, runs it, and sends its records with the next
 * request (MPI called by one thread at a time), until none are left. */
static int work(const nh_task_set *ts) {
  int threads = worker_threads();
  if (threads > MAX_THREADS) threads = MAX_THREADS;
  MPI_Gather(&threads, 1, MPI_INT, NULL, 0, MPI_INT, 0, MPI_COMM_WORLD);
#pragma omp parallel num_threads(threads)
  {
    const int me = omp_get_thread_num();
    const size_t length = ts->record_length;
    double *msg = malloc(sizeof(double) * (3 + NH_TASK_GROUP_MAX * length));
    if (!msg) MPI_Abort(MPI_COMM_WORLD, 1);
    msg[0] = me, msg[1] = 0;
    for (;;) {
      long reply[1 + NH_TASK_GROUP_MAX]; /* [group, its tasks] */
      int got;
#pragma omp critical(nh_mpi)
      {
        MPI_Status s;
        MPI_Send(msg, (int)(msg[1] > 0 ? 3 + (size_t)msg[1] * length : 2), MPI_DOUBLE, 0, TAG_RESULTS, MPI_COMM_WORLD);
        MPI_Recv(reply, 1 + NH_TASK_GROUP_MAX, MPI_LONG, 0, TAG_TASKS + me, MPI_COMM_WORLD, &s);
        MPI_Get_count(&s, MPI_LONG, &got);
      }
      if (!got) break;
      double *records[NH_TASK_GROUP_MAX];
      point_records(msg + 3, length, got - 1, records);
      msg[1] = got - 1, msg[2] = (double)reply[0];
      run_group(ts, reply + 1, got - 1, records);
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

/* The groups over the ranks under MPI, else over this process's threads. */
static int run_groups(const nh_task_set *ts, const task_groups *gs, nh_progress *prog) {
#ifdef NHBENCH_MPI
  const int ranks = nh_study_ranks();
  if (ranks > 1) return collect(ts, gs, prog, ranks);
#endif
  return run_local(ts, gs, prog);
}

/* A worker rank forms no groups: its done is not rank 0's (the journal is rank 0's), and rank 0
 * sends each group's tasks. Without memory for the groups nothing runs (under MPI the workers
 * are told there is nothing to do) and the run fails. */
int nh_run_tasks(const nh_task_set *ts, nh_progress *prog) {
  count_kinds(ts, prog);
#ifdef NHBENCH_MPI
  if (nh_study_ranks() > 1 && nh_study_rank() != 0) return work(ts);
#endif
  task_groups gs;
  const int formed = form_groups(ts, &gs);
  const int rc = run_groups(ts, &gs, prog);
  free_groups(&gs);
  return formed < 0 ? -1 : rc;
}
