/* test_analytic — the closed forms against hand computation.
 *
 * Scenarios are built by hand (one tenant group). The base case is the
 * issue's closed-form hook: γ = 4, α = 0.7, draft 10 ms, verify 5 ms,
 * rtt 40 ms, no jitter, unlimited links.
 *   E = (1 − 0.7^5)/(1 − 0.7) = 0.83193/0.3 = 2.7731
 *   block = 4·10 + 40 + 5 = 85 ms; ITL = 85/2.7731 = 30.652 ms;
 *   sync rate = 2.7731/0.085 = 32.6247 tok/s.
 * Async (docs/metrics.md, "The closed forms", as written there — the sum form, not the module's
 * simplified 1/(1−α)): q = 1 − α^γ,
 *   E[tokens] = (1/q − 1)·γ + Σ_{i<γ} (i+1)·α^i·(1−α)/q,
 *   E[cycle]  = γd/q + rtt + v.
 */
#include <stdlib.h>
#include <unistd.h>

#include "run/analytic.h"
#include "entity/proto.h"
#include "model/caltable.h"
#include "check.h"
#include "model/service.h"

#include "accepttest.h"

/* A figure `specsim analytic` prints, by its key: the protocols' closed
 * forms give theirs (sim/entity/proto.h), so analytic_t has no field each. */
#define FIG(a, key) analytic_value(&(a), key)

static tenant_group_t group;
/* The acceptance of the scenario under test (one at a time; freed by the
 * next set_acc and at exit). */
static accept_cfg_t acc;

static void set_acc(scenario_t *s, const char *yaml)
{
    accept_cfg_fini(&acc);
    accepttest_cfg(&acc, yaml);
    s->acceptance = acc;
}

static scenario_t base(double alpha)
{
    scenario_t s;
    memset(&s, 0, sizeof s);
    memset(&group, 0, sizeof group);
    s.protocol.proto = proto_find("sync");
    s.protocol.gamma = 4;
    s.protocol.window = 4;
    char yaml[64];
    snprintf(yaml, sizeof yaml, "{model: iid, alpha: %.17g}", alpha);
    set_acc(&s, yaml);
    group.count = 1;
    group.edge.has_draft_time = 1;
    group.edge.draft_time = dist_const(0.010);
    group.edge.quant = PREC_W4A16;
    group.network.rtt = 0.040;
    group.network.jitter = dist_const(0);
    group.network.uplink_bps = INFINITY;
    group.network.downlink_bps = INFINITY;
    group.network.overhead_bytes = 64;
    group.network.bytes_per_token = 4;
    group.workload.prompt_tokens = dist_const(1);
    group.workload.output_tokens = dist_const(1e8);
    s.groups = &group;
    s.ngroups = 1;
    s.ntenants = 1;
    s.cloud.replicas = 1;
    s.cloud.has_verify_time = 1;
    s.cloud.verify_time = dist_const(0.005);
    s.cloud.precision = PREC_FP16;
    s.cloud.has_draft_time = 1;   /* cloud-spec's draft steps */
    s.cloud.draft_time = dist_const(0.002);
    return s;
}

static int compute(const scenario_t *s, analytic_t *a)
{
    err_t e = {0, ""};
    int rc = analytic_compute(s, a, &e);
    if (rc != 0) printf("  analytic_compute: %s\n", e.msg);
    return rc;
}

/* The documented async formula (docs/metrics.md), stall-free case, iid α (0 < α < 1). */
static double async_ref(double alpha, int g, double d, double rtt, double v)
{
    double q = 1 - pow(alpha, g), rej = 0;
    for (int i = 0; i < g; i++) rej += (i + 1) * pow(alpha, i) * (1 - alpha) / q;
    return ((1 / q - 1) * g + rej) / (g * d / q + rtt + v);
}

static void test_sync_closed_form(void)
{
    scenario_t s = base(0.7);
    analytic_t a;
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(a.accepted_len_expected, 2.7731, 1e-12);
    CHECK_REL(FIG(a, "block_time_sync_s"), 0.085, 1e-12);
    CHECK_REL(FIG(a, "itl_sync_s"), 0.085 / 2.7731, 1e-12);
    CHECK_REL(FIG(a, "itl_sync_s"), 0.03065, 1e-3);   /* the 30.65 ms */
    CHECK_REL(FIG(a, "throughput_sync_tok_s"), 2.7731 / 0.085, 1e-12);
    CHECK_REL(a.draft_time_s, 0.010, 0);
    CHECK_REL(a.verify_time_s, 0.005, 0);
    CHECK_REL(FIG(a, "throughput_edge_only_tok_s"), 100, 1e-12);
    CHECK_REL(FIG(a, "throughput_cloud_only_tok_s"), 200, 1e-12);
    CHECK_STR(a.edge_source, "fixed");
    CHECK_STR(a.cloud_source, "fixed");
    CHECK(isnan(a.verify_time_datasheet_s));   /* no cards in this scenario */
    /* α = 1: every block commits γ+1. */
    s = base(1.0);
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(a.accepted_len_expected, 5, 1e-15);
}

/* q = 0.7599; E[tok] = 1.263846 + 2.069483 = 3.333333; E[cycle] =
 * 0.052638 + 0.045 = 0.097638 s; rate ≈ 34.14 tok/s. */
static void test_async_closed_form(void)
{
    scenario_t s = base(0.7);
    analytic_t a;
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(FIG(a, "throughput_async_tok_s"),
              async_ref(0.7, 4, 0.01, 0.04, 0.005), 1e-12);
    CHECK_REL(FIG(a, "throughput_async_tok_s"), 34.14, 1e-3);
    /* The async rate is not the sync formula. */
    CHECK(fabs(FIG(a, "throughput_async_tok_s") - FIG(a, "throughput_sync_tok_s")) > 1);
    for (int i = 1; i <= 9; i++) {
        s = base(i / 10.0);
        CHECK(compute(&s, &a) == 0);
        CHECK_REL(FIG(a, "throughput_async_tok_s"),
                  async_ref(i / 10.0, 4, 0.01, 0.04, 0.005), 1e-12);
    }
}

/* α = 0: one token per γd + rtt + v = 85 ms, sync and async alike.
 * α → 1: async 1/d = 100 tok/s (the edge never waits); sync (γ+1)/85 ms. */
static void test_async_limits(void)
{
    analytic_t a;
    scenario_t s = base(0);
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(FIG(a, "throughput_async_tok_s"), 1 / 0.085, 1e-12);
    CHECK_REL(FIG(a, "throughput_sync_tok_s"), 1 / 0.085, 1e-12);
    s = base(1e-9);
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(FIG(a, "throughput_async_tok_s"), 1 / 0.085, 1e-6);
    s = base(1);
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(FIG(a, "throughput_async_tok_s"), 100, 1e-12);
    CHECK_REL(FIG(a, "throughput_sync_tok_s"), 5 / 0.085, 1e-12);
    s = base(1 - 1e-9);
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(FIG(a, "throughput_async_tok_s"), 100, 1e-6);
}

/* Window 1: the edge waits for each verdict; a cycle of J blocks takes
 * J·85 ms, commits 1/(1−α) tokens: rate = (1−α^γ)/(1−α)/0.085
 * = 2.5330/0.085 = 29.80 tok/s at α = 0.7. At α = 1 the closed pipeline
 * holds one block: γ per 85 ms. */
static void test_async_window_stall(void)
{
    analytic_t a;
    scenario_t s = base(0.7);
    s.protocol.window = 1;
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(FIG(a, "throughput_async_tok_s"), (1 - pow(0.7, 4)) / 0.3 / 0.085, 1e-12);
    s = base(1);
    s.protocol.window = 1;
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(FIG(a, "throughput_async_tok_s"), 4 / 0.085, 1e-12);
    /* Window 2 at α = 1: 2 blocks per loop of 85 ms (85/2 > γd = 40 ms). */
    s.protocol.window = 2;
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(FIG(a, "throughput_async_tok_s"), 4 / 0.0425, 1e-12);
}

/* Cloud slower than the edge (v = 50 ms > γd = 40 ms), large window: block j
 * of a cycle is verified at γd + rtt/2 + j·v, so r_j = γd + rtt + j·v and
 * E[cycle] = γd + rtt + v/q = 0.08 + 0.05/0.7599; E[tok] = 1/(1−α). */
static void test_async_cloud_bound(void)
{
    analytic_t a;
    scenario_t s = base(0.7);
    s.protocol.window = 100;
    s.cloud.verify_time = dist_const(0.050);
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(FIG(a, "throughput_async_tok_s"),
              (1 / 0.3) / (0.08 + 0.05 / (1 - pow(0.7, 4))), 1e-9);
}

/* Links: uplink 64 kbit/s serialises a block of 4·4 + 64 = 80 B in 10 ms;
 * downlink 128 kbit/s a verdict of 64 + E·4 B in (64 + 4E)·8/128000 s.
 * Jitter of mean 2 ms adds 2 ms each way. */
static void test_sync_links_and_jitter(void)
{
    analytic_t a;
    scenario_t s = base(0.7);
    s.groups[0].network.uplink_bps = 64000;
    s.groups[0].network.downlink_bps = 128000;
    s.groups[0].network.jitter = dist_const(0.002);
    CHECK(compute(&s, &a) == 0);
    double E = 2.7731;
    CHECK_REL(FIG(a, "block_time_sync_s"),
              0.085 + 0.010 + (64 + 4 * E) * 8 / 128000 + 0.004, 1e-12);
}

/* Positional α = [0.9, 0.8, 0.5] (last repeats), γ = 4:
 *   E = 1 + 0.9 + 0.72 + 0.36 + 0.18 = 3.16.
 * Async: P(a=i) = 0.1, 0.18, 0.36, 0.18 (i < 4), q = 0.82,
 *   E[tok] = (1/0.82 − 1)·4 + (0.1 + 0.36 + 1.08 + 0.72)/0.82 = 3.634146,
 *   E[cycle] = 0.04/0.82 + 0.045 = 0.093780 -> 38.7516 tok/s. */
static void test_positional(void)
{
    analytic_t a;
    scenario_t s = base(0.5);
    set_acc(&s, "{model: positional, alphas: [0.9, 0.8, 0.5]}");
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(a.accepted_len_expected, 3.16, 1e-12);
    CHECK_REL(a.alpha_mean, (0.9 + 0.8 + 0.5 + 0.5) / 4, 1e-12);
    CHECK_REL(FIG(a, "throughput_async_tok_s"),
              ((1 / 0.82 - 1) * 4 + 2.26 / 0.82) / (0.04 / 0.82 + 0.045), 1e-12);
}

/* Beta(2, 1): density 2α, E[α^i] = 2/(i+2): E = 1 + 2/3 + 1/2 + 2/5 + 1/3
 * = 2.9. The async rate averaged over tenants, checked by a midpoint rule
 * on the closed form (200000 cells). */
static void test_beta(void)
{
    analytic_t a;
    scenario_t s = base(0.5);
    set_acc(&s, "{model: beta, a: 2, b: 1}");
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(a.accepted_len_expected, 2.9, 1e-12);
    CHECK_REL(a.alpha_mean, 2.0 / 3, 1e-12);
    CHECK_REL(FIG(a, "throughput_sync_tok_s"), 2.9 / 0.085, 1e-12);
    double ref = 0;
    int n = 200000;
    for (int i = 0; i < n; i++) {
        double x = (i + 0.5) / n;
        ref += async_ref(x, 4, 0.01, 0.04, 0.005) * 2 * x / n;
    }
    CHECK_REL(FIG(a, "throughput_async_tok_s"), ref, 1e-8);
}

/* markov, as sim/model/accept_markov.c draws it (state switches after every evaluated
 * draft). (1) α_good = α_bad: iid. (2) γ = 1: one evaluated draft per block,
 * so blocks see the per-draft stationary law π_good = 0.3/(0.1+0.3) = 0.75:
 * E = 1 + 0.75·0.9 + 0.25·0.3 = 1.75. (3) γ = 4, α_good = 1, α_bad = 0,
 * p_good_bad = 0.5, p_bad_good = 0.25: from good, P(a ≥ i) = 0.5^(i−1), so
 * E[a+1 | good] = 2.875; from bad, a = 0. Next block starts good: from bad
 * 0.25; from good 0.875·0.25 (ended on a rejection in bad) + 0.125·0.5
 * (all four good, last switch) = 0.28125. Block-start law: good 0.25/(0.71875
 * + 0.25) = 8/31, so E = 8/31·2.875 + 23/31 = 46/31 (the per-draft π = 1/3
 * would give 1.625). */
static void test_markov(void)
{
    analytic_t a, b;
    scenario_t s = base(0.7);
    CHECK(compute(&s, &b) == 0);
    set_acc(&s, "{model: markov, alpha_good: 0.7, alpha_bad: 0.7, p_good_bad: 0.2, "
                "p_bad_good: 0.1}");
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(a.accepted_len_expected, b.accepted_len_expected, 1e-12);
    CHECK_REL(FIG(a, "throughput_async_tok_s"), FIG(b, "throughput_async_tok_s"), 1e-9);

    s.protocol.gamma = 1;
    set_acc(&s, "{model: markov, alpha_good: 0.9, alpha_bad: 0.3, p_good_bad: 0.1, "
                "p_bad_good: 0.3}");
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(a.accepted_len_expected, 1.75, 1e-12);
    CHECK_REL(a.alpha_mean, 0.75 * 0.9 + 0.25 * 0.3, 1e-12);

    s.protocol.gamma = 4;
    set_acc(&s, "{model: markov, alpha_good: 1, alpha_bad: 0, p_good_bad: 0.5, "
                "p_bad_good: 0.25}");
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(a.accepted_len_expected, 46.0 / 31, 1e-12);
}

/* trace [4, 4, 1, 0, 7] at γ = 4 (7 capped to 4), replayed cyclically:
 * sync E = (5 + 5 + 2 + 1 + 5)/5 = 3.6. Async, cut after each rejection:
 * (4, 4, 4, then 1) commits 3·4 + 2 = 14 tokens by r_4 = 4·0.04 + 0.045 =
 * 0.205 s; (0) commits 1 by r_1 = 0.085: rate 15/0.29 = 51.724 tok/s. */
static void test_trace(void)
{
    analytic_t a;
    scenario_t s = base(0.7);
    int tr[5] = {4, 4, 1, 0, 7};
    err_t e = {0, ""};
    accept_cfg_fini(&acc);
    CHECK(accepttest_trace(&acc, tr, 5, &e) == 0);
    s.acceptance = acc;
    CHECK(compute(&s, &a) == 0);
    CHECK_REL(a.accepted_len_expected, 3.6, 1e-12);
    CHECK_REL(FIG(a, "throughput_async_tok_s"), 15 / 0.29, 1e-12);
    CHECK(isnan(a.alpha_mean));   /* a trace states no per-draft alpha */
    /* An empty trace is refused where it is configured. */
    accept_cfg_t empty;
    CHECK(accepttest_trace(&empty, tr, 0, &e) == -1 && e.code == ERR_INPUT);
}

/* ---- model path -------------------------------------------------------- */

static void tiny_cards(llm_card_t *m, hw_card_t *h)
{
    memset(m, 0, sizeof *m);
    snprintf(m->name, sizeof m->name, "tiny");
    m->layers = 2; m->hidden = 256; m->heads = 4; m->kv_heads = 2;
    m->ffn = 512; m->vocab = 1000; m->gated_mlp = 1;
    memset(h, 0, sizeof *h);
    snprintf(h->name, sizeof h->name, "made-up");
    h->mem_bw = 100e9; h->bw_eff = 0.5;
    h->flops[PREC_FP16] = 10e12; h->flops_eff = 0.5;
}

/* Draft on the model path at the mean prompt (100 tokens): the fp16
 * roofline computed by hand in test_service (decode at context 100 with
 * 0.1 ms overhead) is 1.5981088e-4 s. */
static void test_model_path_datasheet(void)
{
    analytic_t a;
    scenario_t s = base(0.7);
    tiny_cards(&group.edge.draft, &group.edge.device);
    group.edge.quant = PREC_FP16;
    group.edge.has_draft_time = 0;
    group.edge.overhead = 1e-4;
    group.workload.prompt_tokens = dist_const(100);
    CHECK(compute(&s, &a) == 0);
    CHECK_STR(a.edge_source, "datasheet");
    CHECK_REL(a.draft_time_s, 1.5981088e-4, 1e-12);
    CHECK_REL(a.draft_time_datasheet_s, 1.5981088e-4, 1e-12);
    CHECK_REL(a.draft_terms.total_s, 1.5981088e-4, 1e-12);
    CHECK_REL(FIG(a, "throughput_edge_only_tok_s"), 1 / 1.5981088e-4, 1e-12);
    CHECK_REL(a.context_tokens, 100, 0);
    /* Cloud on the model path too: verify = one job of γ+1 = 5 tokens. */
    tiny_cards(&s.cloud.target, &s.cloud.gpu);
    s.cloud.has_verify_time = 0;
    CHECK(compute(&s, &a) == 0);
    CHECK_STR(a.cloud_source, "datasheet");
    err_t e;
    service_t *sv = service_create(&s.cloud.gpu, &s.cloud.target, PREC_FP16, NULL, 0, &e);
    CHECK(sv != NULL);
    if (sv) {
        service_job_t v = {5, 100, 0}, one = {1, 100, 0};
        CHECK_REL(a.verify_time_s, service_iter_time(sv, &v, 1), 1e-15);
        CHECK_REL(FIG(a, "throughput_cloud_only_tok_s"),
                  1 / service_iter_time(sv, &one, 1), 1e-15);
    }
    service_free(sv);
    /* Broken cards on a path that needs them: an error. */
    s.cloud.target.heads = 3;
    CHECK(analytic_compute(&s, &a, &e) == -1 && e.code == ERR_INPUT);
}

/* A table with whole-token rows (written here from the law 1 ms + c·1e-7 s
 * at contexts 0 and 512) makes the draft time the table's: at context 100,
 * 1.01 ms + overhead; the datasheet figure stays beside it. */
static void test_model_path_table(void)
{
    llm_card_t m;
    hw_card_t h;
    tiny_cards(&m, &h);
    caltable_t t;
    memset(&t, 0, sizeof t);
    snprintf(t.command, sizeof t.command, "tests/unit/test_analytic (synthetic law)");
    snprintf(t.model, sizeof t.model, "tiny");
    snprintf(t.quant, sizeof t.quant, "fp16");
    caltable_row_t rows[2] = {
        {.op = CAL_TOKEN, .m = 1, .context = 0, .time_s = 1e-3},
        {.op = CAL_TOKEN, .m = 1, .context = 512, .time_s = 1e-3 + 512e-7},
    };
    t.rows = rows;
    t.nrows = 2;
    char path[64];
    FILE *f = check_tmp_open(path, sizeof path, "w");
    if (!f) return;
    CHECK(caltable_write(&t, f) == 0);
    CHECK(fclose(f) == 0);

    analytic_t a;
    scenario_t s = base(0.7);
    group.edge.draft = m;
    group.edge.device = h;
    group.edge.quant = PREC_FP16;
    group.edge.has_draft_time = 0;
    group.edge.overhead = 1e-4;
    snprintf(group.edge.calibration, sizeof group.edge.calibration, "%s", path);
    group.workload.prompt_tokens = dist_const(100);
    CHECK(compute(&s, &a) == 0);
    CHECK_STR(a.edge_source, "table");
    CHECK_REL(a.draft_time_s, 1e-3 + 100e-7 + 1e-4, 1e-12);
    CHECK_REL(a.draft_time_datasheet_s, 1.5981088e-4, 1e-12);
    /* Beyond the measured contexts the source says so. */
    group.workload.prompt_tokens = dist_const(1000);
    CHECK(compute(&s, &a) == 0);
    CHECK_STR(a.edge_source, "fitted");
    unlink(path);
}

/* The MVA against the finite-source queue solved from its stationary law:
 * with N customers, think rate l = 1/Z (the delay station is insensitive to
 * its distribution, so exponential may stand for any), service rate
 * m = 1/S: P(k at the server) ∝ N!/(N−k)! (l/m)^k, X = m·P(busy),
 * R = E[k]/X (Little). */
static void test_mva_hand(void)
{
    const double Z = 0.080, S = 0.011;
    for (int N = 1; N <= 6; N++) {
        double w = 1, sum = 0, busy = 0, Ek = 0;
        for (int k = 0; k <= N; k++) {
            if (k > 0) w *= (N - k + 1) * (S / Z);
            sum += w;
            if (k > 0) busy += w;
            Ek += k * w;
        }
        double X = busy / sum / S, R = Ek / sum / X, x, r;
        analytic_mva(N, Z, S, &x, &r);
        CHECK_REL(x, X, 1e-12);
        CHECK_REL(r, R, 1e-12);
    }
    double x, r;
    analytic_mva(1, Z, S, &x, &r);   /* alone: no wait */
    CHECK_REL(x, 1 / (Z + S), 1e-12);
    CHECK_REL(r, S, 1e-12);
}

/* analytic prints the MVA for sync tenants on one FCFS exponential server
 * (Z = γd + rtt = 80 ms, E from iid α = 0.7), and says why not otherwise. */
static void test_mva_scenario(void)
{
    scenario_t s = base(0.7);
    group.count = 3;
    s.ntenants = 3;
    s.cloud.batching.max_batch = 1;
    s.cloud.verify_time = (dist_t){.kind = DIST_EXPONENTIAL, .a = 0.005};
    analytic_t a;
    if (compute(&s, &a) != 0) {
        CHECK(!"compute");
        return;
    }
    double x, r, E = (1 - pow(0.7, 5)) / 0.3;
    analytic_mva(3, 0.080, 0.005, &x, &r);
    CHECK(a.mva_tenants == 3 && !a.mva_why[0]);
    CHECK_REL(a.mva_delay_s, 0.080, 1e-12);
    CHECK_REL(a.mva_throughput_tok_s, x * E, 1e-12);
    CHECK_REL(a.mva_itl_s, 3 / (x * E), 1e-12);
    CHECK_REL(a.mva_queue_delay_s, r - 0.005, 1e-12);
    CHECK_REL(a.mva_gpu_util, x * 0.005, 1e-12);
    s.cloud.batching.max_batch = 8;
    CHECK(compute(&s, &a) == 0 && a.mva_tenants == 0 && strstr(a.mva_why, "batching"));
    s.cloud.batching.max_batch = 1;
    s.cloud.verify_time = dist_const(0.005);
    CHECK(compute(&s, &a) == 0 && a.mva_tenants == 0 &&
          strstr(a.mva_why, "not exponential"));
    s.cloud.verify_time = (dist_t){.kind = DIST_EXPONENTIAL, .a = 0.005};
    s.protocol.proto = proto_find("async");
    CHECK(compute(&s, &a) == 0 && a.mva_tenants == 0 && !a.mva_why[0]);
    s.protocol.proto = proto_find("sync");
    group.count = 1;
    s.ntenants = 1;
    CHECK(compute(&s, &a) == 0 && a.mva_tenants == 0 && !a.mva_why[0]);
}

/* What analytic_print writes for a, into buf (NUL-terminated). 0, or -1. */
static int print_to(char *buf, size_t n, const analytic_t *a, int json)
{
    FILE *f = fmemopen(buf, n, "w");
    if (!f) return -1;
    int rc = analytic_print(f, a, json);
    return fclose(f) != 0 || rc != 0 ? -1 : 0;
}

static void test_print(void)
{
    analytic_t a;
    scenario_t s = base(0.7);
    CHECK(compute(&s, &a) == 0);
    char buf[8192];
    CHECK(print_to(buf, sizeof buf, &a, 1) == 0);
    CHECK(buf[0] == '{' && strchr(buf, '\n') == strrchr(buf, '\n'));
    CHECK(strstr(buf, "\"accepted_len_expected\": 2.7731") != NULL);
    CHECK(strstr(buf, "\"verify_time_datasheet_s\": null") != NULL);
    CHECK(strstr(buf, "\"throughput_async_tok_s\": ") != NULL);
    CHECK(strstr(buf, "nan") == NULL);
    CHECK(print_to(buf, sizeof buf, &a, 0) == 0);
    CHECK(strstr(buf, "block_time_sync_s:") != NULL);
    CHECK(strstr(buf, "edge_source:") != NULL);
}

/* The keys users' scripts read come in the order they always came: the
 * protocols' figures in registry order, sync's, async's, cloud-only's,
 * edge-only's, right after verify_time_datasheet_s (a new protocol's come
 * after these, so they keep their places). */
static void test_key_order(void)
{
    static const char *const keys[] = {
        "verify_time_datasheet_s:", "block_time_sync_s:", "itl_sync_s:",
        "throughput_sync_tok_s:", "throughput_async_tok_s:", "cloud_iter_time_s:",
        "throughput_cloud_only_tok_s:", "throughput_edge_only_tok_s:"};
    analytic_t a;
    scenario_t s = base(0.7);
    CHECK(compute(&s, &a) == 0);
    char buf[8192];
    CHECK(print_to(buf, sizeof buf, &a, 0) == 0);
    const char *at = buf;
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        const char *x = strstr(at, keys[k]);
        CHECK(x != NULL && x[-1] == '\n');
        if (!x) return;
        /* Adjacent: the next line is the next key. */
        if (k > 0) CHECK(x == strchr(at, '\n') + 1);
        at = x;
    }
}

/* Every registered protocol that gives a closed form: from one plain input
 * it gives a positive finite rate and at most PROTO_FIGS_MAX figures, and
 * analytic prints throughput_NAME_tok_s and each of its figures, every key
 * once. Walked, not counted: a new protocol is checked the same way, and
 * the walk fails when no protocol gives one. */
static void test_every_protocol(void)
{
    analytic_t a;
    scenario_t s = base(0.7);
    CHECK(compute(&s, &a) == 0);
    accept_law_t L;
    err_t e = {0, ""};
    CHECK(accept_cfg_law(&s.acceptance, 4, &L, &e) == 0);
    proto_form_in_t in = {
        .law = &L, .gamma = 4, .window = 2, .draft_s = 0.010, .verify_s = 0.005,
        .decode_s = 0.004, .cloud_draft_s = 0.002, .up_prop_s = 0.020, .down_prop_s = 0.020, .up_bps = 1e6,
        .down_bps = INFINITY, .bytes_per_token = 4, .overhead_bytes = 64};
    int forms = 0, figs = 0;
    const proto_ops_t *p;
    for (size_t i = 0; (p = proto_at(i)) != NULL; i++) {
        CHECK(proto_find(p->name) == p);   /* reachable by its name */
        if (!p->closed_form) continue;
        forms++;
        proto_form_t f = {0};
        CHECK(p->closed_form(&in, &f) == 0);
        CHECK(isfinite(f.tok_s) && f.tok_s > 0);
        CHECK(f.nfigs >= 0 && f.nfigs <= PROTO_FIGS_MAX);
        CHECK(f.cycle_s == 0 || (f.cycle_s >= in.verify_s && f.cycle_tokens > 0));
        char key[64];
        snprintf(key, sizeof key, "throughput_%s_tok_s", p->name);
        for (char *c = key; *c; c++)
            if (*c == '-') *c = '_';
        CHECK(isfinite(FIG(a, key)) && FIG(a, key) > 0);
        for (int k = 0; k < f.nfigs && k < PROTO_FIGS_MAX; k++) {
            CHECK(f.figs[k].key != NULL);
            if (f.figs[k].key) CHECK(!isnan(FIG(a, f.figs[k].key)));
        }
        figs += f.nfigs + 1;
    }
    accept_law_fini(&L);
    CHECK(forms >= 1 && a.nfigs == figs);
    for (int i = 0; i < a.nfigs; i++)
        for (int j = 0; j < i; j++) CHECK(strcmp(a.figs[i].key, a.figs[j].key) != 0);
    CHECK(isnan(FIG(a, "no_such_key")));
    CHECK(FIG(a, "draft_time_s") == a.draft_time_s);
}

int main(void)
{
    RUN(test_sync_closed_form);
    RUN(test_async_closed_form);
    RUN(test_async_limits);
    RUN(test_async_window_stall);
    RUN(test_async_cloud_bound);
    RUN(test_sync_links_and_jitter);
    RUN(test_positional);
    RUN(test_beta);
    RUN(test_markov);
    RUN(test_trace);
    RUN(test_model_path_datasheet);
    RUN(test_model_path_table);
    RUN(test_mva_hand);
    RUN(test_mva_scenario);
    RUN(test_print);
    RUN(test_key_order);
    RUN(test_every_protocol);
    accept_cfg_fini(&acc);
    return check_done();
}
