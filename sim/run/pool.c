/* pool — the thread budget and its split (see pool.h). */
#include "run/pool.h"

#include <unistd.h>

long pool_cores(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? n : 1;
}

long pool_jobs(long jobs)
{
    return jobs > 0 ? jobs : pool_cores();
}

long pool_share(long jobs, size_t n, size_t k)
{
    if (jobs < 1 || n == 0 || (size_t)jobs <= n) return 1;
    long each = jobs / (long)n, extra = jobs % (long)n;
    return each + ((long)k < extra ? 1 : 0);
}
