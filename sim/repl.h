/* repl — one replication's run-time context, shared by the modules that
 * simulate it: the edge (sim/edge.c), the cloud's view of each tenant
 * (sim/ctenant.c) and the protocols (sim/proto_*.c). A runner (sim/world.c;
 * the testbed's testbed/fleet.c and testbed/server.c) builds it with
 * repl_init, owns everything it points to, and routes events, most of them
 * with the repl_on_* handlers below (sim/repl.c); the modules above only
 * read it and change their own tenants' state. No globals: several
 * replications may run on different threads at once.
 */
#ifndef SPECSIM_REPL_H
#define SPECSIM_REPL_H

#include "cloud.h"
#include "engine.h"
#include "err.h"
#include "scenario.h"
#include "service.h"
#include "tally.h"
#include "trace.h"

enum repl_event {
    EV_ARRIVE = 0,   /* a = tenant: request arrival / closed-loop start */
    EV_EDGE_PREFILL, /* a = tenant, b = request serial */
    EV_DRAFT,        /* a = tenant, b = draft generation */
    EV_UP,           /* a = tenant, b = message (edge -> cloud, sim/msg.h) */
    EV_DOWN,         /* a = tenant, b = message (cloud -> edge) */
    EV_ITER_END,     /* a = replica (cloud) */
    EV_KICK          /* a = replica (cloud) */
};

#define REPL_MEMO_MAX 65536

/* Per tenant group, precomputed for the hot path. */
typedef struct repl_group {
    service_t *edge_sv;    /* NULL when draft and prefill times are given */
    int draft_kind;        /* 0 constant, 1 distribution, 2 service model */
    double draft_const;
    double bytes_per_token, overhead_bytes;
} repl_group_t;

/* What every replication shares; built once per sim_run, read-only. */
typedef struct repl_shared {
    const scenario_t *s;
    repl_group_t *groups;      /* s->ngroups */
    /* The cloud's replica groups (one without cloud.replica_groups), as
     * sim/cloud.h runs them, and their service models (NULL when the
     * verify time is given and KV unlimited). */
    cloud_group_t *cgroups;
    service_t **cloud_sv;
    int ncgroups;
} repl_shared_t;

typedef struct repl {
    const scenario_t *s;
    const repl_shared_t *sh;
    int rep, n;                /* replication index, tenants */
    engine_t *eng;
    cloud_t *cloud;            /* NULL when no tenant uses the cloud */
    tally_t *tally;            /* borrowed */
    trace_t *trace;            /* borrowed; NULL = no trace */
    struct edge_tenant *et;    /* [n], sim/edge.h */
    struct ctenant *ct;        /* [n], sim/ctenant.h */
    double *cum;               /* every tenant's draft-time buffer */
    /* Per group: draft time by context, filled on first use (the service
     * model is pure, so its answers can be kept; contexts beyond
     * REPL_MEMO_MAX are computed each time to bound memory). */
    double **draft_memo;
    int *draft_memo_n;
    err_t *err;                /* where handlers report failures */
    /* NULL in the simulator. Set by a runner that times some drafts itself
     * (the testbed's --real-draft, docs/testbed.md): given tenant, context
     * and n tokens of a draft starting now and the model's time for it
     * (model_s, also in the tenant's cum), it returns the draft's duration,
     * or INFINITY when the runner schedules its EV_DRAFT (b = the tenant's
     * draft_gen) when the draft really ends. */
    double (*draft_time)(void *ctx, int tenant, int context, int n, double model_s);
    void *draft_ctx;
    uint64_t waiting;          /* arrivals waiting for their tenant, all
                                  tenants (sim/guard.h bounds it) */
} repl_t;

/* Fills r's fields (sh, tally, trace and err borrowed) and allocates its
 * engine, its tenants' edge and cloud-side state (zeroed, for the runner to
 * initialise) and the draft memos. 0, or -1 when out of memory (the runner
 * reports it); either way repl_fini frees what was made. */
int repl_init(repl_t *r, const repl_shared_t *sh, int rep, tally_t *tally,
              trace_t *trace, err_t *err);
/* Allocates r->cum, every tenant's draft buffer, and *off[n + 1] (the
 * caller frees it), tenant i's buffer at r->cum + (*off)[i]. 0 or -1 (out
 * of memory; free *off either way). */
int repl_alloc_cum(repl_t *r, size_t **off);
/* Frees everything r points to (not r): tenants, cloud, engine, buffers. */
void repl_fini(repl_t *r);

/* Engine handlers, ctx = the repl_t: each hands its event to the edge
 * (sim/edge.h), the cloud-side tenant (sim/ctenant.h) or the tenant's
 * protocol (sim/proto.h). */
int repl_on_arrive(void *ctx, const engine_event_t *ev);        /* EV_ARRIVE */
int repl_on_edge_prefill(void *ctx, const engine_event_t *ev);  /* EV_EDGE_PREFILL */
int repl_on_draft(void *ctx, const engine_event_t *ev);         /* EV_DRAFT */
int repl_on_up(void *ctx, const engine_event_t *ev);   /* EV_UP, at the cloud */
int repl_on_down(void *ctx, const engine_event_t *ev); /* EV_DOWN, at the edge */
/* cloud_cb_t.job_done: the tenant's protocol takes the finished job. */
int repl_on_job_done(void *ctx, const cloud_job_t *job, double now);

static inline int repl_fail(repl_t *r, const char *what)
{
    return err_set(r->err, ERR_RUNTIME, "simulation: %s", what);
}

/* The message of every failed engine_schedule. */
#define REPL_SCHED_FAIL "event queue: out of memory or a non-finite time"

/* Tenant i's protocol settings (protocol, gamma, window, gamma policy):
 * its group's (scenario.h). Tenants copy what they need at set-up. */
static inline const protocol_cfg_t *repl_protocol(const repl_t *r, int i)
{
    const tenant_group_t *g = scenario_tenant_group(r->s, i);
    return scenario_group_protocol(r->s, (int)(g - r->s->groups));
}

static inline void repl_trace(repl_t *r, int i, const char *ev, long block,
                              long tokens)
{
    if (r->trace) trace_event(r->trace, engine_now(r->eng), i, ev, block, tokens);
}

#endif
