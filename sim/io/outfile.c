/* outfile — output targets, atomic files and the temporaries' registry
 * (see outfile.h). */
#include "io/outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <libgen.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/thread.h"
#include "io/infile.h"

/* ---- the registry of temporaries ----------------------------------------- */

/* The one piece of process-wide state here, and it has to be: a signal
 * handler gets no context but the signal. A slot is free (0), being filled
 * (1) or live (2); the handler reads only live slots, and only with
 * lock-free atomics and unlink(), which are async-signal-safe. A run holds
 * at most four temporaries at once (results, sidecar, trace, per-tenant). */
enum { TEMP_SLOTS = 16, SLOT_FREE = 0, SLOT_FILLING = 1, SLOT_LIVE = 2 };
_Static_assert(ATOMIC_INT_LOCK_FREE == 2, "the signal handler needs lock-free ints");

typedef struct temp_slot {
    atomic_int state;
    char path[OUTFILE_PATH_MAX + 32];
} temp_slot_t;

static temp_slot_t temps[TEMP_SLOTS];
static pthread_once_t handlers_once = PTHREAD_ONCE_INIT;
/* The signals caught are thread.h's (SIGINT, SIGTERM, SIGHUP, SIGPIPE):
 * every thread the code creates blocks them (thread_create), so they reach
 * a thread that blocks them only around the steps below. */

/* Removes every live temporary, then ends the process as the signal's
 * default action would: the signal is blocked while this runs, so the
 * raise() takes effect when the handler returns, with the default restored.
 * The final outputs are never touched: only temporaries are listed. */
static void on_signal(int sig)
{
    for (int i = 0; i < TEMP_SLOTS; i++)
        if (atomic_load(&temps[i].state) == SLOT_LIVE) unlink(temps[i].path);
    struct sigaction dfl;
    memset(&dfl, 0, sizeof dfl);
    dfl.sa_handler = SIG_DFL;
    sigemptyset(&dfl.sa_mask);
    sigaction(sig, &dfl, NULL);
    raise(sig);
}

/* Only signals left at their default: one the process ignores (nohup's
 * SIGHUP, SIGINT of a background job) must stay ignored, and a handler
 * someone else installed is theirs. */
static void install_handlers(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    for (int i = 0; i < THREAD_NSIGNALS; i++) sigaddset(&sa.sa_mask, thread_signals[i]);
    for (int i = 0; i < THREAD_NSIGNALS; i++) {
        struct sigaction old;
        if (sigaction(thread_signals[i], NULL, &old) != 0) continue;
        if ((old.sa_flags & SA_SIGINFO) || old.sa_handler != SIG_DFL) continue;
        sigaction(thread_signals[i], &sa, NULL);
    }
}

/* Blocks the cleanup signals (old mask in *old), so that creating a file
 * and listing it, or renaming it and forgetting it, happen as one step. */
static void block_signals(sigset_t *old)
{
    sigset_t set;
    sigemptyset(&set);
    for (int i = 0; i < THREAD_NSIGNALS; i++) sigaddset(&set, thread_signals[i]);
    pthread_sigmask(SIG_BLOCK, &set, old);
}

static void restore_signals(const sigset_t *old)
{
    pthread_sigmask(SIG_SETMASK, old, NULL);
}

/* Lists path; its slot + 1, or 0 when every slot is taken. */
static int temp_add(const char *path)
{
    pthread_once(&handlers_once, install_handlers);
    for (int i = 0; i < TEMP_SLOTS; i++) {
        int expect = SLOT_FREE;
        if (!atomic_compare_exchange_strong(&temps[i].state, &expect, SLOT_FILLING))
            continue;
        snprintf(temps[i].path, sizeof temps[i].path, "%s", path);
        atomic_store(&temps[i].state, SLOT_LIVE);
        return i + 1;
    }
    return 0;
}

static void temp_del(int slot)
{
    if (slot > 0 && slot <= TEMP_SLOTS) atomic_store(&temps[slot - 1].state, SLOT_FREE);
}

/* Removes o's temporary, if any, and forgets it. */
static void drop_temp(outfile_t *o)
{
    if (!o->tmp[0]) return;
    sigset_t old;
    block_signals(&old);
    unlink(o->tmp);
    temp_del(o->slot);
    restore_signals(&old);
    o->slot = 0;
    o->tmp[0] = '\0';
}

/* ---- targets ------------------------------------------------------------- */

static int copy_path(char *dst, size_t n, const char *src, err_t *err)
{
    int w = snprintf(dst, n, "%s", src);
    if (w < 0 || (size_t)w >= n) return err_set(err, ERR_RUNTIME, "%s: path too long", src);
    return 0;
}

/* Classifies path and fills dest (n bytes) with what a temporary would be
 * renamed onto: path itself, or the regular file a link points to. */
static int classify(const char *path, outfile_kind_t *kind, char *dest, size_t n,
                    err_t *err)
{
    struct stat st;
    if (lstat(path, &st) != 0) {
        if (errno != ENOENT) return err_set(err, ERR_RUNTIME, "%s: %s", path, strerror(errno));
        *kind = OUTFILE_NEW;
        return copy_path(dest, n, path, err);
    }
    int link = S_ISLNK(st.st_mode);
    if (link && stat(path, &st) != 0)
        return err_set(err, ERR_INPUT, "%s: is a symbolic link to nothing (%s): refusing "
                       "to replace the link", path, strerror(errno));
    if (S_ISREG(st.st_mode)) {
        *kind = OUTFILE_REGULAR;
        if (!link) return copy_path(dest, n, path, err);
        char *real = realpath(path, NULL);
        if (!real) return err_set(err, ERR_RUNTIME, "%s: %s", path, strerror(errno));
        int rc = copy_path(dest, n, real, err);
        free(real);
        return rc;
    }
    if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
        *kind = OUTFILE_STREAM;
        return copy_path(dest, n, path, err);
    }
    const char *what = S_ISDIR(st.st_mode) ? "a directory"
                       : S_ISBLK(st.st_mode) ? "a block device"
                       : S_ISSOCK(st.st_mode) ? "a socket" : "not a regular file";
    return err_set(err, ERR_INPUT, "%s: is %s: outputs go to regular files, character "
                   "devices (such as /dev/null) or FIFOs", path, what);
}

int outfile_kind(const char *path, outfile_kind_t *kind, err_t *err)
{
    char dest[OUTFILE_PATH_MAX];
    return classify(path, kind, dest, sizeof dest, err);
}

/* ---- writing ------------------------------------------------------------- */

/* A device or FIFO as it is: O_WRONLY without O_CREAT or O_TRUNC, so that
 * nothing but its stream of bytes is touched. A FIFO blocks here until
 * someone reads it, as a shell redirection would. */
static int open_stream(outfile_t *o, err_t *err)
{
    int fd = open(o->name, O_WRONLY | O_CLOEXEC | O_NOCTTY);
    if (fd < 0) return err_set(err, ERR_RUNTIME, "%s: %s", o->name, strerror(errno));
    if (!(o->f = fdopen(fd, "w"))) {
        int e = errno;
        close(fd);
        return err_set(err, ERR_RUNTIME, "%s: %s", o->name, strerror(e));
    }
    o->stream = 1;
    return 0;
}

/* The temporary is created and listed with the cleanup signals blocked, so
 * an interrupt can find it unlisted only if it does not exist. */
static int open_temp(outfile_t *o, err_t *err)
{
    int n = snprintf(o->tmp, sizeof o->tmp, "%s.tmp.%ld", o->dest, (long)getpid());
    if (n < 0 || (size_t)n >= sizeof o->tmp) {
        o->tmp[0] = '\0';
        return err_set(err, ERR_RUNTIME, "%s: path too long", o->name);
    }
    sigset_t old;
    block_signals(&old);
    /* O_EXCL: never write through a link or over a file someone else is
     * writing; the name carries our pid, so a clash is a real conflict. */
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    int e = errno;
    if (fd >= 0 && !(o->slot = temp_add(o->tmp))) {
        close(fd);
        unlink(o->tmp);
        fd = -1;
        e = EMFILE;
    }
    restore_signals(&old);
    if (fd < 0) {
        err_set(err, ERR_RUNTIME, "%s: cannot create %s: %s", o->name, o->tmp, strerror(e));
        o->tmp[0] = '\0';
        return -1;
    }
    if (!(o->f = fdopen(fd, "w"))) {
        e = errno;
        close(fd);
        drop_temp(o);
        return err_set(err, ERR_RUNTIME, "%s: %s", o->name, strerror(e));
    }
    return 0;
}

int outfile_open(outfile_t *o, const char *path, err_t *err)
{
    memset(o, 0, sizeof *o);
    o->name = path;
    if (!path || !path[0]) return err_set(err, ERR_INPUT, "output file: empty path");
    outfile_kind_t kind;
    if (classify(path, &kind, o->dest, sizeof o->dest, err) != 0) return -1;
    return kind == OUTFILE_STREAM ? open_stream(o, err) : open_temp(o, err);
}

int outfile_close(outfile_t *o, err_t *err)
{
    if (!o->f) return 0;
    int e = 0;
    const char *what = NULL;
    if (fflush(o->f) == EOF || ferror(o->f)) { e = errno; what = "write"; }
    else if (!o->stream && fsync(fileno(o->f)) != 0) { e = errno; what = "fsync"; }
    if (fclose(o->f) == EOF && !what) { e = errno; what = "close"; }
    o->f = NULL;
    if (!what) return 0;
    drop_temp(o);
    return err_set(err, ERR_RUNTIME, "%s: %s failed: %s", o->name, what,
                   e ? strerror(e) : "I/O error");
}

/* The rename is what makes the file appear whole or not at all; the
 * directory is not fsynced, so a power cut may lose the new file but can
 * never expose a partial one. */
int outfile_publish(outfile_t *o, err_t *err)
{
    if (!o->tmp[0]) return 0;
    sigset_t old;
    block_signals(&old);
    int rc = rename(o->tmp, o->dest);
    int e = errno;
    if (rc == 0) {
        temp_del(o->slot);
        o->slot = 0;
    }
    restore_signals(&old);
    if (rc == 0) {
        o->tmp[0] = '\0';
        return 0;
    }
    err_set(err, ERR_RUNTIME, "%s: cannot rename %s onto it: %s", o->name, o->tmp,
            strerror(e));
    drop_temp(o);
    return -1;
}

int outfile_commit(outfile_t *o, err_t *err)
{
    if (outfile_close(o, err) != 0) return -1;
    return outfile_publish(o, err);
}

void outfile_abort(outfile_t *o)
{
    if (o->f) fclose(o->f);   /* result irrelevant: the file is being discarded */
    o->f = NULL;
    drop_temp(o);
}

int outfile_probe(const char *path, err_t *err)
{
    outfile_kind_t kind;
    if (outfile_kind(path, &kind, err) != 0) return -1;
    /* Opening a FIFO would wait for its reader: being one is enough. */
    if (kind == OUTFILE_STREAM) return 0;
    outfile_t o;
    if (outfile_open(&o, path, err) != 0) return -1;
    outfile_abort(&o);
    return 0;
}

/* ---- collisions ---------------------------------------------------------- */

/* An absolute path for a file that does not exist yet: its directory
 * resolved (links and all), then its name. The path as given when even
 * the directory is missing (writing there fails anyway). */
static void normalize(const char *path, char *out, size_t n)
{
    char d[OUTFILE_PATH_MAX], b[OUTFILE_PATH_MAX];
    snprintf(d, sizeof d, "%s", path);
    snprintf(b, sizeof b, "%s", path);
    char *real = realpath(dirname(d), NULL);
    if (!real) {
        snprintf(out, n, "%s", path);
        return;
    }
    snprintf(out, n, "%s/%s", strcmp(real, "/") ? real : "", basename(b));
    free(real);
}

int outfile_same(const char *a, const char *b)
{
    struct stat sa, sb;
    int ea = stat(a, &sa) == 0, eb = stat(b, &sb) == 0;
    if (ea && eb) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (ea || eb) return 0;
    char na[OUTFILE_PATH_MAX], nb[OUTFILE_PATH_MAX];
    normalize(a, na, sizeof na);
    normalize(b, nb, sizeof nb);
    return strcmp(na, nb) == 0;
}

static int skipped(const char *path)
{
    struct stat st;
    if (!path || !path[0] || strcmp(path, "-") == 0) return 1;
    return stat(path, &st) == 0 && S_ISCHR(st.st_mode);
}

/* The article before a role in "give ... another name": a role may read
 * "--out" or "the output", and gets one article either way. */
static const char *article(const char *what)
{
    return strncmp(what, "the ", 4) == 0 ? "" : "the ";
}

int outfile_distinct(const outfile_role_t *r, int n, err_t *err)
{
    for (int i = 0; i < n; i++) {
        if (!r[i].output || skipped(r[i].path)) continue;
        for (int j = 0; j < n; j++) {
            /* Two outputs are one pair: named once, in the caller's order. */
            if (j == i || (r[j].output && j > i) || skipped(r[j].path)) continue;
            if (!outfile_same(r[i].path, r[j].path)) continue;
            return err_set(err, ERR_INPUT, "%s %s and %s %s are the same file: "
                           "refusing to %s; give %s%s another name", r[j].what,
                           r[j].path, r[i].what, r[i].path,
                           r[j].output ? "let one output overwrite the other"
                                       : "overwrite an input with an output",
                           article(r[i].what), r[i].what);
        }
    }
    return 0;
}

int outfile_not_read(const outfile_role_t *r, int n, struct infiles *fs, err_t *err)
{
    size_t nf = fs ? infiles_count(fs) : 0;
    for (int i = 0; i < n; i++) {
        if (!r[i].output || skipped(r[i].path)) continue;
        for (size_t k = 0; k < nf; k++) {
            const char *in = infiles_path(fs, k);
            if (!outfile_same(r[i].path, in)) continue;
            return err_set(err, ERR_INPUT, "%s %s is %s, a file the scenario reads: "
                           "refusing to overwrite an input with an output; give %s%s "
                           "another name", r[i].what, r[i].path, in, article(r[i].what),
                           r[i].what);
        }
    }
    return 0;
}
