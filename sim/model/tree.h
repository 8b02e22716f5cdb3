/* tree — the shape of a token tree: a speculation block whose drafts branch
 * (`protocol.tree`, docs/design.md "Token trees").
 *
 * A tree hangs below the last committed token (its root, not a node). It
 * is given either by branching factors per depth (`branching: [3, 2, 1]`:
 * every node of depth d has b_{d+1} children, the root b_1) or by an
 * explicit list of parent indices (`parents: [-1, -1, 0, 0, 1]`: node i's
 * parent, -1 for the root; a parent comes before its children), by a depth
 * and a width (`{depth: 3, width: 2}`: read as the branching list [2, 2,
 * 2]), or by a node budget filled best first (tree_from_budget). The
 * children of a node are ranked in the order they are listed (rank 1
 * first): the acceptance model of sim/model/accept.h gives each rank its
 * own probability (Sequoia's p_k).
 *
 * The built tree is canonical: nodes numbered level by level, the children
 * of one node contiguous and in rank order, so the nodes of a level are one
 * run of indices and a node's children one run. A block of a chain of
 * gamma drafts is the tree `branching: [1, 1, ..., 1]` (gamma ones).
 *
 * Everything is held inline (no allocation): a protocol_cfg_t holds its
 * tree, and copies of it are plain copies.
 */
#ifndef SPECSIM_TREE_H
#define SPECSIM_TREE_H

#include <stdint.h>

#include "base/err.h"
#include "io/keytab.h"

/* The most nodes a tree may have (the block's drafts): a verify job of
 * TREE_NODES_MAX + 1 tokens, well inside GAMMA_MAX (sim/model/gamma.h). */
#define TREE_NODES_MAX 128

/* How the scenario described the tree (written back the same way). */
enum tree_given { TREE_NONE = 0, TREE_BRANCHING, TREE_PARENTS, TREE_BUDGET };

typedef struct tree {
    char present;                    /* 1: a tree was given (keytab's
                                        KF_SKIPEMPTY reads this byte) */
    int given;                       /* enum tree_given; TREE_NONE: no tree */
    int nspec;                       /* entries of spec */
    int16_t spec[TREE_NODES_MAX];    /* the list as given (branching or
                                        parents; budget: budget, top_k and,
                                        when nspec is 3, the depth cap) */
    int built;                       /* the shape is known (a budget's is
                                        built from the acceptance model's
                                        probabilities: tree_from_budget) */
    int n, depth;                    /* nodes, levels (0 for no tree) */
    int16_t parent[TREE_NODES_MAX];  /* canonical index, -1: the root */
    int16_t rank[TREE_NODES_MAX];    /* 1-based among its siblings */
    int16_t level[TREE_NODES_MAX];   /* 1-based depth */
    int16_t child0[TREE_NODES_MAX];  /* its first child (valid when nchild) */
    int16_t nchild[TREE_NODES_MAX];
    int16_t width[TREE_NODES_MAX];   /* nodes at depth d + 1 */
    int root_children;               /* the root's children: nodes 0 .. this-1 */
    int first_len;                   /* length of the rank-1 chain from the
                                        root: what async pipelines on */
} tree_t;

/* Builds *t from branching factors b[0..nb) (each >= 1). 0, or -1 with err
 * (ERR_INPUT "branching...: ...") for a factor < 1 or more than
 * TREE_NODES_MAX nodes. */
int tree_from_branching(tree_t *t, const int *b, int nb, err_t *err);
/* Builds *t from parent indices p[0..np) (-1: the root; else an earlier
 * index). 0, or -1 with err (ERR_INPUT "parents.I: ..."). */
int tree_from_parents(tree_t *t, const int *p, int np, err_t *err);

/* 1 when a and b describe the same tree as given. */
int tree_same(const tree_t *a, const tree_t *b);

/* The chain of gamma drafts (1 <= gamma <= TREE_NODES_MAX) as a tree. */
int tree_chain(tree_t *t, int gamma, err_t *err);

/* Length of the chain of rank-1 children below node v (v = -1: the root),
 * v excluded: how many drafts a run of first choices can accept from v. */
int tree_first_run(const tree_t *t, int v);

/* The last node of that run. */
int tree_first_run_end(const tree_t *t, int v);

/* Rows of child-rank probabilities (Sequoia's p_k): row d for the children
 * at depth d + 1 (row 0: the root's), the last row repeating below; ranks
 * past a row's np have probability 0. */
#define TREE_ROWS_MAX 16
#define TREE_RANKS_MAX 32
typedef struct tree_probs {
    int nrows;
    int np[TREE_ROWS_MAX];
    double p[TREE_ROWS_MAX][TREE_RANKS_MAX];
} tree_probs_t;

/* P(child of rank k, at depth d >= 1, is the accepted one | its parent is). */
static inline double tree_probs_at(const tree_probs_t *pr, int d, int k)
{
    int row = d - 1 < pr->nrows ? d - 1 : pr->nrows - 1;
    return k >= 1 && k <= pr->np[row] ? pr->p[row][k - 1] : 0;
}

/* Σ over nodes of the product of tree_probs_at along the node's root path:
 * E[a], the expected accepted depth, under an acceptance that picks child
 * rank k of an accepted node with its probability. at_least[d] (d = 0 ..
 * depth, may be NULL) receives P(a >= d). */
double tree_expected_depth(const tree_t *t, const tree_probs_t *pr, double *at_least);

/* Builds the shape of a budget tree t (given TREE_BUDGET: n = budget,
 * spec[1] = top_k, spec[2] = the depth cap when nspec is 3) under
 * probabilities pr: best first, the node whose root path is most likely
 * added next (a child of rank k <= top_k of a node in the tree, or of the
 * root, at a depth within the cap), ties to the shallower, then the
 * earlier parent, then the lower rank. The n most likely nodes form a
 * tree when each row's p is non-increasing in rank (a child is never more
 * likely than its parent or its elder sibling), so this maximises
 * tree_expected_depth over trees of n nodes within the cap (Sequoia's
 * optimal tree). The cap must leave room for n nodes (top_k + top_k^2 +
 * ... + top_k^cap >= n; the scenario key checks it): with less, fewer
 * nodes are built. */
void tree_from_budget(tree_t *t, const tree_probs_t *pr);

/* `protocol.tree` as a scenario key: a mapping with `branching`,
 * `parents`, `depth` and `width`, or `budget` (and `top_k`, `depth`)
 * (sim/config/scenario_keys.c); the field is a tree_t. */
int tree_parse_key(keytab_ctx_t *c, const ynode_t *node, const char *key,
                   const keytab_key_t *k, void *base);
int tree_write_key(FILE *f, const keytab_key_t *k, const void *base, int indent);

#endif
