/* analytic — closed-form predictions for a whole scenario: one tenant's
 * rates (sim/model/specrate.c derives them), service times and, for several
 * sync tenants on one server, mean-value analysis. */
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
static int side_times(const hw_card_t *hw, const llm_card_t *m, int prec,
                      const char *cal, double overhead, int tp, int need, int draft,
                      service_job_t job, double *time, double *datasheet,
                      service_terms_t *terms, char *source, size_t srcsz,
                      double *cloud_iter, err_t *err)
{
    err_t e2;
    service_t *sv = service_create_tp(hw, m, prec, need ? cal : NULL, overhead, tp,
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

static const char *dist_source(const dist_t *d)
{
    return d->kind == DIST_CONST ? "fixed" : "distribution";
}

static double link_ser(double bytes, double bps)
{
    return isinf(bps) || !(bps > 0) ? 0 : 8 * bytes / bps;
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
 * does not apply at all (not sync, or one tenant: the single-tenant forms
 * above are the answer). The network it solves: N identical tenants, each
 * decoding without end, alternate a delay (drafting, links; independent
 * of the cloud) and one verify at a single FCFS server whose service time
 * is exponential and independent of the batch. */
static const char *mva_refusal(const scenario_t *s)
{
    const cloud_cfg_t *c = &s->cloud;
    const batch_policy_t *bp = c->batching.policy ? c->batching.policy
                                                  : batch_policy_default();
    if (s->protocol.proto != proto_find("sync") || s->ntenants < 2) return "";
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

/* The MVA figures from the single-tenant ones: a block is a delay
 * Z = block_time_sync − v away from the server and one verify of mean v;
 * it commits E tokens whatever the timing. */
static void mva_fill(const scenario_t *s, analytic_t *a)
{
    const char *why = mva_refusal(s);
    if (why) {
        snprintf(a->mva_why, sizeof a->mva_why, "%s", why);
        return;
    }
    int n = s->ntenants;
    double v = a->verify_time_s, z = a->block_time_sync_s - v, x, r;
    analytic_mva(n, z, v, &x, &r);
    a->mva_tenants = n;
    a->mva_delay_s = z;
    a->mva_throughput_tok_s = x * a->accepted_len_expected;
    a->mva_itl_s = n / a->mva_throughput_tok_s;
    a->mva_queue_delay_s = r - v;
    a->mva_gpu_util = x * v;
}

static int compute(const scenario_t *s, analytic_t *out, err_t *err);

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
    if (side_times(&ed->device, &ed->draft, ed->quant, ed->calibration, ed->overhead, 1,
                   !ed->has_draft_time, 1, djob, &out->draft_time_s,
                   &out->draft_time_datasheet_s, &out->draft_terms, out->edge_source,
                   sizeof out->edge_source, NULL, err) != 0)
        return -1;

    /* Verify time of one block of γ+1 tokens, and a cloud-only decode step. */
    service_job_t vjob = {gamma + 1, (int)ctx, 0};
    if (cl->has_verify_time) {
        out->verify_time_s = out->cloud_iter_time_s = dist_mean(&cl->verify_time);
        snprintf(out->cloud_source, sizeof out->cloud_source, "%s",
                 dist_source(&cl->verify_time));
    }
    out->tensor_parallel = scenario_tensor_parallel(s);
    if (side_times(&cl->gpu, &cl->target, cl->precision, cl->calibration, cl->overhead,
                   out->tensor_parallel, !cl->has_verify_time, 0, vjob, &out->verify_time_s,
                   &out->verify_time_datasheet_s, &out->verify_terms, out->cloud_source,
                   sizeof out->cloud_source, &out->cloud_iter_time_s, err) != 0)
        return -1;

    /* Acceptance: the model's law of a per block, and E[a+1]. */
    accept_law_t L;
    if (accept_cfg_law(&s->acceptance, gamma, &L, err) != 0) return -1;
    out->alpha_mean = accept_cfg_mean(&s->acceptance, gamma);
    out->accepted_len_expected = specrate_law_sync_len(&L);

    /* Network, with mean jitter and serialisation at the link rates. */
    const network_cfg_t *nw = &g->network;
    double jit = dist_mean(&nw->jitter);
    double bpt = nw->bytes_per_token, ovh = nw->overhead_bytes;
    specrate_pipe_t pp = {
        .gamma = gamma, .window = s->protocol.window > 0 ? s->protocol.window : 1,
        .d = out->draft_time_s, .v = out->verify_time_s,
        .up_ser = link_ser(gamma * bpt + ovh, nw->uplink_bps),
        .up_prop = nw->rtt / 2 + jit,
        .down_ser = link_ser(ovh + (gamma + 1) * bpt, nw->downlink_bps),
        .down_prop = nw->rtt / 2 + jit,
    };
    double E = out->accepted_len_expected;
    out->block_time_sync_s = gamma * pp.d + pp.up_ser + pp.up_prop + pp.v +
                             link_ser(ovh + E * bpt, nw->downlink_bps) + pp.down_prop;
    out->throughput_sync_tok_s = E / out->block_time_sync_s;
    out->itl_sync_s = out->block_time_sync_s / E;
    out->throughput_async_tok_s = specrate_law_async(&pp, &L);
    accept_law_fini(&L);
    if (isnan(out->throughput_async_tok_s))
        return err_set(err, ERR_RUNTIME, "analytic: out of memory");
    out->throughput_cloud_only_tok_s = 1 / out->cloud_iter_time_s;
    out->throughput_edge_only_tok_s = 1 / out->draft_time_s;
    mva_fill(s, out);
    return 0;
}

/* ---- printing ------------------------------------------------------------ */

typedef struct named { const char *name; double v; } named_t;

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
    ADD("block_time_sync_s", a->block_time_sync_s);
    ADD("itl_sync_s", a->itl_sync_s);
    ADD("throughput_sync_tok_s", a->throughput_sync_tok_s);
    ADD("throughput_async_tok_s", a->throughput_async_tok_s);
    ADD("cloud_iter_time_s", a->cloud_iter_time_s);
    ADD("throughput_cloud_only_tok_s", a->throughput_cloud_only_tok_s);
    ADD("throughput_edge_only_tok_s", a->throughput_edge_only_tok_s);
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
    named_t v[56];
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
