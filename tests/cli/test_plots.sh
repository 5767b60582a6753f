#!/bin/sh
# Checks plots/make_plots.sh end to end: runs every studies/examples/*.cfg into a temporary
# directory, plots it, and checks the exit status and that every expected PDF and PNG exists and
# is not empty; then the failure paths: bad usage (2), a missing path (2), a file that is not .h5
# (2), a broken .h5 beside a good one (1, the good one still plotted), one file as the argument.
#   NHBENCH=build/nhbench tests/cli/test_plots.sh        (needs gnuplot; about 10 s)
# Exit status: 0 if every check passed, 1 otherwise; each failed check is named on stderr.
set -u
NHBENCH=${NHBENCH:-build/nhbench}
case $0 in */*) root=${0%/*}/../.. ;; *) root=../.. ;; esac
mp="$root/plots/make_plots.sh"
command -v gnuplot >/dev/null 2>&1 || { echo "test_plots.sh: gnuplot not found" >&2; exit 1; }
[ -x "$NHBENCH" ] || { echo "test_plots.sh: no nhbench at $NHBENCH (set NHBENCH=...)" >&2; exit 1; }
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
fails=0
fail() { echo "test_plots.sh: FAIL: $*" >&2; fails=$((fails + 1)); }
expect_status() {  # expect_status WANT WHAT COMMAND...
  want=$1 what=$2; shift 2
  "$@" >"$tmp/out" 2>"$tmp/err"; got=$?
  [ "$got" -eq "$want" ] || { fail "$what: exit status $got, expected $want"; cat "$tmp/err" >&2; }
}

mkdir "$tmp/ex"
for spec in "$root"/studies/examples/*.cfg; do
  "$NHBENCH" run "$spec" -o "$tmp/ex/$(basename "$spec" .cfg).h5" >/dev/null 2>&1 || fail "nhbench run $spec"
done
expect_status 0 "make_plots.sh on the examples" env NHBENCH="$NHBENCH" "$mp" "$tmp/ex"
# The figures each study kind must give (the examples' observables, methods and grids).
for f in convergence_convergence ensemble_energy_m0 ensemble_energy_methods ensemble_variance \
         ensemble_series_constraint_residual onestep_local_error onestep_action_error \
         trajectory_series_energy trajectory_series_error_q_2 trajectory_series_derived \
         trajectory_series_discrete_constraint work_precision_err_work work_precision_err_time; do
  for ext in pdf png; do
    [ -s "$tmp/ex/plots/$f.$ext" ] || fail "missing or empty: plots/$f.$ext"
  done
done
# Nothing on stderr from gnuplot (warnings about empty data, key overflow) for the examples.
[ -s "$tmp/err" ] && { fail "make_plots.sh wrote to stderr on the examples:"; cat "$tmp/err" >&2; }

# A reference slope for every order a method claims: h^4 beside rk4, h^6 beside an order-6
# composition, h^2 beside nh_newmark (convergence.gp, describe=1: the slopes it draws). The key
# shows the spec's labels (a blank, a quote ' and enhanced text kept), and the automatic label,
# without default parameters, where the spec gives none.
cat >"$tmp/orders.cfg" <<'SPEC'
study = "convergence";
system = "particle";
T = 1.0;
h0 = 0.2;
halvings = 3;
methods = ["rk4", "yoshida6(nh_newmark(alpha=0.5))", "nh_newmark(alpha=0.5)"];
labels = ( ["yoshida6(nh_newmark)", "Y_6 ∘ N^{β=0}"], ["rk4", "RK4 (Kutta's)"] );
SPEC
"$NHBENCH" run "$tmp/orders.cfg" -o "$tmp/orders.h5" >/dev/null 2>&1 || fail "nhbench run orders.cfg"
gnuplot -e "file='$tmp/orders.h5'; out='$tmp/orders'; nhbench='$NHBENCH'; describe=1" \
  "$root/plots/style.gp" "$root/plots/convergence.gp" >/dev/null 2>"$tmp/err"
grep -qx "reference slopes: 2 4 6" "$tmp/err" || { fail "convergence.gp: not the slopes h^2, h^4, h^6:"; cat "$tmp/err" >&2; }
grep -qxF "keys: RK4 (Kutta's) | Y_6 ∘ N^{β=0} | nh\_newmark" "$tmp/err" || { fail "convergence.gp: not the labels:"; cat "$tmp/err" >&2; }
[ -s "$tmp/orders.png" ] || fail "convergence.gp with an order-6 method: no figure"

# One method: its method dimension (size 1) is fixed in the orders slice, whose rows are then the
# values alone; the figure still has the method's key and guide.
sed 's/^methods = .*/methods = ["rk4"];/; /^labels/d' "$tmp/orders.cfg" >"$tmp/one.cfg"
"$NHBENCH" run "$tmp/one.cfg" -o "$tmp/one.h5" >/dev/null 2>&1 || fail "nhbench run one.cfg"
gnuplot -e "file='$tmp/one.h5'; out='$tmp/one'; nhbench='$NHBENCH'; describe=1" \
  "$root/plots/style.gp" "$root/plots/convergence.gp" >/dev/null 2>"$tmp/err"
grep -qx "reference slopes: 4" "$tmp/err" && grep -qx "keys: rk4" "$tmp/err" ||
  { fail "convergence.gp with one method:"; cat "$tmp/err" >&2; }

# A one-step study of one method (its dimension fixed in the fits' slice) over 9 step sizes, whose
# labels (0.000390625 ... 0.1) do not fit side by side: every other one is labelled.
cat >"$tmp/one_step.cfg" <<'SPEC'
study = "onestep";
system = "chaotic_particle";
T = 2.0;
points = 2;
h0 = 0.1;
halvings = 8;
methods = ["rk4"];
SPEC
"$NHBENCH" run "$tmp/one_step.cfg" -o "$tmp/one_step.h5" >/dev/null 2>&1 || fail "nhbench run one_step.cfg"
gnuplot -e "file='$tmp/one_step.h5'; out='$tmp/one_step'; nhbench='$NHBENCH'; describe=1" \
  "$root/plots/style.gp" "$root/plots/local_error.gp" >/dev/null 2>"$tmp/err"
grep -qE "^keys: rk4   5\.[0-9]+ .* \(5\)$" "$tmp/err" && grep -qx "h labelled: every 2 of 9" "$tmp/err" ||
  { fail "local_error.gp with one method and 9 step sizes:"; cat "$tmp/err" >&2; }

# The (β, β') map names the family it sweeps, not the grid's first point (beta_map.gp, describe=1).
"$NHBENCH" run "$root/tests/data/small_ensemble.cfg" -o "$tmp/grid.h5" >/dev/null 2>&1 || fail "nhbench run small_ensemble.cfg"
gnuplot -e "file='$tmp/grid.h5'; out='$tmp/grid'; nhbench='$NHBENCH'; describe=1" \
  "$root/plots/style.gp" "$root/plots/beta_map.gp" >/dev/null 2>"$tmp/err"
grep -qx "title: nh_newmark(alpha=0.5,constraint=point) over (β, β')" "$tmp/err" ||
  { fail "beta_map.gp: not the family's title:"; cat "$tmp/err" >&2; }

# The quantile band on a symmetric-log axis where one method's band dwarfs the others (rk4's drift
# against the geometric methods on the main job's ensemble, T = 2000), on a linear one where the
# bands are alike (the examples' ensemble) (quantiles.gp, describe=1).
"$NHBENCH" run "$root/studies/chaotic_ensemble.cfg" -o "$tmp/chaotic.h5" >/dev/null 2>&1 || fail "nhbench run chaotic_ensemble.cfg"
for case in "chaotic symmetric" "ex/ensemble linear"; do
  set -- $case
  gnuplot -e "file='$tmp/$1.h5'; out='$tmp/q'; nhbench='$NHBENCH'; describe=1" \
    "$root/plots/style.gp" "$root/plots/quantiles.gp" >/dev/null 2>"$tmp/err"
  grep -q "^y axis: $2" "$tmp/err" || { fail "quantiles.gp on $1.h5: not a $2 axis:"; cat "$tmp/err" >&2; }
done

# A series' y axis shows the observable's symbol and units, |·| around it on a log scale unless it
# is a norm already (series.gp, describe=1).
for case in "energy|E(q, v)  [energy]" "error_q_2|‖q − q_{ref}‖_2  [as q]" "discrete_constraint||discrete constraint|  [as A v]"; do
  obs=${case%%|*} want=${case#*|}
  gnuplot -e "file='$tmp/ex/trajectory.h5'; out='$tmp/s'; nhbench='$NHBENCH'; describe=1; observable='$obs'" \
    "$root/plots/style.gp" "$root/plots/series.gp" >/dev/null 2>"$tmp/err"
  grep -qxF "y label: $want" "$tmp/err" || { fail "series.gp $obs: not the y label '$want':"; cat "$tmp/err" >&2; }
done

# Failure paths; the negative controls of the checks above.
expect_status 2 "no argument" env NHBENCH="$NHBENCH" "$mp"
expect_status 2 "two arguments" env NHBENCH="$NHBENCH" "$mp" "$tmp/ex" "$tmp/ex"
expect_status 2 "missing path" env NHBENCH="$NHBENCH" "$mp" "$tmp/nonexistent"
expect_status 2 "not a .h5 file" env NHBENCH="$NHBENCH" "$mp" "$root/README.md"
mkdir "$tmp/bad"
echo "not HDF5" >"$tmp/bad/broken.h5"
cp "$tmp/ex/onestep.h5" "$tmp/bad/"
expect_status 1 "a broken file beside a good one" env NHBENCH="$NHBENCH" "$mp" "$tmp/bad"
[ -s "$tmp/bad/plots/onestep_local_error.png" ] || fail "the good file was not plotted beside a broken one"
# One file as the argument: plotted into its directory's plots/.
mkdir "$tmp/one"
cp "$tmp/ex/work_precision.h5" "$tmp/one/"
expect_status 0 "one file" env NHBENCH="$NHBENCH" "$mp" "$tmp/one/work_precision.h5"
[ -s "$tmp/one/plots/work_precision_err_time.pdf" ] || fail "one file: no plots/work_precision_err_time.pdf"
# Without NHBENCH: the nhbench built beside the scripts (a source tree's build/, the copy here a
# link to the one under test), the installed one (PREFIX/bin beside PREFIX/share/nhbench/plots);
# neither there nor on PATH: status 1 and what to do.
for layout in tree installed; do
  if [ $layout = tree ]; then sdir="$tmp/tree/plots"; bdir="$tmp/tree/build"
  else sdir="$tmp/prefix/share/nhbench/plots"; bdir="$tmp/prefix/bin"; fi
  mkdir -p "$sdir" "$bdir"
  cp "$root"/plots/*.gp "$root"/plots/make_plots.sh "$sdir/"
  ln -s "$(cd "$(dirname "$NHBENCH")" && pwd)/$(basename "$NHBENCH")" "$bdir/nhbench"
  mkdir "$tmp/$layout-one" && cp "$tmp/ex/convergence.h5" "$tmp/$layout-one/"
  expect_status 0 "no NHBENCH, $layout" env -u NHBENCH "$sdir/make_plots.sh" "$tmp/$layout-one"
  [ -s "$tmp/$layout-one/plots/convergence_convergence.png" ] || fail "no NHBENCH, $layout: no figure"
done
rm "$tmp/tree/build/nhbench"
env -u NHBENCH PATH=/usr/bin:/bin "$tmp/tree/plots/make_plots.sh" "$tmp/tree-one" >/dev/null 2>"$tmp/err"
[ $? -eq 1 ] || fail "no nhbench anywhere: exit status not 1"
grep -q "nhbench not found: not in .*build/ nor on PATH" "$tmp/err" || fail "no nhbench anywhere: no hint"

# Commands of every length: gnuplot 5.4's sprintf cut its result short when the format held a "%%"
# and the result fell in a window of lengths (about 160 to 190 characters), which a long path to
# nhbench or to the file reaches; quantiles.gp's command then lost its closing quote. Here nhbench
# and the file are reached by short names in $tmp, so that the command starts below the window
# whatever the paths, and it grows by 15 characters a round (an environment setting before
# nhbench) through it and past.
nb_abs="$(cd "$(dirname "$NHBENCH")" && pwd)/$(basename "$NHBENCH")"
ln -s "$nb_abs" "$tmp/nb"
cp "$tmp/ex/ensemble.h5" "$tmp/e.h5"
pad="" rounds=0
while [ $rounds -lt 8 ]; do
  rm -f "$tmp/q.png"
  gnuplot -e "file='$tmp/e.h5'; out='$tmp/q'; nhbench='env P=$pad $tmp/nb'" \
    "$root/plots/style.gp" "$root/plots/quantiles.gp" >/dev/null 2>"$tmp/err"
  if [ ! -s "$tmp/q.png" ] || [ -s "$tmp/err" ]; then
    fail "quantiles.gp with its command ${#pad} characters longer:"; cat "$tmp/err" >&2; break
  fi
  pad="${pad}xxxxxxxxxxxxxxx" rounds=$((rounds + 1))
done

[ $fails -eq 0 ] && echo "test_plots.sh: all checks passed"
[ $fails -eq 0 ]
