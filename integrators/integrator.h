/* The integrator interface. One file per method family implements const nh_integrator_type
 * tables; integrators/registry.c lists them. A method *instance* (nh_method) is a type plus
 * parameter values, and for compositions a base method: it is what the method syntax
 * `triple_jump(nh_newmark(alpha=0.5))` names, on the command line, in study specs and in HDF5. */
#ifndef NH_INTEGRATOR_H
#define NH_INTEGRATOR_H

#include <stddef.h>

#include "systems/system.h"

typedef enum {
  NH_STEP_OK = 0,
  NH_STEP_SOLVER_FAILED = 1, /* Newton did not converge, or a singular linear system */
  NH_STEP_NONFINITE = 2,     /* the new state has a NaN or infinity */
} nh_step_status;

/* Honest cost counters, accumulated by every step (issue: work-precision comparisons). */
typedef struct {
  unsigned long long steps;             /* calls of a base method's step */
  unsigned long long rhs_evals;         /* evaluations of ∇V / the ODE right-hand side */
  unsigned long long jacobian_evals;    /* Jacobian assemblies */
  unsigned long long linear_solves;     /* LU factorisations + solves */
  unsigned long long newton_iterations; /* Newton iterations */
} nh_cost;

typedef struct nh_method nh_method;

/* Properties a method declares (bits of nh_integrator_type.properties). */
enum {
  NH_PRESERVES_CONSTRAINT = 1 << 0, /* |A(q)v + b| at round-off after every step */
  NH_HISTORY = 1 << 1,              /* the state carries h-dependent history (a two-step method):
                                       no compositions, no step-size changes */
  NH_TRACKS_ACTION = 1 << 2,        /* updates the Herglotz action z */
};

typedef struct nh_integrator_type {
  const char *name;
  const char *doc;
  const nh_param_desc *params;
  int nparams;
  int takes_base;   /* 1: written name(BASE_METHOD), a composition over one base method */
  const void *data; /* type-specific constant data, e.g. a composition's coefficient table */
  unsigned properties; /* NH_PRESERVES_CONSTRAINT | ... */
  /* System features (NH_SYS_* in systems/system.h) the method handles; a system with any other
   * feature is declined with `applies_doc` as the reason. */
  unsigned handles;
  const char *applies_doc; /* e.g. "needs a constant mass matrix and linear constraints" */
  /* Further applicability checks (e.g. a holonomic constraint); 0 or -1 with a reason. May be NULL. */
  int (*applies)(const nh_method *m, const nh_system *sys, char *err, size_t errlen);
  /* Checks beyond parameter ranges (e.g. β+β' = ½); 0 or -1 with a message. May be NULL. */
  int (*validate)(const nh_method *m, char *err, size_t errlen);
  int (*order)(const nh_method *m);        /* theoretical global order */
  int (*is_symmetric)(const nh_method *m); /* Φ*_h = Φ_h */
  /* Fills `adj` (type and parameters, no base) with the adjoint Φ*_h = (Φ_{−h})⁻¹ when known in
   * closed form; returns -1 when not. Symmetric methods need not implement it. May be NULL. */
  int (*adjoint)(const nh_method *m, nh_method *adj);
  /* Prepares per-instance data after parsing (e.g. a composition's adjoint); may be NULL. */
  int (*setup)(nh_method *m, char *err, size_t errlen);
  /* Sets up the per-method part of a trajectory's initial state (x->aux, e.g. RATTLE's λ0 or a
   * two-step method's previous position) for steps of size h. It may also move the initial data
   * onto the method's own manifold (e.g. js_p2orig's deformed constraint D_h). May be NULL. */
  nh_step_status (*init)(const nh_method *m, const nh_system *sys, nh_state *x, double h, nh_cost *cost);
  /* One step x → y of size h (h < 0 allowed). Allocates nothing. */
  nh_step_status (*step)(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y,
                         double h, nh_cost *cost);
} nh_integrator_type;

struct nh_method {
  const nh_integrator_type *type;
  double p[NH_MAX_PARAMS];
  nh_method *base;    /* compositions: the base method (owned) */
  nh_method *adjoint; /* compositions that use it: the base's adjoint (owned, may equal NULL) */
};

/* Registry (integrators/registry.c). */
extern const nh_integrator_type *const nh_integrator_types[];
const nh_integrator_type *nh_integrator_type_find(const char *name);

/* The method syntax (integrators/method.c). */
nh_method *nh_method_parse(const char *text, char *err, size_t errlen);
void nh_method_free(nh_method *m);
/* Canonical name with every parameter: parse(format(m)) is m. */
size_t nh_method_format(const nh_method *m, char *buf, size_t len);
/* Same method with parameter `name` set to value (for parameter grids); NULL + message on error. */
nh_method *nh_method_with_param(const nh_method *m, const char *name, double value, char *err,
                                size_t errlen);
int nh_method_order(const nh_method *m);
int nh_method_is_symmetric(const nh_method *m);
/* A new method that is m's adjoint (m itself, copied, if symmetric); NULL if unknown. */
nh_method *nh_method_adjoint(const nh_method *m);
/* 0 if m applies to sys (for compositions: their base too), else -1 with the reason:
 * "nh_rattle does not apply to falling_disk: it needs a constant mass matrix". */
int nh_method_applies(const nh_method *m, const nh_system *sys, char *err, size_t errlen);
/* Prepares x for a trajectory with steps of size h (calls the type's init, if any). */
nh_step_status nh_method_init(const nh_method *m, const nh_system *sys, nh_state *x, double h, nh_cost *cost);
int nh_method_preserves_constraint(const nh_method *m);
/* Steps and checks the result is finite. */
nh_step_status nh_method_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y,
                              double h, nh_cost *cost);
double nh_method_param(const nh_method *m, const char *name); /* NaN if m has no such parameter */

/* Reference solution of the index-reduced ODE by GSL's rk8pd at tight tolerance
 * (integrators/reference.c): x(T) from x0. Returns 0 or -1. */
int nh_reference_solve(const nh_system *sys, const nh_state *x0, double T, double tol, nh_state *x);

#endif
