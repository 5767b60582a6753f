/* Opening results files and reading their datasets (results/results.h). */
#define _POSIX_C_SOURCE 200809L /* stat */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "core/alloc.h"
#include "core/text.h"
#include "results/reader.h"
#include "results/schema.h"

/* ---- dimensions ---------------------------------------------------------------------------- */

/* Dimensions whose size differs from dataset to dataset (an observable's components). */
static int per_dataset(const char *dim) { return strcmp(dim, "component") == 0; }

static int split_dims(const char *dims, char names[][NH_TEXT_NAME], int max) {
  int n = 0;
  for (const char *p = dims; *p && n < max;) {
    size_t len = strcspn(p, ",");
    snprintf(names[n++], sizeof *names, "%.*s", (int)len, p);
    p += len + (p[len] == ',');
  }
  return n;
}

static long long known(const nh_h5 *f, const char *name) {
  for (int i = 0; i < f->ndims; i++)
    if (strcmp(f->dim_name[i], name) == 0) return f->dim_size[i];
  return -1;
}

static void learn(nh_h5 *f, const char *name, long long size) {
  if (per_dataset(name) || known(f, name) >= 0 || f->ndims == NH_H5_MAX_DIMS) return;
  snprintf(f->dim_name[f->ndims], sizeof *f->dim_name, "%.31s", name);
  f->dim_size[f->ndims++] = size;
}

/* Opens dataset NAME, checks its `dimensions` against DIMS and its shape against the sizes
 * known; rank and shape out. -1 with a message. */
static hid_t open_checked(nh_h5 *f, const char *name, const char *dims, int *rank, hsize_t *shape) {
  char where[NH_R_WHERE], names[NH_R_MAX_RANK + 1][NH_TEXT_NAME];
  nh_r_where(f, name, where, sizeof where);
  if (!nh_h5_has(f, name)) {
    fprintf(stderr, "%s: %s: missing dataset %s\n", f->prog, f->path, where);
    return -1;
  }
  hid_t ds = H5Dopen2(f->group, name, H5P_DEFAULT);
  /* HDF5 IDs are positive; a call on a failed one (-1) fails in turn, so failures fall through. */
  hid_t space = H5Dget_space(ds);
  int r = H5Sget_simple_extent_ndims(space);
  int no_memory = 0;
  char *stored = nh_r_attr_of(ds, "dimensions", &no_memory);
  int want = split_dims(dims, names, NH_R_MAX_RANK + 1), ok = 0;
  if (r < 0 || r > NH_R_MAX_RANK) {
    fprintf(stderr, "%s: %s: cannot read dataset %s\n", f->prog, f->path, where);
  } else if (no_memory) {
    fprintf(stderr, "%s: %s: out of memory for the attributes of dataset %s\n", f->prog, f->path, where);
  } else if (!stored || strcmp(stored, dims) != 0) {
    fprintf(stderr, "%s: %s: dataset %s has dimensions '%s', expected '%s'\n", f->prog, f->path, where,
            stored ? stored : "(no 'dimensions' attribute)", dims);
  } else if (r != want) {
    fprintf(stderr, "%s: %s: dataset %s has rank %d, but its dimensions are '%s'\n", f->prog, f->path, where, r, dims);
  } else {
    H5Sget_simple_extent_dims(space, shape, NULL);
    ok = 1;
    for (int i = 0; ok && i < r; i++) {
      long long k = per_dataset(names[i]) ? -1 : known(f, names[i]);
      if (k >= 0 && (long long)shape[i] != k) {
        fprintf(stderr, "%s: %s: dataset %s has %llu entries along dimension %s, other datasets %lld\n", f->prog,
                f->path, where, (unsigned long long)shape[i], names[i], k);
        ok = 0;
      }
    }
    for (int i = 0; ok && i < r; i++) learn(f, names[i], (long long)shape[i]);
  }
  free(stored);
  H5Sclose(space);
  if (!ok) H5Dclose(ds), ds = -1;
  *rank = r;
  return ds;
}

int nh_h5_has(const nh_h5 *f, const char *name) {
  if (H5Lexists(f->group, name, H5P_DEFAULT) <= 0) return 0;
  return H5Oexists_by_name(f->group, name, H5P_DEFAULT) > 0;
}

/* Every dataset of the study group read for its dimensions (H5Literate: the names and types of the
 * library's default API, 1.10 or later). Its groups hold none of the study's own: a summary's and
 * the observables' are the group's, and each grid's value0 and value1 are the grid's alone. */
typedef struct {
  nh_h5 *f;
  int failed;
} dims_visit;

static herr_t learn_from(hid_t group, const char *name, const H5L_info_t *info, void *data) {
  dims_visit *v = data;
  if (info->type != H5L_TYPE_HARD) return 0;
  hid_t obj = H5Oopen(group, name, H5P_DEFAULT);
  const int dataset = H5Iget_type(obj) == H5I_DATASET;
  int no_memory = 0, rank;
  char *dims = dataset ? nh_r_attr_of(obj, "dimensions", &no_memory) : NULL;
  H5Oclose(obj);
  hsize_t shape[NH_R_MAX_RANK];
  if (dims) {
    hid_t checked = open_checked(v->f, name, dims, &rank, shape);
    v->failed |= checked < 0;
    H5Dclose(checked);
  }
  free(dims);
  if (no_memory) fprintf(stderr, "%s: %s: out of memory for the dimensions of %s\n", v->f->prog, v->f->path, name);
  v->failed |= no_memory;
  return v->failed ? 1 : 0; /* stop at the first failure, said */
}

int nh_h5_learn_dims(nh_h5 *f) {
  dims_visit v = {f, 0};
  const herr_t rc = H5Literate(f->group, H5_INDEX_NAME, H5_ITER_INC, NULL, learn_from, &v);
  if (rc < 0 && !v.failed) fprintf(stderr, "%s: %s: cannot walk the study group\n", f->prog, f->path);
  return rc < 0 || v.failed ? -1 : 0;
}

double *nh_h5_steps(nh_h5 *f, long long *n) {
  if (f->schema_version >= 3 || nh_h5_has(f, "h")) {
    hsize_t shape[1] = {0};
    double *h = nh_h5_doubles(f, "h", "h", shape);
    *n = (long long)shape[0];
    return h;
  }
  double *h = malloc(sizeof *h); /* schema 2: an ensemble's one h, the group's attribute */
  if (!h) fprintf(stderr, "%s: %s: out of memory for the step size\n", f->prog, f->path);
  if (!h || nh_h5_attr_double(f, ".", "h", h) != 0) return free(h), NULL;
  *n = 1;
  return h;
}

/* Where each dimension can be learned from: a dataset that has it. */
long long nh_h5_dim(nh_h5 *f, const char *name) {
  static const struct {
    const char *dim, *dataset;
  } from[] = {{"method", "methods"}, {"h", "h"}, {"ic", "ic_names"}, {"state", "state_labels"},
              {"point", "point_t"}, {"norm", "norms"}, {"dof", "q0"}, {"repeat", "wall_times"},
              {"sample", "t"}, {"multiplier", "lambda"}};
  long long k = known(f, name);
  if (k >= 0) return k;
  for (size_t i = 0; i < sizeof from / sizeof *from; i++) {
    if (strcmp(from[i].dim, name) != 0 || !nh_h5_has(f, from[i].dataset)) continue;
    hid_t ds = H5Dopen2(f->group, from[i].dataset, H5P_DEFAULT);
    int no_memory = 0, rank;
    char *dims = nh_r_attr_of(ds, "dimensions", &no_memory);
    hsize_t shape[NH_R_MAX_RANK];
    H5Dclose(ds);
    if (dims) H5Dclose(open_checked(f, from[i].dataset, dims, &rank, shape));
    free(dims);
    if ((k = known(f, name)) >= 0) return k;
    if (no_memory) {
      fprintf(stderr, "%s: %s: out of memory for the size of dimension '%s'\n", f->prog, f->path, name);
      return -1;
    }
  }
  fprintf(stderr, "%s: %s: cannot tell the size of dimension '%s'\n", f->prog, f->path, name);
  return -1;
}

static const char *class_name(H5T_class_t c) {
  return c == H5T_FLOAT ? "floating-point numbers" : c == H5T_INTEGER ? "integers" : c == H5T_COMPOUND ? "records"
                                                                                    : "something else";
}

/* A dataset opened for reading: handle, type, space, rank, shape, and its name for messages. */
typedef struct {
  hid_t ds, type, space;
  int rank;
  hsize_t shape[NH_R_MAX_RANK];
  char where[NH_R_WHERE];
} opened;

static int open_dataset(nh_h5 *f, const char *name, const char *dims, opened *o) {
  nh_r_where(f, name, o->where, sizeof o->where);
  o->ds = open_checked(f, name, dims, &o->rank, o->shape);
  if (o->ds < 0) return -1;
  o->type = H5Dget_type(o->ds);
  o->space = H5Dget_space(o->ds);
  return 0;
}

static void close_dataset(opened *o) {
  H5Tclose(o->type);
  H5Sclose(o->space);
  H5Dclose(o->ds);
}

/* A damaged file can declare a shape far larger than what it stores: no reader should allocate
 * for it. Deflate expands at most ~1000-fold, so more than 2000 bytes per stored byte (beyond a
 * first MiB) cannot be real data. Says so and returns 0 for such a dataset. */
static int plausible_size(nh_h5 *f, const opened *o, hsize_t n, size_t elsize) {
  const hsize_t stored = H5Dget_storage_size(o->ds), bytes = n * (hsize_t)elsize;
  if (bytes / (hsize_t)elsize == n && bytes <= ((hsize_t)1 << 20) + 2000 * stored) return 1;
  fprintf(stderr, "%s: %s: dataset %s declares %llu values but stores %llu bytes: a damaged file\n", f->prog,
          f->path, o->where, (unsigned long long)n, (unsigned long long)stored);
  return 0;
}

/* Dataset NAME converted to memtype: whole, or its hyperslab at an index along some dimensions and
 * whole along the others. Those are the first nfixed (at index[0..nfixed)), or where pick (if not
 * NULL) chooses them once the dataset is open and found plausible as a whole (as when read whole);
 * pick's refusal reads nothing. */
static void *read_data(nh_h5 *f, const char *name, const char *dims, hid_t memtype, H5T_class_t cls, size_t elsize,
                       int nfixed, const long long *index, nh_r_pick *pick, void *ctx, hsize_t *shape_out) {
  opened o;
  if (open_dataset(f, name, dims, &o) != 0) return NULL;
  void *data = NULL;
  hsize_t start[NH_R_MAX_RANK], count[NH_R_MAX_RANK], n = 1, all = 1;
  long long at[NH_R_MAX_RANK];
  int ok = H5Tget_class(o.type) == cls, sliced = 0;
  if (!ok)
    fprintf(stderr, "%s: %s: dataset %s holds %s, expected %s\n", f->prog, f->path, o.where,
            class_name(H5Tget_class(o.type)), class_name(cls));
  else if (nfixed > o.rank) {
    fprintf(stderr, "%s: %s: dataset %s has rank %d, fewer than the %d indices given\n", f->prog, f->path, o.where,
            o.rank, nfixed);
    ok = 0;
  }
  for (int i = 0; i < o.rank; i++) all *= o.shape[i], at[i] = i < nfixed ? index[i] : NH_R_WHOLE;
  if (ok && pick) ok = plausible_size(f, &o, all, elsize) && pick(ctx, o.rank, o.shape, at) == 0;
  for (int i = 0; ok && i < o.rank; i++) {
    const int fixed = pick ? at[i] != NH_R_WHOLE : i < nfixed;
    count[i] = fixed ? 1 : o.shape[i];
    start[i] = fixed ? (hsize_t)at[i] : 0;
    if (fixed && (at[i] < 0 || (hsize_t)at[i] >= o.shape[i])) {
      fprintf(stderr, "%s: %s: dataset %s has no index %lld along dimension %d\n", f->prog, f->path, o.where, at[i], i);
      ok = 0;
    }
    sliced |= fixed;
    n *= count[i];
  }
  if (ok && !pick && !plausible_size(f, &o, n, elsize)) ok = 0;
  if (ok) {
    data = nh_malloc_array((size_t)n, elsize);
    if (!data) {
      fprintf(stderr, "%s: %s: out of memory for dataset %s (%llu values)\n", f->prog, f->path, o.where,
              (unsigned long long)n);
      ok = 0;
    }
  }
  if (ok) {
    hid_t mspace = H5Screate_simple(1, &n, NULL);
    /* A slice selects its hyperslab; a whole dataset (rank 0 too, which takes no hyperslab) is all. */
    herr_t rc = n == 0 ? 0
                : sliced && H5Sselect_hyperslab(o.space, H5S_SELECT_SET, start, NULL, count, NULL) < 0
                    ? -1
                    : H5Dread(o.ds, memtype, mspace, o.space, H5P_DEFAULT, data);
    H5Sclose(mspace);
    if (rc < 0) {
      fprintf(stderr, "%s: %s: cannot read dataset %s\n", f->prog, f->path, o.where);
      free(data);
      data = NULL;
    }
  }
  if (data && shape_out)
    for (int i = 0; i < o.rank; i++) shape_out[i] = o.shape[i];
  close_dataset(&o);
  return data;
}

void *nh_r_read_part(nh_h5 *f, const char *name, const char *dims, hid_t memtype, H5T_class_t cls, size_t elsize,
                     nh_r_pick *pick, void *ctx, hsize_t *shape) {
  return read_data(f, name, dims, memtype, cls, elsize, 0, NULL, pick, ctx, shape);
}

double *nh_h5_doubles(nh_h5 *f, const char *name, const char *dims, hsize_t *shape) {
  return read_data(f, name, dims, H5T_NATIVE_DOUBLE, H5T_FLOAT, sizeof(double), 0, NULL, NULL, NULL, shape);
}

int *nh_h5_ints(nh_h5 *f, const char *name, const char *dims, hsize_t *shape) {
  return read_data(f, name, dims, H5T_NATIVE_INT, H5T_INTEGER, sizeof(int), 0, NULL, NULL, NULL, shape);
}

void *nh_h5_records(nh_h5 *f, const char *name, const char *dims, hid_t memtype, size_t size, hsize_t *shape) {
  return read_data(f, name, dims, memtype, H5T_COMPOUND, size, 0, NULL, NULL, NULL, shape);
}

nh_cost *nh_h5_costs(nh_h5 *f, const char *name, const char *dims, hsize_t *shape) {
  hid_t t = nh_schema_cost_type(0);
  nh_cost *c = read_data(f, name, dims, t, H5T_COMPOUND, sizeof(nh_cost), 0, NULL, NULL, NULL, shape);
  H5Tclose(t);
  return c;
}

double *nh_h5_doubles_at(nh_h5 *f, const char *name, const char *dims, int nfixed, const long long *index,
                         hsize_t *shape) {
  return read_data(f, name, dims, H5T_NATIVE_DOUBLE, H5T_FLOAT, sizeof(double), nfixed, index, NULL, NULL, shape);
}

char **nh_h5_strings(nh_h5 *f, const char *name, const char *dims, int *count) {
  opened o;
  if (open_dataset(f, name, dims, &o) != 0) return NULL;
  char **out = NULL;
  const hsize_t n = o.rank == 1 ? o.shape[0] : 0;
  if (o.rank != 1 || H5Tget_class(o.type) != H5T_STRING) {
    fprintf(stderr, "%s: %s: dataset %s is not a list of strings\n", f->prog, f->path, o.where);
  } else if (plausible_size(f, &o, n, H5Tis_variable_str(o.type) > 0 ? sizeof(char *) : H5Tget_size(o.type))) {
    int vlen = H5Tis_variable_str(o.type) > 0;
    size_t size = vlen ? sizeof(char *) : H5Tget_size(o.type);
    hid_t mt = vlen ? H5Tcopy(H5T_C_S1) : H5Tcopy(o.type);
    if (vlen) H5Tset_size(mt, H5T_VARIABLE), H5Tset_cset(mt, H5Tget_cset(o.type));
    char *raw = nh_calloc_array((size_t)n, size);
    if (!raw) {
      fprintf(stderr, "%s: %s: out of memory for dataset %s\n", f->prog, f->path, o.where);
    } else if (n == 0 || H5Dread(o.ds, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, raw) >= 0) {
      if ((out = nh_r_copy_strings(raw, (size_t)n, size, vlen))) *count = (int)n;
      else fprintf(stderr, "%s: %s: out of memory for dataset %s\n", f->prog, f->path, o.where);
      char what[NH_R_WHERE + 16];
      snprintf(what, sizeof what, "dataset %s", o.where);
      if (out && nh_r_check_text(f, what, out, (int)n) != 0) nh_h5_free_strings(out, (int)n), out = NULL;
      if (vlen && n) nh_schema_reclaim(mt, o.space, raw);
    } else {
      fprintf(stderr, "%s: %s: cannot read dataset %s\n", f->prog, f->path, o.where);
    }
    free(raw);
    H5Tclose(mt);
  }
  close_dataset(&o);
  return out;
}

/* ---- opening ------------------------------------------------------------------------------- */

/* A file of schema version 1: the message says what to do. */
static void refuse_old(const nh_h5 *f) {
  char *spec = nh_r_attr_of(f->file, "spec_file", NULL);
  fprintf(stderr,
          "%s: %s: written with results schema version 1 by an older nhbench; re-run the study "
          "(`nhbench run %s`) to get version %d\n",
          f->prog, f->path, spec && *spec ? spec : "SPEC", NH_SCHEMA_VERSION);
  free(spec);
}

/* Checks schema_version; 0 if this reader reads the file. */
static int check_version(nh_h5 *f) {
  int has_study = nh_h5_has_attr(f, "/", "study");
  if (!nh_h5_has_attr(f, "/", "schema_version")) {
    if (has_study || H5Lexists(f->file, "convergence", H5P_DEFAULT) > 0 ||
        H5Lexists(f->file, "ensemble", H5P_DEFAULT) > 0)
      refuse_old(f);
    else
      fprintf(stderr, "%s: %s: not an nhbench results file (no root attributes 'study' and 'schema_version')\n",
              f->prog, f->path);
    return -1;
  }
  int version;
  if (nh_h5_attr_int(f, "/", "schema_version", &version) != 0) return -1;
  if (version == 1) {
    refuse_old(f);
    return -1;
  }
  if (version < NH_SCHEMA_OLDEST_READ || version > NH_SCHEMA_VERSION) {
    fprintf(stderr, "%s: %s: results schema version %d%s; this nhbench reads versions %d to %d\n", f->prog, f->path,
            version, version > NH_SCHEMA_VERSION ? " (written by a newer nhbench)" : "", NH_SCHEMA_OLDEST_READ,
            NH_SCHEMA_VERSION);
    return -1;
  }
  f->schema_version = version;
  if (!has_study) fprintf(stderr, "%s: %s: missing root attribute 'study'\n", f->prog, f->path);
  return has_study ? 0 : -1;
}

static int open_study_group(nh_h5 *f) {
  char *study = nh_h5_attr_string(f, "/", "study");
  if (!study) return -1;
  for (int k = 0; k < NH_STUDY_KINDS; k++)
    if (strcmp(study, nh_study_kind_name((nh_study_kind)k)) == 0) {
      f->kind = (nh_study_kind)k;
      f->kind_name = nh_study_kind_name((nh_study_kind)k);
    }
  if (!f->kind_name) fprintf(stderr, "%s: %s: unknown study kind '%s'\n", f->prog, f->path, study);
  free(study);
  if (!f->kind_name) return -1;
  if (H5Lexists(f->file, f->kind_name, H5P_DEFAULT) <= 0 ||
      (f->group = H5Gopen2(f->file, f->kind_name, H5P_DEFAULT)) < 0) {
    fprintf(stderr, "%s: %s: missing group /%s: not a complete nhbench results file\n", f->prog, f->path,
            f->kind_name);
    return -1;
  }
  return 0;
}

static int check_path(const char *prog, const char *path) {
  /* A FIFO or device would block the open or the reads: refused before opening. */
  struct stat pre;
  if (stat(path, &pre) == 0 && !S_ISREG(pre.st_mode) && !S_ISDIR(pre.st_mode)) {
    fprintf(stderr, "%s: %s: not a regular file (a FIFO, device or socket), not a results file\n", prog, path);
    return -1;
  }
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
  return 0;
}

int nh_h5_is_hdf5(const char *path) {
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  return H5Fis_hdf5(path) > 0;
}

int nh_h5_check_names(const nh_h5 *f, const char *what, char *const *names, int count, const char *allowed) {
  for (int i = 0; i < count; i++) {
    const char *s = names[i];
    size_t len = strlen(s);
    if (len > 0 && strspn(s, allowed) == len) continue;
    char shown[64];
    size_t k = 0;
    for (; k + 1 < sizeof shown && s[k]; k++) shown[k] = s[k] >= 0x20 && s[k] < 0x7f ? s[k] : '?';
    shown[k] = '\0';
    fprintf(stderr,
            "%s: %s: %s %d is \"%s\"%s: not a name nhbench writes (a damaged or hostile file?); names hold only "
            "the characters %s\n",
            f->prog, f->path, what, i, shown, s[k] ? "..." : "", allowed);
    return -1;
  }
  return 0;
}

int nh_h5_open(nh_h5 *f, const char *prog, const char *path) {
  memset(f, 0, sizeof *f);
  f->prog = prog;
  f->path = path;
  f->file = f->group = -1;
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  if (check_path(prog, path) != 0) return -1;
  if ((f->file = H5Fopen(path, H5F_ACC_RDONLY, H5P_DEFAULT)) < 0) {
    fprintf(stderr, "%s: %s: cannot open the HDF5 file\n", prog, path);
    return -1;
  }
  if (check_version(f) != 0 || open_study_group(f) != 0) goto fail;
  if (!(f->methods = nh_h5_strings(f, "methods", "method", &f->nmethods))) goto fail;
  /* Method names reach the plot scripts' shell commands: only what the method syntax uses. */
  if (nh_h5_check_names(f, "method", f->methods, f->nmethods, NH_H5_METHOD_CHARS) != 0) goto fail;
  if (f->nmethods == 0) {
    fprintf(stderr, "%s: %s: no methods in /%s/methods\n", prog, path, f->kind_name);
    goto fail;
  }
  if (!(f->primary = nh_h5_ints(f, "primary", "method", NULL))) goto fail;
  for (int m = 0; m < f->nmethods; m++)
    if (f->primary[m] != 0 && f->primary[m] != 1) { /* flags; a damaged value would be counted as one */
      fprintf(stderr, "%s: %s: /%s/primary[%d] = %d: the flags are 0 or 1 (a damaged file?)\n", prog, path,
              f->kind_name, m, f->primary[m]);
      goto fail;
    }
  return 0;
fail:
  nh_h5_close(f);
  return -1;
}

void nh_h5_close(nh_h5 *f) {
  nh_h5_free_strings(f->methods, f->nmethods);
  free(f->primary);
  H5Gclose(f->group); /* -1 when not open: a no-op */
  H5Fclose(f->file);
  f->methods = NULL;
  f->primary = NULL;
  f->nmethods = 0;
  f->group = f->file = -1;
}
