#include "rt.h"

#include <errno.h>
#include <math.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/prctl.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "base/wallclock.h"

/* The timer's tag in the epoll set; fds use their own tags below it. */
#define RT_TIMER_TAG UINT32_MAX

int rt_init(rt_t *rt, double start, const volatile sig_atomic_t *stop, err_t *err)
{
    memset(rt, 0, sizeof *rt);
    rt->start = start;
    rt->stop = stop;
    rt->ep = epoll_create1(EPOLL_CLOEXEC);
    rt->tfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
    if (rt->ep < 0 || rt->tfd < 0) {
        rt_fini(rt);
        return err_set(err, ERR_RUNTIME, "testbed: epoll/timerfd: %s", strerror(errno));
    }
    /* Best effort: without it timers fire up to 50 us late on average. */
    (void)prctl(PR_SET_TIMERSLACK, 1000UL, 0, 0, 0);
    return rt_watch(rt, rt->tfd, RT_TIMER_TAG, err);
}

void rt_fini(rt_t *rt)
{
    if (rt->ep >= 0) close(rt->ep);
    if (rt->tfd >= 0) close(rt->tfd);
    rt->ep = rt->tfd = -1;
}

double rt_now(const rt_t *rt)
{
    return wallclock_s() - rt->start;
}

int rt_watch(rt_t *rt, int fd, uint32_t tag, err_t *err)
{
    struct epoll_event ev = {.events = EPOLLIN, .data.u32 = tag};
    if (epoll_ctl(rt->ep, EPOLL_CTL_ADD, fd, &ev) != 0)
        return err_set(err, ERR_RUNTIME, "testbed: epoll_ctl: %s", strerror(errno));
    return 0;
}

/* Arms the timer at run time t (absolute CLOCK_MONOTONIC: the clock of
 * wallclock_s, in which rt->start is given). */
static int arm(rt_t *rt, double t, err_t *err)
{
    double abs_t = rt->start + t;
    struct itimerspec its = {{0, 0}, {0, 0}};
    its.it_value.tv_sec = (time_t)floor(abs_t);
    its.it_value.tv_nsec = (long)((abs_t - floor(abs_t)) * 1e9);
    if (its.it_value.tv_nsec >= 1000000000L) its.it_value.tv_nsec = 999999999L;
    /* An all-zero value would disarm it: time 0 of the clock is long past. */
    if (its.it_value.tv_sec == 0 && its.it_value.tv_nsec == 0) its.it_value.tv_nsec = 1;
    if (timerfd_settime(rt->tfd, TFD_TIMER_ABSTIME, &its, NULL) != 0)
        return err_set(err, ERR_RUNTIME, "testbed: timerfd_settime: %s", strerror(errno));
    return 0;
}

/* Hands the inputs epoll reported to on_input (the timer's tick is only
 * consumed). */
static int dispatch(rt_t *rt, const struct epoll_event *evs, int n, rt_input_fn on_input,
                    void *ctx, err_t *err)
{
    for (int k = 0; k < n; k++) {
        if (evs[k].data.u32 == RT_TIMER_TAG) {
            uint64_t x;
            (void)!read(rt->tfd, &x, sizeof x);
            continue;
        }
        if (on_input(ctx, evs[k].data.u32, err)) return -1;
    }
    return 0;
}

/* Runs the earliest event, due by now, with the clock read just before. */
static int step(rt_t *rt, engine_t *e, double due, double now, err_t *err)
{
    double late = now - due;
    rt->late_sum += late;
    if (late > rt->late_max) rt->late_max = late;
    rt->steps++;
    if (engine_step(e, now) >= 0) return 0;
    if (!err->msg[0]) err_set(err, ERR_RUNTIME, "testbed: event failed at t=%g s", now);
    return -1;
}

/* Before each due event the sockets are polled (without waiting), so that
 * input which arrived while the process was busy enters the engine before
 * an event that would act on the queue without it (an iteration's end
 * starting the next batch). */
int rt_run(rt_t *rt, engine_t *e, double end, rt_input_fn on_input, void *ctx,
           err_t *err)
{
    struct epoll_event evs[64];
    for (;;) {
        if (rt->stop && *rt->stop) return err_set(err, ERR_RUNTIME, "testbed: interrupted");
        double now = rt_now(rt);
        if (now >= end) return 0;
        double next = engine_next_time(e);
        int due = next <= now;
        if (!due && arm(rt, next < end ? next : end, err)) return -1;
        int n = epoll_wait(rt->ep, evs, 64, due ? 0 : -1);
        if (n < 0 && errno != EINTR)
            return err_set(err, ERR_RUNTIME, "testbed: epoll_wait: %s", strerror(errno));
        if (n > 0 && dispatch(rt, evs, n, on_input, ctx, err)) return -1;
        if (!due) continue;
        now = rt_now(rt);
        if (now >= end) return 0;
        if (step(rt, e, next, now, err)) return -1;
    }
}
