/* nhbench: run studies of nonholonomic integrators, inspect and export their results. */
#include <stdio.h>
#include <string.h>

#include "bench/cli.h"

static const char usage[] =
    "usage: nhbench COMMAND [ARGS]\n"
    "\n"
    "commands:\n"
    "  run SPEC.cfg [-o OUT.h5] [--threads N] [--set PATH=VALUE ...]\n"
    "                        run a study spec (see README.md, \"Study specs\") into an HDF5 file\n"
    "  list [systems|methods]\n"
    "                        every system and method with its parameters and documentation\n"
    "  info FILE.h5          readable summary of a results file (orders, drift, cost)\n"
    "  export FILE.h5 TABLE  whitespace-separated table for gnuplot (nhbench export --help)\n"
    "  help                  this text\n"
    "\n"
    "Methods are named as in rk4, nh_newmark(beta=0.1,beta2=0.1,alpha=0.5,disc=14),\n"
    "adjoint_pair(nh_newmark(alpha=0)), triple_jump(nh_newmark(alpha=0.5)).\n";

int main(int argc, char **argv) {
  if (argc < 2 || strcmp(argv[1], "help") == 0 || strcmp(argv[1], "--help") == 0 || strcmp(argv[1], "-h") == 0) {
    fputs(usage, argc < 2 ? stderr : stdout);
    return argc < 2 ? 2 : 0;
  }
  const char *cmd = argv[1];
  if (strcmp(cmd, "run") == 0) return nh_cli_run(argc - 1, argv + 1);
  if (strcmp(cmd, "list") == 0) return nh_cli_list(argc - 1, argv + 1);
  if (strcmp(cmd, "info") == 0) return nh_cli_info(argc - 1, argv + 1);
  if (strcmp(cmd, "export") == 0) return nh_cli_export(argc - 1, argv + 1);
  fprintf(stderr, "nhbench: unknown command '%s'\n\n%s", cmd, usage);
  return 2;
}
