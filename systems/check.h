/* The system contract, checked on any system (a system file's, a definition's, a plugin's): every
 * derivative the interface asks for against central finite differences of the function it is the
 * derivative of, the kernels against the generic code they stand for, the mass matrix symmetric and
 * positive definite, the default state on D (`nhbench check-system`, issue 50 item 5). A wrong
 * derivative is named by the entry it gets wrong and where. */
#ifndef NH_SYSTEMS_CHECK_H
#define NH_SYSTEMS_CHECK_H

#include "systems/system.h"

/* One check's outcome over every point it was made at. */
typedef struct {
  const char *name; /* "grad_potential" */
  const char *what; /* "∇V against finite differences of potential" */
  int applies;      /* 0: the system has nothing to check here (no affine part, constant mass) */
  int ok;
  double error;     /* the largest |analytic − reference| / max(1, |reference|) over the points */
  double tolerance; /* what error must stay within */
  char where[512];  /* the worst entry: "entry 2 is -1, finite differences give 1 at q = (...)" */
  /* The check whose function this one's reference is made of, when that one failed (NULL: none):
   * a wrong grad_potential fails hess_potential's reference too, which is then no finding of
   * its own. */
  const char *reference_failed;
} nh_system_check;
#define NH_SYSTEM_CHECKS 16

/* Runs every check at the default state and `points` − 1 random points in the sample box (seeded:
 * the same points every run) into out[NH_SYSTEM_CHECKS]; returns how many are filled. */
int nh_system_check_all(const nh_system *sys, int points, nh_system_check *out);

#endif
