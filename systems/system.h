/* The system interface: what an integrator may know of a mechanical system with linear
 * nonholonomic constraints, L = ½ vᵀMv − V(q), A(q) v = 0 (spec/newmark.md §2.0).
 * One file per system implements one const nh_system_type; systems/registry.c lists them. */
#ifndef NH_SYSTEM_H
#define NH_SYSTEM_H

#include <gsl/gsl_rng.h>

#include "systems/param.h"

#define NH_MAX_N 8 /* configuration dimension n */
#define NH_MAX_K 4 /* number of constraints k */

/* The shared state type: time, positions, velocities. Fixed-size so steps allocate nothing. */
typedef struct {
  double t;
  double q[NH_MAX_N];
  double v[NH_MAX_N];
} nh_state;

/* All matrices are dense, row-major. p is the system's parameter vector (in descriptor order). */
typedef struct nh_system_type {
  const char *name;
  const char *doc;
  int n, k;
  const nh_param_desc *params;
  int nparams;
  /* Documented default initial condition (a state on D). */
  const double *q0, *v0;
  const char *ic_doc;
  /* The random sampler draws q uniformly in [-sample_box, sample_box]^n (spec/newmark.md §6 A10). */
  double sample_box;

  void (*mass)(const double *p, double *M);                             /* constant SPD, n×n */
  double (*potential)(const double *p, const double *q);                /* V(q) */
  void (*grad_potential)(const double *p, const double *q, double *g);  /* ∇V, n */
  void (*hess_potential)(const double *p, const double *q, double *H);  /* ∇²V, n×n */
  void (*constraints)(const double *p, const double *q, double *A);     /* A(q), k×n, rows μ^a */
  /* dA[(a*n + i)*n + j] = ∂μ^a_i/∂q^j: the curvature term and the Newton Jacobians use it. */
  void (*constraints_jacobian)(const double *p, const double *q, double *dA);
  /* Exact solution at time t from x0 (x->t = t); NULL when none is known. Returns 0 on success. */
  int (*exact)(const double *p, const nh_state *x0, double t, nh_state *x);
} nh_system_type;

/* A system instance: a type, its parameter values and the cached constant mass matrix. */
typedef struct {
  const nh_system_type *type;
  int n, k;
  double p[NH_MAX_PARAMS];
  double M[NH_MAX_N * NH_MAX_N];
  double Minv[NH_MAX_N * NH_MAX_N];
} nh_system;

/* Registry (systems/registry.c). */
extern const nh_system_type *const nh_system_types[];
const nh_system_type *nh_system_type_find(const char *name);

/* Sets defaults and caches M and M^{-1}. Returns 0, or -1 if M is not SPD. */
int nh_system_init(nh_system *sys, const nh_system_type *type);
/* Sets a parameter (range-checked) and refreshes the cache. */
int nh_system_set_param(nh_system *sys, const char *name, double value, char *err, size_t errlen);
/* "chaotic_particle()" or "cvt(eps=0.1)": the system and all its parameters. */
size_t nh_system_format(const nh_system *sys, char *buf, size_t len);
void nh_system_default_state(const nh_system *sys, nh_state *x);

/* Derived quantities (spec/newmark.md §2.0), generic over all systems. */
double nh_energy(const nh_system *sys, const double *q, const double *v);
double nh_constraint_residual(const nh_system *sys, const double *q, const double *v); /* max_a |μ^a·v| */
/* (DA(q)[v]) v, k entries. */
void nh_curvature_term(const nh_system *sys, const double *q, const double *v, double *out);
/* λ(q,v) = C⁻¹[A M⁻¹∇V − (DA[v])v], C = A M⁻¹ Aᵀ. Returns 0, or -1 if C is singular. */
int nh_multiplier(const nh_system *sys, const double *q, const double *v, double *lambda);
/* Γ_nh(q,v,λ) = M⁻¹(−∇V + Aᵀλ) with the eliminated λ: the index-reduced ODE's right-hand side. */
int nh_acceleration(const nh_system *sys, const double *q, const double *v, double *a);
/* M-orthogonal projection of v onto D_q = ker A(q): v ← v − M⁻¹Aᵀ C⁻¹ A v. */
int nh_project_velocity(const nh_system *sys, const double *q, double *v);
/* A random state on D at energy E (spec/newmark.md §6 A10): q uniform in the sample box with
 * V(q) < E − margin, v ~ N(0, I) projected on D and rescaled to kinetic energy E − V(q).
 * Returns 0, or -1 if no admissible q was found in 10⁶ draws. */
int nh_sample_on_D(const nh_system *sys, double E, gsl_rng *rng, nh_state *x);

/* Small dense helpers shared by the library (no allocation). */
/* Solves the SPD system S x = b of size m in place (b becomes x); S is overwritten. */
int nh_spd_solve(int m, double *S, double *b);

#endif
