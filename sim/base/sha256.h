/* sha256 — the SHA-256 digest (FIPS 180-4) of a byte string.
 *
 * Sidecars and `check` output record the digest of every file a command
 * read ("# read PATH sha256 HEX", docs/formats.md "Sidecars and the files
 * they read"), and a rerun warns when a file's bytes differ. SHA-256 rather than a 64-bit
 * hash: the line can be checked by hand with `sha256sum PATH`, and it is
 * the digest people already publish data sets with; it costs one pass over
 * bytes each command reads once anyway (about 0.2-0.4 GB/s here, below
 * parsing them). Kept in base/ so that the io layer can use it.
 */
#ifndef SPECSIM_SHA256_H
#define SPECSIM_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define SHA256_BYTES 32
#define SHA256_HEX (2 * SHA256_BYTES + 1)   /* lowercase hex and its NUL */

/* The digest of data[0..len). */
void sha256(const void *data, size_t len, uint8_t out[SHA256_BYTES]);
/* A digest as lowercase hex, NUL-terminated. */
void sha256_hex(const uint8_t d[SHA256_BYTES], char hex[SHA256_HEX]);

#endif
