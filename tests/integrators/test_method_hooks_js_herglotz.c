/* What the Jiménez–Scheurle schemes (integrators/jimenez_scheurle.c) and the Herglotz family
 * (integrators/herglotz.c) define for the observables (integrators/integrator.h): multipliers and
 * the time they approximate, discrete constraints, the midpoint energy, discrete Lagrangians, the
 * Newton systems, and the constraint_evals counter. Expected values come from the specs
 * (spec/discretization.md §2.4–2.8, §5 R1–R15, §6.5; spec/herglotz.md §2.3–2.7, §5–6), exact
 * solutions, finite differences, or a counter wrapped around the system's own A(q); each
 * acceptance check has a negative control beside it. */
#include <criterion/criterion.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_randist.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "integrators/integrator.h"
#include "tests/checks.h"
#include "tests/twisted.h"


/* ---- helpers ---------------------------------------------------------------------------------- */

typedef struct {
  const char *method, *system, *params, *preset;
  int a;
  double T, h, offset; /* the declared time */
  double order;        /* expected at the declared time */
  double control;      /* order at the step's end (offset 0) when that differs, else 0 */
} lambda_case;

/* The signed error ratio e(h)/e(h/2) ≈ 2^order at the declared time (within 10%) and |e| < λ/5;
 * a sign error (e ≈ −2λ) fails both, and the wrong time fails the ratio when it has another order. */
static void check_lambda_case(const lambda_case *c) {
  double lam[NH_MAX_K];
  nh_system sys = test_system(c->system, c->params);
  nh_state x0 = test_preset_or_default(&sys, c->preset);
  test_true_lambda(&sys, &x0, c->T, lam);
  const double e1 = test_lambda_error(c->method, c->system, c->params, c->preset, c->a, c->h, c->T, c->offset);
  const double e2 = test_lambda_error(c->method, c->system, c->params, c->preset, c->a, c->h / 2, c->T, c->offset);
  const double want = pow(2, c->order);
  cr_expect(fabs(e1 / e2 - want) < 0.1 * want, "%s on %s: signed error ratio %.3f (errors %.3e, %.3e), expected %g",
            c->method, c->system, e1 / e2, e1, e2, want);
  cr_expect(fabs(e1) < 0.2 * fabs(lam[c->a]), "%s on %s: error %.3e against lambda = %.4f", c->method, c->system, e1,
            lam[c->a]);
  if (c->control > 0) {
    const double f1 = test_lambda_error(c->method, c->system, c->params, c->preset, c->a, c->h, c->T, 0);
    const double f2 = test_lambda_error(c->method, c->system, c->params, c->preset, c->a, c->h / 2, c->T, 0);
    const double w = pow(2, c->control);
    cr_expect(fabs(f1 / f2 - w) < 0.1 * w, "%s on %s: control at t_{k+1}, ratio %.3f, expected %g", c->method,
              c->system, f1 / f2, w);
  }
}

/* ---- multipliers (spec/discretization.md §6.5, R3, R6; spec/herglotz.md (3.4)) ------------------ */

/* Scheme A and P1: λ_{k+1} of (82) is first order at t_{k+1} (R3, Prop 6.1), on the free particle
 * (exact solution, §3.2) and on the knife edge. */
Test(hooks_js_herglotz, js_a_multiplier_order_one_at_step_end) {
  const lambda_case cases[] = {
      {"js_a", "particle", NULL, "discretization", 0, 2, 0.02, 0, 1, 0},
      {"js_p1", "particle", NULL, "discretization", 0, 2, 0.02, 0, 1, 0},
      {"js_a", "knife_edge", NULL, "ic2", 0, 2, 0.02, 0, 1, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_lambda_case(&cases[i]);
  /* R10: P1 is Scheme A written out, the same multiplier. */
  nh_system sys = test_system("particle", NULL);
  nh_state x0 = test_preset(&sys, "discretization");
  nh_state a = test_run_to("js_a", &sys, x0, 0.01, 1), b = test_run_to("js_p1", &sys, x0, 0.01, 1);
  cr_expect(fabs(a.lambda[0] - b.lambda[0]) < 1e-12, "js_a %.17g, js_p1 %.17g", a.lambda[0], b.lambda[0]);
}

/* Scheme B and P2-new: λ of (86c) is second order at t_k + h/2, the original node, and only first
 * order at t_{k+1} (R6, §6.5): the control is the declared time itself. */
Test(hooks_js_herglotz, js_b_multiplier_order_two_at_midpoint) {
  const lambda_case cases[] = {
      {"js_b", "particle", NULL, "discretization", 0, 2, 0.02, -0.5, 2, 1},
      {"js_p2new", "particle", NULL, "discretization", 0, 2, 0.02, -0.5, 2, 1},
      {"js_b", "knife_edge", NULL, "ic2", 0, 2, 0.02, -0.5, 2, 1},
      {"js_b", "vertical_disk", NULL, NULL, 1, 2, 0.02, -0.5, 2, 1},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_lambda_case(&cases[i]);
}

/* P2-orig: its λ acts at μ(q_{k+1}) and sits at t_{k+1} (§6.5). On the free particle it is even
 * second order there (not claimed by the paper; like R13's superconvergence of q), while read at
 * t_k + h/2 (control) it is first order with a far larger error. */
Test(hooks_js_herglotz, js_p2orig_multiplier_at_step_end) {
  const double e1 = test_lambda_error("js_p2orig", "particle", NULL, "discretization", 0, 0.02, 2, 0);
  const double e2 = test_lambda_error("js_p2orig", "particle", NULL, "discretization", 0, 0.01, 2, 0);
  const double m1 = test_lambda_error("js_p2orig", "particle", NULL, "discretization", 0, 0.02, 2, -0.5);
  cr_expect(e1 / e2 > 3.6 && e1 / e2 < 4.4, "signed error ratio %.3f (errors %.3e, %.3e)", e1 / e2, e1, e2);
  cr_expect(fabs(m1) > 50 * fabs(e1), "control: at t_k + h/2 the error %.3e should dwarf %.3e", m1, e1);
}

/* The Herglotz family: the step's constraint impulse per unit time (see lambda_doc) is second
 * order at t_j + h/2 for herglotz2 and first order for herglotz1 and la1. Cases: the Foucault
 * pendulum with damping (affine constraint, exact solution), the free particle, and the upright
 * rolling disk with damping and torque (exact; λ = (m R F/J, 0) is constant, so no control). */
Test(hooks_js_herglotz, herglotz_multiplier_orders) {
  const lambda_case cases[] = {
      {"herglotz2", "foucault_pendulum", "alpha=0.1", "amplitude3", 0, 5, 0.025, -0.5, 2, 1},
      {"herglotz2", "particle", NULL, "discretization", 0, 2, 0.02, -0.5, 2, 1},
      {"herglotz2", "falling_disk", "alpha=0.1", "exp1", 0, 2, 0.05, -0.5, 2, 0},
      {"herglotz2(forcing=midpoint)", "falling_disk", "alpha=0.1", "exp1", 0, 2, 0.05, -0.5, 2, 0},
      {"herglotz1", "foucault_pendulum", "alpha=0.1", "amplitude3", 0, 5, 0.05, -0.5, 1, 0},
      {"herglotz1", "falling_disk", "alpha=0.1", "exp1", 0, 2, 0.05, -0.5, 1, 0},
      {"la1", "foucault_pendulum", "alpha=0.1", "amplitude3", 0, 5, 0.05, -0.5, 1, 0},
      {"la1", "particle", NULL, "discretization", 0, 2, 0.02, -0.5, 1, 0},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) check_lambda_case(&cases[i]);
  nh_system disk = test_system("falling_disk", "alpha=0.1");
  nh_state x0 = test_preset(&disk, "exp1");
  double lam[2];
  test_true_lambda(&disk, &x0, 1, lam);
  cr_expect(fabs(lam[0] - 5 * 0.5 * 12 / 1.875) < 1e-12 && fabs(lam[1]) < 1e-12,
            "disk Exp 1: lambda = (m R F/J, 0) = (16, 0), got (%.15g, %.3g)", lam[0], lam[1]);
}

Test(hooks_js_herglotz, declared_multiplier_times) {
  const char *names[] = {"js_a", "js_p1", "js_p2orig", "js_b", "js_p2new", "herglotz1", "herglotz2", "la1"};
  const nh_lambda_time want[] = {NH_LAMBDA_END,      NH_LAMBDA_END,      NH_LAMBDA_END,      NH_LAMBDA_MIDPOINT,
                                 NH_LAMBDA_MIDPOINT, NH_LAMBDA_MIDPOINT, NH_LAMBDA_MIDPOINT, NH_LAMBDA_MIDPOINT};
  for (int i = 0; i < 8; i++) {
    nh_method *m = test_method(names[i]);
    cr_expect_eq(nh_method_lambda_time(m), want[i], "%s", names[i]);
    cr_expect(m->type->lambda_doc != NULL && m->type->discrete_constraint_doc != NULL, "%s: docs", names[i]);
    nh_method_free(m);
  }
}

/* ---- discrete constraints ------------------------------------------------------------------------ */

static void discrete_constraint(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                                double h, double *out) {
  cr_assert(m->type->discrete_constraint != NULL, "%s defines no discrete constraint", m->type->name);
  m->type->discrete_constraint(m, sys, x, y, h, out);
}

/* A(q)w + s·b(q), max over rows. */
static double residual(const nh_system *sys, const double *q, const double *w, double s) {
  double A[NH_MAX_K * NH_MAX_N], b[NH_MAX_K] = {0}, r = 0;
  sys->type->constraints(sys->p, q, A);
  if (sys->type->affine) sys->type->affine->values(sys->p, q, b);
  for (int a = 0; a < sys->k; a++) {
    double t = s * b[a];
    for (int i = 0; i < sys->n; i++) t += A[a * sys->n + i] * w[i];
    r = fmax(r, fabs(t));
  }
  return r;
}

/* Scheme A, P1: μ(q_k)(q_{k+1} − q_k)/h at round-off; Scheme B, P2-new: (86d) at the new nodes at
 * round-off. Controls: at the other node the same chord violates the constraint at O(h) (R9; the
 * numerical note of §2.4). */
Test(hooks_js_herglotz, js_discrete_constraints_at_round_off) {
  const char *methods[] = {"js_a", "js_p1", "js_b", "js_p2new"};
  for (int i = 0; i < 4; i++) {
    nh_system sys = test_system("particle", NULL);
    nh_state x = test_preset(&sys, "harmonic"), y;
    nh_method *m = test_method(methods[i]);
    nh_cost cost = {0};
    const double h = 0.05;
    double worst = 0, control = 0;
    test_init_ok(m, &sys, &x, h, &cost);
    for (int s = 0; s < 200; s++) {
      double r, chord[3], node[3];
      test_step_ok(m, &sys, &x, &y, h, &cost);
      discrete_constraint(m, &sys, &x, &y, h, &r);
      worst = fmax(worst, fabs(r));
      for (int j = 0; j < 3; j++) {
        chord[j] = (y.q[j] - x.q[j]) / h;
        node[j] = i < 2 ? y.q[j] : x.q[j] + 0.5 * h * x.v[j]; /* A: q_{k+1}; B: the original node q̄ */
      }
      control = fmax(control, residual(&sys, node, i < 2 ? chord : x.v, 0));
      x = y;
    }
    cr_expect(worst < 1e-14, "%s: discrete constraint up to %.3e", methods[i], worst);
    cr_expect(control > 1e-3, "%s: control at the other node %.3e should be O(h)", methods[i], control);
    nh_method_free(m);
  }
}

/* P2-orig, free particle, data on D (first case): the deformed constraint (98) is at round-off from
 * step 1 on (R14), and the original residual r_k = ζ_k − y_k u_k equals (h/2) w u_k (R15) and
 * halves with h. Control: r_k itself is O(h), and the initial state (on D) violates (98). */
static void p2orig_run(double h, double *deformed, double *r_max, double *r_dev, double *start) {
  nh_system sys = test_system("particle", NULL);
  nh_state x = test_preset(&sys, "discretization"), y;
  nh_method *m = test_method("js_p2orig(start=0)");
  nh_cost cost = {0};
  test_init_ok(m, &sys, &x, h, &cost);
  *start = fabs(x.v[2] - (x.q[1] + 0.5 * h * x.v[1]) * x.v[0]);
  *deformed = *r_max = *r_dev = 0;
  for (long s = 0; s < lround(2 / h); s++) {
    double d;
    test_step_ok(m, &sys, &x, &y, h, &cost);
    discrete_constraint(m, &sys, &x, &y, h, &d);
    *deformed = fmax(*deformed, fabs(d));
    const double r = y.v[2] - y.q[1] * y.v[0];
    *r_max = fmax(*r_max, fabs(r));
    *r_dev = fmax(*r_dev, fabs(r - 0.5 * h * y.v[1] * y.v[0]));
    x = y;
  }
  nh_method_free(m);
}

Test(hooks_js_herglotz, js_p2orig_deformed_constraint) {
  double d1, r1, dev1, s1, d2, r2, dev2, s2;
  p2orig_run(0.02, &d1, &r1, &dev1, &s1);
  p2orig_run(0.01, &d2, &r2, &dev2, &s2);
  cr_expect(d1 < 1e-15 && d2 < 1e-15, "deformed constraint (98) up to %.3e, %.3e", d1, d2);
  cr_expect(dev1 < 1e-15 && dev2 < 1e-15, "r_k - (h/2) w u_k up to %.3e, %.3e", dev1, dev2);
  cr_expect(fabs(r1 / r2 - 2) < 0.05, "original residual %.4e, %.4e: ratio %.3f, expected 2", r1, r2, r1 / r2);
  cr_expect(r1 > 1e-3, "control: the original residual %.3e is O(h)", r1);
  cr_expect(s1 > 1e-3, "control: data on D violate (98) by %.3e", s1);
}

/* The contact schemes' own constraints A(q_d)Δq/h + b(q_d) at round-off (spec/herglotz.md §5 item
 * 3), on the falling disk (Exp 2, damped, h = 0.1, T = 20) and the Foucault pendulum (affine b,
 * Exp 1): the round-off of A(q_d)(q_{j+1} − q_j)/h is that of the difference, ε|q|/h (the disk's
 * spin angle reaches 80), the tolerance 2ε(1 + max|q|)/h. The continuous constraint with
 * central-difference velocities at q_j is clearly nonzero
 * and O(h²) (ratio ≈ 4, the control). The state's v is the projection of M⁻¹p on D, so A(q)v + b
 * is at round-off too (the brief's "continuous residual with the state's v" is not O(h²) here).
 * herglotz1 and la1 keep the left-point constraint; read at the midpoint (control) it is O(h). */
typedef struct {
  double discrete, state_v, central, other_point, qmax;
} constraint_stats;

static constraint_stats contact_constraints(const char *method, const char *system, const char *params,
                                            const char *preset, double h, double T) {
  nh_system sys = test_system(system, params);
  nh_state x = test_preset_or_default(&sys, preset), y, prev;
  nh_method *m = test_method(method);
  nh_cost cost = {0};
  constraint_stats st = {0, 0, 0, 0, 0};
  const int n = sys.n, midpoint = strncmp(method, "herglotz2", 9) == 0;
  test_init_ok(m, &sys, &x, h, &cost);
  for (long s = 0; s < lround(T / h); s++) {
    double r[NH_MAX_K], qo[NH_MAX_N], chord[NH_MAX_N], cd[NH_MAX_N];
    test_step_ok(m, &sys, &x, &y, h, &cost);
    discrete_constraint(m, &sys, &x, &y, h, r);
    for (int a = 0; a < sys.k; a++) st.discrete = fmax(st.discrete, fabs(r[a]));
    st.state_v = fmax(st.state_v, nh_constraint_residual(&sys, y.q, y.v));
    st.qmax = fmax(st.qmax, test_max_abs(n, y.q));
    for (int i = 0; i < n; i++) {
      qo[i] = midpoint ? x.q[i] : 0.5 * (x.q[i] + y.q[i]);
      chord[i] = (y.q[i] - x.q[i]) / h;
    }
    st.other_point = fmax(st.other_point, residual(&sys, qo, chord, 1));
    if (s > 0) {
      for (int i = 0; i < n; i++) cd[i] = (y.q[i] - prev.q[i]) / (2 * h);
      st.central = fmax(st.central, residual(&sys, x.q, cd, 1));
    }
    prev = x;
    x = y;
  }
  nh_method_free(m);
  return st;
}

Test(hooks_js_herglotz, herglotz_discrete_constraints) {
  const struct {
    const char *method, *system, *params, *preset;
    double h, T, state_tol;
  } cases[] = {
      {"herglotz2", "falling_disk", "alpha=0.1", "exp2", 0.1, 20, 1e-14},
      {"herglotz2", "foucault_pendulum", NULL, "exp1", 0.1, 20, 1e-16},
      {"herglotz1", "foucault_pendulum", NULL, "exp1", 0.1, 20, 1e-16},
      {"la1", "falling_disk", "alpha=0.1", "exp2", 0.1, 20, 1e-14},
  };
  for (int c = 0; c < 4; c++) {
    constraint_stats a = contact_constraints(cases[c].method, cases[c].system, cases[c].params, cases[c].preset,
                                             cases[c].h, cases[c].T);
    const double tol = 2 * 2.2e-16 * (1 + a.qmax) / cases[c].h;
    cr_expect(a.discrete < tol, "%s on %s: discrete constraint up to %.3e (tol %.1e)", cases[c].method,
              cases[c].system, a.discrete, tol);
    cr_expect(a.state_v < cases[c].state_tol, "%s on %s: A(q)v + b with the state's v up to %.3e", cases[c].method,
              cases[c].system, a.state_v);
    cr_expect(a.other_point > 1e6 * tol, "%s on %s: control at the other point %.3e should be O(h)",
              cases[c].method, cases[c].system, a.other_point);
    if (c < 2) {
      constraint_stats b = contact_constraints(cases[c].method, cases[c].system, cases[c].params, cases[c].preset,
                                               cases[c].h / 2, cases[c].T);
      cr_expect(a.central > 1e6 * tol, "%s on %s: central-difference residual %.3e not clearly nonzero",
                cases[c].method, cases[c].system, a.central);
      cr_expect(a.central / b.central > 3.5 && a.central / b.central < 4.5,
                "%s on %s: central-difference residual %.3e, %.3e: ratio %.3f, expected 4 (O(h^2))", cases[c].method,
                cases[c].system, a.central, b.central, a.central / b.central);
    }
  }
}

/* The contact schemes' discrete constraint A(q_d)Δq/h + b(q_d) (spec/herglotz.md §2.3, §6) at a pair
 * of states that is no step (so it is far from 0), against the Foucault pendulum's A(q) = (−y, x),
 * b(q) = s|q|² written out here: q_d the midpoint for herglotz2, q_j for herglotz1 and la1. */
Test(hooks_js_herglotz, contact_discrete_constraint_by_hand) {
  nh_system sys = test_system("foucault_pendulum", "Omega=0.3,beta_deg=30");
  const double s = 0.3 * sin(30 * 3.14159265358979323846 / 180), h = 0.2;
  const nh_state x = {.t = 0.1, .q = {0.4, -0.3}, .v = {0.1, 0.2}}, y = {.t = 0.3, .q = {0.55, -0.1}, .v = {0.3, 0.1}};
  const char *methods[] = {"herglotz2", "herglotz1", "la1"};
  const double gamma[] = {0.5, 0, 0};
  for (int mi = 0; mi < 3; mi++) {
    nh_method *m = test_method(methods[mi]);
    const double qd[2] = {x.q[0] + gamma[mi] * (y.q[0] - x.q[0]), x.q[1] + gamma[mi] * (y.q[1] - x.q[1])};
    const double expect = (-qd[1] * (y.q[0] - x.q[0]) + qd[0] * (y.q[1] - x.q[1])) / h + s * (qd[0] * qd[0] + qd[1] * qd[1]);
    double out[NH_MAX_K] = {NAN, NAN, NAN, NAN};
    m->type->discrete_constraint(m, &sys, &x, &y, h, out);
    cr_expect(fabs(out[0] - expect) <= 1e-15 * (1 + fabs(expect)), "%s: %.17g, by hand %.17g", methods[mi], out[0],
              expect);
    nh_method_free(m);
  }
}

/* ---- the contact schemes' midpoint energy (spec/herglotz.md §6, §5 items 9-10) ------------------------ */

/* The formula T(q̄, Δq/h) + ½(V_j + V_{j+1}) computed here, over steps with damping and forcing. */
Test(hooks_js_herglotz, herglotz_energy_formula) {
  const char *methods[] = {"herglotz2", "herglotz1", "la1"};
  for (int i = 0; i < 3; i++) {
    nh_system sys = test_system("falling_disk", "alpha=0.1,F_phi_slope=0.5");
    nh_state x = test_preset(&sys, "exp2"), y; /* the preset clears the forces: set one again */
    char err[256];
    cr_assert(nh_system_set_params_text(&sys, "F_phi_slope=0.5", err, sizeof err) == 0, "%s", err);
    nh_method *m = test_method(methods[i]);
    nh_cost cost = {0};
    const double h = 0.1;
    test_init_ok(m, &sys, &x, h, &cost);
    for (int s = 0; s < 10; s++) {
      double qb[5], vel[5];
      test_step_ok(m, &sys, &x, &y, h, &cost);
      for (int j = 0; j < 5; j++) qb[j] = 0.5 * (x.q[j] + y.q[j]), vel[j] = (y.q[j] - x.q[j]) / h;
      const double want = nh_kinetic_energy(&sys, qb, vel) +
                          0.5 * (sys.type->potential(sys.p, x.q) + sys.type->potential(sys.p, y.q));
      const double got = m->type->discrete_energy(m, &sys, &x, &y, h);
      cr_expect(fabs(got - want) < 1e-14 * fabs(want), "%s step %d: %.17g, formula %.17g", methods[i], s, got, want);
      /* Control: the energy at the node, T(q_{j+1}, Δq/h) + V(q_{j+1}), is another number. */
      const double node = nh_kinetic_energy(&sys, y.q, vel) + sys.type->potential(sys.p, y.q);
      cr_expect(fabs(got - node) > 1e-6, "%s: control, node energy equals the midpoint energy", methods[i]);
      x = y;
    }
    nh_method_free(m);
  }
}

/* The midpoint energy sits at t_j + h/2: against the exact energy of the upright rolling disk with
 * damping and torque (Exp 1, E = ½Jψ̇² + mgR, dE/dt ≠ 0) its signed error is second order for
 * herglotz2 at t_j + h/2 and only first order at t_{j+1} (control). */
static double energy_error(const char *method, double h, double offset) {
  const double T = 2;
  nh_system sys = test_system("falling_disk", "alpha=0.1");
  nh_state x0 = test_preset(&sys, "exp1"), x = x0, y, prev = x0;
  nh_method *m = test_method(method);
  nh_cost cost = {0};
  test_init_ok(m, &sys, &x, h, &cost);
  for (long s = 0; s < lround(T / h); s++) {
    test_step_ok(m, &sys, &x, &y, h, &cost);
    prev = x;
    x = y;
  }
  nh_state ex = test_true_state(&sys, &x0, T + offset * h);
  const double Ed = m->type->discrete_energy(m, &sys, &prev, &x, h);
  nh_method_free(m);
  return Ed - nh_energy(&sys, ex.q, ex.v);
}

Test(hooks_js_herglotz, herglotz2_energy_at_midpoint_time) {
  const double e1 = energy_error("herglotz2", 0.05, -0.5), e2 = energy_error("herglotz2", 0.025, -0.5);
  cr_expect(e1 / e2 > 3.6 && e1 / e2 < 4.4, "signed error ratio %.3f (errors %.3e, %.3e)", e1 / e2, e1, e2);
  const double f1 = energy_error("herglotz2", 0.05, 0), f2 = energy_error("herglotz2", 0.025, 0);
  cr_expect(f1 / f2 > 1.8 && f1 / f2 < 2.2, "control at t_{j+1}: ratio %.3f, expected 2", f1 / f2);
}

/* Exp 2 without damping (item 9): the midpoint energy stays in a narrow band about E0 with no
 * drift (first and last fifths of 2000 steps of h = 0.1 alike). Control: with α = 0.1 it falls. */
Test(hooks_js_herglotz, herglotz2_energy_bounded_without_damping) {
  for (int damped = 0; damped < 2; damped++) {
    nh_system sys = test_system("falling_disk", damped ? "alpha=0.1" : NULL);
    nh_state x = test_preset(&sys, "exp2"), y;
    nh_method *m = test_method("herglotz2");
    nh_cost cost = {0};
    const double h = 0.1, E0 = 61.44269147;
    const int N = damped ? 100 : 2000;
    double first = 0, last = 0, Ed = 0;
    test_init_ok(m, &sys, &x, h, &cost);
    for (int s = 0; s < N; s++) {
      test_step_ok(m, &sys, &x, &y, h, &cost);
      Ed = m->type->discrete_energy(m, &sys, &x, &y, h);
      if (s < N / 5) first = fmax(first, fabs(Ed - E0));
      if (s >= N - N / 5) last = fmax(last, fabs(Ed - E0));
      x = y;
    }
    if (!damped) {
      cr_expect(first < 0.02 * E0 && last < 0.02 * E0, "band %.3e, %.3e about E0", first, last);
      cr_expect(last < 2 * first + 1e-3, "drift: %.3e in the first fifth, %.3e in the last", first, last);
    } else {
      cr_expect(E0 - Ed > 0.1 * E0, "control: with alpha = 0.1 the energy should fall, %.4f -> %.4f", E0, Ed);
    }
    nh_method_free(m);
  }
}

/* ---- discrete Lagrangians (spec/discretization.md §2.1, R1) ------------------------------------------ */

/* R1: L_d^α − ∫L = (α − ½)h² ∂L/∂q·q̇(t0) + O(h³): slope 3 for α = ½ (B, P2), slope 2 for α = 0
 * (A, P1) with the leading coefficient e/h² → −½ ∂L/∂q·q̇ = ½∇V·v (signed; the control of the
 * α = ½ case, whose e/h² → 0). Oscillator (k = 0) and knife edge: exact solutions; particle with
 * V = ½(x² + y²): the rk8pd reference. */
Test(hooks_js_herglotz, discrete_action_slopes) {
  const struct {
    const char *method, *system, *preset;
    double alpha;
  } cases[] = {
      {"js_a", "oscillator", NULL, 0},          {"js_b", "oscillator", NULL, 0.5},
      {"js_a", "knife_edge", "ic2", 0},         {"js_b", "knife_edge", "ic2", 0.5},
      {"js_p1", "particle", "harmonic", 0},     {"js_p2new", "particle", "harmonic", 0.5},
      {"js_p2orig", "particle", "harmonic", 0.5},
  };
  const double t0 = 0.3;
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    nh_system sys = test_system(cases[c].system, NULL);
    nh_state x0 = test_preset_or_default(&sys, cases[c].preset);
    nh_method *m = test_method(cases[c].method);
    cr_assert(m->type->discrete_action != NULL, "%s defines no discrete action", cases[c].method);
    const double h1 = 0.02, e1 = test_action_error(m, &sys, &x0, t0, h1, NULL),
                 e2 = test_action_error(m, &sys, &x0, t0, h1 / 2, NULL);
    const double slope = log2(e1 / e2), want = cases[c].alpha == 0 ? 2 : 3;
    cr_expect(fabs(slope - want) < 0.1, "%s on %s: slope %.3f (errors %.3e, %.3e), expected %g", cases[c].method,
              cases[c].system, slope, e1, e2, want);
    /* The leading coefficient (α − ½) ∂L/∂q·q̇ = (½ − α) ∇V·v at t0. */
    nh_state s0 = test_true_state(&sys, &x0, t0);
    double g[NH_MAX_N], gv = 0;
    sys.type->grad_potential(sys.p, s0.q, g);
    for (int i = 0; i < sys.n; i++) gv += g[i] * s0.v[i];
    const double lead = (0.5 - cases[c].alpha) * gv, h3 = h1 / 4;
    const double e3 = test_action_error(m, &sys, &x0, t0, h3, NULL);
    if (cases[c].alpha == 0)
      cr_expect(fabs(e3 / (h3 * h3) - lead) < 0.05 * fabs(lead), "%s on %s: e/h^2 = %.5f, (1/2) gradV.v = %.5f",
                cases[c].method, cases[c].system, e3 / (h3 * h3), lead);
    else
      cr_expect(fabs(e3 / (h3 * h3)) < 0.05 * fabs(gv), "%s on %s: control, e/h^2 = %.3e should vanish like h",
                cases[c].method, cases[c].system, e3 / (h3 * h3));
    nh_method_free(m);
  }
}

/* ---- Newton systems ------------------------------------------------------------------------------- */

/* tests/twisted.h's system with M(q) depending on every coordinate (the falling disk's depends on
 * θ alone, and its ∇V too). */
static const nh_system_type twisted_variable_mass =
    TWISTED_TYPE("twisted_variable_mass_test", "test-only system: twisted_test with M(q) depending on every coordinate",
                 tw_variable_mass, tw_variable_mass_jacobian);

/* The systems of the registry with their defaults, plus the disk with damping and time-dependent
 * torques (so that the damping factors and the force levels enter the Newton system), and the
 * test-only twisted system with a constant and with a variable mass matrix. */
static int system_variant(int i, nh_system *sys) {
  int n = 0;
  while (nh_system_types[n]) n++;
  if (i < n) {
    *sys = test_system_of(nh_system_types[i], NULL);
    return 1;
  }
  if (i == n) {
    *sys = test_system("falling_disk", "alpha=0.1,F_psi_const=2,F_psi_slope=0.5,F_phi_slope=0.25");
    return 1;
  }
  if (i == n + 1 || i == n + 2) {
    *sys = test_system_of(i == n + 1 ? &twisted : &twisted_variable_mass, NULL);
    return 1;
  }
  return 0;
}

/* Every registered method with Newton hooks (registry-driven, default parameters, so that a new
 * method is covered without touching this file), plus parameter variants, on every system it
 * applies to and three random states each (h = 0.05, the step started at t = 0.7 so that
 * F(t) ≠ F(0)):
 *  - the analytic Jacobian against central differences, at the solution and off it: ≤ 1e-8
 *    column-relative (the brief asks 1e-6; 2e-10 is reached);
 *  - F(X*) ≈ 0 at the unknowns of the step's result: ≤ 1e-14 |J|(1 + |X*|) (6e-17 is reached);
 *  - Newton's order from X* + 1e-2 relative: ≈ 2, where the third error is above round-off.
 * Controls: the largest Jacobian entry off by 1e-6 fails the FD check; X* moved by 1e-7 fails the
 * F ≈ 0 check; Newton with every Jacobian 10% off converges at order ≈ 1.
 * Left out: classical newmark, whose Jacobian is forward differences by design (checked at 1e-6 in
 * tests/integrators/test_method_hooks_newmark.c). The velocity-form methods (js_b, mp418, nh_energy) have
 * n + k unknowns, spark (s − 1)(n + k) (integrators/spark.c). */
static int newton_size_expected(const nh_method *m, const nh_system *sys) {
  const char *name = m->type->name;
  if (!strcmp(name, "js_b") || !strcmp(name, "mp418") || !strcmp(name, "nh_energy")) return sys->n + sys->k;
  if (!strcmp(name, "spark")) return ((int)nh_method_param(m, "s") - 1) * (sys->n + sys->k);
  return m->type->newton->size(m, sys);
}

/* The random states of one (method, system) pair come from a stream seeded by the two names
 * (djb2), so that they do not change when a system or a method is added to a registry. */
static unsigned long names_seed(const char *a, const char *b) {
  unsigned long h = 5381;
  for (const char *s = a; *s; s++) h = h * 33 + (unsigned char)*s;
  for (const char *s = b; *s; s++) h = h * 33 + (unsigned char)*s;
  return h;
}

Test(hooks_js_herglotz, newton_systems) {
  enum { MAX_TYPES = 64 };
  const char *variants[] = {"herglotz2(forcing=midpoint)", "spark(s=3)", "spark(s=4)"};
  const char *methods[MAX_TYPES + sizeof variants / sizeof variants[0]];
  size_t count = 0;
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    cr_assert_lt(count, MAX_TYPES, "more Newton methods than this test holds");
    if (t->newton && strcmp(t->name, "newmark") != 0) methods[count++] = t->name;
  }
  for (size_t v = 0; v < sizeof variants / sizeof variants[0]; v++) methods[count++] = variants[v];
  gsl_rng *r = test_rng(8);
  int checked = 0, orders = 0;
  for (size_t mi = 0; mi < count; mi++) {
    nh_method *m = test_method(methods[mi]);
    cr_assert(m->type->newton, "%s", methods[mi]);
    const int before = checked;
    nh_system sys;
    for (int s = 0; system_variant(s, &sys); s++) {
      char err[512];
      if (nh_method_applies(m, &sys, err, sizeof err)) continue;
      const int dim = m->type->newton->size(m, &sys);
      if (dim == 0) continue; /* dla on k = 0 */
      cr_assert_eq(dim, newton_size_expected(m, &sys), "%s on %s: size %d", methods[mi], sys.type->name, dim);
      const double t0 = 0.7; /* so that F(t) ≠ F(0) */
      gsl_rng_set(r, names_seed(methods[mi], sys.type->name));
      test_check_newton_trials(m, &sys, dim, r, 3, &t0, 1, &checked, &orders); /* a far random state may fail */
    }
    cr_expect_gt(checked, before, "%s: no state checked", methods[mi]);
    cr_log_info("%s: %d states", methods[mi], checked - before);
    nh_method_free(m);
  }
  gsl_rng_free(r);
  cr_expect_geq(checked, 100, "only %d states checked", checked);
  cr_expect_geq(orders, 30, "Newton's order measured on only %d states", orders);
}

/* Scheme B's y->lambda is Λ/h with Λ the Newton unknown (86c): the two routes (the step's λ and
 * the least-squares recovery of Λ from the result) agree. */
Test(hooks_js_herglotz, js_b_lambda_is_newton_unknown_over_h) {
  const char *systems[] = {"particle", "knife_edge", "vertical_disk", "chaotic_particle"};
  for (int s = 0; s < 4; s++) {
    nh_system sys = test_system(systems[s], NULL);
    nh_state x, y;
    nh_system_default_state(&sys, &x);
    nh_method *m = test_method("js_b");
    nh_cost cost = {0};
    const double h = 0.05;
    double X[NH_MAX_NEWTON];
    test_step_ok(m, &sys, &x, &y, h, &cost);
    m->type->newton->unknowns(m, &sys, &x, &y, h, X);
    for (int a = 0; a < sys.k; a++)
      cr_expect(fabs(X[sys.n + a] / h - y.lambda[a]) < 1e-12 * (1 + fabs(y.lambda[a])),
                "%s: Lambda/h = %.17g, y->lambda = %.17g", systems[s], X[sys.n + a] / h, y.lambda[a]);
    nh_method_free(m);
  }
}

/* The contact schemes recover Λ from a result by least squares, (A Aᵀ)⁻¹ A R with A = A(q_j). On
 * the axis of the rotational-symmetry system, μ(q) = (x, y, x) vanishes and Λ is undefined: every
 * multiplier unknown is NaN, never a number; the increments are y's minus x's. Off the axis both are finite. */
Test(hooks_js_herglotz, contact_unknowns_undefined_where_A_vanishes) {
  const char *methods[] = {"herglotz2", "herglotz1", "la1"};
  nh_system sys = test_system("rotational_symmetry", NULL);
  for (int mi = 0; mi < 3; mi++) {
    nh_method *m = test_method(methods[mi]);
    char err[512];
    cr_assert_eq(nh_method_applies(m, &sys, err, sizeof err), 0, "%s: %s", methods[mi], err);
    for (int off = 0; off < 2; off++) {
      const nh_state x = {.q = {off ? 0.4 : 0, 0, 0.5}, .v = {0, 0.3, 0.2}};
      const nh_state y = {.t = 0.05, .q = {off ? 0.41 : 0.001, 0.015, 0.51}, .v = {0.02, 0.3, 0.2}};
      double X[NH_MAX_NEWTON];
      m->type->newton->unknowns(m, &sys, &x, &y, 0.05, X);
      for (int i = 0; i < 3; i++) cr_expect_eq(X[i], y.q[i] - x.q[i], "%s: X[%d] = Δq", methods[mi], i);
      if (off)
        cr_expect(isfinite(X[3]), "%s off the axis: Lambda = %g", methods[mi], X[3]);
      else
        cr_expect(isnan(X[3]), "%s on the axis: Lambda = %g, not NaN", methods[mi], X[3]);
    }
    nh_method_free(m);
  }
}

/* ---- the constraint_evals counter ------------------------------------------------------------------ */

/* One step each: cost.constraint_evals equals the calls of the system's A(q) and the count of
 * each method: js_a 1 (μ(q_{k+1}) in (82)); js_b 2 (μ(q̄), and again inside the (77) guess) + one
 * per Newton iteration; herglotz2 3 (A(q_j), the predictor's, the projection's) + one per
 * iteration; herglotz1 and la1 3 (their constraint is at A(q_j), evaluated once). The particle
 * closed forms call no A(q) but count the points where they read μ inline (P1: 1, as js_a; P2:
 * 2): the control, where the counter (0 calls) and the cost differ by design. */
Test(hooks_js_herglotz, constraint_evals_counted_exactly) {
  const struct {
    const char *method, *system, *params;
    int fixed, per_iteration, inline_only;
  } cases[] = {
      {"js_a", "particle", "omega2=1", 1, 0, 0},         {"js_a", "vertical_disk", NULL, 1, 0, 0},
      {"js_b", "particle", "omega2=1", 2, 1, 0},         {"js_b", "knife_edge", NULL, 2, 1, 0},
      {"herglotz2", "falling_disk", NULL, 3, 1, 0},      {"herglotz2", "foucault_pendulum", NULL, 3, 1, 0},
      {"herglotz1", "falling_disk", "alpha=0.1", 3, 0, 0}, {"la1", "foucault_pendulum", NULL, 3, 0, 0},
      {"js_p1", "particle", "omega2=1", 1, 0, 1},        {"js_p2new", "particle", "omega2=1", 2, 0, 1},
      {"js_p2orig", "particle", "omega2=1", 2, 0, 1},
  };
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    nh_system sys = test_counted_system(cases[c].system, cases[c].params);
    nh_method *m = test_method(cases[c].method);
    nh_state x, y;
    nh_system_default_state(&sys, &x);
    nh_cost cost = {0};
    test_init_ok(m, &sys, &x, 0.05, &cost);
    for (int s = 0; s < 3; s++) {
      nh_cost one = {0};
      test_counted_calls = 0;
      test_step_ok(m, &sys, &x, &y, 0.05, &one);
      const unsigned long long want = cases[c].fixed + cases[c].per_iteration * one.newton_iterations;
      cr_expect_eq(one.constraint_evals, want, "%s on %s: %llu evaluations, expected %llu (%llu Newton iterations)",
                   cases[c].method, cases[c].system, one.constraint_evals, want, one.newton_iterations);
      if (cases[c].inline_only)
        cr_expect_eq(test_counted_calls, 0, "%s: the closed form calls A(q) %ld times", cases[c].method, test_counted_calls);
      else
        cr_expect_eq((long)one.constraint_evals, test_counted_calls, "%s on %s: counted %llu, A(q) called %ld times",
                     cases[c].method, cases[c].system, one.constraint_evals, test_counted_calls);
      x = y;
    }
    nh_method_free(m);
  }
}

/* The Herglotz schemes where M(q) depends on every coordinate (twisted_variable_mass; the
 * registry's one variable-mass system, the falling disk, has M(θ) alone): ∂M against central
 * differences of M, then each scheme's error at T = 0.4 against the rk8pd reference (tolerance
 * 1e-13) at h = 0.02 and 0.01, and the observed order within 0.25 of the claimed one. */
Test(hooks_js_herglotz, variable_mass_in_every_coordinate) {
  nh_system sys = test_system_of(&twisted_variable_mass, NULL);
  double dM[27], Mp[9], Mm[9];
  for (int pt = 0; pt < 3; pt++) {
    double q[3] = {tw_q0[0] + 0.4 * pt, tw_q0[1] - 0.3 * pt, tw_q0[2] + 0.5 * pt};
    tw_variable_mass_jacobian(NULL, q, dM);
    for (int l = 0; l < 3; l++) {
      const double d = 1e-5, ql = q[l];
      q[l] = ql + d, tw_variable_mass(NULL, q, Mp);
      q[l] = ql - d, tw_variable_mass(NULL, q, Mm);
      q[l] = ql;
      for (int ij = 0; ij < 9; ij++)
        cr_expect(fabs(dM[ij * 3 + l] - (Mp[ij] - Mm[ij]) / (2 * d)) < 1e-9, "dM_%d/dq%d at point %d", ij, l, pt);
    }
  }
  nh_state x0, ref;
  nh_system_default_state(&sys, &x0);
  const double T = 0.4;
  cr_assert_eq(nh_reference_solve(&sys, &x0, T, 1e-13, &ref), 0);
  static const struct {
    const char *method;
    double order;
  } cases[] = {{"herglotz2", 2}, {"herglotz1", 1}, {"la1", 1}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    double e[2];
    for (int r = 0; r < 2; r++) {
      const nh_state y = test_run_to(cases[c].method, &sys, x0, 0.02 / (1 << r), T);
      e[r] = 0;
      for (int i = 0; i < 3; i++) e[r] = fmax(e[r], fmax(fabs(y.q[i] - ref.q[i]), fabs(y.v[i] - ref.v[i])));
    }
    const double p = log2(e[0] / e[1]);
    cr_log_info("%s: errors %.3e %.3e, order %.3f", cases[c].method, e[0], e[1], p);
    cr_expect(fabs(p - cases[c].order) < 0.25, "%s: order %.3f (errors %.3e, %.3e), claimed %g", cases[c].method, p,
              e[0], e[1], cases[c].order);
  }
}
