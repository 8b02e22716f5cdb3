# fallback-itl.gp — the per-token ITL over time across a 10-second link
# outage (scenarios/examples/fallback.yaml: down from 20 s to 30 s) for
# sync, async, and async with protocol.fallback {mode: local}.
# Usage: gnuplot -c scripts/fallback-itl.gp SYNC.csv ASYNC.csv FALLBACK.csv OUT
# Input: three files scripts/thermal-itl.awk -v unit=s writes (t_s,itl_ms,speed).
if (ARGC < 4) { print "usage: gnuplot -c fallback-itl.gp SYNC.csv ASYNC.csv FALLBACK.csv OUT"; exit status 2 }
SYNC = ARG1; ASYNC = ARG2; FB = ARG3; OUT = ARG4
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
set xlabel "time (s)"
set ylabel "per-token ITL, mean over 1 s (ms)"
set logscale y
set key top right
set object 1 rect from 20, graph 0 to 30, graph 1 behind fc rgb "#dddddd" fs solid 0.5 noborder
set label 1 "link down" at 25, graph 0.95 center
do for [fmt in "pdf png"] {
    if (fmt eq "pdf") { eval TERM_PDF } else { eval TERM_PNG }
    set output OUT . "." . fmt
    plot SYNC using 1:2 with linespoints ls 1 title "sync", \
         ASYNC using 1:2 with linespoints ls 2 title "async", \
         FB using 1:2 with linespoints ls 3 title "async + fallback (local)"
    set output
}
