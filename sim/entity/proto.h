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
 * Adding a protocol: one file sim/entity/proto_NAME.c that defines
 * `const proto_ops_t proto_NAME` (its operations, and what others ask of
 * it: its closed form for specsim analytic and its rate for the adaptive
 * speculation-length policies, or NULL for none), and one X(NAME) entry in
 * PROTO_REGISTRY (sim/entity/proto.c). Nothing else names protocols.
 */
#ifndef SPECSIM_PROTO_H
#define SPECSIM_PROTO_H

#include <stddef.h>
#include <stdint.h>

#include "desc/scenario.h"
#include "model/accept.h"  /* accept_law_t */
#include "model/gamma.h"   /* GAMMA_MAX, gamma_rate_fn */

struct repl;
struct cloud_job;

/* What a protocol's closed form is computed from: one tenant alone (no
 * queueing behind others) at mean times; sim/run/analytic.c fills it from
 * the scenario. A message of k tokens takes overhead_bytes + k ·
 * bytes_per_token to serialise at its link's rate (specrate_link_s). */
typedef struct proto_form_in {
    const accept_law_t *law;   /* a block's accepted drafts for gamma
                                  (accept_cfg_law) */
    int gamma, window;         /* window >= 1 */
    double draft_s;            /* one drafted token */
    double block_draft_s;      /* drafting one block: gamma·draft_s for a
                                  chain, one step per level for a tree */
    double cloud_block_draft_s; /* the same on the cloud: gamma·cloud_draft_s,
                                  or a tree's levels (NAN: no cloud draft) */
    const struct tree *tree;   /* protocol.tree (law is then its law, gamma
                                  its nodes); NULL: a chain. Only protocols
                                  with `trees` are asked then */
    double verify_s;           /* one verify of gamma + 1 tokens, batch of 1 */
    double decode_s;           /* one cloud decode iteration of one token */
    double cloud_draft_s;      /* one draft step of one token on the cloud
                                  (cloud.draft_time, .draft_heads or
                                  .draft); NAN when the scenario describes
                                  no cloud draft */
    double up_prop_s, down_prop_s;  /* propagation: half the rtt plus the
                                       mean jitter of that direction */
    double up_bps, down_bps;   /* link rates (inf: no serialisation) */
    double bytes_per_token, overhead_bytes;
} proto_form_in_t;

/* The most figures a closed form lists besides its throughput. */
#define PROTO_FIGS_MAX 4

/* A protocol's closed form. specsim analytic prints figs in order, then
 * tok_s as throughput_NAME_tok_s (NAME with '-' as '_'); users' scripts
 * read those keys, so they never change. */
typedef struct proto_form {
    double tok_s;              /* one tenant's tokens per second */
    /* > 0 when a tenant alternates a delay of cycle_s − verify_s away from
     * the cloud with one verify of verify_s, committing cycle_tokens on
     * average: the closed network analytic_mva solves for several tenants
     * on one server. 0 otherwise. */
    double cycle_s, cycle_tokens;
    int nfigs;
    struct { const char *key; double v; } figs[PROTO_FIGS_MAX];
} proto_form_t;

typedef struct proto_ops {
    const char *name;          /* the protocol.mode value */
    /* Properties, asked instead of comparing names. */
    int drafts;                /* the edge runs the draft model (prefill and
                                  drafting): needs the edge service model */
    int verifies;              /* drafts travel in blocks the cloud verifies:
                                  uses gamma, gamma_policy and acceptance */
    int uses_cloud;            /* requests visit the cloud at all */
    int uses_window;           /* several blocks may be in flight */
    int cloud_drafts;          /* the cloud drafts next to the target (draft
                                  steps are cloud jobs): needs cloud.draft
                                  or cloud.draft_time */
    int trees;                 /* its blocks may be token trees
                                  (protocol.tree, sim/model/tree.h) */
    /* What an adaptive speculation-length policy maximises: one tenant's
     * closed-form tokens per second for blocks of gamma >= 1 (see
     * gamma_rate_fn), built on sim/model/specrate.h; the edge hands it to
     * the tenant's policy (gamma_env_t.rate). NULL when the protocol has
     * none: a policy that uses_rate is then refused with it. */
    gamma_rate_fn *block_rate;
    /* Fills *out from *in (out zeroed by the caller); 0, -1 when out of
     * memory, or 1 when *in lacks what it needs (cloud-spec without a
     * cloud draft): specsim analytic then prints nothing for it. NULL when
     * the protocol has no closed form at all. */
    int (*closed_form)(const proto_form_in_t *in, proto_form_t *out);
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

/* Fills out for a protocol whose blocks take `block` seconds one after
 * another and commit E tokens on average: tok_s = E / block and the
 * figures block_key = block, itl_key = block / E (a closed form's common
 * case). */
void proto_form_blocks(proto_form_t *out, double E, double block, const char *block_key,
                       const char *itl_key);

/* The protocol registered under name, or NULL. */
const proto_ops_t *proto_find(const char *name);
/* The i-th registered protocol in registry order, NULL from the count on:
 * for walking the registry. */
const proto_ops_t *proto_at(size_t i);
/* Writes up to max registered names, in registry order, into out; returns
 * how many there are (for the loader's list and its "did you mean"). */
size_t proto_names(const char **out, size_t max);
/* The protocol of a scenario that names none (protocol.mode's default). */
const proto_ops_t *proto_default(void);

/* Over a scenario's groups (sim/desc/scenario.h): 1 when some group's
 * protocol drafts on the edge / verifies drafts on the cloud / uses the
 * cloud at all / drafts on the cloud. */
int proto_any_drafts(const scenario_t *s);
int proto_any_verifies(const scenario_t *s);
int proto_any_cloud(const scenario_t *s);
int proto_any_cloud_drafts(const scenario_t *s);
/* "mixed" for a mixed scenario (scenario_mixed), else protocol.mode. */
const char *proto_mode_name(const scenario_t *s);

#endif
