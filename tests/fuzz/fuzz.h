/* fuzz.h — what the fuzz targets (tests/fuzz/fuzz_*.c) share.
 *
 * Each target defines LLVMFuzzerTestOneInput and feeds one input to a public
 * reader of the simulator. It is linked two ways (see the Makefile):
 *   - `make fuzz`: with clang's libFuzzer (-fsanitize=fuzzer,address,undefined),
 *     which mutates inputs, guided by coverage;
 *   - every build (optimised and ASan+UBSan): with tests/fuzz/replay.c, a
 *     main() that feeds the committed corpus files, so `make test` replays
 *     them without clang (tests/cli/fuzz_replay.sh).
 *
 * The readers only take paths, so inputs are written to files in one private
 * temporary directory per process (fuzz_tmpdir), removed at exit. Every
 * target is linked with -Wl,--wrap=fopen,--wrap=open (tests/fuzz/sandbox.c):
 * the library may read regular files under the source tree or the temporary
 * directory and write only in the latter, so an input naming /dev/zero, a
 * FIFO or a file elsewhere gets EACCES instead of a hang, a different answer
 * on another machine, or a file written outside the sandbox.
 *
 * A broken property (a round trip that fails) is reported with fuzz_fail,
 * which aborts: libFuzzer saves the input as a crash, the replay fails.
 */
#ifndef SPECSIM_FUZZ_H
#define SPECSIM_FUZZ_H

#include <stddef.h>
#include <stdint.h>

/* libFuzzer's entry points (the replay driver calls them the same way). */
int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The process's temporary directory (created on first use, removed with
 * everything in it at exit). Aborts when it cannot be created. */
const char *fuzz_tmpdir(void);

/* Empties the temporary directory: every input starts from the same state
 * whatever the inputs before it left there. */
void fuzz_reset(void);

/* Writes data[0..n) to fuzz_tmpdir()/name, replacing it; the path is written
 * into out (size outsz). Aborts on an I/O error (a broken sandbox, not an
 * input problem). */
void fuzz_write_file(const char *name, const void *data, size_t n, char *out,
                     size_t outsz);

/* Prints "fuzz: WHAT" and the detail to stderr, then aborts. */
_Noreturn void fuzz_fail(const char *what, const char *detail);

/* The reader refused t[0..n), which holds a NUL byte, with msg: aborts
 * unless msg starts "PATH:LINE:COL: " at the first NUL (lines and columns
 * counted in t, which is the text as the reader saw it). */
void fuzz_check_nul(const char *t, size_t n, const char *path, const char *msg);

/* Splits the text t[0..n) at the first line that is exactly `marker`
 * (without its newline): *head_len = length before that line, *tail points
 * after it (NULL and *tail_len 0 when the marker is absent). */
void fuzz_split(const char *t, size_t n, const char *marker, size_t *head_len,
                const char **tail, size_t *tail_len);

#endif
