/* A listening TCP socket on an ephemeral port of 127.0.0.1, the testbed's
 * transport, for the tests that connect to one (test_tb_rt, test_tb_xio).
 * Header-only: one test includes it once. */
#ifndef TCPLISTEN_H
#define TCPLISTEN_H

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

/* Listens with the given backlog; *a gets the address (its port filled).
 * The fd, or -1. */
static inline int tcp_listen(int backlog, struct sockaddr_in *a)
{
    *a = (struct sockaddr_in){.sin_family = AF_INET,
                              .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t len = sizeof *a;
    int l = socket(AF_INET, SOCK_STREAM, 0);
    if (l >= 0 && (bind(l, (struct sockaddr *)a, sizeof *a) || listen(l, backlog) ||
                   getsockname(l, (struct sockaddr *)a, &len))) {
        close(l);
        return -1;
    }
    return l;
}

#endif
