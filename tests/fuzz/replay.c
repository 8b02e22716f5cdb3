/* replay — a main() for the fuzz targets without libFuzzer: feeds each file
 * named on the command line (a directory: each file in it, in name order) to
 * LLVMFuzzerTestOneInput once, as libFuzzer does when given files. With the
 * ASan+UBSan build this replays the committed corpora in `make test`
 * (tests/cli/fuzz_replay.sh) with gcc alone.
 *
 * Prints "replayed N inputs" and exits 0; a sanitizer report or a broken
 * property aborts (the input being run is named on stderr first); an
 * unreadable file exits 1.
 */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz.h"

__attribute__((weak)) int LLVMFuzzerInitialize(int *argc, char ***argv);

/* Runs one file; 0, or -1 when it cannot be read. */
static int run_file(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        perror(path);
        return -1;
    }
    char *buf = NULL;
    size_t n = 0, cap = 0;
    for (;;) {
        if (n == cap) {
            char *b = realloc(buf, cap ? cap * 2 : 4096);
            if (!b) break;
            buf = b;
            cap = cap ? cap * 2 : 4096;
        }
        size_t got = fread(buf + n, 1, cap - n, f);
        n += got;
        if (got == 0) break;
    }
    int bad = ferror(f) || !feof(f);
    fclose(f);
    if (bad) {
        fprintf(stderr, "%s: read failed\n", path);
        free(buf);
        return -1;
    }
    fprintf(stderr, "replay: %s\n", path);
    /* A copy of exactly n bytes, as libFuzzer passes: ASan then catches a
     * read past the end of the input. */
    unsigned char *data = malloc(n ? n : 1);
    if (!data) {
        free(buf);
        return -1;
    }
    if (n) memcpy(data, buf, n);
    free(buf);
    LLVMFuzzerTestOneInput(data, n);
    free(data);
    return 0;
}

static int skip_dot(const struct dirent *e)
{
    return e->d_name[0] != '.';
}

/* Runs a file, or every file of a directory; adds to *count. */
static int run_path(const char *path, long *count)
{
    struct stat st;
    if (stat(path, &st) != 0) {
        perror(path);
        return -1;
    }
    if (!S_ISDIR(st.st_mode)) {
        ++*count;
        return run_file(path);
    }
    struct dirent **names;
    int n = scandir(path, &names, skip_dot, alphasort);
    if (n < 0) {
        perror(path);
        return -1;
    }
    int rc = 0;
    for (int i = 0; i < n; i++) {
        char p[4096];
        snprintf(p, sizeof p, "%s/%s", path, names[i]->d_name);
        if (rc == 0 && run_path(p, count) != 0) rc = -1;
        free(names[i]);
    }
    free(names);
    return rc;
}

int main(int argc, char **argv)
{
    if (LLVMFuzzerInitialize) LLVMFuzzerInitialize(&argc, &argv);
    long count = 0;
    for (int i = 1; i < argc; i++)
        if (run_path(argv[i], &count) != 0) return 1;
    printf("replayed %ld inputs\n", count);
    return 0;
}
