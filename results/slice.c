/* A slice of any dataset of the study group by its dimension names (results.h, issue 48 item 4):
 * the one selection that `nhbench export FILE dataset` and the claims checker share. The dataset's
 * `dimensions` attribute names its axes; selectors fix some, the rest stay free. */
#include <hdf5.h>
#include <hdf5_hl.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/text.h"
#include "integrators/integrator.h"
#include "results/reader.h"
#include "results/results.h"

typedef struct {
  nh_h5 *f;
  const char *name, *field; /* the dataset, and a cost record's counter */
  char *why;
  size_t whylen;
  int said;                /* why holds the reason of a failure */
  nh_h5_slice *s;          /* the slice: its dimension names; its shape and free dimensions once read */
  const nh_h5_select *sel; /* the nsel selectors */
  int nsel;
  long long hsel; /* the selected (or only) h, else -1 */
} slicer;

static int fail(slicer *r, const char *fmt, ...) {
  char msg[NH_TEXT_MESSAGE];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(r->why, r->whylen, "%s: %s", r->f->path, msg);
  r->said = 1;
  return -1;
}

int nh_h5_name_index(char *const *names, int count, const char *text) {
  size_t len = strlen(text);
  for (int i = 0; i < count; i++)
    if (strcmp(names[i], text) == 0 || (strncmp(names[i], text, len) == 0 && strncmp(names[i] + len, " [", 2) == 0))
      return i;
  return -1;
}

/* A method as a user writes it ("nh_newmark(alpha=0.5)") is found by its canonical name, as the file
 * stores it ("nh_newmark(beta=0,beta2=0,alpha=0.5,constraint=point)"). */
int nh_h5_method_index(const nh_h5 *f, const char *text) {
  char err[NH_TEXT_MESSAGE], canonical[NH_TEXT_CANONICAL];
  nh_method *m = nh_method_parse(text, err, sizeof err);
  if (!m) return nh_h5_name_index(f->methods, f->nmethods, text);
  nh_method_format(m, canonical, sizeof canonical);
  nh_method_free(m);
  return nh_h5_name_index(f->methods, f->nmethods, canonical);
}

/* The coordinates of dimension dim, n of them (h: the step sizes; sample: the times, at the
 * selected h index hsel where t is [h][sample]; otherwise 0, 1, 2, ...). malloc'd; NULL if they
 * cannot be read or out of memory. what (if not NULL) receives their name: "h", "t", or dim for
 * indices. */
static double *coordinates(nh_h5 *f, const char *dim, long long n, long long hsel, char *what, size_t len) {
  const int h = strcmp(dim, "h") == 0, times = strcmp(dim, "sample") == 0 && nh_h5_has(f, "t");
  char *tdims = times ? nh_h5_attr_string(f, "t", "dimensions") : NULL;
  const int t_of_h = tdims && strcmp(tdims, "sample") != 0;
  if (what) snprintf(what, len, "%s", h ? "h" : times && (!t_of_h || hsel >= 0) ? "t" : dim);
  double *c = NULL;
  if (h)
    c = nh_h5_doubles(f, "h", "h", NULL);
  else if (times && tdims && !t_of_h)
    c = nh_h5_doubles(f, "t", "sample", NULL);
  else if (t_of_h && hsel >= 0)
    c = nh_h5_doubles_at(f, "t", "h,sample", 1, &hsel, NULL);
  else if (!times || tdims) { /* indices: no coordinate dataset (t of several h, none selected) */
    c = nh_malloc_array((size_t)n, sizeof(double));
    for (long long i = 0; c && i < n; i++) c[i] = (double)i;
  }
  free(tdims);
  return c;
}

/* Visits the first dimension scale of a dimension: keeps (a reference to) it and stops. */
static herr_t keep_scale(hid_t did, unsigned dim, hid_t dsid, void *out) {
  (void)did, (void)dim;
  *(hid_t *)out = dsid;
  return H5Iinc_ref(dsid) < 0 ? -1 : 1;
}

/* The index of text among the names along dimension d (dim) of the dataset: the strings of its
 * dimension scale (norms for norm, state_labels for state, ...); -1 if there is none, or it holds
 * no strings, or none is text. */
static long long scale_name_index(slicer *r, int d, const char *dim, const char *text) {
  hid_t ds = H5Dopen2(r->f->group, r->name, H5P_DEFAULT), scale = H5I_INVALID_HID;
  if (ds < 0) return -1;
  const int found = H5DSiterate_scales(ds, (unsigned)d, NULL, keep_scale, &scale) == 1;
  H5Dclose(ds);
  if (!found) return -1;
  char path[NH_TEXT_NAME] = "";
  hid_t type = H5Dget_type(scale);
  const int strings = H5Tget_class(type) == H5T_STRING;
  H5Tclose(type);
  const ssize_t len = H5Iget_name(scale, path, sizeof path);
  H5Dclose(scale);
  const char *base = strrchr(path, '/'); /* the scales of a study group's datasets are in that group */
  if (!strings || len <= 0 || (size_t)len >= sizeof path || !base) return -1;
  int count = 0;
  char **names = nh_h5_strings(r->f, base + 1, dim, &count);
  const long long idx = names ? nh_h5_name_index(names, count, text) : -1;
  nh_h5_free_strings(names, count);
  return idx;
}

/* The index selector s picks in dimension d (dim, size n), or -1 with the reason. */
static long long pick(slicer *r, const nh_h5_select *s, int d, const char *dim, long long n, long long hsel) {
  long long idx = -1;
  if (strcmp(dim, "method") == 0 && s->by_name) {
    idx = nh_h5_method_index(r->f, s->name);
    if (idx < 0) return fail(r, "no method '%s' in the file", s->name);
  } else if (s->by_name && (strcmp(dim, "ic") == 0 || strcmp(dim, "component") == 0)) {
    int count = 0;
    char **names = strcmp(dim, "ic") == 0 ? nh_h5_strings(r->f, "ic_names", "ic", &count)
                                          : nh_h5_attr_strings(r->f, r->name, "labels", &count);
    idx = names ? nh_h5_name_index(names, count, s->name) : -1;
    nh_h5_free_strings(names, count);
    if (idx < 0) return fail(r, "no %s named '%s'", dim, s->name);
  } else if (strcmp(dim, "h") == 0 || strcmp(dim, "sample") == 0) {
    if (s->by_name) return fail(r, "dimension %s takes a number, not '%s'", strcmp(dim, "h") == 0 ? "h" : "t", s->name);
    double *c = coordinates(r->f, dim, n, hsel, NULL, 0), best = INFINITY;
    if (!c) return fail(r, "cannot read the coordinates of dimension %s", dim);
    for (long long i = 0; i < n; i++)
      if (fabs(c[i] - s->value) < best) best = fabs(c[i] - s->value), idx = i;
    /* h must match to round-off; a time within half a sample interval (halfway: the earlier) */
    double tol = strcmp(dim, "h") == 0 ? 1e-9 * fabs(s->value)
                 : n > 1               ? 0.5 * fabs(c[1] - c[0]) + 1e-12 * fabs(s->value)
                                       : INFINITY;
    free(c);
    if (!(best <= tol))
      return fail(r, "no %s = %.10g in the file", strcmp(dim, "h") == 0 ? "h" : "sample at t", s->value);
  } else if (s->by_name) {
    if ((idx = scale_name_index(r, d, dim, s->name)) < 0)
      return fail(r, "dimension %s has no name '%s' (it takes an index, or a name of its coordinate)", dim, s->name);
  } else {
    idx = (long long)s->value;
    if (idx != s->value) return fail(r, "dimension %s takes an index, not %g", dim, s->value);
  }
  if (idx < 0 || idx >= n) return fail(r, "index out of range in dimension %s", dim);
  return idx;
}

/* Whether the records of type (a compound) have a number member called field; else the refusal,
 * with the members that are numbers. */
static int number_member(slicer *r, hid_t type, const char *field) {
  char list[NH_TEXT_MESSAGE] = "";
  int found = 0;
  for (int i = 0, n = H5Tget_nmembers(type); i < n; i++) {
    const H5T_class_t cls = H5Tget_member_class(type, (unsigned)i);
    char *name = H5Tget_member_name(type, (unsigned)i);
    if (name && (cls == H5T_INTEGER || cls == H5T_FLOAT)) {
      found |= strcmp(name, field) == 0;
      nh_text_append(list, sizeof list, ", ", "%s", name);
    }
    H5free_memory(name);
  }
  if (!found)
    fail(r, "dataset '%s' holds records: --field names a number of them (%s), not '%s'", r->name, list, field);
  return found;
}

/* Splits "method,h,ic,sample,component" into s->dims; the rank. */
static int split_dims(const char *dims, nh_h5_slice *s) {
  int n = 0;
  for (const char *p = dims; *p && n < NH_H5_MAX_DIMS; n++) {
    size_t len = strcspn(p, ",");
    snprintf(s->dims[n], sizeof s->dims[n], "%.*s", (int)len, p);
    p += len + (p[len] == ',');
  }
  return n;
}

/* The selector of dimension dim, or NULL. */
static const nh_h5_select *selector(const nh_h5_select *sel, int nsel, const char *dim) {
  for (int i = 0; i < nsel; i++)
    if (strcmp(sel[i].dim, dim) == 0) return &sel[i];
  return NULL;
}

/* Every selector names a dimension of the dataset (t: its sample dimension). */
static int check_selectors(slicer *r, const nh_h5_slice *s, const nh_h5_select *sel, int nsel) {
  for (int i = 0; i < nsel; i++) {
    int known = strcmp(sel[i].dim, "t") == 0;
    for (int d = 0; d < s->rank; d++) known |= strcmp(s->dims[d], sel[i].dim) == 0;
    if (!known) return fail(r, "dataset '%s' has no dimension '%s'", r->name, sel[i].dim);
  }
  return 0;
}

/* The index each selector fixes (h first: a sample's time depends on it), NH_R_WHOLE along the
 * free dimensions (and those of size 1 no selector fixes); r->hsel the selected (or only) h. 0, or
 * -1 with the reason. */
static int fix_indices(slicer *r, long long *index) {
  nh_h5_slice *s = r->s;
  const nh_h5_select *sel = r->sel;
  const int nsel = r->nsel;
  r->hsel = -1;
  for (int d = 0; d < s->rank; d++) {
    const nh_h5_select *h = selector(sel, nsel, "h");
    if (strcmp(s->dims[d], "h") != 0) continue;
    if (h && (index[d] = r->hsel = pick(r, h, d, "h", s->shape[d], -1)) < 0) return -1;
    if (!h && s->shape[d] == 1) r->hsel = 0; /* one step size: its times */
  }
  for (int d = 0; d < s->rank; d++) {
    const int sample = strcmp(s->dims[d], "sample") == 0;
    const nh_h5_select *at = selector(sel, nsel, sample && selector(sel, nsel, "t") ? "t" : s->dims[d]);
    if (strcmp(s->dims[d], "h") == 0 && at) continue;
    if (at) {
      if ((index[d] = pick(r, at, d, s->dims[d], s->shape[d], r->hsel)) < 0) return -1;
    } else {
      index[d] = NH_R_WHOLE;
      if (s->shape[d] != 1) s->free_dim[s->nfree++] = d;
    }
  }
  return check_selectors(r, s, sel, nsel);
}

/* nh_r_pick: once the dataset is open, its shape, and the part the selectors choose. */
static int choose(void *ctx, int rank, const hsize_t *shape, long long *index) {
  slicer *r = ctx;
  if (rank != r->s->rank) return fail(r, "cannot read dataset '%s'", r->name); /* checked: not reached */
  for (int d = 0; d < rank; d++) r->s->shape[d] = (long long)shape[d];
  return fix_indices(r, index);
}

/* The number of values of the slice: every combination of the free indices. */
static long long slice_count(const nh_h5_slice *s) {
  long long n = 1;
  for (int k = 0; k < s->nfree; k++) n *= s->shape[s->free_dim[k]];
  return n;
}

/* The slice's values as doubles, read from the file alone (the hyperslab the selectors choose:
 * their indices, the free dimensions whole): floats as they are, integers converted, records (cost
 * counters, the orders table) by their number member `field`; of a 1-D string dataset (a note per
 * method), 1 where a string is not empty. The slice's shape and free dimensions set; NULL with the
 * reason (r->said) where a selector or a field does not fit, else without. */
static double *read_values(slicer *r, const char *dims) {
  H5T_class_t cls = H5T_NO_CLASS; /* no such dataset: none of the classes read below */
  int member = 1;
  hid_t ds = H5Dopen2(r->f->group, r->name, H5P_DEFAULT);
  if (ds >= 0) {
    hid_t type = H5Dget_type(ds);
    if (type >= 0) cls = H5Tget_class(type);
    if (cls == H5T_COMPOUND) member = number_member(r, type, r->field);
    if (type >= 0) H5Tclose(type);
    H5Dclose(ds);
  }
  if (!member) return NULL;
  double *x = NULL;
  if (cls == H5T_FLOAT)
    x = nh_r_read_part(r->f, r->name, dims, H5T_NATIVE_DOUBLE, H5T_FLOAT, sizeof(double), choose, r, NULL);
  if (cls == H5T_COMPOUND) { /* HDF5 converts the one member, by name, to a double */
    hid_t one = H5Tcreate(H5T_COMPOUND, sizeof(double));
    H5Tinsert(one, r->field, 0, H5T_NATIVE_DOUBLE);
    x = nh_r_read_part(r->f, r->name, dims, one, H5T_COMPOUND, sizeof(double), choose, r, NULL);
    H5Tclose(one);
  }
  if (cls == H5T_INTEGER) {
    int *raw = nh_r_read_part(r->f, r->name, dims, H5T_NATIVE_INT, H5T_INTEGER, sizeof(int), choose, r, NULL);
    const long long n = raw ? slice_count(r->s) : 0;
    x = raw ? nh_malloc_array((size_t)n, sizeof(double)) : NULL;
    if (raw && !x) fail(r, "out of memory for dataset '%s'", r->name);
    for (long long i = 0; x && i < n; i++) x[i] = raw[i];
    free(raw);
  }
  int rank = 1;
  for (const char *p = dims; *p; p++) rank += *p == ',';
  if (cls == H5T_STRING && rank == 1) { /* a list, read whole */
    int count = 0;
    long long index[1] = {NH_R_WHOLE};
    char **notes = nh_h5_strings(r->f, r->name, dims, &count);
    if (notes) r->s->shape[0] = count;
    const long long n = notes && fix_indices(r, index) == 0 ? slice_count(r->s) : -1;
    x = n >= 0 ? nh_malloc_array((size_t)n, sizeof(double)) : NULL;
    if (n >= 0 && !x) fail(r, "out of memory for dataset '%s'", r->name);
    for (long long i = 0; x && i < n; i++) x[i] = notes[index[0] == NH_R_WHOLE ? i : index[0]][0] != '\0';
    nh_h5_free_strings(notes, count);
  }
  return x;
}

int nh_h5_slice_read(nh_h5 *f, const char *name, const char *field, const nh_h5_select *sel, int nsel, nh_h5_slice *s,
                     char *why, size_t whylen) {
  slicer r = {f, name, field ? field : "", why, whylen, 0, s, sel, nsel, -1};
  memset(s, 0, sizeof *s);
  if (whylen) why[0] = '\0';
  if (!nh_h5_has(f, name)) return fail(&r, "no dataset '%s'", name);
  char *dims = nh_h5_attr_string(f, name, "dimensions");
  if (!dims) return fail(&r, "dataset '%s' has no dimensions attribute", name);
  s->rank = split_dims(dims, s);
  s->x = read_values(&r, dims);
  free(dims);
  if (!s->x) {
    nh_h5_slice_free(s);
    return r.said ? -1 : fail(&r, "cannot read dataset '%s'", name);
  }
  s->count = slice_count(s);
  int ok = 1;
  for (int k = 0; ok && k < s->nfree; k++)
    ok = (s->coord[k] = coordinates(f, s->dims[s->free_dim[k]], s->shape[s->free_dim[k]], r.hsel, s->coord_name[k],
                                    sizeof s->coord_name[k])) != NULL;
  if (!ok) {
    nh_h5_slice_free(s);
    return fail(&r, "out of memory for a slice of '%s', or its coordinates unreadable", name);
  }
  return 0;
}

long long nh_h5_slice_index(const nh_h5_slice *s, long long i, int k) {
  for (int j = s->nfree - 1; j > k; j--) i /= s->shape[s->free_dim[j]];
  return i % s->shape[s->free_dim[k]];
}

void nh_h5_slice_free(nh_h5_slice *s) {
  for (int k = 0; k < NH_H5_MAX_DIMS; k++) free(s->coord[k]), s->coord[k] = NULL;
  free(s->x);
  s->x = NULL;
  s->count = 0;
}
