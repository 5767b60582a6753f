# Ensemble study: the spread of E(t) − E0 over the initial conditions against t: for each method
# listed in the spec (or methods="I,J,..."), the band between the 10 % and 90 % quantiles over the
# ICs still running, and their median as a line. Run after plots/style.gp (usage there).

# No "%%" in a format here: gnuplot 5.4's sprintf cuts its result short when the format holds one
# and the arguments are long (a long path to nhbench or the file cut the command mid-quote).
idx = method_indices(0)
names = exists("methods") ? labels_of(subst(methods, ",", " "), method_labels("")) : method_labels("--primary")
n = words(names)
sys = query("attr system")
T = query("attr T")
h = step_size(0)
count = query("attr count")

set title sprintf("%s, T = %s, h = %s\nE(t) − E₀ over %s initial conditions: 10–90", wrap(sys, 50), T, h, count)." % band and median" noenhanced font ",9"
set xlabel "t" offset 0, 0.3
set ylabel "E(t) − E_0"
set format y "%.1te%+T"
set xrange [0:*]
set zeroaxis linetype 1 linecolor rgb "#bbbbbb" linewidth 0.5
set key below left Left reverse font ",7" spacing 0.9 samplen 2 maxrows key_rows(n, longest(names)) height 1 invert
set style fill transparent solid 0.25 noborder

# One method far wider than the others (rk4's drift against the geometric methods' bounded
# error) would flatten them onto zero on a linear axis: when the widest band reaches 20 times past
# the narrowest, the axis is symmetric-logarithmic, y ↦ asinh(y/s) with s the narrowest band's
# reach (linear within ±s, logarithmic beyond), with ticks at 0 and ±1, 2, 5 × 10^k (below).
band(b) = kept(b)
do for [b=0:n-1] { eval keep(b, dataset("dE_q10,dE_q50,dE_q90", at_method(word(idx, b + 1) + 0))) }
widest = 0
narrowest = 1e300
do for [b=0:n-1] {
  stats band(b) using (abs($2) > abs($4) ? abs($2) : abs($4)) nooutput
  if (exists("STATS_records") && STATS_records > 0 && STATS_max > 0) {
    if (STATS_max > widest) { widest = STATS_max }
    if (STATS_max < narrowest) { narrowest = STATS_max }
  }
}
symlog = widest > 0 && narrowest < 1e300 && widest > 20 * narrowest
if (symlog) {
  s = narrowest
  set nonlinear y via asinh(y / s) inverse s * sinh(y)
  set yrange [-1.1 * widest : 1.1 * widest]
  set format y "%g"
  set ytics ("0" 0)
  # Ticks at 1, 2, 5 × 10^k over up to 3 decades, at 10^k beyond (every other decade past 6), so
  # that their labels never overlap.
  decades = ceil(log10(widest)) - floor(log10(s))
  mults = decades <= 3 ? "1 2 5" : "1"
  do for [k=floor(log10(s)):ceil(log10(widest)):(decades > 6 ? 2 : 1)] {
    do for [m in mults] {
      v = (m + 0) * 10.0**k
      if (v <= 1.1 * widest && v >= s) { set ytics add (sprintf("%g", v) v, sprintf("%g", -v) -v) }
    }
  }
  set title sprintf("%s, T = %s, h = %s\nE(t) − E₀ over %s initial conditions: 10–90", wrap(sys, 50), T, h, count). \
    " % band and median\nsymmetric log scale: linear within ±".sprintf("%.2g", s) noenhanced font ",9"
}
if (exists("describe")) { print sprintf("y axis: %s", symlog ? "symmetric log" : "linear") }

eval pdf(below_key(3.8, n, longest(names)))
# The bands first (the first method's on top of the others), then the medians.
plot for [b=n-1:0:-1] band(b) using 1:2:4 with filledcurves linecolor rgb lc(b) notitle, \
     for [b=n-1:0:-1] band(b) using 1:3 with lines linewidth 0.8 linecolor rgb lc(b) \
       title word(names, b + 1)
eval png(below_key(3.8, n, longest(names)))
replot
unset output
