/* sim_options_t.jobs (issue 27): replications on threads give, bit for bit,
 * what the calling thread alone gives — every metric and its half-width,
 * fleet and groups, replication 0's raw totals, the warm-up diagnostic, the
 * per-tenant rows and the trace — for any thread count, with `warmup: auto`
 * too; progress comes in replication order from the calling thread; a
 * replication that fails is reported as the sequential loop reports it,
 * after the progress of those before it. And the pool's split of a thread
 * budget between points and replications (sim/run/pool.h). */
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "config/scenario.h"
#include "run/pool.h"
#include "run/sim.h"

static const char yaml[] =
    "seed: 9\n"
    "duration: 4s\n"
    "warmup: 0.5s\n"
    "replications: 5\n"
    "protocol: {mode: async, gamma: 3, window: 2}\n"
    "acceptance: {model: iid, alpha: 0.75}\n"
    "tenants:\n"
    "  edge: {draft_time: {dist: exponential, mean: 6ms}}\n"
    "  network: {rtt: 25ms, jitter: {dist: exponential, mean: 1ms}}\n"
    "  workload: {prompt_tokens: 8, output_tokens: {dist: uniform, min: 10, max: 60}}\n"
    "  groups:\n"
    "    - {name: a, count: 3}\n"
    "    - {name: b, count: 2, network: {rtt: 70ms}}\n"
    "cloud:\n"
    "  verify_time: {dist: uniform, min: 3ms, max: 7ms}\n"
    "  batching: {max_batch: 3}\n";

/* Everything one run gives, wall-clock metrics cleared. */
typedef struct result {
    int rc;
    err_t err;
    metrics_summary_t m;
    metrics_summary_t g[2];
    tally_totals_t tot;
    sim_warmup_diag_t diag;
    char *rows, *trace;
    size_t nrows, ntrace;
    int progress[8], nprogress;
    pthread_t progress_thread[8];
} result_t;

static void on_progress(void *ctx, int done, int total)
{
    result_t *r = ctx;
    (void)total;
    if (r->nprogress < 8) {
        r->progress[r->nprogress] = done;
        r->progress_thread[r->nprogress] = pthread_self();
    }
    r->nprogress++;
}

static void clear_wall(metrics_summary_t *m)
{
    m->value[METRIC_WALL_S] = m->ci95[METRIC_WALL_S] = 0;
    m->value[METRIC_EVENTS_PER_S] = m->ci95[METRIC_EVENTS_PER_S] = 0;
}

/* Runs s with `jobs` threads into *r; trace_f, when given, replaces the
 * trace's memory stream (a file that fails). */
static void run(const scenario_t *s, int jobs, int trace_rep, FILE *trace_f, result_t *r)
{
    memset(r, 0, sizeof *r);
    FILE *rows = open_memstream(&r->rows, &r->nrows);
    FILE *tr = trace_f ? trace_f : open_memstream(&r->trace, &r->ntrace);
    CHECK(rows && tr);
    if (!rows || !tr) return;
    sim_options_t opt = {.trace = tr, .trace_rep = trace_rep, .warmup = &r->diag,
                         .progress = on_progress, .progress_ctx = r, .groups = r->g,
                         .per_tenant = rows, .jobs = jobs};
    r->rc = sim_run_detailed(s, &opt, &r->m, &r->tot, &r->err);
    fclose(rows);
    if (!trace_f) fclose(tr);
    clear_wall(&r->m);
    for (int g = 0; g < 2; g++) clear_wall(&r->g[g]);
    r->m.groups = NULL;
}

static void result_fini(result_t *r)
{
    free(r->rows);
    free(r->trace);
}

/* Bit for bit, field by field (padding bytes are nobody's): NaNs
 * (undefined metrics) compare equal as bytes. */
static int same_summary(const metrics_summary_t *a, const metrics_summary_t *b)
{
    return a->reps == b->reps && memcmp(a->value, b->value, sizeof a->value) == 0 &&
           memcmp(a->ci95, b->ci95, sizeof a->ci95) == 0;
}

static int same_diag(const sim_warmup_diag_t *a, const sim_warmup_diag_t *b)
{
    return memcmp(&a->bin_s, &b->bin_s, sizeof a->bin_s) == 0 &&
           memcmp(&a->pick_max_s, &b->pick_max_s, sizeof a->pick_max_s) == 0 &&
           memcmp(&a->pick_mean_s, &b->pick_mean_s, sizeof a->pick_mean_s) == 0 &&
           memcmp(&a->used_s, &b->used_s, sizeof a->used_s) == 0 &&
           a->rep_of_max == b->rep_of_max;
}

static int same(const result_t *a, const result_t *b)
{
    return a->rc == b->rc && same_summary(&a->m, &b->m) && same_summary(&a->g[0], &b->g[0]) &&
           same_summary(&a->g[1], &b->g[1]) &&
           memcmp(&a->tot, &b->tot, sizeof a->tot) == 0 && same_diag(&a->diag, &b->diag) &&
           a->nrows == b->nrows &&
           memcmp(a->rows, b->rows, a->nrows) == 0 && a->ntrace == b->ntrace &&
           memcmp(a->trace, b->trace, a->ntrace) == 0;
}

static int load(scenario_t *s, const char *warmup)
{
    err_t err = {0};
    scenario_override_t ov[] = {{.path = "warmup", .value = warmup}};
    if (scenario_load_string("t.yaml", yaml, ov, 1, s, &err) == 0) return 0;
    printf("  %s\n", err.msg);
    return -1;
}

static void identical_for(const char *warmup)
{
    scenario_t s;
    CHECK(load(&s, warmup) == 0);
    if (check_failed_now) return;
    result_t one, many;
    run(&s, 1, 3, NULL, &one);
    CHECK(one.rc == 0);
    CHECK(one.m.reps == 5);
    CHECK(one.nrows > 0 && one.ntrace > 0);
    CHECK(one.m.value[METRIC_EVENTS] > 0);
    /* 2 and 3 threads, as many as replications, and more. */
    static const int jobs[] = {2, 3, 5, 16};
    for (size_t k = 0; k < sizeof jobs / sizeof *jobs; k++) {
        run(&s, jobs[k], 3, NULL, &many);
        CHECK(same(&one, &many));
        if (!same(&one, &many)) printf("  differs at jobs %d\n", jobs[k]);
        /* Progress: once per replication, in order, from this thread. */
        CHECK(many.nprogress == 5);
        for (int i = 0; i < 5 && i < many.nprogress; i++) {
            CHECK(many.progress[i] == i + 1);
            CHECK(pthread_equal(many.progress_thread[i], pthread_self()));
        }
        result_fini(&many);
    }
    result_fini(&one);
    scenario_fini(&s);
}

static void test_identical_for_any_jobs(void)
{
    identical_for("0.5s");
}

static void test_identical_warmup_auto(void)
{
    identical_for("auto");
}

/* Replication 2's trace cannot be written (/dev/full): the run fails with
 * the sequential loop's message and exit code, after the progress of
 * replications 0 and 1, and with threads as without. */
static void test_failure_as_sequential(void)
{
    scenario_t s;
    CHECK(load(&s, "0.5s") == 0);
    if (check_failed_now) return;
    FILE *full = fopen("/dev/full", "w");
    if (!full) {
        printf("  no /dev/full: skipped\n");
        scenario_fini(&s);
        return;
    }
    result_t one, many;
    run(&s, 1, 2, full, &one);
    CHECK(one.rc == -1);
    CHECK(one.err.code == ERR_RUNTIME);
    CHECK(strstr(one.err.msg, "trace") != NULL);
    CHECK(one.nprogress == 2);
    for (int jobs = 2; jobs <= 5; jobs++) {
        clearerr(full);
        run(&s, jobs, 2, full, &many);
        CHECK(many.rc == one.rc);
        CHECK(many.err.code == one.err.code);
        CHECK(strcmp(many.err.msg, one.err.msg) == 0);
        CHECK(many.nprogress == 2);
        CHECK(many.progress[0] == 1 && many.progress[1] == 2);
        result_fini(&many);
    }
    fclose(full);
    result_fini(&one);
    scenario_fini(&s);
}

/* The split: at least one thread per point; with fewer points than threads
 * the budget is used whole, evenly (the first points get the remainder). */
static void test_pool_share(void)
{
    for (long jobs = 1; jobs <= 17; jobs++) {
        for (size_t n = 1; n <= 20; n++) {
            long sum = 0, prev = jobs + 1;
            for (size_t k = 0; k < n; k++) {
                long t = pool_share(jobs, n, k);
                CHECK(t >= 1);
                CHECK(t <= prev);
                CHECK(t >= jobs / (long)n);
                CHECK(t <= jobs / (long)n + 1);
                prev = t;
                sum += t;
            }
            /* Points running at once: min(jobs, n), holding jobs threads
             * when n < jobs, one each otherwise. */
            if ((long)n < jobs) CHECK(sum == jobs);
            else CHECK(sum == (long)n);
        }
    }
    CHECK(pool_share(8, 3, 0) == 3 && pool_share(8, 3, 1) == 3 && pool_share(8, 3, 2) == 2);
    CHECK(pool_cores() >= 1);
    CHECK(pool_jobs(0) == pool_cores());
    CHECK(pool_jobs(-5) == pool_cores());
    CHECK(pool_jobs(3) == 3);
}

int main(void)
{
    RUN(test_identical_for_any_jobs);
    RUN(test_identical_warmup_auto);
    RUN(test_failure_as_sequential);
    RUN(test_pool_share);
    return check_done();
}
