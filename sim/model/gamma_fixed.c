/* gamma_fixed — every block drafts protocol.gamma tokens. */
#include "model/gamma.h"

static int fixed_limit(int gamma) { return gamma; }

const gamma_ops_t gamma_fixed = {
    .name = "fixed",
    .limit = fixed_limit,
    .next = NULL,   /* st->gamma, without a call per block */
};
