/* spec — the verification rules of speculative decoding, on logits.
 *
 * A block of γ drafts d1..dγ is verified by one target pass over γ + 1
 * positions: row j (0..γ) of the target's logits predicts the token after
 * the committed text and d1..dj. The verdict is a, the number of leading
 * drafts accepted, and `next`: the target's token at the first rejected
 * position (the correction) or after all γ (the bonus). Both rules are
 * lossless: the committed text has the distribution of the target's own
 * decoding (greedy: it is the target's greedy text).
 *
 * Greedy: dj+1 is accepted while it equals row j's argmax (lowest id on
 * ties); next = argmax of row a.
 *
 * Sampling at temperature T > 0 (Leviathan et al. 2023; Chen et al. 2023):
 * p_j = softmax(target row j / T), q_j = softmax(draft logits of dj+1 / T),
 * and dj+1 was drawn from q_j. It is accepted with probability
 * min(1, p_j(dj+1) / q_j(dj+1)); at the first rejection next is drawn from
 * max(0, p_j − q_j) normalised; after γ acceptances from p_γ.
 */
#ifndef SPECSIM_SPEC_H
#define SPECSIM_SPEC_H

#include <gsl/gsl_rng.h>
#include <stdint.h>

/* The largest entry's index (the lowest such index on ties; NaN is never
 * chosen unless every entry is NaN, then 0). */
int32_t spec_argmax(const float *logits, int vocab);

/* p = softmax(logits / temp) (temp > 0), summed in double. */
void spec_softmax(const float *logits, int vocab, float temp, float *p);

/* Inverse-CDF draw from the (not necessarily normalised) weights w ≥ 0
 * with the uniform u in [0, 1): the first i with Σ_{≤i} w > u·Σ w. When
 * no weight is positive it returns the argmax of w. */
int32_t spec_draw(const float *w, int vocab, double u);

/* Greedy verification of gamma drafts against logits [gamma + 1][vocab].
 * Returns a; *next gets the correction or bonus. */
int spec_verify_greedy(const float *logits, int vocab, const int32_t *drafts, int gamma,
                       int32_t *next);

/* Sampled verification: p [gamma + 1][vocab] the target's probabilities,
 * q [gamma][vocab] the draft's (the distributions the drafts were drawn
 * from), r the verifier's random stream (gamma + 1 uniforms at most).
 * resid: scratch of vocab floats. Returns a; *next as above. */
int spec_verify_sample(const float *p, const float *q, int vocab, const int32_t *drafts,
                       int gamma, gsl_rng *r, float *resid, int32_t *next);

#endif
