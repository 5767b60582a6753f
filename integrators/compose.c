/* Compositions over a base method, from coefficient tables: one loop serves every table
 * (STYLE.md: "composition coefficients are data"). A stage (c, adj) advances by c·h with the base
 * method, or with its adjoint when adj = 1 (the symmetric tables write {.coef = c}: on a symmetric
 * base the adjoint is the base itself, so only the adjoint pair names adj). Stages run in table
 * order, the first stage first. */
#include <math.h>
#include <stdio.h>
#include <string.h>

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
    3, {{.coef = 1.3512071919596578}, {.coef = -1.7024143839193153}, {.coef = 1.3512071919596578}}, 2, 4};

/* Symmetric compositions of a symmetric order-2 base Φ_h, Φ_{c_s h} ∘ … ∘ Φ_{c_1 h} with
 * c_i = c_{s+1−i} (Hairer–Lubich–Wanner II.4, V.3). Beyond Σ c_i = 1, the order conditions include
 * Σ c_i³ = 0 (order 4), Σ c_i⁵ = 0 (order 6), Σ c_i⁷ = 0 (order 8); the tables below were also
 * checked against the full conditions (the h³, h⁵, h⁷ terms of log Φ_{c_s h}⋯Φ_{c_1 h} for
 * Φ_h = exp(hX + h³Y + h⁵Z + h⁷W), generic matrices, BCH in 60-digit arithmetic): they vanish to
 * ~1e-25 before rounding to double. */

/* Suzuki's 5-stage fractal, order 4 (M. Suzuki, Phys. Lett. A 146 (1990) 319; Hairer–Lubich–Wanner
 * II.4): p, p, 1 − 4p, p, p with p = 1/(4 − 4^{1/3}) = 0.41449077179437573714… */
static const composition suzuki5_table = {5,
                                          {{.coef = 0.41449077179437573714},
                                           {.coef = 0.41449077179437573714},
                                           {.coef = -0.65796308717750294857},
                                           {.coef = 0.41449077179437573714},
                                           {.coef = 0.41449077179437573714}},
                                          2,
                                          4};

/* Yoshida's 7-stage order 6, "solution A" (H. Yoshida, Phys. Lett. A 150 (1990) 262, Table 1:
 * w1 = −1.17767998417887, w2 = 0.235573213359357, w3 = 0.784513610477560, w0 = 1 − 2(w1+w2+w3);
 * stages w3 w2 w1 w0 w1 w2 w3). Yoshida printed 15 digits, which meet the order conditions only to
 * ~1e-14; the 26-digit values used here are the same solution refined, as tabulated in HLW V.3.2
 * ("p6 s7"). */
static const composition yoshida6_table = {7,
                                           {{.coef = 0.78451361047755726381949763},
                                            {.coef = 0.23557321335935813368479318},
                                            {.coef = -1.17767998417887100694641568},
                                            {.coef = 1.31518632068391121888424973},
                                            {.coef = -1.17767998417887100694641568},
                                            {.coef = 0.23557321335935813368479318},
                                            {.coef = 0.78451361047755726381949763}},
                                           2,
                                           6};

/* Order 8 with 15 stages, the Yoshida-type symmetric composition of R. I. McLachlan, SIAM J. Sci.
 * Comput. 16 (1995) 151, s = 15 (also Suzuki & Umeno 1993); 26 digits as tabulated in HLW V.3.2
 * ("p8 s15"). Chosen over Yoshida's own 15-stage solutions (1990, Table 2), which are printed
 * with 15 digits only: solution D, for one, meets the order-8 conditions only to ~1e-11. */
static const composition mclachlan8_table = {15,
                                           {{.coef = 0.74167036435061295344822780},
                                            {.coef = -0.40910082580003159399730010},
                                            {.coef = 0.19075471029623837995387626},
                                            {.coef = -0.57386247111608226665638773},
                                            {.coef = 0.29906418130365592384446354},
                                            {.coef = 0.33462491824529818378495798},
                                            {.coef = 0.31529309239676659663205666},
                                            {.coef = -0.79688793935291635401978884},
                                            {.coef = 0.31529309239676659663205666},
                                            {.coef = 0.33462491824529818378495798},
                                            {.coef = 0.29906418130365592384446354},
                                            {.coef = -0.57386247111608226665638773},
                                            {.coef = 0.19075471029623837995387626},
                                            {.coef = -0.40910082580003159399730010},
                                            {.coef = 0.74167036435061295344822780}},
                                           2,
                                           8};

static const composition *table_of(const nh_method *m) { return m->type->data; }

/* The order of the table's conditions: its own, or for adjoint_pair the base's raised to even. */
static int table_order(const nh_method *m) {
  const composition *c = table_of(m);
  if (c->order) return c->order;
  int p = nh_method_order(m->base);
  return p % 2 ? p + 1 : p;
}

/* Over a base that reads its previous step (nh_rattle's lambda_k, spec/rattle.md 2.5) each
 * sub-step reads lambda_k = lambda(q_k, v_k) + O(h^2) whose O(h^2) part was made for the previous
 * sub-step's size: the sub-steps are not one-step maps of (q, v), and the order conditions above 4
 * do not hold. Measured: 4.00 for yoshida6 and mclachlan8 on every constrained system nh_rattle
 * applies to, the table's order without constraints (the composition matrix,
 * tests/contracts/test_order_matrix.c; issue 46 item 3). */
#define ORDER_OVER_PREVIOUS_STEP 4

/* sys NULL: the order on a constrained system, what `list` and a bare method name claim. */
static int order_on(const nh_method *m, const nh_system *sys) {
  const int p = table_order(m);
  const int capped = p > ORDER_OVER_PREVIOUS_STEP && nh_method_reads_previous_step(m->base, sys);
  return capped ? ORDER_OVER_PREVIOUS_STEP : p;
}

static int order(const nh_method *m) { return order_on(m, NULL); }

static int is_symmetric(const nh_method *m NH_UNUSED) {
  return 1; /* every table is a symmetric composition over a symmetric base, or an adjoint pair */
}

static const char *caveat(const nh_method *m) {
  return order(m) == table_order(m)
             ? NULL
             : "order 4 on systems with constraints, below the table's: the base reads the multiplier its "
               "previous sub-step computed for that sub-step's size (nh_rattle's lambda_k, spec/rattle.md "
               "2.5), so its sub-steps are not one-step maps of (q, v) and the order conditions above 4 do "
               "not hold (issue 46 item 3)";
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
  if (m->base->type->properties & NH_TOLERANCE_DRIVEN) { /* ida, cvode: each sub-step would restart the solver */
    snprintf(err, errlen, "%s: '%s' is tolerance-driven; its error does not come from the step size, so a "
             "composition of its steps raises no order", m->type->name, base);
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
      snprintf(err, errlen, nh_method_has_adjoint(m->base) ? "%s: out of memory for the adjoint of '%s'"
                                                           : "%s: the adjoint of '%s' is not known",
               m->type->name, base);
      return -1;
    }
  }
  return 0;
}

/* Stage s's method (the base, or its adjoint) and its step c_s·h in a step of size h. */
static const nh_method *stage_method(const nh_method *m, int s) {
  return table_of(m)->stages[s].adjoint ? m->adjoint : m->base;
}

static double stage_h(const nh_method *m, int s, double h) { return table_of(m)->stages[s].coef * h; }

/* Sub-step s of a step of size h, from a to b. composition_step and the discrete constraint's
 * replay both step through here, so that the replay repeats the step bit for bit. */
static nh_step_status sub_step(const nh_method *m, int s, const nh_system *sys, const nh_state *a, nh_state *b,
                               double h, nh_cost *cost) {
  return nh_method_step(stage_method(m, s), sys, a, b, stage_h(m, s, h), cost);
}

static nh_step_status composition_step(const nh_method *m, const nh_system *sys, const nh_state *x,
                                       nh_state *y, double h, nh_cost *cost) {
  const composition *c = table_of(m);
  /* b from x too: a base leaves fields it does not use as it found them, which are then x's, not
   * whatever the stack held (and the lanes, composition_step_lanes, can repeat them) */
  nh_state a = *x, b = *x;
  for (int s = 0; s < c->nstages; s++) {
    nh_step_status st = sub_step(m, s, sys, &a, &b, h, cost);
    if (st != NH_STEP_OK) return st;
    a = b;
  }
  *y = a;
  y->t = x->t + h;
  return NH_STEP_OK;
}

/* composition_step on NH_LANES states, for a base (and adjoint) with lanes: the sub-steps in lanes,
 * a lane leaving at its first failed sub-step (its later sub-steps neither counted nor looked at). */
static void composition_step_lanes(const nh_method *m, const nh_system *sys, const nh_lanes *x, nh_lanes *y, double h,
                                   const int *live, nh_step_status *status, nh_cost *cost) {
  const composition *c = table_of(m);
  nh_lanes b = *x; /* as composition_step: a (here y) and b from x, b copied into a after each sub-step */
  int running[NH_LANES];
  nh_step_status st[NH_LANES];
  *y = *x;
  for (int l = 0; l < NH_LANES; l++) running[l] = live[l], status[l] = NH_STEP_OK;
  for (int s = 0; s < c->nstages; s++) {
    nh_method_step_lanes(stage_method(m, s), sys, y, &b, stage_h(m, s, h), running, st, cost);
    for (int l = 0; l < NH_LANES; l++)
      if (running[l] && st[l] != NH_STEP_OK) running[l] = 0, status[l] = st[l];
    *y = b;
  }
  for (int l = 0; l < NH_LANES; l++) y->t[l] = x->t[l] + h;
}

static int has_lanes(const nh_method *m, const nh_system *sys) {
  return nh_method_has_lanes(m->base, sys) && (!m->adjoint || nh_method_has_lanes(m->adjoint, sys));
}

/* Of two values, the one of larger magnitude with its sign (the earlier, best, on a tie); NaN
 * when either is NaN, so that a failed sub-step is never dropped. */
static double larger_in_magnitude(double best, double d) { return isnan(best) || fabs(best) >= fabs(d) ? best : d; }

/* The composition's discrete constraint for its step x → y of size h: per constraint a, the signed
 * value of largest magnitude of the sub-steps' own discrete constraints (spec/newmark.md C2: every
 * Newmark step, the inner steps of Psi_h included, keeps |Phi| <= 1e-12). The sub-steps are
 * replayed from x: composition_step is deterministic, so the replay is the step that was taken
 * when it ends at y's q and v bit for bit (t is the caller's, and fields a method leaves unset are
 * not compared); otherwise, or when a stage's method defines no discrete constraint or a sub-step
 * fails, every entry is NaN. h must be the step's own, not a difference of times. */
static void composition_discrete_constraint(const nh_method *m, const nh_system *sys, const nh_state *x,
                                            const nh_state *y, double h, double *out) {
  const composition *c = table_of(m);
  const size_t n = (size_t)sys->n;
  nh_state a = *x, b;
  nh_cost unused = {0};
  double d[NH_MAX_K];
  int ok = 1;
  for (int s = 0; s < c->nstages; s++) {
    ok = nh_method_has_discrete_constraint(stage_method(m, s)) && sub_step(m, s, sys, &a, &b, h, &unused) == NH_STEP_OK;
    if (!ok) break;
    nh_method_discrete_constraint(stage_method(m, s), sys, &a, &b, stage_h(m, s, h), d);
    for (int i = 0; i < sys->k; i++) out[i] = s ? larger_in_magnitude(out[i], d[i]) : d[i];
    a = b;
  }
  ok = ok && memcmp(a.q, y->q, n * sizeof(double)) == 0 && memcmp(a.v, y->v, n * sizeof(double)) == 0;
  for (int i = 0; !ok && i < sys->k; i++) out[i] = NAN;
}

#define COMPOSITION_CONSTRAINT_DOC                                                                    \
  "per constraint, the signed value of largest magnitude of the sub-steps' own discrete constraints, "  \
  "the sub-steps replayed from the step's start (NaN unless the replay ends at the step's end bit for " \
  "bit); defined when the base (and its adjoint, where a stage uses it) defines one"

/* Every composition is the same table but for its name, coefficients and documentation. */
#define COMPOSITION(NAME, TABLE, DOC)                                                                                  \
  const nh_integrator_type nh_integrator_##NAME = {                                                                    \
      .name = #NAME,                                                                                                   \
      .doc = DOC,                                                                                                      \
      .takes_base = 1,                                                                                                 \
      .data = &TABLE,                                                                                                  \
      .handles = ~0u, /* as its base */                                                                                \
      .order = order,                                                                                                  \
      .order_on = order_on,                                                                                            \
      .is_symmetric = is_symmetric,                                                                                    \
      .caveat = caveat,                                                                                                \
      .setup = setup,                                                                                                  \
      .step = composition_step,                                                                                        \
      .step_lanes = composition_step_lanes,                                                                            \
      .has_lanes = has_lanes,                                                                                          \
      .discrete_constraint = composition_discrete_constraint,                                                          \
      .discrete_constraint_doc = COMPOSITION_CONSTRAINT_DOC,                                                           \
  }

COMPOSITION(adjoint_pair, adjoint_pair_table,
            "Symmetric composition M*_{h/2} o M_{h/2}, M applied first (spec/newmark.md 2.7). "
            "adjoint_pair(nh_newmark(alpha=0)) is the paper's Psi_h, eq. (18).");

COMPOSITION(triple_jump, triple_jump_table,
            "Order-4 triple jump M_{g1 h} o M_{g2 h} o M_{g1 h} of a symmetric order-2 method "
            "(spec/newmark.md 2.8, Remark 3.10).");

COMPOSITION(suzuki5, suzuki5_table,
            "Order-4 Suzuki fractal, 5 stages p, p, 1-4p, p, p with p = 1/(4 - 4^(1/3)) (Suzuki 1990; "
            "HLW II.4), of a symmetric order-2 method, e.g. suzuki5(nh_newmark(alpha=0.5)).");

COMPOSITION(yoshida6, yoshida6_table,
            "Order-6 Yoshida composition, 7 stages, solution A (Yoshida 1990, Table 1; 26 digits from "
            "HLW V.3.2), of a symmetric order-2 method.");

COMPOSITION(mclachlan8, mclachlan8_table,
            "Order-8 symmetric composition, 15 stages, McLachlan's s = 15 coefficients (SIAM J. Sci. "
            "Comput. 1995; HLW V.3.2) in Yoshida's construction, of a symmetric order-2 method.");
