/* scenario — the plain description of a scenario: what the user asked
 * for, every default filled in, validated (the loader, sim/config/scenario.h,
 * fills it from YAML; code may fill it too), and the queries over it that
 * need nothing but its data.
 *
 * It holds no built objects of its own: service models, the request trace
 * and KV sizing are built from it by sim/config/build.h, and the loader keeps
 * what it built, for the commands that run it, in one owned handle
 * (scenario_t.built). Types only below the entities (sim/entity/), which
 * read their settings here; the protocol-dependent queries (does any group
 * draft, verify, use the cloud) sit with the loader, above the protocols.
 */
#ifndef SPECSIM_DESC_SCENARIO_H
#define SPECSIM_DESC_SCENARIO_H

#include "base/api.h"

#include <stdint.h>

#include "base/err.h"
#include "engine/rng.h"
#include "io/ynode.h"
#include "model/accept.h"
#include "model/batch.h"
#include "model/cards.h"
#include "model/network.h"
#include "model/tree.h"
#include "model/workload.h"

#define SCEN_PATH_MAX 512
_Static_assert(SCEN_PATH_MAX == WORKLOAD_PATH_MAX,
               "workload_cfg_t.trace is a scenario path (sim/model/workload.h)");

enum pin_policy { PIN_ROUND_ROBIN = 0, PIN_LEAST_LOADED, PIN_POWER_OF_TWO };

struct proto_ops;
struct gamma_ops;

/* protocol.fallback (docs/formats.md, docs/design.md "Fallback"): the
 * device decodes on its own, its draft model as the decoder, while its
 * link is down or, with rtt_above, after `after` blocks in a row whose
 * round trip exceeded it. All zero (mode off) unless the scenario asks. */
enum fallback_mode { FALLBACK_OFF = 0, FALLBACK_LOCAL };
typedef struct fallback_cfg {
    int mode;            /* enum fallback_mode */
    double rtt_above;    /* s; 0: outages alone */
    int after;           /* blocks in a row over rtt_above, >= 1 */
    int has_after;       /* the scenario gave `after` */
} fallback_cfg_t;

typedef struct protocol_cfg {
    const struct proto_ops *proto;        /* protocol.mode (sim/entity/proto.h) */
    int gamma;           /* draft tokens per block, in [1, GAMMA_MAX] */
    int window;          /* async: max unverified blocks in flight, >= 1 */
    const struct gamma_ops *gamma_policy; /* sim/model/gamma.h */
    fallback_cfg_t fallback;
    tree_t tree;         /* protocol.tree; tree.n 0: blocks are chains. With
                            a tree, gamma is its node count (the block's
                            drafts, sim/model/tree.h) */
} protocol_cfg_t;

typedef struct edge_cfg {
    char device_ref[SCEN_PATH_MAX]; /* card path as written (or "inline") */
    hw_card_t device;
    char draft_ref[SCEN_PATH_MAX];
    llm_card_t draft;               /* draft model */
    int quant;                      /* weight format: an index into
                                       cards_weight_format_names (below
                                       PREC_COUNT: that enum precision);
                                       default PREC_W4A16 */
    int engine;                     /* index into cards_engine_key_names:
                                       0 none, i: enum serving_engine i - 1 */
    char calibration[SCEN_PATH_MAX];/* "" = none */
    int has_draft_time;             /* draft_time given: overrides the model */
    dist_t draft_time;              /* seconds per drafted token */
    int has_prefill_time;
    dist_t prefill_time;            /* seconds for the whole prompt */
    double overhead;                /* s per draft step (model path only) */
} edge_cfg_t;

typedef struct network_cfg {
    double rtt;              /* s, base round trip (rtt/2 each way) */
    dist_t jitter;           /* s, added per message per direction; const 0 = none */
    double uplink_bps;       /* bits/s; INFINITY = unlimited */
    double downlink_bps;
    double overhead_bytes;   /* bytes per message (headers) */
    double bytes_per_token;  /* payload bytes per token id / verdict entry */
    /* A link that varies in time (docs/formats.md "tenants.network"; all
     * empty / 0: it does not). */
    char trace[SCEN_PATH_MAX];         /* link trace CSV, "" = none */
    char uplink_trace[SCEN_PATH_MAX];  /* Mahimahi files, "" = none */
    char downlink_trace[SCEN_PATH_MAX];
    int has_trace_stride;              /* trace_stride given: tenant i starts
                                          at i × stride, else at random */
    double trace_stride;               /* s */
    double mean_up, mean_down;         /* Gilbert-Elliott outages, s; 0 = none */
    int has_states;
    int nstates;                       /* Markov states, 0 = none */
    network_state_t states[NETWORK_STATES_MAX];
} network_cfg_t;

/* 1 when the group's link varies in time. */
static inline int network_cfg_varies(const network_cfg_t *n)
{
    return n->trace[0] || n->uplink_trace[0] || n->downlink_trace[0] || n->nstates > 0 ||
           (n->mean_up > 0 && n->mean_down > 0);
}


/* Service-level objectives (DistServe's): a request meets the TTFT SLO when
 * its first token reaches the edge within `ttft` of its start, the TPOT SLO
 * when (e2e - TTFT) / (output tokens - 1) <= `tpot` (a 1-token request meets
 * any). 0 = no bound; a scenario with neither has no SLO (metrics NaN). */
typedef struct slo_cfg {
    double ttft;             /* s, 0 = none */
    double tpot;             /* s per token, 0 = none */
} slo_cfg_t;

typedef struct tenant_group {
    char name[64];
    int count;               /* >= 1 */
    int priority;            /* cloud.batching.order priority: higher first
                                (tenants.groups.N.priority, default 0) */
    edge_cfg_t edge;
    network_cfg_t network;
    workload_cfg_t workload;
    slo_cfg_t slo;           /* the top-level slo: with this group's keys
                                (tenants.groups.N.slo) over it */
    unsigned slo_given;      /* bit k: the group gave SLO key k itself */
    unsigned given[3];       /* edge, network, workload: bit k set when the
                                group wrote key k of that section itself
                                (not inherited from tenants:), so that the
                                scenario is written back the same way */
    /* The group's speculation: the top-level `protocol:` and `acceptance:`
     * sections with the group's own keys over them. Read them through
     * scenario_group_protocol / scenario_group_acceptance, which fall back
     * to the scenario's for a group that holds none (a scenario built in
     * code, a group that gives no acceptance key). */
    protocol_cfg_t protocol; /* proto NULL: the scenario's */
    unsigned given_protocol; /* bit k: the group wrote protocol key k */
    accept_cfg_t acceptance; /* owned; model NULL: the scenario's */
} tenant_group_t;

/* One group of identical cloud replicas (cloud.replica_groups.N): its
 * count and the keys it may set for itself, each inherited from the
 * `cloud:` section when the group does not give it (as tenant groups
 * inherit `tenants:`). Read a group's settings as a whole cloud through
 * scenario_replica_group_view. */
/* A replica group's own batching keys: only the ordering (a group's
 * replicas share the scenario's batching policy). */
typedef struct rgroup_batching {
    const struct order_ops *order;
} rgroup_batching_t;

typedef struct replica_group {
    char name[64];
    int count;               /* replicas in the group, >= 1 */
    char gpu_ref[SCEN_PATH_MAX];
    hw_card_t gpu;
    char calibration[SCEN_PATH_MAX];
    int tensor_parallel;
    double kv_capacity_bytes;/* 0 = derive (as cloud.kv_capacity) */
    double gpu_hour_usd;
    double overhead;
    int has_verify_time;
    dist_t verify_time;      /* owned */
    rgroup_batching_t batching; /* batching.order */
    int engine;              /* as cloud.engine, for this group's gpu */
    unsigned given;          /* bit k: the group wrote key k itself */
} replica_group_t;

/* cloud.draft_heads: draft heads attached to the target (Medusa/EAGLE-like),
 * by their size (sim/model/service.h, service_heads_t); 0 = not given. */
typedef struct draft_heads_cfg {
    double params;           /* weights, stored at cloud.precision */
    double flops_per_token;  /* FLOPs per drafted token */
} draft_heads_cfg_t;

/* cloud.prefix_cache (docs/design.md "Sessions"): what a replica keeps
 * of a session turn's KV when the turn ends. none: nothing (every turn
 * prefills its whole prompt); lru: the turn's prompt and output stay as
 * the session's cached prefix, evicted least recently used when admission
 * needs room. */
enum prefix_cache_policy { PREFIX_CACHE_NONE = 0, PREFIX_CACHE_LRU };
typedef struct prefix_cache_cfg {
    int policy;              /* enum prefix_cache_policy */
} prefix_cache_cfg_t;

typedef struct cloud_cfg {
    int replicas;            /* with replica_groups: the sum of their counts */
    char gpu_ref[SCEN_PATH_MAX];
    hw_card_t gpu;
    char target_ref[SCEN_PATH_MAX];
    llm_card_t target;
    int precision;           /* weight format (as edge.quant), default PREC_FP16 */
    int engine;              /* as edge.engine: the gpu's efficiency set */
    int kv_precision;        /* the target's K,V cache: index into
                                service_kv_precision_names (0 fp16, 1 fp8) */
    char calibration[SCEN_PATH_MAX];
    batching_cfg_t batching;
    enum pin_policy pinning;
    double overhead;         /* s per iteration (model path only) */
    double kv_capacity_bytes;/* 0 = derive: tensor_parallel × gpu memory - weights */
    int tensor_parallel;     /* GPUs per replica (>= 1), weights split N ways */
    double gpu_hour_usd;     /* price of one GPU-hour; 0 = not given */
    int has_verify_time;     /* verify_time given: every iteration takes it */
    dist_t verify_time;
    /* The draft of cloud-side speculation (protocol.mode cloud-spec), run
     * on every replica's GPU next to the target; none given: "" / 0. */
    char draft_ref[SCEN_PATH_MAX]; /* cloud.draft as written ("" = none) */
    llm_card_t draft;        /* its model card */
    int draft_precision;     /* cloud.draft_precision (weight format, as edge.quant) */
    int has_draft_precision;
    int has_draft_time;      /* cloud.draft_time given: every draft step
                                of an iteration takes it */
    dist_t draft_time;       /* owned */
    draft_heads_cfg_t draft_heads; /* cloud.draft_heads (0, 0 = none) */
    prefix_cache_cfg_t prefix_cache;
    replica_group_t *rgroups;/* owned; cloud.replica_groups, NULL = none (the
                                flat keys above describe every replica) */
    int nrgroups;
} cloud_cfg_t;

/* Runs that stop at a stated precision (`precision:`): replications are
 * added until, for every named metric, the half-width of its confidence
 * interval is within `relative` of its mean (sim/run/sim.c: the rule and
 * why it keeps its coverage), or max_replications is reached. Off when
 * relative is 0 (not given). */
#define PRECISION_METRICS_MAX 8
typedef struct precision_cfg {
    double relative;           /* target half-width / |mean|, in (0, 1); 0 = off */
    double confidence;         /* of the interval, in (0, 1); default 0.95 */
    int metrics[PRECISION_METRICS_MAX]; /* sim/stat/metrics.h ids */
    int nmetrics;              /* default: itl_mean_s and throughput_tok_s */
    int max_replications;      /* the cap, >= replications (default 1000) */
} precision_cfg_t;

/* drift: what keeps identical tenants from running in lockstep, as real
 * ones never do (docs/formats.md, "drift"). Zero everywhere (a scenario made
 * in code) is the what-if of perfect clocks: exact ties stay tied. */
typedef struct drift_cfg {
    double start;      /* s: each tenant's first request is shifted by a
                          uniform draw in [0, start) */
    double edge_cv;    /* coefficient of variation of each draft block's and
                          edge prefill's time (mean-preserving, in [0, 0.25]) */
    double cloud_cv;   /* the same for each cloud iteration's time */
} drift_cfg_t;

typedef struct output_cfg {
    char file[SCEN_PATH_MAX];  /* output.file: default for --out ("" = none) */
    char trace[SCEN_PATH_MAX]; /* output.trace: default for --trace */
    char trace_at[YNODE_WHERE_MAX]; /* where trace was given (FILE:LINE:COL,
                                       --set:N:COL), for messages; "" = not */
} output_cfg_t;

typedef struct scenario {
    char name[128];
    char file[SCEN_PATH_MAX];  /* where it was loaded from ("" = string) */
    uint64_t seed;
    double duration;           /* s of simulated time per replication */
    double warmup;             /* s deleted from every metric */
    int warmup_auto;           /* `warmup: auto`: each replication deletes
                                  MSER-5's pick instead (sim/stat/mser.h) */
    int replications;
    protocol_cfg_t protocol;
    accept_cfg_t acceptance;   /* owned parameters (accept_cfg_fini) */
    slo_cfg_t slo;             /* top-level slo: (groups' defaults) */
    tenant_group_t *groups;    /* owned; ngroups >= 1 */
    int ngroups;
    int ntenants;              /* sum of group counts */
    cloud_cfg_t cloud;
    output_cfg_t output;
    /* Where the keys a run may blame were written (FILE:LINE:COL,
     * --set:N:COL; "" in a scenario made in code): duration (the run
     * budget), and the key that sets the arrivals that may pile up
     * (scenario_arrivals_group's rate or trace). */
    char duration_at[YNODE_WHERE_MAX];
    char arrivals_at[YNODE_WHERE_MAX];
    precision_cfg_t precision; /* replications: the first round, then more
                                  until the targets are met */
    drift_cfg_t drift;
    struct build *built;       /* owned: what the loader built from this
                                  description (sim/config/build.h: service
                                  models, request trace, KV sizing), freed
                                  by scenario_fini; NULL in a scenario made
                                  in code (sim_run builds its own). Code that
                                  changes a loaded scenario calls
                                  scenario_rebuild */
    int given_known;           /* groups[].given was recorded (loaded from
                                  YAML); 0 in a scenario built in code */
    char *reads;               /* owned: "# read PATH sha256 HEX" lines of the
                                  files the load read (sim/io/infile.h), for
                                  sidecars; NULL when it read none */
} scenario_t;

/* The group a tenant index (0..ntenants-1) belongs to. */
const tenant_group_t *scenario_tenant_group(const scenario_t *s, int tenant);

/* Group g's protocol settings and acceptance model (its own, else the
 * scenario's). */
const protocol_cfg_t *scenario_group_protocol(const scenario_t *s, int g);
const accept_cfg_t *scenario_group_acceptance(const scenario_t *s, int g);
/* The group whose arrivals may pile up: the first with Poisson arrivals
 * (*is_rate 1: its workload.rate sets them), else the first that replays
 * the request trace, else the last (*is_rate 0: workload.trace). */
int scenario_arrivals_group(const scenario_t *s, int *is_rate);
/* GPUs per cloud replica: cloud.tensor_parallel, 1 in a scenario built in
 * code that left it 0. */
int scenario_tensor_parallel(const scenario_t *s);
/* Replica groups: how many (1 for a cloud without cloud.replica_groups),
 * and group k's settings as a cloud of its own — s->cloud with the group's
 * count, card, calibration, tensor_parallel, kv_capacity, price, overhead,
 * verify_time and batching.order over it. The view borrows
 * from s (its verify_time too): never fini it. */
int scenario_replica_groups(const scenario_t *s);
void scenario_replica_group_view(const scenario_t *s, int k, cloud_cfg_t *out);
/* The name of replica group k ("" for a cloud without groups). */
const char *scenario_replica_group_name(const scenario_t *s, int k);

/* 1 when some group's speculation differs from the top-level sections
 * (another mode, gamma, window or gamma policy, or its own acceptance). */
int scenario_mixed(const scenario_t *s);
/* For a command that writes no trace (sweep, optimize, the testbed): 0 when
 * the scenario gives no output.trace, else -1 with ERR_INPUT "WHERE:
 * output.trace: WHAT writes no trace (HINT)" at the key as given, so that it
 * is refused rather than ignored. */
SPECSIM_API int scenario_refuse_trace(const scenario_t *s, const char *what, const char *hint,
                          err_t *err);

#endif
