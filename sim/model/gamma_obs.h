/* gamma_obs — what an edge device measures about its own speculation, for
 * the adaptive speculation-length policies (sim/model/gamma_rtt.c,
 * sim/model/gamma_goodput.c). Only the device's own observations go in:
 *  - per verdict: the block's gamma, its accepted drafts a, and its round
 *    trip now − sent (uplink, queueing, verification, downlink: everything
 *    between sending the block and receiving its verdict);
 *  - per sent block: its own drafting time (send − draft start) / gamma.
 * Acceptance: a block of gamma with a accepted evaluated min(a + 1, gamma)
 * drafts (drafting stops being judged at the first rejection), so alpha is
 * the ratio of the EWMAs of accepted and evaluated drafts (the geometric
 * law's estimate), started from the prior with the weight of one block.
 * Draft time and round trip are EWMAs of their measurements, unknown (NAN)
 * until the first one. */
#ifndef SPECSIM_GAMMA_OBS_H
#define SPECSIM_GAMMA_OBS_H

#include "model/gamma.h"

/* The prior when the scenario gives none (a typical draft/target pair). */
#define GAMMA_OBS_ALPHA_PRIOR 0.8
/* EWMA weight of the newest measurement. */
#define GAMMA_OBS_EWMA 0.05
/* Estimates are clamped to [0, GAMMA_OBS_ALPHA_CAP]: at alpha = 1 every
 * gamma up to the limit ties in the sync rate, and the async renewal sum
 * grows without bound. */
#define GAMMA_OBS_ALPHA_CAP 0.99

typedef struct gamma_obs {
    double acc, eval;   /* EWMAs of accepted and evaluated drafts per block */
    double d;           /* draft seconds per token (NAN: none yet) */
    double rtt;         /* round trip seconds (NAN: none yet) */
} gamma_obs_t;

/* Starts from prior (NAN or outside (0, 1]: GAMMA_OBS_ALPHA_PRIOR). */
void gamma_obs_init(gamma_obs_t *o, double prior);
void gamma_obs_sent(gamma_obs_t *o, int gamma, double start, double now);
void gamma_obs_verdict(gamma_obs_t *o, int gamma, int accepted, double sent,
                       double now);
/* The estimated acceptance per draft, in [0, GAMMA_OBS_ALPHA_CAP]. */
double gamma_obs_alpha(const gamma_obs_t *o);

/* The gamma in [lo, limit] with the highest closed-form tokens per second
 * of the tenant's protocol (env->rate with env->window; must not be NULL)
 * for acceptance alpha, draft time d and round trip rtt_of(g) (for gamma
 * 0, plain remote decoding, 1 / rtt in any protocol), the smallest on
 * a tie; rtt_of(g) gives the round trip for blocks of g (ctx: its state). */
int gamma_obs_best(const gamma_env_t *env, int lo, int limit, double alpha, double d,
                   double (*rtt_of)(const void *ctx, int g), const void *ctx);

#endif
