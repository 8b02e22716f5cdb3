/* test_caltable — the calibration-table reader and writer.
 *
 * Round trip: a table built here (values chosen to stress number and string
 * formatting, not measurements, though every time is one the ceilings allow)
 * is written and read back field for field.
 * Malformed tables: small texts whose faulty node's position is computed
 * from the text itself (line = index of the line, column = offset of the
 * needle + 1), so the expected FILE:LINE:COLUMN is independent of the parser.
 */
#include <glob.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include "model/caltable.h"
#include "check.h"

static void row_eq(const caltable_row_t *a, const caltable_row_t *b)
{
    CHECK(a->op == b->op);
    CHECK_STR(a->name, b->name);
    CHECK_STR(a->quant, b->quant);
    CHECK_STR(a->kernel, b->kernel);
    CHECK(a->m == b->m && a->n == b->n && a->k == b->k);
    CHECK(a->q == b->q && a->context == b->context);
    CHECK(a->heads == b->heads && a->kv_heads == b->kv_heads);
    CHECK(a->head_dim == b->head_dim && a->batch == b->batch);
    CHECK(a->nohead == b->nohead);
    CHECK(a->time_s == b->time_s);
    CHECK(a->gbs == b->gbs && a->gflops == b->gflops);
    CHECK(a->ceiling_frac == b->ceiling_frac);
}

static void test_round_trip(void)
{
    caltable_t t;
    memset(&t, 0, sizeof t);
    snprintf(t.command, sizeof t.command, "build/calibrate --model \"x y\" \\ tab\there");
    snprintf(t.date, sizeof t.date, "2026-11-29T15:02:11Z");
    snprintf(t.host, sizeof t.host, "host: with colon # and hash");
    snprintf(t.device, sizeof t.device, "AMD EPYC 7B13 (2 cores) — ünïcode");
    snprintf(t.compiler, sizeof t.compiler, "gcc 12.2.0 -O3 -mavx2");
    /* With YAML's Unicode line breaks NEL, LS and PS (U+0085, U+2028,
     * U+2029), which a reader folds into a space unless they are escaped
     * (tests/fuzz/fuzz_card found it in cards), and a C1 control (U+0097)
     * and U+FFFE, U+FFFF, which it refuses raw (fuzz_caltable). */
    snprintf(t.notes, sizeof t.notes,
             "line one\nline two\xc2\x85" "three\xe2\x80\xa8" "four\xe2\x80\xa9"
             "five\xc2\x97" "six\xef\xbf\xbe" "seven\xef\xbf\xbf" "eight");
    snprintf(t.device_kind, sizeof t.device_kind, "cpu");
    snprintf(t.model, sizeof t.model, "llama-2-7b");
    snprintf(t.quant, sizeof t.quant, "w4a16");
    t.read_gbs = 21.3;
    t.fp16_tflops = 1.0 / 3.0;
    t.read_multi_gbs = 23.7;
    t.read_streams = 4;
    caltable_row_t rows[6] = {
        {.op = CAL_LINEAR, .name = "qkv", .quant = "w4a16", .kernel = "int8", .m = 1,
         .n = 12288, .k = 4096, .time_s = 1.23e-3, .gbs = 20.1, .gflops = 0.82,
         .ceiling_frac = 0.94},
        {.op = CAL_LINEAR, .name = "lm_head", .m = 16, .n = 32000, .k = 4096,
         .time_s = 0.1 + 0.2, .gbs = 0, .gflops = 1e300},
        {.op = CAL_ATTENTION, .q = 5, .context = 1024, .heads = 32, .kv_heads = 8,
         .head_dim = 128, .batch = 3, .time_s = 1e-2 / 3, .gbs = 5e-324 * 1e10,
         .gflops = 123456789.123},
        /* The reader fills q = m and batch = 1 when a token row gives
         * neither; a batched step keeps both. */
        {.op = CAL_TOKEN, .m = 1, .q = 1, .batch = 1, .context = 0,
         .time_s = 0.0123456789012345678},
        {.op = CAL_TOKEN, .m = 20, .q = 5, .batch = 4, .context = 1024, .time_s = 0.25},
        /* A prefill step: the head computed the last row only (logits: 1). */
        {.op = CAL_TOKEN, .m = 56, .q = 56, .batch = 1, .context = 0, .nohead = 55,
         .time_s = 0.33},
    };
    t.rows = rows;
    t.nrows = 6;
    char path[64];
    FILE *f = check_tmp_open(path, sizeof path, "w");
    if (!f) return;
    CHECK(caltable_write(&t, f) == 0);
    CHECK(fclose(f) == 0);

    caltable_t r;
    err_t e = {0, ""};
    int rc = caltable_load(path, &r, &e);
    CHECK(rc == 0);
    if (rc != 0) { printf("  %s\n", e.msg); unlink(path); return; }
    CHECK_STR(r.path, path);
    CHECK_STR(r.command, t.command);
    CHECK_STR(r.date, t.date);
    CHECK_STR(r.host, t.host);
    CHECK_STR(r.device, t.device);
    CHECK_STR(r.compiler, t.compiler);
    CHECK_STR(r.notes, t.notes);
    CHECK_STR(r.device_kind, t.device_kind);
    CHECK_STR(r.model, t.model);
    CHECK_STR(r.quant, t.quant);
    CHECK(r.read_gbs == t.read_gbs && r.copy_gbs == 0 && r.fp16_tflops == t.fp16_tflops);
    CHECK(r.read_multi_gbs == t.read_multi_gbs && r.read_streams == t.read_streams);
    CHECK(r.nrows == 6);
    for (int i = 0; i < 6 && i < r.nrows; i++) {
        row_eq(&r.rows[i], &rows[i]);
        CHECK(r.rows[i].line > 0 && r.rows[i].column == 5);
        if (i) CHECK(r.rows[i].line == r.rows[i - 1].line + 1);
    }
    caltable_fini(&r);
    CHECK(r.rows == NULL && r.nrows == 0);
    unlink(path);
}

/* Every committed table (results/calibration/, written by build/calibrate
 * at some earlier version of the writer) must still load: the reader keeps
 * accepting what was once written. */
static void test_committed_tables_load(void)
{
    glob_t g;
    int grc = glob(SPECSIM_ROOT "/results/calibration/*.yaml", 0, NULL, &g);
    CHECK(grc == 0 && g.gl_pathc >= 1);
    for (size_t i = 0; grc == 0 && i < g.gl_pathc; i++) {
        caltable_t t;
        err_t e = {0, ""};
        int rc = caltable_load(g.gl_pathv[i], &t, &e);
        if (rc != 0) printf("  %s\n", e.msg);
        CHECK(rc == 0);
        if (rc != 0) continue;
        CHECK(t.command[0] && t.model[0] && t.device_kind[0] && t.nrows > 0);
        CHECK(t.read_gbs > 0);
        caltable_fini(&t);
    }
    if (grc == 0) globfree(&g);
}

/* caltable_save: into place through a new temporary (an existing one is
 * refused and left alone), and a clean error (no
 * temporary left behind) when the directory does not exist. */
static void test_save(void)
{
    caltable_row_t row = {.op = CAL_TOKEN, .m = 1, .context = 0, .time_s = 0.021};
    caltable_t t;
    memset(&t, 0, sizeof t);
    snprintf(t.command, sizeof t.command, "build/calibrate --device cpu");
    snprintf(t.model, sizeof t.model, "tinyllama-1.1b");
    snprintf(t.quant, sizeof t.quant, "w4a16");
    t.rows = &row;
    t.nrows = 1;
    char path[64], tmp[96];
    CHECK(check_tmp_file(path, sizeof path, "old contents\n") == 0);
    snprintf(tmp, sizeof tmp, "%s.tmp.%ld", path, (long)getpid());
    err_t e = {0, ""};
    CHECK(caltable_save(&t, path, stdout, &e) == 0);
    CHECK(access(tmp, F_OK) != 0);
    caltable_t r;
    int rc = caltable_load(path, &r, &e);
    CHECK(rc == 0);
    if (rc == 0) {
        CHECK(r.nrows == 1 && r.rows[0].op == CAL_TOKEN && r.rows[0].time_s == 0.021);
        caltable_fini(&r);
    }
    unlink(path);
    e.code = 0;
    CHECK(caltable_save(&t, "/nonexistent-dir/t.yaml", stdout, &e) == -1 && e.code == ERR_RUNTIME);
    CHECK(strncmp(e.msg, "/nonexistent-dir/t.yaml:", 24) == 0);
    /* A directory is refused as a target (sim/io/outfile.h), nothing created. */
    CHECK(caltable_save(&t, "/tmp", stdout, &e) == -1 && e.code == ERR_INPUT);
    CHECK(strstr(e.msg, "is a directory") != NULL);
    /* A device is written through, not replaced. */
    CHECK(caltable_save(&t, "/dev/null", stdout, &e) == 0);
    struct stat st;
    CHECK(stat("/dev/null", &st) == 0 && S_ISCHR(st.st_mode));
    FILE *f;
    /* A write error on the caller's stream names no stream it was not. */
    f = fopen("/dev/null", "r");
    CHECK(f != NULL);
    if (f) {
        CHECK(caltable_save(&t, "", f, &e) == -1 && strstr(e.msg, "standard output") == NULL);
        fclose(f);
    }
}

/* A valid table; each malformed case edits one line of it. */
static const char *const base[] = {
    "format: specsim-calibration/1",                                        /* 1 */
    "provenance:",                                                          /* 2 */
    "  command: \"build/calibrate --device cpu\"",                          /* 3 */
    "model: tiny",                                                          /* 4 */
    "quant: fp16",                                                          /* 5 */
    "ops:",                                                                 /* 6 */
    "  - {op: linear, name: qkv, m: 1, n: 512, k: 256, time_s: 1.0e-6}",    /* 7 */
    "  - {op: token, m: 1, context: 0, time_s: 2.0e-3}",                    /* 8 */
};
#define NBASE 8

/* Builds the text with line `line` (1-based) replaced by `repl` (NULL: the
 * base), writes it, loads it and checks the message starts with
 * "PATH:LINE:COL: KEY" where COL is where `needle` starts in the line. */
static void check_bad(int line, const char *repl, int eline, const char *needle,
                      const char *key, const char *problem)
{
    char text[2048] = "";
    const char *eline_text = NULL;
    for (int i = 1; i <= NBASE; i++) {
        const char *l = i == line && repl ? repl : base[i - 1];
        if (i == eline) eline_text = l;
        strcat(text, l);
        strcat(text, "\n");
    }
    if (eline > NBASE) eline_text = repl;   /* an appended line */
    if (line > NBASE && repl) { strcat(text, repl); strcat(text, "\n"); }
    char path[64];
    CHECK(check_tmp_file(path, sizeof path, text) == 0);
    caltable_t t;
    err_t e = {0, ""};
    int rc = caltable_load(path, &t, &e);
    CHECK(rc == -1);
    CHECK(e.code == ERR_INPUT);
    CHECK(t.rows == NULL && t.nrows == 0);
    const char *at = eline_text ? strstr(eline_text, needle) : NULL;
    CHECK(at != NULL);
    char want[256];
    snprintf(want, sizeof want, "%s:%d:%d: %s", path, eline,
             at ? (int)(at - eline_text) + 1 : -1, key);
    if (strncmp(e.msg, want, strlen(want)) != 0 || !strstr(e.msg, problem)) {
        printf("  message \"%s\"\n  wanted  \"%s ...%s...\"\n", e.msg, want, problem);
        check_failed_now = 1;
    }
    unlink(path);
}

/* Loads text and checks the message starts with "PATH:LINE:COL: KEY" and
 * holds `problem`; or, with key NULL, that the table loads. */
static void check_text(const char *text, int line, int col, const char *key,
                       const char *problem)
{
    char path[64];
    CHECK(check_tmp_file(path, sizeof path, text) == 0);
    caltable_t t;
    err_t e = {0, ""};
    int rc = caltable_load(path, &t, &e);
    if (!key) {
        if (rc != 0) printf("  %s\n", e.msg);
        CHECK(rc == 0);
        if (rc == 0) caltable_fini(&t);
        unlink(path);
        return;
    }
    CHECK(rc == -1 && e.code == ERR_INPUT);
    char want[256];
    snprintf(want, sizeof want, "%s:%d:%d: %s", path, line, col, key);
    if (strncmp(e.msg, want, strlen(want)) != 0 || !strstr(e.msg, problem)) {
        printf("  message \"%s\"\n  wanted  \"%s ...%s...\"\n", e.msg, want, problem);
        check_failed_now = 1;
    }
    unlink(path);
}

#define HEAD "format: specsim-calibration/1\nprovenance: {command: c}\nmodel: tiny\n" \
             "quant: fp16\n"

/* One time per shape: a second row of the same shape (whatever its time)
 * is refused at the later row, naming the earlier. Rows that differ in any
 * shape field are not duplicates. */
static void test_duplicate_rows(void)
{
    check_text(HEAD "ops:\n"
               "  - {op: token, m: 1, context: 0, time_s: 2.0e-3}\n"
               "  - {op: token, m: 4, context: 0, time_s: 3.0e-3}\n"
               "  - {op: token, m: 1, context: 0, time_s: 9.0e-3}\n",
               8, 5, "ops.2", "the same token shape as ops.0 (line 6)");
    check_text(HEAD "ops:\n"
               "  - {op: linear, name: qkv, m: 1, n: 512, k: 256, time_s: 1.0e-4}\n"
               "  - {op: linear, name: qkv, m: 1, n: 512, k: 256, time_s: 1.0e-4}\n",
               7, 5, "ops.1", "the same linear shape as ops.0");
    check_text(HEAD "ops:\n"
               "  - {op: token, m: 1, context: 0, time_s: 2.0e-3}\n"
               "  - {op: token, m: 1, context: 64, time_s: 2.0e-3}\n"
               "  - {op: token, m: 2, context: 0, q: 1, batch: 2, time_s: 2.0e-3}\n"
               "  - {op: token, m: 2, context: 0, time_s: 2.0e-3}\n",
               0, 0, NULL, NULL);
}

/* Times the table's own ceilings rule out. qkv 512 x 256 fp16 weights are
 * 262144 bytes: at read_gbs 10 they take 26.2 us, so 13.1 us (the slack of
 * 2) is the least accepted; attention over 1000 tokens of 2 KV heads of 64
 * reads 2 x 2 x 1000 x 2 x 64 = 512000 bytes: 51.2 us, 25.6 us accepted;
 * a token step reads at least the qkv and lm_head rows' weights (262144 +
 * 2 x 1000 x 256 = 774144 bytes: 77.4 us, 38.7 us accepted). With
 * fp16_tflops 0.001 a linear row of m 64 needs 2 x 64 x 512 x 256 flops =
 * 16.8 ms, 8.39 ms accepted. Without ceilings only the 1 ns floor holds. */
static void test_time_floors(void)
{
    const char *ceil = "ceilings: {read_gbs: 10}\n";
    char text[1024];
    snprintf(text, sizeof text, HEAD "%sops:\n"
             "  - {op: linear, name: qkv, m: 1, n: 512, k: 256, time_s: 13.2e-6}\n"
             "  - {op: linear, name: lm_head, m: 1, n: 1000, k: 256, time_s: 1e-3}\n"
             "  - {op: attention, q: 1, context: 1000, heads: 4, kv_heads: 2, "
             "head_dim: 64, time_s: 25.7e-6}\n"
             "  - {op: token, m: 1, context: 0, time_s: 38.8e-6}\n", ceil);
    check_text(text, 0, 0, NULL, NULL);
    snprintf(text, sizeof text, HEAD "%sops:\n"
             "  - {op: linear, name: qkv, m: 1, n: 512, k: 256, time_s: 13.0e-6}\n", ceil);
    check_text(text, 7, 5, "ops.0.time_s", "262144 bytes at ceilings.read_gbs 10 GB/s");
    snprintf(text, sizeof text, HEAD "%sops:\n"
             "  - {op: linear, name: qkv, m: 1, n: 512, k: 256, time_s: 1e-3}\n"
             "  - {op: attention, q: 1, context: 1000, heads: 4, kv_heads: 2, "
             "head_dim: 64, time_s: 25.5e-6}\n", ceil);
    check_text(text, 8, 5, "ops.1.time_s", "512000 bytes");
    snprintf(text, sizeof text, HEAD "%sops:\n"
             "  - {op: linear, name: qkv, m: 1, n: 512, k: 256, time_s: 1e-3}\n"
             "  - {op: linear, name: lm_head, m: 1, n: 1000, k: 256, time_s: 1e-3}\n"
             "  - {op: token, m: 1, context: 0, time_s: 38.6e-6}\n", ceil);
    check_text(text, 9, 5, "ops.2.time_s", "774144 bytes");
    snprintf(text, sizeof text, HEAD "ceilings: {read_gbs: 1000, fp16_tflops: 0.001}\n"
             "ops:\n"
             "  - {op: linear, name: qkv, m: 64, n: 512, k: 256, time_s: 8.3e-3}\n");
    check_text(text, 7, 5, "ops.0.time_s", "1.67772e+07 flops at ceilings.fp16_tflops");
    /* A multi-stream read ceiling above the one-stream one is the bound:
     * 262144 bytes at 20 GB/s take 13.1 us, so 13.0 us passes and 6.5 us
     * (under half of it) does not. */
    const char *multi = "ceilings: {read_gbs: 10, read_multi_gbs: 20, read_streams: 4}\n";
    snprintf(text, sizeof text, HEAD "%sops:\n"
             "  - {op: linear, name: qkv, m: 1, n: 512, k: 256, time_s: 13.0e-6}\n", multi);
    check_text(text, 0, 0, NULL, NULL);
    snprintf(text, sizeof text, HEAD "%sops:\n"
             "  - {op: linear, name: qkv, m: 1, n: 512, k: 256, time_s: 6.5e-6}\n", multi);
    check_text(text, 7, 5, "ops.0.time_s", "262144 bytes at ceilings.read_multi_gbs 20 GB/s");
    /* 1e-300 s: refused with ceilings and without. */
    snprintf(text, sizeof text, HEAD "%sops:\n"
             "  - {op: token, m: 1, context: 0, time_s: 1e-300}\n", ceil);
    check_text(text, 7, 5, "ops.0.time_s", "faster than the table's own ceilings allow");
    check_text(HEAD "ops:\n  - {op: token, m: 1, context: 0, time_s: 1e-300}\n", 6, 5,
               "ops.0.time_s", "no operator runs in under 1e-09 s");
}

static void test_base_is_valid(void)
{
    char text[2048] = "";
    for (int i = 0; i < NBASE; i++) { strcat(text, base[i]); strcat(text, "\n"); }
    char path[64];
    CHECK(check_tmp_file(path, sizeof path, text) == 0);
    caltable_t t;
    err_t e = {0, ""};
    CHECK(caltable_load(path, &t, &e) == 0);
    CHECK(t.nrows == 2 && t.rows && t.rows[0].line == 7 && t.rows[1].line == 8);
    CHECK(t.model_line == 4 && t.quant_line == 5);
    caltable_fini(&t);
    unlink(path);
}

static void test_malformed_tables(void)
{
    /* Unknown top-level key, with a suggestion. */
    check_bad(1, "formt: specsim-calibration/1", 1, "formt", "formt",
              "did you mean 'format'");
    /* A row without time_s: the row's mapping is named. */
    check_bad(7, "  - {op: linear, name: qkv, m: 1, n: 512, k: 256}", 7, "{",
              "ops.0.time_s", "missing required key");
    /* A malformed integer. */
    check_bad(7, "  - {op: linear, name: qkv, m: 1x, n: 512, k: 256, time_s: 1.0e-6}", 7,
              "1x", "ops.0.m", "integer");
    /* provenance without its command. */
    check_bad(3, "  date: 2026-11-29T15:02:11Z", 3, "date", "provenance.command",
              "missing required key");
    /* Wrong format version. */
    check_bad(1, "format: specsim-calibration/2", 1, "specsim", "format", "unsupported");
    /* A time that is not positive. */
    check_bad(8, "  - {op: token, m: 1, context: 0, time_s: -2.0e-3}", 8, "-2.0e-3",
              "ops.1.time_s", "must be > 0");
    /* An unknown op. */
    check_bad(8, "  - {op: matmul, m: 1, context: 0, time_s: 2.0e-3}", 8, "matmul",
              "ops.1.op", "expected linear, attention or token");
    /* A key of another op's rows. */
    check_bad(8, "  - {op: token, m: 1, context: 0, n: 3, time_s: 2.0e-3}", 8, "n: 3",
              "ops.1.n", "not a key of a token row");
    /* A batched step whose m is not q x batch: the m value is pointed at. */
    check_bad(8, "  - {op: token, m: 21, context: 0, q: 5, batch: 4, time_s: 2.0e-3}", 8,
              "21", "ops.1.m", "must equal q x batch");
    check_bad(8, "  - {op: token, m: 7, context: 0, batch: 2, time_s: 2.0e-3}", 8, "7,",
              "ops.1.m", "must equal q x batch");
    /* More logit rows than new tokens per job. */
    check_bad(8, "  - {op: token, m: 10, context: 0, q: 5, batch: 2, logits: 6, time_s: 2.0e-3}",
              8, "6,", "ops.1.logits", "must be at most q");
    /* A misspelt row key, with a suggestion. */
    check_bad(8, "  - {op: token, m: 1, contxt: 0, time_s: 2.0e-3}", 8, "contxt",
              "ops.1.contxt", "did you mean 'context'");
    /* A key far from every allowed one: the message lists them (the same
     * text as a scenario's, suggest_unknown_key). */
    check_bad(1, "zzzzzzz: 1", 1, "zzzzzzz", "zzzzzzz",
              "unknown key (allowed here: format, ");
    /* A duplicate key. */
    check_bad(9, "model: tiny2", 9, "model", "model", "duplicate key");
    /* A linear op name outside the format's list. */
    check_bad(7, "  - {op: linear, name: ffn, m: 1, n: 512, k: 256, time_s: 1.0e-6}", 7,
              "ffn", "ops.0.name", "expected qkv");
    /* A row's quantisation that does not exist: the value is pointed at. */
    check_bad(7, "  - {op: linear, name: qkv, quant: int3, m: 1, n: 512, k: 256, time_s: 1.0e-6}",
              7, "int3", "ops.0.quant", "expected fp32");
    /* A kernel name the CPU driver does not write. */
    check_bad(7, "  - {op: linear, name: qkv, kernel: int4, m: 1, n: 512, k: 256, time_s: 1.0e-6}",
              7, "int4", "ops.0.kernel", "expected exact or int8");
    /* A key of linear rows only. */
    check_bad(8, "  - {op: token, m: 1, context: 0, kernel: int8, time_s: 2.0e-3}", 8,
              "kernel", "ops.1.kernel", "not a key of a token row");
    /* A quantisation that does not exist. */
    check_bad(5, "quant: int3", 5, "int3", "quant", "expected fp32");
    /* Unterminated flow mapping: a YAML syntax error, still file:line:col. */
    {
        char path[64];
        CHECK(check_tmp_file(path, sizeof path,
                       "format: specsim-calibration/1\nops:\n  - {op: token, m: 1\n") == 0);
        caltable_t t;
        err_t e = {0, ""};
        CHECK(caltable_load(path, &t, &e) == -1 && e.code == ERR_INPUT);
        char want[80];
        snprintf(want, sizeof want, "%s:", path);
        int l = 0, c = 0;
        CHECK(strncmp(e.msg, want, strlen(want)) == 0 &&
              sscanf(e.msg + strlen(want), "%d:%d:", &l, &c) == 2 && l >= 3);
        unlink(path);
    }
    /* Empty ops, missing file, not a mapping. */
    {
        char text[512] = "", path[64];
        for (int i = 0; i < 5; i++) { strcat(text, base[i]); strcat(text, "\n"); }
        strcat(text, "ops: []\n");
        CHECK(check_tmp_file(path, sizeof path, text) == 0);
        caltable_t t;
        err_t e = {0, ""};
        CHECK(caltable_load(path, &t, &e) == -1 && e.code == ERR_INPUT);
        char want[96];
        snprintf(want, sizeof want, "%s:6:6: ops: empty", path);
        CHECK(strncmp(e.msg, want, strlen(want)) == 0);
        unlink(path);
    }
    {
        caltable_t t;
        err_t e = {0, ""};
        CHECK(caltable_load("/nonexistent/x.yaml", &t, &e) == -1 && e.code == ERR_INPUT);
        char path[64];
        CHECK(check_tmp_file(path, sizeof path, "- just\n- a list\n") == 0);
        e.code = 0;
        CHECK(caltable_load(path, &t, &e) == -1 && e.code == ERR_INPUT);
        unlink(path);
        CHECK(check_tmp_file(path, sizeof path, "") == 0);
        e.code = 0;
        CHECK(caltable_load(path, &t, &e) == -1 && e.code == ERR_INPUT);
        unlink(path);
    }
}

int main(void)
{
    RUN(test_round_trip);
    RUN(test_committed_tables_load);
    RUN(test_save);
    RUN(test_base_is_valid);
    RUN(test_malformed_tables);
    RUN(test_duplicate_rows);
    RUN(test_time_floors);
    return check_done();
}
