/* Groups of tasks in nh_run_tasks (studies/tasks.h, studies/distribute.c): formed once, in task
 * order, from the tasks not done, each led by the first task not yet in one and filled with the
 * next tasks not done of its kind up to group_width of its leader, clamped to
 * [1, NH_TASK_GROUP_MAX]; a group of one runs through run, a wider one through run_group; every
 * record is taken on its own, progress ticks per task with the group's time shared. The expected
 * partitions are written out by hand for the small cases, and for random task sets computed by a
 * second method (each kind's tasks cut into consecutive runs, each as wide as its first task
 * says), which shares no code with the runtime's scan ahead from each leader. */
#define _POSIX_C_SOURCE 200809L /* nanosleep */
#include <criterion/criterion.h>
#include <omp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "studies/study.h"
#include "tests/heap_guard.h"

enum { MAX_TASKS = 256, MAX_CALLS = 256, LENGTH = 3 };

/* A task set's context: the kind and group_width of each task, and what the runtime did with it. */
typedef struct {
  const int *kinds;  /* [task] */
  const int *widths; /* [task]: group_width's answer for a group it leads */
  long fail_take;    /* the task whose take fails (-1: none) */
  long sleep_ns;     /* each call of run or run_group sleeps this long */
  struct {
    long tasks[NH_TASK_GROUP_MAX];
    int n, via_group;
  } calls[MAX_CALLS];
  int ncalls, wide_calls_of_one, remote;
  int taken[MAX_TASKS];
  double record[MAX_TASKS][LENGTH];
} fixture;

static void pause_for(long ns) {
  const struct timespec t = {0, ns};
  if (ns > 0) nanosleep(&t, NULL);
}

/* One call of run (via_group 0) or run_group, kept in order of arrival (threads: a critical
 * section); Criterion's asserts are left to the test's own thread. */
static void note_call(fixture *f, const long *tasks, int n, int via_group) {
#pragma omp critical(test_calls)
  {
    if (f->ncalls < MAX_CALLS) {
      memcpy(f->calls[f->ncalls].tasks, tasks, sizeof(long) * (size_t)n);
      f->calls[f->ncalls].n = n, f->calls[f->ncalls].via_group = via_group;
    }
    f->ncalls++;
    if (via_group && n < 2) f->wide_calls_of_one++;
  }
}

/* Record of task at position i of a group of n: {task, i, n}, so that a record packed into the
 * wrong slot, or another group's, is seen by take. */
static void run_one(void *ctx, long task, double *record) {
  fixture *f = ctx;
  note_call(f, &task, 1, 0);
  pause_for(f->sleep_ns);
  record[0] = (double)task, record[1] = 0, record[2] = 1;
}
static void run_wide(void *ctx, const long *tasks, int n, double *const *records) {
  fixture *f = ctx;
  note_call(f, tasks, n, 1);
  pause_for(f->sleep_ns);
  for (int i = 0; i < n; i++) records[i][0] = (double)tasks[i], records[i][1] = i, records[i][2] = n;
}
static int take(void *ctx, long task, const double *record, int remote) {
  fixture *f = ctx;
  f->taken[task]++; /* under the runtime's critical section */
  memcpy(f->record[task], record, sizeof f->record[task]);
  f->remote |= remote;
  return task == f->fail_take ? -1 : 0;
}
static int kind(void *ctx, long task) { return ((fixture *)ctx)->kinds[task]; }
static int width(void *ctx, long task) { return ((fixture *)ctx)->widths[task]; }

static nh_task_set task_set(fixture *f, long count, const char *done, int with_kinds, int nkinds) {
  return (nh_task_set){.count = count,
                       .done = done,
                       .record_length = LENGTH,
                       .run = run_one,
                       .take = take,
                       .kind = with_kinds ? kind : NULL,
                       .nkinds = nkinds,
                       .ctx = f,
                       .group_width = width,
                       .run_group = run_wide};
}

/* The groups the runtime ran, each as its tasks in the order given, "a,b,c", the groups by
 * leader, separated by '|': "0,3,6|1,7|2,5". */
static void ran_groups(const fixture *f, char *text, size_t len) {
  int order[MAX_CALLS];
  const int ncalls = f->ncalls < MAX_CALLS ? f->ncalls : MAX_CALLS;
  for (int c = 0; c < ncalls; c++) order[c] = c;
  for (int a = 1; a < ncalls; a++) /* by leader (few calls) */
    for (int b = a; b > 0 && f->calls[order[b]].tasks[0] < f->calls[order[b - 1]].tasks[0]; b--) {
      const int t = order[b];
      order[b] = order[b - 1], order[b - 1] = t;
    }
  size_t at = 0;
  text[0] = '\0';
  for (int c = 0; c < ncalls; c++)
    for (int i = 0; i < f->calls[order[c]].n && at < len; i++)
      at += (size_t)snprintf(text + at, len - at, "%s%ld", i ? "," : c ? "|" : "", f->calls[order[c]].tasks[i]);
}

/* The second method: leader[t] for every task to run (-1: done), each kind's tasks cut in order
 * into runs as wide as the clamped width of a run's first task; the same text as ran_groups. */
static void expected_groups(long count, const char *done, const int *kinds, const int *widths, long *leader, char *text,
                            size_t len) {
  for (long t = 0; t < count; t++) {
    leader[t] = -1;
    if (done && done[t]) continue;
    long prev = -1; /* the task before t of its kind */
    for (long s = t - 1; s >= 0 && prev < 0; s--)
      if (!(done && done[s]) && (kinds ? kinds[s] == kinds[t] : 1)) prev = s;
    long held = 0;
    for (long s = 0; prev >= 0 && s <= prev; s++) held += leader[s] == leader[prev];
    const int w = prev < 0 ? 0 : widths[leader[prev]];
    const int room = w < 1 ? 1 : w > NH_TASK_GROUP_MAX ? NH_TASK_GROUP_MAX : w;
    leader[t] = prev >= 0 && held < room ? leader[prev] : t;
  }
  size_t at = 0;
  text[0] = '\0';
  for (long l = 0; l < count; l++)
    for (long t = l, first = 1; leader[l] == l && t < count && at < len; t++)
      if (leader[t] == l)
        at += (size_t)snprintf(text + at, len - at, "%s%ld", !first ? "," : at ? "|" : "", t), first = 0;
}

/* Every task to run taken once with the record its group packed, {task, position, size}; those
 * done never run nor taken. */
static void expect_records(const fixture *f, long count, const long *leader) {
  for (long t = 0; t < count; t++) {
    if (leader[t] < 0) {
      cr_expect_eq(f->taken[t], 0, "task %ld is done: taken %d times", t, f->taken[t]);
      continue;
    }
    long position = 0, size = 0;
    for (long s = 0; s < count; s++) position += s < t && leader[s] == leader[t], size += leader[s] == leader[t];
    cr_expect_eq(f->taken[t], 1, "task %ld taken %d times", t, f->taken[t]);
    cr_expect(f->record[t][0] == t && f->record[t][1] == position && f->record[t][2] == size,
              "task %ld: record {%g, %g, %g}, not {%ld, %ld, %ld}", t, f->record[t][0], f->record[t][1],
              f->record[t][2], t, position, size);
  }
  cr_expect_eq(f->remote, 0, "a local run's records are not remote");
  cr_expect_eq(f->wide_calls_of_one, 0, "a group of one runs through run");
}

/* 11 tasks of kinds task / 4 (0,0,0,0,1,1,1,1,2,2,2), widths 3, 1, 2 by kind, tasks 1, 5 and 9
 * done: kind 0's group skips the done task 1 and takes 0, 2, 3; kind 1 runs alone; kind 2's group
 * skips 9 for 10. Then kinds task % 3, task 4 done, widths 3, 2, 2: groups take tasks across the
 * others' (0,3,6 over 1, 2, 4, 5), kind 0's fourth task starts a group of its own. */
Test(task_groups, groups_follow_kinds_and_skip_done_tasks) {
  static const int block_kinds[11] = {0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2};
  static const int block_widths[11] = {3, 3, 3, 3, 1, 1, 1, 1, 2, 2, 2};
  static const char block_done[11] = {0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0};
  static const int mod_kinds[11] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1};
  static const int mod_widths[11] = {3, 2, 2, 3, 2, 2, 3, 2, 2, 3, 2};
  static const char mod_done[11] = {0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0};
  const struct {
    const int *kinds, *widths;
    const char *done, *groups;
  } cases[] = {{block_kinds, block_widths, block_done, "0,2,3|4|6|7|8,10"},
               {mod_kinds, mod_widths, mod_done, "0,3,6|1,7|2,5|8|9|10"}};
  for (int c = 0; c < 2; c++) {
    static fixture f;
    memset(&f, 0, sizeof f);
    f.kinds = cases[c].kinds, f.widths = cases[c].widths, f.fail_take = -1;
    const nh_task_set ts = task_set(&f, 11, cases[c].done, 1, 3);
    nh_progress p;
    nh_progress_start(&p, "groups", 8);
    cr_assert_eq(nh_run_tasks(&ts, &p), 0, "case %d", c);
    char ran[512], expected[512];
    long leader[11];
    ran_groups(&f, ran, sizeof ran);
    expected_groups(11, cases[c].done, cases[c].kinds, cases[c].widths, leader, expected, sizeof expected);
    cr_expect_str_eq(ran, cases[c].groups, "case %d: ran %s", c, ran);
    cr_expect_str_eq(expected, cases[c].groups, "case %d: the second method gives %s", c, expected);
    expect_records(&f, 11, leader);
    cr_expect_eq(p.done, c ? 10 : 8, "case %d: %ld ticked", c, p.done);
    nh_progress_end(&p);
  }
}

/* One kind (no kind()), 40 tasks; a group's width is its leader's: 100 → 16 (0-15), 0 → 1 (16),
 * -5 → 1 (17), 100 → 16 (18-33), 3 (34-36), 16 but only 3 left (37-39); the widths of the tasks
 * a group takes are not asked. */
Test(task_groups, widths_are_clamped_to_one_and_the_maximum) {
  int widths[40];
  for (int t = 0; t < 40; t++) widths[t] = -7; /* (→ 1) the members': a group asking them would stop short */
  widths[0] = 100, widths[16] = 0, widths[17] = -5, widths[18] = 100, widths[34] = 3, widths[37] = 16;
  static fixture f;
  memset(&f, 0, sizeof f);
  f.widths = widths, f.fail_take = -1;
  const nh_task_set ts = task_set(&f, 40, NULL, 0, 0);
  nh_progress p;
  nh_progress_start(&p, "widths", 40);
  cr_assert_eq(nh_run_tasks(&ts, &p), 0);
  char ran[512];
  ran_groups(&f, ran, sizeof ran);
  cr_expect_str_eq(ran, "0,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15|16|17|18,19,20,21,22,23,24,25,26,27,28,29,30,31,32,33|"
                        "34,35,36|37,38,39");
  cr_expect_eq(f.ncalls, 6);
  long leader[40];
  char expected[512];
  expected_groups(40, NULL, NULL, widths, leader, expected, sizeof expected);
  cr_expect_str_eq(expected, ran, "the second method");
  expect_records(&f, 40, leader);
  cr_expect_eq(p.done, 40);
  nh_progress_end(&p);
}

/* Random task sets (kinds 0-3, a fifth of the tasks done, widths -3 ... 20), against the second
 * method, on the threads there are. */
Test(task_groups, random_task_sets_match_the_second_method) {
  unsigned long seed = 12345;
  for (int trial = 0; trial < 20; trial++) {
    static int kinds[200], widths[200];
    static char done[200];
    long to_run = 0;
    for (int t = 0; t < 200; t++) {
      seed = seed * 6364136223846793005ul + 1442695040888963407ul;
      kinds[t] = (int)(seed >> 60) % 4, widths[t] = (int)(seed >> 40) % 24 - 3;
      done[t] = (seed >> 20) % 5 == 0, to_run += !done[t];
    }
    static fixture f;
    memset(&f, 0, sizeof f);
    f.kinds = kinds, f.widths = widths, f.fail_take = -1;
    const nh_task_set ts = task_set(&f, 200, done, 1, 4);
    nh_progress p;
    nh_progress_start(&p, "random", to_run);
    cr_assert_eq(nh_run_tasks(&ts, &p), 0);
    static char ran[4096], expected[4096];
    long leader[200];
    ran_groups(&f, ran, sizeof ran);
    expected_groups(200, done, kinds, widths, leader, expected, sizeof expected);
    cr_expect_str_eq(ran, expected, "trial %d", trial);
    expect_records(&f, 200, leader);
    cr_expect_eq(p.done, to_run, "trial %d", trial);
    cr_assert_eq(p.nkinds, 4);
    for (int k = 0; k < 4; k++) {
      long of_kind = 0;
      for (int t = 0; t < 200; t++) of_kind += !done[t] && kinds[t] == k;
      cr_expect_eq(p.kind_done[k], of_kind, "trial %d, kind %d: %ld ticked of %ld", trial, k, p.kind_done[k], of_kind);
    }
    nh_progress_end(&p);
  }
}

/* take failing for one task (groups 0,3,6|1,4|2,5|7,10|8|9): the run fails, but every record is
 * still taken once, right, and every task ticked. */
Test(task_groups, a_failed_take_fails_the_run_and_the_others_are_taken) {
  static const int kinds[11] = {0, 1, 2, 0, 1, 2, 0, 1, 2, 0, 1};
  static const int widths[11] = {3, 2, 2, 3, 2, 2, 3, 2, 2, 3, 2};
  static const long fails[4] = {-1, 3, 7, 10}; /* none; inside a group, its leader, its last */
  for (int c = 0; c < 4; c++) {
    const long fail = fails[c];
    static fixture f;
    memset(&f, 0, sizeof f);
    f.kinds = kinds, f.widths = widths, f.fail_take = fail;
    const nh_task_set ts = task_set(&f, 11, NULL, 1, 3);
    nh_progress p;
    nh_progress_start(&p, "fail", 11);
    cr_expect_eq(nh_run_tasks(&ts, &p), fail >= 0 ? -1 : 0, "take of %ld failing", fail);
    long leader[11];
    char expected[256];
    expected_groups(11, NULL, kinds, widths, leader, expected, sizeof expected);
    expect_records(&f, 11, leader);
    cr_expect_eq(p.done, 11);
    nh_progress_end(&p);
  }
}

/* The group's time is shared among its tasks: one group of 16 that sleeps 2 ms gives its kind at
 * least those 2 ms in all, and no more than the whole run's time (16 ticks of the group's full
 * time would be 32 ms or more). */
Test(task_groups, a_group_time_is_shared_among_its_tasks) {
  static const int kinds[16] = {0};
  static const int widths[16] = {16};
  static fixture f;
  memset(&f, 0, sizeof f);
  f.kinds = kinds, f.widths = widths, f.fail_take = -1, f.sleep_ns = 2000000;
  const nh_task_set ts = task_set(&f, 16, NULL, 1, 1);
  nh_progress p;
  nh_progress_start(&p, "time", 16);
  const double start = omp_get_wtime();
  cr_assert_eq(nh_run_tasks(&ts, &p), 0);
  const double wall = omp_get_wtime() - start;
  cr_expect_eq(f.ncalls, 1);
  cr_assert_eq(p.nkinds, 1);
  cr_expect_eq(p.kind_done[0], 16);
  cr_expect(p.kind_time[0] >= 2e-3 && p.kind_time[0] <= wall, "kind time %g s, the run %g s", p.kind_time[0], wall);
  nh_progress_end(&p);
}

/* Without group_width, run_group is never called even if given: run once per task not done, as
 * before groups. With group_width but no run_group, a wide group's tasks run through run one by
 * one, in order. */
Test(task_groups, without_group_width_or_run_group_tasks_run_alone) {
  static const int kinds[7] = {0, 1, 2, 0, 1, 2, 0};
  static const int widths[7] = {4, 4, 4, 4, 4, 4, 4};
  static const char done[7] = {0, 1, 0, 1, 0, 0, 0};
  for (int no_run_group = 0; no_run_group < 2; no_run_group++) {
    static fixture f;
    memset(&f, 0, sizeof f);
    f.kinds = kinds, f.widths = widths, f.fail_take = -1;
    nh_task_set ts = task_set(&f, 7, done, 1, 3);
    if (no_run_group)
      ts.run_group = NULL;
    else
      ts.group_width = NULL;
    nh_progress p;
    nh_progress_start(&p, "alone", 5);
    cr_assert_eq(nh_run_tasks(&ts, &p), 0);
    cr_expect_eq(f.ncalls, 5, "%d calls", f.ncalls);
    for (int c = 0; c < f.ncalls && c < MAX_CALLS; c++)
      cr_expect(f.calls[c].n == 1 && !f.calls[c].via_group, "call %d: %d tasks through run_group %d", c, f.calls[c].n,
                f.calls[c].via_group);
    for (int t = 0; t < 7; t++) {
      cr_expect_eq(f.taken[t], !done[t], "task %d taken %d times", t, f.taken[t]);
      if (!done[t]) cr_expect(f.record[t][0] == t && f.record[t][1] == 0 && f.record[t][2] == 1, "task %d", t);
    }
    if (no_run_group) { /* the group 0,6 (kind 0, 3 done) ran in order: 0 before 6 */
      int at0 = -1, at6 = -1;
      for (int c = 0; c < f.ncalls && c < MAX_CALLS; c++)
        if (f.calls[c].tasks[0] == 0)
          at0 = c;
        else if (f.calls[c].tasks[0] == 6)
          at6 = c;
      cr_expect(at0 >= 0 && at6 > at0, "task 0 ran as call %d, task 6 as %d", at0, at6);
    }
    cr_expect_eq(p.done, 5);
    nh_progress_end(&p);
  }
}

/* Each allocation failing in turn, on one thread and without kinds (so that the order of the
 * allocations is known: no kinds to count, groups 0-2, 3-5, 6-8, 9-10 in turn): the three of the
 * groups (nothing runs, nothing ticks), then the records of group n - 4 (its tasks are not taken
 * but ticked, the other groups are taken): -1, and nothing left allocated. The eighth allocation
 * is never made: the run succeeds. */
Test(task_groups, out_of_memory_fails_the_run_and_leaks_nothing) {
  if (test_live_blocks() < 0) cr_skip_test("AddressSanitizer build: LeakSanitizer checks leaks there");
  static const int widths[11] = {3, 3, 3, 3, 3, 3, 3, 3, 3, 3, 3};
  static const long first[5] = {0, 3, 6, 9, 11};
  omp_set_num_threads(1);
  for (long n = 1; n <= 8; n++) {
    static fixture f;
    memset(&f, 0, sizeof f);
    f.widths = widths, f.fail_take = -1;
    const nh_task_set ts = task_set(&f, 11, NULL, 0, 0);
    nh_progress p;
    nh_progress_start(&p, "oom", 11);
    const long blocks = test_live_blocks();
    test_fail_allocation = n;
    const int rc = nh_run_tasks(&ts, &p);
    test_fail_allocation = 0;
    cr_expect_eq(test_live_blocks(), blocks, "allocation %ld failing: %ld blocks leaked", n,
                 test_live_blocks() - blocks);
    cr_expect_eq(rc, n <= 7 ? -1 : 0, "allocation %ld failing", n);
    const long lost = n >= 4 && n <= 7 ? n - 4 : -1; /* the group whose records failed */
    for (long t = 0; t < 11; t++) {
      const int in_lost = lost >= 0 && t >= first[lost] && t < first[lost + 1];
      cr_expect_eq(f.taken[t], n > 3 && !in_lost, "allocation %ld failing: task %ld taken %d times", n, t, f.taken[t]);
    }
    cr_expect_eq(p.done, n <= 3 ? 0 : 11, "allocation %ld failing: %ld ticked", n, p.done);
    nh_progress_end(&p);
  }
}
