/* accrank — token-tree acceptance measured by teacher forcing: the rank of
 * the target's token among the draft's, position by position, and
 * Sequoia's per-depth, per-rank acceptance (sim/model/accept_tree.c)
 * estimated from it (docs/llm.md, "Measuring tree acceptance").
 *
 * Why ranks give greedy tree verification exactly: under greedy
 * verification the committed text is the target's greedy text t whatever
 * the drafts were (lossless), and the accepted path of a tree follows it.
 * A node of depth d is on the path iff its parent is and its token is
 * t_{s+d−1}, s the block's first position. A tree that expands at each
 * node the draft's w_d most likely tokens (ranks 0 .. w_d − 1 in the
 * draft's distribution after the committed text, which is the target's
 * text) therefore holds the target's token at depth d iff its rank there
 * is below w_d, and its child of rank k (1-based) is the accepted one iff
 * that rank is k − 1. So outcome j of the chain (kernels/llm/tforce.h) is
 * rank_j == 0, and a tree of width w reads the rank stream as a chain
 * reads its outcomes, with "accepted" meaning rank < w.
 *
 * Blocks are cut from a text's stream as accstat.h cuts chains: a block
 * starts at the text's first outcome, after a rejection (which it
 * consumes: the target's correction is that position's token), or after
 * `depth` acceptances; a text's last block, cut short by its end, is left
 * out. Depth d's estimates are over the blocks that reached depth d, so
 * p_k(d) = P(rank at depth d = k − 1 | the block reached depth d), the
 * probability the simulator's tree model gives rank k at depth d. With
 * width 1 these are exactly accstat_position's chain acceptance (tested). */
#ifndef SPECSIM_ACCRANK_H
#define SPECSIM_ACCRANK_H

#include <stdint.h>
#include <stdio.h>

#include "base/err.h"

/* Ranks kept apart (the simulator's TREE_RANKS_MAX) and depths estimated
 * (its TREE_ROWS_MAX). */
#define ACCRANK_K_MAX 32
#define ACCRANK_D_MAX 16

/* The rank of token tok in row (vocab logits): how many tokens come
 * before it in the draft's order, capped at cap. The order is
 * spec_argmax's: larger logit first, equal logits by lower index, a NaN
 * after every number; so rank 0 iff spec_argmax(row) == tok. */
int accrank_rank(const float *row, int vocab, int32_t tok, int cap);

/* One text's ranks, r[0 .. n) each in 0 .. k (k: not among the top k). */
typedef struct accrank_stream {
    const uint8_t *r;
    int n;
    const char *label;   /* its `# request:` line (may be NULL) */
} accrank_stream_t;

typedef struct accrank_est {
    int k, width, depth;
    long blocks;                                /* complete blocks */
    long accepted;                              /* their accepted drafts */
    long reached[ACCRANK_D_MAX];                /* blocks reaching depth d + 1 */
    long n[ACCRANK_D_MAX][ACCRANK_K_MAX + 1];   /* of those, rank r there (k: none) */
} accrank_est_t;

/* Counts the complete blocks of a tree of `width` (1 .. k) at every depth,
 * `depth` deep (1 .. ACCRANK_D_MAX), over ranks capped at k
 * (1 .. ACCRANK_K_MAX). */
void accrank_estimate(const accrank_stream_t *st, int ns, int k, int width, int depth,
                      accrank_est_t *e);
/* p_{r+1}(d + 1) = n[d][r] / reached[d] and its standard error
 * sqrt(p(1 − p)/reached[d]) (NAN when no block reached depth d + 1). */
double accrank_p(const accrank_est_t *e, int d, int r);
double accrank_se(const accrank_est_t *e, int d, int r);

/* The rank stream: the header lines (each after "# "), `# format: ranks
 * K`, then per text `# request: LABEL` and its ranks, 32 a line. 0, or -1
 * on a write error. */
int accrank_write_ranks(FILE *f, const char *const *header, int nh, int k,
                        const accrank_stream_t *st, int ns);
/* The profile a scenario names (`acceptance: {model: tree, profile:
 * PATH}`, docs/formats.md "Tree acceptance profiles"): the header lines,
 * `# format: tree-profile`, then one line per depth reached by some
 * block, p_1 .. p_k, each rounded down to 6 decimals so that no row sums
 * above 1, with the depth's counts and standard errors in a comment
 * before it. 0, or -1 on a write error. */
int accrank_write_profile(FILE *f, const char *const *header, int nh,
                          const accrank_est_t *e);

struct tree;   /* sim/model/tree.h */

/* The rank streams replayed against one token tree t: each block walks
 * from the root to the child of rank r + 1 while the rank r at its depth
 * has such a child (greedy verification's accepted path), ending at the
 * first rank the node has no child for (consumed, as a rejection) or at a
 * leaf (a whole block); blocks cut as accrank_estimate cuts them. The
 * tree's truth on these texts, with no model of how ranks at successive
 * depths depend on each other. Precondition: no node of t has more than K
 * children (K the streams' rank cap), since rank K means only "not among
 * the first K" and is no child; the caller checks it (llm accept refuses
 * branching factors above K). */
typedef struct accrank_replay {
    long blocks;
    double mean, se;     /* accepted drafts per complete block, its standard error */
} accrank_replay_t;
void accrank_replay_tree(const accrank_stream_t *st, int ns, const struct tree *t,
                         accrank_replay_t *out);

/* A rank stream read back (accrank_read): its cap k, streams (one per
 * `# request` line; ranks before the first one, if any, a stream of their
 * own), and the comment lines before the first `# request` other than the
 * format directive and its explanation, without "#" and leading blanks. */
typedef struct accrank_file {
    int k;
    accrank_stream_t *st;
    int ns;
    uint8_t *r;          /* every stream's ranks, one after another */
    char **label, **header;
    int nh;
} accrank_file_t;

/* Reads a file accrank_write_ranks wrote. 0, or -1 with err (ERR_INPUT
 * "PATH:LINE: what": no `# format: ranks K` before the data, a value that
 * is not an integer 0 .. K, no rank at all). */
int accrank_read(const char *path, accrank_file_t *f, err_t *err);
void accrank_file_free(accrank_file_t *f);

#endif
