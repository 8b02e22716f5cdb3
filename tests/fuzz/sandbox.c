/* sandbox — the fuzz targets' temporary directory and the file access the
 * library is allowed (see fuzz.h).
 *
 * The Makefile links the targets against a copy of libspecsim.a whose fopen
 * and open calls were renamed (objcopy --redefine-sym) to the two functions
 * below. Only the library's own calls go through them: libFuzzer must still
 * write its crash files wherever it is told to.
 */
#define _GNU_SOURCE
#include "fuzz.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#ifndef SPECSIM_ROOT
#define SPECSIM_ROOT "."
#endif

/* Process-wide by nature: one temporary directory per fuzzing process. */
static char g_tmp[PATH_MAX];
static char g_root[PATH_MAX];

_Noreturn void fuzz_fail(const char *what, const char *detail)
{
    fprintf(stderr, "fuzz: %s\n%s\n", what, detail ? detail : "");
    abort();
}

static int remove_one(const char *path, const struct stat *st, int flag,
                      struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    return remove(path);
}

static void remove_tmpdir(void)
{
    if (g_tmp[0]) nftw(g_tmp, remove_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int remove_inside(const char *path, const struct stat *st, int flag,
                         struct FTW *ftw)
{
    return ftw->level > 0 ? remove_one(path, st, flag, ftw) : 0;
}

void fuzz_reset(void)
{
    if (nftw(fuzz_tmpdir(), remove_inside, 16, FTW_DEPTH | FTW_PHYS) != 0)
        fuzz_fail("cannot empty the temporary directory", g_tmp);
}

const char *fuzz_tmpdir(void)
{
    if (g_tmp[0]) return g_tmp;
    const char *base = getenv("TMPDIR");
    char tmpl[PATH_MAX];
    snprintf(tmpl, sizeof tmpl, "%s/specsim-fuzz.XXXXXX",
             base && *base ? base : "/tmp");
    char *d = mkdtemp(tmpl);
    if (!d || !realpath(d, g_tmp)) fuzz_fail("cannot create a temporary directory", tmpl);
    if (!realpath(SPECSIM_ROOT, g_root)) fuzz_fail("no source root", SPECSIM_ROOT);
    atexit(remove_tmpdir);
    return g_tmp;
}

void fuzz_write_file(const char *name, const void *data, size_t n, char *out,
                     size_t outsz)
{
    int w = snprintf(out, outsz, "%s/%s", fuzz_tmpdir(), name);
    if (w < 0 || (size_t)w >= outsz) fuzz_fail("temporary path too long", name);
    FILE *f = fopen(out, "wb");
    if (!f || (n && fwrite(data, 1, n, f) != n) || fclose(f) != 0)
        fuzz_fail("cannot write a temporary file", out);
}

void fuzz_check_nul(const char *t, size_t n, const char *path, const char *msg)
{
    const char *z = memchr(t, 0, n);
    long line = 1;
    const char *bol = t;
    for (const char *p = t; p < z; p++)
        if (*p == '\n') {
            line++;
            bol = p + 1;
        }
    char want[4200];
    snprintf(want, sizeof want, "%s:%ld:%ld: ", path, line, (long)(z - bol) + 1);
    if (strncmp(msg, want, strlen(want)) != 0) {
        fprintf(stderr, "expected a message starting '%s'\n", want);
        fuzz_fail("a NUL byte is not refused at its line and column", msg);
    }
}

void fuzz_split(const char *t, size_t n, const char *marker, size_t *head_len,
                const char **tail, size_t *tail_len)
{
    size_t m = strlen(marker);
    for (size_t i = 0; i + m <= n; i++) {
        if ((i > 0 && t[i - 1] != '\n') || memcmp(t + i, marker, m) != 0) continue;
        if (i + m < n && t[i + m] != '\n') continue;
        *head_len = i;
        *tail = i + m < n ? t + i + m + 1 : t + n;
        *tail_len = (size_t)(t + n - *tail);
        return;
    }
    *head_len = n;
    *tail = NULL;
    *tail_len = 0;
}

/* 1 when the resolved path p lies inside directory d. */
static int inside(const char *p, const char *d)
{
    size_t l = strlen(d);
    return d[0] && strncmp(p, d, l) == 0 && (p[l] == '/' || p[l] == 0);
}

/* Reading: an existing regular file under the source root or the temporary
 * directory. Writing: a file directly in a directory under the latter. */
static int allowed(const char *path, int write)
{
    fuzz_tmpdir();
    char real[PATH_MAX];
    if (!write) {
        struct stat st;
        return realpath(path, real) && stat(real, &st) == 0 && S_ISREG(st.st_mode) &&
               (inside(real, g_root) || inside(real, g_tmp));
    }
    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    if (!slash) snprintf(dir, sizeof dir, ".");
    else if (slash == dir) dir[1] = 0;
    else *slash = 0;
    return realpath(dir, real) && inside(real, g_tmp);
}

FILE *fuzz_sandbox_fopen(const char *path, const char *mode);
int fuzz_sandbox_open(const char *path, int flags, ...);

FILE *fuzz_sandbox_fopen(const char *path, const char *mode)
{
    if (!allowed(path, strpbrk(mode, "wa+") != NULL)) {
        errno = EACCES;
        return NULL;
    }
    return fopen(path, mode);
}

int fuzz_sandbox_open(const char *path, int flags, ...)
{
    mode_t mode = 0;
    if ((flags & O_CREAT) || (flags & O_TMPFILE) == O_TMPFILE) {
        va_list ap;
        va_start(ap, flags);
        mode = (mode_t)va_arg(ap, int);
        va_end(ap);
    }
    int write = (flags & O_ACCMODE) != O_RDONLY || (flags & (O_CREAT | O_TRUNC));
    if (!allowed(path, write)) {
        errno = EACCES;
        return -1;
    }
    return open(path, flags, mode);
}
