# Convergence study: error at T against the step size h, log-log, one line per method (key: the
# name and the observed order), with a dashed reference slope h^p for every order p a method
# claims (1 to MAXP). Run after plots/style.gp (usage there).

names = method_names("")
labels = method_labels("")
n = words(names)
sys = query("attr system")
T = query("attr T")
ref = query("attr reference")
# The last column: with one method the method dimension (size 1) is fixed and the rows are values.
claimed = system(dataset("orders", "--field claimed")[3:]." | awk '!/^#/ && NF {print $NF}'")
observed = system(dataset("orders", "--field observed")[3:]." | awk '!/^#/ && NF {print $NF}'")
hs = system(sprintf("%s export '%s' steps | awk '!/^#/ {print $2}' | sort -gu", nhbench, file))
order_text(i) = word(observed, i) eq "NaN" ? "no fit" : sprintf("p = %.2f", word(observed, i) + 0)

# Each reference slope h^p runs parallel to the methods of claimed order p, just below the lowest
# of them at the coarsest h (none if no method claims p).
hmin = word(hs, 1) + 0
hmax = word(hs, words(hs)) + 0
MAXP = 12
array anchor[MAXP]
do for [p=1:MAXP] { anchor[p] = NaN }
do for [i=1:n] { eval keep(i - 1, dataset("err", at_method(i - 1))) }
do for [i=1:n] {
  p = word(claimed, i) + 0
  if (p >= 1 && p <= MAXP) {
    # 1e300 stands in for "no error at hmax" (a failed run): stats then always has a valid point.
    stats kept(i - 1) using (abs($1 - hmax) <= 1e-12 * hmax && $2 > 0 && $2 < 1e300 ? $2 : 1e300) nooutput
    if (STATS_min < 1e300 && (anchor[p] != anchor[p] || STATS_min / 2.5 < anchor[p])) { anchor[p] = STATS_min / 2.5 }
  }
}
slope(h, p) = anchor[p] * (h / hmax)**p

norm = query("attr norm")
# A long system name (all its parameters) is wrapped after a comma.
set title sprintf("%s%serror at T = %s against the %s reference", wrap(sys, 62), strlen(sys) > 30 ? ":\n" : ": ", T, ref) noenhanced font ",10"
set logscale xy
set xlabel "step size h" offset 0, 0.4
set ylabel "error  ‖(q,v)_h(T) − (q,v)(T)‖_".(norm eq "2" ? "2" : "∞")
set format y "10^{%L}"
set xrange [hmin / 1.5 : hmax * 1.25]
eval h_tics(hs)
set mxtics default
set key below left Left reverse font ",7" spacing 0.9 samplen 2.5 height 1.2 width -2 maxcols key_columns(longest(labels) + 15)
do for [p=1:MAXP] {
  if (anchor[p] == anchor[p]) {
    set label (p + 0) (p == 1 ? "h" : sprintf("h^%d", p)) at hmin / 1.08, slope(hmin, p) * 1.5 right font ",8" textcolor rgb "#777777"
  }
}
set samples 50
# describe=1 (gnuplot -e): what the figure shows, on stderr (tests/cli/test_plots.sh reads it).
if (exists("describe")) {
  refs = ""
  do for [p=1:MAXP] { if (anchor[p] == anchor[p]) { refs = refs.sprintf(" %d", p) } }
  print "reference slopes:".refs
  keys = ""
  do for [i=1:n] { keys = keys.(i > 1 ? " | " : "").word(labels, i) }
  print "keys: ".keys
}

eval pdf(keyed(4.6, n))
plot for [i=0:n-1] kept(i) using 1:2 with linespoints \
       linecolor rgb lc(i) pointtype (i % 6) + 4 pointsize 0.6 \
       title sprintf("%s   (%s)", word(labels, i + 1), order_text(i + 1)), \
     for [p=1:MAXP] (anchor[p] == anchor[p] ? slope(x, p) : 1/0) with lines dashtype 2 linewidth 0.6 \
       linecolor rgb "#888888" notitle
eval png(keyed(4.6, n))
replot
unset output
