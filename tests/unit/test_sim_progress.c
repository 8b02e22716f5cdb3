/* sim_options_t.progress: the library prints nothing, and reports each
 * replication to the caller's callback (what `specsim run` shows on a
 * terminal unless --quiet): called once per replication, in order, with the
 * count done and the total, and never for a run that fails before
 * simulating. */
#include <stdio.h>

#include "check.h"
#include "config/build.h"
#include "config/scenario.h"
#include "run/sim.h"

typedef struct calls {
    int n;             /* callbacks so far */
    int done[8];       /* their `done` arguments */
    int total[8];
} calls_t;

static void record(void *ctx, int done, int total)
{
    calls_t *c = ctx;
    if (c->n < 8) {
        c->done[c->n] = done;
        c->total[c->n] = total;
    }
    c->n++;
}

static const char yaml[] =
    "duration: 2s\n"
    "warmup: 0s\n"
    "replications: 3\n"
    "tenants: {count: 2}\n";

static void test_called_once_per_replication(void)
{
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load_string("t.yaml", yaml, NULL, 0, &s, &err) == 0);
    if (err.code) { printf("  %s\n", err.msg); return; }
    calls_t c = {0};
    sim_options_t opt = {.trace = NULL, .progress = record, .progress_ctx = &c};
    metrics_summary_t m;
    CHECK(sim_run(&s, &opt, &m, &err) == 0);
    CHECK(c.n == 3);
    for (int i = 0; i < 3; i++) {
        CHECK(c.done[i] == i + 1);
        CHECK(c.total[i] == 3);
    }
    /* The counts match the replications the summary was made of. */
    CHECK(m.reps == 3);
    scenario_fini(&s);
}

static void test_not_called_when_refused(void)
{
    scenario_t s;
    err_t err = {0};
    static const scenario_override_t ov[] = {{.path = "cloud.verify_time", .value = "5ms"}};
    CHECK(scenario_load_string("t.yaml", yaml, ov, 1, &s, &err) == 0);
    if (err.code) { printf("  %s\n", err.msg); return; }
    /* A service the run cannot build: with verify_time the loader built no
     * cloud model; without it (and the loader's build dropped, as for a
     * scenario made in code), the run builds one from a broken card. */
    s.cloud.has_verify_time = 0;
    s.cloud.target.layers = 0;
    build_free(s.built);
    s.built = NULL;
    calls_t c = {0};
    sim_options_t opt = {.trace = NULL, .progress = record, .progress_ctx = &c};
    metrics_summary_t m;
    CHECK(sim_run(&s, &opt, &m, &err) == -1);
    CHECK(c.n == 0);
    scenario_fini(&s);
}

int main(void)
{
    RUN(test_called_once_per_replication);
    RUN(test_not_called_when_refused);
    return check_done();
}
