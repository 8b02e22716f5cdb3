/* network: serialization delay at finite bandwidth (closed form), in-order
 * delivery whatever the jitter, and the jitter law's mean. */
#include <gsl/gsl_rng.h>

#include "check.h"
#include "model/network.h"

/* 8 Mbps = 1 byte per µs; rtt 20 ms -> 10 ms one way. */
static void test_serialization_closed_form(void)
{
    network_link_t l;
    dist_t none = dist_const(0);
    err_t err;
    CHECK(network_link_init(&l, 0.020, 8e6, &none, 1, 0, 0, RNG_UPLINK, &err) == 0);
    /* 1000 B alone: 1 ms on the wire + 10 ms propagation. */
    CHECK_ABS(network_send(&l, 0.0, 1000), 0.011, 1e-12);
    /* Sent at the same instant: waits for the serialiser (busy to 1 ms). */
    CHECK_ABS(network_send(&l, 0.0, 1000), 0.012, 1e-12);
    /* Much later: the link is idle again. */
    CHECK_ABS(network_send(&l, 5.0, 500), 5.0105, 1e-12);
    network_link_fini(&l);
    /* Unlimited bandwidth: size does not matter. */
    CHECK(network_link_init(&l, 0.020, INFINITY, &none, 1, 0, 0, RNG_UPLINK, &err) == 0);
    CHECK_ABS(network_send(&l, 1.0, 1e9), 1.010, 1e-12);
    network_link_fini(&l);
}

/* Heavy-tailed jitter much larger than the spacing of messages: deliveries
 * must still be in send order, each no earlier than its physical bound. */
static void test_in_order_with_jitter(void)
{
    network_link_t l;
    dist_t jit = {DIST_LOGNORMAL, 0.010, 0.030, NULL, 0};
    err_t err;
    CHECK(network_link_init(&l, 0.040, 100e6, &jit, 3, 0, 5, RNG_DOWNLINK, &err) == 0);
    CHECK(l.rng != NULL);
    double t = 0, prev = 0;
    int disorder = 0, held = 0;
    for (int i = 0; i < 20000; i++) {
        t += 0.001;
        double d = network_send(&l, t, 100);
        if (d < prev) disorder++;
        if (d == prev) held++;   /* would have overtaken: held back */
        /* 100 B at 100 Mbps = 8 µs, plus 20 ms one way. */
        CHECK(d >= t + 8e-6 + 0.020 - 1e-12);
        prev = d;
    }
    CHECK(disorder == 0);
    CHECK(held > 100);   /* the jitter really would have reordered */
    network_link_fini(&l);
}

/* Messages far apart never queue or wait for each other, so delivery minus
 * send minus rtt/2 is a plain jitter draw: its mean is the law's mean
 * (exponential, 5 ms; sd of the mean over n = 5 ms/sqrt(n)). */
static void test_jitter_mean(void)
{
    network_link_t l;
    dist_t jit = {DIST_EXPONENTIAL, 0.005, 0, NULL, 0};
    err_t err;
    CHECK(network_link_init(&l, 0.040, INFINITY, &jit, 9, 1, 2, RNG_UPLINK, &err) == 0);
    int n = 40000;
    double s = 0;
    for (int i = 0; i < n; i++) {
        double t = i * 10.0;
        s += network_send(&l, t, 10) - t - 0.020;
    }
    CHECK_ABS(s / n, 0.005, 4 * 0.005 / sqrt(n));
    network_link_fini(&l);
}

/* Same keys, same draws: streams are reproducible per (seed, rep, entity,
 * purpose), and another entity's stream differs. */
static void test_streams(void)
{
    dist_t jit = {DIST_UNIFORM, 0, 0.01, NULL, 0};
    network_link_t a, b, c;
    err_t err;
    network_link_init(&a, 0.04, INFINITY, &jit, 1, 0, 7, RNG_UPLINK, &err);
    network_link_init(&b, 0.04, INFINITY, &jit, 1, 0, 7, RNG_UPLINK, &err);
    network_link_init(&c, 0.04, INFINITY, &jit, 1, 0, 8, RNG_UPLINK, &err);
    int same = 1, diff = 0;
    for (int i = 0; i < 100; i++) {
        double x = network_send(&a, i, 1), y = network_send(&b, i, 1),
               z = network_send(&c, i, 1);
        same &= x == y;
        diff += x != z;
    }
    CHECK(same);
    CHECK(diff > 90);
    network_link_fini(&a);
    network_link_fini(&b);
    network_link_fini(&c);
}

/* The lognormal fast path draws exactly what dist_sample would from the
 * same stream. */
static void test_lognormal_same_as_dist(void)
{
    dist_t jit = {DIST_LOGNORMAL, 0.002, 0.003, NULL, 0};
    network_link_t l;
    err_t err;
    CHECK(network_link_init(&l, 0.0, INFINITY, &jit, 4, 1, 3, RNG_UPLINK, &err) == 0);
    gsl_rng *r = rng_stream(4, 1, 3, RNG_UPLINK);
    int same = 1;
    for (int i = 0; i < 1000; i++) {
        double t = i * 100.0;   /* far apart: no in-order hold-back */
        double d = network_send(&l, t, 1);
        same &= d == t + 0.0 + dist_sample(&jit, r);
    }
    CHECK(same);
    gsl_rng_free(r);
    network_link_fini(&l);
}

int main(void)
{
    RUN(test_serialization_closed_form);
    RUN(test_in_order_with_jitter);
    RUN(test_jitter_mean);
    RUN(test_streams);
    RUN(test_lognormal_same_as_dist);
    return check_done();
}
