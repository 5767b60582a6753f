/* SUNDIALS IDA and CVODE (integrators/sundials.c), built with -DNHBENCH_SUNDIALS=ON only. */
#ifndef NH_SUNDIALS_H
#define NH_SUNDIALS_H

/* The last failure of `method` ("ida" or "cvode") on this thread, as printed on stderr
 * ("ida: Failure at t = 1.112335e+01 (IDA_CONV_FAIL, ...)"); "" when its last run did not fail. */
const char *nh_sundials_last_failure(const char *method);

#endif
