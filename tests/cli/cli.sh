# CLI contract: help, exit codes, --json holds every metric, determinism,
# --out / --trace files, check round trip.
. tests/cli/lib.sh

# Metric names straight from the contract's X-macro, independent of the binary.
names=$(sed -n 's/^ *X([A-Z0-9_]*, "\([a-z0-9_]*\)".*/\1/p' sim/stat/metrics.h)
[ -n "$names" ] || { fail metric_names_parsed "no names parsed from sim/stat/metrics.h"; }

expect_exit help_main 0 "$SPECSIM" --help
for c in run check analytic sweep merge roofline step; do
    expect_exit "help_$c" 0 "$SPECSIM" "$c" --help
done
expect_exit no_args_is_usage 2 "$SPECSIM"
expect_exit unknown_command 2 "$SPECSIM" frobnicate
expect_exit unknown_option 2 "$SPECSIM" run scenarios/default.yaml --frob
expect_exit set_without_equals 2 "$SPECSIM" run scenarios/default.yaml --set protocol.gamma
expect_exit seed_not_number 2 "$SPECSIM" run scenarios/default.yaml --seed abc
grep -q -- "--seed needs a non-negative integer, got 'abc'" "$TMP/err" && pass seed_error_names_option ||
    fail seed_error_names_option "$(cat "$TMP/err")"
expect_exit missing_file 2 "$SPECSIM" run "$TMP/nope.yaml"
expect_exit set_unknown_key 2 "$SPECSIM" check scenarios/default.yaml --set protocol.gama=3
grep -q "gamma" "$TMP/err" && pass set_unknown_key_suggests || fail set_unknown_key_suggests "$(cat "$TMP/err")"
expect_exit set_out_of_range 2 "$SPECSIM" check scenarios/default.yaml --set acceptance.alpha=1.5
grep -q "acceptance.alpha" "$TMP/err" && pass set_out_of_range_names_key || fail set_out_of_range_names_key "$(cat "$TMP/err")"

# A short version of the default scenario keeps this test fast under ASan.
short="--set duration=8s --set warmup=1s --set replications=2"

# --json: exactly one JSON object holding every metric name once at the top
# level (lines indented by two spaces; "groups" repeats them, deeper).
# shellcheck disable=SC2086
if "$SPECSIM" run scenarios/default.yaml $short --json >"$TMP/a.json" 2>"$TMP/err"; then
    pass run_json_exit0
    missing=""
    for n in $names; do
        c=$(grep -c "^  \"$n\":" "$TMP/a.json")
        [ "$c" -eq 1 ] || missing="$missing $n($c)"
    done
    [ -z "$missing" ] && pass json_has_every_metric || fail json_has_every_metric "$missing"
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); assert isinstance(d, dict)' \
            "$TMP/a.json" && pass json_parses || fail json_parses "python3 json.load failed"
    fi
else
    fail run_json_exit0 "$(head -c 400 "$TMP/err")"
fi

# Determinism: same scenario and seed -> byte-identical JSON apart from the
# two wall-clock metrics.
strip() { sed -E 's/"(wall_s|events_per_s|setup_s)(_ci95)?": *[^,}]*//g' "$1"; }
# shellcheck disable=SC2086
"$SPECSIM" run scenarios/default.yaml $short --json >"$TMP/b.json" 2>/dev/null
strip "$TMP/a.json" >"$TMP/a.s"; strip "$TMP/b.json" >"$TMP/b.s"
if [ -s "$TMP/a.s" ] && cmp -s "$TMP/a.s" "$TMP/b.s"; then pass deterministic_json
else fail deterministic_json "$(diff "$TMP/a.s" "$TMP/b.s" | head -5)"; fi
# A different seed must change the results (else the check above is vacuous).
# shellcheck disable=SC2086
"$SPECSIM" run scenarios/default.yaml $short --seed 99 --json >"$TMP/c.json" 2>/dev/null
strip "$TMP/c.json" >"$TMP/c.s"
if ! cmp -s "$TMP/a.s" "$TMP/c.s"; then pass seed_changes_results
else fail seed_changes_results "seed 99 gave identical output"; fi

# --out CSV with its sidecar; --trace; both written whole.
# shellcheck disable=SC2086
if "$SPECSIM" run scenarios/default.yaml $short --quiet --out "$TMP/r.csv" \
        --trace "$TMP/t.csv" >"$TMP/sum.txt" 2>"$TMP/err"; then
    pass run_out_trace_exit0
    [ "$(wc -l <"$TMP/r.csv")" -eq 2 ] && pass out_csv_two_lines || fail out_csv_two_lines "$(wc -l <"$TMP/r.csv")"
    hdr=$(head -1 "$TMP/r.csv" | tr ',' '\n' | wc -l)
    row=$(sed -n 2p "$TMP/r.csv" | tr ',' '\n' | wc -l)
    [ "$hdr" -eq "$row" ] && pass out_csv_columns_agree || fail out_csv_columns_agree "$hdr vs $row"
    [ -s "$TMP/r.scenario.yaml" ] && "$SPECSIM" check "$TMP/r.scenario.yaml" >/dev/null 2>&1 &&
        pass out_sidecar_loads || fail out_sidecar_loads "sidecar missing or invalid"
    head -1 "$TMP/t.csv" | grep -q '^time,tenant,event,block,tokens' && pass trace_header ||
        fail trace_header "$(head -1 "$TMP/t.csv")"
    [ "$(wc -l <"$TMP/t.csv")" -gt 100 ] && pass trace_has_events || fail trace_has_events
    grep -q "itl_mean_s\|ITL" "$TMP/sum.txt" && pass summary_printed || fail summary_printed
    set -- "$TMP"/*.tmp*
    if [ -e "$1" ]; then fail no_temp_files_left "$*"; else pass no_temp_files_left; fi
else
    fail run_out_trace_exit0 "$(head -c 400 "$TMP/err")"
fi
# --per-tenant: a header and one row per tenant per replication, written
# whole; with tenant groups the summary ends with the per-group table and
# --json holds every group.
if "$SPECSIM" run scenarios/examples/groups.yaml --set duration=6s --set warmup=1s \
        --reps 2 --quiet --per-tenant "$TMP/pt.csv" >"$TMP/g.txt" 2>"$TMP/err"; then
    n=$(tail -n +2 "$TMP/pt.csv" | wc -l)
    # groups.yaml: 6 + 3 + 2 tenants, 2 replications
    [ "$n" -eq 22 ] && head -1 "$TMP/pt.csv" | grep -q '^rep,tenant,group,tokens,' &&
        pass per_tenant_rows || fail per_tenant_rows "$n rows: $(head -1 "$TMP/pt.csv")"
    grep -q '^per tenant group' "$TMP/g.txt" && grep -q 'phones *laptops *jetsons' "$TMP/g.txt" &&
        pass summary_group_table || fail summary_group_table "$(tail -5 "$TMP/g.txt")"
    set -- "$TMP"/*.tmp*
    if [ -e "$1" ]; then fail per_tenant_no_temp_left "$*"; else pass per_tenant_no_temp_left; fi
else
    fail per_tenant_rows "$(head -c 400 "$TMP/err")"
fi
if command -v python3 >/dev/null 2>&1 &&
    "$SPECSIM" run scenarios/examples/groups.yaml --set duration=6s --set warmup=1s \
        --json >"$TMP/g.json" 2>"$TMP/err"; then
    python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); g=d["groups"]
assert list(g) == ["phones", "laptops", "jetsons"], list(g)
assert all(set(v) >= {"itl_mean_s", "slo_attainment", "gpu_util"} for v in g.values())' \
        "$TMP/g.json" 2>"$TMP/err" && pass json_groups || fail json_groups "$(cat "$TMP/err")"
fi

# An unwritable --out leaves nothing behind and fails.
# shellcheck disable=SC2086
"$SPECSIM" run scenarios/default.yaml $short --quiet --out "$TMP/no/such/dir/r.csv" >/dev/null 2>&1
rc=$?
[ "$rc" -ne 0 ] && [ ! -e "$TMP/no" ] && pass out_unwritable_fails || fail out_unwritable_fails "exit $rc"

# --out JSON also writes the resolved scenario beside it, and running that
# sidecar reproduces the JSON (wall-clock metrics aside).
# shellcheck disable=SC2086
if "$SPECSIM" run scenarios/default.yaml $short --quiet --out "$TMP/j.json" >/dev/null 2>"$TMP/err" &&
   [ -s "$TMP/j.scenario.yaml" ] &&
   "$SPECSIM" run "$TMP/j.scenario.yaml" --json >"$TMP/j2.json" 2>>"$TMP/err" &&
   strip "$TMP/j.json" >"$TMP/j.s" && strip "$TMP/j2.json" >"$TMP/j2.s" && cmp -s "$TMP/j.s" "$TMP/j2.s"
then pass out_json_sidecar_reproduces
else fail out_json_sidecar_reproduces "$(head -c 300 "$TMP/err")"; fi
# A --out the run could not write in the end is refused before running:
# exit 2, and no trace (or anything else) written.
# shellcheck disable=SC2086
"$SPECSIM" run scenarios/default.yaml $short --quiet --out "$TMP/bad.txt" \
    --trace "$TMP/bad-trace.csv" >/dev/null 2>"$TMP/err"
rc=$?
if [ "$rc" -eq 2 ] && [ ! -e "$TMP/bad-trace.csv" ] && [ ! -e "$TMP/bad.txt" ] &&
   grep -q 'bad.txt: unknown output format' "$TMP/err"; then pass out_bad_suffix_before_run
else fail out_bad_suffix_before_run "exit $rc; $(head -c 300 "$TMP/err")"; fi
# --json and --trace - cannot share standard output.
# shellcheck disable=SC2086
expect_exit json_with_trace_stdout_refused 2 "$SPECSIM" run scenarios/default.yaml $short --json --trace -

# check prints a resolved scenario that resolves to itself (comments aside:
# they name the file each card came from).
if "$SPECSIM" check scenarios/default.yaml >"$TMP/r1.yaml" 2>"$TMP/err" &&
   "$SPECSIM" check "$TMP/r1.yaml" >"$TMP/r2.yaml" 2>>"$TMP/err" &&
   sed -e '/^#/d' -e 's/  # .*$//' "$TMP/r1.yaml" >"$TMP/r1.s" &&
   sed -e '/^#/d' -e 's/  # .*$//' "$TMP/r2.yaml" >"$TMP/r2.s" &&
   cmp -s "$TMP/r1.s" "$TMP/r2.s"; then pass check_round_trip
else fail check_round_trip "$(head -c 400 "$TMP/err")"; fi

# Every example scenario is valid and runs.
for f in scenarios/default.yaml scenarios/examples/*.yaml scenarios/paper/*.yaml; do
    [ -f "$f" ] || continue
    n=$(basename "$f" .yaml)
    expect_exit "check_$n" 0 "$SPECSIM" check "$f"
done
for f in scenarios/examples/*.yaml; do
    [ -f "$f" ] || continue
    expect_exit "run_$(basename "$f" .yaml)" 0 "$SPECSIM" run "$f" --quiet --set replications=1
done

# --trace - streams the timeline to stdout and creates no file named "-".
abs_specsim=$(cd "$(dirname "$SPECSIM")" && pwd)/$(basename "$SPECSIM")
abs_scen=$(pwd)/scenarios/examples/sync.yaml
( cd "$TMP" && "$abs_specsim" run "$abs_scen" --quiet --set duration=30s \
    --trace - >"$TMP/tr.out" 2>"$TMP/err" )
if head -1 "$TMP/tr.out" | grep -q '^time,tenant,event,block,tokens' && [ ! -e "$TMP/-" ]; then
    pass trace_to_stdout
else fail trace_to_stdout "$(head -c 300 "$TMP/err")"; fi

# The scenario the user guide teaches with is valid (docs cannot drift silently).
awk '/A minimal one:/ {f=1; next} f && /^```yaml/ {g=1; next} g && /^```/ {exit} g' docs/guide.md >"$TMP/readme.yaml"
if [ -s "$TMP/readme.yaml" ] && "$SPECSIM" check "$TMP/readme.yaml" >/dev/null 2>"$TMP/err"; then
    pass readme_scenario_valid
else fail readme_scenario_valid "$(head -c 300 "$TMP/err")"; fi

# roofline --measured: a table without its optional ceilings and rates still
# composes the same in-table steps (the ceilings only bound extrapolation);
# a model with no card is refused at the table's model: line.
tab=results/calibration/cpu-amd-epyc-tinyllama-1.1b-w4a16.yaml
sed -e '/^ceilings:/,/^ops:/{/^ops:/!d;}' -e 's/, gbs: [^,}]*//; s/, gflops: [^,}]*//; s/, ceiling_frac: [^,}]*//' \
    "$tab" >"$TMP/bare.yaml"
"$SPECSIM" roofline --measured "$tab" | awk -F, '$7 == 1 {print $4}' >"$TMP/full.c" 2>"$TMP/err"
"$SPECSIM" roofline --measured "$TMP/bare.yaml" | awk -F, '$7 == 1 {print $4}' >"$TMP/bare.c" 2>>"$TMP/err"
if ! grep -q 'gbs\|read_gbs' "$TMP/bare.yaml" && [ -s "$TMP/full.c" ] && cmp -s "$TMP/full.c" "$TMP/bare.c"
then pass roofline_measured_without_ceilings
else fail roofline_measured_without_ceilings "$(head -c 300 "$TMP/err")"; fi
sed 's/^model: .*/model: "no-such-model"/' "$tab" >"$TMP/nomodel.yaml"
"$SPECSIM" roofline --measured "$TMP/nomodel.yaml" >/dev/null 2>"$TMP/err"
rc=$?
line=$(grep -n '^model:' "$TMP/nomodel.yaml" | cut -d: -f1)
if [ "$rc" -eq 2 ] && grep -q "nomodel.yaml:$line:[0-9]*: model: no model card" "$TMP/err"; then
    pass roofline_measured_no_card_located
else fail roofline_measured_no_card_located "exit $rc: $(head -c 300 "$TMP/err")"; fi
