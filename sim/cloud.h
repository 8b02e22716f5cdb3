/* cloud — the verification cluster (DESIGN §2 "Cloud"): R replicas, each
 * running one iteration at a time over a FIFO job queue.
 *
 * Batching: `continuous` starts an iteration whenever the replica is idle and
 * has queued jobs (the start is deferred by a zero-delay kick event so that
 * jobs arriving at the same instant share the batch); `window` waits until
 * max_batch jobs are queued or max_wait has passed since the oldest arrived.
 * A batch takes up to max_batch jobs FCFS within max_tokens: prefill jobs are
 * chunked to fit (Sarathi-style) and stay at their place in the queue until
 * their last chunk; verify and decode jobs never split, and one that does not
 * fit waits. A tenant's jobs are taken in order, and a job that waits keeps
 * the tenant's later jobs waiting too. One job per tenant enters a batch,
 * except with batching.multi_block: then a tenant's queued verify blocks of
 * one epoch may enter together (async pipelining: the target verifies block
 * k and k+1 in one forward pass), each still one job of its own tokens
 * towards max_batch and max_tokens. The callbacks see them in order, so the
 * model can find block k+1 stale when block k is rejected. Iteration time:
 * cloud.verify_time when given, else service_iter_time over the batch's
 * (tokens, context) jobs.
 *
 * KV capacity per replica is reserved per request at admission; requests
 * that do not fit wait FIFO. A request larger than the whole capacity is
 * admitted only when its replica holds no other reservation (so the run does
 * not deadlock; the capacity is then over-committed by that one request).
 *
 * The cloud knows jobs, not protocols: the model hears about finished work
 * through cloud_cb_t and decides staleness, verdicts and purges.
 */
#ifndef SPECSIM_CLOUD_H
#define SPECSIM_CLOUD_H

#include <stdint.h>

#include "engine.h"
#include "err.h"
#include "scenario.h"
#include "service.h"
#include "tally.h"
#include "trace.h"

enum cloud_job_kind { CLOUD_PREFILL = 0, CLOUD_VERIFY, CLOUD_DECODE };

typedef struct cloud_job {
    int tenant;
    int kind;          /* enum cloud_job_kind */
    int tokens;        /* prefill: tokens still to process; else the job's */
    int context;       /* KV tokens cached before this job's tokens */
    uint32_t epoch;    /* model tags, carried untouched */
    uint32_t block;
    double arrive;     /* entered the queue */
    int started;       /* has been in an iteration */
    int prev, next;    /* replica queue links, -1 = none */
    int tnext;         /* next queued job of the same tenant, -1 = none */
} cloud_job_t;

typedef struct cloud_cb {
    void *ctx;
    /* Work on `job` in the iteration that ended at now: `done` tokens were
     * processed; for a prefill, job->tokens is what remains (0 = finished).
     * Called in batch order; may submit, purge, release and reserve. */
    int (*job_done)(void *ctx, const cloud_job_t *job, int done, double now);
    /* A request that waited for KV admission on `replica` got in at now. */
    int (*admitted)(void *ctx, int tenant, int replica, double now);
} cloud_cb_t;

typedef struct cloud cloud_t;

/* Creates the cluster. cfg and sv (NULL when cfg->has_verify_time) are
 * borrowed. kv_capacity: bytes per replica (INFINITY = unlimited). Event
 * types ev_iter and ev_kick are registered on eng. Iteration-time draws use
 * rng_stream(seed, rep, 2^32 + replica, RNG_VERIFY_TIME). tally and trace
 * (NULL = none) are borrowed. Returns NULL with err on failure; free with
 * cloud_free(). */
cloud_t *cloud_create(const cloud_cfg_t *cfg, int ntenants,
                      const service_t *sv, double kv_capacity, engine_t *eng,
                      uint32_t ev_iter, uint32_t ev_kick, const cloud_cb_t *cb,
                      tally_t *tally, trace_t *trace, uint64_t seed, int rep,
                      err_t *err);
void cloud_free(cloud_t *c);

/* Picks the replica for a new request (round-robin, or least-loaded: fewest
 * pinned requests, ties to the lowest index) and counts it pinned. */
int cloud_pin(cloud_t *c);
void cloud_unpin(cloud_t *c, int replica);

/* Reserves `bytes` of KV for tenant's request: returns 1 if admitted now,
 * 0 if it waits (cb.admitted fires later). */
int cloud_reserve(cloud_t *c, int replica, int tenant, double bytes);
/* Returns a reservation; admits waiting requests that now fit (through
 * cb.admitted). Returns 0, or -1 when a callback failed. */
int cloud_release(cloud_t *c, int replica, double bytes, double now);

/* Queues a job (fields tenant, kind, tokens, context, epoch, block; arrive is
 * set to now). Returns 0, or -1 on allocation/scheduling failure. */
int cloud_submit(cloud_t *c, int replica, const cloud_job_t *job, double now);
/* Removes tenant's queued verify jobs (stale after a rollback); returns how
 * many. Jobs already in a running iteration are not touched. */
int cloud_purge(cloud_t *c, int replica, int tenant, double now);

/* Closes the books at `end`: busy time of running iterations and the
 * waiting-jobs integral (tally). */
void cloud_finish(cloud_t *c, double end);

/* For tests: jobs queued on a replica, and whether it is mid-iteration. */
int cloud_queued(const cloud_t *c, int replica);
int cloud_busy(const cloud_t *c, int replica);

#endif
