/* Loading a spec with its k-th allocation failing, for every k up to the load's last allocation
 * (tests/contracts/test_no_alloc.c's fault injection, which fails the GSL objects our code allocates too):
 * each such load returns -1 with a message that says so ("out of memory", or the OS's words for
 * ENOMEM, not a bad spec's complaint) and leaves a study nh_study_free takes; none crashes
 * on a NULL it did not check or reports success with a part missing. An ensemble's spec draws
 * its initial conditions at load time (studies/fit.c, nh_draw_states). */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <criterion/redirect.h>
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "bench/claims/report.h"
#include "studies/study.h"
#include "tests/helpers.h"

static void load_out_of_memory(const char *text) {
  char path[128], err[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-load-oom-%d.cfg", (int)getpid());
  test_write_file(path, text);
  const char *const overrides[] = {"T=1.5"};
  int failures = 0;
  for (long k = 1;; k++) {
    nh_study st;
    err[0] = '\0';
    test_fail_allocation = k;
    const int rc = nh_study_load(path, overrides, 1, &st, err, sizeof err);
    const int reached = test_fail_allocation <= 0;
    test_fail_allocation = 0;
    nh_study_free(&st);
    if (!reached) { /* fewer than k allocations: nothing failed */
      cr_expect_eq(rc, 0, "load without a failed allocation: %s", err);
      break;
    }
    failures++;
    cr_expect(rc == -1 && (strstr(err, "out of memory") || strstr(err, strerror(ENOMEM))),
              "allocation %ld failed: %d, '%s'", k, rc, err);
  }
  cr_expect_gt(failures, 5, "only %d allocations", failures);
  remove(path);
}

Test(load_failures, ensemble_drawn_at_load) {
  load_out_of_memory("study = \"ensemble\";\nsystem = \"chaotic_particle\";\nT = 2.0;\nh = 0.5;\n"
                     "methods = [\"rk4\", \"nh_rattle\"];\nensemble = { count = 3; energy = 1.535; seed = 3; };\n"
                     "grids = ( { method = \"nh_newmark(alpha=0.5)\"; beta = [0.0, 0.1]; beta2 = [0.0, 0.4]; } );\n");
}

Test(load_failures, convergence_with_claimed_orders) {
  load_out_of_memory("study = \"convergence\";\nsystem = \"particle\";\ninitial = \"discretization\";\nT = 2.0;\n"
                     "h0 = 0.05;\nhalvings = 3;\nmethods = [\"js_a\", \"js_b\"];\n"
                     "expected_orders = ( { method = \"js_a\"; order = 2; reason = \"a claim\"; } );\n");
}

/* The adjoint pair builds its base's adjoint (integrators/compose.c): out of memory there is not
 * "the adjoint is not known". */
Test(load_failures, composition_with_an_adjoint) {
  load_out_of_memory("study = \"convergence\";\nsystem = \"particle\";\ninitial = \"newmark\";\nT = 1.0;\n"
                     "h = [0.1, 0.05];\nmethods = [\"adjoint_pair(nh_newmark(beta=0.1,beta2=0.1,alpha=0))\"];\n");
}

/* A one-step study's random start points, drawn at load and named "random i". */
Test(load_failures, onestep_random_points) {
  load_out_of_memory("study = \"onestep\";\nsystem = \"chaotic_particle\";\nT = 1.0;\nmethods = [\"rk4\"];\n"
                     "h = [0.1, 0.05];\nensemble = { count = 3; energy = 1.535; seed = 4; };\n");
}

/* A system parameter overriding an initial condition's preset renames the conditions (each load
 * notes the override: stderr is kept out of the suite's output). */
Test(load_failures, preset_overridden, .init = cr_redirect_stderr) {
  load_out_of_memory("study = \"trajectory\";\nsystem = \"cvt\";\nT = 1.0;\nh = [0.1];\nmethods = [\"rk4\"];\n"
                     "observables = [\"energy\"];\ninitial = [\"eps01\", \"eps01\"];\nsystem_params = { eps = 0.25; };\n");
}

Test(load_failures, trajectory_with_observables) {
  load_out_of_memory("study = \"trajectory\";\nsystem = \"particle\";\ninitial = \"newmark\";\nT = 1.0;\nh = [0.1];\n"
                     "methods = [\"rk4\"];\nobservables = [\"q\", \"energy_error\"];\n");
}

/* A claims file (bench/claims/report.c) loaded with its k-th allocation failing, for every k: -1 with a
 * message naming the file, never a crash on an unchecked NULL or a load that skips a check. */
Test(load_failures, claims_file) {
  char path[128], err[1024];
  snprintf(path, sizeof path, "/tmp/nhbench-claims-oom-%d.claims", (int)getpid());
  test_write_file(path, "spec = \"s\";\nitems = (\n"
                        " { item = \"1\"; claim = \"c\"; rows = ( { quantity = \"q\"; verdict = \"not-verified\"; "
                        "reason = \"by hand\"; } ); },\n"
                        " { item = \"2\"; claim = \"d\"; rows = ( { quantity = \"r\"; verdict = \"not-verified\"; "
                        "reason = \"by hand\"; }, { quantity = \"s\"; verdict = \"not-verified\"; reason = \"too\"; } ); }\n"
                        ");\n");
  int failures = 0;
  for (long k = 1;; k++) {
    nh_claims c;
    memset(&c, 0, sizeof c);
    err[0] = '\0';
    test_fail_allocation = k;
    const int rc = nh_claims_load(path, &c, err, sizeof err);
    const int reached = test_fail_allocation <= 0;
    test_fail_allocation = 0;
    if (!reached) {
      cr_expect_eq(rc, 0, "load without a failed allocation: %s", err);
      cr_expect(c.nitems == 2 && c.items[1].nrows == 2, "%d items", c.nitems);
      nh_claims_free(&c);
      break;
    }
    failures++;
    cr_expect(rc == -1 && strncmp(err, path, strlen(path)) == 0 && strstr(err, "memory"),
              "allocation %ld failed: %d, '%s'", k, rc, err);
    cr_expect(c.items == NULL && c.nitems == 0, "allocation %ld: a refused load keeps no items", k);
  }
  cr_expect_eq(failures, 4, "the text, the items and each item's rows");
  remove(path);
}
