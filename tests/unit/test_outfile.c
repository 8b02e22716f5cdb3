/* test_outfile — sim/io/outfile.h: what each kind of target gets, which paths
 * are one file, and the temporaries an interrupt removes (in a child
 * process, which the signal really ends). */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "io/infile.h"
#include "io/outfile.h"

static char dir[64];

static int make_dir(void)
{
    snprintf(dir, sizeof dir, "/tmp/test_outfile.XXXXXX");
    return mkdtemp(dir) ? 0 : -1;
}

static void rm_dir(void)
{
    DIR *d = opendir(dir);
    if (!d) return;
    struct dirent *e;
    char p[600];
    while ((e = readdir(d))) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(p, sizeof p, "%s/%s", dir, e->d_name);
        struct stat st;
        if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode)) rmdir(p);
        else unlink(p);
    }
    closedir(d);
    rmdir(dir);
}

/* Names in dir containing ".tmp." */
static int temporaries(void)
{
    DIR *d = opendir(dir);
    if (!d) return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".tmp.")) n++;
    closedir(d);
    return n;
}

static int put(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    if (!f) return -1;
    int bad = fputs(text, f) == EOF;
    return fclose(f) == 0 && !bad ? 0 : -1;
}

static int same_text(const char *path, const char *text)
{
    char buf[256] = "";
    FILE *f = fopen(path, "r");
    if (!f) return 0;
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    fclose(f);
    buf[n] = '\0';
    return strcmp(buf, text) == 0;
}

/* A child opens two outputs (one over an existing file), writes, and is
 * sent sig: it must die of sig with both temporaries gone and the existing
 * file as it was. */
static void interrupted_by(int sig)
{
    char a[128], b[128];
    snprintf(a, sizeof a, "%s/a.csv", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    CHECK(put(a, "finished\n") == 0);
    pid_t pid = fork();
    if (pid == 0) {
        signal(sig, SIG_DFL);
        outfile_t x, y;
        err_t err = {0, ""};
        if (outfile_open(&x, a, &err) != 0 || outfile_open(&y, b, &err) != 0) _exit(3);
        fputs("half", x.f);
        fflush(x.f);
        raise(sig);
        _exit(4);   /* the signal did not end the process */
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sig);
    CHECK(temporaries() == 0);
    CHECK(same_text(a, "finished\n"));
    CHECK(access(b, F_OK) != 0);
}

static void test_signals_remove_temporaries(void)
{
    CHECK(make_dir() == 0);
    interrupted_by(SIGINT);
    interrupted_by(SIGTERM);
    interrupted_by(SIGHUP);
    rm_dir();
}

/* A signal the process ignores (nohup's SIGHUP) stays ignored: the output
 * is still committed. */
static void test_ignored_signal_stays_ignored(void)
{
    CHECK(make_dir() == 0);
    char a[128];
    snprintf(a, sizeof a, "%s/a.csv", dir);
    pid_t pid = fork();
    if (pid == 0) {
        signal(SIGHUP, SIG_IGN);
        outfile_t x;
        err_t err = {0, ""};
        if (outfile_open(&x, a, &err) != 0) _exit(3);
        fputs("done\n", x.f);
        raise(SIGHUP);
        _exit(outfile_commit(&x, &err) == 0 ? 0 : 5);
    }
    int status = 0;
    CHECK(pid > 0 && waitpid(pid, &status, 0) == pid);
    CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
    CHECK(same_text(a, "done\n"));
    CHECK(temporaries() == 0);
    rm_dir();
}

/* A FIFO gets the bytes through itself and stays a FIFO. */
static void test_fifo_written_through(void)
{
    CHECK(make_dir() == 0);
    char p[128];
    snprintf(p, sizeof p, "%s/pipe", dir);
    CHECK(mkfifo(p, 0600) == 0);
    /* Read end first (non-blocking), so the writer's open does not wait. */
    int rd = open(p, O_RDONLY | O_NONBLOCK);
    CHECK(rd >= 0);
    outfile_t o;
    err_t err = {0, ""};
    CHECK(outfile_open(&o, p, &err) == 0);
    CHECK(o.stream && !o.tmp[0]);
    if (o.f) fputs("row\n", o.f);
    CHECK(outfile_commit(&o, &err) == 0);
    char buf[16] = "";
    CHECK(read(rd, buf, sizeof buf - 1) == 4 && strcmp(buf, "row\n") == 0);
    close(rd);
    struct stat st;
    CHECK(lstat(p, &st) == 0 && S_ISFIFO(st.st_mode));
    outfile_kind_t k;
    CHECK(outfile_kind(p, &k, &err) == 0 && k == OUTFILE_STREAM);
    CHECK(outfile_probe(p, &err) == 0);   /* without waiting for a reader */
    rm_dir();
}

/* A link to a regular file stays a link; a link to nothing is refused. */
static void test_links(void)
{
    CHECK(make_dir() == 0);
    char target[128], link[128], dangling[128];
    snprintf(target, sizeof target, "%s/t.csv", dir);
    snprintf(link, sizeof link, "%s/l.csv", dir);
    snprintf(dangling, sizeof dangling, "%s/d.csv", dir);
    CHECK(put(target, "old\n") == 0);
    CHECK(symlink(target, link) == 0);
    CHECK(symlink("/nonexistent-dir/x", dangling) == 0);
    outfile_t o;
    err_t err = {0, ""};
    CHECK(outfile_open(&o, link, &err) == 0);
    if (o.f) fputs("new\n", o.f);
    CHECK(outfile_commit(&o, &err) == 0);
    struct stat st;
    CHECK(lstat(link, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(same_text(target, "new\n"));
    CHECK(outfile_open(&o, dangling, &err) == -1 && err.code == ERR_INPUT);
    CHECK(strstr(err.msg, dangling) != NULL);
    CHECK(lstat(dangling, &st) == 0 && S_ISLNK(st.st_mode));
    CHECK(temporaries() == 0);
    rm_dir();
}

/* Files that do not exist yet are one file when their directories are one
 * (here through a link to the directory). */
static void test_same_not_yet_existing(void)
{
    CHECK(make_dir() == 0);
    char sub[128], alias[128], a[160], b[160], c[160];
    snprintf(sub, sizeof sub, "%s/sub", dir);
    snprintf(alias, sizeof alias, "%s/alias", dir);
    CHECK(mkdir(sub, 0755) == 0 && symlink(sub, alias) == 0);
    snprintf(a, sizeof a, "%s/x.csv", sub);
    snprintf(b, sizeof b, "%s/x.csv", alias);
    snprintf(c, sizeof c, "%s/y.csv", alias);
    CHECK(outfile_same(a, b));
    CHECK(!outfile_same(a, c));
    /* one existing, one not: different files */
    CHECK(put(a, "x") == 0);
    CHECK(!outfile_same(a, c));
    CHECK(outfile_same(a, b));
    /* two outputs named by one role list: the error names both */
    const outfile_role_t r[] = {{a, "--out", 1}, {b, "--trace", 1}};
    err_t err = {0, ""};
    CHECK(outfile_distinct(r, 2, &err) == -1 && strstr(err.msg, a) && strstr(err.msg, b));
    CHECK(strstr(err.msg, "give the --trace another name") != NULL);
    /* a role that reads "the ..." is not given a second article */
    const outfile_role_t m[] = {{a, "the part", 0}, {b, "the output", 1}};
    CHECK(outfile_distinct(m, 2, &err) == -1);
    CHECK(strstr(err.msg, "give the output another name") != NULL);
    CHECK(strstr(err.msg, "the the") == NULL);
    unlink(a);
    rmdir(sub);
    rm_dir();
}

/* An output that is a file the scenario read (another spelling of it) is
 * refused naming both, with the message's wording of outfile_distinct. */
static void test_not_read(void)
{
    if (make_dir() != 0) { CHECK(0); return; }
    char in[128], same[128], other[128];
    snprintf(in, sizeof in, "%s/req.csv", dir);
    snprintf(same, sizeof same, "%s/./req.csv", dir);
    snprintf(other, sizeof other, "%s/out.csv", dir);
    CHECK(put(in, "time_s\n") == 0);
    infiles_t *fs = infiles_create();
    char *text = NULL;
    size_t len;
    err_t err = {0, ""};
    CHECK(fs && infiles_read(fs, in, 1024, &text, &len, &err) == 0);
    free(text);
    const outfile_role_t ok[] = {{in, "the scenario", 0}, {other, "--out", 1}};
    CHECK(outfile_not_read(ok, 2, fs, &err) == 0);
    const outfile_role_t bad[] = {{same, "--per-tenant", 1}};
    CHECK(outfile_not_read(bad, 1, fs, &err) == -1 && err.code == ERR_INPUT);
    CHECK(strstr(err.msg, same) && strstr(err.msg, in));
    CHECK(strstr(err.msg, "give the --per-tenant another name") != NULL);
    const outfile_role_t the[] = {{same, "the output", 1}};
    CHECK(outfile_not_read(the, 1, fs, &err) == -1);
    CHECK(strstr(err.msg, "give the output another name") != NULL);
    infiles_free(fs);
    rm_dir();
}

int main(void)
{
    RUN(test_signals_remove_temporaries);
    RUN(test_ignored_signal_stays_ignored);
    RUN(test_fifo_written_through);
    RUN(test_links);
    RUN(test_same_not_yet_existing);
    RUN(test_not_read);
    return check_done();
}
