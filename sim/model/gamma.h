/* gamma — speculation-length policies: before each block, the protocol asks
 * the tenant's policy how many tokens (gamma) to draft. Every consumer
 * follows the block's own gamma (the block and verdict messages carry it),
 * so a policy may vary it per tenant and per block within [0, its limit]:
 * gamma 0 is a block of no drafts, plain remote decoding (the cloud decodes
 * one token; sim/entity/proto_sync.c, sim/entity/proto_async.c).
 *
 * A policy is a table of operations with per-tenant state held in place in
 * the tenant (gamma_state_t); a policy that keeps state of its own
 * allocates it once per tenant in init (never per block).
 * Adding a policy: one file sim/model/gamma_NAME.c that defines
 * `const gamma_ops_t gamma_NAME`, and one X(NAME) entry in GAMMA_REGISTRY
 * (sim/model/gamma.c). The scenario names it in protocol.gamma_policy.
 */
#ifndef SPECSIM_GAMMA_H
#define SPECSIM_GAMMA_H

#include <stddef.h>

/* The one limit on a block's draft length: protocol.gamma, what any
 * speculation-length policy returns, and the message fields that carry a
 * block's gamma (sim/entity/msg.h) all follow it. */
#define GAMMA_MAX 1024

/* One tenant's closed-form tokens per second under its protocol, for iid
 * acceptance alpha per draft, blocks of gamma >= 1 drafts of d seconds
 * each, a round trip of rtt seconds from a block's send to its verdict
 * (links, queueing and verification together) and at most window blocks
 * in flight. The protocol supplies it (sim/entity/proto.h,
 * proto_ops_t.block_rate) when the tenant is set up, so that a policy
 * maximises the rate of whatever protocol it serves without knowing
 * protocols. */
typedef double gamma_rate_fn(double alpha, int gamma, double d, double rtt, int window);

/* What the scenario tells a tenant's policy before it starts (what a
 * deployment would configure on the device). */
typedef struct gamma_env {
    double alpha_prior;  /* the group's mean acceptance per draft from the
                          * scenario; NAN when unknown */
    gamma_rate_fn *rate; /* the tenant's protocol's rate; NULL when it has
                          * none (a policy that uses_rate then refuses) */
    int window;          /* the most blocks in flight (>= 1), passed to rate */
} gamma_env_t;

/* One tenant's policy state, in place. */
typedef struct gamma_state {
    int gamma;        /* the tenant's protocol.gamma */
    int limit;        /* the most the policy returns (set by init) */
    gamma_env_t env;  /* set before init */
    void *priv;       /* the policy's own state: init allocates it, fini
                       * frees it; NULL for a stateless policy */
} gamma_state_t;

typedef struct gamma_ops {
    const char *name;  /* the protocol.gamma_policy value */
    int uses_rate;     /* evaluates gamma_env_t.rate: a protocol without
                        * one cannot run the policy (the loader refuses) */
    /* The largest gamma the policy returns for protocol.gamma = gamma; it
     * sizes what must hold any block (KV reservation, draft buffer). Must
     * be within [1, GAMMA_MAX] for gamma within that range. */
    int (*limit)(int gamma);
    /* Sets up st for tenant `tenant` (st is zeroed by the caller; limit and
     * gamma are filled before the call). Returns 0 or -1. */
    int (*init)(gamma_state_t *st, int tenant);
    /* Releases what init took; NULL when there is nothing. */
    void (*fini)(gamma_state_t *st);
    /* The gamma of the tenant's next block, started at now: in [0, limit].
     * NULL = always st->gamma (saves a call per block). */
    int (*next)(gamma_state_t *st, int tenant, double now);
    /* What the edge device observes when a verdict arrives at now: the
     * block's gamma, its accepted drafts, and when the block was sent (so
     * now - sent is the block's round trip: uplink, queueing, verification,
     * downlink). Called for every verdict of the current epoch, in the
     * order the blocks were sent. NULL when the policy does not adapt (then
     * nothing is recorded). */
    void (*on_verdict)(gamma_state_t *st, int tenant, int gamma, int accepted,
                       double sent, double now);
    /* What the edge device observes when it sends a block at now: it drafted
     * gamma tokens from start on (its own draft time, prefill included for
     * a request's first block). NULL when not needed. */
    void (*on_sent)(gamma_state_t *st, int tenant, int gamma, double start,
                    double now);
} gamma_ops_t;

/* Policy pol's next gamma for the tenant (see gamma_ops_t.next). */
static inline int gamma_next(const gamma_ops_t *pol, gamma_state_t *st,
                             int tenant, double now)
{
    return pol->next ? pol->next(st, tenant, now) : st->gamma;
}

/* The policy registered under name, or NULL. */
const gamma_ops_t *gamma_find(const char *name);
/* Writes up to max registered names into out; returns how many exist. */
size_t gamma_names(const char **out, size_t max);
/* The policy of a scenario that names none (protocol.gamma_policy's
 * default): `fixed`. */
const gamma_ops_t *gamma_default(void);

/* Fills st for a tenant with protocol.gamma = gamma and runs pol->init.
 * Returns 0, or -1 when pol->limit(gamma) is outside [1, GAMMA_MAX], the
 * policy uses_rate and the env gives none, or init fails. Undo with
 * gamma_state_fini(). */
int gamma_state_init(gamma_state_t *st, const gamma_ops_t *pol, int gamma,
                     int tenant);
/* The same with what the scenario tells the policy (env NULL: nothing:
 * prior NAN, no rate, window 1). */
int gamma_state_init_env(gamma_state_t *st, const gamma_ops_t *pol, int gamma,
                         int tenant, const gamma_env_t *env);
void gamma_state_fini(gamma_state_t *st, const gamma_ops_t *pol);

#endif
