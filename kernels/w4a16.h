/* w4a16 — the W4A16 reference weight format and its scalar reference.
 *
 * Weights W[N][K] (N output rows, K inputs). Unsigned 4-bit q in groups of
 * g (default 128) along K; w = (q − z)·s with an fp16 scale s and a 4-bit zero
 * z per (row, group). qweight packs 8 nibbles per uint32 along K: element k of
 * a row sits at bits 4·(k mod 8) of word k/8. Activations fp16, accumulation
 * fp32, output fp16. Zeros are stored one per byte here (values 0..15) for
 * clarity; byte counts for the roofline count them as 4 bits.
 *
 * Everything optimised (CPU SIMD, CUDA) is tested against w4a16_gemm_ref.
 */
#ifndef SPECSIM_W4A16_H
#define SPECSIM_W4A16_H

#include <stddef.h>
#include <stdint.h>

#define W4A16_GROUP_DEFAULT 128

typedef struct w4a16 {
    int n, k, group;      /* k % group == 0, group % 8 == 0 */
    uint32_t *qweight;    /* [n][k/8] */
    uint16_t *scales;     /* [n][k/group], fp16 bits */
    uint8_t *zeros;       /* [n][k/group], 0..15 */
} w4a16_t;

/* Allocates the three arrays (zeroed). 0, or -1 on bad shape / no memory.
 * The caller owns them and releases with w4a16_fini(). */
int w4a16_init(w4a16_t *w, int n, int k, int group);
void w4a16_fini(w4a16_t *w);
/* Bytes the format occupies as stored on a device: n·k/2 weight bytes +
 * 2 bytes of scale + 0.5 byte of zero per (row, group). */
double w4a16_bytes(int n, int k, int group);
/* One 4-bit weight of row `row`, input `col` (0..15), read or written in the
 * packed qweight. */
unsigned w4a16_get_q(const w4a16_t *w, int row, int col);
void w4a16_set_q(w4a16_t *w, int row, int col, unsigned q);

/* Round-to-nearest quantisation of w[n][k] (fp32). asymmetric: per group
 * s = (max − min)/15, z = round(−min/s) in 0..15; symmetric: z = 8,
 * s = max|w|/7 (so q − 8 spans −8..7). *out must be allocated with the same
 * shape.
 *
 * Asymmetric: the group's range is widened to contain 0, [min(min, 0),
 * max(max, 0)], as GPTQ and AWQ do, so z = round(−min/s) never needs
 * clamping, 0 is exact, and every weight lies within s/2 of a level (plus
 * the fp16 rounding of s). An all-zero group gets s = 0, z = 0. */
void w4a16_quantize(const float *w, int symmetric, w4a16_t *out);
/* w4a16_quantize from fp16 weights. 0, or -1 when out of memory. */
int w4a16_quantize_fp16(const uint16_t *w, int symmetric, w4a16_t *out);
/* w[n][k] = (q − z)·s in fp32. */
void w4a16_dequantize(const w4a16_t *q, float *w);

/* The ground truth: y[m][n] = x[m][k] · W^T, fp16 in/out, fp32 accumulation in
 * k order, one dequantised weight at a time. */
void w4a16_gemm_ref(const w4a16_t *w, const uint16_t *x, int m, uint16_t *y);

/* IEEE 754 binary16 conversions (round to nearest even), portable C. */
float fp16_to_f32(uint16_t h);
uint16_t f32_to_fp16(float f);

#endif
