/* Scenario loading (sim/config/scenario.c, keytab.c, ynode.c): every default, the
 * closed-form hook, overrides, groups, acceptance models, data files, the
 * write/load round trip on every shipped scenario, and the bad-input files
 * under tests/data/scenarios/bad/ (each names its expected LINE:COLUMN and
 * key on its first line, shared with the CLI test). */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "check.h"
#include "simtest.h"
#include "entity/proto.h"
#include "config/scenario.h"
#include "scentext.h"

#define ROOT SPECSIM_ROOT "/"
/* A `--set PATH=VALUE` override as the command line gives it. */
#define SET(p, v) {.path = (p), .value = (v)}

static int load_str(const char *yaml, const scenario_override_t *ov, int nov,
                    scenario_t *s, err_t *err)
{
    int rc = scenario_load_string("test.yaml", yaml, ov, nov, s, err);
    if (rc != 0 && err->code != ERR_INPUT) printf("  %s\n", err->msg);
    return rc;
}

static int load_ok(const char *yaml, const scenario_override_t *ov, int nov,
                   scenario_t *s)
{
    err_t err = {0};
    int rc = load_str(yaml, ov, nov, s, &err);
    if (rc != 0) printf("  unexpected error: %s\n", err.msg);
    CHECK(rc == 0);
    return rc;
}

/* --- deep comparison (used by the round trip) --------------------------- */

static int dist_eq(const dist_t *a, const dist_t *b)
{
    if (a->kind != b->kind || a->n != b->n) return 0;
    if (a->kind == DIST_EMPIRICAL) {
        for (size_t i = 0; i < a->n; i++)
            if (a->values[i] != b->values[i]) return 0;
        return 1;
    }
    return a->a == b->a && (a->kind == DIST_CONST || a->kind == DIST_EXPONENTIAL || a->b == b->b);
}

static int hw_eq(const hw_card_t *a, const hw_card_t *b)
{
    for (int i = 0; i < PREC_COUNT; i++)
        if (a->flops[i] != b->flops[i]) return 0;
    return !strcmp(a->name, b->name) && !strcmp(a->kind, b->kind) &&
           !strcmp(a->source, b->source) && a->mem_bw == b->mem_bw &&
           a->mem_bytes == b->mem_bytes && a->bw_eff == b->bw_eff &&
           a->flops_eff == b->flops_eff;
}

static int llm_eq(const llm_card_t *a, const llm_card_t *b)
{
    return !strcmp(a->name, b->name) && !strcmp(a->source, b->source) &&
           a->layers == b->layers && a->hidden == b->hidden && a->heads == b->heads &&
           a->kv_heads == b->kv_heads && a->ffn == b->ffn && a->vocab == b->vocab &&
           a->gated_mlp == b->gated_mlp;
}

#define EQ(x) do { if (!(x)) { printf("  differs: %s\n", #x); return 0; } } while (0)

static int group_eq(const tenant_group_t *a, const tenant_group_t *b)
{
    EQ(!strcmp(a->name, b->name) && a->count == b->count);
    const edge_cfg_t *e = &a->edge, *f = &b->edge;
    EQ(hw_eq(&e->device, &f->device) && llm_eq(&e->draft, &f->draft));
    EQ(e->quant == f->quant && !strcmp(e->calibration, f->calibration));
    EQ(e->has_draft_time == f->has_draft_time && dist_eq(&e->draft_time, &f->draft_time));
    EQ(e->has_prefill_time == f->has_prefill_time &&
       dist_eq(&e->prefill_time, &f->prefill_time));
    EQ(e->overhead == f->overhead);
    const network_cfg_t *n = &a->network, *m = &b->network;
    EQ(n->rtt == m->rtt && dist_eq(&n->jitter, &m->jitter));
    EQ(n->uplink_bps == m->uplink_bps && n->downlink_bps == m->downlink_bps);
    EQ(n->overhead_bytes == m->overhead_bytes && n->bytes_per_token == m->bytes_per_token);
    const workload_cfg_t *w = &a->workload, *v = &b->workload;
    EQ(w->arrival == v->arrival && dist_eq(&w->think, &v->think) && w->rate == v->rate);
    EQ(dist_eq(&w->prompt_tokens, &v->prompt_tokens));
    EQ(dist_eq(&w->output_tokens, &v->output_tokens));
    return 1;
}

/* Same model, same parameters as written, and the same block law. */
static int accept_eq(const accept_cfg_t *x, const accept_cfg_t *y, int gamma)
{
    if (x->model != y->model) return 0;
    char *tx = NULL, *ty = NULL;
    size_t nx = 0, ny = 0;
    FILE *fx = open_memstream(&tx, &nx), *fy = open_memstream(&ty, &ny);
    int ok = fx && fy && accept_cfg_write(fx, x, 0) == 0 && accept_cfg_write(fy, y, 0) == 0;
    if (fx) fclose(fx);
    if (fy) fclose(fy);
    ok = ok && tx && ty && !strcmp(tx, ty);
    free(tx);
    free(ty);
    accept_law_t lx, ly;
    err_t e;
    if (!ok || accept_cfg_law(x, gamma, &lx, &e) != 0) return 0;
    if (accept_cfg_law(y, gamma, &ly, &e) != 0) {
        accept_law_fini(&lx);
        return 0;
    }
    ok = lx.nparts == ly.nparts && lx.ns == ly.ns;
    for (int p = 0; ok && p < lx.nparts; p++)
        for (int k = 0; k <= gamma; k++)
            ok &= accept_law_p(&lx, p, k) == accept_law_p(&ly, p, k);
    accept_law_fini(&lx);
    accept_law_fini(&ly);
    return ok;
}

static int scenario_eq(const scenario_t *a, const scenario_t *b)
{
    EQ(!strcmp(a->name, b->name) && a->seed == b->seed);
    EQ(a->duration == b->duration && a->warmup == b->warmup);
    EQ(a->replications == b->replications);
    EQ(a->protocol.proto == b->protocol.proto && a->protocol.gamma_policy == b->protocol.gamma_policy && a->protocol.gamma == b->protocol.gamma &&
       a->protocol.window == b->protocol.window);
    EQ(accept_eq(&a->acceptance, &b->acceptance, a->protocol.gamma));
    EQ(a->ngroups == b->ngroups && a->ntenants == b->ntenants);
    for (int g = 0; g < a->ngroups; g++) EQ(group_eq(&a->groups[g], &b->groups[g]));
    const cloud_cfg_t *c = &a->cloud, *d = &b->cloud;
    EQ(c->replicas == d->replicas && hw_eq(&c->gpu, &d->gpu) && llm_eq(&c->target, &d->target));
    EQ(c->precision == d->precision && !strcmp(c->calibration, d->calibration));
    EQ(c->batching.policy == d->batching.policy && c->batching.max_batch == d->batching.max_batch);
    EQ(c->batching.max_wait == d->batching.max_wait &&
       c->batching.max_tokens == d->batching.max_tokens);
    EQ(c->batching.multi_block == d->batching.multi_block);
    EQ(c->pinning == d->pinning && c->overhead == d->overhead);
    EQ(c->kv_capacity_bytes == d->kv_capacity_bytes);
    EQ(c->has_verify_time == d->has_verify_time && dist_eq(&c->verify_time, &d->verify_time));
    EQ(!strcmp(a->output.file, b->output.file) && !strcmp(a->output.trace, b->output.trace));
    return 1;
}

/* load(file) -> write -> load -> same struct, and the second write is the
 * same text as the first. */
static void round_trip_file(const char *path)
{
    scenario_t a, b;
    err_t err = {0};
    if (scenario_load(path, NULL, 0, &a, &err) != 0) {
        printf("  %s: %s\n", path, err.msg);
        CHECK(0);
        return;
    }
    char *t1 = scentext_yaml(&a);
    CHECK(t1 != NULL);
    int rc = t1 ? scenario_load_string("rt.yaml", t1, NULL, 0, &b, &err) : -1;
    if (rc != 0) printf("  reload of %s failed: %s\n", path, err.msg);
    CHECK(rc == 0);
    if (rc == 0) {
        if (!scenario_eq(&a, &b)) printf("  round trip changed %s\n", path);
        CHECK(scenario_eq(&a, &b));
        char *t2 = scentext_yaml(&b);
        /* Only the header line (source file) and the card comments differ. */
        const char *p1 = t1 ? strchr(t1, '\n') : NULL, *p2 = t2 ? strchr(t2, '\n') : NULL;
        CHECK(p1 && p2);
        if (p1 && p2) {
            char *c1 = strdup(p1), *c2 = strdup(p2);
            for (char *q; (q = strstr(c1, "  # ")) != NULL;) memmove(q, strchr(q, '\n'), strlen(strchr(q, '\n')) + 1);
            for (char *q; (q = strstr(c2, "  # ")) != NULL;) memmove(q, strchr(q, '\n'), strlen(strchr(q, '\n')) + 1);
            CHECK_STR(c1, c2);
            free(c1);
            free(c2);
        }
        free(t2);
        scenario_fini(&b);
    }
    free(t1);
    scenario_fini(&a);
}

/* --- tests --------------------------------------------------------------- */

static void test_defaults(void)
{
    scenario_t s;
    if (load_ok("", NULL, 0, &s) != 0) return;
    CHECK_STR(s.name, "test");
    CHECK(s.seed == 1 && s.duration == 60 && s.warmup == 5 && s.replications == 1);
    CHECK(s.protocol.proto == proto_find("async") && s.protocol.gamma == 4 && s.protocol.window == 4);
    CHECK(s.acceptance.model == accept_model_find("iid"));
    CHECK(accept_cfg_mean(&s.acceptance, 4) == 0.8);
    CHECK(s.ngroups == 1 && s.ntenants == 1);
    const tenant_group_t *g = &s.groups[0];
    CHECK_STR(g->name, "default");
    CHECK(g->count == 1);
    CHECK_STR(g->edge.device.name, "snapdragon-8-gen-3");
    CHECK_STR(g->edge.device_ref, "models/hardware/snapdragon-8-gen-3.yaml");
    CHECK_STR(g->edge.draft.name, "llama-2-7b");
    CHECK(g->edge.quant == PREC_W4A16 && g->edge.calibration[0] == 0);
    CHECK(!g->edge.has_draft_time && !g->edge.has_prefill_time && g->edge.overhead == 0);
    CHECK(g->network.rtt == 40.0 / 1e3);
    CHECK(g->network.jitter.kind == DIST_CONST && g->network.jitter.a == 0);
    CHECK(isinf(g->network.uplink_bps) && isinf(g->network.downlink_bps));
    CHECK(g->network.overhead_bytes == 64 && g->network.bytes_per_token == 4);
    CHECK(g->workload.arrival == ARRIVAL_CLOSED && g->workload.rate == 0);
    CHECK(g->workload.think.kind == DIST_CONST && g->workload.think.a == 0);
    CHECK(g->workload.prompt_tokens.kind == DIST_CONST && g->workload.prompt_tokens.a == 128);
    CHECK(g->workload.output_tokens.kind == DIST_CONST && g->workload.output_tokens.a == 256);
    const cloud_cfg_t *c = &s.cloud;
    CHECK(c->replicas == 1 && c->precision == PREC_FP16 && c->pinning == PIN_LEAST_LOADED);
    CHECK_STR(c->gpu.name, "h200");
    CHECK_STR(c->target.name, "llama-2-7b");
    CHECK(c->overhead == 0.5 / 1e3 && c->kv_capacity_bytes == 0 && !c->has_verify_time);
    CHECK(c->batching.policy == batch_policy_find("continuous") && c->batching.max_batch == 32);
    CHECK(c->batching.max_wait == 5.0 / 1e3 && c->batching.max_tokens == 0);
    CHECK(s.output.file[0] == 0 && s.output.trace[0] == 0);
    scenario_fini(&s);
}

static const char *CLOSED_FORM = SIMTEST_SYNC_HOOK_YAML;

static void test_closed_form_hook(void)
{
    scenario_t s;
    if (load_ok(CLOSED_FORM, NULL, 0, &s) != 0) return;
    CHECK_STR(s.name, "sync-closed-form");
    CHECK(s.seed == 7 && s.duration == 300 && s.warmup == 10 && s.replications == 4);
    CHECK(s.protocol.proto == proto_find("sync") && s.protocol.gamma == 4);
    CHECK(s.acceptance.model == accept_model_find("iid"));
    CHECK(accept_cfg_mean(&s.acceptance, 4) == 0.7);
    const tenant_group_t *g = &s.groups[0];
    CHECK(s.ntenants == 1 && g->edge.has_draft_time);
    CHECK(g->edge.draft_time.kind == DIST_CONST && g->edge.draft_time.a == 10.0 / 1e3);
    CHECK(g->network.rtt == 40.0 / 1e3 && g->network.jitter.a == 0);
    CHECK(g->workload.prompt_tokens.a == 1 && g->workload.output_tokens.a == 1e8);
    CHECK(s.cloud.has_verify_time && s.cloud.verify_time.a == 5.0 / 1e3);
    CHECK(s.cloud.batching.max_batch == 1);
    scenario_fini(&s);

    /* The same keys with a random verify time. */
    scenario_override_t ov[] = {SET("cloud.verify_time", "{dist: exponential, mean: 6ms}")};
    if (load_ok(CLOSED_FORM, ov, 1, &s) != 0) return;
    CHECK(s.cloud.verify_time.kind == DIST_EXPONENTIAL && s.cloud.verify_time.a == 6.0 / 1e3);
    scenario_fini(&s);
}

static void test_overrides(void)
{
    scenario_t s;
    scenario_override_t ov[] = {
        SET("protocol.gamma", "8"),
        SET("tenants.network.rtt", "25ms"),
        SET("cloud.verify_time", "{dist: uniform, min: 1ms, max: 3ms}"), /* new key */
        SET("output.file", "out.csv"),                                    /* new section */
        SET("cloud.gpu.mem_bw", "3TB/s"),        /* into a card given as a path */
        SET("tenants.workload.output_tokens", "{dist: lognormal, mean: 100, sd: 10}"),
        SET("acceptance.alphas", "[0.9, 0.5]"),
        SET("acceptance.model", "positional"),
        SET("cloud.batching", "{max_batch: 4}"),
    };
    if (load_ok("cloud: {gpu: models/hardware/h200.yaml}\n", ov, 9, &s) != 0) return;
    CHECK(s.protocol.gamma == 8);
    CHECK(s.groups[0].network.rtt == 25.0 / 1e3);
    CHECK(s.cloud.has_verify_time && s.cloud.verify_time.kind == DIST_UNIFORM);
    CHECK(s.cloud.verify_time.a == 1.0 / 1e3 && s.cloud.verify_time.b == 3.0 / 1e3);
    CHECK_STR(s.output.file, "out.csv");
    CHECK(s.cloud.gpu.mem_bw == 3e12 && s.cloud.gpu.flops[PREC_FP16] == 989.5e12);
    CHECK(s.groups[0].workload.output_tokens.kind == DIST_LOGNORMAL);
    CHECK(s.acceptance.model == accept_model_find("positional"));
    /* mean over gamma = 8 positions, last repeating: (0.9 + 7 * 0.5) / 8 */
    CHECK_REL(accept_cfg_mean(&s.acceptance, 8), 0.55, 1e-12);
    accept_law_t law;
    err_t lerr;
    CHECK(accept_cfg_law(&s.acceptance, 8, &law, &lerr) == 0);
    if (law.part) {   /* P(a = 0) = 1 - 0.9, P(a = 1) = 0.9 (1 - 0.5) */
        CHECK_REL(accept_law_p(&law, 0, 0), 0.1, 1e-12);
        CHECK_REL(accept_law_p(&law, 0, 1), 0.45, 1e-12);
        accept_law_fini(&law);
    }
    CHECK(s.cloud.batching.max_batch == 4 && s.cloud.batching.max_wait == 5.0 / 1e3);
    scenario_fini(&s);
}

static void check_set_error(const char *yaml, scenario_override_t *ov, int nov,
                            const char *prefix)
{
    scenario_t s;
    err_t err = {0};
    CHECK(load_str(yaml, ov, nov, &s, &err) == -1);
    CHECK(err.code == ERR_INPUT);
    if (strncmp(err.msg, prefix, strlen(prefix)) != 0)
        printf("  got '%s', wanted prefix '%s'\n", err.msg, prefix);
    CHECK(strncmp(err.msg, prefix, strlen(prefix)) == 0);
    scenario_t zero;
    memset(&zero, 0, sizeof zero);
    CHECK(memcmp(&s, &zero, sizeof s) == 0);  /* no partial output */
}

static void test_override_errors(void)
{
    /* Line = which --set (1-based); column inside "PATH=VALUE". */
    scenario_override_t a[] = {SET("seed", "3"), SET("protocol.gamma", "0")};
    check_set_error("", a, 2, "--set:2:16: protocol.gamma: must be in [1, 1024]");
    scenario_override_t b[] = {SET("protocol.gama", "3")};
    check_set_error("", b, 1, "--set:1:10: protocol.gama: unknown key (did you mean 'gamma'?)");
    scenario_override_t c[] = {SET("tenants.network.rtt.x", "3")};
    check_set_error("tenants: {network: {rtt: 40ms}}\n", c, 1,
                    "--set:1:17: tenants.network.rtt: is a value");
    scenario_override_t d[] = {SET("tenants.groups.nope.count", "3")};
    check_set_error("tenants: {groups: [{name: a, count: 1}]}\n", d, 1,
                    "--set:1:16: tenants.groups.nope: no list item");
    scenario_override_t e[] = {SET("duration", "[1")};
    check_set_error("", e, 1, "--set:1:12: duration: syntax error");
    scenario_override_t f[] = {SET("protocol..gamma", "3")};
    check_set_error("", f, 1, "--set:1:10: protocol..gamma: empty key");
    scenario_override_t g[] = {SET("tenants.network.jitter", "{dist: normal, mean: 1ms}")};
    check_set_error("", g, 1, "--set:1:24: tenants.network.jitter.sd: missing");
}

/* cloud.batching.multi_block: default true; false and --set are read;
 * anything but a boolean is an input error naming the key; the resolved
 * YAML writes it and reads back the same. */
static void test_multi_block(void)
{
    scenario_t s, b;
    if (load_ok("", NULL, 0, &s) != 0) return;
    CHECK(s.cloud.batching.multi_block == 1);
    scenario_fini(&s);
    if (load_ok("cloud: {batching: {multi_block: false}}\n", NULL, 0, &s) != 0) return;
    CHECK(s.cloud.batching.multi_block == 0);
    char *y = scentext_yaml(&s);
    CHECK(y && strstr(y, "multi_block: false") != NULL);
    err_t err = {0};
    CHECK(y && scenario_load_string("rt.yaml", y, NULL, 0, &b, &err) == 0);
    if (y && err.code == 0) {
        CHECK(b.cloud.batching.multi_block == 0);
        scenario_fini(&b);
    }
    free(y);
    scenario_fini(&s);
    scenario_override_t on[] = {SET("cloud.batching.multi_block", "true")};
    if (load_ok("cloud: {batching: {multi_block: false}}\n", on, 1, &s) != 0) return;
    CHECK(s.cloud.batching.multi_block == 1);
    scenario_fini(&s);
    scenario_override_t bad[] = {SET("cloud.batching.multi_block", "3")};
    check_set_error("", bad, 1, "--set:1:28: cloud.batching.multi_block:");
}

static void test_groups(void)
{
    scenario_t s;
    err_t err = {0};
    int rc = scenario_load(ROOT "scenarios/examples/groups.yaml", NULL, 0, &s, &err);
    if (rc != 0) printf("  %s\n", err.msg);
    CHECK(rc == 0);
    if (rc != 0) return;
    CHECK(s.ngroups == 3 && s.ntenants == 11);
    const tenant_group_t *ph = &s.groups[0], *lp = &s.groups[1], *js = &s.groups[2];
    CHECK_STR(ph->name, "phones");
    CHECK(ph->network.rtt == 60.0 / 1e3 && ph->network.uplink_bps == 20e6);
    /* Inherited from tenants.network: */
    CHECK(ph->network.jitter.kind == DIST_LOGNORMAL && ph->network.jitter.a == 2.0 / 1e3);
    CHECK(lp->network.rtt == 15.0 / 1e3 && isinf(lp->network.uplink_bps));
    CHECK_STR(lp->edge.device.name, "apple-m2");
    CHECK_STR(lp->edge.draft.name, "llama-2-7b");       /* inherited */
    CHECK_STR(js->edge.draft.name, "tinyllama-1.1b");
    CHECK(js->edge.quant == PREC_FP16 && ph->edge.quant == PREC_W4A16);
    CHECK(js->workload.output_tokens.kind == DIST_UNIFORM);   /* inherited */
    CHECK(scenario_tenant_group(&s, 0) == ph && scenario_tenant_group(&s, 5) == ph);
    CHECK(scenario_tenant_group(&s, 6) == lp && scenario_tenant_group(&s, 8) == lp);
    CHECK(scenario_tenant_group(&s, 9) == js && scenario_tenant_group(&s, 10) == js);
    CHECK(scenario_tenant_group(&s, 11) == NULL);
    scenario_fini(&s);

    /* Group paths by name and by index, and appending a group. */
    scenario_override_t ov[] = {SET("tenants.groups.laptops.network.rtt", "5ms"),
                                SET("tenants.groups.0.count", "2"),
                                SET("tenants.groups.3", "{name: pis, count: 1}"),
                                SET("tenants.groups.pis.edge.device",
                                    "models/hardware/raspberry-pi-5.yaml")};
    rc = scenario_load(ROOT "scenarios/examples/groups.yaml", ov, 4, &s, &err);
    if (rc != 0) printf("  %s\n", err.msg);
    CHECK(rc == 0);
    if (rc != 0) return;
    CHECK(s.ngroups == 4 && s.ntenants == 2 + 3 + 2 + 1);
    CHECK(s.groups[1].network.rtt == 5.0 / 1e3);
    CHECK_STR(s.groups[3].edge.device.name, "raspberry-pi-5");
    CHECK(s.groups[3].network.rtt == 40.0 / 1e3);   /* tenants-level value */
    scenario_fini(&s);
}

static void test_acceptance_models(void)
{
    scenario_t s;
    err_t err = {0};
    static const struct { const char *file, *m; double alpha; } c[] = {
        /* (0.9 + 0.8 + 0.7 + 0.6 + 0.6 + 0.6) / 6 */
        {"accept-positional", "positional", 0.7},
        /* a / (a + b) = 6 / 8 */
        {"accept-beta", "beta", 0.75},
        /* pi_good = 0.08 / 0.10 = 0.8: 0.8 * 0.95 + 0.2 * 0.3 */
        {"accept-markov", "markov", 0.82},
    };
    for (size_t i = 0; i < sizeof c / sizeof *c; i++) {
        char path[512];
        snprintf(path, sizeof path, ROOT "scenarios/examples/%s.yaml", c[i].file);
        CHECK(scenario_load(path, NULL, 0, &s, &err) == 0);
        CHECK(s.acceptance.model == accept_model_find(c[i].m));
        CHECK_REL(accept_cfg_mean(&s.acceptance, s.protocol.gamma), c[i].alpha, 1e-12);
        scenario_fini(&s);
    }
    CHECK(scenario_load(ROOT "scenarios/examples/accept-trace.yaml", NULL, 0, &s, &err) == 0);
    static const int want[] = {4, 4, 2, 4, 0, 3, 4, 1, 4, 4};
    CHECK(s.acceptance.model == accept_model_find("trace"));
    /* Tenant 0 replays the file from its first line; with gamma above every
     * value nothing is capped, so the draws are the file. */
    accept_t *a = accept_create(&s.acceptance, 1, 0, 0, &err);
    CHECK(a != NULL);
    for (int i = 0; a && i < 20; i++) CHECK(accept_draw(a, 100) == want[i % 10]);
    accept_free(a);
    scenario_fini(&s);
}

static void test_empirical_and_alias(void)
{
    char path[] = "/tmp/specsim_test_emp_XXXXXX";
    int fd = mkstemp(path);
    CHECK(fd >= 0);
    FILE *f = fdopen(fd, "w");
    fputs("# think times\n1ms\n\n  2ms \n3ms\n", f);
    fclose(f);
    char yaml[512];
    snprintf(yaml, sizeof yaml,
             "duration: &d 30s\n"
             "cloud: {batching: {max_wait: *d}}\n"
             "tenants:\n"
             "  workload:\n"
             "    think: {dist: empirical, file: %s}\n"
             "    prompt_tokens: {dist: empirical, values: [10, 20]}\n", path);
    scenario_t s;
    if (load_ok(yaml, NULL, 0, &s) == 0) {
        const dist_t *t = &s.groups[0].workload.think;
        CHECK(t->kind == DIST_EMPIRICAL && t->n == 3);
        if (t->n == 3) CHECK(t->values[0] == 1.0 / 1e3 && t->values[2] == 3.0 / 1e3);
        CHECK(s.groups[0].workload.prompt_tokens.n == 2);
        CHECK(s.cloud.batching.max_wait == 30);
        scenario_fini(&s);
    }
    /* A bad line names the data file and its line. */
    f = fopen(path, "w");
    fputs("1ms\n2 parsecs\n", f);
    fclose(f);
    err_t err = {0};
    CHECK(load_str(yaml, NULL, 0, &s, &err) == -1);
    char want[128];
    snprintf(want, sizeof want, "%s:2:1: tenants.workload.think.file: unknown unit", path);
    CHECK(strncmp(err.msg, want, strlen(want)) == 0);
    remove(path);
}

static void test_round_trips(void)
{
    round_trip_file(ROOT "scenarios/default.yaml");
    DIR *d = opendir(ROOT "scenarios/examples");
    CHECK(d != NULL);
    int n = 0;
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (l < 6 || strcmp(e->d_name + l - 5, ".yaml") != 0) continue;
        char path[768];
        snprintf(path, sizeof path, ROOT "scenarios/examples/%s", e->d_name);
        round_trip_file(path);
        n++;
    }
    if (d) closedir(d);
    CHECK(n >= 11);

    /* Inline values that need quoting, odd numbers and every dist kind. */
    scenario_t a, b;
    const char *y =
        "name: \"odd: name # x\"\n"
        "duration: 0.1234567891s\nwarmup: 1ns\n"
        "tenants:\n"
        "  groups:\n"
        "    - {name: g1, count: 3, network: {jitter: {dist: pareto, scale: 1ms, shape: 2.5}}}\n"
        "    - {name: g2, count: 1, edge: {draft_time: {dist: normal, mean: 3ms, sd: 1ms},\n"
        "       prefill_time: {dist: empirical, values: [1ms, 7us]}},\n"
        "       network: {uplink: 1.5Mbps, downlink: 3MB/s},\n"
        "       workload: {arrival: poisson, rate: 0.3}}\n"
        "cloud: {kv_capacity: 10GiB, gpu: {kind: gpu, mem_bw: 1.1TB/s, mem: 3GB,\n"
        "        flops: {fp32: 1TFLOPS, fp16: 3TFLOPS}, source: 'a \"quoted\" source'}}\n"
        "acceptance: {model: markov, alpha_good: 0.9, alpha_bad: 0.1, p_good_bad: 0,\n"
        "             p_bad_good: 0}\n";
    if (load_ok(y, NULL, 0, &a) != 0) return;
    char *t = scentext_yaml(&a);
    CHECK(t != NULL);
    err_t err = {0};
    int rc = t ? scenario_load_string("rt", t, NULL, 0, &b, &err) : -1;
    if (rc != 0) printf("  %s\n%s\n", err.msg, t);
    CHECK(rc == 0);
    if (rc == 0) {
        CHECK(scenario_eq(&a, &b));
        CHECK_STR(b.name, "odd: name # x");
        /* A frozen chain: half the tenants start good (accept_markov.c). */
        CHECK(accept_cfg_mean(&b.acceptance, 4) == 0.5 * 0.9 + 0.5 * 0.1);
        scenario_fini(&b);
    }
    free(t);
    scenario_fini(&a);
}

/* Bad inputs: each file's first line is "# expect: [FILE:]LINE:COL KEY". */
static void check_bad_file(const char *path)
{
    FILE *f = fopen(path, "r");
    char first[512] = "";
    CHECK(f != NULL);
    if (!f) return;
    if (!fgets(first, sizeof first, f)) first[0] = 0;
    fclose(f);
    first[strcspn(first, "\n")] = 0;
    CHECK(strncmp(first, "# expect: ", 10) == 0);
    char loc[300], key[200];
    if (sscanf(first + 10, "%299s %199[^\n]", loc, key) != 2) {
        printf("  %s: bad expect line\n", path);
        CHECK(0);
        return;
    }
    /* loc is LINE:COL (this file) or FILE:LINE:COL (a file it refers to). */
    char want[600];
    int colons = 0;
    for (const char *p = loc; *p; p++) colons += *p == ':';
    if (colons == 1) snprintf(want, sizeof want, "%s:%s: %s: ", path, loc, key);
    else snprintf(want, sizeof want, "%s: %s: ", loc, key);
    scenario_t s;
    err_t err = {0};
    int rc = scenario_load(path, NULL, 0, &s, &err);
    CHECK(rc == -1);
    CHECK(err.code == ERR_INPUT);
    const char *at = colons == 1 ? (strncmp(err.msg, want, strlen(want)) == 0 ? err.msg : NULL)
                                 : strstr(err.msg, want);
    /* A FILE: form must match a whole path component at the start. */
    if (at && colons > 1 && at != err.msg && at[-1] != '/') at = NULL;
    if (!at) printf("  %s:\n    got  '%s'\n    want '%s...'\n", path, err.msg, want);
    CHECK(at != NULL);
    scenario_t zero;
    memset(&zero, 0, sizeof zero);
    CHECK(memcmp(&s, &zero, sizeof s) == 0);
}

static int check_bad_dir(const char *dir)
{
    return check_each_file(dir, ".yaml", check_bad_file);
}

static void test_bad_inputs(void)
{
    CHECK(check_bad_dir(ROOT "tests/data/scenarios/bad") >= 14);
    /* Errors inside a file the scenario refers to (card, trace). */
    CHECK(check_bad_dir(ROOT "tests/data/scenarios/badref") >= 2);
}

static void test_misc_errors(void)
{
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load("/nonexistent/x.yaml", NULL, 0, &s, &err) == -1);
    CHECK(err.code == ERR_INPUT);
    CHECK(load_str("- 1\n- 2\n", NULL, 0, &s, &err) == -1);
    CHECK(strncmp(err.msg, "test.yaml:1:1: (top level): a scenario is a mapping", 50) == 0);
    CHECK(load_str("a: 1\n---\nb: 2\n", NULL, 0, &s, &err) == -1);
    CHECK(strstr(err.msg, "only one YAML document") != NULL);
    CHECK(load_str("sweep: {protocol.gamma: [1, 2]}\nseed: 3\n", NULL, 0, &s, &err) == 0);
    CHECK(s.seed == 3);
    scenario_fini(&s);
    CHECK(load_str("seed: 18446744073709551616\n", NULL, 0, &s, &err) == -1);
    CHECK(strncmp(err.msg, "test.yaml:1:7: seed:", 20) == 0);
    CHECK(load_str("tenants: {groups: []}\n", NULL, 0, &s, &err) == -1);
    CHECK(strncmp(err.msg, "test.yaml:1:19: tenants.groups: the list is empty", 48) == 0);
}

/* A scenario file with no document — empty, comments only, a bare `---` or
 * a null — is refused ("FILE: empty scenario"), also with overrides that
 * would otherwise fill it; it once ran every default with one tenant. */
static void test_empty_file(void)
{
    static const char *const texts[] = {"", "\n\n", "# only a comment\n# another\n",
                                        "---\n", "~\n"};
    for (size_t i = 0; i < sizeof texts / sizeof *texts; i++) {
        char path[] = "/tmp/specsim_test_empty_XXXXXX";
        int fd = mkstemp(path);
        CHECK(fd >= 0);
        if (fd < 0) continue;
        FILE *f = fdopen(fd, "w");
        CHECK(f != NULL);
        if (!f) continue;
        fputs(texts[i], f);
        fclose(f);
        char want[96];
        snprintf(want, sizeof want, "%s: empty scenario", path);
        scenario_t s;
        err_t err = {0};
        CHECK(scenario_load(path, NULL, 0, &s, &err) == -1);
        CHECK(err.code == ERR_INPUT);
        CHECK_STR(err.msg, want);
        scenario_override_t ov[] = {{.path = "seed", .value = "2"}};
        CHECK(scenario_load_text(path, texts[i], strlen(texts[i]), ov, 1, &s, &err) == -1);
        CHECK_STR(err.msg, want);
        unlink(path);
    }
    /* One key is not empty. */
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load_text("x.yaml", "# c\nseed: 5\n", 12, NULL, 0, &s, &err) == 0);
    if (err.code == 0) {
        CHECK(s.seed == 5);
        scenario_fini(&s);
    }
}

int main(void)
{
    RUN(test_defaults);
    RUN(test_closed_form_hook);
    RUN(test_overrides);
    RUN(test_override_errors);
    RUN(test_multi_block);
    RUN(test_groups);
    RUN(test_acceptance_models);
    RUN(test_empirical_and_alias);
    RUN(test_round_trips);
    RUN(test_bad_inputs);
    RUN(test_misc_errors);
    RUN(test_empty_file);
    return check_done();
}
