#!/usr/bin/env python3
"""llamacpp-tokenize.py MODEL TEXTFILE OUTFILE [PIECESFILE] -- llama.cpp's
tokenization of a text, the reference tests/cli/llm_tok.sh compares
kernels/llm/tok.c with.

Loads MODEL's vocabulary with llama_cpp.Llama(model_path=MODEL,
vocab_only=True, verbose=False), tokenizes the bytes of TEXTFILE with
tokenize(text, add_bos=False, special=True) (special tokens in the text are
parsed) and writes the ids to OUTFILE, one per line. With PIECESFILE, also
writes there what llama.cpp's llama_detokenize makes of those ids
(remove_special false, unparse_special true: control tokens give their
text), called directly: Llama.detokenize reads each token's piece into 32
bytes and cuts longer ones short.

Needs llama-cpp-python (scripts/llm-venv.sh makes a Python environment
with it). Exit status: 0 done, 1 failed (one line "llamacpp-tokenize: what
failed" on stderr), 2 bad usage.
"""
import ctypes
import sys


def fail(msg, code=1):
    print(f"llamacpp-tokenize: {msg}", file=sys.stderr)
    sys.exit(code)


def detokenize(llama_cpp, llm, ids):
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    arr = (llama_cpp.llama_token * max(1, len(ids)))(*ids)
    cap = 16 * len(ids) + 64
    for _ in range(2):  # a negative count is the size needed
        buf = ctypes.create_string_buffer(cap)
        n = llama_cpp.llama_detokenize(vocab, arr, len(ids), buf, cap, False, True)
        if n >= 0:
            return buf.raw[:n]
        cap = -n
    fail("llama_detokenize asked for more room twice")


def main():
    if len(sys.argv) not in (4, 5):
        fail("usage: llamacpp-tokenize.py MODEL TEXTFILE OUTFILE [PIECESFILE]", 2)
    model, textfile, outfile = sys.argv[1:4]
    try:
        import llama_cpp
    except ImportError as e:
        fail(f"cannot import llama_cpp ({e}); run it with scripts/llm-venv.sh's python")
    try:
        with open(textfile, "rb") as f:
            text = f.read()
    except OSError as e:
        fail(f"cannot read {textfile}: {e.strerror}")
    try:
        llm = llama_cpp.Llama(model_path=model, vocab_only=True, verbose=False)
    except Exception as e:  # llama_cpp raises ValueError, or others from the C side
        fail(f"cannot load {model}: {e}")
    ids = llm.tokenize(text, add_bos=False, special=True)
    try:
        with open(outfile, "w") as f:
            f.write("".join(f"{i}\n" for i in ids))
        if len(sys.argv) == 5:
            with open(sys.argv[4], "wb") as f:
                f.write(detokenize(llama_cpp, llm, ids))
    except OSError as e:
        fail(f"cannot write {e.filename}: {e.strerror}")


if __name__ == "__main__":
    main()
