/* The two outputs of a claims report: claims.csv (RFC 4180) and REPORT.md. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "bench/claims/report.h"
#include "core/text.h"

/* A CSV field, quoted (with doubled quotes) when it holds a comma, a quote or a line break. */
static void csv_field(FILE *out, const char *s, int last) {
  if (strpbrk(s, ",\"\n\r")) {
    fputc('"', out);
    for (const char *p = s; *p; p++) {
      if (*p == '"') fputc('"', out);
      fputc(*p, out);
    }
    fputc('"', out);
  } else {
    fputs(s, out);
  }
  fputc(last ? '\n' : ',', out);
}

/* measured in C %.10g form, or empty. */
static void format_measured(char *buf, size_t len, double m) {
  if (isnan(m)) buf[0] = '\0';
  else snprintf(buf, len, "%.10g", m);
}

void nh_claims_write_csv(FILE *out, const nh_claims *c, int nfiles, int header) {
  if (header) fputs("spec,item,quantity,expected,measured,verdict\n", out);
  for (int f = 0; f < nfiles; f++)
    for (int i = 0; i < c[f].nitems; i++)
      for (int j = 0; j < c[f].items[i].nrows; j++) {
        const nh_claim_row *row = &c[f].items[i].rows[j];
        char m[NH_TEXT_NUMBER];
        format_measured(m, sizeof m, row->measured);
        csv_field(out, c[f].spec, 0);
        csv_field(out, c[f].items[i].item, 0);
        csv_field(out, row->quantity, 0);
        csv_field(out, row->expected, 0);
        csv_field(out, m, 0);
        csv_field(out, nh_verdict_names[row->verdict], 1);
      }
}

/* Markdown table cells may not hold '|' or line breaks. */
static void md_cell(FILE *out, const char *s) {
  fputs(" ", out);
  for (const char *p = s; *p; p++) {
    if (*p == '|') fputs("\\|", out);
    else if (*p == '\n') fputc(' ', out);
    else fputc(*p, out);
  }
  fputs(" |", out);
}

static void count_verdicts(const nh_claims *c, int items[NH_VERDICTS], int rows[NH_VERDICTS]) {
  for (int v = 0; v < NH_VERDICTS; v++) items[v] = rows[v] = 0;
  for (int i = 0; i < c->nitems; i++) {
    items[nh_item_verdict(&c->items[i])]++;
    for (int j = 0; j < c->items[i].nrows; j++) rows[c->items[i].rows[j].verdict]++;
  }
}

static void write_summary(FILE *out, const nh_claims *c, int nfiles) {
  fputs("| spec | items | pass | fail | not-verified | shown | rows (pass / fail / not-verified / shown) |\n", out);
  fputs("|---|---|---|---|---|---|---|\n", out);
  for (int f = 0; f < nfiles; f++) {
    int items[NH_VERDICTS], rows[NH_VERDICTS];
    count_verdicts(&c[f], items, rows);
    fprintf(out, "| %s | %d | %d | %d | %d | %d | %d / %d / %d / %d |\n", c[f].spec, c[f].nitems, items[NH_PASS],
            items[NH_FAIL], items[NH_NOT_VERIFIED], items[NH_SHOWN], rows[NH_PASS], rows[NH_FAIL],
            rows[NH_NOT_VERIFIED], rows[NH_SHOWN]);
  }
}

/* Per spec, one line per failing item: whether its claim fails here or the harness falls short. */
static void write_failures(FILE *out, const nh_claims *c, int nfiles) {
  static const char *const cause[] = {"no cause given in the claims file", "the claim does not hold here",
                                      "the harness falls short"};
  for (int f = 0; f < nfiles; f++) {
    int any = 0;
    for (int i = 0; i < c[f].nitems; i++) {
      const nh_claim_item *it = &c[f].items[i];
      if (nh_item_verdict(it) != NH_FAIL) continue;
      if (!any++) fprintf(out, "\nFailing items of %s:\n\n", c[f].spec);
      fprintf(out, "- **%s** — %s%s%s\n", it->item, cause[it->cause], it->summary[0] ? ": " : "", it->summary);
    }
  }
}

static void write_item(FILE *out, const nh_claim_item *it, const char *figdir) {
  fprintf(out, "### %s %s — %s\n\n", it->item, it->source, nh_verdict_names[nh_item_verdict(it)]);
  fprintf(out, "%s\n\n", it->claim);
  fputs("| quantity | expected | measured | verdict | remark |\n|---|---|---|---|---|\n", out);
  for (int j = 0; j < it->nrows; j++) {
    const nh_claim_row *row = &it->rows[j];
    char m[NH_TEXT_NUMBER];
    format_measured(m, sizeof m, row->measured);
    fputs("|", out);
    md_cell(out, row->quantity);
    md_cell(out, row->expected[0] ? row->expected : "—");
    md_cell(out, m[0] ? m : "—");
    md_cell(out, row->verdict == NH_FAIL ? "**fail**" : nh_verdict_names[row->verdict]);
    md_cell(out, row->outcome);
    fputc('\n', out);
  }
  fputc('\n', out);
  if (it->note[0]) fprintf(out, "**Finding.** %s\n\n", it->note);
  for (int k = 0; k < it->nfigures; k++)
    fprintf(out, "![%s](%s/%s.png) ([PDF](%s/%s.pdf))\n\n", it->figures[k], figdir, it->figures[k], figdir,
            it->figures[k]);
}

void nh_claims_write_markdown(FILE *out, const nh_claims *c, int nfiles, const char *results_dir,
                              const char *figdir) {
  fputs("# Reproducing the papers: claims report\n\n", out);
  fprintf(out,
          "Written by `nhbench report` from the results files in `%s` (`make paper`; `make paper-report` "
          "rebuilds this file from them). Each row's measured value is read from a results file; the "
          "expectation is the spec's (`../shared/spec/<spec>.md` §5), as strict as its words "
          "(`studies/paper/README.md`, \"Reading the spec's words\"). A verdict is `pass`, `fail` (the claim "
          "or the spec's expectation does not hold here; the remark says what holds), `not-verified` "
          "(with the reason) or `shown` (a value the spec asks to be measured, with no claim of its own: "
          "never counted as a pass). An item's verdict is its worst row's. The same rows are in "
          "`claims.csv`.\n\n",
          results_dir);
  write_summary(out, c, nfiles);
  write_failures(out, c, nfiles);
  for (int f = 0; f < nfiles; f++) {
    fprintf(out, "\n## %s%s%s\n\n", c[f].spec, c[f].title[0] ? " — " : "", c[f].title);
    for (int i = 0; i < c[f].nitems; i++) write_item(out, &c[f].items[i], figdir);
  }
}
