# cost-vs-itl.gp — GPU cost (GPU-seconds per 1000 tokens) against mean
# inter-token latency for every mode and load: the Pareto picture. The dashed
# line is the frontier over all points (nothing is both faster and cheaper).
# Usage: gnuplot -c scripts/cost-vs-itl.gp SWEEP.csv OUT
# Input: a sweep over protocol.mode and a load axis (e.g. tenants.count).
if (ARGC < 2) { print "usage: gnuplot -c cost-vs-itl.gp SWEEP.csv OUT"; exit status 2 }
IN = ARG1; OUT = ARG2
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
modes = system("awk -F, -v col=protocol.mode -f '" . dir . "csvcol.awk' '" . IN . "'")
FRONT = "< awk -F, -f '" . dir . "pareto.awk' '" . IN . "'"
set xlabel "mean inter-token latency (ms)"
set ylabel "GPU cost (GPU-seconds per 1000 tokens)"
set logscale x
set xtics 2
set ytics 0, 0.5
set format x "%g"
set key top right
# Edge-only uses no GPU: its cost column is empty (undefined), plotted as 0.
cost(m) = (m eq "edge-only" && strcol("gpu_s_per_ktok") eq "") ? 0 : column("gpu_s_per_ktok")
# Keep the y = 0 points off the border and the x range tight.
set autoscale xfix
set offsets graph 0.04, graph 0.04, graph 0.04, graph 0.06
do for [fmt in "pdf png"] {
    if (fmt eq "pdf") { eval TERM_PDF } else { eval TERM_PNG }
    set output OUT . "." . fmt
    plot for [i = 1:words(modes)] IN \
        using (strcol("protocol.mode") eq word(modes, i) ? column("itl_mean_s") * 1e3 : NaN):\
              (cost(word(modes, i))) with linespoints ls i title word(modes, i), \
         FRONT using 1:2 with lines dt 2 lc rgb "#000000" lw 1 title "Pareto frontier"
    set output
}
