/* tree — building, walking and reading a token tree's shape (tree.h). */
#include "model/tree.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- building ------------------------------------------------------------ */

/* Fills the derived fields of *t from parent[] of nodes already numbered
 * canonically (level by level, siblings contiguous in rank order). */
static void tree_derive(tree_t *t)
{
    t->depth = 0;
    t->root_children = 0;
    for (int i = 0; i < t->n; i++) {
        int p = t->parent[i];
        t->level[i] = (int16_t)(p < 0 ? 1 : t->level[p] + 1);
        t->nchild[i] = 0;
        t->child0[i] = 0;
        int *count = p < 0 ? &t->root_children : NULL;
        if (p >= 0) {
            if (t->nchild[p] == 0) t->child0[p] = (int16_t)i;
            t->rank[i] = (int16_t)++t->nchild[p];
        } else {
            t->rank[i] = (int16_t)++*count;
        }
        if (t->level[i] > t->depth) t->depth = t->level[i];
    }
    memset(t->width, 0, sizeof t->width);
    for (int i = 0; i < t->n; i++) t->width[t->level[i] - 1]++;
    t->present = t->n > 0;
    t->built = t->n > 0;
    t->first_len = tree_first_run(t, -1);
}

int tree_from_branching(tree_t *t, const int *b, int nb, err_t *err)
{
    memset(t, 0, sizeof *t);
    if (nb < 1) return err_set(err, ERR_INPUT, "branching: the list is empty");
    if (nb > TREE_NODES_MAX)
        return err_set(err, ERR_INPUT, "branching: %d levels, more than the %d nodes "
                       "a tree may have", nb, TREE_NODES_MAX);
    long total = 0, level = 1;
    for (int d = 0; d < nb; d++) {
        if (b[d] < 1)
            return err_set(err, ERR_INPUT, "branching.%d: %d is below 1 (every level "
                           "needs a node)", d, b[d]);
        level *= b[d];
        total += level;
        if (total > TREE_NODES_MAX)
            return err_set(err, ERR_INPUT, "branching: more than %d nodes (the tree "
                           "has %ld by level %d)", TREE_NODES_MAX,
                           total, d + 1);
    }
    /* Level by level: each node of the level above gets b[d] children in
     * turn, so siblings are contiguous and numbered in rank order. */
    int n = 0, lo = 0, hi = 0;   /* [lo, hi): the level above; root: none */
    for (int d = 0; d < nb; d++) {
        int start = n;
        if (d == 0) {
            for (int k = 0; k < b[0]; k++) t->parent[n++] = -1;
        } else {
            for (int p = lo; p < hi; p++)
                for (int k = 0; k < b[d]; k++) t->parent[n++] = (int16_t)p;
        }
        lo = start;
        hi = n;
    }
    t->n = n;
    t->given = TREE_BRANCHING;
    t->nspec = nb;
    for (int d = 0; d < nb; d++) t->spec[d] = (int16_t)b[d];
    tree_derive(t);
    return 0;
}

int tree_from_parents(tree_t *t, const int *p, int np, err_t *err)
{
    memset(t, 0, sizeof *t);
    if (np < 1) return err_set(err, ERR_INPUT, "parents: the list is empty");
    if (np > TREE_NODES_MAX)
        return err_set(err, ERR_INPUT, "parents: %d nodes, more than %d", np,
                       TREE_NODES_MAX);
    for (int i = 0; i < np; i++) {
        if (p[i] < -1 || p[i] >= i)
            return err_set(err, ERR_INPUT, "parents.%d: %d is not -1 (the root) or the "
                           "index of an earlier node (0 .. %d)", i, p[i], i - 1);
    }
    /* Canonical order: level by level; within a level by the canonical
     * index of the parent, then as listed (the rank). orig[c]: the listed
     * index of canonical node c. Every node is reached: its parent comes
     * before it. */
    int orig[TREE_NODES_MAX], n = 0, lo = 0, hi = 0;
    for (int i = 0; i < np; i++)
        if (p[i] < 0) {
            orig[n] = i;
            t->parent[n++] = -1;
        }
    for (hi = n; lo < hi; lo = hi, hi = n)
        for (int c = lo; c < hi; c++)
            for (int i = 0; i < np; i++)
                if (p[i] == orig[c]) {
                    orig[n] = i;
                    t->parent[n++] = (int16_t)c;
                }
    t->n = n;
    t->given = TREE_PARENTS;
    t->nspec = np;
    for (int i = 0; i < np; i++) t->spec[i] = (int16_t)p[i];
    tree_derive(t);
    return 0;
}

int tree_chain(tree_t *t, int gamma, err_t *err)
{
    int b[TREE_NODES_MAX];
    if (gamma < 1 || gamma > TREE_NODES_MAX)
        return err_set(err, ERR_INPUT, "tree: a chain of %d drafts is outside [1, %d]",
                       gamma, TREE_NODES_MAX);
    for (int d = 0; d < gamma; d++) b[d] = 1;
    return tree_from_branching(t, b, gamma, err);
}

/* The most likely candidate: a child of rank k of node v (-1: the root)
 * not yet in the tree, k <= top_k. Returns 0 when none is left. */
typedef struct tree_cand {
    int v, k, depth;
    double p;
} tree_cand_t;

static int tree_cand_better(const tree_cand_t *a, const tree_cand_t *b)
{
    if (a->p != b->p) return a->p > b->p;
    if (a->depth != b->depth) return a->depth < b->depth;
    if (a->v != b->v) return a->v < b->v;
    return a->k < b->k;
}

void tree_from_budget(tree_t *t, const tree_probs_t *pr)
{
    int budget = t->spec[0], top_k = t->spec[1];
    int max_depth = t->nspec > 2 ? t->spec[2] : TREE_NODES_MAX;
    int parent[TREE_NODES_MAX], lvl[TREE_NODES_MAX];
    double reach[TREE_NODES_MAX];
    /* At most one open candidate per node (its next rank) and the root's:
     * a child of rank k + 1 opens once rank k is in. */
    tree_cand_t cand[TREE_NODES_MAX + 2];
    int nc = 0, n = 0;
    cand[nc++] = (tree_cand_t){-1, 1, 1, tree_probs_at(pr, 1, 1)};
    while (n < budget && nc > 0) {
        int best = 0;
        for (int c = 1; c < nc; c++)
            if (tree_cand_better(&cand[c], &cand[best])) best = c;
        tree_cand_t b = cand[best];
        parent[n] = b.v;
        lvl[n] = b.depth;
        reach[n] = b.p;
        cand[best] = cand[--nc];
        if (b.k < top_k) {
            double up = b.v < 0 ? 1 : reach[b.v];
            cand[nc++] = (tree_cand_t){b.v, b.k + 1, b.depth,
                                       up * tree_probs_at(pr, b.depth, b.k + 1)};
        }
        /* A depth cap closes the node's children; the parse made sure the
         * capped tree still has room for the budget (tree_parse_budget). */
        if (lvl[n] < max_depth)
            cand[nc++] = (tree_cand_t){n, 1, lvl[n] + 1,
                                       reach[n] * tree_probs_at(pr, lvl[n] + 1, 1)};
        n++;
    }
    int16_t spec[3] = {t->spec[0], t->spec[1], t->spec[2]};
    int nspec = t->nspec;
    err_t e;
    /* Parents come before children and siblings in rank order: valid. */
    tree_from_parents(t, parent, n, &e);
    t->given = TREE_BUDGET;
    t->nspec = nspec;
    memcpy(t->spec, spec, sizeof spec);
}

int tree_same(const tree_t *a, const tree_t *b)
{
    if (a->given != b->given || a->nspec != b->nspec) return 0;
    for (int i = 0; i < a->nspec; i++)
        if (a->spec[i] != b->spec[i]) return 0;
    return 1;
}

/* ---- walking ------------------------------------------------------------- */

int tree_first_run(const tree_t *t, int v)
{
    int len = 0;
    for (;;) {
        int has = v < 0 ? t->root_children > 0 : t->nchild[v] > 0;
        if (!has) return len;
        v = v < 0 ? 0 : t->child0[v];
        len++;
    }
}

int tree_first_run_end(const tree_t *t, int v)
{
    for (;;) {
        int has = v < 0 ? t->root_children > 0 : t->nchild[v] > 0;
        if (!has) return v;
        v = v < 0 ? 0 : t->child0[v];
    }
}

double tree_expected_depth(const tree_t *t, const tree_probs_t *pr, double *at_least)
{
    double reach[TREE_NODES_MAX], e = 0;
    if (at_least)
        for (int d = 0; d <= t->depth; d++) at_least[d] = d == 0;
    /* Parents precede children: reach[parent] is known in time. */
    for (int i = 0; i < t->n; i++) {
        double pk = tree_probs_at(pr, t->level[i], t->rank[i]);
        reach[i] = (t->parent[i] < 0 ? 1 : reach[t->parent[i]]) * pk;
        e += reach[i];
        if (at_least) at_least[t->level[i]] += reach[i];
    }
    return e;
}

/* ---- the scenario key ----------------------------------------------------- */

static const keytab_key_t TREE_KEYS[] = {
    {.name = "branching", .type = KT_SKIP},
    {.name = "parents", .type = KT_SKIP},
    {.name = "budget", .type = KT_SKIP},
    {.name = "top_k", .type = KT_SKIP},
    {.name = "depth", .type = KT_SKIP},
    {.name = "width", .type = KT_SKIP},
    {.name = NULL}};

/* Nodes of a tree of `depth` levels in which every node (and the root) has
 * `width` children: width + width^2 + ... + width^depth, counted only up
 * to TREE_NODES_MAX + 1 (so that it cannot overflow: past the cap the
 * exact count does not matter). */
static int tree_full_nodes(int depth, int width)
{
    long total = 0, level = 1;
    for (int d = 0; d < depth && total <= TREE_NODES_MAX; d++) {
        level *= width;
        total += level;
        if (level > TREE_NODES_MAX) level = TREE_NODES_MAX + 1;
    }
    return total > TREE_NODES_MAX ? TREE_NODES_MAX + 1 : (int)total;
}

/* An integer in [lo, hi] at node. */
static int tree_int(keytab_ctx_t *c, const ynode_t *node, const char *key, int lo, int hi,
                    int *out)
{
    char *end = NULL;
    long x = node->kind == YNODE_SCALAR ? strtol(node->str, &end, 10) : 0;
    if (node->kind != YNODE_SCALAR || end == node->str || *end || x < lo || x > hi)
        return keytab_err(c, node, key, "expected an integer in [%d, %d]", lo, hi);
    *out = (int)x;
    return 0;
}

/* {budget: N, top_k: K, depth: D}: N nodes, best first under the
 * acceptance model's probabilities, none deeper than D (no cap when D is
 * not given); the shape is built once both sections are read
 * (tree_from_budget, from sim/config/scenario_check.c). */
static int tree_parse_budget(keytab_ctx_t *c, const ynode_t *node, const char *key,
                             tree_t *t)
{
    char k1[KEYTAB_KEY_MAX], k2[KEYTAB_KEY_MAX], k3[KEYTAB_KEY_MAX];
    keytab_join(k1, key, "budget");
    keytab_join(k2, key, "top_k");
    keytab_join(k3, key, "depth");
    int budget, top_k = TREE_NODES_MAX, depth = 0;
    const ynode_t *kn = ynode_get(node, "top_k"), *dn = ynode_get(node, "depth");
    const ynode_t *bn = ynode_get(node, "budget");
    if (tree_int(c, bn, k1, 1, TREE_NODES_MAX, &budget) != 0 ||
        (kn && tree_int(c, kn, k2, 1, TREE_NODES_MAX, &top_k) != 0) ||
        (dn && tree_int(c, dn, k3, 1, TREE_NODES_MAX, &depth) != 0))
        return -1;
    /* Only a depth cap can leave too little room: without one a chain of
     * rank-1 children always holds the budget. Caught here, not when the
     * shape is built: the budget is taken as the node count (the block's
     * gamma, tree_parse_gamma) as soon as the key is read. */
    int room = depth ? tree_full_nodes(depth, top_k) : TREE_NODES_MAX;
    if (budget > room)
        return keytab_err(c, bn, k1, "%d nodes do not fit in depth %d with top_k %d "
                          "(at most %d)", budget, depth, top_k, room);
    memset(t, 0, sizeof *t);
    t->given = TREE_BUDGET;
    t->nspec = depth ? 3 : 2;   /* written back as given: depth only if given */
    t->spec[0] = (int16_t)budget;
    t->spec[1] = (int16_t)top_k;
    t->spec[2] = (int16_t)depth;
    t->n = budget;
    t->present = 1;
    return 0;
}

/* The integers of a list node into v (at most TREE_NODES_MAX). */
static int tree_ints(keytab_ctx_t *c, const ynode_t *node, const char *key, int *v,
                     int *n)
{
    if (node->kind != YNODE_SEQ)
        return keytab_err(c, node, key, "expected a list of integers, got %s",
                          ynode_kind_name(node));
    if (node->n == 0) return keytab_err(c, node, key, "the list is empty");
    if (node->n > TREE_NODES_MAX)
        return keytab_err(c, node, key, "%zu entries: a tree has at most %d nodes",
                          node->n, TREE_NODES_MAX);
    for (size_t i = 0; i < node->n; i++) {
        const ynode_t *it = node->items[i];
        char *end = NULL;
        long x = it->kind == YNODE_SCALAR ? strtol(it->str, &end, 10) : 0;
        if (it->kind != YNODE_SCALAR || end == it->str || *end || x < -1000000 ||
            x > 1000000) {
            char ik[KEYTAB_KEY_MAX], idx[24];
            snprintf(idx, sizeof idx, "%zu", i);
            keytab_join(ik, key, idx);
            return keytab_err(c, it, ik, "expected an integer");
        }
        v[i] = (int)x;
    }
    *n = (int)node->n;
    return 0;
}

/* An error of tree_from_*: "SUB...: what" placed at the list (or its
 * entry named by the message's index). */
static int tree_blame(keytab_ctx_t *c, const ynode_t *list, const char *key,
                      const char *sub, err_t *e)
{
    const char *msg = e->msg, *colon = strstr(msg, ": ");
    const ynode_t *at = list;
    char k[KEYTAB_KEY_MAX];
    keytab_join(k, key, sub);
    size_t sl = strlen(sub);
    if (colon && !strncmp(msg, sub, sl) && msg[sl] == '.') {
        long i = strtol(msg + sl + 1, NULL, 10);
        if (i >= 0 && (size_t)i < list->n) at = list->items[i];
        char idx[24];
        snprintf(idx, sizeof idx, "%ld", i);
        char k2[KEYTAB_KEY_MAX];
        keytab_join(k2, k, idx);
        return keytab_err(c, at, k2, "%s", colon + 2);
    }
    return keytab_err(c, at, k, "%s", colon ? colon + 2 : msg);
}

/* {depth: D, width: W}: the full tree in which every node above depth D
 * (and the root) has W children, built as the branching list [W, ..., W]
 * (D entries) and written back as that list. Two integers rather than a
 * list so that `optimize` can search the shape one number at a time
 * (--knob protocol.tree.depth=1..4 --knob protocol.tree.width=1..3). */
static int tree_parse_uniform(keytab_ctx_t *c, const ynode_t *node, const char *key,
                              tree_t *t)
{
    char kd[KEYTAB_KEY_MAX], kw[KEYTAB_KEY_MAX];
    keytab_join(kd, key, "depth");
    keytab_join(kw, key, "width");
    const ynode_t *dn = ynode_get(node, "depth"), *wn = ynode_get(node, "width");
    if (!dn) return keytab_err(c, wn, kw, "width goes with depth (the levels it fills)");
    int depth, width;
    if (tree_int(c, dn, kd, 1, TREE_NODES_MAX, &depth) != 0 ||
        tree_int(c, wn, kw, 1, TREE_NODES_MAX, &width) != 0)
        return -1;
    int n = tree_full_nodes(depth, width);
    if (n > TREE_NODES_MAX)
        return keytab_err(c, wn, kw, "width %d over depth %d is more than %d nodes "
                          "(%d + %d^2 + ... + %d^%d)", width, depth, TREE_NODES_MAX,
                          width, width, width, depth);
    int b[TREE_NODES_MAX];
    for (int d = 0; d < depth; d++) b[d] = width;
    err_t e = {0};
    if (tree_from_branching(t, b, depth, &e) != 0)   /* cannot fail: checked above */
        return keytab_err(c, node, key, "%s", e.msg);
    return 0;
}

int tree_parse_key(keytab_ctx_t *c, const ynode_t *node, const char *key,
                   const keytab_key_t *k, void *base)
{
    tree_t *t = (tree_t *)((char *)base + k->off);
    if (node->kind != YNODE_MAP)
        return keytab_err(c, node, key, "expected a mapping with branching, parents, "
                          "depth and width, or budget (e.g. {branching: [3, 2, 1]}), "
                          "got %s", ynode_kind_name(node));
    if (keytab_check_keys(c, TREE_KEYS, node, key) != 0) return -1;
    const ynode_t *b = ynode_get(node, "branching"), *p = ynode_get(node, "parents");
    const ynode_t *bu = ynode_get(node, "budget"), *w = ynode_get(node, "width");
    const ynode_t *d = ynode_get(node, "depth");
    if ((b != NULL) + (p != NULL) + (bu != NULL) + (w != NULL) != 1)
        return keytab_err(c, node, key, "give exactly one of branching (factors per "
                          "depth), parents (parent index per node), width (with depth: "
                          "a uniform tree) and budget (nodes best first, with top_k and "
                          "depth)");
    if (ynode_get(node, "top_k") && !bu)
        return keytab_err(c, ynode_get(node, "top_k"), key, "top_k goes with budget");
    if (d && !bu && !w) {
        char kd[KEYTAB_KEY_MAX];
        keytab_join(kd, key, "depth");
        return keytab_err(c, d, kd, "depth goes with width (a uniform tree) or budget "
                          "(its deepest level)");
    }
    if (bu) return tree_parse_budget(c, node, key, t);
    if (w) return tree_parse_uniform(c, node, key, t);
    const char *sub = b ? "branching" : "parents";
    const ynode_t *list = b ? b : p;
    char lk[KEYTAB_KEY_MAX];
    keytab_join(lk, key, sub);
    int v[TREE_NODES_MAX], n = 0;
    if (tree_ints(c, list, lk, v, &n) != 0) return -1;
    err_t e = {0};
    int rc = b ? tree_from_branching(t, v, n, &e) : tree_from_parents(t, v, n, &e);
    if (rc != 0) return tree_blame(c, list, key, sub, &e);
    return 0;
}

int tree_write_key(FILE *f, const keytab_key_t *k, const void *base, int indent)
{
    (void)indent;
    const tree_t *t = (const tree_t *)((const char *)base + k->off);
    if (t->given == TREE_BUDGET && t->nspec > 2)
        return fprintf(f, " {budget: %d, top_k: %d, depth: %d}\n", t->spec[0], t->spec[1],
                       t->spec[2]) < 0 ? -1 : 0;
    if (t->given == TREE_BUDGET)
        return fprintf(f, " {budget: %d, top_k: %d}\n", t->spec[0], t->spec[1]) < 0 ? -1
                                                                                   : 0;
    if (fprintf(f, " {%s: [", t->given == TREE_PARENTS ? "parents" : "branching") < 0)
        return -1;
    for (int i = 0; i < t->nspec; i++)
        if (fprintf(f, "%s%d", i ? ", " : "", t->spec[i]) < 0) return -1;
    return fprintf(f, "]}\n") < 0 ? -1 : 0;
}
