/* messages: the edge and the cloud share no tenant state (issue 24). The
 * cloud side (ctenant, the cloud, the protocols' cloud operations) is run
 * with the edge table absent or filled with garbage and must size its jobs
 * and set their SLO deadlines from the prompt message alone; the edge side
 * is run without the cloud table and must put the request's lengths and
 * start into the message it sends. Every expected value below is worked
 * out by hand from the scenario text. */
#include "check.h"
#include "config/scenario.h"
#include "entity/cloud.h"
#include "entity/ctenant.h"
#include "entity/edge.h"
#include "entity/msg.h"
#include "entity/route.h"
#include "run/sim.h"

/* One cloud replica, iterations of 10 ms, no KV limit; SLOs of 1 s to the
 * first token and 100 ms per token after it. Two tenants, so that a tenant
 * index other than 0 is exercised. */
#define MSGTEST_CLOUD                                                          \
    "seed: 3\n"                                                                \
    "duration: 100s\n"                                                         \
    "replications: 1\n"                                                        \
    "slo: {ttft: 1s, tpot: 100ms}\n"                                           \
    "tenants:\n"                                                               \
    "  count: 2\n"                                                             \
    "  edge: {draft_time: 10ms, prefill_time: 20ms}\n"                         \
    "  network: {rtt: 0s, jitter: none, uplink: inf, downlink: inf}\n"         \
    "  workload: {arrival: closed, think: 2s, prompt_tokens: 7, "              \
    "output_tokens: 5}\n"                                                      \
    "cloud:\n"                                                                 \
    "  replicas: 1\n"                                                          \
    "  verify_time: 10ms\n"                                                    \
    "  batching: {policy: continuous, max_batch: 4, order: edf}\n"

#define MSGTEST_MAX 32

typedef struct job_rec {
    int tenant, kind, tokens, context;
    double deadline, t;
} job_rec_t;

/* The cloud side of one replication, as the testbed's verifier runs it:
 * r leads, so that the callbacks' ctx is the harness too. */
typedef struct harness {
    repl_t r;
    scenario_t s;
    repl_shared_t sh;
    tally_t *tl;
    err_t err;
    job_rec_t sub[MSGTEST_MAX];   /* jobs as iterations take them */
    int nsub;
    job_rec_t done[MSGTEST_MAX];  /* jobs as they finish */
    int ndone;
    int down[5];                  /* messages down, by kind */
    int verdict_y;                /* tokens the last verdict committed */
} harness_t;

/* cloud_cb_t.iter_time: records each job of the iteration that starts. */
static double rec_iter(void *ctx, int replica, const service_job_t *jobs, int njobs)
{
    harness_t *h = ctx;
    (void)replica;
    for (int k = 0; k < njobs && h->nsub < MSGTEST_MAX; k++)
        h->sub[h->nsub++] = (job_rec_t){.tokens = jobs[k].tokens,
                                        .context = jobs[k].context};
    return 0.01;
}

/* cloud_cb_t.job_done: records the job (with the deadline ctenant set),
 * then hands it to the tenant's protocol as the simulator does. */
static int rec_done(void *ctx, const cloud_job_t *j, double now)
{
    harness_t *h = ctx;
    if (h->ndone < MSGTEST_MAX)
        h->done[h->ndone++] = (job_rec_t){j->tenant, j->kind, j->tokens, j->context,
                                          j->deadline, now};
    return route_job_done(&h->r, j, now);
}

static int rec_down(void *ctx, const engine_event_t *ev)
{
    harness_t *h = ctx;
    int k = msg_kind(ev->b);
    if (k >= 0 && k < 5) h->down[k]++;
    if (k == MSG_VERDICT) h->verdict_y = msg_y(ev->b);
    return 0;
}

/* Loads yaml (with mode as protocol.mode) and builds the cloud side only:
 * route_setup(ROUTE_CLOUD), every tenant's ctenant, the cloud. 0 or -1. */
static int cloud_side(harness_t *h, const char *yaml, const char *mode)
{
    memset(h, 0, sizeof *h);
    scenario_override_t ov[] = {{.path = "protocol.mode", .value = mode},
                                {.path = "acceptance.alpha", .value = "1"}};
    if (scenario_load_string("messages", yaml, ov, 2, &h->s, &h->err) ||
        sim_shared_init(&h->s, &h->sh, &h->err)) {
        printf("  %s\n", h->err.msg);
        check_failed_now = 1;
        return -1;
    }
    h->tl = sim_tally_create(&h->s);
    CHECK(h->tl != NULL);
    repl_t *r = &h->r;
    if (!h->tl || route_setup(r, &h->sh, 0, ROUTE_CLOUD, h->tl, NULL, &h->err)) {
        check_failed_now = 1;
        return -1;
    }
    for (int i = 0; i < r->n; i++)
        if (ctenant_init(r, i, &h->err)) {
            printf("  %s\n", h->err.msg);
            check_failed_now = 1;
            return -1;
        }
    cloud_cb_t cb = {h, rec_done, ctenant_admitted, rec_iter};
    r->cloud = cloud_create_groups(&h->s.cloud, r->n, h->sh.cgroups, h->sh.ncgroups, r->eng,
                                   EV_ITER_END, EV_KICK, &cb, h->tl, NULL, h->s.seed, 0,
                                   &h->err);
    if (!r->cloud || engine_on(r->eng, EV_UP, route_up, r) ||
        engine_on(r->eng, EV_DOWN, rec_down, h)) {
        printf("  %s\n", h->err.msg);
        check_failed_now = 1;
        return -1;
    }
    return 0;
}

static void harness_free(harness_t *h)
{
    route_teardown(&h->r);
    tally_free(h->tl);
    sim_shared_fini(&h->sh);
    scenario_fini(&h->s);
}

/* The edge's prompt: tenant i's body posted in its slot, the message
 * delivered at `at`. */
static void send_prompt(harness_t *h, int i, int prompt, int output, double t0, double at)
{
    CHECK(msg_prompt_post(&h->r.prompt_box[i], prompt, output, t0) == 0);
    CHECK(engine_schedule(h->r.eng, at, EV_UP, (uint32_t)i,
                          msg_pack(MSG_PROMPT, 0, 0, 0, 0)) == 0);
}

static int run_to(harness_t *h, double until)
{
    int rc = engine_run(h->r.eng, until);
    if (rc) printf("  %s\n", h->err.msg);
    return rc;
}

/* cloud-only with no edge table: tenant 1's request of 7 prompt and 5
 * output tokens started at 0.25 s (the message says so) and its prompt
 * arrives at 0.5 s. The prefill (7 tokens, context 0) runs 0.5-0.51 s,
 * due at t0 + ttft = 1.25 s (not 1.5 s: the deadline counts from the
 * request's start, not the prompt's arrival). Then 4 decode steps of one
 * token, the k-th (k = 1..4) submitted with k tokens committed, so due at
 * t_first + k * tpot = 0.51 + 0.1 k, each on the context 7 + k - 1. Down:
 * the first token and 4 more. */
static void test_cloud_from_message_alone(void)
{
    harness_t h;
    if (cloud_side(&h, MSGTEST_CLOUD, "cloud-only") == 0) {
        CHECK(h.r.et == NULL);   /* the verifier's side has no edge table */
        send_prompt(&h, 1, 7, 5, 0.25, 0.5);
        CHECK(run_to(&h, 10) == 0);
        CHECK(h.r.prompt_box[1].full == 0);   /* delivered and copied out */
        CHECK(h.r.ct[1].prompt == 7 && h.r.ct[1].output == 5);
        CHECK(h.r.ct[1].t0 == 0.25);
        CHECK(h.ndone == 5 && h.nsub == 5);
        if (h.ndone == 5 && h.nsub == 5) {
            CHECK(h.done[0].tenant == 1 && h.done[0].kind == CLOUD_PREFILL);
            CHECK(h.sub[0].tokens == 7 && h.sub[0].context == 0);
            CHECK_ABS(h.done[0].deadline, 1.25, 1e-12);
            CHECK_ABS(h.done[0].t, 0.51, 1e-12);
            for (int k = 1; k <= 4; k++) {
                CHECK(h.done[k].tenant == 1 && h.done[k].kind == CLOUD_DECODE);
                CHECK(h.sub[k].tokens == 1 && h.sub[k].context == 7 + k - 1);
                CHECK_ABS(h.done[k].deadline, 0.51 + 0.1 * k, 1e-12);
            }
        }
        CHECK(h.down[MSG_FIRST] == 1 && h.down[MSG_TOKEN] == 4);
        CHECK(h.r.ct[1].replica == -1);   /* the request completed */
    }
    harness_free(&h);
}

/* The same with an edge table full of garbage where the old cloud read
 * the lengths and start: the cloud must not look. sync, alpha 1: the
 * prompt (9 + 5 tokens, t0 = 1 s, arrives at 1.5 s) prefills 9 tokens due
 * at 2 s; a block of 3 drafts arriving at 3 s is verified on the context
 * 9 + 1 - 1 = 9 (prompt and committed tokens but the last), 4 tokens, due
 * at t_first + 1 * tpot = 1.51 + 0.1; all accepted, it commits 3 + 1 = 4
 * tokens, the rest of the 5. */
static void test_cloud_ignores_poisoned_edge(void)
{
    harness_t h;
    if (cloud_side(&h, MSGTEST_CLOUD, "sync") == 0) {
        size_t bytes = (size_t)h.r.n * sizeof(edge_tenant_t);
        edge_tenant_t *junk = malloc(bytes);
        CHECK(junk != NULL);
        if (junk) {
            memset(junk, 0x7f, bytes);   /* ints ~2.1e9, doubles ~3e304 */
            h.r.et = junk;
            send_prompt(&h, 0, 9, 5, 1.0, 1.5);
            CHECK(engine_schedule(h.r.eng, 3.0, EV_UP, 0,
                                  msg_pack(MSG_BLOCK, 0, 0, 3, 0)) == 0);
            CHECK(run_to(&h, 10) == 0);
            h.r.et = NULL;   /* not the teardown's to free */
            free(junk);
        }
        CHECK(h.ndone == 2 && h.nsub == 2);
        if (h.ndone == 2 && h.nsub == 2) {
            CHECK(h.done[0].kind == CLOUD_PREFILL && h.sub[0].tokens == 9);
            CHECK_ABS(h.done[0].deadline, 2.0, 1e-12);
            CHECK(h.done[1].kind == CLOUD_VERIFY);
            CHECK(h.sub[1].tokens == 4 && h.sub[1].context == 9);
            CHECK_ABS(h.done[1].deadline, 1.51 + 0.1, 1e-12);
        }
        CHECK(h.down[MSG_FIRST] == 1 && h.down[MSG_VERDICT] == 1);
        CHECK(h.verdict_y == 4);
        CHECK(h.r.ct[0].replica == -1);
    }
    harness_free(&h);
}

/* A prompt message whose body was never posted is a failure with a
 * message, not a read of whatever the slot held. */
static void test_prompt_without_body(void)
{
    harness_t h;
    if (cloud_side(&h, MSGTEST_CLOUD, "cloud-only") == 0) {
        CHECK(engine_schedule(h.r.eng, 0.5, EV_UP, 0, msg_pack(MSG_PROMPT, 0, 0, 0, 0)) == 0);
        CHECK(engine_run(h.r.eng, 10) != 0);
        CHECK(strstr(h.err.msg, "without its body") != NULL);
        CHECK(h.ndone == 0);
    }
    harness_free(&h);
}

/* A slot holds one prompt at a time, and take empties it. */
static void test_slot(void)
{
    msg_prompt_t slot = {0}, body = {0};
    CHECK(msg_prompt_take(&slot, &body) == -1);
    CHECK(msg_prompt_post(&slot, 3, 4, 1.5) == 0);
    CHECK(msg_prompt_post(&slot, 5, 6, 2.5) == -1);   /* one in flight */
    CHECK(msg_prompt_take(&slot, &body) == 0);
    CHECK(body.prompt == 3 && body.output == 4 && body.t0 == 1.5 && !body.full);
    CHECK(!slot.full);
    CHECK(msg_prompt_post(&slot, 5, 6, 2.5) == 0);
}

/* The edge side alone (no cloud table): a closed loop with a 2 s think
 * time starts tenant 1's first request at 2 s, and the prompt it sends
 * carries 7 and 5 tokens and t0 = 2 s. */
typedef struct edge_harness {
    repl_t *r;
    msg_prompt_t got[2];
    int n[2];
} edge_harness_t;

static int take_up(void *ctx, const engine_event_t *ev)
{
    edge_harness_t *e = ctx;
    CHECK(msg_kind(ev->b) == MSG_PROMPT && ev->a < 2);
    if (ev->a >= 2) return 0;
    CHECK(msg_prompt_take(&e->r->prompt_box[ev->a], &e->got[ev->a]) == 0);
    e->n[ev->a]++;
    return 0;
}

static void test_edge_sends_lengths(void)
{
    scenario_t s;
    repl_shared_t sh;
    err_t err;
    repl_t r;
    memset(&r, 0, sizeof r);
    /* No start offset (drift.start): the first request is at t0 = 2 s. */
    scenario_override_t ov[] = {{.path = "protocol.mode", .value = "sync"},
                                {.path = "drift.start", .value = "0s"}};
    if (scenario_load_string("messages", MSGTEST_CLOUD, ov, 2, &s, &err)) {
        printf("  %s\n", err.msg);
        check_failed_now = 1;
        return;
    }
    if (sim_shared_init(&s, &sh, &err)) {
        printf("  %s\n", err.msg);
        check_failed_now = 1;
        scenario_fini(&s);
        return;
    }
    tally_t *tl = sim_tally_create(&s);
    size_t *off = NULL;
    edge_harness_t e = {.r = &r};
    int rc = tl && route_setup(&r, &sh, 0, ROUTE_EDGE, tl, NULL, &err) == 0 &&
                     route_alloc_cum(&r, &off) == 0 ? 0 : -1;
    CHECK(rc == 0);
    CHECK(r.ct == NULL);   /* the fleet's side has no cloud table */
    for (int i = 0; rc == 0 && i < r.n; i++) rc = edge_tenant_init(&r, i, r.cum + off[i], &err);
    if (rc == 0)
        rc = engine_on(r.eng, EV_ARRIVE, route_arrive, &r) ||
             engine_on(r.eng, EV_EDGE_PREFILL, route_edge_prefill, &r) ||
             engine_on(r.eng, EV_UP, take_up, &e) || edge_start(&r) ||
             engine_run(r.eng, 3.0);
    CHECK(rc == 0);
    for (int i = 0; i < 2; i++) {
        CHECK(e.n[i] == 1);
        CHECK(e.got[i].prompt == 7 && e.got[i].output == 5);
        CHECK_ABS(e.got[i].t0, 2.0, 1e-12);
    }
    free(off);
    route_teardown(&r);
    tally_free(tl);
    sim_shared_fini(&sh);
    scenario_fini(&s);
}

int main(void)
{
    RUN(test_cloud_from_message_alone);
    RUN(test_cloud_ignores_poisoned_edge);
    RUN(test_prompt_without_body);
    RUN(test_slot);
    RUN(test_edge_sends_lengths);
    return check_done();
}
