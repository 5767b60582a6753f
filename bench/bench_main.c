/* nhbench_bench: make bench's performance tables (bench/bench.c). */
#include "bench/bench.h"

int main(int argc, char **argv) { return nh_bench_main(argc, argv); }
