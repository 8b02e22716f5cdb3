/* scenario — YAML scenario files into validated, fully resolved structs.
 *
 * Loading goes: YAML file -> node tree (with line:column marks) -> `--set`
 * overrides applied to the tree by dotted path -> resolution through the key
 * table (type, unit, range, default) into scenario_t. Tenant groups inherit
 * every key of the `tenants:` section and override what they give; the
 * top-level `slo:` section is resolved per group the same way (a group's own
 * `slo:` overrides it key by key: tenant_group_t.slo). Replica groups
 * (cloud.replica_groups) inherit the `cloud:` keys they may set the same
 * way; cloud.replicas beside them is refused. Errors
 * name FILE:LINE:COLUMN and the dotted key; unknown keys get a "did you mean".
 *
 * `--set` errors read "--set:N:COL: path: problem": N = which `--set`
 * (1-based, counting only those), COL = 1-based column inside its
 * "PATH=VALUE" text. Other overrides name their own origin (--reps, a sweep
 * axis in its file: see scenario_override_t). Every check is made while
 * the YAML nodes are at hand — also those that need the whole scenario (a
 * batch token limit against gamma, the target's weights against the GPU
 * memory, cards against calibration tables, the output file's format) — so
 * every error points at the key as written. The loader also builds the
 * service models the scenario needs (sim/model/service.h) and keeps them, so a
 * command builds each once.
 *
 * A path may address list items by index or by their `name:`
 * (tenants.groups.phones), index = length appends; missing mappings are
 * created; a path that enters a card given as a file (cloud.gpu.mem_bw)
 * turns it into {base: FILE, ...}. An empty VALUE, a null value (here or in
 * the file) for a key that takes a value, and a path into the sweep: or
 * optimize: sections (read from the file by their own commands) are errors:
 * nothing given is silently dropped.
 *
 * Inputs are read once per command (sim/io/infile.h): a scenario_src_t holds
 * the scenario's text parsed once and the set of files its loads read
 * (cards, calibration tables, traces), so every load of a command — a
 * sweep's points, the checks of its axes — sees the same bytes even when a
 * file changes meanwhile, and pays for no disk reads after the first.
 * Relative paths in a scenario are looked up next to it, then in the
 * specsim root (sim/base/datapath.h), never in the working directory.
 *
 * Units: durations `40ms`, `150us`, `2s`, `1min` (stored in seconds); rates
 * `100Mbps`, `1Gbps`, `inf` (stored in bits/s, INFINITY for inf); sizes `4GiB`,
 * `512MB`, `64B`, `1KiB`, `1kB` (stored in bytes); arrival rates `2/s`,
 * `120/min`, `7200/h` (stored per second). A bare number is accepted where
 * the key has no unit (counts, probabilities) and, for files written before
 * they took units, in tenants.workload.rate (per second) and
 * tenants.network.overhead_bytes / bytes_per_token (bytes). `check` prints
 * every quantity with its unit.
 */
#ifndef SPECSIM_SCENARIO_H
#define SPECSIM_SCENARIO_H

#include "base/api.h"

#include <stdint.h>
#include <stdio.h>

#include "model/accept.h"
#include "model/batch.h"
#include "model/cards.h"
#include "base/err.h"
#include "engine/rng.h"
#include "io/ynode.h"

#define SCEN_PATH_MAX 512

enum arrival_kind { ARRIVAL_CLOSED = 0, ARRIVAL_POISSON, ARRIVAL_TRACE };
enum pin_policy { PIN_ROUND_ROBIN = 0, PIN_LEAST_LOADED, PIN_POWER_OF_TWO };

struct proto_ops;
struct gamma_ops;

typedef struct protocol_cfg {
    const struct proto_ops *proto;        /* protocol.mode (sim/entity/proto.h) */
    int gamma;           /* draft tokens per block, in [1, GAMMA_MAX] */
    int window;          /* async: max unverified blocks in flight, >= 1 */
    const struct gamma_ops *gamma_policy; /* sim/model/gamma.h */
} protocol_cfg_t;

typedef struct edge_cfg {
    char device_ref[SCEN_PATH_MAX]; /* card path as written (or "inline") */
    hw_card_t device;
    char draft_ref[SCEN_PATH_MAX];
    llm_card_t draft;               /* draft model */
    int quant;                      /* enum precision, default PREC_W4A16 */
    char calibration[SCEN_PATH_MAX];/* "" = none */
    int has_draft_time;             /* draft_time given: overrides the model */
    dist_t draft_time;              /* seconds per drafted token */
    int has_prefill_time;
    dist_t prefill_time;            /* seconds for the whole prompt */
    double overhead;                /* s per draft step (model path only) */
    struct service *service;        /* owned, built by the loader when the
                                       draft or prefill time comes from the
                                       model (NULL otherwise, and in a
                                       scenario built in code) */
} edge_cfg_t;

typedef struct network_cfg {
    double rtt;              /* s, base round trip (rtt/2 each way) */
    dist_t jitter;           /* s, added per message per direction; const 0 = none */
    double uplink_bps;       /* bits/s; INFINITY = unlimited */
    double downlink_bps;
    double overhead_bytes;   /* bytes per message (headers) */
    double bytes_per_token;  /* payload bytes per token id / verdict entry */
} network_cfg_t;

typedef struct workload_cfg {
    enum arrival_kind arrival;
    dist_t think;            /* closed: think time between requests (s) */
    double rate;             /* poisson: requests per second per tenant */
    dist_t prompt_tokens;    /* rounded to >= 1 */
    dist_t output_tokens;    /* rounded to >= 1 */
    char trace[SCEN_PATH_MAX];/* trace: the request trace file ("" = none) */
    double time_scale;       /* trace: times are multiplied by it; 0 = not
                                given (1) */
    const struct workload_trace *replay; /* trace: borrowed from
                                scenario_t.arrivals (sim/model/workload_trace.h) */
} workload_cfg_t;

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
    unsigned given;          /* bit k: the group wrote key k itself */
    struct service *service; /* owned, built by the loader as cloud.service */
} replica_group_t;

typedef struct cloud_cfg {
    int replicas;            /* with replica_groups: the sum of their counts */
    char gpu_ref[SCEN_PATH_MAX];
    hw_card_t gpu;
    char target_ref[SCEN_PATH_MAX];
    llm_card_t target;
    int precision;           /* enum precision, default PREC_FP16 */
    char calibration[SCEN_PATH_MAX];
    batching_cfg_t batching;
    enum pin_policy pinning;
    double overhead;         /* s per iteration (model path only) */
    double kv_capacity_bytes;/* 0 = derive: tensor_parallel × gpu memory - weights */
    int tensor_parallel;     /* GPUs per replica (>= 1), weights split N ways */
    double gpu_hour_usd;     /* price of one GPU-hour; 0 = not given */
    int has_verify_time;     /* verify_time given: every iteration takes it */
    dist_t verify_time;
    struct service *service; /* owned, built by the loader when iteration
                                times or the KV size come from the model
                                (NULL otherwise, and in a scenario built in
                                code) */
    replica_group_t *rgroups;/* owned; cloud.replica_groups, NULL = none (the
                                flat keys above describe every replica) */
    int nrgroups;
} cloud_cfg_t;

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
    struct workload_trace *arrivals; /* owned: the request trace of the
                                  groups with arrival: trace, or NULL */
    int given_known;           /* groups[].given was recorded (loaded from
                                  YAML); 0 in a scenario built in code */
    char *reads;               /* owned: "# read PATH sha256 HEX" lines of the
                                  files the load read (sim/io/infile.h), for
                                  sidecars; NULL when it read none */
} scenario_t;

/* A `--set PATH=VALUE` override; value is parsed as a YAML scalar or flow
 * node ("{dist: exponential, mean: 6ms}", "[1, 2]").
 *
 * `src` says where it was written, for messages. NULL: a `--set` option,
 * "--set:N:COL" with N counting only the overrides whose src is NULL, in
 * order. Otherwise src names it: with line 0 it has no position (an option
 * such as --reps: "--reps: replications: ..."); else the path was written at
 * line:col of src and the value starts at vline:vcol (a sweep axis in its
 * scenario file). */
typedef struct scenario_override {
    const char *path;
    const char *value;
    const char *src;
    int line, col;
    int vline, vcol;
} scenario_override_t;

/* Loads, applies the overrides in order, validates and resolves into *out
 * (every default filled in, cards loaded). path "-" reads stdin. A file
 * without a document (empty, or only comments) is an ERR_INPUT error
 * "FILE: empty scenario". On error
 * returns -1 with err filled (code ERR_INPUT, message FILE:LINE:COL: key: ...)
 * and *out left empty. The caller owns *out and frees it with
 * scenario_fini(). */
SPECSIM_API int scenario_load(const char *path, const scenario_override_t *ov, int nov,
                  scenario_t *out, err_t *err);
/* scenario_read: the whole file (path "-": standard input) as a
 * NUL-terminated buffer the caller frees. scenario_load_text: scenario_load
 * of a file whose text was read already, so that one text can be loaded more
 * than once — also from standard input, which cannot be read twice. */
int scenario_read(const char *path, char **text, size_t *len, err_t *err);
int scenario_load_text(const char *path, const char *text, size_t len,
                       const scenario_override_t *ov, int nov, scenario_t *out,
                       err_t *err);
/* Same, from a YAML string; `name` is used in messages in place of a file.
 * An empty string is every default (the overrides may give the rest). */
int scenario_load_string(const char *name, const char *yaml,
                         const scenario_override_t *ov, int nov,
                         scenario_t *out, err_t *err);
SPECSIM_API void scenario_fini(scenario_t *s);

/* A scenario parsed once (see the top of this file). scenario_src_open reads
 * the file (path "-": standard input) once; scenario_src_text takes text
 * already read from that path; scenario_src_string a YAML string named
 * `name` in messages (no directory: relative files come from the specsim
 * root). 0, or -1 with err (*out NULL). The caller frees *out with
 * scenario_src_free. */
typedef struct scenario_src scenario_src_t;
SPECSIM_API int scenario_src_open(const char *path, scenario_src_t **out, err_t *err);
int scenario_src_text(const char *path, const char *text, size_t len,
                      scenario_src_t **out, err_t *err);
SPECSIM_API int scenario_src_string(const char *name, const char *yaml,
                        scenario_src_t **out, err_t *err);
SPECSIM_API void scenario_src_free(scenario_src_t *sc);
/* scenario_load of the source: its tree copied, the overrides applied,
 * resolved; the files it names are read through the source's set. Safe to
 * call from several threads on one source. */
SPECSIM_API int scenario_src_load(const scenario_src_t *sc, const scenario_override_t *ov,
                      int nov, scenario_t *out, err_t *err);
/* The whole text as read (NUL-terminated; *len its length when len is not
 * NULL), for the readers of the sweep: and optimize: sections. */
const char *scenario_src_body(const scenario_src_t *sc, size_t *len);
/* The name messages give it: the path, "<stdin>", or the string's name. */
const char *scenario_src_name(const scenario_src_t *sc);
/* The set of files the loads read (sim/io/infile.h): what was used. */
SPECSIM_API struct infiles *scenario_src_files(const scenario_src_t *sc);
/* Tree nodes copied by all loads so far: each load copies the scenario
 * without its sweep: section, so the count per load does not grow with the
 * number of axis values (what makes validating a long axis linear). */
size_t scenario_src_cloned(const scenario_src_t *sc);

/* For a command that writes no trace (sweep, optimize, the testbed): 0 when
 * the scenario gives no output.trace, else -1 with ERR_INPUT "WHERE:
 * output.trace: WHAT writes no trace (HINT)" at the key as given, so that it
 * is refused rather than ignored. */
SPECSIM_API int scenario_refuse_trace(const scenario_t *s, const char *what, const char *hint,
                          err_t *err);

/* Prints the fully resolved scenario as YAML that scenario_load accepts and
 * that resolves to the same scenario (round trip), from any directory: data
 * files (request traces, acceptance files, calibration tables) are named
 * by their absolute paths (sim/base/datapath.h datapath_absolute). Returns
 * 0 or -1 on a write error. */
SPECSIM_API int scenario_write_yaml(const scenario_t *s, FILE *f);
/* The "# read PATH sha256 HEX" lines of the files s's load read (nothing
 * when none): a sidecar starts with them, and a rerun of it warns
 * (err_warn, sim/base/err.h) when a file it reads again at PATH holds other
 * bytes. 0, or -1 on a write error. */
SPECSIM_API int scenario_write_reads(const scenario_t *s, FILE *f);

/* The group a tenant index (0..ntenants-1) belongs to. */
const tenant_group_t *scenario_tenant_group(const scenario_t *s, int tenant);

/* Group g's protocol settings and acceptance model (its own, else the
 * scenario's). */
const protocol_cfg_t *scenario_group_protocol(const scenario_t *s, int g);
const accept_cfg_t *scenario_group_acceptance(const scenario_t *s, int g);
/* 1 when some group's protocol drafts on the edge / verifies drafts on the
 * cloud / uses the cloud at all. */
int scenario_drafts(const scenario_t *s);
int scenario_verifies(const scenario_t *s);
int scenario_uses_cloud(const scenario_t *s);
/* GPUs per cloud replica: cloud.tensor_parallel, 1 in a scenario built in
 * code that left it 0. */
int scenario_tensor_parallel(const scenario_t *s);
/* Replica groups: how many (1 for a cloud without cloud.replica_groups),
 * and group k's settings as a cloud of its own — s->cloud with the group's
 * count, card, calibration, tensor_parallel, kv_capacity, price, overhead,
 * verify_time, batching.order and service model over it. The view borrows
 * from s (its verify_time too): never fini it. */
int scenario_replica_groups(const scenario_t *s);
void scenario_replica_group_view(const scenario_t *s, int k, cloud_cfg_t *out);
/* The name of replica group k ("" for a cloud without groups). */
const char *scenario_replica_group_name(const scenario_t *s, int k);

/* 1 when some group's speculation differs from the top-level sections
 * (another mode, gamma, window or gamma policy, or its own acceptance). */
int scenario_mixed(const scenario_t *s);
/* "mixed" for a mixed scenario, else the protocol.mode value. */
const char *scenario_mode_name(const scenario_t *s);

#endif
