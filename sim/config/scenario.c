/* scenario — YAML scenario files into resolved structs (see scenario.h).
 *
 * Pipeline: text -> ynode tree -> `--set` overrides edit the tree -> key
 * tables (keytab) resolve it section by section into scenario_t -> checks
 * of the whole scenario and the service models built, the tree still at
 * hand for their messages. Tenant groups are resolved with two layers, the
 * tenants-level section and the group's own, so a group inherits every key
 * it does not give.
 *
 * `--set` messages use the source name "--set", line = the override's
 * position on the command line (1 = first --set), column = the 1-based
 * column inside the "PATH=VALUE" argument.
 */
#include "config/scenario.h"

#include <math.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "model/batch.h"
#include "model/gamma.h"
#include "io/infile.h"
#include "io/keytab.h"
#include "model/order.h"
#include "io/outpath.h"
#include "entity/proto.h"
#include "model/service.h"
#include "base/sha256.h"
#include "base/units.h"
#include "model/workload_trace.h"
#include "io/ynode.h"

#define SET_SRC "--set"
/* More tenants than this is certainly a mistake (and int sums overflow). */
#define MAX_TENANTS 100000000.0

/* --- custom key types: cards ------------------------------------------- */

/* A card the scenario does not name is the default's file in the specsim
 * root: the user never wrote that path, so a file of the same name next to
 * the scenario must not stand in for it. (keytab_resolve hands a default
 * over as a node whose text is the key's own .def.) */
static keytab_ctx_t card_ctx(const keytab_ctx_t *c, const ynode_t *node,
                             const keytab_key_t *k)
{
    keytab_ctx_t d = *c;
    if (node->str && node->str == k->def) d.dir = "";
    return d;
}

static int parse_hw(keytab_ctx_t *c, const ynode_t *node, const char *key,
                    const keytab_key_t *k, void *base)
{
    keytab_ctx_t d = card_ctx(c, node, k);
    return cards_hw_from_ctx(&d, node, key, (hw_card_t *)((char *)base + k->off),
                             (char *)base + k->aux, SCEN_PATH_MAX);
}

static int parse_llm(keytab_ctx_t *c, const ynode_t *node, const char *key,
                     const keytab_key_t *k, void *base)
{
    keytab_ctx_t d = card_ctx(c, node, k);
    return cards_llm_from_ctx(&d, node, key, (llm_card_t *)((char *)base + k->off),
                              (char *)base + k->aux, SCEN_PATH_MAX);
}

/* "name: # from REF" then the card's keys, so the output says where the
 * numbers came from while staying self-contained. */
static int write_card_head(FILE *f, const char *ref)
{
    if (*ref && strncmp(ref, "inline", 6) != 0 && !strchr(ref, '\n'))
        return fprintf(f, "  # %s\n", ref) < 0 ? -1 : 0;
    return fputc('\n', f) == EOF ? -1 : 0;
}

static int write_hw(FILE *f, const keytab_key_t *k, const void *base, int indent)
{
    if (write_card_head(f, (const char *)base + k->aux) != 0) return -1;
    return cards_write_hw(f, (const hw_card_t *)((const char *)base + k->off),
                          indent + 2);
}

static int write_llm(FILE *f, const keytab_key_t *k, const void *base, int indent)
{
    if (write_card_head(f, (const char *)base + k->aux) != 0) return -1;
    return cards_write_llm(f, (const llm_card_t *)((const char *)base + k->off),
                           indent + 2);
}

/* --- protocol, speculation-length and batching policies: names from their registries */

/* A registry as the loader sees it (sim/entity/proto.c, sim/model/gamma.c, sim/model/batch.c):
 * its names and its lookup. Every entry's table starts with its name
 * (`const char *name`), so one parser and one writer serve them all: the
 * key's .sub is the registry, .off the entry pointer's field. */
typedef struct scen_registry {
    size_t (*names)(const char **out, size_t max);
    const void *(*find)(const char *name);
} scen_registry_t;

static const void *find_proto(const char *n) { return proto_find(n); }
static const void *find_gamma(const char *n) { return gamma_find(n); }
static const void *find_batch(const char *n) { return batch_policy_find(n); }
static const void *find_order(const char *n) { return order_find(n); }

static const scen_registry_t REG_PROTO = {proto_names, find_proto};
static const scen_registry_t REG_GAMMA = {gamma_names, find_gamma};
static const scen_registry_t REG_BATCH = {batch_policy_names, find_batch};
static const scen_registry_t REG_ORDER = {order_names, find_order};

/* The fields are pointers to the registries' structs, all of which have
 * the representation of void * here (checked by the build, not assumed). */
_Static_assert(sizeof(const void *) == sizeof(const proto_ops_t *) &&
               sizeof(const void *) == sizeof(const gamma_ops_t *) &&
               sizeof(const void *) == sizeof(const batch_policy_t *) &&
               sizeof(const void *) == sizeof(const order_ops_t *),
               "registry entry pointers differ in size");

static int parse_registered_key(keytab_ctx_t *c, const ynode_t *node, const char *key,
                                const keytab_key_t *k, void *base)
{
    const scen_registry_t *reg = k->sub;
    /* As many names as the registry holds, however many that is: a fixed
     * buffer would make the entries past it unreachable without a word. */
    size_t n = reg->names(NULL, 0), at = 0;
    const char **names = malloc((n ? n : 1) * sizeof *names);
    if (!names) return err_set(c->err, ERR_RUNTIME, "out of memory");
    reg->names(names, n);
    int rc = keytab_parse_choice(c, node, key, names, n, &at);
    if (rc == 0) {
        const void *entry = reg->find(names[at]);
        memcpy((char *)base + k->off, &entry, sizeof entry);
    }
    free(names);
    return rc ? -1 : 0;
}

/* A hand-built (zeroed) config holds no entry: it stands for the key's
 * default. */
static int write_registered_key(FILE *f, const keytab_key_t *k, const void *base,
                                int indent)
{
    (void)indent;
    const void *entry;
    memcpy(&entry, (const char *)base + k->off, sizeof entry);
    const char *name = entry ? *(const char *const *)entry : k->def;
    return fprintf(f, " %s\n", name) < 0 ? -1 : 0;
}

static int write_name(FILE *f, const char *name)
{
    return fprintf(f, " %s\n", name) < 0 ? -1 : 0;
}

/* `auto`, or a duration like every other. */
static int parse_warmup(keytab_ctx_t *c, const ynode_t *node, const char *key,
                        const keytab_key_t *k, void *base)
{
    scenario_t *s = base;
    s->warmup_auto = node->kind == YNODE_SCALAR && !strcmp(node->str, "auto");
    if (s->warmup_auto) {
        s->warmup = 0;
        return 0;
    }
    return keytab_parse_number(c, node, key, k, &s->warmup);
}

static int write_warmup(FILE *f, const keytab_key_t *k, const void *base, int indent)
{
    (void)indent;
    const scenario_t *s = base;
    char buf[96];
    if (s->warmup_auto) return write_name(f, "auto");
    if (units_format(s->warmup, k->unit, buf, sizeof buf) < 0) return -1;
    return write_name(f, buf);
}

/* --- key tables ---------------------------------------------------------- */

static const char *const PREC_NAMES[] = {"fp32", "fp16", "w8a16", "w4a16",
                                         "w4a4", NULL};
static const char *const ARRIVAL_NAMES[] = {"closed", "poisson", "trace", NULL};
static const char *const PIN_NAMES[] = {"round-robin", "least-loaded",
                                        "power-of-two", NULL};

#define BIG 1e300
#define END {.name = NULL}

static const keytab_key_t PROTOCOL_KEYS[] = {
    {.name = "mode", KEYTAB_CUSTOM(protocol_cfg_t, proto, const struct proto_ops *),
     .sub = &REG_PROTO, .parse = parse_registered_key, .write = write_registered_key,
     .def = "async"},
    {.name = "gamma", KEYTAB_INT(protocol_cfg_t, gamma), .min = 1, .max = GAMMA_MAX,
     .def = "4"},
    {.name = "window", KEYTAB_INT(protocol_cfg_t, window), .min = 1, .max = 1e6,
     .def = "4"},
    {.name = "gamma_policy",
     KEYTAB_CUSTOM(protocol_cfg_t, gamma_policy, const struct gamma_ops *),
     .sub = &REG_GAMMA, .parse = parse_registered_key, .write = write_registered_key,
     .def = "fixed"},
    END};

static const keytab_key_t EDGE_KEYS[] = {
    {.name = "device", KEYTAB_CUSTOM(edge_cfg_t, device, hw_card_t),
     .aux = KEYTAB_CHARS(edge_cfg_t, device_ref), .parse = parse_hw,
     .write = write_hw,
     .def = "models/hardware/snapdragon-8-gen-3.yaml"},
    {.name = "draft", KEYTAB_CUSTOM(edge_cfg_t, draft, llm_card_t),
     .aux = KEYTAB_CHARS(edge_cfg_t, draft_ref), .parse = parse_llm,
     .write = write_llm,
     .def = "models/llm/llama-2-7b.yaml"},
    {.name = "quant", KEYTAB_ENUM(edge_cfg_t, quant, int), .sub = PREC_NAMES,
     .def = "w4a16"},
    {.name = "calibration", KEYTAB_PATH(edge_cfg_t, calibration),
     .flags = KF_SKIPEMPTY},
    {.name = "draft_time", KEYTAB_DIST(edge_cfg_t, draft_time),
     .aux = KEYTAB_OFF(edge_cfg_t, has_draft_time, int), .unit = UNIT_DURATION,
     .max = BIG, .flags = KF_HAS},
    {.name = "prefill_time", KEYTAB_DIST(edge_cfg_t, prefill_time),
     .aux = KEYTAB_OFF(edge_cfg_t, has_prefill_time, int), .unit = UNIT_DURATION,
     .max = BIG, .flags = KF_HAS},
    {.name = "overhead", KEYTAB_NUM(edge_cfg_t, overhead), .unit = UNIT_DURATION,
     .max = BIG, .def = "0s"},
    END};

static const keytab_key_t NETWORK_KEYS[] = {
    {.name = "rtt", KEYTAB_NUM(network_cfg_t, rtt), .unit = UNIT_DURATION, .max = BIG,
     .def = "40ms"},
    {.name = "jitter", KEYTAB_DIST(network_cfg_t, jitter), .unit = UNIT_DURATION,
     .max = BIG, .flags = KF_NONE, .def = "none"},
    {.name = "uplink", KEYTAB_NUM(network_cfg_t, uplink_bps), .unit = UNIT_RATE,
     .max = BIG, .flags = KF_MIN_OPEN | KF_INF, .def = "inf"},
    {.name = "downlink", KEYTAB_NUM(network_cfg_t, downlink_bps),
     .unit = UNIT_RATE, .max = BIG,
     .flags = KF_MIN_OPEN | KF_INF, .def = "inf"},
    {.name = "overhead_bytes", KEYTAB_NUM(network_cfg_t, overhead_bytes),
     .unit = UNIT_SIZE, .max = 1e12,
     .flags = KF_BARE, .def = "64B"},
    {.name = "bytes_per_token", KEYTAB_NUM(network_cfg_t, bytes_per_token),
     .unit = UNIT_SIZE, .max = 1e12,
     .flags = KF_BARE, .def = "4B"},
    END};

static const keytab_key_t WORKLOAD_KEYS[] = {
    {.name = "arrival", KEYTAB_ENUM(workload_cfg_t, arrival, enum arrival_kind),
     .sub = ARRIVAL_NAMES, .def = "closed"},
    {.name = "think", KEYTAB_DIST(workload_cfg_t, think), .unit = UNIT_DURATION,
     .max = BIG, .def = "0s"},
    {.name = "rate", KEYTAB_NUM(workload_cfg_t, rate), .unit = UNIT_FREQUENCY, .min = 0,
     .max = BIG,
     .flags = KF_MIN_OPEN | KF_SKIPEMPTY | KF_BARE},
    {.name = "prompt_tokens", KEYTAB_DIST(workload_cfg_t, prompt_tokens),
     .min = 1,
     .max = WORKLOAD_TRACE_TOKENS_MAX,
     .def = "128"},
    {.name = "output_tokens", KEYTAB_DIST(workload_cfg_t, output_tokens),
     .min = 1,
     .max = WORKLOAD_TRACE_TOKENS_MAX,
     .def = "256"},
    {.name = "trace", KEYTAB_PATH(workload_cfg_t, trace), .flags = KF_SKIPEMPTY},
    /* No default: 0 stands for 1, so that scenarios without a trace are
     * written back without the key. */
    {.name = "time_scale", KEYTAB_NUM(workload_cfg_t, time_scale), .min = 0,
     .max = 1e12, .flags = KF_MIN_OPEN | KF_SKIPEMPTY},
    END};

static const keytab_key_t BATCH_KEYS[] = {
    {.name = "policy", KEYTAB_CUSTOM(batching_cfg_t, policy, const batch_policy_t *),
     .sub = &REG_BATCH, .parse = parse_registered_key, .write = write_registered_key,
     .def = "continuous"},
    {.name = "max_batch", KEYTAB_INT(batching_cfg_t, max_batch), .min = 1, .max = 1e6,
     .def = "32"},
    {.name = "max_wait", KEYTAB_NUM(batching_cfg_t, max_wait), .unit = UNIT_DURATION,
     .max = BIG, .def = "5ms"},
    {.name = "max_tokens", KEYTAB_INT(batching_cfg_t, max_tokens),
     .min = 0, .max = 1e9, .def = "0",
     .zero_means = "0: no limit"},
    {.name = "multi_block", KEYTAB_BOOL(batching_cfg_t, multi_block),
     .def = "true"},
    {.name = "order", KEYTAB_CUSTOM(batching_cfg_t, order, const struct order_ops *),
     .sub = &REG_ORDER, .parse = parse_registered_key, .write = write_registered_key,
     .def = "fcfs"},
    END};

static const keytab_key_t CLOUD_KEYS[] = {
    {.name = "replicas", KEYTAB_INT(cloud_cfg_t, replicas), .min = 1, .max = 1e5,
     .def = "1"},
    {.name = "gpu", KEYTAB_CUSTOM(cloud_cfg_t, gpu, hw_card_t),
     .aux = KEYTAB_CHARS(cloud_cfg_t, gpu_ref), .parse = parse_hw,
     .write = write_hw,
     .def = "models/hardware/h200.yaml"},
    {.name = "target", KEYTAB_CUSTOM(cloud_cfg_t, target, llm_card_t),
     .aux = KEYTAB_CHARS(cloud_cfg_t, target_ref), .parse = parse_llm,
     .write = write_llm, .def = "models/llm/llama-2-7b.yaml"},
    {.name = "precision", KEYTAB_ENUM(cloud_cfg_t, precision, int), .sub = PREC_NAMES,
     .def = "fp16"},
    {.name = "calibration", KEYTAB_PATH(cloud_cfg_t, calibration),
     .flags = KF_SKIPEMPTY},
    {.name = "pinning", KEYTAB_ENUM(cloud_cfg_t, pinning, enum pin_policy),
     .sub = PIN_NAMES, .def = "least-loaded"},
    {.name = "overhead", KEYTAB_NUM(cloud_cfg_t, overhead), .unit = UNIT_DURATION,
     .max = BIG, .def = "0.5ms"},
    {.name = "kv_capacity", KEYTAB_NUM(cloud_cfg_t, kv_capacity_bytes),
     .unit = UNIT_SIZE,
     .max = BIG, .def = "0",
     .zero_means = "0: GPU memory - target weights (unlimited with verify_time)"},
    {.name = "verify_time", KEYTAB_DIST(cloud_cfg_t, verify_time),
     .aux = KEYTAB_OFF(cloud_cfg_t, has_verify_time, int), .unit = UNIT_DURATION,
     .max = BIG, .flags = KF_HAS},
    {.name = "batching", KEYTAB_SECTION(cloud_cfg_t, batching, batching_cfg_t),
     .sub = BATCH_KEYS},
    {.name = "tensor_parallel", KEYTAB_INT(cloud_cfg_t, tensor_parallel),
     .min = 1, .max = 1024, .def = "1"},
    {.name = "gpu_hour_usd", KEYTAB_NUM(cloud_cfg_t, gpu_hour_usd), .max = 1e9,
     .flags = KF_SKIPEMPTY, .def = "0",
     .zero_means = "0: no price (usd_per_mtok is NaN)"},
    {.name = "replica_groups", .type = KT_SKIP},   /* resolve_replica_groups */
    END};

static const keytab_key_t OUTPUT_KEYS[] = {
    {.name = "file", KEYTAB_STRING(output_cfg_t, file), .flags = KF_SKIPEMPTY},
    {.name = "trace", KEYTAB_STRING(output_cfg_t, trace), .flags = KF_SKIPEMPTY},
    END};

/* Both optional; 0 (not given) = no bound. Written only when given. */
static const keytab_key_t SLO_KEYS[] = {
    {.name = "ttft", KEYTAB_NUM(slo_cfg_t, ttft), .unit = UNIT_DURATION, .max = BIG,
     .flags = KF_MIN_OPEN | KF_SKIPEMPTY},
    {.name = "tpot", KEYTAB_NUM(slo_cfg_t, tpot), .unit = UNIT_DURATION, .max = BIG,
     .flags = KF_MIN_OPEN | KF_SKIPEMPTY},
    END};

static const keytab_key_t TOP_KEYS[] = {
    {.name = "name", KEYTAB_STRING(scenario_t, name)},
    {.name = "seed", KEYTAB_U64(scenario_t, seed), .def = "1"},
    {.name = "duration", KEYTAB_NUM(scenario_t, duration), .unit = UNIT_DURATION,
     .max = BIG, .flags = KF_MIN_OPEN, .def = "60s"},
    {.name = "warmup", KEYTAB_CUSTOM(scenario_t, warmup, double), .unit = UNIT_DURATION,
     .max = BIG, .parse = parse_warmup,
     .write = write_warmup, .def = "5s"},
    {.name = "replications", KEYTAB_INT(scenario_t, replications), .min = 1, .max = 1e6,
     .def = "1"},
    {.name = "protocol", KEYTAB_SECTION(scenario_t, protocol, protocol_cfg_t),
     .sub = PROTOCOL_KEYS},
    {.name = "acceptance", .type = KT_SKIP},  /* the model's keys: resolve_acceptance */
    {.name = "tenants", .type = KT_SKIP},
    {.name = "cloud", KEYTAB_SECTION(scenario_t, cloud, cloud_cfg_t),
     .sub = CLOUD_KEYS},
    {.name = "output", KEYTAB_SECTION(scenario_t, output, output_cfg_t),
     .sub = OUTPUT_KEYS},
    {.name = "sweep", .type = KT_SKIP},
    {.name = "optimize", .type = KT_SKIP},   /* sim/run/optimize.c reads it */
    /* Resolved per group (resolve_slo): groups override it key by key. */
    {.name = "slo", .type = KT_SKIP},
    END};

static const keytab_key_t TENANTS_KEYS[] = {
    {.name = "count", KEYTAB_INT(tenant_group_t, count), .min = 1, .max = MAX_TENANTS,
     .def = "1"},
    {.name = "edge", .type = KT_SKIP},
    {.name = "network", .type = KT_SKIP},
    {.name = "workload", .type = KT_SKIP},
    {.name = "groups", .type = KT_SKIP},
    END};

static const keytab_key_t GROUP_KEYS[] = {
    {.name = "name", KEYTAB_STRING(tenant_group_t, name)},
    {.name = "count", KEYTAB_INT(tenant_group_t, count), .min = 1, .max = MAX_TENANTS,
     .flags = KF_REQUIRED},
    {.name = "priority", KEYTAB_INT(tenant_group_t, priority), .min = -1e6, .max = 1e6,
     .def = "0"},
    {.name = "slo", .type = KT_SKIP},   /* resolve_slo */
    {.name = "edge", .type = KT_SKIP},
    {.name = "network", .type = KT_SKIP},
    {.name = "workload", .type = KT_SKIP},
    {.name = "protocol", .type = KT_SKIP},   /* resolve_speculation */
    {.name = "acceptance", .type = KT_SKIP},
    END};

/* The three per-tenant sections, each resolved over two layers. */
static const struct {
    const char *name;
    const keytab_key_t *keys;
    size_t off;
} TENANT_SECTIONS[] = {
    {"edge", EDGE_KEYS, KEYTAB_OFF(tenant_group_t, edge, edge_cfg_t)},
    {"network", NETWORK_KEYS, KEYTAB_OFF(tenant_group_t, network, network_cfg_t)},
    {"workload", WORKLOAD_KEYS, KEYTAB_OFF(tenant_group_t, workload, workload_cfg_t)},
};

/* Dotted-path segments that name a card: a `--set` that descends into a
 * card given as a path turns it into {base: PATH} first. */
static int is_card_key(const char *seg)
{
    return !strcmp(seg, "device") || !strcmp(seg, "draft") ||
           !strcmp(seg, "gpu") || !strcmp(seg, "target");
}

/* --- overrides ----------------------------------------------------------- */

/* Where an override's text lies, for the marks of the nodes it creates:
 * path column c (1-based inside the path) is at kline:kcol0 + c, value
 * offset i at vline:vcol0 + 1 + i; line 0 = no position. */
typedef struct set_ctx {
    const scenario_override_t *o;
    const char *src;
    int kline, kcol0;
    int vline, vcol0;
    err_t *err;
} set_ctx_t;

/* A `--set` is line n of "--set", its value after "PATH="; an override with
 * its own src carries its own marks. */
static set_ctx_t set_ctx(const scenario_override_t *o, int n, err_t *err)
{
    set_ctx_t sc = {o, SET_SRC, n, 0, n, 0, err};
    if (!o->src) {
        sc.vcol0 = o->path ? (int)strlen(o->path) + 1 : 1;
        return sc;
    }
    sc.src = o->src;
    sc.kline = o->line > 0 ? o->line : 0;
    sc.kcol0 = o->col > 0 ? o->col - 1 : 0;
    sc.vline = o->line > 0 ? o->vline : 0;
    sc.vcol0 = o->vcol > 0 ? o->vcol - 1 : 0;
    return sc;
}

static int set_err(const set_ctx_t *s, int col, const char *path, size_t plen,
                   const char *fmt, const char *a, const char *b)
{
    char msg[600], at[YNODE_WHERE_MAX];
    snprintf(msg, sizeof msg, fmt, a, b);
    ynode_where(at, sizeof at, s->src, s->kline, s->kcol0 + col);
    return err_set(s->err, ERR_INPUT, "%s: %.*s: %s", at, (int)plen, path, msg);
}

static int all_digits(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9') return 0;
    return 1;
}

/* Index of the item of seq addressed by seg: a number, or the value of the
 * items' `name:` key. -1 when none (n = append position). */
static long seq_index(const ynode_t *seq, const char *seg)
{
    if (all_digits(seg)) {
        if (strlen(seg) > 9) return -1;
        long i = atol(seg);
        return i <= (long)seq->n ? i : -1;
    }
    for (size_t i = 0; i < seq->n; i++) {
        const ynode_t *nm = ynode_get(seq->items[i], "name");
        if (nm && nm->kind == YNODE_SCALAR && !strcmp(nm->str, seg)) return (long)i;
    }
    return -1;
}

/* Makes *slot a mapping to descend into: null -> new map, card path ->
 * {base: path}; anything else that is not a mapping is an error. */
static int make_descendable(const set_ctx_t *s, ynode_t **slot, const char *seg,
                            int col, const char *path, size_t plen)
{
    ynode_t *v = *slot;
    if (v->kind == YNODE_MAP) return 0;
    if (ynode_is_null(v)) {
        ynode_t *m = ynode_create_map(s->src, s->kline, s->kcol0 + col);
        if (!m) return err_set(s->err, ERR_RUNTIME, "out of memory");
        ynode_free(v);
        *slot = m;
        return 0;
    }
    if (v->kind == YNODE_SCALAR && is_card_key(seg)) {
        ynode_t *m = ynode_create_map(v->src, v->line, v->col);
        if (!m) return err_set(s->err, ERR_RUNTIME, "out of memory");
        *slot = m;
        if (ynode_map_put(m, "base", v->src, v->line, v->col, v) != 0)
            return err_set(s->err, ERR_RUNTIME, "out of memory");
        return 0;
    }
    if (v->kind == YNODE_SEQ) return 0;
    return set_err(s, col, path, plen, "is a value ('%.80s'), not a mapping%s",
                   v->str, "");
}

/* Adds the child an override path creates under cur — at key seg of a
 * mapping, or at the end of a sequence: v itself for the last segment, a new
 * mapping to descend into otherwise. Returns the child, owned by the tree;
 * NULL on allocation failure, with v freed whichever node failed. */
static ynode_t *add_child(ynode_t *cur, const char *seg, const set_ctx_t *s,
                          int col, int last, ynode_t *v)
{
    int kcol = s->kcol0 + col;
    ynode_t *n = last ? v : ynode_create_map(s->src, s->kline, kcol);
    if (!n) {
        ynode_free(v);
        return NULL;
    }
    /* Both insertions free n when they fail; v is then still ours unless it
     * was n. */
    int rc = cur->kind == YNODE_MAP
                 ? ynode_map_put(cur, seg, s->src, s->kline, kcol, n)
                 : ynode_seq_append(cur, n);
    if (rc != 0) {
        if (!last) ynode_free(v);
        return NULL;
    }
    return n;
}

static int apply_override(ynode_t *root, const set_ctx_t *s)
{
    const char *path = s->o->path ? s->o->path : "";
    const char *value = s->o->value ? s->o->value : "";
    size_t plen = strlen(path);
    if (plen == 0 || plen >= KEYTAB_KEY_MAX)
        return set_err(s, 1, "(path)", 6, "%s%s",
                       plen ? "path too long" : "empty path", "");
    /* Read by their own commands from the file, never from the tree: an
     * override of them would be silently ignored. */
    size_t seg0 = strcspn(path, ".");
    if ((seg0 == 5 && !strncmp(path, "sweep", 5)) ||
        (seg0 == 8 && !strncmp(path, "optimize", 8)))
        return set_err(s, 1, path, plen, "the %s: section cannot be overridden "
                       "(edit it in the scenario file)%s", seg0 == 5 ? "sweep"
                       : "optimize", "");
    if (!s->o->src && !*value)
        return set_err(s, 1, path, plen, "no value after '=' (give one; a key "
                       "left out of the scenario takes its default)%s%s", "", "");
    ynode_t *v = NULL;
    if (ynode_parse(s->src, path, value, strlen(value), s->vline, s->vcol0, &v,
                    s->err) != 0)
        return -1;
    if (!v) v = ynode_create_scalar(s->src, s->vline, s->vcol0 + 1, "");
    if (!v) return err_set(s->err, ERR_RUNTIME, "out of memory");

    ynode_t *cur = root;
    size_t pos = 0;
    while (pos <= plen) {
        size_t seglen = strcspn(path + pos, ".");
        int col = (int)pos + 1;
        size_t upto = pos + seglen;
        char seg[KEYTAB_KEY_MAX];
        memcpy(seg, path + pos, seglen);
        seg[seglen] = 0;
        int last = upto == plen;
        if (seglen == 0) {
            ynode_free(v);
            return set_err(s, col, path, plen, "empty key in the path%s%s", "", "");
        }
        ynode_t **slot = NULL;
        if (cur->kind == YNODE_MAP) {
            ynode_pair_t *p = ynode_find(cur, seg);
            if (!p) {
                ynode_t *n = add_child(cur, seg, s, col, last, v);
                if (!n) return err_set(s->err, ERR_RUNTIME, "out of memory");
                if (last) return 0;
                cur = n;
                pos = upto + 1;
                continue;
            }
            slot = &p->val;
        } else {
            long i = seq_index(cur, seg);
            if (i < 0) {
                ynode_free(v);
                return set_err(s, col, path, upto,
                               "no list item '%s' (give an index or an item's name)%s",
                               seg, "");
            }
            if ((size_t)i == cur->n) {
                ynode_t *n = add_child(cur, seg, s, col, last, v);
                if (!n) return err_set(s->err, ERR_RUNTIME, "out of memory");
                if (last) return 0;
                cur = n;
                pos = upto + 1;
                continue;
            }
            slot = &cur->items[i];
        }
        if (last) {
            ynode_free(*slot);
            *slot = v;
            return 0;
        }
        if (make_descendable(s, slot, seg, col, path, upto) != 0) {
            ynode_free(v);
            return -1;
        }
        cur = *slot;
        pos = upto + 1;
    }
    ynode_free(v);
    return 0;
}

/* --- resolution ---------------------------------------------------------- */

typedef struct sctx {
    keytab_ctx_t kc;
    const ynode_t *root;
    scenario_t *s;
} sctx_t;

static int oom(sctx_t *x)
{
    return err_set(x->kc.err, ERR_RUNTIME, "out of memory");
}

static const ynode_t *present(const ynode_t *n)
{
    return n && !ynode_is_null(n) ? n : NULL;
}

/* Bit k set for each key k of tab that map writes. */
static unsigned keys_given(const keytab_key_t *tab, const ynode_t *map)
{
    unsigned bits = 0;
    for (unsigned k = 0; tab[k].name && k < 32; k++)
        if (ynode_find(map, tab[k].name)) bits |= 1u << k;
    return bits;
}

/* Group i's protocol and acceptance: the top-level sections with the
 * group's own (gi, NULL without groups) over them. Its acceptance is
 * resolved only when the group gives an `acceptance:` section: otherwise it
 * is the scenario's, and a trace file is not read twice. */
static int resolve_speculation(sctx_t *x, const ynode_t *gi, const char *prefix,
                               tenant_group_t *g)
{
    char p1[KEYTAB_KEY_MAX], a1[KEYTAB_KEY_MAX];
    keytab_join(p1, prefix, "protocol");
    keytab_join(a1, prefix, "acceptance");
    keytab_layer_t P[2] = {{ynode_get(x->root, "protocol"), "protocol"},
                           {ynode_get(gi, "protocol"), p1}};
    if (keytab_resolve(&x->kc, PROTOCOL_KEYS, P, gi ? 2 : 1, &g->protocol) != 0)
        return -1;
    g->given_protocol = gi ? keys_given(PROTOCOL_KEYS, present(P[1].map)) : 0;
    const ynode_t *own = present(ynode_get(gi, "acceptance"));
    if (!own) return 0;
    keytab_layer_t A[2] = {{ynode_get(x->root, "acceptance"), "acceptance"},
                           {own, a1}};
    return accept_cfg_resolve(&x->kc, A, 2, &g->acceptance);
}

/* --- unique names ------------------------------------------------------------ */

static uint64_t scenario_name_hash(const char *name)
{
    uint64_t h = 14695981039346656037ULL;   /* FNV-1a, 64 bit */
    for (; *name; name++) h = (h ^ (unsigned char)*name) * 1099511628211ULL;
    return h;
}

/* The first of n names (name i at base + i·stride) equal to an earlier
 * one, in *dup (-1: none). A hash set, not the pairwise comparison it
 * replaces, which made 100k groups take minutes. 0, or -1 out of memory. */
static int scenario_first_dup(const char *base, size_t stride, int n, int *dup)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)n) cap *= 2;
    int *slot = malloc(cap * sizeof *slot);
    if (!slot) return -1;
    for (size_t k = 0; k < cap; k++) slot[k] = -1;
    *dup = -1;
    for (int i = 0; i < n && *dup < 0; i++) {
        const char *name = base + (size_t)i * stride;
        size_t k = (size_t)scenario_name_hash(name) & (cap - 1);
        while (slot[k] >= 0 && strcmp(base + (size_t)slot[k] * stride, name) != 0)
            k = (k + 1) & (cap - 1);
        if (slot[k] >= 0) *dup = i;
        else slot[k] = i;
    }
    free(slot);
    return 0;
}

/* A top-level section a group may override is new to the tenants' two
 * layers (they stop at `tenants:`): the group's slo is resolved over the
 * top-level slo the same way a group's edge is over tenants.edge. gi: the
 * group's node, NULL when the scenario has no groups. */
static int resolve_slo(sctx_t *x, const ynode_t *gi, const char *prefix,
                       tenant_group_t *g)
{
    char p1[KEYTAB_KEY_MAX];
    keytab_join(p1, prefix, "slo");
    keytab_layer_t L[2] = {{ynode_get(x->root, "slo"), "slo"},
                           {ynode_get(gi, "slo"), p1}};
    if (keytab_resolve(&x->kc, SLO_KEYS, L, gi ? 2 : 1, &g->slo) != 0) return -1;
    g->slo_given = gi ? keys_given(SLO_KEYS, present(L[1].map)) : 0;
    return 0;
}

/* A group's name as given (gi's `name:`, resolved into name) is what
 * paths address it by (tenants.groups.NAME.KEY): one that a path could not
 * reach, or would reach as another group, is refused at the key. An absent
 * name is the caller's default. */
static int check_group_name(sctx_t *x, const ynode_t *gi, const char *prefix,
                            const char *name)
{
    const ynode_t *nm = ynode_get(gi, "name");
    const char *why = NULL;
    if (!nm) return 0;
    if (!name[0]) why = "is empty (leave name: out for the default group<index>)";
    else if (strspn(name, "0123456789") == strlen(name))
        why = "is a number, which a path reads as a group's index: give a name with "
              "a letter in it";
    else if (strchr(name, '.'))
        why = "contains '.', where a path to the group's keys (LIST.NAME.KEY) would "
              "split it";
    if (!why) return 0;
    char key[KEYTAB_KEY_MAX];
    keytab_join(key, prefix, "name");
    return keytab_err(&x->kc, nm, key, "'%s' %s", name, why);
}

static int resolve_group(sctx_t *x, const ynode_t *T, const ynode_t *G, int i)
{
    tenant_group_t *g = &x->s->groups[i];
    char prefix[KEYTAB_KEY_MAX] = "tenants";
    const ynode_t *gi = NULL;
    if (G) {
        gi = G->items[i];
        snprintf(prefix, sizeof prefix, "tenants.groups.%d", i);
        if (gi->kind != YNODE_MAP) {
            char keys[400];
            keytab_names(GROUP_KEYS, keys, sizeof keys);
            return keytab_err(&x->kc, gi, prefix, "expected a mapping {%s}, got %s", keys,
                              ynode_kind_name(gi));
        }
        keytab_layer_t L = {gi, prefix};
        if (keytab_resolve(&x->kc, GROUP_KEYS, &L, 1, g) != 0 ||
            check_group_name(x, gi, prefix, g->name) != 0)
            return -1;
        if (!g->name[0]) snprintf(g->name, sizeof g->name, "group%d", i);
    } else {
        keytab_layer_t L = {T, "tenants"};
        if (keytab_resolve(&x->kc, TENANTS_KEYS, &L, 1, g) != 0) return -1;
        snprintf(g->name, sizeof g->name, "default");
    }
    for (size_t k = 0; k < sizeof TENANT_SECTIONS / sizeof *TENANT_SECTIONS; k++) {
        char p0[KEYTAB_KEY_MAX], p1[KEYTAB_KEY_MAX];
        keytab_join(p0, "tenants", TENANT_SECTIONS[k].name);
        keytab_join(p1, prefix, TENANT_SECTIONS[k].name);
        keytab_layer_t L[2] = {{ynode_get(T, TENANT_SECTIONS[k].name), p0},
                               {ynode_get(gi, TENANT_SECTIONS[k].name), p1}};
        const ynode_t *where = x->kc.where;
        if (present(T)) x->kc.where = T;
        if (present(gi)) x->kc.where = gi;
        int rc = keytab_resolve(&x->kc, TENANT_SECTIONS[k].keys, L, G ? 2 : 1,
                                (char *)g + TENANT_SECTIONS[k].off);
        x->kc.where = where;
        if (rc != 0) return -1;
        g->given[k] = G ? keys_given(TENANT_SECTIONS[k].keys, L[1].map) : 0;
    }
    if (resolve_speculation(x, gi, prefix, g) != 0) return -1;
    if (resolve_slo(x, gi, prefix, g) != 0) return -1;
    if (g->workload.arrival == ARRIVAL_POISSON && g->workload.rate <= 0) {
        const ynode_t *w = present(ynode_get(gi, "workload"));
        if (!w) w = present(ynode_get(T, "workload"));
        const ynode_t *a = w ? ynode_get(w, "arrival") : NULL;
        char key[KEYTAB_KEY_MAX];
        keytab_join(key, G && ynode_get(ynode_get(gi, "workload"), "arrival")
                             ? prefix : "tenants", "workload.rate");
        return keytab_err(&x->kc, a ? a : w, key,
                          "required when arrival is poisson (requests per tenant "
                          "per time, e.g. 2/s or 120/min)");
    }
    return 0;
}

static int resolve_tenants(sctx_t *x)
{
    const ynode_t *T = present(ynode_get(x->root, "tenants"));
    if (T && T->kind != YNODE_MAP)
        return keytab_err(&x->kc, T, "tenants", "expected a mapping, got %s",
                          ynode_kind_name(T));
    if (keytab_check_keys(&x->kc, TENANTS_KEYS, T, "tenants") != 0) return -1;
    const ynode_pair_t *gp = ynode_find(T, "groups");
    const ynode_t *G = gp ? present(gp->val) : NULL;
    if (G && present(ynode_get(T, "count")))
        return err_set(x->kc.err, ERR_INPUT,
                       "%s:%d:%d: tenants.groups: give either tenants.count or "
                       "tenants.groups, not both",
                       gp->ksrc, gp->kline, gp->kcol);
    if (G && G->kind != YNODE_SEQ)
        return keytab_err(&x->kc, G, "tenants.groups",
                          "expected a list of groups, got %s", ynode_kind_name(G));
    if (G && G->n == 0)
        return keytab_err(&x->kc, G, "tenants.groups", "the list is empty");
    if (G && G->n > 1000000)
        return keytab_err(&x->kc, G, "tenants.groups", "too many groups");
    int n = G ? (int)G->n : 1;
    x->s->groups = calloc((size_t)n, sizeof *x->s->groups);
    if (!x->s->groups) return oom(x);
    x->s->ngroups = n;
    double total = 0;
    for (int i = 0; i < n; i++) {
        if (resolve_group(x, T, G, i) != 0) return -1;
        total += x->s->groups[i].count;
    }
    int i;
    if (G && scenario_first_dup(x->s->groups[0].name, sizeof *x->s->groups, n, &i) != 0)
        return oom(x);
    if (G && i >= 0) {
        char key[KEYTAB_KEY_MAX];
        snprintf(key, sizeof key, "tenants.groups.%d.name", i);
        const ynode_t *nm = ynode_get(G->items[i], "name");
        return keytab_err(&x->kc, nm ? nm : G->items[i], key,
                          "duplicate group name '%s'", x->s->groups[i].name);
    }
    if (total > MAX_TENANTS)
        return keytab_err(&x->kc, G ? G : T, "tenants",
                          "%.0f tenants in all; at most %.0f", total, MAX_TENANTS);
    x->s->ntenants = (int)total;
    return 0;
}

/* The section's keys come from the model it names (accept.h). */
static int resolve_acceptance(sctx_t *x)
{
    keytab_layer_t L = {ynode_get(x->root, "acceptance"), "acceptance"};
    return accept_cfg_resolve(&x->kc, &L, 1, &x->s->acceptance);
}

/* --- cloud.replica_groups ------------------------------------------------ */

/* A replica group's keys. Those it may set itself are resolved over two
 * layers, `cloud:` then the group, with the cloud's defaults; the cloud's
 * other keys are listed as skipped so that the `cloud:` layer passes the
 * key check (rgroup_cloud_wide refuses them inside a group). */
static const keytab_key_t RGROUP_BATCH_KEYS[] = {
    {.name = "order", KEYTAB_CUSTOM(rgroup_batching_t, order, const struct order_ops *),
     .sub = &REG_ORDER, .parse = parse_registered_key, .write = write_registered_key,
     .def = "fcfs"},
    {.name = "policy", .type = KT_SKIP},
    {.name = "max_batch", .type = KT_SKIP},
    {.name = "max_wait", .type = KT_SKIP},
    {.name = "max_tokens", .type = KT_SKIP},
    {.name = "multi_block", .type = KT_SKIP},
    END};

/* A replica group's own keys (written back per group; the table a group
 * is checked against). */
#define RGROUP_OWN_KEYS                                                                  \
    {.name = "name", KEYTAB_STRING(replica_group_t, name)},                              \
    {.name = "count", KEYTAB_INT(replica_group_t, count), .min = 1, .max = 1e5,          \
     .flags = KF_REQUIRED},                                                              \
    {.name = "gpu", KEYTAB_CUSTOM(replica_group_t, gpu, hw_card_t),                      \
     .aux = KEYTAB_CHARS(replica_group_t, gpu_ref), .parse = parse_hw,             \
     .write = write_hw, .def = "models/hardware/h200.yaml"},                             \
    {.name = "calibration", KEYTAB_PATH(replica_group_t, calibration),                   \
     .flags = KF_SKIPEMPTY},                                                             \
    {.name = "tensor_parallel", KEYTAB_INT(replica_group_t, tensor_parallel),            \
     .min = 1, .max = 1024, .def = "1"},                                                 \
    {.name = "kv_capacity", KEYTAB_NUM(replica_group_t, kv_capacity_bytes),              \
     .unit = UNIT_SIZE, .max = BIG, .def = "0",                                          \
     .zero_means = "0: GPU memory - target weights (unlimited with verify_time)"},       \
    {.name = "gpu_hour_usd", KEYTAB_NUM(replica_group_t, gpu_hour_usd), .max = 1e9,      \
     .flags = KF_SKIPEMPTY, .def = "0",                                                  \
     .zero_means = "0: no price (usd_per_mtok is NaN)"},                                 \
    {.name = "overhead", KEYTAB_NUM(replica_group_t, overhead), .unit = UNIT_DURATION,   \
     .max = BIG, .def = "0.5ms"},                                                        \
    {.name = "verify_time", KEYTAB_DIST(replica_group_t, verify_time),                   \
     .aux = KEYTAB_OFF(replica_group_t, has_verify_time, int), .unit = UNIT_DURATION,    \
     .max = BIG, .flags = KF_HAS},                                                       \
    {.name = "batching", KEYTAB_SECTION(replica_group_t, batching, rgroup_batching_t),   \
     .sub = RGROUP_BATCH_KEYS}

static const keytab_key_t RGROUP_KEYS[] = {RGROUP_OWN_KEYS, END};

/* The same with the cloud's other keys skipped, for the `cloud:` layer. */
static const keytab_key_t RGROUP_LAYER_KEYS[] = {
    RGROUP_OWN_KEYS,
    {.name = "replicas", .type = KT_SKIP},
    {.name = "target", .type = KT_SKIP},
    {.name = "precision", .type = KT_SKIP},
    {.name = "pinning", .type = KT_SKIP},
    {.name = "replica_groups", .type = KT_SKIP},
    END};

/* A key of group item gi (dotted `prefix`) that only the whole cloud may
 * set: every replica serves one target at one precision, and routing and
 * when batches form are the cluster's. */
static int rgroup_cloud_wide(sctx_t *x, const ynode_t *gi, const char *prefix)
{
    static const char *const wide[] = {"replicas", "target", "precision", "pinning",
                                       "replica_groups"};
    char key[KEYTAB_KEY_MAX];
    for (size_t i = 0; i < sizeof wide / sizeof *wide; i++) {
        const ynode_pair_t *p = ynode_find(gi, wide[i]);
        if (!p) continue;
        keytab_join(key, prefix, wide[i]);
        return err_set(x->kc.err, ERR_INPUT, "%s:%d:%d: %s: %s", p->ksrc, p->kline,
                       p->kcol, key, i == 0
                           ? "a replica group gives its size as count"
                           : "is cloud-wide: give it under cloud: (every replica "
                             "group shares it)");
    }
    const ynode_t *b = present(ynode_get(gi, "batching"));
    for (size_t i = 0; b && b->kind == YNODE_MAP && i < b->n; i++) {
        const ynode_pair_t *p = &b->pairs[i];
        if (!strcmp(p->key, "order")) continue;
        keytab_join(key, prefix, "batching");
        keytab_join(key, key, p->key);
        return err_set(x->kc.err, ERR_INPUT, "%s:%d:%d: %s: a replica group sets "
                       "only batching.order; the rest of cloud.batching is "
                       "cloud-wide", p->ksrc, p->kline, p->kcol, key);
    }
    return 0;
}

static int resolve_rgroup(sctx_t *x, const ynode_t *C, const ynode_t *G, int i)
{
    replica_group_t *g = &x->s->cloud.rgroups[i];
    const ynode_t *gi = G->items[i];
    char prefix[KEYTAB_KEY_MAX];
    snprintf(prefix, sizeof prefix, "cloud.replica_groups.%d", i);
    if (gi->kind != YNODE_MAP)
        return keytab_err(&x->kc, gi, prefix, "expected a mapping {name, count, gpu, "
                          "...}, got %s", ynode_kind_name(gi));
    if (rgroup_cloud_wide(x, gi, prefix) != 0) return -1;
    if (keytab_check_keys(&x->kc, RGROUP_KEYS, gi, prefix) != 0) return -1;
    keytab_layer_t L[2] = {{C, "cloud"}, {gi, prefix}};
    const ynode_t *where = x->kc.where;
    x->kc.where = gi;
    int rc = keytab_resolve(&x->kc, RGROUP_LAYER_KEYS, L, 2, g);
    x->kc.where = where;
    if (rc != 0 || check_group_name(x, gi, prefix, g->name) != 0) return -1;
    if (!g->name[0]) snprintf(g->name, sizeof g->name, "group%d", i);
    g->given = keys_given(RGROUP_KEYS, gi);
    return 0;
}

static int rgroup_names_unique(sctx_t *x, const ynode_t *G)
{
    const cloud_cfg_t *c = &x->s->cloud;
    int i;
    if (scenario_first_dup(c->rgroups[0].name, sizeof *c->rgroups, c->nrgroups, &i) != 0)
        return oom(x);
    if (i < 0) return 0;
    char key[KEYTAB_KEY_MAX];
    snprintf(key, sizeof key, "cloud.replica_groups.%d.name", i);
    const ynode_t *nm = ynode_get(G->items[i], "name");
    return keytab_err(&x->kc, nm ? nm : G->items[i], key,
                      "duplicate replica group name '%s'", c->rgroups[i].name);
}

/* cloud.replica_groups, written as tenants.groups is: a list of groups,
 * each inheriting the cloud's keys it does not give. cloud.replicas would
 * contradict the counts, so the two are never both given. */
static int resolve_replica_groups(sctx_t *x)
{
    const ynode_t *C = present(ynode_get(x->root, "cloud"));
    const ynode_pair_t *gp = C ? ynode_find(C, "replica_groups") : NULL;
    const ynode_t *G = gp ? present(gp->val) : NULL;
    if (!G) return 0;
    if (present(ynode_get(C, "replicas")))
        return err_set(x->kc.err, ERR_INPUT,
                       "%s:%d:%d: cloud.replica_groups: give either cloud.replicas or "
                       "cloud.replica_groups (each with its count), not both",
                       gp->ksrc, gp->kline, gp->kcol);
    if (G->kind != YNODE_SEQ)
        return keytab_err(&x->kc, G, "cloud.replica_groups",
                          "expected a list of groups, got %s", ynode_kind_name(G));
    if (G->n == 0) return keytab_err(&x->kc, G, "cloud.replica_groups", "the list is empty");
    if (G->n > 100000) return keytab_err(&x->kc, G, "cloud.replica_groups", "too many groups");
    cloud_cfg_t *c = &x->s->cloud;
    c->rgroups = calloc(G->n, sizeof *c->rgroups);
    if (!c->rgroups) return oom(x);
    c->nrgroups = (int)G->n;
    double total = 0;
    for (int i = 0; i < c->nrgroups; i++) {
        if (resolve_rgroup(x, C, G, i) != 0) return -1;
        total += c->rgroups[i].count;
    }
    if (rgroup_names_unique(x, G) != 0) return -1;
    if (total > 1e5)
        return keytab_err(&x->kc, G, "cloud.replica_groups",
                          "%.0f replicas in all; at most 100000", total);
    c->replicas = (int)total;
    return 0;
}

static void file_stem(const char *path, char *out, size_t outsz)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strcspn(b, ". ");
    if (n == 0) {
        b = "scenario";
        n = strlen(b);
    }
    if (n >= outsz) n = outsz - 1;
    memcpy(out, b, n);
    out[n] = 0;
}

static int resolve(sctx_t *x, const char *stem_of)
{
    scenario_t *s = x->s;
    keytab_layer_t L = {x->root, ""};
    if (keytab_resolve(&x->kc, TOP_KEYS, &L, 1, s) != 0) return -1;
    if (!s->name[0]) file_stem(stem_of, s->name, sizeof s->name);
    if (s->warmup >= s->duration) {
        const ynode_t *w = present(ynode_get(x->root, "warmup"));
        const char *key = w ? "warmup" : "duration";
        if (!w) w = present(ynode_get(x->root, "duration"));
        char d[64], wu[64];
        if (units_format(s->duration, UNIT_DURATION, d, sizeof d) < 0) d[0] = 0;
        if (units_format(s->warmup, UNIT_DURATION, wu, sizeof wu) < 0) wu[0] = 0;
        return keytab_err(&x->kc, w, key,
                          "warmup (%s) must be less than duration (%s)", wu, d);
    }
    if (resolve_acceptance(x) != 0) return -1;
    if (resolve_replica_groups(x) != 0) return -1;
    keytab_layer_t S = {ynode_get(x->root, "slo"), "slo"};
    if (keytab_resolve(&x->kc, SLO_KEYS, &S, 1, &s->slo) != 0) return -1;
    return resolve_tenants(x);
}

/* --- checks of the whole scenario -------------------------------------- */

/* Some checks need several sections at once (a batch token limit against
 * gamma, the cards against a calibration table), so they run once the
 * scenario is resolved — still with the node tree at hand, so their errors
 * point at the key as written, like every other. */

/* Where dotted key `key` (list items by index: tenants.groups.1.count) was
 * written: the mark of its value when the tree gives it; for a key left to
 * its default, the mark of the nearest enclosing key it gives, or of the
 * document. *at is filled and returned. */
static const ynode_t *written_at(const ynode_t *root, const char *key, ynode_t *at)
{
    *at = (ynode_t){.src = root->src, .line = root->line, .col = root->col};
    const ynode_t *cur = root;
    char seg[KEYTAB_KEY_MAX];
    for (const char *p = key; cur && *p;) {
        size_t n = strcspn(p, ".");
        if (n >= sizeof seg) break;
        memcpy(seg, p, n);
        seg[n] = 0;
        p += n + (p[n] == '.');
        const ynode_t *next = NULL;
        if (cur->kind == YNODE_MAP) {
            const ynode_pair_t *pr = ynode_find(cur, seg);
            if (!pr) break;
            *at = (ynode_t){.src = pr->ksrc, .line = pr->kline, .col = pr->kcol};
            next = pr->val;
        } else if (cur->kind == YNODE_SEQ && all_digits(seg) && n < 10 &&
                   (size_t)atol(seg) < cur->n) {
            next = cur->items[atol(seg)];
            *at = (ynode_t){.src = next->src, .line = next->line, .col = next->col};
        } else {
            break;
        }
        if (!*p) return next;
        cur = next;
    }
    return at;
}

static int written(const ynode_t *root, const char *key)
{
    ynode_t at;
    const ynode_t *n = written_at(root, key, &at);
    return n != &at;
}

/* The dotted key that sets per-tenant key `sub` ("edge.calibration") for
 * group g: the group's own, unless the scenario has no groups or the group
 * inherits a tenants-level key it does not override. */
static void group_key(const ynode_t *root, int g, const char *sub, char *key)
{
    char own[KEYTAB_KEY_MAX], shared[KEYTAB_KEY_MAX];
    snprintf(own, sizeof own, "tenants.groups.%d.%s", g, sub);
    keytab_join(shared, "tenants", sub);
    int grouped = written(root, "tenants.groups");
    const char *k = grouped && !written(root, own) && written(root, shared) ? shared
                    : grouped ? own : shared;
    snprintf(key, KEYTAB_KEY_MAX, "%s", k);
}

/* "WHERE: key: <message already in err>" at the key as written. */
static int blame_key(sctx_t *x, const char *key)
{
    if (x->kc.err->code != ERR_INPUT) return -1;
    char inner[ERR_MSG_MAX];
    snprintf(inner, sizeof inner, "%s", x->kc.err->msg);
    ynode_t at;
    return keytab_err(&x->kc, written_at(x->root, key, &at), key, "%s", inner);
}

/* `run` writes output.file only after simulating: a name whose suffix
 * names no format is refused now. */
static int check_output_file(sctx_t *x)
{
    const char *f = x->s->output.file;
    if (!f[0] || outpath_check(f, x->kc.err) == 0) return 0;
    return blame_key(x, "output.file");
}

/* A policy that maximises the protocol's closed-form rate cannot serve a
 * protocol that gives none (proto_ops_t.block_rate). */
static int check_gamma_rate(sctx_t *x)
{
    const scenario_t *s = x->s;
    ynode_t at;
    for (int gi = 0; gi < s->ngroups; gi++) {
        const protocol_cfg_t *p = scenario_group_protocol(s, gi);
        if (!p->proto->verifies || !p->gamma_policy->uses_rate || p->proto->block_rate)
            continue;
        const char *key = "protocol.gamma_policy";
        return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                          "'%s' maximises the closed-form rate of the protocol, which "
                          "protocol.mode '%s' does not give", p->gamma_policy->name,
                          p->proto->name);
    }
    return 0;
}

/* A block of gamma drafts is verified as gamma + 1 tokens in one iteration:
 * a smaller iteration limit could never verify one. */
static int check_token_limit(sctx_t *x)
{
    const scenario_t *s = x->s;
    int mt = s->cloud.batching.max_tokens;
    ynode_t at;
    /* Once, not per group: it walks every group (quadratic in their count). */
    int mixed = scenario_mixed(s);
    for (int gi = 0; gi < s->ngroups; gi++) {
        const protocol_cfg_t *p = scenario_group_protocol(s, gi);
        if (!p->proto->verifies) continue;
        int g = p->gamma_policy->limit(p->gamma);
        char whose[96] = "";
        if (mixed)
            snprintf(whose, sizeof whose, " of group %s", s->groups[gi].name);
        if (g < 1 || g > GAMMA_MAX) {
            const char *key = "protocol.gamma_policy";
            return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                              "policy '%s' allows gamma up to %d for gamma %d%s; "
                              "must be within [1, %d]", p->gamma_policy->name, g,
                              p->gamma, whose, GAMMA_MAX);
        }
        if (mt <= 0 || mt >= g + 1) continue;
        const char *key = "cloud.batching.max_tokens";
        return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                          "%d is below gamma + 1 = %d%s (the largest gamma policy "
                          "'%s' may use), so a block might never be verified",
                          mt, g + 1, whose, p->gamma_policy->name);
    }
    return 0;
}

/* The dotted key that set group gi's acceptance key `sub`: in its own
 * section when it gives it there, else the top level's. */
static void acceptance_key(const ynode_t *root, int gi, const char *sub, char *key)
{
    char own[KEYTAB_KEY_MAX];
    snprintf(own, sizeof own, "tenants.groups.%d.acceptance.%.64s", gi, sub);
    if (written(root, "tenants.groups") && written(root, own))
        snprintf(key, KEYTAB_KEY_MAX, "%s", own);
    else
        snprintf(key, KEYTAB_KEY_MAX, "acceptance.%.64s", sub);
}

/* A model's gamma check says "KEY: what": the message at that key. */
static int blame_accept_key(sctx_t *x, int gi)
{
    char *msg = x->kc.err->msg, sub[KEYTAB_KEY_MAX] = "model", key[KEYTAB_KEY_MAX];
    char *sep = strstr(msg, ": ");
    if (sep && (size_t)(sep - msg) < sizeof sub && !memchr(msg, ' ', (size_t)(sep - msg))) {
        snprintf(sub, sizeof sub, "%.*s", (int)(sep - msg), msg);
        memmove(msg, sep + 2, strlen(sep + 2) + 1);
    }
    acceptance_key(x->root, gi, sub, key);
    return blame_key(x, key);
}

/* Every verifying group's acceptance model can serve its blocks (a trace
 * of block lengths only at the gamma it was recorded at). */
static int check_accept_gamma(sctx_t *x)
{
    const scenario_t *s = x->s;
    for (int gi = 0; gi < s->ngroups; gi++) {
        const protocol_cfg_t *p = scenario_group_protocol(s, gi);
        if (!p->proto->verifies) continue;
        const accept_cfg_t *a = scenario_group_acceptance(s, gi);
        int lim = p->gamma_policy->limit(p->gamma);
        if (accept_cfg_check_gamma(a, p->gamma, x->kc.err) == 0 &&
            (lim == p->gamma || accept_cfg_check_gamma(a, lim, x->kc.err) == 0))
            continue;
        if (scenario_mixed(s)) {
            err_t *e = x->kc.err;
            size_t n = strlen(e->msg);
            snprintf(e->msg + n, sizeof e->msg - n, " (group %s)", s->groups[gi].name);
        }
        return blame_accept_key(x, gi);
    }
    return 0;
}

/* The dotted keys a service is built from. */
typedef struct svc_keys {
    char hw[KEYTAB_KEY_MAX], model[KEYTAB_KEY_MAX], table[KEYTAB_KEY_MAX];
} svc_keys_t;

/* Builds one service model, each input's error at that input's key: the
 * cards first, then the calibration table against them. */
static int build_service(sctx_t *x, const hw_card_t *hw, const llm_card_t *m,
                         int prec, const char *table, double overhead, int tp,
                         const svc_keys_t *k, struct service **out)
{
    err_t *err = x->kc.err;
    if (service_check_model(m, err) != 0) return blame_key(x, k->model);
    if (service_check_hardware(hw, prec, err) != 0) return blame_key(x, k->hw);
    *out = service_create_in(hw, m, prec, table, overhead, tp, x->kc.files, err);
    return *out ? 0 : blame_key(x, k->table);
}

/* A group's drafts and edge prefills come from the model when their times
 * are not given; `run` reports the draft's source even in cloud-only mode. */
static int build_edge_services(sctx_t *x)
{
    const scenario_t *s = x->s;
    for (int g = 0; g < s->ngroups; g++) {
        edge_cfg_t *e = &s->groups[g].edge;
        int prefill = scenario_group_protocol(s, g)->proto->drafts &&
                      !e->has_prefill_time;
        if (e->has_draft_time && !prefill) continue;
        svc_keys_t k;
        group_key(x->root, g, "edge.device", k.hw);
        group_key(x->root, g, "edge.draft", k.model);
        group_key(x->root, g, "edge.calibration", k.table);
        if (build_service(x, &e->device, &e->draft, e->quant, e->calibration,
                          e->overhead, 1, &k, &e->service) != 0)
            return -1;
    }
    return 0;
}

/* The dotted keys a cloud (or replica group k, k >= 0) is built from, each
 * the key that set it: the group's own when it gives it, else the cloud's. */
typedef struct rgroup_keys {
    char gpu[KEYTAB_KEY_MAX], tp[KEYTAB_KEY_MAX];
    svc_keys_t svc;
} rgroup_keys_t;

static void rgroup_key(const ynode_t *root, int k, const char *sub, char *key)
{
    char own[KEYTAB_KEY_MAX];
    snprintf(own, sizeof own, "cloud.replica_groups.%d.%s", k, sub);
    if (k >= 0 && (written(root, own) || !written(root, key)))
        snprintf(key, KEYTAB_KEY_MAX, "%s", own);
}

static void keys_of_cloud(const ynode_t *root, int k, rgroup_keys_t *o)
{
    snprintf(o->gpu, sizeof o->gpu, "cloud.gpu");
    snprintf(o->tp, sizeof o->tp, "cloud.tensor_parallel");
    snprintf(o->svc.model, sizeof o->svc.model, "cloud.target");
    snprintf(o->svc.table, sizeof o->svc.table, "cloud.calibration");
    rgroup_key(root, k, "gpu", o->gpu);
    rgroup_key(root, k, "tensor_parallel", o->tp);
    rgroup_key(root, k, "calibration", o->svc.table);
    snprintf(o->svc.hw, sizeof o->svc.hw, "%s", o->gpu);
}

/* The cloud's iterations come from the model without a verify_time; its KV
 * size whenever a capacity is given (the source is reported even in
 * edge-only mode). Without a capacity the target's weights must leave room
 * for KV in the GPU's memory. c: the cloud, or a replica group's view of it
 * (keys say which keys set it); *out gets the service. */
static int build_cloud_service_of(sctx_t *x, const cloud_cfg_t *c, const rgroup_keys_t *k,
                                  struct service **out)
{
    int uses_cloud = scenario_uses_cloud(x->s);
    int tp = c->tensor_parallel > 1 ? c->tensor_parallel : 1;
    /* Checked even without the model: the GPU count feeds the cost metrics. */
    if (service_check_parallel(&c->gpu, &c->target, tp,
                               c->has_verify_time ? NULL : c->calibration, x->kc.err) != 0)
        return blame_key(x, k->tp);
    if (c->has_verify_time && !(uses_cloud && c->kv_capacity_bytes > 0)) return 0;
    if (build_service(x, &c->gpu, &c->target, c->precision, c->calibration,
                      c->overhead, tp, &k->svc, out) != 0)
        return -1;
    double w = service_weight_bytes(*out);
    double mem = tp * c->gpu.mem_bytes;
    if (!uses_cloud || c->has_verify_time || c->kv_capacity_bytes > 0 || w < mem)
        return 0;
    ynode_t at;
    const char *gpu = k->gpu;
    if (tp > 1)
        return keytab_err(&x->kc, written_at(x->root, "cloud.target", &at), "cloud.target",
                          "%s weights (%.3g GB) do not fit in the memory of %d "
                          "%s %s (%.3g GB)", c->target.name, w / 1e9, tp,
                          gpu, c->gpu.name, mem / 1e9);
    return keytab_err(&x->kc, written_at(x->root, "cloud.target", &at), "cloud.target",
                      "%s weights (%.3g GB) do not fit in %s %s memory "
                      "(%.3g GB)", c->target.name, w / 1e9, gpu, c->gpu.name,
                      c->gpu.mem_bytes / 1e9);
}

/* The cloud's service, or with replica groups each group's (the cloud-level
 * keys are then only the groups' defaults, and no service of their own). */
static int build_cloud_service(sctx_t *x)
{
    cloud_cfg_t *c = &x->s->cloud;
    rgroup_keys_t k;
    if (!c->rgroups) {
        keys_of_cloud(x->root, -1, &k);
        return build_cloud_service_of(x, c, &k, &c->service);
    }
    for (int i = 0; i < c->nrgroups; i++) {
        cloud_cfg_t v;
        scenario_replica_group_view(x->s, i, &v);
        keys_of_cloud(x->root, i, &k);
        if (build_cloud_service_of(x, &v, &k, &c->rgroups[i].service) != 0) return -1;
    }
    return 0;
}

/* A workload's time_scale as applied: 0 stands for the default, 1 (kept 0
 * so that scenarios without a trace are written back without the key), so
 * an explicit 1 is the default. */
static double time_scale_of(const workload_cfg_t *w)
{
    return w->time_scale > 0 ? w->time_scale : 1;
}

/* Refuses groups g and g0 whose `sub` (workload.trace or workload.time_scale)
 * disagree, at g's key when g writes it, else at g0's (the one that departs
 * from what g inherits). */
static int refuse_trace_differs(sctx_t *x, int g, int g0, const char *sub)
{
    char key[KEYTAB_KEY_MAX];
    ynode_t at;
    group_key(x->root, g, sub, key);
    if (!written(x->root, key)) group_key(x->root, g0, sub, key);
    return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                      "every group with arrival: trace replays the same trace with "
                      "the same time_scale (one trace feeds the fleet; its tenant "
                      "column picks the tenant)");
}

/* One trace feeds every group with arrival: trace (its tenant column counts
 * over the whole fleet), so they must all name the same file and scale. */
static int check_trace_keys(sctx_t *x, int *first)
{
    const scenario_t *s = x->s;
    *first = -1;
    for (int g = 0; g < s->ngroups; g++) {
        const workload_cfg_t *w = &s->groups[g].workload;
        if (w->arrival != ARRIVAL_TRACE) continue;
        char key[KEYTAB_KEY_MAX];
        ynode_t at;
        group_key(x->root, g, "workload.trace", key);
        if (!w->trace[0])
            return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                              "required when arrival is trace (a request trace "
                              "CSV file)");
        if (*first < 0) {
            *first = g;
            continue;
        }
        const workload_cfg_t *w0 = &s->groups[*first].workload;
        if (strcmp(w->trace, w0->trace) != 0)
            return refuse_trace_differs(x, g, *first, "workload.trace");
        if (time_scale_of(w) != time_scale_of(w0))
            return refuse_trace_differs(x, g, *first, "workload.time_scale");
    }
    return 0;
}

/* Reads the request trace once, at load, so that a bad row is an input
 * error before anything runs. */
static int load_arrivals(sctx_t *x)
{
    scenario_t *s = x->s;
    int g0;
    if (check_trace_keys(x, &g0) != 0) return -1;
    if (g0 < 0) return 0;
    int n = s->ngroups, nt = s->ntenants;
    int *takes = calloc((size_t)nt, sizeof *takes);
    int *gfirst = calloc((size_t)n, sizeof *gfirst), *gcount = calloc((size_t)n, sizeof *gcount);
    const char **gname = calloc((size_t)n, sizeof *gname);
    int rc = 0;
    if (!takes || !gfirst || !gcount || !gname) rc = oom(x);
    for (int g = 0, base = 0; rc == 0 && g < n; base += s->groups[g++].count) {
        gfirst[g] = base;
        gcount[g] = s->groups[g].count;
        gname[g] = s->groups[g].name;
        for (int i = 0; i < gcount[g]; i++)
            takes[base + i] = s->groups[g].workload.arrival == ARRIVAL_TRACE;
    }
    if (rc == 0) {
        const workload_cfg_t *w = &s->groups[g0].workload;
        workload_trace_fleet_t fl = {nt, takes, n, gname, gfirst, gcount};
        s->arrivals = workload_trace_create_in(x->kc.files, w->trace, w->trace,
                                          time_scale_of(w),
                                          &fl, x->kc.err);
        if (!s->arrivals) rc = -1;
        /* A row's error names its line in the trace; one about the whole
         * file ("PATH: not a regular file", "PATH: no requests") names no
         * line: say which key gave the file, as for every other input. */
        size_t n0 = strlen(w->trace);
        const char *m = x->kc.err->msg;
        if (rc != 0 && strncmp(m, w->trace, n0) == 0 && m[n0] == ':' && m[n0 + 1] == ' ') {
            char key[KEYTAB_KEY_MAX];
            group_key(x->root, g0, "workload.trace", key);
            blame_key(x, key);
        }
    }
    for (int g = 0; rc == 0 && g < n; g++) s->groups[g].workload.replay = s->arrivals;
    free(takes);
    free(gfirst);
    free(gcount);
    free(gname);
    return rc;
}

/* ---- memory that cannot hold a request ------------------------------------ */
/* Self-contained: the edge device's memory against the draft model, and a
 * replica's whole KV cache against the longest request, refused at load
 * whenever the numbers are known here (sim/entity/ctenant.c refuses, at run time,
 * a request the cache cannot hold whose length was not bounded here). */

/* The most tokens a length distribution gives, rounded as sim/model/workload.c
 * rounds; -1 when unbounded. */
static double mem_max_tokens(const dist_t *d)
{
    double m;
    if (d->kind == DIST_CONST) m = d->a;
    else if (d->kind == DIST_UNIFORM) m = d->b;
    else if (d->kind == DIST_EMPIRICAL && d->n > 0) {
        m = d->values[0];
        for (size_t k = 1; k < d->n; k++) m = fmax(m, d->values[k]);
    } else return -1;
    m = nearbyint(m);
    return m < 1 ? 1 : fmin(m, 1073741824.0);
}

/* The prompt and output of the longest request (prompt + output) the
 * request trace gives group g's tenants (fleet indices first, first + 1,
 * ...); -1 for both when it gives none. */
static void mem_trace_max(const scenario_t *s, int g, int first, double *prompt,
                          double *output)
{
    const workload_trace_t *tr = s->arrivals;
    *prompt = *output = -1;
    for (int i = first; tr && i < first + s->groups[g].count && i < tr->ntenants; i++)
        for (long r = tr->first[i]; r < tr->first[i + 1]; r++)
            if (tr->req[r].prompt + tr->req[r].output > *prompt + *output) {
                *prompt = tr->req[r].prompt;
                *output = tr->req[r].output;
            }
}

/* Group g's longest prompt and output (-1 when unbounded); a trace's
 * longest request. first: the fleet index of the group's first tenant
 * (the callers walk the groups in order, so it costs nothing). */
static void mem_group_max(const scenario_t *s, int g, int first, double *prompt,
                          double *output)
{
    const tenant_group_t *G = &s->groups[g];
    if (G->workload.arrival == ARRIVAL_TRACE) {
        mem_trace_max(s, g, first, prompt, output);
        return;
    }
    *prompt = mem_max_tokens(&G->workload.prompt_tokens);
    *output = mem_max_tokens(&G->workload.output_tokens);
}

/* The draft's weights and its KV for the longest context (a request
 * trace's longest request; the mean context when lengths are unbounded)
 * must fit in the edge device's memory, when the draft's times come from
 * the model. */
static int check_edge_memory(sctx_t *x)
{
    const scenario_t *s = x->s;
    for (int g = 0, first = 0; g < s->ngroups; first += s->groups[g++].count) {
        const tenant_group_t *G = &s->groups[g];
        const protocol_cfg_t *p = scenario_group_protocol(s, g);
        const edge_cfg_t *e = &G->edge;
        /* A given draft_time abstracts the draft model away, memory too. */
        if (!p->proto->drafts || !e->service || e->has_draft_time ||
            !(e->device.mem_bytes > 0))
            continue;
        double mp, mo;
        mem_group_max(s, g, first, &mp, &mo);
        int bounded = mp > 0 && mo > 0;
        double ctx = bounded ? mp + mo
                             : dist_mean(&G->workload.prompt_tokens) +
                                   dist_mean(&G->workload.output_tokens);
        if (!bounded && G->workload.arrival == ARRIVAL_TRACE) ctx = 0;   /* no request */
        ctx += p->proto->verifies ? p->gamma_policy->limit(p->gamma) : 1;
        double w = service_weight_bytes(e->service);
        double kv = service_kv_bytes_per_token(e->service) * ctx;
        if (w + kv <= e->device.mem_bytes) continue;
        char key[KEYTAB_KEY_MAX];
        ynode_t at;
        group_key(x->root, g, "edge.draft", key);
        return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                          "%s at %s does not fit in edge.device %s: %.3g GB of weights "
                          "+ %.3g GB of KV for %.0f tokens (%s context) = %.3g GB, "
                          "the device has %.3g GB", e->draft.name,
                          precision_name(e->quant), e->device.name, w / 1e9, kv / 1e9,
                          ctx, bounded ? "the longest" : "a mean", (w + kv) / 1e9,
                          e->device.mem_bytes / 1e9);
    }
    return 0;
}

/* A replica's KV cache must hold the longest request (prompt + output + the
 * block room sim/entity/ctenant.c reserves), when both are known at load. c: the
 * cloud, or replica group gi's view of it (gi < 0: no groups), sv its
 * service. */
static int check_kv_room_of(sctx_t *x, const cloud_cfg_t *c, const struct service *sv, int gi)
{
    const scenario_t *s = x->s;
    if (!sv) return 0;
    double cap = c->kv_capacity_bytes > 0 ? c->kv_capacity_bytes
                 : c->has_verify_time ? INFINITY
                 : (c->tensor_parallel > 1 ? c->tensor_parallel : 1) * c->gpu.mem_bytes -
                       service_weight_bytes(sv);
    double per = service_kv_bytes_per_token(sv);
    for (int g = 0, first = 0; g < s->ngroups && isfinite(cap); first += s->groups[g++].count) {
        const protocol_cfg_t *p = scenario_group_protocol(s, g);
        if (!p->proto->uses_cloud) continue;
        double mp, mo;
        mem_group_max(s, g, first, &mp, &mo);
        if (!(mp > 0 && mo > 0)) continue;
        int extra = p->proto->verifies ? p->gamma_policy->limit(p->gamma) + 1 : 0;
        double need = (mp + mo + extra) * per;
        if (need <= cap) continue;
        char key[KEYTAB_KEY_MAX];
        snprintf(key, sizeof key, "%s",
                 c->kv_capacity_bytes > 0 ? "cloud.kv_capacity" : "cloud.gpu");
        rgroup_key(x->root, gi, c->kv_capacity_bytes > 0 ? "kv_capacity" : "gpu", key);
        ynode_t at;
        return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                          "a request of up to %.0f prompt + %.0f output tokens%s needs "
                          "%.6g bytes of KV (%.6g per token), more than a replica's whole "
                          "KV cache of %.6g bytes%s", mp, mo,
                          extra ? " (+ a block's room)" : "", need, per, cap,
                          c->kv_capacity_bytes > 0 ? ""
                                                   : " (GPU memory less the target's weights)");
    }
    return 0;
}

/* check_kv_room_of for the cloud, or for each replica group. */
static int check_kv_room(sctx_t *x)
{
    const cloud_cfg_t *c = &x->s->cloud;
    if (!scenario_uses_cloud(x->s)) return 0;
    if (!c->rgroups) return check_kv_room_of(x, c, c->service, -1);
    for (int i = 0; i < c->nrgroups; i++) {
        cloud_cfg_t v;
        scenario_replica_group_view(x->s, i, &v);
        if (check_kv_room_of(x, &v, c->rgroups[i].service, i) != 0) return -1;
    }
    return 0;
}

/* Commands that write no trace refuse output.trace: where it was given is
 * kept for their message (scenario_refuse_trace). */
static void note_trace_at(sctx_t *x)
{
    output_cfg_t *o = &x->s->output;
    o->trace_at[0] = '\0';
    if (!o->trace[0]) return;
    ynode_t at;
    const ynode_t *n = written_at(x->root, "output.trace", &at);
    ynode_where(o->trace_at, sizeof o->trace_at, n->src, n->line, n->col);
}

int scenario_refuse_trace(const scenario_t *s, const char *what, const char *hint,
                          err_t *err)
{
    if (!s->output.trace[0]) return 0;
    return err_set(err, ERR_INPUT, "%s: output.trace: %s writes no trace (%s)",
                   s->output.trace_at[0] ? s->output.trace_at : s->file, what, hint);
}

static int check_whole(sctx_t *x)
{
    note_trace_at(x);
    if (check_output_file(x) != 0 || check_gamma_rate(x) != 0 ||
        check_token_limit(x) != 0 || check_accept_gamma(x) != 0)
        return -1;
    if (load_arrivals(x) != 0) return -1;
    if (build_edge_services(x) != 0) return -1;
    if (build_cloud_service(x) != 0) return -1;
    return check_edge_memory(x) != 0 || check_kv_room(x) != 0 ? -1 : 0;
}

/* The directory relative data files are looked up in first: the
 * scenario's ("." for a file in the working directory). */
static void dir_of(const char *path, char *out, size_t outsz)
{
    const char *slash = strrchr(path, '/');
    size_t n = slash ? (size_t)(slash - path) : 0;
    if (slash && n == 0) n = 1; /* "/x.yaml" -> "/" */
    if (n >= outsz) n = 0;
    memcpy(out, path, n);
    out[n] = 0;
    if (n == 0) snprintf(out, outsz, ".");
}

/* A scenario's text parsed once: each load resolves a copy of the tree with
 * its overrides, and reads the files it names through one set, so every
 * load of a command sees the same inputs (a sweep's points, its
 * validation). */
struct scenario_src {
    char *name;          /* in messages: the path, "<stdin>" or the name */
    char *path;          /* as given (scenario_t.file), NULL for a string */
    char dir[SCEN_PATH_MAX]; /* "" for a string: the specsim root only */
    char *text;          /* the whole text */
    size_t len;
    ynode_t *root;       /* the tree without its sweep: and optimize:
                            sections (their own readers parse them), NULL =
                            every default */
    infiles_t *files;    /* owned */
    atomic_size_t cloned;/* nodes copied by loads so far */
    /* The text's "# read PATH sha256 HEX" lines (a sidecar's, or `check`
     * output's): what the files held when it was written. */
    struct src_read {
        char *path;
        uint8_t sha[SHA256_BYTES];
        int line;
        atomic_int warned;   /* a load found other bytes and said so */
    } *recorded;
    size_t nrecorded;
};

/* Collects the text's "# read" lines (scenario_src_t.recorded). Lines that
 * are not one are ignored: they are comments. 0, or -1 out of memory. */
static int src_recorded(scenario_src_t *sc)
{
    const char *p = sc->text, *end = sc->text + sc->len;
    for (int line = 1; p < end; line++) {
        const char *nl = memchr(p, '\n', (size_t)(end - p));
        size_t len = nl ? (size_t)(nl - p) : (size_t)(end - p);
        char path[SCEN_PATH_MAX];
        uint8_t sha[SHA256_BYTES];
        if (len && p[len - 1] == '\r') len--;
        if (infiles_reads_parse(p, len, path, sizeof path, sha) == 0) {
            struct src_read *r = realloc(sc->recorded, (sc->nrecorded + 1) * sizeof *r);
            if (!r) return -1;
            sc->recorded = r;
            r += sc->nrecorded;
            if (!(r->path = strdup(path))) return -1;
            sc->nrecorded++;
            memcpy(r->sha, sha, sizeof sha);
            r->line = line;
            atomic_init(&r->warned, 0);
        }
        p = nl ? nl + 1 : end;
    }
    return 0;
}

/* After a load: a file the text recorded that this command read again at
 * the same path with other bytes is not the experiment the sidecar
 * describes. Said once per file (a sweep loads many times, on many
 * threads); a file not read again is not compared (cards are written
 * inline, so a rerun does not read them). */
static void src_check_recorded(const scenario_src_t *sc)
{
    for (size_t i = 0; i < sc->nrecorded; i++) {
        struct src_read *r = &sc->recorded[i];
        uint8_t now[SHA256_BYTES];
        if (atomic_load(&r->warned) || !infiles_find_abs(sc->files, r->path, now) ||
            memcmp(now, r->sha, sizeof now) == 0 || atomic_exchange(&r->warned, 1))
            continue;
        char was[SHA256_HEX], is[SHA256_HEX];
        sha256_hex(r->sha, was);
        sha256_hex(now, is);
        err_warn("%s:%d: %s: the file holds other bytes than when this was written "
                 "(sha256 %s then, %s now): the rerun is not the same experiment",
                 sc->name, r->line, r->path, was, is);
    }
}

/* Drops `key` from the top-level mapping: the loader skips it, and a long
 * sweep list would make every load copy it. */
static void drop_section(ynode_t *root, const char *key)
{
    for (size_t i = 0; root && root->kind == YNODE_MAP && i < root->n; i++) {
        if (strcmp(root->pairs[i].key, key) != 0) continue;
        free(root->pairs[i].key);
        ynode_free(root->pairs[i].val);
        memmove(&root->pairs[i], &root->pairs[i + 1],
                (root->n - i - 1) * sizeof *root->pairs);
        root->n--;
        return;
    }
}

/* A file with no document (empty, or comments only) is refused: running
 * every default instead would hide a wrong or truncated file. A string may
 * be empty (callers build the scenario from overrides). */
static int src_parse(scenario_src_t *sc, int is_file, err_t *err)
{
    if (ynode_parse(sc->name, NULL, sc->text, sc->len, 1, 0, &sc->root, err) != 0)
        return -1;
    if (!sc->root || ynode_is_null(sc->root)) {
        ynode_free(sc->root);
        sc->root = NULL;
        if (is_file) return err_set(err, ERR_INPUT, "%s: empty scenario", sc->name);
        return 0;
    }
    if (sc->root->kind != YNODE_MAP)
        return err_set(err, ERR_INPUT, "%s:%d:%d: (top level): a scenario is a "
                       "mapping of sections, got %s", sc->name, sc->root->line,
                       sc->root->col, ynode_kind_name(sc->root));
    drop_section(sc->root, "sweep");
    drop_section(sc->root, "optimize");
    return 0;
}

static int src_new(const char *name, const char *path, const char *text,
                   size_t len, scenario_src_t **out, err_t *err)
{
    scenario_src_t *sc = calloc(1, sizeof *sc);
    *out = sc;
    if (!sc) return err_set(err, ERR_RUNTIME, "out of memory");
    atomic_init(&sc->cloned, 0);
    sc->name = strdup(name);
    sc->path = path ? strdup(path) : NULL;
    sc->files = infiles_create();
    sc->text = malloc(len + 1);
    if (!sc->name || (path && !sc->path) || !sc->files || !sc->text)
        return err_set(err, ERR_RUNTIME, "out of memory");
    memcpy(sc->text, text, len);
    sc->text[len] = 0;
    sc->len = len;
    if (src_recorded(sc) != 0) return err_set(err, ERR_RUNTIME, "out of memory");
    return 0;
}

int scenario_src_text(const char *path, const char *text, size_t len,
                      scenario_src_t **out, err_t *err)
{
    *out = NULL;
    if (strlen(path) >= SCEN_PATH_MAX)
        return err_set(err, ERR_INPUT, "%s: path too long", path);
    int is_stdin = strcmp(path, "-") == 0;
    if (src_new(is_stdin ? "<stdin>" : path, path, text, len, out, err) != 0 ||
        (dir_of(is_stdin ? "" : path, (*out)->dir, sizeof (*out)->dir),
         src_parse(*out, 1, err) != 0)) {
        scenario_src_free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

int scenario_src_open(const char *path, scenario_src_t **out, err_t *err)
{
    *out = NULL;
    char *text;
    size_t len;
    if (scenario_read(path, &text, &len, err) != 0) return -1;
    int rc = scenario_src_text(path, text, len, out, err);
    free(text);
    return rc;
}

int scenario_src_string(const char *name, const char *yaml, scenario_src_t **out,
                        err_t *err)
{
    if (src_new(name, NULL, yaml, strlen(yaml), out, err) != 0 ||
        src_parse(*out, 0, err) != 0) {
        scenario_src_free(*out);
        *out = NULL;
        return -1;
    }
    return 0;
}

void scenario_src_free(scenario_src_t *sc)
{
    if (!sc) return;
    free(sc->name);
    free(sc->path);
    free(sc->text);
    ynode_free(sc->root);
    infiles_free(sc->files);
    for (size_t i = 0; i < sc->nrecorded; i++) free(sc->recorded[i].path);
    free(sc->recorded);
    free(sc);
}

const char *scenario_src_body(const scenario_src_t *sc, size_t *len)
{
    if (len) *len = sc->len;
    return sc->text;
}

const char *scenario_src_name(const scenario_src_t *sc)
{
    return sc->name;
}

struct infiles *scenario_src_files(const scenario_src_t *sc)
{
    return sc->files;
}

size_t scenario_src_cloned(const scenario_src_t *sc)
{
    return atomic_load(&((scenario_src_t *)sc)->cloned);
}

int scenario_src_load(const scenario_src_t *sc, const scenario_override_t *ov,
                      int nov, scenario_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    ynode_t *root = sc->root ? ynode_clone(sc->root) : ynode_create_map(sc->name, 1, 1);
    if (!root) return err_set(err, ERR_RUNTIME, "out of memory");
    if (sc->root)
        atomic_fetch_add(&((scenario_src_t *)sc)->cloned, ynode_count(sc->root));
    int rc = 0;
    for (int i = 0, nset = 0; rc == 0 && i < nov; i++) {
        nset += !ov[i].src;
        set_ctx_t c = set_ctx(&ov[i], nset, err);
        rc = apply_override(root, &c);
    }
    if (rc == 0) {
        sctx_t x = {{err, sc->dir, root, NULL, sc->files}, root, out};
        rc = resolve(&x, sc->name);
        if (rc == 0) rc = check_whole(&x);
        out->given_known = 1;
    }
    ynode_free(root);
    if (rc != 0) {
        scenario_fini(out);
        return -1;
    }
    if (sc->path) {
        snprintf(out->file, sizeof out->file, "%s", sc->path);
        if (!strcmp(sc->path, "-") && !strcmp(out->name, "<stdin>"))
            snprintf(out->name, sizeof out->name, "stdin");
    }
    if (infiles_count(sc->files) > 0 && !(out->reads = infiles_reads_text(sc->files))) {
        scenario_fini(out);
        return err_set(err, ERR_RUNTIME, "out of memory");
    }
    src_check_recorded(sc);
    return 0;
}

int scenario_read(const char *path, char **text, size_t *len, err_t *err)
{
    return infile_read(path, INFILE_YAML_MAX, text, len, err);
}

int scenario_load_text(const char *path, const char *text, size_t len,
                       const scenario_override_t *ov, int nov, scenario_t *out,
                       err_t *err)
{
    memset(out, 0, sizeof *out);
    scenario_src_t *sc;
    if (scenario_src_text(path, text, len, &sc, err) != 0) return -1;
    int rc = scenario_src_load(sc, ov, nov, out, err);
    scenario_src_free(sc);
    return rc;
}

int scenario_load(const char *path, const scenario_override_t *ov, int nov,
                  scenario_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    scenario_src_t *sc;
    if (scenario_src_open(path, &sc, err) != 0) return -1;
    int rc = scenario_src_load(sc, ov, nov, out, err);
    scenario_src_free(sc);
    return rc;
}

int scenario_load_string(const char *name, const char *yaml,
                         const scenario_override_t *ov, int nov,
                         scenario_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    scenario_src_t *sc;
    if (scenario_src_string(name, yaml, &sc, err) != 0) return -1;
    int rc = scenario_src_load(sc, ov, nov, out, err);
    scenario_src_free(sc);
    return rc;
}

static void free_edge_cfg(edge_cfg_t *e)
{
    dist_fini(&e->draft_time);
    dist_fini(&e->prefill_time);
    service_free(e->service);
}

void scenario_fini(scenario_t *s)
{
    if (!s) return;
    for (int i = 0; s->groups && i < s->ngroups; i++) {
        tenant_group_t *g = &s->groups[i];
        free_edge_cfg(&g->edge);
        dist_fini(&g->network.jitter);
        dist_fini(&g->workload.think);
        dist_fini(&g->workload.prompt_tokens);
        dist_fini(&g->workload.output_tokens);
        accept_cfg_fini(&g->acceptance);
    }
    free(s->groups);
    workload_trace_free(s->arrivals);
    accept_cfg_fini(&s->acceptance);
    dist_fini(&s->cloud.verify_time);
    service_free(s->cloud.service);
    for (int i = 0; s->cloud.rgroups && i < s->cloud.nrgroups; i++) {
        dist_fini(&s->cloud.rgroups[i].verify_time);
        service_free(s->cloud.rgroups[i].service);
    }
    free(s->cloud.rgroups);
    free(s->reads);
    memset(s, 0, sizeof *s);
}

/* --- writing ------------------------------------------------------------- */

static int write_acceptance(FILE *f, const accept_cfg_t *a)
{
    if (fprintf(f, "acceptance:\n") < 0) return -1;
    return accept_cfg_write(f, a, 2);
}

static int write_sections(FILE *f, const tenant_group_t *g, int indent)
{
    for (size_t k = 0; k < sizeof TENANT_SECTIONS / sizeof *TENANT_SECTIONS; k++) {
        if (fprintf(f, "%*s%s:\n", indent, "", TENANT_SECTIONS[k].name) < 0) return -1;
        if (keytab_write(f, TENANT_SECTIONS[k].keys,
                         (const char *)g + TENANT_SECTIONS[k].off, indent + 2) != 0)
            return -1;
    }
    return 0;
}

/* The SLO keys of c that are set and (mask) wanted, under `slo:`; nothing
 * when none is. */
static int write_slo(FILE *f, const slo_cfg_t *c, unsigned mask, int indent)
{
    int head = 0;
    for (unsigned k = 0; SLO_KEYS[k].name; k++) {
        const double *v = (const double *)((const char *)c + SLO_KEYS[k].off);
        if (!((mask >> k) & 1u) || *v <= 0) continue;
        if (!head++ && fprintf(f, "%*sslo:\n", indent, "") < 0) return -1;
        if (keytab_write_key(f, &SLO_KEYS[k], c, indent + 2) != 0) return -1;
    }
    return 0;
}

/* A group's own SLO keys (those it gave; without that record, those that
 * differ from the top-level ones). */
static int write_group_slo(FILE *f, const scenario_t *s, const tenant_group_t *g)
{
    unsigned mask = g->slo_given;
    if (!s->given_known)
        mask = (g->slo.ttft != s->slo.ttft) | (unsigned)(g->slo.tpot != s->slo.tpot) << 1;
    return write_slo(f, &g->slo, mask, 6);
}

static int write_group_head(FILE *f, const scenario_t *s, const tenant_group_t *g)
{
    if (fprintf(f, "    - name: ") < 0 || keytab_write_string(f, g->name) != 0 ||
        fprintf(f, "\n      count: %d\n", g->count) < 0)
        return -1;
    if (g->priority && fprintf(f, "      priority: %d\n", g->priority) < 0) return -1;
    return write_group_slo(f, s, g);
}

/* A group's own speculation: the protocol keys it gave (all = every key,
 * for a scenario with no record of what was given) and, when it has one,
 * its whole acceptance section (which resolves to the same model whatever
 * the top level says). */
static int write_group_speculation(FILE *f, const tenant_group_t *g, int all)
{
    int head = 0;
    for (const keytab_key_t *k = PROTOCOL_KEYS; g->protocol.proto && k->name; k++) {
        unsigned bit = 1u << (unsigned)(k - PROTOCOL_KEYS);
        if (!all && !(g->given_protocol & bit)) continue;
        if (!head++ && fprintf(f, "      protocol:\n") < 0) return -1;
        if (keytab_write_key(f, k, &g->protocol, 8) != 0) return -1;
    }
    if (!g->acceptance.model) return 0;
    if (fprintf(f, "      acceptance:\n") < 0) return -1;
    return accept_cfg_write(f, &g->acceptance, 8);
}

/* 1 when group gi gave key number ki of tenant section sec itself (not
 * inherited). */
static int group_gave(const scenario_t *s, int gi, size_t sec, const keytab_key_t *k)
{
    size_t ki = (size_t)(k - TENANT_SECTIONS[sec].keys);
    return (s->groups[gi].given[sec] >> ki) & 1u;
}

/* Groups keep the inheritance they were written with: the shared keys once
 * under `tenants:` (from a group that inherits each, so its value is the
 * shared one), and per group only the keys it gave. Writing every key into
 * every group would resolve the same, but a later `tenants.*` override — a
 * sweep axis run from the sidecar, `check` output reused — would then reach
 * no group. */
static int write_grouped(FILE *f, const scenario_t *s)
{
    size_t ns = sizeof TENANT_SECTIONS / sizeof *TENANT_SECTIONS;
    for (size_t k = 0; k < ns; k++) {
        const char *sec = TENANT_SECTIONS[k].name;
        if (fprintf(f, "  %s:\n", sec) < 0) return -1;
        for (const keytab_key_t *kk = TENANT_SECTIONS[k].keys; kk->name; kk++) {
            if (kk->flags & KF_NOWRITE) continue;
            int gi = 0;
            while (gi < s->ngroups && group_gave(s, gi, k, kk)) gi++;
            if (gi == s->ngroups) gi = 0;
            const char *base = (const char *)&s->groups[gi] + TENANT_SECTIONS[k].off;
            if (keytab_write_key(f, kk, base, 4) != 0) return -1;
        }
    }
    if (fprintf(f, "  groups:\n") < 0) return -1;
    for (int i = 0; i < s->ngroups; i++) {
        const tenant_group_t *g = &s->groups[i];
        if (write_group_head(f, s, g) != 0) return -1;
        for (size_t k = 0; k < ns; k++) {
            const char *sec = TENANT_SECTIONS[k].name;
            const char *base = (const char *)g + TENANT_SECTIONS[k].off;
            int head = 0;
            for (const keytab_key_t *kk = TENANT_SECTIONS[k].keys; kk->name; kk++) {
                if ((kk->flags & KF_NOWRITE) || !group_gave(s, i, k, kk)) continue;
                if (!head++ && fprintf(f, "      %s:\n", sec) < 0) return -1;
                if (keytab_write_key(f, kk, base, 8) != 0) return -1;
            }
        }
        if (write_group_speculation(f, g, 0) != 0) return -1;
    }
    return 0;
}

static int write_tenants(FILE *f, const scenario_t *s)
{
    if (fprintf(f, "tenants:\n") < 0) return -1;
    if (s->ngroups == 1 && !strcmp(s->groups[0].name, "default")) {
        if (fprintf(f, "  count: %d\n", s->groups[0].count) < 0) return -1;
        return write_sections(f, &s->groups[0], 2);
    }
    if (s->given_known) return write_grouped(f, s);
    /* No record of what each group gave (a scenario not read from YAML):
     * every key in every group. */
    if (fprintf(f, "  groups:\n") < 0) return -1;
    for (int i = 0; i < s->ngroups; i++) {
        const tenant_group_t *g = &s->groups[i];
        if (write_group_head(f, s, g) != 0) return -1;
        if (write_sections(f, g, 6) != 0) return -1;
        if (write_group_speculation(f, g, 1) != 0) return -1;
    }
    return 0;
}

/* A comment with what group g resolved to, inherited keys included, and
 * the reference iteration that weighs it in routing (sim/entity/cloud.h). */
static int write_rgroup_resolved(FILE *f, const replica_group_t *g)
{
    char ref[64] = "n/a";
    double t = g->has_verify_time ? dist_mean(&g->verify_time)
               : g->service       ? service_ref_time(g->service)
                                  : NAN;
    if (isfinite(t)) snprintf(ref, sizeof ref, "%.4g ms", t * 1e3);
    const char *order = g->batching.order ? g->batching.order->name : "fcfs";
    return fprintf(f, "      # resolved: gpu %s x %d, %s, order %s; reference "
                   "iteration %s\n", g->gpu.name,
                   g->tensor_parallel > 1 ? g->tensor_parallel : 1,
                   g->has_verify_time ? "verify_time" : "service model", order,
                   ref) < 0 ? -1 : 0;
}

/* The cloud section; with replica groups, cloud.replicas gives way to the
 * groups, each with its count and the keys it gave (all of them for a
 * scenario with no record of what was given), the rest inherited from the
 * cloud keys written above them as they were read. */
static int write_cloud(FILE *f, const scenario_t *s)
{
    const cloud_cfg_t *c = &s->cloud;
    if (!c->rgroups) {
        for (const keytab_key_t *k = TOP_KEYS; k->name; k++)
            if (!strcmp(k->name, "cloud")) return keytab_write_key(f, k, s, 0);
        return -1;
    }
    if (fprintf(f, "cloud:\n") < 0) return -1;
    for (const keytab_key_t *k = CLOUD_KEYS; k->name; k++)
        if (strcmp(k->name, "replicas") != 0 && keytab_write_key(f, k, c, 2) != 0)
            return -1;
    if (fprintf(f, "  replica_groups:\n") < 0) return -1;
    for (int i = 0; i < c->nrgroups; i++) {
        const replica_group_t *g = &c->rgroups[i];
        if (fprintf(f, "    - name: ") < 0 || keytab_write_string(f, g->name) != 0 ||
            fprintf(f, "\n      count: %d\n", g->count) < 0)
            return -1;
        if (write_rgroup_resolved(f, g) != 0) return -1;
        for (const keytab_key_t *k = RGROUP_KEYS + 2; k->name; k++) {
            unsigned bit = 1u << (unsigned)(k - RGROUP_KEYS);
            if (s->given_known && !(g->given & bit)) continue;
            if (keytab_write_key(f, k, g, 6) != 0) return -1;
        }
    }
    return 0;
}

int scenario_write_yaml(const scenario_t *s, FILE *f)
{
    if (fprintf(f, "# specsim scenario, fully resolved%s%s\n",
                s->file[0] ? " from " : "", s->file) < 0)
        return -1;
    for (const keytab_key_t *k = TOP_KEYS; k->name; k++) {
        int rc = 0;
        if (!strcmp(k->name, "acceptance")) rc = write_acceptance(f, &s->acceptance);
        else if (!strcmp(k->name, "tenants")) rc = write_tenants(f, s);
        else if (!strcmp(k->name, "slo")) rc = write_slo(f, &s->slo, ~0u, 0);
        else if (!strcmp(k->name, "cloud")) rc = write_cloud(f, s);
        else if (!strcmp(k->name, "output") && !s->output.file[0] &&
                 !s->output.trace[0]) rc = 0;
        else rc = keytab_write_key(f, k, s, 0);
        if (rc != 0) return -1;
    }
    return ferror(f) ? -1 : 0;
}

int scenario_write_reads(const scenario_t *s, FILE *f)
{
    if (s->reads && fputs(s->reads, f) == EOF) return -1;
    return ferror(f) ? -1 : 0;
}

const tenant_group_t *scenario_tenant_group(const scenario_t *s, int tenant)
{
    int base = 0;
    for (int g = 0; g < s->ngroups; g++) {
        if (tenant < base + s->groups[g].count) return &s->groups[g];
        base += s->groups[g].count;
    }
    return NULL;
}

const protocol_cfg_t *scenario_group_protocol(const scenario_t *s, int g)
{
    const tenant_group_t *G = s->groups ? &s->groups[g] : NULL;
    return G && G->protocol.proto ? &G->protocol : &s->protocol;
}

const accept_cfg_t *scenario_group_acceptance(const scenario_t *s, int g)
{
    const tenant_group_t *G = s->groups ? &s->groups[g] : NULL;
    return G && G->acceptance.model ? &G->acceptance : &s->acceptance;
}

/* 1 when some group's protocol has the flag at byte offset off of
 * proto_ops_t. */
static int any_proto(const scenario_t *s, size_t off)
{
    for (int g = 0; g < (s->groups ? s->ngroups : 1); g++) {
        const proto_ops_t *p = scenario_group_protocol(s, g)->proto;
        if (*(const int *)((const char *)p + off)) return 1;
    }
    return 0;
}

int scenario_drafts(const scenario_t *s)
{
    return any_proto(s, offsetof(proto_ops_t, drafts));
}

int scenario_verifies(const scenario_t *s)
{
    return any_proto(s, offsetof(proto_ops_t, verifies));
}

int scenario_uses_cloud(const scenario_t *s)
{
    return any_proto(s, offsetof(proto_ops_t, uses_cloud));
}

int scenario_tensor_parallel(const scenario_t *s)
{
    return s->cloud.tensor_parallel > 1 ? s->cloud.tensor_parallel : 1;
}

int scenario_replica_groups(const scenario_t *s)
{
    return s->cloud.rgroups ? s->cloud.nrgroups : 1;
}

void scenario_replica_group_view(const scenario_t *s, int k, cloud_cfg_t *out)
{
    *out = s->cloud;
    out->rgroups = NULL;
    out->nrgroups = 0;
    if (!s->cloud.rgroups) return;
    const replica_group_t *g = &s->cloud.rgroups[k];
    out->replicas = g->count;
    memcpy(out->gpu_ref, g->gpu_ref, sizeof out->gpu_ref);
    out->gpu = g->gpu;
    memcpy(out->calibration, g->calibration, sizeof out->calibration);
    out->tensor_parallel = g->tensor_parallel;
    out->kv_capacity_bytes = g->kv_capacity_bytes;
    out->gpu_hour_usd = g->gpu_hour_usd;
    out->overhead = g->overhead;
    out->has_verify_time = g->has_verify_time;
    out->verify_time = g->verify_time;
    out->batching.order = g->batching.order;
    out->service = g->service;
}

const char *scenario_replica_group_name(const scenario_t *s, int k)
{
    return s->cloud.rgroups ? s->cloud.rgroups[k].name : "";
}

int scenario_mixed(const scenario_t *s)
{
    const protocol_cfg_t *t = &s->protocol;
    for (int g = 0; s->groups && g < s->ngroups; g++) {
        const protocol_cfg_t *p = scenario_group_protocol(s, g);
        if (p->proto != t->proto || p->gamma != t->gamma || p->window != t->window ||
            p->gamma_policy != t->gamma_policy || s->groups[g].acceptance.model)
            return 1;
    }
    return 0;
}

const char *scenario_mode_name(const scenario_t *s)
{
    return scenario_mixed(s) ? "mixed" : s->protocol.proto->name;
}
