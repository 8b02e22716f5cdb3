# testbed-validate.gp — simulator prediction vs testbed measurement, one
# point per (scenario, metric), each the simulator's value over the
# testbed's, so that every metric fits one axis: 1 is exact, the band is
# ±5%. Called by scripts/testbed-validate.sh with data (scenario, metric,
# testbed, simulator; no header) and out.
load 'scripts/style.gp'
set ylabel "simulator / testbed"
set yrange [0.85:1.15]
set xrange [-1:*]
set xtics rotate by 60 right font ',7' noenhanced
set key top left
set object 1 rect from graph 0, first 0.95 to graph 1, first 1.05 \
    fc rgb '#009E73' fs transparent solid 0.15 noborder behind
set bmargin 12
eval TERM_PDF
set output out.'.pdf'
plot data using 0:($4/$3):xtic(sprintf("%s %s", stringcolumn(2), stringcolumn(1))) \
          with points ls 1 title 'simulator / testbed (band: ±5%)', \
     1 with lines ls 8 notitle
eval TERM_PNG
set output out.'.png'
replot
