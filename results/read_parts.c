/* Reading the composite parts of results files: grids, the orders table, the ensemble summary,
 * the observables (results/results.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/text.h"
#include "results/reader.h"
#include "results/schema.h"

/* ---- grids --------------------------------------------------------------------------------- */

static int read_grid(nh_h5 *f, int k, nh_h5_grid *g) {
  char obj[NH_TEXT_NAME], name[NH_TEXT_NAME + NH_TEXT_NUMBER];
  snprintf(obj, sizeof obj, "grid%d", k);
  if (!(g->method = nh_h5_attr_string(f, obj, "method")) || !(g->param[0] = nh_h5_attr_string(f, obj, "param0")) ||
      !(g->param[1] = nh_h5_attr_string(f, obj, "param1")))
    return -1;
  /* value0/value1 differ from grid to grid: forget the sizes of the previous one. */
  for (int i = f->ndims - 1; i >= 0; i--)
    if (strncmp(f->dim_name[i], "value", 5) == 0) {
      f->ndims--;
      memmove(f->dim_name[i], f->dim_name[i + 1], sizeof *f->dim_name * (size_t)(f->ndims - i));
      memmove(&f->dim_size[i], &f->dim_size[i + 1], sizeof *f->dim_size * (size_t)(f->ndims - i));
    }
  for (int p = 0; p < 2; p++) {
    hsize_t shape[1];
    snprintf(name, sizeof name, "%s/values%d", obj, p);
    if (!(g->values[p] = nh_h5_doubles(f, name, p ? "value1" : "value0", shape))) return -1;
    g->n[p] = (int)shape[0];
  }
  snprintf(name, sizeof name, "%s/method_index", obj);
  if (!(g->method_index = nh_h5_ints(f, name, "value0,value1", NULL))) return -1;
  for (int i = 0; i < g->n[0] * g->n[1]; i++)
    if (g->method_index[i] < -1 || g->method_index[i] >= f->nmethods) {
      fprintf(stderr, "%s: %s: /%s/%s holds %d, not a method index (0..%d) or -1\n", f->prog, f->path, f->kind_name,
              name, g->method_index[i], f->nmethods - 1);
      return -1;
    }
  return 0;
}

int nh_h5_read_grids(nh_h5 *f, int *ngrids, nh_h5_grid **grids) {
  int n = 0;
  *ngrids = 0;
  *grids = NULL;
  if (!nh_h5_has_attr(f, ".", "grids")) return 0;
  if (nh_h5_attr_int(f, ".", "grids", &n) != 0) return -1;
  if (n < 0 || n > 10000) {
    fprintf(stderr, "%s: %s: /%s attribute 'grids' = %d is not a grid count\n", f->prog, f->path, f->kind_name, n);
    return -1;
  }
  nh_h5_grid *g = nh_calloc_array((size_t)n, sizeof *g);
  if (n > 0 && !g) {
    fprintf(stderr, "%s: %s: out of memory for %d grids\n", f->prog, f->path, n);
    return -1;
  }
  for (int k = 0; k < n; k++)
    if (read_grid(f, k, &g[k]) != 0) {
      nh_h5_free_grids(n, g);
      return -1;
    }
  *grids = g;
  *ngrids = n;
  return 0;
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

/* ---- the orders table ---------------------------------------------------------------------- */

nh_order_row *nh_h5_read_orders(nh_h5 *f) {
  hid_t mt = nh_schema_orders_type(0);
  nh_order_row *rows = nh_h5_records(f, "orders", "method", mt, sizeof(nh_order_row), NULL);
  /* Own copies of the strings (freed with free()), then HDF5's back to HDF5. */
  const hsize_t n = (hsize_t)f->nmethods;
  char **held = rows ? nh_malloc_array((size_t)(2 * n), sizeof(char *)) : NULL, **copies = NULL;
  for (hsize_t i = 0; held && i < n; i++) held[2 * i] = rows[i].method, held[2 * i + 1] = rows[i].reason;
  if (held) copies = nh_r_copy_strings((const char *)held, (size_t)(2 * n), sizeof(char *), 1);
  free(held);
  hid_t space = H5Screate_simple(1, &n, NULL);
  if (rows && n) nh_schema_reclaim(mt, space, rows);
  H5Sclose(space);
  H5Tclose(mt);
  if (rows && !copies) {
    fprintf(stderr, "%s: %s: out of memory for the orders table\n", f->prog, f->path);
    free(rows), rows = NULL;
  }
  for (hsize_t i = 0; rows && i < n; i++) rows[i].method = copies[2 * i], rows[i].reason = copies[2 * i + 1];
  free(copies);
  return rows;
}

void nh_h5_free_orders(nh_order_row *rows, int n) {
  if (!rows) return;
  for (int i = 0; i < n; i++) free(rows[i].method), free(rows[i].reason);
  free(rows);
}

/* ---- ensemble summary ---------------------------------------------------------------------- */

nh_ensemble_summary *nh_h5_read_ensemble_summary(nh_h5 *f) {
  static const char *const names[] = {"summary/max_max_abs_dE",   "summary/median_max_abs_dE",
                                      "summary/mean_drift_slope", "summary/median_abs_drift_slope",
                                      "summary/max_constraint_residual", "summary/final_var"};
  const int nm = f->nmethods;
  nh_ensemble_summary *s = nh_calloc_array((size_t)nm, sizeof *s);
  if (!s) {
    fprintf(stderr, "%s: %s: out of memory for the ensemble summary\n", f->prog, f->path);
    return NULL;
  }
  int *ok = nh_h5_ints(f, "summary/ok", "method", NULL);
  int *failures = ok ? nh_h5_ints(f, "summary/failures", "method", NULL) : NULL;
  double *v[6] = {0};
  int good = failures != NULL;
  for (int k = 0; k < 6 && good; k++) good = (v[k] = nh_h5_doubles(f, names[k], "method", NULL)) != NULL;
  for (int m = 0; good && m < nm; m++) {
    s[m].ok = ok[m], s[m].failures = failures[m];
    s[m].max_max_abs_dE = v[0][m], s[m].median_max_abs_dE = v[1][m], s[m].mean_drift_slope = v[2][m];
    s[m].median_abs_drift_slope = v[3][m], s[m].max_residual = v[4][m], s[m].final_var = v[5][m];
  }
  free(ok), free(failures);
  for (int k = 0; k < 6; k++) free(v[k]);
  if (!good) free(s), s = NULL;
  return s;
}

/* ---- observables --------------------------------------------------------------------------- */

static int read_observable(nh_h5 *f, const char *name, nh_h5_observable *o) {
  char obj[NH_TEXT_NAME];
  int n; /* the entries of attribute 'absent', read with it */
  snprintf(obj, sizeof obj, "observables/%s", name);
  if (!(o->name = nh_r_dup(name))) {
    fprintf(stderr, "%s: %s: out of memory\n", f->prog, f->path);
    return -1;
  }
  if (!nh_h5_has(f, obj)) {
    fprintf(stderr, "%s: %s: missing dataset /%s/%s\n", f->prog, f->path, f->kind_name, obj);
    return -1;
  }
  if (!(o->description = nh_h5_attr_string(f, obj, "description")) ||
      !(o->units = nh_h5_attr_string(f, obj, "units")) ||
      !(o->labels = nh_h5_attr_strings(f, obj, "labels", &o->width)) ||
      !(o->absent = nh_h5_attr_strings(f, obj, "absent", &n)))
    return -1;
  /* The axis label figures show (issue 49): NULL in files written before it was kept. */
  if (nh_h5_has_attr(f, obj, "symbol") && !(o->symbol = nh_h5_attr_string(f, obj, "symbol"))) return -1;
  if (n != f->nmethods) {
    fprintf(stderr, "%s: %s: attribute 'absent' of /%s/%s has %d entries for %d methods\n", f->prog, f->path,
            f->kind_name, obj, n, f->nmethods);
    return -1;
  }
  return 0;
}

int nh_h5_read_observables(nh_h5 *f, int *nobs, nh_h5_observable **obs) {
  *nobs = 0;
  *obs = NULL;
  if (!nh_h5_has(f, "observables")) return 0;
  int n = 0;
  char **names = nh_h5_attr_strings(f, "observables", "order", &n);
  if (!names) return -1;
  /* Observable names reach the plot scripts' shell commands: registry names only ever hold these. */
  if (nh_h5_check_names(f, "observable", names, n, NH_H5_NAME_CHARS) != 0) {
    nh_h5_free_strings(names, n);
    return -1;
  }
  nh_h5_observable *o = nh_calloc_array((size_t)n, sizeof *o);
  int rc = n > 0 && !o ? -1 : 0;
  if (rc != 0) fprintf(stderr, "%s: %s: out of memory for %d observables\n", f->prog, f->path, n);
  for (int i = 0; i < n && rc == 0; i++) rc = read_observable(f, names[i], &o[i]);
  nh_h5_free_strings(names, n);
  if (rc != 0) {
    nh_h5_free_observables(n, o);
    return -1;
  }
  *nobs = n;
  *obs = o;
  return 0;
}

/* The string lists of attributes end with NULL. */
static void free_list(char **s) {
  for (int i = 0; s && s[i]; i++) free(s[i]);
  free(s);
}

void nh_h5_free_observables(int nobs, nh_h5_observable *obs) {
  if (!obs) return;
  for (int i = 0; i < nobs; i++) {
    free(obs[i].name), free(obs[i].description), free(obs[i].units), free(obs[i].symbol);
    free_list(obs[i].labels);
    free_list(obs[i].absent);
  }
  free(obs);
}
