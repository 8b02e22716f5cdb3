/* world — builds one replication (sim/entity/repl.h: the edge and cloud-side
 * state of every tenant, the cloud, the engine), routes each event to the
 * module or the tenant's protocol that handles it, runs it to the
 * scenario's duration, and frees it. No globals: several worlds may run on
 * different threads at once.
 */
#ifndef SPECSIM_WORLD_H
#define SPECSIM_WORLD_H

#include <stdint.h>

#include "base/err.h"
#include "entity/repl.h"
#include "stat/tally.h"
#include "io/trace.h"

typedef struct world world_t;

/* Builds replication `rep` of sh->s. sh, tally (reset by the caller) and
 * trace are borrowed. Returns NULL with err filled; free with world_free(). */
world_t *world_create(const repl_shared_t *sh, int rep, tally_t *tally,
                      trace_t *trace, err_t *err);
/* Runs to s->duration and closes the books. Returns 0 or -1 with err. */
int world_run(world_t *w);
uint64_t world_events(const world_t *w);
void world_free(world_t *w);

#endif
