/* gamma_rtt — per tenant, the gamma in [1, protocol.gamma] that maximises
 * the closed-form rate of the tenant's protocol (gamma_env_t.rate, which
 * the protocol supplies: sync E[a+1]/(γd + R), async the renewal formula
 * with the tenant's window, sim/model/specrate.h) at
 * the tenant's current estimates (sim/model/gamma_obs.h): acceptance alpha (EWMA
 * of accepted / evaluated drafts per verdict, prior the scenario's mean
 * acceptance for the tenant's group, else GAMMA_OBS_ALPHA_PRIOR), draft time
 * per token (EWMA of its own drafting: send − draft start, over gamma) and
 * round trip R (EWMA of verdict arrival − block send, which includes the
 * links, the cloud's queue and the verification — as the device sees it).
 * It observes nothing else. Until the first block is sent and its verdict
 * is back it drafts protocol.gamma. Re-evaluated before each block; the
 * choice is cached while no estimate moved by more than GAMMA_RTT_TOL
 * (relative). */
#include <math.h>
#include <stdlib.h>

#include "model/gamma.h"
#include "model/gamma_obs.h"

#define GAMMA_RTT_TOL 1e-3

typedef struct rtt_state {
    gamma_obs_t obs;
    double alpha, d, rtt;   /* the estimates the cached choice was made at */
    int choice;             /* 0: none yet */
} rtt_state_t;

static int rtt_limit(int gamma) { return gamma; }

/* Allocates the tenant's state in st->priv (freed by rtt_fini). */
static int rtt_init(gamma_state_t *st, int tenant)
{
    (void)tenant;
    rtt_state_t *p = calloc(1, sizeof *p);
    if (!p) return -1;
    gamma_obs_init(&p->obs, st->env.alpha_prior);
    st->priv = p;
    return 0;
}

static void rtt_fini(gamma_state_t *st)
{
    free(st->priv);
    st->priv = NULL;
}

static int moved(double was, double now)
{
    return !(fabs(now - was) <= GAMMA_RTT_TOL * fabs(was));
}

static double rtt_const(const void *ctx, int g)
{
    (void)g;
    return *(const double *)ctx;
}

static int rtt_next(gamma_state_t *st, int tenant, double now)
{
    (void)tenant;
    (void)now;
    rtt_state_t *p = st->priv;
    const gamma_obs_t *o = &p->obs;
    if (isnan(o->d) || isnan(o->rtt)) return st->limit;
    double a = gamma_obs_alpha(o);
    if (p->choice && !moved(p->alpha, a) && !moved(p->d, o->d) && !moved(p->rtt, o->rtt))
        return p->choice;
    p->alpha = a;
    p->d = o->d;
    p->rtt = o->rtt;
    p->choice = gamma_obs_best(&st->env, 1, st->limit, a, o->d, rtt_const, &o->rtt);
    return p->choice;
}

static void rtt_sent(gamma_state_t *st, int tenant, int gamma, double start, double now)
{
    (void)tenant;
    rtt_state_t *p = st->priv;
    gamma_obs_sent(&p->obs, gamma, start, now);
}

static void rtt_verdict(gamma_state_t *st, int tenant, int gamma, int accepted,
                        double sent, double now)
{
    (void)tenant;
    rtt_state_t *p = st->priv;
    gamma_obs_verdict(&p->obs, gamma, accepted, sent, now);
}

const gamma_ops_t gamma_rtt = {
    .name = "rtt",
    .uses_rate = 1,
    .limit = rtt_limit,
    .init = rtt_init,
    .fini = rtt_fini,
    .next = rtt_next,
    .on_verdict = rtt_verdict,
    .on_sent = rtt_sent,
};
