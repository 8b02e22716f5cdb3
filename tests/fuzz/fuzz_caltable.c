/* fuzz_caltable — the calibration-table reader (sim/model/caltable.h).
 *
 * The input is a table file. A table that loads must come back unchanged
 * through caltable_write (the header's promise:
 * caltable_load(caltable_write(t)) == t, path, lines and columns aside;
 * and provenance.specsim_version, which the writer sets to its own build's).
 */
#define _GNU_SOURCE
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/caltable.h"
#include "fuzz.h"

static int same_num(double a, double b)
{
    return a == b || (isnan(a) && isnan(b));
}

/* The first field in which a and b differ, or NULL. */
static const char *differs(const caltable_t *a, const caltable_t *b)
{
#define STR(f) if (strcmp(a->f, b->f)) return #f
#define NUM(f) if (!same_num(a->f, b->f)) return #f
    STR(device_kind); STR(device); STR(model); STR(quant); STR(command);
    STR(date); STR(host); STR(compiler); STR(notes);
    NUM(read_gbs); NUM(copy_gbs); NUM(fp16_tflops);
    if (a->nrows != b->nrows) return "nrows";
    for (int i = 0; i < a->nrows; i++) {
        const caltable_row_t *r = &a->rows[i], *s = &b->rows[i];
        if (r->op != s->op || strcmp(r->name, s->name) || strcmp(r->quant, s->quant) ||
            r->m != s->m || r->n != s->n || r->k != s->k || r->q != s->q ||
            r->context != s->context || r->heads != s->heads ||
            r->kv_heads != s->kv_heads || r->head_dim != s->head_dim ||
            r->batch != s->batch || !same_num(r->time_s, s->time_s) ||
            !same_num(r->gbs, s->gbs) || !same_num(r->gflops, s->gflops) ||
            !same_num(r->ceiling_frac, s->ceiling_frac))
            return "ops";
    }
    return NULL;
#undef STR
#undef NUM
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reset();
    char path[4096], back[4096];
    fuzz_write_file("table.yaml", data, size, path, sizeof path);
    caltable_t t, t2;
    err_t err;
    if (caltable_load(path, &t, &err) != 0) return 0;
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m || caltable_write(&t, m) != 0 || fclose(m) != 0)
        fuzz_fail("cannot write a calibration table", NULL);
    fuzz_write_file("back.yaml", text, len, back, sizeof back);
    if (caltable_load(back, &t2, &err) != 0) {
        fprintf(stderr, "written back:\n%s\n", text);
        fuzz_fail("a calibration table written back does not load", err.msg);
    }
    const char *d = differs(&t, &t2);
    if (d) {
        fprintf(stderr, "written back:\n%s\n", text);
        fuzz_fail("a calibration table written back reads differently in", d);
    }
    free(text);
    caltable_fini(&t);
    caltable_fini(&t2);
    return 0;
}
