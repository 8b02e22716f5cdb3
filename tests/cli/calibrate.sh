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
