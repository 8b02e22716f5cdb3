#include "model/network.h"

#include <math.h>
#include <stdlib.h>

#include <gsl/gsl_randist.h>

/* Seconds per byte at bps bits/s; 0 for an unlimited link. */
static double spb_of(double bps) { return isinf(bps) || bps <= 0 ? 0 : 8.0 / bps; }

int network_link_init(network_link_t *l, double rtt, double bps,
                      const dist_t *jitter, uint64_t seed, int rep,
                      uint64_t entity, int purpose, err_t *err)
{
    l->free_at = 0;
    l->last_delivery = 0;
    l->half_rtt = rtt / 2;
    l->sec_per_byte = spb_of(bps);
    l->rng = NULL;
    l->jitter = NULL;
    l->var = NULL;
    if (!jitter || (jitter->kind == DIST_CONST && jitter->a == 0)) return 0;
    l->jitter = jitter;
    if (jitter->kind == DIST_CONST) return 0;   /* constant: no draws */
    if (jitter->kind == DIST_LOGNORMAL && jitter->a > 0) {
        /* The same parameterisation as dist_sample (mean and sd of the
         * variable itself); test_network checks the draws are identical. */
        double s2 = log1p((jitter->b * jitter->b) / (jitter->a * jitter->a));
        l->ln_mu = log(jitter->a) - 0.5 * s2;
        l->ln_sigma = sqrt(s2);
    }
    l->rng = rngbox_init(&l->box, seed, (uint64_t)rep, entity, (uint64_t)purpose, err);
    if (!l->rng) return -1;
    if (l->jitter->kind == DIST_LOGNORMAL && l->jitter->a > 0)
        l->ln_next = rng_lognormal(l->rng, l->ln_mu, l->ln_sigma);
    return 0;
}

static void var_free(struct network_var *v);

void network_link_fini(network_link_t *l)
{
    l->rng = NULL;   /* the stream lives in the box: nothing to free */
    var_free(l->var);
    l->var = NULL;
}

static double var_send(network_link_t *l, double now, double bytes);

double network_send(network_link_t *l, double now, double bytes)
{
    double arrive;
    if (l->var) {
        arrive = var_send(l, now, bytes);
    } else {
        double start = now > l->free_at ? now : l->free_at;
        l->free_at = start + bytes * l->sec_per_byte;
        arrive = l->free_at + l->half_rtt;
    }
    if (l->jitter) {
        if (l->jitter->kind == DIST_LOGNORMAL && l->jitter->a > 0) {
            /* Drawn one message ahead, from the link's own stream, so the
             * same values in the same order: a draw is a chain of log,
             * divide, square root and exp (about 80 cycles of latency)
             * that the delivery time, and the event queue's comparisons
             * on it, would otherwise wait for; made here, it overlaps with
             * the rest of the event and is ready at the next message. */
            arrive += l->ln_next;
            l->ln_next = rng_lognormal(l->rng, l->ln_mu, l->ln_sigma);
        } else
            arrive += dist_sample(l->jitter, l->rng);
    }
    if (arrive < l->last_delivery) arrive = l->last_delivery;
    l->last_delivery = arrive;
    return arrive;
}

/* ---- links that vary ------------------------------------------------------ */

/* A link's variation as it runs. Every query time is at or after the one
 * before (a message starts when the previous one has left), so each
 * process is walked forward, lazily: the trace cursors move on, the
 * random processes draw their next sojourn when the current one ends. */
typedef struct network_var {
    int dir;
    double rtt, spb;           /* the link's own: what nothing else gives */
    const linktrace_t *tr;     /* CSV: segment tr_k of cycle tr_cyc */
    double tr_off;
    long tr_cyc;
    int tr_k;
    const linkopp_t *op;       /* Mahimahi: the next unused opportunity */
    double op_off;
    long op_cyc, op_k;
    double op_at, op_left;     /* the last used opportunity, its bytes left */
    const network_state_t *st; /* Markov states */
    int nst, st_k;
    double st_end;
    gsl_rng *st_rng;
    double ge_mean[2];         /* Gilbert-Elliott: mean down, mean up */
    int ge_up;
    double ge_end;
    gsl_rng *ge_rng;
} network_var_t;

/* The link over [now, end): its round trip, seconds per byte (0 unlimited)
 * and state. */
typedef struct seg {
    double rtt, spb, end;
    int up;
} seg_t;

static void var_free(network_var_t *v)
{
    if (!v) return;
    if (v->st_rng) gsl_rng_free(v->st_rng);
    if (v->ge_rng) gsl_rng_free(v->ge_rng);
    free(v);
}

static double st_bps(const network_state_t *s, int dir)
{
    return dir ? s->downlink_bps : s->uplink_bps;
}

/* The first index k of the sorted a[0..n) with a[k] >= x (n: none). */
static long lower_bound(const double *a, long n, double x)
{
    long lo = 0, hi = n;
    while (lo < hi) {
        long mid = lo + (hi - lo) / 2;
        if (a[mid] < x) lo = mid + 1;
        else hi = mid;
    }
    return lo;
}

/* Starting point in a trace of length period: u·period, or entity·stride
 * folded into the period. */
static double start_in(const network_vary_t *v, double u, uint64_t entity, double period)
{
    double o = v->random_offset ? u * period : fmod((double)entity * v->stride, period);
    return o >= 0 && o < period ? o : 0;
}

int network_link_vary(network_link_t *l, const network_vary_t *v, uint64_t seed, int rep,
                      uint64_t entity, err_t *err)
{
    network_var_t *x = calloc(1, sizeof *x);
    if (!x) return err_set(err, ERR_RUNTIME, "network: out of memory");
    var_free(l->var);
    l->var = x;
    x->dir = v->dir;
    x->rtt = 2 * l->half_rtt;
    x->spb = l->sec_per_byte;
    double u = 0;
    if ((v->trace || v->opp) && v->random_offset) {
        gsl_rng *r = rng_stream(seed, (uint64_t)rep, entity, RNG_LINK_OFFSET);
        if (!r) return err_set(err, ERR_RUNTIME, "network: out of memory");
        u = rng_uniform(r);
        gsl_rng_free(r);
    }
    if (v->trace) {
        x->tr = v->trace;
        x->tr_off = start_in(v, u, entity, v->trace->period);
        /* The segment holding the offset: the last start <= it. */
        long k = lower_bound(v->trace->t, v->trace->n, x->tr_off);
        if (k == v->trace->n || v->trace->t[k] > x->tr_off) k--;
        x->tr_k = (int)k;
    }
    if (v->opp) {
        x->op = v->opp;
        x->op_off = start_in(v, u, entity, v->opp->period);
        x->op_k = lower_bound(v->opp->t, v->opp->n, x->op_off);
        if (x->op_k == v->opp->n) {
            x->op_k = 0;
            x->op_cyc = 1;
        }
        x->op_at = -INFINITY;
    }
    if (v->nstates > 0) {
        x->st = v->states;
        x->nst = v->nstates;
        x->st_rng = rng_stream(seed, (uint64_t)rep, entity, RNG_LINK_STATE);
        if (!x->st_rng) return err_set(err, ERR_RUNTIME, "network: out of memory");
        /* In steady state from the start: state k with the share of time
         * it holds (its mean over the sum: the moves are uniform), for
         * an exponential (memoryless) remainder. */
        double sum = 0, acc = 0;
        for (int k = 0; k < x->nst; k++) sum += x->st[k].mean;
        double w = rng_uniform(x->st_rng) * sum;
        x->st_k = x->nst - 1;
        for (int k = 0; k < x->nst; k++)
            if (w < (acc += x->st[k].mean)) {
                x->st_k = k;
                break;
            }
        x->st_end = x->nst > 1 ? gsl_ran_exponential(x->st_rng, x->st[x->st_k].mean)
                               : INFINITY;
    }
    if (v->mean_up > 0 && v->mean_down > 0) {
        x->ge_mean[0] = v->mean_down;
        x->ge_mean[1] = v->mean_up;
        x->ge_rng = rng_stream(seed, (uint64_t)rep, entity, RNG_LINK_OUTAGE);
        if (!x->ge_rng) return err_set(err, ERR_RUNTIME, "network: out of memory");
        x->ge_up = rng_uniform(x->ge_rng) * (v->mean_up + v->mean_down) < v->mean_up;
        x->ge_end = gsl_ran_exponential(x->ge_rng, x->ge_mean[x->ge_up]);
    }
    return 0;
}

/* Moves a cursor (cycle *cyc, index *k into the sorted a[0..n) of one
 * cycle of length period, offset off) near the last entry at or before
 * t (last = 0) or the first at or after it (last = 1), by binary search:
 * a link idle for long would otherwise walk every entry in between. The
 * callers then step to the exact entry, so rounding here only costs a
 * step. */
static void seek(const double *a, long n, double period, double off, double t, long *cyc,
                 long *k, int last)
{
    double tau = t + off - (double)*cyc * period;
    if (!(tau > a[*k])) return;
    if (tau >= period) {
        long c = (long)floor(tau / period);
        *cyc += c;
        tau -= (double)c * period;
        *k = 0;
    }
    long j = *k + lower_bound(a + *k, n - *k, tau);
    if (!last && j > *k && (j == n || a[j] > tau)) j--;
    if (j >= n) {
        j = 0;
        ++*cyc;
    }
    *k = j;
}

static void tr_seek(network_var_t *x, double t)
{
    long k = x->tr_k;
    seek(x->tr->t, x->tr->n, x->tr->period, x->tr_off, t, &x->tr_cyc, &k, 0);
    x->tr_k = (int)k;
}

/* The segment of the link at time t (>= every earlier query's t). */
static void var_seg(network_var_t *x, double t, seg_t *s)
{
    s->rtt = x->rtt;
    s->spb = x->spb;
    s->up = 1;
    s->end = INFINITY;
    if (x->tr) {
        const linktrace_t *T = x->tr;
        tr_seek(x, t);
        double e;
        while ((e = (double)x->tr_cyc * T->period + T->t[x->tr_k + 1] - x->tr_off) <= t)
            if (++x->tr_k == T->n) {
                x->tr_k = 0;
                x->tr_cyc++;
            }
        s->end = e;
        s->rtt = T->rtt[x->tr_k];
        s->spb = spb_of(T->bps[x->dir][x->tr_k]);
        s->up = T->up[x->tr_k];
    }
    if (x->st) {
        while (x->st_end <= t) {
            int k = (int)gsl_rng_uniform_int(x->st_rng, (unsigned long)(x->nst - 1));
            x->st_k = k >= x->st_k ? k + 1 : k;   /* one of the others */
            x->st_end += gsl_ran_exponential(x->st_rng, x->st[x->st_k].mean);
        }
        const network_state_t *q = &x->st[x->st_k];
        s->rtt = q->rtt;
        s->spb = spb_of(st_bps(q, x->dir));
        s->up = q->up;
        if (x->st_end < s->end) s->end = x->st_end;
    }
    if (x->ge_rng) {
        while (x->ge_end <= t) {
            x->ge_up = !x->ge_up;
            x->ge_end += gsl_ran_exponential(x->ge_rng, x->ge_mean[x->ge_up]);
        }
        s->up &= x->ge_up;
        if (x->ge_end < s->end) s->end = x->ge_end;
    }
}

/* When the last of `bytes` leaves, serialising from start at the rate of
 * each segment and not at all while the link is down; s: the segment it
 * leaves in. */
static double depart_rate(network_var_t *x, double start, double bytes, seg_t *s)
{
    double cur = start, left = bytes;
    for (;;) {
        var_seg(x, cur, s);
        if (!s->up) {
            cur = s->end;
            continue;
        }
        if (s->spb == 0 || left <= 0) return cur;
        double need = left * s->spb;
        if (cur + need <= s->end) return cur + need;
        left -= (s->end - cur) / s->spb;
        cur = s->end;
    }
}

/* The time of the next unused Mahimahi opportunity at or after t (the
 * cursor moves to it, unused). */
static double opp_next(network_var_t *x, double t)
{
    const linkopp_t *O = x->op;
    seek(O->t, O->n, O->period, x->op_off, t, &x->op_cyc, &x->op_k, 1);
    for (;;) {
        double o = (double)x->op_cyc * O->period + O->t[x->op_k] - x->op_off;
        if (o >= t) return o;
        if (++x->op_k == O->n) {
            x->op_k = 0;
            x->op_cyc++;
        }
    }
}

/* Mahimahi: each opportunity carries LINKTRACE_MTU bytes of the messages
 * queued at it, in order (mm-link's byte accounting); one that comes
 * while the link is down is lost. A message handed over at or before the
 * opportunity its predecessor left in uses what that one left of it. */
static double depart_opp(network_var_t *x, double now, double start, double bytes, seg_t *s)
{
    double left = bytes;
    if (now <= x->op_at && x->op_left > 0) {
        double take = left < x->op_left ? left : x->op_left;
        x->op_left -= take;
        left -= take;
        if (left <= 0) {
            var_seg(x, x->op_at, s);
            return x->op_at;
        }
    }
    double cur = start;
    for (;;) {
        double o = opp_next(x, cur);
        var_seg(x, o, s);
        if (!s->up) {
            cur = s->end;
            continue;
        }
        if (++x->op_k == x->op->n) {   /* used */
            x->op_k = 0;
            x->op_cyc++;
        }
        double take = left < LINKTRACE_MTU ? left : LINKTRACE_MTU;
        x->op_at = o;
        x->op_left = LINKTRACE_MTU - take;
        left -= take;
        if (left <= 0) return o;
        cur = o;
    }
}

int network_state_at(network_link_t *l, double t, double *rtt, double *until)
{
    if (!l->var) {
        *rtt = 2 * l->half_rtt;
        *until = INFINITY;
        return 1;
    }
    seg_t s;
    var_seg(l->var, t, &s);
    *rtt = s.rtt;
    *until = s.end;
    return s.up;
}

static double var_send(network_link_t *l, double now, double bytes)
{
    network_var_t *x = l->var;
    double start = now > l->free_at ? now : l->free_at;
    seg_t s;
    l->free_at = x->op ? depart_opp(x, now, start, bytes, &s)
                       : depart_rate(x, start, bytes, &s);
    return l->free_at + s.rtt / 2;
}
