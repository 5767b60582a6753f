/* Claims files (libconfig; format in studies/paper/README.md): loading, evaluation against the
 * results files, and the verdicts. Every load error names FILE:LINE and the value. */
#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/report.h"
#include "core/alloc.h"
#include "core/text.h"
#include "studies/study.h"

typedef struct {
  const char *path;
  char *err;
  size_t errlen;
} loader;

/* As studies/spec.c's fail_at, which also places --set overrides and list strings; a claims file
 * has neither, so the likeness is of form only. */
static int fail_at(const loader *l, const config_setting_t *s, const char *fmt, ...) {
  char msg[NH_TEXT_MESSAGE];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  snprintf(l->err, l->errlen, "%s:%d: %s", l->path, s ? (int)config_setting_source_line(s) : 0, msg);
  return -1;
}

/* Every member of group g must be one of the NULL-terminated names. */
static int check_keys(const loader *l, const config_setting_t *g, const char *const *names) {
  for (int i = 0; i < config_setting_length(g); i++) {
    const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
    const char *key = config_setting_name(s);
    int ok = 0;
    for (const char *const *n = names; *n && !ok; n++) ok = strcmp(key, *n) == 0;
    if (!ok) return fail_at(l, s, "unknown setting '%s'", key);
  }
  return 0;
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

static int get_number(const loader *l, const config_setting_t *g, const char *key, double *v) {
  const config_setting_t *s = config_setting_get_member(g, key);
  if (!s) return 0;
  int t = config_setting_type(s);
  if (t != CONFIG_TYPE_FLOAT && t != CONFIG_TYPE_INT && t != CONFIG_TYPE_INT64)
    return fail_at(l, s, "'%s' must be a number", key);
  *v = config_setting_get_float(s);
  if (t != CONFIG_TYPE_FLOAT) *v = (double)config_setting_get_int64(s);
  return 0;
}

/* at = { method = "rk4"; h = 0.2; ic = 0; t = 100.0; component = "x"; } */
static int load_selectors(const loader *l, const config_setting_t *at, nh_measure *ms) {
  if (!at) return 0;
  if (!config_setting_is_group(at)) return fail_at(l, at, "'at' must be a group { dim = value; ... }");
  if (config_setting_length(at) > NH_MAX_SELECT) return fail_at(l, at, "at most %d selectors", NH_MAX_SELECT);
  for (int i = 0; i < config_setting_length(at); i++) {
    const config_setting_t *s = config_setting_get_elem(at, (unsigned)i);
    nh_select *sel = &ms->select[ms->nselect++];
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

static const char *const row_keys[] = {"id", "quantity", "file", "data", "field", "at", "reduce", "from",
                                       "to", "per", "minus", "period", "expect", "verdict", "reason", NULL};

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
  if (verdict[0]) {
    if (strcmp(verdict, "not-verified") != 0)
      return fail_at(l, g, "verdict '%s': only \"not-verified\" may be declared (pass and fail are measured)", verdict);
    if (!row->reason[0]) return fail_at(l, g, "a not-verified row needs its reason");
    row->static_verdict = 1;
    return 0;
  }
  nh_measure *ms = &row->measure;
  ms->from = -INFINITY;
  ms->to = INFINITY;
  if (get_text(l, g, "file", ms->file, sizeof ms->file, 1) != 0 ||
      get_text(l, g, "data", ms->data, sizeof ms->data, 1) != 0 ||
      get_text(l, g, "field", ms->field, sizeof ms->field, 0) != 0 ||
      get_text(l, g, "reduce", reduce, sizeof reduce, 0) != 0 ||
      get_text(l, g, "per", row->per, sizeof row->per, 0) != 0 ||
      get_text(l, g, "minus", ms->minus, sizeof ms->minus, 0) != 0 || get_number(l, g, "period", &ms->period) != 0 ||
      load_selectors(l, config_setting_get_member(g, "at"), ms) != 0 || get_number(l, g, "from", &ms->from) != 0 ||
      get_number(l, g, "to", &ms->to) != 0)
    return -1;
  int r = reduce[0] ? nh_reduce_find(reduce) : NH_REDUCE_VALUE;
  if (r < 0) return fail_at(l, config_setting_get_member(g, "reduce"), "unknown reduce '%s'", reduce);
  ms->reduce = (nh_reduce)r;
  row->has_measure = 1;
  if (row->per[0] == '@') memmove(row->per, row->per + 1, strlen(row->per));
  /* A row the spec only asks to measure carries its value and the reason it has no expectation. */
  if (!row->expected[0] && row->reason[0]) return 0;
  if (!row->expected[0]) return fail_at(l, g, "a measured row needs 'expect' (or a 'reason' why it has none)");
  char msg[NH_TEXT_MESSAGE];
  if (nh_expect_parse(row->expected, &row->expect, msg, sizeof msg) < 0)
    return fail_at(l, config_setting_get_member(g, "expect"), "%s", msg);
  row->has_expect = 1;
  return 0;
}

static const char *const item_keys[] = {"item", "source", "claim", "note", "figures", "rows", NULL};

static int load_item(const loader *l, const config_setting_t *g, nh_claim_item *it) {
  if (check_keys(l, g, item_keys) != 0 || get_text(l, g, "item", it->item, sizeof it->item, 1) != 0 ||
      get_text(l, g, "source", it->source, sizeof it->source, 0) != 0 ||
      get_text(l, g, "claim", it->claim, sizeof it->claim, 1) != 0 ||
      get_text(l, g, "note", it->note, sizeof it->note, 0) != 0)
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
  if (!row->has_expect) {
    row->verdict = NH_NOT_VERIFIED;
    snprintf(row->outcome, sizeof row->outcome, "measured only: %s", row->reason);
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

nh_verdict nh_item_verdict(const nh_claim_item *it) {
  nh_verdict v = NH_PASS;
  for (int j = 0; j < it->nrows; j++)
    if (it->rows[j].verdict == NH_FAIL || (it->rows[j].verdict == NH_NOT_VERIFIED && v == NH_PASS))
      v = it->rows[j].verdict;
  return v;
}
