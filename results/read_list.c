/* The datasets of a study group as the file describes them (results.h, nh_h5_datasets): what
 * `nhbench info --datasets` lists for any study kind, without knowing the kind. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "results/reader.h"

typedef struct {
  nh_h5 *f;
  int n, cap, failed;
  nh_h5_dataset *d;
} list_visit;

/* One dataset's entry: its path, shape and string attributes, checked to be one line each. */
static int add_dataset(list_visit *v, hid_t ds, const char *name) {
  if (v->n == v->cap) {
    int cap = v->cap ? 2 * v->cap : 32;
    nh_h5_dataset *d = nh_realloc_array(v->d, (size_t)cap, sizeof *d);
    if (!d) return -1;
    v->d = d, v->cap = cap;
  }
  nh_h5_dataset *e = &v->d[v->n];
  memset(e, 0, sizeof *e);
  hid_t space = H5Dget_space(ds);
  hsize_t shape[NH_H5_MAX_DIMS];
  e->rank = H5Sget_simple_extent_ndims(space);
  if (e->rank > NH_H5_MAX_DIMS || H5Sget_simple_extent_dims(space, shape, NULL) < 0) e->rank = -1;
  H5Sclose(space);
  for (int i = 0; i < e->rank; i++) e->shape[i] = (long long)shape[i];
  int no_memory = 0, oom = 0;
  e->name = nh_r_dup(name);
  e->dims = nh_r_attr_of(ds, "dimensions", &no_memory), oom |= no_memory;
  e->units = nh_r_attr_of(ds, "units", &no_memory), oom |= no_memory;
  e->description = nh_r_attr_of(ds, "description", &no_memory), oom |= no_memory;
  v->n++; /* freed with the rest from here on */
  if (!e->name || oom) return -1;
  char *const text[4] = {e->name, e->dims ? e->dims : "", e->units ? e->units : "",
                         e->description ? e->description : ""};
  if (nh_r_check_text(v->f, name, text, 4) != 0) return v->failed = 1, -1;
  return 0;
}

static herr_t list_from(hid_t group, const char *name, const H5L_info_t *info, void *data) {
  list_visit *v = data;
  if (info->type != H5L_TYPE_HARD) return 0;
  hid_t obj = H5Oopen(group, name, H5P_DEFAULT);
  int rc = H5Iget_type(obj) == H5I_DATASET ? add_dataset(v, obj, name) : 0;
  H5Oclose(obj);
  if (rc < 0 && !v->failed) {
    fprintf(stderr, "%s: %s: out of memory for the list of datasets\n", v->f->prog, v->f->path);
    v->failed = 1;
  }
  return v->failed ? 1 : 0;
}

int nh_h5_datasets(nh_h5 *f, int *n, nh_h5_dataset **out) {
  list_visit v = {f, 0, 0, 0, NULL};
  const herr_t rc = H5Lvisit(f->group, H5_INDEX_NAME, H5_ITER_INC, list_from, &v);
  if (rc < 0 && !v.failed) fprintf(stderr, "%s: %s: cannot walk the study group\n", f->prog, f->path);
  if (rc < 0 || v.failed) {
    nh_h5_free_datasets(v.n, v.d);
    *n = 0, *out = NULL;
    return -1;
  }
  *n = v.n, *out = v.d;
  return 0;
}

void nh_h5_free_datasets(int n, nh_h5_dataset *d) {
  for (int i = 0; d && i < n; i++) free(d[i].name), free(d[i].dims), free(d[i].units), free(d[i].description);
  free(d);
}
