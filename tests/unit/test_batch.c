/* batch: the policy registry, each policy's `when`, and the shared pick on
 * hand-built queues (no engine, no cloud): max_batch, max_tokens with prefill
 * chunking, one job per tenant, a waiting job holding its tenant's later
 * ones, multi_block within an epoch, an order other than FCFS, and the
 * scratch marks wrapping. Expected batches are worked out in the comments. */
#include "model/batch.h"
#include "batchtest.h"
#include "check.h"
#include "config/scenario.h"
#include "scentext.h"

#include <limits.h>
#include <stdint.h>

/* Appends a job; returns its handle. */
static int add(hq_t *h, int tenant, int kind, int tokens, uint32_t epoch, double arrive)
{
    return hq_append(h, (cloud_job_t){.tenant = tenant, .kind = kind, .tokens = tokens,
                                      .context = 100 + h->n, .epoch = epoch,
                                      .arrive = arrive});
}

typedef struct picked {
    int job[MAXJ], tokens[MAXJ];
    batch_pick_t p;
} picked_t;

static batch_cap_t cap(int max_batch, int max_tokens, int multi)
{
    return (batch_cap_t){.max_batch = max_batch,
                         .max_tokens = max_tokens > 0 ? max_tokens : INT_MAX,
                         .multi_block = multi};
}

/* Runs policy `name`'s pick over h in FCFS order. */
static void pick(const char *name, const hq_t *h, batch_cap_t c, batch_scratch_t *s,
                 picked_t *out)
{
    const batch_policy_t *pol = batch_policy_find(name);
    batching_cfg_t cfg = {.policy = pol, .max_batch = c.max_batch, .max_wait = 0.5};
    out->p = (batch_pick_t){.n = -1, .job = out->job, .tokens = out->tokens};
    pol->pick(&cfg, &h->q, 0.0, &batch_fcfs, c, s, &out->p);
}

/* The pick is exactly jobs want[0..n) with tokens wtok[0..n). */
static void expect(const picked_t *got, const int *want, const int *wtok, int n)
{
    CHECK(got->p.n == n);
    for (int k = 0; k < n && k < got->p.n; k++) {
        if (got->job[k] != want[k] || got->tokens[k] != wtok[k])
            printf("  slot %d: job %d (%d tokens), expected job %d (%d tokens)\n", k,
                   got->job[k], got->tokens[k], want[k], wtok[k]);
        CHECK(got->job[k] == want[k] && got->tokens[k] == wtok[k]);
    }
}

static void test_registry(void)
{
    const char *names[64];
    size_t n = batch_policy_names(names, 64);
    CHECK(n >= 2 && n <= 64);   /* today's two, and room for more */
    CHECK_STR(names[0], "continuous");
    CHECK_STR(names[1], "window");
    const char *one[1];
    CHECK(batch_policy_names(one, 1) == n);   /* the count even when cut short */
    for (size_t i = 0; i < n && i < 64; i++) {
        const batch_policy_t *p = batch_policy_find(names[i]);
        CHECK(p != NULL && strcmp(p->name, names[i]) == 0);
        CHECK(p && p->pick != NULL);
    }
    CHECK(batch_policy_find("windows") == NULL);
    CHECK(batch_policy_find("") == NULL);
}

/* continuous starts at once; window waits for max_batch jobs or until the
 * oldest has waited max_wait. Oldest arrived at 1.0, max_wait 0.5, max_batch
 * 3: with 2 queued, look again at 1.5 (asked at 1.0 or 1.2), start when asked
 * at 1.5 or later; with 3 queued start at once. */
static void test_when(void)
{
    hq_t h = {0};
    add(&h, 0, CLOUD_VERIFY, 5, 0, 1.0);
    add(&h, 1, CLOUD_VERIFY, 5, 0, 1.1);
    const batch_policy_t *cont = batch_policy_find("continuous");
    const batch_policy_t *win = batch_policy_find("window");
    batching_cfg_t cfg = {.max_batch = 3, .max_wait = 0.5};
    CHECK(batch_when(cont, &cfg, &h.q, 1.2) == 1.2);
    CHECK(batch_when(win, &cfg, &h.q, 1.0) == 1.5);
    CHECK(batch_when(win, &cfg, &h.q, 1.2) == 1.5);
    CHECK(batch_when(win, &cfg, &h.q, 1.5) <= 1.5);
    CHECK(batch_when(win, &cfg, &h.q, 1.7) <= 1.7);
    add(&h, 2, CLOUD_VERIFY, 5, 0, 1.15);
    CHECK(batch_when(win, &cfg, &h.q, 1.2) <= 1.2);
    cfg.max_wait = 0;   /* no wait: every arrival starts an iteration */
    h.q.nqueue = 1;
    CHECK(batch_when(win, &cfg, &h.q, 1.0) <= 1.0);
}

/* max_batch 3 over five tenants' jobs: the first three, whole. Both
 * policies pick alike. */
static void test_max_batch(void)
{
    hq_t h = {0};
    for (int t = 0; t < 5; t++) add(&h, t, CLOUD_VERIFY, 5, 0, 0);
    batch_scratch_t s;
    CHECK(batch_scratch_init(&s, NTEN) == 0);
    const char *names[] = {"continuous", "window"};
    for (int p = 0; p < 2; p++) {
        picked_t got;
        pick(names[p], &h, cap(3, 0, 0), &s, &got);
        expect(&got, (int[]){0, 1, 2}, (int[]){5, 5, 5}, 3);
    }
    batch_scratch_fini(&s);
}

/* A pick on a hand-built queue, the expected batch worked out by hand. */
typedef struct pick_job {
    int tenant, kind, tokens;
    uint32_t epoch;
} pick_job_t;

typedef struct pick_case {
    const char *what;
    const char *policy;
    int max_batch, max_tokens, multi;   /* max_tokens 0: no limit */
    pick_job_t jobs[MAXJ];
    int njobs;
    int want[MAXJ], wtok[MAXJ];         /* the batch: job handles, tokens */
    int n;
} pick_case_t;

#define V CLOUD_VERIFY
#define P CLOUD_PREFILL
#define D CLOUD_DECODE

static const pick_case_t PICK_CASES[] = {
    /* One job per tenant: A0 A1 B0 A2 C0 (A = tenant 0) -> {A0, B0, C0}; A1
     * waits and A2 behind it too, although max_batch 8 leaves room. */
    {"one per tenant", "continuous", 8, 0, 0,
     {{0, V, 5, 0}, {0, V, 5, 0}, {1, V, 5, 0}, {0, V, 5, 0}, {2, V, 5, 0}}, 5,
     {0, 2, 4}, {5, 5, 5}, 3},
    /* max_tokens 10. (a) P(prefill 25), V(5): P is chunked to the 10 tokens
     * and nothing is left for V: {P:10}. */
    {"max_tokens a", "continuous", 8, 10, 0, {{0, P, 25, 0}, {1, V, 5, 0}}, 2,
     {0}, {10}, 1},
    /* (b) P(prefill 7), V(5, t1), D(decode 1, t2): P takes 7, V does not fit
     * the 3 left and waits (verify jobs never split), D fits: {P:7, D:1}. */
    {"max_tokens b", "continuous", 8, 10, 0, {{0, P, 7, 0}, {1, V, 5, 0}, {2, D, 1, 0}}, 3,
     {0, 2}, {7, 1}, 2},
    /* (c) V(6, t0), V(6, t1), P(prefill 9, t2): the second V waits, the
     * prefill takes the 4 left: {V:6, P:4}. */
    {"max_tokens c", "window", 8, 10, 0, {{0, V, 6, 0}, {1, V, 6, 0}, {2, P, 9, 0}}, 3,
     {0, 2}, {6, 4}, 2},
    /* A waiting job holds its tenant's later jobs: max_tokens 10, A(5, t0),
     * A(6, t0), A(4, t0), B(4, t1). A5 goes; A6 does not fit the 5 left and
     * waits, so A4 (which would fit) waits behind it; B4 fits: {A5, B4},
     * with multi_block on and off (one job per tenant). */
    {"tenant hold", "continuous", 8, 10, 0,
     {{0, V, 5, 0}, {0, V, 6, 0}, {0, V, 4, 0}, {1, V, 4, 0}}, 4, {0, 3}, {5, 4}, 2},
    {"tenant hold multi", "continuous", 8, 10, 1,
     {{0, V, 5, 0}, {0, V, 6, 0}, {0, V, 4, 0}, {1, V, 4, 0}}, 4, {0, 3}, {5, 4}, 2},
    /* multi_block: a tenant's consecutive verify blocks of one epoch share
     * the iteration, each one job towards max_batch. (a) A0 A1 B0 A2 (epoch
     * 0), max_batch 3: {A0, A1, B0}; A2 would join but the batch is full;
     * with room (max_batch 8) it joins. */
    {"multi_block a", "continuous", 3, 0, 1,
     {{0, V, 5, 0}, {0, V, 5, 0}, {1, V, 5, 0}, {0, V, 5, 0}}, 4,
     {0, 1, 2}, {5, 5, 5}, 3},
    {"multi_block a room", "continuous", 8, 0, 1,
     {{0, V, 5, 0}, {0, V, 5, 0}, {1, V, 5, 0}, {0, V, 5, 0}}, 4,
     {0, 1, 2, 3}, {5, 5, 5, 5}, 4},
    /* (b) C0 (epoch 0), C1 (epoch 1), C2 (epoch 1), D0: C1 is of a new epoch
     * and waits, C2 behind it: {C0, D0}. */
    {"multi_block b", "continuous", 8, 0, 1,
     {{2, V, 5, 0}, {2, V, 5, 1}, {2, V, 5, 1}, {3, V, 5, 0}}, 4, {0, 3}, {5, 5}, 2},
    /* (c) a prefill then a verify of the same tenant: a block joins only
     * after a verify block: {P}. */
    {"multi_block c", "continuous", 8, 0, 1, {{4, P, 20, 0}, {4, V, 5, 0}}, 2,
     {0}, {20}, 1},
};

#undef V
#undef P
#undef D

static void test_pick_cases(void)
{
    batch_scratch_t s;
    CHECK(batch_scratch_init(&s, NTEN) == 0);
    for (size_t i = 0; i < sizeof PICK_CASES / sizeof *PICK_CASES; i++) {
        const pick_case_t *k = &PICK_CASES[i];
        hq_t h = {0};
        for (int j = 0; j < k->njobs; j++)
            add(&h, k->jobs[j].tenant, k->jobs[j].kind, k->jobs[j].tokens,
                k->jobs[j].epoch, 0);
        picked_t got;
        pick(k->policy, &h, cap(k->max_batch, k->max_tokens, k->multi), &s, &got);
        int before = check_failed_now;
        check_failed_now = 0;
        expect(&got, k->want, k->wtok, k->n);
        if (check_failed_now) printf("  in case '%s'\n", k->what);
        check_failed_now |= before;
    }
    batch_scratch_fini(&s);
}

/* An order other than arrival: the pick follows it. Jobs A(t0) B(t1) C(t2)
 * visited C, A, B (say C has the nearest deadline) with max_batch 2: {C, A}. */
typedef struct seq {
    int order[MAXJ], n;
} seq_t;

static int seq_next(const batch_queue_t *q, int i, void *ctx)
{
    (void)q;
    const seq_t *s = ctx;
    if (i < 0) return s->n ? s->order[0] : -1;
    for (int k = 0; k + 1 < s->n; k++)
        if (s->order[k] == i) return s->order[k + 1];
    return -1;
}

static void test_order(void)
{
    hq_t h = {0};
    add(&h, 0, CLOUD_VERIFY, 5, 0, 0);
    add(&h, 1, CLOUD_VERIFY, 5, 0, 0);
    add(&h, 2, CLOUD_VERIFY, 5, 0, 0);
    seq_t sq = {.order = {2, 0, 1}, .n = 3};
    batch_order_t ord = {.next = seq_next, .ctx = &sq};
    batch_scratch_t s;
    CHECK(batch_scratch_init(&s, NTEN) == 0);
    int job[MAXJ], tok[MAXJ];
    batch_pick_t p = {.n = -1, .job = job, .tokens = tok};
    batching_cfg_t cfg = {.max_batch = 2};
    batch_pack(&cfg, &h.q, 0.0, &ord, cap(2, 0, 0), &s, &p);
    CHECK(p.n == 2 && job[0] == 2 && job[1] == 0);
    batch_scratch_fini(&s);
}

/* Marks are never cleared between picks; when the counter wraps, stale
 * marks equal to the new one must not make a tenant look already taken.
 * Tenant 1 carries mark 1 from long ago; the counter is at its last value,
 * so the next pick's mark is 1 again: its job must still be picked. */
static void test_scratch_wrap(void)
{
    hq_t h = {0};
    add(&h, 0, CLOUD_VERIFY, 5, 0, 0);
    add(&h, 1, CLOUD_VERIFY, 5, 0, 0);
    batch_scratch_t s;
    CHECK(batch_scratch_init(&s, NTEN) == 0);
    s.stamp[1] = 1;
    s.slot[1] = -1;
    s.cur = UINT32_MAX;
    picked_t got;
    pick("continuous", &h, cap(8, 0, 0), &s, &got);
    expect(&got, (int[]){0, 1}, (int[]){5, 5}, 2);
    CHECK(s.cur == 1);
    batch_scratch_fini(&s);
    batch_scratch_fini(&s);   /* idempotent */
}

/* One queued job (the pick's short path): it goes if it fits. max_tokens
 * 10: a prefill of 25 goes as a 10-token chunk, one of 7 whole; a verify
 * of 11 does not fit and waits; a decode of 1 goes. Unlimited tokens: the
 * verify of 11 goes. */
static void test_one_job(void)
{
    static const struct {
        int kind, tokens, max_tokens, n, take;
    } cases[] = {
        {CLOUD_PREFILL, 25, 10, 1, 10}, {CLOUD_PREFILL, 7, 10, 1, 7},
        {CLOUD_VERIFY, 11, 10, 0, 0},   {CLOUD_DECODE, 1, 10, 1, 1},
        {CLOUD_VERIFY, 11, 0, 1, 11},
    };
    batch_scratch_t s;
    CHECK(batch_scratch_init(&s, NTEN) == 0);
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        hq_t h = {0};
        add(&h, 3, cases[k].kind, cases[k].tokens, 0, 0);
        picked_t got;
        pick("continuous", &h, cap(8, cases[k].max_tokens, 1), &s, &got);
        expect(&got, (int[]){0}, (int[]){cases[k].take}, cases[k].n);
    }
    batch_scratch_fini(&s);
}

/* An empty queue picks nothing. */
static void test_empty(void)
{
    hq_t h = {0};
    h.q = (batch_queue_t){.jobs = h.jobs, .head = -1, .nqueue = 0};
    batch_scratch_t s;
    CHECK(batch_scratch_init(&s, NTEN) == 0);
    picked_t got;
    pick("continuous", &h, cap(8, 0, 0), &s, &got);
    CHECK(got.p.n == 0);
    batch_scratch_fini(&s);
}

/* The loader accepts exactly the registry's names, stores the descriptor,
 * writes the name back, and lists the registry in its message for others. */
static void test_loader(void)
{
    const char *names[64];
    int n = (int)batch_policy_names(names, 64);
    CHECK(n >= 1 && n <= 64);   /* else the list below is cut short */
    if (n > 64) n = 64;
    for (int i = 0; i < n; i++) {
        const batch_policy_t *p = batch_policy_find(names[i]);
        char yaml[128];
        snprintf(yaml, sizeof yaml, "cloud: {batching: {policy: %s}}\n", p->name);
        scenario_t s;
        err_t err = {0};
        CHECK(scenario_load_string("b.yaml", yaml, NULL, 0, &s, &err) == 0);
        CHECK(s.cloud.batching.policy == p);
        char *buf = scentext_yaml(&s);
        char line[64];
        snprintf(line, sizeof line, "\n    policy: %s\n", p->name);
        CHECK(buf && strstr(buf, line) != NULL);
        free(buf);
        scenario_fini(&s);
    }
    scenario_t d;
    err_t err = {0};
    CHECK(scenario_load_string("b.yaml", "", NULL, 0, &d, &err) == 0);
    CHECK(d.cloud.batching.policy == batch_policy_find("continuous"));   /* the default */
    CHECK(batch_policy_default() == d.cloud.batching.policy);
    /* A zeroed config (built by hand) stands for the default too. */
    d.cloud.batching.policy = NULL;
    char *buf = scentext_yaml(&d);
    CHECK(buf && strstr(buf, "\n    policy: continuous\n") != NULL);
    free(buf);
    scenario_fini(&d);
    char want[2048] = "b.yaml:1:28: cloud.batching.policy: unknown value 'windo' "
                      "(did you mean 'window'? allowed: ";
    for (int i = 0; i < n; i++) {
        if (i) strcat(want, ", ");
        strcat(want, names[i]);
    }
    strcat(want, ")");
    scenario_t s;
    CHECK(scenario_load_string("b.yaml", "cloud: {batching: {policy: windo}}\n", NULL, 0,
                               &s, &err) == -1);
    CHECK(err.code == ERR_INPUT);
    CHECK_STR(err.msg, want);
}

int main(void)
{
    RUN(test_registry);
    RUN(test_when);
    RUN(test_max_batch);
    RUN(test_pick_cases);
    RUN(test_order);
    RUN(test_scratch_wrap);
    RUN(test_one_job);
    RUN(test_empty);
    RUN(test_loader);
    return check_done();
}
