/* A system written as text (systems/defined.h): the expressions parsed once, their derivatives
 * taken symbolically, and every function of the system interface evaluated from them, through
 * generated C (compiled once, core/native.h) or the expression interpreter. Both evaluate the same
 * trees in the same order, so that they agree to the bit (tests/systems/test_defined.c). */
#include "systems/defined.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/expr.h"
#include "core/native.h"
#include "core/text.h"

/* The functions a defined system evaluates, each a list of expressions written into its output in
 * order (a scalar function: one). */
typedef enum {
  F_MASS,       /* M (n×n) */
  F_DMASS,      /* ∂M_ij/∂q^l (n×n×n), variable mass only */
  F_POTENTIAL,  /* V */
  F_GRAD,       /* ∇V (n) */
  F_HESS,       /* ∇²V (n×n) */
  F_A,          /* A (k×n) */
  F_DA,         /* ∂μ^a_i/∂q^j (k×n×n) */
  F_B,          /* b (k), affine only */
  F_DB,         /* ∂b^a/∂q^j (k×n), affine only */
  F_CURVATURE,  /* (DA[v])v + Db[v] (k) */
  F_DERIVATIVE, /* Σ_i ∂_l μ^a_i w_i (k×n) */
  F_DAMPING,    /* α(t) */
  F_FORCING,    /* F(t) (n) */
  F_INVARIANTS, /* (ninvariants) */
  F_COUNT
} function_id;

/* How each function looks in C: its name in the generated source, the parameters it reads, and
 * the one it writes (out NULL: none, it returns its one value; ret: what it returns after writing,
 * NULL: void). lanes: 1 where the source also holds NAME_lanes, the same expressions at NH_LANES
 * points in the lane layout (core/lanes.h), with the same parameters: the lane kernels of the table
 * (∇V, ∇²V, A, ∂A/∂q) and what the residual and acceleration lane kernels read (b, the curvature
 * term). Only functions of q (and v) that write out: the lanes differ in q and v, never in p or t. */
static const struct {
  const char *name, *params, *out, *ret;
  int lanes;
} forms[F_COUNT] = {
    [F_MASS] = {"nhs_mass", "const double *p, const double *q", "out", NULL, 0},
    [F_DMASS] = {"nhs_mass_jacobian", "const double *p, const double *q", "out", NULL, 0},
    [F_POTENTIAL] = {"nhs_potential", "const double *p, const double *q", NULL, NULL, 0},
    [F_GRAD] = {"nhs_grad_potential", "const double *p, const double *q", "out", NULL, 1},
    [F_HESS] = {"nhs_hess_potential", "const double *p, const double *q", "out", NULL, 1},
    [F_A] = {"nhs_constraints", "const double *p, const double *q", "out", NULL, 1},
    [F_DA] = {"nhs_constraints_jacobian", "const double *p, const double *q", "out", NULL, 1},
    [F_B] = {"nhs_affine", "const double *p, const double *q", "out", NULL, 1},
    [F_DB] = {"nhs_affine_jacobian", "const double *p, const double *q", "out", NULL, 0},
    [F_CURVATURE] = {"nhs_curvature", "const double *p, const double *q, const double *v", "out", NULL, 1},
    [F_DERIVATIVE] = {"nhs_derivative", "const double *p, const double *q, const double *w", "out", NULL, 0},
    [F_DAMPING] = {"nhs_damping", "const double *p, double t", NULL, NULL, 0},
    [F_FORCING] = {"nhs_forcing", "const double *p, double t", "out", "1", 0},
    [F_INVARIANTS] = {"nhs_invariants", "const double *p, const double *q, const double *v", "out", NULL, 0},
};

/* The generated lane functions beyond forms[]'s (the names compiled_set looks up). */
#define RESIDUAL_LANES "nhs_constraint_residual_lanes"
#define ACCELERATION_LANES "nhs_acceleration_lanes"

#define MAX_OUT (NH_MAX_N * NH_MAX_N * NH_MAX_N) /* the longest output: ∂M/∂q */
#define MAX_VARS (3 * NH_MAX_N + 1 + NH_MAX_PARAMS)

struct nh_defined_system {
  nh_system_type type;
  nh_param_desc params[NH_MAX_PARAMS];
  nh_affine_constraints affine;
  nh_system_forces forces;
  nh_system_kernels kernels;
  nh_system_knowledge knowledge;
  nh_system_invariants invariants;
  char *names[1 + NH_MAX_PARAMS + NH_MAX_INVARIANTS]; /* the copies the tables point at */
  const char *invariant_names[NH_MAX_INVARIANTS];
  double q0[NH_MAX_N], v0[NH_MAX_N];
  char doc[NH_TEXT_LONG + NH_TEXT_NAME], ic_doc[NH_TEXT_MESSAGE];
  nh_expr_ctx *cx;
  int n, k, nparams;
  int ids[F_COUNT][MAX_OUT]; /* the expressions of each function, in output order */
  int count[F_COUNT];        /* 0: the system has no such function */
  int forcing_zero;          /* F ≡ 0: nhs_forcing's 0 */
  int acceleration;          /* 1: M = I and no damping or forcing, the acceleration kernel below */
  unsigned capabilities;     /* NH_CAP_* the expressions show (particle_structure) */
  int solved_first;          /* constraints_solved_first, as the expressions show it */
  unsigned time_dependence;
  char *source;
  nh_native *lib; /* NULL: interpreted, through slots[slot] */
  int slot;
};

/* The variables' slots: q, v, w (the constraint derivative's direction), t, then the parameters. */
static int slot_q(const nh_defined_system *d, int i) { return i + 0 * d->n; }
static int slot_v(const nh_defined_system *d, int i) { return i + 1 * d->n; }
static int slot_w(const nh_defined_system *d, int i) { return i + 2 * d->n; }
static int slot_t(const nh_defined_system *d) { return 3 * d->n; }
static int slot_p(const nh_defined_system *d, int j) { return 3 * d->n + 1 + j; }

/* ---- the acceleration kernel --------------------------------------------------------------------- */

/* The index-reduced acceleration and its multiplier for M = I without damping or forcing (k > 0),
 * from ∇V (in a on entry), A (k×n) and the curvature term: f = −∇V, C = A Aᵀ, λ = C⁻¹(−A f − curv),
 * a = f + Aᵀλ. These are the operations of nh_acceleration and nh_multiplier (systems/system.c,
 * unit mass: W = Aᵀ) and of nh_spd_solve (core/linalg.c: a division for one constraint, else
 * Cholesky) in their order, so that the kernel's numbers are the generic path's to the bit; C is
 * k×k space. The text is written once: compiled here for the interpreter, and printed into the
 * generated C, where n and k are constants and the loops, unrolled (n ≤ NH_MAX_N = 8, k ≤ NH_MAX_K
 * = 4; at -O2 GCC would keep them), cost half of what they would. -1 where C is not positive
 * definite. */
#define SHARED_WITH_GENERATED_C(text, ...)                                                                             \
  __VA_ARGS__                                                                                                          \
  static const char text[] = #__VA_ARGS__;
/* clang-format off: the function as a macro argument, formatted as the function it is */
SHARED_WITH_GENERATED_C(
    unit_mass_acceleration_text,
    static int nhs_unit_mass_acceleration(int n, int k, const double *A, const double *curv, double *C, double *a,
                                          double *lambda) {
      _Pragma("GCC unroll 8") for (int i = 0; i < n; i++) a[i] = -a[i];
      _Pragma("GCC unroll 4") for (int x = 0; x < k; x++) _Pragma("GCC unroll 4") for (int y = 0; y < k; y++) {
        double s = 0;
        _Pragma("GCC unroll 8") for (int i = 0; i < n; i++) s += A[x * n + i] * A[y * n + i];
        C[x * k + y] = s;
      }
      _Pragma("GCC unroll 4") for (int x = 0; x < k; x++) {
        double s = 0;
        _Pragma("GCC unroll 8") for (int i = 0; i < n; i++) s += A[x * n + i] * a[i];
        lambda[x] = -s - curv[x];
      }
      if (k == 1) {
        if (!(C[0] > 0) || !isfinite(C[0])) return -1;
        lambda[0] /= C[0];
      } else {
        for (int j = 0; j < k; j++) {
          double d = C[j * k + j];
          for (int m = 0; m < j; m++) d -= C[j * k + m] * C[j * k + m];
          if (!(d > 0) || !isfinite(d)) return -1;
          const double ljj = sqrt(d);
          C[j * k + j] = ljj;
          for (int i = j + 1; i < k; i++) {
            double s = C[i * k + j];
            for (int m = 0; m < j; m++) s -= C[i * k + m] * C[j * k + m];
            C[i * k + j] = s / ljj;
          }
        }
        for (int i = 0; i < k; i++) {
          double s = lambda[i];
          for (int m = 0; m < i; m++) s -= C[i * k + m] * lambda[m];
          lambda[i] = s / C[i * k + i];
        }
        for (int i = k - 1; i >= 0; i--) {
          double s = lambda[i];
          for (int m = i + 1; m < k; m++) s -= C[m * k + i] * lambda[m];
          lambda[i] = s / C[i * k + i];
        }
      }
      _Pragma("GCC unroll 8") for (int i = 0; i < n; i++) _Pragma("GCC unroll 4") for (int x = 0; x < k; x++) a[i] +=
          A[x * n + i] * lambda[x];
      return 0;
    })
/* clang-format on */

/* ---- the interpreter ---------------------------------------------------------------------------- */

static void interpret(const nh_defined_system *d, function_id f, const double *p, const double *q, const double *v,
                      const double *w, double t, double *out) {
  double vars[MAX_VARS] = {0};
  for (int i = 0; i < d->n; i++) {
    if (q) vars[slot_q(d, i)] = q[i];
    if (v) vars[slot_v(d, i)] = v[i];
    if (w) vars[slot_w(d, i)] = w[i];
  }
  vars[slot_t(d)] = t;
  for (int j = 0; j < d->nparams; j++) vars[slot_p(d, j)] = p[j];
  for (int i = 0; i < d->count[f]; i++) out[i] = nh_expr_eval(d->cx, d->ids[f][i], vars);
}

/* The acceleration kernel on the interpreter: A, ∇V and the curvature term as their functions
 * evaluate them, then the shared algebra. */
static int interpret_acceleration(const nh_defined_system *d, const double *p, const double *q, const double *v,
                                  double *a, double *lambda) {
  double A[NH_MAX_K * NH_MAX_N], curv[NH_MAX_K], C[NH_MAX_K * NH_MAX_K];
  interpret(d, F_A, p, q, 0, 0, 0, A);
  interpret(d, F_GRAD, p, q, 0, 0, 0, a);
  interpret(d, F_CURVATURE, p, q, v, 0, 0, curv);
  return nhs_unit_mass_acceleration(d->n, d->k, A, curv, C, a, lambda);
}

/* The interface has no context pointer: an interpreted system is reached through one of a few
 * slots, each with its own set of functions. */
#define NH_DEFINED_SLOTS 8
static nh_defined_system *slots[NH_DEFINED_SLOTS];

#define SLOT_FUNCTIONS(s)                                                                                              \
  static void mass_##s(const double *p, const double *q, double *M) { interpret(slots[s], F_MASS, p, q, 0, 0, 0, M); } \
  static void dmass_##s(const double *p, const double *q, double *o) {                                                 \
    interpret(slots[s], F_DMASS, p, q, 0, 0, 0, o);                                                                    \
  }                                                                                                                    \
  static double potential_##s(const double *p, const double *q) {                                                      \
    double V;                                                                                                          \
    interpret(slots[s], F_POTENTIAL, p, q, 0, 0, 0, &V);                                                               \
    return V;                                                                                                          \
  }                                                                                                                    \
  static void grad_##s(const double *p, const double *q, double *o) { interpret(slots[s], F_GRAD, p, q, 0, 0, 0, o); } \
  static void hess_##s(const double *p, const double *q, double *o) { interpret(slots[s], F_HESS, p, q, 0, 0, 0, o); } \
  static void a_##s(const double *p, const double *q, double *o) { interpret(slots[s], F_A, p, q, 0, 0, 0, o); }       \
  static void da_##s(const double *p, const double *q, double *o) { interpret(slots[s], F_DA, p, q, 0, 0, 0, o); }     \
  static void b_##s(const double *p, const double *q, double *o) { interpret(slots[s], F_B, p, q, 0, 0, 0, o); }       \
  static void db_##s(const double *p, const double *q, double *o) { interpret(slots[s], F_DB, p, q, 0, 0, 0, o); }     \
  static void curvature_##s(const double *p, const double *q, const double *v, double *o) {                            \
    interpret(slots[s], F_CURVATURE, p, q, v, 0, 0, o);                                                                \
  }                                                                                                                    \
  static void derivative_##s(const double *p, const double *q, const double *w, double *o) {                           \
    interpret(slots[s], F_DERIVATIVE, p, q, 0, w, 0, o);                                                               \
  }                                                                                                                    \
  static double damping_##s(const double *p, double t) {                                                               \
    double a;                                                                                                          \
    interpret(slots[s], F_DAMPING, p, 0, 0, 0, t, &a);                                                                 \
    return a;                                                                                                          \
  }                                                                                                                    \
  static int forcing_##s(const double *p, double t, double *o) {                                                       \
    interpret(slots[s], F_FORCING, p, 0, 0, 0, t, o);                                                                  \
    return 1;                                                                                                          \
  }                                                                                                                    \
  static void invariants_##s(const double *p, const double *q, const double *v, double *o) {                           \
    interpret(slots[s], F_INVARIANTS, p, q, v, 0, 0, o);                                                               \
  }                                                                                                                    \
  static int acceleration_##s(const double *p, double t NH_UNUSED, const double *q, const double *v, double *a,        \
                              double *l) {                                                                             \
    return interpret_acceleration(slots[s], p, q, v, a, l);                                                            \
  }
SLOT_FUNCTIONS(0)
SLOT_FUNCTIONS(1)
SLOT_FUNCTIONS(2)
SLOT_FUNCTIONS(3)
SLOT_FUNCTIONS(4)
SLOT_FUNCTIONS(5)
SLOT_FUNCTIONS(6)
SLOT_FUNCTIONS(7)

/* The interface's functions of one system, wherever they come from. */
typedef struct {
  void (*mass)(const double *, const double *, double *);
  void (*dmass)(const double *, const double *, double *);
  double (*potential)(const double *, const double *);
  void (*grad)(const double *, const double *, double *);
  void (*hess)(const double *, const double *, double *);
  void (*a)(const double *, const double *, double *);
  void (*da)(const double *, const double *, double *);
  void (*b)(const double *, const double *, double *);
  void (*db)(const double *, const double *, double *);
  void (*curvature)(const double *, const double *, const double *, double *);
  void (*derivative)(const double *, const double *, const double *, double *);
  double (*damping)(const double *, double);
  int (*forcing)(const double *, double, double *);
  void (*invariants)(const double *, const double *, const double *, double *);
  int (*acceleration)(const double *, double, const double *, const double *, double *, double *);
  /* The lane kernels: generated C only (the interpreter's sets leave them NULL, so that
   * systems/system.c's fallbacks call the interpreted functions lane by lane). */
  void (*grad_lanes)(const double *, const double *, double *);
  void (*hess_lanes)(const double *, const double *, double *);
  void (*a_lanes)(const double *, const double *, double *);
  void (*da_lanes)(const double *, const double *, double *);
  void (*residual_lanes)(const double *, const double *, const double *, double *);
  void (*acceleration_lanes)(const double *, const double *, const double *, const double *, double *, double *, int *);
} function_set;

/* Designated, so that the lane kernels the interpreter has none of stay NULL without a word. */
#define SLOT_SET(s)                                                                                                    \
  {                                                                                                                    \
    .mass = mass_##s, .dmass = dmass_##s, .potential = potential_##s, .grad = grad_##s, .hess = hess_##s, .a = a_##s,  \
    .da = da_##s, .b = b_##s, .db = db_##s, .curvature = curvature_##s, .derivative = derivative_##s,                  \
    .damping = damping_##s, .forcing = forcing_##s, .invariants = invariants_##s, .acceleration = acceleration_##s     \
  }
static const function_set slot_sets[NH_DEFINED_SLOTS] = {SLOT_SET(0), SLOT_SET(1), SLOT_SET(2), SLOT_SET(3),
                                                         SLOT_SET(4), SLOT_SET(5), SLOT_SET(6), SLOT_SET(7)};

/* F ≡ 0 whatever t: what the interface's forcing returns 0 for. */
static int no_forcing(const double *p NH_UNUSED, double t NH_UNUSED, double *F NH_UNUSED) { return 0; }
/* α reads t, whatever the parameters (the only time dependence a definition can have). */
static unsigned damping_varies(const double *p NH_UNUSED) { return NH_SYS_TIME_DAMPING; }

/* ---- errors -------------------------------------------------------------------------------------- */

typedef struct {
  const void **origin;
  const void *whole; /* the definition's own origin */
  char *err;
  size_t errlen;
} refusal;

/* The refusal at origin (NULL: the definition as a whole); -1. */
__attribute__((format(printf, 3, 4))) static int refuse(const refusal *r, const void *origin, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(r->err, r->errlen, fmt, ap);
  va_end(ap);
  *r->origin = origin ? origin : r->whole;
  return -1;
}

/* ---- parsing and derivatives --------------------------------------------------------------------- */

static int valid_name(const char *s) {
  if (!s || !(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z'))) return 0;
  for (; *s; s++)
    if (!(*s == '_' || (*s >= 'A' && *s <= 'Z') || (*s >= 'a' && *s <= 'z') || (*s >= '0' && *s <= '9'))) return 0;
  return 1;
}

static int declare(nh_defined_system *d, const nh_system_definition *def, const refusal *r, const void *origin,
                   const char *what, const char *name, int slot) {
  char msg[NH_TEXT_MESSAGE];
  if (name && strcmp(name, "t") == 0 && slot != slot_t(d))
    return refuse(r, origin, "%s 't': t is the time; choose another name", what);
  for (int i = 0; name && i < d->n; i++) /* vx is x's velocity: no other name may be it */
    if (slot != slot_v(d, i) && name[0] == 'v' && def->coords[i] && strcmp(name + 1, def->coords[i]) == 0)
      return refuse(r, origin, "%s '%s': %s is the velocity of coordinate '%s'; choose another name", what, name, name,
                    def->coords[i]);
  if (!valid_name(name))
    return refuse(r, origin, "%s '%s' is not a name (a letter or '_', then letters, digits, '_')", what,
                  name ? name : "");
  if (nh_expr_declare(d->cx, name, slot, msg, sizeof msg) < 0) return refuse(r, origin, "%s '%s': %s", what, name, msg);
  return 0;
}

/* Every name the expressions may read. */
static int declare_names(nh_defined_system *d, const nh_system_definition *def, const refusal *r) {
  char velocity[NH_TEXT_NAME];
  for (int i = 0; i < d->n; i++)
    for (int j = 0; j < i; j++)
      if (def->coords[i] && def->coords[j] && strcmp(def->coords[i], def->coords[j]) == 0)
        return refuse(r, def->coords_origin, "coordinate '%s' is named twice", def->coords[i]);
  if (declare(d, def, r, NULL, "time", "t", slot_t(d)) < 0) return -1;
  for (int i = 0; i < d->n; i++) {
    if (declare(d, def, r, def->coords_origin, "coordinate", def->coords[i], slot_q(d, i)) < 0) return -1;
    snprintf(velocity, sizeof velocity, "v%s", def->coords[i]);
    if (declare(d, def, r, def->coords_origin, "velocity", velocity, slot_v(d, i)) < 0) return -1;
  }
  for (int j = 0; j < d->nparams; j++)
    if (declare(d, def, r, def->param_origins[j], "parameter", def->param_names[j], slot_p(d, j)) < 0) return -1;
  return 0;
}

/* What a quantity may read. */
enum { READS_Q = 1, READS_V = 2, READS_T = 4 };

/* The first variable e reads that its place does not pass, as a name for the message; NULL: none. */
static const char *forbidden_read(const nh_defined_system *d, const nh_system_definition *def, int e, unsigned reads,
                                  char *buf, size_t len) {
  for (int i = 0; i < d->n; i++) {
    if (!(reads & READS_Q) && nh_expr_depends(d->cx, e, slot_q(d, i))) return def->coords[i];
    if (!(reads & READS_V) && nh_expr_depends(d->cx, e, slot_v(d, i))) {
      snprintf(buf, len, "v%s", def->coords[i]);
      return buf;
    }
  }
  return !(reads & READS_T) && nh_expr_depends(d->cx, e, slot_t(d)) ? "t" : NULL;
}

static const char *reads_text(unsigned reads) {
  switch (reads) {
  case READS_Q:
    return "the coordinates and the parameters";
  case READS_T:
    return "t and the parameters";
  default:
    return "the coordinates, the velocities and the parameters";
  }
}

/* The expression of one text, or -1 refused with its place (what: "potential", "constraints[0][2]"). */
static int parse(nh_defined_system *d, const nh_system_definition *def, const refusal *r, const nh_defined_text *x,
                 const char *what, unsigned reads) {
  char msg[NH_TEXT_MESSAGE], name[NH_TEXT_NAME];
  int where = 0;
  if (!x->text) return refuse(r, x->origin, "%s: missing", what);
  const int e = nh_expr_parse(d->cx, x->text, &where, msg, sizeof msg);
  if (e < 0) return refuse(r, x->origin, "%s: %s in '%s' (at '%.40s')", what, msg, x->text, x->text + where);
  const char *bad = forbidden_read(d, def, e, reads, name, sizeof name);
  if (bad)
    return refuse(r, x->origin, "%s may read %s only, not '%s' (in '%s')", what, reads_text(reads), bad, x->text);
  return e;
}

static int parse_list(nh_defined_system *d, const nh_system_definition *def, const refusal *r, const nh_defined_text *x,
                      int count, int cols, const char *what, unsigned reads, int *ids) {
  char place[NH_TEXT_NAME];
  for (int i = 0; i < count; i++) {
    if (cols > 0)
      snprintf(place, sizeof place, "%s[%d][%d]", what, i / cols, i % cols);
    else
      snprintf(place, sizeof place, "%s[%d]", what, i);
    if ((ids[i] = parse(d, def, r, &x[i], place, reads)) < 0) return -1;
  }
  return 0;
}

/* ∂e/∂q^l for l < n into out; -1 out of memory. */
static int gradient(nh_defined_system *d, int e, int *out) {
  for (int l = 0; l < d->n; l++)
    if ((out[l] = nh_expr_diff(d->cx, e, slot_q(d, l))) < 0) return -1;
  return 0;
}

static int sum_products(nh_defined_system *d, const int *a, const int *b, int count) {
  int s = nh_expr_number(d->cx, 0);
  for (int i = 0; i < count && s >= 0; i++) s = nh_expr_add(d->cx, s, nh_expr_mul(d->cx, a[i], b[i]));
  return s;
}

static int mechanics(nh_defined_system *d, const nh_system_definition *def, const refusal *r) {
  const int n = d->n;
  int *V = d->ids[F_POTENTIAL], *M = d->ids[F_MASS];
  if ((V[0] = parse(d, def, r, &def->potential, "potential", READS_Q)) < 0) return -1;
  d->count[F_POTENTIAL] = 1, d->count[F_GRAD] = n, d->count[F_HESS] = n * n;
  if (gradient(d, V[0], d->ids[F_GRAD]) < 0) return -1;
  for (int i = 0; i < n; i++)
    for (int j = i; j < n; j++) /* one of ∂_i∂_j V and ∂_j∂_i V, so that ∇²V is symmetric to the bit */
      if ((d->ids[F_HESS][i * n + j] = d->ids[F_HESS][j * n + i] =
               nh_expr_diff(d->cx, d->ids[F_GRAD][i], slot_q(d, j))) < 0)
        return -1;
  d->count[F_MASS] = n * n;
  for (int i = 0; i < n * n; i++)
    if (def->mass_identity) M[i] = nh_expr_number(d->cx, i % (n + 1) == 0);
  if (!def->mass_identity && parse_list(d, def, r, def->mass, n * n, n, "mass", READS_Q, M) < 0) return -1;
  for (int i = 0; i < n; i++)
    for (int j = i + 1; j < n; j++)
      if (M[i * n + j] != M[j * n + i])
        return refuse(r, def->mass[j * n + i].origin,
                      "mass is not symmetric: mass[%d][%d] = '%s' but mass[%d][%d] = '%s'", i, j,
                      def->mass[i * n + j].text, j, i, def->mass[j * n + i].text);
  int variable = 0;
  for (int i = 0; i < n * n; i++)
    for (int l = 0; l < n; l++) variable |= nh_expr_depends(d->cx, M[i], slot_q(d, l));
  if (variable) {
    d->count[F_DMASS] = n * n * n;
    for (int i = 0; i < n * n; i++)
      if (gradient(d, M[i], &d->ids[F_DMASS][i * n]) < 0) return -1;
  }
  return 0;
}

static int constraints(nh_defined_system *d, const nh_system_definition *def, const refusal *r) {
  const int n = d->n, k = d->k;
  int *A = d->ids[F_A], *b = d->ids[F_B];
  if (parse_list(d, def, r, def->constraints, k * n, n, "constraints", READS_Q, A) < 0) return -1;
  d->count[F_A] = k * n, d->count[F_DA] = k * n * n;
  for (int i = 0; i < k * n; i++)
    if (gradient(d, A[i], &d->ids[F_DA][i * n]) < 0) return -1;
  int affine = 0;
  for (int a = 0; a < k; a++) affine |= def->affine[a].text != NULL;
  for (int a = 0; a < k && affine; a++) {
    char place[NH_TEXT_NAME];
    snprintf(place, sizeof place, "affine[%d]", a);
    const nh_defined_text zero = {"0", NULL};
    if ((b[a] = parse(d, def, r, def->affine[a].text ? &def->affine[a] : &zero, place, READS_Q)) < 0) return -1;
    if (gradient(d, b[a], &d->ids[F_DB][a * n]) < 0) return -1;
  }
  if (affine) d->count[F_B] = k, d->count[F_DB] = k * n;
  /* The kernels: d/dt(A(q)v + b(q)) at fixed v along q̇ = v, and ∂(A(q)w)/∂q, from the rows as
   * sums Σ_i μ^a_i v_i (what the interface's nh_curvature_term and nh_constraint_derivative
   * compute by contracting the dense tensor). */
  int vq[NH_MAX_N], wq[NH_MAX_N], grad[NH_MAX_N];
  for (int i = 0; i < n; i++)
    vq[i] = nh_expr_variable(d->cx, slot_v(d, i)), wq[i] = nh_expr_variable(d->cx, slot_w(d, i));
  for (int a = 0; a < k; a++) {
    int s = sum_products(d, &A[a * n], vq, n);
    if (affine) s = nh_expr_add(d->cx, s, b[a]);
    if (s < 0 || gradient(d, s, grad) < 0) return -1;
    if ((d->ids[F_CURVATURE][a] = sum_products(d, grad, vq, n)) < 0) return -1;
    const int sw = sum_products(d, &A[a * n], wq, n);
    if (sw < 0 || gradient(d, sw, &d->ids[F_DERIVATIVE][a * n]) < 0) return -1;
  }
  d->count[F_CURVATURE] = k, d->count[F_DERIVATIVE] = k * n;
  return 0;
}

static int forces(nh_defined_system *d, const nh_system_definition *def, const refusal *r) {
  if (def->damping.text) {
    if ((d->ids[F_DAMPING][0] = parse(d, def, r, &def->damping, "damping", READS_T)) < 0) return -1;
    d->count[F_DAMPING] = 1;
    if (nh_expr_depends(d->cx, d->ids[F_DAMPING][0], slot_t(d))) d->time_dependence |= NH_SYS_TIME_DAMPING;
  }
  if (def->has_forcing) {
    if (parse_list(d, def, r, def->forcing, d->n, 0, "forcing", READS_T, d->ids[F_FORCING]) < 0) return -1;
    d->count[F_FORCING] = d->n;
    d->forcing_zero = 1;
    for (int i = 0; i < d->n; i++) d->forcing_zero &= nh_expr_is_zero(d->cx, d->ids[F_FORCING][i]);
  }
  if (parse_list(d, def, r, def->invariants, def->ninvariants, 0, "invariants", READS_Q | READS_V,
                 d->ids[F_INVARIANTS]) < 0)
    return -1;
  d->count[F_INVARIANTS] = def->ninvariants;
  return 0;
}

/* ---- generated C --------------------------------------------------------------------------------- */

typedef struct {
  char *text;
  size_t len, cap;
  int failed;
} text_buffer;

__attribute__((format(printf, 2, 3))) static void emit(text_buffer *b, const char *fmt, ...) {
  va_list ap;
  for (int pass = 0; pass < 2 && !b->failed; pass++) {
    va_start(ap, fmt);
    const int need = vsnprintf(b->text ? b->text + b->len : NULL, b->text ? b->cap - b->len : 0, fmt, ap);
    va_end(ap);
    if (need < 0)
      b->failed = 1;
    else if (b->text && (size_t)need < b->cap - b->len) {
      b->len += (size_t)need;
      return;
    } else {
      size_t cap = 2 * (b->cap + (size_t)need) + 256;
      char *t = realloc(b->text, cap);
      if (!t)
        b->failed = 1;
      else
        b->text = t, b->cap = cap;
    }
  }
}

/* The C names of the variables: only these, numbers and operators reach the compiler. With lanes,
 * q, v and w of lane l in the lane layout (q[i] is q[i*NH_LANES + l]); p and t are every lane's. */
static void c_names(const nh_defined_system *d, int lanes, char (*store)[16], const char **names) {
  const char *const fmt = lanes ? "%c[%d + l]" : "%c[%d]";
  for (int i = 0; i < d->n; i++) {
    const int at = lanes ? i * NH_LANES : i;
    snprintf(store[slot_q(d, i)], 16, fmt, 'q', at);
    snprintf(store[slot_v(d, i)], 16, fmt, 'v', at);
    snprintf(store[slot_w(d, i)], 16, fmt, 'w', at);
  }
  snprintf(store[slot_t(d)], 16, "t");
  for (int j = 0; j < d->nparams; j++) snprintf(store[slot_p(d, j)], 16, "p[%d]", j);
  for (int s = 0; s < slot_p(d, d->nparams); s++) names[s] = store[s];
}

static void emit_expression(text_buffer *b, const nh_defined_system *d, int e, const char *const *names) {
  const size_t need = nh_expr_print_c(d->cx, e, names, NULL, 0);
  char *s = malloc(need + 1);
  if (!s) {
    b->failed = 1;
    return;
  }
  nh_expr_print_c(d->cx, e, names, s, need + 1);
  emit(b, "%s", s);
  free(s);
}

/* Function f, or with lanes (forms[f].lanes) its lane version NAME_lanes: the same expression
 * texts, printed with the lane names, once per lane in an `omp simd` loop. Each lane performs the
 * scalar function's operations in its order (no contraction, no fast-math: NH_NATIVE_FLAGS), so
 * its numbers are the scalar function's bits at that lane's point, vectorized or not. */
static void emit_function(text_buffer *b, const nh_defined_system *d, function_id f, int lanes,
                          const char *const *names) {
  const char *const indent = lanes ? "    " : "  ";
  const char *const type = !forms[f].out ? "double" : forms[f].ret ? "int" : "void";
  emit(b, "%s %s%s(%s", type, forms[f].name, lanes ? "_lanes" : "", forms[f].params);
  /* A lane function's out is restrict (its callers never pass q or v as out, which the scalar
   * functions do not allow either): so GCC's -O2 vectorizes the lane loop without a run-time alias
   * check, where `omp simd` is ignored (NH_NATIVE_FLAGS has no -fopenmp-simd). */
  if (forms[f].out) emit(b, ", double *%s%s", lanes ? "restrict " : "", forms[f].out);
  emit(b, ") {\n");
  if (lanes) emit(b, "  _Pragma(\"omp simd\") for (int l = 0; l < %d; l++) {\n", NH_LANES);
  for (int i = 0; i < d->count[f]; i++) {
    if (lanes) emit(b, "%s%s[%d + l] = ", indent, forms[f].out, i * NH_LANES);
    else if (forms[f].out) emit(b, "%s%s[%d] = ", indent, forms[f].out, i);
    else emit(b, "%sreturn ", indent);
    emit_expression(b, d, d->ids[f][i], names);
    emit(b, ";\n");
  }
  if (lanes) emit(b, "  }\n");
  if (forms[f].ret) emit(b, "  return %s;\n", forms[f].ret);
  emit(b, "}\n");
}

/* Whether the table has its kernels group (systems/system.h's nh_system_kernels), which the lane
 * kernels belong to: a system with constraints. An unconstrained definition keeps kernels NULL
 * (tests/systems/test_defined_paths.c) and so its ∇V and ∇²V go through the scalar functions lane
 * by lane. */
static int has_kernels(const nh_defined_system *d) { return d->k > 0; }

/* nh_constraint_residual (systems/system.c) in lanes: r_a = b_a (or 0), r_a += A_ai v_i in i's
 * order, max over a of |r_a| from 0 by fmax, each lane as the scalar path computes it, from A (and
 * b) at the lanes' points by nhs_constraints_lanes (nhs_affine_lanes). */
static void emit_residual_lanes(text_buffer *b, const nh_defined_system *d) {
  const int n = d->n, k = d->k, affine = d->count[F_B] > 0;
  char start[32] = "0"; /* r's first term: b_a, or nh_constraint_terms' 0 */
  if (affine) snprintf(start, sizeof start, "b_[a * %d + l]", NH_LANES);
  emit(b,
       "void " RESIDUAL_LANES "(const double *p, const double *q, const double *v, double *out) {\n"
       "  double A_[%d], b_[%d];\n"
       "  nhs_constraints_lanes(p, q, A_);\n"
       "  %s\n"
       "  _Pragma(\"omp simd\") for (int l = 0; l < %d; l++) {\n"
       "    double largest = 0;\n"
       "    for (int a = 0; a < %d; a++) {\n"
       "      double r = %s;\n"
       "      for (int i = 0; i < %d; i++) r += A_[(a * %d + i) * %d + l] * v[i * %d + l];\n"
       "      largest = fmax(largest, fabs(r));\n"
       "    }\n"
       "    out[l] = largest;\n"
       "  }\n"
       "}\n",
       k * n * NH_LANES, k * NH_LANES, affine ? "nhs_affine_lanes(p, q, b_);" : "(void)b_;", NH_LANES, k, start, n, n,
       NH_LANES, NH_LANES);
}

/* The acceleration kernel: A, ∇V and the curvature term written out (the expressions of nhs_constraints,
 * nhs_grad_potential and nhs_curvature), then the shared algebra. */
static void emit_acceleration(text_buffer *b, const nh_defined_system *d, const char *const *names) {
  static const struct {
    function_id f;
    const char *out;
  } parts[] = {{F_A, "A_"}, {F_GRAD, "out"}, {F_CURVATURE, "curv_"}};
  emit(b, "%s\n", unit_mass_acceleration_text);
  emit(b,
       "int nhs_acceleration(const double *p, double t, const double *q, const double *v, double *out, double "
       "*lambda) {\n  double A_[%d], curv_[%d], C_[%d];\n  (void)p, (void)t, (void)v;\n",
       d->k * d->n, d->k, d->k * d->k);
  for (size_t f = 0; f < sizeof parts / sizeof *parts; f++)
    for (int i = 0; i < d->count[parts[f].f]; i++) {
      emit(b, "  %s[%d] = ", parts[f].out, i);
      emit_expression(b, d, d->ids[parts[f].f][i], names);
      emit(b, ";\n");
    }
  emit(b, "  return nhs_unit_mass_acceleration(%d, %d, A_, curv_, C_, out, lambda);\n}\n", d->n, d->k);
}

/* The acceleration kernel in lanes: A, ∇V and the curvature term at every lane's point by their
 * lane functions (nhs_acceleration's expressions, the same bits), then nhs_unit_mass_acceleration's
 * algebra, with its status and its a also where it returns -1 (−∇V: what nh_acceleration's kernel
 * leaves). For one constraint, the common case, the algebra's operations in lanes, in its order
 * (c = Σ A_i A_i, s = Σ A_i (−g_i), λ = (−s − curv)/c where c is positive and finite, a_i = −g_i +
 * A_i λ), so that it vectorizes too; for more, Cholesky's branches are per lane and the shared
 * function runs lane by lane. */
static void emit_acceleration_lanes(text_buffer *b, const nh_defined_system *d) {
  const int n = d->n, k = d->k, L = NH_LANES;
  emit(b,
       "void " ACCELERATION_LANES "(const double *p, const double *t, const double *q, const double *v, double *out, "
       "double *lambda_, int *status) {\n"
       "  double A_[%d], g_[%d], curv_[%d];\n"
       "  (void)t;\n"
       "  nhs_constraints_lanes(p, q, A_);\n"
       "  nhs_grad_potential_lanes(p, q, g_);\n"
       "  nhs_curvature_lanes(p, q, v, curv_);\n",
       k * n * L, n * L, k * L);
  if (k == 1)
    emit(b,
         "  double c_[%d] = {0}, s_[%d] = {0}, m_[%d];\n"
         "  for (int i = 0; i < %d; i++)\n"
         "    _Pragma(\"omp simd\") for (int l = 0; l < %d; l++) {\n"
         "      const double a = A_[i * %d + l];\n"
         "      c_[l] += a * a, s_[l] += a * -g_[i * %d + l];\n"
         "    }\n"
         "  _Pragma(\"omp simd\") for (int l = 0; l < %d; l++) {\n"
         "    status[l] = c_[l] > 0 && isfinite(c_[l]) ? 0 : -1;\n"
         "    m_[l] = status[l] == 0 ? (-s_[l] - curv_[l]) / c_[l] : 0;\n"
         "    lambda_[l] = m_[l];\n"
         "  }\n"
         "  for (int i = 0; i < %d; i++)\n"
         "    _Pragma(\"omp simd\") for (int l = 0; l < %d; l++)\n"
         "      out[i * %d + l] = status[l] == 0 ? -g_[i * %d + l] + A_[i * %d + l] * m_[l] : -g_[i * %d + l];\n"
         "}\n",
         L, L, L, n, L, L, L, L, n, L, L, L, L, L);
  else
    emit(b,
         "  for (int l = 0; l < %d; l++) {\n"
         "    double A[%d], curv[%d], C[%d], acc[%d], lambda[%d];\n"
         "    for (int i = 0; i < %d; i++) A[i] = A_[i * %d + l];\n"
         "    for (int i = 0; i < %d; i++) curv[i] = curv_[i * %d + l];\n"
         "    for (int i = 0; i < %d; i++) acc[i] = g_[i * %d + l];\n"
         "    status[l] = nhs_unit_mass_acceleration(%d, %d, A, curv, C, acc, lambda);\n"
         "    for (int i = 0; i < %d; i++) out[i * %d + l] = acc[i];\n"
         "    for (int i = 0; i < %d; i++) lambda_[i * %d + l] = lambda[i];\n"
         "  }\n"
         "}\n",
         L, k * n, k, k * k, n, k, k * n, L, k, L, n, L, n, k, n, L, k, L);
}

static char *generate(const nh_defined_system *d) {
  char store[MAX_VARS][16], lane_store[MAX_VARS][16];
  const char *names[MAX_VARS], *lane_names[MAX_VARS];
  c_names(d, 0, store, names);
  c_names(d, 1, lane_store, lane_names);
  text_buffer b = {0};
  emit(&b,
       "/* nhbench: system '%s', generated from its expressions (systems/defined.c) */\n"
       "#include <math.h>\n",
       d->type.name);
  for (int f = 0; f < F_COUNT; f++) {
    if (d->count[f] == 0) continue;
    emit_function(&b, d, (function_id)f, 0, names);
    if (forms[f].lanes && has_kernels(d)) emit_function(&b, d, (function_id)f, 1, lane_names);
  }
  if (has_kernels(d)) emit_residual_lanes(&b, d);
  if (d->acceleration) emit_acceleration(&b, d, names);
  if (d->acceleration) emit_acceleration_lanes(&b, d);
  if (b.failed) free(b.text);
  return b.failed ? NULL : b.text;
}

/* ---- the table ----------------------------------------------------------------------------------- */

/* *sym = the object's symbol name where wanted (else NULL); -1 with the refusal's message where a
 * wanted one is missing: a cached object that loads but is not what the source makes. */
static int lookup(const nh_defined_system *d, int wanted, const char *name, void **sym, char *err, size_t errlen) {
  *sym = wanted ? nh_native_symbol(d->lib, name) : NULL;
  if (wanted && !*sym) {
    snprintf(err, errlen, "generated code has no %s", name);
    return -1;
  }
  return 0;
}

static int compiled_set(nh_defined_system *d, function_set *fs, char *err, size_t errlen) {
  void *sym[F_COUNT], *lanes[F_COUNT], *acceleration, *residual_lanes, *acceleration_lanes;
  char name[NH_TEXT_NAME];
  for (int f = 0; f < F_COUNT; f++)
    if (lookup(d, d->count[f] > 0, forms[f].name, &sym[f], err, errlen) < 0) return -1;
  if (lookup(d, d->acceleration, "nhs_acceleration", &acceleration, err, errlen) < 0) return -1;
  for (int f = 0; f < F_COUNT; f++) {
    snprintf(name, sizeof name, "%s_lanes", forms[f].name);
    if (lookup(d, d->count[f] > 0 && forms[f].lanes && has_kernels(d), name, &lanes[f], err, errlen) < 0) return -1;
  }
  if (lookup(d, has_kernels(d), RESIDUAL_LANES, &residual_lanes, err, errlen) < 0 ||
      lookup(d, d->acceleration, ACCELERATION_LANES, &acceleration_lanes, err, errlen) < 0)
    return -1;
  *fs = (function_set){
      .mass = (void (*)(const double *, const double *, double *))sym[F_MASS],
      .dmass = (void (*)(const double *, const double *, double *))sym[F_DMASS],
      .potential = (double (*)(const double *, const double *))sym[F_POTENTIAL],
      .grad = (void (*)(const double *, const double *, double *))sym[F_GRAD],
      .hess = (void (*)(const double *, const double *, double *))sym[F_HESS],
      .a = (void (*)(const double *, const double *, double *))sym[F_A],
      .da = (void (*)(const double *, const double *, double *))sym[F_DA],
      .b = (void (*)(const double *, const double *, double *))sym[F_B],
      .db = (void (*)(const double *, const double *, double *))sym[F_DB],
      .curvature = (void (*)(const double *, const double *, const double *, double *))sym[F_CURVATURE],
      .derivative = (void (*)(const double *, const double *, const double *, double *))sym[F_DERIVATIVE],
      .damping = (double (*)(const double *, double))sym[F_DAMPING],
      .forcing = (int (*)(const double *, double, double *))sym[F_FORCING],
      .invariants = (void (*)(const double *, const double *, const double *, double *))sym[F_INVARIANTS],
      .acceleration = (int (*)(const double *, double, const double *, const double *, double *, double *))acceleration,
      .grad_lanes = (void (*)(const double *, const double *, double *))lanes[F_GRAD],
      .hess_lanes = (void (*)(const double *, const double *, double *))lanes[F_HESS],
      .a_lanes = (void (*)(const double *, const double *, double *))lanes[F_A],
      .da_lanes = (void (*)(const double *, const double *, double *))lanes[F_DA],
      .residual_lanes = (void (*)(const double *, const double *, const double *, double *))residual_lanes,
      .acceleration_lanes = (void (*)(const double *, const double *, const double *, const double *, double *,
                                      double *, int *))acceleration_lanes,
  };
  return 0;
}

/* The evaluation: compiled where asked and possible, else a free interpreter slot. */
static int attach(nh_defined_system *d, nh_defined_mode mode, function_set *fs, const refusal *r, char *note,
                  size_t notelen) {
  char msg[NH_TEXT_MESSAGE] = "";
  if (mode != NH_DEFINED_INTERPRETED) {
    int fresh = 0;
    d->lib = nh_native_load(d->source, &fresh, msg, sizeof msg);
    if (d->lib) return compiled_set(d, fs, msg, sizeof msg) < 0 ? refuse(r, NULL, "%s", msg) : 0;
    if (mode == NH_DEFINED_COMPILED) return refuse(r, NULL, "system '%s' could not be compiled: %s", d->type.name, msg);
  }
  d->slot = 0;
  while (d->slot < NH_DEFINED_SLOTS && slots[d->slot]) d->slot++;
  if (d->slot == NH_DEFINED_SLOTS) {
    d->slot = -1; /* holds none */
    return refuse(r, NULL, "more than %d interpreted systems at once", NH_DEFINED_SLOTS);
  }
  slots[d->slot] = d;
  *fs = slot_sets[d->slot];
  if (note && msg[0])
    snprintf(note, notelen, "system '%s' runs on the expression interpreter, several times slower than compiled: %s",
             d->type.name, msg);
  return 0;
}

static char *copy(nh_defined_system *d, int at, const char *s) {
  if ((d->names[at] = malloc(strlen(s) + 1))) strcpy(d->names[at], s);
  return d->names[at];
}

static int describe(nh_defined_system *d, const nh_system_definition *def, const function_set *fs) {
  const int n = d->n;
  if (!copy(d, 0, def->name)) return -1;
  for (int j = 0; j < d->nparams; j++) {
    if (!copy(d, 1 + j, def->param_names[j])) return -1;
    d->params[j] = (nh_param_desc){.name = d->names[1 + j],
                                   .kind = NH_PARAM_REAL,
                                   .def = def->param_values[j],
                                   .min = -HUGE_VAL,
                                   .max = HUGE_VAL,
                                   .help = "defined in the spec"};
  }
  for (int i = 0; i < def->ninvariants; i++)
    if (!(d->invariant_names[i] = copy(d, 1 + NH_MAX_PARAMS + i, def->invariant_names[i]))) return -1;
  memcpy(d->q0, def->q0, sizeof d->q0);
  memcpy(d->v0, def->v0, sizeof d->v0);
  char v[NH_TEXT_LONG];
  nh_expr_print(d->cx, d->ids[F_POTENTIAL][0], v, sizeof v);
  snprintf(d->doc, sizeof d->doc, "Defined in a spec: %d coordinates, %d constraints, V = %s.", n, d->k, v);
  snprintf(d->ic_doc, sizeof d->ic_doc, "the definition's q0 and v0");
  d->invariants =
      (nh_system_invariants){.count = def->ninvariants, .names = d->invariant_names, .values = fs->invariants};
  d->affine = (nh_affine_constraints){.values = fs->b, .jacobian = fs->db};
  d->forces = (nh_system_forces){.damping = d->count[F_DAMPING] ? fs->damping : NULL,
                                 .forcing = !d->count[F_FORCING] ? NULL
                                            : d->forcing_zero    ? no_forcing
                                                                 : fs->forcing,
                                 .time_dependence = d->time_dependence ? damping_varies : NULL};
  d->kernels = (nh_system_kernels){.constraint_curvature = fs->curvature,
                                   .constraint_derivative = fs->derivative,
                                   .acceleration = d->acceleration ? fs->acceleration : NULL,
                                   .acceleration_lanes = fs->acceleration_lanes,
                                   .constraint_residual_lanes = fs->residual_lanes,
                                   .grad_potential_lanes = fs->grad_lanes,
                                   .constraints_lanes = fs->a_lanes,
                                   .hess_potential_lanes = fs->hess_lanes,
                                   .constraints_jacobian_lanes = fs->da_lanes};
  d->knowledge = (nh_system_knowledge){
      .invariants = def->ninvariants ? &d->invariants : NULL,
      .sample_box = def->sample_box,
      .sampler_doc = d->count[F_B]
                         ? "none: the generic sampler draws on linear homogeneous constraints only"
                         : "generic (spec/newmark.md 6 A10): q uniform in the definition's sample box with "
                           "V(q) < E - 0.1, v ~ N(0, I) projected on D and rescaled to kinetic energy E - V(q)",
  };
  d->type = (nh_system_type){.name = d->names[0],
                             .doc = d->doc,
                             .n = n,
                             .k = d->k,
                             .params = d->params,
                             .nparams = d->nparams,
                             .q0 = d->q0,
                             .v0 = d->v0,
                             .ic_doc = d->ic_doc,
                             .mass = fs->mass,
                             .mass_jacobian = d->count[F_DMASS] ? fs->dmass : NULL,
                             .potential = fs->potential,
                             .grad_potential = fs->grad,
                             .hess_potential = fs->hess,
                             .constraints = d->k ? fs->a : nh_no_constraints,
                             .constraints_jacobian = d->k ? fs->da : nh_no_constraints,
                             .affine = d->count[F_B] ? &d->affine : NULL,
                             .forces = d->count[F_DAMPING] || d->count[F_FORCING] ? &d->forces : NULL,
                             .kernels = has_kernels(d) ? &d->kernels : NULL,
                             .knowledge = &d->knowledge,
                             .constraints_solved_first = d->solved_first,
                             .capabilities = d->capabilities};
  return 0;
}

/* ---- Structure the definition has for every parameter value (systems/system.h) ------------------ */

/* Whether e is the number c. */
static int is_number(const nh_defined_system *d, int e, double c) {
  double v;
  return nh_expr_constant(d->cx, e, &v) && v == c;
}

/* M = I to the bit (every entry a constant, 1 on the diagonal and 0 off it: nh_system's unit_mass). */
static int unit_mass(const nh_defined_system *d) {
  for (int i = 0; i < d->n * d->n; i++)
    if (!is_number(d, d->ids[F_MASS][i], i % (d->n + 1) == 0)) return 0;
  return 1;
}

/* Neither damping nor forcing but F ≡ 0. */
static int conservative(const nh_defined_system *d) {
  return !d->count[F_DAMPING] && (!d->count[F_FORCING] || d->forcing_zero);
}

/* M = I, constraints, conservative (nh_free_force is −∇V): the systems the acceleration kernel is
 * for. */
static int unit_mass_conservative(const nh_defined_system *d) {
  return d->k > 0 && !d->count[F_DMASS] && conservative(d) && unit_mass(d);
}

/* constraints_solved_first: A's leading k×k block is the identity, as numbers. */
static int solved_first(const nh_defined_system *d) {
  for (int a = 0; a < d->k; a++)
    for (int i = 0; i < d->k; i++)
      if (!is_number(d, d->ids[F_A][a * d->n + i], a == i)) return 0;
  return d->k > 0;
}

static int free_of_q(const nh_defined_system *d, int e) {
  for (int l = 0; l < d->n; l++)
    if (nh_expr_depends(d->cx, e, slot_q(d, l))) return 0;
  return 1;
}

/* Whether e is 0 at q = 0; -1 out of memory. */
static int zero_at_origin(nh_defined_system *d, int e) {
  for (int l = 0; l < d->n && e >= 0; l++) e = nh_expr_substitute(d->cx, e, slot_q(d, l), nh_expr_number(d->cx, 0));
  return e < 0 ? -1 : nh_expr_is_zero(d->cx, e);
}

/* NH_CAP_PARTICLE_STRUCTURE (systems/system.h), proved on the expressions, so for every parameter
 * value: n = 3, k = 1, M = I, no affine part, conservative; μ = (μ_x, 0, 1) with ∂μ_x/∂q ≡
 * (0, −1, 0) and μ_x(0) ≡ 0, i.e. μ = (−y, 0, 1); ∂V/∂z ≡ 0, ∂²V/∂x² and ∂²V/∂y² one node free of
 * q, the mixed second derivatives ≡ 0 and ∇V(0) ≡ 0, i.e. ∇V = ω²(x, y, 0). Where the rewrites
 * cannot show it (V = ½ω²(x² + y²) written as ½ω²(x + y)² − ω²xy, say) the definition simply lacks
 * the capability. 1 if it has it, -1 out of memory. */
static int particle_structure(nh_defined_system *d) {
  const int *A = d->ids[F_A], *dmu = d->ids[F_DA], *G = d->ids[F_GRAD], *H = d->ids[F_HESS];
  if (d->n != 3 || d->k != 1 || d->count[F_DMASS] || d->count[F_B] || !conservative(d) || !unit_mass(d)) return 0;
  if (!nh_expr_is_zero(d->cx, A[1]) || !is_number(d, A[2], 1) || !nh_expr_is_zero(d->cx, dmu[0]) ||
      !is_number(d, dmu[1], -1) || !nh_expr_is_zero(d->cx, dmu[2]))
    return 0;
  if (!nh_expr_is_zero(d->cx, G[2]) || H[0] != H[4] || !free_of_q(d, H[0]) || !nh_expr_is_zero(d->cx, H[1]) ||
      !nh_expr_is_zero(d->cx, H[2]) || !nh_expr_is_zero(d->cx, H[5]))
    return 0;
  const int mu0 = zero_at_origin(d, A[0]), g0 = zero_at_origin(d, G[0]), g1 = zero_at_origin(d, G[1]);
  return mu0 < 0 || g0 < 0 || g1 < 0 ? -1 : mu0 && g0 && g1;
}

static int check_sizes(const nh_system_definition *def, const refusal *r) {
  if (!def->name || !valid_name(def->name))
    return refuse(r, def->name_origin, "name '%s' is not a name (a letter or '_', then letters, digits, '_')",
                  def->name ? def->name : "");
  if (nh_system_type_find(def->name)) /* its files would pass for the built-in system's */
    return refuse(r, def->name_origin, "name '%s' is a built-in system's: choose another", def->name);
  if (def->n < 1 || def->n > NH_MAX_N)
    return refuse(r, def->coords_origin, "%d coordinates: between 1 and %d", def->n, NH_MAX_N);
  if (def->k < 0 || def->k >= def->n || def->k > NH_MAX_K)
    return refuse(r, def->constraints_origin, "%d constraints for %d coordinates: between 0 and min(%d, n - 1)", def->k,
                  def->n, NH_MAX_K);
  if (def->nparams < 0 || def->nparams > NH_MAX_PARAMS)
    return refuse(r, NULL, "%d parameters: at most %d", def->nparams, NH_MAX_PARAMS);
  if (def->ninvariants < 0 || def->ninvariants > NH_MAX_INVARIANTS)
    return refuse(r, NULL, "%d invariants: at most %d", def->ninvariants, NH_MAX_INVARIANTS);
  if (!(def->sample_box > 0))
    return refuse(r, def->sample_box_origin, "sample_box %g: must be positive", def->sample_box);
  for (int i = 0; i < def->ninvariants; i++)
    if (!valid_name(def->invariant_names[i]))
      return refuse(r, def->invariants[i].origin, "invariant name '%s' is not a name",
                    def->invariant_names[i] ? def->invariant_names[i] : "");
  for (int a = 0; a < NH_MAX_K; a++)
    if (a >= def->k && def->affine[a].text)
      return refuse(r, def->affine[a].origin, "affine[%d]: the definition has %d constraint rows", a, def->k);
  return 0;
}

nh_defined_system *nh_defined_system_build(const nh_system_definition *def, nh_defined_mode mode, const void **origin,
                                           char *err, size_t errlen, char *note, size_t notelen) {
  const refusal r = {origin, def->origin, err, errlen};
  *origin = NULL;
  if (errlen) err[0] = '\0';
  if (note && notelen) note[0] = '\0';
  if (check_sizes(def, &r) < 0) return NULL;
  nh_defined_system *d = calloc(1, sizeof *d);
  if (!d || !(d->cx = nh_expr_new())) {
    free(d);
    refuse(&r, NULL, "out of memory");
    return NULL;
  }
  d->n = def->n, d->k = def->k, d->nparams = def->nparams, d->slot = -1;
  d->type.name = def->name; /* for messages until describe() copies it */
  function_set fs;
  if (declare_names(d, def, &r) < 0 || mechanics(d, def, &r) < 0 || constraints(d, def, &r) < 0 ||
      forces(d, def, &r) < 0)
    goto fail;
  d->acceleration = unit_mass_conservative(d);
  const int particle = particle_structure(d);
  if (particle < 0) goto fail;
  d->capabilities = particle ? NH_CAP_PARTICLE_STRUCTURE : 0;
  d->solved_first = solved_first(d);
  if (!(d->source = generate(d))) {
    refuse(&r, NULL, "out of memory");
    goto fail;
  }
  if (attach(d, mode, &fs, &r, note, notelen) < 0) goto fail;
  if (describe(d, def, &fs) < 0) {
    refuse(&r, NULL, "out of memory");
    goto fail;
  }
  return d;
fail:
  /* A derivative or a node that could not be built refuses nothing itself: memory ran out. */
  if (errlen && !err[0]) refuse(&r, NULL, "out of memory");
  nh_defined_system_free(d);
  return NULL;
}

const nh_system_type *nh_defined_system_type(const nh_defined_system *d) { return &d->type; }
int nh_defined_system_compiled(const nh_defined_system *d) { return d->lib != NULL; }
const char *nh_defined_system_source(const nh_defined_system *d) { return d->source; }

void nh_defined_system_free(nh_defined_system *d) {
  if (!d) return;
  if (d->slot >= 0) slots[d->slot] = NULL;
  if (d->lib) nh_native_close(d->lib);
  for (size_t i = 0; i < sizeof d->names / sizeof *d->names; i++) free(d->names[i]);
  nh_expr_free(d->cx);
  free(d->source);
  free(d);
}
