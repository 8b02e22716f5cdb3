/* membw — STREAM-style read bandwidth over all threads (see membw.h). */
#include "membw.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "base/wallclock.h"

/* Slices claimed dynamically by all threads; 1 MiB or more each. */
#define MEMBW_CHUNKS 64
#define MEMBW_PF_WORDS 1024   /* 8 KiB */

#define MEMBW_MAX_STREAMS 16

struct membw_job {
    const uint64_t *buf;
    size_t words;
    int streams;
    uint64_t sink[64];
};

/* XOR-reduce the slice with eight independent lanes: the compiler vectorises
 * it (XOR is associative, unlike FP adds). Software prefetch 8 KiB ahead, as
 * the GEMV kernels do: without it the hardware prefetcher alone left this
 * "ceiling" below what the fp16 GEMV reached (40.6 vs 53 GB/s here). With
 * S streams the slice is cut into S equal parts read 64 bytes at a time in
 * turn, each prefetched ahead of itself. */
static void membw_part(void *arg, int tid, int nth)
{
    struct membw_job *j = arg;
    size_t lo = j->words * (size_t)tid / (size_t)nth, hi = j->words * (size_t)(tid + 1) / (size_t)nth;
    lo &= ~(size_t)7;
    hi = tid == nth - 1 ? j->words : hi & ~(size_t)7;
    uint64_t a[8] = {0};
    int ns = j->streams;
    size_t len = ((hi - lo) / (size_t)ns) & ~(size_t)7;
    const uint64_t *p[MEMBW_MAX_STREAMS];
    for (int s = 0; s < ns; s++) p[s] = j->buf + lo + (size_t)s * len;
    for (size_t i = 0; i < len; i += 8)
        for (int s = 0; s < ns; s++) {
            __builtin_prefetch(p[s] + i + MEMBW_PF_WORDS);
            for (int l = 0; l < 8; l++) a[l] ^= p[s][i + (size_t)l];
        }
    for (size_t i = lo + (size_t)ns * len; i < hi; i++) a[0] ^= j->buf[i];
    uint64_t s = 0;
    for (int l = 0; l < 8; l++) s ^= a[l];
    j->sink[tid % 64] ^= s;
}

double membw_read_streams_gbs(gemv_ctx_t *c, size_t bytes, int streams, int reps, err_t *err)
{
    if (streams < 1 || streams > MEMBW_MAX_STREAMS) {
        err_set(err, ERR_INPUT, "membw: %d streams (1..%d)", streams, MEMBW_MAX_STREAMS);
        return -1.0;
    }
    size_t words = bytes / sizeof(uint64_t);
    uint64_t *buf = NULL;
    if (posix_memalign((void **)&buf, 64, words * sizeof *buf) != 0 || !buf) {
        err_set(err, ERR_RUNTIME, "membw: cannot allocate %zu bytes", bytes);
        return -1.0;
    }
    for (size_t i = 0; i < words; i++) buf[i] = i * 0x9E3779B97F4A7C15ull;
    struct membw_job j;
    memset(&j, 0, sizeof j);
    j.buf = buf;
    j.words = words;
    j.streams = streams;
    gemv_parallel(c, membw_part, &j, MEMBW_CHUNKS);
    double best = 1e300;
    for (int r = 0; r < reps; r++) {
        double t0 = wallclock_s();
        gemv_parallel(c, membw_part, &j, MEMBW_CHUNKS);
        double t = wallclock_s() - t0;
        if (t < best) best = t;
    }
    free(buf);
    return (double)(words * sizeof(uint64_t)) / best / 1e9;
}

double membw_read_gbs(gemv_ctx_t *c, size_t bytes, int reps, err_t *err)
{
    return membw_read_streams_gbs(c, bytes, 1, reps, err);
}

void membw_read_pass(gemv_ctx_t *c, const void *buf, size_t bytes, int streams)
{
    struct membw_job j;
    memset(&j, 0, sizeof j);
    j.buf = buf;
    j.words = bytes / sizeof(uint64_t);
    j.streams = streams < 1 ? 1 : streams > MEMBW_MAX_STREAMS ? MEMBW_MAX_STREAMS : streams;
    gemv_parallel(c, membw_part, &j, 4 * gemv_ctx_threads(c));
}
