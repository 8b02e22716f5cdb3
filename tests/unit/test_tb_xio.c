/* The testbed's pipe reads (testbed/xio.h) when the other side is gone or
 * the user interrupts (issue 28 item 13): the end of the pipe says the
 * verifier stopped early, and its parent adds how it ended, from the
 * waitpid status (a verifier killed by a signal printed nothing, so the
 * old "see its message above" pointed at nothing); a read interrupted by
 * a signal that sets the stop flag names the signal instead of printing
 * "Interrupted system call". */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "xio.h"

static void test_end_of_pipe(void)
{
    int p[2];
    CHECK(pipe(p) == 0);
    CHECK(xio_write(p[1], "ab", 2, NULL) == 0);
    close(p[1]);
    char buf[4];
    err_t err = {0, ""};
    CHECK(xio_read(p[0], buf, 4, NULL, &err) == -1);
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
    CHECK(xio_read(p[0], buf, 4, &stop, &err) == -1);
    CHECK(strstr(err.msg, "testbed: stopped by signal 14") != NULL);
    CHECK(strstr(err.msg, "Interrupted system call") == NULL);
    close(p[0]);
    close(p[1]);
}

int main(void)
{
    RUN(test_end_of_pipe);
    RUN(test_describe_exit);
    RUN(test_interrupted);
    return check_done();
}
