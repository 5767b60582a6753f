/* The solution at T a study measures its errors against, with the accuracy it has (issue 46 item 8):
 * the system's exact solution (error 0), or GSL's rk8pd at a tolerance `tol` whose error is
 * estimated by a second run at a tighter tolerance. With `reference_tol` left to "auto", the
 * tolerance is tightened from 1e-13 until the estimate lies 100 times below the smallest error
 * measured, so that even an error at round-off is not measured against a reference of its size. */
#include <float.h>
#include <math.h>
#include <string.h>

#include "studies/study.h"

/* No rk8pd run goes below this tolerance: below ~1e-16 GSL's error estimate is round-off and the
 * step size would shrink without end. "auto" stops one decade above it, where the check run still
 * is 10 times tighter. */
#define TIGHTEST_TOL 1e-16
#define TIGHTEST_AUTO_TOL 1e-15

double nh_state_norm(nh_norm norm, int n, const double *d) {
  return norm == NH_NORM_2 ? nh_norm_2(n, d) : nh_norm_max(n, d);
}

/* The tolerance of the run the estimate compares with: 100 times tighter, but not below
 * TIGHTEST_TOL; at TIGHTEST_TOL itself 100 times looser, which overestimates the error. */
static double check_tol(double tol) {
  if (tol > TIGHTEST_TOL) return fmax(tol / 100, TIGHTEST_TOL);
  return 100 * tol;
}

void nh_study_reference_difference(const nh_study *st, const double *qv, const nh_study_reference *ref, double *d) {
  const int n = st->sys.n;
  for (int i = 0; i < n; i++) d[i] = qv[i] - ref->x.q[i], d[n + i] = qv[n + i] - ref->x.v[i];
}

/* |x − check| in the study norm over (q, v). */
static double distance(const nh_study *st, const nh_study_reference *ref, const nh_state *check) {
  const int n = st->sys.n;
  double qv[2 * NH_MAX_N], d[2 * NH_MAX_N];
  for (int i = 0; i < n; i++) qv[i] = check->q[i], qv[n + i] = check->v[i];
  nh_study_reference_difference(st, qv, ref, d);
  return nh_state_norm(st->norm, 2 * n, d);
}

static int solve_at(const nh_study *st, const nh_state *x0, double t, double tol, nh_study_reference *ref) {
  nh_state check;
  int rc = nh_true_solution(&st->sys, x0, t, tol, &ref->x, &ref->kind);
  ref->tol = tol, ref->check_tol = NAN, ref->error = 0;
  if (rc < 0 || strcmp(ref->kind, "exact") == 0) return rc;
  ref->check_tol = check_tol(tol);
  if ((rc = nh_reference_solve(&st->sys, x0, t, ref->check_tol, &check)) < 0) return rc;
  ref->error = distance(st, ref, &check);
  return 0;
}

int nh_study_reference_at(const nh_study *st, const nh_state *x0, double t, nh_study_reference *ref) {
  return solve_at(st, x0, t, st->reference_tol, ref);
}

int nh_study_reference_refine(const nh_study *st, const nh_state *x0, double t, double smallest_error,
                              nh_study_reference *ref) {
  if (!st->reference_tol_auto || !(smallest_error > 0)) return 0;
  while (strcmp(ref->kind, "rk8pd") == 0 && ref->error > smallest_error / 100 && ref->tol > TIGHTEST_AUTO_TOL) {
    const int rc = solve_at(st, x0, t, fmax(ref->tol / 10, TIGHTEST_AUTO_TOL), ref);
    if (rc < 0) return rc;
  }
  return 0;
}

double nh_study_reference_norm(const nh_study *st, const nh_state *x) {
  const int n = st->sys.n;
  double d[2 * NH_MAX_N];
  for (int i = 0; i < n; i++) d[i] = x->q[i], d[n + i] = x->v[i];
  return nh_state_norm(st->norm, 2 * n, d);
}

/* Round-off of a run of N steps: one rounding of the state per step (at most ε/2 relative), all in
 * one direction, reaches N·ε/2·|x|; N·ε·|x| is twice that. A random walk (√N) is the usual case but
 * not a bound: on the time-perturbed Kepler orbit (studies/time_perturbed_kepler.cfg)
 * yoshida6(contact2)'s round-off after 11200 sub-steps, about 6e-13, is 17 times √N·ε·|x|. */
double nh_error_floor(const nh_study *st, double reference_error, double state_norm, double steps) {
  if (!st->error_floor_auto) return fmax(st->error_floor, 10 * reference_error);
  return fmax(10 * reference_error, fmax(1, steps) * DBL_EPSILON * state_norm);
}
