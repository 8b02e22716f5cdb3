# Inputs (issue 14, items 6-12) through the command line: a sweep reads its
# scenario once (an edit while it runs changes no row), files that are not
# regular are refused at once, results do not depend on the working
# directory, nothing given is silently dropped, and sweep files are read back
# field by field (line breaks in axis values included).
. tests/cli/lib.sh

S=$(cd "$(dirname "$SPECSIM")" && pwd)/specsim
ROOT=$(pwd)

# --- item 6: an edit during a sweep changes no row --------------------------
# 60 points of some tens of milliseconds each: the edit lands mid-sweep.
cat >"$TMP/long.yaml" <<'EOF'
duration: 120s
warmup: 1s
acceptance: {model: iid, alpha: 0.8}
tenants: {count: 8, edge: {draft_time: 10ms}}
cloud: {verify_time: 5ms}
sweep:
  seed: {from: 1, to: 60, step: 1}
EOF
mkdir "$TMP/a" "$TMP/b"
cp "$TMP/long.yaml" "$TMP/a/s.yaml"
cp "$TMP/long.yaml" "$TMP/b/s.yaml"
"$S" sweep "$TMP/a/s.yaml" -j 1 --quiet --out "$TMP/a/s.csv" 2>"$TMP/err"
"$S" sweep "$TMP/b/s.yaml" -j 1 --quiet --out "$TMP/b/s.csv" 2>"$TMP/err" &
pid=$!
rows=0; tries=0
while [ "$rows" -lt 3 ] && [ "$tries" -lt 600 ]; do
    sleep 0.05; tries=$((tries + 1))
    [ -f "$TMP/b/s.csv" ] && rows=$(wc -l <"$TMP/b/s.csv")
done
sed -i 's/alpha: 0.8/alpha: 0.3/' "$TMP/b/s.yaml"
rows_at_edit=$(wc -l <"$TMP/b/s.csv")
wait "$pid"; rc=$?
if [ "$rc" -eq 0 ] && [ "$rows_at_edit" -lt 61 ] && cmp -s "$TMP/a/s.csv" "$TMP/b/s.csv"
then pass sweep_reads_scenario_once
else fail sweep_reads_scenario_once "rc $rc, $rows_at_edit lines at the edit, files differ: $(cmp "$TMP/a/s.csv" "$TMP/b/s.csv" 2>&1)"; fi

# --- item 7: no unbounded or blocking reads ------------------------------------
# The memory cap guards against a reader that does not refuse it (ASan
# reserves more address space than any cap allows, so not there).
( case "$BUILD" in *asan*) ;; *) ulimit -v 4000000 ;; esac
  timeout 20 "$S" check /dev/zero ) >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q '/dev/zero: not a regular file' "$TMP/err"
then pass check_dev_zero_refused
else fail check_dev_zero_refused "exit $rc: $(head -c 300 "$TMP/err")"; fi
mkfifo "$TMP/fifo"
timeout 20 "$S" check "$TMP/fifo" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'fifo: not a regular file (a FIFO)' "$TMP/err"
then pass check_fifo_refused
else fail check_fifo_refused "exit $rc: $(head -c 300 "$TMP/err")"; fi
timeout 20 "$S" check --set "cloud.target=$TMP/fifo" >"$TMP/out" 2>"$TMP/err"
rc=$?
if [ "$rc" -eq 2 ] && grep -q 'cloud.target: cannot read card file: .*fifo: not a regular file' "$TMP/err"
then pass card_fifo_refused
else fail card_fifo_refused "exit $rc: $(head -c 300 "$TMP/err")"; fi

# --- item 8: the working directory changes nothing ----------------------------
# A valid decoy card of the default target's name in the working directory.
mkdir -p "$TMP/cwd/models/llm"
sed 's/^layers: .*/layers: 3/' models/llm/llama-2-7b.yaml >"$TMP/cwd/models/llm/llama-2-7b.yaml"
strip() { sed 's/"wall_s": [^,]*,//; s/"events_per_s": [^,]*,//; s/"setup_s": [^,]*,//'; }
for sc in "" "$ROOT/scenarios/default.yaml"; do
    # shellcheck disable=SC2086  # an empty $sc is the built-in scenario
    "$S" run $sc --json --set duration=10s | strip >"$TMP/here.json"
    # shellcheck disable=SC2086
    (cd "$TMP/cwd" && "$S" run $sc --json --set duration=10s) | strip >"$TMP/there.json"
    name=decoy_in_cwd_ignored${sc:+_file}
    if [ -s "$TMP/here.json" ] && cmp -s "$TMP/here.json" "$TMP/there.json"
    then pass "$name"; else fail "$name" "results differ with a decoy card in the working directory"; fi
done
(cd "$TMP/cwd" && "$S" check) >"$TMP/c.yaml" 2>"$TMP/err"
if grep -qx "# read $ROOT/models/llm/llama-2-7b.yaml sha256 [0-9a-f]\{64\}" "$TMP/c.yaml" &&
   ! grep -q "$TMP/cwd" "$TMP/c.yaml"
then pass check_names_card_used
else fail check_names_card_used "$(grep '^# read' "$TMP/c.yaml")"; fi
# A card next to the scenario is found from any directory.
mkdir "$TMP/near"
cp models/hardware/h200.yaml "$TMP/near/mine.yaml"
printf 'duration: 10s\ncloud: {gpu: mine.yaml}\n' >"$TMP/near/s.yaml"
if (cd / && "$S" check "$TMP/near/s.yaml") >"$TMP/c.yaml" 2>"$TMP/err" &&
   grep -qx "# read $(cd "$TMP/near" && pwd -P)/mine.yaml sha256 [0-9a-f]\{64\}" "$TMP/c.yaml"
then pass card_beside_scenario
else fail card_beside_scenario "$(head -c 300 "$TMP/err")"; fi

# --- item 10: nothing silently ignored -----------------------------------------
expect_exit set_sweep_refused 2 "$S" check --set sweep=garbage
grep -q -- '--set:1:1: sweep: the sweep: section cannot be overridden' "$TMP/err" ||
    fail set_sweep_message "$(cat "$TMP/err")"
expect_exit set_sweep_axis_refused 2 "$S" check "$TMP/long.yaml" --set sweep.seed=[1]
expect_exit set_empty_refused 2 "$S" check --set seed=
grep -q -- '--set:1:1: seed: no value' "$TMP/err" || fail set_empty_message "$(cat "$TMP/err")"
printf 'duration: 10s\nseed:\n' >"$TMP/null.yaml"
expect_exit null_seed_refused 2 "$S" check "$TMP/null.yaml"
grep -q "null.yaml:2:.*seed: no value" "$TMP/err" || fail null_seed_message "$(cat "$TMP/err")"
printf 'duration: 10s\nname: !!binary aGVsbG8=\n' >"$TMP/tag.yaml"
expect_exit binary_tag_refused 2 "$S" check "$TMP/tag.yaml"
grep -q "tag.yaml:2:7: name: YAML tags" "$TMP/err" || fail binary_tag_message "$(cat "$TMP/err")"
printf '\357\273\277duration: 10s\nseed: 9\n' >"$TMP/bom.yaml"
if "$S" check "$TMP/bom.yaml" >"$TMP/out" 2>"$TMP/err" && grep -qx 'seed: 9' "$TMP/out"
then pass utf8_bom_accepted; else fail utf8_bom_accepted "$(head -c 300 "$TMP/err")"; fi

# --- items 11 and 12: sweep files read back field by field ---------------------
# name_axis TEST F VALUES: $TMP/F.yaml sweeps `name` over VALUES (a YAML
# flow list); its file must resume and merge to the same bytes.
name_axis() {
    cat >"$TMP/$2.yaml" <<EOF
duration: 2s
warmup: 0.5s
tenants: {edge: {draft_time: 10ms}}
cloud: {verify_time: 5ms}
sweep:
  name: $3
EOF
    if "$S" sweep "$TMP/$2.yaml" --quiet --out "$TMP/$2.csv" 2>"$TMP/err" &&
       "$S" sweep "$TMP/$2.yaml" --quiet --resume --out "$TMP/$2.csv" 2>>"$TMP/err" &&
       "$S" merge "$TMP/${2}m.csv" "$TMP/$2.csv" 2>>"$TMP/err" &&
       cmp -s "$TMP/$2.csv" "$TMP/${2}m.csv"
    then pass "$1"
    else fail "$1" "$(head -c 300 "$TMP/err")"; fi
}
name_axis line_break_axis_reads_back nl '["a\nb", "c,\"d", e]'
# A carriage return, a tab and the Unicode line separator U+2028 in axis
# values: the sidecar must write them escaped (raw, a YAML reader breaks
# the line or folds them), or the sweep cannot resume or merge its own file.
name_axis control_axis_reads_back cr '["a\rb", "c\u2028d", "e\tf"]'
"$S" sweep "$TMP/nl.yaml" --quiet --shard 1/2 --out "$TMP/sh.csv" 2>"$TMP/err"
cp "$TMP/sh.csv" "$TMP/sh0.csv"
expect_exit shard_file_resumed_unsharded_refused 2 \
    "$S" sweep "$TMP/nl.yaml" --quiet --resume --out "$TMP/sh.csv"
if cmp -s "$TMP/sh.csv" "$TMP/sh0.csv"; then pass shard_file_left_alone
else fail shard_file_left_alone "the shard's file changed"; fi
