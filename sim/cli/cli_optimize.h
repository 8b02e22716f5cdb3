/* cli_optimize — the `specsim optimize` subcommand (command line only,
 * sim/cli/main.c dispatches to it; argv[0] is the subcommand's name). The search
 * is the library's (sim/run/optimize.h); this prints the best point, the
 * frontier and the CSV of every evaluated point, and returns the exit
 * status: 0 ok, 1 runtime failure or no point meets the constraints, 2 bad
 * usage or bad scenario / optimize section.
 */
#ifndef SPECSIM_CLI_OPTIMIZE_H
#define SPECSIM_CLI_OPTIMIZE_H

int cli_optimize(int argc, char **argv);

#endif
