#include "conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

/* Waits until the connection in progress on fd is made or refused: 0, or
 * -1 with err (fd left to the caller). */
static int connected(int fd, int port, xio_watch_t *watch, err_t *err)
{
    if (watch) xio_watch_start(watch);
    for (;;) {
        struct pollfd p = {fd, POLLOUT, 0};
        int k = poll(&p, 1, watch ? xio_watch_ms(watch) : 1000);
        if (k > 0) break;
        if (k < 0 && errno != EINTR)
            return err_set(err, ERR_RUNTIME, "testbed: poll: %s", strerror(errno));
        if (k == 0 && watch && xio_watch_check(watch, err) != 0) return -1;
    }
    int so = 0;
    socklen_t len = sizeof so;
    if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &so, &len) != 0) so = errno;
    if (so != 0)
        return err_set(err, ERR_RUNTIME, "testbed: connect to the verifier (port %d): %s",
                       port, strerror(so));
    return 0;
}

int conn_dial(int port, xio_watch_t *watch, err_t *err)
{
    struct sockaddr_in a = {.sin_family = AF_INET,
                            .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
                            .sin_port = htons((uint16_t)port)};
    /* Non-blocking: a connection that waits is polled, and the poll gives
     * up on a stalled verifier (a blocking connect waits for the kernel's
     * SYN retries, two minutes). */
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) return err_set(err, ERR_RUNTIME, "testbed: socket: %s", strerror(errno));
    int rc = connect(fd, (struct sockaddr *)&a, sizeof a);
    if (rc != 0 && (errno == EINPROGRESS || errno == EINTR))
        rc = connected(fd, port, watch, err);
    else if (rc != 0)
        rc = err_set(err, ERR_RUNTIME, "testbed: connect to the verifier (port %d): %s", port,
                     strerror(errno));
    if (rc == 0) return fd;
    close(fd);
    return -1;
}

int conn_init(conn_t *c, int fd, err_t *err)
{
    c->fd = fd;
    c->len = 0;
    c->eof = 0;
    c->watch = NULL;
    int one = 1;
    int fl = fcntl(fd, F_GETFL);
    if (setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one) != 0 || fl < 0 ||
        fcntl(fd, F_SETFL, fl | O_NONBLOCK) != 0)
        return err_set(err, ERR_RUNTIME, "testbed: socket options: %s", strerror(errno));
    return 0;
}

void conn_close(conn_t *c)
{
    if (c->fd >= 0) close(c->fd);
    c->fd = -1;
}

void conn_free_all(conn_t **conn, int n)
{
    for (int i = 0; conn && i < n; i++) {
        if (conn[i]) conn_close(conn[i]);
        free(conn[i]);
    }
    free(conn);
}

/* Writes all of buf; the socket is non-blocking for reads, so a full send
 * buffer waits in poll, and with a watch no longer than its peer shows
 * signs of life. */
static int write_all(int fd, const uint8_t *buf, size_t n, xio_watch_t *watch,
                     err_t *err)
{
    int waiting = 0;   /* since the last byte sent */
    while (n > 0) {
        ssize_t w = send(fd, buf, n, MSG_NOSIGNAL);
        if (w > 0) {
            buf += w;
            n -= (size_t)w;
            waiting = 0;
            continue;
        }
        if (w < 0 && errno == EINTR) continue;
        /* The peer is gone: a watched one is named (its parent says how it
         * ended, testbed/xio.h). */
        if (w < 0 && watch && (errno == EPIPE || errno == ECONNRESET))
            return err_set(err, ERR_RUNTIME, "testbed: %s hung up", watch->who);
        if (w < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
            if (watch && !waiting++) xio_watch_start(watch);
            struct pollfd p = {fd, POLLOUT, 0};
            int k = poll(&p, 1, watch ? xio_watch_ms(watch) : 1000);
            if (k < 0 && errno != EINTR)
                return err_set(err, ERR_RUNTIME, "testbed: poll: %s", strerror(errno));
            if (k == 0 && watch && xio_watch_check(watch, err) != 0) return -1;
            continue;
        }
        return err_set(err, ERR_RUNTIME, "testbed: send: %s",
                       w < 0 ? strerror(errno) : "connection closed");
    }
    return 0;
}

int conn_send(conn_t *c, const wire_msg_t *m, err_t *err)
{
    uint8_t buf[WIRE_FRAME_MAX];
    size_t n = wire_encode(m, buf, sizeof buf);
    if (n == 0) return err_set(err, ERR_RUNTIME, "testbed: message kind %d cannot be "
                               "encoded", m->kind);
    return write_all(c->fd, buf, n, c->watch, err);
}

int conn_fill(conn_t *c, err_t *err)
{
    while (c->len < CONN_BUF) {
        ssize_t r = recv(c->fd, c->buf + c->len, CONN_BUF - c->len, 0);
        if (r > 0) {
            c->len += (size_t)r;
            continue;
        }
        /* A peer that closed with data unread resets the connection
         * instead: gone all the same. */
        if (r == 0 || errno == ECONNRESET) {
            c->eof = 1;
            return 0;
        }
        if (errno == EINTR) continue;
        if (errno == EAGAIN || errno == EWOULDBLOCK) return 0;
        return err_set(err, ERR_RUNTIME, "testbed: recv: %s", strerror(errno));
    }
    return 0;
}

int conn_next(conn_t *c, wire_msg_t *m, err_t *err)
{
    size_t used = 0;
    int rc = wire_decode(c->buf, c->len, m, &used);
    if (rc < 0) return err_set(err, ERR_RUNTIME, "testbed: malformed frame from peer");
    if (rc == 0) return 0;
    memmove(c->buf, c->buf + used, c->len - used);
    c->len -= used;
    return 1;
}

int conn_recv(conn_t *c, wire_msg_t *m, err_t *err)
{
    for (;;) {
        int rc = conn_next(c, m, err);
        if (rc != 0) return rc < 0 ? -1 : 0;
        if (c->eof) return err_set(err, ERR_RUNTIME, "testbed: peer closed the connection");
        struct pollfd p = {c->fd, POLLIN, 0};
        int n = poll(&p, 1, 5000);
        if (n < 0) return err_set(err, ERR_RUNTIME, "testbed: poll: %s", strerror(errno));
        if (n == 0) return err_set(err, ERR_RUNTIME, "testbed: peer silent for 5 s");
        if (conn_fill(c, err)) return -1;
    }
}
