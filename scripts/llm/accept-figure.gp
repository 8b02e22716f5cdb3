# accept-figure.gp — measured acceptance of SmolLM2-135M's W4A16 draft
# against its fp16 target (scenarios/real/accept/, written by
# scripts/llm/accept-measure.sh) beside the four fitted models of the
# simulator: acceptance per draft position (blocks of 8) and the
# accepted-length distribution of blocks of 4, greedy and sampled (T = 1).
#   gnuplot -c scripts/llm/accept-figure.gp DIR OUT   (OUT.pdf, OUT.png)
# DIR holds w4a16-greedy.dat and w4a16-sampled.dat (build/llm accept: a
# per-position block, then accepted-length blocks at gamma 2, 4, 8;
# columns: x, measured, iid, positional, beta, markov).
load 'scripts/style.gp'
set datafile separator whitespace
dir = ARG1
out = ARG2
set key top left font ',8' spacing 0.9
dat(mode) = sprintf("%s/w4a16-%s.dat", dir, mode)
do for [term in "pdf png"] {
    if (term eq "pdf") { eval TERM_PDF; set terminal pdfcairo size 7in,5in } else { eval TERM_PNG; set terminal pngcairo size 1400,1000 }
    set output out.'.'.term
    set multiplot layout 2,2
    set style data lines
    set key top left vertical
    do for [mode in "greedy sampled"] {
        set title sprintf("W4A16 draft, %s: acceptance per position", mode)
        set xlabel "draft position in a block of 8"
        set ylabel "acceptance rate"
        set yrange [0:1]
        set xrange [0.5:8.5]
        f = dat(mode)
        plot f i 0 u 1:2 w lp ls 1 lw 3 t 'measured', \
             '' i 0 u 1:3 w l ls 2 t 'iid', '' i 0 u 1:4 w l ls 3 t 'positional', \
             '' i 0 u 1:5 w l ls 4 t 'beta', '' i 0 u 1:6 w l ls 5 t 'markov'
    }
    do for [mode in "greedy sampled"] {
        set title sprintf("W4A16 draft, %s: accepted drafts per block of 4", mode)
        set xlabel "drafts accepted"
        set ylabel "share of blocks"
        set yrange [0:0.7]
        set xrange [-0.5:4.5]
        set key top center horizontal
        set style data histogram
        set style histogram clustered gap 1
        set style fill solid 0.8 border -1
        set boxwidth 0.9
        f = dat(mode)
        plot f i 2 u 2:xtic(1) ls 1 t 'measured', '' i 2 u 3 ls 2 t 'iid', \
             '' i 2 u 4 ls 3 t 'positional', '' i 2 u 5 ls 4 t 'beta', '' i 2 u 6 ls 5 t 'markov'
    }
    unset multiplot
}
