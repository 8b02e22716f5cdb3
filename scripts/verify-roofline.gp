# verify-roofline.gp — time of one cloud verify iteration against the batch
# tokens M, from the service model (`specsim roofline`), with its memory and
# compute bounds; measured whole-step times of a calibration table when given.
# Usage: gnuplot -c scripts/verify-roofline.gp ROOFLINE.csv OUT [MEASURED.csv [LABEL]]
if (ARGC < 2) { print "usage: gnuplot -c verify-roofline.gp ROOFLINE.csv OUT [MEASURED.csv [LABEL]]"; exit status 2 }
IN = ARG1; OUT = ARG2
MEAS = (ARGC >= 3) ? ARG3 : ""
MLABEL = (ARGC >= 4) ? ARG4 : "measured (calibration table)"
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
set logscale xy
set format x "%g"
set format y "%g"
set xlabel "batch tokens M = B({/Symbol g}+1)"
set ylabel "verify iteration time (ms)"
set key top left
set mxtics 10
set autoscale fix
set offsets graph 0.03, graph 0.03, graph 0.08, graph 0.05
do for [fmt in "pdf png"] {
    if (fmt eq "pdf") { eval TERM_PDF } else { eval TERM_PNG }
    set output OUT . "." . fmt
    if (MEAS eq "") {
        plot IN using "m":(column("time_s") * 1e3) with lines ls 1 lw 2.5 title "service model", \
             IN using "m":(column("memory_s") * 1e3) with lines ls 2 dt 2 title "memory bound", \
             IN using "m":(column("compute_s") * 1e3) with lines ls 3 dt 4 title "compute bound"
    } else {
        plot IN using "m":(column("time_s") * 1e3) with lines ls 1 lw 2.5 title "service model", \
             IN using "m":(column("memory_s") * 1e3) with lines ls 2 dt 2 title "memory bound", \
             IN using "m":(column("compute_s") * 1e3) with lines ls 3 dt 4 title "compute bound", \
             MEAS using "m":(column("time_s") * 1e3) with points ls 7 pt 7 ps 1 title MLABEL
    }
    set output
}
