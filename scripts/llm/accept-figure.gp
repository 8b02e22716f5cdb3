# accept-figure.gp — measured acceptance of SmolLM2-135M's W4A16 draft
# against its fp16 target (scenarios/real/accept/, written by
# scripts/llm/accept-measure.sh) beside the four fitted models of the
# simulator: acceptance per draft position (blocks of 8) and the
# accepted-length distribution of blocks of 4, greedy and sampled (T = 1).
#   gnuplot -c scripts/llm/accept-figure.gp DIR OUT   (OUT.pdf, OUT.png)
# DIR holds w4a16-greedy.dat and w4a16-sampled.dat (build/llm accept: a
# per-position block, then accepted-length blocks at gamma 2, 4, 8;
# columns: x, measured, iid, positional, beta, markov; "-" where no block
# reached a position).
load 'scripts/style.gp'
set datafile separator whitespace
set datafile missing "-"   # a position no block reached
dir = ARG1
out = ARG2
dat(mode) = sprintf("%s/w4a16-%s.dat", dir, mode)
# Measured: black points; the models: coloured lines (positional dashed: at
# blocks of 8 it is the measurement itself).
set style line 11 lc rgb "#000000" pt 7 ps 0.9 lw 1.5
do for [term in "pdf png"] {
    if (term eq "pdf") {
        eval TERM_PDF
        set terminal pdfcairo size 7in,5.2in
    } else {
        eval TERM_PNG
        set terminal pngcairo size 1400,1040
    }
    set output out.'.'.term
    set multiplot layout 2,2
    do for [mode in "greedy sampled"] {
        set title sprintf("W4A16 draft, %s: acceptance per draft position", mode)
        set xlabel "draft position in a block of 8"
        set ylabel "P(accepted | reached)"
        set yrange [0.4:1]
        set xrange [0.7:8.3]
        set key bottom right vertical
        set style data lines
        unset style histogram
        f = dat(mode)
        plot f i 0 u 1:3 w l ls 2 t 'iid', \
             '' i 0 u 1:4 w l ls 3 dt 2 t 'positional', \
             '' i 0 u 1:5 w l ls 4 t 'beta', \
             '' i 0 u 1:6 w l ls 5 t 'markov', \
             '' i 0 u 1:2 w p ls 11 t 'measured'
    }
    do for [mode in "greedy sampled"] {
        set title sprintf("W4A16 draft, %s: accepted drafts per block of 4", mode)
        set xlabel "drafts accepted"
        set ylabel "share of blocks"
        set yrange [0:0.5]
        set xrange [-0.5:4.5]
        set key top center horizontal
        set style data histogram
        set style histogram clustered gap 1
        set style fill solid 0.85 border -1
        set boxwidth 0.9
        f = dat(mode)
        plot f i 2 u 2:xtic(1) lc rgb "#000000" t 'measured', '' i 2 u 3 ls 2 t 'iid', \
             '' i 2 u 4 ls 3 t 'positional', '' i 2 u 5 ls 4 t 'beta', '' i 2 u 6 ls 5 t 'markov'
    }
    unset multiplot
}
