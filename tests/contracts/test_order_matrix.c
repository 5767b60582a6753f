/* The order matrix (issues #3, #4): every base method of the registry, with its default
 * parameters, on every system of the registry it applies to, from the system's default initial
 * condition, must show its claimed order (±0.15) against the exact solution or the rk8pd
 * reference, and keep the constraint to round-off if it claims to. Built from the registries, so a
 * new method or system is covered without touching this file; the hand-written tests/orders/
 * specs add the parameter variants and compositions. One test per system. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "studies/study.h"

#include "tests/contracts/order_matrix_tables.h"

typedef struct {
  char system[64];
} matrix_case;

ParameterizedTestParameters(order_matrix, system) {
  static matrix_case cases[64];
  size_t n = 0;
  for (int i = 0; nh_system_types[i] && n < sizeof cases / sizeof *cases; i++)
    snprintf(cases[n++].system, sizeof cases[0].system, "%s", nh_system_types[i]->name);
  return cr_make_param_array(matrix_case, cases, n);
}

/* A convergence spec listing every base method that applies to the system. */
static int write_spec(const char *path, const char *system_name) {
  nh_system sys;
  nh_system_init(&sys, nh_system_type_find(system_name));
  double T = 1, h0 = 0.1;
  int halvings = 4, count = 0;
  for (size_t i = 0; i < sizeof settings / sizeof *settings; i++)
    if (strcmp(settings[i].system, system_name) == 0) T = settings[i].T, h0 = settings[i].h0, halvings = settings[i].halvings;
  FILE *f = fopen(path, "w");
  cr_assert(f, "cannot write %s", path);
  fprintf(f, "study = \"convergence\";\nsystem = \"%s\";\nT = %.17g;\nh0 = %.17g;\nhalvings = %d;\nmethods = [", system_name,
          T, h0, halvings);
  for (int i = 0; nh_integrator_types[i]; i++) {
    char err[512];
    /* Compositions are checked over their bases; tolerance-driven methods have no order in h. */
    if (nh_integrator_types[i]->takes_base || (nh_integrator_types[i]->properties & NH_TOLERANCE_DRIVEN)) continue;
    nh_method *m = nh_method_parse(nh_integrator_types[i]->name, err, sizeof err);
    cr_assert(m, "%s", err);
    if (nh_method_applies(m, &sys, err, sizeof err) == 0) fprintf(f, "%s\"%s\"", count++ ? ", " : "", m->type->name);
    nh_method_free(m);
  }
  fprintf(f, "];\nexpected_orders = (");
  int e = 0;
  for (size_t i = 0; i < sizeof exceptions / sizeof *exceptions; i++)
    if (strcmp(exceptions[i].system, system_name) == 0)
      fprintf(f, "%s{ method = \"%s\"; order = %d; reason = \"%s\"; }", e++ ? ", " : "", exceptions[i].method,
              exceptions[i].order, exceptions[i].reason);
  fprintf(f, ");\n");
  fclose(f);
  return count;
}

ParameterizedTest(matrix_case *c, order_matrix, system) {
  char path[256], err[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-matrix-%d-%s.cfg", (int)getpid(), c->system);
  int count = write_spec(path, c->system);
  cr_assert_geq(count, 2, "%s: only %d methods apply", c->system, count);
  nh_study st;
  nh_convergence_result r;
  cr_assert_eq(nh_study_load(path, NULL, 0, &st, err, sizeof err), 0, "%s", err);
  cr_assert_eq(nh_run_convergence(&st, &r, err, sizeof err), 0, "%s", err);
  for (int m = 0; m < st.nmethods; m++) {
    cr_expect(r.order_ok[m], "%s: %s observed order %.3f, expected %d", c->system, st.method_names[m], r.order[m],
              st.order_expected[m]);
    for (int i = 0; nh_method_preserves_constraint(st.methods[m]) && i < st.nh; i++)
      cr_expect_leq(r.residual[(size_t)m * st.nh + i], 1e-12, "%s: %s claims to preserve the constraint: %g", c->system,
                    st.method_names[m], r.residual[(size_t)m * st.nh + i]);
  }
  nh_convergence_result_free(&r);
  nh_study_free(&st);
  remove(path);
}

/* The composition matrix (issue 46 item 3): every composition table of the registry over every
 * base that claims symmetry — each registry method whose default parameters make it a symmetric
 * one-step method, and the variants below — on every system the base applies to, must show the
 * order the composition claims. One test per (system, table).
 *
 * Steps h = H/N with N below, from a per-table range where the errors lie between the 1e-11
 * floor and 1e-3 on these systems. The tolerance is 0.5: a composition over a symmetric base is
 * symmetric, so its true order is even and a false claim is off by 2 or more, while order 8's
 * slopes above the floor are still pre-asymptotic (8.2-8.7 on particle at T = 1). */
static const char *const symmetric_variants[] = {
    "adjoint_pair(nh_newmark(alpha=0))",  /* the paper's Psi_h, eq. (18) */
    "nh_newmark(beta=0.1,beta2=0.1)",     /* the general Newton path, symmetric (spec/newmark.md 2.5) */
};

typedef struct {
  const char *system, *initial;
  double T, H, floor; /* floor 0: EXACT_ERROR_FLOOR against an exact solution, else 1e-11 */
  const char *why;
} composition_settings;

static const composition_settings composition_overrides[] = {
    {"vertical_disk", NULL, 20, 4, 1e-11,
     "from ic1 the errors of orders 6 and 8 reach the floor within h <= 0.5 at T = 1; at T = 20 round-off "
     "reaches 1e-12 (theta grows to 20)"},
    {"spin_orbit", "fig1d", 20, 2, 0,
     "the default fig1a (lambda = 0.001) has errors below the floor for h < 1, where the forcing's harmonics "
     "(k up to 9) are not resolved; fig1d's lambda = 0.2 puts order 8's errors above it"},
    {"foucault_pendulum", NULL, 3, 3, 0,
     "the index-reduced ODE is singular at the origin, first crossed at t ~ 4 s: later, the error of an "
     "order-4 composition depends on how near a node comes to it (T = 200: 8.8e-6 .. 8.9e-5, not monotone in h)"},
};

/* Against an exact solution errors are measured down to round-off, ~1e-15 for T/h * stages <= 2400
 * sub-steps: order 8's fits then see h where the slope is asymptotic. */
#define EXACT_ERROR_FLOOR 1e-13

static const int steps_per_H[3][13] = {
    {10, 12, 16, 20, 24, 32, 40, 48, 64, 80, 96, 128, 160}, /* order 4 */
    {2, 3, 4, 5, 6, 8, 10, 12, 16, 20, 24, 32},              /* order 6 */
    {2, 3, 4, 5, 6, 8, 10, 12, 16},                          /* order 8 */
};

typedef struct {
  char system[64], table[32];
} composition_case;

/* A composition type raises the order of a symmetric order-2 base (adjoint_pair does not). */
static int raises_order(const nh_integrator_type *t) {
  char text[128], err[512];
  snprintf(text, sizeof text, "%s(nh_newmark)", t->name);
  nh_method *m = nh_method_parse(text, err, sizeof err);
  const int p = m ? nh_method_order(m) : 0;
  nh_method_free(m);
  return p > 2;
}

ParameterizedTestParameters(order_matrix, composition) {
  static composition_case cases[256];
  size_t n = 0;
  for (int i = 0; nh_system_types[i]; i++)
    for (int j = 0; nh_integrator_types[j]; j++)
      if (nh_integrator_types[j]->takes_base && raises_order(nh_integrator_types[j]) &&
          n < sizeof cases / sizeof *cases) {
        snprintf(cases[n].system, sizeof cases[n].system, "%s", nh_system_types[i]->name);
        snprintf(cases[n].table, sizeof cases[n].table, "%s", nh_integrator_types[j]->name);
        n++;
      }
  return cr_make_param_array(composition_case, cases, n);
}

/* Appends "table(base)" to the spec when the composition parses (the base is symmetric of
 * order 2) and applies to sys. */
static int add_composition(FILE *f, const char *table, const char *base, const nh_system *sys, int count) {
  char text[512], err[1024];
  snprintf(text, sizeof text, "%s(%s)", table, base);
  nh_method *m = nh_method_parse(text, err, sizeof err);
  const int ok = m && nh_method_applies(m, sys, err, sizeof err) == 0;
  if (ok) fprintf(f, "%s\"%s\"", count ? ", " : "", text);
  nh_method_free(m);
  return ok;
}

static const composition_settings *composition_settings_of(const char *system) {
  static const composition_settings plain = {NULL, NULL, 1, 1, 0, NULL};
  for (size_t i = 0; i < sizeof composition_overrides / sizeof *composition_overrides; i++)
    if (strcmp(composition_overrides[i].system, system) == 0) return &composition_overrides[i];
  return &plain;
}

/* A convergence spec of `table` over every symmetric base that applies to the system; returns
 * how many methods it lists. */
static int write_composition_spec(const char *path, const composition_case *c) {
  nh_system sys;
  nh_system_init(&sys, nh_system_type_find(c->system));
  const composition_settings *s = composition_settings_of(c->system);
  char text[128], err[512];
  snprintf(text, sizeof text, "%s(nh_newmark)", c->table);
  nh_method *probe = nh_method_parse(text, err, sizeof err);
  cr_assert(probe, "%s", err);
  const int row = nh_method_order(probe) / 2 - 2; /* orders 4, 6, 8 */
  nh_method_free(probe);
  cr_assert(row >= 0 && row < 3, "%s: no step range for order %d", c->table, 2 * row + 4);
  FILE *f = fopen(path, "w");
  cr_assert(f, "cannot write %s", path);
  fprintf(f, "study = \"convergence\";\nsystem = \"%s\";\n", c->system);
  if (s->initial) fprintf(f, "initial = \"%s\";\n", s->initial);
  fprintf(f, "T = %#.17g;\norder_tolerance = 0.5;\nerror_floor = %g;\nh = [", s->T,
          s->floor ? s->floor : nh_has_exact_solution(&sys) ? EXACT_ERROR_FLOOR : 1e-11);
  for (int j = 0; j < 13 && steps_per_H[row][j]; j++) fprintf(f, "%s%#.17g", j ? ", " : "", s->H / steps_per_H[row][j]);
  fprintf(f, "];\nmethods = [");
  int count = 0;
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    if (t->takes_base || (t->properties & (NH_TOLERANCE_DRIVEN | NH_HISTORY))) continue;
    count += add_composition(f, c->table, t->name, &sys, count);
  }
  for (size_t i = 0; i < sizeof symmetric_variants / sizeof *symmetric_variants; i++)
    count += add_composition(f, c->table, symmetric_variants[i], &sys, count);
  fprintf(f, "];\n");
  fclose(f);
  return count;
}

ParameterizedTest(composition_case *c, order_matrix, composition) {
  char path[256], err[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-compositions-%d-%s-%s.cfg", (int)getpid(), c->system, c->table);
  if (write_composition_spec(path, c) == 0) {
    remove(path);
    cr_skip_test("%s: no symmetric base applies to %s", c->table, c->system);
  }
  nh_study st;
  nh_convergence_result r;
  cr_assert_eq(nh_study_load(path, NULL, 0, &st, err, sizeof err), 0, "%s", err);
  cr_assert_eq(nh_run_convergence(&st, &r, err, sizeof err), 0, "%s", err);
  for (int m = 0; m < st.nmethods; m++)
    cr_expect(r.order_ok[m], "%s: %s observed order %.3f, claimed %d", c->system, st.method_names[m], r.order[m],
              st.order_expected[m]);
  nh_convergence_result_free(&r);
  nh_study_free(&st);
  remove(path);
}
