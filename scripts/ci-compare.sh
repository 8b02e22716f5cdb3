#!/bin/sh
# ci-compare.sh OLD NEW [SCENARIO...] — do two builds agree within their
# confidence intervals? For a change that may move results only by chance
# (issue 27 item 4: the one change of random streams a faster exact
# sampler is allowed; a model change that should not matter): runs `specsim run --json` for every scenario (default: all of
# scenarios/) with both binaries and compares, for each metric that has a
# CI (the fleet's and every group's), |new - old| against the combined
# half-width sqrt(ci_old^2 + ci_new^2). At 95%, at most about 5% of the
# metrics should exceed it by chance: fewer in practice, as quantile CIs
# are conservative and many metrics barely vary (the old build against
# itself with another seed: 0.7%). The worst ones are listed, in units of
# the combined half-width, to look into; CI_COMPARE_KEEP=FILE keeps every
# row (scenario, metric, old, new, half-width, ratio).
#
# A scenario run with one replication has no CI: it is run with --reps 5.
# A scenario that fails or runs past CI_COMPARE_TIMEOUT seconds (default
# 300) with either binary is listed as skipped. Extra flags for both runs:
# CI_COMPARE_FLAGS (for instance "-j 2"); for the new binary's alone:
# CI_COMPARE_NEW_FLAGS. The two builds share every stream the change left
# alone, so their results are correlated and fewer still exceed;
# CI_COMPARE_NEW_FLAGS="--seed 2" makes the runs independent.
set -u
old=$1; new=$2; shift 2
# shellcheck disable=SC2046  # the scenarios' paths have no spaces
[ $# -gt 0 ] || set -- $(find scenarios -name '*.yaml' | sort)
tmo=${CI_COMPARE_TIMEOUT:-300}
flags=${CI_COMPARE_FLAGS:-}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# flat FILE: "path value" for every number in a --json result, the path
# being the nested object names joined by '.', then the key.
flat() {
    awk '
    /^ *"[^"]*": *\{ *$/ { n = $0; sub(/^ *"/, "", n); sub(/".*/, "", n); st[++d] = n; next }
    /^ *\},? *$/ { if (d > 0) d--; next }
    /^ *"[^"]*": *-?[0-9.]+([eE][-+]?[0-9]+)?,? *$/ {
        k = $0; sub(/^ *"/, "", k); sub(/".*/, "", k)
        v = $0; sub(/^[^:]*: */, "", v); sub(/,? *$/, "", v)
        p = ""; for (i = 1; i <= d; i++) p = p st[i] "."
        print p k, v
    }' "$1"
}

runs() { # runs BIN OUT SCENARIO [flags]: 0 when it ran
    bin=$1; out=$2; scen=$3; shift 3
    # shellcheck disable=SC2086
    timeout "$tmo" "$bin" run "$scen" --json --quiet $flags "$@" >"$out" 2>"$out.err"
}

: >"$tmp/all"
for s in "$@"; do
    if ! runs "$old" "$tmp/o.json" "$s"; then echo "skipped $s (old: $(tail -n 1 "$tmp/o.json.err"))"; continue; fi
    extra=
    if grep -q '^  "replications": 1,' "$tmp/o.json"; then
        extra="--reps 5"
        # shellcheck disable=SC2086
        runs "$old" "$tmp/o.json" "$s" $extra || { echo "skipped $s (old, --reps 5)"; continue; }
    fi
    # shellcheck disable=SC2086
    if ! runs "$new" "$tmp/n.json" "$s" $extra ${CI_COMPARE_NEW_FLAGS:-}; then echo "skipped $s (new: $(tail -n 1 "$tmp/n.json.err"))"; continue; fi
    flat "$tmp/o.json" >"$tmp/o.txt"
    flat "$tmp/n.json" >"$tmp/n.txt"
    awk -v scen="$s" '
    FNR == NR { o[$1] = $2; next }
    { n[$1] = $2 }
    END {
        for (k in o) {
            if (k !~ /_ci95$/) continue
            m = substr(k, 1, length(k) - 5)
            if (!(m in o) || !(m in n) || !(k in n)) continue
            if (m ~ /(^|\.)(wall_s|events_per_s|setup_s|events)$/) continue
            h = sqrt(o[k] * o[k] + n[k] * n[k]); d = n[m] - o[m]; if (d < 0) d = -d
            print scen, m, o[m], n[m], h, (h > 0 ? d / h : (d > 0 ? "inf" : 0))
        }
    }' "$tmp/o.txt" "$tmp/n.txt" >>"$tmp/all"
done

awk '
{ t++; r = $6
  if (r == "inf") { zero++; line[t] = $0; score[t] = 1e300; next }
  if (r > 1) out++
  if (r > 2) out2++
  line[t] = $0; score[t] = r + 0 }
END {
    printf "metrics with a CI: %d; |new - old| > combined 95%% half-width: %d (%.1f%%); > 2x: %d; differ with both CIs 0: %d\n",
           t, out, t ? 100 * out / t : 0, out2, zero
    # the worst 15, for a look
    for (j = 0; j < 15; j++) {
        b = 0; for (i = 1; i <= t; i++) if (!(i in done) && (b == 0 || score[i] > score[b])) b = i
        if (b == 0 || score[b] <= 1) break
        done[b] = 1
        split(line[b], f, " ")
        printf "  %-40s %-40s old %-12s new %-12s half-width %-12s ratio %s\n", f[1], f[2], f[3], f[4], f[5], f[6]
    }
}' "$tmp/all"
[ -n "${CI_COMPARE_KEEP:-}" ] && cp "$tmp/all" "$CI_COMPARE_KEEP"
exit 0
