/* FNV-1a, 64 bits (core/hash.h). */
#include "core/hash.h"

#define FNV_PRIME 1099511628211ull

uint64_t nh_fnv1a(uint64_t h, const void *data, size_t len) {
  const unsigned char *p = data;
  for (size_t i = 0; i < len; i++) h = (h ^ p[i]) * FNV_PRIME;
  return h;
}
