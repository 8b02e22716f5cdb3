/* cugemm — the FP16 linear layers of the verify step through cuBLAS.
 *
 * Y[t][n] = X[t][k]·W[n][k]ᵀ with W, X, Y row-major fp16 and fp32
 * accumulation (CUBLAS_COMPUTE_32F). In cuBLAS's column-major terms that is
 * the N×T result of Wᵀ (op T on a K×N matrix) times X (K×T): the weights are
 * the MMA's M side and the tokens its N side, so a small token count fills the
 * narrow side of the tile rather than wasting the wide one.
 *
 * Two paths: cugemm_ex (cublasGemmEx, default algorithm) and a plan
 * (cublasLt) holding up to CUGEMM_MAX_ALGOS heuristic candidates for one
 * shape, any of which can be run, so calibration can time each and keep the
 * fastest per shape.
 */
#ifndef SPECSIM_CUGEMM_CUH
#define SPECSIM_CUGEMM_CUH

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_fp16.h>

extern "C" {
#include "base/err.h"
}

#define CUGEMM_MAX_ALGOS 8
#define CUGEMM_WORKSPACE ((size_t)32 << 20)

typedef struct cugemm {
    cublasHandle_t h;
    cublasLtHandle_t lt;
    void *ws;            /* device workspace, CUGEMM_WORKSPACE bytes */
    cudaStream_t st;     /* the stream h was last bound to (valid if st_set) */
    int st_set;
} cugemm_t;

typedef struct cugemm_plan {
    int t, n, k;
    cublasLtMatmulDesc_t op;
    cublasLtMatrixLayout_t a, b, c;
    int nalgo;           /* candidates returned by the heuristic */
    cublasLtMatmulHeuristicResult_t algo[CUGEMM_MAX_ALGOS];
} cugemm_plan_t;

/* Handles and workspace. Release with cugemm_fini (also after a failed
 * init). The cuBLAS handle gets the math mode
 * CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION and the cublasLt
 * heuristic is limited to split-K schemes that reduce in the fp32 compute
 * type: by default both may sum split-K partials in fp16 (the output type),
 * which is not fp32 accumulation and breaks the error bound the tests
 * derive. 0 or -1. */
int cugemm_init(cugemm_t *g, err_t *err);
void cugemm_fini(cugemm_t *g);

/* cublasGemmEx with CUBLAS_GEMM_DEFAULT on stream st. 0 or -1. Binds the
 * handle to st only when st changes, re-setting the workspace each time
 * (cublasSetStream resets it to cuBLAS's default pool). */
int cugemm_ex(cugemm_t *g, const __half *w, const __half *x, __half *y, int t,
              int n, int k, cudaStream_t st, err_t *err);

/* Descriptors and heuristic candidates for shape (t, n, k). Release with
 * cugemm_plan_fini. 0, or -1 (also when the heuristic returns nothing) with
 * everything already released. */
int cugemm_plan_init(cugemm_t *g, cugemm_plan_t *p, int t, int n, int k, err_t *err);
void cugemm_plan_fini(cugemm_plan_t *p);
/* Runs candidate `which` (0..nalgo−1) of the plan. 0 or -1. */
int cugemm_plan_run(cugemm_t *g, const cugemm_plan_t *p, int which, const __half *w,
                    const __half *x, __half *y, cudaStream_t st, err_t *err);

#endif
