#!/bin/sh
# CLI tests of `specsim sweep` and `specsim merge`: determinism across -j,
# shards merged == unsharded, SIGKILL + --resume == uninterrupted, bad sweep
# specs exit 2 with FILE:LINE:COLUMN, --explain reproduces a row.
. "$(dirname "$0")/lib.sh"

# Fixed draft and verify times keep every point a few milliseconds long.
base() {
    cat <<EOF
name: $1
seed: 3
duration: $2
warmup: 1s
replications: 2
protocol: {mode: sync, gamma: 4}
acceptance: {model: iid, alpha: 0.7}
tenants:
  count: $3
  edge: {draft_time: 10ms}
  network: {rtt: 40ms, jitter: {dist: exponential, mean: 2ms}}
  workload: {prompt_tokens: 1, output_tokens: 50}
cloud:
  verify_time: 5ms
  batching: {max_batch: 4}
EOF
}

{ base small 4s 2; cat <<EOF
sweep:
  tenants.network.rtt: {from: 10ms, to: 40ms, step: 10ms}
  acceptance.alpha: [0.5, 0.9]
  protocol.mode: [sync, async]
EOF
} >"$TMP/s.yaml"

# --- -j 1 and -j 4 give byte-identical files, in point order -------------
$SPECSIM sweep "$TMP/s.yaml" -j 1 --out "$TMP/j1.csv" 2>"$TMP/err1"
rc1=$?
$SPECSIM sweep "$TMP/s.yaml" -j 4 --out "$TMP/j4.csv" 2>"$TMP/err4"
rc4=$?
if [ $rc1 -eq 0 ] && [ $rc4 -eq 0 ] && cmp -s "$TMP/j1.csv" "$TMP/j4.csv"; then
    pass sweep_j1_equals_j4
else
    fail sweep_j1_equals_j4 "rc $rc1/$rc4: $(head -c 300 "$TMP/err1" "$TMP/err4")"
fi
# 4 rtt x 2 alpha x 2 modes = 16 rows plus the header; `point` counts 0..15
# and the last axis varies fastest.
rows=$(tail -n +2 "$TMP/j1.csv" | cut -d, -f1 | tr '\n' ' ')
want=$(seq 0 15 | tr '\n' ' ')
r5=$(sed -n 7p "$TMP/j1.csv" | cut -d, -f1-4)
if [ "$rows" = "$want" ] && [ "$r5" = "5,20ms,0.5,async" ] &&
   [ "$(head -n 1 "$TMP/j1.csv" | cut -d, -f1-5)" = \
     "point,tenants.network.rtt,acceptance.alpha,protocol.mode,itl_mean_s" ]; then
    pass sweep_point_order
else
    fail sweep_point_order "points: $rows; row 5: $r5"
fi
# Not a terminal: no progress line, nothing on stderr at all.
if [ ! -s "$TMP/err1" ]; then pass sweep_silent_without_tty; else
    fail sweep_silent_without_tty "$(head -c 200 "$TMP/err1")"; fi
# The sidecar is itself a sweep scenario that reproduces the file.
$SPECSIM sweep "$TMP/j1.scenario.yaml" -j 2 --out "$TMP/again.csv" 2>"$TMP/err"
if cmp -s "$TMP/j1.csv" "$TMP/again.csv"; then pass sweep_sidecar_reruns; else
    fail sweep_sidecar_reruns "$(head -c 300 "$TMP/err")"; fi
# The same with tenant groups and a `tenants.*` axis: the sidecar keeps what
# each group gave (and what it inherits), so the axis still reaches every
# group that inherits it, and `check` output is the same sweep too. The rtt
# values must also change the results, else the comparison proves nothing.
cat >"$TMP/g.yaml" <<'EOF2'
name: grouped
seed: 3
duration: 3s
warmup: 0.5s
replications: 1
protocol: {mode: sync, gamma: 3}
tenants:
  edge: {draft_time: 8ms}
  workload: {prompt_tokens: 4, output_tokens: 40}
  groups:
    - {name: a, count: 2, workload: {output_tokens: 30}}
    - {name: b, count: 1, network: {bytes_per_token: 2}}
    - {name: c, count: 1, network: {rtt: 70ms}}
cloud: {verify_time: 4ms}
sweep:
  tenants.network.rtt: [10ms, 90ms]
EOF2
$SPECSIM sweep "$TMP/g.yaml" --quiet --out "$TMP/g.csv" 2>"$TMP/err"
$SPECSIM sweep "$TMP/g.scenario.yaml" --quiet --out "$TMP/g2.csv" 2>>"$TMP/err"
$SPECSIM check "$TMP/g.yaml" >"$TMP/gc.yaml" 2>>"$TMP/err" &&
    $SPECSIM sweep "$TMP/gc.yaml" --quiet --out "$TMP/g3.csv" 2>>"$TMP/err"
itl() { sed -n "$1p" "$TMP/g.csv" | cut -d, -f3; }
if cmp -s "$TMP/g.csv" "$TMP/g2.csv" && cmp -s "$TMP/g.csv" "$TMP/g3.csv" &&
   [ "$(itl 2)" != "$(itl 3)" ]; then pass sweep_sidecar_reruns_grouped
else fail sweep_sidecar_reruns_grouped "$(head -c 300 "$TMP/err"; diff "$TMP/g.csv" "$TMP/g2.csv" | head -4)"; fi

# --- four shards merged == unsharded -----------------------------------------
ok=1
for i in 0 1 2 3; do
    $SPECSIM sweep "$TMP/s.yaml" -j 2 --shard $i/4 --out "$TMP/part$i.csv" \
        2>"$TMP/err" || ok=0
done
$SPECSIM merge "$TMP/merged.csv" "$TMP/part2.csv" "$TMP/part0.csv" \
    "$TMP/part3.csv" "$TMP/part1.csv" 2>>"$TMP/err" || ok=0
if [ $ok -eq 1 ] && cmp -s "$TMP/merged.csv" "$TMP/j1.csv" &&
   cmp -s "$TMP/merged.scenario.yaml" "$TMP/j1.scenario.yaml"; then
    pass merge_equals_unsharded
else
    fail merge_equals_unsharded "$(head -c 300 "$TMP/err")"
fi
# Shard 1/4 holds exactly points 1, 5, 9, 13.
if [ "$(tail -n +2 "$TMP/part1.csv" | cut -d, -f1 | tr '\n' ' ')" = "1 5 9 13 " ]; then
    pass shard_points
else
    fail shard_points "$(cut -d, -f1 "$TMP/part1.csv" | tr '\n' ' ')"
fi
expect_exit merge_missing_part 1 $SPECSIM merge "$TMP/m2.csv" "$TMP/part0.csv" \
    "$TMP/part1.csv" "$TMP/part2.csv"
$SPECSIM sweep "$TMP/s.yaml" -j 2 --shard 3/4 --set seed=4 \
    --out "$TMP/other3.csv" 2>/dev/null
expect_exit merge_other_sweep 2 $SPECSIM merge "$TMP/m3.csv" "$TMP/part0.csv" \
    "$TMP/part1.csv" "$TMP/part2.csv" "$TMP/other3.csv"

# --- SIGKILL mid-run, then --resume == uninterrupted -----------------------
# Points of ~30 ms each (60 in all), so the kill after 4 rows lands mid-run
# with a wide margin even on a slow or busy machine.
{ base kill 1000s 8; cat <<EOF
sweep:
  tenants.network.rtt: {from: 10ms, to: 200ms, step: 10ms}
  acceptance.alpha: [0.5, 0.7, 0.9]
EOF
} >"$TMP/k.yaml"
$SPECSIM sweep "$TMP/k.yaml" -j 2 --out "$TMP/kref.csv" 2>"$TMP/err"
total=$(wc -l <"$TMP/kref.csv")
$SPECSIM sweep "$TMP/k.yaml" -j 1 --out "$TMP/k.csv" 2>/dev/null &
pid=$!
# Kill once a few rows are in; poll every 10 ms (up to 30 s).
n=0
while [ $n -lt 3000 ]; do
    [ -f "$TMP/k.csv" ] && [ "$(wc -l <"$TMP/k.csv")" -ge 4 ] && break
    sleep 0.01
    n=$((n + 1))
done
kill -9 $pid 2>/dev/null
wait $pid 2>/dev/null
got=$(wc -l <"$TMP/k.csv")
if [ "$got" -ge "$total" ]; then
    fail sweep_kill_resume "the sweep finished before the kill ($got lines)"
else
    # A torn line as a crash could leave: --resume must cut it off.
    printf '57,190ms,0.7,0.0123' >>"$TMP/k.csv"
    $SPECSIM sweep "$TMP/k.yaml" -j 3 --resume --out "$TMP/k.csv" 2>"$TMP/err"
    if cmp -s "$TMP/k.csv" "$TMP/kref.csv"; then
        pass sweep_kill_resume
    else
        fail sweep_kill_resume "killed at $got of $total lines; $(head -c 300 "$TMP/err")"
    fi
fi
# Resuming a finished file runs nothing and changes nothing.
expect_exit resume_complete 0 $SPECSIM sweep "$TMP/k.yaml" --resume --out "$TMP/k.csv"
cmp -s "$TMP/k.csv" "$TMP/kref.csv" && pass resume_complete_unchanged ||
    fail resume_complete_unchanged
# The sidecar is the sweep itself: resuming with it as the scenario is
# accepted, even where the original named card files (the sidecar has them
# inline, the writer comments their origin).
cat >"$TMP/cards.yaml" <<'EOF2'
name: cards
seed: 3
duration: 4s
warmup: 0.5s
replications: 1
protocol: {mode: sync, gamma: 3}
tenants:
  count: 2
  edge: {device: models/hardware/snapdragon-8-gen-3.yaml, draft: models/llm/tinyllama-1.1b.yaml}
  network: {rtt: 30ms}
  workload: {prompt_tokens: 4, output_tokens: 40}
cloud: {gpu: models/hardware/h200.yaml, target: models/llm/llama-2-7b.yaml}
sweep:
  tenants.network.rtt: [10ms, 50ms]
EOF2
$SPECSIM sweep "$TMP/cards.yaml" --quiet --out "$TMP/cards.csv" 2>"$TMP/err"
cp "$TMP/cards.csv" "$TMP/cards.ref.csv"
if $SPECSIM sweep "$TMP/cards.scenario.yaml" --resume --quiet --out "$TMP/cards.csv" 2>>"$TMP/err" &&
   cmp -s "$TMP/cards.csv" "$TMP/cards.ref.csv"; then pass resume_from_sidecar
else fail resume_from_sidecar "$(head -c 300 "$TMP/err")"; fi
# A different sweep must not be appended to it, nor an existing file replaced
# without --force.
expect_exit resume_other_sweep 2 $SPECSIM sweep "$TMP/k.yaml" --resume \
    --set seed=9 --out "$TMP/k.csv"
expect_exit refuse_overwrite 2 $SPECSIM sweep "$TMP/k.yaml" --out "$TMP/k.csv"

# --- bad sweep specs: exit 2, FILE:LINE:COLUMN naming the key --------------
bad_spec() { # NAME EXPECTED-PREFIX SWEEP-LINE
    { base bad 2s 1; printf 'sweep:\n%s\n' "$3"; } >"$TMP/$1.yaml"
    $SPECSIM sweep "$TMP/$1.yaml" --out "$TMP/$1.csv" >/dev/null 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 2 ] && grep -qF "$TMP/$1.yaml:$2" "$TMP/err"; then pass "$1"; else
        fail "$1" "exit $rc, stderr: $(head -c 300 "$TMP/err")"; fi
}
# The base is 15 lines, `sweep:` is line 16, the axis line 17.
bad_spec bad_unknown_path '17:3: sweep.protocol.gama' '  protocol.gama: [1, 2]'
bad_spec bad_empty_list '17:19: sweep.protocol.gamma: empty list' '  protocol.gamma: []'
bad_spec bad_step_zero '17:53: sweep.tenants.network.rtt.step: step is 0' \
    '  tenants.network.rtt: {from: 10ms, to: 50ms, step: 0ms}'
bad_spec bad_log_through_zero '17:57: sweep.acceptance.alpha.scale: log scale through 0' \
    '  acceptance.alpha: {from: 0, to: 0.9, count: 4, scale: log}'
bad_spec bad_value '17:23: sweep.protocol.gamma: value' '  protocol.gamma: [1, 0]'
# Finite bounds whose distance (or, on a log scale, ratio) overflows: every
# value would be inf or NaN.
bad_spec bad_span_step '17:40: sweep.acceptance.alpha.to: from -1e308 to 1e308 spans' \
    '  acceptance.alpha: {from: -1e308, to: 1e308, step: 1e300}'
bad_spec bad_span_count '17:40: sweep.acceptance.alpha.to: from -1e308 to 1e308 spans' \
    '  acceptance.alpha: {from: -1e308, to: 1e308, count: 3}'
bad_spec bad_log_ratio '17:40: sweep.acceptance.alpha.to: from 1e-300 to 1e300 is a ratio larger' \
    '  acceptance.alpha: {from: 1e-300, to: 1e300, count: 3, scale: log}'
bad_spec bad_log_ratio_under '17:40: sweep.acceptance.alpha.to: from 1e+300 to 1e-300 is a ratio smaller' \
    '  acceptance.alpha: {from: 1e+300, to: 1e-300, count: 3, scale: log}'
base nosweep 2s 1 >"$TMP/nosweep.yaml"
$SPECSIM sweep "$TMP/nosweep.yaml" >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ] && grep -qF "$TMP/nosweep.yaml:1:1: sweep:" "$TMP/err"; then
    pass bad_no_sweep_section
else
    fail bad_no_sweep_section "exit $rc: $(head -c 200 "$TMP/err")"
fi
expect_exit bad_shard 2 $SPECSIM sweep "$TMP/k.yaml" --shard 4/4

# --- --explain prints the run command of a row -----------------------------
# (After the "# read" lines of the files the point reads, each with its
# digest: the cards here; the scenario by its absolute path.)
cmd=$($SPECSIM sweep --explain 5 "$TMP/s.yaml" 2>"$TMP/err")
want="specsim run $(cd "$TMP" && pwd -P)/s.yaml --set tenants.network.rtt=20ms --set acceptance.alpha=0.5 --set protocol.mode=async"
if [ "$(echo "$cmd" | grep -v '^# read /.* sha256 [0-9a-f]*$')" = "$want" ] &&
   echo "$cmd" | grep -q '^# read /.*/models/hardware/h200.yaml sha256 '
then pass sweep_explain; else
    fail sweep_explain "got: $cmd $(head -c 200 "$TMP/err")"; fi
# ... and running it gives the row's metrics (wall-clock columns aside).
run=$(echo "$cmd" | sed "s|^specsim|$SPECSIM|")
eval "$run --out '$TMP/row5.csv' --quiet" >/dev/null 2>"$TMP/err"
metrics() { # FILE ROW: the metric columns of that data row, timing blanked
    awk -F, -v row="$2" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == "itl_mean_s") s = i;
        for (i = 1; i <= NF; i++) name[i] = $i; next }
        NR == row + 1 { for (i = s; i <= NF; i++) {
            v = (name[i] ~ /^(wall_s|events_per_s|setup_s)/) ? "" : $i; printf "%s,", v } print "" }' "$1"
}
a=$(metrics "$TMP/j1.csv" 6)
b=$(metrics "$TMP/row5.csv" 1)
if [ -n "$a" ] && [ "$a" = "$b" ]; then pass sweep_explain_reproduces; else
    fail sweep_explain_reproduces "sweep: $(echo "$a" | head -c 120) run: $(echo "$b" | head -c 120) $(head -c 200 "$TMP/err")"; fi

# --- axes in every unit --set accepts: byte rates and Tbps ------------------
# 4 uplink values x 2 downlink values = 8 rows; 1MB/s = 8 Mbit/s. Row 3 (the
# last axis fastest) is uplink 2MB/s, downlink 1.5Tbps, and `run` with those
# two --set gives its metrics.
{ base units 2s 2; cat <<EOF
sweep:
  tenants.network.uplink: {from: 1MB/s, to: 4MB/s, step: 1MB/s}
  tenants.network.downlink: {from: 1Tbps, to: 1.5Tbps, step: 0.5Tbps}
EOF
} >"$TMP/u.yaml"
$SPECSIM sweep "$TMP/u.yaml" --out "$TMP/u.csv" 2>"$TMP/err"
rc=$?
axes=$(tail -n +2 "$TMP/u.csv" | cut -d, -f2,3 | tr '\n' ' ')
want="1MB/s,1Tbps 1MB/s,1.5Tbps 2MB/s,1Tbps 2MB/s,1.5Tbps 3MB/s,1Tbps 3MB/s,1.5Tbps 4MB/s,1Tbps 4MB/s,1.5Tbps "
if [ $rc -eq 0 ] && [ "$axes" = "$want" ]; then pass sweep_byte_rate_and_tbps_axes; else
    fail sweep_byte_rate_and_tbps_axes "exit $rc, axes: $axes $(head -c 200 "$TMP/err")"; fi
$SPECSIM run "$TMP/u.yaml" --set tenants.network.uplink=2MB/s \
    --set tenants.network.downlink=1.5Tbps --out "$TMP/u3.csv" --quiet >/dev/null 2>"$TMP/err"
a=$(metrics "$TMP/u.csv" 4)
b=$(metrics "$TMP/u3.csv" 1)
if [ -n "$a" ] && [ "$a" = "$b" ]; then pass sweep_byte_rate_row_is_set; else
    fail sweep_byte_rate_row_is_set "sweep: $(echo "$a" | head -c 120) run: $(echo "$b" | head -c 120) $(head -c 200 "$TMP/err")"; fi

# --- --per-group: GROUP.metric columns, part of the header -----------------
cat >"$TMP/pg.yaml" <<EOF
duration: 2s
warmup: 0.5s
tenants:
  groups:
    - {name: near, count: 1, network: {rtt: 10ms}}
    - {name: far, count: 1, network: {rtt: 90ms}}
cloud: {verify_time: 5ms}
sweep:
  protocol.gamma: [2, 3]
EOF
$SPECSIM sweep "$TMP/pg.yaml" --per-group --out "$TMP/pg.csv" --quiet 2>"$TMP/err"
rc=$?
h=$(head -1 "$TMP/pg.csv" | tr ',' '\n')
nh=$(echo "$h" | wc -l)
nr=$(sed -n 2p "$TMP/pg.csv" | tr ',' '\n' | wc -l)
if [ $rc -eq 0 ] && echo "$h" | grep -qx 'far.itl_mean_s_ci95' && [ "$nh" -eq "$nr" ]; then
    pass sweep_per_group_columns; else
    fail sweep_per_group_columns "exit $rc, $nh vs $nr columns $(head -c 200 "$TMP/err")"; fi
# Resuming without --per-group is another sweep's file: refused.
$SPECSIM sweep "$TMP/pg.yaml" --resume --out "$TMP/pg.csv" --quiet >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "header differs" "$TMP/err"; then pass sweep_per_group_resume_checks; else
    fail sweep_per_group_resume_checks "exit $rc $(head -c 200 "$TMP/err")"; fi
# An axis that renames the groups would fill the wrong columns: refused.
sed 's/^  protocol.gamma: .*/  tenants.groups.0.name: [near, other]/' "$TMP/pg.yaml" >"$TMP/pg2.yaml"
$SPECSIM sweep "$TMP/pg2.yaml" --per-group --out "$TMP/pg2.csv" --quiet >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ] && grep -q "per-group" "$TMP/err"; then pass sweep_per_group_same_groups; else
    fail sweep_per_group_same_groups "exit $rc $(head -c 200 "$TMP/err")"; fi
# The point is named once (issue 28 item 16: "point 1 (...): point 1: --per-group").
if grep -qx "specsim sweep: point 1 (tenants.groups.0.name=other): --per-group needs the base scenario's tenant groups at every point, and its axes change them" "$TMP/err"; then
    pass sweep_per_group_point_named_once; else
    fail sweep_per_group_point_named_once "$(head -c 300 "$TMP/err")"; fi

# --- the scenario's output: section ------------------------------------------
# output.file is the default --out, as the scenario says it after --set; a
# sweep writes no trace, so output.trace is refused (exit 2, naming it)
# rather than ignored.
printf 'name: o\nduration: 3s\nwarmup: 1s\nsweep: {protocol.gamma: [1, 2]}\noutput: {file: %s}\n' \
    "$TMP/of.csv" >"$TMP/of.yaml"
$SPECSIM sweep "$TMP/of.yaml" --quiet --set "output.file=$TMP/of2.csv" >"$TMP/of.out" 2>"$TMP/err"
if [ -s "$TMP/of2.csv" ] && [ ! -e "$TMP/of.csv" ] && [ ! -s "$TMP/of.out" ]; then
    pass sweep_output_file_set
else
    fail sweep_output_file_set "$(ls "$TMP"/of*) $(head -c 200 "$TMP/err")"
fi
printf 'output: {trace: %s}\n' "$TMP/ot.csv" >"$TMP/ot.yaml"
grep -v '^output' "$TMP/of.yaml" >>"$TMP/ot.yaml"
expect_exit sweep_output_trace_refused 2 $SPECSIM sweep "$TMP/ot.yaml" --quiet --out "$TMP/ot2.csv"
if grep -q 'ot.yaml:1:17: output.trace: a sweep writes no trace' "$TMP/err" && [ ! -e "$TMP/ot.csv" ] &&
   [ ! -e "$TMP/ot2.csv" ]; then
    pass sweep_output_trace_named
else
    fail sweep_output_trace_named "$(head -c 200 "$TMP/err")"
fi

# --- an axis over a group's time_scale ---------------------------------------
# time_scale: 1 is the documented default, so a group swept to 1 agrees with
# a group that inherits the default (it was refused at 1: the default was
# held as 0, and the message named trace). Two requests, one per group.
printf 'time_s,prompt_tokens,output_tokens\n1,8,4\n2,8,4\n' >"$TMP/ts.csv"
cat >"$TMP/ts.yaml" <<EOF2
name: ts
duration: 3s
warmup: 0s
tenants:
  edge: {draft_time: 10ms}
  workload: {arrival: trace, trace: ts.csv}
  groups:
  - {name: a, count: 1}
  - {name: b, count: 1}
sweep:
  tenants.groups.0.workload.time_scale: [1]
EOF2
expect_exit sweep_time_scale_default 0 $SPECSIM sweep "$TMP/ts.yaml" --quiet --out "$TMP/ts.out.csv"
# A value other than 1 disagrees with b's default: refused, naming time_scale.
sed 's/time_scale: \[1\]/time_scale: [1, 0.5]/' "$TMP/ts.yaml" >"$TMP/ts2.yaml"
expect_exit sweep_time_scale_disagrees 2 $SPECSIM sweep "$TMP/ts2.yaml" --quiet --out "$TMP/ts2.out.csv"
if grep -q "ts2.yaml:11:45: .*value '0.5': tenants.groups.0.workload.time_scale: every group" "$TMP/err"; then
    pass sweep_time_scale_disagrees_named
else
    fail sweep_time_scale_disagrees_named "$(head -c 300 "$TMP/err")"
fi
