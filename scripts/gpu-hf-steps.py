#!/usr/bin/env python3
"""scripts/gpu-hf-steps.py: whole forward steps of Llama-shaped models timed
in Hugging Face transformers on a GPU (PyTorch, cuBLAS, PyTorch's SDPA
attention), an implementation nobody on this project wrote. specsim's
service model and build/calibrate's own whole-step rows are read beside it
(docs/validation.md, "H200").

Weights are random: a step's time does not depend on their values. The KV
cache is a static one of CTX slots (HF attends over all of them, masked), so
the context is CTX. A step feeds M = batch x q new tokens and computes the
logits of all of them, as a verification iteration does (phase "step").
A prefill of N tokens (phase "prefill", --prefill) feeds one prompt of N
tokens into an empty cache of N slots and computes the logits of its last
token only, as `specsim step prefill` times it. For each it records:
  eager_ms    the Python call, kernels launched one by one (mean of REPS)
  graph_ms    the same step replayed from a CUDA graph (mean of REPS), or
              blank when capture fails (the reason goes to stderr)
  kernel_ms   the sum of the step's GPU kernel times from torch.profiler
              (mean of 3 steps): the GPU's busy time, without launch gaps

usage: gpu-hf-steps.py [--ctx C[,C...]] [--configs BxQ[,BxQ...]]
                      [--prefill N[,N...]] [--compile] CARD.yaml ... > rows.csv
CARD: a models/llm/ card (layers, hidden, heads, kv_heads, ffn, vocab).
Defaults: --ctx 1024 --configs 1x1,1x5,4x5,16x5,32x5,64x4, no prefill.
--compile: the model's forward through torch.compile (TorchInductor), engine
"hf-transformers+inductor": fused element-wise kernels, as gpt-fast runs.
"""
import statistics
import sys

import torch
import transformers
import yaml
from torch.profiler import ProfilerActivity, profile
from transformers import LlamaConfig, LlamaForCausalLM
from transformers.cache_utils import StaticCache

# Steps advance the cache's write position; a block of steps starts HEAD
# slots before the end, so that it never runs past the cache.
HEAD = 64
REPS = 10
CONFIGS = [(1, 1), (1, 5), (4, 5), (16, 5), (32, 5), (64, 4)]


def config_of(path, max_ctx):
    with open(path) as f:
        c = yaml.safe_load(f)
    cfg = LlamaConfig(hidden_size=c["hidden"], intermediate_size=c["ffn"],
                      num_hidden_layers=c["layers"], num_attention_heads=c["heads"],
                      num_key_value_heads=c["kv_heads"], vocab_size=c["vocab"],
                      max_position_embeddings=max_ctx + HEAD, attn_implementation="sdpa")
    return c["name"], cfg


class Step:
    """One model, one (batch, q) over a cache of ctx slots: the static
    inputs a CUDA graph needs. A prefill starts at position 0 of a cache of
    q slots and keeps the last token's logits only."""

    def __init__(self, model, cfg, batch, q, ctx, prefill=False):
        self.model, self.q = model, q
        self.start = 0 if prefill else ctx - HEAD
        self.keep = 1 if prefill else 0
        self.cache = StaticCache(config=cfg, max_cache_len=q if prefill else ctx)
        dev = "cuda"
        self.ids = torch.randint(0, cfg.vocab_size, (batch, q), device=dev)
        self.pos = (torch.arange(q, device=dev) + self.start).expand(batch, q).contiguous()
        self.run()  # allocates the cache (lazily, at the first update)

    def rewind(self):
        for layer in self.cache.layers:
            layer.cumulative_length.fill_(self.start)

    def run(self):
        if self.keep:  # a prefill always writes slots 0..q-1
            self.rewind()
        return self.model(input_ids=self.ids, position_ids=self.pos,
                          past_key_values=self.cache, use_cache=True,
                          logits_to_keep=self.keep).logits


def timed(fn, n):
    a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
    a.record()
    for _ in range(n):
        fn()
    b.record()
    torch.cuda.synchronize()
    return a.elapsed_time(b) / n


def eager_ms(s):
    s.rewind()
    timed(s.run, 3)
    s.rewind()
    return timed(s.run, REPS)


def graph_ms(s):
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        s.rewind()
        for _ in range(3):
            s.run()
    torch.cuda.current_stream().wait_stream(side)
    s.rewind()
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        s.run()
    s.rewind()
    timed(g.replay, 3)
    s.rewind()
    t = timed(g.replay, REPS)
    del g
    return t


def kernel_ms(s):
    s.rewind()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        for _ in range(3):
            s.run()
        torch.cuda.synchronize()
    us = sum(e.self_device_time_total for e in prof.key_averages())
    return us / 3 / 1e3


def measure(path, gpu, ctxs, configs, prefills, compiled):
    name, cfg = config_of(path, max(ctxs + prefills))
    torch.manual_seed(1)
    with torch.device("cuda"):
        model = LlamaForCausalLM(cfg).to(torch.float16).eval()
    engine = "hf-transformers"
    if compiled:
        # TorchInductor fuses the element-wise operators into Triton kernels
        # and keeps cuBLAS for the GEMMs, as gpt-fast does; each (batch, q)
        # compiles once, in Step's first call, before anything is timed.
        model.forward = torch.compile(model.forward, dynamic=False)
        engine = "hf-transformers+inductor"
    runs = [("step", b, q, c) for c in ctxs for b, q in configs]
    runs += [("prefill", 1, n, 0) for n in prefills]
    for phase, batch, q, ctx in runs:
        s = None
        try:
            with torch.inference_mode():
                s = Step(model, cfg, batch, q, ctx, phase == "prefill")
                e = eager_ms(s)
                k = kernel_ms(s)
                try:
                    gr = "%.4f" % graph_ms(s)
                except Exception as ex:  # capture is optional: say why
                    print("graph capture failed for %s %dx%d: %s" % (name, batch, q, ex),
                          file=sys.stderr)
                    gr = ""
            print("%s,%s,%s,%s,%s,%s,%d,%d,%d,%d,%.4f,%s,%.4f" %
                  (engine, transformers.__version__, torch.__version__, gpu, name, phase, batch, q,
                   batch * q, ctx, e, gr, k), flush=True)
        except Exception as ex:
            print("FAILED %s %dx%d: %s" % (name, batch, q, ex), file=sys.stderr)
        finally:
            s = None
            torch.cuda.empty_cache()
    del model
    torch.cuda.empty_cache()


def ints(text):
    return [int(v) for v in text.split(",") if v]


def parse(argv):
    """(ctxs, configs, prefills, cards, compiled), or None on a bad argument."""
    ctxs, configs, prefills, cards, compiled = [1024], CONFIGS, [], [], False
    i = 0
    while i < len(argv):
        a = argv[i]
        if a == "--compile":
            compiled = True
            i += 1
        elif a in ("--ctx", "--configs", "--prefill") and i + 1 < len(argv):
            v = argv[i + 1]
            if a == "--ctx":
                ctxs = ints(v)
            elif a == "--prefill":
                prefills = ints(v)
            else:
                configs = [tuple(int(x) for x in bq.split("x")) for bq in v.split(",") if bq]
            i += 2
        elif a.startswith("--"):
            return None
        else:
            cards.append(a)
            i += 1
    if not cards or any(c <= HEAD for c in ctxs) or any(len(bq) != 2 for bq in configs):
        return None
    return ctxs, configs, prefills, cards, compiled


def main():
    try:
        args = parse(sys.argv[1:])
    except ValueError:
        args = None
    if args is None:
        print(__doc__, file=sys.stderr)
        return 2
    ctxs, configs, prefills, cards, compiled = args
    torch.set_default_dtype(torch.float16)
    gpu = torch.cuda.get_device_name(0).replace(",", " ")
    print("engine,engine_version,torch_version,gpu,model,phase,batch,q,m,context,"
          "eager_ms,graph_ms,kernel_ms", flush=True)
    for path in cards:
        measure(path, gpu, ctxs, configs, prefills, compiled)
    return 0


if __name__ == "__main__":
    sys.exit(main())
