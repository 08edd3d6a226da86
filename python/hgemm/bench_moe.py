# SPDX-License-Identifier: Apache-2.0
"""python -m hgemm.bench_moe [--blocks E:K:T:H:F,...] [--dtype bf16,f16] [--skew S] [--backward]
                            [--json PATH]

A whole mixture-of-experts block, timed with hgemm against torch in the same process: the tokens
already sorted by expert (T tokens, each routed to top-K of E experts, so T·K rows), the gate/up
product with every expert's [gate | up] weights (a grouped product to 2F columns), silu(gate)·up,
and the down product back to H columns (a second grouped product):

    hgemm: hgemm.grouped_mm, torch's silu(gate) * up, hgemm.grouped_mm
    torch: torch._grouped_mm, torch's silu(gate) * up, torch._grouped_mm

The expert sizes come from a skewed distribution (expert e gets a share proportional to
1 / (e + 1)^S of the T·K rows; S = 0 is an even split), as routers give. --backward times the
forward and the backward of the block (the gradients of the tokens and of both weights) instead
of the forward alone. The router, the gather of the tokens and the combine after the block are
the same for both and not timed. Each block is checked (hgemm's output against torch's) before
timing; each call is timed with CUDA events after warm-up; the table gives medians and hgemm's
speed relative to torch.
"""
import argparse
import math
import statistics
import sys

from . import _bench_json
from .bench_grouped import colon_tuples, rel_error, time_ms

# (experts, top-k, tokens, hidden, ffn): a Mixtral-sized layer at prefill, many small experts
# (DeepSeek-sized), and a decode step of the first.
BLOCKS = [(8, 2, 4096, 4096, 14336), (64, 6, 4096, 2048, 1408), (8, 2, 32, 4096, 14336)]


def parse_blocks(text):
    blocks = colon_tuples(text, 5, "block", "E:K:T:H:F (5 positive integers)")
    for item, block in blocks:
        if min(block) < 1 or block[1] > block[0]:
            raise argparse.ArgumentTypeError(f"bad block {item!r}: every size at least 1 and K at most E")
    return [block for _, block in blocks]


def expert_rows(experts, rows, skew):
    """The rows each expert receives: shares proportional to 1 / (e + 1)^skew, rounded down, the
    rows left by rounding given one each from the largest expert on. Sums to `rows`."""
    if experts < 1 or rows < 0 or skew < 0:
        raise ValueError("expert_rows: experts >= 1, rows >= 0 and skew >= 0")
    weights = [1.0 / (e + 1) ** skew for e in range(experts)]
    total = sum(weights)
    counts = [int(rows * w / total) for w in weights]
    for e in range(rows - sum(counts)):
        counts[e % experts] += 1
    return counts


def block(torch, grouped, x, w13, w2, offs):
    """The expert block on sorted tokens x (rows × H): w13 holds each expert's [gate | up] weights
    (E × 2F × H, as nn.Linear stores them), w2 its down weights (E × H × F)."""
    h = grouped(x, w13.transpose(-2, -1), offs)
    gate, up = h.chunk(2, dim=-1)
    return grouped(torch.nn.functional.silu(gate) * up, w2.transpose(-2, -1), offs)


def main(argv=None):
    parser = argparse.ArgumentParser(prog="python -m hgemm.bench_moe", description=__doc__.split("\n\n")[1])
    parser.add_argument("--blocks", type=parse_blocks, default=BLOCKS,
                        help="E:K:T:H:F,... (experts, top-k, tokens, hidden, ffn); default a Mixtral-sized "
                             "prefill, 64 small experts and a decode step")
    parser.add_argument("--dtype", default="bf16,f16", help="comma-separated bf16, f16 (default both)")
    parser.add_argument("--skew", type=float, default=1.0,
                        help="expert e gets a share of 1/(e+1)^skew of the rows (default 1; 0: even)")
    parser.add_argument("--backward", action="store_true", help="time forward and backward instead of forward")
    parser.add_argument("--iters", type=int, default=20, help="timed calls per implementation (default 20)")
    parser.add_argument("--warmup", type=int, default=3, help="untimed calls first (default 3)")
    parser.add_argument("--json", default="bench/out/moe.json", help="output file ('' for none)")
    args = parser.parse_args(argv)
    if args.skew < 0:
        parser.error("--skew must be at least 0")

    import torch

    import hgemm

    if not torch.cuda.is_available():
        print("no CUDA GPU found", file=sys.stderr)
        return 1
    typed = _bench_json.half_dtypes(parser, args.dtype, torch)
    dtypes = [d for d, _ in typed]
    torch.manual_seed(0)
    impls = {"hgemm": lambda x, w, offs: hgemm.grouped_mm(x, w, offs),
             "torch": lambda x, w, offs: torch._grouped_mm(x, w, offs=offs)}
    pass_name = "forward+backward" if args.backward else "forward"
    rows_out, ratios = [], {}
    print(f"{'dtype':5s} {'E':>3s} {'K':>2s} {'T':>6s} {'H':>5s} {'F':>6s}  {'impl':6s} {pass_name:>17s} ms "
          f"{'TFLOP/s':>8s}")
    for dname, dtype in typed:
        for experts, top_k, tokens, hidden, ffn in args.blocks:
            counts = expert_rows(experts, tokens * top_k, args.skew)
            rows = sum(counts)
            offs = torch.tensor(counts, dtype=torch.int64).cumsum(0).to(torch.int32).cuda()
            x = (torch.randn(rows, hidden, device="cuda") * 0.5).to(dtype).requires_grad_(args.backward)
            w13 = (torch.randn(experts, 2 * ffn, hidden, device="cuda") / math.sqrt(hidden)).to(dtype)
            w2 = (torch.randn(experts, hidden, ffn, device="cuda") / math.sqrt(ffn)).to(dtype)
            w13.requires_grad_(args.backward), w2.requires_grad_(args.backward)
            dy = (torch.randn(rows, hidden, device="cuda") * 0.5).to(dtype)
            flops = 2 * rows * hidden * 3 * ffn * (3 if args.backward else 1)
            base = {"dtype": dname, "experts": experts, "top_k": top_k, "tokens": tokens, "hidden": hidden,
                    "ffn": ffn, "expert_rows": counts, "skew": args.skew, "pass": pass_name}

            def run_of(grouped):
                if not args.backward:
                    return lambda: block(torch, grouped, x, w13, w2, offs)

                def step():
                    x.grad = w13.grad = w2.grad = None
                    block(torch, grouped, x, w13, w2, offs).backward(dy)
                return step

            outputs, medians = {}, {}
            for name, grouped in impls.items():
                try:
                    with torch.no_grad():
                        outputs[name] = block(torch, grouped, x.detach(), w13.detach(), w2.detach(), offs)
                    run = run_of(grouped)
                    times = time_ms(torch, lambda _: run(), [None], args.warmup, args.iters)
                except (RuntimeError, TypeError, ValueError, NotImplementedError) as e:  # a torch without it
                    print(f"{dname:5s} {experts:3d} {top_k:2d} {tokens:6d} {hidden:5d} {ffn:6d}  {name:6s} skipped: {e}")
                    rows_out.append(dict(base, impl=name, skipped=str(e)))
                    continue
                ms = statistics.median(times)
                medians[name] = ms
                print(f"{dname:5s} {experts:3d} {top_k:2d} {tokens:6d} {hidden:5d} {ffn:6d}  {name:6s} "
                      f"{ms:20.4f} {flops / ms / 1e9:8.1f}")
                rows_out.append(dict(base, impl=name, median_ms=ms, min_ms=min(times), max_ms=max(times),
                                     tflops=flops / ms / 1e9))
            if "hgemm" in outputs and "torch" in outputs:
                rows_out[-1]["rel_error_vs_torch"] = rel_error(outputs["hgemm"], outputs["torch"])
            if len(medians) == 2:
                speedup = medians["torch"] / medians["hgemm"]
                ratios.setdefault(dname, []).append(speedup)
                rows_out[-1]["hgemm_speedup"] = speedup
                print(f"{'':5s} hgemm / torch: {speedup:.3f}x, relative difference "
                      f"{rows_out[-1]['rel_error_vs_torch']:.1e}")
            x = w13 = w2 = dy = outputs = None  # free this block's tensors before the next

    summary = {f"hgemm_speedup_geomean {d} {pass_name}": math.exp(sum(map(math.log, v)) / len(v))
               for d, v in ratios.items()}
    for key, v in summary.items():
        print(f"{key}: {v:.3f}")
    head = _bench_json.header(torch, iters=args.iters, warmup=args.warmup, dtypes=dtypes, skew=args.skew,
                              backward=args.backward, blocks=[list(b) for b in args.blocks])
    _bench_json.write(args.json, head, rows_out, summary)
    return 0


if __name__ == "__main__":
    sys.exit(main())
