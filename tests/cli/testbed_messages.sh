#!/bin/sh
# build/testbed's refusals are named after the program that prints them:
# "testbed run: ..." for its options, "testbed: ..." for the rest, never
# "specsim testbed run" (issue 28 item 16: the testbed was a specsim
# subcommand once, and its messages kept the old name). Each case exits
# 2; every line on stderr starts with one of the testbed's own prefixes
# (or is the help pointer), and none names specsim.
. "$(dirname "$0")/lib.sh"
TESTBED="$BUILD/testbed"
if [ ! -x "$TESTBED" ]; then echo "skip testbed_messages_own_name: no $TESTBED"; exit 0; fi
cat >"$TMP/s.yaml" <<'Y'
duration: 0.2s
warmup: 0s
tenants: {count: 1, edge: {draft_time: 2ms, prefill_time: 2ms}, network: {rtt: 2ms}}
cloud: {verify_time: 2ms}
Y
ok=1 why=""
check() { # NAME FIRST-LINE-PATTERN ARGS...
    n=$1 want=$2; shift 2
    "$TESTBED" "$@" >/dev/null 2>"$TMP/err"
    rc=$?
    if [ $rc -ne 2 ] || ! head -1 "$TMP/err" | grep -q -- "$want" ||
       grep -v -e '^testbed run: ' -e '^testbed: ' -e '^(see testbed run --help)$' "$TMP/err" |
           grep -q . || grep -qi specsim "$TMP/err"; then
        ok=0; why="$why [$n: exit $rc: $(head -c 200 "$TMP/err")]"
    fi
}
check unknown_option "^testbed run: unknown option '--bogus'\$" run "$TMP/s.yaml" --bogus
check no_scenario '^testbed run: needs a SCENARIO file$' run
check bad_set "^testbed: --set:1:10: protocol.gama: unknown key" run "$TMP/s.yaml" --set protocol.gama=3
check missing_file "^testbed: $TMP/none.yaml: cannot open" run "$TMP/none.yaml"
if [ $ok = 1 ]; then pass testbed_messages_own_name; else fail testbed_messages_own_name "$why"; fi
