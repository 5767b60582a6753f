/* Every system's parameter table (name, kind, default, range) against the documented values, as
 * tests/contracts/test_method_parameters.c does for the methods: each range end accepted and the next
 * double beyond it refused with the exact message, and the system's name printed with every
 * parameter. A range or a default that moves changes what users' specs mean (issue 16). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/param.h"
#include "systems/system.h"
#include "tests/helpers.h"

/* ---- parameter tables ------------------------------------------------------------------------ */

/* The documented parameters (`nhbench list systems NAME`, the README's Systems table and the
 * papers' values in each help text). Defaults: the papers' values (spec/rattle.md §4 for the
 * knife edge, sleigh and disk; spec/herglotz.md §3.1–3.2 for the Foucault pendulum and the falling
 * disk: m = 28, l = 67, β = 49°, Ω = 7.2921159e-5, α = 1e-3; m = 5, R = 0.5, g = 9.81; the
 * notebooks' for the contact systems). Ranges: physical quantities that must be positive (masses,
 * inertias, lengths) start at 1e-6, gravity at 0; angles stop at ±π/2 (the knife edge's plane) and
 * ±90° (latitude); the rest as documented. */
typedef struct {
  const char *system, *name;
  nh_param_kind kind;
  double def, min, max;
} param_row;

#define PI_2 1.5707963267948966
#define PI 3.14159265358979323846
static const param_row documented[] = {
    {"particle", "omega2", NH_PARAM_REAL, 0, 0, 100},
    {"cvt", "eps", NH_PARAM_REAL, 0, -10, 10},
    {"contact_oscillator", "eps", NH_PARAM_REAL, 0, 0, 10},
    {"knife_edge", "m", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"knife_edge", "J", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"knife_edge", "g", NH_PARAM_REAL, 2, 0, 1e3},
    {"knife_edge", "alpha", NH_PARAM_REAL, 0.5235987755982988, -PI_2, PI_2}, /* π/6 */
    {"chaplygin_sleigh", "m", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"chaplygin_sleigh", "I", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"chaplygin_sleigh", "a", NH_PARAM_REAL, 0.5, -1e3, 1e3},
    {"vertical_disk", "m", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"vertical_disk", "I_r", NH_PARAM_REAL, 0.5, 1e-6, 1e6},
    {"vertical_disk", "I_h", NH_PARAM_REAL, 0.25, 1e-6, 1e6},
    {"vertical_disk", "R", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"falling_disk", "m", NH_PARAM_REAL, 5, 1e-6, 1e6},
    {"falling_disk", "R", NH_PARAM_REAL, 0.5, 1e-6, 1e3},
    {"falling_disk", "g", NH_PARAM_REAL, 9.81, 0, 1e3},
    {"falling_disk", "alpha", NH_PARAM_REAL, 0, 0, 10},
    {"falling_disk", "F_psi_const", NH_PARAM_REAL, 0, -1e6, 1e6},
    {"falling_disk", "F_psi_slope", NH_PARAM_REAL, 0, -1e6, 1e6},
    {"falling_disk", "F_phi_slope", NH_PARAM_REAL, 0, -1e6, 1e6},
    {"foucault_pendulum", "m", NH_PARAM_REAL, 28, 1e-6, 1e6},
    {"foucault_pendulum", "l", NH_PARAM_REAL, 67, 1e-6, 1e6},
    {"foucault_pendulum", "g", NH_PARAM_REAL, 9.81, 0, 1e3},
    {"foucault_pendulum", "beta_deg", NH_PARAM_REAL, 49, -90, 90},
    {"foucault_pendulum", "Omega", NH_PARAM_REAL, 7.2921159e-5, 0, 1},
    {"foucault_pendulum", "alpha", NH_PARAM_REAL, 1e-3, 0, 10},
    {"pendulum", "m", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"pendulum", "g", NH_PARAM_REAL, 1, 0, 1e6},
    {"pendulum", "l", NH_PARAM_REAL, 1, 1e-6, 1e6},
    {"oscillator", "omega", NH_PARAM_REAL, 1, 0, 1e3},
    {"damped_oscillator", "omega", NH_PARAM_REAL, 1, 0, 1e3},
    {"damped_oscillator", "alpha", NH_PARAM_REAL, 0.1, 0, 10},
    {"damped_oscillator", "beta", NH_PARAM_REAL, 0, -100, 100},
    {"damped_oscillator", "omega_f", NH_PARAM_REAL, 1.0471975511965976, 0, 1e3}, /* π/3 */
    {"rotational_symmetry", "omega2", NH_PARAM_REAL, 1, 0, 100},
    {"lane_emden", "n", NH_PARAM_INT, 1, 0, 9},
    {"lane_emden", "t0", NH_PARAM_REAL, 1, 0, 1e3},
    {"time_perturbed_kepler", "alpha", NH_PARAM_REAL, -0.07, -10, 10},
    {"time_perturbed_kepler", "theta", NH_PARAM_REAL, 6.283185307179586, 0, 1e3}, /* 2π */
    {"time_perturbed_kepler", "gamma", NH_PARAM_REAL, -1, -100, 100},
    {"spin_orbit", "ecc", NH_PARAM_REAL, 0.01, 0, 0.5},
    {"spin_orbit", "eps", NH_PARAM_REAL, 0.0075, 0, 1},
    {"spin_orbit", "omega", NH_PARAM_REAL, 1, 0, 1e3},
    {"spin_orbit", "lambda", NH_PARAM_REAL, 0.001, 0, 0.9},
    {"spin_orbit", "a", NH_PARAM_REAL, 0, -10, 10},
    {"spin_orbit", "mu", NH_PARAM_REAL, 0, -10, 10},
};
#define NDOC (int)(sizeof documented / sizeof documented[0])

/* The rows of `system`, in table order; their count. */
static int documented_rows(const char *system, const param_row **rows) {
  int n = 0;
  for (int i = 0; i < NDOC; i++)
    if (strcmp(documented[i].system, system) == 0) rows[n++] = &documented[i];
  return n;
}

/* The message nh_system_set_param gives for name=value outside [lo, hi]. */
static void out_of_range_message(char *buf, size_t len, const char *system, const char *name, double value, double lo,
                                 double hi) {
  char v[32], a[32], b[32];
  nh_format_double(v, sizeof v, value);
  nh_format_double(a, sizeof a, lo);
  nh_format_double(b, sizeof b, hi);
  snprintf(buf, len, "system %s: parameter %s=%s is out of range [%s, %s]", system, name, v, a, b);
}

/* Every registered system: its parameter table is the documented one, row for row; each range end
 * is accepted (inclusive ranges), the next double outside is refused with the message naming the
 * value and the range, and a refused value leaves the parameter as it was. The chaotic particles
 * take no parameter. */
Test(system_parameters, parameter_tables_are_the_documented_ones) {
  int seen = 0;
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    const param_row *rows[NH_MAX_PARAMS + 1];
    const int nrows = documented_rows(T->name, rows);
    cr_expect_eq(T->nparams, nrows, "%s: %d parameters, documented %d", T->name, T->nparams, nrows);
    if (T->nparams != nrows) continue;
    cr_expect(T->nparams > 0 || strncmp(T->name, "chaotic_particle", 16) == 0, "%s: no parameters", T->name);
    for (int j = 0; j < nrows; j++) {
      const nh_param_desc *d = &T->params[j];
      const param_row *r = rows[j];
      seen++;
      cr_expect_str_eq(d->name, r->name, "%s: parameter %d", T->name, j);
      cr_expect_eq(d->kind, r->kind, "%s.%s: kind", T->name, r->name);
      cr_expect_eq(d->def, r->def, "%s.%s: default %.17g, documented %.17g", T->name, r->name, d->def, r->def);
      cr_expect_eq(d->min, r->min, "%s.%s: min %.17g, documented %.17g", T->name, r->name, d->min, r->min);
      cr_expect_eq(d->max, r->max, "%s.%s: max %.17g, documented %.17g", T->name, r->name, d->max, r->max);
      cr_expect(d->choices == NULL, "%s.%s: a real parameter has no choices", T->name, r->name);
      /* The ends are accepted, the doubles just outside refused (one integer step for n). */
      nh_system sys = test_system_of(T, NULL);
      char err[256] = "", want[256];
      cr_expect_eq(sys.p[j], r->def, "%s.%s: nh_system_init sets the default", T->name, r->name);
      const double ends[2] = {r->min, r->max};
      for (int e = 0; e < 2; e++) {
        const double out = r->kind == NH_PARAM_INT ? ends[e] + (e ? 1 : -1) : nextafter(ends[e], e ? INFINITY : -INFINITY);
        cr_expect_eq(nh_system_set_param(&sys, r->name, ends[e], err, sizeof err), 0, "%s.%s = %.17g refused: %s",
                     T->name, r->name, ends[e], err);
        cr_expect_eq(sys.p[j], ends[e], "%s.%s: the end %.17g is set", T->name, r->name, ends[e]);
        cr_expect_eq(nh_system_set_param(&sys, r->name, out, err, sizeof err), -1, "%s.%s = %.17g accepted", T->name,
                     r->name, out);
        out_of_range_message(want, sizeof want, T->name, r->name, out, r->min, r->max);
        cr_expect_str_eq(err, want, "%s.%s: message", T->name, r->name);
        cr_expect_eq(sys.p[j], ends[e], "%s.%s: a refused value changed the parameter", T->name, r->name);
      }
    }
  }
  cr_expect_eq(seen, NDOC, "%d documented parameters checked of %d", seen, NDOC);
}

/* nh_system_format writes every parameter (none is quiet) except the particle's omega2, which
 * appears only when it differs from its default 0 (the papers' free particle): "particle()",
 * "particle(omega2=1)", "cvt(eps=0)", "chaotic_particle()". */
Test(system_parameters, format_names_every_parameter) {
  char buf[512], want[512];
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    nh_system sys = test_system_of(T, NULL);
    nh_system_format(&sys, buf, sizeof buf);
    size_t len = (size_t)snprintf(want, sizeof want, "%s(", T->name);
    int first = 1;
    for (int j = 0; j < T->nparams; j++) {
      if (strcmp(T->name, "particle") == 0) continue;
      char v[32];
      nh_format_double(v, sizeof v, T->params[j].def);
      len += (size_t)snprintf(want + len, sizeof want - len, "%s%s=%s", first ? "" : ",", T->params[j].name, v);
      first = 0;
    }
    snprintf(want + len, sizeof want - len, ")");
    cr_expect_str_eq(buf, want, "%s", T->name);
  }
  nh_system p = test_system("particle", "omega2=1");
  nh_system_format(&p, buf, sizeof buf);
  cr_expect_str_eq(buf, "particle(omega2=1)");
}
