#!/bin/sh
# scenario-digests.sh SPECSIM [OUTDIR]: for every scenario in scenarios/,
# write what `check`, `analytic` and `run --json` print (run with the wall-clock
# fields wall_s and events_per_s removed, which are not results) to
# OUTDIR/<scenario path with / as _>.{check,analytic,run}, and print one
# "sha256  name" line per file. Two trees are then compared with
# `diff -r OUT1 OUT2`: issue 24's acceptance is byte-identical results
# before and after a restructuring. Scenarios with a sweep: or optimize:
# section also get OUTDIR/NAME.sweep (the CSV) and OUTDIR/NAME.optimize
# (--json). A command that fails has its stderr and exit status recorded
# instead, so a refusal is compared too. `check` writes data files by
# absolute path: the checkout's root becomes ROOT/, so that two checkouts
# (a worktree of the old commit, say) compare.
set -eu
bin=${1:?usage: scenario-digests.sh SPECSIM [OUTDIR]}
out=${2:-digests}
root=$(cd "$(dirname "$0")/.." && pwd)
case $bin in /*) ;; *) bin=$(pwd)/$bin ;; esac
mkdir -p "$out"
out=$(cd "$out" && pwd)
cd "$root"
# A key alone on its line goes with its line (setup_s is new in run's JSON:
# digests of builds before and after it still compare).
strip_wall() { sed -E -e '/^ *"(wall_s|events_per_s|setup_s)": *[-0-9.eE+]+,? *$/d' \
    -e 's/"(wall_s|events_per_s|setup_s)": *[-0-9.eE+]+,? *//g' -e '/^ *"version": /d'; }
one() { # one CMD FILE SCENARIO
    if "$bin" "$1" "$3" $4 >"$2.tmp" 2>"$2.err"; then :; else
        echo "exit $?" >>"$2.tmp"; cat "$2.err" >>"$2.tmp"; fi
    rm -f "$2.err"
    if [ "$1" = run ]; then strip_wall <"$2.tmp" >"$2"; rm -f "$2.tmp"
    else sed "s|$root/|ROOT/|g" <"$2.tmp" >"$2"; rm -f "$2.tmp"; fi
}
find scenarios -name '*.yaml' | LC_ALL=C sort | while read -r s; do
    n=$(echo "$s" | tr / _)
    one check "$out/$n.check" "$s" ""
    one analytic "$out/$n.analytic" "$s" ""
    one run "$out/$n.run" "$s" "--json --quiet"
    # a sweep's CSV is byte-reproducible at any -j; wall-clock columns are empty
    if grep -q '^sweep:' "$s"; then
        one sweep "$out/$n.sweep" "$s" "--quiet -j 2 --force --out $out/$n.csv"
        cat "$out/$n.csv" >>"$out/$n.sweep" 2>/dev/null || true
        rm -f "$out/$n.csv" "$out/$n.scenario.yaml"
    fi
    if grep -q '^optimize:' "$s"; then
        one optimize "$out/$n.optimize" "$s" "--json -j 2"
        strip_wall <"$out/$n.optimize" >"$out/$n.opt.tmp"
        mv "$out/$n.opt.tmp" "$out/$n.optimize"
    fi
done
(cd "$out" && sha256sum -- *)
