/* What sim_run refuses in a scenario built in code, and the gamma policy's
 * limit as the one bound on a block.
 *
 * A policy's limit sizes the draft buffer, the KV reserved per tenant and
 * the largest verify job, and a block's gamma + 1 travels in an 11-bit
 * message field: so a limit outside [1, GAMMA_MAX] is refused when
 * the policy starts, a policy returning a gamma beyond its own limit fails
 * the run (instead of being clamped), and an iteration token limit below
 * limit + 1 is refused before the run (it would idle forever). A NULL
 * registry pointer means that registry's default, and a replica with no KV
 * room left is refused instead of admitting nothing.
 */
#include <string.h>

#include "check.h"
#include "run/sim.h"
#include "test_sim_scen.h"

/* limit = 2 gamma; next returns the limit, so every block is that large. */
static int double_limit(int gamma) { return 2 * gamma; }

static int at_limit(gamma_state_t *st, int tenant, double now)
{
    (void)tenant;
    (void)now;
    return st->limit;
}

static const gamma_ops_t doubling = {
    .name = "doubling", .limit = double_limit, .next = at_limit};

/* A policy that breaks its own promise: limit gamma, blocks of gamma + 1. */
static int same_limit(int gamma) { return gamma; }

static int over_limit(gamma_state_t *st, int tenant, double now)
{
    (void)tenant;
    (void)now;
    return st->limit + 1;
}

static const gamma_ops_t overrunning = {
    .name = "overrunning", .limit = same_limit, .next = over_limit};

static int zero_limit(int gamma)
{
    (void)gamma;
    return 0;
}

static const gamma_ops_t no_room = {.name = "no-room", .limit = zero_limit, .next = at_limit};

static int run(const scenario_t *s, err_t *err)
{
    metrics_summary_t m;
    memset(err, 0, sizeof *err);
    return sim_run(s, NULL, &m, err);
}

/* A short sync run: one tenant, alpha 0.7, 10 ms drafts and verifies. */
static scenario_t *small(const gamma_ops_t *pol, int gamma)
{
    scenario_t *s = scen_new(1, 1, proto_find("sync"), gamma, 0.7, 0.010, 0.010, 0.040);
    s->protocol.gamma_policy = pol;
    s->duration = 5;
    s->warmup = 0;
    return s;
}

static void test_limit_range_at_init(void)
{
    gamma_state_t st;
    CHECK(gamma_state_init(&st, &doubling, 4, 0) == 0 && st.limit == 8);
    CHECK(gamma_state_init(&st, &doubling, GAMMA_MAX / 2, 0) == 0);
    /* 2 * 513 = 1026 > GAMMA_MAX: would not fit a message field. */
    CHECK(gamma_state_init(&st, &doubling, GAMMA_MAX / 2 + 1, 0) == -1);
    CHECK(gamma_state_init(&st, &no_room, 4, 0) == -1);
    /* ... and a run with such a policy fails instead of wrapping gamma. */
    scenario_t *s = small(&doubling, GAMMA_MAX / 2 + 1);
    err_t err;
    CHECK(run(s, &err) == -1 && err.code == ERR_INPUT);
    CHECK(strstr(err.msg, "protocol.gamma_policy") != NULL);
    scen_del(s);
}

static void test_gamma_beyond_limit_fails_run(void)
{
    scenario_t *s = small(&overrunning, 4);
    err_t err;
    CHECK(run(s, &err) == -1);
    CHECK(err.code == ERR_RUNTIME && strstr(err.msg, "gamma 5 outside [0, 4]") != NULL);
    printf("  %s\n", err.msg);
    scen_del(s);
}

static void test_token_limit_against_policy_limit(void)
{
    /* Blocks of 8 drafts need 9 tokens; 5 fit gamma + 1 but never a block. */
    scenario_t *s = small(&doubling, 4);
    s->cloud.batching.max_tokens = 5;
    err_t err;
    CHECK(run(s, &err) == -1 && err.code == ERR_INPUT);
    CHECK(strstr(err.msg, "cloud.batching.max_tokens: 5 is below gamma + 1 = 9") != NULL);
    /* 9 is enough: the run verifies blocks of 8. */
    s->cloud.batching.max_tokens = 9;
    tally_totals_t t;
    metrics_summary_t m;
    CHECK(sim_run_detailed(s, NULL, &m, &t, &err) == 0);
    CHECK(t.verdicts > 0 && t.verified_tokens == 9 * t.verdicts);
    scen_del(s);
}

static void test_gamma_range(void)
{
    scenario_t *s = small(gamma_find("fixed"), GAMMA_MAX * 2);
    err_t err;
    CHECK(run(s, &err) == -1 && err.code == ERR_INPUT);
    CHECK(strstr(err.msg, "protocol.gamma") != NULL);
    s->protocol.gamma = 0;
    CHECK(run(s, &err) == -1 && err.code == ERR_INPUT);
    scen_del(s);
}

/* 1 when every metric but the wall-clock ones is the same to the bit. */
static int same_metrics(const metrics_summary_t *a, const metrics_summary_t *b)
{
    for (int k = 0; k < METRIC_COUNT; k++)
        if (k != METRIC_WALL_S && k != METRIC_EVENTS_PER_S &&
            memcmp(&a->value[k], &b->value[k], sizeof a->value[k]) != 0)
            return 0;
    return 1;
}

/* NULL protocol, gamma policy and batching policy run exactly as the
 * defaults named explicitly (async, fixed, continuous). */
static void test_null_means_default(void)
{
    scenario_t *a = scen_new(1, 3, proto_find("async"), 4, 0.7, 0.010, 0.005, 0.040);
    scenario_t *b = scen_new(1, 3, NULL, 4, 0.7, 0.010, 0.005, 0.040);
    a->duration = b->duration = 20;
    b->protocol.gamma_policy = NULL;
    b->cloud.batching.policy = NULL;
    metrics_summary_t ma, mb;
    err_t err = {0};
    CHECK(sim_run(a, NULL, &ma, &err) == 0);
    CHECK(sim_run(b, NULL, &mb, &err) == 0);
    CHECK(same_metrics(&ma, &mb));
    CHECK(ma.value[METRIC_EVENTS] > 0);
    scen_del(a);
    scen_del(b);
}

/* The loader refuses weights that leave no KV room; a scenario changed in
 * code afterwards is refused when it is built again (scenario_rebuild),
 * and, without a build, by the run, instead of admitting nothing. */
static void test_no_kv_room(void)
{
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load_string("t.yaml",
                               "duration: 2s\nwarmup: 0s\nreplications: 1\n"
                               "cloud: {gpu: models/hardware/h200.yaml}\n",
                               NULL, 0, &s, &err) == 0);
    s.cloud.gpu.mem_bytes = 1e9;   /* below a 7B model's fp16 weights */
    CHECK(scenario_rebuild(&s, &err) == -1 && err.code == ERR_INPUT && s.built == NULL);
    CHECK(strstr(err.msg, "cloud.target: ") == err.msg && strstr(err.msg, "do not fit"));
    printf("  %s\n", err.msg);
    err = (err_t){0};
    CHECK(run(&s, &err) == -1 && err.code == ERR_INPUT);
    CHECK(strstr(err.msg, "do not fit") != NULL);
    scenario_fini(&s);
}

/* A loaded scenario changed in code is run from its build: a change the
 * build cannot serve is refused, never run on a missing model; after
 * scenario_rebuild the run sees the change, and gives what a load of the
 * changed file gives. */
static void test_rebuild_after_change(void)
{
    const char *base = "duration: 3s\nwarmup: 0s\nreplications: 2\n"
                       "protocol: {mode: sync, gamma: 4}\n"
                       "tenants: {count: 4}\n";
    static const scenario_override_t fixed[] = {{.path = "cloud.verify_time", .value = "5ms"}};
    static const scenario_override_t cap[] = {{.path = "cloud.kv_capacity", .value = "400MiB"}};
    scenario_t s, want;
    err_t err = {0};
    CHECK(scenario_load_string("t.yaml", base, fixed, 1, &s, &err) == 0);
    CHECK(scenario_load_string("t.yaml", base, cap, 1, &want, &err) == 0);
    s.cloud.has_verify_time = 0;          /* now the model times it ... */
    s.cloud.kv_capacity_bytes = want.cloud.kv_capacity_bytes;   /* ... and holds 400 MiB */
    CHECK(run(&s, &err) == -1 && err.code == ERR_INPUT &&
          strstr(err.msg, "scenario_rebuild") != NULL);
    CHECK(scenario_rebuild(&s, &err) == 0);
    metrics_summary_t a, b;
    CHECK(sim_run(&s, NULL, &a, &err) == 0);
    CHECK(sim_run(&want, NULL, &b, &err) == 0);
    CHECK(same_metrics(&a, &b));
    CHECK(a.value[METRIC_EVENTS] > 0);
    scenario_fini(&s);
    scenario_fini(&want);
}

int main(void)
{
    RUN(test_limit_range_at_init);
    RUN(test_gamma_beyond_limit_fails_run);
    RUN(test_token_limit_against_policy_limit);
    RUN(test_gamma_range);
    RUN(test_null_means_default);
    RUN(test_no_kv_room);
    RUN(test_rebuild_after_change);
    return check_done();
}
