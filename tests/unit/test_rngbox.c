/* rngbox: a boxed stream draws exactly what rng_stream() with the same keys
 * draws (the box is only a change of storage), and the in-place acceptance
 * state built on it follows the iid inverse-CDF rule of accept.h applied to
 * that stream's uniforms. */
#include <math.h>
#include <string.h>

#include <gsl/gsl_randist.h>

#include "model/accept.h"
#include "accepttest.h"
#include "check.h"
#include "engine/rng.h"
#include "engine/rngbox.h"

static void test_same_draws(void)
{
    err_t err;
    const uint64_t keys[][4] = {{1, 0, 0, RNG_UPLINK}, {7, 3, 9999, RNG_ACCEPT},
                                {0, 0, 0, RNG_DOWNLINK}};
    for (size_t k = 0; k < sizeof keys / sizeof *keys; k++) {
        rngbox_t box;
        gsl_rng *b = rngbox_init(&box, keys[k][0], keys[k][1], keys[k][2], keys[k][3], &err);
        gsl_rng *r = rng_stream(keys[k][0], keys[k][1], keys[k][2], keys[k][3]);
        CHECK(b && r);
        if (!b || !r) return;
        CHECK(b == &box.r && b->state == (void *)box.state);
        int same = 1;
        for (int i = 0; i < 1000; i++) {
            same &= gsl_rng_get(b) == gsl_rng_get(r);
            same &= gsl_ran_lognormal(b, -6.5, 0.8) == gsl_ran_lognormal(r, -6.5, 0.8);
        }
        CHECK(same);
        gsl_rng_free(r);
    }
}

/* accept.h, iid: a = min(gamma, floor(log U / log alpha)) with U the
 * stream's gsl_rng_uniform_pos draws. */
static void test_accept_inline(void)
{
    err_t err;
    accept_cfg_t c;
    accepttest_cfg(&c, "{model: iid, alpha: 0.8}");
    accept_t a;
    CHECK(accept_init(&a, &c, 5, 1, 42, &err) == 0);
    gsl_rng *r = rng_stream(5, 1, 42, RNG_ACCEPT);
    CHECK(r != NULL);
    if (!r) return;
    int same = 1;
    for (int i = 0; i < 1000; i++) {
        double x = log(gsl_rng_uniform_pos(r)) / log(0.8);
        int want = x >= 4.0 ? 4 : (int)x;
        same &= accept_draw(&a, 4) == want;
    }
    CHECK(same);
    accept_fini(&a);
    accept_cfg_fini(&c);
    gsl_rng_free(r);
}

int main(void)
{
    RUN(test_same_draws);
    RUN(test_accept_inline);
    return check_done();
}
