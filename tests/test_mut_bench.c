/* bench/: the nhbench command line, its output parsed and compared with the values put in (spec
 * settings given with --set), checks added for mutation robustness (issue 16). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define DATA NHBENCH_SOURCE_DIR "/tests/data/"

/* Runs `nhbench ARGS` (stdout and stderr) into out; returns the exit status. */
static int nhbench(char *out, size_t len, const char *args) {
  char cmd[2048];
  snprintf(cmd, sizeof cmd, "%s %s 2>&1", NHBENCH_EXE, args);
  FILE *p = popen(cmd, "r");
  cr_assert_not_null(p);
  size_t n = fread(out, 1, len - 1, p);
  out[n] = '\0';
  const int st = pclose(p);
  return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static void expect_has(const char *out, const char *needle) {
  cr_expect(strstr(out, needle) != NULL, "'%s' not in:\n%s", needle, out);
}

/* nhbench info on a convergence study shows the settings of the order fit as the spec set them:
 * the order tolerance, the reference tolerance, the fit points and the error floor, and the h
 * range from the largest to the smallest. */
Test(mut_bench, info_shows_the_fit_settings) {
  char path[128], args[512];
  static char out[1 << 16];
  snprintf(path, sizeof path, "/tmp/nhbench-mut-bench-%d.h5", (int)getpid());
  snprintf(args, sizeof args,
           "run " DATA "convergence_norms.cfg -o %s --set order_tolerance=0.3 --set reference_tol=1e-12 "
           "--set fit_points=2 --set error_floor=1e-9 --set 'h=[0.05, 0.1, 0.025]'",
           path);
  cr_assert_eq(nhbench(out, sizeof out, args), 0, "%s", out);
  snprintf(args, sizeof args, "info %s", path);
  cr_assert_eq(nhbench(out, sizeof out, args), 0, "%s", out);
  expect_has(out, "ok: |observed - expected| <= 0.3):");
  expect_has(out, "  reference    rk8pd, tolerance 1e-12\n");
  expect_has(out, "  order fit    the 2 finest consecutive h whose error is finite and above 1e-09\n");
  expect_has(out, "  h            3 values, 0.1 .. 0.025\n");
  remove(path);
}
