# build/calibrate refuses an --out it cannot write before it measures (a
# measurement takes minutes; the timeout below would end one), and leaves
# nothing behind when the path is fine.
. tests/cli/lib.sh

CAL="$BUILD/calibrate"
card=models/llm/llama-2-7b.yaml
start=$(date +%s)
expect_exit calibrate_out_no_dir 2 timeout 60 "$CAL" --device cpu --model "$card" \
    --out "$TMP/no/such/dir/t.yaml"
end=$(date +%s)
grep -q "$TMP/no/such/dir/t.yaml" "$TMP/err" && pass calibrate_out_named ||
    fail calibrate_out_named "$(head -c 300 "$TMP/err")"
[ $((end - start)) -lt 30 ] && pass calibrate_out_refused_first ||
    fail calibrate_out_refused_first "took $((end - start)) s"
mkdir "$TMP/d"
expect_exit calibrate_out_is_dir 2 timeout 60 "$CAL" --device cpu --model "$card" --out "$TMP/d"
[ -z "$(ls -A "$TMP/d")" ] && pass calibrate_out_nothing_left ||
    fail calibrate_out_nothing_left "$(ls -A "$TMP/d")"
# A socket (or a block device, a link to nothing) is no place for a table
# (sim/io/outfile.h): refused before measuring, left as it was. The old check
# tried only OUT.tmp and found out after the measurement.
if python3 -c "import socket,sys; socket.socket(socket.AF_UNIX).bind(sys.argv[1])" \
        "$TMP/sock" 2>/dev/null; then
    start=$(date +%s)
    expect_exit calibrate_out_socket_refused 2 timeout 60 "$CAL" --device cpu \
        --model "$card" --out "$TMP/sock"
    end=$(date +%s)
    [ -S "$TMP/sock" ] && grep -q "$TMP/sock: is a socket" "$TMP/err" &&
        [ $((end - start)) -lt 30 ] && pass calibrate_out_socket_first ||
        fail calibrate_out_socket_first "$(head -c 300 "$TMP/err")"
else
    echo "SKIP calibrate_out_socket: cannot make a socket here"
fi
# No temporary is left beside a refused --out.
[ -z "$(ls "$TMP" | grep '\.tmp')" ] && pass calibrate_out_no_tmp_left ||
    fail calibrate_out_no_tmp_left "$(ls "$TMP")"
# The card is an input: --out may not be it.
cp "$card" "$TMP/card.yaml"
expect_exit calibrate_out_is_card 2 timeout 60 "$CAL" --device cpu --model "$TMP/card.yaml" \
    --out "$TMP/card.yaml"
cmp -s "$card" "$TMP/card.yaml" && pass calibrate_card_untouched || fail calibrate_card_untouched
# Issue 28 item 16: the clash is named by its options, prefixed once (old:
# "calibrate: --out --model CARD and --out CARD are the same file").
want="calibrate: --model $TMP/card.yaml and --out $TMP/card.yaml are the same file: refusing to overwrite an input with an output; give the --out another name"
[ "$(cat "$TMP/err")" = "$want" ] && pass calibrate_clash_named || fail calibrate_clash_named "$(head -c 300 "$TMP/err")"
# A card found under the specsim root is the file read: --out naming that
# file is the same clash (old: not seen, the measurement started and its
# table would have replaced the card). A copy of the root, so that nothing
# in the tree is at risk.
mkdir -p "$TMP/tree/models/llm" "$TMP/elsewhere"
cp "$card" "$TMP/tree/models/llm/c.yaml"
cal_abs=$(cd "$(dirname "$CAL")" && pwd)/$(basename "$CAL")
(cd "$TMP/elsewhere" && SPECSIM_ROOT="$TMP/tree" timeout 20 "$cal_abs" --device cpu --quick \
    --model models/llm/c.yaml --out "$TMP/tree/models/llm/c.yaml") >"$TMP/out" 2>"$TMP/err"
rc=$?
[ "$rc" -eq 2 ] && grep -q "^calibrate: --model $TMP/tree/models/llm/c.yaml and --out $TMP/tree/models/llm/c.yaml are the same file" "$TMP/err" &&
    cmp -s "$card" "$TMP/tree/models/llm/c.yaml" && pass calibrate_clash_resolved_card ||
    fail calibrate_clash_resolved_card "exit $rc $(head -c 300 "$TMP/err")"
# --device cuda appends every timing to --log (default: --out's .csv): it
# may not be the card or the table either; refused before the CUDA side
# runs, built with it or not.
expect_exit calibrate_log_is_card 2 timeout 20 "$CAL" --device cuda --model "$TMP/card.yaml" \
    --out "$TMP/t.yaml" --log "$TMP/card.yaml"
grep -q "^calibrate: --model $TMP/card.yaml and --log $TMP/card.yaml are the same file" "$TMP/err" &&
    cmp -s "$card" "$TMP/card.yaml" && pass calibrate_log_clash_named ||
    fail calibrate_log_clash_named "$(head -c 300 "$TMP/err")"
cp "$card" "$TMP/t.csv"
expect_exit calibrate_default_log_is_card 2 timeout 20 "$CAL" --device cuda --model "$TMP/t.csv" \
    --out "$TMP/t.yaml"
grep -q "^calibrate: --model $TMP/t.csv and the default --log $TMP/t.csv are the same file" "$TMP/err" &&
    pass calibrate_default_log_clash_named || fail calibrate_default_log_clash_named "$(head -c 300 "$TMP/err")"
# The CUDA side's messages carry one "calibrate: " (old: "calibrate:
# calibrate --device cuda: ...", after a blank line). Its options are read
# before any device is looked for, so this needs no GPU.
"$CAL" --device cuda --model "$card" --reps 0 >"$TMP/out" 2>"$TMP/err"
rc=$?
if grep -q "built without CUDA" "$TMP/err"; then
    echo "SKIP calibrate_cuda_prefix_once: built without CUDA"
elif [ "$rc" -eq 2 ] && [ "$(head -n 1 "$TMP/err")" = "calibrate: --device cuda: bad --reps" ]; then
    pass calibrate_cuda_prefix_once
else
    fail calibrate_cuda_prefix_once "exit $rc $(head -c 300 "$TMP/err")"
fi
