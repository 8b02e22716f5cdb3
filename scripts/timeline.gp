# timeline.gp — pipeline timeline of a few tenants from `specsim run --trace`:
# per tenant five lanes (edge drafting, uplink, cloud queue, GPU verify,
# downlink); drafting thrown away by a rollback in red, rollbacks as crosses,
# commits as ticks labelled with the tokens committed.
# Usage: gnuplot -c scripts/timeline.gp TRACE.csv OUT [TMAX_S [TENANTS]]
# (default: the first 2.5 s, the first 3 tenants).
if (ARGC < 2) { print "usage: gnuplot -c timeline.gp TRACE.csv OUT [TMAX_S [TENANTS]]"; exit status 2 }
IN = ARG1; OUT = ARG2
TMAX = (ARGC >= 3) ? real(ARG3) : 2.5
NT = (ARGC >= 4) ? int(ARG4) : 3
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
DATA = sprintf("< awk -F, -v tmax=%g -f '%strace-intervals.awk' '%s'", TMAX, dir, IN)
kind(k) = ($4 == k && $3 < 6 * NT) ? 1 : NaN
set xlabel "simulated time (s)"
set xrange [0:TMAX]
set yrange [6 * NT - 1.5:-0.7]
set grid noytics
set ytics scale 0 font ",8"
lanes = "drafting uplink queue GPU downlink"
do for [t = 0:NT - 1] { do for [l = 0:4] {
    set ytics add (sprintf("phone %d %s", t, word(lanes, l + 1)) 6 * t + l)
} }
set key outside top center horizontal maxrows 2 samplen 1
set style fill solid 1.0 noborder
box(k, c) = 0
H = 0.38
do for [fmt in "pdf png"] {
    if (fmt eq "pdf") { eval TERM_PDF; set terminal pdfcairo size 7in,4in font 'Sans,8'; set key width -6 } \
    else { eval TERM_PNG; set terminal pngcairo size 1400,800; set key width -3 }
    set output OUT . "." . fmt
    plot \
      DATA using (($1 + $2) / 2):($3 * kind(7)):(($2 - $1) / 2):(H) with boxxyerror lc rgb "#bbbbbb" title "prefill", \
      DATA using (($1 + $2) / 2):($3 * kind(1)):(($2 - $1) / 2):(H) with boxxyerror lc rgb "#0072B2" title "drafting", \
      DATA using (($1 + $2) / 2):($3 * kind(2)):(($2 - $1) / 2):(H) with boxxyerror lc rgb "#D55E00" title "drafting discarded", \
      DATA using (($1 + $2) / 2):($3 * kind(3)):(($2 - $1) / 2):(H) with boxxyerror lc rgb "#56B4E9" title "uplink", \
      DATA using (($1 + $2) / 2):($3 * kind(4)):(($2 - $1) / 2):(H) with boxxyerror lc rgb "#E69F00" title "queued", \
      DATA using (($1 + $2) / 2):($3 * kind(5)):(($2 - $1) / 2):(H) with boxxyerror lc rgb "#009E73" title "verify (GPU)", \
      DATA using (($1 + $2) / 2):($3 * kind(6)):(($2 - $1) / 2):(H) with boxxyerror lc rgb "#CC79A7" title "downlink", \
      DATA using 1:($3 * kind(8)) with points pt 2 ps 1.2 lw 2 lc rgb "#B00000" title "rollback", \
      DATA using 1:($3 * kind(9) - 0.5) with points pt 11 ps 0.6 lc rgb "#000000" title "commit (tokens)", \
      DATA using 1:($3 * kind(9) - 0.5):5 with labels offset 0,0.6 font ",7" notitle
    set output
}
