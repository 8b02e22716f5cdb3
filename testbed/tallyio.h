/* tallyio — a tally's counts as a flat array of doubles, so that the
 * verifier process can hand what it counted (batches, queue delays,
 * acceptance, GPU busy time, downlink bytes) to the edge fleet, which adds
 * it to its own (commits, ITL, stalls) before the metrics are computed by
 * tally_finish, as one simulated replication's tally would be.
 *
 * The two tallies must come from sim_tally_create for the same scenario.
 * Every field is a sum or a histogram, and each event is counted by exactly
 * one process, so adding them gives the tally of the whole system.
 */
#ifndef TESTBED_TALLYIO_H
#define TESTBED_TALLYIO_H

#include <stddef.h>

#include "base/err.h"
#include "stat/tally.h"

/* The packed length of t (doubles). */
size_t tallyio_len(const tally_t *t);
/* Packs t into out (tallyio_len(t) doubles). */
void tallyio_pack(const tally_t *t, double *out);
/* Adds a packed tally of the same shape into t. 0, or -1 with err when
 * the shapes differ (t may then be partly updated). */
int tallyio_add(tally_t *t, const double *in, size_t n, err_t *err);

#endif
