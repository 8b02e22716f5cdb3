/* test_groups — per-group and per-tenant results, SLOs and goodput,
 * fairness and the load metrics, against expectations derived by hand.
 *
 * The simulated cases use sync speculation with fixed times and one tenant
 * per group on its own cloud replica (two replicas, least-loaded pinning),
 * so nothing queues and each group's numbers follow from its own times:
 * a block takes T = gamma·d + rtt + v and commits a + 1 tokens.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "stat/metrics.h"
#include "run/output.h"
#include "config/scenario.h"
#include "scentext.h"
#include "run/sim.h"
#include "simtest.h"
#include "stat/tally.h"

/* Two groups: a (d = 10 ms, rtt = 40 ms) and b (d = 20 ms, rtt = 100 ms);
 * v = 5 ms, gamma = 4, edge prefill 1 ms. %s: acceptance, then extra
 * top-level YAML, then extra YAML for group b. */
#define TWO_GROUPS_YAML                                                        \
    "name: two-groups\n"                                                       \
    "seed: 3\n"                                                                \
    "duration: %s\n"                                                           \
    "warmup: %s\n"                                                             \
    "replications: %d\n"                                                       \
    "protocol: {mode: sync, gamma: 4}\n"                                       \
    "acceptance: %s\n"                                                         \
    "%s"                                                                       \
    "tenants:\n"                                                               \
    "  network: {jitter: none, uplink: inf, downlink: inf}\n"                  \
    "  workload: {arrival: closed, think: 0s, prompt_tokens: 1, "              \
    "output_tokens: %s}\n"                                                     \
    "  groups:\n"                                                              \
    "    - name: a\n"                                                          \
    "      count: 1\n"                                                         \
    "      edge: {draft_time: 10ms, prefill_time: 1ms}\n"                      \
    "      network: {rtt: 40ms}\n"                                             \
    "    - name: b\n"                                                          \
    "      count: 1\n"                                                         \
    "      edge: {draft_time: 20ms, prefill_time: 1ms}\n"                      \
    "      network: {rtt: 100ms}\n"                                            \
    "%s"                                                                       \
    "cloud:\n"                                                                 \
    "  replicas: 2\n"                                                          \
    "  pinning: least-loaded\n"                                                \
    "  verify_time: 5ms\n"                                                     \
    "  batching: {policy: continuous, max_batch: 8}\n"

/* Perfect clocks (docs/formats.md, "drift"), for the counts by hand that
 * every step's exact time decides. */
#define NO_DRIFT "drift: {start: 0s, edge: 0, cloud: 0}\n"

static const double T_A = 4 * 0.010 + 0.040 + 0.005;   /* 85 ms */
static const double T_B = 4 * 0.020 + 0.100 + 0.005;   /* 185 ms */

static int load(const char *yaml, scenario_t *s)
{
    err_t e;
    memset(s, 0, sizeof *s);
    if (scenario_load_string("test", yaml, NULL, 0, s, &e) != 0) {
        printf("  load: %s\n", e.msg);
        check_failed_now = 1;
        return -1;
    }
    return 0;
}

/* Runs yaml; fleet in *m, groups in g[] (2 entries). */
static int run2(const char *yaml, metrics_summary_t *m, metrics_summary_t *g, FILE *pt)
{
    scenario_t s;
    if (load(yaml, &s) != 0) return -1;
    sim_options_t opt = {.groups = g, .per_tenant = pt};
    err_t e;
    int rc = sim_run(&s, &opt, m, &e);
    if (rc != 0) {
        printf("  sim_run: %s\n", e.msg);
        check_failed_now = 1;
    }
    scenario_fini(&s);
    return rc;
}

/* Per group, the sync closed form: ITL mean = T / E[a+1] and the decode
 * rate E[a+1] / T, each group with its own T. iid alpha = 0.7 over a
 * 300 s run: the tolerance is 4 standard errors of the mean of a+1 over
 * the blocks simulated (delta method: relative SE of the ITL = that of
 * E[a+1]). The fleet's throughput is the sum of the groups' (conservation),
 * its requests too. */
static void test_two_groups_closed_form(void)
{
    char y[4096];
    snprintf(y, sizeof y, TWO_GROUPS_YAML, "300s", "10s", 2,
             "{model: iid, alpha: 0.7}", "", "100000000", "");
    metrics_summary_t m, g[2];
    if (run2(y, &m, g, NULL) != 0) return;
    double pk[5], en = 0, en2 = 0;
    simtest_law_iid(0.7, 4, pk);
    for (int k = 0; k <= 4; k++) {
        en += (k + 1) * pk[k];
        en2 += (k + 1) * (k + 1) * pk[k];
    }
    double sd = sqrt(en2 - en * en);
    const double T[2] = {T_A, T_B};
    for (int k = 0; k < 2; k++) {
        double blocks = 2 * 290 / T[k];
        double rel = 4 * sd / en / sqrt(blocks);
        CHECK_REL(g[k].value[METRIC_ITL_MEAN], T[k] / en, rel);
        CHECK_REL(g[k].value[METRIC_TOKENS_PER_S_TENANT], en / T[k], rel);
        CHECK_REL(g[k].value[METRIC_ACCEPTED_LEN_MEAN], en, rel);
        CHECK_REL(g[k].value[METRIC_ACCEPTANCE_RATE], (en - 1) / 4, 2 * rel);
    }
    /* The groups differ by T_B / T_A ~ 2.2: a tally that mixed them up
     * would fail the checks above. */
    CHECK_REL(m.value[METRIC_THROUGHPUT],
              g[0].value[METRIC_THROUGHPUT] + g[1].value[METRIC_THROUGHPUT], 1e-12);
    CHECK(m.value[METRIC_REQUESTS_DONE] ==
          g[0].value[METRIC_REQUESTS_DONE] + g[1].value[METRIC_REQUESTS_DONE]);
    /* Jain's index of two rates x, y: (x + y)^2 / (2 (x^2 + y^2)). */
    double x = en / T_A, z = en / T_B;
    CHECK_REL(m.value[METRIC_FAIRNESS_JAIN], (x + z) * (x + z) / (2 * (x * x + z * z)),
              0.01);
    CHECK_REL(g[0].value[METRIC_FAIRNESS_JAIN], 1.0, 1e-12);   /* one tenant */
}

/* Deterministic: alpha = 1, so every block commits 5 tokens in T. Output
 * 11 tokens: the first token at TTFT = max(prefill, rtt + v) (edge prefill
 * 1 ms, cloud prefill v), then 2 blocks. TPOT = 2T / 10.
 *   a: TTFT 45 ms, TPOT 17 ms, request 45 + 170 = 215 ms;
 *   b: TTFT 105 ms, TPOT 37 ms, request 105 + 370 = 475 ms.
 * SLO ttft 100 ms, tpot 20 ms; group b overrides tpot with 40 ms. So a
 * meets both, b only TPOT. In 10 s with no warm-up (think 0, so request k
 * ends at k times its period): a finishes floor(10 / 0.215) = 46, b
 * floor(10 / 0.475) = 21 requests. Perfect clocks (no drift), or the
 * counts would move by one. */
static void test_slo_hand_count(void)
{
    char y[4096];
    snprintf(y, sizeof y, TWO_GROUPS_YAML, "10s", "0s", 1, "{model: iid, alpha: 1}",
             "slo: {ttft: 100ms, tpot: 20ms}\n" NO_DRIFT, "11", "      slo: {tpot: 40ms}\n");
    metrics_summary_t m, g[2];
    if (run2(y, &m, g, NULL) != 0) return;
    const double na = 46, nb = 21, out = 11, span = 10;
    CHECK(g[0].value[METRIC_REQUESTS_DONE] == na);
    CHECK(g[1].value[METRIC_REQUESTS_DONE] == nb);
    CHECK_REL(g[0].value[METRIC_TTFT_MEAN], 0.045, 1e-9);
    CHECK_REL(g[1].value[METRIC_TTFT_MEAN], 0.105, 1e-9);
    CHECK(g[0].value[METRIC_SLO_ATTAINMENT] == 1);
    CHECK(g[1].value[METRIC_SLO_ATTAINMENT] == 0);
    CHECK(g[1].value[METRIC_TTFT_SLO_FRAC] == 0);
    CHECK(g[1].value[METRIC_TPOT_SLO_FRAC] == 1);
    CHECK_REL(m.value[METRIC_SLO_ATTAINMENT], na / (na + nb), 1e-12);
    CHECK_REL(m.value[METRIC_TTFT_SLO_FRAC], na / (na + nb), 1e-12);
    CHECK(m.value[METRIC_TPOT_SLO_FRAC] == 1);
    CHECK_REL(m.value[METRIC_GOODPUT_REQ_S], na / span, 1e-12);
    CHECK_REL(m.value[METRIC_GOODPUT_TOK_S], na * out / span, 1e-12);
    CHECK(g[1].value[METRIC_GOODPUT_REQ_S] == 0);
    /* Fixed times, no KV limit: nothing to admit or to compare with a
     * roofline. */
    CHECK(m.value[METRIC_ADMISSION_WAIT_MEAN] == 0);
    CHECK(isnan(m.value[METRIC_KV_UTIL_MEAN]));
    CHECK(isnan(m.value[METRIC_GPU_ROOFLINE_UTIL]));
}

/* Without an SLO the SLO metrics are undefined. */
static void test_no_slo_is_nan(void)
{
    char y[4096];
    snprintf(y, sizeof y, TWO_GROUPS_YAML, "5s", "0s", 1, "{model: iid, alpha: 1}", "",
             "11", "");
    metrics_summary_t m, g[2];
    if (run2(y, &m, g, NULL) != 0) return;
    CHECK(isnan(m.value[METRIC_SLO_ATTAINMENT]));
    CHECK(isnan(m.value[METRIC_GOODPUT_TOK_S]));
    CHECK(isnan(g[1].value[METRIC_TPOT_SLO_FRAC]));
}

/* Jain's index and the 5th percentile on a tally filled by hand: group 0
 * one tenant at 10 tok/s, group 1 two at 20 and 40 tok/s, a fourth tenant
 * never decoding (left out). Jain = 70^2 / (3 · 2100) = 7/9; p5 over three
 * rates: the smallest with >= 5% at or below it, 10. */
static void test_jain_constructed(void)
{
    tally_t *t = tally_create(0, 100, 2, (const int[]){1, 3}, 0);
    CHECK(t != NULL);
    if (!t) return;
    const double rate[3] = {10, 20, 40};
    for (int i = 0; i < 3; i++) {
        tally_decode_time(t, i, 0, 10);
        tally_commit(t, i, 10, 10, (int)(rate[i] * 10));
    }
    metrics_rep_t f, g[2];
    tally_finish(t, 0, 0, 0, &f, g);
    CHECK_REL(f.v[METRIC_FAIRNESS_JAIN], 7.0 / 9.0, 1e-12);
    CHECK(f.v[METRIC_TOKENS_PER_S_TENANT_P5] == 10);
    CHECK(g[0].v[METRIC_FAIRNESS_JAIN] == 1);
    CHECK_REL(g[1].v[METRIC_FAIRNESS_JAIN], 60.0 * 60 / (2 * 2000), 1e-12);
    CHECK(g[1].v[METRIC_TOKENS_PER_S_TENANT_P5] == 20);
    /* Decode rate of the fleet: all tokens over all decoding time. */
    CHECK_REL(f.v[METRIC_TOKENS_PER_S_TENANT], 700.0 / 30, 1e-12);
    tally_free(t);
}

/* A per-tenant CSV: a header and tenants x replications rows; its tokens,
 * summed per replication, are the fleet's committed tokens (throughput x
 * measured span, averaged over replications). */
static void test_per_tenant_csv(void)
{
    char y[4096];
    snprintf(y, sizeof y, TWO_GROUPS_YAML, "20s", "2s", 3,
             "{model: iid, alpha: 0.7}", "slo: {ttft: 100ms}\n", "50", "");
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (!f) return;
    metrics_summary_t m, g[2];
    if (run2(y, &m, g, f) != 0) {
        fclose(f);
        return;
    }
    rewind(f);
    char line[1024];
    int rows = 0, header = 0;
    double tokens = 0;
    while (fgets(line, sizeof line, f)) {
        if (!header++) {
            CHECK(strncmp(line, "rep,tenant,group,tokens,", 24) == 0);
            continue;
        }
        int rep, ten;
        char grp[16];
        double tok;
        CHECK(sscanf(line, "%d,%d,%15[^,],%lf", &rep, &ten, grp, &tok) == 4);
        CHECK(strcmp(grp, ten == 0 ? "a" : "b") == 0);
        tokens += tok;
        rows++;
    }
    fclose(f);
    CHECK(rows == 2 * 3);
    CHECK_REL(tokens / 3 / (20 - 2), m.value[METRIC_THROUGHPUT], 1e-9);
}

/* With one group, every group metric is the fleet's (same events, same
 * order), and --json carries it under "groups". */
static void test_one_group_equals_fleet(void)
{
    scenario_t s;
    if (load(SIMTEST_SYNC_HOOK_YAML "slo: {tpot: 3ms}\n", &s) != 0) return;
    s.duration = 40;
    metrics_summary_t m, g[1];
    sim_options_t opt = {.groups = g};
    err_t e;
    CHECK(sim_run(&s, &opt, &m, &e) == 0);
    for (int i = 0; i < METRIC_COUNT; i++) {
        if (metric_is_timing(i)) continue;
        double a = m.value[i], b = g[0].value[i];
        if (!((isnan(a) && isnan(b)) || a == b))
            printf("  %s: fleet %.10g, group %.10g\n", metric_name(i), a, b);
        CHECK((isnan(a) && isnan(b)) || a == b);
    }
    m.groups = g;
    m.ngroups = 1;
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f && output_json(f, &s, NULL, &m) == 0);
    if (f) fclose(f);
    CHECK(buf && strstr(buf, "\"groups\": {\n    \"default\": {\n      \"itl_mean_s\": "));
    CHECK(buf && strstr(buf, "\"slo_attainment\": "));
    free(buf);
    scenario_fini(&s);
}

/* The slo section: groups inherit the top level key by key, override it,
 * and the resolved scenario written back loads the same. */
static void test_slo_keys(void)
{
    const char *y = "slo: {ttft: 500ms, tpot: 50ms}\n"
                    "tenants:\n  groups:\n"
                    "    - {name: x, count: 1}\n"
                    "    - {name: y, count: 2, slo: {tpot: 20ms}}\n";
    scenario_t s;
    if (load(y, &s) != 0) return;
    CHECK(s.groups[0].slo.ttft == 0.5 && s.groups[0].slo.tpot == 0.05);
    CHECK(s.groups[1].slo.ttft == 0.5 && s.groups[1].slo.tpot == 0.02);
    char *buf = scentext_yaml(&s);
    scenario_t r;
    if (buf && load(buf, &r) == 0) {
        CHECK(r.groups[1].slo.tpot == 0.02 && r.groups[1].slo.ttft == 0.5);
        CHECK(r.groups[0].slo.tpot == 0.05);
        scenario_fini(&r);
    }
    free(buf);
    scenario_fini(&s);
    err_t e;
    CHECK(scenario_load_string("t", "slo: {ttft: 0s}\n", NULL, 0, &s, &e) != 0);
    CHECK(strstr(e.msg, "t:1:") && strstr(e.msg, "slo.ttft"));
    CHECK(scenario_load_string("t", "slo: {tfft: 1s}\n", NULL, 0, &s, &e) != 0);
    CHECK(strstr(e.msg, "slo.tfft"));
}

/* name_refused(YAML, WHERE, WHAT): the load fails at WHERE (t:LINE:COL:
 * KEY) with WHAT in the message. */
static void name_refused(const char *y, const char *where, const char *what)
{
    scenario_t s;
    err_t e = {0};
    int rc = scenario_load_string("t", y, NULL, 0, &s, &e);
    CHECK(rc != 0);
    if (rc == 0) { scenario_fini(&s); return; }
    if (!strstr(e.msg, where) || !strstr(e.msg, what))
        printf("  got '%s', expected '%s' and '%s'\n", e.msg, where, what);
    CHECK(strstr(e.msg, where) != NULL && strstr(e.msg, what) != NULL);
}

/* A group's name is what paths address it by: a name a path cannot reach
 * (a dot splits it), would reach as another group (digits read as an index:
 * a group "0" at index 1 took the --set meant for it to index 0's), or an
 * empty one (silently replaced by the default) is refused at its key; for
 * tenant and replica groups alike. A name with other punctuation is fine. */
static void test_group_names(void)
{
    name_refused("tenants:\n  groups:\n    - {name: a.b, count: 1}\n",
                 "t:3:14: tenants.groups.0.name:", "contains '.'");
    name_refused("tenants:\n  groups:\n    - {name: x, count: 1}\n    - {name: '0', count: 1}\n",
                 "t:4:14: tenants.groups.1.name:", "is a number");
    name_refused("tenants:\n  groups:\n    - {name: '', count: 1}\n",
                 "t:3:14: tenants.groups.0.name:", "is empty");
    name_refused("cloud:\n  replica_groups:\n    - {name: '7', count: 1}\n",
                 "t:3:14: cloud.replica_groups.0.name:", "is a number");
    name_refused("cloud:\n  replica_groups:\n    - {name: h.200, count: 1}\n",
                 "t:3:14: cloud.replica_groups.0.name:", "contains '.'");
    /* A group that is not a mapping: the message lists every key a group
     * takes (docs/formats.md, tenants), slo and priority too (issue 28). */
    name_refused("tenants:\n  groups:\n    - 5\n", "t:3:7: tenants.groups.0:",
                 "{name, count, priority, slo, edge, network, workload, protocol, "
                 "acceptance}, got a scalar");
    scenario_t s;
    err_t e = {0};
    int rc = scenario_load_string("t", "tenants:\n  groups:\n    - {name: 'a-1:b,c', count: 1}\n"
                                  "    - {count: 2}\n", NULL, 0, &s, &e);
    CHECK(rc == 0);
    if (rc == 0) {
        CHECK(strcmp(s.groups[0].name, "a-1:b,c") == 0 && strcmp(s.groups[1].name, "group1") == 0);
        scenario_fini(&s);
    }
}

/* A tenants-level key that every group gives again is still checked: a
 * bad value there is refused at its key, not dropped because no group
 * inherits it (it was accepted before). Replaced by a good value, the
 * groups keep their own. */
static void test_shadowed_tenants_key(void)
{
    const char *groups = "  groups:\n    - {name: a, count: 1, network: {rtt: 10ms}}\n"
                         "    - {name: b, count: 1, network: {rtt: 30ms}}\n";
    char y[512];
    snprintf(y, sizeof y, "tenants:\n  network: {rtt: fast}\n%s", groups);
    name_refused(y, "t:2:18: tenants.network.rtt:", "'fast' is not a duration");
    snprintf(y, sizeof y, "tenants:\n  edge: {draft_time: {dist: normal}}\n%s", groups);
    scenario_t s;
    err_t e = {0};
    CHECK(scenario_load_string("t", y, NULL, 0, &s, &e) != 0 && e.code == ERR_INPUT);
    CHECK(strstr(e.msg, "tenants.edge.draft_time") != NULL);
    snprintf(y, sizeof y, "tenants:\n  network: {rtt: 20ms}\n%s", groups);
    CHECK(scenario_load_string("t", y, NULL, 0, &s, &e) == 0);
    CHECK(s.groups[0].network.rtt == 0.010 && s.groups[1].network.rtt == 0.030);
    scenario_fini(&s);
}

/* The roofline-peak time of an iteration is below its modelled time, so
 * the model path gives a gpu_roofline_util in (0, 1]; KV reserved is a
 * fraction of the capacity. */
static void test_roofline_and_kv_bounds(void)
{
    scenario_t s;
    if (load("duration: 20s\nwarmup: 2s\ntenants: {count: 16}\n", &s) != 0) return;
    metrics_summary_t m;
    err_t e;
    CHECK(sim_run(&s, NULL, &m, &e) == 0);
    double r = m.value[METRIC_GPU_ROOFLINE_UTIL], kv = m.value[METRIC_KV_UTIL_MEAN];
    CHECK(r > 0 && r <= 1);
    CHECK(kv > 0 && kv <= 1);
    printf("  gpu_util %g, gpu_roofline_util %g, kv_util_mean %g\n", m.value[METRIC_GPU_UTIL], r, kv);
    scenario_fini(&s);
}

/* KV admission by hand: cloud-only, two tenants on one replica whose KV
 * holds one request at a time. llama-2-7b keeps 2 (K, V) x 32 layers x
 * 4096 x 2 bytes = 0.5 MiB per token; a request of 1 prompt + 10 output
 * tokens reserves 5.5 MiB of the 8 MiB. A request holds the GPU for
 * S = 10 iterations of v = 10 ms (prefill, 9 decodes) = 100 ms; its last
 * token reaches the edge rtt/2 = 10 ms later and the tenant's next prompt
 * the cloud 10 ms after that, while the other tenant's request (admitted
 * at the release) runs: so after the first two, every request waits
 * S - rtt = 80 ms, and KV is always held by exactly one request (the
 * release admits the next at once): kv_util_mean = 5.5 / 8. With perfect
 * clocks (no drift): the two tenants start together. */
static void test_admission_hand_count(void)
{
    const char *y = "duration: 20s\nwarmup: 1s\n"
                    "protocol: {mode: cloud-only}\n"
                    "tenants:\n  count: 2\n"
                    "  network: {rtt: 20ms, jitter: none}\n"
                    "  workload: {arrival: closed, think: 0s, prompt_tokens: 1, "
                    "output_tokens: 10}\n"
                    "cloud: {verify_time: 10ms, kv_capacity: 8MiB}\n" NO_DRIFT;
    scenario_t s;
    if (load(y, &s) != 0) return;
    metrics_summary_t m;
    err_t e;
    CHECK(sim_run(&s, NULL, &m, &e) == 0);
    CHECK_REL(m.value[METRIC_ADMISSION_WAIT_MEAN], 0.080, 1e-9);
    CHECK_REL(m.value[METRIC_ADMISSION_WAIT_P99], 0.080, HIST_REL_ERR);
    CHECK_REL(m.value[METRIC_KV_UTIL_MEAN], 5.5 / 8, 1e-9);
    CHECK_REL(m.value[METRIC_TTFT_MEAN], 0.010 + 0.080 + 0.010 + 0.010, 1e-9);
    scenario_fini(&s);
}

/* Run CSV with groups: the header names GROUP.metric columns after the
 * fleet's, and the row has as many fields. */
static void test_csv_group_columns(void)
{
    metrics_summary_t m, g[2];
    memset(&m, 0, sizeof m);
    memset(g, 0, sizeof g);
    m.groups = g;
    m.ngroups = 2;
    const char *names[2] = {"a", "b"};
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    if (!f) return;
    CHECK(output_csv_header_groups(f, NULL, 0, names, 2) == 0);
    CHECK(output_csv_row(f, NULL, 0, &m) == 0);
    fclose(f);
    char *nl = strchr(buf, '\n');
    CHECK(nl != NULL);
    if (nl) {
        int ch = 0, cr = 0;
        for (char *p = buf; p < nl; p++) ch += *p == ',';
        for (char *p = nl + 1; *p && *p != '\n'; p++) cr += *p == ',';
        CHECK(ch == 3 * 2 * METRIC_COUNT - 1);
        CHECK(cr == ch);
    }
    CHECK(strstr(buf, ",b.itl_mean_s,b.itl_mean_s_ci95,") != NULL);
    free(buf);
}

int main(void)
{
    RUN(test_admission_hand_count);
    RUN(test_csv_group_columns);
    RUN(test_two_groups_closed_form);
    RUN(test_slo_hand_count);
    RUN(test_no_slo_is_nan);
    RUN(test_jain_constructed);
    RUN(test_per_tenant_csv);
    RUN(test_one_group_equals_fleet);
    RUN(test_slo_keys);
    RUN(test_group_names);
    RUN(test_shadowed_tenants_key);
    RUN(test_roofline_and_kv_bounds);
    return check_done();
}
