/* Result columns of the study kinds (studies/columns.h). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "studies/columns.h"
#include "studies/runs.h" /* NH_WP_NORMS */

void nh_column_dims_of_study(const nh_study *st, nh_column_dims *d) {
  d->n = 0;
  nh_column_dims_set(d, "method", st->nmethods);
  nh_column_dims_set(d, "h", st->nh);
  nh_column_dims_set(d, "ic", st->nic);
  nh_column_dims_set(d, "dof", st->sys.n);
  nh_column_dims_set(d, "state", 2LL * st->sys.n);
  nh_column_dims_set(d, "multiplier", st->sys.k);
  nh_column_dims_set(d, "repeat", st->repeats);
  nh_column_dims_set(d, "norm", NH_WP_NORMS);
  nh_column_dims_set(d, "lambda_slot", NH_MAX_K);
}

int nh_column_dims_set(nh_column_dims *d, const char *name, long long size) {
  for (int i = 0; i < d->n; i++)
    if (strcmp(d->name[i], name) == 0) return d->size[i] = size, 0;
  if (d->n == NH_COLUMN_MAX_DIMS) return -1;
  d->name[d->n] = name, d->size[d->n] = size, d->n++;
  return 0;
}

/* The size of the dimension named by the len characters at name. */
static long long dim_size(const nh_column_dims *d, const char *name, size_t len) {
  for (int i = 0; i < d->n; i++)
    if (strlen(d->name[i]) == len && strncmp(d->name[i], name, len) == 0) return d->size[i];
  return -1;
}

long long nh_column_dim(const nh_column_dims *d, const char *name) { return dim_size(d, name, strlen(name)); }

long long nh_column_count(const nh_result_column *c, const nh_column_dims *d, int from) {
  long long count = 1;
  int index = 0;
  for (const char *s = c->dims; *s; index++) {
    const size_t len = strcspn(s, ",");
    const long long size = dim_size(d, s, len);
    if (size < 0) return -1;
    if (index >= from) count *= size;
    s += len + (s[len] == ',');
  }
  return count;
}

/* A column's pointer field is read and written as bytes: the result structs declare it with its
 * own type (double *, int *, nh_cost *), which a void * lvalue may not alias. */
void *nh_column_data(const nh_result_column *c, const void *r) {
  void *p;
  memcpy(&p, (const char *)r + c->field, sizeof p);
  return p;
}

static void set_data(const nh_result_column *c, void *r, void *p) { memcpy((char *)r + c->field, &p, sizeof p); }

const nh_result_column *nh_column_find(const nh_result_column *cols, const char *name) {
  for (const nh_result_column *c = cols; c->name; c++)
    if (strcmp(c->name, name) == 0) return c;
  return NULL;
}

int nh_column_present(const nh_result_column *c, const nh_study *st) { return !c->present || c->present->held(st); }

static size_t element_size(nh_column_type type) {
  return type == NH_COLUMN_F64 ? sizeof(double) : type == NH_COLUMN_I32 ? sizeof(int) : sizeof(nh_cost);
}

int nh_result_columns_alloc(const nh_result_column *cols, const nh_study *st, const nh_column_dims *d, void *r) {
  for (const nh_result_column *c = cols; c->name; c++) {
    if (!nh_column_present(c, st)) continue;
    const long long count = nh_column_count(c, d, 0);
    const size_t size = element_size(c->type);
    if (count < 0 || (unsigned long long)count > SIZE_MAX / size) return -1;
    void *p = calloc(count ? (size_t)count : 1, size); /* a dimension of size 0 (no multiplier) too */
    if (!p) return -1;
    set_data(c, r, p);
  }
  return 0;
}

void nh_result_columns_free(const nh_result_column *cols, void *r) {
  for (const nh_result_column *c = cols; c->name; c++) {
    free(nh_column_data(c, r));
    set_data(c, r, NULL);
  }
}

int nh_result_columns_slots(const nh_result_column *cols, const nh_study *st, const nh_column_dims *d, int task_dims,
                            const void *r, nh_task_slot *slots, int max) {
  static const int slot_type[] = {[NH_COLUMN_F64] = NH_SLOT_DOUBLE, [NH_COLUMN_I32] = NH_SLOT_INT,
                                  [NH_COLUMN_COST] = NH_SLOT_COST};
  int n = 0;
  for (const nh_result_column *c = cols; c->name; c++) {
    if (!(c->flags & NH_COLUMN_JOURNALED) || !nh_column_present(c, st)) continue;
    const long long per = nh_column_count(c, d, task_dims);
    if (per < 0 || n == max) return -1;
    slots[n].base = nh_column_data(c, r);
    slots[n].type = slot_type[c->type];
    slots[n].per = (size_t)per;
    n++;
  }
  return n;
}
