/* nhbench check-system: the system contract (systems/check.h) on any system, a registered one, a
 * spec's (a definition or a plugin) or a plugin by path, with a line per check and the worst entry
 * of each failed one (issue 50 item 5). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli/cli.h"
#include "core/alloc.h"
#include "core/text.h"
#include "studies/spec.h"
#include "systems/check.h"
#include "systems/plugin.h"

static const char usage[] =
    "usage: nhbench check-system [-h | --help] [--points N] [--set PATH=VALUE ...] SYSTEM\n"
    "  Checks a system's contract: every derivative the system interface asks for (grad_potential,\n"
    "  hess_potential, mass_jacobian, constraints_jacobian, the affine part's jacobian, a\n"
    "  time-dependent potential's) against central finite differences of the function it derives,\n"
    "  its kernels against the generic code they stand for, M symmetric and positive definite, and\n"
    "  the default state on D; at the default state and N - 1 random points of the sample box (the\n"
    "  same points every run). A failed check names the worst entry, its value and the reference's.\n"
    "  SYSTEM is a study spec (SPEC.cfg: its system, as `nhbench run` loads it, with --set), a\n"
    "  registered system's name (nhbench list systems), or plugin:PATH (a compiled system plugin).\n"
    "  --points N     points to check at, 1..1000 (default 8)\n"
    "  --set PATH=V   as for nhbench run, with a SPEC.cfg\n"
    "  -h, --help     this text\n"
    "Exit status: 0 every check passed, 1 a check failed, 2 bad usage or a system that does not load.\n";

static const char prog[] = "nhbench check-system";

typedef struct {
  const char *system;
  const char **overrides;
  int noverrides, points, help;
} check_args;

static int parse_check_args(int argc, char **argv, check_args *a) {
  static const struct option longopts[] = {{"points", required_argument, NULL, 'p'},
                                           {"set", required_argument, NULL, 's'},
                                           {"help", no_argument, NULL, 'h'},
                                           {0}};
  memset(a, 0, sizeof *a);
  a->points = 8;
  if (!(a->overrides = nh_calloc_array((size_t)argc, sizeof *a->overrides))) return nh_cli_out_of_memory(prog);
  int c;
  while ((c = getopt_long(argc, argv, ":p:s:h", longopts, NULL)) != -1) {
    switch (c) {
    case 's':
      a->overrides[a->noverrides++] = optarg;
      break;
    case 'h':
      a->help = 1;
      return 0;
    case 'p': {
      char *end;
      long p = strtol(optarg, &end, 10);
      if (!*optarg || *end || p < 1 || p > 1000) {
        fprintf(stderr, "%s: --points '%s' is not a whole number in 1..1000\n", prog, optarg);
        return NH_EXIT_USAGE;
      }
      a->points = (int)p;
      break;
    }
    default:
      return nh_cli_bad_option(prog, usage, c, argv);
    }
  }
  if (optind < argc) a->system = argv[optind++];
  if (optind < argc) return nh_cli_bad_argument(prog, usage, argv[optind]);
  if (!a->system) {
    fprintf(stderr, "%s: no SYSTEM given\n%s", prog, usage);
    return NH_EXIT_USAGE;
  }
  if (a->noverrides > 0 && (strncmp(a->system, "plugin:", 7) == 0 || nh_system_type_find(a->system))) {
    fprintf(stderr, "%s: --set needs a SPEC.cfg, not '%s'\n", prog, a->system);
    return NH_EXIT_USAGE;
  }
  return 0;
}

static int report(const nh_system *sys, int points) {
  nh_system_check checks[NH_SYSTEM_CHECKS];
  const int n = nh_system_check_all(sys, points, checks);
  if (n < 0) return nh_cli_out_of_memory(prog);
  char failed[NH_TEXT_MESSAGE] = "";
  int nfailed = 0, nchecked = 0;
  printf("%s: %s, n = %d, k = %d, at %d point%s\n", prog, nh_system_name(sys), sys->n, sys->k, points,
         points == 1 ? "" : "s");
  for (int i = 0; i < n; i++) {
    const nh_system_check *c = &checks[i];
    if (!c->applies) {
      printf("n/a   %-30s %s\n", c->name, c->what);
      continue;
    }
    nchecked++;
    printf("%-5s %-30s %-9.2g <= %-7.0g %s\n", c->ok ? "ok" : "FAIL", c->name, c->error, c->tolerance, c->what);
    if (c->ok) continue;
    printf("      worst: %s\n", c->where);
    if (c->reference_failed) printf("      (its reference is made of %s, which failed)\n", c->reference_failed);
    nfailed++;
    nh_text_append(failed, sizeof failed, ", ", "%s", c->name);
  }
  if (nfailed)
    printf("%s: %d of %d checks failed: %s\n", prog, nfailed, nchecked, failed);
  else
    printf("%s: all %d checks passed\n", prog, nchecked);
  return nfailed ? NH_EXIT_FAILED : NH_EXIT_OK;
}

/* The system a registered name or plugin:PATH names, checked. */
static int check_named(const char *name, int points) {
  nh_system sys;
  nh_system_plugin *pl = NULL;
  const nh_system_type *type = nh_system_type_find(name);
  if (!type && strncmp(name, "plugin:", 7) == 0) {
    char err[NH_TEXT_PATH + NH_TEXT_MESSAGE];
    if (!(pl = nh_system_plugin_open(name + 7, err, sizeof err))) {
      fprintf(stderr, "%s: %s\n", prog, err);
      return NH_EXIT_USAGE;
    }
    type = nh_system_plugin_type(pl);
  }
  int rc = NH_EXIT_USAGE;
  if (type && nh_system_init(&sys, type) == 0)
    rc = report(&sys, points);
  else if (type)
    fprintf(stderr, "%s: %s: the mass matrix is not positive definite\n", prog, name);
  else
    fprintf(stderr, "%s: '%s' is no registered system (nhbench list systems), plugin:PATH or spec file\n", prog, name);
  nh_system_plugin_close(pl);
  return rc;
}

int nh_cli_check_system(int argc, char **argv) {
  check_args a;
  int rc = parse_check_args(argc, argv, &a);
  if (rc != 0 || a.help) {
    if (a.help) fputs(usage, stdout);
    free(a.overrides);
    return rc;
  }
  FILE *f = strncmp(a.system, "plugin:", 7) == 0 || nh_system_type_find(a.system) ? NULL : fopen(a.system, "r");
  if (!f) {
    free(a.overrides);
    return check_named(a.system, a.points);
  }
  fclose(f);
  nh_study st;
  char err[NH_TEXT_LONG];
  if (nh_study_load(a.system, a.overrides, a.noverrides, &st, err, sizeof err) < 0) {
    fprintf(stderr, "%s: %s\n", prog, err);
    rc = NH_EXIT_USAGE;
  } else {
    rc = report(&st.sys, a.points);
    nh_study_free(&st);
  }
  free(a.overrides);
  return rc;
}
