/* The count of open HDF5 identifiers behind test_open_hdf5_ids (tests/helpers.h). The test binary
 * is linked with --wrap for each function of HDF5 our code calls to make a datatype, a dataspace or
 * a property list, and for their closes: each made identifier counts one, each successful close
 * one less (closing a predefined type fails and counts nothing). Files, groups, datasets and
 * attributes are counted by HDF5 itself (H5Fget_obj_count).
 *
 * The same wrappers inject faults (test_fail_hdf5): a call HDF5 would only fail on a broken file
 * or when out of memory fails on demand, so that the error paths behind it are tested. */
#include <criterion/criterion.h>
#include <hdf5.h>
#include <string.h>

#include "tests/helpers.h"

static long made; /* datatypes, dataspaces and property lists made and not closed */

static hid_t counted(hid_t id) {
  if (id >= 0) __atomic_add_fetch(&made, 1, __ATOMIC_SEQ_CST);
  return id;
}

static herr_t uncounted(herr_t status) {
  if (status >= 0) __atomic_sub_fetch(&made, 1, __ATOMIC_SEQ_CST);
  return status;
}

static const char *failing; /* the wrapped function whose call `fail_in` from now fails, or NULL */
static int fail_in;

void test_fail_hdf5(const char *name, int after) { failing = name, fail_in = after; }

/* Whether this call of NAME is the one to fail (then no other call fails). */
static int fails(const char *name) {
  if (!failing || strcmp(name, failing) != 0 || fail_in-- > 0) return 0;
  failing = NULL;
  return 1;
}

#define WRAP(ret, name, params, args) \
  ret __real_##name params;           \
  ret __wrap_##name params { return fails(#name) ? -1 : counted(__real_##name args); }
#define WRAP_CLOSE(name)             \
  herr_t __real_##name(hid_t id);    \
  herr_t __wrap_##name(hid_t id) { return uncounted(__real_##name(id)); }

WRAP(hid_t, H5Screate, (H5S_class_t type), (type))
WRAP(hid_t, H5Screate_simple, (int rank, const hsize_t dims[], const hsize_t maxdims[]), (rank, dims, maxdims))
WRAP(hid_t, H5Dget_space, (hid_t dset), (dset))
WRAP(hid_t, H5Aget_space, (hid_t attr), (attr))
WRAP(hid_t, H5Tcopy, (hid_t type), (type))
WRAP(hid_t, H5Tcreate, (H5T_class_t type, size_t size), (type, size))
WRAP(hid_t, H5Dget_type, (hid_t dset), (dset))
WRAP(hid_t, H5Aget_type, (hid_t attr), (attr))
WRAP(hid_t, H5Tget_member_type, (hid_t type, unsigned i), (type, i))
WRAP(hid_t, H5Tget_native_type, (hid_t type, H5T_direction_t direction), (type, direction))
WRAP(hid_t, H5Pcreate, (hid_t cls), (cls))
WRAP(hid_t, H5Dget_create_plist, (hid_t dset), (dset))
WRAP_CLOSE(H5Sclose)
WRAP_CLOSE(H5Tclose)
WRAP_CLOSE(H5Pclose)

long test_open_hdf5_ids(void) {
  /* Not H5F_OBJ_DATATYPE: that counts transient datatypes too, which `made` has counted. */
  const unsigned kinds = H5F_OBJ_FILE | H5F_OBJ_GROUP | H5F_OBJ_DATASET | H5F_OBJ_ATTR;
  return (long)H5Fget_obj_count(H5F_OBJ_ALL, kinds) + __atomic_load_n(&made, __ATOMIC_SEQ_CST);
}

/* The count follows each kind: one made, one more; closed, as before; a failed close of a
 * predefined type changes nothing. */
Test(hdf5_ids, the_count_follows_what_is_made_and_closed) {
  const long before = test_open_hdf5_ids();
  const hsize_t dims[1] = {3};
  hid_t space = H5Screate_simple(1, dims, NULL), scalar = H5Screate(H5S_SCALAR);
  hid_t type = H5Tcopy(H5T_C_S1), plist = H5Pcreate(H5P_DATASET_CREATE);
  cr_expect_eq(test_open_hdf5_ids(), before + 4);
  H5E_BEGIN_TRY { cr_expect_lt(H5Tclose(H5T_NATIVE_DOUBLE), 0, "a predefined type cannot be closed"); }
  H5E_END_TRY;
  cr_expect_eq(test_open_hdf5_ids(), before + 4);
  H5Sclose(space), H5Sclose(scalar), H5Tclose(type), H5Pclose(plist);
  cr_expect_eq(test_open_hdf5_ids(), before);
}

/* An injected fault fails the one call asked for (the second here), returns -1 and counts nothing;
 * the calls before and after it succeed. */
Test(hdf5_ids, a_fault_fails_the_one_call_asked_for) {
  const long before = test_open_hdf5_ids();
  test_fail_hdf5("H5Tcopy", 1);
  hid_t a = H5Screate(H5S_SCALAR), b = H5Tcopy(H5T_C_S1), c = H5Tcopy(H5T_C_S1), d = H5Tcopy(H5T_C_S1);
  cr_expect(a >= 0 && b >= 0 && c == -1 && d >= 0, "%lld %lld %lld %lld", (long long)a, (long long)b, (long long)c,
            (long long)d);
  cr_expect_eq(test_open_hdf5_ids(), before + 3);
  H5Sclose(a), H5Tclose(b), H5Tclose(d);
  cr_expect_eq(test_open_hdf5_ids(), before);
}
