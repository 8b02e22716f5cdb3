#include "model/gamma.h"

#include <math.h>
#include <string.h>

/* The registry: one X(NAME) per policy (file sim/model/gamma_NAME.c, table
 * gamma_NAME). */
#define GAMMA_REGISTRY(X) X(fixed) X(rtt) X(goodput)

#define GAMMA_DECLARE(n) extern const gamma_ops_t gamma_##n;
GAMMA_REGISTRY(GAMMA_DECLARE)
#define GAMMA_ENTRY(n) &gamma_##n,
static const gamma_ops_t *const REGISTRY[] = {GAMMA_REGISTRY(GAMMA_ENTRY)};

#define NREG (sizeof REGISTRY / sizeof *REGISTRY)

const gamma_ops_t *gamma_find(const char *name)
{
    for (size_t i = 0; i < NREG; i++)
        if (strcmp(REGISTRY[i]->name, name) == 0) return REGISTRY[i];
    return NULL;
}

const gamma_ops_t *gamma_default(void) { return &gamma_fixed; }

size_t gamma_names(const char **out, size_t max)
{
    for (size_t i = 0; i < NREG && i < max; i++) out[i] = REGISTRY[i]->name;
    return NREG;
}

int gamma_state_init(gamma_state_t *st, const gamma_ops_t *pol, int gamma,
                     int tenant)
{
    return gamma_state_init_env(st, pol, gamma, tenant, NULL);
}

int gamma_state_init_env(gamma_state_t *st, const gamma_ops_t *pol, int gamma,
                         int tenant, const gamma_env_t *env)
{
    memset(st, 0, sizeof *st);
    st->gamma = gamma;
    st->env = env ? *env : (gamma_env_t){.alpha_prior = NAN, .window = 1};
    st->limit = pol->limit(gamma);
    /* The limit sizes the draft buffer and KV reservation, and a block's
     * gamma + 1 must fit a message field (sim/entity/msg.h). */
    if (st->limit < 1 || st->limit > GAMMA_MAX) return -1;
    /* Refused here too, for a scenario built in code, which the loader's
     * check does not see: the policy would call through NULL. */
    if (pol->uses_rate && !st->env.rate) return -1;
    return pol->init ? pol->init(st, tenant) : 0;
}

void gamma_state_fini(gamma_state_t *st, const gamma_ops_t *pol)
{
    if (pol && pol->fini) pol->fini(st);
}
