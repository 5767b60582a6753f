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

#include "tests/contracts/order_matrix_specs.h"

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
  char line[128];
  snprintf(line, sizeof line, "system = \"%s\";\n", system_name);
  return write_base_spec(path, system_name, line, &sys, NULL);
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

/* The composition matrix (order_matrix_specs.h). One test per (system, table). */
typedef struct {
  char system[64], table[32];
} composition_case;

ParameterizedTestParameters(order_matrix, composition) {
  static composition_case cases[256];
  size_t n = 0;
  for (int i = 0; nh_system_types[i]; i++)
    for (int j = 0; nh_integrator_types[j]; j++)
      if (nh_integrator_types[j]->takes_base && composition_order(nh_integrator_types[j]->name) > 2 &&
          n < sizeof cases / sizeof *cases) {
        snprintf(cases[n].system, sizeof cases[n].system, "%s", nh_system_types[i]->name);
        snprintf(cases[n].table, sizeof cases[n].table, "%s", nh_integrator_types[j]->name);
        n++;
      }
  return cr_make_param_array(composition_case, cases, n);
}

/* A convergence spec of the case's table over every symmetric base that applies to its system. */
static int write_case_spec(const char *path, const composition_case *c) {
  nh_system sys;
  nh_system_init(&sys, nh_system_type_find(c->system));
  char line[128];
  snprintf(line, sizeof line, "system = \"%s\";\n", c->system);
  return write_composition_spec(path, c->system, line, c->table, &sys, NULL);
}

ParameterizedTest(composition_case *c, order_matrix, composition) {
  char path[256], err[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-compositions-%d-%s-%s.cfg", (int)getpid(), c->system, c->table);
  if (write_case_spec(path, c) == 0) {
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
