/* The verifier's tally shipped to the edge fleet (testbed/tallyio.h): a
 * replication's events split between two tallies, one packed and added to
 * the other, give every metric the tally that saw all the events gives —
 * histograms (percentiles) included. */
#include <math.h>

#include "check.h"
#include "config/scenario.h"
#include "run/sim.h"
#include "tallyio.h"

static const char yaml[] =
    "duration: 10s\nwarmup: 1s\n"
    "protocol: {mode: sync, gamma: 4}\n"
    "tenants:\n"
    "  edge: {draft_time: 3ms, prefill_time: 10ms}\n"
    "  groups:\n"
    "    - {name: a, count: 2}\n"
    "    - {name: b, count: 3, slo: {ttft: 50ms, tpot: 20ms}}\n"
    "cloud: {verify_time: 8ms}\n";

/* The edge's events into e, the cloud's into c, all into both when c == e. */
static void feed(tally_t *e, tally_t *c, uint64_t seed)
{
    uint64_t x = seed;
    for (int k = 0; k < 4000; k++) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        double u = (double)(x >> 11) / 9007199254740992.0;
        int i = (int)(x >> 60) % 5;
        double now = 10 * u;
        tally_commit(e, i, now, 0.004 + 0.03 * u, 1 + k % 4);
        tally_verdict(e, i, now, 1 + k % 4, k % 3);
        tally_drafted(e, i, now, 4);
        tally_up_bytes(e, i, now, 60);
        tally_stall(e, i, now - 0.01, now);
        if (k % 50 == 0) tally_first_token(e, i, now, 0.02 + 0.05 * u);
        if (k % 60 == 0) tally_request_end(e, i, now, now - 1, now - 0.9, 64);
        tally_decode_time(e, i, now - 0.01, now);
        tally_accepted(c, i, now, k % 5, 4);
        tally_verified(c, i, now, 5, k % 17 == 0);
        tally_queue_delay(c, i, now, 0.001 + 0.01 * u);
        tally_down_bytes(c, i, now, 30);
        if (k % 3 == 0) {
            hist_add(c->batch, 1 + k % 7, 1);
            c->busy += 0.008;
            c->raw.iterations++;
        }
    }
}

static void test_split_equals_whole(void)
{
    scenario_t s;
    err_t err = {0, {0}};
    CHECK(scenario_load_string("tallyio", yaml, NULL, 0, &s, &err) == 0);
    if (err.msg[0]) printf("  %s\n", err.msg);
    tally_t *edge = sim_tally_create(&s), *cloud = sim_tally_create(&s),
            *whole = sim_tally_create(&s);
    CHECK(edge && cloud && whole);
    if (!edge || !cloud || !whole) return;
    feed(edge, cloud, 7);
    feed(whole, whole, 7);
    size_t n = tallyio_len(cloud);
    CHECK(n == tallyio_len(edge));
    double *v = malloc(n * sizeof *v);
    tallyio_pack(cloud, v);
    CHECK(tallyio_add(edge, v, n, &err) == 0);
    CHECK(tallyio_add(edge, v, n - 1, &err) != 0);   /* a wrong length is refused */
    metrics_rep_t a, b, ga[2], gb[2];
    tally_finish(edge, 1, 0, 1, &a, ga);
    tally_finish(whole, 1, 0, 1, &b, gb);
    for (int m = 0; m < METRIC_COUNT; m++) {
        if (isnan(b.v[m])) {
            CHECK(isnan(a.v[m]));
            continue;
        }
        CHECK_REL(a.v[m], b.v[m], 1e-12);
        for (int g = 0; g < 2; g++)
            if (!isnan(gb[g].v[m])) CHECK_REL(ga[g].v[m], gb[g].v[m], 1e-12);
    }
    /* The checks above are not vacuous: the split tallies differ. */
    metrics_rep_t c;
    tally_finish(cloud, 1, 0, 1, &c, NULL);
    CHECK(isnan(c.v[METRIC_ITL_MEAN]) || c.v[METRIC_ITL_MEAN] != b.v[METRIC_ITL_MEAN]);
    free(v);
    tally_free(edge);
    tally_free(cloud);
    tally_free(whole);
    scenario_fini(&s);
}

int main(void)
{
    RUN(test_split_equals_whole);
    return check_done();
}
