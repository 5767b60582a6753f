/* The shared HDF5 writer (schema: results/README.md). A file is written under a temporary name
 * and renamed onto its destination only when complete, so a failed run never replaces a good
 * result file. */
#include <hdf5.h>
#include <hdf5_hl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "studies/study.h"

#define NH_SCHEMA_VERSION 1

#ifndef NHBENCH_VERSION
#define NHBENCH_VERSION "unknown"
#endif
#ifndef NHBENCH_COMPILER
#define NHBENCH_COMPILER "unknown"
#endif

static int put_doubles(hid_t loc, const char *name, int rank, const hsize_t *dims, const double *data) {
  return H5LTmake_dataset_double(loc, name, rank, dims, data) < 0 ? -1 : 0;
}

static int put_ints(hid_t loc, const char *name, int rank, const hsize_t *dims, const int *data) {
  return H5LTmake_dataset_int(loc, name, rank, dims, data) < 0 ? -1 : 0;
}

/* Cost counters as an [cells][5] uint64 dataset with its column names. */
static int put_costs(hid_t loc, const char *name, int rank, const hsize_t *dims, const nh_cost *cost) {
  hsize_t d[3];
  for (int i = 0; i < rank; i++) d[i] = dims[i];
  d[rank] = sizeof(nh_cost) / sizeof(unsigned long long);
  if (H5LTmake_dataset(loc, name, rank + 1, d, H5T_NATIVE_ULLONG, cost) < 0) return -1;
  return H5LTset_attribute_string(loc, name, "columns",
                                  "steps,rhs_evals,jacobian_evals,linear_solves,newton_iterations") < 0
             ? -1
             : 0;
}

static int put_strings(hid_t loc, const char *name, int count, char *const *strings) {
  hid_t type = H5Tcopy(H5T_C_S1);
  H5Tset_size(type, H5T_VARIABLE);
  H5Tset_cset(type, H5T_CSET_UTF8);
  hsize_t dims[1] = {(hsize_t)count};
  hid_t space = H5Screate_simple(1, dims, NULL);
  hid_t ds = H5Dcreate2(loc, name, type, space, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  int rc = ds < 0 || H5Dwrite(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, strings) < 0 ? -1 : 0;
  if (ds >= 0) H5Dclose(ds);
  H5Sclose(space);
  H5Tclose(type);
  return rc;
}

static int put_attr_str(hid_t loc, const char *name, const char *value) {
  return H5LTset_attribute_string(loc, ".", name, value ? value : "") < 0 ? -1 : 0;
}

static int put_attr_double(hid_t loc, const char *name, const double *v, size_t n) {
  return H5LTset_attribute_double(loc, ".", name, v, n) < 0 ? -1 : 0;
}

static int put_attr_int(hid_t loc, const char *name, int v) {
  return H5LTset_attribute_int(loc, ".", name, &v, 1) < 0 ? -1 : 0;
}

/* Root attributes: the study and its full provenance. */
static int put_provenance(hid_t file, const nh_study *st, const char *kind, const char *command) {
  char sys[512], date[64];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  nh_system_format(&st->sys, sys, sizeof sys);
  int rc = 0;
  rc |= put_attr_int(file, "schema_version", NH_SCHEMA_VERSION);
  rc |= put_attr_str(file, "study", kind);
  rc |= put_attr_str(file, "system", sys);
  rc |= put_attr_str(file, "spec_file", st->spec_file);
  rc |= put_attr_str(file, "spec_text", st->spec_text);
  rc |= put_attr_str(file, "overrides", st->overrides);
  rc |= put_attr_str(file, "command", command);
  rc |= put_attr_str(file, "version", NHBENCH_VERSION);
  rc |= put_attr_str(file, "compiler", NHBENCH_COMPILER);
  rc |= put_attr_str(file, "date", date);
  rc |= put_attr_int(file, "threads", omp_get_max_threads());
  rc |= put_attr_double(file, "T", &st->T, 1);
  return rc;
}

typedef int (*body_fn)(hid_t file, const nh_study *st, const void *r);

static int write_file(const char *path, const nh_study *st, const char *kind, body_fn body, const void *r,
                      const char *command, char *err, size_t errlen) {
  char tmp[4096];
  snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  hid_t file = H5Fcreate(tmp, H5F_ACC_TRUNC, H5P_DEFAULT, H5P_DEFAULT);
  if (file < 0) {
    snprintf(err, errlen, "%s: cannot create the results file", tmp);
    return -1;
  }
  int rc = put_provenance(file, st, kind, command) | body(file, st, r);
  rc |= H5Fclose(file) < 0 ? -1 : 0;
  if (rc == 0 && rename(tmp, path) != 0) rc = -1;
  if (rc) {
    snprintf(err, errlen, "%s: writing the results failed; any earlier file there is unchanged", path);
    remove(tmp);
  }
  return rc;
}

static int convergence_body(hid_t file, const nh_study *st, const void *vr) {
  const nh_convergence_result *r = vr;
  const int nm = st->nmethods, nh = st->nh, n = st->sys.n;
  hid_t g = H5Gcreate2(file, "convergence", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return -1;
  hsize_t dm[1] = {(hsize_t)nm}, dh[1] = {(hsize_t)nh}, dmh[2] = {(hsize_t)nm, (hsize_t)nh};
  int *claimed = malloc(sizeof(int) * (size_t)nm);
  for (int i = 0; i < nm; i++) claimed[i] = nh_method_order(st->methods[i]);
  int rc = 0;
  rc |= put_strings(g, "methods", nm, st->method_names);
  rc |= put_ints(g, "order_claimed", 1, dm, claimed);
  rc |= put_doubles(g, "h", 1, dh, st->h);
  rc |= put_doubles(g, "err", 2, dmh, r->err);
  rc |= put_doubles(g, "err_q", 2, dmh, r->err_q);
  rc |= put_doubles(g, "err_v", 2, dmh, r->err_v);
  rc |= put_doubles(g, "constraint_residual", 2, dmh, r->residual);
  rc |= put_ints(g, "status", 2, dmh, r->status);
  rc |= put_doubles(g, "z", 2, dmh, r->z);
  rc |= put_costs(g, "cost", 2, dmh, r->cost);
  rc |= put_doubles(g, "wall_time", 2, dmh, r->wall_time);
  rc |= put_doubles(g, "order", 1, dm, r->order);
  rc |= put_doubles(g, "order_stderr", 1, dm, r->order_stderr);
  rc |= put_ints(g, "fit_first", 1, dm, r->fit_first);
  rc |= put_ints(g, "fit_count", 1, dm, r->fit_count);
  rc |= put_ints(g, "order_expected", 1, dm, st->order_expected);
  rc |= put_strings(g, "order_reason", nm, st->order_reason);
  rc |= put_ints(g, "order_ok", 1, dm, r->order_ok);
  rc |= put_attr_double(g, "order_tolerance", &st->order_tolerance, 1);
  rc |= put_attr_str(g, "initial", st->initial);
  rc |= put_attr_double(g, "q0", st->x0.q, (size_t)n);
  rc |= put_attr_double(g, "v0", st->x0.v, (size_t)n);
  rc |= put_attr_double(g, "reference_q", r->reference.q, (size_t)n);
  rc |= put_attr_double(g, "reference_v", r->reference.v, (size_t)n);
  rc |= put_attr_str(g, "reference", r->reference_kind);
  rc |= put_attr_double(g, "reference_tol", &st->reference_tol, 1);
  rc |= put_attr_int(g, "fit_points", st->fit_points);
  rc |= put_attr_double(g, "error_floor", &st->error_floor, 1);
  free(claimed);
  H5Gclose(g);
  return rc;
}

static int grid_body(hid_t parent, const nh_grid *grid, int index) {
  char name[32];
  snprintf(name, sizeof name, "grid%d", index);
  hid_t g = H5Gcreate2(parent, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return -1;
  hsize_t d0[1] = {(hsize_t)grid->nvalues[0]}, d1[1] = {(hsize_t)grid->nvalues[1]};
  hsize_t d01[2] = {d0[0], d1[0]};
  int rc = 0;
  rc |= put_attr_str(g, "method", grid->template_name);
  rc |= put_attr_str(g, "param0", grid->param[0]);
  rc |= put_attr_str(g, "param1", grid->param[1]);
  rc |= put_doubles(g, "values0", 1, d0, grid->values[0]);
  rc |= put_doubles(g, "values1", 1, d1, grid->values[1]);
  rc |= put_ints(g, "method_index", 2, d01, grid->method_index);
  H5Gclose(g);
  return rc;
}

static int ensemble_body(hid_t file, const nh_study *st, const void *vr) {
  const nh_ensemble_result *r = vr;
  const int nm = st->nmethods, nic = st->count, ns = st->nsamples, n = st->sys.n;
  hid_t g = H5Gcreate2(file, "ensemble", H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) return -1;
  hsize_t dm[1] = {(hsize_t)nm}, ds[1] = {(hsize_t)ns}, dic[1] = {(hsize_t)nic};
  hsize_t dicn[2] = {(hsize_t)nic, (hsize_t)n}, dmic[2] = {(hsize_t)nm, (hsize_t)nic};
  hsize_t dms[2] = {(hsize_t)nm, (hsize_t)ns}, dmics[3] = {(hsize_t)nm, (hsize_t)nic, (hsize_t)ns};
  int *claimed = malloc(sizeof(int) * (size_t)nm);
  for (int i = 0; i < nm; i++) claimed[i] = nh_method_order(st->methods[i]);
  long long seed = (long long)st->seed; /* at most 2^53, checked by the spec loader */
  int rc = 0;
  rc |= put_strings(g, "methods", nm, st->method_names);
  rc |= put_ints(g, "order_claimed", 1, dm, claimed);
  rc |= put_doubles(g, "t", 1, ds, r->t);
  rc |= put_doubles(g, "q0", 2, dicn, r->q0);
  rc |= put_doubles(g, "v0", 2, dicn, r->v0);
  rc |= put_doubles(g, "E0", 1, dic, r->E0);
  rc |= put_doubles(g, "dE", 3, dmics, r->dE);
  rc |= put_doubles(g, "max_abs_dE", 2, dmic, r->max_abs_dE);
  rc |= put_doubles(g, "drift_slope", 2, dmic, r->drift_slope);
  rc |= put_doubles(g, "max_constraint_residual", 2, dmic, r->max_residual);
  rc |= put_ints(g, "status", 2, dmic, r->status);
  rc |= put_doubles(g, "dE_mean", 2, dms, r->dE_mean);
  rc |= put_doubles(g, "dE_var", 2, dms, r->dE_var);
  rc |= put_ints(g, "dE_count", 2, dms, r->dE_count);
  rc |= put_costs(g, "cost", 1, dm, r->cost);
  rc |= put_doubles(g, "wall_time", 1, dm, r->wall_time);
  rc |= put_attr_double(g, "h", &st->step, 1);
  rc |= put_attr_int(g, "sample_every", st->sample_every);
  rc |= put_attr_double(g, "divergence", &st->divergence, 1);
  rc |= put_attr_int(g, "count", st->count);
  rc |= put_attr_double(g, "energy", &st->energy, 1);
  rc |= H5LTset_attribute_long_long(g, ".", "seed", &seed, 1) < 0 ? -1 : 0;
  for (int i = 0; i < st->ngrids; i++) rc |= grid_body(g, &st->grids[i], i);
  rc |= put_attr_int(g, "grids", st->ngrids);
  free(claimed);
  H5Gclose(g);
  return rc;
}

int nh_write_convergence(const char *path, const nh_study *st, const nh_convergence_result *r,
                         const char *command, char *err, size_t errlen) {
  return write_file(path, st, "convergence", convergence_body, r, command, err, errlen);
}

int nh_write_ensemble(const char *path, const nh_study *st, const nh_ensemble_result *r,
                      const char *command, char *err, size_t errlen) {
  return write_file(path, st, "ensemble", ensemble_body, r, command, err, errlen);
}
