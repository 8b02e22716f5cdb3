/* scenario_keys — the scenario's key tables (sim/io/keytab.h): every key,
 * its type, unit, range and default, and the custom key types (cards,
 * registry names, warm-up). Private to the loader (sim/config/scenario_int.h).
 */
#include "config/scenario_int.h"

#include <string.h>

#include "entity/proto.h"
#include "model/batch.h"
#include "model/drift.h"
#include "model/gamma.h"
#include "model/order.h"
#include "model/service.h"
#include "model/tree.h"
#include "stat/metrics.h"


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

/* --- precision: a fraction as 1% or 0.01, metric names ------------------- */

/* A number in (0, 1), written as a percentage ("1%", "95%") or a fraction. */
static int parse_fraction(keytab_ctx_t *c, const ynode_t *node, const char *key,
                          const keytab_key_t *k, void *base)
{
    double *out = (double *)((char *)base + k->off);
    const char *t = node->kind == YNODE_SCALAR ? node->str : NULL;
    char *end = NULL;
    double v = t ? strtod(t, &end) : NAN;
    if (end && *end == '%' && end[1] == '\0') v /= 100;
    else if (!end || end == t || *end) v = NAN;
    if (!(v > 0 && v < 1))
        return keytab_err(c, node, key, "'%s' is not a fraction in (0, 1) (e.g. 1%% "
                          "or 0.01)", t ? t : ynode_kind_name(node));
    *out = v;
    return 0;
}

static int write_fraction(FILE *f, const keytab_key_t *k, const void *base, int indent)
{
    (void)indent;
    return fprintf(f, " %.17g%%\n", 100 * *(const double *)((const char *)base + k->off)) < 0
               ? -1 : 0;
}

/* One metric name (sim/stat/metrics.h), with a "did you mean". */
static int parse_metric(keytab_ctx_t *c, const ynode_t *node, const char *key, int *id)
{
    const char *names[METRIC_COUNT];
    for (int m = 0; m < METRIC_COUNT; m++) names[m] = metric_name(m);
    size_t at;
    if (keytab_parse_choice(c, node, key, names, METRIC_COUNT, &at) != 0) return -1;
    *id = (int)at;
    return 0;
}

/* A metric name or a list of them, each once. */
static int parse_metrics(keytab_ctx_t *c, const ynode_t *node, const char *key,
                         const keytab_key_t *k, void *base)
{
    (void)k;
    precision_cfg_t *p = base;   /* the section's struct */
    size_t n = node->kind == YNODE_SEQ ? node->n : 1;
    if (n == 0 || n > PRECISION_METRICS_MAX)
        return keytab_err(c, node, key, "give 1 to %d metric names", PRECISION_METRICS_MAX);
    for (size_t i = 0; i < n; i++) {
        const ynode_t *it = node->kind == YNODE_SEQ ? node->items[i] : node;
        int id;
        if (parse_metric(c, it, key, &id) != 0) return -1;
        /* A stop that hung on the clock would differ from run to run. */
        if (metric_is_timing(id))
            return keytab_err(c, it, key, "%s differs between runs of the same seed, "
                              "so no stop may depend on it", metric_name(id));
        for (size_t j = 0; j < i; j++)
            if (p->metrics[j] == id)
                return keytab_err(c, it, key, "'%s' is named twice", metric_name(id));
        p->metrics[i] = id;
    }
    p->nmetrics = (int)n;
    return 0;
}

static int write_metrics(FILE *f, const keytab_key_t *k, const void *base, int indent)
{
    (void)indent;
    (void)k;
    const precision_cfg_t *p = base;
    int rc = fputs(" [", f) == EOF;
    for (int i = 0; i < p->nmetrics; i++)
        rc |= fprintf(f, "%s%s", i ? ", " : "", metric_name(p->metrics[i])) < 0;
    rc |= fputs("]\n", f) == EOF;
    return rc ? -1 : 0;
}

/* --- key tables ---------------------------------------------------------- */

static const char *const ARRIVAL_NAMES[] = {"closed", "poisson", "trace", NULL};
static const char *const PIN_NAMES[] = {"round-robin", "least-loaded",
                                        "power-of-two", NULL};

#define BIG 1e300
#define END {.name = NULL}

static const char *const FALLBACK_NAMES[] = {"off", "local", NULL};

/* protocol.fallback: written back only when it is on. */
static const keytab_key_t FALLBACK_KEYS[] = {
    {.name = "mode", KEYTAB_ENUM(fallback_cfg_t, mode, int), .sub = FALLBACK_NAMES,
     .def = "off", .flags = KF_SKIPEMPTY},
    {.name = "rtt_above", KEYTAB_NUM(fallback_cfg_t, rtt_above), .unit = UNIT_DURATION,
     .max = BIG, .def = "0s", .flags = KF_SKIPEMPTY,
     .zero_means = "0: only while the link is down"},
    {.name = "after", KEYTAB_INT(fallback_cfg_t, after), .min = 1, .max = 1e6,
     .aux = KEYTAB_OFF(fallback_cfg_t, has_after, int), .flags = KF_HAS, .def = "1"},
    END};

/* protocol.tree: the tree's nodes are the block's drafts, so gamma (the
 * block's drafts everywhere else: draft buffer, KV reserve, verify job)
 * becomes the node count; scenario_check refuses a written gamma that
 * differs. */
static int tree_parse_gamma(keytab_ctx_t *c, const ynode_t *node, const char *key,
                            const keytab_key_t *k, void *base)
{
    if (tree_parse_key(c, node, key, k, base) != 0) return -1;
    protocol_cfg_t *p = base;
    p->gamma = p->tree.n;
    return 0;
}

const keytab_key_t scenario_keys_protocol[] = {
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
    /* After gamma: a tree sets gamma to its node count (tree_parse_gamma). */
    {.name = "tree", KEYTAB_CUSTOM(protocol_cfg_t, tree, tree_t),
     .aux = KEYTAB_OFF(protocol_cfg_t, tree.present, char), .parse = tree_parse_gamma,
     .write = tree_write_key, .flags = KF_SKIPEMPTY},
    {.name = "fallback", KEYTAB_SECTION(protocol_cfg_t, fallback, fallback_cfg_t),
     .sub = FALLBACK_KEYS, .flags = KF_SKIPEMPTY},
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
    /* A precision or a named weight format (cards_weight_format_names), as
     * `specsim step --precision` takes them. */
    {.name = "quant", KEYTAB_ENUM(edge_cfg_t, quant, int), .sub = cards_weight_format_names,
     .def = "w4a16"},
    /* The device card's engines.NAME efficiency set (none: the card's own
     * efficiencies). Written back even when none: a tenant group's
     * `engine: none` must survive over a shared engine. */
    {.name = "engine", KEYTAB_ENUM(edge_cfg_t, engine, int), .sub = cards_engine_key_names,
     .def = "none"},
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

/* The shortest mean sojourn of a link state or outage: the link draws
 * every sojourn in turn, so a mean of nanoseconds would have it draw
 * billions between two messages. */
#define NET_MEAN_MIN 1e-3

/* One Markov state of tenants.network.states. Its rtt, uplink and
 * downlink default to the section's own keys (filled before the states are
 * read: they come first in NETWORK_KEYS). */
static const keytab_key_t STATE_KEYS[] = {
    {.name = "mean", KEYTAB_NUM(network_state_t, mean), .unit = UNIT_DURATION,
     .min = NET_MEAN_MIN, .max = BIG, .flags = KF_REQUIRED},
    {.name = "rtt", KEYTAB_NUM(network_state_t, rtt), .unit = UNIT_DURATION, .max = BIG},
    {.name = "uplink", KEYTAB_NUM(network_state_t, uplink_bps), .unit = UNIT_RATE,
     .max = BIG, .flags = KF_MIN_OPEN | KF_INF},
    {.name = "downlink", KEYTAB_NUM(network_state_t, downlink_bps), .unit = UNIT_RATE,
     .max = BIG, .flags = KF_MIN_OPEN | KF_INF},
    {.name = "up", KEYTAB_BOOL(network_state_t, up), .def = "true"},
    END};

/* tenants.network.states: a list of 2 to NETWORK_STATES_MAX mappings. */
static int parse_states(keytab_ctx_t *c, const ynode_t *node, const char *key,
                        const keytab_key_t *k, void *base)
{
    network_cfg_t *n = base;
    (void)k;
    if (node->kind != YNODE_SEQ)
        return keytab_err(c, node, key, "expected a list of states ({mean: 20s, rtt: "
                          "80ms, ...}), got %s", ynode_kind_name(node));
    if (node->n < 2 || node->n > NETWORK_STATES_MAX)
        return keytab_err(c, node, key, "%zu state%s; give 2 to %d", node->n,
                          node->n == 1 ? "" : "s", NETWORK_STATES_MAX);
    int any_up = 0;
    for (size_t i = 0; i < node->n; i++) {
        char pre[KEYTAB_KEY_MAX];
        snprintf(pre, sizeof pre, "%s.%zu", key, i);
        network_state_t *q = &n->states[i];
        *q = (network_state_t){.rtt = n->rtt, .uplink_bps = n->uplink_bps,
                               .downlink_bps = n->downlink_bps};
        keytab_layer_t L = {node->items[i], pre};
        if (!ynode_is_null(node->items[i]) && node->items[i]->kind != YNODE_MAP)
            return keytab_err(c, node->items[i], pre, "expected a mapping, got %s",
                              ynode_kind_name(node->items[i]));
        if (keytab_resolve(c, STATE_KEYS, &L, 1, q) != 0) return -1;
        for (const keytab_key_t *sk = STATE_KEYS; sk->name; sk++)
            if (ynode_get(node->items[i], sk->name))
                q->given |= 1u << (unsigned)(sk - STATE_KEYS);
        any_up |= q->up;
    }
    if (!any_up)
        return keytab_err(c, node, key, "every state is down (up: false): no message "
                          "could ever be sent");
    n->nstates = (int)node->n;
    return 0;
}

/* Each state as a block mapping of `mean` and the keys it gave: one it
 * left out follows its group's rtt, uplink and downlink, also when read
 * back under another group. (A state built in code, given none, is
 * written whole.) */
static int write_states(FILE *f, const keytab_key_t *k, const void *base, int indent)
{
    (void)k;
    const network_cfg_t *n = base;
    if (fputc('\n', f) == EOF) return -1;
    for (int i = 0; i < n->nstates; i++) {
        const network_state_t *st = &n->states[i];
        const keytab_key_t *q = STATE_KEYS;   /* mean: always given */
        if (fprintf(f, "%*s- ", indent + 2, "") < 0 || keytab_write_key(f, q, st, 0) != 0)
            return -1;
        for (q++; q->name; q++) {
            unsigned bit = 1u << (unsigned)(q - STATE_KEYS);
            if (st->given && !(st->given & bit)) continue;
            if (keytab_write_key(f, q, st, indent + 4) != 0) return -1;
        }
    }
    return 0;
}

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
    /* A link that varies in time: after the keys above, which the states
     * default to. */
    {.name = "trace", KEYTAB_PATH(network_cfg_t, trace), .flags = KF_SKIPEMPTY},
    {.name = "uplink_trace", KEYTAB_PATH(network_cfg_t, uplink_trace),
     .flags = KF_SKIPEMPTY},
    {.name = "downlink_trace", KEYTAB_PATH(network_cfg_t, downlink_trace),
     .flags = KF_SKIPEMPTY},
    {.name = "trace_stride", KEYTAB_NUM(network_cfg_t, trace_stride),
     .aux = KEYTAB_OFF(network_cfg_t, has_trace_stride, int), .unit = UNIT_DURATION,
     .max = BIG, .flags = KF_HAS},
    {.name = "mean_up", KEYTAB_NUM(network_cfg_t, mean_up), .unit = UNIT_DURATION,
     .min = NET_MEAN_MIN, .max = BIG, .flags = KF_SKIPEMPTY},
    {.name = "mean_down", KEYTAB_NUM(network_cfg_t, mean_down), .unit = UNIT_DURATION,
     .min = NET_MEAN_MIN, .max = BIG, .flags = KF_SKIPEMPTY},
    {.name = "states", KEYTAB_CUSTOM(network_cfg_t, nstates, int),
     .aux = KEYTAB_OFF(network_cfg_t, has_states, int), .flags = KF_HAS,
     .parse = parse_states, .write = write_states},
    END};

/* tenants.workload.session: written back only when given. */
static const keytab_key_t SESSION_KEYS[] = {
    {.name = "turns", KEYTAB_DIST(session_cfg_t, turns), .min = 1, .max = 1e6,
     .aux = KEYTAB_OFF(session_cfg_t, has_turns, int), .flags = KF_HAS},
    {.name = "gap", KEYTAB_DIST(session_cfg_t, gap), .unit = UNIT_DURATION, .max = BIG,
     .aux = KEYTAB_OFF(session_cfg_t, has_gap, int), .flags = KF_HAS},
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
    {.name = "session", KEYTAB_SECTION(workload_cfg_t, session, session_cfg_t),
     .sub = SESSION_KEYS, .flags = KF_SKIPEMPTY},
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

static const char *const PREFIX_CACHE_NAMES[] = {"none", "lru", NULL};

/* cloud.prefix_cache: written back only when it is on. */
static const keytab_key_t PREFIX_CACHE_KEYS[] = {
    {.name = "policy", KEYTAB_ENUM(prefix_cache_cfg_t, policy, int),
     .sub = PREFIX_CACHE_NAMES, .def = "none", .flags = KF_SKIPEMPTY},
    END};

/* cloud.draft_heads: written back only when given. */
static const keytab_key_t DRAFT_HEADS_KEYS[] = {
    {.name = "params", KEYTAB_NUM(draft_heads_cfg_t, params), .max = BIG,
     .flags = KF_MIN_OPEN | KF_SKIPEMPTY},
    {.name = "flops_per_token", KEYTAB_NUM(draft_heads_cfg_t, flops_per_token),
     .max = BIG, .flags = KF_MIN_OPEN | KF_SKIPEMPTY},
    END};

const keytab_key_t scenario_keys_cloud[] = {
    {.name = "replicas", KEYTAB_INT(cloud_cfg_t, replicas), .min = 1, .max = 1e5,
     .def = "1"},
    {.name = "gpu", KEYTAB_CUSTOM(cloud_cfg_t, gpu, hw_card_t),
     .aux = KEYTAB_CHARS(cloud_cfg_t, gpu_ref), .parse = parse_hw,
     .write = write_hw,
     .def = "models/hardware/h200.yaml"},
    {.name = "target", KEYTAB_CUSTOM(cloud_cfg_t, target, llm_card_t),
     .aux = KEYTAB_CHARS(cloud_cfg_t, target_ref), .parse = parse_llm,
     .write = write_llm, .def = "models/llm/llama-2-7b.yaml"},
    {.name = "precision", KEYTAB_ENUM(cloud_cfg_t, precision, int),
     .sub = cards_weight_format_names, .def = "fp16"},
    /* cloud.engine is also every replica group's default (RGROUP_OWN_KEYS). */
    {.name = "engine", KEYTAB_ENUM(cloud_cfg_t, engine, int), .sub = cards_engine_key_names,
     .def = "none"},
    /* The target's K,V cache; fp8 halves the bytes attention reads and each
     * cached token holds (service_opts_t.kv_bytes). Every replica group's. */
    {.name = "kv_precision", KEYTAB_ENUM(cloud_cfg_t, kv_precision, int),
     .sub = service_kv_precision_names, .def = "fp16"},
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
    /* cloud-spec's draft (docs/formats.md): written back only when given. */
    {.name = "draft", KEYTAB_CUSTOM(cloud_cfg_t, draft, llm_card_t),
     .aux = KEYTAB_CHARS(cloud_cfg_t, draft_ref), .parse = parse_llm,
     .write = write_llm, .flags = KF_SKIPEMPTY},
    {.name = "draft_precision", KEYTAB_ENUM(cloud_cfg_t, draft_precision, int),
     .sub = cards_weight_format_names, .aux = KEYTAB_OFF(cloud_cfg_t, has_draft_precision, int),
     .flags = KF_HAS, .def = "fp16"},
    {.name = "draft_time", KEYTAB_DIST(cloud_cfg_t, draft_time),
     .aux = KEYTAB_OFF(cloud_cfg_t, has_draft_time, int), .unit = UNIT_DURATION,
     .max = BIG, .flags = KF_HAS},
    {.name = "draft_heads", KEYTAB_SECTION(cloud_cfg_t, draft_heads, draft_heads_cfg_t),
     .sub = DRAFT_HEADS_KEYS, .flags = KF_SKIPEMPTY},
    {.name = "tensor_parallel", KEYTAB_INT(cloud_cfg_t, tensor_parallel),
     .min = 1, .max = 1024, .def = "1"},
    {.name = "gpu_hour_usd", KEYTAB_NUM(cloud_cfg_t, gpu_hour_usd), .max = 1e9,
     .flags = KF_SKIPEMPTY, .def = "0",
     .zero_means = "0: no price (usd_per_mtok is NaN)"},
    {.name = "prefix_cache", KEYTAB_SECTION(cloud_cfg_t, prefix_cache, prefix_cache_cfg_t),
     .sub = PREFIX_CACHE_KEYS, .flags = KF_SKIPEMPTY},
    {.name = "replica_groups", .type = KT_SKIP},   /* resolve_replica_groups */
    END};

static const keytab_key_t OUTPUT_KEYS[] = {
    {.name = "file", KEYTAB_STRING(output_cfg_t, file), .flags = KF_SKIPEMPTY},
    {.name = "trace", KEYTAB_STRING(output_cfg_t, trace), .flags = KF_SKIPEMPTY},
    END};

/* Both optional; 0 (not given) = no bound. Written only when given. */
const keytab_key_t scenario_keys_slo[] = {
    {.name = "ttft", KEYTAB_NUM(slo_cfg_t, ttft), .unit = UNIT_DURATION, .max = BIG,
     .flags = KF_MIN_OPEN | KF_SKIPEMPTY},
    {.name = "tpot", KEYTAB_NUM(slo_cfg_t, tpot), .unit = UNIT_DURATION, .max = BIG,
     .flags = KF_MIN_OPEN | KF_SKIPEMPTY},
    END};

/* Read only when the scenario gives `precision:` (resolve_precision). */
const keytab_key_t scenario_keys_precision[] = {
    {.name = "relative", KEYTAB_CUSTOM(precision_cfg_t, relative, double),
     .parse = parse_fraction, .write = write_fraction, .flags = KF_REQUIRED},
    {.name = "confidence", KEYTAB_CUSTOM(precision_cfg_t, confidence, double),
     .parse = parse_fraction, .write = write_fraction, .def = "95%"},
    {.name = "metrics", KEYTAB_CUSTOM(precision_cfg_t, nmetrics, int),
     .parse = parse_metrics, .write = write_metrics},
    {.name = "max_replications", KEYTAB_INT(precision_cfg_t, max_replications), .min = 2,
     .max = 1e6, .def = "1000"},
    END};

/* The defaults are assumptions, not measurements (docs/formats.md, "drift",
 * says why these sizes): a start spread of one typical block cycle, and
 * noise small enough to leave every mean where the service model puts it. */
static const keytab_key_t DRIFT_KEYS[] = {
    {.name = "start", KEYTAB_NUM(drift_cfg_t, start), .unit = UNIT_DURATION, .max = BIG,
     .def = "100ms"},
    {.name = "edge", KEYTAB_NUM(drift_cfg_t, edge_cv), .max = DRIFT_CV_MAX, .def = "0.02"},
    {.name = "cloud", KEYTAB_NUM(drift_cfg_t, cloud_cv), .max = DRIFT_CV_MAX, .def = "0.01"},
    END};

const keytab_key_t scenario_keys_top[] = {
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
     .sub = scenario_keys_protocol},
    {.name = "acceptance", .type = KT_SKIP},  /* the model's keys: resolve_acceptance */
    {.name = "tenants", .type = KT_SKIP},
    {.name = "cloud", KEYTAB_SECTION(scenario_t, cloud, cloud_cfg_t),
     .sub = scenario_keys_cloud},
    {.name = "output", KEYTAB_SECTION(scenario_t, output, output_cfg_t),
     .sub = OUTPUT_KEYS},
    {.name = "sweep", .type = KT_SKIP},
    {.name = "optimize", .type = KT_SKIP},   /* sim/run/optimize.c reads it */
    /* Resolved per group (resolve_slo): groups override it key by key. */
    {.name = "slo", .type = KT_SKIP},
    {.name = "precision", .type = KT_SKIP},  /* resolve_precision */
    {.name = "drift", KEYTAB_SECTION(scenario_t, drift, drift_cfg_t), .sub = DRIFT_KEYS},
    END};

const keytab_key_t scenario_keys_tenants[] = {
    {.name = "count", KEYTAB_INT(tenant_group_t, count), .min = 1, .max = MAX_TENANTS,
     .def = "1"},
    {.name = "edge", .type = KT_SKIP},
    {.name = "network", .type = KT_SKIP},
    {.name = "workload", .type = KT_SKIP},
    {.name = "groups", .type = KT_SKIP},
    END};

const keytab_key_t scenario_keys_group[] = {
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
const scenario_section_t scenario_keys_sections[SCENARIO_SECTIONS] = {
    {"edge", EDGE_KEYS, KEYTAB_OFF(tenant_group_t, edge, edge_cfg_t)},
    {"network", NETWORK_KEYS, KEYTAB_OFF(tenant_group_t, network, network_cfg_t)},
    {"workload", WORKLOAD_KEYS, KEYTAB_OFF(tenant_group_t, workload, workload_cfg_t)},
};

/* Dotted-path segments that name a card: a `--set` that descends into a
 * card given as a path turns it into {base: PATH} first. */
int scenario_keys_is_card(const char *seg)
{
    return !strcmp(seg, "device") || !strcmp(seg, "draft") ||
           !strcmp(seg, "gpu") || !strcmp(seg, "target");
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
     .sub = RGROUP_BATCH_KEYS},                                                          \
    {.name = "engine", KEYTAB_ENUM(replica_group_t, engine, int),                        \
     .sub = cards_engine_key_names, .def = "none"}

const keytab_key_t scenario_keys_rgroup[] = {RGROUP_OWN_KEYS, END};

/* The same with the cloud's other keys skipped, for the `cloud:` layer. */
const keytab_key_t scenario_keys_rgroup_layer[] = {
    RGROUP_OWN_KEYS,
    {.name = "replicas", .type = KT_SKIP},
    {.name = "target", .type = KT_SKIP},
    {.name = "draft", .type = KT_SKIP},
    {.name = "draft_precision", .type = KT_SKIP},
    {.name = "draft_time", .type = KT_SKIP},
    {.name = "draft_heads", .type = KT_SKIP},
    {.name = "precision", .type = KT_SKIP},
    {.name = "kv_precision", .type = KT_SKIP},
    {.name = "pinning", .type = KT_SKIP},
    {.name = "prefix_cache", .type = KT_SKIP},
    {.name = "replica_groups", .type = KT_SKIP},
    END};
