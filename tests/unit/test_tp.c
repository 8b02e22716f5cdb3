/* test_tp — tensor-parallel replicas and the energy and cost metrics.
 *
 * The 70B verify time at N = 1, 2, 4, 8 GPUs is recomputed here from the
 * roofline written out operator by operator (sim/model/service.c states the model;
 * the sums below do not call it): LLaMA-2-70B (80 layers, hidden 8192,
 * 64 heads, 8 kv_heads, head_dim 128, ffn 28672 gated, vocab 32000) on the
 * H200 card (4.8 TB/s x 0.8, 989.5 TFLOP/s x 0.7, fp32 67 TFLOP/s x 0.7 for
 * the element-wise kernels, NVLink 450 GB/s one way, 6 us per all-reduce
 * call + 1 us per ring step, a 6 us kernel floor, the smooth maximum at
 * p = 2), fp16. Then a simulated run with one tenant agrees
 * with `analytic`, and a deterministic run's energy and cost match a hand
 * count.
 */
#include "run/analytic.h"
#include "model/cards.h"
#include "check.h"
#include "run/roofline.h"
#include "config/scenario.h"
#include "model/service.h"
#include "run/sim.h"

/* A figure `specsim analytic` prints, by its key: the protocols' closed
 * forms give theirs (sim/entity/proto.h), so analytic_t has no field each. */
#define FIG(a, key) analytic_value(&(a), key)

#define B_H200 (4.8e12 * 0.8)
#define R_H200 (989.5e12 * 0.7)
#define V_H200 (67e12 * 0.7)
#define NVLINK 450e9
#define AR_LAT 6e-6
#define AR_STEP 1e-6
#define FLOOR 6e-6

static int load_cards(llm_card_t *m, hw_card_t *h)
{
    char p[512];
    err_t e = {0, ""};
    int rc = 0;
    if (cards_resolve_path("models/llm/llama-2-70b.yaml", p, sizeof p) != 0 ||
        cards_load_llm_file(p, m, &e) != 0)
        rc = -1;
    if (rc == 0 && (cards_resolve_path("models/hardware/h200.yaml", p, sizeof p) != 0 ||
                    cards_load_hw_file(p, h, &e) != 0))
        rc = -1;
    if (rc) printf("  cards: %s\n", e.msg);
    return rc;
}

/* One kernel of memory time a and compute time b: sqrt(a² + b²) (the card's
 * roofline_p 2), at least the 6 us floor. */
static double kern(double a, double b)
{
    return fmax(sqrt(a * a + b * b), FLOOR);
}

/* An n x k linear op over M tokens, fp16. */
static double lin(double m, double n, double k)
{
    return kern((2 * n * k + 2 * m * (n + k)) / B_H200, 2 * m * n * k / R_H200);
}

/* The element-wise kernels of one layer over q tokens on one GPU of n, fp16
 * activations: two RMSNorms (read + write 8192 values, 4 FLOPs each), RoPE
 * on the GPU's q and k heads ((64 + 8)·128 / n values, read + write, 3 FLOPs
 * each), SiLU·mul (read 2, write 1 of 28672 / n, 5 FLOPs), two residual
 * adds (read 2, write 1 of 8192, 1 FLOP). */
static double eltwise(double q, int n)
{
    double rope = 72.0 * 128 / n, f = 28672.0 / n;
    return 2 * kern(q * 4 * 8192 / B_H200, q * 4 * 8192 / V_H200) +
           kern(q * 4 * rope / B_H200, q * 3 * rope / V_H200) +
           kern(q * 6 * f / B_H200, q * 5 * f / V_H200) +
           2 * kern(q * 6 * 8192 / B_H200, q * 8192 / V_H200);
}

/* The two all-reduces of a layer: per call 6 us + 2(n-1) ring steps of 1 us
 * + 2(n-1)/n of q·8192·2 bytes over NVLink. */
static double allreduce(int n, double q)
{
    return n > 1 ? 2 * (2.0 * (n - 1) / n * q * 8192 * 2 / NVLINK + AR_LAT +
                        2.0 * (n - 1) * AR_STEP)
                 : 0;
}

/* One job of q new tokens over c cached, per GPU of n. */
static double by_hand_70b(int n, double q, double c, double overhead)
{
    double layer = lin(q, 10240.0 / n, 8192)       /* qkv: (64 + 2·8)·128 split by columns */
                   + lin(q, 8192, 8192.0 / n)      /* o: split by rows */
                   + lin(q, 57344.0 / n, 8192)     /* gate_up: 2·28672 by columns */
                   + lin(q, 8192, 28672.0 / n);    /* down: by rows */
    /* Causal: the q new tokens attend to c cached and half of themselves. */
    double attn = kern(2 * (c + q) * (8.0 / n) * 128 * 2 / B_H200,
                       4 * q * (c + q / 2) * (8192.0 / n) / R_H200);
    double lm = lin(q, 32000.0 / n, 8192);
    /* Sampling: one fp32 logit row of 32000 per token, 5 FLOPs a logit. */
    double sample = kern(q * 4 * 32000 / B_H200, q * 5 * 32000 / V_H200);
    return overhead + 80 * (layer + attn + eltwise(q, n) + allreduce(n, q)) + lm + sample;
}

static void test_tp_70b_verify_by_hand(void)
{
    llm_card_t m;
    hw_card_t h;
    CHECK(load_cards(&m, &h) == 0);
    CHECK_REL(h.interconnect_bw, NVLINK, 1e-12);
    CHECK_REL(h.interconnect_latency, AR_LAT, 1e-12);
    CHECK_REL(h.interconnect_step_latency, AR_STEP, 1e-12);
    CHECK_REL(h.kernel_floor, FLOOR, 1e-12);
    CHECK(h.roofline_p == 2);
    static const int ns[] = {1, 2, 4, 8};
    double prev = INFINITY;
    for (int i = 0; i < 4; i++) {
        err_t e = {0, ""};
        service_t *sv = service_create_tp(&h, &m, PREC_FP16, NULL, 0.5e-3, ns[i], &e);
        CHECK(sv != NULL);
        if (!sv) {
            printf("  N=%d: %s\n", ns[i], e.msg);
            continue;
        }
        service_job_t job = {5, 512, 0};   /* one verify block, gamma 4 */
        double t = service_iter_time(sv, &job, 1);
        CHECK_REL(t, by_hand_70b(ns[i], 5, 512, 0.5e-3), 1e-12);
        CHECK(t < prev);   /* more GPUs, less time at this size */
        prev = t;
        service_terms_t terms;
        service_terms(sv, &job, 1, &terms);
        double ar = 80 * allreduce(ns[i], 5);
        CHECK_REL(terms.allreduce_s + 1e-300, ar + 1e-300, 1e-12);
        /* The replica's footprint does not depend on the split: ~138 GB of
         * fp16 weights, 80·2·8·128·2 B of KV per token. */
        CHECK_REL(service_weight_bytes(sv), 2.0 * (80 * (10240.0 * 8192 + 8192.0 * 8192 +
                                                        57344.0 * 8192 + 8192.0 * 28672) +
                                                  2 * 32000.0 * 8192), 1e-12);
        CHECK_REL(service_kv_bytes_per_token(sv), 80 * 2 * 8 * 128 * 2.0, 1e-12);
        CHECK(service_tensor_parallel(sv) == ns[i]);
        service_free(sv);
    }
    /* N = 1 is the single-GPU model exactly. */
    err_t e = {0, ""};
    service_t *a = service_create(&h, &m, PREC_FP16, NULL, 0.5e-3, &e);
    service_t *b = service_create_tp(&h, &m, PREC_FP16, NULL, 0.5e-3, 1, &e);
    CHECK(a && b);
    if (a && b) {
        service_job_t jobs[3] = {{5, 100, 0}, {1, 3000, 0}, {200, 0, 0}};
        CHECK(service_iter_time(a, jobs, 3) == service_iter_time(b, jobs, 3));
    }
    service_free(a);
    service_free(b);
}

static void test_tp_refusals(void)
{
    llm_card_t m;
    hw_card_t h;
    CHECK(load_cards(&m, &h) == 0);
    err_t e = {0, ""};
    CHECK(service_create_tp(&h, &m, PREC_FP16, NULL, 0, 3, &e) == NULL);
    CHECK(e.code == ERR_INPUT && strstr(e.msg, "heads (64)") != NULL);
    CHECK(service_create_tp(&h, &m, PREC_FP16, NULL, 0, 16, &e) == NULL);
    CHECK(strstr(e.msg, "kv_heads (8)") != NULL);
    CHECK(service_create_tp(&h, &m, PREC_FP16, NULL, 0, 0, &e) == NULL);
    CHECK(service_create_tp(&h, &m, PREC_FP16, "x.yaml", 0, 2, &e) == NULL);
    CHECK(strstr(e.msg, "calibration") != NULL);
    hw_card_t no_link = h;
    no_link.interconnect_bw = 0;
    CHECK(service_create_tp(&no_link, &m, PREC_FP16, NULL, 0, 2, &e) == NULL);
    CHECK(strstr(e.msg, "interconnect_bw") != NULL);
    service_t *one = service_create_tp(&no_link, &m, PREC_FP16, NULL, 0, 1, &e);
    CHECK(one != NULL);   /* one GPU needs no interconnect */
    service_free(one);

    /* The loader names the key and its place. */
    scenario_t s;
    err_t le = {0, ""};
    const char *y = "cloud: {target: models/llm/llama-2-70b.yaml, tensor_parallel: 3}\n";
    CHECK(scenario_load_string("t.yaml", y, NULL, 0, &s, &le) == -1);
    CHECK(strstr(le.msg, "t.yaml:1:") != NULL && strstr(le.msg, "cloud.tensor_parallel") != NULL);
    /* 70B does not fit one 80 GB card; it fits two. */
    const char *y2 = "cloud: {gpu: models/hardware/h100-sxm.yaml, "
                     "target: models/llm/llama-2-70b.yaml}\n";
    CHECK(scenario_load_string("t.yaml", y2, NULL, 0, &s, &le) == -1);
    CHECK(strstr(le.msg, "do not fit") != NULL);
    const char *y3 = "cloud: {gpu: models/hardware/h100-sxm.yaml, "
                     "target: models/llm/llama-2-70b.yaml, tensor_parallel: 2}\n";
    int rc = scenario_load_string("t.yaml", y3, NULL, 0, &s, &le);
    CHECK(rc == 0);
    if (rc == 0) scenario_fini(&s);
    else printf("  %s\n", le.msg);
}

/* One sync tenant, every draft accepted, fixed draft time and no network
 * serialisation: a block is gamma·d + rtt + v and commits gamma + 1 tokens,
 * so the simulated ITL is `analytic`'s itl_sync_s when the verify times
 * agree (the context grows by ~100 tokens over the run: < 1e-4 of v). */
static void test_tp_sim_matches_analytic(void)
{
    static const int ns[] = {2, 8};
    for (int i = 0; i < 2; i++) {
        char y[1024];
        snprintf(y, sizeof y,
                 "seed: 3\nduration: 3s\nwarmup: 0.5s\n"
                 "protocol: {mode: sync, gamma: 4}\n"
                 "acceptance: {model: iid, alpha: 1}\n"
                 "tenants:\n  count: 1\n"
                 "  edge: {draft_time: 10ms, prefill_time: 0s}\n"
                 "  network: {rtt: 40ms, bytes_per_token: 0, overhead_bytes: 0}\n"
                 /* One request the whole run (never done in 3 s), small
                  * enough for one replica's KV cache (32.9 GB at N = 2). */
                 "  workload: {prompt_tokens: 512, output_tokens: 100000}\n"
                 "cloud:\n  target: models/llm/llama-2-70b.yaml\n"
                 "  tensor_parallel: %d\n"
                 "  batching: {policy: continuous, max_batch: 1}\n", ns[i]);
        scenario_t s;
        err_t e = {0, ""};
        int rc = scenario_load_string("t.yaml", y, NULL, 0, &s, &e);
        if (rc) printf("  %s\n", e.msg);
        CHECK(rc == 0);
        if (rc) continue;
        analytic_t a;
        CHECK(analytic_compute(&s, &a, &e) == 0);
        CHECK(a.tensor_parallel == ns[i]);
        CHECK_REL(a.verify_time_s, by_hand_70b(ns[i], 5, 512, 0.5e-3), 1e-12);
        /* `specsim roofline` draws the same replica: its first row (one
         * block of 5 tokens over 512) is the hand count too. */
        FILE *f = tmpfile();
        CHECK(f != NULL);
        if (f && roofline_curve(f, &s, 1, 512, 1, &e) == 0) {
            int b = 0, mm = 0, ctx = 0;
            double t = 0;
            rewind(f);
            CHECK(fscanf(f, "%*[^\n]\n%d,%d,%d,%lf", &b, &mm, &ctx, &t) == 4);
            CHECK(b == 1 && mm == 5 && ctx == 512);
            CHECK_REL(t, by_hand_70b(ns[i], 5, 512, 0.5e-3), 1e-9);
        } else {
            printf("  roofline: %s\n", e.msg);
            CHECK(0);
        }
        if (f) fclose(f);
        metrics_summary_t ms;
        CHECK(sim_run(&s, NULL, &ms, &e) == 0);
        CHECK_REL(ms.value[METRIC_ITL_MEAN], FIG(a, "itl_sync_s"), 1e-3);
        CHECK_REL(ms.value[METRIC_ITL_MEAN], (4 * 10e-3 + 40e-3 + a.verify_time_s) / 5, 1e-3);
        scenario_fini(&s);
    }
}

/* Energy and money by hand. One sync tenant, all drafts accepted, draft
 * 10 ms, verify 5 ms fixed, rtt 40 ms, no serialisation: a block lasts
 * 4·10 + 40 + 5 = 85 ms and commits 5 tokens. Edge (5 W busy): 40 ms of
 * drafting per block -> 5·0.040/5 = 0.04 J/tok. GPU (400 W busy, 100 W
 * idle, 2 GPUs): (400·0.005 + 100·0.080)·2/5 = 4 J/tok. Money: 2 GPUs at
 * $2/h for 0.085/5 s per token -> 2·2/3600·0.017·1e6 = 18.888… USD/Mtok.
 * The measured window cuts at most one block: tolerance 3e-3. */
static void test_energy_and_cost_by_hand(void)
{
    const char *y =
        "seed: 1\nduration: 100s\nwarmup: 1s\n"
        "protocol: {mode: sync, gamma: 4}\n"
        "acceptance: {model: iid, alpha: 1}\n"
        "tenants:\n  count: 1\n"
        "  edge:\n    draft_time: 10ms\n    prefill_time: 0s\n"
        "    device: {base: models/hardware/snapdragon-8-gen-3.yaml, power_w: 5}\n"
        "  network: {rtt: 40ms, bytes_per_token: 0, overhead_bytes: 0}\n"
        "  workload: {prompt_tokens: 1, output_tokens: 100000000}\n"
        "cloud:\n  verify_time: 5ms\n  tensor_parallel: 2\n  gpu_hour_usd: 2\n"
        "  gpu: {base: models/hardware/h200.yaml, power_w: 400, idle_power_w: 100}\n";
    scenario_t s;
    err_t e = {0, ""};
    int rc = scenario_load_string("t.yaml", y, NULL, 0, &s, &e);
    if (rc) printf("  %s\n", e.msg);
    CHECK(rc == 0);
    if (rc) return;
    metrics_summary_t m;
    CHECK(sim_run(&s, NULL, &m, &e) == 0);
    CHECK_REL(m.value[METRIC_THROUGHPUT], 5 / 0.085, 3e-3);
    CHECK_REL(m.value[METRIC_EDGE_J_PER_TOK], 0.04, 3e-3);
    CHECK_REL(m.value[METRIC_GPU_J_PER_TOK], 4.0, 3e-3);
    CHECK_REL(m.value[METRIC_USD_PER_MTOK], 2.0 * 2 / 3600 * 0.017 * 1e6, 3e-3);
    scenario_fini(&s);

    /* No price: NaN; no GPU power: NaN; no cloud at all: no GPU energy. */
    const char *y2 = "duration: 20s\nwarmup: 1s\n"
                     "cloud: {gpu: {base: models/hardware/h200.yaml, power_w: 0}}\n";
    rc = scenario_load_string("t.yaml", y2, NULL, 0, &s, &e);
    CHECK(rc == 0);
    if (rc) return;
    CHECK(sim_run(&s, NULL, &m, &e) == 0);
    CHECK(isnan(m.value[METRIC_USD_PER_MTOK]));
    CHECK(isnan(m.value[METRIC_GPU_J_PER_TOK]));
    CHECK(m.value[METRIC_EDGE_J_PER_TOK] > 0);
    scenario_fini(&s);
    const char *y3 = "duration: 20s\nwarmup: 1s\nprotocol: {mode: edge-only}\n";
    rc = scenario_load_string("t.yaml", y3, NULL, 0, &s, &e);
    CHECK(rc == 0);
    if (rc) return;
    CHECK(sim_run(&s, NULL, &m, &e) == 0);
    CHECK(m.value[METRIC_GPU_J_PER_TOK] == 0);
    scenario_fini(&s);
}

int main(void)
{
    RUN(test_tp_70b_verify_by_hand);
    RUN(test_tp_refusals);
    RUN(test_tp_sim_matches_analytic);
    RUN(test_energy_and_cost_by_hand);
    return check_done();
}
