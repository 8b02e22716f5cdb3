# speedup.awk — from a sweep over (acceptance.alpha, protocol.gamma,
# protocol.mode) prints "alpha gamma speedup" per (alpha, gamma) with
# speedup = itl_mean_s(sync) / itl_mean_s(async): how many times faster
# async produces tokens than sync in the same conditions.
# Usage: awk -F, -f scripts/speedup.awk FILE.csv | sort -k2,2n -k1,1n
NR == 1 { for (i = 1; i <= NF; i++) c[$i] = i; next }
{
    k = $c["acceptance.alpha"] " " $c["protocol.gamma"]
    v[k, $c["protocol.mode"]] = $c["itl_mean_s"]
    keys[k] = 1
}
END {
    for (k in keys)
        if (v[k, "sync"] != "" && v[k, "async"] + 0 > 0)
            printf "%s %.6g\n", k, v[k, "sync"] / v[k, "async"]
}
