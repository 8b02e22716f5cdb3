/* cli_roofline — the `specsim roofline` subcommand (command line only;
 * sim/cli/main.c dispatches to it, argv[0] = "roofline"). Prints the CSV on
 * stdout, usage and errors itself; returns the exit status (0 ok, 1 runtime
 * failure, 2 bad usage or scenario).
 */
#ifndef SPECSIM_CLI_ROOFLINE_H
#define SPECSIM_CLI_ROOFLINE_H

int cli_roofline(int argc, char **argv);

#endif
