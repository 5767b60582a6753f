/* Compound types and names shared by the writer and the reader (results/schema.h). */
#include "results/schema.h"

#include <stddef.h>

const char nh_schema_cost_units[] = "steps=1,rhs_evals=1,jacobian_evals=1,linear_solves=1,newton_iterations=1,"
                                    "constraint_evals=1";

const char nh_schema_orders_units[] = "method=-,claimed=1,expected=1,observed=1,stderr=1,fit_first=1,fit_count=1,"
                                      "fit_h_min=time,fit_h_max=time,ok=1,reason=-";

hid_t nh_schema_vlen_string(void) {
  hid_t t = H5Tcopy(H5T_C_S1);
  H5Tset_size(t, H5T_VARIABLE);
  H5Tset_cset(t, H5T_CSET_UTF8);
  return t;
}

/* A member HDF5 refuses leaves no half-built type behind: the caller gets an invalid id, and the dataset
   created or read with it fails with its name. */
static hid_t refused(hid_t t) {
  H5Tclose(t);
  return H5I_INVALID_HID;
}

hid_t nh_schema_cost_type(int file) {
  static const struct {
    const char *name;
    size_t offset;
  } m[] = {{"steps", offsetof(nh_cost, steps)},
           {"rhs_evals", offsetof(nh_cost, rhs_evals)},
           {"jacobian_evals", offsetof(nh_cost, jacobian_evals)},
           {"linear_solves", offsetof(nh_cost, linear_solves)},
           {"newton_iterations", offsetof(nh_cost, newton_iterations)},
           {"constraint_evals", offsetof(nh_cost, constraint_evals)}};
  const int n = (int)(sizeof m / sizeof *m);
  hid_t t = H5Tcreate(H5T_COMPOUND, file ? 8 * (size_t)n : sizeof(nh_cost));
  for (int i = 0; i < n; i++)
    if (H5Tinsert(t, m[i].name, file ? 8 * (size_t)i : m[i].offset, file ? H5T_STD_U64LE : H5T_NATIVE_ULLONG) < 0)
      return refused(t);
  return t;
}

hid_t nh_schema_orders_type(int file) {
  const hid_t i32 = file ? H5T_STD_I32LE : H5T_NATIVE_INT, f64 = file ? H5T_IEEE_F64LE : H5T_NATIVE_DOUBLE;
  hid_t str = nh_schema_vlen_string();
  const struct {
    const char *name;
    size_t offset;
    hid_t type;
  } m[] = {{"method", offsetof(nh_order_row, method), str},
           {"claimed", offsetof(nh_order_row, claimed), i32},
           {"expected", offsetof(nh_order_row, expected), i32},
           {"observed", offsetof(nh_order_row, observed), f64},
           {"stderr", offsetof(nh_order_row, stderr_), f64},
           {"fit_first", offsetof(nh_order_row, fit_first), i32},
           {"fit_count", offsetof(nh_order_row, fit_count), i32},
           {"fit_h_min", offsetof(nh_order_row, fit_h_min), f64},
           {"fit_h_max", offsetof(nh_order_row, fit_h_max), f64},
           {"ok", offsetof(nh_order_row, ok), i32},
           {"reason", offsetof(nh_order_row, reason), str}};
  const int n = (int)(sizeof m / sizeof *m);
  size_t size = 0;
  for (int i = 0; i < n; i++) size += H5Tget_size(m[i].type);
  /* In the file the members are packed in this order; in memory they sit where nh_order_row has them. */
  hid_t t = H5Tcreate(H5T_COMPOUND, file ? size : sizeof(nh_order_row));
  for (size_t i = 0, off = 0; i < (size_t)n; off += H5Tget_size(m[i].type), i++)
    if (H5Tinsert(t, m[i].name, file ? off : m[i].offset, m[i].type) < 0) {
      H5Tclose(str);
      return refused(t);
    }
  H5Tclose(str);
  return t;
}

void nh_schema_reclaim(hid_t memtype, hid_t space, void *buf) {
#if H5_VERSION_GE(1, 12, 0)
  H5Treclaim(memtype, space, H5P_DEFAULT, buf);
#else
  H5Dvlen_reclaim(memtype, space, H5P_DEFAULT, buf);
#endif
}
