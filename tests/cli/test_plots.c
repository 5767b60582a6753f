/* The plots layer in make test: tests/cli/test_plots.sh runs every spec of studies/examples/, plots the
 * files with plots/make_plots.sh and checks each study kind's figures and the script's exit
 * statuses (0 plotted, 1 a file could not be plotted, 2 bad usage). The script names each failed
 * check on stderr, which this test shows. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>

#include "tests/helpers.h"

Test(plots, make_plots_draws_every_study_kind, .timeout = 600) {
  static char out[1 << 16];
  const char *cmd = "NHBENCH=" NHBENCH_EXE " sh " NHBENCH_SOURCE_DIR "/tests/cli/test_plots.sh 2>&1";
  int status = test_run_command(cmd, out, sizeof out);
  cr_assert_eq(status, 0, "tests/cli/test_plots.sh exited %d:\n%s", status, out);
  cr_assert(strstr(out, "all checks passed"), "no closing line from tests/cli/test_plots.sh:\n%s", out);
}
