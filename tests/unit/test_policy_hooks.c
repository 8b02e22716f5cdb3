/* What the policy hooks observe: a gamma policy's on_verdict (the block's
 * gamma, its accepted drafts, its send and receive times) and a batching
 * policy's pick (the time the iteration starts, the KV headroom).
 *
 * One tenant, fixed times, no jitter, unlimited links: a message takes
 * exactly rtt/2 each way, and with verification (v) shorter than drafting a
 * block nothing ever queues. So, derived by hand: a verify iteration
 * starts rtt/2 after its block was sent, and its verdict arrives v + rtt/2
 * after that; every observed round trip is rtt + v. In async mode several
 * blocks are in flight and rejections drop the ones behind, so the round
 * trips also check that each verdict is matched with its own block's send
 * time.
 */
#include <math.h>
#include <string.h>

#include "check.h"
#include "run/sim.h"
#include "test_sim_scen.h"

#define MAXOBS 4096
#define RTT 0.040
#define DRAFT 0.010
#define VERIFY 0.005

/* What the hooks saw in the current run (tests are single-threaded). */
static struct {
    int nv, np;
    int gamma[MAXOBS], acc[MAXOBS];
    double sent[MAXOBS], recv[MAXOBS];
    double pick_at[MAXOBS], kv_free[MAXOBS];
} seen;

static int fixed_limit(int gamma) { return gamma; }

static int fixed_next(gamma_state_t *st, int tenant, double now)
{
    (void)tenant;
    (void)now;
    return st->gamma;
}

static void observe(gamma_state_t *st, int tenant, int gamma, int accepted, double sent,
                    double now)
{
    (void)st;
    (void)tenant;
    if (seen.nv >= MAXOBS) return;
    seen.gamma[seen.nv] = gamma;
    seen.acc[seen.nv] = accepted;
    seen.sent[seen.nv] = sent;
    seen.recv[seen.nv++] = now;
}

static const gamma_ops_t watching = {.name = "watching",
                                     .limit = fixed_limit,
                                     .next = fixed_next,
                                     .on_verdict = observe};

static double when_now(const batching_cfg_t *cfg, const batch_queue_t *q, double now)
{
    (void)cfg;
    (void)q;
    return now;
}

static void pick_noting(const batching_cfg_t *cfg, const batch_queue_t *q, double now,
                        const batch_order_t *order, batch_cap_t cap, batch_scratch_t *s,
                        batch_pick_t *out)
{
    if (seen.np < MAXOBS) {
        seen.pick_at[seen.np] = now;
        seen.kv_free[seen.np++] = q->kv_free;
    }
    batch_pack(cfg, q, now, order, cap, s, out);
}

static const batch_policy_t noting = {.name = "noting", .when = when_now,
                                      .pick = pick_noting};

static scenario_t *one_tenant(const char *mode, double alpha, double duration)
{
    scenario_t *s = scen_new(1, 1, proto_find(mode), 4, alpha, DRAFT, VERIFY, RTT);
    s->protocol.gamma_policy = &watching;
    s->cloud.batching.policy = &noting;
    s->duration = duration;
    s->warmup = 0;
    memset(&seen, 0, sizeof seen);
    return s;
}

static void run(scenario_t *s)
{
    metrics_summary_t m;
    err_t err = {0};
    CHECK(sim_run(s, NULL, &m, &err) == 0);
    if (err.msg[0]) printf("  %s\n", err.msg);
}

/* Sync: picks are [prefill, block 1, block 2, ...]; verdict k's block was
 * picked rtt/2 after it was sent and judged v + rtt/2 before it arrived. */
static void test_sync_times(void)
{
    scenario_t *s = one_tenant("sync", 0.7, 5);
    run(s);
    CHECK(seen.nv > 20 && seen.np >= seen.nv + 1);
    int bad = 0;
    for (int k = 0; k < seen.nv && k + 1 < seen.np; k++) {
        bad += seen.gamma[k] != 4 || seen.acc[k] < 0 || seen.acc[k] > 4;
        bad += !(fabs(seen.pick_at[k + 1] - (seen.sent[k] + RTT / 2)) < 1e-9);
        bad += !(fabs(seen.recv[k] - (seen.pick_at[k + 1] + VERIFY + RTT / 2)) < 1e-9);
    }
    CHECK(bad == 0);
    for (int k = 0; k < seen.np; k++) bad += !(seen.kv_free[k] == INFINITY);
    CHECK(bad == 0);   /* a fixed verify time and no kv_capacity: KV unlimited */
    scen_del(s);
}

/* Async with rejections: every verdict's round trip is rtt + v. */
static void test_async_round_trips(void)
{
    scenario_t *s = one_tenant("async", 0.7, 5);
    run(s);
    CHECK(seen.nv > 20);
    int bad = 0, rejected = 0;
    for (int k = 0; k < seen.nv; k++) {
        bad += !(fabs(seen.recv[k] - seen.sent[k] - (RTT + VERIFY)) < 1e-9);
        rejected += seen.acc[k] < seen.gamma[k];
    }
    CHECK(bad == 0);
    CHECK(rejected > 5);   /* rollbacks happened, and the match survived them */
    scen_del(s);
}

int main(void)
{
    RUN(test_sync_times);
    RUN(test_async_round_trips);
    return check_done();
}
