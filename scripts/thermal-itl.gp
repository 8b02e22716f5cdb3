# thermal-itl.gp — the per-token ITL over a session on one phone, with its
# thermal model and without (the same run on the SoC card, which never
# throttles), and the drafts' speed level on the right axis.
# Usage: gnuplot -c scripts/thermal-itl.gp WITH.csv WITHOUT.csv OUT
# Input: two files scripts/thermal-itl.awk writes (t_min,itl_ms,speed).
if (ARGC < 3) { print "usage: gnuplot -c thermal-itl.gp WITH.csv WITHOUT.csv OUT"; exit status 2 }
ON = ARG1; OFF = ARG2; OUT = ARG3
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
set xlabel "session time (min)"
set ylabel "per-token ITL, mean over 20 s (ms)"
set y2label "draft speed level"
set yrange [0:*]
set y2range [0:1.05]
set ytics nomirror
set y2tics 0, 0.25, 1
set key bottom right
do for [fmt in "pdf png"] {
    if (fmt eq "pdf") { eval TERM_PDF } else { eval TERM_PNG }
    set output OUT . "." . fmt
    plot OFF using 1:2 with linespoints ls 1 title "no thermal model", \
         ON using 1:2 with linespoints ls 2 title "thermal model (galaxy-s24-ultra)", \
         ON using 1:3 axes x1y2 with steps ls 8 dt 2 title "speed level (right axis)"
    set output
}
