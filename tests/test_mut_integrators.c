/* integrators/: checks added for mutation robustness (issue 16). */
#include <criterion/criterion.h>
#include <stdio.h>

#include "integrators/integrator.h"

/* A composition preserves the constraint exactly when its base does (method.c): nh_newmark keeps
 * mu(q).v = 0 (its table says NH_PRESERVES_CONSTRAINT), rk4 does not; every composition over
 * either answers as its base, whatever its own table says. */
Test(mut_integrators, composition_preserves_constraint_as_its_base) {
  static const char *const bases[] = {"nh_newmark(alpha=0.5)", "rk4"};
  char err[512], name[256];
  int compositions = 0;
  for (int b = 0; b < 2; b++) {
    nh_method *base = nh_method_parse(bases[b], err, sizeof err);
    cr_assert_not_null(base, "%s", err);
    const int want = (base->type->properties & NH_PRESERVES_CONSTRAINT) != 0;
    cr_expect_eq(want, b == 0, "%s: the table's own flag", bases[b]);
    cr_expect_eq(nh_method_preserves_constraint(base), want);
    for (int i = 0; nh_integrator_types[i]; i++) {
      const nh_integrator_type *t = nh_integrator_types[i];
      if (!t->takes_base) continue;
      snprintf(name, sizeof name, "%s(%s)", t->name, bases[b]);
      nh_method *m = nh_method_parse(name, err, sizeof err);
      if (!m) continue; /* a composition that refuses this base */
      cr_expect_eq(nh_method_preserves_constraint(m), want, "%s", name);
      compositions++;
      nh_method_free(m);
    }
    nh_method_free(base);
  }
  cr_expect_gt(compositions, 2, "only %d compositions parsed", compositions);
}
