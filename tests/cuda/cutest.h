/* cutest — small helpers shared by the CUDA tests (tests/cuda/test_*.cu):
 * a deterministic RNG, device presence, checked copies. Tests may print. */
#ifndef SPECSIM_CUTEST_H
#define SPECSIM_CUTEST_H

#include <cuda_fp16.h>
#include <cuda_runtime.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

#include "check.h"

extern "C" {
#include "base/err.h"
#include "w4a16.h"
}

/* Fails the current test (file:line and the CUDA message) when call fails. */
#define CT_CUDA(call)                                                         \
    do {                                                                      \
        cudaError_t ct_e_ = (call);                                           \
        if (ct_e_ != cudaSuccess) {                                           \
            printf("  %s:%d: %s: %s\n", __FILE__, __LINE__, #call,            \
                   cudaGetErrorString(ct_e_));                                \
            check_failed_now = 1;                                             \
        }                                                                     \
    } while (0)

/* A library call returning 0 / -1 with an err_t. */
#define CT_OK(call, errp)                                                     \
    do {                                                                      \
        if ((call) != 0) {                                                    \
            printf("  %s:%d: %s failed: %s\n", __FILE__, __LINE__, #call,     \
                   (errp)->msg);                                              \
            check_failed_now = 1;                                             \
        }                                                                     \
    } while (0)

typedef struct ct_rng { uint64_t s; } ct_rng_t;

static inline uint64_t ct_next(ct_rng_t *r)
{
    r->s ^= r->s << 13;
    r->s ^= r->s >> 7;
    r->s ^= r->s << 17;
    return r->s;
}

/* Uniform in [lo, hi). */
static inline float ct_unif(ct_rng_t *r, float lo, float hi)
{
    return lo + (hi - lo) * (float)((ct_next(r) >> 40) * (1.0 / 16777216.0));
}

static inline void ct_fill_fp16(ct_rng_t *r, uint16_t *p, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++) p[i] = f32_to_fp16(ct_unif(r, lo, hi));
}

/* 1 when a CUDA device is usable; otherwise prints why (once) and returns 0:
 * every GPU test then fails rather than passing vacuously. */
static inline int ct_have_gpu(void)
{
    static int known = -1;
    if (known < 0) {
        int n = 0;
        cudaError_t e = cudaGetDeviceCount(&n);
        known = e == cudaSuccess && n > 0;
        if (!known)
            printf("  no CUDA device: %s\n", e != cudaSuccess ? cudaGetErrorString(e) : "count 0");
    }
    if (!known) check_failed_now = 1;
    return known;
}

static inline void *ct_upload(const void *h, size_t bytes)
{
    void *d = NULL;
    CT_CUDA(cudaMalloc(&d, bytes ? bytes : 1));
    if (d && bytes) CT_CUDA(cudaMemcpy(d, h, bytes, cudaMemcpyHostToDevice));
    return d;
}

static inline void ct_download(void *h, const void *d, size_t bytes)
{
    CT_CUDA(cudaDeviceSynchronize());
    CT_CUDA(cudaMemcpy(h, d, bytes, cudaMemcpyDeviceToHost));
}

static inline int ct_isfinite16(uint16_t h) { return (h & 0x7c00u) != 0x7c00u; }

#endif
