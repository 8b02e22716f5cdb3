/* gamma_goodput — per tenant and per block, the gamma in [0, protocol.gamma]
 * that maximises expected committed tokens per second, with the round trip
 * modelled as growing with the block: R(γ) = R0 + c·(γ + 1), c being what
 * one more token costs the cloud's verification of the batch the block
 * joins (plus its transfer). The edge cannot see the cloud's batch, so c and
 * R0 come from the device's own measurements: a least-squares line through
 * the last GOODPUT_WINDOW (gamma, round trip) pairs of its verdicts (c = 0
 * while they all share one gamma; c clamped at 0, since a longer block never
 * makes the round trip shorter). Acceptance alpha and draft time per token
 * are the estimates of sim/model/gamma_obs.h (EWMA, prior from the scenario's
 * acceptance for the tenant's group); the rate is the tenant's protocol's
 * closed form (gamma_env_t.rate, which the protocol supplies). It observes
 * nothing else; until the first verdict it drafts protocol.gamma.
 * gamma = 0 is plain remote decoding for the block (one token a round trip
 * R(0), sim/model/gamma_obs.h): chosen when acceptance is too low for drafting to
 * pay for its own time. Such blocks teach it nothing about acceptance (a
 * device that stops drafting stops learning how well it drafts), so an
 * estimate that happened to drift low would keep it at 0 for good: it
 * picks 0 only when 0 also beats every gamma >= 1 at an optimistic
 * acceptance, the estimate plus two standard deviations of its EWMA (at
 * least + GOODPUT_ZERO_MARGIN_MIN); otherwise the best gamma >= 1 at the
 * estimate. While at 0, every GOODPUT_PROBE-th block is a probe of one
 * draft that keeps the estimate learning — unless drafting could not pay
 * even at acceptance GAMMA_OBS_ALPHA_CAP (a draft slower than a round
 * trip: (g + 1)/(g·d + R) <= 1/R when d >= R), when nothing is probed. */
#include <math.h>
#include <stdlib.h>

#include "model/gamma.h"
#include "model/gamma_obs.h"

#define GOODPUT_WINDOW 32
/* The least optimism of the gamma-0 decision (acceptance points). */
#define GOODPUT_ZERO_MARGIN_MIN 0.05
/* While at gamma 0, every GOODPUT_PROBE-th block drafts one token. */
#define GOODPUT_PROBE 16

typedef struct goodput_state {
    gamma_obs_t obs;
    int n, head;                     /* pairs held, next slot */
    int g[GOODPUT_WINDOW];
    double rtt[GOODPUT_WINDOW];
    double r0, c;                    /* the fitted line */
    int zrun;                        /* blocks of gamma 0 chosen in a row */
} goodput_state_t;

static int goodput_limit(int gamma) { return gamma; }

/* Allocates the tenant's state in st->priv (freed by goodput_fini). */
static int goodput_init(gamma_state_t *st, int tenant)
{
    (void)tenant;
    goodput_state_t *p = calloc(1, sizeof *p);
    if (!p) return -1;
    gamma_obs_init(&p->obs, st->env.alpha_prior);
    st->priv = p;
    return 0;
}

static void goodput_fini(gamma_state_t *st)
{
    free(st->priv);
    st->priv = NULL;
}

/* Least squares of rtt on (gamma + 1) over the held pairs. */
static void goodput_fit(goodput_state_t *p)
{
    double mg = 0, mr = 0, sgg = 0, sgr = 0;
    for (int k = 0; k < p->n; k++) {
        mg += p->g[k] + 1;
        mr += p->rtt[k];
    }
    mg /= p->n;
    mr /= p->n;
    for (int k = 0; k < p->n; k++) {
        double dg = p->g[k] + 1 - mg;
        sgg += dg * dg;
        sgr += dg * (p->rtt[k] - mr);
    }
    p->c = sgg > 0 ? fmax(sgr / sgg, 0) : 0;
    p->r0 = mr - p->c * mg;
}

static double goodput_rtt_of(const void *ctx, int g)
{
    const goodput_state_t *p = ctx;
    return fmax(p->r0 + p->c * (g + 1), 0);
}

/* Two standard deviations of the acceptance estimate's EWMA (weight w,
 * one Bernoulli draft per step: alpha(1 - alpha) w / (2 - w)), at least
 * GOODPUT_ZERO_MARGIN_MIN. */
static double goodput_margin(double a)
{
    double w = GAMMA_OBS_EWMA;
    return fmax(2 * sqrt(a * (1 - a) * w / (2 - w)), GOODPUT_ZERO_MARGIN_MIN);
}

static int goodput_next(gamma_state_t *st, int tenant, double now)
{
    (void)tenant;
    (void)now;
    goodput_state_t *p = st->priv;
    if (p->n == 0 || isnan(p->obs.d)) return st->limit;
    double a = gamma_obs_alpha(&p->obs);
    /* gamma 0 only when it wins even at an optimistic acceptance, so that
     * an estimate that drifted low cannot lock the tenant out of drafting
     * (see the header). */
    double hi = fmin(a + goodput_margin(a), GAMMA_OBS_ALPHA_CAP);
    if (gamma_obs_best(&st->env, 0, st->limit, hi, p->obs.d, goodput_rtt_of, p) != 0) {
        p->zrun = 0;
        return gamma_obs_best(&st->env, 1, st->limit, a, p->obs.d, goodput_rtt_of, p);
    }
    /* A probe of one draft now and then, unless no acceptance at all could
     * make drafting pay. */
    int hopeless = gamma_obs_best(&st->env, 0, st->limit, GAMMA_OBS_ALPHA_CAP, p->obs.d,
                                  goodput_rtt_of, p) == 0;
    return !hopeless && ++p->zrun % GOODPUT_PROBE == 0 ? 1 : 0;
}

static void goodput_sent(gamma_state_t *st, int tenant, int gamma, double start,
                         double now)
{
    (void)tenant;
    goodput_state_t *p = st->priv;
    gamma_obs_sent(&p->obs, gamma, start, now);
}

static void goodput_verdict(gamma_state_t *st, int tenant, int gamma, int accepted,
                            double sent, double now)
{
    (void)tenant;
    goodput_state_t *p = st->priv;
    gamma_obs_verdict(&p->obs, gamma, accepted, sent, now);
    if (!(now >= sent)) return;
    p->g[p->head] = gamma;
    p->rtt[p->head] = now - sent;
    p->head = (p->head + 1) % GOODPUT_WINDOW;
    if (p->n < GOODPUT_WINDOW) p->n++;
    goodput_fit(p);
}

const gamma_ops_t gamma_goodput = {
    .name = "goodput",
    .uses_rate = 1,
    .limit = goodput_limit,
    .init = goodput_init,
    .fini = goodput_fini,
    .next = goodput_next,
    .on_verdict = goodput_verdict,
    .on_sent = goodput_sent,
};
