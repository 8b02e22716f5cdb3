/* network — one direction of a tenant's WAN link (docs/design.md, "Network").
 *
 * A message of B bytes sent at t starts serialising at max(t, link free),
 * takes 8B/bps (0 for an unlimited link), then propagates rtt/2 plus a
 * jitter draw. Delivery is max(that, the previous delivery on this link), so
 * a later message never overtakes an earlier one whatever the jitter. The
 * caller schedules the delivery event; since equal-time events run in
 * insertion order, deliveries also happen in send order.
 */
#ifndef SPECSIM_NETWORK_H
#define SPECSIM_NETWORK_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "engine/rng.h"
#include "engine/rngbox.h"

typedef struct network_link {
    double free_at;        /* serialiser busy until */
    double last_delivery;  /* in-order bound */
    double half_rtt;       /* s */
    double sec_per_byte;   /* 8 / bps; 0 for unlimited */
    const dist_t *jitter;  /* NULL when there is none (constant 0) */
    double ln_mu, ln_sigma;/* lognormal jitter: parameters of log(x), set
                              once (dist_sample would redo logs per draw) */
    double ln_next;        /* lognormal jitter: the stream's next draw */
    gsl_rng *rng;          /* == &box.r; NULL for constant jitter */
    rngbox_t box;          /* the jitter stream, in place: one draw per
                              message, so no pointer chase to a heap block */
} network_link_t;

/* Initialises a link with base round trip rtt (s), rate bps (INFINITY for
 * unlimited) and jitter (borrowed: must outlive the link; constant 0 means
 * none). The jitter stream is rng_stream(seed, rep, entity, purpose), drawn
 * only when the jitter is random. Returns 0, or -1 with err on allocation
 * failure. The link must not be moved once initialised (rngbox). Release
 * with network_link_fini(). */
int network_link_init(network_link_t *l, double rtt, double bps,
                      const dist_t *jitter, uint64_t seed, int rep,
                      uint64_t entity, int purpose, err_t *err);
void network_link_fini(network_link_t *l);

/* Sends `bytes` at time now; returns the delivery time. */
double network_send(network_link_t *l, double now, double bytes);

#endif
