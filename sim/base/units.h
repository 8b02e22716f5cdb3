/* units — strict parsing and exact formatting of quantities with units.
 *
 * Numbers are decimal: [-]DIGITS[.DIGITS][e[+-]DIGITS] (no hex, no "nan");
 * a unit may follow, optionally after spaces. A bare `0` needs no unit.
 *   duration  ns us ms s min h                         -> seconds
 *   rate      bps kbps Mbps Gbps Tbps (bits/s) and
 *             B/s KB/s MB/s GB/s TB/s (bytes/s, x8)    -> bits/s
 *   bandwidth B/s KB/s MB/s GB/s TB/s (decimal, bytes) and
 *             KiB/s MiB/s GiB/s TiB/s                  -> bytes/s
 *   size      B KB MB GB TB (decimal) KiB MiB GiB TiB  -> bytes
 *   flops     FLOPS KFLOPS MFLOPS GFLOPS TFLOPS PFLOPS,
 *             and OPS GOPS TOPS POPS (integer paths)   -> operations/s
 *   frequency /s /min /h (events per time: 2/s, 120/min) -> per second
 *   number    no unit
 * `inf` (-> INFINITY) is accepted only when the caller allows it. Sub-second
 * durations divide by the power of ten ("40ms" is 40/1e3, the double nearest
 * 0.04); the others multiply. Negative quantities are rejected.
 */
#ifndef SPECSIM_UNITS_H
#define SPECSIM_UNITS_H

#include "base/api.h"

#include <stddef.h>

enum unit_kind {
    UNIT_NUMBER = 0,
    UNIT_DURATION,
    UNIT_RATE,
    UNIT_BANDWIDTH,
    UNIT_SIZE,
    UNIT_FLOPS,
    UNIT_FREQUENCY
};

/* Parses s as a quantity of the given kind into *out. Returns 0, or -1 with
 * why (size whysz, may be NULL) holding the problem ("needs a unit, e.g.
 * 40ms", "unknown unit 'msec' (allowed: ...)", ...). Numbers (UNIT_NUMBER)
 * may be negative; the caller range-checks them. */
int units_parse(const char *s, enum unit_kind kind, int allow_inf, double *out,
                char *why, size_t whysz);

/* Writes the shortest text that units_parse reads back as exactly v, trying
 * every unit of the kind (e.g. 0.04 -> "40ms", 4e9 -> "4GB"... ). INFINITY ->
 * "inf". Returns the length written, or -1 if it does not fit. */
int units_format(double v, enum unit_kind kind, char *buf, size_t n);

/* Splits s into its decimal number (the grammar above, sign allowed) and the
 * text after it, spaces skipped: *unit points into s ("" when none). The
 * unit is not checked here. 0, or -1 when s does not start with a number or
 * the number is not finite. */
SPECSIM_API int units_split(const char *s, double *x, const char **unit);

/* Converts x from unit `from` to unit `to` ("" = no unit), so that a range
 * written in one unit can be stepped in another of the same quantity: 0.1s
 * is 100ms, 1/s is 60/min, 4Tbps is 4000Gbps. Equal names convert to x
 * itself; otherwise both must belong to one kind's table (any kind whose
 * table has both: "MB/s" and "Mbps" are rates, "MB/s" and "MiB/s"
 * bandwidths). Sub-second units convert by division, as units_parse reads
 * them, so whole numbers stay exact. 0, or -1 when no kind has both. */
int units_convert(double x, const char *from, const char *to, double *out);

/* "duration", "rate", ... for messages; and an example ("40ms"). */
const char *units_kind_name(enum unit_kind kind);
const char *units_example(enum unit_kind kind);

#endif
