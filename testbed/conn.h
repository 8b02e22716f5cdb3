/* conn — one TCP connection carrying wire frames (testbed/wire.h): whole
 * frames out, frames in as their bytes arrive.
 *
 * Writes block until the frame is in the kernel (frames are small and both
 * ends read all the time, so they never wait long; a watched connection's
 * wait ends when its peer stalls, testbed/xio.h); reads never block: the
 * event loop calls conn_fill when epoll says the socket is readable, then
 * takes the complete frames with conn_next.
 */
#ifndef TESTBED_CONN_H
#define TESTBED_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"
#include "wire.h"
#include "xio.h"

#define CONN_BUF (4 * WIRE_FRAME_MAX)

typedef struct conn {
    int fd;                 /* -1 = closed */
    size_t len;             /* bytes buffered */
    int eof;                /* the peer closed its side */
    xio_watch_t *watch;     /* the peer a blocked send watches, or NULL:
                             * the send waits as long as it takes */
    uint8_t buf[CONN_BUF];
} conn_t;

/* A TCP socket connected to 127.0.0.1:port (the verifier's), or -1 with
 * err. A connection the listener does not take at once (its backlog full)
 * is waited for as long as watch (not NULL) says its peer is alive. */
int conn_dial(int port, xio_watch_t *watch, err_t *err);
/* Takes fd (a connected TCP socket): sets TCP_NODELAY and non-blocking
 * reads; no watch. 0, or -1 with err. */
int conn_init(conn_t *c, int fd, err_t *err);
void conn_close(conn_t *c);
/* Closes and frees each of conn[0..n) (each malloc'd, NULL = none), then
 * the array itself; the edge's and the verifier's per-tenant connections. */
void conn_free_all(conn_t **conn, int n);
/* Sends m whole. 0, or -1 with err (peer gone: with a watch "testbed: WHO
 * hung up"; a write error; or c->watch says the peer stalled while the
 * frame waited for room). */
int conn_send(conn_t *c, const wire_msg_t *m, err_t *err);
/* Reads what the socket holds. 0 (c->eof set when the peer closed or
 * reset the connection), or -1 with err on a read error. */
int conn_fill(conn_t *c, err_t *err);
/* The next complete frame: 1 with *m, 0 when none is complete, -1 with
 * err when the bytes are not a frame. */
int conn_next(conn_t *c, wire_msg_t *m, err_t *err);
/* Blocks until one whole frame has arrived (the hello handshake): 0, or -1
 * with err (closed, bad frame, interrupted). */
int conn_recv(conn_t *c, wire_msg_t *m, err_t *err);

#endif
