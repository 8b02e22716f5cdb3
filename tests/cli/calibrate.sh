# build/calibrate refuses an --out it cannot write before it measures (a
# measurement takes minutes; the timeout below would end one), and leaves
# nothing behind when the path is fine; an existing OUT.tmp is never touched.
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
# The table goes to a new OUT.tmp first: a file of that name is the user's,
# so calibrate refuses it, before measuring, and leaves it as it was.
echo "keep me" >"$TMP/t.yaml.tmp"
expect_exit calibrate_out_tmp_exists 2 timeout 60 "$CAL" --device cpu --model "$card" \
    --out "$TMP/t.yaml"
grep -q "t.yaml.tmp already exists" "$TMP/err" && pass calibrate_out_tmp_named ||
    fail calibrate_out_tmp_named "$(head -c 300 "$TMP/err")"
[ "$(cat "$TMP/t.yaml.tmp")" = "keep me" ] && [ ! -e "$TMP/t.yaml" ] &&
    pass calibrate_out_tmp_untouched || fail calibrate_out_tmp_untouched "$(ls -l "$TMP")"
