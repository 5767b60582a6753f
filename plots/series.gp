# Trajectory study (or an ensemble study that samples observables): the time series of one sampled
# observable, one curve per method, the line style telling the step sizes apart, one panel per
# component. Error-like observables (names starting with "error" or ending in "_error",
# discrete_constraint, constraint_residual, multiplier_error) are drawn as |value| on a log scale,
# the others on a linear scale with the exact (or reference) solution dotted on top when the file
# samples it too (energy with reference_energy, derived with derived_reference). NaN samples (a
# quantity at t = 0 that comes from a step, samples after a failure) are left out; methods that do
# not define the observable are listed in the key, without a curve; failed runs are named in the
# key and end with a cross, and the y range fits the runs that did not fail. The figure is as tall
# as its panels and key need (5 in wide). Run after plots/style.gp (usage there).
#   observable='NAME' (required); ic=K (default 0); hs='0 1' the h indices to draw (default all;
#   trajectory only); comps='A:B' the component range (default all); methods='0,2' (default: the
#   methods the spec lists).

if (!exists("observable")) { exit error "series.gp: set observable='NAME' (nhbench export FILE observables)" }
if (!exists("ic")) { ic = 0 }

kind = query("study")
traj = kind eq "trajectory"
sys = query("attr system")
T = query("attr T") + 0
ref_kind = traj ? query("attr reference") : "reference"
if (!exists("methods")) { methods = system(sprintf("%s export '%s' methods --primary | awk '!/^#/ {print $1}'", nhbench, file)) }
all_labels = method_labels("")
mname(m) = word(all_labels, m + 1)

# The observable: width, units, component labels (blanks as "~", put back for display).
obsrow = system(sprintf("%s export '%s' observables | awk '!/^#/ && $2 == \"%s\" {u = $4; for (i = 5; i <= NF; i++) u = u \" \" $i; print $3, u}'", nhbench, file, observable))
if (words(obsrow) < 2) { exit error sprintf("series.gp: %s has no observable '%s'", file, observable) }
width = word(obsrow, 1) + 0
units = obsrow[strlen(word(obsrow, 1)) + 2:]
labels = system(sprintf("%s export '%s' observables | awk '!/^#/ {cur = $2} cur == \"%s\" && /^#   components:/ {sub(/^#   components: /, \"\"); n = split($0, a, \", \"); for (i = 1; i <= n; i++) {gsub(/ /, \"~\", a[i]); print a[i]}}'", nhbench, file, observable))
label(c) = subst(word(labels, c + 1), "~", " ")
if (exists("comps")) { c0 = word(subst(comps, ":", " "), 1) + 0; c1 = word(subst(comps, ":", " "), 2) + 0 } else { c0 = 0; c1 = width - 1 }
if (c0 < 0 || c1 >= width || c1 < c0) { exit error sprintf("series.gp: comps='%d:%d' out of range: %s has %d components", c0, c1, observable, width) }
nc = c1 - c0 + 1
obslist = subst(system(sprintf("%s export '%s' observables | awk '!/^#/ {print $2}'", nhbench, file)), "\n", " ")
has_obs(name) = strstrt(" ".obslist." ", " ".name." ") > 0
len = strlen(observable)
# |value| on a log scale where the observables registry says so (export observables: "scale: log").
scale = system(sprintf("%s export '%s' observables | awk '!/^#/ {cur = $2} cur == \"%s\" && /^#   scale:/ {print $3; exit}'", nhbench, file, observable))
logy = scale eq "log"
# The axis shows the observable's symbol (export observables: "symbol:", enhanced text).
symbol = system(sprintf("%s export '%s' observables | awk '!/^#/ {cur = $2} cur == \"%s\" && /^#   symbol:/ {sub(/^#   symbol: /, \"\"); print; exit}'", nhbench, file, observable))
if (symbol eq "") { symbol = esc(observable) }
# A sampled reference of this very observable ("energy" and "reference_energy", "derived" and
# "derived_reference"), drawn dashed on top; and whether this observable is itself a reference
# (the same for every method: drawn once).
is_ref = (len > 10 && observable[len - 9:] eq "_reference") || (len > 10 && observable[1:10] eq "reference_")
partner = has_obs(observable."_reference") ? observable."_reference" : has_obs("reference_".observable) ? "reference_".observable : ""
if (logy || is_ref) { partner = "" }

# Step sizes (`export steps`) and, for a trajectory, the IC's name (`export ics`: the rest of its
# line after the index and the 2n coordinates, which the header counts).
hvals = system(sprintf("%s export '%s' steps | awk '!/^#/ {print $2}'", nhbench, file))
if (traj) {
  icname = system(sprintf("%s export '%s' ics | awk -v k=%d '/^# index/ {n = NF - 3} !/^#/ && $1 == k {for (i = 0; i <= n; i++) sub(/^[^ ]+ /, \"\"); print; exit}'", nhbench, file, ic))
  if (!exists("hs")) { hs = ""; do for [j=1:words(hvals)] { hs = hs.sprintf(" %d", j - 1) } }
} else {
  icname = ""
  hs = "0"
}
methods = subst(subst(methods, "\n", " "), ",", " ")
hs = subst(hs, "\n", " ")
nhs = words(hs)
hval(j) = j < words(hvals) ? word(hvals, j + 1) : sprintf("h[%d]", j)
ictext = sprintf("IC %d", ic).(icname ne "" ? " (".icname.")" : "")

# One line per run (method m, h index j) and component c: m j c status absent nvalid lo hi tlast,
# lo and hi over the finite values (|value| > 0 on a log scale), tlast the time of the last one.
AWK = 'BEGIN {st = -1} /^# absent for this method/ {ab = 1} /, status -?[0-9]+$/ {st = $NF} ' . \
      '!/^#/ && NF {for (c = c0; c <= c1; c++) {v = $(c + 2); if (v ~ /[Nn][Aa][Nn]|[Ii][Nn][Ff]/) continue; v += 0; ' . \
      'if (lg) {if (v < 0) v = -v; if (v == 0) continue} if (!(c in n)) {lo[c] = v; hi[c] = v} n[c]++; ' . \
      'if (v < lo[c]) lo[c] = v; if (v > hi[c]) hi[c] = v; tl[c] = $1}} ' . \
      'END {for (c = c0; c <= c1; c++) printf "%d %d %d %d %d %d %.17g %.17g %.17g\n", m, j, c, st, ab, n[c], lo[c], hi[c], tl[c]}'
src(m, j) = export(sprintf("series --observable %s --method %d%s --ic %d", observable, m, traj ? sprintf(" --h %d", j) : "", ic))
runs = system(sprintf("for m in %s; do for j in %s; do %s export '%s' series --observable %s --method $m%s --ic %d " . \
                      "| awk -v m=$m -v j=$j -v c0=%d -v c1=%d -v lg=%d '%s'; done; done", \
                      methods, hs, nhbench, file, observable, traj ? " --h $j" : "", ic, c0, c1, logy, AWK))
nm = words(methods)
nruns = nm * nhs
R(r, c, k) = word(runs, ((r - 1) * nc + c - c0) * 9 + k)
run_m(r) = R(r, c0, 1) + 0
run_j(r) = R(r, c0, 2) + 0
run_status(r) = R(r, c0, 4) + 0
run_absent(r) = R(r, c0, 5) + 0
run_n(r, c) = R(r, c, 6) + 0
run_lo(r, c) = R(r, c, 7) + 0
run_hi(r, c) = R(r, c, 8) + 0
run_tlast(r, c) = R(r, c, 9) + 0
if (words(runs) != nruns * nc * 9) { exit error sprintf("series.gp: %s: could not read the runs of %s", file, observable) }

# Per method: defined at all, and which of its runs failed (results/README.md, status codes).
status_name(st) = st == 1 ? "solver failed" : st == 2 ? "non-finite" : st == 3 ? "diverged" : st == 4 ? "timed out" : sprintf("status %d", st)
array m_absent[nm]
array m_failed[nm]
do for [i=1:nm] {
  m_absent[i] = 1
  fh = ""
  fst = 0
  do for [jj=1:nhs] {
    r = (i - 1) * nhs + jj
    if (!run_absent(r)) { m_absent[i] = 0 }
    if (run_status(r) != 0) {
      fh = fh.(fh eq "" ? "" : ", ").hval(run_j(r))
      fst = fst == 0 || fst == run_status(r) ? run_status(r) : -1
    }
  }
  # "diverged", "diverged: h = 1, 0.5", or "failed: h = 1, 0.5" when the statuses differ.
  m_failed[i] = fh eq "" ? "" : (fst > 0 ? status_name(fst) : "failed").(nhs > 1 ? ": h = ".fh : "")
}
# A reference observable is the same for every method: one curve, from the first run that has it
# with the finest h drawn.
jfine = word(hs, 1) + 0
do for [jj=1:nhs] { if (hval(word(hs, jj) + 0) + 0 < hval(jfine) + 0) { jfine = word(hs, jj) + 0 } }
ref_run = 0
if (is_ref) {
  do for [r=1:nruns] { if (ref_run == 0 && run_j(r) == jfine && run_n(r, c0) > 0) { ref_run = r } }
}
# The partner reference: from the first method, finest h.
ref_src = partner ne "" ? export(sprintf("series --observable %s --method %d%s --ic %d", partner, word(methods, 1) + 0, traj ? sprintf(" --h %d", jfine) : "", ic)) : "+"
ref_title = ref_kind eq "exact" ? "exact solution" : ref_kind eq "none" ? "reference" : ref_kind." reference"

# Key entries: one per method (colour), one per h when there are several (line style).
dtj(pos) = pos == 1 ? 1 : pos == 2 ? 2 : pos == 3 ? 4 : 5
# The position (1, 2, ...) of h index j in hs.
hpos(j) = strstrt(" ".hs." ", sprintf(" %d ", j)) > 0 ? words((" ".hs." ")[1:strstrt(" ".hs." ", sprintf(" %d ", j))]) + 1 : 1
mtitle(i) = mname(word(methods, i) + 0).(m_absent[i] ? "  (not defined)" : m_failed[i] ne "" ? "  (".m_failed[i].")" : "")
# The key is filled row by row: the methods (and the reference), blanks to the end of their last
# row, then the step sizes.
maxlen = 0
if (!is_ref) { do for [i=1:nm] { if (strlen(mtitle(i)) > maxlen) { maxlen = strlen(mtitle(i)) } } }
ncols = maxlen > 40 ? 1 : maxlen > 24 ? 2 : 3
nkey1 = is_ref ? 1 : nm + (partner ne "" ? 1 : 0)
nmax = nkey1 > (is_ref || nhs == 1 ? 0 : nhs) ? nkey1 : nhs
if (nmax < ncols) { ncols = nmax }
rows1 = int((nkey1 + ncols - 1) / ncols)
npad = is_ref || nhs == 1 ? 0 : rows1 * ncols - nkey1
keyrows = rows1 + (is_ref || nhs == 1 ? 0 : int((nhs + ncols - 1) / ncols))
curve_dt(j) = is_ref ? 1 : dtj(hpos(j))
# Key entry li of the row-by-row list: width, colour, dash type, title. gnuplot fills a key column
# by column: slot(s) is the entry that belongs in slot s.
nL = nkey1 + npad + (is_ref || nhs == 1 ? 0 : nhs)
slot(s) = (s % keyrows) * ncols + int(s / keyrows)
kind_of(li) = li >= nL ? 0 : is_ref ? 2 : li < nm ? 1 : li < nkey1 ? 2 : li < nkey1 + npad ? 0 : 3
kw(li) = kind_of(li) == 1 ? 1.2 : 0.8
kc(li) = kind_of(li) == 0 ? "#FFFFFFFF" : kind_of(li) == 1 ? (m_absent[li + 1] ? "#FFFFFFFF" : lc(word(methods, li + 1) + 0)) : \
         kind_of(li) == 2 ? "#000000" : "#555555"
kd(li) = kind_of(li) == 2 ? (is_ref ? 1 : 3) : kind_of(li) == 3 ? dtj(li - nkey1 - npad + 1) : 1
kt(li) = kind_of(li) == 0 ? " " : kind_of(li) == 1 ? mtitle(li + 1) : kind_of(li) == 2 ? ref_title : "h = ".hval(word(hs, li - nkey1 - npad + 1) + 0)

# Layout in inches: title, panels, x label and key.
title1 = wrap(sys, 62)
title_lines = words(subst(subst(title1, " ", "_"), "\n", " "))
title_h = 0.12 + 0.18 * title_lines + 0.22 + (nc == 1 ? 0 : 0.18)
panel_h = nc == 1 ? 2.5 : 1.45
gap = 0.32
bottom_h = 0.5 + 0.1 * keyrows
H = title_h + nc * panel_h + (nc - 1) * gap + bottom_h
ytop(p) = 1 - (title_h + p * (panel_h + gap)) / H
ybot(p) = ytop(p) - panel_h / H

# Observables whose units differ per component carry them in the component labels.
units_shown = strstrt(units, "labels") ? "" : " [".units."]"
title2 = observable.units_shown.", T = ".num(T).", ".ictext.(nhs == 1 || is_ref ? ", h = ".hval(jfine) : "")
# Linear tick labels with enough digits to tell the ticks apart (an energy that varies by 1e-8).
digits(lo, hi) = hi > lo ? int(ceil(log10((abs(lo) > abs(hi) ? abs(lo) : abs(hi)) / (hi - lo)))) + 2 : 3
clampd(d) = d < 3 ? 3 : d > 12 ? 12 : d

do for [termk=1:2] {
  if (termk == 1) { eval pdf(H) } else { eval png(H) }
  set multiplot
  do for [p=0:nc-1] {
    c = c0 + p
    reset
    set border 3 linewidth 0.8
    set tics nomirror out scale 0.6
    set grid back linetype 1 linecolor rgb "#e6e6e6" linewidth 0.6
    set key enhanced
    set lmargin at screen 0.17
    set rmargin at screen 0.96
    set tmargin at screen ytop(p)
    set bmargin at screen ybot(p)
    set xrange [0:T]
    if (p == 0) {
      set label 101 title1 at screen 0.5, screen 1 - 0.08 / H center front noenhanced font ",9"
      set label 102 title2 at screen 0.5, screen 1 - (0.1 + 0.18 * title_lines) / H center front noenhanced font ",8"
    }
    if (nc > 1) { set title label(c) noenhanced font ",8" offset 0, -0.6 }
    unit_text = strstrt(units, "labels") ? "" : "[".units."]"
    # The y label at a fixed distance from the page edge, so that the panels' labels line up.
    ylab = nc == 1 ? (logy && strstrt(symbol, "‖") != 1 ? "|".symbol."|  " : symbol."  ").unit_text : (logy ? "|·|  " : "").unit_text
    set label 104 ylab at screen 0.03, screen (ytop(p) + ybot(p)) / 2 center rotate by 90 enhanced font ",9"
    # describe=1 (gnuplot -e): the y axis's label, on stderr (tests/cli/test_plots.sh reads it).
    if (exists("describe") && termk == 1) { print "y label: ".ylab }
    if (p == nc - 1) { set xlabel "t" offset 0, 0.3 } else { set format x "" }

    # The curves of this panel: the defined runs with finite values; their y extent, and that of
    # the runs that did not fail.
    curves = ""
    fcurves = ""
    any_lo = NaN; any_hi = NaN; ok_lo = NaN; ok_hi = NaN; nfail = 0
    do for [r=1:nruns] {
      if (!run_absent(r) && run_n(r, c) > 0 && (!is_ref || r == ref_run)) {
        curves = curves.sprintf(" %d", r)
        if (any_lo != any_lo || run_lo(r, c) < any_lo) { any_lo = run_lo(r, c) }
        if (any_hi != any_hi || run_hi(r, c) > any_hi) { any_hi = run_hi(r, c) }
        if (run_status(r) == 0) {
          if (ok_lo != ok_lo || run_lo(r, c) < ok_lo) { ok_lo = run_lo(r, c) }
          if (ok_hi != ok_hi || run_hi(r, c) > ok_hi) { ok_hi = run_hi(r, c) }
        } else { nfail = nfail + 1; fcurves = fcurves.sprintf(" %d", r) }
      }
    }
    nodata = words(curves) == 0
    if (logy) {
      set logscale y
      if (nodata) { set yrange [0.1:10] } else {
        if (nfail > 0 && ok_lo == ok_lo) { set yrange [ok_lo / 2 : ok_hi * 2] }
        span = (ok_lo == ok_lo && nfail > 0) ? ok_hi / ok_lo : any_hi / any_lo
        if (span > 100) { set format y "10^{%L}" } else { set format y "%g" }
        if (!(nfail > 0 && ok_lo == ok_lo) && any_lo == any_hi) { set yrange [any_lo / 3 : any_hi * 3] }
      }
    } else {
      if (nodata) { set yrange [0:1] } else {
        lo = (nfail > 0 && ok_lo == ok_lo) ? ok_lo : any_lo
        hi = (nfail > 0 && ok_lo == ok_lo) ? ok_hi : any_hi
        pad = hi > lo ? 0.05 * (hi - lo) : (abs(lo) > 0 ? 0.01 * abs(lo) : 1)
        if ((nfail > 0 && ok_lo == ok_lo) || hi == lo) { set yrange [lo - pad : hi + pad] }
        set format y sprintf("%%.%dg", clampd(digits(lo, hi)))
      }
    }
    # Failed runs end with a cross at their last finite sample.
    if (nfail > 0) {
      set label 105 "×: the last sample of a failed run" at graph 1, graph 1.03 right font ",7" textcolor rgb "#777777"
    }
    if (nodata) {
      set label 103 "no finite values" at graph 0.5, graph 0.5 center font ",9" textcolor rgb "#777777"
      set format y ""
    }
    if (p == nc - 1) {
      set key at screen 0.5, screen (bottom_h - 0.42) / H center top vertical maxrows keyrows \
          Left reverse font ",7" spacing 0.9 samplen 2.5 width 1 noenhanced
    } else { unset key }
    fy(v) = logy ? (abs(v) > 0 && abs(v) < 1e300 ? abs(v) : NaN) : (abs(v) < 1e300 ? v : NaN)

    # (gnuplot evaluates the expressions of an empty `for` once: keep them valid.)
    CR(k) = k <= words(curves) ? word(curves, k) + 0 : 1
    FR(k) = k <= words(fcurves) ? word(fcurves, k) + 0 : 1
    plot for [k=1:words(curves)] src(run_m(CR(k)), run_j(CR(k))) \
           using 1:(fy(column(c + 2))) with lines linewidth 0.8 \
           linecolor rgb (is_ref ? "#000000" : "#30".lc(run_m(CR(k)))[2:7]) \
           dashtype curve_dt(run_j(CR(k))) notitle, \
         for [k=1:words(fcurves)] src(run_m(FR(k)), run_j(FR(k))) \
           using ($1 == run_tlast(FR(k), c) ? $1 : NaN):(fy(column(c + 2))) with points \
           pointtype 2 pointsize 1.2 linewidth 1.2 linecolor rgb lc(run_m(FR(k))) notitle, \
         for [q=1:(partner ne "" ? 1 : 0)] ref_src using 1:(fy(column(c + 2))) with lines linewidth 0.9 \
           linecolor rgb "#000000" dashtype 3 notitle, \
         for [s=0:(p == nc - 1 ? keyrows * ncols - 1 : -1)] keyentry with lines \
           linewidth kw(slot(s)) linecolor rgb kc(slot(s)) dashtype kd(slot(s)) title kt(slot(s))
    unset label 103
    unset label 105
  }
  unset multiplot
}
unset output
