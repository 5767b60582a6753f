/* nhbench report CLAIMS...: checks the claims files against the results files and writes
 * REPORT.md and claims.csv (bench/claims/report.h; `make paper`). */
#define _POSIX_C_SOURCE 200809L /* O_NOFOLLOW, fdopen */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bench/cli/cli.h"
#include "bench/claims/report.h"
#include "core/text.h"

static const char usage[] =
    "usage: nhbench report [-h] [--results DIR] [--output DIR] [--figures REL] [--strict] CLAIMS...\n"
    "  Reads each claims file (studies/paper/*.claims: per item of a spec's checklist, what is\n"
    "  claimed, which results file and dataset measure it, how the values are reduced and what is\n"
    "  expected), measures every row from the results files DIR/<file>.h5 and writes\n"
    "  OUT/REPORT.md and OUT/claims.csv (columns spec,item,quantity,expected,measured,verdict).\n"
    "  Verdicts: pass, fail, not-verified (with the reason: declared so in the claims file, or\n"
    "  the results file or dataset is missing, or the value is NaN), shown (a value without a\n"
    "  claim of its own, never counted as a pass). One quantity checked against two different\n"
    "  bounds of one kind in two rows is an error of the claims files. Format of claims files:\n"
    "  studies/paper/README.md.\n"
    "  -r, --results DIR   where the results files are (default results/paper)\n"
    "  -o, --output DIR    where REPORT.md and claims.csv go (default: the results directory)\n"
    "  -f, --figures REL   figure directory as the report links it (default figures)\n"
    "  -s, --strict        exit status 1 if any row fails\n"
    "  -h, --help          this text\n"
    "  Exit status: 0 the report is written, 1 with --strict and a failed row, 2 a bad or\n"
    "  inconsistent claims file or an output that cannot be written (the previous report is then\n"
    "  left as it was).\n";

static const char prog[] = "nhbench report";

typedef struct {
  const char *results, *output, *figures;
  int strict;
  int nclaims;
  char **claims;
} report_args;

static int parse_report_args(int argc, char **argv, report_args *a) {
  static const struct option longopts[] = {{"results", required_argument, NULL, 'r'},
                                           {"output", required_argument, NULL, 'o'},
                                           {"figures", required_argument, NULL, 'f'},
                                           {"strict", no_argument, NULL, 's'},
                                           {"help", no_argument, NULL, 'h'},
                                           {0}};
  int c;
  *a = (report_args){.results = "results/paper", .figures = "figures"};
  while ((c = getopt_long(argc, argv, ":r:o:f:sh", longopts, NULL)) != -1) {
    if (c == 'h') return fputs(usage, stdout), -1;
    if (c == 'r') a->results = optarg;
    else if (c == 'o') a->output = optarg;
    else if (c == 'f') a->figures = optarg;
    else if (c == 's') a->strict = 1;
    else return nh_cli_bad_option(prog, usage, c, argv);
  }
  if (optind >= argc) return fprintf(stderr, "%s: no claims file given\n%s", prog, usage), NH_EXIT_USAGE;
  if (!a->output) a->output = a->results;
  a->nclaims = argc - optind;
  a->claims = argv + optind;
  return 0;
}

/* Writes DIR/NAME through DIR/NAME.tmp-PID and a rename: a failure leaves the old file. */
static int write_atomically(const char *dir, const char *name, const nh_claims *c, int n, const report_args *a) {
  char path[NH_TEXT_PATH], tmp[NH_TEXT_PATH + NH_TEXT_NAME];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  snprintf(tmp, sizeof tmp, "%s.tmp-%ld", path, (long)getpid());
  /* Created, never followed: a link planted at the temporary's name is removed, not written through. */
  const int fd = unlink(tmp) == 0 || errno == ENOENT ? open(tmp, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW, 0644) : -1;
  FILE *out = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (!out) { /* named by the report's path, not the temporary's */
    if (errno == ENOENT) fprintf(stderr, "%s: cannot write %s: there is no directory %s\n", prog, path, dir);
    else fprintf(stderr, "%s: cannot write %s: %s\n", prog, path, strerror(errno));
    if (fd >= 0) close(fd), remove(tmp);
    return -1;
  }
  if (strcmp(name, "claims.csv") == 0) nh_claims_write_csv(out, c, n, 1);
  else nh_claims_write_markdown(out, c, n, a->results, a->figures);
  if (ferror(out) | fclose(out) || rename(tmp, path)) {
    remove(tmp);
    return fprintf(stderr, "%s: cannot write %s\n", prog, path), -1;
  }
  return 0;
}

int nh_cli_report(int argc, char **argv) {
  report_args a;
  int rc = parse_report_args(argc, argv, &a);
  if (rc) return rc < 0 ? NH_EXIT_OK : rc;
  nh_claims *c = calloc((size_t)a.nclaims, sizeof *c);
  char err[NH_TEXT_MESSAGE];
  int loaded = 0;
  if (!c) rc = nh_cli_out_of_memory(prog);
  for (; !rc && loaded < a.nclaims; loaded++)
    if (nh_claims_load(a.claims[loaded], &c[loaded], err, sizeof err) < 0) {
      fprintf(stderr, "%s: %s\n", prog, err);
      rc = NH_EXIT_USAGE;
      break;
    }
  if (!rc && nh_claims_check_consistent(c, a.nclaims, err, sizeof err) < 0) {
    fprintf(stderr, "%s: %s\n", prog, err);
    rc = NH_EXIT_USAGE;
  }
  int counts[NH_VERDICTS] = {0};
  for (int f = 0; !rc && f < a.nclaims; f++) {
    nh_claims_evaluate(&c[f], a.results);
    for (int i = 0; i < c[f].nitems; i++)
      for (int j = 0; j < c[f].items[i].nrows; j++) counts[c[f].items[i].rows[j].verdict]++;
  }
  if (!rc && (write_atomically(a.output, "claims.csv", c, a.nclaims, &a) < 0 ||
              write_atomically(a.output, "REPORT.md", c, a.nclaims, &a) < 0))
    rc = NH_EXIT_USAGE;
  if (!rc) {
    fprintf(stderr, "%s: %d pass, %d fail, %d not-verified, %d shown -> %s/REPORT.md, %s/claims.csv\n", prog,
            counts[NH_PASS], counts[NH_FAIL], counts[NH_NOT_VERIFIED], counts[NH_SHOWN], a.output, a.output);
    if (a.strict && counts[NH_FAIL]) rc = NH_EXIT_FAILED;
  }
  for (int f = 0; f < loaded; f++) nh_claims_free(&c[f]);
  free(c);
  return rc;
}
