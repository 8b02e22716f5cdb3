/* gguf — a checked reader of GGUF files (see gguf.h; the format in
 * docs/llm.md, "GGUF").
 *
 * gguf_open reads the file into one buffer (the image) and parses it front to
 * back with a cursor that refuses every read past the end. Each count is
 * compared with the bytes left before anything of that size is allocated, so
 * a hostile header costs nothing. Keys and tensor names are copied
 * (NUL-terminated, for the C-string lookups) and looked up through
 * indexes sorted by name; the same sort finds duplicates. Tensor overlaps are
 * found by sorting on offset. Values stay in the image and are decoded byte
 * by byte (little-endian whatever the host), so nothing depends on the
 * image's alignment.
 */
#include "gguf.h"
#include "io/infile.h"

#include <errno.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* Larger files are refused: far above any model this runtime can run, and a
 * cap keeps a mistaken path (a disk image) from being read whole. */
#define GGUF_MAX_FILE ((uint64_t)64 << 30)
#define GGUF_ALIGN_DEFAULT 32
/* The image's own alignment, so tensor data aligned in the file is aligned
 * in memory up to this. */
#define IMG_ALIGN 64
/* Bytes of a key or tensor name quoted in a message. */
#define SHOWN_MAX 64

/* The smallest metadata entry (an empty key and a u8) and tensor info (an
 * empty name, one dimension): what bounds the counts in the header. */
#define KV_MIN_BYTES 13
#define TI_MIN_BYTES 32

/* ---- types ---------------------------------------------------------------- */

typedef struct ttype {
    int type;
    const char *name;
    int blk;          /* elements per block */
    int bytes;        /* bytes per block */
    int dequant;      /* gguf_dequant converts it */
} ttype_t;

/* The ggml block layouts (docs/llm.md, "GGUF"). */
static const ttype_t ttypes[] = {
    {GGUF_T_F32, "F32", 1, 4, 1},      {GGUF_T_F16, "F16", 1, 2, 1},
    {GGUF_T_BF16, "BF16", 1, 2, 1},    {GGUF_T_Q4_0, "Q4_0", 32, 18, 1},
    {GGUF_T_Q4_1, "Q4_1", 32, 20, 1},  {GGUF_T_Q5_0, "Q5_0", 32, 22, 0},
    {GGUF_T_Q5_1, "Q5_1", 32, 24, 0},  {GGUF_T_Q8_0, "Q8_0", 32, 34, 1},
    {GGUF_T_Q8_1, "Q8_1", 32, 36, 0},  {GGUF_T_Q2_K, "Q2_K", 256, 84, 0},
    {GGUF_T_Q3_K, "Q3_K", 256, 110, 0}, {GGUF_T_Q4_K, "Q4_K", 256, 144, 1},
    {GGUF_T_Q5_K, "Q5_K", 256, 176, 0}, {GGUF_T_Q6_K, "Q6_K", 256, 210, 0},
    {GGUF_T_Q8_K, "Q8_K", 256, 292, 0},
};

static const ttype_t *ttype_of(int type)
{
    for (size_t i = 0; i < sizeof ttypes / sizeof ttypes[0]; i++)
        if (ttypes[i].type == type) return &ttypes[i];
    return NULL;
}

const char *gguf_type_name(int type)
{
    const ttype_t *t = ttype_of(type);
    return t ? t->name : "unknown";
}

int gguf_type_block(int type)
{
    const ttype_t *t = ttype_of(type);
    return t ? t->blk : 0;
}

size_t gguf_type_block_bytes(int type)
{
    const ttype_t *t = ttype_of(type);
    return t ? (size_t)t->bytes : 0;
}

int gguf_type_dequant_ok(int type)
{
    const ttype_t *t = ttype_of(type);
    return t ? t->dequant : 0;
}

/* Bytes of a scalar value type; 0 for string, array and unknown types. */
static size_t vsize(int vt)
{
    switch (vt) {
    case GGUF_V_U8: case GGUF_V_I8: case GGUF_V_BOOL: return 1;
    case GGUF_V_U16: case GGUF_V_I16: return 2;
    case GGUF_V_U32: case GGUF_V_I32: case GGUF_V_F32: return 4;
    case GGUF_V_U64: case GGUF_V_I64: case GGUF_V_F64: return 8;
    default: return 0;
    }
}

static const char *vname(int vt)
{
    static const char *const names[] = {"u8",  "i8",   "u16",    "i16",   "u32",
                                        "i32", "f32",  "bool",   "string", "array",
                                        "u64", "i64",  "f64"};
    return vt >= 0 && vt <= GGUF_V_F64 ? names[vt] : "unknown";
}

/* ---- little-endian decoding ------------------------------------------------ */

static uint16_t le16(const unsigned char *p) { return (uint16_t)(p[0] | p[1] << 8); }

static uint32_t le32(const unsigned char *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const unsigned char *p)
{
    return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32;
}

static float f32_bits(uint32_t u)
{
    float f;
    memcpy(&f, &u, sizeof f);
    return f;
}

static double f64_bits(uint64_t u)
{
    double d;
    memcpy(&d, &u, sizeof d);
    return d;
}

/* IEEE binary16 → binary32, exact (every half is a float). The same function
 * as fp16_to_f32 in kernels/w4a16.h, which tests/llm/test_gguf.c checks for
 * all 65536 inputs: this reader is also linked where libkernels is not (the
 * fuzz targets). */
static float half(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, exp = (h >> 10) & 0x1Fu, mant = h & 0x3FFu;
    uint32_t bits;
    if (exp == 0x1F) {
        bits = sign | 0x7F800000u | mant << 13;
    } else if (exp != 0) {
        bits = sign | (exp + 112u) << 23 | mant << 13;
    } else if (mant == 0) {
        bits = sign;
    } else {
        /* Subnormal: mant·2^−24; shift until the implicit bit appears. */
        uint32_t e = 113;
        while (!(mant & 0x400u)) {
            mant <<= 1;
            e--;
        }
        bits = sign | e << 23 | (mant & 0x3FFu) << 13;
    }
    return f32_bits(bits);
}

/* ---- the reader's records --------------------------------------------------- */

typedef struct kv {
    const char *key;              /* NUL-terminated, in g->keys */
    const unsigned char *kraw;    /* the key in the image (klen bytes) */
    size_t klen;
    int index;                    /* position in the file */
    int type;                     /* enum gguf_vtype */
    const unsigned char *val;     /* scalars and strings: the value as stored;
                                     arrays: the first element */
    int elem;                     /* arrays: element type */
    uint64_t count;               /* arrays: element count */
    size_t *soff;                 /* string arrays: each element's image offset */
} kv_t;

typedef struct trec {
    gguf_tensor_t pub;            /* first: gguf_tensor_at returns &pub */
    const unsigned char *nraw;    /* the name in the image */
    size_t nlen;
    uint64_t off;                 /* relative to the data section */
    uint64_t nbytes;              /* pub.nbytes once known to fit the file */
    int index;
} trec_t;

struct gguf {
    char *path;
    unsigned char *img;
    size_t size;
    uint32_t version;
    size_t align;
    kv_t *kv;                     /* file order */
    int nkv;
    kv_t **kv_by_key;
    trec_t *t;                    /* file order */
    int nt;
    trec_t **t_by_name;
    char *keys, *tnames;          /* the keys and tensor names, NUL-terminated */
};

/* The parse cursor. `what` names the item being read, for messages. */
typedef struct rd {
    gguf_t *g;
    size_t pos;
    err_t *err;
    char what[192];
} rd_t;

/* s[0..n) as a one-line quoted-safe string: bytes outside printable ASCII
 * become '?', and a long name is cut with "...". */
const char *gguf_shown(const unsigned char *s, size_t n, char *buf, size_t bsz)
{
    size_t k = 0;
    for (size_t i = 0; i < n && i < SHOWN_MAX && k + 1 < bsz; i++)
        buf[k++] = s[i] >= 0x20 && s[i] < 0x7F && s[i] != '\'' ? (char)s[i] : '?';
    if (n > SHOWN_MAX && k + 4 < bsz) {
        memcpy(buf + k, "...", 3);
        k += 3;
    }
    buf[k] = 0;
    return buf;
}

static int need(rd_t *r, uint64_t n)
{
    if (n <= r->g->size - r->pos) return 0;
    return err_set(r->err, ERR_INPUT,
                   "%s: truncated: %s needs %llu bytes at offset %zu, the file has %zu",
                   r->g->path, r->what, (unsigned long long)n, r->pos, r->g->size);
}

static int rd_u32(rd_t *r, uint32_t *v)
{
    if (need(r, 4)) return -1;
    *v = le32(r->g->img + r->pos);
    r->pos += 4;
    return 0;
}

static int rd_u64(rd_t *r, uint64_t *v)
{
    if (need(r, 8)) return -1;
    *v = le64(r->g->img + r->pos);
    r->pos += 8;
    return 0;
}

/* A length-prefixed string; *s points into the image. */
static int rd_str(rd_t *r, const unsigned char **s, size_t *len)
{
    uint64_t n;
    if (rd_u64(r, &n) || need(r, n)) return -1;
    *s = r->g->img + r->pos;
    *len = (size_t)n;
    r->pos += (size_t)n;
    return 0;
}

/* ---- reading the file --------------------------------------------------- */

static int check_stat(const char *path, const struct stat *st, err_t *err)
{
    if (!S_ISREG(st->st_mode))
        return err_set(err, ERR_INPUT, "%s: not a regular file (%s)", path,
                       infile_kind_name(st->st_mode));
    if ((uint64_t)st->st_size > GGUF_MAX_FILE || (uint64_t)st->st_size > SIZE_MAX / 2)
        return err_set(err, ERR_INPUT, "%s: %llu bytes; GGUF files are capped at %llu GiB",
                       path, (unsigned long long)st->st_size,
                       (unsigned long long)(GGUF_MAX_FILE >> 30));
    return 0;
}

/* Reads g->path whole into g->img (g->size bytes). stat before fopen: a FIFO
 * without a writer would block fopen; fstat after it: the path may have
 * changed in between. */
static int read_image(gguf_t *g, err_t *err)
{
    struct stat st;
    if (stat(g->path, &st) != 0)
        return err_set(err, ERR_INPUT, "%s: cannot open: %s", g->path, strerror(errno));
    if (check_stat(g->path, &st, err)) return -1;
    FILE *f = fopen(g->path, "rb");
    if (!f) return err_set(err, ERR_INPUT, "%s: cannot open: %s", g->path, strerror(errno));
    int rc = 0;
    if (fstat(fileno(f), &st) != 0)
        rc = err_set(err, ERR_INPUT, "%s: cannot stat: %s", g->path, strerror(errno));
    else
        rc = check_stat(g->path, &st, err);
    if (rc == 0) {
        g->size = (size_t)st.st_size;
        /* Exactly the file's size (not rounded up): AddressSanitizer then
         * catches a read one byte past it. */
        void *p = NULL;
        if (posix_memalign(&p, IMG_ALIGN, g->size ? g->size : 1) != 0)
            rc = err_set(err, ERR_RUNTIME, "%s: out of memory for %zu bytes", g->path, g->size);
        g->img = p;
    }
    if (rc == 0) {
        size_t got = g->size ? fread(g->img, 1, g->size, f) : 0;
        if (got != g->size)
            rc = ferror(f) ? err_set(err, ERR_INPUT, "%s: read error after %zu bytes", g->path, got)
                           : err_set(err, ERR_INPUT, "%s: the file shrank to %zu bytes while "
                                     "being read (%zu expected)", g->path, got, g->size);
    }
    if (fclose(f) != 0 && rc == 0)
        rc = err_set(err, ERR_INPUT, "%s: read error: %s", g->path, strerror(errno));
    return rc;
}

/* ---- header -------------------------------------------------------------- */

static int read_header(rd_t *r, uint64_t *nt, uint64_t *nkv)
{
    gguf_t *g = r->g;
    snprintf(r->what, sizeof r->what, "the header");
    if (need(r, 4)) return -1;
    const unsigned char *m = g->img;
    if (memcmp(m, "GGUF", 4) != 0)
        return err_set(r->err, ERR_INPUT, "%s: not a GGUF file (it starts with bytes "
                       "%02x %02x %02x %02x, not 'GGUF')", g->path, m[0], m[1], m[2], m[3]);
    r->pos = 4;
    if (rd_u32(r, &g->version)) return -1;
    if (g->version != 2 && g->version != 3) {
        uint32_t v = g->version;
        uint32_t sw = (v >> 24) | (v >> 8 & 0xFF00u) | (v << 8 & 0xFF0000u) | v << 24;
        return err_set(r->err, ERR_INPUT, "%s: GGUF version %u is not supported (only 2 and 3)%s",
                       g->path, v, sw == 2 || sw == 3 ? "; this looks like a big-endian file" : "");
    }
    if (rd_u64(r, nt) || rd_u64(r, nkv)) return -1;
    size_t left = g->size - r->pos;
    /* Each count against the bytes left, before anything is allocated. */
    if (*nt > left / TI_MIN_BYTES || *nt > INT_MAX)
        return err_set(r->err, ERR_INPUT, "%s: tensor count %llu is more than the %zu bytes "
                       "after the header could hold", g->path, (unsigned long long)*nt, left);
    if (*nkv > left / KV_MIN_BYTES || *nkv > INT_MAX)
        return err_set(r->err, ERR_INPUT, "%s: metadata key count %llu is more than the %zu "
                       "bytes after the header could hold", g->path, (unsigned long long)*nkv,
                       left);
    if (*nt * TI_MIN_BYTES + *nkv * KV_MIN_BYTES > left)
        return err_set(r->err, ERR_INPUT, "%s: %llu tensors and %llu metadata keys need more "
                       "than the %zu bytes after the header", g->path,
                       (unsigned long long)*nt, (unsigned long long)*nkv, left);
    return 0;
}

/* ---- metadata -------------------------------------------------------------- */

static int kv_fail(rd_t *r, const kv_t *kv, const char *what)
{
    char b[SHOWN_MAX + 8];
    return err_set(r->err, ERR_INPUT, "%s: metadata key %d ('%s'): %s", r->g->path, kv->index,
                   gguf_shown(kv->kraw, kv->klen, b, sizeof b), what);
}

/* count elements of a fixed size sz fit in what is left. */
static int arr_fits(rd_t *r, const kv_t *kv, uint64_t count, size_t sz)
{
    size_t left = r->g->size - r->pos;
    if (count <= left / sz) return 0;
    char msg[160];
    snprintf(msg, sizeof msg, "an array of %llu %s values needs more than the %zu bytes left "
             "at offset %zu", (unsigned long long)count, vname(kv->elem), left, r->pos);
    return kv_fail(r, kv, msg);
}

static int check_bool(rd_t *r, const kv_t *kv, const unsigned char *p)
{
    if (*p <= 1) return 0;
    char msg[64];
    snprintf(msg, sizeof msg, "bool value %u (must be 0 or 1)", *p);
    return kv_fail(r, kv, msg);
}

static int read_array(rd_t *r, kv_t *kv)
{
    uint32_t et;
    if (rd_u32(r, &et)) return -1;
    kv->elem = et <= GGUF_V_F64 ? (int)et : -1;
    if (et == GGUF_V_ARR) return kv_fail(r, kv, "nested arrays are not supported");
    if (kv->elem < 0) {
        char msg[64];
        snprintf(msg, sizeof msg, "unknown array element type %u", et);
        return kv_fail(r, kv, msg);
    }
    if (rd_u64(r, &kv->count)) return -1;
    kv->val = r->g->img + r->pos;
    if (et != GGUF_V_STR) {
        size_t sz = vsize((int)et);
        if (arr_fits(r, kv, kv->count, sz)) return -1;
        if (et == GGUF_V_BOOL)
            for (uint64_t i = 0; i < kv->count; i++)
                if (check_bool(r, kv, kv->val + i)) return -1;
        r->pos += (size_t)kv->count * sz;
        return 0;
    }
    /* Every string takes at least its 8-byte length. */
    if (arr_fits(r, kv, kv->count, 8)) return -1;
    if (kv->count == 0) return 0;
    kv->soff = malloc((size_t)kv->count * sizeof *kv->soff);
    if (!kv->soff) return err_set(r->err, ERR_RUNTIME, "%s: out of memory", r->g->path);
    for (uint64_t i = 0; i < kv->count; i++) {
        const unsigned char *s;
        size_t len;
        kv->soff[i] = r->pos;
        if (rd_str(r, &s, &len)) return -1;
    }
    return 0;
}

static int read_value(rd_t *r, kv_t *kv)
{
    uint32_t vt;
    if (rd_u32(r, &vt)) return -1;
    kv->type = vt <= GGUF_V_F64 ? (int)vt : -1;
    if (kv->type < 0) {
        char msg[64];
        snprintf(msg, sizeof msg, "unknown value type %u", vt);
        return kv_fail(r, kv, msg);
    }
    kv->val = r->g->img + r->pos;
    if (vt == GGUF_V_ARR) return read_array(r, kv);
    if (vt == GGUF_V_STR) {
        const unsigned char *s;
        size_t len;
        return rd_str(r, &s, &len);
    }
    if (need(r, vsize((int)vt))) return -1;
    if (vt == GGUF_V_BOOL && check_bool(r, kv, kv->val)) return -1;
    r->pos += vsize((int)vt);
    return 0;
}

static int read_kvs(rd_t *r, gguf_t *g)
{
    char b[SHOWN_MAX + 8];
    for (int i = 0; i < g->nkv; i++) {
        kv_t *kv = &g->kv[i];
        kv->index = i;
        snprintf(r->what, sizeof r->what, "metadata key %d", i);
        if (rd_str(r, &kv->kraw, &kv->klen)) return -1;
        if (memchr(kv->kraw, 0, kv->klen))
            return kv_fail(r, kv, "the key contains a NUL byte");
        snprintf(r->what, sizeof r->what, "metadata key %d ('%s')", i,
                 gguf_shown(kv->kraw, kv->klen, b, sizeof b));
        if (read_value(r, kv)) return -1;
    }
    return 0;
}

/* ---- tensor infos -------------------------------------------------------- */

static int t_fail(rd_t *r, const trec_t *t, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int t_fail(rd_t *r, const trec_t *t, const char *fmt, ...)
{
    char nb[SHOWN_MAX + 8], msg[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    return err_set(r->err, ERR_INPUT, "%s: tensor '%s': %s", r->g->path,
                   gguf_shown(t->nraw, t->nlen, nb, sizeof nb), msg);
}

/* The dimensions and their product, the element count. */
static int read_dims(rd_t *r, trec_t *t)
{
    uint32_t nd;
    if (rd_u32(r, &nd)) return -1;
    if (nd < 1 || nd > GGUF_MAX_DIMS)
        return t_fail(r, t, "%u dimensions (1 to %d allowed)", nd, GGUF_MAX_DIMS);
    t->pub.ndim = (int)nd;
    uint64_t n = 1;
    int overflow = 0, zero = 0;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) {
        uint64_t ne = 1;
        if (d < (int)nd && rd_u64(r, &ne)) return -1;
        if (ne > INT64_MAX)
            return t_fail(r, t, "ne[%d] = %llu is out of range", d, (unsigned long long)ne);
        t->pub.ne[d] = ne;
        if (ne == 0) zero = 1;
        else if (n > UINT64_MAX / ne) overflow = 1;
        else n *= ne;
    }
    /* A zero extent makes the product 0 whatever else overflowed. */
    if (overflow && !zero)
        return t_fail(r, t, "its %u dimensions multiply past 2^64 elements", nd);
    t->pub.nelem = zero ? 0 : n;
    return 0;
}

static int read_type(rd_t *r, trec_t *t)
{
    uint32_t ty;
    if (rd_u32(r, &ty)) return -1;
    const ttype_t *tt = ttype_of(ty > INT_MAX ? -1 : (int)ty);
    if (!tt) return t_fail(r, t, "unknown type %u", ty);
    t->pub.type = (int)ty;
    if (t->pub.ne[0] % (uint64_t)tt->blk)
        return t_fail(r, t, "ne[0] = %llu is not a multiple of the %s block size %d",
                      (unsigned long long)t->pub.ne[0], tt->name, tt->blk);
    uint64_t blocks = t->pub.nelem / (uint64_t)tt->blk;
    if (blocks > UINT64_MAX / (uint64_t)tt->bytes)
        return t_fail(r, t, "%llu blocks of %d bytes overflow", (unsigned long long)blocks,
                      tt->bytes);
    t->nbytes = blocks * (uint64_t)tt->bytes;
    return 0;
}

static int read_tinfos(rd_t *r, gguf_t *g)
{
    char b[SHOWN_MAX + 8];
    for (int i = 0; i < g->nt; i++) {
        trec_t *t = &g->t[i];
        t->index = i;
        snprintf(r->what, sizeof r->what, "tensor info %d", i);
        if (rd_str(r, &t->nraw, &t->nlen)) return -1;
        if (memchr(t->nraw, 0, t->nlen))
            return err_set(r->err, ERR_INPUT, "%s: tensor info %d: the name contains a NUL byte",
                           g->path, i);
        snprintf(r->what, sizeof r->what, "tensor info %d ('%s')", i,
                 gguf_shown(t->nraw, t->nlen, b, sizeof b));
        if (read_dims(r, t) || read_type(r, t) || rd_u64(r, &t->off)) return -1;
        if (t->off % g->align)
            return t_fail(r, t, "offset %llu is not a multiple of the alignment %zu",
                          (unsigned long long)t->off, g->align);
    }
    return 0;
}

/* ---- whole-file checks ------------------------------------------------------ */

static int cmp_kv(const void *a, const void *b)
{
    const kv_t *x = *(kv_t *const *)a, *y = *(kv_t *const *)b;
    int c = strcmp(x->key, y->key);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int cmp_tname(const void *a, const void *b)
{
    const trec_t *x = *(trec_t *const *)a, *y = *(trec_t *const *)b;
    int c = strcmp(x->pub.name, y->pub.name);
    return c ? c : (x->index > y->index) - (x->index < y->index);
}

static int cmp_toff(const void *a, const void *b)
{
    const trec_t *x = *(trec_t *const *)a, *y = *(trec_t *const *)b;
    if (x->off != y->off) return x->off > y->off ? 1 : -1;
    return (x->index > y->index) - (x->index < y->index);
}

/* NUL-terminated copies of the keys, in one block (the lookups take C
 * strings). Their sizes are within the image, so the total cannot overflow. */
static int copy_keys(gguf_t *g, err_t *err)
{
    size_t total = 1;
    for (int i = 0; i < g->nkv; i++) total += g->kv[i].klen + 1;
    if (!(g->keys = malloc(total))) return err_set(err, ERR_RUNTIME, "%s: out of memory", g->path);
    char *p = g->keys;
    for (int i = 0; i < g->nkv; i++) {
        memcpy(p, g->kv[i].kraw, g->kv[i].klen);
        p[g->kv[i].klen] = 0;
        g->kv[i].key = p;
        p += g->kv[i].klen + 1;
    }
    return 0;
}

/* The same for the tensor names. */
static int copy_tnames(gguf_t *g, err_t *err)
{
    size_t total = 1;
    for (int i = 0; i < g->nt; i++) total += g->t[i].nlen + 1;
    if (!(g->tnames = malloc(total)))
        return err_set(err, ERR_RUNTIME, "%s: out of memory", g->path);
    char *p = g->tnames;
    for (int i = 0; i < g->nt; i++) {
        memcpy(p, g->t[i].nraw, g->t[i].nlen);
        p[g->t[i].nlen] = 0;
        g->t[i].pub.name = p;
        p += g->t[i].nlen + 1;
    }
    return 0;
}

/* The sorted key index; two equal keys are refused. */
static int index_keys(gguf_t *g, err_t *err)
{
    if (g->nkv == 0) return 0;
    g->kv_by_key = malloc((size_t)g->nkv * sizeof *g->kv_by_key);
    if (!g->kv_by_key) return err_set(err, ERR_RUNTIME, "%s: out of memory", g->path);
    for (int i = 0; i < g->nkv; i++) g->kv_by_key[i] = &g->kv[i];
    qsort(g->kv_by_key, (size_t)g->nkv, sizeof *g->kv_by_key, cmp_kv);
    char b[SHOWN_MAX + 8];
    for (int i = 1; i < g->nkv; i++) {
        const kv_t *x = g->kv_by_key[i - 1], *y = g->kv_by_key[i];
        if (strcmp(x->key, y->key) == 0)
            return err_set(err, ERR_INPUT, "%s: key '%s' appears twice (metadata keys %d and %d)",
                           g->path, gguf_shown(x->kraw, x->klen, b, sizeof b), x->index, y->index);
    }
    return 0;
}

static const kv_t *find_kv(const gguf_t *g, const char *key)
{
    int lo = 0, hi = g->nkv;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(g->kv_by_key[mid]->key, key);
        if (c == 0) return g->kv_by_key[mid];
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* general.alignment: a u32 power of two when present. */
static int read_alignment(gguf_t *g, err_t *err)
{
    g->align = GGUF_ALIGN_DEFAULT;
    const kv_t *kv = find_kv(g, "general.alignment");
    if (!kv) return 0;
    if (kv->type != GGUF_V_U32)
        return err_set(err, ERR_INPUT, "%s: key 'general.alignment' has type %s; it must be u32",
                       g->path, vname(kv->type));
    uint32_t a = le32(kv->val);
    if (a == 0 || (a & (a - 1)))
        return err_set(err, ERR_INPUT, "%s: general.alignment = %u is not a power of two",
                       g->path, a);
    g->align = a;
    return 0;
}

/* Each tensor's data inside the file (data_start: the data section's file
 * offset). */
static int bound_tensors(gguf_t *g, uint64_t data_start, err_t *err)
{
    char b[SHOWN_MAX + 8];
    if (g->nt && data_start > g->size)
        return err_set(err, ERR_INPUT, "%s: truncated: the data section would start at %llu, "
                       "the file has %zu bytes", g->path, (unsigned long long)data_start, g->size);
    uint64_t avail = g->size - data_start;
    for (int i = 0; i < g->nt; i++) {
        trec_t *t = &g->t[i];
        const char *nm = gguf_shown(t->nraw, t->nlen, b, sizeof b);
        if (t->off > avail)
            return err_set(err, ERR_INPUT, "%s: tensor '%s': offset %llu lies past the end of the "
                           "file (the data section starts at %llu, the file has %zu bytes)",
                           g->path, nm, (unsigned long long)t->off,
                           (unsigned long long)data_start, g->size);
        if (t->nbytes > avail - t->off)
            return err_set(err, ERR_INPUT, "%s: tensor '%s': data at %llu + %llu bytes runs past "
                           "the end of the file (%zu bytes)", g->path, nm,
                           (unsigned long long)(data_start + t->off),
                           (unsigned long long)t->nbytes, g->size);
        t->pub.nbytes = (size_t)t->nbytes;
        t->pub.data = g->img + data_start + t->off;
    }
    return 0;
}

/* No two tensors share a byte: sorted by offset, each nonempty tensor must
 * start where the previous one ended or later (up to the first overlap the
 * previous one is also the one reaching furthest). by: scratch of nt. */
static int check_overlap(gguf_t *g, trec_t **by, uint64_t data_start, err_t *err)
{
    for (int i = 0; i < g->nt; i++) by[i] = &g->t[i];
    qsort(by, (size_t)g->nt, sizeof *by, cmp_toff);
    const trec_t *prev = NULL;
    for (int i = 0; i < g->nt; i++) {
        const trec_t *t = by[i];
        if (t->nbytes == 0) continue;
        if (prev && prev->off + prev->nbytes > t->off) {
            char b[SHOWN_MAX + 8], b2[SHOWN_MAX + 8];
            return err_set(err, ERR_INPUT, "%s: tensors '%s' (bytes %llu to %llu) and '%s' (from "
                           "byte %llu) overlap", g->path,
                           gguf_shown(prev->nraw, prev->nlen, b, sizeof b),
                           (unsigned long long)(data_start + prev->off),
                           (unsigned long long)(data_start + prev->off + prev->nbytes - 1),
                           gguf_shown(t->nraw, t->nlen, b2, sizeof b2),
                           (unsigned long long)(data_start + t->off));
        }
        prev = t;
    }
    return 0;
}

/* The sorted name index (by, nt entries, becomes the gguf's); two equal
 * names are refused. */
static int index_tensors(gguf_t *g, trec_t **by, err_t *err)
{
    for (int i = 0; i < g->nt; i++) by[i] = &g->t[i];
    qsort(by, (size_t)g->nt, sizeof *by, cmp_tname);
    g->t_by_name = by;
    char b[SHOWN_MAX + 8];
    for (int i = 1; i < g->nt; i++)
        if (strcmp(by[i - 1]->pub.name, by[i]->pub.name) == 0)
            return err_set(err, ERR_INPUT, "%s: tensor name '%s' appears twice (tensor infos %d "
                           "and %d)", g->path, gguf_shown(by[i]->nraw, by[i]->nlen, b, sizeof b),
                           by[i - 1]->index, by[i]->index);
    return 0;
}

static int parse(gguf_t *g, err_t *err)
{
    rd_t r = {g, 0, err, ""};
    uint64_t nt, nkv;
    if (read_header(&r, &nt, &nkv)) return -1;
    g->nt = (int)nt;
    g->nkv = (int)nkv;
    /* Counts are bounded by the file's size (read_header), so are these. */
    if ((g->nkv && !(g->kv = calloc((size_t)g->nkv, sizeof *g->kv))) ||
        (g->nt && !(g->t = calloc((size_t)g->nt, sizeof *g->t))))
        return err_set(err, ERR_RUNTIME, "%s: out of memory", g->path);
    if (read_kvs(&r, g) || copy_keys(g, err) || index_keys(g, err) || read_alignment(g, err) ||
        read_tinfos(&r, g) || copy_tnames(g, err))
        return -1;
    /* The data section starts at the next multiple of the alignment. */
    uint64_t data_start = ((uint64_t)r.pos + g->align - 1) / g->align * g->align;
    if (bound_tensors(g, data_start, err)) return -1;
    if (g->nt <= 0) return 0;
    trec_t **by = malloc((size_t)g->nt * sizeof *by);
    if (!by) return err_set(err, ERR_RUNTIME, "%s: out of memory", g->path);
    if (check_overlap(g, by, data_start, err)) {
        free(by);
        return -1;
    }
    return index_tensors(g, by, err);
}

gguf_t *gguf_open(const char *path, err_t *err)
{
    gguf_t *g = calloc(1, sizeof *g);
    if (!g) {
        err_set(err, ERR_RUNTIME, "%s: out of memory", path);
        return NULL;
    }
    if (!(g->path = strdup(path))) {
        free(g);
        err_set(err, ERR_RUNTIME, "%s: out of memory", path);
        return NULL;
    }
    if (read_image(g, err) || parse(g, err)) {
        gguf_close(g);
        return NULL;
    }
    return g;
}

void gguf_close(gguf_t *g)
{
    if (!g) return;
    for (int i = 0; i < g->nkv && g->kv; i++) free(g->kv[i].soff);
    free(g->kv);
    free(g->kv_by_key);
    free(g->t);
    free(g->t_by_name);
    free(g->keys);
    free(g->tnames);
    free(g->img);
    free(g->path);
    free(g);
}

const char *gguf_path(const gguf_t *g) { return g->path; }
uint32_t gguf_version(const gguf_t *g) { return g->version; }
size_t gguf_alignment(const gguf_t *g) { return g->align; }

/* ---- metadata getters ----------------------------------------------------- */

int gguf_kv_count(const gguf_t *g) { return g->nkv; }

const char *gguf_kv_key(const gguf_t *g, int i)
{
    return i >= 0 && i < g->nkv ? g->kv[i].key : NULL;
}

int gguf_kv_type(const gguf_t *g, int i)
{
    return i >= 0 && i < g->nkv ? g->kv[i].type : -1;
}

int gguf_has(const gguf_t *g, const char *key) { return find_kv(g, key) != NULL; }

static const kv_t *get(const gguf_t *g, const char *key, err_t *err)
{
    const kv_t *kv = find_kv(g, key);
    if (!kv) err_set(err, ERR_INPUT, "%s: key '%s' is missing", g->path, key);
    return kv;
}

static int wrong_type(const gguf_t *g, const kv_t *kv, const char *wanted, err_t *err)
{
    if (kv->type == GGUF_V_ARR)
        return err_set(err, ERR_INPUT, "%s: key '%s' is an array of %s; %s was asked for",
                       g->path, kv->key, vname(kv->elem), wanted);
    return err_set(err, ERR_INPUT, "%s: key '%s' has type %s; %s was asked for", g->path,
                   kv->key, vname(kv->type), wanted);
}

/* An integer (or bool) value as sign and magnitude. 0, or -1 when the type
 * is not an integer type. */
static int int_value(const unsigned char *p, int vt, uint64_t *mag, int *neg)
{
    int64_t s;
    *neg = 0;
    switch (vt) {
    case GGUF_V_U8: case GGUF_V_BOOL: *mag = p[0]; return 0;
    case GGUF_V_U16: *mag = le16(p); return 0;
    case GGUF_V_U32: *mag = le32(p); return 0;
    case GGUF_V_U64: *mag = le64(p); return 0;
    case GGUF_V_I8: s = (int8_t)p[0]; break;
    case GGUF_V_I16: s = (int16_t)le16(p); break;
    case GGUF_V_I32: s = (int32_t)le32(p); break;
    case GGUF_V_I64: s = (int64_t)le64(p); break;
    default: return -1;
    }
    *neg = s < 0;
    /* −(uint64_t)s is the magnitude, INT64_MIN included. */
    *mag = s < 0 ? (uint64_t)0 - (uint64_t)s : (uint64_t)s;
    return 0;
}

/* Any numeric (or bool) value as a double. 0, or -1 for strings and arrays. */
static int num_value(const unsigned char *p, int vt, double *out)
{
    uint64_t mag;
    int neg;
    if (vt == GGUF_V_F32) *out = f32_bits(le32(p));
    else if (vt == GGUF_V_F64) *out = f64_bits(le64(p));
    else if (int_value(p, vt, &mag, &neg) == 0) *out = neg ? -(double)mag : (double)mag;
    else return -1;
    return 0;
}

int gguf_get_u32(const gguf_t *g, const char *key, uint32_t *out, err_t *err)
{
    const kv_t *kv = get(g, key, err);
    if (!kv) return -1;
    uint64_t mag;
    int neg;
    if (kv->type == GGUF_V_ARR || int_value(kv->val, kv->type, &mag, &neg) != 0)
        return wrong_type(g, kv, "an integer", err);
    if (neg || mag > UINT32_MAX)
        return err_set(err, ERR_INPUT, "%s: key '%s' = %s%llu does not fit a u32", g->path, key,
                       neg ? "-" : "", (unsigned long long)mag);
    *out = (uint32_t)mag;
    return 0;
}

int gguf_get_f32(const gguf_t *g, const char *key, float *out, err_t *err)
{
    const kv_t *kv = get(g, key, err);
    if (!kv) return -1;
    double v;
    if (kv->type == GGUF_V_ARR || num_value(kv->val, kv->type, &v) != 0)
        return wrong_type(g, kv, "a number", err);
    if (kv->type == GGUF_V_F32) {   /* exactly as stored, NaN payloads too */
        *out = f32_bits(le32(kv->val));
        return 0;
    }
    if ((v > FLT_MAX || v < -FLT_MAX) && isfinite(v))
        return err_set(err, ERR_INPUT, "%s: key '%s' = %g does not fit a f32", g->path, key, v);
    *out = (float)v;
    return 0;
}

int gguf_get_bool(const gguf_t *g, const char *key, int *out, err_t *err)
{
    const kv_t *kv = get(g, key, err);
    if (!kv) return -1;
    if (kv->type != GGUF_V_BOOL) return wrong_type(g, kv, "a bool", err);
    *out = kv->val[0];
    return 0;
}

int gguf_get_str(const gguf_t *g, const char *key, const char **s, size_t *len, err_t *err)
{
    const kv_t *kv = get(g, key, err);
    if (!kv) return -1;
    if (kv->type != GGUF_V_STR) return wrong_type(g, kv, "a string", err);
    *len = (size_t)le64(kv->val);
    *s = (const char *)kv->val + 8;
    return 0;
}

int gguf_get_arr(const gguf_t *g, const char *key, int *elem_type, uint64_t *count, err_t *err)
{
    const kv_t *kv = get(g, key, err);
    if (!kv) return -1;
    if (kv->type != GGUF_V_ARR) return wrong_type(g, kv, "an array", err);
    *elem_type = kv->elem;
    *count = kv->count;
    return 0;
}

/* The array key's element i, checked against its count. */
static const kv_t *arr_elem(const gguf_t *g, const char *key, uint64_t i, int want_str,
                            err_t *err)
{
    const kv_t *kv = get(g, key, err);
    if (!kv) return NULL;
    if (kv->type != GGUF_V_ARR || (kv->elem == GGUF_V_STR) != want_str) {
        wrong_type(g, kv, want_str ? "an array of strings" : "an array of numbers", err);
        return NULL;
    }
    if (i >= kv->count) {
        err_set(err, ERR_INPUT, "%s: key '%s': element %llu asked for; the array has %llu",
                g->path, key, (unsigned long long)i, (unsigned long long)kv->count);
        return NULL;
    }
    return kv;
}

int gguf_arr_str(const gguf_t *g, const char *key, uint64_t i, const char **s, size_t *len,
                 err_t *err)
{
    const kv_t *kv = arr_elem(g, key, i, 1, err);
    if (!kv) return -1;
    const unsigned char *p = g->img + kv->soff[i];
    *len = (size_t)le64(p);
    *s = (const char *)p + 8;
    return 0;
}

int gguf_arr_num(const gguf_t *g, const char *key, uint64_t i, double *out, err_t *err)
{
    const kv_t *kv = arr_elem(g, key, i, 0, err);
    if (!kv) return -1;
    return num_value(kv->val + (size_t)i * vsize(kv->elem), kv->elem, out);
}

/* ---- tensors --------------------------------------------------------------- */

int gguf_tensor_count(const gguf_t *g) { return g->nt; }

const gguf_tensor_t *gguf_tensor_at(const gguf_t *g, int i)
{
    return i >= 0 && i < g->nt ? &g->t[i].pub : NULL;
}

const gguf_tensor_t *gguf_tensor(const gguf_t *g, const char *name)
{
    int lo = 0, hi = g->nt;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        int c = strcmp(g->t_by_name[mid]->pub.name, name);
        if (c == 0) return &g->t_by_name[mid]->pub;
        if (c < 0) lo = mid + 1;
        else hi = mid;
    }
    return NULL;
}

/* ---- dequantisation ---------------------------------------------------------
 * Each function converts nb blocks at p. The arithmetic is the format's
 * definition evaluated in fp32 in the order written (x = d·q + m rounds the
 * product, then the sum: the build does not contract to FMA), which is also
 * what numpy does in the gguf package, so results agree bit for bit. */

static void dq_f32(const unsigned char *p, uint64_t nb, float *out)
{
    for (uint64_t i = 0; i < nb; i++) out[i] = f32_bits(le32(p + 4 * i));
}

static void dq_f16(const unsigned char *p, uint64_t nb, float *out)
{
    for (uint64_t i = 0; i < nb; i++) out[i] = half(le16(p + 2 * i));
}

static void dq_bf16(const unsigned char *p, uint64_t nb, float *out)
{
    for (uint64_t i = 0; i < nb; i++) out[i] = f32_bits((uint32_t)le16(p + 2 * i) << 16);
}

/* Q8_0: fp16 d, 32 int8 q; x = d·q. */
static void dq_q8_0(const unsigned char *p, uint64_t nb, float *out)
{
    for (uint64_t b = 0; b < nb; b++, p += 34, out += 32) {
        float d = half(le16(p));
        for (int j = 0; j < 32; j++) out[j] = d * (float)(int8_t)p[2 + j];
    }
}

/* Q4_0: fp16 d, 16 bytes; element j is the low nibble of byte j, element
 * j + 16 its high nibble; x = d·(q − 8). */
static void dq_q4_0(const unsigned char *p, uint64_t nb, float *out)
{
    for (uint64_t b = 0; b < nb; b++, p += 18, out += 32) {
        float d = half(le16(p));
        for (int j = 0; j < 16; j++) {
            out[j] = d * (float)((p[2 + j] & 0xF) - 8);
            out[j + 16] = d * (float)((p[2 + j] >> 4) - 8);
        }
    }
}

/* Q4_1: fp16 d, fp16 m, 16 bytes as Q4_0; x = d·q + m. */
static void dq_q4_1(const unsigned char *p, uint64_t nb, float *out)
{
    for (uint64_t b = 0; b < nb; b++, p += 20, out += 32) {
        float d = half(le16(p)), m = half(le16(p + 2));
        for (int j = 0; j < 16; j++) {
            out[j] = d * (float)(p[4 + j] & 0xF) + m;
            out[j + 16] = d * (float)(p[4 + j] >> 4) + m;
        }
    }
}

/* Q4_K sub-block j's 6-bit scale and min from the 12 packed bytes s: the
 * first four sub-blocks use the low 6 bits of bytes 0..3 and 4..7; the last
 * four take their low 4 bits from bytes 8..11 and their high 2 bits from the
 * top of bytes 0..7. */
static void q4k_scale_min(const unsigned char *s, int j, float *sc, float *mn)
{
    if (j < 4) {
        *sc = (float)(s[j] & 63);
        *mn = (float)(s[j + 4] & 63);
    } else {
        *sc = (float)((s[j + 4] & 0xF) | (s[j - 4] >> 6) << 4);
        *mn = (float)((s[j + 4] >> 4) | (s[j] >> 6) << 4);
    }
}

/* Q4_K: fp16 d, fp16 dmin, 12 bytes of scales, 128 bytes of nibbles; 64
 * elements per 32 bytes: sub-block 2k in the low nibbles, 2k + 1 in the high;
 * x = (d·sc)·q − dmin·mn. */
static void dq_q4_k(const unsigned char *p, uint64_t nb, float *out)
{
    for (uint64_t b = 0; b < nb; b++, p += 144, out += 256) {
        float d = half(le16(p)), dmin = half(le16(p + 2));
        const unsigned char *sc = p + 4;
        for (int k = 0; k < 4; k++) {
            const unsigned char *q = p + 16 + 32 * k;
            float s0, m0, s1, m1;
            q4k_scale_min(sc, 2 * k, &s0, &m0);
            q4k_scale_min(sc, 2 * k + 1, &s1, &m1);
            float d0 = d * s0, dm0 = dmin * m0, d1 = d * s1, dm1 = dmin * m1;
            for (int l = 0; l < 32; l++) {
                out[64 * k + l] = d0 * (float)(q[l] & 0xF) - dm0;
                out[64 * k + 32 + l] = d1 * (float)(q[l] >> 4) - dm1;
            }
        }
    }
}

int gguf_dequant(const gguf_tensor_t *t, uint64_t first, uint64_t n, float *out, err_t *err)
{
    const ttype_t *tt = ttype_of(t->type);
    /* The name is file data: gguf_shown() keeps a line break out of the message. */
    char nbuf[SHOWN_MAX + 8];
    const char *nm = gguf_shown((const unsigned char *)t->name, strlen(t->name), nbuf, sizeof nbuf);
    if (!tt || !tt->dequant)
        return err_set(err, ERR_INPUT, "tensor '%s': cannot dequantise type %s", nm,
                       gguf_type_name(t->type));
    uint64_t blk = (uint64_t)tt->blk;
    if (first % blk || n % blk || first > t->nelem || n > t->nelem - first ||
        (first + n) / blk > t->nbytes / (uint64_t)tt->bytes)
        return err_set(err, ERR_INPUT, "tensor '%s': elements [%llu, %llu + %llu) are not whole "
                       "%s blocks of %llu inside its %llu elements", nm,
                       (unsigned long long)first, (unsigned long long)first,
                       (unsigned long long)n, tt->name, (unsigned long long)blk,
                       (unsigned long long)t->nelem);
    const unsigned char *p = (const unsigned char *)t->data + first / blk * (uint64_t)tt->bytes;
    uint64_t nb = n / blk;
    switch (t->type) {
    case GGUF_T_F32: dq_f32(p, nb, out); break;
    case GGUF_T_F16: dq_f16(p, nb, out); break;
    case GGUF_T_BF16: dq_bf16(p, nb, out); break;
    case GGUF_T_Q8_0: dq_q8_0(p, nb, out); break;
    case GGUF_T_Q4_0: dq_q4_0(p, nb, out); break;
    case GGUF_T_Q4_1: dq_q4_1(p, nb, out); break;
    case GGUF_T_Q4_K: dq_q4_k(p, nb, out); break;
    default: break;   /* unreachable: tt->dequant lists exactly these */
    }
    return 0;
}
