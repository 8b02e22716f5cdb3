/* Whole runs over links that vary in time (tenants.network.trace, states,
 * mean_up/mean_down), against what can be counted by hand, and the same
 * results at any thread count. */
#include "check.h"
#include "run/sim.h"
#include "scentext.h"
#include "test_sim_scen.h"
#include "tmpdir.h"

/* The sync tenant of the tests below (γ = 4, d = 10 ms, v = 5 ms, rtt
 * 40 ms, α = 1) on a link trace of these rows, from the trace's start,
 * run for `duration` s. */
static scenario_t *sync_on_trace(const char *name, const char *rows, double duration)
{
    char text[512];
    snprintf(text, sizeof text, "t_s,rtt_ms,up_mbps,down_mbps,up\n%s", rows);
    put(name, text);
    scenario_t *s = scen_new(1, 1, proto_find("sync"), 4, 1.0, 0.010, 0.005, 0.040);
    network_cfg_t *n = &s->groups[0].network;
    snprintf(n->trace, sizeof n->trace, "%s", path(name));
    n->has_trace_stride = 1;
    n->trace_stride = 0;
    s->duration = duration;
    return s;
}

static int run(const scenario_t *s, int jobs, metrics_summary_t *m)
{
    err_t err;
    sim_options_t o = {.jobs = jobs};
    int rc = sim_run(s, &o, m, &err);
    if (rc) printf("  sim_run: %s\n", err.msg);
    return rc;
}

/* Sync, one tenant, draft d = 10 ms × γ = 4, verify v = 5 ms, unlimited
 * links: a block takes b = γd + rtt + v, whatever its acceptance. The
 * trace holds rtt 40 ms for 50 s, then 120 ms for 50 s, over and over
 * (every tenant from its start: trace_stride 0), so b is 85 ms half of
 * the time and 165 ms the other half. Changes are rare (every 50 s, some
 * 300-600 blocks): only the block in flight at a change mixes the two,
 * 20 of them in 1000 s, each off by at most 80 ms.
 *
 * Over a measured time T (here whole periods: 10 s of warm-up, then
 * 1000 s), the tenant runs (T/2)/b₁ + (T/2)/b₂ blocks, each committing E
 * tokens on average, E = (1 − α^(γ+1))/(1 − α) (γ + 1 = 5 for α = 1). The
 * tokens of one verdict arrive together, so the mean ITL is T over the
 * tokens:
 *
 *   itl_mean = 2 / (E · (1/b₁ + 1/b₂))
 *
 * the harmonic mean of the block times over E, not the time-weighted
 * arithmetic mean ((b₁ + b₂)/2)/E, which is 11% larger here: a state of
 * short blocks serves more tokens in its half of the time. */
static void test_sync_alternating_rtt(void)
{
    scenario_t *s = sync_on_trace("alt.csv", "0,40,inf,inf,1\n50,120,inf,inf,1\n100\n", 1010);
    metrics_summary_t m;
    CHECK(run(s, 1, &m) == 0);
    double b1 = 0.085, b2 = 0.165;
    double want = 2 / (5 * (1 / b1 + 1 / b2));
    printf("  alpha 1: itl_mean %.6f ms, formula %.6f ms\n", 1e3 * m.value[METRIC_ITL_MEAN],
           1e3 * want);
    CHECK_REL(m.value[METRIC_ITL_MEAN], want, 0.003);
    CHECK(fabs(m.value[METRIC_ITL_MEAN] - (b1 + b2) / 2 / 5) > 0.1 * want);
    /* α = 0.7: the same with E = (1 − 0.7⁵)/0.3 tokens a block; longer,
     * for the acceptance draws' noise. */
    scen_accept(s, "{model: iid, alpha: 0.7}");
    s->duration = 3010;
    CHECK(run(s, 1, &m) == 0);
    double E = (1 - pow(0.7, 5)) / 0.3;
    printf("  alpha 0.7: itl_mean %.6f ms, formula %.6f ms\n",
           1e3 * m.value[METRIC_ITL_MEAN], 1e3 * 2 / (E * (1 / b1 + 1 / b2)));
    CHECK_REL(m.value[METRIC_ITL_MEAN], 2 / (E * (1 / b1 + 1 / b2)), 0.015);
    scen_del(s);
}

/* Deterministic outages, sync with α = 1 and the numbers above (b = 85
 * ms at rtt 40 ms), the link down from 9.9 s to 10 s of every 10 s. The
 * request starts at 0 (prompt up 20 ms, prefill 5 ms, first token down 20
 * ms), so block k starts drafting at 45 + 85k ms and its verdict is back
 * 85 ms later. Block 115 starts at 9.820 s; its verdict leaves the cloud
 * at 9.885 s, before the outage, and is at the edge at 9.905 s (a message
 * that left propagates through an outage: only departures wait). Block
 * 116 drafts until 9.945 s, inside the outage: it leaves at 10.0 s (held
 * 55 ms), reaches the cloud at 10.020, its verdict the edge at 10.045 s.
 * That is 45 ms past the period's start, the first period's phase, so
 * every period repeats: 117 verdicts of 5 tokens reach the edge in each
 * (the one held over from the period before, at 45 ms, and blocks 0 to
 * 115 of its own), 585 tokens per 10 s. The measured 1000 s (after 10 s
 * of warm-up) are 100 such periods. */
static void test_sync_outage_count(void)
{
    scenario_t *s = sync_on_trace("out.csv", "0,40,inf,inf,1\n9.9,40,inf,inf,0\n10\n", 1010);
    metrics_summary_t m;
    CHECK(run(s, 1, &m) == 0);
    printf("  throughput %.6f tok/s, counted 58.5\n", m.value[METRIC_THROUGHPUT]);
    CHECK_REL(m.value[METRIC_THROUGHPUT], 585 / 10.0, 1e-3);
    scen_del(s);
}

/* protocol.fallback against a hand count. The sync tenant above (γ = 4,
 * d = 10 ms, v = 5 ms, rtt 40 ms, α = 1: blocks of 85 ms from 45 ms, 5
 * tokens each), one outage from 5 s to 7 s, 10 s measured from 0.
 *
 * Block 57's verdict is back at 4.975 s; block 58 drafts until 5.015 s
 * and cannot leave. Without fallback the edge stalls from 5.015 s until
 * that block's verdict: it leaves at 7.0, is verified 7.020-7.025 and
 * back at 7.045 s: 1.985 s of the stall fall in the outage (link_stall_s)
 * and the verdict's 5 tokens waited 7.045 - 4.975 = 2.070 s, ITL 0.414 s
 * each (itl_outage_*).
 *
 * With fallback the edge sees the link down at 5.015 s: block 58 is
 * dropped and the device decodes alone, one token per 10 ms, 5.025 s to
 * 7.005 s: 199 tokens (the first after 4.975 + 50 ms, then 198 of 10 ms;
 * each wait touches the outage: itl_outage_mean = 2.030/199 s). At 7.005
 * s, the link up, it sends its state: the cloud's KV lacks those 199
 * tokens; their prefill (v = 5 ms here) ends at 7.030 s and its answer is
 * at the edge at 7.050 s: reconciling costs rtt + the prefill, 45 ms of
 * stall, none in the outage (link_stall_s = 0). Fallback 5.015-7.050 s:
 * fallback_frac = 2.035/10. Blocks resume at 7.050 s; 34 verdicts are
 * back by 10 s. Tokens: 1 + 58·5 + 199 + 34·5 = 660 (local_tok_frac =
 * 199/660); stall: 93 round trips of 45 ms (58 before, the reconcile, 34
 * after) and the last block's 20 ms open at the end, over 10 - 0.045 s of
 * decoding. */
static void test_fallback_outage(void)
{
    scenario_t *s = sync_on_trace("fb.csv", "0,40,inf,inf,1\n5,40,inf,inf,0\n"
                                            "7,40,inf,inf,1\n1000\n", 10);
    s->warmup = 0;
    metrics_summary_t m;
    CHECK(run(s, 1, &m) == 0);
    printf("  off: link_stall %.6f s, itl_outage %.6f s, fallback_frac %g\n",
           m.value[METRIC_LINK_STALL_S], m.value[METRIC_ITL_OUTAGE_MEAN],
           m.value[METRIC_FALLBACK_FRAC]);
    CHECK_REL(m.value[METRIC_LINK_STALL_S], 1.985, 1e-9);
    CHECK_REL(m.value[METRIC_ITL_OUTAGE_MEAN], 0.414, 1e-9);
    CHECK(isnan(m.value[METRIC_FALLBACK_FRAC]) && isnan(m.value[METRIC_LOCAL_TOK_FRAC]));
    s->protocol.fallback.mode = FALLBACK_LOCAL;
    CHECK(run(s, 1, &m) == 0);
    printf("  local: fallback_frac %.6f, local_tok_frac %.6f, link_stall %g s, "
           "itl_outage %.6f s, throughput %.3f tok/s, stall_frac %.6f\n",
           m.value[METRIC_FALLBACK_FRAC], m.value[METRIC_LOCAL_TOK_FRAC],
           m.value[METRIC_LINK_STALL_S], m.value[METRIC_ITL_OUTAGE_MEAN],
           m.value[METRIC_THROUGHPUT], m.value[METRIC_EDGE_STALL_FRAC]);
    CHECK_REL(m.value[METRIC_FALLBACK_FRAC], 2.035 / 10, 1e-9);
    CHECK_REL(m.value[METRIC_LOCAL_TOK_FRAC], 199 / 660.0, 1e-12);
    CHECK(m.value[METRIC_LINK_STALL_S] == 0);
    CHECK_REL(m.value[METRIC_ITL_OUTAGE_MEAN], 2.030 / 199, 1e-9);
    CHECK_REL(m.value[METRIC_THROUGHPUT], 66, 1e-12);
    CHECK_REL(m.value[METRIC_EDGE_STALL_FRAC], (93 * 0.045 + 0.020) / (10 - 0.045), 1e-9);
    scen_del(s);
}

/* fallback.rtt_above on a fixed link, the same tenant (no trace): each
 * block's round trip as the edge measures it is rtt + v = 45 ms, the
 * link's own 40 ms. Above 50 ms nothing happens. Above 30 ms the link is
 * too slow from the start: the request starts in fallback, prefilled on
 * the device (0 s here) and never sent, and decodes alone: its first
 * token at 0, then one per 10 ms, 1000 by 10 s (fallback_frac 1).
 * Above 42 ms (the link fast enough, its blocks not): verdicts at 130
 * and 215 ms, both over, so the fallback begins at 0.215 s; one local
 * token (0.225 s), the link is usable, the reconcile's answer is back at
 * 0.270 s (rtt + v), and so on: each cycle of 0.225 s commits 2 verdicts
 * of 5 and 1 local token and spends 55 ms in fallback. */
static void test_fallback_rtt(void)
{
    scenario_t *s = scen_new(1, 1, proto_find("sync"), 4, 1.0, 0.010, 0.005, 0.040);
    s->duration = 10;
    s->warmup = 0;
    s->protocol.fallback = (fallback_cfg_t){.mode = FALLBACK_LOCAL, .rtt_above = 0.050,
                                            .after = 2, .has_after = 1};
    metrics_summary_t m;
    CHECK(run(s, 1, &m) == 0);
    CHECK(m.value[METRIC_FALLBACK_FRAC] == 0 && m.value[METRIC_LOCAL_TOK_FRAC] == 0);
    s->protocol.fallback.rtt_above = 0.030;
    CHECK(run(s, 1, &m) == 0);
    CHECK(m.value[METRIC_FALLBACK_FRAC] == 1);
    CHECK_REL(m.value[METRIC_LOCAL_TOK_FRAC], 1000 / 1001.0, 1e-12);
    CHECK(isnan(m.value[METRIC_LINK_STALL_S]));   /* the link does not vary */
    /* 44 cycles of 0.225 s from 0.045 s end at 9.945 s: 44 · 11 tokens,
     * then verdicts at 10.030 s and later are past the end (the 45th
     * cycle's first comes at 9.945 + 0.085). */
    s->protocol.fallback.rtt_above = 0.042;
    CHECK(run(s, 1, &m) == 0);
    printf("  rtt_above 42 ms: fallback_frac %.6f, local_tok_frac %.6f, throughput %.1f\n",
           m.value[METRIC_FALLBACK_FRAC], m.value[METRIC_LOCAL_TOK_FRAC],
           m.value[METRIC_THROUGHPUT]);
    CHECK_REL(m.value[METRIC_FALLBACK_FRAC], 44 * 0.055 / 10, 1e-9);
    CHECK_REL(m.value[METRIC_LOCAL_TOK_FRAC], 44 / (1 + 44 * 11.0), 1e-12);
    scen_del(s);
}

/* Loads yaml into *s and what `check` writes of it back into *t: 0, or
 * -1 (the failure checked and reported; nothing left to free). */
static int load_and_back(const char *yaml, scenario_t *s, scenario_t *t)
{
    err_t err = {0};
    int rc = scenario_load_string("t.yaml", yaml, NULL, 0, s, &err);
    if (rc) printf("  %s\n", err.msg);
    CHECK(rc == 0);
    if (rc) return -1;
    char *text = scentext_yaml(s);
    rc = text ? scenario_load_string("back.yaml", text, NULL, 0, t, &err) : -1;
    if (rc) printf("  %s\n", err.msg);
    CHECK(rc == 0);
    free(text);
    if (rc) scenario_fini(s);
    return rc ? -1 : 0;
}

/* protocol.fallback's keys: written back only when on, loaded back the
 * same; a protocol without edge drafts and cloud verification, or `after`
 * without rtt_above, is refused at the key, FILE:LINE:COL. */
static void test_fallback_keys(void)
{
    scenario_t s, t;
    err_t err = {0};
    if (load_and_back("protocol: {mode: async, fallback: {mode: local, rtt_above: 300ms, "
                      "after: 2}}\n", &s, &t) == 0) {
        const fallback_cfg_t *f = &s.protocol.fallback;
        CHECK(f->mode == FALLBACK_LOCAL && f->rtt_above == 0.3 && f->after == 2);
        CHECK(!memcmp(&t.protocol.fallback, f, sizeof *f));
        scenario_fini(&t);
        scenario_fini(&s);
    }
    CHECK(scenario_load_string("d.yaml", "protocol: {mode: async}\n", NULL, 0, &s, &err) == 0);
    char *text = scentext_yaml(&s);
    CHECK(text && !strstr(text, "fallback"));
    free(text);
    scenario_fini(&s);
    static const char *const bad[][2] = {
        {"protocol:\n  mode: edge-only\n  fallback: {mode: local}\n",
         "e.yaml:3:20: protocol.fallback.mode: 'local' needs"},
        {"protocol:\n  fallback: {mode: local, after: 2}\n",
         "e.yaml:2:34: protocol.fallback.after: counts blocks"},
        {"protocol:\n  fallback: {mode: remote}\n", "e.yaml:2:20: protocol.fallback.mode"},
    };
    for (size_t k = 0; k < sizeof bad / sizeof *bad; k++) {
        int rc = scenario_load_string("e.yaml", bad[k][0], NULL, 0, &s, &err);
        printf("  %s\n", err.msg);
        CHECK(rc != 0 && strncmp(err.msg, bad[k][1], strlen(bad[k][1])) == 0);
        if (rc == 0) scenario_fini(&s);
    }
}

/* Random offsets, Markov states and Gilbert-Elliott outages with 8
 * tenants and 3 replications: the same numbers at -j 1 and -j 3, and not
 * those of the link without them. */
static void test_threads_same(void)
{
    put("alt2.csv", "t_s,rtt_ms,up_mbps,down_mbps,up\n"
                    "0,40,20,50,1\n"
                    "3,90,5,10,1\n"
                    "5,40,20,50,0\n"
                    "5.5\n");
    scenario_t *s = scen_new(2, 4, proto_find("async"), 4, 0.7, 0.010, 0.005, 0.040);
    s->duration = 60;
    s->replications = 3;
    metrics_summary_t plain, a, b;
    CHECK(run(s, 1, &plain) == 0);
    network_cfg_t *n0 = &s->groups[0].network, *n1 = &s->groups[1].network;
    snprintf(n0->trace, sizeof n0->trace, "%s", path("alt2.csv"));
    n0->mean_up = 4;
    n0->mean_down = 0.3;
    n1->nstates = 2;
    n1->states[0] = (network_state_t){0.030, 1e7, 1e8, 2.0, 1, 0};
    n1->states[1] = (network_state_t){0.150, 1e6, 1e7, 0.5, 1, 0};
    CHECK(run(s, 1, &a) == 0);
    CHECK(run(s, 3, &b) == 0);
    int same = 1;
    for (int k = 0; k < METRIC_COUNT; k++)
        same &= metric_is_timing(k) ||
                (memcmp(&a.value[k], &b.value[k], sizeof a.value[k]) == 0 &&
                 memcmp(&a.ci95[k], &b.ci95[k], sizeof a.ci95[k]) == 0);
    CHECK(same);
    CHECK(a.value[METRIC_ITL_MEAN] > plain.value[METRIC_ITL_MEAN] * 1.05);
    scen_del(s);
}

/* Groups naming one trace file share one copy of it (build_link_t
 * .borrowed): the same results as each reading its own, and the copy
 * freed once (the sanitizer build checks that). */
static void test_groups_share_trace(void)
{
    put("share.csv", "t_s,rtt_ms,up_mbps,down_mbps,up\n0,40,20,50,1\n3,90,5,10,0\n4\n");
    put("share2.csv", "t_s,rtt_ms,up_mbps,down_mbps,up\n0,40,20,50,1\n3,90,5,10,0\n4\n");
    put("share.mm", "1\n2\n2\n5\n");
    scenario_t *s = scen_new(3, 2, proto_find("sync"), 4, 0.7, 0.010, 0.005, 0.040);
    s->duration = 30;
    for (int g = 0; g < 3; g++) {
        network_cfg_t *n = &s->groups[g].network;
        snprintf(n->trace, sizeof n->trace, "%s", path(g == 1 ? "share2.csv" : "share.csv"));
    }
    metrics_summary_t a, b;
    CHECK(run(s, 1, &a) == 0);
    /* The same bytes under one name for all three. */
    snprintf(s->groups[1].network.trace, sizeof s->groups[1].network.trace, "%s",
             path("share.csv"));
    CHECK(run(s, 1, &b) == 0);
    CHECK(a.value[METRIC_ITL_MEAN] == b.value[METRIC_ITL_MEAN]);
    for (int g = 0; g < 3; g++) {
        network_cfg_t *n = &s->groups[g].network;
        n->trace[0] = 0;
        snprintf(n->uplink_trace, sizeof n->uplink_trace, "%s", path("share.mm"));
        snprintf(n->downlink_trace, sizeof n->downlink_trace, "%s", path("share.mm"));
    }
    CHECK(run(s, 1, &a) == 0);
    CHECK(a.value[METRIC_THROUGHPUT] > 0);
    scen_del(s);
}

/* The loader: a state's rtt and rates default to its group's keys (a
 * group that changes rtt and inherits the states changes them too), and
 * what `check` writes loads back to the same links. */
static void test_states_keys(void)
{
    static const char *const yaml =
        "tenants:\n"
        "  network:\n"
        "    rtt: 50ms\n"
        "    uplink: 10Mbps\n"
        "    states:\n"
        "      - {mean: 2s}\n"
        "      - {mean: 1s, rtt: 200ms, up: false}\n"
        "    mean_up: 30s\n"
        "    mean_down: 500ms\n"
        "  groups:\n"
        "    - {name: a, count: 1}\n"
        "    - {name: b, count: 1, network: {rtt: 10ms, trace_stride: 2s}}\n";
    scenario_t s, t;
    if (load_and_back(yaml, &s, &t) != 0) return;
    const network_cfg_t *a = &s.groups[0].network, *b = &s.groups[1].network;
    CHECK(a->nstates == 2 && b->nstates == 2);
    CHECK(a->states[0].rtt == 0.050 && b->states[0].rtt == 0.010);
    CHECK(a->states[0].uplink_bps == 10e6 && isinf(a->states[0].downlink_bps));
    CHECK(a->states[1].rtt == 0.200 && b->states[1].rtt == 0.200);
    CHECK(a->states[0].up == 1 && a->states[1].up == 0 && a->states[1].mean == 1);
    CHECK(a->mean_up == 30 && b->mean_down == 0.5);
    CHECK(!a->has_trace_stride && b->has_trace_stride && b->trace_stride == 2);
    for (int g = 0; g < 2; g++) {
        const network_cfg_t *x = &s.groups[g].network, *y = &t.groups[g].network;
        CHECK(x->nstates == y->nstates &&
              !memcmp(x->states, y->states, sizeof x->states) &&
              x->mean_up == y->mean_up && x->mean_down == y->mean_down &&
              x->has_trace_stride == y->has_trace_stride &&
              x->trace_stride == y->trace_stride);
    }
    scenario_fini(&t);
    scenario_fini(&s);
}

int main(void)
{
    if (tmpdir_make("specsim_sim_link") != 0) return 1;
    RUN(test_sync_alternating_rtt);
    RUN(test_sync_outage_count);
    RUN(test_threads_same);
    RUN(test_groups_share_trace);
    RUN(test_states_keys);
    RUN(test_fallback_outage);
    RUN(test_fallback_keys);
    RUN(test_fallback_rtt);
    tmpdir_remove();
    return check_done();
}
