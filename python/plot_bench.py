#!/usr/bin/env python3
"""Charts from hgemm-bench JSON: TFLOP/s against size per kernel (cuBLAS as the reference line),
and the ladder as bars with each rung's speed-up over cuda.naive.

    python3 python/plot_bench.py bench/out/run.json [more.json ...] --out-dir bench/out
"""
import argparse
import json
import os
import sys
from collections import defaultdict

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def load_rows(paths):
    rows, header = [], None
    for path in paths:
        with open(path) as f:
            data = json.load(f)
        header = header or data.get("header", {})
        rows += [r for r in data["rows"] if not r.get("error")]
    return header, rows


def shape_key(r):
    return (r["m"], r["n"], r["k"])


def shape_label(key):
    m, n, k = key
    return f"{m}³" if m == n == k else f"{m}×{n}×{k}"


def title_suffix(header):
    parts = [header.get("gpu", ""), header.get("date", "")[:10]]
    return " — ".join(p for p in parts if p)


def plot_tflops_vs_size(header, rows, out_path):
    accums = sorted({r["accum"] for r in rows})
    fig, axes = plt.subplots(1, len(accums), figsize=(7 * len(accums), 5), squeeze=False)
    for ax, accum in zip(axes[0], accums):
        series = defaultdict(list)
        order = []
        for r in rows:
            if r["accum"] != accum:
                continue
            if r["kernel"] not in series:
                order.append(r["kernel"])
            series[r["kernel"]].append(r)
        for kernel in order:
            pts = sorted(series[kernel], key=lambda r: r["m"] * r["n"] * r["k"])
            xs = [(r["m"] * r["n"] * r["k"]) ** (1 / 3) for r in pts]
            ys = [r["tflops"] for r in pts]
            baseline = kernel.startswith("cublas.")
            ax.plot(xs, ys, "k--" if baseline else "-", marker="o", label=kernel + (" (reference)" if baseline else ""),
                    linewidth=2.5 if baseline else 1.5)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("size: (M·N·K)^(1/3)")
        ax.set_ylabel("TFLOP/s (median)")
        ax.set_title(f"{accum} accumulation")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="center right")
    fig.suptitle("hgemm vs cuBLAS, same run — " + title_suffix(header))
    fig.tight_layout()
    fig.savefig(out_path, dpi=120)
    plt.close(fig)


def plot_ladder(header, rows, out_path):
    """Bars of the largest shape that has a cuda.naive row, per accumulation."""
    accums = sorted({r["accum"] for r in rows})
    fig, axes = plt.subplots(1, len(accums), figsize=(7 * len(accums), 5), squeeze=False)
    for ax, accum in zip(axes[0], accums):
        acc_rows = [r for r in rows if r["accum"] == accum]
        with_naive = [shape_key(r) for r in acc_rows if r["kernel"] == "cuda.naive"]
        if not with_naive:
            ax.set_visible(False)
            continue
        key = max(with_naive, key=lambda s: s[0] * s[1] * s[2])
        bars = [r for r in acc_rows if shape_key(r) == key]
        naive = next(r["tflops"] for r in bars if r["kernel"] == "cuda.naive")
        names = [r["kernel"].replace("cuda.", "") for r in bars]
        values = [r["tflops"] for r in bars]
        colors = ["0.6" if r["kernel"].startswith("cublas.") else "C0" for r in bars]
        ax.bar(range(len(bars)), values, color=colors)
        for i, v in enumerate(values):
            ax.text(i, v, f"{v / naive:.1f}×", ha="center", va="bottom", fontsize=8)
        ax.set_xticks(range(len(bars)))
        ax.set_xticklabels(names, rotation=35, ha="right", fontsize=8)
        ax.set_yscale("log")
        ax.set_ylabel("TFLOP/s (median)")
        ax.set_title(f"ladder at {shape_label(key)}, {accum} accumulation (labels: speed-up over naive)")
    fig.suptitle("hgemm CUDA-core ladder — " + title_suffix(header))
    fig.tight_layout()
    fig.savefig(out_path, dpi=120)
    plt.close(fig)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("json", nargs="+", help="hgemm-bench --json output(s)")
    parser.add_argument("--out-dir", default=".", help="where to write the PNG files")
    args = parser.parse_args(argv)
    header, rows = load_rows(args.json)
    if not rows:
        print("plot_bench: no successful rows in the input", file=sys.stderr)
        return 1
    os.makedirs(args.out_dir, exist_ok=True)
    outputs = [os.path.join(args.out_dir, "tflops_vs_size.png"), os.path.join(args.out_dir, "ladder.png")]
    plot_tflops_vs_size(header, rows, outputs[0])
    plot_ladder(header, rows, outputs[1])
    for path in outputs:
        print(path)
    return 0


if __name__ == "__main__":
    sys.exit(main())
