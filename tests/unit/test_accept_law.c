/* test_accept_law — every acceptance model's block law, against an
 * independent derivation and against the simulator.
 *
 * The law (accept_cfg_law): for each model, P(a = k) is checked against a
 * closed form derived here by hand, and every part of every law sums to 1
 * from every start state.
 *
 * The simulator: a scenario with the model in sync mode, fixed draft and
 * verify times and one GPU per tenant (nothing queues), at two gammas. A
 * sync block commits a + 1 tokens, so in the long run accepted_len_mean =
 * E[a + 1] and acceptance_rate = E[a] / gamma, with E over the model's own
 * law (for markov the law with the hidden state carried from block to block,
 * for beta the mixture over the tenants' alphas, for trace the empirical
 * law). Every tenant verifies the same number of blocks (fixed times), so
 * the pooled metric is the tenants' average. Each simulated value must lie
 * within its 99.9% confidence half-width (the reported ci95, over R
 * replications, widened by t(0.9995, R-1) / t(0.975, R-1)) plus a slack for the window edges: per tenant, one block at each edge of the
 * measured window may be counted or not, i.e. 2 (gamma + 1) / B of the mean
 * over B blocks; for a trace, whose replay is deterministic (ci95 = 0), a
 * window of B blocks holds whole cycles plus at most n - 1 entries, so the
 * slack is n (gamma + 1) / B. Eight checks are random (four models, two
 * gammas; a gamma's two metrics move together), so at 95% each a correct
 * change to how the simulator consumes random numbers would fail the file
 * about one time in three; at 99.9% each (Bonferroni), the file fails by
 * chance about one time in a hundred. The seeds are fixed, so a given
 * build's run is deterministic.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "model/accept.h"
#include "accepttest.h"
#include "check.h"
#include "stat/metrics.h"
#include "config/scenario.h"
#include "run/sim.h"
#include "simtest.h"

#define DRAFT 0.001    /* s per drafted token */
#define DELAY 0.0045   /* rtt 4 ms + verify 0.5 ms */
#define DURATION 30.0 /* s; beta runs shorter with more tenants */
#define WARMUP 2.0
#define REPS 8

/* ---- the law's long-run expectations ----------------------------------- */

/* P(a = k, next state s2 | state s) of part p. */
static double pk_s(const accept_law_t *L, int p, int s, int k, int s2)
{
    return k < L->gamma ? *accept_law_rej(L, p, s, k, s2) : L->part[p].full[s][s2];
}

/* Long-run E[a] of part p: the block-start state is a Markov chain with
 * T[s][s2] = sum_k P(k, s2 | s); its stationary law weights E[a | s]. A
 * chain that never switches keeps the part's start law. */
static double part_Ea(const accept_law_t *L, int p)
{
    double Es[2] = {0, 0}, T[2][2] = {{0, 0}, {0, 0}};
    for (int s = 0; s < L->ns; s++)
        for (int k = 0; k <= L->gamma; k++)
            for (int s2 = 0; s2 < L->ns; s2++) {
                Es[s] += k * pk_s(L, p, s, k, s2);
                T[s][s2] += pk_s(L, p, s, k, s2);
            }
    if (L->ns == 1) return Es[0];
    double out = T[0][1] + T[1][0];
    double rho = out > 0 ? T[1][0] / out : L->part[p].start[0];
    return rho * Es[0] + (1 - rho) * Es[1];
}

/* The mixture over parts, weighted by the parts' shares. */
static double law_Ea(const accept_law_t *L)
{
    double num = 0, den = 0;
    for (int p = 0; p < L->nparts; p++) {
        num += L->part[p].weight * part_Ea(L, p);
        den += L->part[p].weight;
    }
    return num / den;
}

/* Every part, from every start state, sums to 1. */
static void check_sums(const accept_law_t *L, const char *what)
{
    for (int p = 0; p < L->nparts; p++)
        for (int s = 0; s < L->ns; s++) {
            double t = 0;
            for (int k = 0; k <= L->gamma; k++)
                for (int s2 = 0; s2 < L->ns; s2++) t += pk_s(L, p, s, k, s2);
            if (!(fabs(t - 1) <= 1e-12)) {
                printf("  %s: part %d state %d sums to %.15g\n", what, p, s, t);
                check_failed_now = 1;
            }
        }
}

/* Mixture P(a = k) over the parts (start law of each). */
static double mix_p(const accept_law_t *L, int k)
{
    double num = 0, den = 0;
    for (int p = 0; p < L->nparts; p++) {
        num += L->part[p].weight * accept_law_p(L, p, k);
        den += L->part[p].weight;
    }
    return num / den;
}

static int law_of(const char *yaml, int gamma, accept_cfg_t *c, accept_law_t *L)
{
    err_t e;
    accepttest_cfg(c, yaml);
    if (accept_cfg_law(c, gamma, L, &e) != 0) {
        printf("  %s: %s\n", yaml, e.msg);
        check_failed_now = 1;
        accept_cfg_fini(c);
        return -1;
    }
    check_sums(L, yaml);
    return 0;
}

/* ---- the laws against hand derivations --------------------------------- */

/* iid: P(a = k) = alpha^k (1 - alpha) for k < gamma, alpha^gamma at gamma. */
static void test_law_iid(void)
{
    const int gammas[] = {1, 4, 9};
    for (int i = 0; i < 3; i++) {
        accept_cfg_t c;
        accept_law_t L;
        if (law_of("{model: iid, alpha: 0.7}", gammas[i], &c, &L) != 0) return;
        double pk[16];
        simtest_law_iid(0.7, gammas[i], pk);
        for (int k = 0; k <= gammas[i]; k++) CHECK_REL(mix_p(&L, k), pk[k], 1e-12);
        CHECK(L.nparts == 1 && L.ns == 1);
        CHECK_REL(accept_cfg_mean(&c, gammas[i]), 0.7, 1e-15);
        accept_law_fini(&L);
        accept_cfg_fini(&c);
    }
}

/* positional [0.9, 0.6, 0.3], gamma 5: P(a >= k) = prod_{i<k} alpha_i with
 * 0.3 repeating: 1, 0.9, 0.54, 0.162, 0.0486, 0.01458. Mean over the five
 * positions: (0.9 + 0.6 + 3 * 0.3) / 5 = 0.48. */
static void test_law_positional(void)
{
    accept_cfg_t c;
    accept_law_t L;
    if (law_of("{model: positional, alphas: [0.9, 0.6, 0.3]}", 5, &c, &L) != 0) return;
    const double ge[] = {1, 0.9, 0.54, 0.162, 0.0486, 0.01458, 0};
    for (int k = 0; k < 5; k++) CHECK_REL(mix_p(&L, k), ge[k] - ge[k + 1], 1e-12);
    CHECK_REL(mix_p(&L, 5), ge[5], 1e-12);
    CHECK_REL(accept_cfg_mean(&c, 5), 0.48, 1e-12);
    accept_law_fini(&L);
    accept_cfg_fini(&c);
}

/* beta(a, b): over the tenants' alpha, P(a = k) = E[alpha^k (1 - alpha)] =
 * B(a + k, b + 1) / B(a, b) = prod_{j<k} (a + j)/(a + b + j) · b/(a + b + k)
 * for k < gamma, and E[alpha^gamma] = prod_{j<gamma} (a + j)/(a + b + j). */
static void test_law_beta(void)
{
    const double a = 3, b = 1.5;
    const int gammas[] = {4, 200};
    for (int i = 0; i < 2; i++) {
        int g = gammas[i];
        accept_cfg_t c;
        accept_law_t L;
        if (law_of("{model: beta, a: 3, b: 1.5}", g, &c, &L) != 0) return;
        double m = 1;   /* E[alpha^k] */
        for (int k = 0; k < g; k++) {
            CHECK_REL(mix_p(&L, k), m * b / (a + b + k), 1e-9);
            m *= (a + k) / (a + b + k);
        }
        CHECK_REL(mix_p(&L, g), m, 1e-9);
        CHECK_REL(accept_cfg_mean(&c, g), a / (a + b), 1e-15);
        accept_law_fini(&L);
        accept_cfg_fini(&c);
    }
}

/* markov: the long-run E[a] of the law equals simtest_markov_Ea, derived
 * independently in simtest.h; from the good state with alpha_good = 1 and no
 * switching out of it, the block is full. */
static void test_law_markov(void)
{
    accept_cfg_t c;
    accept_law_t L;
    const char *y = "{model: markov, alpha_good: 0.9, alpha_bad: 0.3, p_good_bad: 0.1, "
                    "p_bad_good: 0.3}";
    for (int g = 1; g <= 6; g += 5) {
        if (law_of(y, g, &c, &L) != 0) return;
        CHECK_REL(law_Ea(&L), simtest_markov_Ea(0.9, 0.3, 0.1, 0.3, g), 1e-12);
        /* Start law = per-draft stationary law: 0.3 / 0.4 good. */
        CHECK_REL(L.part[0].start[0], 0.75, 1e-15);
        CHECK_REL(accept_cfg_mean(&c, g), 0.75 * 0.9 + 0.25 * 0.3, 1e-12);
        accept_law_fini(&L);
        accept_cfg_fini(&c);
    }
    if (law_of("{model: markov, alpha_good: 1, alpha_bad: 0.5, p_good_bad: 0, "
               "p_bad_good: 0.5}", 3, &c, &L) != 0)
        return;
    CHECK_REL(L.part[0].full[0][0], 1, 1e-15);   /* good stays good, all accepted */
    CHECK_REL(law_Ea(&L), 3, 1e-12);             /* bad is left for good for ever */
    accept_law_fini(&L);
    accept_cfg_fini(&c);
}

/* A frozen chain (no switching) has every law stationary; the model's one
 * choice, half the tenants good, must hold in its mean, its law and the
 * simulator's initial state alike. With alpha_good = 1, alpha_bad = 0 and
 * gamma = 1 a tenant's first draw is 1 exactly when it starts good. */
static void test_frozen_chain(void)
{
    accept_cfg_t c;
    accept_law_t L;
    if (law_of("{model: markov, alpha_good: 1, alpha_bad: 0, p_good_bad: 0, "
               "p_bad_good: 0}", 1, &c, &L) != 0)
        return;
    CHECK(L.part[0].start[0] == 0.5 && L.part[0].start[1] == 0.5);
    CHECK(accept_cfg_mean(&c, 1) == 0.5);
    CHECK_REL(law_Ea(&L), 0.5, 1e-15);
    const int n = 20000;
    long good = 0;
    for (int t = 0; t < n; t++) {
        err_t e;
        accept_t *a = accept_create(&c, 3, 0, t, &e);
        CHECK(a != NULL);
        if (!a) break;
        good += accept_draw(a, 1);
        accept_free(a);
    }
    /* Binomial(n, 1/2): 4 standard deviations. */
    CHECK_ABS((double)good / n, 0.5, 4 * sqrt(0.25 / n));
    accept_law_fini(&L);
    accept_cfg_fini(&c);
}

/* trace {0, 3, 5, 2, 7, 1, 4} at gamma 4: min(v, 4) = 0, 3, 4, 2, 4, 1, 4,
 * so P(a = k) = 1/7 for k = 0..3 and 3/7 at 4. */
static void test_law_trace(void)
{
    static const int tr[] = {0, 3, 5, 2, 7, 1, 4};
    accept_cfg_t c;
    err_t e;
    CHECK(accepttest_trace(&c, tr, 7, &e) == 0);
    accept_law_t L;
    CHECK(accept_cfg_law(&c, 4, &L, &e) == 0);
    check_sums(&L, "trace");
    for (int k = 0; k < 4; k++) CHECK_REL(mix_p(&L, k), 1.0 / 7, 1e-12);
    CHECK_REL(mix_p(&L, 4), 3.0 / 7, 1e-12);
    CHECK(isnan(accept_cfg_mean(&c, 4)));
    accept_law_fini(&L);
    accept_cfg_fini(&c);
}

/* ---- the simulator against the law --------------------------------------- */

static int simulate(const char *acceptance, int gamma, int tenants, double duration,
                    metrics_summary_t *m)
{
    char yaml[2048];
    snprintf(yaml, sizeof yaml,
             "name: accept-law\n"
             "seed: 11\n"
             "duration: %gs\n"
             "warmup: %gs\n"
             "replications: %d\n"
             "protocol: {mode: sync, gamma: %d}\n"
             "acceptance: %s\n"
             "tenants:\n"
             "  count: %d\n"
             "  edge: {draft_time: 1ms, prefill_time: 0s}\n"
             "  network: {rtt: 4ms, jitter: none, uplink: inf, downlink: inf}\n"
             "  workload: {arrival: closed, think: 0s, prompt_tokens: 1, "
             "output_tokens: 100000000}\n"
             "cloud:\n"
             "  replicas: %d\n"
             "  pinning: round-robin\n"
             "  verify_time: 0.5ms\n"
             "  batching: {policy: continuous, max_batch: 1}\n",
             duration, WARMUP, REPS, gamma, acceptance, tenants, tenants);
    scenario_t s;
    err_t e;
    if (scenario_load_string("accept-law", yaml, NULL, 0, &s, &e) != 0) {
        printf("  load: %s\n", e.msg);
        check_failed_now = 1;
        return -1;
    }
    sim_options_t opt = {.trace = NULL};
    int rc = sim_run(&s, &opt, m, &e);
    if (rc != 0) {
        printf("  run: %s\n", e.msg);
        check_failed_now = 1;
    }
    scenario_fini(&s);
    return rc;
}

static void within(const char *what, int gamma, const char *metric, double got,
                   double ci95, double want, double slack)
{
    double widen = gsl_cdf_tdist_Pinv(0.9995, REPS - 1) / gsl_cdf_tdist_Pinv(0.975, REPS - 1);
    double tol = widen * ci95 + slack;
    printf("  %-10s gamma %d %-18s law %.6f sim %.6f (ci99.9 %.2g + slack %.2g)\n", what,
           gamma, metric, want, got, widen * ci95, slack);
    if (!(fabs(got - want) <= tol) || !(ci95 >= 0)) check_failed_now = 1;
}

/* One model at one gamma with `tenants` tenants; trace_n > 0: a trace of
 * that many entries. */
static void sim_vs_law(const char *what, const char *acceptance, int gamma, int tenants,
                       double duration, int trace_n)
{
    accept_cfg_t c;
    accept_law_t L;
    if (law_of(acceptance, gamma, &c, &L) != 0) return;
    double Ea = law_Ea(&L);
    accept_law_fini(&L);
    accept_cfg_fini(&c);
    metrics_summary_t m;
    if (simulate(acceptance, gamma, tenants, duration, &m) != 0) return;
    double blocks = (duration - WARMUP) / (gamma * DRAFT + DELAY);   /* per tenant */
    double edge = (trace_n > 0 ? trace_n : 2) * (gamma + 1) / blocks;
    within(what, gamma, "accepted_len_mean", m.value[METRIC_ACCEPTED_LEN_MEAN],
           m.ci95[METRIC_ACCEPTED_LEN_MEAN], Ea + 1, edge);
    within(what, gamma, "acceptance_rate", m.value[METRIC_ACCEPTANCE_RATE],
           m.ci95[METRIC_ACCEPTANCE_RATE], Ea / gamma, edge / gamma);
}

static void test_sim_iid(void)
{
    sim_vs_law("iid", "{model: iid, alpha: 0.75}", 2, 8, DURATION, 0);
    sim_vs_law("iid", "{model: iid, alpha: 0.75}", 5, 8, DURATION, 0);
}

static void test_sim_positional(void)
{
    const char *y = "{model: positional, alphas: [0.95, 0.8, 0.6, 0.4]}";
    sim_vs_law("positional", y, 2, 8, DURATION, 0);
    sim_vs_law("positional", y, 5, 8, DURATION, 0);
}

static void test_sim_beta(void)
{
    /* Many tenants: the spread of the tenants' alphas dominates the CI. */
    sim_vs_law("beta", "{model: beta, a: 4, b: 1.5}", 2, 128, 8.0, 0);
    sim_vs_law("beta", "{model: beta, a: 4, b: 1.5}", 5, 128, 8.0, 0);
}

static void test_sim_markov(void)
{
    const char *y = "{model: markov, alpha_good: 0.95, alpha_bad: 0.3, "
                    "p_good_bad: 0.05, p_bad_good: 0.15}";
    sim_vs_law("markov", y, 2, 8, DURATION, 0);
    sim_vs_law("markov", y, 5, 8, DURATION, 0);
}

/* Block lengths replay only at their recorded gamma (the largest value
 * here): one trace per gamma. */
static void test_sim_trace(void)
{
    static const int tr2[] = {0, 2, 2, 2, 2, 1, 2, 2, 2, 2, 0};
    static const int tr5[] = {0, 3, 5, 2, 5, 1, 4, 4, 5, 2, 0};
    const int n = sizeof tr2 / sizeof *tr2;
    char path[32], y[96];
    CHECK(accepttest_trace_file(tr2, n, path) == 0);
    snprintf(y, sizeof y, "{model: trace, file: %s}", path);
    sim_vs_law("trace", y, 2, 8, DURATION, n);
    unlink(path);
    CHECK(accepttest_trace_file(tr5, n, path) == 0);
    snprintf(y, sizeof y, "{model: trace, file: %s}", path);
    sim_vs_law("trace", y, 5, 8, DURATION, n);
    unlink(path);
}

/* Per-position outcomes replay at any gamma; the law is that of the blocks
 * of one pass through the stream (every tenant falls into that cycle after
 * its first 0, so the slack allows a cycle of up to 40 blocks). */
static void test_sim_trace_positions(void)
{
    static const char text[] = "# format: positions\n"
                               "11110\n1\n10\n111\n0\n1111111\n110\n0\n1\n11\n";
    char path[64], y[96];
    CHECK(check_tmp_file(path, sizeof path, text) == 0);
    snprintf(y, sizeof y, "{model: trace, file: %s}", path);
    sim_vs_law("positions", y, 2, 8, DURATION, 40);
    sim_vs_law("positions", y, 5, 8, DURATION, 40);
    unlink(path);
}

int main(void)
{
    RUN(test_law_iid);
    RUN(test_law_positional);
    RUN(test_law_beta);
    RUN(test_law_markov);
    RUN(test_frozen_chain);
    RUN(test_law_trace);
    RUN(test_sim_iid);
    RUN(test_sim_positional);
    RUN(test_sim_beta);
    RUN(test_sim_markov);
    RUN(test_sim_trace);
    RUN(test_sim_trace_positions);
    return check_done();
}
