/* Expressions (core/expr.h): nodes in one growable array per context, found again through an
 * open-addressing hash table (hash consing); a recursive-descent parser; derivatives built through
 * the simplifying constructors; one evaluator and two printers that walk the tree in the same order. */
#include "core/expr.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/alloc.h"
#include "core/hash.h"

/* Operations. The functions come last, in the order of fn_name and fn_apply. */
enum { OP_NUM, OP_VAR, OP_ADD, OP_SUB, OP_MUL, OP_DIV, OP_POW, OP_NEG, OP_SIN };
enum { FN_COUNT = 12 };
static const char *const fn_name[FN_COUNT] = {"sin",  "cos",  "tan",  "exp",  "log",  "sqrt",
                                              "sinh", "cosh", "tanh", "asin", "acos", "atan"};
static double (*const fn_apply[FN_COUNT])(double) = {sin, cos, tan, exp, log, sqrt, sinh, cosh, tanh, asin, acos, atan};
enum { OP_COS = OP_SIN + 1, OP_TAN, OP_EXP, OP_LOG, OP_SQRT, OP_SINH, OP_COSH, OP_TANH, OP_ASIN, OP_ACOS, OP_ATAN };

/* Functions refused by name: their derivative does not exist somewhere they are defined, and a
 * method that differentiates them would silently use a one-sided value there. */
static const struct {
  const char *name, *why;
} refused[] = {{"abs", "is not differentiable at 0"},
               {"sign", "is not differentiable at 0"},
               {"floor", "is not differentiable at the integers"},
               {"ceil", "is not differentiable at the integers"},
               {"min", "is not differentiable where its arguments are equal"},
               {"max", "is not differentiable where its arguments are equal"},
               {"step", "is not differentiable at 0"}};

#define PI_VALUE 0x1.921fb54442d18p+1 /* M_PI, which strict C11 does not declare */

/* A node: an operation, its children (a, b; -1 where none; a is the slot of a variable), the value
 * of a number (0 otherwise). mask has bit slot % 64 set for every variable below, so that
 * nh_expr_depends and nh_expr_diff skip a subtree that cannot read the slot. depth and weight
 * (the size written out as a tree, what nh_expr_print_c writes and nh_expr_eval walks) bound the
 * recursion and the work on hostile input (NH_EXPR_MAX_DEPTH, NH_EXPR_MAX_WEIGHT). */
typedef struct {
  int op, a, b;
  double v;
  uint64_t mask;
  int depth, weight;
} node;

typedef struct {
  char *name;
  int slot;
} symbol;

enum { FAIL_MEMORY = 1, FAIL_SIZE = 2 };

struct nh_expr_ctx {
  node *node;
  int n, cap;
  int *table; /* node ids, -1 for an empty bucket; a power of two buckets, at most half full */
  size_t tcap;
  symbol *sym;
  int nsym, symcap;
  const char *slot_name[NH_EXPR_MAX_SLOTS]; /* the first name declared for each slot, for printing */
  int zero, one;
  int failure; /* why the last constructor returned -1 (FAIL_*), for the parser's message */
};

static int valid(const nh_expr_ctx *cx, int e) { return cx && e >= 0 && e < cx->n; }
static int is_num(const nh_expr_ctx *cx, int e, double *v) {
  if (!valid(cx, e) || cx->node[e].op != OP_NUM) return 0;
  if (v) *v = cx->node[e].v;
  return 1;
}
static int is_one(const nh_expr_ctx *cx, int e) {
  double v;
  return is_num(cx, e, &v) && v == 1;
}
static int is_fn(int op) { return op >= OP_SIN && op < OP_SIN + FN_COUNT; }
static int is_binary(int op) { return op >= OP_ADD && op <= OP_POW; }

/* ---- Powers, shared by the evaluator, the folding and the C printer ---- */

/* k in 1..4 if the exponent m is written as products (x^k, or 1/x^k for m = −k), else 0. */
static int small_power(double m) {
  if (m != rint(m) || fabs(m) > 4 || m == 0) return 0;
  return (int)fabs(m);
}
/* x^m as nh_expr_print_c writes a number exponent m: ((x*x)*x)..., its reciprocal, sqrt or pow. */
static double power_number(double x, double m) {
  const int k = small_power(m);
  if (!k) return m == 0.5 ? sqrt(x) : pow(x, m);
  double p = x;
  for (int i = 1; i < k; i++) p = p * x;
  return m < 0 ? 1.0 / p : p;
}

/* ---- Storage and hash consing ---- */

static uint64_t node_hash(int op, int a, int b, double v) {
  uint64_t h = nh_fnv1a(NH_FNV1A_BASIS, &op, sizeof op);
  h = nh_fnv1a(h, &a, sizeof a);
  h = nh_fnv1a(h, &b, sizeof b);
  return nh_fnv1a(h, &v, sizeof v);
}
/* Equal bits, not ==: 0 and −0 are different numbers (1/x tells them apart). */
static int node_is(const node *nd, int op, int a, int b, double v) {
  return nd->op == op && nd->a == a && nd->b == b && memcmp(&nd->v, &v, sizeof v) == 0;
}
/* The bucket holding the node (op, a, b, v), or the empty bucket where it would go. */
static size_t bucket(const nh_expr_ctx *cx, int op, int a, int b, double v) {
  size_t i = (size_t)node_hash(op, a, b, v) & (cx->tcap - 1);
  while (cx->table[i] >= 0 && !node_is(&cx->node[cx->table[i]], op, a, b, v)) i = (i + 1) & (cx->tcap - 1);
  return i;
}
static int grow_table(nh_expr_ctx *cx) {
  const size_t tcap = cx->tcap ? 2 * cx->tcap : 256;
  int *t = nh_malloc_array(tcap, sizeof *t);
  if (!t) return -1;
  for (size_t i = 0; i < tcap; i++) t[i] = -1;
  free(cx->table);
  cx->table = t, cx->tcap = tcap;
  for (int e = 0; e < cx->n; e++) {
    const node *nd = &cx->node[e];
    t[bucket(cx, nd->op, nd->a, nd->b, nd->v)] = e;
  }
  return 0;
}
static int grow_nodes(nh_expr_ctx *cx) {
  if (cx->cap > INT_MAX / 2) return -1;
  const int cap = cx->cap ? 2 * cx->cap : 64;
  node *p = nh_realloc_array(cx->node, (size_t)cap, sizeof *p);
  if (!p) return -1;
  cx->node = p, cx->cap = cap;
  return 0;
}

/* Depth, weight and mask of a new node from its children's; FAIL_SIZE past the limits. */
static int measure(const nh_expr_ctx *cx, node *nd) {
  const node *a = nd->a >= 0 && nd->op != OP_VAR ? &cx->node[nd->a] : NULL, *b = nd->b >= 0 ? &cx->node[nd->b] : NULL;
  long long w = 1;
  int d = 1, k = 0;
  if (nd->op == OP_VAR) nd->mask = (uint64_t)1 << (nd->a & 63);
  if (a) nd->mask |= a->mask, d = a->depth + 1, w += a->weight;
  if (b) nd->mask |= b->mask, d = b->depth >= d ? b->depth + 1 : d, w += b->weight;
  if (nd->op == OP_POW && b && b->op == OP_NUM && (k = small_power(b->v)) > 1) w += (long long)(k - 1) * a->weight;
  nd->depth = d, nd->weight = (int)(w < INT_MAX ? w : INT_MAX);
  return d > NH_EXPR_MAX_DEPTH || w > NH_EXPR_MAX_WEIGHT ? -1 : 0;
}

/* The node (op, a, b, v): the existing one, or a new one. No simplification here. */
static int make(nh_expr_ctx *cx, int op, int a, int b, double v) {
  if (cx->tcap) {
    const int found = cx->table[bucket(cx, op, a, b, v)];
    if (found >= 0) return found;
  }
  node nd = {op, a, b, v, 0, 0, 0};
  if (measure(cx, &nd)) {
    cx->failure = FAIL_SIZE;
    return -1;
  }
  if ((cx->n == cx->cap && grow_nodes(cx)) || ((size_t)cx->n + 1 > cx->tcap / 2 && grow_table(cx))) {
    cx->failure = FAIL_MEMORY;
    return -1;
  }
  cx->node[cx->n] = nd;
  cx->table[bucket(cx, op, a, b, v)] = cx->n;
  return cx->n++;
}

/* ---- Constructors: fold numbers where the result is finite, then the rewrites of the header ---- */

int nh_expr_number(nh_expr_ctx *cx, double value) {
  if (!cx || !isfinite(value)) return -1; /* C has no literal for them, and no node folds into one */
  return make(cx, OP_NUM, -1, -1, value);
}
/* A folded number; -2 for "leave the operation in the tree" when the result is inf or nan (which
 * the evaluation then produces the same way, and for which C has no literal). */
static int fold(nh_expr_ctx *cx, double r) { return isfinite(r) ? nh_expr_number(cx, r) : -2; }

int nh_expr_variable(nh_expr_ctx *cx, int slot) {
  if (!cx || slot < 0 || slot >= NH_EXPR_MAX_SLOTS) return -1;
  return make(cx, OP_VAR, slot, -1, 0);
}

int nh_expr_add(nh_expr_ctx *cx, int a, int b) {
  double x, y;
  if (!valid(cx, a) || !valid(cx, b)) return -1;
  const int f = is_num(cx, a, &x) && is_num(cx, b, &y) ? fold(cx, x + y) : -2;
  if (f != -2) return f;
  if (nh_expr_is_zero(cx, a)) return b;
  if (nh_expr_is_zero(cx, b)) return a;
  return make(cx, OP_ADD, a, b, 0);
}
int nh_expr_sub(nh_expr_ctx *cx, int a, int b) {
  double x, y;
  if (!valid(cx, a) || !valid(cx, b)) return -1;
  const int f = is_num(cx, a, &x) && is_num(cx, b, &y) ? fold(cx, x - y) : -2;
  if (f != -2) return f;
  if (nh_expr_is_zero(cx, b)) return a;
  if (nh_expr_is_zero(cx, a)) return nh_expr_neg(cx, b);
  return make(cx, OP_SUB, a, b, 0);
}
int nh_expr_mul(nh_expr_ctx *cx, int a, int b) {
  double x, y;
  if (!valid(cx, a) || !valid(cx, b)) return -1;
  const int f = is_num(cx, a, &x) && is_num(cx, b, &y) ? fold(cx, x * y) : -2;
  if (f != -2) return f;
  if (nh_expr_is_zero(cx, a) || nh_expr_is_zero(cx, b)) return cx->zero;
  if (is_one(cx, a)) return b;
  if (is_one(cx, b)) return a;
  return make(cx, OP_MUL, a, b, 0);
}
int nh_expr_div(nh_expr_ctx *cx, int a, int b) {
  double x, y;
  if (!valid(cx, a) || !valid(cx, b)) return -1;
  const int f = is_num(cx, a, &x) && is_num(cx, b, &y) ? fold(cx, x / y) : -2;
  if (f != -2) return f;
  if (is_one(cx, b)) return a;
  /* 0/x → 0, but not 0/0 written as such: that stays the nan it is. */
  if (nh_expr_is_zero(cx, a) && !nh_expr_is_zero(cx, b)) return cx->zero;
  return make(cx, OP_DIV, a, b, 0);
}
int nh_expr_neg(nh_expr_ctx *cx, int a) {
  double x;
  if (!valid(cx, a)) return -1;
  if (is_num(cx, a, &x)) return nh_expr_number(cx, -x); /* −0 for 0, as C's unary minus */
  if (cx->node[a].op == OP_NEG) return cx->node[a].a;
  return make(cx, OP_NEG, a, -1, 0);
}
int nh_expr_pow(nh_expr_ctx *cx, int a, int b) {
  double x, y;
  if (!valid(cx, a) || !valid(cx, b)) return -1;
  const int f = is_num(cx, a, &x) && is_num(cx, b, &y) ? fold(cx, power_number(x, y)) : -2;
  if (f != -2) return f;
  if (is_one(cx, b)) return a;
  if (nh_expr_is_zero(cx, b)) return cx->one;
  return make(cx, OP_POW, a, b, 0);
}
static int function(nh_expr_ctx *cx, int op, int a) {
  double x;
  if (!valid(cx, a)) return -1;
  const int f = is_num(cx, a, &x) ? fold(cx, fn_apply[op - OP_SIN](x)) : -2;
  return f != -2 ? f : make(cx, op, a, -1, 0);
}

/* ---- Queries ---- */

int nh_expr_is_zero(const nh_expr_ctx *cx, int e) {
  double v;
  return is_num(cx, e, &v) && v == 0;
}
int nh_expr_constant(const nh_expr_ctx *cx, int e, double *value) { return is_num(cx, e, value); }
int nh_expr_depends(const nh_expr_ctx *cx, int e, int slot) {
  if (!valid(cx, e) || slot < 0 || !(cx->node[e].mask & (uint64_t)1 << (slot & 63))) return 0;
  const node *nd = &cx->node[e];
  if (nd->op == OP_VAR) return nd->a == slot;
  return nh_expr_depends(cx, nd->a, slot) || (nd->b >= 0 && nh_expr_depends(cx, nd->b, slot));
}

/* ---- Context ---- */

nh_expr_ctx *nh_expr_new(void) {
  nh_expr_ctx *cx = calloc(1, sizeof *cx);
  if (!cx) return NULL;
  cx->zero = nh_expr_number(cx, 0);
  cx->one = nh_expr_number(cx, 1);
  if (cx->zero < 0 || cx->one < 0) {
    nh_expr_free(cx);
    return NULL;
  }
  return cx;
}
void nh_expr_free(nh_expr_ctx *cx) {
  if (!cx) return;
  for (int i = 0; i < cx->nsym; i++) free(cx->sym[i].name);
  free(cx->sym);
  free(cx->node);
  free(cx->table);
  free(cx);
}

/* ---- Names ---- */

static int is_digit(int c) { return c >= '0' && c <= '9'; }
static int is_alpha(int c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
static int name_is(const char *s, size_t len, const char *name) {
  return strlen(name) == len && memcmp(s, name, len) == 0;
}
/* The function's operation, or -1. */
static int function_op(const char *s, size_t len) {
  for (int i = 0; i < FN_COUNT; i++)
    if (name_is(s, len, fn_name[i])) return OP_SIN + i;
  return -1;
}
static int refused_index(const char *s, size_t len) {
  for (int i = 0; i < (int)(sizeof refused / sizeof *refused); i++)
    if (name_is(s, len, refused[i].name)) return i;
  return -1;
}
static const symbol *find_symbol(const nh_expr_ctx *cx, const char *s, size_t len) {
  for (int i = 0; i < cx->nsym; i++)
    if (name_is(s, len, cx->sym[i].name)) return &cx->sym[i];
  return NULL;
}

static void message(char *err, size_t errlen, const char *fmt, ...) {
  if (!err || !errlen) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(err, errlen, fmt, ap);
  va_end(ap);
}

/* Why NAME cannot be declared, or NULL. */
static const char *undeclarable(const nh_expr_ctx *cx, const char *name) {
  const size_t len = strlen(name);
  if (!is_alpha(name[0])) return "is not a name (a letter or '_', then letters, digits and '_')";
  for (size_t i = 1; i < len; i++)
    if (!is_alpha(name[i]) && !is_digit(name[i]))
      return "is not a name (a letter or '_', then letters, digits and '_')";
  if (function_op(name, len) >= 0 || refused_index(name, len) >= 0) return "is the name of a function";
  if (name_is(name, len, "pi")) return "is the constant pi";
  if (find_symbol(cx, name, len)) return "is declared already";
  return NULL;
}

int nh_expr_declare(nh_expr_ctx *cx, const char *name, int slot, char *err, size_t errlen) {
  if (!cx || !name) return message(err, errlen, "no context or no name"), -1;
  const char *why = undeclarable(cx, name);
  if (why) return message(err, errlen, "'%.64s' %s", name, why), -1;
  if (slot < 0 || slot >= NH_EXPR_MAX_SLOTS)
    return message(err, errlen, "slot %d of '%.64s' is outside [0, %d)", slot, name, NH_EXPR_MAX_SLOTS), -1;
  if (cx->nsym == cx->symcap) {
    const int cap = cx->symcap ? 2 * cx->symcap : 16;
    symbol *s = cx->symcap < INT_MAX / 2 ? nh_realloc_array(cx->sym, (size_t)cap, sizeof *s) : NULL;
    if (!s) return message(err, errlen, "out of memory"), -1;
    cx->sym = s, cx->symcap = cap;
  }
  const size_t len = strlen(name);
  char *copy = malloc(len + 1);
  if (!copy) return message(err, errlen, "out of memory"), -1;
  memcpy(copy, name, len + 1);
  cx->sym[cx->nsym++] = (symbol){copy, slot};
  if (!cx->slot_name[slot]) cx->slot_name[slot] = copy;
  return 0;
}

/* ---- Parser (the grammar of core/expr.h) ---- */

typedef struct {
  nh_expr_ctx *cx;
  const char *text, *p;
  int depth;
  int where;
  char *err;
  size_t errlen;
  int failed;
} parser;

/* Records the first error only: the callers above it return -1 without a message of their own. */
static int fail(parser *ps, const char *at, const char *fmt, ...) {
  if (ps->failed) return -1;
  ps->failed = 1;
  ps->where = (int)(at - ps->text);
  if (ps->err && ps->errlen) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ps->err, ps->errlen, fmt, ap);
    va_end(ap);
  }
  return -1;
}
/* A constructor's result; -1 with the reason the context recorded. */
static int built(parser *ps, int id) {
  if (id >= 0) return id;
  if (ps->cx->failure == FAIL_SIZE)
    return fail(ps, ps->p, "expression too large (deeper than %d or more than %d operations written out)",
                NH_EXPR_MAX_DEPTH, NH_EXPR_MAX_WEIGHT);
  return fail(ps, ps->p, "out of memory");
}
static void skip_space(parser *ps) {
  while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r') ps->p++;
}

static int parse_expr(parser *ps);
static int parse_unary(parser *ps);

/* A decimal literal, scanned here and then read by strtod: strtod alone would also take hexadecimal,
 * which the grammar leaves out. */
static int parse_number(parser *ps) {
  const char *s = ps->p, *q = s;
  if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
    return fail(ps, s, "hexadecimal numbers are not accepted: write the number in decimal");
  while (is_digit(*q)) q++;
  if (*q == '.') q++;
  while (is_digit(*q)) q++;
  if (*q == 'e' || *q == 'E') {
    const char *d = q + 1 + (q[1] == '+' || q[1] == '-');
    if (!is_digit(*d)) return fail(ps, q, "expected digits after the exponent's '%c'", *q);
    for (q = d; is_digit(*q); q++) {
    }
  }
  char *end;
  errno = 0;
  const double v = strtod(s, &end);
  if (end != q) return fail(ps, s, "malformed number");
  if (errno == ERANGE && fabs(v) > 1)
    return fail(ps, s, "number out of range: %.*s", (int)(q - s < 40 ? q - s : 40), s);
  ps->p = q;
  return built(ps, nh_expr_number(ps->cx, v));
}

/* f(expr), the name read already: exactly one argument. */
static int parse_call(parser *ps, int op) {
  const char *name = fn_name[op - OP_SIN];
  ps->p++; /* '(' */
  skip_space(ps);
  if (*ps->p == ')') return fail(ps, ps->p, "%s takes one argument", name);
  const int a = parse_expr(ps);
  if (a < 0) return -1;
  skip_space(ps);
  if (*ps->p == ',') return fail(ps, ps->p, "%s takes one argument", name);
  if (*ps->p != ')') return fail(ps, ps->p, "expected ')'");
  ps->p++;
  return built(ps, function(ps->cx, op, a));
}

static int parse_name(parser *ps) {
  const char *s = ps->p;
  while (is_alpha(*ps->p) || is_digit(*ps->p)) ps->p++;
  const size_t len = (size_t)(ps->p - s);
  const int r = refused_index(s, len), op = function_op(s, len);
  const symbol *sym = find_symbol(ps->cx, s, len);
  if (r >= 0) return fail(ps, s, "%s %s: write the expression without it", refused[r].name, refused[r].why);
  if (name_is(s, len, "pi")) return built(ps, nh_expr_number(ps->cx, PI_VALUE));
  if (sym) return built(ps, nh_expr_variable(ps->cx, sym->slot));
  if (op < 0) return fail(ps, s, "unknown name '%.*s'", (int)(len < 64 ? len : 64), s);
  skip_space(ps);
  if (*ps->p != '(') return fail(ps, s, "%s is a function: write %s(...)", fn_name[op - OP_SIN], fn_name[op - OP_SIN]);
  return parse_call(ps, op);
}

static int unexpected(parser *ps) {
  const unsigned char c = (unsigned char)*ps->p;
  if (!c) return fail(ps, ps->p, "expected a number, a name or '(' at the end of the text");
  if (c >= 0x20 && c < 0x7f) return fail(ps, ps->p, "unexpected character '%c'", c);
  return fail(ps, ps->p, "unexpected byte 0x%02x", c);
}

static int parse_atom(parser *ps) {
  skip_space(ps);
  const char c = *ps->p;
  if (is_digit(c) || (c == '.' && is_digit(ps->p[1]))) return parse_number(ps);
  if (is_alpha(c)) return parse_name(ps);
  if (c != '(') return unexpected(ps);
  ps->p++;
  const int e = parse_expr(ps);
  if (e < 0) return -1;
  skip_space(ps);
  if (*ps->p != ')') return fail(ps, ps->p, "expected ')'");
  ps->p++;
  return e;
}

static int parse_power(parser *ps) {
  const int a = parse_atom(ps);
  if (a < 0) return -1;
  skip_space(ps);
  if (*ps->p != '^') return a;
  ps->p++;
  const int b = parse_unary(ps);
  return b < 0 ? -1 : built(ps, nh_expr_pow(ps->cx, a, b));
}

/* Every cycle of the grammar's recursion passes through here, so counting here bounds the stack. */
static int parse_unary(parser *ps) {
  skip_space(ps);
  if (++ps->depth > NH_EXPR_MAX_NESTING) return fail(ps, ps->p, "nested deeper than %d levels", NH_EXPR_MAX_NESTING);
  int e;
  const char c = *ps->p;
  if (c == '-' || c == '+') {
    ps->p++;
    e = parse_unary(ps);
    if (c == '-' && e >= 0) e = built(ps, nh_expr_neg(ps->cx, e));
  } else
    e = parse_power(ps);
  ps->depth--;
  return e;
}

static int parse_term(parser *ps) {
  int e = parse_unary(ps);
  for (skip_space(ps); e >= 0 && (*ps->p == '*' || *ps->p == '/'); skip_space(ps)) {
    const char op = *ps->p++;
    const int b = parse_unary(ps);
    e = b < 0 ? -1 : built(ps, op == '*' ? nh_expr_mul(ps->cx, e, b) : nh_expr_div(ps->cx, e, b));
  }
  return e;
}

static int parse_expr(parser *ps) {
  int e = parse_term(ps);
  for (skip_space(ps); e >= 0 && (*ps->p == '+' || *ps->p == '-'); skip_space(ps)) {
    const char op = *ps->p++;
    const int b = parse_term(ps);
    e = b < 0 ? -1 : built(ps, op == '+' ? nh_expr_add(ps->cx, e, b) : nh_expr_sub(ps->cx, e, b));
  }
  return e;
}

int nh_expr_parse(nh_expr_ctx *cx, const char *text, int *where, char *err, size_t errlen) {
  if (!cx || !text) {
    message(err, errlen, "no context or no text");
    if (where) *where = 0;
    return -1;
  }
  parser ps = {cx, text, text, 0, 0, err, errlen, 0};
  skip_space(&ps);
  int e = *ps.p ? parse_expr(&ps) : fail(&ps, ps.p, "empty expression");
  if (e >= 0 && *ps.p)
    e = *ps.p == ')' ? fail(&ps, ps.p, "unmatched ')'") : fail(&ps, ps.p, "unexpected text after the expression");
  if (e < 0 && where) *where = ps.where;
  return e;
}

/* ---- Derivatives ---- */

/* memo[e]: ∂e already built in this call (-1: not yet), so that shared subtrees are differentiated
 * once; nodes only point to older ones, so e + 1 entries cover everything below e. */
typedef struct {
  nh_expr_ctx *cx;
  int *memo;
  int slot;
} differ;

static int diff(differ *d, int e);

/* ∂(a^b), e = a^b: c·a^(c−1)·a' for an exponent free of the slot, else a^b·(b'·log a + b·a'/a). */
static int diff_pow(differ *d, int e, int a, int b) {
  nh_expr_ctx *cx = d->cx;
  const int da = diff(d, a), db = diff(d, b);
  if (da < 0 || db < 0) return -1;
  if (nh_expr_is_zero(cx, db))
    return nh_expr_mul(cx, nh_expr_mul(cx, b, nh_expr_pow(cx, a, nh_expr_sub(cx, b, cx->one))), da);
  const int log_term = nh_expr_mul(cx, db, function(cx, OP_LOG, a));
  return nh_expr_mul(cx, e, nh_expr_add(cx, log_term, nh_expr_div(cx, nh_expr_mul(cx, b, da), a)));
}

/* 1 − a², the radicand of asin's and acos's derivatives. */
static int one_minus_square(nh_expr_ctx *cx, int a) {
  return nh_expr_sub(cx, cx->one, nh_expr_pow(cx, a, nh_expr_number(cx, 2)));
}

/* ∂f(a) = f'(a)·a', with e = f(a). */
static int diff_function(differ *d, int e, int op, int a) {
  nh_expr_ctx *cx = d->cx;
  const int da = diff(d, a), two = nh_expr_number(cx, 2);
  if (da < 0 || nh_expr_is_zero(cx, da)) return da;
  switch (op) {
  case OP_SIN:
    return nh_expr_mul(cx, function(cx, OP_COS, a), da);
  case OP_COS:
    return nh_expr_mul(cx, nh_expr_neg(cx, function(cx, OP_SIN, a)), da);
  case OP_TAN:
    return nh_expr_div(cx, da, nh_expr_pow(cx, function(cx, OP_COS, a), two));
  case OP_EXP:
    return nh_expr_mul(cx, e, da);
  case OP_LOG:
    return nh_expr_div(cx, da, a);
  case OP_SQRT:
    return nh_expr_div(cx, da, nh_expr_mul(cx, two, e));
  case OP_SINH:
    return nh_expr_mul(cx, function(cx, OP_COSH, a), da);
  case OP_COSH:
    return nh_expr_mul(cx, function(cx, OP_SINH, a), da);
  /* 1/cosh², not 1 − tanh², which cancels to nothing for |a| past ~19 */
  case OP_TANH:
    return nh_expr_div(cx, da, nh_expr_pow(cx, function(cx, OP_COSH, a), two));
  case OP_ASIN:
    return nh_expr_div(cx, da, function(cx, OP_SQRT, one_minus_square(cx, a)));
  case OP_ACOS:
    return nh_expr_neg(cx, nh_expr_div(cx, da, function(cx, OP_SQRT, one_minus_square(cx, a))));
  default:
    return nh_expr_div(cx, da, nh_expr_add(cx, cx->one, nh_expr_pow(cx, a, two))); /* atan */
  }
}

/* ∂(a/b): a'/b when b is free of the slot (one rounding, not three), else (a'b − ab')/b². */
static int diff_quotient(differ *d, int a, int b) {
  nh_expr_ctx *cx = d->cx;
  const int da = diff(d, a), db = diff(d, b);
  if (da < 0 || db < 0) return -1;
  if (nh_expr_is_zero(cx, da) && nh_expr_is_zero(cx, db)) return cx->zero; /* even where b is the number 0 */
  if (nh_expr_is_zero(cx, db)) return nh_expr_div(cx, da, b);
  const int num = nh_expr_sub(cx, nh_expr_mul(cx, da, b), nh_expr_mul(cx, a, db));
  return nh_expr_div(cx, num, nh_expr_pow(cx, b, nh_expr_number(cx, 2)));
}

static int diff_node(differ *d, int e) {
  nh_expr_ctx *cx = d->cx;
  const node nd = cx->node[e]; /* a copy: the constructors below may move the array */
  if (nd.op == OP_NUM) return cx->zero;
  if (nd.op == OP_VAR) return nd.a == d->slot ? cx->one : cx->zero;
  if (nd.op == OP_DIV) return diff_quotient(d, nd.a, nd.b);
  if (nd.op == OP_POW) return diff_pow(d, e, nd.a, nd.b);
  if (is_fn(nd.op)) return diff_function(d, e, nd.op, nd.a);
  const int da = diff(d, nd.a), db = nd.b >= 0 ? diff(d, nd.b) : cx->zero;
  switch (nd.op) {
  case OP_ADD:
    return nh_expr_add(cx, da, db);
  case OP_SUB:
    return nh_expr_sub(cx, da, db);
  case OP_MUL:
    return nh_expr_add(cx, nh_expr_mul(cx, da, nd.b), nh_expr_mul(cx, nd.a, db));
  default:
    return nh_expr_is_zero(cx, da) ? cx->zero : nh_expr_neg(cx, da); /* −0 is a zero too; ours is 0 */
  }
}

static int diff(differ *d, int e) {
  if (e < 0) return -1;
  if (d->memo[e] >= 0) return d->memo[e];
  /* The mask alone, not nh_expr_depends: that walks the subtree, at every node. A subtree the mask
   * lets through wrongly (slot + 64) differentiates to 0 all the same. */
  const int r = (d->cx->node[e].mask & ((uint64_t)1 << (d->slot & 63))) ? diff_node(d, e) : d->cx->zero;
  if (r >= 0) d->memo[e] = r;
  return r;
}

int nh_expr_diff(nh_expr_ctx *cx, int e, int slot) {
  if (!valid(cx, e) || slot < 0 || slot >= NH_EXPR_MAX_SLOTS) return -1;
  differ d = {cx, nh_malloc_array((size_t)e + 1, sizeof(int)), slot};
  if (!d.memo) return cx->failure = FAIL_MEMORY, -1;
  for (int i = 0; i <= e; i++) d.memo[i] = -1;
  const int r = diff(&d, e);
  free(d.memo);
  return r;
}

/* ---- Substitution ---- */

typedef struct {
  nh_expr_ctx *cx;
  int *memo; /* the result for each node below e, -1 until built */
  int slot, value;
} substituter;

static int substitute(substituter *s, int e) {
  nh_expr_ctx *cx = s->cx;
  if (e < 0) return -1;
  if (!(cx->node[e].mask & ((uint64_t)1 << (s->slot & 63)))) return e;
  if (s->memo[e] >= 0) return s->memo[e];
  const node nd = cx->node[e]; /* a copy: the constructors below may move the array */
  int r;
  if (nd.op == OP_VAR) return nd.a == s->slot ? s->value : e;
  const int a = substitute(s, nd.a), b = nd.b >= 0 ? substitute(s, nd.b) : -1;
  switch (nd.op) {
  case OP_ADD:
    r = nh_expr_add(cx, a, b);
    break;
  case OP_SUB:
    r = nh_expr_sub(cx, a, b);
    break;
  case OP_MUL:
    r = nh_expr_mul(cx, a, b);
    break;
  case OP_DIV:
    r = nh_expr_div(cx, a, b);
    break;
  case OP_POW:
    r = nh_expr_pow(cx, a, b);
    break;
  case OP_NEG:
    r = nh_expr_neg(cx, a);
    break;
  default:
    r = function(cx, nd.op, a);
  }
  if (r >= 0) s->memo[e] = r;
  return r;
}

int nh_expr_substitute(nh_expr_ctx *cx, int e, int slot, int value) {
  if (!valid(cx, e) || !valid(cx, value) || slot < 0 || slot >= NH_EXPR_MAX_SLOTS) return -1;
  substituter s = {cx, nh_malloc_array((size_t)e + 1, sizeof(int)), slot, value};
  if (!s.memo) return cx->failure = FAIL_MEMORY, -1;
  for (int i = 0; i <= e; i++) s.memo[i] = -1;
  const int r = substitute(&s, e);
  free(s.memo);
  return r;
}

/* ---- Evaluation: the order nh_expr_print_c writes ---- */

static double eval(const nh_expr_ctx *cx, int e, const double *vars) {
  const node *nd = &cx->node[e];
  switch (nd->op) {
  case OP_NUM:
    return nd->v;
  case OP_VAR:
    return vars[nd->a];
  case OP_ADD:
    return eval(cx, nd->a, vars) + eval(cx, nd->b, vars);
  case OP_SUB:
    return eval(cx, nd->a, vars) - eval(cx, nd->b, vars);
  case OP_MUL:
    return eval(cx, nd->a, vars) * eval(cx, nd->b, vars);
  case OP_DIV:
    return eval(cx, nd->a, vars) / eval(cx, nd->b, vars);
  case OP_NEG:
    return -eval(cx, nd->a, vars);
  case OP_POW: {
    /* A number exponent as the printer writes it (x written k times there, the same value each) */
    double m;
    const double x = eval(cx, nd->a, vars);
    return is_num(cx, nd->b, &m) ? power_number(x, m) : pow(x, eval(cx, nd->b, vars));
  }
  default:
    return fn_apply[nd->op - OP_SIN](eval(cx, nd->a, vars));
  }
}

double nh_expr_eval(const nh_expr_ctx *cx, int e, const double *vars) { return valid(cx, e) ? eval(cx, e, vars) : NAN; }

/* ---- Printing ---- */

/* Text into a buffer of len bytes, cut where it is full; n counts what the whole text needs. */
typedef struct {
  char *buf;
  size_t len, n;
} out;

static void put(out *o, const char *s) {
  const size_t k = strlen(s);
  if (o->n + 1 < o->len) {
    const size_t room = o->len - 1 - o->n;
    memcpy(o->buf + o->n, s, k < room ? k : room);
  }
  o->n += k;
}
static size_t finish(out *o) {
  if (o->len) o->buf[o->n < o->len ? o->n : o->len - 1] = '\0';
  return o->n;
}
static void put_var(out *o, const char *name, int slot) {
  char t[32];
  snprintf(t, sizeof t, "vars[%d]", slot);
  put(o, name ? name : t);
}

/* A number as a hexadecimal literal, every bit of it; a negative one (−0 too) in parentheses, so
 * that "x - -1" cannot become the decrement "x--1". */
static void put_hex(out *o, double v) {
  char t[40];
  snprintf(t, sizeof t, signbit(v) ? "(%a)" : "%a", v);
  put(o, t);
}

static void print_c(out *o, const nh_expr_ctx *cx, int e, const char *const *names);

/* x^k as ((x*x)*x)...: the order power_number multiplies in. */
static void print_c_product(out *o, const nh_expr_ctx *cx, int x, int k, const char *const *names) {
  for (int i = 1; i < k; i++) put(o, "(");
  print_c(o, cx, x, names);
  for (int i = 1; i < k; i++) put(o, "*"), print_c(o, cx, x, names), put(o, ")");
}
static void print_c_pow(out *o, const nh_expr_ctx *cx, const node *nd, const char *const *names) {
  double m;
  const int k = is_num(cx, nd->b, &m) ? small_power(m) : 0;
  if (k) {
    if (m < 0) put(o, "(0x1p+0/");
    print_c_product(o, cx, nd->a, k, names);
    if (m < 0) put(o, ")");
    return;
  }
  const int root = is_num(cx, nd->b, &m) && m == 0.5;
  put(o, root ? "sqrt(" : "pow(");
  print_c(o, cx, nd->a, names);
  if (!root) put(o, ","), print_c(o, cx, nd->b, names);
  put(o, ")");
}

static void print_c(out *o, const nh_expr_ctx *cx, int e, const char *const *names) {
  static const char *const sign[] = {[OP_ADD] = "+", [OP_SUB] = "-", [OP_MUL] = "*", [OP_DIV] = "/"};
  const node *nd = &cx->node[e];
  if (nd->op == OP_NUM || nd->op == OP_VAR || nd->op == OP_POW) {
    if (nd->op == OP_NUM) put_hex(o, nd->v);
    if (nd->op == OP_VAR) put_var(o, names ? names[nd->a] : NULL, nd->a);
    if (nd->op == OP_POW) print_c_pow(o, cx, nd, names);
    return;
  }
  put(o, nd->op == OP_NEG ? "(-" : is_fn(nd->op) ? fn_name[nd->op - OP_SIN] : "(");
  if (is_fn(nd->op)) put(o, "(");
  print_c(o, cx, nd->a, names);
  if (is_binary(nd->op)) put(o, sign[nd->op]), print_c(o, cx, nd->b, names);
  put(o, ")");
}

size_t nh_expr_print_c(const nh_expr_ctx *cx, int e, const char *const *names, char *buf, size_t len) {
  out o = {buf, len, 0};
  if (valid(cx, e)) print_c(&o, cx, e, names);
  return finish(&o);
}

/* The shortest of %.15g, %.16g and %.17g that strtod reads back to the same bits. */
static void put_decimal(out *o, double v) {
  char t[40];
  for (int digits = 15; digits <= 17; digits++) {
    snprintf(t, sizeof t, "%.*g", digits, v);
    const double back = strtod(t, NULL);
    if (memcmp(&back, &v, sizeof v) == 0) break;
  }
  put(o, t);
}

/* Binding strength in the grammar: a child weaker than its place needs parentheses. A negative
 * number reads as unary minus. */
enum { LEVEL_SUM = 1, LEVEL_PRODUCT, LEVEL_UNARY, LEVEL_POWER, LEVEL_ATOM };
static int level(const node *nd) {
  switch (nd->op) {
  case OP_ADD:
  case OP_SUB:
    return LEVEL_SUM;
  case OP_MUL:
  case OP_DIV:
    return LEVEL_PRODUCT;
  case OP_NEG:
    return LEVEL_UNARY;
  case OP_POW:
    return LEVEL_POWER;
  case OP_NUM:
    return signbit(nd->v) ? LEVEL_UNARY : LEVEL_ATOM;
  default:
    return LEVEL_ATOM;
  }
}

static void print_text(out *o, const nh_expr_ctx *cx, int e);
static void print_binary(out *o, const nh_expr_ctx *cx, const node *nd, int lv);
static void print_child(out *o, const nh_expr_ctx *cx, int e, int least) {
  const int paren = level(&cx->node[e]) < least;
  if (paren) put(o, "(");
  print_text(o, cx, e);
  if (paren) put(o, ")");
}

static void print_text(out *o, const nh_expr_ctx *cx, int e) {
  const node *nd = &cx->node[e];
  const int lv = level(nd);
  if (nd->op == OP_NUM) {
    put_decimal(o, nd->v);
  } else if (nd->op == OP_VAR) {
    put_var(o, cx->slot_name[nd->a], nd->a);
  } else if (nd->op == OP_NEG) {
    put(o, "-");
    print_child(o, cx, nd->a, LEVEL_UNARY);
  } else if (is_fn(nd->op)) {
    put(o, fn_name[nd->op - OP_SIN]);
    put(o, "(");
    print_text(o, cx, nd->a);
    put(o, ")");
  } else
    print_binary(o, cx, nd, lv);
}

/* Left operands bind at their own level, right ones one above (a − (b − c) keeps its
 * parentheses), except ^, which is right-associative and whose base must be an atom. */
static void print_binary(out *o, const nh_expr_ctx *cx, const node *nd, int lv) {
  static const char *const sign[] = {
      [OP_ADD] = " + ", [OP_SUB] = " - ", [OP_MUL] = "*", [OP_DIV] = "/", [OP_POW] = "^"};
  print_child(o, cx, nd->a, nd->op == OP_POW ? LEVEL_ATOM : lv);
  put(o, sign[nd->op]);
  print_child(o, cx, nd->b, nd->op == OP_POW ? LEVEL_UNARY : lv + 1);
}

size_t nh_expr_print(const nh_expr_ctx *cx, int e, char *buf, size_t len) {
  out o = {buf, len, 0};
  if (valid(cx, e)) print_text(&o, cx, e);
  return finish(&o);
}
