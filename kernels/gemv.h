/* gemv — fast CPU GEMV and small-M GEMM (M ≤ 16 is the target; any M works)
 * for W4A16, fp16 and fp32 weights, multithreaded over output rows, with the
 * SIMD path chosen at run time (AVX-512, AVX2+FMA+F16C, NEON, portable C).
 *
 * The W4A16 kernels read their own layout, w4a16_packed_t, made from the
 * reference format by w4a16_repack(): same bytes per weight, but the nibbles
 * of each block of 32 inputs are ordered so that one AND and one shift give
 * 16 consecutive inputs each (the ggml q4_0 order). Every kernel is tested
 * against the scalar references (w4a16_gemm_ref, ref_gemm_f16/f32).
 *
 * Re-entrant: all state lives in a gemv_ctx_t (thread pool + scratch). One
 * context must not be used by two threads at once; use one per thread.
 */
#ifndef SPECSIM_GEMV_H
#define SPECSIM_GEMV_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "w4a16.h"

typedef struct w4a16_packed {
    int n, k, group;      /* group % 32 == 0, k % group == 0 */
    uint8_t *q;           /* [n][k/2]: for inputs 32b..32b+31 of a row, 16 bytes;
                             byte j = q(32b+j) | q(32b+16+j) << 4 */
    uint16_t *scales;     /* [n][k/group] fp16 bits */
    uint8_t *zeros;       /* [n][k/group] 0..15 */
    /* Optional second copy for the int8 kernel (w4a16_packed_interleave;
     * NULL otherwise): rows in blocks of 16, each block one sequential
     * stream. Block b, group g (of 128), step i (8 inputs): 64 bytes, byte
     * 4j + e = q(16b + j, 128g + 8i + 4·0 + e) | q(16b + j, 128g + 8i + 4 + e) << 4
     * (j = row in block, e = 0..3), so the low nibbles of one 64-byte load
     * give 16 rows × 4 inputs (one u8×s8 dot step against 4 activations
     * broadcast) and the high nibbles the next 4. mi: [block][g] 40 bytes,
     * the scales of rows 16b..16b+15 (fp16, 32 bytes), then their zeros as
     * nibbles (byte j = z of row j | z of row j + 8 << 4): one stream per
     * block beside the weights, 2.5 bytes per row and group as the format
     * counts them. The n mod 16 last rows are not in it. */
    uint8_t *qi;
    uint8_t *mi;
} w4a16_packed_t;

/* Allocates an uninitialised packed matrix (64-byte aligned arrays). 0, or
 * -1 on a shape the kernels do not take (group % 32 != 0, k % group != 0) or
 * no memory. The caller owns it: w4a16_packed_fini. */
int w4a16_packed_init(w4a16_packed_t *p, int n, int k, int group);
void w4a16_packed_fini(w4a16_packed_t *p);
/* Adds the interleaved copy (qi/mi) from q/scales/zeros: 0, or -1 when
 * out of memory or the group is not 128 (then nothing changes). Rows
 * 16·⌊n/16⌋.. stay in q only; n < 16 adds nothing. Doubles the weight bytes
 * held; only the int8 kernel reads the copy (and w4a16_packed_fini frees it). */
int w4a16_packed_interleave(w4a16_packed_t *p);
/* Reference layout → kernel layout (allocates *out). 0 or -1 as above. */
int w4a16_repack(const w4a16_t *w, w4a16_packed_t *out);
/* Bytes the packed matrix occupies (zeros take a byte each here, so this is
 * 0.4 % above w4a16_bytes() at group 128; rates are reported on the format's
 * bytes, which understates them slightly). */
double w4a16_packed_bytes(const w4a16_packed_t *p);

enum gemv_isa {
    GEMV_ISA_AUTO = -1,
    GEMV_ISA_SCALAR = 0,  /* portable C */
    GEMV_ISA_AVX2,        /* AVX2 + FMA + F16C */
    GEMV_ISA_AVX512,      /* AVX-512 F/BW/VL + FMA + F16C */
    GEMV_ISA_NEON,        /* AArch64 Advanced SIMD */
    GEMV_ISA_COUNT
};

/* 1 when this build and this CPU can run the path. */
int gemv_isa_available(int isa);
const char *gemv_isa_name(int isa);
/* The path GEMV_ISA_AUTO picks here: the widest available. */
int gemv_isa_best(void);

/* The W4A16 kernels a context can run (gemv_ctx_set_w4_kernel).
 *
 * exact: fp16 activations converted to fp32, every product q·x exact, fp32
 *   accumulation — the reference (w4a16_gemm_ref) up to summation order.
 * int8: the activations are quantised per weight group (per row of x and
 *   group of `group` inputs) on the fly, as CPU edge runtimes do for 4-bit
 *   weights: d = max|x|/127, xq = round(x/d) in −127..127 (d = 0 and xq = 0
 *   for an all-zero group). Then, per group, Σ q·xq and Σ xq are exact
 *   integers and y = Σ_g s·d·(Σ q·xq − z·Σ xq) in fp32. Against the exact
 *   product the error is at most Σ_g s·Σ_k |q − z|·|x − d·xq| ≤
 *   Σ_g s·(d/2)·Σ_k |q − z| plus fp32 rounding (tests/kernels/test_gemv.c
 *   asserts that bound; docs/design.md states typical sizes). */
enum gemv_w4_kernel {
    GEMV_W4_EXACT = 0,
    GEMV_W4_INT8,
    GEMV_W4_COUNT
};

const char *gemv_w4_kernel_name(int kern);
/* The kernel of that name ("exact", "int8"), or -1. */
int gemv_w4_kernel_from_name(const char *name);

typedef struct gemv_ctx gemv_ctx_t;

/* threads ≤ 0: one per online CPU. isa: GEMV_ISA_AUTO or a specific path
 * (an unavailable one is an ERR_INPUT error). NULL on failure. The caller
 * owns the context: gemv_ctx_free (joins the threads). */
gemv_ctx_t *gemv_ctx_create(int threads, int isa, err_t *err);
void gemv_ctx_free(gemv_ctx_t *c);
int gemv_ctx_isa(const gemv_ctx_t *c);
int gemv_ctx_threads(const gemv_ctx_t *c);
/* Chooses the W4A16 kernel (default exact). int8 has SIMD kernels for
 * groups of 128 on the AVX2 (AVX-VNNI vpdpbusd on ymm where the CPU has it,
 * else vpmaddubsw) and AVX-512 (VNNI vpdpbusd where the CPU has it, else
 * vpmaddubsw) paths: on the interleaved copy where the
 * matrix has one (w4a16_packed_interleave; both paths), else row-major
 * (AVX-512 only). Everything else (scalar and NEON paths, other groups,
 * AVX2 without the copy) runs a portable loop. 0, or -1 with ERR_INPUT on
 * an unknown kernel. */
int gemv_ctx_set_w4_kernel(gemv_ctx_t *c, int kern, err_t *err);
int gemv_ctx_w4_kernel(const gemv_ctx_t *c);
/* Which integer dot products the int8 kernel may use where the CPU has
 * them (default GEMV_I8_DOT_AMX, the most): tests and side-by-side
 * benchmarks lower it to run the others on such CPUs. AMX tiles serve
 * M > 8 on the AVX-512 path (Linux must grant the process tile state:
 * requested once through arch_prctl). */
enum gemv_i8_dot {
    GEMV_I8_DOT_BASE = 0,   /* vpmaddubsw + vpmaddwd */
    GEMV_I8_DOT_VNNI,       /* vpdpbusd: AVX-512 VNNI, or AVX-VNNI on ymm (AVX2 path) */
    GEMV_I8_DOT_AMX         /* tile dot products (AMX-INT8), AVX-512 path, M > 8 */
};
void gemv_ctx_set_int8_dot_ext(gemv_ctx_t *c, int level);
/* The integer dot product the int8 kernel runs on the interleaved copy
 * with this context for m activation rows: "amx", "avx512-vnni",
 * "avx-vnni", "vpmaddubsw" or "portable". */
const char *gemv_ctx_int8_dot_name(const gemv_ctx_t *c, int m);

/* y[m][n] = x[m][k] · W^T. fp16 activations and output, fp32 accumulation.
 * 0, or -1 when scratch memory cannot be grown. */
int gemv_w4a16(gemv_ctx_t *c, const w4a16_packed_t *w, const uint16_t *x, int m, uint16_t *y);
/* fp16 weights w[n][k]. */
int gemv_f16(gemv_ctx_t *c, const uint16_t *w, int n, int k, const uint16_t *x, int m,
             uint16_t *y);
/* fp16 weights and activations, fp32 output, batch-invariant: row i of y
 * is bit for bit the same whatever m is and whatever the other rows of x
 * hold (each sum runs the same operations in the same order on every
 * path; gemv_f16's tiles change their accumulators with m, which moves the
 * last bits). The real-model runtime (kernels/llm/llm.h) verifies on it so
 * that a token verified in a batch gets the logits it gets alone. */
int gemv_f16_f32(gemv_ctx_t *c, const uint16_t *w, int n, int k, const uint16_t *x, int m,
                 float *y);
/* fp32 weights, activations and output. */
int gemv_f32(gemv_ctx_t *c, const float *w, int n, int k, const float *x, int m, float *y);

/* fp16 → fp32 of n values with the context's SIMD path. */
void gemv_h2f(const gemv_ctx_t *c, const uint16_t *h, float *f, size_t n);
/* fp32 → fp16 of n values with the context's SIMD path (F16C on x86),
 * rounded to nearest even: the bits of f32_to_fp16 (w4a16.h) for every
 * value but NaN (a NaN stays a NaN; its payload may differ). */
void gemv_f2h(const gemv_ctx_t *c, const float *f, uint16_t *h, size_t n);

/* Runs fn(arg, i, nchunks) for every chunk i in 0..nchunks−1 (at most
 * 65535) on the context's threads, the caller included, each chunk exactly
 * once, and returns when all are done. Chunks are claimed dynamically, so a
 * descheduled thread delays the call by at most one chunk. */
void gemv_parallel(gemv_ctx_t *c, void (*fn)(void *arg, int i, int nchunks), void *arg,
                   int nchunks);

/* The context's vector primitives, for kernels built on top (attention):
 * Σ q[i]·h[i] over d values, and acc[i] += a·h[i]. */
float gemv_dot_f16(const gemv_ctx_t *c, const float *q, const uint16_t *h, int d);
void gemv_axpy_f16(const gemv_ctx_t *c, float a, const uint16_t *h, float *acc, int d);
/* One attention head, fused (see attn.c): q fp32 [d], K/V fp16 rows `stride`
 * elements apart, npos positions, sc scratch [npos], out fp32 [d] (already
 * divided by the softmax sum). -1 when the path has no fused kernel. */
int gemv_attn_head(const gemv_ctx_t *c, const float *q, const uint16_t *k, const uint16_t *v,
                   size_t stride, int npos, int d, float scale, float *sc, float *out);

#endif
