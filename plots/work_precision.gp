# Work-precision study: the error at T against the counted work (x='work', default: rhs +
# Jacobian + constraint evaluations) or the wall time (x='time': the median of the repeats),
# log-log, one line per method through its step sizes. Pareto-efficient runs (no other run has
# smaller-or-equal error and work, one strictly; as the writer flagged them) are drawn as larger
# filled markers, and the Pareto front, the least error reached within a budget, as a grey
# staircase behind. Failed or timed-out runs have no error and no marker; the key counts them.
# norm='q_2' plots the error in another norm (the Pareto flags stay those of the file's
# pareto_norm). Run after plots/style.gp (usage there); methods='0,2' picks methods.

if (!exists("x")) { x = "work" }
if (x ne "work" && x ne "time") { exit error "work_precision.gp: x='work' or x='time'" }
bytime = x eq "time"
pnorm = query("attr pareto_norm")
if (!exists("norm")) { norm = pnorm }
opt = (exists("methods") ? " --methods ".methods : "")." --norm ".norm
data = export("work_precision".opt)
sys = query("attr system")
T = query("attr T")
repeats = query("attr repeats")
idx = system(sprintf("%s | awk '/^# method / {print $3}'", data[3:]))
names = labels_of(idx, method_labels(""))
n = words(idx)
# Per block: finite points, and failed runs (status != 0).
stat_of(b, what) = system(sprintf("%s | awk -v b=%d '/^# method / {k++} !/^#/ && NF && k == b {if ($7 == 4) to++; else if ($7 != 0) f++; else if ($4 !~ /[Nn][Aa][Nn]|[Ii][Nn][Ff]/ && $4 > 0) c++} END {print %s + 0}'", data[3:], b, what)) + 0
array finite_pts[n]
array failed[n]
array timedout[n]
do for [i=1:n] { finite_pts[i] = stat_of(i, "c"); failed[i] = stat_of(i, "f"); timedout[i] = stat_of(i, "to") }
hs = system(sprintf("%s | awk '!/^#/ && NF {print $1}' | sort -gru", data[3:]))
hs_text = words(hs) == 1 ? word(hs, 1) : words(hs) == 2 ? word(hs, 1).", ".word(hs, 2) : word(hs, 1)." … ".word(hs, words(hs))
xcol = bytime ? 3 : 2
pcol = bytime ? 6 : 5
fv(v) = v > 0 && v < 1e300 ? v : NaN
# The front: every flagged run by increasing work (time), as a staircase that runs on to the
# largest work (time) drawn.
# (No "%%" in gnuplot sprintf formats: gnuplot 5.4 then cuts the text after it.)
XEXT = '!/^#/ && NF && $x !~ /[Nn][Aa][Nn]|[Ii][Nn][Ff]/ && $x > 0 && $4 !~ /[Nn][Aa][Nn]|[Ii][Nn][Ff]/ ' . \
       '{if (!c++) lo = hi = $x; if ($x < lo) lo = $x; if ($x > hi) hi = $x} END {printf "%.17g %.17g", lo + 0, hi + 0}'
xext = system(data[3:]." | awk -v x=".sprintf("%d", xcol)." '".XEXT."'")
xmin = word(xext, 1) + 0
xmax = word(xext, 2) + 0
front = sprintf("< %s | awk '!/^#/ && NF && $%d == 1 && $4 !~ /[Nn][Aa][Nn]|[Ii][Nn][Ff]/ {print $%d, $4}' | sort -g | awk '{print} END {if (NR) print %.17g, $2}'", data[3:], pcol, xcol, xmax)
nfront = system(sprintf("%s | awk '!/^#/ && NF && $%d == 1 && $4 !~ /[Nn][Aa][Nn]|[Ii][Nn][Ff]/' | wc -l", data[3:], pcol)) + 0

normtext(s) = s eq "qv_max" ? "‖(q,v)_h(T) − (q,v)(T)‖_∞" : s eq "qv_2" ? "‖(q,v)_h(T) − (q,v)(T)‖_2" : \
              s eq "q_max" ? "‖q_h(T) − q(T)‖_∞" : s eq "q_2" ? "‖q_h(T) − q(T)‖_2" : \
              s eq "v_max" ? "‖v_h(T) − v(T)‖_∞" : s eq "v_2" ? "‖v_h(T) − v(T)‖_2" : s
set title sprintf("%s\nerror at T = %s (%s norm) against %s, h = %s", wrap(sys, 62), T, norm, \
                  bytime ? "wall time" : "work", hs_text) noenhanced font ",9"
set label 99 sprintf("filled: Pareto-efficient in %s%s; grey: the front", bytime ? "error and time" : "error and work", \
                     norm ne pnorm ? " (".pnorm." norm)" : "") at graph 1, graph 1.025 right font ",7" textcolor rgb "#777777" noenhanced
set logscale xy
set xlabel (bytime ? sprintf("wall time [s] (median of %s runs)", repeats) : "work (rhs + Jacobian + constraint evaluations)") offset 0, 0.4
set ylabel "error  ".normtext(norm)
set format y "10^{%L}"
set format x (bytime ? "10^{%L}" : "%g")
set mxtics default
set key below left Left reverse font ",7" spacing 0.9 samplen 2.5 height 1.2
nvalid = 0
do for [i=1:n] { nvalid = nvalid + finite_pts[i] }
if (nvalid > 0 && xmin > 0) { set xrange [xmin / 1.4 : xmax * 1.4] }
if (nvalid == 0) {
  set xrange [1:10]
  set yrange [1e-16:1]
  set format y "%g"
  set label 98 "no finite values" at graph 0.5, graph 0.5 center font ",9" textcolor rgb "#777777"
}
have = ""
none = ""
do for [i=1:n] { if (finite_pts[i] > 0) { have = have.sprintf(" %d", i) } else { none = none.sprintf(" %d", i) } }
# (gnuplot evaluates the expressions of an empty `for` once: keep them valid.)
I(k) = k <= words(have) ? word(have, k) + 0 : 1
J(k) = k <= words(none) ? word(none, k) + 0 : 1
pt(i) = 4 + 2 * ((i - 1) % 6)
notes(i) = (failed[i] > 0 ? sprintf("%d failed", failed[i]) : "").(failed[i] > 0 && timedout[i] > 0 ? ", " : "") \
           .(timedout[i] > 0 ? sprintf("%d timed out", timedout[i]) : "")
ktitle(i) = word(names, i).(notes(i) ne "" ? "   (".notes(i).")" : finite_pts[i] == 0 ? "   (no finite errors)" : "")

eval pdf(keyed(4.8, n))
plot for [q=1:(nfront > 0 ? 1 : 0)] front using 1:2 with steps linewidth 5 linecolor rgb "#d9d9d9" title "Pareto front", \
     for [k=1:words(have)] data index (I(k) - 1) using (fv(column(xcol))):(fv($4)) with linespoints \
       linecolor rgb lc(word(idx, I(k)) + 0) pointtype pt(I(k)) pointsize 0.8 linewidth 0.9 title ktitle(I(k)), \
     for [k=1:words(have)] data index (I(k) - 1) using (column(pcol) == 1 ? fv(column(xcol)) : NaN):(fv($4)) \
       with points linecolor rgb lc(word(idx, I(k)) + 0) pointtype pt(I(k)) + 1 pointsize 1.6 notitle, \
     for [k=1:words(none)] keyentry with lines linecolor rgb "#FFFFFFFF" title ktitle(J(k))
eval png(keyed(4.8, n))
replot
unset output
