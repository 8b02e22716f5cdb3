# csvcol.awk — prints the distinct values of one column of a sweep CSV, in
# order of first appearance, space-separated on one line (for gnuplot's
# word()). Usage: awk -F, -v col=NAME -f scripts/csvcol.awk FILE.csv
# Axis values used by the figures never contain commas, so -F, suffices.
NR == 1 { for (i = 1; i <= NF; i++) if ($i == col) c = i; next }
c && !seen[$c]++ { printf "%s%s", (n++ ? " " : ""), $c }
END { print ""; if (!c) { print "csvcol.awk: no column " col > "/dev/stderr"; exit 1 } }
