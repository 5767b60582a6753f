/* Study specs: libconfig text files (format in README.md, "Study specs"). Every error names the
 * file, the line and the offending value. */
#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/hash.h"
#include "core/text.h"
#include "studies/config_read.h"
#include "studies/kinds.h"
#include "studies/settings.h"
#include "studies/spec_load.h"
#include "studies/spec_source.h"
#include "studies/study.h"
#include "systems/defined.h"
#include "systems/plugin.h"

/* The study's method names by hash (FNV-1a, open addressing, linear probing): finding whether a
 * grid's point is a method the study has is then constant time, and loading a grid linear in its
 * points (a strcmp against every method made a 300 x 300 grid take 36 s). */
typedef struct {
  int *slot;  /* [cap]: a method's index + 1, 0 for an empty slot */
  size_t cap; /* a power of two, at least twice the methods */
} name_index;

struct nh_spec_ctx {
  const char *file;
  const char *text; /* the spec as read, includes expanded */
  char *err;
  size_t errlen;
  const nh_spec_source *src; /* where each line of text comes from */
  name_index *names;         /* of st's methods (add_method) */
};

/* "FILE:LINE" of a line of c->text, into buf. */
static const char *where(const nh_spec_ctx *c, int line, char *buf, size_t len) {
  return nh_spec_source_where(c->src, line, buf, len);
}

/* libconfig dates a list element by the token after it; a string element's true line is that of
 * the last occurrence of its quoted text at or before the reported line. (c->text is set before
 * libconfig sees the spec, and a setting of type string always has its text.) */
static int string_line(const nh_spec_ctx *c, const config_setting_t *s) {
  int reported = config_setting_source_line(s), best = reported, line = 1;
  const char *value = config_setting_get_string(s);
  size_t len = strlen(value);
  for (const char *p = c->text; *p && line <= reported; p++) {
    if (*p == '\n') line++;
    else if (*p == '"' && strncmp(p + 1, value, len) == 0 && p[len + 1] == '"') best = line;
  }
  return best;
}

/* "ensemble.energy": the setting's path from the root, as --set names it, appended to buf. */
static void setting_path(const config_setting_t *s, char *buf, size_t len) {
  const config_setting_t *p = config_setting_parent(s);
  if (p && config_setting_name(p)) setting_path(p, buf, len);
  nh_text_append(buf, len, ".", "%s", config_setting_name(s));
}

/* The message of a refused spec, in c->err; returns -1. Every loader below returns 0, or -1 with
 * its message written, and its callers test < 0. */
int nh_spec_fail(const nh_spec_ctx *c, const config_setting_t *s, const char *fmt, ...) {
  int line = !s                                             ? 0
             : config_setting_type(s) == CONFIG_TYPE_STRING ? string_line(c, s)
                                                            : (int)config_setting_source_line(s);
  const config_setting_t *named = s && !config_setting_name(s) ? config_setting_parent(s) : s; /* a list's entry */
  char at[NH_TEXT_PATH + NH_TEXT_NAME + 16];
  if (named && line == 0 && config_setting_name(named)) { /* set by --set, not read from the file */
    char path[NH_TEXT_NAME] = "";
    setting_path(named, path, sizeof path);
    snprintf(at, sizeof at, "%s: --set %s", c->file, path);
  } else if (line > 0) {
    where(c, line, at, sizeof at);
  } else { /* the whole spec (its root has no line) */
    snprintf(at, sizeof at, "%s", c->file);
  }
  va_list ap;
  va_start(ap, fmt);
  nh_config_refuse(c->err, c->errlen, at, fmt, ap);
  va_end(ap);
  return -1;
}

/* Memory ran out while loading: the load fails as for a bad spec, with the file named. */
int nh_spec_out_of_memory(const nh_spec_ctx *c) {
  snprintf(c->err, c->errlen, "%s: out of memory", c->file);
  return -1;
}

char *nh_spec_dup(const char *s) {
  char *d = malloc(strlen(s) + 1);
  if (d) strcpy(d, s);
  return d;
}

const config_setting_t *nh_spec_require(const nh_spec_ctx *c, const config_setting_t *group, const char *name) {
  const config_setting_t *s = config_setting_get_member(group, name);
  if (!s) nh_spec_fail(c, group, "missing setting '%s'", name);
  return s;
}

/* A number, read as written (studies/config_read.h), its refusal placed at s. */
static int get_number(const nh_spec_ctx *c, const config_setting_t *s, double *out) {
  char why[NH_TEXT_MESSAGE];
  return nh_config_number(s, out, why, sizeof why) < 0 ? nh_spec_fail(c, s, "%s", why) : 0;
}

static int get_positive(const nh_spec_ctx *c, const config_setting_t *group, const char *name, double *out) {
  const config_setting_t *s = nh_spec_require(c, group, name);
  if (!s || get_number(c, s, out) < 0) return -1;
  if (!(*out > 0)) return nh_spec_fail(c, s, "%s = %g must be positive", name, *out); /* finite: get_number */
  return 0;
}

int nh_spec_whole(const nh_spec_ctx *c, const config_setting_t *group, const char *name, int min, int max, int def,
                  int *out) {
  const config_setting_t *s = config_setting_get_member(group, name);
  if (!s) {
    if (def == NH_SPEC_REQUIRED) return nh_spec_fail(c, group, "missing setting '%s'", name);
    *out = def;
    return 0;
  }
  double v;
  if (get_number(c, s, &v) < 0) return -1;
  if (v != floor(v) || v < min || v > max)
    return nh_spec_fail(c, s, "%s = %.15g must be a whole number in [%d, %d]", name, v, min, max);
  *out = (int)v;
  return 0;
}

/* A whole-number setting with its default and range from its descriptor (studies/settings.c). */
int nh_spec_count(const nh_spec_ctx *c, const config_setting_t *root, const char *name, int *out) {
  const nh_setting *d = nh_setting_named(name);
  return nh_spec_whole(c, root, name, (int)d->min, (int)d->max, isnan(d->def) ? NH_SPEC_REQUIRED : (int)d->def, out);
}

/* A list or array of numbers. */
static int get_numbers(const nh_spec_ctx *c, const config_setting_t *s, double **vals, int *count) {
  if (!config_setting_is_aggregate(s) || config_setting_is_group(s))
    return nh_spec_fail(c, s, "'%s' must be a list of numbers, e.g. [0.0, 0.1]", config_setting_name(s));
  int n = config_setting_length(s);
  if (n == 0) return nh_spec_fail(c, s, "'%s' is empty", config_setting_name(s));
  if (!(*vals = calloc((size_t)n, sizeof **vals))) return nh_spec_out_of_memory(c);
  *count = n;
  for (int i = 0; i < n; i++)
    if (get_number(c, config_setting_get_elem(s, (unsigned)i), &(*vals)[i]) < 0) return -1;
  return 0;
}

int nh_spec_method_index(const nh_spec_ctx *c, const config_setting_t *s, const nh_study *st, const char *text,
                         const char *what) {
  char msg[NH_TEXT_MESSAGE], name[NH_TEXT_CANONICAL];
  nh_method *m = nh_method_parse(text, msg, sizeof msg);
  if (!m) return nh_spec_fail(c, s, "%s '%s': %s", what, text, msg);
  nh_method_format(m, name, sizeof name);
  nh_method_free(m);
  for (int i = 0; i < st->nmethods; i++)
    if (strcmp(st->method_names[i], name) == 0) return i;
  return nh_spec_fail(c, s, "%s '%s', which is not among the study's methods", what, name);
}

int nh_spec_members(const nh_spec_ctx *c, const config_setting_t *group, const char *const *known) {
  const config_setting_t *s = nh_config_unknown_member(group, known);
  if (!s) return 0;
  char list[NH_TEXT_MESSAGE] = "";
  for (int j = 0; known[j]; j++) nh_text_append(list, sizeof list, ", ", "%s", known[j]);
  return nh_spec_fail(c, s, "unknown setting '%s' (known here: %s)", config_setting_name(s), list);
}

/* The top-level settings a spec of the kind takes (studies/settings.c): any other is refused. */
static int check_kind_settings(const nh_spec_ctx *c, const config_setting_t *root, nh_study_kind kind) {
  const char *known[64];
  int n = 0;
  for (const nh_setting *d = nh_settings; d->name && n < 63; d++)
    if (nh_setting_of_kind(d, nh_study_kinds[kind])) known[n++] = d->name;
  known[n] = NULL;
  return nh_spec_members(c, root, known);
}

/* "--set path=[a, b, ...]": a list of numbers (an array of floats) or of "strings" replaces the
 * setting. */
static int set_list(config_setting_t *parent, const char *leaf, const char *ov, const char *val, char *err,
                    size_t errlen) {
  const size_t len = strlen(val);
  if (len < 2 || val[len - 1] != ']') {
    snprintf(err, errlen, "--set '%s': a list is [a, b, ...], closed by ']'", ov);
    return -1;
  }
  if (config_setting_get_member(parent, leaf)) config_setting_remove(parent, leaf);
  config_setting_t *list = config_setting_add(parent, leaf, CONFIG_TYPE_ARRAY);
  int strings = -1, ok = list != NULL;
  const char *p = val + 1;
  while (ok) { /* one item per pass: a number or a "string", then ',' or the closing ']' */
    while (*p == ' ') p++;
    if (*p == '"') {
      const char *close = strchr(p + 1, '"');
      ok = close && strings != 0;
      if (!ok) break;
      char *item = malloc((size_t)(close - p)); /* as long as it is: no string is cut */
      if (!item) {
        snprintf(err, errlen, "--set '%s': out of memory", ov);
        return -1;
      }
      snprintf(item, (size_t)(close - p), "%.*s", (int)(close - p - 1), p + 1);
      ok = config_setting_set_string_elem(list, -1, item) != NULL;
      free(item);
      strings = 1, p = close + 1;
    } else {
      char *end;
      const double x = strtod(p, &end);
      ok = end != p && strings != 1 && config_setting_set_float_elem(list, -1, x) != NULL;
      strings = 0, p = end;
    }
    while (ok && *p == ' ') p++;
    if (ok && *p == ']') break;
    ok = ok && *p == ',';
    p++;
  }
  if (!ok || p != val + len - 1) {
    snprintf(err, errlen, "--set '%s': a list holds numbers or \"strings\", separated by commas, e.g. h=[0.1,0.05]",
             ov);
    return -1;
  }
  return 0;
}

/* "--set path=value": numbers become int or float settings, [lists] arrays, anything else a
 * string. */
static int apply_override(config_t *cfg, const char *ov, char *err, size_t errlen) {
  const char *eq = strchr(ov, '=');
  if (!eq || eq == ov) {
    snprintf(err, errlen, "--set '%s': expected PATH=VALUE, e.g. ensemble.count=100", ov);
    return -1;
  }
  char path[NH_TEXT_NAME];
  if ((size_t)(eq - ov) >= sizeof path) {
    snprintf(err, errlen, "--set '%.40s...': the setting's path is longer than %zu characters", ov, sizeof path - 1);
    return -1;
  }
  snprintf(path, sizeof path, "%.*s", (int)(eq - ov), ov);
  const char *val = eq + 1;
  config_setting_t *parent = config_root_setting(cfg);
  char *leaf = strrchr(path, '.');
  if (leaf) {
    *leaf++ = '\0';
    parent = config_lookup(cfg, path);
    if (!parent || !config_setting_is_group(parent)) {
      snprintf(err, errlen, "--set '%s': no group '%s' in the spec", ov, path);
      return -1;
    }
  } else {
    leaf = path;
  }
  /* The two ways to give step sizes exclude each other: the form --set names replaces the other. */
  if (parent == config_root_setting(cfg)) {
    static const char *const h_form[] = {"h", NULL}, *const h0_form[] = {"h0", "halvings", NULL};
    const char *const *drop = strcmp(leaf, "h") == 0                                     ? h0_form
                              : strcmp(leaf, "h0") == 0 || strcmp(leaf, "halvings") == 0 ? h_form
                                                                                         : NULL;
    for (int i = 0; drop && drop[i]; i++)
      if (config_setting_get_member(parent, drop[i])) config_setting_remove(parent, drop[i]);
  }
  if (val[0] == '[') return set_list(parent, leaf, ov, val, err, errlen);
  /* A string as a spec writes it, in double quotes (--set 'norm="2"', 'initial="newmark"'): its
   * text, a string even where it reads as a number. */
  char quoted[NH_TEXT_LONG];
  const size_t vlen = strlen(val);
  const int is_quoted = vlen >= 2 && val[0] == '"' && val[vlen - 1] == '"' && vlen - 2 < sizeof quoted;
  if (is_quoted) snprintf(quoted, sizeof quoted, "%.*s", (int)(vlen - 2), val + 1), val = quoted;
  char *end;
  errno = 0;
  long long iv = strtoll(val, &end, 10);
  int type = (*val && !*end && !errno) ? CONFIG_TYPE_INT64 : CONFIG_TYPE_FLOAT;
  double fv = 0;
  if (type == CONFIG_TYPE_FLOAT) {
    fv = strtod(val, &end);
    if (!*val || *end) type = CONFIG_TYPE_STRING;
  }
  /* true and false are libconfig's booleans, as in a file (round_trip = true) */
  const int flag = strcmp(val, "true") == 0 ? 1 : strcmp(val, "false") == 0 ? 0 : -1;
  if (flag >= 0) type = CONFIG_TYPE_BOOL;
  if (is_quoted) type = CONFIG_TYPE_STRING;
  config_setting_t *s = config_setting_get_member(parent, leaf);
  if (s && config_setting_type(s) == CONFIG_TYPE_FLOAT && type == CONFIG_TYPE_INT64 && iv <= NH_EXACT_INTEGER &&
      iv >= -NH_EXACT_INTEGER) { /* beyond, the integer stays one: read exactly, or refused as inexact */
    type = CONFIG_TYPE_FLOAT;
    fv = (double)iv;
  }
  /* Replaced, not edited in place: a setting from --set has no line of the file, so messages
   * about its value name the --set argument, not the line it replaced. */
  if (s) config_setting_remove(parent, leaf), s = NULL;
  s = config_setting_add(parent, leaf, type);
  int ok = !s ? 0
           : type == CONFIG_TYPE_INT64 ? config_setting_set_int64(s, iv)
           : type == CONFIG_TYPE_FLOAT ? config_setting_set_float(s, fv)
           : type == CONFIG_TYPE_BOOL  ? config_setting_set_bool(s, flag)
                                       : config_setting_set_string(s, val);
  if (!ok) {
    snprintf(err, errlen, "--set '%s': cannot set '%s'", ov, leaf);
    return -1;
  }
  return 0;
}

static int load_system_params(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st);

static int load_system(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  const config_setting_t *s = nh_spec_require(c, root, "system");
  if (!s) return -1;
  if (config_setting_is_group(s)) /* written in the spec (studies/spec_system.c) */
    return nh_spec_defined_system(c, s, st) < 0 ? -1 : load_system_params(c, root, st);
  const char *name = config_setting_get_string(s);
  if (!name)
    return nh_spec_fail(c, s, "'system' must be a system's name, e.g. \"chaotic_particle\", or a definition { ... }");
  if (strncmp(name, "plugin:", 7) == 0)
    return nh_spec_plugin_system(c, s, c->file, name + 7, st) < 0 ? -1 : load_system_params(c, root, st);
  const nh_system_type *type = nh_system_type_find(name);
  if (!type) {
    char list[NH_TEXT_MESSAGE] = "", hint[NH_TEXT_MESSAGE];
    for (int i = 0; nh_system_types[i]; i++) nh_text_append(list, sizeof list, ", ", "%s", nh_system_types[i]->name);
    nh_system_suggest(name, hint, sizeof hint);
    return nh_spec_fail(c, s, "unknown system '%s'%s%s%s (systems: %s)", name, hint[0] ? ": did you mean " : "", hint,
                        hint[0] ? "?" : "", list);
  }
  if (nh_system_init(&st->sys, type) < 0) return nh_spec_fail(c, s, "system '%s': bad mass matrix", name);
  return load_system_params(c, root, st);
}

/* system_params replaces a value a preset of the initial conditions set: say so once, and name the
 * initial conditions by what they now are ("eps01 (eps=0)"), so that the results file does not
 * claim the preset's system (its exact solution or reference would be the preset's). */
static int note_preset_override(const nh_spec_ctx *c, const config_setting_t *p, nh_study *st, double preset_value,
                                double value) {
  const char *param = config_setting_name(p);
  int line = (int)config_setting_source_line(p);
  char at[NH_TEXT_PATH + NH_TEXT_NAME];
  if (line > 0) where(c, line, at, sizeof at);
  else snprintf(at, sizeof at, "%s: --set system_params.%s", c->file, param);
  fprintf(stderr, "%s: note: system_params %s = %g replaces the preset's %s = %g (initial condition '%s' kept)\n",
          at, param, value, param, preset_value, st->ic_names[0]);
  for (int i = 0; i < st->nic; i++) {
    char renamed[2 * NH_TEXT_NAME];
    snprintf(renamed, sizeof renamed, "%s (%s=%g)", st->ic_names[i], param, value);
    free(st->ic_names[i]);
    if (!(st->ic_names[i] = nh_spec_dup(renamed))) return nh_spec_out_of_memory(c);
  }
  free(st->initial); /* its own copy of ic_names[0] */
  return (st->initial = nh_spec_dup(st->ic_names[0])) ? 0 : nh_spec_out_of_memory(c);
}

static int load_system_params(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  const config_setting_t *params = config_setting_get_member(root, "system_params");
  if (!params) return 0;
  if (!config_setting_is_group(params))
    return nh_spec_fail(c, params, "'system_params' must be a group, e.g. { eps = 0.1; }");
  for (int i = 0; i < config_setting_length(params); i++) {
    const config_setting_t *p = config_setting_get_elem(params, (unsigned)i);
    double v;
    char msg[NH_TEXT_MESSAGE];
    if (get_number(c, p, &v) < 0) return -1;
    const int k = nh_system_param_index(&st->sys, config_setting_name(p));
    /* Called again after the initial conditions: a value that differs now was set by a preset. */
    if (k >= 0 && st->nic > 0 && st->sys.p[k] != v && note_preset_override(c, p, st, st->sys.p[k], v) < 0) return -1;
    if (nh_system_set_param(&st->sys, config_setting_name(p), v, msg, sizeof msg) != 0)
      return nh_spec_fail(c, p, "%s", msg); /* "system NAME: ..." */
  }
  return 0;
}

static size_t name_hash(const char *name) { return (size_t)nh_fnv1a(NH_FNV1A_BASIS, name, strlen(name)); }

/* The slot of name in the index: the one holding it, or the empty one where it would go. */
static int *name_slot(const name_index *x, char *const *names, const char *name) {
  size_t i = name_hash(name) & (x->cap - 1);
  while (x->slot[i] && strcmp(names[x->slot[i] - 1], name) != 0) i = (i + 1) & (x->cap - 1);
  return &x->slot[i];
}

/* Room in the index for one more method (rehashing st's n methods into a table twice as large when
 * it is half full): 0, or -1 if out of memory. */
static int name_index_reserve(name_index *x, const nh_study *st) {
  if (x->cap >= 2 * (size_t)(st->nmethods + 1)) return 0;
  name_index bigger = {NULL, x->cap ? 2 * x->cap : 64};
  if (!(bigger.slot = nh_calloc_array(bigger.cap, sizeof *bigger.slot))) return -1;
  for (int i = 0; i < st->nmethods; i++) *name_slot(&bigger, st->method_names, st->method_names[i]) = i + 1;
  free(x->slot);
  *x = bigger;
  return 0;
}

/* Adds a method unless an equal one (same canonical name) is there; returns its index, or -1 (out
 * of memory: m is freed). */
static int add_method(const nh_spec_ctx *c, nh_study *st, nh_method *m) {
  char name[NH_TEXT_CANONICAL];
  nh_method_format(m, name, sizeof name);
  if (name_index_reserve(c->names, st) < 0) {
    nh_method_free(m);
    return nh_spec_out_of_memory(c);
  }
  int *slot = name_slot(c->names, st->method_names, name);
  if (*slot) {
    nh_method_free(m);
    return *slot - 1;
  }
  nh_method **methods = realloc(st->methods, sizeof *st->methods * (size_t)(st->nmethods + 1));
  if (methods) st->methods = methods;
  char **names = methods ? realloc(st->method_names, sizeof *st->method_names * (size_t)(st->nmethods + 1)) : NULL;
  if (names) st->method_names = names;
  char *copy = names ? nh_spec_dup(name) : NULL;
  if (!copy) {
    nh_method_free(m);
    return nh_spec_out_of_memory(c);
  }
  st->methods[st->nmethods] = m;
  st->method_names[st->nmethods] = copy;
  *slot = st->nmethods + 1;
  return st->nmethods++;
}

static int load_methods(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  const config_setting_t *list = config_setting_get_member(root, "methods");
  if (!list && !config_setting_get_member(root, "grids")) return nh_spec_fail(c, root, "missing setting 'methods'");
  if (!list) return 0;
  if (!config_setting_is_aggregate(list) || config_setting_is_group(list))
    return nh_spec_fail(c, list, "'methods' must be a list of method strings, e.g. [\"rk4\"]");
  for (int i = 0; i < config_setting_length(list); i++) {
    const config_setting_t *s = config_setting_get_elem(list, (unsigned)i);
    const char *text = config_setting_get_string(s);
    char msg[NH_TEXT_MESSAGE];
    if (!text) return nh_spec_fail(c, s, "methods must be strings, e.g. \"nh_newmark(alpha=0.5)\"");
    nh_method *m = nh_method_parse(text, msg, sizeof msg);
    if (!m) return nh_spec_fail(c, s, "%s", msg);
    if (nh_method_applies(m, &st->sys, msg, sizeof msg) < 0) {
      nh_method_free(m);
      return nh_spec_fail(c, s, "%s", msg);
    }
    if (add_method(c, st, m) < 0) return -1;
  }
  return 0;
}

/* `labels = ( ["METHOD", "LABEL"], ... )`: the label figures show for a method of the study (issue 49
 * item 5), in gnuplot's enhanced text ("Ψ^{0.1}_h"); the others keep their automatic label (""
 * here). The plots read a file's labels as double-quoted words, so a label holds no '"'. */
static int load_labels(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  const config_setting_t *list = config_setting_get_member(root, "labels");
  if (!list) return 0;
  const char *usage = "'labels' must be a list of [\"method\", \"label\"] pairs, e.g. ( [\"rk4\", \"RK4\"] )";
  if (!config_setting_is_list(list)) return nh_spec_fail(c, list, "%s", usage);
  if (!(st->method_labels = calloc((size_t)st->nmethods, sizeof(char *)))) return nh_spec_out_of_memory(c);
  for (int e = 0; e < config_setting_length(list); e++) {
    const config_setting_t *pair = config_setting_get_elem(list, (unsigned)e);
    const char *text = NULL, *label = NULL;
    if (config_setting_is_aggregate(pair) && !config_setting_is_group(pair) && config_setting_length(pair) == 2)
      text = config_setting_get_string_elem(pair, 0), label = config_setting_get_string_elem(pair, 1);
    if (!text || !label) return nh_spec_fail(c, pair, "%s", usage);
    const int found = nh_spec_method_index(c, pair, st, text, "a label for");
    if (found < 0) return -1;
    const char *name = st->method_names[found];
    if (st->method_labels[found]) return nh_spec_fail(c, pair, "a second label for '%s'", name);
    const size_t len = strlen(label);
    size_t bad = 0;
    while (bad < len && label[bad] != '"' && (unsigned char)label[bad] >= 0x20 && label[bad] != 0x7f) bad++;
    if (len == 0 || len > 200 || bad < len)
      return nh_spec_fail(c, pair,
                          "the label '%s' for %s: a label is 1 to 200 characters, without '\"' or control characters",
                          label, name);
    if (!(st->method_labels[found] = nh_spec_dup(label))) return nh_spec_out_of_memory(c);
  }
  return 0;
}

/* One note per distinct reason for the grid points that were skipped, listing the points:
 * "FILE:LINE: note: 4 grid points (beta, beta2) skipped: (0.1, 0.4), ...: REASON". why[p] is the
 * reason of point p (row-major over the grid), empty when the point runs. */
static void note_skipped_points(const nh_spec_ctx *c, const config_setting_t *g, const nh_grid *grid,
                                char (*why)[NH_TEXT_MESSAGE]) {
  const int n0 = grid->nvalues[0], n1 = grid->nvalues[1], np = n0 * n1;
  for (int p = 0; p < np; p++) {
    if (!why[p][0]) continue;
    int count = 0;
    char points[NH_TEXT_MESSAGE] = "";
    for (int q = p; q < np; q++) {
      if (!why[q][0] || strcmp(why[q], why[p]) != 0) continue;
      nh_text_append(points, sizeof points, ", ", "(%g, %g)", grid->values[0][q / n1], grid->values[1][q % n1]);
      count++;
      if (q != p) why[q][0] = '\0';
    }
    char at[NH_TEXT_PATH + 16];
    fprintf(stderr, "%s: note: %d grid point%s (%s, %s) skipped: %s: %s\n",
            where(c, config_setting_source_line(g), at, sizeof at), count, count == 1 ? "" : "s", grid->param[0],
            grid->param[1], points, why[p]);
  }
}

static int load_grid(const nh_spec_ctx *c, const config_setting_t *g, nh_study *st, nh_grid *grid) {
  const config_setting_t *ms = nh_spec_require(c, g, "method");
  if (!ms) return -1;
  const char *text = config_setting_get_string(ms);
  char msg[NH_TEXT_MESSAGE];
  if (!text) return nh_spec_fail(c, ms, "grid 'method' must be a string");
  nh_method *tmpl = nh_method_parse(text, msg, sizeof msg);
  if (!tmpl) return nh_spec_fail(c, ms, "%s", msg);
  if (nh_method_applies(tmpl, &st->sys, msg, sizeof msg) < 0) {
    nh_method_free(tmpl);
    return nh_spec_fail(c, ms, "%s", msg);
  }
  char name[NH_TEXT_CANONICAL];
  nh_method_format(tmpl, name, sizeof name);
  int axes = 0, rc = -1;
  if (!(grid->template_name = nh_spec_dup(name))) {
    nh_spec_out_of_memory(c);
    goto out;
  }
  for (int i = 0; i < config_setting_length(g); i++) {
    const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
    const char *pname = config_setting_name(s);
    if (strcmp(pname, "method") == 0) continue;
    const nh_method *owner = nh_method_param_owner(tmpl, pname);
    if (!owner) {
      nh_spec_fail(c, s, "grid: method '%s' has no parameter '%s'", name, pname);
      goto out;
    }
    if (axes == 2) {
      nh_spec_fail(c, s, "grid: at most two parameters (a parameter-pair grid); '%s' is a third", pname);
      goto out;
    }
    if (!(grid->param[axes] = nh_spec_dup(pname))) {
      nh_spec_out_of_memory(c);
      goto out;
    }
    if (get_numbers(c, s, &grid->values[axes], &grid->nvalues[axes]) < 0) goto out;
    /* Out-of-range values are errors in the spec; invalid combinations are skipped below. */
    for (int j = 0; j < grid->nvalues[axes]; j++)
      if (nh_method_check_param(owner, pname, grid->values[axes][j], msg, sizeof msg) != 0) {
        nh_spec_fail(c, s, "grid: %s: %s", nh_method_type_name(owner), msg);
        goto out;
      }
    axes++;
  }
  if (axes != 2) {
    nh_spec_fail(c, g, "grid over '%s' needs two parameter lists, e.g. beta = [0.0, 0.1]; beta2 = [0.0, 0.1];", name);
    goto out;
  }
  int n0 = grid->nvalues[0], n1 = grid->nvalues[1];
  /* Counted in 64 bits before anything is allocated: each point is a method (and a note's line). */
  if ((long long)n0 * n1 > NH_MAX_GRID_POINTS) {
    nh_spec_fail(c, g, "grid over '%s' has %d x %d = %lld points; at most %d (e.g. a 100 x 100 map)", name, n0, n1,
                 (long long)n0 * n1, NH_MAX_GRID_POINTS);
    goto out;
  }
  grid->method_index = malloc(sizeof(int) * (size_t)(n0 * n1));
  char (*why)[NH_TEXT_MESSAGE] = malloc(sizeof *why * (size_t)(n0 * n1)); /* per skipped point, its reason */
  if (!grid->method_index || !why) {
    free(why);
    nh_spec_out_of_memory(c);
    goto out;
  }
  for (int i = 0; i < n0; i++)
    for (int j = 0; j < n1; j++) {
      int *slot = &grid->method_index[i * n1 + j];
      *slot = -1;
      why[i * n1 + j][0] = '\0';
      errno = 0;
      nh_method *a = nh_method_with_param(tmpl, grid->param[0], grid->values[0][i], msg, sizeof msg);
      nh_method *b = a ? nh_method_with_param(a, grid->param[1], grid->values[1][j], msg, sizeof msg) : NULL;
      nh_method_free(a);
      if (!b && errno == ENOMEM) { /* not a point to skip: the load fails */
        free(why);
        nh_spec_out_of_memory(c);
        goto out;
      }
      if (!b) {
        /* The reason without the point's own method string, so that points skipped for the same
         * reason are noted together. */
        char *own = strstr(msg, " in method '");
        if (own) *own = '\0';
        snprintf(why[i * n1 + j], NH_TEXT_MESSAGE, "%s", msg[0] ? msg : "invalid");
        continue;
      }
      if ((*slot = add_method(c, st, b)) < 0) {
        free(why);
        goto out;
      }
    }
  note_skipped_points(c, g, grid, why);
  free(why);
  rc = 0;
out:
  nh_method_free(tmpl);
  return rc;
}

static int load_grids(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  const config_setting_t *grids = config_setting_get_member(root, "grids");
  if (!grids) return 0;
  if (!config_setting_is_list(grids))
    return nh_spec_fail(c, grids,
                        "'grids' must be a list of groups: ( { method = \"...\"; beta = [...]; beta2 = [...]; } )");
  const int ngrids = config_setting_length(grids);
  if (ngrids > 0 && !(st->grids = calloc((size_t)ngrids, sizeof *st->grids))) return nh_spec_out_of_memory(c);
  st->ngrids = ngrids;
  for (int i = 0; i < st->ngrids; i++) {
    const config_setting_t *g = config_setting_get_elem(grids, (unsigned)i);
    if (!config_setting_is_group(g)) return nh_spec_fail(c, g, "each grid must be a group { method = ...; ... }");
    if (load_grid(c, g, st, &st->grids[i]) < 0) return -1;
  }
  return 0;
}

/* How far off D a given initial state may lie, max over the constraints of |A(q)v + b|: round-off
 * in typed digits, not a state off D, which no integrator here would keep to (README, `initial`). */
#define ON_D_TOL 1e-12

/* One initial condition: a preset name, "default", or { q = [...]; v = [...]; } on D. */
static int load_one_initial(const nh_spec_ctx *c, const config_setting_t *ic, nh_study *st, nh_state *x, char **name) {
  static const char *const known[] = {"q", "v", NULL};
  nh_system_default_state(&st->sys, x);
  if (config_setting_type(ic) == CONFIG_TYPE_STRING) {
    char msg[NH_TEXT_MESSAGE];
    if (!(*name = nh_spec_dup(config_setting_get_string(ic)))) return nh_spec_out_of_memory(c);
    if (strcmp(*name, "default") == 0) return 0;
    if (nh_system_apply_preset(&st->sys, *name, x, msg, sizeof msg) < 0) return nh_spec_fail(c, ic, "%s", msg);
    /* A paper's printed initial condition may lie off D on purpose (e.g. the CVT's 4-digit v0). */
    double r = nh_constraint_residual(&st->sys, x->q, x->v);
    char at[NH_TEXT_PATH + 16];
    if (r > ON_D_TOL)
      fprintf(stderr, "%s: note: preset '%s' is off the constraint distribution: |A(q)v + b| = %.3g\n",
              where(c, config_setting_source_line(ic), at, sizeof at), *name, r);
    return 0;
  }
  if (!(*name = nh_spec_dup("given"))) return nh_spec_out_of_memory(c);
  if (!config_setting_is_group(ic))
    return nh_spec_fail(c, ic, "'initial' must be a preset name or a group { q = [...]; v = [...]; }");
  if (nh_spec_members(c, ic, known) < 0) return -1;
  const char *names[] = {"q", "v"};
  double *dest[] = {x->q, x->v};
  for (int k = 0; k < 2; k++) {
    const config_setting_t *s = nh_spec_require(c, ic, names[k]);
    double *vals = NULL;
    int n = 0;
    if (!s || get_numbers(c, s, &vals, &n) < 0) {
      free(vals);
      return -1;
    }
    if (n != st->sys.n) {
      free(vals);
      return nh_spec_fail(c, s, "initial %s has %d entries; system %s has n = %d", names[k], n,
                          nh_system_name(&st->sys), st->sys.n);
    }
    memcpy(dest[k], vals, sizeof(double) * (size_t)n);
    free(vals);
  }
  double r = nh_constraint_residual(&st->sys, x->q, x->v);
  if (r > ON_D_TOL)
    return nh_spec_fail(c, ic, "initial state is not on the constraint distribution D: |A(q)v + b| = %.3g", r);
  return 0;
}

/* `initial`: one initial condition or a list ( ... ) / [ ... ] of them; default: the system's. */
static int load_initial(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  const config_setting_t *ic = config_setting_get_member(root, "initial");
  int list = ic && (config_setting_is_list(ic) || config_setting_is_array(ic));
  st->nic = list ? config_setting_length(ic) : 1;
  if (st->nic == 0) return nh_spec_fail(c, ic, "'initial' is an empty list");
  st->ics = calloc((size_t)st->nic, sizeof *st->ics);
  st->ic_names = calloc((size_t)st->nic, sizeof *st->ic_names);
  if (!st->ics || !st->ic_names) return nh_spec_out_of_memory(c);
  double params0[NH_MAX_PARAMS];
  for (int i = 0; i < st->nic; i++) {
    if (!ic) {
      nh_system_default_state(&st->sys, &st->ics[0]);
      if (!(st->ic_names[0] = nh_spec_dup("default"))) return nh_spec_out_of_memory(c);
    } else if (load_one_initial(c, list ? config_setting_get_elem(ic, (unsigned)i) : ic, st, &st->ics[i],
                                &st->ic_names[i]) < 0) {
      return -1;
    }
    /* One study, one system: presets of a list must agree on the parameters they set. */
    if (i == 0) memcpy(params0, st->sys.p, sizeof params0);
    else if (memcmp(params0, st->sys.p, sizeof params0) != 0)
      return nh_spec_fail(c, config_setting_get_elem(ic, (unsigned)i),
                          "initial condition '%s' sets other system parameters than '%s'; run them as separate studies",
                          st->ic_names[i], st->ic_names[0]);
  }
  st->x0 = st->ics[0];
  return (st->initial = nh_spec_dup(st->ic_names[0])) ? 0 : nh_spec_out_of_memory(c);
}

int nh_spec_initial(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  /* A preset may set system parameters; system_params given in the spec override them. */
  return load_initial(c, root, st) < 0 || load_system_params(c, root, st) < 0 ? -1 : 0;
}

/* A run's samples are counted in int: steps / sample_every + 1 must fit. 0, or -1 with a message
 * at sample_every (or the root). */
int nh_spec_sample_count(const nh_spec_ctx *c, const config_setting_t *root, long steps, int every) {
  if (steps / every < INT_MAX) return 0;
  const config_setting_t *s = config_setting_get_member(root, "sample_every");
  return nh_spec_fail(c, s ? s : root,
                      "%ld steps sampled every %d make more than %d samples per run; sample less often", steps, every,
                      INT_MAX - 1);
}

/* The setting the step sizes came from, for messages: h, else h0 (the root only if neither). */
static const config_setting_t *steps_setting(const config_setting_t *root) {
  const config_setting_t *hs = config_setting_get_member(root, "h");
  if (!hs) hs = config_setting_get_member(root, "h0");
  return hs ? hs : root;
}

/* `h = H`: one step size, positive, as st's only one (h[0], nh = 1). */
int nh_spec_one_step(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  double h;
  if (get_positive(c, root, "h", &h) < 0) return -1;
  if (!(st->h = malloc(sizeof(double)))) return nh_spec_out_of_memory(c);
  st->h[0] = h, st->nh = 1;
  return 0;
}

/* `h = [...]` or `h0` and `halvings` (h0, h0/2, …): the step sizes, positive, distinct. */
int nh_spec_steps(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st, int min_count) {
  const config_setting_t *hs = config_setting_get_member(root, "h");
  /* Both ways at once would silently drop one (and record an override that did nothing). */
  const char *other = config_setting_get_member(root, "h0")         ? "h0"
                      : config_setting_get_member(root, "halvings") ? "halvings"
                                                                    : NULL;
  if (hs && other)
    return nh_spec_fail(c, config_setting_get_member(root, other),
                        "'%s' and 'h' both give the step sizes; keep one ('h' = a list, or 'h0' with 'halvings')",
                        other);
  if (hs && config_setting_type(hs) != CONFIG_TYPE_ARRAY && config_setting_type(hs) != CONFIG_TYPE_LIST) {
    if (nh_spec_one_step(c, root, st) < 0) return -1;
  } else if (hs) {
    if (get_numbers(c, hs, &st->h, &st->nh) < 0) return -1;
    for (int i = 0; i < st->nh; i++)
      if (!(st->h[i] > 0)) /* finite: get_number */
        return nh_spec_fail(c, hs, "step sizes must be positive; h[%d] = %g", i, st->h[i]);
  } else {
    double h0;
    int halvings;
    if (!config_setting_get_member(root, "h0"))
      return nh_spec_fail(c, root, "missing setting 'h' (a list of step sizes) or 'h0' and 'halvings'");
    if (get_positive(c, root, "h0", &h0) < 0 || nh_spec_count(c, root, "halvings", &halvings) < 0) return -1;
    if (!(st->h = malloc(sizeof(double) * (size_t)(halvings + 1)))) return nh_spec_out_of_memory(c);
    st->nh = halvings + 1;
    for (int i = 0; i < st->nh; i++) st->h[i] = ldexp(h0, -i);
  }
  if (st->nh < min_count)
    return nh_spec_fail(c, steps_setting(root), "this study needs at least %d step sizes", min_count);
  for (int i = 0; i < st->nh; i++)
    for (int j = 0; j < i; j++)
      if (st->h[i] == st->h[j])
        return nh_spec_fail(c, steps_setting(root), "step size h = %g is listed twice", st->h[i]);
  return 0;
}

/* T must be a whole number of steps of h, and at most 9e15 of them (below 2^53, where every whole
 * number of steps is exact in a double); a refusal said at setting s, T and h as typed (shortest
 * round-trip form). */
static int nh_spec_step_count(const nh_spec_ctx *c, const config_setting_t *s, double T, double h) {
  const double steps = T / h;
  const int too_many = steps > 9.0e15;
  if (!too_many && !(fabs(steps - round(steps)) > 1e-9 * steps)) return 0;
  char t[NH_TEXT_NUMBER], hh[NH_TEXT_NUMBER];
  nh_format_double(t, sizeof t, T), nh_format_double(hh, sizeof hh, h);
  if (too_many) return nh_spec_fail(c, s, "T = %s makes more than 9e15 steps of h = %s", t, hh);
  return nh_spec_fail(c, s, "T = %s is not a whole number of steps of h = %s", t, hh);
}

/* T must be a whole number of steps of every h. */
int nh_spec_whole_steps(const nh_spec_ctx *c, const config_setting_t *root, const nh_study *st) {
  for (int i = 0; i < st->nh; i++)
    if (nh_spec_step_count(c, steps_setting(root), st->T, st->h[i]) < 0) return -1;
  return 0;
}

/* `norm = "max"` (default) or `"2"`. */
int nh_spec_norm(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  const config_setting_t *s = config_setting_get_member(root, "norm");
  st->norm = NH_NORM_MAX;
  if (!s) return 0;
  const char *v = config_setting_get_string(s);
  int two = config_setting_type(s) == CONFIG_TYPE_INT || config_setting_type(s) == CONFIG_TYPE_INT64;
  if (two && config_setting_get_int64(s) == 2) return st->norm = NH_NORM_2, 0; /* --set norm=2 */
  if (v && strcmp(v, "max") == 0) return 0;
  if (v && strcmp(v, "2") == 0) return st->norm = NH_NORM_2, 0;
  return nh_spec_fail(c, s, "norm = '%s': expected \"max\" or \"2\"", v ? v : "(not a string)");
}

/* `observables = ["energy", ...]`: names from the registry (`nhbench list observables`). */
int nh_spec_observables(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  const config_setting_t *list = config_setting_get_member(root, "observables");
  if (!list) return 0;
  if (!config_setting_is_aggregate(list) || config_setting_is_group(list))
    return nh_spec_fail(c, list, "'observables' must be a list of names, e.g. [\"energy\", \"error_q_2\"]");
  st->nobs = config_setting_length(list);
  if (!(st->obs = nh_calloc_array((size_t)st->nobs, sizeof *st->obs))) return nh_spec_out_of_memory(c);
  for (int i = 0; i < st->nobs; i++) {
    const config_setting_t *s = config_setting_get_elem(list, (unsigned)i);
    const char *name = config_setting_get_string(s);
    st->obs[i] = name ? nh_observable_find(name) : NULL;
    if (!st->obs[i]) {
      char known[NH_TEXT_MESSAGE] = "";
      for (int j = 0; nh_observables[j]; j++) nh_text_append(known, sizeof known, ", ", "%s", nh_observables[j]->name);
      return nh_spec_fail(c, s, "unknown observable '%s' (observables: %s)", name ? name : "(not a string)", known);
    }
    for (int j = 0; j < i; j++)
      if (st->obs[j] == st->obs[i]) return nh_spec_fail(c, s, "observable '%s' is listed twice", name);
  }
  return 0;
}

/* Optional settings with defaults. */
/* A real setting, its descriptor's default when absent (studies/settings.c). */
int nh_spec_real(const nh_spec_ctx *c, const config_setting_t *root, const char *name, double *out) {
  const config_setting_t *s = config_setting_get_member(root, name);
  *out = nh_setting_named(name)->def;
  return s ? get_number(c, s, out) : 0;
}

/* A number, or "auto" (the default): *is_auto tells which; *out is def for "auto". */
static int get_number_or_auto(const nh_spec_ctx *c, const config_setting_t *root, const char *name, double def,
                              double *out, int *is_auto) {
  const config_setting_t *s = config_setting_get_member(root, name);
  const char *text = s ? config_setting_get_string(s) : NULL;
  *out = def, *is_auto = !s || (text && strcmp(text, "auto") == 0);
  if (*is_auto) return 0;
  if (text) return nh_spec_fail(c, s, "'%s' must be a number or \"auto\", not \"%.60s\"", name, text);
  return get_number(c, s, out);
}

int nh_spec_fit(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  if (nh_spec_count(c, root, "fit_points", &st->fit_points) < 0) return -1;
  if (get_number_or_auto(c, root, "error_floor", 0, &st->error_floor, &st->error_floor_auto) < 0) return -1;
  if (st->error_floor >= 0) return 0; /* finite: get_number */
  return nh_spec_fail(c, config_setting_get_member(root, "error_floor"),
                      "error_floor = %g must be a number >= 0 or \"auto\"", st->error_floor);
}

/* divergence, default 1e3 (README), for the studies that sample their runs. */
int nh_spec_divergence(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  if (nh_spec_real(c, root, "divergence", &st->divergence) < 0 || !(st->divergence > 0))
    return nh_spec_fail(c, config_setting_get_member(root, "divergence"),
                        "divergence must be a positive number (default 1e3)");
  return 0;
}

/* reference_tol, default "auto" from 1e-13 (README), for every kind of study. */
int nh_spec_reference_tol(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  if (get_number_or_auto(c, root, "reference_tol", 1e-13, &st->reference_tol, &st->reference_tol_auto) < 0) return -1;
  if (st->reference_tol >= 1e-16 && st->reference_tol <= 1e-3) return 0;
  return nh_spec_fail(c, config_setting_get_member(root, "reference_tol"),
                      "reference_tol = %g must lie in [1e-16, 1e-3]", st->reference_tol);
}

/* A switch, true or false; def when absent. */
int nh_spec_flag(const nh_spec_ctx *c, const config_setting_t *group, const char *name, int def, int *out) {
  const config_setting_t *s = config_setting_get_member(group, name);
  if (!s) return *out = def, 0;
  if (config_setting_type(s) != CONFIG_TYPE_BOOL) return nh_spec_fail(c, s, "%s must be true or false", name);
  *out = config_setting_get_bool(s);
  return 0;
}

/* `ensemble = { count = N; energy = E; seed = S; }`: N random states on D at energy E, drawn by
 * the system's sampler from the streams (S, i). */
/* count states on D at the study's energy into x (nh_draw_states); a failure said at setting e. */
static int draw_states(const nh_spec_ctx *c, const config_setting_t *e, const nh_study *st, int count, nh_state *x) {
  const int rc = nh_draw_states(&st->sys, count, st->energy, st->seed, x);
  if (rc == NH_DRAW_NO_MEMORY) return nh_spec_out_of_memory(c);
  if (rc < 0)
    return nh_spec_fail(c, e,
                        "no state of %s on D at energy %g in the sample box (the energy must exceed the "
                        "potential's minimum there by the kinetic margin; spec/newmark.md 6 A10)",
                        nh_system_name(&st->sys), st->energy);
  return 0;
}

/* The ensemble's seed, a whole number >= 0 read exactly: any 64-bit integer (L suffix), a real
 * only below 2^53 (where 2^53 + 1 would already read as 2^53). */
static int get_seed(const nh_spec_ctx *c, const config_setting_t *s, uint64_t *seed) {
  if (config_setting_type(s) == CONFIG_TYPE_INT64 && config_setting_get_int64(s) >= 0) {
    *seed = (uint64_t)config_setting_get_int64(s);
    return 0;
  }
  double v;
  if (get_number(c, s, &v) < 0) return -1;
  if (v < 0 || v != floor(v) || v >= NH_EXACT_INTEGER)
    return nh_spec_fail(c, s, "seed = %.17g must be a whole number >= 0 (from 2^53 on, an integer with an L suffix)",
                        v);
  *seed = (uint64_t)v;
  return 0;
}

int nh_spec_random_states(const nh_spec_ctx *c, const config_setting_t *ens, nh_study *st) {
  static const char *const known_ens[] = {"count", "energy", "seed", NULL};
  if (!config_setting_is_group(ens))
    return nh_spec_fail(c, ens, "'ensemble' must be a group { count = ...; energy = ...; seed = ...; }");
  if (nh_spec_members(c, ens, known_ens) < 0) return -1;
  if (nh_spec_whole(c, ens, "count", 1, 1000000, NH_SPEC_REQUIRED, &st->count) < 0) return -1;
  const config_setting_t *e = nh_spec_require(c, ens, "energy");
  if (!e || get_number(c, e, &st->energy) < 0) return -1;
  const config_setting_t *sd = nh_spec_require(c, ens, "seed");
  if (!sd || get_seed(c, sd, &st->seed) < 0) return -1;
  st->random_ics = 1;
  if (!nh_system_has_own_sampler(&st->sys) &&
      (nh_system_features(&st->sys) & NH_SYS_AFFINE_CONSTRAINTS || nh_has_holonomic(&st->sys)))
    return nh_spec_fail(c, ens, "system %s has no random sampler on D: %s", nh_system_name(&st->sys),
                        nh_system_sampler_doc(&st->sys) ? nh_system_sampler_doc(&st->sys)
                                                        : "affine or holonomic constraints");
  /* Pre-flight: the first state is drawn now (the run draws it again, the same from its stream), so
   * that an energy no state reaches (e.g. below min V) is a bad spec, not a run that fails later. */
  nh_state first;
  return draw_states(c, e, st, 1, &first);
}

/* Random initial conditions as the study's `initial` list: "random 0", "random 1", … */
int nh_spec_random_initials(const nh_spec_ctx *c, const config_setting_t *ens, nh_study *st) {
  if (nh_spec_random_states(c, ens, st) < 0) return -1;
  st->nic = st->count;
  st->ics = calloc((size_t)st->nic, sizeof *st->ics);
  st->ic_names = calloc((size_t)st->nic, sizeof *st->ic_names);
  if (!st->ics || !st->ic_names) return nh_spec_out_of_memory(c);
  if (draw_states(c, ens, st, st->nic, st->ics) < 0) return -1;
  for (int i = 0; i < st->nic; i++) {
    char name[NH_TEXT_NAME];
    snprintf(name, sizeof name, "random %d", i);
    if (!(st->ic_names[i] = nh_spec_dup(name))) return nh_spec_out_of_memory(c);
  }
  st->x0 = st->ics[0];
  return (st->initial = nh_spec_dup(st->ic_names[0])) ? 0 : nh_spec_out_of_memory(c);
}

/* A start where the damping is singular (lane_emden at t0 = 0: alpha = 2/s at s = 0): a study that
 * measures errors needs its truth from the system's exact solution, since the rk8pd reference
 * evaluates alpha at its start (issue 46 item 5). Ensembles measure no error. The methods are
 * checked by nh_method_applies. */
static int check_singular_start(const nh_spec_ctx *c, const config_setting_t *root, const nh_study *st) {
  if (st->kind == NH_STUDY_ENSEMBLE || isfinite(nh_damping(&st->sys, 0))) return 0;
  for (int i = 0; i < st->nic; i++) {
    nh_state x;
    if (nh_exact_solution(&st->sys, &st->ics[i], st->T, &x) == 0) continue;
    return nh_spec_fail(
        c, config_setting_get_member(root, "system"),
        "%s: alpha(t) is singular at the start t = 0 (alpha(0) = %g) and no exact solution passes through "
        "initial condition %d ('%s'): the rk8pd reference cannot start there (start where alpha is "
        "finite, or from a state an exact solution covers: `nhbench list systems %s`)",
        nh_system_name(&st->sys), nh_damping(&st->sys, 0), i, st->ic_names[i], nh_system_name(&st->sys));
  }
  return 0;
}

static int load_kind(const nh_spec_ctx *c, const config_setting_t *root, nh_study *st) {
  const config_setting_t *kind = nh_spec_require(c, root, "study");
  if (!kind) return -1;
  const char *k = config_setting_get_string(kind);
  const nh_study_kind_type *named = nh_study_kind_named(k);
  if (named) return st->kind = named->kind, 0;
  char names[NH_TEXT_MESSAGE] = "";
  for (int i = 0; i < NH_STUDY_KINDS; i++)
    nh_text_append(names, sizeof names, i == NH_STUDY_KINDS - 1 ? " or " : ", ", "\"%s\"", nh_study_kinds[i]->name);
  return nh_spec_fail(c, kind, "study = '%s': expected %s", k ? k : "(not a string)", names);
}

/* nh_config_syntax_error's message, the error's place given as "FILE:LINE" (at). */
static void syntax_error(const char *at, const char *text, const config_t *cfg, char *err, size_t errlen) {
  const int line = config_error_line(cfg);
  char near[NH_TEXT_MESSAGE] = "";
  const char *p = text;
  for (int l = 1; p && l < line; l++) p = (p = strchr(p, '\n')) ? p + 1 : NULL;
  if (p) {
    while (*p == ' ' || *p == '\t') p++;
    const size_t n = strcspn(p, "\r\n");
    snprintf(near, sizeof near, " in `%.*s%s`", (int)(n > 80 ? 77 : n), p, n > 80 ? "..." : "");
  }
  snprintf(err, errlen,
           "%s: %s%s (a setting is NAME = VALUE; strings in \"double quotes\", lists [a, b] with no "
           "trailing comma, groups { ... }; an error may show on the line after the one that causes it)",
           at, config_error_text(cfg), near);
}

void nh_config_syntax_error(const char *path, const char *text, const config_t *cfg, char *err, size_t errlen) {
  char at[NH_TEXT_PATH + 16];
  snprintf(at, sizeof at, "%s:%d", path, config_error_line(cfg));
  syntax_error(at, text, cfg, err, errlen);
}

int nh_study_load(const char *path, const char *const *overrides, int noverrides, nh_study *st,
                  char *err, size_t errlen) {
  memset(st, 0, sizeof *st);
  nh_spec_source src;
  name_index names = {NULL, 0};
  nh_spec_ctx c = {path, NULL, err, errlen, &src, &names};
  config_t cfg;
  config_init(&cfg);
  int rc = -1;
  if (!(st->spec_file = nh_spec_dup(path))) {
    memset(&src, 0, sizeof src);
    nh_spec_out_of_memory(&c);
    goto done;
  }
  /* The text the run is made from, includes expanded and every file's integers checked. */
  if (nh_spec_source_read(path, &src, err, errlen) < 0) goto done;
  st->spec_text = src.text, src.text = NULL;
  c.text = st->spec_text;
  if (!config_read_string(&cfg, st->spec_text)) {
    char at[NH_TEXT_PATH + 16];
    syntax_error(where(&c, config_error_line(&cfg), at, sizeof at), st->spec_text, &cfg, err, errlen);
    goto done;
  }
  size_t ovlen = 1;
  for (int i = 0; i < noverrides; i++) ovlen += strlen(overrides[i]) + 1;
  if (!(st->overrides = calloc(ovlen, 1))) {
    nh_spec_out_of_memory(&c);
    goto done;
  }
  for (int i = 0; i < noverrides; i++) {
    if (apply_override(&cfg, overrides[i], err, errlen) < 0) goto done;
    strcat(st->overrides, i ? " " : "");
    strcat(st->overrides, overrides[i]);
  }
  const config_setting_t *root = config_root_setting(&cfg);
  if (load_kind(&c, root, st) < 0 || load_system(&c, root, st) < 0 || get_positive(&c, root, "T", &st->T) < 0)
    goto done;
  /* The kind's own settings (its table's load), each refused unless the kind takes it. */
  const nh_study_kind_type *kind = nh_study_kinds[st->kind];
  if (check_kind_settings(&c, root, st->kind) < 0 || kind->load(&c, root, st) < 0 ||
      check_singular_start(&c, root, st) < 0)
    goto done;
  if (load_methods(&c, root, st) < 0) goto done;
  st->nprimary = st->nmethods;
  if (load_grids(&c, root, st) < 0) goto done;
  if (st->nmethods == 0) {
    nh_spec_fail(&c, root, "no methods to run");
    goto done;
  }
  if (load_labels(&c, root, st) < 0) goto done;
  if (kind->load_with_methods && kind->load_with_methods(&c, root, st) < 0) goto done;
  rc = 0;
done:
  st->spec_inputs = src.files, st->nspec_inputs = src.nfiles, src.files = NULL, src.nfiles = 0;
  nh_spec_source_free(&src);
  free(names.slot);
  config_destroy(&cfg);
  return rc;
}

void nh_study_free(nh_study *st) {
  for (int i = 0; i < st->nmethods; i++) {
    nh_method_free(st->methods[i]);
    free(st->method_names[i]);
  }
  for (int i = 0; i < st->ngrids; i++) {
    nh_grid *g = &st->grids[i];
    free(g->template_name);
    for (int a = 0; a < 2; a++) free(g->param[a]), free(g->values[a]);
    free(g->method_index);
  }
  for (int i = 0; st->order_reason && i < st->nmethods; i++) free(st->order_reason[i]);
  free(st->order_reason);
  for (int i = 0; st->method_labels && i < st->nmethods; i++) free(st->method_labels[i]);
  free(st->method_labels);
  free(st->order_expected);
  free(st->initial);
  for (int i = 0; st->ic_names && i < st->nic; i++) free(st->ic_names[i]);
  free(st->ic_names);
  free(st->ics);
  free(st->obs);
  free(st->grids);
  free(st->methods);
  free(st->method_names);
  free(st->h);
  for (int i = 0; i < st->nspec_inputs; i++) free(st->spec_inputs[i]);
  free(st->spec_inputs);
  free(st->spec_file);
  free(st->spec_text);
  free(st->overrides);
  /* Last: the system's table (st->sys.type) lives in them. */
  nh_defined_system_free(st->defined);
  nh_system_plugin_close(st->plugin);
  memset(st, 0, sizeof *st);
}
