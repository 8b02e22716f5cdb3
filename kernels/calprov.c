/* calprov — provenance strings of a calibration table (see calprov.h). */
#include "calprov.h"

#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

/* Shell-safe words pass as they are; others go in single quotes. */
static int shell_plain(const char *s)
{
    if (!*s) return 0;
    for (; *s; s++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_./=:,+@%", *s))
            return 0;
    return 1;
}

/* Appends s to buf[0..n) at *len, dropping what does not fit; always
 * NUL-terminated. */
static void append(char *buf, size_t n, size_t *len, const char *s)
{
    for (; *s && *len + 1 < n; s++) buf[(*len)++] = *s;
    buf[*len] = '\0';
}

void calprov_command(int argc, char **argv, char *buf, size_t n)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < argc; i++) {
        const char *a = argv[i];
        if (i) append(buf, n, &len, " ");
        if (shell_plain(a)) {
            append(buf, n, &len, a);
            continue;
        }
        append(buf, n, &len, "'");
        for (; *a; a++) {
            char c[2] = {*a, '\0'};
            append(buf, n, &len, *a == '\'' ? "'\\''" : c);
        }
        append(buf, n, &len, "'");
    }
}

void calprov_date_utc(char *buf, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    if (!gmtime_r(&t, &tm) || !strftime(buf, n, "%Y-%m-%dT%H:%M:%SZ", &tm))
        snprintf(buf, n, "unknown");
}

void calprov_host(char *buf, size_t n)
{
    if (gethostname(buf, n) != 0) snprintf(buf, n, "unknown");
    buf[n - 1] = '\0';
}
