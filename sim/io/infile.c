/* infile — bounded reads of regular files, once per command (see infile.h). */
#include "io/infile.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "io/ynode.h"

const char *infile_kind_name(mode_t m)
{
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a plain file";
}

int infile_find_nul(const char *text, size_t len, int *line, int *col)
{
    const char *z = memchr(text, 0, len);
    if (!z) return 0;
    const char *bol = text;
    *line = 1;
    for (const char *p = text; p < z; p++)
        if (*p == '\n') {
            ++*line;
            bol = p + 1;
        }
    *col = (int)(z - bol) + 1;
    return 1;
}

static int too_big(const char *path, unsigned long long n, size_t cap, err_t *err)
{
    return err_set(err, ERR_INPUT, "%s: %llu bytes or more; input files are "
                   "capped at %zu MiB (docs/formats.md, input limits)", path, n,
                   cap >> 20);
}

/* Reads fd to its end, at most cap bytes (one more proves it is over). */
static int read_all(int fd, const char *path, size_t cap, char **text,
                    size_t *len, err_t *err)
{
    size_t size = 4096, n = 0;
    char *buf = malloc(size);
    if (!buf) return err_set(err, ERR_RUNTIME, "%s: out of memory", path);
    for (;;) {
        if (n + 1 >= size) {
            size_t ns = size * 2 > cap + 2 ? cap + 2 : size * 2;
            char *b = ns > size ? realloc(buf, ns) : NULL;
            if (!b) {
                free(buf);
                return err_set(err, ERR_RUNTIME, "%s: out of memory", path);
            }
            buf = b;
            size = ns;
        }
        ssize_t got = read(fd, buf + n, size - 1 - n);
        if (got < 0 && errno == EINTR) continue;
        if (got < 0) {
            int e = errno;
            free(buf);
            return err_set(err, ERR_INPUT, "%s: read error: %s", path, strerror(e));
        }
        if (got == 0) break;
        n += (size_t)got;
        if (n > cap) {
            free(buf);
            return too_big(path, (unsigned long long)n, cap, err);
        }
    }
    buf[n] = 0;
    /* A UTF-8 byte-order mark (editors on Windows write one) is no text. */
    if (n >= 3 && memcmp(buf, "\xEF\xBB\xBF", 3) == 0) {
        memmove(buf, buf + 3, n - 2);
        n -= 3;
    }
    *text = buf;
    *len = n;
    return 0;
}

int infile_read(const char *path, size_t cap, char **text, size_t *len,
                err_t *err)
{
    *text = NULL;
    *len = 0;
    if (strcmp(path, "-") == 0) return read_all(STDIN_FILENO, "<stdin>", cap, text, len, err);
    /* Non-blocking: opening a FIFO without a writer must not hang; the
     * flag is cleared once fstat shows a regular file. */
    int fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY);
    if (fd < 0)
        return err_set(err, ERR_INPUT, "%s: cannot open: %s", path, strerror(errno));
    struct stat st;
    int rc;
    if (fstat(fd, &st) != 0)
        rc = err_set(err, ERR_INPUT, "%s: cannot stat: %s", path, strerror(errno));
    else if (!S_ISREG(st.st_mode))
        rc = err_set(err, ERR_INPUT, "%s: not a regular file (%s)", path,
                     infile_kind_name(st.st_mode));
    else if ((unsigned long long)st.st_size > cap)
        rc = too_big(path, (unsigned long long)st.st_size, cap, err);
    else if (fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) & ~O_NONBLOCK) != 0)
        rc = err_set(err, ERR_INPUT, "%s: %s", path, strerror(errno));
    else
        rc = read_all(fd, path, cap, text, len, err);
    close(fd);
    return rc;
}

/* ---- the set of files read ----------------------------------------------- */

typedef struct entry {
    char *path;
    char *text;
    size_t len;
    ynode_t *tree;    /* the text parsed, once asked for (NULL: empty) */
    int parsed;
} entry_t;

struct infiles {
    pthread_mutex_t mu;
    entry_t **e;      /* each malloc'ed, so its strings never move */
    size_t n, cap;
};

infiles_t *infiles_create(void)
{
    infiles_t *fs = calloc(1, sizeof *fs);
    if (!fs) return NULL;
    if (pthread_mutex_init(&fs->mu, NULL) != 0) {
        free(fs);
        return NULL;
    }
    return fs;
}

void infiles_free(infiles_t *fs)
{
    if (!fs) return;
    for (size_t i = 0; i < fs->n; i++) {
        free(fs->e[i]->path);
        free(fs->e[i]->text);
        ynode_free(fs->e[i]->tree);
        free(fs->e[i]);
    }
    free(fs->e);
    pthread_mutex_destroy(&fs->mu);
    free(fs);
}

static char *copy(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c) memcpy(c, s, n + 1);
    return c;
}

/* With fs->mu held: the entry of path, or NULL. */
static const entry_t *find(const infiles_t *fs, const char *path)
{
    for (size_t i = 0; i < fs->n; i++)
        if (strcmp(fs->e[i]->path, path) == 0) return fs->e[i];
    return NULL;
}

/* With fs->mu held: reads path and adds it. */
static const entry_t *add(infiles_t *fs, const char *path, size_t cap, err_t *err)
{
    entry_t *e = calloc(1, sizeof *e);
    if (!e || !(e->path = strdup(path))) {
        free(e);
        err_set(err, ERR_RUNTIME, "%s: out of memory", path);
        return NULL;
    }
    if (infile_read(path, cap, &e->text, &e->len, err) != 0) {
        free(e->path);
        free(e);
        return NULL;
    }
    if (fs->n == fs->cap) {
        size_t nc = fs->cap ? 2 * fs->cap : 8;
        entry_t **a = realloc(fs->e, nc * sizeof *a);
        if (!a) {
            free(e->path);
            free(e->text);
            free(e);
            err_set(err, ERR_RUNTIME, "%s: out of memory", path);
            return NULL;
        }
        fs->e = a;
        fs->cap = nc;
    }
    fs->e[fs->n++] = e;
    return e;
}

int infiles_read(infiles_t *fs, const char *path, size_t cap, char **text,
                 size_t *len, err_t *err)
{
    if (!fs) return infile_read(path, cap, text, len, err);
    *text = NULL;
    *len = 0;
    pthread_mutex_lock(&fs->mu);
    const entry_t *e = find(fs, path);
    if (!e) e = add(fs, path, cap, err);
    int rc = -1;
    if (e && e->len > cap) {
        too_big(path, (unsigned long long)e->len, cap, err);
    } else if (e) {
        *text = copy(e->text, e->len);
        *len = e->len;
        rc = *text ? 0 : err_set(err, ERR_RUNTIME, "%s: out of memory", path);
    }
    pthread_mutex_unlock(&fs->mu);
    return rc;
}

int infiles_yaml(infiles_t *fs, const char *path, size_t cap,
                 const struct ynode **tree, err_t *err)
{
    *tree = NULL;
    pthread_mutex_lock(&fs->mu);
    entry_t *e = (entry_t *)find(fs, path);
    if (!e) e = (entry_t *)add(fs, path, cap, err);
    int rc = e ? 0 : -1;
    if (e && e->len > cap) rc = too_big(path, (unsigned long long)e->len, cap, err);
    /* A syntax error is not remembered: the next request reports it too. */
    if (rc == 0 && !e->parsed) {
        rc = ynode_parse(e->path, NULL, e->text, e->len, 1, 0, &e->tree, err) ? -2 : 0;
        e->parsed = rc == 0;
    }
    if (rc == 0) *tree = e->tree;
    pthread_mutex_unlock(&fs->mu);
    return rc;
}

size_t infiles_count(infiles_t *fs)
{
    if (!fs) return 0;
    pthread_mutex_lock(&fs->mu);
    size_t n = fs->n;
    pthread_mutex_unlock(&fs->mu);
    return n;
}

const char *infiles_path(infiles_t *fs, size_t i)
{
    if (!fs) return NULL;
    pthread_mutex_lock(&fs->mu);
    const char *p = i < fs->n ? fs->e[i]->path : NULL;
    pthread_mutex_unlock(&fs->mu);
    return p;
}

size_t infiles_disk_reads(infiles_t *fs)
{
    return infiles_count(fs);
}
