/* calibrate — the CLI: `calibrate --device cpu|cuda --model CARD ...` writes
 * a calibration table; `calibrate --bench` compares GEMV kernels. Exit
 * status: 0 ok, 1 runtime failure, 2 bad usage or bad card. */
#include <stdio.h>
#include <string.h>

#include "calibrate.h"
#include "calibrate_cuda.h"

int main(int argc, char **argv)
{
    calibrate_args_t a;
    err_t err = {0, ""};
    if (calibrate_parse_args(argc, argv, &a, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return err.code ? err.code : 2;
    }
    if (a.help) {
        calibrate_usage(stdout);
        return 0;
    }
    if (!strcmp(a.device, "cuda")) {
#if SPECSIM_HAVE_CUDA
        return calibrate_cuda_run(argc, argv);
#else
        fprintf(stderr, "calibrate: --device cuda: built without CUDA (no nvcc at build time)\n");
        return 2;
#endif
    }
    int rc = a.bench ? calibrate_bench(&a, stdout, &err) : calibrate_cpu(&a, stderr, &err);
    if (rc != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return err.code ? err.code : 1;
    }
    return 0;
}
