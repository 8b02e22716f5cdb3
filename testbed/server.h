/* server — the testbed's verifier: its own process, one TCP listener on
 * 127.0.0.1, one connection per tenant (docs/testbed.md).
 *
 * It runs the simulator's cloud side unchanged — sim/entity/ctenant.c (KV
 * admission, verify jobs, acceptance draws, epochs and purges, verdicts)
 * and sim/entity/cloud.c (replicas, batching policy and limits, ordering,
 * iteration times) — on an engine paced by the wall clock (testbed/rt.h):
 * an iteration lasts its verify time (fixed, a distribution or the service
 * model's for its M tokens) because its end is a timer at that time.
 * Blocks and prompts enter when their frames arrive; verdicts and tokens
 * leave when the downlink model (sim/model/network.c) says they are delivered:
 * the WAN delay of the downlink is injected here, the uplink's by the edge.
 */
#ifndef TESTBED_SERVER_H
#define TESTBED_SERVER_H

#include <signal.h>

#include "base/err.h"
#include "realverify.h"
#include "entity/repl.h"
#include "config/scenario.h"

/* How the verifier verifies. */
typedef struct server_opts {
    int real_verify;        /* run the target's forward pass on the CPU
                               (testbed/realverify.h) instead of waiting
                               for the scenario's iteration time */
    int quiet;              /* no report of real iteration times */
} server_opts_t;

/* Serves replication rep of s: listens on an ephemeral port of 127.0.0.1
 * and writes it (u32, native order) to ctl_fd, accepts one connection per
 * tenant that uses the cloud (each opens with HELLO), runs until
 * s->duration after the HELLO's start, waits for every BYE, then writes its
 * tally to ctl_fd (with real verification it reports on stderr, per
 * batch size M, the measured iteration times against the service model's): u64 n, u64 events, 3 doubles (its events' summed and
 * largest lateness in s, and their number: testbed/rt.h), n doubles
 * (testbed/tallyio.h).
 * 0, or -1 with err. */
int server_run(const scenario_t *s, const repl_shared_t *sh, int rep,
               const server_opts_t *opt, int ctl_fd, const volatile sig_atomic_t *stop,
               err_t *err);
/* Why s cannot be verified for real (a message for the user, exit 2), or
 * NULL: --real-verify needs a token bound per iteration. */
const char *server_real_refusal(const scenario_t *s);
/* What the real verifier of s allocates for its model (realverify_bytes
 * of the arguments it builds it with; *quant, *jobs and *context get the
 * precision and the jobs and context it keeps KV room for), for the
 * memory check before anything starts (testbed/realmem.h). */
realverify_size_t server_real_bytes(const scenario_t *s, int *quant, int *jobs, int *context);

/* Listens on an ephemeral port of 127.0.0.1 (*lfd, owned by the caller)
 * and writes the port, a u32, to ctl_fd: a verifier's first word to the
 * parent (server_run's and testbed/lmserver.c's). 0, or -1 with err. */
int server_listen(int *lfd, int ctl_fd, err_t *err);

struct conn;
/* Accepts one connection per tenant i of n with expect[i] set, then reads
 * each one's HELLO (of replication rep) into conn[tenant] (n slots, NULL
 * on entry; the caller owns what it gets, also on failure) and *start from
 * it. All are accepted before any HELLO is read: the edge connects every
 * tenant before it greets, so past the listen backlog (1024) a verifier
 * that waited for the first HELLO would wait forever. 0, or -1 with err. */
int server_accept(int lfd, int rep, int n, const unsigned char *expect, struct conn **conn,
                  double *start, err_t *err);

#endif
