/* route — what every runner of a replication shares: sim/run/world.c (the
 * simulator) and the testbed's two halves, testbed/fleet.c (the edge) and
 * testbed/server.c (the verifier). The replication's set-up and tear-down
 * (sim/entity/repl.h) and the engine handlers that hand each event to the module
 * or the tenant's protocol that handles it. A runner registers these for
 * the events it runs as the simulator does, and its own for those it sends
 * over the wire instead. Kept apart from sim/entity/repl.h, which the modules the
 * handlers call include themselves.
 */
#ifndef SPECSIM_ROUTE_H
#define SPECSIM_ROUTE_H

#include <stddef.h>

#include "entity/repl.h"

/* The sides of a replication a runner runs: the simulator both, the
 * testbed's fleet the edge and its verifier the cloud. */
enum route_side { ROUTE_EDGE = 1, ROUTE_CLOUD = 2, ROUTE_BOTH = 3 };

/* Fills r's fields (sh, tally, trace and err borrowed) and allocates its
 * engine, the tenants' prompt slots and, for the sides asked (enum
 * route_side), their state, zeroed for the runner to initialise: the edge
 * side's tenants (r->et) and draft memos, the cloud side's tenants (r->ct).
 * A side not asked for stays NULL, so that nothing on the other side can
 * lean on it. 0, or -1 when out of memory (the runner reports it); either
 * way route_teardown frees what was made. */
int route_setup(repl_t *r, const repl_shared_t *sh, int rep, int sides, tally_t *tally,
                trace_t *trace, err_t *err);
/* Allocates r->cum, every tenant's draft buffer, and *off[n + 1] (the
 * caller frees it), tenant i's buffer at r->cum + (*off)[i]. 0 or -1 (out
 * of memory; free *off either way). */
int route_alloc_cum(repl_t *r, size_t **off);
/* Frees everything r points to (not r): tenants, cloud, engine, buffers. */
void route_teardown(repl_t *r);

/* Engine handlers, ctx = the repl_t: each hands its event to the edge
 * (sim/entity/edge.h), the cloud-side tenant (sim/entity/ctenant.h) or the tenant's
 * protocol (sim/entity/proto.h). */
int route_arrive(void *ctx, const engine_event_t *ev);        /* EV_ARRIVE */
int route_edge_prefill(void *ctx, const engine_event_t *ev);  /* EV_EDGE_PREFILL */
int route_draft(void *ctx, const engine_event_t *ev);         /* EV_DRAFT */
int route_up(void *ctx, const engine_event_t *ev);   /* EV_UP, at the cloud */
int route_down(void *ctx, const engine_event_t *ev); /* EV_DOWN, at the edge */
int route_link(void *ctx, const engine_event_t *ev); /* EV_LINK */
/* cloud_cb_t.job_done: the tenant's protocol takes the finished job. */
int route_job_done(void *ctx, const cloud_job_t *job, double now);

#endif
