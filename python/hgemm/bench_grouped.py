# SPDX-License-Identifier: Apache-2.0
"""python -m hgemm.bench_grouped [--shapes G:M:N:K,...] [--dtype bf16,f16] [--op nn|nt] [--layout contiguous|k]
                                [--json PATH]

Grouped products of mixture-of-experts layers (the contiguous layout: a of M×K holds every group's
rows, b is G×K×N, offs the groups' cumulative end rows on the GPU): hgemm.grouped_mm timed against
torch._grouped_mm and a loop of torch.mm, one per group. The rows (groups, M in all, N, K) are
hgemm-bench's grouped suite, and the group sizes its rule (uneven, multiples of 16, group 1 empty
and, from 4 groups on, the last one too), so both benchmarks time the same problems. Each result
is checked against float32 torch before timing; each call is timed with CUDA events after warm-up,
cycling through enough copies of the operands that they do not stay in L2; the table gives
medians, TFLOP/s and hgemm's speed relative to each baseline.

--layout k times the weight gradient of that layer instead, the K-grouped product
out[g] = x_gᵀ·dy_g (G×K×N) of x (M×K) and dy (M×N) split into the same groups along M:
hgemm.grouped_mm(x.t(), dy, offs) against torch._grouped_mm(x.t(), dy, offs=offs) and a torch.mm loop.

The torch.mm loop is given the group slices ready-made (the sizes on the host); a model would
first copy them from the GPU, a synchronisation not counted here. torch._grouped_mm computes
bfloat16 on the device; for float16 it falls back to such a loop, reading the sizes on the host.
"""
import argparse
import math
import statistics
import sys

from . import _bench_json

# hgemm-bench's grouped suite (tools/bench/config.cpp): prefill, many experts, small experts, decode.
SHAPES = [(8, 16384, 4096, 7168), (64, 32768, 2048, 4096), (128, 4096, 1536, 2048), (8, 64, 4096, 7168)]


def grouped_rows(groups, total):
    """The rows of each group, as hgemm-bench's grouped_rows (tools/bench/config.cpp): uneven, each a
    multiple of 16, group 1 empty and, from 4 groups on, the last one too. The non-empty groups get
    total/16 blocks of 16 rows in proportion to the weights 1 + (5g + 2) mod 7, the blocks left by
    rounding down one each from the first group on. ValueError unless total is a multiple of 16."""
    if total % 16 != 0 or total < 0:
        raise ValueError(f"a grouped shape's M ({total}) must be a multiple of 16")
    empty = [(groups > 1 and g == 1) or (groups >= 4 and g == groups - 1) for g in range(groups)]
    weight = [0 if empty[g] else 1 + (5 * g + 2) % 7 for g in range(groups)]
    blocks, weights = total // 16, sum(weight)
    rows = [blocks * w // weights if weights else 0 for w in weight]
    given, g = sum(rows), 0
    while given < blocks:
        if not empty[g]:
            rows[g] += 1
            given += 1
        g = (g + 1) % groups
    return [r * 16 for r in rows]


def colon_tuples(text, count, what, usage):
    """A comma list of `count` colon-separated integers, as [(item, tuple)]; else an argparse error
    "bad {what} {item!r}: expected {usage}"."""
    out = []
    for item in text.split(","):
        parts = item.strip().split(":")
        if len(parts) != count or not all(p.isdigit() for p in parts):
            raise argparse.ArgumentTypeError(f"bad {what} {item!r}: expected {usage}")
        out.append((item, tuple(int(p) for p in parts)))
    return out


def parse_shapes(text):
    return [shape for _, shape in colon_tuples(text, 4, "shape", "G:M:N:K (groups, rows in all, N, K)")]


def rel_error(got, want):
    return ((got.double() - want.double()).norm() / want.double().norm().clamp_min(1e-30)).item()


def time_ms(torch, run, sets, warmup, iters):
    """Milliseconds of each of `iters` calls of run(set), cycling through the operand sets."""
    for i in range(warmup):
        run(sets[i % len(sets)])
    torch.cuda.synchronize()
    events = [(torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)) for _ in range(iters)]
    for i, (start, end) in enumerate(events):
        s = sets[i % len(sets)]
        start.record()
        run(s)
        end.record()
    torch.cuda.synchronize()
    return [start.elapsed_time(end) for start, end in events]


def make_sets(torch, groups, rows, n, k, dtype, op, l2_bytes, layout="contiguous"):
    """Operand sets (a, b, offs, out), as many as keep the timed calls from reading L2-resident data,
    like hgemm-bench: 1 + 2·L2 / (bytes of one set), at most 32. layout "k": a is x (M×K), b is dy
    (M×N) and out G×K×N, zeroed (the loop leaves empty groups alone)."""
    m = sum(rows)
    set_bytes = (m * k + groups * k * n + m * n) * 2
    count = max(1, min(32, 1 + 2 * l2_bytes // max(set_bytes, 1)))
    offs = torch.tensor(rows, dtype=torch.int64).cumsum(0).to(torch.int32).cuda()
    sets = []
    for _ in range(count):
        if layout == "k":
            sets.append({"a": (torch.randn(m, k, device="cuda") * 0.5).to(dtype),
                         "b": (torch.randn(m, n, device="cuda") * 0.5).to(dtype), "offs": offs,
                         "out": torch.zeros(groups, k, n, device="cuda", dtype=dtype)})
            continue
        a = (torch.randn(m, k, device="cuda") * 0.5).to(dtype)
        if op == "nt":  # weights stored G×N×K (as nn.Linear's), passed as transposed views
            b = (torch.randn(groups, n, k, device="cuda") * 0.5).to(dtype).transpose(-2, -1)
        else:
            b = (torch.randn(groups, k, n, device="cuda") * 0.5).to(dtype)
        sets.append({"a": a, "b": b, "offs": offs, "out": torch.empty(m, n, device="cuda", dtype=dtype)})
    return sets


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m hgemm.bench_grouped", description=__doc__.split("\n\n")[1])
    parser.add_argument("--shapes", type=parse_shapes, default=SHAPES,
                        help="G:M:N:K,... (groups, rows in all, a multiple of 16, N, K); default hgemm-bench's "
                             "grouped suite")
    parser.add_argument("--dtype", default="bf16,f16", help="comma-separated bf16, f16 (default both)")
    parser.add_argument("--op", choices=["nn", "nt"], default="nn",
                        help="b's matrices K×N row-major (nn, default) or transposed views of N×K (nt)")
    parser.add_argument("--layout", choices=["contiguous", "k"], default="contiguous",
                        help="the forward's contiguous layout (default) or its weight gradient, K-grouped")
    parser.add_argument("--iters", type=int, default=30, help="timed calls per implementation (default 30)")
    parser.add_argument("--warmup", type=int, default=5, help="untimed calls first (default 5)")
    parser.add_argument("--no-loop", action="store_true", help="skip the torch.mm loop")
    parser.add_argument("--json", default="bench/out/grouped.json",
                        help="output file ('' for none; default bench/out/grouped.json)")
    args = parser.parse_args(argv)

    import torch

    import hgemm

    if not torch.cuda.is_available():
        print("no CUDA GPU found", file=sys.stderr)
        return 1
    typed = _bench_json.half_dtypes(parser, args.dtype, torch)
    dtypes = [d for d, _ in typed]
    for g, m, _, _ in args.shapes:
        grouped_rows(g, m)  # M a multiple of 16, before any GPU work
    l2 = torch.cuda.get_device_properties(torch.cuda.current_device()).L2_cache_size
    torch.manual_seed(0)

    k_grouped = args.layout == "k"
    if k_grouped:
        impls = {
            "hgemm.grouped_mm": lambda s: hgemm.grouped_mm(s["a"].t(), s["b"], s["offs"], out=s["out"]),
            "torch._grouped_mm": lambda s: torch._grouped_mm(s["a"].t(), s["b"], offs=s["offs"]),
        }
    else:
        impls = {
            "hgemm.grouped_mm": lambda s: hgemm.grouped_mm(s["a"], s["b"], s["offs"]),
            "torch._grouped_mm": lambda s: torch._grouped_mm(s["a"], s["b"], offs=s["offs"]),
        }
    rows_out, ratios = [], {}
    print(f"{'dtype':5s} {'G':>4s} {'M':>6s} {'N':>5s} {'K':>5s}  {'implementation':18s} {'median ms':>10s} "
          f"{'TFLOP/s':>8s} {'rel err':>8s}")
    for dname, dtype in typed:
        for groups, m, n, k in args.shapes:
            rows = grouped_rows(groups, m)
            sets = make_sets(torch, groups, rows, n, k, dtype, args.op, l2, args.layout)
            bounds = [0] + list(torch.tensor(rows).cumsum(0).tolist())
            if k_grouped:
                slices = [[(s["a"][bounds[g]:bounds[g + 1]].t(), s["b"][bounds[g]:bounds[g + 1]], s["out"][g])
                           for g in range(groups) if rows[g] > 0] for s in sets]
            else:
                slices = [[(s["a"][bounds[g]:bounds[g + 1]], s["b"][g], s["out"][bounds[g]:bounds[g + 1]])
                           for g in range(groups) if rows[g] > 0] for s in sets]
            by_set = {id(s): i for i, s in enumerate(sets)}

            def loop(s):
                for x, w, o in slices[by_set[id(s)]]:
                    torch.mm(x, w, out=o)

            runs = dict(impls)
            if not args.no_loop:
                runs["torch.mm loop"] = loop
            s0 = sets[0]
            if k_grouped:
                part = [(bounds[g], bounds[g + 1]) for g in range(groups)]
                want = torch.stack([s0["a"][lo:hi].float().t() @ s0["b"][lo:hi].float() for lo, hi in part])
            else:
                want = torch.cat([s0["a"][bounds[g]:bounds[g + 1]].float() @ s0["b"][g].float()
                                  for g in range(groups)])
            flops = 2 * m * n * k
            medians = {}
            for name, run in runs.items():
                try:
                    got = run(s0)
                    got = s0["out"] if got is None else got
                    torch.cuda.synchronize()
                    err = rel_error(got if k_grouped else got[:bounds[-1]], want)
                    times = time_ms(torch, run, sets, args.warmup, args.iters)
                except (RuntimeError, TypeError, ValueError) as e:  # a baseline without this dtype or layout
                    print(f"{dname:5s} {groups:4d} {m:6d} {n:5d} {k:5d}  {name:18s} skipped: {e}")
                    rows_out.append({"dtype": dname, "groups": groups, "m": m, "n": n, "k": k, "op": args.op,
                                     "group_rows": rows, "impl": name, "skipped": str(e)})
                    continue
                ms = statistics.median(times)
                medians[name] = ms
                print(f"{dname:5s} {groups:4d} {m:6d} {n:5d} {k:5d}  {name:18s} {ms:10.4f} {flops / ms / 1e9:8.1f} "
                      f"{err:8.1e}")
                rows_out.append({"dtype": dname, "groups": groups, "m": m, "n": n, "k": k, "op": args.op,
                                 "group_rows": rows, "impl": name, "median_ms": ms, "min_ms": min(times),
                                 "max_ms": max(times), "tflops": flops / ms / 1e9, "rel_error_vs_fp32": err,
                                 "operand_sets": len(sets)})
            ours = medians.get("hgemm.grouped_mm")
            for name, ms in medians.items():
                if name != "hgemm.grouped_mm" and ours:
                    ratios.setdefault(f"{dname} vs {name}", []).append(ms / ours)
            for r in rows_out[-len(runs):]:
                if "median_ms" in r and ours and r["impl"] != "hgemm.grouped_mm":
                    r["hgemm_speedup"] = r["median_ms"] / ours
            sets = slices = s0 = got = want = None  # free this shape's operands before the next

    summary = {f"hgemm_speedup_geomean {key}": math.exp(sum(map(math.log, v)) / len(v)) for key, v in ratios.items()}
    for key, v in summary.items():
        print(f"{key}: {v:.3f}")
    head = _bench_json.header(torch, iters=args.iters, warmup=args.warmup, op=args.op, dtypes=dtypes,
                              layout=args.layout, shapes=[list(s) for s in args.shapes])
    _bench_json.write(args.json, head, rows_out, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
