/* Reading the results files (schema: results/README.md) for nhbench info and export. Every
 * function that can fail prints its own message, naming the file, on stderr and returns -1 or
 * NULL; HDF5's automatic error stack printing is off. */
#ifndef NH_CLI_H5READ_H
#define NH_CLI_H5READ_H

#include <hdf5.h>

typedef struct {
  const char *prog; /* "nhbench info", for messages */
  const char *path;
  hid_t file;
  hid_t group;      /* /convergence or /ensemble */
  int ensemble;     /* 0: convergence study, 1: ensemble study */
  int nmethods;
  char **methods;   /* canonical names */
  int *primary;     /* [method] 1: listed in the spec's `methods`, 0: added by a grid only */
} nh_h5;

/* Opens a results file and reads the study kind and the method names. */
int nh_h5_open(nh_h5 *f, const char *prog, const char *path);
void nh_h5_close(nh_h5 *f);

/* Dataset NAME of the study group (a path such as "grid0/values0" is fine), converted to double,
 * int or unsigned long long. It must have rank `rank` and dims[i] == expect[i] wherever
 * expect[i] > 0; dims (may be NULL) receives its dimensions. The result is malloc'd. */
double *nh_h5_doubles(const nh_h5 *f, const char *name, int rank, const hsize_t *expect, hsize_t *dims);
int *nh_h5_ints(const nh_h5 *f, const char *name, int rank, const hsize_t *expect, hsize_t *dims);
unsigned long long *nh_h5_u64(const nh_h5 *f, const char *name, int rank, const hsize_t *expect,
                              hsize_t *dims);
/* Row `row` of a dataset of rank `rank` (its slice [row, ...]) as doubles; expect as above,
 * for the whole dataset. */
double *nh_h5_doubles_row(const nh_h5 *f, const char *name, hsize_t row, int rank, const hsize_t *expect);

/* Whether the study group has dataset NAME (0/1): for datasets newer files add. */
int nh_h5_has_dataset(const nh_h5 *f, const char *name);
/* A 1-D string dataset (variable or fixed length) as `count` malloc'd strings. */
char **nh_h5_strings(const nh_h5 *f, const char *name, int *count);
void nh_h5_free_strings(char **s, int count);

/* Attributes of object OBJ ("/" the root, "." the study group, or a path relative to it). A
 * missing attribute is an error. The string is malloc'd. */
char *nh_h5_attr_string(const nh_h5 *f, const char *obj, const char *name);
int nh_h5_attr_double(const nh_h5 *f, const char *obj, const char *name, double *v);
int nh_h5_attr_int(const nh_h5 *f, const char *obj, const char *name, int *v);
int nh_h5_attr_ll(const nh_h5 *f, const char *obj, const char *name, long long *v);
/* A numeric attribute of any size, as doubles (malloc'd); *n receives its length. */
double *nh_h5_attr_doubles(const nh_h5 *f, const char *obj, const char *name, int *n);
/* Whether OBJ has attribute NAME (0/1). */
int nh_h5_has_attr(const nh_h5 *f, const char *obj, const char *name);

/* The (param0, param1) grids of an ensemble study. */
typedef struct {
  char *method;       /* template method */
  char *param[2];
  int n[2];
  double *values[2];
  int *method_index;  /* [n0 × n1], −1: skipped */
} nh_h5_grid;
int nh_h5_read_grids(const nh_h5 *f, int *ngrids, nh_h5_grid **grids);
void nh_h5_free_grids(int ngrids, nh_h5_grid *grids);

/* Per-method ensemble statistics over the initial conditions that ran to T (status 0). */
typedef struct {
  int count, failures;
  double max_max_abs_dE, median_max_abs_dE;
  double mean_drift_slope, median_abs_drift_slope;
  double max_residual;
  double final_var; /* dE_var at the last sample; NaN when fewer than 2 trajectories reached it */
} nh_h5_stats;
/* The [method][ic] datasets of an ensemble study, read once. */
typedef struct {
  int nic, nsamples;
  double *max_abs_dE, *drift_slope, *max_residual, *final_var;
  int *status;
} nh_h5_ensemble;
int nh_h5_read_ensemble(const nh_h5 *f, nh_h5_ensemble *e);
void nh_h5_free_ensemble(nh_h5_ensemble *e);
void nh_h5_method_stats(const nh_h5_ensemble *e, int method, nh_h5_stats *s);

/* The step sizes of an order fit (studies/fit.c): `count` consecutive h by increasing size from
 * h[first]. NaN, NaN when there is none. */
void nh_h5_fit_range(const double *h, int nh, int first, int count, double *lo, double *hi);

/* The shortest decimal form of v that reads back exactly; "NaN", "Inf", "-Inf". */
const char *nh_h5_fmt(char *buf, size_t len, double v);

#endif
