# No include cycles among sim/ modules. A module is a file stem (sim/foo.c
# and sim/foo.h are module foo); foo depends on bar when either of foo's
# files includes sim/bar.h. Any cycle in that graph (a.c including b.h while
# b.c includes a.h, or longer) fails, and tsort names the modules on it.
. tests/cli/lib.sh

# It reads sources, not a build: once per suite run is enough.
case "$BUILD" in
*asan*) echo "skip include-cycles: build-independent, checked with the optimised build"; exit 0 ;;
esac

edges=$TMP/edges
: >"$edges"
for f in sim/*.c sim/*.h; do
    from=$(basename "$f"); from=${from%.*}
    sed -n 's/^[[:space:]]*#[[:space:]]*include[[:space:]]*"\([^"]*\)\.h".*/\1/p' "$f" |
    while read -r to; do
        [ -f "sim/$to.h" ] || continue
        [ "$to" = "$from" ] && continue
        echo "$from $to" >>"$edges"
    done
done
if [ -s "$edges" ]; then pass include_graph_built
else fail include_graph_built "no includes found among sim/ files"; fi

if tsort "$edges" >/dev/null 2>"$TMP/loops"; then
    pass no_include_cycles
else
    fail no_include_cycles "cycle among sim/ modules:" \
        "$(sed -n 's/^tsort: \([a-z_0-9]*\)$/\1/p' "$TMP/loops" | tr '\n' ' ')"
fi

# The check itself: a planted two-module cycle is found.
printf 'a b\nb a\n' >"$TMP/planted"
if tsort "$TMP/planted" >/dev/null 2>&1; then fail planted_cycle_found "tsort missed a cycle"
else pass planted_cycle_found; fi
