/* Parallel tasks with a checkpoint journal (studies/study.h, nh_journaled_tasks): the kinds whose
 * results are small (convergence, trajectory, one-step, work-precision) keep them in memory and
 * journal each finished task's slots, so that `nhbench run --resume` takes the finished tasks from
 * the journal and runs only the others. The ensemble has its own journal, which also streams its
 * large rows (studies/runner.c).
 *
 * A record is the task's elements of every slot in order, each as doubles: a double's bits as they
 * are (NaN payloads and −0 survive), an int or a cost counter by value (exact below 2^53). A
 * replayed task is therefore bit-identical to the run that computed it, wall times included. */
#include <errno.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "studies/checkpoint.h"
#include "studies/study.h"

enum { COST_FIELDS = 6 };

static size_t slot_doubles(const nh_task_slot *s) {
  return s->per * (s->type == NH_SLOT_COST ? COST_FIELDS : 1);
}

static size_t record_length(const nh_task_slot *slots, int nslots) {
  size_t len = 0;
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
  char *done;
} replay;

/* A record of the journal back into the slots (records of another shape or task range: ignored). */
static void replay_record(void *ctx, long task, const double *x, size_t n) {
  replay *r = ctx;
  if (task < 0 || task >= r->count || n != record_length(r->slots, r->nslots)) return;
  unpack(r->slots, r->nslots, task, x);
  r->done[task] = 1;
}

int nh_journaled_tasks(const nh_study *st, const char *label, long count, void (*task)(void *ctx, long i), void *ctx,
                       const nh_task_slot *slots, int nslots, char *err, size_t errlen) {
  if (!st->checkpoint) {
    nh_parallel_tasks(label, count, task, ctx);
    return 0;
  }
  const size_t len = record_length(slots, nslots);
  replay r = {slots, nslots, count, calloc((size_t)count, 1)};
  if (!r.done) return snprintf(err, errlen, "%s: out of memory for %ld tasks", st->spec_file, count), -1;
  long resumed = 0;
  nh_checkpoint *ck = nh_checkpoint_open(st->checkpoint, st->checkpoint_key, count, st->resume, replay_record, &r,
                                         &resumed, err, errlen);
  if (!ck) return free(r.done), -1;
  if (st->resume)
    fprintf(stderr, "nhbench: resuming: %ld of %ld %s tasks taken from %s\n", resumed, count, label, st->checkpoint);
  int failed = 0;
  nh_progress prog;
  nh_progress_start(&prog, label, count - resumed);
#pragma omp parallel for schedule(dynamic)
  for (long i = 0; i < count; i++) {
    if (r.done[i]) continue;
    task(ctx, i);
    double *rec = malloc(sizeof(double) * (len ? len : 1));
    if (rec) pack(slots, nslots, i, rec);
#pragma omp critical(nh_checkpoint)
    if (!rec || nh_checkpoint_append(ck, i, rec, len)) {
      if (!failed) fprintf(stderr, "nhbench: cannot append to %s: %s\n", st->checkpoint, strerror(rec ? errno : ENOMEM));
      failed = 1;
    }
    free(rec);
    nh_progress_tick(&prog);
  }
  nh_progress_end(&prog);
  nh_checkpoint_close(ck);
  free(r.done);
  /* The results are all in memory: a journal that could not be written costs only the resume. */
  if (failed) fprintf(stderr, "nhbench: note: %s is incomplete; the results of this run are not affected\n", st->checkpoint);
  return 0;
}
