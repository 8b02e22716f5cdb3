/* What the testbed's real forward pass allocates (testbed/realverify.h)
 * against what its memory check counts (realverify_bytes, and
 * testbed/realmem.h's reading of the memory available).
 *
 * Every allocation realverify_create makes is recorded: this binary is
 * linked with -Wl,--wrap for malloc, calloc, realloc, posix_memalign and
 * aligned_alloc (Makefile), so the testbed's and the kernels' calls come
 * here first. The arrays the model needs are listed by hand from the card's
 * shapes (below, from the layer structure of testbed/realverify.h and the
 * packed W4A16 layout of kernels/gemv.h); each must be among the recorded
 * allocations with its exact size, their sum must be realverify_bytes, and
 * whatever else was allocated must be small bookkeeping. */
#include <fcntl.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "realmem.h"
#include "realverify.h"

/* ---- allocation recording ---------------------------------------------- */

/* The wrappers' record: a test binary's one global, as the linker's --wrap
 * leaves no other place to put it (one thread allocates while it is on). */
#define REC_MAX 512
static struct {
    int on, n, overflow;
    size_t size[REC_MAX];
} rec;

static void record(size_t n)
{
    if (!rec.on) return;
    if (rec.n == REC_MAX) rec.overflow = 1;
    else rec.size[rec.n++] = n;
}

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t sz);
void *__real_realloc(void *p, size_t n);
int __real_posix_memalign(void **p, size_t align, size_t n);
void *__real_aligned_alloc(size_t align, size_t n);
void *__wrap_malloc(size_t n);
void *__wrap_calloc(size_t n, size_t sz);
void *__wrap_realloc(void *p, size_t n);
int __wrap_posix_memalign(void **p, size_t align, size_t n);
void *__wrap_aligned_alloc(size_t align, size_t n);

void *__wrap_malloc(size_t n)
{
    record(n);
    return __real_malloc(n);
}

void *__wrap_calloc(size_t n, size_t sz)
{
    record(n * sz);
    return __real_calloc(n, sz);
}

void *__wrap_realloc(void *p, size_t n)
{
    record(n);
    return __real_realloc(p, n);
}

int __wrap_posix_memalign(void **p, size_t align, size_t n)
{
    record(n);
    return __real_posix_memalign(p, align, n);
}

void *__wrap_aligned_alloc(size_t align, size_t n)
{
    record(n);
    return __real_aligned_alloc(align, n);
}

/* ---- the arrays a model needs, by hand ----------------------------------- */

typedef struct expect {
    int n;
    size_t size[REC_MAX];
    size_t weights, kv, work;
} expect_t;

static void add(expect_t *e, size_t *part, size_t bytes)
{
    e->size[e->n++] = bytes;
    *part += bytes;
}

/* An n × k linear layer: fp16 values, or (W4A16, groups of 128 inputs)
 * a nibble per weight, an fp16 scale and a byte zero per group. */
static void add_lin(expect_t *e, int w4, size_t n, size_t k)
{
    if (!w4) {
        add(e, &e->weights, n * k * 2);
        return;
    }
    add(e, &e->weights, n * k / 2);
    add(e, &e->weights, n * (k / 128) * 2);
    add(e, &e->weights, n * (k / 128));
}

/* Per layer: qkv (hidden + 2 KV widths outputs), o, gate_up (twice ffn
 * when gated), down; then the LM head (vocab outputs). KV: per job and
 * layer a K and a V cache of ctx rows of the KV width, fp16. Work rows
 * (m of them): the residual stream h (fp32, hidden), tmp (fp32) and yh
 * (fp16) as wide as the widest GEMM output, xh, qh, ah (fp16, hidden), mh
 * (fp16, ffn). */
static expect_t expected(const llm_card_t *c, int w4, size_t m, size_t jobs, size_t ctx)
{
    expect_t e;
    memset(&e, 0, sizeof e);
    size_t d = (size_t)c->hidden, f = (size_t)c->ffn;
    size_t kvw = (size_t)c->kv_heads * (d / (size_t)c->heads);
    size_t qkv = d + 2 * kvw, gu = c->gated_mlp ? 2 * f : f;
    for (int L = 0; L < c->layers; L++) {
        add_lin(&e, w4, qkv, d);
        add_lin(&e, w4, d, d);
        add_lin(&e, w4, gu, d);
        add_lin(&e, w4, d, f);
    }
    add_lin(&e, w4, (size_t)c->vocab, d);
    add(&e, &e.kv, jobs * (size_t)c->layers * 2 * ctx * kvw * 2);
    size_t wide = (size_t)c->vocab;
    if (qkv > wide) wide = qkv;
    if (gu > wide) wide = gu;
    add(&e, &e.work, m * d * 4);      /* h */
    add(&e, &e.work, m * wide * 4);   /* tmp */
    add(&e, &e.work, m * wide * 2);   /* yh */
    for (int i = 0; i < 3; i++) add(&e, &e.work, m * d * 2);   /* xh, qh, ah */
    add(&e, &e.work, m * f * 2);      /* mh */
    return e;
}

static llm_card_t card(int layers, int hidden, int heads, int kv_heads, int ffn, int vocab,
                       int gated)
{
    llm_card_t c;
    memset(&c, 0, sizeof c);
    strcpy(c.name, "test");
    c.layers = layers;
    c.hidden = hidden;
    c.heads = heads;
    c.kv_heads = kv_heads;
    c.ffn = ffn;
    c.vocab = vocab;
    c.gated_mlp = gated;
    return c;
}

/* Bookkeeping (the handle, per-layer descriptors, the kernel context) is
 * under this many bytes an allocation; the cards below make every array
 * at least this large, so the two cannot be confused. */
#define SMALL 4096

/* Creates the model with the allocations recorded, then checks them
 * against the hand list and realverify_bytes. */
static void check_card(const llm_card_t *c, int quant, int m, int jobs, int ctx)
{
    expect_t e = expected(c, quant == PREC_W4A16, (size_t)m, (size_t)jobs, (size_t)ctx);
    realverify_size_t z = realverify_bytes(c, quant, m, jobs, ctx);
    CHECK(z.weights == e.weights);
    CHECK(z.kv == e.kv);
    CHECK(z.work == e.work);
    CHECK(z.total == e.weights + e.kv + e.work);
    memset(&rec, 0, sizeof rec);
    rec.on = 1;
    err_t err = {0, {0}};
    realverify_t *v = realverify_create(c, quant, m, jobs, ctx, 1, &err);
    rec.on = 0;
    CHECK(v != NULL);
    CHECK(!rec.overflow);
    unsigned char used[REC_MAX] = {0};
    for (int i = 0; i < e.n; i++) {
        CHECK(e.size[i] >= SMALL);
        int found = 0;
        for (int r = 0; r < rec.n && !found; r++)
            if (!used[r] && rec.size[r] == e.size[i]) used[r] = found = 1;
        if (!found) printf("  array %d of %zu bytes was not allocated\n", i, e.size[i]);
        CHECK(found);
    }
    for (int r = 0; r < rec.n; r++) {
        if (!used[r] && rec.size[r] >= SMALL)
            printf("  an allocation of %zu bytes is not counted\n", rec.size[r]);
        CHECK(used[r] || rec.size[r] < SMALL);
    }
    /* The model runs in what was allocated: a full iteration. */
    service_job_t jobs_v[8];
    for (int j = 0; j < jobs && j < 8; j++) jobs_v[j] = (service_job_t){m / jobs, ctx / 2, 0};
    if (v) CHECK(realverify_run(v, jobs_v, jobs < 8 ? jobs : 8, &err) >= 0);
    realverify_free(v);
}

/* Gated, GQA, the gate_up output (2 × 1536) the widest, 2 layers; and
 * ungated, MHA, the vocabulary the widest, 1 layer: at fp16 and at W4A16. */
static void test_bytes_fp16(void)
{
    llm_card_t a = card(2, 1024, 8, 2, 1536, 3000, 1);
    check_card(&a, PREC_FP16, 8, 3, 32);
    llm_card_t b = card(1, 1024, 8, 8, 1024, 5000, 0);
    check_card(&b, PREC_FP16, 4, 1, 8);
}

static void test_bytes_w4a16(void)
{
    llm_card_t a = card(2, 1024, 8, 2, 1536, 3000, 1);
    check_card(&a, PREC_W4A16, 8, 3, 32);
    llm_card_t b = card(1, 1024, 8, 8, 1024, 5000, 0);
    check_card(&b, PREC_W4A16, 4, 1, 8);
}

/* A model past what a size_t counts is SIZE_MAX, and realverify_create
 * refuses it before it allocates anything; refused arguments count 0. */
static void test_refused(void)
{
    llm_card_t huge = card(10000000, 10000000, 1, 1, 10000000, 10000000, 1);
    realverify_size_t z = realverify_bytes(&huge, PREC_FP16, 1, 1, 1);
    CHECK(z.total == SIZE_MAX);
    memset(&rec, 0, sizeof rec);
    rec.on = 1;
    err_t err = {0, {0}};
    realverify_t *v = realverify_create(&huge, PREC_FP16, 1, 1, 1, 1, &err);
    rec.on = 0;
    CHECK(v == NULL);
    CHECK(rec.n == 0);
    CHECK(err.code == ERR_INPUT);
    realverify_free(v);
    llm_card_t a = card(2, 1024, 8, 2, 1536, 3000, 1);
    CHECK(realverify_bytes(&a, PREC_W8A16, 8, 1, 8).total == 0);
    CHECK(realverify_bytes(&a, PREC_FP16, 0, 1, 8).total == 0);
    llm_card_t odd = card(1, 96, 3, 3, 256, 100, 1);   /* hidden not a multiple of 128 */
    CHECK(realverify_bytes(&odd, PREC_W4A16, 1, 1, 8).total == 0);
    CHECK(realverify_bytes(&odd, PREC_FP16, 1, 1, 8).total > 0);
}

/* /proc/meminfo's MemAvailable line, in kB, wherever it is. */
static void test_meminfo(void)
{
    uint64_t b = 0;
    CHECK(realmem_parse_meminfo("MemTotal:       24000000 kB\nMemFree:  100 kB\n"
                                "MemAvailable:   20971520 kB\nBuffers: 1 kB\n", &b) == 0);
    CHECK(b == 20971520ull * 1024);
    CHECK(realmem_parse_meminfo("MemAvailable: 7 kB", &b) == 0 && b == 7168);
    CHECK(realmem_parse_meminfo("MemTotal: 5 kB\nMemFree: 3 kB\n", &b) == -1);
    CHECK(realmem_parse_meminfo("XMemAvailable: 5 kB\n", &b) == -1);
    CHECK(realmem_parse_meminfo("MemAvailable: 5 MB\n", &b) == -1);
    CHECK(realmem_parse_meminfo("MemAvailable: kB\n", &b) == -1);
    CHECK(realmem_parse_meminfo("MemAvailable: 99999999999999999999 kB\n", &b) == -1);
    const char *src = NULL;
    CHECK(realmem_available(&b, &src) == 0 && b > 0 && src != NULL);
}

/* At most REALMEM_PERCENT (90) of what is available. */
static void test_fits(void)
{
    CHECK(realmem_fits(900, 1000));
    CHECK(!realmem_fits(901, 1000));
    CHECK(realmem_fits(0, 0));
    CHECK(!realmem_fits(1, 0));
    CHECK(realmem_fits((size_t)(UINT64_MAX / 10 * 9), UINT64_MAX));
    CHECK(!realmem_fits(SIZE_MAX, UINT64_MAX));
}

/* realmem_check_against (avail bytes) with stderr sent to /dev/null (its
 * report is for users). */
static int check_quietly(const realmem_part_t *parts, int n, uint64_t avail)
{
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    CHECK(saved >= 0 && null >= 0);
    if (saved < 0 || null < 0 || dup2(null, 2) < 0) {
        if (saved >= 0) close(saved);
        if (null >= 0) close(null);
        return -1;
    }
    int rc = realmem_check_against("test", parts, n, 0, avail, "a test's figure");
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(null);
    return rc;
}

/* Models built at the same time are added up: two of 60% of the memory
 * available each fit alone, not together (the margins leave room for
 * what other processes do meanwhile). Weighed against one figure, so that
 * memory taken or freed by other processes meanwhile cannot change the
 * answers; nothing is allocated. */
static void test_parts_add_up(void)
{
    uint64_t avail = (uint64_t)10 << 30;
    size_t each = (size_t)(avail / 10 * 6);
    realmem_part_t p = {"--real-verify", "cloud.target", "test", "test.yaml", PREC_FP16, 1, 8,
                        {each, 0, 0, each}, "smaller"};
    realmem_part_t two[2] = {p, p};
    two[1].option = "--real-draft";
    CHECK(check_quietly(&p, 1, avail) == 0);
    CHECK(check_quietly(two, 2, avail) == 2);
    /* At the 90% bound exactly, and a byte past it. */
    p.size.total = (size_t)(avail / 10 * 9);
    CHECK(check_quietly(&p, 1, avail) == 0);
    p.size.total++;
    CHECK(check_quietly(&p, 1, avail) == 2);
    /* Each part past a size_t: the sum saturates, and is refused. */
    two[0].size.total = two[1].size.total = SIZE_MAX / 2 + 1;
    CHECK(check_quietly(two, 2, UINT64_MAX) == 2);
}

/* realmem_check itself reads the machine's figure: a model of one byte
 * fits, one of SIZE_MAX does not. */
static void test_check_live(void)
{
    realmem_part_t p = {"--real-verify", "cloud.target", "test", "test.yaml", PREC_FP16, 1, 8,
                        {1, 0, 0, 1}, "smaller"};
    fflush(stderr);
    int saved = dup(2), null = open("/dev/null", O_WRONLY);
    CHECK(saved >= 0 && null >= 0 && dup2(null, 2) >= 0);
    int small = realmem_check("test", &p, 1, 1);
    p.size.total = SIZE_MAX;
    int huge = realmem_check("test", &p, 1, 1);
    fflush(stderr);
    if (saved >= 0) {
        dup2(saved, 2);
        close(saved);
    }
    if (null >= 0) close(null);
    CHECK(small == 0);
    CHECK(huge == 2);
}

int main(void)
{
    RUN(test_bytes_fp16);
    RUN(test_bytes_w4a16);
    RUN(test_refused);
    RUN(test_meminfo);
    RUN(test_fits);
    RUN(test_parts_add_up);
    RUN(test_check_live);
    return check_done();
}
