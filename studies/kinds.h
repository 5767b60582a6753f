/* The study kinds as units (issue 48 item 2): each kind is a const table in the file of its runner
 * (studies/convergence.c, ensemble.c, trajectory.c, onestep.c, work_precision.c) and one line of
 * studies/kinds.def, like a system or a method. The table says what the kind is
 * (name, doc), what its result holds (its size and columns, studies/columns.h) and how it is run
 * and freed; the command line runs any kind through it, and the results layer writes its columns
 * from the descriptors. */
#ifndef NH_STUDIES_KINDS_H
#define NH_STUDIES_KINDS_H

#include <stddef.h>

#include "studies/columns.h"
#include "studies/spec.h"

struct nh_spec_ctx;      /* studies/spec_load.h */
struct config_setting_t; /* libconfig's */

/* Where a kind's results file takes its initial conditions from (results/write_kinds.c). */
typedef enum {
  NH_KIND_ICS_GIVEN, /* the spec's nic initial conditions (st->ics; st->x0 alone) */
  NH_KIND_ICS_FIRST, /* the one initial condition the kind runs from, st->x0 */
  NH_KIND_ICS_DRAWN  /* the result's columns q0 and v0, [ic][dof]: an ensemble's drawn states, or the given
                        ones (named as the spec names them) */
} nh_kind_ics;

/* The names of the points of a dimension of the kind's own, written as its coordinate. */
typedef struct {
  const char *dataset, *dim;
  const char *const *names; /* as many as the dimension has */
  const char *doc;
} nh_kind_labels;

/* What a kind's results file holds besides its columns (results/write_kinds.c writes any kind's
 * group from its table): its initial conditions, as ics says; the sizes of the kind's own
 * dimensions of result r ("sample", "point": set into d, the sizes its runner allocated with; NULL:
 * none of its own), and the names along one (labels; NULL: none); and the observables sampled along
 * its runs, over the run dimensions sample_runs ("method,h,ic"; NULL: none), the result's nh_samples
 * at offset samples. */
typedef struct {
  nh_kind_ics ics;
  const nh_kind_labels *labels;
  void (*own_dims)(const nh_study *st, const void *r, nh_column_dims *d);
  const char *sample_runs;
  size_t samples;
} nh_kind_file;

typedef struct nh_study_kind_type {
  nh_study_kind kind;
  const char *name;               /* the spec's study = "..." and the results file's group */
  const char *doc;                /* one line: what the kind measures */
  /* The spec's settings it takes besides those every kind takes, and the attributes of them its
   * results file keeps, as space-separated names of studies/settings.c's table (its settings, their
   * stored attributes). */
  const char *settings, *stores;
  size_t result_size;             /* bytes of its result (nh_<kind>_result) */
  const nh_result_column *columns; /* the result's arrays */
  /* Reads the kind's settings from the spec's root into st (the settings it takes, studies/settings.c,
   * are checked before: any other is refused), with studies/spec_load.h's readers: 0, or -1 with the
   * refusal written; load_with_methods (NULL: none) afterwards, with st's methods loaded. */
  int (*load)(const struct nh_spec_ctx *c, const struct config_setting_t *root, nh_study *st);
  int (*load_with_methods)(const struct nh_spec_ctx *c, const struct config_setting_t *root, nh_study *st);
  /* Runs st into r (result_size bytes): 0, or -1 with the reason in err; either way r is then
   * freed with free_result (which zeroes it). */
  int (*run)(const nh_study *st, void *r, char *err, size_t errlen);
  void (*free_result)(void *r);
  nh_kind_file file;
} nh_study_kind_type;

/* In a kind's file, before its table: run_kind and free_kind, the table's untyped entries, over
 * the kind's typed runner nh_run_NAME and its nh_NAME_result_free (studies/runs.h). */
#define NH_STUDY_KIND_ENTRIES(NAME)                                                                \
  static int run_kind(const nh_study *st, void *r, char *err, size_t errlen) {                   \
    return nh_run_##NAME(st, r, err, errlen);                                                    \
  }                                                                                              \
  static void free_kind(void *r) { nh_##NAME##_result_free(r); }

/* The sizes of every dimension of a result r of kind k: the study's (nh_column_dims_of_study) and
 * the kind's own (own_dims), which r's sizes (a trajectory's nsamples) must be set for. */
void nh_kind_dims(const nh_study_kind_type *k, const nh_study *st, const void *r, nh_column_dims *d);

/* Each kind's table, nh_<name>_kind, defined in its own file. */
#define NH_STUDY_KIND(name, NAME) extern const nh_study_kind_type nh_##name##_kind;
#include "studies/kinds.def"
#undef NH_STUDY_KIND

/* The registry, in nh_study_kind's order: nh_study_kinds[k]->kind == k. */
extern const nh_study_kind_type *const nh_study_kinds[NH_STUDY_KINDS];
/* The kind called name, or NULL. */
const nh_study_kind_type *nh_study_kind_named(const char *name);

#endif
