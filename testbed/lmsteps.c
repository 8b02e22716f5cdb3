/* lmsteps — the real-model verifier's steps as calibration rows: see
 * lmsteps.h. */
#include "lmsteps.h"

#include <stdint.h>
#include <stdlib.h>

#include "llm.h"
#include "spec.h"
#include "base/wallclock.h"

typedef struct steps {
    const lmsteps_opts_t *o;
    llm_model_t *m;
    llm_run_t *run;
    llm_kv_t **kv;
    int nkv;
    int32_t *tok;      /* ids the spans read (their values do not matter) */
    float *logits;
    llm_span_t *sp;
    double *t;         /* one row's times */
} steps_t;

static int cmp_dbl(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* Runs the spans once (forward pass, then each block's verdict or the
 * prefill's argmax); seconds, or -1 with err. */
static double step(steps_t *S, int nspans, int verify, err_t *err)
{
    int vocab = llm_config(S->m)->vocab, g = S->o->gamma;
    double t0 = wallclock_s();
    if (llm_forward(S->run, S->m, S->sp, nspans, S->logits, err)) return -1;
    const float *lg = S->logits;
    for (int b = 0; b < nspans; b++) {
        int32_t next;
        if (verify) (void)spec_verify_greedy(lg, vocab, S->tok + 1, g, &next);
        else (void)spec_argmax(lg, vocab);
        lg += (size_t)(verify ? g + 1 : 1) * vocab;
    }
    return wallclock_s() - t0;
}

/* The rows: batches of 1, 2, ... blocks while they fit, then the
 * prefills. */
static int nbatch(const lmsteps_opts_t *o) { return o->max_tokens / (o->gamma + 1); }
static int nrows(const lmsteps_opts_t *o) { return nbatch(o) + o->nprefill; }

/* Runs row k once, from caches cut back to its context: seconds, or -1
 * with err. */
static double run_row(steps_t *S, int k, err_t *err)
{
    const lmsteps_opts_t *o = S->o;
    int q = o->gamma + 1, nb = nbatch(o);
    if (k < nb) {
        for (int j = 0; j <= k; j++) {
            llm_kv_truncate(S->kv[j], o->context);
            S->sp[j] = (llm_span_t){S->kv[j], S->tok, q, 0};
        }
        return step(S, k + 1, 1, err);
    }
    int P = o->prefill[k - nb];
    llm_kv_truncate(S->kv[0], 0);
    S->sp[0] = (llm_span_t){S->kv[0], S->tok, P, P - 1};
    return step(S, 1, 0, err);
}

/* Every row once per round, a warm-up round and then reps: a spell of
 * this machine running slow (a VM's neighbours) then touches every row
 * alike and one round of each, which the medians leave out, instead of
 * every run of one row. S->t[k * reps + r]: row k's time in round r. */
static int time_rows(steps_t *S, err_t *err)
{
    int n = nrows(S->o), reps = S->o->reps;
    for (int r = -1; r < reps; r++)
        for (int k = 0; k < n; k++) {
            double dt = run_row(S, k, err);
            if (dt < 0) return -1;
            if (r >= 0) S->t[(size_t)k * reps + r] = dt;
        }
    for (int k = 0; k < n; k++)
        qsort(S->t + (size_t)k * reps, (size_t)reps, sizeof *S->t, cmp_dbl);
    return 0;
}

static int setup(steps_t *S, err_t *err)
{
    const lmsteps_opts_t *o = S->o;
    llm_opts_t lo = {LLM_FP16, 0, 0};
    gguf_t *g = gguf_open(o->model, err);
    if (!g) return -1;
    S->m = llm_load(g, &lo, err);
    gguf_close(g);
    if (!S->m || !(S->run = llm_run_create(o->threads, err))) return -1;
    int q = o->gamma + 1, longest = q;
    for (int k = 0; k < o->nprefill; k++)
        if (o->prefill[k] > longest) longest = o->prefill[k];
    if (o->context > longest) longest = o->context;
    int rows = o->max_tokens > longest ? o->max_tokens : longest;
    int vocab = llm_config(S->m)->vocab;
    S->nkv = o->max_tokens / q > 0 ? o->max_tokens / q : 1;
    S->kv = calloc((size_t)S->nkv, sizeof *S->kv);
    S->sp = calloc((size_t)S->nkv, sizeof *S->sp);
    S->tok = malloc((size_t)longest * sizeof *S->tok);
    S->logits = malloc((size_t)rows * (size_t)vocab * sizeof *S->logits);
    S->t = malloc((size_t)nrows(o) * (size_t)o->reps * sizeof *S->t);
    if (!S->kv || !S->sp || !S->tok || !S->logits || !S->t)
        return err_set(err, ERR_RUNTIME, "testbed steps: out of memory");
    for (int i = 0; i < longest; i++) S->tok[i] = (int32_t)((7919L * i + 13) % vocab);
    for (int j = 0; j < S->nkv; j++) {
        if (!(S->kv[j] = llm_kv_create(S->m, o->context + longest + 1, err))) return -1;
        if (o->context == 0) continue;
        /* The cached context, computed once; runs cut back to it. */
        llm_span_t c = {S->kv[j], S->tok, o->context, o->context};
        if (llm_forward(S->run, S->m, &c, 1, S->logits, err)) return -1;
    }
    return 0;
}

static void teardown(steps_t *S)
{
    for (int j = 0; S->kv && j < S->nkv; j++) llm_kv_free(S->kv[j]);
    free(S->kv);
    free(S->sp);
    free(S->tok);
    free(S->logits);
    free(S->t);
    llm_run_free(S->run);
    llm_free(S->m);
}

static int rows(steps_t *S, FILE *out, err_t *err)
{
    const lmsteps_opts_t *o = S->o;
    int q = o->gamma + 1, C = o->context, nb = nbatch(o);
    if (time_rows(S, err)) return -1;
    int bad = fprintf(out, "  # testbed steps --real-model %s: %s steps of the real-model "
                      "verifier (testbed/lmsteps.c), %d thread%s, median of %d rounds\n",
                      o->model, llm_name(S->m), o->threads, o->threads == 1 ? "" : "s",
                      o->reps) < 0;
    for (int k = 0; k < nrows(o) && !bad; k++) {
        double t = S->t[(size_t)k * o->reps + o->reps / 2];
        if (k < nb)
            bad = fprintf(out, "  - {op: token, m: %d, context: %d, q: %d, batch: %d, "
                          "time_s: %.9g}\n", (k + 1) * q, C, q, k + 1, t) < 0;
        else
            bad = fprintf(out, "  - {op: token, m: %d, context: 0, q: %d, batch: 1, logits: 1, "
                          "time_s: %.9g}\n", o->prefill[k - nb], o->prefill[k - nb], t) < 0;
    }
    return bad ? err_set(err, ERR_RUNTIME, "testbed steps: cannot write the rows") : 0;
}

int lmsteps_print(FILE *out, const lmsteps_opts_t *o, err_t *err)
{
    steps_t S = {.o = o};
    int rc = setup(&S, err);
    if (rc == 0) rc = rows(&S, out, err);
    teardown(&S);
    return rc ? -1 : 0;
}
