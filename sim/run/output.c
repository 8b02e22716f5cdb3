/* output — the human summary, the JSON object, CSV rows and atomic files.
 *
 * Machine formats print every number with "%.10g" so that one scenario and
 * seed give byte-identical files (wall_s and events_per_s aside); JSON has no
 * NaN or infinity, so both become null there, while CSV keeps "inf"/"-inf"
 * (spreadsheets and gnuplot read them) and leaves NaN empty.
 */
#include "run/output.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "io/outfile.h"
#include "io/outpath.h"
#include "entity/proto.h"
#include "base/version.h"

/* ---- number and string formatting --------------------------------------- */

/* Writes x as a JSON value. Returns fprintf's result (< 0 on error). */
int output_json_number(FILE *f, double x)
{
    if (!isfinite(x)) return fputs("null", f) == EOF ? -1 : 0;
    return fprintf(f, "%.10g", x);
}

/* One Unicode scalar encoded as UTF-8 at s (n bytes left): its length, or 0
 * when the bytes are not well-formed UTF-8 (overlong, surrogate, > U+10FFFF,
 * truncated). A strict JSON parser rejects such bytes, so they are replaced. */
static size_t utf8_len(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    size_t len;
    unsigned min;
    unsigned cp;
    if (c < 0x80) return 1;
    if ((c & 0xE0) == 0xC0) { len = 2; min = 0x80; cp = c & 0x1F; }
    else if ((c & 0xF0) == 0xE0) { len = 3; min = 0x800; cp = c & 0x0F; }
    else if ((c & 0xF8) == 0xF0) { len = 4; min = 0x10000; cp = c & 0x07; }
    else return 0;
    if (len > n) return 0;
    for (size_t i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80) return 0;
        cp = (cp << 6) | (s[i] & 0x3F);
    }
    if (cp < min || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
    return len;
}

int output_json_string(FILE *f, const char *str)
{
    const unsigned char *s = (const unsigned char *)(str ? str : "");
    size_t n = strlen((const char *)s);
    if (fputc('"', f) == EOF) return -1;
    for (size_t i = 0; i < n;) {
        unsigned c = s[i];
        int rc = 0;
        if (c == '"') rc = fputs("\\\"", f);
        else if (c == '\\') rc = fputs("\\\\", f);
        else if (c == '\n') rc = fputs("\\n", f);
        else if (c == '\r') rc = fputs("\\r", f);
        else if (c == '\t') rc = fputs("\\t", f);
        else if (c < 0x20 || c == 0x7F) rc = fprintf(f, "\\u%04x", c);
        else if (c >= 0x80) {
            size_t len = utf8_len(s + i, n - i);
            if (len == 0) {
                rc = fputs("\\ufffd", f);
            } else {
                rc = fwrite(s + i, 1, len, f) == len ? 0 : EOF;
                i += len;
                if (rc == EOF) return -1;
                continue;
            }
        } else rc = fputc((int)c, f);
        if (rc == EOF || rc < 0) return -1;
        i++;
    }
    return fputc('"', f) == EOF ? -1 : 0;
}

int output_csv_number(FILE *f, double x)
{
    if (isnan(x)) return 0;
    if (isinf(x)) return fputs(x > 0 ? "inf" : "-inf", f) == EOF ? -1 : 0;
    return fprintf(f, "%.10g", x) < 0 ? -1 : 0;
}

/* RFC 4180: a field with a comma, quote or line break is quoted, with
 * quotes doubled. */
int output_csv_field(FILE *f, const char *s)
{
    if (!s) s = "";
    if (!strpbrk(s, ",\"\n\r")) return fputs(s, f) == EOF ? -1 : 0;
    if (fputc('"', f) == EOF) return -1;
    for (; *s; s++) {
        if (*s == '"' && fputc('"', f) == EOF) return -1;
        if (fputc(*s, f) == EOF) return -1;
    }
    return fputc('"', f) == EOF ? -1 : 0;
}

/* ---- human summary ------------------------------------------------------ */

enum summary_unit { U_TIME, U_TOKS, U_PLAIN, U_PCT, U_BYTES, U_COUNT, U_EVS };

typedef struct metric_view {
    int id;
    enum summary_unit unit;
    const char *label;  /* unit text for kinds with a fixed unit */
} metric_view_t;

typedef struct metric_group {
    const char *title;
    metric_view_t items[8];
    int n;
    int optional;   /* left out when none of its metrics has a value */
} metric_group_t;

static const metric_group_t summary_groups[] = {
    {"latency", {{METRIC_ITL_MEAN, U_TIME, ""}, {METRIC_ITL_P50, U_TIME, ""},
                 {METRIC_ITL_P95, U_TIME, ""}, {METRIC_ITL_P99, U_TIME, ""},
                 {METRIC_COMMIT_GAP_P99, U_TIME, ""}, {METRIC_TTFT_MEAN, U_TIME, ""},
                 {METRIC_TTFT_P99, U_TIME, ""}, {METRIC_E2E_MEAN, U_TIME, ""}}, 8, 0},
    {"throughput", {{METRIC_TOKENS_PER_S_TENANT, U_TOKS, "tok/s"},
                    {METRIC_THROUGHPUT, U_TOKS, "tok/s"}}, 2, 0},
    {"speculation", {{METRIC_ACCEPTANCE_RATE, U_PLAIN, ""},
                     {METRIC_ACCEPTED_LEN_MEAN, U_PLAIN, "tok/verdict"},
                     {METRIC_DRAFT_WASTE_FRAC, U_PCT, "%"},
                     {METRIC_EDGE_STALL_FRAC, U_PCT, "%"}}, 4, 0},
    {"slo", {{METRIC_SLO_ATTAINMENT, U_PCT, "%"}, {METRIC_TTFT_SLO_FRAC, U_PCT, "%"},
             {METRIC_TPOT_SLO_FRAC, U_PCT, "%"}, {METRIC_GOODPUT_REQ_S, U_PLAIN, "req/s"},
             {METRIC_GOODPUT_TOK_S, U_TOKS, "tok/s"}}, 5, 0},
    {"fairness", {{METRIC_FAIRNESS_JAIN, U_PLAIN, ""},
                  {METRIC_TOKENS_PER_S_TENANT_P5, U_TOKS, "tok/s"}}, 2, 0},
    {"cloud", {{METRIC_GPU_UTIL, U_PCT, "%"}, {METRIC_GPU_ROOFLINE_UTIL, U_PCT, "%"},
               {METRIC_GPU_WASTE_FRAC, U_PCT, "%"},
               {METRIC_BATCH_MEAN, U_PLAIN, "jobs"}, {METRIC_BATCH_P99, U_PLAIN, "jobs"},
               {METRIC_QUEUE_DELAY_MEAN, U_TIME, ""},
               {METRIC_QUEUE_DELAY_P99, U_TIME, ""}}, 7, 0},
    {"kv cache", {{METRIC_KV_UTIL_MEAN, U_PCT, "%"},
                  {METRIC_ADMISSION_WAIT_MEAN, U_TIME, ""},
                  {METRIC_ADMISSION_WAIT_P99, U_TIME, ""}}, 3, 0},
    {"network", {{METRIC_NET_UP_BYTES_PER_TOK, U_BYTES, "B/tok"},
                 {METRIC_NET_DOWN_BYTES_PER_TOK, U_BYTES, "B/tok"}}, 2, 0},
    {"link", {{METRIC_FALLBACK_FRAC, U_PCT, "%"}, {METRIC_LOCAL_TOK_FRAC, U_PCT, "%"},
              {METRIC_LINK_STALL_S, U_TIME, ""}, {METRIC_ITL_OUTAGE_MEAN, U_TIME, ""},
              {METRIC_ITL_OUTAGE_P99, U_TIME, ""}}, 5, 1},
    {"sessions", {{METRIC_PREFIX_HIT_RATE, U_PCT, "%"},
                  {METRIC_REPREFILL_TOK_PER_TURN, U_PLAIN, "tok/turn"}}, 2, 1},
    {"cost", {{METRIC_GPU_S_PER_KTOK, U_PLAIN, "GPU-s/ktok"},
              {METRIC_EDGE_J_PER_TOK, U_PLAIN, "J/tok"}, {METRIC_GPU_J_PER_TOK, U_PLAIN, "J/tok"},
              {METRIC_USD_PER_MTOK, U_PLAIN, "USD/Mtok"}}, 4, 0},
    {"device", {{METRIC_EDGE_J_PER_REQ, U_PLAIN, "J/req"},
                {METRIC_BATTERY_PCT_PER_H, U_PLAIN, "%/h"},
                {METRIC_EDGE_THROTTLED_FRAC, U_PCT, "%"},
                {METRIC_EDGE_DRAFT_SPEED_MEAN, U_PLAIN, ""}}, 4, 0},
    {"bookkeeping", {{METRIC_REQUESTS_DONE, U_COUNT, "requests"},
                     {METRIC_EVENTS, U_COUNT, "events"},
                     {METRIC_WALL_S, U_TIME, ""},
                     {METRIC_EVENTS_PER_S, U_EVS, "events/s"}}, 4, 0},
};
enum { NGROUPS = (int)(sizeof summary_groups / sizeof summary_groups[0]) };

/* A time's display unit, chosen from the value so the CI shares it. */
static double time_scale(double v, const char **unit)
{
    double a = fabs(v);
    if (a >= 1.0 || a == 0.0 || !isfinite(a)) { *unit = "s"; return 1.0; }
    if (a >= 1e-3) { *unit = "ms"; return 1e3; }
    if (a >= 1e-6) { *unit = "us"; return 1e6; }
    *unit = "ns";
    return 1e9;
}

/* Four significant digits, but whole numbers above 10^4 in full (a
 * throughput of 12345 tok/s reads better than 1.234e+04). */
static void fmt_num(char *buf, size_t sz, double v)
{
    if (!isfinite(v)) snprintf(buf, sz, "%s", isnan(v) ? "n/a" : v > 0 ? "inf" : "-inf");
    else if (fabs(v) >= 1e4 && fabs(v) < 1e15) snprintf(buf, sz, "%.0f", v);
    else snprintf(buf, sz, "%.4g", v);
}

/* A half-width is itself an estimate good to a digit or two: two
 * significant digits, written out in full when large. */
static void fmt_ci(char *buf, size_t sz, double v)
{
    if (fabs(v) >= 1e4 && fabs(v) < 1e15) {
        double p = pow(10.0, floor(log10(fabs(v))) - 1.0);
        snprintf(buf, sz, "%.0f", round(v / p) * p);
    } else {
        snprintf(buf, sz, "%.2g", v);
    }
}

/* One metric line: name, value right-aligned, "± ci" (when there are
 * replications to disagree), unit; columns line up across all lines. */
static int summary_line(FILE *f, int namew, const metric_view_t *mv,
                        const metrics_summary_t *m)
{
    double v = m->value[mv->id], ci = m->ci95[mv->id];
    double scale = 1.0;
    const char *unit = mv->label;
    char num[64], cis[80] = "", line[256];
    if (mv->unit == U_TIME) scale = time_scale(v, &unit);
    else if (mv->unit == U_PCT) scale = 100.0;
    if (mv->unit == U_COUNT && isfinite(v) && v == floor(v) && fabs(v) < 1e15)
        snprintf(num, sizeof num, "%.0f", v);
    else
        fmt_num(num, sizeof num, v * scale);
    if (isnan(v)) unit = "";
    if (m->reps > 1 && isfinite(v) && !isnan(ci)) {
        char c[64];
        fmt_ci(c, sizeof c, ci * scale);
        snprintf(cis, sizeof cis, "\u00b1 %s", c);
    }
    if (m->reps > 1)
        /* "±" is two bytes and one column: pad the field by one more */
        snprintf(line, sizeof line, "  %-*s %12s  %-*s %s", namew,
                 metric_name(mv->id), num, cis[0] ? 13 : 12, cis, unit);
    else
        snprintf(line, sizeof line, "  %-*s %12s %s", namew, metric_name(mv->id),
                 num, unit);
    size_t n = strlen(line);
    while (n > 0 && line[n - 1] == ' ') line[--n] = '\0';
    return fprintf(f, "%s\n", line) < 0 ? -1 : 0;
}

/* Each group's source when they differ, 1 when they do not or are not
 * known (src->edge says it all then). */
static int groups_differ(const scenario_t *s, const output_sources_t *src)
{
    return src && src->ngroups > 0 && src->ngroups == s->ngroups && s->groups &&
           strcmp(src->edge, "mixed") == 0;
}

/* "table (laptops), datasheet (phones, jetsons)": each source once, in the
 * order of the first group using it, with the groups that use it. */
static int summary_edge(FILE *f, const scenario_t *s, const output_sources_t *src)
{
    if (!src || !src->edge[0]) return fputs("unknown", f) == EOF ? -1 : 0;
    if (!groups_differ(s, src)) return fputs(src->edge, f) == EOF ? -1 : 0;
    enum { MAX_SOURCES = 8 };   /* sim.h names five */
    const char *seen[MAX_SOURCES];
    int nseen = 0, rc = 0;
    for (int g = 0; g < src->ngroups; g++) {
        const char *name = src->edge_group[g];
        int k = 0;
        while (k < nseen && strcmp(seen[k], name) != 0) k++;
        if (k < nseen || nseen == MAX_SOURCES) continue;
        seen[nseen++] = name;
        rc |= fprintf(f, "%s%s (", nseen > 1 ? ", " : "", name) < 0;
        for (int h = g, n = 0; h < src->ngroups; h++)
            if (strcmp(src->edge_group[h], name) == 0)
                rc |= fprintf(f, "%s%s", n++ ? ", " : "", s->groups[h].name) < 0;
        rc |= fputc(')', f) == EOF;
    }
    return rc ? -1 : 0;
}

/* "MODE[, gamma G][, window W]" of one protocol configuration. */
static int protocol_words(FILE *f, const protocol_cfg_t *pc)
{
    const proto_ops_t *p = pc->proto;
    int rc = fprintf(f, "%s", p->name) < 0;
    if (p->verifies) rc |= fprintf(f, ", gamma %d", pc->gamma) < 0;
    if (p->uses_window) rc |= fprintf(f, ", window %d", pc->window) < 0;
    return rc;
}

/* One protocol line, or one line per group when the groups' speculation
 * differs (a group with its own acceptance model says which). */
static int summary_protocol(FILE *f, const scenario_t *s)
{
    int rc = 0;
    if (!scenario_mixed(s)) {
        rc |= fputs("protocol     ", f) == EOF;
        return rc | protocol_words(f, &s->protocol);
    }
    for (int g = 0; g < s->ngroups; g++) {
        rc |= fprintf(f, "%s%s: ", g ? "\n             " : "protocol     ",
                      s->groups[g].name) < 0;
        rc |= protocol_words(f, scenario_group_protocol(s, g));
        const accept_cfg_t *a = scenario_group_acceptance(s, g);
        if (scenario_group_protocol(s, g)->proto->verifies)
            rc |= fprintf(f, ", acceptance %s", a->model->name) < 0;
    }
    return rc;
}

static int summary_header(FILE *f, const scenario_t *s, const output_sources_t *src,
                          int reps)
{
    int rc = 0;
    rc |= fprintf(f, "scenario     %s%s%s%s\n", s->name[0] ? s->name : "(unnamed)",
                  s->file[0] ? "  (" : "", s->file, s->file[0] ? ")" : "") < 0;
    rc |= summary_protocol(f, s);
    rc |= fprintf(f, "\ntenants      %d", s->ntenants) < 0;
    if (s->ngroups > 1 && s->groups) {
        rc |= fputs(" in groups", f) == EOF;
        for (int g = 0; g < s->ngroups; g++)
            rc |= fprintf(f, "%s %s: %d", g ? "," : "", s->groups[g].name,
                          s->groups[g].count) < 0;
    }
    rc |= fprintf(f, "\ncloud        %d replica%s", s->cloud.replicas,
                  s->cloud.replicas == 1 ? "" : "s") < 0;
    for (int k = 0; s->cloud.rgroups && k < s->cloud.nrgroups; k++)
        rc |= fprintf(f, "%s %s: %d %s", k ? "," : " in groups", s->cloud.rgroups[k].name,
                      s->cloud.rgroups[k].count, s->cloud.rgroups[k].gpu.name) < 0;
    rc |= fputc('\n', f) == EOF;
    char wu[64];
    if (s->warmup_auto) snprintf(wu, sizeof wu, "auto: MSER-5 per replication");
    else snprintf(wu, sizeof wu, "%.10g s", s->warmup);
    rc |= fprintf(f, "run          %.10g s (warm-up %s), seed %" PRIu64
                  ", %d replication%s%s\n", s->duration, wu, s->seed, reps,
                  reps == 1 ? "" : "s", reps > 1 ? " (± = 95% CI half-width)" : "") < 0;
    rc |= fputs("service time edge: ", f) == EOF;
    rc |= summary_edge(f, s, src) < 0;
    rc |= fprintf(f, ", cloud: %s", src && src->cloud[0] ? src->cloud : "unknown") < 0;
    /* cloud-spec's draft steps: fixed, or the datasheet roofline of its
     * card or heads (no calibration table applies to them) */
    const cloud_cfg_t *c = &s->cloud;
    if (proto_any_cloud_drafts(s))
        rc |= fprintf(f, ", cloud draft: %s",
                      c->has_draft_time ? (c->draft_time.kind == DIST_CONST ? "fixed"
                                                                            : "distribution")
                      : c->draft_heads.params > 0 ? "heads, datasheet"
                                                  : "datasheet") < 0;
    rc |= fputc('\n', f) == EOF;
    return rc ? -1 : 0;
}

/* One row of the per-group table: the metric, each group's value in the
 * unit the fleet's value picks, the unit. */
static int group_row(FILE *f, int namew, const metric_view_t *mv,
                     const metrics_summary_t *m)
{
    double scale = 1.0;
    const char *unit = mv->label;
    if (mv->unit == U_TIME) scale = time_scale(m->value[mv->id], &unit);
    else if (mv->unit == U_PCT) scale = 100.0;
    int rc = fprintf(f, "  %-*s", namew, metric_name(mv->id)) < 0;
    for (int g = 0; g < m->ngroups; g++) {
        char num[64];
        fmt_num(num, sizeof num, m->groups[g].value[mv->id] * scale);
        rc |= fprintf(f, " %12s", num) < 0;
    }
    rc |= fprintf(f, "%s%s\n", unit[0] ? " " : "", unit) < 0;
    return rc ? -1 : 0;
}

/* Every metric of the tables above per tenant group, groups as columns
 * (means only: the JSON has their half-widths). The shared cloud's and the
 * run's metrics are left out: they are the fleet's in every group. */
/* 1 when section g is shown: it is not optional, or has(id, ctx) says one
 * of its metrics has a value (has NULL: every section is shown). */
static int group_shown(const metric_group_t *g, output_has_fn has, void *ctx)
{
    if (!g->optional || !has) return 1;
    for (int i = 0; i < g->n; i++)
        if (has(g->items[i].id, ctx)) return 1;
    return 0;
}

/* A summary's metric id has a value (ctx: the metrics_summary_t). */
static int summary_has(int id, void *ctx)
{
    return !isnan(((const metrics_summary_t *)ctx)->value[id]);
}

static int summary_groups_table(FILE *f, const scenario_t *s, int namew,
                                const metrics_summary_t *m)
{
    if (fprintf(f, "\nper tenant group\n  %-*s", namew, "") < 0) return -1;
    for (int g = 0; g < m->ngroups; g++)
        if (fprintf(f, " %12.12s", s->groups[g].name) < 0) return -1;
    if (fputc('\n', f) == EOF) return -1;
    for (int t = 0; t < NGROUPS; t++) {
        if (!group_shown(&summary_groups[t], summary_has, (void *)m)) continue;
        for (int i = 0; i < summary_groups[t].n; i++) {
            const metric_view_t *mv = &summary_groups[t].items[i];
            if (metrics_is_shared(mv->id)) continue;
            if (group_row(f, namew, mv, m) < 0) return -1;
        }
    }
    return 0;
}

/* The view of metric id: its entry in the tables above, or a plain
 * number for a metric appended to the contract after they were written. */
static metric_view_t view_of(int id)
{
    for (int g = 0; g < NGROUPS; g++)
        for (int i = 0; i < summary_groups[g].n; i++)
            if (summary_groups[g].items[i].id == id) return summary_groups[g].items[i];
    return (metric_view_t){id, U_PLAIN, ""};
}

int output_name_width(void)
{
    int namew = 0;
    for (int i = 0; i < METRIC_COUNT; i++) {
        int len = (int)strlen(metric_name(i));
        if (len > namew) namew = len;
    }
    return namew;
}

double output_unit(int id, double v, const char **unit)
{
    metric_view_t mv = view_of(id);
    *unit = mv.label;
    if (mv.unit == U_TIME) return time_scale(v, unit);
    return mv.unit == U_PCT ? 100.0 : 1.0;
}

void output_fmt_value(char *buf, size_t n, double v)
{
    fmt_num(buf, n, v);
}

void output_fmt_ci(char *buf, size_t n, double v)
{
    fmt_ci(buf, n, v);
}

int output_sections(FILE *f, output_row_fn row, output_has_fn has, void *ctx)
{
    int namew = output_name_width();
    int listed[METRIC_COUNT] = {0};
    for (int g = 0; g < NGROUPS; g++) {
        for (int i = 0; i < summary_groups[g].n; i++) listed[summary_groups[g].items[i].id] = 1;
        if (!group_shown(&summary_groups[g], has, ctx)) continue;
        if (fprintf(f, "\n%s\n", summary_groups[g].title) < 0) return -1;
        for (int i = 0; i < summary_groups[g].n; i++) {
            int id = summary_groups[g].items[i].id;
            if (row(f, namew, id, ctx) < 0) return -1;
        }
    }
    /* Metrics appended to the contract after this table was written still
     * show up, unformatted, rather than silently vanish. */
    int other = 0;
    for (int i = 0; i < METRIC_COUNT; i++) {
        if (listed[i]) continue;
        if (!other++ && fputs("\nother\n", f) == EOF) return -1;
        if (row(f, namew, i, ctx) < 0) return -1;
    }
    return 0;
}

static int summary_row(FILE *f, int namew, int id, void *ctx)
{
    metric_view_t mv = view_of(id);
    return summary_line(f, namew, &mv, ctx);
}

int output_summary(FILE *f, const scenario_t *s, const output_sources_t *src,
                   const metrics_summary_t *m)
{
    if (summary_header(f, s, src, m->reps) < 0 ||
        output_sections(f, summary_row, summary_has, (void *)m) < 0)
        return -1;
    if (s->ngroups > 1 && m->groups && m->ngroups == s->ngroups &&
        summary_groups_table(f, s, output_name_width(), m) < 0)
        return -1;
    return ferror(f) ? -1 : 0;
}

void output_sources_fini(output_sources_t *src)
{
    if (!src) return;
    free(src->edge_group);
    src->edge_group = NULL;
    src->ngroups = 0;
}

/* ---- JSON --------------------------------------------------------------- */

static int json_key(FILE *f, const char *key)
{
    if (fputs(",\n  ", f) == EOF || output_json_string(f, key) < 0) return -1;
    return fputs(": ", f) == EOF ? -1 : 0;
}

/* {"phones": "datasheet", "laptops": "table"}, or null when not known. */
static int json_group_sources(FILE *f, const scenario_t *s, const output_sources_t *src)
{
    if (!src || src->ngroups < 1 || src->ngroups != s->ngroups || !s->groups)
        return fputs("null", f) == EOF ? -1 : 0;
    int rc = fputc('{', f) == EOF;
    for (int g = 0; g < src->ngroups; g++) {
        rc |= (g && fputs(", ", f) == EOF);
        rc |= output_json_string(f, s->groups[g].name) < 0;
        rc |= fputs(": ", f) == EOF;
        rc |= output_json_string(f, src->edge_group[g]) < 0;
    }
    rc |= fputc('}', f) == EOF;
    return rc ? -1 : 0;
}

/* Every metric of m, each followed by its _ci95 when replications > 1, as
 * `"name": value` pairs after `sep`. */
static int json_metrics(FILE *f, const metrics_summary_t *m, const char *sep)
{
    char key[128];
    int rc = 0;
    for (int i = 0; i < METRIC_COUNT && !rc; i++) {
        for (int ci = 0; ci < 1 + (m->reps > 1); ci++) {
            snprintf(key, sizeof key, "%s%s", metric_name(i), ci ? "_ci95" : "");
            rc |= fputs(i || ci ? sep : sep + 1, f) == EOF;
            rc |= output_json_string(f, key) < 0;
            rc |= fputs(": ", f) == EOF;
            rc |= output_json_number(f, ci ? m->ci95[i] : m->value[i]) < 0;
        }
    }
    return rc ? -1 : 0;
}

/* "groups": {"NAME": {metric: value, ...}, ...} */
static int json_groups(FILE *f, const scenario_t *s, const metrics_summary_t *m)
{
    int rc = json_key(f, "groups") < 0 || fputc('{', f) == EOF;
    for (int g = 0; g < m->ngroups && !rc; g++) {
        rc |= fputs(g ? ",\n    " : "\n    ", f) == EOF;
        rc |= output_json_string(f, s->groups[g].name) < 0;
        rc |= fputs(": {", f) == EOF;
        rc |= json_metrics(f, &m->groups[g], ",\n      ") < 0;
        rc |= fputs("\n    }", f) == EOF;
    }
    rc |= fputs("\n  }", f) == EOF;
    return rc ? -1 : 0;
}

int output_json(FILE *f, const scenario_t *s, const output_sources_t *src,
                const metrics_summary_t *m)
{
    return output_json_extra(f, s, src, m, NULL, 0);
}

int output_json_extra(FILE *f, const scenario_t *s, const output_sources_t *src,
                      const metrics_summary_t *m, const output_extra_t *x, int nx)
{
    char key[128];
    int rc = 0;
    rc |= fputs("{\n  \"scenario\": ", f) == EOF;
    rc |= output_json_string(f, s->name) < 0;
    rc |= json_key(f, "version") < 0;
    rc |= output_json_string(f, version_string()) < 0;
    rc |= json_key(f, "mode") < 0;
    rc |= output_json_string(f, proto_mode_name(s)) < 0;
    rc |= json_key(f, "seed") < 0;
    rc |= fprintf(f, "%" PRIu64, s->seed) < 0;
    rc |= json_key(f, "replications") < 0;
    rc |= fprintf(f, "%d", m->reps) < 0;
    rc |= json_key(f, "tenants") < 0;
    rc |= fprintf(f, "%d", s->ntenants) < 0;
    rc |= json_key(f, "edge_service_source") < 0;
    rc |= (src ? output_json_string(f, src->edge) : fputs("null", f)) < 0;
    rc |= json_key(f, "edge_service_sources") < 0;
    rc |= json_group_sources(f, s, src) < 0;
    rc |= json_key(f, "cloud_service_source") < 0;
    rc |= (src ? output_json_string(f, src->cloud) : fputs("null", f)) < 0;
    for (int i = 0; i < METRIC_COUNT && !rc; i++) {
        rc |= json_key(f, metric_name(i)) < 0;
        rc |= output_json_number(f, m->value[i]) < 0;
        if (m->reps > 1) {
            snprintf(key, sizeof key, "%s_ci95", metric_name(i));
            rc |= json_key(f, key) < 0;
            rc |= output_json_number(f, m->ci95[i]) < 0;
        }
    }
    for (int k = 0; k < nx && !rc; k++) {
        rc |= json_key(f, x[k].key) < 0;
        rc |= (x[k].text ? output_json_string(f, x[k].text)
                         : output_json_number(f, x[k].value)) < 0;
    }
    if (!rc && m->groups && m->ngroups == s->ngroups) rc |= json_groups(f, s, m) < 0;
    rc |= fputs("\n}\n", f) == EOF;
    return rc || ferror(f) ? -1 : 0;
}

/* ---- CSV ---------------------------------------------------------------- */

/* One metric's two columns, prefixed "GROUP." for a group's. */
static int csv_metric_head(FILE *f, const char *group, int i, int first)
{
    char name[256];
    snprintf(name, sizeof name, "%s%s%s", group ? group : "", group ? "." : "",
             metric_name(i));
    int rc = (!first && fputc(',', f) == EOF) || output_csv_field(f, name) < 0;
    strncat(name, "_ci95", sizeof name - strlen(name) - 1);
    rc |= fputc(',', f) == EOF || output_csv_field(f, name) < 0;
    return rc ? -1 : 0;
}

int output_csv_header_groups(FILE *f, const char *const *keys, int nkeys,
                             const char *const *groups, int ngroups)
{
    int rc = 0;
    for (int k = 0; k < nkeys; k++) {
        rc |= (k && fputc(',', f) == EOF);
        rc |= output_csv_field(f, keys[k]) < 0;
    }
    for (int i = 0; i < METRIC_COUNT; i++) {
        rc |= fprintf(f, "%s%s,%s_ci95", (nkeys || i) ? "," : "", metric_name(i),
                      metric_name(i)) < 0;
    }
    for (int g = 0; g < ngroups; g++)
        for (int i = 0; i < METRIC_COUNT; i++)
            rc |= csv_metric_head(f, groups[g], i, 0) < 0;
    rc |= fputc('\n', f) == EOF;
    return rc || ferror(f) ? -1 : 0;
}

int output_csv_header(FILE *f, const char *const *keys, int nkeys)
{
    return output_csv_header_groups(f, keys, nkeys, NULL, 0);
}

static int csv_values(FILE *f, const metrics_summary_t *m, int first)
{
    int rc = 0;
    for (int i = 0; i < METRIC_COUNT; i++) {
        rc |= ((!first || i) && fputc(',', f) == EOF);
        rc |= output_csv_number(f, m->value[i]) < 0;
        rc |= fputc(',', f) == EOF;
        rc |= output_csv_number(f, m->ci95[i]) < 0;
    }
    return rc ? -1 : 0;
}

int output_csv_row(FILE *f, const char *const *values, int nkeys,
                   const metrics_summary_t *m)
{
    int rc = 0;
    for (int k = 0; k < nkeys; k++) {
        rc |= (k && fputc(',', f) == EOF);
        rc |= output_csv_field(f, values[k]) < 0;
    }
    rc |= csv_values(f, m, !nkeys) < 0;
    for (int g = 0; m->groups && g < m->ngroups; g++)
        rc |= csv_values(f, &m->groups[g], 0) < 0;
    rc |= fputc('\n', f) == EOF;
    return rc || ferror(f) ? -1 : 0;
}

/* ---- per-tenant CSV ----------------------------------------------------- */

int output_tenant_header(FILE *f)
{
    return fputs("rep,tenant,group,tokens,tokens_per_s,itl_mean_s,itl_p99_s,"
                 "ttft_mean_s,requests,slo_met_frac\n", f) == EOF ? -1 : 0;
}

int output_tenant_row(FILE *f, int rep, int tenant, const char *group,
                      const tally_tenant_row_t *r)
{
    int rc = fprintf(f, "%d,%d,", rep, tenant) < 0;
    rc |= output_csv_field(f, group) < 0;
    const double v[] = {r->tokens, r->rate, r->itl_mean, r->itl_p99,
                        r->ttft_mean, r->requests, r->slo_met_frac};
    for (size_t k = 0; k < sizeof v / sizeof *v; k++)
        rc |= fputc(',', f) == EOF || output_csv_number(f, v[k]) < 0;
    rc |= fputc('\n', f) == EOF;
    return rc || ferror(f) ? -1 : 0;
}

/* ---- results files ------------------------------------------------------ */

static int has_suffix(const char *s, const char *suf)
{
    size_t n = strlen(s), m = strlen(suf);
    return n > m && strcasecmp(s + n - m, suf) == 0;
}

/* The leading columns of a single run's CSV: what identifies the result. */
static int csv_single(FILE *f, const scenario_t *s, const output_sources_t *src,
                      const metrics_summary_t *m)
{
    static const char *const keys[] = {"scenario", "mode", "seed", "replications",
                                       "tenants", "edge_service_source",
                                       "cloud_service_source"};
    char seed[32], reps[16], ten[16];
    snprintf(seed, sizeof seed, "%" PRIu64, s->seed);
    snprintf(reps, sizeof reps, "%d", m->reps);
    snprintf(ten, sizeof ten, "%d", s->ntenants);
    const char *vals[] = {s->name, proto_mode_name(s), seed,
                          reps, ten, src ? src->edge : "", src ? src->cloud : ""};
    /* A single group's columns would repeat the fleet's. */
    metrics_summary_t one = *m;
    if (s->ngroups < 2 || m->ngroups != s->ngroups) {
        one.groups = NULL;
        one.ngroups = 0;
    }
    const char **names = one.ngroups ? malloc((size_t)one.ngroups * sizeof *names) : NULL;
    if (one.ngroups && !names) return -1;
    for (int g = 0; g < one.ngroups; g++) names[g] = s->groups[g].name;
    int rc = output_csv_header_groups(f, keys, 7, names, one.ngroups);
    free(names);
    return rc < 0 ? -1 : output_csv_row(f, vals, 7, &one);
}

/* A run's results, as output_write_with hands them to the two bodies. */
typedef struct run_body {
    const scenario_t *s;
    const output_sources_t *src;
    const metrics_summary_t *m;
    const output_extra_t *x;   /* the JSON's extra keys */
    int nx;
} run_body_t;

static int run_json(FILE *f, const void *ctx)
{
    const run_body_t *b = ctx;
    return output_json_extra(f, b->s, b->src, b->m, b->x, b->nx);
}

static int run_csv(FILE *f, const void *ctx)
{
    const run_body_t *b = ctx;
    return csv_single(f, b->s, b->src, b->m);
}

int output_sidecar_path(const char *path, char *out, size_t n)
{
    size_t ext = has_suffix(path, ".json") ? 5 : has_suffix(path, ".csv") ? 4 : 0;
    int w = snprintf(out, n, "%.*s.scenario.yaml", (int)(strlen(path) - ext), path);
    return w < 0 || (size_t)w >= n ? -1 : 0;
}

/* Writes the results through body into o; -1 with err (o aborted). */
static int write_body(outfile_t *o, output_body_fn body, const void *ctx, err_t *err)
{
    errno = 0;
    if (body(o->f, ctx) == 0) return 0;
    int e = errno;
    outfile_abort(o);
    return err_set(err, ERR_RUNTIME, "%s: write failed: %s", o->name,
                   e ? strerror(e) : "I/O error");
}

/* Results plus sidecar: both are written and synced to temporary files
 * before either is renamed, so a failure in writing leaves neither. The
 * sidecar is renamed first: results whose scenario is missing cannot be
 * reproduced. Results written through to a device or FIFO (outfile.h) get
 * no sidecar: there is no file for it to stand beside. */
int output_write_with(const char *path, const scenario_t *s, const char *note,
                      output_body_fn json, output_body_fn csv, const void *ctx,
                      err_t *err)
{
    if (output_check_path(path, err) != 0) return -1;
    output_body_fn body = has_suffix(path, ".json") ? json : csv;
    char side[OUTFILE_PATH_MAX];
    if (output_sidecar_path(path, side, sizeof side) != 0)
        return err_set(err, ERR_RUNTIME, "%s: path too long", path);
    outfile_t f, sf;
    if (outfile_open(&f, path, err) != 0) return -1;
    if (write_body(&f, body, ctx, err) != 0) return -1;
    if (f.stream) return outfile_commit(&f, err);
    if (outfile_open(&sf, side, err) != 0) {
        outfile_abort(&f);
        return -1;
    }
    errno = 0;
    /* Comments, so that the sidecar still loads as a scenario; the files
     * read, by path and digest, so that a rerun can tell it reads others. */
    if (fprintf(sf.f, "# written by %s\n", version_string()) < 0 ||
        (note && fputs(note, sf.f) == EOF) || scenario_write_reads(s, sf.f) < 0 ||
        scenario_write_yaml(s, sf.f) < 0) {
        int e = errno;
        outfile_abort(&sf);
        outfile_abort(&f);
        return err_set(err, ERR_RUNTIME, "%s: cannot write the scenario sidecar%s%s",
                       side, e ? ": " : "", e ? strerror(e) : "");
    }
    if (outfile_close(&sf, err) != 0) {
        outfile_abort(&f);
        return -1;
    }
    if (outfile_close(&f, err) != 0) {
        outfile_abort(&sf);
        return -1;
    }
    if (outfile_publish(&sf, err) != 0) {
        outfile_abort(&f);
        return -1;
    }
    if (outfile_publish(&f, err) != 0) {
        if (!sf.stream) unlink(sf.dest);   /* no sidecar for results that were not written */
        return -1;
    }
    return 0;
}

int output_check_path(const char *path, err_t *err)
{
    return outpath_check(path, err);
}

int output_write_file(const char *path, const scenario_t *s,
                      const output_sources_t *src, const metrics_summary_t *m,
                      err_t *err)
{
    return output_write_file_extra(path, s, src, m, NULL, 0, err);
}

int output_write_file_extra(const char *path, const scenario_t *s,
                            const output_sources_t *src, const metrics_summary_t *m,
                            const output_extra_t *x, int nx, err_t *err)
{
    run_body_t b = {s, src, m, x, nx};
    return output_write_with(path, s, NULL, run_json, run_csv, &b, err);
}
