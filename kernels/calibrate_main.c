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
#include "model/cards.h"
#include "base/version.h"

/* The table is written by caltable_save (sim/io/outfile.h's rules): a path it
 * would refuse, a directory where its temporary cannot be created, or one of
 * the files the run reads or writes fails now, before a measurement of
 * minutes, not after it. The card is compared as both drivers open it
 * (cards_resolve_path: a path not found here is looked for under the specsim
 * root), so a table aimed at the card found there is caught too; with
 * --device cuda so is the --log CSV it appends to (given, or its default
 * beside --out). 0, or -1 with err. */
static int check_out(const calibrate_args_t *a, err_t *err)
{
    err_t e = {0, ""};
    /* outfile_probe's message starts with the path: say which option it is.
     * outfile_distinct's names both options itself ("--model M and --out O
     * are the same file"): "--out " before it read "--out --model M". */
    if (a->out[0] && outfile_probe(a->out, &e) != 0)
        return err_set(err, ERR_INPUT, "calibrate: --out %s", e.msg);
    char card[1024], log[1024];
    if (cards_resolve_path(a->model, card, sizeof card) != 0)
        snprintf(card, sizeof card, "%s", a->model);  /* refused later, by name */
    const char *log_path = NULL, *log_what = "--log";
    if (!strcmp(a->device, "cuda") && a->log[0]) {
        log_path = a->log;
    } else if (!strcmp(a->device, "cuda") && a->out[0] &&
               calibrate_cuda_log_path(a->out, log, sizeof log) == 0) {
        log_path = log;
        log_what = "the default --log";
    }
    const outfile_role_t r[] = {{card, "--model", 0},
                                {a->out[0] ? a->out : NULL, "--out", 1},
                                {log_path, log_what, 1}};
    if (outfile_distinct(r, 3, &e) != 0) return err_set(err, ERR_INPUT, "calibrate: %s", e.msg);
    return 0;
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
