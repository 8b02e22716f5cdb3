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
#include <sys/types.h>

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
    int quiet;   /* --quiet: accepted; agree has no progress to silence */
} agree_args_t;

static void usage(FILE *f)
{
    fprintf(f, "usage: " CMD " --model GGUF --ids IDSFILE --ref REFFILE [--f16 F16GGUF]\n"
               "       [--min-top1 0.995] [--threads N] [--quiet]\n"
               "  --quiet: accepted as by every command; agree shows no progress, so it\n"
               "           has nothing to silence\n");
}

static int parse(int argc, char **argv, void *args, err_t *err)
{
    agree_args_t *a = args;
    *a = (agree_args_t){NULL, NULL, NULL, NULL, 0.995, 0, 0, 0};
    cli_opt_t o[] = {
        {"model", CLI_STR, &a->model, 0, 0, 0}, {"ids", CLI_STR, &a->ids, 0, 0, 0},
        {"ref", CLI_STR, &a->ref, 0, 0, 0},     {"f16", CLI_STR, &a->f16, 0, 0, 0},
        {"min-top1", CLI_NUM, &a->min_top1, 0, 1, 0},
        {"threads", CLI_INT, &a->threads, 0, 1024, 0}, {"help", CLI_FLAG, &a->help, 0, 0, 0},
        {"quiet", CLI_FLAG, &a->quiet, 0, 0, 0},
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
    if (fread(p, 1, n, r->f) == n) return 0;
    if (ferror(r->f)) return err_set(err, ERR_INPUT, "%s: read error: %s", r->path, strerror(errno));
    return err_set(err, ERR_INPUT, "%s: truncated: the reference file ends at byte %ld", r->path,
                   ftell(r->f));
}

static int ref_open(ref_t *r, const char *path, int vocab, err_t *err)
{
    char magic[8];
    r->path = path;
    if (!(r->f = cli_args_fopen_in(path, err))) return -1;
    if (rd(r, magic, 8, err) || rd(r, &r->nseq, 4, err) || rd(r, &r->vocab, 4, err) ||
        rd(r, &r->k, 4, err))
        return -1;
    if (memcmp(magic, "SPLREF1", 8) != 0)
        return err_set(err, ERR_INPUT, "%s: not a reference file (no 'SPLREF1' magic; "
                       "scripts/llm/llamacpp-ref.py writes them)", path);
    if (r->k != REF_K)
        return err_set(err, ERR_INPUT, "%s: K = %u top logits per position; this reader takes "
                       "%d", path, r->k, REF_K);
    if (r->vocab != (uint32_t)vocab)
        return err_set(err, ERR_INPUT, "%s: a reference for a vocabulary of %u tokens; the model "
                       "has %d", path, r->vocab, vocab);
    return 0;
}

/* After the last sequence the file must end: more would be data this run
 * silently left unchecked. */
static int ref_end(ref_t *r, err_t *err)
{
    if (fgetc(r->f) == EOF && !ferror(r->f)) return 0;
    if (ferror(r->f)) return err_set(err, ERR_INPUT, "%s: read error: %s", r->path, strerror(errno));
    return err_set(err, ERR_INPUT, "%s: bytes after its last sequence (byte %ld on)", r->path,
                   ftell(r->f) - 1);
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

/* Ids the file may hold in all: the counts stay ints. */
#define IDS_MAX (1 << 28)

/* One id line: decimal digits alone (strtol would also take " 5", "+5"
 * and "5\r"), below vocab. -1 when it is not one. */
static long id_of(const char *line, size_t len, int vocab)
{
    size_t digits = strspn(line, "0123456789");
    long v = digits == len && len > 0 && len < 10 ? strtol(line, NULL, 10) : -1;
    return v < vocab ? v : -1;
}

static int seq_add(seqs_t *s, int *icap, int32_t id, err_t *err)
{
    if (s->total == *icap) {
        *icap = *icap ? 2 * *icap : 1024;
        int32_t *ni = realloc(s->ids, (size_t)*icap * sizeof *ni);
        if (!ni) return err_set(err, ERR_RUNTIME, CMD ": out of memory");
        s->ids = ni;
    }
    s->ids[s->total++] = id;
    return 0;
}

/* The ids file: one id per line, sequences separated by blank lines, each
 * at most maxlen ids (the model's context). */
static int seqs_load(const char *path, int vocab, int maxlen, seqs_t *s, err_t *err)
{
    FILE *f = cli_args_fopen_in(path, err);
    if (!f) return -1;
    char *line = NULL;
    size_t lcap = 0;
    ssize_t got;
    int cap = 0, icap = 0, at = 0, ln = 0, rc = 0;
    while (rc == 0 && (got = getline(&line, &lcap, f)) >= 0) {
        ln++;
        size_t len = (size_t)got - (line[got - 1] == '\n');
        if (len == 0) {
            rc = seq_push(s, &cap, at, err);
            at = s->total;
            continue;
        }
        long v = id_of(line, len, vocab);
        if (v < 0)
            rc = err_set(err, ERR_INPUT, "%s:%d:1: expected a token id below %d (decimal digits "
                         "alone)", path, ln, vocab);
        else if (s->total - at >= maxlen)
            rc = err_set(err, ERR_INPUT, "%s:%d:1: a sequence of more than %d ids, the model's "
                         "context (llama.context_length)", path, ln, maxlen);
        else if (s->total >= IDS_MAX)
            rc = err_set(err, ERR_INPUT, "%s:%d:1: more than %d ids in all", path, ln, IDS_MAX);
        else
            rc = seq_add(s, &icap, (int32_t)v, err);
    }
    if (rc == 0 && ferror(f)) rc = err_set(err, ERR_INPUT, "%s: read error: %s", path,
                                           strerror(errno));
    if (rc == 0) rc = seq_push(s, &cap, at, err);
    free(line);
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
        /* The ids index our logits: one outside the vocabulary would read
         * past them. */
        for (int k = 0; k < REF_K; k++)
            if (top[k] >= r->vocab || !isfinite(topv[k]))
                return err_set(err, ERR_INPUT, "%s: position %d of a sequence: top id %u with "
                               "logit %g (ids below %u, finite logits)", r->path, i, top[k],
                               (double)topv[k], r->vocab);
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
        for (uint32_t v = 0; v < r->vocab; v++)
            if (!isfinite(row[v]))
                return err_set(err, ERR_INPUT, "%s: position %d of a sequence: logit %u is %g "
                               "(finite logits)", r->path, i, v, (double)row[v]);
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
    if (!run || seqs_load(a->ids, vocab, llm_config(m)->ctx_train, &s, err) ||
        ref_open(&r, a->ref, vocab, err))
        rc = -1;
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
    if (rc == 0) rc = ref_end(&r, err);
    if (r.f) fclose(r.f);
    free(lg);
    free(row);
    seqs_free(&s);
    llm_run_free(run);
    llm_free(m);
    return rc;
}

/* A tensor name fit for a one-line message: names are file data and may
 * hold line breaks. */
static const char *shown(const char *s, char *buf, size_t size)
{
    size_t i = 0;
    for (; s[i] && i + 1 < size; i++)
        buf[i] = (unsigned char)s[i] < 0x20 || s[i] == 0x7F ? '?' : s[i];
    buf[i] = '\0';
    return buf;
}

/* Tensor a of the model file against b, its namesake in the F16 copy:
 * both convertible and of one size. 0, or -1 with err naming the file at
 * fault. */
static int weights_pair(const char *model, const gguf_tensor_t *a, const char *f16,
                        const gguf_tensor_t *b, err_t *err)
{
    char nb[128];
    if (!b)
        return err_set(err, ERR_INPUT, "%s: tensor '%s' of the model is missing", f16,
                       shown(a->name, nb, sizeof nb));
    if (b->nelem != a->nelem)
        return err_set(err, ERR_INPUT, "%s: tensor '%s' has %llu elements; the model's has %llu",
                       f16, shown(a->name, nb, sizeof nb), (unsigned long long)b->nelem,
                       (unsigned long long)a->nelem);
    if (!gguf_type_dequant_ok(a->type) || !gguf_type_dequant_ok(b->type)) {
        const gguf_tensor_t *t = gguf_type_dequant_ok(a->type) ? b : a;
        return err_set(err, ERR_INPUT, "%s: tensor '%s' is of type %s, which this reader cannot "
                       "dequantise", t == a ? model : f16, shown(t->name, nb, sizeof nb),
                       gguf_type_name(t->type));
    }
    return 0;
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
        if (weights_pair(gguf_path(cm->g), a, f16, b, err)) {
            rc = -1;
            break;
        }
        float *x = malloc(a->nelem * sizeof *x), *y = malloc(b->nelem * sizeof *y);
        if (!x || !y) rc = err_set(err, ERR_RUNTIME, CMD ": out of memory");
        /* Whole tensors of convertible types: these cannot fail. */
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

static int run(const void *args, err_t *err)
{
    const agree_args_t *a = args;
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
    agree_args_t a = {0};
    return cli_args_main(argc, argv, &a, &a.help, parse, run, usage);
}
