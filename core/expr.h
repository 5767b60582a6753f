/* Expressions in named variables, for systems written in a spec (issue 50): parse text into a
 * tree, differentiate it symbolically, print it back as C or as text, evaluate it.
 *
 * Why our own and not GNU libmatheval (measured on Debian's 1.1.11): libmatheval prints every
 * number with %g, six digits (0.1234567890123 comes back as 0.123457, the derivative of 3^x holds
 * log 3 as 1.09861), so C generated from its output loses precision; its derivatives keep every
 * 0*x term (x^2 + y^2 differentiated in x prints as ((2*x)+(0*y))), which the compiler may not drop
 * without -ffast-math; it prints x^2, which is not C; and its tree is private, so nothing of ours
 * could walk it to print C or to evaluate it without its interpreter. Here numbers keep every bit
 * (printed as C99 hexadecimal literals), derivatives are simplified as they are built, and the same
 * tree is printed as C and evaluated by the interpreter in the same order of operations, so that
 * the two agree to the bit (with -ffp-contract=off).
 *
 * Grammar (the usual precedence, ^ right-associative and above unary minus: -x^2 = -(x^2)):
 *   expr   := term (('+' | '-') term)*
 *   term   := unary (('*' | '/') unary)*
 *   unary  := ('-' | '+') unary | power
 *   power  := atom ('^' unary)?
 *   atom   := NUMBER | NAME | NAME '(' expr ')' | '(' expr ')'
 * Spaces, tabs and line ends may stand between tokens. NUMBER is a decimal literal as strtod
 * reads it (1, 0.5, 2e-3; no hexadecimal, inf or nan). NAME is [A-Za-z_][A-Za-z0-9_]*: a declared
 * symbol, the constant pi, or one of the functions sin cos tan exp log sqrt sinh cosh tanh asin
 * acos atan. Functions that are not differentiable everywhere they are defined (abs, sign, floor,
 * ceil, min, max, step) are refused by name, with that reason.
 *
 * Nodes live in a context and are shared: building the same node twice gives the same id (hash
 * consing), so equal subexpressions are one node and node ids compare structurally. Ids are ints,
 * valid until the context is freed. No function here keeps a pointer to its arguments. */
#ifndef NH_CORE_EXPR_H
#define NH_CORE_EXPR_H

#include <stddef.h>

typedef struct nh_expr_ctx nh_expr_ctx;

/* A new context without symbols; NULL if out of memory. */
nh_expr_ctx *nh_expr_new(void);
void nh_expr_free(nh_expr_ctx *cx);

/* Declares NAME as variable number slot (0 ≤ slot < NH_EXPR_MAX_SLOTS): where NAME appears in a
 * parsed text, the tree reads vars[slot]. Returns 0; -1 if the name is not a NAME, is a function's
 * name or pi, or is declared already, or slot is out of range (err says which). Several names may
 * share a slot; nh_expr_print writes the first declared. */
#define NH_EXPR_MAX_SLOTS 256
int nh_expr_declare(nh_expr_ctx *cx, const char *name, int slot, char *err, size_t errlen);

/* Parses text into a node id (≥ 0). On an error returns -1, writes a message into err ("unknown
 * name 'zz'", "expected ')'", "abs is not differentiable at 0: write the expression without it")
 * and the byte offset into text where the error is into *where (where may be NULL). Empty text is
 * an error. */
int nh_expr_parse(nh_expr_ctx *cx, const char *text, int *where, char *err, size_t errlen);

/* Limits on hostile input, so that the recursive parser, evaluator, printers and differentiation
 * cannot overflow the stack nor run for ever: parentheses, unary signs, powers and function calls
 * nest at most NH_EXPR_MAX_NESTING deep in a text; a tree is at most NH_EXPR_MAX_DEPTH deep, and
 * written out as a tree (shared subtrees once per use, as nh_expr_print_c writes them) at most
 * NH_EXPR_MAX_WEIGHT operations and leaves. A constructor that would pass them returns -1; the
 * parser says "expression too large". */
#define NH_EXPR_MAX_NESTING 200
#define NH_EXPR_MAX_DEPTH 2000
#define NH_EXPR_MAX_WEIGHT (1 << 22)

/* Node constructors (all simplify as below; -1 in, out of memory or past the limits above: -1
 * out). Numbers must be finite (C has no literal for inf or nan); 0 and −0 are different numbers.
 * Numbers are folded where the result is finite, else the operation stays in the tree (1/0). */
int nh_expr_number(nh_expr_ctx *cx, double value);
int nh_expr_variable(nh_expr_ctx *cx, int slot);
int nh_expr_add(nh_expr_ctx *cx, int a, int b);
int nh_expr_sub(nh_expr_ctx *cx, int a, int b);
int nh_expr_mul(nh_expr_ctx *cx, int a, int b);
int nh_expr_div(nh_expr_ctx *cx, int a, int b);
int nh_expr_neg(nh_expr_ctx *cx, int a);
/* a^b: x^1 → x, x^0 → 1, numbers folded as nh_expr_eval computes them. */
int nh_expr_pow(nh_expr_ctx *cx, int a, int b);

/* ∂e/∂vars[slot], simplified: constants are folded (only where the result is exact or is what the
 * evaluation would compute anyway), and 0 + x, x + 0, x − 0, 0 − x (→ −x), 1·x, x·1, 0·x, x·0
 * (→ 0), x/1, 0/x (→ 0; but 0/0 stays), x^1, x^0 (→ 1), −(−x) are rewritten. -1 if out of memory
 * or past the limits above. The derivative's zero is the number +0. */
int nh_expr_diff(nh_expr_ctx *cx, int e, int slot);
/* The rewrites are algebra, not IEEE identities: 0·x → 0 also where x is inf or nan, x + 0 → x
 * also for x = −0. Both evaluations see the rewritten tree, so they still agree to the bit. */

/* e with vars[slot] replaced by the node value, rebuilt through the constructors (so simplified as
 * they simplify: x·y at y = 0 is 0); -1 if out of memory or past the limits above. What nhbench
 * proves with it (systems/defined.c: ∇V(0) = 0) holds as algebra, with the rewrites' caveat. */
int nh_expr_substitute(nh_expr_ctx *cx, int e, int slot, int value);

/* What a node is. nh_expr_is_zero: the number 0 or −0. */
int nh_expr_is_zero(const nh_expr_ctx *cx, int e);
/* 1 and *value set if e is a number (after folding), else 0. */
int nh_expr_constant(const nh_expr_ctx *cx, int e, double *value);
/* Whether e reads vars[slot] (directly or below). */
int nh_expr_depends(const nh_expr_ctx *cx, int e, int slot);

/* The value of e at vars (vars[slot] for every slot e reads). Evaluates in the order the C printer
 * writes, with the same functions: a number exponent m, an integer with 1 ≤ |m| ≤ 4, as products
 * from the left (x^3 = (x*x)*x, x^-2 = 1/(x*x)), x^0.5 as sqrt(x), other powers as pow. NaN for an
 * e that is not a node. */
double nh_expr_eval(const nh_expr_ctx *cx, int e, const double *vars);

/* e as a C expression into buf (len bytes, NUL-terminated, cut if short); returns the length it
 * needs, as snprintf. names[slot] is the C text for vars[slot] ("q[2]", "p[0]"); only those texts,
 * hexadecimal literals (0x1.999999999999ap-4), parentheses, + - * / and the math.h function names
 * above (and pow) are written: nothing of the parsed text reaches the output. Every binary
 * operation is parenthesized, so that C evaluates in the tree's order; negative numbers (−0 too)
 * are parenthesized, (-0x1p+0). The caller's C file includes <math.h>. A slot without a name
 * (names NULL, or names[slot] NULL) is written vars[slot]. */
size_t nh_expr_print_c(const nh_expr_ctx *cx, int e, const char *const *names, char *buf, size_t len);

/* e as text for people and files into buf, as nh_expr_print_c: names as declared, numbers with
 * %.17g (shortest of %.15g/%.16g/%.17g that reads back the same), ^ for powers, parentheses
 * only where precedence needs them. Parsing the output gives the same node (in a context where the
 * same names are declared; a slot without a declared name is written vars[slot], which does not
 * parse). */
size_t nh_expr_print(const nh_expr_ctx *cx, int e, char *buf, size_t len);

#endif
