/* Hand-worked scenarios at the edges of the protocol and metrics
 * definitions (docs/design.md "Protocols", docs/metrics.md).
 * Times are powers of two so every sum is exact in binary and coincident
 * events really coincide. */
#include "check.h"
#include "run/sim.h"
#include "test_sim_scen.h"

#define H (1.0 / 256)   /* one-way delay: rtt = 2H */
#define V (1.0 / 64)    /* every cloud iteration */

static int run(const scenario_t *s, metrics_summary_t *m, tally_totals_t *tot)
{
    err_t err;
    int rc = sim_run_detailed(s, NULL, m, tot, &err);
    if (rc) printf("  sim_run: %s\n", err.msg);
    return rc;
}

/* Continuous batching shares a batch among jobs that reach an idle replica
 * at the same instant, also when the replica went idle at that instant by
 * finishing an iteration. Cloud-only, two tenants (output never ends):
 * A starts at 0, its prompt arrives at H, prefill [H, H+V], then one decode
 * iteration after another. B thinks V first: its prompt arrives at H+V, the
 * instant A's prefill iteration ends, so B's prefill joins A's first decode
 * iteration [H+V, H+2V]. TTFT: A = H + V + H; B = (H+V) - V + V + H
 * = 2H + V as well (B's clock starts at V). */
static void test_same_instant_joins_after_iteration(void)
{
    scenario_t *s = scen_new(2, 1, proto_find("cloud-only"), 2, 1.0, V, V, 2 * H);
    s->duration = 0.25;
    s->warmup = 0;
    s->groups[1].workload.think = dist_const(V);
    metrics_summary_t m;
    tally_totals_t tot;
    CHECK(run(s, &m, &tot) == 0);
    CHECK_REL(m.value[METRIC_TTFT_MEAN], 2 * H + V, 1e-9);
    CHECK_REL(m.value[METRIC_TTFT_P99], 2 * H + V, 0.02);
    scen_del(s);
}

/* Window batching with max_wait 0 closes the window at once, but only after
 * every job arriving at that instant is queued: A's and B's prompts both
 * reach the idle replica at H and share one prefill iteration [H, H+V]
 * (max_batch 2), so both TTFTs are H + V + H. (Starting A's iteration on its
 * own arrival would give B 2H + 2V.) */
static void test_same_instant_window_zero_wait(void)
{
    scenario_t *s = scen_new(2, 1, proto_find("cloud-only"), 2, 1.0, V, V, 2 * H);
    s->duration = 0.25;
    s->warmup = 0;
    s->cloud.batching.policy = batch_policy_find("window");
    s->cloud.batching.max_batch = 2;
    s->cloud.batching.max_wait = 0;
    metrics_summary_t m;
    tally_totals_t tot;
    CHECK(run(s, &m, &tot) == 0);
    CHECK_REL(m.value[METRIC_TTFT_MEAN], 2 * H + V, 1e-9);
    scen_del(s);
}

/* Chunked prefill (max_tokens 4): a prompt of 10 tokens takes chunks of
 * 4, 4 and 2 in three iterations, so TTFT = H + 3V + H (edge prefill 0).
 * One request of 2 tokens, sync gamma 2, alpha 1: after the first token one
 * block (2V... drafted in 2d), verdict commits min(a+1, left) = 1 token. */
static void test_chunked_prefill_ttft(void)
{
    scenario_t *s = scen_new(1, 1, proto_find("sync"), 2, 1.0, V, V, 2 * H);
    s->duration = 0.125 + 4 * H + 6 * V + 1.0 / 128;   /* one request */
    s->warmup = 0;
    s->cloud.batching.max_tokens = 4;
    s->groups[0].workload.prompt_tokens = dist_const(10);
    s->groups[0].workload.output_tokens = dist_const(2);
    s->groups[0].workload.think = dist_const(0.125);   /* starts at 1/8 */
    metrics_summary_t m;
    tally_totals_t tot;
    CHECK(run(s, &m, &tot) == 0);
    CHECK_REL(m.value[METRIC_TTFT_MEAN], 2 * H + 3 * V, 1e-9);
    /* e2e = TTFT + 2d + H + V + H. */
    CHECK_REL(m.value[METRIC_E2E_MEAN], 4 * H + 6 * V, 1e-9);
    CHECK(tot.committed == 2 && tot.requests_done == 1);
    scen_del(s);
}

/* Async rollback with the next block half drafted. gamma 2, d = V, v = V,
 * rtt = 2H, window 8 (never full), accept trace 2, 0, 2, 0, ... In units
 * u = 1/256 s (V = 4u, H = u): a cycle starts drafting at S (just after a
 * commit). Block k is sent at S + 8(k+1), verified on arrival and its
 * verdict reaches the edge at S + 8k + 14 (one-way H, iteration V, one-way
 * H). b0 (a = 2): commit 2 at S+14 (gap 14). b1 (a = 0): commit 1 at S+22
 * (gap 8), roll back: b1's 2 drafts and the 1 finished draft of b2 (begun
 * at S+16, 6u = 1.5 d ago) are discarded; drafting restarts at S+22.
 * Per 22u cycle: 3 tokens, drafted 2 blocks + 1 partial = 5, discarded 3,
 * verdicts 2 (3 tokens), accepted 2 of 4, GPU busy 8u, no stall.
 * The first cycle starts at the first token (2H + V = 6u), so cycle k
 * starts at S_k = 6u + 22u k; warm-up S_12 + u and end S_212 + u hold
 * exactly the events of cycles 12..211 (sends S+8, S+16; iterations
 * [S+9, S+13], [S+17, S+21]; commits S+14, S+22), so every ratio is exact
 * and rates divide by the 200 cycles of duration - warmup. */
static void test_async_rollback_partial_draft(void)
{
    static int tr[] = {2, 0};
    scenario_t *s = scen_new(1, 1, proto_find("async"), 2, 1.0, V, V, 2 * H);
    scen_trace(s, tr, 2);
    s->protocol.window = 8;
    double u = 1.0 / 256;
    s->warmup = (6 + 22 * 12 + 1) * u;
    s->duration = (6 + 22 * 212 + 1) * u;
    metrics_summary_t m;
    CHECK(run(s, &m, NULL) == 0);
    CHECK_REL(m.value[METRIC_THROUGHPUT], 3 / (22 * u), 1e-9);
    CHECK_REL(m.value[METRIC_ITL_MEAN], 22 * u / 3, 1e-9);
    CHECK_REL(m.value[METRIC_COMMIT_GAP_P99], 14 * u, 0.02);
    CHECK_REL(m.value[METRIC_ACCEPTANCE_RATE], 0.5, 1e-9);
    CHECK_REL(m.value[METRIC_ACCEPTED_LEN_MEAN], 1.5, 1e-9);
    CHECK_REL(m.value[METRIC_DRAFT_WASTE_FRAC], 0.6, 1e-9);
    CHECK_ABS(m.value[METRIC_EDGE_STALL_FRAC], 0, 1e-12);
    CHECK_ABS(m.value[METRIC_GPU_WASTE_FRAC], 0, 1e-12);
    CHECK_REL(m.value[METRIC_GPU_UTIL], 8.0 / 22, 1e-9);
    /* Uplink: a block is gamma * 4 + 64 bytes; downlink: a verdict is
     * 64 + (a + 1) * 4 bytes: per cycle up 2 * 72, down 76 + 68. */
    CHECK_REL(m.value[METRIC_NET_UP_BYTES_PER_TOK], 144.0 / 3, 1e-9);
    CHECK_REL(m.value[METRIC_NET_DOWN_BYTES_PER_TOK], 144.0 / 3, 1e-9);
    scen_del(s);
}

int main(void)
{
    RUN(test_same_instant_joins_after_iteration);
    RUN(test_same_instant_window_zero_wait);
    RUN(test_chunked_prefill_ttft);
    RUN(test_async_rollback_partial_draft);
    return check_done();
}
