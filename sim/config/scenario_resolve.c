/* scenario_resolve — the node tree into scenario_t through the key tables,
 * section by section: tenant groups over two layers (the tenants-level
 * section, then the group's own), so a group inherits every key it does not
 * give; replica groups over `cloud:` the same way; per-group protocol,
 * acceptance and SLO over the top-level sections. Private to the loader
 * (sim/config/scenario_int.h).
 */
#include "config/scenario_int.h"

#include <stdlib.h>
#include <string.h>

#include "base/units.h"
#include "stat/metrics.h"

/* --- resolution ---------------------------------------------------------- */

static int oom(sctx_t *x)
{
    return err_set(x->kc.err, ERR_RUNTIME, "out of memory");
}

/* Bit k set for each key k of tab that map writes. */
static unsigned keys_given(const keytab_key_t *tab, const ynode_t *map)
{
    unsigned bits = 0;
    for (unsigned k = 0; tab[k].name && k < 32; k++)
        if (ynode_find(map, tab[k].name)) bits |= 1u << k;
    return bits;
}

/* Group i's protocol and acceptance: the top-level sections with the
 * group's own (gi, NULL without groups) over them. Its acceptance is
 * resolved only when the group gives an `acceptance:` section: otherwise it
 * is the scenario's, and a trace file is not read twice. */
static int resolve_speculation(sctx_t *x, const ynode_t *gi, const char *prefix,
                               tenant_group_t *g)
{
    char p1[KEYTAB_KEY_MAX], a1[KEYTAB_KEY_MAX];
    keytab_join(p1, prefix, "protocol");
    keytab_join(a1, prefix, "acceptance");
    keytab_layer_t P[2] = {{ynode_get(x->root, "protocol"), "protocol"},
                           {ynode_get(gi, "protocol"), p1}};
    if (keytab_resolve(&x->kc, scenario_keys_protocol, P, gi ? 2 : 1, &g->protocol) != 0)
        return -1;
    g->given_protocol = gi ? keys_given(scenario_keys_protocol, scenario_present(P[1].map)) : 0;
    const ynode_t *own = scenario_present(ynode_get(gi, "acceptance"));
    if (!own) return 0;
    keytab_layer_t A[2] = {{ynode_get(x->root, "acceptance"), "acceptance"},
                           {own, a1}};
    return accept_cfg_resolve(&x->kc, A, 2, &g->acceptance);
}

/* --- unique names ------------------------------------------------------------ */

static uint64_t scenario_name_hash(const char *name)
{
    uint64_t h = 14695981039346656037ULL;   /* FNV-1a, 64 bit */
    for (; *name; name++) h = (h ^ (unsigned char)*name) * 1099511628211ULL;
    return h;
}

/* The first of n names (name i at base + i·stride) equal to an earlier
 * one, in *dup (-1: none). A hash set, not the pairwise comparison it
 * replaces, which made 100k groups take minutes. 0, or -1 out of memory. */
static int scenario_first_dup(const char *base, size_t stride, int n, int *dup)
{
    size_t cap = 16;
    while (cap < 2 * (size_t)n) cap *= 2;
    int *slot = malloc(cap * sizeof *slot);
    if (!slot) return -1;
    for (size_t k = 0; k < cap; k++) slot[k] = -1;
    *dup = -1;
    for (int i = 0; i < n && *dup < 0; i++) {
        const char *name = base + (size_t)i * stride;
        size_t k = (size_t)scenario_name_hash(name) & (cap - 1);
        while (slot[k] >= 0 && strcmp(base + (size_t)slot[k] * stride, name) != 0)
            k = (k + 1) & (cap - 1);
        if (slot[k] >= 0) *dup = i;
        else slot[k] = i;
    }
    free(slot);
    return 0;
}

/* A top-level section a group may override is new to the tenants' two
 * layers (they stop at `tenants:`): the group's slo is resolved over the
 * top-level slo the same way a group's edge is over tenants.edge. gi: the
 * group's node, NULL when the scenario has no groups. */
static int resolve_slo(sctx_t *x, const ynode_t *gi, const char *prefix,
                       tenant_group_t *g)
{
    char p1[KEYTAB_KEY_MAX];
    keytab_join(p1, prefix, "slo");
    keytab_layer_t L[2] = {{ynode_get(x->root, "slo"), "slo"},
                           {ynode_get(gi, "slo"), p1}};
    if (keytab_resolve(&x->kc, scenario_keys_slo, L, gi ? 2 : 1, &g->slo) != 0) return -1;
    g->slo_given = gi ? keys_given(scenario_keys_slo, scenario_present(L[1].map)) : 0;
    return 0;
}

/* A group's name as given (gi's `name:`, resolved into name) is what
 * paths address it by (tenants.groups.NAME.KEY): one that a path could not
 * reach, or would reach as another group, is refused at the key. An absent
 * name is the caller's default. */
static int check_group_name(sctx_t *x, const ynode_t *gi, const char *prefix,
                            const char *name)
{
    const ynode_t *nm = ynode_get(gi, "name");
    const char *why = NULL;
    if (!nm) return 0;
    if (!name[0]) why = "is empty (leave name: out for the default group<index>)";
    else if (strspn(name, "0123456789") == strlen(name))
        why = "is a number, which a path reads as a group's index: give a name with "
              "a letter in it";
    else if (strchr(name, '.'))
        why = "contains '.', where a path to the group's keys (LIST.NAME.KEY) would "
              "split it";
    if (!why) return 0;
    char key[KEYTAB_KEY_MAX];
    keytab_join(key, prefix, "name");
    return keytab_err(&x->kc, nm, key, "'%s' %s", name, why);
}

static int resolve_group(sctx_t *x, const ynode_t *T, const ynode_t *G, int i)
{
    tenant_group_t *g = &x->s->groups[i];
    char prefix[KEYTAB_KEY_MAX] = "tenants";
    const ynode_t *gi = NULL;
    if (G) {
        gi = G->items[i];
        snprintf(prefix, sizeof prefix, "tenants.groups.%d", i);
        if (gi->kind != YNODE_MAP) {
            char keys[400];
            keytab_names(scenario_keys_group, keys, sizeof keys);
            return keytab_err(&x->kc, gi, prefix, "expected a mapping {%s}, got %s", keys,
                              ynode_kind_name(gi));
        }
        keytab_layer_t L = {gi, prefix};
        if (keytab_resolve(&x->kc, scenario_keys_group, &L, 1, g) != 0 ||
            check_group_name(x, gi, prefix, g->name) != 0)
            return -1;
        if (!g->name[0]) snprintf(g->name, sizeof g->name, "group%d", i);
    } else {
        keytab_layer_t L = {T, "tenants"};
        if (keytab_resolve(&x->kc, scenario_keys_tenants, &L, 1, g) != 0) return -1;
        snprintf(g->name, sizeof g->name, "default");
    }
    for (size_t k = 0; k < SCENARIO_SECTIONS; k++) {
        char p0[KEYTAB_KEY_MAX], p1[KEYTAB_KEY_MAX];
        keytab_join(p0, "tenants", scenario_keys_sections[k].name);
        keytab_join(p1, prefix, scenario_keys_sections[k].name);
        keytab_layer_t L[2] = {{ynode_get(T, scenario_keys_sections[k].name), p0},
                               {ynode_get(gi, scenario_keys_sections[k].name), p1}};
        const ynode_t *where = x->kc.where;
        if (scenario_present(T)) x->kc.where = T;
        if (scenario_present(gi)) x->kc.where = gi;
        int rc = keytab_resolve(&x->kc, scenario_keys_sections[k].keys, L, G ? 2 : 1,
                                (char *)g + scenario_keys_sections[k].off);
        x->kc.where = where;
        if (rc != 0) return -1;
        g->given[k] = G ? keys_given(scenario_keys_sections[k].keys, L[1].map) : 0;
    }
    if (resolve_speculation(x, gi, prefix, g) != 0) return -1;
    if (resolve_slo(x, gi, prefix, g) != 0) return -1;
    if (g->workload.arrival == ARRIVAL_POISSON && g->workload.rate <= 0) {
        const ynode_t *w = scenario_present(ynode_get(gi, "workload"));
        if (!w) w = scenario_present(ynode_get(T, "workload"));
        const ynode_t *a = w ? ynode_get(w, "arrival") : NULL;
        char key[KEYTAB_KEY_MAX];
        keytab_join(key, G && ynode_get(ynode_get(gi, "workload"), "arrival")
                             ? prefix : "tenants", "workload.rate");
        return keytab_err(&x->kc, a ? a : w, key,
                          "required when arrival is poisson (requests per tenant "
                          "per time, e.g. 2/s or 120/min)");
    }
    return 0;
}

/* With groups, a tenants-level section is only the groups' defaults: a
 * key that every group gives again is never resolved through them, so
 * each section is also resolved alone, into a scratch group, for its
 * errors (nothing given is left unchecked). */
static int check_tenant_sections(sctx_t *x, const ynode_t *T)
{
    tenant_group_t scratch;
    int rc = 0;
    for (size_t k = 0; rc == 0 && k < SCENARIO_SECTIONS; k++) {
        const scenario_section_t *sec = &scenario_keys_sections[k];
        char p0[KEYTAB_KEY_MAX];
        keytab_join(p0, "tenants", sec->name);
        keytab_layer_t L = {ynode_get(T, sec->name), p0};
        if (!scenario_present(L.map)) continue;
        memset(&scratch, 0, sizeof scratch);
        rc = keytab_resolve(&x->kc, sec->keys, &L, 1, (char *)&scratch + sec->off);
        scenario_group_fini(&scratch);
    }
    return rc;
}

static int resolve_tenants(sctx_t *x)
{
    const ynode_t *T = scenario_present(ynode_get(x->root, "tenants"));
    if (T && T->kind != YNODE_MAP)
        return keytab_err(&x->kc, T, "tenants", "expected a mapping, got %s",
                          ynode_kind_name(T));
    if (keytab_check_keys(&x->kc, scenario_keys_tenants, T, "tenants") != 0) return -1;
    const ynode_pair_t *gp = ynode_find(T, "groups");
    const ynode_t *G = gp ? scenario_present(gp->val) : NULL;
    if (G && scenario_present(ynode_get(T, "count")))
        return err_set(x->kc.err, ERR_INPUT,
                       "%s:%d:%d: tenants.groups: give either tenants.count or "
                       "tenants.groups, not both",
                       gp->ksrc, gp->kline, gp->kcol);
    if (G && G->kind != YNODE_SEQ)
        return keytab_err(&x->kc, G, "tenants.groups",
                          "expected a list of groups, got %s", ynode_kind_name(G));
    if (G && G->n == 0)
        return keytab_err(&x->kc, G, "tenants.groups", "the list is empty");
    if (G && G->n > 1000000)
        return keytab_err(&x->kc, G, "tenants.groups", "too many groups");
    if (G && check_tenant_sections(x, T) != 0) return -1;
    int n = G ? (int)G->n : 1;
    x->s->groups = calloc((size_t)n, sizeof *x->s->groups);
    if (!x->s->groups) return oom(x);
    x->s->ngroups = n;
    double total = 0;
    for (int i = 0; i < n; i++) {
        if (resolve_group(x, T, G, i) != 0) return -1;
        total += x->s->groups[i].count;
    }
    int i;
    if (G && scenario_first_dup(x->s->groups[0].name, sizeof *x->s->groups, n, &i) != 0)
        return oom(x);
    if (G && i >= 0) {
        char key[KEYTAB_KEY_MAX];
        snprintf(key, sizeof key, "tenants.groups.%d.name", i);
        const ynode_t *nm = ynode_get(G->items[i], "name");
        return keytab_err(&x->kc, nm ? nm : G->items[i], key,
                          "duplicate group name '%s'", x->s->groups[i].name);
    }
    if (total > MAX_TENANTS)
        return keytab_err(&x->kc, G ? G : T, "tenants",
                          "%.0f tenants in all; at most %.0f", total, MAX_TENANTS);
    x->s->ntenants = (int)total;
    return 0;
}

/* The section's keys come from the model it names (accept.h). */
static int resolve_acceptance(sctx_t *x)
{
    keytab_layer_t L = {ynode_get(x->root, "acceptance"), "acceptance"};
    return accept_cfg_resolve(&x->kc, &L, 1, &x->s->acceptance);
}

/* A key of group item gi (dotted `prefix`) that only the whole cloud may
 * set: every replica serves one target at one precision with one K,V cache
 * layout and one cloud-spec draft, routing, prefix caching and when batches
 * form are the cluster's. Named here so that the message says where the key
 * goes, not that the key is unknown. */
static int rgroup_cloud_wide(sctx_t *x, const ynode_t *gi, const char *prefix)
{
    static const char *const wide[] = {"replicas", "target", "precision", "pinning",
                                       "replica_groups", "kv_precision", "draft",
                                       "draft_precision", "draft_heads", "draft_time",
                                       "prefix_cache"};
    char key[KEYTAB_KEY_MAX];
    for (size_t i = 0; i < sizeof wide / sizeof *wide; i++) {
        const ynode_pair_t *p = ynode_find(gi, wide[i]);
        if (!p) continue;
        keytab_join(key, prefix, wide[i]);
        return err_set(x->kc.err, ERR_INPUT, "%s:%d:%d: %s: %s", p->ksrc, p->kline,
                       p->kcol, key, i == 0
                           ? "a replica group gives its size as count"
                           : "is cloud-wide: give it under cloud: (every replica "
                             "group shares it)");
    }
    const ynode_t *b = scenario_present(ynode_get(gi, "batching"));
    for (size_t i = 0; b && b->kind == YNODE_MAP && i < b->n; i++) {
        const ynode_pair_t *p = &b->pairs[i];
        if (!strcmp(p->key, "order")) continue;
        keytab_join(key, prefix, "batching");
        keytab_join(key, key, p->key);
        return err_set(x->kc.err, ERR_INPUT, "%s:%d:%d: %s: a replica group sets "
                       "only batching.order; the rest of cloud.batching is "
                       "cloud-wide", p->ksrc, p->kline, p->kcol, key);
    }
    return 0;
}

static int resolve_rgroup(sctx_t *x, const ynode_t *C, const ynode_t *G, int i)
{
    replica_group_t *g = &x->s->cloud.rgroups[i];
    const ynode_t *gi = G->items[i];
    char prefix[KEYTAB_KEY_MAX];
    snprintf(prefix, sizeof prefix, "cloud.replica_groups.%d", i);
    if (gi->kind != YNODE_MAP)
        return keytab_err(&x->kc, gi, prefix, "expected a mapping {name, count, gpu, "
                          "...}, got %s", ynode_kind_name(gi));
    if (rgroup_cloud_wide(x, gi, prefix) != 0) return -1;
    if (keytab_check_keys(&x->kc, scenario_keys_rgroup, gi, prefix) != 0) return -1;
    keytab_layer_t L[2] = {{C, "cloud"}, {gi, prefix}};
    const ynode_t *where = x->kc.where;
    x->kc.where = gi;
    int rc = keytab_resolve(&x->kc, scenario_keys_rgroup_layer, L, 2, g);
    x->kc.where = where;
    if (rc != 0 || check_group_name(x, gi, prefix, g->name) != 0) return -1;
    if (!g->name[0]) snprintf(g->name, sizeof g->name, "group%d", i);
    g->given = keys_given(scenario_keys_rgroup, gi);
    return 0;
}

static int rgroup_names_unique(sctx_t *x, const ynode_t *G)
{
    const cloud_cfg_t *c = &x->s->cloud;
    int i;
    if (scenario_first_dup(c->rgroups[0].name, sizeof *c->rgroups, c->nrgroups, &i) != 0)
        return oom(x);
    if (i < 0) return 0;
    char key[KEYTAB_KEY_MAX];
    snprintf(key, sizeof key, "cloud.replica_groups.%d.name", i);
    const ynode_t *nm = ynode_get(G->items[i], "name");
    return keytab_err(&x->kc, nm ? nm : G->items[i], key,
                      "duplicate replica group name '%s'", c->rgroups[i].name);
}

/* cloud.replica_groups, written as tenants.groups is: a list of groups,
 * each inheriting the cloud's keys it does not give. cloud.replicas would
 * contradict the counts, so the two are never both given. */
static int resolve_replica_groups(sctx_t *x)
{
    const ynode_t *C = scenario_present(ynode_get(x->root, "cloud"));
    const ynode_pair_t *gp = C ? ynode_find(C, "replica_groups") : NULL;
    const ynode_t *G = gp ? scenario_present(gp->val) : NULL;
    if (!G) return 0;
    if (scenario_present(ynode_get(C, "replicas")))
        return err_set(x->kc.err, ERR_INPUT,
                       "%s:%d:%d: cloud.replica_groups: give either cloud.replicas or "
                       "cloud.replica_groups (each with its count), not both",
                       gp->ksrc, gp->kline, gp->kcol);
    if (G->kind != YNODE_SEQ)
        return keytab_err(&x->kc, G, "cloud.replica_groups",
                          "expected a list of groups, got %s", ynode_kind_name(G));
    if (G->n == 0) return keytab_err(&x->kc, G, "cloud.replica_groups", "the list is empty");
    if (G->n > 100000) return keytab_err(&x->kc, G, "cloud.replica_groups", "too many groups");
    cloud_cfg_t *c = &x->s->cloud;
    c->rgroups = calloc(G->n, sizeof *c->rgroups);
    if (!c->rgroups) return oom(x);
    c->nrgroups = (int)G->n;
    double total = 0;
    for (int i = 0; i < c->nrgroups; i++) {
        if (resolve_rgroup(x, C, G, i) != 0) return -1;
        total += c->rgroups[i].count;
    }
    if (rgroup_names_unique(x, G) != 0) return -1;
    if (total > 1e5)
        return keytab_err(&x->kc, G, "cloud.replica_groups",
                          "%.0f replicas in all; at most 100000", total);
    c->replicas = (int)total;
    return 0;
}

static void file_stem(const char *path, char *out, size_t outsz)
{
    const char *b = strrchr(path, '/');
    b = b ? b + 1 : path;
    size_t n = strcspn(b, ". ");
    if (n == 0) {
        b = "scenario";
        n = strlen(b);
    }
    if (n >= outsz) n = outsz - 1;
    memcpy(out, b, n);
    out[n] = 0;
}

/* Read only when the scenario gives it. Its first round is `replications`,
 * 10 when the scenario gives none (Law and Kelton's least first round for
 * the sequential rule, sim/run/sim.c); the metrics default to the ITL and
 * the throughput. */
static int resolve_precision(sctx_t *x)
{
    scenario_t *s = x->s;
    precision_cfg_t *p = &s->precision;
    memset(p, 0, sizeof *p);
    const ynode_t *P = scenario_present(ynode_get(x->root, "precision"));
    if (!P) return 0;
    keytab_layer_t L = {P, "precision"};
    if (keytab_resolve(&x->kc, scenario_keys_precision, &L, 1, p) != 0) return -1;
    if (p->nmetrics == 0) {
        p->metrics[p->nmetrics++] = METRIC_ITL_MEAN;
        p->metrics[p->nmetrics++] = METRIC_THROUGHPUT;
    }
    const ynode_t *R = scenario_present(ynode_get(x->root, "replications"));
    if (!R) s->replications = 10;
    else if (s->replications < 2)
        return keytab_err(&x->kc, R, "replications",
                          "%d; with precision: it is the first round, and a "
                          "confidence interval needs at least 2", s->replications);
    if (p->max_replications >= s->replications) return 0;
    const ynode_t *M = ynode_get(P, "max_replications");
    return keytab_err(&x->kc, M ? M : P, "precision.max_replications",
                      "%d is below replications (%d), the first round",
                      p->max_replications, s->replications);
}

int scenario_resolve(sctx_t *x, const char *stem_of)
{
    scenario_t *s = x->s;
    keytab_layer_t L = {x->root, ""};
    if (keytab_resolve(&x->kc, scenario_keys_top, &L, 1, s) != 0) return -1;
    if (!s->name[0]) file_stem(stem_of, s->name, sizeof s->name);
    if (s->warmup >= s->duration) {
        const ynode_t *w = scenario_present(ynode_get(x->root, "warmup"));
        const char *key = w ? "warmup" : "duration";
        if (!w) w = scenario_present(ynode_get(x->root, "duration"));
        char d[64], wu[64];
        if (units_format(s->duration, UNIT_DURATION, d, sizeof d) < 0) d[0] = 0;
        if (units_format(s->warmup, UNIT_DURATION, wu, sizeof wu) < 0) wu[0] = 0;
        return keytab_err(&x->kc, w, key,
                          "warmup (%s) must be less than duration (%s)", wu, d);
    }
    if (resolve_acceptance(x) != 0 || resolve_precision(x) != 0) return -1;
    if (resolve_replica_groups(x) != 0) return -1;
    keytab_layer_t S = {ynode_get(x->root, "slo"), "slo"};
    if (keytab_resolve(&x->kc, scenario_keys_slo, &S, 1, &s->slo) != 0) return -1;
    return resolve_tenants(x);
}
