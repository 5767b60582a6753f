/* Random streams: every random draw of a study comes from a stream whose seed depends on
 * (seed, index) only, so results do not depend on the number of threads or on task order. */
#ifndef NH_RNG_H
#define NH_RNG_H

#include <stdint.h>

/* The seed of stream `index` of the master seed: the SplitMix64 finaliser of (seed, index),
 * independent, well-mixed 64-bit stream seeds. */
uint64_t nh_stream_seed(uint64_t seed, uint64_t index);

#endif
