/* Parallel tasks with a checkpoint journal (studies/study.h, nh_journaled_tasks): the kinds whose
 * results are small (convergence, trajectory, one-step, work-precision) keep them in memory and
 * journal each finished task's slots, so that `nhbench run --resume` takes the finished tasks from
 * the journal and runs only the others. The ensemble has its own journal, which also streams its
 * large rows (studies/ensemble.c).
 *
 * A record is 1 (the task ran to its end; 0: it ran out of memory and its record is dropped), then
 * the task's elements of every slot in order, each as doubles: a double's bits as they
 * are (NaN payloads and −0 survive), an int or a cost counter by value (exact below 2^53). A
 * replayed task is therefore bit-identical to the run that computed it, wall times included. */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "studies/checkpoint.h"
#include "studies/study.h"

enum { COST_FIELDS = 6 };

static size_t slot_doubles(const nh_task_slot *s) {
  return s->per * (s->type == NH_SLOT_COST ? COST_FIELDS : 1);
}

static size_t record_length(const nh_task_slot *slots, int nslots) {
  size_t len = 1; /* the task's outcome */
  for (int i = 0; i < nslots; i++) len += slot_doubles(&slots[i]);
  return len;
}

static void cost_fields(nh_cost *c, unsigned long long *f[COST_FIELDS]) {
  f[0] = &c->steps, f[1] = &c->rhs_evals, f[2] = &c->jacobian_evals, f[3] = &c->linear_solves,
  f[4] = &c->newton_iterations, f[5] = &c->constraint_evals;
}

/* Task's elements of every slot into rec. */
static void pack(const nh_task_slot *slots, int nslots, long task, double *rec) {
  for (int i = 0; i < nslots; i++) {
    const nh_task_slot *s = &slots[i];
    const size_t first = (size_t)task * s->per;
    for (size_t e = first; e < first + s->per; e++) {
      if (s->type == NH_SLOT_DOUBLE) {
        memcpy(rec++, (const double *)s->base + e, sizeof(double));
      } else if (s->type == NH_SLOT_INT) {
        *rec++ = ((const int *)s->base)[e];
      } else {
        unsigned long long *f[COST_FIELDS];
        cost_fields((nh_cost *)s->base + e, f);
        for (int k = 0; k < COST_FIELDS; k++) *rec++ = (double)*f[k];
      }
    }
  }
}

/* pack() backwards: a record into the task's elements of every slot. */
static void unpack(const nh_task_slot *slots, int nslots, long task, const double *rec) {
  for (int i = 0; i < nslots; i++) {
    const nh_task_slot *s = &slots[i];
    const size_t first = (size_t)task * s->per;
    for (size_t e = first; e < first + s->per; e++) {
      if (s->type == NH_SLOT_DOUBLE) {
        memcpy((double *)s->base + e, rec++, sizeof(double));
      } else if (s->type == NH_SLOT_INT) {
        ((int *)s->base)[e] = (int)*rec++;
      } else {
        unsigned long long *f[COST_FIELDS];
        cost_fields((nh_cost *)s->base + e, f);
        for (int k = 0; k < COST_FIELDS; k++) *f[k] = (unsigned long long)*rec++;
      }
    }
  }
}

typedef struct {
  const nh_task_slot *slots;
  int nslots;
  long count;
  size_t length; /* of a record */
  char *done;    /* [task]: replayed from the journal */
  int (*task)(void *ctx, long i);
  void *ctx;
  const char *path;
  nh_checkpoint *ck;
  int append_failed;
} journaled;

/* A record of the journal back into the slots (records of another shape or task range: ignored). */
static void replay_record(void *vj, long task, const double *x, size_t n) {
  journaled *j = vj;
  if (task < 0 || task >= j->count || n != j->length || x[0] != 1) return;
  unpack(j->slots, j->nslots, task, x + 1);
  j->done[task] = 1;
}

static void run_task(void *vj, long i, double *rec) {
  journaled *j = vj;
  rec[0] = j->task(j->ctx, i) == 0;
  pack(j->slots, j->nslots, i, rec + 1);
}

/* A finished task's record: into its slots if it ran on another rank, and into the journal. The
 * results are all in memory, so a journal that cannot be written costs only the resume. -1 for
 * a task that ran out of memory. */
static int take_task(void *vj, long i, const double *rec, int remote) {
  journaled *j = vj;
  if (rec[0] != 1) return -1;
  if (remote) unpack(j->slots, j->nslots, i, rec + 1);
  if (j->ck && nh_checkpoint_append(j->ck, i, rec, j->length) < 0 && !j->append_failed) {
    fprintf(stderr, "nhbench: cannot append to %s: %s; the results of this run are not affected\n", j->path,
            strerror(errno));
    j->append_failed = 1;
  }
  return 0;
}

int nh_journaled_tasks(const nh_study *st, const char *label, long count, int (*task)(void *ctx, long i), void *ctx,
                       const nh_task_slot *slots, int nslots, char *err, size_t errlen) {
  journaled j = {slots, nslots, count, record_length(slots, nslots), nh_calloc_array((size_t)count, 1), task, ctx,
                 st->checkpoint, NULL, 0};
  if (!j.done) return snprintf(err, errlen, "%s: out of memory for %ld tasks", st->spec_file, count), -1;
  long resumed = 0;
  if (st->checkpoint) {
    j.ck = nh_checkpoint_open(st->checkpoint, st->checkpoint_key, count, st->resume, replay_record, &j, &resumed, err,
                              errlen);
    /* The tasks taken, not the journal's: a record replay_record refused is not one of them. */
    resumed = 0;
    for (long i = 0; i < count; i++) resumed += j.done[i];
    if (j.ck && st->resume)
      fprintf(stderr, "nhbench: resuming: %ld of %ld %s tasks taken from %s\n", resumed, count, label, st->checkpoint);
  }
  /* Under MPI only rank 0 keeps the journal: every rank learns whether it opened. */
  if (nh_ranks_agree(st->checkpoint && !j.ck ? -1 : 0) < 0) {
    if (!st->checkpoint) snprintf(err, errlen, "%s: rank 0 could not open its journal", st->spec_file);
    return free(j.done), -1;
  }
  const nh_task_set ts = {count, j.done, j.length, run_task, take_task, NULL, 0, &j, NULL, NULL};
  nh_progress prog;
  nh_progress_start(&prog, label, count - resumed);
  const int rc = nh_run_tasks(&ts, &prog);
  nh_progress_end(&prog);
  nh_checkpoint_close(j.ck);
  free(j.done);
  if (rc < 0) snprintf(err, errlen, "%s: out of memory for the %s tasks' results", st->spec_file, label);
  return rc;
}
