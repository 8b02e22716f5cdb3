/* thermal — a device's temperature and throttling levels (see thermal.h). */
#include "model/thermal.h"

#include <math.h>

double thermal_cross_time(const thermal_cfg_t *cfg, double power, double t0,
                          double tx)
{
    double tinf = cfg->ambient + power * cfg->r_th;
    double a = t0 - tinf, b = tx - tinf;
    /* tx at or beyond T∞ (or on the other side of it) is never reached */
    if (b == 0 || (a < 0) != (b < 0)) return INFINITY;
    double ratio = a / b;
    return ratio <= 1 ? 0 : cfg->tau * log(ratio);
}

double thermal_speed(const thermal_t *th)
{
    return th->level > 0 ? th->cfg->level[th->level - 1].speed : 1.0;
}

/* [a, b] at the current level, clipped to the window. */
static void account(thermal_t *th, double a, double b)
{
    if (a < th->lo) a = th->lo;
    if (b > th->hi) b = th->hi;
    if (!(b > a)) return;
    if (th->level > 0) th->throttled_s += b - a;
    th->speed_s += (b - a) * thermal_speed(th);
}

void thermal_init(thermal_t *th, const thermal_cfg_t *cfg, double p_busy,
                  double p_idle, double lo, double hi)
{
    *th = (thermal_t){.cfg = cfg, .p_busy = p_busy, .p_idle = p_idle,
                      .lo = lo, .hi = hi};
    th->temp = cfg->has_start ? cfg->start : cfg->ambient + p_idle * cfg->r_th;
    while (th->level < cfg->nlevels && th->temp >= cfg->level[th->level].above)
        th->level++;
}

void thermal_advance(thermal_t *th, double to, int busy)
{
    const thermal_cfg_t *c = th->cfg;
    double p = busy ? th->p_busy : th->p_idle;
    double tinf = c->ambient + p * c->r_th;
    while (th->t < to) {
        int step = 0;
        double tx = 0;
        if (tinf > th->temp && th->level < c->nlevels) {
            step = 1;
            tx = c->level[th->level].above;
        } else if (tinf < th->temp && th->level > 0) {
            step = -1;
            tx = c->level[th->level - 1].above - c->hysteresis;
        }
        double d = step ? thermal_cross_time(c, p, th->temp, tx) : INFINITY;
        if (!(th->t + d < to)) {
            account(th, th->t, to);
            th->temp = tinf + (th->temp - tinf) * exp(-(to - th->t) / c->tau);
            th->t = to;
            return;
        }
        account(th, th->t, th->t + d);
        th->t += d;
        th->temp = tx;
        th->level += step;
    }
}
