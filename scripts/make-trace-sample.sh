#!/bin/sh
# Writes a small synthetic request trace in the column layout of the public
# Azure LLM inference traces (TIMESTAMP,ContextTokens,GeneratedTokens), for
# scenarios/examples/trace.yaml. No data is copied: arrivals and lengths
# come from a MINSTD generator with a fixed seed (integer arithmetic below
# 2^53, so every awk gives the same bytes).
#
# usage: scripts/make-trace-sample.sh [N] > scenarios/examples/trace-sample.csv
set -eu
n=${1:-200}
awk -v n="$n" 'BEGIN {
    x = 20231116
    print "TIMESTAMP,ContextTokens,GeneratedTokens"
    us = 0                       # microseconds after 18:15:46.680590
    for (i = 0; i < n; i++) {
        # Gaps: mostly short (a burst), now and then a pause, mean ~0.25 s.
        x = (x * 48271) % 2147483647; u = x / 2147483647
        gap = (u < 0.8) ? 0.05 + 0.15 * u : 0.3 + 2 * (u - 0.8) * 4
        if (i > 0) us += int(gap * 1e6)
        x = (x * 48271) % 2147483647; u = x / 2147483647; p = 64 + int(960 * u * u)
        x = (x * 48271) % 2147483647; u = x / 2147483647; o = 16 + int(368 * u * u * u)
        t = 18 * 3600 + 15 * 60 + 46
        tus = 680590 + us
        t += int(tus / 1e6); frac = tus % 1000000
        printf "2023-11-16 %02d:%02d:%02d.%06d0,%d,%d\n", int(t / 3600), int(t / 60) % 60, t % 60, frac, p, o
    }
}'
