/* roofline — `specsim roofline SCENARIO`: the cloud verify iteration time
 * against batch tokens M from the service model, beside its memory and
 * compute bounds, and the measured points of a calibration table (the data
 * of the verify-time figure).
 *
 * Entry point for the CLI (sim/main.c dispatches `specsim roofline ...`;
 * argv[0] = "roofline"). Prints CSV on stdout; returns the exit status
 * (0 ok, 1 runtime failure, 2 bad usage or scenario).
 */
#ifndef SPECSIM_ROOFLINE_H
#define SPECSIM_ROOFLINE_H

int roofline_cli(int argc, char **argv);

#endif
