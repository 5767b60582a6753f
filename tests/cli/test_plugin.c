/* System plugins (issue 50 item 5, systems/plugin.h) end to end, as a user makes one: `cmake
 * --install` of the build the tests run from into a temporary prefix, the chaotic particle of
 * tests/data/plugins/chaotic_plugin.c compiled outside the tree against PREFIX/include/nhbench
 * alone, and nhbench (NHBENCH_EXE) loading it by path: `nhbench check-system plugin:PATH` passes
 * every check on the right plugin, names the wrong derivative's entry on a plugin with a sign error
 * in ∇V or in ∂A/∂q, refuses another interface version, a shared object that is no plugin and a
 * missing file (exit 2); a spec with system = "plugin:PATH" (PATH relative to the spec's
 * directory) gives bit for bit the results of the built-in chaotic_particle; and check-system on
 * the other kinds of SYSTEM and on bad usage. Each test has its own temporary directory (the
 * prefix, the plugins it compiles, NHBENCH_CACHE_DIR), removed afterwards. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp, setenv */
#include <criterion/criterion.h>
#include <dirent.h>
#include <errno.h>
#include <libgen.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "systems/system.h" /* NH_SYSTEM_ABI */
#include "tests/helpers.h"

#define FIXTURE NHBENCH_SOURCE_DIR "/tests/data/plugins/chaotic_plugin.c"

static char dir[64];  /* this test's temporary directory */
static int installed; /* 1: dir/prefix holds the installed tree */

static void setup(void) {
  snprintf(dir, sizeof dir, "/tmp/nhbench-plugin-XXXXXX");
  cr_assert(mkdtemp(dir), "mkdtemp: %s", strerror(errno));
  char cache[128];
  snprintf(cache, sizeof cache, "%s/cache", dir);
  cr_assert_eq(mkdir(cache, 0700), 0);
  setenv("NHBENCH_CACHE_DIR", cache, 1); /* the systems a spec defines compile into it */
  installed = 0;
}

static void teardown(void) { test_remove_tree(dir); }

TestSuite(plugin, .init = setup, .fini = teardown, .timeout = 60);

/* ---- the installed tree and the plugins ----------------------------------------------------- */

static int have(const char *command) {
  char cmd[256], out[256];
  snprintf(cmd, sizeof cmd, "command -v %s >/dev/null 2>&1", command);
  return test_run_command(cmd, out, sizeof out) == 0;
}

/* `cmake --install BUILD --prefix DIR/prefix`, BUILD the directory of NHBENCH_EXE, once per test. */
static void install(void) {
  if (installed) return;
  if (!have("cmake")) cr_skip_test("no cmake to install nhbench with");
  char exe[] = NHBENCH_EXE, build[4096], script[4200], cmd[8192];
  static char out[1 << 14];
  snprintf(build, sizeof build, "%s", dirname(exe));
  snprintf(script, sizeof script, "%s/cmake_install.cmake", build);
  if (access(script, R_OK) != 0) cr_skip_test("%s is no CMake build directory (no cmake_install.cmake)", build);
  snprintf(cmd, sizeof cmd, "cmake --install '%s' --prefix '%s/prefix' 2>&1", build, dir);
  /* The install needs every installed target built (nhbench, nhbench_bench): `make` and `make test`
   * build them all; a build of the nhbench_tests target alone builds nhbench only if nhbench_tests
   * depends on it. */
  cr_assert_eq(test_run_command(cmd, out, sizeof out), 0, "%s failed:\n%s", cmd, out);
  installed = 1;
}

/* DIR/NAME.so: the fixture compiled against the installed headers alone (a copy of it in DIR, the
 * only -I the prefix's include/nhbench), with -D<define> unless define is NULL; warning-free. */
static const char *plugin(char *path, size_t len, const char *name, const char *define) {
  if (!have("cc")) cr_skip_test("no C compiler (cc) to build a plugin with");
  install();
  char cmd[4096], source[128];
  static char out[1 << 14];
  snprintf(source, sizeof source, "%s/chaotic_plugin.c", dir);
  if (access(source, R_OK) != 0) {
    size_t n;
    char *text = test_file_bytes(FIXTURE, &n);
    cr_assert(text, "cannot read %s", FIXTURE);
    text[n] = '\0';
    test_write_file(source, text);
    free(text);
  }
  snprintf(path, len, "%s/%s.so", dir, name);
  snprintf(cmd, sizeof cmd,
           "cd '%s' && cc -std=c11 -O2 -fPIC -shared -Wall -Wextra %s%s -I '%s/prefix/include/nhbench' "
           "chaotic_plugin.c -o '%s' 2>&1",
           dir, define ? "-D" : "", define ? define : "", dir, path);
  cr_assert_eq(test_run_command(cmd, out, sizeof out), 0, "no build against the installed headers alone:\n%s\n%s", cmd,
               out);
  cr_expect_str_empty(out, "warnings from the installed headers or the fixture:\n%s", out);
  return path;
}

/* ---- running nhbench ------------------------------------------------------------------------ */

typedef struct {
  int rc;            /* exit status, -1 if it did not exit */
  char out[1 << 17]; /* stdout */
  char err[1 << 14]; /* stderr */
} run_result;

static void slurp(const char *path, char *buf, size_t len) {
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(buf, 1, len - 1, f) : 0;
  buf[n] = '\0';
  if (f) fclose(f);
  remove(path);
}

/* `nhbench ARGS` run in directory cwd (NULL: the test process's), stdout and stderr apart. */
static run_result *nhbench_in(const char *cwd, const char *args) {
  static run_result r;
  char cmd[8192], o[128], e[128];
  snprintf(o, sizeof o, "%s/stdout", dir);
  snprintf(e, sizeof e, "%s/stderr", dir);
  char cd[256] = "";
  if (cwd) snprintf(cd, sizeof cd, "cd '%s' && ", cwd);
  const int len = snprintf(cmd, sizeof cmd, "%s%s %s >'%s' 2>'%s'", cd, NHBENCH_EXE, args, o, e);
  cr_assert(len > 0 && (size_t)len < sizeof cmd, "the command does not fit");
  const int status = system(cmd);
  r.rc = status != -1 && WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  slurp(o, r.out, sizeof r.out);
  slurp(e, r.err, sizeof r.err);
  return &r;
}

static run_result *nhbench(const char *args) { return nhbench_in(NULL, args); }

#define expect_has(text, needle) cr_expect(strstr((text), (needle)) != NULL, "lacks '%s':\n%s", (needle), (text))
#define expect_lacks(text, needle) cr_expect(strstr((text), (needle)) == NULL, "has '%s':\n%s", (needle), (text))

/* The line after the one that starts with prefix in text ("" if none). */
static const char *line_after(const char *text, const char *prefix) {
  for (const char *p = text; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL)
    if (!strncmp(p, prefix, strlen(prefix))) {
      const char *next = strchr(p, '\n');
      return next ? next + 1 : "";
    }
  return "";
}

/* ---- check-system on plugins ------------------------------------------------------------------ */

/* The right plugin, built against the installed tree alone, passes every check that applies to it
 * (the chaotic particle's 8: M, V's two derivatives, dA, its three kernels, the default state). */
Test(plugin, right_plugin_passes_every_check) {
  char so[128], args[256];
  plugin(so, sizeof so, "good", NULL);
  char header[192];
  snprintf(header, sizeof header, "%s/prefix/include/nhbench/systems/system.h", dir);
  cr_expect_eq(access(header, R_OK), 0, "no %s", header);
  snprintf(args, sizeof args, "check-system plugin:%s", so);
  const run_result *r = nhbench(args);
  cr_expect_eq(r->rc, 0, "exit %d\n%s%s", r->rc, r->out, r->err);
  expect_has(r->out, "nhbench check-system: plugin_chaotic_particle, n = 5, k = 1, at 8 points\n");
  expect_has(r->out, "nhbench check-system: all 8 checks passed\n");
  expect_lacks(r->out, "FAIL");
  cr_expect_str_empty(r->err);
}

/* A sign error in ∂V/∂z1 (grad_potential[3]): the check fails, names grad_potential and, as its
 * worst entry, component 3; constraints_jacobian is still right. */
Test(plugin, wrong_gradient_is_named) {
  char so[128], args[256];
  plugin(so, sizeof so, "wrong_grad", "WRONG_GRAD");
  snprintf(args, sizeof args, "check-system plugin:%s", so);
  const run_result *r = nhbench(args);
  cr_expect_eq(r->rc, 1, "exit %d\n%s%s", r->rc, r->out, r->err);
  expect_has(r->out, "\nFAIL  grad_potential ");
  const char *worst = line_after(r->out, "FAIL  grad_potential ");
  cr_expect(!strncmp(worst, "      worst: grad_potential[3] is ", 34), "the worst entry is not grad_potential[3]:\n%s",
            r->out);
  expect_has(r->out, "\nok    constraints_jacobian ");
  expect_has(r->out, "checks failed: grad_potential");
}

/* A sign error in ∂μ_z2/∂y2 = constraints_jacobian[0][4][2] only (the kernels, which write the
 * entry out, are right): the check fails and names that entry; grad_potential is still right. */
Test(plugin, wrong_constraint_jacobian_is_named) {
  char so[128], args[256];
  plugin(so, sizeof so, "wrong_da", "WRONG_DA");
  snprintf(args, sizeof args, "check-system plugin:%s", so);
  const run_result *r = nhbench(args);
  cr_expect_eq(r->rc, 1, "exit %d\n%s%s", r->rc, r->out, r->err);
  expect_has(r->out, "\nFAIL  constraints_jacobian ");
  const char *worst = line_after(r->out, "FAIL  constraints_jacobian ");
  cr_expect(!strncmp(worst, "      worst: constraints_jacobian[0][4][2] is -1 ", 49),
            "the worst entry is not constraints_jacobian[0][4][2] = -1:\n%s", r->out);
  expect_has(r->out, "\nok    grad_potential ");
  expect_has(r->out, "checks failed: constraints_jacobian");
}

/* A plugin built for another interface version is refused before its table is read: exit 2, the
 * two versions and what to do. */
Test(plugin, other_interface_version_is_refused) {
  char so[128], args[256], versions[128];
  plugin(so, sizeof so, "wrong_abi", "WRONG_ABI");
  snprintf(args, sizeof args, "check-system plugin:%s", so);
  const run_result *r = nhbench(args);
  cr_expect_eq(r->rc, 2, "exit %d\n%s%s", r->rc, r->out, r->err);
  snprintf(versions, sizeof versions, "interface version %d; this nhbench has version %d", NH_SYSTEM_ABI + 1,
           NH_SYSTEM_ABI);
  expect_has(r->err, versions);
  expect_has(r->err, "rebuild");
  expect_has(r->err, so);
  cr_expect_str_empty(r->out);
}

/* A shared object without NH_SYSTEM_PLUGIN: exit 2. */
Test(plugin, shared_object_without_the_macro_is_refused) {
  char so[128], args[256], message[256];
  plugin(so, sizeof so, "not_a_plugin", "NOT_A_PLUGIN");
  snprintf(args, sizeof args, "check-system plugin:%s", so);
  const run_result *r = nhbench(args);
  cr_expect_eq(r->rc, 2, "exit %d\n%s%s", r->rc, r->out, r->err);
  snprintf(message, sizeof message, "%s is not an nhbench system plugin", so);
  expect_has(r->err, message);
  cr_expect_str_empty(r->out);
}

/* A file that is not there: exit 2 with dlopen's reason. */
Test(plugin, missing_file_gives_the_loaders_reason) {
  char args[256], message[256];
  snprintf(args, sizeof args, "check-system plugin:%s/absent.so", dir);
  const run_result *r = nhbench(args);
  cr_expect_eq(r->rc, 2, "exit %d\n%s%s", r->rc, r->out, r->err);
  snprintf(message, sizeof message, "%s/absent.so does not load: ", dir);
  expect_has(r->err, message);
  expect_has(r->err, "No such file or directory");
  cr_expect_str_empty(r->out);
}

/* ---- a spec's plugin ------------------------------------------------------------------------- */

static const char ensemble_spec[] = "study = \"ensemble\";\n"
                                    "system = \"%s\";\n"
                                    "T = 4.0;\n"
                                    "h = 0.2;\n"
                                    "sample_every = 2;\n"
                                    "ensemble = { count = 3; energy = 1.535; seed = 7; };\n"
                                    "observables = [\"q\", \"v\", \"multiplier\"];\n"
                                    "methods = [\"rk4\", \"nh_newmark(beta=0.1,beta2=0.1,alpha=0.5)\"];\n";

static void write_spec(const char *path, const char *system) {
  char text[1024];
  snprintf(text, sizeof text, ensemble_spec, system);
  test_write_file(path, text);
}

/* The datasets of an ensemble that depend on the system's numbers, exported (the shortest text
 * that reads back exactly: equal text is equal bits). */
static void exported(const char *file, char *text, size_t len) {
  static const char *const datasets[] = {"q0", "E0", "dE", "observables/q", "observables/v", "observables/multiplier"};
  text[0] = '\0';
  for (size_t i = 0; i < sizeof datasets / sizeof datasets[0]; i++) {
    char args[512];
    snprintf(args, sizeof args, "export %s dataset %s", file, datasets[i]);
    const run_result *r = nhbench(args);
    cr_assert_eq(r->rc, 0, "nhbench %s: exit %d\n%s", args, r->rc, r->err);
    cr_assert_lt(strlen(text) + strlen(r->out), len, "the export of %s does not fit", file);
    strcat(text, r->out);
  }
}

/* An ensemble of the plugin (system = "plugin:good.so", the object beside the spec, run and checked
 * from another directory) is the built-in chaotic_particle's to the bit: the same C code, the same
 * sampler and points; its results file names the plugin's system. */
Test(plugin, spec_run_equals_the_built_in_system) {
  char so[128], spec[128], builtin[128], other[128], args[512];
  plugin(so, sizeof so, "good", NULL);
  snprintf(spec, sizeof spec, "%s/plugin.cfg", dir);
  snprintf(builtin, sizeof builtin, "%s/builtin.cfg", dir);
  snprintf(other, sizeof other, "%s/elsewhere", dir);
  cr_assert_eq(mkdir(other, 0700), 0);
  write_spec(spec, "plugin:good.so");
  write_spec(builtin, "chaotic_particle");

  const run_result *r = nhbench_in(other, "check-system ../plugin.cfg");
  cr_expect_eq(r->rc, 0, "exit %d\n%s%s", r->rc, r->out, r->err);
  expect_has(r->out, "nhbench check-system: plugin_chaotic_particle, n = 5, k = 1, at 8 points\n");
  r = nhbench_in(other, "run ../plugin.cfg -o plugin.h5");
  cr_assert_eq(r->rc, 0, "exit %d\n%s", r->rc, r->err);
  snprintf(args, sizeof args, "run %s -o %s/builtin.h5", builtin, dir);
  r = nhbench(args);
  cr_assert_eq(r->rc, 0, "exit %d\n%s", r->rc, r->err);

  static char with_plugin[1 << 17], with_builtin[1 << 17];
  snprintf(args, sizeof args, "%s/plugin.h5", other);
  exported(args, with_plugin, sizeof with_plugin);
  snprintf(args, sizeof args, "%s/builtin.h5", dir);
  exported(args, with_builtin, sizeof with_builtin);
  cr_expect_gt(strlen(with_plugin), 1000, "%s", with_plugin);
  cr_expect_str_eq(with_plugin, with_builtin);

  snprintf(args, sizeof args, "export %s/plugin.h5 attr system", other);
  r = nhbench(args);
  cr_expect_eq(r->rc, 0, "exit %d\n%s", r->rc, r->err);
  cr_expect_str_eq(r->out, "plugin_chaotic_particle()\n");
}

/* plugin:NAME with no '/' is a file NAME, not a library for the loader to look for on its search
 * path: `check-system plugin:good.so` in the plugin's directory and a spec in the current directory
 * naming "plugin:good.so" load ./good.so. (nh_system_plugin_open hands such a NAME to dlopen as it
 * is, and dlopen searches LD_LIBRARY_PATH and the system's library directories for a name without
 * '/', never the current directory: both fail with "cannot open shared object file", and
 * plugin:libm.so.6 would load the C maths library. Prefixing "./" to a PATH without '/' (in
 * nh_system_plugin_open, or nh_spec_plugin_system's no-slash branch and cli_check.c) fixes it.) */
Test(plugin, file_name_without_a_slash_is_a_path) {
  char so[128], spec[128];
  plugin(so, sizeof so, "good", NULL);
  const run_result *r = nhbench_in(dir, "check-system plugin:good.so");
  cr_expect_eq(r->rc, 0, "exit %d\n%s%s", r->rc, r->out, r->err);
  expect_has(r->out, "all 8 checks passed");

  snprintf(spec, sizeof spec, "%s/here.cfg", dir);
  write_spec(spec, "plugin:good.so");
  r = nhbench_in(dir, "run here.cfg -o here.h5");
  cr_expect_eq(r->rc, 0, "exit %d\n%s", r->rc, r->err);
}

/* ---- check-system on the other kinds of SYSTEM, and bad usage ------------------------------------ */

/* A registered system and a spec that defines its system (compiled into NHBENCH_CACHE_DIR). The
 * built-in chaotic particle has the plugin's 8 checks and its lane kernels' (kernels.*_lanes). */
Test(plugin, registered_and_defined_systems_pass) {
  const run_result *r = nhbench("check-system chaotic_particle");
  cr_expect_eq(r->rc, 0, "exit %d\n%s%s", r->rc, r->out, r->err);
  expect_has(r->out, "nhbench check-system: chaotic_particle, n = 5, k = 1, at 8 points\n");
  expect_has(r->out, "nhbench check-system: all 9 checks passed\n");
  expect_has(r->out, "\nok    kernels.*_lanes ");

  r = nhbench("check-system --points 3 " NHBENCH_SOURCE_DIR "/studies/examples/own_system.cfg");
  cr_expect_eq(r->rc, 0, "exit %d\n%s%s", r->rc, r->out, r->err);
  expect_has(r->out, ", n = 5, k = 1, at 3 points\n");
  expect_has(r->out, "checks passed\n");
  expect_lacks(r->out, "FAIL");
}

/* Bad usage exits 2 with the reason on stderr; --help prints the usage on stdout and exits 0. */
Test(plugin, bad_usage_and_help) {
  const run_result *r = nhbench("check-system no_such_system");
  cr_expect_eq(r->rc, 2, "exit %d\n%s%s", r->rc, r->out, r->err);
  expect_has(r->err, "'no_such_system' is no registered system");
  cr_expect_str_empty(r->out);

  r = nhbench("check-system --points 0 chaotic_particle");
  cr_expect_eq(r->rc, 2, "exit %d\n%s%s", r->rc, r->out, r->err);
  expect_has(r->err, "--points '0'");
  cr_expect_str_empty(r->out);

  char so[128], args[256];
  plugin(so, sizeof so, "good", NULL);
  snprintf(args, sizeof args, "check-system --set T=1 plugin:%s", so);
  r = nhbench(args);
  cr_expect_eq(r->rc, 2, "exit %d\n%s%s", r->rc, r->out, r->err);
  expect_has(r->err, "--set needs a SPEC.cfg");
  cr_expect_str_empty(r->out);

  r = nhbench("check-system --help");
  cr_expect_eq(r->rc, 0, "exit %d\n%s", r->rc, r->err);
  cr_expect(!strncmp(r->out, "usage: nhbench check-system ", 28), "%s", r->out);
  expect_has(r->out, "plugin:PATH");
  cr_expect_str_empty(r->err);
}
