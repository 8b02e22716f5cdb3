/* Per-group speculation (tenants.groups.N.protocol / .acceptance): the
 * loader's inheritance, errors and round trip, and a mixed fleet whose
 * groups each follow their own closed form when the cloud is not shared
 * (one replica per tenant, fixed verify time). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "entity/proto.h"
#include "config/scenario.h"
#include "scentext.h"
#include "run/sim.h"

/* d = 10 ms drafts, rtt = 40 ms, v = 5 ms; one tenant per group, one
 * replica each, so no group ever waits for another's iteration. */
#define MIXED_YAML                                                             \
    "name: mixed\n"                                                            \
    "seed: 3\n"                                                                \
    "duration: 300s\n"                                                         \
    "warmup: 10s\n"                                                            \
    "protocol: {mode: sync, gamma: 4, window: 64}\n"                           \
    "acceptance: {model: iid, alpha: 1}\n"                                     \
    "tenants:\n"                                                               \
    "  edge: {draft_time: 10ms, prefill_time: 0s}\n"                           \
    "  network: {rtt: 40ms}\n"                                                 \
    "  workload: {prompt_tokens: 1, output_tokens: 100000000}\n"               \
    "  groups:\n"                                                              \
    "    - {name: phones, count: 1}\n"                                         \
    "    - name: laptops\n"                                                    \
    "      count: 1\n"                                                         \
    "      protocol: {mode: async, gamma: 3}\n"                                \
    "      acceptance: {alpha: 0}\n"                                           \
    "    - name: browsers\n"                                                   \
    "      count: 1\n"                                                         \
    "      protocol: {mode: cloud-only}\n"                                     \
    "cloud: {replicas: 3, verify_time: 5ms}\n"

static int load(const char *yaml, scenario_t *s, err_t *err)
{
    return scenario_load_string("test.yaml", yaml, NULL, 0, s, err);
}

/* MIXED_YAML into s: 0, or -1 with the current test failed. */
static int load_mixed(scenario_t *s)
{
    err_t err = {0};
    if (load(MIXED_YAML, s, &err) == 0) return 0;
    printf("  %s\n", err.msg);
    CHECK(!"load");
    return -1;
}

/* A group inherits the top-level sections key by key and overrides what it
 * gives; a group that gives no acceptance key has the scenario's. */
static void test_inherit(void)
{
    scenario_t s;
    if (load_mixed(&s) != 0) return;
    const protocol_cfg_t *p0 = scenario_group_protocol(&s, 0);
    const protocol_cfg_t *p1 = scenario_group_protocol(&s, 1);
    const protocol_cfg_t *p2 = scenario_group_protocol(&s, 2);
    CHECK(p0->proto == proto_find("sync") && p0->gamma == 4);
    CHECK(p1->proto == proto_find("async") && p1->gamma == 3 && p1->window == 64);
    CHECK(p2->proto == proto_find("cloud-only"));
    CHECK(scenario_group_acceptance(&s, 0) == &s.acceptance);
    CHECK(scenario_group_acceptance(&s, 1) != &s.acceptance);
    CHECK(accept_cfg_mean(scenario_group_acceptance(&s, 1), 3) == 0);
    CHECK(accept_cfg_mean(scenario_group_acceptance(&s, 0), 4) == 1);
    CHECK(scenario_mixed(&s));
    CHECK_STR(proto_mode_name(&s), "mixed");
    CHECK(proto_any_drafts(&s) && proto_any_verifies(&s) && proto_any_cloud(&s));
    scenario_fini(&s);
}

/* `check` output loads back to the same per-group settings, and still
 * lets a later top-level override reach the groups that inherit it. */
static void test_round_trip(void)
{
    scenario_t a, b;
    err_t err = {0};
    if (load_mixed(&a) != 0) return;
    char *buf = scentext_yaml(&a);
    scenario_override_t ov = {.path = "protocol.gamma", .value = "6"};
    int rc = buf ? scenario_load_string("rt.yaml", buf, &ov, 1, &b, &err) : -1;
    if (rc && buf) printf("  %s\n%s", err.msg, buf);
    CHECK(rc == 0);
    if (rc == 0) {
        CHECK(scenario_group_protocol(&b, 0)->gamma == 6);  /* inherited */
        CHECK(scenario_group_protocol(&b, 1)->gamma == 3);  /* its own */
        CHECK(scenario_group_protocol(&b, 1)->proto == proto_find("async"));
        CHECK(scenario_group_protocol(&b, 2)->proto == proto_find("cloud-only"));
        CHECK(accept_cfg_mean(scenario_group_acceptance(&b, 1), 3) == 0);
        CHECK(scenario_group_acceptance(&b, 0) == &b.acceptance);
        scenario_fini(&b);
    }
    free(buf);
    scenario_fini(&a);
}

/* A wrong per-group key is an error at its own line and column. */
static void test_errors(void)
{
    static const struct {
        const char *yaml, *msg, *has;
    } cases[] = {
        {"tenants:\n  groups:\n    - name: a\n      count: 1\n"
         "      protocol: {mode: sync, gama: 4}\n",
         "test.yaml:5:30: tenants.groups.0.protocol.gama: ", NULL},
        {"tenants:\n  groups:\n    - name: a\n      count: 1\n"
         "      acceptance:\n        alpa: 0.5\n",
         "test.yaml:6:9: tenants.groups.0.acceptance.alpa: ", NULL},
        {"tenants:\n  groups:\n    - name: a\n      count: 1\n"
         "      protocol: {mode: synk}\n",
         "test.yaml:5:24: tenants.groups.0.protocol.mode: ", NULL},
        /* max_tokens is checked against every group's gamma + 1 */
        {"protocol: {mode: cloud-only}\ncloud: {batching: {max_tokens: 4}}\n"
         "tenants:\n  groups:\n    - {name: a, count: 1}\n"
         "    - {name: b, count: 1, protocol: {mode: sync, gamma: 5}}\n",
         "test.yaml:2:32: cloud.batching.max_tokens: 4 is below gamma + 1 = 6 "
         "of group b", NULL},
        /* a per-block trace inherited by a group with another gamma */
        {"protocol: {mode: sync, gamma: 4}\n"
         "acceptance: {model: trace, file: scenarios/examples/accept-trace.txt}\n"
         "tenants:\n  groups:\n    - {name: a, count: 1}\n"
         "    - {name: b, count: 1, protocol: {gamma: 6}}\n",
         "test.yaml:2:34: acceptance.file: trace '", "gamma = 6: "},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        scenario_t s;
        err_t err = {0};
        int rc = load(cases[i].yaml, &s, &err);
        CHECK(rc != 0 && err.code == ERR_INPUT);
        if (rc == 0) {
            scenario_fini(&s);
            continue;
        }
        if (strncmp(err.msg, cases[i].msg, strlen(cases[i].msg)) != 0 ||
            (cases[i].has && (!strstr(err.msg, cases[i].has) ||
                              !strstr(err.msg, "(group b)")))) {
            printf("  case %zu: got '%s'\n  expected prefix '%s'\n", i, err.msg,
                   cases[i].msg);
            CHECK(!"message");
        }
    }
}

/* The mixed fleet, each group by its own closed form (d = 10 ms,
 * rtt + v = 45 ms):
 *   phones, sync, gamma 4, alpha 1: 5 tokens per 4d + rtt + v = 85 ms;
 *   laptops, async, gamma 3, alpha 0: every block rejected, one token per
 *     cycle 3d + rtt + v = 75 ms (the verdict is back before the next block
 *     is sent, 30 ms later than it left, so no block goes stale);
 *   browsers, cloud-only: one token per iteration, v = 5 ms.
 * Throughput adds up; acceptance_rate = accepted / verified drafts, only the
 * phones' blocks accept: 4 per 85 ms of 4 per 85 ms + 3 per 75 ms. */
static void test_mixed_closed_form(void)
{
    scenario_t s;
    err_t err = {0};
    if (load_mixed(&s) != 0) return;
    metrics_summary_t m;
    int rc = sim_run(&s, NULL, &m, &err);
    if (rc) printf("  %s\n", err.msg);
    CHECK(rc == 0);
    double phones = 5 / 0.085, laptops = 1 / 0.075, browsers = 1 / 0.005;
    CHECK_REL(m.value[METRIC_THROUGHPUT], phones + laptops + browsers, 2e-3);
    double acc = 4 / 0.085, ver = 4 / 0.085 + 3 / 0.075;
    CHECK_REL(m.value[METRIC_ACCEPTANCE_RATE], acc / ver, 2e-3);
    scenario_fini(&s);
}

int main(void)
{
    RUN(test_inherit);
    RUN(test_round_trip);
    RUN(test_errors);
    RUN(test_mixed_closed_form);
    return check_done();
}
