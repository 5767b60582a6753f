# Ensemble study: the energy error E(t) − E0 against t.
#   method=I (I >= 0): the first `ics` trajectories (default 5) of method I, one line per IC;
#   method=-1 (default): the methods listed in the spec compared on initial condition `ic`
#                        (default 0), one line per method.
# relative=1 plots (E(t) − E0)/E0. Run after plots/style.gp (usage there).

if (!exists("method")) { method = -1 }
if (!exists("ics")) { ics = 5 }
if (!exists("ic")) { ic = 0 }
if (!exists("relative")) { relative = 0 }

names = method_names("")
sys = query("attr system")
T = query("attr T")
h = step_size(0)
count = query("attr count") + 0
rel = relative ? " --relative" : ""
dE = relative ? "(E(t) − E_0) / E_0" : "E(t) − E_0"

if (method >= 0) {
  k = ics < count ? ics : count
  data = export(sprintf("energy --method %d --ics 0:%d%s", method, k, rel))
  nblocks = k
  block_title(b) = sprintf("IC %d", b)
  set title sprintf("%s, T = %s, h = %s\n%s", wrap(sys, 50), T, h, word(names, method + 1)) noenhanced font ",9"
} else {
  primary = method_names("--primary")
  nblocks = words(primary)
  data = export(sprintf("energy-all-methods --ic %d%s", ic, rel))
  block_title(b) = word(primary, b + 1)
  set title sprintf("%s, T = %s, h = %s: initial condition %d", wrap(sys, 40), T, h, ic) noenhanced font ",9"
}

# Status of each block's run (the last word of its "# method ..." comment). Failed runs often blow
# up before they stop: when some runs succeeded, the y range fits those, the failed ones leave the
# frame, and the key marks them.
statuses = system(sprintf("%s | awk '/^# method/ {print $NF}'", data[3:]))
failed(b) = word(statuses, b + 1) ne "0"
nfailed = 0
ylo = NaN
yhi = NaN
do for [b=0:nblocks-1] {
  if (failed(b)) { nfailed = nfailed + 1 } else {
    stats data index b using 2 nooutput
    if (ylo != ylo || STATS_min < ylo) { ylo = STATS_min }
    if (yhi != yhi || STATS_max > yhi) { yhi = STATS_max }
  }
}
if (nfailed > 0 && nfailed < nblocks) { pad = 0.05 * (yhi - ylo) + 1e-300; set yrange [ylo - pad : yhi + pad] }
key_title(b) = block_title(b).(failed(b) ? " (failed)" : "")

set xlabel "t" offset 0, 0.3
set ylabel dE
set format y "%.1te%+T"
set key below left Left reverse font ",7" spacing 0.9 samplen 2 maxrows 4 height 1
set xrange [0:*]
set zeroaxis linetype 1 linecolor rgb "#bbbbbb" linewidth 0.5

eval pdf(3.8)
# Methods: the first (the spec's lead method) drawn last, on top; `key invert` keeps the key in
# method order.
if (method < 0) { set key invert; first = nblocks - 1; last = 0; step = -1 } else { first = 0; last = nblocks - 1; step = 1 }
# Slightly transparent lines (alpha byte 0x30), so overlapping trajectories stay visible.
lca(b) = "#30".lc(b)[2:7]
plot for [b=first:last:step] data index b using 1:2 with lines linewidth 0.7 linecolor rgb lca(b) title key_title(b)
eval png(3.8)
replot
unset output
