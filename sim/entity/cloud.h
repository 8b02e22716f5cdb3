/* cloud — the verification cluster (docs/design.md, "Cloud"): R replicas,
 * each running one iteration at a time over a FIFO job queue (jobs:
 * sim/model/cloud_job.h). Replicas come in groups (cloud.replica_groups): each
 * replica points at its group's service model, verify time, KV capacity
 * and ordering state, resolved once at creation.
 *
 * Ordering: `cloud.batching.order` (sim/model/order.h, per replica group) ranks
 * the queued jobs a pick visits; its state (fair's counters) is the replica
 * group's, fed as jobs enter, are taken and leave its replicas.
 *
 * Batching: the replica's batching policy (sim/model/batch.h: `continuous`,
 * `window`, ...) says when an idle replica with queued jobs starts an
 * iteration and picks its jobs within max_batch and max_tokens (prefill
 * chunking, one job per tenant unless batching.multi_block, a tenant's
 * waiting job holding its later ones: see sim/model/batch.h). This module runs the
 * mechanics around it: every start goes through a zero-delay kick event, so
 * that jobs arriving at the same instant share the batch, and a policy that
 * wants to look again later (the window's max_wait) gets a timer. The
 * callbacks see a batch's jobs in pick order, so the model can find block
 * k+1 stale when block k is rejected. Iteration time: cloud.verify_time when
 * given, else service_iter_time over the batch's (tokens, context) jobs;
 * plus, when the batch holds draft steps (CLOUD_DRAFT, cloud-side
 * speculation), the draft's pass over them: cloud_group_t.draft_time, the
 * draft heads' step, or service_iter_time of the draft model. An iteration
 * of draft steps alone costs only the draft's pass.
 *
 * KV capacity per replica is reserved per request at admission; requests
 * that do not fit wait FIFO (evicting cached prefixes first, with
 * cloud.prefix_cache lru). A request larger than the whole capacity is
 * admitted only when its replica holds no other reservation (so the run does
 * not deadlock; the capacity is then over-committed by that one request).
 *
 * The cloud knows jobs, not protocols: the model hears about finished work
 * through cloud_cb_t and decides staleness, verdicts and purges.
 */
#ifndef SPECSIM_CLOUD_H
#define SPECSIM_CLOUD_H

#include <stdint.h>

#include "model/cloud_job.h"
#include "engine/engine.h"
#include "base/err.h"
#include "desc/scenario.h"
#include "model/service.h"
#include "stat/tally.h"
#include "io/trace.h"

typedef struct cloud_cb {
    void *ctx;
    /* Work on `job` in the iteration that ended at now; for a prefill,
     * job->tokens is what remains (0 = finished), so the chunk just done
     * is the drop since the last call. Called in batch order; may submit,
     * purge, release and reserve. */
    int (*job_done)(void *ctx, const cloud_job_t *job, double now);
    /* A request that waited for KV admission on `replica` got in at now. */
    int (*admitted)(void *ctx, int tenant, int replica, double now);
    /* Optional (NULL: cloud.verify_time or the service model): the time of
     * the iteration of `replica` over these jobs that starts now, for a
     * driver that really runs it (the testbed's real verification,
     * testbed/realverify.h). A negative value or NaN fails the run;
     * INFINITY means the driver runs it elsewhere and ends it itself with
     * cloud_iteration_end when it is done. */
    double (*iter_time)(void *ctx, int replica, const service_job_t *jobs, int njobs);
} cloud_cb_t;

typedef struct cloud cloud_t;

/* One group of identical replicas as the cloud runs it (a replica group,
 * sim/desc/scenario.h; a cloud without groups is one group of cfg->replicas).
 * Replicas are numbered group after group. Pointers are borrowed. */
typedef struct cloud_group {
    int count;                   /* replicas, >= 1 */
    const service_t *sv;         /* NULL when verify_time is given (and KV
                                    is unlimited) */
    const dist_t *verify_time;   /* every iteration takes it; NULL = sv */
    double kv_capacity;          /* bytes per replica; INFINITY = unlimited */
    double kv_bytes_per_token;   /* a request's KV per token; 0 = none kept */
    const struct order_ops *order; /* batching.order; NULL = fcfs */
    double ref_time;             /* s, its reference iteration (routing
                                    weight: cloud_ref_time), > 0 */
    /* What a draft step (CLOUD_DRAFT job) costs: draft_time when given,
     * else the draft heads dheads or the draft model dsv on this group's
     * GPU; all NULL when no tenant drafts on the cloud. */
    const service_t *dsv;
    const service_heads_t *dheads;
    const dist_t *draft_time;
    double noise_cv;             /* drift.cloud: each modelled iteration's
                                    time times a mean-1 factor of this CV
                                    (sim/model/drift.h); 0 = none */
} cloud_group_t;

/* Creates the cluster: ngroups groups of replicas (cfg->replicas is not
 * read). cfg and groups are borrowed. Event types ev_iter and ev_kick are
 * registered on eng. Iteration-time draws use rng_stream(seed, rep,
 * 2^32 + replica, RNG_VERIFY_TIME), drift factors the same with RNG_DRIFT.
 * tally and trace (NULL = none) are
 * borrowed. Returns NULL with err on failure; free with cloud_free(). */
cloud_t *cloud_create_groups(const cloud_cfg_t *cfg, int ntenants,
                             const cloud_group_t *groups, int ngroups, engine_t *eng,
                             uint32_t ev_iter, uint32_t ev_kick, const cloud_cb_t *cb,
                             tally_t *tally, trace_t *trace, uint64_t seed, int rep,
                             err_t *err);
/* One group of cfg->replicas with cfg's verify time and ordering, sv
 * (NULL when cfg->has_verify_time) and kv_capacity bytes per replica
 * (INFINITY = unlimited). */
cloud_t *cloud_create(const cloud_cfg_t *cfg, int ntenants,
                      const service_t *sv, double kv_capacity, engine_t *eng,
                      uint32_t ev_iter, uint32_t ev_kick, const cloud_cb_t *cb,
                      tally_t *tally, trace_t *trace, uint64_t seed, int rep,
                      err_t *err);
void cloud_free(cloud_t *c);

/* The reference iteration a replica group's routing weight comes from: the
 * mean of verify_time when it is given (non-NULL), else sv's reference
 * batch (service_ref_time). A replica's speed is 1 / this. */
double cloud_ref_time(const service_t *sv, const dist_t *verify_time);

/* Picks the replica for a new request and counts it pinned.
 * round-robin: in turn, whatever the speeds; least-loaded: the least
 * load; power-of-two: the less loaded of two distinct replicas drawn
 * uniformly from the stream rng_stream(seed, rep, 2^33, RNG_PIN); ties to
 * the lower index. A replica's load is its count of pinned requests; with
 * groups of different reference times it is weighted by speed: (pinned + 1)
 * × ref_time, the reference-iteration time the replica would carry with
 * the new request, so that a group twice as fast takes twice the requests. */
int cloud_pin(cloud_t *c);
void cloud_unpin(cloud_t *c, int replica);
/* Counts a request pinned to `replica` without choosing: a session turn
 * whose cached prefix lives there (cloud_cache_replica). */
void cloud_pin_to(cloud_t *c, int replica);

/* Reserves `bytes` of KV for tenant's request: returns 1 if admitted now,
 * 0 if it waits (cb.admitted fires later). */
int cloud_reserve(cloud_t *c, int replica, int tenant, double bytes);
/* Returns a reservation; admits waiting requests that now fit (through
 * cb.admitted). Returns 0, or -1 when a callback failed. */
int cloud_release(cloud_t *c, int replica, double bytes, double now);

/* Prefix cache (cloud.prefix_cache lru; docs/design.md "Sessions"). A
 * tenant has at most one cached prefix, on one replica. cloud_cache_put
 * turns `bytes` of tenant's reservation on replica into its cached prefix
 * (kv_used does not change; it becomes the replica's most recently used).
 * Admission (cloud_reserve, cloud_release) evicts least recently used
 * prefixes when, and only when, that makes room for the request at the
 * head. cloud_cache_replica: the replica holding tenant's prefix, -1 when
 * none (evicted, dropped, or the cache is off). cloud_cache_take: takes it
 * back into a request of tenant (its bytes stay reserved, now the
 * request's) and returns its bytes (0: none). cloud_cache_drop: releases it
 * (admitting waiters); 0, or -1 when a callback failed.
 * cloud_cache_evictions: prefixes evicted so far; cloud_kv_used: a
 * replica's reserved bytes, cached prefixes included (for tests). */
void cloud_cache_put(cloud_t *c, int replica, int tenant, double bytes);
int cloud_cache_replica(const cloud_t *c, int tenant);
double cloud_cache_take(cloud_t *c, int tenant);
int cloud_cache_drop(cloud_t *c, int tenant, double now);
long cloud_cache_evictions(const cloud_t *c);
double cloud_kv_used(const cloud_t *c, int replica);

/* Queues a job (fields tenant, kind, tokens, context, epoch, block; arrive is
 * set to now). Returns 0, or -1 on allocation/scheduling failure. */
int cloud_submit(cloud_t *c, int replica, const cloud_job_t *job, double now);
/* Removes tenant's queued verify jobs (stale after a rollback); returns how
 * many. Jobs already in a running iteration are not touched. */
int cloud_purge(cloud_t *c, int replica, int tenant, double now);

/* Ends the running iteration of `replica` at now, for a driver whose
 * iter_time callback returned INFINITY: what the iteration's end event does
 * otherwise (jobs done, next batch kicked). 0, or -1 when a callback
 * failed or the replica runs no iteration. */
int cloud_iteration_end(cloud_t *c, int replica, double now);
/* Closes the books at `end`: busy time of running iterations and the
 * waiting-jobs integral (tally). */
void cloud_finish(cloud_t *c, double end);

/* A request's KV bytes per token on replica (its group's model; 0 when
 * KV is not kept). */
double cloud_kv_bytes_per_token(const cloud_t *c, int replica);

/* For tests: jobs queued on a replica, whether it is mid-iteration, and
 * how many requests are pinned to it. */
int cloud_queued(const cloud_t *c, int replica);
int cloud_busy(const cloud_t *c, int replica);
int cloud_pinned(const cloud_t *c, int replica);

/* Replica `replica`'s whole KV capacity in bytes (INFINITY: unlimited). */
double cloud_kv_capacity(const cloud_t *c, int replica);

#endif
