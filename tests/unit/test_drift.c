/* drift_factor (sim/model/drift.h) against the law it states: 1 + cv·Z, Z
 * standard normal clipped at ±4. The clipped normal's moments are computed
 * here from the normal's own (erfc), not taken from the code under test. */
#include <math.h>

#include "check.h"
#include "engine/rng.h"
#include "model/drift.h"

/* Var of Z clipped at ±c: E[Z²; |Z| < c] + c²·P(|Z| > c), with
 * E[Z²; |Z| < c] = P(|Z| < c) − 2c·φ(c). */
static double clipped_var(double c)
{
    double tail = erfc(c / sqrt(2.0));              /* P(|Z| > c) */
    double phi = exp(-c * c / 2) / sqrt(2 * M_PI);
    return (1 - tail) - 2 * c * phi + c * c * tail;
}

/* 10^6 factors at the largest CV: all within [1 − 4cv, 1 + 4cv] = [0, 2];
 * the mean within 4 standard errors of 1; the standard deviation within 1%
 * of cv·sqrt(clipped_var(4)) (its own standard error is about 0.07%). */
static void test_moments(void)
{
    gsl_rng *r = rng_stream(9, 0, 0, RNG_DRIFT);
    CHECK(r != NULL);
    if (!r) return;
    const double cv = DRIFT_CV_MAX;
    const int n = 1000000;
    double s = 0, q = 0, lo = 2, hi = 0;
    for (int i = 0; i < n; i++) {
        double f = drift_factor(r, cv);
        s += f;
        q += f * f;
        if (f < lo) lo = f;
        if (f > hi) hi = f;
    }
    double m = s / n, sd = sqrt(q / n - m * m), want = cv * sqrt(clipped_var(DRIFT_CLIP));
    printf("  mean %.6f, sd %.6f (want %.6f), range [%.4f, %.4f]\n", m, sd, want, lo, hi);
    CHECK(fabs(m - 1) < 4 * want / sqrt(n));
    CHECK_REL(sd, want, 0.01);
    CHECK(lo >= 1 - DRIFT_CLIP * cv && hi <= 1 + DRIFT_CLIP * cv);
    gsl_rng_free(r);
}

/* cv 0 is exactly 1 and draws nothing: the stream's next value is the one a
 * fresh stream gives first. */
static void test_zero_draws_nothing(void)
{
    gsl_rng *a = rng_stream(9, 0, 0, RNG_DRIFT), *b = rng_stream(9, 0, 0, RNG_DRIFT);
    CHECK(a && b);
    if (a && b) {
        CHECK(drift_factor(a, 0) == 1.0);
        CHECK(gsl_rng_get(a) == gsl_rng_get(b));
    }
    if (a) gsl_rng_free(a);
    if (b) gsl_rng_free(b);
}

int main(void)
{
    RUN(test_moments);
    RUN(test_zero_draws_nothing);
    return check_done();
}
