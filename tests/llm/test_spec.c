/* Speculative decoding (kernels/llm/spec.h, specloop.h, tforce.h):
 *   - the rules on hand-made logits and distributions: greedy counts by
 *     hand; the sampling rule's committed token has exactly the target's
 *     law (Pearson χ² against p, the test's power against the draft's law
 *     stated) and its acceptance rate is Σ min(p, q);
 *   - real speculation on tiny random models (tests/llm/ggufw.h): greedy
 *     text equal to the target's own, token for token, for γ 1..8, sync
 *     and async, 1..3 tenants and three batchings; sampled text whose
 *     second token has the target's law (χ² against the exact law, power
 *     stated);
 *   - the teacher-forced acceptance stream (tforce.h) gives exactly the
 *     blocks a real async run verifies.
 * The real model: tests/cli/llm_spec.sh. */
#include <gsl/gsl_cdf.h>
#include <gsl/gsl_rng.h>
#include <stdint.h>

#include "accstat.h"
#include "check.h"
#include "gemv.h"
#include "ggufw.h"
#include "spec.h"
#include "specloop.h"
#include "tforce.h"

static char dir[] = "/tmp/test_spec.XXXXXX";
static char path[512];
static const tiny_spec_t SPEC = {2, 64, 4, 2, 96, 300, 0.3f, 11, 1};

/* ---- rules --------------------------------------------------------------- */

static void test_argmax(void)
{
    const float a[5] = {1, 3, 3, -2, 0}, b[3] = {NAN, -1, -5};
    CHECK(spec_argmax(a, 5) == 1);
    CHECK(spec_argmax(b, 3) == 1);
}

static void test_greedy_verify(void)
{
    /* Rows' argmaxes: 2, 4, 1, 0. Drafts 2, 4, 3: two accepted, the
     * correction is row 2's argmax 1. Drafts 2, 4, 1: all three, bonus 0. */
    const float lg[4][5] = {{0, 1, 5, 2, 0}, {0, 0, 0, 0, 9}, {1, 7, 0, 3, 0}, {8, 0, 0, 0, 1}};
    const int32_t d1[3] = {2, 4, 3}, d2[3] = {2, 4, 1}, d3[3] = {0, 4, 1};
    int32_t next;
    CHECK(spec_verify_greedy(&lg[0][0], 5, d1, 3, &next) == 2 && next == 1);
    CHECK(spec_verify_greedy(&lg[0][0], 5, d2, 3, &next) == 3 && next == 0);
    CHECK(spec_verify_greedy(&lg[0][0], 5, d3, 3, &next) == 0 && next == 2);
}

/* Pearson's χ² of counts against probabilities over k bins, and the power
 * of the same test (level 1e-4) against the law `alt` for n draws, by
 * Patnaik's approximation of the noncentral χ²: χ²'(df, λ) ≈ c·χ²(ν),
 * c = (df + 2λ)/(df + λ), ν = (df + λ)²/(df + 2λ). */
static double chi2_p(const long *cnt, const double *p, int k, long n)
{
    double chi = 0;
    for (int i = 0; i < k; i++) chi += (cnt[i] - n * p[i]) * (cnt[i] - n * p[i]) / (n * p[i]);
    return gsl_cdf_chisq_Q(chi, k - 1);
}

static double power_against(const double *p, const double *alt, int k, long n)
{
    double lam = 0, df = k - 1;
    for (int i = 0; i < k; i++) lam += n * (alt[i] - p[i]) * (alt[i] - p[i]) / p[i];
    double crit = gsl_cdf_chisq_Qinv(1e-4, df), c = (df + 2 * lam) / (df + lam);
    double nu = (df + lam) * (df + lam) / (df + 2 * lam);
    return gsl_cdf_chisq_Q(crit / c, nu);
}

static void test_sample_rule(void)
{
    /* γ = 2 with fixed target rows p0, p1, p2 and draft rows q0, q1: the
     * committed first token must follow p0 exactly. */
    const float p[3][6] = {{.30f, .25f, .20f, .15f, .07f, .03f}, {.1f, .1f, .1f, .1f, .1f, .5f},
                           {.5f, .1f, .1f, .1f, .1f, .1f}};
    const float q[2][6] = {{.05f, .10f, .15f, .20f, .25f, .25f}, {.2f, .2f, .2f, .2f, .1f, .1f}};
    const long N = 200000;
    long cnt[6] = {0}, acc1 = 0;
    float resid[6];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, 42);
    double cq0[6], cq1[6];
    for (int i = 0; i < 6; i++) {
        cq0[i] = (i ? cq0[i - 1] : 0) + q[0][i];
        cq1[i] = (i ? cq1[i - 1] : 0) + q[1][i];
    }
    for (long t = 0; t < N; t++) {
        int32_t d[2], next;
        double u = gsl_rng_uniform(r) * cq0[5], v = gsl_rng_uniform(r) * cq1[5];
        for (d[0] = 0; d[0] < 5 && u >= cq0[d[0]]; d[0]++) {}
        for (d[1] = 0; d[1] < 5 && v >= cq1[d[1]]; d[1]++) {}
        int a = spec_verify_sample(&p[0][0], &q[0][0], 6, d, 2, r, resid, &next);
        cnt[a > 0 ? d[0] : next]++;
        acc1 += a > 0;
    }
    gsl_rng_free(r);
    double pd[6], qd[6], tv = 0;
    for (int i = 0; i < 6; i++) {
        pd[i] = p[0][i];
        qd[i] = q[0][i];
        tv += pd[i] < qd[i] ? pd[i] : qd[i];
    }
    double pv = chi2_p(cnt, pd, 6, N), pow = power_against(pd, qd, 6, N);
    printf("  first token vs p: chi2 p-value %.3f; power against the draft's law %.6f\n", pv, pow);
    CHECK(pv > 1e-4);
    CHECK(pow > 0.999);
    /* P(first draft accepted) = Σ min(p, q), to 5 binomial σ. */
    CHECK_ABS((double)acc1 / N, tv, 5 * sqrt(tv * (1 - tv) / N));
}

/* ---- on tiny models --------------------------------------------------------- */

static llm_model_t *load(int weights, int layers)
{
    err_t err = {0, ""};
    gguf_t *g = gguf_open(path, &err);
    llm_opts_t o = {weights, layers, GEMV_W4_EXACT};
    llm_model_t *m = g ? llm_load(g, &o, &err) : NULL;
    if (!m) printf("  %s\n", err.msg);
    gguf_close(g);
    return m;
}

static const int32_t P0[5] = {3, 14, 159, 26, 53}, P1[3] = {58, 97, 93}, P2[7] = {238, 46, 26,
                                                                                   43, 38, 32, 79};
static const int32_t *const PR[3] = {P0, P1, P2};
static const int PL[3] = {5, 3, 7};

static void test_greedy_lossless(void)
{
    llm_model_t *t = load(LLM_FP16, 0), *d = load(LLM_W4A16, 1);
    err_t err = {0, ""};
    llm_run_t *r = llm_run_create(2, &err);
    CHECK(t && d && r);
    if (!t || !d || !r) return;
    const int N = 40;
    int32_t ref[3][40];
    for (int i = 0; i < 3; i++)
        CHECK(specloop_generate(t, r, PR[i], PL[i], N, 0.0f, NULL, ref[i], &err) == 0);
    long bad = 0, runs = 0, acc = 0, blocks = 0, full = 0;
    for (int g = 1; g <= 8; g++)
        for (int mode = 0; mode < 2; mode++)
            for (int nt = 1; nt <= 3; nt++)
                for (int b = 0; b < 3; b++) {
                    specloop_cfg_t c = {mode, g, 3, b == 2 ? 1 : 0, b == 1, 0.0f,
                                        (uint64_t)(g * 100 + nt), N};
                    specloop_out_t out[3];
                    if (specloop_run(&c, t, r, d, r, nt, PR, PL, out, &err) != 0) {
                        printf("  %s\n", err.msg);
                        bad++;
                        continue;
                    }
                    for (int i = 0; i < nt; i++) {
                        bad += out[i].n != N || memcmp(out[i].tokens, ref[i], sizeof ref[i]);
                        for (int k = 0; k < out[i].nblocks; k++) {
                            acc += out[i].accepted[k];
                            full += out[i].accepted[k] == g;
                        }
                        blocks += out[i].nblocks;
                        specloop_out_free(&out[i]);
                    }
                    runs++;
                }
    printf("  %ld runs, %ld blocks (%ld accepted whole), %ld drafts accepted, %ld texts differ\n",
           runs, blocks, full, acc, bad);
    CHECK(bad == 0);
    /* Both paths were taken: rejections and blocks accepted whole. */
    CHECK(full > 0 && full < blocks);
    llm_run_free(r);
    llm_free(t);
    llm_free(d);
}

/* The blocks of a real async run equal the block cut of the teacher-forced
 * stream (those whose drafts all lie inside the text). */
static void test_tforce_is_async(void)
{
    llm_model_t *t = load(LLM_FP16, 0), *d = load(LLM_W4A16, 1);
    err_t err = {0, ""};
    llm_run_t *r = llm_run_create(1, &err);
    CHECK(t && d && r);
    if (!t || !d || !r) return;
    const int N = 60;
    tforce_text_t tx = {P2, PL[2], NULL, NULL, 0};
    CHECK(tforce_generate(t, r, &tx, 1, N, 0.0f, 1, -1, 1, &err) == 0);
    uint8_t oc[60];
    CHECK(tx.n == N && tforce_outcomes(d, r, &tx, 0, 0.0f, 1, oc, &err) == 0);
    for (int g = 1; g <= 6; g++) {
        specloop_cfg_t c = {SPECLOOP_ASYNC, g, 2, 0, 0, 0.0f, 1, N};
        specloop_out_t out;
        CHECK(specloop_run(&c, t, r, d, r, 1, &PR[2], &PL[2], &out, &err) == 0);
        CHECK(memcmp(out.tokens, tx.tok, N * sizeof(int32_t)) == 0);
        int at = 0, k = 0, bad = 0;
        for (; k < out.nblocks && at + g <= N - 1; k++) {
            int a = 0;
            while (a < g && oc[at + a]) a++;
            bad += a != out.accepted[k];
            at += a + (a < g);
        }
        if (bad) printf("  gamma %d: %d of %d blocks differ\n", g, bad, k);
        CHECK(bad == 0 && k > 3);
        specloop_out_free(&out);
    }
    tforce_text_free(&tx);
    llm_run_free(r);
    llm_free(t);
    llm_free(d);
}

/* Sampling at temperature T: token 1 of 1,500 tenants with one prompt (each
 * with its own streams) against its exact law Σ_t0 p(t0)·p(t1 | t0). */
static void test_sampled_lossless(void)
{
    const float T = 1.0f;
    const int NT = 3000, V = SPEC.vocab;
    llm_model_t *t = load(LLM_FP16, 0), *d = load(LLM_W4A16, 1);
    err_t err = {0, ""};
    llm_run_t *r = llm_run_create(2, &err);
    CHECK(t && d && r);
    if (!t || !d || !r) return;
    double *law = calloc((size_t)V, sizeof *law), *dlaw = calloc((size_t)V, sizeof *dlaw);
    float *lg = malloc((size_t)V * sizeof *lg), *p0 = malloc((size_t)V * sizeof *p0);
    float *p1 = malloc((size_t)V * sizeof *p1), *lg1 = malloc((size_t)V * sizeof *lg1);
    llm_kv_t *kv = llm_kv_create(t, 16, &err), *dkv = llm_kv_create(d, 16, &err);
    llm_span_t sp = {kv, P0, PL[0], PL[0] - 1};
    CHECK(llm_forward(r, t, &sp, 1, lg, &err) == 0);
    spec_softmax(lg, V, T, p0);
    for (int32_t x = 0; x < V; x++) {
        if (p0[x] < 1e-7f) continue;
        llm_kv_truncate(kv, PL[0]);
        llm_span_t s1 = {kv, &x, 1, 0};
        CHECK(llm_forward(r, t, &s1, 1, lg1, &err) == 0);
        spec_softmax(lg1, V, T, p1);
        for (int y = 0; y < V; y++) law[y] += (double)p0[x] * p1[y];
        /* The draft's own law of token 1 after the target's token 0: what
         * a rule that always accepted would give. */
        llm_kv_truncate(dkv, 0);
        int32_t seq[6];
        memcpy(seq, P0, sizeof P0);
        seq[5] = x;
        llm_span_t s2 = {dkv, seq, 6, 5};
        CHECK(llm_forward(r, d, &s2, 1, lg1, &err) == 0);
        spec_softmax(lg1, V, T, p1);
        for (int y = 0; y < V; y++) dlaw[y] += (double)p0[x] * p1[y];
    }
    const int32_t **pr = malloc((size_t)NT * sizeof *pr);
    int *pl = malloc((size_t)NT * sizeof *pl);
    specloop_out_t *out = calloc((size_t)NT, sizeof *out);
    for (int i = 0; i < NT; i++) {
        pr[i] = P0;
        pl[i] = PL[0];
    }
    specloop_cfg_t c = {SPECLOOP_SYNC, 3, 1, 0, 0, T, 5, 3};
    CHECK(specloop_run(&c, t, r, d, r, NT, pr, pl, out, &err) == 0);
    /* Bins: tokens expected at least 8 times, the rest pooled. */
    long cnt[301] = {0};
    double pb[301] = {0}, ab[301] = {0};
    int map[300], nb = 0;
    for (int y = 0; y < V; y++) map[y] = law[y] * NT >= 8 ? nb++ : -1;
    for (int y = 0; y < V; y++) {
        int b = map[y] >= 0 ? map[y] : nb;
        pb[b] += law[y];
        ab[b] += dlaw[y];
    }
    for (int i = 0; i < NT; i++) {
        int y = out[i].tokens[1], b = map[y] >= 0 ? map[y] : nb;
        cnt[b]++;
        specloop_out_free(&out[i]);
    }
    int k = pb[nb] > 0 ? nb + 1 : nb;
    double pv = chi2_p(cnt, pb, k, NT), pow = power_against(pb, ab, k, NT);
    printf("  token 1 of %d sampled texts, %d bins: chi2 p-value %.3f; power against the "
           "draft's law %.4f\n", NT, k, pv, pow);
    CHECK(k >= 3 && pv > 1e-4);
    CHECK(pow > 0.99);
    free(out);
    free(pr);
    free(pl);
    free(law);
    free(dlaw);
    free(lg);
    free(lg1);
    free(p0);
    free(p1);
    llm_kv_free(kv);
    llm_kv_free(dkv);
    llm_run_free(r);
    llm_free(t);
    llm_free(d);
}

static void test_accstat_by_hand(void)
{
    /* Stream 110 1110 0 1111: one text. */
    const uint8_t o[12] = {1, 1, 0, 1, 1, 1, 0, 0, 1, 1, 1, 1};
    accstat_stream_t st = {o, 12, NULL};
    accstat_t s;
    accstat_compute(&st, 1, &s);
    CHECK(s.outcomes == 12 && s.accepted == 9);
    /* γ = 4: 110 | 1110 | 0 | 1111 → a = 2, 3, 0, 4. */
    CHECK(s.counts[4][2] == 1 && s.counts[4][3] == 1 && s.counts[4][0] == 1 && s.counts[4][4] == 1);
    CHECK(accstat_blocks(&s, 4) == 4);
    /* γ = 2: 11 | 0 | 11 | 10 | 0 | 11 | 11 → a = 2, 0, 2, 1, 0, 2, 2. */
    CHECK(s.counts[2][2] == 4 && s.counts[2][1] == 1 && s.counts[2][0] == 2);
    /* Position 1 at γ = 4: reached 4, kept 3; position 4: reached 2, kept 1. */
    CHECK_ABS(accstat_position(&s, 4, 1), 0.75, 1e-12);
    CHECK_ABS(accstat_position(&s, 4, 4), 0.5, 1e-12);
    /* Runs of 1s: 2, 3, 4; of 0s: 1, 2. */
    CHECK(s.run1[2] == 1 && s.run1[3] == 1 && s.run1[4] == 1 && s.run0[1] == 1 && s.run0[2] == 1);
}

int main(void)
{
    if (tiny_dir_model(dir, path, sizeof path, &SPEC) != 0) return 1;
    RUN(test_argmax);
    RUN(test_greedy_verify);
    RUN(test_sample_rule);
    RUN(test_accstat_by_hand);
    RUN(test_greedy_lossless);
    RUN(test_tforce_is_async);
    RUN(test_sampled_lossless);
    if (tiny_dir_remove(dir) != 0) return 1;
    return check_done();
}
