/* test_output — JSON validity (checked by a strict parser written here),
 * CSV shape and quoting, the human summary, and atomic file writing. */
#include <dirent.h>
#include <errno.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "accepttest.h"
#include "check.h"
#include "model/gamma.h"
#include "io/outfile.h"
#include "run/output.h"
#include "entity/proto.h"
#include "base/version.h"

/* ---- a strict JSON parser (RFC 8259 subset: no arrays, true or false are
 * needed, but accepted) that records the top-level keys and their values ---- */

#define MAXKEYS 256

typedef struct jp {
    const char *p;
    int depth;
    int nkeys;
    char keys[MAXKEYS][128];
    char vals[MAXKEYS][512]; /* raw text of numbers/null, decoded strings */
} jp_t;

static void jp_ws(jp_t *j)
{
    while (*j->p == ' ' || *j->p == '\t' || *j->p == '\n' || *j->p == '\r') j->p++;
}

static int hexval(char c)
{
    if (c >= '0' && c <= '9') return c - '0';
    if (c >= 'a' && c <= 'f') return c - 'a' + 10;
    if (c >= 'A' && c <= 'F') return c - 'A' + 10;
    return -1;
}

/* Appends code point cp as UTF-8. */
static size_t put_utf8(char *out, size_t o, size_t cap, unsigned cp)
{
    unsigned char b[4];
    size_t n;
    if (cp < 0x80) { b[0] = (unsigned char)cp; n = 1; }
    else if (cp < 0x800) { b[0] = (unsigned char)(0xC0 | cp >> 6); b[1] = (unsigned char)(0x80 | (cp & 0x3F)); n = 2; }
    else { b[0] = (unsigned char)(0xE0 | cp >> 12); b[1] = (unsigned char)(0x80 | ((cp >> 6) & 0x3F)); b[2] = (unsigned char)(0x80 | (cp & 0x3F)); n = 3; }
    for (size_t i = 0; i < n && o + 1 < cap; i++) out[o++] = (char)b[i];
    return o;
}

/* String: no raw control characters, only the standard escapes, UTF-8
 * well formed. Decoded into out (may be NULL). */
static int jp_string(jp_t *j, char *out, size_t cap)
{
    size_t o = 0;
    if (*j->p != '"') return -1;
    j->p++;
    for (;;) {
        unsigned char c = (unsigned char)*j->p;
        if (c == '\0' || c < 0x20) return -1;
        if (c == '"') { j->p++; break; }
        if (c == '\\') {
            char e = j->p[1];
            unsigned cp;
            j->p += 2;
            switch (e) {
            case '"': cp = '"'; break;
            case '\\': cp = '\\'; break;
            case '/': cp = '/'; break;
            case 'b': cp = '\b'; break;
            case 'f': cp = '\f'; break;
            case 'n': cp = '\n'; break;
            case 'r': cp = '\r'; break;
            case 't': cp = '\t'; break;
            case 'u':
                cp = 0;
                for (int i = 0; i < 4; i++) {
                    int h = hexval(j->p[i]);
                    if (h < 0) return -1;
                    cp = cp * 16 + (unsigned)h;
                }
                j->p += 4;
                if (cp >= 0xD800 && cp <= 0xDFFF) return -1; /* not needed here */
                break;
            default: return -1;
            }
            if (out) o = put_utf8(out, o, cap, cp);
            continue;
        }
        size_t len = c < 0x80 ? 1 : (c & 0xE0) == 0xC0 ? 2 : (c & 0xF0) == 0xE0 ? 3
                   : (c & 0xF8) == 0xF0 ? 4 : 0;
        if (len == 0) return -1;
        for (size_t i = 1; i < len; i++)
            if (((unsigned char)j->p[i] & 0xC0) != 0x80) return -1;
        for (size_t i = 0; i < len; i++) {
            if (out && o + 1 < cap) out[o++] = j->p[i];
        }
        j->p += len;
    }
    if (out) out[o] = '\0';
    return 0;
}

static int jp_number(jp_t *j)
{
    const char *p = j->p;
    if (*p == '-') p++;
    if (*p == '0') p++;
    else if (*p >= '1' && *p <= '9') while (*p >= '0' && *p <= '9') p++;
    else return -1;
    if (*p == '.') {
        p++;
        if (!(*p >= '0' && *p <= '9')) return -1;
        while (*p >= '0' && *p <= '9') p++;
    }
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-') p++;
        if (!(*p >= '0' && *p <= '9')) return -1;
        while (*p >= '0' && *p <= '9') p++;
    }
    j->p = p;
    return 0;
}

static int jp_value(jp_t *j, char *out, size_t cap);

static int jp_object(jp_t *j)
{
    int top = j->depth == 0;
    if (*j->p != '{' || ++j->depth > 32) return -1;
    j->p++;
    jp_ws(j);
    if (*j->p == '}') { j->p++; j->depth--; return 0; }
    for (;;) {
        char key[128];
        jp_ws(j);
        if (jp_string(j, key, sizeof key) < 0) return -1;
        jp_ws(j);
        if (*j->p != ':') return -1;
        j->p++;
        jp_ws(j);
        char *val = NULL;
        if (top) {
            if (j->nkeys >= MAXKEYS) return -1;
            snprintf(j->keys[j->nkeys], sizeof j->keys[0], "%s", key);
            val = j->vals[j->nkeys++];
        }
        if (jp_value(j, val, sizeof j->vals[0]) < 0) return -1;
        jp_ws(j);
        if (*j->p == ',') { j->p++; continue; }
        if (*j->p == '}') { j->p++; j->depth--; return 0; }
        return -1;
    }
}

static int jp_value(jp_t *j, char *out, size_t cap)
{
    const char *start = j->p;
    int rc;
    if (*j->p == '{') rc = jp_object(j);
    else if (*j->p == '"') return jp_string(j, out, cap);
    else if (strncmp(j->p, "null", 4) == 0) { j->p += 4; rc = 0; }
    else if (strncmp(j->p, "true", 4) == 0) { j->p += 4; rc = 0; }
    else if (strncmp(j->p, "false", 5) == 0) { j->p += 5; rc = 0; }
    else rc = jp_number(j);
    if (rc == 0 && out) snprintf(out, cap, "%.*s", (int)(j->p - start), start);
    return rc;
}

/* 0 if text is exactly one JSON object (surrounding whitespace allowed). */
static int json_parse(const char *text, jp_t *j)
{
    memset(j, 0, sizeof *j);
    j->p = text;
    jp_ws(j);
    if (jp_object(j) < 0) return -1;
    jp_ws(j);
    return *j->p == '\0' ? 0 : -1;
}

static int key_count(const jp_t *j, const char *key)
{
    int n = 0;
    for (int i = 0; i < j->nkeys; i++) n += strcmp(j->keys[i], key) == 0;
    return n;
}

static const char *key_val(const jp_t *j, const char *key)
{
    for (int i = 0; i < j->nkeys; i++)
        if (strcmp(j->keys[i], key) == 0) return j->vals[i];
    return NULL;
}

static void test_validator_rejects(void)
{
    static jp_t j;
    /* the parser must be able to say no, or the JSON test proves nothing */
    static const char *bad[] = {
        "", "{", "{}{}", "{\"a\": 1,}", "{\"a\": nan}", "{\"a\": inf}",
        "{\"a\": 01}", "{\"a\": 1.}", "{\"a\": .5}", "{\"a\": \"x\ty\"}",
        "{\"a\": \"\\x\"}", "{\"a\" 1}", "{a: 1}", "{\"a\": \"\xff\"}",
        "{\"a\": 1} x", "[1]", "{\"a\": -}", "{\"a\": 1e}"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        int rc = json_parse(bad[i], &j);
        if (rc == 0) printf("  accepted bad JSON: %s\n", bad[i]);
        CHECK(rc < 0);
    }
    CHECK(json_parse(" {\"a\": -0.5e+3, \"b\": {\"c\": null}, \"d\": \"\\u00e9\\n\"}\n", &j) == 0);
    CHECK(j.nkeys == 3);
    CHECK_STR(key_val(&j, "d"), "\xc3\xa9\n");
    CHECK_STR(key_val(&j, "a"), "-0.5e+3");
}

/* ---- fixtures ---- */

/* The acceptance every hand-built scenario shares (freed at exit). */
static accept_cfg_t shared_acceptance;

static void make_scenario(scenario_t *s, const char *name, int reps)
{
    memset(s, 0, sizeof *s);
    if (!shared_acceptance.model)
        accepttest_cfg(&shared_acceptance, "{model: iid, alpha: 0.8}");
    s->acceptance = shared_acceptance;
    snprintf(s->name, sizeof s->name, "%s", name);
    s->seed = 18446744073709551615ULL; /* largest seed: printed in full */
    s->replications = reps;
    s->duration = 300;
    s->warmup = 10;
    s->protocol.proto = proto_find("async");
    s->protocol.gamma = 4;
    s->protocol.window = 4;
    s->protocol.gamma_policy = gamma_find("fixed");
    s->ntenants = 32;
    s->cloud.replicas = 1;
}

static void make_summary(metrics_summary_t *m, int reps)
{
    m->reps = reps;
    m->groups = NULL;
    m->ngroups = 0;
    for (int i = 0; i < METRIC_COUNT; i++) {
        m->value[i] = 0.001 * (i + 1);
        m->ci95[i] = reps > 1 ? 0.0001 * (i + 1) : 0.0;
    }
    m->value[METRIC_ITL_MEAN] = 1.0 / 3.0;      /* %.10g: 0.3333333333 */
    m->value[METRIC_ITL_P50] = NAN;             /* no value -> null */
    m->ci95[METRIC_ITL_P50] = NAN;
    m->value[METRIC_ITL_P95] = INFINITY;        /* not JSON -> null */
    m->value[METRIC_THROUGHPUT] = 123456789.125;/* %.10g: 123456789.1 */
    m->value[METRIC_EVENTS] = 1e20;             /* %.10g: 1e+20 */
    m->value[METRIC_WALL_S] = 2.5e-7;           /* %.10g: 2.5e-07 */
}

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return NULL;
    char *buf = malloc(1 << 20);
    size_t n = buf ? fread(buf, 1, (1 << 20) - 1, f) : 0;
    fclose(f);
    if (buf) buf[n] = '\0';
    return buf;
}

/* 1 when text's first line is "# written by " + version_string(). */
static int starts_with_version_comment(const char *text)
{
    char want[256];
    snprintf(want, sizeof want, "# written by %s\n", version_string());
    return strncmp(text, want, strlen(want)) == 0;
}

/* version_string() is "specsim " + the VERSION file + " (commit HASH)",
 * HASH non-empty and without spaces (git describe, or "unknown"). */
static void test_version_string(void)
{
    char *file = slurp(SPECSIM_ROOT "/VERSION");
    CHECK(file != NULL);
    if (!file) return;
    file[strcspn(file, " \t\r\n")] = '\0';
    char want[128];
    snprintf(want, sizeof want, "specsim %s (commit ", file);
    const char *v = version_string();
    CHECK(strncmp(v, want, strlen(want)) == 0);
    const char *hash = v + strlen(want);
    size_t n = strlen(hash);
    CHECK(n >= 2 && hash[n - 1] == ')' && strcspn(hash, " ") == n);
    free(file);
}

/* output into a malloc'd string via open_memstream */
typedef int (*writer_fn)(FILE *, const scenario_t *, const output_sources_t *,
                         const metrics_summary_t *);

static char *render(writer_fn fn, const scenario_t *s, const output_sources_t *src,
                    const metrics_summary_t *m, int *rc)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) return NULL;
    *rc = fn(f, s, src, m);
    fclose(f);
    return buf;
}

/* ---- JSON ---- */

static void test_json_valid_and_complete(void)
{
    static jp_t j;
    scenario_t s;
    metrics_summary_t m;
    output_sources_t src = {.edge = "table", .cloud = "fixed"};
    /* every character class the escaper must handle, plus one invalid byte */
    make_scenario(&s, "q\"b\\s/n\nt\tc\x01 d\x7f caf\xc3\xa9 bad\xff end", 4);
    make_summary(&m, 4);
    int rc = -1;
    char *out = render(output_json, &s, &src, &m, &rc);
    CHECK(out != NULL && rc == 0);
    if (!out) return;
    int prc = json_parse(out, &j);
    CHECK(prc == 0);
    if (prc != 0) printf("%s\n", out);
    CHECK(out[strlen(out) - 1] == '\n');
    CHECK_STR(key_val(&j, "scenario"),
              "q\"b\\s/n\nt\tc\x01 d\x7f caf\xc3\xa9 bad\xef\xbf\xbd end");
    CHECK_STR(key_val(&j, "mode"), "async");
    CHECK_STR(key_val(&j, "seed"), "18446744073709551615");
    CHECK_STR(key_val(&j, "replications"), "4");
    CHECK_STR(key_val(&j, "tenants"), "32");
    CHECK_STR(key_val(&j, "edge_service_source"), "table");
    CHECK_STR(key_val(&j, "cloud_service_source"), "fixed");
    for (int i = 0; i < METRIC_COUNT; i++) {
        char ci[128];
        snprintf(ci, sizeof ci, "%s_ci95", metric_name(i));
        CHECK(key_count(&j, metric_name(i)) == 1);
        CHECK(key_count(&j, ci) == 1);
    }
    CHECK(j.nkeys == 9 + 2 * METRIC_COUNT);
    CHECK_STR(key_val(&j, "edge_service_sources"), "null");   /* not listed */
    CHECK_STR(key_val(&j, "itl_mean_s"), "0.3333333333");
    CHECK_STR(key_val(&j, "itl_p50_s"), "null");
    CHECK_STR(key_val(&j, "itl_p50_s_ci95"), "null");
    CHECK_STR(key_val(&j, "itl_p95_s"), "null");
    CHECK_STR(key_val(&j, "throughput_tok_s"), "123456789.1");
    CHECK_STR(key_val(&j, "events"), "1e+20");
    CHECK_STR(key_val(&j, "wall_s"), "2.5e-07");
    CHECK_STR(key_val(&j, "gpu_util"), "0.014"); /* 0.001·14 */
    /* the build that wrote it */
    CHECK_STR(key_val(&j, "version"), version_string());
    /* order: the fixed keys, then metrics in METRICS_LIST order */
    CHECK_STR(j.keys[0], "scenario");
    CHECK_STR(j.keys[1], "version");
    CHECK_STR(j.keys[9], metric_name(0));
    CHECK_STR(j.keys[10], "itl_mean_s_ci95");
    free(out);
}

static void test_json_single_rep_and_no_sources(void)
{
    static jp_t j;
    scenario_t s;
    metrics_summary_t m;
    make_scenario(&s, "", 1);
    s.protocol.proto = proto_find("cloud-only");
    make_summary(&m, 1);
    int rc = -1;
    char *out = render(output_json, &s, NULL, &m, &rc);
    CHECK(out != NULL && rc == 0);
    if (!out) return;
    CHECK(json_parse(out, &j) == 0);
    CHECK(j.nkeys == 9 + METRIC_COUNT);
    CHECK_STR(key_val(&j, "version"), version_string());
    CHECK(strstr(out, "_ci95") == NULL);
    CHECK_STR(key_val(&j, "scenario"), "");
    CHECK_STR(key_val(&j, "mode"), "cloud-only");
    CHECK_STR(key_val(&j, "edge_service_source"), "null");
    CHECK_STR(key_val(&j, "edge_service_sources"), "null");
    for (int i = 0; i < METRIC_COUNT; i++) CHECK(key_count(&j, metric_name(i)) == 1);
    free(out);
}

/* Tenant groups with different edge sources: JSON keeps the string
 * ("mixed") and adds {group: source}; the summary lists each source with
 * its groups. */
static void test_group_sources(void)
{
    static jp_t j;
    scenario_t s;
    metrics_summary_t m;
    tenant_group_t g[3];
    memset(g, 0, sizeof g);
    snprintf(g[0].name, sizeof g[0].name, "phones");
    snprintf(g[1].name, sizeof g[1].name, "laptops");
    snprintf(g[2].name, sizeof g[2].name, "jetsons");
    const char *per[3] = {"datasheet", "table", "datasheet"};
    output_sources_t src = {.edge = "mixed", .cloud = "fixed", .ngroups = 3,
                         .edge_group = per};
    make_scenario(&s, "g", 1);
    s.groups = g;
    s.ngroups = 3;
    make_summary(&m, 1);
    int rc = -1;
    char *out = render(output_json, &s, &src, &m, &rc);
    CHECK(out != NULL && rc == 0);
    CHECK(out && json_parse(out, &j) == 0);
    CHECK_STR(key_val(&j, "edge_service_source"), "mixed");
    CHECK_STR(key_val(&j, "edge_service_sources"),
              "{\"phones\": \"datasheet\", \"laptops\": \"table\", \"jetsons\": \"datasheet\"}");
    free(out);
    out = render(output_summary, &s, &src, &m, &rc);
    CHECK(out != NULL && rc == 0);
    CHECK(out && strstr(out, "service time edge: datasheet (phones, jetsons), "
                             "table (laptops), cloud: fixed\n") != NULL);
    free(out);
    /* All groups agree: the one source. */
    per[1] = "datasheet";
    snprintf(src.edge, sizeof src.edge, "datasheet");
    out = render(output_summary, &s, &src, &m, &rc);
    CHECK(out && strstr(out, "service time edge: datasheet, cloud: fixed\n") != NULL);
    free(out);
}

/* ---- CSV ---- */

/* Splits one CSV record (RFC 4180) starting at *p into fields; returns the
 * field count and advances *p past the record's newline, -1 on bad quoting. */
static int csv_record(const char **p, char fields[][256], int maxf)
{
    const char *s = *p;
    int n = 0;
    for (;;) {
        char buf[256];
        size_t o = 0;
        if (*s == '"') {
            s++;
            for (;;) {
                if (*s == '\0') return -1;
                if (*s == '"') {
                    if (s[1] == '"') { if (o < 255) buf[o++] = '"'; s += 2; continue; }
                    s++;
                    break;
                }
                if (o < 255) buf[o++] = *s;
                s++;
            }
            if (*s != ',' && *s != '\n' && *s != '\0') return -1;
        } else {
            while (*s && *s != ',' && *s != '\n') {
                if (*s == '"') return -1;
                if (o < 255) buf[o++] = *s;
                s++;
            }
        }
        buf[o] = '\0';
        if (n < maxf) memcpy(fields[n], buf, o + 1);
        n++;
        if (*s == ',') { s++; continue; }
        if (*s == '\n') s++;
        *p = s;
        return n;
    }
}

static void test_csv_shape_and_quoting(void)
{
    static char hdr[256][256], row[256][256];
    const char *keys[] = {"protocol.gamma", "odd,key", "tenants.network.rtt"};
    const char *vals[] = {"4", "a \"quoted\", value\nwith newline", "40ms"};
    metrics_summary_t m;
    make_summary(&m, 3);
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    if (!f) return;
    CHECK(output_csv_header(f, keys, 3) == 0);
    CHECK(output_csv_row(f, vals, 3, &m) == 0);
    CHECK(output_csv_row(f, vals, 3, &m) == 0); /* sweeps append rows */
    fclose(f);
    const char *p = buf;
    int nh = csv_record(&p, hdr, 256);
    int nr = csv_record(&p, row, 256);
    int nr2 = csv_record(&p, row, 256);
    CHECK(*p == '\0');
    CHECK(nh == 3 + 2 * METRIC_COUNT);
    CHECK(nr == nh);
    CHECK(nr2 == nh);
    CHECK_STR(hdr[1], "odd,key");
    CHECK_STR(row[1], vals[1]);
    CHECK_STR(row[2], "40ms");
    for (int i = 0; i < METRIC_COUNT; i++) {
        char ci[128];
        snprintf(ci, sizeof ci, "%s_ci95", metric_name(i));
        CHECK_STR(hdr[3 + 2 * i], metric_name(i));
        CHECK_STR(hdr[4 + 2 * i], ci);
    }
    CHECK_STR(row[3 + 2 * METRIC_ITL_MEAN], "0.3333333333");
    CHECK_STR(row[3 + 2 * METRIC_ITL_P50], "");        /* NaN: empty */
    CHECK_STR(row[4 + 2 * METRIC_ITL_P50], "");
    CHECK_STR(row[3 + 2 * METRIC_ITL_P95], "inf");
    CHECK_STR(row[4 + 2 * METRIC_GPU_UTIL], "0.0014"); /* 0.0001·14 */
    free(buf);

    /* no key columns: the row starts with the first metric, no empty field */
    buf = NULL;
    f = open_memstream(&buf, &len);
    CHECK(f != NULL);
    if (!f) return;
    CHECK(output_csv_header(f, NULL, 0) == 0);
    CHECK(output_csv_row(f, NULL, 0, &m) == 0);
    fclose(f);
    p = buf;
    nh = csv_record(&p, hdr, 256);
    nr = csv_record(&p, row, 256);
    CHECK(nh == 2 * METRIC_COUNT && nr == nh);
    CHECK_STR(hdr[0], metric_name(0));
    free(buf);
}

/* ---- human summary ---- */

static void test_summary(void)
{
    scenario_t s;
    metrics_summary_t m;
    output_sources_t src = {.edge = "table", .cloud = "datasheet"};
    make_scenario(&s, "default", 4);
    make_summary(&m, 4);
    m.value[METRIC_ITL_MEAN] = 0.03065;   /* 30.65 ms */
    m.ci95[METRIC_ITL_MEAN] = 0.000123;   /* 0.123 ms */
    m.value[METRIC_GPU_UTIL] = 0.5;       /* 50 % */
    m.value[METRIC_THROUGHPUT] = 12345.6; /* whole: 12346 tok/s */
    m.value[METRIC_EVENTS] = 123456789;
    int rc = -1;
    char *out = render(output_summary, &s, &src, &m, &rc);
    CHECK(out != NULL && rc == 0);
    if (!out) return;
    int namew = 0;
    for (int i = 0; i < METRIC_COUNT; i++)
        if ((int)strlen(metric_name(i)) > namew) namew = (int)strlen(metric_name(i));
    /* each metric on exactly one line; values right-aligned to one column
     * (name, space, 12 wide) and units left-aligned to one column after
     * "  ± ci" (13 bytes: the sign is 2 bytes) */
    int seen[METRIC_COUNT] = {0};
    int vend = 2 + namew + 1 + 12, ucol = vend + 2 + 13 + 1, aligned = 1;
    for (char *line = out; *line;) {
        char *nl = strchr(line, '\n');
        int len = nl ? (int)(nl - line) : (int)strlen(line);
        char name[64];
        if (len > 2 && line[0] == ' ' && line[1] == ' ' &&
            sscanf(line + 2, "%63s", name) == 1) {
            int id = metric_find(name);
            CHECK(id >= 0);
            if (id >= 0) seen[id]++;
            if (len < vend || line[vend - 1] == ' ' || (len > vend && line[vend] != ' '))
                aligned = 0;
            if (len > ucol && (line[ucol - 1] != ' ' || line[ucol] == ' '))
                aligned = 0;
            if (!aligned) printf("  misaligned: %.*s\n", len, line);
        }
        line += len + (nl ? 1 : 0);
    }
    CHECK(aligned);
    for (int i = 0; i < METRIC_COUNT; i++) CHECK(seen[i] == 1);
    CHECK(strstr(out, "30.65  \xc2\xb1 0.12       ms\n") != NULL);
    CHECK(strstr(out, "50  \xc2\xb1 0.14       %\n") != NULL); /* ci 0.0001·14 = 0.14 % */
    CHECK(strstr(out, "12346  \xc2\xb1 0.001      tok/s\n") != NULL);
    CHECK(strstr(out, "123456789  \xc2\xb1 0.0025     events\n") != NULL);
    CHECK(strstr(out, "edge: table, cloud: datasheet") != NULL);
    CHECK(strstr(out, "async, gamma 4, window 4") != NULL);
    CHECK(strstr(out, "\nlatency\n") && strstr(out, "\nbookkeeping\n"));
    CHECK(strstr(out, "n/a") != NULL); /* itl_p50_s is NaN */
    free(out);

    /* one replication: no intervals; no sources given */
    make_summary(&m, 1);
    s.ngroups = 0;
    s.groups = NULL;
    out = render(output_summary, &s, NULL, &m, &rc);
    CHECK(out != NULL && rc == 0);
    if (!out) return;
    CHECK(strstr(out, "\xc2\xb1") == NULL);
    CHECK(strstr(out, " 333.3 ms\n") != NULL);  /* itl_mean_s = 1/3 s */
    CHECK(strstr(out, " 1.4 %\n") != NULL);     /* gpu_util 0.014 */
    CHECK(strstr(out, "edge: unknown") != NULL);
    free(out);
}

/* ---- atomic files ---- */

static char tmpdir[256];

static int make_tmpdir(void)
{
    snprintf(tmpdir, sizeof tmpdir, "/tmp/test_output.XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

/* Entries of dir other than . and .. */
static int dir_count(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strcmp(e->d_name, ".") && strcmp(e->d_name, "..")) n++;
    closedir(d);
    return n;
}

static int has_tmp_file(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return 1;
    int found = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) found = 1;
    closedir(d);
    return found;
}

static void rm_rf(const char *dir)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[512];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) rm_rf(p);
        else unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

static int write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int rc = fputs(text, f) == EOF;
    return (fclose(f) == 0 && !rc) ? 0 : -1;
}

static void test_atomic_primitives(void)
{
    char path[512];
    err_t err = {0};
    outfile_t o, o2;
    CHECK(make_tmpdir() == 0);
    snprintf(path, sizeof path, "%s/a.txt", tmpdir);
    /* commit: the content appears, the temporary does not stay */
    CHECK(outfile_open(&o, path, &err) == 0);
    if (o.f) {
        CHECK(strncmp(o.tmp, path, strlen(path)) == 0 && strstr(o.tmp, ".tmp."));
        CHECK(!o.stream);
        fputs("hello\n", o.f);
        /* a second writer of the same path in this process is refused */
        CHECK(outfile_open(&o2, path, &err) == -1);
        CHECK(err.code == ERR_RUNTIME && strstr(err.msg, path) != NULL);
        outfile_abort(&o2);
        CHECK(outfile_commit(&o, &err) == 0);
    }
    char *txt = slurp(path);
    CHECK_STR(txt, "hello\n");
    free(txt);
    CHECK(dir_count(tmpdir) == 1);
    /* abort: nothing changes, nothing stays; twice is harmless */
    CHECK(outfile_open(&o, path, &err) == 0);
    if (o.f) fputs("half-writ", o.f);
    outfile_abort(&o);
    outfile_abort(&o);
    txt = slurp(path);
    CHECK_STR(txt, "hello\n");
    free(txt);
    CHECK(dir_count(tmpdir) == 1);
    /* a directory is refused as a target, before anything is created */
    CHECK(outfile_open(&o, tmpdir, &err) == -1 && err.code == ERR_INPUT);
    CHECK(strstr(err.msg, "is a directory") != NULL);
    CHECK(dir_count(tmpdir) == 1);
    /* a character device is written through, with no temporary */
    CHECK(outfile_open(&o, "/dev/null", &err) == 0);
    CHECK(o.stream && !o.tmp[0]);
    if (o.f) fputs("gone\n", o.f);
    CHECK(outfile_commit(&o, &err) == 0);
    struct stat st;
    CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    /* same file: by inode when both exist, by resolved path when neither */
    char other[600], spelled[700];
    snprintf(other, sizeof other, "%s/b.txt", tmpdir);
    snprintf(spelled, sizeof spelled, "%s/./b.txt", tmpdir);
    CHECK(outfile_same(path, path) && !outfile_same(path, other));
    CHECK(outfile_same(other, spelled));
    CHECK(link(path, other) == 0 && outfile_same(path, other));
    const outfile_role_t r[] = {{path, "the scenario", 0}, {other, "--trace", 1}};
    CHECK(outfile_distinct(r, 2, &err) == -1 && err.code == ERR_INPUT);
    CHECK(strstr(err.msg, path) && strstr(err.msg, other));
    const outfile_role_t dev[] = {{"/dev/null", "--out", 1}, {"/dev/null", "--trace", 1}};
    CHECK(outfile_distinct(dev, 2, &err) == 0);
    rm_rf(tmpdir);
}

static void test_write_json_file(void)
{
    static jp_t j;
    char path[512];
    err_t err = {0};
    scenario_t s;
    metrics_summary_t m;
    output_sources_t src = {.edge = "fixed", .cloud = "fixed"};
    make_scenario(&s, "file", 2);
    make_summary(&m, 2);
    CHECK(make_tmpdir() == 0);
    snprintf(path, sizeof path, "%s/out.json", tmpdir);
    CHECK(write_text(path, "old\n") == 0);
    CHECK(output_write_file(path, &s, &src, &m, &err) == 0);
    char *txt = slurp(path);
    CHECK(txt && json_parse(txt, &j) == 0);
    CHECK(txt && key_count(&j, "itl_mean_s_ci95") == 1);
    free(txt);
    /* The resolved scenario beside it, as for CSV: out.scenario.yaml. */
    char side[600];
    snprintf(side, sizeof side, "%s/out.scenario.yaml", tmpdir);
    txt = slurp(side);
    CHECK(txt && strstr(txt, "seed:") != NULL);
    CHECK(txt && starts_with_version_comment(txt));
    free(txt);
    CHECK(dir_count(tmpdir) == 2);
    CHECK(!has_tmp_file(tmpdir));
    /* unknown extension: input error, nothing created */
    snprintf(path, sizeof path, "%s/out.txt", tmpdir);
    CHECK(output_write_file(path, &s, &src, &m, &err) == -1);
    CHECK(err.code == ERR_INPUT && strstr(err.msg, "out.txt") != NULL);
    snprintf(path, sizeof path, "%s/.json.bak", tmpdir);
    CHECK(output_write_file(path, &s, &src, &m, &err) == -1);
    CHECK(dir_count(tmpdir) == 2);
    rm_rf(tmpdir);
}

/* Writes into a directory the writer may not change; 0 when the write
 * failed with EACCES as it should, 77 when the case cannot be set up. */
static int unwritable_try(const char *path, const scenario_t *s,
                          const metrics_summary_t *m)
{
    err_t err = {0};
    if (output_write_file(path, s, NULL, m, &err) != -1) return 1;
    if (err.code != ERR_RUNTIME || !strstr(err.msg, strerror(EACCES))) {
        printf("  unexpected error: %s\n", err.msg);
        return 2;
    }
    return 0;
}

static int unwritable_case(const char *path, const scenario_t *s,
                           const metrics_summary_t *m)
{
    if (geteuid() != 0) return unwritable_try(path, s, m);
    fflush(stdout);
    pid_t pid = fork();
    if (pid < 0) return 77;
    if (pid == 0) {
        if (setgid(65534) != 0 || setuid(65534) != 0) _exit(77);
        _exit(unwritable_try(path, s, m));
    }
    int st;
    if (waitpid(pid, &st, 0) != pid || !WIFEXITED(st)) return 3;
    return WEXITSTATUS(st);
}

/* Failures of every kind leave the old target as it was and no temporary. */
static void test_write_failures(void)
{
    char path[512], sub[512];
    err_t err = {0};
    scenario_t s;
    metrics_summary_t m;
    make_scenario(&s, "fail", 2);
    make_summary(&m, 2);
    CHECK(make_tmpdir() == 0);

    /* 1. the directory does not exist */
    snprintf(path, sizeof path, "%s/nodir/out.json", tmpdir);
    memset(&err, 0, sizeof err);
    CHECK(output_write_file(path, &s, NULL, &m, &err) == -1);
    CHECK(err.code == ERR_RUNTIME && strstr(err.msg, path) != NULL);
    CHECK(strstr(err.msg, strerror(ENOENT)) != NULL);

    /* 2. the parent is a file (unwritable whoever runs the test) */
    snprintf(sub, sizeof sub, "%s/plain", tmpdir);
    CHECK(write_text(sub, "x") == 0);
    snprintf(path, sizeof path, "%s/plain/out.json", tmpdir);
    CHECK(output_write_file(path, &s, NULL, &m, &err) == -1);
    CHECK(strstr(err.msg, strerror(ENOTDIR)) != NULL);
    unlink(sub);

    /* 3. write error mid-file (file size limit: EFBIG, works as root too);
     *    the old target survives */
    snprintf(path, sizeof path, "%s/out.json", tmpdir);
    CHECK(write_text(path, "old\n") == 0);
    struct rlimit old, lim;
    CHECK(getrlimit(RLIMIT_FSIZE, &old) == 0);
    void (*prev)(int) = signal(SIGXFSZ, SIG_IGN);
    lim = old;
    lim.rlim_cur = 64;
    CHECK(setrlimit(RLIMIT_FSIZE, &lim) == 0);
    int rc = output_write_file(path, &s, NULL, &m, &err);
    CHECK(setrlimit(RLIMIT_FSIZE, &old) == 0);
    signal(SIGXFSZ, prev);
    CHECK(rc == -1);
    CHECK(err.code == ERR_RUNTIME && strstr(err.msg, strerror(EFBIG)) != NULL);
    char *txt = slurp(path);
    CHECK_STR(txt, "old\n");
    free(txt);
    CHECK(dir_count(tmpdir) == 1);

    /* 4. the target is a directory: refused before anything is written
     *    (sim/io/outfile.h), the directory as it was */
    snprintf(path, sizeof path, "%s/d.json", tmpdir);
    CHECK(mkdir(path, 0755) == 0);
    snprintf(sub, sizeof sub, "%s/d.json/keep", tmpdir);
    CHECK(write_text(sub, "keep\n") == 0);
    CHECK(output_write_file(path, &s, NULL, &m, &err) == -1);
    CHECK(err.code == ERR_INPUT && strstr(err.msg, "is a directory") != NULL);
    txt = slurp(sub);
    CHECK_STR(txt, "keep\n");
    free(txt);
    CHECK(dir_count(tmpdir) == 2); /* out.json and d.json */
    CHECK(!has_tmp_file(tmpdir));

    /* 5. unwritable directory (permission bits do not stop root, so as
     *    root the write runs in a child that has dropped to nobody) */
    snprintf(sub, sizeof sub, "%s/ro", tmpdir);
    CHECK(mkdir(sub, 0755) == 0);
    snprintf(path, sizeof path, "%s/ro/out.json", tmpdir);
    CHECK(write_text(path, "old\n") == 0);
    CHECK(chmod(sub, 0555) == 0 && chmod(tmpdir, 0755) == 0);
    int status = unwritable_case(path, &s, &m);
    if (status == 77) {
        printf("  note: cannot drop root privileges: unwritable-directory case skipped\n");
    } else {
        CHECK(status == 0);
    }
    txt = slurp(path);
    CHECK_STR(txt, "old\n");
    free(txt);
    CHECK(dir_count(sub) == 1);
    chmod(sub, 0755);
    rm_rf(tmpdir);
}

/* The closed-form hook scenario of issue 2: a real scenario when the
 * scenario module can load one. */
static const char *hook_yaml =
    "name: sync-closed-form\nseed: 7\nduration: 300s\nwarmup: 10s\nreplications: 4\n"
    "protocol: {mode: sync, gamma: 4}\nacceptance: {model: iid, alpha: 0.7}\n"
    "tenants:\n  count: 1\n  edge: {draft_time: 10ms}\n"
    "  network: {rtt: 40ms, jitter: none, uplink: inf, downlink: inf}\n"
    "  workload: {arrival: closed, think: 0s, prompt_tokens: 1, output_tokens: 100000000}\n"
    "cloud:\n  replicas: 1\n  verify_time: 5ms\n  batching: {policy: continuous, max_batch: 1}\n";

static void test_write_csv_file(void)
{
    static char hdr[256][256], row[256][256];
    char path[512], side[512];
    err_t err = {0};
    scenario_t s;
    metrics_summary_t m;
    output_sources_t src = {.edge = "fixed", .cloud = "fixed"};
    int loaded = scenario_load_string("hook", hook_yaml, NULL, 0, &s, &err) == 0;
    if (!loaded) make_scenario(&s, "csv, \"file\"", 2);
    make_summary(&m, 2);
    CHECK(make_tmpdir() == 0);
    snprintf(path, sizeof path, "%s/res.csv", tmpdir);
    snprintf(side, sizeof side, "%s/res.scenario.yaml", tmpdir);
    int rc = output_write_file(path, &s, &src, &m, &err);
    if (!loaded && rc == -1 && strstr(err.msg, "sidecar")) {
        /* scenario_write_yaml is still the placeholder (returns -1): the
         * failure must be clean, the sidecar checks wait for the module */
        printf("  note: scenario module not ready, sidecar checks skipped\n");
        CHECK(err.code == ERR_RUNTIME && strstr(err.msg, "res.scenario.yaml"));
        CHECK(dir_count(tmpdir) == 0);
    } else {
        CHECK(rc == 0);
        if (rc != 0) printf("  %s\n", err.msg);
        char *txt = slurp(path);
        CHECK(txt != NULL);
        if (txt) {
            const char *p = txt;
            int nh = csv_record(&p, hdr, 256);
            int nr = csv_record(&p, row, 256);
            CHECK(nh == 7 + 2 * METRIC_COUNT && nr == nh && *p == '\0');
            CHECK_STR(hdr[0], "scenario");
            CHECK_STR(row[0], s.name);
            CHECK_STR(row[6], "fixed");
        }
        free(txt);
        txt = slurp(side);
        CHECK(txt && starts_with_version_comment(txt));
        free(txt);
        /* the sidecar is a scenario that loads back to the same one (its
         * version line is a comment) */
        scenario_t back;
        err_t e2 = {0};
        int brc = scenario_load(side, NULL, 0, &back, &e2);
        CHECK(brc == 0);
        if (brc == 0) {
            CHECK_STR(back.name, s.name);
            CHECK(back.seed == s.seed);
            scenario_fini(&back);
        } else {
            printf("  %s\n", e2.msg);
        }
        CHECK(dir_count(tmpdir) == 2);
    }
    CHECK(!has_tmp_file(tmpdir));
    if (loaded) scenario_fini(&s);
    rm_rf(tmpdir);
}

int main(void)
{
    RUN(test_validator_rejects);
    RUN(test_version_string);
    RUN(test_json_valid_and_complete);
    RUN(test_json_single_rep_and_no_sources);
    RUN(test_group_sources);
    RUN(test_csv_shape_and_quoting);
    RUN(test_summary);
    RUN(test_atomic_primitives);
    RUN(test_write_json_file);
    RUN(test_write_failures);
    RUN(test_write_csv_file);
    accept_cfg_fini(&shared_acceptance);
    return check_done();
}
