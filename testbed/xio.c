#include "xio.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

int xio_write(int fd, const void *buf, size_t n, err_t *err)
{
    const char *p = buf;
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR) continue;
        if (w <= 0) return err_set(err, ERR_RUNTIME, "testbed: pipe write: %s",
                                   w < 0 ? strerror(errno) : "nothing written");
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int xio_read(int fd, void *buf, size_t n, const volatile sig_atomic_t *stop,
             err_t *err)
{
    char *p = buf;
    while (n > 0) {
        ssize_t r = read(fd, p, n);
        if (r < 0 && errno == EINTR && !(stop && *stop)) continue;
        /* ^C: say so, not "Interrupted system call". */
        if (r < 0 && errno == EINTR)
            return err_set(err, ERR_RUNTIME, "testbed: stopped by signal %d (%s)",
                           (int)*stop, strsignal((int)*stop));
        if (r < 0) return err_set(err, ERR_RUNTIME, "testbed: pipe read: %s", strerror(errno));
        /* What became of the verifier is its parent's to say (it knows the
         * pid): xio_eof tells it this is the case. */
        if (r == 0) return err_set(err, ERR_RUNTIME, "%s", XIO_EOF_MSG);
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

void xio_describe_exit(err_t *err, int status)
{
    size_t n = strlen(err->msg);
    char *p = err->msg + n;
    size_t room = sizeof err->msg - n;
    if (WIFSIGNALED(status))
        snprintf(p, room, ": it was killed by signal %d (%s)", WTERMSIG(status),
                 strsignal(WTERMSIG(status)));
    else if (WIFEXITED(status) && WEXITSTATUS(status) != 0)
        snprintf(p, room, ": it exited with status %d (its message is above)",
                 WEXITSTATUS(status));
    else if (WIFEXITED(status))
        snprintf(p, room, ": it exited normally");
}
