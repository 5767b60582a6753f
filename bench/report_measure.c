/* Measures of claims reports: a slice of a results dataset, chosen by dimension name, reduced to
 * one number; and the expectations it is held against (bench/report.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/text.h"
#include "bench/report.h"
#include "integrators/integrator.h"
#include "results/results.h"

const char *const nh_verdict_names[NH_VERDICTS] = {"pass", "fail", "not-verified"};

/* ---- expectations ---------------------------------------------------------------------------- */

static const char *skip_space(const char *s) {
  while (*s == ' ' || *s == '\t') s++;
  return s;
}

/* X: a number, "@id" or "k * @id"; the rest of the text must be empty or `tail` follows. */
static const char *parse_operand(const char *s, nh_expect *e) {
  s = skip_space(s);
  e->factor = 1;
  e->ref[0] = '\0';
  if (*s != '@') {
    char *end;
    double x = strtod(s, &end);
    if (end == s) return NULL;
    s = skip_space(end);
    if (*s != '*') {
      e->a = x;
      return s;
    }
    e->factor = x;
    s = skip_space(s + 1);
    if (*s != '@') return NULL;
  }
  size_t n = strspn(s + 1, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_.:-");
  if (n == 0 || n >= sizeof e->ref) return NULL;
  memcpy(e->ref, s + 1, n);
  e->ref[n] = '\0';
  return skip_space(s + 1 + n);
}

int nh_expect_parse(const char *text, nh_expect *e, char *err, size_t errlen) {
  memset(e, 0, sizeof *e);
  const char *s = skip_space(text), *rest = NULL;
  if (strncmp(s, "in", 2) == 0 && (s[2] == ' ' || s[2] == '[')) {
    char *end;
    e->op = NH_EXPECT_IN;
    s = skip_space(s + 2);
    if (*s++ == '[') {
      e->a = strtod(s, &end);
      if (end != s && *(s = skip_space(end)) == ',') {
        s = skip_space(s + 1);
        e->b = strtod(s, &end);
        if (end != s && *(s = skip_space(end)) == ']') rest = s + 1;
      }
    }
  } else if (*s == '<' || *s == '>') {
    int eq = s[1] == '=';
    e->op = *s == '<' ? (eq ? NH_EXPECT_LE : NH_EXPECT_LT) : (eq ? NH_EXPECT_GE : NH_EXPECT_GT);
    rest = parse_operand(s + 1 + eq, e);
  } else if (*s == '~') {
    rest = parse_operand(s + 1, e);
    if (rest && (strncmp(rest, "rel", 3) == 0 || strncmp(rest, "abs", 3) == 0)) {
      e->op = rest[0] == 'r' ? NH_EXPECT_REL : NH_EXPECT_ABS;
      char *end;
      e->b = strtod(rest + 3, &end);
      rest = end == rest + 3 || !(e->b >= 0) ? NULL : end;
    } else {
      rest = NULL;
    }
  }
  if (!rest || *skip_space(rest) != '\0' || (e->op == NH_EXPECT_IN && !(e->a <= e->b))) {
    snprintf(err, errlen,
             "bad expectation '%s' (use 'in [a, b]', '< X', '<= X', '> X', '>= X', '~ X rel r' or "
             "'~ X abs a'; X a number, @id or k * @id)",
             text);
    return -1;
  }
  return 0;
}

int nh_expect_holds(const nh_expect *e, double x, double m) {
  if (isnan(m) || isnan(x)) return 0;
  switch (e->op) {
  case NH_EXPECT_NONE: return 0;
  case NH_EXPECT_IN: return m >= e->a && m <= e->b;
  case NH_EXPECT_LT: return m < x;
  case NH_EXPECT_LE: return m <= x;
  case NH_EXPECT_GT: return m > x;
  case NH_EXPECT_GE: return m >= x;
  case NH_EXPECT_REL: return fabs(m - x) <= e->b * fabs(x);
  case NH_EXPECT_ABS: return fabs(m - x) <= e->b;
  }
  return 0;
}

/* ---- reductions ------------------------------------------------------------------------------ */

const char *const nh_reduce_names[NH_REDUCE_COUNT] = {
    [NH_REDUCE_VALUE] = "value",           [NH_REDUCE_ABS] = "abs",
    [NH_REDUCE_MAX_ABS] = "max_abs",       [NH_REDUCE_MAX] = "max",
    [NH_REDUCE_MIN] = "min",               [NH_REDUCE_MEAN] = "mean",
    [NH_REDUCE_MEAN_ABS] = "mean_abs",     [NH_REDUCE_FIRST] = "first",
    [NH_REDUCE_LAST] = "last",             [NH_REDUCE_SLOPE] = "slope",
    [NH_REDUCE_REL_GROWTH] = "rel_growth", [NH_REDUCE_LOGLOG_SLOPE] = "loglog_slope",
    [NH_REDUCE_FINEST_ORDER] = "finest_order", [NH_REDUCE_ARGMAX_ABS] = "argmax_abs",
    [NH_REDUCE_MAX_STEP] = "max_step",
};

int nh_reduce_find(const char *name) {
  for (int r = 0; r < NH_REDUCE_COUNT; r++)
    if (strcmp(name, nh_reduce_names[r]) == 0) return r;
  return -1;
}

/* Least-squares slope of y on x over the finite pairs; NaN with fewer than two. */
static double finite_slope(int n, const double *x, const double *y) {
  double *xs = nh_malloc_array(2 * (size_t)n, sizeof(double));
  if (!xs) return NAN;
  double *ys = xs + n;
  int k = 0;
  for (int i = 0; i < n; i++)
    if (isfinite(x[i]) && isfinite(y[i])) {
      xs[k] = x[i];
      ys[k++] = y[i];
    }
  const double s = nh_drift_slope(k, xs, ys);
  free(xs);
  return s;
}

static double loglog_slope(int n, const double *c, const double *x, int finest_two) {
  double *lc = nh_malloc_array(2 * (size_t)n, sizeof(double));
  if (!lc) return NAN;
  double *lx = lc + n;
  int k = 0, i0 = -1, i1 = -1;
  for (int i = 0; i < n; i++) {
    if (!(c[i] > 0) || !(fabs(x[i]) > 0) || !isfinite(x[i])) continue;
    lc[k] = log(c[i]);
    lx[k] = log(fabs(x[i]));
    if (i0 < 0 || lc[k] < lc[i0]) i1 = i0, i0 = k;
    else if (i1 < 0 || lc[k] < lc[i1]) i1 = k;
    k++;
  }
  const double s = !finest_two ? nh_drift_slope(k, lc, lx) : i1 < 0 ? NAN : (lx[i1] - lx[i0]) / (lc[i1] - lc[i0]);
  free(lc);
  return s;
}

/* The largest |x_k+1 − x_k| over finite neighbours, each difference wrapped into a period. */
static double max_step(int n, const double *x, double period) {
  double best = NAN;
  for (int i = 0; i + 1 < n; i++) {
    double d = x[i + 1] - x[i];
    if (!isfinite(d)) continue;
    if (period > 0) d -= period * floor(d / period + 0.5);
    if (!(fabs(d) <= best)) best = fabs(d);
  }
  return best;
}

double nh_reduce_apply(nh_reduce r, int n, const double *c, const double *x, double period) {
  if (n <= 0) return NAN;
  if (r == NH_REDUCE_MAX_STEP) return max_step(n, x, period);
  switch (r) {
  case NH_REDUCE_VALUE: return n == 1 ? x[0] : NAN;
  case NH_REDUCE_ABS: return n == 1 ? fabs(x[0]) : NAN;
  case NH_REDUCE_FIRST: return x[0];
  case NH_REDUCE_LAST: return x[n - 1];
  case NH_REDUCE_SLOPE: return finite_slope(n, c, x);
  case NH_REDUCE_LOGLOG_SLOPE: return loglog_slope(n, c, x, 0);
  case NH_REDUCE_FINEST_ORDER: return loglog_slope(n, c, x, 1);
  default: break;
  }
  double best = NAN, sum = 0, where = NAN, cmin = INFINITY, cmax = -INFINITY;
  int k = 0;
  for (int i = 0; i < n; i++) {
    if (isnan(x[i])) continue;
    double v = r == NH_REDUCE_MAX_ABS || r == NH_REDUCE_MEAN_ABS || r == NH_REDUCE_ARGMAX_ABS ||
                       r == NH_REDUCE_REL_GROWTH
                   ? fabs(x[i])
                   : x[i];
    if (k == 0 || (r == NH_REDUCE_MIN ? v < best : v > best)) best = v, where = c[i];
    sum += v;
    cmin = fmin(cmin, c[i]);
    cmax = fmax(cmax, c[i]);
    k++;
  }
  if (k == 0) return NAN;
  switch (r) {
  case NH_REDUCE_MEAN:
  case NH_REDUCE_MEAN_ABS: return sum / k;
  case NH_REDUCE_ARGMAX_ABS: return where;
  case NH_REDUCE_REL_GROWTH: return finite_slope(n, c, x) * (cmax - cmin) / (sum / k);
  default: return best;
  }
}

/* ---- reading a measure ----------------------------------------------------------------------- */

typedef struct {
  nh_h5 *f;
  const nh_measure *ms;
  char *why;
  size_t whylen;
} reader;

static int why_fail(reader *r, const char *fmt, const char *a, const char *b) {
  char msg[NH_TEXT_MESSAGE];
  snprintf(msg, sizeof msg, fmt, a, b);
  snprintf(r->why, r->whylen, "%s: %s", r->f->path, msg);
  return -1;
}

static const nh_select *selector(const nh_measure *ms, const char *dim) {
  for (int i = 0; i < ms->nselect; i++)
    if (strcmp(ms->select[i].dim, dim) == 0) return &ms->select[i];
  return NULL;
}

/* A name matches exactly, or as the part before a unit in brackets ("plane_angle [rad]"). */
static int index_of_name(char **names, int count, const char *name) {
  size_t len = strlen(name);
  for (int i = 0; i < count; i++)
    if (strcmp(names[i], name) == 0 || (strncmp(names[i], name, len) == 0 && strncmp(names[i] + len, " [", 2) == 0))
      return i;
  return -1;
}

/* A method as written in a claims file ("nh_newmark(alpha=0.5)") is found by its canonical name,
 * as the file stores it ("nh_newmark(beta=0,beta2=0,alpha=0.5,disc=14)"). */
static int index_of_method(const nh_h5 *f, const char *text) {
  char err[NH_TEXT_MESSAGE], canonical[NH_TEXT_CANONICAL];
  nh_method *m = nh_method_parse(text, err, sizeof err);
  if (!m) return index_of_name(f->methods, f->nmethods, text);
  nh_method_format(m, canonical, sizeof canonical);
  nh_method_free(m);
  return index_of_name(f->methods, f->nmethods, canonical);
}

/* The coordinate values of dimension DIM (h: the step sizes; sample: the times at the selected h
 * index hsel; otherwise 0, 1, 2, ...), n of them. malloc'd. */
static double *coordinates(reader *r, const char *dim, long long n, long long hsel) {
  double *c = NULL;
  if (strcmp(dim, "h") == 0) c = nh_h5_doubles(r->f, "h", "h", NULL);
  else if (strcmp(dim, "sample") == 0 && nh_h5_has(r->f, "t")) {
    char *tdims = nh_h5_attr_string(r->f, "t", "dimensions");
    if (tdims && strcmp(tdims, "sample") == 0) c = nh_h5_doubles(r->f, "t", "sample", NULL);
    else if (tdims && hsel >= 0) c = nh_h5_doubles_at(r->f, "t", "h,sample", 1, &hsel, NULL);
    free(tdims);
  }
  if (c) return c;
  c = nh_malloc_array((size_t)n, sizeof(double));
  for (long long i = 0; c && i < n; i++) c[i] = (double)i;
  return c;
}

/* The index that selector s picks in dimension dim (size n). */
static long long pick(reader *r, const nh_select *s, const char *dim, long long n, long long hsel) {
  long long idx = -1;
  if (strcmp(dim, "method") == 0 && s->by_name) {
    idx = index_of_method(r->f, s->name);
    if (idx < 0) return why_fail(r, "no method '%s' in the file%s", s->name, "");
  } else if (s->by_name && (strcmp(dim, "ic") == 0 || strcmp(dim, "component") == 0)) {
    int count = 0;
    char **names = strcmp(dim, "ic") == 0 ? nh_h5_strings(r->f, "ic_names", "ic", &count)
                                          : nh_h5_attr_strings(r->f, r->ms->data, "labels", &count);
    idx = names ? index_of_name(names, count, s->name) : -1;
    nh_h5_free_strings(names, count);
    if (idx < 0) return why_fail(r, "no %s named '%s'", dim, s->name);
  } else if (strcmp(dim, "h") == 0 || strcmp(dim, "sample") == 0) {
    double *c = coordinates(r, dim, n, hsel), best = INFINITY;
    for (long long i = 0; c && i < n; i++)
      if (fabs(c[i] - s->value) < best) best = fabs(c[i] - s->value), idx = i;
    /* h must match to round-off; a time within half a sample interval (halfway: the earlier) */
    double tol = strcmp(dim, "h") == 0 ? 1e-9 * fabs(s->value)
                 : n > 1 && c ? 0.5 * fabs(c[1] - c[0]) + 1e-12 * fabs(s->value) : INFINITY;
    free(c);
    if (!(best <= tol)) {
      char v[NH_TEXT_NUMBER];
      snprintf(v, sizeof v, "%.10g", s->value);
      return why_fail(r, "no %s = %s in the file", strcmp(dim, "h") == 0 ? "h" : "sample at t", v);
    }
  } else {
    idx = (long long)s->value;
    if (s->by_name || idx != s->value) return why_fail(r, "dimension %s takes an index, not '%s'", dim, s->name);
  }
  if (idx < 0 || idx >= n) return why_fail(r, "index out of range in dimension %s%s", dim, "");
  return idx;
}

static int eval_orders(reader *r, double *m) {
  const nh_select *s = selector(r->ms, "method");
  if (!s || !s->by_name) return why_fail(r, "'orders' needs at = { method = \"...\" }%s%s", "", "");
  nh_order_row *rows = nh_h5_read_orders(r->f);
  if (!rows) return why_fail(r, "no readable orders table%s%s", "", "");
  int i = index_of_method(r->f, s->name), rc = 0;
  if (i < 0) rc = why_fail(r, "no method '%s' in the file%s", s->name, "");
  else if (strcmp(r->ms->field, "stderr") == 0) *m = rows[i].stderr_;
  else if (strcmp(r->ms->field, "claimed") == 0) *m = rows[i].claimed;
  else if (!r->ms->field[0] || strcmp(r->ms->field, "observed") == 0) *m = rows[i].observed;
  else rc = why_fail(r, "orders has no field '%s' (observed, stderr, claimed)%s", r->ms->field, "");
  nh_h5_free_orders(rows, r->f->nmethods);
  return rc;
}

static double cost_field(const nh_cost *c, const char *field) {
  if (strcmp(field, "steps") == 0) return (double)c->steps;
  if (strcmp(field, "rhs_evals") == 0) return (double)c->rhs_evals;
  if (strcmp(field, "jacobian_evals") == 0) return (double)c->jacobian_evals;
  if (strcmp(field, "linear_solves") == 0) return (double)c->linear_solves;
  if (strcmp(field, "newton_iterations") == 0) return (double)c->newton_iterations;
  if (strcmp(field, "constraint_evals") == 0) return (double)c->constraint_evals;
  return NAN;
}

/* The whole dataset as doubles: floats as they are, integers converted, the cost records by
 * their field. */
static double *read_values(reader *r, const char *name, const char *dims, hsize_t *shape, long long *total) {
  H5T_class_t cls = H5T_NO_CLASS; /* no such dataset: none of the classes read below */
  hid_t ds = H5Dopen2(r->f->group, name, H5P_DEFAULT);
  if (ds >= 0) {
    hid_t type = H5Dget_type(ds);
    if (type >= 0) cls = H5Tget_class(type), H5Tclose(type);
    H5Dclose(ds);
  }
  double *x = NULL;
  int rank = 1;
  for (const char *p = dims; *p; p++) rank += *p == ',';
  if (cls == H5T_FLOAT) x = nh_h5_doubles(r->f, name, dims, shape);
  *total = 1;
  if (cls == H5T_STRING && rank == 1) { /* a note per method (caveats): 1 where there is one */
    int count = 0;
    char **notes = nh_h5_strings(r->f, name, dims, &count);
    x = notes ? nh_malloc_array((size_t)count, sizeof(double)) : NULL;
    for (int i = 0; x && i < count; i++) x[i] = notes[i][0] != '\0';
    nh_h5_free_strings(notes, count);
    shape[0] = (hsize_t)count;
    *total = count;
    return x;
  }
  if (cls == H5T_INTEGER || cls == H5T_COMPOUND) {
    void *raw = cls == H5T_INTEGER ? (void *)nh_h5_ints(r->f, name, dims, shape)
                                   : (void *)nh_h5_costs(r->f, name, dims, shape);
    for (int d = 0; raw && d < rank; d++) *total *= (long long)shape[d];
    x = raw ? malloc(sizeof(double) * (size_t)*total) : NULL;
    for (long long i = 0; x && i < *total; i++)
      x[i] = cls == H5T_INTEGER ? ((int *)raw)[i] : cost_field(&((nh_cost *)raw)[i], r->ms->field);
    free(raw);
    return x;
  }
  for (int d = 0; x && d < rank; d++) *total *= (long long)shape[d];
  return x;
}

/* Splits "method,h,ic,sample,component" into names. */
static int split_dims(const char *dims, char names[][NH_TEXT_NAME], int max) {
  int n = 0;
  for (const char *p = dims; *p && n < max; n++) {
    size_t len = strcspn(p, ",");
    snprintf(names[n], sizeof names[n], "%.*s", (int)len, p);
    p += len + (p[len] == ',');
  }
  return n;
}

static int eval_dataset(reader *r, double *m) {
  const nh_measure *ms = r->ms;
  if (!nh_h5_has(r->f, ms->data)) return why_fail(r, "no dataset '%s'%s", ms->data, "");
  char *dims = nh_h5_attr_string(r->f, ms->data, "dimensions");
  if (!dims) return why_fail(r, "dataset '%s' has no dimensions attribute%s", ms->data, "");
  hsize_t shape[NH_H5_MAX_DIMS];
  long long total = 0, index[NH_H5_MAX_DIMS], hsel = -1;
  char names[NH_H5_MAX_DIMS][NH_TEXT_NAME];
  int rank = split_dims(dims, names, NH_H5_MAX_DIMS), free_dim = -1, rc = 0;
  double *x = read_values(r, ms->data, dims, shape, &total);
  if (x && ms->minus[0]) { /* x − y elementwise: y must have the same dimensions */
    hsize_t shape2[NH_H5_MAX_DIMS];
    long long total2 = 0;
    double *y = nh_h5_has(r->f, ms->minus) ? read_values(r, ms->minus, dims, shape2, &total2) : NULL;
    for (long long i = 0; y && total2 == total && i < total; i++) x[i] -= y[i];
    if (!y || total2 != total) {
      free(y);
      free(x);
      free(dims);
      return why_fail(r, "cannot subtract '%s': not a dataset of the dimensions of '%s'", ms->minus, ms->data);
    }
    free(y);
  }
  free(dims);
  if (!x) return why_fail(r, "cannot read dataset '%s'%s", ms->data, "");
  for (int d = 0; d < rank && !rc; d++) /* h first: a sample's time depends on it */
    if (strcmp(names[d], "h") == 0 && selector(ms, "h"))
      index[d] = hsel = pick(r, selector(ms, "h"), "h", (long long)shape[d], -1), rc = hsel < 0 ? -1 : 0;
    else if (strcmp(names[d], "h") == 0 && shape[d] == 1) hsel = 0; /* one step size: its times */
  for (int d = 0; d < rank && !rc; d++) {
    const nh_select *s = selector(ms, strcmp(names[d], "sample") == 0 && selector(ms, "t") ? "t" : names[d]);
    if (strcmp(names[d], "h") == 0 && s) continue;
    if (s) rc = (index[d] = pick(r, s, names[d], (long long)shape[d], hsel)) < 0 ? -1 : 0;
    else if (shape[d] == 1) index[d] = 0;
    else if (free_dim >= 0)
      rc = why_fail(r, "dimensions %s and %s are both free: select one", names[free_dim], names[d]);
    else free_dim = d, index[d] = 0;
  }
  for (int i = 0; i < ms->nselect && !rc; i++) {
    int known = strcmp(ms->select[i].dim, "t") == 0;
    for (int d = 0; d < rank; d++) known |= strcmp(names[d], ms->select[i].dim) == 0;
    if (!known) rc = why_fail(r, "dataset '%s' has no dimension '%s'", ms->data, ms->select[i].dim);
  }
  if (!rc) {
    long long n = free_dim < 0 ? 1 : (long long)shape[free_dim], stride = 1, base = 0;
    for (int d = rank - 1; d >= 0; d--) {
      if (d == free_dim) {
        long long s2 = 1;
        for (int e = d + 1; e < rank; e++) s2 *= (long long)shape[e];
        stride = s2;
      }
      long long s1 = 1;
      for (int e = d + 1; e < rank; e++) s1 *= (long long)shape[e];
      base += index[d] * s1;
    }
    double *c = free_dim < 0 ? calloc(1, sizeof(double)) : coordinates(r, names[free_dim], n, hsel);
    double *v = malloc(sizeof(double) * (size_t)n), *cw = malloc(sizeof(double) * (size_t)n);
    int k = 0;
    for (long long i = 0; c && v && cw && i < n; i++)
      if (c[i] >= ms->from && c[i] <= ms->to) {
        cw[k] = c[i];
        v[k++] = x[base + i * stride];
      }
    *m = c && v && cw ? nh_reduce_apply(ms->reduce, k, cw, v, ms->period) : NAN;
    if (ms->reduce == NH_REDUCE_VALUE && k > 1)
      rc = why_fail(r, "reduce = \"value\" but dimension %s is free", names[free_dim], "");
    free(c);
    free(v);
    free(cw);
  }
  free(x);
  return rc;
}

int nh_measure_eval(const nh_measure *ms, const char *dir, double *m, char *why, size_t whylen) {
  char path[NH_TEXT_PATH];
  snprintf(path, sizeof path, "%s/%s.h5", dir, ms->file);
  *m = NAN;
  FILE *probe = fopen(path, "rb");
  if (!probe) {
#ifndef NHBENCH_SUNDIALS
    /* studies/paper/sundials/: specs whose methods (ida, cvode) only the SUNDIALS build has. */
    if (strncmp(ms->file, "sundials/", 9) == 0) {
      snprintf(why, whylen, "not verified: needs -DNHBENCH_SUNDIALS=ON (make paper SUNDIALS=1 writes %s)", path);
      return -1;
    }
#endif
    snprintf(why, whylen, "results file %s is missing (make paper writes it)", path);
    return -1;
  }
  fclose(probe);
  nh_h5 f;
  if (nh_h5_open(&f, "nhbench report", path) != 0) {
    snprintf(why, whylen, "%s is not a readable results file", path);
    return -1;
  }
  reader r = {&f, ms, why, whylen};
  int rc = strcmp(ms->data, "orders") == 0 ? eval_orders(&r, m) : eval_dataset(&r, m);
  nh_h5_close(&f);
  return rc;
}
