/* spec — verification rules (see spec.h). */
#include "spec.h"

#include <math.h>
#include <stddef.h>

int32_t spec_argmax(const float *logits, int vocab)
{
    int32_t best = 0;
    for (int32_t i = 1; i < vocab; i++)
        if (logits[i] > logits[best] || (isnan(logits[best]) && !isnan(logits[i]))) best = i;
    return best;
}

void spec_softmax(const float *logits, int vocab, float temp, float *p)
{
    float mx = logits[spec_argmax(logits, vocab)];
    double sum = 0.0;
    for (int i = 0; i < vocab; i++) {
        p[i] = expf((logits[i] - mx) / temp);
        sum += p[i];
    }
    float inv = (float)(1.0 / sum);
    for (int i = 0; i < vocab; i++) p[i] *= inv;
}

int32_t spec_draw(const float *w, int vocab, double u)
{
    double total = 0.0;
    for (int i = 0; i < vocab; i++) total += w[i];
    if (!(total > 0.0)) return spec_argmax(w, vocab);
    double target = u * total, run = 0.0;
    int32_t last = 0;
    for (int32_t i = 0; i < vocab; i++) {
        if (!(w[i] > 0.0f)) continue;
        run += w[i];
        last = i;
        if (run > target) return i;
    }
    /* u·Σ at the very top and rounding in the running sum: the last
     * token of positive weight. */
    return last;
}

int spec_verify_greedy(const float *logits, int vocab, const int32_t *drafts, int gamma,
                       int32_t *next)
{
    int a = 0;
    while (a < gamma && spec_argmax(logits + (size_t)a * vocab, vocab) == drafts[a]) a++;
    *next = spec_argmax(logits + (size_t)a * vocab, vocab);
    return a;
}

int spec_verify_sample(const float *p, const float *q, int vocab, const int32_t *drafts,
                       int gamma, gsl_rng *r, float *resid, int32_t *next)
{
    for (int a = 0; a < gamma; a++) {
        const float *pj = p + (size_t)a * vocab, *qj = q + (size_t)a * vocab;
        float px = pj[drafts[a]], qx = qj[drafts[a]];
        /* Accept with min(1, p/q): u < p/q ⇔ u·q < p (q > 0: dj+1 was
         * drawn from q). */
        if (gsl_rng_uniform(r) * qx < px) continue;
        for (int i = 0; i < vocab; i++) resid[i] = pj[i] > qj[i] ? pj[i] - qj[i] : 0.0f;
        *next = spec_draw(resid, vocab, gsl_rng_uniform(r));
        return a;
    }
    *next = spec_draw(p + (size_t)gamma * vocab, vocab, gsl_rng_uniform(r));
    return gamma;
}
