# itl-vs-rtt.gp — mean inter-token latency against network RTT for each
# serving mode, with 95% confidence bars (across replications).
# Usage: gnuplot -c scripts/itl-vs-rtt.gp SWEEP.csv OUT   (writes OUT.pdf, OUT.png)
# Input: a sweep over protocol.mode and tenants.network.rtt (values in ms).
if (ARGC < 2) { print "usage: gnuplot -c itl-vs-rtt.gp SWEEP.csv OUT"; exit status 2 }
IN = ARG1; OUT = ARG2
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
modes = system("awk -F, -v col=protocol.mode -f '" . dir . "csvcol.awk' '" . IN . "'")
set xlabel "network round-trip time (ms)"
set ylabel "mean inter-token latency (ms)"
set key top left
set yrange [0:*]
set xrange [0:*]
do for [fmt in "pdf png"] {
    if (fmt eq "pdf") { eval TERM_PDF } else { eval TERM_PNG }
    set output OUT . "." . fmt
    plot for [i = 1:words(modes)] IN \
        using (strcol("protocol.mode") eq word(modes, i) ? column("tenants.network.rtt") : NaN):\
              (column("itl_mean_s") * 1e3):(column("itl_mean_s_ci95") * 1e3) \
        with yerrorlines ls i title word(modes, i)
    set output
}
