/* accept_positional — the draft at position i (1..gamma) is accepted with
 * alphas[i-1], the last listed value repeating for later positions (drafts
 * further ahead are worse guesses); a draft after a rejection is never
 * accepted. P(a >= k) = prod_{i<k} alpha_i.
 * Mean per-draft acceptance for blocks of gamma: the mean of alpha_i over
 * the gamma positions (the repeated last value counted at each position it
 * covers), so it is the same number in the loader, the simulator and the
 * closed forms. */
#include <stddef.h>
#include <stdlib.h>

#include "model/accept.h"
#include "io/keytab.h"
#include "engine/rng.h"

typedef struct positional_par {
    double *alphas;   /* owned (keytab KT_LIST) */
    int n;
} positional_par_t;

static const keytab_key_t POSITIONAL_KEYS[] = {
    {.name = "alphas", KEYTAB_LIST(positional_par_t, alphas, n), .min = 0, .max = 1,
     .flags = KF_REQUIRED | KF_SKIPEMPTY},
    {.name = NULL}};

static double at(const positional_par_t *p, int i)
{
    return p->alphas[i < p->n ? i : p->n - 1];
}

static void positional_par_fini(void *par)
{
    free(((positional_par_t *)par)->alphas);
}

static int positional_check(const void *par, err_t *err)
{
    const positional_par_t *p = par;
    if (p->n < 1 || !p->alphas)
        return err_set(err, ERR_INPUT, "acceptance.alphas: positional model needs "
                       "at least one value");
    for (int i = 0; i < p->n; i++)
        if (!(p->alphas[i] >= 0.0 && p->alphas[i] <= 1.0))
            return err_set(err, ERR_INPUT, "acceptance.alphas.%d: %g is outside "
                           "[0, 1]", i, p->alphas[i]);
    return 0;
}

static int positional_draw(void *st, const void *par, gsl_rng *r, int gamma)
{
    (void)st;
    const positional_par_t *p = par;
    for (int i = 0; i < gamma; i++)
        if (rng_uniform(r) >= at(p, i)) return i;
    return gamma;
}

static double positional_mean(const void *par, int gamma)
{
    double sum = 0;
    for (int i = 0; i < gamma; i++) sum += at(par, i);
    return sum / gamma;
}

static int positional_law(const void *par, int gamma, accept_law_t *L, err_t *err)
{
    const positional_par_t *p = par;
    if (accept_law_init(L, 1, 1, gamma, err) != 0) return -1;
    accept_law_positional(L, 0, p->alphas, p->n);
    return 0;
}

const accept_model_t accept_positional_model = {
    .name = "positional",
    .keys = POSITIONAL_KEYS,
    .par_size = sizeof(positional_par_t),
    .par_fini = positional_par_fini,
    .check = positional_check,
    .draw = positional_draw,
    .mean = positional_mean,
    .law = positional_law,
};
