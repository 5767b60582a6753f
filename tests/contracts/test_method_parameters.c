/* Every method's parameters, taken from the registry (integrators/integrators.def): each range
 * end accepted and the value just beyond refused with a message naming the value and the range, a
 * choice's every name parsed, the method syntax reading and writing each parameter, and the
 * default the one its documentation states: its help text (tests/param_docs.h), README's Methods
 * section ("`forcing=ends` (default)") or, where neither states it, the papers' value (the short
 * list below, each with its spec section). A new method is covered with no edit here; a range or a
 * default that moves changes what users' specs mean (issue 16), and issue 48 item 6 asks for tables
 * derived from the registries, not copied. tests/contracts/test_system_parameters.c does the same
 * for the systems. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/helpers.h"
#include "tests/param_docs.h"

/* The type named `name` in the registry, or NULL. */
static const nh_integrator_type *method_named(const char *name) {
  for (int i = 0; nh_integrator_types[i]; i++)
    if (strcmp(nh_integrator_types[i]->name, name) == 0) return nh_integrator_types[i];
  return NULL;
}

/* Parameter j of t: a name, a help text, a finite range holding the default, integers (choices:
 * the indices 0 to the last name) at integer points; the ends accepted, the values just outside
 * refused with the message naming value and range that reads back exactly (a choice: every name
 * read as its index, the index past the last and an unknown name refused). */
static void check_param(const nh_integrator_type *t, int j) {
  const nh_param_desc *d = &t->params[j];
  cr_assert(d->name && d->name[0], "%s: parameter %d has no name", t->name, j);
  for (int i = 0; i < j; i++) cr_expect_str_neq(t->params[i].name, d->name, "%s: two parameters so named", t->name);
  cr_expect(d->help && d->help[0], "%s.%s: no help text", t->name, d->name);
  cr_expect(isfinite(d->min) && isfinite(d->max) && d->min <= d->def && d->def <= d->max,
            "%s.%s: default %.17g outside [%.17g, %.17g]", t->name, d->name, d->def, d->min, d->max);
  if (d->kind != NH_PARAM_REAL)
    cr_expect(d->def == floor(d->def) && d->min == floor(d->min) && d->max == floor(d->max),
              "%s.%s: an integer parameter at a fraction", t->name, d->name);
  const int nchoices = nh_param_nchoices(d);
  if (d->kind == NH_PARAM_CHOICE)
    cr_expect(nchoices >= 2 && d->min == 0 && d->max == nchoices - 1, "%s.%s: %d names for [%g, %g]", t->name, d->name,
              nchoices, d->min, d->max);
  else cr_expect(d->choices == NULL, "%s.%s: choices on a number", t->name, d->name);
  double vals[NH_MAX_PARAMS];
  char err[256] = "", prefix[128];
  nh_param_defaults(t->params, t->nparams, vals);
  cr_expect_eq(vals[j], d->def);
  const double ends[2] = {d->min, d->max};
  snprintf(prefix, sizeof prefix, "parameter %s=", d->name);
  for (int e = 0; e < 2; e++) {
    cr_expect_eq(nh_param_set_value(t->params, t->nparams, vals, d->name, ends[e], err, sizeof err), 0,
                 "%s.%s = %.17g refused: %s", t->name, d->name, ends[e], err);
    cr_expect_eq(vals[j], ends[e], "%s.%s: the end %.17g is set", t->name, d->name, ends[e]);
    if (d->kind == NH_PARAM_CHOICE) continue;
    const double out = d->kind == NH_PARAM_INT ? ends[e] + (e ? 1 : -1) : nextafter(ends[e], e ? INFINITY : -INFINITY);
    cr_expect_eq(nh_param_set_value(t->params, t->nparams, vals, d->name, out, err, sizeof err), -1,
                 "%s.%s = %.17g accepted", t->name, d->name, out);
    cr_expect(doc_is_range_message(err, prefix, out, d->min, d->max), "%s.%s = %.17g: message '%s'", t->name, d->name,
              out, err);
    cr_expect_eq(vals[j], ends[e], "%s.%s: a refused value changed the parameter", t->name, d->name);
  }
  if (d->kind != NH_PARAM_CHOICE) return;
  for (int c = 0; c < nchoices; c++) {
    cr_expect_eq(nh_param_set(t->params, t->nparams, vals, d->name, d->choices[c], err, sizeof err), 0, "%s.%s=%s: %s",
                 t->name, d->name, d->choices[c], err);
    cr_expect_eq(vals[j], c, "%s.%s=%s read as %g", t->name, d->name, d->choices[c], vals[j]);
  }
  cr_expect_eq(nh_param_set_value(t->params, t->nparams, vals, d->name, nchoices, err, sizeof err), -1,
               "%s.%s: index %d accepted", t->name, d->name, nchoices);
  cr_expect_eq(nh_param_set(t->params, t->nparams, vals, d->name, "nosuch", err, sizeof err), -1,
               "%s.%s=nosuch accepted", t->name, d->name);
  cr_expect_eq(vals[j], nchoices - 1, "%s.%s: a refused name changed the parameter", t->name, d->name);
}

/* The written value of parameter `name` in the method name `text` ("P=V" up to "," or ")"), in
 * value; NULL when not written. */
static const char *written_value(const char *text, const char *name, char *value, size_t len) {
  char key[64];
  snprintf(key, sizeof key, "%s=", name);
  for (const char *p = text; (p = strstr(p, key)) != NULL; p++)
    if (p[-1] == '(' || p[-1] == ',') {
      p += strlen(key);
      snprintf(value, len, "%.*s", (int)strcspn(p, ",)"), p);
      return value;
    }
  return NULL;
}

/* The value text v of parameter d is val: a choice's name, else a number that reads back exactly. */
static int written_is(const nh_param_desc *d, const char *v, double val) {
  if (d->kind == NH_PARAM_CHOICE) return strcmp(v, d->choices[(int)val]) == 0;
  char *end;
  const double x = strtod(v, &end);
  return end != v && *end == '\0' && x == val;
}

/* The method syntax of parameter j of t: the bare name parses to the default, and the name
 * written back carries the parameter unless it is quiet (and so at its default); set through the
 * text syntax to the end farther from the default (a choice by name), it parses to that end and is
 * written, quiet or not, reading back as that value. A combination the method refuses (nh_newmark's
 * beta + beta2 = 1/2, Remark 3.3) is retried with allow_ill_conditioned=1 where the method has it. */
static void check_syntax(const nh_integrator_type *t, int j) {
  const nh_param_desc *d = &t->params[j];
  char err[512] = "", name[512], text[256], value[64];
  nh_method *m = nh_method_parse(t->name, err, sizeof err);
  cr_assert(m, "%s: %s", t->name, err);
  cr_expect_eq(m->p[j], d->def, "%s.%s: parsed default %.17g", t->name, d->name, m->p[j]);
  nh_method_format(m, name, sizeof name);
  const char *v = written_value(name, d->name, value, sizeof value);
  cr_expect_eq(v != NULL, !d->quiet, "%s.%s: %s", t->name, d->name, name);
  if (v) cr_expect(written_is(d, v, d->def), "%s.%s: written %s", t->name, d->name, name);
  nh_method_free(m);
  const double other = d->def == d->max ? d->min : d->max;
  if (d->kind == NH_PARAM_CHOICE) snprintf(value, sizeof value, "%s", d->choices[(int)other]);
  else snprintf(value, sizeof value, "%.17g", other);
  snprintf(text, sizeof text, "%s(%s=%s)", t->name, d->name, value);
  m = nh_method_parse(text, err, sizeof err);
  if (!m && nh_param_index(t->params, t->nparams, "allow_ill_conditioned") >= 0 &&
      strcmp(d->name, "allow_ill_conditioned") != 0) {
    snprintf(text, sizeof text, "%s(%s=%s,allow_ill_conditioned=1)", t->name, d->name, value);
    m = nh_method_parse(text, err, sizeof err);
  }
  cr_assert(m, "%s: %s", text, err);
  cr_expect_eq(m->p[j], other, "%s: %.17g", text, m->p[j]);
  nh_method_format(m, name, sizeof name);
  v = written_value(name, d->name, value, sizeof value);
  cr_expect(v && written_is(d, v, other), "%s: written %s", text, name);
  nh_method_free(m);
}

Test(method_parameters, each_range_end_accepted_and_the_syntax_reads_it) {
  int checked = 0;
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    cr_expect(t->nparams >= 0 && t->nparams <= NH_MAX_PARAMS, "%s: %d parameters", t->name, t->nparams);
    for (int j = 0; j < t->nparams; j++, checked++) {
      check_param(t, j);
      if (!t->takes_base) check_syntax(t, j);
    }
  }
  cr_expect_gt(checked, 0);
}

/* Every method parameter whose help states its default or the reference's values
 * (tests/param_docs.h): the default is the one stated (a choice: by name), or one of the values
 * listed, and every value the help states is inside the range. */
Test(method_parameters, defaults_are_the_ones_the_help_states) {
  int stated = 0;
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    for (int j = 0; j < t->nparams; j++) {
      const nh_param_desc *d = &t->params[j];
      const doc_stated st = doc_read(d->help);
      if (st.has_default && st.def_word[0]) {
        const int c = d->kind == NH_PARAM_CHOICE ? (int)d->def : -1;
        cr_expect(c >= 0 && strcmp(d->choices[c], st.def_word) == 0, "%s.%s: the help's default is %s: %s", t->name,
                  d->name, st.def_word, d->help);
      } else if (st.has_default) {
        cr_expect(doc_same(d->def, st.def), "%s.%s: default %.17g, the help says %.17g: %s", t->name, d->name, d->def,
                  st.def, d->help);
      }
      if (st.n_one_of > 0) {
        int found = 0;
        for (int k = 0; k < st.n_one_of; k++) found |= doc_same(d->def, st.one_of[k]);
        cr_expect(found, "%s.%s: default %.17g is not among the values its help states: %s", t->name, d->name, d->def,
                  d->help);
      }
      for (int k = 0; k < st.n_in_range; k++)
        cr_expect(d->min <= st.in_range[k] && st.in_range[k] <= d->max,
                  "%s.%s: the help's value %.17g outside [%.17g, %.17g]", t->name, d->name, st.in_range[k], d->min,
                  d->max);
      stated += st.has_default || st.n_one_of > 0;
    }
  }
  cr_expect_gt(stated, 0, "no help text states a default");
}

/* README.md's "## Methods" section (malloc'd, up to "## Systems"). */
static char *readme_methods(void) {
  char path[512];
  snprintf(path, sizeof path, "%s/README.md", NHBENCH_SOURCE_DIR);
  FILE *f = fopen(path, "r");
  cr_assert_not_null(f, "%s", path);
  static char text[1 << 20];
  const size_t n = fread(text, 1, sizeof text - 1, f);
  fclose(f);
  text[n] = '\0';
  char *from = strstr(text, "\n## Methods\n"), *to = from ? strstr(from, "\n## Systems\n") : NULL;
  cr_assert(from && to, "README.md has no section Methods followed by Systems");
  const size_t len = (size_t)(to - from);
  char *section = malloc(len + 1);
  cr_assert_not_null(section);
  memcpy(section, from, len);
  section[len] = '\0';
  return section;
}

/* README's Methods section states defaults as "`NAME=VALUE` (default)": every method with a
 * parameter NAME has VALUE as its default (a choice by name, else the number), and each statement
 * is about some parameter a method has. */
Test(method_parameters, defaults_are_the_ones_readme_states) {
  char *readme = readme_methods();
  int statements = 0;
  for (const char *p = readme; (p = strstr(p, "` (default)")) != NULL; p++) {
    const char *open = p;
    while (open > readme && open[-1] != '`') open--;
    char stmt[128];
    snprintf(stmt, sizeof stmt, "%.*s", (int)(p - open), open);
    char *eq = strchr(stmt, '=');
    cr_assert_not_null(eq, "README: `%s` (default)", stmt);
    *eq = '\0';
    const char *name = stmt, *value = eq + 1;
    int methods = 0;
    for (int i = 0; nh_integrator_types[i]; i++) {
      const nh_integrator_type *t = nh_integrator_types[i];
      const int j = nh_param_index(t->params, t->nparams, name);
      if (j < 0) continue;
      methods++;
      const nh_param_desc *d = &t->params[j];
      cr_expect(written_is(d, value, d->def), "%s.%s: README says the default is %s", t->name, name, value);
    }
    cr_expect_gt(methods, 0, "README states a default for %s, a parameter no method has", name);
    statements++;
  }
  cr_expect_gt(statements, 0, "README's Methods section states no default");
  free(readme);
}

/* The papers' values of the method parameters they fix, from the spec files (shared/spec/), each
 * with its section: the defaults are these, and where the paper states the parameter's range
 * (NAN where it does not), the range is it. */
static const struct {
  const char *method, *param;
  double value, min, max;
  const char *source;
} papers[] = {
    {"nh_newmark", "beta", 0, 0, 0.5, "spec/newmark.md §2.3: 0 <= beta, beta' <= 1/2; §1 item 2: F^{0,0,1/2} (Prop 3.5)"},
    {"nh_newmark", "beta2", 0, 0, 0.5, "spec/newmark.md §2.3, §1 item 2"},
    {"nh_newmark", "alpha", 0.5, 0, 1, "spec/newmark.md §2.3: alpha in [0, 1]; §1 item 2: alpha = 1/2, order 2 (Prop 3.4)"},
    {"newmark", "beta", 0.25, 0, 0.5, "spec/newmark.md §2.1: 0 <= beta <= 1/2, the trapezoidal rule beta = 1/4"},
    {"newmark", "gamma", 0.5, 0, 1, "spec/newmark.md §2.1: 0 <= gamma <= 1, order 2 iff gamma = 1/2"},
    {"dla", "alpha", 0.5, 0, 1, "spec/newmark.md §2.4 (14): alpha in [0, 1]; §1 item 2: F^{0,0,1/2} is DLA"},
#ifdef NHBENCH_SUNDIALS
    {"ida", "rtol", 1e-6, NAN, NAN, "spec/herglotz.md §6: ode15i's tolerance 1e-6"},
    {"ida", "atol", 1e-6, NAN, NAN, "spec/herglotz.md §6"},
#endif
};

Test(method_parameters, defaults_and_ranges_are_the_papers) {
  for (size_t i = 0; i < sizeof papers / sizeof *papers; i++) {
    const nh_integrator_type *t = method_named(papers[i].method);
    cr_assert_not_null(t, "%s: not registered", papers[i].method);
    const int j = nh_param_index(t->params, t->nparams, papers[i].param);
    cr_assert_geq(j, 0, "%s has no parameter %s", papers[i].method, papers[i].param);
    const nh_param_desc *d = &t->params[j];
    cr_expect(doc_same(d->def, papers[i].value), "%s.%s: default %.17g, %s gives %.17g", papers[i].method,
              papers[i].param, d->def, papers[i].source, papers[i].value);
    if (!isnan(papers[i].min))
      cr_expect(d->min == papers[i].min && d->max == papers[i].max, "%s.%s: range [%.17g, %.17g], %s gives [%g, %g]",
                papers[i].method, papers[i].param, d->min, d->max, papers[i].source, papers[i].min, papers[i].max);
  }
}

/* cvode has no multiplier unknown, so it has no lambda_error_test: the parameter is refused by
 * name, with the list of those it has, instead of being accepted and ignored. */
#ifdef NHBENCH_SUNDIALS
Test(method_parameters, cvode_refuses_lambda_error_test) {
  char err[512] = "";
  nh_method *m = nh_method_parse("cvode(lambda_error_test=1)", err, sizeof err);
  cr_expect(m == NULL, "accepted");
  nh_method_free(m);
  cr_expect(strstr(err, "unknown parameter 'lambda_error_test' (parameters: rtol, atol, max_order, max_step, "
                        "max_steps)") != NULL,
            "%s", err);
}
#endif

/* Names users type (issue 46 item 7). A method with one parameter takes it positionally, and the
 * name written back is the named form; a method with several, or none, refuses a lone value. */
Test(method_parameters, one_parameter_taken_positionally) {
  const char *cases[][2] = {{"spark(3)", "spark(s=3)"},
                            {"herglotz2(midpoint)", "herglotz2(forcing=midpoint)"},
                            {"nh_rattle(0)", "nh_rattle(lambda0=0)"},
                            {"nh_energy(midpoint)", "nh_energy(gradient=midpoint)"},
                            {"triple_jump(spark(2))", "triple_jump(spark(s=2))"}};
  char err[512], name[256];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    nh_method *m = nh_method_parse(cases[i][0], err, sizeof err);
    cr_assert(m, "%s: %s", cases[i][0], err);
    nh_method_format(m, name, sizeof name);
    cr_expect_str_eq(name, cases[i][1], "%s", cases[i][0]);
    nh_method_free(m);
  }
  const char *refused[][2] = {{"nh_newmark(0.1)", "a lone value is read only by a method with one parameter"},
                              {"rk4(1)", "this method takes no parameters"},
                              {"triple_jump(nh_rattle, 3)", "this method takes no parameters"},
                              {"spark(5)", "spark"}};
  for (size_t i = 0; i < sizeof refused / sizeof *refused; i++) {
    err[0] = '\0';
    nh_method *m = nh_method_parse(refused[i][0], err, sizeof err);
    cr_expect(m == NULL, "%s accepted", refused[i][0]);
    nh_method_free(m);
    cr_expect(strstr(err, refused[i][1]) != NULL, "%s: %s", refused[i][0], err);
  }
}

/* An unknown method names the method a peer's name maps to, then the closest names; an unknown
 * system the closest systems; `nhbench list` does the same. Nothing close: no "did you mean". */
Test(method_parameters, unknown_names_get_did_you_mean) {
  const char *cases[][2] = {{"McLachlan", ": did you mean mp418 (odelab: McLachlan), mclachlan8? (methods: rk4, "},
                            {"NonHolonomicEnergy", ": did you mean nh_energy (odelab: NonHolonomicEnergy)? (methods"},
                            {"step6", ": did you mean yoshida6(contact2) (contact-integrators: step6)? (methods"},
                            {"Spark", ": did you mean spark (odelab: Spark)? (methods"},
                            {"nh_rattel", ": did you mean nh_rattle, rattle? (methods"},
                            {"nosuchthing", "' (methods: rk4, "}};
  char err[2048];
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    nh_method *m = nh_method_parse(cases[i][0], err, sizeof err);
    cr_expect(m == NULL);
    nh_method_free(m);
    cr_expect(strstr(err, cases[i][1]) != NULL, "%s: %s", cases[i][0], err);
  }
  char out[4096];
  cr_expect_eq(test_run_nhbench("list methods McLachlan", out, sizeof out), 2);
  cr_expect_str_eq(out, "nhbench list: no methods named 'McLachlan': did you mean mp418 (odelab: McLachlan), "
                        "mclachlan8?\n");
  cr_expect_eq(test_run_nhbench("list systems ContactOscillator", out, sizeof out), 2);
  cr_expect_str_eq(out, "nhbench list: no systems named 'ContactOscillator': did you mean contact_oscillator?\n");
  char path[256];
  snprintf(path, sizeof path, "/tmp/nhbench-names-%d.cfg", (int)getpid());
  test_write_file(path, "study = \"convergence\";\nsystem = \"VerticalDisk\";\nT = 1.0;\nh0 = 0.1;\nhalvings = 1;\n"
                        "methods = [\"rk4\"];\n");
  char args[512];
  snprintf(args, sizeof args, "run %s -o /dev/null", path);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 2);
  cr_expect(strstr(out, ":2: unknown system 'VerticalDisk': did you mean vertical_disk? (systems: ") != NULL, "%s", out);
  remove(path);
}
