/* The speculation-length hook: a test-built policy that cycles gamma
 * 1, 2, 3, 1, ... per block, plugged into the scenario directly (the
 * scenario holds the policy's table, so no registry entry is needed). Every
 * consumer must follow each block's own gamma: the hand counts below hold
 * only if drafting, verification cost, verdicts and discards all do. Also
 * the loader's side: protocol.gamma_policy and protocol.mode names come from
 * their registries, and the one gamma limit is GAMMA_MAX. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "run/sim.h"
#include "scentext.h"
#include "test_sim_scen.h"

static int cycle_limit(int gamma) { return gamma; }

/* The block counter lives in priv, so the test also covers init and fini
 * (ASan reports a leak if fini is not called once per init). */
static int cycle_init(gamma_state_t *st, int tenant)
{
    (void)tenant;
    st->priv = calloc(1, sizeof(uint64_t));
    return st->priv ? 0 : -1;
}

static void cycle_fini(gamma_state_t *st)
{
    free(st->priv);
    st->priv = NULL;
}

static int cycle_next(gamma_state_t *st, int tenant, double now)
{
    (void)tenant;
    (void)now;
    uint64_t *blocks = st->priv;
    return 1 + (int)((*blocks)++ % (uint64_t)st->gamma);
}

static const gamma_ops_t cycle = {
    .name = "cycle",
    .limit = cycle_limit,
    .init = cycle_init,
    .fini = cycle_fini,
    .next = cycle_next,
};

/* One tenant, one request: the first arrival after a 100 s think time, the
 * next one after the run. d = 10 ms per draft, v = 10 ms per iteration,
 * rtt = 40 ms, no jitter, unlimited links. */
static scenario_t *one_request(const char *mode, double alpha, int output)
{
    scenario_t *s = scen_new(1, 1, proto_find(mode), 3, alpha, 0.010, 0.010, 0.040);
    s->protocol.gamma_policy = &cycle;
    s->duration = 150;
    s->warmup = 0;
    s->groups[0].workload.think = dist_const(100);
    s->groups[0].workload.output_tokens = dist_const(output);
    return s;
}

static void run_one(scenario_t *s, tally_totals_t *t)
{
    metrics_summary_t m;
    err_t err = {0};
    CHECK(sim_run_detailed(s, NULL, &m, t, &err) == 0);
    CHECK(t->requests_done == 1);
}

/* One request under the cycling policy, worked out by hand: the totals
 * below hold only if drafting, verification cost, verdicts and discards
 * all follow each block's own gamma. */
typedef struct cycle_case {
    const char *mode;
    double alpha;
    int output;
    double drafted, draft_committed, extra_committed, discarded, verdicts, verified;
} cycle_case_t;

static const cycle_case_t CYCLE_CASES[] = {
    /* Sync, all drafts accepted, output 10 = first token + blocks of 1, 2,
     * 3 drafts each committing gamma + 1: 6 drafts, 3 verdicts, verification
     * costs (1+1) + (2+1) + (3+1) = 9 tokens, nothing discarded. */
    {"sync", 1.0, 10, 6, 6, 3, 0, 3, 9},
    /* Sync, every draft rejected, output 7 = first token + 6 corrections:
     * six blocks of 1, 2, 3, 1, 2, 3 drafts, all 12 discarded; verification
     * 2 + 3 + 4 + 2 + 3 + 4 = 18 tokens. */
    {"sync", 0.0, 7, 12, 0, 6, 12, 6, 18},
    /* Async, all accepted, output 7: blocks of 1, 2, 3 are drafted back to
     * back (the window stops drafting once 1 + 1 + 2 + 3 = 7 tokens are
     * covered), each accepted whole commits its gamma drafts (no bonus
     * token). */
    {"async", 1.0, 7, 6, 6, 0, 0, 3, 9},
};

static void test_hand_counts(void)
{
    for (size_t i = 0; i < sizeof CYCLE_CASES / sizeof *CYCLE_CASES; i++) {
        const cycle_case_t *k = &CYCLE_CASES[i];
        scenario_t *s = one_request(k->mode, k->alpha, k->output);
        tally_totals_t t;
        run_one(s, &t);
        CHECK_ABS(t.drafted, k->drafted, 0);
        CHECK_ABS(t.draft_committed, k->draft_committed, 0);
        CHECK_ABS(t.extra_committed, k->extra_committed, 0);
        CHECK_ABS(t.committed, k->output, 0);
        CHECK_ABS(t.discarded, k->discarded, 0);
        CHECK_ABS(t.verdicts, k->verdicts, 0);
        CHECK_ABS(t.verified_tokens, k->verified, 0);
        scen_del(s);
    }
}

/* Async with rejections, rollbacks, purges and dropped blocks over many
 * tenants and requests: the conservation identities hold exactly with
 * per-block gammas (a rollback discards the sum of the gammas in flight). */
static void test_async_conservation(void)
{
    scenario_t *s = scen_new(2, 4, proto_find("async"), 5, 0.6, 0.008, 0.012, 0.040);
    s->protocol.gamma_policy = &cycle;
    s->protocol.window = 3;
    s->duration = 60;
    s->groups[0].workload.output_tokens = (dist_t){DIST_UNIFORM, 20, 200, NULL, 0};
    s->groups[1].workload.output_tokens = dist_const(77);
    s->groups[1].network.jitter = (dist_t){DIST_EXPONENTIAL, 0.004, 0, NULL, 0};
    s->cloud.batching.multi_block = 1;
    metrics_summary_t m;
    tally_totals_t t;
    err_t err = {0};
    CHECK(sim_run_detailed(s, NULL, &m, &t, &err) == 0);
    CHECK_ABS(t.drafted, t.draft_committed + t.discarded + t.pending_drafts, 1e-9);
    CHECK_ABS(t.committed, t.first_tokens + t.draft_committed + t.extra_committed, 1e-9);
    /* Every verify job costs its gamma + 1, gamma in [1, 5]. */
    double decided = t.verified_tokens - t.stale_tokens;
    CHECK(decided >= 2 * t.verdicts && decided <= 6 * t.verdicts);
    CHECK(t.discarded > 100 && t.blocks_dropped + t.queue_purged > 10);
    CHECK(t.requests_done > 20);
    scen_del(s);
}

/* Loader: the policy key, its default, and registry-backed names. */
/* A scenario setting key to name loads, holds that entry, and writes the
 * name back (scentext_yaml) as it was given. */
static int loads_back(const char *key, const char *name)
{
    /* A protocol that drafts on the cloud needs the draft's cost too. */
    const proto_ops_t *p = proto_find(name);
    scenario_override_t o[2] = {{.path = key, .value = name},
                                {.path = "cloud.draft_time", .value = "1ms"}};
    scenario_t s;
    err_t err = {0};
    if (scenario_load_string("r.yaml", "", o, p && p->cloud_drafts ? 2 : 1, &s, &err) != 0) {
        printf("  %s=%s: %s\n", key, name, err.msg);
        return 0;
    }
    char *buf = scentext_yaml(&s);
    const char *leaf = strrchr(key, '.') + 1;
    char line[96];
    snprintf(line, sizeof line, "\n  %s: %s\n", leaf, name);
    int ok = buf && strstr(buf, line) != NULL;
    if (!ok) printf("  %s=%s: not written back as '%s'\n", key, name, line + 1);
    free(buf);
    scenario_fini(&s);
    return ok;
}

static void test_loader(void)
{
    char path[64];
    if (check_tmp_file(path, sizeof path, "protocol: {mode: sync, gamma_policy: fixed}\n"))
        return;
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load(path, NULL, 0, &s, &err) == 0);
    CHECK(s.protocol.proto == proto_find("sync"));
    CHECK(s.protocol.gamma_policy == gamma_find("fixed"));
    scenario_fini(&s);
    scenario_override_t bad = {.path = "protocol.gamma_policy", .value = "fixd"};
    CHECK(scenario_load(path, &bad, 1, &s, &err) == -1);
    CHECK(strstr(err.msg, "protocol.gamma_policy: unknown value 'fixd' (did you mean "
                          "'fixed'?") != NULL);
    scenario_override_t mode = {.path = "protocol.mode", .value = "edge-only"};
    CHECK(scenario_load(path, &mode, 1, &s, &err) == 0);
    CHECK(s.protocol.proto == proto_find("edge-only"));
    CHECK(s.protocol.gamma_policy == gamma_find("fixed"));   /* the default */
    scenario_fini(&s);
    char big[16];
    snprintf(big, sizeof big, "%d", GAMMA_MAX + 1);
    scenario_override_t g = {.path = "protocol.gamma", .value = big};
    CHECK(scenario_load(path, &g, 1, &s, &err) == -1);
    CHECK(strstr(err.msg, "protocol.gamma") != NULL);
    unlink(path);
    /* Registry lists, walked rather than counted, so that a new protocol
     * or policy does not break this test: each registry has names, reports
     * its count even when cut short, and every name is reachable by
     * proto_find / gamma_find and by the loader, which writes it back. */
    const char *names[64], *one[1];
    size_t np = proto_names(names, 64);
    CHECK(np >= 1 && np <= 64 && proto_names(one, 1) == np);
    for (size_t i = 0; i < np && i < 64; i++) {
        const proto_ops_t *p = proto_find(names[i]);
        CHECK(p != NULL && p == proto_at(i));
        CHECK(loads_back("protocol.mode", names[i]));
    }
    CHECK(proto_at(np) == NULL);
    size_t ng = gamma_names(names, 64);
    CHECK(ng >= 1 && ng <= 64 && gamma_names(one, 1) == ng);
    for (size_t i = 0; i < ng && i < 64; i++) {
        CHECK(gamma_find(names[i]) != NULL);
        CHECK(loads_back("protocol.gamma_policy", names[i]));
    }
    /* The ones that ship, and the defaults, are among them. */
    static const char *const protos[] = {"sync", "async", "cloud-only", "edge-only"};
    static const char *const pols[] = {"fixed", "rtt", "goodput"};
    for (size_t k = 0; k < 4; k++) CHECK(proto_find(protos[k]) != NULL);
    for (size_t k = 0; k < 3; k++) CHECK(gamma_find(pols[k]) != NULL);
    CHECK(proto_default() == proto_find("async") && gamma_default() == gamma_find("fixed"));
    CHECK(proto_find("nope") == NULL && gamma_find("nope") == NULL);
}

int main(void)
{
    RUN(test_hand_counts);
    RUN(test_async_conservation);
    RUN(test_loader);
    return check_done();
}
