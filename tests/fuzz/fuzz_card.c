/* fuzz_card — the hardware and model card reader (sim/model/cards.h).
 *
 * The input is a card file; it is read as an LLM card and as a hardware
 * card. A card that loads must come back unchanged through cards_write_*
 * (the header's promise: what it writes reads back to the same card). Numbers
 * compare as numbers: -0 reads back as 0 (a zero optional key is not
 * written), which is the same value.
 */
#define _GNU_SOURCE
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "model/cards.h"
#include "fuzz.h"

/* Writes the card with `write` into a file beside the input; the path goes
 * to out. */
static void write_back(int (*write)(FILE *, const void *), const void *card,
                       char *out, size_t outsz)
{
    char *text = NULL;
    size_t len = 0;
    FILE *m = open_memstream(&text, &len);
    if (!m || write(m, card) != 0 || fclose(m) != 0) fuzz_fail("cannot write a card", NULL);
    fuzz_write_file("back.yaml", text, len, out, outsz);
    free(text);
}

static int same_llm(const llm_card_t *a, const llm_card_t *b)
{
    return !strcmp(a->name, b->name) && !strcmp(a->source, b->source) &&
           a->layers == b->layers && a->hidden == b->hidden &&
           a->heads == b->heads && a->kv_heads == b->kv_heads && a->ffn == b->ffn &&
           a->vocab == b->vocab && a->gated_mlp == b->gated_mlp;
}

static int same_thermal(const thermal_cfg_t *a, const thermal_cfg_t *b)
{
    if (a->ambient != b->ambient || a->r_th != b->r_th || a->tau != b->tau ||
        a->has_start != b->has_start || (a->has_start && a->start != b->start) ||
        a->hysteresis != b->hysteresis || a->nlevels != b->nlevels)
        return 0;
    for (int i = 0; i < a->nlevels; i++)
        if (a->level[i].above != b->level[i].above || a->level[i].speed != b->level[i].speed)
            return 0;
    return 1;
}

static int same_hw(const hw_card_t *a, const hw_card_t *b)
{
    if (a->battery_wh != b->battery_wh || a->has_thermal != b->has_thermal ||
        (a->has_thermal && !same_thermal(&a->thermal, &b->thermal)))
        return 0;
    for (int i = 0; i < PREC_COUNT; i++)
        if (a->flops[i] != b->flops[i] || a->bw_eff_prec[i] != b->bw_eff_prec[i] ||
            a->flops_eff_prec[i] != b->flops_eff_prec[i])
            return 0;
    /* the engines' sets (a zero entry is not written: the same) */
    for (int e = 0; e < ENGINE_COUNT; e++) {
        const engine_eff_t *x = &a->engines[e], *y = &b->engines[e];
        if (x->bw_eff != y->bw_eff || x->flops_eff != y->flops_eff) return 0;
        for (int i = 0; i < PREC_COUNT; i++)
            if (x->bw_eff_prec[i] != y->bw_eff_prec[i] || x->flops[i] != y->flops[i]) return 0;
    }
    if (a->kernel_floor != b->kernel_floor || a->roofline_p != b->roofline_p ||
        a->interconnect_step_latency != b->interconnect_step_latency)
        return 0;
    return !strcmp(a->name, b->name) && !strcmp(a->kind, b->kind) &&
           !strcmp(a->source, b->source) && a->mem_bw == b->mem_bw &&
           a->mem_bytes == b->mem_bytes && a->bw_eff == b->bw_eff &&
           a->flops_eff == b->flops_eff && a->interconnect_bw == b->interconnect_bw &&
           a->interconnect_latency == b->interconnect_latency &&
           a->power_w == b->power_w && a->idle_power_w == b->idle_power_w;
}

static int write_llm(FILE *f, const void *c) { return cards_write_llm(f, c, 0); }
static int write_hw(FILE *f, const void *c) { return cards_write_hw(f, c, 0); }

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reset();
    char path[4096], back[4096];
    fuzz_write_file("card.yaml", data, size, path, sizeof path);
    err_t err;
    llm_card_t m, m2;
    if (cards_load_llm_file(path, &m, &err) == 0) {
        write_back(write_llm, &m, back, sizeof back);
        if (cards_load_llm_file(back, &m2, &err) != 0)
            fuzz_fail("an LLM card written back does not load", err.msg);
        if (!same_llm(&m, &m2))
            fuzz_fail("an LLM card written back reads differently", NULL);
    }
    hw_card_t h, h2;
    if (cards_load_hw_file(path, &h, &err) == 0) {
        write_back(write_hw, &h, back, sizeof back);
        if (cards_load_hw_file(back, &h2, &err) != 0)
            fuzz_fail("a hardware card written back does not load", err.msg);
        if (!same_hw(&h, &h2))
            fuzz_fail("a hardware card written back reads differently", NULL);
    }
    return 0;
}
