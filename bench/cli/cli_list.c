/* nhbench list [systems|methods|observables|kinds|settings] [NAME]: generated from the descriptor tables and the
 * registries, so it never drifts. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "core/text.h"
#include "integrators/integrator.h"
#include "studies/kinds.h"
#include "studies/observables.h"
#include "studies/settings.h"

/* NULL lists everything; otherwise only the entry of that name. */
static int wanted(const char *filter, const char *name) { return !filter || strcmp(filter, name) == 0; }

static void print_params(const nh_param_desc *d, int n) {
  for (int i = 0; i < n; i++) {
    char def[NH_TEXT_NUMBER], lo[NH_TEXT_NUMBER], hi[NH_TEXT_NUMBER];
    nh_format_double(def, sizeof def, d[i].def);
    nh_format_double(lo, sizeof lo, d[i].min);
    nh_format_double(hi, sizeof hi, d[i].max);
    if (d[i].kind == NH_PARAM_CHOICE) {
      char names[NH_TEXT_NAME];
      nh_param_choices_text(&d[i], "|", names, sizeof names);
      printf("      %-8s one of %s, default %s: %s\n", d[i].name, names, d[i].choices[(int)d[i].def], d[i].help);
      continue;
    }
    printf("      %-8s %-4s default %s, in [%s, %s]: %s\n", d[i].name, d[i].kind == NH_PARAM_INT ? "int," : "real,",
           def, lo, hi, d[i].help);
  }
}

/* A system's knowledge group, an empty one where it has none. */
static const nh_system_knowledge *knowledge_of(const nh_system_type *t) {
  static const nh_system_knowledge none = {0};
  return t->knowledge ? t->knowledge : &none;
}

static void print_system_extras(const nh_system_type *t) {
  const nh_system_derived *d = knowledge_of(t)->derived;
  for (int j = 0; d && j < d->count; j++) printf("    derived: %s: %s\n", d->names[j], d->docs ? d->docs[j] : "");
  const char *sampler = knowledge_of(t)->sampler_doc;
  printf("    random states for ensembles: %s\n",
         sampler ? sampler : "the generic sampler on D (spec/newmark.md §6 A10)");
}

static int list_systems(const char *filter) {
  int found = 0;
  for (int i = 0; nh_system_types[i]; i++) {
    const nh_system_type *t = nh_system_types[i];
    const nh_system_knowledge *kn = knowledge_of(t);
    if (!wanted(filter, t->name)) continue;
    if (found++ == 0) printf("systems:\n"); /* none for an unknown NAME: only the error is printed */
    printf("  %s  (n = %d, k = %d%s)\n    %s\n    default initial condition: %s\n", t->name, t->n, t->k,
           kn->exact ? ", exact solution" : "", t->doc, t->ic_doc);
    if (t->nparams) printf("    parameters:\n");
    print_params(t->params, t->nparams);
    if (kn->invariants) {
      printf("    invariants:");
      for (int j = 0; j < kn->invariants->count; j++) printf("%s %s", j ? "," : "", kn->invariants->names[j]);
      printf("\n");
    }
    if (kn->npresets) printf("    presets (initial = \"NAME\" in a convergence spec):\n");
    for (int j = 0; j < kn->npresets; j++) {
      const nh_preset *pr = &kn->presets[j];
      printf("      %-14s %s%s%s%s\n", pr->name, pr->doc, pr->params && pr->params[0] ? " [" : "",
             pr->params ? pr->params : "", pr->params && pr->params[0] ? "]" : "");
    }
    print_system_extras(t);
  }
  return found;
}

/* What the method defines for the observables (studies/observables.h). */
static void print_method_observables(const nh_integrator_type *t) {
  static const char *const when[] = {"", "lambda(t_k)", "lambda(t_k + h/2)", "lambda(t_k+1)"};
  if (t->takes_base) return;
  if (t->lambda_time)
    printf("    multiplier: approximates %s; %s\n", when[t->lambda_time], t->lambda_doc ? t->lambda_doc : "");
  if (t->discrete_constraint)
    printf("    discrete constraint: %s\n", t->discrete_constraint_doc ? t->discrete_constraint_doc : "");
  if (t->discrete_energy) printf("    discrete energy: %s\n", t->discrete_energy_doc ? t->discrete_energy_doc : "");
  if (t->discrete_action) printf("    discrete action: defined (variational)\n");
  if (t->newton) printf("    Newton system: analytic Jacobian exposed (cond(J) in one-step studies)\n");
}

static int list_methods(const char *filter) {
  int found = 0;
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    if (!wanted(filter, t->name)) continue;
    if (found++ == 0) printf("methods:\n");
    char example[NH_TEXT_NAME];
    snprintf(example, sizeof example, "%s%s", t->name, t->takes_base ? "(METHOD)" : "");
    nh_method *m = t->takes_base ? NULL : nh_method_parse(t->name, example, sizeof example);
    if (m) {
      printf("  %s  (order %d with defaults%s)\n", t->name, nh_method_order(m),
             nh_method_is_symmetric(m) ? ", symmetric" : "");
      nh_method_free(m);
    } else {
      printf("  %s(METHOD)\n", t->name);
    }
    printf("    %s\n", t->doc);
    if (t->takes_base) {
      printf("    applies where its base method applies\n");
    } else {
      char lanes[256] = "";
      if (t->step_lanes)
        snprintf(lanes, sizeof lanes, "steps ensembles in lanes%s%s (README: Performance); ", t->lanes_doc ? " " : "",
                 t->lanes_doc ? t->lanes_doc : "");
      printf("    %s%s%s%s%s%s", t->properties & NH_PRESERVES_CONSTRAINT ? "preserves the constraint; " : "",
             t->properties & NH_HISTORY ? "two-step (no compositions); " : "",
             t->properties & NH_READS_PREVIOUS_STEP ? "reads its previous step (compositions reach order 4 at most); "
                                                    : "",
             t->properties & NH_TRACKS_ACTION ? "tracks the Herglotz action z; " : "",
             t->properties & NH_MIDPOINT_TIME ? "takes alpha(t), W(q,t), F(t) at t_j + h/2 only; " : "", lanes);
      printf("handles:%s%s%s%s%s%s%s\n", t->handles & NH_SYS_VARIABLE_MASS ? " M(q)" : "",
             t->handles & NH_SYS_AFFINE_CONSTRAINTS ? " affine-constraints" : "",
             t->handles & NH_SYS_DAMPING ? " damping" : "", t->handles & NH_SYS_FORCING ? " forcing" : "",
             t->handles & NH_SYS_TIME_DAMPING ? " alpha(t)" : "",
             t->handles & NH_SYS_TIME_POTENTIAL ? " W(q,t)" : "",
             t->handles ? "" : " constant M, linear constraints, conservative systems only");
    }
    print_method_observables(t);
    if (t->nparams) printf("    parameters:\n");
    print_params(t->params, t->nparams);
    for (const nh_param_alias *a = t->aliases; a && a->old_name; a++)
      printf("    deprecated: %s=%s, read as %s=%s\n", a->old_name, a->old_value, a->name, a->value);
  }
  return found;
}

/* Which systems define an observable (some need invariants, derived quantities or constraints). */
static void print_observable_systems(const nh_observable *o) {
  char list[NH_TEXT_LONG] = "";
  int all = 1;
  for (int i = 0; nh_system_types[i]; i++) {
    nh_system sys;
    if (nh_system_init(&sys, nh_system_types[i]) >= 0 && o->absent(NULL, &sys) == NULL)
      nh_text_append(list, sizeof list, "", " %s", sys.type->name);
    else all = 0;
  }
  if (!all) printf("    systems:%s\n", list);
}

/* Which base methods define an observable, when not all do. */
static void print_observable_methods(const nh_observable *o) {
  nh_system sys;
  nh_system_init(&sys, nh_system_type_find("chaotic_particle"));
  char line[NH_TEXT_LONG] = "";
  int all = 1;
  for (int i = 0; nh_integrator_types[i]; i++) {
    if (nh_integrator_types[i]->takes_base) continue;
    char msg[NH_TEXT_MESSAGE];
    nh_method *m = nh_method_parse(nh_integrator_types[i]->name, msg, sizeof msg);
    if (!m) continue;
    if (o->absent(m, &sys) == NULL) {
      nh_text_append(line, sizeof line, "", " %s", m->type->name);
    } else {
      all = 0;
    }
    nh_method_free(m);
  }
  if (!all) printf("    methods that define it:%s\n", line[0] ? line : " none");
}

static int list_observables(const char *filter) {
  int found = 0;
  for (int i = 0; nh_observables[i]; i++) {
    const nh_observable *o = nh_observables[i];
    if (!wanted(filter, o->name)) continue;
    if (found++ == 0) printf("observables (study setting `observables = [...]`):\n");
    printf("  %s  [units: %s%s%s]\n    %s\n", o->name, o->units, o->needs & NH_OBS_STEP ? "; from the last step" : "",
           o->needs & (NH_OBS_REFERENCE | NH_OBS_LAMBDA_REFERENCE) ? "; needs the exact or reference solution" : "",
           o->doc);
    print_observable_systems(o);
    print_observable_methods(o);
  }
  return found;
}

/* The study kinds (studies/kinds.h) and the datasets their results files hold, from the kinds'
 * column descriptors. */
static int list_kinds(const char *filter) {
  int found = 0;
  for (int k = 0; k < NH_STUDY_KINDS; k++) {
    const nh_study_kind_type *t = nh_study_kinds[k];
    if (!wanted(filter, t->name)) continue;
    if (found++ == 0) printf("study kinds (study = \"KIND\" in a spec):\n");
    printf("  %s\n    %s\n    its result's datasets in /%s (what every study holds, the summaries derived from these "
           "and the observables: results/README.md):\n",
           t->name, t->doc, t->name);
    for (const nh_result_column *c = t->columns; c->name; c++) {
      if (c->flags & NH_COLUMN_SCRATCH) continue;
      printf("      %-24s [%s] %s%s%s: %s", c->name, c->dims,
             c->type == NH_COLUMN_COST ? "cost counters" : c->type == NH_COLUMN_I32 ? "int" : "real",
             c->units ? ", " : "", c->units ? c->units : "", c->doc);
      if (c->present && c->present->setting) printf(" (only with %s)", c->present->setting);
      printf("\n");
    }
  }
  return found;
}

/* A setting's type with its range ("whole number in [1, 30]") and its default in words ("" if it
 * has none: required, or nothing to say). */
static void setting_texts(const nh_setting *s, char *type, size_t tlen, char *def, size_t dlen) {
  char lo[NH_TEXT_NUMBER], hi[NH_TEXT_NUMBER];
  snprintf(type, tlen, "%s", s->type);
  if (!isnan(s->min)) {
    nh_format_double(lo, sizeof lo, s->min), nh_format_double(hi, sizeof hi, s->max);
    nh_text_append(type, tlen, "", " in [%s, %s]", lo, hi);
  }
  def[0] = '\0';
  if (s->def_text)
    snprintf(def, dlen, "%s", s->def_text);
  else if (!isnan(s->def))
    nh_format_double(def, dlen, s->def);
}

/* The kinds that take s: "every", or their names. */
static void setting_kinds(const nh_setting *s, char *out, size_t len) {
  snprintf(out, len, "%s", s->every_kind ? "every" : "");
  for (int k = 0; !s->every_kind && k < NH_STUDY_KINDS; k++)
    if (nh_setting_of_kind(s, nh_study_kinds[k])) nh_text_append(out, len, ", ", "%s", nh_study_kinds[k]->name);
}

/* text with Markdown's table separator | escaped. */
static void put_cell(const char *text) {
  for (const char *p = text; *p; p++) {
    if (*p == '|') putchar('\\');
    putchar(*p);
  }
}

/* Every setting as a Markdown table: README.md's "Every setting" holds this output between its
 * markers (make readme-settings writes it there; tests/contracts/test_settings.c compares). A
 * default of "none": the setting is required, or one of two alternatives (h or h0; initial or
 * ensemble), or optional without a value standing in. */
static void settings_markdown(void) {
  printf("| setting | type | default | study kinds | meaning |\n|---|---|---|---|---|\n");
  for (const nh_setting *s = nh_settings; s->name; s++) {
    char type[NH_TEXT_NAME], def[NH_TEXT_NAME], kinds[NH_TEXT_NAME];
    setting_texts(s, type, sizeof type, def, sizeof def);
    setting_kinds(s, kinds, sizeof kinds);
    printf("| `%s` | ", s->name);
    put_cell(type), printf(" | "), put_cell(def[0] ? def : "none"), printf(" | %s | ", kinds);
    put_cell(s->help), printf(" |\n");
  }
}

/* A spec's top-level settings (studies/settings.h); with KIND those a spec of that kind takes. */
static int list_settings(const char *kind_name) {
  const nh_study_kind_type *kind = kind_name ? nh_study_kind_named(kind_name) : NULL;
  if (kind_name && !kind) return 0;
  printf("settings of %s%s (README.md, \"Study specs\"):\n", kind ? kind->name : "every study kind",
         kind ? " studies" : "");
  for (const nh_setting *s = nh_settings; s->name; s++) {
    if (kind && !nh_setting_of_kind(s, kind)) continue;
    char type[NH_TEXT_NAME], def[NH_TEXT_NAME];
    setting_texts(s, type, sizeof type, def, sizeof def);
    printf("  %-16s %s", s->name, type);
    if (def[0]) printf(", default %s", def);
    if (!kind) {
      printf("; in");
      for (int k = 0; k < NH_STUDY_KINDS; k++)
        if (nh_setting_of_kind(s, nh_study_kinds[k])) printf(" %s", nh_study_kinds[k]->name);
    }
    printf("\n    %s\n", s->help);
  }
  return 1;
}

static const char usage[] =
    "usage: nhbench list [systems|methods|observables|kinds|settings] [NAME]\n"
    "       nhbench list settings --markdown\n"
    "  every system, method, observable, study kind or spec setting with its parameters and\n"
    "  documentation (the first three lists without an argument); with NAME only that one (for\n"
    "  settings: those a spec of study kind NAME takes)\n"
    "  --markdown   every setting as a Markdown table (README.md's \"Every setting\")\n"
    "  -h, --help   this text\n"
    "Exit status 2 for an unknown list or NAME.\n";

static const char prog[] = "nhbench list";

int nh_cli_list(int argc, char **argv) {
  static const struct option longopts[] = {{"help", no_argument, NULL, 'h'}, {"markdown", no_argument, NULL, 'm'}, {0}};
  int c, markdown = 0;
  while ((c = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
    if (c == 'h') return fputs(usage, stdout), NH_EXIT_OK;
    if (c == 'm')
      markdown = 1;
    else
      return nh_cli_bad_option(prog, usage, c, argv);
  }
  if (argc - optind > 2) return nh_cli_bad_argument(prog, usage, argv[optind + 2]);
  const char *what = optind < argc ? argv[optind] : "all", *name = optind + 1 < argc ? argv[optind + 1] : NULL;
  if (markdown && (strcmp(what, "settings") != 0 || name))
    return fprintf(stderr, "%s: --markdown lists every setting: nhbench list settings --markdown\n", prog),
           NH_EXIT_USAGE;
  if (markdown) return settings_markdown(), NH_EXIT_OK;
  int found = 1;
  if (strcmp(what, "systems") == 0) found = list_systems(name);
  else if (strcmp(what, "methods") == 0) found = list_methods(name);
  else if (strcmp(what, "observables") == 0) found = list_observables(name);
  else if (strcmp(what, "kinds") == 0) found = list_kinds(name);
  else if (strcmp(what, "settings") == 0) found = list_settings(name);
  else if (strcmp(what, "all") == 0 && !name)
    list_systems(NULL), printf("\n"), list_methods(NULL), printf("\n"), list_observables(NULL);
  else
    return fprintf(stderr, "%s: unknown list '%s' (systems, methods, observables, kinds or settings)\n%s", prog, what,
                   usage),
           NH_EXIT_USAGE;
  if (!found && strcmp(what, "settings") == 0)
    return fprintf(stderr, "%s: no study kind named '%s' (nhbench list kinds)\n", prog, name), NH_EXIT_USAGE;
  if (!found) {
    char hint[NH_TEXT_MESSAGE] = "";
    if (strcmp(what, "methods") == 0) nh_method_suggest(name, hint, sizeof hint);
    else if (strcmp(what, "systems") == 0) nh_system_suggest(name, hint, sizeof hint);
    return fprintf(stderr, "%s: no %s named '%s'%s%s%s\n", prog, what, name, hint[0] ? ": did you mean " : "", hint,
                   hint[0] ? "?" : ""),
           NH_EXIT_USAGE;
  }
  return NH_EXIT_OK;
}
