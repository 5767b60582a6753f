/* The task runtime of a study: tasks over OpenMP threads and MPI ranks (studies/distribute.c), the
 * checkpoint journal of finished tasks (studies/task_journal.c), progress on stderr
 * (studies/progress.c), the room a run needs checked before it starts, and a run's time limit. */
#ifndef NH_STUDIES_TASKS_H
#define NH_STUDIES_TASKS_H

#include <stddef.h>

#include "integrators/evolve.h" /* the one stepping loop */
#include "studies/spec.h"

/* Bytes of the sampled arrays the run of st keeps in memory until it writes its file (ensemble:
 * dE and the observables of every trajectory, the statistics per sample; trajectory: the
 * observables of every run); 0 for the kinds whose results are small. For the pre-flight. */
double nh_study_memory_estimate(const nh_study *st);
/* Whether the sampled results fit where they go, checked before computing (a run would otherwise
 * be killed, or fail to write, after hours): on disk, twice nh_study_memory_estimate (the journal
 * holds them uncompressed, and the file written from it is at most as large) against disk_free
 * (bytes free where the output goes); the kinds other than the ensemble (which streams) also keep
 * them in memory, against 80 % of memory (bytes). A capacity of 0 (unknown) passes. 0, or -1 with
 * what to change in err. */
int nh_study_check_room(const nh_study *st, double disk_free, double memory, char *err, size_t errlen);

/* The evolve observer (integrators/evolve.h) of a timed run: NH_RUN_TIMED_OUT once omp_get_wtime()
 * is past the deadline at ctx (a double), looked at every 64 steps (the clock costs about as much
 * as a step of rk4); else NH_STEP_OK. */
int nh_study_time_limit(void *ctx, const nh_evolve *e);

/* Progress on stderr for runs longer than a second (studies/progress.c). */
typedef struct {
  const char *label;
  long total;
  long done;
  double start, last_print;
  int printed;
  int threads;
  /* With kinds (nh_progress_kinds): per kind of task (e.g. a method), its tasks, those done and
   * their summed run time, so that the estimate of the time left does not take fast-failing
   * tasks of one kind for the cost of another's. */
  int nkinds;
  long *kind_total, *kind_done;
  double *kind_time;
} nh_progress;
void nh_progress_start(nh_progress *p, const char *label, long total);
/* Tasks come in nkinds kinds, kind k having total[k] of them; nh_progress_tick_kind then reports
 * each task with its kind and run time. Returns 0, or -1 out of memory (the plain estimate). */
int nh_progress_kinds(nh_progress *p, int nkinds, const long *total);
void nh_progress_tick(nh_progress *p); /* thread-safe */
void nh_progress_tick_kind(nh_progress *p, int kind, double seconds); /* thread-safe */
/* Seconds left at time `now`: with kinds, the tasks left of each kind times that kind's mean run
 * time (kinds with none done yet: the mean over the kinds that have), over the threads; without,
 * the elapsed time scaled by the tasks left per task done. */
double nh_progress_eta(const nh_progress *p, double now);
void nh_progress_end(nh_progress *p); /* also frees the kinds */
/* A study's tasks, for nh_run_tasks. run(ctx, i, record) runs task i and packs its results into
 * record (record_length ≥ 1 doubles; it may also fill its own slots of the result); take(ctx, i,
 * record, remote) receives the record on the rank that keeps the results (remote: it ran on
 * another rank, so the task's slots are still to be filled from the record): 0, or -1 when it
 * could not be kept (the run then fails). done (NULL: none) marks tasks not to run (taken from a
 * journal); kind (NULL: none) gives a task's kind, 0 … nkinds − 1, for the progress estimate. */
typedef struct {
  long count;
  const char *done;
  size_t record_length;
  void (*run)(void *ctx, long task, double *record);
  int (*take)(void *ctx, long task, const double *record, int remote);
  int (*kind)(void *ctx, long task);
  int nkinds;
  void *ctx;
  /* Groups (optional; group_width NULL: every task on its own). group_width(ctx, task): how many
   * tasks a group led by task may hold (≥ 1; 1: alone), at most NH_TASK_GROUP_MAX. The runtime
   * forms the groups before it starts, in task order, from the tasks not done: a group is led by the
   * first task not yet in one and takes the next tasks not done (not necessarily consecutive
   * numbers) of the same kind (kind(); all of one kind without it) until it holds group_width of
   * its leader. run_group(ctx, tasks, n, records) runs the n tasks of a group (tasks ascending),
   * packing task tasks[i]'s record into records[i] exactly as run would; each record is then taken
   * on its own, as a task's (take, the journal: one record per task, as without groups). A group is
   * one unit of work for a thread or an MPI worker; progress ticks each of its tasks, with the
   * group's time shared evenly. Results therefore depend on neither the grouping nor the threads,
   * provided run_group packs each task's record as run would. */
  int (*group_width)(void *ctx, long task);
  void (*run_group)(void *ctx, const long *tasks, int n, double *const *records);
} nh_task_set;
/* The most tasks in one group (the widest lanes, integrators/lanes.h). */
#define NH_TASK_GROUP_MAX 16
/* Runs every task not done (studies/distribute.c): over the OpenMP threads (dynamic schedule;
 * each record taken as its task ends), or in the MPI build under mpirun with more than one rank,
 * over the ranks: rank 0 hands tasks out and takes their records, the others run them with their
 * threads and keep nothing. Ticks prog (started by the caller) per task; with kinds, it first
 * gives prog the number of tasks of each kind to run (nh_progress_kinds). 0, or -1 if a take
 * failed or a record could not be allocated. */
int nh_run_tasks(const nh_task_set *ts, nh_progress *prog);
/* This process's MPI rank and the number of ranks (0 and 1 outside MPI); only rank 0 keeps
 * results, writes files and speaks. */
int nh_study_rank(void);
int nh_study_ranks(void);
/* Rank 0's rc on every rank (rc itself outside MPI): decisions only rank 0 can take (its file
 * system, the run's outcome) become every rank's, so that all exit alike. */
int nh_ranks_agree(int rc);
/* One per-task array of a result, for the checkpoint journal: task i owns the elements
 * [i·per, (i + 1)·per) of base, of the given type. */
typedef struct {
  void *base;
  enum { NH_SLOT_DOUBLE, NH_SLOT_INT, NH_SLOT_COST } type;
  size_t per;
} nh_task_slot;
/* Runs task(ctx, i) for every i in [0, count) over the OpenMP threads (dynamic schedule: tasks
 * differ in cost; each task writes only its own slots of the results, so they are the same
 * whatever the thread count), or over MPI ranks and their threads (nh_run_tasks), with progress
 * under LABEL and the study's checkpoint journal (st->checkpoint; NULL: none): each finished
 * task's elements of the slots are appended to it, and a resumed
 * run (st->resume) takes the tasks it holds from it, bit for bit, instead of running them
 * (studies/task_journal.c). A task returns 0, or -1 if it ran out of memory: its results are
 * neither kept nor journaled (a resumed run runs it again) and the study fails. Returns 0, or -1
 * with a message if the journal cannot be opened (none to resume, another run's) or a task ran
 * out of memory; a journal that fails later only notes it: the results are in memory. */
int nh_journaled_tasks(const nh_study *st, const char *label, long count, int (*task)(void *ctx, long i), void *ctx,
                       const nh_task_slot *slots, int nslots, char *err, size_t errlen);
/* The context of a study kind whose tasks need only the study and its result. */
typedef struct {
  const nh_study *st;
  void *result;
} nh_study_tasks;

#endif
