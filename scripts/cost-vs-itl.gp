# cost-vs-itl.gp — GPU cost (GPU-seconds per 1000 tokens) against mean
# inter-token latency for every mode and load: the Pareto picture. Left, all
# modes on a log latency axis, with the Pareto frontier over all points
# (nothing is both faster and cheaper) drawn as a light band under them;
# right, the speculative modes zoomed, since at one latency scale with
# cloud-only their curves are nearly vertical lines a few pixels apart.
# Points are labelled with their tenant count; neighbours that would
# overprint share one label ("1–32", see point-labels.awk).
# Usage: gnuplot -c scripts/cost-vs-itl.gp SWEEP.csv OUT
# Input: a sweep over protocol.mode and tenants.count.
if (ARGC < 2) { print "usage: gnuplot -c cost-vs-itl.gp SWEEP.csv OUT"; exit status 2 }
IN = ARG1; OUT = ARG2
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
modes = system("awk -F, -v col=protocol.mode -f '" . dir . "csvcol.awk' '" . IN . "'")
FRONT = "< awk -F, -f '" . dir . "pareto.awk' '" . IN . "'"
spec(m) = (m eq "sync" || m eq "async")
mode = "protocol.mode"
itl = "(column('itl_mean_s') * 1e3)"
# Edge-only uses no GPU: an empty cost column counts as 0 (as in pareto.awk).
cost(m) = (m eq "edge-only" && strcol("gpu_s_per_ktok") eq "") ? 0 : column("gpu_s_per_ktok")
# Axis ranges from the data, so that labels can be spaced as drawn.
stats IN using (column("itl_mean_s") * 1e3):(cost(strcol(mode))) nooutput
AX0 = STATS_min_x / 1.3; AX1 = STATS_max_x * 1.3
AY0 = -0.04 * STATS_max_y; AY1 = 1.08 * STATS_max_y
stats IN using (spec(strcol(mode)) ? column("itl_mean_s") * 1e3 : NaN):(column("gpu_s_per_ktok")) nooutput
ZX0 = STATS_min_x - 0.25 * (STATS_max_x - STATS_min_x); ZX1 = STATS_max_x + 0.3 * (STATS_max_x - STATS_min_x)
ZY0 = STATS_min_y - 0.08 * (STATS_max_y - STATS_min_y); ZY1 = STATS_max_y + 0.08 * (STATS_max_y - STATS_min_y)
LABELS(m, x0, x1, y0, y1, xlog, gap, at) = sprintf("< awk -F, -v sel=protocol.mode -v val=%s " . \
    "-v xcol=itl_mean_s -v ycol=gpu_s_per_ktok -v lcol=tenants.count -v xmul=1e3 " . \
    "-v x0=%.9g -v x1=%.9g -v y0=%.9g -v y1=%.9g -v xlog=%d -v gap=%g -v at=%s " . \
    "-f '%spoint-labels.awk' '%s'", m, x0, x1, y0, y1, xlog, gap, at, dir, IN)
# The line style of a mode: its place in the sweep's mode list.
lsof(m) = sum [i = 1:words(modes)] (word(modes, i) eq m ? i : 0)
do for [fmt in "pdf png"] {
    if (fmt eq "pdf") { eval TERM_PDF; set terminal pdfcairo size 7in,3.2in font 'Sans,8'; LF = ",7" } \
    else { eval TERM_PNG; set terminal pngcairo size 1400,640; LF = ",12" }
    set output OUT . "." . fmt
    set multiplot
    # (a) all modes
    set origin 0, 0; set size 0.6, 1
    set xlabel "mean inter-token latency (ms)"
    set ylabel "GPU cost (GPU-s per 1000 tokens)"
    set logscale x; set xtics 2; set format x "%g"
    set xrange [AX0:AX1]; set yrange [AY0:AY1]
    set key at graph 0.98, graph 0.98 right top
    set object 1 rect from ZX0, ZY0 to ZX1, ZY1 fs empty border lc rgb "#777777" dt 3 lw 1 behind
    set label 1 "(b)" at ZX0, ZY1 right offset -0.3, 0.4 font LF tc rgb "#555555"
    set title "(a) all modes; numbers: tenants"
    plot FRONT using 1:2 with lines lw 8 lc rgb "#d0d0d0" title "Pareto frontier", \
         for [i = 1:words(modes)] IN \
            using (strcol(mode) eq word(modes, i) ? @itl : NaN):(cost(word(modes, i))) \
            with linespoints ls i title word(modes, i), \
         LABELS("cloud-only", AX0, AX1, AY0, AY1, 1, 0.06, "first") using 1:2:3 \
            with labels left offset 0.7, 0.5 font LF tc ls lsof("cloud-only") notitle, \
         LABELS("edge-only", AX0, AX1, AY0, AY1, 1, 0.06, "xmax") using 1:2:3 \
            with labels left offset 0.9, 0.5 font LF tc ls lsof("edge-only") notitle
    unset object 1; unset label 1
    # (b) the speculative modes zoomed; sync labelled on the left of its
    # curve, async on the right (async is the slower of the two here). At
    # low load the points scatter by the run-to-run noise of the latency
    # alone, so a wide gap merges them into one label.
    set origin 0.6, 0; set size 0.4, 1
    unset logscale x; set xtics autofreq; set ylabel ""
    set xrange [ZX0:ZX1]; set yrange [ZY0:ZY1]
    set title "(b) speculative modes, enlarged"
    set key at graph 0.58, graph 0.5 center center  # between the two curves
    plot for [i = 1:words(modes)] IN \
            using (spec(word(modes, i)) && strcol(mode) eq word(modes, i) ? @itl : NaN):(column("gpu_s_per_ktok")) \
            with linespoints ls i title (spec(word(modes, i)) ? word(modes, i) : ""), \
         LABELS("sync", ZX0, ZX1, ZY0, ZY1, 0, 0.2, "xmin") using 1:2:3 \
            with labels right offset -0.7, 0 font LF tc ls lsof("sync") notitle, \
         LABELS("async", ZX0, ZX1, ZY0, ZY1, 0, 0.2, "xmax") using 1:2:3 \
            with labels left offset 0.7, 0 font LF tc ls lsof("async") notitle
    unset title
    unset multiplot
    set output
}
