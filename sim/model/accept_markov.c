/* accept_markov — a hidden good/bad state per tenant with alpha_good /
 * alpha_bad; after each draft that is evaluated (the accepted ones and the
 * first rejected one) the state switches with p_good_bad / p_bad_good. It
 * models bursty difficulty: rejections cluster.
 *
 * The first state is drawn from the chain's stationary law pi (pi_good =
 * p_bad_good / (p_good_bad + p_bad_good)). A frozen chain (both switch
 * probabilities 0) has every law stationary; the one used is pi_good = 1/2,
 * so a tenant population mixes both states. That one definition serves the
 * initial state (init), the block law's start law (law) and the reported
 * mean (mean) alike.
 *
 * Mean per-draft acceptance: pi_good·alpha_good + pi_bad·alpha_bad, which
 * is the long-run share of evaluated drafts accepted (each evaluated draft
 * sees the stationary state law). */
#include <stddef.h>

#include "model/accept.h"
#include "io/keytab.h"
#include "engine/rng.h"

typedef struct markov_par {
    double alpha_good, alpha_bad;
    double p_good_bad, p_bad_good;
} markov_par_t;

typedef struct markov_state {
    int good;
} markov_state_t;

_Static_assert(sizeof(markov_state_t) <= ACCEPT_STATE_BYTES, "markov state too large");

#define PROB(n, f)                                                            \
    {.name = n, KEYTAB_NUM(markov_par_t, f), .min = 0, .max = 1, .flags = KF_REQUIRED}
static const keytab_key_t MARKOV_KEYS[] = {
    PROB("alpha_good", alpha_good),
    PROB("alpha_bad", alpha_bad),
    PROB("p_good_bad", p_good_bad),
    PROB("p_bad_good", p_bad_good),
    {.name = NULL}};

static int prob_ok(double p)
{
    return p >= 0.0 && p <= 1.0; /* also false for NAN */
}

static double pi_good(const markov_par_t *p)
{
    double s = p->p_good_bad + p->p_bad_good;
    return s > 0.0 ? p->p_bad_good / s : 0.5;
}

static int markov_check(const void *par, err_t *err)
{
    const markov_par_t *p = par;
    if (!prob_ok(p->alpha_good) || !prob_ok(p->alpha_bad) || !prob_ok(p->p_good_bad) ||
        !prob_ok(p->p_bad_good))
        return err_set(err, ERR_INPUT, "acceptance: markov alpha_good, alpha_bad, "
                       "p_good_bad and p_bad_good must lie in [0, 1]");
    return 0;
}

static int markov_init(void *st, const void *par, const accept_seat_t *seat,
                       err_t *err)
{
    gsl_rng *r = accept_param_rng(seat, err);
    if (!r) return -1;
    ((markov_state_t *)st)->good = rng_uniform(r) < pi_good(par);
    gsl_rng_free(r);
    return 0;
}

/* One uniform per evaluated draft: u < p decides acceptance, and the
 * residual (u/p or (u-p)/(1-p)), uniform on [0,1) and independent of that
 * decision, decides the state switch. */
static int markov_draw(void *st, const void *par, gsl_rng *r, int gamma)
{
    const markov_par_t *c = par;
    markov_state_t *m = st;
    for (int i = 0; i < gamma; i++) {
        double p = m->good ? c->alpha_good : c->alpha_bad;
        double sw = m->good ? c->p_good_bad : c->p_bad_good;
        double u = rng_uniform(r);
        int ok = u < p;
        double res = ok ? u / p : (u - p) / (1.0 - p);
        if (res < sw) m->good = !m->good;
        if (!ok) return i;
    }
    return gamma;
}

static double markov_mean(const void *par, int gamma)
{
    (void)gamma;
    const markov_par_t *p = par;
    double pg = pi_good(p);
    return pg * p->alpha_good + (1.0 - pg) * p->alpha_bad;
}

/* State 0 good, 1 bad. From each start state, carry the surviving mass
 * over the states through the block: at each position the rejected part
 * ends the block (then switches), the accepted part switches and goes on. */
static int markov_law(const void *par, int gamma, accept_law_t *L, err_t *err)
{
    const markov_par_t *p = par;
    if (accept_law_init(L, 1, 2, gamma, err) != 0) return -1;
    double al[2] = {p->alpha_good, p->alpha_bad}, sw[2] = {p->p_good_bad, p->p_bad_good};
    for (int s = 0; s < 2; s++) {
        double alive[2] = {s == 0, s == 1};
        for (int i = 0; i < gamma; i++) {
            double next[2] = {0, 0};
            for (int c = 0; c < 2; c++) {
                double acc = alive[c] * al[c], rj = alive[c] * (1 - al[c]);
                *accept_law_rej(L, 0, s, i, c) += rj * (1 - sw[c]);
                *accept_law_rej(L, 0, s, i, !c) += rj * sw[c];
                next[c] += acc * (1 - sw[c]);
                next[!c] += acc * sw[c];
            }
            alive[0] = next[0];
            alive[1] = next[1];
        }
        L->part[0].full[s][0] = alive[0];
        L->part[0].full[s][1] = alive[1];
    }
    L->part[0].start[0] = pi_good(p);
    L->part[0].start[1] = 1 - L->part[0].start[0];
    return 0;
}

const accept_model_t accept_markov_model = {
    .name = "markov",
    .keys = MARKOV_KEYS,
    .par_size = sizeof(markov_par_t),
    .check = markov_check,
    .init = markov_init,
    .draw = markov_draw,
    .mean = markov_mean,
    .law = markov_law,
};
