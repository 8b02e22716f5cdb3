/* Conservation laws and Little's law on a random multi-tenant scenario:
 * three groups (closed and Poisson workloads, random lengths, jitter of
 * three laws, finite bandwidth), three replicas, max_tokens chunking,
 * exponential verify and draft times, async with a small window so that
 * rollbacks, purges and drops all happen. The identities hold exactly
 * (bookkeeping), Little's law to within end effects. */
#include <pthread.h>

#include "check.h"
#include "run/sim.h"
#include "test_sim_scen.h"

static scenario_t *random_scenario(const proto_ops_t *mode)
{
    scenario_t *s = scen_new(3, 1, mode, 5, 0.75, 0.008, 0.008, 0.040);
    s->duration = 120;
    s->warmup = 10;
    s->protocol.window = 3;
    s->groups[0].count = 7;
    s->groups[1].count = 5;
    s->groups[2].count = 4;
    s->ntenants = 16;
    tenant_group_t *g = s->groups;
    g[0].workload.think = (dist_t){DIST_EXPONENTIAL, 0.2, 0, NULL, 0};
    g[0].workload.prompt_tokens = (dist_t){DIST_UNIFORM, 16, 256, NULL, 0};
    g[0].workload.output_tokens = (dist_t){DIST_EXPONENTIAL, 200, 0, NULL, 0};
    g[0].network.jitter = (dist_t){DIST_LOGNORMAL, 0.005, 0.005, NULL, 0};
    g[0].network.uplink_bps = 5e6;
    g[0].network.downlink_bps = 50e6;
    g[0].edge.draft_time = (dist_t){DIST_EXPONENTIAL, 0.008, 0, NULL, 0};
    g[0].edge.prefill_time = (dist_t){DIST_UNIFORM, 0.01, 0.05, NULL, 0};
    g[1].workload.arrival = ARRIVAL_POISSON;
    g[1].workload.rate = 0.5;
    g[1].workload.prompt_tokens = dist_const(64);
    g[1].workload.output_tokens = (dist_t){DIST_UNIFORM, 50, 150, NULL, 0};
    g[1].network.rtt = 0.080;
    g[1].network.jitter = (dist_t){DIST_NORMAL, 0.003, 0.002, NULL, 0};
    g[1].edge.draft_time = dist_const(0.012);
    g[2].network.jitter = (dist_t){DIST_PARETO, 0.001, 2.5, NULL, 0};
    g[2].network.uplink_bps = 1e6;
    g[2].workload.output_tokens = dist_const(300);
    s->cloud.replicas = 3;
    s->cloud.pinning = PIN_ROUND_ROBIN;
    s->cloud.batching.max_batch = 6;
    s->cloud.batching.max_tokens = 64;
    s->cloud.verify_time = (dist_t){DIST_EXPONENTIAL, 0.008, 0, NULL, 0};
    return s;
}

static void check_identities(const tally_totals_t *t, int gamma, const proto_ops_t *mode)
{
    /* Every drafted token is committed, discarded, or still in flight. */
    CHECK_ABS(t->drafted, t->draft_committed + t->discarded + t->pending_drafts, 1e-6);
    /* Every committed token is a first token, an accepted draft, or a
     * target token (correction, bonus, cloud-only decode). */
    CHECK_ABS(t->committed, t->first_tokens + t->draft_committed + t->extra_committed, 1e-6);
    /* Every job that entered a queue started, was purged, or still waits. */
    CHECK_ABS(t->queue_arrivals, t->queue_started + t->queue_purged + t->queue_waiting_end, 1e-9);
    /* The time-integral of the number waiting equals the summed waits. */
    double sojourn = t->queue_delay_sum + t->queue_purged_sojourn + t->queue_open_sojourn;
    CHECK_REL(t->queue_area, sojourn, 1e-9);
    /* Little's law with per-job waits of jobs that left the queue:
     * L = λ·W up to the few jobs open at the end. */
    double L = t->queue_area / t->end;
    double lambda = t->queue_arrivals / t->end;
    double left = t->queue_started + t->queue_purged;
    double W = (t->queue_delay_sum + t->queue_purged_sojourn) / left;
    CHECK(L > 0.05);
    CHECK_REL(L, lambda * W, 0.02);
    /* Each verified block costs gamma + 1 tokens; stale ones are extra. */
    if (mode->verifies)
        CHECK_ABS(t->verified_tokens, (gamma + 1) * t->verdicts + t->stale_tokens, 1e-6);
}

static void test_async_conservation(void)
{
    scenario_t *s = random_scenario(proto_find("async"));
    metrics_summary_t m;
    tally_totals_t t;
    err_t err;
    CHECK(sim_run_detailed(s, NULL, &m, &t, &err) == 0);
    check_identities(&t, 5, proto_find("async"));
    /* The scenario really exercises rollback and purge paths. */
    CHECK(t.discarded > 1000);
    CHECK(t.queue_purged + t.blocks_dropped > 100);
    CHECK(t.requests_done > 100);
    CHECK(m.value[METRIC_DRAFT_WASTE_FRAC] > 0);
    /* Without multi_block a tenant has at most one block per iteration,
     * decided before its next one starts: none goes stale inside a batch. */
    CHECK_ABS(m.value[METRIC_GPU_WASTE_FRAC], 0, 0);
    scen_del(s);
}

/* The same with multi_block and iterations slower than drafting (mean
 * 40 ms = γ·d), so a tenant's blocks queue up and share iterations: some
 * go stale inside a batch, and the identities still hold exactly. */
static void test_async_multi_block_conservation(void)
{
    scenario_t *s = random_scenario(proto_find("async"));
    s->cloud.batching.multi_block = 1;
    s->cloud.verify_time = (dist_t){DIST_EXPONENTIAL, 0.040, 0, NULL, 0};
    metrics_summary_t m;
    tally_totals_t t;
    err_t err;
    CHECK(sim_run_detailed(s, NULL, &m, &t, &err) == 0);
    check_identities(&t, 5, proto_find("async"));
    CHECK(t.stale_tokens > 100);
    CHECK(t.requests_done > 50);
    CHECK(m.value[METRIC_GPU_WASTE_FRAC] > 0);
    scen_del(s);
}

static void test_other_modes_conservation(void)
{
    const proto_ops_t *modes[] = {proto_find("sync"), proto_find("cloud-only"),
                                  proto_find("cloud-spec")};
    for (int i = 0; i < 3; i++) {
        scenario_t *s = random_scenario(modes[i]);
        /* cloud-spec's draft steps, random (their own stream) */
        s->cloud.has_draft_time = 1;
        s->cloud.draft_time = (dist_t){DIST_EXPONENTIAL, 0.002, 0, NULL, 0};
        metrics_summary_t m;
        tally_totals_t t;
        err_t err;
        CHECK(sim_run_detailed(s, NULL, &m, &t, &err) == 0);
        check_identities(&t, 5, modes[i]);
        CHECK(t.committed > 10000);
        scen_del(s);
    }
    scenario_t *s = random_scenario(proto_find("edge-only"));
    metrics_summary_t m;
    tally_totals_t t;
    err_t err;
    CHECK(sim_run_detailed(s, NULL, &m, &t, &err) == 0);
    CHECK_ABS(t.committed, t.first_tokens + t.draft_committed, 1e-6);
    CHECK_ABS(t.discarded, 0, 0);
    scen_del(s);
}

/* Same scenario and seed: identical metrics apart from the timing ones;
 * another seed: different. */
static void test_determinism(void)
{
    scenario_t *s = random_scenario(proto_find("async"));
    s->duration = 40;
    s->replications = 2;
    metrics_summary_t a, b;
    err_t err;
    CHECK(sim_run(s, NULL, &a, &err) == 0);
    CHECK(sim_run(s, NULL, &b, &err) == 0);
    int same = 1;
    for (int i = 0; i < METRIC_COUNT; i++) {
        if (metric_is_timing(i)) continue;
        if (memcmp(&a.value[i], &b.value[i], sizeof(double)) ||
            memcmp(&a.ci95[i], &b.ci95[i], sizeof(double)))
            same = 0;
    }
    CHECK(same);
    s->seed = 8;
    CHECK(sim_run(s, NULL, &b, &err) == 0);
    CHECK(a.value[METRIC_ITL_MEAN] != b.value[METRIC_ITL_MEAN]);
    scen_del(s);
}

/* Re-entrancy: four threads running at once get what one thread gets. */
typedef struct job {
    const scenario_t *s;
    metrics_summary_t m;
    int rc;
} job_t;

static void *run_thread(void *arg)
{
    job_t *j = arg;
    err_t err;
    j->rc = sim_run(j->s, NULL, &j->m, &err);
    return NULL;
}

static void test_threads(void)
{
    scenario_t *s = random_scenario(proto_find("async"));
    s->duration = 30;
    job_t ref = {s, {0}, 0};
    run_thread(&ref);
    job_t jobs[4];
    pthread_t th[4];
    for (int i = 0; i < 4; i++) {
        jobs[i] = (job_t){s, {0}, -1};
        CHECK(pthread_create(&th[i], NULL, run_thread, &jobs[i]) == 0);
    }
    for (int i = 0; i < 4; i++) pthread_join(th[i], NULL);
    for (int i = 0; i < 4; i++) {
        CHECK(jobs[i].rc == 0);
        for (int k = 0; k < METRIC_COUNT; k++)
            if (!metric_is_timing(k))
                CHECK(memcmp(&jobs[i].m.value[k], &ref.m.value[k], sizeof(double)) == 0);
    }
    scen_del(s);
}

int main(void)
{
    RUN(test_async_conservation);
    RUN(test_async_multi_block_conservation);
    RUN(test_other_modes_conservation);
    RUN(test_determinism);
    RUN(test_threads);
    return check_done();
}
