/* proto — a speculative-decoding protocol as a table of operations, and the
 * registry that maps `protocol.mode` names to tables.
 *
 * A protocol decides what happens next; the mechanics it calls live in the
 * modules below it: sim/entity/edge.c (the edge's drafting, commits, stalls,
 * request life cycle and messages up) and sim/entity/ctenant.c (the cloud's view of
 * a tenant: admission, verify jobs, verdicts and tokens down). sim/run/world.c
 * routes every event to the table of the tenant it concerns, so tenants of
 * one run may follow different protocols. docs/design.md states each
 * protocol's semantics.
 *
 * Adding a protocol: one file sim/proto_NAME.c that defines
 * `const proto_ops_t proto_NAME`, and one X(NAME) entry in PROTO_REGISTRY
 * (sim/entity/proto.c). Nothing else names protocols.
 */
#ifndef SPECSIM_PROTO_H
#define SPECSIM_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "model/gamma.h"   /* GAMMA_MAX, gamma_rate_fn */

struct repl;
struct cloud_job;

typedef struct proto_ops {
    const char *name;          /* the protocol.mode value */
    /* Properties, asked instead of comparing names. */
    int drafts;                /* the edge runs the draft model (prefill and
                                  drafting): needs the edge service model */
    int verifies;              /* drafts travel in blocks the cloud verifies:
                                  uses gamma, gamma_policy and acceptance */
    int uses_cloud;            /* requests visit the cloud at all */
    int uses_window;           /* several blocks may be in flight */
    /* What an adaptive speculation-length policy maximises: one tenant's
     * closed-form tokens per second for blocks of gamma >= 1 (see
     * gamma_rate_fn), built on sim/model/specrate.h; the edge hands it to
     * the tenant's policy (gamma_env_t.rate). NULL when the protocol has
     * none: a policy that uses_rate is then refused with it. */
    gamma_rate_fn *block_rate;
    /* Operations on tenant i; each returns 0, or -1 with r->err filled.
     * An operation a protocol can never receive is NULL. */
    /* The request's first token is committed and more are wanted. */
    int (*first_token)(struct repl *r, int i);
    /* The draft in progress (a block, or one token) is finished. */
    int (*draft_done)(struct repl *r, int i);
    /* A block message (sim/entity/msg.h) reaches the cloud at now. */
    int (*block_at_cloud)(struct repl *r, int i, uint64_t msg, double now);
    /* A verdict message reaches the edge. */
    int (*verdict_at_edge)(struct repl *r, int i, uint64_t msg);
    /* The cloud finished (a chunk of) one of the tenant's jobs at now. */
    int (*job_done)(struct repl *r, const struct cloud_job *job, double now);
} proto_ops_t;

/* The protocol registered under name, or NULL. */
const proto_ops_t *proto_find(const char *name);
/* Writes up to max registered names, in registry order, into out; returns
 * how many there are (for the loader's list and its "did you mean"). */
size_t proto_names(const char **out, size_t max);
/* The protocol of a scenario that names none (protocol.mode's default). */
const proto_ops_t *proto_default(void);

#endif
