/* What the results targets do with a file (tests/fuzz/fuzz_results*.c): read it through the two
 * commands that read every dataset of a results file, `nhbench info FILE` (each study kind's
 * summary) and `nhbench export FILE TABLE` for every table with its default options, also when
 * info failed (export reads datasets on their own; a table of another study kind, or a file that
 * is not HDF5, is refused early, which is cheap). */
#ifndef NH_FUZZ_READ_H
#define NH_FUZZ_READ_H

#include "bench/cli.h"

static inline void fuzz_read_results(char *path) {
  static const char *const tables[] = {
      "study",    "methods", "convergence", "orders", "energy",      "energy-all-methods", "quantiles",
      "variance", "grid",    "observables", "series", "local_error", "slopes",             "work_precision"};
  char *info[] = {"info", path, NULL};
  nh_cli_getopt_reset();
  nh_cli_info(2, info);
  for (size_t i = 0; i < sizeof tables / sizeof tables[0]; i++) {
    char *argv[] = {"export", path, (char *)tables[i], NULL};
    nh_cli_getopt_reset();
    nh_cli_export(3, argv);
  }
}

#endif
