/* rngbox — a random stream stored inside its owner.
 *
 * rng_stream() returns a gsl_rng behind two heap blocks (the gsl_rng and its
 * state). With 10^4 tenants those blocks are scattered, and every draw on
 * the hot path (acceptance, link jitter) paid two cache misses before the
 * generator ran. A box holds the gsl_rng and its state in place, so a draw
 * touches the owner's own cache lines. The stream is the very one
 * rng_stream() makes (same type, seeded state copied), so draws are
 * identical.
 *
 * The box points into itself: once initialised it must not be moved or
 * copied (keep it in storage that is allocated once, such as the tenant
 * array). Nothing to free.
 */
#ifndef SPECSIM_RNGBOX_H
#define SPECSIM_RNGBOX_H

#include <stddef.h>
#include <stdint.h>

#include <gsl/gsl_rng.h>

#include "base/err.h"

/* Room for the generator state rng_stream() uses (gsl_rng_taus2: three
 * unsigned longs); rngbox_init fails cleanly should a larger type appear. */
#define RNGBOX_STATE_BYTES 32

typedef struct rngbox {
    gsl_rng r;   /* r.state == state */
    _Alignas(max_align_t) unsigned char state[RNGBOX_STATE_BYTES];
} rngbox_t;

/* Seeds *b as rng_stream(seed, replication, entity, purpose) and returns
 * &b->r, or NULL with err filled (allocation failure while seeding, or a
 * generator state too large for the box). */
gsl_rng *rngbox_init(rngbox_t *b, uint64_t seed, uint64_t replication,
                     uint64_t entity, uint64_t purpose, err_t *err);

#endif
