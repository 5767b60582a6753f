#!/usr/bin/env bash
# Installs the Debian packages nhbench needs, non-interactively, and only those missing.
# Called by `make deps`, on which every other make target depends; extra packages a target needs
# (e.g. gcovr for make coverage) are given as arguments.
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
$SUDO apt-get update -qq
$SUDO apt-get install -y -qq --no-install-recommends $missing >&2
