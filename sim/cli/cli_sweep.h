/* cli_sweep — the `specsim sweep` and `specsim merge` subcommands (command
 * line only, sim/cli/main.c dispatches to them; argv[0] is the subcommand's
 * name). They print their usage, progress and errors and return the exit
 * status: 0 ok, 1 runtime failure, 2 bad usage or bad scenario / sweep spec.
 */
#ifndef SPECSIM_CLI_SWEEP_H
#define SPECSIM_CLI_SWEEP_H

int cli_sweep(int argc, char **argv);
int cli_merge(int argc, char **argv);

#endif
