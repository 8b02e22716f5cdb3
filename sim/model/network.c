#include "model/network.h"

#include <math.h>


int network_link_init(network_link_t *l, double rtt, double bps,
                      const dist_t *jitter, uint64_t seed, int rep,
                      uint64_t entity, int purpose, err_t *err)
{
    l->free_at = 0;
    l->last_delivery = 0;
    l->half_rtt = rtt / 2;
    l->sec_per_byte = isinf(bps) || bps <= 0 ? 0 : 8.0 / bps;
    l->rng = NULL;
    l->jitter = NULL;
    if (!jitter || (jitter->kind == DIST_CONST && jitter->a == 0)) return 0;
    l->jitter = jitter;
    if (jitter->kind == DIST_CONST) return 0;   /* constant: no draws */
    if (jitter->kind == DIST_LOGNORMAL && jitter->a > 0) {
        /* The same parameterisation as dist_sample (mean and sd of the
         * variable itself); test_network checks the draws are identical. */
        double s2 = log1p((jitter->b * jitter->b) / (jitter->a * jitter->a));
        l->ln_mu = log(jitter->a) - 0.5 * s2;
        l->ln_sigma = sqrt(s2);
    }
    l->rng = rngbox_init(&l->box, seed, (uint64_t)rep, entity, (uint64_t)purpose, err);
    if (!l->rng) return -1;
    if (l->jitter->kind == DIST_LOGNORMAL && l->jitter->a > 0)
        l->ln_next = rng_lognormal(l->rng, l->ln_mu, l->ln_sigma);
    return 0;
}

void network_link_fini(network_link_t *l)
{
    l->rng = NULL;   /* the stream lives in the box: nothing to free */
}

double network_send(network_link_t *l, double now, double bytes)
{
    double start = now > l->free_at ? now : l->free_at;
    l->free_at = start + bytes * l->sec_per_byte;
    double arrive = l->free_at + l->half_rtt;
    if (l->jitter) {
        if (l->jitter->kind == DIST_LOGNORMAL && l->jitter->a > 0) {
            /* Drawn one message ahead, from the link's own stream, so the
             * same values in the same order: a draw is a chain of log,
             * divide, square root and exp (about 80 cycles of latency)
             * that the delivery time, and the event queue's comparisons
             * on it, would otherwise wait for; made here, it overlaps with
             * the rest of the event and is ready at the next message. */
            arrive += l->ln_next;
            l->ln_next = rng_lognormal(l->rng, l->ln_mu, l->ln_sigma);
        } else
            arrive += dist_sample(l->jitter, l->rng);
    }
    if (arrive < l->last_delivery) arrive = l->last_delivery;
    l->last_delivery = arrive;
    return arrive;
}
