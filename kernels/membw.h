/* membw — the memory read-bandwidth ceiling, measured STREAM-style: every
 * thread of a gemv context streams its share of a buffer much larger than the
 * last-level cache, reducing it so no load can be elided.
 *
 * Two ceilings: one sequential stream per thread (the classic STREAM read),
 * and several streams per thread read in lockstep (MEMBW_STREAMS). A single
 * stream per core leaves memory-level parallelism unused on server cores
 * (the hardware prefetcher follows a few streams per core at once): on this
 * project's 2-core Xeon the multi-stream read is about 10 % faster, and a
 * kernel that streams several weight rows at once can reach it. */
#ifndef SPECSIM_MEMBW_H
#define SPECSIM_MEMBW_H

#include <stddef.h>

#include "base/err.h"
#include "gemv.h"

/* Streams per thread of the multi-stream ceiling (calibration tables record
 * it as ceilings.read_streams). */
#define MEMBW_STREAMS 4

/* Best (STREAM convention: the fastest of `reps` passes, after one warm-up
 * pass that also faults the pages in) read rate over `bytes`, in GB/s
 * (1e9 B/s), with `streams` (1..16) sequential streams read in lockstep by
 * each chunk of work. -1 on allocation failure or a bad stream count. */
double membw_read_streams_gbs(gemv_ctx_t *c, size_t bytes, int streams, int reps, err_t *err);

/* One read pass over buf[0..bytes) (64-byte aligned) with `streams`
 * (1..16) streams per chunk of work, 4 chunks per thread: the same reading
 * as the ceiling, for timing beside a kernel over the same bytes. */
void membw_read_pass(gemv_ctx_t *c, const void *buf, size_t bytes, int streams);

/* membw_read_streams_gbs with one stream per thread. */
double membw_read_gbs(gemv_ctx_t *c, size_t bytes, int reps, err_t *err);

#endif
