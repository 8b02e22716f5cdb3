/* Tests of the sweep output files: resume scanning (torn tails, foreign
 * rows), merging and appending. Files are written by hand here, so expected
 * contents are known byte for byte. */
#include <fcntl.h>
#include <unistd.h>

#include "check.h"
#include "tmpdir.h"
#include "run/sweepfile.h"

static char *get(const char *name)
{
    static char buf[4096];
    FILE *f = fopen(path(name), "rb");
    if (!f) return NULL;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

/* A sidecar is a runnable sweep: rows are checked against its axes. */
#define SWEEP "sweep:\n  x: [1, 2, 3, 4]\n"
#define SIDE "# specsim sweep: points 4, id 0000000000000000\nseed: 1\n" SWEEP
#define HEAD "point,x,itl_mean_s\n"

static void test_sidecar_path(void)
{
    char p[64];
    CHECK(sweepfile_sidecar_path("a/b.csv", p, sizeof p) == 0);
    CHECK_STR(p, "a/b.scenario.yaml");
    CHECK(sweepfile_sidecar_path("out", p, sizeof p) == 0);
    CHECK_STR(p, "out.scenario.yaml");
    CHECK(sweepfile_sidecar_path("a/b.csv", p, 8) == -1);
    uint64_t n = 0;
    CHECK(sweepfile_sidecar_points(SIDE, &n) == 0 && n == 4);
    CHECK(sweepfile_sidecar_points("seed: 1\n", &n) == -1);
}

static void test_resume_truncates_torn_tail(void)
{
    put("r.scenario.yaml", SIDE);
    put("r.csv", HEAD "0,1,0.5\n1,2,0.25\n2,3,0.1");
    unsigned char done[4] = {0};
    uint64_t ndone = 9;
    int fresh = 7;
    err_t err = {0};
    CHECK(sweepfile_resume(path("r.csv"), SIDE, HEAD, 4, 0, 1, done, &ndone,
                           &fresh, &err) == 0);
    CHECK(fresh == 0 && ndone == 2);
    CHECK(done[0] == 1 && done[1] == 1 && done[2] == 0 && done[3] == 0);
    /* The torn "2,3,0.1" is gone; the complete rows stay byte for byte. */
    CHECK_STR(get("r.csv"), HEAD "0,1,0.5\n1,2,0.25\n");
}

static void test_resume_rejects(void)
{
    unsigned char done[4] = {0};
    uint64_t ndone;
    int fresh;
    err_t err = {0};
    put("f.scenario.yaml", SIDE);
    /* Point 9 is not in a 4-point sweep. */
    put("f.csv", HEAD "0,1,0.5\n9,2,0.25\n");
    CHECK(sweepfile_resume(path("f.csv"), SIDE, HEAD, 4, 0, 1, done, &ndone,
                           &fresh, &err) == -1 && err.code == ERR_INPUT);
    /* Point 0 does not belong to shard 1/2. */
    memset(done, 0, sizeof done);
    put("f.csv", HEAD "0,1,0.5\n");
    CHECK(sweepfile_resume(path("f.csv"), SIDE, HEAD, 4, 1, 2, done, &ndone,
                           &fresh, &err) == -1 && err.code == ERR_INPUT);
    /* Another sweep's header, then another sweep's sidecar. */
    memset(done, 0, sizeof done);
    put("f.csv", "point,y,itl_mean_s\n");
    CHECK(sweepfile_resume(path("f.csv"), SIDE, HEAD, 4, 0, 1, done, &ndone,
                           &fresh, &err) == -1 && err.code == ERR_INPUT);
    put("f.csv", HEAD);
    put("f.scenario.yaml", SIDE "seed: 2\n");
    CHECK(sweepfile_resume(path("f.csv"), SIDE, HEAD, 4, 0, 1, done, &ndone,
                           &fresh, &err) == -1 && err.code == ERR_INPUT);
    CHECK(strstr(err.msg, "different sweep") != NULL);
    /* No file, or not even a whole header: start over. */
    CHECK(sweepfile_resume(path("none.csv"), SIDE, HEAD, 4, 0, 1, done, &ndone,
                           &fresh, &err) == 0 && fresh == 1);
    put("f.csv", "point,x,itl");
    CHECK(sweepfile_resume(path("f.csv"), SIDE, HEAD, 4, 0, 1, done, &ndone,
                           &fresh, &err) == 0 && fresh == 1);
}

static void test_merge(void)
{
    err_t err = {0};
    put("p0.scenario.yaml", SIDE);
    /* Comment lines (the path it was resolved from) may differ. */
    put("p1.scenario.yaml", "# specsim sweep: points 4, id 0000000000000000\n"
        "# resolved from ../s.yaml\nseed: 1\n" SWEEP);
    put("p0.csv", HEAD "0,1,0.5\n2,3,0.1\n");
    /* A repeated identical row (point 2) is fine; the torn tail is ignored. */
    put("p1.csv", HEAD "1,2,0.25\n2,3,0.1\n3,4,0.05\n3,4");
    char p0[256], p1[256];   /* path() reuses its buffers: keep copies */
    snprintf(p1, sizeof p1, "%s", path("p1.csv"));
    snprintf(p0, sizeof p0, "%s", path("p0.csv"));
    const char *parts[] = {p1, p0};
    CHECK(sweepfile_merge(path("m.csv"), parts, 2, &err) == 0);
    CHECK_STR(get("m.csv"), HEAD "0,1,0.5\n1,2,0.25\n2,3,0.1\n3,4,0.05\n");
    CHECK_STR(get("m.scenario.yaml"), "# specsim sweep: points 4, id 0000000000000000\n"
              "# resolved from ../s.yaml\nseed: 1\n" SWEEP);   /* the first part's */
    /* Missing point 3. */
    put("p1.csv", HEAD "1,2,0.25\n");
    CHECK(sweepfile_merge(path("m2.csv"), parts, 2, &err) == -1 &&
          err.code == ERR_RUNTIME && strstr(err.msg, "1 of 4 points") != NULL);
    CHECK(access(path("m2.csv"), F_OK) != 0);
    /* The same point with different values. */
    put("p1.csv", HEAD "1,2,0.25\n2,3,0.2\n3,4,0.05\n");
    CHECK(sweepfile_merge(path("m2.csv"), parts, 2, &err) == -1 &&
          err.code == ERR_INPUT);
    /* Different sweeps. */
    put("p1.csv", HEAD "1,2,0.25\n3,4,0.05\n");
    put("p1.scenario.yaml", SIDE "seed: 2\n");
    CHECK(sweepfile_merge(path("m2.csv"), parts, 2, &err) == -1 &&
          err.code == ERR_INPUT);
}

/* Issue 14 item 11: a row is a row of the sweep only when every field
 * agrees — its axis values are those of its point, it has the header's
 * field count — and a resumed file holds the sweep's (or shard's) first
 * points in order. Old code looked at the point number alone. */
static void test_rows_checked(void)
{
    unsigned char done[4];
    uint64_t ndone;
    int fresh;
    err_t err = {0};
    static const char *const bad[] = {
        HEAD "0,1,0.5\n1,3,0.25\n",     /* x at point 1 is 2, not 3 */
        HEAD "0,1,0.5,9\n",              /* a field too many */
        HEAD "0,1\n",                    /* one too few */
        HEAD "1,2,0.25\n3,4,0.05\n",     /* shard 1/2's rows, resumed unsharded */
        HEAD "0,1,0.5\n0,1,0.5\n",       /* a point twice */
    };
    put("c.scenario.yaml", SIDE);
    for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
        memset(done, 0, sizeof done);
        put("c.csv", bad[i]);
        err.code = 0;
        CHECK(sweepfile_resume(path("c.csv"), SIDE, HEAD, 4, 0, 1, done, &ndone,
                               &fresh, &err) == -1 && err.code == ERR_INPUT);
        CHECK(strstr(err.msg, "c.csv:") != NULL);
        CHECK_STR(get("c.csv"), bad[i]);   /* left as it was */
    }
    /* The shard's own file resumes as shard 1/2. */
    memset(done, 0, sizeof done);
    put("c.csv", bad[3]);
    CHECK(sweepfile_resume(path("c.csv"), SIDE, HEAD, 4, 1, 2, done, &ndone,
                           &fresh, &err) == 0 && ndone == 2 && done[1] && done[3]);
    /* Merge checks the same fields (the order there is its own). */
    put("q0.scenario.yaml", SIDE);
    char q0[256];
    snprintf(q0, sizeof q0, "%s", path("q0.csv"));
    const char *parts[] = {q0};
    for (size_t i = 0; i < 3; i++) {
        put("q0.csv", bad[i]);
        err.code = 0;
        CHECK(sweepfile_merge(path("qm.csv"), parts, 1, &err) == -1 &&
              err.code == ERR_INPUT && strstr(err.msg, "q0.csv:") != NULL);
        CHECK(access(path("qm.csv"), F_OK) != 0);
    }
}

/* Issue 14 item 12: an axis value with a line break (or a comma, or a
 * quote) is written quoted (RFC 4180); the sweep reads such rows back on
 * resume and merge, and a tail torn inside the quotes is cut. */
#define SIDE_NL "# specsim sweep: points 2, id 0\nsweep:\n  name: [\"a\\nb\", \"c,\\\"d\"]\n"
#define ROWS_NL "0,\"a\nb\",0.5\n1,\"c,\"\"d\",0.25\n"

static void test_quoted_rows(void)
{
    unsigned char done[2] = {0};
    uint64_t ndone = 0;
    int fresh;
    err_t err = {0};
    const char *head = "point,name,itl_mean_s\n";
    char full[256];
    snprintf(full, sizeof full, "%s%s", head, ROWS_NL);
    put("n.scenario.yaml", SIDE_NL);
    put("n.csv", full);
    CHECK(sweepfile_resume(path("n.csv"), SIDE_NL, head, 2, 0, 1, done, &ndone,
                           &fresh, &err) == 0);
    if (err.code) printf("  %s\n", err.msg);
    CHECK(ndone == 2 && done[0] && done[1]);
    char torn[256];
    snprintf(torn, sizeof torn, "%s0,\"a\nb\",0.5\n1,\"c,\n", head);
    put("n.csv", torn);
    memset(done, 0, sizeof done);
    CHECK(sweepfile_resume(path("n.csv"), SIDE_NL, head, 2, 0, 1, done, &ndone,
                           &fresh, &err) == 0 && ndone == 1 && done[0] && !done[1]);
    char cut[256];
    snprintf(cut, sizeof cut, "%s0,\"a\nb\",0.5\n", head);
    CHECK_STR(get("n.csv"), cut);
    put("n.csv", full);
    char n0[256];
    snprintf(n0, sizeof n0, "%s", path("n.csv"));
    const char *parts[] = {n0};
    CHECK(sweepfile_merge(path("nm.csv"), parts, 1, &err) == 0);
    CHECK_STR(get("nm.csv"), full);
}

static void test_append(void)
{
    err_t err = {0};
    put("a.csv", HEAD);
    int fd = open(path("a.csv"), O_WRONLY | O_APPEND);
    CHECK(fd >= 0);
    CHECK(sweepfile_append(fd, "t.csv", "0,1,0.5\n", 8, 1, &err) == 0);
    CHECK(sweepfile_append(fd, "t.csv", "1,2,0.25\n", 9, 0, &err) == 0);
    close(fd);
    CHECK_STR(get("a.csv"), HEAD "0,1,0.5\n1,2,0.25\n");
    CHECK(sweepfile_append(-1, "t.csv", "x\n", 2, 1, &err) == -1 && err.code == ERR_RUNTIME);
}

static void put_bytes(const char *name, const char *data, size_t n)
{
    FILE *f = fopen(path(name), "wb");
    if (!f) { CHECK(0); return; }
    CHECK(fwrite(data, 1, n, f) == n);
    fclose(f);
}

/* A NUL byte inside a row or the header (found by tests/fuzz/fuzz_sweepcsv):
 * merge used to cut the line there, writing the row without its newline, so
 * the merged file read back with a torn last row; resume counted the row as
 * done. Both refuse it now, naming the file and line. */
static void test_nul_byte(void)
{
    static const char row[] = HEAD "0,1,0.5\n1,2\0,0.25\n2,3,0.1\n3,4,0.05\n";
    static const char head[] = "point,x\0,itl_mean_s\n0,1,0.5\n1,2,0.25\n"
                               "2,3,0.1\n3,4,0.05\n";
    err_t err = {0};
    char p[256];
    put("z.scenario.yaml", SIDE);
    put_bytes("z.csv", row, sizeof row - 1);
    snprintf(p, sizeof p, "%s", path("z.csv"));
    const char *parts[] = {p};
    CHECK(sweepfile_merge(path("zm.csv"), parts, 1, &err) == -1 &&
          err.code == ERR_INPUT && strstr(err.msg, "z.csv:3: ") != NULL);
    CHECK(access(path("zm.csv"), F_OK) != 0);
    unsigned char done[4] = {0};
    uint64_t ndone;
    int fresh;
    CHECK(sweepfile_resume(p, SIDE, HEAD, 4, 0, 1, done, &ndone, &fresh,
                           &err) == -1 &&
          err.code == ERR_INPUT && strstr(err.msg, "z.csv:3: ") != NULL);
    put_bytes("z.csv", head, sizeof head - 1);
    CHECK(sweepfile_merge(path("zm.csv"), parts, 1, &err) == -1 &&
          err.code == ERR_INPUT && strstr(err.msg, "z.csv:1: ") != NULL);
    CHECK(access(path("zm.csv"), F_OK) != 0);
}

/* A sidecar whose first line claims fewer points than its sweep: section
 * has (found by tests/fuzz/fuzz_sweepcsv): merge sized its rows by the
 * first line and stored a row of a later point past them. Now refused. */
static void test_points_disagree(void)
{
    static const char side[] = "# specsim sweep: points 2, id 0000000000000000\nseed: 1\n" SWEEP;
    err_t err = {0};
    char p[256];
    put("d.scenario.yaml", side);
    put("d.csv", HEAD "0,1,0.5\n3,4,0.05\n");
    snprintf(p, sizeof p, "%s", path("d.csv"));
    const char *parts[] = {p};
    CHECK(sweepfile_merge(path("dm.csv"), parts, 1, &err) == -1 && err.code == ERR_INPUT &&
          strstr(err.msg, "says 2 points, its sweep: section has 4") != NULL);
    CHECK(access(path("dm.csv"), F_OK) != 0);
}

int main(void)
{
    if (tmpdir_make("test_sweepfile")) return 1;
    RUN(test_sidecar_path);
    RUN(test_resume_truncates_torn_tail);
    RUN(test_resume_rejects);
    RUN(test_merge);
    RUN(test_rows_checked);
    RUN(test_quoted_rows);
    RUN(test_append);
    RUN(test_nul_byte);
    RUN(test_points_disagree);
    if (tmpdir_remove()) return 1;
    return check_done();
}
