#!/usr/bin/env python3
"""scripts/gpu-fp8-gemm.py: the linear layers of Llama-shaped models timed as
FP8 (e4m3 weights and activations, per-tensor scales, bf16 output: what
torch._scaled_mm runs through cuBLASLt) beside FP16, on a GPU. Neither
kernel is this project's. The rows say what fraction of the card's FP8 and
FP16 peaks, and of its copy bandwidth, verify-sized GEMMs reach
(docs/validation.md, "H200").

Each (shape, M) is timed as a CUDA graph of REPS products, replayed three
times after a warm-up; the row holds the mean per product of the fastest
replay. The weights are N x K (row-major, as nn.Linear keeps them) and
the activations M x K; FP8 weights are stored column-major for the product,
as cuBLASLt's FP8 path requires.

usage: gpu-fp8-gemm.py CARD.yaml [CARD.yaml ...] > rows.csv
Columns: gpu,model,shape,n,k,m,dtype,time_us,tflops,gbs
  gbs counts the weights, the activations and the output once each.
"""
import sys

import torch
import yaml

MS = [1, 16, 64, 128, 256, 512, 1024, 2048, 4096, 8192]
REPS = 20


def shapes(path):
    with open(path) as f:
        c = yaml.safe_load(f)
    h, hd = c["hidden"], c["hidden"] // c["heads"]
    return c["name"], [("qkv", (c["heads"] + 2 * c["kv_heads"]) * hd, h),
                       ("o", h, h), ("gate_up", 2 * c["ffn"], h),
                       ("down", h, c["ffn"]), ("lm_head", c["vocab"], h)]


def graph_time_us(fn):
    """Mean time of one fn() call, from a CUDA graph of REPS calls."""
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        for _ in range(3):
            fn()
    torch.cuda.current_stream().wait_stream(side)
    g = torch.cuda.CUDAGraph()
    with torch.cuda.graph(g):
        for _ in range(REPS):
            fn()
    g.replay()
    best = None
    for _ in range(3):
        a, b = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        a.record()
        g.replay()
        b.record()
        torch.cuda.synchronize()
        t = a.elapsed_time(b) * 1e3 / REPS
        best = t if best is None else min(best, t)
    del g
    return best


def row(gpu, model, shape, n, k, m, dtype, us, wbytes, abytes, obytes):
    flops = 2.0 * m * n * k
    moved = n * k * wbytes + m * k * abytes + m * n * obytes
    print("%s,%s,%s,%d,%d,%d,%s,%.3f,%.2f,%.1f" %
          (gpu, model, shape, n, k, m, dtype, us, flops / us / 1e6, moved / us / 1e3),
          flush=True)


def measure(path, gpu):
    name, shp = shapes(path)
    one = torch.ones((), device="cuda", dtype=torch.float32)
    for shape, n, k in shp:
        w16 = torch.randn(n, k, device="cuda", dtype=torch.float16) * 0.02
        w8 = w16.to(torch.float8_e4m3fn)  # row-major N x K; .t() is K x N column-major
        for m in MS:
            x16 = torch.randn(m, k, device="cuda", dtype=torch.float16)
            x8 = x16.to(torch.float8_e4m3fn)
            try:
                us = graph_time_us(lambda: torch.matmul(x16, w16.t()))
                row(gpu, name, shape, n, k, m, "fp16", us, 2, 2, 2)
            except Exception as ex:
                print("FAILED fp16 %s %s M=%d: %s" % (name, shape, m, ex), file=sys.stderr)
            try:
                us = graph_time_us(lambda: torch._scaled_mm(
                    x8, w8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16))
                row(gpu, name, shape, n, k, m, "fp8-e4m3", us, 1, 1, 2)
            except Exception as ex:
                print("FAILED fp8 %s %s M=%d: %s" % (name, shape, m, ex), file=sys.stderr)
            del x16, x8
        del w16, w8
        torch.cuda.empty_cache()


def main():
    if len(sys.argv) < 2 or any(a.startswith("-") for a in sys.argv[1:]):
        print(__doc__, file=sys.stderr)
        return 2
    gpu = torch.cuda.get_device_name(0).replace(",", " ")
    print("gpu,model,shape,n,k,m,dtype,time_us,tflops,gbs", flush=True)
    for path in sys.argv[1:]:
        measure(path, gpu)
    return 0


if __name__ == "__main__":
    sys.exit(main())
