/* wallclock — elapsed real time, in seconds, for everything that times
 * itself: a run's wall_s (sim/run/sim.c), sweep progress and the sweep file's
 * sync interval (sim/run/sweep.c, sim/cli/cli_sweep.c), kernel timings
 * (kernels/calibrate.c, kernels/membw.c, scripts/ggml-anchor.c) and the
 * testbed's wall-clock-paced engine (testbed/rt.c).
 *
 * The clock is CLOCK_MONOTONIC, and that is part of the contract: nothing
 * (NTP, `date`) steps it, so the difference of two readings is a true
 * duration; a single reading has an arbitrary origin, but the same one in
 * every process on the machine, which lets the testbed's two processes
 * agree on a run's start (testbed/wire.h, HELLO); and testbed/rt.c arms a
 * CLOCK_MONOTONIC timerfd at absolute times read from it.
 *
 * It lives in libspecsim.a because every binary links that library
 * (specsim alone links nothing else; libkernels.a and libtestbed.a already
 * depend on it).
 */
#ifndef SPECSIM_WALLCLOCK_H
#define SPECSIM_WALLCLOCK_H

#include "base/api.h"

/* Seconds on CLOCK_MONOTONIC since an arbitrary origin. */
SPECSIM_API double wallclock_s(void);

#endif
