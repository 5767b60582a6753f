/* The integrator interface. One file per method family implements const nh_integrator_type
 * tables; one line of integrators/integrators.def registers each. A method *instance* (nh_method) is a type plus
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
  unsigned long long constraint_evals;  /* evaluations of the constraint matrix A(q) = μ(q) */
} nh_cost;

/* When the multiplier a step leaves in y->lambda approximates the continuous λ(t) of
 * nh_multiplier (spec/discretization.md §6.5, "Multipliers"). */
typedef enum {
  NH_LAMBDA_NONE = 0, /* the method defines no multiplier */
  NH_LAMBDA_START,    /* λ(t_k), the step's start */
  NH_LAMBDA_MIDPOINT, /* λ(t_k + h/2) */
  NH_LAMBDA_END,      /* λ(t_{k+1}), the step's end */
} nh_lambda_time;

/* sum += c, counter by counter. */
void nh_cost_add(nh_cost *sum, const nh_cost *c);

typedef struct nh_method nh_method;

/* Properties a method declares (bits of nh_integrator_type.properties). */
enum {
  NH_PRESERVES_CONSTRAINT = 1 << 0, /* |A(q)v + b| at round-off after every step */
  NH_HISTORY = 1 << 1,              /* the state carries h-dependent history (a two-step method):
                                       no compositions, no step-size changes */
  NH_TRACKS_ACTION = 1 << 2,        /* updates the Herglotz action z */
  NH_TOLERANCE_DRIVEN = 1 << 3,     /* adaptive (ida, cvode): rtol and atol set the error, h is only
                                       the output step, so the error has no order in h */
  NH_READS_PREVIOUS_STEP = 1 << 4,  /* the step reads a quantity the previous step computed for its own
                                       size (nh_rattle's lambda_k): symmetric as a map of (q, v, lambda),
                                       not a one-step map of (q, v), so compositions that change the
                                       sub-step size reach order 4 at most (issue 46 item 3) */
  NH_MIDPOINT_TIME = 1 << 5,        /* evaluates the system's time-dependent coefficients (alpha(t),
                                       W(q, t), F(t)) only at t_j + h/2 of each step: it (and every
                                       composition of it, whose sub-step midpoints all lie inside
                                       (0, h)) can start where alpha is singular (issue 46 item 5) */
};

/* An old spelling of a parameter value that the method syntax still reads, with a deprecation note
 * on stderr: `old_name=old_value` is read as `name=value` (issue 9, names that say what things are).
 * old_value matches as text or as the same number ("15", "15.0"). A type's table ends with {NULL}. */
typedef struct {
  const char *old_name, *old_value;
  const char *name, *value;
} nh_param_alias;

/* A peer's name for a method ("McLachlan" in odelab is mp418): an unknown method name equal to it
 * (nh_text_distance 0) gets the method as its "did you mean". method: the method text it maps to
 * when not the type itself (the contact-integrators' step6 is yoshida6(contact2)). A type's table
 * ends with {NULL}. */
typedef struct {
  const char *name, *source, *method;
} nh_peer_name;

/* The Newton system a method solves per step, for the condition number of its Jacobian
 * (spec/newmark.md §2.5) and finite-difference checks: its size (0: none for this system), its
 * residual F and analytic Jacobian J (row-major, size×size) at unknowns X for the step from x of
 * size h, and the unknowns X that correspond to a step's result y. The three come together (a
 * method's table points at all of them or at none). Allocate nothing. */
typedef struct {
  int (*size)(const nh_method *m, const nh_system *sys);
  void (*eval)(const nh_method *m, const nh_system *sys, const nh_state *x, double h, const double *X, double *F,
               double *J);
  void (*unknowns)(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y, double h,
                   double *X);
  /* Optional: the diagonal factors that undo the method's scaling of its Newton system for steps of
   * size h, so that J_paper = diag(row)·J·diag(col) is the Jacobian in the unknowns and equations of
   * the method's source (row and col: size entries each), e.g. nh_newmark's λ = Λ/(h²/2) and (N3),
   * (N4) not multiplied by h (spec/newmark.md §2.5, whose cond ~ h^-3 and h^-5 of C12 are of that
   * system). NULL when the method does not declare one: it scales nothing, or its source's unscaled
   * form is not diagonal or not known. Allocates nothing. */
  void (*scaling)(const nh_method *m, const nh_system *sys, double h, double *row, double *col);
} nh_newton_hooks;

typedef struct nh_integrator_type {
  const char *name;
  const char *doc;
  const nh_param_desc *params;
  int nparams;
  const nh_param_alias *aliases; /* old spellings of parameters; NULL or ending with {NULL} */
  const nh_peer_name *peer_names; /* what the peers' codes call it; NULL or ending with {NULL} */
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
  /* NULL, or the order on a given system where it differs from `order` (compositions over
   * nh_rattle on a system without constraints: no multiplier to carry, the table's order). */
  int (*order_on)(const nh_method *m, const nh_system *sys);
  int (*is_symmetric)(const nh_method *m); /* Φ*_h = Φ_h */
  /* Fills `adj` (type and parameters, no base) with the adjoint Φ*_h = (Φ_{−h})⁻¹ when known in
   * closed form; returns -1 when not. Symmetric methods need not implement it. May be NULL. */
  int (*adjoint)(const nh_method *m, nh_method *adj);
  /* Prepares per-instance data after parsing (e.g. a composition's adjoint); may be NULL. */
  int (*setup)(nh_method *m, char *err, size_t errlen);
  /* Sets up the per-method part of a trajectory's initial state (x->carry, e.g. RATTLE's λ0 or a
   * two-step method's previous position) for steps of size h. It may also move the initial data
   * onto the method's own manifold (e.g. js_p2orig's deformed constraint D_h). May be NULL. */
  nh_step_status (*init)(const nh_method *m, const nh_system *sys, nh_state *x, double h, nh_cost *cost);
  /* One step x → y of size h (h < 0 allowed). Allocates nothing. */
  nh_step_status (*step)(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y,
                         double h, nh_cost *cost);
  /* Optional (issue 51): `step` on NH_LANES states at once (core/lanes.h), each lane's numbers those
   * of `step` on that lane's state to the bit, fields it leaves alone included. Lanes with live[l]
   * = 0 may be stepped too; their results, status and cost are not looked at. status[l] is what
   * `step` returns on lane l; cost[l] counts lane l's work as `step` counts it (live lanes only).
   * Called through nh_method_step_lanes, which adds nh_method_step's finiteness check. Allocates
   * nothing. */
  void (*step_lanes)(const nh_method *m, const nh_system *sys, const nh_lanes *x, nh_lanes *y, double h,
                     const int *live, nh_step_status *status, nh_cost *cost);
  /* NULL, or whether this instance steps in lanes on sys where step_lanes alone does not say
   * (a composition: when its base, and its adjoint, do). */
  int (*has_lanes)(const nh_method *m, const nh_system *sys);
  /* Where has_lanes says yes, in words for `nhbench list methods` ("on systems with ..."; NULL:
   * wherever the method applies). */
  const char *lanes_doc;

  /* What the method itself defines, for the observables (studies/observables.c). Each is NULL /
   * NH_LAMBDA_NONE when the method does not define it, and the observable is then recorded as
   * absent, never as 0. Compositions define no multiplier or discrete energy of their own
   * (nh_method_lambda_time); their discrete constraint is their sub-steps' (integrators/compose.c),
   * defined when the base's is (nh_method_has_discrete_constraint). */
  /* The multiplier every step leaves in y->lambda (k entries, +Aᵀλ convention) and the time it
   * approximates; lambda_doc names it, e.g. "λ'_{k+1} of (N2)". */
  nh_lambda_time lambda_time;
  const char *lambda_doc;
  /* NULL, or the other multiplier a step computes, at its start node, into out (k entries, +Aᵀλ sign)
   * from the step's result y: nh_newmark's λ_k of (N1), which y carries beside y->lambda = λ'_{k+1}
   * (spec/newmark.md §2.3, C12 compares the two). */
  void (*start_multiplier)(const nh_method *m, const nh_system *sys, const nh_state *y, double *out);
  /* The method's own discrete constraint for the step x → y (k entries), e.g. Φ(q_k, q_{k+1}) of
   * (N3) (spec/newmark.md §2.4) or A(q̄)Δq/h of the contact schemes (spec/herglotz.md §2.5). */
  void (*discrete_constraint)(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                              double h, double *out);
  const char *discrete_constraint_doc;
  /* The method's discrete energy for the step x → y, e.g. E_d of nh_rattle (spec/rattle.md §2.9)
   * or the midpoint energy of the contact schemes (spec/herglotz.md §6). */
  double (*discrete_energy)(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                            double h);
  const char *discrete_energy_doc;
  /* Variational methods: the discrete action L_d(q0, q1) of one step of size h starting at time t,
   * an approximation of ∫_t^{t+h} L dt (spec/discretization.md §2.1 and R1); NaN for an instance
   * that is not variational (e.g. nh_newmark with β or β' ≠ 0). */
  double (*discrete_action)(const nh_method *m, const nh_system *sys, double t, const double *q0,
                            const double *q1, double h);
  /* NULL, or why results of this instance are unreliable although it runs, e.g. nh_newmark at
   * β + β' = ½ with allow_ill_conditioned=1 (spec/newmark.md §2.5): stored with the method in results files. */
  const char *(*caveat)(const nh_method *m);
  /* NULL, or the Newton system the method solves per step (nh_newton_hooks). */
  const nh_newton_hooks *newton;
} nh_integrator_type;

/* The largest Newton system of any method, the LU limit NH_LU_MAX_DIM (core/linalg.h): nh_newmark's
 * n + 2k unknowns (its velocity eliminated) need at most 16, spark's stage system (s − 1)(n + k)
 * needs 18 at s = 4 on the 5-dof chaotic particle and on the vertical disk (integrators/spark.c),
 * and spark declines a system whose stage system exceeds it. */
#define NH_MAX_NEWTON NH_LU_MAX_DIM

struct nh_method {
  const nh_integrator_type *type;
  double p[NH_MAX_PARAMS];
  nh_method *base;    /* compositions: the base method (owned) */
  nh_method *adjoint; /* compositions that use it: the base's adjoint (owned, may equal NULL) */
};

/* Registry (integrators/registry.c, from integrators/integrators.def). */
extern const nh_integrator_type *const nh_integrator_types[];
const nh_integrator_type *nh_integrator_type_find(const char *name);

/* The method syntax (integrators/method.c). */
nh_method *nh_method_parse(const char *text, char *err, size_t errlen);
/* "did you mean" for an unknown method name: the methods a peer's name equal to it maps to
 * ("mp418 (odelab: McLachlan)"), then the registry's closest names (nh_text_suggest); "" if none. */
void nh_method_suggest(const char *name, char *hint, size_t len);
void nh_method_free(nh_method *m);
/* Canonical name with every parameter: parse(format(m)) is m. */
size_t nh_method_format(const nh_method *m, char *buf, size_t len);
/* A short name for figures (issue 49 item 5): the method syntax with only the parameters that
 * differ from their defaults, at 4 significant digits or as a multiple of π
 * ("nh_newmark(beta=0.1,beta2=0.1,alpha=π/6)", "triple_jump(rk4)"); plain text. As snprintf. */
size_t nh_method_label(const nh_method *m, char *buf, size_t len);
/* Same method with parameter `name` set to value (for parameter grids); NULL + message on error. */
nh_method *nh_method_with_param(const nh_method *m, const char *name, double value, char *err,
                                size_t errlen);
int nh_method_order(const nh_method *m);
/* m's order on sys: order_on where the type defines it, else nh_method_order. What studies claim. */
int nh_method_order_on(const nh_method *m, const nh_system *sys);
/* Ready-made order and is_symmetric hooks for a family whose every member has order 1 or 2, or is
 * symmetric whatever its parameters. */
int nh_order_1(const nh_method *m);
int nh_order_2(const nh_method *m);
int nh_always_symmetric(const nh_method *m);
int nh_method_is_symmetric(const nh_method *m);
/* A new method that is m's adjoint (m itself, copied, if symmetric); NULL if unknown, or if
 * out of memory when nh_method_has_adjoint(m) says it is known. */
nh_method *nh_method_adjoint(const nh_method *m);
int nh_method_has_adjoint(const nh_method *m);
/* 0 if m applies to sys (for compositions: their base too), else -1 with the reason:
 * "nh_rattle does not apply to falling_disk: it needs a constant mass matrix". */
int nh_method_applies(const nh_method *m, const nh_system *sys, char *err, size_t errlen);
/* Prepares x for a trajectory with steps of size h (calls the type's init, if any). */
nh_step_status nh_method_init(const nh_method *m, const nh_system *sys, nh_state *x, double h, nh_cost *cost);
int nh_method_preserves_constraint(const nh_method *m);
/* Steps and checks the result is finite. */
nh_step_status nh_method_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y,
                              double h, nh_cost *cost);
/* Whether m steps in lanes on sys (its type has step_lanes, and has_lanes says yes where it has
 * one): 1, else 0. */
int nh_method_has_lanes(const nh_method *m, const nh_system *sys);
/* Adds 1 to counter `field` of cost[l] for each lane l with running[l] (a step in lanes counting
 * its evaluations as the scalar step counts them, lane by lane). The empty asm keeps the loop scalar:
 * GCC vectorized it through the stack, the lanes' counters (48 bytes apart) stored one by one and
 * read back by one wide load that waits for those stores (no store forwarding): about 10 % of
 * nh_newmark's residual in lanes. */
#define NH_LANES_COUNT(cost, running, field)                                                                           \
  do {                                                                                                                 \
    for (int l_ = 0; l_ < NH_LANES; l_++) {                                                                            \
      (cost)[l_].field += (running)[l_] != 0;                                                                          \
      __asm__ volatile("");                                                                                            \
    }                                                                                                                  \
  } while (0)
/* nh_method_step on every live lane (m must have lanes): status[l] and cost[l] for each live lane. */
void nh_method_step_lanes(const nh_method *m, const nh_system *sys, const nh_lanes *x, nh_lanes *y, double h,
                          const int *live, nh_step_status *status, nh_cost *cost);
/* A step_lanes' status on every lane from failed[l] (nonzero: the step's solver failed on lane l),
 * as one pass of selects. Called inside a lane variant (NH_LANES_ISA_VARIANTS), its stores have the
 * width of the loads of nh_method_step_lanes' finiteness test, which then read them straight from
 * the store buffer: stores lane by lane, or narrower than the load, made it wait for them. */
static inline NH_LANES_INLINE void nh_lanes_step_status(const int *failed, nh_step_status *status) {
#pragma omp simd
  for (int l = 0; l < NH_LANES; l++) status[l] = failed[l] ? NH_STEP_SOLVER_FAILED : NH_STEP_OK;
}
double nh_method_param(const nh_method *m, const char *name); /* NaN if m has no such parameter */
/* 1 when m's step, or its base's, reads what the previous step computed (NH_READS_PREVIOUS_STEP)
 * on sys; nh_rattle's lambda_k exists only where sys has constraints. sys NULL: on some system. */
int nh_method_reads_previous_step(const nh_method *m, const nh_system *sys);

/* m's caveat, or its base's (compositions); NULL when there is none. */
const char *nh_method_caveat(const nh_method *m);
/* When m's multiplier approximates λ: the type's lambda_time; a composition's is its base's when
 * that is NH_LAMBDA_END (its last sub-step ends at t_{k+1}), else NH_LAMBDA_NONE. */
nh_lambda_time nh_method_lambda_time(const nh_method *m);
/* The time t* whose λ(t*) m's multiplier approximates for a step from t0 to t1: t0, (t0 + t1)/2
 * or t1; NaN when m defines no multiplier. */
double nh_method_multiplier_time(const nh_method *m, double t0, double t1);
/* Whether m defines a discrete constraint of its own steps: its type's discrete_constraint; for a
 * composition, when every method its stages step with (the base, and the adjoint where a stage
 * uses it) defines one (integrators/compose.c). */
int nh_method_has_discrete_constraint(const nh_method *m);
/* m's discrete constraint for its step x → y of size h, the h the step was taken with (k entries);
 * NaN in every entry when m defines none. */
void nh_method_discrete_constraint(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                                   double h, double *out);

/* What a method defines for the studies' observables, decided here once, so that no study opens
 * a method's table. A composition defines its sub-steps' discrete constraint (above), but no
 * multiplier (unless its last sub-step ends at t_{k+1}), discrete energy or action of its own. */
/* Why m defines no multiplier for its steps, NULL if it does (nh_method_lambda_time). */
const char *nh_method_lacks_multiplier(const nh_method *m);
/* Why m defines no discrete energy, NULL if it does; its discrete energy for the step x → y of
 * size h (the h the step was taken with), NaN when it has none. */
const char *nh_method_lacks_discrete_energy(const nh_method *m);
double nh_method_discrete_energy(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                                 double h);
/* Why m does not update the Herglotz action z, NULL if it (or the method it composes) does. */
const char *nh_method_lacks_action(const nh_method *m);
/* 1 when m (or the method it composes) carries h-dependent history from step to step (NH_HISTORY). */
int nh_method_has_history(const nh_method *m);
/* 1 when a and b are of one integrator type (family), so that a state one left (its carry) is the
 * other's to step on without its own init; 0 otherwise. */
int nh_method_same_family(const nh_method *a, const nh_method *b);
/* 1 when m defines a discrete action L_d; L_d(q0, q1) of a step of size h from time t, NaN when it
 * defines none (or this instance is not variational). */
int nh_method_has_discrete_action(const nh_method *m);
double nh_method_discrete_action(const nh_method *m, const nh_system *sys, double t, const double *q0,
                                 const double *q1, double h);
/* The other multiplier m's step computes, at its start node (nh_newmark's λ_k), from its result
 * y into out (k entries): 0, or -1 (out untouched) when m computes none. */
int nh_method_start_multiplier(const nh_method *m, const nh_system *sys, const nh_state *y, double *out);
/* m's own discrete constraint for its step x → y into out (k entries), cheap enough for every step
 * of a run: 0, or -1 (out untouched) when the system has no constraint or m defines none of its
 * own; a composition's (nh_method_discrete_constraint replays its sub-steps, at the cost of a
 * step) is not one of its own. */
int nh_method_own_discrete_constraint(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                                      double h, double *out);
/* The method of m's nesting (m, or the method it composes, …) that has parameter name; NULL if
 * none. Its type's name, and whether value is a valid value of that parameter (0, or -1 with the
 * reason in err). */
const nh_method *nh_method_param_owner(const nh_method *m, const char *name);
const char *nh_method_type_name(const nh_method *m);
int nh_method_check_param(const nh_method *m, const char *name, double value, char *err, size_t errlen);

/* m's Newton Jacobian at the step x → y into J (dim×dim, row-major; room for NH_MAX_NEWTON² entries),
 * the method's own (scaled) one, or with `unscaled` diag(row)·J·diag(col) of its hooks' scaling: its
 * size, or 0 when there is none (no Newton hooks, no unknowns, no declared scaling) or an entry is
 * not finite. */
int nh_method_newton_jacobian(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                              double h, int unscaled, double *J);

/* Reference solution of the index-reduced ODE by GSL's rk8pd at tight tolerance
 * (integrators/reference.c): x(T) from x0. Returns 0, -1 if the solver failed, or
 * NH_REFERENCE_NO_MEMORY if it could not be set up. */
#define NH_REFERENCE_NO_MEMORY (-2)
int nh_reference_solve(const nh_system *sys, const nh_state *x0, double T, double tol, nh_state *x);
/* The true solution at time t from x0: the system's exact solution when it has one for this state,
 * else nh_reference_solve at tolerance tol. *kind (may be NULL) receives "exact" or "rk8pd".
 * Returns 0, or nh_reference_solve's failure (-1, NH_REFERENCE_NO_MEMORY). */
int nh_true_solution(const nh_system *sys, const nh_state *x0, double t, double tol, nh_state *x,
                     const char **kind);
/* The true solution from x0 at count times t[0 … count−1], into x[0 … count−1], forward or backward
 * (t < x0->t): the system's exact solution when it has one from x0 at every time, else one rk8pd run
 * (nh_reference_solve's) through the times in their order, which then must lead monotonically away
 * from x0->t (one driver for them all: a grid costs one allocation, not one a point). *kind as in
 * nh_true_solution; the return values too. x must not overlap x0. With count = 1 it is
 * nh_true_solution bit for bit. */
int nh_true_solution_times(const nh_system *sys, const nh_state *x0, int count, const double *t, double tol,
                           nh_state *x, const char **kind);

#endif
