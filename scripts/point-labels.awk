# point-labels.awk — labels for the points of one curve of a sweep CSV that
# do not overprint each other: walking the curve in row order, a point closer
# than `gap` (a fraction of the panel) to the first point of the current
# label's run joins that label ("1–16") instead of getting its own. Prints
# "x,y,label" per label, at the run's first point, or (at=xmin / at=xmax) at
# its leftmost / rightmost one, where a label set left / right of it stays
# clear of the run.
# Usage: awk -F, -v sel=COL -v val=VALUE -v xcol=COL -v ycol=COL -v lcol=COL
#            -v x0=MIN -v x1=MAX -v y0=MIN -v y1=MAX [-v xmul=1e3] [-v ymul=1]
#            [-v xlog=1] [-v ylog=1] [-v gap=0.05] [-v at=first|xmin|xmax] -f scripts/point-labels.awk FILE.csv
# x0..y1 are the panel's axis ranges (after xmul/ymul), so that the distance
# is measured as the reader sees it; xlog/ylog say the axis is logarithmic.
function pos(v, lo, hi, lg) {
    if (lg) return (log(v) - log(lo)) / (log(hi) - log(lo))
    return (v - lo) / (hi - lo)
}
function flush() {
    if (n) printf "%.9g,%.9g,%s\n", ax, ay, (first == last ? first : first "–" last)
}
BEGIN {
    if (xmul == "") xmul = 1
    if (ymul == "") ymul = 1
    if (gap == "") gap = 0.05
}
NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
$c[sel] == val && $c[xcol] != "" && $c[ycol] != "" {
    x = $c[xcol] * xmul; y = $c[ycol] * ymul
    u = pos(x, x0, x1, xlog); v = pos(y, y0, y1, ylog)
    if (n && (u - au) ^ 2 + (v - av) ^ 2 < gap ^ 2) {
        last = $c[lcol]
        if ((at == "xmin" && x < ax) || (at == "xmax" && x > ax)) { ax = x; ay = y }
        next
    }
    flush()
    n++; ax = x; ay = y; au = u; av = v; first = last = $c[lcol]
}
END { flush() }
