/* Comparing results files dataset by dataset, for the tests that check that a run is the same
 * bit for bit whatever way it was made (tests/faults/test_resume.c: resumed runs; tests/mpi/test_mpi.c:
 * runs over MPI ranks). */
#ifndef NH_TEST_H5COMPARE_H
#define NH_TEST_H5COMPARE_H

#include <criterion/criterion.h>
#include <criterion/logging.h>
#include <hdf5.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The bytes of dataset NAME in group /ensemble, for comparison; NULL if absent. */
static inline void *read_raw(const char *file, const char *name, size_t *bytes) {
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT);
  char path[128];
  snprintf(path, sizeof path, name[0] == '/' ? "%s" : "/ensemble/%s", name);
  hid_t d = f < 0 ? -1 : H5Dopen2(f, path, H5P_DEFAULT);
  void *buf = NULL;
  if (d >= 0) {
    hid_t t = H5Dget_type(d), s = H5Dget_space(d);
    *bytes = (size_t)H5Sget_simple_extent_npoints(s) * H5Tget_size(t);
    buf = malloc(*bytes ? *bytes : 1);
    H5Dread(d, t, H5S_ALL, H5S_ALL, H5P_DEFAULT, buf);
    H5Tclose(t), H5Sclose(s), H5Dclose(d);
  }
  if (f >= 0) H5Fclose(f);
  return buf;
}

typedef struct {
  char path[64][128];
  int count;
} dataset_list;

static inline herr_t list_dataset(hid_t loc, const char *name, const H5O_info_t *info, void *vlist) {
  (void)loc;
  dataset_list *l = vlist;
  if (info->type == H5O_TYPE_DATASET && l->count < 64) snprintf(l->path[l->count++], sizeof l->path[0], "/%s", name);
  return 0;
}

/* Whether dataset PATH's type holds variable-length strings (alone or in a compound). */
static inline int holds_strings(const char *file, const char *path) {
  hid_t f = H5Fopen(file, H5F_ACC_RDONLY, H5P_DEFAULT), d = H5Dopen2(f, path, H5P_DEFAULT), t = H5Dget_type(d);
  const int strings = H5Tdetect_class(t, H5T_STRING) > 0;
  H5Tclose(t), H5Dclose(d), H5Fclose(f);
  return strings;
}

/* What `h5dump -A 0 -m %.17g -d PATH FILE` prints after its first line (which names the file): the
 * dataset without its attributes (dimension scales refer to objects by their address in the file). */
static inline void *dump_of(const char *file, const char *path, size_t *bytes) {
  char cmd[1024], *text = malloc(1 << 16);
  snprintf(cmd, sizeof cmd, "h5dump -A 0 -m %%.17g -d %s %s | tail -n +2", path, file);
  FILE *p = popen(cmd, "r");
  *bytes = p && text ? fread(text, 1, (1 << 16) - 1, p) : 0;
  if (p) pclose(p);
  if (!*bytes) return free(text), NULL;
  return text;
}

/* How many datasets of a, timings aside (wall times, and the time front derived from them: a
 * resumed run re-times the tasks it runs again), differ from b's in their bytes (strings: in what
 * h5dump prints of them); *compared: how many were compared. Each difference is reported. */
static inline int differing_datasets(const char *a, const char *b, const char *what, int *compared) {
  dataset_list l = {.count = 0};
  hid_t f = H5Fopen(a, H5F_ACC_RDONLY, H5P_DEFAULT);
  cr_assert(f >= 0, "%s: cannot open %s", what, a);
  H5Ovisit2(f, H5_INDEX_NAME, H5_ITER_NATIVE, list_dataset, &l, H5O_INFO_BASIC);
  H5Fclose(f);
  int differing = 0;
  *compared = 0;
  for (int i = 0; i < l.count; i++) {
    if (strstr(l.path[i], "wall_time") || strstr(l.path[i], "pareto_time")) continue;
    size_t na = 0, nb = 0;
    void *x = NULL, *y = NULL;
    if (holds_strings(a, l.path[i])) /* their bytes are pointers */
      x = dump_of(a, l.path[i], &na), y = dump_of(b, l.path[i], &nb);
    else
      x = read_raw(a, l.path[i], &na), y = read_raw(b, l.path[i], &nb);
    if (!x || !y || na != nb || memcmp(x, y, na) != 0) {
      differing++;
      cr_log_info("%s: dataset %s differs", what, l.path[i]);
    }
    ++*compared;
    free(x), free(y);
  }
  return differing;
}

#endif
