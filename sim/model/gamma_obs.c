#include "model/gamma_obs.h"

#include <math.h>

static double ewma(double old, double x)
{
    return isnan(old) ? x : (1 - GAMMA_OBS_EWMA) * old + GAMMA_OBS_EWMA * x;
}

void gamma_obs_init(gamma_obs_t *o, double prior)
{
    if (!(prior > 0 && prior <= 1)) prior = GAMMA_OBS_ALPHA_PRIOR;
    o->acc = prior;
    o->eval = 1;
    o->d = NAN;
    o->rtt = NAN;
}

void gamma_obs_sent(gamma_obs_t *o, int gamma, double start, double now)
{
    if (gamma < 1 || !(now >= start)) return;
    o->d = ewma(o->d, (now - start) / gamma);
}

void gamma_obs_verdict(gamma_obs_t *o, int gamma, int accepted, double sent,
                       double now)
{
    /* A block of no drafts says nothing about acceptance; its round trip
     * counts. */
    if (gamma >= 1) {
        int ev = accepted + 1 < gamma ? accepted + 1 : gamma;
        o->acc = ewma(o->acc, accepted);
        o->eval = ewma(o->eval, ev);
    }
    /* No send time on record (NAN) leaves the round trip as it was. */
    if (now >= sent) o->rtt = ewma(o->rtt, now - sent);
}

double gamma_obs_alpha(const gamma_obs_t *o)
{
    double a = o->eval > 0 ? o->acc / o->eval : 0;
    return fmin(fmax(a, 0), GAMMA_OBS_ALPHA_CAP);
}

/* One gamma's rate, as gamma_obs_best compares them (gamma_obs.h). */
static double obs_rate(const gamma_env_t *env, double alpha, int gamma, double d,
                       double rtt)
{
    /* No drafts: one token a round trip in any protocol (nothing is
     * drafted past such a block, sim/model/gamma.h). */
    if (gamma == 0) return 1 / rtt;
    return env->rate(alpha, gamma, d, rtt, env->window);
}

int gamma_obs_best(const gamma_env_t *env, int lo, int limit, double alpha, double d,
                   double (*rtt_of)(const void *ctx, int g), const void *ctx)
{
    int best = lo;
    double top = -1;
    for (int g = lo; g <= limit; g++) {
        double x = obs_rate(env, alpha, g, d, rtt_of(ctx, g));
        /* A relative margin keeps rounding from picking a longer block that
         * is no faster. */
        if (x > top * (1 + 1e-12)) {
            top = x;
            best = g;
        }
    }
    return best;
}
