/* calibrate — the CLI: `calibrate --device cpu|cuda --model CARD ...` writes
 * a calibration table; `calibrate --bench` compares GEMV kernels;
 * `calibrate --version` prints the version and git commit (also recorded in
 * every table it writes). Exit status: 0 ok, 1 runtime failure, 2 bad usage
 * or bad card. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <gsl/gsl_errno.h>

#include "calibrate.h"
#include "calibrate_cuda.h"
#include "io/outfile.h"
#include "base/version.h"

/* The table is written by caltable_save (sim/io/outfile.h's rules): a path it
 * would refuse, a directory where its temporary cannot be created, or the
 * card itself fails now, before a measurement of minutes, not after it. 0,
 * or -1 with err. */
static int check_out(const calibrate_args_t *a, err_t *err)
{
    if (!a->out[0]) return 0;   /* standard output */
    err_t e = {0, ""};
    const outfile_role_t r[] = {{a->model, "--model", 0}, {a->out, "--out", 1}};
    if (outfile_probe(a->out, &e) == 0 && outfile_distinct(r, 2, &e) == 0) return 0;
    return err_set(err, ERR_INPUT, "calibrate: --out %s", e.msg);
}

int main(int argc, char **argv)
{
    calibrate_args_t a;
    err_t err = {0, ""};
    gsl_set_error_handler_off();   /* errors come back as values, never abort */
    if (calibrate_parse_args(argc, argv, &a, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return err.code ? err.code : 2;
    }
    if (a.version)
        return printf("calibrate %s\n", version_build()) < 0 || fflush(stdout) ? 1 : 0;
    if (a.help) {
        calibrate_usage(stdout);
        return 0;
    }
    if (!a.bench && check_out(&a, &err) != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return err.code;
    }
    if (!strcmp(a.device, "cuda")) {
#if SPECSIM_HAVE_CUDA
        return calibrate_cuda_run(argc, argv);
#else
        fprintf(stderr, "calibrate: --device cuda: built without CUDA (no nvcc at build time)\n");
        return 2;
#endif
    }
    int rc = a.bench ? calibrate_bench(&a, stdout, &err)
                     : calibrate_cpu(&a, a.quiet ? NULL : stderr, &err);
    if (rc != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return err.code ? err.code : 1;
    }
    return 0;
}
