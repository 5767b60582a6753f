/* Tests of the test-system library of issue #4: cvt (spec/newmark.md §3.3, §5 C1, §6 A7-A8),
 * knife_edge, chaplygin_sleigh, vertical_disk (spec/rattle.md §4 A, B, D) and the unconstrained
 * oscillator (spec/discretization.md §3.3). Every check compares against something independent of
 * the code under test: finite differences, the spec's closed forms (multipliers, equations of
 * motion, exact solutions, energies), GSL's rk8pd reference, or values stated in the specs.
 * Sign convention: the code base writes the constraint force +Aᵀλ; rattle.md writes −μᵀλ, so its
 * multipliers appear here with the opposite sign. */
#include <criterion/criterion.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "integrators/integrator.h"
#include "tests/checks.h"
#include "systems/system.h"

/* ---- shared helpers ------------------------------------------------------------------------- */

static const char *const library[] = {"cvt", "knife_edge", "chaplygin_sleigh", "vertical_disk", "oscillator"};
#define NLIB (int)(sizeof library / sizeof library[0])

/* Non-default parameters, so that a parameter read from the wrong slot shows. */
static const char *const library_params[] = {"eps=0.1", "m=1.3,J=0.7,g=9.81,alpha=0.3", "m=2,I=0.5,a=0.3",
                                             "m=1.5,I_r=0.3,I_h=0.2,R=0.8", "omega=1.7"};

static double uniform(gsl_rng *r, double a) { return a * (2 * gsl_rng_uniform(r) - 1); }

static double max_abs_diff(int n, const double *a, const double *b) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
  return d;
}

static double state_dist(int n, const nh_state *a, const nh_state *b) {
  return fmax(max_abs_diff(n, a->q, b->q), max_abs_diff(n, a->v, b->v));
}

/* A random state on D built from each spec's parametrisation of D, not by the library's projection:
 * CVT ẏ = −sin ξ ẋ; knife v = (s cos θ, s sin θ, ω); sleigh v = u e_θ + aω e_θ⊥ with θ̇ = ω;
 * disk v = (RΩ cos φ, RΩ sin φ, Ω, ω); oscillator: anything. */
static nh_state random_state_on_D(const nh_system *sys, gsl_rng *r) {
  nh_state x;
  memset(&x, 0, sizeof x);
  x.t = uniform(r, 1);
  for (int i = 0; i < sys->n; i++) x.q[i] = uniform(r, 2), x.v[i] = uniform(r, 1.5);
  const char *name = sys->type->name;
  const double *p = sys->p;
  if (strcmp(name, "cvt") == 0) {
    x.v[1] = -sin(x.q[2]) * x.v[0];
  } else if (strcmp(name, "knife_edge") == 0) {
    const double s = x.v[0];
    x.v[0] = s * cos(x.q[2]), x.v[1] = s * sin(x.q[2]);
  } else if (strcmp(name, "chaplygin_sleigh") == 0) {
    const double u = x.v[0], w = x.v[2], a = p[2], th = x.q[2];
    x.v[0] = u * cos(th) - a * w * sin(th), x.v[1] = u * sin(th) + a * w * cos(th);
  } else if (strcmp(name, "vertical_disk") == 0) {
    const double R = p[3], Om = x.v[2], phi = x.q[3];
    x.v[0] = R * Om * cos(phi), x.v[1] = R * Om * sin(phi);
  }
  return x;
}

/* ---- derivatives by finite differences ------------------------------------------------------ */

/* Central differences (δ = 1e-5) of V, ∇V and A(q) at 10 random points, default and non-default
 * parameters (tests/checks.h). */

Test(system_library, derivatives_match_finite_differences) {
  for (int s = 0; s < NLIB; s++) {
    test_check_system_derivatives(library[s], "", 4711);
    test_check_system_derivatives(library[s], library_params[s], 4711);
  }
}

/* ---- multipliers and equations of motion against the specs' closed forms -------------------- */

/* The spec's λ (our sign) and accelerations at a state on D. */
static void spec_dynamics(const nh_system *sys, const nh_state *x, double *lambda, double *acc) {
  const char *name = sys->type->name;
  const double *p = sys->p, *q = x->q, *v = x->v;
  if (strcmp(name, "cvt") == 0) {
    /* newmark.md §3.3: λ = −(cos ξ ξ̇ ẋ − x sin ξ − y)/(1 + sin²ξ), ẍ = −x + λ sin ξ, ÿ = −y + λ,
     * ξ̈ = sin ξ + ε cos 2ξ (same +μλ sign as ours). */
    const double s = sin(q[2]);
    lambda[0] = -(cos(q[2]) * v[2] * v[0] - q[0] * s - q[1]) / (1 + s * s);
    acc[0] = -q[0] + lambda[0] * s, acc[1] = -q[1] + lambda[0];
    acc[2] = s + p[0] * cos(2 * q[2]);
  } else if (strcmp(name, "knife_edge") == 0) {
    /* rattle.md §4 A: λ_spec = m(sω + g sin α sin θ); m ẍ = m g sin α − λ_spec sin θ,
     * m ÿ = λ_spec cos θ, J θ̈ = 0. */
    const double m = p[0], Gs = p[2] * sin(p[3]), th = q[2], s = v[0] * cos(th) + v[1] * sin(th);
    const double ls = m * (s * v[2] + Gs * sin(th));
    lambda[0] = -ls;
    acc[0] = Gs - ls * sin(th) / m, acc[1] = ls * cos(th) / m, acc[2] = 0;
  } else if (strcmp(name, "chaplygin_sleigh") == 0) {
    /* rattle.md §4 B: λ_spec = −ωu/(1/m + a²/I); m ẍ = λ_spec sin θ, m ÿ = −λ_spec cos θ, I θ̈ = aλ_spec. */
    const double m = p[0], I = p[1], a = p[2], th = q[2], u = v[0] * cos(th) + v[1] * sin(th), w = v[2];
    const double ls = -w * u / (1 / m + a * a / I);
    lambda[0] = -ls;
    acc[0] = ls * sin(th) / m, acc[1] = -ls * cos(th) / m, acc[2] = a * ls / I;
  } else if (strcmp(name, "vertical_disk") == 0) {
    /* rattle.md §4 D: θ̈ = φ̈ = 0, so (ẍ, ÿ) = RΩω(−sin φ, cos φ) and λ = m(ẍ, ÿ) (our sign). */
    const double m = p[0], R = p[3], phi = q[3], Om = v[2], w = v[3];
    acc[0] = -R * Om * w * sin(phi), acc[1] = R * Om * w * cos(phi), acc[2] = acc[3] = 0;
    lambda[0] = m * acc[0], lambda[1] = m * acc[1];
  } else {
    const double w = p[0]; /* oscillator: q̈ = −ω² q, no multiplier */
    for (int i = 0; i < sys->n; i++) acc[i] = -w * w * q[i];
  }
}

static void check_dynamics(const char *name, const char *params) {
  nh_system sys = test_system(name, params);
  gsl_rng *r = test_rng(99);
  for (int trial = 0; trial < 10; trial++) {
    nh_state x = random_state_on_D(&sys, r);
    double lam[NH_MAX_K], acc[NH_MAX_N], lam_spec[NH_MAX_K], acc_spec[NH_MAX_N];
    cr_assert(nh_constraint_residual(&sys, x.q, x.v) <= 1e-15, "%s: test state off D", name);
    cr_assert(nh_multiplier(&sys, x.t, x.q, x.v, lam) == 0, "%s: nh_multiplier failed", name);
    cr_assert(nh_acceleration(&sys, x.t, x.q, x.v, acc) == 0, "%s: nh_acceleration failed", name);
    spec_dynamics(&sys, &x, lam_spec, acc_spec);
    for (int a = 0; a < sys.k; a++)
      cr_assert(fabs(lam[a] - lam_spec[a]) <= 1e-13 * (1 + fabs(lam_spec[a])), "%s(%s): lambda[%d] = %.17g, spec %.17g",
                name, params, a, lam[a], lam_spec[a]);
    for (int i = 0; i < sys.n; i++)
      cr_assert(fabs(acc[i] - acc_spec[i]) <= 1e-13 * (1 + fabs(acc_spec[i])), "%s(%s): acc[%d] = %.17g, spec %.17g",
                name, params, i, acc[i], acc_spec[i]);
  }
  gsl_rng_free(r);
}

Test(system_library, multipliers_and_accelerations_match_spec) {
  for (int s = 0; s < NLIB; s++) {
    check_dynamics(library[s], "");
    check_dynamics(library[s], library_params[s]);
  }
}

/* Energies by the specs' formulas: knife H = ½ms² + ½Jω² − mg sin α x; sleigh
 * H = ½m(u² + a²ω²) + ½Iω²; disk H = ½(mR² + I_r)Ω² + ½I_hω² (rattle.md §4); CVT §3.3. */
static double spec_energy(const nh_system *sys, const nh_state *x) {
  const char *name = sys->type->name;
  const double *p = sys->p, *q = x->q, *v = x->v;
  if (strcmp(name, "cvt") == 0)
    return 0.5 * (v[0] * v[0] + v[1] * v[1] + v[2] * v[2]) + 0.5 * (q[0] * q[0] + q[1] * q[1]) + cos(q[2]) -
           0.5 * p[0] * sin(2 * q[2]);
  if (strcmp(name, "knife_edge") == 0) {
    const double s = v[0] * cos(q[2]) + v[1] * sin(q[2]);
    return 0.5 * p[0] * s * s + 0.5 * p[1] * v[2] * v[2] - p[0] * p[2] * sin(p[3]) * q[0];
  }
  if (strcmp(name, "chaplygin_sleigh") == 0) {
    const double u = v[0] * cos(q[2]) + v[1] * sin(q[2]), a = p[2];
    return 0.5 * p[0] * (u * u + a * a * v[2] * v[2]) + 0.5 * p[1] * v[2] * v[2];
  }
  if (strcmp(name, "vertical_disk") == 0)
    return 0.5 * (p[0] * p[3] * p[3] + p[1]) * v[2] * v[2] + 0.5 * p[2] * v[3] * v[3];
  return 0.5 * (v[0] * v[0] + v[1] * v[1]) + 0.5 * p[0] * p[0] * (q[0] * q[0] + q[1] * q[1]);
}

Test(system_library, energy_matches_spec_formulas) {
  for (int s = 0; s < NLIB; s++) {
    nh_system sys = test_system(library[s], library_params[s]);
    gsl_rng *r = test_rng(5);
    for (int trial = 0; trial < 10; trial++) {
      nh_state x = random_state_on_D(&sys, r);
      double E = nh_energy(&sys, x.q, x.v), Es = spec_energy(&sys, &x);
      cr_assert(fabs(E - Es) <= 1e-14 * (1 + fabs(Es)), "%s: E = %.17g, spec formula %.17g", library[s], E, Es);
    }
    gsl_rng_free(r);
  }
}

/* ---- exact solutions ------------------------------------------------------------------------ */

static const double times[] = {-1.3, 0.0, 0.4, 2.0, 7.5};
#define NTIMES (int)(sizeof times / sizeof times[0])

/* exact(t0) = x0; along the exact flow: q̇ = v and v̇ = a(q, v) (central differences, δ = 1e-4),
 * on D, energy and invariants conserved. */
static void check_exact(const nh_system *sys, const nh_state *x0) {
  const int n = sys->n;
  const double d = 1e-4, E0 = nh_energy(sys, x0->q, x0->v);
  double I0[NH_MAX_INVARIANTS], I[NH_MAX_INVARIANTS];
  nh_state x, xp, xm;
  cr_assert(nh_exact_solution(sys, x0, x0->t, &x) == 0, "%s: exact() declined a state on D", sys->type->name);
  cr_assert(state_dist(n, &x, x0) <= 1e-15, "%s: exact(t0) differs from x0 by %.3e", sys->type->name,
            state_dist(n, &x, x0));
  nh_invariants(sys, x0->q, x0->v, I0);
  for (int i = 0; i < NTIMES; i++) {
    double t = x0->t + times[i], acc[NH_MAX_N], dq[NH_MAX_N], dv[NH_MAX_N];
    nh_exact_solution(sys, x0, t, &x);
    nh_exact_solution(sys, x0, t + d, &xp);
    nh_exact_solution(sys, x0, t - d, &xm);
    cr_assert(nh_acceleration(sys, x.t, x.q, x.v, acc) == 0, "nh_acceleration failed");
    for (int j = 0; j < n; j++) dq[j] = (xp.q[j] - xm.q[j]) / (2 * d), dv[j] = (xp.v[j] - xm.v[j]) / (2 * d);
    cr_assert(max_abs_diff(n, dq, x.v) <= 1e-7, "%s t=%g: |dq/dt - v| = %.3e", sys->type->name, t,
              max_abs_diff(n, dq, x.v));
    cr_assert(max_abs_diff(n, dv, acc) <= 1e-7, "%s t=%g: |dv/dt - a(q,v)| = %.3e", sys->type->name, t,
              max_abs_diff(n, dv, acc));
    cr_assert(nh_constraint_residual(sys, x.q, x.v) <= 1e-14, "%s t=%g: off D by %.3e", sys->type->name, t,
              nh_constraint_residual(sys, x.q, x.v));
    double dE = fabs(nh_energy(sys, x.q, x.v) - E0);
    cr_assert(dE <= 1e-13 * (1 + fabs(E0)), "%s t=%g: |E - E0| = %.3e", sys->type->name, t, dE);
    nh_invariants(sys, x.q, x.v, I);
    for (int j = 0; j < nh_invariant_count(sys); j++)
      cr_assert(fabs(I[j] - I0[j]) <= 1e-14 * (1 + fabs(I0[j])), "%s t=%g: %s changes by %.3e", sys->type->name, t,
                nh_invariant_name(sys, j), I[j] - I0[j]);
  }
}

static const char *const with_exact[] = {"knife_edge", "vertical_disk", "oscillator"};
static const char *const with_exact_params[] = {"m=1.3,J=0.7,g=9.81,alpha=0.3", "m=1.5,I_r=0.3,I_h=0.2,R=0.8",
                                                "omega=1.7"};

Test(system_library, exact_solutions_solve_equations_of_motion) {
  for (int s = 0; s < 3; s++) {
    nh_system sys = test_system(with_exact[s], "");
    for (int i = 0; i < test_knowledge(sys.type)->npresets; i++) {
      nh_state x0 = test_preset(&sys, test_knowledge(sys.type)->presets[i].name);
      check_exact(&sys, &x0);
    }
    sys = test_system(with_exact[s], with_exact_params[s]);
    gsl_rng *r = test_rng(17);
    for (int trial = 0; trial < 5; trial++) {
      nh_state x0 = random_state_on_D(&sys, r);
      check_exact(&sys, &x0);
      /* The last velocity is the turning rate ω of the knife and the disk (changing it keeps the
       * state on D): ω = 0 is the straight-line limit, and ω = 1e-7 its neighbourhood, where the
       * spec's 1/ω formulas would cancel. */
      x0.v[sys.n - 1] = 0;
      check_exact(&sys, &x0);
      x0.v[sys.n - 1] = 1e-7;
      check_exact(&sys, &x0);
    }
    gsl_rng_free(r);
  }
}

Test(system_library, exact_solutions_match_reference) {
  /* GSL rk8pd at tol 1e-13 against the closed forms, T = 10 (spec/rattle.md §4 A, D: T = 10). */
  for (int s = 0; s < 3; s++) {
    for (int variant = 0; variant < 2; variant++) {
      nh_system sys = test_system(with_exact[s], variant ? with_exact_params[s] : "");
      gsl_rng *r = test_rng(23);
      const char *preset = sys.type->knowledge->presets[0].name;
      nh_state x0 = variant ? random_state_on_D(&sys, r) : test_preset(&sys, preset), ref, ex;
      gsl_rng_free(r);
      cr_assert(nh_reference_solve(&sys, &x0, x0.t + 10, 1e-13, &ref) == 0, "nh_reference_solve failed");
      nh_exact_solution(&sys, &x0, x0.t + 10, &ex);
      cr_assert(state_dist(sys.n, &ref, &ex) <= 1e-10, "%s: reference vs exact at T=10: %.3e", with_exact[s],
                state_dist(sys.n, &ref, &ex));
    }
  }
}

Test(system_library, exact_solutions_match_spec_formulas) {
  /* rattle.md §4 A, literally (ω ≠ 0): G = g sin α/ω, A = s0 − G sin θ0, θ = θ0 + ωt,
   * s = s0 + G(sin θ − sin θ0), x = x0 + A(sin θ − sin θ0)/ω + G(sin²θ − sin²θ0)/(2ω),
   * y = y0 + A(cos θ0 − cos θ)/ω + G[t/2 − (sin 2θ − sin 2θ0)/(4ω)]. */
  nh_system knife = test_system("knife_edge", "m=1.3,J=0.7,g=9.81,alpha=0.3");
  const double x0 = 0.4, y0 = -0.2, th0 = 0.7, s0 = -0.3, w = 1.9, t = 2.6;
  nh_state a = {.t = 0, .q = {x0, y0, th0}, .v = {s0 * cos(th0), s0 * sin(th0), w}}, e;
  cr_assert(nh_exact_solution(&knife, &a, t, &e) == 0);
  const double G = 9.81 * sin(0.3) / w, A = s0 - G * sin(th0), th = th0 + w * t, s = s0 + G * (sin(th) - sin(th0));
  const double xs = x0 + A * (sin(th) - sin(th0)) / w + G * (sin(th) * sin(th) - sin(th0) * sin(th0)) / (2 * w);
  const double ys = y0 + A * (cos(th0) - cos(th)) / w + G * (t / 2 - (sin(2 * th) - sin(2 * th0)) / (4 * w));
  const double expect[6] = {xs, ys, th, s * cos(th), s * sin(th), w};
  const double got[6] = {e.q[0], e.q[1], e.q[2], e.v[0], e.v[1], e.v[2]};
  cr_assert(max_abs_diff(6, got, expect) <= 1e-13, "knife: closed form differs from spec by %.3e",
            max_abs_diff(6, got, expect));
  /* IC-1 (θ0 = s0 = x0 = y0 = 0): Bloch's x = (g sin α/2ω²) sin²ωt, y = (g sin α/2ω²)(ωt − ½ sin 2ωt). */
  nh_system k1 = test_system("knife_edge", "");
  nh_state ic1 = test_preset(&k1, "ic1");
  nh_exact_solution(&k1, &ic1, t, &e);
  const double gs = k1.p[2] * sin(k1.p[3]) / 2; /* g sin α/(2ω²), ω = 1 */
  cr_assert(fabs(e.q[0] - gs * sin(t) * sin(t)) <= 1e-14 && fabs(e.q[1] - gs * (t - 0.5 * sin(2 * t))) <= 1e-14,
            "knife IC-1 differs from Bloch's formula");
  /* rattle.md §4 D: x = x0 + (RΩ/ω)(sin φ − sin φ0), y = y0 − (RΩ/ω)(cos φ − cos φ0). */
  nh_system disk = test_system("vertical_disk", "m=1.5,I_r=0.3,I_h=0.2,R=0.8");
  const double phi0 = -0.4, Om = 1.3, wd = -0.7, phi = phi0 + wd * t;
  nh_state d0 = {.t = 0, .q = {0.1, 0.2, 0.3, phi0}, .v = {0.8 * Om * cos(phi0), 0.8 * Om * sin(phi0), Om, wd}};
  cr_assert(nh_exact_solution(&disk, &d0, t, &e) == 0);
  cr_assert(fabs(e.q[0] - (0.1 + 0.8 * Om / wd * (sin(phi) - sin(phi0)))) <= 1e-14 &&
                fabs(e.q[1] - (0.2 - 0.8 * Om / wd * (cos(phi) - cos(phi0)))) <= 1e-14 &&
                fabs(e.q[2] - (0.3 + Om * t)) <= 1e-14 && fabs(e.q[3] - phi) <= 1e-14,
            "disk closed form differs from the spec");
}

Test(system_library, exact_solutions_decline_states_off_D) {
  /* Off D the closed forms do not describe the motion; the runner then uses the reference. */
  nh_state x;
  nh_system knife = test_system("knife_edge", "");
  nh_state a = test_preset(&knife, "ic2");
  a.v[1] += 1e-6;
  cr_assert(nh_exact_solution(&knife, &a, 1, &x) != 0, "knife exact() accepted a state off D");
  /* The disk's two rolling constraints (ẋ and ẏ rows), each violated alone. */
  nh_system disk = test_system("vertical_disk", "");
  for (int row = 0; row < 2; row++) {
    nh_state b = test_preset(&disk, "ic1");
    cr_assert(nh_exact_solution(&disk, &b, 1, &x) == 0, "disk exact() declined its preset");
    b.v[row] += 1e-6;
    cr_assert(nh_exact_solution(&disk, &b, 1, &x) != 0, "disk exact() accepted a state off rolling row %d", row);
  }
  /* The falling disk upright (spec/herglotz.md §3.2): Ẋ = R cos ϕ ψ̇ and Ẏ = R sin ϕ ψ̇, each
   * violated alone (ϕ0 = 0.7 so that both rows carry a velocity). */
  nh_system fd = test_system("falling_disk", "");
  for (int row = 0; row < 3; row++) {
    const double R = fd.p[1], phi = 0.7, psid = 2.5;
    nh_state c = {.t = 0.2, .q = {0.1, -0.3, 0, phi, 0.4}, .v = {R * cos(phi) * psid, R * sin(phi) * psid, 0, 0, psid}};
    if (row < 2) c.v[row] += 1e-9;
    cr_expect_eq(nh_exact_solution(&fd, &c, 1, &x), row < 2 ? -1 : 0, "falling_disk exact(), row %d violated", row);
  }
}

/* Every exact solution returns a clean state: t, and q, v in their first n entries; every other
 * field (the action z, the multiplier, the carry, the unused entries of q and v) is what it was in
 * a clean start, 0, not left over or filled with stray bits. */
Test(system_library, exact_solutions_return_clean_states) {
  int checked = 0;
  for (int i = 0; nh_system_types[i]; i++) {
    const nh_system_type *T = nh_system_types[i];
    if (!test_knowledge(T)->exact) continue;
    nh_system sys = test_system_of(T, NULL);
    for (int pr = -1; pr < test_knowledge(T)->npresets; pr++) {
      nh_state x0, x;
      memset(&x0, 0, sizeof x0);
      if (pr < 0) nh_system_default_state(&sys, &x0);
      else x0 = test_preset(&sys, test_knowledge(T)->presets[pr].name);
      x0.z = 0;
      memset(x0.lambda, 0, sizeof x0.lambda), memset(x0.carry, 0, sizeof x0.carry);
      for (int j = sys.n; j < NH_MAX_N; j++) x0.q[j] = x0.v[j] = 0;
      memset(&x, 0x55, sizeof x); /* not zero: exact() must write what it returns */
      if (test_knowledge(T)->exact(sys.p, &x0, x0.t + 0.7, &x) != 0) continue;
      const char *what = pr < 0 ? "default" : test_knowledge(T)->presets[pr].name;
      cr_expect_eq(x.t, x0.t + 0.7, "%s %s: t", T->name, what);
      cr_expect_eq(x.z, 0, "%s %s: z = %g", T->name, what, x.z);
      for (int a = 0; a < NH_MAX_K; a++) cr_expect_eq(x.lambda[a], 0, "%s %s: lambda[%d] = %g", T->name, what, a, x.lambda[a]);
      for (int c = 0; c < NH_MAX_CARRY; c++) cr_expect_eq(x.carry[c], 0, "%s %s: carry[%d] = %g", T->name, what, c, x.carry[c]);
      for (int j = sys.n; j < NH_MAX_N; j++)
        cr_expect(x.q[j] == 0 && x.v[j] == 0, "%s %s: entry %d beyond n = %d: %g, %g", T->name, what, j, sys.n, x.q[j],
                  x.v[j]);
      checked++;
    }
  }
  cr_expect(checked >= 10, "only %d exact states checked", checked);
}

/* ---- systems without an exact solution: the reference --------------------------------------- */

Test(system_library, sleigh_reference_matches_reduced_closed_form) {
  /* rattle.md §4 B: u̇ = aω², ω̇ = −c u ω, c = ma/(I + ma²), with m u² + (I + ma²) ω² = 2H. Hence
   * [derived] u = U tanh σ, ω = sgn(ω0) U √(m/(I + ma²)) sech σ, σ = σ0 + cUt, σ0 = atanh(u0/U),
   * U = √(2H/m), and θ = θ0 + sgn(ω0) (√(m/(I + ma²))/c) (gd σ − gd σ0), gd σ = atan(sinh σ);
   * the CM velocity is u e_θ + aω e_θ⊥. Checked for the spec's IC and for another one. */
  const char *params[] = {"", "m=2,I=0.5,a=0.3"};
  for (int variant = 0; variant < 2; variant++) {
    nh_system sys = test_system("chaplygin_sleigh", params[variant]);
    const double m = sys.p[0], I = sys.p[1], a = sys.p[2], T = 10;
    nh_state x0 = test_preset(&sys, "ic1"), ref;
    if (variant) { /* θ0 = 0.5, u0 = −0.4, ω0 = −0.7: lateral speed aω0 = −0.21 */
      x0 = (nh_state){.q = {0.3, -0.1, 0.5}, .v = {0, 0, -0.7}};
      x0.v[0] = -0.4 * cos(0.5) + 0.21 * sin(0.5);
      x0.v[1] = -0.4 * sin(0.5) - 0.21 * cos(0.5);
    }
    cr_assert(nh_constraint_residual(&sys, x0.q, x0.v) <= 1e-15, "sleigh test IC off D");
    const double th0 = x0.q[2], u0 = x0.v[0] * cos(th0) + x0.v[1] * sin(th0), w0 = x0.v[2];
    const double H = nh_energy(&sys, x0.q, x0.v), U = sqrt(2 * H / m), c = m * a / (I + m * a * a);
    const double r = sqrt(m / (I + m * a * a)), sg = w0 > 0 ? 1 : -1, s0 = atanh(u0 / U), s = s0 + c * U * T;
    const double u = U * tanh(s), w = sg * U * r / cosh(s), th = th0 + sg * (r / c) * (atan(sinh(s)) - atan(sinh(s0)));
    cr_assert(nh_reference_solve(&sys, &x0, T, 1e-13, &ref) == 0, "nh_reference_solve failed");
    const double vx = u * cos(th) - a * w * sin(th), vy = u * sin(th) + a * w * cos(th);
    double err = fmax(fmax(fabs(ref.q[2] - th), fabs(ref.v[2] - w)), fmax(fabs(ref.v[0] - vx), fabs(ref.v[1] - vy)));
    cr_assert(err <= 1e-10, "sleigh(%s): reference vs reduced closed form at T=10: %.3e", params[variant], err);
    double dE = fabs(nh_energy(&sys, ref.q, ref.v) - H);
    cr_assert(dE <= 1e-11, "sleigh: energy changes by %.3e along the reference", dE);
    cr_assert(nh_constraint_residual(&sys, ref.q, ref.v) <= 1e-11, "sleigh: reference leaves D");
  }
}

Test(system_library, cvt_reference_conserves_energy_and_driver_energy) {
  /* E and the decoupled driver's ½ξ̇² + cos ξ − (ε/2) sin 2ξ are first integrals (newmark.md §3.3). */
  const char *presets[] = {"eps0", "eps01"};
  for (int i = 0; i < 2; i++) {
    nh_system sys = test_system("cvt", "");
    nh_state x0 = test_preset(&sys, presets[i]), ref;
    double E0 = nh_energy(&sys, x0.q, x0.v), D0, D;
    nh_invariants(&sys, x0.q, x0.v, &D0);
    for (double T = 2.5; T <= 10; T += 2.5) {
      cr_assert(nh_reference_solve(&sys, &x0, T, 1e-13, &ref) == 0, "nh_reference_solve failed");
      nh_invariants(&sys, ref.q, ref.v, &D);
      cr_assert(fabs(nh_energy(&sys, ref.q, ref.v) - E0) <= 1e-11, "cvt %s: energy drifts along the reference",
                presets[i]);
      cr_assert(fabs(D - D0) <= 1e-11, "cvt %s: driver energy drifts by %.3e", presets[i], D - D0);
      cr_assert(nh_constraint_residual(&sys, ref.q, ref.v) <= 1e-11, "cvt %s: reference leaves D", presets[i]);
    }
  }
}

Test(system_library, invariants_conserved_along_reference) {
  /* Momentum maps of horizontal symmetries (rattle.md §4 A p_θ = Jω, §4 D p_φ = I_h φ̇) and the
   * oscillator's angular momentum: their formulas, and conservation along the reference from random
   * states with non-default parameters, T = 5. */
  for (int s = 0; s < 3; s++) {
    nh_system sys = test_system(with_exact[s], with_exact_params[s]);
    gsl_rng *r = test_rng(41);
    nh_state x0 = random_state_on_D(&sys, r), ref;
    gsl_rng_free(r);
    double I0, I;
    nh_invariants(&sys, x0.q, x0.v, &I0);
    const double spec = s == 0 ? sys.p[1] * x0.v[2]                       /* p_θ = J θ̇ */
                        : s == 1 ? sys.p[2] * x0.v[3]                     /* p_φ = I_h φ̇ */
                                 : x0.q[0] * x0.v[1] - x0.q[1] * x0.v[0]; /* x ẏ − y ẋ */
    cr_assert(fabs(I0 - spec) <= 1e-15 * (1 + fabs(spec)), "%s: %s = %.17g, formula %.17g", with_exact[s],
              nh_invariant_name(&sys, 0), I0, spec);
    cr_assert(nh_reference_solve(&sys, &x0, x0.t + 5, 1e-13, &ref) == 0);
    nh_invariants(&sys, ref.q, ref.v, &I);
    cr_assert(fabs(I - I0) <= 1e-11 * (1 + fabs(I0)), "%s: %s changes by %.3e", with_exact[s],
              nh_invariant_name(&sys, 0), I - I0);
  }
}

/* ---- random states on D (spec/newmark.md §6 A10) -------------------------------------------- */

static const double sample_energy[] = {1.0, 1.0, 1.125, 0.875, 0.625};

static void draw(const nh_system *sys, double E, unsigned long seed, nh_state *s, int count) {
  gsl_rng *r = test_rng(seed);
  for (int i = 0; i < count; i++)
    cr_assert(nh_sample_on_D(sys, E, r, &s[i]) == 0, "%s: nh_sample_on_D failed", sys->type->name);
  gsl_rng_free(r);
}

Test(system_library, sampler_states_on_D_at_energy_and_deterministic) {
  enum { COUNT = 10 };
  for (int k = 0; k < NLIB; k++) {
    nh_system sys = test_system(library[k], library_params[k]);
    const double E = sample_energy[k], box = sys.type->knowledge->sample_box;
    nh_state a[COUNT], b[COUNT], c[COUNT];
    draw(&sys, E, 2024, a, COUNT);
    draw(&sys, E, 2024, b, COUNT);
    draw(&sys, E, 2025, c, COUNT);
    for (int i = 0; i < COUNT; i++) {
      cr_assert(nh_constraint_residual(&sys, a[i].q, a[i].v) <= 1e-14, "%s sample %d: off D by %.3e", library[k], i,
                nh_constraint_residual(&sys, a[i].q, a[i].v));
      cr_assert(fabs(spec_energy(&sys, &a[i]) - E) <= 1e-13 * E, "%s sample %d: energy %.17g, asked %g", library[k],
                i, spec_energy(&sys, &a[i]), E);
      for (int j = 0; j < sys.n; j++) cr_assert(fabs(a[i].q[j]) <= box, "%s sample %d outside the box", library[k], i);
      cr_assert(memcmp(&a[i], &b[i], sizeof a[i]) == 0, "%s sample %d differs for the same seed", library[k], i);
      cr_assert(state_dist(sys.n, &a[i], &c[i]) > 1e-6, "%s sample %d: seeds 2024 and 2025 agree", library[k], i);
    }
  }
}

/* ---- presets: the specs' stated values ------------------------------------------------------ */

static void check_preset(const char *system, const char *preset, double E, double Etol, double res_lo,
                         double res_hi) {
  nh_system sys = test_system(system, "");
  nh_state x = test_preset(&sys, preset);
  double e = nh_energy(&sys, x.q, x.v), r = nh_constraint_residual(&sys, x.q, x.v);
  cr_assert(fabs(e - E) <= Etol, "%s/%s: E0 = %.10g, spec %.10g", system, preset, e, E);
  cr_assert(r >= res_lo && r <= res_hi, "%s/%s: residual %.3e not in [%g, %g]", system, preset, r, res_lo, res_hi);
}

Test(system_library, cvt_presets_match_spec_C1) {
  /* newmark.md §5 C1, §3.3, §6 A7-A8: E0 = 0.2722602 (projected), 0.2722781 (printed, residual
   * 4.4e-5), 6 exactly (eps = 0.1). */
  check_preset("cvt", "eps0", 0.2722602, 5e-8, 0, 1e-16);
  check_preset("cvt", "eps0_printed", 0.2722781, 5e-8, 4.35e-5, 4.45e-5);
  check_preset("cvt", "eps01", 6.0, 1e-14, 0, 0);
  nh_system sys = test_system("cvt", "");
  nh_state x01 = test_preset(&sys, "eps01");
  cr_assert(sys.p[0] == 0.1 && x01.v[2] == 2 * sqrt(2.0), "preset eps01: eps = 0.1, xidot0 = 2 sqrt 2");
  nh_state x = test_preset(&sys, "eps0");
  cr_assert(sys.p[0] == 0, "preset eps0 must set eps = 0");
  cr_assert_float_eq(x.v[1], -sin(2.0) * 0.4481, 1e-16, "A7: ydot0 = -sin(xi0) xdot0 = -0.40745617696...");
  nh_state d;
  nh_system_default_state(&sys, &d);
  cr_assert(state_dist(3, &d, &x) == 0, "the CVT default IC must be preset eps0");
}

Test(system_library, rattle_presets_match_spec) {
  /* rattle.md §4: knife IC-1 H0 = 0.5 (λ = 0), IC-2 H0 = 0.625, λ_spec = 0.5 + sin 0.3 = 0.795520;
   * sleigh H0 = 1.125, λ_spec = −0.8; disk H0 = 0.875, λ_spec = (0, −1); our λ = −λ_spec. */
  check_preset("knife_edge", "ic1", 0.5, 1e-15, 0, 0);
  check_preset("knife_edge", "ic2", 0.625, 1e-15, 0, 1e-16);
  check_preset("chaplygin_sleigh", "ic1", 1.125, 1e-15, 0, 0);
  check_preset("vertical_disk", "ic1", 0.875, 1e-15, 0, 0);
  struct {
    const char *system, *preset;
    double lambda[2], invariant;
  } cases[] = {{"knife_edge", "ic1", {0, 0}, 1},
               {"knife_edge", "ic2", {-0.795520, 0}, 1},
               {"chaplygin_sleigh", "ic1", {0.8, 0}, NAN},
               {"vertical_disk", "ic1", {0, 1}, 0.25}};
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    nh_system sys = test_system(cases[i].system, "");
    nh_state x = test_preset(&sys, cases[i].preset);
    double lam[NH_MAX_K], inv;
    cr_assert(nh_multiplier(&sys, 0, x.q, x.v, lam) == 0);
    for (int a = 0; a < sys.k; a++)
      cr_assert(fabs(lam[a] - cases[i].lambda[a]) <= 5e-7, "%s/%s: lambda[%d](0) = %.9g, spec (our sign) %.9g",
                cases[i].system, cases[i].preset, a, lam[a], cases[i].lambda[a]);
    if (nh_invariant_count(&sys)) {
      nh_invariants(&sys, x.q, x.v, &inv);
      cr_assert_float_eq(inv, cases[i].invariant, 1e-15, "%s: momentum map %g", cases[i].system, inv);
    }
  }
}

Test(system_library, oscillator_presets) {
  /* E = ½|v|² + ½ω²|q|², L = x ẏ − y ẋ with ω = 1. */
  check_preset("oscillator", "ellipse", 0.625, 1e-15, 0, 0);
  check_preset("oscillator", "circle", 1.0, 1e-15, 0, 0);
}

/* ---- k = 0: the generic functions and the integrators --------------------------------------- */

static nh_method *parse(const char *text) {
  char err[256] = "";
  nh_method *m = nh_method_parse(text, err, sizeof err);
  cr_assert(m != NULL, "%s", err);
  return m;
}

Test(system_library, unconstrained_generic_functions) {
  nh_system sys = test_system("oscillator", "omega=1.7");
  nh_state x = {.q = {0.3, -0.8}, .v = {1.1, 0.4}};
  double acc[2], v[2] = {1.1, 0.4}, lam[NH_MAX_K] = {0}, curv[NH_MAX_K] = {0};
  char err[256];
  cr_assert(nh_system_features(&sys) == 0, "the oscillator needs no extra features");
  cr_assert(nh_multiplier(&sys, 0, x.q, x.v, lam) == 0, "nh_multiplier with k = 0");
  cr_assert(nh_acceleration(&sys, 0, x.q, x.v, acc) == 0, "nh_acceleration with k = 0");
  cr_assert(fabs(acc[0] + 1.7 * 1.7 * 0.3) <= 1e-15 && fabs(acc[1] - 1.7 * 1.7 * 0.8) <= 1e-15, "a = -omega^2 q");
  cr_assert(nh_project_velocity(&sys, x.q, v) == 0 && v[0] == 1.1 && v[1] == 0.4, "projection must be the identity");
  cr_assert(nh_constraint_residual(&sys, x.q, x.v) == 0, "no constraint, no residual");
  nh_curvature_term(&sys, x.q, x.v, curv);
  const char *methods[] = {"rk4", "nh_newmark(alpha=0.5)", "triple_jump(nh_newmark(alpha=0.5))"};
  for (int i = 0; i < 3; i++) {
    nh_method *m = parse(methods[i]);
    cr_assert(nh_method_applies(m, &sys, err, sizeof err) == 0, "%s", err);
    nh_method_free(m);
  }
}

/* One step of a linear unconstrained system against closed forms: RK4 is the degree-4 Taylor
 * polynomial of exp(hL) for q̈ = −ω²q; nh_newmark(beta=β, beta2=β) with k = 0 is classical Newmark
 * (β, γ = ½) (spec/newmark.md §2.1-2.2): (1 + βh²ω²) q1 = q0 + h v0 − (h²/2)(1 − 2β)ω² q0,
 * v1 = v0 − (h/2)ω²(q0 + q1); β = 0 is Störmer-Verlet. */
Test(system_library, unconstrained_steps_match_closed_forms) {
  const double w = 1.7, h = 0.3, w2 = w * w;
  nh_system sys = test_system("oscillator", "omega=1.7");
  nh_state x = {.t = 0.2, .q = {0.3, -0.8}, .v = {1.1, 0.4}}, y;
  nh_cost cost = {0};

  nh_method *rk4 = parse("rk4");
  cr_assert(nh_method_step(rk4, &sys, &x, &y, h, &cost) == NH_STEP_OK);
  for (int i = 0; i < 2; i++) {
    double q = x.q[i], v = x.v[i], eq = 0, ev = 0, fac = 1;
    for (int j = 0; j <= 4; j++) { /* (hL)^j (q, v) / j!, L(q, v) = (v, −ω²q) */
      eq += q / fac, ev += v / fac;
      double nq = h * v, nv = -h * w2 * q;
      q = nq, v = nv, fac *= j + 1;
    }
    cr_assert(fabs(y.q[i] - eq) <= 1e-14 && fabs(y.v[i] - ev) <= 1e-14, "rk4 step differs from the Taylor polynomial");
  }
  cr_assert_float_eq(y.t, x.t + h, 1e-16);
  nh_method_free(rk4);

  const double betas[] = {0, 0.1};
  const char *names[] = {"nh_newmark(alpha=0.5)", "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)"};
  for (int b = 0; b < 2; b++) {
    nh_method *m = parse(names[b]);
    const double beta = betas[b];
    cr_assert(nh_method_step(m, &sys, &x, &y, h, &cost) == NH_STEP_OK, "%s failed with k = 0", names[b]);
    for (int i = 0; i < 2; i++) {
      double q1 = (x.q[i] + h * x.v[i] - 0.5 * h * h * (1 - 2 * beta) * w2 * x.q[i]) / (1 + beta * h * h * w2);
      double v1 = x.v[i] - 0.5 * h * w2 * (x.q[i] + q1);
      cr_assert(fabs(y.q[i] - q1) <= 1e-14 && fabs(y.v[i] - v1) <= 1e-14, "%s: (%.17g, %.17g), Newmark (%.17g, %.17g)",
                names[b], y.q[i], y.v[i], q1, v1);
    }
    /* h < 0 must work for one-step methods. */
    cr_assert(nh_method_step(m, &sys, &x, &y, -h, &cost) == NH_STEP_OK, "%s failed for h < 0", names[b]);
    nh_method_free(m);
  }
}

/* The peers' own runs as presets (issue 46 item 6), recomputed here from the peers' formulas: the
 * contact-integrators notebooks' init_ecc(e) unpacked as (p0, q0), odelab's test_z0 with numpy's
 * linspace value of z0, the spin-orbit figure c-fig5b, the damped oscillator notebook, odelab's
 * rolling disk with unit mass; each with the parameters it sets. */
static void expect_state(const char *system, const char *preset, const double *q, const double *v, const char *params,
                         const double *values) {
  nh_system sys = test_system(system, NULL);
  nh_state x = test_preset(&sys, preset);
  for (int i = 0; i < sys.n; i++)
    cr_expect(x.q[i] == q[i] && x.v[i] == v[i], "%s %s: (q, v)_%d = (%.17g, %.17g), expected (%.17g, %.17g)", system,
              preset, i, x.q[i], x.v[i], q[i], v[i]);
  char names[256];
  snprintf(names, sizeof names, "%s", params);
  int j = 0;
  for (char *save = NULL, *name = strtok_r(names, ",", &save); name; name = strtok_r(NULL, ",", &save), j++) {
    const int k = nh_param_index(sys.type->params, sys.type->nparams, name);
    cr_assert(k >= 0, "%s: no parameter %s", system, name);
    cr_expect(sys.p[k] == values[j], "%s %s: %s = %.17g, expected %.17g", system, preset, name, sys.p[k], values[j]);
  }
}

Test(system_library, peer_runs_as_presets) {
  const double es[] = {0.4, 0.01};
  const char *kepler[][2] = {{"k5_30_as_run", "pi_55_as_run"}, {"scattering_as_run", "small_ecc_as_run"}};
  for (int i = 0; i < 2; i++)
    for (int j = 0; j < 2; j++) {
      const double e = es[i], q[] = {0, sqrt((1 + e) / (1 - e))}, v[] = {1 - e, 0}, gamma[] = {-1};
      expect_state("time_perturbed_kepler", kepler[i][j], q, v, "gamma", gamma);
    }
  const double z0 = (-0.9 + 5 * (1.8 / 9)) * sqrt(2.0), eps = 0.3; /* numpy: start + i·step */
  const double qc[] = {sqrt((2 * (1.5 - 0.5) - z0 * z0) / (1 + eps * z0 * z0)), 0, z0}, vc[] = {0, 1, 0}, pc[] = {eps};
  expect_state("contact_oscillator", "odelab_test_z0", qc, vc, "eps", pc);
  cr_expect(z0 < 0.1 * sqrt(2.0), "odelab's z0 is one ulp below 0.1 sqrt 2");
  const double qs[] = {M_PI}, vs[] = {1}, ps[] = {0.06, 0.045, sqrt(2.0), 0.2, 0, 0};
  expect_state("spin_orbit", "fig5b", qs, vs, "ecc,eps,omega,lambda,a,mu", ps);
  const double qd[] = {1}, vd[] = {1}, pd[] = {0.125, 1, 0};
  expect_state("damped_oscillator", "notebook_a0125", qd, vd, "alpha,omega,beta", pd);
  const double qv[] = {0, 0, 0, 0}, vv[] = {1, 0, 1, 2}, pv[] = {1, 1, 1, 1};
  expect_state("vertical_disk", "odelab", qv, vv, "m,I_r,I_h,R", pv);
  nh_system disk = test_system("vertical_disk", NULL);
  nh_state x = test_preset(&disk, "odelab");
  cr_expect(fabs(nh_energy(&disk, x.q, x.v) - 3) <= 1e-15 && nh_constraint_residual(&disk, x.q, x.v) == 0,
            "odelab's disk: E0 = %.17g (odelab: 3), on D", nh_energy(&disk, x.q, x.v));
}
