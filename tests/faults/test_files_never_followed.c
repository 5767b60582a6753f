/* Files nhbench writes are created, never followed (issue 47 item 2, README "Security"): a link
 * planted at the results file's temporary or at the journal is never written through; an output
 * that is a link, the spec itself, empty or a directory's name, and a journal that is a link or a
 * FIFO are refused before anything is computed (exit 2); the victim of each link is unchanged. */
#define _POSIX_C_SOURCE 200809L /* symlink, lstat, mkfifo */
#include <criterion/criterion.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "results/results.h"
#include "studies/checkpoint.h"
#include "studies/study.h"
#include "tests/helpers.h"

#define VICTIM_TEXT "the victim's own text\n"

/* A victim file with known text, and the directory of the test's files. */
static void make_victim(char *victim, size_t len, const char *tag) {
  snprintf(victim, len, "/tmp/nhbench-follow-%d-%s-victim", (int)getpid(), tag);
  test_write_file(victim, VICTIM_TEXT);
}

static void expect_victim_unchanged(const char *victim) {
  char text[256];
  test_read_file(victim, text, sizeof text);
  cr_expect_str_eq(text, VICTIM_TEXT, "%s was written through a link", victim);
  remove(victim);
}

static void ignore_task(void *ctx, long task, const double *x, size_t n) {
  (void)ctx, (void)task, (void)x, (void)n;
}

/* A link at the results file's temporary name (this process's pid) is removed, not written
 * through: the results land in OUT.h5, a regular file. */
Test(files_never_followed, results_temporary_link_is_not_followed) {
  char victim[128], path[128], tmp[160], err[1024];
  make_victim(victim, sizeof victim, "tmp");
  snprintf(path, sizeof path, "/tmp/nhbench-follow-%d.h5", (int)getpid());
  snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
  remove(tmp);
  cr_assert_eq(symlink(victim, tmp), 0);
  nh_study st;
  nh_convergence_result r;
  const char *ov[] = {"h=[0.1, 0.05]"};
  cr_assert_eq(nh_study_load(NHBENCH_SOURCE_DIR "/tests/data/convergence_norms.cfg", ov, 1, &st, err, sizeof err), 0,
               "%s", err);
  cr_assert_eq(nh_run_convergence(&st, &r, err, sizeof err), 0, "%s", err);
  cr_assert_eq(nh_write_convergence(path, &st, &r, "test", err, sizeof err), 0, "%s", err);
  struct stat sb;
  cr_expect(lstat(path, &sb) == 0 && S_ISREG(sb.st_mode), "the results are a regular file");
  cr_expect(nh_h5_is_hdf5(path), "the results are an HDF5 file");
  cr_expect(lstat(tmp, &sb) != 0, "no temporary left");
  expect_victim_unchanged(victim);
  nh_convergence_result_free(&r);
  nh_study_free(&st);
  remove(path);
}

/* A new journal where a link was planted: the link is replaced by a regular journal; a resumed
 * one that is a link or a FIFO is refused, never followed or waited on. */
Test(files_never_followed, journal_link_or_fifo_is_not_followed, .timeout = 20) {
  char victim[128], path[128], err[1024];
  long resumed;
  make_victim(victim, sizeof victim, "journal");
  snprintf(path, sizeof path, "/tmp/nhbench-follow-%d.journal", (int)getpid());
  remove(path);
  /* a link to a real journal of the same key: refused too, as a link */
  char real[160];
  snprintf(real, sizeof real, "%s-real", path);
  nh_checkpoint *j = nh_checkpoint_open(real, "key", 4, 0, ignore_task, NULL, &resumed, err, sizeof err);
  cr_assert_not_null(j, "%s", err);
  nh_checkpoint_close(j);
  cr_assert_eq(symlink(real, path), 0);
  cr_expect_null(nh_checkpoint_open(path, "key", 4, 1, ignore_task, NULL, &resumed, err, sizeof err),
                 "a link to a journal resumed");
  cr_expect_eq(nh_checkpoint_matches(path, "key"), -1, "a link to a journal matched");
  remove(path), remove(real);
  cr_assert_eq(symlink(victim, path), 0);
  cr_expect_null(nh_checkpoint_open(path, "key", 4, 1, ignore_task, NULL, &resumed, err, sizeof err),
                 "a link resumed");
  nh_checkpoint *c = nh_checkpoint_open(path, "key", 4, 0, ignore_task, NULL, &resumed, err, sizeof err);
  cr_assert_not_null(c, "%s", err);
  nh_checkpoint_close(c);
  struct stat sb;
  cr_expect(lstat(path, &sb) == 0 && S_ISREG(sb.st_mode), "the journal is a regular file");
  expect_victim_unchanged(victim);
  remove(path);
  cr_assert_eq(mkfifo(path, 0600), 0);
  cr_expect_null(nh_checkpoint_open(path, "key", 4, 1, ignore_task, NULL, &resumed, err, sizeof err),
                 "a FIFO resumed");
  cr_expect_eq(nh_checkpoint_matches(path, "key"), -1, "a FIFO is not a journal");
  remove(path);
}

/* `nhbench run` on an output it must not write: exit 2 with the message, before computing (no
 * results file, no journal). */
static void expect_run_refused(const char *output, const char *message) {
  static char out[1 << 14];
  char args[1024];
  snprintf(args, sizeof args, "run %s/tests/data/convergence_norms.cfg -o '%s'", NHBENCH_SOURCE_DIR, output);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 2, "-o '%s': %s", output, out);
  cr_expect(strstr(out, message) != NULL, "-o '%s': no '%s' in:\n%s", output, message, out);
  cr_expect(strstr(out, "study of") == NULL, "-o '%s' computed:\n%s", output, out);
}

Test(files_never_followed, outputs_refused_before_computing) {
  char victim[128], link[128], journal[160], spec[128];
  make_victim(victim, sizeof victim, "out");
  snprintf(link, sizeof link, "/tmp/nhbench-follow-%d-link.h5", (int)getpid());
  remove(link);
  cr_assert_eq(symlink(victim, link), 0);
  expect_run_refused(link, "is a symbolic link, which the results would replace");
  struct stat sb;
  cr_expect(lstat(link, &sb) == 0 && S_ISLNK(sb.st_mode), "the link is left as it was");
  remove(link);
  expect_victim_unchanged(victim);

  make_victim(victim, sizeof victim, "journal-run");
  snprintf(link, sizeof link, "/tmp/nhbench-follow-%d-out.h5", (int)getpid());
  snprintf(journal, sizeof journal, "%s.journal", link);
  remove(journal);
  cr_assert_eq(symlink(victim, journal), 0);
  expect_run_refused(link, "is a symbolic link, not a journal nhbench made; remove it");
  cr_expect_neq(access(link, F_OK), 0);
  remove(journal);
  expect_victim_unchanged(victim);
  cr_assert_eq(mkfifo(journal, 0600), 0);
  expect_run_refused(link, "is not a regular file (a directory, FIFO, device or socket), not a journal");
  remove(journal);

  snprintf(spec, sizeof spec, "/tmp/nhbench-follow-%d-spec.cfg", (int)getpid());
  char cmd[512];
  snprintf(cmd, sizeof cmd, "cp %s/tests/data/convergence_norms.cfg %s", NHBENCH_SOURCE_DIR, spec);
  cr_assert_eq(system(cmd), 0);
  static char out[1 << 14];
  char args[600];
  snprintf(args, sizeof args, "run %s -o %s", spec, spec);
  cr_expect_eq(test_run_nhbench(args, out, sizeof out), 2, "%s", out);
  cr_expect(strstr(out, "is the spec itself; the results would replace it"), "%s", out);
  cr_expect(!nh_h5_is_hdf5(spec), "the spec was replaced");
  remove(spec);

  cr_assert_eq(system("rm -rf /tmp/nhbench-follow-dir"), 0);
  expect_run_refused("", "the output '' is empty");
  expect_run_refused("/tmp/nhbench-follow-dir/", "ends in '/', a directory's name");
  cr_expect_neq(access("/tmp/nhbench-follow-dir", F_OK), 0, "the directory was made");
}
