/* server — the testbed's verifier: its own process, one TCP listener on
 * 127.0.0.1, one connection per tenant (docs/testbed.md).
 *
 * It runs the simulator's cloud side unchanged — sim/ctenant.c (KV
 * admission, verify jobs, acceptance draws, epochs and purges, verdicts)
 * and sim/cloud.c (replicas, batching policy and limits, ordering,
 * iteration times) — on an engine paced by the wall clock (testbed/rt.h):
 * an iteration lasts its verify time (fixed, a distribution or the service
 * model's for its M tokens) because its end is a timer at that time.
 * Blocks and prompts enter when their frames arrive; verdicts and tokens
 * leave when the downlink model (sim/network.c) says they are delivered:
 * the WAN delay of the downlink is injected here, the uplink's by the edge.
 */
#ifndef TESTBED_SERVER_H
#define TESTBED_SERVER_H

#include <signal.h>

#include "err.h"
#include "repl.h"
#include "scenario.h"

/* Serves replication rep of s: listens on an ephemeral port of 127.0.0.1
 * and writes it (u32, native order) to ctl_fd, accepts one connection per
 * tenant that uses the cloud (each opens with HELLO), runs until
 * s->duration after the HELLO's start, waits for every BYE, then writes its
 * tally to ctl_fd: u64 n, u64 events, 3 doubles (its events' summed and
 * largest lateness in s, and their number: testbed/rt.h), n doubles
 * (testbed/tallyio.h).
 * 0, or -1 with err. */
int server_run(const scenario_t *s, const repl_shared_t *sh, int rep, int ctl_fd,
               const volatile sig_atomic_t *stop, err_t *err);

#endif
