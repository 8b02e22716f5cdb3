#!/bin/sh
# Issue 28 item 1: a sidecar (run --out's FILE.scenario.yaml, sweep's) and
# `check` output name the data files actually read by their absolute paths
# and record each one's SHA-256 ("# read PATH sha256 HEX"), so that a rerun
# from any directory reads the same files, and warns when one holds other
# bytes. The old code wrote the paths as resolved from the working
# directory ("trace.csv"), so a sidecar rerun elsewhere replayed a file of
# that name next to it without a word (requests_done 30 became 2 in the
# issue's case), or failed to find one.
. "$(dirname "$0")/lib.sh"

S=$(cd "$(dirname "$SPECSIM")" && pwd)/$(basename "$SPECSIM")
A=$TMP/a
mkdir -p "$A" "$TMP/b" "$TMP/out"
A=$(cd "$A" && pwd -P)   # the name realpath gives it
# A request trace, an acceptance trace and an empirical value file, named
# relative to the scenario.
{ echo "time_s,prompt_tokens,output_tokens"
  i=0; while [ $i -lt 12 ]; do echo "$i.5,16,$((8 + i))"; i=$((i + 1)); done; } >"$A/trace.csv"
printf '3\n4\n1\n0\n4\n2\n' >"$A/acc.txt"
printf '1ms\n2ms\n3ms\n' >"$A/think.txt"
cat >"$A/s.yaml" <<'Y'
duration: 20s
warmup: 0s
replications: 2
protocol: {mode: sync, gamma: 4}
acceptance: {model: trace, file: acc.txt}
tenants:
  groups:
    - name: replay
      count: 2
      workload: {arrival: trace, trace: trace.csv}
    - name: loop
      count: 1
      workload: {arrival: closed, think: {dist: empirical, file: think.txt},
                 prompt_tokens: 8, output_tokens: 8}
Y
# Decoys of the same names where a relative path would be looked up: next
# to the sidecar, and in the directory the rerun starts from.
for d in "$TMP/out" "$TMP/b"; do
    head -3 "$A/trace.csv" >"$d/trace.csv"
    printf '4\n' >"$d/acc.txt"
    printf '9ms\n' >"$d/think.txt"
done
strip() { sed -E 's/"(wall_s|events_per_s|setup_s)": *[-0-9.eE+]+,? *//g'; }

if (cd "$A" && "$S" run s.yaml --quiet --json --out "$TMP/out/r.json") >"$TMP/first.json" 2>"$TMP/err"
then pass sidecar_run_writes; else fail sidecar_run_writes "$(head -c 300 "$TMP/err")"; fi
side=$TMP/out/r.scenario.yaml

# The sidecar names every data file absolutely, with its digest.
ok=1
for f in trace.csv acc.txt think.txt; do
    sum=$(sha256sum "$A/$f" | cut -d' ' -f1)
    grep -qx "# read $A/$f sha256 $sum" "$side" || ok=0
done
grep -q "^ *trace: $A/trace.csv\$" "$side" && grep -q "^ *file: $A/acc.txt\$" "$side" || ok=0
if [ $ok = 1 ]; then pass sidecar_absolute_paths_and_digests
else fail sidecar_absolute_paths_and_digests "$(grep -n 'read\|trace:\|file:' "$side")"; fi

# Rerun from elsewhere: the same experiment, without a warning.
(cd "$TMP/b" && "$S" run ../out/r.scenario.yaml --quiet --json) >"$TMP/again.json" 2>"$TMP/err"
if strip <"$TMP/first.json" >"$TMP/f1" && strip <"$TMP/again.json" >"$TMP/f2" &&
   [ -s "$TMP/f1" ] && cmp -s "$TMP/f1" "$TMP/f2" && ! grep -q warning "$TMP/err"; then
    pass sidecar_rerun_elsewhere_same
else
    fail sidecar_rerun_elsewhere_same "$(diff "$TMP/f1" "$TMP/f2" | head -5) $(head -c 300 "$TMP/err")"
fi

# `check` output is a scenario too: run from / it reads the same files.
(cd "$A" && "$S" check s.yaml) >"$TMP/out/c.yaml" 2>"$TMP/err"
(cd / && "$S" run "$TMP/out/c.yaml" --quiet --json) >"$TMP/c.json" 2>>"$TMP/err"
if strip <"$TMP/c.json" | cmp -s - "$TMP/f1" && grep -q "^# read $A/trace.csv sha256 " "$TMP/out/c.yaml"
then pass check_output_rerun_elsewhere_same
else fail check_output_rerun_elsewhere_same "$(head -c 300 "$TMP/err")"; fi

# A sweep's sidecar, rerun as the sweep from elsewhere, gives the same rows.
{ cat "$A/s.yaml"; printf 'sweep:\n  seed: [1, 2]\n'; } >"$A/sw.yaml"
(cd "$A" && "$S" sweep sw.yaml -j 1 --quiet --out "$TMP/out/sw.csv") 2>"$TMP/err"
(cd "$TMP/b" && "$S" sweep ../out/sw.scenario.yaml -j 1 --quiet --out "$TMP/b/sw.csv") 2>>"$TMP/err"
if [ -s "$TMP/out/sw.csv" ] && cut -d, -f1-20 "$TMP/out/sw.csv" >"$TMP/s1" &&
   cut -d, -f1-20 "$TMP/b/sw.csv" >"$TMP/s2" && cmp -s "$TMP/s1" "$TMP/s2" &&
   grep -q "^# read $A/trace.csv sha256 [0-9a-f]\{64\}\$" "$TMP/out/sw.scenario.yaml" &&
   ! grep -q warning "$TMP/err"; then
    pass sweep_sidecar_rerun_elsewhere_same
else
    fail sweep_sidecar_rerun_elsewhere_same "$(head -c 300 "$TMP/err")"
fi

# The trace changes: a rerun says so, once, naming the sidecar's line and
# both digests; the acceptance file kept its bytes and is not named. The
# column is where PATH starts, after "# read ".
printf '12.5,16,8\n' >>"$A/trace.csv"
(cd "$TMP/b" && "$S" run ../out/r.scenario.yaml --quiet --json) >/dev/null 2>"$TMP/err"
line=$(grep -n "^# read $A/trace.csv " "$side" | cut -d: -f1)
if grep -q "^specsim: warning: ../out/r.scenario.yaml:$line:8: $A/trace.csv: the file holds other bytes than when this was written (sha256 [0-9a-f]\{64\} then, $(sha256sum "$A/trace.csv" | cut -d' ' -f1) now)" "$TMP/err" &&
   [ "$(grep -c warning "$TMP/err")" -eq 1 ]; then
    pass sidecar_rerun_changed_file_warns
else
    fail sidecar_rerun_changed_file_warns "$(head -c 400 "$TMP/err")"
fi
# A sweep loads its scenario many times, on several threads: still once.
(cd "$TMP/b" && "$S" sweep ../out/sw.scenario.yaml -j 2 --quiet --out "$TMP/b/sw3.csv") 2>"$TMP/err"
if [ "$(grep -c 'warning: .*trace.csv: the file holds other bytes' "$TMP/err")" -eq 1 ]
then pass sweep_rerun_changed_file_warns_once
else fail sweep_rerun_changed_file_warns_once "$(head -c 400 "$TMP/err")"; fi

# The testbed reruns a sidecar the same way and says so too (it installed
# no warning handler: the change went unseen).
TB=$(cd "$(dirname "$SPECSIM")" && pwd)/testbed
if [ -x "$TB" ]; then
    cat >"$A/t.yaml" <<'Y'
duration: 0.4s
warmup: 0s
replications: 1
protocol: {mode: sync, gamma: 4}
acceptance: {model: trace, file: acc.txt}
tenants:
  count: 1
  edge: {draft_time: 2ms, prefill_time: 2ms}
  network: {rtt: 2ms}
  workload: {arrival: closed, think: 0s, prompt_tokens: 8, output_tokens: 8}
cloud: {verify_time: 2ms}
Y
    (cd "$A" && "$TB" run t.yaml --quiet --out "$TMP/out/tb.json") >/dev/null 2>"$TMP/err"
    printf '2\n' >>"$A/acc.txt"
    (cd "$TMP/b" && "$TB" run ../out/tb.scenario.yaml --quiet) >/dev/null 2>>"$TMP/err"
    if grep -q "^testbed: warning: .*$A/acc.txt: the file holds other bytes" "$TMP/err"
    then pass testbed_rerun_changed_file_warns
    else fail testbed_rerun_changed_file_warns "$(head -c 400 "$TMP/err")"; fi
else
    echo "skip testbed_rerun_changed_file_warns: no $TB"
fi

# `sweep --explain ROW` prints the run of one point with the scenario and
# every data file it reads by absolute path, after the "# read" lines of
# that point's files, so that it runs from anywhere (it printed the paths
# as written: run from another directory, the command found no scenario,
# or a decoy of the same name). Printed in $A, run in $TMP/b beside decoys
# of every name: the sweep's row.
{ echo "time_s,prompt_tokens,output_tokens"
  i=0; while [ $i -lt 9 ]; do echo "$i.25,8,$((4 + i))"; i=$((i + 1)); done; } >"$A/e2.csv"
head -4 "$A/e2.csv" >"$A/e1.csv"
# s.yaml's first five lines: its times, protocol and acceptance file.
{ sed -n 1,5p "$A/s.yaml"; cat <<'Y'
tenants:
  count: 2
  workload: {arrival: trace, trace: e1.csv}
sweep:
  tenants.workload.trace: [e1.csv, e2.csv]
Y
} >"$A/ex.yaml"
head -2 "$A/e2.csv" >"$TMP/b/e2.csv"
sed 's/e1.csv, e2.csv/e2.csv, e2.csv/' "$A/ex.yaml" >"$TMP/b/ex.yaml"
# col FILE ROW NAME: a column of a CSV's data row, by name.
col() { awk -F, -v r="$2" -v n="$3" 'NR == 1 { for (i = 1; i <= NF; i++) if ($i == n) c = i }
                                     NR == r + 1 && c { print $c }' "$1"; }
(cd "$A" && "$S" sweep ex.yaml -j 1 --quiet --out "$TMP/out/ex.csv") 2>"$TMP/err"
(cd "$A" && "$S" sweep ex.yaml --explain 1 --set acceptance.file=acc.txt) >"$TMP/ex.cmd" 2>>"$TMP/err"
(cd "$TMP/b" && eval "$(sed "s|^specsim |\"\$S\" |" "$TMP/ex.cmd") --quiet --out ex1.csv") \
    >/dev/null 2>>"$TMP/err"
ok=1
[ "$(tail -1 "$TMP/ex.cmd")" = "specsim run $A/ex.yaml --set acceptance.file=$A/acc.txt --set tenants.workload.trace=$A/e2.csv" ] || ok=0
for f in e2.csv acc.txt; do
    grep -qx "# read $A/$f sha256 $(sha256sum "$A/$f" | cut -d' ' -f1)" "$TMP/ex.cmd" || ok=0
done
grep -q "e1.csv" "$TMP/ex.cmd" && ok=0
for m in requests_done itl_mean_s; do
    a=$(col "$TMP/out/ex.csv" 2 $m)
    [ -n "$a" ] && [ "$a" = "$(col "$TMP/b/ex1.csv" 1 $m)" ] || ok=0
done
if [ $ok = 1 ] && ! grep -q 'holds other bytes' "$TMP/err"; then pass sweep_explain_absolute_paths
else fail sweep_explain_absolute_paths "$(cat "$TMP/ex.cmd") $(head -c 300 "$TMP/err")"; fi

# A sweep whose axes name data files (acceptance traces, empirical value
# files inside a flow value, request traces) records in its sidecar what
# the sweep read: each such value by its absolute path, next to a "# read"
# line with sha256sum's digest. The old sidecar kept the values as written
# ("a1.txt"): rerun from another directory it read the decoys of those
# names next to the sidecar (or found none). The rows name the same paths,
# so a resume, and a rerun of the sidecar, recognise the rows already
# written.
printf '1\n2\n4\n3\n' >"$A/a1.txt"; printf '4\n0\n4\n' >"$A/a2.txt"
printf '1ms\n2ms\n' >"$A/t1.txt"; printf '30ms\n40ms\n' >"$A/t2.txt"
cat >"$A/fx.yaml" <<'Y'
duration: 10s
warmup: 0s
replications: 1
protocol: {mode: sync, gamma: 4}
acceptance: {model: trace, file: a1.txt}
tenants:
  count: 2
  workload: {arrival: trace, trace: e1.csv, prompt_tokens: 8, output_tokens: 8}
sweep:
  acceptance.file: [a1.txt, a2.txt]
  tenants.workload: [{arrival: trace, trace: e2.csv},
                     {arrival: closed, think: {dist: empirical, file: t2.txt}}]
Y
for d in "$TMP/out" "$TMP/b"; do
    printf '1\n' >"$d/a1.txt"; printf '0\n' >"$d/a2.txt"
    printf '900ms\n' >"$d/t2.txt"; head -2 "$A/e2.csv" >"$d/e2.csv"
done
(cd "$A" && "$S" sweep fx.yaml -j 2 --quiet --out "$TMP/out/fx.csv") 2>"$TMP/err"
side=$TMP/out/fx.scenario.yaml
ok=1
for f in a1.txt a2.txt e2.csv t2.txt; do
    grep -qx "# read $A/$f sha256 $(sha256sum "$A/$f" | cut -d' ' -f1)" "$side" || ok=0
done
grep -qx "    - $A/a2.txt" "$side" &&
    grep -qx "    - {arrival: trace, trace: $A/e2.csv}" "$side" &&
    grep -qx "    - {arrival: closed, think: {dist: empirical, file: $A/t2.txt}}" "$side" || ok=0
grep -q "^3,$A/a2.txt," "$TMP/out/fx.csv" || ok=0
if [ $ok = 1 ]; then pass sweep_sidecar_file_axes_absolute
else fail sweep_sidecar_file_axes_absolute "$(head -c 300 "$TMP/err") $(sed -n '/^sweep:/,$p' "$side")"; fi

# Rerun from elsewhere, beside decoys: the same rows, no warning. A resume
# of the cut-off CSV, from the sweep and from its sidecar, finds its
# earlier rows (a different sidecar or row is refused, exit 2) and ends
# with the same file.
metrics() { cut -d, -f1-8 "$1"; }
(cd "$TMP/b" && "$S" sweep ../out/fx.scenario.yaml -j 1 --quiet --out fx.csv) 2>"$TMP/err"
ok=1
metrics "$TMP/out/fx.csv" >"$TMP/m1"; metrics "$TMP/b/fx.csv" >"$TMP/m2"
cmp -s "$TMP/m1" "$TMP/m2" && [ "$(wc -l <"$TMP/m1")" -eq 5 ] || ok=0
grep -q warning "$TMP/err" && ok=0
head -3 "$TMP/out/fx.csv" >"$TMP/b/cut.csv"; cp "$side" "$TMP/b/cut.scenario.yaml"
(cd "$TMP/b" && "$S" sweep "$A/fx.yaml" -j 1 --quiet --resume --out cut.csv) 2>>"$TMP/err" || ok=0
metrics "$TMP/b/cut.csv" | cmp -s - "$TMP/m1" || ok=0
head -2 "$TMP/b/fx.csv" >"$TMP/b/cut2.csv"; cp "$TMP/b/fx.scenario.yaml" "$TMP/b/cut2.scenario.yaml"
(cd / && "$S" sweep "$side" -j 1 --quiet --resume --out "$TMP/b/cut2.csv") 2>>"$TMP/err" || ok=0
metrics "$TMP/b/cut2.csv" | cmp -s - "$TMP/m1" || ok=0
if [ $ok = 1 ]; then pass sweep_sidecar_file_axes_rerun_and_resume
else fail sweep_sidecar_file_axes_rerun_and_resume "$(diff "$TMP/m1" "$TMP/m2" | head -4) $(head -c 400 "$TMP/err")"; fi

# --explain maps a file inside a flow value too (it printed it as written).
(cd "$A" && "$S" sweep fx.yaml --explain 3) >"$TMP/fx.cmd" 2>"$TMP/err"
if grep -q "tenants.workload={arrival: closed, think: {dist: empirical, file: $A/t2.txt}}'\$" "$TMP/fx.cmd"
then pass sweep_explain_flow_file_absolute
else fail sweep_explain_flow_file_absolute "$(cat "$TMP/fx.cmd" "$TMP/err")"; fi
