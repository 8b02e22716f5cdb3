/* accstat — what a measured acceptance stream says, and the trace file the
 * simulator replays (docs/llm.md, "Measuring acceptance").
 *
 * A stream is one text's outcomes in the order the async protocol
 * evaluates drafts (kernels/llm/tforce.h): 1 accepted, 0 rejected. A block
 * of γ drafts starting at some outcome reads on until the first 0 (which
 * it consumes) or γ ones; the next block starts after it. Blocks do not
 * cross texts (a request ends its speculation), and a text's last block,
 * cut short by the text's end, is not counted in the block statistics.
 */
#ifndef SPECSIM_ACCSTAT_H
#define SPECSIM_ACCSTAT_H

#include <stdint.h>
#include <stdio.h>

#include "base/err.h"

typedef struct accstat_stream {
    const uint8_t *o;
    int n;
    const char *label;    /* written as a comment before its lines (may be NULL) */
} accstat_stream_t;

#define ACCSTAT_GMAX 16

typedef struct accstat {
    long outcomes, accepted;             /* over every stream */
    /* blocks of gamma: counts[gamma][a] of complete blocks with a accepted */
    long counts[ACCSTAT_GMAX + 1][ACCSTAT_GMAX + 1];
    /* maximal runs of 1s and of 0s within a stream, by length (the last
     * bin counts every run of at least ACCSTAT_RUNMAX) */
#define ACCSTAT_RUNMAX 64
    long run1[ACCSTAT_RUNMAX + 1], run0[ACCSTAT_RUNMAX + 1];
} accstat_t;

/* Fills s from the streams. */
void accstat_compute(const accstat_stream_t *st, int ns, accstat_t *s);
/* Complete blocks of gamma, and the acceptance of draft position i
 * (1..gamma) among them: P(accepted at i | reached i) = blocks with
 * a ≥ i over blocks with a ≥ i − 1 (NAN when none reached it);
 * accstat_reached: those blocks with a ≥ i − 1. */
long accstat_blocks(const accstat_t *s, int gamma);
double accstat_position(const accstat_t *s, int gamma, int i);
long accstat_reached(const accstat_t *s, int gamma, int i);

/* Writes the streams as an acceptance trace in the positions format
 * (docs/formats.md): the header lines given (each written after "# "),
 * then per stream a `# request: LABEL` line (the start of one request's
 * outcomes, for a replay per request) and one line per block of
 * outcomes ending at a 0 (the stream's trailing 1s on a last line). 0, or
 * -1 on a write error. */
int accstat_write_trace(FILE *f, const char *const *header, int nh, const accstat_stream_t *st,
                        int ns);

/* A per-position trace read back (accstat_read_trace): its streams, one per
 * `# request` line (outcomes before the first such line, if any, are a
 * stream of their own; a file without one is one stream), each line cut
 * after its first 0 as the simulator replays it; and the comment lines
 * before the first `# request` or data line other than the format
 * directive, without their "#" and leading blanks. */
typedef struct accstat_trace {
    accstat_stream_t *st;
    int ns;
    uint8_t *bits;       /* every stream's outcomes, one after another */
    char **label;        /* per stream: the text after "request" and ": " (may be "") */
    char **header;
    int nh;
} accstat_trace_t;

/* Reads a trace in the positions format (docs/formats.md, "Acceptance
 * trace files"). 0, or -1 with err "PATH:LINE: ..." (a per-block file, a
 * line that is not 0s and 1s, no outcome). */
int accstat_read_trace(const char *path, accstat_trace_t *t, err_t *err);
void accstat_trace_free(accstat_trace_t *t);

#endif
