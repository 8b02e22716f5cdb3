# edge-vs-cloud.awk — the winner of every (RTT, tenants) point of the
# edge-vs-cloud sweeps, per metric, for edge-vs-cloud.gp and the README's
# crossover numbers. One sweep CSV per variant, each named by an assignment
# before it; variants named edge-* draft on the edge, the others on the
# cloud:
#   awk -F, -f scripts/edge-vs-cloud.awk v=edge-chain A.csv v=cloud-only B.csv ...
# Prints a CSV, one row per metric and point (metrics: itl_mean_s,
# gpu_s_per_ktok, usd_per_mtok; lower is better for each):
#   metric,rtt,tenants,ix,iy,winner,wi,edge,cloud,ratio,tie
# ix, iy: the point's RTT and tenant count numbered 1, 2, ... in the order
# of the first file (the figure's cells); winner: the variant with the
# lowest mean, wi its place in the argument list; edge, cloud: the best
# mean of each side; ratio = edge / cloud (< 1: edge drafting wins);
# tie = 1 when the two best differ by no more than the sum of their 95% CI
# half-widths, so that the figure does not call a winner the replications
# cannot tell apart. A point missing from some file, or an empty value, is
# an error (exit 2): a winner among fewer variants would be a wrong answer.
BEGIN {
    nm = split("itl_mean_s gpu_s_per_ktok usd_per_mtok", M, " ")
    OFS = ","
}
FNR == 1 {
    if (v == "") { print "edge-vs-cloud.awk: no v=NAME before " FILENAME > "/dev/stderr"; bad = 1; exit 2 }
    nv++; name[nv] = v; edge[nv] = (v ~ /^edge-/); v = ""
    delete col
    for (i = 1; i <= NF; i++) col[$i] = i
    if (!("tenants.network.rtt" in col) || !("tenants.count" in col)) {
        print "edge-vs-cloud.awk: " FILENAME ": no tenants.network.rtt or tenants.count column" > "/dev/stderr"
        bad = 1; exit 2
    }
    for (m = 1; m <= nm; m++)
        if (!(M[m] in col) || !((M[m] "_ci95") in col)) {
            print "edge-vs-cloud.awk: " FILENAME ": no column " M[m] > "/dev/stderr"
            bad = 1; exit 2
        }
    next
}
{
    r = $col["tenants.network.rtt"]; t = $col["tenants.count"]
    if (nv == 1) {
        if (!(r in ix)) { ix[r] = ++nx; xs[nx] = r }
        if (!(t in iy)) { iy[t] = ++ny; ys[ny] = t }
    } else if (!(r in ix) || !(t in iy)) {
        print "edge-vs-cloud.awk: " FILENAME ": point " r ", " t " is not in the first file" > "/dev/stderr"
        bad = 1; exit 2
    }
    for (m = 1; m <= nm; m++) {
        x = $col[M[m]]; c = $col[M[m] "_ci95"]
        if (x == "" || c == "" || x != x + 0) {
            print "edge-vs-cloud.awk: " FILENAME ": point " r ", " t ": no " M[m] > "/dev/stderr"
            bad = 1; exit 2
        }
        key = m SUBSEP r SUBSEP t SUBSEP nv
        val[key] = x + 0; ci[key] = c + 0; n[m SUBSEP r SUBSEP t]++
    }
}
END {
    if (bad) exit 2
    for (i = 1; i <= nv; i++) if (edge[i]) ne++
    if (!ne || ne == nv) { print "edge-vs-cloud.awk: needs an edge-* and another variant" > "/dev/stderr"; exit 2 }
    # Every point in every file before anything is printed: no partial table.
    for (a = 1; a <= nx; a++) for (b = 1; b <= ny; b++)
        if (n[1 SUBSEP xs[a] SUBSEP ys[b]] != nv) {
            print "edge-vs-cloud.awk: point " xs[a] ", " ys[b] " is missing from " \
                nv - n[1 SUBSEP xs[a] SUBSEP ys[b]] " file(s)" > "/dev/stderr"
            exit 2
        }
    print "metric,rtt,tenants,ix,iy,winner,wi,edge,cloud,ratio,tie"
    for (m = 1; m <= nm; m++) for (a = 1; a <= nx; a++) for (b = 1; b <= ny; b++) {
        r = xs[a]; t = ys[b]; p = m SUBSEP r SUBSEP t
        w = 0; be = 0; bc = 0
        for (i = 1; i <= nv; i++) {
            x = val[p SUBSEP i]
            if (!w || x < val[p SUBSEP w]) w = i
            if (edge[i] && (!be || x < val[p SUBSEP be])) be = i
            if (!edge[i] && (!bc || x < val[p SUBSEP bc])) bc = i
        }
        e = val[p SUBSEP be]; c = val[p SUBSEP bc]; d = e - c; if (d < 0) d = -d
        tie = (d <= ci[p SUBSEP be] + ci[p SUBSEP bc])
        printf "%s,%s,%s,%d,%d,%s,%d,%.6g,%.6g,%.4f,%d\n", M[m], r, t, a, b, name[w], w, e, c,
            (c > 0 ? e / c : "nan"), tie
    }
}
