/* analytic — closed-form predictions for a whole scenario: service times,
 * each registered protocol's closed form for one tenant (its own file
 * computes it, on sim/model/specrate.h) and, where a protocol's tenant
 * alternates a delay and one verify, the mean-value analysis of several
 * tenants on one server. */
#include "run/analytic.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/batch.h"
#include "model/gamma.h"
#include "entity/proto.h"
#include "model/specrate.h"

/* ---- service times ------------------------------------------------------- */

static double nan_terms(service_terms_t *t)
{
    memset(t, 0, sizeof *t);
    t->total_s = NAN;
    return NAN;
}

/* Fills the model-path figures of one side. A model that cannot be built is
 * an error only when the times depend on it (need = 1). */
static int side_times(const hw_card_t *hw, int engine, int format, double kv,
                      const llm_card_t *m,
                      const char *cal, double overhead, int tp, int need, int draft,
                      service_job_t job, double *time, double *datasheet,
                      service_terms_t *terms, char *source, size_t srcsz,
                      double *cloud_iter, err_t *err)
{
    err_t e2;
    /* engine: a scenario key's index (0: none); format: its weight format,
     * both applied as `specsim step` applies them; kv: bytes per cached K or
     * V element (0: fp16). */
    service_t *sv = service_create_serving_kv(hw, engine - 1, format, kv, m,
                                              need ? cal : NULL, overhead, tp, NULL,
                                              need ? err : &e2);
    if (!sv) {
        if (need) return -1;
        *datasheet = nan_terms(terms);
        return 0;
    }
    service_job_t one = {1, job.context, 0};
    *datasheet = service_iter_time_datasheet(sv, &job, 1);
    service_terms(sv, &job, 1, terms);
    if (cloud_iter && need) *cloud_iter = service_iter_time(sv, &one, 1);
    if (need) {
        const char *src;
        if (draft) {
            *time = service_draft_time(sv, job.context);
            src = service_draft_source(sv);
            if (strcmp(src, "table") == 0 && !service_draft_in_table(sv, job.context))
                src = "fitted";
        } else {
            *time = service_iter_time(sv, &job, 1);
            src = service_source(sv);
            if (strcmp(src, "table") == 0 && !service_in_table(sv, &job, 1))
                src = "fitted";
        }
        snprintf(source, srcsz, "%s", src);
    }
    service_free(sv);
    return 0;
}

/* Drafting one block of tree t at context ctx (the chain's closed forms
 * take every draft at the prompt's context too): one step per level, a
 * level of w nodes one step of w tokens (service_draft_width_time); with a
 * fixed draft_time one draft_time per level, as the simulator. */
static int tree_block_draft(const edge_cfg_t *ed, int ctx, const tree_t *t, double step,
                            double *out, err_t *err)
{
    *out = t->depth * step;
    if (ed->has_draft_time) return 0;
    service_t *sv = service_create_serving(&ed->device, ed->engine - 1, ed->quant, &ed->draft,
                                           ed->calibration, ed->overhead, 1, NULL, err);
    if (!sv) return -1;
    *out = 0;
    for (int d = 0; d < t->depth; d++)
        *out += service_draft_width_time(sv, ctx, t->width[d]);
    service_free(sv);
    return 0;
}

/* One draft step of `width` tokens on the cloud (cloud-spec), as the cloud
 * runs it: cloud.draft_time (one per step, whatever its width), the heads'
 * roofline or the draft model over the context. NAN when the scenario
 * describes no cloud draft. 0, or -1 with err. */
static int cloud_draft_step(const cloud_cfg_t *cl, int ctx, int width, double *out,
                            err_t *err)
{
    *out = NAN;
    if (cl->has_draft_time) {
        *out = dist_mean(&cl->draft_time);
    } else if (cl->draft_heads.params > 0) {
        service_heads_t h;
        if (service_heads_serving(&h, &cl->gpu, cl->engine - 1, cl->precision,
                                  cl->draft_heads.params, cl->draft_heads.flops_per_token,
                                  cl->overhead, err) != 0)
            return -1;
        *out = service_heads_time(&h, width);
    } else if (cl->draft_ref[0]) {
        service_t *dsv = service_create_serving(&cl->gpu, cl->engine - 1, cl->draft_precision,
                                                &cl->draft, NULL, cl->overhead, 1, NULL, err);
        if (!dsv) return -1;
        service_job_t one = {width, ctx, 0};
        *out = service_iter_time(dsv, &one, 1);
        service_free(dsv);
    }
    return 0;
}

static const char *dist_source(const dist_t *d)
{
    return d->kind == DIST_CONST ? "fixed" : "distribution";
}

/* ---- several sync tenants on one server ---------------------------------- */

void analytic_mva(int n, double z, double s, double *x, double *r)
{
    double q = 0;
    *x = *r = 0;
    for (int k = 1; k <= n; k++) {
        *r = s * (1 + q);
        *x = k / (z + *r);
        q = *x * *r;
    }
}

/* Why the MVA would not be exact for s, or NULL when it is. "" when it
 * does not apply at all (the scenario's protocol, own, gives no cycle of a
 * delay and one verify, or one tenant: the single-tenant forms above are
 * the answer). The network it solves: N identical tenants, each decoding
 * without end, alternate a delay (drafting, links; independent of the
 * cloud) and one verify at a single FCFS server whose service time is
 * exponential and independent of the batch. */
static const char *mva_refusal(const scenario_t *s, const proto_form_t *own)
{
    const cloud_cfg_t *c = &s->cloud;
    const batch_policy_t *bp = c->batching.policy ? c->batching.policy
                                                  : batch_policy_default();
    if (!(own->cycle_s > 0) || s->ntenants < 2) return "";
    if (s->ngroups != 1)
        return "the tenants come in groups (the MVA here has one class)";
    if (c->replicas != 1) return "more than one replica";
    if (strcmp(bp->name, "continuous") != 0 || c->batching.max_batch != 1)
        return "batching is on (a batch's time depends on its size); give "
               "cloud.batching {policy: continuous, max_batch: 1}";
    if (!c->has_verify_time || c->verify_time.kind != DIST_EXPONENTIAL)
        return "the verify time is not exponential (an FCFS server is exactly "
               "solved by MVA only then); give cloud.verify_time {dist: "
               "exponential, mean: ...}";
    if (c->kv_capacity_bytes > 0) return "KV capacity is limited (admission waits)";
    const workload_cfg_t *w = &s->groups[0].workload;
    if (w->arrival != ARRIVAL_CLOSED) return "arrivals are not a closed loop";
    return NULL;
}

/* The MVA figures from the single-tenant ones: a cycle is a delay
 * Z = cycle − v away from the server and one verify of mean v; it commits
 * its tokens whatever the timing. */
static void mva_fill(const scenario_t *s, const proto_form_t *own, analytic_t *a)
{
    const char *why = mva_refusal(s, own);
    if (why) {
        snprintf(a->mva_why, sizeof a->mva_why, "%s", why);
        return;
    }
    int n = s->ntenants;
    double v = a->verify_time_s, z = own->cycle_s - v, x, r;
    analytic_mva(n, z, v, &x, &r);
    a->mva_tenants = n;
    a->mva_delay_s = z;
    a->mva_throughput_tok_s = x * own->cycle_tokens;
    a->mva_itl_s = n / a->mva_throughput_tok_s;
    a->mva_queue_delay_s = r - v;
    a->mva_gpu_util = x * v;
}

static int compute(const scenario_t *s, analytic_t *out, err_t *err);

/* Appends v under key, refusing what would not fit or would repeat a key
 * (a copied protocol that kept its original's figure names). */
static int add_fig(analytic_t *a, const char *proto, const char *key, double v,
                   err_t *err)
{
    if (a->nfigs == ANALYTIC_FIGS_MAX)
        return err_set(err, ERR_RUNTIME, "analytic: the protocols' closed forms give "
                       "more than %d figures (ANALYTIC_FIGS_MAX)", ANALYTIC_FIGS_MAX);
    analytic_fig_t *f = &a->figs[a->nfigs];
    if (strlen(key) >= sizeof f->key)
        return err_set(err, ERR_RUNTIME, "analytic: protocol '%s': figure name '%s' "
                       "is longer than %zu characters", proto, key, sizeof f->key - 1);
    for (int i = 0; i < a->nfigs; i++)
        if (strcmp(a->figs[i].key, key) == 0)
            return err_set(err, ERR_RUNTIME, "analytic: protocol '%s' gives figure '%s' "
                           "that another protocol gives too", proto, key);
    snprintf(f->key, sizeof f->key, "%s", key);
    f->v = v;
    a->nfigs++;
    return 0;
}

/* Every registered protocol's closed form, in registry order (which users'
 * scripts rely on), and the scenario's protocol's in *own (zero when it
 * has none). */
static int proto_forms(const scenario_t *s, const proto_form_in_t *in, analytic_t *out,
                       proto_form_t *own, err_t *err)
{
    memset(own, 0, sizeof *own);
    const proto_ops_t *p;
    for (size_t i = 0; (p = proto_at(i)) != NULL; i++) {
        if (!p->closed_form || (in->tree && p->verifies && !p->trees)) continue;
        proto_form_t f = {0};
        int rc = p->closed_form(in, &f);
        if (rc == 1) continue;   /* the scenario lacks what it needs */
        if (rc != 0)
            return err_set(err, ERR_RUNTIME, "analytic: out of memory");
        if (f.nfigs < 0 || f.nfigs > PROTO_FIGS_MAX)
            return err_set(err, ERR_RUNTIME, "analytic: protocol '%s' gives %d figures "
                           "(PROTO_FIGS_MAX is %d)", p->name, f.nfigs, PROTO_FIGS_MAX);
        for (int k = 0; k < f.nfigs; k++)
            if (add_fig(out, p->name, f.figs[k].key, f.figs[k].v, err) != 0) return -1;
        char key[64];
        snprintf(key, sizeof key, "throughput_%s_tok_s", p->name);
        for (char *c = key; *c; c++)
            if (*c == '-') *c = '_';
        if (add_fig(out, p->name, key, f.tok_s, err) != 0) return -1;
        if (p == s->protocol.proto) *own = f;
    }
    return 0;
}

/* A cloud of replica groups is solved exactly only when it is one group:
 * that group's settings are then the cloud's. Groups of different cards
 * share the fleet through routing, which no closed form here describes. */
int analytic_compute(const scenario_t *s, analytic_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    int n = scenario_replica_groups(s);
    if (n > 1)
        return err_set(err, ERR_INPUT, "cloud.replica_groups: %d replica groups "
                       "(a heterogeneous cloud); the closed forms cover one kind of "
                       "replica: run the scenario, or give one group", n);
    if (!s->cloud.rgroups) return compute(s, out, err);
    scenario_t d = *s;
    scenario_replica_group_view(s, 0, &d.cloud);
    return compute(&d, out, err);
}

static int compute(const scenario_t *s, analytic_t *out, err_t *err)
{
    memset(out, 0, sizeof *out);
    if (!s->groups || s->ngroups < 1)
        return err_set(err, ERR_INPUT, "tenants: no tenant group");
    /* The closed forms describe one speculation setting; a mixed fleet's
     * groups would each need their own (and they share the cloud). */
    if (scenario_mixed(s))
        return err_set(err, ERR_INPUT, "the tenant groups differ in "
                       "protocol or acceptance (mode mixed); the closed forms "
                       "cover one setting: give each group's settings at the "
                       "top level and run analytic once per group");
    /* An adaptive policy picks each block's gamma as the run goes (from what
     * the tenant observes): the forms below would describe protocol.gamma,
     * a setting the scenario does not run. */
    const gamma_ops_t *gp = s->protocol.gamma_policy;
    if (gp && gp->next && s->protocol.proto->verifies)
        return err_set(err, ERR_INPUT, "protocol.gamma_policy: '%s' picks each block's "
                       "gamma as the run goes; the closed forms take a fixed gamma: run "
                       "the scenario, or give gamma_policy: fixed", gp->name);
    const tenant_group_t *g = &s->groups[0];
    const edge_cfg_t *ed = &g->edge;
    const cloud_cfg_t *cl = &s->cloud;
    int gamma = s->protocol.gamma;
    if (gamma < 1) return err_set(err, ERR_INPUT, "protocol.gamma: must be >= 1");

    double ctx = floor(dist_mean(&g->workload.prompt_tokens) + 0.5);
    if (ctx < 1) ctx = 1;
    out->context_tokens = ctx;

    /* Draft time per token. */
    service_job_t djob = {1, (int)ctx, 0};
    if (ed->has_draft_time) {
        out->draft_time_s = dist_mean(&ed->draft_time);
        snprintf(out->edge_source, sizeof out->edge_source, "%s", dist_source(&ed->draft_time));
    }
    if (side_times(&ed->device, ed->engine, ed->quant, 0, &ed->draft, ed->calibration, ed->overhead, 1,
                   !ed->has_draft_time, 1, djob, &out->draft_time_s,
                   &out->draft_time_datasheet_s, &out->draft_terms, out->edge_source,
                   sizeof out->edge_source, NULL, err) != 0)
        return -1;

    /* Verify time of one block of γ+1 tokens, and a cloud-only decode step. */
    service_job_t vjob = {gamma + 1, (int)ctx, 0};
    double cloud_iter = 0;
    if (cl->has_verify_time) {
        out->verify_time_s = cloud_iter = dist_mean(&cl->verify_time);
        snprintf(out->cloud_source, sizeof out->cloud_source, "%s",
                 dist_source(&cl->verify_time));
    }
    out->tensor_parallel = scenario_tensor_parallel(s);
    double kv = service_kv_precision_bytes_at(cl->kv_precision);
    if (side_times(&cl->gpu, cl->engine, cl->precision, kv, &cl->target, cl->calibration, cl->overhead,
                   out->tensor_parallel, !cl->has_verify_time, 0, vjob, &out->verify_time_s,
                   &out->verify_time_datasheet_s, &out->verify_terms, out->cloud_source,
                   sizeof out->cloud_source, &cloud_iter, err) != 0)
        return -1;

    /* A draft step on the cloud (cloud-spec): the draft model on the
     * cloud's GPU, one token over the context, as the cloud runs it; a
     * block's, gamma of them or a tree's levels. */
    const tree_t *tree = s->protocol.tree.n > 0 ? &s->protocol.tree : NULL;
    double cloud_draft = NAN;
    if (cloud_draft_step(cl, (int)ctx, 1, &cloud_draft, err) != 0) return -1;
    double cloud_block = gamma * cloud_draft;
    if (tree && cloud_draft >= 0) {
        cloud_block = 0;
        for (int d = 0; d < tree->depth; d++) {
            double step;
            if (cloud_draft_step(cl, (int)ctx, tree->width[d], &step, err) != 0) return -1;
            cloud_block += step;
        }
    }

    /* Acceptance: the model's law of a per block (a tree's: of its accepted
     * depth), and E[a+1]. */
    double block_draft = gamma * out->draft_time_s;
    if (tree && tree_block_draft(ed, (int)ctx, tree, out->draft_time_s, &block_draft,
                                 err) != 0)
        return -1;
    accept_law_t L;
    if ((tree ? accept_cfg_law_tree(&s->acceptance, tree, &L, err)
              : accept_cfg_law(&s->acceptance, gamma, &L, err)) != 0)
        return -1;
    out->alpha_mean = accept_cfg_mean(&s->acceptance, gamma);
    out->accepted_len_expected = specrate_law_sync_len(&L);

    /* Network: propagation with the mean jitter; the protocols serialise
     * their own messages at the link rates. */
    const network_cfg_t *nw = &g->network;
    double jit = dist_mean(&nw->jitter);
    proto_form_in_t in = {
        .law = &L, .gamma = gamma,
        .window = s->protocol.window > 0 ? s->protocol.window : 1,
        .draft_s = out->draft_time_s, .block_draft_s = block_draft, .tree = tree,
        .verify_s = out->verify_time_s,
        .decode_s = cloud_iter, .cloud_draft_s = cloud_draft,
        .cloud_block_draft_s = cloud_block,
        .up_prop_s = nw->rtt / 2 + jit, .down_prop_s = nw->rtt / 2 + jit,
        .up_bps = nw->uplink_bps, .down_bps = nw->downlink_bps,
        .bytes_per_token = nw->bytes_per_token, .overhead_bytes = nw->overhead_bytes,
    };
    proto_form_t own;
    int rc = proto_forms(s, &in, out, &own, err);
    accept_law_fini(&L);
    if (rc != 0) return -1;
    mva_fill(s, &own, out);
    return 0;
}

/* ---- printing ------------------------------------------------------------ */

typedef struct named { const char *name; double v; } named_t;

/* What collect lists at most: the 7 figures before the protocols', theirs,
 * the MVA's 6, the 22 roofline terms and the 2 of tensor parallelism. */
#define NAMED_MAX (7 + ANALYTIC_FIGS_MAX + 6 + 22 + 2)

static int collect(const analytic_t *a, named_t *o)
{
    int n = 0;
#define ADD(k, x) (o[n].name = (k), o[n].v = (x), n++)
    ADD("accepted_len_expected", a->accepted_len_expected);
    ADD("alpha_mean", a->alpha_mean);
    ADD("context_tokens", a->context_tokens);
    ADD("draft_time_s", a->draft_time_s);
    ADD("draft_time_datasheet_s", a->draft_time_datasheet_s);
    ADD("verify_time_s", a->verify_time_s);
    ADD("verify_time_datasheet_s", a->verify_time_datasheet_s);
    for (int i = 0; i < a->nfigs; i++) ADD(a->figs[i].key, a->figs[i].v);
    if (a->mva_tenants > 0) {
        ADD("mva_tenants", a->mva_tenants);
        ADD("mva_delay_s", a->mva_delay_s);
        ADD("mva_throughput_tok_s", a->mva_throughput_tok_s);
        ADD("mva_itl_s", a->mva_itl_s);
        ADD("mva_queue_delay_s", a->mva_queue_delay_s);
        ADD("mva_gpu_util", a->mva_gpu_util);
    }
    const service_terms_t *t[2] = {&a->draft_terms, &a->verify_terms};
    static const char *const pre[2][11] = {
        {"draft_linear_mem_s", "draft_linear_compute_s", "draft_attn_mem_s",
         "draft_attn_compute_s", "draft_lm_head_s", "draft_overhead_s", "draft_total_s",
         "draft_weight_bytes", "draft_kv_bytes", "draft_flops", "draft_step_factor"},
        {"verify_linear_mem_s", "verify_linear_compute_s", "verify_attn_mem_s",
         "verify_attn_compute_s", "verify_lm_head_s", "verify_overhead_s",
         "verify_total_s", "verify_weight_bytes", "verify_kv_bytes", "verify_flops",
         "verify_step_factor"}};
    for (int i = 0; i < 2; i++) {
        ADD(pre[i][0], t[i]->linear_mem_s);
        ADD(pre[i][1], t[i]->linear_compute_s);
        ADD(pre[i][2], t[i]->attn_mem_s);
        ADD(pre[i][3], t[i]->attn_compute_s);
        ADD(pre[i][4], t[i]->lm_head_s);
        ADD(pre[i][5], t[i]->overhead_s);
        ADD(pre[i][6], t[i]->total_s);
        ADD(pre[i][7], t[i]->weight_bytes);
        ADD(pre[i][8], t[i]->kv_bytes);
        ADD(pre[i][9], t[i]->flops);
        ADD(pre[i][10], t[i]->step_factor);
    }
    /* Only when on: a single-GPU replica's report stays as it was. */
    if (a->tensor_parallel > 1) {
        ADD("tensor_parallel", a->tensor_parallel);
        ADD("verify_allreduce_s", a->verify_terms.allreduce_s);
    }
#undef ADD
    return n;
}

int analytic_print(FILE *f, const analytic_t *a, int json)
{
    named_t v[NAMED_MAX];
    int n = collect(a, v);
    if (json) {
        fprintf(f, "{\"edge_source\": \"%s\", \"cloud_source\": \"%s\"", a->edge_source,
                a->cloud_source);
        if (a->mva_why[0]) fprintf(f, ", \"mva\": \"not exact: %s\"", a->mva_why);
        for (int i = 0; i < n; i++) {
            if (isfinite(v[i].v)) fprintf(f, ", \"%s\": %.10g", v[i].name, v[i].v);
            else fprintf(f, ", \"%s\": null", v[i].name);
        }
        fputs("}\n", f);
    } else {
        fprintf(f, "%-28s %s\n%-28s %s\n", "edge_source:", a->edge_source,
                "cloud_source:", a->cloud_source);
        for (int i = 0; i < n; i++) {
            char k[64];
            snprintf(k, sizeof k, "%s:", v[i].name);
            fprintf(f, "%-28s %.10g\n", k, v[i].v);
        }
        if (a->mva_why[0]) fprintf(f, "%-28s not exact: %s\n", "mva:", a->mva_why);
    }
    return ferror(f) ? -1 : 0;
}

double analytic_value(const analytic_t *a, const char *key)
{
    named_t v[NAMED_MAX];
    int n = collect(a, v);
    for (int i = 0; i < n; i++)
        if (strcmp(v[i].name, key) == 0) return v[i].v;
    return NAN;
}
