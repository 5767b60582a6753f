/* The method syntax: NAME, NAME(key=value,...), or NAME(BASE[,key=value...]) for compositions.
 * Examples: rk4, nh_newmark(beta=0.1,beta2=0.1,alpha=0.5,constraint=point),
 * adjoint_pair(nh_newmark(alpha=0)), triple_jump(nh_newmark(alpha=0.5)).
 * Old spellings of a type's parameters (its `aliases`, e.g. disc=15) are read with a deprecation
 * note; the canonical name always uses the new ones. */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "integrators/integrator.h"
#include "core/text.h"

typedef struct {
  const char *text; /* the whole string, quoted in errors */
  const char *s;    /* cursor */
  char *err;
  size_t errlen;
  int depth;        /* methods open around the cursor */
} parser;

/* Methods nest (triple_jump(adjoint_pair(nh_newmark(...))): 3); deeper than this is no method
 * anyone means, and the recursion must stay bounded. */
#define NH_METHOD_MAX_DEPTH 16

static void skip_ws(parser *ps) {
  while (isspace((unsigned char)*ps->s)) ps->s++;
}

static int fail(parser *ps, const char *what) {
  snprintf(ps->err, ps->errlen, "%s at column %d of method '%s'", what, (int)(ps->s - ps->text) + 1,
           ps->text);
  return -1;
}

static int read_ident(parser *ps, char *buf, size_t len) {
  skip_ws(ps);
  size_t i = 0;
  while (isalnum((unsigned char)*ps->s) || *ps->s == '_') {
    if (i + 1 < len) buf[i++] = *ps->s;
    ps->s++;
  }
  buf[i] = '\0';
  return i ? 0 : fail(ps, "expected a name");
}

static nh_method *parse_method(parser *ps);

/* The same value: the same text, or two numbers that are equal ("15" and "15.0"). */
static int same_value(const char *a, const char *b) {
  if (strcmp(a, b) == 0) return 1;
  char *ea, *eb;
  double x = strtod(a, &ea), y = strtod(b, &eb);
  return ea != a && !*ea && eb != b && !*eb && x == y;
}

/* When `key` is no parameter of m's type but an old name in its aliases: replaces key=val by the
 * new spelling, with one deprecation line on stderr, and returns 0; an old value
 * without a new spelling is an error naming it (-1). Other keys are left to nh_param_set. */
static int resolve_alias(parser *ps, const nh_method *m, char *key, size_t keylen, char *val, size_t vallen) {
  const nh_integrator_type *t = m->type;
  if (!t->aliases || nh_param_index(t->params, t->nparams, key) >= 0) return 0;
  char known[256] = "";
  for (const nh_param_alias *a = t->aliases; a->old_name; a++) {
    if (strcmp(a->old_name, key) != 0) continue;
    if (same_value(val, a->old_value)) {
      fprintf(stderr, "nhbench: deprecated: %s(%s=%s) is now %s=%s\n", t->name, key, val, a->name, a->value);
      snprintf(key, keylen, "%s", a->name);
      snprintf(val, vallen, "%s", a->value);
      return 0;
    }
    nh_text_append(known, sizeof known, ", ", "%s=%s is now %s=%s", key, a->old_value, a->name, a->value);
  }
  if (!*known) return 0; /* no old spelling of key */
  snprintf(ps->err, ps->errlen, "%s: deprecated parameter %s='%s' has no new spelling (%s) in method '%s'", t->name,
           key, val, known, ps->text);
  return -1;
}

/* A value: the text up to ',', ')' or a space. */
static void read_value(parser *ps, char *val, size_t len) {
  skip_ws(ps);
  size_t i = 0;
  while (*ps->s && *ps->s != ',' && *ps->s != ')' && !isspace((unsigned char)*ps->s)) {
    if (i + 1 < len) val[i++] = *ps->s;
    ps->s++;
  }
  val[i] = '\0';
}

/* NAME=VALUE, or a lone VALUE for a method with one parameter: spark(3) is spark(s=3),
 * herglotz2(midpoint) is herglotz2(forcing=midpoint) (issue 46 item 7). */
static int parse_key_value(parser *ps, nh_method *m, unsigned *given) {
  char key[64], val[64], msg[256];
  skip_ws(ps);
  const char *after = ps->s + strcspn(ps->s, ",)= \t\n"); /* past one token */
  while (isspace((unsigned char)*after)) after++;
  if (*after == ',' || *after == ')' || !*after) { /* a lone token: a value */
    if (m->type->nparams != 1)
      return fail(ps, m->type->nparams ? "expected NAME=VALUE (a lone value is read only by a method with one "
                                         "parameter; `nhbench list methods` names them)"
                                       : "this method takes no parameters");
    snprintf(key, sizeof key, "%s", m->type->params[0].name);
  } else {
    if (read_ident(ps, key, sizeof key) != 0) return -1;
    skip_ws(ps);
    if (*ps->s != '=') return fail(ps, "expected '=' after a parameter name");
    ps->s++;
  }
  read_value(ps, val, sizeof val);
  if (resolve_alias(ps, m, key, sizeof key, val, sizeof val) != 0) return -1;
  /* Once each (an old spelling counts as its new name): a second value would silently win. */
  const int index = nh_param_index(m->type->params, m->type->nparams, key);
  if (index >= 0 && (*given >> index & 1u)) {
    snprintf(msg, sizeof msg, "parameter '%s' is given twice", key);
    return fail(ps, msg);
  }
  if (index >= 0) *given |= 1u << index;
  if (nh_param_set(m->type->params, m->type->nparams, m->p, key, val, msg, sizeof msg) != 0) {
    snprintf(ps->err, ps->errlen, "%s: %s in method '%s'", m->type->name, msg, ps->text);
    return -1;
  }
  return 0;
}

void nh_method_suggest(const char *name, char *hint, size_t len) {
  const char *rest[64]; /* more than the registry holds */
  int nrest = 0;
  hint[0] = '\0';
  for (int i = 0; nh_integrator_types[i]; i++) {
    const nh_integrator_type *t = nh_integrator_types[i];
    int peer = 0;
    for (const nh_peer_name *p = t->peer_names; p && p->name; p++)
      if (nh_text_distance(name, p->name) == 0) {
        nh_text_append(hint, len, ", ", "%s (%s: %s)", p->method ? p->method : t->name, p->source, p->name);
        peer |= !p->method;
      }
    if (!peer && nrest < (int)(sizeof rest / sizeof *rest)) rest[nrest++] = t->name;
  }
  nh_text_suggest(name, rest, nrest, hint, len);
}

static void unknown_method(parser *ps, const char *name) {
  char hint[NH_TEXT_MESSAGE], known[NH_TEXT_MESSAGE] = "";
  nh_method_suggest(name, hint, sizeof hint);
  for (int i = 0; nh_integrator_types[i]; i++) nh_text_append(known, sizeof known, ", ", "%s", nh_integrator_types[i]->name);
  snprintf(ps->err, ps->errlen, "unknown method '%s' in '%s'%s%s%s (methods: %s)", name, ps->text,
           hint[0] ? ": did you mean " : "", hint, hint[0] ? "?" : "", known);
}

static nh_method *parse_method(parser *ps) {
  char name[64];
  if (++ps->depth > NH_METHOD_MAX_DEPTH) {
    snprintf(ps->err, ps->errlen, "methods nested too deeply (more than %d) in '%.60s...'", NH_METHOD_MAX_DEPTH,
             ps->text);
    return NULL;
  }
  if (read_ident(ps, name, sizeof name) != 0) return NULL;
  const nh_integrator_type *type = nh_integrator_type_find(name);
  if (!type) {
    unknown_method(ps, name);
    return NULL;
  }
  nh_method *m = calloc(1, sizeof *m);
  if (!m) {
    snprintf(ps->err, ps->errlen, "out of memory for method '%s'", ps->text);
    return NULL;
  }
  m->type = type;
  nh_param_defaults(type->params, type->nparams, m->p);
  skip_ws(ps);
  int first = 1;
  unsigned given = 0; /* the parameters set so far, by index */
  if (*ps->s == '(') {
    ps->s++;
    skip_ws(ps);
    if (type->takes_base) {
      if (!(m->base = parse_method(ps))) goto error;
      ps->depth--;
      first = 0;
    }
    skip_ws(ps);
    while (*ps->s != ')') {
      if (!first) {
        if (*ps->s != ',') {
          fail(ps, "expected ',' or ')'");
          goto error;
        }
        ps->s++;
      }
      first = 0;
      if (parse_key_value(ps, m, &given) != 0) goto error;
      skip_ws(ps);
    }
    ps->s++;
  }
  if (type->takes_base && !m->base) {
    snprintf(ps->err, ps->errlen, "%s needs a base method, as in %s(nh_newmark(alpha=0.5)), in '%s'",
             name, name, ps->text);
    goto error;
  }
  char msg[256];
  if ((type->validate && type->validate(m, msg, sizeof msg) < 0) ||
      (type->setup && type->setup(m, msg, sizeof msg) < 0)) {
    snprintf(ps->err, ps->errlen, "%s in method '%s'", msg, ps->text);
    goto error;
  }
  return m;
error:
  nh_method_free(m);
  return NULL;
}

nh_method *nh_method_parse(const char *text, char *err, size_t errlen) {
  parser ps = {text, text, err, errlen, 0};
  nh_method *m = parse_method(&ps);
  if (!m) return NULL;
  skip_ws(&ps);
  if (*ps.s) {
    fail(&ps, "unexpected text after the method");
    nh_method_free(m);
    return NULL;
  }
  return m;
}

void nh_method_free(nh_method *m) {
  if (!m) return;
  nh_method_free(m->base);
  nh_method_free(m->adjoint);
  free(m);
}

/* m's name in the method syntax, its parameters written by params_text: every one (the canonical
 * name) or those off their defaults (the label). As snprintf. */
typedef size_t (*params_text)(const nh_param_desc *d, int n, const double *vals, char *buf, size_t len);
static size_t method_text(const nh_method *m, params_text params_of, char *buf, size_t len) {
  size_t used = (size_t)snprintf(buf, len, "%s", m->type->name);
  char params[256];
  params_of(m->type->params, m->type->nparams, m->p, params, sizeof params);
  if (!m->base && !params[0]) return used;
  used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "(");
  if (m->base) used += method_text(m->base, params_of, buf + used, used < len ? len - used : 0);
  used += (size_t)snprintf(buf + used, used < len ? len - used : 0, "%s%s)", (m->base && params[0]) ? "," : "", params);
  return used;
}

size_t nh_method_format(const nh_method *m, char *buf, size_t len) {
  return method_text(m, nh_params_format, buf, len);
}

size_t nh_method_label(const nh_method *m, char *buf, size_t len) { return method_text(m, nh_params_label, buf, len); }

nh_method *nh_method_with_param(const nh_method *m, const char *name, double value, char *err,
                                size_t errlen) {
  char text[1024];
  nh_method_format(m, text, sizeof text);
  nh_method *copy = nh_method_parse(text, err, errlen);
  if (!copy) return NULL;
  /* A grid parameter belongs to the innermost method that has it. */
  nh_method *target = copy;
  while (nh_param_index(target->type->params, target->type->nparams, name) < 0 && target->base)
    target = target->base;
  char msg[256];
  if (nh_param_set_value(target->type->params, target->type->nparams, target->p, name, value, msg,
                         sizeof msg) != 0) {
    snprintf(err, errlen, "%s: %s", text, msg);
    nh_method_free(copy);
    return NULL;
  }
  /* Re-parse so validation and setup see the new value. */
  nh_method_format(copy, text, sizeof text);
  nh_method_free(copy);
  return nh_method_parse(text, err, errlen);
}

int nh_method_order(const nh_method *m) { return m->type->order(m); }

int nh_method_order_on(const nh_method *m, const nh_system *sys) {
  return m->type->order_on ? m->type->order_on(m, sys) : nh_method_order(m);
}

int nh_order_1(const nh_method *m NH_UNUSED) { return 1; }

int nh_order_2(const nh_method *m NH_UNUSED) { return 2; }

int nh_always_symmetric(const nh_method *m NH_UNUSED) { return 1; }

int nh_method_is_symmetric(const nh_method *m) {
  return m->type->is_symmetric ? m->type->is_symmetric(m) : 0;
}

/* The canonical text of m's adjoint; 0, or -1 if it is not known. */
static int adjoint_text(const nh_method *m, char *text, size_t len) {
  nh_method tmp = {0};
  if (nh_method_is_symmetric(m)) nh_method_format(m, text, len);
  else if (m->type->adjoint && m->type->adjoint(m, &tmp) == 0) nh_method_format(&tmp, text, len);
  else return -1;
  return 0;
}

int nh_method_has_adjoint(const nh_method *m) {
  char text[1024];
  return adjoint_text(m, text, sizeof text) == 0;
}

nh_method *nh_method_adjoint(const nh_method *m) {
  char text[1024], err[256];
  return adjoint_text(m, text, sizeof text) == 0 ? nh_method_parse(text, err, sizeof err) : NULL;
}

/* A composition takes its times from its base: the innermost method decides. */
static int takes_midpoint_times(const nh_method *m) {
  while (m->base) m = m->base;
  return (m->type->properties & NH_MIDPOINT_TIME) != 0;
}

int nh_method_applies(const nh_method *m, const nh_system *sys, char *err, size_t errlen) {
  unsigned extra = nh_system_features(sys) & ~m->type->handles;
  char why[256] = "";
  int ok = 1;
  if (!extra && !isfinite(nh_damping(sys, 0)) && !takes_midpoint_times(m)) {
    snprintf(err, errlen, "%s does not apply to %s: it evaluates the damping at a step's start, and alpha(t) is "
             "singular at the start t = 0 (alpha(0) = %g); only methods that take it at t_j + h/2 (contact2 and "
             "its compositions) start there", m->type->name, sys->type->name, nh_damping(sys, 0));
    return -1;
  }
  if (extra) {
    ok = 0;
    /* applies_doc states the method's structural needs; time dependence alone has its own reason. */
    const int time_only = !(extra & ~(unsigned)(NH_SYS_TIME_DAMPING | NH_SYS_TIME_POTENTIAL));
    const char *need = time_only ? "takes the damping alpha as a constant and the potential as time-independent"
                       : m->type->applies_doc ? m->type->applies_doc : "";
    snprintf(why, sizeof why, "it %s; %s has%s%s%s%s%s", need,
             sys->type->name, extra & NH_SYS_VARIABLE_MASS ? " a configuration-dependent mass matrix" : "",
             extra & NH_SYS_AFFINE_CONSTRAINTS ? " affine constraints" : "",
             extra & NH_SYS_TIME_DAMPING ? " time-dependent damping alpha(t)"
                                         : extra & NH_SYS_DAMPING ? " damping" : "",
             extra & NH_SYS_FORCING ? " forcing" : "",
             extra & NH_SYS_TIME_POTENTIAL ? " a time-dependent potential W(q,t)" : "");
  } else if (m->type->applies) {
    ok = m->type->applies(m, sys, why, sizeof why) == 0;
  }
  if (ok) return m->base ? nh_method_applies(m->base, sys, err, errlen) : 0;
  snprintf(err, errlen, "%s does not apply to %s: %s", m->type->name, sys->type->name, why);
  return -1;
}

nh_step_status nh_method_init(const nh_method *m, const nh_system *sys, nh_state *x, double h, nh_cost *cost) {
  if (m->type->init) return m->type->init(m, sys, x, h, cost);
  return m->base ? nh_method_init(m->base, sys, x, h, cost) : NH_STEP_OK;
}

/* A composition preserves the constraint exactly when its base does. */
int nh_method_preserves_constraint(const nh_method *m) {
  if (m->base) return nh_method_preserves_constraint(m->base);
  return (m->type->properties & NH_PRESERVES_CONSTRAINT) != 0;
}

int nh_method_reads_previous_step(const nh_method *m, const nh_system *sys) {
  if (sys && sys->k == 0) return 0;
  for (; m; m = m->base)
    if (m->type->properties & NH_READS_PREVIOUS_STEP) return 1;
  return 0;
}

nh_step_status nh_method_step(const nh_method *m, const nh_system *sys, const nh_state *x, nh_state *y,
                              double h, nh_cost *cost) {
  nh_step_status st = m->type->step(m, sys, x, y, h, cost);
  if (st != NH_STEP_OK) return st;
  /* u − u is 0 for a finite u and NaN for ±inf or NaN: one test for the whole state, no branch
   * per entry */
  double z = 0;
  for (int i = 0; i < sys->n; i++) z += (y->q[i] - y->q[i]) + (y->v[i] - y->v[i]);
  return z == z ? NH_STEP_OK : NH_STEP_NONFINITE;
}

int nh_method_has_lanes(const nh_method *m, const nh_system *sys) {
  return m->type->step_lanes != NULL && (!m->type->has_lanes || m->type->has_lanes(m, sys));
}

/* The finiteness test of nh_method_step on the live lanes of y (the same sum, in the same order). */
static inline NH_LANES_INLINE void finite_shaped_lanes(const nh_lanes *y, const int *live, nh_step_status *status,
                                                       const int n, const int k NH_UNUSED) {
  double z[NH_LANES] = {0};
  for (int i = 0; i < n; i++) {
#pragma omp simd
    for (int l = 0; l < NH_LANES; l++) z[l] += (y->q[i][l] - y->q[i][l]) + (y->v[i][l] - y->v[i][l]);
  }
#pragma omp simd /* a select on every lane: no branch per lane */
  for (int l = 0; l < NH_LANES; l++)
    status[l] = live[l] && status[l] == NH_STEP_OK && z[l] != z[l] ? NH_STEP_NONFINITE : status[l];
}
/* With n constant for the common shapes (NH_LANES_SHAPED, core/lanes.h): the sum then stays in
 * registers. */
static inline NH_LANES_INLINE void finite_lanes_lanes(int n, int k, const nh_lanes *y, const int *live,
                                                      nh_step_status *status) {
  NH_LANES_SHAPED(n, k, finite_shaped_lanes, y, live, status);
}
NH_LANES_ISA_VARIANTS(finite_lanes, (int n, int k, const nh_lanes *y, const int *live, nh_step_status *status),
                      (n, k, y, live, status))

void nh_method_step_lanes(const nh_method *m, const nh_system *sys, const nh_lanes *x, nh_lanes *y, double h,
                          const int *live, nh_step_status *status, nh_cost *cost) {
  m->type->step_lanes(m, sys, x, y, h, live, status, cost);
  finite_lanes(sys->n, sys->k, y, live, status);
}

void nh_cost_add(nh_cost *sum, const nh_cost *c) {
  sum->steps += c->steps;
  sum->rhs_evals += c->rhs_evals;
  sum->jacobian_evals += c->jacobian_evals;
  sum->linear_solves += c->linear_solves;
  sum->newton_iterations += c->newton_iterations;
  sum->constraint_evals += c->constraint_evals;
}

const char *nh_method_caveat(const nh_method *m) {
  for (; m; m = m->base)
    if (m->type->caveat && m->type->caveat(m)) return m->type->caveat(m);
  return NULL;
}

nh_lambda_time nh_method_lambda_time(const nh_method *m) {
  if (m->base) return nh_method_lambda_time(m->base) == NH_LAMBDA_END ? NH_LAMBDA_END : NH_LAMBDA_NONE;
  return m->type->lambda_time;
}

double nh_method_multiplier_time(const nh_method *m, double t0, double t1) {
  switch (nh_method_lambda_time(m)) {
  case NH_LAMBDA_START: return t0;
  case NH_LAMBDA_MIDPOINT: return 0.5 * (t0 + t1);
  case NH_LAMBDA_END: return t1;
  default: return NAN;
  }
}

int nh_method_has_discrete_constraint(const nh_method *m) {
  if (!m->type->discrete_constraint) return 0;
  if (!m->base) return 1;
  return nh_method_has_discrete_constraint(m->base) && (!m->adjoint || nh_method_has_discrete_constraint(m->adjoint));
}

void nh_method_discrete_constraint(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                                   double h, double *out) {
  if (nh_method_has_discrete_constraint(m)) {
    m->type->discrete_constraint(m, sys, x, y, h, out);
    return;
  }
  for (int a = 0; a < sys->k; a++) out[a] = NAN;
}

double nh_method_param(const nh_method *m, const char *name) {
  int i = nh_param_index(m->type->params, m->type->nparams, name);
  return i < 0 ? NAN : m->p[i];
}

const char *nh_method_lacks_multiplier(const nh_method *m) {
  if (nh_method_lambda_time(m) != NH_LAMBDA_NONE) return NULL;
  return m->base ? "a composition's multiplier is its last sub-step's, defined only when that ends at t_{k+1}"
                 : "the method defines no multiplier (it integrates the index-reduced ODE or eliminates lambda)";
}

const char *nh_method_lacks_discrete_energy(const nh_method *m) {
  if (m->base) return "compositions define discrete energies per sub-step only";
  return m->type->discrete_energy ? NULL : "the method defines no discrete energy";
}

double nh_method_discrete_energy(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                                 double h) {
  return nh_method_lacks_discrete_energy(m) ? NAN : m->type->discrete_energy(m, sys, x, y, h);
}

const char *nh_method_lacks_action(const nh_method *m) {
  while (m->base) m = m->base;
  return m->type->properties & NH_TRACKS_ACTION ? NULL : "only contact (Herglotz) methods track the action z";
}

int nh_method_same_family(const nh_method *a, const nh_method *b) { return a->type == b->type; }

int nh_method_has_history(const nh_method *m) {
  for (; m; m = m->base)
    if (m->type->properties & NH_HISTORY) return 1;
  return 0;
}

int nh_method_has_discrete_action(const nh_method *m) { return m->type->discrete_action != NULL; }

double nh_method_discrete_action(const nh_method *m, const nh_system *sys, double t, const double *q0,
                                 const double *q1, double h) {
  return m->type->discrete_action ? m->type->discrete_action(m, sys, t, q0, q1, h) : NAN;
}

int nh_method_start_multiplier(const nh_method *m, const nh_system *sys, const nh_state *y, double *out) {
  if (!m->type->start_multiplier) return -1;
  m->type->start_multiplier(m, sys, y, out);
  return 0;
}

int nh_method_own_discrete_constraint(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                                      double h, double *out) {
  if (m->base || !m->type->discrete_constraint || sys->k == 0) return -1;
  m->type->discrete_constraint(m, sys, x, y, h, out);
  return 0;
}

const nh_method *nh_method_param_owner(const nh_method *m, const char *name) {
  while (m && nh_param_index(m->type->params, m->type->nparams, name) < 0) m = m->base;
  return m;
}

const char *nh_method_type_name(const nh_method *m) { return m->type->name; }

int nh_method_check_param(const nh_method *m, const char *name, double value, char *err, size_t errlen) {
  double scratch[NH_MAX_PARAMS];
  return nh_param_set_value(m->type->params, m->type->nparams, scratch, name, value, err, errlen) != 0 ? -1 : 0;
}

/* m's Newton Jacobian at the step x → y into J (dim×dim, row-major; room for NH_MAX_NEWTON² entries),
 * the method's own (scaled) one, or with `unscaled` diag(row)·J·diag(col) of its hooks' scaling: its
 * size, or 0 when there is none (no Newton hooks, no unknowns, no declared scaling) or an entry is
 * not finite. */
int nh_method_newton_jacobian(const nh_method *m, const nh_system *sys, const nh_state *x, const nh_state *y,
                              double h, int unscaled, double *J) {
  const nh_newton_hooks *t = m->type->newton;
  if (!t || (unscaled && !t->scaling)) return 0;
  const int dim = t->size(m, sys);
  if (dim <= 0 || dim > NH_MAX_NEWTON) return 0;
  double X[NH_MAX_NEWTON], F[NH_MAX_NEWTON], row[NH_MAX_NEWTON], col[NH_MAX_NEWTON];
  /* An entry the evaluation leaves unwritten reads as NaN: a partial Jacobian has no condition. */
  for (int i = 0; i < NH_MAX_NEWTON * NH_MAX_NEWTON; i++) J[i] = NAN;
  t->unknowns(m, sys, x, y, h, X);
  t->eval(m, sys, x, h, X, F, J);
  if (unscaled) {
    t->scaling(m, sys, h, row, col);
    for (int i = 0; i < dim; i++)
      for (int j = 0; j < dim; j++) J[i * dim + j] = row[i] * J[i * dim + j] * col[j];
  }
  for (int i = 0; i < dim * dim; i++)
    if (!isfinite(J[i])) return 0;
  return dim;
}
