/* rng — random streams and the distributions scenarios use for times/lengths.
 *
 * Every random source in a run owns one gsl_rng stream seeded from
 * (scenario seed, replication, entity id, purpose) through a 64-bit hash, so
 * adding a tenant or a purpose never shifts another stream's draws.
 */
#ifndef SPECSIM_RNG_H
#define SPECSIM_RNG_H

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>

/* Purposes: one stream per (entity, purpose). Append only — values are part
 * of the reproducibility contract (changing one changes every result). */
enum rng_purpose {
    RNG_DRAFT_TIME = 1,  /* per-token draft time distribution draws */
    RNG_ACCEPT,          /* acceptance decisions */
    RNG_ACCEPT_PARAM,    /* per-tenant acceptance model state (beta's alpha,
                          * markov's first state) */
    RNG_UPLINK,          /* uplink jitter */
    RNG_DOWNLINK,        /* downlink jitter */
    RNG_THINK,           /* think time / inter-arrival */
    RNG_PROMPT,          /* prompt length */
    RNG_OUTPUT,          /* output length */
    RNG_VERIFY_TIME,     /* cloud iteration time distribution draws */
    /* 10 and 11 belonged to purposes never used; not to be reused. */
    RNG_PREFILL_TIME = 12, /* edge prefill time distribution draws */
    RNG_PIN = 13,        /* cloud.pinning power-of-two: replica draws */
    RNG_CLOUD_DRAFT_TIME = 14, /* cloud.draft_time draws (a replica's) */
    RNG_LINK_OFFSET = 15,/* a tenant's starting point in its link traces */
    RNG_LINK_STATE = 16, /* its link's Markov states: first state, sojourns, moves */
    RNG_LINK_OUTAGE = 17,/* its link's Gilbert-Elliott outages */
    RNG_DRIFT = 18,      /* drift: a tenant's start offset, then its edge
                          * noise; a replica's iteration noise */
    RNG_SESSION = 19     /* workload.session: turns per session, gaps */
};

/* Returns a new generator (gsl_rng_taus2) seeded by hashing the four keys;
 * the caller owns it and frees it with gsl_rng_free(). NULL on allocation
 * failure. */
gsl_rng *rng_stream(uint64_t seed, uint64_t replication, uint64_t entity,
                    uint64_t purpose);

/* ---- inline draws for the hot path ---------------------------------------
 * rng_stream()'s generator is gsl_rng_taus2, L'Ecuyer's maximally
 * equidistributed combined Tausworthe generator: three 32-bit components
 * kept in three unsigned longs. gsl_rng_uniform() reaches it through two
 * indirect calls; the draws made per event (link jitter, acceptance) run
 * the same recurrence inline on the same state instead, so they give the
 * very values gsl gives and every result is unchanged (tests/unit/test_rng.c
 * compares both over long runs, for the library linked). Generators of any
 * other type go through gsl. */
typedef struct rng_taus_state {
    unsigned long s1, s2, s3;
} rng_taus_state_t;

static inline unsigned long rng_taus_step(unsigned long s, int a, int b,
                                          unsigned long c, int d)
{
    return (((s & c) << d) & 0xffffffffUL) ^ ((((s << a) & 0xffffffffUL) ^ s) >> b);
}

/* gsl_rng_uniform(r): uniform on [0, 1). */
static inline double rng_uniform(const gsl_rng *r)
{
    if (r->type != gsl_rng_taus2) return gsl_rng_uniform(r);
    rng_taus_state_t *t = r->state;
    t->s1 = rng_taus_step(t->s1, 13, 19, 4294967294UL, 12);
    t->s2 = rng_taus_step(t->s2, 2, 25, 4294967288UL, 4);
    t->s3 = rng_taus_step(t->s3, 3, 11, 4294967280UL, 17);
    return (double)(t->s1 ^ t->s2 ^ t->s3) / 4294967296.0;
}

/* gsl_rng_uniform_pos(r): uniform on (0, 1). */
static inline double rng_uniform_pos(const gsl_rng *r)
{
    double x;
    do x = rng_uniform(r);
    while (x == 0);
    return x;
}

/* A lognormal draw exp(zeta + sigma * N), N from GSL's ziggurat normal
 * (Marsaglia and Tsang's exact method). gsl_ran_lognormal takes N from the
 * polar Box-Muller method instead: a log and a square root per draw, and
 * half of each pair of uniforms thrown away. The ziggurat takes one or two
 * uniforms and, 99% of the time, no log: the link jitter drawn per message
 * was about a tenth of the simulator's instructions (issue 27 item 4: the
 * one change of streams a faster exact sampler was allowed). dist_sample
 * draws its lognormals here too, so that both paths stay equal. */
static inline double rng_lognormal(const gsl_rng *r, double zeta, double sigma)
{
    return exp(sigma * gsl_ran_gaussian_ziggurat(r, 1.0) + zeta);
}

/* splitmix64-based mixing of the keys; exposed for tests. */
uint64_t rng_hash(uint64_t seed, uint64_t replication, uint64_t entity,
                  uint64_t purpose);

enum dist_kind {
    DIST_CONST = 0,
    DIST_UNIFORM,      /* a = min, b = max */
    DIST_EXPONENTIAL,  /* a = mean */
    DIST_NORMAL,       /* a = mean, b = sd */
    DIST_LOGNORMAL,    /* a = mean, b = sd of the variable itself */
    DIST_PARETO,       /* a = scale (minimum x_m), b = shape */
    DIST_EMPIRICAL     /* values[n], drawn uniformly */
};

/* A distribution of a non-negative quantity (time in s, tokens, ...).
 * `values` is owned by whoever owns the dist (see dist_fini/dist_copy). */
typedef struct dist {
    enum dist_kind kind;
    double a, b;
    double *values;
    size_t n;
} dist_t;

/* One draw. Times and lengths are non-negative: normal is truncated at 0
 * (rejection, so the result follows the truncated law). */
double dist_sample(const dist_t *d, gsl_rng *r);
/* The mean of the distribution as drawn (truncation included). */
double dist_mean(const dist_t *d);
/* Deep copy into *dst; returns 0, or -1 on allocation failure. */
int dist_copy(dist_t *dst, const dist_t *src);
void dist_fini(dist_t *d);
/* dist_const(x): a constant; nothing to free. */
dist_t dist_const(double x);

#endif
