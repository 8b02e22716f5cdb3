/* test_tree — token trees (sim/model/tree.c), their acceptance model
 * (sim/model/accept_tree.c) and sync's closed form with a tree, against
 * values counted and derived by hand in the comments.
 *
 * The running example: branching [3, 2, 1] (3 + 3·2 + 6·1 = 15 nodes,
 * depth 3) under p = [0.5, 0.2, 0.1]. Depth 1: ranks 1, 2, 3, products
 * 0.5 + 0.2 + 0.1 = 0.8 = P(a >= 1). Depth 2: each depth-1 node's ranks 1
 * and 2, so (0.5 + 0.2)·0.8 = 0.56 = P(a >= 2). Depth 3: one child (rank
 * 1) each, 0.5·0.56 = 0.28 = P(a >= 3). E[a] = 0.8 + 0.56 + 0.28 = 1.64;
 * with the bonus token E[a + 1] = 2.64. The law: P(a = 0) = 0.2,
 * P(1) = 0.24, P(2) = 0.28, P(3) = 0.28; E[a²] = 0.24 + 4·0.28 + 9·0.28 =
 * 3.88, Var[a] = 3.88 − 1.64² = 1.1904.
 */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include <gsl/gsl_cdf.h>

#include "check.h"
#include "config/scenario.h"
#include "model/accept.h"
#include "model/service.h"
#include "model/tree.h"
#include "run/analytic.h"
#include "run/sim.h"
#include "stat/metrics.h"

static const double P321[] = {0.5, 0.2, 0.1};
static const double LAW321[] = {0.2, 0.24, 0.28, 0.28};
#define E321 1.64
#define VAR321 1.1904

/* One row of probabilities for every depth. */
static tree_probs_t probs1(const double *p, int n)
{
    tree_probs_t pr = {.nrows = 1};
    pr.np[0] = n;
    for (int k = 0; k < n; k++) pr.p[0][k] = p[k];
    return pr;
}

static void build_321(tree_t *t)
{
    err_t e;
    int b[] = {3, 2, 1};
    CHECK(tree_from_branching(t, b, 3, &e) == 0);
}

/* [3, 2, 1]: 15 nodes, widths 3, 6, 6; nodes 0-2 are the root's children
 * ranks 1-3; node 3 (first of depth 2) is node 0's rank-1 child, node 4
 * its rank-2; node 9 (first of depth 3) is node 3's only child. */
static void test_branching_shape(void)
{
    tree_t t;
    build_321(&t);
    CHECK(t.n == 15 && t.depth == 3 && t.root_children == 3);
    CHECK(t.width[0] == 3 && t.width[1] == 6 && t.width[2] == 6);
    CHECK(t.parent[0] == -1 && t.rank[2] == 3 && t.level[2] == 1);
    CHECK(t.parent[3] == 0 && t.rank[3] == 1 && t.parent[4] == 0 && t.rank[4] == 2);
    CHECK(t.parent[5] == 1 && t.parent[8] == 2 && t.level[8] == 2);
    CHECK(t.parent[9] == 3 && t.nchild[3] == 1 && t.child0[3] == 9 && t.level[14] == 3);
    CHECK(tree_first_run(&t, -1) == 3 && tree_first_run_end(&t, -1) == 9);
}

/* parents [-1, 0, -1, 1, 2] as listed: a = root's rank 1, b = a's child,
 * c = root's rank 2, d = b's child, e = c's child. Level by level: a, c |
 * b (of a), e (of c) | d (of b): parents -1, -1, 0, 1, 2, widths 2, 2, 1. */
static void test_parents_canonical(void)
{
    tree_t t;
    err_t e;
    int p[] = {-1, 0, -1, 1, 2};
    CHECK(tree_from_parents(&t, p, 5, &e) == 0);
    CHECK(t.n == 5 && t.depth == 3 && t.root_children == 2);
    int want[] = {-1, -1, 0, 1, 2};
    for (int i = 0; i < 5; i++) CHECK(t.parent[i] == want[i]);
    CHECK(t.width[0] == 2 && t.width[1] == 2 && t.width[2] == 1);
    CHECK(t.rank[1] == 2 && t.rank[3] == 1);
    /* E under p = [0.6, 0.3]: a 0.6, c 0.3, b 0.36, e 0.18, d 0.216. */
    const double pp[] = {0.6, 0.3};
    tree_probs_t pr = probs1(pp, 2);
    CHECK_ABS(tree_expected_depth(&t, &pr, NULL), 0.6 + 0.3 + 0.36 + 0.18 + 0.216,
              1e-12);
}

static void test_bad_shapes(void)
{
    tree_t t;
    err_t e;
    int zero[] = {2, 0};
    CHECK(tree_from_branching(&t, zero, 2, &e) < 0 && e.code == ERR_INPUT);
    CHECK(strstr(e.msg, "branching.1") != NULL);
    int big[] = {8, 8, 8};   /* 8 + 64 + 512 > 128 */
    CHECK(tree_from_branching(&t, big, 3, &e) < 0 && strstr(e.msg, "128") != NULL);
    int fwd[] = {-1, 2, 0};  /* node 1's parent after it */
    CHECK(tree_from_parents(&t, fwd, 3, &e) < 0 && strstr(e.msg, "parents.1") != NULL);
    int ok[] = {2, 2, 2, 2, 2, 2};   /* 2 + 4 + ... + 64 = 126 <= 128 */
    CHECK(tree_from_branching(&t, ok, 6, &e) == 0 && t.n == 126);
}

static void test_expected_and_law(void)
{
    tree_t t;
    build_321(&t);
    double ge[5];
    tree_probs_t pr = probs1(P321, 3);
    CHECK_ABS(tree_expected_depth(&t, &pr, ge), E321, 1e-12);
    CHECK_ABS(ge[0], 1, 1e-15);
    CHECK_ABS(ge[1], 0.8, 1e-12);
    CHECK_ABS(ge[2], 0.56, 1e-12);
    CHECK_ABS(ge[3], 0.28, 1e-12);
    accept_cfg_t c;
    err_t e;
    CHECK(accept_cfg_parse(&c, "{model: tree, p: [0.5, 0.2, 0.1]}", &e) == 0);
    accept_law_t L;
    CHECK(accept_cfg_law_tree(&c, &t, &L, &e) == 0);
    /* The tree's shape of law: outcomes a = 0 .. 3 besides the whole
     * rank-1 chain (nodes 0, 3, 9: 0.5³ = 0.125), which commits 3. */
    CHECK(L.gamma == 4 && L.full_len == 3);
    CHECK_ABS(L.part[0].full[0][0], 0.125, 1e-15);
    CHECK_ABS(*accept_law_rej(&L, 0, 0, 3, 0), 0.28 - 0.125, 1e-12);
    for (int k = 0; k <= 3; k++) CHECK_ABS(accept_law_p(&L, 0, k), LAW321[k], 1e-12);
    accept_law_fini(&L);
    accept_cfg_fini(&c);
}

/* budget 5, top_k 3 under p = [0.5, 0.2, 0.1], best first: A = root's
 * rank 1 (0.5); then A's rank 1, B (0.25, beats the root's rank 2, 0.2);
 * then the root's rank 2, C (0.2); then B's rank 1, D (0.125); then, of
 * three candidates at 0.1 (A's rank 2, depth 2; the root's rank 3, depth
 * 1; C's rank 1, depth 2), the shallowest: E = the root's rank 3. E[a] =
 * 0.5 + 0.25 + 0.2 + 0.125 + 0.1 = 1.175; canonical: roots A, C, E, then
 * B (of A), then D (of B). No other 5-node tree does better: its nodes
 * would have to include a node of probability below 0.1 in place of one of
 * these (the five largest path probabilities). top_k 1 gives the chain. */
static void test_budget(void)
{
    tree_t t;
    memset(&t, 0, sizeof t);
    t.given = TREE_BUDGET;
    t.nspec = 2;
    t.spec[0] = 5;
    t.spec[1] = 3;
    tree_probs_t pr = probs1(P321, 3);
    tree_from_budget(&t, &pr);
    CHECK(t.n == 5 && t.depth == 3 && t.root_children == 3 && t.built);
    int want[] = {-1, -1, -1, 0, 3};
    for (int i = 0; i < 5; i++) CHECK(t.parent[i] == want[i]);
    CHECK_ABS(tree_expected_depth(&t, &pr, NULL), 1.175, 1e-12);
    CHECK(t.given == TREE_BUDGET && t.spec[0] == 5 && t.spec[1] == 3);
    t.spec[1] = 1;
    tree_from_budget(&t, &pr);
    CHECK(t.n == 5 && t.depth == 5 && t.first_len == 5);
}

/* The same budget and p with depth: 2. A (0.5), B = A's rank 1 (0.25),
 * C = the root's rank 2 (0.2) as above; B's rank 1 (0.125) would be at
 * depth 3, so it never opens. Three candidates at 0.1 remain: the root's
 * rank 3 (depth 1) goes first, the shallowest: E; then A's rank 2 and
 * C's rank 1 (both depth 2), A's the earlier parent: F. E[a] = 0.5 +
 * 0.25 + 0.2 + 0.1 + 0.1 = 1.15; canonical: roots A, C, E, then A's
 * children B, F (ranks 1, 2). */
static void test_budget_depth(void)
{
    tree_t t;
    memset(&t, 0, sizeof t);
    t.given = TREE_BUDGET;
    t.nspec = 3;
    t.spec[0] = 5;
    t.spec[1] = 3;
    t.spec[2] = 2;
    tree_probs_t pr = probs1(P321, 3);
    tree_from_budget(&t, &pr);
    CHECK(t.n == 5 && t.depth == 2 && t.root_children == 3);
    CHECK(t.width[0] == 3 && t.width[1] == 2);
    int want[] = {-1, -1, -1, 0, 0};
    for (int i = 0; i < 5; i++) CHECK(t.parent[i] == want[i]);
    CHECK(t.rank[3] == 1 && t.rank[4] == 2);
    CHECK_ABS(tree_expected_depth(&t, &pr, NULL), 1.15, 1e-12);
    CHECK(t.nspec == 3 && t.spec[0] == 5 && t.spec[1] == 3 && t.spec[2] == 2);
}

/* The shape keys as the loader reads them. {depth: 3, width: 2} is the
 * tree [2, 2, 2]: 2 + 4 + 8 = 14 nodes, gamma 14. {budget: 5, top_k: 3,
 * depth: 2} is test_budget_depth's tree (built from acceptance.p). Too
 * many nodes: width 3 over depth 5 is 3 + 9 + 27 + 81 + 243 = 363 > 128;
 * a budget of 7 in depth 2 with top_k 2 exceeds its 2 + 4 = 6 places. */
static tree_t load_tree(const char *tree, err_t *e, int *rc)
{
    char y[512];
    snprintf(y, sizeof y, "name: shape\nprotocol: {mode: sync, tree: %s}\n"
             "acceptance: {model: tree, p: [0.5, 0.2, 0.1]}\n", tree);
    scenario_t s;
    tree_t t;
    memset(&t, 0, sizeof t);
    *rc = scenario_load_string("shape", y, NULL, 0, &s, e);
    if (*rc == 0) {
        t = s.protocol.tree;
        CHECK(s.protocol.gamma == t.n);
        scenario_fini(&s);
    }
    return t;
}

static void test_shape_keys(void)
{
    err_t e;
    int rc;
    tree_t t = load_tree("{depth: 3, width: 2}", &e, &rc);
    CHECK(rc == 0 && t.n == 14 && t.depth == 3 && t.given == TREE_BRANCHING);
    CHECK(t.width[0] == 2 && t.width[1] == 4 && t.width[2] == 8);
    t = load_tree("{budget: 5, top_k: 3, depth: 2}", &e, &rc);
    CHECK(rc == 0 && t.n == 5 && t.depth == 2 && t.root_children == 3);
    t = load_tree("{depth: 5, width: 3}", &e, &rc);
    CHECK(rc < 0 && e.code == ERR_INPUT && strstr(e.msg, "protocol.tree.width") != NULL);
    t = load_tree("{budget: 7, top_k: 2, depth: 2}", &e, &rc);
    CHECK(rc < 0 && strstr(e.msg, "protocol.tree.budget") != NULL &&
          strstr(e.msg, "at most 6") != NULL);
    t = load_tree("{width: 2}", &e, &rc);
    CHECK(rc < 0 && strstr(e.msg, "protocol.tree.width") != NULL);
    t = load_tree("{branching: [2], depth: 2}", &e, &rc);
    CHECK(rc < 0 && strstr(e.msg, "protocol.tree.depth") != NULL);
    t = load_tree("{depth: 2, width: 0}", &e, &rc);
    CHECK(rc < 0 && strstr(e.msg, "protocol.tree.width") != NULL);
}

/* p per depth: [3, 2, 1] under rows [0.5, 0.2, 0.1] (the root's
 * children), [0.6, 0.3] (depth 2), [0.4] (depth 3). P(a >= 1) = 0.8,
 * P(a >= 2) = 0.8·0.9 = 0.72, P(a >= 3) = 0.72·0.4 = 0.288: E[a] = 1.808;
 * P(a = 0..3) = 0.2, 0.08, 0.432, 0.288; the whole rank-1 chain
 * 0.5·0.6·0.4 = 0.12. The loader reads the rows from YAML; analytic and
 * draws agree with the hand law. */
static void test_per_depth(void)
{
    tree_t t;
    build_321(&t);
    accept_cfg_t c;
    err_t e;
    CHECK(accept_cfg_parse(&c, "{model: tree, p: [[0.5, 0.2, 0.1], [0.6, 0.3], [0.4]]}",
                           &e) == 0);
    accept_law_t L;
    const double law[] = {0.2, 0.08, 0.432, 0.288};
    CHECK(accept_cfg_law_tree(&c, &t, &L, &e) == 0);
    for (int k = 0; k <= 3; k++) CHECK_ABS(accept_law_p(&L, 0, k), law[k], 1e-12);
    CHECK_ABS(L.part[0].full[0][0], 0.12, 1e-15);
    accept_law_fini(&L);
    accept_t a;
    CHECK(accept_init(&a, &c, 21, 0, 2, &e) == 0);
    const int N = 400000;
    long count[4] = {0}, wholes = 0;
    for (int i = 0; i < N; i++) {
        int w, d = accept_draw_tree(&a, &t, &w);
        if (d < 0 || d > 3) { CHECK(0); break; }
        count[d]++;
        wholes += w;
    }
    for (int k = 0; k <= 3; k++)
        CHECK_ABS((double)count[k] / N, law[k], 4 * sqrt(law[k] * (1 - law[k]) / N));
    CHECK_ABS((double)wholes / N, 0.12, 4 * sqrt(0.12 * 0.88 / N));
    accept_fini(&a);
    /* A chain under rows: positional with the rows' first p, the last
     * repeating: P(a >= 2) of 4 drafts = 0.5·0.6, P(a = 4) = 0.5·0.6·0.4². */
    CHECK(accept_cfg_law(&c, 4, &L, &e) == 0);
    CHECK_ABS(accept_law_p(&L, 0, 4), 0.5 * 0.6 * 0.4 * 0.4, 1e-15);
    CHECK_ABS(accept_law_p(&L, 0, 1), 0.5 * 0.4, 1e-15);
    accept_law_fini(&L);
    accept_cfg_fini(&c);
}

/* Draws against the law: the mean within 4 SE (sd = sqrt(1.1904) over N
 * draws) and each P(a = k) within 4 binomial SE. */
static void test_draws(void)
{
    tree_t t;
    build_321(&t);
    accept_cfg_t c;
    err_t e;
    CHECK(accept_cfg_parse(&c, "{model: tree, p: [0.5, 0.2, 0.1]}", &e) == 0);
    accept_t a;
    CHECK(accept_init(&a, &c, 5, 0, 0, &e) == 0);
    const int N = 400000;
    long count[4] = {0}, wholes = 0;
    double sum = 0;
    for (int i = 0; i < N; i++) {
        int w = -1, d = accept_draw_tree(&a, &t, &w);
        CHECK(d >= 0 && d <= 3 && (w == 0 || (w == 1 && d == 3)));
        if (d < 0 || d > 3) break;
        count[d]++;
        wholes += w;
        sum += d;
    }
    /* the whole rank-1 chain: 0.5³ */
    CHECK_ABS((double)wholes / N, 0.125, 4 * sqrt(0.125 * 0.875 / N));
    CHECK_ABS(sum / N, E321, 4 * sqrt(VAR321 / N));
    for (int k = 0; k <= 3; k++)
        CHECK_ABS((double)count[k] / N, LAW321[k],
                  4 * sqrt(LAW321[k] * (1 - LAW321[k]) / N));
    accept_fini(&a);
    accept_cfg_fini(&c);
}

/* A chain as a tree makes iid's decisions: the same stream, one uniform per
 * block (accept_tree.c's top comment), so the same a block by block. */
static void test_chain_is_iid(void)
{
    tree_t t;
    err_t e;
    CHECK(tree_chain(&t, 4, &e) == 0);
    accept_cfg_t ct, ci;
    CHECK(accept_cfg_parse(&ct, "{model: tree, p: [0.7]}", &e) == 0);
    CHECK(accept_cfg_parse(&ci, "{model: iid, alpha: 0.7}", &e) == 0);
    accept_t at, ai;
    CHECK(accept_init(&at, &ct, 9, 1, 3, &e) == 0);
    CHECK(accept_init(&ai, &ci, 9, 1, 3, &e) == 0);
    int same = 1;
    for (int i = 0; i < 100000 && same; i++)
    {
        int w, d = accept_draw_tree(&at, &t, &w);
        same = d == accept_draw(&ai, 4) && w == (d == 4);
    }
    CHECK(same);
    accept_fini(&at);
    accept_fini(&ai);
    accept_cfg_fini(&ct);
    accept_cfg_fini(&ci);
}

/* Sync, one tenant, fixed times, tree [3, 2, 1]: a block is drafted in one
 * draft_time per level (3·10 ms), sent (rtt/2), verified at once (5 ms,
 * one tenant), and its verdict returns (rtt/2): every commit gap is
 * B = 30 + 40 + 5 = 75 ms and commits a + 1, E[a + 1] = 2.64. ITL = B/E;
 * Ē over n = R·(duration − warm-up)/B blocks has SE sd(a)/sqrt(n). */
#define TREE_SYNC_YAML                                                          \
    "name: tree-sync\n"                                                         \
    "seed: 3\n"                                                                 \
    "duration: 300s\n"                                                          \
    "warmup: 10s\n"                                                             \
    "replications: 4\n"                                                        \
    "protocol: {mode: sync, tree: {branching: [3, 2, 1]}}\n"                    \
    "acceptance: {model: tree, p: [0.5, 0.2, 0.1]}\n"                           \
    "tenants:\n"                                                                \
    "  count: 1\n"                                                              \
    "  edge: {draft_time: 10ms}\n"                                              \
    "  network: {rtt: 40ms, jitter: none, uplink: inf, downlink: inf,\n"        \
    "            bytes_per_token: 4, overhead_bytes: 64}\n"                     \
    "  workload: {arrival: closed, think: 0s, prompt_tokens: 1, output_tokens: " \
    "100000000}\n"                                                              \
    "cloud:\n"                                                                  \
    "  replicas: 1\n"                                                           \
    "  verify_time: 5ms\n"                                                      \
    "  batching: {policy: continuous, max_batch: 1}\n"

static void test_sync_closed_form(void)
{
    scenario_t s;
    err_t e;
    memset(&s, 0, sizeof s);
    if (scenario_load_string("tree-sync", TREE_SYNC_YAML, NULL, 0, &s, &e) < 0) {
        printf("  load: %s\n", e.msg);
        check_failed_now = 1;
        return;
    }
    CHECK(s.protocol.gamma == 15);
    const double B = 3 * 0.010 + 0.040 + 0.005, E = 1 + E321;
    /* analytic: the same block and E, from the tree's law. */
    analytic_t an;
    CHECK(analytic_compute(&s, &an, &e) == 0);
    CHECK_ABS(an.accepted_len_expected, E, 1e-12);
    CHECK_REL(analytic_value(&an, "block_time_sync_s"), B, 1e-12);
    CHECK_REL(analytic_value(&an, "throughput_sync_tok_s"), E / B, 1e-12);
    /* the simulator within 4 SE of the same E. */
    metrics_summary_t m;
    sim_options_t opt = {.trace = NULL};
    CHECK(sim_run(&s, &opt, &m, &e) == 0);
    double n = 4 * (300.0 - 10.0) / B, se = sqrt(VAR321 / n);
    printf("  tree-sync: E = %.4f, sim %.4f, SE %.4f; ITL want %.6f got %.6f\n", E,
           m.value[METRIC_ACCEPTED_LEN_MEAN], se, B / E, m.value[METRIC_ITL_MEAN]);
    CHECK_ABS(m.value[METRIC_ACCEPTED_LEN_MEAN], E, 4 * se);
    CHECK_REL(m.value[METRIC_ITL_MEAN], B / E, 4 * se / E);
    CHECK_REL(m.value[METRIC_THROUGHPUT], E / B, 4 * se / E);
    /* Every node is uploaded: 15·4 + 64 = 124 bytes a block, E tokens a
     * block; drafts: 15 a block, of which a are kept, so waste = 1 − E[a]/15. */
    CHECK_REL(m.value[METRIC_NET_UP_BYTES_PER_TOK], 124 / E, 4 * se / E);
    CHECK_ABS(m.value[METRIC_DRAFT_WASTE_FRAC], 1 - E321 / 15, 4 * se / 15);
    scenario_fini(&s);
}

/* Async, one tenant, fixed times, window 4, the same tree: the edge sends a
 * block every 3·10 ms = 30 ms, drafting each after the end of the previous
 * block's rank-1 chain; a block accepted along that whole chain (nodes 0,
 * 3, 9: q̄ = 0.5³ = 0.125) commits its 3 drafts, any other a + 1 and rolls
 * back. The verdict of a block is back 40 + 5 = 45 ms after its send <=
 * (4 − 1)·30, so the edge never waits inside a cycle. Renewal-reward over
 * cycles ended by the first block not accepted whole (J ~ geometric,
 * q = 0.875): E[tokens] = (1/q − 1)·3 + E[a + 1; not whole]/q, E[a + 1;
 * not whole] = 1·0.2 + 2·0.24 + 3·0.28 + 4·(0.28 − 0.125) = 2.14, and
 * E[time] = 30 ms/q + 45 ms. Per verdict (every judged block is an
 * independent draw): mean 3·0.125 + 2.14 = 2.515 tokens, E[X²] = 9·0.125
 * + 0.2 + 4·0.24 + 9·0.28 + 16·0.155 = 7.285. The rate's tolerance: 4
 * standard errors from 8 replications (test_closed_form.c's expect_ci). */
static void test_async_closed_form(void)
{
    char y[4096];
    snprintf(y, sizeof y, "%s", TREE_SYNC_YAML);
    char *m1 = strstr(y, "mode: sync"), *r1 = strstr(y, "replications: 4");
    CHECK(m1 && r1);
    if (!m1 || !r1) return;
    memcpy(r1, "replications: 8", 15);
    char rest[4096];
    snprintf(rest, sizeof rest, "%s", m1 + strlen("mode: sync"));
    snprintf(m1, sizeof y - (size_t)(m1 - y), "mode: async, window: 4%s", rest);
    scenario_t s;
    err_t e;
    memset(&s, 0, sizeof s);
    if (scenario_load_string("tree-async", y, NULL, 0, &s, &e) < 0) {
        printf("  load: %s\n", e.msg);
        check_failed_now = 1;
        return;
    }
    const double q = 0.875, rt = 2.14, Bd = 0.030, delay = 0.045;
    const double want = ((1 / q - 1) * 3 + rt / q) / (Bd / q + delay);
    analytic_t an;
    CHECK(analytic_compute(&s, &an, &e) == 0);
    CHECK_REL(analytic_value(&an, "throughput_async_tok_s"), want, 1e-12);
    metrics_summary_t m;
    sim_options_t opt = {.trace = NULL};
    CHECK(sim_run(&s, &opt, &m, &e) == 0);
    double t = gsl_cdf_tdist_Pinv(0.975, m.reps - 1), ci = m.ci95[METRIC_THROUGHPUT];
    printf("  tree-async: rate want %.4f got %.4f (ci95 %.4f); len want 2.515 got %.4f\n",
           want, m.value[METRIC_THROUGHPUT], ci, m.value[METRIC_ACCEPTED_LEN_MEAN]);
    CHECK(m.reps == 8 && ci <= 0.02 * want);
    CHECK_ABS(m.value[METRIC_THROUGHPUT], want, 4 * ci / t);
    double blocks = 8 * (300.0 - 10.0) / (Bd / q + delay) / q;
    double sd = sqrt(7.285 - 2.515 * 2.515);
    CHECK_ABS(m.value[METRIC_ACCEPTED_LEN_MEAN], 2.515, 4 * sd / sqrt(blocks));
    scenario_fini(&s);
}

/* cloud-spec, one tenant, the same tree: the cloud drafts it in 3 steps of
 * cloud.draft_time 2 ms each (one per level, its nodes together), then
 * verifies the 16 tokens in 5 ms; alone on its replica nothing waits, so
 * a block takes B = 3·2 + 5 = 11 ms and commits a + 1, E = 2.64: rate E/B.
 * The links only delay the stream. Tolerance as for sync (4 SE of Ē over
 * the blocks simulated). */
static void test_cloud_spec_closed_form(void)
{
    char y[4096];
    snprintf(y, sizeof y, "%s", TREE_SYNC_YAML);
    char *m1 = strstr(y, "mode: sync"), *v1 = strstr(y, "  verify_time: 5ms\n");
    CHECK(m1 && v1);
    if (!m1 || !v1) return;
    char rest[4096];
    snprintf(rest, sizeof rest, "%s", v1);
    snprintf(v1, sizeof y - (size_t)(v1 - y), "  draft_time: 2ms\n%s", rest);
    snprintf(rest, sizeof rest, "%s", m1 + strlen("mode: sync"));
    snprintf(m1, sizeof y - (size_t)(m1 - y), "mode: cloud-spec%s", rest);
    scenario_t s;
    err_t e;
    memset(&s, 0, sizeof s);
    if (scenario_load_string("tree-cs", y, NULL, 0, &s, &e) < 0) {
        printf("  load: %s\n", e.msg);
        check_failed_now = 1;
        return;
    }
    const double B = 3 * 0.002 + 0.005, E = 1 + E321;
    analytic_t an;
    CHECK(analytic_compute(&s, &an, &e) == 0);
    CHECK_REL(analytic_value(&an, "block_time_cloud_spec_s"), B, 1e-12);
    CHECK_REL(analytic_value(&an, "throughput_cloud_spec_tok_s"), E / B, 1e-12);
    metrics_summary_t m;
    sim_options_t opt = {.trace = NULL};
    CHECK(sim_run(&s, &opt, &m, &e) == 0);
    double n = 4 * (300.0 - 10.0) / B, se = sqrt(VAR321 / n);
    printf("  tree-cs: E = %.4f, sim %.4f; rate want %.3f got %.3f\n", E,
           m.value[METRIC_ACCEPTED_LEN_MEAN], E / B, m.value[METRIC_THROUGHPUT]);
    CHECK_ABS(m.value[METRIC_ACCEPTED_LEN_MEAN], E, 4 * se);
    CHECK_REL(m.value[METRIC_THROUGHPUT], E / B, 4 * se / E);
    scenario_fini(&s);
}

/* A level's draft step (sim/model/service.h): one node costs exactly the
 * chain's step; w nodes cost, without a table, one iteration of w tokens
 * over the context (the datasheet roofline's job of q = w), which on a
 * memory-bound device is far below w single steps. */
static void test_level_cost(void)
{
    scenario_t s;
    err_t e;
    memset(&s, 0, sizeof s);
    if (scenario_load_string("lvl", "name: lvl\n", NULL, 0, &s, &e) < 0) {
        printf("  load: %s\n", e.msg);
        check_failed_now = 1;
        return;
    }
    const edge_cfg_t *ed = &s.groups[0].edge;
    service_t *sv = service_create(&ed->device, &ed->draft, ed->quant, NULL, ed->overhead,
                                   &e);
    CHECK(sv != NULL);
    if (sv) {
        CHECK(service_draft_width_time(sv, 300, 1) == service_draft_time(sv, 300));
        service_job_t six = {6, 300, 0};
        CHECK_REL(service_draft_width_time(sv, 300, 6), service_iter_time(sv, &six, 1),
                  1e-12);
        CHECK(service_draft_width_time(sv, 300, 6) < 2 * service_draft_time(sv, 300));
        service_free(sv);
    }
    scenario_fini(&s);
}

int main(void)
{
    RUN(test_branching_shape);
    RUN(test_parents_canonical);
    RUN(test_bad_shapes);
    RUN(test_expected_and_law);
    RUN(test_draws);
    RUN(test_budget);
    RUN(test_budget_depth);
    RUN(test_shape_keys);
    RUN(test_per_depth);
    RUN(test_chain_is_iid);
    RUN(test_sync_closed_form);
    RUN(test_async_closed_form);
    RUN(test_cloud_spec_closed_form);
    RUN(test_level_cost);
    return check_done();
}
