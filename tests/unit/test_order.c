/* order: the ordering registry, each ordering's walk on hand-built queues
 * (the picked batch equals an order worked out by hand in the comments),
 * the tenant-order rule under a ranking, fair's counters (service and VTC's
 * lift) and the loader's keys (cloud.batching.order, a group's priority). */
#include "model/batch.h"
#include "batchtest.h"
#include "check.h"
#include "model/order.h"
#include "config/scenario.h"
#include "scentext.h"

#include <limits.h>
#include <math.h>
#include <stdint.h>

/* Appends a verify job of `tokens` tokens, deadline d (0 = none) and
 * priority p; links it as the cloud does (next, tnext). Returns its handle. */
static int add(hq_t *h, int tenant, int tokens, double d, int p)
{
    return hq_append(h, (cloud_job_t){.tenant = tenant, .kind = CLOUD_VERIFY,
                                      .tokens = tokens, .context = 100, .deadline = d,
                                      .priority = p});
}

/* least-slack's estimate in these tests: 1/8 s per token (exact in binary,
 * so the ties below are exact). */
static double cost8(const void *ctx, const cloud_job_t *j)
{
    (void)ctx;
    return j->tokens * 0.125;
}

/* Packs h with ordering o (max_batch mb, multi_block multi) and checks the
 * batch is exactly want[0..n). */
static void expect_pick(order_t *o, const hq_t *h, int mb, int multi, const int *want, int n)
{
    batch_scratch_t s;
    CHECK(batch_scratch_init(&s, NTEN) == 0);
    int job[MAXJ], tok[MAXJ];
    batch_pick_t p = {.n = -1, .job = job, .tokens = tok};
    batching_cfg_t cfg = {.max_batch = mb};
    batch_cap_t cap = {.max_batch = mb, .max_tokens = INT_MAX, .multi_block = multi};
    const batch_order_t *w = order_walk(o, &h->q);
    CHECK(w != NULL);
    if (w) batch_pack(&cfg, &h->q, 0.0, w, cap, &s, &p);
    CHECK(p.n == n);
    for (int k = 0; k < n && k < p.n; k++) {
        if (job[k] != want[k]) printf("  slot %d: job %d, expected %d\n", k, job[k], want[k]);
        CHECK(job[k] == want[k]);
    }
    batch_scratch_fini(&s);
}

static void with(const char *name, void (*body)(order_t *))
{
    order_t o;
    const order_ops_t *ops = order_find(name);
    CHECK(ops != NULL);
    CHECK(order_init(&o, ops, NTEN, cost8, NULL) == 0);
    body(&o);
    order_fini(&o);
}

/* Walked rather than counted, so that a new ordering does not break it:
 * every listed name is reachable, the count comes back even when the list
 * is cut short, and the orderings that ship are among them. */
static void test_registry(void)
{
    const char *names[64], *one[1];
    size_t n = order_names(names, 64);
    CHECK(n >= 1 && n <= 64 && order_names(one, 1) == n);
    for (size_t i = 0; i < n && i < 64; i++)
        CHECK(order_find(names[i]) && !strcmp(order_find(names[i])->name, names[i]));
    const char *ship[] = {"fcfs", "edf", "least-slack", "fair", "priority"};
    for (size_t k = 0; k < 5; k++) CHECK(order_find(ship[k]) != NULL);
    CHECK(order_default() == order_find("fcfs"));
    CHECK(order_find("EDF") == NULL && order_find("") == NULL);
}

/* fcfs is the plain linked-list walk, no ranking at all. */
static void fcfs_body(order_t *o)
{
    hq_t h = {0};
    for (int t = 0; t < 4; t++) add(&h, t, 5, 4.0 - t, t);
    CHECK(order_walk(o, &h.q) == &batch_fcfs);
    expect_pick(o, &h, 3, 0, (int[]){0, 1, 2}, 3);
}
static void test_fcfs(void) { with("fcfs", fcfs_body); }

/* Deadlines by job: 3, none, 1, 2, none, 0.5 (tenants 0..5, one job each).
 * EDF: j5 (0.5), j2 (1), j3 (2), j0 (3), then the jobs without a deadline
 * in arrival order: j1, j4. max_batch 4 takes the first four. */
static void edf_body(order_t *o)
{
    hq_t h = {0};
    double d[] = {3, 0, 1, 2, 0, 0.5};
    for (int t = 0; t < 6; t++) add(&h, t, 5, d[t], 0);
    expect_pick(o, &h, 8, 0, (int[]){5, 2, 3, 0, 1, 4}, 6);
    expect_pick(o, &h, 4, 0, (int[]){5, 2, 3, 0}, 4);
}
static void test_edf(void) { with("edf", edf_body); }

/* A tenant's jobs keep their order and move together, ranked by the
 * tenant's oldest queued job: A0 (d 5), B0 (d 2), C0 (d 4), A1 (d 1).
 * Tenant keys: A 5, B 2, C 4 -> B0, C0, A0, A1; with multi_block A1 (a
 * verify block of A0's epoch) joins right after A0; without, it waits. */
static void edf_tenant_body(order_t *o)
{
    hq_t h = {0};
    add(&h, 0, 5, 5, 0);
    add(&h, 1, 5, 2, 0);
    add(&h, 2, 5, 4, 0);
    add(&h, 0, 5, 1, 0);
    expect_pick(o, &h, 8, 1, (int[]){1, 2, 0, 3}, 4);
    expect_pick(o, &h, 8, 0, (int[]){1, 2, 0}, 3);
}
static void test_edf_tenant_order(void) { with("edf", edf_tenant_body); }

/* Slack = deadline - tokens / 8: j0 (d 1, 2 tok) 0.75; j1 (d 1.5, 8 tok)
 * 0.5; j2 (d 1.25, 4 tok) 0.75, a tie with j0 that arrival breaks; j3 no
 * deadline: last; j4 (d 2, 1 tok) 1.875. Order j1, j0, j2, j4, j3 (EDF
 * would give j0, j2, j1, j4, j3). */
static void slack_body(order_t *o)
{
    hq_t h = {0};
    add(&h, 0, 2, 1.0, 0);
    add(&h, 1, 8, 1.5, 0);
    add(&h, 2, 4, 1.25, 0);
    add(&h, 3, 9, 0, 0);
    add(&h, 4, 1, 2.0, 0);
    expect_pick(o, &h, 8, 0, (int[]){1, 0, 2, 4, 3}, 5);
}
static void test_least_slack(void) { with("least-slack", slack_body); }

/* Priorities 0, 2, 1, 2, -1: the two 2s in arrival order (j1, j3), then
 * j2, j0, j4. */
static void prio_body(order_t *o)
{
    hq_t h = {0};
    int p[] = {0, 2, 1, 2, -1};
    for (int t = 0; t < 5; t++) add(&h, t, 5, 0, p[t]);
    expect_pick(o, &h, 8, 0, (int[]){1, 3, 2, 0, 4}, 5);
    expect_pick(o, &h, 2, 0, (int[]){1, 3}, 2);
}
static void test_priority(void) { with("priority", prio_body); }

/* Counters t0 30, t1 10, t2 20, t3 10; queue j0 (t0), j1 (t2), j2 (t3),
 * j3 (t1): least counter first, ties by arrival -> j2, j3, j1, j0. Serving
 * t3 15 tokens makes it 25: then j3 (t1 10), j1 (t2 20), j2 (t3 25),
 * j0 (t0 30). */
static void fair_body(order_t *o)
{
    hq_t h = {0};
    int ten[] = {0, 2, 3, 1};
    for (int k = 0; k < 4; k++) {
        add(&h, ten[k], 5, 0, 0);
        order_job_in(o, ten[k]);
    }
    o->tval[0] = 30;
    o->tval[1] = 10;
    o->tval[2] = 20;
    o->tval[3] = 10;
    expect_pick(o, &h, 8, 0, (int[]){2, 3, 1, 0}, 4);
    order_served(o, 3, 15);
    CHECK(o->tval[3] == 25);
    expect_pick(o, &h, 8, 0, (int[]){3, 1, 2, 0}, 4);
}
static void test_fair(void) { with("fair", fair_body); }

/* VTC's lift: active tenants (jobs at the cloud) t0 30, t1 10, t2 20,
 * t3 25. t4 (counter 0) gets a job: lifted to the least active counter,
 * 10. t5 (counter 50) keeps its own. t1 leaves (its last job out); t4,
 * lifted to 10, is still active, so t6 (counter 0) is lifted to 10. Then
 * t4 and t6 leave: t7 is lifted to the least left, t2's 20. A tenant that
 * already has a job does not wake again: t0, set to 5, stays 5. */
static void lift_body(order_t *o)
{
    for (int t = 0; t < 4; t++) order_job_in(o, t);
    o->tval[0] = 30;
    o->tval[1] = 10;
    o->tval[2] = 20;
    o->tval[3] = 25;
    order_job_in(o, 4);
    CHECK(o->tval[4] == 10);
    o->tval[5] = 50;
    order_job_in(o, 5);
    CHECK(o->tval[5] == 50);
    order_job_out(o, 1);
    order_job_in(o, 6);
    CHECK(o->tval[6] == 10);
    order_job_out(o, 4);
    order_job_out(o, 6);
    order_job_in(o, 7);
    CHECK(o->tval[7] == 20);
    o->tval[0] = 5;   /* below everyone, but already active: no lift */
    order_job_in(o, 0);
    CHECK(o->tval[0] == 5);
}
static void test_fair_lift(void) { with("fair", lift_body); }

/* The other orderings keep no counters. */
static void nolift_body(order_t *o)
{
    order_job_in(o, 0);
    o->tval[0] = 7;
    order_job_in(o, 1);
    order_served(o, 1, 9);
    CHECK(o->tval[1] == 0);
}
static void test_no_state(void) { with("edf", nolift_body); }

/* An empty queue walks to nothing. */
static void empty_body(order_t *o)
{
    hq_t h = {0};
    h.q = (batch_queue_t){.jobs = h.jobs, .head = -1, .nqueue = 0};
    expect_pick(o, &h, 8, 0, NULL, 0);
}
static void test_empty(void) { with("least-slack", empty_body); }

/* The loader: every registered name, written back; the default; a bad name
 * lists the registry; a group's priority (written back only when not 0). */
static void test_loader(void)
{
    const char *names[64];
    int n = (int)order_names(names, 64);
    CHECK(n >= 1 && n <= 64);   /* else the list below is cut short */
    if (n > 64) n = 64;
    for (int i = 0; i < n; i++) {
        char yaml[128], line[64];
        snprintf(yaml, sizeof yaml, "cloud: {batching: {order: %s}}\n", names[i]);
        scenario_t s;
        err_t err = {0};
        CHECK(scenario_load_string("o.yaml", yaml, NULL, 0, &s, &err) == 0);
        CHECK(s.cloud.batching.order == order_find(names[i]));
        char *buf = scentext_yaml(&s);
        snprintf(line, sizeof line, "\n    order: %s\n", names[i]);
        CHECK(buf && strstr(buf, line) != NULL);
        free(buf);
        scenario_fini(&s);
    }
    scenario_t d;
    err_t err = {0};
    CHECK(scenario_load_string("o.yaml", "", NULL, 0, &d, &err) == 0);
    CHECK(d.cloud.batching.order == order_default());
    scenario_fini(&d);
    CHECK(scenario_load_string("o.yaml", "cloud: {batching: {order: edd}}\n", NULL, 0,
                               &d, &err) == -1);
    CHECK(err.code == ERR_INPUT);
    /* The list in the message is the registry's, in its order. */
    char want[2048] = "o.yaml:1:27: cloud.batching.order: unknown value 'edd' (did you "
                      "mean 'edf'? allowed: ";
    for (int i = 0; i < n; i++) {
        if (i) strcat(want, ", ");
        strcat(want, names[i]);
    }
    strcat(want, ")");
    CHECK_STR(err.msg, want);
    const char *g = "tenants:\n  groups:\n    - {name: gold, count: 1, priority: 3}\n"
                    "    - {name: free, count: 2}\n";
    CHECK(scenario_load_string("o.yaml", g, NULL, 0, &d, &err) == 0);
    CHECK(d.groups[0].priority == 3 && d.groups[1].priority == 0);
    char *buf = scentext_yaml(&d);
    CHECK(buf && strstr(buf, "count: 1\n      priority: 3\n") != NULL);
    CHECK(buf && strstr(buf, "count: 2\n      priority") == NULL);
    scenario_t r;
    CHECK(buf && scenario_load_string("back.yaml", buf, NULL, 0, &r, &err) == 0);
    if (buf) {
        CHECK(r.groups[0].priority == 3);
        scenario_fini(&r);
    }
    free(buf);
    scenario_fini(&d);
    CHECK(scenario_load_string("o.yaml", "cloud: {pinning: power-of-two}\n", NULL, 0, &d,
                               &err) == 0);
    CHECK(d.cloud.pinning == PIN_POWER_OF_TWO);
    scenario_fini(&d);
}

int main(void)
{
    RUN(test_registry);
    RUN(test_fcfs);
    RUN(test_edf);
    RUN(test_edf_tenant_order);
    RUN(test_least_slack);
    RUN(test_priority);
    RUN(test_fair);
    RUN(test_fair_lift);
    RUN(test_no_state);
    RUN(test_empty);
    RUN(test_loader);
    return check_done();
}
