/* The adaptive speculation-length policies `rtt` and `goodput`
 * (sim/model/gamma_rtt.c, sim/model/gamma_goodput.c).
 * 1. Their choice on hand cases: constant observations fed through the
 *    hook (sim/model/gamma.h), the argmax of the protocol's closed form worked
 *    out by hand below.
 * 2. The acceptance check: on scenarios/examples/gamma-adaptive.yaml (far:
 *    alpha 0.9, 150 ms, async window 2; near: alpha 0.5, 20 ms, sync; fixed
 *    draft 10 ms and verify 5 ms), each adaptive policy's fleet ITL is no
 *    worse than the best single fixed gamma of the sweep 1..gamma_max, and
 *    the fleet's and each group's ITL are within 5% of the best fixed gamma
 *    chosen per group (found by a sweep of each group's gamma).
 * 3. gamma 0 (plain remote decoding for a block, `goodput` only): chosen on
 *    a hand case where drafting cannot pay (alpha ~ 0, drafts slower than a
 *    round trip), and in a whole run, sync and async, where every token
 *    then takes exactly one round trip plus one verification. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "check.h"
#include "model/gamma.h"
#include "config/scenario.h"
#include "entity/proto.h"
#include "run/sim.h"

#define ROOT SPECSIM_ROOT "/"

/* ---- hand cases ---------------------------------------------------------- */

/* The rate a tenant of protocol `mode` hands its policy (edge_tenant_init). */
static gamma_rate_fn *rate_of(const char *mode)
{
    const proto_ops_t *p = proto_find(mode);
    CHECK(p != NULL && p->block_rate != NULL);
    return p ? p->block_rate : NULL;
}

/* Feeds n blocks of gamma g[k % ng] drafted in g·d seconds, each with
 * `accepted` drafts and a round trip rtt(g) = r0 + c·(g + 1). */
static void feed(const gamma_ops_t *pol, gamma_state_t *st, const int *g, int ng,
                 int accepted, double d, double r0, double c, int n)
{
    double t = 0;
    for (int k = 0; k < n; k++) {
        int gk = g[k % ng];
        double sent = t + gk * d, back = sent + r0 + c * (gk + 1);
        pol->on_sent(st, 0, gk, t, sent);
        pol->on_verdict(st, 0, gk, accepted, sent, back);
        t = back;
    }
}

static int choose(const char *name, const gamma_env_t *env, int gmax, const int *g,
                  int ng, int accepted, double d, double r0, double c)
{
    const gamma_ops_t *pol = gamma_find(name);
    gamma_state_t st;
    CHECK(pol != NULL && gamma_state_init_env(&st, pol, gmax, 0, env) == 0);
    /* Nothing observed yet: protocol.gamma. */
    CHECK(pol->next(&st, 0, 0) == gmax);
    feed(pol, &st, g, ng, accepted, d, r0, c, 200);
    int x = pol->next(&st, 0, 0);
    gamma_state_fini(&st, pol);
    return x;
}

static void test_rtt_hand(void)
{
    /* Sync, alpha 0.8 (prior 0.8, blocks of 5 with 4 accepted: 4 of 5
     * evaluated drafts, so the estimate stays 0.8), d = 10 ms, R = 50 ms.
     * E[a+1] = (1 - 0.8^(g+1))/0.2 over 0.01g + 0.05:
     * g = 3: 2.952/0.08 = 36.90, g = 4: 3.3616/0.09 = 37.35,
     * g = 5: 3.6893/0.10 = 36.89 -> 4. */
    gamma_env_t sync = {.alpha_prior = 0.8, .rate = rate_of("sync"), .window = 1};
    int five[] = {5};
    CHECK(choose("rtt", &sync, 10, five, 1, 4, 0.010, 0.050, 0) == 4);
    /* gamma_max below the argmax: the best within [1, 3] is 3. */
    CHECK(choose("rtt", &sync, 3, five, 1, 4, 0.010, 0.050, 0) == 3);
    /* The estimate follows the verdicts: blocks of 4 with 1 accepted (1 of
     * 2 evaluated) move alpha from the prior 0.8 to 0.5; with d = 10 ms and
     * R = 25 ms, 1.5/0.035 = 42.9 beats 1.75/0.045 = 38.9 -> 1. */
    int four[] = {4};
    CHECK(choose("rtt", &sync, 10, four, 1, 1, 0.010, 0.025, 0) == 1);
    /* Async with one block in flight: each block takes gd + R and commits
     * g if all accepted, else a + 1: (g·0.8^g + sum_{i<g} (i+1)·0.8^i·0.2)
     * / (0.01g + 0.05): g = 4: 32.80, g = 5: 33.62, g = 6: 33.54 -> 5. */
    gamma_env_t async1 = {.alpha_prior = 0.8, .rate = rate_of("async"), .window = 1};
    CHECK(choose("rtt", &async1, 10, five, 1, 4, 0.010, 0.050, 0) == 5);
    /* Async with a window that never stalls: rate = (1/(1-a)) /
     * (g·d/(1 - a^g) + R), and g/(1 - a^g) grows with g -> 1. */
    gamma_env_t async64 = {.alpha_prior = 0.8, .rate = rate_of("async"), .window = 64};
    CHECK(choose("rtt", &async64, 10, five, 1, 4, 0.010, 0.050, 0) == 1);
    /* No prior from the scenario: 0.8, so the first case again. */
    gamma_env_t none = {.alpha_prior = NAN, .rate = rate_of("sync"), .window = 1};
    CHECK(choose("rtt", &none, 10, five, 1, 4, 0.010, 0.050, 0) == 4);
}

static void test_goodput_hand(void)
{
    /* Round trips that grow with the block: R(g) = 100 ms + 5 ms·(g + 1),
     * seen over blocks of 2..6 with 1 accepted (alpha 0.5 = the prior),
     * d = 2 ms. E[a+1] = 2 - 0.5^g over 0.002g + 0.1 + 0.005(g + 1):
     * g = 2: 1.75/0.119 = 14.71, g = 3: 1.875/0.126 = 14.88,
     * g = 4: 1.9375/0.133 = 14.57 -> 3. */
    gamma_env_t sync = {.alpha_prior = 0.5, .rate = rate_of("sync"), .window = 1};
    int mix[] = {2, 3, 4, 5, 6};
    CHECK(choose("goodput", &sync, 10, mix, 5, 1, 0.002, 0.100, 0.005) == 3);
    /* One gamma only: the slope is unknown (0), R = 100 + 5·5 = 125 ms
     * flat: 1.9375/0.133 = 14.57 (g = 4) < 1.96875/0.135 = 14.58 (g = 5)
     * > 1.984/0.137 = 14.48 (g = 6) -> 5. */
    int four[] = {4};
    CHECK(choose("goodput", &sync, 10, four, 1, 1, 0.002, 0.100, 0.005) == 5);
}

static void test_goodput_zero(void)
{
    /* Blocks of 4 with nothing accepted (alpha from the prior 0.1 to ~0),
     * d = 50 ms, R = 20 ms flat: no drafts give 1/0.02 = 50 tok/s, gamma 1
     * at most (1 + 0.1)/(0.05 + 0.02) = 15.7 -> 0, sync or async. */
    gamma_env_t sync = {.alpha_prior = 0.1, .rate = rate_of("sync"), .window = 1};
    gamma_env_t async2 = {.alpha_prior = 0.1, .rate = rate_of("async"), .window = 2};
    int four[] = {4};
    CHECK(choose("goodput", &sync, 10, four, 1, 0, 0.050, 0.020, 0) == 0);
    CHECK(choose("goodput", &async2, 10, four, 1, 0, 0.050, 0.020, 0) == 0);
    /* Alpha ~0.1 (blocks of 4, a tenth of the evaluated drafts accepted
     * as the prior says) with d = 10 ms: at most 1.2/0.03 = 40 < 50 tok/s
     * (even at the optimistic alpha 0.2) -> 0; but at alpha 0.99, 1.99/0.03
     * = 66 > 50, so drafting could pay: every 16th block is a probe of
     * one draft (the first call after feeding returned 0 above, counted). */
    {
        const gamma_ops_t *pol = gamma_find("goodput");
        gamma_state_t st;
        CHECK(gamma_state_init_env(&st, pol, 10, 0, &sync) == 0);
        int ten[] = {10};
        feed(pol, &st, ten, 1, 0, 0.010, 0.020, 0, 1);
        /* One block of 10 with none accepted: 1 evaluated, 0 accepted:
         * alpha = 0.1/(1 + ...) ~ 0.05 after the EWMA step. */
        int zeros = 0, probes = 0, first_probe = -1;
        for (int k = 1; k <= 48; k++) {
            int g = pol->next(&st, 0, 0);
            zeros += g == 0;
            probes += g == 1;
            if (g == 1 && first_probe < 0) first_probe = k;
        }
        CHECK(zeros == 45 && probes == 3 && first_probe == 16);
        gamma_state_fini(&st, pol);
    }
    /* Alpha 0.9 (4 of 4 accepted) and d = 5 ms: gamma 1 gives 1.9/0.025 =
     * 76 tok/s > 50: drafting pays -> >= 1. */
    gamma_env_t hi = {.alpha_prior = 0.9, .rate = rate_of("sync"), .window = 1};
    CHECK(choose("goodput", &hi, 10, four, 1, 4, 0.005, 0.020, 0) >= 1);
}

/* One tenant whose drafts (50 ms each) cannot pay at alpha 0.02 over a
 * 20 ms round trip and 5 ms verification: goodput turns to gamma 0 after
 * the first verdict (the first block, before the warm-up ends, drafts
 * gamma_max), and each token then costs R + verify = 25 ms: a sync block
 * waits for its verdict; an async one too (nothing can be drafted past a
 * token the edge has not seen). The whole run commits what it decodes.
 * Perfect clocks (no drift): each gap is exactly 25 ms. */
static void test_goodput_zero_run(void)
{
    static const char *modes[] = {"sync", "async"};
    for (int k = 0; k < 2; k++) {
        char yaml[1024];
        snprintf(yaml, sizeof yaml,
                 "seed: 3\nduration: 60s\nwarmup: 5s\nreplications: 2\n"
                 "protocol: {mode: %s, gamma: 4, window: 2, gamma_policy: goodput}\n"
                 "acceptance: {model: iid, alpha: 0.02}\n"
                 "tenants:\n  count: 1\n  edge: {draft_time: 50ms, prefill_time: 0s}\n"
                 "  network: {rtt: 20ms, jitter: none, uplink: inf, downlink: inf}\n"
                 "  workload: {arrival: closed, think: 0s, prompt_tokens: 1, "
                 "output_tokens: 100000000}\n"
                 "cloud: {verify_time: 5ms, batching: {policy: continuous}}\n"
                 "drift: {start: 0s, edge: 0, cloud: 0}\n",   /* every gap exact */
                 modes[k]);
        scenario_t s;
        err_t err = {0};
        if (scenario_load_string("zero", yaml, NULL, 0, &s, &err)) {
            printf("  load: %s\n", err.msg);
            CHECK(0);
            continue;
        }
        metrics_summary_t m;
        sim_options_t opt = {0};
        CHECK(sim_run(&s, &opt, &m, &err) == 0);
        double itl = m.value[METRIC_ITL_MEAN], p99 = m.value[METRIC_ITL_P99];
        printf("  %-5s goodput: ITL mean %.6f ms, p99 %.6f ms (R + verify = 25 ms)\n",
               modes[k], itl * 1e3, p99 * 1e3);
        CHECK(fabs(itl - 0.025) < 1e-9);
        /* p99 from the bounded-memory sketch: within its relative error. */
        CHECK(fabs(p99 - 0.025) < 0.025 * 0.01);
        scenario_fini(&s);
    }
}

/* ---- what the protocol supplies ------------------------------------------ */

/* The policies learn the protocol's rate from the tenant's set-up, never by
 * name. Walked over both registries: a policy that uses_rate refuses to
 * start without one (it would call through NULL) and starts with the rate
 * of every protocol that gives one, which is a positive rate; a policy
 * that does not use it starts either way. A protocol that gives none, run
 * with `rtt` from a scenario built in code (the loader refuses it at
 * protocol.gamma_policy, which a scenario built in code skips), is an error
 * that names it, not a crash. */
static void test_rate_from_protocol(void)
{
    const char *pol[64], *pro[64];
    size_t npol = gamma_names(pol, 64), npro = proto_names(pro, 64);
    CHECK(npol >= 1 && npol <= 64 && npro >= 1 && npro <= 64);
    int adaptive = 0, rates = 0;
    for (size_t i = 0; i < npol && i < 64; i++) {
        const gamma_ops_t *g = gamma_find(pol[i]);
        CHECK(g != NULL);
        if (!g) continue;
        adaptive += g->uses_rate;
        gamma_state_t st;
        gamma_env_t none = {.alpha_prior = 0.8, .window = 1};
        int rc = gamma_state_init_env(&st, g, 4, 0, &none);
        CHECK(rc == (g->uses_rate ? -1 : 0));
        if (rc == 0) gamma_state_fini(&st, g);
        for (size_t j = 0; j < npro && j < 64; j++) {
            const proto_ops_t *p = proto_find(pro[j]);
            CHECK(p != NULL);
            if (!p || !p->block_rate) continue;
            rates += i == 0;
            double x = p->block_rate(0.8, 4, 0.010, 0.050, 2);
            CHECK(isfinite(x) && x > 0);
            gamma_env_t env = {.alpha_prior = 0.8, .rate = p->block_rate, .window = 2};
            CHECK(gamma_state_init_env(&st, g, 4, 0, &env) == 0);
            gamma_state_fini(&st, g);
        }
    }
    CHECK(adaptive >= 1 && rates >= 1);
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load_string("norate", "protocol: {mode: sync, gamma_policy: rtt}\n"
                               "duration: 1s\nwarmup: 0s\nreplications: 1\n",
                               NULL, 0, &s, &err) == 0);
    proto_ops_t norate = *proto_find("sync");
    norate.block_rate = NULL;
    s.protocol.proto = &norate;
    s.groups[0].protocol.proto = NULL;   /* the scenario's */
    metrics_summary_t m;
    sim_options_t opt = {0};
    CHECK(sim_run(&s, &opt, &m, &err) == -1);
    CHECK(strstr(err.msg, "needs the protocol's block_rate") != NULL);
    scenario_fini(&s);
}

/* ---- the mixed fleet ----------------------------------------------------- */

typedef struct itl { double fleet, fleet_ci, group[2]; } itl_t;

/* The fleet with protocol.gamma_policy `policy` and protocol.gamma g_far for
 * the far group, g_near for the near one. */
static itl_t run_fleet2(const char *policy, int g_far, int g_near)
{
    char far[16], near[16];
    snprintf(far, sizeof far, "%d", g_far);
    snprintf(near, sizeof near, "%d", g_near);
    scenario_override_t ov[3] = {
        {.path = "protocol.gamma_policy", .value = policy},
        {.path = "tenants.groups.far.protocol.gamma", .value = far},
        {.path = "tenants.groups.near.protocol.gamma", .value = near}};
    scenario_t s;
    err_t err = {0};
    itl_t r = {NAN, NAN, {NAN, NAN}};
    if (scenario_load(ROOT "scenarios/examples/gamma-adaptive.yaml", ov, 3, &s, &err)) {
        printf("  load: %s\n", err.msg);
        CHECK(0);
        return r;
    }
    CHECK(s.ngroups == 2);
    metrics_summary_t m, g[2];
    sim_options_t opt = {.groups = g};
    CHECK(sim_run(&s, &opt, &m, &err) == 0);
    r.fleet = m.value[METRIC_ITL_MEAN];
    r.fleet_ci = m.ci95[METRIC_ITL_MEAN];
    for (int k = 0; k < 2; k++) r.group[k] = g[k].value[METRIC_ITL_MEAN];
    scenario_fini(&s);
    return r;
}

#define GMAX 10

/* The acceptance check of the adaptive policies against two references:
 *  - the best single global fixed gamma (a sweep of 1..GMAX for both groups):
 *    the adaptive fleet ITL must beat it by more than both 95% CIs;
 *  - the best fixed gamma chosen per group: a sweep of each group's gamma
 *    over 1..GMAX with the other group at its best gamma of the global sweep
 *    (the groups share only a cloud of fixed verify time, so one pass each
 *    finds the pair), then the fleet run at that pair. The adaptive fleet
 *    ITL, and each group's, must be within 5% of it. */
static void test_mixed_fleet(void)
{
    itl_t best = {INFINITY, 0, {INFINITY, INFINITY}};
    int arg[2] = {1, 1};   /* each group's best gamma in the global sweep */
    for (int gm = 1; gm <= GMAX; gm++) {
        itl_t f = run_fleet2("fixed", gm, gm);
        if (f.fleet < best.fleet) {
            best.fleet = f.fleet;
            best.fleet_ci = f.fleet_ci;
        }
        for (int k = 0; k < 2; k++)
            if (f.group[k] < best.group[k]) {
                best.group[k] = f.group[k];
                arg[k] = gm;
            }
    }
    printf("  best global fixed: fleet %.2f ms (± %.2f); far alone best at %d, near at %d\n",
           best.fleet * 1e3, best.fleet_ci * 1e3, arg[0], arg[1]);
    /* Per group: each group's line with the other at its best. */
    int pick[2] = {arg[0], arg[1]};
    for (int k = 0; k < 2; k++) {
        double top = INFINITY;
        for (int gm = 1; gm <= GMAX; gm++) {
            itl_t f = k == 0 ? run_fleet2("fixed", gm, arg[1]) : run_fleet2("fixed", arg[0], gm);
            if (f.group[k] < top) {
                top = f.group[k];
                pick[k] = gm;
            }
        }
    }
    itl_t per = run_fleet2("fixed", pick[0], pick[1]);
    printf("  best per-group fixed (far %d, near %d): fleet %.2f ms (± %.2f), far %.2f ms, "
           "near %.2f ms\n", pick[0], pick[1], per.fleet * 1e3, per.fleet_ci * 1e3,
           per.group[0] * 1e3, per.group[1] * 1e3);
    /* The per-group pair is at least as good as the global one. */
    CHECK(per.fleet <= best.fleet);
    const char *pols[] = {"rtt", "goodput"};
    for (int p = 0; p < 2; p++) {
        itl_t a = run_fleet2(pols[p], GMAX, GMAX);
        printf("  %-8s fleet %.2f ms (± %.2f), far %.2f ms, near %.2f ms; fleet %+.1f%% "
               "against the per-group pair\n", pols[p], a.fleet * 1e3, a.fleet_ci * 1e3,
               a.group[0] * 1e3, a.group[1] * 1e3, 100 * (a.fleet / per.fleet - 1));
        /* No worse than the best global fixed gamma, by more than both
         * 95% CIs together (so not by noise). */
        CHECK(a.fleet + a.fleet_ci + best.fleet_ci < best.fleet);
        CHECK(a.fleet <= 1.05 * per.fleet);
        for (int k = 0; k < 2; k++) CHECK(a.group[k] <= 1.05 * per.group[k]);
    }
}

int main(void)
{
    RUN(test_rtt_hand);
    RUN(test_goodput_hand);
    RUN(test_goodput_zero);
    RUN(test_goodput_zero_run);
    RUN(test_rate_from_protocol);
    RUN(test_mixed_fleet);
    return check_done();
}
