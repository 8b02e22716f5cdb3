#!/bin/sh
# scripts/fit-published.sh [SPECSIM] KEY=V1,V2,... [KEY=...] — the grid
# search of docs/validation.md ("The fit"): for every combination of the
# values given, every GPU card (kind: gpu) in a scratch copy of models/hardware/
# gets those top-level keys (roofline_p, flops_eff, kernel_floor, bw_eff, …),
# scripts/validate-published.sh runs over the published rows, and one line
# prints the median |error| % of all fit rows, of all holdout rows, the mean
# of the GPU groups' fit medians, then every group's fit/holdout medians.
# The shipped cards are not touched. Values are written as given (a duration
# with its unit: kernel_floor=3us,6us). The cards must already carry each key
# at the top level (a line `KEY: ...`); a key they lack is an error, since
# appending it would put it after any nested section.
#
#   sh scripts/fit-published.sh roofline_p=1.3,2
#   sh scripts/fit-published.sh build/specsim flops_eff=0.6,0.7 kernel_floor=3us,6us
#
# Exit status 0, 1 when a run of validate-published failed, 2 on bad usage.
set -eu
root=$(cd "$(dirname "$0")/.." && pwd)
specsim=$root/build/specsim
case ${1:-} in
*=*|'') ;;
*) specsim=$1; shift ;;
esac
case $specsim in /*) ;; *) specsim=$(pwd)/$specsim ;; esac
[ $# -gt 0 ] || { echo "usage: fit-published.sh [SPECSIM] KEY=V1,V2,... [KEY=...]" >&2; exit 2; }
[ -x "$specsim" ] || { echo "fit-published: $specsim: not an executable (run make)" >&2; exit 2; }
for a in "$@"; do
    case $a in
    [a-z_]*=?*) ;;
    *) echo "fit-published: '$a': expected KEY=V1,V2,..." >&2; exit 2 ;;
    esac
    # Values go into a sed replacement: letters, digits and . + - only.
    case ${a#*=} in
    *[!A-Za-z0-9.,+-]*|*,,*|,*|*,)
        echo "fit-published: '$a': values are numbers or durations, comma-separated" >&2
        exit 2 ;;
    esac
done

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
mkdir -p "$tmp/tree/results/validation"
cp -R "$root/models" "$tmp/tree/models"
cp -R "$root/scripts" "$tmp/tree/scripts"
cp "$root/results/validation/published.csv" "$tmp/tree/results/validation/"
cards=$(grep -l '^kind: *gpu' "$tmp"/tree/models/hardware/*.yaml)
for a in "$@"; do
    key=${a%%=*}
    for c in $cards; do
        grep -q "^$key:" "$c" ||
            { echo "fit-published: $(basename "$c") has no top-level '$key'" >&2; exit 2; }
    done
done

# combos ARG...: every combination, one per line, as "key=v key=v ...".
combos() {
    if [ $# -eq 0 ]; then echo; return; fi
    first=$1; shift
    key=${first%%=*}
    rest=$(combos "$@")
    echo "${first#*=}" | tr ',' '\n' | while read -r v; do
        echo "$rest" | while read -r r; do echo "$key=$v${r:+ $r}"; done
    done
}

printf '%s\n' "setting | fit | holdout | GPU groups' fit mean | group fit/holdout ..."
# The loop runs in a pipeline's subshell: a failure is left as a file.
combos "$@" | while read -r combo; do
    for kv in $combo; do
        key=${kv%%=*}; val=${kv#*=}
        for c in $cards; do
            sed "s|^$key:.*|$key: $val|" "$c" >"$c.new" && mv "$c.new" "$c"
        done
    done
    if ! sh "$tmp/tree/scripts/validate-published.sh" "$specsim" >"$tmp/out" 2>"$tmp/err"; then
        echo "fit-published: $combo: validate-published failed: $(head -c 300 "$tmp/err")" >&2
        : >"$tmp/failed"
    fi
    awk -F' *[|] *' -v combo="$combo" '
        $3 == "fit" || $3 == "holdout" {
            if ($2 == "all") { all[$3] = $7; next }
            med[$2, $3] = $7
            if (!($2 in seen)) { seen[$2] = 1; order[++n] = $2 }
            if ($3 == "fit" && $2 !~ /^edge/ && $7 != "-") { sum += $7; k++ }
        }
        END {
            line = sprintf("%s | %s | %s | %.2f |", combo, all["fit"], all["holdout"], k ? sum / k : 0)
            for (i = 1; i <= n; i++)
                line = line sprintf(" %s %s/%s", order[i], med[order[i], "fit"], med[order[i], "holdout"])
            print line
        }' "$tmp/out"
done
[ ! -e "$tmp/failed" ]
