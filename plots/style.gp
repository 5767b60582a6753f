# Shared settings for the nhbench plot scripts; run it before a script in one gnuplot session:
#   gnuplot -e "file='results/x.h5'; out='results/plots/x_convergence'; nhbench='build/nhbench'" \
#           plots/style.gp plots/convergence.gp
# file: the results file; out: the output path without extension (each script writes out.pdf and
# out.png); nhbench: the nhbench executable (default: nhbench on PATH). Data are read through
# `nhbench export` (results/README.md, "Export tables"): datasets as they are through its one slice
# (`export FILE dataset`, results/slice.c), the views that arrange several (work-precision rows,
# grid cells, an observable's components) through their tables.

if (!exists("file")) { exit error "plots: set file='RESULTS.h5' (gnuplot -e \"file='...'; out='...'\")" }
if (!exists("out")) { exit error "plots: set out='OUTPUT_PATH' (without extension)" }
if (!exists("nhbench")) { nhbench = "nhbench" }

# "< nhbench export 'file' TABLE": a data source; query(): the output of an export as a string.
export(table) = sprintf("< %s export '%s' %s", nhbench, file, table)
query(table) = system(sprintf("%s export '%s' %s", nhbench, file, table))
# "< nhbench export 'file' dataset NAMES AT": the datasets NAMES (comma-separated) side by side,
# after the coordinates of their free dimensions, sliced by AT ("--at method=2"); values(NAME, AT):
# the one dataset's values, the last column of its rows, as a string of words (a dimension of size
# 1 is fixed, so its coordinate column is not there: one method, one initial condition).
dataset(names, at) = sprintf("< %s export '%s' dataset %s %s", nhbench, file, names, at)
values(name, at) = system(sprintf("%s export '%s' dataset %s %s | awk '!/^#/ && NF {print $NF}'", nhbench, file, name, at))
at_method(m) = sprintf("--at method=%d", m)
# `eval keep(k, SRC)` reads data source SRC ("< command", as export() and dataset() give it) once
# into datablock kept(k), which the figure then draws, stats and replots as often as it needs: each
# `nhbench export` is a process that opens the file (the figures' time was mostly these).
kept(k) = sprintf("$K%d", k)
keep(k, src) = sprintf("set print %s; print system(\"%s\"); unset print", kept(k), src[3:])
# The indices of the methods a figure shows: methods='I,J,...' if given, else those the spec listed.
method_indices(dummy) = exists("methods") ? subst(methods, ",", " ") : system(sprintf("%s export '%s' methods --primary | awk '!/^#/ {print $1}'", nhbench, file))
# Step size j (0-based) from the `steps` table: an ensemble's one is step_size(0).
step_size(j) = system(sprintf("%s export '%s' steps | awk -v j=%d '!/^#/ && $1 == j {print $2}'", nhbench, file, j))
# Method names by index, from the `methods` table (names contain no blanks).
method_names(opt) = system(sprintf("%s export '%s' methods %s | awk '!/^#/ {print $2}'", nhbench, file, opt))
# What the figures call the methods, by index: the `methods` table's labels (the spec's `labels`, or
# the name without default parameters), in enhanced text, as double-quoted words: word(L, i) is the
# label of the i-th (a label holds no '"'; blanks and quotes ' inside are kept). Joined, not
# sprintf'd: gnuplot 5.4's sprintf cuts some results whose format holds "%%" (tests/cli/test_plots.sh).
method_labels(opt) = system(nhbench." export '".file."' methods ".opt." --format tsv | awk -F'\\t' 'NR > 1 {printf \"\\\"%s\\\" \", $3}'")
# The labels of the methods with indices idx ("0 2 5"), out of all (method_labels("")), as above.
_labels_from(idx, all, k) = k > words(idx) ? "" : "\"".word(all, word(idx, k) + 1)."\" "._labels_from(idx, all, k + 1)
labels_of(idx, all) = _labels_from(idx, all, 1)

# Both terminals: draw once after `eval pdf(HEIGHT)`, then `eval png(HEIGHT); replot`, HEIGHT in
# inches (width 5 in). The PNG is the PDF at 200 dpi.
pdf(height) = sprintf("set terminal pdfcairo enhanced color size 5in,%gin font 'DejaVu Sans,10' linewidth 1.5 rounded; set output '%s.pdf'", height, out)
png(height) = sprintf("set terminal pngcairo enhanced color size 1000,%d font 'DejaVu Sans,10' fontscale 1.9 linewidth 2.5 rounded; set output '%s.png'", int(200 * height), out)
# The height of a figure whose key lists n entries one a line below the plot: HEIGHT for up to 6,
# then 0.1 in more per entry, so that a long key takes its own room instead of the plot's.
keyed(height, n) = height + (n > 6 ? 0.1 * (n - 6) : 0)

# Colour-blind-safe line colours (Okabe-Ito), then a few more.
array LC[10] = ["#0072B2", "#D55E00", "#009E73", "#CC79A7", "#E69F00", "#56B4E9", "#000000", "#882255", "#999999", "#44AA99"]
lc(i) = LC[i % 10 + 1]

set border 3 linewidth 0.8
set tics nomirror out scale 0.6
set grid back linetype 1 linecolor rgb "#e6e6e6" linewidth 0.6
# Key entries are enhanced text: method labels such as "Ψ^{0.1}_h" (the spec's `labels`).
set key enhanced
set encoding utf8

# String helpers. subst(s, a, b): every a in s replaced by b. wrap(s, w): s broken into lines of at
# most w characters after a ',' or '(' where possible (long system names in titles).
subst(s, a, b) = strstrt(s, a) == 0 ? s : s[1:strstrt(s, a) - 1].b.subst(s[strstrt(s, a) + strlen(a):], a, b)
_brk(s, k) = k < 2 ? 0 : (s[k:k] eq "," || s[k:k] eq "(" ? k : _brk(s, k - 1))
wrap(s, w) = strlen(s) <= w || _brk(s, w) == 0 ? s : s[1:_brk(s, w)]."\n".wrap(s[_brk(s, w) + 1:], w)
# The length of the longest of a list of double-quoted words (labels), in characters; and how many
# key columns fit titles of up to len characters on a 5 in wide figure at font size 7.
longest(L) = _longest(L, 1, 0)
_longest(L, k, m) = k > words(L) ? m : _longest(L, k + 1, strlen(word(L, k)) > m ? strlen(word(L, k)) : m)
key_columns(len) = len > 40 ? 1 : len > 22 ? 2 : 3
# A key of n titles of up to len characters below a plot of HEIGHT inches: the rows it takes, and
# the figure's height with 0.14 in for each row past 4, so that the key never takes the plot's room.
key_rows(n, len) = int(ceil(n * 1.0 / key_columns(len)))
below_key(height, n, len) = height + 0.14 * (key_rows(n, len) > 4 ? key_rows(n, len) - 4 : 0)
# esc(s): s shown as written in enhanced text (a system's name keeps its underscores).
# The step sizes HS (words, ascending) as x tics of a log axis: a tic at each, labelled where the
# labels fit (about 55 characters across the plot): every k-th, counted from the largest h.
_chars(L, k) = k > words(L) ? 0 : strlen(word(L, k)) + 1 + _chars(L, k + 1)
h_label_every(hs) = _chars(hs, 1) > 55 ? int(ceil(_chars(hs, 1) / 55.0)) : 1
h_tics(hs) = sprintf("set xtics (); do for [k=1:%d] { set xtics add (((%d - k) %% %d == 0 ? word('%s', k) : '') word('%s', k) + 0) }", words(hs), words(hs), h_label_every(hs), hs, hs)
esc(s) = subst(subst(subst(subst(s, "_", "\\_"), "^", "\\^"), "{", "\\{"), "}", "\\}")
# A number as text, short: 0.05, 1e-05, 400.
num(x) = sprintf("%.6g", x)
