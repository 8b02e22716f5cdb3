#include "desc/scenario.h"

#include <string.h>

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

int scenario_arrivals_group(const scenario_t *s, int *is_rate)
{
    int k = 0;
    while (k < s->ngroups && s->groups[k].workload.arrival != ARRIVAL_POISSON) k++;
    *is_rate = k < s->ngroups;
    if (*is_rate) return k;
    for (k = 0; k < s->ngroups - 1 && s->groups[k].workload.arrival != ARRIVAL_TRACE;) k++;
    return k;
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
    out->engine = g->engine;
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
            p->gamma_policy != t->gamma_policy || !tree_same(&p->tree, &t->tree) ||
            s->groups[g].acceptance.model)
            return 1;
    }
    return 0;
}

int scenario_refuse_trace(const scenario_t *s, const char *what, const char *hint,
                          err_t *err)
{
    if (!s->output.trace[0]) return 0;
    return err_set(err, ERR_INPUT, "%s: output.trace: %s writes no trace (%s)",
                   s->output.trace_at[0] ? s->output.trace_at : s->file, what, hint);
}
