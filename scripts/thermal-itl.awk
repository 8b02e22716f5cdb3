# thermal-itl.awk — per-token ITL over time from a `specsim run --trace` CSV
# (docs/formats.md, "Event trace CSV"), in bins of `bin` seconds (default
# 20), all tenants together: a commit of n tokens `gap` after the tenant's
# previous token counts n tokens of gap/n each (the itl_* metrics' rule), in
# the bin of the commit. Also the drafts' speed level at the end of each bin,
# from the `throttle` rows (tokens: the speed in thousandths; 1 before any).
# Usage: awk -F, -v bin=20 [-v unit=s] -f scripts/thermal-itl.awk TRACE.csv > OUT.csv
# Output: t_min,itl_ms,speed (t_min: the bin's middle, in minutes; bins
# without a commit are left out); with unit=s, t_s in seconds instead
# (fallback-itl.gp).
BEGIN {
    if (bin == "") bin = 20
    speed = 1
    div = unit == "s" ? 1 : 60
    print (unit == "s" ? "t_s" : "t_min") ",itl_ms,speed"
}
NR == 1 && $1 == "time" { next }
$3 == "first_token" { prev[$2] = $1; next }
$3 == "throttle" { speed = $5 / 1000; next }
$3 == "commit" && ($2 in prev) {
    b = int($1 / bin)
    gap[b] += $1 - prev[$2]
    tok[b] += $5
    prev[$2] = $1
    if (b > last) last = b
    sp[b] = speed
}
END {
    for (b = 0; b <= last; b++) {
        if (!(b in tok) || tok[b] <= 0) continue
        printf "%.6f,%.6f,%g\n", (b + 0.5) * bin / div, 1000 * gap[b] / tok[b], sp[b]
    }
}
