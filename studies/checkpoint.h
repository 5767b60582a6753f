/* A run's checkpoint journal: the results of each finished task appended to a file as it
 * finishes, so that `nhbench run --resume` continues a killed run where it stopped (see
 * studies/checkpoint.c for the layout and why a kill -9 cannot corrupt it). */
#ifndef NH_CHECKPOINT_H
#define NH_CHECKPOINT_H

#include <stddef.h>

typedef struct nh_checkpoint nh_checkpoint;

/* Called for every complete record of a resumed journal: the task and its n values (x is never
 * NULL, a record of no values too). */
typedef void (*nh_checkpoint_fn)(void *ctx, long task, const double *x, size_t n);

/* Opens the journal at path for a run identified by key (what must be equal for results to be
 * reusable: the spec text, overrides and version). resume = 0: a new, empty journal (an old one
 * is replaced). Tasks are 0 … ntasks − 1. resume = 1: an existing journal of the same key; its complete records are
 * replayed through fn, in order, and new ones appended after them; *resumed is the number of tasks
 * they hold (a task recorded twice counts once, and its last record is the one read). NULL with a message
 * in err on failure (no journal, another key, an I/O error, out of memory: the journal is then left
 * as it was). */
nh_checkpoint *nh_checkpoint_open(const char *path, const char *key, long ntasks, int resume, nh_checkpoint_fn fn,
                                  void *ctx, long *resumed, char *err, size_t errlen);
/* 1 if the journal at path was written for key, 0 if for another, -1 if it is not a readable
 * journal, NH_CHECKPOINT_NO_MEMORY if out of memory (for checking before a run starts). */
#define NH_CHECKPOINT_NO_MEMORY (-2)
int nh_checkpoint_matches(const char *path, const char *key);
/* Appends one task's record and makes it durable; 0, or -1 on an I/O error. Not thread-safe:
 * callers serialise. */
int nh_checkpoint_append(nh_checkpoint *c, long task, const double *x, size_t n);
/* Values [first, first + n) of task's record, read back from the file (pread: safe alongside
 * appends); 0, or -1 if the task has no record that long or on an I/O error. Tasks are
 * 0 … ntasks − 1 of nh_checkpoint_open. */
int nh_checkpoint_read(const nh_checkpoint *c, long task, size_t first, double *x, size_t n);
void nh_checkpoint_close(nh_checkpoint *c);

#endif
