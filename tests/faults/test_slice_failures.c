/* Out of memory anywhere in a slice of any dataset (results/slice.c), in process: every allocation
 * of nhbench's own code failed in turn fails the read with -1 and its reason, leaves nothing to
 * free and leaks nothing; once none fails, the slice is the one read before. Every kind of dataset
 * the slice converts: floats, integers, records by a field, strings, and dimensions fixed by the
 * names of their coordinates (the method, an ic's name, a state label, a component label). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "results/results.h"
#include "tests/heap_guard.h"
#include "tests/helpers.h"

static nh_h5_select at(const char *dim, const char *name, double value) {
  nh_h5_select s = {.by_name = name != NULL, .value = value};
  snprintf(s.dim, sizeof s.dim, "%s", dim);
  if (name) snprintf(s.name, sizeof s.name, "%s", name);
  return s;
}

static int same_values(const nh_h5_slice *a, const nh_h5_slice *b) {
  if (a->count != b->count || a->nfree != b->nfree) return 0;
  for (long long i = 0; i < a->count; i++)
    if (!(a->x[i] == b->x[i] || (isnan(a->x[i]) && isnan(b->x[i])))) return 0;
  return 1;
}

static void sweep(nh_h5 *f, const char *name, const char *field, const nh_h5_select *sel, int nsel) {
  char why[1024];
  nh_h5_slice want;
  cr_assert_eq(nh_h5_slice_read(f, name, field, sel, nsel, &want, why, sizeof why), 0, "%s: %s", name, why);
  int fired = 0, failures = 0;
  for (long k = 1; k < 100000; k++) {
    const long blocks = test_live_blocks();
    nh_h5_slice s;
    fired = 0;
    test_fail_fired = &fired, test_fail_allocation = k;
    const int rc = nh_h5_slice_read(f, name, field, sel, nsel, &s, why, sizeof why);
    test_fail_allocation = 0, test_fail_fired = NULL;
    if (!fired) {
      cr_expect_eq(rc, 0, "%s: no allocation failed, yet %d: %s", name, rc, why);
      cr_expect(rc != 0 || same_values(&s, &want), "%s: another slice than without failures", name);
      if (rc == 0) nh_h5_slice_free(&s);
      break;
    }
    failures++;
    if (rc == 0) { /* a failure the read may absorb: a method's name not parsed is looked up as written */
      cr_expect(same_values(&s, &want), "%s: allocation %ld failed, and the slice read differs", name, k);
      nh_h5_slice_free(&s);
    } else {
      cr_expect_eq(rc, -1, "%s: allocation %ld failed: %d", name, k, rc);
      cr_expect(s.x == NULL && s.count == 0, "%s: allocation %ld failed, and the slice holds values", name, k);
      cr_expect(why[0] != '\0', "%s: allocation %ld failed without a reason", name, k);
    }
    if (blocks >= 0) cr_expect_eq(test_live_blocks(), blocks, "%s: allocation %ld failed: blocks leaked", name, k);
  }
  cr_expect_gt(failures, 0, "%s: the slice allocates nothing?", name);
  nh_h5_slice_free(&want);
}

Test(slice_failures, out_of_memory_at_every_allocation, .timeout = 120) {
  char path[256];
  test_results_file(path, sizeof path, "slice-oom", "traj", "trajectory_particle.cfg", "");
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test", path), 0);
  const nh_h5_select obs[] = {at("method", "rk4", 0), at("h", NULL, 0.05), at("ic", "newmark", 0),
                              at("component", "q[2]", 0)};
  sweep(&f, "observables/q", NULL, obs, 4);           /* floats, names of every kind */
  sweep(&f, "status", NULL, NULL, 0);                 /* integers */
  sweep(&f, "cost", "newton_iterations", obs + 1, 1); /* records by a field */
  sweep(&f, "caveats", NULL, NULL, 0);                /* strings */
  const nh_h5_select state[] = {at("state", "v[1]", 0), at("ic", NULL, 1)};
  sweep(&f, "final_state", NULL, state, 2); /* a state label: its dimension scale */
  nh_h5_close(&f);
  unlink(path);
}
