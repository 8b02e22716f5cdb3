/* build — the one construction path from a scenario's description
 * (sim/desc/scenario.h) to what its replications share: each tenant group's
 * draft service model, each replica group's service model and KV sizing,
 * and the request trace. A build_t owns every one of them.
 *
 * The checks that need these objects run here too, in this order: the
 * request trace loads, the link traces load (and the link keys that
 * exclude each other are refused), the edge services build, the cloud services build
 * (tensor parallelism against the cards, the target's weights against the
 * GPUs' memory), the draft's weights and KV against the edge device's
 * memory, a replica's KV cache against the longest request.
 *
 * The loader (sim/config/scenario_check.c) builds while the YAML is at hand and
 * passes a build_where_t, so that every error names the key as written at
 * FILE:LINE:COL; sim_run builds for a scenario made in code, and its errors
 * then name the key alone.
 */
#ifndef SPECSIM_BUILD_H
#define SPECSIM_BUILD_H

#include <stddef.h>

#include "base/err.h"
#include "desc/scenario.h"
#include "model/linktrace.h"
#include "model/service.h"
#include "model/workload_trace.h"

struct infiles;

/* Where a key was written, for errors. Keys are given canonically:
 * tenants.groups.G.SUB for tenant group G's per-tenant key SUB,
 * cloud.replica_groups.K.SUB for replica group K's, cloud.SUB for a cloud
 * without groups. */
typedef struct build_where {
    void *ctx;
    /* The key that set canonical `key`, as the file wrote it: the group's
     * own, or the section's that the group inherits. */
    void (*key)(void *ctx, const char *key, char *out, size_t outsz);
    /* Rewrites err (code ERR_INPUT, message set) as "WHERE: KEY: message"
     * at `key` (as key() returned it). Returns -1. */
    int (*blame)(void *ctx, const char *key, err_t *err);
} build_where_t;

/* Tenant group g's link traces (tenants.network.trace, uplink_trace,
 * downlink_trace), NULL where not given. Groups that name the same file
 * one after another (inheriting it, say) share one copy: the first owns
 * it. */
typedef struct build_link {
    linktrace_t *trace;
    linkopp_t *opp[2];         /* uplink, downlink */
    unsigned borrowed;         /* bit 0 trace, 1 opp[0], 2 opp[1]: another
                                  group's, not freed with this one */
} build_link_t;

/* Replica group k's service and KV sizing. */
typedef struct build_replica {
    service_t *sv;             /* NULL: the verify time is given and KV is
                                  not limited */
    double kv_capacity;        /* bytes per replica; INFINITY = unlimited */
    double kv_bytes_per_token; /* 0 without sv */
    service_t *dsv;            /* cloud-spec's draft model on this group's
                                  GPU (cloud.draft), NULL when no tenant
                                  drafts on the cloud or cloud.draft_time
                                  or cloud.draft_heads is given */
    service_heads_t heads;     /* or its draft heads (cloud.draft_heads), */
    int has_heads;             /* when set */
} build_replica_t;

typedef struct build {
    service_t **edge;          /* per tenant group: its draft model's
                                  service, NULL when its draft time is
                                  given and it prefills no prompt */
    int ngroups;
    build_replica_t *replica;  /* per replica group (scenario_replica_groups) */
    int nreplica;
    workload_trace_t *arrivals;/* the request trace of the groups with
                                  arrival: trace, or NULL */
    build_link_t *link;        /* per tenant group */
} build_t;

/* Builds what s's replications share. files: the set the scenario's other
 * inputs were read through (sim/io/infile.h), so that every file is read
 * once per command; NULL reads them directly. where: NULL for a scenario
 * built in code. Returns the build (the caller frees it with build_free),
 * or NULL with err filled (ERR_INPUT for an input that cannot be built). */
build_t *build_create(const scenario_t *s, struct infiles *files,
                      const build_where_t *where, err_t *err);
void build_free(build_t *b);

#endif
