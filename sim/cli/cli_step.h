/* cli_step — the `specsim step` subcommand (command line only;
 * sim/cli/main.c dispatches to it, argv[0] = "step"). Prints the CSV on
 * stdout, usage and errors itself; returns the exit status (0 ok, 1 runtime
 * failure, 2 bad usage or card).
 */
#ifndef SPECSIM_CLI_STEP_H
#define SPECSIM_CLI_STEP_H

int cli_step(int argc, char **argv);

#endif
