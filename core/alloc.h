/* Arrays on the heap whose length may be 0 (a study without methods, a run without samples).
 * malloc(0) may return NULL (C11 7.22.3), which a caller would take for out of memory; these
 * never do, so NULL always means out of memory and no size needs a "+ 1" for the empty case. */
#ifndef NH_CORE_ALLOC_H
#define NH_CORE_ALLOC_H
#include <stdint.h>
#include <stdlib.h>

static inline void *nh_malloc_array(size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  const size_t bytes = n * size;
  return malloc(bytes > 0 ? bytes : 1);
}
static inline void *nh_calloc_array(size_t n, size_t size) {
  return n > 0 && size > 0 ? calloc(n, size) : calloc(1, 1);
}
static inline void *nh_realloc_array(void *p, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  const size_t bytes = n * size;
  return realloc(p, bytes > 0 ? bytes : 1);
}
#endif
