# speedup-heatmap.gp — speedup of async over sync (ITL_sync / ITL_async) as a
# heatmap over acceptance rate alpha and block size gamma; blue where async is
# faster, red where sync is, white at 1.
# Usage: gnuplot -c scripts/speedup-heatmap.gp SWEEP.csv OUT
# Input: a sweep over acceptance.alpha, protocol.gamma and protocol.mode
# (sync and async), every other key equal.
if (ARGC < 2) { print "usage: gnuplot -c speedup-heatmap.gp SWEEP.csv OUT"; exit status 2 }
IN = ARG1; OUT = ARG2
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
DATA = "< awk -F, -f '" . dir . "speedup.awk' '" . IN . "' | sort -k2,2n -k1,1n"
set datafile separator whitespace
stats DATA using 3 nooutput
# Symmetric in ratio around 1, so equal colours mean equal factors.
m = STATS_max > 1 / STATS_min ? STATS_max : 1 / STATS_min
m = m * 1.02
set cbrange [1 / m : m]
set palette defined (1 / m "#d6604d", 1 "#f7f7f7", m "#4393c3")
set xlabel "acceptance rate {/Symbol a}"
set ylabel "draft tokens per block {/Symbol g}"
set cblabel "ITL_{sync} / ITL_{async}"
set title "speedup of async over sync (> 1: async is faster)"
set grid noxtics noytics
set ytics 1
set xtics 0.1 format "%.1f"
set mxtics 2
set key off
set tics out
set autoscale fix
do for [fmt in "pdf png"] {
    if (fmt eq "pdf") { eval TERM_PDF; set terminal pdfcairo size 5in,3.8in; lf = ",6" } \
    else { eval TERM_PNG; lf = ",11" }
    set output OUT . "." . fmt
    plot DATA using 1:2:3 with image, \
         DATA using 1:2:(sprintf("%.2f", $3)) with labels font lf tc rgb "#000000"
    set output
}
