/* accept — acceptance models: how many leading drafts of a block the target
 * model accepts (`acceptance.model`).
 *
 * Each model is one descriptor (accept_model_t) in its own file
 * (accept_iid.c, accept_positional.c, accept_beta.c, accept_markov.c,
 * accept_trace.c, accept_tree.c), listed once in the registry of accept.c.
 * The descriptor owns everything about the model: its name, its scenario
 * keys (a keytab table over its own parameter struct, so loading, "did you
 * mean" and writing the section back all come from it), its check, the
 * per-tenant state (init, draw a block's outcome), its mean per-draft
 * acceptance for reporting, and its block law (the distribution of
 * accepted drafts for a gamma) that the closed forms of analytic.c use.
 * So the simulator, the loader and the closed forms read one definition
 * of each model.
 *
 * An accept_cfg_t (descriptor + its owned parameter block) is self-contained:
 * a tenant group can hold its own.
 *
 * One accept_t per tenant. Its decisions come from the tenant's own stream
 * rng_stream(seed, rep, tenant, RNG_ACCEPT); per-tenant parameters (the beta
 * model's alpha, the markov model's initial state) come from
 * rng_stream(seed, rep, tenant, RNG_ACCEPT_PARAM), so adding a tenant or
 * changing the number of blocks one tenant verifies never shifts another
 * tenant's draws. A draft after a rejected one is never accepted: every
 * model returns the length of the accepted prefix.
 */
#ifndef SPECSIM_ACCEPT_H
#define SPECSIM_ACCEPT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "base/err.h"
#include "io/keytab.h"
#include "engine/rngbox.h"

struct tree;         /* sim/model/tree.h */
struct tree_probs;

/* The hidden states a block law may carry between blocks (markov: 2).
 * analytic.c's Markov renewal handles up to this many. */
#define ACCEPT_LAW_STATES 2
/* Bytes of per-tenant model state held inside accept_t. */
#define ACCEPT_STATE_BYTES 32

/* One kind of tenant in a block law: the law of a block's accepted drafts a
 * given the hidden state s the block starts in, and the state s2 the next
 * block starts in. */
typedef struct accept_law_part {
    double weight;          /* relative share of tenants of this kind (the
                               parts' weights need not sum to 1) */
    double start[ACCEPT_LAW_STATES]; /* law of the first block's state; also
                               the long-run law when the block chain never
                               leaves its start state (a frozen chain) */
    double *rej;            /* [(s·gamma + a)·ns + s2]: P(a < gamma accepted,
                               next state s2 | state s) */
    double full[ACCEPT_LAW_STATES][ACCEPT_LAW_STATES]; /* same, a = gamma */
} accept_law_part_t;

/* The block law for one gamma: a mixture over tenant kinds (beta: the
 * per-tenant alpha; other models: one part). */
typedef struct accept_law {
    int gamma, ns, nparts;
    /* Tokens a full acceptance (`full`) commits before the bonus: gamma
     * for a chain. A token tree's law (law_tree) has gamma = its depth + 1
     * rejection outcomes, a = 0 .. depth (every accepted path but the
     * whole rank-1 chain, the one async pipelines on), and full_len = that
     * chain's length. Set to gamma by accept_law_init. */
    int full_len;
    accept_law_part_t *part; /* owned, nparts entries */
} accept_law_t;

/* Where a tenant's random streams come from. */
typedef struct accept_seat {
    uint64_t seed;
    int rep, tenant;
} accept_seat_t;

/* The descriptor of one acceptance model. Every operation receives the
 * model's own parameter block (par, par_size bytes, filled by keys). */
typedef struct accept_model {
    const char *name;         /* acceptance.model value */
    const keytab_key_t *keys; /* parameters, in written order; KF_REQUIRED
                                 marks the ones without a default */
    size_t par_size;
    /* Frees what resolving keys allocated into par (NULL: nothing). */
    void (*par_fini)(void *par);
    /* Keys of which the scenario must give at least one (NULL-ended; empty
     * when none): alternatives, each optional alone (tree: p or profile).
     * Missing, they are reported as KF_REQUIRED keys are. */
    const char *need_any[4];
    /* Checks par (a hand-built one too). 0, or -1 with err (ERR_INPUT,
     * "acceptance.KEY: ..."). */
    int (*check)(const void *par, err_t *err);
    /* Checks that par can serve blocks of gamma drafts (a trace of block
     * lengths replays only at its recorded gamma). NULL: any gamma. 0, or
     * -1 with err (ERR_INPUT, "KEY: ..." with KEY the parameter at fault,
     * without the section: the loader places it in the group's section). */
    int (*check_gamma)(const void *par, int gamma, err_t *err);
    /* Initialises the tenant state st (ACCEPT_STATE_BYTES, zeroed); NULL:
     * the model keeps no per-tenant state. */
    int (*init)(void *st, const void *par, const accept_seat_t *seat, err_t *err);
    /* Accepted leading drafts of a block of gamma >= 1 drafts: 0..gamma. */
    int (*draw)(void *st, const void *par, gsl_rng *r, int gamma);
    /* The tenant's request number req (0, 1, ... in the tenant's order)
     * reaches the cloud; tenant of ntenants. NULL: requests change nothing
     * (a trace replayed per request starts the request's segment). */
    void (*request)(void *st, const void *par, int tenant, int ntenants, long req);
    /* n positions of the text were committed without a draft judged at
     * them: a sync verdict's bonus token after a block accepted whole, or
     * the token a block of no drafts commits.
     * NULL: nothing to do (a model of the judged drafts alone; a trace
     * replayed per request follows the text position by position and
     * steps over them). */
    void (*skip)(void *st, const void *par, int n);
    /* The per-draft acceptance probability the model stands for, over the
     * tenant population, for blocks of gamma drafts (NAN: none). */
    double (*mean)(const void *par, int gamma);
    /* Fills *L (allocated with accept_law_init) for blocks of gamma. NULL:
     * the model has no block law, so `specsim analytic` has no closed form
     * for it and says so (accept_cfg_law). */
    int (*law)(const void *par, int gamma, accept_law_t *L, err_t *err);
    /* Token trees (sim/model/tree.h). NULL: the model judges chains only,
     * and the loader refuses it with protocol.tree. draw_tree returns the
     * depth of the longest accepted root path, 0 .. t->depth, and sets
     * *whole to 1 when that path is the whole rank-1 chain (tree.h,
     * first_len), else 0; law_tree fills *L in the tree's shape (see
     * accept_law_t.full_len). */
    int (*draw_tree)(void *st, const void *par, gsl_rng *r, const struct tree *t,
                     int *whole);
    int (*law_tree)(const void *par, const struct tree *t, accept_law_t *L, err_t *err);
    /* The probabilities a budget tree is built under (tree_from_budget);
     * NULL with draw_tree NULL. */
    const struct tree_probs *(*tree_probs)(const void *par);
} accept_model_t;

/* An acceptance configuration: a model and its parameters. */
typedef struct accept_cfg {
    const accept_model_t *model; /* NULL: unset */
    void *par;                   /* owned: model->par_size bytes */
} accept_cfg_t;

/* --- the registry ------------------------------------------------------- */

/* The model named name, or NULL. */
const accept_model_t *accept_model_find(const char *name);

/* --- configurations ----------------------------------------------------- */

/* Resolves an `acceptance` section given as layers (later ones override
 * earlier ones key by key, as keytab_resolve; a tenant group over the
 * shared section): `model` (default iid) picks the descriptor, whose keys
 * resolve the rest. A key of another model is accepted, so a scenario can
 * switch the model by an override and keep its old parameters; it is
 * type- and range-checked by its own model's table, but unused. Any other key is an error with a "did you mean" among the
 * model's keys; a required parameter missing is reported at the model key.
 * On success *out holds a new parameter block the caller releases with
 * accept_cfg_fini(); on error *out is left empty and c->err is set. */
int accept_cfg_resolve(keytab_ctx_t *c, const keytab_layer_t *layers, int nl,
                       accept_cfg_t *out);
/* Same from YAML flow or block text ("{model: iid, alpha: 0.7}"); data
 * files are looked up from the working directory, then the specsim root
 * (sim/base/datapath.h). For configurations built
 * in code (tests). */
int accept_cfg_parse(accept_cfg_t *out, const char *yaml, err_t *err);
void accept_cfg_fini(accept_cfg_t *c);
/* Writes "model: NAME" and the model's parameters at indent. 0 or -1. */
int accept_cfg_write(FILE *f, const accept_cfg_t *c, int indent);
/* The model's check_gamma (0 when it has none). The loader runs it for
 * every verifying group's gamma. */
int accept_cfg_check_gamma(const accept_cfg_t *c, int gamma, err_t *err);
/* The model's mean per-draft acceptance for blocks of gamma (reporting). */
double accept_cfg_mean(const accept_cfg_t *c, int gamma);
/* The model's block law for gamma >= 1 into *L (release with
 * accept_law_fini). 0, or -1 with err. */
int accept_cfg_law(const accept_cfg_t *c, int gamma, accept_law_t *L, err_t *err);

/* The block law of a token tree t (accept_model_t.law_tree) into *L,
 * gamma = t->depth. 0, or -1 with err (the model judges no trees). */
int accept_cfg_law_tree(const accept_cfg_t *c, const struct tree *t, accept_law_t *L,
                        err_t *err);

/* --- block laws (for models filling one, and for readers) -------------- */

/* Allocates nparts parts of ns states for gamma, all zero (weights 1,
 * start law: state 0); the caller owns *L and releases it with
 * accept_law_fini(). 0 or -1 (err). */
int accept_law_init(accept_law_t *L, int nparts, int ns, int gamma, err_t *err);
void accept_law_fini(accept_law_t *L);
/* &rej of part p for start state s, a accepted (< gamma), next state s2. */
double *accept_law_rej(const accept_law_t *L, int p, int s, int a, int s2);
/* Part p as independent drafts, the one at position i (0-based) accepted
 * with alpha_at[min(i, n - 1)]; one state. */
void accept_law_positional(accept_law_t *L, int p, const double *alpha_at, int n);
/* P(a = k) for k = 0..gamma of part p, averaged over its start law (a
 * tree's law: rej[k], plus full when k = full_len). */
double accept_law_p(const accept_law_t *L, int p, int k);

/* --- shared by models with one alpha per tenant (iid, beta) ------------ */

typedef struct accept_geo {
    double alpha;
    double log_alpha;    /* cached log(alpha) for the draw */
    double next_log_u;   /* log of the stream's next uniform, once primed */
    int primed;
} accept_geo_t;

void accept_geo_set(accept_geo_t *g, double alpha);
/* min(gamma, leading successes) with P(success) = alpha, one uniform of r
 * per draw, in order; r must be the same stream at every call. */
int accept_geo_draw(accept_geo_t *g, gsl_rng *r, int gamma);

/* --- per-tenant state --------------------------------------------------- */

/* Public so a tenant can hold its state inline (accept_draw runs once per
 * verdict; a separately allocated state cost a cache miss each time). The
 * fields are private to the accept modules. Not movable once initialised
 * (rngbox). */
typedef struct accept {
    const accept_model_t *model;
    const void *par;     /* the configuration's: it must outlive the state */
    gsl_rng *rng;        /* == &box.r: RNG_ACCEPT, one stream per tenant */
    _Alignas(max_align_t) unsigned char st[ACCEPT_STATE_BYTES];
    rngbox_t box;
} accept_t;

/* Initialises the acceptance state *a in place for tenant `tenant` of
 * replication rep. cfg is referenced, not copied: it must outlive *a.
 * Returns 0, or -1 with err filled on a bad configuration (ERR_INPUT: the
 * model's check) or allocation failure (ERR_RUNTIME). Release with
 * accept_fini() (nothing to free today; kept so owners need not know). */
int accept_init(accept_t *a, const accept_cfg_t *cfg, uint64_t seed, int rep,
                int tenant, err_t *err);
void accept_fini(accept_t *a);

/* Heap form of accept_init: the caller owns the result and frees it with
 * accept_free(). NULL with err filled on failure. */
accept_t *accept_create(const accept_cfg_t *cfg, uint64_t seed, int rep,
                        int tenant, err_t *err);
void accept_free(accept_t *a);

/* Number of leading accepted drafts in a block of gamma drafts: 0..gamma
 * (0 when gamma < 1). Inline: it runs once per verdict, and the model's
 * draw is a call already. */
static inline int accept_draw(accept_t *a, int gamma)
{
    if (gamma < 1) return 0;
    return a->model->draw(a->st, a->par, a->rng, gamma);
}

/* Depth of the longest accepted root path of token tree t, *whole 1 when
 * it is the whole rank-1 chain (the model has draw_tree: the loader
 * refuses a tree with any other). */
static inline int accept_draw_tree(accept_t *a, const struct tree *t, int *whole)
{
    return a->model->draw_tree(a->st, a->par, a->rng, t, whole);
}

/* A new request of the tenant (see accept_model_t.request). */
static inline void accept_request(accept_t *a, int tenant, int ntenants, long req)
{
    if (a->model->request) a->model->request(a->st, a->par, tenant, ntenants, req);
}

/* n text positions committed unjudged (see accept_model_t.skip). */
static inline void accept_skip(accept_t *a, int n)
{
    if (a->model->skip && n > 0) a->model->skip(a->st, a->par, n);
}

/* The tenant's parameter stream (RNG_ACCEPT_PARAM), for a model's init; the
 * caller frees it with gsl_rng_free(). NULL with err on allocation failure. */
gsl_rng *accept_param_rng(const accept_seat_t *seat, err_t *err);

#endif
