/* Reading attributes and string datasets of results files (results/results.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "results/reader.h"
#include "results/schema.h"

char *nh_r_dup(const char *s) {
  size_t n = strlen(s ? s : "") + 1;
  char *d = malloc(n);
  if (d) memcpy(d, s ? s : "", n);
  return d;
}

char **nh_r_copy_strings(const char *raw, size_t n, size_t size, int vlen) {
  char **out = calloc(n + 1, sizeof *out);
  for (size_t i = 0; out && i < n; i++) {
    if (vlen) out[i] = nh_r_dup(((char *const *)raw)[i]);
    else if ((out[i] = calloc(size + 1, 1))) memcpy(out[i], raw + i * size, size);
    if (!out[i]) nh_h5_free_strings(out, (int)i), out = NULL;
  }
  return out;
}

int nh_r_check_text(const nh_h5 *f, const char *what, char *const *s, int count) {
  for (int i = 0; i < count; i++)
    for (const unsigned char *p = (const unsigned char *)s[i]; *p; p++)
      if (*p < 0x20 || *p == 0x7f) {
        fprintf(stderr, "%s: %s: %s, entry %d, holds a control character (byte %d, 0x%02x): not text nhbench "
                "writes (a damaged or hostile file?)\n", f->prog, f->path, what, i,
                (int)(p - (const unsigned char *)s[i]) + 1, *p);
        return -1;
      }
  return 0;
}

hid_t nh_r_loc(const nh_h5 *f, const char *obj) { return obj[0] == '/' ? f->file : f->group; }

const char *nh_r_where(const nh_h5 *f, const char *obj, char *buf, size_t len) {
  if (obj[0] == '/') snprintf(buf, len, "%s", obj);
  else if (strcmp(obj, ".") == 0) snprintf(buf, len, "/%s", f->kind_name ? f->kind_name : "?");
  else snprintf(buf, len, "/%s/%s", f->kind_name ? f->kind_name : "?", obj);
  return buf;
}

/* Strings: variable-length (as written) or fixed-length; `count` elements of an open attribute.
 * NULL if they cannot be read, or (*no_memory = 1) copied. */
static char **read_attr_strings(hid_t a, hid_t type, hid_t space, int count, int *no_memory) {
  const int vlen = H5Tis_variable_str(type) > 0;
  const size_t size = vlen ? sizeof(char *) : H5Tget_size(type);
  hid_t mt = H5Tcopy(vlen ? H5T_C_S1 : type);
  if (vlen) H5Tset_size(mt, H5T_VARIABLE), H5Tset_cset(mt, H5Tget_cset(type));
  char *raw = nh_calloc_array((size_t)count, size), **out = NULL;
  if (!raw) {
    *no_memory = 1;
  } else if (count == 0 || H5Aread(a, mt, raw) >= 0) {
    *no_memory = !(out = nh_r_copy_strings(raw, (size_t)count, size, vlen));
    if (vlen && count) nh_schema_reclaim(mt, space, raw);
  }
  free(raw);
  H5Tclose(mt);
  return out;
}

char *nh_r_attr_of(hid_t obj, const char *name, int *no_memory) {
  int ignored;
  if (!no_memory) no_memory = &ignored;
  *no_memory = 0;
  if (H5Aexists(obj, name) <= 0) return NULL;
  hid_t a = H5Aopen(obj, name, H5P_DEFAULT);
  /* HDF5 IDs are positive; a call on a failed one (-1) fails in turn (H5T_NO_CLASS, -1). */
  hid_t type = H5Aget_type(a), space = H5Aget_space(a);
  char *s = NULL;
  if (H5Tget_class(type) == H5T_STRING && H5Sget_simple_extent_npoints(space) == 1) {
    char **v = read_attr_strings(a, type, space, 1, no_memory);
    if (v) s = v[0];
    free(v);
  }
  H5Sclose(space);
  H5Tclose(type);
  H5Aclose(a);
  return s;
}

int nh_h5_has_attr(const nh_h5 *f, const char *obj, const char *name) {
  hid_t loc = nh_r_loc(f, obj);
  if (H5Oexists_by_name(loc, obj, H5P_DEFAULT) <= 0) return 0;
  return H5Aexists_by_name(loc, obj, name, H5P_DEFAULT) > 0;
}

static void close_attr(hid_t a, hid_t type, hid_t space) {
  H5Tclose(type);
  H5Sclose(space);
  H5Aclose(a);
}

/* Opens attribute NAME of OBJ as *a with its type, space and element count: 0, or -1 with a
 * message (and nothing left open). */
static int open_attr(const nh_h5 *f, const char *obj, const char *name, hid_t *a, hid_t *type, hid_t *space,
                     int *count) {
  char where[NH_R_WHERE];
  if (!nh_h5_has_attr(f, obj, name)) {
    fprintf(stderr, "%s: %s: missing attribute '%s' of %s\n", f->prog, f->path, name,
            nh_r_where(f, obj, where, sizeof where));
    return -1;
  }
  *a = H5Aopen_by_name(nh_r_loc(f, obj), obj, name, H5P_DEFAULT, H5P_DEFAULT);
  *type = H5Aget_type(*a); /* -1 if *a is (a failure falls through to n < 0) */
  *space = H5Aget_space(*a);
  hssize_t n = H5Sget_simple_extent_npoints(*space);
  if (n < 0 || n > 100000000) {
    fprintf(stderr, "%s: %s: cannot read attribute '%s' of %s\n", f->prog, f->path, name,
            nh_r_where(f, obj, where, sizeof where));
    close_attr(*a, *type, *space);
    return -1;
  }
  *count = (int)n;
  return 0;
}

int nh_h5_attr_is_string(const nh_h5 *f, const char *obj, const char *name) {
  if (!nh_h5_has_attr(f, obj, name)) return 0;
  hid_t a = H5Aopen_by_name(nh_r_loc(f, obj), obj, name, H5P_DEFAULT, H5P_DEFAULT);
  hid_t type = H5Aget_type(a);
  int s = H5Tget_class(type) == H5T_STRING;
  H5Tclose(type);
  H5Aclose(a);
  return s;
}

char **nh_h5_attr_strings(const nh_h5 *f, const char *obj, const char *name, int *count) {
  hid_t a, type, space;
  char where[NH_R_WHERE];
  if (open_attr(f, obj, name, &a, &type, &space, count) != 0) return NULL;
  char **s = NULL;
  int no_memory = 0;
  if (H5Tget_class(type) != H5T_STRING)
    fprintf(stderr, "%s: %s: attribute '%s' of %s is not text\n", f->prog, f->path, name,
            nh_r_where(f, obj, where, sizeof where));
  else if (!(s = read_attr_strings(a, type, space, *count, &no_memory)))
    fprintf(stderr, "%s: %s: %s attribute '%s' of %s\n", f->prog, f->path,
            no_memory ? "out of memory for" : "cannot read", name, nh_r_where(f, obj, where, sizeof where));
  close_attr(a, type, space);
  char what[NH_R_WHERE + 64];
  snprintf(what, sizeof what, "attribute '%s' of %s", name, nh_r_where(f, obj, where, sizeof where));
  if (s && strcmp(name, "spec_text") != 0 && nh_r_check_text(f, what, s, *count) != 0) { /* spec_text: many lines */
    nh_h5_free_strings(s, *count);
    s = NULL;
  }
  return s;
}

char *nh_h5_attr_string(const nh_h5 *f, const char *obj, const char *name) {
  int n = 0;
  char where[NH_R_WHERE];
  char **s = nh_h5_attr_strings(f, obj, name, &n);
  if (!s) return NULL;
  char *one = NULL;
  if (n == 1) one = s[0], s[0] = NULL;
  else fprintf(stderr, "%s: %s: attribute '%s' of %s is not a single string\n", f->prog, f->path, name,
               nh_r_where(f, obj, where, sizeof where));
  nh_h5_free_strings(s, n);
  return one;
}

double *nh_h5_attr_doubles(const nh_h5 *f, const char *obj, const char *name, int *n) {
  hid_t a, type, space;
  char where[NH_R_WHERE];
  if (open_attr(f, obj, name, &a, &type, &space, n) != 0) return NULL;
  H5T_class_t cls = H5Tget_class(type);
  double *v = NULL;
  if (cls != H5T_INTEGER && cls != H5T_FLOAT) {
    fprintf(stderr, "%s: %s: attribute '%s' of %s is not numeric\n", f->prog, f->path, name,
            nh_r_where(f, obj, where, sizeof where));
  } else {
    v = nh_malloc_array((size_t)(*n), sizeof(double));
    if (!v || (*n && H5Aread(a, H5T_NATIVE_DOUBLE, v) < 0)) {
      fprintf(stderr, "%s: %s: %s attribute '%s' of %s\n", f->prog, f->path, v ? "cannot read" : "out of memory for",
              name, nh_r_where(f, obj, where, sizeof where));
      free(v);
      v = NULL;
    }
  }
  close_attr(a, type, space);
  return v;
}

/* A numeric attribute holding exactly one value, converted to memtype. */
static int attr_scalar(const nh_h5 *f, const char *obj, const char *name, hid_t memtype, void *v) {
  hid_t a, type, space;
  int n, rc = -1;
  char where[NH_R_WHERE];
  if (open_attr(f, obj, name, &a, &type, &space, &n) != 0) return -1;
  H5T_class_t cls = H5Tget_class(type);
  if ((cls != H5T_INTEGER && cls != H5T_FLOAT) || n != 1)
    fprintf(stderr, "%s: %s: attribute '%s' of %s is not a single number\n", f->prog, f->path, name,
            nh_r_where(f, obj, where, sizeof where));
  else if (H5Aread(a, memtype, v) < 0)
    fprintf(stderr, "%s: %s: cannot read attribute '%s' of %s\n", f->prog, f->path, name,
            nh_r_where(f, obj, where, sizeof where));
  else
    rc = 0;
  close_attr(a, type, space);
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

void nh_h5_free_strings(char **s, int count) {
  if (!s) return;
  for (int i = 0; i < count; i++) free(s[i]);
  free(s);
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
