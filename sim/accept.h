/* accept — acceptance models: how many leading drafts of a block the target
 * model accepts (DESIGN §2, `acceptance.model`).
 *
 * One accept_t per tenant. Its decisions come from the tenant's own stream
 * rng_stream(seed, rep, tenant, RNG_ACCEPT); per-tenant parameters (the beta
 * model's alpha, the markov model's initial state) come from
 * rng_stream(seed, rep, tenant, RNG_ACCEPT_PARAM), so adding a tenant or
 * changing the number of blocks one tenant verifies never shifts another
 * tenant's draws. A draft after a rejected one is never accepted: every
 * model returns the length of the accepted prefix.
 *
 * Models:
 *   iid        each draft accepted with probability alpha; one uniform per
 *              block (inverse-CDF of the truncated geometric law).
 *   positional draft at position i (1..gamma) accepted with alphas[i-1]; the
 *              last listed value repeats for later positions.
 *   beta       this tenant's alpha ~ Beta(a, b), drawn once; then iid.
 *   markov     a good/bad state with alpha_good/alpha_bad; after each draft
 *              that is evaluated (the accepted ones and the first rejected
 *              one) the state switches with p_good_bad / p_bad_good. The
 *              first state is drawn from the chain's stationary law.
 *   trace      accepted lengths replayed cyclically from cfg->trace, capped
 *              at gamma; tenant t starts at index t mod ntrace.
 */
#ifndef SPECSIM_ACCEPT_H
#define SPECSIM_ACCEPT_H

#include <stdint.h>

#include "err.h"
#include "rngbox.h"
#include "scenario.h"

/* Public so a tenant can hold its state inline (accept_draw runs once per
 * verdict; a separately allocated state cost a cache miss each time). The
 * fields are private to accept.c. Not movable once initialised (rngbox). */
typedef struct accept {
    enum accept_model model;
    gsl_rng *rng;        /* == &box.r: RNG_ACCEPT, one stream per tenant */
    double alpha;        /* iid and beta: the tenant's alpha */
    double log_alpha;    /* cached log(alpha) for the geometric draw */
    int good;            /* markov: 1 in the good state */
    int trace_pos;       /* trace: next index into cfg->trace */
    const accept_cfg_t *cfg;
    double alpha_mean;
    rngbox_t box;
} accept_t;

/* Initialises the acceptance state *a in place (same contract as
 * accept_create below, minus the allocation). Returns 0, or -1 with err.
 * Release with accept_fini() (nothing to free today; kept so owners need
 * not know). */
int accept_init(accept_t *a, const accept_cfg_t *cfg, uint64_t seed, int rep,
                int tenant, err_t *err);
void accept_fini(accept_t *a);

/* Returns a new per-tenant acceptance state; the caller owns it and frees it
 * with accept_free(). cfg is copied where needed (the trace array is
 * referenced, not copied: cfg must outlive the state). Returns NULL with err
 * filled on a bad configuration (ERR_INPUT: a probability outside [0,1],
 * beta a or b <= 0, an empty or negative trace) or allocation failure
 * (ERR_RUNTIME). */
accept_t *accept_create(const accept_cfg_t *cfg, uint64_t seed, int rep,
                        int tenant, err_t *err);

/* Number of leading accepted drafts in a block of gamma drafts: 0..gamma
 * (0 when gamma < 1). */
int accept_draw(accept_t *a, int gamma);

/* The per-draft acceptance probability this tenant's model stands for:
 * iid alpha; beta the tenant's drawn alpha; positional the mean of the
 * listed alphas; markov the stationary mean pi_good·alpha_good +
 * pi_bad·alpha_bad; trace the geometric maximum-likelihood estimate
 * sum(a) / sum(a + 1) of the replayed lengths. */
double accept_alpha_mean(const accept_t *a);

void accept_free(accept_t *a);

#endif
