/* test_thermal — the thermal model of a hardware card (sim/model/thermal.h)
 * and the battery metrics, against closed forms derived by hand here.
 *
 * RC node: dT/dt = (P·R − (T − T_amb))/τ. Under a constant power from T0,
 * T(t) = T∞ + (T0 − T∞)·e^(−t/τ) with T∞ = T_amb + P·R, so from T_amb a
 * step of P reaches T_th at t* = −τ·ln(1 − (T_th − T_amb)/(P·R)).
 *
 * Battery: a device draws power_w while it computes and idle_power_w
 * otherwise: E = P·busy + P_idle·(span − busy); %/h = 100·(E/span)/Wh.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "config/scenario.h"
#include "model/thermal.h"
#include "run/sim.h"
#include "stat/metrics.h"
#include "tracetest.h"

/* ---- the model alone ------------------------------------------------------ */

/* ambient 25, R 5 K/W, τ 60 s, levels at 45 (0.5) and 55 (0.25), hysteresis
 * 3; busy 8 W (T∞ 65), idle 0 W (T∞ 25). */
static thermal_cfg_t two_levels(void)
{
    thermal_cfg_t c = {.ambient = 25, .r_th = 5, .tau = 60, .hysteresis = 3,
                       .nlevels = 2};
    c.level[0] = (thermal_level_t){45, 0.5};
    c.level[1] = (thermal_level_t){55, 0.25};
    return c;
}

static void test_heating_closed_form(void)
{
    thermal_cfg_t c = two_levels();
    thermal_t th;
    thermal_init(&th, &c, 8, 0, 0, 1e9);
    CHECK(th.level == 0);
    CHECK_ABS(th.temp, 25, 0);
    thermal_advance(&th, 10, 1);
    CHECK_REL(th.temp, 65 - 40 * exp(-10.0 / 60), 1e-12);
    CHECK(th.level == 0);
    /* t1* = 60 ln(40/20), t2* = 60 ln(40/10) */
    double t1 = 60 * log(2.0), t2 = 60 * log(4.0);
    CHECK_REL(thermal_cross_time(&c, 8, 25, 45), t1, 1e-12);
    CHECK_REL(thermal_cross_time(&c, 8, 25, 55), t2, 1e-12);
    CHECK(isinf(thermal_cross_time(&c, 8, 25, 65)));   /* T∞ is never reached */
    CHECK(isinf(thermal_cross_time(&c, 8, 25, 70)));
    thermal_advance(&th, t1 - 1e-9, 1);
    CHECK(th.level == 0);
    thermal_advance(&th, t1 + 1e-9, 1);
    CHECK(th.level == 1);
    CHECK_ABS(thermal_speed(&th), 0.5, 0);
    thermal_advance(&th, 200, 1);
    CHECK(th.level == 2);
    CHECK_REL(th.temp, 65 - 40 * exp(-200.0 / 60), 1e-12);
    CHECK_REL(th.throttled_s, 200 - t1, 1e-12);
    CHECK_REL(th.speed_s, t1 + 0.5 * (t2 - t1) + 0.25 * (200 - t2), 1e-12);
}

/* Cooling from T(200) at 0 W: level 2 is left at 55 − 3 = 52, level 1 at
 * 42, at τ·ln((T0 − 25)/(x − 25)) after the power drops. */
static void test_cooling_hysteresis(void)
{
    thermal_cfg_t c = two_levels();
    thermal_t th;
    thermal_init(&th, &c, 8, 0, 0, 1e9);
    thermal_advance(&th, 200, 1);
    double T0 = th.temp;
    double d2 = 60 * log((T0 - 25) / (52 - 25.0)), d1 = 60 * log((T0 - 25) / (42 - 25.0));
    /* still level 2 below 55 but above 52: hysteresis */
    double below55 = 60 * log((T0 - 25) / (55 - 25.0));
    thermal_advance(&th, 200 + (below55 + d2) / 2, 0);
    CHECK(th.temp < 55 && th.level == 2);
    thermal_advance(&th, 200 + d2 + 1e-9, 0);
    CHECK(th.level == 1);
    thermal_advance(&th, 200 + d1 - 1e-9, 0);
    CHECK(th.level == 1);
    thermal_advance(&th, 200 + d1 + 1e-9, 0);
    CHECK(th.level == 0);
    thermal_advance(&th, 1000, 0);
    CHECK_REL(th.temp, 25 + (T0 - 25) * exp(-800.0 / 60), 1e-12);
    double t1 = 60 * log(2.0), t2 = 60 * log(4.0);
    CHECK_REL(th.throttled_s, 200 + d1 - t1, 1e-9);
    CHECK_REL(th.speed_s, t1 + 0.5 * (t2 - t1) + 0.25 * (200 + d2 - t2) +
                              0.5 * (d1 - d2) + (1000 - 200 - d1), 1e-9);
    /* heating again from below 42: back to level 1 only at 45 */
    thermal_t h2;
    thermal_init(&h2, &c, 8, 0, 0, 1e9);
    h2.temp = 43;
    h2.t = 0;
    thermal_advance(&h2, 1e-9, 1);
    CHECK(h2.level == 0);
}

/* The accumulators cover [lo, hi] only; `start` and the idle equilibrium. */
static void test_window_and_start(void)
{
    thermal_cfg_t c = two_levels();
    thermal_t th;
    thermal_init(&th, &c, 8, 0, 100, 150);
    thermal_advance(&th, 1000, 1);
    CHECK_REL(th.throttled_s, 50, 1e-12);
    CHECK_REL(th.speed_s, 0.25 * 50, 1e-12);
    thermal_init(&th, &c, 8, 2, 0, 1);        /* idle 2 W: 25 + 2·5 */
    CHECK_ABS(th.temp, 35, 0);
    c.has_start = 1;
    c.start = 56;
    thermal_init(&th, &c, 8, 2, 0, 1);
    CHECK(th.level == 2);
}

/* ---- in a run --------------------------------------------------------------- */

#define NTOK 20000

/* Perfect clocks (docs/formats.md, "drift"): the times below are exact. */
#define NO_DRIFT "drift: {start: 0s, edge: 0, cloud: 0}\n"

/* Edge-only, one tenant, always busy: 10 ms per token and 10 ms per prefill,
 * no think time, no jitter, no drift. A Snapdragon card (8 W) with R 5 K/W, τ 60 s and
 * one level at 45 °C, half speed: t* = 60·ln(40/20) = 41.589 s. */
#define EDGE_ONLY_YAML(device)                                                 \
    "name: thermal-step\n"                                                     \
    "seed: 1\n"                                                                \
    "duration: 120s\n"                                                         \
    "warmup: 0s\n"                                                             \
    "protocol: {mode: edge-only}\n"                                            \
    "tenants:\n"                                                               \
    "  count: 1\n"                                                             \
    "  edge:\n"                                                                \
    "    device: " device "\n"                                                 \
    "    draft_time: 10ms\n"                                                   \
    "    prefill_time: 10ms\n"                                                 \
    "  workload: {arrival: closed, think: 0s, prompt_tokens: 1, "              \
    "output_tokens: 1000}\n"                                                  \
    NO_DRIFT

#define SNAP "models/hardware/snapdragon-8-gen-3.yaml"
#define STEP_THERMAL                                                           \
    "{base: " SNAP ", thermal: {ambient: 25, r_th: 5, tau: 60s, "              \
    "levels: [{above: 45, speed: 0.5}]}}"

/* Runs yaml with its CSV trace; fills the times of its tokens (first_token
 * and commit rows, in order) into t (at most cap) and returns how many; the
 * time of the first `throttle` row into *thr (NAN when none), their number
 * into *nthr. */
static int run_traced(const char *yaml, metrics_summary_t *m, double *t, int cap,
                      double *thr, int *nthr)
{
    static const char *const ev[] = {"first_token", "commit", "throttle", NULL};
    static tracetest_row_t rows[2 * NTOK];
    scenario_t s;
    err_t e;
    memset(&s, 0, sizeof s);
    memset(m, 0, sizeof *m);
    if (scenario_load_string("thermal.yaml", yaml, NULL, 0, &s, &e) < 0) {
        printf("  load: %s\n", e.msg);
        check_failed_now = 1;
        return 0;
    }
    int nr = tracetest_run(&s, m, ev, rows, 2 * NTOK), n = 0;
    scenario_fini(&s);
    *thr = NAN;
    *nthr = 0;
    for (int k = 0; k < nr; k++) {
        if (!strcmp(rows[k].ev, "throttle")) {
            if (!(*nthr)++) *thr = rows[k].t;
            CHECK(rows[k].block == 1 && rows[k].tokens == 500);
        } else if (n < cap) {
            t[n++] = rows[k].t;
        }
    }
    return n;
}

static void test_step_switch_time(void)
{
    static double t[NTOK];
    metrics_summary_t m;
    double thr;
    int nthr;
    int n = run_traced(EDGE_ONLY_YAML(STEP_THERMAL), &m, t, NTOK, &thr, &nthr);
    double ts = -60 * log(1 - (45.0 - 25) / (8 * 5.0));
    /* every token took 10 ms until the first one started at or after t*,
     * and 20 ms from then on (always busy: it never cools) */
    int sw = -1;
    for (int k = 1; k < n; k++) {
        double gap = t[k] - t[k - 1];
        if (sw < 0 && gap > 0.015) sw = k;
        if (sw < 0) CHECK_ABS(gap, 0.010, 1e-9);
        else CHECK_ABS(gap, 0.020, 1e-9);
    }
    CHECK(sw > 0);
    if (sw > 0) {
        double start = t[sw - 1];   /* the first slow step started here */
        printf("  t* = %.6f s, first half-speed step starts at %.6f s\n", ts, start);
        CHECK(start >= ts && start - 0.010 < ts);
        CHECK_ABS(thr, start, 1e-12);
    }
    CHECK(nthr == 1);
    /* the device was below full speed from t* to the end */
    CHECK_REL(m.value[METRIC_EDGE_THROTTLED_FRAC], (120 - ts) / 120, 1e-9);
    CHECK_REL(m.value[METRIC_EDGE_DRAFT_SPEED_MEAN], (ts + 0.5 * (120 - ts)) / 120, 1e-9);
}

/* The same scenario without `thermal:`: 10 ms per token throughout, and the
 * thermal metrics undefined. */
static void test_no_thermal_unchanged(void)
{
    static double t[NTOK];
    metrics_summary_t m;
    double thr;
    int nthr;
    int n = run_traced(EDGE_ONLY_YAML(SNAP), &m, t, NTOK, &thr, &nthr);
    CHECK(n > 11000);
    for (int k = 1; k < n; k++) CHECK_ABS(t[k] - t[k - 1], 0.010, 1e-9);
    CHECK(nthr == 0);
    CHECK(isnan(m.value[METRIC_EDGE_THROTTLED_FRAC]));
    CHECK(isnan(m.value[METRIC_EDGE_DRAFT_SPEED_MEAN]));
    CHECK(isnan(m.value[METRIC_BATTERY_PCT_PER_H]));   /* no battery_wh */
}

/* Battery: edge-only, prefill 100 ms, 99 drafts of 10 ms, think 1 s; the
 * first request starts after a think time, so request k runs over
 * [1 + 2.09k, 2.09(k + 1)]. Over 21.4 s: 10 requests, busy 10 × 1.09 s,
 * idle 21.4 − 10.9 s. E = 8·10.9 + 0.5·10.5 = 92.45 J. */
static void test_battery_hand(void)
{
    const char *yaml =
        "name: battery\n"
        "seed: 1\n"
        "duration: 21.4s\n"
        "warmup: 0s\n"
        "protocol: {mode: edge-only}\n"
        "tenants:\n"
        "  count: 1\n"
        "  edge:\n"
        "    device: {base: " SNAP ", idle_power_w: 0.5, battery_wh: 19.4}\n"
        "    draft_time: 10ms\n"
        "    prefill_time: 100ms\n"
        "  workload: {arrival: closed, think: 1s, prompt_tokens: 1, output_tokens: 100}\n"
        NO_DRIFT;
    static double t[NTOK];
    metrics_summary_t m;
    double thr;
    int nthr;
    run_traced(yaml, &m, t, NTOK, &thr, &nthr);
    double busy = 10 * (0.1 + 99 * 0.01), span = 21.4;
    double E = 8 * busy + 0.5 * (span - busy);
    CHECK_ABS(m.value[METRIC_REQUESTS_DONE], 10, 0);
    CHECK_REL(m.value[METRIC_EDGE_J_PER_REQ], E / 10, 1e-9);
    CHECK_REL(m.value[METRIC_BATTERY_PCT_PER_H], 100 * (E / span) / 19.4, 1e-9);
    CHECK_REL(m.value[METRIC_EDGE_J_PER_TOK], 8 * busy / 1000, 1e-9);
    printf("  E = %.4f J: %.4f J/request, %.4f %%/h\n", E,
           m.value[METRIC_EDGE_J_PER_REQ], m.value[METRIC_BATTERY_PCT_PER_H]);
}

/* Two groups, as test_step_switch_time's tenant: "hot" with the thermal
 * model and a battery, "plain" without either. The thermal metrics count
 * only the devices that have a model (the fleet's equal the hot group's,
 * the plain group's are NaN); the battery's need every drafting device's
 * capacity (the fleet's NaN, the hot group's 100·8 W/20 Wh = 40 %/h: it is
 * always busy). */
static void test_groups_mixed(void)
{
    const char *yaml =
        "name: mixed\n"
        "seed: 1\n"
        "duration: 120s\n"
        "warmup: 0s\n"
        "protocol: {mode: edge-only}\n"
        "tenants:\n"
        "  edge: {draft_time: 10ms, prefill_time: 10ms}\n"
        "  workload: {arrival: closed, think: 0s, prompt_tokens: 1, output_tokens: 1000}\n"
        "  groups:\n"
        "    - name: hot\n"
        "      count: 2\n"
        "      edge:\n"
        "        device: {base: " SNAP ", battery_wh: 20, thermal: {ambient: 25, "
        "r_th: 5, tau: 60s, levels: [{above: 45, speed: 0.5}]}}\n"
        "    - name: plain\n"
        "      count: 1\n"
        NO_DRIFT;
    scenario_t s;
    err_t e;
    memset(&s, 0, sizeof s);
    int rc = scenario_load_string("mixed.yaml", yaml, NULL, 0, &s, &e);
    CHECK(rc == 0);
    if (rc) {
        printf("  %s\n", e.msg);
        return;
    }
    metrics_summary_t m, g[2];
    sim_options_t opt = {.groups = g};
    rc = sim_run(&s, &opt, &m, &e);
    scenario_fini(&s);
    CHECK(rc == 0);
    if (rc) return;
    double ts = 60 * log(2.0), frac = (120 - ts) / 120;
    CHECK_REL(m.value[METRIC_EDGE_THROTTLED_FRAC], frac, 1e-9);
    CHECK_REL(g[0].value[METRIC_EDGE_THROTTLED_FRAC], frac, 1e-9);
    CHECK(isnan(g[1].value[METRIC_EDGE_THROTTLED_FRAC]));
    CHECK(isnan(g[1].value[METRIC_EDGE_DRAFT_SPEED_MEAN]));
    CHECK(isnan(m.value[METRIC_BATTERY_PCT_PER_H]));
    CHECK_REL(g[0].value[METRIC_BATTERY_PCT_PER_H], 100 * 8 / 20.0, 1e-9);
    CHECK(isnan(g[1].value[METRIC_BATTERY_PCT_PER_H]));
}

/* ---- bad cards: one line, FILE:LINE:COL: key ---------------------------------- */

static void expect_error(const char *thermal, const char *want)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml, EDGE_ONLY_YAML("{base: " SNAP ", thermal: %s}"), thermal);
    scenario_t s;
    err_t e;
    memset(&s, 0, sizeof s);
    int rc = scenario_load_string("bad.yaml", yaml, NULL, 0, &s, &e);
    CHECK(rc < 0);
    if (rc < 0) {
        CHECK(e.code == ERR_INPUT);
        CHECK(strchr(e.msg, '\n') == NULL);
        if (strncmp(e.msg, want, strlen(want)) != 0) {
            printf("  got '%s', want '%s...'\n", e.msg, want);
            check_failed_now = 1;
        }
    } else {
        scenario_fini(&s);
    }
}

static void test_bad_cards(void)
{
    expect_error("{tau: 60s, levels: [{above: 45, speed: 0.5}]}",
                 "bad.yaml:9:70: tenants.edge.device.thermal.r_th: required key is missing");
    expect_error("{r_th: 5, tau: 60s, levels: [{above: 45, speed: 0.5}, {above: 44, speed: 0.4}]}",
                 "bad.yaml:9:132: tenants.edge.device.thermal.levels.1.above: must be above");
    expect_error("{r_th: 5, tau: 60s, levels: [{above: 45, speed: 0.5}, {above: 50, speed: 0.6}]}",
                 "bad.yaml:9:143: tenants.edge.device.thermal.levels.1.speed: must not exceed");
    expect_error("{r_th: 5, tau: 60s, levels: [{above: 45, speed: 0}]}",
                 "bad.yaml:9:118: tenants.edge.device.thermal.levels.0.speed:");
    expect_error("{r_th: 5, tau: 60s, levels: []}",
                 "bad.yaml:9:98: tenants.edge.device.thermal.levels: give 1 to 8 levels");
    expect_error("{r_th: 5, tau: 60s, levls: [{above: 45, speed: 0.5}]}",
                 "bad.yaml:9:90: tenants.edge.device.thermal.levls: unknown key");
    expect_error("{r_th: 5, tau: 0s, levels: [{above: 45, speed: 0.5}]}",
                 "bad.yaml:9:85: tenants.edge.device.thermal.tau:");
    expect_error("{r_th: 5, tau: 60s, levels: [{above: 45, speed: 0.5}]}, power_w: 0",
                 "bad.yaml:9:70: tenants.edge.device.thermal: needs power_w");
    expect_error("[1, 2]", "bad.yaml:9:70: tenants.edge.device.thermal: expected a mapping");
    expect_error("{r_th: 5, tau: 60s, levels: [3]}",
                 "bad.yaml:9:99: tenants.edge.device.thermal.levels.0: expected a mapping");
}

int main(void)
{
    RUN(test_heating_closed_form);
    RUN(test_cooling_hysteresis);
    RUN(test_window_and_start);
    RUN(test_step_switch_time);
    RUN(test_no_thermal_unchanged);
    RUN(test_battery_hand);
    RUN(test_groups_mixed);
    RUN(test_bad_cards);
    return check_done();
}
