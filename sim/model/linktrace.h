/* linktrace — the recorded traces a time-varying link replays
 * (`tenants.network.trace`, `uplink_trace`, `downlink_trace`;
 * docs/formats.md "Link trace CSV" and "Mahimahi link traces").
 *
 * Two formats:
 *
 * - A CSV with the header `t_s,rtt_ms,up_mbps,down_mbps,up`: each row holds
 *   the link's round trip, uplink and downlink rates (Mbit/s, `inf` for
 *   unlimited) and state (1 up, 0 down) from its time until the next row's.
 *   The first row is at 0; times increase; the last row gives only its time
 *   (`60` or `60,,,,`): the trace's length, after which it repeats.
 * - Mahimahi's delivery-opportunity format (mm-link): one integer
 *   millisecond timestamp per line, each one chance to deliver one MTU
 *   (LINKTRACE_MTU bytes); timestamps do not decrease; the file repeats with
 *   the last timestamp as its period, as mm-link replays it.
 *
 * Errors are ERR_INPUT "FILE:LINE:COL: KEY: what (got '...')", KEY the
 * scenario key that named the file, so one line says where to look.
 */
#ifndef SPECSIM_LINKTRACE_H
#define SPECSIM_LINKTRACE_H

#include "base/err.h"

#define LINKTRACE_MTU 1500.0                 /* bytes per Mahimahi opportunity */
#define LINKTRACE_MAX_BYTES ((size_t)256 << 20)

/* The CSV: n segments, segment k from t[k] to t[k+1] (t[n] = period). */
typedef struct linktrace {
    double *t;           /* [n + 1], s; t[0] = 0, t[n] = period */
    double *rtt;         /* [n], s */
    double *bps[2];      /* [n] each: uplink, downlink bits/s; INFINITY unlimited */
    unsigned char *up;   /* [n]: 1 up, 0 down */
    int n;
    double period;       /* s, > 0 */
} linktrace_t;

/* A Mahimahi file: opportunity k at t[k] + m·period, m = 0, 1, ... */
typedef struct linkopp {
    double *t;           /* [n], s, not decreasing */
    long n;
    double period;       /* s: the last timestamp, > 0 */
} linkopp_t;

struct infiles;

/* Read path through the command's files (NULL: from disk); key names the
 * scenario key in messages. NULL with err set on failure. */
linktrace_t *linktrace_read_csv(struct infiles *files, const char *path,
                                const char *key, err_t *err);
linkopp_t *linktrace_read_mahimahi(struct infiles *files, const char *path,
                                   const char *key, err_t *err);
void linktrace_free(linktrace_t *t);
void linkopp_free(linkopp_t *o);

#endif
