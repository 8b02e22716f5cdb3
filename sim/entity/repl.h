/* repl — one replication's run-time context, shared by the modules that
 * simulate it: the edge (sim/entity/edge.c), the cloud's view of each tenant
 * (sim/entity/ctenant.c) and the protocols (sim/entity/proto_*.c). A runner (sim/run/world.c;
 * the testbed's testbed/fleet.c and testbed/server.c) builds it with
 * route_setup, owns everything it points to, and routes events, most of them
 * with the route_* handlers (sim/entity/route.h); the modules above only
 * read it and change their own tenants' state. No globals: several
 * replications may run on different threads at once.
 *
 * The two sides share no tenant state: the edge side (edge.c, the
 * protocols' edge operations) uses et and never ct, the cloud side
 * (ctenant.c, cloud.c, the protocols' cloud operations) ct and never et.
 * What one tells the other travels in messages (sim/entity/msg.h), a
 * prompt's body through prompt_box. A runner of one side allocates only
 * that side's table (route_setup): the other is NULL.
 */
#ifndef SPECSIM_REPL_H
#define SPECSIM_REPL_H

#include "entity/cloud.h"
#include "engine/engine.h"
#include "base/err.h"
#include "desc/scenario.h"
#include "model/service.h"
#include "stat/tally.h"
#include "io/trace.h"

enum repl_event {
    EV_ARRIVE = 0,   /* a = tenant: request arrival / closed-loop start */
    EV_EDGE_PREFILL, /* a = tenant, b = request serial */
    EV_DRAFT,        /* a = tenant, b = draft generation */
    EV_UP,           /* a = tenant, b = message (edge -> cloud, sim/entity/msg.h) */
    EV_DOWN,         /* a = tenant, b = message (cloud -> edge) */
    EV_ITER_END,     /* a = replica (cloud) */
    EV_KICK,         /* a = replica (cloud) */
    EV_LINK          /* a = tenant, b = its link generation: protocol.fallback
                        looks at a stalled tenant's link when it may change */
};

#define REPL_MEMO_MAX 65536

/* Per tenant group, precomputed for the hot path. The runner fills the
 * configuration pointers from the scenario (sim_shared_init), so the
 * entities read their group's settings here and never call back into the
 * loader (docs/design.md, "Layers"). */
typedef struct repl_group {
    const tenant_group_t *cfg;         /* the group's settings */
    const protocol_cfg_t *protocol;    /* its own, else the scenario's */
    const accept_cfg_t *acceptance;    /* likewise */
    int first;                         /* its first tenant's index */
    service_t *edge_sv;    /* NULL when draft and prefill times are given */
    int draft_kind;        /* 0 constant, 1 distribution, 2 service model */
    double draft_const;
    double bytes_per_token, overhead_bytes;
    /* The group's link traces (sim/config/build.h build_link_t), NULL
     * where none: read by repl_link_vary. */
    const struct linktrace *link_trace;
    const struct linkopp *link_opp[2];
} repl_group_t;

/* What every replication shares; built once per sim_run, read-only. */
typedef struct repl_shared {
    const scenario_t *s;
    repl_group_t *groups;      /* s->ngroups */
    /* The cloud's replica groups (one without cloud.replica_groups), as
     * sim/entity/cloud.h runs them, and their service models (NULL when the
     * verify time is given and KV unlimited). */
    cloud_group_t *cgroups;
    int ncgroups;
    const workload_trace_t *arrivals; /* the request trace, or NULL */
    struct build *own;         /* owned: the build (sim/config/build.h) made
                                  for a scenario without one, else NULL */
} repl_shared_t;

typedef struct repl {
    const scenario_t *s;
    const repl_shared_t *sh;
    int rep, n;                /* replication index, tenants */
    engine_t *eng;
    cloud_t *cloud;            /* NULL when no tenant uses the cloud */
    tally_t *tally;            /* borrowed */
    trace_t *trace;            /* borrowed; NULL = no trace */
    struct edge_tenant *et;    /* [n], sim/entity/edge.h; edge side only */
    struct ctenant *ct;        /* [n], sim/entity/ctenant.h; cloud side only */
    /* [n]: the body of the prompt on tenant i's uplink, written by its
     * sender, copied out by its receiver (sim/entity/msg.h). */
    struct msg_prompt *prompt_box;
    struct msg_resync *resync_box;   /* [n]: protocol.fallback's (msg.h) */
    double *cum;               /* every tenant's draft-time buffer (edge) */
    /* [n]: every tenant's device temperature and throttling level
     * (sim/model/thermal.h; cfg NULL for a device without a thermal
     * model), or NULL when no device has one (edge.c). */
    struct thermal *thermal;
    /* Edge side, per group: draft time by context, filled on first use
     * (the service model is pure, so its answers can be kept; contexts
     * beyond REPL_MEMO_MAX are computed each time to bound memory). */
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
    int draft_timers;          /* EV_DRAFT is an engine timer, slot = tenant
                                  (world.c): a draft abandoned cancels it */
    uint64_t waiting;          /* arrivals waiting for their tenant, all
                                  tenants (sim/run/guard.h bounds it) */
} repl_t;

/* Makes direction dir (0 up, 1 down) of tenant i's link vary as its
 * group g's network section says (a no-op for a link that does not vary),
 * in replication rep of a run seeded seed. The edge's uplink and the
 * cloud's downlink get the same description, so both directions replay
 * the same moments. 0, or -1 with err. */
static inline int repl_link_vary(const repl_group_t *g, uint64_t seed, int rep, int i,
                                 int dir, network_link_t *l, err_t *err)
{
    const network_cfg_t *n = &g->cfg->network;
    if (!network_cfg_varies(n)) return 0;
    network_vary_t v = {.dir = dir, .trace = g->link_trace, .opp = g->link_opp[dir],
                        .random_offset = !n->has_trace_stride, .stride = n->trace_stride,
                        .states = n->states, .nstates = n->nstates,
                        .mean_up = n->mean_up, .mean_down = n->mean_down};
    return network_link_vary(l, &v, seed, rep, (uint64_t)i, err);
}

static inline int repl_fail(repl_t *r, const char *what)
{
    return err_set(r->err, ERR_RUNTIME, "simulation: %s", what);
}

/* The message of every failed engine_schedule. */
#define REPL_SCHED_FAIL "event queue: out of memory or a non-finite time"

/* The group of tenant i: groups hold consecutive tenants in scenario
 * order, so a binary search over their first tenants (set-up only). */
static inline int repl_group_of(const repl_t *r, int i)
{
    int lo = 0, hi = r->s->ngroups - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo + 1) / 2;
        if (r->sh->groups[mid].first <= i) lo = mid;
        else hi = mid - 1;
    }
    return lo;
}

/* Tenant i's protocol settings (protocol, gamma, window, gamma policy):
 * its group's. Tenants copy what they need at set-up. */
static inline const protocol_cfg_t *repl_protocol(const repl_t *r, int i)
{
    return r->sh->groups[repl_group_of(r, i)].protocol;
}

static inline void repl_trace(repl_t *r, int i, const char *ev, long block,
                              long tokens)
{
    if (r->trace) trace_event(r->trace, engine_now(r->eng), i, ev, block, tokens);
}

#endif
