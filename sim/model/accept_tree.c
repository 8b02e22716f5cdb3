/* accept_tree — Sequoia's acceptance of a token tree (Chen et al. 2024):
 * at each accepted node (the root, the last committed token, is accepted)
 * the child of rank k is the accepted one with probability p[k-1], at most
 * one child is accepted, and none with 1 − Σ_{k <= children} p[k-1]; a node
 * without a child of rank k cannot accept one. The block's accepted length
 * a is the depth of the accepted root path. So a node is on the accepted
 * path with the product of the p's of the ranks along its root path, and
 *   E[a] = Σ over nodes of that product        (tree_expected_depth).
 * A chain (every node one child) accepts each draft with p[0]: the iid
 * model with alpha = p[0].
 *
 * The draw walks the tree with the iid model's primitive: a run of first
 * choices (rank 1 at each node, down to the end of the rank-1 chain) is a
 * truncated geometric of p[0] drawn from one uniform (accept_geo_draw);
 * where the run stops short, at a node with more than one child, one more
 * uniform picks among ranks 2, 3, ... (p_k / (1 − p[0]) each, given rank 1
 * failed) or none, and a new run starts below the picked child. A node
 * with one child draws nothing more. A chain is therefore one run, one
 * uniform per block, the same uniform of the same stream as iid's: the
 * tree [1, 1, 1, 1] under p = [alpha] and the chain of gamma 4 under iid
 * alpha make the same decisions (tests/cli/tree.sh compares their traces).
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

#include "model/accept.h"
#include "model/tree.h"
#include "engine/rng.h"
#include "io/keytab.h"

/* Ranks given a probability (more children than that have 0). */
#define TREE_RANKS_MAX 32
/* Σ p up to rounding of the values as written. */
#define TREE_SUM_SLACK 1e-12

typedef struct tree_par {
    double p[TREE_RANKS_MAX];
    int np;
} tree_par_t;

_Static_assert(sizeof(accept_geo_t) <= ACCEPT_STATE_BYTES, "tree state too large");

/* `p`: a list of probabilities per rank, each in [0, 1], Σ <= 1; every
 * error at the value as written. */
static int tree_parse_p(keytab_ctx_t *c, const ynode_t *node, const char *key,
                        const keytab_key_t *k, void *base)
{
    double *p = (double *)((char *)base + k->off);
    int *np = (int *)((char *)base + k->aux);
    if (node->kind != YNODE_SEQ)
        return keytab_err(c, node, key, "expected a list of probabilities per child "
                          "rank (e.g. [0.5, 0.2, 0.1]), got %s", ynode_kind_name(node));
    if (node->n == 0) return keytab_err(c, node, key, "the list is empty");
    if (node->n > TREE_RANKS_MAX)
        return keytab_err(c, node, key, "%zu ranks, more than %d", node->n,
                          TREE_RANKS_MAX);
    keytab_key_t num = {.name = k->name, .type = KT_NUM, .unit = UNIT_NUMBER,
                        .min = 0, .max = 1};
    double sum = 0;
    for (size_t i = 0; i < node->n; i++) {
        char ik[KEYTAB_KEY_MAX], idx[24];
        snprintf(idx, sizeof idx, "%zu", i);
        keytab_join(ik, key, idx);
        if (keytab_parse_number(c, node->items[i], ik, &num, &p[i]) != 0) return -1;
        sum += p[i];
    }
    if (sum > 1 + TREE_SUM_SLACK)
        return keytab_err(c, node, key, "the probabilities sum to %g, more than 1 (at "
                          "most one child is accepted)", sum);
    *np = (int)node->n;
    return 0;
}

static int tree_write_p(FILE *f, const keytab_key_t *k, const void *base, int indent)
{
    (void)indent;
    const double *p = (const double *)((const char *)base + k->off);
    int np = *(const int *)((const char *)base + k->aux);
    if (fputs(" [", f) == EOF) return -1;
    for (int i = 0; i < np; i++) {
        /* The shortest of 15 or 17 digits that reads back as p[i]. */
        char buf[32];
        snprintf(buf, sizeof buf, "%.15g", p[i]);
        if (strtod(buf, NULL) != p[i]) snprintf(buf, sizeof buf, "%.17g", p[i]);
        if (fprintf(f, "%s%s", i ? ", " : "", buf) < 0) return -1;
    }
    return fputs("]\n", f) == EOF ? -1 : 0;
}

static const keytab_key_t TREE_KEYS[] = {
    {.name = "p", KEYTAB_CUSTOM(tree_par_t, p, double *),
     .aux = KEYTAB_OFF(tree_par_t, np, int),
     .parse = tree_parse_p, .write = tree_write_p, .flags = KF_REQUIRED},
    {.name = NULL}};

static int tree_check(const void *par, err_t *err)
{
    const tree_par_t *tp = par;
    double sum = 0;
    if (tp->np < 1 || tp->np > TREE_RANKS_MAX)
        return err_set(err, ERR_INPUT, "acceptance.p: give 1 to %d probabilities",
                       TREE_RANKS_MAX);
    for (int i = 0; i < tp->np; i++) {
        if (!(tp->p[i] >= 0.0 && tp->p[i] <= 1.0))
            return err_set(err, ERR_INPUT, "acceptance.p.%d: %g is outside [0, 1]", i,
                           tp->p[i]);
        sum += tp->p[i];
    }
    if (sum > 1 + TREE_SUM_SLACK)
        return err_set(err, ERR_INPUT, "acceptance.p: the probabilities sum to %g, more "
                       "than 1", sum);
    return 0;
}

static int tree_init(void *st, const void *par, const accept_seat_t *seat, err_t *err)
{
    (void)seat;
    (void)err;
    accept_geo_set(st, ((const tree_par_t *)par)->p[0]);
    return 0;
}

/* A chain of gamma drafts: one run of first choices (see the top). */
static int tree_draw_chain(void *st, const void *par, gsl_rng *r, int gamma)
{
    (void)par;
    return accept_geo_draw(st, r, gamma);
}

/* The child picked at node v (-1: the root) whose rank-1 child was
 * rejected: ranks 2 .. its children with p_k / (1 − p[0]), else none
 * (-1). Draws one uniform only when v has a second child. */
static int tree_pick_other(const tree_par_t *tp, const tree_t *t, int v, gsl_rng *r)
{
    int nc = v < 0 ? t->root_children : t->nchild[v];
    double q = 1 - tp->p[0];
    if (nc < 2 || !(q > 0)) return -1;
    double u = rng_uniform(r) * q, c = 0;
    for (int k = 2; k <= nc && k <= tp->np; k++) {
        c += tp->p[k - 1];
        if (u < c) return (v < 0 ? 0 : t->child0[v]) + k - 1;
    }
    return -1;
}

static int tree_draw_tree(void *st, const void *par, gsl_rng *r, const tree_t *t,
                          int *whole)
{
    const tree_par_t *tp = par;
    int v = -1, a = 0;
    *whole = 0;
    for (;;) {
        int m = tree_first_run(t, v);
        if (m == 0) return a;
        int k = accept_geo_draw(st, r, m);
        for (int j = 0; j < k; j++) v = v < 0 ? 0 : t->child0[v];
        *whole = a == 0 && k == m;   /* the first run, to its end */
        a += k;
        if (k == m) return a;
        int w = tree_pick_other(tp, t, v, r);
        if (w < 0) return a;
        v = w;
        a++;
    }
}

static double tree_mean(const void *par, int gamma)
{
    (void)gamma;
    return ((const tree_par_t *)par)->p[0];
}

static int tree_law(const void *par, int gamma, accept_law_t *L, err_t *err)
{
    if (accept_law_init(L, 1, 1, gamma, err) != 0) return -1;
    accept_law_positional(L, 0, ((const tree_par_t *)par)->p, 1);
    return 0;
}

/* P(a = d) = P(a >= d) − P(a >= d + 1), P(a >= d) the sum over the nodes
 * of depth d of their root paths' products (tree_expected_depth); the
 * whole rank-1 chain (full, p[0]^first_len) is taken out of its depth's
 * outcome (accept_law_t.full_len). */
static int tree_law_tree(const void *par, const tree_t *t, accept_law_t *L, err_t *err)
{
    const tree_par_t *tp = par;
    double at_least[TREE_NODES_MAX + 2];
    if (accept_law_init(L, 1, 1, t->depth + 1, err) != 0) return -1;
    tree_expected_depth(t, tp->p, tp->np, at_least);
    at_least[t->depth + 1] = 0;
    double whole = 1;   /* multiplied as tree_expected_depth does: exact */
    for (int j = 0; j < t->first_len; j++) whole *= tp->p[0];
    for (int d = 0; d <= t->depth; d++)
        *accept_law_rej(L, 0, 0, d, 0) =
            at_least[d] - at_least[d + 1] - (d == t->first_len ? whole : 0);
    L->full_len = t->first_len;
    L->part[0].full[0][0] = whole;
    return 0;
}

const accept_model_t accept_tree_model = {
    .name = "tree",
    .keys = TREE_KEYS,
    .par_size = sizeof(tree_par_t),
    .check = tree_check,
    .init = tree_init,
    .draw = tree_draw_chain,
    .mean = tree_mean,
    .law = tree_law,
    .draw_tree = tree_draw_tree,
    .law_tree = tree_law_tree,
};
