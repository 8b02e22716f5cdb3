/* world — one replication's entities on one engine: the tenants (edge,
 * network, workload), the cloud, the tallies and the trace. Built from a
 * scenario plus what every replication shares (service models, KV sizing),
 * run to the scenario's duration, then freed. No globals: several worlds may
 * run on different threads at once.
 */
#ifndef SPECSIM_WORLD_H
#define SPECSIM_WORLD_H

#include "cloud.h"
#include "edge.h"
#include "engine.h"
#include "scenario.h"
#include "service.h"
#include "tally.h"
#include "trace.h"

enum world_event {
    EV_ARRIVE = 0,   /* a = tenant: request arrival / closed-loop start */
    EV_EDGE_PREFILL, /* a = tenant, b = request serial */
    EV_DRAFT,        /* a = tenant, b = draft generation */
    EV_UP,           /* a = tenant, b = message (edge -> cloud) */
    EV_DOWN,         /* a = tenant, b = message (cloud -> edge) */
    EV_ITER_END,     /* a = replica (cloud) */
    EV_KICK          /* a = replica (cloud) */
};

#define WORLD_MEMO_MAX 65536

/* Per tenant group, precomputed for the hot path. */
typedef struct world_group {
    service_t *edge_sv;    /* NULL when draft and prefill times are given */
    int draft_kind;        /* 0 constant, 1 distribution, 2 service model */
    double draft_const;
    double bytes_per_token, overhead_bytes;
} world_group_t;

/* What every replication shares; built once per sim_run, read-only. */
typedef struct world_shared {
    const scenario_t *s;
    world_group_t *groups;     /* s->ngroups */
    service_t *cloud_sv;       /* NULL when verify_time is given */
    double kv_bytes_per_token; /* 0 when KV is not limited */
    double kv_capacity;        /* per replica; INFINITY = unlimited */
} world_shared_t;

typedef struct world {
    const scenario_t *s;
    const world_shared_t *sh;
    int rep, mode, gamma, window, n;
    engine_t *eng;
    cloud_t *cloud;            /* NULL for edge-only */
    tally_t *tally;            /* borrowed */
    trace_t *trace;            /* borrowed; NULL = no trace */
    tenant_t *t;
    double *cum;               /* n * gamma */
    /* Per group: draft time by context, filled on first use (the service
     * model is pure, so its answers can be kept; contexts beyond
     * WORLD_MEMO_MAX are computed each time to bound memory). */
    double **draft_memo;
    int *draft_memo_n;
    err_t *err;                /* where handlers report failures */
} world_t;

/* Builds replication `rep`. tally (reset by the caller) and trace are
 * borrowed. Returns NULL with err filled; free with world_free(). */
world_t *world_create(const world_shared_t *sh, int rep, tally_t *tally,
                      trace_t *trace, err_t *err);
/* Runs to s->duration and closes the books. Returns 0 or -1 with err. */
int world_run(world_t *w);
uint64_t world_events(const world_t *w);
void world_free(world_t *w);

#endif
