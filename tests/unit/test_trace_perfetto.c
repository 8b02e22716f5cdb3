/* The Perfetto timeline (sim/io/trace_perfetto.c): every event carries the
 * fields the trace-event format requires (name, ph, ts, pid, tid); the
 * batch spans are the run's iterations; each tenant's verifying spans are
 * its verify_end events in the CSV trace of the same run; spans on one
 * track nest; --trace-rep picks the replication. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../check.h"
#include "config/scenario.h"
#include "run/sim.h"
#include "io/trace.h"

#define NT 3

static const char *YAML =
    "duration: 3s\nwarmup: 0s\nreplications: 2\n"
    "protocol: {mode: async, gamma: 4, window: 3}\n"
    "acceptance: {model: iid, alpha: 0.6}\n"
    "tenants: {count: 3, edge: {draft_time: 7ms, prefill_time: 10ms},\n"
    "  network: {rtt: 30ms}, workload: {output_tokens: 40, think: 50ms}}\n"
    "cloud: {verify_time: 6ms, batching: {max_batch: 2}}\n";

/* Runs replication rep into a temporary file in the given format; returns
 * it rewound (the caller closes it). */
static FILE *traced(const scenario_t *s, const char *fmt_name, int rep,
                    tally_totals_t *tot)
{
    FILE *f = tmpfile();
    CHECK(f != NULL);
    if (!f) return NULL;
    sim_options_t opt = {.trace = f, .trace_format = trace_format_for(fmt_name),
                         .trace_rep = rep};
    metrics_summary_t m;
    err_t err = {0};
    CHECK(sim_run_detailed(s, &opt, &m, tot, &err) == 0);
    rewind(f);
    return f;
}

static int has(const char *line, const char *key)
{
    char k[32];
    snprintf(k, sizeof k, "\"%s\":", key);
    return strstr(line, k) != NULL;
}

static long field(const char *line, const char *key)
{
    char k[32];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(line, k);
    return p ? strtol(p + strlen(k), NULL, 10) : -1;
}

static void test_fields_and_counts(void)
{
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load_string("t", YAML, NULL, 0, &s, &err) == 0);
    tally_totals_t tot;
    FILE *j = traced(&s, "x.json", 0, &tot);
    FILE *c = traced(&s, "x.csv", 0, NULL);
    if (!j || !c) return;
    char line[1024];
    long batches = 0, verify[NT] = {0}, events = 0, bad = 0;
    int first = 1, closed = 0;
    while (fgets(line, sizeof line, j)) {
        if (first) {
            CHECK(strncmp(line, "{\"displayTimeUnit\":\"ms\",\"traceEvents\":[", 38) == 0);
            first = 0;
            continue;
        }
        if (!strcmp(line, "]}\n")) {
            closed = 1;
            continue;
        }
        events++;
        if (!has(line, "name") || !has(line, "ph") || !has(line, "ts") ||
            !has(line, "pid") || !has(line, "tid"))
            bad++;
        if (strstr(line, "\"ph\":\"X\"") && !has(line, "dur")) bad++;
        if (strstr(line, "\"name\":\"batch\",\"ph\":\"X\"")) batches++;
        if (strstr(line, "\"name\":\"verifying\",\"ph\":\"X\"")) {
            long t = field(line, "pid") - 2;
            if (t >= 0 && t < NT) verify[t]++;
        }
    }
    CHECK(closed);
    CHECK(bad == 0);
    CHECK(events > 100);
    CHECK(batches == (long)tot.iterations);
    CHECK(batches > 10);
    long vend[NT] = {0};
    while (fgets(line, sizeof line, c)) {
        int ten;
        char ev[64];
        if (sscanf(line, "%*f,%d,%63[^,]", &ten, ev) == 2 && !strcmp(ev, "verify_end") &&
            ten >= 0 && ten < NT)
            vend[ten]++;
    }
    for (int i = 0; i < NT; i++) {
        CHECK(verify[i] == vend[i]);
        CHECK(vend[i] > 5);
    }
    fclose(j);
    fclose(c);
    scenario_fini(&s);
}

/* Hundreds of blocks in flight (a window of 200 over a 500 ms round trip),
 * with rollbacks, stale blocks dropped on arrival and purged from the
 * queue: every block still gets its spans, counted against the CSV trace of
 * the same run (uplink: block_arrive + block_drop; queued: verify_start;
 * verifying: verify_end; downlink: verdict_arrive). */
static void test_many_in_flight(void)
{
    static const char *const Y[] = {
        "duration: 3s\nwarmup: 0s\nprotocol: {mode: async, gamma: 1, window: 200}\n"
        "acceptance: {model: iid, alpha: 0.99}\n"
        "tenants: {count: 1, edge: {draft_time: 1ms}, network: {rtt: 500ms},\n"
        "  workload: {output_tokens: 100000}}\ncloud: {verify_time: 1ms}\n",
        "duration: 3s\nwarmup: 0s\nprotocol: {mode: async, gamma: 2, window: 100}\n"
        "acceptance: {model: iid, alpha: 0.9}\n"
        "tenants: {count: 2, edge: {draft_time: 1ms}, network: {rtt: 300ms},\n"
        "  workload: {output_tokens: 300}}\n"
        "cloud: {verify_time: 4ms, batching: {max_batch: 3}}\n"};
    static const char *const SPAN[4] = {"uplink", "queued", "verifying", "downlink"};
    for (size_t y = 0; y < sizeof Y / sizeof Y[0]; y++) {
        scenario_t s;
        err_t err = {0};
        CHECK(scenario_load_string("t", Y[y], NULL, 0, &s, &err) == 0);
        FILE *j = traced(&s, "x.json", 0, NULL);
        FILE *c = traced(&s, "x.csv", 0, NULL);
        if (!j || !c) return;
        char line[1024], name[64];
        long spans[4] = {0}, evs[4] = {0}, drops = 0;
        while (fgets(line, sizeof line, j))
            for (int k = 0; k < 4; k++) {
                snprintf(name, sizeof name, "\"name\":\"%s\",\"ph\":\"X\"", SPAN[k]);
                if (strstr(line, name)) spans[k]++;
            }
        while (fgets(line, sizeof line, c)) {
            char ev[64];
            if (sscanf(line, "%*f,%*d,%63[^,]", ev) != 1) continue;
            evs[0] += !strcmp(ev, "block_arrive") || !strcmp(ev, "block_drop");
            drops += !strcmp(ev, "block_drop");
            evs[1] += !strcmp(ev, "verify_start");
            evs[2] += !strcmp(ev, "verify_end");
            evs[3] += !strcmp(ev, "verdict_arrive");
        }
        for (int k = 0; k < 4; k++) {
            if (spans[k] != evs[k])
                printf("  scenario %zu: %s spans %ld, events %ld\n", y, SPAN[k], spans[k],
                       evs[k]);
            CHECK(spans[k] == evs[k]);
        }
        /* far more blocks than 64 went through; stale ones were dropped */
        CHECK(evs[2] > (y == 0 ? 300 : 50));
        if (y == 1) CHECK(drops > 0);
        fclose(j);
        fclose(c);
        scenario_fini(&s);
    }
}

/* Spans of one (pid, tid) never overlap partially: sorted by start (and
 * longest first), each ends before the enclosing one. ts and dur are
 * integer nanoseconds written as microseconds with three decimals. */
typedef struct sp {
    long pid, tid;
    long long a, b;
} sp_t;

static long long us_ns(const char *line, const char *key)
{
    char k[32];
    snprintf(k, sizeof k, "\"%s\":", key);
    const char *p = strstr(line, k);
    if (!p) return -1;
    long long whole, frac;
    if (sscanf(p + strlen(k), "%lld.%3lld", &whole, &frac) != 2) return -1;
    return whole * 1000 + frac;
}

static int cmp(const void *x, const void *y)
{
    const sp_t *a = x, *b = y;
    if (a->pid != b->pid) return a->pid < b->pid ? -1 : 1;
    if (a->tid != b->tid) return a->tid < b->tid ? -1 : 1;
    if (a->a != b->a) return a->a < b->a ? -1 : 1;
    return a->b > b->b ? -1 : a->b < b->b;
}

/* Spans of scenario yaml's trace that overlap partially on one thread;
 * *nspans: how many spans it has, *lanes: whether a thread "uplink L"
 * with L = want_lane was named. -1 when the scenario does not run. */
static int partial_overlaps(const char *yaml, int want_lane, int *nspans, int *lanes)
{
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load_string("t", yaml, NULL, 0, &s, &err) == 0);
    FILE *j = traced(&s, "x.json", 0, NULL);
    scenario_fini(&s);
    sp_t *v = malloc(100000 * sizeof *v);
    CHECK(v != NULL);
    if (!j || !v) {
        if (j) fclose(j);
        free(v);
        return -1;
    }
    char line[1024], lane[64];
    snprintf(lane, sizeof lane, "\"args\":{\"name\":\"uplink %d\"}", want_lane);
    int n = 0;
    *lanes = 0;
    while (n < 100000 && fgets(line, sizeof line, j)) {
        if (strstr(line, lane)) *lanes = 1;
        if (!strstr(line, "\"ph\":\"X\"")) continue;
        long long a = us_ns(line, "ts");
        v[n] = (sp_t){field(line, "pid"), field(line, "tid"), a, a + us_ns(line, "dur")};
        n++;
    }
    qsort(v, (size_t)n, sizeof *v, cmp);
    int bad = 0;
    long long stack[64];
    int top = 0;
    for (int i = 0; i < n; i++) {
        if (i == 0 || v[i].pid != v[i - 1].pid || v[i].tid != v[i - 1].tid) top = 0;
        while (top > 0 && stack[top - 1] <= v[i].a) top--;
        if (top > 0 && v[i].b > stack[top - 1]) bad++;
        if (top < 64) stack[top++] = v[i].b;
    }
    *nspans = n;
    free(v);
    fclose(j);
    return bad;
}

static void test_nesting(void)
{
    int n, lanes;
    CHECK(partial_overlaps(YAML, 2, &n, &lanes) == 0);
    CHECK(n > 100);
}

/* A window of 32 blocks on a 200 ms link: about 32 blocks in flight on
 * the uplink at once, each on a lane of its own (issue 28: the lanes
 * stopped at 8 and the rest overlapped on the 8th). */
static void test_deep_window(void)
{
    static const char Y[] =
        "duration: 2s\nwarmup: 0s\nprotocol: {mode: async, gamma: 1, window: 32}\n"
        "acceptance: {model: iid, alpha: 0.99}\n"
        "tenants: {count: 1, edge: {draft_time: 1ms}, network: {rtt: 400ms},\n"
        "  workload: {output_tokens: 100000}}\ncloud: {verify_time: 1ms}\n";
    int n, lanes;
    CHECK(partial_overlaps(Y, 20, &n, &lanes) == 0);
    CHECK(n > 100);
    CHECK(lanes);
}

/* --trace-rep: replication 1 has other acceptance draws, so another
 * timeline; asking for it twice gives the same bytes. */
static void test_trace_rep(void)
{
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load_string("t", YAML, NULL, 0, &s, &err) == 0);
    FILE *a = traced(&s, "x.csv", 0, NULL), *b = traced(&s, "x.csv", 1, NULL),
         *c = traced(&s, "x.csv", 1, NULL);
    if (!a || !b || !c) return;
    int same01 = 1, same11 = 1;
    for (;;) {
        int x = fgetc(a), y = fgetc(b), z = fgetc(c);
        if (x != y) same01 = 0;
        if (y != z) same11 = 0;
        if (x == EOF && y == EOF && z == EOF) break;
        if (y == EOF && z == EOF && !same01) break;
    }
    CHECK(!same01);
    CHECK(same11);
    fclose(a);
    fclose(b);
    fclose(c);
    FILE *f = tmpfile();
    sim_options_t opt = {.trace = f, .trace_rep = 2};
    metrics_summary_t m;
    CHECK(f && sim_run(&s, &opt, &m, &err) != 0);
    CHECK(err.code == ERR_INPUT);
    if (f) fclose(f);
    scenario_fini(&s);
}

int main(void)
{
    RUN(test_fields_and_counts);
    RUN(test_nesting);
    RUN(test_deep_window);
    RUN(test_many_in_flight);
    RUN(test_trace_rep);
    return check_done();
}
