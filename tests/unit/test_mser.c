/* MSER-5 (sim/stat/mser.h) on constructed series whose answer follows from the
 * definition, and warmup: auto / the warm-up diagnostic of a run. */
#include <math.h>
#include <string.h>

#include "../check.h"
#include "stat/mser.h"
#include "config/scenario.h"
#include "run/sim.h"

#define N 1000

/* Batch means alternate +1, -1 around 10 (each batch of 5 bins is flat):
 * keeping k - d batches, sum of squares = k - d (+ at most 1 for an odd
 * count), so the error ~ 1 / (k - d) grows with d: pick 0. */
static void alternating(double *x, int n)
{
    for (int i = 0; i < n; i++) x[i] = 10 + ((i / MSER_BATCH) % 2 ? -1 : 1);
}

static void test_stationary_picks_zero(void)
{
    double x[N];
    alternating(x, N);
    CHECK(mser_pick(x, N, MSER_BATCH) == 0);
    for (int i = 0; i < N; i++) x[i] = 3;   /* flat: every d ties */
    CHECK(mser_pick(x, N, MSER_BATCH) == 0);
}

/* A ramp over the first R bins (R a multiple of 5, from 100 down to the
 * level), then the stationary pattern: any d that keeps the ramp's early
 * batches has a squared deviation of order 100^2 against about 1 per batch
 * after, so the pick is the ramp's end, within a batch (the ramp's last
 * batch lies within the noise of the level, and may be kept). */
static void test_ramp_end(void)
{
    int ends[3] = {50, 135, 400};
    for (int r = 0; r < 3; r++) {
        double x[N];
        alternating(x, N);
        int R = ends[r];
        for (int i = 0; i < R; i++) x[i] = 100 - 90.0 * i / R;
        int p = mser_pick(x, N, MSER_BATCH);
        CHECK(p % MSER_BATCH == 0);
        CHECK(p >= R - MSER_BATCH && p <= R);
    }
    /* A ramp ending inside a batch: the pick is that batch's edge, within
     * one batch of the end. */
    double x[N];
    alternating(x, N);
    for (int i = 0; i < 73; i++) x[i] = 100 - 90.0 * i / 73;
    int p = mser_pick(x, N, MSER_BATCH);
    CHECK(p % MSER_BATCH == 0);
    CHECK(p >= 70 && p <= 75);
}

/* The search covers the first half only: a transient longer than half the
 * run is not deleted past it; and a series too short for two batches gives
 * 0. */
static void test_limits(void)
{
    double x[N];
    alternating(x, N);
    for (int i = 0; i < 800; i++) x[i] = 1000 - i;
    CHECK(mser_pick(x, N, MSER_BATCH) <= N / 2);
    CHECK(mser_pick(x, 9, MSER_BATCH) == 0);
}

static void test_series_bins(void)
{
    mser_series_t s;
    err_t err = {0};
    CHECK(mser_series_init(&s, 10, 5.0, &err) == 0);
    CHECK_ABS(s.bin_s, 0.5, 0);
    mser_series_add(&s, 0.0, 1);
    mser_series_add(&s, 0.49, 2);
    mser_series_add(&s, 0.5, 4);
    mser_series_add(&s, 4.99, 8);
    mser_series_add(&s, 5.0, 16);    /* past the end: ignored */
    CHECK(s.x[0] == 3 && s.x[1] == 4 && s.x[9] == 8);
    double sum = 0;
    for (int i = 0; i < 10; i++) sum += s.x[i];
    CHECK(sum == 15);
    mser_series_fini(&s);
}

/* A run: the diagnostic covers every replication, and with warmup: auto
 * the warm-up deleted is the mean of the per-replication picks, each a
 * multiple of 5 bins of duration / 1000, within the first half. */
static void test_run_auto(void)
{
    const char *yaml =
        "duration: 20s\nwarmup: auto\nreplications: 2\n"
        "protocol: {mode: sync, gamma: 4}\n"
        "tenants: {count: 4, edge: {draft_time: 10ms, prefill_time: 10ms},\n"
        "  workload: {output_tokens: 50}}\n"
        "cloud: {verify_time: 5ms}\n";
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load_string("t", yaml, NULL, 0, &s, &err) == 0);
    CHECK(s.warmup_auto == 1 && s.warmup == 0);
    sim_warmup_diag_t d;
    sim_options_t opt = {.warmup = &d};
    metrics_summary_t m;
    CHECK(sim_run(&s, &opt, &m, &err) == 0);
    CHECK_ABS(d.bin_s, 20.0 / MSER_BINS, 1e-12);
    double batch = MSER_BATCH * d.bin_s;
    CHECK(d.pick_max_s >= 0 && d.pick_max_s <= 10 + 1e-9);
    CHECK_ABS(fmod(d.pick_max_s / batch + 0.5, 1.0), 0.5, 1e-6);
    CHECK_ABS(d.used_s, d.pick_mean_s, 1e-12);
    CHECK(d.pick_mean_s <= d.pick_max_s + 1e-12);
    scenario_fini(&s);
}

/* `warmup: auto` survives check's round trip. */
static void test_auto_round_trip(void)
{
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load_string("t", "warmup: auto\n", NULL, 0, &s, &err) == 0);
    char buf[16384];
    FILE *f = fmemopen(buf, sizeof buf, "w");
    CHECK(f && scenario_write_yaml(&s, f) == 0);
    if (f) fclose(f);
    CHECK(strstr(buf, "\nwarmup: auto\n") != NULL);
    scenario_fini(&s);
}

int main(void)
{
    RUN(test_stationary_picks_zero);
    RUN(test_ramp_end);
    RUN(test_limits);
    RUN(test_series_bins);
    RUN(test_run_auto);
    RUN(test_auto_round_trip);
    return check_done();
}
