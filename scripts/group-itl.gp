# group-itl.gp — CDF of the per-token inter-token latency of each tenant
# group, with the fleet as a whole dashed: what the aggregate mean hides.
# Usage: gnuplot -c scripts/group-itl.gp CDF.csv SUMMARY.csv OUT
# Input: the two files scripts/group-itl.awk writes (group,itl_ms,cdf and
# group,tenants,tokens,itl_mean_ms,...); groups are drawn in their order.
if (ARGC < 3) { print "usage: gnuplot -c group-itl.gp CDF.csv SUMMARY.csv OUT"; exit status 2 }
IN = ARG1; SUM = ARG2; OUT = ARG3
dir = system("dirname '" . ARG0 . "'") . "/"
load dir . "style.gp"
# Group names have no spaces in a scenario with groups; the one-group case
# is called "all tenants", drawn the same as "all".
groups = system("awk -F, 'NR > 1 && $1 != \"all\" && $1 != \"all tenants\" { printf \"%s \", $1 }' '" . SUM . "'")
# "phones (6): mean 94 ms" for the key.
desc(g) = system(sprintf("awk -F, -v g='%s' '$1 == g { printf \"%%s (%%d): mean %%.0f ms\", " . \
    "($1 == \"all\" ? \"whole fleet\" : $1), $2, $4 }' '%s'", g, SUM))
set xlabel "per-token inter-token latency (ms)"
set ylabel "fraction of tokens (CDF)"
set logscale x
set format x "%g"
set xtics (10, 20, 30, 50, 100, 200, 300, 500, 1000, 2000, 5000)
set yrange [0:1.02]
set ytics 0, 0.2, 1
set key outside top center horizontal maxcols 2 Left reverse width -3
set autoscale xfix
set offsets graph 0.03, graph 0.03, 0, 0
do for [fmt in "pdf png"] {
    # (PDF taller than the other figures: its key needs four rows there.)
    if (fmt eq "pdf") { eval TERM_PDF; set terminal pdfcairo size 5in,4in } else { eval TERM_PNG }
    set output OUT . "." . fmt
    plot for [i = 1:words(groups)] IN \
            using (strcol(1) eq word(groups, i) ? $2 : NaN):3 with steps ls i title desc(word(groups, i)), \
         IN using (strcol(1) eq "all" ? $2 : NaN):3 with steps dt 2 lc rgb "#000000" lw 1.5 title desc("all")
    set output
}
