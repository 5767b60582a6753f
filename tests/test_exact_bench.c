/* bench/: error paths of nhbench export that no other test reached, each with its exact exit
 * status and message (issue 16: a failure mutated from -1 to +1 on the way must show). */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "tests/helpers.h"

/* `nhbench ARGS`: its exit status, stdout into out and stderr into err. */
static int run_split(const char *args, char *out, size_t outlen, char *err, size_t errlen) {
  char cmd[2048], errf[128];
  snprintf(errf, sizeof errf, "/tmp/nhbench-exact-bench-%d.err", (int)getpid());
  snprintf(cmd, sizeof cmd, "%s %s 2>%s", NHBENCH_EXE, args, errf);
  const int status = test_run_command(cmd, out, outlen);
  FILE *f = fopen(errf, "r");
  cr_assert(f, "no %s", errf);
  size_t n = fread(err, 1, errlen - 1, f);
  err[n] = '\0';
  fclose(f);
  remove(errf);
  return status;
}

/* An index option given as the empty string is no index (parse_index), nor an empty --ics A: each
 * is refused with exit 2 before the file is read, although the file would take index 0. */
Test(exact_bench, export_refuses_empty_indices) {
  char path[128], args[512], out[4096], err[4096];
  test_results_file(path, sizeof path, "exact-bench", "empty", "ensemble_fixed.cfg", "--set T=0.4");
  static const struct {
    const char *args, *msg;
  } cases[] = {
      {"energy --method ''", "nhbench export: --method needs a whole number >= 0, not ''\n"},
      {"energy-all-methods --ic=", "nhbench export: --ic needs a whole number >= 0, not ''\n"},
      {"energy --ics :2", "nhbench export: --ics ':2': expected A:B (initial conditions A, ..., B-1), A: or A\n"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    snprintf(args, sizeof args, "export %s %s", path, cases[k].args);
    cr_expect_eq(run_split(args, out, sizeof out, err, sizeof err), 2, "%s: %s", cases[k].args, err);
    cr_expect_str_eq(out, "", "%s: stdout", cases[k].args);
    cr_expect(strncmp(err, cases[k].msg, strlen(cases[k].msg)) == 0, "%s:\n%s\nwanted:\n%s", cases[k].args, err,
              cases[k].msg);
  }
  snprintf(args, sizeof args, "export %s energy --method 0", path);
  cr_expect_eq(run_split(args, out, sizeof out, err, sizeof err), 0, "index 0 itself is taken: %s", err);
  remove(path);
}

/* The energy tables of an ensemble whose E0 is gone (read_base): exit 2, nothing on stdout, the
 * missing dataset named; the same file with E0 exports. */
Test(exact_bench, export_energy_without_E0) {
  char path[128], args[512], out[1 << 14], err[4096];
  test_results_file(path, sizeof path, "exact-bench", "noE0", "ensemble_fixed.cfg", "--set T=0.4");
  static const char *const tables[] = {"energy", "energy-all-methods"};
  for (int k = 0; k < 2; k++) {
    snprintf(args, sizeof args, "export %s %s", path, tables[k]);
    cr_expect_eq(run_split(args, out, sizeof out, err, sizeof err), 0, "%s before deleting E0: %s", tables[k], err);
  }
  hid_t f = H5Fopen(path, H5F_ACC_RDWR, H5P_DEFAULT);
  cr_assert_geq(f, 0);
  cr_assert_geq(H5Ldelete(f, "/ensemble/E0", H5P_DEFAULT), 0);
  H5Fclose(f);
  for (int k = 0; k < 2; k++) {
    snprintf(args, sizeof args, "export %s %s", path, tables[k]);
    cr_expect_eq(run_split(args, out, sizeof out, err, sizeof err), 2, "%s: %s", tables[k], err);
    cr_expect_str_eq(out, "", "%s: stdout", tables[k]);
    cr_expect(strstr(err, "E0") != NULL, "%s: the message does not name E0:\n%s", tables[k], err);
  }
  remove(path);
}
