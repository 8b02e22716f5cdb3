# timeline.gp — pipeline timeline of a few tenants from `specsim run --trace`:
# per tenant four lanes (edge drafting, uplink, cloud, downlink); the cloud
# lane shows the wait in the verify queue, then the verification on the GPU.
# Drafting thrown away by a rollback in red, rollbacks as crosses, commits as
# ticks labelled with the tokens committed. GPU work lasts a few ms, a
# hairline at this scale, so it is drawn at least 0.8% of the time axis wide
# (the key says how wide); every other bar has its true length.
# Usage: gnuplot -c scripts/timeline.gp TRACE.csv OUT [TMAX_S [TENANTS]]
# (default: the first 2.5 s, the first 3 tenants).
if (ARGC < 2) { print "usage: gnuplot -c timeline.gp TRACE.csv OUT [TMAX_S [TENANTS]]"; exit status 2 }
IN = ARG1; OUT = ARG2
TMAX = (ARGC >= 3) ? real(ARG3) : 2.5
NT = (ARGC >= 4) ? int(ARG4) : 3
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
MINW = TMAX * 0.008
DATA = sprintf("< awk -F, -v tmax=%g -v minw=%g -f '%strace-intervals.awk' '%s'", TMAX, MINW, dir, IN)
L = 5                   # rows per tenant: four lanes and a gap
kind(k) = ($4 == k && $3 < L * NT) ? 1 : NaN
set xlabel "simulated time (s)"
set xrange [0:TMAX]
set yrange [L * NT - 1.5:-1.1]
set grid noytics
set ytics scale 0 ()     # only the lane names below
lanes = "draft uplink cloud downlink"
do for [t = 0:NT - 1] { do for [l = 0:3] {
    set ytics add ((l == 0 ? sprintf("phone %d: ", t) : "") . word(lanes, l + 1) L * t + l)
} }
set key outside top center horizontal maxrows 2 maxcols 5 samplen 1.5
set style fill solid 1.0 noborder
H = 0.38
GPUTITLE = sprintf("GPU (drawn ≥ %g ms)", MINW * 1e3)
do for [fmt in "pdf png"] {
    if (fmt eq "pdf") { eval TERM_PDF; set terminal pdfcairo size 7in,4in font 'Sans,8'; set key width -5; LF = ",8" } \
    else { eval TERM_PNG; set terminal pngcairo size 1400,800 font 'Sans,15'; set key width -1; LF = ",13" }
    set output OUT . "." . fmt
    plot \
      DATA using (($1 + $2) / 2):($3 * kind(7)):(($2 - $1) / 2):(H) with boxxyerror lc rgb "#bbbbbb" title "prefill", \
      DATA using (($1 + $2) / 2):($3 * kind(1)):(($2 - $1) / 2):(H) with boxxyerror lc rgb "#0072B2" title "drafting", \
      DATA using (($1 + $2) / 2):($3 * kind(2)):(($2 - $1) / 2):(H) with boxxyerror lc rgb "#D55E00" title "draft discarded", \
      DATA using (($1 + $2) / 2):($3 * kind(3)):(($2 - $1) / 2):(H) with boxxyerror lc rgb "#56B4E9" title "uplink", \
      DATA using (($1 + $2) / 2):($3 * kind(4)):(($2 - $1) / 2):(H) with boxxyerror lc rgb "#E69F00" title "queued", \
      DATA using (($1 + $2) / 2):($3 * kind(5)):(($2 - $1) / 2):(H) with boxxyerror lc rgb "#009E73" title GPUTITLE, \
      DATA using (($1 + $2) / 2):($3 * kind(6)):(($2 - $1) / 2):(H) with boxxyerror lc rgb "#CC79A7" title "downlink", \
      DATA using 1:($3 * kind(8)) with points pt 2 ps 1.4 lw 2 lc rgb "#B00000" title "rollback", \
      DATA using 1:($3 * kind(9) - 0.5) with points pt 11 ps 0.8 lc rgb "#000000" title "commit (tokens)", \
      DATA using 1:($3 * kind(9) - 0.5):5 with labels offset 0,0.75 font LF notitle
    set output
}
