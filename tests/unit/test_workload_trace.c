/* Trace-driven arrivals (sim/model/workload_trace.h): a trace of N requests gives
 * N requests in file order at the trace's times with its lengths, read back
 * from the CSV event trace's request_start rows; round-robin and tenant
 * column assignment; time_scale; the Azure header and its date-times; bad
 * rows refused with FILE:LINE and the column. Requests are spaced far
 * apart (10 s against < 1 s of service) so that each starts when it
 * arrives, except where a test queues them on purpose. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "../check.h"
#include "config/scenario.h"
#include "run/sim.h"
#include "tracetest.h"

static char dir[64];

static const char *write_file(const char *name, const char *text)
{
    static char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    CHECK(f != NULL);
    if (f) {
        fputs(text, f);
        fclose(f);
    }
    return path;
}

/* A sync scenario with fixed times whose workload replays trace. */
static int load(const char *trace, const char *extra, const char *tenants,
                scenario_t *s, err_t *err)
{
    char yaml[4096];
    snprintf(yaml, sizeof yaml,
             "duration: 100s\nwarmup: 0s\nprotocol: {mode: sync, gamma: 4}\n"
             "acceptance: {model: iid, alpha: 0.5}\n"
             "tenants:\n%s"
             "  edge: {draft_time: 10ms, prefill_time: 10ms}\n"
             "  network: {rtt: 40ms}\n"
             "  workload: {arrival: trace, trace: '%s'%s}\n"
             "cloud: {verify_time: 5ms}\n",
             tenants ? tenants : "  count: 2\n", trace, extra ? extra : "");
    return scenario_load_string("test", yaml, NULL, 0, s, err);
}

typedef struct start {
    double t;
    int tenant;
    long prompt;
} start_t;

/* Runs s and collects the request_start rows of its CSV trace. */
static int starts(const scenario_t *s, start_t *out, int max)
{
    static const char *const ev[] = {"request_start", NULL};
    tracetest_row_t rows[256];
    metrics_summary_t m;
    int n = tracetest_run(s, &m, ev, rows, max < 256 ? max : 256);
    for (int k = 0; k < n; k++) out[k] = (start_t){rows[k].t, rows[k].tenant, rows[k].tokens};
    return n;
}

static void test_plain_round_robin(void)
{
    char text[1024] = "time_s,prompt_tokens,output_tokens\n";
    for (int k = 0; k < 7; k++)
        snprintf(text + strlen(text), sizeof text - strlen(text), "%d.25,%d,%d\n",
                 1 + 10 * k, 10 + k, 5 + k);
    scenario_t s;
    err_t err = {0};
    CHECK(load(write_file("plain.csv", text), NULL, NULL, &s, &err) == 0);
    if (err.code) printf("  %s\n", err.msg);
    start_t st[16];
    int n = starts(&s, st, 16);
    CHECK(n == 7);
    for (int k = 0; k < n; k++) {
        CHECK_ABS(st[k].t, 1.25 + 10 * k, 1e-9);
        CHECK(st[k].prompt == 10 + k);
        CHECK(st[k].tenant == k % 2);
    }
    scenario_fini(&s);
}

static void test_time_scale(void)
{
    const char *p = write_file("scale.csv", "time_s,prompt_tokens,output_tokens\n"
                                            "2,8,4\n12,9,4\n40,10,4\n");
    scenario_t s;
    err_t err = {0};
    CHECK(load(p, ", time_scale: 0.5", NULL, &s, &err) == 0);
    start_t st[8];
    int n = starts(&s, st, 8);
    CHECK(n == 3);
    double want[3] = {1, 6, 20};
    for (int k = 0; k < n && k < 3; k++) CHECK_ABS(st[k].t, want[k], 1e-9);
    scenario_fini(&s);
}

/* Found by tests/fuzz/fuzz_reqtrace.c: a finite time times time_scale (at
 * most 1e12) can overflow; old code loaded 1e300 s x 1e12 as an infinite
 * arrival time, a request that never came. Refused at its row. */
static void test_time_scale_overflow(void)
{
    const char *p = write_file("scale-inf.csv", "time_s,prompt_tokens,output_tokens\n"
                                                "0,8,4\n1e300,9,4\n");
    scenario_t s;
    err_t err = {0};
    char want[300];
    snprintf(want, sizeof want, "%s:3: time_s: too large once multiplied by time_scale", p);
    int rc = load(p, ", time_scale: 1e12", NULL, &s, &err);
    CHECK(rc != 0 && err.code == ERR_INPUT);
    if (rc == 0) {
        scenario_fini(&s);
        return;
    }
    if (!strstr(err.msg, want)) printf("  got '%s'\n  expected '%s'\n", err.msg, want);
    CHECK(strstr(err.msg, want) != NULL);
    /* The same time at time_scale 1 is a number like any other. */
    rc = load(p, NULL, NULL, &s, &err);
    CHECK(rc == 0);
    if (rc == 0) scenario_fini(&s);
}

/* Column order free, extra columns ignored, tenants named by index and by
 * GROUP:K; two requests at once on one tenant queue: the second starts
 * later, in order. */
static void test_tenant_column(void)
{
    const char *p = write_file("ten.csv",
                               "tenant,output_tokens,id,time_s,prompt_tokens\n"
                               "3,4,a,1,11\nb:0,4,b,11,12\n0,4,c,21,13\n"
                               "a:1,4,d,31,14\n1,4,e,31,15\n");
    scenario_t s;
    err_t err = {0};
    const char *groups = "  groups:\n  - {name: a, count: 2}\n  - {name: b, count: 2}\n";
    CHECK(load(p, NULL, groups, &s, &err) == 0);
    if (err.code) printf("  %s\n", err.msg);
    start_t st[8];
    int n = starts(&s, st, 8);
    CHECK(n == 5);
    int want_t[5] = {3, 2, 0, 1, 1};
    long want_p[5] = {11, 12, 13, 14, 15};
    for (int k = 0; k < n && k < 5; k++) {
        CHECK(st[k].tenant == want_t[k]);
        CHECK(st[k].prompt == want_p[k]);
    }
    if (n == 5) {
        CHECK_ABS(st[3].t, 31, 1e-9);
        CHECK(st[4].t > 31);   /* waited for the one before */
    }
    scenario_fini(&s);
}

/* Azure columns: date-times relative to the first row, across midnight. */
static void test_azure(void)
{
    const char *p = write_file("azure.csv",
                               "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                               "2023-11-16 23:59:50.5000000,100,8\n"
                               "2023-11-16 23:59:55.7500000,101,8\n"
                               "2023-11-17 00:00:10.5000000,102,0\n");
    scenario_t s;
    err_t err = {0};
    CHECK(load(p, NULL, "  count: 3\n", &s, &err) == 0);
    if (err.code) printf("  %s\n", err.msg);
    start_t st[8];
    int n = starts(&s, st, 8);
    CHECK(n == 3);
    double want[3] = {0, 5.25, 20};
    for (int k = 0; k < n && k < 3; k++) {
        CHECK_ABS(st[k].t, want[k], 1e-9);
        CHECK(st[k].prompt == 100 + k);
    }
    scenario_fini(&s);
}

static void expect_bad(const char *name, const char *text, const char *where,
                       const char *what)
{
    const char *p = write_file(name, text);
    char want[512];
    snprintf(want, sizeof want, "%s:%s", p, where);
    scenario_t s;
    err_t err = {0};
    CHECK(load(p, NULL, NULL, &s, &err) != 0);
    CHECK(err.code == ERR_INPUT);
    if (!strstr(err.msg, want) || !strstr(err.msg, what))
        printf("  %s: got '%s', expected '%s' and '%s'\n", name, err.msg, want, what);
    CHECK(strstr(err.msg, want) != NULL);
    CHECK(strstr(err.msg, what) != NULL);
}

static void test_bad_rows(void)
{
    const char *H = "time_s,prompt_tokens,output_tokens\n";
    char t[512];
    snprintf(t, sizeof t, "%s1,10,5\n2,ten,5\n", H);
    expect_bad("b1.csv", t, "3: prompt_tokens:", "not a token count");
    snprintf(t, sizeof t, "%s1,10,5\n\n0.5,10,5\n", H);
    expect_bad("b2.csv", t, "4: time_s:", "time order");
    snprintf(t, sizeof t, "%s1,10\n", H);
    expect_bad("b3.csv", t, "2: output_tokens:", "missing");
    expect_bad("b4.csv", "TIMESTAMP,ContextTokens,GeneratedTokens\n"
                         "2023-11-16 18:15:46.68,10,5\n2023-11-16 25:00:00,10,5\n",
               "3: TIMESTAMP:", "date-time");
    expect_bad("b5.csv", "time_s,prompt_tokens,output_tokens,tenant\n1,10,5,2\n",
               "2: tenant:", "tenant index");
    expect_bad("b6.csv", "time,prompt_tokens,output_tokens\n1,10,5\n",
               "1: header:", "time_s");
    expect_bad("b7.csv", "time_s,prompt_tokens,output_tokens\n1,10,-5\n",
               "2: output_tokens:", "token count");
    expect_bad("b8.csv", H, "", "no requests");
    /* 2^30 + 2^30 overflowed the int sum of the longest request's prompt
     * and output (old cap 2^30 each): each length is now at most 2^29. */
    expect_bad("b9.csv", "time_s,prompt_tokens,output_tokens\n1,1073741824,1073741824\n",
               "2: prompt_tokens:", "not a token count in [0, 2^29]");
    expect_bad("b10.csv", "time_s,prompt_tokens,output_tokens\n1,5,536870913\n",
               "2: output_tokens:", "not a token count in [0, 2^29]");
}

/* Issue 28, item 16: an Azure date that does not exist (old code carried
 * 2023-02-31 into March) and a leap second (old code took :60 as the next
 * minute's :00, tying or passing the row after it) are refused; so are hex
 * floats, which strtod reads but no trace writes (0x10 was 16 s). */
static void test_bad_times(void)
{
    const char *A = "TIMESTAMP,ContextTokens,GeneratedTokens\n";
    char t[512];
    snprintf(t, sizeof t, "%s2023-02-27 10:00:00,10,5\n2023-02-31 10:00:00,10,5\n", A);
    expect_bad("t1.csv", t, "3: TIMESTAMP:", "no such day in that month");
    snprintf(t, sizeof t, "%s2024-02-29 10:00:00,10,5\n2023-02-29 10:00:00,10,5\n", A);
    expect_bad("t2.csv", t, "3: TIMESTAMP:", "no such day in that month");
    snprintf(t, sizeof t, "%s2016-12-31 23:59:59.5,10,5\n2016-12-31 23:59:60.5,10,5\n", A);
    expect_bad("t3.csv", t, "3: TIMESTAMP:", "leap second");
    snprintf(t, sizeof t, "%s2016-12-31 23:59:0x1p3,10,5\n", A);
    expect_bad("t4.csv", t, "2: TIMESTAMP:", "date-time");
    const char *H = "time_s,prompt_tokens,output_tokens\n";
    snprintf(t, sizeof t, "%s1,10,5\n0x10,10,5\n", H);
    expect_bad("t5.csv", t, "3: time_s:", "not a decimal number");
    snprintf(t, sizeof t, "%sinf,10,5\n", H);
    expect_bad("t6.csv", t, "2: time_s:", "not a decimal number");
}

/* A subnormal time is a number: old code refused it (strtod's ERANGE).
 * The request starts at that time, which is 0 to any tolerance. */
static void test_subnormal_time(void)
{
    const char *p = write_file("sub.csv", "time_s,prompt_tokens,output_tokens\n"
                                          "4.9e-324,10,5\n1e-310,11,5\n10,12,5\n");
    scenario_t s;
    err_t err = {0};
    int rc = load(p, NULL, NULL, &s, &err);
    CHECK(rc == 0);
    if (rc != 0) {
        printf("  %s\n", err.msg);
        return;
    }
    start_t st[8];
    CHECK(starts(&s, st, 8) == 3);
    CHECK_ABS(st[2].t, 10, 1e-9);
    scenario_fini(&s);
}

/* Required columns past the 64th field are found (old code kept 64 fields
 * and reported them missing): 70 filler fields, then the three. */
static void test_many_columns(void)
{
    char t[2048] = "", row[1024] = "";
    for (int i = 0; i < 70; i++) {
        snprintf(t + strlen(t), sizeof t - strlen(t), "x%d,", i);
        snprintf(row + strlen(row), sizeof row - strlen(row), "%d,", i);
    }
    snprintf(t + strlen(t), sizeof t - strlen(t),
             "time_s,prompt_tokens,output_tokens\n%s2.5,17,5\n", row);
    scenario_t s;
    err_t err = {0};
    int rc = load(write_file("wide.csv", t), NULL, NULL, &s, &err);
    CHECK(rc == 0);
    if (rc != 0) {
        printf("  %s\n", err.msg);
        return;
    }
    start_t st[4];
    CHECK(starts(&s, st, 4) == 1);
    CHECK_ABS(st[0].t, 2.5, 1e-9);
    CHECK(st[0].prompt == 17);
    scenario_fini(&s);
}

/* One column named twice (the same name, or the Azure and the plain name
 * of one column) is refused: whichever field were taken, the other's values
 * would be dropped without a word. A second tenant name too; the tenant
 * column's one name is not a duplicate of itself. */
static void test_duplicate_columns(void)
{
    expect_bad("d1.csv", "time_s,prompt_tokens,output_tokens,time_s\n1,10,5,2\n",
               "1: header:", "fields 1 ('time_s') and 4 ('time_s')");
    expect_bad("d2.csv", "TIMESTAMP,prompt_tokens,output_tokens,time_s\n1,10,5,2\n",
               "1: header:", "both the time_s column");
    expect_bad("d3.csv", "time_s,ContextTokens,prompt_tokens,output_tokens\n1,10,5,2\n",
               "1: header:", "both the prompt_tokens column");
    expect_bad("d4.csv", "time_s,prompt_tokens,output_tokens,GeneratedTokens\n1,10,5,2\n",
               "1: header:", "both the output_tokens column");
    expect_bad("d5.csv", "tenant,time_s,prompt_tokens,output_tokens,Tenant\n0,1,10,5,1\n",
               "1: header:", "both the tenant column");
    const char *p = write_file("d6.csv", "time_s,prompt_tokens,output_tokens,tenant\n1,10,5,0\n");
    scenario_t s;
    err_t err = {0};
    int rc = load(p, NULL, NULL, &s, &err);
    CHECK(rc == 0);
    if (rc == 0) scenario_fini(&s);
}

/* A trace that cannot be read as a whole (a directory) or holds no request
 * is refused at the key that names it, like every other input file: the
 * message had no key and no position. A bad row keeps its FILE:LINE. */
static void test_unreadable_at_key(void)
{
    scenario_t s;
    err_t err = {0};
    CHECK(load(dir, NULL, NULL, &s, &err) != 0);
    CHECK(strstr(err.msg, "test:9:") != NULL);
    CHECK(strstr(err.msg, "tenants.workload.trace: ") != NULL);
    CHECK(strstr(err.msg, "not a regular file (a directory)") != NULL);
    const char *p = write_file("u1.csv", "time_s,prompt_tokens,output_tokens\n");
    CHECK(load(p, NULL, NULL, &s, &err) != 0);
    CHECK(strstr(err.msg, "tenants.workload.trace: ") != NULL && strstr(err.msg, "no requests"));
    p = write_file("u2.csv", "time_s,prompt_tokens,output_tokens\n1,x,2\n");
    CHECK(load(p, NULL, NULL, &s, &err) != 0);
    CHECK(strstr(err.msg, "u2.csv:2: prompt_tokens:") != NULL);
    CHECK(strstr(err.msg, "tenants.workload.trace") == NULL);
}

/* The edge's memory holds the draft and the KV of the longest request a
 * trace gives the group, as it must for lengths drawn from prompt_tokens
 * (issue 28: a trace was never checked). LLaMA-2-7B's KV, 2 x 32 layers x
 * 4096 x 2 bytes = 0.52 MB a token, for 100000 + 10 tokens and a block of
 * 4 (100014 tokens) is 52 GB, more than the phone's 12 GB; 50 + 10 fit. */
static void test_edge_memory(void)
{
    static const char Y[] =
        "duration: 2s\nwarmup: 0s\nprotocol: {mode: sync, gamma: 4}\n"
        "tenants:\n  count: 2\n"
        "  edge: {device: models/hardware/snapdragon-8-gen-3.yaml,"
        " draft: models/llm/llama-2-7b.yaml}\n"
        "  workload: {arrival: trace, trace: '%s'}\n";
    char yaml[1024];
    scenario_t s;
    err_t err = {0};
    const char *p = write_file("long.csv", "time_s,prompt_tokens,output_tokens\n"
                               "0,50,10\n0.5,100000,10\n");
    snprintf(yaml, sizeof yaml, Y, p);
    CHECK(scenario_load_string("test", yaml, NULL, 0, &s, &err) != 0);
    CHECK(err.code == ERR_INPUT && strstr(err.msg, "test:6:") != NULL);
    CHECK(strstr(err.msg, "tenants.edge.draft: llama-2-7b") != NULL);
    CHECK(strstr(err.msg, "for 100014 tokens (the longest context)") != NULL);
    p = write_file("short.csv", "time_s,prompt_tokens,output_tokens\n0,50,10\n0.5,60,10\n");
    snprintf(yaml, sizeof yaml, Y, p);
    int rc = scenario_load_string("test", yaml, NULL, 0, &s, &err);
    if (rc) printf("  %s\n", err.msg);
    CHECK(rc == 0);
    if (rc == 0) scenario_fini(&s);
}

/* A replica's KV cache must hold a trace's longest request too, refused
 * at load like a drawn length (it used to wait for the request). */
static void test_kv_room(void)
{
    scenario_t s;
    err_t err = {0};
    const char *p = write_file("kv.csv", "time_s,prompt_tokens,output_tokens\n"
                               "0,50,10\n0.5,100000,10\n");
    CHECK(load(p, NULL, NULL, &s, &err) == 0);
    if (err.code == 0) scenario_fini(&s);
    char yaml[1024];
    snprintf(yaml, sizeof yaml,
             "protocol: {mode: sync, gamma: 4}\n"
             "tenants: {count: 2, edge: {draft_time: 10ms},\n"
             "  workload: {arrival: trace, trace: '%s'}}\n"
             "cloud: {kv_capacity: 1GB}\n", p);
    CHECK(scenario_load_string("test", yaml, NULL, 0, &s, &err) != 0);
    CHECK(strstr(err.msg, "test:4:") && strstr(err.msg, "cloud.kv_capacity: a request of up "
                                               "to 100000 prompt + 10 output tokens"));
}

/* time_scale: 1 is the documented default, so a group that writes it agrees
 * with one that inherits the default (it was refused: the default was held
 * as 0); the times are the file's, unscaled. A real disagreement is refused
 * at the time_scale that disagrees, not at trace. Line 7, column 48 is the
 * value of time_scale in group a's line, counted by hand from load()'s text. */
static void test_time_scale_explicit_default(void)
{
    const char *p = write_file("one.csv", "time_s,prompt_tokens,output_tokens\n"
                                          "2,8,4\n12,9,4\n");
    scenario_t s;
    err_t err = {0};
    const char *one = "  groups:\n"
                      "  - {name: a, count: 1, workload: {time_scale: 1}}\n"
                      "  - {name: b, count: 1}\n";
    CHECK(load(p, NULL, one, &s, &err) == 0);
    if (err.code) printf("  %s\n", err.msg);
    if (err.code == 0) {
        start_t st[4];
        int n = starts(&s, st, 4);
        CHECK(n == 2);
        for (int k = 0; k < n && k < 2; k++) CHECK_ABS(st[k].t, 2 + 10 * k, 1e-9);
        scenario_fini(&s);
    }
    const char *half = "  groups:\n"
                       "  - {name: a, count: 1, workload: {time_scale: 0.5}}\n"
                       "  - {name: b, count: 1}\n";
    err = (err_t){0};
    CHECK(load(p, NULL, half, &s, &err) != 0);
    CHECK(strstr(err.msg, "test:7:48: tenants.groups.0.workload.time_scale: ") != NULL);
    if (!strstr(err.msg, "test:7:48:")) printf("  %s\n", err.msg);
}

/* arrival: trace without a file is refused at the key. */
static void test_trace_key_required(void)
{
    scenario_t s;
    err_t err = {0};
    int rc = scenario_load_string("t", "tenants: {workload: {arrival: trace}}\n",
                                  NULL, 0, &s, &err);
    CHECK(rc != 0);
    CHECK(strstr(err.msg, "tenants.workload.trace") != NULL);
}

int main(void)
{
    snprintf(dir, sizeof dir, "/tmp/specsim-wltrace-XXXXXX");
    if (!mkdtemp(dir)) return 1;
    RUN(test_plain_round_robin);
    RUN(test_time_scale);
    RUN(test_time_scale_explicit_default);
    RUN(test_time_scale_overflow);
    RUN(test_tenant_column);
    RUN(test_azure);
    RUN(test_bad_rows);
    RUN(test_bad_times);
    RUN(test_subnormal_time);
    RUN(test_many_columns);
    RUN(test_duplicate_columns);
    RUN(test_unreadable_at_key);
    RUN(test_trace_key_required);
    RUN(test_edge_memory);
    RUN(test_kv_room);
    char cmd[128];
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    if (system(cmd) != 0) return 1;
    return check_done();
}
