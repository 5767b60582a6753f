# Ensemble study: the parameter map of grid `grid` (default 0), e.g. (β, β') of nh_newmark,
# coloured by a drift statistic over the initial conditions that ran to T: stat (default
# median_max_abs_dE, see nhbench export --help) on a log10 scale (signed linear scale for
# mean_drift_slope). Each cell shows its value; "*" marks cells where some ICs failed, grey
# cells every IC failed, "skip" a parameter pair that was not run. The dashed line is
# β + β' = 1/2 (Remark 3.3). Run after plots/style.gp (usage there).

if (!exists("grid")) { grid = 0 }
if (!exists("stat")) { stat = "median_max_abs_dE" }

data = export(sprintf("grid --grid %d --stat %s", grid, stat))
sys = query("attr system")
T = query("attr T")
h = step_size(0)
count = query("attr count")
tmpl = query(sprintf("attr grid%d/method", grid))
p0 = query(sprintf("attr grid%d/param0", grid))
p1 = query(sprintf("attr grid%d/param1", grid))
symbol(p) = p eq "beta" ? "β" : p eq "beta2" ? "β'" : p eq "alpha" ? "α" : p
uselog = stat ne "mean_drift_slope"
val(v) = uselog ? (v > 0 ? log10(v) : NaN) : v
stat_text = stat eq "median_max_abs_dE" ? "median over ICs of max_t |E(t) − E_0|" : \
            stat eq "max_max_abs_dE" ? "max over ICs of max_t |E(t) − E_0|" : \
            stat eq "mean_drift_slope" ? "mean over ICs of the drift slope d(E − E_0)/dt" : \
            stat eq "median_abs_drift_slope" ? "median over ICs of |drift slope|" : \
            stat eq "final_var" ? "Var[E(T) − E_0] over ICs" : stat

stats data using 7:8 nooutput
x0 = STATS_min_x
x1 = STATS_max_y
stats data using 9:10 nooutput
y0 = STATS_min_x
y1 = STATS_max_y
stats data using (val($3)) nooutput
have_values = exists("STATS_records") && STATS_records > 0
if (have_values) { vmin = STATS_min; vmax = STATS_max } else { vmin = 0; vmax = 1 }
if (vmax - vmin < 1e-12) { vmin = vmin - 0.5; vmax = vmax + 0.5 }
# A signed statistic: a diverging palette, symmetric about 0.
if (!uselog) { a = abs(vmin) > abs(vmax) ? abs(vmin) : abs(vmax); vmin = -a; vmax = a }
# Label colour: white on the dark parts of the palette, black on the light parts.
textrgb(v) = uselog ? ((v - vmin) / (vmax - vmin) < 0.6 ? 0xffffff : 0x000000) : (abs(v) / vmax > 0.6 ? 0xffffff : 0x000000)
celltext(v, failed) = sprintf(uselog ? "%.2g%s" : "%.0e%s", v, failed > 0 ? "*" : "")

# The grid's method without the two parameters it sweeps (the stored template names one point
# of the grid, e.g. beta=0,beta2=0): "nh_newmark(alpha=0.5,constraint=point) over (β, β')".
first_end(r) = (c = strstrt(r, ","), pp = strstrt(r, ")"), c > 0 && (pp == 0 || c < pp) ? c : pp)
cut_open(s, i) = (r = s[i + 1:], j = first_end(r), r[j:j] eq "," ? s[1:i] . r[j + 1:] : s[1:i] . r[j:])
cut_comma(s, i) = (r = s[i + 1:], j = first_end(r), s[1:i - 1] . r[j:])
cut_param(s, name) = strstrt(s, "(".name."=") > 0 ? cut_open(s, strstrt(s, "(".name."=")) : \
                     strstrt(s, ",".name."=") > 0 ? cut_comma(s, strstrt(s, ",".name."=")) : s
family = sprintf("%s over (%s, %s)", cut_param(cut_param(tmpl, p0), p1), symbol(p0), symbol(p1))
set title sprintf("%s, T = %s, h = %s, %s ICs\n%s", wrap(sys, 45), T, h, count, family) noenhanced font ",9"
if (exists("describe")) { print "title: ".family }
set xlabel symbol(p0)
set ylabel symbol(p1)
v0s = system(sprintf("%s export '%s' grid --grid %d | awk '!/^#/ && NF {print $1}' | sort -gu", nhbench, file, grid))
v1s = system(sprintf("%s export '%s' grid --grid %d | awk '!/^#/ && NF {print $2}' | sort -gu", nhbench, file, grid))
set xtics ()
set ytics ()
do for [k=1:words(v0s)] { set xtics add (word(v0s, k) word(v0s, k) + 0) }
do for [k=1:words(v1s)] { set ytics add (word(v1s, k) word(v1s, k) + 0) }
set xrange [x0:x1]
set yrange [y0:y1]
set size ratio -1
set tics out nomirror
set grid noxtics noytics
set border 15 linewidth 0.8
if (uselog) {
  set palette defined (0 '#440154', 1 '#482878', 2 '#3e4989', 3 '#31688e', 4 '#26828e', 5 '#1f9e89', 6 '#35b779', 7 '#6ece58', 8 '#b5de2b', 9 '#fde725')  # viridis
} else {
  set palette defined (0 '#2166ac', 1 '#67a9cf', 2 '#d1e5f0', 3 '#f7f7f7', 4 '#fddbc7', 5 '#ef8a62', 6 '#b2182b')  # blue-white-red
}
set cbrange [vmin:vmax]
set cblabel (uselog ? "log_{10} " : "").stat_text font ",9"
set colorbox vertical user origin graph 1.04, graph 0 size character 1.2, graph 1
set rmargin 14
set key below center horizontal font ",8" samplen 1.5 height 0.5

eval pdf(4.4)
plot data using ($4 >= 0 && $5 < $6 ? $1 : NaN):2:7:8:9:10:(val($3)) with boxxyerror \
       fillstyle solid 1.0 border linecolor rgb "white" linewidth 0.5 linecolor palette notitle, \
     data using ($4 >= 0 && $5 == $6 ? $1 : NaN):2:7:8:9:10 with boxxyerror \
       fillstyle solid 1.0 border linecolor rgb "white" linecolor rgb "#c8c8c8" title "every IC failed", \
     data using ($4 < 0 ? $1 : NaN):2:7:8:9:10 with boxxyerror \
       fillstyle pattern 4 border linecolor rgb "#999999" linecolor rgb "#999999" title "skipped", \
     data using ($4 >= 0 && $5 < $6 ? $1 : NaN):2:(celltext(val($3), $5)):(textrgb(val($3))) with labels \
       font ",6" textcolor rgb variable notitle, \
     0.5 - x with lines dashtype 2 linewidth 0.8 linecolor rgb "black" title symbol(p0)." + ".symbol(p1)." = 1/2"
eval png(4.4)
replot
unset output
