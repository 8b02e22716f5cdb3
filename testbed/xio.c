#include "xio.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/wallclock.h"

/* The state letter of /proc/PID/stat and its CPU ticks (user + system).
 * 0, or -1 when the process cannot be read (gone, or no /proc). */
static int proc_stat(pid_t pid, char *state, unsigned long long *cpu)
{
    char path[64], buf[1024];
    snprintf(path, sizeof path, "/proc/%ld/stat", (long)pid);
    FILE *f = fopen(path, "r");
    if (!f) return -1;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = 0;
    /* "PID (COMM) S PPID ...": COMM may hold spaces and parentheses, the
     * fields after its last ')' do not; utime and stime are the 12th and
     * 13th of them. */
    const char *p = strrchr(buf, ')');
    unsigned long long ut, st;
    if (!p || sscanf(p + 1, " %c %*s %*s %*s %*s %*s %*s %*s %*s %*s %*s %llu %llu",
                     state, &ut, &st) != 3)
        return -1;
    *cpu = ut + st;
    return 0;
}

static const char *state_name(char s)
{
    switch (s) {
    case 'R': return "running";
    case 'S': return "sleeping";
    case 'D': return "waiting for the disk";
    case 'T': return "stopped";
    case 't': return "stopped by a debugger";
    case 'Z': return "exited, not reaped";
    default: return "unknown";
    }
}

void xio_watch_start(xio_watch_t *w)
{
    char state;
    w->since = wallclock_s();
    if (w->pid <= 0 || proc_stat(w->pid, &state, &w->cpu) != 0) w->cpu = 0;
}

int xio_watch_ms(const xio_watch_t *w)
{
    int ms = w->stall_s < 4 ? (int)(250 * w->stall_s) : 1000;
    return ms > 0 ? ms : 1;
}

int xio_watch_check(xio_watch_t *w, err_t *err)
{
    char state = '?';
    unsigned long long cpu = 0;
    int known = w->pid > 0 && proc_stat(w->pid, &state, &cpu) == 0;
    if (known && cpu != w->cpu) xio_watch_start(w);   /* at work */
    if (wallclock_s() - w->since < w->stall_s) return 0;
    if (!known)
        return err_set(err, ERR_RUNTIME, "testbed: %s did nothing for %g s (no data) while "
                       "the fleet waited for %s: given up", w->who, w->stall_s, w->what);
    return err_set(err, ERR_RUNTIME, "testbed: %s (pid %ld, state %c: %s) did nothing for "
                   "%g s (no data, no CPU) while the fleet waited for %s: given up", w->who,
                   (long)w->pid, state, state_name(state), w->stall_s, w->what);
}

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
             xio_watch_t *watch, err_t *err)
{
    char *p = buf;
    if (watch) xio_watch_start(watch);
    while (n > 0) {
        /* With a watch: short waits, each followed by a look at the
         * writer. */
        int polled = 0;   /* poll failed: errno is its */
        if (watch) {
            struct pollfd pf = {fd, POLLIN, 0};
            int k = poll(&pf, 1, xio_watch_ms(watch));
            if (k == 0) {
                if (xio_watch_check(watch, err) != 0) return -1;
                continue;
            }
            polled = k < 0;
        }
        ssize_t r = polled ? -1 : read(fd, p, n);
        if (r < 0 && errno == EINTR && !(stop && *stop)) continue;
        /* ^C: say so, not "Interrupted system call". */
        if (r < 0 && errno == EINTR)
            return err_set(err, ERR_RUNTIME, "testbed: stopped by signal %d (%s)",
                           (int)*stop, strsignal((int)*stop));
        if (r < 0) return err_set(err, ERR_RUNTIME, "testbed: pipe %s: %s",
                                  polled ? "poll" : "read", strerror(errno));
        /* What became of the verifier is its parent's to say (it knows the
         * pid): xio_eof tells it this is the case. */
        if (r == 0) return err_set(err, ERR_RUNTIME, "%s", XIO_EOF_MSG);
        p += r;
        n -= (size_t)r;
        if (watch) xio_watch_start(watch);
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
