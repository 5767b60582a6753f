/* Compositions over a base method, from coefficient tables: one loop serves every table
 * (STYLE.md: "composition coefficients are data"). A stage (c, adj) advances by c·h with the base
 * method, or with its adjoint when adj = 1. Stages run in table order, the first stage first. */
#include <stdio.h>

#include "integrators/integrator.h"

#define MAX_STAGES 16

typedef struct {
  double coef;
  int adjoint;
} stage;

typedef struct {
  int nstages;
  stage stages[MAX_STAGES];
  int base_order; /* required order of a symmetric base method; 0: any base with a known adjoint */
  int order;      /* order of the composition over such a base; 0: computed (adjoint pair) */
} composition;

/* Φ*_{h/2} ∘ Φ_{h/2}, Φ first: symmetric, order p+1 for an odd-order base (spec/newmark.md §2.7,
 * Hairer–Lubich–Wanner II.4). With Φ = nh_newmark(alpha=0) it is the paper's Ψ_h, eq. (18). */
static const composition adjoint_pair_table = {2, {{0.5, 0}, {0.5, 1}}, 0, 0};

/* Triple jump γ1, γ2, γ1 on a symmetric order-2 base: order 4 (spec/newmark.md §2.8, Remark 3.10;
 * Hairer–Lubich–Wanner II.4, eq. (4.4)): γ1 = 1/(2 − 2^{1/3}), γ2 = −2^{1/3}/(2 − 2^{1/3}). */
static const composition triple_jump_table = {
    3, {{1.3512071919596578, 0}, {-1.7024143839193153, 0}, {1.3512071919596578, 0}}, 2, 4};

static const composition *table_of(const nh_method *m) { return m->type->data; }

static int order(const nh_method *m) {
  const composition *c = table_of(m);
  if (c->order) return c->order;
  int p = nh_method_order(m->base);
  return p % 2 ? p + 1 : p;
}

static int is_symmetric(const nh_method *m) {
  (void)m;
  return 1; /* both tables are symmetric compositions over a symmetric base or an adjoint pair */
}

static int setup(nh_method *m, char *err, size_t errlen) {
  const composition *c = table_of(m);
  char base[512];
  nh_method_format(m->base, base, sizeof base);
  if (m->base->type->properties & NH_HISTORY) {
    snprintf(err, errlen, "%s: '%s' is a two-step method; its history cannot follow changing sub-steps",
             m->type->name, base);
    return -1;
  }
  if (c->base_order) {
    if (!nh_method_is_symmetric(m->base) || nh_method_order(m->base) != c->base_order) {
      snprintf(err, errlen, "%s needs a symmetric base method of order %d; '%s' is %s of order %d",
               m->type->name, c->base_order, base,
               nh_method_is_symmetric(m->base) ? "symmetric" : "not symmetric", nh_method_order(m->base));
      return -1;
    }
  }
  for (int s = 0; s < c->nstages; s++) {
    if (!c->stages[s].adjoint || m->adjoint) continue;
    if (!(m->adjoint = nh_method_adjoint(m->base))) {
      snprintf(err, errlen, "%s: the adjoint of '%s' is not known", m->type->name, base);
      return -1;
    }
  }
  return 0;
}

static nh_step_status composition_step(const nh_method *m, const nh_system *sys, const nh_state *x,
                                       nh_state *y, double h, nh_cost *cost) {
  const composition *c = table_of(m);
  nh_state a = *x, b;
  for (int s = 0; s < c->nstages; s++) {
    const nh_method *stage_method = c->stages[s].adjoint ? m->adjoint : m->base;
    nh_step_status st = nh_method_step(stage_method, sys, &a, &b, c->stages[s].coef * h, cost);
    if (st != NH_STEP_OK) return st;
    a = b;
  }
  *y = a;
  y->t = x->t + h;
  return NH_STEP_OK;
}

const nh_integrator_type nh_integrator_adjoint_pair = {
    .name = "adjoint_pair",
    .doc = "Symmetric composition M*_{h/2} o M_{h/2}, M applied first (spec/newmark.md 2.7). "
           "adjoint_pair(nh_newmark(alpha=0)) is the paper's Psi_h, eq. (18).",
    .takes_base = 1,
    .data = &adjoint_pair_table,
    .handles = ~0u, /* as its base */
    .order = order,
    .is_symmetric = is_symmetric,
    .setup = setup,
    .step = composition_step,
};

const nh_integrator_type nh_integrator_triple_jump = {
    .name = "triple_jump",
    .doc = "Order-4 triple jump M_{g1 h} o M_{g2 h} o M_{g1 h} of a symmetric order-2 method "
           "(spec/newmark.md 2.8, Remark 3.10).",
    .takes_base = 1,
    .data = &triple_jump_table,
    .handles = ~0u, /* as its base */
    .order = order,
    .is_symmetric = is_symmetric,
    .setup = setup,
    .step = composition_step,
};
