# tenants-vs-batch.gp — cloud throughput and p99 inter-token latency against
# the number of tenants, one curve per max batch size B (cloud.batching.
# max_batch: the most jobs, i.e. verify blocks, decode steps or prefill
# chunks, one GPU iteration runs): where queueing takes over. The figure's
# title says what B is, so it reads without its caption.
# Usage: gnuplot -c scripts/tenants-vs-batch.gp SWEEP.csv OUT
# Input: a sweep over cloud.batching.max_batch and tenants.count.
if (ARGC < 2) { print "usage: gnuplot -c tenants-vs-batch.gp SWEEP.csv OUT"; exit status 2 }
IN = ARG1; OUT = ARG2
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
bs = system("awk -F, -v col=cloud.batching.max_batch -f '" . dir . "csvcol.awk' '" . IN . "'")
set logscale x 2
set xtics 4
set format x "%.0s%c"   # 1, 4, 16, 64, 256, 1k
set xlabel "tenants"
sel(i) = (strcol("cloud.batching.max_batch") eq word(bs, i) ? column("tenants.count") : NaN)
do for [fmt in "pdf png"] {
    if (fmt eq "pdf") { eval TERM_PDF; set terminal pdfcairo size 7in,3in font 'Sans,9' } \
    else { eval TERM_PNG; set terminal pngcairo size 1400,600 }
    set output OUT . "." . fmt
    set multiplot layout 1,2 title "B = max batch: the most jobs one GPU iteration runs"
    set ylabel "throughput (tokens/s)"
    set key bottom right Left reverse
    set logscale y 10
    set autoscale y
    plot for [i = 1:words(bs)] IN using (sel(i)):(column("throughput_tok_s")) \
        with linespoints ls i title "B = " . word(bs, i)
    set ylabel "p99 inter-token latency (ms)"
    set key top left
    # Tight around the data (the curves start near 300 ms): the knees, not
    # empty decades, fill the panel.
    set autoscale yfix
    set offsets 0, 0, graph 0.06, graph 0.06
    set ytics ("100" 100, "200" 200, "300" 300, "500" 500, "1000" 1000, \
               "2000" 2000, "3000" 3000, "5000" 5000, "10^4" 10000)
    plot for [i = 1:words(bs)] IN using (sel(i)):(column("itl_p99_s") * 1e3) \
        with linespoints ls i title "B = " . word(bs, i)
    unset multiplot
    set offsets 0, 0, 0, 0
    set ytics autofreq
    set output
}
