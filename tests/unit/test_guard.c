/* The run-budget guards (sim/run/guard.h) on request traces, issue 28
 * item 8: a trace is not a rate and it ends. Each case below was refused
 * by the old guards:
 *  - 2^22 + 1000 rows at one timestamp were "a cycle of zero-duration
 *    steps" (simulated time stopped at t=0);
 *  - a trace whose arrivals end at 50 s in a duration of 1e9 s was
 *    projected at its busy rate over the whole duration (1.9e12 events);
 *  - the same in 1e8 s was projected to pile up 3.7e8 waiting requests
 *    (the trace holds 1e5), and the message named tenants.workload.rate,
 *    a key the trace does not use.
 * Also checked: a Poisson group beside a trace group is named by its own
 * key, and a real zero-time cycle is still caught with a trace. And a
 * --trace file projected past GUARD_TRACE_WARN_BYTES is warned of, once,
 * early in the run (issue 28: multi-GB traces were written without a
 * word). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tmpdir.h"
#include "config/build.h"
#include "config/scenario.h"
#include "model/workload_trace.h"
#include "run/guard.h"
#include "run/sim.h"

/* Writes a plain trace of n rows: row k at time k·step, prompt, output. */
static const char *write_trace(const char *name, long n, double step, int prompt,
                               int output)
{
    const char *p = path(name);
    FILE *f = fopen(p, "w");
    CHECK(f != NULL);
    if (!f) return p;
    fputs("time_s,prompt_tokens,output_tokens\n", f);
    for (long k = 0; k < n; k++) {
        if (step == 0) fprintf(f, "0,%d,%d\n", prompt, output);
        else fprintf(f, "%.6f,%d,%d\n", (double)k * step, prompt, output);
    }
    CHECK(fclose(f) == 0);
    return p;
}

static int load(const char *yaml, scenario_t *s)
{
    err_t err = {0};
    int rc = scenario_load_string("test", yaml, NULL, 0, s, &err);
    if (rc) printf("  load: %s\n", err.msg);
    return rc;
}

/* Runs s; its requests_done, or -1 with the message printed. */
static double run(const scenario_t *s, err_t *err)
{
    metrics_summary_t m;
    memset(err, 0, sizeof *err);
    if (sim_run(s, NULL, &m, err) != 0) {
        printf("  run: %s\n", err->msg);
        return -1;
    }
    return m.value[METRIC_REQUESTS_DONE];
}

/* More rows at one timestamp than GUARD_STALL_EVENTS: every row is an
 * arrival at t = 0, which is work, not a cycle. */
static void test_rows_at_one_instant(void)
{
    long n = (long)GUARD_STALL_EVENTS + 1000;
    const char *tr = write_trace("same.csv", n, 0, 1, 1);
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "duration: 1s\nwarmup: 0s\nreplications: 1\n"
             "protocol: {mode: sync, gamma: 4}\n"
             "tenants:\n  count: 1\n  workload: {arrival: trace, trace: '%s'}\n", tr);
    scenario_t s;
    CHECK(load(yaml, &s) == 0);
    const workload_trace_t *arr = s.built ? s.built->arrivals : NULL;
    CHECK(arr && arr->most_at_once == n);
    guard_t g;
    guard_init(&g, &s, arr);
    CHECK(g.stall_limit >= (uint64_t)n * GUARD_STALL_PER_ROW);
    err_t err;
    CHECK(run(&s, &err) >= 0);
    CHECK(!strstr(err.msg, "stopped"));
    scenario_fini(&s);
    unlink(tr);
}

/* 1e5 requests, one every 0.5 ms to 100 tenants on 4 replicas: far more
 * than they serve, so the run is busy (2^23 events) long after the last
 * arrival at 50 s, and then idle for the rest of the duration. */
static const char *busy_trace(void)
{
    static const char *tr;
    if (!tr) tr = write_trace("dense.csv", 100000, 0.0005, 16, 64);
    return tr;
}

static int load_busy(const char *duration, scenario_t *s)
{
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "duration: %s\nwarmup: 0s\nreplications: 1\n"
             "protocol: {mode: sync, gamma: 4}\n"
             "tenants:\n  count: 100\n  workload: {arrival: trace, trace: '%s'}\n"
             "cloud: {replicas: 4}\n", duration, busy_trace());
    return load(yaml, s);
}

static void test_trace_ends_events(void)
{
    scenario_t s;
    CHECK(load_busy("1e9s", &s) == 0);
    err_t err;
    CHECK(run(&s, &err) == 100000);
    CHECK(!strstr(err.msg, "would take about"));
    scenario_fini(&s);
}

static void test_trace_ends_pileup(void)
{
    scenario_t s;
    CHECK(load_busy("1e8s", &s) == 0);
    err_t err;
    CHECK(run(&s, &err) == 100000);
    CHECK(!strstr(err.msg, "arrive faster"));
    scenario_fini(&s);
}

/* The guard alone: a trace caps the waiting requests at its rows (those
 * before the end of duration); the message names the Poisson group's rate
 * beside a trace group, and the trace is no cap then. */
static void test_pileup_cap_and_key(void)
{
    const char *tr = write_trace("few.csv", 10, 1, 1, 1);
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "duration: 1e6s\nprotocol: {mode: sync, gamma: 4}\n"
             "tenants:\n  count: 2\n  workload: {arrival: trace, trace: '%s'}\n", tr);
    scenario_t s;
    CHECK(load(yaml, &s) == 0);
    guard_t g;
    guard_init(&g, &s, s.built ? s.built->arrivals : NULL);
    CHECK(g.trace_only && g.trace_rows == 10);
    err_t err = {0};
    /* The first check sets the window; the second projects. */
    CHECK(guard_check(&g, 1000, GUARD_CHECK_EVENTS, 5, 0, s.duration, &err) == 0);
    CHECK(guard_check(&g, 2000, 2 * GUARD_CHECK_EVENTS, 1000000, 0, s.duration, &err) == 0);
    scenario_fini(&s);

    snprintf(yaml, sizeof yaml,
             "duration: 1e6s\nprotocol: {mode: sync, gamma: 4}\n"
             "tenants:\n  groups:\n"
             "    - {name: replay, count: 1, workload: {arrival: trace, trace: '%s'}}\n"
             "    - {name: chat, count: 1, workload: {arrival: poisson, rate: 5}}\n", tr);
    CHECK(load(yaml, &s) == 0);
    guard_init(&g, &s, s.built ? s.built->arrivals : NULL);
    CHECK(!g.trace_only);
    memset(&err, 0, sizeof err);
    CHECK(guard_check(&g, 1000, GUARD_CHECK_EVENTS, 5, 0, s.duration, &err) == 0);
    CHECK(guard_check(&g, 2000, 2 * GUARD_CHECK_EVENTS, 1000000, 0, s.duration, &err) != 0);
    CHECK(err.code == ERR_INPUT);
    /* At the key as written: the chat group's rate, line 6. */
    CHECK(strncmp(err.msg, "test:6:", 7) == 0 &&
          strstr(err.msg, ": tenants.groups.chat.workload.rate: requests arrive faster"));
    if (!strstr(err.msg, "groups.chat")) printf("  got '%s'\n", err.msg);
    scenario_fini(&s);
    unlink(tr);
}

/* A trace does not hide a real zero-time cycle: cloud-only with zero
 * round trip and verify time, one request of many tokens at t = 0. */
static void test_cycle_still_caught(void)
{
    const char *tr = write_trace("one.csv", 1, 1, 1, 100000000);
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "duration: 10s\nreplications: 1\nprotocol: {mode: cloud-only}\n"
             "tenants:\n  count: 1\n"
             "  network: {rtt: 0s, jitter: none, uplink: inf, downlink: inf}\n"
             "  workload: {arrival: trace, trace: '%s'}\n"
             "cloud: {verify_time: 0s}\n", tr);
    scenario_t s;
    CHECK(load(yaml, &s) == 0);
    metrics_summary_t m;
    err_t err = {0};
    CHECK(sim_run(&s, NULL, &m, &err) != 0);
    CHECK(err.code == ERR_INPUT && strstr(err.msg, "simulated time stopped at t=0 s"));
    if (!strstr(err.msg, "stopped at t=0 s")) printf("  got '%s'\n", err.msg);
    scenario_fini(&s);
    unlink(tr);
}

/* The warnings err_warn gave (sim/base/err.h). */
static char warned[8][512];
static int nwarned;

static void catch_warning(void *ctx, const char *msg)
{
    (void)ctx;
    if (nwarned < 8) snprintf(warned[nwarned], sizeof warned[0], "%s", msg);
    nwarned++;
}

/* The guard's early look at a trace of 200 bytes an event: from 2^16
 * events at 1 s to 2^18 at 2 s, 196608 events per simulated second. Over
 * 10^4 s that projects 262144 + 196608 × 9998 = 1.966e9 events, 393 GB:
 * warned, once (the regular checks that follow say nothing more); over
 * 10 s, 1835008 events, 367 MB: not warned, at the look nor at the
 * regular checks at that rate. */
static void test_trace_size_projection(void)
{
    const char *durations[2] = {"1e4s", "10s"};
    err_set_warn_handler(catch_warning, NULL);
    for (int k = 0; k < 2; k++) {
        char yaml[256];
        snprintf(yaml, sizeof yaml, "duration: %s\nwarmup: 0s\n"
                 "protocol: {mode: sync, gamma: 4}\ntenants: {count: 1}\n", durations[k]);
        scenario_t s;
        CHECK(load(yaml, &s) == 0);
        trace_t tr = {0};
        guard_t g;
        guard_init(&g, &s, NULL);
        guard_watch_trace(&g, &tr);
        nwarned = 0;
        err_t err = {0};
        CHECK(guard_next(&g) == GUARD_TRACE_LOOK);
        tr.bytes = 200.0 * GUARD_TRACE_LOOK;
        CHECK(guard_check(&g, 1, GUARD_TRACE_LOOK, 0, 0, s.duration, &err) == 0);
        CHECK(guard_next(&g) == 4 * GUARD_TRACE_LOOK && nwarned == 0);
        tr.bytes = 200.0 * 4 * GUARD_TRACE_LOOK;
        CHECK(guard_check(&g, 2, 4 * GUARD_TRACE_LOOK, 0, 0, s.duration, &err) == 0);
        CHECK(guard_next(&g) == GUARD_CHECK_EVENTS);
        CHECK(nwarned == (k == 0));
        const char *want = "trace: about 393 GB projected for the trace (1.97e+09 events, "
                           "200 bytes each so far); a trace past 1 GB is slow to write and "
                           "to open (docs/formats.md, \"Run budget\"): a shorter duration or "
                           "fewer tenants make it smaller";
        if (k == 0 && strcmp(warned[0], want) != 0) {
            CHECK(strcmp(warned[0], want) == 0);
            printf("  got '%s'\n", warned[0]);
        }
        for (uint64_t c = 1; c <= 3; c++) {
            double t = (double)(c * GUARD_CHECK_EVENTS) / 196608.0;
            tr.bytes = 200.0 * (double)(c * GUARD_CHECK_EVENTS);
            CHECK(guard_check(&g, t, c * GUARD_CHECK_EVENTS, 0, 0, s.duration, &err) == 0);
        }
        CHECK(nwarned == (k == 0));
        scenario_fini(&s);
    }
    err_set_warn_handler(NULL, NULL);
}

int main(void)
{
    if (tmpdir_make("specsim-test-guard") != 0) {
        perror("mkdtemp");
        return 1;
    }
    RUN(test_rows_at_one_instant);
    RUN(test_trace_ends_events);
    RUN(test_trace_ends_pileup);
    RUN(test_pileup_cap_and_key);
    RUN(test_cycle_still_caught);
    RUN(test_trace_size_projection);
    CHECK(tmpdir_remove() == 0);
    return check_done();
}
