/* accept_tree — Sequoia's acceptance of a token tree (Chen et al. 2024):
 * at each accepted node (the root, the last committed token, is accepted)
 * the child of rank k is the accepted one with probability p_k, at most
 * one child is accepted, and none with 1 − Σ_{k <= children} p_k; a node
 * without a child of rank k cannot accept one. p may differ by depth (one
 * row per depth of the children, the last repeating: tree_probs_t). The
 * block's accepted length a is the depth of the accepted root path. So a
 * node is on the accepted path with the product of the p's of the ranks
 * along its root path, and
 *   E[a] = Σ over nodes of that product        (tree_expected_depth).
 * A chain (every node one child) accepts each draft with p_1 (of its
 * depth): the iid model with alpha = p_1 when p has one row, the
 * positional model with alphas = the rows' p_1 otherwise.
 *
 * The draw walks the tree with the iid model's primitive: a run of first
 * choices (rank 1 at each node, down the rank-1 chain) over depths of one
 * p_1 is a truncated geometric of that p_1 drawn from one uniform
 * (accept_geo_draw); where the run stops short, at a node with more than
 * one child, one more uniform picks among ranks 2, 3, ... (p_k / (1 − p_1)
 * each, given rank 1 failed) or none, and a new run starts below the
 * picked child. A node with one child draws nothing more. With one row of
 * p a chain is therefore one run, one uniform per block, the same uniform
 * of the same stream as iid's: the tree [1, 1, 1, 1] under p = [alpha] and
 * the chain of gamma 4 under iid alpha make the same decisions
 * (tests/cli/tree.sh compares their traces).
 *
 * The rows may come from a profile file instead (`profile: PATH`, docs/
 * formats.md "Tree acceptance profiles"): one line of p per depth, as
 * `build/llm accept --ranks` writes what it measured on a real draft and
 * target (kernels/llm/accrank.h). A scenario gives `p` or `profile`, not
 * both; `check` writes back what was given (the profile by its absolute
 * path, as acceptance traces are).
 */
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/accept.h"
#include "model/tree.h"
#include "engine/rng.h"
#include "io/infile.h"
#include "io/keytab.h"
#include "io/textline.h"

/* Σ p up to rounding of the values as written. */
#define TREE_SUM_SLACK 1e-12

typedef struct tree_par {
    tree_probs_t pr;
    int p_given;                     /* `p` was given (written back only then) */
    char profile[KEYTAB_PATH_MAX];   /* the profile read ("": none) */
} tree_par_t;

_Static_assert(sizeof(accept_geo_t) <= ACCEPT_STATE_BYTES, "tree state too large");

/* One row of probabilities (a list of numbers) into row; errors at the
 * value as written. */
static int tree_parse_row(keytab_ctx_t *c, const ynode_t *node, const char *key,
                          double *row, int *np)
{
    if (node->kind != YNODE_SEQ)
        return keytab_err(c, node, key, "expected a list of probabilities per child "
                          "rank (e.g. [0.5, 0.2, 0.1]), got %s", ynode_kind_name(node));
    if (node->n == 0) return keytab_err(c, node, key, "the list is empty");
    if (node->n > TREE_RANKS_MAX)
        return keytab_err(c, node, key, "%zu ranks, more than %d", node->n,
                          TREE_RANKS_MAX);
    keytab_key_t num = {.name = "p", .type = KT_NUM, .unit = UNIT_NUMBER, .min = 0,
                        .max = 1};
    double sum = 0;
    for (size_t i = 0; i < node->n; i++) {
        char ik[KEYTAB_KEY_MAX], idx[24];
        snprintf(idx, sizeof idx, "%zu", i);
        keytab_join(ik, key, idx);
        if (keytab_parse_number(c, node->items[i], ik, &num, &row[i]) != 0) return -1;
        sum += row[i];
    }
    if (sum > 1 + TREE_SUM_SLACK)
        return keytab_err(c, node, key, "the probabilities sum to %g, more than 1 (at "
                          "most one child is accepted)", sum);
    *np = (int)node->n;
    return 0;
}

/* `p`: a list of probabilities per rank (every depth), or a list of such
 * lists, one per depth of the children (the last repeating). */
static int tree_parse_p(keytab_ctx_t *c, const ynode_t *node, const char *key,
                        const keytab_key_t *k, void *base)
{
    tree_probs_t *pr = (tree_probs_t *)((char *)base + k->off);
    if (node->kind != YNODE_SEQ || node->n == 0 || node->items[0]->kind != YNODE_SEQ) {
        pr->nrows = 1;
        return tree_parse_row(c, node, key, pr->p[0], &pr->np[0]);
    }
    if (node->n > TREE_ROWS_MAX)
        return keytab_err(c, node, key, "%zu depths, more than %d (the last row "
                          "repeats below)", node->n, TREE_ROWS_MAX);
    for (size_t d = 0; d < node->n; d++) {
        char dk[KEYTAB_KEY_MAX], idx[24];
        snprintf(idx, sizeof idx, "%zu", d);
        keytab_join(dk, key, idx);
        if (tree_parse_row(c, node->items[d], dk, pr->p[d], &pr->np[d]) != 0) return -1;
    }
    pr->nrows = (int)node->n;
    return 0;
}

static int tree_write_row(FILE *f, const double *row, int np)
{
    if (fputc('[', f) == EOF) return -1;
    for (int i = 0; i < np; i++) {
        /* The shortest of 15 or 17 digits that reads back as row[i]. */
        char buf[32];
        snprintf(buf, sizeof buf, "%.15g", row[i]);
        if (strtod(buf, NULL) != row[i]) snprintf(buf, sizeof buf, "%.17g", row[i]);
        if (fprintf(f, "%s%s", i ? ", " : "", buf) < 0) return -1;
    }
    return fputc(']', f) == EOF ? -1 : 0;
}

static int tree_write_p(FILE *f, const keytab_key_t *k, const void *base, int indent)
{
    (void)indent;
    const tree_probs_t *pr = (const tree_probs_t *)((const char *)base + k->off);
    if (fputc(' ', f) == EOF) return -1;
    if (pr->nrows == 1) {
        if (tree_write_row(f, pr->p[0], pr->np[0]) != 0) return -1;
    } else {
        if (fputc('[', f) == EOF) return -1;
        for (int d = 0; d < pr->nrows; d++)
            if ((d && fputs(", ", f) == EOF) || tree_write_row(f, pr->p[d], pr->np[d]) != 0)
                return -1;
        if (fputc(']', f) == EOF) return -1;
    }
    return fputc('\n', f) == EOF ? -1 : 0;
}

/* --- profiles ------------------------------------------------------------ */

/* Numbers of one profile line. */
#define PROFILE_LINE_MAX 4096

typedef struct profile_rd {
    keytab_ctx_t *c;
    const char *key, *src;
    tree_probs_t *pr;
} profile_rd_t;

static int prof_err(profile_rd_t *r, int line, int col, const char *fmt, const char *what)
{
    ynode_t at = {.src = r->src, .line = line, .col = col};
    return keytab_err(r->c, &at, r->key, fmt, what);
}

/* `# format: ...` must name this format (a trace given here by mistake
 * says `positions`); other comments are free text. */
static int prof_comment(profile_rd_t *r, const char *q, int line, int col)
{
    const char *b = q + 1 + strspn(q + 1, " \t");
    if (strncmp(b, "format:", 7) != 0) return 0;
    b += 7 + strspn(b + 7, " \t");
    if (!strncmp(b, "tree-profile", 12) && !b[12 + strspn(b + 12, " \t")]) return 0;
    return prof_err(r, line, col, "'# format: %.40s': a tree profile says "
                    "'# format: tree-profile'", b);
}

/* One depth's line: 1 .. TREE_RANKS_MAX probabilities, summing to at most 1. */
static int prof_row(profile_rd_t *r, char *q, int line, int col0)
{
    tree_probs_t *pr = r->pr;
    if (pr->nrows == TREE_ROWS_MAX)
        return prof_err(r, line, col0, "%s", "more than 16 depths (the last row "
                        "repeats below)");
    int d = pr->nrows, n = 0;
    double sum = 0;
    for (char *p = q; *p;) {
        char *end;
        int col = col0 + (int)(p - q);
        double v = strtod(p, &end);
        if (end == p || (*end && *end != ' ' && *end != '\t') || !(v >= 0 && v <= 1)) {
            char tok[64];
            snprintf(tok, sizeof tok, "%.*s", (int)strcspn(p, " \t"), p);
            return prof_err(r, line, col, "'%s' is not a probability in [0, 1]", tok);
        }
        if (n == TREE_RANKS_MAX)
            return prof_err(r, line, col, "%s", "more than 32 ranks on one depth");
        pr->p[d][n++] = v;
        sum += v;
        p = end + strspn(end, " \t");
    }
    if (sum > 1 + TREE_SUM_SLACK) {
        char s[32];
        snprintf(s, sizeof s, "%g", sum);
        return prof_err(r, line, col0, "the probabilities sum to %s, more than 1 (at most "
                        "one child is accepted)", s);
    }
    pr->np[d] = n;
    pr->nrows++;
    return 0;
}

static int prof_text(profile_rd_t *r, char *text)
{
    textline_t it;
    textline_init(&it, text);
    int col;
    for (char *q; (q = textline_next(&it, &col)) != NULL;) {
        int line = it.line;
        size_t l = strlen(q);
        if (!*q) continue;
        if (l > PROFILE_LINE_MAX) return prof_err(r, line, col, "%s", "too long a line");
        if ((*q == '#' ? prof_comment(r, q, line, col) : prof_row(r, q, line, col)) != 0)
            return -1;
    }
    return 0;
}

static int tree_parse_profile(keytab_ctx_t *c, const ynode_t *node, const char *key,
                              const keytab_key_t *k, void *base)
{
    (void)k;
    tree_par_t *t = base;
    if (node->kind != YNODE_SCALAR)
        return keytab_err(c, node, key, "expected a file path, got %s", ynode_kind_name(node));
    if (t->p_given)
        return keytab_err(c, node, key, "give p or profile, not both");
    char *text;
    size_t len;
    if (keytab_read_data_file(c, node, key, t->profile, sizeof t->profile, &text, &len) != 0)
        return -1;
    tree_probs_t pr = {0};
    profile_rd_t r = {c, key, t->profile, &pr};
    int nl, nc, rc;
    if (infile_find_nul(text, len, &nl, &nc)) rc = prof_err(&r, nl, nc, "%s", INFILE_NUL_WHY);
    else rc = prof_text(&r, text);
    free(text);
    if (rc == 0 && pr.nrows == 0)
        rc = keytab_err(c, node, key, "profile '%s' holds no row of probabilities", t->profile);
    if (rc == 0) t->pr = pr;
    return rc;
}

static int tree_write_profile(FILE *f, const keytab_key_t *k, const void *base, int indent)
{
    (void)k;
    (void)indent;
    if (fputc(' ', f) == EOF || keytab_write_path(f, ((const tree_par_t *)base)->profile) != 0)
        return -1;
    return fputc('\n', f) == EOF ? -1 : 0;
}

/* Neither key is required on its own: one of them is (tree_check). `p` is
 * written back only when given, `profile` only when not empty. */
static const keytab_key_t TREE_KEYS[] = {
    {.name = "p", KEYTAB_CUSTOM(tree_par_t, pr, tree_probs_t), .parse = tree_parse_p,
     .write = tree_write_p, .flags = KF_HAS, .aux = KEYTAB_OFF(tree_par_t, p_given, int)},
    {.name = "profile", .type = KT_CUSTOM, .off = KEYTAB_CHARS(tree_par_t, profile),
     .parse = tree_parse_profile, .write = tree_write_profile, .flags = KF_SKIPEMPTY,
     .aux = KEYTAB_CHARS(tree_par_t, profile)},
    {.name = NULL}};

static int tree_check(const void *par, err_t *err)
{
    const tree_probs_t *pr = &((const tree_par_t *)par)->pr;
    if (pr->nrows == 0)
        return err_set(err, ERR_INPUT, "acceptance: the tree model needs p (probabilities "
                       "per child rank) or profile (a file of them per depth)");
    if (pr->nrows < 1 || pr->nrows > TREE_ROWS_MAX)
        return err_set(err, ERR_INPUT, "acceptance.p: give 1 to %d rows", TREE_ROWS_MAX);
    for (int d = 0; d < pr->nrows; d++) {
        double sum = 0;
        if (pr->np[d] < 1 || pr->np[d] > TREE_RANKS_MAX)
            return err_set(err, ERR_INPUT, "acceptance.p: give 1 to %d probabilities "
                           "per depth", TREE_RANKS_MAX);
        for (int i = 0; i < pr->np[d]; i++) {
            if (!(pr->p[d][i] >= 0.0 && pr->p[d][i] <= 1.0))
                return err_set(err, ERR_INPUT, "acceptance.p: %g is outside [0, 1]",
                               pr->p[d][i]);
            sum += pr->p[d][i];
        }
        if (sum > 1 + TREE_SUM_SLACK)
            return err_set(err, ERR_INPUT, "acceptance.p: the probabilities sum to %g, "
                           "more than 1", sum);
    }
    return 0;
}

static int tree_init(void *st, const void *par, const accept_seat_t *seat, err_t *err)
{
    (void)seat;
    (void)err;
    accept_geo_set(st, tree_probs_at(&((const tree_par_t *)par)->pr, 1, 1));
    return 0;
}

/* Rank-1 acceptances along a run of m first choices whose children lie at
 * depths d0 + 1 .. d0 + m: one truncated geometric per stretch of equal
 * p_1 (one stretch when p has one row), stopping at the first rejection. */
static int tree_run(accept_geo_t *g, const tree_probs_t *pr, gsl_rng *r, int d0, int m)
{
    int k = 0;
    while (k < m) {
        double p1 = tree_probs_at(pr, d0 + k + 1, 1);
        int len = 1;
        while (k + len < m && tree_probs_at(pr, d0 + k + len + 1, 1) == p1) len++;
        if (g->alpha != p1) accept_geo_set(g, p1);
        int got = accept_geo_draw(g, r, len);
        k += got;
        if (got < len) break;
    }
    return k;
}

/* A chain of gamma drafts: one run of first choices (see the top). */
static int tree_draw_chain(void *st, const void *par, gsl_rng *r, int gamma)
{
    return tree_run(st, &((const tree_par_t *)par)->pr, r, 0, gamma);
}

/* The child picked at node v (-1: the root) whose rank-1 child was
 * rejected: ranks 2 .. its children with p_k / (1 − p_1), else none (-1).
 * Draws one uniform only when v has a second child. */
static int tree_pick_other(const tree_probs_t *pr, const tree_t *t, int v, gsl_rng *r)
{
    int nc = v < 0 ? t->root_children : t->nchild[v];
    int d = v < 0 ? 1 : t->level[v] + 1;   /* the children's depth */
    double q = 1 - tree_probs_at(pr, d, 1);
    if (nc < 2 || !(q > 0)) return -1;
    double u = rng_uniform(r) * q, c = 0;
    for (int k = 2; k <= nc; k++) {
        c += tree_probs_at(pr, d, k);
        if (u < c) return (v < 0 ? 0 : t->child0[v]) + k - 1;
    }
    return -1;
}

static int tree_draw_tree(void *st, const void *par, gsl_rng *r, const tree_t *t,
                          int *whole)
{
    const tree_probs_t *pr = &((const tree_par_t *)par)->pr;
    int v = -1, a = 0;
    *whole = 0;
    for (;;) {
        int m = tree_first_run(t, v);
        if (m == 0) return a;
        int k = tree_run(st, pr, r, a, m);
        for (int j = 0; j < k; j++) v = v < 0 ? 0 : t->child0[v];
        *whole = a == 0 && k == m;   /* the first run, to its end */
        a += k;
        if (k == m) return a;
        int w = tree_pick_other(pr, t, v, r);
        if (w < 0) return a;
        v = w;
        a++;
    }
}

static double tree_mean(const void *par, int gamma)
{
    (void)gamma;
    return tree_probs_at(&((const tree_par_t *)par)->pr, 1, 1);
}

/* A chain: draft i accepted with p_1 of depth i (positional). */
static int tree_law(const void *par, int gamma, accept_law_t *L, err_t *err)
{
    const tree_probs_t *pr = &((const tree_par_t *)par)->pr;
    double first[TREE_ROWS_MAX];
    for (int d = 0; d < pr->nrows; d++) first[d] = tree_probs_at(pr, d + 1, 1);
    if (accept_law_init(L, 1, 1, gamma, err) != 0) return -1;
    accept_law_positional(L, 0, first, pr->nrows);
    return 0;
}

/* P(a = d) = P(a >= d) − P(a >= d + 1), P(a >= d) the sum over the nodes
 * of depth d of their root paths' products (tree_expected_depth); the
 * whole rank-1 chain (full: the product of p_1 down it) is taken out of
 * its depth's outcome (accept_law_t.full_len). */
static int tree_law_tree(const void *par, const tree_t *t, accept_law_t *L, err_t *err)
{
    const tree_probs_t *pr = &((const tree_par_t *)par)->pr;
    double at_least[TREE_NODES_MAX + 2];
    if (accept_law_init(L, 1, 1, t->depth + 1, err) != 0) return -1;
    tree_expected_depth(t, pr, at_least);
    at_least[t->depth + 1] = 0;
    double whole = 1;   /* multiplied as tree_expected_depth does: exact */
    for (int d = 1; d <= t->first_len; d++) whole *= tree_probs_at(pr, d, 1);
    for (int d = 0; d <= t->depth; d++)
        *accept_law_rej(L, 0, 0, d, 0) =
            at_least[d] - at_least[d + 1] - (d == t->first_len ? whole : 0);
    L->full_len = t->first_len;
    L->part[0].full[0][0] = whole;
    return 0;
}

static const tree_probs_t *tree_probs_of(const void *par)
{
    return &((const tree_par_t *)par)->pr;
}

const accept_model_t accept_tree_model = {
    .name = "tree",
    .keys = TREE_KEYS,
    .par_size = sizeof(tree_par_t),
    .need_any = {"p", "profile", NULL},
    .check = tree_check,
    .init = tree_init,
    .draw = tree_draw_chain,
    .mean = tree_mean,
    .law = tree_law,
    .draw_tree = tree_draw_tree,
    .law_tree = tree_law_tree,
    .tree_probs = tree_probs_of,
};
