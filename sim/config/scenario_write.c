/* scenario_write — a resolved scenario back as YAML that loads to the same
 * scenario (scenario_write_yaml, sim/config/scenario.h), groups written with
 * the keys they gave.
 */
#include "config/scenario_int.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "config/build.h"
#include "model/order.h"

/* --- writing ------------------------------------------------------------- */

static int write_acceptance(FILE *f, const accept_cfg_t *a)
{
    if (fprintf(f, "acceptance:\n") < 0) return -1;
    return accept_cfg_write(f, a, 2);
}

static int write_sections(FILE *f, const tenant_group_t *g, int indent)
{
    for (size_t k = 0; k < sizeof scenario_keys_sections / sizeof *scenario_keys_sections; k++) {
        if (fprintf(f, "%*s%s:\n", indent, "", scenario_keys_sections[k].name) < 0) return -1;
        if (keytab_write(f, scenario_keys_sections[k].keys,
                         (const char *)g + scenario_keys_sections[k].off, indent + 2) != 0)
            return -1;
    }
    return 0;
}

/* The SLO keys of c that are set and (mask) wanted, under `slo:`; nothing
 * when none is. */
static int write_slo(FILE *f, const slo_cfg_t *c, unsigned mask, int indent)
{
    int head = 0;
    for (unsigned k = 0; scenario_keys_slo[k].name; k++) {
        const double *v = (const double *)((const char *)c + scenario_keys_slo[k].off);
        if (!((mask >> k) & 1u) || *v <= 0) continue;
        if (!head++ && fprintf(f, "%*sslo:\n", indent, "") < 0) return -1;
        if (keytab_write_key(f, &scenario_keys_slo[k], c, indent + 2) != 0) return -1;
    }
    return 0;
}

/* A group's own SLO keys (those it gave; without that record, those that
 * differ from the top-level ones). */
static int write_group_slo(FILE *f, const scenario_t *s, const tenant_group_t *g)
{
    unsigned mask = g->slo_given;
    if (!s->given_known)
        mask = (g->slo.ttft != s->slo.ttft) | (unsigned)(g->slo.tpot != s->slo.tpot) << 1;
    return write_slo(f, &g->slo, mask, 6);
}

static int write_group_head(FILE *f, const scenario_t *s, const tenant_group_t *g)
{
    if (fprintf(f, "    - name: ") < 0 || keytab_write_string(f, g->name) != 0 ||
        fprintf(f, "\n      count: %d\n", g->count) < 0)
        return -1;
    if (g->priority && fprintf(f, "      priority: %d\n", g->priority) < 0) return -1;
    return write_group_slo(f, s, g);
}

/* A group's own speculation: the protocol keys it gave (all = every key,
 * for a scenario with no record of what was given) and, when it has one,
 * its whole acceptance section (which resolves to the same model whatever
 * the top level says). */
static int write_group_speculation(FILE *f, const tenant_group_t *g, int all)
{
    int head = 0;
    for (const keytab_key_t *k = scenario_keys_protocol; g->protocol.proto && k->name; k++) {
        unsigned bit = 1u << (unsigned)(k - scenario_keys_protocol);
        if (!all && !(g->given_protocol & bit)) continue;
        if (!head++ && fprintf(f, "      protocol:\n") < 0) return -1;
        if (keytab_write_key(f, k, &g->protocol, 8) != 0) return -1;
    }
    if (!g->acceptance.model) return 0;
    if (fprintf(f, "      acceptance:\n") < 0) return -1;
    return accept_cfg_write(f, &g->acceptance, 8);
}

/* 1 when group gi gave key number ki of tenant section sec itself (not
 * inherited). */
static int group_gave(const scenario_t *s, int gi, size_t sec, const keytab_key_t *k)
{
    size_t ki = (size_t)(k - scenario_keys_sections[sec].keys);
    return (s->groups[gi].given[sec] >> ki) & 1u;
}

/* Groups keep the inheritance they were written with: the shared keys once
 * under `tenants:` (from a group that inherits each, so its value is the
 * shared one), and per group only the keys it gave. Writing every key into
 * every group would resolve the same, but a later `tenants.*` override — a
 * sweep axis run from the sidecar, `check` output reused — would then reach
 * no group. */
static int write_grouped(FILE *f, const scenario_t *s)
{
    size_t ns = sizeof scenario_keys_sections / sizeof *scenario_keys_sections;
    for (size_t k = 0; k < ns; k++) {
        const char *sec = scenario_keys_sections[k].name;
        if (fprintf(f, "  %s:\n", sec) < 0) return -1;
        for (const keytab_key_t *kk = scenario_keys_sections[k].keys; kk->name; kk++) {
            if (kk->flags & KF_NOWRITE) continue;
            int gi = 0;
            while (gi < s->ngroups && group_gave(s, gi, k, kk)) gi++;
            if (gi == s->ngroups) gi = 0;
            const char *base = (const char *)&s->groups[gi] + scenario_keys_sections[k].off;
            if (keytab_write_key(f, kk, base, 4) != 0) return -1;
        }
    }
    if (fprintf(f, "  groups:\n") < 0) return -1;
    for (int i = 0; i < s->ngroups; i++) {
        const tenant_group_t *g = &s->groups[i];
        if (write_group_head(f, s, g) != 0) return -1;
        for (size_t k = 0; k < ns; k++) {
            const char *sec = scenario_keys_sections[k].name;
            const char *base = (const char *)g + scenario_keys_sections[k].off;
            int head = 0;
            for (const keytab_key_t *kk = scenario_keys_sections[k].keys; kk->name; kk++) {
                if ((kk->flags & KF_NOWRITE) || !group_gave(s, i, k, kk)) continue;
                if (!head++ && fprintf(f, "      %s:\n", sec) < 0) return -1;
                if (keytab_write_key(f, kk, base, 8) != 0) return -1;
            }
        }
        if (write_group_speculation(f, g, 0) != 0) return -1;
    }
    return 0;
}

static int write_tenants(FILE *f, const scenario_t *s)
{
    if (fprintf(f, "tenants:\n") < 0) return -1;
    if (s->ngroups == 1 && !strcmp(s->groups[0].name, "default")) {
        if (fprintf(f, "  count: %d\n", s->groups[0].count) < 0) return -1;
        return write_sections(f, &s->groups[0], 2);
    }
    if (s->given_known) return write_grouped(f, s);
    /* No record of what each group gave (a scenario not read from YAML):
     * every key in every group. */
    if (fprintf(f, "  groups:\n") < 0) return -1;
    for (int i = 0; i < s->ngroups; i++) {
        const tenant_group_t *g = &s->groups[i];
        if (write_group_head(f, s, g) != 0) return -1;
        if (write_sections(f, g, 6) != 0) return -1;
        if (write_group_speculation(f, g, 1) != 0) return -1;
    }
    return 0;
}

/* A comment with what group g resolved to, inherited keys included, and
 * the reference iteration that weighs it in routing (sim/entity/cloud.h). */
static int write_rgroup_resolved(FILE *f, const replica_group_t *g, const service_t *sv)
{
    char ref[64] = "n/a";
    double t = g->has_verify_time ? dist_mean(&g->verify_time)
               : sv               ? service_ref_time(sv)
                                  : NAN;
    if (isfinite(t)) snprintf(ref, sizeof ref, "%.4g ms", t * 1e3);
    const char *order = g->batching.order ? g->batching.order->name : "fcfs";
    return fprintf(f, "      # resolved: gpu %s x %d, %s, order %s; reference "
                   "iteration %s\n", g->gpu.name,
                   g->tensor_parallel > 1 ? g->tensor_parallel : 1,
                   g->has_verify_time ? "verify_time" : "service model", order,
                   ref) < 0 ? -1 : 0;
}

/* The cloud section; with replica groups, cloud.replicas gives way to the
 * groups, each with its count and the keys it gave (all of them for a
 * scenario with no record of what was given), the rest inherited from the
 * cloud keys written above them as they were read. */
static int write_cloud(FILE *f, const scenario_t *s)
{
    const cloud_cfg_t *c = &s->cloud;
    if (!c->rgroups) {
        for (const keytab_key_t *k = scenario_keys_top; k->name; k++)
            if (!strcmp(k->name, "cloud")) return keytab_write_key(f, k, s, 0);
        return -1;
    }
    if (fprintf(f, "cloud:\n") < 0) return -1;
    for (const keytab_key_t *k = scenario_keys_cloud; k->name; k++)
        if (strcmp(k->name, "replicas") != 0 && keytab_write_key(f, k, c, 2) != 0)
            return -1;
    if (fprintf(f, "  replica_groups:\n") < 0) return -1;
    for (int i = 0; i < c->nrgroups; i++) {
        const replica_group_t *g = &c->rgroups[i];
        if (fprintf(f, "    - name: ") < 0 || keytab_write_string(f, g->name) != 0 ||
            fprintf(f, "\n      count: %d\n", g->count) < 0)
            return -1;
        const service_t *sv = s->built ? s->built->replica[i].sv : NULL;
        if (write_rgroup_resolved(f, g, sv) != 0) return -1;
        for (const keytab_key_t *k = scenario_keys_rgroup + 2; k->name; k++) {
            unsigned bit = 1u << (unsigned)(k - scenario_keys_rgroup);
            if (s->given_known && !(g->given & bit)) continue;
            if (keytab_write_key(f, k, g, 6) != 0) return -1;
        }
    }
    return 0;
}

int scenario_write_yaml(const scenario_t *s, FILE *f)
{
    if (fprintf(f, "# specsim scenario, fully resolved%s%s\n",
                s->file[0] ? " from " : "", s->file) < 0)
        return -1;
    for (const keytab_key_t *k = scenario_keys_top; k->name; k++) {
        int rc = 0;
        if (!strcmp(k->name, "acceptance")) rc = write_acceptance(f, &s->acceptance);
        else if (!strcmp(k->name, "tenants")) rc = write_tenants(f, s);
        else if (!strcmp(k->name, "slo")) rc = write_slo(f, &s->slo, ~0u, 0);
        else if (!strcmp(k->name, "precision"))
            rc = s->precision.relative > 0
                     ? keytab_write_key(f, &(const keytab_key_t){.name = "precision",
                                                                 KEYTAB_SECTION(scenario_t,
                                                                     precision,
                                                                     precision_cfg_t),
                                                                 .sub = scenario_keys_precision},
                                        s, 0)
                     : 0;
        else if (!strcmp(k->name, "cloud")) rc = write_cloud(f, s);
        else if (!strcmp(k->name, "output") && !s->output.file[0] &&
                 !s->output.trace[0]) rc = 0;
        else rc = keytab_write_key(f, k, s, 0);
        if (rc != 0) return -1;
    }
    return ferror(f) ? -1 : 0;
}

int scenario_write_reads(const scenario_t *s, FILE *f)
{
    if (s->reads && fputs(s->reads, f) == EOF) return -1;
    return ferror(f) ? -1 : 0;
}

