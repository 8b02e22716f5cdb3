/* gguf — a checked reader of GGUF model files (version 2 and 3), the format
 * llama.cpp and the `gguf` Python package write.
 *
 * gguf_open reads the whole file into memory and validates all of it before
 * it returns: the magic and version, every count and string length against
 * the bytes left, every metadata value's type, the alignment, and every
 * tensor's dimensions, type, offset and size against the data section. After
 * a successful open nothing a caller reads through this interface can point
 * outside the file, so the accessors need no further checks.
 *
 * Errors are one line "FILE: what" (ERR_INPUT for a bad file, ERR_RUNTIME
 * for an I/O or memory failure); nothing is printed.
 *
 * Dequantisation covers F32, F16, BF16, Q8_0, Q4_0, Q4_1 and Q4_K, each as
 * the format defines its blocks (docs/llm.md, "GGUF"); other tensor types
 * are read (their sizes are known) but refused by gguf_dequant.
 *
 * The file is held in memory aligned to 64 bytes, so tensor data is aligned
 * to min(64, general.alignment) bytes; the accessors never assume it.
 */
#ifndef SPECSIM_GGUF_H
#define SPECSIM_GGUF_H

#include <stddef.h>
#include <stdint.h>

#include "base/err.h"

/* Tensor types (the ggml_type numbers the file stores). */
enum gguf_ttype {
    GGUF_T_F32 = 0,
    GGUF_T_F16 = 1,
    GGUF_T_Q4_0 = 2,
    GGUF_T_Q4_1 = 3,
    GGUF_T_Q5_0 = 6,
    GGUF_T_Q5_1 = 7,
    GGUF_T_Q8_0 = 8,
    GGUF_T_Q8_1 = 9,
    GGUF_T_Q2_K = 10,
    GGUF_T_Q3_K = 11,
    GGUF_T_Q4_K = 12,
    GGUF_T_Q5_K = 13,
    GGUF_T_Q6_K = 14,
    GGUF_T_Q8_K = 15,
    GGUF_T_BF16 = 30
};

/* Metadata value types (as stored). */
enum gguf_vtype {
    GGUF_V_U8 = 0,
    GGUF_V_I8 = 1,
    GGUF_V_U16 = 2,
    GGUF_V_I16 = 3,
    GGUF_V_U32 = 4,
    GGUF_V_I32 = 5,
    GGUF_V_F32 = 6,
    GGUF_V_BOOL = 7,
    GGUF_V_STR = 8,
    GGUF_V_ARR = 9,
    GGUF_V_U64 = 10,
    GGUF_V_I64 = 11,
    GGUF_V_F64 = 12
};

#define GGUF_MAX_DIMS 4

typedef struct gguf_tensor {
    const char *name;        /* NUL-terminated copy */
    int type;                /* enum gguf_ttype */
    int ndim;                /* 1..GGUF_MAX_DIMS */
    uint64_t ne[GGUF_MAX_DIMS]; /* ne[0] is the innermost (contiguous) extent;
                                   unused dims are 1 */
    uint64_t nelem;          /* product of ne */
    size_t nbytes;           /* bytes of data */
    const void *data;        /* inside the file's image; nbytes readable */
} gguf_tensor_t;

typedef struct gguf gguf_t;

/* Reads and validates path. NULL with err on failure. The caller owns the
 * result: gguf_close. */
gguf_t *gguf_open(const char *path, err_t *err);
void gguf_close(gguf_t *g);
/* s[0..n) fit for a one-line message naming something read from a file:
 * bytes outside printable ASCII and quotes become '?', a long name is cut
 * with "..."; written to buf (bsz bytes, at least 72 for the whole cut),
 * which it returns. */
const char *gguf_shown(const unsigned char *s, size_t n, char *buf, size_t bsz);
/* The path as given to gguf_open (for messages). */
const char *gguf_path(const gguf_t *g);
/* The file's GGUF version (2 or 3) and its alignment (general.alignment, or
 * 32). */
uint32_t gguf_version(const gguf_t *g);
size_t gguf_alignment(const gguf_t *g);

/* ---- metadata ------------------------------------------------------------
 * Every getter returns 0, or -1 with err "FILE: key 'K' ..." when the key is
 * missing or of a type that cannot give the value asked for. */

/* 1 when the key is present. */
int gguf_has(const gguf_t *g, const char *key);
/* The metadata in file order: how many keys, key i (NUL-terminated; NULL
 * when i is out of range) and its value type (enum gguf_vtype; -1 when out
 * of range). Keys hold no NUL byte (gguf_open refuses one). */
int gguf_kv_count(const gguf_t *g);
const char *gguf_kv_key(const gguf_t *g, int i);
int gguf_kv_type(const gguf_t *g, int i);
/* Any integer type whose value fits; also BOOL (0/1). */
int gguf_get_u32(const gguf_t *g, const char *key, uint32_t *out, err_t *err);
/* F32 or F64 (or an integer type, converted). */
int gguf_get_f32(const gguf_t *g, const char *key, float *out, err_t *err);
int gguf_get_bool(const gguf_t *g, const char *key, int *out, err_t *err);
/* A string value: *s points into the file image (not NUL-terminated), *len
 * its length. */
int gguf_get_str(const gguf_t *g, const char *key, const char **s, size_t *len, err_t *err);
/* An array: its element type (enum gguf_vtype; never GGUF_V_ARR: nested
 * arrays are refused by gguf_open) and count. */
int gguf_get_arr(const gguf_t *g, const char *key, int *elem_type, uint64_t *count,
                 err_t *err);
/* Element i of a string array (i < count; the key must be a string array). */
int gguf_arr_str(const gguf_t *g, const char *key, uint64_t i, const char **s, size_t *len,
                 err_t *err);
/* Element i of an integer or float array, as a double. */
int gguf_arr_num(const gguf_t *g, const char *key, uint64_t i, double *out, err_t *err);

/* ---- tensors ------------------------------------------------------------ */

int gguf_tensor_count(const gguf_t *g);
const gguf_tensor_t *gguf_tensor_at(const gguf_t *g, int i);
/* NULL when absent (no error: callers say what they needed). */
const gguf_tensor_t *gguf_tensor(const gguf_t *g, const char *name);

/* The type's name ("Q4_1"), or "unknown". */
const char *gguf_type_name(int type);
/* Elements per block and bytes per block of a type; 0 for a type this
 * reader does not know. */
int gguf_type_block(int type);
size_t gguf_type_block_bytes(int type);
/* 1 when gguf_dequant can convert the type. */
int gguf_type_dequant_ok(int type);

/* Dequantises elements [first, first + n) of t (first and n multiples of
 * the type's block size, within nelem) into out (fp32). 0, or -1 with err
 * "tensor 'NAME': ..." (no file name: the tensor does not know it) for a
 * type it cannot convert or a range outside the tensor. */
int gguf_dequant(const gguf_tensor_t *t, uint64_t first, uint64_t n, float *out, err_t *err);

#endif
