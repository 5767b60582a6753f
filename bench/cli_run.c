/* nhbench run SPEC.cfg [-o OUT.h5] [--threads N] [--set PATH=VALUE ...] */
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench/cli.h"
#include "results/results.h"
#include "studies/study.h"

static const char usage[] =
    "usage: nhbench run SPEC.cfg [-o OUT.h5] [--threads N] [--set PATH=VALUE ...]\n"
    "  -o OUT.h5         results file (default: results/<spec name>.h5); written to a temporary\n"
    "                    name and renamed when complete\n"
    "  --threads N       OpenMP threads (default: OMP_NUM_THREADS or all cores); results do not\n"
    "                    depend on it\n"
    "  --set PATH=VALUE  override a spec setting, e.g. --set T=10000 --set ensemble.count=100\n"
    "  --check-orders    convergence studies: print observed against expected orders and exit 1\n"
    "                    if any differs by more than the spec's order_tolerance (default 0.15)\n";

static char *default_output(const char *spec) {
  const char *base = strrchr(spec, '/');
  base = base ? base + 1 : spec;
  size_t len = strcspn(base, ".");
  char *out = malloc(len + 16);
  snprintf(out, len + 16, "results/%.*s.h5", (int)len, base);
  return out;
}

static char *join_args(int argc, char **argv) {
  size_t len = 16;
  for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
  char *s = malloc(len);
  strcpy(s, "nhbench");
  for (int i = 0; i < argc; i++) strcat(strcat(s, " "), argv[i]);
  return s;
}

/* --check-orders: observed against expected orders; 1 if any is off by more than the tolerance. */
static int report_orders(const nh_study *st, const nh_convergence_result *r) {
  int failed = 0;
  printf("%-6s %8s %8s %9s  %s\n", "check", "expected", "observed", "stderr", "method");
  for (int m = 0; m < st->nmethods; m++) {
    printf("%-6s %8d %8.3f %9.2g  %s%s%s\n", r->order_ok[m] ? "ok" : "FAIL", st->order_expected[m], r->order[m],
           r->order_stderr[m], st->method_names[m], st->order_reason[m][0] ? "  -- " : "", st->order_reason[m]);
    failed += !r->order_ok[m];
  }
  if (failed) fprintf(stderr, "nhbench: %d of %d observed orders off by more than %g\n", failed, st->nmethods,
                      st->order_tolerance);
  return failed ? 1 : 0;
}

/* Runs a study of the other kinds and writes its file: 0, or 1 with a message in err. */
#define RUN_AND_WRITE(KIND)                                                                            \
  static int run_##KIND(const nh_study *st, const char *path, const char *command, char *err, size_t len) { \
    nh_##KIND##_result r;                                                                              \
    int rc = nh_run_##KIND(st, &r, err, len) || nh_write_##KIND(path, st, &r, command, err, len);     \
    nh_##KIND##_result_free(&r);                                                                       \
    return rc ? 1 : 0;                                                                                 \
  }
RUN_AND_WRITE(ensemble)
RUN_AND_WRITE(trajectory)
RUN_AND_WRITE(onestep)
RUN_AND_WRITE(work_precision)

static int run_and_write(const nh_study *st, const char *path, const char *command, char *err, size_t len) {
  switch (st->kind) {
  case NH_STUDY_ENSEMBLE: return run_ensemble(st, path, command, err, len);
  case NH_STUDY_TRAJECTORY: return run_trajectory(st, path, command, err, len);
  case NH_STUDY_ONESTEP: return run_onestep(st, path, command, err, len);
  case NH_STUDY_WORK_PRECISION: return run_work_precision(st, path, command, err, len);
  default: return snprintf(err, len, "study kind %d has no runner", (int)st->kind), 1;
  }
}

int nh_cli_run(int argc, char **argv) {
  const char *spec = NULL, *out_arg = NULL;
  const char **overrides = calloc((size_t)argc, sizeof *overrides);
  int noverrides = 0, rc = 2, check_orders = 0, orders_failed = 0;
  for (int i = 1; i < argc; i++) {
    if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
      fputs(usage, stdout);
      free(overrides);
      return 0;
    } else if (strcmp(argv[i], "-o") == 0 && i + 1 < argc) {
      out_arg = argv[++i];
    } else if (strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
      char *end;
      long t = strtol(argv[++i], &end, 10);
      if (*end || t < 1 || t > 1024) {
        fprintf(stderr, "nhbench run: --threads '%s' is not a positive whole number\n", argv[i]);
        free(overrides);
        return 2;
      }
      omp_set_num_threads((int)t);
    } else if (strcmp(argv[i], "--check-orders") == 0) {
      check_orders = 1;
    } else if (strcmp(argv[i], "--set") == 0 && i + 1 < argc) {
      overrides[noverrides++] = argv[++i];
    } else if (argv[i][0] == '-' || spec) {
      fprintf(stderr, "nhbench run: unexpected argument '%s'\n%s", argv[i], usage);
      free(overrides);
      return 2;
    } else {
      spec = argv[i];
    }
  }
  if (!spec) {
    fputs(usage, stderr);
    free(overrides);
    return 2;
  }
  char *out = out_arg ? NULL : default_output(spec);
  const char *path = out_arg ? out_arg : out;
  char *command = join_args(argc, argv);
  char err[2048] = "";
  nh_study st;
  if (nh_study_load(spec, overrides, noverrides, &st, err, sizeof err)) {
    fprintf(stderr, "nhbench: %s\n", err);
    nh_study_free(&st);
    goto done;
  }
  rc = 1;
  fprintf(stderr, "nhbench: %s study of %s, %d methods, %d threads -> %s\n", nh_study_kind_name(st.kind),
          st.sys.type->name, st.nmethods, omp_get_max_threads(), path);
  if (st.kind == NH_STUDY_CONVERGENCE) {
    nh_convergence_result r;
    if (nh_run_convergence(&st, &r, err, sizeof err) == 0 &&
        nh_write_convergence(path, &st, &r, command, err, sizeof err) == 0)
      rc = 0;
    orders_failed = rc == 0 && check_orders && report_orders(&st, &r);
    nh_convergence_result_free(&r);
  } else {
    rc = run_and_write(&st, path, command, err, sizeof err);
  }
  if (rc) fprintf(stderr, "nhbench: %s\n", err);
  else fprintf(stderr, "nhbench: wrote %s\n", path);
  if (orders_failed) rc = 1;
  nh_study_free(&st);
done:
  free(command);
  free(out);
  free(overrides);
  return rc;
}
