/* A system that counts its own evaluations of A(q) and ∇V (a fused acceleration kernel counts one
 * of each, as it evaluates both once, system.h): the cost counters of a method (integrator.h:
 * rhs_evals, constraint_evals) must equal the calls it saw. For the tests of the cost counters. */
#ifndef NH_TEST_COUNTING_SYSTEM_H
#define NH_TEST_COUNTING_SYSTEM_H

#include "tests/helpers.h"

static const nh_system_type *counted_base;
static nh_system_type counted_type;
static nh_system_kernels counted_kernels;
static unsigned long long a_calls, g_calls;

static void counting_constraints(const double *p, const double *q, double *A) {
  a_calls++;
  counted_base->constraints(p, q, A);
}

static void counting_grad(const double *p, const double *q, double *g) {
  g_calls++;
  counted_base->grad_potential(p, q, g);
}

static int counting_acceleration(const double *p, double t, const double *q, const double *v, double *a,
                                 double *lambda) {
  g_calls++;
  a_calls++;
  return counted_base->kernels->acceleration(p, t, q, v, a, lambda);
}

/* A system of type base (default parameters) whose A(q), ∇V and fused acceleration are counted. */
static inline nh_system counted_system(const nh_system_type *base) {
  counted_base = base;
  counted_type = *base;
  if (base->constraints) counted_type.constraints = counting_constraints;
  counted_type.grad_potential = counting_grad;
  if (base->kernels && base->kernels->acceleration) {
    counted_kernels = *base->kernels;
    counted_kernels.acceleration = counting_acceleration;
    counted_type.kernels = &counted_kernels;
  }
  return test_system_of(&counted_type, NULL);
}

#endif
