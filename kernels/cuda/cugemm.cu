/* cugemm — see cugemm.cuh. */
#include "cugemm.cuh"

#include <string.h>

#include "cucheck.cuh"

int cugemm_init(cugemm_t *g, err_t *err)
{
    memset(g, 0, sizeof *g);
    CUBLAS_TRY(cublasCreate(&g->h));
    CUBLAS_TRY(cublasLtCreate(&g->lt));
    CU_TRY(cudaMalloc(&g->ws, CUGEMM_WORKSPACE));
    CUBLAS_TRY(cublasSetWorkspace(g->h, g->ws, CUGEMM_WORKSPACE));
    CUBLAS_TRY(cublasSetMathMode(g->h, (cublasMath_t)(CUBLAS_DEFAULT_MATH |
                                                      CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    return 0;
}

void cugemm_fini(cugemm_t *g)
{
    if (g->h) CU_IGNORE(cublasDestroy(g->h));
    if (g->lt) CU_IGNORE(cublasLtDestroy(g->lt));
    if (g->ws) CU_IGNORE(cudaFree(g->ws));
    memset(g, 0, sizeof *g);
}

int cugemm_ex(cugemm_t *g, const __half *w, const __half *x, __half *y, int t,
              int n, int k, cudaStream_t st, err_t *err)
{
    const float alpha = 1.f, beta = 0.f;
    if (!g->st_set || g->st != st) {
        /* cublasSetStream puts the handle back on cuBLAS's default
         * workspace pool: bind ours again. */
        CUBLAS_TRY(cublasSetStream(g->h, st));
        CUBLAS_TRY(cublasSetWorkspace(g->h, g->ws, CUGEMM_WORKSPACE));
        g->st = st;
        g->st_set = 1;
    }
    CUBLAS_TRY(cublasGemmEx(g->h, CUBLAS_OP_T, CUBLAS_OP_N, n, t, k, &alpha, w,
                            CUDA_R_16F, k, x, CUDA_R_16F, k, &beta, y, CUDA_R_16F,
                            n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
    return 0;
}

void cugemm_plan_fini(cugemm_plan_t *p)
{
    if (p->op) CU_IGNORE(cublasLtMatmulDescDestroy(p->op));
    if (p->a) CU_IGNORE(cublasLtMatrixLayoutDestroy(p->a));
    if (p->b) CU_IGNORE(cublasLtMatrixLayoutDestroy(p->b));
    if (p->c) CU_IGNORE(cublasLtMatrixLayoutDestroy(p->c));
    memset(p, 0, sizeof *p);
}

/* Column-major view of Y[t][n] = X[t][k]·W[n][k]ᵀ: C (n×t, ld n) =
 * op_T(A: W as k×n, ld k) · B (X as k×t, ld k); tokens on the N side. */
static int plan_setup(cugemm_t *g, cugemm_plan_t *p, int t, int n, int k, err_t *err)
{
    cublasOperation_t ta = CUBLAS_OP_T, tb = CUBLAS_OP_N;
    CUBLAS_TRY(cublasLtMatmulDescCreate(&p->op, CUBLAS_COMPUTE_32F, CUDA_R_32F));
    CUBLAS_TRY(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSA, &ta, sizeof ta));
    CUBLAS_TRY(cublasLtMatmulDescSetAttribute(p->op, CUBLASLT_MATMUL_DESC_TRANSB, &tb, sizeof tb));
    CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->a, CUDA_R_16F, k, n, k));
    CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->b, CUDA_R_16F, k, t, k));
    CUBLAS_TRY(cublasLtMatrixLayoutCreate(&p->c, CUDA_R_16F, n, t, n));

    cublasLtMatmulPreference_t pref = NULL;
    size_t ws = CUGEMM_WORKSPACE;
    /* Split-K only with partials reduced in fp32 (NONE, 0, is always
     * allowed): INPLACE and OUTPUT_TYPE would sum them in fp16. */
    uint32_t schemes = CUBLASLT_REDUCTION_SCHEME_COMPUTE_TYPE;
    CUBLAS_TRY(cublasLtMatmulPreferenceCreate(&pref));
    cublasStatus_t s = cublasLtMatmulPreferenceSetAttribute(
        pref, CUBLASLT_MATMUL_PREF_MAX_WORKSPACE_BYTES, &ws, sizeof ws);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulPreferenceSetAttribute(pref, CUBLASLT_MATMUL_PREF_REDUCTION_SCHEME_MASK,
                                                 &schemes, sizeof schemes);
    if (s == CUBLAS_STATUS_SUCCESS)
        s = cublasLtMatmulAlgoGetHeuristic(g->lt, p->op, p->a, p->b, p->c, p->c, pref,
                                           CUGEMM_MAX_ALGOS, p->algo, &p->nalgo);
    CU_IGNORE(cublasLtMatmulPreferenceDestroy(pref));
    CUBLAS_TRY(s);
    /* Keep only candidates the heuristic marked usable, in its order. */
    int kept = 0;
    for (int i = 0; i < p->nalgo; i++)
        if (p->algo[i].state == CUBLAS_STATUS_SUCCESS) p->algo[kept++] = p->algo[i];
    p->nalgo = kept;
    if (p->nalgo < 1)
        return err_set(err, ERR_RUNTIME, "%s:%d: cublasLt heuristic found no algorithm "
                       "for t=%d n=%d k=%d", __FILE__, __LINE__, t, n, k);
    return 0;
}

int cugemm_plan_init(cugemm_t *g, cugemm_plan_t *p, int t, int n, int k, err_t *err)
{
    memset(p, 0, sizeof *p);
    p->t = t; p->n = n; p->k = k;
    if (plan_setup(g, p, t, n, k, err)) {
        cugemm_plan_fini(p);
        return -1;
    }
    return 0;
}

int cugemm_plan_run(cugemm_t *g, const cugemm_plan_t *p, int which, const __half *w,
                    const __half *x, __half *y, cudaStream_t st, err_t *err)
{
    const float alpha = 1.f, beta = 0.f;
    if (which < 0 || which >= p->nalgo)
        return err_set(err, ERR_INPUT, "cugemm_plan_run: algorithm %d of %d", which,
                       p->nalgo);
    CUBLAS_TRY(cublasLtMatmul(g->lt, p->op, &alpha, w, p->a, x, p->b, &beta, y, p->c,
                              y, p->c, &p->algo[which].algo, g->ws, CUGEMM_WORKSPACE, st));
    return 0;
}
