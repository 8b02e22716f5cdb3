/* calibrate: linear shapes from a card (by hand), command-line quoting, the
 * driver's table (provenance from calprov, written by caltable_save) read
 * back by the simulator's reader (sim/model/caltable.c), and a
 * quick in-process calibration of a tiny model whose table must load and be
 * self-consistent (every rate recomputed from its own row), and the
 * out-of-memory message of a model too large to allocate. */
#include <stdint.h>
#include <unistd.h>

#include "calibrate.h"
#include "calprov.h"
#include "model/caltable.h"
#include "check.h"
#include "gemv.h"
#include "membw.h"
#include "shapes.h"

#ifdef __SANITIZE_ADDRESS__
/* test_oom_message asks for an allocation larger than ASan allows: let it
 * fail with NULL, as the C library does, instead of aborting. */
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "allocator_may_return_null=1"; }
#endif

static void test_shapes(void)
{
    /* llama-2-7b: 32 heads of 128, MHA, ffn 11008, vocab 32000. */
    llm_card_t c = {.layers = 32, .hidden = 4096, .heads = 32, .kv_heads = 32, .ffn = 11008,
                    .vocab = 32000, .gated_mlp = 1};
    shapes_linear_t s[SHAPES_NLINEAR];
    CHECK(shapes_linear(&c, s) == 5);
    CHECK_STR(s[0].name, "qkv");
    CHECK(s[0].n == 3 * 4096 && s[0].k == 4096);
    CHECK(s[1].n == 4096 && s[1].k == 4096);
    CHECK(s[2].n == 22016 && s[2].k == 4096);
    CHECK(s[3].n == 4096 && s[3].k == 11008);
    CHECK(s[4].n == 32000 && s[4].k == 4096);
    /* TinyLlama: 32 heads of 64, 4 KV heads → qkv (32 + 8)·64 = 2560. */
    llm_card_t t = {.layers = 22, .hidden = 2048, .heads = 32, .kv_heads = 4, .ffn = 5632,
                    .vocab = 32000, .gated_mlp = 0};
    shapes_linear(&t, s);
    CHECK(s[0].n == 2560);
    CHECK(s[2].n == 5632);   /* not gated: up only */
}

static void test_command_quoting(void)
{
    char *argv[] = {"build/calibrate", "--model", "my card.yaml", "it's", "--quick"};
    char buf[256];
    calprov_command(5, argv, buf, sizeof buf);
    CHECK_STR(buf, "build/calibrate --model 'my card.yaml' 'it'\\''s' --quick");
    /* Truncation: a prefix of the full line, NUL-terminated in the buffer
     * (ASan checks the bound); sizes cut inside a word, a quote, an escape. */
    for (size_t n = 1; n <= 24; n++) {
        char small[24 + 8];
        memset(small, 'X', sizeof small);
        calprov_command(5, argv, small, n);
        CHECK(strlen(small) == n - 1 && strncmp(small, buf, n - 1) == 0);
        CHECK(small[n] == 'X');
    }
}

static void test_table_reads_back(void)
{
    caltable_row_t rows[3];
    memset(rows, 0, sizeof rows);
    rows[0] = (caltable_row_t){.op = CAL_LINEAR, .name = "qkv", .quant = "w4a16", .m = 4,
                               .n = 12288, .k = 4096, .time_s = 1.25e-3, .gbs = 200.5,
                               .gflops = 3.25, .ceiling_frac = 0.875};
    rows[1] = (caltable_row_t){.op = CAL_ATTENTION, .q = 1, .context = 512, .heads = 32,
                               .kv_heads = 4, .head_dim = 64, .batch = 1, .time_s = 2e-5,
                               .gbs = 10, .gflops = 1, .ceiling_frac = 0.5};
    rows[2] = (caltable_row_t){.op = CAL_TOKEN, .m = 1, .context = 2048, .time_s = 0.125};
    caltable_t t;
    memset(&t, 0, sizeof t);
    strcpy(t.device_kind, "cpu");
    strcpy(t.model, "tiny-test");
    strcpy(t.quant, "w4a16");
    t.read_gbs = 21.5;
    t.rows = rows;
    t.nrows = 3;
    strcpy(t.command, "build/calibrate --model 'a \"b\" c'");
    calprov_date_utc(t.date, sizeof t.date);
    calprov_host(t.host, sizeof t.host);
    strcpy(t.device, "CPU \\ x");
    strcpy(t.compiler, "gcc");
    strcpy(t.notes, "n");
    /* 2026-11-29T15:02:11Z: 20 characters, T and Z in place. */
    CHECK(strlen(t.date) == 20 && t.date[10] == 'T' && t.date[19] == 'Z');
    CHECK(t.host[0] != '\0');
    char path[] = "/tmp/specsim-test-caltable-XXXXXX";
    close(mkstemp(path));
    err_t e;
    CHECK(caltable_save(&t, path, stdout, &e) == 0);
    char tmp[sizeof path + 4];
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    CHECK(access(tmp, F_OK) != 0);   /* renamed into place */
    caltable_t back;
    int rc = caltable_load(path, &back, &e);
    if (rc != 0) printf("  %s\n", e.msg);
    CHECK(rc == 0);
    if (rc == 0) {
        CHECK_STR(back.model, "tiny-test");
        CHECK_STR(back.device_kind, "cpu");
        /* The strings calprov made survive (every field: test_caltable). */
        CHECK_STR(back.command, t.command);
        CHECK_STR(back.date, t.date);
        CHECK_STR(back.host, t.host);
        CHECK(back.read_gbs == 21.5);
        CHECK(back.nrows == 3);
        if (back.nrows == 3) {
            CHECK(back.rows[0].op == CAL_LINEAR && back.rows[0].m == 4 && back.rows[0].n == 12288);
            CHECK_STR(back.rows[0].name, "qkv");
            CHECK_REL(back.rows[0].time_s, 1.25e-3, 1e-6);
            CHECK_REL(back.rows[0].ceiling_frac, 0.875, 1e-4);
            CHECK(back.rows[1].op == CAL_ATTENTION && back.rows[1].kv_heads == 4);
            CHECK(back.rows[2].op == CAL_TOKEN && back.rows[2].context == 2048);
            CHECK_REL(back.rows[2].time_s, 0.125, 1e-6);
        }
        caltable_fini(&back);
    }
    unlink(path);
}

/* A 2-layer toy model through the whole driver (--quick). */
static void quick_run(const char *kernel)
{
    char card[64];
    if (check_tmp_file(card, sizeof card,
                       "name: toy\nsource: test\nlayers: 2\nhidden: 256\nheads: 4\n"
                       "kv_heads: 2\nffn: 384\nvocab: 1000\ngated_mlp: true\n"))
        return;
    char out[] = "/tmp/specsim-test-table-XXXXXX";
    close(mkstemp(out));
    char *argv[] = {"calibrate", "--device", "cpu", "--model", card, "--quick", "--out", out,
                    "--kernel", (char *)kernel};
    calibrate_args_t a;
    err_t e;
    CHECK(calibrate_parse_args(10, argv, &a, &e) == 0);
    a.llc_bytes = (size_t)1 << 20;   /* rotate 4 MiB per shape, not 4× the real LLC */
    int rc = calibrate_cpu(&a, NULL, &e);
    if (rc) printf("  %s\n", e.msg);
    CHECK(rc == 0);
    caltable_t t;
    rc = caltable_load(out, &t, &e);
    if (rc) printf("  %s\n", e.msg);
    CHECK(rc == 0);
    if (rc == 0) {
        CHECK_STR(t.model, "toy");
        CHECK(t.read_gbs > 0 && t.read_multi_gbs > 0 && t.read_streams == MEMBW_STREAMS);
        double top = t.read_multi_gbs > t.read_gbs ? t.read_multi_gbs : t.read_gbs;
        /* 5 shapes × 5 M, attention at context 512, tokens at 0 and 512. */
        CHECK(t.nrows == 25 + 1 + 2);
        int lin = 0, tok = 0;
        for (int i = 0; i < t.nrows; i++) {
            const caltable_row_t *r = &t.rows[i];
            CHECK(r->time_s > 0 && r->time_s < 10);
            if (r->op == CAL_LINEAR) {
                lin++;
                double bytes = w4a16_bytes(r->n, r->k, 128) + 2.0 * r->m * (r->k + r->n);
                CHECK_REL(r->gbs, bytes / r->time_s / 1e9, 1e-4);
                CHECK_REL(r->gflops, 2.0 * r->m * r->n * r->k / r->time_s / 1e9, 1e-4);
                CHECK_REL(r->ceiling_frac, r->gbs / top, 1e-3);
                CHECK_STR(r->kernel, kernel);
            }
            tok += r->op == CAL_TOKEN;
        }
        CHECK(lin == 25 && tok == 2);
        /* qkv of the toy: (4 + 2·2)·64 = 512 rows. */
        CHECK(t.rows[0].n == 512 && t.rows[0].k == 256 && t.rows[0].m == 1);
        caltable_fini(&t);
    }
    unlink(card);
    unlink(out);
}

/* A 2-layer toy model through the whole driver (--quick), with each W4A16
 * kernel: the table records the kernel on every linear row. */
static void test_quick_run(void)
{
    quick_run("exact");
    quick_run("int8");
}

/* A card whose first weight matrix cannot be allocated: qkv of hidden 2^20,
 * 8192 heads (head_dim 128) and as many KV heads is n = (8192 + 2·8192)·128
 * = 3145728 rows by k = 1048576, 1.5 TB in W4A16. The run must fail with
 * ERR_RUNTIME naming that step (the message once formatted an uninitialised
 * buffer here, before the first step had a name). */
static void test_oom_message(void)
{
    char card[64];
    if (check_tmp_file(card, sizeof card,
                       "name: huge\nsource: test\nlayers: 1\nhidden: 1048576\nheads: 8192\n"
                       "kv_heads: 8192\nffn: 1048576\nvocab: 1000\ngated_mlp: true\n"))
        return;
    char out[] = "/tmp/specsim-test-table-XXXXXX";
    close(mkstemp(out));
    char *argv[] = {"calibrate", "--device", "cpu", "--model", card, "--quick", "--out", out};
    calibrate_args_t a;
    err_t e = {0};
    CHECK(calibrate_parse_args(8, argv, &a, &e) == 0);
    a.llc_bytes = (size_t)1 << 20;
    CHECK(calibrate_cpu(&a, NULL, &e) == -1);
    CHECK(e.code == ERR_RUNTIME);
    CHECK_STR(e.msg, "calibrate: out of memory or kernel failure "
                     "(linear qkv weights (3145728x1048576))");
    unlink(card);
    unlink(out);
}

static void test_args(void)
{
    calibrate_args_t a;
    err_t e;
    char *bad1[] = {"calibrate", "--device", "tpu", "--model", "x"};
    CHECK(calibrate_parse_args(5, bad1, &a, &e) == -1 && e.code == ERR_INPUT);
    char *bad2[] = {"calibrate", "--frobnicate"};
    CHECK(calibrate_parse_args(2, bad2, &a, &e) == -1 && e.code == ERR_INPUT);
    char *bad3[] = {"calibrate", "--device", "cpu"};
    CHECK(calibrate_parse_args(3, bad3, &a, &e) == -1 && e.code == ERR_INPUT);
    char *bad4[] = {"calibrate", "--model", "m", "--threads", "0"};
    CHECK(calibrate_parse_args(5, bad4, &a, &e) == -1);
    char *ok[] = {"calibrate", "--model", "m.yaml", "--threads", "3", "--quant", "fp16"};
    CHECK(calibrate_parse_args(7, ok, &a, &e) == 0);
    CHECK(a.threads == 3 && !strcmp(a.quant, "fp16") && !strcmp(a.device, "cpu"));
    CHECK_STR(a.command, "calibrate --model m.yaml --threads 3 --quant fp16");
    char *badq[] = {"calibrate", "--model", "models/llm/tinyllama-1.1b.yaml", "--quant", "w8a8"};
    CHECK(calibrate_parse_args(5, badq, &a, &e) == 0);
    CHECK(calibrate_cpu(&a, NULL, &e) == -1 && e.code == ERR_INPUT);
    /* The CUDA path's own options pass the shared parser with --device cuda
     * (in any order) and are refused for the CPU, naming the option. */
    char *cu[] = {"calibrate", "--reps", "7", "--device", "cuda", "--model", "m.yaml",
                  "--no-token", "--log", "x.csv", "--max-context", "4096", "--warmup", "2"};
    CHECK(calibrate_parse_args(14, cu, &a, &e) == 0 && !strcmp(a.device, "cuda"));
    CHECK(a.cuda_opt && !strcmp(a.cuda_opt, "--reps"));
    char *cpu_reps[] = {"calibrate", "--model", "m.yaml", "--no-token"};
    CHECK(calibrate_parse_args(4, cpu_reps, &a, &e) == -1 && e.code == ERR_INPUT &&
          strstr(e.msg, "--no-token") != NULL);
    char *nov[] = {"calibrate", "--device", "cuda", "--model", "m.yaml", "--reps"};
    CHECK(calibrate_parse_args(6, nov, &a, &e) == -1 && e.code == ERR_INPUT);
    /* --kernel: exact by default; an unknown kernel, int8 with --bench (which
     * measures both) or with the CUDA device is refused, naming it; int8
     * with fp16 weights is refused by the CPU driver. */
    CHECK(calibrate_parse_args(7, ok, &a, &e) == 0 && !strcmp(a.kernel, "exact"));
    char *k4[] = {"calibrate", "--model", "m.yaml", "--kernel", "int4"};
    CHECK(calibrate_parse_args(5, k4, &a, &e) == -1 && e.code == ERR_INPUT &&
          strstr(e.msg, "int4") != NULL);
    char *kb[] = {"calibrate", "--bench", "--kernel", "int8"};
    CHECK(calibrate_parse_args(4, kb, &a, &e) == -1 && e.code == ERR_INPUT);
    /* --bench times fixed shapes on the CPU and writes no table: a card, an
     * output, a precision or another device would be ignored, so each is
     * refused, naming it; --device cpu is what it does anyway. */
    char *bm[] = {"calibrate", "--bench", "--model", "m.yaml"};
    CHECK(calibrate_parse_args(4, bm, &a, &e) == -1 && e.code == ERR_INPUT &&
          strstr(e.msg, "--model") != NULL);
    char *bo[] = {"calibrate", "--out", "t.yaml", "--bench"};
    CHECK(calibrate_parse_args(4, bo, &a, &e) == -1 && e.code == ERR_INPUT &&
          strstr(e.msg, "--out") != NULL);
    char *bq[] = {"calibrate", "--bench", "--quant", "fp16"};
    CHECK(calibrate_parse_args(4, bq, &a, &e) == -1 && e.code == ERR_INPUT &&
          strstr(e.msg, "--quant") != NULL);
    char *bd[] = {"calibrate", "--bench", "--device", "cuda"};
    CHECK(calibrate_parse_args(4, bd, &a, &e) == -1 && e.code == ERR_INPUT &&
          strstr(e.msg, "--device cuda") != NULL);
    /* A value given twice is refused (the last one used to win silently). */
    char *twice[] = {"calibrate", "--model", "a.yaml", "--out", "t.yaml", "--model", "b.yaml"};
    CHECK(calibrate_parse_args(7, twice, &a, &e) == -1 && e.code == ERR_INPUT &&
          strstr(e.msg, "--model given more than once") != NULL);
    char *twice2[] = {"calibrate", "--bench", "--threads", "1", "--threads", "2"};
    CHECK(calibrate_parse_args(6, twice2, &a, &e) == -1 && e.code == ERR_INPUT &&
          strstr(e.msg, "--threads") != NULL);
    char *bc[] = {"calibrate", "--bench", "--device", "cpu", "--threads", "2"};
    CHECK(calibrate_parse_args(6, bc, &a, &e) == 0 && a.bench && a.threads == 2);
    char *kc[] = {"calibrate", "--device", "cuda", "--model", "m.yaml", "--kernel", "int8"};
    CHECK(calibrate_parse_args(7, kc, &a, &e) == -1 && e.code == ERR_INPUT);
    char *kf[] = {"calibrate", "--model", "models/llm/tinyllama-1.1b.yaml", "--quant", "fp16",
                  "--kernel", "int8"};
    CHECK(calibrate_parse_args(7, kf, &a, &e) == 0 && !strcmp(a.kernel, "int8"));
    CHECK(calibrate_cpu(&a, NULL, &e) == -1 && e.code == ERR_INPUT && strstr(e.msg, "--kernel"));
    /* A value given twice is refused whatever the device, and so is an
     * empty value (an empty --out meant standard output). */
    char *dev2[] = {"calibrate", "--device", "cpu", "--model", "a.yaml", "--device", "cuda"};
    CHECK(calibrate_parse_args(7, dev2, &a, &e) == -1 && e.code == ERR_INPUT &&
          strstr(e.msg, "--device given more than once") != NULL);
    char *empty[] = {"calibrate", "--model", "a.yaml", "--out", ""};
    CHECK(calibrate_parse_args(5, empty, &a, &e) == -1 && e.code == ERR_INPUT &&
          strstr(e.msg, "--out needs a non-empty value") != NULL);
    char *bs[] = {"calibrate", "--bench", "--quick", "--threads", "2", "--isa", "scalar"};
    CHECK(calibrate_parse_args(7, bs, &a, &e) == 0 && a.bench && a.threads == 2);
}

int main(void)
{
    RUN(test_shapes);
    RUN(test_command_quoting);
    RUN(test_table_reads_back);
    RUN(test_args);
    RUN(test_quick_run);
    RUN(test_oom_message);
    return check_done();
}
