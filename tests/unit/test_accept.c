/* test_accept — the acceptance models against their exact laws.
 *
 * Statistical checks use a stated tolerance: a frequency from n independent
 * draws with probability p is checked within 4 standard deviations
 * sqrt(p(1-p)/n) (false-failure chance ~6e-5 per check; the seeds are fixed,
 * so a run is deterministic anyway). The markov chain's draws are correlated,
 * so its checks use batch means (50 batches of 4000 blocks, far longer than
 * the chain's mixing time of a few blocks) for the standard error.
 */
#include <math.h>
#include <string.h>

#include "model/accept.h"
#include "accepttest.h"
#include "check.h"
#include "engine/rng.h"
#include "simtest.h"

/* Checks that an observed frequency k/n is within 4 sigma of p. */
static void check_freq(long k, long n, double p, const char *what, int v)
{
    double f = (double)k / (double)n;
    double sd = sqrt(p * (1.0 - p) / (double)n);
    double tol = 4.0 * sd + 1e-12;
    if (!(fabs(f - p) <= tol)) {
        printf("  %s a=%d: frequency %.6f, expected %.6f (4 sigma = %.2g)\n", what, v,
               f, p, tol);
        check_failed_now = 1;
    }
}

/* Draws n blocks and checks P(a = k) against pk[0..gamma]. */
static void check_law(accept_t *a, int gamma, const double *pk, long n, const char *what)
{
    long cnt[64] = {0};
    for (long i = 0; i < n; i++) {
        int v = accept_draw(a, gamma);
        CHECK(v >= 0 && v <= gamma);
        if (v < 0 || v > gamma) return;
        cnt[v]++;
    }
    for (int k = 0; k <= gamma; k++) check_freq(cnt[k], n, pk[k], what, k);
}

/* iid: P(a = k) = alpha^k (1 - alpha) for k < gamma, P(a = gamma) = alpha^gamma
 * (k leading successes then a failure; or all gamma successes). This also
 * proves the single-uniform geometric draw has the sequential law. */
static void test_iid_law(void)
{
    const double alphas[] = {0.3, 0.7, 0.95};
    const int gammas[] = {1, 4, 8};
    for (int ia = 0; ia < 3; ia++)
        for (int ig = 0; ig < 3; ig++) {
            accept_cfg_t c;
            char yaml[64];
            snprintf(yaml, sizeof yaml, "{model: iid, alpha: %g}", alphas[ia]);
            accepttest_cfg(&c, yaml);
            err_t e;
            accept_t *a = accept_create(&c, 11, 0, ia * 3 + ig, &e);
            CHECK(a != NULL);
            if (!a) return;
            int g = gammas[ig];
            double pk[64];
            simtest_law_iid(alphas[ia], g, pk);
            check_law(a, g, pk, 100000, "iid");
            CHECK(c.model->mean(c.par, g) == alphas[ia]);
            accept_free(a);
            accept_cfg_fini(&c);
        }
}

static void test_iid_extremes(void)
{
    accept_cfg_t c0, c1;
    err_t e;
    accepttest_cfg(&c0, "{model: iid, alpha: 0}");
    accepttest_cfg(&c1, "{model: iid, alpha: 1}");
    accept_t *a0 = accept_create(&c0, 1, 0, 0, &e);
    accept_t *a1 = accept_create(&c1, 1, 0, 0, &e);
    CHECK(a0 && a1);
    if (!a0 || !a1) return;
    int bad0 = 0, bad1 = 0;
    for (int i = 0; i < 10000; i++) {
        bad0 += accept_draw(a0, 5) != 0;
        bad1 += accept_draw(a1, 5) != 5;
    }
    CHECK(bad0 == 0);
    CHECK(bad1 == 0);
    CHECK(accept_draw(a1, 0) == 0);
    accept_free(a0);
    accept_free(a1);
    accept_cfg_fini(&c0);
    accept_cfg_fini(&c1);
}

/* positional: P(a >= k) = prod_{i<k} alpha_i, the last listed value repeating;
 * P(a = k) = P(a >= k) - P(a >= k+1) for k < gamma. */
static void test_positional_law(void)
{
    double al[] = {0.9, 0.7, 0.5};
    accept_cfg_t c;
    accepttest_cfg(&c, "{model: positional, alphas: [0.9, 0.7, 0.5]}");
    err_t e;
    accept_t *a = accept_create(&c, 3, 1, 2, &e);
    CHECK(a != NULL);
    if (!a) return;
    const int g = 5;
    double ge[7];
    ge[0] = 1.0;
    for (int k = 1; k <= g; k++) ge[k] = ge[k - 1] * al[k - 1 < 3 ? k - 1 : 2];
    double pk[6];
    for (int k = 0; k < g; k++) pk[k] = ge[k] - ge[k + 1];
    pk[g] = ge[g];
    check_law(a, g, pk, 100000, "positional");
    /* The mean over the gamma positions, the last value repeating. */
    CHECK_REL(c.model->mean(c.par, g), (0.9 + 0.7 + 0.5 + 0.5 + 0.5) / 5.0, 1e-12);
    CHECK_REL(c.model->mean(c.par, 2), (0.9 + 0.7) / 2.0, 1e-12);
    accept_free(a);
    accept_cfg_fini(&c);
}

/* beta: tenant alphas are independent Beta(a,b) draws, mean m = a/(a+b),
 * variance v = ab/((a+b)^2 (a+b+1)). A tenant's first block of 1 draft is
 * accepted with probability alpha, so over independent tenants with
 * probability E[alpha] = m; its next such block too, so both are accepted
 * with probability E[alpha^2] = v + m^2 (a model with one alpha for all
 * tenants would give m^2: 0.640 against 0.655 here, 7 sigma apart with
 * 50000 tenants). Given its alpha, one tenant's blocks are iid: of the
 * blocks that accepted at least k drafts, the fraction that accepted k + 1
 * is alpha for every k < gamma. */
static void test_beta(void)
{
    accept_cfg_t c;
    accepttest_cfg(&c, "{model: beta, a: 8, b: 2}");
    const double pa = 8.0, pb = 2.0;
    const int n = 50000;
    long first = 0, both = 0;
    err_t e;
    for (int t = 0; t < n; t++) {
        accept_t *a = accept_create(&c, 5, 0, t, &e);
        CHECK(a != NULL);
        if (!a) return;
        int x1 = accept_draw(a, 1), x2 = accept_draw(a, 1);
        first += x1;
        both += x1 && x2;
        accept_free(a);
    }
    double ab = pa + pb;
    double m = pa / ab;
    double v = pa * pb / (ab * ab * (ab + 1.0));
    check_freq(first, n, m, "beta first block", 1);
    check_freq(both, n, v + m * m, "beta two blocks", 2);

    const int g = 4, nb = 100000;
    long reach[5] = {0};   /* reach[k]: blocks with at least k accepted */
    accept_t *a = accept_create(&c, 5, 0, 17, &e);
    CHECK(a != NULL);
    if (!a) return;
    for (int i = 0; i < nb; i++) {
        int d = accept_draw(a, g);
        for (int k = 0; k <= d; k++) reach[k]++;
    }
    long num = 0, den = 0;
    for (int k = 0; k < g; k++) {
        num += reach[k + 1];
        den += reach[k];
    }
    double alpha = (double)num / (double)den;
    for (int k = 0; k < g; k++)
        check_freq(reach[k + 1], reach[k], alpha, "beta tenant continues", k);
    accept_free(a);
    accept_cfg_fini(&c);
}

static void test_markov(void)
{
    accept_cfg_t c;
    accepttest_cfg(&c, "{model: markov, alpha_good: 0.9, alpha_bad: 0.3, "
                       "p_good_bad: 0.1, p_bad_good: 0.3}");
    const double ag = 0.9, abad = 0.3, pgb = 0.1, pbg = 0.3;
    const int g = 4, nb = 50, per = 4000;
    err_t e;
    accept_t *a = accept_create(&c, 9, 0, 0, &e);
    CHECK(a != NULL);
    if (!a) return;
    double pig = pbg / (pgb + pbg);
    double rate = pig * ag + (1 - pig) * abad;
    CHECK_REL(c.model->mean(c.par, g), rate, 1e-12);
    double Ea = simtest_markov_Ea(ag, abad, pgb, pbg, g);
    double bm[50], br[50], sm = 0, sr = 0;
    for (int b = 0; b < nb; b++) {
        long acc = 0, ev = 0;
        for (int i = 0; i < per; i++) {
            int v = accept_draw(a, g);
            acc += v;
            ev += v + (v < g); /* the first rejected draft is evaluated too */
        }
        bm[b] = (double)acc / per;
        br[b] = (double)acc / (double)ev;
        sm += bm[b];
        sr += br[b];
    }
    sm /= nb;
    sr /= nb;
    double vm = 0, vr = 0;
    for (int b = 0; b < nb; b++) {
        vm += (bm[b] - sm) * (bm[b] - sm);
        vr += (br[b] - sr) * (br[b] - sr);
    }
    double sem = sqrt(vm / (nb - 1) / nb), ser = sqrt(vr / (nb - 1) / nb);
    /* Every evaluated draft sees the stationary state law (the chain starts
     * stationary and advances once per evaluated draft), so the fraction of
     * evaluated drafts accepted is pi.alpha. */
    CHECK_ABS(sr, rate, 4 * ser);
    CHECK_ABS(sm, Ea, 4 * sem);
    /* The block mean differs from the iid formula with the same rate: the
     * bias the exact derivation accounts for must be real. */
    double Eiid = 0;
    for (int k = 1; k <= g; k++) Eiid += pow(rate, k);
    CHECK(fabs(Ea - Eiid) > 8 * sem);
    accept_free(a);
    accept_cfg_fini(&c);
}

/* markov initial state ~ stationary law: with alpha_good = 1, alpha_bad = 0
 * and gamma = 1, a tenant's first draw is 1 exactly when it starts good. */
static void test_markov_start(void)
{
    accept_cfg_t c;
    accepttest_cfg(&c, "{model: markov, alpha_good: 1, alpha_bad: 0, "
                       "p_good_bad: 0.2, p_bad_good: 0.6}");
    const int n = 20000;
    long good = 0;
    err_t e;
    for (int t = 0; t < n; t++) {
        accept_t *a = accept_create(&c, 21, 3, t, &e);
        CHECK(a != NULL);
        if (!a) return;
        good += accept_draw(a, 1);
        accept_free(a);
    }
    check_freq(good, n, 0.75, "markov start good", 1);
    accept_cfg_fini(&c);
}

/* trace: exact cyclic replay capped at gamma, tenant t starting at t mod n. */
static void test_trace(void)
{
    int tr[] = {0, 3, 5, 2};
    accept_cfg_t c;
    err_t e;
    CHECK(accepttest_trace(&c, tr, 4, &e) == 0);
    accept_t *a0 = accept_create(&c, 1, 0, 0, &e);
    accept_t *a5 = accept_create(&c, 1, 0, 5, &e);
    CHECK(a0 && a5);
    if (!a0 || !a5) return;
    const int want0[] = {0, 3, 4, 2, 0, 3, 4, 2, 0};
    const int want5[] = {3, 4, 2, 0, 3, 4, 2, 0, 3};
    for (int i = 0; i < 9; i++) {
        CHECK(accept_draw(a0, 4) == want0[i]);
        CHECK(accept_draw(a5, 4) == want5[i]);
    }
    CHECK(isnan(c.model->mean(c.par, 4)));   /* a trace states no alpha */
    accept_free(a0);
    accept_free(a5);
    accept_cfg_fini(&c);
}

/* trace per request: three segments (requests A, B, C) of a per-position
 * file; request r of tenant t of 2 replays segment (t + 2r) mod 3 from its
 * start, counted by hand:
 *   A = 1 1 0 | B = 0 | C = 1 1 1 1 1 (then the stream wraps to A)
 *   tenant 0: r 0 -> A: γ2 blocks 2 (11), 0 (0);  r 1 -> C: 2, 2, 1 + A's...
 *   tenant 1: r 0 -> B: 0;  r 1 -> A (1 + 2·1 = 3 mod 3 = 0): 2.
 * Without per_request the file is one stream: tenant 0 from A goes on
 * into B after A. A file without `# request` lines, or per block, is
 * refused with per_request. */
static void test_trace_per_request(void)
{
    char path[32];
    FILE *f = check_tmp_open(path, sizeof path, "w");
    if (!f) return;
    fputs("# format: positions\n# request: A\n110\n# request: B\n0\n# request: C\n11111\n", f);
    CHECK(fclose(f) == 0);
    char yaml[128];
    snprintf(yaml, sizeof yaml, "{model: trace, file: %s, per_request: true}", path);
    accept_cfg_t c;
    accepttest_cfg(&c, yaml);
    err_t e;
    accept_t *a0 = accept_create(&c, 1, 0, 0, &e), *a1 = accept_create(&c, 1, 0, 1, &e);
    CHECK(a0 && a1);
    if (a0 && a1) {
        accept_request(a0, 0, 2, 0);
        CHECK(accept_draw(a0, 2) == 2);
        CHECK(accept_draw(a0, 2) == 0);
        accept_request(a0, 0, 2, 1);           /* segment C */
        CHECK(accept_draw(a0, 2) == 2);
        CHECK(accept_draw(a0, 2) == 2);
        CHECK(accept_draw(a0, 2) == 2);        /* C's last 1, then A's first */
        accept_request(a1, 1, 2, 0);           /* segment B */
        CHECK(accept_draw(a1, 2) == 0);
        accept_request(a1, 1, 2, 1);           /* segment A */
        CHECK(accept_draw(a1, 2) == 2);
    }
    accept_free(a0);
    accept_free(a1);
    accept_cfg_fini(&c);
    /* The same file as one stream: requests change nothing. */
    snprintf(yaml, sizeof yaml, "{model: trace, file: %s}", path);
    accepttest_cfg(&c, yaml);
    a0 = accept_create(&c, 1, 0, 0, &e);
    CHECK(a0 != NULL);
    if (a0) {
        CHECK(accept_draw(a0, 2) == 2);
        accept_request(a0, 0, 2, 1);
        CHECK(accept_draw(a0, 2) == 0);        /* A's 0, not C */
        CHECK(accept_draw(a0, 2) == 0);        /* B */
    }
    accept_free(a0);
    accept_cfg_fini(&c);
    /* Refused: no `# request` line; a per-block file. */
    f = fopen(path, "w");
    if (!f) return;
    fputs("# format: positions\n110\n", f);
    CHECK(fclose(f) == 0);
    snprintf(yaml, sizeof yaml, "{model: trace, file: %s, per_request: true}", path);
    CHECK(accept_cfg_parse(&c, yaml, &e) != 0 && strstr(e.msg, "no '# request' line"));
    f = fopen(path, "w");
    if (!f) return;
    fputs("# request\n2\n", f);
    CHECK(fclose(f) == 0);
    CHECK(accept_cfg_parse(&c, yaml, &e) != 0 && strstr(e.msg, "not per position"));
    unlink(path);
}

/* Same keys -> same draws; a different tenant or replication -> different
 * draws; creating another tenant in between does not shift a stream. */
static void test_streams(void)
{
    accept_cfg_t c;
    accepttest_cfg(&c, "{model: iid, alpha: 0.6}");
    err_t e;
    accept_t *x = accept_create(&c, 42, 0, 3, &e);
    accept_t *other = accept_create(&c, 42, 0, 4, &e);
    accept_t *y = accept_create(&c, 42, 0, 3, &e);
    accept_t *z = accept_create(&c, 42, 1, 3, &e);
    CHECK(x && y && z && other);
    if (!x || !y || !z || !other) return;
    int same = 1, diff_t = 0, diff_r = 0;
    for (int i = 0; i < 200; i++) {
        int vx = accept_draw(x, 6), vo = accept_draw(other, 6);
        int vy = accept_draw(y, 6), vz = accept_draw(z, 6);
        same &= vx == vy;
        diff_t |= vx != vo;
        diff_r |= vx != vz;
    }
    CHECK(same);
    CHECK(diff_t);
    CHECK(diff_r);
    accept_free(x);
    accept_free(y);
    accept_free(z);
    accept_free(other);
    accept_cfg_fini(&c);
}

/* The iid draw, taken one uniform ahead (sim/model/accept.c), is still the
 * inverse CDF of the stream's uniforms in order: draw k is
 * min(gamma, floor(log U_k / log alpha)) for the k-th uniform of the
 * tenant's RNG_ACCEPT stream, whatever gamma each call asks for; a call
 * for gamma 0 draws nothing (sim/model/accept.h). */
static void test_iid_draws_are_the_streams(void)
{
    accept_cfg_t c;
    accepttest_cfg(&c, "{model: iid, alpha: 0.7}");
    err_t e;
    accept_t *a = accept_create(&c, 9, 2, 5, &e);
    gsl_rng *r = rng_stream(9, 2, 5, RNG_ACCEPT);
    CHECK(a && r);
    if (!a || !r) return;
    int same = 1;
    for (int i = 0; i < 5000; i++) {
        int gamma = i % 9, want = 0;
        if (gamma > 0) {
            double x = log(gsl_rng_uniform_pos(r)) / log(0.7);
            want = x >= gamma ? gamma : (int)x;
        }
        same &= accept_draw(a, gamma) == want;
    }
    CHECK(same);
    gsl_rng_free(r);
    accept_free(a);
    accept_cfg_fini(&c);
}

/* A configuration a model's check refuses never loads: the loader runs the
 * model's key ranges and its check. */
static void bad(const char *yaml, const char *want)
{
    accept_cfg_t c;
    err_t e = {0, ""};
    CHECK(accept_cfg_parse(&c, yaml, &e) == -1);
    CHECK(e.code == ERR_INPUT);
    if (!strstr(e.msg, want)) {
        printf("  '%s': message '%s' lacks '%s'\n", yaml, e.msg, want);
        check_failed_now = 1;
    }
}

static void test_bad_config(void)
{
    bad("{model: iid, alpha: 1.5}", "acceptance.alpha");
    bad("{model: iid, alpha: .nan}", "acceptance.alpha");
    bad("{model: beta, a: 0, b: 1}", "acceptance.a");
    bad("{model: beta, a: 1}", "acceptance.b: required when model is beta");
    bad("{model: trace}", "acceptance.file: required when model is trace");
    int neg[] = {1, -2};
    err_t e = {0, ""};
    accept_cfg_t c;
    CHECK(accepttest_trace(&c, neg, 2, &e) == -1 && e.code == ERR_INPUT);
    CHECK(accepttest_trace(&c, neg, 0, &e) == -1 && e.code == ERR_INPUT);
    bad("{model: positional}", "acceptance.alphas: required when model is positional");
    bad("{model: positional, alphas: [0.5, -0.1]}", "acceptance.alphas.1");
    bad("{model: markov, alpha_good: 0.5, alpha_bad: 0.5, p_good_bad: 0, "
        "p_bad_good: 2}", "acceptance.p_bad_good");
    bad("{model: markov, alpha_good: 0.5}", "required when model is markov");
    bad("{model: bayes}", "acceptance.model: unknown value 'bayes'");
    /* Unknown keys: "did you mean" among the model's own keys; a key of
     * another model is tolerated (switching the model by an override). */
    bad("{model: markov, alpha_god: 0.9}", "did you mean 'alpha_good'");
    bad("{model: iid, alpah: 0.9}", "did you mean 'alpha'");
    CHECK(accept_cfg_parse(&c, "{model: iid, alpha: 0.5, alphas: [0.1], a: 2}", &e) == 0);
    accept_cfg_fini(&c);
    CHECK(accept_create(NULL, 1, 0, 0, &e) == NULL);
    accept_free(NULL);
}

/* A model without a block law (the descriptor allows it): accept_cfg_law
 * says so instead of calling through NULL, which crashed `specsim
 * analytic` when a model was added without one. */
static void test_model_without_law(void)
{
    accept_cfg_t c;
    err_t e = {0, ""};
    CHECK(accept_cfg_parse(&c, "{model: iid, alpha: 0.5}", &e) == 0);
    accept_model_t nolaw = *c.model;
    nolaw.law = NULL;
    accept_cfg_t d = {&nolaw, c.par};
    accept_law_t L;
    CHECK(accept_cfg_law(&d, 4, &L, &e) == -1);
    CHECK(e.code == ERR_INPUT && strstr(e.msg, "has no block law") != NULL);
    accept_cfg_fini(&c);
}

int main(void)
{
    RUN(test_iid_law);
    RUN(test_iid_extremes);
    RUN(test_positional_law);
    RUN(test_beta);
    RUN(test_markov);
    RUN(test_markov_start);
    RUN(test_trace);
    RUN(test_trace_per_request);
    RUN(test_streams);
    RUN(test_iid_draws_are_the_streams);
    RUN(test_bad_config);
    RUN(test_model_without_law);
    return check_done();
}
