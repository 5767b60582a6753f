/* Reading helpers for nhbench info and export (bench/cli_h5read.h). */
#define _POSIX_C_SOURCE 200809L /* stat */
#include "bench/cli_h5read.h"

#include <errno.h>
#include <hdf5_hl.h>
#include <libconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "integrators/integrator.h"

#define NH_SCHEMA_VERSION 1
#define NH_MAX_RANK 8

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *d = malloc(n);
  memcpy(d, s, n);
  return d;
}

static hid_t loc_of(const nh_h5 *f, const char *obj) { return obj[0] == '/' ? f->file : f->group; }

static const char *group_name(const nh_h5 *f) { return f->ensemble ? "/ensemble" : "/convergence"; }

static void shape_str(char *buf, size_t len, int rank, const hsize_t *d, int wildcards) {
  size_t k = (size_t)snprintf(buf, len, "[");
  for (int i = 0; i < rank && k < len; i++) {
    if (wildcards && d[i] == 0) k += (size_t)snprintf(buf + k, len - k, "%s*", i ? " x " : "");
    else k += (size_t)snprintf(buf + k, len - k, "%s%llu", i ? " x " : "", (unsigned long long)d[i]);
  }
  if (k < len) snprintf(buf + k, len - k, "]");
}

/* Dataset NAME of the study group, whole or its slice [row, ...] (row >= 0), converted to memtype. */
static void *read_data(const nh_h5 *f, const char *name, hid_t memtype, H5T_class_t cls, size_t elsize,
                       int rank, const hsize_t *expect, hsize_t *dims_out, long long row) {
  if (H5Lexists(f->group, name, H5P_DEFAULT) <= 0) {
    fprintf(stderr, "%s: %s: missing dataset %s/%s\n", f->prog, f->path, group_name(f), name);
    return NULL;
  }
  void *data = NULL;
  hid_t ds = H5Dopen2(f->group, name, H5P_DEFAULT);
  hid_t space = ds < 0 ? -1 : H5Dget_space(ds);
  hid_t type = ds < 0 ? -1 : H5Dget_type(ds);
  hid_t mspace = -1;
  hsize_t d[NH_MAX_RANK];
  int r = space < 0 ? -1 : H5Sget_simple_extent_ndims(space);
  if (ds < 0 || space < 0 || type < 0 || r < 0 || r > NH_MAX_RANK) {
    fprintf(stderr, "%s: %s: cannot read dataset %s/%s\n", f->prog, f->path, group_name(f), name);
    goto done;
  }
  H5Sget_simple_extent_dims(space, d, NULL);
  int ok = r == rank;
  for (int i = 0; ok && i < rank; i++)
    if (expect && expect[i] > 0 && d[i] != expect[i]) ok = 0;
  if (!ok) {
    char want[128], got[128];
    shape_str(want, sizeof want, rank, expect ? expect : d, expect != NULL);
    shape_str(got, sizeof got, r, d, 0);
    fprintf(stderr, "%s: %s: dataset %s/%s has shape %s, expected %s\n", f->prog, f->path, group_name(f),
            name, got, want);
    goto done;
  }
  if (H5Tget_class(type) != cls) {
    fprintf(stderr, "%s: %s: dataset %s/%s holds %s, expected %s\n", f->prog, f->path, group_name(f), name,
            H5Tget_class(type) == H5T_FLOAT ? "floating-point numbers" : "non-numbers or integers",
            cls == H5T_FLOAT ? "floating-point numbers" : "integers");
    goto done;
  }
  if (row >= 0 && (rank < 1 || (hsize_t)row >= d[0])) {
    fprintf(stderr, "%s: %s: dataset %s/%s has no row %lld\n", f->prog, f->path, group_name(f), name, row);
    goto done;
  }
  hsize_t n = 1;
  for (int i = row >= 0 ? 1 : 0; i < rank; i++) n *= d[i];
  data = malloc(n ? (size_t)n * elsize : 1);
  herr_t rc;
  if (row >= 0) {
    hsize_t start[NH_MAX_RANK] = {0}, count[NH_MAX_RANK];
    start[0] = (hsize_t)row;
    count[0] = 1;
    for (int i = 1; i < rank; i++) count[i] = d[i];
    mspace = H5Screate_simple(1, &n, NULL);
    rc = n == 0 ? 0
                : H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL) < 0
                      ? -1
                      : H5Dread(ds, memtype, mspace, space, H5P_DEFAULT, data);
  } else {
    rc = n == 0 ? 0 : H5Dread(ds, memtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data);
  }
  if (rc < 0) {
    fprintf(stderr, "%s: %s: cannot read dataset %s/%s\n", f->prog, f->path, group_name(f), name);
    free(data);
    data = NULL;
    goto done;
  }
  if (dims_out)
    for (int i = 0; i < rank; i++) dims_out[i] = d[i];
done:
  if (mspace >= 0) H5Sclose(mspace);
  if (type >= 0) H5Tclose(type);
  if (space >= 0) H5Sclose(space);
  if (ds >= 0) H5Dclose(ds);
  return data;
}

double *nh_h5_doubles(const nh_h5 *f, const char *name, int rank, const hsize_t *expect, hsize_t *dims) {
  return read_data(f, name, H5T_NATIVE_DOUBLE, H5T_FLOAT, sizeof(double), rank, expect, dims, -1);
}

int *nh_h5_ints(const nh_h5 *f, const char *name, int rank, const hsize_t *expect, hsize_t *dims) {
  return read_data(f, name, H5T_NATIVE_INT, H5T_INTEGER, sizeof(int), rank, expect, dims, -1);
}

unsigned long long *nh_h5_u64(const nh_h5 *f, const char *name, int rank, const hsize_t *expect,
                              hsize_t *dims) {
  return read_data(f, name, H5T_NATIVE_ULLONG, H5T_INTEGER, sizeof(unsigned long long), rank, expect, dims,
                   -1);
}

double *nh_h5_doubles_row(const nh_h5 *f, const char *name, hsize_t row, int rank, const hsize_t *expect) {
  return read_data(f, name, H5T_NATIVE_DOUBLE, H5T_FLOAT, sizeof(double), rank, expect, NULL, (long long)row);
}

/* ---- attributes ---------------------------------------------------------------------------- */

static const char *obj_label(const nh_h5 *f, const char *obj, char *buf, size_t len) {
  if (obj[0] == '/') snprintf(buf, len, "%s", obj);
  else if (strcmp(obj, ".") == 0) snprintf(buf, len, "%s", group_name(f));
  else snprintf(buf, len, "%s/%s", group_name(f), obj);
  return buf;
}

int nh_h5_has_attr(const nh_h5 *f, const char *obj, const char *name) {
  hid_t loc = loc_of(f, obj);
  if (H5Oexists_by_name(loc, obj, H5P_DEFAULT) <= 0) return 0;
  return H5Aexists_by_name(loc, obj, name, H5P_DEFAULT) > 0;
}

static hid_t open_attr(const nh_h5 *f, const char *obj, const char *name) {
  char label[256];
  if (!nh_h5_has_attr(f, obj, name)) {
    fprintf(stderr, "%s: %s: missing attribute '%s' of %s\n", f->prog, f->path, name,
            obj_label(f, obj, label, sizeof label));
    return -1;
  }
  hid_t a = H5Aopen_by_name(loc_of(f, obj), obj, name, H5P_DEFAULT, H5P_DEFAULT);
  if (a < 0)
    fprintf(stderr, "%s: %s: cannot read attribute '%s' of %s\n", f->prog, f->path, name,
            obj_label(f, obj, label, sizeof label));
  return a;
}

char *nh_h5_attr_string(const nh_h5 *f, const char *obj, const char *name) {
  hid_t a = open_attr(f, obj, name);
  if (a < 0) return NULL;
  char *s = NULL, label[256];
  hid_t type = H5Aget_type(a), space = H5Aget_space(a);
  if (type < 0 || H5Tget_class(type) != H5T_STRING || H5Sget_simple_extent_npoints(space) != 1) {
    fprintf(stderr, "%s: %s: attribute '%s' of %s is not a single string\n", f->prog, f->path, name,
            obj_label(f, obj, label, sizeof label));
  } else if (H5Tis_variable_str(type) > 0) {
    char *p = NULL;
    if (H5Aread(a, type, &p) >= 0) {
      s = dup_str(p ? p : "");
      H5free_memory(p);
    }
  } else {
    size_t size = H5Tget_size(type);
    s = calloc(size + 1, 1);
    if (H5Aread(a, type, s) < 0) {
      free(s);
      s = NULL;
    }
  }
  if (!s && type >= 0 && H5Tget_class(type) == H5T_STRING)
    fprintf(stderr, "%s: %s: cannot read attribute '%s' of %s\n", f->prog, f->path, name,
            obj_label(f, obj, label, sizeof label));
  if (space >= 0) H5Sclose(space);
  if (type >= 0) H5Tclose(type);
  H5Aclose(a);
  return s;
}

/* A numeric attribute holding exactly one value. */
static int attr_scalar(const nh_h5 *f, const char *obj, const char *name, hid_t memtype, void *v) {
  hid_t a = open_attr(f, obj, name);
  if (a < 0) return -1;
  char label[256];
  hid_t type = H5Aget_type(a), space = H5Aget_space(a);
  H5T_class_t cls = type < 0 ? H5T_NO_CLASS : H5Tget_class(type);
  int rc = -1;
  if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || H5Sget_simple_extent_npoints(space) != 1)
    fprintf(stderr, "%s: %s: attribute '%s' of %s is not a single number\n", f->prog, f->path, name,
            obj_label(f, obj, label, sizeof label));
  else if (H5Aread(a, memtype, v) < 0)
    fprintf(stderr, "%s: %s: cannot read attribute '%s' of %s\n", f->prog, f->path, name,
            obj_label(f, obj, label, sizeof label));
  else
    rc = 0;
  if (space >= 0) H5Sclose(space);
  if (type >= 0) H5Tclose(type);
  H5Aclose(a);
  return rc;
}

int nh_h5_attr_double(const nh_h5 *f, const char *obj, const char *name, double *v) {
  return attr_scalar(f, obj, name, H5T_NATIVE_DOUBLE, v);
}

int nh_h5_attr_int(const nh_h5 *f, const char *obj, const char *name, int *v) {
  return attr_scalar(f, obj, name, H5T_NATIVE_INT, v);
}

int nh_h5_attr_ll(const nh_h5 *f, const char *obj, const char *name, long long *v) {
  return attr_scalar(f, obj, name, H5T_NATIVE_LLONG, v);
}

double *nh_h5_attr_doubles(const nh_h5 *f, const char *obj, const char *name, int *n) {
  hid_t a = open_attr(f, obj, name);
  if (a < 0) return NULL;
  char label[256];
  hid_t type = H5Aget_type(a), space = H5Aget_space(a);
  H5T_class_t cls = type < 0 ? H5T_NO_CLASS : H5Tget_class(type);
  hssize_t np = space < 0 ? -1 : H5Sget_simple_extent_npoints(space);
  double *v = NULL;
  if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || np < 0 || np > 1000000) {
    fprintf(stderr, "%s: %s: attribute '%s' of %s is not numeric\n", f->prog, f->path, name,
            obj_label(f, obj, label, sizeof label));
  } else {
    v = malloc(sizeof(double) * (size_t)(np ? np : 1));
    if (np && H5Aread(a, H5T_NATIVE_DOUBLE, v) < 0) {
      fprintf(stderr, "%s: %s: cannot read attribute '%s' of %s\n", f->prog, f->path, name,
              obj_label(f, obj, label, sizeof label));
      free(v);
      v = NULL;
    }
    *n = (int)np;
  }
  if (space >= 0) H5Sclose(space);
  if (type >= 0) H5Tclose(type);
  H5Aclose(a);
  return v;
}

/* ---- opening ------------------------------------------------------------------------------- */

int nh_h5_has_dataset(const nh_h5 *f, const char *name) {
  if (H5Lexists(f->group, name, H5P_DEFAULT) <= 0) return 0;
  hid_t ds = H5Dopen2(f->group, name, H5P_DEFAULT);
  if (ds < 0) return 0;
  H5Dclose(ds);
  return 1;
}

void nh_h5_free_strings(char **s, int count) {
  if (!s) return;
  for (int i = 0; i < count; i++) free(s[i]);
  free(s);
}

/* Variable-length (as written) or fixed-length strings. */
char **nh_h5_strings(const nh_h5 *f, const char *name, int *count) {
  if (H5Lexists(f->group, name, H5P_DEFAULT) <= 0) {
    fprintf(stderr, "%s: %s: missing dataset %s/%s\n", f->prog, f->path, group_name(f), name);
    return NULL;
  }
  hid_t ds = H5Dopen2(f->group, name, H5P_DEFAULT);
  hid_t space = ds < 0 ? -1 : H5Dget_space(ds), type = ds < 0 ? -1 : H5Dget_type(ds);
  char **out = NULL;
  hssize_t n = space < 0 ? -1 : H5Sget_simple_extent_npoints(space);
  if (type < 0 || H5Tget_class(type) != H5T_STRING || H5Sget_simple_extent_ndims(space) != 1 || n < 0) {
    fprintf(stderr, "%s: %s: dataset %s/%s is not a list of strings\n", f->prog, f->path, group_name(f), name);
    goto done;
  }
  out = calloc((size_t)n + 1, sizeof *out);
  if (H5Tis_variable_str(type) > 0) {
    hid_t mt = H5Tcopy(H5T_C_S1);
    H5Tset_size(mt, H5T_VARIABLE);
    H5Tset_cset(mt, H5Tget_cset(type)); /* no conversion between ASCII and UTF-8 */
    char **raw = calloc((size_t)n + 1, sizeof *raw);
    if (n && H5Dread(ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) < 0) {
      free(out);
      out = NULL;
    } else {
      for (hssize_t i = 0; i < n; i++) out[i] = dup_str(raw[i] ? raw[i] : "");
#if H5_VERSION_GE(1, 12, 0)
      if (n) H5Treclaim(mt, space, H5P_DEFAULT, raw);
#else
      if (n) H5Dvlen_reclaim(mt, space, H5P_DEFAULT, raw);
#endif
    }
    free(raw);
    H5Tclose(mt);
  } else {
    size_t size = H5Tget_size(type);
    char *raw = calloc((size_t)n * size + 1, 1);
    if (n && H5Dread(ds, type, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) < 0) {
      free(out);
      out = NULL;
    } else {
      for (hssize_t i = 0; i < n; i++) {
        out[i] = calloc(size + 1, 1);
        memcpy(out[i], raw + (size_t)i * size, size);
      }
    }
    free(raw);
  }
  if (!out) fprintf(stderr, "%s: %s: cannot read dataset %s/%s\n", f->prog, f->path, group_name(f), name);
  else *count = (int)n;
done:
  if (type >= 0) H5Tclose(type);
  if (space >= 0) H5Sclose(space);
  if (ds >= 0) H5Dclose(ds);
  return out;
}

/* Which methods the spec lists itself: the loader (studies/spec.c) adds the spec's `methods`
 * first, then the grids' methods that are not already there; names are canonical. So a method
 * is "primary" when its name is the canonical name of an entry of `methods` in spec_text. If the
 * spec text cannot be read, every method counts as primary. */
static void find_primary(nh_h5 *f) {
  for (int i = 0; i < f->nmethods; i++) f->primary[i] = 1;
  if (!nh_h5_has_attr(f, "/", "spec_text")) return;
  char *text = nh_h5_attr_string(f, "/", "spec_text");
  if (!text) return;
  config_t cfg;
  config_init(&cfg);
  if (config_read_string(&cfg, text)) {
    const config_setting_t *list = config_lookup(&cfg, "methods");
    for (int i = 0; i < f->nmethods; i++) f->primary[i] = 0;
    int n = list && (config_setting_is_list(list) || config_setting_is_array(list)) ? config_setting_length(list) : 0;
    for (int k = 0; k < n; k++) {
      const char *s = config_setting_get_string_elem(list, k);
      char err[256], name[1024];
      nh_method *m = s ? nh_method_parse(s, err, sizeof err) : NULL;
      if (!m) continue;
      nh_method_format(m, name, sizeof name);
      nh_method_free(m);
      for (int i = 0; i < f->nmethods; i++)
        if (strcmp(f->methods[i], name) == 0) f->primary[i] = 1;
    }
  }
  config_destroy(&cfg);
  free(text);
}

int nh_h5_open(nh_h5 *f, const char *prog, const char *path) {
  memset(f, 0, sizeof *f);
  f->prog = prog;
  f->path = path;
  f->file = f->group = -1;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  FILE *fp = fopen(path, "rb");
  if (!fp) {
    fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
    return -1;
  }
  fclose(fp);
  struct stat sb;
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    fprintf(stderr, "%s: %s: is a directory, not a results file\n", prog, path);
    return -1;
  }
  if (H5Fis_hdf5(path) <= 0) {
    fprintf(stderr, "%s: %s: not an HDF5 file\n", prog, path);
    return -1;
  }
  f->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT);
  if (f->file < 0) {
    fprintf(stderr, "%s: %s: cannot open the HDF5 file\n", prog, path);
    return -1;
  }
  if (!nh_h5_has_attr(f, "/", "study") || !nh_h5_has_attr(f, "/", "schema_version")) {
    fprintf(stderr, "%s: %s: not an nhbench results file (no root attributes 'study' and 'schema_version')\n",
            prog, path);
    goto fail;
  }
  int version;
  if (nh_h5_attr_int(f, "/", "schema_version", &version)) goto fail;
  if (version != NH_SCHEMA_VERSION) {
    fprintf(stderr, "%s: %s: results schema version %d; this nhbench reads version %d\n", prog, path, version,
            NH_SCHEMA_VERSION);
    goto fail;
  }
  char *study = nh_h5_attr_string(f, "/", "study");
  if (!study) goto fail;
  int known = strcmp(study, "convergence") == 0 || strcmp(study, "ensemble") == 0;
  f->ensemble = strcmp(study, "ensemble") == 0;
  if (!known) fprintf(stderr, "%s: %s: unknown study type '%s'\n", prog, path, study);
  free(study);
  if (!known) goto fail;
  if (H5Lexists(f->file, group_name(f), H5P_DEFAULT) <= 0 ||
      (f->group = H5Gopen2(f->file, group_name(f), H5P_DEFAULT)) < 0) {
    fprintf(stderr, "%s: %s: missing group %s: not a complete nhbench results file\n", prog, path,
            group_name(f));
    goto fail;
  }
  f->methods = nh_h5_strings(f, "methods", &f->nmethods);
  if (!f->methods) goto fail;
  if (f->nmethods == 0) {
    fprintf(stderr, "%s: %s: no methods in %s/methods\n", prog, path, group_name(f));
    goto fail;
  }
  f->primary = malloc(sizeof(int) * (size_t)f->nmethods);
  find_primary(f);
  return 0;
fail:
  nh_h5_close(f);
  return -1;
}

void nh_h5_close(nh_h5 *f) {
  nh_h5_free_strings(f->methods, f->nmethods);
  free(f->primary);
  if (f->group >= 0) H5Gclose(f->group);
  if (f->file >= 0) H5Fclose(f->file);
  f->methods = NULL;
  f->primary = NULL;
  f->group = f->file = -1;
}

/* ---- grids and ensemble statistics --------------------------------------------------------- */

int nh_h5_read_grids(const nh_h5 *f, int *ngrids, nh_h5_grid **grids) {
  *ngrids = 0;
  *grids = NULL;
  int n = 0;
  if (!nh_h5_has_attr(f, ".", "grids")) return 0; /* no grids */
  if (nh_h5_attr_int(f, ".", "grids", &n)) return -1;
  if (n < 0 || n > 10000) {
    fprintf(stderr, "%s: %s: %s attribute 'grids' = %d is not a grid count\n", f->prog, f->path, group_name(f), n);
    return -1;
  }
  nh_h5_grid *g = calloc((size_t)(n ? n : 1), sizeof *g);
  for (int k = 0; k < n; k++) {
    char obj[64], name[96];
    snprintf(obj, sizeof obj, "grid%d", k);
    nh_h5_grid *gk = &g[k];
    *ngrids = k + 1;
    if (!(gk->method = nh_h5_attr_string(f, obj, "method")) || !(gk->param[0] = nh_h5_attr_string(f, obj, "param0")) ||
        !(gk->param[1] = nh_h5_attr_string(f, obj, "param1")))
      goto fail;
    hsize_t d[2];
    for (int p = 0; p < 2; p++) {
      snprintf(name, sizeof name, "%s/values%d", obj, p);
      if (!(gk->values[p] = nh_h5_doubles(f, name, 1, NULL, d))) goto fail;
      gk->n[p] = (int)d[0];
    }
    hsize_t e[2] = {(hsize_t)gk->n[0], (hsize_t)gk->n[1]};
    snprintf(name, sizeof name, "%s/method_index", obj);
    if (!(gk->method_index = nh_h5_ints(f, name, 2, e, NULL))) goto fail;
    for (int i = 0; i < gk->n[0] * gk->n[1]; i++)
      if (gk->method_index[i] < -1 || gk->method_index[i] >= f->nmethods) {
        fprintf(stderr, "%s: %s: %s/%s holds %d, not a method index (0..%d) or -1\n", f->prog, f->path,
                group_name(f), name, gk->method_index[i], f->nmethods - 1);
        goto fail;
      }
  }
  *grids = g;
  *ngrids = n;
  return 0;
fail:
  nh_h5_free_grids(*ngrids, g);
  *ngrids = 0;
  return -1;
}

void nh_h5_free_grids(int ngrids, nh_h5_grid *grids) {
  if (!grids) return;
  for (int k = 0; k < ngrids; k++) {
    free(grids[k].method);
    free(grids[k].param[0]);
    free(grids[k].param[1]);
    free(grids[k].values[0]);
    free(grids[k].values[1]);
    free(grids[k].method_index);
  }
  free(grids);
}

int nh_h5_read_ensemble(const nh_h5 *f, nh_h5_ensemble *e) {
  memset(e, 0, sizeof *e);
  hsize_t d[2], dt[1];
  double *t = nh_h5_doubles(f, "t", 1, NULL, dt);
  if (!t) return -1;
  free(t);
  e->nsamples = (int)dt[0];
  hsize_t dm[2] = {(hsize_t)f->nmethods, 0};
  if (!(e->status = nh_h5_ints(f, "status", 2, dm, d))) goto fail;
  e->nic = (int)d[1];
  hsize_t dmic[2] = {(hsize_t)f->nmethods, d[1]}, dms[2] = {(hsize_t)f->nmethods, dt[0]};
  if (!(e->max_abs_dE = nh_h5_doubles(f, "max_abs_dE", 2, dmic, NULL)) ||
      !(e->drift_slope = nh_h5_doubles(f, "drift_slope", 2, dmic, NULL)) ||
      !(e->max_residual = nh_h5_doubles(f, "max_constraint_residual", 2, dmic, NULL)))
    goto fail;
  double *var = nh_h5_doubles(f, "dE_var", 2, dms, NULL);
  int *cnt = var ? nh_h5_ints(f, "dE_count", 2, dms, NULL) : NULL;
  if (!cnt) {
    free(var);
    goto fail;
  }
  e->final_var = malloc(sizeof(double) * (size_t)(f->nmethods));
  for (int m = 0; m < f->nmethods; m++) {
    size_t last = (size_t)m * (size_t)e->nsamples + (size_t)e->nsamples - 1;
    e->final_var[m] = e->nsamples > 0 && cnt[last] >= 2 ? var[last] : NAN;
  }
  free(var);
  free(cnt);
  return 0;
fail:
  nh_h5_free_ensemble(e);
  return -1;
}

void nh_h5_free_ensemble(nh_h5_ensemble *e) {
  free(e->max_abs_dE);
  free(e->drift_slope);
  free(e->max_residual);
  free(e->final_var);
  free(e->status);
  memset(e, 0, sizeof *e);
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  if (n == 0) return NAN;
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

void nh_h5_method_stats(const nh_h5_ensemble *e, int method, nh_h5_stats *s) {
  const size_t off = (size_t)method * (size_t)e->nic;
  double *a = malloc(sizeof(double) * (size_t)(e->nic ? e->nic : 1));
  double *b = malloc(sizeof(double) * (size_t)(e->nic ? e->nic : 1));
  int n = 0;
  double sum = 0;
  s->count = e->nic;
  s->failures = 0;
  s->max_max_abs_dE = s->max_residual = 0;
  for (int i = 0; i < e->nic; i++) {
    if (e->status[off + i] != 0) {
      s->failures++;
      continue;
    }
    double m = e->max_abs_dE[off + i], r = e->max_residual[off + i];
    a[n] = m;
    b[n] = fabs(e->drift_slope[off + i]);
    sum += e->drift_slope[off + i];
    if (!(m <= s->max_max_abs_dE)) s->max_max_abs_dE = m; /* NaN propagates */
    if (!(r <= s->max_residual)) s->max_residual = r;
    n++;
  }
  if (n == 0) s->max_max_abs_dE = s->max_residual = NAN;
  s->median_max_abs_dE = median(a, n);
  s->median_abs_drift_slope = median(b, n);
  s->mean_drift_slope = n ? sum / n : NAN;
  s->final_var = e->final_var[method];
  free(a);
  free(b);
}

void nh_h5_fit_range(const double *h, int nh, int first, int count, double *lo, double *hi) {
  *lo = *hi = NAN;
  if (first < 0 || first >= nh || count < 1) return;
  /* h[first] is the smallest; the largest is the (count-1)-th next larger value. */
  int rank = 0, k = 0;
  for (int i = 0; i < nh; i++) rank += h[i] < h[first];
  for (int i = 0; i < nh; i++) {
    int r = 0;
    for (int j = 0; j < nh; j++) r += h[j] < h[i];
    if (r == rank + count - 1) *hi = h[i], k = 1;
  }
  if (k) *lo = h[first];
  else *hi = NAN;
}

const char *nh_h5_fmt(char *buf, size_t len, double v) {
  if (isnan(v)) snprintf(buf, len, "NaN");
  else if (isinf(v)) snprintf(buf, len, v > 0 ? "Inf" : "-Inf");
  else
    for (int p = 15; p <= 17; p++) {
      snprintf(buf, len, "%.*g", p, v);
      if (strtod(buf, NULL) == v) break;
    }
  return buf;
}
