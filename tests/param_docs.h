/* What a parameter's documentation states, read from its help text (core/param.h's
 * nh_param_desc.help, the text `nhbench list systems` and `nhbench list methods` print), for the
 * contract tests that hold every system's and method's parameter table to its documentation
 * (tests/contracts/test_system_parameters.c, test_method_parameters.c): the table is the registry's,
 * the expectation is the prose written beside it, so neither test keeps a copy of the tables.
 *
 * The help texts state values in a few forms, each read here as written:
 *   "(default pi/6)", "(notebook default 0)"          the default, exactly;
 *   "1 = lambda(q0,p0) of ... (default); 0 = ..."    the default: the value the "(default)" clause names;
 *   "(5, as ode15i's default MaxOrder)"              the default: the value opening a group that says "default";
 *   "(paper: 28, Paris 1851)", "(papers: 0.01, 0.1, 1, 2; ...)", "(notebook: 2 pi, pi)",
 *   "(ode15i's 1e-6, ...)", "suggests g = 1", "suggests 9.81"
 *                                                    the papers' (or the reference's) values: the default
 *                                                    is one of them, and every one is in the range;
 *   "(notebook: 0, ..., 9)"                          a range of values: the default inside, the ends in range;
 *   "(Exp 1: 12)", "(Exp 3: 1/16)"                   an experiment's value: in the range.
 * A value is a number, pi, sqrt N, or two of them joined by *, / or a blank ("2 pi", "pi/3",
 * "0.75 * 0.01", "1/16"); a list's items that open with no value ("Paris 1851" after its value,
 * "attracting", "spec/herglotz.md §6") are read as no value. A help text that states none of
 * these leaves the default to the papers' list in the test. */
#ifndef NH_TEST_PARAM_DOCS_H
#define NH_TEST_PARAM_DOCS_H

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define DOC_MAX_VALUES 16

typedef struct {
  int has_default;              /* the help names the default */
  double def;                   /* ... as a number */
  char def_word[32];            /* ... or as a word (a choice's name), else "" */
  int n_one_of;                 /* the papers' values: the default is one of them */
  double one_of[DOC_MAX_VALUES];
  int one_of_is_range;          /* "a, ..., b": the default lies within the values */
  int n_in_range;               /* every value the help states: each inside [min, max] */
  double in_range[DOC_MAX_VALUES];
} doc_stated;

static inline int doc_ends_value(char c) { return c == '\0' || c == ' ' || c == ',' || c == ')' || c == ';'; }

/* One term at *s: a decimal number (no inf, nan or hex), "pi" or "sqrt N". Advances *s past it. */
static inline int doc_term(const char **s, double *v) {
  const char *p = *s;
  if (strncmp(p, "pi", 2) == 0 && !isalnum((unsigned char)p[2]) && p[2] != '_') {
    *v = 3.14159265358979323846, *s = p + 2;
    return 1;
  }
  if (strncmp(p, "sqrt ", 5) == 0) {
    const char *q = p + 5;
    double x;
    if (!doc_term(&q, &x)) return 0;
    *v = sqrt(x), *s = q;
    return 1;
  }
  const char *digits = p + (*p == '-');
  if (!(isdigit((unsigned char)*digits) || (*digits == '.' && isdigit((unsigned char)digits[1])))) return 0;
  char *end;
  *v = strtod(p, &end);
  if (end == p) return 0;
  *s = end;
  return 1;
}

/* A value at *s (see above), ending where a value may end; advances *s past it. 0: none there. */
static inline int doc_value(const char **s, double *v) {
  const char *p = *s;
  double a, b;
  if (!doc_term(&p, &a)) return 0;
  const char *q = p;
  if (strncmp(q, " * ", 3) == 0 || strncmp(q, " / ", 3) == 0 || *q == '*' || *q == '/') {
    const char op = q[0] == ' ' ? q[1] : q[0];
    q += q[0] == ' ' ? 3 : 1;
    if (doc_term(&q, &b)) a = op == '*' ? a * b : a / b, p = q;
    else return 0;
  } else if (strncmp(q, " pi", 3) == 0 && doc_ends_value(q[3])) {
    a *= 3.14159265358979323846, p = q + 3;
  }
  if (!doc_ends_value(*p)) return 0;
  *v = a, *s = p;
  return 1;
}

static inline void doc_add(double *list, int *n, double v) {
  if (*n < DOC_MAX_VALUES) list[(*n)++] = v;
}

/* The comma-separated list at s, up to ")" or ";": each item's opening value, "..." as a range. */
static inline void doc_list(const char *s, doc_stated *d, int one_of) {
  for (;;) {
    while (*s == ' ') s++;
    double v;
    if (strncmp(s, "...", 3) == 0) {
      if (one_of) d->one_of_is_range = 1;
    } else if (doc_value(&s, &v)) {
      if (one_of) doc_add(d->one_of, &d->n_one_of, v);
      doc_add(d->in_range, &d->n_in_range, v);
    }
    s += strcspn(s, ",);");
    if (*s != ',') return;
    s++;
  }
}

/* What help states (see the top of this file). */
static inline doc_stated doc_read(const char *help) {
  doc_stated d;
  memset(&d, 0, sizeof d);
  if (!help) return d;
  for (const char *p = help; (p = strchr(p, '(')) != NULL; p++) {
    const char *in = p + 1, *close = strchr(in, ')');
    const size_t glen = close ? (size_t)(close - in) : strlen(in);
    const char *colon = memchr(in, ':', glen);
    double v;
    if (colon && (size_t)(colon - in) <= 12) {
      /* "(LABEL: LIST": the papers' and the notebook's values; an experiment's */
      const size_t llen = (size_t)(colon - in);
      const int papers = (llen == 5 && strncmp(in, "paper", 5) == 0) || (llen == 6 && strncmp(in, "papers", 6) == 0) ||
                         (llen == 8 && strncmp(in, "notebook", 8) == 0);
      if (papers) doc_list(colon + 1, &d, 1);
      else if (strncmp(in, "Exp ", 4) == 0) doc_list(colon + 1, &d, 0);
    }
    const char *word_end = in + strcspn(in, " ;:,)");
    if (word_end - in > 2 && strncmp(word_end - 2, "'s", 2) == 0 && *word_end == ' ') doc_list(word_end + 1, &d, 1);
    const char *q = in;
    if (doc_value(&q, &v) && *q == ',') {
      /* "(V, as SOURCE's default ...)" */
      const char *def = strstr(in, "default");
      if (def && (!close || def < close)) d.has_default = 1, d.def = v;
    }
  }
  /* "default V" (the word default, then a value) */
  for (const char *p = help; (p = strstr(p, "default ")) != NULL; p++) {
    const char *q = p + 8;
    double v;
    if ((p == help || !isalnum((unsigned char)p[-1])) && doc_value(&q, &v)) d.has_default = 1, d.def = v;
  }
  /* "V = ... (default)": the clause's opening value or word */
  const char *mark = strstr(help, "(default)");
  if (mark) {
    const char *start = mark;
    while (start > help && start[-1] != ';' && start[-1] != ':') start--;
    while (*start == ' ') start++;
    const char *eq = strstr(start, " = ");
    if (eq && eq < mark) {
      double v;
      const char *q = start;
      if (doc_value(&q, &v) && q == eq) d.has_default = 1, d.def = v;
      else if ((size_t)(eq - start) < sizeof d.def_word && strcspn(start, " ") == (size_t)(eq - start))
        d.has_default = 1, snprintf(d.def_word, sizeof d.def_word, "%.*s", (int)(eq - start), start);
    }
  }
  /* "suggests [NAME =] V" */
  for (const char *p = help; (p = strstr(p, "suggests ")) != NULL; p++) {
    const char *q = p + 9;
    double v;
    if (!doc_value(&q, &v)) {
      const char *eq = strstr(q, " = ");
      if (!eq || eq - q > 16 || memchr(q, ' ', (size_t)(eq - q))) continue;
      q = eq + 3;
      if (!doc_value(&q, &v)) continue;
    }
    doc_add(d.one_of, &d.n_one_of, v);
    doc_add(d.in_range, &d.n_in_range, v);
  }
  return d;
}

/* a and b agree to the rounding of the expression that gave one of them (pi/3 written out as a
 * literal and computed here). */
static inline int doc_same(double a, double b) { return a == b || fabs(a - b) <= 4 * 2.220446049250313e-16 * fabs(b); }

/* err is "PREFIX" "V is out of range [LO, HI]" with V, LO and HI reading back exactly as value, lo
 * and hi (whatever digits the printer chose). 1 if so. */
static inline int doc_is_range_message(const char *err, const char *prefix, double value, double lo, double hi) {
  const size_t n = strlen(prefix);
  if (strncmp(err, prefix, n) != 0) return 0;
  const char *p = err + n;
  char *end;
  const double v = strtod(p, &end);
  if (end == p || v != value || strncmp(end, " is out of range [", 18) != 0) return 0;
  p = end + 18;
  const double a = strtod(p, &end);
  if (end == p || a != lo || strncmp(end, ", ", 2) != 0) return 0;
  p = end + 2;
  const double b = strtod(p, &end);
  return end != p && b == hi && strcmp(end, "]") == 0;
}

#endif
