/* The writer's building blocks (results/writer.h) and the atomic file (temporary name, rename). */
#include <errno.h>
#include <hdf5.h>
#include <stdarg.h>
#include <hdf5_hl.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "core/alloc.h"
#include "core/text.h"
#include "results/schema.h"
#include "results/writer.h"

#ifdef NHBENCH_VERSION_FILE
#include NHBENCH_VERSION_FILE /* generated at build time: scripts/version.cmake */
#endif
#ifndef NHBENCH_VERSION
#define NHBENCH_VERSION "unknown"
#endif
#ifndef NHBENCH_COMPILER
#define NHBENCH_COMPILER "unknown"
#endif

const char *nh_results_version(void) { return NHBENCH_VERSION; }
const char *nh_results_compiler(void) { return NHBENCH_COMPILER; }

void nh_w_fail(nh_writer *w, const char *fmt, ...) {
  const int os_error = errno; /* the system call under a failed HDF5 call, if any (e.g. EFBIG, ENOSPC) */
  if (w->failed) return;
  w->failed = 1;
  va_list ap;
  va_start(ap, fmt);
  int len = vsnprintf(w->err, sizeof w->err, fmt, ap);
  va_end(ap);
  if (os_error && len >= 0 && (size_t)len < sizeof w->err)
    snprintf(w->err + len, sizeof w->err - (size_t)len, ": %s", strerror(os_error));
}

void nh_w_out_of_memory(nh_writer *w) {
  errno = 0; /* "out of memory" says it all */
  nh_w_fail(w, "%s", "out of memory");
}

void *nh_w_array(nh_writer *w, size_t n, size_t size) {
  if (w->failed) return NULL;
  void *p = nh_calloc_array(n, size);
  if (!p) nh_w_out_of_memory(w);
  return p;
}

static nh_wdim *find_dim(nh_writer *w, const char *name) {
  for (int i = 0; i < w->ndims; i++)
    if (strcmp(w->dim[i].name, name) == 0) return &w->dim[i];
  return NULL;
}

void nh_w_dim(nh_writer *w, const char *name, long long size) {
  nh_wdim *d = find_dim(w, name);
  errno = 0; /* the failures below are the caller's, not the system's: no OS reason appended */
  if (size < 0) { /* a result field never set (a count left at -1): no dataset can have this shape */
    nh_w_fail(w, "dimension %s has a negative size", name);
    return;
  }
  if (!d && w->ndims == NH_W_DIMS) {
    nh_w_fail(w, "too many dimensions (%s)", name);
    return;
  }
  if (!d) {
    d = &w->dim[w->ndims++];
    snprintf(d->name, sizeof d->name, "%s", name);
    d->scale = 0;
  } else if (d->scale && d->size != (hsize_t)size) {
    nh_w_fail(w, "dimension %s has a coordinate dataset and cannot change size", name);
    return;
  }
  d->size = (hsize_t)size;
}

void nh_w_undim(nh_writer *w, const char *name) {
  nh_wdim *d = find_dim(w, name);
  if (!d) return;
  if (d->scale) H5Dclose(d->scale);
  *d = w->dim[--w->ndims];
}

/* Splits DIMS into the declared dimensions; returns the rank or -1. */
static int parse_dims(nh_writer *w, const char *dims, nh_wdim **out) {
  int rank = 0;
  for (const char *p = dims; *p && !w->failed;) {
    size_t len = strcspn(p, ",");
    char name[sizeof w->dim[0].name]; /* as long as a declared dimension's */
    snprintf(name, sizeof name, "%.*s", (int)len, p);
    nh_wdim *d = find_dim(w, name);
    if (!d || rank == NH_W_DIMS) {
      nh_w_fail(w, "undeclared dimension '%s'", name);
      return -1;
    }
    out[rank++] = d;
    p += len + (p[len] == ',');
  }
  return w->failed ? -1 : rank;
}

static hid_t vlen_str(void) { return nh_schema_vlen_string(); }

static void attr_write(nh_writer *w, hid_t obj, const char *name, hid_t ftype, hid_t mtype, hid_t space,
                       const void *v) {
  if (w->failed) return;
  if (H5Aexists(obj, name) > 0) H5Adelete(obj, name);
  hid_t a = H5Acreate2(obj, name, ftype, space, H5P_DEFAULT, H5P_DEFAULT);
  if (H5Awrite(a, mtype, v) < 0) nh_w_fail(w, "cannot write attribute %s", name); /* also if a is -1 */
  H5Aclose(a);
}

static void attr_scalar(nh_writer *w, hid_t obj, const char *name, hid_t ftype, hid_t mtype, const void *v) {
  hid_t s = H5Screate(H5S_SCALAR);
  attr_write(w, obj, name, ftype, mtype, s, v);
  H5Sclose(s);
}

void nh_w_attr_str(nh_writer *w, hid_t obj, const char *name, const char *value) {
  hid_t t = vlen_str();
  const char *v = value ? value : "";
  attr_scalar(w, obj, name, t, t, &v);
  H5Tclose(t);
}

void nh_w_attr_f64(nh_writer *w, hid_t obj, const char *name, double value) {
  attr_scalar(w, obj, name, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, &value);
}

void nh_w_attr_i32(nh_writer *w, hid_t obj, const char *name, int value) {
  attr_scalar(w, obj, name, H5T_STD_I32LE, H5T_NATIVE_INT, &value);
}

void nh_w_attr_i64(nh_writer *w, hid_t obj, const char *name, long long value) {
  attr_scalar(w, obj, name, H5T_STD_I64LE, H5T_NATIVE_LLONG, &value);
}

void nh_w_attr_strings(nh_writer *w, hid_t obj, const char *name, int count, const char *const *values) {
  hsize_t n = (hsize_t)(count < 0 ? 0 : count);
  const char **v = nh_w_array(w, n, sizeof *v);
  if (!v) return;
  for (hsize_t i = 0; i < n; i++) v[i] = values[i] ? values[i] : "";
  hid_t t = vlen_str(), s = H5Screate_simple(1, &n, NULL);
  attr_write(w, obj, name, t, t, s, v);
  H5Sclose(s);
  H5Tclose(t);
  free(v);
}

hid_t nh_w_group(nh_writer *w, hid_t loc, const char *name, const char *desc) {
  if (w->failed) return -1;
  hid_t g = H5Gcreate2(loc, name, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (g < 0) {
    nh_w_fail(w, "cannot create group %s", name);
    return -1;
  }
  nh_w_attr_str(w, g, "description", desc);
  return g;
}

/* Attributes, labels and scales of an open dataset of shape d[0..rank-1]. */
static void finish_dataset(nh_writer *w, hid_t ds, const char *name, const char *dims, nh_wdim **d, int rank,
                           const char *units, const char *desc) {
  nh_w_attr_str(w, ds, "description", desc);
  nh_w_attr_str(w, ds, "units", units);
  nh_w_attr_str(w, ds, "dimensions", dims);
  for (int i = 0; i < rank && !w->failed; i++) {
    if (H5DSset_label(ds, (unsigned)i, d[i]->name) < 0)
      nh_w_fail(w, "cannot label %.100s (dimension %.100s)", name, d[i]->name);
    else if (d[i]->scale && d[i]->scale != ds && H5DSattach_scale(ds, d[i]->scale, (unsigned)i) < 0)
      nh_w_fail(w, "cannot attach the coordinate dataset to %.100s (dimension %.100s)", name, d[i]->name);
  }
}

/* Datasets of at least this many elements are stored chunked, shuffled and deflated (issue 13: a
 * study file shrinks several times; tables and coordinates stay contiguous, small files too). */
#define NH_W_COMPRESS_MIN 4096
#define NH_W_CHUNK_BYTES (1 << 20)

/* The creation property list of a dataset of this shape: H5P_DEFAULT (contiguous) for small or
 * empty ones, else chunks of whole trailing rows of at most NH_W_CHUNK_BYTES, with the shuffle
 * and deflate (level 4) filters. The caller closes it unless it is H5P_DEFAULT. */
static hid_t creation_plist(int rank, const hsize_t *shape, hsize_t n, size_t elem) {
  /* n, the product of shape, is 0 with an empty dimension and 1 for a scalar (rank 0) */
  if (n < NH_W_COMPRESS_MIN || !H5Zfilter_avail(H5Z_FILTER_DEFLATE)) return H5P_DEFAULT;
  hsize_t chunk[NH_W_DIMS], bytes = elem * n;
  for (int i = 0; i < rank; i++) chunk[i] = shape[i];
  for (int i = 0; i < rank; i++)
    while (chunk[i] > 1 && bytes > NH_W_CHUNK_BYTES) {
      bytes = bytes / chunk[i] * ((chunk[i] + 1) / 2);
      chunk[i] = (chunk[i] + 1) / 2;
    }
  hid_t dcpl = H5Pcreate(H5P_DATASET_CREATE);
  if (H5Pset_chunk(dcpl, rank, chunk) < 0 || H5Pset_shuffle(dcpl) < 0 || H5Pset_deflate(dcpl, 4) < 0) {
    H5Pclose(dcpl); /* fails harmlessly if dcpl is -1 */
    return H5P_DEFAULT;
  }
  return dcpl;
}

/* Creates and writes one dataset; returns it open (or -1). */
static hid_t put(nh_writer *w, hid_t loc, const char *name, const char *dims, hid_t ftype, hid_t mtype,
                 const void *data, const char *units, const char *desc) {
  nh_wdim *d[NH_W_DIMS];
  int rank = parse_dims(w, dims, d);
  if (rank < 0) return -1;
  if (!data) {
    nh_w_fail(w, "no data for dataset %s (a result field left unset)", name);
    return -1;
  }
  hsize_t shape[NH_W_DIMS], n = 1;
  for (int i = 0; i < rank; i++) n *= (shape[i] = d[i]->size);
  hid_t space = H5Screate_simple(rank, shape, NULL);
  hid_t dcpl = creation_plist(rank, shape, n, H5Tget_size(ftype));
  errno = 0; /* nh_w_fail reports the OS's reason of a failure below, not an older one */
  hid_t ds = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (dcpl != H5P_DEFAULT) H5Pclose(dcpl);
  if (ds < 0 || (n > 0 && H5Dwrite(ds, mtype, H5S_ALL, H5S_ALL, H5P_DEFAULT, data) < 0)) {
    nh_w_fail(w, "cannot write dataset %s", name);
  } else {
    finish_dataset(w, ds, name, dims, d, rank, units, desc);
  }
  H5Sclose(space);
  if (w->failed) {
    H5Dclose(ds); /* fails harmlessly if ds is -1 */
    ds = -1;
  }
  return ds;
}

static void put_close(nh_writer *w, hid_t loc, const char *name, const char *dims, hid_t ftype, hid_t mtype,
                      const void *data, const char *units, const char *desc) {
  H5Dclose(put(w, loc, name, dims, ftype, mtype, data, units, desc)); /* -1 after a failure: a no-op */
}

void nh_w_rows(nh_writer *w, hid_t loc, const char *name, const char *dims, hid_t ftype, int tail, nh_w_row_fn row,
               const void *ctx, const char *units, const char *desc) {
  nh_wdim *d[NH_W_DIMS];
  const int rank = parse_dims(w, dims, d);
  if (rank < 0) return;
  hsize_t shape[NH_W_DIMS], start[NH_W_DIMS] = {0}, count[NH_W_DIMS], rows = 1, len = 1, n = 1;
  for (int i = 0; i < rank; i++) {
    n *= (shape[i] = d[i]->size);
    if (i < rank - tail) rows *= shape[i], count[i] = 1;
    else len *= shape[i], count[i] = shape[i];
  }
  hid_t space = H5Screate_simple(rank, shape, NULL), mspace = H5Screate_simple(1, &len, NULL);
  hid_t dcpl = creation_plist(rank, shape, n, H5Tget_size(ftype));
  errno = 0;
  hid_t ds = H5Dcreate2(loc, name, ftype, space, H5P_DEFAULT, dcpl, H5P_DEFAULT);
  if (dcpl != H5P_DEFAULT) H5Pclose(dcpl);
  double *buf = nh_w_array(w, len, sizeof(double));
  if (ds < 0) nh_w_fail(w, "cannot write dataset %s", name);
  for (hsize_t r = 0; r < rows && len && !w->failed; r++) {
    /* Row r's index along the leading dimensions, the last of them fastest. */
    for (hsize_t rest = r, i = (hsize_t)(rank - tail); i-- > 0;) start[i] = rest % shape[i], rest /= shape[i];
    if (row(ctx, (long long)r, buf) < 0) nh_w_fail(w, "cannot read back the rows of dataset %s", name);
    else if ((rank ? H5Sselect_hyperslab(space, H5S_SELECT_SET, start, NULL, count, NULL)
                   : H5Sselect_all(space)) < 0 || /* a scalar (rank 0): its one value; no hyperslab there */
             H5Dwrite(ds, H5T_NATIVE_DOUBLE, mspace, space, H5P_DEFAULT, buf) < 0)
      nh_w_fail(w, "cannot write dataset %s", name);
  }
  if (!w->failed) finish_dataset(w, ds, name, dims, d, rank, units, desc);
  free(buf);
  H5Sclose(space), H5Sclose(mspace);
  H5Dclose(ds);
}

void nh_w_f64_rows(nh_writer *w, hid_t loc, const char *name, const char *dims, int tail, nh_w_row_fn row,
                   const void *ctx, const char *units, const char *desc) {
  nh_w_rows(w, loc, name, dims, H5T_IEEE_F64LE, tail, row, ctx, units, desc);
}

void nh_w_f64(nh_writer *w, hid_t loc, const char *name, const char *dims, const double *data, const char *units,
              const char *desc) {
  put_close(w, loc, name, dims, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, data, units, desc);
}

void nh_w_i32(nh_writer *w, hid_t loc, const char *name, const char *dims, const int *data, const char *units,
              const char *desc) {
  put_close(w, loc, name, dims, H5T_STD_I32LE, H5T_NATIVE_INT, data, units, desc);
}

void nh_w_compound(nh_writer *w, hid_t loc, const char *name, const char *dims, hid_t ftype, hid_t mtype,
                   const void *data, const char *units, const char *desc) {
  put_close(w, loc, name, dims, ftype, mtype, data, units, desc);
}

void nh_w_cost(nh_writer *w, hid_t loc, const char *name, const char *dims, const nh_cost *data, const char *desc) {
  hid_t ft = nh_schema_cost_type(1), mt = nh_schema_cost_type(0);
  put_close(w, loc, name, dims, ft, mt, data, nh_schema_cost_units, desc);
  H5Tclose(ft);
  H5Tclose(mt);
}

/* One column of a result (studies/columns.h) with the attributes its descriptor gives. */
static void put_column(nh_writer *w, hid_t loc, const nh_result_column *c, const void *r) {
  const void *data = nh_column_data(c, r);
  if (c->flags & NH_COLUMN_SCALE) nh_w_scale_f64(w, loc, c->name, c->dims, data, c->units, c->doc);
  else if (c->type == NH_COLUMN_F64) nh_w_f64(w, loc, c->name, c->dims, data, c->units, c->doc);
  else if (c->type == NH_COLUMN_I32) nh_w_i32(w, loc, c->name, c->dims, data, c->units, c->doc);
  else nh_w_cost(w, loc, c->name, c->dims, data, c->doc);
}

/* The coordinates first: a dataset is attached to the scales of its dimensions that exist when it is
 * written. */
void nh_w_columns(nh_writer *w, hid_t loc, const nh_result_column *cols, const void *r) {
  for (int scales = 1; scales >= 0; scales--)
    for (const nh_result_column *c = cols; c->name; c++)
      if (!(c->flags & (NH_COLUMN_SCRATCH | NH_COLUMN_APART)) && ((c->flags & NH_COLUMN_SCALE) != 0) == scales &&
          nh_column_present(c, w->st))
        put_column(w, loc, c, r);
}

void nh_w_column_rows(nh_writer *w, hid_t loc, const nh_result_column *cols, const char *name, int tail,
                      nh_w_row_fn row, const void *ctx) {
  const nh_result_column *c = nh_column_find(cols, name);
  if (!c) {
    nh_w_fail(w, "no column %s in the kind's table", name);
    return;
  }
  nh_w_rows(w, loc, c->name, c->dims, c->type == NH_COLUMN_I32 ? H5T_STD_I32LE : H5T_IEEE_F64LE, tail, row, ctx,
            c->units, c->doc);
}

static hid_t put_strings(nh_writer *w, hid_t loc, const char *name, const char *dim, const char *const *data,
                         const char *desc) {
  nh_wdim *d[NH_W_DIMS];
  if (!data && !w->failed) {
    nh_w_fail(w, "no data for dataset %s (a result field left unset)", name);
    return -1;
  }
  if (parse_dims(w, dim, d) != 1) return -1;
  const char **v = nh_w_array(w, d[0]->size, sizeof *v);
  if (!v) return -1;
  for (hsize_t i = 0; i < d[0]->size; i++) v[i] = data[i] ? data[i] : "";
  hid_t t = vlen_str();
  hid_t ds = put(w, loc, name, dim, t, t, v, "-", desc);
  H5Tclose(t);
  free(v);
  return ds;
}

void nh_w_strings(nh_writer *w, hid_t loc, const char *name, const char *dim, const char *const *data,
                  const char *desc) {
  H5Dclose(put_strings(w, loc, name, dim, data, desc));
}

static void make_scale(nh_writer *w, hid_t ds, const char *dim) {
  nh_wdim *d = find_dim(w, dim);
  if (H5DSset_scale(ds, dim) < 0) { /* also when put failed (ds -1) */
    nh_w_fail(w, "cannot make the coordinate dataset of dimension %s", dim);
    H5Dclose(ds);
    return;
  }
  if (d->scale) H5Dclose(d->scale);
  d->scale = ds; /* kept open for attaching; closed with the file */
}

void nh_w_scale_f64(nh_writer *w, hid_t loc, const char *name, const char *dim, const double *data,
                    const char *units, const char *desc) {
  make_scale(w, put(w, loc, name, dim, H5T_IEEE_F64LE, H5T_NATIVE_DOUBLE, data, units, desc), dim);
}

void nh_w_scale_strings(nh_writer *w, hid_t loc, const char *name, const char *dim, const char *const *data,
                        const char *desc) {
  make_scale(w, put_strings(w, loc, name, dim, data, desc), dim);
}

/* ---- the file ------------------------------------------------------------------------------ */

/* Root attributes: the study and its full provenance. */
/* s as one line of text (attribute name), its control characters written as '?': the reader
 * refuses them in every string but the spec's text (nh_r_check_text), and a path or a command line
 * may hold one (a file name with a line break). */
static void attr_one_line(nh_writer *w, hid_t obj, const char *name, const char *s) {
  if (!s) s = ""; /* as nh_w_attr_str writes NULL */
  char *line = nh_w_array(w, strlen(s) + 1, 1);
  if (!line) return;
  for (size_t i = 0; s[i]; i++) line[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7f ? '?' : s[i];
  nh_w_attr_str(w, obj, name, line);
  free(line);
}

static void provenance(nh_writer *w, const char *command) {
  const nh_study *st = w->st;
  char sys[NH_TEXT_CANONICAL], date[NH_TEXT_NAME];
  time_t now = time(NULL);
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  nh_system_format(&st->sys, sys, sizeof sys);
  hid_t f = w->file;
  nh_w_attr_i32(w, f, "schema_version", NH_SCHEMA_VERSION);
  nh_w_attr_str(w, f, "study", w->kind->name);
  nh_w_attr_str(w, f, "system", sys);
  nh_w_attr_i32(w, f, "n", st->sys.n);
  nh_w_attr_i32(w, f, "k", st->sys.k);
  nh_w_attr_f64(w, f, "T", st->T);
  attr_one_line(w, f, "spec_file", st->spec_file);
  nh_w_attr_str(w, f, "spec_text", st->spec_text);
  attr_one_line(w, f, "overrides", st->overrides);
  attr_one_line(w, f, "command", command);
  nh_w_attr_str(w, f, "version", nh_results_version());
  nh_w_attr_str(w, f, "compiler", nh_results_compiler());
  nh_w_attr_str(w, f, "date", date);
  nh_w_attr_i32(w, f, "threads", omp_get_max_threads());
  nh_w_attr_i32(w, f, "ranks", nh_study_ranks()); /* MPI ranks that ran the tasks (1 without mpirun) */
  nh_w_attr_str(w, f, "conventions", "nhbench results schema 2 (results/README.md): every dataset has attributes "
                                     "description, units and dimensions");
}

static void close_scales(nh_writer *w) {
  for (int i = 0; i < w->ndims; i++)
    if (w->dim[i].scale) H5Dclose(w->dim[i].scale);
  w->ndims = 0;
}

int nh_w_file(const char *path, const nh_study *st, nh_w_body body, const void *r, const char *command, char *err,
              size_t errlen) {
  return nh_w_kind_file(path, st, nh_study_kinds[st->kind], body, r, command, err, errlen);
}

int nh_w_kind_file(const char *path, const nh_study *st, const nh_study_kind_type *kind, nh_w_body body,
                   const void *r, const char *command, char *err, size_t errlen) {
  /* The rename below would replace a device or a pipe there (run as root: /dev/null itself). */
  struct stat sb;
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    snprintf(err, errlen, "%s: not a regular file (a directory, device, pipe or socket); nothing written there", path);
    return -1;
  }
  char tmp[NH_TEXT_PATH + NH_TEXT_NAME];
  snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL);
  nh_writer w = {.st = st, .kind = kind};
  /* Created, never followed: whatever is at the temporary's name (a stale file, a planted link)
   * is unlinked, and the file made exclusively (O_CREAT | O_EXCL fails on a link). */
  errno = 0;
  w.file = unlink(tmp) == 0 || errno == ENOENT ? H5Fcreate(tmp, H5F_ACC_EXCL, H5P_DEFAULT, H5P_DEFAULT) : -1;
  if (w.file < 0) {
    const int os_error = errno;
    /* HDF5 may have made the file before failing to write its first bytes (a full disk): the name
     * was unlinked and created exclusively just above, so what is there now is that empty start. */
    remove(tmp);
    snprintf(err, errlen, "%s: cannot create the results file (as %s: %s); any earlier file there is unchanged", path,
             tmp, os_error ? strerror(os_error) : "HDF5 refused");
    return -1;
  }
  provenance(&w, command);
  hid_t g = nh_w_group(&w, w.file, kind->name, "the study's results (results/README.md)");
  body(&w, g, r); /* after a failure (g is -1) every block is a no-op */
  H5Gclose(g);
  close_scales(&w);
  errno = 0;
  if (H5Fclose(w.file) < 0) nh_w_fail(&w, "%s", "cannot close the file");
  if (!w.failed && rename(tmp, path) != 0) nh_w_fail(&w, "%s", "cannot rename the temporary file onto it");
  if (w.failed) {
    snprintf(err, errlen, "%s: writing the results failed: %s; any earlier file there is unchanged", path, w.err);
    remove(tmp);
    return -1;
  }
  return 0;
}
