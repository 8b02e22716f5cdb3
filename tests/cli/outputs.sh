#!/bin/sh
# Output files (docs/formats.md, "Output files"; sim/io/outfile.h): a device or
# FIFO is written through and never replaced, a directory or socket is
# refused before anything runs, an output may be neither an input nor another
# output, --resume leaves a file that is no sweep's alone, an interrupt
# leaves no temporary behind, a full disk leaves no orphan sidecar and names
# the file, a write error on standard output says so.
#
# Devices: private nodes made with mknod in $TMP (the same major/minor as
# /dev/null and /dev/full), never the system's own, so that a regression can
# replace only a node of this test's. Without mknod (not root) those checks
# print SKIP.
. "$(dirname "$0")/lib.sh"

# A scenario a few milliseconds long per run; "long" makes it run for minutes.
scen() {
    cat <<EOF
name: out
seed: 3
duration: $1
warmup: 0.5s
replications: 1
protocol: {mode: sync, gamma: 4}
acceptance: {model: iid, alpha: 0.7}
tenants:
  count: 2
  edge: {draft_time: 10ms}
  network: {rtt: 40ms}
  workload: {prompt_tokens: 1, output_tokens: 50}
cloud:
  verify_time: 5ms
  batching: {max_batch: 4}
EOF
}
scen 2s >"$TMP/s.yaml"
{ scen 2s; printf 'sweep:\n  acceptance.alpha: [0.5, 0.9]\n'; } >"$TMP/sw.yaml"
cp "$TMP/s.yaml" "$TMP/s.orig"
cp "$TMP/sw.yaml" "$TMP/sw.orig"

# is_char PATH / is_fifo PATH: still what it was made as.
is_char() { [ -c "$1" ] && [ ! -L "$1" ]; }

# --- 1. devices and FIFOs are written through, never replaced -------------
if mknod "$TMP/null" c 1 3 2>/dev/null && mknod "$TMP/full" c 1 7 2>/dev/null; then
    $SPECSIM run "$TMP/s.yaml" --trace "$TMP/null" --out "$TMP/r1.csv" >/dev/null 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 0 ] && is_char "$TMP/null"; then pass out_trace_devnull_kept; else
        fail out_trace_devnull_kept "exit $rc; $(ls -l "$TMP/null") $(head -c 300 "$TMP/err")"; fi

    $SPECSIM sweep "$TMP/sw.yaml" --force --out "$TMP/full" --quiet 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 1 ] && is_char "$TMP/full" && [ ! -e "$TMP/full.scenario.yaml" ] &&
       grep -q "$TMP/full.*No space left" "$TMP/err"; then
        pass out_sweep_devfull_kept; else
        fail out_sweep_devfull_kept "exit $rc; $(ls -l "$TMP") $(head -c 300 "$TMP/err")"; fi
    # A device needs no --force (nothing is overwritten) and gets the rows.
    $SPECSIM sweep "$TMP/sw.yaml" --out "$TMP/null" --quiet 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 0 ] && is_char "$TMP/null" && [ ! -e "$TMP/null.scenario.yaml" ]; then
        pass out_sweep_devnull_no_sidecar; else
        fail out_sweep_devnull_no_sidecar "exit $rc; $(head -c 300 "$TMP/err")"; fi
    $SPECSIM run "$TMP/s.yaml" --out "$TMP/full" --quiet >/dev/null 2>"$TMP/err"
    rc=$?
    # (--out wants .csv or .json: the device's name has neither.)
    if [ $rc -eq 2 ] && is_char "$TMP/full"; then pass out_run_devfull_name_checked; else
        fail out_run_devfull_name_checked "exit $rc; $(head -c 300 "$TMP/err")"; fi

    $SPECSIM sweep "$TMP/sw.yaml" --shard 0/2 --out "$TMP/p0.csv" --quiet 2>/dev/null
    $SPECSIM sweep "$TMP/sw.yaml" --shard 1/2 --out "$TMP/p1.csv" --quiet 2>/dev/null
    $SPECSIM merge "$TMP/full" "$TMP/p0.csv" "$TMP/p1.csv" 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 1 ] && is_char "$TMP/full" && [ ! -e "$TMP/full.scenario.yaml" ] &&
       grep -q "$TMP/full" "$TMP/err"; then
        pass out_merge_devfull_kept; else
        fail out_merge_devfull_kept "exit $rc; $(ls -l "$TMP/full") $(head -c 300 "$TMP/err")"; fi
    # A block device is refused before the run, and stays one.
    if mknod "$TMP/blk" b 7 200 2>/dev/null; then
        expect_exit out_trace_blockdev_refused 2 $SPECSIM run "$TMP/s.yaml" --trace "$TMP/blk"
        [ -b "$TMP/blk" ] && grep -q "is a block device" "$TMP/err" &&
            pass out_trace_blockdev_kept || fail out_trace_blockdev_kept "$(head -c 300 "$TMP/err")"
    fi
else
    echo "SKIP out_devices: mknod is not allowed here (not root?)"
fi

mkfifo "$TMP/fifo"
timeout 60 cat "$TMP/fifo" >"$TMP/fifo.got" &
reader=$!
timeout 60 $SPECSIM run "$TMP/s.yaml" --trace "$TMP/fifo" >/dev/null 2>"$TMP/err"
rc=$?
wait $reader
if [ $rc -eq 0 ] && [ -p "$TMP/fifo" ] && head -1 "$TMP/fifo.got" | grep -q '^time,tenant,event'; then
    pass out_trace_fifo_written_through; else
    fail out_trace_fifo_written_through "exit $rc; $(ls -l "$TMP/fifo") $(head -c 300 "$TMP/err")"; fi

mkdir "$TMP/dir"
expect_exit out_trace_dir_refused 2 $SPECSIM run "$TMP/s.yaml" --trace "$TMP/dir" \
    --set duration=100000s
grep -q "$TMP/dir: is a directory" "$TMP/err" && pass out_trace_dir_named ||
    fail out_trace_dir_named "$(head -c 300 "$TMP/err")"

# A link to a regular file stays a link; the file it names is replaced.
echo old >"$TMP/target.csv"
ln -s "$TMP/target.csv" "$TMP/link.csv"
$SPECSIM run "$TMP/s.yaml" --trace "$TMP/link.csv" >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -eq 0 ] && [ -L "$TMP/link.csv" ] && head -1 "$TMP/target.csv" | grep -q '^time,'; then
    pass out_trace_symlink_kept; else
    fail out_trace_symlink_kept "exit $rc; $(ls -l "$TMP/link.csv") $(head -c 300 "$TMP/err")"; fi
ln -s "$TMP/nowhere/x.csv" "$TMP/dangling.csv"
expect_exit out_trace_dangling_refused 2 $SPECSIM run "$TMP/s.yaml" --trace "$TMP/dangling.csv"

# --- 2. outputs that are inputs or each other: refused before running -----
# refused NAME PATH1 PATH2 CMD...: exit 2, both paths named, the scenarios unchanged.
refused() {
    name=$1; p1=$2; p2=$3; shift 3
    "$@" >/dev/null 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 2 ] && grep -qF -- "$p1" "$TMP/err" && grep -qF -- "$p2" "$TMP/err" &&
       cmp -s "$TMP/s.yaml" "$TMP/s.orig" && cmp -s "$TMP/sw.yaml" "$TMP/sw.orig"; then
        pass "$name"; else
        fail "$name" "exit $rc; $(head -c 300 "$TMP/err")"
        cp "$TMP/s.orig" "$TMP/s.yaml"; cp "$TMP/sw.orig" "$TMP/sw.yaml"
    fi
}
refused out_trace_is_scenario "$TMP/s.yaml" "$TMP/s.yaml" \
    $SPECSIM run "$TMP/s.yaml" --trace "$TMP/s.yaml"
refused out_trace_is_scenario_spelled "$TMP/s.yaml" "$TMP/./dir/../s.yaml" \
    $SPECSIM run "$TMP/s.yaml" --trace "$TMP/./dir/../s.yaml"
ln "$TMP/s.yaml" "$TMP/hard.yaml"
refused out_per_tenant_is_scenario_hardlink "$TMP/s.yaml" "$TMP/hard.yaml" \
    $SPECSIM run "$TMP/s.yaml" --per-tenant "$TMP/hard.yaml"
refused out_sweep_out_is_scenario "$TMP/sw.yaml" "$TMP/sw.yaml" \
    $SPECSIM sweep "$TMP/sw.yaml" --force --out "$TMP/sw.yaml"
cp "$TMP/sw.yaml" "$TMP/A.scenario.yaml"
cp "$TMP/A.scenario.yaml" "$TMP/A.orig"
$SPECSIM sweep "$TMP/A.scenario.yaml" --out "$TMP/A.csv" --quiet 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ] && cmp -s "$TMP/A.scenario.yaml" "$TMP/A.orig" && [ ! -e "$TMP/A.csv" ] &&
   grep -q "sidecar" "$TMP/err"; then
    pass out_sweep_sidecar_is_scenario; else
    fail out_sweep_sidecar_is_scenario "exit $rc; $(head -c 300 "$TMP/err")"; fi
# ... but resuming with the sidecar standing in for the scenario (docs/guide.md, Sweeps)
# writes no sidecar, so it is no collision.
$SPECSIM sweep "$TMP/sw.yaml" --out "$TMP/C.csv" --quiet 2>/dev/null
sed '$d' "$TMP/C.csv" >"$TMP/C.part" && mv "$TMP/C.part" "$TMP/C.csv"
expect_exit out_sweep_resume_from_own_sidecar 0 \
    $SPECSIM sweep "$TMP/C.scenario.yaml" --resume --out "$TMP/C.csv" --quiet
refused out_trace_is_out "$TMP/x.csv" "--trace" \
    $SPECSIM run "$TMP/s.yaml" --trace "$TMP/x.csv" --out "$TMP/x.csv"
refused out_trace_is_sidecar "$TMP/B.scenario.yaml" "--out's sidecar" \
    $SPECSIM run "$TMP/s.yaml" --trace "$TMP/B.scenario.yaml" --out "$TMP/B.csv"
refused out_trace_is_per_tenant "$TMP/y.csv" "--per-tenant" \
    $SPECSIM run "$TMP/s.yaml" --trace "$TMP/y.csv" --per-tenant "$TMP/y.csv"
[ ! -e "$TMP/x.csv" ] && [ ! -e "$TMP/B.csv" ] && [ ! -e "$TMP/y.csv" ] &&
    pass out_collisions_ran_nothing || fail out_collisions_ran_nothing "$(ls "$TMP")"

# run --out over a sweep's CSV (or, for F.json, its sidecar): only with --force.
$SPECSIM sweep "$TMP/sw.yaml" --out "$TMP/sweep.csv" --quiet 2>/dev/null
cp "$TMP/sweep.csv" "$TMP/sweep.keep"
cp "$TMP/sweep.scenario.yaml" "$TMP/sweep.side.keep"
expect_exit out_run_over_sweep_refused 2 $SPECSIM run "$TMP/s.yaml" --out "$TMP/sweep.csv"
expect_exit out_run_json_over_sweep_sidecar_refused 2 \
    $SPECSIM run "$TMP/s.yaml" --out "$TMP/sweep.json"
if cmp -s "$TMP/sweep.csv" "$TMP/sweep.keep" &&
   cmp -s "$TMP/sweep.scenario.yaml" "$TMP/sweep.side.keep" && [ ! -e "$TMP/sweep.json" ]; then
    pass out_run_over_sweep_untouched; else fail out_run_over_sweep_untouched; fi
expect_exit out_run_over_sweep_forced 0 $SPECSIM run "$TMP/s.yaml" --out "$TMP/sweep.csv" --force

# merge into one of its own parts (or a part's sidecar).
[ -f "$TMP/p0.csv" ] || $SPECSIM sweep "$TMP/sw.yaml" --shard 0/2 --out "$TMP/p0.csv" --quiet 2>/dev/null
[ -f "$TMP/p1.csv" ] || $SPECSIM sweep "$TMP/sw.yaml" --shard 1/2 --out "$TMP/p1.csv" --quiet 2>/dev/null
cp "$TMP/p0.csv" "$TMP/p0.keep"
expect_exit out_merge_into_part 2 $SPECSIM merge "$TMP/p0.csv" "$TMP/p0.csv" "$TMP/p1.csv"
expect_exit out_merge_sidecar_of_part 2 $SPECSIM merge "$TMP/p0" "$TMP/p0.csv" "$TMP/p1.csv"
cmp -s "$TMP/p0.csv" "$TMP/p0.keep" && [ ! -e "$TMP/p0" ] && pass out_merge_part_untouched ||
    fail out_merge_part_untouched

# optimize: its --out is checked before the search.
cp scenarios/examples/optimize-capacity.yaml "$TMP/opt.yaml"
cp "$TMP/opt.yaml" "$TMP/opt.keep"
expect_exit out_optimize_out_is_scenario 2 timeout 120 $SPECSIM optimize "$TMP/opt.yaml" \
    --out "$TMP/opt.yaml"
cmp -s "$TMP/opt.yaml" "$TMP/opt.keep" && pass out_optimize_scenario_untouched ||
    fail out_optimize_scenario_untouched

# --- 3. --resume leaves a file that is no sweep's alone ---------------------
printf 'notes without a final newline' >"$TMP/notes.csv"
cp "$TMP/notes.csv" "$TMP/notes.keep"
expect_exit out_resume_text_refused 2 $SPECSIM sweep "$TMP/sw.yaml" --resume --out "$TMP/notes.csv"
printf '\001\002\000\377binary' >"$TMP/bin.csv"
cp "$TMP/bin.csv" "$TMP/bin.keep"
expect_exit out_resume_binary_refused 2 $SPECSIM sweep "$TMP/sw.yaml" --resume --out "$TMP/bin.csv"
cmp -s "$TMP/notes.csv" "$TMP/notes.keep" && cmp -s "$TMP/bin.csv" "$TMP/bin.keep" &&
    pass out_resume_foreign_untouched || fail out_resume_foreign_untouched
: >"$TMP/empty.csv"
expect_exit out_resume_empty_starts 0 $SPECSIM sweep "$TMP/sw.yaml" --resume --out "$TMP/empty.csv" --quiet

# --- 4. an interrupted run leaves no temporary ------------------------------
scen 1000000s >"$TMP/long.yaml"
# interrupt SIG: a long run with --trace, killed once its temporary exists;
# the earlier trace (a final output) must stay as it was.
interrupt() {
    sig=$1; want=$2
    echo "earlier trace" >"$TMP/tr.csv"
    # env --default-signal: a background job of a script starts with SIGINT
    # ignored, and under nohup SIGHUP is ignored too; the program rightly
    # leaves ignored signals ignored, so the test resets all three.
    env --default-signal=INT,TERM,HUP $SPECSIM run "$TMP/long.yaml" --trace "$TMP/tr.csv" \
        --per-tenant "$TMP/pt.csv" --out "$TMP/o.json" >/dev/null 2>&1 &
    pid=$!
    n=0
    while [ $n -lt 200 ] && ! ls "$TMP"/tr.csv.tmp.* >/dev/null 2>&1; do
        sleep 0.1; n=$((n + 1)); done
    kill -"$sig" $pid
    wait $pid
    rc=$?
    left=$(ls "$TMP" | grep '\.tmp\.' | tr '\n' ' ')
    if [ $n -lt 200 ] && [ $rc -eq "$want" ] && [ -z "$left" ] &&
       [ "$(cat "$TMP/tr.csv")" = "earlier trace" ]; then
        pass "out_sig${sig}_removes_temporaries"; else
        fail "out_sig${sig}_removes_temporaries" "exit $rc (want $want), waited $n, left: $left"; fi
}
interrupt INT 130
interrupt TERM 143
interrupt HUP 129
# A reader that stops early (`| head -1`) ends the run with SIGPIPE at its
# next write to standard output; the per-tenant file's temporary goes too.
scen 200s >"$TMP/pipe.yaml"
env --default-signal=PIPE $SPECSIM run "$TMP/pipe.yaml" --trace - --per-tenant "$TMP/pp.csv" \
    2>/dev/null | head -1 >/dev/null
left=$(ls "$TMP" | grep '^pp\.csv' | tr '\n' ' ')
if [ -z "$left" ]; then pass out_sigpipe_removes_temporaries; else
    fail out_sigpipe_removes_temporaries "left: $left"; fi

# --- 5. full disks, formats, late checks, standard output --------------------
# RLIMIT_FSIZE (ulimit -f, with SIGXFSZ ignored) makes a write past the limit
# fail with EFBIG, as a full disk fails with ENOSPC, on any machine. The
# limit (8 blocks: 4 KiB in dash's 512-byte blocks, 8 KiB in bash's) holds
# this sidecar (about 3.5 KB) but not the header of six groups' columns
# (about 11 KB): the CSV fails after its sidecar was written.
{ printf 'duration: 2s\nwarmup: 0.5s\ntenants:\n  groups:\n'
  for i in 1 2 3 4 5 6; do echo "    - {name: g$i, count: 1, network: {rtt: ${i}0ms}}"; done
  printf 'cloud: {verify_time: 5ms}\nsweep:\n  protocol.gamma: [2, 3]\n'; } >"$TMP/pg.yaml"
(trap '' XFSZ; ulimit -f 8; exec $SPECSIM sweep "$TMP/pg.yaml" --per-group \
    --out "$TMP/efbig.csv" --quiet) 2>"$TMP/err"
rc=$?
left=$(ls "$TMP" | grep '^efbig' | tr '\n' ' ')
if [ $rc -eq 1 ] && [ -z "$left" ] && grep -q "$TMP/efbig.csv" "$TMP/err"; then
    pass out_sweep_full_disk_no_orphan_sidecar; else
    fail out_sweep_full_disk_no_orphan_sidecar "exit $rc; left: $left; $(head -c 300 "$TMP/err")"; fi
# Rows past the limit: the message names the CSV. 12 blocks (6 KiB in
# dash, 12 KiB in bash) hold the sidecar (about 4.2 KB: it carries the
# cards, which grow) but not 41 points' rows (about 15 KB).
{ scen 1s; printf 'sweep:\n  acceptance.alpha: {from: 0.1, to: 0.9, step: 0.02}\n'; } >"$TMP/many.yaml"
(trap '' XFSZ; ulimit -f 12; exec $SPECSIM sweep "$TMP/many.yaml" -j 1 \
    --out "$TMP/rows.csv" --quiet) 2>"$TMP/err"
rc=$?
if [ $rc -eq 1 ] && grep -q "$TMP/rows.csv: write failed: File too large" "$TMP/err"; then
    pass out_sweep_row_write_error_names_file; else
    fail out_sweep_row_write_error_names_file "exit $rc; $(head -c 300 "$TMP/err")"; fi

expect_exit out_sweep_json_refused 2 $SPECSIM sweep "$TMP/sw.yaml" --out "$TMP/x.json"
[ ! -e "$TMP/x.json" ] && grep -q "x.json" "$TMP/err" && pass out_sweep_json_nothing_written ||
    fail out_sweep_json_nothing_written "$(head -c 300 "$TMP/err")"

# Standard output that cannot be written is named.
if is_char /dev/full; then
    $SPECSIM analytic "$TMP/s.yaml" >/dev/full 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 1 ] && grep -q "standard output" "$TMP/err"; then
        pass out_analytic_stdout_error_named; else
        fail out_analytic_stdout_error_named "exit $rc; $(head -c 300 "$TMP/err")"; fi
    $SPECSIM roofline "$TMP/s.yaml" >/dev/full 2>"$TMP/err"
    rc=$?
    if [ $rc -eq 1 ] && grep -q "standard output" "$TMP/err"; then
        pass out_roofline_stdout_error_named; else
        fail out_roofline_stdout_error_named "exit $rc; $(head -c 300 "$TMP/err")"; fi
else
    echo "SKIP out_stdout_errors: no /dev/full"
fi
