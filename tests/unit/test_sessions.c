/* Sessions and the cloud's prefix cache (docs/design.md "Sessions"):
 * a session's prompts grow turn by turn (workload), the cloud keeps a
 * finished turn's KV as the session's prefix and evicts least recently
 * used prefixes (cloud), and a whole run's hit rate, re-prefill cost and
 * TTFT against counts and times worked out by hand. */
#include "check.h"
#include "config/scenario.h"
#include "entity/cloud.h"
#include "model/workload.h"
#include "model/batch.h"
#include "run/sim.h"

/* ---- workload: the turns of a session --------------------------------- */

/* Three turns of 100 new tokens and 50 output each, think 1 s, gap 10 s:
 * turn k's prompt is the earlier turns' prompts and outputs plus 100 new
 * ones, so 100, 100 + 150 = 250, 250 + 50 + 100 = 400, then a new session
 * from 100 again; the prefix is what came before the new tokens: 0, 150,
 * 300, 0. Within a session the next turn comes a think time after the last
 * ended, after the session's last turn a gap; the first request of all a
 * think time after the start. */
static void test_workload_turns(void)
{
    workload_cfg_t cfg = {0};
    cfg.arrival = ARRIVAL_CLOSED;
    cfg.think = dist_const(1);
    cfg.prompt_tokens = dist_const(100);
    cfg.output_tokens = dist_const(50);
    cfg.session.has_turns = cfg.session.has_gap = 1;
    cfg.session.turns = dist_const(3);
    cfg.session.gap = dist_const(10);
    workload_t w;
    err_t err;
    CHECK(workload_init(&w, &cfg, NULL, 1, 0, 0, &err) == 0);
    CHECK(w.session == NULL);   /* constants: no stream */
    const int want_prompt[] = {100, 250, 400, 100, 250, 400, 100};
    const int want_prefix[] = {0, 150, 300, 0, 150, 300, 0};
    /* the next arrival after a request that ended at t = 20 */
    const double want_next[] = {21, 21, 30, 21, 21, 30, 21};
    CHECK(workload_next(&w, 0) == 1);
    for (int k = 0; k < 7; k++) {
        int p, o;
        workload_lengths(&w, &p, &o);
        CHECK(p == want_prompt[k]);
        CHECK(o == 50);
        CHECK(workload_prefix(&w) == want_prefix[k]);
        CHECK(workload_next(&w, 20) == want_next[k]);
    }
    workload_fini(&w);

    /* Without sessions nothing changes: every prompt is its own draw. */
    cfg.session.has_turns = cfg.session.has_gap = 0;
    CHECK(workload_init(&w, &cfg, NULL, 1, 0, 0, &err) == 0);
    for (int k = 0; k < 3; k++) {
        int p, o;
        workload_lengths(&w, &p, &o);
        CHECK(p == 100 && workload_prefix(&w) == 0);
        CHECK(workload_next(&w, 20) == 21);
    }
    workload_fini(&w);
}

/* ---- cloud: LRU over the replica's KV ---------------------------------- */

typedef struct lru_h {
    engine_t *eng;
    tally_t *tl;
    cloud_t *c;
    cloud_cfg_t cfg;
    int admitted[8], nadm;
} lru_h_t;

static int lru_done(void *ctx, const cloud_job_t *j, double now)
{
    (void)ctx; (void)j; (void)now;
    return 0;
}

static int lru_admit(void *ctx, int tenant, int replica, double now)
{
    lru_h_t *h = ctx;
    (void)replica; (void)now;
    if (h->nadm < 8) h->admitted[h->nadm++] = tenant;
    return 0;
}

static lru_h_t *lru_setup(double kv)
{
    lru_h_t *h = calloc(1, sizeof *h);
    err_t err;
    h->cfg.replicas = 1;
    h->cfg.has_verify_time = 1;
    h->cfg.verify_time = dist_const(1.0);
    h->cfg.batching.policy = batch_policy_find("continuous");
    h->cfg.batching.max_batch = 8;
    h->cfg.pinning = PIN_LEAST_LOADED;
    h->cfg.prefix_cache.policy = PREFIX_CACHE_LRU;
    h->eng = engine_create(16, &err);
    h->tl = tally_create(0, 1e9, 1, (const int[]){8}, 0);
    cloud_cb_t cb = {h, lru_done, lru_admit, NULL};
    h->c = cloud_create(&h->cfg, 8, NULL, kv, h->eng, 0, 1, &cb, h->tl, NULL, 1, 0, &err);
    if (!h->c) printf("  %s\n", err.msg);
    return h;
}

static void lru_teardown(lru_h_t *h)
{
    cloud_free(h->c);
    tally_free(h->tl);
    engine_free(h->eng);
    free(h);
}

/* Sizes in bytes, powers of two so that every sum is exact: a session's
 * prefix P, and what a turn holds beyond it, A (its new tokens, output
 * and block room). */
#define P 4096.0
#define A 1024.0

/* One turn of tenant t, alone at the cloud, the way ctenant does it: a
 * resident prefix is taken back (a hit: only A more is reserved), else the
 * whole P + A is; at its end the turn keeps P cached and releases A.
 * Returns 1 for a hit. */
static int turn(lru_h_t *h, int t)
{
    int hit = cloud_cache_replica(h->c, t) >= 0;
    double held = hit ? cloud_cache_take(h->c, t) : 0;
    CHECK(held == (hit ? P : 0));
    CHECK(cloud_reserve(h->c, 0, t, hit ? A : P + A) == 1);
    cloud_cache_put(h->c, 0, t, P);
    CHECK(cloud_release(h->c, 0, A, 0) == 0);
    return hit;
}

/* A capacity of exactly k prefixes and one turn's A. n = 3 tenants in the
 * rotation 0 1 2 0 1 2 ...:
 *  - k = 3: every prefix stays: the first round misses (nothing cached),
 *    every later turn hits: 3m − 3 hits in m rounds, no eviction;
 *  - k = 2: least recently used is always the next one to come back (the
 *    classic LRU loop): no hit at all; from the third turn on, every miss
 *    evicts one prefix: 3m − 2 evictions.
 * The rotation 0 1 0 2 (repeated m times) with k = 2: tenant 0 comes back
 * before the other two, so after its first turn it always hits, while 1
 * and 2 evict each other: 2m − 1 hits, and every turn of 1 or 2 but the
 * first (which finds room) evicts: 2m − 1 evictions. After each turn the
 * replica holds min(turns so far' distinct tenants, k) prefixes. */
static void test_lru_rotation(void)
{
    const int m = 5;
    for (int k = 2; k <= 3; k++) {
        lru_h_t *h = lru_setup(k * P + A);
        int hits = 0;
        for (int round = 0; round < m; round++)
            for (int t = 0; t < 3; t++) {
                hits += turn(h, t);
                int seen = round > 0 ? 3 : t + 1;
                CHECK(cloud_kv_used(h->c, 0) == (seen < k ? seen : k) * P);
            }
        printf("  rotation of 3, room for %d: %d hits, %ld evictions in %d turns\n", k,
               hits, cloud_cache_evictions(h->c), 3 * m);
        CHECK(hits == (k == 3 ? 3 * m - 3 : 0));
        CHECK(cloud_cache_evictions(h->c) == (k == 3 ? 0 : 3 * m - 2));
        lru_teardown(h);
    }
    lru_h_t *h = lru_setup(2 * P + A);
    int hits = 0;
    const int order[4] = {0, 1, 0, 2};
    for (int round = 0; round < m; round++)
        for (int q = 0; q < 4; q++) hits += turn(h, order[q]);
    printf("  rotation 0 1 0 2, room for 2: %d hits, %ld evictions\n", hits,
           cloud_cache_evictions(h->c));
    CHECK(hits == 2 * m - 1);
    CHECK(cloud_cache_evictions(h->c) == 2 * m - 1);
    CHECK(cloud_cache_replica(h->c, 0) == 0);   /* the one that always hits */
    lru_teardown(h);
}

/* Room for 2P + A. Tenant 0 holds a running turn (P + A), tenant 1's
 * prefix is cached (P): full. Tenant 2's turn (P + A) would not fit even
 * with every prefix evicted (the running turn's P + A stays), so it waits
 * and tenant 1's prefix stays. When tenant 0's turn ends (P kept, A
 * released: 2P held, both prefixes) evicting the least recently used one,
 * tenant 1's, makes room: tenant 2 is admitted, holding 2P + A with
 * tenant 0's prefix. */
static void test_lru_waits(void)
{
    lru_h_t *h = lru_setup(2 * P + A);
    CHECK(turn(h, 1) == 0);
    CHECK(cloud_reserve(h->c, 0, 0, P + A) == 1);
    CHECK(cloud_kv_used(h->c, 0) == 2 * P + A);
    CHECK(cloud_reserve(h->c, 0, 2, P + A) == 0);
    CHECK(cloud_cache_replica(h->c, 1) == 0);
    CHECK(cloud_cache_evictions(h->c) == 0);
    cloud_cache_put(h->c, 0, 0, P);
    CHECK(cloud_release(h->c, 0, A, 1) == 0);
    CHECK(h->nadm == 1 && h->admitted[0] == 2);
    CHECK(cloud_cache_replica(h->c, 1) == -1);
    CHECK(cloud_cache_replica(h->c, 0) == 0);
    CHECK(cloud_cache_evictions(h->c) == 1);
    CHECK(cloud_kv_used(h->c, 0) == 2 * P + A);
    /* Dropping a prefix (its tenant's new session) releases it. */
    CHECK(cloud_cache_drop(h->c, 0, 2) == 0);
    CHECK(cloud_kv_used(h->c, 0) == P + A);
    lru_teardown(h);
}

/* ---- whole runs ---------------------------------------------------------- */

/* One cloud-only tenant, one session of three turns (100 new tokens, 50
 * output each; the gap after it outlasts the run), rtt 20 ms on unlimited
 * links, every iteration 10 ms (cloud.verify_time), at most 100 tokens an
 * iteration, no drift. A prefill of n tokens takes ceil(n / 100)
 * iterations, alone at the cloud; the first token reaches the device half
 * a round trip after its prefill ends, and the prompt took the other half:
 *
 *   TTFT = rtt + ceil(n / 100) × 10 ms.
 *
 * Turns' prompts: 100, 250, 400 (test_workload_turns). Without a prefix
 * cache (none) each prefills its whole prompt: 1, 3, 4 iterations, TTFT
 * mean 20 ms + (1 + 3 + 4)/3 × 10 ms; both later turns miss (hit rate 0)
 * and prefill their prefixes (150 and 300 tokens) again: 225 a turn. With
 * lru and ample KV each later turn finds its prefix and prefills its 100
 * new tokens: 1 iteration each, TTFT 30 ms; hit rate 1, nothing again. */
static const char *const RUN_YAML =
    "duration: 100s\nwarmup: 0s\nseed: 3\n"
    "protocol: {mode: cloud-only}\n"
    "drift: {start: 0s, edge: 0, cloud: 0}\n"
    "tenants:\n"
    "  count: 1\n"
    "  network: {rtt: 20ms}\n"
    "  workload:\n"
    "    think: 1s\n"
    "    prompt_tokens: 100\n"
    "    output_tokens: 50\n"
    "    session: {turns: 3, gap: 1000s}\n"
    "cloud:\n"
    "  verify_time: 10ms\n"
    "  kv_capacity: 1GiB\n"
    "  batching: {max_tokens: 100}\n";

static int run_with(const char *policy, metrics_summary_t *m)
{
    scenario_t s;
    err_t err = {0};
    scenario_override_t ov = {.path = "cloud.prefix_cache.policy", .value = policy};
    if (scenario_load_string("sessions", RUN_YAML, &ov, 1, &s, &err)) {
        printf("  load: %s\n", err.msg);
        return -1;
    }
    sim_options_t opt = {0};
    int rc = sim_run(&s, &opt, m, &err);
    if (rc) printf("  run: %s\n", err.msg);
    scenario_fini(&s);
    return rc;
}

static void test_run_ttft(void)
{
    metrics_summary_t none, lru;
    CHECK(run_with("none", &none) == 0);
    CHECK(run_with("lru", &lru) == 0);
    printf("  none: ttft %.6f ms, hit rate %g, re-prefill %g tok/turn\n",
           1e3 * none.value[METRIC_TTFT_MEAN], none.value[METRIC_PREFIX_HIT_RATE],
           none.value[METRIC_REPREFILL_TOK_PER_TURN]);
    printf("  lru:  ttft %.6f ms, hit rate %g, re-prefill %g tok/turn\n",
           1e3 * lru.value[METRIC_TTFT_MEAN], lru.value[METRIC_PREFIX_HIT_RATE],
           lru.value[METRIC_REPREFILL_TOK_PER_TURN]);
    CHECK(none.value[METRIC_REQUESTS_DONE] == 3 && lru.value[METRIC_REQUESTS_DONE] == 3);
    CHECK_REL(none.value[METRIC_TTFT_MEAN], 0.020 + (1 + 3 + 4) / 3.0 * 0.010, 1e-9);
    CHECK_REL(lru.value[METRIC_TTFT_MEAN], 0.020 + 0.010, 1e-9);
    CHECK(none.value[METRIC_PREFIX_HIT_RATE] == 0);
    CHECK(none.value[METRIC_REPREFILL_TOK_PER_TURN] == 225);
    CHECK(lru.value[METRIC_PREFIX_HIT_RATE] == 1);
    CHECK(lru.value[METRIC_REPREFILL_TOK_PER_TURN] == 0);
}

/* Three cloud-only tenants A, B, C (one group each), sessions of two
 * turns of 50 new tokens and 50 output, so a first turn holds U = 100
 * tokens of KV and leaves U cached, a second holds 2U (U of prefix) and
 * leaves 2U. Iterations of 1 ms, rtt 20 ms, no drift: a turn lasts about
 * D = 20 ms + 50 iterations = 70 ms, alone at the cloud. Thinks 1, 1.8
 * and 3 s put the turns in the order
 *
 *   A1 (1 s), B1 (1.8 s), A2 (2.07 s), C1 (3 s), B2 (3.67 s), C2 (6.07 s),
 *
 * never two at once; each gap is 20 s minus the tenant's think, so every
 * session starts 20 s + 2D after the last and the order repeats.
 * KV (llama-2-7b fp16: 2 x 32 layers x 4096 x 2 B = 512 KiB a token) of
 * c units of U, half a unit over so that no sum is compared at equality.
 * Worked by hand turn by turn (a first turn's prefix is 0: it only finds
 * room; LRU order is the order of the turns' ends):
 *  - c = 4: the only evictions are of prefixes whose session is over: all
 *    second turns hit.
 *  - c = 3: C1 evicts B's prefix, so B2 misses (and evicts A's, which has
 *    served), C2 hits; the next period's A1 fits and B1 evicts C's: A2 hits
 *    again. 2 hits in 3, every period; B2 prefills its U again.
 *  - c = 2: A2 hits (evicting B's), C1 evicts A's, B2 and C2 find theirs
 *    gone (each evicting the other's): 1 hit in 3, 2U again a period. */
static void test_run_rotation(void)
{
    const double U = 100.0 * 524288;
    const double want_rate[3] = {1.0 / 3, 2.0 / 3, 1};
    const double want_again[3] = {2 * 100.0 / 3, 100.0 / 3, 0};
    for (int c = 2; c <= 4; c++) {
        char yaml[2048];
        snprintf(yaml, sizeof yaml,
                 "duration: 200s\nwarmup: 0s\nseed: 5\n"
                 "protocol: {mode: cloud-only}\n"
                 "drift: {start: 0s, edge: 0, cloud: 0}\n"
                 "tenants:\n"
                 "  network: {rtt: 20ms}\n"
                 "  workload: {prompt_tokens: 50, output_tokens: 50}\n"
                 "  groups:\n"
                 "    - {name: a, count: 1, workload: {think: 1s, session: {turns: 2, gap: 19s}}}\n"
                 "    - {name: b, count: 1, workload: {think: 1.8s, session: {turns: 2, gap: 18.2s}}}\n"
                 "    - {name: c, count: 1, workload: {think: 3s, session: {turns: 2, gap: 17s}}}\n"
                 "cloud:\n"
                 "  verify_time: 1ms\n"
                 "  kv_capacity: %.17gB\n"
                 "  prefix_cache: {policy: lru}\n",
                 (c + 0.5) * U);
        scenario_t s;
        err_t err = {0};
        if (scenario_load_string("rotation", yaml, NULL, 0, &s, &err)) {
            printf("  load: %s\n", err.msg);
            CHECK(0);
            continue;
        }
        metrics_summary_t m;
        sim_options_t opt = {0};
        CHECK(sim_run(&s, &opt, &m, &err) == 0);
        printf("  room for %d: hit rate %.6f (hand %.6f), re-prefill %.4f tok/turn "
               "(hand %.4f), %g requests\n", c, m.value[METRIC_PREFIX_HIT_RATE],
               want_rate[c - 2], m.value[METRIC_REPREFILL_TOK_PER_TURN], want_again[c - 2],
               m.value[METRIC_REQUESTS_DONE]);
        /* 200 s hold 10 whole periods of about 20.14 s: 60 turns. */
        CHECK(m.value[METRIC_REQUESTS_DONE] == 60);
        CHECK_REL(m.value[METRIC_PREFIX_HIT_RATE], want_rate[c - 2], 1e-12);
        CHECK_REL(m.value[METRIC_REPREFILL_TOK_PER_TURN] + 1, want_again[c - 2] + 1, 1e-12);
        scenario_fini(&s);
    }
}

/* No sessions: no turn has a prefix, so both metrics are NaN (nothing to
 * rate), whatever the cache policy. */
static void test_run_nan(void)
{
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load_string("plain", "duration: 10s\nwarmup: 0s\n"
                               "protocol: {mode: cloud-only}\n"
                               "cloud: {verify_time: 10ms, prefix_cache: {policy: lru}}\n",
                               NULL, 0, &s, &err) == 0);
    metrics_summary_t m;
    sim_options_t opt = {0};
    CHECK(sim_run(&s, &opt, &m, &err) == 0);
    CHECK(m.value[METRIC_REQUESTS_DONE] > 0);
    CHECK(isnan(m.value[METRIC_PREFIX_HIT_RATE]));
    CHECK(isnan(m.value[METRIC_REPREFILL_TOK_PER_TURN]));
    scenario_fini(&s);
}

int main(void)
{
    RUN(test_workload_turns);
    RUN(test_lru_rotation);
    RUN(test_lru_waits);
    RUN(test_run_ttft);
    RUN(test_run_rotation);
    RUN(test_run_nan);
    return check_done();
}
