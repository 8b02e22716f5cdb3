#include "accept.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_randist.h>
#include <gsl/gsl_rng.h>

static int prob_ok(double p)
{
    return p >= 0.0 && p <= 1.0; /* also false for NAN */
}

static int check_cfg(const accept_cfg_t *cfg, err_t *err)
{
    switch (cfg->model) {
    case ACC_IID:
        if (!prob_ok(cfg->alpha))
            return err_set(err, ERR_INPUT, "acceptance.alpha: %g is outside [0, 1]",
                           cfg->alpha);
        return 0;
    case ACC_POSITIONAL:
        if (cfg->npos < 1 || !cfg->positional)
            return err_set(err, ERR_INPUT, "acceptance.alphas: positional model needs "
                           "at least one value");
        for (int i = 0; i < cfg->npos; i++)
            if (!prob_ok(cfg->positional[i]))
                return err_set(err, ERR_INPUT, "acceptance.alphas.%d: %g is outside "
                               "[0, 1]", i, cfg->positional[i]);
        return 0;
    case ACC_BETA:
        if (!(cfg->beta_a > 0) || !(cfg->beta_b > 0) || isinf(cfg->beta_a) ||
            isinf(cfg->beta_b))
            return err_set(err, ERR_INPUT, "acceptance.a/b: beta parameters must be "
                           "finite and > 0 (got %g, %g)", cfg->beta_a, cfg->beta_b);
        return 0;
    case ACC_MARKOV:
        if (!prob_ok(cfg->alpha_good) || !prob_ok(cfg->alpha_bad) ||
            !prob_ok(cfg->p_good_bad) || !prob_ok(cfg->p_bad_good))
            return err_set(err, ERR_INPUT, "acceptance: markov alpha_good, alpha_bad, "
                           "p_good_bad and p_bad_good must lie in [0, 1]");
        return 0;
    case ACC_TRACE:
        if (cfg->ntrace < 1 || !cfg->trace)
            return err_set(err, ERR_INPUT, "acceptance.file: trace '%s' holds no "
                           "accepted lengths", cfg->trace_file);
        for (int i = 0; i < cfg->ntrace; i++)
            if (cfg->trace[i] < 0)
                return err_set(err, ERR_INPUT, "acceptance.file: trace '%s' entry %d "
                               "is negative (%d)", cfg->trace_file, i + 1,
                               cfg->trace[i]);
        return 0;
    }
    return err_set(err, ERR_INPUT, "acceptance.model: unknown model %d",
                   (int)cfg->model);
}

static void set_iid_alpha(accept_t *a, double alpha)
{
    a->alpha = alpha;
    a->log_alpha = (alpha > 0.0 && alpha < 1.0) ? log(alpha) : 0.0;
    a->alpha_mean = alpha;
}

/* Stationary probability of the good state. With both switch probabilities
 * 0 the chain is frozen and every law is stationary: start good or bad with
 * equal odds so the tenant population still mixes both. */
static double markov_pi_good(const accept_cfg_t *c)
{
    double s = c->p_good_bad + c->p_bad_good;
    return s > 0.0 ? c->p_bad_good / s : 0.5;
}

/* Draws the per-tenant parameters from the RNG_ACCEPT_PARAM stream. */
static int init_params(accept_t *a, uint64_t seed, int rep, int tenant, err_t *err)
{
    const accept_cfg_t *c = a->cfg;
    switch (c->model) {
    case ACC_IID:
        set_iid_alpha(a, c->alpha);
        return 0;
    case ACC_POSITIONAL: {
        double s = 0.0;
        for (int i = 0; i < c->npos; i++) s += c->positional[i];
        a->alpha_mean = s / c->npos;
        return 0;
    }
    case ACC_TRACE: {
        double sa = 0.0, sn = 0.0;
        for (int i = 0; i < c->ntrace; i++) {
            sa += c->trace[i];
            sn += c->trace[i] + 1.0;
        }
        a->alpha_mean = sa / sn;
        a->trace_pos = tenant % c->ntrace;
        return 0;
    }
    case ACC_BETA:
    case ACC_MARKOV:
        break;
    }
    gsl_rng *p = rng_stream(seed, (uint64_t)rep, (uint64_t)tenant, RNG_ACCEPT_PARAM);
    if (!p) return err_set(err, ERR_RUNTIME, "accept: out of memory");
    if (c->model == ACC_BETA) {
        set_iid_alpha(a, gsl_ran_beta(p, c->beta_a, c->beta_b));
    } else {
        double pg = markov_pi_good(c);
        a->good = gsl_rng_uniform(p) < pg;
        a->alpha_mean = pg * c->alpha_good + (1.0 - pg) * c->alpha_bad;
    }
    gsl_rng_free(p);
    return 0;
}

int accept_init(accept_t *a, const accept_cfg_t *cfg, uint64_t seed, int rep,
                int tenant, err_t *err)
{
    memset(a, 0, sizeof *a);
    if (!cfg)
        return err_set(err, ERR_RUNTIME, "accept: no acceptance configuration");
    if (check_cfg(cfg, err) < 0) return -1;
    a->cfg = cfg;
    a->model = cfg->model;
    a->rng = rngbox_init(&a->box, seed, (uint64_t)rep, (uint64_t)tenant, RNG_ACCEPT,
                         err);
    if (!a->rng) return -1;
    return init_params(a, seed, rep, tenant, err);
}

void accept_fini(accept_t *a)
{
    a->rng = NULL;   /* the stream lives in the box: nothing to free */
}

accept_t *accept_create(const accept_cfg_t *cfg, uint64_t seed, int rep, int tenant,
                        err_t *err)
{
    accept_t *a = malloc(sizeof *a);
    if (!a) {
        err_set(err, ERR_RUNTIME, "accept: out of memory");
        return NULL;
    }
    if (accept_init(a, cfg, seed, rep, tenant, err) < 0) {
        free(a);
        return NULL;
    }
    return a;
}

/* P(a >= k) = alpha^k for k <= gamma, so with U uniform on (0,1]
 * a = min(gamma, floor(log U / log alpha)) has exactly that law:
 * floor(log U / log alpha) >= k  <=>  log U <= k log alpha  <=>  U <= alpha^k. */
static int draw_iid(accept_t *a, int gamma)
{
    if (a->alpha <= 0.0) return 0;
    if (a->alpha >= 1.0) return gamma;
    double x = log(gsl_rng_uniform_pos(a->rng)) / a->log_alpha;
    return x >= (double)gamma ? gamma : (int)x;
}

static int draw_positional(accept_t *a, int gamma)
{
    const accept_cfg_t *c = a->cfg;
    for (int i = 0; i < gamma; i++) {
        double p = c->positional[i < c->npos ? i : c->npos - 1];
        if (gsl_rng_uniform(a->rng) >= p) return i;
    }
    return gamma;
}

/* One uniform per evaluated draft: u < p decides acceptance, and the
 * residual (u/p or (u-p)/(1-p)), uniform on [0,1) and independent of that
 * decision, decides the state switch. */
static int draw_markov(accept_t *a, int gamma)
{
    const accept_cfg_t *c = a->cfg;
    for (int i = 0; i < gamma; i++) {
        double p = a->good ? c->alpha_good : c->alpha_bad;
        double sw = a->good ? c->p_good_bad : c->p_bad_good;
        double u = gsl_rng_uniform(a->rng);
        int ok = u < p;
        double r = ok ? u / p : (u - p) / (1.0 - p);
        if (r < sw) a->good = !a->good;
        if (!ok) return i;
    }
    return gamma;
}

static int draw_trace(accept_t *a, int gamma)
{
    const accept_cfg_t *c = a->cfg;
    int v = c->trace[a->trace_pos];
    a->trace_pos = (a->trace_pos + 1) % c->ntrace;
    return v < gamma ? v : gamma;
}

int accept_draw(accept_t *a, int gamma)
{
    if (gamma < 1) return 0;
    switch (a->model) {
    case ACC_IID:
    case ACC_BETA:
        return draw_iid(a, gamma);
    case ACC_POSITIONAL:
        return draw_positional(a, gamma);
    case ACC_MARKOV:
        return draw_markov(a, gamma);
    case ACC_TRACE:
        return draw_trace(a, gamma);
    }
    return 0;
}

double accept_alpha_mean(const accept_t *a)
{
    return a->alpha_mean;
}

void accept_free(accept_t *a)
{
    if (!a) return;
    accept_fini(a);
    free(a);
}
