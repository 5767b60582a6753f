/* make bench's program, nhbench_bench (bench/performance/bench.c): its tables of performance figures. */
#ifndef NH_BENCH_BENCH_H
#define NH_BENCH_BENCH_H

/* nhbench_bench's command line (its --help): prints the tables asked for; 0, or 2 on bad
 * arguments. argv[0] is the program the memory table runs its children with
 * (--memory-child SPEC JOURNAL|- T). Callable in-process: tests/performance/test_bench_clock.c runs the tables
 * under a clock it sets, and checks that they free what they allocate. */
int nh_bench_main(int argc, char **argv);

#endif
