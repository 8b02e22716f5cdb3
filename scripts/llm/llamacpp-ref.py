#!/usr/bin/env python3
"""llamacpp-ref.py -- llama.cpp's own logits and greedy tokens, the reference
of the real-model agreement tests (through the llama_cpp package, which
builds llama.cpp from source: scripts/llm-venv.sh).

  llamacpp-ref.py MODEL IDSFILE OUT         teacher-forced logits -> OUT
  llamacpp-ref.py --generate MODEL PROMPT_IDS N
                                            greedy continuation, ids on stdout
  llamacpp-ref.py --tokenize MODEL TEXTFILE [MAXLEN]
                                            TEXTFILE's ids in IDSFILE form

IDSFILE: token ids, one per line; a blank line (or several) separates
independent sequences, each of 1 to 512 ids. Each sequence is evaluated on
its own, from an empty KV cache, in one batch (llm.reset(); llm.eval(ids)),
and the logits of every position are kept.

OUT (little-endian; written to OUT.tmp.PID, then renamed):
  header:       char magic[8] = "SPLREF1\\0"; u32 n_seq; u32 n_vocab; u32 K
                (K = 16)
  per sequence: u32 n_pos (its number of ids), then n_pos position records
  per position i (0-based in its sequence):
                u32 token      the id at position i (the input)
                u32 top_id[K]  the K largest logits' ids, by descending
                               logit (ties: lower id first)
                f32 top[K]     those logits
                f32 row[n_vocab]  only when i % 8 == 0: the whole row
  The logits of position i are the model's prediction for position i + 1,
  having read ids 0..i of its sequence; no BOS or other token is added.

--generate: PROMPT_IDS is a file holding one sequence in IDSFILE form, or
the ids themselves separated by commas ("1,2,3"). Prints up to N ids that
llama.cpp's sampler picks greedily (temperature 0: its greedy sampler;
top_k 1; repeat penalty 1, frequency and presence penalties 0: no
penalty), one per line; stops after an end-of-generation token (printed).

--tokenize: llama.cpp's tokenizer on TEXTFILE (UTF-8, no BOS, special
tokens not parsed), printed in IDSFILE form: a blank line after every
MAXLEN ids (default 512).

llama.cpp settings, the same in every mode: n_threads 2 (batch too),
n_batch = n_ubatch = 512, n_ctx 1024 (more when a prompt plus N needs it),
seed 1234, logits_all, KV cache F16 (llama.cpp's default; no KV
quantisation), flash attention off (on a CPU its kernel accumulates V in
F16, which would stray further from an F32 reference), no GPU layers.
OMP_WAIT_POLICY defaults to passive so that ggml's idle threads do not spin
on a shared machine (no effect on the numbers).

Exit status: 0 done; 1 failed (llama.cpp, I/O), one line
"llamacpp-ref: what failed" on stderr; 2 bad usage or bad input.
"""
import os
import signal
import struct
import sys

os.environ.setdefault("OMP_WAIT_POLICY", "passive")

K = 16
MAXSEQ = 512
FULL_EVERY = 8
N_THREADS = 2
N_BATCH = 512
SEED = 1234


class Bad(Exception):
    """Bad usage or input: exit 2."""


def fail(msg, code=1):
    print(f"llamacpp-ref: {msg}", file=sys.stderr)
    sys.exit(code)


def read_seqs(path, n_vocab=None):
    """The sequences of an IDSFILE: a list of lists of ints."""
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
    except OSError as e:
        raise Bad(f"{path}: cannot read: {e.strerror}")
    seqs, cur = [], []
    for no, line in enumerate(lines, 1):
        s = line.strip()
        if not s:
            if cur:
                seqs.append((no, cur))
                cur = []
            continue
        if not s.isdigit():
            raise Bad(f"{path}:{no}: \"{s[:40]}\" is not a token id")
        v = int(s)
        if n_vocab is not None and v >= n_vocab:
            raise Bad(f"{path}:{no}: token id {v} is outside the vocabulary (0..{n_vocab - 1})")
        cur.append(v)
        if len(cur) > MAXSEQ:
            raise Bad(f"{path}:{no}: a sequence longer than {MAXSEQ} ids (separate sequences "
                      "with a blank line)")
    if cur:
        seqs.append((len(lines), cur))
    if not seqs:
        raise Bad(f"{path}: no token ids")
    return [s for _, s in seqs]


def load(model, n_ctx=1024, vocab_only=False):
    if not os.path.isfile(model):
        raise Bad(f"{model}: no such file")
    try:
        import numpy  # noqa: F401
        import llama_cpp
    except ImportError as e:
        fail(f"cannot import numpy and llama_cpp ({e}); run with the python that "
             "scripts/llm-venv.sh prints")
    try:
        return llama_cpp, llama_cpp.Llama(
            model_path=model, n_ctx=n_ctx, n_batch=N_BATCH, n_ubatch=N_BATCH,
            n_threads=N_THREADS, n_threads_batch=N_THREADS, seed=SEED,
            logits_all=True, flash_attn=False, n_gpu_layers=0,
            type_k=None, type_v=None,  # F16 K and V: llama.cpp's default
            vocab_only=vocab_only, verbose=False)
    except Exception as e:
        fail(f"llama.cpp cannot load {model}: {e}")


def topk(row, k):
    """Ids of the k largest values of row, descending, lower id first on ties."""
    import numpy as np
    kth = np.partition(row, len(row) - k)[len(row) - k]
    cand = np.nonzero(row >= kth)[0]
    order = np.lexsort((cand, -row[cand]))
    return cand[order[:k]]


def dump(model, idsfile, out):
    llama_cpp, llm = load(model)
    import numpy as np
    n_vocab = llm.n_vocab()
    seqs = read_seqs(idsfile, n_vocab)
    tmp = os.path.join(os.path.dirname(os.path.abspath(out)),
                       f".{os.path.basename(out)}.tmp.{os.getpid()}")
    try:
        with open(tmp, "wb") as f:
            f.write(b"SPLREF1\0")
            f.write(struct.pack("<III", len(seqs), n_vocab, K))
            for seq in seqs:
                llm.reset()
                try:
                    llm.eval(seq)
                except Exception as e:
                    fail(f"llama.cpp cannot evaluate a sequence of {len(seq)} ids: {e}")
                rows = np.array(llm.scores[:len(seq)], dtype="<f4")
                if not np.all(np.isfinite(rows)):
                    fail("llama.cpp gave logits that are not finite")
                f.write(struct.pack("<I", len(seq)))
                for i, tok in enumerate(seq):
                    row = rows[i]
                    ids = topk(row, K)
                    f.write(struct.pack("<I", tok))
                    f.write(ids.astype("<u4").tobytes())
                    f.write(row[ids].astype("<f4").tobytes())
                    if i % FULL_EVERY == 0:
                        f.write(row.tobytes())
        os.replace(tmp, out)
    except OSError as e:
        fail(f"cannot write {out}: {e.strerror}")
    finally:
        try:
            os.unlink(tmp)
        except OSError:
            pass


def prompt_ids(arg):
    if arg and all(c.isdigit() or c in ", " for c in arg) and any(c.isdigit() for c in arg):
        return [int(x) for x in arg.replace(",", " ").split()]
    seqs = read_seqs(arg)
    if len(seqs) != 1:
        raise Bad(f"{arg}: {len(seqs)} sequences; --generate takes one")
    return seqs[0]


def generate(model, arg, n):
    try:
        n = int(n)
    except ValueError:
        raise Bad(f"N \"{n}\" is not a number")
    if n < 1:
        raise Bad("N must be at least 1")
    ids = prompt_ids(arg)
    need = len(ids) + n
    n_ctx = max(1024, (need + 255) // 256 * 256)
    llama_cpp, llm = load(model, n_ctx)
    n_vocab = llm.n_vocab()
    for v in ids:
        if v >= n_vocab:
            raise Bad(f"token id {v} is outside the vocabulary (0..{n_vocab - 1})")
    vocab = llama_cpp.llama_model_get_vocab(llm.model)
    out = []
    try:
        for tok in llm.generate(ids, top_k=1, top_p=1.0, min_p=0.0, typical_p=1.0, temp=0.0,
                                repeat_penalty=1.0, frequency_penalty=0.0,
                                presence_penalty=0.0, reset=True):
            out.append(tok)
            print(tok, flush=True)
            if len(out) >= n or llama_cpp.llama_vocab_is_eog(vocab, tok):
                break
    except Exception as e:
        fail(f"llama.cpp failed to generate: {e}")


def tokenize(model, textfile, maxlen="512"):
    try:
        maxlen = int(maxlen)
    except ValueError:
        raise Bad(f"MAXLEN \"{maxlen}\" is not a number")
    if not 1 <= maxlen <= MAXSEQ:
        raise Bad(f"MAXLEN must be 1..{MAXSEQ}")
    try:
        with open(textfile, "rb") as f:
            text = f.read()
    except OSError as e:
        raise Bad(f"{textfile}: cannot read: {e.strerror}")
    _, llm = load(model)
    ids = llm.tokenize(text, add_bos=False, special=False)
    lines = []
    for i, t in enumerate(ids):
        if i and i % maxlen == 0:
            lines.append("")
        lines.append(str(t))
    sys.stdout.write("\n".join(lines) + ("\n" if lines else ""))


USAGE = ("usage: llamacpp-ref.py MODEL IDSFILE OUT | --generate MODEL PROMPT_IDS N | "
         "--tokenize MODEL TEXTFILE [MAXLEN]")


def main(argv):
    a = argv[1:]
    if a and a[0] in ("-h", "--help"):
        print(__doc__.strip())
        return 0

    def on_signal(signum, frame):
        raise KeyboardInterrupt
    for sig in (signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    try:
        if a and a[0] == "--generate":
            if len(a) != 4:
                raise Bad(USAGE)
            generate(*a[1:])
        elif a and a[0] == "--tokenize":
            if len(a) not in (3, 4):
                raise Bad(USAGE)
            tokenize(*a[1:])
        elif len(a) == 3 and not a[0].startswith("-"):
            dump(*a)
        else:
            raise Bad(USAGE)
    except Bad as e:
        fail(str(e), 2)
    except KeyboardInterrupt:
        fail("interrupted")
    except BrokenPipeError:
        sys.stderr.close()
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
