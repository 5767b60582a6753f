/* Input that would make the work or the wait unbounded is refused first (issue 47 item 6): methods
 * nested too deeply, a parameter grid past NH_MAX_GRID_POINTS (counted in 64 bits), an
 * OMP_NUM_THREADS that --threads would refuse, a FIFO given as a results file. Each refusal is
 * exit 2 (or a load error) with its message, and takes no time. */
#define _POSIX_C_SOURCE 200809L /* mkfifo */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "integrators/integrator.h"
#include "studies/study.h"
#include "tests/helpers.h"

/* depth adjoint_pairs around nh_newmark(alpha=0): 16 methods parse, 17 do not, 10001 neither (no
 * crash). */
static nh_method *nested(int depth, char *err, size_t len) {
  const size_t n = (size_t)depth * 14 + 32;
  char *text = malloc(n);
  cr_assert_not_null(text);
  text[0] = '\0';
  for (int i = 0; i < depth; i++) strcat(text, "adjoint_pair(");
  strcat(text, "nh_newmark(alpha=0)");
  for (int i = 0; i < depth; i++) strcat(text, ")");
  nh_method *m = nh_method_parse(text, err, len);
  free(text);
  return m;
}

Test(bounded_work, methods_nested_at_most_sixteen_deep) {
  char err[512] = "";
  nh_method *m = nested(15, err, sizeof err);
  cr_expect_not_null(m, "15 adjoint_pairs around nh_newmark (16 methods): %s", err);
  nh_method_free(m);
  cr_expect_null(nested(16, err, sizeof err), "17 methods deep");
  cr_expect(strstr(err, "methods nested too deeply (more than 16)"), "%s", err);
  cr_expect_null(nested(10000, err, sizeof err));
  cr_expect(strstr(err, "nested too deeply"), "%s", err);
  /* siblings do not add up: a composition's base and its parameters at the same depth */
  m = nh_method_parse("triple_jump(adjoint_pair(nh_newmark(alpha=0.5)))", err, sizeof err);
  cr_expect_not_null(m, "%s", err);
  nh_method_free(m);
}

/* A grid spec with n0 x n1 values of (beta, beta2) of nh_newmark, then `more` (grids and methods);
 * the load's return and message, the study in *keep (NULL: freed). */
static int load_grid_spec_more(int n0, int n1, const char *more, nh_study *keep, char *err, size_t len) {
  char path[128];
  snprintf(path, sizeof path, "/tmp/nhbench-bounded-%d.cfg", (int)getpid());
  FILE *f = fopen(path, "w");
  cr_assert_not_null(f);
  fputs("study = \"ensemble\";\nsystem = \"particle\";\nT = 0.2;\nh = 0.1;\nensemble = { count = 1; energy = 1.0; "
        "seed = 1; };\ngrids = ( { method = \"nh_newmark(alpha=0.5)\";\n  beta = [",
        f);
  for (int i = 0; i < n0; i++) fprintf(f, "%s%.17g", i ? ", " : "", 0.1 + 1e-4 * i);
  fputs("];\n  beta2 = [", f);
  for (int j = 0; j < n1; j++) fprintf(f, "%s%.17g", j ? ", " : "", 0.1 + 1e-4 * j);
  fputs("]; }", f);
  fputs(more, f);
  fclose(f);
  nh_study st;
  const int rc = nh_study_load(path, NULL, 0, &st, err, len);
  if (keep) *keep = st;
  else nh_study_free(&st);
  remove(path);
  return rc;
}

static int load_grid_spec(int n0, int n1, char *err, size_t len) {
  return load_grid_spec_more(n0, n1, " );\n", NULL, err, len);
}

/* The points of a grid are found among the study's methods by name (a hash): a second grid over
 * some of the same values and listed methods equal to points add no method, and every point's
 * index names its own values. */
Test(bounded_work, grid_points_found_by_name, .timeout = 60) {
  char err[1024] = "";
  nh_study st;
  char more[512];
  snprintf(more, sizeof more,
           ",\n  { method = \"nh_newmark(alpha=0.5)\"; beta = [%.17g, %.17g]; beta2 = [%.17g, %.17g]; } );\n"
           "methods = [\"nh_newmark(beta=%.17g,beta2=%.17g,alpha=0.5)\", \"rk4\"];\n",
           0.1 + 1e-4 * 99, 0.1, 0.1, 0.1 + 1e-4, 0.1 + 1e-4, 0.1 + 2e-4);
  cr_assert_eq(load_grid_spec_more(100, 100, more, &st, err, sizeof err), 0, "%s", err);
  cr_expect_eq(st.nmethods, 1 + 10000, "the listed nh_newmark is a point of the grid, rk4 is not");
  cr_expect_eq(st.grids[0].method_index[1 * 100 + 2], 0, "the listed method is point (1, 2)");
  for (int k = 0; k < 4; k++) {
    const int i = k / 2 ? 0 : 99, j = k % 2;
    cr_expect_eq(st.grids[1].method_index[k], st.grids[0].method_index[i * 100 + j], "second grid's point %d", k);
  }
  int named = 1;
  for (int i = 0; i < 100; i++)
    for (int j = 0; j < 100; j++) {
      const int m = st.grids[0].method_index[i * 100 + j];
      double beta = -1, beta2 = -1;
      named &= m >= 0 && m < st.nmethods &&
               sscanf(st.method_names[m], "nh_newmark(beta=%lf,beta2=%lf,", &beta, &beta2) == 2 &&
               beta == 0.1 + 1e-4 * i && beta2 == 0.1 + 1e-4 * j;
    }
  cr_expect(named, "every point's method names its values: %s", st.method_names[st.grids[0].method_index[101]]);
  nh_study_free(&st);
}

Test(bounded_work, grids_at_most_ten_thousand_points, .timeout = 60) {
  char err[1024] = "";
  cr_expect_eq(load_grid_spec(100, 100, err, sizeof err), 0, "a 100 x 100 map: %s", err);
  cr_expect_lt(load_grid_spec(101, 100, err, sizeof err), 0, "101 x 100");
  cr_expect(strstr(err, ":6: grid over 'nh_newmark(beta=0,beta2=0,alpha=0.5,constraint=point)' has 101 x 100 = "
                        "10100 points; at most 10000"),
            "%s", err);
}

Test(bounded_work, thread_environment_checked_like_threads) {
  static char out[4096];
  const char *bad[] = {"100000", "0", "2x", "4,", "-1", ",4"};
  char cmd[512];
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS='%s' %s list systems 2>&1", bad[i], NHBENCH_EXE);
    cr_expect_eq(test_run_command(cmd, out, sizeof out), 2, "OMP_NUM_THREADS='%s': %s", bad[i], out);
    char expected[128];
    snprintf(expected, sizeof expected, "nhbench: OMP_NUM_THREADS='%s' is not a whole number in 1..1024", bad[i]);
    cr_expect(strstr(out, expected), "%s", out);
  }
  const char *good[] = {"1", "1024", "4,2", ""};
  for (size_t i = 0; i < sizeof good / sizeof *good; i++) {
    snprintf(cmd, sizeof cmd, "OMP_NUM_THREADS='%s' %s list systems >/dev/null 2>&1", good[i], NHBENCH_EXE);
    cr_expect_eq(test_run_command(cmd, out, sizeof out), 0, "OMP_NUM_THREADS='%s'", good[i]);
  }
}

/* Under `timeout`: with the defect the command would block on the FIFO, holding no CPU, for ever. */
Test(bounded_work, fifo_is_no_results_file, .timeout = 30) {
  static char out[4096];
  char path[128], cmd[512];
  snprintf(path, sizeof path, "/tmp/nhbench-bounded-%d.h5", (int)getpid());
  remove(path);
  cr_assert_eq(mkfifo(path, 0600), 0);
  const char *args[] = {"info %s", "export %s study"};
  for (int i = 0; i < 2; i++) {
    char a[256];
    snprintf(a, sizeof a, args[i], path);
    snprintf(cmd, sizeof cmd, "timeout 10 %s %s 2>&1", NHBENCH_EXE, a);
    cr_expect_eq(test_run_command(cmd, out, sizeof out), 2, "%s: %s", a, out);
    cr_expect(strstr(out, "not a regular file (a FIFO, device or socket), not a results file"), "%s", out);
  }
  remove(path);
}
