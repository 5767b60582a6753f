/* Claims files (libconfig; format in studies/paper/README.md): loading, evaluation against the
 * results files, and the verdicts. Every load error names FILE:LINE and the value. */
#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/claims/report.h"
#include "core/alloc.h"
#include "core/text.h"
#include "studies/config_read.h"
#include "studies/study.h"

typedef struct {
  const char *path;
  char *err;
  size_t errlen;
} loader;

/* "FILE:LINE: message" (studies/config_read.h); a claims file has no --set and no includes. */
static int fail_at(const loader *l, const config_setting_t *s, const char *fmt, ...) {
  char at[NH_TEXT_PATH + 16];
  snprintf(at, sizeof at, "%s:%d", l->path, s ? (int)config_setting_source_line(s) : 0);
  va_list ap;
  va_start(ap, fmt);
  nh_config_refuse(l->err, l->errlen, at, fmt, ap);
  va_end(ap);
  return -1;
}

/* Every member of group g must be one of the NULL-terminated names. */
static int check_keys(const loader *l, const config_setting_t *g, const char *const *names) {
  const config_setting_t *s = nh_config_unknown_member(g, names);
  return s ? fail_at(l, s, "unknown setting '%s'", config_setting_name(s)) : 0;
}

/* An optional string member into buf; a required one when `required`. */
static int get_text(const loader *l, const config_setting_t *g, const char *key, char *buf, size_t len, int required) {
  const config_setting_t *s = config_setting_get_member(g, key);
  buf[0] = '\0';
  if (!s) return required ? fail_at(l, g, "missing setting '%s'", key) : 0;
  const char *v = config_setting_get_string(s);
  if (!v) return fail_at(l, s, "'%s' must be a string", key);
  if (strlen(v) >= len) return fail_at(l, s, "'%s' is longer than %zu characters", key, len - 1);
  snprintf(buf, len, "%s", v);
  return 0;
}

/* An optional number member, read as written (studies/config_read.h). */
static int get_number(const loader *l, const config_setting_t *g, const char *key, double *v) {
  const config_setting_t *s = config_setting_get_member(g, key);
  char why[NH_TEXT_MESSAGE];
  if (s && nh_config_number(s, v, why, sizeof why) < 0) return fail_at(l, s, "%s", why);
  return 0;
}

/* at = { method = "rk4"; h = 0.2; ic = 0; t = 100.0; component = "x"; } (and minus_at alike) */
static int load_selectors(const loader *l, const config_setting_t *at, nh_select *select, int *nselect) {
  if (!at) return 0;
  const char *key = config_setting_name(at);
  if (!config_setting_is_group(at)) return fail_at(l, at, "'%s' must be a group { dim = value; ... }", key);
  if (config_setting_length(at) > NH_MAX_SELECT) return fail_at(l, at, "at most %d selectors", NH_MAX_SELECT);
  for (int i = 0; i < config_setting_length(at); i++) {
    const config_setting_t *s = config_setting_get_elem(at, (unsigned)i);
    nh_select *sel = &select[(*nselect)++];
    snprintf(sel->dim, sizeof sel->dim, "%s", config_setting_name(s));
    if (config_setting_type(s) == CONFIG_TYPE_STRING) {
      sel->by_name = 1;
      snprintf(sel->name, sizeof sel->name, "%s", config_setting_get_string(s));
    } else if (get_number(l, at, sel->dim, &sel->value) != 0) {
      return -1;
    } else {
      snprintf(sel->name, sizeof sel->name, "%.17g", sel->value);
    }
  }
  return 0;
}

static const char *const row_keys[] = {"id",    "quantity", "file",   "data",   "field",  "at",     "reduce",
                                       "from",  "to",       "per",    "minus",  "minus_at", "period", "expect",
                                       "verdict", "reason", NULL};

/* minus = "dataset" or minus = ["a", "b"] (both subtracted, x − a − b). */
static int load_minus(const loader *l, const config_setting_t *g, nh_measure *ms) {
  const config_setting_t *s = config_setting_get_member(g, "minus");
  if (!s || config_setting_type(s) == CONFIG_TYPE_STRING) return get_text(l, g, "minus", ms->minus, sizeof ms->minus, 0);
  const char *a = config_setting_get_string_elem(s, 0), *b = config_setting_get_string_elem(s, 1);
  if (!config_setting_is_array(s) || config_setting_length(s) != 2 || !a || !b)
    return fail_at(l, s, "'minus' must be a dataset or a list of two: minus = [\"a\", \"b\"]");
  if (strlen(a) >= sizeof ms->minus || strlen(b) >= sizeof ms->minus2)
    return fail_at(l, s, "'minus' names longer than %zu characters", sizeof ms->minus - 1);
  snprintf(ms->minus, sizeof ms->minus, "%s", a);
  snprintf(ms->minus2, sizeof ms->minus2, "%s", b);
  return 0;
}

/* verdict = "not-verified" (with its reason: nothing is measured) or "shown" (a measured value the
 * spec asks for without a claim of its own: no expectation). */
static int load_declared_verdict(const loader *l, const config_setting_t *g, const char *verdict, nh_claim_row *row) {
  if (strcmp(verdict, "shown") == 0) return row->shown = 1, 0;
  if (strcmp(verdict, "not-verified") != 0)
    return fail_at(l, g, "verdict '%s': only \"not-verified\" or \"shown\" may be declared (pass and fail are measured)",
                   verdict);
  if (!row->reason[0]) return fail_at(l, g, "a not-verified row needs its reason");
  row->static_verdict = 1;
  return 0;
}

static int load_row(const loader *l, const config_setting_t *g, nh_claim_row *row) {
  char verdict[NH_TEXT_NAME], reduce[NH_TEXT_NAME];
  if (!config_setting_is_group(g)) return fail_at(l, g, "a row must be a group { quantity = ...; ... }");
  row->line = (int)config_setting_source_line(g);
  if (check_keys(l, g, row_keys) != 0 || get_text(l, g, "id", row->id, sizeof row->id, 0) != 0 ||
      get_text(l, g, "quantity", row->quantity, sizeof row->quantity, 1) != 0 ||
      get_text(l, g, "verdict", verdict, sizeof verdict, 0) != 0 ||
      get_text(l, g, "reason", row->reason, sizeof row->reason, 0) != 0 ||
      get_text(l, g, "expect", row->expected, sizeof row->expected, 0) != 0)
    return -1;
  if (verdict[0] && load_declared_verdict(l, g, verdict, row) != 0) return -1;
  if (row->static_verdict) return 0;
  nh_measure *ms = &row->measure;
  ms->from = -INFINITY;
  ms->to = INFINITY;
  if (get_text(l, g, "file", ms->file, sizeof ms->file, 1) != 0 ||
      get_text(l, g, "data", ms->data, sizeof ms->data, 1) != 0 ||
      get_text(l, g, "field", ms->field, sizeof ms->field, 0) != 0 ||
      get_text(l, g, "reduce", reduce, sizeof reduce, 0) != 0 ||
      get_text(l, g, "per", row->per, sizeof row->per, 0) != 0 ||
      load_minus(l, g, ms) != 0 || get_number(l, g, "period", &ms->period) != 0 ||
      load_selectors(l, config_setting_get_member(g, "at"), ms->select, &ms->nselect) != 0 ||
      load_selectors(l, config_setting_get_member(g, "minus_at"), ms->minus_select, &ms->nminus_select) != 0 ||
      get_number(l, g, "from", &ms->from) != 0 || get_number(l, g, "to", &ms->to) != 0)
    return -1;
  int r = reduce[0] ? nh_reduce_find(reduce) : NH_REDUCE_VALUE;
  if (r < 0) return fail_at(l, config_setting_get_member(g, "reduce"), "unknown reduce '%s'", reduce);
  ms->reduce = (nh_reduce)r;
  row->has_measure = 1;
  if (row->per[0] == '@') memmove(row->per, row->per + 1, strlen(row->per));
  if (row->shown) {
    if (row->expected[0])
      return fail_at(l, config_setting_get_member(g, "expect"), "a shown row has no expectation (it shows a value)");
    return 0;
  }
  if (!row->expected[0])
    return fail_at(l, g, "a measured row needs 'expect', or verdict = \"shown\" for a value without a claim");
  char msg[NH_TEXT_MESSAGE];
  if (nh_expect_parse(row->expected, &row->expect, msg, sizeof msg) < 0)
    return fail_at(l, config_setting_get_member(g, "expect"), "%s", msg);
  row->has_expect = 1;
  return 0;
}

static const char *const item_keys[] = {"item", "source", "claim", "note", "cause", "summary", "figures", "rows", NULL};

/* cause = "claim" | "harness" and its one-line summary, for the report's table of failing items. */
static int load_cause(const loader *l, const config_setting_t *g, nh_claim_item *it) {
  char cause[NH_TEXT_NAME];
  if (get_text(l, g, "cause", cause, sizeof cause, 0) != 0 ||
      get_text(l, g, "summary", it->summary, sizeof it->summary, 0) != 0)
    return -1;
  if (!cause[0]) return it->summary[0] ? fail_at(l, g, "item %s: a summary needs its cause", it->item) : 0;
  if (strcmp(cause, "claim") == 0) it->cause = NH_CAUSE_CLAIM;
  else if (strcmp(cause, "harness") == 0) it->cause = NH_CAUSE_HARNESS;
  else return fail_at(l, config_setting_get_member(g, "cause"), "cause '%s': \"claim\" or \"harness\"", cause);
  if (!it->summary[0]) return fail_at(l, g, "item %s: cause = \"%s\" needs a one-line summary", it->item, cause);
  return 0;
}

static int load_item(const loader *l, const config_setting_t *g, nh_claim_item *it) {
  if (check_keys(l, g, item_keys) != 0 || get_text(l, g, "item", it->item, sizeof it->item, 1) != 0 ||
      get_text(l, g, "source", it->source, sizeof it->source, 0) != 0 ||
      get_text(l, g, "claim", it->claim, sizeof it->claim, 1) != 0 ||
      get_text(l, g, "note", it->note, sizeof it->note, 0) != 0 || load_cause(l, g, it) != 0)
    return -1;
  const config_setting_t *figs = config_setting_get_member(g, "figures");
  for (int i = 0; figs && i < config_setting_length(figs); i++) {
    const char *name = config_setting_get_string_elem(figs, (unsigned)i);
    if (!name || i >= 4) return fail_at(l, figs, "figures: at most 4 names (strings)");
    snprintf(it->figures[it->nfigures++], sizeof it->figures[0], "%s", name);
  }
  const config_setting_t *rows = config_setting_get_member(g, "rows");
  if (!rows || !config_setting_is_list(rows) || config_setting_length(rows) == 0)
    return fail_at(l, g, "item %s needs a non-empty list rows = ( { ... }, ... )", it->item);
  it->nrows = config_setting_length(rows);
  if (!(it->rows = calloc((size_t)it->nrows, sizeof *it->rows)))
    return fail_at(l, rows, "out of memory for %d rows", it->nrows);
  for (int i = 0; i < it->nrows; i++)
    if (load_row(l, config_setting_get_elem(rows, (unsigned)i), &it->rows[i]) != 0) return -1;
  return 0;
}

/* Row ids are unique within a file, and every @id an expectation names exists. */
static nh_claim_row *find_row(nh_claims *c, const char *id) {
  for (int i = 0; i < c->nitems; i++)
    for (int j = 0; j < c->items[i].nrows; j++)
      if (c->items[i].rows[j].id[0] && strcmp(c->items[i].rows[j].id, id) == 0) return &c->items[i].rows[j];
  return NULL;
}

static int check_ids(nh_claims *c, char *err, size_t errlen) {
  for (int i = 0; i < c->nitems; i++)
    for (int j = 0; j < c->items[i].nrows; j++) {
      nh_claim_row *row = &c->items[i].rows[j];
      if (row->id[0] && find_row(c, row->id) != row) {
        snprintf(err, errlen, "%s:%d: item %s: row id '%s' is used twice", c->path, row->line, c->items[i].item,
                 row->id);
        return -1;
      }
      const nh_claim_row *per = row->per[0] ? find_row(c, row->per) : NULL;
      if (row->per[0] && (!per || per->per[0] || !per->has_measure)) {
        snprintf(err, errlen, "%s:%d: item %s: per = '%s' must name a measured row that is not itself divided", c->path,
                 row->line, c->items[i].item, row->per);
        return -1;
      }
      if (row->has_expect && row->expect.ref[0] && !find_row(c, row->expect.ref)) {
        snprintf(err, errlen, "%s:%d: item %s: expectation '%s' names no row '%s'", c->path, row->line,
                 c->items[i].item, row->expected, row->expect.ref);
        return -1;
      }
    }
  return 0;
}

int nh_claims_load(const char *path, nh_claims *c, char *err, size_t errlen) {
  config_t cfg;
  loader l = {path, err, errlen};
  memset(c, 0, sizeof *c);
  snprintf(c->path, sizeof c->path, "%s", path);
  config_init(&cfg);
  int rc = -1;
  if (!config_read_file(&cfg, path)) {
    if (config_error_type(&cfg) == CONFIG_ERR_FILE_IO) {
      snprintf(err, errlen, "%s: cannot read the file: %s", path, strerror(errno));
    } else {
      char *text = nh_read_text(path);
      nh_config_syntax_error(path, text, &cfg, err, errlen);
      free(text);
    }
    goto done;
  }
  char *text = nh_read_text(path);
  if (!text) { /* out of memory, too large (EFBIG), or gone since libconfig read it */
    snprintf(err, errlen, "%s: cannot read the file: %s", path, strerror(errno));
    goto done;
  }
  const int wrapped_integer = nh_config_check_integers(path, text, err, errlen) != 0;
  free(text);
  if (wrapped_integer) goto done;
  const config_setting_t *root = config_root_setting(&cfg), *items = config_setting_get_member(root, "items");
  static const char *const keys[] = {"spec", "title", "items", NULL};
  if (check_keys(&l, root, keys) != 0 || get_text(&l, root, "spec", c->spec, sizeof c->spec, 1) != 0 ||
      get_text(&l, root, "title", c->title, sizeof c->title, 0) != 0)
    goto done;
  if (!items || !config_setting_is_list(items)) {
    fail_at(&l, items ? items : root, "needs a list items = ( { item = ...; ... }, ... )");
    goto done;
  }
  c->nitems = config_setting_length(items);
  if (!(c->items = nh_calloc_array((size_t)c->nitems, sizeof *c->items))) {
    fail_at(&l, items, "out of memory for %d items", c->nitems);
    goto done;
  }
  for (int i = 0; i < c->nitems; i++)
    if (load_item(&l, config_setting_get_elem(items, (unsigned)i), &c->items[i]) != 0) goto done;
  rc = check_ids(c, err, errlen);
done:
  config_destroy(&cfg);
  if (rc < 0) nh_claims_free(c);
  return rc;
}

void nh_claims_free(nh_claims *c) {
  for (int i = 0; c->items && i < c->nitems; i++) free(c->items[i].rows);
  free(c->items);
  c->items = NULL;
  c->nitems = 0;
}

static void measure_row(nh_claim_row *row, const char *dir) {
  char why[sizeof row->outcome - (sizeof "not measured: " - 1)]; /* what fits in the outcome after the prefix */
  if (row->static_verdict) {
    row->verdict = NH_NOT_VERIFIED;
    row->measured = NAN;
    snprintf(row->outcome, sizeof row->outcome, "%s", row->reason);
    return;
  }
  if (nh_measure_eval(&row->measure, dir, &row->measured, why, sizeof why) < 0) { /* measured NaN */
    row->verdict = NH_NOT_VERIFIED;
    snprintf(row->outcome, sizeof row->outcome, "not measured: %s", why);
  }
}

/* A ratio row: its value over the value of the row it names (measured before any division). */
static void divide_row(nh_claims *c, nh_claim_row *row) {
  if (!row->per[0] || row->outcome[0]) return;
  const nh_claim_row *by = find_row(c, row->per);
  if (isnan(by->measured)) {
    snprintf(row->outcome, sizeof row->outcome, "not measured: its divisor %s was not", row->per);
    row->verdict = NH_NOT_VERIFIED;
  }
  row->measured /= by->measured;
}

/* The verdict once every row is measured (an expectation may name another row's value). */
static void judge_row(nh_claims *c, nh_claim_row *row) {
  if (row->static_verdict || row->outcome[0]) return;
  if (row->shown) {
    row->verdict = isnan(row->measured) ? NH_NOT_VERIFIED : NH_SHOWN;
    snprintf(row->outcome, sizeof row->outcome, "%s%s",
             isnan(row->measured) ? "the value is NaN: the run failed or the method does not define it; " : "",
             row->reason);
    return;
  }
  double x = row->expect.a;
  if (row->expect.ref[0]) x = row->expect.factor * find_row(c, row->expect.ref)->measured;
  if (isnan(row->measured) || isnan(x)) {
    row->verdict = NH_NOT_VERIFIED;
    snprintf(row->outcome, sizeof row->outcome, "%s is NaN: the run failed or the method does not define it",
             isnan(row->measured) ? "the measured value" : "the referenced value");
    return;
  }
  row->verdict = nh_expect_holds(&row->expect, x, row->measured) ? NH_PASS : NH_FAIL;
  if (row->expect.ref[0])
    snprintf(row->outcome, sizeof row->outcome, "@%s = %.4g", row->expect.ref, x / row->expect.factor);
  if (row->verdict == NH_FAIL && row->reason[0]) {
    size_t len = strlen(row->outcome);
    snprintf(row->outcome + len, sizeof row->outcome - len, "%s%s", len ? "; " : "", row->reason);
  }
}

void nh_claims_evaluate(nh_claims *c, const char *dir) {
  for (int i = 0; i < c->nitems; i++)
    for (int j = 0; j < c->items[i].nrows; j++) measure_row(&c->items[i].rows[j], dir);
  for (int i = 0; i < c->nitems; i++)
    for (int j = 0; j < c->items[i].nrows; j++) divide_row(c, &c->items[i].rows[j]);
  for (int i = 0; i < c->nitems; i++)
    for (int j = 0; j < c->items[i].nrows; j++) judge_row(c, &c->items[i].rows[j]);
}

/* ---- consistency: one quantity, one threshold ------------------------------------------------- */

typedef struct {
  const nh_claim_row *row;
  const char *path, *item;
  char key[2 * NH_TEXT_LONG + NH_TEXT_NUMBER]; /* the measure's and its divisor's */
} keyed_row;

/* Which kind of bound an expectation is: two of a kind on one quantity must agree. */
static int bound_kind(nh_expect_op op) {
  switch (op) {
  case NH_EXPECT_LT:
  case NH_EXPECT_LE: return 1;
  case NH_EXPECT_GT:
  case NH_EXPECT_GE: return 2;
  case NH_EXPECT_IN: return 3;
  default: return 4; /* ~ rel, ~ abs */
  }
}

static int same_center(const nh_expect *a, const nh_expect *b) {
  return a->a == b->a && a->factor == b->factor && strcmp(a->ref, b->ref) == 0;
}

/* Two expectations of one quantity that hold it to different thresholds: two numeric upper bounds,
 * two numeric lower bounds or two ranges that differ, a bound on another row's value with two
 * factors, or "~ X" about the same X with different tolerances. Bounds on two different rows'
 * values, or "~ X" and "~ Y" about different values, are two claims, not two thresholds. */
static int thresholds_differ(const nh_expect *a, const nh_expect *b) {
  const int kind = bound_kind(a->op);
  if (kind != bound_kind(b->op) || strcmp(a->ref, b->ref) != 0) return 0;
  if (kind == 4) return same_center(a, b) && (a->op != b->op || a->b != b->b);
  return a->op != b->op || !same_center(a, b) || a->b != b->b;
}

/* The row's quantity as text: its measure and, for a ratio, its divisor's measure. */
static void row_key(nh_claims *c, const nh_claim_row *row, char *key, size_t len) {
  char divisor[NH_TEXT_LONG] = "";
  const nh_claim_row *by = row->per[0] ? find_row(c, row->per) : NULL;
  if (by) nh_measure_key(&by->measure, divisor, sizeof divisor);
  char own[NH_TEXT_LONG];
  nh_measure_key(&row->measure, own, sizeof own);
  snprintf(key, len, "%s / %s", own, divisor);
}

int nh_claims_check_consistent(const nh_claims *c, int nfiles, char *err, size_t errlen) {
  int count = 0;
  for (int f = 0; f < nfiles; f++)
    for (int i = 0; i < c[f].nitems; i++) count += c[f].items[i].nrows;
  keyed_row *rows = nh_calloc_array((size_t)count + 1, sizeof *rows);
  if (!rows) return snprintf(err, errlen, "out of memory for %d claims rows", count), -1;
  int n = 0, rc = 0;
  for (int f = 0; f < nfiles; f++)
    for (int i = 0; i < c[f].nitems; i++)
      for (int j = 0; j < c[f].items[i].nrows; j++) {
        const nh_claim_row *row = &c[f].items[i].rows[j];
        if (!row->has_measure || !row->has_expect) continue;
        rows[n].row = row, rows[n].path = c[f].path, rows[n].item = c[f].items[i].item;
        row_key((nh_claims *)&c[f], row, rows[n].key, sizeof rows[n].key);
        n++;
      }
  for (int a = 0; a < n && !rc; a++)
    for (int b = a + 1; b < n && !rc; b++) {
      const nh_claim_row *x = rows[a].row, *y = rows[b].row;
      if (strcmp(rows[a].key, rows[b].key) != 0 || !thresholds_differ(&x->expect, &y->expect)) continue;
      snprintf(err, errlen,
               "%s:%d: item %s checks '%s' against '%s', but %s:%d (item %s) checks the same quantity against '%s': "
               "one quantity, one threshold",
               rows[b].path, y->line, rows[b].item, y->quantity, y->expected, rows[a].path, x->line, rows[a].item,
               x->expected);
      rc = -1;
    }
  free(rows);
  return rc;
}

nh_verdict nh_item_verdict(const nh_claim_item *it) {
  nh_verdict v = NH_SHOWN;
  for (int j = 0; j < it->nrows; j++) {
    const nh_verdict r = it->rows[j].verdict;
    if (r == NH_FAIL || (r == NH_NOT_VERIFIED && v != NH_FAIL) || (r == NH_PASS && v == NH_SHOWN)) v = r;
  }
  return v;
}
