/* rng: stream keying and every distribution's law.
 *
 * Sample means are checked against the closed-form mean within 5 standard
 * errors (sd/√n from the closed-form variance), so a correct sampler fails
 * with probability < 1e-6 per check; the seeds are fixed, so runs repeat. */
#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_randist.h>

#include "check.h"
#include "engine/rng.h"

#define N 200000

/* Sample mean and variance of n draws of d from stream (seed 1, entity e). */
static void moments(const dist_t *d, uint64_t e, double *mean, double *var)
{
    gsl_rng *r = rng_stream(1, 0, e, RNG_THINK);
    double s = 0, ss = 0;
    for (int i = 0; i < N; i++) {
        double x = dist_sample(d, r);
        s += x;
        ss += x * x;
    }
    gsl_rng_free(r);
    *mean = s / N;
    *var = ss / N - *mean * *mean;
}

/* |sample mean − mu| <= 5·sd/√N with sd the closed-form standard deviation. */
static void check_mean(const char *what, const dist_t *d, double mu, double sd)
{
    double m, v;
    moments(d, 7, &m, &v);
    double tol = 5 * sd / sqrt((double)N);
    if (!(fabs(m - mu) <= tol)) {
        printf("  %s: sample mean %.9g, expected %.9g ± %.3g\n", what, m, mu, tol);
        CHECK(0);
    }
    CHECK_REL(dist_mean(d), mu, 1e-9);
}

static void test_keys_give_distinct_streams(void)
{
    /* Each key changes the hash; swapping two keys' values does too. */
    uint64_t h = rng_hash(1, 2, 3, 4);
    CHECK(h != rng_hash(2, 2, 3, 4));
    CHECK(h != rng_hash(1, 3, 3, 4));
    CHECK(h != rng_hash(1, 2, 4, 4));
    CHECK(h != rng_hash(1, 2, 3, 5));
    CHECK(h != rng_hash(1, 3, 2, 4));
    CHECK(rng_hash(1, 2, 3, 4) == h);
}

static void test_streams_repeat_and_are_independent_of_others(void)
{
    /* A tenant's draws depend only on its own keys: creating other streams
     * (a new tenant, another purpose) before it changes nothing. */
    gsl_rng *a = rng_stream(9, 1, 5, RNG_ACCEPT);
    unsigned long first[8];
    for (int i = 0; i < 8; i++) first[i] = gsl_rng_get(a);
    gsl_rng_free(a);
    gsl_rng *other = rng_stream(9, 1, 6, RNG_ACCEPT);
    gsl_rng *other2 = rng_stream(9, 1, 5, RNG_THINK);
    gsl_rng *b = rng_stream(9, 1, 5, RNG_ACCEPT);
    int same = 1, differs = 0;
    for (int i = 0; i < 8; i++) {
        unsigned long x = gsl_rng_get(b);
        same &= x == first[i];
        differs |= x != gsl_rng_get(other);
        (void)gsl_rng_get(other2);
    }
    CHECK(same);
    CHECK(differs);
    gsl_rng_free(b);
    gsl_rng_free(other);
    gsl_rng_free(other2);
}

static void test_const_uniform_exponential(void)
{
    dist_t c = dist_const(0.04);
    double m, v;
    moments(&c, 1, &m, &v);
    CHECK_REL(m, 0.04, 1e-12);   /* summation rounding only */
    CHECK(fabs(v) < 1e-15);
    dist_t u = {.kind = DIST_UNIFORM, .a = 2, .b = 5};
    check_mean("uniform", &u, 3.5, 3 / sqrt(12.0));
    dist_t e = {.kind = DIST_EXPONENTIAL, .a = 0.006};
    check_mean("exponential", &e, 0.006, 0.006);
}

static void test_truncated_normal(void)
{
    /* N(1, 1) truncated at 0: mean = mu + sd·φ(α)/(1−Φ(α)), α = −mu/sd = −1:
     * φ(−1) = 0.2419707245, 1−Φ(−1) = 0.8413447461 → 1.287599971.
     * Its variance: sd²[1 + αφ/(1−Φ) − (φ/(1−Φ))²]
     *   = 1 − 0.2875999709 − 0.0827137 = 0.6296863. */
    dist_t n = {.kind = DIST_NORMAL, .a = 1, .b = 1};
    check_mean("normal truncated", &n, 1.287599971, sqrt(0.6296863));
    /* Mostly below zero (mean −3 sd): the tail sampler, never negative. */
    dist_t t = {.kind = DIST_NORMAL, .a = -3, .b = 1};
    gsl_rng *r = rng_stream(1, 0, 0, RNG_THINK);
    double lo = INFINITY;
    for (int i = 0; i < 10000; i++) {
        double x = dist_sample(&t, r);
        if (x < lo) lo = x;
    }
    gsl_rng_free(r);
    CHECK(lo >= 0);
    /* Mean of the tail: −3 + φ(3)/(1−Φ(3)) = −3 + 0.004431848/0.001349898
     * = 0.283099 */
    CHECK_REL(dist_mean(&t), 0.2830999, 1e-5);
}

static void test_lognormal_by_its_own_moments(void)
{
    /* Parameterised by the variable's own mean and sd. */
    dist_t l = {.kind = DIST_LOGNORMAL, .a = 0.002, .b = 0.002};
    double m, v;
    moments(&l, 3, &m, &v);
    CHECK(fabs(m - 0.002) <= 5 * 0.002 / sqrt((double)N));
    /* Sample sd of a heavy-ish tail: 5% is several standard errors here. */
    CHECK_REL(sqrt(v), 0.002, 0.05);
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* rng_lognormal's law by the Kolmogorov-Smirnov distance of N draws to
 * GSL's lognormal CDF, for three (mu, sigma): under 1.63 / sqrt(N), the 1%
 * critical value. A draw of the wrong law (the polar method's second normal
 * reused, a ziggurat layer off) moves it far past that at this N. */
static void test_lognormal_ks(void)
{
    static const double par[][2] = {{-6.5, 0.8}, {0, 1}, {-3, 0.05}};
    double *x = malloc((size_t)N * sizeof *x);
    CHECK(x != NULL);
    if (!x) return;
    for (int k = 0; k < 3; k++) {
        gsl_rng *r = rng_stream(11 + (uint64_t)k, 0, 3, RNG_UPLINK);
        CHECK(r != NULL);
        if (!r) break;
        for (int i = 0; i < N; i++) x[i] = rng_lognormal(r, par[k][0], par[k][1]);
        qsort(x, N, sizeof *x, cmp_double);
        double d = 0;
        for (int i = 0; i < N; i++) {
            double f = gsl_cdf_lognormal_P(x[i], par[k][0], par[k][1]);
            d = fmax(d, fmax((i + 1.0) / N - f, f - (double)i / N));
        }
        printf("  mu %g sigma %g: KS distance %.5f (1%% critical %.5f)\n", par[k][0],
               par[k][1], d, 1.63 / sqrt((double)N));
        CHECK(d < 1.63 / sqrt((double)N));
        gsl_rng_free(r);
    }
    free(x);
}

static void test_pareto_and_empirical(void)
{
    /* Pareto(x_m = 1, shape 3): mean 3/2, variance 3/((3−1)²(3−2)) = 0.75. */
    dist_t p = {.kind = DIST_PARETO, .a = 1, .b = 3};
    check_mean("pareto", &p, 1.5, sqrt(0.75));
    double vals[] = {1, 2, 2, 7};
    dist_t e = {.kind = DIST_EMPIRICAL, .values = vals, .n = 4};
    /* mean 3, variance (4+1+1+16)/4 = 5.5 */
    check_mean("empirical", &e, 3.0, sqrt(5.5));
    dist_t copy;
    CHECK(dist_copy(&copy, &e) == 0);
    CHECK(copy.values != vals && copy.n == 4 && copy.values[3] == 7);
    dist_fini(&copy);
    CHECK(copy.values == NULL && copy.n == 0);
}

/* The inline draws (rng_uniform, rng_uniform_pos) against gsl's own
 * functions on twin streams, and rng_lognormal against its definition
 * exp(mu + sigma * gsl_ran_gaussian_ziggurat): bit for bit, over many draws
 * and several seeds, with the streams still in step at the end. (Its law is
 * test_lognormal_ks's.) */
static void test_inline_draws_equal_gsl(void)
{
    long bad = 0;
    for (uint64_t seed = 1; seed <= 4; seed++) {
        gsl_rng *a = rng_stream(seed, 0, 7, RNG_UPLINK);
        gsl_rng *b = rng_stream(seed, 0, 7, RNG_UPLINK);
        CHECK(a && b && a->type == gsl_rng_taus2);
        for (int i = 0; i < N; i++) {
            bad += rng_uniform(a) != gsl_rng_uniform(b);
            bad += rng_uniform_pos(a) != gsl_rng_uniform_pos(b);
            double mu = -6.5 + 0.001 * (i % 100), sigma = 0.1 + 0.01 * (i % 90);
            bad += rng_lognormal(a, mu, sigma) !=
                   exp(sigma * gsl_ran_gaussian_ziggurat(b, 1.0) + mu);
        }
        bad += gsl_rng_get(a) != gsl_rng_get(b);
        gsl_rng_free(a);
        gsl_rng_free(b);
    }
    CHECK(bad == 0);
    /* Another generator type goes through gsl: the same values too. */
    gsl_rng *c = gsl_rng_alloc(gsl_rng_mt19937), *d = gsl_rng_alloc(gsl_rng_mt19937);
    CHECK(c && d);
    for (int i = 0; i < 1000; i++)
        bad += rng_lognormal(c, 0, 1) != exp(gsl_ran_gaussian_ziggurat(d, 1.0));
    CHECK(bad == 0);
    gsl_rng_free(c);
    gsl_rng_free(d);
}

int main(void)
{
    RUN(test_keys_give_distinct_streams);
    RUN(test_streams_repeat_and_are_independent_of_others);
    RUN(test_const_uniform_exponential);
    RUN(test_truncated_normal);
    RUN(test_lognormal_by_its_own_moments);
    RUN(test_lognormal_ks);
    RUN(test_pareto_and_empirical);
    RUN(test_inline_draws_equal_gsl);
    return check_done();
}
