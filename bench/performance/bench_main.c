/* nhbench_bench: make bench's performance tables (bench/performance/bench.c). */
#include "bench/performance/bench.h"

int main(int argc, char **argv) { return nh_bench_main(argc, argv); }
