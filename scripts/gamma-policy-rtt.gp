# gamma-policy-rtt.gp — mean inter-token latency against network RTT for the
# speculation-length policies, with 95% confidence bars (across replications).
# Usage: gnuplot -c scripts/gamma-policy-rtt.gp SWEEP.csv OUT   (writes OUT.pdf, OUT.png)
# Input: a sweep over protocol.gamma_policy, protocol.gamma and
# tenants.network.rtt (values in ms). Plots fixed at gamma 4 and 8 and the
# adaptive policies at their largest gamma, 10 (the other rows are unused).
# goodput is dashed: where it picks the same gamma as rtt the curves coincide.
if (ARGC < 2) { print "usage: gnuplot -c gamma-policy-rtt.gp SWEEP.csv OUT"; exit status 2 }
IN = ARG1; OUT = ARG2
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
pols = "fixed fixed rtt goodput"
gams = "4 8 10 10"
title(i) = word(pols, i) eq "fixed" ? sprintf("fixed, {/Symbol g} = %s", word(gams, i)) \
                                   : sprintf("%s, {/Symbol g}_{max} = %s", word(pols, i), word(gams, i))
sel(i) = strcol("protocol.gamma_policy") eq word(pols, i) && \
         column("protocol.gamma") == word(gams, i) + 0
# style.gp line 4, dashed.
set style line 9 lc rgb "#CC79A7" pt 11 ps 0.7 lw 1.5 dt 2
set xlabel "network round-trip time (ms)"
set ylabel "mean inter-token latency (ms)"
set key top left
set yrange [0:*]
set xrange [0:320]
do for [fmt in "pdf png"] {
    if (fmt eq "pdf") { eval TERM_PDF } else { eval TERM_PNG }
    set output OUT . "." . fmt
    plot for [i = 1:words(pols)] IN \
        using (sel(i) ? column("tenants.network.rtt") : NaN):\
              (column("itl_mean_s") * 1e3):(column("itl_mean_s_ci95") * 1e3) \
        with yerrorlines ls (i == 4 ? 9 : i) title title(i)
    set output
}
