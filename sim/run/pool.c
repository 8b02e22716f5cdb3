/* pool — the thread budget and its split (see pool.h). */
#define _GNU_SOURCE   /* sched_getaffinity, CPU_COUNT; before any header */
#include "run/pool.h"

#include <sched.h>
#include <unistd.h>

/* The CPUs this process may run on (a Slurm allocation or a container's
 * cpuset may grant fewer than the machine has online), else the online
 * count: more threads than that would only take turns. */
long pool_cores(void)
{
    cpu_set_t set;
    if (sched_getaffinity(0, sizeof set, &set) == 0 && CPU_COUNT(&set) > 0)
        return CPU_COUNT(&set);
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
