/* accfit — acceptance models fitted to measured streams (see accfit.h). */
#include "accfit.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_cdf.h>
#include <gsl/gsl_multimin.h>
#include <gsl/gsl_sf_gamma.h>

static const char *const names[ACCFIT_MODELS] = {"iid", "positional", "beta", "markov"};
static const int nparams[ACCFIT_MODELS] = {1, ACCFIT_POS, 2, 4};

const char *accfit_name(int model) { return names[model]; }
int accfit_params(int model) { return nparams[model]; }

/* ---- beta: maximum likelihood of the beta-binomial ----------------------- */

#define BETA_SUM_MAX 1e8

typedef struct bb_data {
    const accstat_stream_t *st;
    int ns;
} bb_data_t;

/* −log L(a, b) up to a constant: Σ_texts ln B(a, b) − ln B(k + a, n − k + b). */
static double bb_nll(const gsl_vector *v, void *arg)
{
    const bb_data_t *d = arg;
    double a = exp(gsl_vector_get(v, 0)), b = exp(gsl_vector_get(v, 1)), s = 0.0;
    /* a + b past BETA_SUM_MAX: the law is iid to within 1e-8 whatever the
     * data (a likelihood rising towards iid, no over-dispersion, would
     * otherwise send both to infinity). */
    if (!isfinite(a) || !isfinite(b) || a < 1e-6 || b < 1e-6 || a + b > BETA_SUM_MAX)
        return INFINITY;
    for (int i = 0; i < d->ns; i++) {
        long k = 0;
        for (int j = 0; j < d->st[i].n; j++) k += d->st[i].o[j];
        if (d->st[i].n == 0) continue;
        s += gsl_sf_lnbeta(a, b) - gsl_sf_lnbeta((double)k + a, (double)(d->st[i].n - k) + b);
    }
    return s;
}

static int fit_beta(const accstat_stream_t *st, int ns, accfit_t *f, err_t *err)
{
    bb_data_t d = {st, ns};
    gsl_multimin_function fn = {bb_nll, 2, &d};
    gsl_vector *x = gsl_vector_alloc(2), *step = gsl_vector_alloc(2);
    gsl_multimin_fminimizer *m = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, 2);
    if (!x || !step || !m) {
        gsl_vector_free(x);
        gsl_vector_free(step);
        if (m) gsl_multimin_fminimizer_free(m);
        return err_set(err, ERR_RUNTIME, "accfit: out of memory");
    }
    /* Start at a = 10α, b = 10(1 − α): the iid mean with moderate spread. */
    double al = f->alpha > 0.01 && f->alpha < 0.99 ? f->alpha : 0.5;
    gsl_vector_set(x, 0, log(10 * al));
    gsl_vector_set(x, 1, log(10 * (1 - al)));
    gsl_vector_set_all(step, 0.5);
    gsl_multimin_fminimizer_set(m, &fn, x, step);
    for (int it = 0; it < 2000; it++) {
        if (gsl_multimin_fminimizer_iterate(m)) break;
        if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(m), 1e-9) == GSL_SUCCESS) break;
    }
    f->a = exp(gsl_vector_get(m->x, 0));
    f->b = exp(gsl_vector_get(m->x, 1));
    gsl_multimin_fminimizer_free(m);
    gsl_vector_free(x);
    gsl_vector_free(step);
    return 0;
}

/* ---- markov: Baum–Welch, the initial law tied to the stationary law ----- */

/* States 0 and 1; x = P(0 → 1), y = P(1 → 0) after each outcome; every
 * stream starts in the stationary law π_0 = y / (x + y) (1/2 for a frozen
 * chain, as sim/model/accept_markov.c). */
typedef struct hmm {
    double e[2];   /* P(accept | state) */
    double x, y;
} hmm_t;

static double pi0_of(double x, double y)
{
    return x + y > 0 ? y / (x + y) : 0.5;
}

/* Expected counts of one E-step. */
typedef struct hmm_acc {
    double out[2][2];     /* [outcome][state] */
    double trans[2][2];   /* [from][to] */
    double first[2];      /* the first state of each stream */
} hmm_acc_t;

/* One stream's scaled forward pass (and, with acc, backward pass and
 * expected counts). fw, bw: 2n doubles, sc: n (1 / each step's scale).
 * Returns its log-likelihood. */
static double hmm_stream(const hmm_t *h, const uint8_t *o, int n, double *fw, double *bw,
                         double *sc, hmm_acc_t *acc)
{
    const double A[2][2] = {{1 - h->x, h->x}, {h->y, 1 - h->y}};
    const double p0 = pi0_of(h->x, h->y);
    const double em[2][2] = {{1 - h->e[0], 1 - h->e[1]}, {h->e[0], h->e[1]}};   /* [o][state] */
    /* ln Π scale, the product kept in range and its log taken now and then
     * (one log per outcome would be most of the cost). */
    double ll = 0, prod = 1;
    double f0 = p0, f1 = 1 - p0;
    for (int t = 0; t < n; t++) {
        if (t > 0) {
            double a = fw[2 * (t - 1)], b = fw[2 * (t - 1) + 1];
            f0 = a * A[0][0] + b * A[1][0];
            f1 = a * A[0][1] + b * A[1][1];
        }
        f0 *= em[o[t]][0];
        f1 *= em[o[t]][1];
        double s = f0 + f1;
        if (!(s > 1e-300)) s = 1e-300;
        double r = 1.0 / s;
        fw[2 * t] = f0 * r;
        fw[2 * t + 1] = f1 * r;
        sc[t] = r;
        prod *= s;
        if (prod < 1e-200) {
            ll += log(prod);
            prod = 1;
        }
    }
    ll += log(prod);
    if (!acc) return ll;
    bw[2 * (n - 1)] = bw[2 * (n - 1) + 1] = 1.0;
    double tr[2][2] = {{0, 0}, {0, 0}}, out[2][2] = {{0, 0}, {0, 0}};
    for (int t = n - 1; t >= 0; t--) {
        if (t < n - 1) {
            /* β_t(i) = Σ_j A[i][j] e_j(o_{t+1}) β_{t+1}(j) / scale_{t+1}, and the
             * expected transitions t → t + 1 on the way. */
            const double *e1 = em[o[t + 1]];
            double b0 = e1[0] * bw[2 * (t + 1)] * sc[t + 1], b1 = e1[1] * bw[2 * (t + 1) + 1] * sc[t + 1];
            double a0 = fw[2 * t], a1 = fw[2 * t + 1];
            tr[0][0] += a0 * A[0][0] * b0;
            tr[0][1] += a0 * A[0][1] * b1;
            tr[1][0] += a1 * A[1][0] * b0;
            tr[1][1] += a1 * A[1][1] * b1;
            bw[2 * t] = A[0][0] * b0 + A[0][1] * b1;
            bw[2 * t + 1] = A[1][0] * b0 + A[1][1] * b1;
        }
        out[o[t]][0] += fw[2 * t] * bw[2 * t];
        out[o[t]][1] += fw[2 * t + 1] * bw[2 * t + 1];
    }
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            acc->trans[i][j] += tr[i][j];
            acc->out[i][j] += out[i][j];
        }
    acc->first[0] += fw[0] * bw[0];
    acc->first[1] += fw[1] * bw[1];
    return ll;
}

/* The transition part of the expected complete-data log-likelihood, with
 * the first state's law tied to the stationary law:
 *   Q(x, y) = n00 ln(1 − x) + n01 ln x + n10 ln y + n11 ln(1 − y)
 *             + f0 ln π_0 + f1 ln π_1,   π_0 = y / (x + y),
 * negated, in logit coordinates for the minimiser. */
static double logistic(double u)
{
    return 1.0 / (1.0 + exp(-u));
}

static double q_neg(const gsl_vector *v, void *arg)
{
    const hmm_acc_t *c = arg;
    double u = gsl_vector_get(v, 0), w = gsl_vector_get(v, 1);
    if (!(fabs(u) <= 40 && fabs(w) <= 40)) return INFINITY;
    double x = logistic(u), y = logistic(w);
    /* ln(1 − logistic(u)) = −ln(1 + e^u), ln logistic(u) = −ln(1 + e^−u):
     * no loss of precision near 0 or 1. */
    double lx = -log1p(exp(-u)), l1x = -log1p(exp(u));
    double ly = -log1p(exp(-w)), l1y = -log1p(exp(w));
    double ls = log(x + y);
    return -(c->trans[0][0] * l1x + c->trans[0][1] * lx + c->trans[1][0] * ly +
             c->trans[1][1] * l1y + c->first[0] * (ly - ls) + c->first[1] * (lx - ls));
}

static double clamp_logit(double p)
{
    if (p < 1e-15) p = 1e-15;
    if (p > 1 - 1e-15) p = 1 - 1e-15;
    return log(p / (1 - p));
}

/* The M-step for x, y: the minimiser started at the current values, so the
 * step never lowers Q (generalised EM). */
static void m_step_transitions(hmm_t *h, hmm_acc_t *c)
{
    gsl_multimin_function fn = {q_neg, 2, c};
    gsl_vector *v = gsl_vector_alloc(2), *step = gsl_vector_alloc(2);
    gsl_multimin_fminimizer *m = gsl_multimin_fminimizer_alloc(gsl_multimin_fminimizer_nmsimplex2, 2);
    if (!v || !step || !m) goto done;   /* keeps x, y: EM still never goes down */
    gsl_vector_set(v, 0, clamp_logit(h->x));
    gsl_vector_set(v, 1, clamp_logit(h->y));
    gsl_vector_set_all(step, 0.25);
    double q0 = q_neg(v, c);
    if (gsl_multimin_fminimizer_set(m, &fn, v, step) != GSL_SUCCESS) goto done;
    for (int it = 0; it < 400; it++) {
        if (gsl_multimin_fminimizer_iterate(m)) break;
        if (gsl_multimin_test_size(gsl_multimin_fminimizer_size(m), 1e-9) == GSL_SUCCESS) break;
    }
    if (gsl_multimin_fminimizer_minimum(m) <= q0) {
        h->x = logistic(gsl_vector_get(m->x, 0));
        h->y = logistic(gsl_vector_get(m->x, 1));
    }
done:
    if (m) gsl_multimin_fminimizer_free(m);
    gsl_vector_free(v);
    gsl_vector_free(step);
}

typedef struct hmm_work {
    const accstat_stream_t *st;
    int ns;
    double *fw, *bw, *sc;
} hmm_work_t;

/* One EM iteration: returns the log-likelihood of h before the update. */
static double em_step(hmm_t *h, const hmm_work_t *w)
{
    hmm_acc_t c;
    memset(&c, 0, sizeof c);
    double ll = 0;
    for (int k = 0; k < w->ns; k++)
        if (w->st[k].n > 0) ll += hmm_stream(h, w->st[k].o, w->st[k].n, w->fw, w->bw, w->sc, &c);
    for (int j = 0; j < 2; j++) {
        double tot = c.out[0][j] + c.out[1][j];
        if (tot > 0) h->e[j] = c.out[1][j] / tot;
        /* Away from 0 and 1 exactly: a state that could not emit an
         * outcome would stop the forward pass from ever moving to it. */
        if (h->e[j] < 1e-12) h->e[j] = 1e-12;
        if (h->e[j] > 1 - 1e-12) h->e[j] = 1 - 1e-12;
    }
    m_step_transitions(h, &c);
    return ll;
}

static double hmm_loglik(const hmm_t *h, const hmm_work_t *w)
{
    double ll = 0;
    for (int k = 0; k < w->ns; k++)
        if (w->st[k].n > 0) ll += hmm_stream(h, w->st[k].o, w->st[k].n, w->fw, w->bw, w->sc, NULL);
    return ll;
}

#ifndef EM_SCREEN
#define EM_SCREEN 30    /* iterations each start gets before the best go on */
#endif
#ifndef EM_KEEP
#define EM_KEEP 3       /* starts run to convergence */
#endif
#ifndef EM_TOL
#define EM_TOL 1e-9     /* relative rise of the log-likelihood that ends EM */
#endif
#ifndef EM_MAX
#define EM_MAX 2000
#endif

/* Runs EM from h for at most its iterations or until the likelihood stops
 * rising; returns the final log-likelihood (of the h left). */
static double em_run(hmm_t *h, const hmm_work_t *w, int max_it, int *its)
{
    double prev = -INFINITY;
    int it;
    for (it = 0; it < max_it; it++) {
        double ll = em_step(h, w);
        if (ll - prev < EM_TOL * fabs(ll)) break;
        prev = ll;
    }
    *its = it + 1;
    return hmm_loglik(h, w);
}


int accfit_markov(const accstat_stream_t *st, int ns, accfit_t *f, err_t *err)
{
    int nmax = 0;
    long total = 0, acc = 0;
    for (int k = 0; k < ns; k++) {
        nmax = st[k].n > nmax ? st[k].n : nmax;
        total += st[k].n;
        for (int i = 0; i < st[k].n; i++) acc += st[k].o[i];
    }
    if (total < 1) return err_set(err, ERR_INPUT, "accfit: no outcome to fit");
    hmm_work_t w = {st, ns, malloc(2 * (size_t)nmax * sizeof(double)),
                    malloc(2 * (size_t)nmax * sizeof(double)), malloc((size_t)nmax * sizeof(double))};
    if (!w.fw || !w.bw || !w.sc) {
        free(w.fw);
        free(w.bw);
        free(w.sc);
        return err_set(err, ERR_RUNTIME, "accfit: out of memory");
    }
    /* Starting points: good/bad emissions around the mean, slow to fast
     * switching. */
    double al = (double)acc / (double)total;
    const double em[4][2] = {{0.95, 0.30}, {0.90, 0.50},
                             {fmin(0.99, al + 0.5 * (1 - al)), 0.5 * al},
                             {0.99, fmax(0.02, al - 0.4)}};
    const double sw[3][2] = {{0.02, 0.02}, {0.1, 0.1}, {0.005, 0.05}};
    _Static_assert(ACCFIT_EM_STARTS == 4 * 3, "one start per emission pair and switch pair");
    hmm_t h[ACCFIT_EM_STARTS];
    double ll[ACCFIT_EM_STARTS];
    int its[ACCFIT_EM_STARTS], order[ACCFIT_EM_STARTS];
    for (int i = 0; i < ACCFIT_EM_STARTS; i++) {
        h[i] = (hmm_t){{em[i / 3][0], em[i / 3][1]}, sw[i % 3][0], sw[i % 3][1]};
        ll[i] = em_run(&h[i], &w, EM_SCREEN, &its[i]);
        order[i] = i;
    }
    /* The best EM_KEEP, by likelihood, to convergence. */
    for (int i = 0; i < ACCFIT_EM_STARTS; i++)
        for (int j = i + 1; j < ACCFIT_EM_STARTS; j++)
            if (ll[order[j]] > ll[order[i]]) {
                int t = order[i];
                order[i] = order[j];
                order[j] = t;
            }
    int best = order[0];
    for (int r = 0; r < EM_KEEP && r < ACCFIT_EM_STARTS; r++) {
        int i = order[r], more;
        ll[i] = em_run(&h[i], &w, EM_MAX, &more);
        its[i] += more;
        if (ll[i] > ll[best]) best = i;
    }
    free(w.fw);
    free(w.bw);
    free(w.sc);
    const hmm_t *b = &h[best];
    int g = b->e[0] >= b->e[1] ? 0 : 1;
    f->good = b->e[g];
    f->bad = b->e[1 - g];
    f->p_gb = g == 0 ? b->x : b->y;
    f->p_bg = g == 0 ? b->y : b->x;
    f->loglik_markov = ll[best];
    f->em_iterations = its[best];
    return 0;
}

double accfit_markov_loglik(const accfit_t *f, const accstat_stream_t *st, int ns)
{
    int nmax = 0;
    for (int k = 0; k < ns; k++) nmax = st[k].n > nmax ? st[k].n : nmax;
    hmm_work_t w = {st, ns, malloc(2 * (size_t)(nmax + 1) * sizeof(double)), NULL,
                    malloc((size_t)(nmax + 1) * sizeof(double))};
    hmm_t h = {{f->good, f->bad}, f->p_gb, f->p_bg};
    double ll = w.fw && w.sc ? hmm_loglik(&h, &w) : NAN;
    free(w.fw);
    free(w.sc);
    return ll;
}

int accfit_fit(const accstat_stream_t *st, int ns, const accstat_t *s, accfit_t *f, err_t *err)
{
    memset(f, 0, sizeof *f);
    if (s->outcomes < 1) return err_set(err, ERR_INPUT, "accfit: no outcome to fit");
    f->alpha = (double)s->accepted / (double)s->outcomes;
    double al = f->alpha;
    f->loglik_iid = (double)s->accepted * (al > 0 ? log(al) : 0) +
                    (double)(s->outcomes - s->accepted) * (al < 1 ? log1p(-al) : 0);
    for (int i = 1; i <= ACCFIT_POS; i++) {
        f->pos_reached[i - 1] = accstat_reached(s, ACCFIT_POS, i);
        double p = accstat_position(s, ACCFIT_POS, i);
        f->pos[i - 1] = isnan(p) ? (i > 1 ? f->pos[i - 2] : f->alpha) : p;
    }
    if (fit_beta(st, ns, f, err) != 0) return -1;
    /* The simulator carries a tenant's markov state from request to
     * request: the texts are one tenant's requests one after another, one
     * chain through them all (in the order given). */
    uint8_t *all = malloc((size_t)s->outcomes);
    if (!all) return err_set(err, ERR_RUNTIME, "accfit: out of memory");
    long at = 0;
    for (int k = 0; k < ns; k++) {
        if (st[k].n > 0) memcpy(all + at, st[k].o, (size_t)st[k].n);
        at += st[k].n;
    }
    accstat_stream_t one = {all, (int)at, NULL};
    int rc = accfit_markov(&one, 1, f, err);
    free(all);
    return rc;
}

/* ---- block laws ----------------------------------------------------------- */

/* The law of a, given P(accept at position i | reached i) = pa[i − 1]. */
static void law_positions(const double *pa, int gamma, double *law)
{
    double reach = 1.0;
    for (int k = 0; k < gamma; k++) {
        law[k] = reach * (1.0 - pa[k]);
        reach *= pa[k];
    }
    law[gamma] = reach;
}

/* E[α^k (1 − α)] and E[α^γ] for α ~ Beta(a, b), as products of ratios:
 * E[α^k] = Π_{i<k} (a + i)/(a + b + i), exact for any a, b (ln B would
 * lose every digit when a and b are large, the beta law then all but iid). */
static void law_beta(double a, double b, int gamma, double *law)
{
    double mk = 1.0;   /* E[α^k] */
    for (int k = 0; k < gamma; k++) {
        law[k] = mk * b / (a + b + k);
        mk *= (a + k) / (a + b + k);
    }
    law[gamma] = mk;
}

/* markov: P(a = k, next block's start state s2 | start state s), by a
 * forward pass over the block's drafts; then the block starts' stationary
 * law, and the mixture. */
static void law_markov(const accfit_t *f, int gamma, double *law)
{
    const double e[2] = {f->good, f->bad};
    const double A[2][2] = {{1 - f->p_gb, f->p_gb}, {f->p_bg, 1 - f->p_bg}};
    double P[2][ACCSTAT_GMAX + 1][2];   /* [s][a][s2] */
    for (int s = 0; s < 2; s++) {
        double alive[2] = {s == 0, s == 1};   /* P(all accepted so far, current state) */
        for (int k = 0; k <= gamma; k++) {
            double nxt[2] = {0, 0};
            P[s][k][0] = P[s][k][1] = 0;
            for (int c = 0; c < 2; c++)
                for (int c2 = 0; c2 < 2; c2++) {
                    if (k < gamma) {
                        P[s][k][c2] += alive[c] * (1 - e[c]) * A[c][c2];
                        nxt[c2] += alive[c] * e[c] * A[c][c2];
                    } else {
                        P[s][k][c2] += alive[c] * (c == c2);
                    }
                }
            alive[0] = nxt[0];
            alive[1] = nxt[1];
        }
    }
    double T01 = 0, T10 = 0;
    for (int k = 0; k <= gamma; k++) {
        T01 += P[0][k][1];
        T10 += P[1][k][0];
    }
    double pi0 = T01 + T10 > 0 ? T10 / (T01 + T10) : 0.5;
    for (int k = 0; k <= gamma; k++)
        law[k] = pi0 * (P[0][k][0] + P[0][k][1]) + (1 - pi0) * (P[1][k][0] + P[1][k][1]);
}

void accfit_law(const accfit_t *f, int model, int gamma, double *law)
{
    double pa[ACCSTAT_GMAX];
    switch (model) {
    case ACCFIT_IID:
        for (int i = 0; i < gamma; i++) pa[i] = f->alpha;
        law_positions(pa, gamma, law);
        break;
    case ACCFIT_POSITIONAL:
        for (int i = 0; i < gamma; i++) pa[i] = f->pos[i < ACCFIT_POS ? i : ACCFIT_POS - 1];
        law_positions(pa, gamma, law);
        break;
    case ACCFIT_BETA: law_beta(f->a, f->b, gamma, law); break;
    default: law_markov(f, gamma, law); break;
    }
}

double accfit_law_position(const double *law, int gamma, int i)
{
    double reach = 0, kept = 0;
    for (int k = i - 1; k <= gamma; k++) reach += law[k];
    for (int k = i; k <= gamma; k++) kept += law[k];
    return reach > 0 ? kept / reach : NAN;
}

double accfit_chi2(const accstat_t *s, int gamma, const double *law, int params, int *bins,
                   int *df, double *p, double *tv)
{
    long n = accstat_blocks(s, gamma);
    double O[ACCSTAT_GMAX + 1], E[ACCSTAT_GMAX + 1], d = 0, chi = 0;
    int k = 0;   /* bins closed so far; bin k is open */
    O[0] = E[0] = 0;
    for (int a = 0; a <= gamma; a++) {
        d += fabs((n ? (double)s->counts[gamma][a] / (double)n : 0.0) - law[a]);
        O[k] += (double)s->counts[gamma][a];
        E[k] += (double)n * law[a];
        /* A bin closes once its expectation reaches 5. */
        if (E[k] >= 5.0 && a < gamma) {
            k++;
            O[k] = E[k] = 0;
        }
    }
    /* The last bin, still under 5, joins the one before. */
    if (E[k] < 5.0 && k > 0) {
        O[k - 1] += O[k];
        E[k - 1] += E[k];
    } else {
        k++;
    }
    for (int i = 0; i < k; i++) {
        if (E[i] > 0) chi += (O[i] - E[i]) * (O[i] - E[i]) / E[i];
        else if (O[i] > 0) chi = INFINITY;   /* seen where the law says never */
    }
    *bins = k;
    *tv = d / 2;
    *df = k - 1 - params;
    *p = *df >= 1 && n > 0 ? gsl_cdf_chisq_Q(chi, *df) : NAN;
    return n > 0 ? chi : 0.0;
}

int accfit_params_at(int model, int gamma)
{
    if (model == ACCFIT_POSITIONAL) return gamma < ACCFIT_POS ? gamma : ACCFIT_POS;
    return nparams[model];
}

void accfit_gof(const accstat_t *s, const accfit_t *f, int model, int gamma, accfit_gof_t *g)
{
    memset(g, 0, sizeof *g);
    accfit_law(f, model, gamma, g->law);
    g->blocks = accstat_blocks(s, gamma);
    g->chi2 = accfit_chi2(s, gamma, g->law, accfit_params_at(model, gamma), &g->bins, &g->df,
                          &g->p, &g->tv);
    /* Positional is fitted to the blocks of 8; the blocks of a smaller γ
     * are those very blocks when none of them accepted γ drafts or more
     * (each then ends at its 0 within the first γ). */
    if (model == ACCFIT_POSITIONAL && gamma <= ACCFIT_POS) {
        long past = 0;
        for (int a = gamma; a <= ACCFIT_POS; a++) past += s->counts[ACCFIT_POS][a];
        g->exact = gamma == ACCFIT_POS || past == 0;
    }
    if (g->df < 1 || g->exact || g->blocks == 0) g->chi2 = g->p = NAN;
}

int accfit_overrides(const accfit_t *f, int model, char *buf, size_t size)
{
    int n;
    switch (model) {
    case ACCFIT_IID:
        n = snprintf(buf, size, "--set acceptance.model=iid --set acceptance.alpha=%.6f", f->alpha);
        break;
    case ACCFIT_POSITIONAL:
        n = snprintf(buf, size, "--set acceptance.model=positional --set acceptance.alphas=["
                     "%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f,%.6f]", f->pos[0], f->pos[1], f->pos[2],
                     f->pos[3], f->pos[4], f->pos[5], f->pos[6], f->pos[7]);
        break;
    case ACCFIT_BETA:
        n = snprintf(buf, size, "--set acceptance.model=beta --set acceptance.a=%.6g "
                     "--set acceptance.b=%.6g", f->a, f->b);
        break;
    default:
        /* %g: a switch probability can be far under 1e-6. */
        n = snprintf(buf, size, "--set acceptance.model=markov --set acceptance.alpha_good=%.6g "
                     "--set acceptance.alpha_bad=%.6g --set acceptance.p_good_bad=%.6g "
                     "--set acceptance.p_bad_good=%.6g", f->good, f->bad, f->p_gb, f->p_bg);
        break;
    }
    return n > 0 && (size_t)n < size ? 0 : -1;
}
