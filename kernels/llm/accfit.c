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

typedef struct bb_data {
    const accstat_stream_t *st;
    int ns;
} bb_data_t;

/* −log L(a, b) up to a constant: Σ_texts ln B(a, b) − ln B(k + a, n − k + b). */
static double bb_nll(const gsl_vector *v, void *arg)
{
    const bb_data_t *d = arg;
    double a = exp(gsl_vector_get(v, 0)), b = exp(gsl_vector_get(v, 1)), s = 0.0;
    if (!isfinite(a) || !isfinite(b) || a < 1e-6 || b < 1e-6) return INFINITY;
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

/* ---- markov: Baum–Welch ---------------------------------------------------- */

typedef struct hmm {
    double pi[2], A[2][2], e[2];   /* initial law, transitions, P(accept | state) */
} hmm_t;

/* One stream's forward–backward pass, scaled: adds its expected counts to
 * the accumulators and returns its log-likelihood. fw and bw: 2n doubles. */
static double hmm_stream(const hmm_t *h, const uint8_t *o, int n, double *fw, double *bw,
                         double *sc, double acc[4][2], double trans[2][2], double first[2])
{
    for (int t = 0; t < n; t++) {
        double s = 0;
        for (int j = 0; j < 2; j++) {
            double prior = t == 0 ? h->pi[j] : fw[2 * (t - 1)] * h->A[0][j] + fw[2 * (t - 1) + 1] * h->A[1][j];
            fw[2 * t + j] = prior * (o[t] ? h->e[j] : 1 - h->e[j]);
            s += fw[2 * t + j];
        }
        sc[t] = s > 0 ? s : 1e-300;
        fw[2 * t] /= sc[t];
        fw[2 * t + 1] /= sc[t];
    }
    bw[2 * (n - 1)] = bw[2 * (n - 1) + 1] = 1.0;
    for (int t = n - 2; t >= 0; t--)
        for (int i = 0; i < 2; i++) {
            double s = 0;
            for (int j = 0; j < 2; j++)
                s += h->A[i][j] * (o[t + 1] ? h->e[j] : 1 - h->e[j]) * bw[2 * (t + 1) + j];
            bw[2 * t + i] = s / sc[t + 1];
        }
    double ll = 0;
    for (int t = 0; t < n; t++) {
        ll += log(sc[t]);
        for (int j = 0; j < 2; j++) {
            double g = fw[2 * t + j] * bw[2 * t + j];
            acc[o[t] ? 1 : 0][j] += g;
            if (t == 0) first[j] += g;
        }
        if (t + 1 < n)
            for (int i = 0; i < 2; i++)
                for (int j = 0; j < 2; j++)
                    trans[i][j] += fw[2 * t + i] * h->A[i][j] *
                                   (o[t + 1] ? h->e[j] : 1 - h->e[j]) * bw[2 * (t + 1) + j] / sc[t + 1];
    }
    return ll;
}

static double hmm_step(hmm_t *h, const accstat_stream_t *st, int ns, double *fw, double *bw,
                       double *sc)
{
    double acc[4][2] = {{0}}, trans[2][2] = {{0}}, first[2] = {0}, ll = 0;
    for (int k = 0; k < ns; k++)
        if (st[k].n > 0) ll += hmm_stream(h, st[k].o, st[k].n, fw, bw, sc, acc, trans, first);
    for (int j = 0; j < 2; j++) {
        double tot = acc[0][j] + acc[1][j], rows = trans[j][0] + trans[j][1];
        if (tot > 0) h->e[j] = acc[1][j] / tot;
        if (rows > 0)
            for (int k = 0; k < 2; k++) h->A[j][k] = trans[j][k] / rows;
        h->pi[j] = first[j] / (first[0] + first[1]);
    }
    return ll;
}

static int fit_markov(const accstat_stream_t *st, int ns, accfit_t *f, err_t *err)
{
    int nmax = 0;
    for (int k = 0; k < ns; k++) nmax = st[k].n > nmax ? st[k].n : nmax;
    double *fw = malloc(2 * (size_t)nmax * sizeof *fw), *bw = malloc(2 * (size_t)nmax * sizeof *bw);
    double *sc = malloc((size_t)nmax * sizeof *sc);
    if (!fw || !bw || !sc) {
        free(fw);
        free(bw);
        free(sc);
        return err_set(err, ERR_RUNTIME, "accfit: out of memory");
    }
    hmm_t h = {{0.5, 0.5}, {{0.95, 0.05}, {0.05, 0.95}}, {0.95, 0.3}};
    double prev = -INFINITY, ll = 0;
    int it;
    for (it = 0; it < 1000; it++) {
        ll = hmm_step(&h, st, ns, fw, bw, sc);
        if (ll - prev < 1e-8 * fabs(ll)) break;
        prev = ll;
    }
    free(fw);
    free(bw);
    free(sc);
    int g = h.e[0] >= h.e[1] ? 0 : 1;
    f->good = h.e[g];
    f->bad = h.e[1 - g];
    f->p_gb = h.A[g][1 - g];
    f->p_bg = h.A[1 - g][g];
    f->loglik_markov = ll;
    f->em_iterations = it + 1;
    return 0;
}

int accfit_fit(const accstat_stream_t *st, int ns, const accstat_t *s, accfit_t *f, err_t *err)
{
    memset(f, 0, sizeof *f);
    if (s->outcomes < 1) return err_set(err, ERR_INPUT, "accfit: no outcome to fit");
    f->alpha = (double)s->accepted / (double)s->outcomes;
    for (int i = 1; i <= ACCFIT_POS; i++) {
        double p = accstat_position(s, ACCFIT_POS, i);
        f->pos[i - 1] = isnan(p) ? (i > 1 ? f->pos[i - 2] : f->alpha) : p;
    }
    if (fit_beta(st, ns, f, err) != 0) return -1;
    return fit_markov(st, ns, f, err);
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

static void law_beta(double a, double b, int gamma, double *law)
{
    double lb = gsl_sf_lnbeta(a, b);
    for (int k = 0; k < gamma; k++) law[k] = exp(gsl_sf_lnbeta(a + k, b + 1) - lb);
    law[gamma] = exp(gsl_sf_lnbeta(a + gamma, b) - lb);
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

double accfit_chi2(const accstat_t *s, int gamma, const double *law, int params, int *df,
                   double *p, double *tv)
{
    long n = accstat_blocks(s, gamma);
    double O[ACCSTAT_GMAX + 1], E[ACCSTAT_GMAX + 1], d = 0, chi = 0;
    int bins = 0;
    O[0] = E[0] = 0;
    for (int k = 0; k <= gamma; k++) {
        d += fabs((double)s->counts[gamma][k] / (double)(n ? n : 1) - law[k]);
        O[bins] += (double)s->counts[gamma][k];
        E[bins] += (double)n * law[k];
        /* A bin closes once its expectation reaches 5. */
        if (E[bins] >= 5.0 && k < gamma) {
            bins++;
            O[bins] = E[bins] = 0;
        }
    }
    /* The last bin, still under 5, joins the one before. */
    if (E[bins] < 5.0 && bins > 0) {
        O[bins - 1] += O[bins];
        E[bins - 1] += E[bins];
    } else {
        bins++;
    }
    for (int i = 0; i < bins; i++)
        if (E[i] > 0) chi += (O[i] - E[i]) * (O[i] - E[i]) / E[i];
    *tv = d / 2;
    *df = bins - 1 - (params < gamma ? params : gamma);
    *p = *df >= 1 ? gsl_cdf_chisq_Q(chi, *df) : NAN;
    return chi;
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
        n = snprintf(buf, size, "--set acceptance.model=markov --set acceptance.alpha_good=%.6f "
                     "--set acceptance.alpha_bad=%.6f --set acceptance.p_good_bad=%.6f "
                     "--set acceptance.p_bad_good=%.6f", f->good, f->bad, f->p_gb, f->p_bg);
        break;
    }
    return n > 0 && (size_t)n < size ? 0 : -1;
}
