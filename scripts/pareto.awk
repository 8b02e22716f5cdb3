# pareto.awk — the Pareto frontier of (itl_mean_s, gpu_s_per_ktok) over every
# row of a sweep CSV: the points no other point beats on both latency and
# cost. Prints "itl_ms,cost" in order of latency.
# Usage: awk -F, -f scripts/pareto.awk FILE.csv
NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
# Edge-only runs use no GPU: their empty cost column counts as 0.
$c["itl_mean_s"] != "" && ($c["gpu_s_per_ktok"] != "" || $c["protocol.mode"] == "edge-only") {
    x[++n] = $c["itl_mean_s"] * 1e3
    y[n] = $c["gpu_s_per_ktok"] + 0
}
END {
    # Insertion sort by latency then cost: sweeps are small, and POSIX awk
    # has no sort.
    for (i = 2; i <= n; i++) {
        a = x[i]; b = y[i]
        for (j = i - 1; j >= 1 && (x[j] > a || (x[j] == a && y[j] > b)); j--) {
            x[j + 1] = x[j]; y[j + 1] = y[j]
        }
        x[j + 1] = a; y[j + 1] = b
    }
    # A point is on the frontier when it is cheaper than every faster one.
    for (i = 1; i <= n; i++)
        if (i == 1 || y[i] < best) { best = y[i]; print x[i] "," y[i] }
}
