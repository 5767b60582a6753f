#!/bin/sh
# Plots every results file RESULTS_DIR/*.h5 into RESULTS_DIR/plots/, as PDF and PNG:
#   NHBENCH=build/nhbench plots/make_plots.sh RESULTS_DIR
# convergence studies: NAME_convergence (error against h);
# ensemble studies:    NAME_energy_mI (the first trajectories of method I, for the first 4 methods
#                      the spec lists, or those in ENERGY_METHODS="I J ..."), NAME_energy_methods
#                      (the spec's methods on initial condition 0), NAME_variance (ensemble variance
#                      of E - E0 against t) and NAME_beta_map_gG (each parameter grid G).
# Exit status: 0, or 1 if a file could not be plotted (the others are still plotted).
set -u

usage="usage: NHBENCH=build/nhbench plots/make_plots.sh RESULTS_DIR"
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
dir=$1
[ -d "$dir" ] || { echo "make_plots.sh: $dir: no such directory" >&2; exit 2; }
NHBENCH=${NHBENCH:-nhbench}
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac

if ! command -v gnuplot >/dev/null 2>&1; then
  echo "make_plots.sh: gnuplot not found; install it (Debian: apt-get install gnuplot-nox)" >&2
  exit 1
fi
case $NHBENCH in
  */*) [ -x "$NHBENCH" ] || { echo "make_plots.sh: nhbench not found at $NHBENCH (build it: make build)" >&2; exit 1; } ;;
  *) command -v "$NHBENCH" >/dev/null 2>&1 || { echo "make_plots.sh: $NHBENCH not on PATH; set NHBENCH=build/nhbench" >&2; exit 1; } ;;
esac

found=0
for f in "$dir"/*.h5; do [ -e "$f" ] && found=1 && break; done
if [ $found -eq 0 ]; then
  echo "make_plots.sh: no .h5 files in $dir, nothing to plot (make study-chaotic writes some)"
  exit 0
fi
mkdir -p "$dir/plots" || exit 1

# plot SCRIPT FILE OUT [GNUPLOT_SETTINGS]: one figure, OUT.pdf and OUT.png.
plot() {
  if gnuplot -e "file='$2'; out='$3'; nhbench='$NHBENCH'; ${4:-}" "$here/style.gp" "$here/$1"; then
    echo "  $3.pdf, .png"
  else
    echo "make_plots.sh: $1 failed for $2" >&2
    status=1
  fi
}

status=0
for f in "$dir"/*.h5; do
  case $f in *"'"*) echo "make_plots.sh: $f: skipped, a quote in the name" >&2; status=1; continue ;; esac
  name=$(basename "$f" .h5)
  out="$dir/plots/$name"
  # nhbench info reads and checks most of the file, and says what is wrong.
  if ! "$NHBENCH" info "$f" >/dev/null || ! study=$("$NHBENCH" export "$f" study); then
    echo "make_plots.sh: $f: skipped, not a readable results file" >&2
    status=1
    continue
  fi
  echo "$f: $study study"
  case $study in
    convergence)
      plot convergence.gp "$f" "${out}_convergence"
      ;;
    ensemble)
      methods=${ENERGY_METHODS:-$("$NHBENCH" export "$f" methods --primary | awk '!/^#/ && n < 4 {print $1; n++}')}
      for m in $methods; do
        plot energy.gp "$f" "${out}_energy_m$m" "method=$m"
      done
      plot energy.gp "$f" "${out}_energy_methods" "method=-1"
      plot variance.gp "$f" "${out}_variance"
      grids=$("$NHBENCH" export "$f" attr grids 2>/dev/null || echo 0)
      g=0
      while [ "$g" -lt "$grids" ]; do
        plot beta_map.gp "$f" "${out}_beta_map_g$g" "grid=$g"
        g=$((g + 1))
      done
      ;;
  esac
done
exit $status
