#include "realmem.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/cards.h"

#define GIB 1073741824.0

int realmem_parse_meminfo(const char *text, uint64_t *bytes)
{
    static const char key[] = "MemAvailable:";
    const char *p = text;
    while (p && strncmp(p, key, sizeof key - 1) != 0) {
        p = strchr(p, '\n');
        if (p) p++;
    }
    if (!p) return -1;
    p += sizeof key - 1;
    while (*p == ' ' || *p == '\t') p++;
    if (*p < '0' || *p > '9') return -1;
    char *end;
    errno = 0;
    unsigned long long kb = strtoull(p, &end, 10);
    while (*end == ' ' || *end == '\t') end++;
    if (errno || strncmp(end, "kB", 2) != 0 || kb > UINT64_MAX / 1024) return -1;
    *bytes = (uint64_t)kb * 1024;
    return 0;
}

/* MemAvailable of /proc/meminfo: 0, or -1 when it cannot be read. */
static int meminfo_available(uint64_t *bytes)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f) return -1;
    char text[16384];   /* the file is under 2 KiB; MemAvailable is near its top */
    size_t n = fread(text, 1, sizeof text - 1, f);
    int bad = ferror(f);
    fclose(f);
    text[n] = '\0';
    return bad ? -1 : realmem_parse_meminfo(text, bytes);
}

int realmem_available(uint64_t *bytes, const char **source)
{
    if (meminfo_available(bytes) == 0) {
        *source = "MemAvailable in /proc/meminfo";
        return 0;
    }
    long pages = sysconf(_SC_AVPHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    if (pages < 0 || size <= 0) return -1;
    *bytes = (uint64_t)pages * (uint64_t)size;
    *source = "free pages, sysconf(_SC_AVPHYS_PAGES)";
    return 0;
}

int realmem_fits(size_t need, uint64_t avail)
{
    uint64_t allowed = avail / 100 * REALMEM_PERCENT + avail % 100 * REALMEM_PERCENT / 100;
    return (uint64_t)need <= allowed;
}

/* bytes as GiB (MiB under a tenth of a GiB) into buf. */
static const char *size_str(char *buf, size_t n, double bytes)
{
    if (bytes >= (double)SIZE_MAX)
        snprintf(buf, n, "more than %.0f GiB (past what a size_t counts)", (double)SIZE_MAX / GIB);
    else if (bytes >= 0.1 * GIB) snprintf(buf, n, "%.2f GiB", bytes / GIB);
    else snprintf(buf, n, "%.2f MiB", bytes / 1048576.0);
    return buf;
}

static size_t total_of(const realmem_part_t *parts, int n)
{
    size_t t = 0;
    for (int i = 0; i < n; i++)
        t = parts[i].size.total > SIZE_MAX - t ? SIZE_MAX : t + parts[i].size.total;
    return t;
}

/* One line per part: where it comes from and what it takes. */
static void print_part(const realmem_part_t *p)
{
    char t[96], w[96], k[96], b[96];
    fprintf(stderr, "  %s: %s%s%s (%s) at %s: %s", p->option, p->key ? p->key : "",
            p->key ? " " : "", p->name, p->ref, p->quant == PREC_W4A16 ? "w4a16" : "fp16",
            size_str(t, sizeof t, (double)p->size.total));
    if (p->size.total != SIZE_MAX)
        fprintf(stderr, " = weights %s + KV caches %s (%d job%s x %d tokens) + work "
                "buffers %s", size_str(w, sizeof w, (double)p->size.weights),
                size_str(k, sizeof k, (double)p->size.kv), p->jobs, p->jobs == 1 ? "" : "s",
                p->context, size_str(b, sizeof b, (double)p->size.work));
    fputc('\n', stderr);
}

int realmem_check(const char *where, const realmem_part_t *parts, int n, int quiet)
{
    uint64_t avail;
    const char *source;
    if (realmem_available(&avail, &source) != 0) {
        char ns[96];
        fprintf(stderr, "testbed: %s: cannot tell the memory available (no /proc/meminfo, "
                "no sysconf(_SC_AVPHYS_PAGES)); the real models' %s are not checked\n",
                where, size_str(ns, sizeof ns, (double)total_of(parts, n)));
        return 0;
    }
    return realmem_check_against(where, parts, n, quiet, avail, source);
}

int realmem_check_against(const char *where, const realmem_part_t *parts, int n, int quiet,
                          uint64_t avail, const char *source)
{
    size_t need = total_of(parts, n);
    char ns[96], as[96], ls[96];
    if (realmem_fits(need, avail)) {
        if (quiet) return 0;
        fprintf(stderr, "testbed: real models: %s of the %s available (%s)\n",
                size_str(ns, sizeof ns, (double)need), size_str(as, sizeof as, (double)avail),
                source);
        for (int i = 0; i < n; i++) print_part(&parts[i]);
        return 0;
    }
    fprintf(stderr, "testbed: %s: the real model%s would not fit in this machine's memory: "
            "%s needed, %s available (%s), of which the testbed takes at most %d%% (%s; "
            "the rest is for what runs beside the models: docs/testbed.md, \"Memory for "
            "real models\"):\n", where, n > 1 ? "s" : "", size_str(ns, sizeof ns, (double)need),
            size_str(as, sizeof as, (double)avail), source, REALMEM_PERCENT,
            size_str(ls, sizeof ls, (double)avail * REALMEM_PERCENT / 100.0));
    for (int i = 0; i < n; i++) print_part(&parts[i]);
    for (int i = 0; i < n; i++)
        fprintf(stderr, "  instead: %s\n", parts[i].advice);
    return 2;
}
