/* Acceptance traces across gamma (sim/model/accept_trace.c): the per-position
 * format replayed at another gamma against a hand count, its block law, and
 * the per-block format refused at a gamma other than its recorded one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/accept.h"
#include "accepttest.h"
#include "check.h"
#include "config/scenario.h"
#include "run/sim.h"

/* Recorded at gamma 4. The evaluated outcomes (each line up to its first
 * 0; line 2's last 1 came after a rejection and is ignored):
 *   1111 | 110 | 1111 | 0 | 1110   (16 outcomes, 13 of them 1s)
 * gamma 4 from the start: 4, 2, 4, 0, 3 — the recorded blocks.
 * gamma 8: 111111 0 -> 6; 1111 0 -> 4; 111 0 -> 3; then the cycle repeats.
 * gamma 2: 11 11 11 0 11 11 0 11 10 -> 2, 2, 2, 0, 2, 2, 0, 2, 1. */
static const char POSITIONS[] = "# recorded with gamma 4\n"
                                "# format: positions\n"
                                "1111\n1101\n\n1111\n0\n1110\n";

static int trace_cfg(accept_cfg_t *c, const char *text, err_t *err)
{
    char path[40];
    if (check_tmp_file(path, sizeof path, text) != 0)
        return err_set(err, ERR_RUNTIME, "tmp file");
    return accepttest_trace_at(c, path, err);
}

static void expect_blocks(const accept_cfg_t *c, int gamma, const int *want, int n)
{
    accept_t a;
    err_t err;
    CHECK(accept_init(&a, c, 1, 0, 0, &err) == 0);
    for (int round = 0; round < 3; round++)
        for (int i = 0; i < n; i++) {
            int got = accept_draw(&a, gamma);
            if (got != want[i]) {
                printf("  gamma %d, block %d: %d, expected %d\n", gamma, i, got, want[i]);
                CHECK(got == want[i]);
                accept_fini(&a);
                return;
            }
        }
    accept_fini(&a);
}

static void test_positions_replay(void)
{
    accept_cfg_t c;
    err_t err;
    if (trace_cfg(&c, POSITIONS, &err) != 0) {
        printf("  %s\n", err.msg);
        CHECK(!"parse");
        return;
    }
    static const int g4[] = {4, 2, 4, 0, 3}, g8[] = {6, 4, 3},
                     g2[] = {2, 2, 2, 0, 2, 2, 0, 2, 1};
    expect_blocks(&c, 4, g4, 5);
    expect_blocks(&c, 8, g8, 3);
    expect_blocks(&c, 2, g2, 9);
    CHECK_REL(accept_cfg_mean(&c, 8), 13.0 / 16, 1e-12);
    CHECK(accept_cfg_check_gamma(&c, 8, &err) == 0);
    accept_law_t L;
    CHECK(accept_cfg_law(&c, 8, &L, &err) == 0);
    for (int k = 0; k <= 8; k++)
        CHECK_ABS(accept_law_p(&L, 0, k), (k == 6 || k == 4 || k == 3) / 3.0, 1e-12);
    accept_law_fini(&L);
    CHECK(accept_cfg_law(&c, 4, &L, &err) == 0);
    static const double p4[] = {0.2, 0, 0.2, 0.2, 0.4};
    for (int k = 0; k <= 4; k++) CHECK_ABS(accept_law_p(&L, 0, k), p4[k], 1e-12);
    accept_law_fini(&L);
    accept_cfg_fini(&c);
}

/* One sync tenant replaying `trace` (per request or as a stream), each
 * request output_tokens long, 200 s: its metrics in *m. 0, or -1 (the
 * failure checked and printed). */
static int run_sync(const char *trace, int gamma, int per_request, long output_tokens,
                    metrics_summary_t *m)
{
    char path[40], yaml[1024];
    if (check_tmp_file(path, sizeof path, trace) != 0) {
        CHECK(!"tmp");
        return -1;
    }
    snprintf(yaml, sizeof yaml,
             "seed: 5\nduration: 200s\nwarmup: 5s\n"
             "protocol: {mode: sync, gamma: %d}\n"
             "acceptance: {model: trace, file: %s, per_request: %s}\n"
             "tenants:\n  count: 1\n  edge: {draft_time: 10ms, prefill_time: 0s}\n"
             "  network: {rtt: 40ms}\n"
             "  workload: {prompt_tokens: 1, output_tokens: %ld}\n"
             "cloud: {verify_time: 5ms}\n", gamma, path, per_request ? "true" : "false",
             output_tokens);
    scenario_t s;
    err_t err = {0};
    int rc = scenario_load_string("t.yaml", yaml, NULL, 0, &s, &err);
    unlink(path);
    if (rc == 0) {
        rc = sim_run(&s, NULL, m, &err);
        scenario_fini(&s);
    }
    if (rc) printf("  %s\n", err.msg);
    CHECK(rc == 0);
    return rc ? -1 : 0;
}

/* The simulator at gamma 8, one sync tenant: every cycle of three blocks
 * verifies 24 drafts and accepts 13; each verdict commits a + 1 tokens. */
static void test_positions_run(void)
{
    metrics_summary_t m;
    if (run_sync(POSITIONS, 8, 0, 100000000, &m)) return;
    CHECK_REL(m.value[METRIC_ACCEPTANCE_RATE], 13.0 / 24, 2e-3);
    CHECK_REL(m.value[METRIC_ACCEPTED_LEN_MEAN], 16.0 / 3, 2e-3);
}

/* Replayed per request, a segment is the request's text position by
 * position (build/llm accept judges every one); a sync verdict's bonus
 * token takes a position no draft is judged at. One tenant, gamma 4, every
 * request the same 16 tokens: the prefill's, then text positions 1..15
 * whose outcomes are 111111 0 1111 0 11 0. By hand:
 *   block 1 judges 1-4 (1111): a = 4, commits 1-5 (5 the bonus);
 *   block 2 judges 6-7 (10): a = 1, commits 6-7;
 *   block 3 judges 8-11 (1111): a = 4, commits 8-12 (12 the bonus);
 *   block 4 judges 13-15 (110): a = 2, commits 13-15; the request is done.
 * Tokens per verdict 15 / 4, acceptance 11 / 16. (Reading a bonus position
 * as the next block's first outcome would give 5, 3, 5, 1, 1: 15 / 5.) */
static void test_per_request_sync_bonus(void)
{
    metrics_summary_t m;
    if (run_sync("# format: positions\n# request: one\n1111110\n11110\n110\n", 4, 1, 16,
                 &m))
        return;
    CHECK_REL(m.value[METRIC_ACCEPTED_LEN_MEAN], 15.0 / 4, 2e-3);
    CHECK_REL(m.value[METRIC_ACCEPTANCE_RATE], 11.0 / 16, 2e-3);
}

/* Loads a scenario replaying `trace` at `gamma`; returns the loader's rc
 * with its message in err. */
static int load_at(const char *trace, int gamma, err_t *err)
{
    char path[40], yaml[512];
    if (check_tmp_file(path, sizeof path, trace) != 0) return err_set(err, ERR_RUNTIME, "tmp");
    snprintf(yaml, sizeof yaml,
             "protocol: {mode: sync, gamma: %d}\n"
             "acceptance:\n  model: trace\n  file: %s\n", gamma, path);
    scenario_t s;
    int rc = scenario_load_string("t.yaml", yaml, NULL, 0, &s, err);
    unlink(path);
    if (rc == 0) scenario_fini(&s);
    return rc;
}

static void expect_refused(const char *trace, int gamma, const char *prefix,
                           const char *has)
{
    err_t err = {0};
    int rc = load_at(trace, gamma, &err);
    CHECK(rc != 0 && err.code == ERR_INPUT);
    if (rc == 0) return;
    if (strncmp(err.msg, prefix, strlen(prefix)) != 0 || !strstr(err.msg, has)) {
        printf("  got '%s'\n  expected '%s...%s...'\n", err.msg, prefix, has);
        CHECK(!"message");
    }
}

/* Per-block lengths replay only at their recorded gamma: stated by
 * `# gamma: N`, else the largest value. */
static void test_lengths_gamma(void)
{
    static const char stated[] = "# gamma: 4\n3\n1\n", bare[] = "4\n2\n0\n";
    err_t err = {0};
    CHECK(load_at(stated, 4, &err) == 0);
    CHECK(load_at(bare, 4, &err) == 0);
    expect_refused(stated, 8, "t.yaml:4:9: acceptance.file: ",
                   "blocks of 4 drafts ('# gamma: 4' at line 1) but blocks here "
                   "have gamma = 8");
    expect_refused(bare, 8, "t.yaml:4:9: acceptance.file: ",
                   "blocks of 4 drafts (no '# gamma:' line, largest value 4)");
    expect_refused(bare, 3, "t.yaml:4:9: acceptance.file: ", "gamma = 3");
    /* A value above the stated gamma: at its line in the trace. */
    expect_refused("# gamma: 4\n3\n5\n", 4, "/tmp/specsim_test_",
                   ":3:1: acceptance.file: 5 accepted drafts exceed the recorded "
                   "'# gamma: 4' (line 1)");
    /* A directive after data, a bad directive, a bad position string. */
    expect_refused("1\n# gamma: 4\n", 4, "/tmp/specsim_test_",
                   ":2:1: acceptance.file: '# gamma: 4': directives come before");
    expect_refused("# format: blocks\n1\n", 4, "/tmp/specsim_test_",
                   ":1:1: acceptance.file: '# format: blocks'");
    expect_refused("# format: positions\n1121\n", 4, "/tmp/specsim_test_",
                   ":2:1: acceptance.file: '1121' is not a string of 0s and 1s");
}

/* Issue 28, item 16: a second '# gamma:' line contradicts the first; old
 * code let the last one win silently (this trace then loaded at gamma 8). */
static void test_second_gamma(void)
{
    static const char two[] = "# gamma: 4\n# gamma: 8\n3\n";
    err_t err = {0};
    CHECK(load_at(two, 8, &err) != 0);
    expect_refused(two, 4, "/tmp/specsim_test_",
                   ":2:1: acceptance.file: a second '# gamma:' line (the first is line 1)");
}

/* Per-block lengths that are all 0, without '# gamma:': the recorded gamma
 * is unknown (old code called it 0 and said "give the gamma it was
 * recorded at", which no scenario can: gamma >= 1). Stated, they load. */
static void test_all_zero_lengths(void)
{
    expect_refused("0\n0\n", 4, "t.yaml:4:9: acceptance.file: ",
                   "holds only 0s and no '# gamma:' line, so the gamma its blocks were "
                   "recorded at is unknown: state it with a line '# gamma: N'");
    err_t err = {0};
    CHECK(load_at("# gamma: 4\n0\n0\n", 4, &err) == 0);
}

int main(void)
{
    RUN(test_positions_replay);
    RUN(test_positions_run);
    RUN(test_per_request_sync_bonus);
    RUN(test_lengths_gamma);
    RUN(test_second_gamma);
    RUN(test_all_zero_lengths);
    return check_done();
}
