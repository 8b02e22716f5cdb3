/* cloud: batching policies (continuous, window, max_tokens chunking) on
 * hand-worked small cases, per-tenant order, purges, KV admission and
 * pinning. Every iteration takes a fixed 1 s so the schedule can be worked
 * out by hand (comments give it). */
#include "check.h"
#include "entity/cloud.h"

typedef struct done_rec {
    int tenant, kind, tokens_done, remaining;
    double t;
} done_rec_t;

typedef struct harness {
    engine_t *eng;
    tally_t *tl;
    cloud_t *c;
    cloud_cfg_t cfg;
    done_rec_t rec[64];
    int nrec;
    int admitted[16];
    int nadm;
    int left[64];   /* per tenant: prefill tokens not yet processed */
} harness_t;

/* The tokens an iteration did of job j: a prefill's drop in what remains
 * (the cloud reports only the remainder), any other job whole. */
static int on_done(void *ctx, const cloud_job_t *j, double now)
{
    harness_t *h = ctx;
    int done = j->tokens;
    if (j->kind == CLOUD_PREFILL && j->tenant >= 0 && j->tenant < 64) {
        done = h->left[j->tenant] - j->tokens;
        h->left[j->tenant] = j->tokens;
    }
    if (h->nrec < 64)
        h->rec[h->nrec++] = (done_rec_t){j->tenant, j->kind, done, j->tokens, now};
    return 0;
}

static int on_admit(void *ctx, int tenant, int replica, double now)
{
    harness_t *h = ctx;
    (void)replica; (void)now;
    h->admitted[h->nadm++] = tenant;
    return 0;
}

static harness_t *setup_multi(const char *policy, int max_batch, double max_wait,
                              int max_tokens, int replicas, double kv, int multi)
{
    harness_t *h = calloc(1, sizeof *h);
    err_t err;
    h->cfg.replicas = replicas;
    h->cfg.has_verify_time = 1;
    h->cfg.verify_time = dist_const(1.0);
    h->cfg.batching.policy = batch_policy_find(policy);
    CHECK(h->cfg.batching.policy != NULL);
    h->cfg.batching.max_batch = max_batch;
    h->cfg.batching.max_wait = max_wait;
    h->cfg.batching.max_tokens = max_tokens;
    h->cfg.batching.multi_block = multi;
    h->cfg.pinning = PIN_LEAST_LOADED;
    h->eng = engine_create(16, &err);
    h->tl = tally_create(0, 1e9, 1, (const int[]){16}, 0);
    cloud_cb_t cb = {h, on_done, on_admit, NULL};
    h->c = cloud_create(&h->cfg, 16, NULL, kv, h->eng, 0, 1, &cb, h->tl, NULL, 1, 0, &err);
    if (!h->c) printf("  %s\n", err.msg);
    return h;
}

static harness_t *setup(const char *policy, int max_batch, double max_wait, int max_tokens,
                        int replicas, double kv)
{
    return setup_multi(policy, max_batch, max_wait, max_tokens, replicas, kv, 0);
}

static void teardown(harness_t *h)
{
    cloud_free(h->c);
    tally_free(h->tl);
    engine_free(h->eng);
    free(h);
}

/* Submits a job at time t by running the engine up to t first. */
static void submit_at(harness_t *h, double t, int tenant, int kind, int tokens)
{
    CHECK(engine_run(h->eng, t) == 0);
    cloud_job_t j = {0};
    j.tenant = tenant;
    j.kind = kind;
    j.tokens = tokens;
    if (kind == CLOUD_PREFILL && tenant >= 0 && tenant < 64) h->left[tenant] = tokens;
    CHECK(cloud_submit(h->c, 0, &j, t) == 0);
}

/* Submits a verify block of `tokens` with an epoch at time t. */
static void submit_block(harness_t *h, double t, int tenant, int tokens, uint32_t epoch)
{
    CHECK(engine_run(h->eng, t) == 0);
    cloud_job_t j = {0};
    j.tenant = tenant;
    j.kind = CLOUD_VERIFY;
    j.tokens = tokens;
    j.epoch = epoch;
    CHECK(cloud_submit(h->c, 0, &j, t) == 0);
}

/* Continuous, max_batch 2: A, B, C arrive at t = 0. The zero-delay kick
 * lets all three be seen: iteration [0,1] = {A, B}, [1,2] = {C}. Queue
 * delays 0, 0, 1: mean 1/3. */
static void test_continuous(void)
{
    harness_t *h = setup("continuous", 2, 0, 0, 1, INFINITY);
    for (int t = 0; t < 3; t++) submit_at(h, 0, t, CLOUD_VERIFY, 5);
    CHECK(engine_run(h->eng, 10) == 0);
    CHECK(h->nrec == 3);
    CHECK(h->rec[0].tenant == 0 && h->rec[0].t == 1);
    CHECK(h->rec[1].tenant == 1 && h->rec[1].t == 1);
    CHECK(h->rec[2].tenant == 2 && h->rec[2].t == 2);
    CHECK_REL(hist_mean(h->tl->all.qdelay), 1.0 / 3, 1e-12);
    CHECK_REL(hist_mean(h->tl->batch), 1.5, 1e-12);
    CHECK_REL(h->tl->busy, 2, 1e-12);
    teardown(h);
}

/* One job per tenant per batch: tenant 0's two blocks at t = 0 go in [0,1]
 * and [1,2]; tenant 1's block shares the first iteration. */
static void test_tenant_order(void)
{
    harness_t *h = setup("continuous", 8, 0, 0, 1, INFINITY);
    submit_at(h, 0, 0, CLOUD_VERIFY, 5);
    submit_at(h, 0, 0, CLOUD_VERIFY, 5);
    submit_at(h, 0, 1, CLOUD_VERIFY, 5);
    CHECK(engine_run(h->eng, 10) == 0);
    CHECK(h->nrec == 3);
    CHECK(h->rec[0].tenant == 0 && h->rec[0].t == 1);
    CHECK(h->rec[1].tenant == 1 && h->rec[1].t == 1);
    CHECK(h->rec[2].tenant == 0 && h->rec[2].t == 2);
    teardown(h);
}

/* Window, max_batch 3, max_wait 0.5: A at 0, B at 0.2 -> the timer fires at
 * 0.5 with {A, B}, done at 1.5. C, D, E at 0.6, 0.7, 0.8 queue while busy;
 * at 1.5 three are queued = max_batch: start at once, done at 2.5. Then F at
 * 3.0 alone waits the full 0.5: done at 4.5. */
static void test_window(void)
{
    harness_t *h = setup("window", 3, 0.5, 0, 1, INFINITY);
    submit_at(h, 0.0, 0, CLOUD_VERIFY, 5);
    submit_at(h, 0.2, 1, CLOUD_VERIFY, 5);
    submit_at(h, 0.6, 2, CLOUD_VERIFY, 5);
    submit_at(h, 0.7, 3, CLOUD_VERIFY, 5);
    submit_at(h, 0.8, 4, CLOUD_VERIFY, 5);
    submit_at(h, 3.0, 5, CLOUD_VERIFY, 5);
    CHECK(engine_run(h->eng, 10) == 0);
    CHECK(h->nrec == 6);
    double want[] = {1.5, 1.5, 2.5, 2.5, 2.5, 4.5};
    for (int i = 0; i < 6 && i < h->nrec; i++) {
        CHECK(h->rec[i].tenant == i);
        CHECK_ABS(h->rec[i].t, want[i], 1e-12);
    }
    /* A full batch starts without waiting: 3 jobs at t = 10. */
    for (int t = 0; t < 3; t++) submit_at(h, 10, 6 + t, CLOUD_VERIFY, 5);
    CHECK(engine_run(h->eng, 20) == 0);
    CHECK(h->nrec == 9);
    CHECK_ABS(h->rec[8].t, 11, 1e-12);
    teardown(h);
}

/* max_tokens 10. Queue P (prefill 25, tenant 0), V (verify 5, tenant 1):
 * [0,1] P takes 10, budget spent, V waits; [1,2] P 10; [2,3] P 5 + V 5.
 * Then V2 (verify 5, tenant 2) before P2 (prefill 25, tenant 3) at t = 5:
 * [5,6] V2 5 + P2 5; [6,7] P2 10; [7,8] P2 10. A verify job that does not
 * fit the remaining budget waits rather than splitting. */
static void test_max_tokens_chunking(void)
{
    harness_t *h = setup("continuous", 8, 0, 10, 1, INFINITY);
    submit_at(h, 0, 0, CLOUD_PREFILL, 25);
    submit_at(h, 0, 1, CLOUD_VERIFY, 5);
    CHECK(engine_run(h->eng, 4) == 0);
    CHECK(h->nrec == 4);
    CHECK(h->rec[0].tenant == 0 && h->rec[0].tokens_done == 10 && h->rec[0].remaining == 15 && h->rec[0].t == 1);
    CHECK(h->rec[1].tenant == 0 && h->rec[1].tokens_done == 10 && h->rec[1].remaining == 5 && h->rec[1].t == 2);
    CHECK(h->rec[2].tenant == 0 && h->rec[2].tokens_done == 5 && h->rec[2].remaining == 0 && h->rec[2].t == 3);
    CHECK(h->rec[3].tenant == 1 && h->rec[3].tokens_done == 5 && h->rec[3].t == 3);
    h->nrec = 0;
    submit_at(h, 5, 2, CLOUD_VERIFY, 5);
    submit_at(h, 5, 3, CLOUD_PREFILL, 25);
    CHECK(engine_run(h->eng, 20) == 0);
    CHECK(h->nrec == 4);
    CHECK(h->rec[0].tenant == 2 && h->rec[0].t == 6);
    CHECK(h->rec[1].tenant == 3 && h->rec[1].tokens_done == 5 && h->rec[1].t == 6);
    CHECK(h->rec[2].tokens_done == 10 && h->rec[2].t == 7);
    CHECK(h->rec[3].tokens_done == 10 && h->rec[3].remaining == 0 && h->rec[3].t == 8);
    h->nrec = 0;
    /* Budget 10: V(6) fits, V(6) of another tenant does not (4 left) and
     * waits for the next iteration; a 1-token decode behind it fits. */
    submit_at(h, 30, 4, CLOUD_VERIFY, 6);
    submit_at(h, 30, 5, CLOUD_VERIFY, 6);
    submit_at(h, 30, 6, CLOUD_DECODE, 1);
    CHECK(engine_run(h->eng, 40) == 0);
    CHECK(h->nrec == 3);
    CHECK(h->rec[0].tenant == 4 && h->rec[0].t == 31);
    CHECK(h->rec[1].tenant == 6 && h->rec[1].t == 31);
    CHECK(h->rec[2].tenant == 5 && h->rec[2].t == 32);
    teardown(h);
}

/* Purge: while [0,1] runs tenant 0's first block, its next three queue;
 * purging removes exactly those three (never verified), not tenant 1's. */
static void test_purge(void)
{
    harness_t *h = setup("continuous", 8, 0, 0, 1, INFINITY);
    submit_at(h, 0, 0, CLOUD_VERIFY, 5);
    CHECK(engine_run(h->eng, 0.5) == 0);
    CHECK(cloud_busy(h->c, 0));
    submit_at(h, 0.5, 0, CLOUD_VERIFY, 5);
    submit_at(h, 0.5, 1, CLOUD_VERIFY, 5);
    submit_at(h, 0.5, 0, CLOUD_VERIFY, 5);
    submit_at(h, 0.5, 0, CLOUD_VERIFY, 5);
    CHECK(cloud_queued(h->c, 0) == 4);
    CHECK(cloud_purge(h->c, 0, 0, 0.6) == 3);
    CHECK(cloud_queued(h->c, 0) == 1);
    CHECK(engine_run(h->eng, 10) == 0);
    CHECK(h->nrec == 2);
    CHECK(h->rec[0].tenant == 0 && h->rec[0].t == 1);
    CHECK(h->rec[1].tenant == 1 && h->rec[1].t == 2);
    CHECK(h->tl->raw.queue_purged == 3);
    CHECK_ABS(h->tl->raw.queue_purged_sojourn, 3 * 0.1, 1e-12);
    teardown(h);
}

/* KV capacity 100: 50 and 40 fit; 30 waits; 5 would fit but waits behind
 * it (FIFO); releasing 50 admits 30 then 5 (40+30+5 = 75). A request larger
 * than the whole capacity gets in only on an empty replica. */
/* multi_block. Queue at t = 0 (FCFS): A0, A1 (tenant 0), B (tenant 1), A2
 * (tenant 0), all epoch 0, max_batch 3: A0, A1 and B fill [0,1] (each block
 * is one job towards max_batch, so A2, though eligible, waits), A2 runs in
 * [1,2]. Then at t = 5: C0 (epoch 0), C1 (epoch 1), C2 (epoch 1) of tenant
 * 2 and D of tenant 3: C1 is of a new epoch, so it and C2 behind it wait;
 * [5,6] = {C0, D}, [6,7] = {C1, C2}. Callbacks come in batch order, so a
 * tenant's blocks are seen in order. */
static void test_multi_block(void)
{
    harness_t *h = setup_multi("continuous", 3, 0, 0, 1, INFINITY, 1);
    submit_block(h, 0, 0, 5, 0);
    submit_block(h, 0, 0, 5, 0);
    submit_block(h, 0, 1, 5, 0);
    submit_block(h, 0, 0, 5, 0);
    CHECK(engine_run(h->eng, 4) == 0);
    CHECK(h->nrec == 4);
    int want_t[] = {0, 0, 1, 0};
    double want_at[] = {1, 1, 1, 2};
    for (int i = 0; i < 4 && i < h->nrec; i++)
        CHECK(h->rec[i].tenant == want_t[i] && h->rec[i].t == want_at[i]);
    CHECK_REL(hist_mean(h->tl->batch), 2, 1e-12);
    h->nrec = 0;
    submit_block(h, 5, 2, 5, 0);
    submit_block(h, 5, 2, 5, 1);
    submit_block(h, 5, 2, 5, 1);
    submit_block(h, 5, 3, 5, 0);
    CHECK(engine_run(h->eng, 10) == 0);
    CHECK(h->nrec == 4);
    int want_t2[] = {2, 3, 2, 2};
    double want_at2[] = {6, 6, 7, 7};
    for (int i = 0; i < 4 && i < h->nrec; i++)
        CHECK(h->rec[i].tenant == want_t2[i] && h->rec[i].t == want_at2[i]);
    teardown(h);
}

/* multi_block within max_tokens 10. Tenant 0 queues blocks of 5, 6, 4
 * tokens, tenant 1 one of 4: [0,1] takes 5; the 6 does not fit the 5 left
 * and waits, and so does tenant 0's 4 behind it (a tenant's blocks keep
 * their order), while tenant 1's 4 fits: {A5, B4}. [1,2] = {A6, A4} = 10
 * tokens. Without multi_block the same queue gives {A5, B4}, {A6}, {A4}. */
static void test_multi_block_tokens(void)
{
    for (int multi = 1; multi >= 0; multi--) {
        harness_t *h = setup_multi("continuous", 8, 0, 10, 1, INFINITY, multi);
        submit_block(h, 0, 0, 5, 0);
        submit_block(h, 0, 0, 6, 0);
        submit_block(h, 0, 0, 4, 0);
        submit_block(h, 0, 1, 4, 0);
        CHECK(engine_run(h->eng, 10) == 0);
        CHECK(h->nrec == 4);
        int want_tok[] = {5, 4, 6, 4};
        int want_ten[] = {0, 1, 0, 0};
        double want_at[2][4] = {{1, 1, 2, 3}, {1, 1, 2, 2}};
        for (int i = 0; i < 4 && i < h->nrec; i++) {
            CHECK(h->rec[i].tenant == want_ten[i]);
            CHECK(h->rec[i].tokens_done == want_tok[i]);
            CHECK(h->rec[i].t == want_at[multi][i]);
        }
        teardown(h);
    }
}

static void test_kv_admission(void)
{
    harness_t *h = setup("continuous", 8, 0, 0, 2, 100);
    CHECK(cloud_reserve(h->c, 0, 0, 50) == 1);
    CHECK(cloud_reserve(h->c, 0, 1, 40) == 1);
    CHECK(cloud_reserve(h->c, 0, 2, 30) == 0);
    CHECK(cloud_reserve(h->c, 0, 3, 5) == 0);
    CHECK(h->nadm == 0);
    CHECK(cloud_release(h->c, 0, 50, 1.0) == 0);
    CHECK(h->nadm == 2 && h->admitted[0] == 2 && h->admitted[1] == 3);
    /* 75 used: 30 more does not fit. */
    CHECK(cloud_reserve(h->c, 0, 4, 30) == 0);
    CHECK(cloud_release(h->c, 0, 5, 2.0) == 0);
    CHECK(h->nadm == 3 && h->admitted[2] == 4);
    /* Oversized on the empty replica 1: admitted alone; then nothing else. */
    CHECK(cloud_reserve(h->c, 1, 5, 500) == 1);
    CHECK(cloud_reserve(h->c, 1, 6, 1) == 0);
    CHECK(cloud_release(h->c, 1, 500, 3.0) == 0);
    CHECK(h->nadm == 4 && h->admitted[3] == 6);
    teardown(h);
}

static void test_pinning(void)
{
    harness_t *h = setup("continuous", 8, 0, 0, 3, INFINITY);
    /* least-loaded: 0, 1, 2; free 1 -> next goes to 1; then ties -> 0. */
    CHECK(cloud_pin(h->c) == 0);
    CHECK(cloud_pin(h->c) == 1);
    CHECK(cloud_pin(h->c) == 2);
    cloud_unpin(h->c, 1);
    CHECK(cloud_pin(h->c) == 1);
    CHECK(cloud_pin(h->c) == 0);
    teardown(h);
    h = setup("continuous", 8, 0, 0, 3, INFINITY);
    h->cfg.pinning = PIN_ROUND_ROBIN;
    CHECK(cloud_pin(h->c) == 0);
    cloud_unpin(h->c, 0);
    CHECK(cloud_pin(h->c) == 1);
    CHECK(cloud_pin(h->c) == 2);
    CHECK(cloud_pin(h->c) == 0);
    teardown(h);
}

int main(void)
{
    RUN(test_continuous);
    RUN(test_tenant_order);
    RUN(test_window);
    RUN(test_max_tokens_chunking);
    RUN(test_purge);
    RUN(test_multi_block);
    RUN(test_multi_block_tokens);
    RUN(test_kv_admission);
    RUN(test_pinning);
    return check_done();
}
