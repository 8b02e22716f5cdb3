/* The adaptive speculation-length policies `rtt` and `goodput`
 * (sim/gamma_rtt.c, sim/gamma_goodput.c).
 * 1. Their choice on hand cases: constant observations fed through the
 *    hook (sim/gamma.h), the argmax of the protocol's closed form worked
 *    out by hand below.
 * 2. The acceptance check: on scenarios/examples/gamma-adaptive.yaml (far:
 *    alpha 0.9, 150 ms, async window 2; near: alpha 0.5, 20 ms, sync; fixed
 *    draft 10 ms and verify 5 ms), each adaptive policy's fleet ITL is no
 *    worse than the best single fixed gamma of the sweep 1..gamma_max, and
 *    each group's ITL is within 5% of its best fixed gamma. */
#include <math.h>
#include <stdio.h>

#include "check.h"
#include "gamma.h"
#include "scenario.h"
#include "sim.h"

#define ROOT SPECSIM_ROOT "/"

/* ---- hand cases ---------------------------------------------------------- */

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
    gamma_env_t sync = {.alpha_prior = 0.8, .async = 0, .window = 1};
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
    gamma_env_t async1 = {.alpha_prior = 0.8, .async = 1, .window = 1};
    CHECK(choose("rtt", &async1, 10, five, 1, 4, 0.010, 0.050, 0) == 5);
    /* Async with a window that never stalls: rate = (1/(1-a)) /
     * (g·d/(1 - a^g) + R), and g/(1 - a^g) grows with g -> 1. */
    gamma_env_t async64 = {.alpha_prior = 0.8, .async = 1, .window = 64};
    CHECK(choose("rtt", &async64, 10, five, 1, 4, 0.010, 0.050, 0) == 1);
    /* No prior from the scenario: 0.8, so the first case again. */
    gamma_env_t none = {.alpha_prior = NAN, .async = 0, .window = 1};
    CHECK(choose("rtt", &none, 10, five, 1, 4, 0.010, 0.050, 0) == 4);
}

static void test_goodput_hand(void)
{
    /* Round trips that grow with the block: R(g) = 100 ms + 5 ms·(g + 1),
     * seen over blocks of 2..6 with 1 accepted (alpha 0.5 = the prior),
     * d = 2 ms. E[a+1] = 2 - 0.5^g over 0.002g + 0.1 + 0.005(g + 1):
     * g = 2: 1.75/0.119 = 14.71, g = 3: 1.875/0.126 = 14.88,
     * g = 4: 1.9375/0.133 = 14.57 -> 3. */
    gamma_env_t sync = {.alpha_prior = 0.5, .async = 0, .window = 1};
    int mix[] = {2, 3, 4, 5, 6};
    CHECK(choose("goodput", &sync, 10, mix, 5, 1, 0.002, 0.100, 0.005) == 3);
    /* One gamma only: the slope is unknown (0), R = 100 + 5·5 = 125 ms
     * flat: 1.9375/0.133 = 14.57 (g = 4) < 1.96875/0.135 = 14.58 (g = 5)
     * > 1.984/0.137 = 14.48 (g = 6) -> 5. */
    int four[] = {4};
    CHECK(choose("goodput", &sync, 10, four, 1, 1, 0.002, 0.100, 0.005) == 5);
}

/* ---- the mixed fleet ----------------------------------------------------- */

typedef struct itl { double fleet, fleet_ci, group[2]; } itl_t;

static itl_t run_fleet(const char *policy, const char *gamma)
{
    scenario_override_t ov[2] = {{.path = "protocol.gamma_policy", .value = policy},
                                 {.path = "protocol.gamma", .value = gamma}};
    scenario_t s;
    err_t err = {0};
    itl_t r = {NAN, NAN, {NAN, NAN}};
    if (scenario_load(ROOT "scenarios/examples/gamma-adaptive.yaml", ov, 2, &s, &err)) {
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

static void test_mixed_fleet(void)
{
    itl_t best = {INFINITY, 0, {INFINITY, INFINITY}};
    for (int gm = 1; gm <= GMAX; gm++) {
        char v[16];
        snprintf(v, sizeof v, "%d", gm);
        itl_t f = run_fleet("fixed", v);
        if (f.fleet < best.fleet) {
            best.fleet = f.fleet;
            best.fleet_ci = f.fleet_ci;
        }
        for (int k = 0; k < 2; k++) best.group[k] = fmin(best.group[k], f.group[k]);
    }
    printf("  best fixed: fleet %.2f ms (± %.2f), far %.2f ms, near %.2f ms\n",
           best.fleet * 1e3, best.fleet_ci * 1e3, best.group[0] * 1e3,
           best.group[1] * 1e3);
    const char *pols[] = {"rtt", "goodput"};
    for (int p = 0; p < 2; p++) {
        itl_t a = run_fleet(pols[p], "10");
        printf("  %-8s fleet %.2f ms (± %.2f), far %.2f ms, near %.2f ms\n", pols[p],
               a.fleet * 1e3, a.fleet_ci * 1e3, a.group[0] * 1e3, a.group[1] * 1e3);
        /* No worse than the best global fixed gamma, by more than both
         * 95% CIs together (so not by noise). */
        CHECK(a.fleet + a.fleet_ci + best.fleet_ci < best.fleet);
        for (int k = 0; k < 2; k++) CHECK(a.group[k] <= 1.05 * best.group[k]);
    }
}

int main(void)
{
    RUN(test_rtt_hand);
    RUN(test_goodput_hand);
    RUN(test_mixed_fleet);
    return check_done();
}
