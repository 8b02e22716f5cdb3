/* accstat and accfit (kernels/llm/accstat.h, accfit.h) against
 * expectations derived independently of their code:
 *   - block counts, acceptance per position and runs of two small streams
 *     counted by hand (a text's cut-short last block not counted);
 *   - a trace written and read back (streams at `# request` lines, header
 *     lines, a line's outcomes after its first 0 dropped as the simulator
 *     drops them, a file without `# request` one stream) and the files
 *     refused (per-block, a bad character), with their line;
 *   - the block laws of iid and positional against their closed forms,
 *     beta against B(a + k, b + 1)/B(a, b) and, for a and b beyond ln B's
 *     precision, against iid; markov against its special cases (equal
 *     emissions: iid; a frozen chain: half good, half bad, as the
 *     simulator) and against a Monte Carlo run of the chain through blocks
 *     drawn as sim/model/accept_markov.c draws them;
 *   - Pearson's χ² and its p by hand (p from the closed form of the χ²
 *     tail for 3 degrees of freedom), the pooling of sparse bins, df < 1
 *     giving no test, positional at γ = 8 (and at a γ whose blocks are
 *     the blocks of 8) labelled exact;
 *   - the positional fit's carried values for positions never reached;
 *   - the markov log-likelihood of a 2-outcome stream by hand;
 *   - parameter recovery: outcomes drawn with a fixed-seed generator from a
 *     known 2-state chain (one chain through every text, started in its
 *     stationary law, as the simulator's tenant) and from known Beta(a, b)
 *     texts, fitted, each parameter within a tolerance set by the sample
 *     size; the markov fit's likelihood at least the true parameters'. */
#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <gsl/gsl_sf_gamma.h>

#include "accfit.h"
#include "accstat.h"
#include "check.h"

static const uint8_t A_[] = {1, 1, 0, 1, 1, 1, 1, 0, 1};
static const uint8_t B_[] = {0, 0, 1, 1};

static void test_counts_by_hand(void)
{
    accstat_stream_t st[2] = {{A_, 9, "a"}, {B_, 4, "b"}};
    accstat_t s;
    accstat_compute(st, 2, &s);
    CHECK(s.outcomes == 13 && s.accepted == 9);
    /* γ = 2. A: 11 | 0 | 11 | 11 | 0 | 1 (cut); B: 0 | 0 | 11. */
    CHECK(s.counts[2][0] == 4 && s.counts[2][1] == 0 && s.counts[2][2] == 4);
    CHECK(accstat_blocks(&s, 2) == 8);
    /* γ = 4. A: 110 | 1111 | 0 | 1 (cut); B: 0 | 0 | 11 (cut). */
    CHECK(s.counts[4][0] == 3 && s.counts[4][1] == 0 && s.counts[4][2] == 1 &&
          s.counts[4][3] == 0 && s.counts[4][4] == 1);
    CHECK(accstat_blocks(&s, 4) == 5);
    /* Position i: blocks with a ≥ i over blocks with a ≥ i − 1. */
    CHECK_ABS(accstat_position(&s, 4, 1), 2.0 / 5.0, 1e-15);
    CHECK_ABS(accstat_position(&s, 4, 2), 2.0 / 2.0, 1e-15);
    CHECK_ABS(accstat_position(&s, 4, 3), 1.0 / 2.0, 1e-15);
    CHECK_ABS(accstat_position(&s, 4, 4), 1.0 / 1.0, 1e-15);
    CHECK(accstat_reached(&s, 4, 1) == 5 && accstat_reached(&s, 4, 3) == 2);
    /* γ = 8: A: 110 | 11110 | 1 (cut); B: 0 | 0 | 11 (cut): no block has
     * a ≥ 5, so positions 6.. are never reached. */
    CHECK(accstat_reached(&s, 8, 6) == 0 && isnan(accstat_position(&s, 8, 6)));
    /* Runs. A: 11 0 1111 0 1; B: 00 11. */
    CHECK(s.run1[1] == 1 && s.run1[2] == 2 && s.run1[4] == 1 && s.run1[3] == 0);
    CHECK(s.run0[1] == 2 && s.run0[2] == 1);
}

/* A trace written by accstat_write_trace reads back as the same streams. */
static void test_trace_round_trip(void)
{
    accstat_stream_t st[2] = {{A_, 9, "prompt 0 (chat, line 3)"}, {B_, 4, "prompt 1"}};
    const char *hdr[2] = {"first header line", "second"};
    char path[64];
    FILE *f = check_tmp_open(path, sizeof path, "w");
    if (!f) return;
    CHECK(accstat_write_trace(f, hdr, 2, st, 2) == 0);
    CHECK(fclose(f) == 0);
    accstat_trace_t t;
    err_t err = {0, ""};
    CHECK(accstat_read_trace(path, &t, &err) == 0);
    unlink(path);
    if (t.ns != 2) {
        CHECK(t.ns == 2);
        accstat_trace_free(&t);
        return;
    }
    CHECK(t.st[0].n == 9 && t.st[1].n == 4);
    CHECK(memcmp(t.st[0].o, A_, 9) == 0 && memcmp(t.st[1].o, B_, 4) == 0);
    CHECK_STR(t.st[0].label, "prompt 0 (chat, line 3)");
    CHECK_STR(t.st[1].label, "prompt 1");
    CHECK(t.nh == 2);
    if (t.nh == 2) {
        CHECK_STR(t.header[0], "first header line");
        CHECK_STR(t.header[1], "second");
    }
    accstat_trace_free(&t);
}

static void test_trace_read_rules(void)
{
    char path[64];
    accstat_trace_t t;
    err_t err = {0, ""};
    /* No `# request` line: one stream; "1101" is evaluated up to its
     * first 0 only (110), as the simulator reads it; blank lines and a
     * trailing '\r' are skipped. */
    if (check_tmp_file(path, sizeof path, "# format: positions\n# a header\n1101\n\n111\r\n0\n"))
        return;
    CHECK(accstat_read_trace(path, &t, &err) == 0);
    unlink(path);
    if (t.ns == 1) {
        static const uint8_t want[] = {1, 1, 0, 1, 1, 1, 0};
        CHECK(t.st[0].n == 7 && memcmp(t.st[0].o, want, 7) == 0);
        CHECK(t.nh == 1 && !strcmp(t.header[0], "a header"));
    }
    CHECK(t.ns == 1);
    accstat_trace_free(&t);
    /* A per-block file holds no outcomes to fit. */
    if (check_tmp_file(path, sizeof path, "# gamma: 4\n3\n4\n")) return;
    CHECK(accstat_read_trace(path, &t, &err) == -1);
    CHECK(strstr(err.msg, ":2: not a per-position trace") != NULL);
    unlink(path);
    /* A bad character, at its line. */
    if (check_tmp_file(path, sizeof path, "# format: positions\n# request: x\n11\n1x0\n")) return;
    CHECK(accstat_read_trace(path, &t, &err) == -1);
    CHECK(strstr(err.msg, ":4: '1x0' is not a string of 0s and 1s") != NULL);
    unlink(path);
    /* No outcome. */
    if (check_tmp_file(path, sizeof path, "# format: positions\n# request: x\n")) return;
    CHECK(accstat_read_trace(path, &t, &err) == -1);
    CHECK(strstr(err.msg, "no draft outcome") != NULL);
    unlink(path);
    CHECK(accstat_read_trace("/nonexistent/trace.txt", &t, &err) == -1);
}

static double sum_law(const double *law, int gamma)
{
    double s = 0;
    for (int k = 0; k <= gamma; k++) s += law[k];
    return s;
}

static void test_laws_closed_forms(void)
{
    accfit_t f;
    memset(&f, 0, sizeof f);
    f.alpha = 0.7;
    const double pos[ACCFIT_POS] = {0.5, 0.6, 0.7, 0.8, 0.9, 0.95, 0.97, 0.99};
    memcpy(f.pos, pos, sizeof pos);
    double law[ACCSTAT_GMAX + 1];
    for (int g = 1; g <= ACCSTAT_GMAX; g++) {
        accfit_law(&f, ACCFIT_IID, g, law);
        for (int k = 0; k < g; k++) CHECK_ABS(law[k], pow(0.7, k) * 0.3, 1e-14);
        CHECK_ABS(law[g], pow(0.7, g), 1e-14);
        accfit_law(&f, ACCFIT_POSITIONAL, g, law);
        double reach = 1;
        for (int k = 0; k < g; k++) {
            double p = pos[k < ACCFIT_POS ? k : ACCFIT_POS - 1];   /* the last repeats */
            CHECK_ABS(law[k], reach * (1 - p), 1e-14);
            reach *= p;
        }
        CHECK_ABS(law[g], reach, 1e-14);
        CHECK_ABS(sum_law(law, g), 1.0, 1e-13);
    }
    /* Acceptance per position of a law gives back the positional values. */
    accfit_law(&f, ACCFIT_POSITIONAL, 8, law);
    for (int i = 1; i <= 8; i++) CHECK_ABS(accfit_law_position(law, 8, i), pos[i - 1], 1e-12);
    /* beta: P(a = k) = B(a + k, b + 1)/B(a, b), P(a = γ) = B(a + γ, b)/B(a, b). */
    f.a = 5.99;
    f.b = 2.05;
    for (int g = 1; g <= 8; g++) {
        accfit_law(&f, ACCFIT_BETA, g, law);
        for (int k = 0; k < g; k++)
            CHECK_REL(law[k], gsl_sf_beta(f.a + k, f.b + 1) / gsl_sf_beta(f.a, f.b), 1e-10);
        CHECK_REL(law[g], gsl_sf_beta(f.a + g, f.b) / gsl_sf_beta(f.a, f.b), 1e-10);
    }
    /* Huge a, b: the mixture is iid at a/(a + b) (ln B would lose it). */
    f.a = 7e7;
    f.b = 3e7;
    accfit_law(&f, ACCFIT_BETA, 4, law);
    for (int k = 0; k < 4; k++) CHECK_ABS(law[k], pow(0.7, k) * 0.3, 1e-7);
    /* markov with equal emissions is iid whatever the switching. */
    f.good = f.bad = 0.7;
    f.p_gb = 0.3;
    f.p_bg = 0.05;
    accfit_law(&f, ACCFIT_MARKOV, 4, law);
    for (int k = 0; k < 4; k++) CHECK_ABS(law[k], pow(0.7, k) * 0.3, 1e-14);
    /* A frozen chain: half the tenants good, half bad (sim/model/accept_markov.c). */
    f.good = 0.9;
    f.bad = 0.2;
    f.p_gb = f.p_bg = 0;
    accfit_law(&f, ACCFIT_MARKOV, 4, law);
    for (int k = 0; k < 4; k++)
        CHECK_ABS(law[k], 0.5 * pow(0.9, k) * 0.1 + 0.5 * pow(0.2, k) * 0.8, 1e-14);
    CHECK_ABS(law[4], 0.5 * pow(0.9, 4) + 0.5 * pow(0.2, 4), 1e-14);
}

/* sim/model/accept_markov.c's draw: one uniform per evaluated draft, u < p
 * accepts, and the residual decides the switch. */
static int markov_block(int *good, const accfit_t *f, gsl_rng *r, int gamma)
{
    for (int i = 0; i < gamma; i++) {
        double p = *good ? f->good : f->bad, sw = *good ? f->p_gb : f->p_bg;
        double u = gsl_rng_uniform(r);
        int ok = u < p;
        double res = ok ? u / p : (u - p) / (1 - p);
        if (res < sw) *good = !*good;
        if (!ok) return i;
    }
    return gamma;
}

/* The block law of markov against blocks drawn one after another through
 * one chain, as a simulated tenant draws them. */
static void test_markov_law_monte_carlo(void)
{
    accfit_t f;
    memset(&f, 0, sizeof f);
    f.good = 0.9;
    f.bad = 0.35;
    f.p_gb = 0.15;
    f.p_bg = 0.25;
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, 12345);
    enum { N = 400000, G = 4 };
    long cnt[G + 1] = {0};
    int good = gsl_rng_uniform(r) < f.p_bg / (f.p_gb + f.p_bg);
    for (int i = 0; i < N; i++) cnt[markov_block(&good, &f, r, G)]++;
    gsl_rng_free(r);
    double law[ACCSTAT_GMAX + 1];
    accfit_law(&f, ACCFIT_MARKOV, G, law);
    /* Successive blocks are correlated through the state; with these fast
     * switches the correlation is weak: 6 binomial standard errors. */
    for (int k = 0; k <= G; k++)
        CHECK_ABS((double)cnt[k] / N, law[k], 6 * sqrt(law[k] * (1 - law[k]) / N));
    /* The block-start law is not the per-draft stationary law: after a
     * rejection the bad state is likelier. That the law differs from the
     * stationary-start mixture shows the check can tell them apart. */
    double pg = f.p_bg / (f.p_gb + f.p_bg), stat0 = pg * (1 - f.good) + (1 - pg) * (1 - f.bad);
    CHECK(fabs(stat0 - law[0]) > 12 * sqrt(law[0] * (1 - law[0]) / N));
}

static void test_chi2_by_hand(void)
{
    accstat_t s;
    memset(&s, 0, sizeof s);
    const long c[5] = {50, 30, 10, 6, 4};
    memcpy(s.counts[4], c, sizeof c);
    const double law[5] = {0.5, 0.25, 0.125, 0.0625, 0.0625};
    int bins, df;
    double p, tv;
    double chi = accfit_chi2(&s, 4, law, 1, &bins, &df, &p, &tv);
    /* (O − E)²/E: 0 + 25/25 + 6.25/12.5 + 0.0625/6.25 + 5.0625/6.25. */
    CHECK_ABS(chi, 2.32, 1e-12);
    CHECK(bins == 5 && df == 3);
    /* χ² tail for 3 df: erfc(√(x/2)) + √(2x/π) e^(−x/2). */
    CHECK_ABS(p, erfc(sqrt(2.32 / 2)) + sqrt(2 * 2.32 / M_PI) * exp(-2.32 / 2), 1e-12);
    CHECK_ABS(tv, 0.5 * (0 + 0.05 + 0.025 + 0.0025 + 0.0225), 1e-12);
    /* Sparse bins: the law of iid 0.1 on 100 blocks expects 90, 9,
     * 0.9, 0.09, 0.01; the last three (1.0 together, under 5) join the 9. */
    const long c2[5] = {88, 9, 2, 1, 0};
    memcpy(s.counts[4], c2, sizeof c2);
    const double law2[5] = {0.9, 0.09, 0.009, 0.0009, 0.0001};
    chi = accfit_chi2(&s, 4, law2, 1, &bins, &df, &p, &tv);
    CHECK(bins == 2 && df == 0 && isnan(p));
    CHECK_ABS(chi, 4.0 / 90 + 4.0 / 10, 1e-12);
}

static void test_gof_labels(void)
{
    /* A stream of blocks of 8: enough blocks at every position. */
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, 7);
    enum { N = 6000 };
    uint8_t *o = malloc(N);
    for (int i = 0; i < N; i++) o[i] = gsl_rng_uniform(r) < 0.7;
    gsl_rng_free(r);
    accstat_stream_t st = {o, N, NULL};
    accstat_t s;
    accstat_compute(&st, 1, &s);
    accfit_t f;
    err_t err = {0, ""};
    CHECK(accfit_fit(&st, 1, &s, &f, &err) == 0);
    accfit_gof_t g;
    accfit_gof(&s, &f, ACCFIT_POSITIONAL, 8, &g);
    CHECK(g.exact && isnan(g.chi2) && isnan(g.p) && g.tv < 1e-12);
    accfit_gof(&s, &f, ACCFIT_POSITIONAL, 4, &g);   /* 4 parameters, 5 bins */
    CHECK(!g.exact && g.df == 0 && isnan(g.chi2) && isnan(g.p));
    accfit_gof(&s, &f, ACCFIT_MARKOV, 2, &g);       /* 4 parameters, 3 bins */
    CHECK(g.df < 1 && isnan(g.chi2));
    accfit_gof(&s, &f, ACCFIT_IID, 8, &g);
    CHECK(g.df == 7 && g.bins == 9 && !isnan(g.p));
    /* An iid stream: the iid law is not rejected at 1e-4. */
    CHECK(g.p > 1e-4);
    CHECK_ABS(f.alpha, (double)s.accepted / (double)s.outcomes, 1e-15);
    CHECK_ABS(f.loglik_iid, (double)s.accepted * log(f.alpha) +
                                (double)(s.outcomes - s.accepted) * log(1 - f.alpha), 1e-6);
    free(o);
}

/* Positions no block of 8 reached carry the value before; every value in
 * [0, 1]. Streams: blocks 0, 10, 110, 1110 repeated (a ≤ 3). */
static void test_positional_carry(void)
{
    static const uint8_t pat[] = {0, 1, 0, 1, 1, 0, 1, 1, 1, 0};
    uint8_t o[400];
    for (int i = 0; i < 400; i++) o[i] = pat[i % 10];
    accstat_stream_t st = {o, 400, NULL};
    accstat_t s;
    accstat_compute(&st, 1, &s);
    accfit_t f;
    err_t err = {0, ""};
    CHECK(accfit_fit(&st, 1, &s, &f, &err) == 0);
    /* 40 blocks of each kind: position 1: 120/160, 2: 80/120, 3: 40/80,
     * 4: 0/40, then never reached: carried. */
    CHECK_ABS(f.pos[0], 0.75, 1e-15);
    CHECK_ABS(f.pos[1], 80.0 / 120, 1e-15);
    CHECK_ABS(f.pos[2], 0.5, 1e-15);
    CHECK_ABS(f.pos[3], 0.0, 1e-15);
    for (int i = 4; i < ACCFIT_POS; i++) CHECK(f.pos[i] == 0.0 && f.pos_reached[i] == 0);
    CHECK(f.pos_reached[3] == 40 && f.pos_reached[0] == 160);
    /* No block of 8 accepted 4 or more: the blocks of 4 are the blocks of
     * 8, and positional is exact there too; blocks of 2 differ (110 is
     * 11 | 0 in blocks of 2). */
    accfit_gof_t g;
    accfit_gof(&s, &f, ACCFIT_POSITIONAL, 4, &g);
    CHECK(g.exact && g.tv < 1e-15);
    accfit_gof(&s, &f, ACCFIT_POSITIONAL, 2, &g);
    CHECK(!g.exact);
    char buf[512];
    CHECK(accfit_overrides(&f, ACCFIT_POSITIONAL, buf, sizeof buf) == 0);
    CHECK_STR(buf, "--set acceptance.model=positional --set acceptance.alphas=[0.750000,"
                   "0.666667,0.500000,0.000000,0.000000,0.000000,0.000000,0.000000]");
    CHECK(accfit_overrides(&f, ACCFIT_IID, buf, 8) == -1);   /* too small a buffer */
}

static void test_markov_loglik_by_hand(void)
{
    static const uint8_t o[] = {1, 0};
    accstat_stream_t st = {o, 2, NULL};
    accfit_t f;
    memset(&f, 0, sizeof f);
    f.good = 0.8;
    f.bad = 0.3;
    f.p_gb = 0.1;
    f.p_bg = 0.2;
    /* π_good = 0.2/0.3; P(1, 0) = Σ_s π_s e_s Σ_s' A[s][s'] (1 − e_s'). */
    double pg = 2.0 / 3, want = pg * 0.8 * (0.9 * 0.2 + 0.1 * 0.7) +
                                (1 - pg) * 0.3 * (0.2 * 0.2 + 0.8 * 0.7);
    CHECK_ABS(accfit_markov_loglik(&f, &st, 1), log(want), 1e-12);
    /* Frozen: π = 1/2 each. */
    f.p_gb = f.p_bg = 0;
    CHECK_ABS(accfit_markov_loglik(&f, &st, 1), log(0.5 * 0.8 * 0.2 + 0.5 * 0.3 * 0.7), 1e-12);
}

/* Outcomes from a known chain: good 0.9, bad 0.4, p_gb 0.02, p_bg 0.05,
 * one chain through 100 texts of 300 outcomes (a simulated tenant's
 * requests), started in the stationary law. */
static void test_markov_recovery(void)
{
    const accfit_t tr = {.good = 0.9, .bad = 0.4, .p_gb = 0.02, .p_bg = 0.05};
    enum { TEXTS = 100, LEN = 300, N = TEXTS * LEN };
    uint8_t *o = malloc(N);
    accstat_stream_t st[TEXTS];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, 2024);
    const double pg = tr.p_bg / (tr.p_gb + tr.p_bg);
    int good = gsl_rng_uniform(r) < pg;
    for (int i = 0; i < N; i++) {
        double p = good ? tr.good : tr.bad, sw = good ? tr.p_gb : tr.p_bg;
        double u = gsl_rng_uniform(r);
        o[i] = u < p;
        if ((o[i] ? u / p : (u - p) / (1 - p)) < sw) good = !good;
    }
    gsl_rng_free(r);
    for (int k = 0; k < TEXTS; k++) st[k] = (accstat_stream_t){o + k * LEN, LEN, NULL};
    accstat_t s;
    accstat_compute(st, TEXTS, &s);
    accfit_t f;
    err_t err = {0, ""};
    CHECK(accfit_fit(st, TEXTS, &s, &f, &err) == 0);
    /* Tolerances from the sample size: the states' expected visits
     * N π_s; an emission's binomial standard error √(e(1 − e)/(N π_s)),
     * a switch probability's √(p(1 − p)/(N π_s)); the hidden state
     * roughly doubles them (states are inferred, not seen); 4 of those. */
    double ng = N * pg, nb = N * (1 - pg);
    CHECK_ABS(f.good, tr.good, 8 * sqrt(tr.good * (1 - tr.good) / ng));
    CHECK_ABS(f.bad, tr.bad, 8 * sqrt(tr.bad * (1 - tr.bad) / nb));
    CHECK_ABS(f.p_gb, tr.p_gb, 8 * sqrt(tr.p_gb * (1 - tr.p_gb) / ng));
    CHECK_ABS(f.p_bg, tr.p_bg, 8 * sqrt(tr.p_bg * (1 - tr.p_bg) / nb));
    /* Maximum likelihood: at least the true parameters' likelihood. */
    accstat_stream_t one = {o, N, NULL};
    CHECK(f.loglik_markov >= accfit_markov_loglik(&tr, &one, 1) - 1e-6);
    CHECK_ABS(f.loglik_markov, accfit_markov_loglik(&f, &one, 1), 1e-6);
    /* The chain's mean is the share of accepts (a long chain's ML fit). */
    double fpg = f.p_bg / (f.p_gb + f.p_bg);
    CHECK_ABS(fpg * f.good + (1 - fpg) * f.bad, f.alpha, 0.01);
    free(o);
}

/* Texts whose α ~ Beta(6, 2), 200 iid outcomes each: the beta-binomial
 * fit's mean within 4 standard errors of the mean of 400 texts, a + b
 * (the concentration) within 30 % (its relative standard error for 400
 * texts is about 10 %). */
static void test_beta_recovery(void)
{
    enum { TEXTS = 400, LEN = 200 };
    const double a = 6, b = 2, m = a / (a + b), var = a * b / ((a + b) * (a + b) * (a + b + 1));
    uint8_t *o = malloc(TEXTS * LEN);
    accstat_stream_t st[TEXTS];
    gsl_rng *r = gsl_rng_alloc(gsl_rng_taus2);
    gsl_rng_set(r, 99);
    for (int k = 0; k < TEXTS; k++) {
        double al = gsl_ran_beta(r, a, b);
        for (int i = 0; i < LEN; i++) o[k * LEN + i] = gsl_rng_uniform(r) < al;
        st[k] = (accstat_stream_t){o + k * LEN, LEN, NULL};
    }
    gsl_rng_free(r);
    accstat_t s;
    accstat_compute(st, TEXTS, &s);
    accfit_t f;
    err_t err = {0, ""};
    CHECK(accfit_fit(st, TEXTS, &s, &f, &err) == 0);
    double se = sqrt((var + m * (1 - m) / LEN) / TEXTS);
    CHECK_ABS(f.a / (f.a + f.b), m, 4 * se);
    CHECK_REL(f.a + f.b, a + b, 0.3);
    free(o);
}

int main(void)
{
    RUN(test_counts_by_hand);
    RUN(test_trace_round_trip);
    RUN(test_trace_read_rules);
    RUN(test_laws_closed_forms);
    RUN(test_markov_law_monte_carlo);
    RUN(test_chi2_by_hand);
    RUN(test_gof_labels);
    RUN(test_positional_carry);
    RUN(test_markov_loglik_by_hand);
    RUN(test_markov_recovery);
    RUN(test_beta_recovery);
    return check_done();
}
