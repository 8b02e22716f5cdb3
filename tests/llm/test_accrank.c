/* Tree acceptance by teacher forcing (kernels/llm/accrank.h):
 *   - ranks on hand-made logits, ties and NaNs in spec_argmax's order;
 *   - on tiny random models (tests/llm/ggufw.h), tforce_ranks against a
 *     scalar reference: the draft stepped one token at a time (not the one
 *     pass over the text tforce_ranks makes) and each row's tokens sorted,
 *     the rank read off the sorted order; rank 0 exactly where the chain's
 *     tforce_outcomes accepts;
 *   - the per-depth, per-rank counts of a hand-made stream counted by hand;
 *   - width 1 is the chain: accrank_estimate's p_1 per depth equals
 *     accstat's acceptance per draft position (the existing path, an
 *     independent count) on the tiny models' streams;
 *   - the profile written reads back through the simulator's tree model
 *     (acceptance.profile) as the estimates rounded down to 6 decimals;
 *   - a tree replayed on a hand-made stream, counted by hand, and the
 *     chain tree replayed on the tiny models' streams against accstat's
 *     accepted lengths;
 *   - the rank stream written reads back (accrank_read) as written, and
 *     bad ones are refused at PATH:LINE.
 * The real model: tests/cli/llm_tree.sh. */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "accrank.h"
#include "accstat.h"
#include "check.h"
#include "gemv.h"
#include "ggufw.h"
#include "model/accept.h"
#include "model/tree.h"
#include "spec.h"
#include "tforce.h"

static char dir[] = "/tmp/test_accrank.XXXXXX";
static char path[512];
static const tiny_spec_t SPEC = {2, 64, 4, 2, 96, 300, 0.3f, 17, 1};

static void test_rank_by_hand(void)
{
    /* Order: 3 (token 1), 3 (token 2, tie: higher index after), 1 (0),
     * 0 (4), -2 (3). */
    const float a[5] = {1, 3, 3, -2, 0};
    CHECK(accrank_rank(a, 5, 1, 8) == 0 && accrank_rank(a, 5, 2, 8) == 1);
    CHECK(accrank_rank(a, 5, 0, 8) == 2 && accrank_rank(a, 5, 4, 8) == 3);
    CHECK(accrank_rank(a, 5, 3, 8) == 4 && accrank_rank(a, 5, 3, 2) == 2);
    /* NaNs after every number (spec_argmax never picks one over a number),
     * among themselves by index. */
    const float b[4] = {NAN, -1, NAN, -5};
    CHECK(accrank_rank(b, 4, 1, 8) == 0 && accrank_rank(b, 4, 3, 8) == 1);
    CHECK(accrank_rank(b, 4, 0, 8) == 2 && accrank_rank(b, 4, 2, 8) == 3);
    CHECK(spec_argmax(b, 4) == 1);
}

/* ---- the scalar reference on tiny models ---------------------------------- */

static const float *sort_row;

/* Descending logit, NaN last, ties by lower index: spec_argmax's order. */
static int by_logit(const void *x, const void *y)
{
    int32_t i = *(const int32_t *)x, j = *(const int32_t *)y;
    float a = sort_row[i], b = sort_row[j];
    if (isnan(a) != isnan(b)) return isnan(a) ? 1 : -1;
    if (!isnan(a) && a != b) return a > b ? -1 : 1;
    return (i > j) - (i < j);
}

static int ref_rank(const float *row, int vocab, int32_t tok, int cap)
{
    int32_t *idx = malloc((size_t)vocab * sizeof *idx);
    for (int32_t v = 0; v < vocab; v++) idx[v] = v;
    sort_row = row;
    qsort(idx, (size_t)vocab, sizeof *idx, by_logit);
    int r = 0;
    while (idx[r] != tok) r++;
    free(idx);
    return r < cap ? r : cap;
}

static llm_model_t *load(int weights, int layers)
{
    err_t err = {0, ""};
    gguf_t *g = gguf_open(path, &err);
    llm_opts_t o = {weights, layers, GEMV_W4_EXACT};
    llm_model_t *m = g ? llm_load(g, &o, &err) : NULL;
    if (!m) printf("  %s\n", err.msg);
    gguf_close(g);
    return m;
}

static const int32_t P0[5] = {3, 14, 159, 26, 53}, P1[3] = {58, 97, 93},
                     P2[7] = {238, 46, 26, 43, 38, 32, 79};
#define NTEXT 3
#define NTOK 48
#define CAP 6

/* Ranks of text t by the reference: the draft stepped token by token. */
static int ref_ranks(const llm_model_t *d, llm_run_t *r, const tforce_text_t *t, uint8_t *out)
{
    err_t err = {0, ""};
    int vocab = llm_config(d)->vocab, rc = 0;
    float *lg = malloc((size_t)vocab * sizeof *lg);
    llm_kv_t *kv = llm_kv_create(d, t->plen + t->n, &err);
    llm_span_t sp = {kv, t->prompt, t->plen, t->plen - 1};
    if (!kv || llm_forward(r, d, &sp, 1, lg, &err) != 0) rc = -1;
    for (int j = 1; rc == 0 && j < t->n; j++) {
        llm_span_t s1 = {kv, &t->tok[j - 1], 1, 0};
        if (llm_forward(r, d, &s1, 1, lg, &err) != 0) rc = -1;
        else out[j - 1] = (uint8_t)ref_rank(lg, vocab, t->tok[j], CAP);
    }
    if (rc) printf("  %s\n", err.msg);
    llm_kv_free(kv);
    free(lg);
    return rc;
}

/* The tiny target's texts and a draft's ranks (one layer of two: an early
 * exit, so that ranks past 0 are common) read by both. */
static void test_ranks_reference_and_chain(void)
{
    llm_model_t *t = load(LLM_FP16, 0), *d = load(LLM_W4A16, 1);
    err_t err = {0, ""};
    llm_run_t *r = llm_run_create(1, &err);
    CHECK(t && d && r);
    if (!t || !d || !r) return;
    tforce_text_t tx[NTEXT] = {{P0, 5, NULL, NULL, 0}, {P1, 3, NULL, NULL, 0},
                               {P2, 7, NULL, NULL, 0}};
    CHECK(tforce_generate(t, r, tx, NTEXT, NTOK, 0.0f, 1, -1, 2, &err) == 0);
    uint8_t rk[NTEXT][NTOK], ref[NTEXT][NTOK], oc[NTEXT][NTOK];
    accrank_stream_t rs[NTEXT];
    accstat_stream_t os[NTEXT];
    long bad = 0, bad_oc = 0, hist[CAP + 1] = {0};
    for (int i = 0; i < NTEXT; i++) {
        CHECK(tx[i].n == NTOK);
        CHECK(tforce_ranks(d, r, &tx[i], CAP, rk[i], &err) == 0);
        CHECK(ref_ranks(d, r, &tx[i], ref[i]) == 0);
        CHECK(tforce_outcomes(d, r, &tx[i], i, 0.0f, 1, oc[i], &err) == 0);
        for (int j = 0; j < NTOK - 1; j++) {
            bad += rk[i][j] != ref[i][j];
            bad_oc += (rk[i][j] == 0) != oc[i][j];
            hist[rk[i][j]]++;
        }
        rs[i] = (accrank_stream_t){rk[i], NTOK - 1, NULL};
        os[i] = (accstat_stream_t){oc[i], NTOK - 1, NULL};
    }
    printf("  %d positions; ranks 0..%d, %d (none):", NTEXT * (NTOK - 1), CAP - 1, CAP);
    for (int k = 0; k <= CAP; k++) printf(" %ld", hist[k]);
    printf("; %ld differ from the reference\n", bad);
    CHECK(bad == 0 && bad_oc == 0);
    /* Not vacuous: accepted and rejected drafts, ranks past 1 and past the cap. */
    CHECK(hist[0] > 5 && hist[1] > 0 && hist[2] + hist[3] > 0 && hist[CAP] > 0);
    /* Width 1 is the chain, at every depth, for blocks of 2 .. 8. */
    accstat_t s;
    accstat_compute(os, NTEXT, &s);
    int diff = 0;
    for (int g = 2; g <= 8; g++) {
        accrank_est_t e;
        accrank_estimate(rs, NTEXT, CAP, 1, g, &e);
        diff += e.blocks != accstat_blocks(&s, g);
        for (int i = 1; i <= g; i++) {
            double a = accrank_p(&e, i - 1, 0), b = accstat_position(&s, g, i);
            diff += e.reached[i - 1] != accstat_reached(&s, g, i);
            diff += !(a == b || (isnan(a) && isnan(b)));
        }
    }
    CHECK(diff == 0);
    /* The chain of 4 replayed: accstat's mean accepted length at gamma 4. */
    tree_t ch;
    accrank_replay_t rp;
    CHECK(tree_chain(&ch, 4, &err) == 0);
    accrank_replay_tree(rs, NTEXT, &ch, &rp);
    long sum = 0;
    for (int a = 0; a <= 4; a++) sum += a * s.counts[4][a];
    CHECK(rp.blocks == accstat_blocks(&s, 4));
    CHECK_ABS(rp.mean, (double)sum / (double)accstat_blocks(&s, 4), 1e-12);
    for (int i = 0; i < NTEXT; i++) tforce_text_free(&tx[i]);
    llm_run_free(r);
    llm_free(t);
    llm_free(d);
}

/* ---- counts by hand ---------------------------------------------------------- */

/* Ranks 0 1 2 | 0 0 0 | 3 | 1 0 (cap 3, width 2, depth 3): block 1 accepts
 * ranks 0 and 1 and is rejected at depth 3 (rank 2 >= width); block 2 is
 * whole; block 3 is rejected at depth 1 (3: none); the last two positions
 * are a block cut short by the text's end, not counted. A second text
 * "1 0 0 | 2" (depth 3: whole, then rejected) starts its own blocks. */
static const uint8_t HAND_A[9] = {0, 1, 2, 0, 0, 0, 3, 1, 0}, HAND_B[4] = {1, 0, 0, 2};

static void test_counts_by_hand(void)
{
    accrank_stream_t st[2] = {{HAND_A, 9, "a"}, {HAND_B, 4, "b"}};
    accrank_est_t e;
    accrank_estimate(st, 1, 3, 2, 3, &e);
    CHECK(e.blocks == 3 && e.accepted == 5);
    CHECK(e.reached[0] == 3 && e.reached[1] == 2 && e.reached[2] == 2);
    CHECK(e.n[0][0] == 2 && e.n[0][1] == 0 && e.n[0][2] == 0 && e.n[0][3] == 1);
    CHECK(e.n[1][0] == 1 && e.n[1][1] == 1 && e.n[2][0] == 1 && e.n[2][2] == 1);
    CHECK_ABS(accrank_p(&e, 0, 0), 2.0 / 3, 1e-15);
    CHECK_ABS(accrank_se(&e, 0, 0), sqrt(2.0 / 9 / 3), 1e-15);
    CHECK_ABS(accrank_p(&e, 2, 2), 0.5, 1e-15);
    /* Both texts: B adds a whole block (ranks 1 0 0) and one rejected at
     * depth 1 (rank 2). */
    accrank_estimate(st, 2, 3, 2, 3, &e);
    CHECK(e.blocks == 5 && e.accepted == 8);
    CHECK(e.reached[0] == 5 && e.reached[1] == 3 && e.reached[2] == 3);
    CHECK(e.n[0][1] == 1 && e.n[0][2] == 1 && e.n[1][0] == 2 && e.n[2][0] == 2);
    /* Width 1, depth 4, text A: 0 1 | 2 | 0 0 0 3 | 1 | (0 cut short):
     * depth 1 reached 4 times, rank 0 twice; depth 2 twice (once 0);
     * depths 3 and 4 once (0, then 3). */
    accrank_estimate(st, 1, 3, 1, 4, &e);
    CHECK(e.blocks == 4 && e.reached[0] == 4 && e.reached[1] == 2 && e.reached[2] == 1 &&
          e.reached[3] == 1);
    CHECK(e.n[0][0] == 2 && e.n[1][0] == 1 && e.n[2][0] == 1 && e.n[3][3] == 1);
    /* The chain's count of the same outcomes (rank 0: accepted). */
    uint8_t o[9];
    for (int j = 0; j < 9; j++) o[j] = HAND_A[j] == 0;
    accstat_stream_t os = {o, 9, NULL};
    accstat_t s;
    accstat_compute(&os, 1, &s);
    for (int i = 1; i <= 4; i++) CHECK(accstat_position(&s, 4, i) == accrank_p(&e, i - 1, 0));
}

/* Tree [2, 1] (the root's ranks 1 and 2, one rank-1 child each) on text A:
 * 0 1 | 2 | 0 0 | 0 3 | 1 0 → accepted 1 (rank 1 has no second child),
 * 0 (no third root child), 2 (a leaf: whole), 1, 2 (whole, at the text's
 * end: complete). Mean 6/5; sample variance 2.8/4, so se sqrt(0.7/5). */
static void test_replay_by_hand(void)
{
    accrank_stream_t st = {HAND_A, 9, "a"};
    const int b[2] = {2, 1};
    tree_t t;
    err_t err = {0, ""};
    CHECK(tree_from_branching(&t, b, 2, &err) == 0);
    accrank_replay_t rp;
    accrank_replay_tree(&st, 1, &t, &rp);
    CHECK(rp.blocks == 5);
    CHECK_ABS(rp.mean, 1.2, 1e-15);
    CHECK_ABS(rp.se, sqrt(0.7 / 5), 1e-15);
}

/* The profile of the hand-made stream through the simulator's loader:
 * rows 2/3 0 0, 1/2 1/2 0, 1/2 0 1/2 (each rounded down to 6 decimals). */
static void test_profile_loads(void)
{
    accrank_stream_t st = {HAND_A, 9, "a"};
    accrank_est_t e;
    accrank_estimate(&st, 1, 3, 2, 3, &e);
    char file[600], yaml[700];
    snprintf(file, sizeof file, "%s/hand.tree", dir);
    FILE *f = fopen(file, "w");
    const char *h[1] = {"test_accrank"};
    CHECK(f && accrank_write_profile(f, h, 1, &e) == 0);
    if (f) fclose(f);
    snprintf(yaml, sizeof yaml, "{model: tree, profile: %s}", file);
    accept_cfg_t c;
    err_t err = {0, ""};
    int rc = accept_cfg_parse(&c, yaml, &err);
    if (rc) printf("  %s\n", err.msg);
    CHECK(rc == 0);
    if (rc) return;
    const tree_probs_t *pr = c.model->tree_probs(c.par);
    const double want[3][3] = {{0.666666, 0, 0}, {0.5, 0.5, 0}, {0.5, 0, 0.5}};
    CHECK(pr->nrows == 3);
    for (int d = 0; d < 3 && pr->nrows == 3; d++) {
        CHECK(pr->np[d] == 3);
        for (int k = 0; k < 3; k++) CHECK(pr->p[d][k] == want[d][k]);
    }
    accept_cfg_fini(&c);
}

static void write_text(const char *file, const char *text)
{
    FILE *f = fopen(file, "w");
    CHECK(f != NULL);
    if (!f) return;
    fputs(text, f);
    fclose(f);
}

static void test_ranks_round_trip(void)
{
    accrank_stream_t st[2] = {{HAND_A, 9, "prompt 0 (a)"}, {HAND_B, 4, "prompt 1 (b)"}};
    char file[600];
    snprintf(file, sizeof file, "%s/hand.ranks", dir);
    FILE *f = fopen(file, "w");
    const char *h[2] = {"first header", "second"};
    CHECK(f && accrank_write_ranks(f, h, 2, 3, st, 2) == 0);
    if (f) fclose(f);
    accrank_file_t rf;
    err_t err = {0, ""};
    CHECK(accrank_read(file, &rf, &err) == 0);
    CHECK(rf.k == 3 && rf.ns == 2 && rf.nh == 2);
    if (rf.ns == 2 && rf.nh == 2) {
        CHECK(rf.st[0].n == 9 && memcmp(rf.st[0].r, HAND_A, 9) == 0);
        CHECK(rf.st[1].n == 4 && memcmp(rf.st[1].r, HAND_B, 4) == 0);
        CHECK_STR(rf.label[1], "prompt 1 (b)");
        CHECK_STR(rf.header[1], "second");
    }
    accrank_file_free(&rf);
    /* A rank past K (line 4, column 3, counted by hand), ranks before the
     * format line, no rank at all, a second K after ranks. */
    const char *bad[4] = {"# format: ranks 3\n# request: x\n0 1\n2 4\n",
                          "0 1 2\n# format: ranks 3\n", "# format: ranks 3\n# request: x\n",
                          "# format: ranks 3\n0 1\n# format: ranks 5\n4\n"};
    const char *want[4] = {":4:3: '4' is not a rank 0 .. 3", ":1: ranks before", ": no rank",
                           ":3: '# format: ranks 5' after ranks read as ranks 3"};
    for (int i = 0; i < 4; i++) {
        write_text(file, bad[i]);
        err = (err_t){0, ""};
        CHECK(accrank_read(file, &rf, &err) == -1 && err.code == ERR_INPUT);
        if (!strstr(err.msg, want[i])) printf("  %d: %s\n", i, err.msg);
        CHECK(strstr(err.msg, want[i]) != NULL);
    }
}

int main(void)
{
    if (tiny_dir_model(dir, path, sizeof path, &SPEC) != 0) return 1;
    RUN(test_rank_by_hand);
    RUN(test_counts_by_hand);
    RUN(test_profile_loads);
    RUN(test_replay_by_hand);
    RUN(test_ranks_round_trip);
    RUN(test_ranks_reference_and_chain);
    if (tiny_dir_remove(dir) != 0) return 1;
    return check_done();
}
