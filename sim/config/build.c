#include "config/build.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "entity/proto.h"
#include "io/keytab.h"
#include "model/gamma.h"

typedef struct bctx {
    const scenario_t *s;
    struct infiles *files;
    const build_where_t *where;
    err_t *err;
    build_t *b;
} bctx_t;

/* ---- keys and messages -------------------------------------------------- */

static void key_of(const bctx_t *x, const char *canonical, char *out)
{
    if (x->where) x->where->key(x->where->ctx, canonical, out, KEYTAB_KEY_MAX);
    else snprintf(out, KEYTAB_KEY_MAX, "%s", canonical);
}

/* err (already set) blamed on `key` (as key_of gave it). Without a place
 * to point at, the key leads the message. */
static int blame(const bctx_t *x, const char *key)
{
    err_t *e = x->err;
    if (e->code != ERR_INPUT) return -1;
    if (x->where) return x->where->blame(x->where->ctx, key, e);
    char inner[ERR_MSG_MAX];
    snprintf(inner, sizeof inner, "%s", e->msg);
    return err_set(e, ERR_INPUT, "%s: %s", key, inner);
}

__attribute__((format(printf, 3, 4)))
static int refuse(const bctx_t *x, const char *key, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    x->err->code = ERR_INPUT;
    vsnprintf(x->err->msg, sizeof x->err->msg, fmt, ap);
    va_end(ap);
    return blame(x, key);
}

static void group_key(const bctx_t *x, int g, const char *sub, char *out)
{
    char k[KEYTAB_KEY_MAX];
    snprintf(k, sizeof k, "tenants.groups.%d.%s", g, sub);
    key_of(x, k, out);
}

/* Replica group k's key `sub`; k < 0: the cloud without groups. */
static void cloud_key(const bctx_t *x, int k, const char *sub, char *out)
{
    char c[KEYTAB_KEY_MAX];
    if (k < 0) snprintf(c, sizeof c, "cloud.%s", sub);
    else snprintf(c, sizeof c, "cloud.replica_groups.%d.%s", k, sub);
    key_of(x, c, out);
}

/* ---- the request trace ---------------------------------------------------- */

/* One trace feeds every group with arrival: trace (the loader checked that
 * they name the same file and scale); its tenant column counts over the
 * whole fleet. */
static int load_arrivals(bctx_t *x, int g0)
{
    const scenario_t *s = x->s;
    int n = s->ngroups, nt = s->ntenants;
    int *takes = calloc((size_t)nt, sizeof *takes);
    int *gfirst = calloc((size_t)n, sizeof *gfirst), *gcount = calloc((size_t)n, sizeof *gcount);
    const char **gname = calloc((size_t)n, sizeof *gname);
    int rc = 0;
    if (!takes || !gfirst || !gcount || !gname)
        rc = err_set(x->err, ERR_RUNTIME, "out of memory");
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
        x->b->arrivals = workload_trace_create_in(x->files, w->trace, w->trace,
                                                  workload_time_scale(w), &fl, x->err);
        if (!x->b->arrivals) rc = -1;
        /* A row's error names its line in the trace; one about the whole
         * file ("PATH: not a regular file", "PATH: no requests") names no
         * line: say which key gave the file, as for every other input. */
        size_t n0 = strlen(w->trace);
        const char *m = x->err->msg;
        if (rc != 0 && strncmp(m, w->trace, n0) == 0 && m[n0] == ':' && m[n0 + 1] == ' ') {
            char key[KEYTAB_KEY_MAX];
            group_key(x, g0, "workload.trace", key);
            blame(x, key);
        }
    }
    free(takes);
    free(gfirst);
    free(gcount);
    free(gname);
    return rc;
}

static int build_arrivals(bctx_t *x)
{
    for (int g = 0; g < x->s->ngroups; g++)
        if (x->s->groups[g].workload.arrival == ARRIVAL_TRACE) return load_arrivals(x, g);
    return 0;
}

/* ---- link traces -------------------------------------------------------------- */

/* A reader's error about the whole file ("PATH: cannot open: ...") names
 * no line: say which key gave the file. Its errors about a line name the
 * key already. */
static int blame_file(const bctx_t *x, const char *path, const char *key)
{
    size_t n0 = strlen(path);
    const char *m = x->err->msg;
    if (strncmp(m, path, n0) == 0 && m[n0] == ':' && m[n0 + 1] == ' ') return blame(x, key);
    return -1;
}

/* The last group that read each kind of trace (CSV, Mahimahi up,
 * Mahimahi down; -1: none yet): a group naming the same file shares that
 * copy, so the groups that inherit one trace hold it once. */
typedef struct link_seen {
    int group[3];
} link_seen_t;

static const char *link_path(const network_cfg_t *n, int kind)
{
    return kind == 0 ? n->trace : kind == 1 ? n->uplink_trace : n->downlink_trace;
}

/* Copies H's trace of this kind to L: 1 when H has one. */
static int link_take(build_link_t *L, const build_link_t *H, int kind)
{
    if (kind == 0) L->trace = H->trace;
    else L->opp[kind - 1] = H->opp[kind - 1];
    return kind == 0 ? L->trace != NULL : L->opp[kind - 1] != NULL;
}

static int build_link(bctx_t *x, int g, link_seen_t *seen)
{
    const network_cfg_t *n = &x->s->groups[g].network;
    build_link_t *L = &x->b->link[g];
    char key[KEYTAB_KEY_MAX];
    int mm = n->uplink_trace[0] || n->downlink_trace[0];
    /* One source says what the rate and round trip do. */
    if (n->trace[0] && (mm || n->nstates)) {
        group_key(x, g, mm ? (n->uplink_trace[0] ? "network.uplink_trace"
                                                 : "network.downlink_trace")
                           : "network.states", key);
        return refuse(x, key, "a link follows one of trace, states, or the Mahimahi "
                      "uplink_trace/downlink_trace; this group also gives trace");
    }
    if (mm && n->nstates) {
        group_key(x, g, "network.states", key);
        return refuse(x, key, "a link follows one of trace, states, or the Mahimahi "
                      "uplink_trace/downlink_trace; this group gives both the last two");
    }
    if ((n->mean_up > 0) != (n->mean_down > 0)) {
        group_key(x, g, n->mean_up > 0 ? "network.mean_up" : "network.mean_down", key);
        return refuse(x, key, "outages need both mean_up and mean_down (the mean "
                      "times the link stays up and down)");
    }
    static const char *const KEY[3] = {"network.trace", "network.uplink_trace",
                                       "network.downlink_trace"};
    for (int k = 0; k < 3; k++) {
        const char *path = link_path(n, k);
        if (!path[0]) continue;
        int h = seen->group[k];
        if (h >= 0 && !strcmp(link_path(&x->s->groups[h].network, k), path) &&
            link_take(L, &x->b->link[h], k)) {
            L->borrowed |= 1u << k;
            continue;
        }
        group_key(x, g, KEY[k], key);
        int ok = k == 0 ? (L->trace = linktrace_read_csv(x->files, path, key, x->err)) != NULL
                        : (L->opp[k - 1] = linktrace_read_mahimahi(x->files, path, key,
                                                                   x->err)) != NULL;
        if (!ok) return blame_file(x, path, key);
        seen->group[k] = g;
    }
    return 0;
}

static int build_links(bctx_t *x)
{
    link_seen_t seen = {{-1, -1, -1}};
    for (int g = 0; g < x->s->ngroups; g++)
        if (build_link(x, g, &seen) != 0) return -1;
    return 0;
}

/* ---- service models ----------------------------------------------------------- */

/* The keys a service is built from, as written. */
typedef struct svc_keys {
    char hw[KEYTAB_KEY_MAX], model[KEYTAB_KEY_MAX], table[KEYTAB_KEY_MAX];
    char prec[KEYTAB_KEY_MAX], engine[KEYTAB_KEY_MAX];
} svc_keys_t;

/* Builds one service model, each input's error at that input's key: the
 * cards first, then the calibration table against them. A card that serves
 * fp16 but lacks the peak of the precision asked for (fp8, w4a4) is the
 * precision's key's error, not the card's. */
static int build_service(bctx_t *x, const hw_card_t *card, int engine, int format,
                         double kv_bytes, const llm_card_t *m, const char *table,
                         double overhead, int tp, const svc_keys_t *k, service_t **out)
{
    if (service_check_model(m, x->err) != 0) return blame(x, k->model);
    /* The engine's efficiency set and the weight format's precision and
     * bytes, exactly as `specsim step --engine --precision` applies them;
     * only a card without the engine's set fails here. */
    hw_card_t hw = *card;
    int prec;
    double wb;
    if (cards_serving_setup(&hw, engine - 1, format, &prec, &wb, x->err) != 0)
        return blame(x, k->engine);
    if (service_check_hardware(&hw, prec, x->err) != 0) {
        err_t fp16 = {0, {0}};
        return blame(x, service_check_hardware(&hw, PREC_FP16, &fp16) == 0 ? k->prec : k->hw);
    }
    service_opts_t o = {.precision = prec, .weight_bytes = wb, .kv_bytes = kv_bytes,
                        .calibration = table, .overhead_s = overhead, .tp = tp,
                        .files = x->files};
    *out = service_create_opts(&hw, m, &o, x->err);
    /* An fp8 cache refuses a calibration table: the table's key says so. */
    return *out ? 0 : blame(x, k->table);
}

/* A group's drafts and edge prefills come from the model when their times
 * are not given; `run` reports the draft's source even in cloud-only mode. */
static int build_edge_services(bctx_t *x)
{
    const scenario_t *s = x->s;
    for (int g = 0; g < s->ngroups; g++) {
        const edge_cfg_t *e = &s->groups[g].edge;
        int prefill = scenario_group_protocol(s, g)->proto->drafts && !e->has_prefill_time;
        if (e->has_draft_time && !prefill) continue;
        svc_keys_t k;
        group_key(x, g, "edge.device", k.hw);
        group_key(x, g, "edge.draft", k.model);
        group_key(x, g, "edge.calibration", k.table);
        group_key(x, g, "edge.quant", k.prec);
        group_key(x, g, "edge.engine", k.engine);
        if (build_service(x, &e->device, e->engine, e->quant, 0, &e->draft, e->calibration,
                          e->overhead, 1, &k, &x->b->edge[g]) != 0)
            return -1;
    }
    return 0;
}

static int tp_of(const cloud_cfg_t *c)
{
    return c->tensor_parallel > 1 ? c->tensor_parallel : 1;
}

/* The target's weights must leave room for KV in the GPUs' memory when
 * the capacity is derived from it. */
static int check_weights_fit(bctx_t *x, const cloud_cfg_t *c, const char *gpu, double w)
{
    int tp = tp_of(c);
    double mem = tp * c->gpu.mem_bytes;
    if (w < mem) return 0;
    char key[KEYTAB_KEY_MAX];
    key_of(x, "cloud.target", key);
    if (tp > 1)
        return refuse(x, key, "%s weights (%.3g GB) do not fit in the memory of %d "
                      "%s %s (%.3g GB)", c->target.name, w / 1e9, tp, gpu, c->gpu.name,
                      mem / 1e9);
    return refuse(x, key, "%s weights (%.3g GB) do not fit in %s %s memory (%.3g GB)",
                  c->target.name, w / 1e9, gpu, c->gpu.name, c->gpu.mem_bytes / 1e9);
}

/* cloud-spec's draft on a replica of c (group k; k < 0: no groups): a
 * model card run on the group's GPU (the datasheet roofline at
 * cloud.draft_precision, the cloud's overhead per iteration), or draft
 * heads attached to the target (at cloud.precision), unless
 * cloud.draft_time fixes its steps. One of them must be given when some
 * tenant drafts on the cloud; heads are checked whenever given. */
static int build_cloud_draft(bctx_t *x, const cloud_cfg_t *c, int k, build_replica_t *r)
{
    const draft_heads_cfg_t *h = &c->draft_heads;
    int heads = h->params > 0 || h->flops_per_token > 0;
    char key[KEYTAB_KEY_MAX];
    if (heads) {
        key_of(x, "cloud.draft_heads", key);
        if (!(h->params > 0 && h->flops_per_token > 0))
            return refuse(x, key, "give both params and flops_per_token");
        if (c->draft_ref[0])
            return refuse(x, key, "the cloud's draft is a model (cloud.draft) or "
                          "heads on the target (cloud.draft_heads), not both");
    }
    if (!proto_any_cloud_drafts(x->s) || c->has_draft_time) return 0;
    if (heads) {
        r->has_heads = 1;
        if (service_heads_serving(&r->heads, &c->gpu, c->engine - 1, c->precision, h->params,
                                  h->flops_per_token, c->overhead, x->err) == 0)
            return 0;
        /* A card without the engine's set is the engine key's error. */
        hw_card_t hw = c->gpu;
        int prec;
        double wb;
        err_t e2 = {0, {0}};
        cloud_key(x, k, cards_serving_setup(&hw, c->engine - 1, c->precision, &prec, &wb,
                                            &e2) != 0 ? "engine" : "gpu", key);
        return blame(x, key);
    }
    if (!c->draft_ref[0]) {
        key_of(x, "protocol.mode", key);
        return refuse(x, key, "drafting on the cloud needs cloud.draft (the draft's "
                      "model card), cloud.draft_heads (heads on the target) or "
                      "cloud.draft_time (a fixed draft step)");
    }
    svc_keys_t sk;
    cloud_key(x, k, "gpu", sk.hw);
    key_of(x, "cloud.draft", sk.model);
    key_of(x, "cloud.draft", sk.table);
    key_of(x, "cloud.draft_precision", sk.prec);
    cloud_key(x, k, "engine", sk.engine);
    return build_service(x, &c->gpu, c->engine, c->draft_precision, 0, &c->draft, NULL,
                         c->overhead, 1, &sk, &r->dsv);
}

/* The cloud's iterations come from the model without a verify_time; its KV
 * size whenever a capacity is given (the source is reported even in
 * edge-only mode). c: the cloud, or replica group k's view of it (k < 0:
 * no groups); r gets the service and the KV sizing. */
static int build_replica(bctx_t *x, const cloud_cfg_t *c, int k, build_replica_t *r)
{
    int uses_cloud = proto_any_cloud(x->s);
    int tp = tp_of(c);
    svc_keys_t sk;
    char tpk[KEYTAB_KEY_MAX];
    cloud_key(x, k, "gpu", sk.hw);
    cloud_key(x, k, "tensor_parallel", tpk);
    cloud_key(x, k, "calibration", sk.table);
    key_of(x, "cloud.target", sk.model);
    key_of(x, "cloud.precision", sk.prec);
    cloud_key(x, k, "engine", sk.engine);
    *r = (build_replica_t){.kv_capacity = INFINITY};
    /* Checked even without the model: the GPU count feeds the cost metrics. */
    if (service_check_parallel(&c->gpu, &c->target, tp,
                               c->has_verify_time ? NULL : c->calibration, x->err) != 0)
        return blame(x, tpk);
    if (build_cloud_draft(x, c, k, r) != 0) return -1;
    if (c->has_verify_time && !(uses_cloud && c->kv_capacity_bytes > 0)) return 0;
    if (build_service(x, &c->gpu, c->engine, c->precision,
                      service_kv_precision_bytes_at(c->kv_precision),
                      &c->target, c->calibration, c->overhead, tp, &sk, &r->sv) != 0)
        return -1;
    /* The cloud's draft model shares the GPUs' memory with the target. */
    double w = service_weight_bytes(r->sv) + (r->dsv ? service_weight_bytes(r->dsv) : 0) +
               (r->has_heads ? r->heads.bytes : 0);
    if (uses_cloud && !c->has_verify_time && !(c->kv_capacity_bytes > 0) &&
        check_weights_fit(x, c, sk.hw, w) != 0)
        return -1;
    if (!uses_cloud) return 0;
    /* With a fixed verify time the GPU is abstracted away: KV is limited
     * only when a capacity is given explicitly. */
    r->kv_bytes_per_token = service_kv_bytes_per_token(r->sv);
    r->kv_capacity = c->kv_capacity_bytes > 0 ? c->kv_capacity_bytes
                                               : tp * c->gpu.mem_bytes - w;
    return 0;   /* > 0: check_weights_fit refused weights that leave none */
}

/* The cloud's service, or with replica groups each group's (the cloud-level
 * keys are then only the groups' defaults, and no service of their own). */
static int build_cloud(bctx_t *x)
{
    const scenario_t *s = x->s;
    if (!s->cloud.rgroups) return build_replica(x, &s->cloud, -1, &x->b->replica[0]);
    for (int k = 0; k < s->cloud.nrgroups; k++) {
        cloud_cfg_t v;
        scenario_replica_group_view(s, k, &v);
        if (build_replica(x, &v, k, &x->b->replica[k]) != 0) return -1;
    }
    return 0;
}

/* ---- memory that cannot hold a request ------------------------------------ */
/* The edge device's memory against the draft model, and a replica's whole
 * KV cache against the longest request, refused here whenever the numbers
 * are known (sim/entity/ctenant.c refuses, at run time, a request the cache
 * cannot hold whose length was not bounded here). */

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
static void mem_trace_max(const bctx_t *x, int g, int first, double *prompt,
                          double *output)
{
    const workload_trace_t *tr = x->b->arrivals;
    *prompt = *output = -1;
    for (int i = first; tr && i < first + x->s->groups[g].count && i < tr->ntenants; i++)
        for (long r = tr->first[i]; r < tr->first[i + 1]; r++)
            if (tr->req[r].prompt + tr->req[r].output > *prompt + *output) {
                *prompt = tr->req[r].prompt;
                *output = tr->req[r].output;
            }
}

/* Group g's longest prompt and output (-1 when unbounded); a trace's
 * longest request. first: the fleet index of the group's first tenant
 * (the callers walk the groups in order, so it costs nothing). */
static void mem_group_max(const bctx_t *x, int g, int first, double *prompt,
                          double *output)
{
    const tenant_group_t *G = &x->s->groups[g];
    if (G->workload.arrival == ARRIVAL_TRACE) {
        mem_trace_max(x, g, first, prompt, output);
        return;
    }
    *prompt = mem_max_tokens(&G->workload.prompt_tokens);
    *output = mem_max_tokens(&G->workload.output_tokens);
}

/* The draft's weights and its KV for the longest context (a request
 * trace's longest request; the mean context when lengths are unbounded)
 * must fit in the edge device's memory, when the draft's times come from
 * the model. */
static int check_edge_memory(bctx_t *x)
{
    const scenario_t *s = x->s;
    for (int g = 0, first = 0; g < s->ngroups; first += s->groups[g++].count) {
        const tenant_group_t *G = &s->groups[g];
        const protocol_cfg_t *p = scenario_group_protocol(s, g);
        const edge_cfg_t *e = &G->edge;
        const service_t *sv = x->b->edge[g];
        /* A given draft_time abstracts the draft model away, memory too. */
        if (!p->proto->drafts || !sv || e->has_draft_time || !(e->device.mem_bytes > 0))
            continue;
        double mp, mo;
        mem_group_max(x, g, first, &mp, &mo);
        int bounded = mp > 0 && mo > 0;
        double ctx = bounded ? mp + mo
                             : dist_mean(&G->workload.prompt_tokens) +
                                   dist_mean(&G->workload.output_tokens);
        if (!bounded && G->workload.arrival == ARRIVAL_TRACE) ctx = 0;   /* no request */
        ctx += p->proto->verifies ? p->gamma_policy->limit(p->gamma) : 1;
        double w = service_weight_bytes(sv);
        double kv = service_kv_bytes_per_token(sv) * ctx;
        if (w + kv <= e->device.mem_bytes) continue;
        char key[KEYTAB_KEY_MAX];
        group_key(x, g, "edge.draft", key);
        return refuse(x, key,
                      "%s at %s does not fit in edge.device %s: %.3g GB of weights "
                      "+ %.3g GB of KV for %.0f tokens (%s context) = %.3g GB, "
                      "the device has %.3g GB", e->draft.name, cards_weight_format_names[e->quant],
                      e->device.name, w / 1e9, kv / 1e9, ctx,
                      bounded ? "the longest" : "a mean", (w + kv) / 1e9,
                      e->device.mem_bytes / 1e9);
    }
    return 0;
}

/* A replica's KV cache must hold the longest request (prompt + output + the
 * block room sim/entity/ctenant.c reserves), when both are known here. c:
 * the cloud, or replica group k's view of it (k < 0: no groups). */
static int check_kv_room_of(bctx_t *x, const cloud_cfg_t *c, const build_replica_t *r, int k)
{
    const scenario_t *s = x->s;
    double cap = r->kv_capacity;
    for (int g = 0, first = 0; r->sv && g < s->ngroups && isfinite(cap);
         first += s->groups[g++].count) {
        const protocol_cfg_t *p = scenario_group_protocol(s, g);
        if (!p->proto->uses_cloud) continue;
        double mp, mo;
        mem_group_max(x, g, first, &mp, &mo);
        if (!(mp > 0 && mo > 0)) continue;
        int extra = p->proto->verifies ? p->gamma_policy->limit(p->gamma) + 1 : 0;
        double need = (mp + mo + extra) * r->kv_bytes_per_token;
        if (need <= cap) continue;
        char key[KEYTAB_KEY_MAX];
        cloud_key(x, k, c->kv_capacity_bytes > 0 ? "kv_capacity" : "gpu", key);
        return refuse(x, key,
                      "a request of up to %.0f prompt + %.0f output tokens%s needs "
                      "%.6g bytes of KV (%.6g per token), more than a replica's whole "
                      "KV cache of %.6g bytes%s", mp, mo, extra ? " (+ a block's room)" : "",
                      need, r->kv_bytes_per_token, cap,
                      c->kv_capacity_bytes > 0 ? ""
                                               : " (GPU memory less the target's weights)");
    }
    return 0;
}

static int check_kv_room(bctx_t *x)
{
    const scenario_t *s = x->s;
    if (!proto_any_cloud(s)) return 0;
    if (!s->cloud.rgroups) return check_kv_room_of(x, &s->cloud, &x->b->replica[0], -1);
    for (int k = 0; k < s->cloud.nrgroups; k++) {
        cloud_cfg_t v;
        scenario_replica_group_view(s, k, &v);
        if (check_kv_room_of(x, &v, &x->b->replica[k], k) != 0) return -1;
    }
    return 0;
}

/* ---- the whole ----------------------------------------------------------------- */

build_t *build_create(const scenario_t *s, struct infiles *files,
                      const build_where_t *where, err_t *err)
{
    build_t *b = calloc(1, sizeof *b);
    int nr = scenario_replica_groups(s);
    if (b) {
        b->ngroups = s->ngroups;
        b->nreplica = nr;
        b->edge = calloc((size_t)s->ngroups, sizeof *b->edge);
        b->replica = calloc((size_t)nr, sizeof *b->replica);
        b->link = calloc((size_t)s->ngroups, sizeof *b->link);
    }
    if (!b || !b->edge || !b->replica || !b->link) {
        build_free(b);
        err_set(err, ERR_RUNTIME, "out of memory");
        return NULL;
    }
    bctx_t x = {s, files, where, err, b};
    if (build_arrivals(&x) != 0 || build_links(&x) != 0 || build_edge_services(&x) != 0 ||
        build_cloud(&x) != 0 || check_edge_memory(&x) != 0 || check_kv_room(&x) != 0) {
        build_free(b);
        return NULL;
    }
    return b;
}

void build_free(build_t *b)
{
    if (!b) return;
    for (int g = 0; b->edge && g < b->ngroups; g++) service_free(b->edge[g]);
    for (int k = 0; b->replica && k < b->nreplica; k++) {
        service_free(b->replica[k].sv);
        service_free(b->replica[k].dsv);
    }
    for (int g = 0; b->link && g < b->ngroups; g++) {
        const build_link_t *L = &b->link[g];
        if (!(L->borrowed & 1u)) linktrace_free(L->trace);
        if (!(L->borrowed & 2u)) linkopp_free(L->opp[0]);
        if (!(L->borrowed & 4u)) linkopp_free(L->opp[1]);
    }
    free(b->edge);
    free(b->replica);
    free(b->link);
    workload_trace_free(b->arrivals);
    free(b);
}
