/* Every method's parameter table against its documentation, as tests/contracts/test_system_parameters.c does for
 * the systems: a range or a default that moves changes what users' specs mean, and nothing else
 * would notice (issue 16). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "tests/helpers.h"

/* The documented parameters (`nhbench list methods NAME`, the README's method tables):
 * - nh_newmark: β, β' ∈ [0, ½] weigh Γ in (N1), (N2); α ∈ [0, 1] places μ̄ on the segment q_k q_{k+1}
 *   (spec/newmark.md §2.1–2.4), defaults β = β' = 0, α = ½ (Ψ_h of Prop. 3.8); constraint = point
 *   ((14)) or average ((15)); allow_ill_conditioned and fast are switches, written only when set.
 * - newmark: the classical family's β ∈ [0, ½], γ ∈ [0, 1], defaults ¼ and ½ (trapezoidal rule).
 * - dla: α as nh_newmark's. nh_shake, nh_rattle: λ0 of the continuous formula (4) by default, 0 as
 *   the paper's Remark 1 (spec/rattle.md §3.6). js_p2orig: start on D (0) or on D_h (1).
 * - herglotz1, herglotz2, la1: forcing = ends (A.1–A.5 as printed) or midpoint (spec/herglotz.md §6);
 *   herglotz1, la1: solve = newton or closed (the step in §2.7's closed form).
 * - nh_energy: gradient = average (odelab's NonHolonomicEnergy, the default) or midpoint (Gonzalez's).
 * - spark: s = 2, 3 or 4 Lobatto stages.
 * - ida, cvode: ode15i's defaults rtol = atol = 1e-6 and order ≤ 5 (spec/herglotz.md §6); max_step
 *   0 (h only) up to 1e6; max_steps 1 to 1e9 per nhbench step, 100000 by default; ida alone has
 *   lambda_error_test (cvode has no λ unknown: README, "SUNDIALS build"). */
typedef struct {
  const char *method, *name;
  nh_param_kind kind;
  double def, min, max;
  int quiet;
  const char *choices[3]; /* NH_PARAM_CHOICE: the names */
} method_param_row;

static const method_param_row documented[] = {
    {"nh_newmark", "beta", NH_PARAM_REAL, 0, 0, 0.5, 0, {NULL}},
    {"nh_newmark", "beta2", NH_PARAM_REAL, 0, 0, 0.5, 0, {NULL}},
    {"nh_newmark", "alpha", NH_PARAM_REAL, 0.5, 0, 1, 0, {NULL}},
    {"nh_newmark", "constraint", NH_PARAM_CHOICE, 0, 0, 1, 0, {"point", "average"}},
    {"nh_newmark", "allow_ill_conditioned", NH_PARAM_INT, 0, 0, 1, 1, {NULL}},
    {"nh_newmark", "fast", NH_PARAM_INT, 1, 0, 1, 1, {NULL}},
    {"newmark", "beta", NH_PARAM_REAL, 0.25, 0, 0.5, 0, {NULL}},
    {"newmark", "gamma", NH_PARAM_REAL, 0.5, 0, 1, 0, {NULL}},
    {"dla", "alpha", NH_PARAM_REAL, 0.5, 0, 1, 0, {NULL}},
    {"dla", "constraint", NH_PARAM_CHOICE, 0, 0, 1, 0, {"point", "average"}},
    {"nh_shake", "lambda0", NH_PARAM_INT, 1, 0, 1, 0, {NULL}},
    {"nh_rattle", "lambda0", NH_PARAM_INT, 1, 0, 1, 0, {NULL}},
    {"js_p2orig", "start", NH_PARAM_INT, 0, 0, 1, 1, {NULL}},
    {"herglotz1", "forcing", NH_PARAM_CHOICE, 0, 0, 1, 1, {"ends", "midpoint"}},
    {"herglotz2", "forcing", NH_PARAM_CHOICE, 0, 0, 1, 1, {"ends", "midpoint"}},
    {"herglotz1", "solve", NH_PARAM_CHOICE, 0, 0, 1, 1, {"newton", "closed"}},
    {"la1", "forcing", NH_PARAM_CHOICE, 0, 0, 1, 1, {"ends", "midpoint"}},
    {"la1", "solve", NH_PARAM_CHOICE, 0, 0, 1, 1, {"newton", "closed"}},
    {"nh_energy", "gradient", NH_PARAM_CHOICE, 0, 0, 1, 1, {"average", "midpoint"}},
    {"spark", "s", NH_PARAM_INT, 2, 2, 4, 0, {NULL}},
#ifdef NHBENCH_SUNDIALS
#define SUNDIALS_ROWS(method)                                                                                  \
  {method, "rtol", NH_PARAM_REAL, 1e-6, 1e-14, 1, 0, {NULL}},                                                  \
      {method, "atol", NH_PARAM_REAL, 1e-6, 1e-16, 1, 0, {NULL}},                                              \
      {method, "max_order", NH_PARAM_INT, 5, 1, 5, 1, {NULL}},                                                 \
      {method, "max_step", NH_PARAM_REAL, 0, 0, 1e6, 1, {NULL}},                                               \
      {method, "max_steps", NH_PARAM_INT, 100000, 1, 1e9, 1, {NULL}}
    SUNDIALS_ROWS("ida"),
    {"ida", "lambda_error_test", NH_PARAM_INT, 0, 0, 1, 1, {NULL}},
    SUNDIALS_ROWS("cvode"),
#endif
};
#define NDOC (int)(sizeof documented / sizeof documented[0])

/* The rows of `method`, in table order; their count. */
static int documented_rows(const char *method, const method_param_row **rows) {
  int n = 0;
  for (int i = 0; i < NDOC; i++)
    if (strcmp(documented[i].method, method) == 0) rows[n++] = &documented[i];
  return n;
}

/* The one-word text of row r at value: a choice's name, else the number. */
static void value_text(const method_param_row *r, double value, char *buf, size_t len) {
  if (r->kind == NH_PARAM_CHOICE) snprintf(buf, len, "%s", r->choices[(int)value]);
  else nh_format_double(buf, len, value);
}

/* Row r of type t: the table's entry, the ends accepted and the values just outside refused with
 * the message naming value and range (a choice: its names, and index 2 refused). */
static void check_row(const nh_integrator_type *t, int j, const method_param_row *r) {
  const nh_param_desc *d = &t->params[j];
  cr_expect_str_eq(d->name, r->name, "%s: parameter %d", t->name, j);
  cr_expect_eq(d->kind, r->kind, "%s.%s: kind", t->name, r->name);
  cr_expect_eq(d->def, r->def, "%s.%s: default %.17g, documented %.17g", t->name, r->name, d->def, r->def);
  cr_expect_eq(d->min, r->min, "%s.%s: min %.17g, documented %.17g", t->name, r->name, d->min, r->min);
  cr_expect_eq(d->max, r->max, "%s.%s: max %.17g, documented %.17g", t->name, r->name, d->max, r->max);
  cr_expect_eq(d->quiet, r->quiet, "%s.%s: quiet", t->name, r->name);
  for (int c = 0; c < 3; c++) {
    const char *have = d->choices ? d->choices[c] : NULL;
    cr_expect(have == r->choices[c] || (have && r->choices[c] && strcmp(have, r->choices[c]) == 0),
              "%s.%s: choice %d is %s, documented %s", t->name, r->name, c, have ? have : "(none)",
              r->choices[c] ? r->choices[c] : "(none)");
    if (!have) break;
  }
  double vals[NH_MAX_PARAMS];
  char err[256] = "", want[256], v[32], a[32], b[32];
  nh_param_defaults(t->params, t->nparams, vals);
  const double ends[2] = {r->min, r->max};
  for (int e = 0; e < 2; e++) {
    cr_expect_eq(nh_param_set_value(t->params, t->nparams, vals, r->name, ends[e], err, sizeof err), 0,
                 "%s.%s = %.17g refused: %s", t->name, r->name, ends[e], err);
    cr_expect_eq(vals[j], ends[e], "%s.%s: the end %.17g is set", t->name, r->name, ends[e]);
    if (r->kind == NH_PARAM_CHOICE) continue;
    const double out = r->kind == NH_PARAM_INT ? ends[e] + (e ? 1 : -1) : nextafter(ends[e], e ? INFINITY : -INFINITY);
    cr_expect_eq(nh_param_set_value(t->params, t->nparams, vals, r->name, out, err, sizeof err), -1,
                 "%s.%s = %.17g accepted", t->name, r->name, out);
    nh_format_double(v, sizeof v, out), nh_format_double(a, sizeof a, r->min), nh_format_double(b, sizeof b, r->max);
    snprintf(want, sizeof want, "parameter %s=%s is out of range [%s, %s]", r->name, v, a, b);
    cr_expect_str_eq(err, want, "%s.%s", t->name, r->name);
    cr_expect_eq(vals[j], ends[e], "%s.%s: a refused value changed the parameter", t->name, r->name);
  }
  if (r->kind == NH_PARAM_CHOICE)
    cr_expect_eq(nh_param_set_value(t->params, t->nparams, vals, r->name, 2, err, sizeof err), -1,
                 "%s.%s: a third choice accepted", t->name, r->name);
}

/* The method syntax of row r: the default parses to the documented default, and the canonical
 * name carries the parameter unless it is quiet and at its default; set to the other end, a quiet
 * parameter is written too. */
static void check_syntax(const nh_integrator_type *t, int j, const method_param_row *r) {
  char err[512] = "", name[512], text[256], value[32];
  nh_method *m = nh_method_parse(t->name, err, sizeof err);
  cr_assert(m, "%s: %s", t->name, err);
  cr_expect_eq(m->p[j], r->def, "%s.%s: parsed default %.17g", t->name, r->name, m->p[j]);
  nh_method_format(m, name, sizeof name);
  char pattern[64];
  snprintf(pattern, sizeof pattern, "%s=", r->name);
  cr_expect_eq(strstr(name, pattern) != NULL, !r->quiet, "%s.%s: %s", t->name, r->name, name);
  nh_method_free(m);
  /* The end farther from the default (min when the default is max), through the text syntax. */
  const double other = r->def == r->max ? r->min : r->max;
  value_text(r, other, value, sizeof value);
  /* nh_newmark at β or β' = ½ (β + β' = ½) needs allow_ill_conditioned=1 (Remark 3.3). */
  const int ill = strcmp(t->name, "nh_newmark") == 0 && strcmp(r->name, "allow_ill_conditioned") != 0;
  snprintf(text, sizeof text, "%s(%s=%s%s)", t->name, r->name, value, ill ? ",allow_ill_conditioned=1" : "");
  m = nh_method_parse(text, err, sizeof err);
  cr_assert(m, "%s: %s", text, err);
  cr_expect_eq(m->p[j], other, "%s: %.17g", text, m->p[j]);
  nh_method_format(m, name, sizeof name);
  char written[96];
  snprintf(written, sizeof written, "%s=%s", r->name, value);
  cr_expect(strstr(name, written) != NULL, "%s: written %s", text, name);
  nh_method_free(m);
}

Test(method_parameters, tables_are_the_documented_ones) {
  int seen = 0;
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    const method_param_row *rows[NH_MAX_PARAMS + 1];
    const int nrows = documented_rows(t->name, rows);
    cr_expect_eq(t->nparams, nrows, "%s: %d parameters, documented %d", t->name, t->nparams, nrows);
    if (t->nparams != nrows) continue;
    for (int j = 0; j < nrows; j++, seen++) {
      check_row(t, j, rows[j]);
      if (!t->takes_base) check_syntax(t, j, rows[j]);
    }
  }
  cr_expect_eq(seen, NDOC, "every documented row belongs to a registered method");
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
