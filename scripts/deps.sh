#!/usr/bin/env bash
# Installs the Debian packages nhbench needs, non-interactively, and only those missing.
# Called by `make deps`, on which every other make target depends; extra packages a target needs
# (e.g. gcovr for make coverage, the compiler and libFuzzer for make fuzz) are given as arguments.
set -eu
pkgs="cmake make gcc pkg-config libhdf5-dev hdf5-tools libcriterion-dev libgsl-dev libconfig-dev gnuplot-nox $*"
missing=""
for p in $pkgs; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing="$missing $p"
done
[ -z "$missing" ] && exit 0
echo "deps: installing$missing" >&2
SUDO=""
[ "$(id -u)" -ne 0 ] && SUDO="sudo"
export DEBIAN_FRONTEND=noninteractive
# Another apt-get (e.g. an unattended upgrade) may hold dpkg's lock: wait for it, up to 10 minutes.
lock="-o DPkg::Lock::Timeout=600"
$SUDO apt-get $lock update -qq
$SUDO apt-get $lock install -y -qq --no-install-recommends $missing >&2
