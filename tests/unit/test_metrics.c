/* test_metrics — metric names, the replication summary and the histogram.
 *
 * Histogram quantiles are checked against the exact order statistic of the
 * same samples under the same definition (smallest x with weight(<= x) >=
 * q·total), computed here by sorting. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <stdlib.h>

#include "check.h"
#include "stat/metrics.h"
#include "stat/tally.h"

/* ---- names ---- */

static void test_names_match_design(void)
{
    /* The documented names (docs/metrics.md), typed by hand, in their order. */
    static const char *design[] = {
        "itl_mean_s", "itl_p50_s", "itl_p95_s", "itl_p99_s", "commit_gap_p99_s",
        "ttft_mean_s", "ttft_p99_s", "e2e_mean_s", "tokens_per_s_tenant",
        "throughput_tok_s", "acceptance_rate", "accepted_len_mean",
        "draft_waste_frac", "gpu_util", "gpu_waste_frac", "batch_mean",
        "batch_p99", "queue_delay_mean_s", "queue_delay_p99_s",
        "edge_stall_frac", "net_up_bytes_per_tok", "net_down_bytes_per_tok",
        "gpu_s_per_ktok", "requests_done", "events", "wall_s", "events_per_s",
        "slo_attainment", "ttft_slo_frac", "tpot_slo_frac", "goodput_req_s",
        "goodput_tok_s", "fairness_jain", "tokens_per_s_tenant_p5",
        "admission_wait_mean_s", "admission_wait_p99_s", "kv_util_mean",
        "gpu_roofline_util", "edge_j_per_tok", "gpu_j_per_tok", "usd_per_mtok",
        "edge_j_per_req", "battery_pct_per_h", "edge_throttled_frac",
        "edge_draft_speed_mean", "fallback_frac", "local_tok_frac", "link_stall_s",
        "itl_outage_mean_s", "itl_outage_p99_s", "prefix_hit_rate",
        "reprefill_tok_per_turn"};
    int n = (int)(sizeof design / sizeof design[0]);
    CHECK(METRIC_COUNT == n);
    for (int i = 0; i < n; i++) {
        CHECK(metric_find(design[i]) == i);
        CHECK_STR(metric_name(i), design[i]);
        CHECK(metric_desc(i) != NULL && strlen(metric_desc(i)) > 0);
    }
    CHECK(metric_find("itl_mean") == -1);
    CHECK(metric_find("") == -1);
    CHECK(metric_find(NULL) == -1);
    int timing = 0;
    for (int i = 0; i < METRIC_COUNT; i++) timing += metric_is_timing(i);
    CHECK(timing == 2);
    CHECK(metric_is_timing(metric_find("wall_s")));
    CHECK(metric_is_timing(metric_find("events_per_s")));
    CHECK(!metric_is_timing(metric_find("events")));
}

/* ---- summary ---- */

static void test_summarize_t_interval(void)
{
    metrics_rep_t reps[4];
    for (int r = 0; r < 4; r++)
        for (int m = 0; m < METRIC_COUNT; m++) reps[r].v[m] = 42.0;
    /* metric 0: 1,2,3,4. mean 2.5; squared deviations 2.25+0.25+0.25+2.25
     * = 5, sd = sqrt(5/3); t(0.975, 3) = 3.182446305 (table);
     * ci = 3.182446305 · sqrt(5/3) / 2 = 2.054260... */
    for (int r = 0; r < 4; r++) reps[r].v[0] = r + 1.0;
    /* metric 1: NaN, 5, NaN, 7 -> two values: mean 6, sd sqrt(2);
     * t(0.975, 1) = 12.70620474; ci = 12.70620474 · sqrt(2)/sqrt(2). */
    reps[0].v[1] = NAN; reps[1].v[1] = 5; reps[2].v[1] = NAN; reps[3].v[1] = 7;
    /* metric 2: no value at all. */
    for (int r = 0; r < 4; r++) reps[r].v[2] = NAN;
    /* metric 3: one value -> ci 0. */
    reps[0].v[3] = NAN; reps[1].v[3] = NAN; reps[2].v[3] = 3.5; reps[3].v[3] = NAN;

    metrics_summary_t s;
    metrics_summarize(reps, 4, &s);
    CHECK(s.reps == 4);
    CHECK_REL(s.value[0], 2.5, 1e-15);
    CHECK_REL(s.ci95[0], 3.182446305 * sqrt(5.0 / 3.0) / 2.0, 1e-9);
    CHECK_REL(s.value[1], 6.0, 1e-15);
    CHECK_REL(s.ci95[1], 12.70620474, 1e-9);
    CHECK(isnan(s.value[2]));
    CHECK(isnan(s.ci95[2]));
    CHECK_REL(s.value[3], 3.5, 1e-15);
    CHECK(s.ci95[3] == 0.0);
    /* constant across replications: no spread, no interval */
    CHECK_REL(s.value[5], 42.0, 1e-15);
    CHECK(s.ci95[5] == 0.0);
}

static void test_summarize_ten_reps(void)
{
    /* x_r = r for r = 0..9: mean 4.5, sample variance
     * sum (r-4.5)^2 / 9 = 82.5/9, t(0.975, 9) = 2.262157163 (table). */
    metrics_rep_t reps[10];
    for (int r = 0; r < 10; r++)
        for (int m = 0; m < METRIC_COUNT; m++) reps[r].v[m] = r;
    metrics_summary_t s;
    metrics_summarize(reps, 10, &s);
    for (int m = 0; m < METRIC_COUNT; m++) {
        CHECK_REL(s.value[m], 4.5, 1e-15);
        CHECK_REL(s.ci95[m], 2.262157163 * sqrt(82.5 / 9.0) / sqrt(10.0), 1e-9);
    }
}

static void test_summarize_single_and_empty(void)
{
    metrics_rep_t one;
    for (int m = 0; m < METRIC_COUNT; m++) one.v[m] = m * 0.5;
    one.v[4] = NAN;
    metrics_summary_t s;
    metrics_summarize(&one, 1, &s);
    CHECK(s.reps == 1);
    for (int m = 0; m < METRIC_COUNT; m++) {
        if (m == 4) {
            CHECK(isnan(s.value[m]));
            continue;
        }
        CHECK(s.value[m] == m * 0.5);
        CHECK(s.ci95[m] == 0.0);
    }
    metrics_summarize(NULL, 0, &s);
    CHECK(s.reps == 0);
    for (int m = 0; m < METRIC_COUNT; m++) CHECK(isnan(s.value[m]));
}

/* ---- histogram: exact reference ---- */

typedef struct sample {
    double x, w;
} sample_t;

static int sample_cmp(const void *a, const void *b)
{
    double x = ((const sample_t *)a)->x, y = ((const sample_t *)b)->x;
    return (x > y) - (x < y);
}

/* Smallest x with weight(<= x) >= q·total; s sorted by x. */
static double exact_quantile(const sample_t *s, size_t n, double q)
{
    double total = 0.0;
    for (size_t i = 0; i < n; i++) total += s[i].w;
    double target = q * total, cum = 0.0;
    for (size_t i = 0; i < n; i++) {
        cum += s[i].w;
        /* equal values form one step of the distribution function */
        if (i + 1 < n && s[i + 1].x == s[i].x) continue;
        if (cum >= target) return s[i].x;
    }
    return s[n - 1].x;
}

static const double qs[] = {0.0,  1e-4, 0.001, 0.01, 0.05, 0.1,   0.25, 0.5,
                            0.75, 0.9,  0.95,  0.99, 0.999, 0.9999, 1.0};

/* Largest relative error of the histogram over the fixed q's and 200 random
 * ones; -1 if some answer is not within rel_tol (also reported). */
static double check_quantiles(hist_t *h, sample_t *s, size_t n, double rel_tol,
                              gsl_rng *r, const char *what)
{
    qsort(s, n, sizeof *s, sample_cmp);
    double worst = 0.0;
    int nq = (int)(sizeof qs / sizeof qs[0]);
    for (int i = 0; i < nq + 200; i++) {
        double q = i < nq ? qs[i] : gsl_rng_uniform(r);
        double want = exact_quantile(s, n, q);
        double got = hist_quantile(h, q);
        double err = want == 0.0 ? fabs(got) : fabs(got - want) / fabs(want);
        if (want == 0.0 && got != 0.0) err = INFINITY;
        if (err > worst) worst = err;
        if (!(err <= rel_tol)) {
            printf("  %s: q=%.6g got %.9g want %.9g (rel err %.3g)\n", what, q,
                   got, want, err);
            return -1.0;
        }
    }
    return worst;
}

enum { DIST_UNI, DIST_EXP, DIST_LOGN, DIST_TIES };

static double draw(gsl_rng *r, int dist)
{
    static const double ties[] = {0.0, 1e-3, 2e-3, 2e-3, 5e-3, 0.1, 0.1, 0.1};
    switch (dist) {
    case DIST_UNI: return gsl_ran_flat(r, 1e-3, 1.0);
    case DIST_EXP: return gsl_ran_exponential(r, 0.03);
    /* median 1e-2, sigma 2.3: +-4 sigma spans ~1e-6 .. 1e2 */
    case DIST_LOGN: return gsl_ran_lognormal(r, log(1e-2), 2.3);
    default: return ties[gsl_rng_uniform_int(r, 8)];
    }
}

static void run_case(int dist, size_t n, int weighted, const char *what)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    gsl_rng_set(r, 12345 + 7 * (unsigned long)n + (unsigned long)dist);
    sample_t *s = malloc(n * sizeof *s);
    hist_t *h = hist_create(1e-9, 1e6, HIST_REL_ERR);
    CHECK(s && h && r);
    if (!s || !h || !r) goto out;
    double sum = 0.0, total = 0.0;
    for (size_t i = 0; i < n; i++) {
        s[i].x = draw(r, dist);
        /* halves are exact in binary, so the reference and the histogram
         * add the same weights to the same totals */
        s[i].w = weighted ? 0.5 * (double)(1 + gsl_rng_uniform_int(r, 8)) : 1.0;
        hist_add(h, s[i].x, s[i].w);
        sum += s[i].x * s[i].w;
        total += s[i].w;
    }
    CHECK_REL(hist_count(h), total, 1e-12);
    CHECK_REL(hist_mean(h), sum / total, 1e-12);
    double worst = check_quantiles(h, s, n, 0.005, r, what);
    CHECK(worst >= 0.0);
out:
    free(s);
    hist_free(h);
    gsl_rng_free(r);
}

static void test_hist_uniform(void)
{
    run_case(DIST_UNI, 1000, 0, "uniform small");
    run_case(DIST_UNI, 200000, 0, "uniform large");
}

static void test_hist_exponential(void)
{
    run_case(DIST_EXP, 777, 0, "exponential small");
    run_case(DIST_EXP, 200000, 0, "exponential large");
}

static void test_hist_lognormal_wide(void)
{
    run_case(DIST_LOGN, 1500, 0, "lognormal small");
    run_case(DIST_LOGN, 200000, 0, "lognormal large");
}

static void test_hist_ties_and_zeros(void)
{
    run_case(DIST_TIES, 50, 0, "ties small");
    run_case(DIST_TIES, 100000, 0, "ties large");
}

static void test_hist_weighted(void)
{
    run_case(DIST_EXP, 3000, 1, "weighted exponential");
    run_case(DIST_LOGN, 100000, 1, "weighted lognormal");
    run_case(DIST_TIES, 1000, 1, "weighted ties");
}

/* The checker itself must be able to fail: with 5% buckets the error
 * exceeds 0.5% somewhere on a smooth sample, yet stays within 5%. */
static void test_hist_checker_is_sensitive(void)
{
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    size_t n = 20000;
    sample_t *s = malloc(n * sizeof *s);
    hist_t *h = hist_create(1e-6, 1e3, 0.05);
    CHECK(r && s && h);
    if (r && s && h) {
        for (size_t i = 0; i < n; i++) {
            s[i] = (sample_t){gsl_ran_flat(r, 1.0, 10.0), 1.0};
            hist_add(h, s[i].x, 1.0);
        }
        double worst = check_quantiles(h, s, n, 0.05, r, "coarse");
        CHECK(worst > 0.005);
        CHECK(worst <= 0.05);
    }
    free(s);
    hist_free(h);
    gsl_rng_free(r);
}

static void test_hist_exact_cases(void)
{
    hist_t *h = hist_create(1e-6, 1.0, HIST_REL_ERR);
    CHECK(h != NULL);
    if (!h) return;
    /* empty */
    CHECK(isnan(hist_quantile(h, 0.5)));
    CHECK(isnan(hist_mean(h)));
    CHECK(isnan(hist_min(h)));
    CHECK(hist_count(h) == 0.0);
    /* one value: answered exactly (clamping to what was seen) */
    hist_add(h, 0.0123, 3.0);
    CHECK(hist_quantile(h, 0.0) == 0.0123);
    CHECK(hist_quantile(h, 0.5) == 0.0123);
    CHECK(hist_quantile(h, 1.0) == 0.0123);
    /* under/overflow report the exact extremes */
    hist_reset(h);
    CHECK(hist_count(h) == 0.0);
    hist_add(h, 1e-9, 1.0);   /* underflow */
    hist_add(h, 0.5, 1.0);
    hist_add(h, 250.0, 1.0);  /* overflow */
    CHECK(hist_quantile(h, 0.0) == 1e-9);
    CHECK(hist_quantile(h, 1.0 / 3.0) == 1e-9);
    CHECK(hist_quantile(h, 1.0) == 250.0);
    CHECK(hist_min(h) == 1e-9 && hist_max(h) == 250.0);
    CHECK_REL(hist_quantile(h, 0.5), 0.5, 0.005);
    CHECK_REL(hist_mean(h), (1e-9 + 0.5 + 250.0) / 3.0, 1e-15);
    /* zeros are exact; NaN, zero, negative and infinite weights are ignored */
    hist_reset(h);
    hist_add(h, 0.0, 2.0);
    hist_add(h, 0.25, 1.0);
    hist_add(h, NAN, 1.0);
    hist_add(h, 0.3, 0.0);
    hist_add(h, 0.3, -1.0);
    hist_add(h, 0.3, NAN);
    hist_add(h, 0.3, INFINITY);
    CHECK(hist_count(h) == 3.0);
    CHECK(hist_quantile(h, 0.6) == 0.0);          /* 2/3 of weight is 0 */
    CHECK(hist_quantile(h, 2.0 / 3.0) == 0.0);    /* exactly reached */
    CHECK_REL(hist_quantile(h, 0.7), 0.25, 0.005);
    /* fractional weight: a commit of n tokens recorded once with weight n */
    hist_reset(h);
    hist_add(h, 0.01, 0.25);
    hist_add(h, 0.02, 0.75);
    CHECK_REL(hist_quantile(h, 0.25), 0.01, 0.005);
    CHECK_REL(hist_quantile(h, 0.26), 0.02, 0.005);
    CHECK_REL(hist_mean(h), 0.0175, 1e-15);
    hist_free(h);
}

static void test_hist_bad_args(void)
{
    CHECK(hist_create(0.0, 1.0, 0.005) == NULL);
    CHECK(hist_create(-1.0, 1.0, 0.005) == NULL);
    CHECK(hist_create(1.0, 1.0, 0.005) == NULL);
    CHECK(hist_create(1.0, 0.5, 0.005) == NULL);
    CHECK(hist_create(1e-6, 1.0, 0.0) == NULL);
    CHECK(hist_create(1e-6, 1.0, -0.1) == NULL);
    CHECK(hist_create(NAN, 1.0, 0.005) == NULL);
    CHECK(hist_create(1e-6, INFINITY, 0.005) == NULL);
    CHECK(hist_create(1e-300, 1e300, 1e-12) == NULL); /* absurd memory */
    hist_free(NULL);
    CHECK(isnan(hist_quantile(NULL, 0.5)));
}

/* Memory does not depend on how many values are recorded: at most the
 * whole bucket array (ceil(ln(1e15)/ln(1.01)) = 3472 buckets, 8 bytes each,
 * plus the header: below 32 KiB), and only the span the values fall in
 * (issue 28 item 11: a histogram of values within one decade kept all 15
 * decades, 110 KB a tenant group for the tally's five). */
static void test_hist_memory_bounded(void)
{
    hist_t *h = hist_create(1e-9, 1e6, HIST_REL_ERR);
    CHECK(h != NULL);
    if (!h) return;
    size_t empty = hist_bytes(h);
    CHECK(empty < 1024);
    for (int i = 0; i < 100000; i++) hist_add(h, 0.02 + 0.08 * (i % 1000) / 1000.0, 1.0);
    size_t decade = hist_bytes(h);
    /* 0.02..0.1 is 162 buckets; the window at most doubles past them. */
    CHECK(decade > empty && decade < empty + 2 * 162 * 8 + 64 * 8);
    printf("  empty %zu bytes, one decade %zu bytes\n", empty, decade);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    for (int i = 0; i < 1000000 && r; i++)
        hist_add(h, gsl_ran_lognormal(r, -4.0, 3.0), 1.0 + (i & 3));
    size_t wide = hist_bytes(h);
    CHECK(wide > decade && wide < 32 * 1024);
    for (int i = 0; i < 1000000 && r; i++)
        hist_add(h, gsl_ran_lognormal(r, -4.0, 3.0), 1.0);
    CHECK(hist_bytes(h) == wide);   /* the same span: no growth */
    hist_reset(h);
    CHECK(hist_bytes(h) == wide);   /* kept for the next replication */
    CHECK(!hist_failed(h));
    gsl_rng_free(r);
    hist_free(h);
}

/* The kept window answers exactly as the whole array did: quantiles of
 * values recorded in an order that grows the window down, then up, match
 * those of the same values recorded into a histogram whose window was
 * grown to everything first (merge and state round trip included). */
static void test_hist_window_exact(void)
{
    hist_t *a = hist_create(1e-7, 1e4, HIST_REL_ERR);
    hist_t *b = hist_create(1e-7, 1e4, HIST_REL_ERR);
    hist_t *c = hist_create(1e-7, 1e4, HIST_REL_ERR);
    CHECK(a && b && c);
    if (!a || !b || !c) return;
    hist_add(b, 2e-7, 1);   /* b spans the whole range from the start */
    hist_add(b, 9e3, 1);
    hist_add(b, 0, 1);
    hist_add(b, -1, 1);
    hist_add(b, 1e5, 1);
    double xs[] = {0.05, 0.04, 1e-3, 1e-6, 2.5, 0.05, 30, 0, 1e5, -1, 9e3, 2e-7, 1e-8};
    for (size_t k = 0; k < sizeof xs / sizeof *xs; k++) {
        hist_add(a, xs[k], 1 + (double)k);
        if (xs[k] != 2e-7 && xs[k] != 9e3 && xs[k] != 0 && xs[k] != -1 && xs[k] != 1e5)
            hist_add(b, xs[k], 1 + (double)k);
        else
            hist_add(b, xs[k], (double)k);   /* one weight already added above */
    }
    for (double q = 0; q <= 1.0; q += 0.01)
        CHECK(hist_quantile(a, q) == hist_quantile(b, q));
    size_t n = hist_state_len(a);
    double *st = malloc(n * sizeof *st);
    CHECK(st != NULL);
    if (st) {
        hist_state_get(a, st);
        CHECK(hist_state_merge(c, st, n) == 0);
        for (double q = 0; q <= 1.0; q += 0.01) CHECK(hist_quantile(c, q) == hist_quantile(a, q));
        hist_reset(c);
        CHECK(hist_merge(c, a) == 0);
        for (double q = 0; q <= 1.0; q += 0.01) CHECK(hist_quantile(c, q) == hist_quantile(a, q));
    }
    free(st);
    hist_free(a);
    hist_free(b);
    hist_free(c);
}

static void test_hist_merge(void)
{
    hist_t *a = hist_create(1e-6, 10.0, HIST_REL_ERR);
    hist_t *b = hist_create(1e-6, 10.0, HIST_REL_ERR);
    hist_t *all = hist_create(1e-6, 10.0, HIST_REL_ERR);
    hist_t *other = hist_create(1e-6, 20.0, HIST_REL_ERR);
    gsl_rng *r = gsl_rng_alloc(gsl_rng_mt19937);
    CHECK(a && b && all && other && r);
    if (a && b && all && other && r) {
        for (int i = 0; i < 5000; i++) {
            double x = gsl_ran_exponential(r, 0.2);
            hist_add(i % 3 ? a : b, x, 1.0);
            hist_add(all, x, 1.0);
        }
        CHECK(hist_merge(a, b) == 0);
        CHECK(hist_count(a) == hist_count(all));
        for (int i = 0; i < (int)(sizeof qs / sizeof qs[0]); i++)
            CHECK(hist_quantile(a, qs[i]) == hist_quantile(all, qs[i]));
        CHECK_REL(hist_mean(a), hist_mean(all), 1e-12);
        double n = hist_count(a);
        CHECK(hist_merge(a, other) == -1);
        CHECK(hist_count(a) == n);
    }
    hist_free(a);
    hist_free(b);
    hist_free(all);
    hist_free(other);
    gsl_rng_free(r);
}

/* Recurring values (the cells hist_add remembers by value, sim/stat/metrics.c):
 * 64 distinct values, many sharing a memo slot, each added 1..7 times in a
 * scrambled order, must fill exactly the cells that each value alone fills
 * in a fresh histogram (whose memo is empty), counted by hand. */
static void test_hist_recurring_values(void)
{
    enum { NV = 64 };
    double v[NV];
    for (int i = 0; i < NV; i++) v[i] = 1e-4 * pow(1.37, i) * (1 + 1e-9 * i);
    hist_t *h = hist_create(1e-6, 10.0, HIST_REL_ERR);
    hist_t *one = hist_create(1e-6, 10.0, HIST_REL_ERR);
    CHECK(h && one);
    if (!h || !one) return;
    size_t n = hist_state_len(h);
    double *want = calloc(n, sizeof *want), *got = calloc(n, sizeof *got);
    double *st = calloc(n, sizeof *st), *zero = calloc(n, sizeof *zero);
    CHECK(want && got && st && zero);
    if (want && got && st && zero) {
        hist_state_get(one, zero);
        size_t c0 = n - (size_t)zero[2];   /* the cells end the state */
        for (int i = 0; i < NV; i++) {   /* the cell of v[i], from a fresh one */
            hist_t *f = hist_create(1e-6, 10.0, HIST_REL_ERR);
            CHECK(f != NULL);
            if (!f) break;
            hist_add(f, v[i], 1.0);
            hist_state_get(f, st);
            for (size_t k = c0; k < n; k++)
                if (st[k] == 1.0) want[k] += (double)(1 + i % 7);
            hist_free(f);
        }
        unsigned lcg = 7;
        int left[NV];
        for (int i = 0; i < NV; i++) left[i] = 1 + i % 7;
        for (int added = 0; added < 4 * NV;) {
            lcg = lcg * 1103515245u + 12345u;
            int i = (int)((lcg >> 8) % NV);
            if (!left[i]) continue;
            left[i]--;
            hist_add(h, v[i], 1.0);
            added = 0;
            for (int j = 0; j < NV; j++) added += left[j] == 0;
            added = added == NV ? 4 * NV : 0;
        }
        hist_state_get(h, got);
        int same = 1;
        for (size_t k = c0; k < n; k++) same &= got[k] == want[k];
        CHECK(same);
        double total = 0;
        for (int i = 0; i < NV; i++) total += 1 + i % 7;
        CHECK(hist_count(h) == total);
    }
    free(want);
    free(got);
    free(st);
    free(zero);
    hist_free(h);
    hist_free(one);
}

/* batch_p99 counts whole jobs: below 100 jobs it is the exact integer
 * quantile (smallest x with weight(<= x) >= 0.99 of the total), not the
 * histogram cell's centre. 50 batches of 1, 49 of 3, 1 of 7: cumulative 50,
 * 99, 100, so p99 = 3. 100 batches of 250: beyond the integer range, within
 * the histogram's relative error. */
static void test_batch_p99_integer(void)
{
    tally_t *t = tally_create(0, 10, 1, (const int[]){1}, 0);
    CHECK(t != NULL);
    if (!t) return;
    hist_add(t->batch, 1, 50);
    hist_add(t->batch, 3, 49);
    hist_add(t->batch, 7, 1);
    metrics_rep_t r;
    tally_finish(t, 1, 0, 0, &r, NULL);
    CHECK(r.v[METRIC_BATCH_P99] == 3.0);
    CHECK_REL(r.v[METRIC_BATCH_MEAN], (50 + 3 * 49 + 7) / 100.0, 1e-12);
    tally_reset(t);
    hist_add(t->batch, 250, 100);
    tally_finish(t, 1, 0, 0, &r, NULL);
    CHECK_REL(r.v[METRIC_BATCH_P99], 250, HIST_REL_ERR);
    tally_free(t);
}

int main(void)
{
    RUN(test_names_match_design);
    RUN(test_summarize_t_interval);
    RUN(test_summarize_ten_reps);
    RUN(test_summarize_single_and_empty);
    RUN(test_hist_uniform);
    RUN(test_hist_exponential);
    RUN(test_hist_lognormal_wide);
    RUN(test_hist_ties_and_zeros);
    RUN(test_hist_weighted);
    RUN(test_hist_checker_is_sensitive);
    RUN(test_hist_exact_cases);
    RUN(test_hist_bad_args);
    RUN(test_hist_memory_bounded);
    RUN(test_hist_window_exact);
    RUN(test_hist_merge);
    RUN(test_hist_recurring_values);
    RUN(test_batch_p99_integer);
    return check_done();
}
