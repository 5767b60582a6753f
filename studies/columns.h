/* A study kind's result columns (issue 48 item 2): every array of a kind's result struct described
 * once, where the kind defines its result (studies/<kind>.c) — its dataset name, dimensions, type,
 * units and meaning, and its place in the struct. The descriptors drive what each kind used to list
 * four times by hand: the allocation and the freeing of the arrays (nh_result_columns_alloc,
 * _free), the checkpoint journal's slots of a task (nh_result_columns_slots) and the results
 * writer (results/writer.h, nh_w_columns), which writes each with its attributes. */
#ifndef NH_STUDIES_COLUMNS_H
#define NH_STUDIES_COLUMNS_H

#include <stddef.h>

#include "studies/spec.h"
#include "studies/tasks.h"

typedef enum { NH_COLUMN_F64, NH_COLUMN_I32, NH_COLUMN_COST } nh_column_type;

/* How a column is kept and written (bits of nh_result_column.flags). */
enum {
  NH_COLUMN_JOURNALED = 1, /* filled by the kind's tasks: its leading dimensions are a task's, and a task's
                              elements are its journal record's (nh_result_columns_slots) */
  NH_COLUMN_SCRATCH = 2,   /* the run's own: not written (e.g. what a derived table is made of) */
  NH_COLUMN_APART = 4,     /* written by the kind's writer itself (rows streamed from a journal, the
                              initial conditions every kind writes alike) */
  NH_COLUMN_SCALE = 8,     /* the coordinate (dimension scale) of its one dimension */
};

/* When a study has a column: held(st); `setting` says when in the spec's words ("round_trip = true")
 * for a column only some files have, NULL for one every file has that only some runs keep in
 * memory (an ensemble's streamed rows). */
typedef struct nh_column_condition {
  int (*held)(const nh_study *st);
  const char *setting;
} nh_column_condition;

typedef struct {
  const char *name;   /* the dataset's name in the study group */
  const char *dims;   /* its dimensions, slowest first ("method,h,state"); sizes from nh_column_dims */
  nh_column_type type;
  size_t field;       /* offsetof(the kind's result, the pointer to this column's data) */
  unsigned flags;     /* NH_COLUMN_* */
  const struct nh_column_condition *present; /* NULL: every study of the kind has the column */
  const char *units;  /* "as q, v", "energy", "s", "1", ... (results/README.md) */
  const char *doc;    /* the dataset's description */
} nh_result_column;
/* Tables end with a row whose name is NULL. */

/* The most journaled columns a kind has, with the slots it adds of its own. */
#define NH_COLUMN_MAX_SLOTS 32

/* The description of fit_floor, which convergence ([method][h]) and one-step ([h]) studies share. */
#define NH_FIT_FLOOR_DOC "the error floor: errors at or below it are left out of the order fit (error_floor_rule)"

/* The sizes of the dimensions a study's columns use, by name. */
#define NH_COLUMN_MAX_DIMS 16
typedef struct {
  int n;
  const char *name[NH_COLUMN_MAX_DIMS];
  long long size[NH_COLUMN_MAX_DIMS];
} nh_column_dims;
/* The dimensions every kind shares: method, h, ic (the study's initial conditions; an
 * ensemble sets its count as its own, studies/kinds.h own_dims), dof (n), state (2n), multiplier (k), repeat, norm
 * (NH_WP_NORMS) and lambda_slot (NH_MAX_K: a state's room for multipliers). */
void nh_column_dims_of_study(const nh_study *st, nh_column_dims *d);
/* Sets dimension name to size (a kind's own: point, sample); 0, or -1 if the table is full. */
int nh_column_dims_set(nh_column_dims *d, const char *name, long long size);
/* The size of a dimension; -1 if d does not know it. */
long long nh_column_dim(const nh_column_dims *d, const char *name);
/* The product of the sizes of the column's dimensions from the `from`-th on (0: all of them); -1
 * if one is unknown. */
long long nh_column_count(const nh_result_column *c, const nh_column_dims *d, int from);

/* The column's data in result r (a pointer to its first element, NULL if not allocated). */
void *nh_column_data(const nh_result_column *c, const void *r);
/* The column called name in the table, or NULL. */
const nh_result_column *nh_column_find(const nh_result_column *cols, const char *name);
/* Whether st's result has the column (its `present`). */
int nh_column_present(const nh_result_column *c, const nh_study *st);

/* Allocates, zeroed, every column st's result has: 0, or -1 out of memory (or an unknown
 * dimension): the caller frees r with nh_result_columns_free, whatever the outcome. */
int nh_result_columns_alloc(const nh_result_column *cols, const nh_study *st, const nh_column_dims *d, void *r);
/* Frees every column of r and sets its pointer to NULL. */
void nh_result_columns_free(const nh_result_column *cols, void *r);
/* The journal slots (studies/tasks.h) of the journaled columns of r, whose tasks are the
 * leading task_dims dimensions: written into slots (room for max), their number returned; -1 if
 * there is no room or a dimension is unknown. */
int nh_result_columns_slots(const nh_result_column *cols, const nh_study *st, const nh_column_dims *d, int task_dims,
                            const void *r, nh_task_slot *slots, int max);

#endif
