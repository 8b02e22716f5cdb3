/* network — one direction of a tenant's WAN link (docs/design.md, "The
 * network").
 *
 * A message of B bytes sent at t starts serialising at max(t, link free),
 * takes 8B/bps (0 for an unlimited link), then propagates rtt/2 plus a
 * jitter draw. Delivery is max(that, the previous delivery on this link), so
 * a later message never overtakes an earlier one whatever the jitter. The
 * caller schedules the delivery event; since equal-time events run in
 * insertion order, deliveries also happen in send order.
 *
 * A link may vary in time (network_link_vary): its round trip, rate and
 * up/down state then follow a recorded trace (sim/model/linktrace.h), a
 * Markov chain of states, and Gilbert-Elliott outages. Serialisation then
 * integrates the rate over time and pauses while the link is down; a
 * Mahimahi trace replaces the rate by its delivery opportunities (each
 * carries LINKTRACE_MTU bytes, shared by the messages queued at it). The
 * propagation takes rtt/2 of the moment the last byte leaves. A message
 * sent while the link is down waits, as over TCP: the application sees
 * delay, never loss.
 */
#ifndef SPECSIM_NETWORK_H
#define SPECSIM_NETWORK_H

#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "base/err.h"
#include "engine/rng.h"
#include "engine/rngbox.h"
#include "model/linktrace.h"

/* One state of a Markov-modulated link (tenants.network.states): its round
 * trip, rates and up/down, held for an exponential time of mean `mean`;
 * then the link moves to one of the other states, each as likely. */
typedef struct network_state {
    double rtt;          /* s */
    double uplink_bps;   /* bits/s; INFINITY = unlimited */
    double downlink_bps;
    double mean;         /* s, mean sojourn, >= 1 ms (the loader) */
    int up;              /* 1 up, 0 down */
    unsigned given;      /* the loader's: bit k set when the scenario gave
                            the state's key k (the others follow the
                            section's rtt, uplink, downlink), so that it
                            is written back the same way */
} network_state_t;

#define NETWORK_STATES_MAX 8

/* What varies on one direction of tenant `entity`'s link. The uplink and
 * the downlink of a tenant are given the same trace, states, outages,
 * offset rule and keys, so both see the same moments of the same
 * processes (each direction draws them from identical streams). */
typedef struct network_vary {
    int dir;                        /* 0 uplink, 1 downlink */
    const linktrace_t *trace;       /* CSV trace, or NULL */
    const linkopp_t *opp;           /* this direction's Mahimahi file, or NULL */
    int random_offset;              /* 1: start at a uniform point of each
                                       trace (RNG_LINK_OFFSET); 0: at
                                       entity × stride, modulo its length */
    double stride;                  /* s */
    const network_state_t *states;  /* [nstates], borrowed; 0: none */
    int nstates;
    double mean_up, mean_down;      /* Gilbert-Elliott outages, s; 0 = none */
} network_vary_t;

struct network_var;

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
    struct network_var *var; /* owned; NULL for a link that does not vary */
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

/* Makes an initialised link vary as v says (v's pointers are borrowed and
 * must outlive the link); its own rtt and rate stay the values of what v
 * does not give. The processes' streams are rng_stream(seed, rep, entity,
 * RNG_LINK_*). 0, or -1 with err. */
int network_link_vary(network_link_t *l, const network_vary_t *v, uint64_t seed, int rep,
                      uint64_t entity, err_t *err);

/* The link's state at time t as the device's own connectivity sees it:
 * returns 1 when it is up, 0 when down; *rtt: its round trip then (s,
 * without jitter), *until: when that state may change (INFINITY: never).
 * A varying link walks its processes forward, so t must be at or after
 * every earlier query's and send's: protocol.fallback asks a copy of the
 * tenant's uplink made for that alone (sim/entity/edge.c), whose processes
 * draw from the same streams and so follow the same course. */
int network_state_at(network_link_t *l, double t, double *rtt, double *until);

/* Sends `bytes` at time now; returns the delivery time. */
double network_send(network_link_t *l, double now, double bytes);

#endif
