# One-step study: the local error max over the start points of |F_h(x) − φ_h(x)| against h,
# log-log, one line per method (key: the name and the fitted slope ± its standard error, against
# the expected p + 1), filled markers on the step sizes of the fit, open ones outside it, and dashed
# reference slopes h^(p+1) for each expected slope. quantity='action': the local action error
# |L_d(q(0), q(h)) − ∫ L dt| of the variational methods instead (reference slopes h² and h³; the
# methods without a discrete action are listed in the key). NaN errors are left out.
# Run after plots/style.gp (usage there); methods='0,2' picks methods (default: the spec's).

if (!exists("quantity")) { quantity = "local" }
act = quantity eq "action"
sys = query("attr system")
T = query("attr T")
norm = query("attr norm")
npoints = query("attr npoints")
# The methods shown, each with its errors over h (block(i): h max_local_err max_action_err) and its
# fit: a row per method of the [method] datasets (col(i, k): column k of method i's row).
idx = method_indices(0)
n = words(idx)
labels = method_labels("")
block(i) = dataset("max_local_err,max_action_err", at_method(word(idx, i) + 0))
fits = query("dataset slope_expected,slope,slope_stderr,fit_h_min,fit_h_max,action_slope")
# With one method its dimension is fixed: the row is the 6 values without the index (column k − 1).
col(i, k) = system(sprintf("echo '%s' | awk -v m=%d -v k=%d '!/^#/ && NF == 6 {print $(k - 1)} !/^#/ && NF == 7 && $1 == m {print $k}'", fits, word(idx, i) + 0, k))
array name[n]
array expected[n]
array slope[n]
array stderr[n]
array fit_lo[n]
array fit_hi[n]
array aslope[n]
array finite_pts[n]
do for [i=1:n] {
  name[i] = word(labels, word(idx, i) + 1)
  expected[i] = col(i, 2) + 0
  slope[i] = col(i, 3) + 0
  stderr[i] = col(i, 4) + 0
  fit_lo[i] = col(i, 5) + 0
  fit_hi[i] = col(i, 6) + 0
  aslope[i] = col(i, 7) + 0
  finite_pts[i] = system(sprintf("%s | awk '!/^#/ && NF && $%d !~ /[Nn][Aa][Nn]|[Ii][Nn][Ff]/ && $%d > 0 {c++} END {print c + 0}'", block(i)[3:], act ? 3 : 2, act ? 3 : 2)) + 0
}
hs = system(sprintf("%s export '%s' steps | awk '!/^#/ {print $2}' | sort -gu", nhbench, file))
hmin = word(hs, 1) + 0
hmax = word(hs, words(hs)) + 0
isnan(x) = x != x
fmt_slope(s, e) = isnan(s) ? "no fit" : (isnan(e) || e == 0 ? sprintf("%.3f", s) : sprintf("%.3f ± %.1g", s, e))
ktitle(i) = act ? (finite_pts[i] == 0 ? name[i]."   (no discrete action)" : sprintf("%s   %s", name[i], isnan(aslope[i]) ? "no fit" : sprintf("%.2f", aslope[i]))) \
                : (finite_pts[i] == 0 ? name[i]."   (no finite values)" : sprintf("%s   %s (%d)", name[i], fmt_slope(slope[i], stderr[i]), expected[i]))
infit(i, h) = !isnan(fit_lo[i]) && h >= fit_lo[i] * (1 - 1e-9) && h <= fit_hi[i] * (1 + 1e-9)
fv(v) = v > 0 && v < 1e300 ? v : NaN

# Reference slopes: local error h^(p+1) for each expected slope (action: h² or h³, whichever is
# nearer the method's fitted action slope), each parallel to the methods that expect it and just
# below the lowest of them at the largest step size of their fit (in the asymptotic range, unlike
# the largest h): the line is anchor[p] · h^p.
array anchor[9]
do for [p=1:9] { anchor[p] = NaN }
do for [i=1:n] {
  if (finite_pts[i] > 0 && !isnan(fit_hi[i])) {
    ha = fit_hi[i]
    stats block(i) using (abs($1 - ha) <= 1e-9 * ha && fv(act ? $3 : $2) == fv(act ? $3 : $2) ? (act ? $3 : $2) : 1e300) nooutput
    ps = act ? (isnan(aslope[i]) ? "" : aslope[i] < 2.5 ? "2" : "3") : sprintf("%d", expected[i])
    do for [pw in ps] {
      p = pw + 0
      a = STATS_min / 2.5 / ha**p
      if (p >= 1 && p <= 9 && STATS_min < 1e300 && (isnan(anchor[p]) || a < anchor[p])) { anchor[p] = a }
    }
  }
}
refline(h, p) = anchor[p] * h**p
refs = ""
do for [p=1:9] { if (!isnan(anchor[p])) { refs = refs.sprintf(" %d", p) } }

what = act ? "local action error  max_x |L_d(q(0), q(h)) − ∫_0^h L dt|" : \
             sprintf("local error  max_x ‖F_h(x) − φ_h(x)‖_{%s}", norm eq "2" ? "2" : "∞")
set title sprintf("%s\none step from %s points along the solution (T = %s)", wrap(sys, 62), npoints, T) noenhanced font ",9"
set logscale xy
set xlabel "step size h" offset 0, 0.4
set ylabel what
set format y "10^{%L}"
set xrange [hmin / 1.5 : hmax * 1.25]
eval h_tics(hs)
# describe=1 (gnuplot -e): what the figure shows, on stderr (tests/cli/test_plots.sh reads it).
if (exists("describe")) {
  keys = ""; do for [i=1:n] { keys = keys.(i > 1 ? " | " : "").ktitle(i) }
  print "keys: ".keys
  print sprintf("h labelled: every %d of %d", h_label_every(hs), words(hs))
}
set mxtics default
set key below left Left reverse font ",7" spacing 0.9 samplen 2.5 height 1.2
do for [k=1:words(refs)] {
  p = word(refs, k) + 0
  set label (100 + p) (p == 1 ? "h" : sprintf("h^%d", p)) at hmin / 1.08, refline(hmin, p) * 1.5 right font ",8" textcolor rgb "#777777"
}
set label 99 (act ? "key: fitted slope" : "key: fitted slope ± standard error (expected p + 1); filled markers: the fit's h") \
    at graph 1, graph 1.025 right font ",7" textcolor rgb "#777777"
set samples 50
nvalid = 0
do for [i=1:n] { nvalid = nvalid + finite_pts[i] }
if (nvalid == 0) {
  set format y "10^{%L}"
  set yrange [1e-16:1]
  set label 98 "no finite values" at graph 0.5, graph 0.5 center font ",9" textcolor rgb "#777777"
}
pt(i) = 4 + 2 * ((i - 1) % 6)
ycol(i) = act ? 3 : 2

# Only the methods with finite values get a curve (gnuplot warns about empty blocks); the others
# are listed in the key.
have = ""
none = ""
do for [i=1:n] { if (finite_pts[i] > 0) { have = have.sprintf(" %d", i) } else { none = none.sprintf(" %d", i) } }
# (gnuplot evaluates the expressions of an empty `for` once: keep them valid.)
I(k) = k <= words(have) ? word(have, k) + 0 : 1
J(k) = k <= words(none) ? word(none, k) + 0 : 1
P(k) = k <= words(refs) ? word(refs, k) + 0 : 1

eval pdf(keyed(4.8, n))
plot for [k=1:words(have)] block(I(k)) using 1:(fv(column(ycol(I(k))))) with linespoints \
       linecolor rgb lc(word(idx, I(k)) + 0) pointtype pt(I(k)) pointsize 1 linewidth 0.9 title ktitle(I(k)), \
     for [k=1:(act ? 0 : words(have))] block(I(k)) using 1:(infit(I(k), $1) ? fv(column(ycol(I(k)))) : NaN) \
       with points linecolor rgb lc(word(idx, I(k)) + 0) pointtype pt(I(k)) + 1 pointsize 1 notitle, \
     for [k=1:words(none)] keyentry with lines linecolor rgb "#FFFFFFFF" title ktitle(J(k)), \
     for [k=1:words(refs)] refline(x, P(k)) with lines dashtype 2 linewidth 0.6 linecolor rgb "#888888" notitle
eval png(keyed(4.8, n))
replot
unset output
