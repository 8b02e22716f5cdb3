/* The GGUF reader (kernels/llm/gguf.h) on files written byte by byte by the
 * small writer below:
 *   - every metadata value type and array kind read back, through every
 *     getter, with the conversions each allows and refuses;
 *   - tensor layout with alignments other than 32;
 *   - each dequantised type against values worked out by hand from the block
 *     definitions (docs/llm.md, "GGUF"), fp16 against its closed form for all
 *     65536 inputs;
 *   - bad files: every prefix of a valid file, and one of each thing the
 *     reader must refuse, each with a one-line message naming the file;
 *   - SPECSIM_GGUF_REAL=PATH (the SmolLM2-135M Q4_1 GGUF): its shape. Without
 *     it that test is skipped and prints nothing.
 *
 * Another mode, for comparing our dequantisation with the `gguf` Python
 * package's (scripts/llm/gguf-dequant-check.py prints the sha256 of its):
 *   test_gguf --dump FILE TENSOR OUT
 * writes the dequantised values of TENSOR as little-endian float32 to OUT
 * (so `sha256sum OUT` gives the digest to compare); exit 0, or 1 with the
 * message on stderr. */
#include <errno.h>
#include <stdint.h>
#include <sys/stat.h>

#include "check.h"
#include "gguf.h"
#include "w4a16.h"

static char dir[] = "/tmp/test_gguf.XXXXXX";

/* ---- a byte-level GGUF writer --------------------------------------------- */

typedef struct buf {
    unsigned char *p;
    size_t n;
} buf_t;

static void put(buf_t *b, const void *s, size_t n)
{
    unsigned char *p = realloc(b->p, b->n + n + 1);
    if (!p) abort();
    if (n) memcpy(p + b->n, s, n);
    b->p = p;
    b->n += n;
}

static void put_u8(buf_t *b, unsigned v)
{
    unsigned char c = (unsigned char)v;
    put(b, &c, 1);
}

static void put_u16(buf_t *b, unsigned v)
{
    put_u8(b, v & 0xFF);
    put_u8(b, v >> 8 & 0xFF);
}

static void put_u32(buf_t *b, uint32_t v)
{
    for (int i = 0; i < 4; i++) put_u8(b, v >> (8 * i) & 0xFF);
}

static void put_u64(buf_t *b, uint64_t v)
{
    for (int i = 0; i < 8; i++) put_u8(b, (unsigned)(v >> (8 * i) & 0xFF));
}

static void put_f32(buf_t *b, float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    put_u32(b, u);
}

static void put_f64(buf_t *b, double f)
{
    uint64_t u;
    memcpy(&u, &f, 8);
    put_u64(b, u);
}

static void put_str(buf_t *b, const char *s)
{
    put_u64(b, strlen(s));
    put(b, s, strlen(s));
}

typedef struct tw {
    buf_t kv, ti, data;
    uint64_t nkv, nt;
    uint32_t align;          /* what the writer pads to; the key is separate */
} tw_t;

static void tw_init(tw_t *w)
{
    memset(w, 0, sizeof *w);
    w->align = 32;
}

/* A key and its type; the caller appends the value to the returned buffer. */
static buf_t *tw_key(tw_t *w, const char *key, uint32_t type)
{
    put_str(&w->kv, key);
    put_u32(&w->kv, type);
    w->nkv++;
    return &w->kv;
}

/* A tensor info with the offset given (no data written). */
static void tw_info(tw_t *w, const char *name, uint32_t ndim, const uint64_t *ne, uint32_t type,
                    uint64_t off)
{
    put_str(&w->ti, name);
    put_u32(&w->ti, ndim);
    for (uint32_t d = 0; d < ndim && d < 8; d++) put_u64(&w->ti, ne[d]);
    put_u32(&w->ti, type);
    put_u64(&w->ti, off);
    w->nt++;
}

/* A tensor and its bytes at the next aligned offset of the data section. */
static void tw_tensor(tw_t *w, const char *name, uint32_t ndim, const uint64_t *ne,
                      uint32_t type, const void *bytes, size_t n)
{
    while (w->data.n % w->align) put_u8(&w->data, 0);
    tw_info(w, name, ndim, ne, type, w->data.n);
    put(&w->data, bytes, n);
}

/* The file with the header given; frees the writer. Returns the data
 * section's offset. */
static size_t tw_build_hdr(tw_t *w, buf_t *out, const char *magic, uint32_t version,
                           uint64_t nt, uint64_t nkv)
{
    memset(out, 0, sizeof *out);
    put(out, magic, 4);
    put_u32(out, version);
    put_u64(out, nt);
    put_u64(out, nkv);
    put(out, w->kv.p, w->kv.n);
    put(out, w->ti.p, w->ti.n);
    while (out->n % w->align) put_u8(out, 0);
    size_t start = out->n;
    put(out, w->data.p, w->data.n);
    free(w->kv.p);
    free(w->ti.p);
    free(w->data.p);
    tw_init(w);
    return start;
}

static size_t tw_build(tw_t *w, buf_t *out)
{
    return tw_build_hdr(w, out, "GGUF", 3, w->nt, w->nkv);
}

/* ---- opening -------------------------------------------------------------- */

static int write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    int ok = f && (n == 0 || fwrite(p, 1, n, f) == n);
    if (f && fclose(f) != 0) ok = 0;
    return ok ? 0 : -1;
}

/* b written to dir/name and opened (the reader keeps no file open, so the
 * file is removed at once). path gets the file's path. */
static gguf_t *open_bytes(const buf_t *b, const char *name, err_t *err, char *path, size_t psz)
{
    snprintf(path, psz, "%s/%s", dir, name);
    CHECK(write_file(path, b->p, b->n) == 0);
    gguf_t *g = gguf_open(path, err);
    unlink(path);
    return g;
}

/* The message is one line "PATH: ...". */
static int names_file(const char *msg, const char *path)
{
    size_t n = strlen(path);
    return strncmp(msg, path, n) == 0 && msg[n] == ':' && msg[n + 1] == ' ' &&
           !strchr(msg, '\n');
}

/* b must be refused, with expect in the message. Frees b. */
static void bad(const char *name, buf_t *b, const char *expect)
{
    char path[600];
    err_t err = {0, ""};
    gguf_t *g = open_bytes(b, name, &err, path, sizeof path);
    int ok = !g && err.code == ERR_INPUT && strstr(err.msg, expect) && names_file(err.msg, path);
    if (!ok) printf("  %s: got '%s', expected '%s'\n", name, g ? "(opened)" : err.msg, expect);
    CHECK(ok);
    gguf_close(g);
    free(b->p);
}

static uint32_t bits_of(float f)
{
    uint32_t u;
    memcpy(&u, &f, 4);
    return u;
}

/* ---- metadata -------------------------------------------------------------- */

/* One key of every type, arrays of several kinds; read back through every
 * getter. The values are the literals written. */
static void test_metadata(void)
{
    tw_t w;
    tw_init(&w);
    put_u8(tw_key(&w, "k.u8", GGUF_V_U8), 200);
    put_u8(tw_key(&w, "k.i8", GGUF_V_I8), (unsigned)(uint8_t)-100);
    put_u16(tw_key(&w, "k.u16", GGUF_V_U16), 60000);
    put_u16(tw_key(&w, "k.i16", GGUF_V_I16), (unsigned)(uint16_t)-30000);
    put_u32(tw_key(&w, "k.u32", GGUF_V_U32), 4000000000u);
    put_u32(tw_key(&w, "k.i32", GGUF_V_I32), (uint32_t)-2000000000);
    put_u32(tw_key(&w, "k.i32pos", GGUF_V_I32), 7);
    put_f32(tw_key(&w, "k.f32", GGUF_V_F32), 1.5f);
    put_u8(tw_key(&w, "k.bool", GGUF_V_BOOL), 1);
    put_str(tw_key(&w, "k.str", GGUF_V_STR), "h\xc3\xa9llo");
    put_u64(tw_key(&w, "k.u64", GGUF_V_U64), (1ull << 40) + 1);
    put_u64(tw_key(&w, "k.u64small", GGUF_V_U64), 5);
    put_u64(tw_key(&w, "k.i64", GGUF_V_I64), (uint64_t)-5);
    put_f64(tw_key(&w, "k.f64", GGUF_V_F64), 0.25);
    put_f64(tw_key(&w, "k.f64big", GGUF_V_F64), 1e300);
    buf_t *b = tw_key(&w, "a.u32", GGUF_V_ARR);
    put_u32(b, GGUF_V_U32);
    put_u64(b, 3);
    put_u32(b, 1), put_u32(b, 2), put_u32(b, 4000000000u);
    b = tw_key(&w, "a.str", GGUF_V_ARR);
    put_u32(b, GGUF_V_STR);
    put_u64(b, 3);
    put_str(b, "a"), put_str(b, ""), put_str(b, "bc");
    b = tw_key(&w, "a.f32", GGUF_V_ARR);
    put_u32(b, GGUF_V_F32);
    put_u64(b, 2);
    put_f32(b, -0.5f), put_f32(b, 3.0f);
    b = tw_key(&w, "a.i8", GGUF_V_ARR);
    put_u32(b, GGUF_V_I8);
    put_u64(b, 2);
    put_u8(b, 0x80), put_u8(b, 0x7F);
    b = tw_key(&w, "a.i64", GGUF_V_ARR);
    put_u32(b, GGUF_V_I64);
    put_u64(b, 1);
    put_u64(b, (uint64_t)-3);
    b = tw_key(&w, "a.bool", GGUF_V_ARR);
    put_u32(b, GGUF_V_BOOL);
    put_u64(b, 2);
    put_u8(b, 0), put_u8(b, 1);
    b = tw_key(&w, "a.empty", GGUF_V_ARR);
    put_u32(b, GGUF_V_STR);
    put_u64(b, 0);
    buf_t f;
    tw_build(&w, &f);
    char path[600];
    err_t err = {0, ""};
    gguf_t *g = open_bytes(&f, "meta.gguf", &err, path, sizeof path);
    free(f.p);
    CHECK(g != NULL);
    if (!g) {
        printf("  %s\n", err.msg);
        return;
    }
    CHECK(gguf_version(g) == 3 && gguf_alignment(g) == 32 && gguf_tensor_count(g) == 0);
    CHECK_STR(gguf_path(g), path);
    /* File order and types. */
    static const char *const keys[] = {"k.u8", "k.i8", "k.u16", "k.i16", "k.u32", "k.i32",
                                       "k.i32pos", "k.f32", "k.bool", "k.str", "k.u64",
                                       "k.u64small", "k.i64", "k.f64", "k.f64big", "a.u32",
                                       "a.str", "a.f32", "a.i8", "a.i64", "a.bool", "a.empty"};
    static const int types[] = {0, 1, 2, 3, 4, 5, 5, 6, 7, 8, 10, 10, 11, 12, 12,
                                9, 9, 9, 9, 9, 9, 9};
    CHECK(gguf_kv_count(g) == 22);
    for (int i = 0; i < 22; i++) {
        CHECK_STR(gguf_kv_key(g, i), keys[i]);
        CHECK(gguf_kv_type(g, i) == types[i]);
        CHECK(gguf_has(g, keys[i]));
    }
    CHECK(gguf_kv_key(g, 22) == NULL && gguf_kv_key(g, -1) == NULL && gguf_kv_type(g, 22) == -1);
    CHECK(!gguf_has(g, "k") && !gguf_has(g, "k.u8x") && !gguf_has(g, ""));

    uint32_t u = 0;
    CHECK(gguf_get_u32(g, "k.u8", &u, &err) == 0 && u == 200);
    CHECK(gguf_get_u32(g, "k.u16", &u, &err) == 0 && u == 60000);
    CHECK(gguf_get_u32(g, "k.u32", &u, &err) == 0 && u == 4000000000u);
    CHECK(gguf_get_u32(g, "k.i32pos", &u, &err) == 0 && u == 7);
    CHECK(gguf_get_u32(g, "k.u64small", &u, &err) == 0 && u == 5);
    CHECK(gguf_get_u32(g, "k.bool", &u, &err) == 0 && u == 1);
    CHECK(gguf_get_u32(g, "k.i8", &u, &err) == -1 && strstr(err.msg, "k.i8' = -100 does not fit"));
    CHECK(gguf_get_u32(g, "k.i16", &u, &err) == -1 && strstr(err.msg, "= -30000 does not fit"));
    CHECK(gguf_get_u32(g, "k.i32", &u, &err) == -1 && strstr(err.msg, "= -2000000000 does"));
    CHECK(gguf_get_u32(g, "k.i64", &u, &err) == -1 && strstr(err.msg, "= -5 does not fit"));
    CHECK(gguf_get_u32(g, "k.u64", &u, &err) == -1 && strstr(err.msg, "= 1099511627777 does"));
    CHECK(gguf_get_u32(g, "k.f32", &u, &err) == -1 && strstr(err.msg, "has type f32"));
    CHECK(gguf_get_u32(g, "a.u32", &u, &err) == -1 && strstr(err.msg, "is an array of u32"));
    CHECK(gguf_get_u32(g, "nope", &u, &err) == -1 && strstr(err.msg, "key 'nope' is missing") &&
          names_file(err.msg, path) && err.code == ERR_INPUT);

    float x = 0;
    CHECK(gguf_get_f32(g, "k.f32", &x, &err) == 0 && x == 1.5f);
    CHECK(gguf_get_f32(g, "k.f64", &x, &err) == 0 && x == 0.25f);
    CHECK(gguf_get_f32(g, "k.i8", &x, &err) == 0 && x == -100.0f);
    CHECK(gguf_get_f32(g, "k.u32", &x, &err) == 0 && x == 4000000000.0f);
    CHECK(gguf_get_f32(g, "k.f64big", &x, &err) == -1 && strstr(err.msg, "does not fit a f32"));
    CHECK(gguf_get_f32(g, "k.str", &x, &err) == -1 && strstr(err.msg, "has type string"));

    int bo = -1;
    CHECK(gguf_get_bool(g, "k.bool", &bo, &err) == 0 && bo == 1);
    CHECK(gguf_get_bool(g, "k.u8", &bo, &err) == -1 && strstr(err.msg, "has type u8"));

    const char *s = NULL;
    size_t len = 0;
    CHECK(gguf_get_str(g, "k.str", &s, &len, &err) == 0 && len == 6 &&
          memcmp(s, "h\xc3\xa9llo", 6) == 0);
    CHECK(gguf_get_str(g, "a.str", &s, &len, &err) == -1 && strstr(err.msg, "array of string"));

    int et = -1;
    uint64_t n = 0;
    CHECK(gguf_get_arr(g, "a.u32", &et, &n, &err) == 0 && et == GGUF_V_U32 && n == 3);
    CHECK(gguf_get_arr(g, "a.str", &et, &n, &err) == 0 && et == GGUF_V_STR && n == 3);
    CHECK(gguf_get_arr(g, "a.empty", &et, &n, &err) == 0 && et == GGUF_V_STR && n == 0);
    CHECK(gguf_get_arr(g, "k.u32", &et, &n, &err) == -1 && strstr(err.msg, "has type u32"));
    static const char *const strs[] = {"a", "", "bc"};
    for (int i = 0; i < 3; i++)
        CHECK(gguf_arr_str(g, "a.str", (uint64_t)i, &s, &len, &err) == 0 &&
              len == strlen(strs[i]) && memcmp(s, strs[i], len) == 0);
    CHECK(gguf_arr_str(g, "a.str", 3, &s, &len, &err) == -1 &&
          strstr(err.msg, "element 3 asked for; the array has 3"));
    CHECK(gguf_arr_str(g, "a.empty", 0, &s, &len, &err) == -1);
    CHECK(gguf_arr_str(g, "a.u32", 0, &s, &len, &err) == -1);
    CHECK(gguf_arr_str(g, "k.str", 0, &s, &len, &err) == -1);
    double d = 0;
    CHECK(gguf_arr_num(g, "a.u32", 2, &d, &err) == 0 && d == 4000000000.0);
    CHECK(gguf_arr_num(g, "a.u32", 0, &d, &err) == 0 && d == 1.0);
    CHECK(gguf_arr_num(g, "a.f32", 0, &d, &err) == 0 && d == -0.5);
    CHECK(gguf_arr_num(g, "a.f32", 1, &d, &err) == 0 && d == 3.0);
    CHECK(gguf_arr_num(g, "a.i8", 0, &d, &err) == 0 && d == -128.0);
    CHECK(gguf_arr_num(g, "a.i8", 1, &d, &err) == 0 && d == 127.0);
    CHECK(gguf_arr_num(g, "a.i64", 0, &d, &err) == 0 && d == -3.0);
    CHECK(gguf_arr_num(g, "a.bool", 1, &d, &err) == 0 && d == 1.0);
    CHECK(gguf_arr_num(g, "a.f32", 2, &d, &err) == -1);
    CHECK(gguf_arr_num(g, "a.str", 0, &d, &err) == -1 && strstr(err.msg, "array of numbers"));
    gguf_close(g);
}

/* Version 2 has the same layout; an empty file of it opens. */
static void test_version2(void)
{
    tw_t w;
    tw_init(&w);
    put_u32(tw_key(&w, "x", GGUF_V_U32), 9);
    buf_t f;
    tw_build_hdr(&w, &f, "GGUF", 2, 0, 1);
    char path[600];
    err_t err = {0, ""};
    gguf_t *g = open_bytes(&f, "v2.gguf", &err, path, sizeof path);
    uint32_t u = 0;
    CHECK(g && gguf_version(g) == 2 && gguf_get_u32(g, "x", &u, &err) == 0 && u == 9);
    gguf_close(g);
    free(f.p);
}

/* ---- tensor layout ------------------------------------------------------- */

/* Two F32 tensors under an alignment of `align`; a key of pad bytes moves
 * the end of the tensor infos so that the data section starts somewhere the
 * default alignment (32) would not put it. The values read back prove the
 * reader found the data where the writer put it. */
static void layout(uint32_t align, int pad)
{
    tw_t w;
    tw_init(&w);
    w.align = align;
    put_u32(tw_key(&w, "general.alignment", GGUF_V_U32), align);
    char padkey[80];
    memset(padkey, 'p', (size_t)pad);
    padkey[pad] = 0;
    put_u8(tw_key(&w, padkey, GGUF_V_U8), 0);
    float a[3] = {1, 2, 3}, b[4] = {-1, 0.5f, 4, 8};
    uint64_t nea[1] = {3}, neb[2] = {2, 2};
    tw_tensor(&w, "a", 1, nea, GGUF_T_F32, a, sizeof a);
    tw_tensor(&w, "b", 2, neb, GGUF_T_F32, b, sizeof b);
    buf_t f;
    size_t end = 24 + w.kv.n + w.ti.n;   /* the header's 24 bytes, then these */
    size_t start = tw_build(&w, &f);
    CHECK(start == (end + align - 1) / align * align);
    /* The case is only telling when the default (32) would start elsewhere. */
    CHECK(start != (end + 31) / 32 * 32);
    char path[600];
    err_t err = {0, ""};
    gguf_t *g = open_bytes(&f, "layout.gguf", &err, path, sizeof path);
    CHECK(g != NULL);
    if (!g) {
        printf("  %s\n", err.msg);
        free(f.p);
        return;
    }
    CHECK(gguf_alignment(g) == align && gguf_tensor_count(g) == 2);
    const gguf_tensor_t *ta = gguf_tensor_at(g, 0), *tb = gguf_tensor_at(g, 1);
    CHECK(ta && tb && gguf_tensor(g, "a") == ta && gguf_tensor(g, "b") == tb);
    CHECK(gguf_tensor_at(g, 2) == NULL && gguf_tensor_at(g, -1) == NULL);
    CHECK(gguf_tensor(g, "c") == NULL && gguf_tensor(g, "") == NULL);
    CHECK_STR(ta->name, "a");
    CHECK(ta->type == GGUF_T_F32 && ta->ndim == 1 && ta->ne[0] == 3 && ta->ne[1] == 1 &&
          ta->ne[3] == 1 && ta->nelem == 3 && ta->nbytes == 12);
    CHECK(tb->ndim == 2 && tb->ne[0] == 2 && tb->ne[1] == 2 && tb->ne[2] == 1 && tb->nelem == 4 &&
          tb->nbytes == 16);
    /* b sits at the first multiple of align after a's 12 bytes. */
    size_t boff = (12 + align - 1) / align * align;
    CHECK((const char *)tb->data - (const char *)ta->data == (ptrdiff_t)boff);
    CHECK(memcmp(ta->data, f.p + start, 12) == 0 && memcmp(tb->data, f.p + start + boff, 16) == 0);
    /* The image is 64-byte aligned (gguf.h). */
    CHECK((uintptr_t)ta->data % (align < 64 ? align : 64) == 0);
    float v[4] = {0};
    CHECK(gguf_dequant(ta, 0, 3, v, &err) == 0 && v[0] == 1 && v[1] == 2 && v[2] == 3);
    CHECK(gguf_dequant(tb, 0, 4, v, &err) == 0 && v[0] == -1 && v[1] == 0.5f && v[2] == 4 &&
          v[3] == 8);
    CHECK(gguf_dequant(tb, 2, 2, v, &err) == 0 && v[0] == 4 && v[1] == 8);
    gguf_close(g);
    free(f.p);
}

static void test_alignment(void)
{
    layout(8, 1);
    layout(64, 1);
    layout(1, 3);
    layout(4096, 1);
}

/* ---- types and dequantisation --------------------------------------------- */

/* The block table as the format gives it (the brief of this reader). */
static void test_type_table(void)
{
    static const struct { int type, blk, bytes, dq; const char *name; } t[] = {
        {0, 1, 4, 1, "F32"},       {1, 1, 2, 1, "F16"},       {30, 1, 2, 1, "BF16"},
        {2, 32, 18, 1, "Q4_0"},    {3, 32, 20, 1, "Q4_1"},    {6, 32, 22, 0, "Q5_0"},
        {7, 32, 24, 0, "Q5_1"},    {8, 32, 34, 1, "Q8_0"},    {9, 32, 36, 0, "Q8_1"},
        {10, 256, 84, 0, "Q2_K"},  {11, 256, 110, 0, "Q3_K"}, {12, 256, 144, 1, "Q4_K"},
        {13, 256, 176, 0, "Q5_K"}, {14, 256, 210, 0, "Q6_K"}, {15, 256, 292, 0, "Q8_K"}};
    for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
        CHECK(gguf_type_block(t[i].type) == t[i].blk);
        CHECK(gguf_type_block_bytes(t[i].type) == (size_t)t[i].bytes);
        CHECK(gguf_type_dequant_ok(t[i].type) == t[i].dq);
        CHECK_STR(gguf_type_name(t[i].type), t[i].name);
    }
    static const int unknown[] = {4, 5, 16, 29, 31, 99, -1};
    for (size_t i = 0; i < sizeof unknown / sizeof unknown[0]; i++) {
        CHECK(gguf_type_block(unknown[i]) == 0 && gguf_type_block_bytes(unknown[i]) == 0);
        CHECK(!gguf_type_dequant_ok(unknown[i]));
        CHECK_STR(gguf_type_name(unknown[i]), "unknown");
    }
}

/* A file of one tensor (type, ne0 × ne1, bytes) opened; NULL on failure. */
static gguf_t *one_tensor(int type, uint64_t ne0, uint64_t ne1, const void *bytes, size_t n)
{
    tw_t w;
    tw_init(&w);
    uint64_t ne[2] = {ne0, ne1};
    tw_tensor(&w, "t", 2, ne, (uint32_t)type, bytes, n);
    buf_t f;
    tw_build(&w, &f);
    char path[600];
    err_t err = {0, ""};
    gguf_t *g = open_bytes(&f, "one.gguf", &err, path, sizeof path);
    if (!g) printf("  %s\n", err.msg);
    CHECK(g != NULL);
    free(f.p);
    return g;
}

/* x = sign · 2^(e − 15) · (1 + m/1024), subnormals sign · 2^−24 · m: the
 * closed form for every finite half; also bit for bit what fp16_to_f32 in
 * kernels/w4a16.c gives (the rest of the runtime converts with it). */
static void test_f16(void)
{
    unsigned char *h = malloc(65536 * 2);
    float *v = malloc(65536 * sizeof *v);
    CHECK(h && v);
    if (!h || !v) {
        free(h);
        free(v);
        return;
    }
    for (unsigned i = 0; i < 65536; i++)
        h[2 * i] = (unsigned char)(i & 0xFF), h[2 * i + 1] = (unsigned char)(i >> 8);
    gguf_t *g = one_tensor(GGUF_T_F16, 256, 256, h, 65536 * 2);
    err_t err = {0, ""};
    CHECK(g && gguf_dequant(gguf_tensor(g, "t"), 0, 65536, v, &err) == 0);
    int bad_form = 0, bad_bits = 0;
    for (unsigned i = 0; g && i < 65536; i++) {
        unsigned e = i >> 10 & 31, m = i & 1023;
        double sign = i & 0x8000 ? -1 : 1, want;
        if (e == 31) {
            if (m ? v[i] == v[i] : !(isinf(v[i]) && (v[i] < 0) == (sign < 0))) bad_form++;
        } else {
            want = e ? sign * ldexp(1024.0 + m, (int)e - 25) : sign * ldexp((double)m, -24);
            if ((double)v[i] != want || !signbit(v[i]) != !signbit(sign)) bad_form++;
        }
        if (bits_of(v[i]) != bits_of(fp16_to_f32((uint16_t)i))) bad_bits++;
    }
    CHECK(bad_form == 0 && bad_bits == 0);
    gguf_close(g);
    free(h);
    free(v);
}

static void test_bf16(void)
{
    /* 0x3F80: 1.0; 0xC040: −3.0; 0x4049: 3.140625; 0x0001: 2^−133 */
    static const unsigned char b[8] = {0x80, 0x3F, 0x40, 0xC0, 0x49, 0x40, 0x01, 0x00};
    gguf_t *g = one_tensor(GGUF_T_BF16, 4, 1, b, 8);
    float v[4];
    err_t err;
    CHECK(g && gguf_dequant(gguf_tensor(g, "t"), 0, 4, v, &err) == 0);
    CHECK(g && v[0] == 1.0f && v[1] == -3.0f && v[2] == 3.140625f &&
          (double)v[3] == ldexp(1.0, -133));
    gguf_close(g);
}

/* Two Q8_0 blocks. Block 0: d = 0.5 (0x3800), q_j = 8j − 128 → x_j = 4j − 64;
 * block 1: d = −0.25 (0xB400), q_j = 127 − j → x_j = (j − 127)/4. */
static void test_q8_0(void)
{
    unsigned char b[68];
    b[0] = 0x00, b[1] = 0x38;
    for (int j = 0; j < 32; j++) b[2 + j] = (unsigned char)(int8_t)(8 * j - 128);
    b[34] = 0x00, b[35] = 0xB4;
    for (int j = 0; j < 32; j++) b[36 + j] = (unsigned char)(127 - j);
    gguf_t *g = one_tensor(GGUF_T_Q8_0, 32, 2, b, sizeof b);
    const gguf_tensor_t *t = g ? gguf_tensor(g, "t") : NULL;
    float v[64];
    err_t err = {0, ""};
    CHECK(t && t->nbytes == 68 && gguf_dequant(t, 0, 64, v, &err) == 0);
    for (int j = 0; t && j < 32; j++) {
        CHECK(v[j] == (float)(4 * j - 64));
        CHECK(v[32 + j] == (float)(j - 127) / 4);
    }
    /* Block 1 alone; ranges that are not whole blocks inside the tensor. */
    CHECK(t && gguf_dequant(t, 32, 32, v, &err) == 0 && v[0] == -127.0f / 4 && v[31] == -24.0f);
    CHECK(t && gguf_dequant(t, 16, 32, v, &err) == -1 && strstr(err.msg, "tensor 't': elements"));
    CHECK(t && gguf_dequant(t, 0, 48, v, &err) == -1);
    CHECK(t && gguf_dequant(t, 32, 64, v, &err) == -1);
    CHECK(t && gguf_dequant(t, 96, 0, v, &err) == -1);
    CHECK(t && gguf_dequant(t, 64, 0, v, &err) == 0);
    gguf_close(g);
}

/* Q4_0, d = 2 (0x4000); byte j = j | (15 − j) << 4: element j = 2(j − 8),
 * element j + 16 = 2(15 − j − 8) = 14 − 2j. */
static void test_q4_0(void)
{
    unsigned char b[18] = {0x00, 0x40};
    for (int j = 0; j < 16; j++) b[2 + j] = (unsigned char)(j | (15 - j) << 4);
    gguf_t *g = one_tensor(GGUF_T_Q4_0, 32, 1, b, sizeof b);
    float v[32];
    err_t err;
    CHECK(g && gguf_dequant(gguf_tensor(g, "t"), 0, 32, v, &err) == 0);
    for (int j = 0; g && j < 16; j++) {
        CHECK(v[j] == (float)(2 * j - 16));
        CHECK(v[j + 16] == (float)(14 - 2 * j));
    }
    gguf_close(g);
}

/* Q4_1, d = 0.5 (0x3800), m = −1 (0xBC00); byte j = (15 − j) | j << 4:
 * element j = (15 − j)/2 − 1, element j + 16 = j/2 − 1. */
static void test_q4_1(void)
{
    unsigned char b[20] = {0x00, 0x38, 0x00, 0xBC};
    for (int j = 0; j < 16; j++) b[4 + j] = (unsigned char)((15 - j) | j << 4);
    gguf_t *g = one_tensor(GGUF_T_Q4_1, 32, 1, b, sizeof b);
    float v[32];
    err_t err;
    CHECK(g && gguf_dequant(gguf_tensor(g, "t"), 0, 32, v, &err) == 0);
    for (int j = 0; g && j < 16; j++) {
        CHECK(v[j] == (float)(15 - j) / 2 - 1);
        CHECK(v[j + 16] == (float)j / 2 - 1);
    }
    gguf_close(g);
}

/* Q4_K: two super-blocks with the same 12 scale bytes and nibbles, chosen
 * for the 6-bit scales sc = {1, 2, 3, 4, 5, 17, 33, 63} and mins
 * mn = {0, 1, 2, 3, 4, 20, 40, 63}, packed by hand:
 *   bytes 0..3: sc0..3 in the low 6 bits, top 2 bits of sc4..7 (0, 1, 2, 3)
 *               → 0x01, 0x42, 0x83, 0xC4
 *   bytes 4..7: mn0..3 in the low 6 bits, top 2 bits of mn4..7 (0, 1, 2, 3)
 *               → 0x00, 0x41, 0x82, 0xC3
 *   bytes 8..11: low 4 bits of sc4..7 (5, 1, 1, 15), high 4 of mn4..7
 *               (4, 4, 8, 15) → 0x45, 0x41, 0x81, 0xFF
 * Nibbles: byte l of each 32-byte chunk k holds l mod 16 low and
 * 15 − l mod 16 high. So element 64k + l = d·sc[2k]·(l mod 16) − dmin·mn[2k],
 * element 64k + 32 + l = d·sc[2k+1]·(15 − l mod 16) − dmin·mn[2k+1].
 * Super-block 0: d = 1 (0x3C00), dmin = 0.5 (0x3800); super-block 1:
 * d = 0.25 (0x3400), dmin = 2 (0x4000). Every value is exact in fp32. */
static void test_q4_k(void)
{
    static const int sc[8] = {1, 2, 3, 4, 5, 17, 33, 63}, mn[8] = {0, 1, 2, 3, 4, 20, 40, 63};
    static const unsigned char scales[12] = {0x01, 0x42, 0x83, 0xC4, 0x00, 0x41,
                                             0x82, 0xC3, 0x45, 0x41, 0x81, 0xFF};
    static const unsigned char dd[2][4] = {{0x00, 0x3C, 0x00, 0x38}, {0x00, 0x34, 0x00, 0x40}};
    static const double d[2] = {1, 0.25}, dmin[2] = {0.5, 2};
    unsigned char b[288];
    for (int s = 0; s < 2; s++) {
        unsigned char *p = b + 144 * s;
        memcpy(p, dd[s], 4);
        memcpy(p + 4, scales, 12);
        for (int i = 0; i < 128; i++) p[16 + i] = (unsigned char)((i % 16) | (15 - i % 16) << 4);
    }
    gguf_t *g = one_tensor(GGUF_T_Q4_K, 512, 1, b, sizeof b);
    float v[512];
    err_t err;
    CHECK(g && gguf_dequant(gguf_tensor(g, "t"), 0, 512, v, &err) == 0);
    int bad = 0;
    for (int s = 0; g && s < 2; s++)
        for (int k = 0; k < 4; k++)
            for (int l = 0; l < 32; l++) {
                double lo = d[s] * sc[2 * k] * (l % 16) - dmin[s] * mn[2 * k];
                double hi = d[s] * sc[2 * k + 1] * (15 - l % 16) - dmin[s] * mn[2 * k + 1];
                if (v[256 * s + 64 * k + l] != lo || v[256 * s + 64 * k + 32 + l] != hi) bad++;
            }
    CHECK(bad == 0);
    /* Spot values, worked out in full: sub-block 7 of super-block 1 at
     * l = 0 is 0.25·63·15 − 2·63 = 110.25; sub-block 5 at l = 3 of
     * super-block 0 is 17·12 − 0.5·20 = 194. */
    CHECK(g && v[256 + 192 + 32] == 110.25f && v[128 + 32 + 3] == 194.0f);
    gguf_close(g);
}

/* A known type that is not converted, and the message saying so. */
static void test_no_dequant(void)
{
    unsigned char b[210] = {0};
    gguf_t *g = one_tensor(GGUF_T_Q6_K, 256, 1, b, sizeof b);
    float v[256];
    err_t err = {0, ""};
    const gguf_tensor_t *t = g ? gguf_tensor(g, "t") : NULL;
    CHECK(t && t->nbytes == 210 && gguf_dequant(t, 0, 256, v, &err) == -1 &&
          strstr(err.msg, "tensor 't': cannot dequantise type Q6_K") && err.code == ERR_INPUT);
    gguf_close(g);
    /* A name is file data: a line break in it once split the message. */
    tw_t w;
    tw_init(&w);
    uint64_t ne[2] = {256, 1};
    tw_tensor(&w, "line\nbreak", 2, ne, GGUF_T_Q6_K, b, sizeof b);
    buf_t f;
    tw_build(&w, &f);
    char path[600];
    g = open_bytes(&f, "nl.gguf", &err, path, sizeof path);
    free(f.p);
    t = g ? gguf_tensor(g, "line\nbreak") : NULL;
    CHECK(t && gguf_dequant(t, 0, 256, v, &err) == -1 &&
          strstr(err.msg, "tensor 'line?break': cannot dequantise") && !strchr(err.msg, '\n'));
    CHECK(t && gguf_dequant(t, 1, 256, v, &err) == -1 && strstr(err.msg, "tensor 'line?break'") &&
          !strchr(err.msg, '\n'));
    gguf_close(g);
}

/* ---- bad files --------------------------------------------------------------- */

/* A small valid file: several metadata kinds, an F32 and a Q8_0 tensor. */
static void small_file(buf_t *f)
{
    tw_t w;
    tw_init(&w);
    put_str(tw_key(&w, "general.name", GGUF_V_STR), "tiny");
    buf_t *b = tw_key(&w, "v", GGUF_V_ARR);
    put_u32(b, GGUF_V_STR);
    put_u64(b, 2);
    put_str(b, "xy"), put_str(b, "z");
    b = tw_key(&w, "n", GGUF_V_ARR);
    put_u32(b, GGUF_V_I16);
    put_u64(b, 2);
    put_u16(b, 1), put_u16(b, 2);
    put_u8(tw_key(&w, "flag", GGUF_V_BOOL), 0);
    float a[2] = {1, 2};
    uint64_t ne1[1] = {2}, ne2[2] = {32, 1};
    tw_tensor(&w, "a", 1, ne1, GGUF_T_F32, a, sizeof a);
    unsigned char q[34] = {0x00, 0x3C, 1, 2, 3};
    tw_tensor(&w, "q", 2, ne2, GGUF_T_Q8_0, q, sizeof q);
    tw_build(&w, f);
}

/* Every proper prefix of a valid file is refused with a message naming the
 * file; the whole file opens. */
static void test_truncated(void)
{
    buf_t f;
    small_file(&f);
    char path[600];
    err_t err = {0, ""};
    gguf_t *g = open_bytes(&f, "whole.gguf", &err, path, sizeof path);
    CHECK(g && gguf_tensor_count(g) == 2 && gguf_kv_count(g) == 4);
    gguf_close(g);
    int bad_n = 0;
    for (size_t n = 0; n < f.n; n++) {
        buf_t p = {f.p, n};
        err_t e = {0, ""};
        g = open_bytes(&p, "prefix.gguf", &e, path, sizeof path);
        if (g || e.code != ERR_INPUT || !names_file(e.msg, path)) {
            if (bad_n++ < 3) printf("  prefix %zu: %s\n", n, g ? "opened" : e.msg);
        }
        gguf_close(g);
    }
    CHECK(bad_n == 0);
    /* What a cut in the tensor infos says. */
    size_t cut = 4 + 4 + 8 + 8;
    while (cut < f.n && memcmp(f.p + cut, "\x01\x00\x00\x00\x00\x00\x00\x00\x61", 9)) cut++;
    buf_t p = {f.p, cut + 9 + 2};   /* the name 'a' and 2 of n_dims' 4 bytes */
    char want[128];
    snprintf(want, sizeof want, "truncated: tensor info 0 ('a') needs 4 bytes at offset %zu, "
             "the file has %zu", cut + 9, cut + 11);
    buf_t copy = {malloc(p.n + 1), p.n};
    CHECK(copy.p != NULL);
    if (copy.p) {
        memcpy(copy.p, p.p, p.n);
        bad("cut.gguf", &copy, want);
    }
    free(f.p);
}

/* The header only (no metadata, no tensors), with the fields given. */
static void header(buf_t *f, const char *magic, uint32_t version, uint64_t nt, uint64_t nkv)
{
    tw_t w;
    tw_init(&w);
    tw_build_hdr(&w, f, magic, version, nt, nkv);
}

static void test_bad_header(void)
{
    buf_t f = {0};
    bad("empty.gguf", &f, "truncated: the header needs 4 bytes at offset 0, the file has 0");
    header(&f, "GGML", 3, 0, 0);
    bad("magic.gguf", &f, "not a GGUF file (it starts with bytes 47 47 4d 4c, not 'GGUF')");
    header(&f, "GGUF", 1, 0, 0);
    bad("v1.gguf", &f, "GGUF version 1 is not supported (only 2 and 3)");
    header(&f, "GGUF", 4, 0, 0);
    bad("v4.gguf", &f, "GGUF version 4 is not supported");
    header(&f, "GGUF", 3u << 24, 0, 0);
    bad("be.gguf", &f, "looks like a big-endian file");
    /* Absurd counts: refused from the header (an allocation of that size
     * would have failed with "out of memory" instead, or aborted ASan). */
    header(&f, "GGUF", 3, 1ull << 60, 0);
    bad("nt.gguf", &f, "tensor count 1152921504606846976 is more than the 8 bytes after the "
        "header could hold");
    header(&f, "GGUF", 3, 0, 1ull << 60);
    bad("nkv.gguf", &f, "metadata key count 1152921504606846976 is more than");
    /* 100 bytes after the header hold 3 tensor infos but not 3 and 1 key. */
    tw_t w;
    tw_init(&w);
    put(&w.kv, "                                                                    "
               "                                ", 100);
    tw_build_hdr(&w, &f, "GGUF", 3, 3, 1);
    bad("both.gguf", &f, "3 tensors and 1 metadata keys need more than the 104 bytes");
}

/* A file with one key: key, type, the raw value bytes. */
static void one_kv(buf_t *f, const char *key, uint32_t type, const void *val, size_t n)
{
    tw_t w;
    tw_init(&w);
    put(tw_key(&w, key, type), val, n);
    tw_build(&w, f);
}

static void test_bad_metadata(void)
{
    buf_t f;
    tw_t w;
    unsigned char v[16] = {0};
    /* A key whose length is 2^63. */
    tw_init(&w);
    put_u64(&w.kv, 1ull << 63);
    put(&w.kv, "abcdefghijklm", 13);
    w.nkv = 1;
    tw_build(&w, &f);
    bad("keylen.gguf", &f, "truncated: metadata key 0 needs 9223372036854775808 bytes at "
        "offset 32, the file has 64");
    /* A string value of length 2^63. */
    tw_init(&w);
    buf_t *b = tw_key(&w, "s", GGUF_V_STR);
    put_u64(b, 1ull << 63);
    tw_build(&w, &f);
    bad("strlen.gguf", &f, "truncated: metadata key 0 ('s') needs 9223372036854775808 bytes");
    /* Arrays of 2^62 elements: numbers and strings. */
    tw_init(&w);
    b = tw_key(&w, "arr", GGUF_V_ARR);
    put_u32(b, GGUF_V_U32);
    put_u64(b, 1ull << 62);
    put_u32(b, 1);
    tw_build(&w, &f);
    bad("arrcount.gguf", &f, "metadata key 0 ('arr'): an array of 4611686018427387904 u32 "
        "values needs more than the 13 bytes left at offset 51");
    tw_init(&w);
    b = tw_key(&w, "arr", GGUF_V_ARR);
    put_u32(b, GGUF_V_STR);
    put_u64(b, 1ull << 62);
    tw_build(&w, &f);
    bad("arrstr.gguf", &f, "an array of 4611686018427387904 string values needs more");
    /* Types. */
    one_kv(&f, "t", 13, v, 4);
    bad("vtype.gguf", &f, "metadata key 0 ('t'): unknown value type 13");
    v[0] = 2;
    one_kv(&f, "flag", GGUF_V_BOOL, v, 1);
    bad("bool.gguf", &f, "metadata key 0 ('flag'): bool value 2 (must be 0 or 1)");
    tw_init(&w);
    b = tw_key(&w, "flags", GGUF_V_ARR);
    put_u32(b, GGUF_V_BOOL);
    put_u64(b, 3);
    put_u8(b, 1), put_u8(b, 0), put_u8(b, 7);
    tw_build(&w, &f);
    bad("boolarr.gguf", &f, "metadata key 0 ('flags'): bool value 7");
    tw_init(&w);
    b = tw_key(&w, "nest", GGUF_V_ARR);
    put_u32(b, GGUF_V_ARR);
    put_u64(b, 1);
    put_u32(b, GGUF_V_U8);
    put_u64(b, 0);
    tw_build(&w, &f);
    bad("nested.gguf", &f, "metadata key 0 ('nest'): nested arrays are not supported");
    tw_init(&w);
    b = tw_key(&w, "arr", GGUF_V_ARR);
    put_u32(b, 200);
    put_u64(b, 0);
    tw_build(&w, &f);
    bad("elemtype.gguf", &f, "unknown array element type 200");
    /* Duplicates; a NUL in a key. */
    tw_init(&w);
    put_u32(tw_key(&w, "a", GGUF_V_U32), 1);
    put_u32(tw_key(&w, "b", GGUF_V_U32), 1);
    put_u8(tw_key(&w, "a", GGUF_V_U8), 1);
    tw_build(&w, &f);
    bad("dupkey.gguf", &f, "key 'a' appears twice (metadata keys 0 and 2)");
    tw_init(&w);
    put_u64(&w.kv, 3);
    put(&w.kv, "a\0b", 3);
    put_u32(&w.kv, GGUF_V_U8);
    put_u8(&w.kv, 0);
    w.nkv = 1;
    tw_build(&w, &f);
    bad("nulkey.gguf", &f, "metadata key 0 ('a?b'): the key contains a NUL byte");
    /* Alignment: 0, 3, another type. */
    uint32_t al = 0;
    one_kv(&f, "general.alignment", GGUF_V_U32, &al, 4);
    bad("align0.gguf", &f, "general.alignment = 0 is not a power of two");
    al = 3;
    one_kv(&f, "general.alignment", GGUF_V_U32, &al, 4);
    bad("align3.gguf", &f, "general.alignment = 3 is not a power of two");
    uint64_t al64 = 32;
    one_kv(&f, "general.alignment", GGUF_V_U64, &al64, 8);
    bad("align64.gguf", &f, "key 'general.alignment' has type u64; it must be u32");
    /* Names in messages are cut and cleaned to one line. */
    char longkey[200];
    memset(longkey, 'k', sizeof longkey - 1);
    longkey[sizeof longkey - 1] = 0;
    longkey[5] = '\n';
    one_kv(&f, longkey, 77, v, 0);
    char want[128] = "('kkkkk?";
    memset(want + 8, 'k', 58);   /* 64 bytes of the key shown, then "..." */
    strcpy(want + 66, "...'): unknown value type 77");
    bad("longkey.gguf", &f, want);
}

/* One tensor info (no data unless given) and data_bytes of zeros after it. */
static size_t tinfo(buf_t *f, const char *name, uint32_t ndim, const uint64_t *ne,
                    uint32_t type, uint64_t off, size_t data_bytes)
{
    tw_t w;
    tw_init(&w);
    tw_info(&w, name, ndim, ne, type, off);
    for (size_t i = 0; i < data_bytes; i++) put_u8(&w.data, 0);
    return tw_build(&w, f);
}

static void test_bad_tensors(void)
{
    buf_t f;
    uint64_t ne[5] = {32, 2, 1, 1, 1};
    tinfo(&f, "x", 1, ne, 99, 0, 128);
    bad("ttype.gguf", &f, "tensor 'x': unknown type 99");
    tinfo(&f, "x", 1, ne, 16, 0, 128);
    bad("ttype16.gguf", &f, "tensor 'x': unknown type 16");
    tinfo(&f, "x", 0, ne, GGUF_T_F32, 0, 128);
    bad("ndim0.gguf", &f, "tensor 'x': 0 dimensions (1 to 4 allowed)");
    tinfo(&f, "x", 5, ne, GGUF_T_F32, 0, 128);
    bad("ndim5.gguf", &f, "tensor 'x': 5 dimensions (1 to 4 allowed)");
    uint64_t ne40[1] = {40};
    tinfo(&f, "x", 1, ne40, GGUF_T_Q8_0, 0, 128);
    bad("block.gguf", &f, "tensor 'x': ne[0] = 40 is not a multiple of the Q8_0 block size 32");
    uint64_t big[3] = {1ull << 32, 1ull << 32, 2};
    tinfo(&f, "x", 3, big, GGUF_T_F32, 0, 128);
    bad("product.gguf", &f, "tensor 'x': its 3 dimensions multiply past 2^64 elements");
    uint64_t neg[2] = {1, 1ull << 63};
    tinfo(&f, "x", 2, neg, GGUF_T_F32, 0, 128);
    bad("ne63.gguf", &f, "tensor 'x': ne[1] = 9223372036854775808 is out of range");
    /* 2^61 elements of F32: 2^63 bytes, no overflow yet, but no such file. */
    uint64_t huge[1] = {1ull << 61};
    size_t start = tinfo(&f, "x", 1, huge, GGUF_T_F32, 0, 128);
    char want[200];
    snprintf(want, sizeof want, "tensor 'x': data at %zu + 9223372036854775808 bytes runs past "
             "the end of the file (%zu bytes)", start, start + 128);
    bad("huge.gguf", &f, want);
    tinfo(&f, "x", 2, ne, GGUF_T_F32, 4, 256);
    bad("misaligned.gguf", &f, "tensor 'x': offset 4 is not a multiple of the alignment 32");
    start = tinfo(&f, "x", 2, ne, GGUF_T_F32, 1ull << 40, 256);
    snprintf(want, sizeof want, "tensor 'x': offset 1099511627776 lies past the end of the file "
             "(the data section starts at %zu, the file has %zu bytes)", start, start + 256);
    bad("pastend.gguf", &f, want);
    /* 64 elements of F32 = 256 bytes: one byte short. */
    start = tinfo(&f, "x", 2, ne, GGUF_T_F32, 0, 255);
    snprintf(want, sizeof want, "tensor 'x': data at %zu + 256 bytes runs past the end of the "
             "file (%zu bytes)", start, start + 255);
    bad("short.gguf", &f, want);
    /* A NUL in a name. */
    tw_t w;
    tw_init(&w);
    put_u64(&w.ti, 2);
    put(&w.ti, "a\0", 2);
    w.nt = 1;
    tw_build(&w, &f);
    bad("nulname.gguf", &f, "tensor info 0: the name contains a NUL byte");
    /* Overlap: 64 bytes at 0 and at 32 (and a third, empty one between). */
    uint64_t n16[1] = {16}, n0[1] = {0};
    tw_init(&w);
    tw_info(&w, "first", 1, n16, GGUF_T_F32, 0);
    tw_info(&w, "empty", 1, n0, GGUF_T_F32, 32);
    tw_info(&w, "second", 1, n16, GGUF_T_F32, 32);
    for (int i = 0; i < 96; i++) put_u8(&w.data, 0);
    start = tw_build(&w, &f);
    snprintf(want, sizeof want, "tensors 'first' (bytes %zu to %zu) and 'second' (from byte %zu) "
             "overlap", start, start + 63, start + 32);
    bad("overlap.gguf", &f, want);
    /* Overlap hidden behind a small tensor: a long one at 0 covers both. */
    uint64_t n32[1] = {32}, n8[1] = {8};
    tw_init(&w);
    tw_info(&w, "long", 1, n32, GGUF_T_F32, 0);
    tw_info(&w, "inner", 1, n8, GGUF_T_F32, 32);
    tw_info(&w, "later", 1, n8, GGUF_T_F32, 64);
    for (int i = 0; i < 128; i++) put_u8(&w.data, 0);
    tw_build(&w, &f);
    bad("overlap2.gguf", &f, "tensors 'long'");
    /* Touching is not overlapping; empty tensors overlap nothing. */
    tw_init(&w);
    tw_info(&w, "p", 1, n16, GGUF_T_F32, 0);
    tw_info(&w, "e", 1, n0, GGUF_T_F32, 32);
    tw_info(&w, "q", 1, n16, GGUF_T_F32, 64);
    for (int i = 0; i < 128; i++) put_u8(&w.data, 0);
    tw_build(&w, &f);
    char path[600];
    err_t err = {0, ""};
    gguf_t *g = open_bytes(&f, "touch.gguf", &err, path, sizeof path);
    CHECK(g && gguf_tensor(g, "e") && gguf_tensor(g, "e")->nelem == 0 &&
          gguf_tensor(g, "e")->nbytes == 0);
    if (!g) printf("  %s\n", err.msg);
    gguf_close(g);
    free(f.p);
    /* Duplicate names. */
    tw_init(&w);
    tw_info(&w, "w", 1, n16, GGUF_T_F32, 0);
    tw_info(&w, "v", 1, n16, GGUF_T_F32, 64);
    tw_info(&w, "w", 1, n16, GGUF_T_F32, 128);
    for (int i = 0; i < 192; i++) put_u8(&w.data, 0);
    tw_build(&w, &f);
    bad("dupname.gguf", &f, "tensor name 'w' appears twice (tensor infos 0 and 2)");
}

/* Not a regular file; no file. */
static void test_bad_path(void)
{
    err_t err = {0, ""};
    CHECK(gguf_open(dir, &err) == NULL && err.code == ERR_INPUT &&
          strstr(err.msg, "not a regular file (a directory)") && names_file(err.msg, dir));
    char p[600];
    snprintf(p, sizeof p, "%s/absent.gguf", dir);
    CHECK(gguf_open(p, &err) == NULL && err.code == ERR_INPUT &&
          strstr(err.msg, "cannot open: No such file") && names_file(err.msg, p));
}

/* ---- the real model ------------------------------------------------------ */

static const char *real_path;   /* SPECSIM_GGUF_REAL */

static void test_real_file(void)
{
    const char *path = real_path;
    err_t err = {0, ""};
    gguf_t *g = gguf_open(path, &err);
    CHECK(g != NULL);
    if (!g) {
        printf("  %s\n", err.msg);
        return;
    }
    uint32_t blocks = 0;
    CHECK(gguf_tensor_count(g) == 272);
    CHECK(gguf_get_u32(g, "llama.block_count", &blocks, &err) == 0 && blocks == 30);
    const gguf_tensor_t *t = gguf_tensor(g, "token_embd.weight");
    CHECK(t && t->type == GGUF_T_Q8_0 && t->ndim == 2 && t->ne[0] == 576 && t->ne[1] == 49152);
    CHECK(t && t->nbytes == (size_t)576 * 49152 / 32 * 34);
    gguf_close(g);
}

/* ---- --dump ------------------------------------------------------------------ */

static int dump(const char *file, const char *name, const char *out)
{
    err_t err = {0, ""};
    gguf_t *g = gguf_open(file, &err);
    if (!g) {
        fprintf(stderr, "%s\n", err.msg);
        return 1;
    }
    const gguf_tensor_t *t = gguf_tensor(g, name);
    float *v = t ? malloc(t->nelem ? t->nelem * sizeof *v : 1) : NULL;
    int rc = 1;
    if (!t)
        fprintf(stderr, "%s: no tensor '%s'\n", file, name);
    else if (!v)
        fprintf(stderr, "out of memory\n");
    else if (gguf_dequant(t, 0, t->nelem, v, &err) != 0)
        fprintf(stderr, "%s: %s\n", file, err.msg);
    else {
        FILE *f = fopen(out, "wb");
        int ok = f != NULL;
        for (uint64_t i = 0; ok && i < t->nelem; i++) {
            uint32_t u = bits_of(v[i]);
            unsigned char le[4] = {(unsigned char)u, (unsigned char)(u >> 8),
                                   (unsigned char)(u >> 16), (unsigned char)(u >> 24)};
            ok = fwrite(le, 1, 4, f) == 4;
        }
        if (f && fclose(f) != 0) ok = 0;
        if (!ok) fprintf(stderr, "%s: %s\n", out, strerror(errno));
        rc = ok ? 0 : 1;
    }
    free(v);
    gguf_close(g);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc == 5 && strcmp(argv[1], "--dump") == 0) return dump(argv[2], argv[3], argv[4]);
    if (argc != 1) {
        fprintf(stderr, "usage: test_gguf [--dump FILE TENSOR OUT]\n");
        return 2;
    }
    if (!mkdtemp(dir)) return 1;
    RUN(test_metadata);
    RUN(test_version2);
    RUN(test_alignment);
    RUN(test_type_table);
    RUN(test_f16);
    RUN(test_bf16);
    RUN(test_q8_0);
    RUN(test_q4_0);
    RUN(test_q4_1);
    RUN(test_q4_k);
    RUN(test_no_dequant);
    RUN(test_truncated);
    RUN(test_bad_header);
    RUN(test_bad_metadata);
    RUN(test_bad_tensors);
    RUN(test_bad_path);
    real_path = getenv("SPECSIM_GGUF_REAL");
    if (real_path && *real_path) RUN(test_real_file);
    rmdir(dir);
    return check_done();
}
