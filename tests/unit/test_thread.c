/* test_thread — sim/base/thread.h: a thread from thread_create starts with
 * the termination signals blocked and its creator's mask is left as it was;
 * outfile (sim/io/outfile.h) catches exactly those signals, so the two sets
 * cannot drift apart (issue 24: sweep workers used to take them unblocked). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <unistd.h>

#include "base/thread.h"
#include "check.h"
#include "io/outfile.h"

static void *read_mask(void *arg)
{
    sigset_t *m = arg;
    pthread_sigmask(SIG_BLOCK, NULL, m);
    return NULL;
}

static void test_blocked_in_thread_only(void)
{
    sigset_t before, after, in_thread;
    sigemptyset(&in_thread);
    CHECK(pthread_sigmask(SIG_SETMASK, NULL, &before) == 0);
    pthread_t th;
    CHECK(thread_create(&th, read_mask, &in_thread) == 0);
    CHECK(pthread_join(th, NULL) == 0);
    CHECK(pthread_sigmask(SIG_SETMASK, NULL, &after) == 0);
    for (int i = 0; i < THREAD_NSIGNALS; i++) {
        int sig = thread_signals[i];
        CHECK(sigismember(&in_thread, sig) == 1);
        CHECK(sigismember(&after, sig) == sigismember(&before, sig));
        CHECK(sigismember(&after, sig) == 0);
    }
    /* Nothing else is blocked: a crash (SIGSEGV) still reports. */
    CHECK(sigismember(&in_thread, SIGSEGV) == 0);
    CHECK(sigismember(&in_thread, SIGUSR1) == sigismember(&before, SIGUSR1));
}

/* outfile installs its handler, with its first temporary, on the signals
 * the threads block, and on no other. */
static void test_outfile_catches_the_same(void)
{
    char dir[] = "/tmp/test_thread.XXXXXX";
    CHECK(mkdtemp(dir) != NULL);
    char path[64];
    snprintf(path, sizeof path, "%s/o.csv", dir);
    /* A shell starts a background job with SIGINT and SIGQUIT ignored, and
     * outfile rightly leaves an inherited SIG_IGN alone: start from the
     * defaults, as a command run from a terminal does. */
    for (int i = 0; i < THREAD_NSIGNALS; i++) signal(thread_signals[i], SIG_DFL);
    outfile_t o;
    err_t err = {0};
    CHECK(outfile_open(&o, path, &err) == 0);
    for (int i = 0; i < THREAD_NSIGNALS; i++) {
        struct sigaction sa;
        CHECK(sigaction(thread_signals[i], NULL, &sa) == 0);
        CHECK(sa.sa_handler != SIG_DFL && sa.sa_handler != SIG_IGN);
    }
    struct sigaction usr;
    CHECK(sigaction(SIGUSR1, NULL, &usr) == 0);
    CHECK(usr.sa_handler == SIG_DFL);
    outfile_abort(&o);
    rmdir(dir);
}

int main(void)
{
    RUN(test_blocked_in_thread_only);
    RUN(test_outfile_catches_the_same);
    return check_done();
}
