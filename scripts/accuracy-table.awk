# accuracy-table.awk — the README's accuracy table from
# scripts/testbed-validate.sh's points file (scenario,metric,testbed,simulator
# lines): one row per metric, one column per scenario in file order, each
# cell "testbed / simulator (error%)", error = (simulator − testbed) /
# testbed. Times are shown in ms, utilisations in %.
#   awk -F, -f scripts/accuracy-table.awk results/testbed/points.csv
function cell(v, m) {
    if (m ~ /_s$/ && m !~ /_per_s$|tok_s$/) return sprintf("%.4g ms", 1e3 * v)
    if (m == "gpu_util" || m == "edge_stall_frac") return sprintf("%.4g%%", 100 * v)
    return sprintf("%.4g", v)
}
{
    if (!($1 in seen)) { seen[$1] = 1; sc[++ns] = $1 }
    if (!($2 in seenm)) { seenm[$2] = 1; mt[++nm] = $2 }
    tb[$1, $2] = $3; sim[$1, $2] = $4
}
END {
    printf "| metric |"
    for (i = 1; i <= ns; i++) { n = sc[i]; sub(/^real-model-/, "", n); printf " %s |", n }
    printf "\n|---|"
    for (i = 1; i <= ns; i++) printf "---|"
    printf "\n"
    for (j = 1; j <= nm; j++) {
        m = mt[j]
        printf "| `%s` |", m
        for (i = 1; i <= ns; i++) {
            if (!((sc[i], m) in tb)) { printf " – |"; continue }
            t = tb[sc[i], m]; s = sim[sc[i], m]
            printf " %s / %s (%+.1f%%) |", cell(t, m), cell(s, m), 100 * (s - t) / t
        }
        printf "\n"
    }
}
