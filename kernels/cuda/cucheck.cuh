/* cucheck — error checking for every CUDA runtime and cuBLAS call.
 *
 * Library code never prints or exits (common rules): a failing call fills the
 * caller's err_t with "FILE:LINE: call: reason" and the enclosing function
 * returns -1. The macros therefore need an `err_t *err` in scope and a
 * function returning int. Kernel launches are checked with CU_LAUNCH_CHECK,
 * which reads cudaGetLastError() (launch configuration errors); faults inside
 * a kernel surface at the next synchronising call, which is itself checked.
 */
#ifndef SPECSIM_CUCHECK_CUH
#define SPECSIM_CUCHECK_CUH

#include <cublasLt.h>
#include <cublas_v2.h>
#include <cuda_runtime.h>

extern "C" {
#include "base/err.h"
}

#define CU_TRY(call)                                                          \
    do {                                                                      \
        cudaError_t cu_e_ = (call);                                           \
        if (cu_e_ != cudaSuccess)                                             \
            return err_set(err, ERR_RUNTIME, "%s:%d: %s: %s", __FILE__,       \
                           __LINE__, #call, cudaGetErrorString(cu_e_));       \
    } while (0)

#define CUBLAS_TRY(call)                                                      \
    do {                                                                      \
        cublasStatus_t cb_s_ = (call);                                        \
        if (cb_s_ != CUBLAS_STATUS_SUCCESS)                                   \
            return err_set(err, ERR_RUNTIME, "%s:%d: %s: %s (%d)", __FILE__,  \
                           __LINE__, #call, cublasGetStatusName(cb_s_),       \
                           (int)cb_s_);                                       \
    } while (0)

#define CU_LAUNCH_CHECK() CU_TRY(cudaGetLastError())

/* For calls whose failure is already handled by an earlier error (cleanup
 * paths): the status is deliberately ignored. */
#define CU_IGNORE(call) ((void)(call))

#endif
