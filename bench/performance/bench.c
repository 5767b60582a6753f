#define _DEFAULT_SOURCE /* wait4 */
/* make bench: performance figures, printed, never asserted (machines here are shared and noisy).
 * Ratios are measured within one run. */
#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>
#include <sys/wait.h>
#include <sys/resource.h>

#include <gsl/gsl_errno.h>
#include <gsl/gsl_linalg.h>
#include <gsl/gsl_odeiv2.h>

#include "bench/performance/bench.h"
#include "bench/performance/floors.h"
#include "bench/performance/lockstep.h"
#include "core/linalg.h"
#include "core/text.h"
#include "integrators/evolve.h"

#include "studies/sampling.h"
#include "studies/study.h"
#include "systems/defined.h"

/* --quick: the same tables from a few thousand steps, for the test that every table runs and that
 * the LU floor computes the harness's numbers (tests/performance/test_bench.c); figures then mean little. */
static int quick;

static const char *const methods[] = {
    "rk4",
    "nh_newmark(alpha=0.5)",
    "nh_newmark(alpha=0.5,fast=0)",
    "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)",
    "adjoint_pair(nh_newmark(alpha=0))",
    "adjoint_pair(nh_newmark(beta=0.1,beta2=0.1,alpha=0))",
    "triple_jump(nh_newmark(alpha=0.5))",
    "newmark(beta=0.25,gamma=0.5)",
    "dla(alpha=0.5)",
    "nh_rattle",
    "nh_shake",
    "js_a",
    "js_b",
    "herglotz2",
};

/* ---- step cost per system ------------------------------------------------------------------- */

/* The systems of the step-cost tables, each from its default state with a step size of its
 * scale. */
static const struct {
  const char *name;
  double h;
} bench_systems[] = {{"chaotic_particle", 0.2}, {"cvt", 0.05}, {"falling_disk", 0.01}, {"chaplygin_sleigh", 0.1}};

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Marks every repetition untimed before a timing loop fills them in. */
static void untimed(double *t, int n) {
  for (int i = 0; i < n; i++) t[i] = NAN;
}

/* The median of n timings; NaN if one of them was never timed (no median of fewer than asked). */
static double median(double *t, int n) {
  for (int i = 0; i < n; i++)
    if (isnan(t[i])) return NAN;
  qsort(t, (size_t)n, sizeof(double), cmp_double);
  return t[n / 2];
}

/* Seconds for `steps` steps of m through nh_integrate (the studies' loop), from the system's
 * default state after the method's init; -1 if a step fails. */
/* A table's numeric columns, each a heading right-aligned in its width, ended by {0}; every row
 * ends with the method's name after two blanks. */
typedef struct {
  int width;
  const char *heading;
} bench_column;

static void put_headings(const bench_column *cols) {
  for (int i = 0; cols[i].heading; i++) printf("%s%*s", i ? " " : "", cols[i].width, cols[i].heading);
  printf("  method\n");
}

/* A row without numbers: why in the first column, the others blank. */
static void put_no_numbers(const bench_column *cols, const char *why, const char *method) {
  for (int i = 0; cols[i].heading; i++) printf("%s%*s", i ? " " : "", cols[i].width, i ? "" : why);
  printf("  %s\n", method);
}

static double time_method(const nh_system *sys, const nh_method *m, double h, long steps, nh_cost *cost) {
  nh_state x;
  nh_system_default_state(sys, &x);
  if (nh_method_init(m, sys, &x, h, cost) != NH_STEP_OK) return -1;
  double t0 = omp_get_wtime();
  if (nh_integrate(m, sys, &x, steps, h, cost, NULL) != NH_STEP_OK) return -1;
  return omp_get_wtime() - t0;
}

static void bench_steps(const char *spec NH_UNUSED) { /* the tables of one system */
  for (size_t si = 0; si < sizeof bench_systems / sizeof *bench_systems; si++) {
    nh_system sys;
    nh_system_init(&sys, nh_system_type_find(bench_systems[si].name));
    const double h = bench_systems[si].h;
    const long steps = quick ? 1000 : si == 0 ? 200000 : 50000;
    double rk4_time = 0;
    printf("%sstep cost, %s, h = %g, %ld steps each, one thread\n", si ? "\n" : "", bench_systems[si].name, h, steps);
    static const bench_column cols[] = {{10, "ns/step"},  {8, "x rk4"},     {10, "newton/st"},
                                        {10, "rhs/step"}, {10, "jac/step"}, {0}};
    put_headings(cols);
    for (size_t i = 0; i < sizeof methods / sizeof *methods; i++) {
      char err[NH_TEXT_MESSAGE];
      nh_method *m = nh_method_parse(methods[i], err, sizeof err);
      if (!m) {
        fprintf(stderr, "bench: %s\n", err);
        continue;
      }
      nh_cost cost = {0};
      double t = nh_method_applies(m, &sys, err, sizeof err) < 0 ? -2 : time_method(&sys, m, h, steps, &cost);
      if (t < 0) {
        put_no_numbers(cols, t == -2 ? "n/a" : "failed", methods[i]);
        nh_method_free(m);
        continue;
      }
      if (i == 0) rk4_time = t;
      printf("%10.0f %8.2f %10.2f %10.2f %10.2f  %s\n", 1e9 * t / steps, t / rk4_time,
             (double)cost.newton_iterations / steps, (double)cost.rhs_evals / steps,
             (double)cost.jacobian_evals / steps, methods[i]);
      nh_method_free(m);
    }
  }
}

/* ---- the harness against hand-written kernels (bench/performance/floors.c) and GSL's drivers ------------ */

/* The floors' state from the harness's after init (q, v, λ, z; nh_rattle's force is the floor's own). */
static nh_floor_state floor_state_of(const nh_state *x) {
  nh_floor_state s = {.lambda = x->lambda[0], .z = x->z};
  memcpy(s.q, x->q, sizeof s.q);
  memcpy(s.v, x->v, sizeof s.v);
  return s;
}

enum { FLOOR_RK4, FLOOR_NEWMARK, FLOOR_RATTLE, FLOOR_HERGLOTZ2, FLOORS };
static const char *const floor_methods[FLOORS] = {"rk4", "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "nh_rattle",
                                                  "herglotz2"};

/* `steps` steps of floor f from s; the Newton iterations (0 for explicit methods), -1 on failure. */
static long run_floor(int f, nh_floor_state *s, double h, long steps) {
  switch (f) {
  case FLOOR_RK4: nh_floor_rk4(s, h, steps); return 0;
  case FLOOR_NEWMARK: return nh_floor_nh_newmark(s, 0.1, 0.1, h, steps);
  case FLOOR_RATTLE:
    nh_floor_rattle_init(s);
    nh_floor_nh_rattle(s, h, steps);
    return 0;
  default: return nh_floor_herglotz2(s, h, steps);
  }
}

/* |a − b| relative to b's size (at least 1); a NaN or infinite value on either side is infinitely
 * far (fmax would pass over a NaN: a floor run into NaN would show no difference). */
static double relative_difference(double a, double b) {
  const double d = fabs(a - b) / fmax(1, fabs(b));
  return isnan(d) ? INFINITY : d;
}

/* The largest difference between the harness's state and the floor's, relative to each
 * quantity's size (q, v; the multiplier and z where the method defines them). */
static double state_difference(const nh_state *x, const nh_floor_state *s, int f) {
  double d = 0;
  for (int i = 0; i < 5; i++)
    d = fmax(d, fmax(relative_difference(x->q[i], s->q[i]), relative_difference(x->v[i], s->v[i])));
  if (f != FLOOR_RK4) d = fmax(d, relative_difference(x->lambda[0], s->lambda));
  if (f == FLOOR_HERGLOTZ2) d = fmax(d, relative_difference(x->z, s->z));
  return d;
}

static int floor_ode(double t NH_UNUSED, const double y[], double dydt[], void *params NH_UNUSED) {
  memcpy(dydt, y + 5, 5 * sizeof(double));
  nh_floor_acceleration(y, y + 5, dydt + 5);
  return GSL_SUCCESS;
}

/* `steps` fixed steps of GSL's odeiv2 driver with stepper T on the floor's ODE; y (10: q, v) is
 * the start and receives the end. GSL's status, named on stderr when it is a failure. */
static int gsl_fixed_steps(const gsl_odeiv2_step_type *T, double *y, double h, long steps) {
  gsl_odeiv2_system ode = {floor_ode, NULL, 10, NULL};
  /* The driver's fixed-step apply still checks the error estimate against its control and fails
   * when the control would shrink h: a tolerance no step reaches keeps the steps fixed. */
  gsl_odeiv2_driver *d = gsl_odeiv2_driver_alloc_y_new(&ode, T, h, 1e300, 0);
  double t = 0;
  int st = gsl_odeiv2_driver_apply_fixed_step(d, &t, h, (unsigned long)steps, y);
  gsl_odeiv2_driver_free(d);
  if (st != GSL_SUCCESS) fprintf(stderr, "bench: GSL driver: %s\n", gsl_strerror(st));
  return st;
}

/* Seconds for gsl_fixed_steps (the driver's allocation included), -1 when it fails. */
static double time_gsl(const gsl_odeiv2_step_type *T, double *y, double h, long steps) {
  const double t0 = omp_get_wtime();
  const int st = gsl_fixed_steps(T, y, h, steps);
  const double elapsed = omp_get_wtime() - t0;
  return st == GSL_SUCCESS ? elapsed : -1;
}

/* The floor's start as the GSL drivers' y: q then v. */
static void gsl_start(const nh_state *x0, double y[10]) {
  memcpy(y, x0->q, 5 * sizeof(double));
  memcpy(y + 5, x0->v, 5 * sizeof(double));
}

/* The largest difference of a GSL driver's y from the rk4 floor's q and v, as state_difference. */
static double gsl_difference(const double y[10], const nh_floor_state *s) {
  double d = 0;
  for (int i = 0; i < 5; i++)
    d = fmax(d, fmax(relative_difference(y[i], s->q[i]), relative_difference(y[5 + i], s->v[i])));
  return d;
}

static void bench_floors(const char *spec NH_UNUSED) { /* the tables of one system */
  enum { REPS = 5, CHECK_STEPS = 20 };
  const double h = 0.2;
  const long steps = quick ? 2000 : 100000;
  nh_system sys;
  nh_system_init(&sys, nh_system_type_find("chaotic_particle"));
  nh_state x0;
  nh_system_default_state(&sys, &x0);
  printf("\nthe harness against hand-written kernels (bench/performance/floors.c), chaotic_particle, h = %g, %ld steps,\n"
         "median of %d; state difference and Newton iterations after %d steps from the same start\n"
         "(1 step on: the harness's state against the floor's one step later, the comparison's control;\n"
         "GSL's rows against the rk4 floor at h/2, whose two half steps GSL's rk4 returns for a step):\n",
         h, steps, REPS, CHECK_STEPS);
  static const bench_column cols[] = {{10, "nhbench ns"}, {10, "floor ns"},  {7, "ratio"},       {10, "newton/st"},
                                      {10, "floor n/st"}, {11, "1 step on"}, {11, "state diff"}, {0}};
  put_headings(cols);
  double rk4_ns = NAN, rk4_floor_ns = NAN; /* set by the rk4 row */
  for (int f = 0; f < FLOORS; f++) {
    char err[NH_TEXT_MESSAGE];
    nh_method *m = nh_method_parse(floor_methods[f], err, sizeof err);
    double th[REPS], tf[REPS];
    untimed(th, REPS), untimed(tf, REPS);
    nh_cost cost = {0};
    for (int r = -1; r < REPS; r++) { /* r = -1: a warm-up, not timed (the clock ramps up) */
      nh_state x = x0;
      nh_method_init(m, &sys, &x, h, &cost);
      double t0 = omp_get_wtime();
      nh_integrate(m, &sys, &x, steps, h, &cost, NULL);
      const double t_harness = omp_get_wtime() - t0;
      nh_floor_state s = floor_state_of(&x0);
      t0 = omp_get_wtime();
      run_floor(f, &s, h, steps);
      const double t_floor = omp_get_wtime() - t0;
      if (r >= 0) th[r] = t_harness, tf[r] = t_floor;
    }
    /* The same numbers: CHECK_STEPS steps of each from the same start (the chaotic system would
     * amplify round-off over the timed run). */
    nh_state x = x0;
    nh_cost check = {0};
    nh_method_init(m, &sys, &x, h, &check);
    check = (nh_cost){0};
    nh_integrate(m, &sys, &x, CHECK_STEPS, h, &check, NULL);
    nh_floor_state s = floor_state_of(&x0);
    const long floor_its = run_floor(f, &s, h, CHECK_STEPS);
    nh_floor_state one_on = floor_state_of(&x0);
    run_floor(f, &one_on, h, CHECK_STEPS + 1);
    const double ns = 1e9 * median(th, REPS) / steps, fns = 1e9 * median(tf, REPS) / steps;
    if (f == FLOOR_RK4) rk4_ns = ns, rk4_floor_ns = fns;
    printf("%10.0f %10.0f %7.2f %10.2f %10.2f %11.2e %11.2e  %s\n", ns, fns, ns / fns,
           (double)check.newton_iterations / CHECK_STEPS, (double)floor_its / CHECK_STEPS,
           state_difference(&x, &one_on, f), state_difference(&x, &s, f), floor_methods[f]);
    nh_method_free(m);
  }
  /* GSL's fixed-step drivers on the same ODE (the floor's right-hand side): rk4 does three RK4
   * steps per step for its error estimate (and returns the two half steps' result), rk8pd is the
   * reference solver of the studies. */
  const gsl_odeiv2_step_type *gsl_types[] = {gsl_odeiv2_step_rk4, gsl_odeiv2_step_rk8pd};
  const char *gsl_names[] = {"GSL odeiv2 rk4 driver", "GSL odeiv2 rk8pd driver"};
  /* Their end states after CHECK_STEPS steps against the rk4 floor at h/2 after 2 CHECK_STEPS
   * half steps (and one half step more, the control): GSL's rk4 driver computes those numbers,
   * rk8pd's difference is rk4's error at h/2. */
  nh_floor_state half = floor_state_of(&x0), half_on = floor_state_of(&x0);
  nh_floor_rk4(&half, h / 2, 2 * CHECK_STEPS);
  nh_floor_rk4(&half_on, h / 2, 2 * CHECK_STEPS + 1);
  for (int g = 0; g < 2; g++) {
    double tg[REPS], y[10];
    for (int r = 0; r < REPS; r++) {
      gsl_start(&x0, y);
      tg[r] = time_gsl(gsl_types[g], y, h, steps);
    }
    gsl_start(&x0, y);
    const int st = gsl_fixed_steps(gsl_types[g], y, h, CHECK_STEPS);
    const double ns = 1e9 * median(tg, REPS) / steps;
    const double on = st == GSL_SUCCESS ? gsl_difference(y, &half_on) : INFINITY,
                 at = st == GSL_SUCCESS ? gsl_difference(y, &half) : INFINITY;
    printf("%10.0f %10s %7s %10s %10s %11.2e %11.2e  %s (%.2f x nhbench's rk4, %.2f x the rk4 floor)\n", ns, "", "",
           "", "", on, at, gsl_names[g], ns / rk4_ns, ns / rk4_floor_ns);
  }
}

/* ---- ensembles in SIMD lockstep (bench/performance/lockstep.c) against the scalar floors --------------- */

/* The methods are the floors' (FLOOR_RK4, ...), each with its lockstep kernels. */
enum { LS_TRAJ = 64 };

/* The ensemble's starts: the floors' start (the harness's default state) with q and v moved by up
 * to 0.05, differently for each trajectory, and ẋ then put back on the constraint
 * ẋ + y1 ż1 + y2 ż2 = 0. */
static void lockstep_starts(nh_floor_state *s) {
  nh_system sys;
  nh_state x0;
  nh_system_init(&sys, nh_system_type_find("chaotic_particle"));
  nh_system_default_state(&sys, &x0);
  for (int j = 0; j < LS_TRAJ; j++) {
    s[j] = floor_state_of(&x0);
    for (int i = 0; i < 5; i++) {
      s[j].q[i] += 0.05 * sin(1.0 + j + 0.7 * i);
      s[j].v[i] += 0.05 * cos(2.0 + 1.3 * j + i);
    }
    nh_floor_onto_constraint(&s[j]);
  }
}

/* Every trajectory of s through the scalar floor of method m, one after the other, each
 * trajectory's Newton iterations in its; seconds, or -1 when a step fails. */
static double lockstep_scalar(int m, nh_floor_state *s, double h, long steps, long *its) {
  int failed = 0;
  const double t0 = omp_get_wtime();
  for (int j = 0; j < LS_TRAJ; j++) failed |= (its[j] = run_floor(m, &s[j], h, steps)) < 0;
  const double t = omp_get_wtime() - t0;
  return failed ? -1 : t;
}

/* Method m's lockstep kernel on one set of N lanes, as run_floor runs the floor (nh_newmark's β
 * and β' are floor_methods'); 0, or -1 where the floor fails on some lane. */
#define LOCKSTEP_RUN(N)                                                                                                \
  static int lockstep_run##N(int m, nh_lockstep##N *p, double h, long steps, long *its) {                              \
    switch (m) {                                                                                                       \
    case FLOOR_RK4:                                                                                                    \
      nh_lockstep##N##_rk4(p, h, steps);                                                                               \
      return 0;                                                                                                        \
    case FLOOR_NEWMARK:                                                                                                \
      return nh_lockstep##N##_nh_newmark(p, 0.1, 0.1, h, steps, its);                                                  \
    case FLOOR_RATTLE:                                                                                                 \
      nh_lockstep##N##_nh_rattle(p, h, steps);                                                                         \
      return 0;                                                                                                        \
    default:                                                                                                           \
      return nh_lockstep##N##_herglotz2(p, h, steps, its);                                                             \
    }                                                                                                                  \
  }
LOCKSTEP_RUN(1)
LOCKSTEP_RUN(4)
LOCKSTEP_RUN(8)

/* The same through the lockstep kernels, `lanes` (1, 4 or 8) trajectories at a time: packed
 * before the clock starts and unpacked after it stops (nh_rattle's carried force set before
 * packing, where run_floor sets it on the clock: one multiplier per trajectory, nothing against
 * its steps). */
static double lockstep_lanes(int m, int lanes, nh_floor_state *s, double h, long steps, long *its) {
  static union {
    nh_lockstep1 l1[LS_TRAJ];
    nh_lockstep4 l4[LS_TRAJ / 4];
    nh_lockstep8 l8[LS_TRAJ / 8];
  } p;
  const int sets = LS_TRAJ / lanes;
  int failed = 0;
  for (int j = 0; j < LS_TRAJ; j++) {
    its[j] = 0;
    if (m == FLOOR_RATTLE) nh_floor_rattle_init(&s[j]);
  }
  for (int k = 0; k < sets; k++) {
    if (lanes == 1) nh_lockstep1_pack(&p.l1[k], s + k);
    else if (lanes == 4) nh_lockstep4_pack(&p.l4[k], s + 4 * k);
    else nh_lockstep8_pack(&p.l8[k], s + 8 * k);
  }
  const double t0 = omp_get_wtime();
  for (int k = 0; k < sets; k++) {
    long *it = its + lanes * k;
    if (lanes == 1) failed |= lockstep_run1(m, &p.l1[k], h, steps, it) < 0;
    else if (lanes == 4) failed |= lockstep_run4(m, &p.l4[k], h, steps, it) < 0;
    else failed |= lockstep_run8(m, &p.l8[k], h, steps, it) < 0;
  }
  const double t = omp_get_wtime() - t0;
  for (int k = 0; k < sets; k++) {
    if (lanes == 1) nh_lockstep1_unpack(&p.l1[k], s + k);
    else if (lanes == 4) nh_lockstep4_unpack(&p.l4[k], s + 4 * k);
    else nh_lockstep8_unpack(&p.l8[k], s + 8 * k);
  }
  return failed ? -1 : t;
}

/* The largest gap between the final states of trajectory j of a and trajectory j + shift of b,
 * over all j: q, v, the multiplier λ (not rk4's), nh_rattle's carried force and herglotz2's z. */
static double ensemble_difference(int m, const nh_floor_state *a, const nh_floor_state *b, int shift) {
  double d = 0;
  for (int j = 0; j < LS_TRAJ; j++) {
    const nh_floor_state *x = &a[j], *y = &b[(j + shift) % LS_TRAJ];
    for (int i = 0; i < 5; i++)
      d = fmax(d, fmax(nh_lockstep_gap(x->q[i], y->q[i]), nh_lockstep_gap(x->v[i], y->v[i])));
    for (int i = 0; m == FLOOR_RATTLE && i < 5; i++) d = fmax(d, nh_lockstep_gap(x->force[i], y->force[i]));
    if (m != FLOOR_RK4) d = fmax(d, nh_lockstep_gap(x->lambda, y->lambda));
    if (m == FLOOR_HERGLOTZ2) d = fmax(d, nh_lockstep_gap(x->z, y->z));
  }
  return d;
}

/* The masked Newton iterations exercised: on the timed ensemble every herglotz2 step takes two
 * iterations (the predictor leaves no residual in y, so the constraint is linear in the remaining
 * unknowns and the first iteration lands on the solution), and no lane is ever frozen. Where
 * s0 = Jg·μ0 is small (ẏ1 ≈ −22 at y1 = 1, h = 0.2; s0 ≈ 0.04) round-off, amplified, keeps some
 * lanes iterating longer: trajectories there, a step at a time, counting the lane sets whose lanes
 * took different iterations in some step, with the final states and iterations against the
 * scalar floor's. */
static void lockstep_masking_check(double h) {
  enum { STEPS = 4 };
  static nh_floor_state start[LS_TRAJ], scalar[LS_TRAJ], locked[LS_TRAJ];
  for (int j = 0; j < LS_TRAJ; j++) {
    start[j] = (nh_floor_state){.q = {0.3, 1, 0.5, 0.2, -0.1}, .v = {[1] = -22.1 - 0.00625 * j, 0.2, 0.3, 0.1}};
    nh_floor_onto_constraint(&start[j]);
  }
  for (int lanes = 4; lanes <= 8; lanes += 4) {
    long its[LS_TRAJ], lane_its[LS_TRAJ], lo = LONG_MAX, hi = 0;
    int differed[LS_TRAJ / 4] = {0}, sets = 0, same = 1, failed = 0;
    memcpy(scalar, start, sizeof start);
    memcpy(locked, start, sizeof start);
    for (int k = 0; k < STEPS; k++) {
      failed |= lockstep_scalar(FLOOR_HERGLOTZ2, scalar, h, 1, its) < 0;
      failed |= lockstep_lanes(FLOOR_HERGLOTZ2, lanes, locked, h, 1, lane_its) < 0;
      same &= memcmp(its, lane_its, sizeof its) == 0;
      for (int j = 0; j < LS_TRAJ; j++) {
        lo = its[j] < lo ? its[j] : lo, hi = its[j] > hi ? its[j] : hi;
        differed[j / lanes] |= its[j] != its[j / lanes * lanes];
      }
    }
    for (int k = 0; k < LS_TRAJ / lanes; k++) sets += differed[k];
    if (failed) printf("masked Newton, %d lanes: failed\n", lanes);
    else
      printf("masked Newton, %d lanes: %d of %d lane sets had lanes taking different iterations (%ld to %ld per "
             "step) in %d steps near s0 = 0; state diff %.2e, iterations %s\n",
             lanes, sets, LS_TRAJ / lanes, lo, hi, STEPS, ensemble_difference(FLOOR_HERGLOTZ2, locked, scalar, 0),
             same ? "same" : "DIFFER");
  }
}

enum { LS_REPS = 5, LS_LANE_COUNTS = 3 };
static const int ls_lanes[LS_LANE_COUNTS] = {1, 4, 8};

/* The comparison's negative controls: the gap that one ulp of h makes to the scalar floor's final
 * states, and the gap between lane j and trajectory j + 1. */
typedef struct {
  double ulp, neighbour;
} ls_controls;

/* The table's rows of method m, from the starts, and its negative controls. */
static const bench_column lockstep_columns[] = {
    {10, "scalar ns"},  {11, "lockstep ns"}, {7, "ratio"},       {5, "lanes"},
    {11, "state diff"}, {10, "newton/st"},   {10, "iterations"}, {0}};

static void lockstep_rows(int m, const nh_floor_state *start, double h, long steps, ls_controls *control) {
  static nh_floor_state scalar[LS_TRAJ], locked[LS_LANE_COUNTS][LS_TRAJ], nudged[LS_TRAJ];
  long its[LS_TRAJ], lane_its[LS_LANE_COUNTS][LS_TRAJ], nudged_its[LS_TRAJ], total = 0;
  double ts[LS_REPS], tl[LS_LANE_COUNTS][LS_REPS], t;
  untimed(ts, LS_REPS), untimed(&tl[0][0], LS_LANE_COUNTS * LS_REPS);
  int failed = 0;
  for (int r = -1; r < LS_REPS; r++) { /* r = -1: a warm-up, not timed */
    memcpy(scalar, start, sizeof scalar);
    failed |= (t = lockstep_scalar(m, scalar, h, steps, its)) < 0;
    if (r >= 0) ts[r] = t;
    for (int c = 0; c < LS_LANE_COUNTS; c++) {
      memcpy(locked[c], start, sizeof locked[c]);
      failed |= (t = lockstep_lanes(m, ls_lanes[c], locked[c], h, steps, lane_its[c])) < 0;
      if (r >= 0) tl[c][r] = t;
    }
  }
  control->ulp = control->neighbour = NAN;
  if (failed) {
    put_no_numbers(lockstep_columns, "failed", floor_methods[m]);
    return;
  }
  const double per = 1e9 / ((double)LS_TRAJ * steps), sns = per * median(ts, LS_REPS);
  for (int j = 0; j < LS_TRAJ; j++) total += its[j];
  for (int c = 0; c < LS_LANE_COUNTS; c++) {
    const double lns = per * median(tl[c], LS_REPS);
    const int same = memcmp(its, lane_its[c], sizeof its) == 0, explicit = m == FLOOR_RK4 || m == FLOOR_RATTLE;
    const char *agree = explicit ? "-" : same ? "same" : "DIFFER"; /* the Newton iterations */
    printf("%10.1f %11.1f %7.2f %5d %11.2e %10.2f %10s  %s\n", sns, lns, sns / lns, ls_lanes[c],
           ensemble_difference(m, locked[c], scalar, 0), (double)total / ((double)LS_TRAJ * steps), agree,
           floor_methods[m]);
  }
  memcpy(nudged, start, sizeof nudged);
  lockstep_scalar(m, nudged, nextafter(h, INFINITY), steps, nudged_its);
  control->ulp = ensemble_difference(m, nudged, scalar, 0);
  control->neighbour = ensemble_difference(m, locked[LS_LANE_COUNTS - 1], scalar, 1);
}

/* The stretch item of issue 11: ensembles stepped L = 4 and 8 trajectories at a time in SIMD
 * lockstep, against the scalar floor stepping them one after the other, with the same final
 * states to the bit and the same Newton iterations per trajectory (tests/performance/test_bench.c checks
 * both). L = 1, one trajectory at a time through the lockstep code, separates lockstep's gain (the
 * L = 4 and 8 rows' ratios over its) from the code's own. The runs interleaved, so that machine
 * noise hits each alike. */
static void bench_lockstep(const char *spec NH_UNUSED) { /* the tables of one system */
  const double h = 0.2;
  const long steps = quick ? 100 : 20000;
  static nh_floor_state start[LS_TRAJ];
  ls_controls control[FLOORS];
  lockstep_starts(start);
  printf(
      "\nensembles in SIMD lockstep (bench/performance/lockstep.c, %s: the harness's lanes' instruction set) against\n"
      "the scalar floors, chaotic_particle, h = %g, %d trajectories x %ld steps, median of %d: ns per\n"
      "trajectory-step, ratio = scalar / lockstep (the throughput gain; lanes = 1: the lockstep code, one trajectory\n"
      "at a time), the largest difference between the final states (0: the same bits) and whether every trajectory\n"
      "took the floor's Newton iterations:\n",
      nh_isa_name(nh_lanes_isa()), h, LS_TRAJ, steps, LS_REPS);
  put_headings(lockstep_columns);
  for (int m = 0; m < FLOORS; m++) lockstep_rows(m, start, h, steps, &control[m]);
  for (int m = 0; m < FLOORS; m++)
    printf("control, %s: the scalar floor with h one ulp larger ends %.2e away; lockstep lane j against scalar "
           "trajectory j+1: %.2e\n",
           floor_methods[m], control[m].ulp, control[m].neighbour);
  lockstep_masking_check(h);
}

/* ---- the harness's own ensembles in lanes (core/lanes.h, issue 51) ------------------------------------ */

/* The harness on the lockstep table's starts, the way an ensemble steps them (the residual tracked
 * every step, integrators/evolve.h): in lanes when `lanes`, else one trajectory at a time; the final
 * states into x; seconds, or -1 when a run fails. */
static double harness_ensemble(const nh_method *m, const nh_system *sys, const nh_floor_state *start, double h,
                               long steps, int lanes, nh_state *x) {
  nh_state x0[LS_TRAJ];
  for (int j = 0; j < LS_TRAJ; j++) {
    x0[j] = (nh_state){0};
    memcpy(x0[j].q, start[j].q, sizeof start[j].q);
    memcpy(x0[j].v, start[j].v, sizeof start[j].v);
  }
  int failed = 0;
  const double t0 = omp_get_wtime();
  for (int j = 0; j < LS_TRAJ; j += lanes ? NH_LANES : 1) {
    if (lanes) {
      static nh_evolve_lanes e;
      nh_evolve_lanes_start(&e, m, sys, &x0[j], NH_LANES, h, 0);
      nh_evolve_lanes_init(&e);
      failed |= nh_evolve_lanes_steps(&e, steps, 1) != NH_LANES;
      for (int l = 0; l < NH_LANES; l++) nh_evolve_lanes_state(&e, l, &x[j + l], NULL, NULL);
      continue;
    }
    nh_evolve e;
    double residual = 0;
    nh_evolve_start(&e, m, sys, &x0[j], h, 0);
    failed |= nh_evolve_init(&e) != NH_STEP_OK;
    failed |= nh_evolve_steps(&e, steps, nh_evolve_track_residual, &residual) != NH_STEP_OK;
    x[j] = *e.x;
  }
  const double t = omp_get_wtime() - t0;
  return failed ? -1 : t;
}

/* The scalar floor of method f on every start, one after the other; seconds, or -1. */
static double floor_ensemble(int f, const nh_floor_state *start, double h, long steps) {
  static nh_floor_state s[LS_TRAJ];
  memcpy(s, start, sizeof s);
  int failed = 0;
  const double t0 = omp_get_wtime();
  for (int j = 0; j < LS_TRAJ; j++) failed |= run_floor(f, &s[j], h, steps) < 0;
  const double t = omp_get_wtime() - t0;
  return failed ? -1 : t;
}

/* A timing v (−1: the run failed) into repetition r's slot (r = −1: the warm-up, kept nowhere);
 * 1 when it failed. */
static int timing(double v, double *t, int r) {
  if (r >= 0) t[r] = v;
  return v < 0;
}

static const bench_column lanes_columns[] = {
    {9, "lanes ns"},     {10, "scalar ns"},      {9, "floor ns"},    {11, "lockstep ns"},
    {11, "floor/lanes"}, {14, "lanes/lockstep"}, {11, "state diff"}, {0}};

/* One method's row: the harness in lanes (if the method has them), the scalar harness, its scalar
 * floor and its lockstep floor at 8 lanes, interleaved over the repetitions. */
static void lanes_row(int f, const nh_floor_state *start, double h, long steps) {
  nh_system sys;
  nh_system_init(&sys, nh_system_type_find("chaotic_particle"));
  char err[256];
  nh_method *m = nh_method_parse(floor_methods[f], err, sizeof err);
  const int lanes = m && nh_method_has_lanes(m, &sys);
  static nh_state xs[LS_TRAJ], xl[LS_TRAJ];
  static nh_floor_state locked[LS_TRAJ];
  long its[LS_TRAJ];
  double t[4][LS_REPS];
  untimed(&t[0][0], 4 * LS_REPS);
  int failed = !m;
  for (int r = -1; m && r < LS_REPS; r++) { /* r = -1: a warm-up, not timed */
    if (lanes) failed |= timing(harness_ensemble(m, &sys, start, h, steps, 1, xl), t[0], r);
    failed |= timing(harness_ensemble(m, &sys, start, h, steps, 0, xs), t[1], r);
    failed |= timing(floor_ensemble(f, start, h, steps), t[2], r);
    memcpy(locked, start, sizeof locked);
    failed |= timing(lockstep_lanes(f, 8, locked, h, steps, its), t[3], r);
  }
  nh_method_free(m);
  if (failed) {
    put_no_numbers(lanes_columns, "failed", floor_methods[f]);
    return;
  }
  const double per = 1e9 / ((double)LS_TRAJ * steps);
  double ns[4], diff = 0;
  for (int c = 0; c < 4; c++) ns[c] = per * median(t[c], LS_REPS);
  for (int j = 0; lanes && j < LS_TRAJ; j++)
    for (int i = 0; i < 5; i++)
      diff = fmax(diff, fmax(nh_lockstep_gap(xl[j].q[i], xs[j].q[i]), nh_lockstep_gap(xl[j].v[i], xs[j].v[i])));
  char cell[3][16];
  snprintf(cell[0], sizeof cell[0], lanes ? "%.1f" : "-", ns[0]);
  snprintf(cell[1], sizeof cell[1], lanes ? "%.2f" : "-", ns[2] / ns[0]);
  snprintf(cell[2], sizeof cell[2], lanes ? "%.2f" : "-", ns[0] / ns[3]);
  printf("%9s %10.1f %9.1f %11.1f %11s %14s %11s  %s\n", cell[0], ns[1], ns[2], ns[3], cell[1], cell[2],
         lanes ? (diff == 0 ? "0" : "DIFFER") : "-", floor_methods[f]);
}

/* The harness's own ensembles stepped in lanes (issue 51), per trajectory-step, against the scalar
 * harness, the scalar floors and the lockstep floors, on the lockstep table's 64 starts. */
static void bench_lanes(const char *spec NH_UNUSED) {
  const double h = 0.2;
  const long steps = quick ? 100 : 20000;
  static nh_floor_state start[LS_TRAJ];
  lockstep_starts(start);
  printf(
      "\nthe harness's ensembles in lanes (%d lanes, %s) against the scalar harness and the floors, chaotic_particle,\n"
      "h = %g, %d trajectories x %ld steps, median of %d: ns per trajectory-step (the harness as an ensemble steps:\n"
      "the constraint residual tracked every step; the floors track none), floor/lanes = the scalar floor's time\n"
      "over the lanes' (target >= 2.5 for rk4 and nh_newmark), lanes/lockstep = the lanes' time over the lockstep\n"
      "floor's at 8 lanes and the same instruction set (target <= 1.3), state diff: lanes against the scalar harness\n"
      "(0: the same bits); '-': the method has no lanes yet (the scalar path runs)\n",
      NH_LANES, nh_isa_name(nh_lanes_isa()), h, LS_TRAJ, steps, LS_REPS);
  put_headings(lanes_columns);
  for (int f = 0; f < FLOORS; f++) lanes_row(f, start, h, steps);
}

/* Standard error sent to /dev/null until quiet_end (the notes and progress lines of the runs the
 * tables time: the tables are the output); a handle for quiet_end. */
typedef struct {
  int saved, null;
} quiet_stderr;

static quiet_stderr quiet_begin(void) {
  fflush(stderr);
  quiet_stderr q = {dup(STDERR_FILENO), open("/dev/null", O_WRONLY)};
  if (q.saved >= 0 && q.null >= 0) dup2(q.null, STDERR_FILENO);
  return q;
}

static void quiet_end(quiet_stderr q) {
  fflush(stderr);
  if (q.saved >= 0 && q.null >= 0) dup2(q.saved, STDERR_FILENO);
  if (q.saved >= 0) close(q.saved);
  if (q.null >= 0) close(q.null);
}

/* nh_study_load with the spec's notes (grid points skipped, ...) held back: the bench loads the
 * same spec several times and its tables are the output. 0, or -1 with the error printed. */
static int load_spec(const char *spec, const char **ov, int nov, nh_study *st) {
  char err[NH_TEXT_MESSAGE];
  const quiet_stderr q = quiet_begin();
  const int rc = nh_study_load(spec, ov, nov, st, err, sizeof err);
  quiet_end(q);
  if (rc < 0) {
    fprintf(stderr, "bench: %s\n", err);
    nh_study_free(st);
    return -1;
  }
  return 0;
}

/* One run of st's ensemble on `threads` threads: its wall time, or NaN with the reason on stderr. */
static double ensemble_seconds(const nh_study *st, int threads) {
  nh_ensemble_result r;
  char err[NH_TEXT_MESSAGE];
  omp_set_num_threads(threads);
  const double t0 = omp_get_wtime();
  const int rc = nh_run_ensemble(st, &r, err, sizeof err);
  const double t = omp_get_wtime() - t0;
  nh_ensemble_result_free(&r);
  if (rc < 0) return fprintf(stderr, "bench: %s\n", err), NAN;
  return t;
}

/* ---- the main job at the paper's scale, in lanes and one trajectory at a time ---------------------- */

/* One run of st's ensemble on 2 threads with lanes on or off (NHBENCH_LANES, read by
 * nh_sampled_runs_go): its wall time into *seconds and its result into r; 0, or -1 with the reason.
 * The caller's NHBENCH_LANES and thread count are as they were afterwards. */
static int study_run(const nh_study *st, int lanes, nh_ensemble_result *r, double *seconds) {
  char err[NH_TEXT_MESSAGE], *was = getenv("NHBENCH_LANES");
  const int threads = omp_get_max_threads();
  if (was && !(was = strdup(was))) return -1;
  setenv("NHBENCH_LANES", lanes ? "on" : "off", 1);
  omp_set_num_threads(2);
  const quiet_stderr q = quiet_begin(); /* its progress lines */
  const double t0 = omp_get_wtime();
  const int rc = nh_run_ensemble(st, r, err, sizeof err);
  *seconds = omp_get_wtime() - t0;
  quiet_end(q);
  if (was) setenv("NHBENCH_LANES", was, 1);
  else unsetenv("NHBENCH_LANES");
  free(was);
  omp_set_num_threads(threads);
  if (rc != 0) fprintf(stderr, "bench: %s\n", err);
  return rc;
}

/* Whether two runs of one ensemble gave the same bits: every method's E(t) − E0 at every sample of
 * every initial condition, the largest residuals, the statuses and the summed costs. */
static int same_ensembles(const nh_study *st, const nh_ensemble_result *a, const nh_ensemble_result *b) {
  const size_t runs = (size_t)st->nmethods * (size_t)st->count;
  return memcmp(a->dE, b->dE, sizeof(double) * runs * (size_t)st->nsamples) == 0 &&
         memcmp(a->max_residual, b->max_residual, sizeof(double) * runs) == 0 &&
         memcmp(a->status, b->status, sizeof(int) * runs) == 0 &&
         memcmp(a->cost, b->cost, sizeof(nh_cost) * (size_t)st->nmethods) == 0;
}

/* make study-chaotic FULL=1's ensemble (its --set lines, Makefile CHAOTIC_SET) on 2 threads, in lanes
 * against one trajectory at a time: the study part of the main job, without the results file and
 * the figures. */
static void bench_study(const char *spec) {
  nh_study st;
  const char *full[] = {"ensemble.count=100", "T=10000", "sample_every=25"};
  const char *small[] = {"ensemble.count=16", "T=200", "sample_every=25"};
  if (load_spec(spec, quick ? small : full, 3, &st) != 0) return;
  /* One trajectory at a time (0), in lanes (1), in lanes, one at a time: a machine whose speed drifts
   * through the run weighs on both alike. Each second run is compared with the first of its kind. */
  static const int kind[4] = {0, 1, 1, 0};
  nh_ensemble_result r[2] = {0};
  double t[2] = {0};
  int failed = 0, same = 1;
  for (int i = 0; i < 4 && !failed; i++) {
    nh_ensemble_result again = {0}, *out = i < 2 ? &r[kind[i]] : &again;
    double seconds = 0;
    failed = study_run(&st, kind[i], out, &seconds) != 0;
    t[kind[i]] += seconds / 2;
    if (!failed && out == &again) same &= same_ensembles(&st, &r[kind[i]], &again);
    nh_ensemble_result_free(&again);
  }
  if (!failed)
    printf("\n%s at %s (%d methods x %d ICs, T = %g, 2 threads, each way twice): one trajectory at a time %.2f s, in "
           "lanes %.2f s, speed-up %.2f (target >= 2.5); results %s\n",
           spec, quick ? "a small scale (--quick)" : "make study-chaotic FULL=1's scale", st.nmethods, st.count, st.T,
           t[0], t[1], t[0] / t[1], same && same_ensembles(&st, &r[0], &r[1]) ? "the same bits" : "DIFFER");
  nh_ensemble_result_free(&r[0]);
  nh_ensemble_result_free(&r[1]);
  nh_study_free(&st);
}

/* Wall time of the default chaotic ensemble with 1 and 2 threads: the parallel speed-up. */
static void bench_ensemble(const char *spec) {
  nh_study st;
  const char *ov[] = {"ensemble.count=8", quick ? "T=20" : "T=400"};
  if (load_spec(spec, ov, 2, &st) != 0) return;
  const double one = ensemble_seconds(&st, 1), two = ensemble_seconds(&st, 2);
  printf("\nensemble %s (8 ICs, T = %g, %d methods): 1 thread %.2f s, 2 threads %.2f s, speed-up %.2f\n",
         spec, st.T, st.nmethods, one, two, one / two);
  nh_study_free(&st);
}

/* ---- your own system (issue 50): the built-in chaotic particle against the same system written as
 * text (studies/systems/chaotic_particle.sys, through studies/examples/own_system.cfg) -------------- */

/* The example spec that includes the definition: beside the ensemble spec (studies/, as make bench
 * and the tests name it), else studies/ below the working directory. 0, or -1 if neither is there. */
static int own_spec_path(const char *spec, char *path, size_t len) {
  const char *slash = strrchr(spec, '/');
  snprintf(path, len, "%.*sexamples/own_system.cfg", slash ? (int)(slash - spec + 1) : 0, spec);
  if (access(path, R_OK) == 0) return 0;
  snprintf(path, len, "studies/examples/own_system.cfg");
  return access(path, R_OK) == 0 ? 0 : -1;
}

/* The spec loaded with no C compiler ($NHBENCH_CC = none while it loads, then as it was): its
 * system on the expression interpreter. */
static int load_interpreted(const char *path, nh_study *st) {
  const char *was = getenv("NHBENCH_CC");
  char saved[NH_TEXT_PATH];
  if (was) snprintf(saved, sizeof saved, "%s", was);
  setenv("NHBENCH_CC", "none", 1);
  const int rc = load_spec(path, NULL, 0, st);
  if (was)
    setenv("NHBENCH_CC", saved, 1);
  else
    unsetenv("NHBENCH_CC");
  return rc;
}

/* One timed run of m on sys from its default state (init untimed); its seconds, -1 on failure. */
static double own_run(const nh_method *m, const nh_system *sys, double h, long steps) {
  nh_cost cost = {0};
  return time_method(sys, m, h, steps, &cost);
}

/* The largest relative difference of the states of two systems after `steps` steps of m from
 * each one's default state (q, v, λ, z); infinite when a run fails. */
static double own_difference(const nh_method *m, const nh_system *a, const nh_system *b, double h, long steps) {
  nh_state x[2];
  const nh_system *sys[2] = {a, b};
  for (int s = 0; s < 2; s++) {
    nh_cost cost = {0};
    nh_system_default_state(sys[s], &x[s]);
    if (nh_method_init(m, sys[s], &x[s], h, &cost) != NH_STEP_OK ||
        nh_integrate(m, sys[s], &x[s], steps, h, &cost, NULL) != NH_STEP_OK)
      return INFINITY;
  }
  double d = fmax(relative_difference(x[0].lambda[0], x[1].lambda[0]), relative_difference(x[0].z, x[1].z));
  for (int i = 0; i < a->n; i++)
    d = fmax(d, fmax(relative_difference(x[0].q[i], x[1].q[i]), relative_difference(x[0].v[i], x[1].v[i])));
  return d;
}

/* Issue 50's target, side by side in one run: ns per step of the built-in chaotic_particle, of the
 * same system defined in the spec (generated C, compiled once) and of the same definition on the
 * expression interpreter (a tenth of the steps), through nh_integrate, median of 5 after a
 * warm-up, the three interleaved so that machine noise hits each alike; "ratio" = defined /
 * built-in; the state differences after 20 steps from the same start (round-off: the same numbers). */
static void bench_own(const char *spec) {
  enum { REPS = 5, CHECK_STEPS = 20 };
  static const char *const own_methods[] = {"rk4", "nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", "nh_rattle",
                                            "herglotz2"};
  const double h = 0.2;
  const long steps = quick ? 2000 : 100000, isteps = steps / 10;
  char path[NH_TEXT_PATH];
  if (own_spec_path(spec, path, sizeof path) < 0) {
    fprintf(stderr, "bench: own system: no studies/examples/own_system.cfg beside %s or below the working directory\n",
            spec);
    return;
  }
  nh_study own = {0}, interp = {0};
  if (load_spec(path, NULL, 0, &own) != 0) return;
  if (!own.defined) {
    fprintf(stderr, "bench: own system: %s defines no system of its own\n", path);
    nh_study_free(&own);
    return;
  }
  const int interp_loaded = load_interpreted(path, &interp) == 0, have_interp = interp_loaded && interp.defined;
  nh_system builtin;
  nh_system_init(&builtin, nh_system_type_find("chaotic_particle"));
  printf("\nown system: chaotic_particle built in against %s defined in %s (%s), h = %g, %ld steps\n"
         "(interpreted: %ld), median of %d; ratio = defined / built-in; defined system: %s; state diff: the largest\n"
         "relative difference after %d steps from the same start, defined against built-in and interpreted against "
         "compiled:\n",
         nh_system_name(&own.sys), path, own.nspec_inputs > 1 ? own.spec_inputs[1] : "in the spec", h, steps, isteps,
         REPS, nh_defined_system_compiled(own.defined) ? "compiled (generated C)" : "interpreted (no C compiler)",
         CHECK_STEPS);
  static const bench_column cols[] = {{11, "built-in ns"}, {10, "defined ns"}, {7, "ratio"},        {9, "interp ns"},
                                      {8, "int/def"},      {10, "state diff"}, {11, "interp diff"}, {0}};
  put_headings(cols);
  for (size_t i = 0; i < sizeof own_methods / sizeof *own_methods; i++) {
    char err[NH_TEXT_MESSAGE];
    nh_method *m = nh_method_parse(own_methods[i], err, sizeof err);
    if (!m) {
      fprintf(stderr, "bench: %s\n", err);
      continue;
    }
    if (nh_method_applies(m, &builtin, err, sizeof err) < 0 || nh_method_applies(m, &own.sys, err, sizeof err) < 0) {
      put_no_numbers(cols, "n/a", own_methods[i]);
      nh_method_free(m);
      continue;
    }
    double tb[REPS], td[REPS], ti[REPS];
    untimed(tb, REPS), untimed(td, REPS), untimed(ti, REPS);
    int failed = 0;
    for (int r = -1; r < REPS; r++) { /* r = -1: a warm-up, not timed */
      const double b = own_run(m, &builtin, h, steps), d = own_run(m, &own.sys, h, steps),
                   in = have_interp ? own_run(m, &interp.sys, h, isteps) : NAN;
      failed |= b < 0 || d < 0 || in < 0;
      if (r >= 0) tb[r] = b, td[r] = d, ti[r] = in;
    }
    if (failed) {
      put_no_numbers(cols, "failed", own_methods[i]);
      nh_method_free(m);
      continue;
    }
    const double bns = 1e9 * median(tb, REPS) / steps, dns = 1e9 * median(td, REPS) / steps;
    const double ins = have_interp ? 1e9 * median(ti, REPS) / isteps : NAN;
    printf("%11.0f %10.0f %7.2f %9.0f %8.1f %10.2e %11.2e  %s\n", bns, dns, dns / bns, ins, ins / dns,
           own_difference(m, &own.sys, &builtin, h, CHECK_STEPS),
           have_interp ? own_difference(m, &interp.sys, &own.sys, h, CHECK_STEPS) : NAN, own_methods[i]);
    nh_method_free(m);
  }
  nh_study_free(&own);
  if (interp_loaded) nh_study_free(&interp);
}

/* The stepping loop with and without observables (issue 8: "sampling costs nothing when no
 * observable is asked for"): the same run through nh_integrate, through the sampled-run loop
 * with no observables, and with observables sampled every K steps. Median of 5 repetitions each,
 * interleaved so that machine noise hits every variant alike. Each row also shows the rows of
 * observables its run wrote and its E − E0 at the end, so that the variants are seen to do the
 * same run.
 *
 * sampled_run_time: one run of st's method over st->nsteps steps from st->x0, sampling the
 * observables `names` every K steps (into a run's sample table, allocated before the clock starts);
 * its time, the rows written (0 without observables) into *samples and E − E0 at the end into *dE.
 * NaN if there is no memory for the table. */
static double sampled_run_time(const nh_study *st, double h, const char *const *names, int nobs, int K, int *samples,
                               double *dE) {
  nh_study s = *st;
  const nh_observable *obs[4];
  for (int o = 0; o < nobs; o++) obs[o] = nh_observable_find(names[o]);
  s.obs = obs, s.nobs = nobs;
  nh_samples layout;
  if (nh_samples_init(&layout, &s, 1, (int)(s.nsteps / K + 1)) != 0) return nh_samples_free(&layout), NAN;
  nh_sampled_run run = {.st = &s, .m = s.methods[0], .h = h, .nsteps = s.nsteps, .K = K, .x0 = s.x0,
                        .layout = nobs ? &layout : NULL, .values = layout.values};
  double t0 = omp_get_wtime();
  nh_sampled_run_go(&run);
  double t = omp_get_wtime() - t0;
  *samples = nobs ? run.reached : 0;
  *dE = nh_energy(&s.sys, run.final.q, run.final.v) - nh_energy(&s.sys, s.x0.q, s.x0.v);
  nh_samples_free(&layout);
  return t;
}

static void bench_sampling(const char *spec NH_UNUSED) { /* the tables of one system */
  nh_study st = {0};
  char err[NH_TEXT_MESSAGE];
  nh_system_init(&st.sys, nh_system_type_find("chaotic_particle"));
  nh_system_default_state(&st.sys, &st.x0);
  nh_method *m = nh_method_parse("nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)", err, sizeof err);
  st.methods = &m, st.nmethods = 1, st.nsteps = quick ? 1000 : 50000, st.reference_tol = 1e-13;
  const double h = 0.2;
  const char *const energy[] = {"energy_error"};
  const char *const four[] = {"energy_error", "constraint_residual", "q", "multiplier"};
  enum { VARIANTS = 5, REPS = 5 };
  const char *label[VARIANTS] = {"nh_integrate (no sampling)", "sampled run, no observables, K = 10",
                                 "energy_error every step", "energy_error every 10 steps",
                                 "4 observables every step"};
  double t[VARIANTS][REPS], dE[VARIANTS];
  int samples[VARIANTS];
  for (int r = 0; r < REPS; r++) {
    nh_state x = st.x0;
    nh_cost cost = {0};
    double t0 = omp_get_wtime();
    nh_integrate(m, &st.sys, &x, st.nsteps, h, &cost, NULL);
    t[0][r] = omp_get_wtime() - t0;
    samples[0] = 0, dE[0] = nh_energy(&st.sys, x.q, x.v) - nh_energy(&st.sys, st.x0.q, st.x0.v);
    t[1][r] = sampled_run_time(&st, h, energy, 0, 10, &samples[1], &dE[1]);
    t[2][r] = sampled_run_time(&st, h, energy, 1, 1, &samples[2], &dE[2]);
    t[3][r] = sampled_run_time(&st, h, energy, 1, 10, &samples[3], &dE[3]);
    t[4][r] = sampled_run_time(&st, h, four, 4, 1, &samples[4], &dE[4]);
  }
  printf("\nobservables sampling, %s on chaotic_particle, h = %g, %ld steps, median of %d "
         "(samples: rows of observables written; dE: E - E0 at the end, the same for every variant):\n",
         "nh_newmark(0.1,0.1,1/2)", h, st.nsteps, REPS);
  for (int v = 0; v < VARIANTS; v++) qsort(t[v], REPS, sizeof(double), cmp_double);
  for (int v = 0; v < VARIANTS; v++)
    printf("%10.0f ns/step %6.3f x %6d samples  dE %-24.17g  %s\n", 1e9 * t[v][REPS / 2] / st.nsteps,
           t[v][REPS / 2] / t[0][REPS / 2], samples[v], dE[v], label[v]);
  nh_method_free(m);
}

/* ---- small dense LU: the harness's own (core/linalg.c) against GSL's ------------------------ */

/* GSL's partial-pivoting LU solve of the m×m row-major J x = b in place, the library the harness
 * used before issue 11 measured this table. */
static int lu_solve_gsl(int m, double *J, double *b) {
  size_t pd[NH_LU_MAX_DIM];
  gsl_permutation perm = {(size_t)m, pd};
  gsl_matrix_view Jv = gsl_matrix_view_array(J, (size_t)m, (size_t)m);
  gsl_vector_view bv = gsl_vector_view_array(b, (size_t)m);
  int sgn;
  if (gsl_linalg_LU_decomp(&Jv.matrix, &perm, &sgn)) return -1;
  return gsl_linalg_LU_svx(&Jv.matrix, &perm, &bv.vector) ? -1 : 0;
}

/* Median seconds per solve over REPS rounds of `count` systems (copies of A, B solved in place);
 * NaN if a solve failed (a singular matrix: no figure to show). */
static double time_solves(int (*solve)(int, double *, double *), int m, int count, const double *A, const double *B,
                          double *X) {
  enum { REPS = 7 };
  double t[REPS], *J = malloc(sizeof(double) * (size_t)(m * m));
  int failed = 0;
  for (int r = 0; r < REPS; r++) {
    double t0 = omp_get_wtime();
    for (int c = 0; c < count; c++) {
      memcpy(J, A + (size_t)c * m * m, sizeof(double) * (size_t)(m * m));
      memcpy(X + (size_t)c * m, B + (size_t)c * m, sizeof(double) * (size_t)m);
      failed |= solve(m, J, X + (size_t)c * m) != 0;
    }
    t[r] = (omp_get_wtime() - t0) / count;
  }
  free(J);
  if (failed) return NAN;
  qsort(t, REPS, sizeof(double), cmp_double);
  return t[REPS / 2];
}

/* The largest backward error ‖A x − b‖∞ / (‖A‖∞ ‖x‖∞ + ‖b‖∞) over the count systems: of the order
 * of the unit round-off when x solves its system (agreement between two solvers alone would not
 * show it; an all-zero b would make it 0/0, NaN). */
static double lu_backward_error(int m, int count, const double *A, const double *B, const double *X) {
  double worst = 0;
  for (int c = 0; c < count; c++) {
    const double *a = A + (size_t)c * m * m, *b = B + (size_t)c * m, *x = X + (size_t)c * m;
    double r = 0, na = 0, nx = 0, nb = 0;
    for (int i = 0; i < m; i++) {
      double ri = -b[i], row = 0;
      for (int j = 0; j < m; j++) ri += a[i * m + j] * x[j], row += fabs(a[i * m + j]);
      r = fmax(r, fabs(ri)), na = fmax(na, row), nx = fmax(nx, fabs(x[i])), nb = fmax(nb, fabs(b[i]));
    }
    const double e = r / (na * nx + nb);
    worst = isnan(e) || e > worst ? e : worst;
  }
  return worst;
}

static void bench_lu(const char *spec NH_UNUSED) { /* the tables of one system */
  const int COUNT = quick ? 50 : 2000;
  static const int sizes[] = {2, 4, 7, 8, 12, 16, NH_LU_MAX_DIM};
  printf("\nsmall dense LU solves (random matrices: entries in [-0.5, 0.5] plus m on the diagonal), median of 7;\n"
         "nhb backward: the largest |A x - b| / (|A| |x| + |b|) of nhbench's solutions (max norms):\n");
  printf("%4s %12s %12s %8s %14s %14s\n", "m", "GSL ns", "nhbench ns", "GSL/nhb", "max rel diff", "nhb backward");
  unsigned long long seed = 12345;
  for (size_t s = 0; s < sizeof sizes / sizeof *sizes; s++) {
    int m = sizes[s];
    double *A = malloc(sizeof(double) * (size_t)(COUNT * m * m)), *B = malloc(sizeof(double) * (size_t)(COUNT * m));
    double *X1 = malloc(sizeof(double) * (size_t)(COUNT * m)), *X2 = malloc(sizeof(double) * (size_t)(COUNT * m));
    for (long i = 0; i < (long)COUNT * m * m; i++) {
      seed = seed * 6364136223846793005ULL + 1442695040888963407ULL; /* Knuth's MMIX LCG */
      A[i] = (double)(seed >> 11) / 9007199254740992.0 - 0.5 + ((i % (m * m)) % (m + 1) == 0 ? m : 0);
    }
    for (long i = 0; i < (long)COUNT * m; i++) B[i] = sin((double)i);
    double tg = time_solves(lu_solve_gsl, m, COUNT, A, B, X1), th = time_solves(nh_lu_solve, m, COUNT, A, B, X2);
    double diff = 0;
    for (long i = 0; i < (long)COUNT * m; i++) diff = fmax(diff, fabs(X1[i] - X2[i]) / fmax(fabs(X1[i]), 1e-300));
    printf("%4d %12.0f %12.0f %8.2f %14.2e %14.2e\n", m, 1e9 * tg, 1e9 * th, tg / th, diff,
           lu_backward_error(m, COUNT, A, B, X2));
    free(A), free(B), free(X1), free(X2);
  }
}

static const char *self; /* argv[0]: the memory benchmark runs its ensembles in fresh copies */

/* Child mode (argv: --memory-child SPEC JOURNAL|- T): the ensemble of SPEC with 100 ICs, every
 * step sampled, T as given, streamed through JOURNAL or kept in memory ("-"). A fresh process, not
 * a fork: OpenMP's thread pool does not survive fork(). */
static int memory_child(char **argv) {
  nh_study st;
  nh_ensemble_result r;
  char err[NH_TEXT_MESSAGE], t[NH_TEXT_NAME];
  snprintf(t, sizeof t, "T=%s", argv[4]);
  const char *ov[] = {"ensemble.count=100", t, "sample_every=1"};
  if (load_spec(argv[2], ov, 3, &st) != 0) return 1;
  const int stream = strcmp(argv[3], "-") != 0;
  st.checkpoint = stream ? argv[3] : NULL, st.checkpoint_key = "bench", st.resume = 0;
  int rc = nh_run_ensemble(&st, &r, err, sizeof err);
  nh_ensemble_result_free(&r);
  nh_study_free(&st);
  if (stream) unlink(argv[3]);
  return rc < 0 ? 1 : 0;
}

/* Peak resident memory (MiB) of a child running memory_child; -1 if it failed. */
static double child_peak_mib(const char *spec, const char *journal, const char *T) {
  fflush(NULL);
  pid_t pid = fork();
  if (pid == 0) {
    execl(self, self, "--memory-child", spec, journal ? journal : "-", T, (char *)NULL);
    fprintf(stderr, "nhbench_bench: memory: cannot run %s: %s\n", self, strerror(errno));
    _exit(127);
  }
  int status = 0;
  struct rusage ru = {0}; /* both filled by wait4 */
  if (pid < 0 || wait4(pid, &status, 0, &ru) != pid || !WIFEXITED(status) || WEXITSTATUS(status)) return -1;
  return (double)ru.ru_maxrss / 1024; /* kilobytes on Linux */
}

/* "  123.4 MiB WHAT", or "(failed)" in the figure's place. */
static void memory_row(double mib, const char *what) {
  if (mib < 0) printf("%14s %s\n", "(failed)", what);
  else printf("%10.1f MiB %s\n", mib, what);
}

/* Memory of a long ensemble sampled at every step (issue 12): the chaotic ensemble's methods,
 * 100 initial conditions, sample_every = 1, at a tenth of the paper's T (T = 1000; --quick: 20),
 * kept in memory against streamed through its journal, each in a child process. */
static void bench_memory(const char *spec) {
  nh_study st;
  char journal[NH_TEXT_PATH];
  const char *T = quick ? "20" : "1000";
  char t[NH_TEXT_NAME];
  snprintf(t, sizeof t, "T=%s", T);
  const char *ov[] = {"ensemble.count=100", t, "sample_every=1"};
  if (load_spec(spec, ov, 3, &st) != 0) return;
  snprintf(journal, sizeof journal, "/tmp/nhbench-bench-%d.journal", (int)getpid());
  const double in_memory = child_peak_mib(spec, NULL, T), streamed = child_peak_mib(spec, journal, T);
  char kept[NH_TEXT_MESSAGE];
  snprintf(kept, sizeof kept, "kept in memory (library, no journal; its sampled arrays alone: %.1f MiB)",
           nh_study_memory_estimate(&st) / (1 << 20));
  printf("\nmemory, ensemble %s (%d methods, %d ICs, T = %g, every step: %d samples), peak resident:\n", spec,
         st.nmethods, st.count, st.T, st.nsamples);
  memory_row(in_memory, kept);
  memory_row(streamed, "streamed through the journal (as nhbench run)");
  nh_study_free(&st);
}

/* The tables, in the order printed; --only picks some by name. */
static const struct {
  const char *name, *doc;
  void (*run)(const char *spec);
} sections[] = {
    {"lu", "small dense LU solves, nhbench's against GSL's", bench_lu},
    {"steps", "ns/step and evaluations per step of every method on four systems", bench_steps},
    {"floors", "the harness against hand-written kernels (bench/performance/floors.c) and GSL's odeiv2 drivers",
     bench_floors},
    {"own", "chaotic_particle built in against the same system written in a spec (studies/examples/own_system.cfg)",
     bench_own},
    {"lockstep", "ensembles in SIMD lockstep, 4 and 8 lanes: the four floors' methods against their floors",
     bench_lockstep},
    {"lanes", "the harness's ensembles in lanes against the scalar harness and the floors", bench_lanes},
    {"sampling", "the cost of sampling observables along a run", bench_sampling},
    {"study", "the ensemble SPEC at make study-chaotic FULL=1's scale, in lanes and one trajectory at a time",
     bench_study},
    {"ensemble", "the ensemble SPEC on 1 and 2 threads: the OpenMP speed-up", bench_ensemble},
    {"memory", "peak memory of SPEC sampled every step, in memory and streamed through the journal", bench_memory},
};
enum { NSECTIONS = sizeof sections / sizeof *sections };

static void usage(FILE *f) {
  fprintf(f, "usage: nhbench_bench [--quick] [--only SECTION[,SECTION...]] [ENSEMBLE_SPEC]\n"
             "Performance figures (make bench): ratios measured within this run, never asserted.\n"
             "  --quick   every table from a few thousand steps (a smoke test; figures then mean little)\n"
             "  --only    only the named tables:\n");
  for (int i = 0; i < NSECTIONS; i++) fprintf(f, "              %-9s %s\n", sections[i].name, sections[i].doc);
  fprintf(f, "  ENSEMBLE_SPEC  the ensemble of the last three tables (default studies/chaotic_ensemble.cfg)\n");
}

/* Marks the sections named in the comma-separated list; -1 (with a message) on an unknown name. */
static int select_sections(const char *list, int *on) {
  char buf[NH_TEXT_NAME];
  snprintf(buf, sizeof buf, "%s", list);
  for (char *save = NULL, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
    int found = 0;
    for (int i = 0; i < NSECTIONS; i++)
      if (strcmp(tok, sections[i].name) == 0) on[i] = found = 1;
    if (!found) {
      fprintf(stderr, "nhbench_bench: --only %s: unknown table '%s'\n", list, tok);
      usage(stderr);
      return -1;
    }
  }
  return 0;
}

int nh_bench_main(int argc, char **argv) {
  const char *spec = "studies/chaotic_ensemble.cfg";
  int on[NSECTIONS] = {0}, only = 0;
  self = argv[0];
  if (argc == 5 && strcmp(argv[1], "--memory-child") == 0) return memory_child(argv);
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--quick") == 0) {
      quick = 1;
    } else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      usage(stdout);
      return 0;
    } else if (strcmp(argv[i], "--only") == 0) {
      if (i + 1 == argc) return fprintf(stderr, "nhbench_bench: --only needs a list of tables\n"), usage(stderr), 2;
      if (select_sections(argv[++i], on) != 0) return 2;
      only = 1;
    } else if (argv[i][0] == '-') {
      fprintf(stderr, "nhbench_bench: unknown option '%s'\n", argv[i]);
      usage(stderr);
      return 2;
    } else {
      spec = argv[i];
    }
  }
  setlinebuf(stdout); /* tables and any error on stderr in their order */
  for (int i = 0; i < NSECTIONS; i++)
    if (!only || on[i]) sections[i].run(spec);
  return 0;
}
