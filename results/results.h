/* Results files: the HDF5 schema (results/README.md, schema version 3) in one module that both
 * writes it (results/write*.c) and reads it (results/read*.c). A file describes itself: every
 * dataset carries its description, units and dimension names, and whatever is derived from the
 * runs (order fits, ensemble statistics, maxima, Pareto flags, which methods the spec listed) is
 * derived once, here, by the writer; readers only read. Floors: studies → results → bench. */
#ifndef NH_RESULTS_H
#define NH_RESULTS_H

#include <hdf5.h>
#include <stddef.h>

#include "studies/kinds.h"
#include "studies/study.h"

/* The version written, and the oldest one read: version 2 differs only in an ensemble's step size,
 * the group's attribute h where version 3 has the dataset h of every kind (nh_h5_steps). */
#define NH_SCHEMA_VERSION 3
#define NH_SCHEMA_OLDEST_READ 2

/* ---- writing ------------------------------------------------------------------------------- */

/* One results file per study run: written to PATH.tmp-PID and renamed onto PATH when complete;
 * on any failure the temporary file is removed and PATH is untouched. command (argv joined) is
 * recorded as provenance. Returns 0, or -1 with a message naming PATH (and the object that could
 * not be written) in err. */
int nh_write_convergence(const char *path, const nh_study *st, const nh_convergence_result *r,
                         const char *command, char *err, size_t errlen);
int nh_write_ensemble(const char *path, const nh_study *st, const nh_ensemble_result *r,
                      const char *command, char *err, size_t errlen);
int nh_write_trajectory(const char *path, const nh_study *st, const nh_trajectory_result *r,
                        const char *command, char *err, size_t errlen);
int nh_write_onestep(const char *path, const nh_study *st, const nh_onestep_result *r,
                     const char *command, char *err, size_t errlen);
int nh_write_work_precision(const char *path, const nh_study *st, const nh_work_precision_result *r,
                            const char *command, char *err, size_t errlen);
/* The same for a result of any kind: r is the nh_<kind>_result of st->kind (studies/kinds.h), or
 * of the kind given (nh_write_kind: a kind's group is written from its table alone). */
int nh_write_kind(const char *path, const nh_study *st, const nh_study_kind_type *kind, const void *r,
                  const char *command, char *err, size_t errlen);
int nh_write_study(const char *path, const nh_study *st, const void *r, const char *command, char *err,
                   size_t errlen);

/* The provenance every file records: nhbench's version (git describe --dirty) and the compiler
 * with the flags the numerics were built with. */
const char *nh_results_version(void);
const char *nh_results_compiler(void);

/* What the writer derives (results/derive.c), public so that tests can check it by hand. */

/* primary[m] = 1 if method m is listed in the spec's `methods`, 0 if only a grid added it (the
 * loader puts the listed ones first: methods[0 .. nprimary)). */
void nh_primary_methods(const nh_study *st, int *primary);

/* Per-method statistics of an ensemble over its initial conditions. Each statistic is over the
 * runs that reached T (status 0) whose value is not NaN; NaN when there is none. */
typedef struct {
  int ok;                        /* runs with status 0 */
  int failures;                  /* runs with status != 0 */
  double max_max_abs_dE;         /* max of max_abs_dE */
  double median_max_abs_dE;      /* median of max_abs_dE */
  double mean_drift_slope;       /* mean of drift_slope */
  double median_abs_drift_slope; /* median of |drift_slope| */
  double max_residual;           /* max of max_residual */
  double final_var;              /* dE_var at the last sample; NaN when dE_count there is < 2 */
} nh_ensemble_summary;
/* 0, or -1 (s untouched) if out of memory. */
int nh_ensemble_summarize(const nh_study *st, const nh_ensemble_result *r, int method, nh_ensemble_summary *s);

/* The step sizes an order fit used (nh_fit_order): `count` consecutive h by increasing size
 * from h[first]; NaN, NaN when there is none. */
void nh_fit_h_range(const double *h, int nh, int first, int count, double *lo, double *hi);


/* ---- reading ------------------------------------------------------------------------------- */
/* Every reading function that can fail prints its own message on stderr, naming the program,
 * the file and the object, and returns -1 or NULL; HDF5's own error printing is off. */

#define NH_H5_MAX_DIMS 32
typedef struct {
  const char *prog;   /* "nhbench info", for messages */
  const char *path;
  hid_t file;
  hid_t group;        /* the study group, /<kind> */
  nh_study_kind kind;
  const char *kind_name;
  int schema_version; /* NH_SCHEMA_OLDEST_READ .. NH_SCHEMA_VERSION */
  int nmethods;
  char **methods;     /* canonical names */
  int *primary;       /* [method], as stored */
  /* Dimension sizes met so far ("method", "h", ...): every dataset read must agree with them. */
  int ndims;
  char dim_name[NH_H5_MAX_DIMS][32];
  long long dim_size[NH_H5_MAX_DIMS];
} nh_h5;

/* Opens a results file of schema version 2 or 3 and reads the study kind, the method names and the
 * primary flags: 0, or -1 with a message. A version-1 file (schema_version 1, or nhbench's groups
 * without a version) is refused with a message saying to re-run the study; so are other versions
 * and foreign files. */
int nh_h5_open(nh_h5 *f, const char *prog, const char *path);
void nh_h5_close(nh_h5 *f);

/* The size of dimension NAME: from the datasets read so far, else from its coordinate dataset
 * (method: methods, h: h, ic: ic_names, ...). -1 with a message if unknown. */
long long nh_h5_dim(nh_h5 *f, const char *name);

/* Reads every dataset of the study group for the sizes of its dimensions, checked to agree from
 * dataset to dataset: afterwards f->dim_name/dim_size hold every dimension of the study (method, h,
 * ic, sample, ...; not a grid's own value0 and value1, nor an observable's component), in the
 * order met (datasets by name). 0, or -1 with a message. */
int nh_h5_learn_dims(nh_h5 *f);

/* Dataset NAME of the study group (a path such as "summary/ok" or "grid0/values0" is fine), whose
 * `dimensions` attribute must equal DIMS ("method,h"); its shape must agree with the sizes of
 * these dimensions known so far (and sets the others). shape (may be NULL) receives it. The
 * result is malloc'd, in C order. */
double *nh_h5_doubles(nh_h5 *f, const char *name, const char *dims, hsize_t *shape);
int *nh_h5_ints(nh_h5 *f, const char *name, const char *dims, hsize_t *shape);
nh_cost *nh_h5_costs(nh_h5 *f, const char *name, const char *dims, hsize_t *shape);
/* The slice [index[0], ..., index[nfixed-1], ...] of a dataset of doubles: the trailing
 * dimensions; shape receives the full shape. */
double *nh_h5_doubles_at(nh_h5 *f, const char *name, const char *dims, int nfixed, const long long *index,
                         hsize_t *shape);
/* The step sizes (*n of them): the dataset h, which every kind has from schema version 3 on; in a
 * version-2 ensemble the group's attribute h. malloc'd; NULL with a message. */
double *nh_h5_steps(nh_h5 *f, long long *n);
/* Whether the study group has dataset or group NAME (0/1). */
int nh_h5_has(const nh_h5 *f, const char *name);
/* A 1-D string dataset as `count` malloc'd strings. */
char **nh_h5_strings(nh_h5 *f, const char *name, const char *dims, int *count);
void nh_h5_free_strings(char **s, int count);

/* Attributes of object OBJ ("/" the root, "." the study group, or a path relative to it). A
 * missing attribute is an error. Strings are malloc'd. The numeric readers return 0, or -1 with a
 * message (callers test != 0: exactly 0 is success). */
int nh_h5_has_attr(const nh_h5 *f, const char *obj, const char *name);
int nh_h5_attr_is_string(const nh_h5 *f, const char *obj, const char *name);
char *nh_h5_attr_string(const nh_h5 *f, const char *obj, const char *name);
char **nh_h5_attr_strings(const nh_h5 *f, const char *obj, const char *name, int *count);
/* 1 if path is an HDF5 file (its signature), else 0; silent. */
int nh_h5_is_hdf5(const char *path);
/* The characters of the names a results file may hold where they reach a shell or gnuplot (the
 * plot scripts): observable names, and method names in the method syntax (rk4,
 * nh_newmark(beta=0.1,beta2=0.1,alpha=0.5), spark(s=2), lambda0=-1e-3). No quote, space, $ or ;. */
#define NH_H5_NAME_CHARS "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_"
#define NH_H5_METHOD_CHARS NH_H5_NAME_CHARS "(),=.+-"
/* 0 when each of the count names is non-empty and made of `allowed` only; else -1 with a message
 * naming `what` and the index (the name shown with non-printing bytes as '?'). */
int nh_h5_check_names(const nh_h5 *f, const char *what, char *const *names, int count, const char *allowed);
int nh_h5_attr_double(const nh_h5 *f, const char *obj, const char *name, double *v);
int nh_h5_attr_int(const nh_h5 *f, const char *obj, const char *name, int *v);
int nh_h5_attr_ll(const nh_h5 *f, const char *obj, const char *name, long long *v);
/* A numeric attribute of any size as doubles (malloc'd); *n receives its length. */
double *nh_h5_attr_doubles(const nh_h5 *f, const char *obj, const char *name, int *n);

/* The parameter grids of an ensemble study (groups gridG). */
typedef struct {
  char *method;       /* template method */
  char *param[2];
  int n[2];
  double *values[2];
  int *method_index;  /* [n0 × n1], −1: skipped */
} nh_h5_grid;
/* The grids, none: 0 and NULL. Returns 0, or -1 with a message. */
int nh_h5_read_grids(nh_h5 *f, int *ngrids, nh_h5_grid **grids);
void nh_h5_free_grids(int ngrids, nh_h5_grid *grids);

/* A row of the `orders` table of convergence studies (the compound dataset /convergence/orders). */
typedef struct {
  char *method;
  int claimed, expected;
  double observed, stderr_;
  int fit_first, fit_count;
  double fit_h_min, fit_h_max;
  int ok;
  char *reason;
} nh_order_row;
/* The whole table, one row per method (malloc'd; free with nh_h5_free_orders). */
nh_order_row *nh_h5_read_orders(nh_h5 *f);
void nh_h5_free_orders(nh_order_row *rows, int n);

/* The ensemble summary datasets (group summary), one entry per method. */
nh_ensemble_summary *nh_h5_read_ensemble_summary(nh_h5 *f);

/* The sampled observables of a trajectory or ensemble study (group observables). */
typedef struct {
  char *name, *description, *units;
  char *symbol; /* the axis label figures show (gnuplot enhanced text); NULL in files before it */
  int width;
  char **labels;  /* [width] */
  char **absent;  /* [method]: "" or why the method does not define it */
} nh_h5_observable;
/* The observables in the file's order (attribute `order` of the group), none: 0 and NULL.
 * Returns 0, or -1 with a message. */
int nh_h5_read_observables(nh_h5 *f, int *nobs, nh_h5_observable **obs);
void nh_h5_free_observables(int nobs, nh_h5_observable *obs);

/* Every dataset of the study group, in its subgroups too (name: the path in the group,
 * "summary/ok"), in name order, as the file describes it (results/read_list.c): what `nhbench info
 * --datasets` lists for a study of any kind. */
typedef struct {
  char *name, *dims, *units, *description; /* the attributes NULL where the dataset has none */
  int rank;                                /* -1: more than NH_H5_MAX_DIMS */
  long long shape[NH_H5_MAX_DIMS];
} nh_h5_dataset;
/* 0 with *n entries in *out (free with nh_h5_free_datasets), or -1 with a message. */
int nh_h5_datasets(nh_h5 *f, int *n, nh_h5_dataset **out);
void nh_h5_free_datasets(int n, nh_h5_dataset *d);

/* ---- a slice of any dataset by its dimension names (results/slice.c) ------------------------
 * What `nhbench export FILE dataset`, the claims checker (bench/claims) and through export the plots
 * read: a dataset of the study group with some dimensions fixed by selectors, over every
 * combination of the others. */
#define NH_H5_MAX_SELECT 8
typedef struct {
  char dim[32];  /* a dimension name of the dataset; "t" stands for its sample dimension */
  int by_name;   /* by a string: a method (as written, found by its canonical name), an ic name or a
                    component label (a label's unit in brackets may be left out) */
  char name[256];
  double value;  /* else by coordinate: h (to round-off), t (the nearest sample within half an
                    interval, halfway the earlier), or an index in any other dimension */
} nh_h5_select;

typedef struct {
  int rank;                            /* the dataset's */
  char dims[NH_H5_MAX_DIMS][32];       /* its dimension names, and their sizes */
  long long shape[NH_H5_MAX_DIMS];
  int nfree;                           /* the dimensions no selector fixed and of size > 1 */
  int free_dim[NH_H5_MAX_DIMS];        /* [free]: their index in dims, in the dataset's order */
  double *coord[NH_H5_MAX_DIMS];       /* [free][shape]: h the step sizes, sample the times (at the
                                          selected h where t is [h][sample]), else 0, 1, 2, ... */
  char coord_name[NH_H5_MAX_DIMS][32]; /* [free]: "h", "t", or the dimension's name for indices */
  long long count;                     /* values: every combination of the free indices */
  double *x;                           /* [count], C order (the last free dimension fastest):
                                          integers converted, a cost record's `field`, a string's
                                          1 if it is not empty */
} nh_h5_slice;

/* Dataset NAME of the study group sliced by the nsel selectors (each naming one of its dimensions;
 * a dimension of size 1 is fixed at 0). field: which counter of a cost record ("steps", ...).
 * 0, or -1 with "PATH: what went wrong" in why (s then holds nothing to free). */
int nh_h5_slice_read(nh_h5 *f, const char *name, const char *field, const nh_h5_select *sel, int nsel,
                     nh_h5_slice *s, char *why, size_t whylen);
/* The index in free dimension k of value i. */
long long nh_h5_slice_index(const nh_h5_slice *s, long long i, int k);
void nh_h5_slice_free(nh_h5_slice *s);
/* The index of method `text` (in the method syntax, matched by its canonical name) or of a name
 * in names[count] that equals text or is text followed by " [unit]"; -1 if none. */
int nh_h5_method_index(const nh_h5 *f, const char *text);
int nh_h5_name_index(char *const *names, int count, const char *text);

/* The shortest decimal form of v that reads back exactly; "NaN", "Inf", "-Inf". */
const char *nh_h5_fmt(char *buf, size_t len, double v);

#endif
