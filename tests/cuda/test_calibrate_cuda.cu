/* build/calibrate --device cuda end to end on a tiny card (--quick): the
 * table it writes loads with caltable_load, carries the provenance and
 * ceilings, has every row the options promise, and its derived columns agree
 * with the shapes (gbs recomputed here from the byte counts of docs/design.md). */
#include <math.h>
#include <string.h>
#include <unistd.h>

#include "cutest.h"

extern "C" {
#include "calibrate_cuda.h"
#include "model/caltable.h"
}

static const char kCard[] =
    "name: tiny-test\n"
    "source: \"synthetic card for tests/cuda/test_calibrate_cuda\"\n"
    "layers: 2\nhidden: 256\nheads: 4\nkv_heads: 2\nffn: 512\nvocab: 1000\n"
    "gated_mlp: true\n";

static int write_card(char *path, size_t sz)
{
    snprintf(path, sz, "/tmp/specsim-cal-card-%d.yaml", (int)getpid());
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    fputs(kCard, f);
    return fclose(f);
}

static void run_and_load(const char *quant, caltable_t *t, int *ok)
{
    char card[128], out[128], logp[128];
    err_t err = {0, {0}};
    *ok = 0;
    if (write_card(card, sizeof card)) { CHECK(0); return; }
    snprintf(out, sizeof out, "/tmp/specsim-cal-%s-%d.yaml", quant, (int)getpid());
    snprintf(logp, sizeof logp, "/tmp/specsim-cal-%s-%d.csv", quant, (int)getpid());
    char *argv[] = {(char *)"calibrate", (char *)"--device", (char *)"cuda",
                    (char *)"--model", card, (char *)"--quant", (char *)quant,
                    (char *)"--quick", (char *)"--out", out, (char *)"--log", logp};
    int rc = calibrate_cuda_run((int)(sizeof argv / sizeof argv[0]), argv);
    CHECK(rc == 0);
    if (rc == 0) {
        int lr = caltable_load(out, t, &err);
        if (lr) printf("  caltable_load: %s\n", err.msg);
        CHECK(lr == 0);
        *ok = lr == 0;
    }
    unlink(card);
    unlink(out);
    unlink(logp);
}

static void check_common(const caltable_t *t, const char *quant)
{
    CHECK_STR(t->device_kind, "cuda");
    CHECK_STR(t->model, "tiny-test");
    CHECK_STR(t->quant, quant);
    CHECK(strstr(t->command, "--quick") != NULL);
    CHECK(t->date[0] != 0 && t->device[0] != 0 && t->compiler[0] != 0);
    CHECK(t->copy_gbs > 0 && t->read_gbs > 0 && t->fp16_tflops > 0);
    for (int i = 0; i < t->nrows; i++) CHECK(t->rows[i].time_s > 0 && isfinite(t->rows[i].time_s));
}

static void test_calibrate_fp16(void)
{
    if (!ct_have_gpu()) return;
    caltable_t t;
    int ok = 0;
    memset(&t, 0, sizeof t);
    run_and_load("fp16", &t, &ok);
    if (!ok) return;
    check_common(&t, "fp16");
    int lin = 0, att = 0, tok = 0, big = 0;
    for (int i = 0; i < t.nrows; i++) {
        const caltable_row_t *r = &t.rows[i];
        if (r->op == CAL_LINEAR) {
            lin++;
            double bytes = 2.0 * ((double)r->n * r->k + (double)r->m * r->k + (double)r->m * r->n);
            CHECK_REL(r->gbs, bytes / r->time_s / 1e9, 1e-9);
            CHECK_REL(r->gflops, 2.0 * r->m * (double)r->n * r->k / r->time_s / 1e9, 1e-9);
        } else if (r->op == CAL_ATTENTION) {
            att++;
            CHECK(r->heads == 4 && r->kv_heads == 2 && r->head_dim == 64);
        } else {
            tok++;
            big += r->m == 160 || r->m == 256;
        }
    }
    /* --quick: 5 shapes x M in {1,2,4,8,16}; batch {1,8} x contexts
     * {128..1024} x q 1..9; 6 token configurations (batch x q: 1x1, 1x5,
     * 4x5, 16x5, and the verify-sized 32x5 and 64x4). */
    CHECK(lin == 25);
    CHECK(att == 2 * 4 * 9);
    CHECK(tok == 6);
    CHECK(big == 2);
    caltable_fini(&t);
}

static void test_calibrate_w4a16(void)
{
    if (!ct_have_gpu()) return;
    caltable_t t;
    int ok = 0;
    memset(&t, 0, sizeof t);
    run_and_load("w4a16", &t, &ok);
    if (!ok) return;
    check_common(&t, "w4a16");
    int lin = 0, att = 0, tok = 0;
    for (int i = 0; i < t.nrows; i++) {
        const caltable_row_t *r = &t.rows[i];
        if (r->op == CAL_LINEAR) {
            lin++;
            CHECK_STR(r->quant, "w4a16");
            /* n·k/2 weight bytes + 2.5 bytes per (row, group of 128) + fp16
             * activations in and out. */
            double bytes = r->n * (double)r->k / 2 + 2.5 * r->n * (r->k / 128) +
                           2.0 * r->m * ((double)r->k + r->n);
            CHECK_REL(r->gbs, bytes / r->time_s / 1e9, 1e-9);
        } else if (r->op == CAL_ATTENTION) {
            att++;
            CHECK(r->q == 1 && r->batch == 1);
        } else {
            tok++;
            CHECK(r->m == 1);
        }
    }
    CHECK(lin == 5 * 16);
    CHECK(att == 4);
    CHECK(tok == 1);
    caltable_fini(&t);
}

static void test_calibrate_bad_usage(void)
{
    char *argv[] = {(char *)"calibrate", (char *)"--device", (char *)"cuda", (char *)"--quant",
                    (char *)"int3", (char *)"--model", (char *)"x.yaml"};
    CHECK(calibrate_cuda_run(7, argv) == 2);
    char *argv2[] = {(char *)"calibrate", (char *)"--device", (char *)"cuda"};
    CHECK(calibrate_cuda_run(3, argv2) == 2);
    char *argv3[] = {(char *)"calibrate", (char *)"--device", (char *)"cuda", (char *)"--model",
                     (char *)"/nonexistent/card.yaml"};
    CHECK(calibrate_cuda_run(5, argv3) == 2);
}

int main(void)
{
    RUN(test_calibrate_bad_usage);
    RUN(test_calibrate_fp16);
    RUN(test_calibrate_w4a16);
    return check_done();
}
