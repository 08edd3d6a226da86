# SPDX-License-Identifier: Apache-2.0
"""python -m hgemm.bench_mlp [--tokens 4096] [--hidden 4096] [--intermediate 14336] [--dtype f16|bf16]
                          [--json PATH]

A Llama-style MLP block, forward and backward in float16 (bfloat16 with --dtype bf16):
down(silu(gate(x)) · up(x)), the three projections without bias, x of tokens × hidden requiring
grad (as inside a network). Built from hgemm.nn.Linear, and timed against the same block from
torch.nn.Linear in eager mode and under torch.compile (and, for reference, the hgemm block under
torch.compile, and one with SiLU fused into the gate projection's epilogue,
Linear(activation="silu")). All blocks start from the same weights; the hgemm results are checked
against torch eager before timing. Each iteration (forward, backward) is timed with CUDA events
after warm-up; the table gives medians, TFLOP/s over the nine products and each block's speed
relative to torch eager and to torch.compile.
"""
import argparse
import statistics
import sys

from . import _bench_json


def build(torch, linear, hidden, intermediate, gate=None):
    """The block from `linear` (in, out); `gate`, when given, makes the gate projection and applies
    SiLU itself."""
    class MLP(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.gate = (gate or linear)(hidden, intermediate)
            self.up = linear(hidden, intermediate)
            self.down = linear(intermediate, hidden)

        def forward(self, x):
            g = self.gate(x)
            return self.down((g if gate else torch.nn.functional.silu(g)) * self.up(x))

    return MLP()


def step(model, x, dy):
    for p in model.parameters():
        p.grad = None
    x.grad = None
    model(x).backward(dy)


def rel_error(got, want):
    return ((got.float() - want.float()).norm() / want.float().norm().clamp_min(1e-30)).item()


def check(torch, ours, ref, x, dy):
    """Relative errors of the hgemm block's output and gradients against torch eager's."""
    out = {}
    for name, model in (("ours", ours), ("ref", ref)):
        step(model, x, dy)
        with torch.no_grad():
            y = model(x)
        out[name] = [y, x.grad.clone()] + [p.grad.clone() for p in model.parameters()]
    labels = ["y", "dx"] + [f"d{n}" for n, _ in ours.named_parameters()]
    return {label: rel_error(g, w) for label, g, w in zip(labels, out["ours"], out["ref"])}


def time_ms(torch, model, x, dy, warmup, iters):
    for _ in range(warmup):
        step(model, x, dy)
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    for start, end in events:
        start.record()
        step(model, x, dy)
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) for start, end in events]


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m hgemm.bench_mlp", description=__doc__.split("\n\n")[1])
    parser.add_argument("--tokens", type=int, default=4096, help="batch × sequence (default 4096)")
    parser.add_argument("--hidden", type=int, default=4096, help="model width (default 4096)")
    parser.add_argument("--intermediate", type=int, default=14336, help="MLP width (default 14336)")
    parser.add_argument("--iters", type=int, default=30, help="timed iterations per block (default 30)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed iterations first (default 5)")
    parser.add_argument("--dtype", choices=["f16", "bf16"], default="f16",
                        help="the block's dtype: weights, activations and gradients (default f16)")
    parser.add_argument("--no-compile", action="store_true", help="skip the torch.compile blocks")
    parser.add_argument("--json", default=None,
                        help="output file ('' for none; default bench/out/mlp.json, bench/out/mlp-bf16.json for bf16)")
    args = parser.parse_args(argv)
    if args.json is None:
        args.json = "bench/out/mlp.json" if args.dtype == "f16" else "bench/out/mlp-bf16.json"

    import torch

    import hgemm.nn

    if not torch.cuda.is_available():
        print("no CUDA GPU found", file=sys.stderr)
        return 1
    t, h, i = args.tokens, args.hidden, args.intermediate
    dtype = {"f16": torch.float16, "bf16": torch.bfloat16}[args.dtype]
    dtype_name = str(dtype).replace("torch.", "")
    torch.manual_seed(0)
    ref = build(torch, lambda a, b: torch.nn.Linear(a, b, bias=False, device="cuda", dtype=dtype), h, i)
    ours = build(torch, lambda a, b: hgemm.nn.Linear(a, b, bias=False, device="cuda", dtype=dtype), h, i)
    ours.load_state_dict(ref.state_dict())
    fused = build(torch, lambda a, b: hgemm.nn.Linear(a, b, bias=False, device="cuda", dtype=dtype), h, i,
                  gate=lambda a, b: hgemm.nn.Linear(a, b, bias=False, device="cuda", dtype=dtype, activation="silu"))
    fused.load_state_dict(ref.state_dict())
    x = (torch.randn(t, h, device="cuda") * 0.5).to(dtype).requires_grad_()
    dy = (torch.randn(t, h, device="cuda") * 0.5).to(dtype)

    errors = check(torch, ours, ref, x, dy)
    errors.update({f"{k} (SiLU fused)": v for k, v in check(torch, fused, ref, x, dy).items()})
    worst = max(errors.values())
    print("hgemm against torch eager, relative error: " + ", ".join(f"{k} {v:.1e}" for k, v in errors.items()))
    if worst > (1e-2 if dtype is torch.float16 else 4e-2):  # bfloat16 rounds 8 times coarser
        print(f"WARNING: the hgemm block differs from torch eager by {worst:.1e}", file=sys.stderr)

    blocks = [("torch eager", ref), ("hgemm eager", ours), ("hgemm eager, SiLU fused", fused)]
    if not args.no_compile:
        blocks += [("torch.compile", torch.compile(ref)), ("hgemm + torch.compile", torch.compile(ours))]
    flops = 9 * 2 * t * h * i  # three products forward, six backward
    times = {name: time_ms(torch, model, x, dy, args.warmup, args.iters) for name, model in blocks}
    median = {name: statistics.median(ms) for name, ms in times.items()}

    rows = []
    print(f"MLP block forward+backward, tokens {t}, hidden {h}, intermediate {i}, {dtype_name}, "
          f"median of {args.iters} iterations")
    print(f"{'block':24s} {'median ms':>10s} {'TFLOP/s':>8s} {'x eager':>8s} {'x compile':>9s}")
    for name, _ in blocks:
        ms = median[name]
        vs_eager = median["torch eager"] / ms
        vs_compile = median["torch.compile"] / ms if "torch.compile" in median else None
        rows.append({"block": name, "median_ms": ms, "min_ms": min(times[name]), "max_ms": max(times[name]),
                     "tflops": flops / ms / 1e9, "speedup_vs_torch_eager": vs_eager,
                     "speedup_vs_torch_compile": vs_compile})
        print(f"{name:24s} {ms:10.3f} {flops / ms / 1e9:8.1f} {vs_eager:8.3f} "
              f"{'' if vs_compile is None else f'{vs_compile:9.3f}'}")
    summary = {"hgemm_vs_torch_eager": median["torch eager"] / median["hgemm eager"],
               "hgemm_silu_fused_vs_torch_eager": median["torch eager"] / median["hgemm eager, SiLU fused"],
               "hgemm_vs_torch_compile": (median["torch.compile"] / median["hgemm eager"]
                                          if "torch.compile" in median else None),
               "rel_errors_vs_torch_eager": errors}
    head = _bench_json.header(torch, tokens=t, hidden=h, intermediate=i, iters=args.iters, warmup=args.warmup,
                              dtype=dtype_name, flops_per_iter=flops, allow_fp16_reduced_precision_reduction=(
                                  torch.backends.cuda.matmul.allow_fp16_reduced_precision_reduction),
                              allow_bf16_reduced_precision_reduction=(
                                  torch.backends.cuda.matmul.allow_bf16_reduced_precision_reduction))
    _bench_json.write(args.json, head, rows, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
