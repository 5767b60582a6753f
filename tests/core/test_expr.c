/* core/expr.h: parsing with its error messages and offsets, precedence, hash consing, the
 * simplifications, derivatives against hand-derived ones and against central differences, printing
 * that parses back to the same node, and the printed C, compiled by the system's compiler, against
 * the interpreter to the bit. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <criterion/criterion.h>
#include <dlfcn.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "core/expr.h"
#include "tests/helpers.h"

/* A context with x, y, z in slots 0, 1, 2. */
static nh_expr_ctx *ctx_xyz(void) {
  nh_expr_ctx *cx = nh_expr_new();
  char err[256];
  cr_assert(cx);
  const char *names[] = {"x", "y", "z"};
  for (int i = 0; i < 3; i++) cr_assert_eq(nh_expr_declare(cx, names[i], i, err, sizeof err), 0, "%s", err);
  return cx;
}

/* text must parse. */
static int parse_ok(nh_expr_ctx *cx, const char *text) {
  char err[256] = "";
  int where = -1;
  const int e = nh_expr_parse(cx, text, &where, err, sizeof err);
  cr_assert(e >= 0, "'%s' did not parse: %s at %d", text, err, where);
  return e;
}

static double eval3(const nh_expr_ctx *cx, int e, double x, double y, double z) {
  const double v[3] = {x, y, z};
  return nh_expr_eval(cx, e, v);
}

static int same_bits(double a, double b) { return memcmp(&a, &b, sizeof a) == 0 || (isnan(a) && isnan(b)); }

/* ---- Declarations ---- */

Test(expr, declare_refuses_what_it_must) {
  nh_expr_ctx *cx = nh_expr_new();
  char err[256];
  cr_assert_eq(nh_expr_declare(cx, "q_1", 0, err, sizeof err), 0);
  cr_assert_eq(nh_expr_declare(cx, "_v", 255, err, sizeof err), 0);
  const struct {
    const char *name;
    int slot;
    const char *msg;
  } bad[] = {{"q_1", 1, "'q_1' is declared already"},
             {"1q", 1, "'1q' is not a name (a letter or '_', then letters, digits and '_')"},
             {"q-1", 1, "'q-1' is not a name (a letter or '_', then letters, digits and '_')"},
             {"", 1, "'' is not a name (a letter or '_', then letters, digits and '_')"},
             {"sin", 1, "'sin' is the name of a function"},
             {"abs", 1, "'abs' is the name of a function"},
             {"pi", 1, "'pi' is the constant pi"},
             {"w", 256, "slot 256 of 'w' is outside [0, 256)"},
             {"w", -1, "slot -1 of 'w' is outside [0, 256)"}};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    err[0] = '\0';
    cr_expect_eq(nh_expr_declare(cx, bad[i].name, bad[i].slot, err, sizeof err), -1, "%s", bad[i].name);
    cr_expect_str_eq(err, bad[i].msg);
  }
  /* A second name for a slot reads the same variable. */
  cr_assert_eq(nh_expr_declare(cx, "alias", 0, err, sizeof err), 0);
  cr_expect_eq(parse_ok(cx, "alias"), parse_ok(cx, "q_1"));
  cr_expect_eq(parse_ok(cx, "q_1"), nh_expr_variable(cx, 0));
  char buf[16];
  nh_expr_print(cx, parse_ok(cx, "alias"), buf, sizeof buf);
  cr_expect_str_eq(buf, "q_1", "the first name declared for the slot");
  nh_expr_free(cx);
}

/* ---- Parse errors: message and byte offset ---- */

Test(expr, parse_errors_say_what_and_where) {
  nh_expr_ctx *cx = ctx_xyz();
  const struct {
    const char *text;
    int where;
    const char *msg;
  } cases[] = {
      {"", 0, "empty expression"},
      {"   ", 3, "empty expression"},
      {"zz + 1", 0, "unknown name 'zz'"},
      {"x + zz", 4, "unknown name 'zz'"},
      {"inf", 0, "unknown name 'inf'"},
      {"nan", 0, "unknown name 'nan'"},
      {"fabs(x)", 0, "unknown name 'fabs'"},
      {"x + #", 4, "unexpected character '#'"},
      {"x + .", 4, "unexpected character '.'"},
      {"\x01", 0, "unexpected byte 0x01"},
      {"x + )", 4, "unexpected character ')'"},
      {"(x + 1", 6, "expected ')'"},
      {"sin(x", 5, "expected ')'"},
      {"(x y)", 3, "expected ')'"},
      {"x + 1)", 5, "unmatched ')'"},
      {"x y", 2, "unexpected text after the expression"},
      {"2x", 1, "unexpected text after the expression"},
      {"x(2)", 1, "unexpected text after the expression"},
      {"x +", 3, "expected a number, a name or '(' at the end of the text"},
      {"2^", 2, "expected a number, a name or '(' at the end of the text"},
      {"1e999", 0, "number out of range: 1e999"},
      {"x*-1e400", 3, "number out of range: 1e400"},
      {"0x10", 0, "hexadecimal numbers are not accepted: write the number in decimal"},
      {"1e+", 1, "expected digits after the exponent's 'e'"},
      {"2E", 1, "expected digits after the exponent's 'E'"},
      {"sin(x, y)", 5, "sin takes one argument"},
      {"x + cos( )", 9, "cos takes one argument"},
      {"sin x", 0, "sin is a function: write sin(...)"},
      {"2*exp", 2, "exp is a function: write exp(...)"},
      {"abs(x)", 0, "abs is not differentiable at 0: write the expression without it"},
      {"x + sign(y)", 4, "sign is not differentiable at 0: write the expression without it"},
      {"floor(x)", 0, "floor is not differentiable at the integers: write the expression without it"},
      {"1 - ceil(x)", 4, "ceil is not differentiable at the integers: write the expression without it"},
      {"min(x, y)", 0, "min is not differentiable where its arguments are equal: write the expression without it"},
      {"x*max(x, y)", 2, "max is not differentiable where its arguments are equal: write the expression without it"},
      {"step(x - 1)", 0, "step is not differentiable at 0: write the expression without it"},
      {"abs", 0, "abs is not differentiable at 0: write the expression without it"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char err[256] = "";
    int where = -7;
    cr_expect_eq(nh_expr_parse(cx, cases[i].text, &where, err, sizeof err), -1, "'%s' parsed", cases[i].text);
    cr_expect_str_eq(err, cases[i].msg, "'%s': '%s'", cases[i].text, err);
    cr_expect_eq(where, cases[i].where, "'%s': error at %d, not %d", cases[i].text, where, cases[i].where);
  }
  /* where may be NULL; a short err is cut, still a string. */
  char small[8];
  cr_expect_eq(nh_expr_parse(cx, "zz", NULL, small, sizeof small), -1);
  cr_expect_str_eq(small, "unknown");
  nh_expr_free(cx);
}

/* Hostile nesting stops at NH_EXPR_MAX_NESTING, at the byte where it passes it; 150 levels parse. */
Test(expr, nesting_is_bounded) {
  nh_expr_ctx *cx = ctx_xyz();
  char text[2048], err[256];
  const char *opens[] = {"(", "-", "sin(", "x^"};
  for (int k = 0; k < 4; k++) {
    size_t n = 0, w = strlen(opens[k]);
    for (int i = 0; i < 300; i++, n += w) memcpy(text + n, opens[k], w);
    strcpy(text + n, "x");
    int where = -1;
    cr_expect_eq(nh_expr_parse(cx, text, &where, err, sizeof err), -1, "%s x 300", opens[k]);
    cr_expect_str_eq(err, "nested deeper than 200 levels");
    cr_expect_eq(where, 200 * (int)w, "%s: at %d", opens[k], where);
  }
  size_t n = 0;
  for (int i = 0; i < 150; i++) text[n++] = '(';
  text[n++] = 'x';
  for (int i = 0; i < 150; i++) text[n++] = ')';
  text[n] = '\0';
  cr_expect_eq(parse_ok(cx, text), nh_expr_variable(cx, 0));
  nh_expr_free(cx);
}

/* A long sum is not nesting: 1500 terms parse (one deep tree); 2500 pass NH_EXPR_MAX_DEPTH. */
Test(expr, long_sums_and_the_depth_limit) {
  nh_expr_ctx *cx = ctx_xyz();
  char *text = malloc(2500 * 8 + 1), err[256];
  size_t n = 0;
  for (int i = 0; i < 2500; i++) n += (size_t)sprintf(text + n, "%sx*%d", i ? "+" : "", i % 7 + 1);
  int where;
  cr_expect_eq(nh_expr_parse(cx, text, &where, err, sizeof err), -1);
  cr_expect(strstr(err, "expression too large") == err, "%s", err);
  cr_expect(where > 0 && where <= (int)n, "at %d", where);
  n = 0;
  for (int i = 0; i < 1500; i++) n += (size_t)sprintf(text + n, "%sx*%d", i ? "+" : "", i % 7 + 1);
  const int e = parse_ok(cx, text);
  double sum = 0;
  for (int i = 0; i < 1500; i++) sum += 0.5 * (i % 7 + 1);
  cr_expect_eq(eval3(cx, e, 0.5, 0, 0), sum);
  double d = 0;
  cr_expect(nh_expr_constant(cx, nh_expr_diff(cx, e, 0), &d) && d == sum / 0.5, "d/dx of the sum: %g", d);
  free(text);
  nh_expr_free(cx);
}

/* ---- Precedence ---- */

Test(expr, precedence_and_associativity) {
  nh_expr_ctx *cx = ctx_xyz();
  const int x = nh_expr_variable(cx, 0), y = nh_expr_variable(cx, 1), z = nh_expr_variable(cx, 2);
  const int two = nh_expr_number(cx, 2);
  /* -x^2 = -(x^2), not (-x)^2 */
  cr_expect_eq(parse_ok(cx, "-x^2"), nh_expr_neg(cx, nh_expr_pow(cx, x, two)));
  cr_expect_eq(eval3(cx, parse_ok(cx, "-x^2"), 3, 0, 0), -9);
  cr_expect_eq(eval3(cx, parse_ok(cx, "(-x)^2"), 3, 0, 0), 9);
  /* 2^3^2 = 2^9 */
  double v;
  cr_expect(nh_expr_constant(cx, parse_ok(cx, "2^3^2"), &v) && v == 512, "2^3^2 = %g", v);
  cr_expect(nh_expr_constant(cx, parse_ok(cx, "(2^3)^2"), &v) && v == 64, "(2^3)^2 = %g", v);
  cr_expect_eq(parse_ok(cx, "x^y^z"), nh_expr_pow(cx, x, nh_expr_pow(cx, y, z)));
  /* left associative - and / */
  cr_expect_eq(parse_ok(cx, "x-y-z"), nh_expr_sub(cx, nh_expr_sub(cx, x, y), z));
  cr_expect_eq(eval3(cx, parse_ok(cx, "x-y-z"), 10, 4, 3), 3);
  cr_expect_eq(parse_ok(cx, "x/y/z"), nh_expr_div(cx, nh_expr_div(cx, x, y), z));
  cr_expect_eq(eval3(cx, parse_ok(cx, "x/y/z"), 24, 4, 3), 2);
  cr_expect_eq(parse_ok(cx, "x+y*z"), nh_expr_add(cx, x, nh_expr_mul(cx, y, z)));
  cr_expect_eq(parse_ok(cx, "x*y^2"), nh_expr_mul(cx, x, nh_expr_pow(cx, y, two)));
  cr_expect_eq(parse_ok(cx, "x^-2"), nh_expr_pow(cx, x, nh_expr_number(cx, -2)));
  cr_expect_eq(parse_ok(cx, "2^-x^2"), nh_expr_pow(cx, two, nh_expr_neg(cx, nh_expr_pow(cx, x, two))));
  cr_expect_eq(parse_ok(cx, "-x*y"), nh_expr_mul(cx, nh_expr_neg(cx, x), y));
  cr_expect_eq(parse_ok(cx, "x - -y"), nh_expr_sub(cx, x, nh_expr_neg(cx, y)));
  cr_expect_eq(parse_ok(cx, "+x"), x);
  cr_expect_eq(parse_ok(cx, " \t\n x \r\n"), x);
  cr_expect_eq(eval3(cx, parse_ok(cx, "2*x^3 - 4/x + 1"), 2, 0, 0), 2 * 8 - 4 / 2.0 + 1);
  /* x^0.5 is sqrt(x), which differs from pow(x, 0.5) at −0 and −inf */
  cr_expect(same_bits(eval3(cx, parse_ok(cx, "x^0.5"), -0.0, 0, 0), -0.0));
  cr_expect(isnan(eval3(cx, parse_ok(cx, "x^0.5"), -INFINITY, 0, 0)));
  cr_expect(same_bits(eval3(cx, parse_ok(cx, "x^1.5"), -INFINITY, 0, 0), INFINITY), "pow(-inf, 1.5)");
  nh_expr_free(cx);
}

/* ---- Hash consing ---- */

Test(expr, equal_trees_are_one_node) {
  nh_expr_ctx *cx = ctx_xyz();
  const char *text = "sin(x*y) + exp(-z^2)/(1 + x)";
  const int e = parse_ok(cx, text);
  cr_expect_eq(parse_ok(cx, text), e);
  cr_expect_eq(parse_ok(cx, "sin((x)*(y)) + (exp(-(z^2))/(1+x))"), e);
  cr_expect_neq(parse_ok(cx, "sin(y*x) + exp(-z^2)/(1 + x)"), e, "no commutation");
  cr_expect_neq(parse_ok(cx, "x + y + z"), parse_ok(cx, "x + (y + z)"), "no reassociation");
  cr_expect_eq(nh_expr_number(cx, 0.5), nh_expr_number(cx, 0.5));
  cr_expect_neq(nh_expr_number(cx, 0.0), nh_expr_number(cx, -0.0), "0 and -0 differ in bits");
  cr_expect_eq(parse_ok(cx, "-0"), nh_expr_number(cx, -0.0));
  cr_expect_eq(parse_ok(cx, "0.5"), parse_ok(cx, "5e-1"));
  /* Many distinct nodes (the table grows) stay distinct and are found again. */
  int ids[3000];
  for (int i = 0; i < 3000; i++) ids[i] = nh_expr_mul(cx, nh_expr_number(cx, i + 2), nh_expr_variable(cx, i % 3));
  for (int i = 0; i < 3000; i++) {
    cr_assert_eq(nh_expr_mul(cx, nh_expr_number(cx, i + 2), nh_expr_variable(cx, i % 3)), ids[i]);
    if (i) cr_assert_neq(ids[i], ids[i - 1]);
  }
  nh_expr_free(cx);
}

/* ---- Simplification and folding ---- */

Test(expr, derivatives_are_simplified) {
  nh_expr_ctx *cx = ctx_xyz();
  const int x = nh_expr_variable(cx, 0), y = nh_expr_variable(cx, 1), zero = nh_expr_number(cx, 0);
  const int two_x = nh_expr_mul(cx, nh_expr_number(cx, 2), x);
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "x^2 + y^2"), 0), two_x, "d/dx(x^2+y^2) is the node 2*x");
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "x^2 + y^2"), 1), nh_expr_mul(cx, nh_expr_number(cx, 2), y));
  cr_expect_eq(nh_expr_diff(cx, x, 1), zero);
  cr_expect_eq(nh_expr_diff(cx, x, 0), nh_expr_number(cx, 1));
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "3"), 0), zero);
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "-sin(y)/exp(y)"), 0), zero, "the derivative's zero is +0");
  cr_expect(nh_expr_is_zero(cx, nh_expr_diff(cx, parse_ok(cx, "y^x*0 + 7"), 0)));
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "3*x"), 0), nh_expr_number(cx, 3));
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "x*y"), 0), y);
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "x - y"), 1), nh_expr_number(cx, -1));
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "sin(x)"), 0), parse_ok(cx, "cos(x)"));
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "log(x)"), 0), parse_ok(cx, "1/x"));
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "x/y"), 0), parse_ok(cx, "1/y"), "a'/b when b is constant");
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "x^3"), 0), parse_ok(cx, "3*x^2"));
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "2^y"), 1), parse_ok(cx, "2^y*0.69314718055994529"));
  /* The rewrites of the header, through the constructors */
  cr_expect_eq(nh_expr_add(cx, zero, x), x);
  cr_expect_eq(nh_expr_add(cx, x, nh_expr_number(cx, -0.0)), x);
  cr_expect_eq(nh_expr_sub(cx, x, zero), x);
  cr_expect_eq(nh_expr_sub(cx, zero, x), nh_expr_neg(cx, x));
  cr_expect_eq(nh_expr_mul(cx, nh_expr_number(cx, 1), x), x);
  cr_expect_eq(nh_expr_mul(cx, x, nh_expr_number(cx, 1)), x);
  cr_expect_eq(nh_expr_mul(cx, zero, x), zero);
  cr_expect_eq(nh_expr_mul(cx, x, zero), zero);
  cr_expect_eq(nh_expr_div(cx, x, nh_expr_number(cx, 1)), x);
  cr_expect_eq(nh_expr_div(cx, zero, x), zero);
  cr_expect_eq(nh_expr_pow(cx, x, nh_expr_number(cx, 1)), x);
  cr_expect_eq(nh_expr_pow(cx, x, zero), nh_expr_number(cx, 1));
  cr_expect_eq(nh_expr_neg(cx, nh_expr_neg(cx, x)), x);
  cr_expect_eq(parse_ok(cx, "--x"), x);
  cr_expect_eq(parse_ok(cx, "(x + 0)*1 - 0"), x);
  /* -1 in: -1 out */
  cr_expect_eq(nh_expr_add(cx, -1, x), -1);
  cr_expect_eq(nh_expr_neg(cx, 99999), -1);
  cr_expect_eq(nh_expr_diff(cx, -1, 0), -1);
  cr_expect_eq(nh_expr_diff(cx, x, NH_EXPR_MAX_SLOTS), -1);
  cr_expect_eq(nh_expr_variable(cx, NH_EXPR_MAX_SLOTS), -1);
  cr_expect_eq(nh_expr_number(cx, INFINITY), -1);
  cr_expect_eq(nh_expr_number(cx, NAN), -1);
  nh_expr_free(cx);
}

/* Numbers fold as C computes them, where the result is finite; 1/0, log(0), sqrt(-1) stay. */
Test(expr, constants_fold_exactly) {
  nh_expr_ctx *cx = ctx_xyz();
  const struct {
    const char *text;
    double value;
  } cases[] = {{"0.1 + 0.2", 0.1 + 0.2},
               {"1/3", 1.0 / 3},
               {"2/3*3", 2.0 / 3 * 3},
               {"pi", 0x1.921fb54442d18p+1},
               {"2*pi", 2 * 0x1.921fb54442d18p+1},
               {"sqrt(2)", 0x1.6a09e667f3bcdp+0},
               {"2^10", 1024},
               {"2^0.5", 0x1.6a09e667f3bcdp+0},
               {"10^-2", 1 / (10.0 * 10.0)},
               {"3^-1", 1.0 / 3},
               {"0.1^3", 0.1 * 0.1 * 0.1},
               {"-0", -0.0},
               {"-(0)", -0.0},
               {"log(1)", 0},
               {"exp(0)", 1},
               {"cos(pi)", -1},
               {"1e-400", 0},
               {"123456789012345678901234567890", 123456789012345678901234567890.0},
               {".5e1", 5},
               {"1.", 1},
               {"1E+2", 100}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    double v = NAN;
    cr_expect(nh_expr_constant(cx, parse_ok(cx, cases[i].text), &v), "'%s' folds", cases[i].text);
    cr_expect(same_bits(v, cases[i].value), "'%s' = %a, not %a", cases[i].text, v, cases[i].value);
  }
  const char *stays[] = {"1/0", "log(0)", "sqrt(-1)", "0/0", "10^400", "exp(1000)"};
  const double values[] = {INFINITY, -INFINITY, NAN, NAN, INFINITY, INFINITY};
  for (size_t i = 0; i < sizeof stays / sizeof *stays; i++) {
    const int e = parse_ok(cx, stays[i]);
    cr_expect_not(nh_expr_constant(cx, e, NULL), "'%s' folded", stays[i]);
    cr_expect(same_bits(eval3(cx, e, 0, 0, 0), values[i]), "'%s' = %g", stays[i], eval3(cx, e, 0, 0, 0));
  }
  nh_expr_free(cx);
}

Test(expr, depends_and_constant) {
  nh_expr_ctx *cx = nh_expr_new();
  char err[64];
  cr_assert_eq(nh_expr_declare(cx, "a", 0, err, sizeof err), 0);
  cr_assert_eq(nh_expr_declare(cx, "b", 64, err, sizeof err), 0); /* the same bit of the mask as a */
  cr_assert_eq(nh_expr_declare(cx, "c", 200, err, sizeof err), 0);
  const int e = parse_ok(cx, "sin(b)*c + 2");
  cr_expect_not(nh_expr_depends(cx, e, 0));
  cr_expect(nh_expr_depends(cx, e, 64));
  cr_expect(nh_expr_depends(cx, e, 200));
  cr_expect_not(nh_expr_depends(cx, e, 1));
  cr_expect_eq(nh_expr_diff(cx, e, 0), nh_expr_number(cx, 0), "slot 0 shares b's mask bit, yet ∂/∂a = 0");
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "b/0"), 0), nh_expr_number(cx, 0));
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "-b"), 0), nh_expr_number(cx, 0), "+0, not -0");
  double v = 7;
  cr_expect_not(nh_expr_constant(cx, e, &v));
  cr_expect_eq(v, 7);
  cr_expect(nh_expr_constant(cx, parse_ok(cx, "2*3 + 1"), &v) && v == 7);
  cr_expect(nh_expr_is_zero(cx, parse_ok(cx, "-0")));
  cr_expect_not(nh_expr_is_zero(cx, parse_ok(cx, "a")));
  cr_expect_eq(nh_expr_diff(cx, parse_ok(cx, "c^2"), 200), parse_ok(cx, "2*c"));
  nh_expr_free(cx);
}

/* ---- Substitution ---- */

Test(expr, substitution_rebuilds_through_the_constructors) {
  nh_expr_ctx *cx = ctx_xyz();
  const int zero = nh_expr_number(cx, 0), y = parse_ok(cx, "y");
  /* ∇V(0) of the particle: x := 0 simplifies to nothing but what remains */
  cr_expect_eq(nh_expr_substitute(cx, parse_ok(cx, "0.5*y*(2*x) + z"), 0, zero), parse_ok(cx, "z"));
  cr_expect(nh_expr_is_zero(cx, nh_expr_substitute(cx, parse_ok(cx, "sin(x)*y + x^2 - x"), 0, zero)));
  cr_expect_eq(nh_expr_substitute(cx, parse_ok(cx, "cos(x) + x/y"), 0, zero), parse_ok(cx, "1"), "cos(0) = 1, 0/y = 0");
  /* a slot it does not read: the node itself */
  const int e = parse_ok(cx, "exp(y)*z");
  cr_expect_eq(nh_expr_substitute(cx, e, 0, zero), e);
  /* by a number: the value at that point, to the bit; by an expression: the composition */
  const int f = parse_ok(cx, "x^3 - tanh(x*y) + atan(x)/(1 + z^2)");
  for (double x = -1.5; x <= 1.5; x += 0.75) {
    const int at = nh_expr_substitute(cx, f, 0, nh_expr_number(cx, x));
    cr_expect_not(nh_expr_depends(cx, at, 0));
    cr_expect(same_bits(eval3(cx, at, 99, 0.3, -0.7), eval3(cx, f, x, 0.3, -0.7)), "x = %g", x);
  }
  const int composed = nh_expr_substitute(cx, f, 0, parse_ok(cx, "y + 1"));
  cr_expect(same_bits(eval3(cx, composed, 99, 0.3, -0.7), eval3(cx, f, 1.3, 0.3, -0.7)));
  /* x := y in x − y is y − y, which the rewrites leave (they do not cancel) */
  cr_expect_eq(nh_expr_substitute(cx, parse_ok(cx, "x - y"), 0, y), nh_expr_sub(cx, y, y));
  /* 1/x at 0 stays a division (the evaluation gives inf), not a folded number */
  const int inv = nh_expr_substitute(cx, parse_ok(cx, "1/x"), 0, zero);
  cr_expect_not(nh_expr_constant(cx, inv, &(double){0}));
  cr_expect(isinf(eval3(cx, inv, 0, 0, 0)));
  /* refusals */
  cr_expect_eq(nh_expr_substitute(cx, -1, 0, zero), -1);
  cr_expect_eq(nh_expr_substitute(cx, e, 0, -1), -1);
  cr_expect_eq(nh_expr_substitute(cx, e, -1, zero), -1);
  cr_expect_eq(nh_expr_substitute(cx, e, NH_EXPR_MAX_SLOTS, zero), -1);
  cr_expect_eq(nh_expr_substitute(NULL, 0, 0, 0), -1);
  nh_expr_free(cx);
}

/* ---- Derivatives against hand-derived ones ---- */

typedef double (*ref3)(double x, double y, double z);
static double h_sinxy(double x, double y, double z) { return (void)z, cos(x * y) * y; }
static double h_xpowy_dx(double x, double y, double z) { return (void)z, y * pow(x, y - 1); }
static double h_xpowy_dy(double x, double y, double z) { return (void)z, pow(x, y) * log(x); }
static double h_logx_over_x(double x, double y, double z) { return (void)y, (void)z, (1 - log(x)) / (x * x); }
static double h_atan(double x, double y, double z) { return (void)z, y / (1 + x * x * y * y); }
static double h_norm(double x, double y, double z) { return x / sqrt(x * x + y * y + z * z); }
static double h_tanh(double x, double y, double z) { return (void)y, (void)z, 1 / (cosh(x) * cosh(x)); }
static double h_asin(double x, double y, double z) { return (void)z, (void)y, 0.5 / sqrt(1 - x * x / 4); }
static double h_acos(double x, double y, double z) { return (void)z, (void)y, -1 / sqrt(1 - x * x); }
static double h_gauss(double x, double y, double z) { return (void)z, (void)y, -2 * x * exp(-x * x); }
static double h_tan(double x, double y, double z) { return (void)z, (void)y, 1 + tan(x) * tan(x); }
static double h_sqrt(double x, double y, double z) { return (void)z, y / (2 * sqrt(x * y)); }
static double h_quot(double x, double y, double z) { return y * z / ((x + z) * (x + z)); }
static double h_sinh(double x, double y, double z) { return (void)z, (void)y, cosh(x) - 2 * sinh(2 * x); }
static double h_cube(double x, double y, double z) { return (void)z, (void)y, -3 / (x * x * x * x); }
static double h_pow_const(double x, double y, double z) { return (void)z, (void)y, 1.5 * sqrt(x); }
static double h_self_power(double x, double y, double z) { return (void)z, (void)y, pow(x, x) * (log(x) + 1); }
static double h_both(double x, double y, double z) { return pow(x + y, x * z) * (z * log(x + y) + x * z / (x + y)); }

Test(expr, derivatives_agree_with_hand_derived) {
  nh_expr_ctx *cx = ctx_xyz();
  const struct {
    const char *text;
    int slot;
    ref3 ref;
  } cases[] = {{"sin(x*y)", 0, h_sinxy},   {"x^y", 0, h_xpowy_dx},
               {"x^y", 1, h_xpowy_dy},     {"log(x)/x", 0, h_logx_over_x},
               {"atan(x*y)", 0, h_atan},   {"sqrt(x^2 + y^2 + z^2)", 0, h_norm},
               {"tanh(x)", 0, h_tanh},     {"asin(x/2)", 0, h_asin},
               {"acos(x)", 0, h_acos},     {"exp(-x^2)", 0, h_gauss},
               {"tan(x)", 0, h_tan},       {"sqrt(x*y)", 0, h_sqrt},
               {"x*y/(x + z)", 0, h_quot}, {"sinh(x) - cosh(2*x)", 0, h_sinh},
               {"x^-3", 0, h_cube},        {"x^1.5", 0, h_pow_const},
               {"x^x", 0, h_self_power},   {"(x + y)^(x*z)", 0, h_both}};
  gsl_rng *r = test_rng(5);
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    const int d = nh_expr_diff(cx, parse_ok(cx, cases[i].text), cases[i].slot);
    cr_assert(d >= 0);
    for (int k = 0; k < 50; k++) {
      const double x = 0.1 + 0.8 * gsl_rng_uniform(r), y = 0.2 + 2 * gsl_rng_uniform(r), z = 0.3 + gsl_rng_uniform(r);
      const double got = eval3(cx, d, x, y, z), want = cases[i].ref(x, y, z);
      cr_expect(fabs(got - want) <= 1e-13 * (1 + fabs(want)), "d%s/d%c at (%g, %g, %g): %.17g, by hand %.17g",
                cases[i].text, "xyz"[cases[i].slot], x, y, z, got, want);
    }
  }
  /* Exact ones: ∂²(x^3)/∂x² = 3*(2*x) rounds once, as 6*x does. */
  const int d2 = nh_expr_diff(cx, nh_expr_diff(cx, parse_ok(cx, "x^3"), 0), 0);
  for (double x = -3; x <= 3; x += 0.37) cr_expect(eval3(cx, d2, x, 0, 0) == 6 * x, "x = %g", x);
  const int d3 = nh_expr_diff(cx, d2, 0);
  cr_expect(nh_expr_constant(cx, d3, NULL) && eval3(cx, d3, 0, 0, 0) == 6, "third derivative of x^3 is 6");
  gsl_rng_free(r);
  nh_expr_free(cx);
}

/* ---- Derivatives against central differences ---- */

/* The central difference of e in slot at p (step relative to |p[slot]|) and its error bound:
 * truncation h²·f'''/6 and rounding ε·|f|/h, both taken with a wide margin. */
static double central(const nh_expr_ctx *cx, int e, int slot, const double *p, double *tol) {
  double q[3] = {p[0], p[1], p[2]};
  const double h = 1e-5 * fmax(1, fabs(p[slot]));
  q[slot] = p[slot] + h;
  const double fp = nh_expr_eval(cx, e, q);
  q[slot] = p[slot] - h;
  const double fm = nh_expr_eval(cx, e, q);
  *tol = 1e-6 * (1 + fabs(fp) + fabs(fm));
  return (fp - fm) / (2 * h);
}

static const char *const smooth[] = {
    "x^2 + y^2",
    "sin(x)*cos(y) - tan(z/3)",
    "exp(-x^2/2)/sqrt(2*pi)",
    "log(1 + x^2)*y^3",
    "x^-2 + y^-1 - z^4",
    "x^0.5 + y^1.5 + z^-0.5",
    "x^y",
    "(x + y)^(z/2)",
    "y^x^z",
    "sinh(x) - cosh(y) + tanh(z)",
    "asin(x/3) + acos(y/3) + atan(z)",
    "1/(x - y - 5)",
    "(1 - x*y)/(1 + z^2)^2",
    "sin(sin(sin(x*y)))",
    "exp(sin(x))*log(y)/z",
    "3^x*2^-y",
    "x^4 - x^-4 + x^-3",
    "(x - 1)^2*(y + 2)^-3",
    "sqrt(x^2 + y^2 + z^2)",
    "cos(exp(x/3)*log(2 + y*z))",
    "(x*y*z)^3 - x/y/z",
    "tan(atan(x) + y/7)",
    "(x^2 + 1)^(y/(z + 1))",
    "-x^2*y + 0.1*x - 1/3*z",
    "1/(1 + exp(-x*y))",
    "x^x*y^(y*z)",
    "(x + y)^(x*z - y)",
};

Test(expr, derivatives_agree_with_central_differences) {
  nh_expr_ctx *cx = ctx_xyz();
  gsl_rng *r = test_rng(11);
  int checked = 0;
  for (size_t i = 0; i < sizeof smooth / sizeof *smooth; i++) {
    const int e = parse_ok(cx, smooth[i]);
    for (int s = 0; s < 3; s++) {
      const int d = nh_expr_diff(cx, e, s);
      cr_assert(d >= 0, "%s", smooth[i]);
      for (int t = 0; t < 3; t++) {
        const int dd = nh_expr_diff(cx, d, t);
        cr_assert(dd >= 0, "%s", smooth[i]);
        for (int k = 0; k < 10; k++) {
          const double p[3] = {0.3 + 1.2 * gsl_rng_uniform(r), 0.3 + 1.2 * gsl_rng_uniform(r),
                               0.3 + 1.2 * gsl_rng_uniform(r)};
          double tol;
          const double fd = central(cx, e, s, p, &tol), an = nh_expr_eval(cx, d, p);
          cr_expect(fabs(fd - an) <= tol, "d(%s)/d%c at (%g, %g, %g): %.12g, differences %.12g", smooth[i], "xyz"[s],
                    p[0], p[1], p[2], an, fd);
          const double fd2 = central(cx, d, t, p, &tol), an2 = nh_expr_eval(cx, dd, p);
          cr_expect(fabs(fd2 - an2) <= tol * 10, "d2(%s)/d%c d%c: %.12g, differences %.12g", smooth[i], "xyz"[s],
                    "xyz"[t], an2, fd2);
          checked += isfinite(an) && isfinite(an2);
        }
      }
    }
  }
  cr_expect_geq(checked, (int)(sizeof smooth / sizeof *smooth) * 80, "only %d finite points", checked);
  /* Mixed partials agree to round-off (built by different routes). */
  for (size_t i = 0; i < sizeof smooth / sizeof *smooth; i++) {
    const int e = parse_ok(cx, smooth[i]);
    const int xy = nh_expr_diff(cx, nh_expr_diff(cx, e, 0), 1), yx = nh_expr_diff(cx, nh_expr_diff(cx, e, 1), 0);
    const double p[3] = {0.7, 1.1, 0.9}, a = nh_expr_eval(cx, xy, p), b = nh_expr_eval(cx, yx, p);
    cr_expect(fabs(a - b) <= 1e-12 * (1 + fabs(a)), "%s: d2/dxdy %.17g, d2/dydx %.17g", smooth[i], a, b);
  }
  gsl_rng_free(r);
  nh_expr_free(cx);
}

/* (((x^4)^4)^4)... is written out as C with 4^k copies of x: 5 levels are printed, 15 refused
 * (NH_EXPR_MAX_WEIGHT) instead of a printer that would run for ever. x^(x*y)^(x*y)... grows
 * polynomially with each derivative: built or refused, either way quickly. */
Test(expr, hostile_expressions_stay_bounded, .timeout = 30) {
  nh_expr_ctx *cx = ctx_xyz();
  char text[512] = "x", err[256];
  for (int i = 0; i < 5; i++) memmove(text + 1, text, strlen(text) + 1), text[0] = '(', strcat(text, ")^4");
  const int e = parse_ok(cx, text);
  const size_t n = nh_expr_print_c(cx, e, NULL, NULL, 0);
  char *c = malloc(n + 1);
  nh_expr_print_c(cx, e, NULL, c, n + 1);
  int copies = 0;
  for (const char *p = c; (p = strstr(p, "vars[0]")); p++) copies++;
  cr_expect_eq(copies, 1024, "%d copies of x", copies);
  cr_expect(same_bits(eval3(cx, e, 1.001, 0, 0), pow(1.001, 1024)) ||
            fabs(eval3(cx, e, 1.001, 0, 0) / pow(1.001, 1024) - 1) < 1e-12);
  free(c);
  for (int i = 5; i < 15; i++) memmove(text + 1, text, strlen(text) + 1), text[0] = '(', strcat(text, ")^4");
  int where;
  cr_expect_eq(nh_expr_parse(cx, text, &where, err, sizeof err), -1);
  cr_expect(strstr(err, "expression too large") == err, "%s", err);
  strcpy(text, "x");
  for (int i = 0; i < 60; i++) strcat(text, "^(x*y)");
  int d = parse_ok(cx, text);
  for (int k = 0; k < 4 && d >= 0; k++) d = nh_expr_diff(cx, d, k % 2);
  if (d >= 0) cr_expect_leq(nh_expr_print_c(cx, d, NULL, NULL, 0), (size_t)NH_EXPR_MAX_WEIGHT * 16);
  nh_expr_free(cx);
}

/* ---- Printing ---- */

Test(expr, print_c_writes_the_evaluation_order) {
  nh_expr_ctx *cx = ctx_xyz();
  const char *names[] = {"q[0]", "q[1]", "v[0]"};
  const struct {
    const char *text, *c;
  } cases[] = {{"x^2", "(q[0]*q[0])"},
               {"x^3", "((q[0]*q[0])*q[0])"},
               {"x^4", "(((q[0]*q[0])*q[0])*q[0])"},
               {"x^-1", "(0x1p+0/q[0])"},
               {"x^-2", "(0x1p+0/(q[0]*q[0]))"},
               {"(x+y)^2", "((q[0]+q[1])*(q[0]+q[1]))"},
               {"x^0.5", "sqrt(q[0])"},
               {"x^1.5", "pow(q[0],0x1.8p+0)"},
               {"x^5", "pow(q[0],0x1.4p+2)"},
               {"x^-0.5", "pow(q[0],(-0x1p-1))"},
               {"x^y", "pow(q[0],q[1])"},
               {"x - y - z", "((q[0]-q[1])-v[0])"},
               {"x/(y*z)", "(q[0]/(q[1]*v[0]))"},
               {"-x", "(-q[0])"},
               {"x - -1", "(q[0]-(-0x1p+0))"},
               {"-0", "(-0x0p+0)"},
               {"0.1", "0x1.999999999999ap-4"},
               {"1/3", "0x1.5555555555555p-2"},
               {"pi", "0x1.921fb54442d18p+1"},
               {"5e-324", "0x0.0000000000001p-1022"},
               {"sin(x) + atan(cos(y))", "(sin(q[0])+atan(cos(q[1])))"},
               {"sqrt(x)", "sqrt(q[0])"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char buf[256];
    const size_t n = nh_expr_print_c(cx, parse_ok(cx, cases[i].text), names, buf, sizeof buf);
    cr_expect_str_eq(buf, cases[i].c, "'%s' as C: '%s'", cases[i].text, buf);
    cr_expect_eq(n, strlen(cases[i].c));
  }
  /* Cut as snprintf cuts; the length needed all the same. No names: vars[slot]. */
  char small[6];
  const int e = parse_ok(cx, "x - y - z");
  cr_expect_eq(nh_expr_print_c(cx, e, names, small, sizeof small), strlen("((q[0]-q[1])-v[0])"));
  cr_expect_str_eq(small, "((q[0");
  cr_expect_eq(nh_expr_print_c(cx, e, names, NULL, 0), strlen("((q[0]-q[1])-v[0])"));
  char buf[64];
  nh_expr_print_c(cx, e, NULL, buf, sizeof buf);
  cr_expect_str_eq(buf, "((vars[0]-vars[1])-vars[2])");
  nh_expr_free(cx);
}

Test(expr, print_text_is_minimal_and_reads_back) {
  nh_expr_ctx *cx = ctx_xyz();
  const struct {
    const char *text, *printed;
  } cases[] = {{"x - (y - z)", "x - (y - z)"},
               {"(x - y) - z", "x - y - z"},
               {"x/(y/z)", "x/(y/z)"},
               {"(x*y)*z", "x*y*z"},
               {"x*(y*z)", "x*(y*z)"},
               {"-(x^2)", "-x^2"},
               {"(-x)^2", "(-x)^2"},
               {"(x^y)^z", "(x^y)^z"},
               {"x^(y^z)", "x^y^z"},
               {"x^(-y)", "x^-y"},
               {"x^(y*z)", "x^(y*z)"},
               {"(-2)^x", "(-2)^x"},
               {"-(x + y)", "-(x + y)"},
               {"-x*y", "-x*y"},
               {"x*(-y)", "x*-y"},
               {"x + (-1)", "x + -1"},
               {"0.1*x", "0.1*x"},
               {"1/3", "0.3333333333333333"},
               {"2/3", "0.6666666666666666"},
               {"1e300*x", "1e+300*x"},
               {"-0", "-0"},
               {"pi", "3.141592653589793"},
               {"sin(x + y)^2", "sin(x + y)^2"},
               {"exp(-z)", "exp(-z)"}};
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char buf[256];
    const int e = parse_ok(cx, cases[i].text);
    cr_expect_eq(nh_expr_print(cx, e, buf, sizeof buf), strlen(cases[i].printed));
    cr_expect_str_eq(buf, cases[i].printed, "'%s' printed as '%s'", cases[i].text, buf);
    cr_expect_eq(parse_ok(cx, buf), e, "'%s' read back as another node", buf);
  }
  nh_expr_free(cx);
}

/* Every finite double, as text, reads back to every bit (the shortest of %.15g-%.17g). */
Test(expr, printed_numbers_keep_every_bit) {
  nh_expr_ctx *cx = ctx_xyz();
  gsl_rng *r = test_rng(3);
  const double special[] = {0.1,  0.2,    0.3, 1.0 / 3, 2.0 / 3, 1.0 / 7, 0x1p-1074, 0x1p-1022, 0x1.fffffffffffffp+1023,
                            1e23, -1e-310};
  for (int k = 0; k < 2000; k++) {
    double v;
    if (k < (int)(sizeof special / sizeof *special))
      v = special[k];
    else {
      const uint64_t bits = (uint64_t)gsl_rng_get(r) << 32 | gsl_rng_get(r);
      memcpy(&v, &bits, sizeof v);
      if (!isfinite(v)) continue;
    }
    const int e = nh_expr_number(cx, v);
    char buf[64];
    nh_expr_print(cx, e, buf, sizeof buf);
    cr_assert_eq(parse_ok(cx, buf), e, "%a printed as %s", v, buf);
    cr_assert_leq(strlen(buf), 24);
    nh_expr_print_c(cx, e, NULL, buf, sizeof buf);
    const char *hex = buf + (buf[0] == '(' ? 1 : 0);
    cr_assert(same_bits(strtod(hex, NULL), v), "%a as C: %s", v, buf);
  }
  gsl_rng_free(r);
  nh_expr_free(cx);
}

/* A random text of the grammar, parentheses left out at random (so precedence decides). */
static void random_text(gsl_rng *r, int depth, char *buf, size_t len) {
  static const char *const leaves[] = {"x", "y", "z", "2", "0.5", "3.25", "1e-3", "pi", "0", "1", "7"};
  static const char *const fns[] = {"sin",  "cos",  "tan",  "exp",  "log",  "sqrt",
                                    "sinh", "cosh", "tanh", "asin", "acos", "atan"};
  static const char *const ops[] = {" + ", " - ", "*", "/", "^"};
  const int kind = depth == 0 ? 0 : (int)gsl_rng_uniform_int(r, 5);
  const int paren = gsl_rng_uniform_int(r, 2);
  char a[4096] = "", b[4096] = "";
  if (kind == 0) {
    snprintf(buf, len, "%s", leaves[gsl_rng_uniform_int(r, sizeof leaves / sizeof *leaves)]);
  } else if (kind == 1) {
    random_text(r, depth - 1, a, sizeof a);
    snprintf(buf, len, paren ? "-(%s)" : "-%s", a);
  } else if (kind == 2) {
    random_text(r, depth - 1, a, sizeof a);
    snprintf(buf, len, "%s(%s)", fns[gsl_rng_uniform_int(r, 12)], a);
  } else {
    random_text(r, depth - 1, a, sizeof a);
    random_text(r, depth - 1, b, sizeof b);
    const char *op = ops[gsl_rng_uniform_int(r, 5)];
    snprintf(buf, len, paren ? "(%s)%s(%s)" : "%s%s%s", a, op, b);
  }
}

/* Random texts: parse, print, parse again gives the same node, and printing that gives the same
 * text; the printed C's length as returned. */
Test(expr, random_texts_print_and_read_back) {
  nh_expr_ctx *cx = ctx_xyz();
  gsl_rng *r = test_rng(17);
  for (int k = 0; k < 3000; k++) {
    char text[4096], printed[8192], again[8192];
    random_text(r, 1 + k % 5, text, sizeof text);
    const int e = parse_ok(cx, text);
    const int d = nh_expr_diff(cx, e, (int)(k % 3));
    cr_assert(d >= 0, "%s", text);
    const int ids[2] = {e, d};
    for (int j = 0; j < 2; j++) {
      const size_t n = nh_expr_print(cx, ids[j], printed, sizeof printed);
      cr_assert_lt(n, sizeof printed);
      cr_assert_eq(parse_ok(cx, printed), ids[j], "'%s' printed as '%s', which reads back as another node", text,
                   printed);
      nh_expr_print(cx, parse_ok(cx, printed), again, sizeof again);
      cr_assert_str_eq(again, printed);
    }
  }
  gsl_rng_free(r);
  nh_expr_free(cx);
}

/* ---- The printed C, compiled, against the interpreter ---- */

/* Runs /usr/bin/cc on src into lib; its exit status (output into log). */
static int compile(const char *src, const char *lib, const char *log) {
  const pid_t pid = test_fork();
  cr_assert(pid >= 0);
  if (pid == 0) {
    if (!freopen(log, "w", stdout) || dup2(1, 2) < 0) _exit(126);
    execl("/usr/bin/cc", "cc", "-std=c11", "-O2", "-ffp-contract=off", "-shared", "-fPIC", "-o", lib, src, "-lm",
          (char *)NULL);
    _exit(127);
  }
  int status;
  cr_assert_eq(waitpid(pid, &status, 0), pid);
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

enum { COMPILED_MAX = 512 };

/* The expressions of smooth[], random ones, and their first derivatives and one second derivative. */
static int compiled_set(nh_expr_ctx *cx, int *ids) {
  int n = 0;
  for (size_t i = 0; i < sizeof smooth / sizeof *smooth; i++) ids[n++] = parse_ok(cx, smooth[i]);
  gsl_rng *r = test_rng(23);
  char text[4096];
  for (int k = 0; k < 30; k++) random_text(r, 4, text, sizeof text), ids[n++] = parse_ok(cx, text);
  gsl_rng_free(r);
  for (int i = 0, m = n; i < m; i++) {
    for (int s = 0; s < 3; s++) ids[n++] = nh_expr_diff(cx, ids[i], s);
    ids[n++] = nh_expr_diff(cx, nh_expr_diff(cx, ids[i], 0), 1);
  }
  for (int i = 0; i < n; i++) cr_assert(ids[i] >= 0);
  return n;
}

static void write_source(const nh_expr_ctx *cx, const int *ids, int n, const char *path) {
  FILE *f = fopen(path, "w");
  cr_assert(f);
  fputs("#include <math.h>\n", f);
  const char *names[] = {"q[0]", "q[1]", "q[2]"};
  for (int i = 0; i < n; i++) {
    const size_t len = nh_expr_print_c(cx, ids[i], names, NULL, 0);
    char *buf = malloc(len + 1);
    cr_assert_eq(nh_expr_print_c(cx, ids[i], names, buf, len + 1), len);
    cr_assert_eq(strlen(buf), len);
    fprintf(f, "double f%d(const double *q) { return %s; }\n", i, buf);
    free(buf);
  }
  cr_assert_eq(fclose(f), 0);
}

Test(expr, compiled_c_matches_the_interpreter_bit_for_bit, .timeout = 120) {
  if (access("/usr/bin/cc", X_OK) != 0) cr_skip_test("no /usr/bin/cc");
  nh_expr_ctx *cx = ctx_xyz();
  int ids[COMPILED_MAX];
  const int n = compiled_set(cx, ids);
  char dir[] = "/tmp/nh-expr-XXXXXX", src[64], lib[64], log[64];
  cr_assert(mkdtemp(dir));
  snprintf(src, sizeof src, "%s/f.c", dir), snprintf(lib, sizeof lib, "%s/f.so", dir);
  snprintf(log, sizeof log, "%s/cc.log", dir);
  write_source(cx, ids, n, src);
  char out[4096] = "";
  const int status = compile(src, lib, log);
  test_read_file(log, out, sizeof out);
  void *h = status == 0 ? dlopen(lib, RTLD_NOW | RTLD_LOCAL) : NULL; /* stays loaded once its file is gone */
  const char *why = status ? out : h ? "" : dlerror();
  remove(src), remove(lib), remove(log), rmdir(dir);
  cr_assert(h, "cc exited with %d: %s", status, why);
  gsl_rng *r = test_rng(29);
  long compared = 0, finite = 0;
  for (int i = 0; i < n; i++) {
    char sym[16];
    snprintf(sym, sizeof sym, "f%d", i);
    double (*f)(const double *);
    *(void **)&f = dlsym(h, sym);
    cr_assert(f, "%s", sym);
    for (int k = 0; k < 400; k++) {
      /* Mostly inside the functions' domains, a fifth anywhere in [-4, 4] (nan and inf included) */
      const double lo = k % 5 ? 0.05 : -4, w = k % 5 ? 2.5 : 8;
      const double q[3] = {lo + w * gsl_rng_uniform(r), lo + w * gsl_rng_uniform(r), lo + w * gsl_rng_uniform(r)};
      const double c = f(q), v = nh_expr_eval(cx, ids[i], q);
      cr_expect(same_bits(c, v), "f%d at (%a, %a, %a): compiled %a, interpreted %a", i, q[0], q[1], q[2], c, v);
      compared++, finite += isfinite(v);
    }
  }
  cr_expect_geq(finite, compared / 2, "only %ld of %ld values finite", finite, compared);
  dlclose(h);
  gsl_rng_free(r);
  nh_expr_free(cx);
}

/* ---- Out of memory ---- */

/* Builds enough nodes that the arrays and the hash table grow, differentiates and prints: -1 or
 * NULL where an allocation fails, never a crash, nothing leaked. */
static int build_all(void) {
  nh_expr_ctx *cx = nh_expr_new();
  if (!cx) return -1;
  char err[256], text[2048] = "x";
  int rc = nh_expr_declare(cx, "x", 0, err, sizeof err) || nh_expr_declare(cx, "y", 1, err, sizeof err) ? -1 : 0;
  for (int i = 0; i < 60; i++) snprintf(text + strlen(text), 32, " + sin(%d*x*y)^%d", i, i % 5 + 1);
  const int e = rc ? -1 : nh_expr_parse(cx, text, NULL, err, sizeof err);
  if (e < 0 && rc == 0) cr_expect_str_eq(err, "out of memory");
  const int d = nh_expr_diff(cx, nh_expr_diff(cx, e, 0), 1);
  const int s = nh_expr_substitute(cx, d, 0, nh_expr_number(cx, 0.5));
  char buf[64];
  nh_expr_print(cx, s, buf, sizeof buf);
  nh_expr_free(cx);
  return d < 0 || s < 0 ? -1 : 0;
}

Test(expr, allocation_failures_return_minus_one) {
  const long live = test_live_blocks();
  cr_assert_eq(build_all(), 0);
  int failed = 0;
  for (long k = 1;; k++) {
    test_fail_allocation = k;
    const int rc = build_all();
    const int reached = test_fail_allocation <= 0;
    test_fail_allocation = 0;
    if (!reached) {
      cr_expect_eq(rc, 0);
      break;
    }
    failed++;
    cr_expect_eq(rc, -1, "allocation %ld failed, yet all was built", k);
    cr_expect_eq(test_live_blocks(), live, "allocation %ld failed: blocks leaked", k);
  }
  cr_expect_geq(failed, 8, "only %d allocations", failed);
}
