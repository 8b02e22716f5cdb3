#include "engine/rngbox.h"

#include <string.h>

#include "engine/rng.h"

gsl_rng *rngbox_init(rngbox_t *b, uint64_t seed, uint64_t replication,
                     uint64_t entity, uint64_t purpose, err_t *err)
{
    /* Seeding through rng_stream keeps one definition of how streams are
     * keyed; the temporary is freed at once (set-up only, never per event). */
    gsl_rng *t = rng_stream(seed, replication, entity, purpose);
    if (!t) {
        err_set(err, ERR_RUNTIME, "rng: out of memory");
        return NULL;
    }
    if (t->type->size > sizeof b->state) {
        err_set(err, ERR_RUNTIME, "rng: generator '%s' state (%zu bytes) does not "
                "fit an rngbox (%d)", t->type->name, t->type->size,
                RNGBOX_STATE_BYTES);
        gsl_rng_free(t);
        return NULL;
    }
    memcpy(b->state, t->state, t->type->size);
    b->r.type = t->type;
    b->r.state = b->state;
    gsl_rng_free(t);
    return &b->r;
}
