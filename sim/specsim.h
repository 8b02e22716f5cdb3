/* specsim.h — libspecsim's one public header.
 *
 * A program that embeds the simulator includes this and links
 * build/libspecsim.a, which exports exactly the functions marked
 * SPECSIM_API in the headers below (sim/base/api.h says how); every other
 * function of the library is private to it, and a program that calls one
 * fails to link. build/specsim's command line (sim/cli/) is such a
 * program. The typical sequence (sim/cli/main.c does it):
 *
 *   scenario_load   a scenario file with --set overrides (overrides_add)
 *   sim_run         its replications, summarised   (or analytic_compute,
 *                   sweep_run, optimize_run)
 *   output_summary  the summary as text            (or output_json)
 *   scenario_fini
 *
 * Errors come back in err_t: code ERR_INPUT (exit status 2; the message
 * gives FILE:LINE:COL and the key) or ERR_RUNTIME. docs/design.md
 * ("Layers") places these headers in the library's structure.
 */
#ifndef SPECSIM_SPECSIM_H
#define SPECSIM_SPECSIM_H

#include "base/api.h"
#include "base/err.h"
#include "base/units.h"
#include "base/version.h"
#include "base/wallclock.h"
#include "config/overrides.h"
#include "config/scenario.h"
#include "config/sweepspec.h"
#include "io/infile.h"
#include "io/outfile.h"
#include "io/trace.h"
#include "run/analytic.h"
#include "run/compare.h"
#include "run/optimize.h"
#include "run/output.h"
#include "run/pool.h"
#include "run/roofline.h"
#include "run/sim.h"
#include "run/step.h"
#include "run/sweep.h"
#include "run/sweepfile.h"
#include "stat/metrics.h"

#endif
