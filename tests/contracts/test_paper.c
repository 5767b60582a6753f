/* `make paper` in miniature: the claims files of studies/paper/ are well formed and point only at
 * results files that a spec of studies/paper/ writes; a quick subset of the paper studies (two
 * fast specs) gives a report and a claims.csv of the documented form, with the rows of those files
 * measured and those of the files not run marked not-verified. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <criterion/criterion.h>
#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/claims/report.h"
#include "tests/helpers.h"

#define PAPER NHBENCH_SOURCE_DIR "/studies/paper"

/* Every *.claims file of studies/paper (malloc'd paths; at most max). */
static int claims_files(char paths[][512], int max) {
  DIR *d = opendir(PAPER);
  cr_assert(d, "cannot open %s", PAPER);
  int n = 0;
  for (struct dirent *e; (e = readdir(d)) && n < max;) {
    size_t len = strlen(e->d_name);
    if (len > 7 && strcmp(e->d_name + len - 7, ".claims") == 0) snprintf(paths[n++], 512, "%s/%s", PAPER, e->d_name);
  }
  closedir(d);
  return n;
}

Test(paper, claims_files_load_and_name_existing_specs) {
  char paths[16][512], err[1024];
  int n = claims_files(paths, 16);
  cr_assert(n >= 1, "no claims file in %s", PAPER);
  for (int f = 0; f < n; f++) {
    nh_claims c;
    cr_assert_eq(nh_claims_load(paths[f], &c, err, sizeof err), 0, "%s", err);
    cr_expect(c.nitems > 0, "%s has no items", paths[f]);
    for (int i = 0; i < c.nitems; i++)
      for (int j = 0; j < c.items[i].nrows; j++) {
        const nh_claim_row *row = &c.items[i].rows[j];
        if (!row->has_measure) continue;
        char spec[1024];
        snprintf(spec, sizeof spec, "%s/%s.cfg", PAPER, row->measure.file);
        cr_expect(access(spec, R_OK) == 0, "%s item %s: row '%s' reads %s.h5, which no spec of studies/paper writes",
                  paths[f], c.items[i].item, row->quantity, row->measure.file);
      }
    nh_claims_free(&c);
  }
}

static char *read_text(const char *path) {
  FILE *f = fopen(path, "rb");
  cr_assert(f, "cannot read %s", path);
  static char buf[1 << 20];
  size_t len = fread(buf, 1, sizeof buf - 1, f);
  buf[len] = '\0';
  fclose(f);
  return buf;
}

Test(paper, quick_subset_gives_a_well_formed_report, .timeout = 120) {
  char dir[] = "/tmp/nhbench-paper-XXXXXX", args[1536], out[8192];
  cr_assert(mkdtemp(dir));
  const char *quick[] = {"newmark_psi_step", "newmark_fig1"};
  for (int i = 0; i < 2; i++) {
    snprintf(args, sizeof args, "run %s/%s.cfg -o %s/%s.h5", PAPER, quick[i], dir, quick[i]);
    cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  }
  snprintf(args, sizeof args, "report %s/newmark.claims --results %s --output %s", PAPER, dir, dir);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);

  char path[600];
  snprintf(path, sizeof path, "%s/claims.csv", dir);
  const char *csv = read_text(path), *line = csv;
  char fields[TEST_CSV_MAX_FIELDS][512];
  cr_assert(strncmp(csv, "spec,item,quantity,expected,measured,verdict\n", 45) == 0, "header: %.60s", csv);
  test_csv_record(&csv, fields);
  int rows = 0, seen[19] = {0}, c11_pass = 0, c13_measured = 0, c14_missing = 0;
  for (int nf; (line = csv, nf = test_csv_record(&csv, fields)) >= 0;) {
    rows++;
    cr_assert_eq(nf, 6, "row %d has not 6 fields: %.200s", rows, line);
    cr_expect_str_eq(fields[0], "newmark");
    int item = 0;
    cr_expect(sscanf(fields[1], "C%d", &item) == 1 && item >= 1 && item <= 18, "item '%s'", fields[1]);
    if (item >= 1 && item <= 18) seen[item] = 1;
    const char *m = fields[4], *v = fields[5];
    cr_expect(strcmp(v, "pass") == 0 || strcmp(v, "fail") == 0 || strcmp(v, "not-verified") == 0 ||
                  strcmp(v, "shown") == 0,
              "verdict '%s'", v);
    cr_expect(strcmp(v, "shown") != 0 || m[0], "a shown row shows a value: %s", line);
    if (m[0]) { /* measured: one number in %.10g form */
      char back[64];
      snprintf(back, sizeof back, "%.10g", strtod(m, NULL));
      cr_expect_str_eq(back, m, "measured '%s' is not in %%.10g form", m);
    } else {
      cr_expect_str_eq(v, "not-verified", "a row without a measured value must be not-verified: %s", line);
    }
    c11_pass += item == 11 && strcmp(v, "pass") == 0;
    c13_measured += item == 13 && m[0];
    c14_missing += item == 14 && strcmp(v, "not-verified") == 0 && !m[0];
  }
  for (int i = 1; i <= 18; i++) cr_expect(seen[i], "item C%d has no row", i);
  cr_expect_eq(c11_pass, 6, "C11: the six coordinates (q and v) of one Psi_h step match the spec's values");
  cr_expect(c13_measured >= 5, "C13 reads newmark_fig1.h5, which was run: %d rows measured", c13_measured);
  cr_expect_eq(c14_missing, 4, "C14 reads newmark_fig2.h5, which was not run: its 4 rows are not-verified");

  snprintf(path, sizeof path, "%s/REPORT.md", dir);
  char *md = read_text(path);
  cr_expect(strstr(md, "| spec | items | pass | fail | not-verified |"), "summary table");
  cr_expect(strstr(md, "| newmark | 18 |"), "18 items of newmark");
  cr_expect(strstr(md, "### C11 [paper eqs 19-20 with typo fix; check] — pass"), "C11 heading with its verdict");
  cr_expect(strstr(md, "results file ") && strstr(md, "newmark_fig2.h5 is missing"), "the missing file is named");
  snprintf(args, sizeof args, "rm -rf %s", dir);
  cr_expect_eq(system(args), 0);
}

/* The rows of studies/paper/sundials/ (herglotz item 15, IDA) read files only the SUNDIALS build
 * writes: without that build they are not-verified and say which build measures them, never
 * fail; with it a missing file is reported as missing, like any other. */
Test(paper, sundials_rows_name_their_build, .timeout = 60) {
  char dir[] = "/tmp/nhbench-paper-XXXXXX", args[1536], out[8192];
  cr_assert(mkdtemp(dir));
  snprintf(args, sizeof args, "report %s/herglotz.claims --results %s --output %s", PAPER, dir, dir);
  cr_assert_eq(test_run_nhbench(args, out, sizeof out), 0, "%s", out);
  char path[600];
  snprintf(path, sizeof path, "%s/REPORT.md", dir);
  const char *md = read_text(path);
  const int says_build = strstr(md, "needs -DNHBENCH_SUNDIALS=ON (make paper SUNDIALS=1 writes ") != NULL;
  cr_expect(strstr(md, "sundials/herglotz_disk_exp2_a01_ida.h5"), "the IDA file is named");
#ifdef NHBENCH_SUNDIALS
  cr_expect(!says_build, "this build has SUNDIALS");
  cr_expect(strstr(md, "herglotz_disk_exp2_a01_ida.h5 is missing (make paper SUNDIALS=1 writes it)"),
            "the target that writes it named: %s", md);
#else
  cr_expect(says_build, "the rows name the build that measures them");
#endif
  snprintf(path, sizeof path, "%s/claims.csv", dir);
  const char *csv = read_text(path);
  char fields[TEST_CSV_MAX_FIELDS][512];
  int rows = 0;
  test_csv_record(&csv, fields); /* the header */
  while (*csv) {
    test_csv_record(&csv, fields);
    if (!strstr(fields[2], "(SUNDIALS build)")) continue;
    rows++;
    cr_expect_str_eq(fields[5], "not-verified", "%s", fields[2]);
  }
  cr_expect_eq(rows, 3, "one IDA status row per ode15i failure (Exp 2, 3, 4)");
  snprintf(args, sizeof args, "rm -rf %s", dir);
  cr_expect_eq(system(args), 0);
}
