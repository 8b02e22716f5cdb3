# testbed-validate.gp — simulator prediction vs testbed measurement, one
# point per (scenario, metric), each metric divided by its testbed value so
# that every metric fits one axis: on the diagonal the simulator is exact,
# the band is ±5%. Called by scripts/testbed-validate.sh with data and out.
load 'scripts/style.gp'
set xlabel "metric, scenario"
set ylabel "simulator / testbed"
set yrange [0.8:1.2]
set xtics rotate by 60 right font ',7'
set key top left
set style fill transparent solid 0.15 noborder
plot '+' using 1:(0.95):(1.05) with filledcurves lc rgb '#009E73' title '±5%' , \
     data using 0:($4/$3):xtic(sprintf("%s %s", stringcolumn(2), stringcolumn(1))) \
          every ::1 with points ls 1 title 'simulator / testbed', \
     1 with lines ls 8 notitle
eval TERM_PDF
set output out.'.pdf'
replot
eval TERM_PNG
set output out.'.png'
replot
