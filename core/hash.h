/* FNV-1a, 64 bits (Fowler–Noll–Vo, http://www.isthe.com/chongo/tech/comp/fnv/): the spec
 * loader's index of method names and the checkpoint journal's record checksums. */
#ifndef NH_CORE_HASH_H
#define NH_CORE_HASH_H

#include <stddef.h>
#include <stdint.h>

#define NH_FNV1A_BASIS 14695981039346656037ull /* the offset basis: the hash of no bytes */

/* The hash h continued over the len bytes at data (start from NH_FNV1A_BASIS). */
uint64_t nh_fnv1a(uint64_t h, const void *data, size_t len);

#endif
