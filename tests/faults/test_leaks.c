/* Nothing leaks: a whole study cycle (load the spec, run it, with and without a checkpoint
 * journal and resumed from a finished one, write the results file, read every dataset, attribute,
 * grid, order row, summary and observable back, free everything) leaves no block of nhbench's own
 * code allocated and no HDF5 identifier open. A free left out, a loop over methods that skips one, a
 * dataset id never closed: each grows the count of live blocks (tests/contracts/test_no_alloc.c's
 * allocation wrapper) or of open HDF5 identifiers (tests/helpers.h) by the second cycle. The first cycle is a warm-up:
 * per-thread workspaces and other lazily made state live for the process by design. */
#define _POSIX_C_SOURCE 200809L
#include <criterion/criterion.h>
#include <hdf5.h>
#include <hdf5_hl.h>
#include <malloc.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "results/reader.h"
#include "results/results.h"
#include "studies/study.h"
#include "tests/helpers.h"

typedef struct {
  char out[256], journal[300];
  int journaled, resumed;
} cycle_paths;

static int all_zero(const void *p, size_t size) {
  const unsigned char *b = p;
  for (size_t i = 0; i < size; i++)
    if (b[i]) return 0;
  return 1;
}

/* Runs and writes one study of whatever kind st is into a result holding garbage, and frees it
 * twice: the first free zeroes it (studies/study.h), so the second frees nothing again (the heap
 * guard of tests/contracts/test_no_alloc.c, or ASan, would abort on a block freed twice). */
static void run_and_write(const nh_study *st, const char *out) {
  char err[1024] = "";
  const nh_study_kind_type *kind = nh_study_kinds[st->kind]; /* any kind, through the registry */
  unsigned char *r = malloc(kind->result_size);
  cr_assert_not_null(r);
  memset(r, 0xa5, kind->result_size); /* whatever r held: the runner sets it */
  int rc = kind->run(st, r, err, sizeof err);
  if (rc == 0) rc = nh_write_study(out, st, r, "test", err, sizeof err);
  kind->free_result(r);
  cr_expect(all_zero(r, kind->result_size), "%s: the %s result's free leaves it set", st->spec_file, kind->name);
  kind->free_result(r); /* a second free does nothing */
  free(r);
  cr_assert_eq(rc, 0, "%s: %s", st->spec_file, err);
}

/* The dataset at `name` read through the reader, by its type class (compound: the cost records;
 * other compounds, such as the orders table, have readers of their own, called below). */
static herr_t read_one(hid_t group, const char *name, const H5O_info_t *info, void *vf) {
  nh_h5 *f = vf;
  if (info->type != H5O_TYPE_DATASET) return 0;
  hid_t ds = H5Dopen2(group, name, H5P_DEFAULT), type = H5Dget_type(ds);
  char *dims = nh_r_attr_of(ds, "dimensions", NULL);
  const H5T_class_t cls = H5Tget_class(type);
  int members = cls == H5T_COMPOUND ? H5Tget_nmembers(type) : 0;
  char *first = members > 0 ? H5Tget_member_name(type, 0) : NULL;
  const int is_cost = first && strcmp(first, "steps") == 0;
  H5free_memory(first);
  H5Tclose(type), H5Dclose(ds);
  if (!dims) return 0;
  void *data = NULL;
  int count = 0;
  if (cls == H5T_FLOAT) data = nh_h5_doubles(f, name, dims, NULL);
  else if (cls == H5T_INTEGER) data = nh_h5_ints(f, name, dims, NULL);
  else if (cls == H5T_COMPOUND && is_cost) data = nh_h5_costs(f, name, dims, NULL);
  else if (cls == H5T_STRING) {
    char **s = nh_h5_strings(f, name, dims, &count);
    if (s) nh_h5_free_strings(s, count), data = &count;
  } else data = &count; /* a compound with a reader of its own */
  cr_expect(data != NULL, "%s: %s unread", f->path, name);
  if (data != &count) free(data);
  free(dims);
  return 0;
}

/* Every attribute of the study group through the reader. */
static herr_t read_attribute(hid_t loc, const char *name, const H5A_info_t *info, void *vf) {
  (void)info;
  nh_h5 *f = vf;
  hid_t a = H5Aopen(loc, name, H5P_DEFAULT), type = H5Aget_type(a);
  const H5T_class_t cls = H5Tget_class(type);
  H5Tclose(type), H5Aclose(a);
  if (cls == H5T_STRING) {
    int n = 0;
    char **s = nh_h5_attr_strings(f, ".", name, &n);
    cr_expect(s != NULL, "%s: attribute %s unread", f->path, name);
    nh_h5_free_strings(s, n);
  } else {
    int n = 0;
    double *d = nh_h5_attr_doubles(f, ".", name, &n);
    cr_expect(d != NULL, "%s: attribute %s unread", f->path, name);
    free(d);
  }
  return 0;
}

static void read_everything(const char *path) {
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test_leaks", path), 0, "%s", path);
  H5Ovisit2(f.group, H5_INDEX_NAME, H5_ITER_INC, read_one, &f, H5O_INFO_BASIC);
  H5Aiterate2(f.group, H5_INDEX_NAME, H5_ITER_INC, NULL, read_attribute, &f);
  if (f.kind == NH_STUDY_CONVERGENCE) nh_h5_free_orders(nh_h5_read_orders(&f), f.nmethods);
  if (f.kind == NH_STUDY_ENSEMBLE) {
    free(nh_h5_read_ensemble_summary(&f));
    int ngrids = 0;
    nh_h5_grid *grids = NULL;
    cr_expect_eq(nh_h5_read_grids(&f, &ngrids, &grids), 0, "%s: grids", path);
    nh_h5_free_grids(ngrids, grids);
  }
  if (f.kind == NH_STUDY_ENSEMBLE || f.kind == NH_STUDY_TRAJECTORY) {
    int nobs = 0;
    nh_h5_observable *obs = NULL;
    cr_expect_eq(nh_h5_read_observables(&f, &nobs, &obs), 0, "%s: observables", path);
    nh_h5_free_observables(nobs, obs);
  }
  nh_h5_close(&f);
}

/* One cycle: load, run (journaled: into a journal; resumed: from the finished journal), write,
 * read, free. */
static void cycle(const char *spec, const cycle_paths *p) {
  nh_study st;
  char err[1024] = "";
  cr_assert_eq(nh_study_load(spec, NULL, 0, &st, err, sizeof err), 0, "%s", err);
  if (p->journaled) st.checkpoint = p->journal, st.checkpoint_key = "test_leaks", st.resume = p->resumed;
  remove(p->out);
  run_and_write(&st, p->out);
  nh_study_free(&st);
  read_everything(p->out);
}

static void no_leak(const char *spec, int journaled) {
  if (test_live_blocks() < 0) cr_skip_test("AddressSanitizer build: LeakSanitizer checks leaks there");
  cycle_paths p = {.journaled = journaled};
  snprintf(p.out, sizeof p.out, "/tmp/nhbench-leaks-%d.h5", (int)getpid());
  snprintf(p.journal, sizeof p.journal, "%s.journal", p.out);
  remove(p.journal);
  char path[512];
  snprintf(path, sizeof path, "%s/%s", NHBENCH_SOURCE_DIR, spec);
  cycle(path, &p);
  if (journaled) remove(p.journal);
  const long blocks = test_live_blocks(), objects = test_open_hdf5_ids();
  cycle(path, &p);
  cr_expect_eq(test_live_blocks(), blocks, "%s%s: %ld blocks of nhbench's own code leaked by one cycle", spec,
               journaled ? " (journaled)" : "", test_live_blocks() - blocks);
  cr_expect_eq(test_open_hdf5_ids(), objects, "%s: %ld HDF5 identifiers left open by one cycle", spec,
               test_open_hdf5_ids() - objects);
  if (journaled) { /* the journal is complete now: a resumed run reads every task back from it */
    p.resumed = 1;
    const long before = test_live_blocks();
    cycle(path, &p);
    cr_expect_eq(test_live_blocks(), before, "%s (resumed): %ld blocks leaked", spec, test_live_blocks() - before);
    cr_expect_eq(test_open_hdf5_ids(), objects, "%s (resumed): HDF5 identifiers left open", spec);
  }
  remove(p.out), remove(p.journal);
}

/* Memory HDF5 allocates for us, out of reach of the block count: the variable-length strings of a
 * string dataset or attribute, which the reader must hand back (nh_schema_reclaim). Reading them
 * 500 times must grow the heap (glibc's count of bytes in use, HDF5's free lists emptied) no more
 * than reading as many numbers does (HDF5's own bookkeeping of the identifiers it hands out);
 * the six labels kept each time would take some 100 kB. */
Test(leaks, hdf5_strings_handed_back) {
  char out[256], spec[512];
  snprintf(out, sizeof out, "/tmp/nhbench-leaks-strings-%d.h5", (int)getpid());
  snprintf(spec, sizeof spec, "%s/tests/data/trajectory_particle.cfg", NHBENCH_SOURCE_DIR);
  nh_study st;
  char err[1024] = "";
  cr_assert_eq(nh_study_load(spec, NULL, 0, &st, err, sizeof err), 0, "%s", err);
  run_and_write(&st, out);
  nh_study_free(&st);
  nh_h5 f;
  cr_assert_eq(nh_h5_open(&f, "test_leaks", out), 0);
  static const char *const what[3] = {"numbers (the baseline)", "the labels dataset", "a string attribute"};
  long grown[3];
  for (int pass = 0; pass < 3; pass++) {
    H5garbage_collect();
    const size_t before = mallinfo2().uordblks;
    for (int i = 0; i < 500; i++) {
      int n = 0;
      char **s = pass == 1 ? nh_h5_strings(&f, "state_labels", "state", &n)
                 : pass == 2 ? nh_h5_attr_strings(&f, "state_labels", "description", &n)
                             : NULL;
      if (pass == 0) free(nh_h5_doubles(&f, "h", "h", NULL));
      else cr_assert(s && n > 0, "%s unread", what[pass]);
      nh_h5_free_strings(s, n);
    }
    H5garbage_collect();
    grown[pass] = (long)mallinfo2().uordblks - (long)before;
  }
  nh_h5_close(&f);
  for (int pass = 1; pass < 3; pass++)
    cr_expect(grown[pass] < grown[0] + 4096, "500 readings of %s grew the heap by %ld bytes, of %s by %ld", what[pass],
              grown[pass], what[0], grown[0]);
  remove(out);
}

#define LEAK_TEST(name, spec)                                 \
  Test(leaks, name) { no_leak(spec, 0); }                     \
  Test(leaks, name##_journaled) { no_leak(spec, 1); }

LEAK_TEST(convergence, "tests/data/convergence_norms.cfg")
LEAK_TEST(convergence_claimed_orders, "tests/data/order_claim.cfg")
LEAK_TEST(ensemble_with_grids, "tests/data/small_ensemble.cfg")
LEAK_TEST(ensemble_observables, "tests/data/ensemble_observables.cfg")
LEAK_TEST(ensemble_diverging, "tests/data/diverging_ensemble.cfg")
LEAK_TEST(ensemble_fixed, "tests/data/ensemble_fixed.cfg")
LEAK_TEST(trajectory_multiplier, "tests/data/trajectory_multiplier.cfg")
LEAK_TEST(trajectory_particle, "tests/data/trajectory_particle.cfg")
LEAK_TEST(onestep, "tests/data/onestep_random.cfg")
LEAK_TEST(work_precision, "tests/data/work_precision_small.cfg")

/* Every registered method parsed and freed, alone, inside a composition, and in texts that are
 * refused (an unknown parameter, a value out of range, a missing parenthesis): the refusals'
 * paths free what they built too. */
static void parse_every_method(void) {
  static const char *const forms[] = {"%s", "adjoint_pair(%s)", "triple_jump(%s)", "%s(no_such_parameter=1)",
                                      "%s(h=-1)", "adjoint_pair(%s", "%s(beta=2,beta2=-3,alpha=7)"};
  for (int i = 0; nh_integrator_types[i]; i++)
    for (size_t k = 0; k < sizeof forms / sizeof *forms; k++) {
      char text[256], err[512];
      snprintf(text, sizeof text, forms[k], nh_integrator_types[i]->name);
      nh_method_free(nh_method_parse(text, err, sizeof err));
    }
}

Test(leaks, method_parsing) {
  if (test_live_blocks() < 0) cr_skip_test("AddressSanitizer build: LeakSanitizer checks leaks there");
  parse_every_method();
  const long blocks = test_live_blocks();
  parse_every_method();
  cr_expect_eq(test_live_blocks(), blocks, "parsing and freeing every method leaked %ld blocks",
               test_live_blocks() - blocks);
}
