# Ensemble study: the unbiased variance over the initial conditions of E(t) − E0 against t (spec
# A11: linear growth = random-walk error, flat = bounded), log y, one line per method listed in
# the spec (or methods="I,J,..."). Run after plots/style.gp (usage there).

idx = method_indices(0)
names = exists("methods") ? labels_of(subst(methods, ",", " "), method_labels("")) : method_labels("--primary")
n = words(names)
sys = query("attr system")
T = query("attr T")
h = step_size(0)
count = query("attr count")

set title sprintf("%s, T = %s, h = %s\nvariance of E(t) − E₀ over %s initial conditions", wrap(sys, 50), T, h, count) noenhanced font ",9"
set logscale y
set format y "10^{%L}"
set xlabel "t" offset 0, 0.3
set ylabel "Var[E(t) − E_0]"
set xrange [0:*]
set key below left Left reverse font ",7" spacing 0.9 samplen 2 maxrows key_rows(n, longest(names)) height 1 invert

do for [b=0:n-1] { eval keep(b, dataset("dE_var", at_method(word(idx, b + 1) + 0))) }
eval pdf(below_key(3.8, n, longest(names)))
# t = 0 has variance 0 and drops out of the log scale. The first method is drawn last, on top.
plot for [b=n-1:0:-1] kept(b) using 1:($2 > 0 ? $2 : NaN) with lines linewidth 0.8 \
       linecolor rgb lc(b) title word(names, b + 1)
eval png(below_key(3.8, n, longest(names)))
replot
unset output
