# edge-vs-cloud.gp — where should the draft run? One panel per metric (mean
# ITL, GPU-seconds per 1000 tokens, GPU rent per million tokens), one cell
# per (RTT, tenants) point of scenarios/paper/edge-vs-cloud.yaml. A cell's
# colour is the variant with the lowest mean; its number is best edge
# variant / best cloud variant (< 1: drafting on the phone wins). A thick
# frame marks a point where edge drafting wins beyond the CIs; "≈" and a
# dashed frame, one where the two best differ by less than their 95% CI
# half-widths together (no winner can be called). Winner map rather than
# curves: five variants x three metrics x 48 points do not read as lines,
# and the question is which wins where.
# Usage: gnuplot -c scripts/edge-vs-cloud.gp WIN.csv OUT [USD_PER_GPU_HOUR]
# Input: the output of edge-vs-cloud.awk over the five sweeps, in the order
# edge-chain, edge-tree, cloud-draft, cloud-heads, cloud-only (wi 1..5).
if (ARGC < 2) { print "usage: gnuplot -c edge-vs-cloud.gp WIN.csv OUT [USD]"; exit status 2 }
IN = ARG1; OUT = ARG2; USD = (ARGC >= 3 ? ARG3 : "")
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
NAMES = "edge-chain edge-tree cloud-draft cloud-heads cloud-only"
# Okabe-Ito: warm for the edge variants, blues and grey for the cloud ones.
col(i) = (i == 1 ? 0xD55E00 : i == 2 ? 0xE69F00 : i == 3 ? 0x56B4E9 : i == 4 ? 0x0072B2 : 0x999999)
rtts = system("awk -F, -v col=rtt -f '" . dir . "csvcol.awk' '" . IN . "'")
tens = system("awk -F, -v col=tenants -f '" . dir . "csvcol.awk' '" . IN . "'")
NX = words(rtts); NY = words(tens)
set xrange [0.5:NX + 0.5]; set yrange [0.5:NY + 0.5]
unset grid
set style fill solid 0.55 noborder
# Rows of one metric.
sel(m) = strcol("metric") eq m
lab(m) = sel(m) ? (column("tie") != 0 ? "≈" : "") . sprintf("%.2f", column("ratio")) : ""
win(m) = sel(m) && column("ratio") < 1 && column("tie") == 0
tie(m) = sel(m) && column("tie") != 0
METRICS = "itl_mean_s gpu_s_per_ktok usd_per_mtok"
TITLES = "'(a) mean ITL' '(b) GPU-s per 1000 tokens' '(c) GPU rent per Mtok'"
do for [fmt in "pdf png"] {
    if (fmt eq "pdf") { eval TERM_PDF; set terminal pdfcairo size 7.5in,3in font 'Sans,8'; LF = ",6" } \
    else { eval TERM_PNG; set terminal pngcairo size 1600,640 font 'Sans,12'; LF = ",10" }
    set output OUT . "." . fmt
    unset key  # the panels have none: the variants' key is its own plot below
    # Category tics (set per format: the key's empty plot below unsets them).
    set xtics () scale 0; set ytics () scale 0
    do for [i = 1:NX] { set xtics add (word(rtts, i) i) }
    do for [i = 1:NY] { set ytics add (word(tens, i) i) }
    set multiplot
    set tmargin at screen 0.9; set bmargin at screen 0.27
    set label 10 "cell colour: the variant with the lowest mean; number: best edge / best cloud variant (< 1: edge drafting wins); " . \
        "thick frame: edge wins beyond the 95% CIs; ≈, dashed: the two best are within their CIs" \
        at screen 0.5, screen 0.015 center font LF
    do for [k = 1:3] {
        m = word(METRICS, k)
        t = word(TITLES, k)
        if (k == 3 && USD ne "") { t = t . " (GPU at $" . USD . "/h)" }
        set title t
        set xlabel "RTT"
        if (k == 1) { set ylabel "tenants" } else { set ylabel "" }
        set lmargin at screen 0.06 + (k - 1) * 0.325; set rmargin at screen 0.06 + (k - 1) * 0.325 + 0.27
        plot IN using (sel(m) ? column("ix") : NaN):"iy":(0.5):(0.5):(col(column("wi"))) \
                with boxxyerror lc rgb variable notitle, \
             IN using (win(m) ? column("ix") : NaN):"iy":(0.46):(0.46) \
                with boxxyerror fs empty border lt -1 lw 2 lc rgb "black" notitle, \
             IN using (tie(m) ? column("ix") : NaN):"iy":(0.46):(0.46) \
                with boxxyerror fs empty border lt -1 lw 1 dt 2 lc rgb "black" notitle, \
             IN using "ix":"iy":(lab(m)) with labels font LF notitle
    }
    # The key of the five variants: one row across the whole figure, drawn
    # by an empty plot (a key inside one panel wraps at that panel's width).
    unset title; unset xlabel; unset ylabel; unset tics; unset border
    set lmargin at screen 0.02; set rmargin at screen 0.98
    set tmargin at screen 0.12; set bmargin at screen 0.06
    set key at screen 0.5, screen 0.09 center center horizontal maxrows 1 noopaque nobox \
        samplen 1.5 width 2
    plot for [i = 1:5] NaN with boxes fs solid 0.55 lc rgb col(i) title word(NAMES, i)
    set border; unset key
    unset multiplot
    unset label 10
    set output
}
