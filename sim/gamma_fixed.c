/* gamma_fixed — every block drafts protocol.gamma tokens. */
#include "gamma.h"

static int fixed_limit(int gamma) { return gamma; }

static int fixed_next(gamma_state_t *st, int tenant, double now)
{
    (void)tenant;
    (void)now;
    return st->gamma;
}

const gamma_ops_t gamma_fixed = {
    .name = "fixed",
    .limit = fixed_limit,
    .next = fixed_next,
};
