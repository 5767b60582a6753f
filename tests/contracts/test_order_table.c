/* The order table (issue #3): every tests/orders/NAME.cfg is a convergence spec; each of its
 * methods must show its expected order (the claimed one, or a documented exception in the
 * spec's expected_orders) within the spec's order_tolerance (default ±0.15). One test per file. */
#include <criterion/criterion.h>
#include <criterion/parameterized.h>
#include <glob.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "studies/study.h"

#define ORDERS NHBENCH_SOURCE_DIR "/tests/orders/"

typedef struct {
  char path[512];
} order_spec;

static void free_specs(struct criterion_test_params *params) { cr_free(params->params); }

/* Every file of the folder, however many (cr_malloc'd: the parameters outlive this function). */
ParameterizedTestParameters(order_table, spec) {
  glob_t g;
  order_spec *specs = NULL;
  size_t n = 0;
  if (glob(ORDERS "*.cfg", 0, NULL, &g) == 0) {
    specs = cr_malloc(sizeof *specs * g.gl_pathc);
    for (size_t i = 0; specs && i < g.gl_pathc; i++) snprintf(specs[n++].path, sizeof specs[0].path, "%s", g.gl_pathv[i]);
    globfree(&g);
  }
  return cr_make_param_array(order_spec, specs, n, free_specs);
}

ParameterizedTest(order_spec *spec, order_table, spec) {
  nh_study st;
  nh_convergence_result r;
  char err[1024];
  cr_assert_eq(nh_study_load(spec->path, NULL, 0, &st, err, sizeof err), 0, "%s", err);
  cr_assert_eq(nh_run_convergence(&st, &r, err, sizeof err), 0, "%s", err);
  for (int m = 0; m < st.nmethods; m++) {
    cr_expect(r.order_ok[m], "%s: %s observed order %.3f (±%.2g), expected %d%s%s", spec->path,
              st.method_names[m], r.order[m], r.order_stderr[m], st.order_expected[m],
              st.order_reason[m][0] ? ": " : "", st.order_reason[m]);
    cr_expect_geq(r.fit_count[m], 3, "%s: %s: the fit used only %d points", spec->path, st.method_names[m],
                  r.fit_count[m]);
    if (nh_method_preserves_constraint(st.methods[m]))
      for (int i = 0; i < st.nh; i++)
        cr_expect_leq(r.residual[(size_t)m * st.nh + i], 1e-12, "%s: %s claims to preserve the constraint, residual %g at h=%g",
                      spec->path, st.method_names[m], r.residual[(size_t)m * st.nh + i], st.h[i]);
  }
  nh_convergence_result_free(&r);
  nh_study_free(&st);
}
