#!/bin/sh
# The seed results files of the results fuzz targets (make fuzz): every study kind of
# studies/examples/ run at a small size, and an ensemble with a parameter grid, into DIR.
#   NHBENCH=build/nhbench scripts/fuzz_seeds.sh DIR
set -eu
dir=${1:?usage: NHBENCH=build/nhbench scripts/fuzz_seeds.sh DIR}
nhb=${NHBENCH:-nhbench}
two='methods=["rk4","nh_newmark(alpha=0.5)"]'
mkdir -p "$dir"
seed() { name=$1; shift; "$nhb" run "$@" -o "$dir/$name.h5" 2>/dev/null; }
seed convergence studies/examples/convergence.cfg --set T=0.4 --set halvings=2 --set "$two"
seed ensemble studies/examples/ensemble.cfg --set T=2 --set sample_every=5 --set ensemble.count=2 --set "$two"
seed ensemble_grid tests/data/small_ensemble.cfg --set T=2 --set ensemble.count=2 --set sample_every=5
seed onestep studies/examples/onestep.cfg --set points=2 --set T=2 --set halvings=2 --set "$two"
seed trajectory studies/examples/trajectory.cfg --set T=1 --set 'methods=["herglotz2"]' \
  --set 'observables=["energy","error_q_2"]'
seed work_precision studies/examples/work_precision.cfg --set T=0.4 --set 'h=[0.2,0.1]' --set repeats=1 --set "$two"
