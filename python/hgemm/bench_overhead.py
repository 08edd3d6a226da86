# SPDX-License-Identifier: Apache-2.0
"""python -m hgemm.bench_overhead [--size 64] [--calls 200] [--rounds 60] [--json PATH]

Eager host time per call of a small product (size³, float16, on the GPU) through each way of
calling hgemm, against the torch call it stands in for, in one process: torch.mm,
hgemm.matmul (the direct path), torch.ops.hgemm.mm and torch.ops.hgemm.matmul; then batched,
with an input that requires grad, and nn.Linear. Each round times `calls` back-to-back calls
before synchronizing (well under the launch queue's depth, so the host never waits for the GPU),
the cases interleaved round by round; the table gives medians over rounds and the ratio to the
torch call. The operators' target is at most 1.5× torch.mm.
"""
import argparse
import statistics
import sys
import time

from . import _bench_json

OP_LIMIT = 1.5  # the operators' host time per call, at most this many times torch.mm's


def cases(torch, n):
    import hgemm
    import hgemm.nn
    import hgemm.torch_ops

    def rand(*shape):
        return (torch.rand(*shape, device="cuda") * 2 - 1).half()

    a, b, x, bias = rand(n, n), rand(n, n), rand(4, n, n), rand(n)
    a_grad = rand(n, n).requires_grad_()
    torch.manual_seed(0)
    ref_layer = torch.nn.Linear(n, n, device="cuda", dtype=torch.float16)
    layer = hgemm.nn.Linear(n, n, device="cuda")
    layer.load_state_dict(ref_layer.state_dict())
    mm, matmul, addmm = torch.ops.hgemm.mm.default, torch.ops.hgemm.matmul.default, torch.ops.hgemm.addmm.default
    # (name, what it is compared with, the call)
    return [
        ("torch.mm", None, lambda: torch.mm(a, b)),
        ("hgemm.matmul", "torch.mm", lambda: hgemm.matmul(a, b)),
        ("torch.ops.hgemm.mm", "torch.mm", lambda: mm(a, b)),
        ("torch.ops.hgemm.matmul", "torch.mm", lambda: matmul(a, b)),
        ("torch.addmm", None, lambda: torch.addmm(bias, a, b)),
        ("torch.ops.hgemm.addmm", "torch.addmm", lambda: addmm(bias, a, b)),
        ("torch.matmul, batch 4", None, lambda: torch.matmul(x, b)),
        ("torch.ops.hgemm.matmul, batch 4", "torch.matmul, batch 4", lambda: matmul(x, b)),
        ("torch.mm, a requires grad", None, lambda: torch.mm(a_grad, b)),
        ("torch.ops.hgemm.mm, a requires grad", "torch.mm, a requires grad", lambda: mm(a_grad, b)),
        ("torch.nn.Linear, no grad", None, lambda: _no_grad(torch, ref_layer, a)),
        ("hgemm.nn.Linear, no grad", "torch.nn.Linear, no grad", lambda: _no_grad(torch, layer, a)),
    ]


def _no_grad(torch, layer, x):
    with torch.no_grad():
        return layer(x)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m hgemm.bench_overhead", description=__doc__.split("\n\n")[1])
    parser.add_argument("--size", type=int, default=64, help="M = N = K (default 64)")
    parser.add_argument("--calls", type=int, default=200, help="calls per timed round (default 200)")
    parser.add_argument("--rounds", type=int, default=60, help="timed rounds per case (default 60)")
    parser.add_argument("--json", default="bench/out/overhead.json", help="output file ('' for none)")
    args = parser.parse_args(argv)

    import torch

    if not torch.cuda.is_available():
        print("no CUDA GPU found", file=sys.stderr)
        return 1
    table = cases(torch, args.size)
    for _, _, call in table:  # warm up: caches, lazy imports, the allocator's blocks
        for _ in range(args.calls):
            call()
    torch.cuda.synchronize()
    per_call = {name: [] for name, _, _ in table}
    for _ in range(args.rounds):
        for name, _, call in table:
            torch.cuda.synchronize()
            start = time.perf_counter()
            for _ in range(args.calls):
                call()
            per_call[name].append((time.perf_counter() - start) / args.calls * 1e6)
    torch.cuda.synchronize()

    rows = []
    median = {name: statistics.median(times) for name, times in per_call.items()}
    print(f"host time per call, {args.size}x{args.size}x{args.size} float16, median of {args.rounds} rounds "
          f"of {args.calls} calls")
    print(f"{'call':40s} {'median us':>10s} {'min us':>8s} {'x torch':>8s}")
    for name, baseline, _ in table:
        ratio = median[name] / median[baseline] if baseline else None
        rows.append({"call": name, "baseline": baseline or "", "median_us": median[name],
                     "min_us": min(per_call[name]), "vs_baseline": ratio})
        print(f"{name:40s} {median[name]:10.2f} {min(per_call[name]):8.2f} "
              f"{'' if ratio is None else f'{ratio:8.2f}'}")
    ops = {name: median[name] / median["torch.mm"] for name in ("torch.ops.hgemm.mm", "torch.ops.hgemm.matmul")}
    summary = {"op_limit_vs_torch_mm": OP_LIMIT, "ops_vs_torch_mm": ops,
               "ops_within_limit": all(r <= OP_LIMIT for r in ops.values())}
    print("operators against torch.mm: " + ", ".join(f"{k} {v:.2f}x" for k, v in ops.items()) +
          f" (target <= {OP_LIMIT}x: {'met' if summary['ops_within_limit'] else 'NOT met'})")
    head = _bench_json.header(torch, size=args.size, calls=args.calls, rounds=args.rounds)
    _bench_json.write(args.json, head, rows, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
