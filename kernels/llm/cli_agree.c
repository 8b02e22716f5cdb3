/* llm agree — the fp16 target's teacher-forced logits against llama.cpp's
 * on the same weights (scripts/llm/llamacpp-ref.py writes the reference:
 * its format is described there), and with --f16 our fp16 weights against
 * the F16 copy llama.cpp loaded (scripts/llm/f16-gguf.py), tensor by
 * tensor, bit for bit.
 *
 * Prints: positions compared, top-1 agreement, the largest and mean
 * absolute logit difference over the full rows the reference holds (every
 * 8th position) and over the reference's top-16 of every position; the
 * near-ties among the disagreements (reference top-2 gap below the largest
 * difference). Exit 1 when top-1 agreement is below --min-top1 or any
 * weight differs. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli_args.h"
#include "cli_cmds.h"
#include "spec.h"
#include "w4a16.h"

#define CMD "llm agree"
#define REF_K 16
#define REF_FULL 8

typedef struct agree_args {
    const char *model, *ids, *ref, *f16;
    double min_top1;
    int threads, help;
} agree_args_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: " CMD " --model GGUF --ids IDSFILE --ref REFFILE [--f16 F16GGUF]\n"
               "       [--min-top1 0.995] [--threads N]\n");
}

static int parse(int argc, char **argv, agree_args_t *a, err_t *err)
{
    *a = (agree_args_t){NULL, NULL, NULL, NULL, 0.995, 0, 0};
    cli_opt_t o[] = {
        {"model", CLI_STR, &a->model, 0, 0, 0}, {"ids", CLI_STR, &a->ids, 0, 0, 0},
        {"ref", CLI_STR, &a->ref, 0, 0, 0},     {"f16", CLI_STR, &a->f16, 0, 0, 0},
        {"min-top1", CLI_NUM, &a->min_top1, 0, 1, 0},
        {"threads", CLI_INT, &a->threads, 0, 1024, 0}, {"help", CLI_FLAG, &a->help, 0, 0, 0},
    };
    int np;
    if (cli_args_parse(CMD, argc, argv, 2, o, (int)(sizeof o / sizeof o[0]), NULL, 0, &np, err))
        return -1;
    if (!a->help && (!a->model || !a->ids || !a->ref))
        return err_set(err, ERR_INPUT, CMD ": --model, --ids and --ref are required");
    return 0;
}

/* ---- the reference file ---------------------------------------------------- */

typedef struct ref {
    FILE *f;
    const char *path;
    uint32_t nseq, vocab, k;
} ref_t;

static int rd(ref_t *r, void *p, size_t n, err_t *err)
{
    if (fread(p, 1, n, r->f) != n)
        return err_set(err, ERR_INPUT, "%s: truncated reference file", r->path);
    return 0;
}

static int ref_open(ref_t *r, const char *path, int vocab, err_t *err)
{
    char magic[8];
    r->path = path;
    if (!(r->f = fopen(path, "rb")))
        return err_set(err, ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    if (rd(r, magic, 8, err) || rd(r, &r->nseq, 4, err) || rd(r, &r->vocab, 4, err) ||
        rd(r, &r->k, 4, err))
        return -1;
    if (memcmp(magic, "SPLREF1", 8) != 0 || r->k != REF_K || r->vocab != (uint32_t)vocab)
        return err_set(err, ERR_INPUT, "%s: not a reference of this model (magic, K %u, vocab "
                       "%u against %d)", path, r->k, r->vocab, vocab);
    return 0;
}

/* ---- the ids file -------------------------------------------------------- */

typedef struct seqs {
    int32_t *ids;
    int *start, *len, n, total;
} seqs_t;

static void seqs_free(seqs_t *s)
{
    free(s->ids);
    free(s->start);
    free(s->len);
}

static int seq_push(seqs_t *s, int *cap, int at, err_t *err)
{
    if (at == s->total) return 0;
    if (s->n == *cap) {
        *cap = *cap ? 2 * *cap : 16;
        int *ns = realloc(s->start, (size_t)*cap * sizeof *ns);
        if (ns) s->start = ns;
        int *nl = ns ? realloc(s->len, (size_t)*cap * sizeof *nl) : NULL;
        if (!nl) return err_set(err, ERR_RUNTIME, CMD ": out of memory");
        s->len = nl;
    }
    s->start[s->n] = at;
    s->len[s->n++] = s->total - at;
    return 0;
}

static int seqs_load(const char *path, int vocab, seqs_t *s, err_t *err)
{
    FILE *f = fopen(path, "r");
    if (!f) return err_set(err, ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    char line[64];
    int cap = 0, icap = 0, at = 0, ln = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        ln++;
        char *end;
        long v = strtol(line, &end, 10);
        if (line[0] == '\n') {
            rc = seq_push(s, &cap, at, err);
            at = s->total;
            continue;
        }
        if (end == line || (*end && *end != '\n') || v < 0 || v >= vocab) {
            rc = err_set(err, ERR_INPUT, "%s:%d:1: expected a token id below %d", path, ln, vocab);
            break;
        }
        if (s->total == icap) {
            icap = icap ? 2 * icap : 1024;
            int32_t *ni = realloc(s->ids, (size_t)icap * sizeof *ni);
            if (!ni) rc = err_set(err, ERR_RUNTIME, CMD ": out of memory");
            else s->ids = ni;
        }
        if (rc == 0) s->ids[s->total++] = (int32_t)v;
    }
    if (rc == 0) rc = seq_push(s, &cap, at, err);
    fclose(f);
    if (rc == 0 && s->n == 0) rc = err_set(err, ERR_INPUT, "%s: no token id", path);
    return rc;
}

/* ---- comparison ------------------------------------------------------------ */

typedef struct tally {
    long pos, top1, ties, full_rows;
    double max_full, sum_full, max_topk;
    long n_full;
} tally_t;

static int compare_seq(ref_t *r, const float *lg, const int32_t *ids, int n, float *row,
                       tally_t *t, err_t *err)
{
    uint32_t npos;
    if (rd(r, &npos, 4, err)) return -1;
    if (npos != (uint32_t)n)
        return err_set(err, ERR_INPUT, "%s: a sequence of %u positions where the ids have %d",
                       r->path, npos, n);
    for (int i = 0; i < n; i++) {
        uint32_t tok, top[REF_K];
        float topv[REF_K];
        if (rd(r, &tok, 4, err) || rd(r, top, sizeof top, err) || rd(r, topv, sizeof topv, err))
            return -1;
        if (tok != (uint32_t)ids[i])
            return err_set(err, ERR_INPUT, "%s: token %u at a position where the ids have %d",
                           r->path, tok, (int)ids[i]);
        const float *ours = lg + (size_t)i * r->vocab;
        int32_t best = spec_argmax(ours, (int)r->vocab);
        t->pos++;
        if ((uint32_t)best == top[0]) t->top1++;
        else if (topv[0] - topv[1] < 0.05f) t->ties++;
        for (int k = 0; k < REF_K; k++) {
            double d = fabs((double)ours[top[k]] - topv[k]);
            t->max_topk = d > t->max_topk ? d : t->max_topk;
        }
        if (i % REF_FULL) continue;
        if (rd(r, row, (size_t)r->vocab * sizeof *row, err)) return -1;
        t->full_rows++;
        for (uint32_t v = 0; v < r->vocab; v++) {
            double d = fabs((double)ours[v] - row[v]);
            t->max_full = d > t->max_full ? d : t->max_full;
            t->sum_full += d;
            t->n_full++;
        }
    }
    return 0;
}

static int agree_logits(const agree_args_t *a, const cli_model_t *cm, tally_t *t, err_t *err)
{
    llm_model_t *m = cli_args_load(cm, "fp16", err);
    if (!m) return -1;
    int vocab = llm_config(m)->vocab, rc = 0;
    seqs_t s = {NULL, NULL, NULL, 0, 0};
    ref_t r = {NULL, NULL, 0, 0, 0};
    llm_run_t *run = llm_run_create(a->threads, err);
    float *row = malloc((size_t)vocab * sizeof *row), *lg = NULL;
    if (!run || seqs_load(a->ids, vocab, &s, err) || ref_open(&r, a->ref, vocab, err)) rc = -1;
    else if (r.nseq != (uint32_t)s.n)
        rc = err_set(err, ERR_INPUT, "%s: %u sequences, the ids file has %d", a->ref, r.nseq, s.n);
    for (int q = 0; rc == 0 && q < s.n; q++) {
        llm_kv_t *kv = llm_kv_create(m, s.len[q], err);
        free(lg);
        lg = malloc((size_t)s.len[q] * vocab * sizeof *lg);
        if (!kv || !lg || !row) rc = kv ? err_set(err, ERR_RUNTIME, CMD ": out of memory") : -1;
        llm_span_t sp = {kv, s.ids + s.start[q], s.len[q], 0};
        if (rc == 0) rc = llm_forward(run, m, &sp, 1, lg, err);
        if (rc == 0) rc = compare_seq(&r, lg, s.ids + s.start[q], s.len[q], row, t, err);
        llm_kv_free(kv);
    }
    if (r.f) fclose(r.f);
    free(lg);
    free(row);
    seqs_free(&s);
    llm_run_free(run);
    llm_free(m);
    return rc;
}

/* Every tensor of the model file, dequantised and rounded to fp16 as the
 * runtime holds it, against the same tensor of the F16 copy. */
static int agree_weights(const char *f16, const cli_model_t *cm, long *diff, long *count,
                         err_t *err)
{
    gguf_t *g = gguf_open(f16, err);
    if (!g) return -1;
    int rc = 0;
    *diff = *count = 0;
    for (int i = 0; rc == 0 && i < gguf_tensor_count(cm->g); i++) {
        const gguf_tensor_t *a = gguf_tensor_at(cm->g, i), *b = gguf_tensor(g, a->name);
        if (!b || b->nelem != a->nelem) {
            rc = err_set(err, ERR_INPUT, "%s: tensor '%s' is missing or of another size", f16,
                         a->name);
            break;
        }
        float *x = malloc(a->nelem * sizeof *x), *y = malloc(b->nelem * sizeof *y);
        if (!x || !y) rc = err_set(err, ERR_RUNTIME, CMD ": out of memory");
        if (rc == 0 && (gguf_dequant(a, 0, a->nelem, x, err) || gguf_dequant(b, 0, b->nelem, y, err)))
            rc = -1;
        /* F32 tensors (norms) stay fp32 on both sides; the rest is fp16. */
        for (uint64_t e = 0; rc == 0 && e < a->nelem; e++) {
            float want = a->type == GGUF_T_F32 ? x[e] : fp16_to_f32(f32_to_fp16(x[e]));
            *diff += memcmp(&want, &y[e], sizeof want) != 0;
        }
        *count += (long)a->nelem;
        free(x);
        free(y);
    }
    gguf_close(g);
    return rc;
}

static int run(const agree_args_t *a, err_t *err)
{
    cli_model_t cm;
    if (cli_args_open(a->model, &cm, err) != 0) return -1;
    tally_t t = {0, 0, 0, 0, 0, 0, 0, 0};
    long wdiff = 0, wcount = 0;
    int rc = a->f16 ? agree_weights(a->f16, &cm, &wdiff, &wcount, err) : 0;
    if (rc == 0 && a->f16)
        printf("weights: %ld of %ld values differ from %s\n", wdiff, wcount, a->f16);
    if (rc == 0) rc = agree_logits(a, &cm, &t, err);
    if (rc == 0) {
        double frac = t.pos ? (double)t.top1 / t.pos : 0;
        printf("positions %ld, top-1 agreement %.4f (%ld differ, %ld of them where llama.cpp's "
               "top two are within 0.05)\n", t.pos, frac, t.pos - t.top1, t.ties);
        printf("largest |logit difference|: %.4f over %ld full rows (mean %.5f), %.4f over the "
               "top-16 of every position\n", t.max_full, t.full_rows,
               t.n_full ? t.sum_full / t.n_full : 0.0, t.max_topk);
        if (frac < a->min_top1)
            rc = err_set(err, ERR_RUNTIME, CMD ": top-1 agreement %.4f is below %.4f", frac,
                         a->min_top1);
        else if (wdiff)
            rc = err_set(err, ERR_RUNTIME, CMD ": %ld weights differ", wdiff);
    }
    cli_args_close(&cm);
    return rc;
}

int cli_agree(int argc, char **argv)
{
    agree_args_t a;
    err_t err = {0, ""};
    if (parse(argc, argv, &a, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return 2;
    }
    if (a.help) {
        usage(stdout);
        return 0;
    }
    if (run(&a, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return err.code ? err.code : 1;
    }
    return fflush(stdout) == 0 ? 0 : 1;
}
