# Ensemble study: the energy error E(t) − E0 against t.
#   method=I (I >= 0): the first `ics` trajectories (default 5) of method I, one line per IC;
#   method=-1 (default): the methods listed in the spec compared on initial condition `ic`
#                        (default 0), one line per method.
# relative=1 plots (E(t) − E0)/E0. Run after plots/style.gp (usage there).

if (!exists("method")) { method = -1 }
if (!exists("ics")) { ics = 5 }
if (!exists("ic")) { ic = 0 }
if (!exists("relative")) { relative = 0 }

labels = method_labels("")
sys = query("attr system")
T = query("attr T")
h = step_size(0)
count = query("attr count") + 0
dE = relative ? "(E(t) − E_0) / E_0" : "E(t) − E_0"

# Block b (0-based) is the run of method block_m(b) from initial condition block_ic(b): dE [method,
# ic, sample] there, E0 and the run's status.
if (method >= 0) {
  nblocks = ics < count ? ics : count
  block_m(b) = method
  block_ic(b) = b
  block_title(b) = sprintf("IC %d", b)
  set title sprintf("%s, T = %s, h = %s\n%s", esc(wrap(sys, 50)), T, h, word(labels, method + 1)) enhanced font ",9"
} else {
  pidx = system(sprintf("%s export '%s' methods --primary | awk '!/^#/ {print $1}'", nhbench, file))
  primary = labels_of(pidx, labels)
  nblocks = words(primary)
  block_m(b) = word(pidx, b + 1) + 0
  block_ic(b) = ic
  block_title(b) = word(primary, b + 1)
  set title sprintf("%s, T = %s, h = %s: initial condition %d", wrap(sys, 40), T, h, ic) noenhanced font ",9"
}
run(b) = sprintf("--at method=%d --at ic=%d", block_m(b), block_ic(b))
block(b) = kept(b)
# Each run's E0 and status out of one read of each dataset: E0 [ic]; status [method, ic] along the
# figure's free dimension (the ICs of one method, or the methods on one IC).
E0s = values("E0", "")
statuses = values("status", method >= 0 ? at_method(method) : sprintf("--at ic=%d", ic))
array E0[nblocks]
array status[nblocks]
do for [b=0:nblocks-1] {
  eval keep(b, dataset("dE", run(b)))
  E0[b + 1] = word(E0s, block_ic(b) + 1) + 0
  status[b + 1] = word(statuses, (method >= 0 ? block_ic(b) : block_m(b)) + 1) + 0
}
y(b, v) = relative ? v / E0[b + 1] : v

# Failed runs (status != 0) often blow up before they stop: when some runs succeeded, the y range
# fits those, the failed ones leave the frame, and the key marks them.
failed(b) = status[b + 1] != 0
nfailed = 0
ylo = NaN
yhi = NaN
do for [b=0:nblocks-1] {
  if (failed(b)) { nfailed = nfailed + 1 } else {
    stats block(b) using (y(b, $2)) nooutput
    if (ylo != ylo || STATS_min < ylo) { ylo = STATS_min }
    if (yhi != yhi || STATS_max > yhi) { yhi = STATS_max }
  }
}
if (nfailed > 0 && nfailed < nblocks) { pad = 0.05 * (yhi - ylo) + 1e-300; set yrange [ylo - pad : yhi + pad] }
key_title(b) = block_title(b).(failed(b) ? " (failed)" : "")

set xlabel "t" offset 0, 0.3
set ylabel dE
set format y "%.1te%+T"
klen = 0
do for [b=0:nblocks-1] { if (strlen(key_title(b)) > klen) { klen = strlen(key_title(b)) } }
set key below left Left reverse font ",7" spacing 0.9 samplen 2 maxrows key_rows(nblocks, klen) height 1
set xrange [0:*]
set zeroaxis linetype 1 linecolor rgb "#bbbbbb" linewidth 0.5

eval pdf(below_key(3.8, nblocks, klen))
# Methods: the first (the spec's lead method) drawn last, on top; `key invert` keeps the key in
# method order.
if (method < 0) { set key invert; first = nblocks - 1; last = 0; step = -1 } else { first = 0; last = nblocks - 1; step = 1 }
# Slightly transparent lines (alpha byte 0x30), so overlapping trajectories stay visible.
lca(b) = "#30".lc(b)[2:7]
plot for [b=first:last:step] block(b) using 1:(y(b, $2)) with lines linewidth 0.7 linecolor rgb lca(b) title key_title(b)
eval png(below_key(3.8, nblocks, klen))
replot
unset output
