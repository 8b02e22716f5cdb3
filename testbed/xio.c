#include "xio.h"

#include <errno.h>
#include <string.h>
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
        if (r < 0) return err_set(err, ERR_RUNTIME, "testbed: pipe read: %s", strerror(errno));
        if (r == 0) return err_set(err, ERR_RUNTIME, "testbed: the verifier stopped "
                                   "early (see its message above)");
        p += r;
        n -= (size_t)r;
    }
    return 0;
}
