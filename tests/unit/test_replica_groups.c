/* Heterogeneous replicas (cloud.replica_groups): the loader's inheritance
 * and errors, the round trip through `check`, routing weighted by speed
 * against hand-derived splits and closed forms, each GPU's own power and
 * price in the energy and cost metrics, per-group ordering, and a cloud of
 * identical groups matching the flat cloud it spells out. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "entity/cloud.h"
#include "model/order.h"
#include "run/output.h"
#include "config/scenario.h"
#include "scentext.h"
#include "run/sim.h"

static int load(const char *yaml, const scenario_override_t *ov, int nov, scenario_t *s,
                err_t *err)
{
    int rc = scenario_load_string("test.yaml", yaml, ov, nov, s, err);
    if (rc) printf("  %s\n", err->msg);
    return rc;
}

#define INHERIT_YAML                                                           \
    "cloud:\n"                                                                 \
    "  gpu: models/hardware/l4.yaml\n"                                         \
    "  gpu_hour_usd: 2\n"                                                      \
    "  verify_time: 20ms\n"                                                    \
    "  batching: {max_batch: 16, order: edf}\n"                                \
    "  replica_groups:\n"                                                      \
    "    - {name: small, count: 2}\n"                                          \
    "    - name: big\n"                                                        \
    "      count: 3\n"                                                         \
    "      gpu: models/hardware/h200.yaml\n"                                   \
    "      tensor_parallel: 2\n"                                               \
    "      gpu_hour_usd: 4\n"                                                  \
    "      verify_time: 5ms\n"                                                 \
    "      batching: {order: priority}\n"

/* A group takes the cloud's keys it does not give, its own over them; the
 * cloud-wide ones (batching.max_batch) stay the cloud's. */
static void test_inherit(void)
{
    scenario_t s;
    err_t err = {0};
    if (load(INHERIT_YAML, NULL, 0, &s, &err) != 0) {
        CHECK(!"load");
        return;
    }
    CHECK(scenario_replica_groups(&s) == 2);
    CHECK(s.cloud.replicas == 5);
    cloud_cfg_t a, b;
    scenario_replica_group_view(&s, 0, &a);
    scenario_replica_group_view(&s, 1, &b);
    CHECK_STR(scenario_replica_group_name(&s, 0), "small");
    CHECK_STR(scenario_replica_group_name(&s, 1), "big");
    CHECK(a.replicas == 2 && b.replicas == 3);
    CHECK_STR(a.gpu.name, "l4");
    CHECK_STR(b.gpu.name, "h200");
    CHECK(a.tensor_parallel == 1 && b.tensor_parallel == 2);
    CHECK(a.gpu_hour_usd == 2 && b.gpu_hour_usd == 4);
    CHECK(a.has_verify_time && a.verify_time.a == 0.020);
    CHECK(b.has_verify_time && b.verify_time.a == 0.005);
    CHECK(a.batching.order == order_find("edf"));
    CHECK(b.batching.order == order_find("priority"));
    CHECK(a.batching.max_batch == 16 && b.batching.max_batch == 16);
    CHECK(a.rgroups == NULL && b.nrgroups == 0);
    scenario_fini(&s);

    /* Without groups: one group, the cloud itself. */
    if (load("cloud: {replicas: 3}\n", NULL, 0, &s, &err) != 0) return;
    CHECK(scenario_replica_groups(&s) == 1 && !s.cloud.rgroups);
    scenario_replica_group_view(&s, 0, &a);
    CHECK(a.replicas == 3);
    CHECK_STR(scenario_replica_group_name(&s, 0), "");
    scenario_fini(&s);
}

/* `check` output loads back to the same groups, and a later cloud-level
 * override still reaches the groups that inherit it (and only those). */
static void test_round_trip(void)
{
    scenario_t a, b;
    err_t err = {0};
    if (load(INHERIT_YAML, NULL, 0, &a, &err) != 0) {
        CHECK(!"load");
        return;
    }
    char *buf = scentext_yaml(&a);
    CHECK(buf && strstr(buf, "# resolved: gpu l4 x 1, verify_time, order edf; "
                             "reference iteration 20 ms"));
    scenario_override_t ov = {.path = "cloud.gpu_hour_usd", .value = "3"};
    if (buf && load(buf, &ov, 1, &b, &err) == 0) {
        cloud_cfg_t v0, v1;
        scenario_replica_group_view(&b, 0, &v0);
        scenario_replica_group_view(&b, 1, &v1);
        CHECK(b.cloud.replicas == 5 && scenario_replica_groups(&b) == 2);
        CHECK(v0.gpu_hour_usd == 3 && v1.gpu_hour_usd == 4);
        CHECK_STR(v1.gpu.name, "h200");
        CHECK(v1.tensor_parallel == 2 && v1.verify_time.a == 0.005);
        CHECK(v0.batching.order == order_find("edf"));
        CHECK(v1.batching.order == order_find("priority"));
        scenario_fini(&b);
    } else {
        printf("%s", buf ? buf : "");
        CHECK(!"reload");
    }
    free(buf);
    scenario_fini(&a);
}

/* Wrong input names the key as written, by its line and column. */
static void test_errors(void)
{
    static const struct {
        const char *yaml, *prefix;
    } cases[] = {
        {"cloud:\n  replicas: 2\n  replica_groups:\n    - {name: a, count: 1}\n",
         "test.yaml:3:3: cloud.replica_groups: give either cloud.replicas or"},
        {"cloud:\n  replica_groups:\n    - {name: a, count: 0}\n",
         "test.yaml:3:24: cloud.replica_groups.0.count: "},
        {"cloud:\n  replica_groups:\n    - {name: a}\n",
         "test.yaml:3:7: cloud.replica_groups.0.count: required key is missing"},
        {"cloud:\n  replica_groups:\n    - {name: a, count: 1, gpu: nope.yaml}\n",
         "test.yaml:3:32: cloud.replica_groups.0.gpu: card file 'nope.yaml' not found"},
        {"cloud:\n  replica_groups:\n    - {name: a, count: 1, pinning: round-robin}\n",
         "test.yaml:3:27: cloud.replica_groups.0.pinning: is cloud-wide"},
        {"cloud:\n  replica_groups:\n    - {name: a, count: 1, replicas: 2}\n",
         "test.yaml:3:27: cloud.replica_groups.0.replicas: a replica group gives its "
         "size as count"},
        {"cloud:\n  replica_groups:\n    - {name: a, count: 1, batching: {policy: window}}\n",
         "test.yaml:3:38: cloud.replica_groups.0.batching.policy: a replica group sets "
         "only batching.order"},
        {"cloud:\n  replica_groups:\n    - {name: a, count: 1, cont: 2}\n",
         "test.yaml:3:27: cloud.replica_groups.0.cont: unknown key"},
        {"cloud:\n  replica_groups: {name: a, count: 1}\n",
         "test.yaml:2:19: cloud.replica_groups: expected a list of groups"},
        {"cloud:\n  replica_groups:\n    - {name: a, count: 1}\n    - {count: 1, name: a}\n",
         "test.yaml:4:24: cloud.replica_groups.1.name: duplicate replica group name 'a'"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        scenario_t s;
        err_t err = {0};
        int rc = scenario_load_string("test.yaml", cases[i].yaml, NULL, 0, &s, &err);
        CHECK(rc != 0 && err.code == ERR_INPUT);
        if (rc == 0) {
            scenario_fini(&s);
            continue;
        }
        if (strncmp(err.msg, cases[i].prefix, strlen(cases[i].prefix)) != 0) {
            printf("  case %zu: got '%s'\n  expected prefix '%s'\n", i, err.msg,
                   cases[i].prefix);
            CHECK(!"message");
        }
    }
    /* Through --set, the override's own position. */
    scenario_t s;
    err_t err = {0};
    scenario_override_t ov = {.path = "cloud.replicas", .value = "4"};
    int rc = scenario_load_string("test.yaml",
                                  "cloud: {replica_groups: [{name: a, count: 1}]}\n",
                                  &ov, 1, &s, &err);
    CHECK(rc != 0 && strstr(err.msg, "cloud.replica_groups: give either"));
    if (rc == 0) scenario_fini(&s);
}

/* Two replicas, one per group: `fast` verifies in 10 ms on an H200,
 * `slow` in 30 ms on an L4; 8 sync tenants that never finish their request
 * (gamma 4, alpha 1, d = 10 ms, rtt = 40 ms), so each stays on the replica
 * it was pinned to. Every tenant of a replica arrives together and stays in
 * step: one iteration per cycle whatever the batch, so a tenant's rate is
 * its group's closed form 5 tokens / (4d + rtt + v):
 *   fast: 5 / 0.09 s, slow: 5 / 0.11 s.
 * Speed-weighted least-loaded ((pinned + 1) × ref_time, ties to the lower
 * index) pins, by hand: fast (10 < 30), fast (20 < 30), fast (30 = 30),
 * slow (40 > 30), fast (40 < 60), fast (50 < 60), fast (60 = 60),
 * slow (70 > 60): 6 on fast, 2 on slow — the 3 : 1 of their speeds.
 * Round-robin ignores speed: 4 and 4. */
#define SPLIT_YAML                                                             \
    "seed: 5\n"                                                                \
    "duration: 300s\n"                                                         \
    "warmup: 10s\n"                                                            \
    "protocol: {mode: sync, gamma: 4}\n"                                       \
    "acceptance: {model: iid, alpha: 1}\n"                                     \
    "tenants:\n"                                                               \
    "  count: 8\n"                                                             \
    "  edge: {draft_time: 10ms, prefill_time: 0s}\n"                           \
    "  network: {rtt: 40ms}\n"                                                 \
    "  workload: {prompt_tokens: 1, output_tokens: 100000000}\n"               \
    "cloud:\n"                                                                 \
    "  batching: {max_batch: 64}\n"                                            \
    "  replica_groups:\n"                                                      \
    "    - {name: fast, count: 1, verify_time: 10ms, gpu_hour_usd: 4,\n"       \
    "       gpu: models/hardware/h200.yaml}\n"                                 \
    "    - {name: slow, count: 1, verify_time: 30ms, gpu_hour_usd: 1,\n"       \
    "       gpu: models/hardware/l4.yaml}\n"                                  \
    "drift: {start: 0s, edge: 0, cloud: 0}\n"

/* Runs SPLIT_YAML with `pinning`; *nfast gets the tenants whose rate is the
 * fast group's (from the per-tenant rows: rates 55.6 vs 45.5 tok/s). */
static int run_split(const char *pinning, metrics_summary_t *m, int *nfast)
{
    scenario_t s;
    err_t err = {0};
    scenario_override_t ov = {.path = "cloud.pinning", .value = pinning};
    if (load(SPLIT_YAML, &ov, 1, &s, &err) != 0) return -1;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    sim_options_t opt = {.per_tenant = f};
    int rc = f && output_tenant_header(f) == 0 ? sim_run(&s, &opt, m, &err) : -1;
    if (rc) printf("  %s\n", err.msg);
    if (f) fclose(f);
    *nfast = 0;
    int rows = 0;
    for (char *line = buf ? strchr(buf, '\n') : NULL; line && line[1]; line = strchr(line + 1, '\n')) {
        double tok, rate;
        if (sscanf(line + 1, "%*d,%*d,%*[^,],%lf,%lf", &tok, &rate) != 2) continue;
        rows++;
        *nfast += rate > 50;
    }
    if (rows != 8) rc = -1;
    free(buf);
    scenario_fini(&s);
    return rc;
}

static void test_weighted_split(void)
{
    double fast = 5 / 0.09, slow = 5 / 0.11;
    static const struct {
        const char *pinning;
        int nfast;
    } cases[] = {{"least-loaded", 6}, {"power-of-two", 6}, {"round-robin", 4}};
    /* With two replicas, power-of-two's two distinct draws are both of
     * them: it is least-loaded. */
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        metrics_summary_t m;
        int nfast = -1;
        CHECK(run_split(cases[i].pinning, &m, &nfast) == 0);
        CHECK(nfast == cases[i].nfast);
        int n = cases[i].nfast;
        CHECK_REL(m.value[METRIC_THROUGHPUT], n * fast + (8 - n) * slow, 2e-3);
        /* Each replica runs one iteration per cycle, its tenants in step
         * (perfect clocks: SPLIT_YAML has no drift): busy 10 of 90 ms and
         * 30 of 110 ms; gpu_util is their mean. */
        double uf = 0.010 / 0.09, us = 0.030 / 0.11;
        CHECK_REL(m.value[METRIC_GPU_UTIL], (uf + us) / 2, 2e-3);
        /* Each GPU at its own card's power while busy (H200 700 W, L4 72 W;
         * neither card gives an idle power) and its own price. */
        double tput = n * fast + (8 - n) * slow;
        CHECK_REL(m.value[METRIC_GPU_J_PER_TOK], (uf * 700 + us * 72) / tput, 3e-3);
        CHECK_REL(m.value[METRIC_USD_PER_MTOK], (4.0 + 1.0) / 3600 * 1e6 / tput, 3e-3);
    }
}

/* A group without a price leaves the fleet's cost unknown, not cheaper. */
static void test_cost_unknown(void)
{
    scenario_t s;
    err_t err = {0};
    scenario_override_t ov[] = {{.path = "cloud.replica_groups.slow.gpu_hour_usd", .value = ""},
                                {.path = "duration", .value = "20s"}};
    if (load(SPLIT_YAML, ov, 2, &s, &err) != 0) return;
    metrics_summary_t m;
    CHECK(sim_run(&s, NULL, &m, &err) == 0);
    CHECK(isnan(m.value[METRIC_USD_PER_MTOK]));
    CHECK(m.value[METRIC_GPU_J_PER_TOK] > 0);
    scenario_fini(&s);
}

/* Idle power, each group's own: an inline card over the group's file
 * (`--set` into a card given as a path makes it {base: FILE, ...}). With
 * the 6 : 2 split of test_weighted_split, each replica draws its busy power
 * for uf (us) of the time and its idle power the rest. */
static void test_idle_power(void)
{
    scenario_t s;
    err_t err = {0};
    scenario_override_t ov[] = {
        {.path = "cloud.replica_groups.fast.gpu.idle_power_w", .value = "100"},
        {.path = "cloud.replica_groups.slow.gpu.idle_power_w", .value = "20"}};
    if (load(SPLIT_YAML, ov, 2, &s, &err) != 0) return;
    metrics_summary_t m;
    CHECK(sim_run(&s, NULL, &m, &err) == 0);
    double uf = 0.010 / 0.09, us = 0.030 / 0.11;
    double tput = 6 * 5 / 0.09 + 2 * 5 / 0.11;
    double watts = uf * 700 + (1 - uf) * 100 + us * 72 + (1 - us) * 20;
    CHECK_REL(m.value[METRIC_GPU_J_PER_TOK], watts / tput, 3e-3);
    scenario_fini(&s);
}

/* A scenario changed in code whose cloud.replicas no longer matches its
 * groups is refused before anything runs (the cloud would number the
 * groups' replicas, the metrics divide by cloud.replicas). */
static void test_count_mismatch(void)
{
    scenario_t s;
    err_t err = {0};
    if (load(SPLIT_YAML, NULL, 0, &s, &err) != 0) return;
    s.cloud.replicas = 3;
    metrics_summary_t m;
    CHECK(sim_run(&s, NULL, &m, &err) != 0 && err.code == ERR_INPUT);
    CHECK(strstr(err.msg, "cloud.replicas: 3, but the replica groups count 2") != NULL);
    scenario_fini(&s);
}

/* Two groups of the same card and ordering are the flat cloud of their
 * total: same pins (no speed differs, so the plain count decides), same
 * streams (replicas numbered group after group), same metrics, to the bit —
 * but for GPU energy, summed group by group (rounding differs in the last
 * bits). */
static void test_same_card_is_flat(void)
{
    static const char *base = "seed: 9\nduration: 20s\nwarmup: 2s\n"
                              "tenants: {count: 24}\n";
    char flat[512], grouped[512];
    snprintf(flat, sizeof flat, "%scloud: {replicas: 3, gpu: models/hardware/l4.yaml}\n",
             base);
    snprintf(grouped, sizeof grouped,
             "%scloud:\n  gpu: models/hardware/l4.yaml\n  replica_groups:\n"
             "    - {name: a, count: 2}\n    - {name: b, count: 1}\n", base);
    scenario_t a, b;
    err_t err = {0};
    if (load(flat, NULL, 0, &a, &err) != 0) return;
    if (load(grouped, NULL, 0, &b, &err) != 0) {
        scenario_fini(&a);
        return;
    }
    metrics_summary_t ma, mb;
    CHECK(sim_run(&a, NULL, &ma, &err) == 0);
    CHECK(sim_run(&b, NULL, &mb, &err) == 0);
    for (int k = 0; k < METRIC_COUNT; k++) {
        if (k == METRIC_WALL_S || k == METRIC_EVENTS_PER_S) continue;
        double x = ma.value[k], y = mb.value[k];
        double tol = k == METRIC_GPU_J_PER_TOK ? 1e-12 * fabs(x) : 0;
        if (!(fabs(x - y) <= tol || (isnan(x) && isnan(y)))) {
            printf("  metric %d: flat %.17g, grouped %.17g\n", k, x, y);
            CHECK(!"same");
        }
    }
    CHECK(ma.value[METRIC_THROUGHPUT] > 0 && ma.value[METRIC_GPU_J_PER_TOK] > 0);
    scenario_fini(&a);
    scenario_fini(&b);
}

/* --- per-group ordering, on the cloud itself ----------------------------- */

typedef struct rec {
    int tenant[16];
    double t[16];
    int n;
} rec_t;

static int on_done(void *ctx, const cloud_job_t *j, double now)
{
    rec_t *r = ctx;
    if (r->n < 16) {
        r->tenant[r->n] = j->tenant;
        r->t[r->n++] = now;
    }
    return 0;
}

static int on_admit(void *ctx, int tenant, int replica, double now)
{
    (void)ctx; (void)tenant; (void)replica; (void)now;
    return 0;
}

/* Replica 0 (group 0, `priority`) and replica 1 (group 1, `fcfs`), one job
 * per iteration of 1 s. At t = 0 each gets three jobs: priorities 0, 0, 5.
 * Group 0 serves the priority-5 job first, then the others by arrival:
 * tenants 2, 0, 1 at t = 1, 2, 3. Group 1 serves by arrival: 3, 4, 5. */
static void test_group_order(void)
{
    err_t err;
    cloud_cfg_t cfg = {0};
    cfg.batching.policy = batch_policy_find("continuous");
    cfg.batching.max_batch = 1;
    cfg.pinning = PIN_LEAST_LOADED;
    dist_t one = dist_const(1.0);
    cloud_group_t g[2] = {
        {.count = 1, .verify_time = &one, .kv_capacity = INFINITY,
         .order = order_find("priority"), .ref_time = 1},
        {.count = 1, .verify_time = &one, .kv_capacity = INFINITY,
         .order = order_find("fcfs"), .ref_time = 1}};
    engine_t *eng = engine_create(16, &err);
    tally_t *tl = tally_create(0, 1e9, 1, (const int[]){6}, 0);
    rec_t rec[1] = {{{0}, {0}, 0}};
    cloud_cb_t cb = {rec, on_done, on_admit, NULL};
    cloud_t *c = eng && tl ? cloud_create_groups(&cfg, 6, g, 2, eng, 0, 1, &cb, tl, NULL,
                                                 1, 0, &err)
                           : NULL;
    CHECK(c != NULL);
    if (c) {
        for (int t = 0; t < 6; t++) {
            cloud_job_t j = {.tenant = t, .kind = CLOUD_VERIFY, .tokens = 5,
                             .priority = t % 3 == 2 ? 5 : 0};
            CHECK(cloud_submit(c, t / 3, &j, 0) == 0);
        }
        CHECK(engine_run(eng, 10) == 0);
        CHECK(rec->n == 6);
        /* Both replicas finish one job per second; at each instant replica
         * 0's iteration ends first (scheduled first). */
        static const int want[6] = {2, 3, 0, 4, 1, 5};
        for (int k = 0; k < 6 && k < rec->n; k++) {
            CHECK(rec->tenant[k] == want[k]);
            CHECK(rec->t[k] == 1 + k / 2);
        }
    }
    cloud_free(c);
    tally_free(tl);
    engine_free(eng);
}

/* Weighted least-loaded on the cloud API directly, with a fractional ratio:
 * reference times 2 and 3 (speeds 3 : 2). Ten pins, by hand
 * ((pinned + 1) × ref, ties to the lower index): 2|3 a, 4|3 b, 4|6 a,
 * 6|6 a, 8|6 b, 8|9 a, 10|9 b, 10|12 a, 12|12 a, 14|12 b: 6 and 4. */
static void test_pin_ratio(void)
{
    err_t err;
    cloud_cfg_t cfg = {0};
    cfg.batching.policy = batch_policy_find("continuous");
    cfg.batching.max_batch = 4;
    cfg.pinning = PIN_LEAST_LOADED;
    dist_t one = dist_const(1.0);
    cloud_group_t g[2] = {{.count = 1, .verify_time = &one, .kv_capacity = INFINITY,
                           .ref_time = 2},
                          {.count = 1, .verify_time = &one, .kv_capacity = INFINITY,
                           .ref_time = 3}};
    engine_t *eng = engine_create(16, &err);
    tally_t *tl = tally_create(0, 1e9, 1, (const int[]){4}, 0);
    cloud_cb_t cb = {NULL, on_done, on_admit, NULL};
    cloud_t *c = cloud_create_groups(&cfg, 4, g, 2, eng, 0, 1, &cb, tl, NULL, 1, 0, &err);
    CHECK(c != NULL);
    if (c) {
        static const int want[10] = {0, 1, 0, 0, 1, 0, 1, 0, 0, 1};
        for (int k = 0; k < 10; k++) CHECK(cloud_pin(c) == want[k]);
        CHECK(cloud_pinned(c, 0) == 6 && cloud_pinned(c, 1) == 4);
    }
    cloud_free(c);
    tally_free(tl);
    engine_free(eng);
}

int main(void)
{
    RUN(test_inherit);
    RUN(test_round_trip);
    RUN(test_errors);
    RUN(test_weighted_split);
    RUN(test_cost_unknown);
    RUN(test_idle_power);
    RUN(test_count_mismatch);
    RUN(test_same_card_is_flat);
    RUN(test_group_order);
    RUN(test_pin_ratio);
    return check_done();
}
