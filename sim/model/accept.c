/* accept — the registry of acceptance models, their configurations, block
 * laws and the per-tenant state (see accept.h). Nothing here knows a model:
 * each lives in its own accept_NAME.c. */
#include "model/accept.h"
#include "io/keytab.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "engine/rng.h"
#include "io/ynode.h"

/* The registry: one X(name) per model, whose descriptor accept_NAME_model
 * is defined in accept_NAME.c. The first is the default. */
#define ACCEPT_MODELS(X) X(iid) X(positional) X(beta) X(markov) X(trace) X(tree)

#define ACCEPT_DECLARE(n) extern const accept_model_t accept_##n##_model;
ACCEPT_MODELS(ACCEPT_DECLARE)
#define ACCEPT_ENTRY(n) &accept_##n##_model,
static const accept_model_t *const MODELS[] = {ACCEPT_MODELS(ACCEPT_ENTRY) NULL};

#define NMODELS ((int)(sizeof MODELS / sizeof *MODELS) - 1)
/* Keys in one resolution table: model + every model's keys. A registry
 * that declares more is refused at the first resolution (keys_fit), so no
 * table below is ever cut short. */
#define TAB_MAX 64

const accept_model_t *accept_model_find(const char *name)
{
    for (int i = 0; i < NMODELS; i++)
        if (!strcmp(MODELS[i]->name, name)) return MODELS[i];
    return NULL;
}

/* --- resolving a section ------------------------------------------------ */

static int has_key(const keytab_key_t *tab, const char *name)
{
    for (; tab->name; tab++)
        if (!strcmp(tab->name, name)) return 1;
    return 0;
}

/* 1 when name is a parameter of some registered model. */
static int any_model_key(const char *name)
{
    for (int i = 0; i < NMODELS; i++)
        if (has_key(MODELS[i]->keys, name)) return 1;
    return 0;
}

/* The value given for key in the last layer that gives it, or NULL. */
static const ynode_t *layer_value(const keytab_layer_t *layers, int nl,
                                  const char *key, int *at_layer)
{
    for (int l = nl - 1; l >= 0; l--) {
        const ynode_t *v = ynode_get(layers[l].map, key);
        if (v && !ynode_is_null(v)) {
            if (at_layer) *at_layer = l;
            return v;
        }
    }
    return NULL;
}

static int check_shape(keytab_ctx_t *c, const keytab_layer_t *layers, int nl)
{
    for (int l = 0; l < nl; l++) {
        const ynode_t *m = layers[l].map;
        if (m && !ynode_is_null(m) && m->kind != YNODE_MAP)
            return keytab_err(c, m, layers[l].prefix, "expected a mapping, got %s",
                              ynode_kind_name(m));
    }
    return 0;
}

/* A key that belongs to no model: "did you mean" among m's own keys. Keys
 * of other models are left out of the check (the resolving table skips
 * them), so they never crowd the suggestion. */
static int check_unknown(keytab_ctx_t *c, const accept_model_t *m,
                         const keytab_layer_t *layers, int nl)
{
    keytab_key_t tab[TAB_MAX + 1];
    int n = 0;
    tab[n++] = (keytab_key_t){.name = "model", .type = KT_SKIP};
    for (const keytab_key_t *k = m->keys; k->name && n < TAB_MAX; k++) tab[n++] = *k;
    tab[n] = (keytab_key_t){.name = NULL};
    for (int l = 0; l < nl; l++) {
        const ynode_t *map = layers[l].map;
        if (!map || map->kind != YNODE_MAP || map->n == 0) continue;
        ynode_t own = *map;
        ynode_pair_t *pairs = malloc(map->n * sizeof *pairs);
        if (!pairs) return err_set(c->err, ERR_RUNTIME, "out of memory");
        own.n = 0;
        own.pairs = pairs;
        for (size_t i = 0; i < map->n; i++)
            if (has_key(tab, map->pairs[i].key) || !any_model_key(map->pairs[i].key))
                pairs[own.n++] = map->pairs[i];
        int rc = keytab_check_keys(c, tab, &own, layers[l].prefix);
        free(pairs);
        if (rc != 0) return -1;
    }
    return 0;
}

/* The table that resolves m's parameters: its keys, then `model` and every
 * other model's keys as skipped. */
static void param_table(const accept_model_t *m, keytab_key_t *tab)
{
    int n = 0;
    for (const keytab_key_t *k = m->keys; k->name && n < TAB_MAX; k++) tab[n++] = *k;
    if (n < TAB_MAX) tab[n++] = (keytab_key_t){.name = "model", .type = KT_SKIP};
    for (int i = 0; i < NMODELS; i++)
        for (const keytab_key_t *k = MODELS[i]->keys; k->name && n < TAB_MAX; k++)
            if (!has_key(m->keys, k->name))
                tab[n++] = (keytab_key_t){.name = k->name, .type = KT_SKIP};
    tab[n] = (keytab_key_t){.name = NULL};
}

/* Picks the model from `model` (default: the first registered). The
 * table skips every model's keys: which of them belong is decided once the
 * model is known. */
static const accept_model_t *resolve_model(keytab_ctx_t *c, const keytab_layer_t *layers,
                                           int nl)
{
    const char *names[NMODELS + 1];
    for (int i = 0; i < NMODELS; i++) names[i] = MODELS[i]->name;
    names[NMODELS] = NULL;
    keytab_key_t tab[TAB_MAX + 1];
    int n = 0;
    tab[n++] = (keytab_key_t){.name = "model", .type = KT_ENUM, .sub = names,
                              .def = MODELS[0]->name};
    for (int i = 0; i < NMODELS; i++)
        for (const keytab_key_t *k = MODELS[i]->keys; k->name && n < TAB_MAX; k++)
            tab[n++] = (keytab_key_t){.name = k->name, .type = KT_SKIP};
    tab[n] = (keytab_key_t){.name = NULL};
    int idx = 0;
    if (keytab_resolve(c, tab, layers, nl, &idx) != 0) return NULL;
    return MODELS[idx];
}

/* Type and range of the keys given for models other than m: each is
 * resolved with its own model's table into a scratch parameter block (then
 * released), so a bad value is reported at its FILE:LINE:COL although the
 * run does not use it. A key that several models share is checked by m if
 * m has it, else by the first model (registry order) that has it. */
static int check_other_keys(keytab_ctx_t *c, const accept_model_t *m,
                            const keytab_layer_t *layers, int nl)
{
    for (int i = 0; i < NMODELS; i++) {
        const accept_model_t *o = MODELS[i];
        if (o == m) continue;
        keytab_key_t tab[TAB_MAX + 1];
        int n = 0, given = 0;
        for (const keytab_key_t *k = o->keys; k->name && n < TAB_MAX; k++) {
            int owned = has_key(m->keys, k->name);
            for (int j = 0; j < i && !owned; j++)
                owned = MODELS[j] != m && has_key(MODELS[j]->keys, k->name);
            if (owned || !layer_value(layers, nl, k->name, NULL)) continue;
            tab[n] = *k;
            tab[n].flags &= ~KF_REQUIRED;
            tab[n++].def = NULL;
            given = 1;
        }
        if (!given) continue;
        if (n < TAB_MAX) tab[n++] = (keytab_key_t){.name = "model", .type = KT_SKIP};
        for (int j = 0; j < NMODELS; j++)
            for (const keytab_key_t *k = MODELS[j]->keys; k->name && n < TAB_MAX; k++) {
                tab[n] = (keytab_key_t){.name = NULL};
                if (!has_key(tab, k->name))
                    tab[n++] = (keytab_key_t){.name = k->name, .type = KT_SKIP};
            }
        tab[n] = (keytab_key_t){.name = NULL};
        void *par = calloc(1, o->par_size ? o->par_size : 1);
        if (!par) return err_set(c->err, ERR_RUNTIME, "out of memory");
        int rc = keytab_resolve(c, tab, layers, nl, par);
        if (o->par_fini) o->par_fini(par);
        free(par);
        if (rc != 0) return -1;
    }
    return 0;
}

/* The place to report a missing key of m at: the model key, else the
 * section, else c->where; *l the layer it is in (-1: none). */
static const ynode_t *missing_at(const keytab_layer_t *layers, int nl, int *l)
{
    *l = nl - 1;
    const ynode_t *at = layer_value(layers, nl, "model", l);
    for (int i = nl - 1; !at && i >= 0; i--)
        if (layers[i].map && !ynode_is_null(layers[i].map)) at = layers[*l = i].map;
    return at;
}

/* None of m->need_any given: reported at the first of them. */
static int check_need_any(keytab_ctx_t *c, const accept_model_t *m,
                          const keytab_layer_t *layers, int nl)
{
    if (!m->need_any[0]) return 0;
    for (int i = 0; i < 4 && m->need_any[i]; i++)
        if (layer_value(layers, nl, m->need_any[i], NULL)) return 0;
    int l;
    const ynode_t *at = missing_at(layers, nl, &l);
    char key[KEYTAB_KEY_MAX];
    keytab_join(key, l >= 0 ? layers[l].prefix : "", m->need_any[0]);
    return keytab_err(c, at, key, "required when model is %s (or %s)", m->name,
                      m->need_any[1] ? m->need_any[1] : "");
}

/* A required parameter no layer gives: reported at the model key (where
 * the requirement comes from), else at the section, else at c->where. */
static int check_required(keytab_ctx_t *c, const accept_model_t *m,
                          const keytab_layer_t *layers, int nl)
{
    for (const keytab_key_t *k = m->keys; k->name; k++) {
        if (!(k->flags & KF_REQUIRED) || layer_value(layers, nl, k->name, NULL)) continue;
        int l;
        const ynode_t *at = missing_at(layers, nl, &l);
        char key[KEYTAB_KEY_MAX];
        keytab_join(key, l >= 0 ? layers[l].prefix : "", k->name);
        return keytab_err(c, at, key, "required when model is %s", m->name);
    }
    return check_need_any(c, m, layers, nl);
}

/* 0 when `model` and every model's keys fit in one table of TAB_MAX;
 * otherwise an error that says which constant to raise. */
static int keys_fit(err_t *err)
{
    int n = 1;
    for (int i = 0; i < NMODELS; i++)
        for (const keytab_key_t *k = MODELS[i]->keys; k->name; k++) n++;
    if (n <= TAB_MAX) return 0;
    return err_set(err, ERR_RUNTIME,
                   "acceptance models: %d keys in all (model + every model's), "
                   "more than TAB_MAX %d in sim/model/accept.c: raise it", n, TAB_MAX);
}

int accept_cfg_resolve(keytab_ctx_t *c, const keytab_layer_t *layers, int nl,
                       accept_cfg_t *out)
{
    memset(out, 0, sizeof *out);
    if (keys_fit(c->err) != 0) return -1;
    if (check_shape(c, layers, nl) != 0) return -1;
    const ynode_t *mv = layer_value(layers, nl, "model", NULL);
    const accept_model_t *guess =
        mv ? (mv->kind == YNODE_SCALAR ? accept_model_find(mv->str) : NULL) : MODELS[0];
    if (guess && check_unknown(c, guess, layers, nl) != 0) return -1;
    const accept_model_t *m = resolve_model(c, layers, nl);
    if (!m || check_required(c, m, layers, nl) != 0 ||
        check_other_keys(c, m, layers, nl) != 0)
        return -1;
    keytab_key_t tab[TAB_MAX + 1];
    param_table(m, tab);
    void *par = calloc(1, m->par_size ? m->par_size : 1);
    if (!par) return err_set(c->err, ERR_RUNTIME, "out of memory");
    accept_cfg_t cfg = {m, par};
    if (keytab_resolve(c, tab, layers, nl, par) != 0 || m->check(par, c->err) != 0) {
        accept_cfg_fini(&cfg);
        return -1;
    }
    *out = cfg;
    return 0;
}

int accept_cfg_parse(accept_cfg_t *out, const char *yaml, err_t *err)
{
    memset(out, 0, sizeof *out);
    ynode_t *root = NULL;
    if (ynode_parse("acceptance", NULL, yaml, strlen(yaml), 1, 0, &root, err) != 0)
        return -1;
    keytab_ctx_t c = {err, ".", root, NULL, NULL};
    keytab_layer_t L = {root, "acceptance"};
    int rc = accept_cfg_resolve(&c, &L, 1, out);
    ynode_free(root);
    return rc;
}

void accept_cfg_fini(accept_cfg_t *c)
{
    if (!c) return;
    if (c->model && c->par && c->model->par_fini) c->model->par_fini(c->par);
    free(c->par);
    c->par = NULL;
    c->model = NULL;
}

int accept_cfg_write(FILE *f, const accept_cfg_t *c, int indent)
{
    if (!c->model) return -1;
    if (fprintf(f, "%*smodel: ", indent, "") < 0 ||
        keytab_write_string(f, c->model->name) != 0 || fputc('\n', f) == EOF)
        return -1;
    return keytab_write(f, c->model->keys, c->par, indent);
}

/* The model's check. 0, or -1 with err (ERR_INPUT). */
static int accept_cfg_check(const accept_cfg_t *c, err_t *err)
{
    if (!c || !c->model || !c->par)
        return err_set(err, ERR_RUNTIME, "accept: no acceptance configuration");
    return c->model->check(c->par, err);
}

int accept_cfg_check_gamma(const accept_cfg_t *c, int gamma, err_t *err)
{
    if (!c->model->check_gamma) return 0;
    return c->model->check_gamma(c->par, gamma, err);
}

double accept_cfg_mean(const accept_cfg_t *c, int gamma)
{
    return c->model->mean(c->par, gamma);
}

int accept_cfg_law(const accept_cfg_t *c, int gamma, accept_law_t *L, err_t *err)
{
    memset(L, 0, sizeof *L);
    if (gamma < 1) return err_set(err, ERR_INPUT, "protocol.gamma: must be >= 1");
    if (accept_cfg_check(c, err) != 0) return -1;
    if (!c->model->law)
        return err_set(err, ERR_INPUT, "acceptance.model: '%s' has no block law, so "
                       "there is no closed form for it", c->model->name);
    if (c->model->law(c->par, gamma, L, err) == 0) return 0;
    accept_law_fini(L);
    return -1;
}

int accept_cfg_law_tree(const accept_cfg_t *c, const struct tree *t, accept_law_t *L,
                        err_t *err)
{
    memset(L, 0, sizeof *L);
    if (accept_cfg_check(c, err) != 0) return -1;
    if (!c->model->law_tree)
        return err_set(err, ERR_INPUT, "acceptance.model: '%s' judges chains only, "
                       "not token trees (protocol.tree): use model tree",
                       c->model->name);
    if (c->model->law_tree(c->par, t, L, err) == 0) return 0;
    accept_law_fini(L);
    return -1;
}

/* --- block laws --------------------------------------------------------- */

int accept_law_init(accept_law_t *L, int nparts, int ns, int gamma, err_t *err)
{
    memset(L, 0, sizeof *L);
    if (ns < 1 || ns > ACCEPT_LAW_STATES || nparts < 1 || gamma < 1)
        return err_set(err, ERR_RUNTIME, "accept: bad block law shape");
    L->part = calloc((size_t)nparts, sizeof *L->part);
    if (!L->part) return err_set(err, ERR_RUNTIME, "out of memory");
    L->nparts = nparts;
    L->ns = ns;
    L->gamma = gamma;
    L->full_len = gamma;
    for (int p = 0; p < nparts; p++) {
        L->part[p].weight = 1;
        L->part[p].start[0] = 1;
        L->part[p].rej = calloc((size_t)ns * (size_t)gamma * (size_t)ns, sizeof(double));
        if (!L->part[p].rej) {
            accept_law_fini(L);
            return err_set(err, ERR_RUNTIME, "out of memory");
        }
    }
    return 0;
}

void accept_law_fini(accept_law_t *L)
{
    for (int p = 0; L->part && p < L->nparts; p++) free(L->part[p].rej);
    free(L->part);
    memset(L, 0, sizeof *L);
}

double *accept_law_rej(const accept_law_t *L, int p, int s, int a, int s2)
{
    return &L->part[p].rej[((size_t)s * (size_t)L->gamma + (size_t)a) * (size_t)L->ns + s2];
}

void accept_law_positional(accept_law_t *L, int p, const double *alpha_at, int n)
{
    double surv = 1;   /* P(first i accepted) */
    for (int i = 0; i < L->gamma; i++) {
        double ai = alpha_at[i < n ? i : n - 1];
        *accept_law_rej(L, p, 0, i, 0) = surv * (1 - ai);
        surv *= ai;
    }
    L->part[p].full[0][0] = surv;
}

double accept_law_p(const accept_law_t *L, int p, int k)
{
    const accept_law_part_t *P = &L->part[p];
    double s = 0;
    for (int a = 0; a < L->ns; a++)
        for (int b = 0; b < L->ns; b++)
            s += P->start[a] * ((k < L->gamma ? *accept_law_rej(L, p, a, k, b) : 0) +
                                (k == L->full_len ? P->full[a][b] : 0));
    return s;
}

/* --- one alpha per tenant ---------------------------------------------- */

void accept_geo_set(accept_geo_t *g, double alpha)
{
    g->alpha = alpha;
    g->log_alpha = (alpha > 0.0 && alpha < 1.0) ? log(alpha) : 0.0;
}

/* P(a >= k) = alpha^k for k <= gamma, so with U uniform on (0,1]
 * a = min(gamma, floor(log U / log alpha)) has exactly that law:
 * floor(log U / log alpha) >= k  <=>  log U <= k log alpha  <=>  U <= alpha^k. */
int accept_geo_draw(accept_geo_t *g, gsl_rng *r, int gamma)
{
    if (g->alpha <= 0.0) return 0;
    if (g->alpha >= 1.0) return gamma;
    /* log U is taken one draw ahead, from the tenant's own acceptance
     * stream, so the same values in the same order: the verdict, and all
     * that branches on it, need not wait for the log's latency. */
    if (!g->primed) {
        g->next_log_u = log(rng_uniform_pos(r));
        g->primed = 1;
    }
    double x = g->next_log_u / g->log_alpha;
    g->next_log_u = log(rng_uniform_pos(r));
    return x >= (double)gamma ? gamma : (int)x;
}

/* --- per-tenant state --------------------------------------------------- */

gsl_rng *accept_param_rng(const accept_seat_t *seat, err_t *err)
{
    gsl_rng *r = rng_stream(seat->seed, (uint64_t)seat->rep, (uint64_t)seat->tenant,
                            RNG_ACCEPT_PARAM);
    if (!r) err_set(err, ERR_RUNTIME, "accept: out of memory");
    return r;
}

int accept_init(accept_t *a, const accept_cfg_t *cfg, uint64_t seed, int rep,
                int tenant, err_t *err)
{
    memset(a, 0, sizeof *a);
    if (accept_cfg_check(cfg, err) != 0) return -1;
    a->model = cfg->model;
    a->par = cfg->par;
    a->rng = rngbox_init(&a->box, seed, (uint64_t)rep, (uint64_t)tenant, RNG_ACCEPT,
                         err);
    if (!a->rng) return -1;
    accept_seat_t seat = {seed, rep, tenant};
    return a->model->init ? a->model->init(a->st, a->par, &seat, err) : 0;
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

void accept_free(accept_t *a)
{
    if (!a) return;
    accept_fini(a);
    free(a);
}

