/* Runs that stop at a stated precision (precision:, sim/run/sim.c).
 *
 * The case: one tenant, sync, fixed draft, network and verify times, iid
 * acceptance α = 0.7 at γ = 4, and a request longer than the run. Every
 * block then takes the same time, so every replication holds the same
 * number of verdicts, and its accepted_len_mean (tokens committed per
 * verdict) is the mean of that many iid draws of 1 + accepted drafts:
 * unbiased, with the closed-form mean Σ_{i=0..γ} α^i = (1 − α^{γ+1}) / (1 − α).
 *
 * Checked: the coverage of the stopping rule over many seeds (the share of
 * runs whose mean lies within the target of the closed form); that the run
 * stops at the first count that meets the rule, recomputed here from the
 * replications' values with a two-pass t interval of the test's own; the
 * cap; the same results at any thread count; bad keys; and the bounds
 * optimize's constraints add (settled at the first count, recomputed here;
 * a near bound runs longer than a far one; few wrong-side decisions).
 */
#include <gsl/gsl_cdf.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config/scenario.h"
#include "run/sim.h"

#define ALPHA 0.7
#define GAMMA 4

static const char base[] =
    "duration: 2s\n"
    "warmup: 0.1s\n"
    "protocol: {mode: sync, gamma: 4}\n"
    "acceptance: {model: iid, alpha: 0.7}\n"
    "tenants:\n"
    "  count: 1\n"
    "  edge: {draft_time: 5ms, prefill_time: 1ms}\n"
    "  network: {rtt: 10ms}\n"
    "  workload: {prompt_tokens: 8, output_tokens: 100000000}\n"
    "cloud: {verify_time: 5ms}\n"
    "precision: {relative: 1%, metrics: [accepted_len_mean]}\n";

static double closed_form(void)
{
    return (1 - pow(ALPHA, GAMMA + 1)) / (1 - ALPHA);
}

static int load(scenario_t *s, const scenario_override_t *ov, int nov)
{
    err_t err = {0};
    if (scenario_load_string("t.yaml", base, ov, nov, s, &err) == 0) return 0;
    printf("  %s\n", err.msg);
    return -1;
}

/* Half-width over |mean| of the first n values, two passes, at conf. */
static double rel_halfwidth(const metrics_rep_t *v, int n, int m, double conf)
{
    double mean = 0, ss = 0;
    for (int r = 0; r < n; r++) mean += v[r].v[m] / n;
    for (int r = 0; r < n; r++) ss += (v[r].v[m] - mean) * (v[r].v[m] - mean);
    double t = gsl_cdf_tdist_Pinv(1 - (1 - conf) / 2, n - 1);
    return t * sqrt(ss / (n - 1) / n) / fabs(mean);
}

/* The run stops at the first n >= the first round where the half-width at
 * 95% is within γ / (1 + γ) of the mean, and its results are over those n. */
static void test_stops_at_first_met(void)
{
    scenario_t s;
    if (load(&s, NULL, 0) != 0) { CHECK(!"load"); return; }
    CHECK(s.replications == 10 && s.precision.max_replications == 1000);
    metrics_rep_t *v = calloc((size_t)s.precision.max_replications, sizeof *v);
    sim_precision_t p;
    sim_options_t opt = {.rep_values = v, .precision = &p};
    metrics_summary_t m;
    err_t err = {0};
    CHECK(v && sim_run(&s, &opt, &m, &err) == 0);
    int n = p.replications, k = METRIC_ACCEPTED_LEN_MEAN;
    double target = 0.01 / 1.01;
    printf("  stopped at %d replications, ±%.4g%%\n", n, 100 * p.relative[0]);
    CHECK(p.met && m.reps == n && n > s.replications);
    CHECK(rel_halfwidth(v, n, k, 0.95) <= target);
    CHECK(rel_halfwidth(v, n - 1, k, 0.95) > target);
    CHECK_REL(p.relative[0], rel_halfwidth(v, n, k, 0.95), 1e-9);
    double mean = 0;
    for (int r = 0; r < n; r++) mean += v[r].v[k] / n;
    CHECK_REL(m.value[k], mean, 1e-12);
    free(v);
    scenario_fini(&s);
}

/* Over many seeds, the share of runs whose mean is within the target of the
 * closed form is the stated confidence, about: at least 92% for 95% over
 * 200 runs (1.5 points is one binomial standard error there). */
static void test_coverage(void)
{
#ifdef __SANITIZE_ADDRESS__
    /* The sanitizer build looks for memory errors: a few runs are enough,
     * and the coverage is judged in the optimised build. */
    const int K = 10;
#else
    const int K = 200;
#endif
    double mu = closed_form();
    int hit = 0, nsum = 0;
    for (int i = 0; i < K; i++) {
        char seed[32];
        snprintf(seed, sizeof seed, "%d", 1000 + i);
        scenario_override_t ov = {.path = "seed", .value = seed};
        scenario_t s;
        if (load(&s, &ov, 1) != 0) { CHECK(!"load"); return; }
        metrics_summary_t m;
        sim_precision_t p;
        sim_options_t opt = {.precision = &p};
        err_t err = {0};
        if (sim_run(&s, &opt, &m, &err) != 0 || !p.met) {
            CHECK(!"run");
            scenario_fini(&s);
            return;
        }
        hit += fabs(m.value[METRIC_ACCEPTED_LEN_MEAN] - mu) <= 0.01 * mu;
        nsum += p.replications;
        scenario_fini(&s);
    }
    printf("  coverage %d/%d = %.3f at a 1%% target (95%%), %.1f replications on "
           "average; closed form %.6f\n", hit, K, (double)hit / K, (double)nsum / K, mu);
    if (K >= 200) CHECK(hit >= 0.92 * K);
}

/* ---- bounds (optimize's constraints) ----------------------------------
 * The precision metric is gpu_util, within 1% after the first round here
 * (every block takes the same time); the bound is on accepted_len_mean,
 * whose closed form mu is known. A bound far from mu settles in the first
 * round; one 1.5% from it runs until the interval excludes it; one at mu
 * cannot be excluded and runs until the interval is within 1% of it
 * (γ' |bound|). */

/* Whether bound b is settled over the first n values of metric k: the t
 * interval at 95% (two passes, the test's own) excludes b or is within
 * γ' = 1% / 1.01 of |b|. */
static int settled_by_hand(const metrics_rep_t *v, int n, int k, double b)
{
    double mean = 0, ss = 0;
    for (int r = 0; r < n; r++) mean += v[r].v[k] / n;
    for (int r = 0; r < n; r++) ss += (v[r].v[k] - mean) * (v[r].v[k] - mean);
    double d = gsl_cdf_tdist_Pinv(0.975, n - 1) * sqrt(ss / (n - 1) / n);
    return d < fabs(mean - b) || d <= 0.01 / 1.01 * fabs(b);
}

/* Runs the base scenario (seed given) with precision on gpu_util and the
 * bound accepted_len_mean vs b; values into v (1000), 0 or -1. */
static int run_bound(double b, const char *seed, metrics_rep_t *v, sim_precision_t *p,
                     metrics_summary_t *m)
{
    scenario_override_t ov[] = {{.path = "precision.metrics", .value = "[gpu_util]"},
                                {.path = "seed", .value = seed}};
    scenario_t s;
    if (load(&s, ov, 2) != 0) return -1;
    sim_bound_t bound = {METRIC_ACCEPTED_LEN_MEAN, b};
    sim_options_t opt = {.rep_values = v, .precision = p, .bounds = &bound, .nbounds = 1};
    err_t err = {0};
    int rc = sim_run(&s, &opt, m, &err);
    if (rc != 0) printf("  %s\n", err.msg);
    scenario_fini(&s);
    return rc;
}

/* Far, near and at the bound: the stop is the first count that settles
 * it, recomputed here; far stops at the first round, near runs longer. */
static void test_bounds_settle(void)
{
    double mu = closed_form(), bs[] = {0.9 * mu, 0.985 * mu, mu};
    int k = METRIC_ACCEPTED_LEN_MEAN, used[3] = {0};
    metrics_rep_t *v = calloc(1000, sizeof *v);
    for (int i = 0; v && i < 3; i++) {
        sim_precision_t p;
        metrics_summary_t m;
        if (run_bound(bs[i], "1", v, &p, &m) != 0) { CHECK(!"run"); break; }
        int n = p.replications;
        used[i] = n;
        printf("  bound %.4f (mu %.4f): %d replications, %.4f ± %.4f\n", bs[i], mu, n,
               m.value[k], m.ci95[k]);
        CHECK(p.met && p.bounds == 1 && p.settled == 1);
        CHECK(settled_by_hand(v, n, k, bs[i]));
        CHECK(n == 10 || !settled_by_hand(v, n - 1, k, bs[i]));
    }
    CHECK(used[0] == 10 && used[1] > used[0] && used[2] > used[0]);
    free(v);
}

/* Over seeds, a bound 1.5% below mu is almost never settled on the wrong
 * side (the interval wholly below it): the rule looks after every
 * replication, so the share can exceed the 2.5% of one look; measured
 * here, and held at most 5% over 100 runs. */
static void test_bound_decisions(void)
{
#ifdef __SANITIZE_ADDRESS__
    const int K = 5;
#else
    const int K = 100;
#endif
    double mu = closed_form(), b = 0.985 * mu;
    int wrong = 0, nsum = 0, k = METRIC_ACCEPTED_LEN_MEAN;
    metrics_rep_t *v = calloc(1000, sizeof *v);
    for (int i = 0; v && i < K; i++) {
        char seed[32];
        snprintf(seed, sizeof seed, "%d", 2000 + i);
        sim_precision_t p;
        metrics_summary_t m;
        if (run_bound(b, seed, v, &p, &m) != 0 || !p.met) { CHECK(!"run"); break; }
        wrong += m.value[k] + m.ci95[k] < b;
        nsum += p.replications;
    }
    printf("  bound 1.5%% below mu: %d of %d runs settled it on the wrong side, "
           "%.1f replications on average\n", wrong, K, (double)nsum / K);
    if (K >= 100) CHECK(wrong <= 5);
    free(v);
}

/* The base scenario with ov, run: 0 with *p and *m filled, else -1. */
static int run_with(const scenario_override_t *ov, int nov, sim_precision_t *p,
                    metrics_summary_t *m)
{
    scenario_t s;
    if (load(&s, ov, nov) != 0) return -1;
    sim_options_t opt = {.precision = p};
    err_t err = {0};
    int rc = sim_run(&s, &opt, m, &err);
    if (rc != 0) printf("  %s\n", err.msg);
    scenario_fini(&s);
    return rc;
}

/* A target it cannot reach ends at the cap, said so. */
static void test_cap(void)
{
    scenario_override_t ov[] = {{.path = "precision.relative", .value = "0.01%"},
                                {.path = "precision.max_replications", .value = "25"}};
    metrics_summary_t m;
    sim_precision_t p;
    CHECK(run_with(ov, 2, &p, &m) == 0);
    CHECK(!p.met && p.replications == 25 && m.reps == 25);
    CHECK(p.relative[0] > 0.0001);
}

/* The stop and every value are the same on 1 thread and on 3: the rule is
 * taken in replication order, whatever ran ahead. */
static void test_threads_same(void)
{
    scenario_t s;
    if (load(&s, NULL, 0) != 0) { CHECK(!"load"); return; }
    metrics_summary_t a, b;
    sim_precision_t pa, pb;
    sim_options_t oa = {.precision = &pa, .jobs = 1}, ob = {.precision = &pb, .jobs = 3};
    err_t err = {0};
    CHECK(sim_run(&s, &oa, &a, &err) == 0 && sim_run(&s, &ob, &b, &err) == 0);
    CHECK(pa.replications == pb.replications && pa.met == pb.met);
    for (int k = 0; k < METRIC_COUNT; k++)
        if (!metric_is_timing(k))
            CHECK(memcmp(&a.value[k], &b.value[k], sizeof a.value[k]) == 0 &&
                  memcmp(&a.ci95[k], &b.ci95[k], sizeof a.ci95[k]) == 0);
    scenario_fini(&s);
}

/* The first round is at least 10 even when replications says fewer (below
 * that the rule's coverage falls): a target met at once stops at 10. */
static void test_first_round_floor(void)
{
    scenario_override_t ov[] = {{.path = "replications", .value = "3"},
                                {.path = "precision.relative", .value = "50%"}};
    metrics_summary_t m;
    sim_precision_t p;
    CHECK(run_with(ov, 2, &p, &m) == 0);
    CHECK(p.met && p.replications == 10 && m.reps == 10);
}

/* A metric without values (an SLO metric with no slo:) cannot be judged:
 * refused after the first round, not run to the cap. */
static void test_unjudged_refused(void)
{
    scenario_override_t ov[] = {{.path = "precision.metrics", .value = "slo_attainment"}};
    scenario_t s;
    if (load(&s, ov, 1) != 0) { CHECK(!"load"); return; }
    metrics_summary_t m;
    err_t err = {0};
    CHECK(sim_run(&s, NULL, &m, &err) == -1 && err.code == ERR_INPUT);
    CHECK(strstr(err.msg, "precision.metrics: slo_attainment has a value in 0 of the "
                          "first 10 replications") != NULL);
    scenario_fini(&s);
}

static void refused(const char *path, const char *value, const char *want)
{
    scenario_override_t ov = {.path = path, .value = value};
    scenario_t s;
    err_t err = {0};
    int rc = scenario_load_string("t.yaml", base, &ov, 1, &s, &err);
    CHECK(rc != 0 && err.code == ERR_INPUT);
    if (rc == 0) {
        scenario_fini(&s);
        return;
    }
    if (!strstr(err.msg, want)) printf("  got '%s', wanted '%s'\n", err.msg, want);
    CHECK(strstr(err.msg, want) != NULL);
}

static void test_bad_keys(void)
{
    refused("precision.relative", "150%", "--set:1:20: precision.relative: '150%' is not");
    refused("precision.confidence", "0", "precision.confidence: '0' is not a fraction");
    refused("precision.metrics", "wall_s", "precision.metrics: wall_s differs between runs");
    refused("precision.metrics", "itl_mena_s", "did you mean 'itl_mean_s'");
    refused("replications", "1", "replications: 1; with precision:");
    refused("precision.max_replications", "5", "5 is below replications (10)");
}

/* A scenario made in code is held to what the loader refuses: a target
 * the rule could not judge is an input error, not an instant stop. */
static void test_code_built_refused(void)
{
    scenario_t s;
    if (load(&s, NULL, 0) != 0) { CHECK(!"load"); return; }
    metrics_summary_t m;
    err_t err = {0};
    precision_cfg_t keep = s.precision;
    s.precision.confidence = 0;   /* a t quantile of 0: every interval "met" */
    CHECK(sim_run(&s, NULL, &m, &err) == -1 && err.code == ERR_INPUT &&
          strstr(err.msg, "confidence") != NULL);
    s.precision = keep;
    s.precision.metrics[0] = METRIC_WALL_S;
    CHECK(sim_run(&s, NULL, &m, &err) == -1 && strstr(err.msg, "precision.metrics") != NULL);
    s.precision = keep;
    s.precision.max_replications = 5;
    CHECK(sim_run(&s, NULL, &m, &err) == -1 && strstr(err.msg, "max_replications") != NULL);
    scenario_fini(&s);
}

int main(void)
{
    RUN(test_stops_at_first_met);
    RUN(test_cap);
    RUN(test_threads_same);
    RUN(test_bad_keys);
    RUN(test_code_built_refused);
    RUN(test_first_round_floor);
    RUN(test_unjudged_refused);
    RUN(test_coverage);
    RUN(test_bounds_settle);
    RUN(test_bound_decisions);
    return check_done();
}
