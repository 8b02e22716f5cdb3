/* The testbed's pipe reads (testbed/xio.h) when the other side is gone or
 * the user interrupts (issue 28 item 13): the end of the pipe says the
 * verifier stopped early, and its parent adds how it ended, from the
 * waitpid status (a verifier killed by a signal printed nothing, so the
 * old "see its message above" pointed at nothing); a read interrupted by
 * a signal that sets the stop flag names the signal instead of printing
 * "Interrupted system call"; and a wait on a writer that stalls (stopped
 * by SIGSTOP: no data, no CPU) ends after the watch's stall time with its
 * pid and state named, where the testbed waited forever, while one that
 * sends slowly or computes for longer than that is waited for. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "base/wallclock.h"
#include "check.h"
#include "conn.h"
#include "tcplisten.h"
#include "xio.h"

static void test_end_of_pipe(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(xio_write(p[1], "ab", 2, NULL) == 0);
    close(p[1]);
    char buf[4];
    err_t err = {0, ""};
    CHECK(xio_read(p[0], buf, 4, NULL, NULL, &err) == -1);
    CHECK(strcmp(err.msg, XIO_EOF_MSG) == 0);
    close(p[0]);
}

/* The status of a child that did what `how` says. */
static int child_status(int how)
{
    pid_t pid = fork();
    if (pid == 0) {
        if (how == 0) _exit(3);
        if (how == 1) _exit(0);
        raise(SIGKILL);
        _exit(9);
    }
    int status = 0;
    while (waitpid(pid, &status, 0) < 0) {}
    return status;
}

static void test_describe_exit(void)
{
    err_t err = {0, ""};
    err_set(&err, ERR_RUNTIME, "%s", XIO_EOF_MSG);
    xio_describe_exit(&err, child_status(2));
    CHECK(strstr(err.msg, "the verifier stopped early: it was killed by signal 9") != NULL);
    err_set(&err, ERR_RUNTIME, "%s", XIO_EOF_MSG);
    xio_describe_exit(&err, child_status(0));
    CHECK(strstr(err.msg, ": it exited with status 3 (its message is above)") != NULL);
    err_set(&err, ERR_RUNTIME, "%s", XIO_EOF_MSG);
    xio_describe_exit(&err, child_status(1));
    CHECK(strstr(err.msg, ": it exited normally") != NULL);
}

static volatile sig_atomic_t stop;

static void on_alarm(int sig)
{
    stop = sig;
}

static void test_interrupted(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_alarm;   /* no SA_RESTART: the read returns EINTR */
    CHECK(sigemptyset(&sa.sa_mask) == 0 && sigaction(SIGALRM, &sa, NULL) == 0);
    alarm(1);
    char buf[4];
    err_t err = {0, ""};
    CHECK(xio_read(p[0], buf, 4, &stop, NULL, &err) == -1);
    CHECK(strstr(err.msg, "testbed: stopped by signal 14") != NULL);
    CHECK(strstr(err.msg, "Interrupted system call") == NULL);
    close(p[0]);
    close(p[1]);
}

/* A child that stops itself (SIGSTOP) at once, as a verifier stopped
 * from outside is: it moves no data and uses no CPU. Returns once it is
 * stopped. */
static pid_t stopped_child(void)
{
    pid_t pid = fork();
    if (pid == 0) {
        raise(SIGSTOP);
        _exit(0);
    }
    int status = 0;
    while (waitpid(pid, &status, WUNTRACED) < 0) {}
    CHECK(WIFSTOPPED(status));
    return pid;
}

static void end_child(pid_t pid)
{
    kill(pid, SIGKILL);
    while (waitpid(pid, NULL, 0) < 0) {}
}

/* Reading from a stopped writer: given up after the stall time (0.5 s
 * here, XIO_STALL_S in the testbed), naming its pid, state and the wait. */
static void test_watch_stopped(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = stopped_child();
    xio_watch_t w = {.pid = pid, .who = "the verifier", .what = "its tally", .stall_s = 0.5};
    char buf[4], want[160];
    err_t err = {0, ""};
    double t0 = wallclock_s();
    CHECK(xio_read(p[0], buf, 4, NULL, &w, &err) == -1);
    double took = wallclock_s() - t0;
    CHECK(took >= 0.5 && took < 5);
    snprintf(want, sizeof want, "testbed: the verifier (pid %ld, state T: stopped) did "
             "nothing for 0.5 s (no data, no CPU) while the fleet waited for its tally: "
             "given up", (long)pid);
    CHECK(strcmp(err.msg, want) == 0);
    if (strcmp(err.msg, want) != 0) printf("  %s\n", err.msg);
    end_child(pid);
    close(p[0]);
    close(p[1]);
}

/* A writer that sends a byte every 0.2 s for 1.6 s, or computes for 2.5 s
 * before it sends, is waited for past a stall time of 1 s: each byte, and
 * each CPU tick it uses, is a sign of life. */
static void test_watch_alive(void)
{
    for (int busy = 0; busy < 2; busy++) {
        int p[2];
        CHECK(pipe(p) == 0);
        pid_t pid = fork();
        if (pid == 0) {
            close(p[0]);
            double t0 = wallclock_s();
            for (int k = 0; k < 8; k++) {
                if (busy) {
                    while (wallclock_s() - t0 < 2.5) {}
                } else {
                    usleep(200000);
                }
                if (write(p[1], "x", 1) != 1) _exit(1);
            }
            _exit(0);
        }
        close(p[1]);
        xio_watch_t w = {.pid = pid, .who = "the verifier", .what = "its tally", .stall_s = 1};
        char buf[8];
        err_t err = {0, ""};
        CHECK(xio_read(p[0], buf, 8, NULL, &w, &err) == 0);
        if (err.msg[0]) printf("  %s: %s\n", busy ? "busy" : "slow", err.msg);
        end_child(pid);
        close(p[0]);
    }
}

/* A frame that waits for room in a socket whose reader is stopped: given up
 * after the stall time, not waited on forever. */
static void test_send_watch_stopped(void)
{
    int sp[2];
    CHECK(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK, 0, sp) == 0);
    pid_t pid = stopped_child();
    xio_watch_t w = {.pid = pid, .who = "the verifier", .what = "it to take a frame",
                     .stall_s = 0.5};
    conn_t c = {.fd = sp[0], .watch = &w};
    uint32_t ids[4] = {1, 2, 3, 4};
    wire_msg_t m = {.kind = WIRE_BLOCK, .gamma = 4, .ids = ids};
    err_t err = {0, ""};
    int rc = 0;
    double t0 = wallclock_s();
    for (long k = 0; k < 10000000 && rc == 0; k++) rc = conn_send(&c, &m, &err);
    CHECK(rc == -1 && wallclock_s() - t0 < 10);
    CHECK(strstr(err.msg, "state T: stopped) did nothing for 0.5 s (no data, no CPU) while "
                          "the fleet waited for it to take a frame") != NULL);
    end_child(pid);
    close(sp[0]);
    close(sp[1]);
}

/* A connection to a listener whose process is stopped and whose backlog
 * is full: the SYN is dropped, and a blocking connect waited for the
 * kernel's retries (two minutes, then "Connection timed out"); the dial
 * gives up after the stall time, naming the wait. The first connections
 * fill the backlog (listen(fd, 0) holds one or two). */
static void test_dial_watch_stopped(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    pid_t pid = fork();
    if (pid == 0) {
        struct sockaddr_in a;
        if (tcp_listen(0, &a) < 0) _exit(1);
        int port = ntohs(a.sin_port);
        if (write(p[1], &port, sizeof port) != sizeof port) _exit(1);
        raise(SIGSTOP);
        _exit(0);
    }
    int port = 0, status = 0;
    CHECK(read(p[0], &port, sizeof port) == sizeof port);
    while (waitpid(pid, &status, WUNTRACED) < 0) {}
    CHECK(WIFSTOPPED(status));
    xio_watch_t w = {.pid = pid, .who = "the verifier", .what = "it to accept a connection",
                     .stall_s = 0.5};
    err_t err = {0, ""};
    int fds[8], n = 0, fd = 0;
    double t0 = wallclock_s();
    while (n < 8 && (fd = conn_dial(port, &w, &err)) >= 0) fds[n++] = fd;
    CHECK(fd < 0 && n >= 1 && n < 8 && wallclock_s() - t0 < 10);
    CHECK(strstr(err.msg, "state T: stopped) did nothing for 0.5 s (no data, no CPU) while "
                          "the fleet waited for it to accept a connection") != NULL);
    if (fd >= 0 || !strstr(err.msg, "accept a connection")) printf("  %d: %s\n", n, err.msg);
    for (int k = 0; k < n; k++) close(fds[k]);
    end_child(pid);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    RUN(test_end_of_pipe);
    RUN(test_describe_exit);
    RUN(test_interrupted);
    RUN(test_watch_stopped);
    RUN(test_watch_alive);
    RUN(test_send_watch_stopped);
    RUN(test_dial_watch_stopped);
    return check_done();
}
