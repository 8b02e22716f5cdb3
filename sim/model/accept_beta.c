/* accept_beta — each tenant's alpha ~ Beta(a, b), drawn once from its
 * RNG_ACCEPT_PARAM stream; given it, the tenant's blocks are iid
 * (accept_iid.c's law). Mean per-draft acceptance: a / (a + b) over the
 * population.
 *
 * Block law: the mixture over the tenant's alpha, as the parts of an
 * accept_law_t (one per Gauss–Jacobi node, weight x^(a-1)(1-x)^(b-1)), so a
 * reader can average any per-tenant quantity over the population. With n
 * nodes the quadrature is exact for polynomials in alpha up to degree
 * 2n - 1, so the block probabilities (degree <= gamma) are exact. */
#include <math.h>
#include <stddef.h>

#include <gsl/gsl_integration.h>
#include <gsl/gsl_randist.h>

#include "model/accept.h"
#include "io/keytab.h"

#define BETA_NODES 64

typedef struct beta_par {
    double a, b;
} beta_par_t;

_Static_assert(sizeof(accept_geo_t) <= ACCEPT_STATE_BYTES, "beta state too large");

/* The closed forms integrate against the Jacobi weight (1-x)^(b-1) x^(a-1),
 * which needs a - 1 > -1 and b - 1 > -1 in floating point: the smallest
 * such a is 2^-53 (below it a - 1 rounds to -1). */
#define BETA_MIN 0x1p-53

static const keytab_key_t BETA_KEYS[] = {
    {.name = "a", KEYTAB_NUM(beta_par_t, a), .min = BETA_MIN,
     .max = 1e300, .flags = KF_REQUIRED},
    {.name = "b", KEYTAB_NUM(beta_par_t, b), .min = BETA_MIN,
     .max = 1e300, .flags = KF_REQUIRED},
    {.name = NULL}};

static int beta_check(const void *par, err_t *err)
{
    const beta_par_t *p = par;
    if (!(p->a - 1 > -1) || !(p->b - 1 > -1) || isinf(p->a) || isinf(p->b))
        return err_set(err, ERR_INPUT, "acceptance.a/b: beta parameters must be "
                       "finite and >= %g (got %g, %g)", BETA_MIN, p->a, p->b);
    return 0;
}

static int beta_init(void *st, const void *par, const accept_seat_t *seat, err_t *err)
{
    const beta_par_t *p = par;
    gsl_rng *r = accept_param_rng(seat, err);
    if (!r) return -1;
    accept_geo_set(st, gsl_ran_beta(r, p->a, p->b));
    gsl_rng_free(r);
    return 0;
}

static int beta_draw(void *st, const void *par, gsl_rng *r, int gamma)
{
    (void)par;
    return accept_geo_draw(st, r, gamma);
}

static double beta_mean(const void *par, int gamma)
{
    (void)gamma;
    const beta_par_t *p = par;
    return p->a / (p->a + p->b);
}

static int beta_law(const void *par, int gamma, accept_law_t *L, err_t *err)
{
    const beta_par_t *p = par;
    int n = (gamma + 2) / 2 > BETA_NODES ? (gamma + 2) / 2 : BETA_NODES;
    gsl_integration_fixed_workspace *w = gsl_integration_fixed_alloc(
        gsl_integration_fixed_jacobi, (size_t)n, 0, 1, p->b - 1, p->a - 1);
    /* NULL also when GSL refuses the parameters (its error handler is off
     * in the programs: the library never aborts). */
    if (!w)
        return err_set(err, ERR_INPUT, "acceptance.a/b: no beta quadrature for "
                       "a = %g, b = %g", p->a, p->b);
    const double *x = gsl_integration_fixed_nodes(w);
    const double *wt = gsl_integration_fixed_weights(w);
    int rc = accept_law_init(L, n, 1, gamma, err);
    for (int i = 0; rc == 0 && i < n; i++) {
        L->part[i].weight = wt[i];
        accept_law_positional(L, i, &x[i], 1);
    }
    gsl_integration_fixed_free(w);
    return rc;
}

const accept_model_t accept_beta_model = {
    .name = "beta",
    .keys = BETA_KEYS,
    .par_size = sizeof(beta_par_t),
    .check = beta_check,
    .init = beta_init,
    .draw = beta_draw,
    .mean = beta_mean,
    .law = beta_law,
};
