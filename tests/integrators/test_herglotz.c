/* Tests of the Herglotz contact integrators (herglotz2, herglotz1), the LA comparison integrator
 * (la1) and their systems (falling_disk, foucault_pendulum), against values and formulas of
 * spec/herglotz.md: the literal Appendix A.1-A.5, the pendulum schemes (4.4)/(4.7) in closed form
 * (§2.7), the reduced disk EOM (§3.2), exact solutions (§3.1, §3.2), E0 values, the decay factor
 * c₂ (§5 item 6), discrete constraints (§5 item 3), energy balance (§2.1) and the action z (§2.2). */
#include <criterion/criterion.h>
#include <gsl/gsl_integration.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <string.h>

#include "integrators/integrator.h"
#include "tests/checks.h"
#include "tests/helpers.h"
#include "systems/system.h"

extern const nh_system_type nh_system_falling_disk;

enum { IX, IY, ITH, IPHI, IPSI };

/* Disk constants (spec §3.2): m = 5, R = 0.5, I_A = ½mR², I_T = ¼mR², J = I_A + mR², K = I_T + mR². */
static const double DM = 5, DR = 0.5, DG = 9.81, IA = 0.625, IT = 0.3125, DJ = 1.875, DK = 1.5625;

/* ---- helpers ----------------------------------------------------------------------------------- */

static void set_param(nh_system *sys, const char *name, double value) {
  char err[256];
  cr_assert(nh_system_set_param(sys, name, value, err, sizeof err) == 0, "%s", err);
}

/* Runs `steps` steps from x (after init); aborts on failure. */
static void run(const nh_method *m, const nh_system *sys, nh_state *x, double h, long steps, nh_cost *cost) {
  cr_assert(nh_method_init(m, sys, x, h, cost) == NH_STEP_OK, "init failed");
  for (long s = 0; s < steps; s++) {
    nh_state y;
    cr_assert(nh_method_step(m, sys, x, &y, h, cost) == NH_STEP_OK, "step %ld failed", s);
    *x = y;
  }
}

static double max_abs_diff(int n, const double *a, const double *b) {
  double d = 0;
  for (int i = 0; i < n; i++) d = fmax(d, fabs(a[i] - b[i]));
  return d;
}

/* Ẋ, Ẏ from the rolling constraints (4.11), written out independently of the system's A(q). */
static void rolling_xy(const double *q, double *v) {
  const double st = sin(q[ITH]), ct = cos(q[ITH]), sp = sin(q[IPHI]), cp = cos(q[IPHI]);
  v[IX] = -DR * ct * sp * v[ITH] - DR * st * cp * v[IPHI] + DR * cp * v[IPSI];
  v[IY] = DR * ct * cp * v[ITH] - DR * st * sp * v[IPHI] + DR * sp * v[IPSI];
}

static void random_disk_state(gsl_rng *r, nh_state *x) {
  memset(x, 0, sizeof *x);
  for (int i = 0; i < 5; i++) x->q[i] = 4 * gsl_rng_uniform(r) - 2, x->v[i] = 4 * gsl_rng_uniform(r) - 2;
  x->q[ITH] = 2.2 * gsl_rng_uniform(r) - 1.1; /* away from the chart singularity θ = ±π/2 */
  rolling_xy(x->q, x->v);
}

/* ---- systems: initial conditions and E0 (spec §3.1, §3.2) ------------------------------------- */

Test(herglotz, disk_presets_energy_and_constraint) {
  static const struct {
    const char *name;
    double E0;
  } cases[] = {{"exp1", 24.525}, {"exp2", 61.44269147}, {"exp3", 33.77775413}, {"exp4", 59.03316363}};
  for (size_t c = 0; c < sizeof cases / sizeof *cases; c++) {
    nh_system sys = test_system("falling_disk", NULL);
    nh_state x = test_preset(&sys, cases[c].name);
    double E = nh_energy(&sys, x.q, x.v), res = nh_constraint_residual(&sys, x.q, x.v);
    cr_expect(fabs(E - cases[c].E0) <= 5e-9, "%s: E0 = %.10f, spec §3.2 says %.8f", cases[c].name, E, cases[c].E0);
    cr_expect(res <= 1e-15, "%s: |A(q0) v0| = %.3e", cases[c].name, res);
  }
  /* Exp 4 is a steady circle (spec §3.2): (I_T − I_A − mR²) ϕ̇² sinθ cosθ + (I_A + mR²) ϕ̇ψ̇ cosθ − mgR sinθ = 0. */
  nh_system sys = test_system("falling_disk", NULL);
  nh_state x = test_preset(&sys, "exp4");
  const double th = x.q[ITH], pd = x.v[IPHI], sd = x.v[IPSI];
  double steady = (IT - IA - DM * DR * DR) * pd * pd * sin(th) * cos(th) + DJ * pd * sd * cos(th) - DM * DG * DR * sin(th);
  cr_expect(fabs(steady) <= 1e-13, "exp4 steady-circle condition residual %.3e", steady);
  cr_expect(fabs(pd - 0.5689126482) <= 1e-10, "exp4 phidot0 = %.12f", pd);
  /* The presets set the forcing of the table (Exp 1: F_psi = 12; Exp 3: t/16). */
  double F[5];
  test_preset(&sys, "exp3");
  cr_expect(nh_forcing(&sys, 8.0, F) == 1 && F[IPSI] == 0.5 && F[IPHI] == 0.5, "exp3 forcing at t = 8");
  test_preset(&sys, "exp1");
  cr_expect(nh_forcing(&sys, 3.0, F) == 1 && F[IPSI] == 12 && F[IPHI] == 0, "exp1 forcing");
  test_preset(&sys, "exp2");
  cr_expect(nh_forcing(&sys, 3.0, F) == 0, "exp2 has no forcing");
}

Test(herglotz, foucault_default_ic_and_presets) {
  nh_system sys = test_system("foucault_pendulum", NULL);
  nh_state x;
  nh_system_default_state(&sys, &x);
  /* spec §3.1: E0 = 2.049850789 J for A = 1 m; v0 = (0, −s A), s = 5.503430e-5. */
  cr_expect(fabs(nh_energy(&sys, x.q, x.v) - 2.049850789) <= 1e-9, "E0 = %.12f", nh_energy(&sys, x.q, x.v));
  cr_expect(fabs(x.v[1] + 5.503430e-5) <= 1e-11, "v0 = %.10g", x.v[1]);
  cr_expect(nh_constraint_residual(&sys, x.q, x.v) <= 1e-19, "default IC off D");
  const char *names[] = {"exp1", "exp2", "amplitude3"};
  const double alphas[] = {1e-3, 1e-4, 1e-4};
  for (int i = 0; i < 3; i++) {
    x = test_preset(&sys, names[i]);
    cr_expect(nh_constraint_residual(&sys, x.q, x.v) <= 1e-18, "%s off D", names[i]);
    cr_expect(nh_damping(&sys, 0) == alphas[i], "%s: alpha = %g", names[i], nh_damping(&sys, 0));
  }
  cr_expect(x.q[0] == 3, "amplitude3: A = 3");
}

/* ---- falling disk: M(q), derivatives, reduced EOM (spec §3.2) ---------------------------------- */

/* T from (4.10) written out, against ½ vᵀM(q)v; ∂M and ∂A against central differences. */
Test(herglotz, disk_lagrangian_and_derivatives) {
  nh_system sys = test_system("falling_disk", NULL);
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 7);
  for (int trial = 0; trial < 20; trial++) {
    nh_state x;
    random_disk_state(r, &x);
    const double *q = x.q, *v = x.v, st = sin(q[ITH]), ct = cos(q[ITH]);
    const double w = v[IPSI] - v[IPHI] * st;
    double T = 0.5 * DM * (v[IX] * v[IX] + v[IY] * v[IY] + DR * DR * st * st * v[ITH] * v[ITH]) +
               0.5 * (IA * w * w + IT * (v[ITH] * v[ITH] + v[IPHI] * v[IPHI] * ct * ct));
    cr_expect(fabs(nh_kinetic_energy(&sys, q, v) - T) <= 1e-13 * (1 + T), "T(q,v) differs from (4.10)");
    cr_expect(fabs(sys.type->potential(sys.p, q) - DM * DG * DR * ct) <= 1e-13, "V = m g R cos(theta)");
    double dM[125], dA[50], Mp[25], Mm[25], Ap[10], Am[10], qs[5];
    sys.type->mass_jacobian(sys.p, q, dM);
    sys.type->constraints_jacobian(sys.p, q, dA);
    for (int l = 0; l < 5; l++) {
      const double d = 1e-6;
      memcpy(qs, q, sizeof qs);
      qs[l] = q[l] + d;
      sys.type->mass(sys.p, qs, Mp);
      sys.type->constraints(sys.p, qs, Ap);
      qs[l] = q[l] - d;
      sys.type->mass(sys.p, qs, Mm);
      sys.type->constraints(sys.p, qs, Am);
      for (int ij = 0; ij < 25; ij++)
        cr_expect(fabs(dM[ij * 5 + l] - (Mp[ij] - Mm[ij]) / (2 * d)) <= 1e-8, "dM[%d][%d]", ij, l);
      for (int ai = 0; ai < 10; ai++)
        cr_expect(fabs(dA[ai * 5 + l] - (Ap[ai] - Am[ai]) / (2 * d)) <= 1e-8, "dA[%d][%d]", ai, l);
    }
    cr_expect(nh_constraint_residual(&sys, q, v) <= 1e-14, "(4.11) velocities are on D");
  }
  gsl_rng_free(r);
}

/* The generic index-reduced ODE (nh_acceleration, systems/system.c, with M(q), damping and
 * forcing) against the reduced EOM of spec §3.2 at random states on D; Ẍ, Ÿ against the time
 * derivative of (4.11). */
/* The reduced EOM of spec §3.2 written out: (θ̈, ϕ̈, ψ̈) at (q, v) with damping α and the torques
 * F_ϕ, F_ψ (F_X = F_Y = F_θ = 0). */
static void reduced_eom(double alpha, double Fphi, double Fpsi, const double *q, const double *v, double *acc) {
  const double th = q[ITH], st = sin(th), ct = cos(th), td = v[ITH], pd = v[IPHI], sd = v[IPSI];
  /* K θ̈ = mgR sinθ − (I_T − J) ϕ̇² sinθ cosθ − J ϕ̇ψ̇ cosθ − αK θ̇ + Q_θ */
  acc[0] = (DM * DG * DR * st - (IT - DJ) * pd * pd * st * ct - DJ * pd * sd * ct - alpha * DK * td) / DK;
  /* [[a, −J s], [−J s, J]] (ϕ̈, ψ̈) = (r1, r2) */
  const double a = IT * ct * ct + DJ * st * st;
  const double r1 = -2 * (DJ - IT) * st * ct * td * pd + IA * ct * td * sd - alpha * (a * pd - DJ * st * sd) + Fphi;
  const double r2 = (IA + 2 * DM * DR * DR) * ct * td * pd - alpha * DJ * (sd - pd * st) + Fpsi;
  const double det = a * DJ - DJ * DJ * st * st; /* = J I_T cos²θ */
  acc[1] = (DJ * r1 + DJ * st * r2) / det;
  acc[2] = (DJ * st * r1 + a * r2) / det;
}

/* (Ẋ, Ẏ) of (4.11) from the angles and their rates. */
static void rolling_velocity(const double *q, const double *v, double *xy) {
  const double st = sin(q[ITH]), ct = cos(q[ITH]), sp = sin(q[IPHI]), cp = cos(q[IPHI]);
  xy[0] = DR * (-ct * sp * v[ITH] - st * cp * v[IPHI] + cp * v[IPSI]);
  xy[1] = DR * (ct * cp * v[ITH] - st * sp * v[IPHI] + sp * v[IPSI]);
}

Test(herglotz, disk_reduced_eom_matches_nh_acceleration) {
  nh_system sys = test_system("falling_disk", NULL);
  const double alpha = 0.37, t = 1.7;
  set_param(&sys, "alpha", alpha);
  set_param(&sys, "F_psi_const", 1.3);
  set_param(&sys, "F_psi_slope", 0.7);
  set_param(&sys, "F_phi_slope", -0.4);
  const double Fpsi = 1.3 + 0.7 * t, Fphi = -0.4 * t; /* F_X = F_Y = F_θ = 0 */
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 11);
  double worst = 0;
  for (int trial = 0; trial < 50; trial++) {
    nh_state x;
    random_disk_state(r, &x);
    const double th = x.q[ITH], st = sin(th), ct = cos(th), td = x.v[ITH], pd = x.v[IPHI], sd = x.v[IPSI];
    double acc[5], red[3];
    cr_assert(nh_acceleration(&sys, t, x.q, x.v, acc) == 0, "nh_acceleration failed");
    reduced_eom(alpha, Fphi, Fpsi, x.q, x.v, red);
    const double thdd = red[0], phdd = red[1], psdd = red[2];
    /* d/dt of (4.11) */
    const double sp = sin(x.q[IPHI]), cp = cos(x.q[IPHI]);
    double Xdd = DR * (-ct * sp * thdd + st * sp * td * td - ct * cp * td * pd - st * cp * phdd - ct * cp * td * pd +
                       st * sp * pd * pd + cp * psdd - sp * pd * sd);
    double Ydd = DR * (ct * cp * thdd - st * cp * td * td - ct * sp * td * pd - st * sp * phdd - ct * sp * td * pd -
                       st * cp * pd * pd + sp * psdd + cp * pd * sd);
    const double ref[5] = {Xdd, Ydd, thdd, phdd, psdd};
    for (int i = 0; i < 5; i++) worst = fmax(worst, fabs(acc[i] - ref[i]) / (1 + fabs(ref[i])));
  }
  cr_expect(worst <= 1e-11, "nh_acceleration vs the reduced EOM of spec 3.2: max relative difference %.3e", worst);
  gsl_rng_free(r);
}

/* rk4_reduced on the disk is classical RK4 on the spec's reduced ODE (§3.2, §5 item 4): the state
 * y = (X, Y, θ, ϕ, ψ, θ̇, ϕ̇, ψ̇), (θ̈, ϕ̈, ψ̈) from the reduced EOM written out above and (Ẋ, Ẏ) from
 * (4.11), stepped here by hand from Exp 2 at α = 0.1, h = 0.05, 100 steps: the two agree to the
 * round-off of the two evaluations of the same ODE, and the nodes keep (4.11) to round-off (rk4 on
 * the full ODE drifts, by ~1e-7 here). A system whose constraints are not solved for the first
 * velocities is refused. */
Test(herglotz, rk4_reduced_is_rk4_on_the_reduced_ode) {
  nh_system sys = test_system("falling_disk", NULL);
  set_param(&sys, "alpha", 0.1);
  const nh_state x0 = test_preset(&sys, "exp2");
  const double h = 0.05;
  double y[8], k[4][8];
  for (int i = 0; i < 5; i++) y[i] = x0.q[i];
  for (int i = 0; i < 3; i++) y[5 + i] = x0.v[ITH + i];
  for (int s = 0; s < 100; s++) {
    for (int st = 0; st < 4; st++) {
      const double c = st == 0 ? 0 : st == 3 ? h : h / 2;
      double z[8], q[5], v[5], acc[3];
      for (int i = 0; i < 8; i++) z[i] = y[i] + (st ? c * k[st - 1][i] : 0);
      for (int i = 0; i < 5; i++) q[i] = z[i];
      for (int i = 0; i < 3; i++) v[ITH + i] = z[5 + i];
      rolling_velocity(q, v, v);
      reduced_eom(0.1, 0, 0, q, v, acc);
      for (int i = 0; i < 5; i++) k[st][i] = v[i];
      for (int i = 0; i < 3; i++) k[st][5 + i] = acc[i];
    }
    for (int i = 0; i < 8; i++) y[i] += h / 6 * (k[0][i] + 2 * k[1][i] + 2 * k[2][i] + k[3][i]);
  }
  const nh_state end = test_run_steps("rk4_reduced", &sys, x0, h, 100), full = test_run_steps("rk4", &sys, x0, h, 100);
  double byhand[5], xy[2];
  for (int i = 0; i < 3; i++) byhand[ITH + i] = y[5 + i];
  rolling_velocity(y, byhand, xy);
  for (int i = 0; i < 5; i++)
    cr_expect(fabs(end.q[i] - y[i]) <= 1e-11 * (1 + fabs(y[i])), "q[%d]: rk4_reduced %.15g, by hand %.15g", i, end.q[i],
              y[i]);
  for (int i = 0; i < 3; i++)
    cr_expect(fabs(end.v[ITH + i] - y[5 + i]) <= 1e-11 * (1 + fabs(y[5 + i])), "v[%d]: %.15g, by hand %.15g", ITH + i,
              end.v[ITH + i], y[5 + i]);
  for (int i = 0; i < 2; i++)
    cr_expect(fabs(end.v[i] - xy[i]) <= 1e-11 * (1 + fabs(xy[i])), "v[%d] = %.15g, (4.11) %.15g", i, end.v[i], xy[i]);
  cr_expect(nh_constraint_residual(&sys, end.q, end.v) <= 1e-15, "rk4_reduced keeps (4.11): %.3e",
            nh_constraint_residual(&sys, end.q, end.v));
  cr_expect(nh_constraint_residual(&sys, full.q, full.v) > 1e-10, "control: rk4 drifts, %.3e",
            nh_constraint_residual(&sys, full.q, full.v));
  nh_system sleigh = test_system("chaplygin_sleigh", NULL);
  nh_method *m = test_method("rk4_reduced");
  char err[512];
  cr_expect_eq(nh_method_applies(m, &sleigh, err, sizeof err), -1, "the sleigh's constraint is not solved first");
  cr_expect(strstr(err, "constraints solved for the first k") != NULL, "%s", err);
  nh_method_free(m);
}

/* ---- exact solutions against the reference solver (spec §3.1, §3.2) ------------------------- */

static void expect_exact_matches_reference(const nh_system *sys, const nh_state *x0, double T, double tol) {
  nh_state ex, ref;
  cr_assert(nh_exact_solution(sys, x0, x0->t + T, &ex) == 0, "exact() declined a state it should handle");
  cr_assert(nh_reference_solve(sys, x0, x0->t + T, 1e-13, &ref) == 0, "reference failed");
  for (int i = 0; i < sys->n; i++) {
    cr_expect(fabs(ex.q[i] - ref.q[i]) <= tol * (1 + fabs(ref.q[i])), "q[%d]: exact %.15g, reference %.15g", i,
              ex.q[i], ref.q[i]);
    cr_expect(fabs(ex.v[i] - ref.v[i]) <= tol * (1 + fabs(ref.v[i])), "v[%d]: exact %.15g, reference %.15g", i,
              ex.v[i], ref.v[i]);
  }
}

Test(herglotz, disk_exact_upright_rolling_matches_reference) {
  nh_system sys = test_system("falling_disk", NULL);
  nh_state x = test_preset(&sys, "exp1");
  const double alphas[] = {0.1, 0.005, 0};
  for (int i = 0; i < 3; i++) {
    set_param(&sys, "alpha", alphas[i]);
    expect_exact_matches_reference(&sys, &x, 10, 1e-10);
  }
  /* spec §3.2 closed form: ψ(10) = (F/(αJ))(t − (1 − e^{−αt})/α) with F/J = 6.4, α = 0.1. */
  nh_state ex;
  set_param(&sys, "alpha", 0.1);
  nh_exact_solution(&sys, &x, 10, &ex);
  double psi = 6.4 / 0.1 * (10 - (1 - exp(-1.0)) / 0.1);
  cr_expect(fabs(ex.q[IPSI] - psi) <= 1e-12 * psi, "psi(10) = %.15g, closed form %.15g", ex.q[IPSI], psi);
  cr_expect(ex.q[ITH] == 0 && fabs(ex.q[IX] - DR * ex.q[IPSI]) <= 1e-13 * psi, "theta = 0 and X = R psi");
  /* A general upright state: heading ϕ0, spin, ramp torque, t0 ≠ 0. */
  set_param(&sys, "alpha", 0.05);
  set_param(&sys, "F_psi_slope", 0.3);
  nh_state y = {.t = 0.4, .q = {0.2, -0.1, 0, 0.7, 1.1}, .v = {0, 0, 0, 0, 2.5}};
  rolling_xy(y.q, y.v);
  expect_exact_matches_reference(&sys, &y, 6, 1e-10);
  /* Tilted, turning or heading-forced states have no exact solution. */
  cr_expect(nh_exact_solution(&sys, &(nh_state){.q = {0, 0, 0.1}}, 1, &ex) == -1, "tilted state accepted");
  y.v[IPHI] = 0.1;
  cr_expect(nh_exact_solution(&sys, &y, 1, &ex) == -1, "turning state accepted");
  test_preset(&sys, "exp3");
  cr_expect(nh_exact_solution(&sys, &x, 1, &ex) == -1, "F_phi != 0 accepted");
}

Test(herglotz, foucault_exact_matches_reference) {
  nh_system sys = test_system("foucault_pendulum", NULL);
  nh_state x;
  nh_system_default_state(&sys, &x);
  /* Up to t = 3 s, before the first passage through the origin (t ≈ 4.1 s), where the reduced
   * ODE is singular. */
  expect_exact_matches_reference(&sys, &x, 3, 1e-10);
  /* A general consistent state (u̇0 ≠ 0, φ0 ≠ 0), larger rate and damping so both matter. */
  set_param(&sys, "Omega", 0.01);
  set_param(&sys, "alpha", 0.05);
  const double s = 0.01 * sin(49 * 3.14159265358979323846 / 180), r0 = 0.8, ph = 0.7, du = 0.05;
  nh_state y = {.t = 1.5, .q = {r0 * cos(ph), r0 * sin(ph)}};
  y.v[0] = du * cos(ph) + s * r0 * sin(ph);
  y.v[1] = du * sin(ph) - s * r0 * cos(ph);
  cr_assert(nh_constraint_residual(&sys, y.q, y.v) <= 1e-16, "test state off D");
  expect_exact_matches_reference(&sys, &y, 3, 1e-10);
  /* Off D: declined. */
  y.v[0] += 1e-3;
  nh_state ex;
  cr_expect(nh_exact_solution(&sys, &y, 2, &ex) == -1, "state off D accepted");
  /* "Off D" is relative to the state's own scale, 1e-12 (r|v| + |s|r²): at r = |v| = 1e-3 a
   * residual r·δ of 1e-15 (δ = 1e-12, relative 1e-9) is off D; at r = |v| = 100 one of 1e-10
   * (relative 1e-14) is round-off. q = (r, 0) is on D for v_y = −s r. */
  const double scale[2] = {1e-3, 100};
  for (int c = 0; c < 2; c++) {
    nh_state z = {.t = 0, .q = {scale[c], 0}, .v = {scale[c], -s * scale[c] + 1e-12}};
    cr_expect_eq(nh_exact_solution(&sys, &z, 0.5, &ex), c == 0 ? -1 : 0, "r = |v| = %g, residual %g", scale[c],
                 scale[c] * 1e-12);
  }
}

/* The three regimes of the radial oscillator ü + αu̇ + (g/l − s²)u = 0 of the exact solution (spec
 * §3.1), at s = 0 (Ω = 0: the motion is radial, φ constant) and g/l = 1: under-damped (α = 1),
 * critically damped (α = 2: a = α/2 = 1, w² = 1 − a² = 0 exactly) and over-damped (α = 4), each
 * against the closed form written out here and against the reference solver. Critical damping:
 * u = e^{−τ}(u0 + (u̇0 + u0)τ), u̇ = e^{−τ}(u̇0 − (u0 + u̇0)τ); over-damped, with the rates
 * r± = −2 ± √3: u = c₊e^{r₊τ} + c₋e^{r₋τ}, c± = (u̇0 − r∓u0)/(r± − r∓). */
Test(herglotz, foucault_exact_in_all_three_damping_regimes) {
  nh_system sys = test_system("foucault_pendulum", "m=1,l=1,g=1,Omega=0");
  const double ph = 0.6, u0 = 0.5, du0 = 0.2, t0 = 0.25, tau = 1.2, c = cos(ph), sn = sin(ph);
  const nh_state x0 = {.t = t0, .q = {u0 * c, u0 * sn}, .v = {du0 * c, du0 * sn}};
  const double alphas[] = {1, 2, 4};
  for (int i = 0; i < 3; i++) {
    set_param(&sys, "alpha", alphas[i]);
    nh_state ex;
    cr_assert_eq(nh_exact_solution(&sys, &x0, t0 + tau, &ex), 0, "alpha = %g", alphas[i]);
    double u, du;
    if (alphas[i] == 1) { /* a = ½, w = √3/2 */
      const double w = sqrt(3) / 2, e = exp(-0.5 * tau), C = cos(w * tau), S = sin(w * tau) / w;
      u = e * (u0 * C + (du0 + 0.5 * u0) * S);
      du = e * (du0 * C - (u0 + 0.5 * du0) * S);
    } else if (alphas[i] == 2) {
      u = exp(-tau) * (u0 + (du0 + u0) * tau);
      du = exp(-tau) * (du0 - (u0 + du0) * tau);
    } else {
      const double rp = -2 + sqrt(3), rm = -2 - sqrt(3), cp = (du0 - rm * u0) / (rp - rm), cm = (du0 - rp * u0) / (rm - rp);
      u = cp * exp(rp * tau) + cm * exp(rm * tau);
      du = cp * rp * exp(rp * tau) + cm * rm * exp(rm * tau);
    }
    const double expect_q[2] = {u * c, u * sn}, expect_v[2] = {du * c, du * sn};
    cr_expect(max_abs_diff(2, ex.q, expect_q) <= 1e-15 && max_abs_diff(2, ex.v, expect_v) <= 1e-15,
              "alpha = %g: exact (%.17g, %.17g; %.17g, %.17g), closed form (%.17g, %.17g; %.17g, %.17g)", alphas[i],
              ex.q[0], ex.q[1], ex.v[0], ex.v[1], expect_q[0], expect_q[1], expect_v[0], expect_v[1]);
    cr_expect_eq(ex.t, t0 + tau);
    expect_exact_matches_reference(&sys, &x0, tau, 1e-10);
  }
}

/* The exact flow through the origin: on D, a flow (φ_{t2−t1} ∘ φ_{t1} = φ_{t2}) across the
 * zero crossings of u, and the start at the origin (any velocity) continues the motion. */
Test(herglotz, foucault_exact_through_the_origin) {
  nh_system sys = test_system("foucault_pendulum", NULL);
  set_param(&sys, "Omega", 0.01);
  nh_state x0, a, b, c;
  nh_system_default_state(&sys, &x0);
  x0.v[1] = -0.01 * sin(49 * 3.14159265358979323846 / 180);
  cr_assert(nh_exact_solution(&sys, &x0, 5.0, &a) == 0);     /* after the first crossing (u < 0) */
  cr_assert(nh_exact_solution(&sys, &a, 9.0, &b) == 0);      /* restarted with u0 = r > 0 */
  cr_assert(nh_exact_solution(&sys, &x0, 9.0, &c) == 0);
  cr_expect(max_abs_diff(2, b.q, c.q) <= 1e-13 && max_abs_diff(2, b.v, c.v) <= 1e-13, "flow property across u = 0");
  cr_expect(nh_constraint_residual(&sys, c.q, c.v) <= 1e-16, "exact state off D");
  /* From the origin with velocity w: the motion leaves along w; compare with a start at t0 = −δ. */
  nh_state o = {.t = 2.0, .q = {0, 0}, .v = {0.3, -0.2}}, on, e1, e2;
  cr_assert(nh_exact_solution(&sys, &o, 2.0, &on) == 0 && max_abs_diff(2, on.v, o.v) <= 1e-15, "start at the origin");
  cr_assert(nh_exact_solution(&sys, &o, 1.9, &e1) == 0);  /* backwards from the origin */
  cr_assert(nh_exact_solution(&sys, &e1, 4.0, &e2) == 0); /* forwards through it */
  cr_assert(nh_exact_solution(&sys, &o, 4.0, &c) == 0);
  cr_expect(max_abs_diff(2, e2.q, c.q) <= 1e-13 && max_abs_diff(2, e2.v, c.v) <= 1e-13, "flow through the origin");
  /* The exact solution solves the reduced ODE away from the origin (central differences). */
  const double d = 1e-4;
  nh_state p, m;
  nh_exact_solution(&sys, &x0, 2.0, &a);
  nh_exact_solution(&sys, &x0, 2.0 + d, &p);
  nh_exact_solution(&sys, &x0, 2.0 - d, &m);
  double acc[2];
  nh_acceleration(&sys, 2.0, a.q, a.v, acc);
  for (int i = 0; i < 2; i++) {
    cr_expect(fabs((p.q[i] - m.q[i]) / (2 * d) - a.v[i]) <= 1e-9, "dq/dt = v");
    cr_expect(fabs((p.v[i] - m.v[i]) / (2 * d) - acc[i]) <= 1e-9, "dv/dt = a(q, v)");
  }
}

/* ---- energy balance along the reference (spec §2.1, §3.1, §3.2; §5 item 11) ----------------- */

/* E(T) − E(0) against ∫ P dt by composite Simpson on N intervals of the reference solution. */
static void check_energy_balance(const nh_system *sys, nh_state x, double T, int N,
                                 double (*power)(const nh_system *, const nh_state *), double tol) {
  const double dt = T / N, E0 = nh_energy(sys, x.q, x.v);
  double integral = power(sys, &x);
  for (int i = 1; i <= N; i++) {
    nh_state y;
    cr_assert(nh_reference_solve(sys, &x, x.t + dt, 1e-13, &y) == 0, "reference failed");
    x = y;
    integral += (i == N ? 1 : (i % 2 ? 4 : 2)) * power(sys, &x);
  }
  integral *= dt / 3;
  double dE = nh_energy(sys, x.q, x.v) - E0;
  cr_expect(fabs(dE - integral) <= tol * fabs(dE), "E(T) - E0 = %.12g, integral of the power %.12g", dE, integral);
}

/* Disk: dE/dt = −2αT + F·q̇ (linear homogeneous constraints). */
static double disk_power(const nh_system *sys, const nh_state *x) {
  double F[5], P = -2 * nh_damping(sys, 0) * nh_kinetic_energy(sys, x->q, x->v);
  nh_forcing(sys, x->t, F);
  for (int i = 0; i < 5; i++) P += F[i] * x->v[i];
  return P;
}

/* Pendulum: dE/dt = −αm|q̇|² − mμs|q|² with μ = −s[α + 2 q·q̇/|q|²] on D (spec §3.1). */
static double pendulum_power(const nh_system *sys, const nh_state *x) {
  const double m = 28, alpha = nh_damping(sys, 0), s = 7.2921159e-5 * sin(49 * 3.14159265358979323846 / 180);
  const double r2 = x->q[0] * x->q[0] + x->q[1] * x->q[1], qv = x->q[0] * x->v[0] + x->q[1] * x->v[1];
  const double mu = -s * (alpha + 2 * qv / r2);
  return -alpha * m * (x->v[0] * x->v[0] + x->v[1] * x->v[1]) - m * mu * s * r2;
}

Test(herglotz, energy_balance_along_reference) {
  nh_system disk = test_system("falling_disk", NULL);
  nh_state x = test_preset(&disk, "exp3");
  set_param(&disk, "alpha", 0.1);
  check_energy_balance(&disk, x, 4, 200, disk_power, 1e-8);
  nh_system pend = test_system("foucault_pendulum", NULL);
  set_param(&pend, "alpha", 0.05);
  nh_system_default_state(&pend, &x);
  check_energy_balance(&pend, x, 3, 200, pendulum_power, 1e-8);
}

/* ---- Appendix A.1-A.5 (spec §2.8, §5 item 1) --------------------------------------------------- */

/* The general form of spec §2.8 and the printed A.1-A.5 at the same random triples (q_{j−1}, q_j,
 * q_{j+1}) with random F_j, α, h (spec §2.8: "checked to ~1e-15 relative"; §5 item 1). Both sides
 * are sums of the same monomials (products of masses, trigonometric factors, differences of the
 * inputs, 1/h and c₂); each is evaluated with at most ~25 roundings along any path from an input to
 * the result (a difference, its division by h, the trigonometric factor of q̄ or q_j and its power,
 * the products, the brackets, c₂, the combination), so each side is off by at most ~25ε·S, S the sum
 * of the magnitudes of the monomials (computed below beside each value). The sides may differ by
 * twice that; the bound checked is 64ε·S (≈ 1.4e-14·S). */

/* D1L_d(a, b) (right = 0) or D2L_d(a, b) (right = 1) of the 2nd-order L_d of spec §2.5 (the z term
 * dropped), from the pieces written under §2.8, with F_j in both; mag: the sum of the magnitudes of
 * each entry's terms. */
static void ld_derivative(const double *a, const double *b, const double *F, double h, int right, double *D,
                          double *mag) {
  double v[5];
  for (int i = 0; i < 5; i++) v[i] = (b[i] - a[i]) / h;
  const double th = 0.5 * (a[ITH] + b[ITH]), st = sin(th), ct = cos(th), w = v[IPSI] - v[IPHI] * st;
  const double wm = fabs(v[IPSI]) + fabs(v[IPHI] * st), mr2 = DM * DR * DR;
  const double dTdv[5] = {DM * v[IX], DM * v[IY], (IT + mr2 * st * st) * v[ITH], IT * ct * ct * v[IPHI] - IA * st * w,
                          IA * w};
  const double dTdv_m[5] = {fabs(dTdv[IX]), fabs(dTdv[IY]), fabs(dTdv[ITH]),
                            IT * ct * ct * fabs(v[IPHI]) + IA * fabs(st) * wm, IA * wm};
  const double dTdth = mr2 * st * ct * v[ITH] * v[ITH] - IA * ct * v[IPHI] * w - IT * st * ct * v[IPHI] * v[IPHI];
  const double dTdth_m =
      mr2 * fabs(st * ct) * v[ITH] * v[ITH] + IA * fabs(ct * v[IPHI]) * wm + IT * fabs(st * ct) * v[IPHI] * v[IPHI];
  const double dVdth = -DM * DG * DR * sin(right ? b[ITH] : a[ITH]);
  for (int i = 0; i < 5; i++) {
    D[i] = (right ? dTdv[i] : -dTdv[i]) / h + 0.5 * F[i];
    mag[i] = dTdv_m[i] / h + 0.5 * fabs(F[i]);
  }
  D[ITH] += 0.5 * dTdth - 0.5 * dVdth;
  mag[ITH] += 0.5 * dTdth_m + 0.5 * fabs(dVdth);
}

/* The general form at (q_{j−1}, q_j, q_{j+1}): E_i = D1_i L_d(q_j, q_{j+1}) + c₂ D2_i L_d(q_{j−1}, q_j),
 * combined as spec §2.8 says A.1, A.4 (×2/m) and A.5 are, and A(q̄)Δq/h with A of (4.11) for A.2,
 * A.3; G in the order of appendix_equations (A.1, A.2, A.3, A.4, A.5), S the magnitude sums. */
static void general_form(const double *qm, const double *q0, const double *qp, const double *F, double h,
                         double alpha, double *G, double *S) {
  double D1[5], m1[5], D2[5], m2[5], E[5], mE[5];
  const double c2 = (1 - alpha * h / 2) / (1 + alpha * h / 2);
  ld_derivative(q0, qp, F, h, 0, D1, m1);
  ld_derivative(qm, q0, F, h, 1, D2, m2);
  for (int i = 0; i < 5; i++) E[i] = D1[i] + c2 * D2[i], mE[i] = m1[i] + fabs(c2) * m2[i];
  const double sp = sin(q0[IPHI]), cp = cos(q0[IPHI]), st = sin(q0[ITH]), ct = cos(q0[ITH]), R = DR;
  G[0] = E[IPSI] + R * cp * E[IX] + R * sp * E[IY];
  S[0] = mE[IPSI] + R * fabs(cp) * mE[IX] + R * fabs(sp) * mE[IY];
  G[3] = (2 / DM) * (E[ITH] - R * ct * sp * E[IX] + R * ct * cp * E[IY]);
  S[3] = (2 / DM) * (mE[ITH] + R * fabs(ct * sp) * mE[IX] + R * fabs(ct * cp) * mE[IY]);
  G[4] = E[IPHI] - R * st * cp * E[IX] - R * st * sp * E[IY];
  S[4] = mE[IPHI] + R * fabs(st * cp) * mE[IX] + R * fabs(st * sp) * mE[IY];
  const double tb = 0.5 * (q0[ITH] + qp[ITH]), pb = 0.5 * (q0[IPHI] + qp[IPHI]);
  const double A[2][5] = {{1, 0, R * sin(pb) * cos(tb), R * sin(tb) * cos(pb), -R * cos(pb)},
                          {0, 1, -R * cos(pb) * cos(tb), R * sin(tb) * sin(pb), -R * sin(pb)}};
  for (int a = 0; a < 2; a++) {
    G[1 + a] = S[1 + a] = 0;
    for (int i = 0; i < 5; i++) {
      G[1 + a] += A[a][i] * (qp[i] - q0[i]) / h;
      S[1 + a] += fabs(A[a][i] * (qp[i] - q0[i]) / h);
    }
  }
}

/* The literal A.1-A.5 at (q_{j−1}, q_j, q_{j+1}), F = F_j; typo_fixed = 0 keeps the printed F^Y in
 * the X bracket of A.4. */
static void appendix_equations(const double *qm, const double *q0, const double *qp, const double *F, double h,
                               double alpha, int typo_fixed, double *E) {
  const double m = DM, R = DR, g = DG, h2 = h * h;
  const double Xm = qm[IX], X0 = q0[IX], Xp = qp[IX], Ym = qm[IY], Y0 = q0[IY], Yp = qp[IY];
  const double tm = qm[ITH], t0 = q0[ITH], tp = qp[ITH], pm = qm[IPHI], p0 = q0[IPHI], pp = qp[IPHI];
  const double sm = qm[IPSI], s0 = q0[IPSI], sp = qp[IPSI];
  const double FX = F[IX], FY = F[IY], Ft = F[ITH], Fp = F[IPHI], Fs = F[IPSI];
  const double tbp = (t0 + tp) / 2, tbm = (tm + t0) / 2, pbp = (p0 + pp) / 2;
  const double K2 = 1 / (alpha * h / 2 + 1), a2 = alpha * h / 2 - 1, r = (alpha * h - 2) / (alpha * h + 2);
  const double FXa4 = typo_fixed ? FX : FY;
  E[0] = R * cos(p0) * (FX / 2 - K2 * (FX / 2 - m * (Xm - X0) / h2) * a2 + m * (X0 - Xp) / h2) +
         R * sin(p0) * (FY / 2 - K2 * (FY / 2 - m * (Ym - Y0) / h2) * a2 + m * (Y0 - Yp) / h2) -
         K2 * a2 * (Fs / 2 - (1 / h) * IA * ((sm - s0) / h - sin(tbm) * (pm - p0) / h)) +
         (1 / h) * IA * ((s0 - sp) / h - sin(tbp) * (p0 - pp) / h) + Fs / 2;
  E[1] = R * cos(pbp) * (s0 - sp) / h - (X0 - Xp) / h - R * cos(pbp) * sin(tbp) * (p0 - pp) / h -
         R * cos(tbp) * sin(pbp) * (t0 - tp) / h;
  E[2] = R * sin(pbp) * (s0 - sp) / h - (Y0 - Yp) / h - R * sin(pbp) * sin(tbp) * (p0 - pp) / h +
         R * cos(pbp) * cos(tbp) * (t0 - tp) / h;
  E[3] = Ft / m + (IT / m) * (2 * (t0 - tp) / h2 - 0.5 * sin(t0 + tp) * (p0 - pp) * (p0 - pp) / h2) + R * g * sin(t0) +
         R * R * (sin(tbp) * sin(tbp) * 2 * (t0 - tp) / h2 + 0.5 * sin(t0 + tp) * (t0 - tp) * (t0 - tp) / h2) +
         r * ((IT / m) * (2 * (tm - t0) / h2 + 0.5 * sin(tm + t0) * (pm - p0) * (pm - p0) / h2) - Ft / m -
              R * g * sin(t0) +
              R * R * (sin(tbm) * sin(tbm) * 2 * (tm - t0) / h2 - 0.5 * sin(tm + t0) * (tm - t0) * (tm - t0) / h2) +
              (IA * (pm - p0) / m) * cos(tbm) * ((sm - s0) / h2 - sin(tbm) * (pm - p0) / h2)) +
         2 * R * cos(p0) * cos(t0) * (FY / (2 * m) - r * (FY / (2 * m) - (Ym - Y0) / h2) + (Y0 - Yp) / h2) -
         2 * R * cos(t0) * sin(p0) * (FXa4 / (2 * m) - r * (FXa4 / (2 * m) - (Xm - X0) / h2) + (X0 - Xp) / h2) -
         (IA * (p0 - pp) / m) * cos(tbp) * ((s0 - sp) / h2 - sin(tbp) * (p0 - pp) / h2);
  E[4] = Fp / 2 + IT * cos(tbp) * cos(tbp) * (p0 - pp) / h2 -
         r * (Fp / 2 - IT * cos(tbm) * cos(tbm) * (pm - p0) / h2 +
              IA * sin(tbm) * ((sm - s0) / h2 - sin(tbm) * (pm - p0) / h2)) -
         R * cos(p0) * sin(t0) * (FX / 2 - r * (FX / 2 - m * (Xm - X0) / h2) + m * (X0 - Xp) / h2) -
         R * sin(p0) * sin(t0) * (FY / 2 - r * (FY / 2 - m * (Ym - Y0) / h2) + m * (Y0 - Yp) / h2) -
         IA * sin(tbp) * ((s0 - sp) / h2 - sin(tbp) * (p0 - pp) / h2);
}

/* The force of the trial: F(t) ≡ trial_force, random per trial (all five components). */
static double trial_force[5];
static int constant_trial_force(const double *p, double t, double *F) {
  (void)p, (void)t;
  memcpy(F, trial_force, sizeof trial_force);
  return 1;
}

Test(herglotz, appendix_A1_to_A5_is_the_general_form) {
  static nh_system_type forced; /* the disk with a force in every coordinate */
  static nh_system_forces forces;
  forced = nh_system_falling_disk;
  forces = *nh_system_falling_disk.forces;
  forces.forcing = constant_trial_force;
  forced.forces = &forces;
  nh_system sys;
  cr_assert(nh_system_init(&sys, &forced) == 0);
  nh_method *m = test_method("herglotz2");
  gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
  gsl_rng_set(r, 3);
  const double eps = 2.220446049250313e-16, C = 64;
  double worst = 0, worst_step = 0, least_typo = INFINITY;
  int worst_eq = -1;
  for (int trial = 0; trial < 2000; trial++) {
    const double alpha = 0.5 * gsl_rng_uniform(r), h = 0.01 + 0.19 * gsl_rng_uniform(r);
    double q[3][5]; /* q_{j−1}, q_j, q_{j+1}: independent random configurations */
    for (int k = 0; k < 3; k++) {
      for (int i = 0; i < 5; i++) q[k][i] = 4 * gsl_rng_uniform(r) - 2;
      q[k][ITH] = 2.2 * gsl_rng_uniform(r) - 1.1; /* inside the chart, |θ| < π/2 */
    }
    for (int i = 0; i < 5; i++) trial_force[i] = 6 * gsl_rng_uniform(r) - 3;
    double G[5], S[5], A[5], Atypo[5];
    general_form(q[0], q[1], q[2], trial_force, h, alpha, G, S);
    appendix_equations(q[0], q[1], q[2], trial_force, h, alpha, 1, A);
    appendix_equations(q[0], q[1], q[2], trial_force, h, alpha, 0, Atypo);
    for (int k = 0; k < 5; k++) {
      const double ratio = fabs(A[k] - G[k]) / (eps * S[k]);
      if (ratio > worst) worst = ratio, worst_eq = k;
    }
    /* As printed (F^Y in the X bracket of A.4) the identity fails far beyond the bound. */
    least_typo = fmin(least_typo, fabs(Atypo[3] - G[3]) / (eps * S[3]));

    /* herglotz2's own first equation (its Newton residual at Λ = 0, ·1/h²) is D1L_d(q_j, q_{j+1})
     * + c₋ p_j/h with p_j = M(q_j)v_j; with v_j = M(q_j)⁻¹ hD2L_d(q_{j−1}, q_j)/(1 + αh/2) it is the
     * general form E. Compared entry by entry with the same p_j (M(q_j)v_j as the harness forms it,
     * one product each side) at the same bound. */
    set_param(&sys, "alpha", alpha);
    double D1[5], m1[5], D2[5], m2[5], M[25], p[5], X[7] = {0}, F[7], J[49];
    ld_derivative(q[1], q[2], trial_force, h, 0, D1, m1);
    ld_derivative(q[0], q[1], trial_force, h, 1, D2, m2);
    nh_state x = {.t = 0};
    memcpy(x.q, q[1], sizeof x.q[0] * 5);
    nh_mass(&sys, x.q, M);
    for (int i = 0; i < 5; i++) x.v[i] = h * D2[i] / (1 + alpha * h / 2);
    cr_assert(nh_spd_solve(5, M, x.v) == 0);
    nh_mass(&sys, x.q, M);
    const double cm = 1 - alpha * h / 2;
    for (int i = 0; i < 5; i++) {
      double pm = 0;
      p[i] = 0;
      for (int j = 0; j < 5; j++) p[i] += M[i * 5 + j] * x.v[j], pm += fabs(M[i * 5 + j] * x.v[j]);
      m1[i] += cm * pm / h;
    }
    for (int i = 0; i < 5; i++) X[i] = q[2][i] - q[1][i]; /* the unknown is the increment Δq */
    cr_assert_eq(m->type->newton->size(m, &sys), 7);
    m->type->newton->eval(m, &sys, &x, h, X, F, J);
    for (int i = 0; i < 5; i++) {
      const double E = D1[i] + cm * p[i] / h;
      worst_step = fmax(worst_step, fabs(F[i] / (h * h) - E) / (eps * m1[i]));
    }
  }
  cr_expect(worst <= C, "max |A.k - general form| / (eps S) = %.3g (equation %d of A.1, A.2, A.3, A.4, A.5), bound %g",
            worst, worst_eq, C);
  cr_expect(least_typo > C, "the printed A.4 (F^Y in the X bracket) misses the bound at every trial: min %.3g eps S",
            least_typo);
  cr_expect(worst_step <= C, "herglotz2's first equation against the general form: max %.3g eps S, bound %g",
            worst_step, C);
  gsl_rng_free(r);
  nh_method_free(m);
}

/* ---- the pendulum schemes (4.7) and (4.4) in closed form (spec §2.7, §5 item 2) --------------- */

/* One step of the spec's closed form: predictor, then the projection on the discrete constraint. */
static void pendulum_closed_form(int contact, const double *qm, const double *q, double h, double a, double w2,
                                 double s, double *qp) {
  double pred[2];
  for (int i = 0; i < 2; i++) {
    if (contact)
      pred[i] = 2 * q[i] - qm[i] - h * h * w2 * q[i] - a * h * ((q[i] - qm[i]) - h * h / 2 * w2 * q[i]);
    else
      pred[i] = (2 * q[i] - qm[i] - h * h * w2 * q[i] + a * h * q[i]) / (1 + a * h);
  }
  const double r2 = q[0] * q[0] + q[1] * q[1];
  const double C = q[0] * (pred[1] - q[1]) - q[1] * (pred[0] - q[0]) + h * s * r2;
  qp[0] = pred[0] + q[1] * C / r2;
  qp[1] = pred[1] - q[0] * C / r2;
}

static void check_pendulum_scheme(const char *name, int contact) {
  nh_system sys = test_system("foucault_pendulum", NULL);
  const double Omega = 0.02, alpha = 0.05, h = 0.3;
  set_param(&sys, "Omega", Omega);
  set_param(&sys, "alpha", alpha);
  const double s = Omega * sin(49 * 3.14159265358979323846 / 180), w2 = 9.81 / 67;
  nh_method *m = test_method(name);
  nh_state x = {.q = {1, 0.2}, .v = {0.1}}, y;
  x.v[1] = (-s * (1 + 0.04) + 0.2 * x.v[0]) / 1; /* −y ẋ + x ẏ + s r² = 0 */
  cr_assert(nh_constraint_residual(&sys, x.q, x.v) <= 1e-16);
  nh_cost cost = {0};
  nh_method_init(m, &sys, &x, h, &cost);
  double qm[2], worst = 0;
  for (int j = 0; j < 60; j++) {
    cr_assert(nh_method_step(m, &sys, &x, &y, h, &cost) == NH_STEP_OK, "%s: step %d failed", name, j);
    if (j > 0) {
      double qp[2];
      pendulum_closed_form(contact, qm, x.q, h, alpha, w2, s, qp);
      worst = fmax(worst, max_abs_diff(2, qp, y.q));
    }
    memcpy(qm, x.q, sizeof qm);
    x = y;
  }
  cr_expect(worst <= 1e-13, "%s: max |q_{j+1} - closed form| = %.3e", name, worst);
  nh_method_free(m);
}

Test(herglotz, herglotz1_is_the_pendulum_scheme_4_7) { check_pendulum_scheme("herglotz1", 1); }
Test(herglotz, la1_is_the_pendulum_scheme_4_4) { check_pendulum_scheme("la1", 0); }

/* solve=closed (the step as predictor plus projection, without Newton) is the same scheme: the
 * pendulum's closed form of §2.7 written out above, and on constant-mass systems of other
 * constraints (chaotic particle, knife edge, the affine Foucault constraint with damping) the
 * Newton step to the Newton tolerance, one step from 20 states; a variable mass is refused. */
Test(herglotz, solve_closed_is_the_same_step) {
  check_pendulum_scheme("herglotz1(solve=closed)", 1);
  check_pendulum_scheme("la1(solve=closed)", 0);
  const char *systems[] = {"chaotic_particle", "knife_edge", "foucault_pendulum"};
  const char *methods[][2] = {{"herglotz1", "herglotz1(solve=closed)"}, {"la1", "la1(solve=closed)"}};
  for (int si = 0; si < 3; si++) {
    nh_system sys = test_system(systems[si], NULL);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 5 + si);
    for (int mi = 0; mi < 2; mi++) {
      nh_method *newton = test_method(methods[mi][0]), *closed = test_method(methods[mi][1]);
      double worst = 0;
      for (int trial = 0; trial < 20; trial++) {
        nh_state x = {0};
        const double E = 1 + gsl_rng_uniform(r);
        cr_assert_eq(nh_sample_on_D(&sys, E, r, &x), 0);
        nh_state a = x, b = x, ya, yb;
        nh_cost cost = {0};
        cr_assert(nh_method_init(newton, &sys, &a, 0.05, &cost) == NH_STEP_OK &&
                  nh_method_init(closed, &sys, &b, 0.05, &cost) == NH_STEP_OK);
        cr_assert(nh_method_step(newton, &sys, &a, &ya, 0.05, &cost) == NH_STEP_OK &&
                  nh_method_step(closed, &sys, &b, &yb, 0.05, &cost) == NH_STEP_OK);
        const double zero[NH_MAX_N] = {0};
        worst = fmax(worst, fmax(max_abs_diff(sys.n, ya.q, yb.q), max_abs_diff(sys.n, ya.v, yb.v)) /
                                (1 + fmax(max_abs_diff(sys.n, ya.q, zero), max_abs_diff(sys.n, ya.v, zero))));
      }
      cr_expect(worst <= 1e-13, "%s on %s: Newton and closed form differ by %.3e (relative)", methods[mi][1],
                systems[si], worst);
      nh_method_free(newton), nh_method_free(closed);
    }
    gsl_rng_free(r);
  }
  nh_system disk = test_system("falling_disk", NULL);
  nh_method *m = test_method("la1(solve=closed)");
  char err[512];
  cr_expect_eq(nh_method_applies(m, &disk, err, sizeof err), -1, "a variable mass is refused");
  cr_expect(strstr(err, "solve=closed needs a constant mass matrix") != NULL, "%s", err);
  nh_method_free(m);
  char text[256];
  cr_expect_null(nh_method_parse("herglotz2(solve=closed)", text, sizeof text), "herglotz2 has no closed form");
}

/* ---- upright rolling: decay factor, invariance (spec §3.2, §5 items 5 and 6) ------------------- */

static void check_upright_recursion(const char *name, double c, double gain) {
  nh_system sys = test_system("falling_disk", NULL);
  nh_state x = test_preset(&sys, "exp1");
  set_param(&sys, "alpha", 0.1);
  nh_method *m = test_method(name);
  const double h = 0.1;
  nh_cost cost = {0};
  nh_method_init(m, &sys, &x, h, &cost);
  double prev = NAN, worst = 0;
  for (int j = 0; j < 30; j++) {
    nh_state y;
    cr_assert(nh_method_step(m, &sys, &x, &y, h, &cost) == NH_STEP_OK);
    double w = (y.q[IPSI] - x.q[IPSI]) / h; /* v_{j+1/2} */
    if (j > 0) worst = fmax(worst, fabs(w - (c * prev + gain)) / fabs(w));
    cr_expect(y.q[ITH] == 0 && y.q[IPHI] == 0 && y.q[IY] == 0, "%s: the disk stays upright and straight", name);
    cr_expect(fabs(y.q[IX] - DR * y.q[IPSI]) <= 1e-13 * (1 + y.q[IX]), "%s: X = R psi", name);
    prev = w;
    x = y;
  }
  cr_expect(worst <= 1e-13, "%s: v_{j+1/2} = c v_{j-1/2} + gain violated by %.3e", name, worst);
  nh_method_free(m);
}

Test(herglotz, upright_rolling_decay_factors) {
  const double alpha = 0.1, h = 0.1, F = 12;
  /* spec §5 item 6: c₂ = (1 − αh/2)/(1 + αh/2) = 0.990049751 vs e^{−0.01} = 0.990049834. */
  const double c2 = (1 - alpha * h / 2) / (1 + alpha * h / 2);
  cr_expect(fabs(c2 - 0.990049751) <= 1e-9 && fabs(exp(-alpha * h) - 0.990049834) <= 1e-9, "c2 values of the spec");
  check_upright_recursion("herglotz2", c2, h * F / (DJ * (1 + alpha * h / 2)));
  /* The first-order factor: v_{j+½} = c₁ v_{j−½} + (1 + c₁) hF/(2J), c₁ = 1 − αh. */
  const double c1 = 1 - alpha * h;
  check_upright_recursion("herglotz1", c1, (1 + c1) * h * F / (2 * DJ));
}

/* ---- the action z (spec §2.2, (3.2)) -------------------------------------------------------------- */

/* Exp 1 (α = 0.1): z(T) = ∫_0^T e^{−α(T−t)} L(t) dt with L = ½Jψ̇² − mgR + F ψ on the exact solution. */
static double action_integrand(double t, void *params) {
  const double T = *(const double *)params, alpha = 0.1, f = 12 / DJ;
  const double w = f / alpha * (1 - exp(-alpha * t)), psi = f / alpha * (t - (1 - exp(-alpha * t)) / alpha);
  return exp(-alpha * (T - t)) * (0.5 * DJ * w * w - DM * DG * DR + 12 * psi);
}

static double herglotz_z(const char *name, const char *exp, double h, double T) {
  nh_system sys = test_system("falling_disk", NULL);
  nh_state x = test_preset(&sys, exp);
  set_param(&sys, "alpha", 0.1);
  x.z = 123; /* init must reset it: z_0 = 0 */
  nh_method *m = test_method(name);
  nh_cost cost = {0};
  run(m, &sys, &x, h, lround(T / h), &cost);
  nh_method_free(m);
  return x.z;
}

Test(herglotz, action_z_converges_to_the_herglotz_action) {
  double T = 10, z, abserr;
  gsl_integration_workspace *ws = gsl_integration_workspace_alloc(100);
  gsl_function fn = {action_integrand, &T};
  gsl_integration_qag(&fn, 0, T, 0, 1e-12, 100, GSL_INTEG_GAUSS61, ws, &z, &abserr);
  gsl_integration_workspace_free(ws);
  double e2a = fabs(herglotz_z("herglotz2", "exp1", 0.1, T) - z), e2b = fabs(herglotz_z("herglotz2", "exp1", 0.05, T) - z);
  double e1a = fabs(herglotz_z("herglotz1", "exp1", 0.1, T) - z), e1b = fabs(herglotz_z("herglotz1", "exp1", 0.05, T) - z);
  cr_expect(e2b <= 1e-4 * fabs(z), "herglotz2 z(10) = %.10g off by %.3e", z, e2b);
  cr_expect(fabs(e2a / e2b - 4) <= 0.1, "herglotz2: z error ratio %.4f, expected 4 (order 2)", e2a / e2b);
  cr_expect(fabs(e1a / e1b - 2) <= 0.1, "herglotz1: z error ratio %.4f, expected 2 (order 1)", e1a / e1b);
  /* Exp 3 (F = t/16): the trapezoidal F·q of L_d keeps z second order (successive differences
   * shrink by 4); spec §2.6's F_j·q̄ would make them shrink by 2. */
  const char *names[] = {"herglotz2", "herglotz2(forcing=midpoint)"};
  for (int i = 0; i < 2; i++) {
    double za = herglotz_z(names[i], "exp3", 0.1, 4), zb = herglotz_z(names[i], "exp3", 0.05, 4);
    double zc = herglotz_z(names[i], "exp3", 0.025, 4);
    cr_expect(fabs((za - zb) / (zb - zc) - 4) <= 0.2, "%s exp3: z difference ratio %.4f, expected 4", names[i],
              (za - zb) / (zb - zc));
  }
}

/* ---- constraints, symmetry, cost (spec §5 item 3, §2.6) ---------------------------------------- */

/* Max over the run of |A(q_d)Δq/h + b(q_d)| (q_d = midpoint or left point) and of |A(q)v + b|. */
static void constraint_run(const char *name, nh_system *sys, nh_state x, double h, long steps, int midpoint,
                           double *discrete, double *continuous, double *cd_residual, nh_cost *cost) {
  nh_method *m = test_method(name);
  nh_method_init(m, sys, &x, h, cost);
  *discrete = *continuous = *cd_residual = 0;
  double qm[NH_MAX_N];
  for (long j = 0; j < steps; j++) {
    nh_state y;
    cr_assert(nh_method_step(m, sys, &x, &y, h, cost) == NH_STEP_OK, "%s: step %ld failed", name, j);
    double qd[NH_MAX_N], dq[NH_MAX_N], v[NH_MAX_N];
    for (int i = 0; i < sys->n; i++) {
      qd[i] = midpoint ? 0.5 * (x.q[i] + y.q[i]) : x.q[i];
      dq[i] = (y.q[i] - x.q[i]) / h;
      v[i] = (y.q[i] - qm[i]) / (2 * h); /* central difference at q_j */
    }
    *discrete = fmax(*discrete, nh_constraint_residual(sys, qd, dq));
    *continuous = fmax(*continuous, nh_constraint_residual(sys, y.q, y.v));
    if (j > 0) *cd_residual = fmax(*cd_residual, nh_constraint_residual(sys, x.q, v));
    memcpy(qm, x.q, sizeof qm);
    x = y;
  }
  nh_method_free(m);
}

Test(herglotz, discrete_constraints_hold_to_round_off) {
  /* spec §5 item 3: Exp 2, α = 0.1, h = 0.1, T = 20. */
  nh_system disk = test_system("falling_disk", NULL);
  nh_state x = test_preset(&disk, "exp2");
  set_param(&disk, "alpha", 0.1);
  double dis, con, cd;
  nh_cost cost = {0};
  constraint_run("herglotz2", &disk, x, 0.1, 200, 1, &dis, &con, &cd, &cost);
  /* Round-off: |q| reaches ~130, so Δq/h carries ~1e-13. */
  cr_expect(dis <= 1e-12 && con <= 1e-12, "herglotz2 disk: discrete %.3e, velocity %.3e", dis, con);
  cr_expect(cd >= 1e-3, "the continuous constraint at central differences is O(h^2), not round-off: %.3e", cd);
  /* spec §2.9: a few Newton iterations per step at h = 0.1. */
  cr_expect(cost.newton_iterations <= 4 * cost.steps, "%llu Newton iterations for %llu steps", cost.newton_iterations,
            cost.steps);
  constraint_run("herglotz1", &disk, x, 0.1, 200, 0, &dis, &con, &cd, &cost);
  cr_expect(dis <= 1e-12 && con <= 1e-12, "herglotz1 disk: discrete %.3e, velocity %.3e", dis, con);
  /* The affine constraint of the pendulum: herglotz2 at the midpoint, herglotz1 and la1 at q_j. */
  nh_system pend = test_system("foucault_pendulum", NULL);
  set_param(&pend, "Omega", 0.01);
  nh_system_default_state(&pend, &x);
  x.v[1] = -0.01 * sin(49 * 3.14159265358979323846 / 180);
  const char *names[] = {"herglotz2", "herglotz1", "la1"};
  for (int i = 0; i < 3; i++) {
    constraint_run(names[i], &pend, x, 0.2, 300, i == 0, &dis, &con, &cd, &cost);
    cr_expect(dis <= 1e-15 && con <= 1e-15, "%s pendulum: discrete %.3e, velocity %.3e", names[i], dis, con);
  }
}

/* The engine's block solve (constant M: the Schur complement in Λ, then M⁻¹ for the positions) solves
 * the Newton system exactly, damping coefficient κ = 1 + αh of la1 included: on the Foucault pendulum
 * (V quadratic, the constraint affine: the residual is nearly linear) Newton then needs at most 3
 * iterations per step even with strong damping (α = 2, h = 0.1, κ = 1.2), where an inexact solve
 * would converge only linearly. */
Test(herglotz, block_solve_keeps_newton_quadratic_with_damping) {
  nh_system pend = test_system("foucault_pendulum", "Omega=0.01,alpha=2");
  const char *names[] = {"herglotz2", "herglotz1", "la1"};
  for (int i = 0; i < 3; i++) {
    nh_method *m = test_method(names[i]);
    nh_state x;
    nh_system_default_state(&pend, &x);
    x.v[1] = -0.01 * sin(49 * 3.14159265358979323846 / 180);
    nh_cost cost = {0};
    run(m, &pend, &x, 0.1, 40, &cost);
    cr_log_info("%s: %llu Newton iterations in %llu steps", names[i], cost.newton_iterations, cost.steps);
    cr_expect(cost.newton_iterations <= 3 * cost.steps, "%s: %llu Newton iterations in %llu steps", names[i],
              cost.newton_iterations, cost.steps);
    nh_method_free(m);
  }
}

/* herglotz2 is symmetric (a step of h, then one of −h, returns q, v and z); herglotz1 is not. */
static double round_trip(const char *name, nh_system *sys, nh_state x, double h) {
  nh_method *m = test_method(name);
  nh_cost cost = {0};
  nh_state y, w;
  nh_method_init(m, sys, &x, h, &cost);
  x.z = 0.37;
  cr_assert(nh_method_step(m, sys, &x, &y, h, &cost) == NH_STEP_OK);
  cr_assert(nh_method_step(m, sys, &y, &w, -h, &cost) == NH_STEP_OK);
  nh_method_free(m);
  return fmax(fmax(max_abs_diff(sys->n, w.q, x.q), max_abs_diff(sys->n, w.v, x.v)), fabs(w.z - x.z)) +
         fabs(w.t - x.t);
}

Test(herglotz, herglotz2_is_symmetric) {
  nh_system disk = test_system("falling_disk", NULL);
  nh_state x = test_preset(&disk, "exp3"); /* time-dependent forcing */
  set_param(&disk, "alpha", 0.1);
  x.t = 2.5;
  x.v[IPHI] = 0.4, x.v[ITH] = -0.3, x.q[ITH] = 0.2; /* a generic state on D */
  rolling_xy(x.q, x.v);
  cr_expect(round_trip("herglotz2", &disk, x, 0.1) <= 1e-12, "herglotz2 round trip");
  cr_expect(round_trip("herglotz2(forcing=midpoint)", &disk, x, 0.1) <= 1e-12, "herglotz2(forcing=midpoint) round trip");
  cr_expect(round_trip("herglotz1", &disk, x, 0.1) >= 1e-6, "herglotz1 should not be symmetric");
  nh_method *m2 = test_method("herglotz2"), *m1 = test_method("herglotz1"), *la = test_method("la1");
  cr_expect(nh_method_is_symmetric(m2) && !nh_method_is_symmetric(m1) && !nh_method_is_symmetric(la));
  cr_expect(nh_method_order(m2) == 2 && nh_method_order(m1) == 1 && nh_method_order(la) == 1);
  cr_expect(m2->type->properties & NH_TRACKS_ACTION && !(la->type->properties & NH_TRACKS_ACTION));
  char err[256];
  cr_expect(nh_method_applies(m2, &disk, err, sizeof err) == 0, "%s", err);
  nh_method_free(m2), nh_method_free(m1), nh_method_free(la);
}

/* The round trip at round-off for every h (issue 46 item 1): the engine solves for the increment
 * Δq, so p_{j+1} = MΔq/h carries no rounding of q_{j+1} − q_j. Before, solving for q_{j+1}, the
 * defect grew like ulp(|q|)/h: 1.7e-16, 1.1e-15, 8.5e-15, 1.7e-14 at h = 0.2, 0.05, 0.0125,
 * 0.003125 from the chaotic particle's default state; on the disk with damping and forcing as well. */
Test(herglotz, herglotz2_round_trip_at_round_off_for_every_h) {
  nh_system particle = test_system("chaotic_particle", NULL), disk = test_system("falling_disk", NULL);
  nh_state xp, xd = test_preset(&disk, "exp3");
  nh_system_default_state(&particle, &xp);
  set_param(&disk, "alpha", 0.1);
  xd.v[IPHI] = 0.4, xd.v[ITH] = -0.3, xd.q[ITH] = 0.2, xd.q[0] = 40, xd.q[1] = -25; /* far from the origin */
  rolling_xy(xd.q, xd.v);
  double worst_p = 0, worst_d = 0;
  for (int j = 0; j <= 6; j++) {
    const double h = 0.2 / (1 << j);
    const double dp = round_trip("herglotz2", &particle, xp, h), dd = round_trip("herglotz2", &disk, xd, h);
    cr_expect(dp <= 1e-15, "chaotic particle, h = %g: |Phi_-h(Phi_h(x)) - x| = %.3e", h, dp);
    cr_expect(dd <= 1e-14, "falling disk at |q| ~ 47, h = %g: round trip %.3e", h, dd);
    worst_p = fmax(worst_p, dp), worst_d = fmax(worst_d, dd);
  }
  cr_log_info("herglotz2 round trip, h = 0.2 .. 0.2/64: <= %.2e (chaotic particle), <= %.2e (falling disk)", worst_p,
              worst_d);
}

/* spec §5 item 9: α = 0, Exp 2, h = 0.1, 2000 steps: the midpoint discrete energy
 * T(q̄, Δq/h) + ½(V_j + V_{j+1}) stays in a narrow band around E0, without drift. */
Test(herglotz, herglotz2_energy_bounded_without_damping) {
  nh_system sys = test_system("falling_disk", NULL);
  nh_state x = test_preset(&sys, "exp2");
  nh_method *m = test_method("herglotz2");
  const double h = 0.1, E0 = 61.44269147;
  nh_cost cost = {0};
  nh_method_init(m, &sys, &x, h, &cost);
  double worst = 0, first = 0, last = 0;
  const int N = 2000;
  for (int j = 0; j < N; j++) {
    nh_state y;
    cr_assert(nh_method_step(m, &sys, &x, &y, h, &cost) == NH_STEP_OK);
    double qb[5], v[5];
    for (int i = 0; i < 5; i++) qb[i] = 0.5 * (x.q[i] + y.q[i]), v[i] = (y.q[i] - x.q[i]) / h;
    double E = nh_kinetic_energy(&sys, qb, v) +
               0.5 * (sys.type->potential(sys.p, x.q) + sys.type->potential(sys.p, y.q)) - E0;
    worst = fmax(worst, fabs(E));
    if (j < N / 10) first += E / (N / 10);
    if (j >= N - N / 10) last += E / (N / 10);
    x = y;
  }
  /* Measured: a band of ±7.9e-3 J (1.3e-4 E0) and a drift of the mean below 1e-4 J. */
  cr_expect(worst <= 2e-2, "max |E - E0| = %.3e", worst);
  cr_expect(fabs(last - first) <= 1e-3, "drift of the mean energy %.3e", last - first);
  nh_method_free(m);
}

/* la1's start (integrators/herglotz.c, la1_init): the momentum of a virtual step of the exact
 * motion, p_0 = M(q(−h))(q_0 − q(−h))/h, projected M-orthogonally on D_{q_0}, to O(h²). On the
 * falling disk with a tilt rate θ̇_0 = 0.5 the mass matrix moves (∂_θ M q̇^θ ≠ 0), so the Ṁq̇ term
 * of the start counts; q(−h) comes from rk8pd at 1e-13. The control: the plain start v_0 is only
 * O(h) from it. */
Test(herglotz, la1_start_is_the_exact_virtual_step_to_second_order) {
  nh_system sys = test_system("falling_disk", NULL);
  nh_method *m = test_method("la1");
  nh_state x0;
  nh_system_default_state(&sys, &x0);
  x0.v[2] = 0.5;
  cr_assert_eq(nh_project_velocity(&sys, x0.q, x0.v), 0);
  const int n = sys.n;
  double e[3], plain[3];
  for (int k = 0; k < 3; k++) {
    const double h = 0.02 / (1 << k);
    nh_state x = x0, back;
    nh_cost cost = {0};
    cr_assert_eq(nh_method_init(m, &sys, &x, h, &cost), NH_STEP_OK);
    cr_assert_eq(nh_reference_solve(&sys, &x0, x0.t - h, 1e-13, &back), 0);
    double space[NH_MAX_N * NH_MAX_N], p[NH_MAX_N], v[NH_MAX_N];
    const double *M = nh_mass_at(&sys, back.q, space);
    for (int i = 0; i < n; i++) {
      p[i] = 0;
      for (int j = 0; j < n; j++) p[i] += M[i * n + j] * (x0.q[j] - back.q[j]) / h;
    }
    cr_assert_eq(nh_mass_solve(&sys, x0.q, p, v), 0);
    cr_assert_eq(nh_project_velocity(&sys, x0.q, v), 0);
    e[k] = plain[k] = 0;
    for (int i = 0; i < n; i++) e[k] = fmax(e[k], fabs(x.v[i] - v[i])), plain[k] = fmax(plain[k], fabs(x0.v[i] - v[i]));
  }
  for (int k = 0; k < 2; k++) {
    const double order = log2(e[k] / e[k + 1]), control = log2(plain[k] / plain[k + 1]);
    cr_log_info("la1 start at h = %g: %.3e (order %.3f); plain v0: %.3e (order %.3f)", 0.02 / (1 << k), e[k], order,
                plain[k], control);
    cr_expect(fabs(order - 2) < 0.15, "la1's start: order %.3f, want 2 (%.3e, %.3e)", order, e[k], e[k + 1]);
    cr_expect(fabs(control - 1) < 0.15, "the plain start: order %.3f, want 1", control);
  }
  nh_method_free(m);
}
