/* membw — the memory read-bandwidth ceiling, measured STREAM-style: every
 * thread of a gemv context streams its share of a buffer much larger than the
 * last-level cache, reducing it so no load can be elided. */
#ifndef SPECSIM_MEMBW_H
#define SPECSIM_MEMBW_H

#include <stddef.h>

#include "err.h"
#include "gemv.h"

/* Best (STREAM convention: the fastest of `reps` passes, after one warm-up
 * pass that also faults the pages in) read rate over `bytes`, in GB/s
 * (1e9 B/s). -1 on allocation failure. */
double membw_read_gbs(gemv_ctx_t *c, size_t bytes, int reps, err_t *err);

#endif
