/* fuzz_gguf — the GGUF reader (kernels/llm/gguf.h).
 *
 * The input is a GGUF file. A file that is refused must be refused with one
 * line "PATH: ..." of ERR_INPUT. A file that opens is walked through every
 * accessor: each key through every getter (each must succeed exactly for the
 * types it documents) and every array element, each tensor by index and by
 * name (the same record: names are unique), every data byte read, and every
 * tensor of a convertible type up to 2^20 elements dequantised — whole, and
 * its last block alone, which must give the same values (gguf.h promises
 * nothing after a successful open can point outside the file; ASan checks
 * it here, the image being allocated to the byte).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz.h"
#include "llm/gguf.h"   /* -Ikernels: the fuzz rule has no -Ikernels/llm */

#define MAX_ELEMS ((uint64_t)1 << 20)
#define MAX_ARR 4096   /* array elements walked per key */

/* Reads n bytes (ASan checks they are inside the image). */
static unsigned touch(const void *p, size_t n)
{
    const unsigned char *b = p;
    unsigned s = 0;
    for (size_t i = 0; i < n; i++) s += b[i];
    return s;
}

static void walk_key(const gguf_t *g, int i)
{
    const char *key = gguf_kv_key(g, i);
    int vt = gguf_kv_type(g, i);
    if (!key || vt < 0 || vt > GGUF_V_F64) fuzz_fail("a key out of its index", NULL);
    if (!gguf_has(g, key)) fuzz_fail("a key is not found by name", key);
    err_t err;
    uint32_t u;
    float f;
    int b, et;
    const char *s;
    size_t len;
    uint64_t count;
    gguf_get_u32(g, key, &u, &err);
    gguf_get_f32(g, key, &f, &err);
    if ((gguf_get_bool(g, key, &b, &err) == 0) != (vt == GGUF_V_BOOL) ||
        (vt == GGUF_V_BOOL && b > 1))
        fuzz_fail("gguf_get_bool disagrees with the key's type", key);
    if ((gguf_get_str(g, key, &s, &len, &err) == 0) != (vt == GGUF_V_STR))
        fuzz_fail("gguf_get_str disagrees with the key's type", key);
    if (vt == GGUF_V_STR) touch(s, len);
    if ((gguf_get_arr(g, key, &et, &count, &err) == 0) != (vt == GGUF_V_ARR))
        fuzz_fail("gguf_get_arr disagrees with the key's type", key);
    if (vt != GGUF_V_ARR) return;
    if (et < 0 || et > GGUF_V_F64 || et == GGUF_V_ARR) fuzz_fail("a bad element type", key);
    for (uint64_t k = 0; k < count && k < MAX_ARR; k++) {
        double d;
        if ((gguf_arr_str(g, key, k, &s, &len, &err) == 0) != (et == GGUF_V_STR))
            fuzz_fail("gguf_arr_str disagrees with the element type", key);
        if (et == GGUF_V_STR) touch(s, len);
        if ((gguf_arr_num(g, key, k, &d, &err) == 0) != (et != GGUF_V_STR))
            fuzz_fail("gguf_arr_num disagrees with the element type", key);
    }
    if (gguf_arr_num(g, key, count, &(double){0}, &err) == 0 ||
        gguf_arr_str(g, key, count, &s, &len, &err) == 0)
        fuzz_fail("an array element past the count", key);
}

static void walk_tensor(const gguf_t *g, int i)
{
    const gguf_tensor_t *t = gguf_tensor_at(g, i);
    if (!t || gguf_tensor(g, t->name) != t)
        fuzz_fail("a tensor is not found by name", t ? t->name : "");
    int blk = gguf_type_block(t->type);
    size_t bb = gguf_type_block_bytes(t->type);
    if (blk <= 0 || !bb || t->ndim < 1 || t->ndim > GGUF_MAX_DIMS)
        fuzz_fail("a tensor of an unknown type or shape", t->name);
    uint64_t n = 1;
    for (int d = 0; d < GGUF_MAX_DIMS; d++) n *= t->ne[d];
    if (n != t->nelem || t->ne[0] % (uint64_t)blk || t->nelem / (uint64_t)blk * bb != t->nbytes)
        fuzz_fail("a tensor's size disagrees with its shape", t->name);
    touch(t->data, t->nbytes);
    if (!gguf_type_dequant_ok(t->type) || t->nelem > MAX_ELEMS || t->nelem == 0) return;
    float *v = malloc(t->nelem * sizeof *v), *last = malloc((size_t)blk * sizeof *last);
    if (!v || !last) fuzz_fail("out of memory", NULL);
    err_t err;
    uint64_t lb = t->nelem - (uint64_t)blk;
    if (gguf_dequant(t, 0, t->nelem, v, &err) != 0 ||
        gguf_dequant(t, lb, (uint64_t)blk, last, &err) != 0)
        fuzz_fail("a convertible tensor does not dequantise", err.msg);
    if (memcmp(v + lb, last, (size_t)blk * sizeof *last) != 0)
        fuzz_fail("a block dequantises differently alone", t->name);
    if (gguf_dequant(t, 1, (uint64_t)blk, last, &err) == 0 && blk > 1)
        fuzz_fail("a range off the blocks is converted", t->name);
    free(v);
    free(last);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_reset();
    char path[4096];
    fuzz_write_file("in.gguf", data, size, path, sizeof path);
    err_t err = {0, ""};
    gguf_t *g = gguf_open(path, &err);
    if (!g) {
        size_t n = strlen(path);
        if (err.code != ERR_INPUT || strncmp(err.msg, path, n) != 0 || err.msg[n] != ':' ||
            strchr(err.msg, '\n'))
            fuzz_fail("a refusal that is not one line 'PATH: ...' of ERR_INPUT", err.msg);
        return 0;
    }
    for (int i = 0; i < gguf_kv_count(g); i++) walk_key(g, i);
    for (int i = 0; i < gguf_tensor_count(g); i++) walk_tensor(g, i);
    if (gguf_tensor_at(g, gguf_tensor_count(g)) || gguf_kv_key(g, gguf_kv_count(g)))
        fuzz_fail("an index past the count", NULL);
    gguf_close(g);
    return 0;
}
