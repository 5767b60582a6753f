/* Measures of claims reports: a slice of a results dataset, chosen by dimension name, reduced to
 * one number; and the expectations it is held against (bench/claims/report.h). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/text.h"
#include "bench/claims/report.h"
#include "integrators/integrator.h"
#include "results/results.h"

const char *const nh_verdict_names[NH_VERDICTS] = {"pass", "fail", "not-verified", "shown"};

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
    [NH_REDUCE_MAX_STEP] = "max_step",     [NH_REDUCE_INTEGRAL] = "integral",
    [NH_REDUCE_GROWTH] = "growth",         [NH_REDUCE_ALTERNATION] = "alternation",
    [NH_REDUCE_MAX_INCREASE] = "max_increase", [NH_REDUCE_LAST_DEFINED] = "last_defined",
};

int nh_reduce_is_pointwise(nh_reduce r) {
  return r == NH_REDUCE_MAX_ABS || r == NH_REDUCE_MAX || r == NH_REDUCE_MIN || r == NH_REDUCE_MEAN ||
         r == NH_REDUCE_MEAN_ABS;
}

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

/* ∫ x dc by the trapezoidal rule between neighbours (a NaN value or coordinate makes it NaN: an
 * integral with a hole is no integral). */
static double trapezoid(int n, const double *c, const double *x) {
  double sum = 0;
  for (int i = 0; i + 1 < n; i++) sum += 0.5 * (c[i + 1] - c[i]) * (x[i] + x[i + 1]);
  return n > 1 ? sum : NAN;
}

/* Mean |x| over the last third of the coordinate span over the mean |x| over the first third: 1 for
 * a stationary signal, 5 for a linear growth from 0 (means at 5/6 and 1/6 of the span). NaN entries
 * are left out; NaN when either third holds none. */
static double growth(int n, const double *c, const double *x) {
  double cmin = INFINITY, cmax = -INFINITY, early = 0, late = 0;
  int ne = 0, nl = 0;
  for (int i = 0; i < n; i++) cmin = fmin(cmin, c[i]), cmax = fmax(cmax, c[i]);
  const double third = (cmax - cmin) / 3;
  for (int i = 0; i < n; i++) {
    if (isnan(x[i])) continue;
    if (c[i] <= cmin + third) early += fabs(x[i]), ne++;
    if (c[i] >= cmax - third) late += fabs(x[i]), nl++;
  }
  return ne && nl && third > 0 ? (late / nl) / (early / ne) : NAN;
}

/* Of the pairs of neighbouring differences (d_k, d_k+1), d_k = x_k+1 − x_k, the fraction of opposite
 * sign: 1 for a period-2 alternation (up, down, up, ...), about ½ for noise, 0 for a monotone
 * sequence. A zero difference alternates with nothing; a NaN value ends the count (NaN). */
static double alternation(int n, const double *x) {
  int pairs = 0, changes = 0;
  for (int i = 0; i + 2 < n; i++) {
    const double d0 = x[i + 1] - x[i], d1 = x[i + 2] - x[i + 1];
    if (isnan(d0) || isnan(d1)) return NAN;
    pairs++;
    changes += d0 * d1 < 0;
  }
  return pairs ? (double)changes / pairs : NAN;
}

/* The largest signed x_k+1 − x_k over neighbours (NaN values left out): ≤ 0 exactly when the
 * sequence never increases ("decreases monotonically"); NaN with fewer than two values. */
static double max_increase(int n, const double *x) {
  double best = NAN;
  for (int i = 0; i + 1 < n; i++) {
    const double d = x[i + 1] - x[i];
    if (!isnan(d) && !(d <= best)) best = d;
  }
  return best;
}

/* The coordinate of the last value that is not NaN: where a run stopped (its samples NaN after). */
static double last_defined(int n, const double *c, const double *x) {
  for (int i = n - 1; i >= 0; i--)
    if (!isnan(x[i])) return c[i];
  return NAN;
}

double nh_reduce_apply(nh_reduce r, int n, const double *c, const double *x, double period) {
  if (n <= 0) return NAN;
  if (r == NH_REDUCE_LAST_DEFINED) return last_defined(n, c, x);
  if (r == NH_REDUCE_MAX_INCREASE) return max_increase(n, x);
  if (r == NH_REDUCE_ALTERNATION) return alternation(n, x);
  if (r == NH_REDUCE_MAX_STEP) return max_step(n, x, period);
  if (r == NH_REDUCE_INTEGRAL) return trapezoid(n, c, x);
  if (r == NH_REDUCE_GROWTH) return growth(n, c, x);
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

static int eval_orders(reader *r, double *m) {
  const nh_select *s = selector(r->ms, "method");
  if (!s || !s->by_name) return why_fail(r, "'orders' needs at = { method = \"...\" }%s%s", "", "");
  nh_order_row *rows = nh_h5_read_orders(r->f);
  if (!rows) return why_fail(r, "no readable orders table%s%s", "", "");
  int i = nh_h5_method_index(r->f, s->name), rc = 0;
  if (i < 0) rc = why_fail(r, "no method '%s' in the file%s", s->name, "");
  else if (strcmp(r->ms->field, "stderr") == 0) *m = rows[i].stderr_;
  else if (strcmp(r->ms->field, "claimed") == 0) *m = rows[i].claimed;
  else if (!r->ms->field[0] || strcmp(r->ms->field, "observed") == 0) *m = rows[i].observed;
  else rc = why_fail(r, "orders has no field '%s' (observed, stderr, claimed)%s", r->ms->field, "");
  nh_h5_free_orders(rows, r->f->nmethods);
  return rc;
}

/* A selection of one dataset (nh_h5_slice_read): its values over the free dimensions, each with
 * the coordinate of the first free dimension. */
typedef struct {
  nh_h5_slice s;
  double *c; /* [s.count] */
} slice;

static void slice_free(slice *a) {
  nh_h5_slice_free(&a->s);
  free(a->c);
  a->c = NULL;
}

/* Reads dataset `name` and selects from it by ms's `at`, with the selectors `over` in their place
 * where given. More than one free dimension only for a pointwise reduction. */
static int take_slice(reader *r, const char *name, const nh_select *over, int nover, slice *out) {
  const nh_measure *ms = r->ms;
  nh_select sel[2 * NH_MAX_SELECT];
  int nsel = 0;
  for (int i = 0; i < nover; i++) sel[nsel++] = over[i];
  for (int i = 0; i < ms->nselect; i++) {
    int replaced = 0;
    for (int j = 0; j < nover; j++) replaced |= strcmp(over[j].dim, ms->select[i].dim) == 0;
    if (!replaced) sel[nsel++] = ms->select[i];
  }
  out->c = NULL;
  if (nh_h5_slice_read(r->f, name, ms->field, sel, nsel, &out->s, r->why, r->whylen) < 0) return -1;
  const nh_h5_slice *s = &out->s;
  if (s->nfree > 1 && !nh_reduce_is_pointwise(ms->reduce)) {
    slice_free(out);
    return why_fail(r, "dimensions %s and %s are both free: select one (only max_abs, max, min, mean and mean_abs "
                    "reduce over several)", s->dims[s->free_dim[0]], s->dims[s->free_dim[1]]);
  }
  out->c = nh_malloc_array((size_t)s->count, sizeof(double));
  if (!out->c) {
    slice_free(out);
    return why_fail(r, "out of memory for a slice of '%s'%s", name, "");
  }
  for (long long i = 0; i < s->count; i++) out->c[i] = s->nfree ? s->coord[0][nh_h5_slice_index(s, i, 0)] : 0;
  return 0;
}

/* a.x −= the slice of `other` chosen by minus_at: elementwise over the same free dimensions, or
 * one value (x(0), say) subtracted from every element. 0, or -1 with the reason. */
static int subtract(reader *r, slice *a, const char *other) {
  const nh_measure *ms = r->ms;
  slice b;
  if (take_slice(r, other, ms->minus_select, ms->nminus_select, &b) < 0) { /* say which slice */
    char why[NH_TEXT_MESSAGE];
    snprintf(why, sizeof why, "%s", r->why);
    snprintf(r->why, r->whylen, "cannot subtract '%s': %s", other, why);
    return -1;
  }
  const int one = b.s.nfree == 0;
  int same = one || (a->s.count == b.s.count && a->s.nfree == b.s.nfree);
  for (int k = 0; same && !one && k < a->s.nfree; k++) same =
      strcmp(a->s.dims[a->s.free_dim[k]], b.s.dims[b.s.free_dim[k]]) == 0;
  if (same)
    for (long long i = 0; i < a->s.count; i++) a->s.x[i] -= b.s.x[one ? 0 : i];
  slice_free(&b);
  return same ? 0 : why_fail(r, "cannot subtract '%s': its selection is not of the free dimensions of '%s'", other,
                             ms->data);
}

static int eval_dataset(reader *r, double *m) {
  const nh_measure *ms = r->ms;
  slice a;
  if (take_slice(r, ms->data, NULL, 0, &a) < 0) return -1;
  /* x − y (− z): `minus` (one or two datasets), or the same dataset at minus_at's selectors */
  const char *subtrahends[2] = {ms->minus[0] ? ms->minus : ms->nminus_select ? ms->data : NULL,
                                ms->minus2[0] ? ms->minus2 : NULL};
  for (int i = 0; i < 2; i++)
    if (subtrahends[i] && subtract(r, &a, subtrahends[i]) < 0) return slice_free(&a), -1;
  int k = 0, rc = 0;
  for (long long i = 0; i < a.s.count; i++) /* the window on the first free coordinate */
    if (a.c[i] >= ms->from && a.c[i] <= ms->to) a.c[k] = a.c[i], a.s.x[k++] = a.s.x[i];
  *m = nh_reduce_apply(ms->reduce, k, a.c, a.s.x, ms->period);
  if (ms->reduce == NH_REDUCE_VALUE && k > 1)
    rc = why_fail(r, "reduce = \"value\" but dimension %s is free", a.s.dims[a.s.free_dim[0]], "");
  slice_free(&a);
  return rc;
}

/* One selector as "dim=value": a method by its canonical name, a number in %.17g. */
static void selector_text(const nh_select *s, char *buf, size_t len) {
  char canonical[NH_TEXT_CANONICAL], err[NH_TEXT_MESSAGE];
  nh_method *m = strcmp(s->dim, "method") == 0 && s->by_name ? nh_method_parse(s->name, err, sizeof err) : NULL;
  if (m) nh_method_format(m, canonical, sizeof canonical), nh_method_free(m);
  else snprintf(canonical, sizeof canonical, "%s", s->by_name ? s->name : "");
  if (s->by_name) snprintf(buf, len, "%s=\"%s\"", s->dim, canonical);
  else snprintf(buf, len, "%s=%.17g", s->dim, s->value);
}

static int by_dimension(const void *a, const void *b) {
  return strcmp(((const nh_select *)a)->dim, ((const nh_select *)b)->dim);
}

/* The selectors sorted by dimension, as text. */
static void selectors_text(const nh_select *sel, int n, char *buf, size_t len) {
  nh_select sorted[NH_MAX_SELECT];
  memcpy(sorted, sel, sizeof *sel * (size_t)n);
  qsort(sorted, (size_t)n, sizeof *sorted, by_dimension);
  buf[0] = '\0';
  for (int i = 0; i < n; i++) {
    char one[NH_TEXT_CANONICAL + NH_TEXT_NAME];
    selector_text(&sorted[i], one, sizeof one);
    nh_text_append(buf, len, ";", "%s", one);
  }
}

void nh_measure_key(const nh_measure *ms, char *key, size_t len) {
  char at[NH_TEXT_LONG], minus_at[NH_TEXT_LONG];
  selectors_text(ms->select, ms->nselect, at, sizeof at);
  selectors_text(ms->minus_select, ms->nminus_select, minus_at, sizeof minus_at);
  snprintf(key, len, "%s|%s|%s|{%s}|%s,%s|{%s}|%s|%.17g|%.17g|%.17g", ms->file, ms->data, ms->field, at, ms->minus,
           ms->minus2, minus_at, nh_reduce_names[ms->reduce], ms->period, ms->from, ms->to);
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
    snprintf(why, whylen, "results file %s is missing (make paper%s writes it)", path,
             strncmp(ms->file, "sundials/", 9) == 0 ? " SUNDIALS=1" : "");
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
