/* Tests of the sweep: section parser. Expected values are written out by
 * hand from the YAML in each test (positions counted in the text). */
#include <stdlib.h>   /* first: it defines __GLIBC__ under glibc */
#ifdef __GLIBC__
#include <malloc.h>   /* malloc_usable_size, glibc's */
#endif

#include "check.h"
#include "config/sweepspec.h"
#include "base/units.h"

static int load(const char *yaml, sweepspec_t *sp, err_t *err)
{
    err->code = 0;
    err->msg[0] = '\0';
    return sweepspec_load_string("t.yaml", yaml, sp, err);
}

/* Message starts with prefix (the FILE:LINE:COLUMN: sweep.PATH part). */
static int starts(const char *msg, const char *prefix)
{
    if (strncmp(msg, prefix, strlen(prefix)) == 0) return 1;
    printf("  message \"%s\" does not start with \"%s\"\n", msg, prefix);
    return 0;
}

static void test_list_axis(void)
{
    sweepspec_t sp;
    err_t err;
    CHECK(load("seed: 3\nsweep:\n  protocol.gamma: [1, 2, 8]\n", &sp, &err) == 0);
    CHECK(sp.naxes == 1 && sp.npoints == 3);
    CHECK_STR(sp.axes[0].path, "protocol.gamma");
    CHECK_STR(sp.axes[0].values[2], "8");
    /* "  protocol.gamma: [1, 2, 8]": key at column 3, the 8 at column 26. */
    CHECK(sp.axes[0].line == 3 && sp.axes[0].col == 3);
    CHECK(sp.axes[0].vline[2] == 3 && sp.axes[0].vcol[2] == 26);
    CHECK(sp.line == 2 && sp.col == 1);
    sweepspec_fini(&sp);
}

static void test_flow_items(void)
{
    sweepspec_t sp;
    err_t err;
    CHECK(load("sweep:\n  tenants.workload.think:\n    - 0s\n"
               "    - {dist: exponential, mean: 6ms}\n", &sp, &err) == 0);
    CHECK(sp.npoints == 2);
    CHECK_STR(sp.axes[0].values[0], "0s");
    CHECK_STR(sp.axes[0].values[1], "{dist: exponential, mean: 6ms}");
    sweepspec_fini(&sp);
}

static void test_range_units(void)
{
    sweepspec_t sp;
    err_t err;
    /* 10, 20, ..., 100 ms: (100 - 10) / 10 + 1 = 10 values, unit kept. */
    CHECK(load("sweep:\n  tenants.network.rtt: {from: 10ms, to: 100ms, step: 10ms}\n",
               &sp, &err) == 0);
    CHECK(sp.npoints == 10);
    if (sp.npoints == 10) {
        CHECK_STR(sp.axes[0].values[0], "10ms");
        CHECK_STR(sp.axes[0].values[2], "30ms");
        CHECK_STR(sp.axes[0].values[9], "100ms");
    }
    sweepspec_fini(&sp);
    /* to and step in other time units are converted to from's unit:
     * 0.1s = 100ms, 20000us = 20ms -> 10, 30, ..., 90 (5 values). */
    CHECK(load("sweep:\n  tenants.network.rtt: {from: 10ms, to: 0.1s, step: 20000us}\n",
               &sp, &err) == 0);
    CHECK(sp.npoints == 5);
    if (sp.npoints == 5) CHECK_STR(sp.axes[0].values[4], "90ms");
    sweepspec_fini(&sp);
    /* 0, 0.1, ..., 1: 11 values; 3 * 0.1 must print as 0.3. */
    CHECK(load("sweep:\n  acceptance.alpha: {from: 0, to: 1, step: 0.1}\n", &sp, &err) == 0);
    CHECK(sp.npoints == 11);
    if (sp.npoints == 11) {
        CHECK_STR(sp.axes[0].values[3], "0.3");
        CHECK_STR(sp.axes[0].values[10], "1");
    }
    sweepspec_fini(&sp);
    /* Arrival rates per time: 1/s and 3/s in from's /min -> 60, 120, 180. */
    CHECK(load("sweep:\n  tenants.workload.rate: {from: 60/min, to: 3/s, step: 1/s}\n",
               &sp, &err) == 0);
    CHECK(sp.npoints == 3);
    if (sp.npoints == 3) {
        CHECK_STR(sp.axes[0].values[0], "60/min");
        CHECK_STR(sp.axes[0].values[2], "180/min");
    }
    sweepspec_fini(&sp);
    /* Sizes: 64B to 1KiB in 448B steps -> 64B, 512B, 960B. */
    CHECK(load("sweep:\n  tenants.network.overhead_bytes: {from: 64B, to: 1KiB, step: 448B}\n",
               &sp, &err) == 0);
    CHECK(sp.npoints == 3);
    if (sp.npoints == 3) CHECK_STR(sp.axes[0].values[2], "960B");
    sweepspec_fini(&sp);
    /* Descending: 10, 7, 4, 1. */
    CHECK(load("sweep:\n  tenants.count: {from: 10, to: 1, step: -3}\n", &sp, &err) == 0);
    CHECK(sp.npoints == 4);
    if (sp.npoints == 4) CHECK_STR(sp.axes[0].values[3], "1");
    sweepspec_fini(&sp);
}

/* The axis values of a one-axis range, each checked against the text and
 * against what the scenario loader reads from it (a rate, in bits/s). */
static void check_rate_axis(const char *yaml, int n, const char *const *want,
                            const double *bits)
{
    sweepspec_t sp;
    err_t err;
    int rc = load(yaml, &sp, &err);
    CHECK(rc == 0);
    if (rc != 0) printf("  %s\n", err.msg);
    CHECK(rc == 0 && sp.npoints == (uint64_t)n);
    for (int i = 0; rc == 0 && i < n && i < sp.axes[0].nvalues; i++) {
        CHECK_STR(sp.axes[0].values[i], want[i]);
        double v = -1;
        CHECK(units_parse(sp.axes[0].values[i], UNIT_RATE, 0, &v, NULL, 0) == 0);
        CHECK(v == bits[i]);
    }
    sweepspec_fini(&sp);
}

/* Every unit `--set` accepts works on an axis: byte rates and Tbps were
 * once "not a number" in a range. */
static void test_range_rate_units(void)
{
    /* 1, 2, 3, 4 MB/s = 8, 16, 24, 32 Mbit/s. */
    static const char *const mb[] = {"1MB/s", "2MB/s", "3MB/s", "4MB/s"};
    static const double mb_bits[] = {8e6, 16e6, 24e6, 32e6};
    check_rate_axis("sweep:\n  tenants.network.uplink: {from: 1MB/s, to: 4MB/s, "
                    "step: 1MB/s}\n", 4, mb, mb_bits);
    /* to and step in bits: 32Mbps = 4MB/s, 8Mbps = 1MB/s -> the same axis. */
    check_rate_axis("sweep:\n  tenants.network.uplink: {from: 1MB/s, to: 32Mbps, "
                    "step: 8Mbps}\n", 4, mb, mb_bits);
    /* 0.5, 1, 1.5, 2 Tbit/s. */
    static const char *const tb[] = {"0.5Tbps", "1Tbps", "1.5Tbps", "2Tbps"};
    static const double tb_bits[] = {0.5e12, 1e12, 1.5e12, 2e12};
    check_rate_axis("sweep:\n  tenants.network.downlink: {from: 0.5Tbps, to: 2Tbps, "
                    "step: 0.5Tbps}\n", 4, tb, tb_bits);
    /* 100 Gbps up to 0.3Tbps = 300 Gbps: 100, 200, 300. */
    static const char *const gb[] = {"100Gbps", "200Gbps", "300Gbps"};
    static const double gb_bits[] = {100e9, 200e9, 300e9};
    check_rate_axis("sweep:\n  tenants.network.downlink: {from: 100Gbps, to: 0.3Tbps, "
                    "step: 100Gbps}\n", 3, gb, gb_bits);
    /* Decimal steps print exactly what a hand count gives: 0.1 + 2 x 0.1 is
     * 0.30000000000000004 in binary but the axis says 0.3MB/s; 7 values
     * (0.1 .. 0.7), the end point included. */
    static const char *const dec[] = {"0.1MB/s", "0.2MB/s", "0.3MB/s", "0.4MB/s",
                                      "0.5MB/s", "0.6MB/s", "0.7MB/s"};
    static const double dec_bits[] = {0.8e6, 1.6e6, 2.4e6, 3.2e6, 4e6, 4.8e6, 5.6e6};
    check_rate_axis("sweep:\n  tenants.network.uplink: {from: 0.1MB/s, to: 0.7MB/s, "
                    "step: 0.1MB/s}\n", 7, dec, dec_bits);
    /* A count range in a byte rate: 1 .. 4 MB/s in 4 values. */
    check_rate_axis("sweep:\n  tenants.network.uplink: {from: 1MB/s, to: 4MB/s, "
                    "count: 4}\n", 4, mb, mb_bits);
    /* Bandwidths in binary units convert to decimal ones: 1MiB/s = 1048576
     * B/s, so 1 MiB/s .. 3145728 B/s in 1 MiB/s steps is 1, 2, 3 MiB/s. */
    sweepspec_t sp;
    err_t err;
    CHECK(load("sweep:\n  x: {from: 1MiB/s, to: 3145728B/s, step: 1MiB/s}\n", &sp,
               &err) == 0);
    CHECK(sp.npoints == 3);
    if (sp.npoints == 3) CHECK_STR(sp.axes[0].values[2], "3MiB/s");
    sweepspec_fini(&sp);
    /* Different quantities do not mix. */
    CHECK(load("sweep:\n  x: {from: 1MB/s, to: 4s, step: 1MB/s}\n", &sp, &err) == -1);
    CHECK(err.code == ERR_INPUT &&
          starts(err.msg, "t.yaml:2:24: sweep.x.to: unit 's' does not match the "
                          "unit 'MB/s' of from"));
    sweepspec_fini(&sp);
}

static void test_range_count(void)
{
    sweepspec_t sp;
    err_t err;
    /* 1 * 64^(i/6) = 2^i, i = 0..6. */
    CHECK(load("sweep:\n  cloud.batching.max_batch: {from: 1, to: 64, count: 7, scale: log}\n",
               &sp, &err) == 0);
    CHECK(sp.npoints == 7);
    if (sp.npoints == 7) {
        CHECK_STR(sp.axes[0].values[1], "2");
        CHECK_STR(sp.axes[0].values[5], "32");
        CHECK_STR(sp.axes[0].values[6], "64");
    }
    sweepspec_fini(&sp);
    /* 8^(i/6) = 2^(i/2): 1, 1.41, 2, 2.83, 4, 5.66, 8 -> rounded 1 1 2 3 4 6 8,
     * the repeated 1 dropped. */
    CHECK(load("sweep:\n  tenants.count: {from: 1, to: 8, count: 7, scale: log, "
               "integer: true}\n", &sp, &err) == 0);
    CHECK(sp.npoints == 6);
    if (sp.npoints == 6) {
        CHECK_STR(sp.axes[0].values[1], "2");
        CHECK_STR(sp.axes[0].values[2], "3");
        CHECK_STR(sp.axes[0].values[4], "6");
    }
    sweepspec_fini(&sp);
    /* Linear count: 0, 0.25, 0.5, 0.75, 1. */
    CHECK(load("sweep:\n  acceptance.alpha: {from: 0, to: 1, count: 5}\n", &sp, &err) == 0);
    CHECK(sp.npoints == 5);
    if (sp.npoints == 5) CHECK_STR(sp.axes[0].values[3], "0.75");
    sweepspec_fini(&sp);
}

static void test_product_and_zip(void)
{
    sweepspec_t sp;
    err_t err;
    const char *v[2];
    CHECK(load("sweep:\n  a.b: [1, 2]\n  c: [x, y, z]\n", &sp, &err) == 0);
    CHECK(sp.npoints == 6 && sp.naxes == 2);
    /* First axis outermost: point 4 = (a index 4/3 = 1, c index 4%3 = 1). */
    sweepspec_point(&sp, 4, v);
    CHECK_STR(v[0], "2");
    CHECK_STR(v[1], "y");
    sweepspec_point(&sp, 2, v);
    CHECK_STR(v[0], "1");
    CHECK_STR(v[1], "z");
    sweepspec_fini(&sp);
    CHECK(load("sweep:\n  zip: true\n  a: [1, 2, 3]\n  c: [x, y, z]\n", &sp, &err) == 0);
    CHECK(sp.npoints == 3 && sp.zip);
    sweepspec_point(&sp, 1, v);
    CHECK_STR(v[0], "2");
    CHECK_STR(v[1], "y");
    sweepspec_fini(&sp);
    CHECK(load("sweep:\n  zip: true\n  a: [1, 2, 3]\n  c: [x, y]\n", &sp, &err) != 0);
    CHECK(err.code == ERR_INPUT && starts(err.msg, "t.yaml:4:3: sweep.c: zip"));
    sweepspec_fini(&sp);
}

static void test_errors(void)
{
    static const struct { const char *yaml, *prefix; } cases[] = {
        {"sweep:\n  protocol.gamma: []\n", "t.yaml:2:19: sweep.protocol.gamma: empty list"},
        {"sweep:\n  tenants.network.rtt: {from: 10ms, to: 50ms, step: 0ms}\n",
         "t.yaml:2:53: sweep.tenants.network.rtt.step: step is 0"},
        {"sweep:\n  x: {from: 0, to: 10, count: 4, scale: log}\n",
         "t.yaml:2:41: sweep.x.scale: log scale through 0"},
        {"sweep:\n  x: {from: -1, to: 10, count: 4, scale: log}\n",
         "t.yaml:2:42: sweep.x.scale: log scale through 0"},
        {"sweep:\n  x: {from: 1, to: 10, count: 0}\n", "t.yaml:2:31: sweep.x.count: count is 0"},
        {"sweep:\n  x: {from: 5, to: 1, step: 1}\n", "t.yaml:2:29: sweep.x.step: from 5 to 1"},
        {"sweep:\n  x: {from: 1, to: 5, stpe: 1}\n", "t.yaml:2:23: sweep.x.stpe: unknown key"},
        {"sweep:\n  x: {from: 1ms, to: 5Mbps, step: 1ms}\n", "t.yaml:2:22: sweep.x.to: unit"},
        {"sweep:\n  x: 5\n", "t.yaml:2:6: sweep.x: expected a list or a range"},
        {"sweep:\n  x: [1]\n  x: [2]\n", "t.yaml:3:3: sweep.x: duplicate key"},
        {"sweep:\n  zip: maybe\n  x: [1]\n", "t.yaml:2:8: sweep.zip: expected true or false"},
        {"sweep: {}\n", "t.yaml:1:8: sweep: no axes"},
        {"seed: 1\n", "t.yaml:1:1: sweep: no sweep: section"},
        {"", "t.yaml: empty scenario"},
        {"# a comment\n", "t.yaml: empty scenario"},
        {"sweep:\n  x: [1, 2\n", "t.yaml:"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
        sweepspec_t sp;
        err_t err;
        int rc = load(cases[i].yaml, &sp, &err);
        CHECK(rc == -1);
        CHECK(err.code == ERR_INPUT);
        CHECK(starts(err.msg, cases[i].prefix));
        sweepspec_fini(&sp);
    }
}

static void test_write_round_trip(void)
{
    sweepspec_t a, b;
    err_t err;
    CHECK(load("sweep:\n  independent_seeds: true\n  tenants.network.rtt: {from: 10ms, "
               "to: 30ms, step: 10ms}\n  tenants.workload.think: [0s, {dist: "
               "exponential, mean: 6ms}]\n  name: [\"a,b\", 'x: y']\n", &a, &err) == 0);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    CHECK(f && sweepspec_write_yaml(&a, f) == 0);
    if (f) fclose(f);
    CHECK(buf && load(buf, &b, &err) == 0);
    CHECK(b.npoints == a.npoints && b.naxes == 3 && b.independent_seeds == 1);
    for (int x = 0; x < a.naxes && x < b.naxes; x++) {
        CHECK_STR(b.axes[x].path, a.axes[x].path);
        for (int i = 0; i < a.axes[x].nvalues && i < b.axes[x].nvalues; i++)
            CHECK_STR(b.axes[x].values[i], a.axes[x].values[i]);
    }
    CHECK_STR(b.axes[2].values[0], "a,b");
    CHECK_STR(b.axes[2].values[1], "x: y");
    free(buf);
    sweepspec_fini(&a);
    sweepspec_fini(&b);
}

/* A scalar that starts like a flow node is a scalar: written back quoted,
 * it reads back as the same string ("[1" written bare did not parse and
 * "[1,2]" came back as "[1, 2]"); a flow node stays a flow node. */
static void test_write_flow_like_scalars(void)
{
    sweepspec_t a, b;
    err_t err;
    CHECK(load("sweep:\n  name: [\"[1\", '{a', \"[1,2]\", {k: v}, [x, y]]\n", &a,
               &err) == 0);
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    CHECK(f && sweepspec_write_yaml(&a, f) == 0);
    if (f) fclose(f);
    int rc = buf ? load(buf, &b, &err) : -1;
    CHECK(rc == 0);
    if (rc != 0) printf("  written:\n%s  error: %s\n", buf ? buf : "", err.msg);
    static const char *want[] = {"[1", "{a", "[1,2]", "{k: v}", "[x, y]"};
    if (rc == 0 && b.naxes == 1 && b.axes[0].nvalues == 5) {
        for (int i = 0; i < 5; i++) {
            CHECK_STR(b.axes[0].values[i], want[i]);
            CHECK(b.axes[0].vflow[i] == (i >= 3));
        }
    } else {
        CHECK(rc != 0); /* reported above */
    }
    if (rc == 0) sweepspec_fini(&b);
    free(buf);
    sweepspec_fini(&a);
}

/* Values are stored in arrays grown to the next power of two, not one value
 * at a time: that made a 100000-value range take minutes and 2 GB under
 * AddressSanitizer (every value copied every array). Speed is not timed in
 * unit tests (benchmarks do that), so this checks the cause: after 1025
 * values the array has room for 2048. */
static void test_values_grow_geometrically(void)
{
    sweepspec_t sp;
    err_t err;
    CHECK(load("sweep:\n  x: {from: 1, to: 1025, step: 1}\n", &sp, &err) == 0);
    CHECK(sp.npoints == 1025);
    if (sp.npoints == 1025) {
#ifdef __GLIBC__   /* elsewhere only the values are checked */
        CHECK(malloc_usable_size(sp.axes[0].values) >= 2048 * sizeof(char *));
#endif
        CHECK_STR(sp.axes[0].values[1024], "1025");
    }
    sweepspec_fini(&sp);
}

/* yaml is refused for too many values in all, the message starting at
 * `where` (FILE:LINE:COL: KEY). */
static void refused_over_limit(const char *yaml, const char *where)
{
    sweepspec_t sp;
    err_t err;
    char msg[160];
    snprintf(msg, sizeof msg, "%s: more than %ld values in all axes", where,
             SWEEPSPEC_MAX_VALUES);
    CHECK(load(yaml, &sp, &err) != 0);
    CHECK(err.code == ERR_INPUT && starts(err.msg, msg));
    sweepspec_fini(&sp);
}

/* The axes together hold at most SWEEPSPEC_MAX_VALUES values, refused before
 * a range is expanded: the point count alone let a few lines of zipped
 * ten-million-value axes take gigabytes (a 2-value axis before it makes
 * 20 million points, well under the point limit). */
static void test_total_values_limit(void)
{
    refused_over_limit("sweep:\n  b: [1, 2]\n  a: {from: 0, to: 1, count: 9999999}\n",
                       "t.yaml:3:30: sweep.a");
    /* "  a: {from: 1, to: 1e7, step: 1}": 10^7 values after 2, the step at
     * column 31. */
    refused_over_limit("sweep:\n  b: [1, 2]\n  a: {from: 1, to: 1e7, step: 1}\n",
                       "t.yaml:3:31: sweep.a");
    /* An integer range keeps each value once (1, 2, 3) but steps through
     * every one of its count: exactly the limit in all is accepted, one
     * more refused (each such axis took 40 ms, any number of them). */
    sweepspec_t sp;
    err_t err;
    CHECK(load("sweep:\n  b: [1, 2]\n  a: {from: 1, to: 3, count: 9999998, integer: true}\n",
               &sp, &err) == 0);
    CHECK(sp.npoints == 6);
    sweepspec_fini(&sp);
    refused_over_limit("sweep:\n  b: [1, 2]\n  a: {from: 1, to: 3, count: 9999999, integer: true}\n",
                       "t.yaml:3:30: sweep.a");
    /* A list counts its items: "  c: [1, 2]" after 9999999 values, at the
     * list (column 6). */
    refused_over_limit("sweep:\n  a: {from: 1, to: 3, count: 9999999, integer: true}\n  c: [1, 2]\n",
                       "t.yaml:3:6: sweep.c");
}

/* A range value is the number and from's unit as written, however long:
 * the unit is checked only where the value is used (a `name` takes any
 * text), and it was cut at 95 characters before. */
static void test_long_unit_kept(void)
{
    char unit[201], yaml[1024], want[256];
    memset(unit, 'u', 200);
    unit[200] = 0;
    snprintf(yaml, sizeof yaml, "sweep:\n  name: {from: 1%s, to: 2%s, step: 1%s}\n",
             unit, unit, unit);
    sweepspec_t sp;
    err_t err;
    CHECK(load(yaml, &sp, &err) == 0);
    CHECK(sp.npoints == 2);
    if (sp.npoints == 2) {
        snprintf(want, sizeof want, "2%s", unit);
        CHECK_STR(sp.axes[0].values[1], want);
    }
    sweepspec_fini(&sp);
}

int main(void)
{
    RUN(test_list_axis);
    RUN(test_flow_items);
    RUN(test_range_units);
    RUN(test_range_rate_units);
    RUN(test_range_count);
    RUN(test_product_and_zip);
    RUN(test_errors);
    RUN(test_write_round_trip);
    RUN(test_write_flow_like_scalars);
    RUN(test_values_grow_geometrically);
    RUN(test_total_values_limit);
    RUN(test_long_unit_kept);
    return check_done();
}
