/* libFuzzer target: the results reader (results/read*.c) on valid HDF5 files with wrong contents.
 * The input picks a seed results file (first byte) and lists edits applied to a copy of it through
 * HDF5, so that what is tested is the reader's own checks, not HDF5's parser (fuzz_results.c):
 *   [op] [target, 2 bytes] [n] [n payload bytes]   repeated
 * targets are the file's datasets and attributes in HDF5's name order; ops (op % 4): delete it,
 * overwrite its numbers (payload bytes as raw values, or with bit 4 of op as small integers, for
 * indices and counts) or one of its strings (entry payload[0] becomes the rest of the payload: a
 * method name of `methods`, an observable name of `order`, a component label), replace a string
 * attribute (a dataset's `dimensions`) by the payload text, or replace a dataset by one of another
 * shape (rank and sizes from the payload). Seeds with names that were shell or gnuplot code in
 * tests/fuzz/corpus/results_edit/ (hostile_*), and tests/fuzz/results.dict. */
#define _POSIX_C_SOURCE 200809L /* getpid */
#include <hdf5.h>
#include <string.h>

#include "results/schema.h"
#include "tests/fuzz/fuzz_common.h"
#include "tests/fuzz/fuzz_read.h"

/* The seeds: results files of every study kind, made by make fuzz-seeds (scripts/fuzz_seeds.sh). */
static const char *const seed_names[] = {"convergence", "ensemble", "ensemble_grid", "onestep", "trajectory",
                                         "work_precision"};
#define NSEEDS (sizeof seed_names / sizeof seed_names[0])
static struct {
  uint8_t *data;
  size_t size;
} seeds[NSEEDS];

static void load_seed(size_t i) {
  char path[4096];
  snprintf(path, sizeof path, "%s/%s.h5", NHBENCH_FUZZ_SEEDS, seed_names[i]);
  FILE *f = fopen(path, "rb");
  if (!f) fprintf(stderr, "fuzz_results_edit: no seed %s: run make fuzz-seeds\n", path);
  if (!f || fseek(f, 0, SEEK_END) || (seeds[i].size = (size_t)ftell(f)) == 0 || fseek(f, 0, SEEK_SET)) abort();
  seeds[i].data = malloc(seeds[i].size);
  if (fread(seeds[i].data, 1, seeds[i].size, f) != seeds[i].size) abort();
  fclose(f);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  fuzz_init(".h5");
  H5Eset_auto2(H5E_DEFAULT, NULL, NULL); /* the reader reports errors itself; so may an edit */
  for (size_t i = 0; i < NSEEDS; i++) load_seed(i);
  return 0;
}

/* The edit targets: object path and attribute name ("" for the dataset itself). */
#define MAX_TARGETS 1024
typedef struct {
  int n;
  char obj[MAX_TARGETS][160], attr[MAX_TARGETS][64];
  const char *current; /* the object whose attributes are being listed */
} targets;

static void add_target(targets *t, const char *obj, const char *attr) {
  if (t->n == MAX_TARGETS) return;
  snprintf(t->obj[t->n], sizeof t->obj[0], "%s", obj);
  snprintf(t->attr[t->n], sizeof t->attr[0], "%s", attr);
  t->n++;
}

static herr_t on_attr(hid_t loc, const char *name, const H5A_info_t *info, void *data) {
  (void)loc, (void)info;
  targets *t = data;
  add_target(t, t->current, name);
  return 0;
}

static void add_object(targets *t, hid_t file, const char *path) {
  hid_t o = H5Oopen(file, path, H5P_DEFAULT);
  if (o < 0) return;
  if (H5Iget_type(o) == H5I_DATASET) add_target(t, path, "");
  t->current = path;
  H5Aiterate2(o, H5_INDEX_NAME, H5_ITER_INC, NULL, on_attr, t);
  H5Oclose(o);
}

static herr_t on_link(hid_t group, const char *name, const H5L_info_t *info, void *data) {
  (void)group, (void)info;
  add_object(data, group, name);
  return 0;
}

/* Fills n values of the native type of class cls, size sz, from the payload, cyclically. */
static void *values_from(const uint8_t *p, size_t len, H5T_class_t cls, size_t sz, hssize_t n, int small) {
  unsigned char *buf = calloc((size_t)n + 1, sz);
  for (hssize_t i = 0; i < n && len; i++) {
    unsigned char *v = buf + (size_t)i * sz;
    const int8_t s = (int8_t)p[(size_t)i % len];
    if (!small) {
      for (size_t b = 0; b < sz; b++) v[b] = p[((size_t)i * sz + b) % len];
    } else if (cls == H5T_FLOAT && sz == sizeof(double)) {
      *(double *)v = s;
    } else if (cls == H5T_INTEGER && sz == sizeof(int)) {
      *(int *)v = s;
    } else if (cls == H5T_INTEGER && sz == sizeof(long long)) {
      *(long long *)v = s;
    }
  }
  return buf;
}

/* Entry p[0] of the variable-length strings of o (a dataset, or an attribute if is_attr) becomes
 * the text of p[1, len). */
static void replace_string(hid_t o, int is_attr, hid_t ft, hid_t sp, const uint8_t *p, size_t len) {
  const hssize_t n = H5Sget_simple_extent_npoints(sp);
  if (n <= 0 || n > 4096 || len == 0) return;
  char text[256], **s = calloc((size_t)n, sizeof *s);
  snprintf(text, sizeof text, "%.*s", (int)(len - 1), (const char *)p + 1);
  hid_t mt = H5Tcopy(H5T_C_S1);
  H5Tset_size(mt, H5T_VARIABLE), H5Tset_cset(mt, H5Tget_cset(ft));
  if (s && (is_attr ? H5Aread(o, mt, s) : H5Dread(o, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, s)) >= 0) {
    char **entry = &s[p[0] % n], *old = *entry;
    *entry = text;
    if (is_attr) H5Awrite(o, mt, s);
    else H5Dwrite(o, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, s);
    *entry = old;
  }
  if (s) nh_schema_reclaim(mt, sp, s); /* also after a failed read: what it filled in (s was zeroed) */
  free(s);
  H5Tclose(mt);
}

/* Overwrites the numbers of a dataset or attribute, or one of its strings (compounds are left
 * alone). */
static void overwrite(hid_t file, const char *obj, const char *attr, const uint8_t *p, size_t len, int small) {
  const int is_attr = attr[0] != '\0';
  /* An attribute through its object: one opened by H5Aopen_by_name on a group or dataset below the
   * root was not written by HDF5 1.10 ("can't locate open attribute"), silently. */
  hid_t parent = is_attr ? H5Oopen(file, obj, H5P_DEFAULT) : -1;
  hid_t o = is_attr ? H5Aopen(parent, attr, H5P_DEFAULT) : H5Dopen2(file, obj, H5P_DEFAULT);
  hid_t ft = is_attr ? H5Aget_type(o) : H5Dget_type(o), sp = is_attr ? H5Aget_space(o) : H5Dget_space(o);
  const H5T_class_t cls = H5Tget_class(ft);
  if (o >= 0 && (cls == H5T_INTEGER || cls == H5T_FLOAT)) {
    hid_t mt = H5Tget_native_type(ft, H5T_DIR_DEFAULT);
    void *buf = values_from(p, len, cls, H5Tget_size(mt), H5Sget_simple_extent_npoints(sp), small);
    if (is_attr) H5Awrite(o, mt, buf);
    else H5Dwrite(o, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    free(buf);
    H5Tclose(mt);
  } else if (o >= 0 && cls == H5T_STRING && H5Tis_variable_str(ft) > 0) {
    replace_string(o, is_attr, ft, sp, p, len);
  }
  H5Sclose(sp), H5Tclose(ft);
  if (is_attr) H5Aclose(o), H5Oclose(parent);
  else H5Dclose(o);
}

/* Attribute NAME of OBJ becomes the scalar string TEXT. */
static void set_string(hid_t file, const char *obj, const char *name, const char *text) {
  hid_t t = H5Tcopy(H5T_C_S1), sp = H5Screate(H5S_SCALAR);
  H5Tset_size(t, H5T_VARIABLE);
  if (H5Aexists_by_name(file, obj, name, H5P_DEFAULT) > 0) H5Adelete_by_name(file, obj, name, H5P_DEFAULT);
  hid_t a = H5Acreate_by_name(file, obj, name, t, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
  if (a >= 0) H5Awrite(a, t, &text), H5Aclose(a);
  H5Sclose(sp), H5Tclose(t);
}

/* The dataset OBJ is replaced by one of the same type and another shape, keeping `dimensions`. */
static void reshape(hid_t file, const char *obj, const uint8_t *p, size_t len) {
  hid_t d = H5Dopen2(file, obj, H5P_DEFAULT);
  if (d < 0 || len == 0) return (void)(d >= 0 && H5Dclose(d));
  hid_t ft = H5Dget_type(d);
  char *dims = NULL;
  hid_t st = H5Tcopy(H5T_C_S1);
  H5Tset_size(st, H5T_VARIABLE);
  if (H5Aexists(d, "dimensions") > 0) {
    hid_t a = H5Aopen(d, "dimensions", H5P_DEFAULT), at = H5Aget_type(a);
    if (H5Tis_variable_str(at) > 0 && H5Aread(a, st, &dims) < 0) dims = NULL;
    H5Tclose(at), H5Aclose(a);
  }
  H5Dclose(d);
  const H5T_class_t cls = H5Tget_class(ft);
  if (cls == H5T_INTEGER || cls == H5T_FLOAT) {
    hsize_t shape[3];
    const int rank = 1 + p[0] % 3;
    hssize_t n = 1;
    for (int k = 0; k < rank; k++) n *= (hssize_t)(shape[k] = p[(size_t)(k + 1) % len] % 9);
    H5Ldelete(file, obj, H5P_DEFAULT);
    hid_t sp = H5Screate_simple(rank, shape, NULL), mt = H5Tget_native_type(ft, H5T_DIR_DEFAULT);
    hid_t nd = H5Dcreate2(file, obj, ft, sp, H5P_DEFAULT, H5P_DEFAULT, H5P_DEFAULT);
    void *buf = values_from(p, len, cls, H5Tget_size(mt), n, p[0] & 0x10);
    if (nd >= 0) H5Dwrite(nd, mt, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf), H5Dclose(nd);
    free(buf);
    H5Tclose(mt), H5Sclose(sp);
    if (dims) set_string(file, obj, "dimensions", dims);
  }
  if (dims) H5free_memory(dims);
  H5Tclose(st), H5Tclose(ft);
}

static void apply(hid_t file, const targets *t, int op, int k, const uint8_t *p, size_t len) {
  const char *obj = t->obj[k], *attr = t->attr[k];
  char text[256];
  snprintf(text, sizeof text, "%.*s", (int)len, (const char *)p);
  switch (op % 4) {
  case 0:
    if (attr[0]) H5Adelete_by_name(file, obj, attr, H5P_DEFAULT);
    else H5Ldelete(file, obj, H5P_DEFAULT);
    break;
  case 1: overwrite(file, obj, attr, p, len, op & 0x10); break;
  case 2: set_string(file, obj, attr[0] ? attr : "dimensions", text); break;
  default:
    if (!attr[0]) reshape(file, obj, p, len);
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (size == 0) return 0;
  fuzz_write(seeds[data[0] % NSEEDS].data, seeds[data[0] % NSEEDS].size);
  hid_t file = H5Fopen(fuzz_path, H5F_ACC_RDWR, H5P_DEFAULT);
  if (file < 0) abort(); /* a seed that HDF5 cannot open: the setup is broken */
  static targets t;
  t.n = 0;
  add_object(&t, file, "/");
  H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, on_link, &t);
  for (size_t at = 1; at + 4 <= size && t.n > 0;) {
    const uint8_t *r = data + at;
    const size_t len = r[3] <= size - at - 4 ? r[3] : size - at - 4;
    apply(file, &t, r[0], (r[1] << 8 | r[2]) % t.n, r + 4, len);
    at += 4 + len;
  }
  H5Fclose(file);
  fuzz_read_results(fuzz_path);
  return 0;
}
