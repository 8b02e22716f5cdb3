/* Unit parsing and exact formatting (sim/base/units.c). Expected values are the
 * definitions of the units (1 ms = 1/1000 s, 1 Mbps = 1e6 bit/s, 1 GiB =
 * 2^30 B, 1 GB/s = 8e9 bit/s when used as a network rate). */
#include "check.h"
#include <stdint.h>

#include "base/units.h"

static double parse_ok(const char *s, enum unit_kind k, int inf)
{
    double v = -1;
    char why[256] = "";
    int rc = units_parse(s, k, inf, &v, why, sizeof why);
    if (rc != 0) printf("  unexpected failure for '%s': %s\n", s, why);
    CHECK(rc == 0);
    return v;
}

static void parse_bad(const char *s, enum unit_kind k, int inf, const char *why_part)
{
    double v = 0;
    char why[256] = "";
    CHECK(units_parse(s, k, inf, &v, why, sizeof why) == -1);
    if (!strstr(why, why_part)) printf("  '%s': why = '%s', wanted '%s'\n", s, why, why_part);
    CHECK(strstr(why, why_part) != NULL);
}

static void test_durations(void)
{
    CHECK(parse_ok("40ms", UNIT_DURATION, 0) == 40.0 / 1e3);
    CHECK(parse_ok("150us", UNIT_DURATION, 0) == 150.0 / 1e6);
    CHECK(parse_ok("7ns", UNIT_DURATION, 0) == 7.0 / 1e9);
    CHECK(parse_ok("2s", UNIT_DURATION, 0) == 2.0);
    CHECK(parse_ok("1min", UNIT_DURATION, 0) == 60.0);
    CHECK(parse_ok("1.5h", UNIT_DURATION, 0) == 5400.0);
    CHECK(parse_ok("1e3ms", UNIT_DURATION, 0) == 1.0);
    CHECK(parse_ok("0.5 ms", UNIT_DURATION, 0) == 0.5 / 1e3);
    CHECK(parse_ok("0", UNIT_DURATION, 0) == 0.0);
    parse_bad("40", UNIT_DURATION, 0, "needs a unit");
    parse_bad("40 msec", UNIT_DURATION, 0, "unknown unit 'msec'");
    parse_bad("1e", UNIT_DURATION, 0, "not a duration");
    parse_bad("-5ms", UNIT_DURATION, 0, "negative");
    parse_bad("inf", UNIT_DURATION, 0, "not allowed");
    parse_bad("nan", UNIT_DURATION, 0, "not a duration");
    parse_bad("0x10s", UNIT_DURATION, 0, "unknown unit");
    parse_bad("ms", UNIT_DURATION, 0, "not a duration");
    parse_bad("", UNIT_DURATION, 0, "empty");
    parse_bad("5 Ms", UNIT_DURATION, 0, "unknown unit");
}

static void test_rates_sizes_flops(void)
{
    CHECK(parse_ok("100Mbps", UNIT_RATE, 0) == 1e8);
    CHECK(parse_ok("1Gbps", UNIT_RATE, 0) == 1e9);
    CHECK(parse_ok("10kbps", UNIT_RATE, 0) == 1e4);
    CHECK(parse_ok("1MB/s", UNIT_RATE, 0) == 8e6);
    CHECK(isinf(parse_ok("inf", UNIT_RATE, 1)));
    parse_bad("inf", UNIT_RATE, 0, "not allowed");
    parse_bad("100", UNIT_RATE, 1, "needs a unit");
    parse_bad("100MiBps", UNIT_RATE, 1, "unknown unit");

    CHECK_REL(parse_ok("4.8TB/s", UNIT_BANDWIDTH, 0), 4.8e12, 1e-15);
    CHECK(parse_ok("100GB/s", UNIT_BANDWIDTH, 0) == 1e11);
    CHECK(parse_ok("1GiB/s", UNIT_BANDWIDTH, 0) == 1073741824.0);
    parse_bad("3Tbps", UNIT_BANDWIDTH, 0, "unknown unit 'Tbps'");

    CHECK(parse_ok("4GiB", UNIT_SIZE, 0) == 4.0 * 1024 * 1024 * 1024);
    CHECK(parse_ok("512MB", UNIT_SIZE, 0) == 512e6);
    CHECK(parse_ok("1KiB", UNIT_SIZE, 0) == 1024.0);
    CHECK(parse_ok("2TiB", UNIT_SIZE, 0) == 2.0 * 1099511627776.0);
    CHECK(parse_ok("3B", UNIT_SIZE, 0) == 3.0);
    parse_bad("4Gb", UNIT_SIZE, 0, "unknown unit");

    CHECK_REL(parse_ok("989.5TFLOPS", UNIT_FLOPS, 0), 989.5e12, 1e-15);
    CHECK(parse_ok("1979TOPS", UNIT_FLOPS, 0) == 1979e12);
    CHECK_REL(parse_ok("153.6GFLOPS", UNIT_FLOPS, 0), 153.6e9, 1e-15);

    CHECK(parse_ok("0.8", UNIT_NUMBER, 0) == 0.8);
    CHECK(parse_ok("-3", UNIT_NUMBER, 0) == -3.0);
    CHECK(parse_ok("1e8", UNIT_NUMBER, 0) == 1e8);
    parse_bad("3ms", UNIT_NUMBER, 0, "not a number");
    parse_bad("1e", UNIT_NUMBER, 0, "not a number");
    parse_bad("inf", UNIT_NUMBER, 1, "not allowed");
}

static void check_format(double v, enum unit_kind k, const char *want)
{
    char buf[64];
    CHECK(units_format(v, k, buf, sizeof buf) > 0);
    CHECK_STR(buf, want);
}

static void test_format_nice(void)
{
    check_format(40.0 / 1e3, UNIT_DURATION, "40ms");
    check_format(60.0, UNIT_DURATION, "60s");
    check_format(0.5 / 1e3, UNIT_DURATION, "0.5ms");
    check_format(0.0, UNIT_DURATION, "0s");
    check_format(1e8, UNIT_RATE, "100Mbps");
    check_format(INFINITY, UNIT_RATE, "inf");
    check_format(4.0 * 1073741824.0, UNIT_SIZE, "4GiB");
    check_format(141e9, UNIT_SIZE, "141GB");
    check_format(4.8e12, UNIT_BANDWIDTH, "4.8TB/s");
    check_format(0.8, UNIT_NUMBER, "0.8");
    char small[4];
    CHECK(units_format(123456.0, UNIT_DURATION, small, sizeof small) == -1);
}

/* Every value formats to text that parses back to exactly the same double. */
static void test_format_round_trip(void)
{
    static const enum unit_kind kinds[] = {UNIT_NUMBER, UNIT_DURATION, UNIT_RATE,
                                           UNIT_BANDWIDTH, UNIT_SIZE, UNIT_FLOPS};
    uint64_t x = 88172645463325252ULL;
    int bad = 0;
    for (int i = 0; i < 3000; i++) {
        x ^= x << 13; x ^= x >> 7; x ^= x << 17;  /* xorshift64 */
        double u = (double)(x >> 11) / 9007199254740992.0;  /* [0,1) */
        double v = ldexp(u, (int)(x % 80) - 40);
        if (i % 3 == 0) v = (double)(x % 100000) / 1000.0;  /* "nice" decimals */
        for (size_t k = 0; k < sizeof kinds / sizeof *kinds; k++) {
            char buf[64];
            double back = -1;
            if (units_format(v, kinds[k], buf, sizeof buf) < 0 ||
                units_parse(buf, kinds[k], 1, &back, NULL, 0) != 0 || back != v) {
                if (bad++ < 5) printf("  round trip failed: %.17g -> '%s'\n", v, buf);
            }
        }
    }
    CHECK(bad == 0);
}

/* The pieces of a sweep range: a number with the unit after it, and the
 * conversion of one unit into another of the same quantity (factors by
 * hand: 1 s = 1000 ms, 1/s = 60/min, 1 Tbps = 1000 Gbps, 1 MB/s = 8 Mbit/s,
 * 1 MiB/s = 1048576 B/s, 1 GiB = 1024 MiB). */
static void test_split_convert(void)
{
    double x = 0, y = 0;
    const char *u = NULL;
    CHECK(units_split("1.5 MB/s", &x, &u) == 0 && x == 1.5);
    CHECK_STR(u, "MB/s");
    CHECK(units_split("-3", &x, &u) == 0 && x == -3);
    CHECK_STR(u, "");
    CHECK(units_split("20000us", &x, &u) == 0 && x == 20000);
    CHECK_STR(u, "us");
    CHECK(units_split("abc", &x, &u) == -1);
    CHECK(units_split("1e", &x, &u) == -1);
    CHECK(units_split("1e999", &x, &u) == -1);
    CHECK(units_convert(0.1, "s", "ms", &y) == 0 && y == 100);
    CHECK(units_convert(20000, "us", "ms", &y) == 0 && y == 20);
    CHECK(units_convert(3, "/s", "/min", &y) == 0 && y == 180);
    CHECK(units_convert(4, "Tbps", "Gbps", &y) == 0 && y == 4000);
    CHECK(units_convert(0.3, "Tbps", "Gbps", &y) == 0 && y == 300);
    CHECK(units_convert(1, "MB/s", "Mbps", &y) == 0 && y == 8);
    CHECK(units_convert(32, "Mbps", "MB/s", &y) == 0 && y == 4);
    CHECK(units_convert(1, "MiB/s", "B/s", &y) == 0 && y == 1048576);
    CHECK(units_convert(2, "GiB", "MiB", &y) == 0 && y == 2048);
    CHECK(units_convert(7, "foo", "foo", &y) == 0 && y == 7);   /* same name */
    CHECK(units_convert(1, "s", "MB/s", &y) == -1);              /* two quantities */
    CHECK(units_convert(1, "", "ms", &y) == -1);
    CHECK(units_convert(1, "MiB/s", "Mbps", &y) == -1);         /* no table has both */
}

int main(void)
{
    RUN(test_durations);
    RUN(test_rates_sizes_flops);
    RUN(test_format_nice);
    RUN(test_format_round_trip);
    RUN(test_split_convert);
    return check_done();
}
