/* fleet — the testbed's edge fleet: one process, one event loop, one TCP
 * connection per tenant that uses the cloud (docs/testbed.md).
 *
 * It runs the simulator's edge side unchanged — sim/entity/edge.c and the
 * protocols' edge operations (sync, async with its window, epochs and
 * rollback, cloud-only, edge-only), the workload, the speculation-length
 * policies — on an engine paced by the wall clock (testbed/rt.h): a draft
 * step lasts the service model's draft time because its end is a timer at
 * that time. A message up leaves when the uplink model (sim/model/network.c)
 * delivers it, so the uplink's WAN delay is injected here; frames from the
 * verifier enter the engine at the instant they are read. With real
 * drafting for one tenant (testbed/realdraft.h) that tenant's draft ends
 * when the draft model's real decode steps are done instead.
 */
#ifndef TESTBED_FLEET_H
#define TESTBED_FLEET_H

#include <signal.h>
#include <sys/types.h>

#include "base/err.h"
#include "lmedge.h"
#include "realverify.h"
#include "entity/repl.h"
#include "config/scenario.h"
#include "stat/tally.h"

/* What a replication of the fleet measured besides its tally. */
typedef struct fleet_stats {
    double events;          /* engine events run */
    double late_mean, late_max; /* how late events ran behind their time (s) */
    double steps;           /* events run by the wall clock */
    /* Real drafting: drafts finished, their tokens, measured and
     * model (service model or scenario draft_time) seconds. */
    double rd_drafts, rd_tokens, rd_real_s, rd_model_s;
    /* A real model (--real-model): its drafts as above, the verdicts whose
     * accepted ids were not the drafts (0 unless the sides disagree), the
     * requests started (testbed/lmedge.h). */
    double lm_drafts, lm_tokens, lm_real_s, lm_model_s, lm_mismatches, lm_requests;
    /* drafts later than the scenario's time and by how much: all, and
     * those after the warm-up */
    double lm_late, lm_late_s, lm_late_measured, lm_late_measured_s, lm_drafts_measured;
} fleet_stats_t;

/* Why tenant cannot draft for real in s (a message for the user, exit 2),
 * or NULL. */
const char *fleet_real_draft_refusal(const scenario_t *s, int tenant);
/* What tenant's real draft worker allocates for its model
 * (realdraft_bytes as real drafting builds it; *context gets the context
 * it keeps room for), for the memory check before anything starts
 * (testbed/realmem.h). tenant: one fleet_real_draft_refusal accepted. */
realverify_size_t fleet_real_draft_bytes(const scenario_t *s, int tenant, int *context);

/* Runs replication rep of s into tl (reset by the caller): connects one
 * socket per cloud tenant to 127.0.0.1:port (port < 0: no tenant uses the
 * cloud) of the process verifier (a send blocked on it gives up when it
 * stalls, testbed/xio.h), greets with HELLO, runs s->duration seconds from
 * a start shortly after, closes the books and says BYE. real_draft: the tenant whose drafts
 * run the real draft model (fleet_real_draft_refusal said yes), or -1.
 * lm: a real model's tokens and drafts for every tenant (testbed/lmedge.h),
 * or NULL. 0, or -1 with err. */
int fleet_run(const scenario_t *s, const repl_shared_t *sh, int rep, int port,
              pid_t verifier, int real_draft, const lmedge_opts_t *lm, tally_t *tl,
              fleet_stats_t *st, const volatile sig_atomic_t *stop, err_t *err);

#endif
