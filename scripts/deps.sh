#!/usr/bin/env bash
# What a build of nhbench needs, looked for first and installed only where it is missing and only
# where this machine allows it: apt-get (Debian, Ubuntu) as root or with sudo. Anywhere else, or
# with NHBENCH_NO_INSTALL=1, it installs nothing and stops with the packages to install for apt,
# dnf, Homebrew and conda-forge, and the CMake line to build with once they are there.
#   scripts/deps.sh PART...
#   scripts/deps.sh --markdown     the table below, for README.md
#   PART: tool (nhbench itself), plots (gnuplot), tests (Criterion, h5dump), sundials (ida, cvode),
#         mpi (OpenMPI), coverage (gcovr), fuzz (clang's libFuzzer and OpenMP)
# The make targets call it with the parts they need (Makefile); README.md, "Install", lists the same
# packages. Debian's hdf5.pc is an alternative (serial or OpenMPI HDF5) that libsundials-dev would
# switch to the OpenMPI build: it is left as found, so other projects' `pkg-config hdf5` is unchanged.
# Exit status: 0 when everything is there (found or installed), 2 when something is missing.
set -u

# One line per thing to look for: its name, the part it belongs to, what it is, and its packages
# for apt, dnf, Homebrew and conda-forge ('+' joins several packages in one field, '-' is none).
NEEDS="
cmake      tool     CMake                        cmake                   cmake                   cmake    cmake
make       tool     make                         make                    make                    make     make
cc         tool     C_compiler_(OpenMP)          gcc                     gcc                     gcc      c-compiler
pkg-config tool     pkg-config                   pkg-config              pkgconf-pkg-config      pkg-config pkg-config
hdf5       tool     HDF5_(C_and_HL)              libhdf5-dev             hdf5-devel              hdf5     hdf5
gsl        tool     GSL                          libgsl-dev              gsl-devel               gsl      gsl
libconfig  tool     libconfig                    libconfig-dev           libconfig-devel         libconfig libconfig
gnuplot    plots    gnuplot                      gnuplot-nox             gnuplot                 gnuplot  gnuplot
criterion  tests    Criterion                    libcriterion-dev        criterion-devel         criterion -
h5dump     tests    HDF5_tools_(h5dump)          hdf5-tools              hdf5                    hdf5     hdf5
sundials   sundials SUNDIALS_(IDA,_CVODE)        libsundials-dev         sundials-devel          sundials sundials
mpi        mpi      OpenMPI                      libopenmpi-dev+openmpi-bin openmpi-devel        open-mpi openmpi
gcovr      coverage gcovr                        gcovr                   gcovr                   gcovr    gcovr
fuzz       fuzz     clang_with_libFuzzer,_OpenMP clang+libclang-rt-dev+libomp-dev clang+compiler-rt+libomp-devel llvm clang+compiler-rt+llvm-openmp
"
MANAGERS="apt dnf brew conda"

# found NAME: whether NAME is on this machine (a command, a pkg-config module or a header).
found() {
  case $1 in
    cc) command -v gcc >/dev/null 2>&1 || command -v cc >/dev/null 2>&1 ;;
    hdf5 | gsl | libconfig | criterion) pkg-config --exists "$1" 2>/dev/null ;;
    sundials) echo '#include <ida/ida.h>' | cc -E -x c - >/dev/null 2>&1 ;;
    mpi) command -v mpicc >/dev/null 2>&1 && command -v mpirun >/dev/null 2>&1 ;;
    fuzz) echo 'int LLVMFuzzerTestOneInput(const char *d, long n) { return 0; }' |
      clang -x c -fsanitize=fuzzer -fopenmp -o /dev/null - >/dev/null 2>&1 ;;
    *) command -v "$1" >/dev/null 2>&1 ;;
  esac
}

# missing PART...: the lines of NEEDS of those parts whose thing is not found.
missing() {
  local name part rest
  while read -r name part rest; do
    [ -n "$name" ] || continue
    case " $* " in *" $part "*) found "$name" || echo "$name $part $rest" ;; esac
  done <<<"$NEEDS"
}

# of_part PART LINES / not_of_part PART LINES: the lines of LINES of PART, or of the other parts.
of_part() {
  local name part rest
  while read -r name part rest; do [ -n "$name" ] && [ "$part" = "$1" ] && echo "$name $part $rest"; done <<<"$2"
}
not_of_part() {
  local name part rest
  while read -r name part rest; do [ -n "$name" ] && [ "$part" != "$1" ] && echo "$name $part $rest"; done <<<"$2"
}

# packages MANAGER LINES: the packages of MANAGER (apt, dnf, brew, conda) for LINES, one line.
packages() {
  local column=0 m name part what p1 p2 p3 p4 list p out=""
  for m in $MANAGERS; do
    column=$((column + 1))
    [ "$m" = "$1" ] && break
  done
  while read -r name part what p1 p2 p3 p4; do
    [ -n "$name" ] || continue
    case $column in 1) list="$p1" ;; 2) list="$p2" ;; 3) list="$p3" ;; 4) list="$p4" ;; esac
    [ "$list" = - ] && continue
    for p in ${list//+/ }; do
      case " $out " in *" $p "*) ;; *) out="$out $p" ;; esac # once each (dnf's hdf5 has h5dump too)
    done
  done <<<"$2"
  echo "${out# }"
}

# unpackaged MANAGER LINES: ", not packaged: WHAT..." for the things of LINES MANAGER has no package for.
unpackaged() {
  local name part what p1 p2 p3 p4 out=""
  while read -r name part what p1 p2 p3 p4; do
    [ -n "$name" ] && [ "$1" = conda ] && [ "$p4" = - ] && out="$out, ${what//_/ }"
  done <<<"$2"
  [ -z "$out" ] || echo " (not packaged there:${out#,}; build it from source)"
}

# The hdf5.pc alternative's value ('' when Debian's alternatives do not manage it).
hdf5_pc() {
  command -v update-alternatives >/dev/null 2>&1 || return 0
  update-alternatives --query hdf5.pc 2>/dev/null | while read -r key value; do
    [ "$key" = "Value:" ] && echo "$value"
  done
}

# apt_install PACKAGE...: apt-get install, hdf5.pc's alternative put back as it was.
apt_install() {
  local before after
  before=$(hdf5_pc)
  export DEBIAN_FRONTEND=noninteractive
  # Another apt-get (e.g. an unattended upgrade) may hold dpkg's lock: wait for it, up to 10 minutes.
  $SUDO apt-get -o DPkg::Lock::Timeout=600 update -qq &&
    $SUDO apt-get -o DPkg::Lock::Timeout=600 install -y -qq --no-install-recommends "$@" >&2
  local rc=$?
  after=$(hdf5_pc)
  if [ -n "$before" ] && [ "$after" != "$before" ]; then
    echo "deps: hdf5.pc put back to $before (the install switched it to $after)" >&2
    $SUDO update-alternatives --set hdf5.pc "$before" >/dev/null
  fi
  return $rc
}

# Whether packages can be installed here: apt-get, and root or sudo without a password prompt;
# if not, why not in WHY.
can_install() {
  SUDO="" WHY=""
  if [ "${NHBENCH_NO_INSTALL:-0}" = 1 ]; then WHY="nothing installed: NHBENCH_NO_INSTALL=1"
  elif ! command -v apt-get >/dev/null 2>&1; then WHY="nothing installed: no apt-get on this machine"
  elif [ "$(id -u)" -eq 0 ]; then return 0
  elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then SUDO="sudo"; return 0
  else WHY="nothing installed: not root, and no sudo without a password"
  fi
  return 1
}

# The message when something is missing and cannot be installed here.
explain() {
  local lines=$1 name part what rest cmake_options=""
  echo "deps: missing on this machine${WHY:+ ($WHY)}:" >&2
  while read -r name part what rest; do
    [ -n "$name" ] && echo "  - ${what//_/ } (for $part)" >&2
  done <<<"$lines"
  echo "Install them with one of:" >&2
  echo "  apt:   sudo apt-get install $(packages apt "$lines")" >&2
  echo "  dnf:   sudo dnf install $(packages dnf "$lines")" >&2
  echo "  brew:  brew install $(packages brew "$lines")" >&2
  echo "  conda: conda install -c conda-forge $(packages conda "$lines")$(unpackaged conda "$lines")" >&2
  case " $* " in *" tests "*) ;; *) cmake_options=" -DBUILD_TESTING=OFF" ;; esac
  case " $* " in *" sundials "*) cmake_options="$cmake_options -DNHBENCH_SUNDIALS=ON" ;; esac
  case " $* " in *" mpi "*) cmake_options="$cmake_options -DNHBENCH_MPI=ON" ;; esac
  echo "then build with CMake (or run make again):" >&2
  echo "  cmake -S . -B build -DCMAKE_BUILD_TYPE=Release$cmake_options && cmake --build build -j" >&2
}

# --markdown: the table of NEEDS for README.md, "Install" (tests/setup/test_deps.c checks it is there).
if [ "${1:-}" = --markdown ]; then
  echo "| part | what | apt (Debian, Ubuntu) | dnf (Fedora) | Homebrew | conda-forge |"
  echo "|---|---|---|---|---|---|"
  while read -r name part what p1 p2 p3 p4; do
    [ -n "$name" ] && echo "| $part | ${what//_/ } | ${p1//+/ } | ${p2//+/ } | ${p3//+/ } | ${p4//+/ } |"
  done <<<"$NEEDS"
  exit 0
fi
[ $# -gt 0 ] || set -- tool
lines=$(missing "$@")
[ -z "$lines" ] && exit 0
if can_install; then
  echo "deps: installing $(packages apt "$lines")" >&2
  # The tool's own libraries first: on a machine without HDF5, the serial build is then the one
  # hdf5.pc names before any optional part brings the OpenMPI build.
  base=$(of_part tool "$lines")
  [ -z "$base" ] || apt_install $(packages apt "$base")
  rest=$(not_of_part tool "$lines")
  [ -z "$rest" ] || apt_install $(packages apt "$rest")
  lines=$(missing "$@")
  [ -z "$lines" ] && exit 0
  WHY="apt-get did not install them"
fi
explain "$lines" "$@"
exit 2
