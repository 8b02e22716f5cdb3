# slo-attainment.gp — SLO attainment (share of finished requests meeting both
# the TTFT and the TPOT objective) against the number of tenants, one curve
# per serving mode, with 95% confidence bars (across replications).
# Usage: gnuplot -c scripts/slo-attainment.gp SWEEP.csv OUT [TTFT TPOT]
# Input: a sweep over protocol.mode and tenants.count whose rows have
# slo_attainment; TTFT and TPOT (e.g. "500 ms") only title the key.
if (ARGC < 2) { print "usage: gnuplot -c slo-attainment.gp SWEEP.csv OUT [TTFT TPOT]"; exit status 2 }
IN = ARG1; OUT = ARG2
SLO = (ARGC >= 4) ? sprintf("SLO: TTFT ≤ %s,\nTPOT ≤ %s", ARG3, ARG4) : ""
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
modes = system("awk -F, -v col=protocol.mode -f '" . dir . "csvcol.awk' '" . IN . "'")
set xlabel "tenants"
set ylabel "requests meeting the SLO (%)"
set logscale x 2
set xtics ("1" 1, "2" 2, "4" 4, "8" 8, "16" 16, "32" 32, "64" 64, "128" 128, \
           "256" 256, "512" 512, "1k" 1024, "2k" 2048, "4k" 4096)
set autoscale xfix
set offsets graph 0.03, graph 0.03, 0, 0
set yrange [-3:103]
set ytics 0, 20, 100
set key at graph 0.03, graph 0.05 left bottom Left reverse title SLO left
do for [fmt in "pdf png"] {
    if (fmt eq "pdf") { eval TERM_PDF } else { eval TERM_PNG }
    set output OUT . "." . fmt
    plot for [i = 1:words(modes)] IN \
        using (strcol("protocol.mode") eq word(modes, i) ? column("tenants.count") : NaN):\
              (column("slo_attainment") * 100):(column("slo_attainment_ci95") * 100) \
        with yerrorlines ls i title word(modes, i)
    set output
}
