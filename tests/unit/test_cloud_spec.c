/* test_cloud_spec — the cloud-spec protocol (sim/entity/proto_cloud_spec.c):
 * its keys and their errors, the cost of the cloud's draft steps from a
 * draft model card and from draft heads (exact, against the service model's
 * own times summed by hand), and that the γ policies, orderings, tenant
 * groups and replica groups work with it. Its closed form against the
 * simulator is in test_closed_form.c (section k). */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "config/scenario.h"
#include "model/service.h"
#include "run/analytic.h"
#include "run/sim.h"
#include "scentext.h"

#define YAML_MAX 4096

static int load(const char *yaml, scenario_t *s, err_t *e)
{
    memset(s, 0, sizeof *s);
    return scenario_load_string("cs.yaml", yaml, NULL, 0, s, e);
}

/* The scenario loads, runs, and its totals keep the conservation laws
 * (replicas: its GPUs, for the cost identity). */
static int run_ok(const char *yaml, int replicas, metrics_summary_t *m, tally_totals_t *t)
{
    scenario_t s;
    err_t e = {0, ""};
    if (load(yaml, &s, &e) != 0) {
        printf("  load: %s\n", e.msg);
        check_failed_now = 1;
        return -1;
    }
    int rc = sim_run_detailed(&s, NULL, m, t, &e);
    if (rc != 0) {
        printf("  run: %s\n", e.msg);
        check_failed_now = 1;
    } else {
        /* Every drafted token is committed or discarded (on arrival at the
         * edge), every committed one is a first token, an accepted draft
         * or a target token. */
        CHECK_ABS(t->drafted, t->draft_committed + t->discarded + t->pending_drafts, 1e-6);
        CHECK_ABS(t->committed, t->first_tokens + t->draft_committed + t->extra_committed,
                  1e-6);
        CHECK(t->committed > 1000);
        /* The cost identity: GPU seconds per token are the GPUs' busy time
         * (the drafts' included) per token. */
        CHECK_REL(m->value[METRIC_GPU_S_PER_KTOK],
                  1000 * replicas * m->value[METRIC_GPU_UTIL] / m->value[METRIC_THROUGHPUT],
                  1e-6);
    }
    scenario_fini(&s);
    return rc;
}

/* Bad input: FILE:LINE:COL, the key, ERR_INPUT (exit 2). */
static void expect_error(const char *yaml, const char *where_key, const char *what)
{
    scenario_t s;
    err_t e = {0, ""};
    int rc = load(yaml, &s, &e);
    CHECK(rc != 0);
    if (rc == 0) {
        scenario_fini(&s);
        return;
    }
    CHECK(e.code == ERR_INPUT);
    CHECK(strstr(e.msg, where_key) == e.msg);
    CHECK(strstr(e.msg, what) != NULL);
    if (strstr(e.msg, where_key) != e.msg || !strstr(e.msg, what))
        printf("  got: %s\n  want: %s ... %s\n", e.msg, where_key, what);
}

static void test_key_errors(void)
{
    expect_error("protocol: {mode: cloud-spec}\n", "cs.yaml:1:18: protocol.mode:",
                 "cloud.draft");
    expect_error("protocol: {mode: cloud-spec}\ncloud:\n  draft_heads: {params: 1e9}\n",
                 "cs.yaml:3:16: cloud.draft_heads:", "both params and flops_per_token");
    expect_error("protocol: {mode: cloud-spec}\ncloud:\n  draft: models/llm/tinyllama-1.1b.yaml\n"
                 "  draft_heads: {params: 1e9, flops_per_token: 2e9}\n",
                 "cs.yaml:4:16: cloud.draft_heads:", "not both");
    expect_error("protocol: {mode: cloud-spec}\ncloud:\n"
                 "  draft_heads: {params: 0, flops_per_token: 2e9}\n",
                 "cs.yaml:3:25: cloud.draft_heads.params:", "must be > 0");
    expect_error("protocol: {mode: cloud-spec}\ncloud:\n  draft: models/llm/nope.yaml\n",
                 "cs.yaml:3:10: cloud.draft:", "not found");
    expect_error("protocol: {mode: cloud-spec}\ncloud:\n  draft_precision: fp9\n"
                 "  draft_time: 1ms\n", "cs.yaml:3:20: cloud.draft_precision:",
                 "unknown value 'fp9'");
    expect_error("protocol: {mode: cloud-spec}\ncloud:\n  draft_time: -1ms\n",
                 "cs.yaml:3:15: cloud.draft_time:", "negative");
    expect_error("protocol: {mode: cloud-spec}\ncloud:\n  draft_heads: {parms: 1}\n",
                 "cs.yaml:3:17: cloud.draft_heads.parms:", "did you mean 'params'");
    /* The draft's keys are cloud-wide, not a replica group's. */
    expect_error("protocol: {mode: cloud-spec}\ncloud:\n  draft_time: 1ms\n"
                 "  replica_groups:\n    - {name: a, count: 1, draft_time: 2ms}\n",
                 "cs.yaml:5:27: cloud.replica_groups.0.draft_time:", "is cloud-wide");
}

/* Given keys are written back (and load again); keys not given are not
 * written, so a scenario without them writes what it wrote before. */
static void test_write_back(void)
{
    const char *yaml = "protocol: {mode: cloud-spec}\ncloud:\n"
                       "  draft: models/llm/tinyllama-1.1b.yaml\n  draft_precision: w4a16\n";
    scenario_t s, s2;
    err_t e = {0, ""};
    if (load(yaml, &s, &e) != 0) {
        printf("  %s\n", e.msg);
        check_failed_now = 1;
        return;
    }
    char *txt = scentext_yaml(&s);
    CHECK(txt && strstr(txt, "\n  draft:  # models/llm/tinyllama-1.1b.yaml\n"));
    CHECK(txt && strstr(txt, "\n  draft_precision: w4a16\n"));
    CHECK(txt && !strstr(txt, "draft_heads") && !strstr(txt, "  draft_time"));
    if (txt) {
        CHECK(load(txt, &s2, &e) == 0);
        CHECK(strcmp(s2.cloud.draft.name, "tinyllama-1.1b") == 0);
        CHECK(s2.cloud.draft_precision == PREC_W4A16);
        scenario_fini(&s2);
    }
    free(txt);
    scenario_fini(&s);
    CHECK(load("protocol: {mode: cloud-spec}\ncloud:\n"
               "  draft_heads: {params: 3.7e8, flops_per_token: 7.5e8}\n", &s, &e) == 0);
    txt = scentext_yaml(&s);
    CHECK(txt && strstr(txt, "\n  draft_heads:\n    params: 3.7e+08\n"
                             "    flops_per_token: 7.5e+08\n"));
    scenario_fini(&s);
    free(txt);
    CHECK(load("protocol: {mode: sync}\n", &s, &e) == 0);
    txt = scentext_yaml(&s);
    CHECK(txt && !strstr(txt, "\n  draft_heads") && !strstr(txt, "draft_precision") &&
          !strstr(txt, "\n  draft:"));
    scenario_fini(&s);
    free(txt);
}

/* One tenant, α = 1 (every block commits γ + 1 = 5 tokens), prompt P = 128,
 * output N = 101 = 1 + 20 blocks of 5, think 0, rtt 40 ms, no jitter,
 * unlimited links; the target and the draft from the service model (the
 * cards on the H200's datasheet, cloud.overhead 0.5 ms per iteration).
 * The prompt reaches the cloud after rtt/2, the prefill is one iteration
 * (P tokens, context 0, logits of the last only); block b (committed
 * c = 1 + 5b before it) is 4 draft steps, step k one token over the context
 * P + c − 1 + k, then a verify of 5 tokens over P + c − 1; the last verdict
 * reaches the edge rtt/2 after its iteration. So e2e = rtt + prefill +
 * Σ_b (Σ_k draft(P + c − 1 + k) + verify(5, P + c − 1)), and TTFT =
 * rtt + prefill, exactly (the service model's own times, summed here).
 * heads: each draft step costs service_heads_time(1) instead. */
static const char *const EXACT_YAML =
    "name: exact\n"
    "duration: 60s\n"
    "warmup: 5s\n"
    "protocol: {mode: cloud-spec, gamma: 4}\n"
    "acceptance: {model: iid, alpha: 1}\n"
    "tenants:\n"
    "  count: 1\n"
    "  network: {rtt: 40ms, jitter: none, uplink: inf, downlink: inf}\n"
    "  workload: {arrival: closed, think: 0s, prompt_tokens: 128, output_tokens: 101}\n"
    "drift: {start: 0s, edge: 0, cloud: 0}\n"   /* exact sums: perfect clocks */
    "cloud:\n"
    "  %s\n";

static void check_exact(const char *draft_line, int heads)
{
    char y[YAML_MAX];
    snprintf(y, sizeof y, EXACT_YAML, draft_line);
    scenario_t s;
    err_t e = {0, ""};
    if (load(y, &s, &e) != 0) {
        printf("  %s\n", e.msg);
        check_failed_now = 1;
        return;
    }
    const cloud_cfg_t *c = &s.cloud;
    service_t *tsv = service_create(&c->gpu, &c->target, c->precision, NULL, c->overhead, &e);
    service_t *dsv = heads ? NULL
                           : service_create(&c->gpu, &c->draft, c->draft_precision, NULL,
                                            c->overhead, &e);
    service_heads_t h;
    if (heads)
        CHECK(service_heads_init(&h, &c->gpu, c->precision, c->draft_heads.params,
                                 c->draft_heads.flops_per_token, c->overhead, &e) == 0);
    CHECK(tsv && (heads || dsv));
    if (!tsv || (!heads && !dsv)) return;
    const int P = 128;
    service_job_t pre = {P, 0, P - 1};
    double prefill = service_iter_time(tsv, &pre, 1), blocks = 0;
    for (int b = 0, cm = 1; b < 20; b++, cm += 5) {
        for (int k = 0; k < 4; k++) {
            service_job_t d = {1, P + cm - 1 + k, 0};
            blocks += heads ? service_heads_time(&h, 1) : service_iter_time(dsv, &d, 1);
        }
        service_job_t v = {5, P + cm - 1, 0};
        blocks += service_iter_time(tsv, &v, 1);
    }
    double e2e = 0.040 + prefill + blocks;
    printf("  %s: prefill %.6f s, 20 blocks %.6f s, e2e %.6f s\n", draft_line, prefill,
           blocks, e2e);
    metrics_summary_t m;
    CHECK(sim_run(&s, NULL, &m, &e) == 0);
    CHECK_REL(m.value[METRIC_E2E_MEAN], e2e, 1e-9);
    CHECK_REL(m.value[METRIC_TTFT_MEAN], 0.040 + prefill, 1e-9);
    /* The replica idles only while the last verdict goes down and the
     * next prompt comes up (rtt per request of e2e), up to the window's
     * edges. The drafts are in its busy time. */
    CHECK_REL(m.value[METRIC_GPU_UTIL], (e2e - 0.040) / e2e, 0.01);
    service_free(tsv);
    service_free(dsv);
    scenario_fini(&s);
}

static void test_exact_draft_model(void)
{
    check_exact("draft: models/llm/tinyllama-1.1b.yaml", 0);
}

static void test_exact_draft_heads(void)
{
    check_exact("draft_heads: {params: 3.7e8, flops_per_token: 7.5e8}", 1);
}

/* The adaptive γ policies run on the cloud's observations (no refusal,
 * conservation holds); analytic refuses them as for every protocol. */
static void test_gamma_policies(void)
{
    static const char *const pols[] = {"rtt", "goodput"};
    for (int i = 0; i < 2; i++) {
        char y[YAML_MAX];
        snprintf(y, sizeof y,
                 "duration: 60s\nwarmup: 5s\n"
                 "protocol: {mode: cloud-spec, gamma: 8, gamma_policy: %s}\n"
                 "acceptance: {model: iid, alpha: 0.8}\n"
                 "tenants: {count: 8, workload: {prompt_tokens: 128, output_tokens: 128}}\n"
                 "cloud: {draft: models/llm/tinyllama-1.1b.yaml}\n",
                 pols[i]);
        metrics_summary_t m;
        tally_totals_t t;
        if (run_ok(y, 1, &m, &t) != 0) continue;
        /* γ varies per block: verified tokens are not (8 + 1) per verdict */
        CHECK(t.verified_tokens != 9 * t.verdicts);
        scenario_t s;
        err_t e = {0, ""};
        analytic_t a;
        CHECK(load(y, &s, &e) == 0);
        CHECK(analytic_compute(&s, &a, &e) != 0 && strstr(e.msg, "gamma_policy"));
        scenario_fini(&s);
    }
}

/* Deadline ordering under SLOs, and a mixed fleet of tenant groups (a
 * cloud-spec group beside a sync one, per-group overrides) on replica groups
 * of two cards, each drafting on its own GPU. */
static void test_orderings_groups(void)
{
    metrics_summary_t m;
    tally_totals_t t;
    const char *edf =
        "duration: 60s\nwarmup: 5s\n"
        "protocol: {mode: cloud-spec, gamma: 4}\n"
        "acceptance: {model: iid, alpha: 0.7}\n"
        "slo: {ttft: 200ms, tpot: 20ms}\n"
        "tenants: {count: 16, workload: {prompt_tokens: 256, output_tokens: 128}}\n"
        "cloud:\n  draft: models/llm/tinyllama-1.1b.yaml\n"
        "  batching: {max_batch: 8, order: edf}\n";
    if (run_ok(edf, 1, &m, &t) == 0) {
        CHECK(m.value[METRIC_TPOT_SLO_FRAC] >= 0 && m.value[METRIC_TPOT_SLO_FRAC] <= 1);
        CHECK(m.value[METRIC_BATCH_MEAN] > 1);
    }
    const char *mixed =
        "duration: 60s\nwarmup: 5s\n"
        "protocol: {mode: sync, gamma: 4}\n"
        "acceptance: {model: iid, alpha: 0.7}\n"
        "tenants:\n"
        "  workload: {prompt_tokens: 128, output_tokens: 128}\n"
        "  groups:\n"
        "    - {name: cloud, count: 6, protocol: {mode: cloud-spec, gamma: 3}}\n"
        "    - {name: edge, count: 6}\n"
        "cloud:\n  draft_heads: {params: 3.7e8, flops_per_token: 7.5e8}\n"
        "  replica_groups:\n"
        "    - {name: h200, count: 1, gpu: models/hardware/h200.yaml}\n"
        "    - {name: l4, count: 2, gpu: models/hardware/l4.yaml}\n";
    if (run_ok(mixed, 3, &m, &t) == 0) CHECK(t.requests_done > 100);
}

int main(void)
{
    RUN(test_key_errors);
    RUN(test_write_back);
    RUN(test_exact_draft_model);
    RUN(test_exact_draft_heads);
    RUN(test_gamma_policies);
    RUN(test_orderings_groups);
    return check_done();
}
