/* End-to-end protocol checks on hand-built scenarios with fixed times,
 * against closed forms derived in the comments. (H's test_closed_form.c is
 * the independent validation; these guard the simulator's own logic.) */
#include "model/cards.h"
#include "check.h"
#include "model/service.h"
#include "run/sim.h"
#include "test_sim_scen.h"

static int run(const scenario_t *s, metrics_summary_t *m, tally_totals_t *tot)
{
    err_t err;
    int rc = sim_run_detailed(s, NULL, m, tot, &err);
    if (rc) printf("  sim_run: %s\n", err.msg);
    return rc;
}

/* Sync, one tenant: every block takes gamma·d + rtt + v exactly; a block
 * commits min(a, gamma) + 1 tokens with a ~ truncated geometric, so
 * E = (1 − α^(γ+1)) / (1 − α) tokens per block and itl_mean = block / E. */
static void test_sync_closed_form(void)
{
    scenario_t *s = scen_new(1, 1, proto_find("sync"), 4, 0.7, 0.010, 0.005, 0.040);
    metrics_summary_t m;
    CHECK(run(s, &m, NULL) == 0);
    double E = (1 - pow(0.7, 5)) / (1 - 0.7);
    CHECK_REL(m.value[METRIC_ITL_MEAN], 0.085 / E, 0.01);
    CHECK_REL(m.value[METRIC_ACCEPTED_LEN_MEAN], E, 0.01);
    CHECK_REL(m.value[METRIC_ACCEPTANCE_RATE], (E - 1) / 4, 0.02);
    /* Stall = rtt + v of every 85 ms block. */
    CHECK_REL(m.value[METRIC_EDGE_STALL_FRAC], 0.045 / 0.085, 0.001);
    /* One iteration of 5 ms per block. */
    CHECK_REL(m.value[METRIC_GPU_UTIL], 0.005 / 0.085, 0.001);
    CHECK_REL(m.value[METRIC_BATCH_MEAN], 1, 1e-9);
    scen_del(s);
}

/* Async, α = 1: the edge never waits when the window covers the round
 * trip, so tokens come at 1/d. α = 0: every block is rejected; the edge
 * restarts only when the verdict arrives: a cycle is γd + rtt + v with one
 * token. */
static void test_async_extremes(void)
{
    scenario_t *s = scen_new(1, 1, proto_find("async"), 4, 1.0, 0.010, 0.005, 0.040);
    metrics_summary_t m;
    CHECK(run(s, &m, NULL) == 0);
    CHECK_REL(m.value[METRIC_THROUGHPUT], 100.0, 0.001);
    CHECK_REL(m.value[METRIC_ITL_MEAN], 0.010, 0.001);
    CHECK_ABS(m.value[METRIC_EDGE_STALL_FRAC], 0, 1e-9);
    CHECK_ABS(m.value[METRIC_DRAFT_WASTE_FRAC], 0, 1e-9);
    scen_accept(s, "{model: iid, alpha: 0}");
    CHECK(run(s, &m, NULL) == 0);
    CHECK_REL(m.value[METRIC_ITL_MEAN], 0.085, 0.001);
    CHECK_REL(m.value[METRIC_ACCEPTED_LEN_MEAN], 1, 1e-9);
    scen_del(s);
}

/* Async with rejections, large window, v <= γd: the semantics' renewal
 * argument. q = 1 − α^γ, E[tokens/cycle] = (1/q − 1)·γ +
 * Σ_{i<γ} (i+1)·α^i·(1−α)/q, E[cycle] = γd/q + rtt + v. */
static void test_async_closed_form(void)
{
    double a = 0.8, d = 0.010, v = 0.005, rtt = 0.040;
    int g = 4;
    scenario_t *s = scen_new(1, 1, proto_find("async"), g, a, d, v, rtt);
    s->duration = 2000;
    metrics_summary_t m;
    CHECK(run(s, &m, NULL) == 0);
    double q = 1 - pow(a, g), tok = (1 / q - 1) * g;
    for (int i = 0; i < g; i++) tok += (i + 1) * pow(a, i) * (1 - a) / q;
    double cyc = g * d / q + rtt + v;
    CHECK_REL(m.value[METRIC_THROUGHPUT], tok / cyc, 0.01);
    scen_del(s);
}

/* Edge-only: every token takes d; cloud-only with one tenant: every
 * iteration takes v and yields one token (the one-way delay is constant so
 * arrivals are v apart); TTFT = rtt/2 + v (prefill) + rtt/2. */
static void test_baselines(void)
{
    scenario_t *s = scen_new(1, 1, proto_find("edge-only"), 4, 0.7, 0.010, 0.005, 0.040);
    metrics_summary_t m;
    CHECK(run(s, &m, NULL) == 0);
    CHECK_REL(m.value[METRIC_ITL_MEAN], 0.010, 1e-6);
    CHECK_REL(m.value[METRIC_THROUGHPUT], 100, 1e-3);
    s->protocol.proto = proto_find("cloud-only");
    s->groups[0].workload.output_tokens = dist_const(100);
    CHECK(run(s, &m, NULL) == 0);
    CHECK_REL(m.value[METRIC_ITL_MEAN], 0.005, 1e-6);
    CHECK_REL(m.value[METRIC_TTFT_MEAN], 0.045, 1e-6);
    /* e2e = TTFT + 99 more iterations. */
    CHECK_REL(m.value[METRIC_E2E_MEAN], 0.045 + 99 * 0.005, 1e-6);
    scen_del(s);
}


/* Async draft waste, one tenant, γ = 4, d = 10 ms, rtt = 40 ms, v = 5 ms,
 * large window. Block k sent at t; its verdict is back at t + 45 ms. By then
 * block k+1 (drafted t..t+40) is in flight and block k+2 has no finished
 * token (its first ends at t+50). So a rejected block wastes its γ − a
 * drafts plus the γ of block k+1; a cycle (blocks up to and including the
 * first rejected one, J ~ Geometric(q), q = 1 − α^γ) drafts γJ + γ tokens.
 * waste = (2γ − E[a | a < γ]) / (γ/q + γ), E[a | a<γ] = Σ_{i<γ} i α^i (1−α)/q.
 * Every block in flight at a rollback arrives after the cloud bumped its
 * epoch and is dropped, never verified: gpu_waste = 0. */
static void test_async_draft_waste(void)
{
    double a = 0.6;
    int g = 4;
    scenario_t *s = scen_new(1, 1, proto_find("async"), g, a, 0.010, 0.005, 0.040);
    s->duration = 2000;
    metrics_summary_t m;
    tally_totals_t t;
    CHECK(run(s, &m, &t) == 0);
    double q = 1 - pow(a, g), ea = 0;
    for (int i = 0; i < g; i++) ea += i * pow(a, i) * (1 - a) / q;
    CHECK_REL(m.value[METRIC_DRAFT_WASTE_FRAC], (2 * g - ea) / (g / q + g), 0.02);
    CHECK_ABS(m.value[METRIC_GPU_WASTE_FRAC], 0, 0);
    CHECK(t.blocks_dropped > 1000);
    /* Every rejected cycle drops exactly the one block in flight. */
    CHECK_REL(t.blocks_dropped, t.verdicts * q, 0.02);
    scen_del(s);
}

static int load_cards(llm_card_t *llm, hw_card_t *gpu, hw_card_t *phone)
{
    char p[1024];
    err_t err;
    if (cards_resolve_path("models/llm/llama-2-7b.yaml", p, sizeof p) ||
        cards_load_llm_file(p, llm, &err))
        return -1;
    if (cards_resolve_path("models/hardware/h200.yaml", p, sizeof p) ||
        cards_load_hw_file(p, gpu, &err))
        return -1;
    if (cards_resolve_path("models/hardware/snapdragon-8-gen-3.yaml", p, sizeof p) ||
        cards_load_hw_file(p, phone, &err))
        return -1;
    return 0;
}

/* KV admission. Cloud-only, 4 tenants, closed loop without think time,
 * prompt 100 + output 100 tokens: a request reserves 200 · kv bytes/token
 * (LLaMA-2-7B fp16: 2 (K,V) · layers · kv_heads · head_dim · 2 B). A
 * capacity of 2.5 requests admits two at a time. Worked schedule (v = 10 ms,
 * rtt = 40 ms): a pair holds the GPU for its prefill + 99 decode iterations
 * = 1.0 s, and the other pair's prompts are already waiting when it
 * releases, so the GPU never idles: 200 tokens per second, every batch 2.
 * Unlimited: all four share every iteration (batch 4) and the GPU idles 40
 * ms per 1.0 s cycle (last token down, next prompt up): 400/1.04 tok/s. */
static void test_kv_admission_blocks(void)
{
    scenario_t *s = scen_new(1, 4, proto_find("cloud-only"), 4, 0.8, 0.010, 0.010, 0.040);
    if (load_cards(&s->cloud.target, &s->cloud.gpu, &s->groups[0].edge.device)) {
        CHECK(!"cards");
        scen_del(s);
        return;
    }
    s->groups[0].workload.prompt_tokens = dist_const(100);
    s->groups[0].workload.output_tokens = dist_const(100);
    const llm_card_t *L = &s->cloud.target;
    double kvpt = 2.0 * L->layers * L->kv_heads * (L->hidden / L->heads) * 2;
    s->cloud.kv_capacity_bytes = 2.5 * 200 * kvpt;
    metrics_summary_t m;
    CHECK(run(s, &m, NULL) == 0);
    CHECK_REL(m.value[METRIC_BATCH_MEAN], 2, 1e-9);
    CHECK_REL(m.value[METRIC_THROUGHPUT], 200, 0.01);
    CHECK_REL(m.value[METRIC_GPU_UTIL], 1, 0.001);
    s->cloud.kv_capacity_bytes = 0;   /* fixed verify time: unlimited */
    CHECK(run(s, &m, NULL) == 0);
    CHECK_REL(m.value[METRIC_BATCH_MEAN], 4, 1e-9);
    CHECK_REL(m.value[METRIC_THROUGHPUT], 400 / 1.04, 0.01);
    scen_del(s);
}

/* The service-model path is called with the right shapes. Cloud-only, one
 * tenant, prompt P, n output tokens: TTFT = rtt + iter({P, 0}) and each
 * later token costs iter({1, P + k − 1}) (the last token plus the P + k − 1
 * cached before it). Edge-only: e2e = prefill(P) + Σ_{c=1}^{n−1} draft(P+c)
 * (token c+1 is drafted over the prompt and the c committed tokens). */
static void test_service_model_path(void)
{
    scenario_t *s = scen_new(1, 1, proto_find("cloud-only"), 4, 0.8, 0.010, 0.010, 0.040);
    tenant_group_t *G = &s->groups[0];
    if (load_cards(&s->cloud.target, &s->cloud.gpu, &G->edge.device)) {
        CHECK(!"cards");
        scen_del(s);
        return;
    }
    G->edge.draft = s->cloud.target;
    s->cloud.has_verify_time = 0;
    s->cloud.overhead = 0.0005;
    const int P = 64, n = 10;
    G->workload.prompt_tokens = dist_const(P);
    G->workload.output_tokens = dist_const(n);
    G->workload.think = dist_const(1.0);
    err_t err;
    service_t *sv = service_create(&s->cloud.gpu, &s->cloud.target, PREC_FP16, "",
                                   0.0005, &err);
    CHECK(sv != NULL);
    if (!sv) { scen_del(s); return; }
    service_job_t pj = {P, 0, P - 1};   /* the prompt's last row's logits */
    double ttft = 0.040 + service_iter_time(sv, &pj, 1), e2e = ttft;
    for (int k = 1; k < n; k++) {
        service_job_t j = {1, P + k - 1, 0};
        e2e += service_iter_time(sv, &j, 1);
    }
    service_free(sv);
    metrics_summary_t m;
    CHECK(run(s, &m, NULL) == 0);
    CHECK_REL(m.value[METRIC_TTFT_MEAN], ttft, 1e-9);
    CHECK_REL(m.value[METRIC_E2E_MEAN], e2e, 1e-9);

    s->protocol.proto = proto_find("edge-only");
    G->edge.has_draft_time = 0;
    G->edge.has_prefill_time = 0;
    G->edge.overhead = 0.001;
    sv = service_create(&G->edge.device, &G->edge.draft, PREC_W4A16, "", 0.001, &err);
    CHECK(sv != NULL);
    if (!sv) { scen_del(s); return; }
    e2e = service_prefill_time(sv, P);
    for (int c = 1; c < n; c++) e2e += service_draft_time(sv, P + c);
    service_free(sv);
    CHECK(run(s, &m, NULL) == 0);
    CHECK_REL(m.value[METRIC_E2E_MEAN], e2e, 1e-9);
    output_sources_t src;
    CHECK(sim_service_sources(s, &src, &err) == 0);
    CHECK_STR(src.edge, "datasheet");
    CHECK_STR(src.cloud, "datasheet");
    output_sources_fini(&src);
    scen_del(s);
}

/* Async, multi_block, hand-worked. One tenant, gamma = 2, d = 10 ms,
 * v = 45 ms, rtt = 2 ms (1 ms each way), prompt 1, edge prefill 0, window
 * 64, warmup 0, duration 0.2 s; acceptance replays a trace.
 *   0.001-0.046 cloud prefill; first token at the edge 0.047.
 *   B0 drafted 0.047-0.067, at the cloud 0.068: iteration [0.068, 0.113].
 *   B1 arrives 0.088, B2 0.108 (queued), B3 0.128.
 *   0.113: B0's verdict a = 2 (all accepted). B1 and B2 (same tenant, same
 *   epoch, queued) share the next iteration [0.113, 0.158]. B4 arrives 0.148.
 * Trace {2, 0}: at 0.158 B1 gets a = 0: rejected, the cloud bumps the epoch
 *   and purges B3, B4 (2 jobs); B2, in the same iteration after B1, is stale:
 *   no verdict, its 3 tokens are wasted. The edge gets B1's verdict at 0.159,
 *   commits 1, discards B1's 2 drafts, B2-B4 (6) and the 1 finished token of
 *   B5 (drafting since 0.147): 9 discarded. It restarts: a new block
 *   drafted 0.159-0.179, at the cloud 0.180, iteration [0.180, 0.225] runs
 *   past the end; another drafted 0.179-0.199. Drafted: B0-B4 10 + 1 + 4 =
 *   15 = 2 committed + 9 discarded + 4 in flight at the end.
 *   Verified tokens 3·3 = 9 (B0, B1, B2), stale 3: gpu_waste = 1/3;
 *   verdicts 2; iterations: prefill 1, {B0} 1, {B1, B2} 2, {B6} 1 -> batch
 *   mean 5/4; committed 1 + 2 + 1 = 4.
 * Trace {2} (all accepted): B1 and B2 both get verdicts at 0.158 (2
 *   verdicts, no waste); B3, B4 (queued 0.128, 0.148) share [0.158, 0.203],
 *   past the end. Verified 9 tokens in 3 verdicts; committed 1 + 2·3 = 7;
 *   batches 1, 1, 2, 2 -> mean 1.5.
 * multi_block off, trace {2, 0}: B1 runs alone [0.113, 0.158]; its
 *   rejection purges B2-B4 (3 jobs): verified 6 tokens, none stale. */
static void test_multi_block_hand(void)
{
    scenario_t *s = scen_new(1, 1, proto_find("async"), 2, 0, 0.010, 0.045, 0.002);
    s->duration = 0.2;
    s->warmup = 0;
    s->cloud.batching.multi_block = 1;
    int reject[] = {2, 0}, accept[] = {2};
    scen_trace(s, reject, 2);
    metrics_summary_t m;
    tally_totals_t t;
    CHECK(run(s, &m, &t) == 0);
    CHECK(t.verified_tokens == 9 && t.stale_tokens == 3 && t.verdicts == 2);
    CHECK_REL(m.value[METRIC_GPU_WASTE_FRAC], 1.0 / 3, 1e-12);
    CHECK(t.queue_purged == 2);
    CHECK(t.drafted == 15 && t.discarded == 9 && t.pending_drafts == 4);
    CHECK(t.committed == 4);
    CHECK_REL(m.value[METRIC_BATCH_MEAN], 1.25, 1e-12);
    CHECK_REL(m.value[METRIC_ACCEPTANCE_RATE], 2.0 / 4, 1e-12);

    scen_trace(s, accept, 1);
    CHECK(run(s, &m, &t) == 0);
    CHECK(t.verified_tokens == 9 && t.stale_tokens == 0 && t.verdicts == 3);
    CHECK_ABS(m.value[METRIC_GPU_WASTE_FRAC], 0, 0);
    CHECK(t.committed == 7);
    CHECK_REL(m.value[METRIC_BATCH_MEAN], 1.5, 1e-12);

    s->cloud.batching.multi_block = 0;
    scen_trace(s, reject, 2);
    CHECK(run(s, &m, &t) == 0);
    CHECK(t.verified_tokens == 6 && t.stale_tokens == 0 && t.verdicts == 2);
    CHECK(t.queue_purged == 3);
    CHECK_ABS(m.value[METRIC_GPU_WASTE_FRAC], 0, 0);
    scen_del(s);
}

/* Overloaded async: v = 50 ms > γ·d = 40 ms, so blocks queue behind each
 * other and, with multi_block, share iterations; a rejection then finds
 * later blocks of its tenant inside the batch: gpu_waste_frac > 0, and each
 * verified block is either decided or stale. Without multi_block a tenant
 * has one block per iteration and none can go stale inside it. */
static void test_multi_block_overload(void)
{
    scenario_t *s = scen_new(1, 2, proto_find("async"), 4, 0.8, 0.010, 0.050, 0.040);
    s->duration = 100;
    s->cloud.batching.multi_block = 1;
    metrics_summary_t m;
    tally_totals_t t;
    CHECK(run(s, &m, &t) == 0);
    CHECK(m.value[METRIC_GPU_WASTE_FRAC] > 0.01);
    CHECK_ABS(t.verified_tokens, 5 * t.verdicts + t.stale_tokens, 1e-9);
    s->cloud.batching.multi_block = 0;
    CHECK(run(s, &m, &t) == 0);
    CHECK_ABS(m.value[METRIC_GPU_WASTE_FRAC], 0, 0);
    CHECK(t.stale_tokens == 0);
    /* Sync has one block in flight per tenant: the flag changes nothing. */
    s->protocol.proto = proto_find("sync");
    metrics_summary_t m1;
    CHECK(run(s, &m1, NULL) == 0);
    s->cloud.batching.multi_block = 1;
    CHECK(run(s, &m, NULL) == 0);
    for (int i = 0; i < METRIC_COUNT; i++)
        if (!metric_is_timing(i) && !isnan(m.value[i]))
            CHECK(m.value[i] == m1.value[i]);
    scen_del(s);
}

/* Bookkeeping: events are summed over replications. With α = 1 and fixed
 * times nothing is random, so two replications run the same events as one
 * does, twice. Edge-only uses no GPU: gpu_util and gpu_s_per_ktok are 0. */
static void test_events_and_edge_only(void)
{
    scenario_t *s = scen_new(1, 2, proto_find("async"), 4, 1.0, 0.010, 0.005, 0.040);
    s->duration = 20;
    metrics_summary_t m1, m2;
    CHECK(run(s, &m1, NULL) == 0);
    s->replications = 2;
    CHECK(run(s, &m2, NULL) == 0);
    CHECK(m1.value[METRIC_EVENTS] > 1000);
    CHECK(m2.value[METRIC_EVENTS] == 2 * m1.value[METRIC_EVENTS]);
    CHECK_REL(m2.value[METRIC_EVENTS_PER_S],
              m2.value[METRIC_EVENTS] / m2.value[METRIC_WALL_S], 1e-12);
    s->protocol.proto = proto_find("edge-only");
    CHECK(run(s, &m2, NULL) == 0);
    CHECK(m2.value[METRIC_GPU_UTIL] == 0 && m2.value[METRIC_GPU_S_PER_KTOK] == 0);
    scen_del(s);
}

/* The trace: a header, then rows of 5 fields, in time order. */
static void test_trace(void)
{
    scenario_t *s = scen_new(1, 2, proto_find("async"), 4, 0.6, 0.010, 0.005, 0.040);
    s->duration = 2;
    s->warmup = 0.5;
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (!f) { scen_del(s); return; }
    sim_options_t o = {.trace = f};
    metrics_summary_t m;
    err_t err;
    CHECK(sim_run(s, &o, &m, &err) == 0);
    rewind(f);
    char line[256];
    CHECK(fgets(line, sizeof line, f) && strcmp(line, "time,tenant,event,block,tokens\n") == 0);
    int rows = 0, ordered = 1, rollbacks = 0;
    double prev = 0;
    while (fgets(line, sizeof line, f)) {
        double t;
        int tenant;
        char ev[64];
        long b, k;
        if (sscanf(line, "%lf,%d,%63[^,],%ld,%ld", &t, &tenant, ev, &b, &k) != 5) break;
        ordered &= t >= prev;
        prev = t;
        rollbacks += strcmp(ev, "rollback") == 0;
        rows++;
    }
    CHECK(rows > 100);
    CHECK(ordered);
    CHECK(rollbacks > 5);
    fclose(f);
    scen_del(s);
}

int main(void)
{
    RUN(test_sync_closed_form);
    RUN(test_async_extremes);
    RUN(test_async_closed_form);
    RUN(test_baselines);
    RUN(test_async_draft_waste);
    RUN(test_kv_admission_blocks);
    RUN(test_service_model_path);
    RUN(test_multi_block_hand);
    RUN(test_multi_block_overload);
    RUN(test_events_and_edge_only);
    RUN(test_trace);
    return check_done();
}
