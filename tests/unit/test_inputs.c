/* Inputs (issue 14, items 6-10): every file a command reads is read once
 * (sim/io/infile.h, scenario_src in sim/config/scenario.h), bounded and only when it is
 * a regular file; relative paths resolve next to the scenario, then in the
 * specsim root, never the working directory; nothing a user writes is
 * silently dropped (tags, empty or null values, overrides of the sweep:
 * section); validating a long list axis copies the scenario without the
 * list for each value. Expected values come from the files the tests write
 * themselves. */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include "check.h"
#include "tmpdir.h"
#include "base/datapath.h"
#include "io/infile.h"
#include "config/scenario.h"
#include "config/sweepspec.h"

/* Loads a scenario file expecting an input error whose text holds every
 * one of want[] (NULL-terminated). */
static void load_fails(const char *file, const scenario_override_t *ov, int nov,
                       const char *const *want)
{
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load(file, ov, nov, &s, &err) == -1);
    CHECK(err.code == ERR_INPUT);
    for (int i = 0; want[i]; i++) {
        if (!strstr(err.msg, want[i])) printf("  '%s' lacks '%s'\n", err.msg, want[i]);
        CHECK(strstr(err.msg, want[i]) != NULL);
    }
}

/* A tiny scenario: no model service to build. */
#define BASE "duration: 1s\nwarmup: 0.1s\n"
#define EDGE "tenants: {edge: {draft_time: 10ms}}\n"
#define TINY BASE EDGE "cloud: {verify_time: 5ms}\n"

/* ---- item 7: bounded reads of regular files only -------------------------- */

static void test_not_regular(void)
{
    /* /dev/zero never ends: it must be refused before any read (old code
     * read it until memory ran out). */
    load_fails("/dev/zero", NULL, 0,
               (const char *[]){"/dev/zero", "not a regular file", "character device", NULL});
    load_fails(dir, NULL, 0, (const char *[]){dir, "directory", NULL});
    /* A FIFO with no writer: opened non-blocking, refused at once (old code
     * blocked in open forever; the alarm turns that into a failure). */
    CHECK(mkfifo(path("fifo"), 0600) == 0);
    alarm(20);
    load_fails(path("fifo"), NULL, 0, (const char *[]){"fifo", "a FIFO", NULL});
    /* The same for a card, an empirical value file and an acceptance trace:
     * the error names the key that refers to it and the file. */
    char yaml[512];
    snprintf(yaml, sizeof yaml, BASE EDGE "cloud: {verify_time: 5ms, gpu: %s}\n", path("fifo"));
    put("card.yaml", yaml);
    load_fails(path("card.yaml"), NULL, 0,
               (const char *[]){"cloud.gpu", "fifo", "not a regular file", NULL});
    snprintf(yaml, sizeof yaml, BASE "cloud: {verify_time: 5ms}\ntenants: {edge: {draft_time: "
             "{dist: empirical, file: %s}}}\n", path("fifo"));
    put("emp.yaml", yaml);
    load_fails(path("emp.yaml"), NULL, 0, (const char *[]){"fifo", "a FIFO", NULL});
    snprintf(yaml, sizeof yaml, TINY "acceptance: {model: trace, file: %s}\n",
             path("fifo"));
    put("acc.yaml", yaml);
    load_fails(path("acc.yaml"), NULL, 0, (const char *[]){"fifo", "a FIFO", NULL});
    alarm(0);
    unlink(path("fifo"));
}

static void test_size_cap(void)
{
    /* A sparse file one byte over the YAML cap: refused from its size. */
    int fd = open(path("big.yaml"), O_WRONLY | O_CREAT | O_TRUNC, 0600);
    CHECK(fd >= 0);
    CHECK(ftruncate(fd, (off_t)INFILE_YAML_MAX + 1) == 0);
    close(fd);
    load_fails(path("big.yaml"), NULL, 0, (const char *[]){"big.yaml", "capped at 16 MiB", NULL});
    unlink(path("big.yaml"));
    /* At the cap exactly it is read (and its text judged). */
    char *text;
    size_t len;
    err_t err = {0};
    put("small", "abc");
    CHECK(infile_read(path("small"), 3, &text, &len, &err) == 0 && len == 3);
    free(text);
    CHECK(infile_read(path("small"), 2, &text, &len, &err) == -1 && err.code == ERR_INPUT);
    CHECK(infile_read(path("none"), 2, &text, &len, &err) == -1 &&
          strstr(err.msg, strerror(ENOENT)) && strstr(err.msg, "none"));
}

/* ---- item 10: nothing silently ignored ------------------------------------- */

static void test_refused(void)
{
    put("tag.yaml", TINY "seed: !!binary aGVsbG8=\n");
    load_fails(path("tag.yaml"), NULL, 0, (const char *[]){"tag.yaml:5:7:", "tags", NULL});
    put("obj.yaml", TINY "name: !!python/object:os.system {}\n");
    load_fails(path("obj.yaml"), NULL, 0, (const char *[]){"obj.yaml:5:7:", "tags", NULL});
    put("null.yaml", TINY "seed:\n");
    load_fails(path("null.yaml"), NULL, 0,
               (const char *[]){"null.yaml:5:", "seed", "no value", NULL});
    put("ok.yaml", TINY "seed: 7\n");
    scenario_override_t empty[] = {{.path = "seed", .value = ""}};
    load_fails(path("ok.yaml"), empty, 1, (const char *[]){"--set:1:1: seed:", "no value", NULL});
    scenario_override_t sw[] = {{.path = "seed", .value = "3"},
                                {.path = "sweep.seed", .value = "[1, 2]"}};
    load_fails(path("ok.yaml"), sw, 2, (const char *[]){"--set:2:1: sweep.seed:", "sweep:", NULL});
    scenario_override_t sw2[] = {{.path = "sweep", .value = "garbage"}};
    load_fails(path("ok.yaml"), sw2, 1, (const char *[]){"--set:1:1: sweep:", NULL});
    /* A UTF-8 byte-order mark is no text: the file reads as without it. */
    put("bom.yaml", "\xEF\xBB\xBF" TINY "seed: 7\n");
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load(path("bom.yaml"), NULL, 0, &s, &err) == 0);
    if (err.code) printf("  %s\n", err.msg);
    else {
        CHECK(s.seed == 7);
        scenario_fini(&s);
    }
}

/* ---- item 6: one read per command ------------------------------------------- */

static void test_read_once(void)
{
    char yaml[512];
    put("gpu.yaml", "kind: gpu\nmem_bw: 1TB/s\nmem: 80GB\nflops: {fp32: 100TFLOPS, "
        "fp16: 1PFLOPS}\nsource: test\n");
    snprintf(yaml, sizeof yaml, BASE EDGE "seed: 11\ncloud: {verify_time: 5ms, gpu: gpu.yaml}\n");
    put("once.yaml", yaml);
    scenario_src_t *src;
    err_t err = {0};
    CHECK(scenario_src_open(path("once.yaml"), &src, &err) == 0);
    if (!src) { printf("  %s\n", err.msg); return; }
    scenario_t a, b;
    CHECK(scenario_src_load(src, NULL, 0, &a, &err) == 0);
    size_t reads = infiles_disk_reads(scenario_src_files(src));
    /* Both files change on disk: later loads of the same command must not
     * see it (a sweep's rows would otherwise mix two scenarios). */
    put("once.yaml", BASE EDGE "seed: 12\ncloud: {verify_time: 5ms, gpu: gpu.yaml}\n");
    put("gpu.yaml", "kind: gpu\nmem_bw: 2TB/s\nmem: 80GB\nflops: {fp32: 100TFLOPS, "
        "fp16: 1PFLOPS}\nsource: test\n");
    CHECK(scenario_src_load(src, NULL, 0, &b, &err) == 0);
    CHECK(a.seed == 11 && b.seed == 11);
    CHECK(a.cloud.gpu.mem_bw == 1e12 && b.cloud.gpu.mem_bw == 1e12);
    /* gpu.yaml, the default edge device and LLaMA-2-7B (draft and target):
     * each read once */
    CHECK(reads == 3 && infiles_disk_reads(scenario_src_files(src)) == reads);
    scenario_fini(&a);
    scenario_fini(&b);
    scenario_src_free(src);
}

/* A sweep's points name by absolute path the files its checks read by the
 * name written (sim/run/sweep.c, issue 28 item 1): the same file under
 * another name (a "./" in it, a symbolic link) is the bytes read the
 * first time, read once and listed once, not a second copy of a file that
 * may have changed since. */
static void test_same_file_two_names(void)
{
    put("tr.csv", "first\n");
    char other[600], link[600];
    snprintf(other, sizeof other, "%s/./tr.csv", dir);
    snprintf(link, sizeof link, "%s", path("ln.csv"));
    CHECK(symlink(path("tr.csv"), link) == 0);
    infiles_t *fs = infiles_create();
    char *a = NULL, *b = NULL, *c = NULL;
    size_t la, lb, lc;
    err_t err = {0};
    CHECK(infiles_read(fs, path("tr.csv"), 100, &a, &la, &err) == 0);
    put("tr.csv", "second\n");
    CHECK(infiles_read(fs, other, 100, &b, &lb, &err) == 0);
    CHECK(infiles_read(fs, link, 100, &c, &lc, &err) == 0);
    CHECK(a && b && c && lb == 6 && lc == 6 && memcmp(b, "first\n", 6) == 0 &&
          memcmp(c, "first\n", 6) == 0);
    CHECK(infiles_count(fs) == 1 && infiles_disk_reads(fs) == 1);
    /* One line, of the bytes read first: sha256sum of "first\n". */
    char *reads = infiles_reads_text(fs), abs[600], want[800];
    CHECK(datapath_absolute(path("tr.csv"), abs, sizeof abs) == 0);
    snprintf(want, sizeof want, "# read %s sha256 "
             "b640e840b19d378660b32fb51ae18d67dccb4a8596a29e7bd72c1b2ae5928f41\n", abs);
    CHECK(reads != NULL);
    if (reads) CHECK_STR(reads, want);
    free(reads);
    free(a);
    free(b);
    free(c);
    infiles_free(fs);
}

/* ---- item 8: paths beside the scenario, then the specsim root -------------- */

static void test_paths(void)
{
    /* A decoy in the working directory never replaces the root's card. */
    char cwd[512], out[512], want[512];
    CHECK(getcwd(cwd, sizeof cwd) != NULL);
    CHECK(mkdir(path("models"), 0700) == 0 && mkdir(path("models/llm"), 0700) == 0);
    put("models/llm/llama-2-7b.yaml", "layers: 1\n");
    CHECK(chdir(dir) == 0);
    CHECK(datapath_resolve("", "models/llm/llama-2-7b.yaml", out, sizeof out) == 0);
    snprintf(want, sizeof want, "%s/models/llm/llama-2-7b.yaml", SPECSIM_ROOT);
    CHECK_STR(out, want);
    scenario_t s;
    err_t err = {0};
    CHECK(scenario_load_string("t.yaml", "", NULL, 0, &s, &err) == 0);
    CHECK(s.cloud.target.layers == 32);   /* the root's LLaMA-2-7B, not the decoy's 1 */
    scenario_fini(&s);
    CHECK(chdir(cwd) == 0);
    /* Next to the scenario wins, wherever the command runs. */
    put("near.yaml", BASE EDGE "cloud: {verify_time: 5ms, gpu: mine.yaml}\n");
    put("mine.yaml", "kind: gpu\nmem_bw: 3TB/s\nmem: 80GB\nflops: {fp32: 100TFLOPS, "
        "fp16: 1PFLOPS}\nsource: test\n");
    CHECK(scenario_load(path("near.yaml"), NULL, 0, &s, &err) == 0);
    if (err.code) printf("  %s\n", err.msg);
    else {
        CHECK(s.cloud.gpu.mem_bw == 3e12);
        /* A default card is the root's even with a file of its name here. */
        CHECK(s.cloud.target.layers == 32);
        scenario_fini(&s);
    }
}

/* ---- item 9: validating a list axis is linear ------------------------------- */

/* Tree nodes copied per scenario load while validating an axis of n values. */
static double cloned_per_load(int n)
{
    size_t cap = 64 + (size_t)n * 8;
    char *yaml = malloc(cap);
    if (!yaml) return -1;
    int w = snprintf(yaml, cap, TINY "sweep:\n  seed: [");
    for (int i = 0; i < n; i++) w += snprintf(yaml + w, cap - (size_t)w, "%s%d", i ? "," : "", i + 1);
    snprintf(yaml + w, cap - (size_t)w, "]\n");
    scenario_src_t *src = NULL;
    sweepspec_t sp;
    err_t err = {0};
    double per = -1;
    if (scenario_src_string("axis.yaml", yaml, &src, &err) == 0 &&
        sweepspec_load_string("axis.yaml", yaml, &sp, &err) == 0) {
        int loads = sweepspec_validate_src(&sp, src, NULL, 0, &err);
        if (loads == n) per = (double)scenario_src_cloned(src) / loads;
        sweepspec_fini(&sp);
    }
    if (err.code) printf("  %s\n", err.msg);
    scenario_src_free(src);
    free(yaml);
    return per;
}

static void test_axis_linear(void)
{
    /* Each check of a value copies the scenario without the sweep: section,
     * so the copy does not grow with the list (the old loader parsed the
     * whole text, list included, for every value: quadratic). */
    double small = cloned_per_load(10), large = cloned_per_load(3000);
    CHECK(small > 0 && small == large);
}

/* ---- issue 28, item 7: a NUL byte in a text file ---------------------------- */

/* Writes n bytes (string literals stop at a NUL, so fwrite) and returns
 * "PATH:LINE:COL" of the first NUL in them, counted here from the bytes. */
static const char *put_bytes(const char *name, const char *b, size_t n, char *at,
                             size_t atsz)
{
    FILE *f = fopen(path(name), "wb");
    CHECK(f && fwrite(b, 1, n, f) == n);
    if (f) fclose(f);
    int line = 1, col = 1;
    for (size_t i = 0; i < n && b[i]; i++) {
        col = b[i] == '\n' ? 1 : col + 1;
        line += b[i] == '\n';
    }
    snprintf(at, atsz, "%s:%d:%d: ", path(name), line, col);
    return path(name);
}

/* An acceptance trace, an empirical value file and a request trace with a
 * NUL byte mid-line: each refused at the NUL's FILE:LINE:COL (old code read
 * up to the NUL and dropped the rest, so the values changed silently). */
static void test_nul_byte(void)
{
    char yaml[768], at[320];
    static const char acc[] = "# gamma: 4\n3\n2\0 9\n1\n4\n";
    const char *p = put_bytes("acc.txt", acc, sizeof acc - 1, at, sizeof at);
    snprintf(yaml, sizeof yaml, TINY "protocol: {mode: sync, gamma: 4}\n"
             "acceptance: {model: trace, file: %s}\n", p);
    put("nul_acc.yaml", yaml);
    load_fails(path("nul_acc.yaml"), NULL, 0,
               (const char *[]){at, "acceptance.file", "NUL byte", NULL});

    static const char emp[] = "1ms\n2ms\n\0003ms\n4ms\n";
    p = put_bytes("emp.txt", emp, sizeof emp - 1, at, sizeof at);
    snprintf(yaml, sizeof yaml, BASE "cloud: {verify_time: 5ms}\ntenants: {edge: "
             "{draft_time: {dist: empirical, file: %s}}}\n", p);
    put("nul_emp.yaml", yaml);
    load_fails(path("nul_emp.yaml"), NULL, 0,
               (const char *[]){at, "draft_time", "NUL byte", NULL});

    static const char req[] = "time_s,prompt_tokens,output_tokens\n1,10,5\n2,1\0""1,5\n";
    p = put_bytes("req.csv", req, sizeof req - 1, at, sizeof at);
    snprintf(yaml, sizeof yaml, BASE "cloud: {verify_time: 5ms}\ntenants: {edge: "
             "{draft_time: 10ms}, workload: {arrival: trace, trace: '%s'}}\n", p);
    put("nul_req.yaml", yaml);
    load_fails(path("nul_req.yaml"), NULL, 0, (const char *[]){at, "NUL byte", NULL});
}

int main(void)
{
    if (tmpdir_make("test_inputs")) return 1;
    RUN(test_not_regular);
    RUN(test_size_cap);
    RUN(test_refused);
    RUN(test_read_once);
    RUN(test_same_file_two_names);
    RUN(test_paths);
    RUN(test_axis_linear);
    RUN(test_nul_byte);
    if (tmpdir_remove()) return 1;
    return check_done();
}
