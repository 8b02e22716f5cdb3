/* cubench — measuring GPU kernels honestly (METHOD: events, warm-up, L2 flush,
 * medians, measured ceilings) and filling device buffers with random data
 * (never time on zeros).
 *
 * Each repetition is bracketed by its own pair of CUDA events; before every
 * repetition a flush buffer larger than the L2 (256 MiB by default; the H200's
 * L2 is 60 MB) is overwritten, outside the timed interval, so weights never
 * come from L2. The flush also gives the host time to enqueue the timed work,
 * so no launch gap lands inside the interval.
 */
#ifndef SPECSIM_CUBENCH_CUH
#define SPECSIM_CUBENCH_CUH

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stddef.h>
#include <stdint.h>

extern "C" {
#include "base/err.h"
}

#define CUBENCH_FLUSH_BYTES ((size_t)256 << 20)
#define CUBENCH_MAX_REPS 1000

typedef struct cubench {
    cudaStream_t st;
    cudaEvent_t ev[2];
    void *flush;          /* device, flush_bytes */
    size_t flush_bytes;
    int flush_toggle;
} cubench_t;

/* The timed work: enqueue it on st, return 0 or -1 with err set. */
typedef int (*cubench_fn)(void *ctx, cudaStream_t st, err_t *err);

/* Creates a stream, events and the flush buffer. Release with cubench_fini. */
int cubench_init(cubench_t *b, size_t flush_bytes, err_t *err);
void cubench_fini(cubench_t *b);

/* Runs fn `warmup` times, then `reps` (1..CUBENCH_MAX_REPS) timed
 * repetitions, flushing L2 before each when flush != 0. *median_s: median of
 * the repetitions; *min_s (may be NULL): fastest. 0 or -1. */
int cubench_median(cubench_t *b, cubench_fn fn, void *ctx, int warmup, int reps,
                   int flush, double *median_s, double *min_s, err_t *err);

/* Ceilings. Device-to-device cudaMemcpy of `bytes` (GB/s counting bytes read
 * plus bytes written), and a read-only streaming kernel over `bytes` (GB/s of
 * bytes read). */
int cubench_copy_gbs(cubench_t *b, size_t bytes, double *gbs, err_t *err);
int cubench_read_gbs(cubench_t *b, size_t bytes, double *gbs, err_t *err);

/* Random device fills (hash of seed and index; deterministic). */
int cufill_half(__half *p, size_t count, uint64_t seed, float lo, float hi,
                cudaStream_t st, err_t *err);
int cufill_u32(uint32_t *p, size_t count, uint64_t seed, cudaStream_t st,
               err_t *err);
int cufill_nibble(uint8_t *p, size_t count, uint64_t seed, cudaStream_t st,
                  err_t *err);

#endif
