/* Hand-built scenarios for the simulator's own tests (independent of the
 * YAML loader): one group of tenants with fixed times unless a test changes
 * fields afterwards. Header-only; included by tests/unit/test_sim_*.c. */
#ifndef TEST_SIM_SCEN_H
#define TEST_SIM_SCEN_H

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model/gamma.h"
#include "entity/proto.h"
#include "accepttest.h"
#include "config/scenario.h"

/* Replaces s's acceptance by the one yaml gives. */
static inline void scen_accept(scenario_t *s, const char *yaml)
{
    accept_cfg_fini(&s->acceptance);
    accepttest_cfg(&s->acceptance, yaml);
}

/* Replaces s's acceptance by a trace replaying v[0..n). */
static inline void scen_trace(scenario_t *s, const int *v, int n)
{
    err_t e;
    accept_cfg_fini(&s->acceptance);
    if (accepttest_trace(&s->acceptance, v, n, &e) != 0) {
        printf("  scen_trace: %s\n", e.msg);
        abort();
    }
}

/* ngroups groups of `per_group` tenants, each a copy of the first. */
static scenario_t *scen_new(int ngroups, int per_group, const proto_ops_t *mode,
                            int gamma, double alpha, double draft,
                            double verify, double rtt)
{
    scenario_t *s = calloc(1, sizeof *s);
    snprintf(s->name, sizeof s->name, "test");
    s->seed = 7;
    s->duration = 300;
    s->warmup = 10;
    s->replications = 1;
    s->protocol.proto = mode;
    s->protocol.gamma = gamma;
    s->protocol.window = 64;
    s->protocol.gamma_policy = gamma_find("fixed");
    char yaml[64];
    snprintf(yaml, sizeof yaml, "{model: iid, alpha: %.17g}", alpha);
    scen_accept(s, yaml);
    s->ngroups = ngroups;
    s->ntenants = ngroups * per_group;
    s->groups = calloc((size_t)ngroups, sizeof *s->groups);
    for (int g = 0; g < ngroups; g++) {
        tenant_group_t *G = &s->groups[g];
        snprintf(G->name, sizeof G->name, "g%d", g);
        G->count = per_group;
        G->edge.quant = PREC_W4A16;
        G->edge.has_draft_time = 1;
        G->edge.draft_time = dist_const(draft);
        G->edge.has_prefill_time = 1;
        G->edge.prefill_time = dist_const(0);
        G->network.rtt = rtt;
        G->network.jitter = dist_const(0);
        G->network.uplink_bps = INFINITY;
        G->network.downlink_bps = INFINITY;
        G->network.overhead_bytes = 64;
        G->network.bytes_per_token = 4;
        G->workload.arrival = ARRIVAL_CLOSED;
        G->workload.think = dist_const(0);
        G->workload.prompt_tokens = dist_const(1);
        G->workload.output_tokens = dist_const(1e8);
    }
    s->cloud.replicas = 1;
    s->cloud.precision = PREC_FP16;
    s->cloud.pinning = PIN_LEAST_LOADED;
    s->cloud.has_verify_time = 1;
    s->cloud.verify_time = dist_const(verify);
    s->cloud.batching.policy = batch_policy_find("continuous");
    s->cloud.batching.max_batch = 32;
    s->cloud.batching.max_wait = 0.005;
    return s;
}

static void scen_del(scenario_t *s)
{
    accept_cfg_fini(&s->acceptance);
    free(s->groups);
    free(s);
}

#endif
