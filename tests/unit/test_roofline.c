/* Tests of `specsim roofline` (roofline_cli): the bounds are computed by
 * hand from the H200 and LLaMA-2-7B cards below, not taken from the code. */
#include <fcntl.h>
#include <unistd.h>

#include "check.h"
#include "roofline.h"

/* Runs roofline_cli with stdout captured into out (NUL-terminated). */
static int capture(int argc, char **argv, char *out, size_t n)
{
    char tmp[] = "/tmp/test_roofline.XXXXXX";
    int fd = mkstemp(tmp);
    if (fd < 0) return -1;
    fflush(stdout);
    int saved = dup(1);
    dup2(fd, 1);
    int rc = roofline_cli(argc, argv);
    fflush(stdout);
    dup2(saved, 1);
    close(saved);
    lseek(fd, 0, SEEK_SET);
    ssize_t r = read(fd, out, n - 1);
    out[r > 0 ? r : 0] = '\0';
    close(fd);
    unlink(tmp);
    return rc;
}

static void test_bounds_by_hand(void)
{
    static char buf[1 << 16];
    char *argv[] = {"roofline", "scenarios/paper/roofline.yaml", "--points", "20",
                    "--b-max", "256", NULL};
    CHECK(capture(6, argv, buf, sizeof buf) == 0);
    char *line = strtok(buf, "\n");
    CHECK_STR(line, "batch,m,context,time_s,memory_s,compute_s,overhead_s,datasheet_s");
    int rows = 0, last_b = 0;
    double last_t = 0;
    while ((line = strtok(NULL, "\n")) != NULL) {
        int b, m, ctx;
        double t, mem, comp, ovh, ds;
        if (sscanf(line, "%d,%d,%d,%lf,%lf,%lf,%lf,%lf", &b, &m, &ctx, &t, &mem,
                   &comp, &ovh, &ds) != 8) { CHECK(0); break; }
        rows++;
        CHECK(b > last_b && b <= 256);
        CHECK(m == 5 * b);          /* gamma 4: blocks of 5 tokens */
        CHECK(ctx == 512);
        CHECK(t >= last_t);         /* more tokens never take less time */
        /* Each bound leaves out the other resource: a lower bound. */
        CHECK(mem <= ds * (1 + 1e-12) && comp <= ds * (1 + 1e-12));
        CHECK_REL(ovh, 0.5e-3, 1e-12);  /* cloud.overhead default */
        if (b == 1) {
            /* Weights: 32 layers x (4096x12288 qkv + 4096x4096 o +
             * 4096x22016 gate_up + 11008x4096 down) = 6,476,005,376 fp16
             * weights = 12.952 GB at 4.8 TB/s x 0.8 = 3.3729 ms; KV: 512
             * tokens x 2 x 32 x 4096 x 2 B = 268.4 MB = 0.0699 ms; plus
             * 0.5 ms overhead = 3.9428 ms (activations left out: < 1%). */
            CHECK_REL(mem, 3.9428e-3, 0.01);
            /* FLOPs: 2 x 5 x 6.476e9 = 6.476e10 at 989.5 TFLOPS x 0.6 =
             * 0.1091 ms; attention 4 x 5 x 512 x 4096 x 32 = 1.34e9 -> 0.0023
             * ms; plus 0.5 ms = 0.6114 ms. */
            CHECK_REL(comp, 0.6114e-3, 0.01);
        }
        last_b = b;
        last_t = t;
    }
    CHECK(rows >= 15 && last_b == 256);
}

static void test_usage_errors(void)
{
    static char buf[4096];
    char *a1[] = {"roofline", "--b-max", "0", "x.yaml", NULL};
    CHECK(capture(4, a1, buf, sizeof buf) == 2);
    char *a2[] = {"roofline", NULL};
    CHECK(capture(1, a2, buf, sizeof buf) == 2);
    char *a3[] = {"roofline", "scenarios/paper/roofline.yaml", "--set",
                  "cloud.gpux=1", NULL};
    CHECK(capture(4, a3, buf, sizeof buf) == 2);
}

int main(void)
{
    RUN(test_bounds_by_hand);
    RUN(test_usage_errors);
    return check_done();
}
