/* Claims reports (`nhbench report`, `make paper`): a claims file lists, item by item, what a paper
 * or its spec claims, which results file and dataset measure it, how the measured number is
 * reduced (a maximum, a drift slope, an order over h, ...) and what is expected of it. The report
 * reads the numbers from the harness's HDF5 files (never from the claims file) and gives each row
 * a verdict: pass, fail or not-verified (with the reason). Format: README.md, "Reproducing the
 * papers", and studies/paper/README.md. */
#ifndef NH_REPORT_H
#define NH_REPORT_H

#include <stddef.h>
#include <stdio.h>

#include "core/text.h" /* NH_TEXT_LONG */
#include "results/results.h" /* nh_h5_select */

/* NH_SHOWN: a row that shows a measured value the spec asks for without a claim of its own (a
 * context value): listed with its value, never counted as a pass; an item of shown rows only is
 * shown. */
typedef enum { NH_PASS, NH_FAIL, NH_NOT_VERIFIED, NH_SHOWN, NH_VERDICTS } nh_verdict;
extern const char *const nh_verdict_names[NH_VERDICTS];

/* ---- expectations ---------------------------------------------------------------------------- */
/* "in [a, b]", "< X", "<= X", "> X", ">= X", "~ X rel r" (|m − X| ≤ r|X|), "~ X abs a", where X is
 * a number, "@id" (another row's measured value in the same claims file) or "k * @id". */
/* NH_EXPECT_NONE: a zeroed nh_expect (a row that only measures), met by nothing. */
typedef enum {
  NH_EXPECT_NONE,
  NH_EXPECT_IN,
  NH_EXPECT_LT,
  NH_EXPECT_LE,
  NH_EXPECT_GT,
  NH_EXPECT_GE,
  NH_EXPECT_REL,
  NH_EXPECT_ABS
} nh_expect_op;
typedef struct {
  nh_expect_op op;
  double a, b;     /* the bounds of `in`; the tolerance of `~` in b */
  double factor;   /* X = factor · ref when ref[0], else X = a */
  char ref[64];    /* "" or the id X refers to */
} nh_expect;
/* Parses TEXT; returns 0, or -1 with a message quoting the text in err. */
int nh_expect_parse(const char *text, nh_expect *e, char *err, size_t errlen);
/* Whether m meets e, X being `x` (the resolved reference, or e->a). NaN never meets anything. */
int nh_expect_holds(const nh_expect *e, double x, double m);

/* ---- measures -------------------------------------------------------------------------------- */
/* How the free dimension of a selected slice is reduced to one number. */
typedef enum {
  NH_REDUCE_VALUE,         /* no free dimension: the value itself */
  NH_REDUCE_ABS,           /* |value| */
  NH_REDUCE_MAX_ABS,
  NH_REDUCE_MAX,
  NH_REDUCE_MIN,
  NH_REDUCE_MEAN,
  NH_REDUCE_MEAN_ABS,
  NH_REDUCE_FIRST,
  NH_REDUCE_LAST,
  NH_REDUCE_SLOPE,         /* least-squares slope against the coordinate (t for samples) */
  NH_REDUCE_REL_GROWTH,    /* slope · (coordinate span) / mean |x|: ≈ 2 for linear growth from 0 */
  NH_REDUCE_LOGLOG_SLOPE,  /* least-squares slope of log|x| against log(coordinate): an order over h */
  NH_REDUCE_FINEST_ORDER,  /* the same slope over the two smallest coordinates only */
  NH_REDUCE_ARGMAX_ABS,    /* the coordinate (e.g. t) where |x| is largest */
  NH_REDUCE_MAX_STEP,      /* the largest |x_k+1 − x_k| between neighbours (wrapped by `period`) */
  NH_REDUCE_INTEGRAL,      /* ∫ x dc by the trapezoidal rule over the coordinate (sorted as given) */
  NH_REDUCE_GROWTH,        /* mean |x| over the last third of the coordinate span / over the first third */
  NH_REDUCE_ALTERNATION,   /* the fraction of neighbouring differences x_k+1 − x_k that change sign */
  NH_REDUCE_MAX_INCREASE,  /* the largest signed x_k+1 − x_k (≤ 0: the sequence never increases) */
  NH_REDUCE_LAST_DEFINED,  /* the coordinate of the last value that is not NaN (where a run stopped) */
  NH_REDUCE_COUNT
} nh_reduce;
extern const char *const nh_reduce_names[NH_REDUCE_COUNT];
int nh_reduce_find(const char *name);
/* Whether a reduction ignores the coordinates and the order of the values (max_abs, max, min,
 * mean, mean_abs): only these reduce over several free dimensions at once. */
int nh_reduce_is_pointwise(nh_reduce r);
/* Reduces x[0..n) at coordinates c[0..n) (NaN entries skipped, except by VALUE/FIRST/LAST).
 * period > 0 (MAX_STEP only): a difference is taken modulo period, into [−period/2, period/2)
 * (an angle's jump across its branch cut is no jump). */
double nh_reduce_apply(nh_reduce r, int n, const double *c, const double *x, double period);

#define NH_MAX_SELECT NH_H5_MAX_SELECT
/* A selector of `at` and `minus_at`: the results layer's (results.h, nh_h5_slice_read). */
typedef nh_h5_select nh_select;

typedef struct {
  char file[256];   /* results file stem, read from DIR/<file>.h5 */
  char data[128];   /* dataset path in the study group, or "orders" (field: observed, stderr_) */
  char minus[128];  /* "" or a dataset of the same dimensions subtracted before the reduction */
  char minus2[128]; /* "" or a second one (minus = ["a", "b"]: x − a − b) */
  double period;    /* MAX_STEP: differences modulo period (0: none) */
  char field[32];
  int nselect;
  nh_select select[NH_MAX_SELECT];
  /* minus_at: selectors that replace those of `at` (or add to them) for the subtracted slice: the
   * same dataset (or `minus`) at another method, h, ... Both slices have the same free dimensions,
   * or the subtracted one none: its one value is subtracted from every element (x(t) − x(0)). */
  int nminus_select;
  nh_select minus_select[NH_MAX_SELECT];
  nh_reduce reduce;
  double from, to;  /* window on the first free dimension's coordinate (±Inf: none) */
} nh_measure;
/* The measure as canonical text (file, dataset, field, selectors sorted by dimension with methods
 * in their canonical names and numbers in %.17g, minus and minus_at, reduction, period, window):
 * two measures of one quantity give the same text. */
void nh_measure_key(const nh_measure *ms, char *key, size_t len);
/* Reads and reduces a measure from DIR. Returns 0 with *m (NaN if the method does not define the
 * quantity); or -1 with *m NaN and the reason in why (missing file, unknown method, bad
 * dimension...). */
int nh_measure_eval(const nh_measure *ms, const char *dir, double *m, char *why, size_t whylen);

/* ---- claims files ---------------------------------------------------------------------------- */
typedef struct {
  int line;               /* in the claims file, for messages */
  char id[64];
  char quantity[512];
  char expected[256];
  int static_verdict;     /* a row declared not-verified in the claims file */
  int shown;              /* a row declared verdict = "shown": a value without an expectation */
  char reason[512];       /* why not verified, or what a failure means */
  int has_measure;
  nh_measure measure;
  char per[64];           /* "" or the id of a row whose measured value this one is divided by */
  nh_expect expect;
  int has_expect;
  /* filled by nh_claims_evaluate */
  double measured;
  nh_verdict verdict;
  char outcome[1024];
} nh_claim_row;

typedef struct {
  char item[16];
  char source[64];   /* "[paper Prop 3.4; check]" */
  char claim[NH_TEXT_LONG];
  char note[NH_TEXT_LONG]; /* the project's finding where the spec is wrong or silent */
  /* Where the item fails: NH_CAUSE_CLAIM (the claim does not hold here: the note gives the
   * evidence) or NH_CAUSE_HARNESS (nhbench falls short of measuring it), with a one-line summary
   * for the report's opening table; NH_CAUSE_NONE when the claims file names none. */
  int cause;
  char summary[512];
  int nfigures;
  char figures[4][128];
  int nrows;
  nh_claim_row *rows;
} nh_claim_item;

typedef struct {
  char path[512];
  char spec[32];     /* the spec file's stem: newmark, discretization, rattle, herglotz */
  char title[256];
  int nitems;
  nh_claim_item *items;
} nh_claims;

enum { NH_CAUSE_NONE, NH_CAUSE_CLAIM, NH_CAUSE_HARNESS };

/* Loads a claims file; errors name FILE:LINE and the value, return -1. */
int nh_claims_load(const char *path, nh_claims *c, char *err, size_t errlen);
void nh_claims_free(nh_claims *c);
/* Measures every row from the results files in DIR and gives it a verdict. */
void nh_claims_evaluate(nh_claims *c, const char *dir);
/* The same quantity (results file, dataset, selectors, reduction, window, divisor) held against two
 * different bounds of the same kind (two upper bounds, two lower bounds, two ranges, two `~`) in
 * two rows of the claims files c[0..nfiles): returns -1 with both places (FILE:LINE) in err. */
int nh_claims_check_consistent(const nh_claims *c, int nfiles, char *err, size_t errlen);
/* The worst verdict of an item's rows (fail > not-verified > pass; shown rows aside, and shown
 * when every row is shown). */
nh_verdict nh_item_verdict(const nh_claim_item *it);

/* claims.csv: header spec,item,quantity,expected,measured,verdict and a row per claim row. */
void nh_claims_write_csv(FILE *out, const nh_claims *c, int nfiles, int header);
/* REPORT.md: a table of items and rows by verdict per spec, per spec the failing items with their
 * cause (the claim fails here, or the harness falls short) and summary, then per spec and item
 * the claim, its rows, notes and figures (FIGDIR/<name>.png relative to the report). */
void nh_claims_write_markdown(FILE *out, const nh_claims *c, int nfiles, const char *results_dir,
                              const char *figdir);

#endif
