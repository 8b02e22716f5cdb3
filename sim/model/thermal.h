/* thermal — a device's temperature and its throttling levels (a hardware
 * card's optional `thermal:` section; docs/design.md, "Thermal throttling").
 *
 * One thermal node, a first-order RC model:
 *     dT/dt = (P·R_th − (T − T_amb)) / τ
 * with P the card's power_w while the device computes (drafting or
 * prefilling) and its idle_power_w otherwise. Over an interval of constant
 * power T relaxes exponentially towards T∞ = T_amb + P·R_th:
 *     T(t0 + d) = T∞ + (T(t0) − T∞)·e^(−d/τ)
 * so every threshold crossing has a closed-form time,
 *     d* = τ·ln((T(t0) − T∞) / (T_x − T∞)),
 * and the state is advanced exactly, event to event, with no time step.
 *
 * Levels: level 0 is full speed; level k (1 … n) runs at levels[k-1].speed
 * (a fraction of full speed). The device moves up to level k when T reaches
 * levels[k-1].above, and down from level k when T falls to
 * levels[k-1].above − hysteresis. A draft step or block, or an edge prefill,
 * runs at the level the device is at when it starts (sim/entity/edge.c
 * divides its time by that level's speed).
 */
#ifndef SPECSIM_THERMAL_H
#define SPECSIM_THERMAL_H

#define THERMAL_LEVELS_MAX 8

typedef struct thermal_level {
    double above;   /* °C: the level starts when T reaches it */
    double speed;   /* fraction of full speed in (0, 1] */
} thermal_level_t;

typedef struct thermal_cfg {
    double ambient;     /* T_amb, °C */
    double r_th;        /* R_th, K/W: T∞ − T_amb per watt */
    double tau;         /* τ, s */
    double start;       /* T at time 0 (°C) when has_start */
    int has_start;      /* 0: the idle equilibrium T_amb + idle_power·R_th */
    double hysteresis;  /* K below a level's `above` before it is left */
    int nlevels;
    thermal_level_t level[THERMAL_LEVELS_MAX];
} thermal_cfg_t;

/* One device's state. The accumulators cover the window [lo, hi] (the
 * run's measured span): time spent below full speed, and the integral of
 * the speed over time. */
typedef struct thermal {
    const thermal_cfg_t *cfg;
    double p_busy, p_idle;   /* W */
    double temp, t;          /* temperature at time t */
    int level;               /* 0 = full speed */
    double lo, hi;
    double throttled_s, speed_s;
} thermal_t;

/* The state at time 0: temperature cfg->start (or the idle equilibrium),
 * at the level that temperature reaches from below. */
void thermal_init(thermal_t *th, const thermal_cfg_t *cfg, double p_busy,
                  double p_idle, double lo, double hi);
/* Advances the state to time `to` (>= th->t; earlier is ignored) at the
 * busy power (busy != 0) or the idle power, crossing levels at their exact
 * times and accumulating the window's sums. */
void thermal_advance(thermal_t *th, double to, int busy);
/* The speed of the current level (1 at level 0). */
double thermal_speed(const thermal_t *th);
/* Time from a step of power P at temperature t0 until the temperature
 * reaches tx: τ·ln((t0 − T∞)/(tx − T∞)); +inf when it never does. */
double thermal_cross_time(const thermal_cfg_t *cfg, double power, double t0,
                          double tx);

#endif
