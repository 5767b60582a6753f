/* The system interface: what an integrator may know of a mechanical system
 *   L = ½ vᵀM(q)v − V(q),   constraints A(q) v + b(q) = 0,
 * optionally with mass-proportional damping −α(t) M v, a time-dependent generalized force F(t)
 * (spec/newmark.md §2.0, spec/herglotz.md §2.1) and a time-dependent potential W(q, t). The
 * equations of motion are
 *   M v̇ = −∇V − ∇W(q, t) − Ṁv + ½ ∂_q(vᵀMv) − α(t) M v + F(t) + Aᵀλ.
 * One file per system implements one const nh_system_type (a core and optional groups, below); one
 * line of systems/systems.def registers it. Optional entries and groups are NULL when absent: an
 * integrator that needs what a system lacks (constant M, linear constraints, no damping or forcing, a
 * holonomic constraint) declines it by its flags. */
#ifndef NH_SYSTEM_H
#define NH_SYSTEM_H

#include <gsl/gsl_rng.h>

#include "core/attributes.h" /* NH_UNUSED */
#include "core/lanes.h"      /* NH_LANES, the lane kernels' layout */
#include "core/linalg.h"     /* nh_spd_solve, nh_spd_solve_many, nh_spd_invert */
#include "core/param.h"
#include "core/state.h"

#define NH_MAX_INVARIANTS 4
#define NH_MAX_PRESETS 16

/* The shared state type nh_state and the size limits NH_MAX_N, NH_MAX_K, NH_MAX_CARRY live in
 * core/state.h. */

/* A named initial condition from a paper, with the system parameters it needs ("eps=0.1"). */
typedef struct {
  const char *name;
  const char *doc;
  const double *q, *v;
  const char *params; /* NULL or "" when the defaults apply */
} nh_preset;

/* The table is a required core, the physics every system supplies (M, V and its derivatives, the
 * constraints), and optional groups, each a const sub-table reached by a pointer that is NULL when
 * the system has nothing of the group; what only makes sense together is one type, so that "all or
 * none" holds by construction (as integrators/integrator.h's nh_newton_hooks):
 *   affine     the affine part b(q) of the constraints and its Jacobian (nh_affine_constraints);
 *   forces     the forces beyond −∇V and Aᵀλ, and the time dependence: damping α(t), forcing F(t),
 *              a time-dependent potential W(q, t) with its gradient and Hessian (nh_time_potential),
 *              which of them vary with t (nh_system_forces);
 *   kernels    closed-form fast paths of what the generic code computes from the core, the same
 *              quantities to round-off (nh_system_kernels);
 *   knowledge  what is known of the system beyond its equations and no step reads: the exact solution,
 *              first integrals (nh_system_invariants), derived quantities (nh_system_derived), the
 *              papers' presets and the random sampler (nh_system_knowledge).
 * A system file writes each group it has as a static const table with designated initializers and
 * points its core at it. All matrices are dense, row-major; p is the system's parameter vector (in
 * descriptor order). */

/* The affine part b(q) (k) of the constraints A(q)v + b(q) = 0 and its Jacobian
 * db[a*n + j] = ∂b^a/∂q^j (k×n). */
typedef struct {
  void (*values)(const double *p, const double *q, double *b);
  void (*jacobian)(const double *p, const double *q, double *db);
} nh_affine_constraints;

/* A time-dependent potential W(q, t), added to V(q) in the force: −∇V(q) − ∇W(q, t) (the
 * reference's V(q, t), e.g. the spin–orbit potential), with its q-gradient and q-Hessian (n, n×n).
 * Energies (nh_energy) hold V only: with W the mechanical energy is not a function of (q, v). */
typedef struct {
  double (*value)(const double *p, const double *q, double t);
  void (*gradient)(const double *p, const double *q, double t, double *g);
  void (*hessian)(const double *p, const double *q, double t, double *H);
} nh_time_potential;

/* The forces beyond −∇V(q) and the constraint forces, each NULL when absent (spec/newmark.md §2.0,
 * spec/herglotz.md §2.1). */
typedef struct {
  /* Damping coefficient α(t) (force −α(t) M(q) v). α may depend on t (the time-dependent damping
   * f(t) of Bravetti, Seri, Vermeeren, Zadra 2020, contact-integrators' H = p²/2 + f(t)s + V(q, t))
   * and may be negative; a system whose α varies with t says so in time_dependence, so that
   * methods written for a constant α decline it. */
  double (*damping)(const double *p, double t);
  /* Generalized force F(t) (n); returns 0 when F ≡ 0 for these parameters. */
  int (*forcing)(const double *p, double t, double *F);
  const nh_time_potential *potential; /* W(q, t) */
  /* Which of NH_SYS_TIME_DAMPING, NH_SYS_TIME_POTENTIAL the parameters p switch on; NULL: none
   * (α constant, no W). nh_system_features reads it. */
  unsigned (*time_dependence)(const double *p);
} nh_system_forces;

/* Optional kernels, each NULL when absent: closed forms of what the generic code computes from the
 * core (issue 11), for systems whose right-hand side dominates the studies. tests/systems/
 * test_systems.c checks each against the generic path. */
typedef struct {
  /* The curvature term (DA(q)[v])v + (Db(q)[v]), out[a] = Σ_ij ∂_j μ^a_i v_i v_j + Σ_j ∂_j b^a v_j,
   * which the index-reduced ODE evaluates in every right-hand side; without it nh_curvature_term
   * contracts constraints_jacobian's dense k×n×n tensor (a system whose dA is sparse writes the
   * few products out). */
  void (*constraint_curvature)(const double *p, const double *q, const double *v, double *out);
  /* The q-derivative of A(q)w at fixed w, D[a*n + l] = Σ_i ∂_l μ^a_i(q) w_i (k×n), the constraint
   * rows of the Newton Jacobians of discrete constraints A(x)Δq; without it nh_constraint_derivative
   * contracts constraints_jacobian's dense tensor. */
  void (*constraint_derivative)(const double *p, const double *q, const double *w, double *D);
  /* The fused index-reduced acceleration a = M⁻¹(f + Aᵀλ) and its multiplier λ (k) at (t, q, v)
   * in closed form, what nh_acceleration and nh_multiplier compute generically (spec/newmark.md
   * §2.0), e.g. for the chaotic particle of make study-chaotic. Returns 0, or -1 where the
   * multiplier is undefined. */
  int (*acceleration)(const double *p, double t, const double *q, const double *v, double *a, double *lambda);
  /* Lane kernels (issue 51, core/lanes.h): the same quantities at NH_LANES points at once, in
   * structure-of-arrays layout (component i of lane l at x[i * NH_LANES + l]), each lane's numbers
   * those of the scalar path on that lane's point to the bit. Without them nh_lanes_acceleration
   * and nh_lanes_constraint_residual call the scalar functions lane by lane: correct, not faster.
   *   acceleration_lanes: nh_acceleration's a (n × lanes) at times t (lanes), nh_multiplier's λ
   *     (k × lanes), and their return value (0, or -1) per lane in status.
   *   constraint_residual_lanes: nh_constraint_residual per lane, max_a |A_a(q)v + b_a(q)|.
   *   grad_potential_lanes, constraints_lanes: grad_potential (n × lanes) and constraints
   *     (A[(a·n + i) · NH_LANES + l]) per lane.
   *   hess_potential_lanes, constraints_jacobian_lanes: hess_potential (H[(i·n + j) · NH_LANES + l])
   *     and constraints_jacobian (dA[((a·n + i)·n + j) · NH_LANES + l]) per lane, the Newton
   *     Jacobians' parts.
   *   potential_lanes, constraint_derivative_lanes: V (one per lane) and nh_constraint_derivative
   *     (D[(a·n + l')·NH_LANES + l]) per lane. */
  void (*acceleration_lanes)(const double *p, const double *t, const double *q, const double *v, double *a,
                             double *lambda, int *status);
  void (*constraint_residual_lanes)(const double *p, const double *q, const double *v, double *out);
  void (*grad_potential_lanes)(const double *p, const double *q, double *g);
  void (*constraints_lanes)(const double *p, const double *q, double *A);
  void (*hess_potential_lanes)(const double *p, const double *q, double *H);
  void (*constraints_jacobian_lanes)(const double *p, const double *q, double *dA);
  void (*potential_lanes)(const double *p, const double *q, double *V);
  void (*constraint_derivative_lanes)(const double *p, const double *q, const double *w, double *D);
} nh_system_kernels;

/* First integrals other than energy (momentum maps): count values at (q, v) and their names. */
typedef struct {
  int count;
  const char *const *names;
  void (*values)(const double *p, const double *q, const double *v, double *out);
} nh_system_invariants;

/* Derived quantities the system declares (e.g. the Foucault pendulum's oscillation-plane angle):
 * count values at (t, q, v), with their names, documentation and units (units NULL, or an entry
 * NULL: dimensionless or as documented); observables sample them and, against the exact solution
 * or the reference, their errors. */
typedef struct {
  int count;
  const char *const *names;
  const char *const *docs;
  const char *const *units; /* e.g. "rad" */
  void (*values)(const double *p, double t, const double *q, const double *v, double *out);
} nh_system_derived;

/* What is known of a system beyond its equations, for the studies and the tests; no step reads it. */
typedef struct {
  /* Exact solution at time t from x0 (x->t = t); NULL when none is known. Returns 0 on success. */
  int (*exact)(const double *p, const nh_state *x0, double t, nh_state *x);
  const nh_system_invariants *invariants; /* NULL: none besides energy */
  const nh_system_derived *derived;       /* NULL: none */
  /* Named initial conditions from the papers. */
  int npresets;
  const nh_preset *presets;
  /* The random sampler on D for ensembles (nh_sample_on_D). The generic one draws q uniformly in
   * [-sample_box, sample_box]^n (spec/newmark.md §6 A10); `sample` is the system's own, a random
   * state on D at energy E where the generic one cannot draw (affine or holonomic constraints),
   * NULL for the generic one. sampler_doc says how it draws, or, with sample NULL, why the system
   * has no sampler. sample returns 0, or -1 if no state was found. */
  double sample_box;
  int (*sample)(const double *p, double E, gsl_rng *rng, nh_state *x);
  const char *sampler_doc;
} nh_system_knowledge;

/* The core: what every system supplies, and its optional groups. */
typedef struct nh_system_type {
  const char *name;
  const char *doc;
  int n, k;
  const nh_param_desc *params;
  int nparams;
  /* Documented default initial condition (a state on D). */
  const double *q0, *v0;
  const char *ic_doc;

  /* M(q), SPD n×n. With mass_jacobian NULL, M is constant and q is ignored (may be NULL). */
  void (*mass)(const double *p, const double *q, double *M);
  /* dM[(i*n + j)*n + l] = ∂M_ij/∂q^l; NULL for a constant mass matrix. */
  void (*mass_jacobian)(const double *p, const double *q, double *dM);
  double (*potential)(const double *p, const double *q);                /* V(q) */
  void (*grad_potential)(const double *p, const double *q, double *g);  /* ∇V, n */
  void (*hess_potential)(const double *p, const double *q, double *H);  /* ∇²V, n×n */
  /* A(q), k×n, rows μ^a (nh_no_constraints when k = 0: an unconstrained reference system). */
  void (*constraints)(const double *p, const double *q, double *A);
  /* dA[(a*n + i)*n + j] = ∂μ^a_i/∂q^j: the curvature term and the Newton Jacobians use it. */
  void (*constraints_jacobian)(const double *p, const double *q, double *dA);
  /* b(q) and its Jacobian; NULL for linear homogeneous constraints. */
  const nh_affine_constraints *affine;
  /* 1: the constraints are solved for the first k velocities, A(q) = [I_k | B(q)] at every q (the
   * rolling disks: ẋ, ẏ of the contact point from the angles' rates, spec/herglotz.md (4.11)), so
   * v_a = −(Σ_{i≥k} A_ai v_i + b_a) for a < k: what rk4_reduced integrates without them. */
  int constraints_solved_first;
  /* Holonomic constraints φ(q) = 0 (k) with ∂φ/∂q = A(q); NULL for nonholonomic systems. */
  void (*holonomic)(const double *p, const double *q, double *phi);
  /* Structure the system guarantees for every parameter value, as NH_CAP_* bits; methods written
   * in closed form for a structure check the bit, never the system's name. 0: none. */
  unsigned capabilities;

  const nh_system_forces *forces;       /* NULL: no damping, forcing or W(q, t) */
  const nh_system_kernels *kernels;     /* NULL: the generic paths only */
  /* NULL: nothing known, not even a sampler (test-only types; every registered system documents its
   * sampler, tests/contracts/test_registry.c). */
  const nh_system_knowledge *knowledge;
} nh_system_type;

/* The interface's version: raised whenever nh_system_type, its groups or nh_state change layout, so
 * that a system plugin built against other headers is refused, not misread (systems/plugin.h). */
#define NH_SYSTEM_ABI 3
/* In a plugin's source, once: exports its table and the version it was built against, what
 * nh_system_plugin_open looks for. */
#define NH_SYSTEM_PLUGIN(type)                                                                                         \
  const int nhbench_system_abi = NH_SYSTEM_ABI;                                                                        \
  const nh_system_type *nhbench_system_type(void) { return &(type); }

/* The core fields every system file fills with functions of the same names (mass, potential, ...)
 * and the counted lists (params, presets, derived, invariants) whose counts are the arrays' sizes:
 * written once here, so that a system's tables list only what sets it apart. What still looks
 * alike between two systems' tables (designated fields in the same order) is the table form of
 * STYLE.md, not repeated logic. */
#define NH_SYSTEM_MECHANICS                                                                         \
  .mass = mass, .potential = potential, .grad_potential = grad_potential,                           \
  .hess_potential = hess_potential, .constraints = constraints, .constraints_jacobian = constraints_jacobian
/* The same for an unconstrained system (k = 0): A is 0×n and DA is empty, so both are
 * nh_no_constraints, which writes nothing (the generic code still calls them). */
#define NH_SYSTEM_UNCONSTRAINED_MECHANICS                                                           \
  .mass = mass, .potential = potential, .grad_potential = grad_potential,                           \
  .hess_potential = hess_potential, .constraints = nh_no_constraints, .constraints_jacobian = nh_no_constraints
void nh_no_constraints(const double *p, const double *q, double *out);
/* M = I (n×n), what the mass function of a system with unit masses writes. */
void nh_unit_mass_matrix(int n, double *M);
/* In a nh_system_knowledge table. */
#define NH_SYSTEM_PRESETS(list) .npresets = sizeof list / sizeof list[0], .presets = list
/* In the core. */
#define NH_SYSTEM_PARAMS(list) .nparams = sizeof list / sizeof list[0], .params = list
/* In a nh_system_knowledge table: its derived quantities and invariants, each a table of its own
 * (a compound literal, static like the table that points at it). */
#define NH_SYSTEM_DERIVED(names_, docs_, units_, values_)                                           \
  .derived = &(const nh_system_derived) {                                                           \
    .count = sizeof names_ / sizeof names_[0], .names = names_, .docs = docs_, .units = units_,     \
    .values = values_                                                                               \
  }
#define NH_SYSTEM_INVARIANTS(names_, values_)                                                       \
  .invariants = &(const nh_system_invariants) {                                                     \
    .count = sizeof names_ / sizeof names_[0], .names = names_, .values = values_                   \
  }

/* Capabilities (bits of nh_system_type.capabilities). */
enum {
  /* The nonholonomic particle structure the closed-form Jiménez–Scheurle schemes js_p1, js_p2new
   * and js_p2orig are written for (spec/discretization.md §2.6–2.7, §3.3): n = 3, k = 1,
   * q = (x, y, z), M = I, one linear homogeneous constraint μ(q) = (−y, 0, 1) (ż = y ẋ), no
   * damping or forcing, and V = ½ω²(x² + y²) with a constant ω² ≥ 0, i.e. ∇V = ω²(x, y, 0) linear
   * in q (P2 solves its trapezoidal force in closed form only because of this). The schemes read
   * ω² as the constant ∂²V/∂x² = hess_potential(p, q)[0], and decline a system where it is negative
   * at its parameters (a definition proves the structure for every parameter value, not the sign:
   * systems/defined.c). */
  NH_CAP_PARTICLE_STRUCTURE = 1u << 0,
};

/* A system instance: a type, its parameter values and, for a constant mass matrix, M and M⁻¹. */
typedef struct {
  const nh_system_type *type;
  int n, k;
  int constant_mass; /* 1: M and Minv below hold the mass matrix */
  int unit_mass;     /* 1: that constant M is exactly the identity (M⁻¹ products are skipped) */
  double p[NH_MAX_PARAMS];
  double M[NH_MAX_N * NH_MAX_N];
  double Minv[NH_MAX_N * NH_MAX_N];
} nh_system;

/* What a system needs of an integrator beyond the basic case (constant M, linear constraints,
 * conservative, nonholonomic), as bits; integrators declare which they handle. */
enum {
  NH_SYS_VARIABLE_MASS = 1 << 0,
  NH_SYS_AFFINE_CONSTRAINTS = 1 << 1,
  NH_SYS_DAMPING = 1 << 2,
  NH_SYS_FORCING = 1 << 3,
  /* α depends on t (implies NH_SYS_DAMPING): a method written for a constant α (its factors
   * e^{−αh}, 1 ∓ αh/2 taken once) must not silently freeze it. */
  NH_SYS_TIME_DAMPING = 1 << 4,
  /* A time-dependent potential W(q, t) (nh_system_forces.potential). */
  NH_SYS_TIME_POTENTIAL = 1 << 5,
};
unsigned nh_system_features(const nh_system *sys);
/* Reads "eps=0.1,alpha=0" into the parameters. */
int nh_system_set_params_text(nh_system *sys, const char *text, char *err, size_t errlen);
/* Sets the state (and parameters) of a named preset; -1 with a message if unknown. */
int nh_system_apply_preset(nh_system *sys, const char *name, nh_state *x, char *err, size_t errlen);

/* Registry (systems/registry.c, from systems/systems.def). */
extern const nh_system_type *const nh_system_types[];
const nh_system_type *nh_system_type_find(const char *name);
/* "did you mean" for an unknown system name: the registry's closest names (nh_text_suggest, so
 * odelab's ContactOscillator finds contact_oscillator); "" if none. */
void nh_system_suggest(const char *name, char *hint, size_t len);

/* Sets defaults and caches M and M^{-1}. Returns 0, or -1 if M is not SPD. */
int nh_system_init(nh_system *sys, const nh_system_type *type);
/* Sets a parameter (range-checked) and refreshes the cache. */
int nh_system_set_param(nh_system *sys, const char *name, double value, char *err, size_t errlen);
/* "chaotic_particle()" or "cvt(eps=0.1)": the system and all its parameters. */
size_t nh_system_format(const nh_system *sys, char *buf, size_t len);
void nh_system_default_state(const nh_system *sys, nh_state *x);

/* Derived quantities (spec/newmark.md §2.0), generic over all systems. */
void nh_mass(const nh_system *sys, const double *q, double *M);
/* M(q) without a copy: the system's cached matrix for a constant mass, else `space` (n×n) filled. */
const double *nh_mass_at(const nh_system *sys, const double *q, double *space);
/* M v for M = nh_mass_at(sys, q, ·), without a copy: v itself for the identity (the products by
 * zero change no bit of the sums), else `space` (n) filled. */
const double *nh_mass_times(const nh_system *sys, const double *M, const double *v, double *space);
/* v = M(q)⁻¹ p: a copy for the identity, the cached inverse for a constant mass, else a Cholesky
 * solve. Returns 0, or -1 if M(q) is not positive definite. */
int nh_mass_solve(const nh_system *sys, const double *q, const double *p, double *v);
/* W = M⁻¹Aᵀ (n×k) for the k×n A and a constant mass (Aᵀ itself for M = I). */
void nh_mass_solve_transpose(const nh_system *sys, const double *A, double *W);
double nh_kinetic_energy(const nh_system *sys, const double *q, const double *v);
double nh_energy(const nh_system *sys, const double *q, const double *v);
/* max_a |μ^a(q)·v + b^a(q)| */
double nh_constraint_residual(const nh_system *sys, const double *q, const double *v);
/* (DA(q)[v]) v + Db(q)[v], k entries: d/dt of the constraint along q̇ = v, at fixed v. */
void nh_curvature_term(const nh_system *sys, const double *q, const double *v, double *out);
/* D[a*n + l] = Σ_i ∂_l μ^a_i(q) w_i (k×n): ∂(A(q)w)/∂q at fixed w (the system's kernel, or the
 * contraction of constraints_jacobian). */
void nh_constraint_derivative(const nh_system *sys, const double *q, const double *w, double *D);
/* The contact Hamiltonian H = ½vᵀMv + V(q) + W(q, t) − F(t)·q + α(t) z of the unconstrained
 * system (integrators/contact_splitting.c; Bravetti, Seri, Vermeeren, Zadra 2020: H = p²/2 +
 * V(q, t) + f(t)S with S = z, the Herglotz action). Along the exact flow dH/dt = ∂H/∂t − α(t)H, so
 * H = H0 e^{−αt} for a constant α and no time dependence. */
double nh_contact_hamiltonian(const nh_system *sys, double t, const double *q, const double *v, double z);
/* α(t), the damping coefficient at time t (0 for a system without damping). */
double nh_damping(const nh_system *sys, double t);
/* The free force f(t,q,v) = −∇V − ∇W(q,t) − Ṁv + ½∂_q(vᵀMv) − α(t)Mv + F(t) (n). */
void nh_free_force(const nh_system *sys, double t, const double *q, const double *v, double *f);
/* λ(t,q,v) = −C⁻¹[A M⁻¹ f + (DA[v])v + Db[v]], C = A M⁻¹ Aᵀ: the multiplier that keeps the
 * constraint; for constant M without damping, C⁻¹[A M⁻¹∇V − (DA[v])v]. Returns 0, or -1 if C is
 * singular. */
int nh_multiplier(const nh_system *sys, double t, const double *q, const double *v, double *lambda);
/* M⁻¹(f + Aᵀλ) with the eliminated λ: the index-reduced ODE's right-hand side. */
int nh_acceleration(const nh_system *sys, double t, const double *q, const double *v, double *a);
/* nh_acceleration (a) with nh_multiplier (λ, k × lanes), and nh_constraint_residual, at NH_LANES
 * points (core/lanes.h layout): the system's lane kernels, or the scalar functions lane by lane;
 * the same bits either way. */
void nh_lanes_acceleration(const nh_system *sys, const double *t, const double *q, const double *v, double *a,
                           double *lambda, int *status);
void nh_lanes_constraint_residual(const nh_system *sys, const double *q, const double *v, double *out);
/* grad_potential and constraints at NH_LANES points (A as constraints_lanes lays it out). */
void nh_lanes_grad_potential(const nh_system *sys, const double *q, double *g);
void nh_lanes_constraints(const nh_system *sys, const double *q, double *A);
/* hess_potential and constraints_jacobian at NH_LANES points (as the lane kernels lay them out). */
void nh_lanes_hess_potential(const nh_system *sys, const double *q, double *H);
void nh_lanes_constraints_jacobian(const nh_system *sys, const double *q, double *dA);
/* V(q), nh_kinetic_energy(q, v) (one number per lane) and nh_constraint_derivative (D, k×n per
 * lane) at NH_LANES points. */
void nh_lanes_potential(const nh_system *sys, const double *q, double *V);
void nh_lanes_kinetic_energy(const nh_system *sys, const double *q, const double *v, double *T);
void nh_lanes_constraint_derivative(const nh_system *sys, const double *q, const double *w, double *D);
/* nh_mass_times for a constant mass matrix per lane: M x into space, or x itself for M = I. */
const double *nh_lanes_mass_times(const nh_system *sys, const double *x, double *space);
/* nh_mass_solve for a constant mass matrix, v = M⁻¹p per lane (M = I: a copy). */
void nh_lanes_mass_solve(const nh_system *sys, const double *p, double *v);
/* The same read-only: M⁻¹p into space, or p itself for M = I (no copy). */
const double *nh_lanes_mass_solved(const nh_system *sys, const double *p, double *space);
/* nh_mass_solve_transpose per lane, W = M⁻¹Aᵀ (n × k × lanes) for a constant mass matrix. */
void nh_lanes_mass_solve_transpose(const nh_system *sys, const double *A, double *W);
/* nh_project_onto with b = NULL per lane, for a constant mass matrix: v projected, y its
 * multiplier (k × lanes), status[l] its return value. */
void nh_lanes_project_onto(const nh_system *sys, const double *A, double *v, double *y, int *status);
/* M-orthogonal projection of v onto {A(q)v + b(q) = 0}: v ← v − M⁻¹Aᵀ C⁻¹ (A v + b). */
int nh_project_velocity(const nh_system *sys, const double *q, double *v);
/* The same projection, also returning its multiplier y = C⁻¹(A v + b) (k), as RATTLE needs. */
int nh_project_velocity_multiplier(const nh_system *sys, const double *q, double *v, double *y);
/* The same projection for a given A = A(q) and b = b(q) (NULL: 0), without evaluating them. */
int nh_project_onto(const nh_system *sys, const double *q, const double *A, const double *b, double *v, double *y);
/* W = M⁻¹Aᵀ (n×k) and C = A M⁻¹Aᵀ (k×k) at q, for the given A = A(q). Returns 0, or -1. */
int nh_constraint_gram(const nh_system *sys, const double *q, const double *A, double *W, double *C);
/* What a system knows, asked without its table (the studies use these, never sys->type). */
const char *nh_system_name(const nh_system *sys);
/* A(q) (k × n, row-major) and b(q) (k; 0 for linear constraints). */
void nh_constraint_terms(const nh_system *sys, const double *q, double *A, double *b);
/* The signed residuals A(q)v + b(q) of the k constraints. */
void nh_constraint_values(const nh_system *sys, const double *q, const double *v, double *r);
double nh_potential(const nh_system *sys, const double *q);                /* V(q) */
void nh_grad_potential(const nh_system *sys, const double *q, double *g); /* ∇V(q), n */
/* The forcing F(t) (n) into F: 1, or 0 when F ≡ 0 for these parameters (F then undefined). */
int nh_forcing(const nh_system *sys, double t, double *F);
/* The holonomic constraints φ(q) (k), for a system that has them (nh_has_holonomic). */
int nh_has_holonomic(const nh_system *sys);
void nh_holonomic(const nh_system *sys, const double *q, double *phi);
/* The invariants besides energy: their number (0: none), names and values at (q, v). */
int nh_invariant_count(const nh_system *sys);
const char *nh_invariant_name(const nh_system *sys, int i);
void nh_invariants(const nh_system *sys, const double *q, const double *v, double *out);
/* The derived quantities: their number (0: none), names, units ("" where dimensionless or as
 * documented) and values at (t, q, v). */
int nh_derived_count(const nh_system *sys);
const char *nh_derived_name(const nh_system *sys, int i);
const char *nh_derived_units(const nh_system *sys, int i);
void nh_derived(const nh_system *sys, double t, const double *q, const double *v, double *out);
/* The exact solution at t from x0 into x: 0, or -1 when the system has none or it declines x0
 * (e.g. off D); nh_has_exact_solution: whether it has one. */
int nh_has_exact_solution(const nh_system *sys);
int nh_exact_solution(const nh_system *sys, const nh_state *x0, double t, nh_state *x);
/* The index of parameter name (-1: none). */
int nh_system_param_index(const nh_system *sys, const char *name);
/* Whether the system has a random sampler on D of its own, and what it does or why there is none
 * (NULL: the generic sampler's place). */
int nh_system_has_own_sampler(const nh_system *sys);
const char *nh_system_sampler_doc(const nh_system *sys);

/* The samplers' kinetic-energy margin (q is drawn with V(q) < E − NH_SAMPLE_MARGIN, spec/newmark.md
 * §6 A10) and their number of draws before they give up: the generic sampler's, which the
 * systems' own samplers share so that every sampler reads an energy E the same way. */
#define NH_SAMPLE_MARGIN 0.1
#define NH_SAMPLE_TRIES 1000000

/* A random state on D at energy E for ensembles: the system's own sampler (knowledge->sample) when it
 * has one; otherwise the generic sampler of spec/newmark.md §6 A10: q uniform in the sample box
 * with V(q) < E − NH_SAMPLE_MARGIN, v ~ N(0, I) projected M-orthogonally on D and rescaled to kinetic energy
 * E − V(q). Returns 0; -1 if no admissible state was found in NH_SAMPLE_TRIES draws; -2 if the system is
 * outside the generic sampler's reach (affine or holonomic constraints) and has no sampler of its
 * own (or knows nothing: knowledge NULL). knowledge->sampler_doc says which. */
int nh_sample_on_D(const nh_system *sys, double E, gsl_rng *rng, nh_state *x);

#endif
