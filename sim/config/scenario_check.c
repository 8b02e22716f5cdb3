/* scenario_check — the checks that need the whole resolved scenario (an
 * output file's format, gamma against a policy's and a token limit, an
 * acceptance model against gamma, one request trace for the fleet), then
 * its build (sim/config/build.h), each error at the key as written while
 * the node tree is at hand. Private to the loader (sim/config/scenario_int.h).
 */
#include "config/scenario_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "config/build.h"
#include "entity/proto.h"
#include "io/outpath.h"
#include "model/gamma.h"

/* --- checks of the whole scenario -------------------------------------- */

/* Some checks need several sections at once (a batch token limit against
 * gamma, the cards against a calibration table), so they run once the
 * scenario is resolved — still with the node tree at hand, so their errors
 * point at the key as written, like every other. */

/* Where dotted key `key` (list items by index: tenants.groups.1.count) was
 * written: the mark of its value when the tree gives it; for a key left to
 * its default, the mark of the nearest enclosing key it gives, or of the
 * document. *at is filled and returned. */
static const ynode_t *written_at(const ynode_t *root, const char *key, ynode_t *at)
{
    *at = (ynode_t){.src = root->src, .line = root->line, .col = root->col};
    const ynode_t *cur = root;
    char seg[KEYTAB_KEY_MAX];
    for (const char *p = key; cur && *p;) {
        size_t n = strcspn(p, ".");
        if (n >= sizeof seg) break;
        memcpy(seg, p, n);
        seg[n] = 0;
        p += n + (p[n] == '.');
        const ynode_t *next = NULL;
        if (cur->kind == YNODE_MAP) {
            const ynode_pair_t *pr = ynode_find(cur, seg);
            if (!pr) break;
            *at = (ynode_t){.src = pr->ksrc, .line = pr->kline, .col = pr->kcol};
            next = pr->val;
        } else if (cur->kind == YNODE_SEQ && scenario_all_digits(seg) && n < 10 &&
                   (size_t)atol(seg) < cur->n) {
            next = cur->items[atol(seg)];
            *at = (ynode_t){.src = next->src, .line = next->line, .col = next->col};
        } else {
            break;
        }
        if (!*p) return next;
        cur = next;
    }
    return at;
}

static int written(const ynode_t *root, const char *key)
{
    ynode_t at;
    const ynode_t *n = written_at(root, key, &at);
    return n != &at;
}

/* The dotted key that sets per-tenant key `sub` ("edge.calibration") for
 * group g: the group's own, unless the scenario has no groups or the group
 * inherits a tenants-level key it does not override. */
static void group_key(const ynode_t *root, int g, const char *sub, char *key)
{
    char own[KEYTAB_KEY_MAX], shared[KEYTAB_KEY_MAX];
    snprintf(own, sizeof own, "tenants.groups.%d.%s", g, sub);
    keytab_join(shared, "tenants", sub);
    int grouped = written(root, "tenants.groups");
    const char *k = grouped && !written(root, own) && written(root, shared) ? shared
                    : grouped ? own : shared;
    snprintf(key, KEYTAB_KEY_MAX, "%s", k);
}

/* "WHERE: key: <message already in err>" at the key as written. */
static int blame_key(sctx_t *x, const char *key)
{
    if (x->kc.err->code != ERR_INPUT) return -1;
    char inner[ERR_MSG_MAX];
    snprintf(inner, sizeof inner, "%s", x->kc.err->msg);
    ynode_t at;
    return keytab_err(&x->kc, written_at(x->root, key, &at), key, "%s", inner);
}

/* `run` writes output.file only after simulating: a name whose suffix
 * names no format is refused now. */
static int check_output_file(sctx_t *x)
{
    const char *f = x->s->output.file;
    if (!f[0] || outpath_check(f, x->kc.err) == 0) return 0;
    return blame_key(x, "output.file");
}

/* A policy that maximises the protocol's closed-form rate cannot serve a
 * protocol that gives none (proto_ops_t.block_rate). */
static int check_gamma_rate(sctx_t *x)
{
    const scenario_t *s = x->s;
    ynode_t at;
    for (int gi = 0; gi < s->ngroups; gi++) {
        const protocol_cfg_t *p = scenario_group_protocol(s, gi);
        if (!p->proto->verifies || !p->gamma_policy->uses_rate || p->proto->block_rate)
            continue;
        const char *key = "protocol.gamma_policy";
        return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                          "'%s' maximises the closed-form rate of the protocol, which "
                          "protocol.mode '%s' does not give", p->gamma_policy->name,
                          p->proto->name);
    }
    return 0;
}

/* protocol.fallback decodes with the edge's draft model and reconciles
 * with the cloud's target: only a protocol that drafts on the edge and
 * verifies on the cloud (sync, async) has both; `after` counts blocks over
 * rtt_above, so it means nothing without it. The message stands at the
 * key as written: the group's own, else the top level's. */
static int check_fallback(sctx_t *x)
{
    const scenario_t *s = x->s;
    ynode_t at;
    for (int gi = 0; gi < s->ngroups; gi++) {
        const protocol_cfg_t *p = scenario_group_protocol(s, gi);
        const fallback_cfg_t *f = &p->fallback;
        if (f->mode == FALLBACK_OFF && !f->has_after) continue;
        int bad_mode = f->mode != FALLBACK_OFF &&
                       !(p->proto->drafts && p->proto->verifies && !p->proto->cloud_drafts);
        int bad_after = f->has_after && !(f->rtt_above > 0);
        if (!bad_mode && !bad_after) continue;
        const char *sub = bad_mode ? "mode" : "after";
        char own[KEYTAB_KEY_MAX], key[KEYTAB_KEY_MAX];
        snprintf(own, sizeof own, "tenants.groups.%d.protocol.fallback.%s", gi, sub);
        if (written(x->root, "tenants.groups") && written(x->root, own))
            snprintf(key, sizeof key, "%s", own);
        else
            snprintf(key, sizeof key, "protocol.fallback.%s", sub);
        if (bad_mode)
            return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                              "'local' needs a protocol that drafts on the edge and "
                              "verifies on the cloud (sync or async), not protocol.mode "
                              "'%s'", p->proto->name);
        return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                          "counts blocks whose round trip exceeds rtt_above: give "
                          "protocol.fallback.rtt_above too");
    }
    return 0;
}

/* A block of gamma drafts is verified as gamma + 1 tokens in one iteration:
 * a smaller iteration limit could never verify one. */
static int check_token_limit(sctx_t *x)
{
    const scenario_t *s = x->s;
    int mt = s->cloud.batching.max_tokens;
    ynode_t at;
    /* Once, not per group: it walks every group (quadratic in their count). */
    int mixed = scenario_mixed(s);
    for (int gi = 0; gi < s->ngroups; gi++) {
        const protocol_cfg_t *p = scenario_group_protocol(s, gi);
        if (!p->proto->verifies) continue;
        int g = p->gamma_policy->limit(p->gamma);
        char whose[96] = "";
        if (mixed)
            snprintf(whose, sizeof whose, " of group %s", s->groups[gi].name);
        if (g < 1 || g > GAMMA_MAX) {
            const char *key = "protocol.gamma_policy";
            return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                              "policy '%s' allows gamma up to %d for gamma %d%s; "
                              "must be within [1, %d]", p->gamma_policy->name, g,
                              p->gamma, whose, GAMMA_MAX);
        }
        if (mt <= 0 || mt >= g + 1) continue;
        const char *key = "cloud.batching.max_tokens";
        return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                          "%d is below gamma + 1 = %d%s (the largest gamma policy "
                          "'%s' may use), so a block might never be verified",
                          mt, g + 1, whose, p->gamma_policy->name);
    }
    return 0;
}

/* The dotted key that set group gi's key `sub` of `section` (acceptance,
 * protocol): in its own section when it gives it there, else the top
 * level's. */
static void section_key(const ynode_t *root, int gi, const char *section, const char *sub,
                        char *key)
{
    char own[KEYTAB_KEY_MAX];
    snprintf(own, sizeof own, "tenants.groups.%d.%.16s.%.64s", gi, section, sub);
    if (written(root, "tenants.groups") && written(root, own))
        snprintf(key, KEYTAB_KEY_MAX, "%s", own);
    else
        snprintf(key, KEYTAB_KEY_MAX, "%.16s.%.64s", section, sub);
}

/* protocol.gamma written with a tree must be its node count (the tree
 * sets gamma: sim/config/scenario_keys.c). */
static int check_tree_gamma(sctx_t *x, int gi, const tree_t *t)
{
    char key[KEYTAB_KEY_MAX];
    ynode_t at;
    section_key(x->root, gi, "protocol", "gamma", key);
    const ynode_t *v = written_at(x->root, key, &at);
    if (v == &at || v->kind != YNODE_SCALAR) return 0;
    char *end = NULL;
    long g = strtol(v->str, &end, 10);
    if (end != v->str && !*end && g == t->n) return 0;
    return keytab_err(&x->kc, v, key, "%s differs from protocol.tree's %d nodes (a "
                      "tree's drafts are its nodes: leave gamma out)", v->str, t->n);
}

/* A budget tree's shape (protocol.tree.budget) comes from its acceptance
 * model's probabilities, known once both sections are read: built here for
 * the scenario's protocol and each group's own (check_tree has made sure
 * each used one has a model of tree acceptance). */
static void tree_build_one(protocol_cfg_t *p, const accept_cfg_t *a)
{
    if (p->tree.given != TREE_BUDGET || p->tree.built || !a->model ||
        !a->model->tree_probs)
        return;
    tree_from_budget(&p->tree, a->model->tree_probs(a->par));
}

static int tree_build_budgets(scenario_t *s)
{
    tree_build_one(&s->protocol, &s->acceptance);
    for (int gi = 0; s->groups && gi < s->ngroups; gi++) {
        tenant_group_t *G = &s->groups[gi];
        if (G->protocol.proto)
            tree_build_one(&G->protocol, scenario_group_acceptance(s, gi));
    }
    return 0;
}

/* A token tree (protocol.tree) needs a protocol that serves trees, a fixed
 * block (no speculation-length policy sizes trees), and an acceptance model
 * that judges trees. */
static int check_tree(sctx_t *x)
{
    const scenario_t *s = x->s;
    char key[KEYTAB_KEY_MAX];
    ynode_t at;
    for (int gi = 0; gi < s->ngroups; gi++) {
        const protocol_cfg_t *p = scenario_group_protocol(s, gi);
        if (p->tree.n == 0) continue;
        section_key(x->root, gi, "protocol", "tree", key);
        if (!p->proto->trees)
            return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                              "protocol.mode '%s' does not serve token trees "
                              "(sync, async and cloud-spec do; it verifies no "
                              "drafted blocks)", p->proto->name);
        if (p->gamma_policy->next) {
            section_key(x->root, gi, "protocol", "gamma_policy", key);
            return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                              "'%s' sizes chains; with protocol.tree the block is "
                              "the tree as given: use gamma_policy: fixed",
                              p->gamma_policy->name);
        }
        const accept_cfg_t *a = scenario_group_acceptance(s, gi);
        if (!a->model->draw_tree) {
            section_key(x->root, gi, "acceptance", "model", key);
            return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                              "'%s' judges chains only; protocol.tree needs a model "
                              "of tree acceptance: model: tree", a->model->name);
        }
        if (check_tree_gamma(x, gi, &p->tree) != 0) return -1;
    }
    return tree_build_budgets(x->s);
}

/* A model's gamma check says "KEY: what": the message at that key. */
static int blame_accept_key(sctx_t *x, int gi)
{
    char *msg = x->kc.err->msg, sub[KEYTAB_KEY_MAX] = "model", key[KEYTAB_KEY_MAX];
    char *sep = strstr(msg, ": ");
    if (sep && (size_t)(sep - msg) < sizeof sub && !memchr(msg, ' ', (size_t)(sep - msg))) {
        snprintf(sub, sizeof sub, "%.*s", (int)(sep - msg), msg);
        memmove(msg, sep + 2, strlen(sep + 2) + 1);
    }
    section_key(x->root, gi, "acceptance", sub, key);
    return blame_key(x, key);
}

/* Every verifying group's acceptance model can serve its blocks (a trace
 * of block lengths only at the gamma it was recorded at). */
static int check_accept_gamma(sctx_t *x)
{
    const scenario_t *s = x->s;
    for (int gi = 0; gi < s->ngroups; gi++) {
        const protocol_cfg_t *p = scenario_group_protocol(s, gi);
        if (!p->proto->verifies) continue;
        const accept_cfg_t *a = scenario_group_acceptance(s, gi);
        int lim = p->gamma_policy->limit(p->gamma);
        if (accept_cfg_check_gamma(a, p->gamma, x->kc.err) == 0 &&
            (lim == p->gamma || accept_cfg_check_gamma(a, lim, x->kc.err) == 0))
            continue;
        if (scenario_mixed(s)) {
            err_t *e = x->kc.err;
            size_t n = strlen(e->msg);
            snprintf(e->msg + n, sizeof e->msg - n, " (group %s)", s->groups[gi].name);
        }
        return blame_accept_key(x, gi);
    }
    return 0;
}

/* Refuses groups g and g0 whose `sub` (workload.trace or workload.time_scale)
 * disagree, at g's key when g writes it, else at g0's (the one that departs
 * from what g inherits). */
static int refuse_trace_differs(sctx_t *x, int g, int g0, const char *sub)
{
    char key[KEYTAB_KEY_MAX];
    ynode_t at;
    group_key(x->root, g, sub, key);
    if (!written(x->root, key)) group_key(x->root, g0, sub, key);
    return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                      "every group with arrival: trace replays the same trace with "
                      "the same time_scale (one trace feeds the fleet; its tenant "
                      "column picks the tenant)");
}

/* One trace feeds every group with arrival: trace (its tenant column counts
 * over the whole fleet), so they must all name the same file and scale. */
static int check_trace_keys(sctx_t *x)
{
    const scenario_t *s = x->s;
    int first = -1;
    for (int g = 0; g < s->ngroups; g++) {
        const workload_cfg_t *w = &s->groups[g].workload;
        if (w->arrival != ARRIVAL_TRACE) continue;
        char key[KEYTAB_KEY_MAX];
        ynode_t at;
        group_key(x->root, g, "workload.trace", key);
        if (!w->trace[0])
            return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                              "required when arrival is trace (a request trace "
                              "CSV file)");
        if (first < 0) {
            first = g;
            continue;
        }
        const workload_cfg_t *w0 = &s->groups[first].workload;
        if (strcmp(w->trace, w0->trace) != 0)
            return refuse_trace_differs(x, g, first, "workload.trace");
        if (workload_time_scale(w) != workload_time_scale(w0))
            return refuse_trace_differs(x, g, first, "workload.time_scale");
    }
    return 0;
}

/* workload.session draws each session's turns and, between sessions, the
 * gap the tenant stays away: a closed loop's think times give that rhythm.
 * Poisson and trace arrivals come whenever their process or file says, so
 * a session's turns would have no order to follow: refused, not guessed.
 * A gap needs turns to mean anything. */
static int check_session_keys(sctx_t *x)
{
    const scenario_t *s = x->s;
    for (int g = 0; g < s->ngroups; g++) {
        const workload_cfg_t *w = &s->groups[g].workload;
        char key[KEYTAB_KEY_MAX];
        ynode_t at;
        if (w->session.has_gap && !w->session.has_turns) {
            group_key(x->root, g, "workload.session.gap", key);
            return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                              "is the time between sessions: give "
                              "workload.session.turns too");
        }
        if (!w->session.has_turns || w->arrival == ARRIVAL_CLOSED) continue;
        group_key(x->root, g, "workload.session.turns", key);
        return keytab_err(&x->kc, written_at(x->root, key, &at), key,
                          "sessions need arrival: closed (think time between "
                          "turns, gap between sessions), not arrival: %s",
                          w->arrival == ARRIVAL_POISSON ? "poisson" : "trace");
    }
    return 0;
}

/* Commands that write no trace refuse output.trace: where it was given is
 * kept for their message (scenario_refuse_trace). */
static void note_trace_at(sctx_t *x)
{
    output_cfg_t *o = &x->s->output;
    o->trace_at[0] = '\0';
    if (!o->trace[0]) return;
    ynode_t at;
    const ynode_t *n = written_at(x->root, "output.trace", &at);
    ynode_where(o->trace_at, sizeof o->trace_at, n->src, n->line, n->col);
}

/* Where duration and the arrivals' key were written, for the run budget's
 * messages (sim/run/guard.c), which come once the tree is gone. A key left
 * to its default points where written_at says (the enclosing key, or the
 * document). */
static void note_run_keys(sctx_t *x)
{
    scenario_t *s = x->s;
    ynode_t at;
    const ynode_t *n = written_at(x->root, "duration", &at);
    ynode_where(s->duration_at, sizeof s->duration_at, n->src, n->line, n->col);
    int rate;
    int k = scenario_arrivals_group(s, &rate);
    char key[KEYTAB_KEY_MAX];
    group_key(x->root, k, rate ? "workload.rate" : "workload.trace", key);
    n = written_at(x->root, key, &at);
    ynode_where(s->arrivals_at, sizeof s->arrivals_at, n->src, n->line, n->col);
}

/* build_where_t.key: a group's canonical key (tenants.groups.G.SUB) or a
 * replica group's (cloud.replica_groups.K.SUB) to the key that set it. */
static void where_key(void *ctx, const char *key, char *out, size_t outsz)
{
    const sctx_t *x = ctx;
    int i, n = 0;
    if (sscanf(key, "tenants.groups.%d.%n", &i, &n) == 1 && n > 0) {
        group_key(x->root, i, key + n, out);
        return;
    }
    n = 0;
    if (sscanf(key, "cloud.replica_groups.%d.%n", &i, &n) == 1 && n > 0) {
        snprintf(out, outsz, "cloud.%s", key + n);
        if (written(x->root, key) || !written(x->root, out)) snprintf(out, outsz, "%s", key);
        return;
    }
    snprintf(out, outsz, "%s", key);
}

static int where_blame(void *ctx, const char *key, err_t *err)
{
    sctx_t *x = ctx;
    (void)err;   /* x->kc.err is err */
    return blame_key(x, key);
}

int scenario_check_whole(sctx_t *x)
{
    note_trace_at(x);
    note_run_keys(x);
    if (check_output_file(x) != 0 || check_tree(x) != 0 || check_gamma_rate(x) != 0 ||
        check_token_limit(x) != 0 || check_accept_gamma(x) != 0 ||
        check_fallback(x) != 0 ||
        check_trace_keys(x) != 0 || check_session_keys(x) != 0)
        return -1;
    build_where_t where = {x, where_key, where_blame};
    x->s->built = build_create(x->s, x->kc.files, &where, x->kc.err);
    return x->s->built ? 0 : -1;
}
