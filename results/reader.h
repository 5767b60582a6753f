/* Shared by the reader's files (internal to results/). */
#ifndef NH_RESULTS_READER_H
#define NH_RESULTS_READER_H

#include <stddef.h>

#include "results/results.h"

#define NH_R_MAX_RANK 8
/* The length of the buffers that hold an object's name for messages ("/kind/NAME"). */
#define NH_R_WHERE 512

char *nh_r_dup(const char *s);
/* Copies of n strings at raw, variable-length (raw holds char *) or of `size` bytes each, as a
 * NULL-terminated list for nh_h5_free_strings; NULL if out of memory (nothing left allocated). */
char **nh_r_copy_strings(const char *raw, size_t n, size_t size, int vlen);
/* 0 when none of the count strings holds a control character (a byte below 0x20, or 0x7f): every
 * string nhbench writes is one line of text, except the spec's text. A line break in a label,
 * units or a name would add a row to `export`'s tables, which the plot scripts read as data and
 * pass on. Else -1 with a message naming `what` (an object and attribute, or a dataset). */
int nh_r_check_text(const nh_h5 *f, const char *what, char *const *s, int count);
/* "/kind/NAME" (or "/NAME" for the root) for messages. */
const char *nh_r_where(const nh_h5 *f, const char *obj, char *buf, size_t len);
/* The location an object path is relative to: the file for "/...", else the study group. */
hid_t nh_r_loc(const nh_h5 *f, const char *obj);
/* Reads a string attribute of an open object: NULL if it has none, it is not a string, or out of
 * memory; *no_memory (if no_memory is not NULL) says whether it was the last. */
char *nh_r_attr_of(hid_t obj, const char *name, int *no_memory);

/* A compound dataset read as records of memtype (size bytes each), members matched by name. */
void *nh_h5_records(nh_h5 *f, const char *name, const char *dims, hid_t memtype, size_t size, hsize_t *shape);

/* An index that stands for a whole dimension in nh_r_pick's choice. */
#define NH_R_WHOLE (-1LL)
/* The part of a dataset to read, chosen once it is open and checked (its dimensions, its class,
 * its size against what it stores): index[d] for each of its rank dimensions, an index along d or
 * NH_R_WHOLE (what index holds on entry). 0, or -1 to read nothing (the reason is the caller's). */
typedef int nh_r_pick(void *ctx, int rank, const hsize_t *shape, long long *index);
/* Dataset NAME of class cls (checked as nh_h5_doubles checks it) converted to memtype, elsize bytes
 * each: only the hyperslab pick chooses, in C order (the values at the chosen indices along every
 * whole dimension). shape (may be NULL) receives the full shape. malloc'd; NULL with a message on
 * stderr, or after pick's refusal. */
void *nh_r_read_part(nh_h5 *f, const char *name, const char *dims, hid_t memtype, H5T_class_t cls, size_t elsize,
                     nh_r_pick *pick, void *ctx, hsize_t *shape);

#endif
