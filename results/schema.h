/* What the writer and the reader of results files share (internal to results/): the compound
 * types of cost counters and of the orders table, and names used on both sides. */
#ifndef NH_RESULTS_SCHEMA_H
#define NH_RESULTS_SCHEMA_H

#include <hdf5.h>

#include "results/results.h"

/* Compound types, in memory (native, the C structs) or in the file (little-endian standard
 * types, the same member names). Close with H5Tclose; H5I_INVALID_HID if HDF5 refuses a member. */
hid_t nh_schema_cost_type(int file); /* nh_cost: steps, rhs_evals, ..., constraint_evals */
/* The orders table of convergence studies: one nh_order_row per method (strings variable-length). */
hid_t nh_schema_orders_type(int file);
/* "name=unit,..." for the `units` attribute of the compound datasets. */
extern const char nh_schema_cost_units[];
extern const char nh_schema_orders_units[];

/* A variable-length UTF-8 string type (close with H5Tclose). */
hid_t nh_schema_vlen_string(void);

/* Reclaims the variable-length data HDF5 allocated into buf (a read of `space` with `memtype`). */
void nh_schema_reclaim(hid_t memtype, hid_t space, void *buf);

#endif
