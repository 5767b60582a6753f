/* The system lane entry points (nh_lanes_* in systems/system.h: a system's lane kernel when it has
 * one, else its scalar functions lane by lane) against the scalar functions, bit for bit, on every
 * registered system at its default parameters and on every instruction set this CPU has: each
 * lane's numbers must be those of the scalar path at that lane's point (core/lanes.h), including
 * at q = 0, on a NaN lane and at huge values, where a reordered sum, a dropped 0·x or a select
 * instead of fmax would show. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <omp.h>
#include <string.h>

#include "systems/lane_kernels.h"
#include "systems/system.h"
#include "tests/helpers.h"

enum { GROUPS = 8 };

/* Lane group g's points (q, v, t in lane layout): random in [-2, 2], and special lanes: group 1 all
 * q = 0, group 2 a NaN in q on lane 3 and in v on lane 5, group 3 huge values (±1e150) on lanes
 * 0-3, group 4 negative zeros, group 5 an infinite component of v on every lane (a different one
 * from lane to lane) and of q on odd lanes: 0·∞ is NaN, so a product by a constant 0 that a kernel
 * leaves out shows there. */
static void group_points(gsl_rng *rng, int n, int g, double *q, double *v, double *t) {
  for (int l = 0; l < NH_LANES; l++) {
    t[l] = 4 * gsl_rng_uniform(rng) - 2;
    for (int i = 0; i < n; i++) {
      q[i * NH_LANES + l] = 4 * gsl_rng_uniform(rng) - 2;
      v[i * NH_LANES + l] = 4 * gsl_rng_uniform(rng) - 2;
      if (g == 1) q[i * NH_LANES + l] = 0;
      if (g == 3 && l < 4) q[i * NH_LANES + l] *= (i + l) % 2 ? 1e150 : -1e150;
      if (g == 3 && l == 2) v[i * NH_LANES + l] *= 1e150;
      if (g == 4 && (i + l) % 2) q[i * NH_LANES + l] = -0.0, v[i * NH_LANES + l] = -0.0;
      if (g == 5 && i == l % n) v[i * NH_LANES + l] = l % 3 ? INFINITY : -INFINITY;
      if (g == 5 && i == (l / 2) % n && l % 2) q[i * NH_LANES + l] = -INFINITY;
    }
  }
  if (g == 2) q[(n - 1) * NH_LANES + 3] = NAN, v[0 * NH_LANES + 5] = NAN, q[0 * NH_LANES + 6] = NAN;
}

static void lane_point(int n, const double *x, int l, double *p) {
  for (int i = 0; i < n; i++) p[i] = x[i * NH_LANES + l];
}

/* count values per lane of got (lane layout) against want (the scalar result at lane l), to the bit
 * (memcmp: −0 is not 0), a NaN against a NaN: IEEE 754 leaves the sign and payload of a NaN result
 * unspecified, and GCC, which keeps every other bit, rewrites (−s) − c as (−c) − s (a NaN s then
 * comes out with the other sign), differently in different inlining contexts. */
static void expect_lane_bits(const char *system, const char *isa, const char *what, int group, int l, int count,
                             const double *got, const double *want) {
  for (int i = 0; i < count; i++)
    cr_expect(!memcmp(&got[i * NH_LANES + l], &want[i], sizeof(double)) ||
                  (isnan(got[i * NH_LANES + l]) && isnan(want[i])),
              "%s on %s, %s: group %d lane %d entry %d is %.17g, the scalar path gives %.17g", system, isa, what, group,
              l, i, got[i * NH_LANES + l], want[i]);
}

typedef void (*lanes_of_q)(const nh_system *sys, const double *q, double *out);

static void compare_group(const nh_system *sys, const char *isa, int g, const double *q, const double *v,
                          const double *t) {
  const nh_system_type *T = sys->type;
  const int n = sys->n, k = sys->k;
  const char *name = T->name;
  static double got[NH_MAX_K * NH_MAX_N * NH_MAX_N * NH_LANES];
  double want[NH_MAX_K * NH_MAX_N * NH_MAX_N], res[NH_LANES];
  int status[NH_LANES];
  const struct {
    const char *name;
    lanes_of_q lanes;
    void (*scalar)(const double *p, const double *q, double *out);
    int count;
  } of_q[] = {
      {"grad_potential", nh_lanes_grad_potential, T->grad_potential, n},
      {"hess_potential", nh_lanes_hess_potential, T->hess_potential, n * n},
      {"constraints", nh_lanes_constraints, T->constraints, k * n},
      {"constraints_jacobian", nh_lanes_constraints_jacobian, T->constraints_jacobian, k * n * n},
  };
  for (size_t f = 0; f < sizeof of_q / sizeof *of_q; f++) {
    of_q[f].lanes(sys, q, got);
    for (int l = 0; l < NH_LANES; l++) {
      double ql[NH_MAX_N];
      lane_point(n, q, l, ql);
      of_q[f].scalar(sys->p, ql, want);
      expect_lane_bits(name, isa, of_q[f].name, g, l, of_q[f].count, got, want);
    }
  }
  double V[NH_LANES], E[NH_LANES], D[NH_MAX_K * NH_MAX_N * NH_LANES];
  nh_lanes_potential(sys, q, V);
  nh_lanes_kinetic_energy(sys, q, v, E);
  nh_lanes_constraint_derivative(sys, q, v, D); /* v as the vector w it contracts */
  for (int l = 0; l < NH_LANES; l++) {
    double ql[NH_MAX_N], vl[NH_MAX_N];
    lane_point(n, q, l, ql), lane_point(n, v, l, vl);
    want[0] = T->potential(sys->p, ql);
    expect_lane_bits(name, isa, "potential", g, l, 1, V, want);
    want[0] = nh_kinetic_energy(sys, ql, vl);
    expect_lane_bits(name, isa, "nh_kinetic_energy", g, l, 1, E, want);
    nh_constraint_derivative(sys, ql, vl, want);
    expect_lane_bits(name, isa, "nh_constraint_derivative", g, l, k * n, D, want);
  }
  nh_lanes_constraint_residual(sys, q, v, res);
  double lambda[NH_MAX_K * NH_LANES], mult[NH_MAX_K];
  nh_lanes_acceleration(sys, t, q, v, got, lambda, status);
  for (int l = 0; l < NH_LANES; l++) {
    double ql[NH_MAX_N], vl[NH_MAX_N];
    lane_point(n, q, l, ql), lane_point(n, v, l, vl);
    want[0] = nh_constraint_residual(sys, ql, vl);
    expect_lane_bits(name, isa, "nh_constraint_residual", g, l, 1, res, want);
    const int st = nh_acceleration(sys, t[l], ql, vl, want);
    cr_expect_eq(status[l], st, "%s on %s, nh_acceleration: group %d lane %d status %d, the scalar path %d", name, isa,
                 g, l, status[l], st);
    if (st != 0) /* where it fails nh_acceleration leaves a as it was */
      continue;
    expect_lane_bits(name, isa, "nh_acceleration", g, l, n, got, want);
    nh_multiplier(sys, t[l], ql, vl, mult);
    expect_lane_bits(name, isa, "nh_multiplier", g, l, sys->k, lambda, mult);
  }
}

Test(lane_kernels, every_system_every_isa_bit_for_bit) {
  const nh_isa chosen = nh_lanes_isa();
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 51);
  int kernels = 0;
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system sys = test_system_of(nh_system_types[s], NULL);
    const nh_system_kernels *kn = sys.type->kernels;
    kernels += kn && kn->hess_potential_lanes;
    for (int isa = 0; isa < NH_ISA_COUNT; isa++) {
      if (!nh_isa_supported((nh_isa)isa)) continue;
      cr_assert_eq(nh_lanes_use_isa((nh_isa)isa), 0);
      for (int g = 0; g < GROUPS; g++) {
        _Alignas(64) double q[NH_MAX_N * NH_LANES], v[NH_MAX_N * NH_LANES], t[NH_LANES];
        group_points(rng, sys.n, g, q, v, t);
        compare_group(&sys, nh_isa_name((nh_isa)isa), g, q, v, t);
      }
    }
  }
  nh_lanes_use_isa(chosen);
  gsl_rng_free(rng);
  /* The kernels this test is about are there: chaotic_particle, particle, cvt, knife_edge. */
  cr_expect_geq(kernels, 4, "%d systems with lane kernels", kernels);
}

/* ---- nh_lane_map_memo (systems/lane_kernels.h) -------------------------------------------------- */

/* 1/x counting its calls: its value tells −0 from 0 (−∞, ∞), and the count tells a kept value from
 * a call. */
static long reciprocal_calls;
static double reciprocal(double x) {
  reciprocal_calls++;
  return 1 / x;
}

/* out against 1/x on every lane, to the bit (a NaN against a NaN). */
static void expect_reciprocals(const double *x, const double *out, const char *what) {
  for (int l = 0; l < NH_LANES; l++) {
    const double want = 1 / x[l];
    cr_expect(memcmp(&out[l], &want, sizeof want) == 0 || (isnan(out[l]) && isnan(want)), "%s, lane %d: %g, not %g",
              what, l, out[l], want);
  }
}

/* The first call, a call at the same bits (kept: no call of f), one lane changed, −0 for 0, and an
 * earlier point again (a memo that kept a stale point, or compared fewer lanes, shows). */
Test(lane_kernels, lane_map_memo_calls_f_where_the_arguments_change) {
  nh_lane_memo memo = {.f = reciprocal};
  double a[NH_LANES], b[NH_LANES], z[NH_LANES], out[NH_LANES];
  for (int l = 0; l < NH_LANES; l++) a[l] = l + 0.5, z[l] = 0;
  a[2] = NAN;
  memcpy(b, a, sizeof b);
  b[NH_LANES - 1] = -3;
  const struct {
    const double *x;
    long calls; /* of f, after this call */
    const char *what;
  } steps[] = {/* zeros first: an empty memo's arguments are zeros too, its values not 1/0 */
               {z, NH_LANES, "zeros, first"},
               {z, NH_LANES, "zeros again"},
               {a, 2 * NH_LANES, "another point"},
               {a, 2 * NH_LANES, "again (NaN lane included)"},
               {b, 3 * NH_LANES, "last lane changed"},
               {b, 3 * NH_LANES, "again"},
               {a, 4 * NH_LANES, "the point before again"}};
  reciprocal_calls = 0;
  for (size_t s = 0; s < sizeof steps / sizeof *steps; s++) {
    memset(out, 0, sizeof out);
    nh_lane_map_memo(&memo, steps[s].x, out);
    expect_reciprocals(steps[s].x, out, steps[s].what);
    cr_expect_eq(reciprocal_calls, steps[s].calls, "%s: %ld calls of f, expected %ld", steps[s].what, reciprocal_calls,
                 steps[s].calls);
  }
  /* −0 on one lane is another argument: 1/−0 = −∞ there. */
  z[4] = -0.0;
  nh_lane_map_memo(&memo, z, out);
  nh_lane_map_memo(&memo, z, out);
  expect_reciprocals(z, out, "a negative zero");
  cr_expect(out[4] == -INFINITY && out[3] == INFINITY, "lane 4: %g, lane 3: %g", out[4], out[3]);
  cr_expect_eq(reciprocal_calls, 5 * NH_LANES, "%ld calls of f", reciprocal_calls);
}

/* The systems' kernels are safe to call from threads at once (their memos are per thread): on every
 * system with lane kernels two threads evaluate ∇V, ∇²V, A and DA, each at points of its own in
 * turn, against the same kernels' values taken before on one thread. */
Test(lane_kernels, system_kernels_from_two_threads) {
  enum { POINTS = 2, KERNELS = 4, MAXOUT = NH_MAX_K * NH_MAX_N * NH_MAX_N * NH_LANES };
  static double q[2][POINTS][NH_MAX_N * NH_LANES], want[2][POINTS][KERNELS][MAXOUT];
  const lanes_of_q kernels[KERNELS] = {nh_lanes_grad_potential, nh_lanes_hess_potential, nh_lanes_constraints,
                                       nh_lanes_constraints_jacobian};
  gsl_rng *rng = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(rng, 52);
  int systems = 0;
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system sys = test_system_of(nh_system_types[s], NULL);
    if (!sys.type->kernels || !sys.type->kernels->constraints_lanes) continue;
    systems++;
    for (int th = 0; th < 2; th++)
      for (int p = 0; p < POINTS; p++) {
        for (int i = 0; i < sys.n * NH_LANES; i++) q[th][p][i] = 4 * gsl_rng_uniform(rng) - 2;
        for (int f = 0; f < KERNELS; f++) kernels[f](&sys, q[th][p], want[th][p][f]);
      }
    const int n = sys.n, k = sys.k, counts[KERNELS] = {n, n * n, k * n, k * n * n};
    int wrong = 0;
#pragma omp parallel num_threads(2) reduction(+ : wrong)
    {
      double got[MAXOUT];
      const int th = omp_get_thread_num();
      for (int r = 0; r < 3000; r++) {
        const int p = r % POINTS, f = (r / POINTS) % KERNELS;
        kernels[f](&sys, q[th][p], got);
        wrong += memcmp(got, want[th][p][f], sizeof(double) * NH_LANES * (size_t)counts[f]) != 0;
      }
    }
    cr_expect_eq(wrong, 0, "%s: %d evaluations from two threads differ from one thread's", sys.type->name, wrong);
  }
  gsl_rng_free(rng);
  cr_expect_geq(systems, 4, "%d systems with lane kernels", systems);
}
