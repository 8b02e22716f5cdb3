/* calprov — provenance strings of a calibration table (sim/model/caltable.h):
 * the command line, the UTC date, the host name. Shared by the CPU driver
 * (calibrate.c) and the CUDA one (cuda/calibrate_cuda.cu), which fill a
 * caltable_t with them and write it with caltable_save. Plain C, usable from
 * nvcc code. Each writes a NUL-terminated string into buf (n > 0 bytes),
 * truncated to fit.
 */
#ifndef SPECSIM_CALPROV_H
#define SPECSIM_CALPROV_H

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* argv joined by spaces; words that are not shell-safe are single-quoted,
 * so the line can be pasted back into a shell to repeat the run. */
void calprov_command(int argc, char **argv, char *buf, size_t n);
/* Now, UTC, as 2026-11-29T15:02:11Z ("unknown" if the clock fails). */
void calprov_date_utc(char *buf, size_t n);
/* gethostname(), or "unknown". */
void calprov_host(char *buf, size_t n);

#ifdef __cplusplus
}
#endif

#endif
