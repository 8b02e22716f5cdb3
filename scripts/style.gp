# style.gp — shared look of the paper figures; loaded by every figure script.
# Each script renders twice: OUT.pdf (pdfcairo, single-column paper size) and
# OUT.png (pngcairo, for README.md and docs/guide.md). Call `eval TERM_PDF` /
# `eval TERM_PNG`.
TERM_PDF = "set terminal pdfcairo enhanced color size 5in,3.3in font 'Sans,10' linewidth 1.5"
TERM_PNG = "set terminal pngcairo enhanced color size 1000,660 font 'Sans,14' linewidth 2"
set datafile separator comma
set datafile missing ""
set grid lc rgb "#d8d8d8" lw 0.5
set border lw 0.8
set key box opaque samplen 2 spacing 1.1
# Okabe-Ito colour-blind safe palette, one line style per series.
set style line 1 lc rgb "#0072B2" pt 7 ps 0.6 lw 1.5
set style line 2 lc rgb "#D55E00" pt 5 ps 0.6 lw 1.5
set style line 3 lc rgb "#009E73" pt 9 ps 0.7 lw 1.5
set style line 4 lc rgb "#CC79A7" pt 11 ps 0.7 lw 1.5
set style line 5 lc rgb "#E69F00" pt 13 ps 0.7 lw 1.5
set style line 6 lc rgb "#56B4E9" pt 3 ps 0.7 lw 1.5
set style line 7 lc rgb "#000000" pt 1 ps 0.7 lw 1.5
set style line 8 lc rgb "#999999" pt 2 ps 0.7 lw 1.5
