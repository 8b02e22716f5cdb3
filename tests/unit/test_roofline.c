/* Tests of roofline.h (`specsim roofline`): the bounds are computed by
 * hand from the H200 and LLaMA-2-7B cards below, not taken from the code. */
#include <stdio.h>
#include <stdlib.h>

#include "model/caltable.h"
#include "model/cards.h"
#include "check.h"
#include "run/roofline.h"
#include "config/scenario.h"

/* The CSV a roofline function writes, NUL-terminated in a malloc'ed
 * buffer the caller frees; *rc gets the function's return value. */
static char *scenario_csv(const char *path, int bmax, int context, int points, int *rc,
                          err_t *e)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    scenario_t s;
    *rc = scenario_load(path, NULL, 0, &s, e);
    if (*rc == 0) {
        *rc = roofline_curve(f, &s, bmax, context, points, e);
        scenario_fini(&s);
    }
    fclose(f);
    return buf;
}

static char *measured_csv(const char *table, const char *model, int *rc, err_t *e)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    *rc = roofline_measured(f, table, model, e);
    fclose(f);
    return buf;
}

static void test_bounds_by_hand(void)
{
    int rc;
    err_t e = {0, ""};
    char *buf = scenario_csv("scenarios/paper/roofline.yaml", 256, 512, 20, &rc, &e);
    CHECK(rc == 0);
    char *line = strtok(buf, "\n");
    CHECK_STR(line, "batch,m,context,time_s,memory_s,compute_s,overhead_s,datasheet_s");
    int rows = 0, last_b = 0;
    double last_t = 0;
    while ((line = strtok(NULL, "\n")) != NULL) {
        int b, m, ctx;
        double t, mem, comp, ovh, ds;
        if (sscanf(line, "%d,%d,%d,%lf,%lf,%lf,%lf,%lf", &b, &m, &ctx, &t, &mem,
                   &comp, &ovh, &ds) != 8) { CHECK(0); break; }
        rows++;
        CHECK(b > last_b && b <= 256);
        CHECK(m == 5 * b);          /* gamma 4: blocks of 5 tokens */
        CHECK(ctx == 512);
        CHECK(t >= last_t);         /* more tokens never take less time */
        /* Each bound leaves out the other resource: a lower bound. */
        CHECK(mem <= ds * (1 + 1e-12) && comp <= ds * (1 + 1e-12));
        CHECK_REL(ovh, 0.5e-3, 1e-12);  /* cloud.overhead default */
        if (b == 1) {
            /* Weights: 32 layers x (4096x12288 qkv + 4096x4096 o +
             * 4096x22016 gate_up + 11008x4096 down) = 6,476,005,376 fp16
             * weights = 12.952 GB at 4.8 TB/s x 0.8 = 3.3729 ms; KV: 512
             * tokens x 2 x 32 x 4096 x 2 B = 268.4 MB = 0.0699 ms; plus
             * 0.5 ms overhead = 3.9428 ms (activations left out: < 1%). */
            CHECK_REL(mem, 3.9428e-3, 0.01);
            /* FLOPs: 2 x 5 x 6.476e9 = 6.476e10 at 989.5 TFLOPS x 0.7 =
             * 0.0935 ms; attention, causal, 4 x 5 x (512 + 5/2) x 4096 x 32
             * = 1.35e9 -> 0.0019 ms; plus 0.5 ms = 0.5954 ms. */
            CHECK_REL(comp, 0.5954e-3, 0.01);
        }
        last_b = b;
        last_t = t;
    }
    CHECK(rows >= 15 && last_b == 256);
    free(buf);
}

/* --measured on a committed table: each whole-step row beside the step
 * composed from the table's own rows, recomputed here straight from the
 * table: layers x (qkv + o + gate_up + down at M = 1 + attention at q = 1 and
 * the row's context) + lm_head, for the contexts the table has attention
 * rows at (in_table 1). The step factor column is the mean measured /
 * composed ratio over the M = 1 rows. */
static void test_measured_composed(void)
{
    const char *path = SPECSIM_ROOT "/results/calibration/cpu-amd-epyc-llama-2-7b-w4a16.yaml";
    int rc;
    err_t e = {0, ""};
    char *buf = measured_csv(path, NULL, &rc, &e);
    CHECK(rc == 0);
    CHECK(strncmp(buf, "m,context,time_s,composed_s,composed_ratio,step_factor,in_table\n",
                  64) == 0);
    caltable_t t;
    llm_card_t card;
    CHECK(caltable_load(path, &t, &e) == 0);
    CHECK(cards_load_llm_file(SPECSIM_ROOT "/models/llm/llama-2-7b.yaml", &card, &e) == 0);
    double lin = 0, lm = 0;
    for (int i = 0; i < t.nrows; i++) {
        const caltable_row_t *r = &t.rows[i];
        if (r->op != CAL_LINEAR || r->m != 1) continue;
        if (strcmp(r->name, "lm_head") == 0) lm = r->time_s;
        else lin += r->time_s;
    }
    CHECK(lin > 0 && lm > 0);
    int rows = 0, checked = 0;
    double ratio_sum = 0, factor = 0;
    char *line = strchr(buf, '\n');
    while (line && line[1]) {
        int m, ctx, in;
        double time_s, comp, ratio, f;
        if (sscanf(line + 1, "%d,%d,%lf,%lf,%lf,%lf,%d", &m, &ctx, &time_s, &comp, &ratio, &f,
                   &in) != 7) {
            CHECK(0);
            break;
        }
        rows++;
        CHECK(m == 1);
        CHECK_REL(ratio, comp / time_s, 1e-5);
        ratio_sum += time_s / comp;
        factor = f;
        for (int i = 0; i < t.nrows; i++) {
            const caltable_row_t *r = &t.rows[i];
            if (r->op != CAL_ATTENTION || r->q != 1 || r->context != ctx) continue;
            CHECK(in == 1);
            CHECK_REL(comp, card.layers * (lin + r->time_s / r->batch) + lm, 1e-9);
            checked++;
        }
        line = strchr(line + 1, '\n');
    }
    CHECK(rows == 3 && checked == 2);
    CHECK_REL(factor, ratio_sum / rows, 1e-5);
    caltable_fini(&t);
    free(buf);
}

/* Errors come back through err_t (the command line's own usage errors are
 * tested in tests/cli/cli.sh). */
static void test_errors(void)
{
    int rc;
    err_t e = {0, ""};
    const char *tab = SPECSIM_ROOT "/results/calibration/cpu-amd-epyc-llama-2-7b-w4a16.yaml";
    /* No such card. */
    free(measured_csv(tab, "models/llm/nope.yaml", &rc, &e));
    CHECK(rc == -1 && e.code == ERR_INPUT);
    /* A model card whose shapes are not the table's. */
    e = (err_t){0, ""};
    free(measured_csv(tab, "models/llm/llama-2-70b.yaml", &rc, &e));
    CHECK(rc == -1 && e.code == ERR_INPUT);
    /* No such table. */
    e = (err_t){0, ""};
    free(measured_csv("/nonexistent/table.yaml", NULL, &rc, &e));
    CHECK(rc == -1 && e.code != 0 && e.msg[0]);
}

int main(void)
{
    RUN(test_bounds_by_hand);
    RUN(test_measured_composed);
    RUN(test_errors);
    return check_done();
}
