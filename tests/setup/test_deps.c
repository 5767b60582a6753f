/* scripts/deps.sh, what every make target runs first, on pretend machines (tests/setup/
 * mock_machine.sh: stand-ins for every command it looks for or calls, and nothing else on PATH):
 * it installs only what is missing and only where it can (apt-get as root or with sudo), puts
 * Debian's hdf5.pc alternative back as it found it, and anywhere else stops with exit 2, the
 * packages for apt, dnf, Homebrew and conda-forge and the CMake line to build with. */
#define _POSIX_C_SOURCE 200809L /* mkdtemp */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/helpers.h"

static char dir[64], out[1 << 14];

/* A pretend machine: MISSING absent, the user UID, apt-get (1 working, 2 failing, 0 none), sudo,
 * the hdf5.pc alternative ALT ("" unmanaged). */
static void machine(const char *missing, int uid, int apt, int sudo, const char *alt) {
  snprintf(dir, sizeof dir, "/tmp/nhbench-deps-XXXXXX");
  cr_assert(mkdtemp(dir), "mkdtemp");
  char cmd[512];
  snprintf(cmd, sizeof cmd, "sh " NHBENCH_SOURCE_DIR "/tests/setup/mock_machine.sh %s '%s' %d %d %d '%s' 2>&1", dir,
           missing, uid, apt, sudo, alt);
  cr_assert_eq(test_run_command(cmd, out, sizeof out), 0, "mock_machine.sh: %s", out);
}

/* scripts/deps.sh PARTS on the pretend machine (ENV: extra variables); its exit status, its
 * output (stdout and stderr) in out. */
static int deps(const char *env, const char *parts) {
  char cmd[512];
  snprintf(cmd, sizeof cmd, "%s PATH=%s/bin /bin/bash " NHBENCH_SOURCE_DIR "/scripts/deps.sh %s 2>&1", env, dir, parts);
  return test_run_command(cmd, out, sizeof out);
}

/* The file DIR/NAME, "" if absent. */
static const char *file(const char *name) {
  static char text[4096];
  char path[128];
  snprintf(path, sizeof path, "%s/%s", dir, name);
  FILE *f = fopen(path, "r");
  size_t n = f ? fread(text, 1, sizeof text - 1, f) : 0;
  text[n] = '\0';
  if (f) fclose(f);
  return text;
}

static void leave(void) {
  char cmd[128];
  snprintf(cmd, sizeof cmd, "rm -rf %s", dir);
  cr_expect_eq(system(cmd), 0);
}

#define expect_has(text, needle) cr_expect(strstr((text), (needle)) != NULL, "lacks '%s':\n%s", (needle), (text))
#define expect_lacks(text, needle) cr_expect(strstr((text), (needle)) == NULL, "has '%s':\n%s", (needle), (text))

Test(deps, everything_found_is_silent_and_installs_nothing, .fini = leave) {
  machine("", 0, 1, 0, "/x/hdf5-serial.pc");
  cr_expect_eq(deps("", "tool plots tests sundials mpi coverage fuzz"), 0, "%s", out);
  cr_expect_str_empty(out);
  cr_expect_str_empty(file("apt.log"));
}

/* A user without root or sudo: nothing installed; the missing things named with their part, the
 * packages of those only for each manager, and the CMake line for the parts asked for (the tests'
 * Criterion: no -DBUILD_TESTING=OFF). */
Test(deps, without_root_or_sudo_it_lists_the_packages, .fini = leave) {
  machine("gsl criterion", 1000, 1, 0, "");
  cr_expect_eq(deps("", "tool plots tests"), 2, "%s", out);
  expect_has(out, "deps: missing on this machine (nothing installed: not root, and no sudo without a password):\n"
                  "  - GSL (for tool)\n  - Criterion (for tests)\n");
  expect_has(out, "  apt:   sudo apt-get install libgsl-dev libcriterion-dev\n");
  expect_has(out, "  dnf:   sudo dnf install gsl-devel criterion-devel\n");
  expect_has(out, "  brew:  brew install gsl criterion\n");
  expect_has(out, "  conda: conda install -c conda-forge gsl (not packaged there: Criterion; build it from source)\n");
  expect_has(out, "  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release && cmake --build build -j\n");
  expect_lacks(out, "hdf5");
  cr_expect_str_empty(file("apt.log"), "apt-get ran");
}

/* No apt-get (another distribution): the tool's parts only, the CMake line without the tests and
 * with the optional parts asked for; a package shared by two things listed once. */
Test(deps, without_apt_get_the_cmake_line_follows_the_parts, .fini = leave) {
  machine("hdf5 h5dump sundials mpi", 0, 0, 0, "");
  cr_expect_eq(deps("", "tool sundials mpi"), 2, "%s", out);
  expect_has(out, "(nothing installed: no apt-get on this machine)");
  expect_has(out, "  - HDF5 (C and HL) (for tool)\n  - SUNDIALS (IDA, CVODE) (for sundials)\n  - OpenMPI (for mpi)\n");
  expect_lacks(out, "h5dump");
  expect_has(out, "  apt:   sudo apt-get install libhdf5-dev libsundials-dev libopenmpi-dev openmpi-bin\n");
  expect_has(out, "  dnf:   sudo dnf install hdf5-devel sundials-devel openmpi-devel\n");
  expect_has(out, "-DCMAKE_BUILD_TYPE=Release -DBUILD_TESTING=OFF -DNHBENCH_SUNDIALS=ON -DNHBENCH_MPI=ON && cmake");
  cr_expect_eq(deps("", "tool tests"), 2, "%s", out);
  expect_has(out, "  - HDF5 tools (h5dump) (for tests)\n");
  expect_has(out, "  dnf:   sudo dnf install hdf5-devel hdf5\n");
  expect_has(out, "  brew:  brew install hdf5\n"); /* the library and h5dump: one formula, listed once */
}

/* As root with apt-get: the tool's libraries in a first install, the optional part's in a second;
 * libsundials-dev's switch of hdf5.pc undone; nothing left to list. */
Test(deps, as_root_it_installs_what_is_missing_and_keeps_hdf5_pc, .fini = leave) {
  machine("hdf5 cmake sundials", 0, 1, 0, "/x/hdf5-serial.pc");
  cr_expect_eq(deps("", "tool sundials"), 0, "%s", out);
  const char *log = file("apt.log");
  const char *first = strstr(log, "install -y -qq --no-install-recommends cmake libhdf5-dev\n");
  const char *second = strstr(log, "install -y -qq --no-install-recommends libsundials-dev\n");
  cr_expect(first && second && first < second, "two installs, the tool's first:\n%s", log);
  expect_has(log, "update-alternatives --set hdf5.pc /x/hdf5-serial.pc\n");
  cr_expect_str_eq(file("alt"), "/x/hdf5-serial.pc\n");
  expect_has(out, "deps: hdf5.pc put back to /x/hdf5-serial.pc");
  expect_lacks(out, "missing");
  expect_lacks(log, "sudo");
}

/* An alternative that the install leaves alone is not set again (the value stays auto-managed). */
Test(deps, an_unswitched_hdf5_pc_is_not_touched, .fini = leave) {
  machine("gnuplot", 0, 1, 0, "/x/hdf5-mpi.pc");
  cr_expect_eq(deps("", "tool plots"), 0, "%s", out);
  expect_has(file("apt.log"), "--no-install-recommends gnuplot-nox\n");
  expect_lacks(file("apt.log"), "update-alternatives");
  expect_lacks(out, "put back");
}

/* A user with sudo (no password): apt-get through sudo. */
Test(deps, with_sudo_it_installs_through_sudo, .fini = leave) {
  machine("gnuplot mpi", 1000, 1, 1, "");
  cr_expect_eq(deps("", "tool plots mpi"), 0, "%s", out);
  expect_has(file("apt.log"), "sudo apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "
                              "gnuplot-nox libopenmpi-dev openmpi-bin\n");
}

/* NHBENCH_NO_INSTALL=1 as root: nothing installed, the list given. */
Test(deps, no_install_asked_for_lists_only, .fini = leave) {
  machine("libconfig", 0, 1, 0, "");
  cr_expect_eq(deps("NHBENCH_NO_INSTALL=1", "tool"), 2, "%s", out);
  expect_has(out, "(nothing installed: NHBENCH_NO_INSTALL=1)");
  expect_has(out, "  apt:   sudo apt-get install libconfig-dev\n");
  cr_expect_str_empty(file("apt.log"));
}

/* apt-get that fails: the list, exit 2, never a silent success. */
Test(deps, a_failed_install_still_lists, .fini = leave) {
  machine("gnuplot", 0, 2, 0, "");
  cr_expect_eq(deps("", "tool plots"), 2, "%s", out);
  expect_has(out, "deps: missing on this machine (apt-get did not install them):\n  - gnuplot (for plots)\n");
}

/* Only the parts asked for: a missing Criterion is no concern of the tool alone. */
Test(deps, parts_not_asked_for_are_not_looked_for, .fini = leave) {
  machine("criterion gcovr fuzz mpi sundials", 1000, 0, 0, "");
  cr_expect_eq(deps("", "tool plots"), 0, "%s", out);
  cr_expect_str_empty(out);
  cr_expect_eq(deps("", "coverage"), 2, "%s", out);
  expect_has(out, "  - gcovr (for coverage)\n");
  expect_lacks(out, "Criterion");
}

/* README.md's table of packages is scripts/deps.sh's own (scripts/deps.sh --markdown). */
Test(deps, readme_lists_the_packages_deps_installs) {
  char cmd[256];
  snprintf(cmd, sizeof cmd, "/bin/bash " NHBENCH_SOURCE_DIR "/scripts/deps.sh --markdown");
  cr_assert_eq(test_run_command(cmd, out, sizeof out), 0);
  cr_assert(strstr(out, "| tool | HDF5 (C and HL) | libhdf5-dev | hdf5-devel | hdf5 | hdf5 |\n"), "%s", out);
  FILE *f = fopen(NHBENCH_SOURCE_DIR "/README.md", "r");
  cr_assert(f);
  static char readme[1 << 18];
  readme[fread(readme, 1, sizeof readme - 1, f)] = '\0';
  fclose(f);
  cr_expect(strstr(readme, out), "README.md's table differs from scripts/deps.sh --markdown:\n%s", out);
}
