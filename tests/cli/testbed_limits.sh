#!/bin/sh
# build/testbed's refusal of a fleet the open-files limit cannot hold
# (testbed/main.c fd_room): the message agrees in number with the fleet.
# A single tenant needs the 64 spare descriptors besides its socket, so a
# limit of 40 refuses it; the old message read "1 tenants need".
. "$(dirname "$0")/lib.sh"
TESTBED="$BUILD/testbed"
if [ ! -x "$TESTBED" ]; then echo "skip testbed_fd_limit_one_tenant: no $TESTBED"; exit 0; fi
cat >"$TMP/one.yaml" <<'Y'
duration: 0.2s
warmup: 0s
replications: 1
protocol: {mode: sync, gamma: 4}
acceptance: {model: iid, alpha: 0.8}
tenants:
  count: 1
  edge: {draft_time: 2ms, prefill_time: 2ms}
  network: {rtt: 2ms}
  workload: {arrival: closed, think: 0s, prompt_tokens: 8, output_tokens: 8}
cloud: {verify_time: 2ms}
Y
# 1 + 64 = 65 descriptors needed; 40 is both limits, so it cannot be raised.
(ulimit -n 40; exec "$TESTBED" run "$TMP/one.yaml" --quiet --out "$TMP/one.csv") \
    >/dev/null 2>"$TMP/err"
rc=$?
if [ $rc -eq 2 ] && [ ! -e "$TMP/one.csv" ] &&
   grep -qx 'testbed: 1 tenant needs about 65 open files in each process (one socket per tenant), but the limit is 40 (hard 40): raise it (ulimit -n) or run fewer tenants' "$TMP/err"
then pass testbed_fd_limit_one_tenant
else fail testbed_fd_limit_one_tenant "exit $rc: $(cat "$TMP/err")"; fi
