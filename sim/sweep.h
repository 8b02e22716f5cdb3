/* sweep — `specsim sweep` and `specsim merge`: run a scenario's `sweep:`
 * section point by point on a thread pool, append each finished point to a
 * CSV in point order, resume interrupted sweeps, shard across machines and
 * merge the shards back into the file an unsharded run writes.
 *
 * The CLI (sim/main.c) dispatches to these two entry points; argv[0] is the
 * subcommand name ("sweep" / "merge"). They print their own usage and errors
 * and return the process exit status: 0 ok, 1 runtime failure, 2 bad usage or
 * bad scenario / sweep spec.
 */
#ifndef SPECSIM_SWEEP_H
#define SPECSIM_SWEEP_H

int sweep_cli(int argc, char **argv);
int merge_cli(int argc, char **argv);

#endif
