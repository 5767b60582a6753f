/* nhbench run SPEC.cfg [--output OUT.h5] [--threads N] [--set PATH=VALUE ...] [--check-orders] */
#define _POSIX_C_SOURCE 200809L /* mkdir, access */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <omp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include "bench/cli/cli.h"
#include "core/alloc.h"
#include "core/text.h"
#include "results/results.h"
#include "studies/checkpoint.h"
#include "studies/study.h"


static const char usage[] =
    "usage: nhbench run SPEC.cfg [--output OUT.h5] [--threads N] [--set PATH=VALUE ...] [--check-orders]\n"
    "                          [--resume]\n"
    "  SPEC.cfg                the study spec; - reads it from standard input\n"
    "  -o, --output OUT.h5     results file (default: results/<spec name>.h5, results/stdin.h5 for -);\n"
    "                          its directory is created as needed; written to a temporary name and\n"
    "                          renamed when complete\n"
    "  -j, --threads N         OpenMP threads (default: OMP_NUM_THREADS or all cores); results do not\n"
    "                          depend on it\n"
    "  -s, --set PATH=VALUE    override a spec setting, e.g. --set T=10000 --set ensemble.count=100;\n"
    "                          lists as --set 'h=[0.1,0.05]' or --set 'methods=[\"rk4\",\"js_a\"]'; h replaces\n"
    "                          the spec's h0 and halvings, and h0 or halvings its h\n"
    "  -c, --check-orders      convergence studies: print observed against expected orders and exit 1\n"
    "                          if any differs by more than the spec's order_tolerance (default 0.15)\n"
    "  -r, --resume            continue a run that was killed or failed, from the journal\n"
    "                          OUT.h5.journal of its finished tasks (same spec and included files,\n"
    "                          --set, nhbench version and build); the file is the same as an\n"
    "                          uninterrupted run's\n"
    "  -h, --help              this text\n"
    "One run writes an output at a time: another run on it (OUT.h5.lock held) exits 2 naming its pid.\n"
    "Exit status: 0 success, 1 a failed run or order check, 2 bad usage or a bad spec.\n";

static const char prog[] = "nhbench run";

/* The command line of run. */
typedef struct {
  const char *spec, *out;
  const char **overrides;
  int noverrides, check_orders, resume, help;
} run_args;

/* Parses argv into a (overrides: free a->overrides); 0, or an exit status. */
static int parse_run_args(int argc, char **argv, run_args *a) {
  static const struct option longopts[] = {
      {"output", required_argument, NULL, 'o'}, {"threads", required_argument, NULL, 'j'},
      {"set", required_argument, NULL, 's'},    {"check-orders", no_argument, NULL, 'c'},
      {"resume", no_argument, NULL, 'r'},       {"help", no_argument, NULL, 'h'},
      {0}};
  memset(a, 0, sizeof *a);
  if (!(a->overrides = nh_calloc_array((size_t)argc, sizeof *a->overrides)))
    return nh_cli_out_of_memory(prog);
  int c;
  while ((c = getopt_long(argc, argv, ":o:j:s:crh", longopts, NULL)) != -1) {
    switch (c) {
    case 'o': a->out = optarg; break;
    case 's': a->overrides[a->noverrides++] = optarg; break;
    case 'c': a->check_orders = 1; break;
    case 'r': a->resume = 1; break;
    case 'h': a->help = 1; return 0;
    case 'j': {
      char *end;
      long t = strtol(optarg, &end, 10);
      if (!*optarg || *end || t < 1 || t > 1024) {
        fprintf(stderr, "%s: --threads '%s' is not a whole number in 1..1024\n", prog, optarg);
        return NH_EXIT_USAGE;
      }
      omp_set_num_threads((int)t);
      break;
    }
    default: return nh_cli_bad_option(prog, usage, c, argv);
    }
  }
  if (optind < argc) a->spec = argv[optind++];
  if (optind < argc) return nh_cli_bad_argument(prog, usage, argv[optind]);
  if (!a->spec) {
    fprintf(stderr, "%s: no SPEC.cfg given\n%s", prog, usage);
    return NH_EXIT_USAGE;
  }
  return 0;
}

/* results/<spec name>.h5; results/stdin.h5 for a spec read from standard input ("-"). */
static char *default_output(const char *spec) {
  if (strcmp(spec, "-") == 0) spec = "stdin";
  const char *base = strrchr(spec, '/');
  base = base ? base + 1 : spec;
  size_t len = strcspn(base, ".");
  char *out = malloc(len + 16);
  if (out) snprintf(out, len + 16, "results/%.*s.h5", (int)len, base);
  return out;
}

static char *join_args(int argc, char **argv) {
  size_t len = 16;
  for (int i = 0; i < argc; i++) len += strlen(argv[i]) + 1;
  char *s = malloc(len);
  if (!s) return NULL;
  strcpy(s, "nhbench");
  for (int i = 0; i < argc; i++) strcat(strcat(s, " "), argv[i]);
  return s;
}

/* --check-orders: observed against expected orders; 1 if any is off by more than the tolerance. */
static int report_orders(const nh_study *st, const nh_convergence_result *r) {
  int failed = 0;
  printf("%-6s %8s %8s %9s  %s\n", "check", "expected", "observed", "stderr", "method");
  for (int m = 0; m < st->nmethods; m++) {
    printf("%-6s %8d %8.3f %9.2g  %s%s%s\n", r->order_ok[m] ? "ok" : "FAIL", st->order_expected[m], r->order[m],
           r->order_stderr[m], st->method_names[m], st->order_reason[m][0] ? "  -- " : "", st->order_reason[m]);
    failed += !r->order_ok[m];
  }
  if (failed) fprintf(stderr, "nhbench: %d of %d observed orders off by more than %g\n", failed, st->nmethods,
                      st->order_tolerance);
  return failed ? 1 : 0;
}

/* Whether this process writes the file: always, but under MPI only rank 0 (the others run tasks). */
static int writer(void) { return nh_study_rank() == 0; }

/* Runs a study of any kind (studies/kinds.h) and writes its file: 0, or 1 with a message in err;
 * with --check-orders, a convergence study's orders are checked (*orders_failed). */
static int run_and_write(const run_args *a, const nh_study *st, const char *path, const char *command,
                         int *orders_failed, char *err, size_t len) {
  const nh_study_kind_type *kind = nh_study_kinds[st->kind];
  void *r = malloc(kind->result_size);
  if (!r) return snprintf(err, len, "out of memory for the %s result", kind->name), 1;
  const int rc = kind->run(st, r, err, len) < 0 || (writer() && nh_write_study(path, st, r, command, err, len) < 0);
  *orders_failed = rc == 0 && writer() && a->check_orders && st->kind == NH_STUDY_CONVERGENCE && report_orders(st, r);
  kind->free_result(r);
  free(r);
  return rc ? 1 : 0;
}

/* The directory of the file path into dir ("." for a bare name, "/" for a file at the root);
 * returns the file's own name, within path. */
static const char *split_path(const char *path, char *dir, size_t len) {
  snprintf(dir, len, "%s", path);
  char *slash = strrchr(dir, '/');
  if (slash == dir) slash[1] = '\0';
  else if (slash) *slash = '\0';
  else snprintf(dir, len, ".");
  const char *base = strrchr(path, '/');
  return base ? base + 1 : path;
}

/* Pre-flight, before any computing: the output's directory exists (created as needed, like
 * mkdir -p), a file can be created there (a probe, removed at once: access() says yes on /proc
 * and for root everywhere), and the output is not a directory. 0, or -1 with a message naming
 * the path and the OS's reason: bad input, exit 2, nothing computed. */
static int prepare_output(const char *path, const nh_study *st) {
  char dir[NH_TEXT_PATH];
  struct stat sb, spec_sb;
  const size_t len = strlen(path);
  if (len == 0 || path[len - 1] == '/') {
    fprintf(stderr, "nhbench: the output '%s' %s; give a file name, e.g. results/RESULTS.h5\n", path,
            len ? "ends in '/', a directory's name" : "is empty");
    return -1;
  }
  /* The results replace the output by a rename, which would replace a link, not its target
   * (-o /dev/stdout, a link into /proc). */
  if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode)) {
    fprintf(stderr, "nhbench: the output %s is a symbolic link, which the results would replace; give the path of "
            "the file itself\n", path);
    return -1;
  }
  for (int i = 0; i < st->nspec_inputs; i++) {
    const char *input = st->spec_inputs[i];
    if (strcmp(input, "-") != 0 && stat(path, &sb) == 0 && stat(input, &spec_sb) == 0 &&
        sb.st_dev == spec_sb.st_dev && sb.st_ino == spec_sb.st_ino) {
      if (i) fprintf(stderr, "nhbench: the output %s is %s, a file the spec includes; the results would replace it\n",
                     path, input);
      else fprintf(stderr, "nhbench: the output %s is the spec itself; the results would replace it\n", path);
      return -1;
    }
  }
  if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode)) {
    fprintf(stderr, "nhbench: the output %s is a directory; give a file name, e.g. %s/RESULTS.h5\n", path, path);
    return -1;
  }
  /* The results replace the output by a rename: a device or pipe there (/dev/null) would be replaced. */
  if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    fprintf(stderr, "nhbench: the output %s is not a regular file (a device, pipe or socket); give a file name\n",
            path);
    return -1;
  }
  split_path(path, dir, sizeof dir);
  for (char *p = dir + 1; *p; p++) {
    if (*p != '/') continue;
    *p = '\0';
    if (mkdir(dir, 0777) != 0 && errno != EEXIST) break;
    *p = '/';
  }
  if (mkdir(dir, 0777) != 0 && errno != EEXIST) {
    fprintf(stderr, "nhbench: cannot create the output directory %s: %s\n", dir, strerror(errno));
    return -1;
  }
  char probe[NH_TEXT_PATH + NH_TEXT_NAME];
  snprintf(probe, sizeof probe, "%s.probe-XXXXXX", path);
  int fd = mkstemp(probe);
  if (fd < 0) {
    fprintf(stderr, "nhbench: cannot create files in the output directory %s: %s\n", dir, strerror(errno));
    return -1;
  }
  close(fd);
  unlink(probe);
  return 0;
}

/* Pre-flight: room for the sampled results (nh_study_check_room), from the free space where the
 * output goes and this machine's memory; 0, or -1 with a message. */
static int check_room(const nh_study *st, const char *path) {
  char dir[NH_TEXT_PATH], err[NH_TEXT_MESSAGE];
  split_path(path, dir, sizeof dir);
  struct statvfs fs;
  const double disk = statvfs(dir, &fs) == 0 ? (double)fs.f_bavail * (double)fs.f_frsize : 0;
  const double memory = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
  if (nh_study_check_room(st, disk, memory, err, sizeof err) >= 0) return 0;
  fprintf(stderr, "nhbench: %s\n", err);
  return -1;
}

/* Linux's largest pid (PID_MAX_LIMIT): a larger number was never a pid of this program's. */
#define NH_PID_LIMIT 4194304L

/* Temporary files OUT.h5.tmp-PID of runs that no longer exist (killed): removed, with a note. Only
 * what this program could have left: PID all digits and a possible pid whose process is gone, a
 * regular file (not a link), an HDF5 file. Anything else by such a name is another's and stays. */
static void remove_stale_temporaries(const char *path) {
  char dir[NH_TEXT_PATH], prefix[NH_TEXT_PATH];
  const char *base = split_path(path, dir, sizeof dir);
  snprintf(prefix, sizeof prefix, "%s.tmp-", base);
  DIR *d = opendir(dir);
  for (struct dirent *e; d && (e = readdir(d));) {
    if (strncmp(e->d_name, prefix, strlen(prefix)) != 0) continue;
    const char *digits = e->d_name + strlen(prefix);
    if (!*digits || strspn(digits, "0123456789") != strlen(digits) || strlen(digits) > 7) continue;
    const long pid = strtol(digits, NULL, 10);
    if (pid <= 0 || pid > NH_PID_LIMIT || kill((pid_t)pid, 0) == 0 || errno != ESRCH) continue;
    char stale[NH_TEXT_PATH + NH_TEXT_NAME];
    struct stat sb;
    snprintf(stale, sizeof stale, "%s/%s", dir, e->d_name);
    if (lstat(stale, &sb) != 0 || !S_ISREG(sb.st_mode) || !nh_h5_is_hdf5(stale)) continue;
    if (unlink(stale) == 0) fprintf(stderr, "nhbench: removed %s, left by a run that was killed\n", stale);
  }
  if (d) closedir(d);
}

/* One writer per output (README "Security"): a run holds an advisory lock (fcntl, released by the
 * kernel when the process ends, however it ends) on OUT.h5.lock from before its journal is opened
 * until its results are in place, so that two runs on one output never share a journal or mix
 * their rows. The file holds the holder's pid, for the message of a run that finds it locked. */
typedef struct {
  int fd;
  char path[NH_TEXT_PATH + NH_TEXT_NAME];
} output_lock;

/* The pid of the run holding the lock on fd: the kernel's answer, else the pid the holder wrote. */
static long lock_holder(int fd) {
  struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
  if (fcntl(fd, F_GETLK, &fl) == 0 && fl.l_type != F_UNLCK && fl.l_pid > 0) return (long)fl.l_pid;
  char text[32] = "";
  const ssize_t got = pread(fd, text, sizeof text - 1, 0);
  return got > 0 ? strtol(text, NULL, 10) : 0;
}

/* Takes the lock of the output path into l: 0, or -1 with a message (held by another run: its pid;
 * or the OS's reason). A lock file removed by the run that held it, between our open and our
 * lock, protects nothing: the lock counts only on the file that still has the name. */
static int lock_output(const char *path, output_lock *l) {
  snprintf(l->path, sizeof l->path, "%s.lock", path);
  for (int attempt = 0; attempt < 1000; attempt++) {
    l->fd = open(l->path, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0644);
    struct stat held, named;
    if (l->fd < 0 || fstat(l->fd, &held) != 0 || !S_ISREG(held.st_mode)) {
      fprintf(stderr, "nhbench: cannot use the lock file %s: %s\n", l->path,
              l->fd < 0 ? strerror(errno) : "not a regular file");
      if (l->fd >= 0) close(l->fd);
      l->fd = -1;
      return -1;
    }
    struct flock fl = {.l_type = F_WRLCK, .l_whence = SEEK_SET};
    if (fcntl(l->fd, F_SETLK, &fl) != 0) {
      const int busy = errno == EACCES || errno == EAGAIN;
      const long pid = busy ? lock_holder(l->fd) : 0;
      if (busy)
        fprintf(stderr, "nhbench: %s is being written by another run (pid %ld, lock %s); wait for it to finish, "
                "or give another --output\n", path, pid, l->path);
      else /* a file system without locks (ENOLCK): the run goes on, unguarded, and says so */
        fprintf(stderr, "nhbench: note: cannot lock %s (%s): nothing keeps another run off %s\n", l->path,
                strerror(errno), path);
      close(l->fd);
      l->fd = -1;
      return busy ? -1 : 0;
    }
    if (stat(l->path, &named) == 0 && named.st_dev == held.st_dev && named.st_ino == held.st_ino) {
      char pid[32];
      const int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
      if (ftruncate(l->fd, 0) != 0 || pwrite(l->fd, pid, (size_t)n, 0) != n)
        fprintf(stderr, "nhbench: note: cannot write the pid into %s: %s\n", l->path, strerror(errno));
      return 0;
    }
    close(l->fd); /* removed or replaced after we opened it: try the file the name has now */
    l->fd = -1;
  }
  fprintf(stderr, "nhbench: cannot lock %s: it keeps being replaced\n", l->path);
  return -1;
}

/* Releases the lock: the file is removed while still held, so that a run waiting on it finds it
 * gone (lock_output) rather than locking a file nobody else sees. */
static void unlock_output(output_lock *l) {
  if (l->fd < 0) return;
  unlink(l->path);
  close(l->fd);
  l->fd = -1;
}

/* What a resumed run must share with the run whose journal it continues, everything that
 * determines its results: the spec's text with its includes expanded, the overrides, nhbench's
 * version and the compiler and flags it was built with. NULL if out of memory. */
static char *journal_key(const nh_study *st) {
  const char *version = nh_results_version(), *compiler = nh_results_compiler();
  const size_t klen = strlen(st->spec_text) + strlen(st->overrides) + strlen(version) + strlen(compiler) + 64;
  char *key = malloc(klen);
  if (key)
    snprintf(key, klen, "%s\n--set %s\nnhbench %s\nbuilt with %s\n", st->spec_text, st->overrides, version, compiler);
  return key;
}

/* The checkpoint journal of a run, OUT.h5.journal: its path and key (journal_key) into st.
 * --resume without a journal, or with another run's, is bad usage (-1 with a message);
 * NH_CHECKPOINT_NO_MEMORY if out of memory reading the journal's key. */
static int setup_journal(const run_args *a, const char *path, nh_study *st, char *journal, size_t len, char *key) {
  snprintf(journal, len, "%s.journal", path);
  remove_stale_temporaries(path);
  struct stat sb;
  if (lstat(journal, &sb) == 0 && !S_ISREG(sb.st_mode)) {
    fprintf(stderr, "nhbench: %s is %s, not a journal nhbench made; remove it\n", journal,
            S_ISLNK(sb.st_mode) ? "a symbolic link" : "not a regular file (a directory, FIFO, device or socket)");
    return -1;
  }
  if (a->resume && access(journal, F_OK) != 0) {
    fprintf(stderr, "nhbench: --resume: no journal %s of an interrupted run (%s)\n", journal, strerror(errno));
    return -1;
  }
  if (!a->resume && access(journal, F_OK) == 0)
    fprintf(stderr,
            "nhbench: note: starting over; the journal %s of an earlier run is replaced (--resume continues it)\n",
            journal);
  const int same = a->resume ? nh_checkpoint_matches(journal, key) : 1;
  if (same == NH_CHECKPOINT_NO_MEMORY) return NH_CHECKPOINT_NO_MEMORY;
  if (same != 1) {
    fprintf(stderr, "nhbench: --resume: %s %s; remove it, or run without --resume to start over\n", journal,
            same == 0 ? "is the journal of another run (the spec or a file it includes, --set, nhbench's version or "
                        "its build differ)" : "is not a journal");
    return -1;
  }
  st->checkpoint = journal, st->checkpoint_key = key, st->resume = a->resume;
  return 0;
}

enum { USABLE, UNUSABLE, NO_MEMORY };

/* Whether the writer (rank 0) can write the output: its room checked, its lock taken (into lock),
 * its journal checked, key made. */
static int output_usable(const run_args *a, const char *path, nh_study *st, char *journal, size_t len, char *key,
                         output_lock *lock) {
  if (!writer()) return USABLE;
  if (!key) return NO_MEMORY;
  if (prepare_output(path, st) < 0 || check_room(st, path) < 0 || lock_output(path, lock) < 0) return UNUSABLE;
  const int rc = setup_journal(a, path, st, journal, len, key);
  if (rc < 0) unlock_output(lock);
  return rc == NH_CHECKPOINT_NO_MEMORY ? NO_MEMORY : rc < 0 ? UNUSABLE : USABLE;
}

/* Loads, runs and writes the study of a: 0, 1 (a failed run or order check) or 2 (a bad spec). */
static int run_study(const run_args *a, const char *path, const char *command) {
  char err[NH_TEXT_LONG] = "";
  nh_study st;
  if (nh_study_load(a->spec, a->overrides, a->noverrides, &st, err, sizeof err) < 0) {
    fprintf(stderr, "nhbench: %s\n", err);
    nh_study_free(&st);
    return NH_EXIT_USAGE;
  }
  /* The output, the room for it and the journal are rank 0's to check (its file system) and its
   * answer every rank's. */
  char journal[NH_TEXT_PATH + NH_TEXT_NAME], *key = writer() ? journal_key(&st) : NULL;
  output_lock lock = {.fd = -1};
  const int agreed = nh_ranks_agree(output_usable(a, path, &st, journal, sizeof journal, key, &lock));
  if (agreed != USABLE) {
    unlock_output(&lock);
    free(key);
    nh_study_free(&st);
    return agreed == NO_MEMORY ? nh_cli_out_of_memory(prog) : NH_EXIT_USAGE;
  }
  int orders_failed = 0;
  fprintf(stderr, "nhbench: %s study of %s, %d methods, %d threads", nh_study_kind_name(st.kind), st.sys.type->name,
          st.nmethods, omp_get_max_threads());
  if (nh_study_ranks() > 1) fprintf(stderr, " on each of %d MPI ranks (rank 0 collects)", nh_study_ranks());
  fprintf(stderr, " -> %s\n", path);
  const int rc = run_and_write(a, &st, path, command, &orders_failed, err, sizeof err);
  if (rc) fprintf(stderr, "nhbench: %s\n", err);
  else fprintf(stderr, "nhbench: wrote %s\n", path);
  /* The journal goes once its results are in the file; a failed run keeps it for --resume. */
  if (st.checkpoint && rc == 0) unlink(journal);
  else if (st.checkpoint && access(journal, F_OK) == 0)
    fprintf(stderr, "nhbench: the finished tasks are kept in %s: rerun with --resume to continue\n", journal);
  unlock_output(&lock);
  free(key);
  nh_study_free(&st);
  if (rc) {
    /* After a failed write (full disk, ulimit -f) HDF5 1.10 keeps the file whose close failed in
     * its tables and crashes closing it again at exit; the temporary file is already removed and
     * everything said, so leave without the library's exit handler (under MPI, once every rank
     * has the exit status). */
    fflush(NULL);
    _exit(nh_cli_mpi_end(NH_EXIT_FAILED));
  }
  return orders_failed ? NH_EXIT_FAILED : NH_EXIT_OK;
}

int nh_cli_run(int argc, char **argv) {
  run_args a;
  char *command = join_args(argc, argv); /* before getopt_long permutes argv */
  if (!command) return nh_cli_out_of_memory(prog);
  int rc = parse_run_args(argc, argv, &a);
  if (rc == 0 && a.help) fputs(usage, stdout);
  if (rc == 0 && !a.help) {
    char *out = a.out ? NULL : default_output(a.spec);
    rc = a.out || out ? run_study(&a, a.out ? a.out : out, command) : nh_cli_out_of_memory(prog);
    free(out);
  }
  free(command);
  free(a.overrides);
  return rc;
}
