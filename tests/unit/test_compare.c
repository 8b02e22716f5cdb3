/* test_compare — paired comparisons (sim/run/compare.h): the statistics
 * against numbers worked out by hand, and runs on common random numbers
 * against closed forms.
 *
 *   stat_by_hand      a = {1,2,3,4}, b = {2,4,5,9}: every field, the t
 *                     quantiles from an independent numerical integration
 *                     of Student's density (not from GSL);
 *   stat_edges        unpaired values dropped, one pair, none, a = 0;
 *   deterministic_rtt one tenant, fixed times, α = 1: the ITL difference is
 *                     exactly Δrtt/(γ+1) with a paired half-width of 0;
 *   random_rtt        the same with α = 0.7 (random acceptance): the
 *                     difference matches Δrtt/E[a+1] within 4 paired
 *                     standard errors, and the paired CI is several times
 *                     narrower than the unpaired one;
 *   identical_sides   a stochastic scenario against itself: difference 0,
 *                     half-width 0 for every metric but the wall clock's;
 *   load_order        a side's own overrides win over the common ones and
 *                     name their position (--a:N:COL);
 *   replications_differ  refused (ERR_INPUT).
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "config/overrides.h"
#include "config/scenario.h"
#include "run/compare.h"
#include "simtest.h"
#include "stat/metrics.h"

/* ---- statistics --------------------------------------------------------- */

/* a = {1,2,3,4}, b = {2,4,5,9}: means 2.5 and 5, so diff 2.5 and ratio 2.
 * d = b - a = {1,2,2,5}: deviations -1.5,-0.5,-0.5,2.5, sum of squares 9,
 * s_d² = 3. Sums of squares of a and b: 5 and 26 (s² = 5/3, 26/3), cross
 * products 11, so corr = 11/√130. e = b - 2a = {0,0,-1,1}: s_e² = 2/3.
 * Welch: df = 3·(31/3)²/((5/3)² + (26/3)²) = 3·961/701 = 4.1127, half-width
 * t(0.975, df)·√(31/3/4). t(0.975, 3) = 3.18244630528, t(0.975, 4.1127) =
 * 2.74669644820 (Simpson's rule on Student's density, bisection). */
static void test_stat_by_hand(void)
{
    const double a[] = {1, 2, 3, 4}, b[] = {2, 4, 5, 9};
    compare_stat_t st;
    compare_stat(a, b, 4, &st);
    CHECK(st.pairs == 4);
    CHECK_REL(st.a, 2.5, 1e-15);
    CHECK_REL(st.b, 5.0, 1e-15);
    CHECK_REL(st.diff, 2.5, 1e-15);
    CHECK_REL(st.ratio, 2.0, 1e-15);
    CHECK_REL(st.a_ci95, 2.0542602567605246, 1e-9);
    CHECK_REL(st.b_ci95, 4.684434123032391, 1e-9);
    CHECK_REL(st.diff_ci95, 2.7560793465556226, 1e-9);
    CHECK_REL(st.diff_ci95_unpaired, 4.4146968821452495, 1e-7);
    CHECK_REL(st.ratio_ci95, 0.5196913054500453, 1e-9);
    CHECK_REL(st.corr, 0.9647638212377322, 1e-12);
}

/* NaN and infinite values drop their pair; one pair has half-widths 0; no
 * pair is NaN throughout; a = 0 has no ratio. */
static void test_stat_edges(void)
{
    compare_stat_t st;
    const double a[] = {1, NAN, 3, 4, INFINITY}, b[] = {2, 7, NAN, 9, 1};
    compare_stat(a, b, 5, &st);   /* the pairs (1, 2) and (4, 9) */
    CHECK(st.pairs == 2);
    CHECK_REL(st.diff, 3.0, 1e-15);
    CHECK_REL(st.a, 2.5, 1e-15);
    /* d = {1, 5}: s_d = √8, t(0.975, 1) = 12.7062047362 */
    CHECK_REL(st.diff_ci95, 12.706204736174705 * sqrt(8.0) / sqrt(2.0), 1e-9);

    compare_stat(a, b, 1, &st);
    CHECK(st.pairs == 1);
    CHECK(st.diff == 1.0 && st.diff_ci95 == 0.0 && st.diff_ci95_unpaired == 0.0);
    CHECK(st.ratio == 2.0 && st.ratio_ci95 == 0.0);
    CHECK(isnan(st.corr));

    compare_stat(a + 1, b + 1, 2, &st);   /* (NaN, 7), (3, NaN) */
    CHECK(st.pairs == 0);
    CHECK(isnan(st.a) && isnan(st.diff) && isnan(st.diff_ci95) && isnan(st.ratio));

    const double z[] = {0, 0, 0}, w[] = {1, 2, 3};
    compare_stat(z, w, 3, &st);
    CHECK(isnan(st.ratio) && isnan(st.ratio_ci95));
    CHECK_REL(st.diff, 2.0, 1e-15);
    CHECK(isnan(st.corr));   /* a does not vary */
}

/* ---- runs ------------------------------------------------------------------ */

/* simtest.h's hook scenario: one tenant, sync, γ = 4, α = 0.7, d = 10 ms,
 * rtt = 40 ms, v = 5 ms, one request that never ends: a block takes
 * B = γd + rtt + v and commits a + 1 tokens. Shortened to 100 s. */
#define SHORT "duration=100s", "warmup=5s"
#define NO_DRIFT "drift.start=0s", "drift.edge=0", "drift.cloud=0"

/* Side a of the two rtt cases below: the hook's own rtt. */
static const char *const rtt_40ms[] = {"tenants.network.rtt=40ms", NULL};

/* Loads the hook scenario with the common overrides (each a --set) and
 * each side's (--a, --b): NULL-ended lists of PATH=VALUE; runs the
 * comparison on two threads. 0, or -1 with the error printed. */
static int run_pair(const char *const *common, const char *const *sa,
                    const char *const *sb, compare_result_t *r)
{
    err_t err = {0};
    scenario_src_t *src = NULL;
    overrides_t oc = {0}, oa = {0}, ob = {0};
    scenario_t a, b;
    int rc = scenario_src_string("hook", SIMTEST_SYNC_HOOK_YAML, &src, &err);
    for (int i = 0; rc == 0 && common[i]; i++)
        rc = overrides_add(&oc, OVERRIDES_SET, common[i], &err);
    for (int i = 0; rc == 0 && sa[i]; i++)
        rc = overrides_add_opt(&oa, "--a", i + 1, sa[i], &err);
    for (int i = 0; rc == 0 && sb[i]; i++)
        rc = overrides_add_opt(&ob, "--b", i + 1, sb[i], &err);
    if (rc == 0) rc = compare_load(src, &oc, &oa, &a, &err);
    if (rc == 0) {
        rc = compare_load(src, &oc, &ob, &b, &err);
        if (rc == 0) {
            rc = compare_run(&a, &b, 2, r, &err);
            scenario_fini(&b);
        }
        scenario_fini(&a);
    }
    if (rc != 0) {
        printf("  run_pair: %s\n", err.msg);
        check_failed_now = 1;
    }
    scenario_src_free(src);
    overrides_fini(&oc);
    overrides_fini(&oa);
    overrides_fini(&ob);
    return rc;
}

/* α = 1 and no drift (perfect clocks, docs/formats.md "drift"): every
 * block commits γ + 1 = 5 tokens, each with the ITL B/5.
 * rtt 40 -> 60 ms: B = 85 -> 105 ms, so the ITL goes from 17 to 21 ms
 * (diff exactly 4 ms, ratio 105/85), the decode rate from 5/0.085 to
 * 5/0.105 tok/s; every replication is the same, so the half-widths are 0. */
static void test_deterministic_rtt(void)
{
    static const char *const common[] = {SHORT, "acceptance.alpha=1", "replications=3",
                                         NO_DRIFT, NULL};
    static const char *const sb[] = {"tenants.network.rtt=60ms", NULL};
    compare_result_t r;
    if (run_pair(common, rtt_40ms, sb, &r) != 0) return;
    const compare_stat_t *itl = &r.m[METRIC_ITL_MEAN];
    CHECK(r.reps == 3 && itl->pairs == 3);
    CHECK_REL(itl->a, 0.085 / 5, 1e-9);
    CHECK_REL(itl->b, 0.105 / 5, 1e-9);
    CHECK_REL(itl->diff, 0.020 / 5, 1e-9);
    CHECK(itl->diff_ci95 == 0.0);
    CHECK_REL(itl->ratio, 105.0 / 85.0, 1e-9);
    CHECK(itl->ratio_ci95 == 0.0);
    const compare_stat_t *rate = &r.m[METRIC_TOKENS_PER_S_TENANT];
    CHECK_REL(rate->diff, 5 / 0.105 - 5 / 0.085, 1e-3);
    CHECK(rate->diff_ci95 == 0.0);
}

/* α = 0.7: block k commits a_k + 1 tokens, a_k drawn from the tenant's
 * acceptance stream, the k-th draw on either side (sync, one tenant: one
 * draw per block). The ITL mean is ΣB/Σ(a+1) over the blocks in the
 * window, ≈ B/E[a+1] with E[a+1] = 1 + α + α² + α³ + α⁴ = 2.7731, so the
 * difference for rtt 40 -> 45 ms is ≈ 5 ms/2.7731 = 1.8030 ms. The two
 * sides' windows hold mostly the same blocks (b's 5% fewer of them), so
 * the paired half-width is a fraction of the unpaired one (about 1/3 here;
 * with independent draws the two would be alike). */
static void test_random_rtt(void)
{
    static const char *const common[] = {SHORT, "seed=11", "replications=8", NULL};
    static const char *const sb[] = {"tenants.network.rtt=45ms", NULL};
    compare_result_t r;
    if (run_pair(common, rtt_40ms, sb, &r) != 0) return;
    const compare_stat_t *itl = &r.m[METRIC_ITL_MEAN];
    double e = 1 + 0.7 + 0.49 + 0.343 + 0.2401, want = 0.005 / e;
    double t7 = 2.3646242510102993;   /* t(0.975, 7) */
    printf("  itl diff %.6g ms ± %.2g paired, ± %.2g unpaired (closed form %.6g ms)\n",
           1e3 * itl->diff, 1e3 * itl->diff_ci95, 1e3 * itl->diff_ci95_unpaired, 1e3 * want);
    CHECK(itl->pairs == 8);
    CHECK_ABS(itl->diff, want, 4 * itl->diff_ci95 / t7);
    CHECK(itl->diff_ci95 > 0);
    CHECK(itl->diff_ci95 < itl->diff_ci95_unpaired / 2);
    CHECK(itl->corr > 0.8);
    const compare_stat_t *tp = &r.m[METRIC_THROUGHPUT];
    printf("  throughput diff %.4g tok/s ± %.2g paired, ± %.2g unpaired\n", tp->diff,
           tp->diff_ci95, tp->diff_ci95_unpaired);
    CHECK(tp->diff_ci95 < tp->diff_ci95_unpaired / 2);
}

/* A stochastic scenario (random acceptance, draft times, jitter, think
 * times, lengths, verify times; four async tenants sharing a batch) against
 * itself: every draw is shared, so every replication is the same on both
 * sides: difference 0, half-width 0, ratio 1 (the wall clock aside). */
static void test_identical_sides(void)
{
    static const char *const common[] = {
        "duration=20s", "warmup=2s", "protocol.mode=async", "tenants.count=4",
        "tenants.edge.draft_time={dist: exponential, mean: 8ms}",
        "tenants.network.jitter={dist: exponential, mean: 2ms}",
        "tenants.workload.think={dist: exponential, mean: 0.5s}",
        "tenants.workload.output_tokens={dist: uniform, min: 20, max: 80}",
        "cloud.verify_time={dist: uniform, min: 4ms, max: 8ms}",
        "cloud.batching.max_batch=4", NULL};
    static const char *const s[] = {"protocol.gamma=3", NULL};
    compare_result_t r;
    if (run_pair(common, s, s, &r) != 0) return;
    int checked = 0;
    for (int m = 0; m < METRIC_COUNT; m++) {
        const compare_stat_t *st = &r.m[m];
        if (metric_is_timing(m) || st->pairs == 0) continue;
        checked++;
        if (st->diff != 0.0 || st->diff_ci95 != 0.0 || (st->a != 0 && st->ratio != 1.0)) {
            printf("  %s: diff %g ± %g, ratio %g\n", metric_name(m), st->diff,
                   st->diff_ci95, st->ratio);
            check_failed_now = 1;
        }
    }
    CHECK(checked > 25);
    /* ... while each side does vary between replications. */
    CHECK(r.m[METRIC_ITL_MEAN].a_ci95 > 0);
    CHECK(r.m[METRIC_ITL_MEAN].diff_ci95_unpaired > 0);
}

/* Common overrides first, the side's after them: the side's win; an error
 * in a side's override names it --b:N:COL and the key. */
static void test_load_order(void)
{
    err_t err = {0};
    scenario_src_t *src = NULL;
    overrides_t common = {0}, side = {0}, bad = {0};
    scenario_t s;
    CHECK(scenario_src_string("hook", SIMTEST_SYNC_HOOK_YAML, &src, &err) == 0);
    CHECK(overrides_add(&common, OVERRIDES_SET, "protocol.gamma=2", &err) == 0);
    CHECK(overrides_add(&common, OVERRIDES_SET, "seed=5", &err) == 0);
    CHECK(overrides_add_opt(&side, "--a", 1, "protocol.gamma=6", &err) == 0);
    if (compare_load(src, &common, &side, &s, &err) == 0) {
        CHECK(s.protocol.gamma == 6);
        CHECK(s.seed == 5);
        scenario_fini(&s);
    } else {
        printf("  %s\n", err.msg);
        check_failed_now = 1;
    }
    CHECK(overrides_add_opt(&bad, "--b", 1, "protocol.gamma=3", &err) == 0);
    CHECK(overrides_add_opt(&bad, "--b", 2, "protocol.gama=3", &err) == 0);
    CHECK(compare_load(src, &common, &bad, &s, &err) != 0);
    CHECK(err.code == ERR_INPUT);
    CHECK(strstr(err.msg, "--b:2:10: protocol.gama") != NULL);
    printf("  %s\n", err.msg);
    /* An empty value is refused with its position. */
    CHECK(overrides_add_opt(&bad, "--b", 3, "protocol.gamma=", &err) != 0);
    CHECK(strstr(err.msg, "--b:3:15: protocol.gamma") != NULL);
    overrides_fini(&common);
    overrides_fini(&side);
    overrides_fini(&bad);
    scenario_src_free(src);
}

static void test_replications_differ(void)
{
    compare_result_t r;
    err_t err = {0};
    scenario_t a, b;
    scenario_override_t r2 = {.path = "replications", .value = "2"};
    CHECK(scenario_load_string("t", SIMTEST_SYNC_HOOK_YAML, &r2, 1, &a, &err) == 0);
    CHECK(scenario_load_string("t", SIMTEST_SYNC_HOOK_YAML, NULL, 0, &b, &err) == 0);
    CHECK(compare_run(&a, &b, 1, &r, &err) != 0);
    CHECK(err.code == ERR_INPUT && strstr(err.msg, "replications") != NULL);
    scenario_fini(&a);
    scenario_fini(&b);
}

int main(void)
{
    RUN(test_stat_by_hand);
    RUN(test_stat_edges);
    RUN(test_deterministic_rtt);
    RUN(test_random_rtt);
    RUN(test_identical_sides);
    RUN(test_load_order);
    RUN(test_replications_differ);
    return check_done();
}
