/* calibrate — the CLI: `calibrate --device cpu|cuda --model CARD ...` writes
 * a calibration table; `calibrate --bench` compares GEMV kernels;
 * `calibrate --version` prints the version and git commit (also recorded in
 * every table it writes). Exit status: 0 ok, 1 runtime failure, 2 bad usage
 * or bad card. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <gsl/gsl_errno.h>

#include "calibrate.h"
#include "calibrate_cuda.h"
#include "version.h"

/* The table is written (caltable_save) to a new OUT.tmp, then renamed onto
 * OUT: both are tried now, so that a bad path fails before a measurement of
 * minutes, not after it. OUT.tmp is created only when it does not exist
 * (an existing file of that name is the user's and is never touched), and
 * removed again. 0, or -1 with err. */
static int check_out(const char *out, err_t *err)
{
    if (!out[0]) return 0;   /* standard output */
    struct stat st;
    if (stat(out, &st) == 0 && S_ISDIR(st.st_mode))
        return err_set(err, ERR_INPUT, "calibrate: --out %s: is a directory", out);
    size_t n = strlen(out);
    char *tmp = malloc(n + 5);
    if (!tmp) return err_set(err, ERR_RUNTIME, "calibrate: out of memory");
    memcpy(tmp, out, n);
    memcpy(tmp + n, ".tmp", 5);
    FILE *f = fopen(tmp, "wx");
    int rc = 0;
    if (!f && errno == EEXIST) {
        rc = err_set(err, ERR_INPUT, "calibrate: --out %s: %s already exists (the "
                     "table is written there first); remove it or choose another --out",
                     out, tmp);
    } else if (!f) {
        rc = err_set(err, ERR_INPUT, "calibrate: --out %s: cannot write %s: %s", out, tmp,
                     strerror(errno));
    } else {
        int bad = fclose(f) != 0;
        if (remove(tmp) != 0 || bad)
            rc = err_set(err, ERR_RUNTIME, "calibrate: --out %s: cannot create and "
                         "remove %s: %s", out, tmp, strerror(errno));
    }
    free(tmp);
    return rc;
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
    if (!a.bench && check_out(a.out, &err) != 0) {
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
    int rc = a.bench ? calibrate_bench(&a, stdout, &err) : calibrate_cpu(&a, stderr, &err);
    if (rc != 0) {
        fprintf(stderr, "%s\n", err.msg);
        return err.code ? err.code : 1;
    }
    return 0;
}
