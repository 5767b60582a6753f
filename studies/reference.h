/* What a study measures errors against (studies/reference.c): the exact solution or a tightened
 * rk8pd reference with its estimated error, the study's norms, and the error floors of order fits. */
#ifndef NH_STUDIES_REFERENCE_H
#define NH_STUDIES_REFERENCE_H

#include "studies/spec.h"

/* The reference a study measures errors at t against (studies/reference.c): the exact solution
 * (kind "exact", error 0), or rk8pd at tolerance tol (kind "rk8pd") whose error is estimated as its
 * distance, in the study's norm over (q, v), from a run at check_tol (tol/100, not below 1e-16;
 * 100·tol at 1e-16, an overestimate). */
typedef struct {
  nh_state x;
  const char *kind;
  double tol, check_tol, error;
} nh_study_reference;

/* The two "auto" rules in words, as results files state them. */
#define NH_REFERENCE_TOL_AUTO "auto: from 1e-13, tenfold tighter (not below 1e-15) until reference_error <= the smallest error / 100"
#define NH_ERROR_FLOOR_AUTO "auto: max(10 reference_error, steps eps |state|), eps = 2^-52"
/* d = (q, v) − the reference's state, qv and d of 2n entries (q then v). */
void nh_study_reference_difference(const nh_study *st, const double *qv, const nh_study_reference *ref, double *d);
/* |d| over n entries in the given norm. */
double nh_state_norm(nh_norm norm, int n, const double *d);
/* The reference at t from x0 at st->reference_tol. Returns 0 or nh_true_solution's failure. */
int nh_study_reference_at(const nh_study *st, const nh_state *x0, double t, nh_study_reference *ref);
/* With st->reference_tol_auto, tightens an rk8pd reference tenfold at a time (not below 1e-15) until
 * its estimated error is at most smallest_error/100. Returns 0 or nh_true_solution's failure. */
int nh_study_reference_refine(const nh_study *st, const nh_state *x0, double t, double smallest_error,
                              nh_study_reference *ref);
/* |(q, v)| of x in the study's norm. */
double nh_study_reference_norm(const nh_study *st, const nh_state *x);
/* The error floor of an order fit over runs of `steps` base steps (a composition's sub-steps
 * each count) whose truth has the error
 * reference_error: max(error_floor, 10 × reference_error); with error_floor_auto,
 * max(10 × reference_error, steps·ε·state_norm), twice the round-off of one rounding of a state of
 * that size per step, adding up in one direction. */
double nh_error_floor(const nh_study *st, double reference_error, double state_norm, double steps);

#endif
