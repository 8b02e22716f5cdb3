/* wallclock — the monotonic clock in seconds (see wallclock.h). */
#include "base/wallclock.h"

#include <time.h>

double wallclock_s(void)
{
    struct timespec ts;
    /* Not checked: clock_gettime fails only for an unknown clock (Linux
     * always has CLOCK_MONOTONIC) or a bad pointer (ts is on the stack). */
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}
