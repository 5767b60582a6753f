/* `system = { ... }`: a system written in the spec (issue 50, systems/defined.h), read into its
 * definition and built. Every refusal of the build is placed at the setting of the text it concerns
 * ("FILE:LINE: system: potential: unknown name 'zz' in ..."). A definition in a file of its own is
 * included where the group's body goes, `@include "my_system.sys"` on a line of its own between
 * `system = {` and `};`; its lines are then that file's. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/text.h"
#include "studies/config_read.h"
#include "studies/spec_load.h"
#include "systems/defined.h"
#include "systems/plugin.h"

static const char *const members[] = {"name",    "q",       "params",     "mass", "potential", "constraints", "affine",
                                      "damping", "forcing", "invariants", "q0",   "v0",        "sample_box",  NULL};

/* What a definition's texts are read into: strings it keeps until the build is done. */
typedef struct {
  char numbers[2 * NH_MAX_N * NH_MAX_N][NH_TEXT_NUMBER]; /* numbers written where text goes */
  int used;
} number_texts;

/* A text: a string, or a number (written back as the shortest text that reads as it). */
static int text_of(const nh_spec_ctx *c, const config_setting_t *s, number_texts *nt, nh_defined_text *out,
                   const char *what) {
  out->origin = s;
  if (config_setting_type(s) == CONFIG_TYPE_STRING) {
    out->text = config_setting_get_string(s);
    return 0;
  }
  double v;
  char why[NH_TEXT_MESSAGE];
  if (config_setting_is_aggregate(s) || config_setting_type(s) == CONFIG_TYPE_BOOL)
    return nh_spec_fail(c, s, "system: %s must be an expression in quotes or a number", what);
  if (nh_config_number(s, &v, why, sizeof why) < 0) return nh_spec_fail(c, s, "system: %s: %s", what, why);
  if (nt->used == (int)(sizeof nt->numbers / sizeof *nt->numbers))
    return nh_spec_fail(c, s, "system: too many numbers");
  nh_format_double(nt->numbers[nt->used], NH_TEXT_NUMBER, v);
  out->text = nt->numbers[nt->used++];
  return 0;
}

/* An array or list of exactly `count` texts (count < 0: any number up to -count, into *got). */
static int texts_of(const nh_spec_ctx *c, const config_setting_t *s, number_texts *nt, nh_defined_text *out, int count,
                    int *got, const char *what) {
  if (!config_setting_is_array(s) && !config_setting_is_list(s))
    return nh_spec_fail(c, s, "system: %s must be a list [\"...\", ...] of %d expressions", what,
                        count < 0 ? -count : count);
  const int len = config_setting_length(s);
  if (count >= 0 ? len != count : len > -count)
    return nh_spec_fail(c, s, "system: %s has %d entries; %s %d", what, len, count >= 0 ? "expected" : "at most",
                        count < 0 ? -count : count);
  for (int i = 0; i < len; i++)
    if (text_of(c, config_setting_get_elem(s, (unsigned)i), nt, &out[i], what) < 0) return -1;
  if (got) *got = len;
  return 0;
}

static int coordinates(const nh_spec_ctx *c, const config_setting_t *g, nh_system_definition *def) {
  const config_setting_t *q = nh_spec_require(c, g, "q");
  if (!q) return -1;
  def->coords_origin = q;
  const int n = config_setting_is_array(q) || config_setting_is_list(q) ? config_setting_length(q) : -1;
  if (n < 1 || n > NH_MAX_N)
    return nh_spec_fail(c, q, "system: q must be a list of 1 to %d coordinate names, e.g. [\"x\", \"y\"]", NH_MAX_N);
  def->n = n;
  for (int i = 0; i < n; i++)
    if (!(def->coords[i] = config_setting_get_string_elem(q, i)))
      return nh_spec_fail(c, config_setting_get_elem(q, (unsigned)i), "system: q's entries must be names in quotes");
  return 0;
}

static int parameters(const nh_spec_ctx *c, const config_setting_t *g, nh_system_definition *def) {
  const config_setting_t *p = config_setting_get_member(g, "params");
  if (!p) return 0;
  if (!config_setting_is_group(p)) return nh_spec_fail(c, p, "system: params must be a group, e.g. { eps = 0.1; }");
  if (config_setting_length(p) > NH_MAX_PARAMS)
    return nh_spec_fail(c, p, "system: %d params: at most %d", config_setting_length(p), NH_MAX_PARAMS);
  def->nparams = config_setting_length(p);
  for (int j = 0; j < def->nparams; j++) {
    const config_setting_t *e = config_setting_get_elem(p, (unsigned)j);
    char why[NH_TEXT_MESSAGE];
    def->param_names[j] = config_setting_name(e), def->param_origins[j] = e;
    if (nh_config_number(e, &def->param_values[j], why, sizeof why) < 0) return nh_spec_fail(c, e, "system: %s", why);
  }
  return 0;
}

/* mass = "identity" (the default) or rows ( [...], ... ) of n expressions each. */
static int mass(const nh_spec_ctx *c, const config_setting_t *g, nh_system_definition *def, number_texts *nt) {
  const config_setting_t *m = config_setting_get_member(g, "mass");
  const char *word = m ? config_setting_get_string(m) : "identity";
  def->mass_identity = word && strcmp(word, "identity") == 0;
  if (word && !def->mass_identity)
    return nh_spec_fail(c, m, "system: mass '%s': \"identity\" or a list of %d rows [...]", word, def->n);
  if (def->mass_identity) return 0;
  if (!config_setting_is_list(m) || config_setting_length(m) != def->n)
    return nh_spec_fail(c, m, "system: mass must be \"identity\" or a list ( [...], ... ) of %d rows", def->n);
  for (int i = 0; i < def->n; i++)
    if (texts_of(c, config_setting_get_elem(m, (unsigned)i), nt, &def->mass[i * def->n], def->n, NULL, "a mass row") <
        0)
      return -1;
  return 0;
}

static int constraint_rows(const nh_spec_ctx *c, const config_setting_t *g, nh_system_definition *def,
                           number_texts *nt) {
  const config_setting_t *a = config_setting_get_member(g, "constraints");
  const config_setting_t *b = config_setting_get_member(g, "affine");
  if (!a) return b ? nh_spec_fail(c, b, "system: affine without constraints: b(q) is one entry per constraint row") : 0;
  if (!config_setting_is_list(a) || config_setting_length(a) > NH_MAX_K)
    return nh_spec_fail(c, a, "system: constraints must be a list ( [...], ... ) of at most %d rows of %d expressions",
                        NH_MAX_K, def->n);
  def->k = config_setting_length(a);
  for (int r = 0; r < def->k; r++)
    if (texts_of(c, config_setting_get_elem(a, (unsigned)r), nt, &def->constraints[r * def->n], def->n, NULL,
                 "a constraint row") < 0)
      return -1;
  return b ? texts_of(c, b, nt, def->affine, def->k, NULL, "affine") : 0;
}

static int forces(const nh_spec_ctx *c, const config_setting_t *g, nh_system_definition *def, number_texts *nt) {
  const config_setting_t *s = config_setting_get_member(g, "damping");
  if (s && text_of(c, s, nt, &def->damping, "damping") < 0) return -1;
  if ((s = config_setting_get_member(g, "forcing"))) {
    def->has_forcing = 1;
    if (texts_of(c, s, nt, def->forcing, def->n, NULL, "forcing") < 0) return -1;
  }
  if (!(s = config_setting_get_member(g, "invariants"))) return 0;
  if (!config_setting_is_group(s) || config_setting_length(s) > NH_MAX_INVARIANTS)
    return nh_spec_fail(c, s, "system: invariants must be a group of at most %d, e.g. { E_y = \"0.5*(y^2 + vy^2)\"; }",
                        NH_MAX_INVARIANTS);
  def->ninvariants = config_setting_length(s);
  for (int i = 0; i < def->ninvariants; i++) {
    const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);
    def->invariant_names[i] = config_setting_name(e);
    if (text_of(c, e, nt, &def->invariants[i], "an invariant") < 0) return -1;
  }
  return 0;
}

/* q0, v0 (default 0) and sample_box (default 1). */
static int numbers(const nh_spec_ctx *c, const config_setting_t *g, nh_system_definition *def) {
  const char *names[] = {"q0", "v0"};
  double *dest[] = {def->q0, def->v0};
  char why[NH_TEXT_MESSAGE];
  for (int k = 0; k < 2; k++) {
    const config_setting_t *s = config_setting_get_member(g, names[k]);
    if (!s) continue;
    if (!config_setting_is_array(s) || config_setting_length(s) != def->n)
      return nh_spec_fail(c, s, "system: %s must be a list of %d numbers", names[k], def->n);
    for (int i = 0; i < def->n; i++)
      if (nh_config_number(config_setting_get_elem(s, (unsigned)i), &dest[k][i], why, sizeof why) < 0)
        return nh_spec_fail(c, s, "system: %s", why);
  }
  const config_setting_t *s = config_setting_get_member(g, "sample_box");
  def->sample_box = 1;
  if (s && nh_config_number(s, &def->sample_box, why, sizeof why) < 0) return nh_spec_fail(c, s, "system: %s", why);
  return 0;
}

static int read_definition(const nh_spec_ctx *c, const config_setting_t *g, nh_system_definition *def,
                           number_texts *nt) {
  def->origin = g;
  if (nh_spec_members(c, g, members) < 0) return -1;
  const config_setting_t *name = nh_spec_require(c, g, "name");
  if (!name) return -1;
  def->name_origin = name;
  def->constraints_origin = config_setting_get_member(g, "constraints");
  def->mass_origin = config_setting_get_member(g, "mass");
  def->sample_box_origin = config_setting_get_member(g, "sample_box");
  if (!(def->name = config_setting_get_string(name)))
    return nh_spec_fail(c, name, "system: name must be a name in quotes, e.g. \"my_system\"");
  const config_setting_t *v = nh_spec_require(c, g, "potential");
  if (!v || coordinates(c, g, def) < 0 || parameters(c, g, def) < 0 || mass(c, g, def, nt) < 0 ||
      text_of(c, v, nt, &def->potential, "potential") < 0 || constraint_rows(c, g, def, nt) < 0 ||
      forces(c, g, def, nt) < 0)
    return -1;
  return numbers(c, g, def);
}

int nh_spec_defined_system(const nh_spec_ctx *c, const config_setting_t *g, nh_study *st) {
  nh_system_definition def = {0};
  number_texts *nt = calloc(1, sizeof *nt);
  if (!nt) return nh_spec_out_of_memory(c);
  int rc = read_definition(c, g, &def, nt);
  if (rc == 0) {
    const void *origin;
    char msg[NH_TEXT_MESSAGE], note[NH_TEXT_MESSAGE];
    st->defined = nh_defined_system_build(&def, NH_DEFINED_AUTO, &origin, msg, sizeof msg, note, sizeof note);
    if (!st->defined)
      rc = nh_spec_fail(c, origin, "system: %s", msg);
    else if (note[0])
      fprintf(stderr, "note: %s\n", note);
  }
  free(nt);
  if (rc == 0 && nh_system_init(&st->sys, nh_defined_system_type(st->defined)) < 0)
    rc = nh_spec_fail(c, def.mass_origin ? def.mass_origin : g, "system '%s': the mass matrix is not positive definite",
                      def.name);
  return rc;
}

/* `system = "plugin:PATH"`: PATH relative to the spec file's directory, as an @include is (an
 * absolute PATH as is). */
int nh_spec_plugin_system(const nh_spec_ctx *c, const config_setting_t *s, const char *spec_file, const char *path,
                          nh_study *st) {
  char full[NH_TEXT_PATH], msg[NH_TEXT_PATH + NH_TEXT_MESSAGE];
  const char *slash = strrchr(spec_file, '/');
  if (!path[0]) return nh_spec_fail(c, s, "system \"plugin:\" names no file: \"plugin:./my_system.so\"");
  if (path[0] == '/' || !slash)
    snprintf(full, sizeof full, "%s", path);
  else
    snprintf(full, sizeof full, "%.*s/%s", (int)(slash - spec_file), spec_file, path);
  if (!(st->plugin = nh_system_plugin_open(full, msg, sizeof msg))) return nh_spec_fail(c, s, "%s", msg);
  if (nh_system_init(&st->sys, nh_system_plugin_type(st->plugin)) < 0)
    return nh_spec_fail(c, s, "system plugin %s: its mass matrix is not positive definite", full);
  return 0;
}
