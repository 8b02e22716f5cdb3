# order-slo.gp — SLO attainment against the batch group's size for each
# verification order (cloud.batching.order), with 95% confidence bars.
# Usage: gnuplot -c scripts/order-slo.gp SWEEP.csv OUT   (writes OUT.pdf, OUT.png)
# Input: a sweep over cloud.batching.order and tenants.groups.batch.count.
# least-slack is dashed: with equal-length blocks it orders as edf does and
# the curves coincide.
if (ARGC < 2) { print "usage: gnuplot -c order-slo.gp SWEEP.csv OUT"; exit status 2 }
IN = ARG1; OUT = ARG2
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
orders = system("awk -F, -v col=cloud.batching.order -f '" . dir . "csvcol.awk' '" . IN . "'")
# style.gp line 3, dashed.
set style line 9 lc rgb "#009E73" pt 9 ps 0.7 lw 1.5 dt 2
set xlabel "phones in the batch group (besides 12 interactive phones)"
set ylabel "SLO attainment (% of requests)"
set key bottom left
set yrange [0:105]
set xrange [0:88]
do for [fmt in "pdf png"] {
    if (fmt eq "pdf") { eval TERM_PDF } else { eval TERM_PNG }
    set output OUT . "." . fmt
    plot for [i = 1:words(orders)] IN \
        using (strcol("cloud.batching.order") eq word(orders, i) ? \
               column("tenants.groups.batch.count") : NaN):\
              (column("slo_attainment") * 100):(column("slo_attainment_ci95") * 100) \
        with yerrorlines ls (word(orders, i) eq "least-slack" ? 9 : i) title word(orders, i)
    set output
}
