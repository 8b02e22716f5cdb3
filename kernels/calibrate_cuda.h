/* calibrate_cuda — the CUDA half of build/calibrate, implemented under
 * kernels/cuda/ and linked only when nvcc exists.
 *
 * calibrate_main.c parses nothing for CUDA: on `--device cuda` it hands the
 * whole command line over, so the CUDA side owns its options, its progress
 * line and its table. The declaration is unconditional (nvcc does not see
 * -DSPECSIM_HAVE_CUDA); only the call is guarded by SPECSIM_HAVE_CUDA.
 * Shared with the CPU driver, from C or C++: the linear shapes (shapes.h),
 * the provenance strings (calprov.h) and the one table writer
 * (caltable_save, sim/model/caltable.h).
 */
#ifndef SPECSIM_CALIBRATE_CUDA_H
#define SPECSIM_CALIBRATE_CUDA_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* argc/argv exactly as main() received them (argv[0] included). Returns the
 * process exit status: 0 ok, 1 runtime failure, 2 bad usage or bad card. */
int calibrate_cuda_run(int argc, char **argv);

/* The --log CSV's default beside the table out (FILE.yaml -> FILE.csv, any
 * other name gets .csv added) into buf (n bytes). 0, or -1 when it does not
 * fit. Defined in calibrate.c, so that calibrate_main.c checks the log the
 * CUDA side will append to against the card and the table, with or
 * without CUDA. */
int calibrate_cuda_log_path(const char *out, char *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif
