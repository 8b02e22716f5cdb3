#!/bin/sh
# Writes the small synthetic link traces of scenarios/examples/link-trace.yaml:
# no measured data is copied. Numbers come from a MINSTD generator with a
# fixed seed (integer arithmetic below 2^53, so every awk gives the same
# bytes).
#
#   csv       a link trace CSV (docs/formats.md "Link trace CSV"): a cellular
#             link that wanders between good, fair and poor states for 1 to 8
#             s each, with now and then an outage of 0.2 to 2 s; 120 s long.
#   up, down  Mahimahi delivery-opportunity files (docs/formats.md
#             "Mahimahi link traces"): one millisecond timestamp per 1500-byte
#             opportunity, the rate redrawn every 250 ms (uplink 1 to 6
#             Mbit/s, downlink 4 to 24 Mbit/s); 2 s long, then repeating.
#
# usage: scripts/make-link-trace-sample.sh csv  > scenarios/examples/link-sample.csv
#        scripts/make-link-trace-sample.sh up   > scenarios/examples/link-sample.up
#        scripts/make-link-trace-sample.sh down > scenarios/examples/link-sample.down
set -eu
what=${1:?usage: make-link-trace-sample.sh csv|up|down}
case $what in
csv) awk 'BEGIN {
    x = 26011
    print "t_s,rtt_ms,up_mbps,down_mbps,up"
    # good, fair, poor: rtt (ms), uplink and downlink (Mbit/s)
    split("40 70 150", rtt); split("10 4 1", up); split("50 15 3", dn)
    t = 0; s = 1
    while (t < 120) {
        x = (x * 48271) % 2147483647; u = x / 2147483647
        if (u < 0.1) {            # an outage: the state keeps its numbers
            x = (x * 48271) % 2147483647; d = 0.2 + 1.8 * x / 2147483647
            printf "%.1f,%d,%d,%d,0\n", t, rtt[s], up[s], dn[s]
        } else {                  # a move to a neighbouring state
            s += (u < 0.55) ? -1 : 1
            if (s < 1) s = 2; if (s > 3) s = 2
            x = (x * 48271) % 2147483647; d = 1 + 7 * x / 2147483647
            printf "%.1f,%d,%d,%d,1\n", t, rtt[s], up[s], dn[s]
        }
        t = int((t + d) * 10 + 0.5) / 10
    }
    printf "%.1f\n", t
}' ;;
up|down) awk -v lo="$([ "$what" = up ] && echo 1 || echo 4)" \
             -v hi="$([ "$what" = up ] && echo 6 || echo 24)" \
             -v x="$([ "$what" = up ] && echo 1501 || echo 1502)" 'BEGIN {
    acc = 0
    for (ms = 1; ms <= 2000; ms++) {
        if ((ms - 1) % 250 == 0) {
            x = (x * 48271) % 2147483647; mbps = lo + (hi - lo) * x / 2147483647
        }
        acc += mbps * 1e6 / 8 / 1500 / 1000   # opportunities this ms
        if (ms == 2000 && acc < 1) acc = 1    # the period ends on a line
        while (acc >= 1) { print ms; acc -= 1 }
    }
}' ;;
*) echo "make-link-trace-sample.sh: csv, up or down, not '$what'" >&2; exit 2 ;;
esac
