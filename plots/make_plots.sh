#!/bin/sh
# Plots results files by their study kind, as PDF and PNG:
#   plots/make_plots.sh RESULTS_DIR    every RESULTS_DIR/*.h5 into RESULTS_DIR/plots/
#   plots/make_plots.sh FILE.h5        one file, into its directory's plots/
#   PLOTS_DIR=DIR ...                    into DIR instead
#   NHBENCH=PATH ...                     that nhbench (default: build/ beside plots/, the installed
#                                        one, or the one on PATH)
# convergence:     NAME_convergence (error against h);
# ensemble:        NAME_energy_mI (the first trajectories of method I, for the first 4 methods the
#                  spec lists, or those in ENERGY_METHODS="I J ..."), NAME_energy_methods (the
#                  spec's methods on initial condition 0), NAME_quantiles (the 10-90 % band and
#                  median of E(t) - E0 over the ICs), NAME_variance (ensemble variance of
#                  E - E0 against t), NAME_beta_map_gG (each parameter grid G), and NAME_series_OBS
#                  (each sampled observable on initial condition 0);
# trajectory:      NAME_series_OBS (each sampled observable against t, one curve per method, a line
#                  style per h); with more than 3 step sizes one figure per h (_hJ, or one figure
#                  with the h indices in SERIES_HS="J ..."), with several initial conditions one per
#                  IC (_icK; the first 4, or those in SERIES_ICS="K ..."), with more than 4
#                  components one figure per 4 (_cA-B);
# onestep:         NAME_local_error (local error against h, fitted slopes, reference slopes p + 1)
#                  and NAME_action_error (when a method has a discrete action);
# work_precision:  NAME_err_work and NAME_err_time (error against counted work and wall time,
#                  Pareto-efficient runs filled, the Pareto front).
# Exit status: 0; 1 if a file could not be plotted (the others are still plotted); 2 bad usage.
set -u

usage="usage: [NHBENCH=path/to/nhbench] plots/make_plots.sh RESULTS_DIR|FILE.h5"
[ $# -eq 1 ] || { echo "$usage" >&2; exit 2; }
if [ -d "$1" ]; then
  dir=$1
  set -- "$dir"/*.h5
elif [ -f "$1" ]; then
  case $1 in
    *.h5) ;;
    *) echo "make_plots.sh: $1: not a .h5 results file" >&2; echo "$usage" >&2; exit 2 ;;
  esac
  case $1 in */*) dir=${1%/*} ;; *) dir=. ;; esac
else
  echo "make_plots.sh: $1: no such file or directory" >&2
  exit 2
fi
case $0 in */*) here=${0%/*} ;; *) here=. ;; esac
# nhbench: $NHBENCH if set; else the one built beside these scripts in a source tree (build/, or
# build-sundials/), or the installed one (PREFIX/bin beside PREFIX/share/nhbench/plots); else
# the one on PATH.
if [ -z "${NHBENCH:-}" ]; then
  for c in "$here/../build/nhbench" "$here/../build-sundials/nhbench" "$here/../../../bin/nhbench"; do
    if [ -x "$c" ]; then NHBENCH=$c; break; fi
  done
fi
NHBENCH=${NHBENCH:-nhbench}

# Paths reach gnuplot strings and the shell commands gnuplot runs inside single quotes: a quote,
# backslash or line break in one could end the quoting and run the rest as code. Such paths are
# refused, never escaped (README, "Security").
nl='
'
unsafe() {
  case $1 in *"'"* | *'"'* | *'\'* | *"$nl"*) return 0 ;; esac
  return 1
}
for p in "$here" "$NHBENCH" "${PLOTS_DIR:-}" "$dir"; do
  if unsafe "$p"; then
    echo "make_plots.sh: $p: a quote, backslash or line break in a path; rename it" >&2
    exit 2
  fi
done

if ! command -v gnuplot >/dev/null 2>&1; then
  echo "make_plots.sh: gnuplot not found; install it (Debian: apt-get install gnuplot-nox)" >&2
  exit 1
fi
case $NHBENCH in
  */*) [ -x "$NHBENCH" ] || { echo "make_plots.sh: nhbench not found at $NHBENCH (build it: make build)" >&2; exit 1; } ;;
  *) command -v "$NHBENCH" >/dev/null 2>&1 || { echo "make_plots.sh: nhbench not found: not in $here/../build/ nor on PATH; build it (make build) or set NHBENCH=path/to/nhbench" >&2; exit 1; } ;;
esac

if [ ! -e "$1" ]; then
  echo "make_plots.sh: no .h5 files in $dir, nothing to plot (make study-chaotic writes some)"
  exit 0
fi
plots=${PLOTS_DIR:-$dir/plots} # PLOTS_DIR: another output directory (make paper: results/paper/figures)
mkdir -p "$plots" || exit 1

# plot SCRIPT FILE OUT [GNUPLOT_SETTINGS]: one figure, OUT.pdf and OUT.png.
plot() {
  if gnuplot -e "file='$2'; out='$3'; nhbench='$NHBENCH'; ${4:-}" "$here/style.gp" "$here/$1"; then
    echo "  $3.pdf, .png"
  else
    echo "make_plots.sh: $1 failed for $2" >&2
    status=1
  fi
}

# size FILE DIM: the size of dimension DIM of the study (`export dims`), 0 if it has none.
size() {
  "$NHBENCH" export "$1" dims | awk -v d="$2" '!/^#/ && $1 == d {n = $2} END {print n + 0}'
}

# series FILE OUT OBS WIDTH ICS HS: the figures of one sampled observable (see the top).
series() {
  if [ "$4" -eq 0 ]; then
    echo "  $3: no components (nothing the system declares), not plotted"
    return
  fi
  for k in $5; do
    sfx=
    [ "$5" = 0 ] || sfx=_ic$k
    for hset in $6; do
      hs=$(echo "$hset" | tr , ' ')
      hsfx=
      case $6 in *" "*) hsfx=_h$hset ;; esac
      c=0
      while [ $c -lt "$4" ]; do
        c1=$((c + 3))
        [ $c1 -lt "$4" ] || c1=$(($4 - 1))
        csfx=
        [ "$4" -le 4 ] || csfx=_c$c-$c1
        plot series.gp "$1" "${2}_series_$3$sfx$hsfx$csfx" "observable='$3'; ic=$k; comps='$c:$c1'${hs:+; hs='$hs'}"
        c=$((c1 + 1))
      done
    done
  done
}

status=0
for f in "$@"; do
  if unsafe "$f"; then echo "make_plots.sh: $f: skipped, a quote, backslash or line break in the name" >&2; status=1; continue; fi
  name=$(basename "$f" .h5)
  out="$plots/$name"
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
      plot quantiles.gp "$f" "${out}_quantiles"
      grids=$("$NHBENCH" export "$f" attr grids 2>/dev/null || echo 0)
      g=0
      while [ "$g" -lt "$grids" ]; do
        plot beta_map.gp "$f" "${out}_beta_map_g$g" "grid=$g"
        g=$((g + 1))
      done
      "$NHBENCH" export "$f" observables 2>/dev/null | awk '!/^#/ {print $2, $3}' | {
        while read -r obs width; do series "$f" "$out" "$obs" "$width" 0 0; done
        exit $status
      } || status=1
      ;;
    trajectory)
      obslist=$("$NHBENCH" export "$f" observables | awk '!/^#/ {print $2, $3}')
      if [ -z "$obslist" ]; then
        echo "  no sampled observables, nothing to plot (the spec's observables = [...])"
        continue
      fi
      nh=$(size "$f" h)
      nic=$(size "$f" ic)
      # Initial conditions: those in SERIES_ICS, else the first 4 ("0" alone: no _icK suffix).
      ics=${SERIES_ICS:-$(awk -v n="$nic" 'BEGIN {for (k = 0; k < n && k < 4; k++) printf "%d ", k}')}
      [ "$nic" -gt 1 ] || ics=0
      # Step sizes: one figure with all (up to 3) or with SERIES_HS, else one figure per h.
      if [ -n "${SERIES_HS:-}" ]; then hsets=$(echo "$SERIES_HS" | tr ' ' ,)
      elif [ "$nh" -le 3 ]; then hsets=$(awk -v n="$nh" 'BEGIN {for (j = 0; j < n; j++) printf "%s%d", j ? "," : "", j}')
      else hsets=$(awk -v n="$nh" 'BEGIN {for (j = 0; j < n; j++) printf "%d ", j}')
      fi
      echo "$obslist" | {
        while read -r obs width; do series "$f" "$out" "$obs" "$width" "$ics" "$hsets"; done
        exit $status
      } || status=1
      ;;
    onestep)
      plot local_error.gp "$f" "${out}_local_error"
      if "$NHBENCH" export "$f" dataset max_action_err | awk '!/^#/ && NF && $NF !~ /[Nn][Aa][Nn]|[Ii][Nn][Ff]/ {found = 1} END {exit !found}'; then
        plot local_error.gp "$f" "${out}_action_error" "quantity='action'"
      else
        echo "  no method has a discrete action: no action error plot"
      fi
      ;;
    work_precision)
      plot work_precision.gp "$f" "${out}_err_work" "x='work'"
      plot work_precision.gp "$f" "${out}_err_time" "x='time'"
      ;;
    *)
      echo "make_plots.sh: $f: study kind '$study' has no plots" >&2
      status=1
      ;;
  esac
done
exit $status
