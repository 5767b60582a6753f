/* Every system's parameters, taken from the registry (systems/systems.def): each range end
 * accepted and the next double beyond it refused with a message naming the value and the range,
 * the system's name printed with every parameter, and the default the one its documentation states
 * (the help text, tests/param_docs.h) or, where the help states none, the papers' value (the short
 * list below, each with its spec section). A new system is covered with no edit here; a range or a
 * default that moves changes what users' specs mean (issue 16), and issue 48 item 6 asks for tables
 * derived from the registries, not copied. tests/contracts/test_method_parameters.c does the same
 * for the methods. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/param.h"
#include "systems/system.h"
#include "tests/helpers.h"
#include "tests/param_docs.h"

/* The type named `name` in the registry, or NULL. */
static const nh_system_type *system_named(const char *name) {
  for (int s = 0; nh_system_types[s]; s++)
    if (strcmp(nh_system_types[s]->name, name) == 0) return nh_system_types[s];
  return NULL;
}

/* Every registered system, every parameter: a name, a help text, a kind a system may take (real or
 * integer: no system parameter is a named choice), a finite range holding the default (integers at
 * integer points), which nh_system_init sets; each end accepted, the double just outside (an
 * integer: the next integer) refused with the message naming value and range that reads back
 * exactly, and a refused value leaves the parameter as it was. */
Test(system_parameters, each_range_end_accepted_and_the_next_double_refused) {
  int checked = 0;
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    cr_expect(T->nparams >= 0 && T->nparams <= NH_MAX_PARAMS, "%s: %d parameters", T->name, T->nparams);
    for (int j = 0; j < T->nparams; j++) {
      const nh_param_desc *d = &T->params[j];
      cr_assert(d->name && d->name[0], "%s: parameter %d has no name", T->name, j);
      for (int i = 0; i < j; i++) cr_expect_str_neq(T->params[i].name, d->name, "%s: two parameters so named", T->name);
      cr_expect(d->help && d->help[0], "%s.%s: no help text", T->name, d->name);
      cr_expect(d->kind == NH_PARAM_REAL || d->kind == NH_PARAM_INT, "%s.%s: kind %d", T->name, d->name, d->kind);
      cr_expect(d->choices == NULL, "%s.%s: choices on a number", T->name, d->name);
      cr_expect(isfinite(d->min) && isfinite(d->max) && d->min <= d->def && d->def <= d->max,
                "%s.%s: default %.17g outside [%.17g, %.17g]", T->name, d->name, d->def, d->min, d->max);
      if (d->kind == NH_PARAM_INT)
        cr_expect(d->def == floor(d->def) && d->min == floor(d->min) && d->max == floor(d->max),
                  "%s.%s: an integer parameter at a fraction", T->name, d->name);
      nh_system sys = test_system_of(T, NULL);
      cr_expect_eq(sys.p[j], d->def, "%s.%s: nh_system_init sets the default", T->name, d->name);
      char err[256] = "", prefix[128];
      snprintf(prefix, sizeof prefix, "system %s: parameter %s=", T->name, d->name);
      const double ends[2] = {d->min, d->max};
      for (int e = 0; e < 2; e++) {
        const double out =
            d->kind == NH_PARAM_INT ? ends[e] + (e ? 1 : -1) : nextafter(ends[e], e ? INFINITY : -INFINITY);
        cr_expect_eq(nh_system_set_param(&sys, d->name, ends[e], err, sizeof err), 0, "%s.%s = %.17g refused: %s",
                     T->name, d->name, ends[e], err);
        cr_expect_eq(sys.p[j], ends[e], "%s.%s: the end %.17g is set", T->name, d->name, ends[e]);
        cr_expect_eq(nh_system_set_param(&sys, d->name, out, err, sizeof err), -1, "%s.%s = %.17g accepted", T->name,
                     d->name, out);
        cr_expect(doc_is_range_message(err, prefix, out, d->min, d->max), "%s.%s = %.17g: message '%s'", T->name,
                  d->name, out, err);
        cr_expect_eq(sys.p[j], ends[e], "%s.%s: a refused value changed the parameter", T->name, d->name);
      }
      checked++;
    }
  }
  cr_expect_gt(checked, 0);
}

/* nh_system_format writes the system's name and every parameter, name=value with the value reading
 * back exactly, in table order, except a quiet parameter at its default: "cvt(eps=0)",
 * "chaotic_particle()", and "particle()" (omega2 is quiet: the papers' free particle) but
 * "particle(omega2=1)". Read back here, not rebuilt with the printer's formats. */
Test(system_parameters, format_names_every_parameter) {
  char buf[512];
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    for (int moved = 0; moved < 2; moved++) {
      nh_system sys = test_system_of(T, NULL);
      char err[256] = "";
      /* moved: every parameter at its min, or its max where that is the default */
      for (int j = 0; moved && j < T->nparams; j++) {
        const nh_param_desc *d = &T->params[j];
        cr_assert_eq(nh_system_set_param(&sys, d->name, d->def == d->min ? d->max : d->min, err, sizeof err), 0, "%s",
                     err);
      }
      nh_system_format(&sys, buf, sizeof buf);
      const size_t n = strlen(T->name);
      cr_assert(strncmp(buf, T->name, n) == 0 && buf[n] == '(', "%s: %s", T->name, buf);
      const char *p = buf + n + 1;
      for (int j = 0; j < T->nparams; j++) {
        const nh_param_desc *d = &T->params[j];
        if (d->quiet && sys.p[j] == d->def) continue;
        const size_t k = strlen(d->name);
        cr_assert(strncmp(p, d->name, k) == 0 && p[k] == '=', "%s: %s missing at '%s' in %s", T->name, d->name, p, buf);
        char *end;
        const double v = strtod(p + k + 1, &end);
        cr_expect_eq(v, sys.p[j], "%s: %s read back as %.17g, is %.17g", buf, d->name, v, sys.p[j]);
        p = end;
        if (*p == ',') p++;
      }
      cr_expect_str_eq(p, ")", "%s: after the parameters", buf);
    }
  }
  nh_system sys = test_system("particle", "omega2=1");
  nh_system_format(&sys, buf, sizeof buf);
  cr_expect_str_eq(buf, "particle(omega2=1)");
  sys = test_system("particle", NULL);
  nh_system_format(&sys, buf, sizeof buf);
  cr_expect_str_eq(buf, "particle()");
}

/* The help text's statements, as tests/param_docs.h reads them (its forms, each with the help it
 * comes from), on a few texts: a negative control for the reader itself. */
Test(system_parameters, help_reader_on_known_texts) {
  doc_stated d = doc_read("bob mass [kg] (paper: 28, Paris 1851)");
  cr_expect(!d.has_default && d.n_one_of == 1 && d.one_of[0] == 28);
  d = doc_read("damping alpha, force -alpha xdot (papers: 0.01, 0.1, 1, 2; alpha = 2 omega is critical)");
  cr_expect(d.n_one_of == 4 && d.one_of[1] == 0.1 && d.one_of[3] == 2 && d.n_in_range == 4);
  d = doc_read("inclination of the plane in radians (default pi/6)");
  cr_expect(d.has_default && doc_same(d.def, 0.5235987755982988), "%.17g", d.def);
  d = doc_read("damping angular frequency (notebook: 2 pi, pi)");
  cr_expect(d.n_one_of == 2 && d.one_of[0] == 2 * 3.14159265358979323846 && d.one_of[1] == 3.14159265358979323846);
  d = doc_read("flattening epsilon (notebook: 0.75 * 0.01)");
  cr_expect(d.n_one_of == 1 && doc_same(d.one_of[0], 0.0075));
  d = doc_read("(notebook: 1 resonant, sqrt 2)");
  cr_expect(d.n_one_of == 2 && d.one_of[0] == 1 && d.one_of[1] == sqrt(2));
  d = doc_read("polytropic index (notebook: 0, ..., 9; exact for 0, 1, 5)");
  cr_expect(d.n_one_of == 2 && d.one_of_is_range && d.one_of[1] == 9);
  d = doc_read("constant torque (notebook default 0)");
  cr_expect(d.has_default && d.def == 0 && d.n_one_of == 0);
  d = doc_read("gravity (not in the paper; spec 6 suggests 9.81)");
  cr_expect(d.n_one_of == 1 && d.one_of[0] == 9.81);
  d = doc_read("gravity, V = m g y (spec/rattle.md 4 F suggests g = 1; g = 0: free circle)");
  cr_expect(d.n_one_of == 1 && d.one_of[0] == 1);
  d = doc_read("torque [N m] (Exp 3: 1/16)");
  cr_expect(d.n_one_of == 0 && d.n_in_range == 1 && d.in_range[0] == 0.0625);
  d = doc_read("Rayleigh damping (paper: 1e-3 Exp 1, 1e-4 Exp 2)");
  cr_expect(d.n_one_of == 2 && d.one_of[0] == 1e-3 && d.one_of[1] == 1e-4);
  /* what states nothing */
  d = doc_read("gravitational acceleration (g sin alpha = 1 with the defaults)");
  cr_expect(!d.has_default && d.n_one_of == 0 && d.n_in_range == 0);
  d = doc_read("omega^2 of the potential (spec/discretization.md 3.3); 0 = free particle");
  cr_expect(!d.has_default && d.n_one_of == 0 && d.n_in_range == 0);
  d = doc_read("Lobatto stages: 2, 3 or 4 (order 2s - 2: 2, 4, 6); 5-point (odelab's Spark; 5-point)");
  cr_expect(!d.has_default && d.n_one_of == 0 && d.n_in_range == 0);
}

/* Every system parameter whose help states its default or the papers' values (tests/param_docs.h):
 * the default is the one stated, or one of the values listed (within them for "a, ..., b"), and
 * every value the help states (the papers', an experiment's) is inside the range, so that a range
 * that moves past a paper's value fails here. */
Test(system_parameters, defaults_are_the_ones_the_help_states) {
  int stated = 0;
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    for (int j = 0; j < T->nparams; j++) {
      const nh_param_desc *d = &T->params[j];
      const doc_stated st = doc_read(d->help);
      if (st.has_default) {
        cr_expect(doc_same(d->def, st.def), "%s.%s: default %.17g, the help says %.17g: %s", T->name, d->name, d->def,
                  st.def, d->help);
        cr_expect(st.def_word[0] == '\0', "%s.%s: a number's default named '%s'", T->name, d->name, st.def_word);
      }
      if (st.n_one_of > 0) {
        int found = 0;
        double lo = INFINITY, hi = -INFINITY;
        for (int i = 0; i < st.n_one_of; i++) {
          found |= doc_same(d->def, st.one_of[i]);
          lo = fmin(lo, st.one_of[i]), hi = fmax(hi, st.one_of[i]);
        }
        if (st.one_of_is_range) found = lo <= d->def && d->def <= hi;
        cr_expect(found, "%s.%s: default %.17g is not among the values its help states: %s", T->name, d->name, d->def,
                  d->help);
      }
      for (int i = 0; i < st.n_in_range; i++)
        cr_expect(d->min <= st.in_range[i] && st.in_range[i] <= d->max,
                  "%s.%s: the help's value %.17g outside the range [%.17g, %.17g]: %s", T->name, d->name,
                  st.in_range[i], d->min, d->max, d->help);
      stated += st.has_default || st.n_one_of > 0;
    }
  }
  cr_expect_gt(stated, 0, "no help text states a default");
}

/* The papers' values of the systems they describe, from the spec files (shared/spec/), each with
 * its section: the defaults are these. Only values the papers (or the spec's suggested choices
 * for what the papers leave open) give; the ranges are not copied here. Where the help text states
 * the value too, it must be among the values it states (so the two sources agree). */
static const struct {
  const char *system, *param;
  double value;
  const char *source;
} papers[] = {
    {"foucault_pendulum", "m", 28, "spec/herglotz.md §3.1 [paper]"},
    {"foucault_pendulum", "l", 67, "spec/herglotz.md §3.1 [paper]"},
    {"foucault_pendulum", "beta_deg", 49, "spec/herglotz.md §3.1 [paper]"},
    {"foucault_pendulum", "alpha", 1e-3, "spec/herglotz.md §1 item 3, Exp 1"},
    {"foucault_pendulum", "g", 9.81, "spec/herglotz.md §6 (the disk's value)"},
    {"foucault_pendulum", "Omega", 7.2921159e-5, "spec/herglotz.md §6 (sidereal)"},
    {"falling_disk", "m", 5, "spec/herglotz.md §3.2 [paper]"},
    {"falling_disk", "R", 0.5, "spec/herglotz.md §3.2 [paper]"},
    {"falling_disk", "g", 9.81, "spec/herglotz.md §3.2 [paper]"},
    {"knife_edge", "m", 1, "spec/rattle.md §4 A [suggested]: m = J = 1"},
    {"knife_edge", "J", 1, "spec/rattle.md §4 A [suggested]"},
    {"knife_edge", "g", 2, "spec/rattle.md §4 A [suggested]: g sin alpha = 1, g = 2"},
    {"knife_edge", "alpha", 3.14159265358979323846 / 6, "spec/rattle.md §4 A [suggested]: alpha = pi/6"},
    {"chaplygin_sleigh", "m", 1, "spec/rattle.md §4 B [suggested]"},
    {"chaplygin_sleigh", "I", 1, "spec/rattle.md §4 B [suggested]"},
    {"chaplygin_sleigh", "a", 0.5, "spec/rattle.md §4 B [suggested]"},
    {"vertical_disk", "m", 1, "spec/rattle.md §4 D [suggested]"},
    {"vertical_disk", "I_r", 0.5, "spec/rattle.md §4 D [suggested]"},
    {"vertical_disk", "I_h", 0.25, "spec/rattle.md §4 D [suggested]"},
    {"vertical_disk", "R", 1, "spec/rattle.md §4 D [suggested]"},
    {"rotational_symmetry", "omega2", 1, "spec/rattle.md §4 E"},
    {"pendulum", "m", 1, "spec/rattle.md §4 F: M = I"},
    {"pendulum", "g", 1, "spec/rattle.md §4 F [suggested]"},
    {"pendulum", "l", 1, "spec/rattle.md §4 F: phi = (x^2 + y^2 - 1)/2"},
    {"particle", "omega2", 0, "spec/newmark.md §3.1: the free particle"},
    {"cvt", "eps", 0, "spec/newmark.md §3.3: eps = 0, the reversible case (Fig. 4)"},
};

Test(system_parameters, defaults_are_the_papers_values) {
  for (size_t i = 0; i < sizeof papers / sizeof *papers; i++) {
    const nh_system_type *T = system_named(papers[i].system);
    cr_assert_not_null(T, "%s: not registered", papers[i].system);
    const int j = nh_param_index(T->params, T->nparams, papers[i].param);
    cr_assert_geq(j, 0, "%s has no parameter %s", papers[i].system, papers[i].param);
    cr_expect(doc_same(T->params[j].def, papers[i].value), "%s.%s: default %.17g, %s gives %.17g", papers[i].system,
              papers[i].param, T->params[j].def, papers[i].source, papers[i].value);
    const doc_stated st = doc_read(T->params[j].help);
    int among = st.n_one_of == 0;
    for (int k = 0; k < st.n_one_of; k++) among |= doc_same(st.one_of[k], papers[i].value);
    cr_expect(among, "%s.%s: the help's values leave out %.17g (%s): %s", papers[i].system, papers[i].param,
              papers[i].value, papers[i].source, T->params[j].help);
  }
}
