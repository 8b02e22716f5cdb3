/* check.h — the test harness: one binary per test file, one line per test.
 *
 * Each test function runs through RUN(); it prints `PASS name` or
 * `FAIL name` (after the failing checks, each with file:line and values), and
 * check_done() returns the exit status. tests/run.sh counts these lines, so a
 * binary that crashes loses its remaining tests and is counted as failed.
 */
#ifndef SPECSIM_CHECK_H
#define SPECSIM_CHECK_H

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int check_failed_now;
static int check_n_pass, check_n_fail;

#define CHECK(cond)                                                         \
    do {                                                                    \
        if (!(cond)) {                                                      \
            printf("  %s:%d: CHECK(%s) failed\n", __FILE__, __LINE__, #cond); \
            check_failed_now = 1;                                           \
        }                                                                   \
    } while (0)

/* |a - b| <= rel * |b| (b is the independently derived expectation). */
#define CHECK_REL(a, b, rel)                                                \
    do {                                                                    \
        double check_a_ = (a), check_b_ = (b);                              \
        if (!(fabs(check_a_ - check_b_) <= (rel) * fabs(check_b_))) {      \
            printf("  %s:%d: %s = %.9g, expected %s = %.9g (rel tol %g)\n",  \
                   __FILE__, __LINE__, #a, check_a_, #b, check_b_,          \
                   (double)(rel));                                          \
            check_failed_now = 1;                                           \
        }                                                                   \
    } while (0)

#define CHECK_ABS(a, b, tol)                                                \
    do {                                                                    \
        double check_a_ = (a), check_b_ = (b);                              \
        if (!(fabs(check_a_ - check_b_) <= (tol))) {                        \
            printf("  %s:%d: %s = %.9g, expected %s = %.9g (abs tol %g)\n",  \
                   __FILE__, __LINE__, #a, check_a_, #b, check_b_,          \
                   (double)(tol));                                          \
            check_failed_now = 1;                                           \
        }                                                                   \
    } while (0)

#define CHECK_STR(a, b)                                                     \
    do {                                                                    \
        const char *check_a_ = (a), *check_b_ = (b);                        \
        if (!check_a_ || !check_b_ || strcmp(check_a_, check_b_) != 0) {    \
            printf("  %s:%d: %s = \"%s\", expected \"%s\"\n", __FILE__,      \
                   __LINE__, #a, check_a_ ? check_a_ : "(null)",            \
                   check_b_ ? check_b_ : "(null)");                         \
            check_failed_now = 1;                                           \
        }                                                                   \
    } while (0)

#define RUN(fn)                                                             \
    do {                                                                    \
        check_failed_now = 0;                                               \
        fn();                                                               \
        printf("%s %s\n", check_failed_now ? "FAIL" : "PASS", #fn);         \
        fflush(stdout);                                                     \
        if (check_failed_now) check_n_fail++; else check_n_pass++;          \
    } while (0)

/* Calls fn(path) for every file in dir whose name ends in suffix (readdir
 * order) and returns how many; a directory that cannot be opened fails the
 * current test and counts 0. */
static inline int check_each_file(const char *dir, const char *suffix,
                                  void (*fn)(const char *path))
{
    DIR *d = opendir(dir);
    CHECK(d != NULL);
    int n = 0;
    size_t sl = strlen(suffix);
    for (struct dirent *e; d && (e = readdir(d)) != NULL;) {
        size_t l = strlen(e->d_name);
        if (l <= sl || strcmp(e->d_name + l - sl, suffix) != 0) continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        fn(path);
        n++;
    }
    if (d) closedir(d);
    return n;
}

/* A new temporary file /tmp/specsim_test_XXXXXX, opened with mode ("w",
 * "w+"); its name goes to path (size sz). The caller closes and unlinks it.
 * NULL (the current test failed) when it cannot be made. */
static inline FILE *check_tmp_open(char *path, size_t sz, const char *mode)
{
    snprintf(path, sz, "/tmp/specsim_test_XXXXXX");
    int fd = mkstemp(path);
    FILE *f = fd >= 0 ? fdopen(fd, mode) : NULL;
    if (fd >= 0 && !f) close(fd);
    CHECK(f != NULL);
    return f;
}

/* A temporary file (check_tmp_open) holding text: 0, or -1. */
static inline int check_tmp_file(char *path, size_t sz, const char *text)
{
    FILE *f = check_tmp_open(path, sz, "w");
    if (!f) return -1;
    int rc = fputs(text, f) == EOF ? -1 : 0;
    return fclose(f) != 0 ? -1 : rc;
}

static inline int check_done(void)
{
    return check_n_fail ? 1 : 0;
}

#endif
