# group-itl.awk — per-token inter-token latency (ITL) of each tenant group,
# derived from an event trace (`specsim run --trace`, replication 0) and the
# scenario as `specsim check` resolves it.
#
# Method (the definition of itl_mean_s in docs/metrics.md, applied per
# group): a commit of n tokens that arrives a time g after the request's
# previous commit (or its first token) gives n tokens of latency g/n; a
# commit counts when its own time is at or after the warm-up. Tenants are
# numbered group after group in the order of tenants.groups, so tenant k
# belongs to the group whose running count first exceeds k.
#
# Usage: awk -F, -v out=CDF.csv -v summary=SUMMARY.csv -f scripts/group-itl.awk
#            RESOLVED.yaml TRACE.csv
#   CDF.csv      group,itl_ms,cdf — the distribution over tokens of each
#                group, then of all tenants ("all"), each thinned to steps
#                of at most 1/500 in cdf (its last row is cdf = 1)
#   SUMMARY.csv  group,tenants,tokens,itl_mean_ms,itl_p50_ms,itl_p99_ms
#                (percentiles: the smallest latency whose cdf reaches p)
# Exit status 2 with a message on a warm-up this script cannot read (auto)
# or a trace with a tenant outside the groups.

function die(msg) { print "group-itl.awk: " msg > "/dev/stderr"; failed = 1; exit 2 }
# Seconds from a resolved duration ("20s", "500ms", "2min").
function seconds(v,   n, u) {
    n = v + 0; u = v; sub(/^[0-9.eE+-]+/, "", u)
    if (u == "s" || u == "") return n
    if (u == "ms") return n / 1e3
    if (u == "us") return n / 1e6
    if (u == "min") return n * 60
    if (u == "h") return n * 3600
    die("warmup: cannot read '" v "' (give a fixed warm-up, e.g. 20s)")
}
# --- pass 1: the resolved scenario (YAML as `specsim check` writes it) ----
FNR == NR {
    line = $0; sub(/[ \t]*#.*$/, "", line)
    if (line ~ /^warmup:/) { v = line; sub(/^warmup:[ \t]*/, "", v); warmup = seconds(v) }
    else if (line ~ /^tenants:/) intenants = 1
    else if (line ~ /^[^ ]/) intenants = 0
    else if (intenants && line ~ /^  count:/) { total = line; sub(/^  count:[ \t]*/, "", total) }
    else if (intenants && line ~ /^  groups:/) ingroups = 1
    else if (intenants && line ~ /^  [^ ]/) ingroups = 0
    else if (ingroups && line ~ /^    - /) {
        ng++; gname[ng] = "group " (ng - 1); gcount[ng] = 0
        item = line; sub(/^    - /, "      ", item); groupkey(item)
    }
    else if (ingroups) groupkey(line)
    next
}
function groupkey(l,   v) {
    if (l ~ /^      name:/) { v = l; sub(/^      name:[ \t]*/, "", v); gsub(/"/, "", v); gname[ng] = v }
    if (l ~ /^      count:/) { v = l; sub(/^      count:[ \t]*/, "", v); gcount[ng] = v + 0 }
}
# --- pass 2: the trace ---------------------------------------------------
FNR == 1 {
    if (ng == 0) { ng = 1; gname[1] = "all tenants"; gcount[1] = total + 0 }
    base = 0
    for (g = 1; g <= ng; g++) { first[g] = base; base += gcount[g] }
    ntenants = base
    next
}
$3 == "first_token" { last[$2] = $1 + 0; next }
$3 == "commit" {
    k = $2 + 0; t = $1 + 0; n = $5 + 0
    if (!(k in last)) die("commit of tenant " k " before its first token")
    gap = t - last[k]; last[k] = t
    if (t < warmup || n <= 0) next
    if (!(k in grp)) {
        if (k >= ntenants) die("tenant " k " outside the " ntenants " tenants of the groups")
        for (g = ng; first[g] > k; g--) ;
        grp[k] = g
    }
    m = ++ns; sv[m] = gap / n * 1e3; sw[m] = n; sg[m] = grp[k]
}
END {
    if (failed) exit 2
    if (out == "" || summary == "") die("set -v out=CDF.csv -v summary=SUMMARY.csv")
    sortsamples()
    print "group,itl_ms,cdf" > out
    print "group,tenants,tokens,itl_mean_ms,itl_p50_ms,itl_p99_ms" > summary
    for (g = 1; g <= ng + 1; g++) emit(g)
}
# Indices of the samples in order of latency (heap sort: POSIX awk has no
# sort, and a long run has tens of thousands of commits).
function sortsamples(   i, end, t) {
    for (i = 1; i <= ns; i++) ix[i] = i
    for (i = int(ns / 2); i >= 1; i--) sift(i, ns)
    for (end = ns; end > 1; end--) { t = ix[1]; ix[1] = ix[end]; ix[end] = t; sift(1, end - 1) }
}
function sift(i, n,   c, t) {
    while ((c = 2 * i) <= n) {
        if (c < n && sv[ix[c + 1]] > sv[ix[c]]) c++
        if (sv[ix[i]] >= sv[ix[c]]) return
        t = ix[i]; ix[i] = ix[c]; ix[c] = t; i = c
    }
}
# Group g's CDF and summary row; g = ng + 1 is every tenant.
function emit(g,   i, j, w, tot, sum, cum, lastc, name, p50, p99, cnt) {
    name = (g > ng) ? "all" : gname[g]
    cnt = (g > ng) ? ntenants : gcount[g]
    tot = 0; sum = 0
    for (i = 1; i <= ns; i++)
        if (g > ng || sg[i] == g) { tot += sw[i]; sum += sw[i] * sv[i] }
    if (tot == 0) { printf "%s,%d,0,,,\n", name, cnt > summary; return }
    cum = 0; lastc = -1; p50 = p99 = ""
    for (j = 1; j <= ns; j++) {
        i = ix[j]
        if (g <= ng && sg[i] != g) continue
        cum += sw[i]
        if (p50 == "" && cum >= 0.5 * tot) p50 = sv[i]
        if (p99 == "" && cum >= 0.99 * tot) p99 = sv[i]
        if (cum / tot - lastc >= 0.002 || cum == tot) {
            printf "%s,%.6f,%.6f\n", name, sv[i], cum / tot > out; lastc = cum / tot
        }
    }
    printf "%s,%d,%d,%.6f,%.6f,%.6f\n", name, cnt, tot, sum / tot, p50, p99 > summary
}
