/* The writer's building blocks (internal to results/): named dimensions, datasets that carry
 * their description, units and dimension names, dimension scales, scalar attributes. Every call
 * is a no-op once one has failed; the first failure's message stays in w->err. */
#ifndef NH_RESULTS_WRITER_H
#define NH_RESULTS_WRITER_H

#include <hdf5.h>

#include "results/results.h"

#define NH_W_DIMS 32

typedef struct {
  char name[32];
  hsize_t size;
  hid_t scale; /* the coordinate dataset (a dimension scale), or 0 (HDF5 IDs are positive) */
} nh_wdim;

typedef struct {
  hid_t file;
  const nh_study *st;
  const nh_study_kind_type *kind; /* the kind whose group is written (nh_w_kind_file) */
  int ndims;
  nh_wdim dim[NH_W_DIMS];
  int failed;
  char err[512];
} nh_writer;

void nh_w_fail(nh_writer *w, const char *fmt, ...);

/* Scratch for the write: N zeroed elements of SIZE bytes (N may be 0), freed by free(). NULL once
 * the write has failed, and NULL failing it ("out of memory") if there is no memory: a caller
 * that returns on NULL leaves every later call a no-op. */
void *nh_w_array(nh_writer *w, size_t n, size_t size);
void nh_w_out_of_memory(nh_writer *w); /* fails the write: "out of memory" */

/* Declares dimension NAME of SIZE (or changes the size of one without a coordinate dataset); a
 * negative SIZE fails the write. */
void nh_w_dim(nh_writer *w, const char *name, long long size);

/* Forgets dimension NAME (and its coordinate dataset), e.g. before the next grid's. */
void nh_w_undim(nh_writer *w, const char *name);

/* Datasets in LOC of shape DIMS ("method,h": the declared sizes, in order), with attributes
 * description, units and dimensions (= DIMS), each dimension labelled with its name and attached
 * to its coordinate dataset if it has one. data NULL is an error (a result field left unset). */
/* A row of a dataset written row by row: the values of its last `tail` dimensions at row i of
 * the leading ones (row-major); 0, or -1 if it cannot be had. */
typedef int (*nh_w_row_fn)(const void *ctx, long long i, double *out);
/* nh_w_f64 for data that is not in memory at once (a streamed run's journal): each row fetched
 * (as doubles) and written in turn; nh_w_rows stores them as ftype (e.g. H5T_STD_I32LE). */
void nh_w_rows(nh_writer *w, hid_t loc, const char *name, const char *dims, hid_t ftype, int tail, nh_w_row_fn row,
               const void *ctx, const char *units, const char *desc);
void nh_w_f64_rows(nh_writer *w, hid_t loc, const char *name, const char *dims, int tail, nh_w_row_fn row,
                   const void *ctx, const char *units, const char *desc);
void nh_w_f64(nh_writer *w, hid_t loc, const char *name, const char *dims, const double *data, const char *units,
              const char *desc);
void nh_w_i32(nh_writer *w, hid_t loc, const char *name, const char *dims, const int *data, const char *units,
              const char *desc);
void nh_w_cost(nh_writer *w, hid_t loc, const char *name, const char *dims, const nh_cost *data, const char *desc);
/* The columns of result r (studies/columns.h) that st has and the writer writes generically (not
 * SCRATCH, not APART), each with its descriptor's dimensions, units and description. */
void nh_w_columns(nh_writer *w, hid_t loc, const nh_result_column *cols, const void *r);
/* Column NAME of cols written row by row (nh_w_rows, stored as its type), its attributes from its
 * descriptor. */
void nh_w_column_rows(nh_writer *w, hid_t loc, const nh_result_column *cols, const char *name, int tail,
                      nh_w_row_fn row, const void *ctx);
/* A compound dataset: ftype in the file, mtype in memory (records with variable-length strings are fine). */
void nh_w_compound(nh_writer *w, hid_t loc, const char *name, const char *dims, hid_t ftype, hid_t mtype,
                   const void *data, const char *units, const char *desc);
void nh_w_strings(nh_writer *w, hid_t loc, const char *name, const char *dim, const char *const *data,
                  const char *desc);
/* Coordinate datasets: 1-D, made the dimension scale of dimension DIM (declared beforehand). */
void nh_w_scale_f64(nh_writer *w, hid_t loc, const char *name, const char *dim, const double *data,
                    const char *units, const char *desc);
void nh_w_scale_strings(nh_writer *w, hid_t loc, const char *name, const char *dim, const char *const *data,
                        const char *desc);

/* Scalar attributes (dataspace H5S_SCALAR; strings variable-length UTF-8) and string arrays. */
void nh_w_attr_str(nh_writer *w, hid_t obj, const char *name, const char *value);
void nh_w_attr_f64(nh_writer *w, hid_t obj, const char *name, double value);
void nh_w_attr_i32(nh_writer *w, hid_t obj, const char *name, int value);
void nh_w_attr_i64(nh_writer *w, hid_t obj, const char *name, long long value);
void nh_w_attr_strings(nh_writer *w, hid_t obj, const char *name, int count, const char *const *values);

/* A group (closed by the caller; -1 after a failure). */
hid_t nh_w_group(nh_writer *w, hid_t loc, const char *name, const char *desc);

/* What every study group holds: methods (scale of "method"), primary, order_claimed, the initial
 * conditions (ic_names: scale of "ic"; q0, v0 [ic][dof]) and state_labels (scale of "state"). Also
 * declares dimensions method, ic, dof, state, multiplier. nic ICs from q0/v0 [ic][n], names from
 * names[ic] (NULL: "random I"). */
void nh_w_common(nh_writer *w, hid_t g, int nic, const double *q0, const double *v0, char *const *names);

/* The sampled observables of runs RUN_DIMS ("method,ic", "method,h,ic") × nsamples: group
 * observables with one dataset per observable, and the writer's per-run summaries. */
void nh_w_observables(nh_writer *w, hid_t g, const char *run_dims, long long runs, int nsamples,
                      const nh_samples *s);

/* Writes a complete file: provenance on the root, group /<kind>, body(w, group, r), the kind st's
 * (nh_w_file) or the one given (nh_w_kind_file, w->kind). */
typedef void (*nh_w_body)(nh_writer *w, hid_t group, const void *r);
int nh_w_file(const char *path, const nh_study *st, nh_w_body body, const void *r, const char *command, char *err,
              size_t errlen);
int nh_w_kind_file(const char *path, const nh_study *st, const nh_study_kind_type *kind, nh_w_body body,
                   const void *r, const char *command, char *err, size_t errlen);

#endif
