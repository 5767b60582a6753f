/* Random states on D for ensembles (nh_sample_on_D and the systems' own samplers) and the
 * quantities systems derive from a state (issue 8). Every sampler is checked against the
 * definition of D and of the energy shell, not against its own arithmetic; the distributions
 * against densities worked out by hand (Kolmogorov-Smirnov with a fixed seed); the generic path
 * against values it drew before the dispatch existed; the Foucault plane angle against the exact
 * precession φ0 − s t (spec/herglotz.md §3.1, §5 item 13). Each acceptance check has a negative
 * control beside it. */
#include <criterion/criterion.h>
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "systems/system.h"
#include "tests/helpers.h"

static const double PI = 3.14159265358979323846;

/* max_a |A(q)v + b(q)| relative to max_a Σ_i |A_ai v_i| + |b_a|, the size of the terms that
 * cancel; 0 for k = 0. */
static double relative_constraint_residual(const nh_system *sys, const nh_state *x) {
  const int n = sys->n, k = sys->k;
  double A[NH_MAX_K * NH_MAX_N], b[NH_MAX_K] = {0}, worst = 0;
  if (k == 0) return 0;
  sys->type->constraints(sys->p, x->q, A);
  if (sys->type->affine) sys->type->affine->values(sys->p, x->q, b);
  for (int a = 0; a < k; a++) {
    double r = b[a], scale = fabs(b[a]);
    for (int i = 0; i < n; i++) r += A[a * n + i] * x->v[i], scale += fabs(A[a * n + i] * x->v[i]);
    worst = fmax(worst, scale > 0 ? fabs(r) / scale : fabs(r));
  }
  return worst;
}

static int same_state(int n, const nh_state *a, const nh_state *b) {
  return a->t == b->t && memcmp(a->q, b->q, sizeof(double) * (size_t)n) == 0 &&
         memcmp(a->v, b->v, sizeof(double) * (size_t)n) == 0;
}

static int cmp_double(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Kolmogorov-Smirnov statistic of the sample x (sorted in place) against the uniform
 * distribution on [lo, hi]. */
static double ks_uniform(double *x, int count, double lo, double hi) {
  double d = 0;
  qsort(x, (size_t)count, sizeof *x, cmp_double);
  for (int i = 0; i < count; i++) {
    const double F = fmin(1, fmax(0, (x[i] - lo) / (hi - lo)));
    d = fmax(d, fmax(F - (double)i / count, (double)(i + 1) / count - F));
  }
  return d;
}

/* The 0.1% critical value of the KS statistic for a sample of size N (asymptotic, 1.949/√N). */
static double ks_critical(int count) { return 1.949 / sqrt((double)count); }

/* a − b reduced modulo π to (−π/2, π/2]: the difference of two plane angles. */
static double angle_diff_mod_pi(double a, double b) {
  double d = remainder(a - b, PI);
  return d <= -PI / 2 ? d + PI : d;
}

/* ---- every system: a documented sampler, or a refusal that says why ------------------------ */

Test(system_samplers, every_system_samples_on_D_at_energy_or_refuses) {
  enum { COUNT = 50 };
  double worst_residual = 0, worst_energy = 0;
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    const nh_system_knowledge *K = test_knowledge(T);
    cr_assert(K->sampler_doc && strlen(K->sampler_doc) > 20, "%s: no sampler_doc", T->name);
    nh_system sys = test_system_of(T, NULL);
    nh_state x0, a[COUNT], b, c;
    nh_system_default_state(&sys, &x0);
    const double E = nh_energy(&sys, x0.q, x0.v) + 1;
    gsl_rng *ra = test_rng(7), *rb = test_rng(7), *rc = test_rng(8);
    int rc0 = nh_sample_on_D(&sys, E, ra, &a[0]);
    if (rc0 == -2) {
      /* A refusal: only the generic path refuses, for what it cannot reach. */
      cr_assert(K->sample == NULL && (T->affine || T->holonomic), "%s: refused without reason", T->name);
      gsl_rng_free(ra), gsl_rng_free(rb), gsl_rng_free(rc);
      continue;
    }
    cr_assert_eq(rc0, 0, "%s: nh_sample_on_D returned %d at E = %g", T->name, rc0, E);
    cr_assert(K->sample || !(T->affine || T->holonomic),
              "%s: the generic sampler drew a state it cannot reach", T->name);
    int differs = 0;
    double sys_residual = 0, sys_energy = 0;
    for (int i = 0; i < COUNT; i++) {
      if (i) cr_assert_eq(nh_sample_on_D(&sys, E, ra, &a[i]), 0, "%s: draw %d failed", T->name, i);
      cr_assert_eq(nh_sample_on_D(&sys, E, rb, &b), 0);
      cr_assert_eq(nh_sample_on_D(&sys, E, rc, &c), 0);
      const double res = relative_constraint_residual(&sys, &a[i]);
      const double dE = fabs(nh_energy(&sys, a[i].q, a[i].v) - E) / fabs(E);
      worst_residual = fmax(worst_residual, res), worst_energy = fmax(worst_energy, dE);
      sys_residual = fmax(sys_residual, res), sys_energy = fmax(sys_energy, dE);
      /* The own samplers build v on D; the generic one projects a Gaussian, whose cancellation
       * leaves up to ~1e-13 of the terms. */
      cr_assert(res <= (K->sample ? 1e-14 : 1e-12), "%s draw %d: |A v + b| = %.3e of its terms", T->name, i, res);
      cr_assert(dE <= 1e-14, "%s draw %d: energy off by %.3e relative", T->name, i, dE);
      if (T->holonomic) {
        double phi[NH_MAX_K];
        T->holonomic(sys.p, a[i].q, phi);
        cr_assert(fabs(phi[0]) <= 1e-14, "%s draw %d: phi(q) = %.3e", T->name, i, phi[0]);
      }
      cr_assert(same_state(sys.n, &a[i], &b), "%s draw %d differs for the same seed", T->name, i);
      differs += !same_state(sys.n, &a[i], &c);
      cr_assert(a[i].t == 0 && a[i].z == 0, "%s: sampled t or z not zero", T->name);
    }
    cr_assert_eq(differs, COUNT, "%s: seeds 7 and 8 agree on %d draws", T->name, COUNT - differs);
    cr_log_info("%s: worst relative |Av + b| %.2e, energy %.2e", T->name, sys_residual, sys_energy);
    /* A system's own sampler is what nh_sample_on_D runs. */
    if (K->sample) {
      gsl_rng *rd = test_rng(7);
      nh_state d;
      cr_assert_eq(K->sample(sys.p, E, rd, &d), 0);
      cr_assert(same_state(sys.n, &d, &a[0]), "%s: nh_sample_on_D does not dispatch to the system's sampler",
                T->name);
      gsl_rng_free(rd);
    }
    gsl_rng_free(ra), gsl_rng_free(rb), gsl_rng_free(rc);
  }
  cr_log_info("samplers: worst relative |Av + b| %.2e, worst relative energy error %.2e", worst_residual,
              worst_energy);
}

/* The own samplers read every parameter from its slot: non-default values. */
Test(system_samplers, own_samplers_with_other_parameters) {
  const char *names[] = {"foucault_pendulum", "pendulum"};
  const char *params[] = {"m=3,l=2,g=5,beta_deg=-30,Omega=0.2,alpha=0", "m=2,g=3,l=0.5"};
  for (int s = 0; s < 2; s++) {
    nh_system sys = test_system(names[s], params[s]);
    gsl_rng *r = test_rng(9);
    for (int i = 0; i < 200; i++) {
      nh_state x;
      const double E = 2.5;
      cr_assert_eq(nh_sample_on_D(&sys, E, r, &x), 0, "%s(%s)", names[s], params[s]);
      cr_assert(relative_constraint_residual(&sys, &x) <= 1e-14, "%s: off D", names[s]);
      cr_assert(fabs(nh_energy(&sys, x.q, x.v) - E) <= 1e-14 * E, "%s: energy", names[s]);
      if (sys.type->holonomic) {
        double phi;
        sys.type->holonomic(sys.p, x.q, &phi);
        cr_assert(fabs(phi) <= 1e-14 * sys.p[2] * sys.p[2], "%s: off the circle", names[s]);
      }
    }
    gsl_rng_free(r);
  }
}

/* Negative control of the dispatch: without their own samplers the affine and the holonomic
 * system are refused (-2) by the generic path, which would otherwise leave D. */
Test(system_samplers, without_own_sampler_affine_and_holonomic_are_refused) {
  const char *names[] = {"foucault_pendulum", "pendulum"};
  for (int s = 0; s < 2; s++) {
    nh_system_type T = *nh_system_type_find(names[s]);
    nh_system_knowledge K = *T.knowledge;
    cr_assert(K.sample != NULL, "%s has no sampler", names[s]);
    K.sample = NULL;
    T.knowledge = &K;
    nh_system sys = test_system_of(&T, NULL);
    gsl_rng *r = test_rng(7);
    nh_state x;
    cr_expect_eq(nh_sample_on_D(&sys, 5, r, &x), -2, "%s without its sampler: not refused", names[s]);
    gsl_rng_free(r);
  }
}

/* Energies below the lowest potential plus the margin: no state, -1, for the own samplers too
 * (rotational_symmetry's after its NH_SAMPLE_TRIES draws: its V = ω²(x² + y²)/2 ≥ 0 is nowhere
 * below E − margin = 0 at E = margin). Every own sampler refuses E = −1000, below all their minima. */
Test(system_samplers, energy_below_the_potential_fails_cleanly) {
  nh_system f = test_system("foucault_pendulum", NULL), p = test_system("pendulum", NULL);
  nh_system rs = test_system("rotational_symmetry", NULL);
  gsl_rng *r = test_rng(7);
  nh_state x;
  cr_expect_eq(nh_sample_on_D(&f, 0.05, r, &x), -1, "foucault_pendulum: E below min V + margin");
  cr_expect_eq(nh_sample_on_D(&p, -0.95, r, &x), -1, "pendulum: E below -m g l + margin");
  cr_expect_eq(nh_sample_on_D(&p, -0.85, r, &x), 0, "pendulum: E just above -m g l + margin");
  cr_expect_eq(nh_sample_on_D(&rs, NH_SAMPLE_MARGIN, r, &x), -1, "rotational_symmetry: E = min V + margin");
  cr_expect_eq(nh_sample_on_D(&rs, NH_SAMPLE_MARGIN + 0.05, r, &x), 0, "rotational_symmetry: E above min V + margin");
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    if (!test_knowledge(T)->sample) continue;
    nh_system sys = test_system_of(T, NULL);
    cr_expect_eq(test_knowledge(T)->sample(sys.p, -1000, r, &x), -1, "%s: a state at E = -1000", T->name);
  }
  gsl_rng_free(r);
}

/* ---- the generic path is unchanged ---------------------------------------------------------- */

/* The first three chaotic_particle states at E = 1.535, seed 2024, as drawn by nh_sample_on_D at
 * commit d759b83, before the dispatch to systems' own samplers: the same random numbers make the
 * same draws. q comes from the random numbers alone and must match to the bit; v is projected on
 * D by a linear solve whose last bits changed with core/linalg.c's own Cholesky (issue 11), so it
 * must match to a few ulps (1e-15 relative to |v|). */
static const double golden_q[3][5] = {
    {0x1.6881e88p-3, 0x1.075337e8p-1, 0x1.97c653p-2, 0x1.e8f454p-2, -0x1.3f551794p-1},
    {0x1.d1634718p-2, 0x1.2ed18128p-1, 0x1.6f698a1p-2, 0x1.5b3fafp-2, -0x1.ac8316cp-5},
    {0x1.ff31fc7p-1, 0x1.50a082d8p-2, -0x1.8edefd9p-3, 0x1.b4c1436p-3, -0x1.07b92e38p-1},
};
static const double golden_v[3][5] = {
    {0x1.651c912c46638p-2, 0x1.bb2aba26697cp-6, 0x1.08cd3338dd3d3p-1, 0x1.c5548cd9e3bb2p-3, -0x1.29612cbd0a3fbp+0},
    {0x1.3562af312dc2dp-1, 0x1.00db1f4d03fc8p+0, 0x1.0e1b8dd7bb26p-5, -0x1.ce30cc76926a8p-1, -0x1.91a1bc9207b97p-3},
    {-0x1.04f6fd7406d5bp-5, -0x1.12869ec73fdbcp-6, -0x1.10fe6d7af1759p-2, 0x1.656987694b1fcp-1, 0x1.03c3ea0221913p+0},
};

Test(system_samplers, generic_path_bit_identical_to_before) {
  nh_system sys = test_system("chaotic_particle", NULL);
  gsl_rng *r = test_rng(2024);
  for (int j = 0; j < 3; j++) {
    nh_state x;
    cr_assert_eq(nh_sample_on_D(&sys, 1.535, r, &x), 0);
    cr_assert(memcmp(x.q, golden_q[j], sizeof golden_q[j]) == 0, "chaotic_particle draw %d: q differs", j);
    double vmax = 0, dv = 0;
    for (int i = 0; i < 5; i++) vmax = fmax(vmax, fabs(golden_v[j][i])), dv = fmax(dv, fabs(x.v[i] - golden_v[j][i]));
    cr_assert(dv <= 1e-15 * vmax, "chaotic_particle draw %d: v differs by %.3e (|v| %.3g)", j, dv, vmax);
  }
  gsl_rng_free(r);
}

/* ---- falling disk: the generic path in the M(q) metric -------------------------------------- */

/* Replays the generic draw (5 flats, 5 Gaussians; at E = 100 > max V + margin every q is
 * admissible, so each state takes one try) and recomputes its velocity by a route independent of
 * nh_project_velocity: with A = [I₂ | B] (rolling constraints, X and Y columns the identity) the
 * null space is spanned by the columns of N = [−B; I₃], and the M-orthogonal projection of g on it
 * is N(NᵀMN)⁻¹NᵀMg. Negative control: the Euclidean projection N(NᵀN)⁻¹Nᵀg is measurably
 * different. */
static void null_space_projection(int n, const double *N, const double *M, const double *g, double *w) {
  /* N is n×3 (row-major); G = NᵀMN (3×3), rhs = NᵀMg. */
  double MN[NH_MAX_N * 3], G[9], rhs[3], Mg[NH_MAX_N];
  for (int i = 0; i < n; i++) {
    Mg[i] = 0;
    for (int j = 0; j < n; j++) Mg[i] += M[i * n + j] * g[j];
    for (int c = 0; c < 3; c++) {
      MN[i * 3 + c] = 0;
      for (int j = 0; j < n; j++) MN[i * 3 + c] += M[i * n + j] * N[j * 3 + c];
    }
  }
  for (int a = 0; a < 3; a++) {
    rhs[a] = 0;
    for (int i = 0; i < n; i++) rhs[a] += N[i * 3 + a] * Mg[i];
    for (int b = 0; b < 3; b++) {
      G[a * 3 + b] = 0;
      for (int i = 0; i < n; i++) G[a * 3 + b] += N[i * 3 + a] * MN[i * 3 + b];
    }
  }
  cr_assert_eq(nh_spd_solve(3, G, rhs), 0);
  for (int i = 0; i < n; i++) w[i] = N[i * 3 + 0] * rhs[0] + N[i * 3 + 1] * rhs[1] + N[i * 3 + 2] * rhs[2];
}

Test(system_samplers, falling_disk_generic_projection_in_the_M_metric) {
  nh_system sys = test_system("falling_disk", NULL);
  const nh_system_type *T = sys.type;
  const int n = sys.n;
  const double E = 100, box = test_knowledge(T)->sample_box;
  gsl_rng *r = test_rng(31), *replay = test_rng(31);
  double worst = 0, least_euclid = INFINITY;
  for (int j = 0; j < 20; j++) {
    nh_state x;
    cr_assert_eq(nh_sample_on_D(&sys, E, r, &x), 0);
    double q[NH_MAX_N], g[NH_MAX_N], A[2 * NH_MAX_N], M[NH_MAX_N * NH_MAX_N], I[NH_MAX_N * NH_MAX_N] = {0};
    double N[NH_MAX_N * 3] = {0}, w[NH_MAX_N], we[NH_MAX_N];
    for (int i = 0; i < n; i++) q[i] = gsl_ran_flat(replay, -box, box);
    for (int i = 0; i < n; i++) g[i] = gsl_ran_gaussian_ziggurat(replay, 1.0);
    cr_assert(memcmp(q, x.q, sizeof(double) * (size_t)n) == 0, "draw %d: replayed q differs", j);
    T->mass(sys.p, q, M);
    T->constraints(sys.p, q, A);
    for (int a = 0; a < 2; a++)
      for (int i = 0; i < 2; i++) cr_assert(A[a * n + i] == (a == i), "A is not [I2 | B]");
    for (int c = 0; c < 3; c++) {
      N[0 * 3 + c] = -A[0 * n + 2 + c];
      N[1 * 3 + c] = -A[1 * n + 2 + c];
      N[(2 + c) * 3 + c] = 1;
    }
    for (int i = 0; i < n; i++) I[i * n + i] = 1;
    null_space_projection(n, N, M, g, w);
    null_space_projection(n, N, I, g, we);
    const double V = T->potential(sys.p, q);
    double Tw = 0, Twe = 0, vnorm = 0;
    for (int i = 0; i < n; i++)
      for (int k = 0; k < n; k++) Tw += 0.5 * w[i] * M[i * n + k] * w[k], Twe += 0.5 * we[i] * M[i * n + k] * we[k];
    const double sw = sqrt((E - V) / Tw), swe = sqrt((E - V) / Twe);
    double d = 0, de = 0;
    for (int i = 0; i < n; i++) {
      vnorm = fmax(vnorm, fabs(x.v[i]));
      d = fmax(d, fabs(x.v[i] - sw * w[i]));
      de = fmax(de, fabs(x.v[i] - swe * we[i]));
    }
    worst = fmax(worst, d / vnorm), least_euclid = fmin(least_euclid, de / vnorm);
  }
  cr_log_info("falling_disk: sampled v vs M-orthogonal null-space projection %.2e, vs Euclidean >= %.2e", worst,
              least_euclid);
  cr_expect(worst <= 1e-13, "sampled v is not the M(q)-orthogonal projection (off by %.3e)", worst);
  cr_expect(least_euclid >= 1e-2, "negative control: Euclidean projection too close (%.3e)", least_euclid);
  gsl_rng_free(r), gsl_rng_free(replay);
}

/* Replays the Foucault sampler's draws as systems/foucault_pendulum.c documents them (q from two
 * flats in the box, rejected where V ≥ E − 0.1 or q = 0; then g from two Gaussians, rejected where
 * its radial part g·q̂ is 0 or the rotation alone exceeds E − V) and recomputes the velocity in closed
 * form instead of by its quadratic: v = s(y, −x) + sign(g·q̂) √(2(E − V)/m − s²|q|²) q̂, the
 * frame rotation plus the radial speed that makes up the energy. Every draw is accepted at the
 * documented point, so each sample is the replay's, to round-off. With s = 1 (Ω = 1, β = 90°)
 * and m = 1/2 the root condition rejects part of the box and |g·q̂| is often below 1 (where a
 * test of ½m|w|² against anything but 0 would reject it). */
Test(system_samplers, foucault_sampler_replays_its_documented_draws) {
  const char *params[] = {"m=0.5,l=1,g=1,Omega=1,beta_deg=90", NULL};
  const double energies[] = {0.6, 1.1};
  for (int variant = 0; variant < 2; variant++) {
    nh_system sys = test_system("foucault_pendulum", params[variant]);
    const double m = sys.p[0], l = sys.p[1], g = sys.p[2], E = energies[variant];
    const double s = sys.p[4] * sin(sys.p[3] * PI / 180);
    gsl_rng *r = test_rng(77), *replay = test_rng(77);
    int rejected_root = 0, small_radial = 0;
    for (int j = 0; j < 40; j++) {
      nh_state x;
      cr_assert_eq(nh_sample_on_D(&sys, E, r, &x), 0);
      double q[2], gr, V;
      for (;;) {
        q[0] = gsl_ran_flat(replay, -1, 1), q[1] = gsl_ran_flat(replay, -1, 1);
        V = 0.5 * m * g / l * (q[0] * q[0] + q[1] * q[1]);
        if (V >= E - 0.1 || (q[0] == 0 && q[1] == 0)) continue;
        const double g0 = gsl_ran_gaussian_ziggurat(replay, 1.0), g1 = gsl_ran_gaussian_ziggurat(replay, 1.0);
        const double rq = hypot(q[0], q[1]);
        gr = (g0 * q[0] + g1 * q[1]) / rq;
        if (gr == 0) continue;
        if (0.5 * m * s * s * rq * rq >= E - V) {
          rejected_root++;
          continue;
        }
        break;
      }
      small_radial += fabs(gr) < 1;
      const double rq = hypot(q[0], q[1]), radial = copysign(sqrt(2 * (E - V) / m - s * s * rq * rq), gr);
      const double v[2] = {s * q[1] + radial * q[0] / rq, -s * q[0] + radial * q[1] / rq};
      cr_assert(x.q[0] == q[0] && x.q[1] == q[1], "%s, draw %d: q = (%.17g, %.17g), replayed (%.17g, %.17g)",
                params[variant] ? params[variant] : "defaults", j, x.q[0], x.q[1], q[0], q[1]);
      const double vn = hypot(v[0], v[1]);
      cr_expect(fabs(x.v[0] - v[0]) <= 1e-14 * vn && fabs(x.v[1] - v[1]) <= 1e-14 * vn,
                "%s, draw %d: v = (%.17g, %.17g), closed form (%.17g, %.17g)",
                params[variant] ? params[variant] : "defaults", j, x.v[0], x.v[1], v[0], v[1]);
    }
    cr_log_info("foucault replay %d: %d draws rejected by the root condition, %d with |g.q^| < 1", variant,
                rejected_root, small_radial);
    if (variant == 0) cr_expect(rejected_root > 0, "the root condition never acted");
    cr_expect(small_radial > 0, "no draw with a small radial Gaussian");
    gsl_rng_free(r), gsl_rng_free(replay);
  }
}

/* ---- distributions -------------------------------------------------------------------------- */

/* Pendulum (m = g = l = 1) at E = 0.5: θ is uniform on {−cos θ < E − 0.1} = (−θmax, θmax),
 * cos θmax = −0.4, and the sense of motion is ± with probability ½. */
Test(system_samplers, pendulum_angle_uniform_where_admissible) {
  enum { COUNT = 4000 };
  nh_system sys = test_system("pendulum", "m=1,g=1,l=1");
  const double E = 0.5, thmax = acos(-(E - 0.1));
  static double th[COUNT], wrong[COUNT];
  double sense = 0;
  gsl_rng *r = test_rng(101);
  for (int i = 0; i < COUNT; i++) {
    nh_state x;
    cr_assert_eq(nh_sample_on_D(&sys, E, r, &x), 0);
    th[i] = atan2(x.q[0], -x.q[1]);
    cr_assert(fabs(th[i]) < thmax, "theta = %g outside the admissible arc", th[i]);
    sense += (x.q[0] * x.v[1] - x.q[1] * x.v[0]) > 0 ? 1 : -1; /* sign of l² θ̇ */
  }
  gsl_rng_free(r);
  memcpy(wrong, th, sizeof th);
  const double D = ks_uniform(th, COUNT, -thmax, thmax), Dwrong = ks_uniform(wrong, COUNT, -PI, PI);
  cr_log_info("pendulum: KS %.4f (critical %.4f), against U(-pi, pi) %.4f; mean sense %.4f", D,
              ks_critical(COUNT), Dwrong, sense / COUNT);
  cr_expect(D <= ks_critical(COUNT), "theta not uniform on the admissible arc: KS %.4f", D);
  cr_expect(Dwrong >= 3 * ks_critical(COUNT), "negative control: KS against U(-pi, pi) only %.4f", Dwrong);
  cr_expect(fabs(sense / COUNT) <= 4 / sqrt((double)COUNT), "sense of motion biased: mean %.4f", sense / COUNT);
}

/* Foucault pendulum (defaults) at E = 1.1: V = (m g/2l)|q|² < E − 0.1 is the disc of radius
 * ρ = √(2l(E − 0.1)/(m g)) ≈ 0.70, inside the box, so q is uniform on the disc: |q|²/ρ² and the
 * polar angle are uniform; the radial velocity is ± with probability ½. Negative control: |q|/ρ
 * is not uniform. */
Test(system_samplers, foucault_position_uniform_on_the_admissible_disc) {
  enum { COUNT = 4000 };
  nh_system sys = test_system("foucault_pendulum", NULL);
  const double m = sys.p[0], l = sys.p[1], g = sys.p[2], E = 1.1, rho2 = 2 * l * (E - 0.1) / (m * g);
  cr_assert(rho2 < 1, "the admissible disc must lie inside the box");
  static double r2[COUNT], ang[COUNT], rad[COUNT];
  double sense = 0;
  gsl_rng *r = test_rng(202);
  for (int i = 0; i < COUNT; i++) {
    nh_state x;
    cr_assert_eq(nh_sample_on_D(&sys, E, r, &x), 0);
    const double q2 = x.q[0] * x.q[0] + x.q[1] * x.q[1];
    r2[i] = q2 / rho2, rad[i] = sqrt(r2[i]), ang[i] = atan2(x.q[1], x.q[0]);
    sense += (x.q[0] * x.v[0] + x.q[1] * x.v[1]) > 0 ? 1 : -1;
  }
  gsl_rng_free(r);
  const double Dr = ks_uniform(r2, COUNT, 0, 1), Da = ks_uniform(ang, COUNT, -PI, PI);
  const double Dwrong = ks_uniform(rad, COUNT, 0, 1);
  cr_log_info("foucault: KS |q|^2 %.4f, angle %.4f (critical %.4f); |q| against U(0,1) %.4f; mean sense %.4f", Dr,
              Da, ks_critical(COUNT), Dwrong, sense / COUNT);
  cr_expect(Dr <= ks_critical(COUNT), "|q|^2 not uniform: KS %.4f", Dr);
  cr_expect(Da <= ks_critical(COUNT), "polar angle not uniform: KS %.4f", Da);
  cr_expect(Dwrong >= 3 * ks_critical(COUNT), "negative control: |q| passes as uniform (KS %.4f)", Dwrong);
  cr_expect(fabs(sense / COUNT) <= 4 / sqrt((double)COUNT), "radial sense biased: mean %.4f", sense / COUNT);
}

/* With a fast frame rotation (Ω = 1 rad/s, β = 90°: s = 1) the particular velocity s(y, −x) alone
 * carries kinetic energy m s²|q|²/2, so only |q|² < E/(m s²/2 + m g/2l) has a real root; the
 * sampler must reject the rest of the box (which V < E − 0.1 alone would admit up to
 * |q|² < 2l(E − 0.1)/(m g)). The velocity is then the particular solution plus a radial part. */
/* The draw loop resembles the uniformity test above by accident: other bounds and statistics
 * (not merged). */
Test(system_samplers, foucault_rejects_draws_without_a_real_root) {
  enum { COUNT = 500 };
  nh_system sys = test_system("foucault_pendulum", "Omega=1,beta_deg=90");
  const double m = sys.p[0], l = sys.p[1], g = sys.p[2], s = 1, E = 3;
  const double root_bound = E / (0.5 * m * s * s + 0.5 * m * g / l), box_bound = 2 * l * (E - 0.1) / (m * g);
  cr_assert(root_bound < 0.5 * box_bound, "the test needs the root condition to bind");
  double largest = 0;
  gsl_rng *r = test_rng(303);
  for (int i = 0; i < COUNT; i++) {
    nh_state x;
    cr_assert_eq(nh_sample_on_D(&sys, E, r, &x), 0);
    const double q2 = x.q[0] * x.q[0] + x.q[1] * x.q[1];
    largest = fmax(largest, q2);
    cr_assert(fabs(nh_energy(&sys, x.q, x.v) - E) <= 1e-14 * E, "energy");
    cr_assert(relative_constraint_residual(&sys, &x) <= 1e-14, "off D");
    /* Tangential velocity: exactly the frame rotation, q × v = −s|q|². */
    cr_assert(fabs(x.q[0] * x.v[1] - x.q[1] * x.v[0] + s * q2) <= 1e-14 * (q2 + 1e-300), "tangential part");
  }
  gsl_rng_free(r);
  cr_log_info("foucault s = 1: largest |q|^2 %.4f, root bound %.4f, potential bound %.4f", largest, root_bound,
              box_bound);
  cr_expect(largest < root_bound, "a draw beyond the real-root bound was accepted");
  cr_expect(largest > 0.9 * root_bound, "the admissible region is not filled (largest |q|^2 %.4f)", largest);
}

/* The generic path, unconstrained (oscillator, ω = 1, E = 2 > max V + 0.1 = 1.1): q uniform in the
 * box (mean 0, variance 1/3 per coordinate) and the velocity direction uniform on the circle. */
Test(system_samplers, generic_oscillator_moments_and_direction) {
  enum { COUNT = 4000 };
  nh_system sys = test_system("oscillator", "omega=1");
  static double dir[COUNT];
  double mean[2] = {0}, sq[2] = {0};
  gsl_rng *r = test_rng(404);
  for (int i = 0; i < COUNT; i++) {
    nh_state x;
    cr_assert_eq(nh_sample_on_D(&sys, 2, r, &x), 0);
    for (int j = 0; j < 2; j++) mean[j] += x.q[j] / COUNT, sq[j] += x.q[j] * x.q[j] / COUNT;
    dir[i] = atan2(x.v[1], x.v[0]);
  }
  gsl_rng_free(r);
  const double sigma = sqrt(1.0 / 3), D = ks_uniform(dir, COUNT, -PI, PI);
  /* The variance of q² for q ~ U(−1, 1) is 1/5 − 1/9 = 4/45. */
  for (int j = 0; j < 2; j++) {
    cr_expect(fabs(mean[j]) <= 4 * sigma / sqrt((double)COUNT), "mean q[%d] = %.4f", j, mean[j]);
    cr_expect(fabs(sq[j] - 1.0 / 3) <= 4 * sqrt(4.0 / 45 / COUNT), "mean q[%d]^2 = %.4f", j, sq[j]);
  }
  cr_expect(D <= ks_critical(COUNT), "velocity direction not uniform: KS %.4f", D);
}

/* ---- derived quantities --------------------------------------------------------------------- */

/* Each derived quantity named, documented and finite at the default state, under a name of its own
 * (a derived table's entries being there at all is tests/contracts/test_registry.c's). */
Test(system_derived, declarations_complete) {
  for (int s = 0; nh_system_types[s]; s++) {
    const nh_system_type *T = nh_system_types[s];
    const nh_system_derived *D = test_derived(T);
    if (D->count == 0) continue;
    nh_system sys = test_system_of(T, NULL);
    nh_state x;
    nh_system_default_state(&sys, &x);
    double out[16];
    cr_assert(D->count <= 16);
    D->values(sys.p, x.t, x.q, x.v, out);
    for (int i = 0; i < D->count; i++) {
      cr_expect(D->names[i] && strlen(D->names[i]) > 0, "%s: derived %d unnamed", T->name, i);
      cr_expect(D->docs[i] && strlen(D->docs[i]) > 20, "%s: derived %d undocumented", T->name, i);
      cr_expect(isfinite(out[i]), "%s: %s not finite at the default state", T->name, D->names[i]);
      for (int j = 0; j < i; j++) cr_expect(strcmp(D->names[i], D->names[j]) != 0, "%s: duplicate name", T->name);
    }
  }
}

/* The initial state of plane φ0: the preset's (A, 0), (0, −sA) rotated by φ0. */
static nh_state foucault_start(const nh_system *sys, double phi0) {
  nh_state x0;
  nh_system_default_state(sys, &x0);
  const double c = cos(phi0), s = sin(phi0), q0 = x0.q[0], v1 = x0.v[1];
  x0.q[0] = c * q0, x0.q[1] = s * q0;
  x0.v[0] = -s * v1, x0.v[1] = c * v1;
  return x0;
}

/* Along the exact solution the plane angle is φ0 − s t modulo π, and the co-rotating angle φ0
 * modulo π: on a grid over 2·10⁵ s (beyond the half precession period π/s ≈ 57000 s, so the angle
 * wraps), at the crossings of the origin u = 0 and at small offsets from them, and from a start at
 * the origin itself (u0 = 0, plane = direction of v0). */
Test(system_derived, foucault_plane_angle_on_the_exact_solution) {
  const char *params[] = {"alpha=0", "alpha=1e-4", "alpha=1e-3"};
  const double phis[] = {0, 0.3, 1.5, -1.2, PI / 2, 3.0};
  const double offsets[] = {0, 1e-9, -1e-9, 1e-7, -1e-7, 1e-5, -1e-5, 1e-3, -1e-3};
  double worst = 0, worst_co = 0, smallest_u = INFINITY;
  long checked = 0;
  for (int ip = 0; ip < 3; ip++) {
    nh_system sys = test_system("foucault_pendulum", params[ip]);
    const nh_system_type *T = sys.type;
    const double s = sys.p[4] * sin(sys.p[3] * PI / 180), alpha = sys.p[5];
    const double a = alpha / 2, w = sqrt(sys.p[2] / sys.p[1] - s * s - a * a), delta = atan2(a, w);
    for (int ph = 0; ph < 6; ph++) {
      const nh_state x0 = foucault_start(&sys, phis[ph]);
      for (int j = 0; j < 2000 + 40 * 9; j++) {
        double t;
        if (j < 2000) {
          t = j * 100.0 + 0.37 * j; /* a grid that does not sit on the period */
        } else {
          /* crossing k: w t = δ + π/2 + kπ, where u = A e^{−at}[cos wt + (a/w) sin wt] = 0 */
          const int k = ((j - 2000) / 9) * 997 + 3, o = (j - 2000) % 9;
          t = (delta + PI / 2 + k * PI) / w + offsets[o];
        }
        nh_state x;
        cr_assert_eq(test_knowledge(T)->exact(sys.p, &x0, t, &x), 0);
        double out[2];
        test_derived(T)->values(sys.p, t, x.q, x.v, out);
        const double d = fabs(angle_diff_mod_pi(out[0], phis[ph] - s * t));
        const double dco = fabs(angle_diff_mod_pi(out[1], phis[ph]));
        cr_assert(out[0] > -PI / 2 && out[0] <= PI / 2 && out[1] > -PI / 2 && out[1] <= PI / 2, "range");
        cr_assert(d <= 1e-13 && dco <= 1e-13, "%s phi0 = %g t = %.17g: plane angle off by %.3e, co-rotating %.3e",
                  params[ip], phis[ph], t, d, dco);
        worst = fmax(worst, d), worst_co = fmax(worst_co, dco);
        if (j >= 2000 && (j - 2000) % 9 == 0) /* |q| relative to the envelope A e^{−at} */
          smallest_u = fmin(smallest_u, hypot(x.q[0], x.q[1]) / (hypot(x0.q[0], x0.q[1]) * exp(-a * t)));
        checked++;
      }
    }
    /* Start at the origin: the plane is the direction of v0. */
    for (int ph = 0; ph < 6; ph++) {
      nh_state x0 = {0}, x;
      x0.v[0] = 0.3 * cos(phis[ph]), x0.v[1] = 0.3 * sin(phis[ph]);
      for (int j = 0; j < 50; j++) {
        const double t = j * 13.7;
        cr_assert_eq(test_knowledge(T)->exact(sys.p, &x0, t, &x), 0);
        double out[2];
        test_derived(T)->values(sys.p, t, x.q, x.v, out);
        const double d = fabs(angle_diff_mod_pi(out[0], phis[ph] - s * t));
        cr_assert(d <= 1e-13, "start at the origin, phi0 = %g, t = %g: off by %.3e", phis[ph], t, d);
        worst = fmax(worst, d);
      }
    }
  }
  cr_log_info("plane angle: %ld states, worst %.2e (co-rotating %.2e); |q|/envelope at the crossings down to %.2e",
              checked, worst, worst_co, smallest_u);
  /* The crossings were really crossings: |q| there is at round-off of the amplitude. */
  cr_expect(smallest_u <= 1e-12, "no state near u = 0 was tested (smallest |q| %.3e)", smallest_u);
}

/* Negative controls: the angle follows a rotation of the state by δ (equivariance, so an error of
 * δ = 1e-9, four orders above the tolerance, shows); a velocity off D at a crossing (where the
 * plane comes from w alone) turns it; the opposite precession sense is far off after an hour. */
Test(system_derived, foucault_plane_angle_negative_controls) {
  nh_system sys = test_system("foucault_pendulum", "alpha=1e-4");
  const nh_system_type *T = sys.type;
  const double s = sys.p[4] * sin(sys.p[3] * PI / 180), dl = 1e-9, c = cos(dl), sn = sin(dl);
  const nh_state x0 = foucault_start(&sys, 0.4);
  for (int j = 1; j < 200; j++) {
    const double t = 18.1 * j;
    nh_state x, y;
    cr_assert_eq(test_knowledge(T)->exact(sys.p, &x0, t, &x), 0);
    y = x;
    y.q[0] = c * x.q[0] - sn * x.q[1], y.q[1] = sn * x.q[0] + c * x.q[1];
    y.v[0] = c * x.v[0] - sn * x.v[1], y.v[1] = sn * x.v[0] + c * x.v[1];
    double a[2], b[2];
    test_derived(T)->values(sys.p, t, x.q, x.v, a);
    test_derived(T)->values(sys.p, t, y.q, y.v, b);
    const double shift = angle_diff_mod_pi(b[0], a[0]), shift_co = angle_diff_mod_pi(b[1], a[1]);
    cr_assert(fabs(shift - dl) <= 1e-14 && fabs(shift_co - dl) <= 1e-14,
              "t = %g: rotation by %g moved the angle by %.6e", t, dl, shift);
    cr_assert(fabs(angle_diff_mod_pi(b[0], 0.4 - s * t)) > 100 * 1e-13, "rotated state passes as exact");
  }
  /* At a crossing (q ≈ 0) a transverse velocity ε e⊥ turns the plane by ≈ ε/|u̇|. */
  const double a = sys.p[5] / 2, w = sqrt(sys.p[2] / sys.p[1] - s * s - a * a);
  const double t = (atan2(a, w) + PI / 2 + 10 * PI) / w;
  nh_state x;
  cr_assert_eq(test_knowledge(T)->exact(sys.p, &x0, t, &x), 0);
  double out[2], pert[2];
  test_derived(T)->values(sys.p, t, x.q, x.v, out);
  const double phi = 0.4 - s * t, eps = 1e-6, udot = x.v[0] * cos(phi) + x.v[1] * sin(phi);
  x.v[0] += -eps * sin(phi), x.v[1] += eps * cos(phi);
  test_derived(T)->values(sys.p, t, x.q, x.v, pert);
  const double turn = angle_diff_mod_pi(pert[0], out[0]);
  cr_expect(fabs(turn - eps / udot) <= 1e-3 * fabs(eps / udot),
            "transverse velocity at a crossing: turned %.6e, expected %.6e", turn, eps / udot);
  /* The wrong sense of precession after one hour: 2 s t ≈ 0.4 rad off. */
  cr_assert_eq(test_knowledge(T)->exact(sys.p, &x0, 3600, &x), 0);
  test_derived(T)->values(sys.p, 3600, x.q, x.v, out);
  cr_expect(fabs(angle_diff_mod_pi(out[0], 0.4 + s * 3600)) > 0.3, "the plane angle cannot tell -s from +s");
  /* At rest at the origin there is no plane. */
  double zero[2] = {0, 0};
  test_derived(T)->values(sys.p, 0, zero, zero, out);
  cr_expect(isnan(out[0]) && isnan(out[1]), "a plane at rest at the origin");
}

/* Chaplygin sleigh: u and ω at the spec's initial condition (u0 = ω0 = 1); on D the energy is
 * ½m(u² + a²ω²) + ½Iω² (the lateral speed is aω), which fails off D (negative control); and the
 * derivatives of u and ω along the equations of motion (nh_acceleration) are the reduced ones,
 * u̇ = aω², ω̇ = −(m a/(I + m a²)) u ω (spec/rattle.md §4 B). Non-default parameters. */
Test(system_derived, sleigh_forward_speed_and_angular_velocity) {
  nh_system sys = test_system("chaplygin_sleigh", "m=2,I=0.5,a=0.3");
  const nh_system_type *T = sys.type;
  const double m = sys.p[0], I = sys.p[1], a = sys.p[2];
  double out[2];
  nh_system def = test_system("chaplygin_sleigh", NULL);
  nh_state x0 = test_preset(&def, "ic1");
  test_derived(T)->values(def.p, 0, x0.q, x0.v, out);
  cr_expect(out[0] == 1 && out[1] == 1, "ic1: u = %g, omega = %g (spec: 1, 1)", out[0], out[1]);
  gsl_rng *r = test_rng(505);
  double worst_E = 0, worst_du = 0, worst_dw = 0, least_off = INFINITY;
  for (int i = 0; i < 100; i++) {
    nh_state x;
    cr_assert_eq(nh_sample_on_D(&sys, 2.0, r, &x), 0);
    /* Headings all round the circle: turn θ and (ẋ, ẏ) together, which keeps the state on D. */
    const double turn = 4.0 * i, ct = cos(turn), st = sin(turn), vx = x.v[0], vy = x.v[1];
    x.q[2] += turn, x.v[0] = ct * vx - st * vy, x.v[1] = st * vx + ct * vy;
    cr_assert(nh_constraint_residual(&sys, x.q, x.v) <= 1e-14, "turned state off D");
    test_derived(T)->values(sys.p, 0, x.q, x.v, out);
    const double u = out[0], om = out[1], E = nh_energy(&sys, x.q, x.v);
    worst_E = fmax(worst_E, fabs(0.5 * m * (u * u + a * a * om * om) + 0.5 * I * om * om - E) / E);
    double acc[3];
    cr_assert_eq(nh_acceleration(&sys, 0, x.q, x.v, acc), 0);
    const double th = x.q[2];
    const double du = acc[0] * cos(th) + acc[1] * sin(th) + om * (-x.v[0] * sin(th) + x.v[1] * cos(th));
    worst_du = fmax(worst_du, fabs(du - a * om * om) / (1 + fabs(a * om * om)));
    worst_dw = fmax(worst_dw, fabs(acc[2] + m * a / (I + m * a * a) * u * om) / (1 + fabs(u * om)));
    /* Off D: a random velocity. */
    nh_state y = x;
    for (int j = 0; j < 3; j++) y.v[j] = gsl_ran_gaussian(r, 1.0);
    test_derived(T)->values(sys.p, 0, y.q, y.v, out);
    const double Ey = nh_energy(&sys, y.q, y.v);
    const double Huw = 0.5 * m * (out[0] * out[0] + a * a * out[1] * out[1]) + 0.5 * I * out[1] * out[1];
    least_off = fmin(least_off, fabs(Huw - Ey) / Ey);
  }
  gsl_rng_free(r);
  cr_log_info("sleigh: energy from (u, omega) %.2e, udot %.2e, omegadot %.2e; off D >= %.2e", worst_E, worst_du,
              worst_dw, least_off);
  cr_expect(worst_E <= 1e-14, "energy from (u, omega) off by %.3e", worst_E);
  cr_expect(worst_du <= 1e-13 && worst_dw <= 1e-13, "reduced equations: udot %.3e, omegadot %.3e", worst_du, worst_dw);
  cr_expect(least_off >= 1e-6, "negative control: the energy identity holds off D (%.3e)", least_off);
}
