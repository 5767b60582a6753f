/* The Lobatto IIIA–IIIB coefficient tables of the SPARK engine (integrators/spark.c), exposed so that
 * tests can check them against the simplifying assumptions that define them and run the engine over
 * a deliberately wrong table (a copy of nh_integrator_spark with another `data`). */
#ifndef NH_SPARK_H
#define NH_SPARK_H

#include "integrators/integrator.h"

#define NH_SPARK_MAX_S 4

/* A Lobatto IIIA–IIIB pair on s stages: the nodes c and weights b the two share, the IIIA matrix a
 * (positions) and the IIIB matrix ahat (momenta). */
typedef struct {
  int s;
  double c[NH_SPARK_MAX_S], b[NH_SPARK_MAX_S];
  double a[NH_SPARK_MAX_S][NH_SPARK_MAX_S], ahat[NH_SPARK_MAX_S][NH_SPARK_MAX_S];
} nh_lobatto_pair;

/* The pairs for s = 2, 3, 4, indexed by s (entries 0 and 1 are unused). nh_integrator_spark's
 * `data` points here; the engine reads the pair of a method's s from its type's data. */
extern const nh_lobatto_pair nh_lobatto_pairs[NH_SPARK_MAX_S + 1];

/* The method (also declared by integrators/registry.c, which registers it). */
extern const nh_integrator_type nh_integrator_spark;

#endif
