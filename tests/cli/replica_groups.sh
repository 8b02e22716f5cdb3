#!/bin/sh
# CLI tests of cloud.replica_groups (heterogeneous replicas): `check` prints
# every group resolved, `analytic` and `roofline` refuse a cloud of several
# groups (exit 2, nothing on stdout) and take a one-group cloud as the flat
# cloud it spells, and results are byte-identical at any -j and from any
# working directory. The bad inputs are in tests/data/scenarios/bad/rgroups-*
# (tests/cli/bad_inputs.sh).
. "$(dirname "$0")/lib.sh"
EX=scenarios/examples/hetero-replicas.yaml

# --- check: each group, its own keys and what it resolved to -------------
"$SPECSIM" check "$EX" >"$TMP/check.yaml" 2>"$TMP/err"
rc=$?
n=$(grep -c '# resolved: gpu ' "$TMP/check.yaml")
if [ $rc -eq 0 ] && [ "$n" -eq 2 ] && grep -q '^  replica_groups:' "$TMP/check.yaml" &&
   grep -q '# resolved: gpu l4 x 1, service model, order fcfs; reference iteration' \
       "$TMP/check.yaml" && ! grep -q '^  replicas:' "$TMP/check.yaml"; then
    pass check_prints_groups
else fail check_prints_groups "rc $rc, $n groups: $(head -c 300 "$TMP/err")"; fi
# ... and what it prints loads back to the same (the header comments that
# name the files read and the source aside, and the cards' file comments: a
# card read back inline has none).
"$SPECSIM" check "$TMP/check.yaml" >"$TMP/check2.yaml" 2>"$TMP/err"
rc=$?
sed '/^# read /d; /^# specsim scenario, fully resolved from /d; s/:  # .*$/:/' \
    "$TMP/check.yaml" >"$TMP/a"
sed '/^# read /d; /^# specsim scenario, fully resolved from /d; s/:  # .*$/:/' \
    "$TMP/check2.yaml" >"$TMP/b"
if [ $rc -eq 0 ] && cmp -s "$TMP/a" "$TMP/b"; then pass check_round_trip
else fail check_round_trip "rc $rc: $(diff "$TMP/a" "$TMP/b" | head -5)"; fi

# A cloud-wide key inside a group is refused as cloud-wide, with the same
# message as precision (kv_precision, the draft keys and prefix_cache were
# "unknown key", as if the cloud had no such key).
for k in precision=fp8 kv_precision=fp8 draft_precision=fp8 prefix_cache.policy=lru; do
    "$SPECSIM" check "$EX" --set "cloud.replica_groups.l4.$k" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 2 ] && [ ! -s "$TMP/out" ] && grep -q "cloud.replica_groups.1.${k%%[.=]*}: is cloud-wide: give it under cloud:" "$TMP/err"; then
        pass "group_cloud_wide_${k%%[.=]*}"
    else fail "group_cloud_wide_${k%%[.=]*}" "exit $rc: $(head -c 300 "$TMP/err")"; fi
done

# --- analytic and roofline: never a number that is not exact -------------
for cmd in analytic roofline; do
    "$SPECSIM" $cmd "$EX" >"$TMP/out" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 2 ] && [ ! -s "$TMP/out" ] &&
       grep -q "cloud.replica_groups: 2 replica groups (a heterogeneous cloud)" "$TMP/err"; then
        pass "${cmd}_refuses_heterogeneous"
    else fail "${cmd}_refuses_heterogeneous" "exit $rc: $(head -c 300 "$TMP/err")"; fi
done
cat >"$TMP/one.yaml" <<'EOY'
protocol: {mode: sync}
cloud:
  replica_groups:
    - {name: l4, count: 1, gpu: models/hardware/l4.yaml}
EOY
cat >"$TMP/flat.yaml" <<'EOY'
protocol: {mode: sync}
cloud:
  gpu: models/hardware/l4.yaml
EOY
for cmd in analytic roofline; do
    "$SPECSIM" $cmd "$TMP/one.yaml" >"$TMP/one.out" 2>"$TMP/err"
    rc=$?
    "$SPECSIM" $cmd "$TMP/flat.yaml" >"$TMP/flat.out" 2>>"$TMP/err"
    if [ $rc -eq 0 ] && [ -s "$TMP/one.out" ] && cmp -s "$TMP/one.out" "$TMP/flat.out"; then
        pass "${cmd}_one_group_is_flat"
    else fail "${cmd}_one_group_is_flat" "exit $rc: $(head -c 300 "$TMP/err")"; fi
done

# --- determinism: -j 1 = -j 2, and from another working directory --------
"$SPECSIM" sweep "$EX" --set duration=20s --set replications=2 -j 1 --quiet \
    --out "$TMP/j1.csv" 2>"$TMP/err1"
rc1=$?
"$SPECSIM" sweep "$EX" --set duration=20s --set replications=2 -j 2 --quiet \
    --out "$TMP/j2.csv" 2>"$TMP/err2"
rc2=$?
# wall_s and events_per_s are the machine's, not the model's.
strip() { python3 - "$1" <<'EOP'
import csv, sys
rows = list(csv.reader(open(sys.argv[1])))
keep = [i for i, h in enumerate(rows[0]) if not h.startswith(("wall_s", "events_per_s"))]
for r in rows: print(",".join(r[i] for i in keep))
EOP
}
if [ $rc1 -eq 0 ] && [ $rc2 -eq 0 ] && [ "$(wc -l <"$TMP/j1.csv")" -eq 4 ] &&
   [ "$(strip "$TMP/j1.csv")" = "$(strip "$TMP/j2.csv")" ]; then
    pass sweep_j1_equals_j2
else fail sweep_j1_equals_j2 "rc $rc1/$rc2: $(head -c 300 "$TMP/err1" "$TMP/err2")"; fi
here=$(pwd)
case $SPECSIM in /*) bin=$SPECSIM ;; *) bin=$here/$SPECSIM ;; esac
"$SPECSIM" run "$EX" --set duration=20s --json 2>"$TMP/err" | grep -v '"wall_s\|"events_per_s\|"setup_s\|"scenario' >"$TMP/a.json"
(cd "$TMP" && "$bin" run "$here/$EX" --set duration=20s --json 2>>"$TMP/err") |
    grep -v '"wall_s\|"events_per_s\|"setup_s\|"scenario' >"$TMP/b.json"
if [ -s "$TMP/a.json" ] && grep -q '"throughput_tok_s' "$TMP/a.json" && cmp -s "$TMP/a.json" "$TMP/b.json"; then
    pass run_same_from_any_directory
else fail run_same_from_any_directory "$(diff "$TMP/a.json" "$TMP/b.json" | head -5) $(head -c 200 "$TMP/err")"; fi
