/* accept_iid — each draft accepted with probability alpha, independently,
 * until the first rejection (Leviathan et al.). One uniform per block: the
 * inverse CDF of the truncated geometric law (accept_geo_draw).
 *   P(a = k) = alpha^k (1 - alpha) for k < gamma, P(a = gamma) = alpha^gamma.
 * Mean per-draft acceptance: alpha. */
#include <stddef.h>

#include "model/accept.h"
#include "io/keytab.h"

typedef struct iid_par {
    double alpha;
} iid_par_t;

_Static_assert(sizeof(accept_geo_t) <= ACCEPT_STATE_BYTES, "iid state too large");

static const keytab_key_t IID_KEYS[] = {
    {.name = "alpha", KEYTAB_NUM(iid_par_t, alpha), .min = 0,
     .max = 1, .def = "0.8"},
    {.name = NULL}};

static int prob_ok(double p)
{
    return p >= 0.0 && p <= 1.0; /* also false for NAN */
}

static int iid_check(const void *par, err_t *err)
{
    const iid_par_t *p = par;
    if (!prob_ok(p->alpha))
        return err_set(err, ERR_INPUT, "acceptance.alpha: %g is outside [0, 1]",
                       p->alpha);
    return 0;
}

static int iid_init(void *st, const void *par, const accept_seat_t *seat, err_t *err)
{
    (void)seat;
    (void)err;
    accept_geo_set(st, ((const iid_par_t *)par)->alpha);
    return 0;
}

static int iid_draw(void *st, const void *par, gsl_rng *r, int gamma)
{
    (void)par;
    return accept_geo_draw(st, r, gamma);
}

static double iid_mean(const void *par, int gamma)
{
    (void)gamma;
    return ((const iid_par_t *)par)->alpha;
}

static int iid_law(const void *par, int gamma, accept_law_t *L, err_t *err)
{
    if (accept_law_init(L, 1, 1, gamma, err) != 0) return -1;
    accept_law_positional(L, 0, &((const iid_par_t *)par)->alpha, 1);
    return 0;
}

const accept_model_t accept_iid_model = {
    .name = "iid",
    .keys = IID_KEYS,
    .par_size = sizeof(iid_par_t),
    .check = iid_check,
    .init = iid_init,
    .draw = iid_draw,
    .mean = iid_mean,
    .law = iid_law,
};
