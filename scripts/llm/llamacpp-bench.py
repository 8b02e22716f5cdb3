"""llamacpp-bench.py -- llama.cpp's decode step, timed as `build/llm bench`
times ours (kernels/llm/cli_bench.c), for the side by side comparison of
scripts/llm/bench.sh:

  llamacpp-bench.py --model GGUF [--threads N] [--context C] [--steps S]
                    [--batch B] [--flash-attn auto|on|off]

The same definitions as `llm bench`: one sequence (M = 1), then B
sequences (default 8) decoding together (M = B); each sequence first reads
C tokens (default 128) in a prefill, then S decode steps (default 32) each
give one new token to every sequence -- one llama_decode of M tokens in M
sequences, every row's logits computed and copied out (llama.cpp's output
buffer; ours fill the caller's array). Printed per M: the median step
(sorted times[S // 2], as ours) as

  llama.cpp-f16  M=1   TOK/s tok/s   MS ms/step  (MB MB of weights)

in the columns of `llm bench` (the name is llama.cpp- and the file's weight
type; MB is llama.cpp's size of the model's tensors, the embedding
included). Token ids are (s·7919 + i·131) mod vocab, ours too; the value of
the ids does not change the time.

llama.cpp through llama-cpp-python's low-level API (the python of
scripts/llm-venv.sh), CPU only: n_threads = n_threads_batch = N (default:
one per online CPU, as ours), n_batch = n_ubatch = 512, F16 KV cache (the
default, as our cache), flash attention as llama.cpp's default (auto)
unless --flash-attn says otherwise, one KV stream per sequence (the
default). Its logging is silenced.

A Q4_1 file is llama.cpp's own 4-bit path: groups of 32 weights with an
fp16 scale and minimum each (5 bits a weight), not the project's W4A16
(groups of 128, 4.125 bits a weight), so a ratio against it compares two
4-bit kernels, not one format.

Exit status: 0; 1 when llama.cpp fails (one line on stderr); 2 bad usage.
"""
import argparse
import ctypes
import os
import sys
import time


def fail(msg, code=1):
    print(f"llamacpp-bench: {msg}", file=sys.stderr)
    sys.exit(code)


class Parser(argparse.ArgumentParser):
    def error(self, message):
        fail(message, 2)


def fill(batch, items):
    """items: (token, pos, seq, logits) tuples into batch."""
    batch.n_tokens = len(items)
    for i, (tok, pos, seq, lg) in enumerate(items):
        batch.token[i] = tok
        batch.pos[i] = pos
        batch.n_seq_id[i] = 1
        batch.seq_id[i][0] = seq
        batch.logits[i] = 1 if lg else 0


def measure(L, model, a, nseq, vocab):
    """Median seconds of one decode step of nseq sequences (see above)."""
    cp = L.llama_context_default_params()
    cp.n_ctx = nseq * (a.context + a.steps + 8)
    cp.n_batch = cp.n_ubatch = 512
    cp.n_seq_max = nseq
    cp.n_threads = cp.n_threads_batch = a.threads
    if a.flash_attn != "auto":
        cp.flash_attn_type = 1 if a.flash_attn == "on" else 0
    ctx = L.llama_init_from_model(model, cp)
    if not ctx:
        fail("llama.cpp cannot create a context")
    batch = L.llama_batch_init(512, 0, nseq)
    try:
        for s in range(nseq):   # the prefill, in pieces of at most 512 tokens
            for at in range(0, a.context, 512):
                n = min(512, a.context - at)
                fill(batch, [((s * 7919 + (at + i) * 131) % vocab, at + i, s,
                              at + i == a.context - 1) for i in range(n)])
                if L.llama_decode(ctx, batch) != 0:
                    fail("llama_decode failed in the prefill")
        times = []
        for k in range(a.steps):
            i = k % a.context
            fill(batch, [((s * 7919 + i * 131) % vocab, a.context + k, s, True)
                         for s in range(nseq)])
            t0 = time.perf_counter()
            if L.llama_decode(ctx, batch) != 0:
                fail("llama_decode failed in a step")
            L.llama_synchronize(ctx)
            times.append(time.perf_counter() - t0)
        return sorted(times)[a.steps // 2]
    finally:
        L.llama_batch_free(batch)
        L.llama_free(ctx)


def main():
    p = Parser(prog="llamacpp-bench.py", description="llama.cpp's decode step, "
               "timed as `build/llm bench` times ours")
    p.add_argument("--model", required=True)
    p.add_argument("--threads", type=int, default=0, help="0: one per online CPU")
    p.add_argument("--context", type=int, default=128)
    p.add_argument("--steps", type=int, default=32)
    p.add_argument("--batch", type=int, default=8)
    p.add_argument("--flash-attn", choices=("auto", "on", "off"), default="auto")
    a = p.parse_args()
    if a.threads <= 0:
        a.threads = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") \
            else (os.cpu_count() or 1)
    if not 1 <= a.context <= 8192 or not 3 <= a.steps <= 100000 or not 2 <= a.batch <= 64:
        fail("--context 1..8192, --steps 3..100000, --batch 2..64", 2)
    if not os.path.isfile(a.model):
        fail(f"{a.model}: no such file")
    try:
        import llama_cpp as L
    except ImportError as e:
        fail(f"cannot import llama_cpp ({e}); run with the python scripts/llm-venv.sh prints")

    quiet = L.llama_log_callback(lambda level, text, user: None)
    L.llama_log_set(quiet, ctypes.c_void_p(0))
    L.llama_backend_init()
    mp = L.llama_model_default_params()
    mp.n_gpu_layers = 0
    model = L.llama_model_load_from_file(a.model.encode(), mp)
    if not model:
        fail(f"llama.cpp cannot load {a.model}")
    desc = ctypes.create_string_buffer(128)
    L.llama_model_desc(model, desc, len(desc))
    wtype = desc.value.decode(errors="replace").split()[-1].lower()   # "llama 135M Q4_1"
    name = f"llama.cpp-{wtype}"
    mb = L.llama_model_size(model) / 1e6
    vocab = L.llama_vocab_n_tokens(L.llama_model_get_vocab(model))
    for nseq in (1, a.batch):
        med = measure(L, model, a, nseq, vocab)
        print(f"{name:<12s} M={nseq:<4d} {nseq / med:10.1f} tok/s {1e3 * med:9.3f} ms/step  "
              f"({mb:.1f} MB of weights)", flush=True)
    L.llama_model_free(model)
    del quiet


if __name__ == "__main__":
    main()
