#!/usr/bin/env python3
"""gguf-dequant-check.py — the `gguf` Python package's dequantisation of GGUF
tensors, as digests to compare with ours.

    gguf-dequant-check.py FILE TENSOR...

prints, for each TENSOR, one line "SHA256  TENSOR": the sha256 of its values
as dequantised by gguf.quants.dequantize (the reference implementation,
written by the llama.cpp project), written as little-endian float32 in the
file's element order (ne[0] fastest). `build/tests/llm/test_gguf --dump FILE
TENSOR OUT` writes our values in the same form, so `sha256sum OUT` must give
the same digest. Exit 1 with a message when a tensor is missing or its type
cannot be dequantised. Needs numpy and gguf (scripts/llm-venv.sh).
"""
import hashlib
import sys

import numpy as np
from gguf import GGUFReader
from gguf.quants import dequantize


def main(argv):
    if len(argv) < 3:
        sys.stderr.write("usage: gguf-dequant-check.py FILE TENSOR...\n")
        return 2
    path, names = argv[1], argv[2:]
    tensors = {t.name: t for t in GGUFReader(path).tensors}
    rc = 0
    for name in names:
        t = tensors.get(name)
        if t is None:
            sys.stderr.write(f"{path}: no tensor '{name}'\n")
            rc = 1
            continue
        try:
            v = dequantize(t.data, t.tensor_type)
        except NotImplementedError as e:
            sys.stderr.write(f"{path}: tensor '{name}': {e}\n")
            rc = 1
            continue
        data = np.ascontiguousarray(v, dtype="<f4").tobytes()
        if len(data) != 4 * int(t.n_elements):
            sys.stderr.write(f"{path}: tensor '{name}': {len(data) // 4} values for "
                             f"{t.n_elements} elements\n")
            rc = 1
            continue
        print(f"{hashlib.sha256(data).hexdigest()}  {name}")
    return rc


if __name__ == "__main__":
    sys.exit(main(sys.argv))
