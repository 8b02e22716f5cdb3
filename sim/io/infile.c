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

#include "base/datapath.h"
#include "base/sha256.h"
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
    char *abs;        /* the file named from anywhere (datapath_absolute) */
    uint8_t sha[SHA256_BYTES];   /* of text: the bytes the command used */
    char *text;
    size_t len;
    ynode_t *tree;    /* the text parsed, once asked for (NULL: empty) */
    int parsed;
} entry_t;

/* Another name a file was asked for by (the same file, datapath_absolute
 * says): a sweep point names by its absolute path a file that the sweep's
 * checks read by the name written (sim/run/sweep.c), and must get the bytes
 * read then, not a second copy. */
typedef struct alias {
    char *path;
    entry_t *e;
} alias_t;

struct infiles {
    pthread_mutex_t mu;
    entry_t **e;      /* each malloc'ed, so its strings never move */
    size_t n, cap;
    alias_t *al;
    size_t nal, calias;
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
        free(fs->e[i]->abs);
        free(fs->e[i]->text);
        ynode_free(fs->e[i]->tree);
        free(fs->e[i]);
    }
    free(fs->e);
    for (size_t i = 0; i < fs->nal; i++) free(fs->al[i].path);
    free(fs->al);
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
    for (size_t i = 0; i < fs->nal; i++)
        if (strcmp(fs->al[i].path, path) == 0) return fs->al[i].e;
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
    /* Named and digested now, while the working directory is the one the
     * path was opened from and the bytes are the ones read. */
    char abs[4096];
    if (strcmp(path, "-") == 0) snprintf(abs, sizeof abs, "-");
    else if (datapath_absolute(path, abs, sizeof abs) != 0) {
        /* A sidecar would name it relative to the wrong place. */
        free(e->path);
        free(e->text);
        free(e);
        err_set(err, ERR_RUNTIME, "%s: cannot name it by an absolute path "
                "(longer than %zu bytes, or no working directory)", path, sizeof abs);
        return NULL;
    }
    sha256(e->text, e->len, e->sha);
    if (!(e->abs = strdup(abs))) {
        free(e->path);
        free(e->text);
        free(e);
        err_set(err, ERR_RUNTIME, "%s: out of memory", path);
        return NULL;
    }
    if (fs->n == fs->cap) {
        size_t nc = fs->cap ? 2 * fs->cap : 8;
        entry_t **a = realloc(fs->e, nc * sizeof *a);
        if (!a) {
            free(e->path);
            free(e->abs);
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

/* With fs->mu held: the entry of path, read now unless the set holds the
 * same file under another name (kept as an alias of that entry then). */
static entry_t *get(infiles_t *fs, const char *path, size_t cap, err_t *err)
{
    entry_t *e = (entry_t *)find(fs, path);
    if (e) return e;
    char abs[4096];
    if (strcmp(path, "-") != 0 && datapath_absolute(path, abs, sizeof abs) == 0) {
        for (size_t i = 0; i < fs->n; i++) {
            if (strcmp(fs->e[i]->abs, abs) != 0) continue;
            if (fs->nal == fs->calias) {
                size_t nc = fs->calias ? 2 * fs->calias : 4;
                alias_t *a = realloc(fs->al, nc * sizeof *a);
                if (!a) return fs->e[i];   /* found again next time */
                fs->al = a;
                fs->calias = nc;
            }
            char *p = strdup(path);
            if (p) fs->al[fs->nal++] = (alias_t){p, fs->e[i]};
            return fs->e[i];
        }
    }
    return (entry_t *)add(fs, path, cap, err);
}

int infiles_read(infiles_t *fs, const char *path, size_t cap, char **text,
                 size_t *len, err_t *err)
{
    if (!fs) return infile_read(path, cap, text, len, err);
    *text = NULL;
    *len = 0;
    pthread_mutex_lock(&fs->mu);
    const entry_t *e = get(fs, path, cap, err);
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
    entry_t *e = get(fs, path, cap, err);
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

/* The i-th file's absolute path (infile.h), NULL past the end. */
static const char *infiles_abspath(infiles_t *fs, size_t i)
{
    if (!fs) return NULL;
    pthread_mutex_lock(&fs->mu);
    const char *p = i < fs->n ? fs->e[i]->abs : NULL;
    pthread_mutex_unlock(&fs->mu);
    return p;
}

/* The i-th file's SHA-256, -1 past the end. */
static int infiles_sha256(infiles_t *fs, size_t i, uint8_t out[SHA256_BYTES])
{
    if (!fs) return -1;
    pthread_mutex_lock(&fs->mu);
    int rc = i < fs->n ? 0 : -1;
    if (rc == 0) memcpy(out, fs->e[i]->sha, SHA256_BYTES);
    pthread_mutex_unlock(&fs->mu);
    return rc;
}

int infiles_write_reads(infiles_t *fs, FILE *f)
{
    size_t n = infiles_count(fs);
    for (size_t i = 0; i < n; i++) {
        const char *p = infiles_abspath(fs, i);
        uint8_t d[SHA256_BYTES];
        char hex[SHA256_HEX];
        if (!p || infiles_sha256(fs, i, d) != 0) return -1;
        sha256_hex(d, hex);
        /* A line break would end the comment and make the rest YAML. */
        int w = strchr(p, '\n') ? fprintf(f, "# read a file whose name holds a line "
                                           "break, sha256 %s\n", hex)
                                : fprintf(f, "# read %s sha256 %s\n", p, hex);
        if (w < 0) return -1;
    }
    return ferror(f) ? -1 : 0;
}

char *infiles_reads_text(infiles_t *fs)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    if (!f) return NULL;
    int bad = infiles_write_reads(fs, f);
    if (fclose(f) != 0 || bad) {
        free(buf);
        return NULL;
    }
    return buf;
}

int infiles_reads_parse(const char *line, size_t len, char *path, size_t pathsz,
                        uint8_t sha[SHA256_BYTES])
{
    static const char head[] = "# read ", mid[] = " sha256 ";
    size_t hl = sizeof head - 1, ml = sizeof mid - 1, hexl = 2 * SHA256_BYTES;
    if (len < hl + 1 + ml + hexl || memcmp(line, head, hl) != 0 ||
        memcmp(line + len - hexl - ml, mid, ml) != 0)
        return -1;
    size_t pl = len - hexl - ml - hl;
    if (pl >= pathsz) return -1;
    const char *hex = line + len - hexl;
    for (size_t k = 0; k < SHA256_BYTES; k++) {
        int v = 0;
        for (int j = 0; j < 2; j++) {
            char c = hex[2 * k + (size_t)j];
            int x = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
            if (x < 0) return -1;
            v = v * 16 + x;
        }
        sha[k] = (uint8_t)v;
    }
    memcpy(path, line + hl, pl);
    path[pl] = '\0';
    return 0;
}

int infiles_find_abs(infiles_t *fs, const char *abs, uint8_t sha[SHA256_BYTES])
{
    if (!fs) return 0;
    pthread_mutex_lock(&fs->mu);
    int found = 0;
    for (size_t i = 0; !found && i < fs->n; i++) {
        if (strcmp(fs->e[i]->abs, abs) != 0) continue;
        memcpy(sha, fs->e[i]->sha, SHA256_BYTES);
        found = 1;
    }
    pthread_mutex_unlock(&fs->mu);
    return found;
}
