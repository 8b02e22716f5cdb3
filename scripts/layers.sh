#!/bin/sh
# layers.sh OBJDIR [SRCDIR] — the direction check of sim/'s layers, on
# linked symbols and on includes.
#
# OBJDIR holds the objects of sim/ as the Makefile builds them (build/sim:
# OBJDIR/LAYER/MODULE.o). A module may use a symbol defined in its own layer
# or a lower one, never a higher one; and no two modules may depend on each
# other, directly or around a loop, except within one family: a registry
# and its plugins reference each other by design, since the registry lists
# the plugins' operation tables and the plugins use the registry's helpers:
# a module X and the modules X_* of its folder are one family (model/accept
# and accept_*, model/batch, model/order, model/gamma, entity/proto,
# io/trace and its sinks). Symbols catch what a forward declaration would
# hide from an include check; includes catch what symbols cannot see, a
# type or a layout taken from a higher layer: the sources under SRCDIR
# (default: sim/ beside this script) may include only their own layer and
# those below. The layers, lowest first, are the LAYERS list
# below; docs/design.md ("Layers") says what each holds. A folder not in the
# list is an error, so a new folder has to be placed.
#
# Prints one line per offence and exits 1 when there is any, 2 on bad usage,
# 0 with "layers: N modules, N edges, no upward use, no cycle" otherwise.
set -eu
LAYERS="base engine io stat model desc entity config run cli"

dir=${1:-}
src=${2:-$(cd "$(dirname "$0")/.." && pwd)/sim}
if [ -z "$dir" ] || [ ! -d "$dir" ] || [ ! -d "$src" ]; then
    echo "usage: layers.sh OBJDIR [SRCDIR] (e.g. build/sim sim)" >&2
    exit 2
fi
tmp=$(mktemp -d) || exit 2
trap 'rm -rf "$tmp"' EXIT

: >"$tmp/syms"
for sub in "$dir"/*/; do
    L=$(basename "$sub")
    case " $LAYERS " in *" $L "*) ;; *)
        echo "layers: $sub: folder is not a layer (add it to LAYERS in scripts/layers.sh and to docs/design.md)" >&2
        exit 1 ;;
    esac
done
rank=0
for L in $LAYERS; do
    echo "$L $rank" >>"$tmp/ranks"
    rank=$((rank + 1))
    for o in "$dir/$L"/*.o; do
        [ -f "$o" ] || continue
        m=$L/$(basename "$o" .o)
        nm "$o" | awk -v m="$m" '
            $1 == "U" { print "U", m, $2; next }
            NF == 3 && $2 ~ /^[TDRBCGSV]$/ { print "D", m, $3 }' >>"$tmp/syms"
    done
done
[ -s "$tmp/syms" ] || { echo "layers: no objects under $dir" >&2; exit 2; }

# Module edges with the symbols behind them, the upward ones, and the family
# edges for the cycle check.
awk -v ranks="$tmp/ranks" -v fam="$tmp/fam" -v up="$tmp/up" '
    BEGIN { while ((getline l < ranks) > 0) { split(l, p, " "); rk[p[1]] = p[2] } }
    $1 == "D" { def[$3] = $2; mod[$2] = 1; next }
    $1 == "U" { use[++n] = $2 " " $3; mod[$2] = 1 }
    function layer(m) { return substr(m, 1, index(m, "/") - 1) }
    function family(m,   b, u) {
        b = m; u = index(b, "_")
        if (u > 0 && ((substr(b, 1, u - 1)) in mod)) return substr(b, 1, u - 1)
        return m
    }
    END {
        for (i = 1; i <= n; i++) {
            split(use[i], p, " "); a = p[1]; s = p[2]
            if (!(s in def) || def[s] == a) continue
            b = def[s]
            if (!((a SUBSEP b) in seen)) { seen[a, b] = 1; edges++ }
            if (rk[layer(b)] > rk[layer(a)]) syms[a " -> " b] = syms[a " -> " b] " " s
            fa = family(a); fb = family(b)
            if (fa != fb) print fa, fb > fam
        }
        for (e in syms) print e ":" syms[e] > up
        nm = 0; for (m in mod) nm++
        print nm, edges + 0
    }' "$tmp/syms" >"$tmp/count"
: >>"$tmp/fam"
: >>"$tmp/up"

# Includes of a higher layer's header.
for f in "$src"/*/*.c "$src"/*/*.h; do
    [ -f "$f" ] || continue
    L=$(basename "$(dirname "$f")")
    rel=sim/$L/$(basename "$f")
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([a-z]*\)\/[^"]*".*/\1/p' "$f" |
        sort -u | while read -r M; do echo "$rel $L $M"; done
done | awk -v ranks="$tmp/ranks" '
    BEGIN { while ((getline l < ranks) > 0) { split(l, p, " "); rk[p[1]] = p[2] } }
    ($3 in rk) && rk[$3] > rk[$2] {
        print "layers: upward include: " $1 " includes a " $3 "/ header" }' >"$tmp/inc"

bad=0
if [ -s "$tmp/inc" ]; then
    cat "$tmp/inc"
    bad=1
fi
if [ -s "$tmp/up" ]; then
    sort "$tmp/up" | sed 's/^/layers: upward use: /'
    bad=1
fi
if ! tsort "$tmp/fam" >/dev/null 2>"$tmp/loop"; then
    echo "layers: dependency cycle among: $(sed -n 's/^tsort: \([^ ]*\)$/\1/p' "$tmp/loop" | sort -u | tr '\n' ' ')"
    bad=1
fi
[ "$bad" -eq 0 ] || exit 1
read -r nmod nedge <"$tmp/count"
echo "layers: $nmod modules, $nedge edges, no upward use or include, no cycle"
