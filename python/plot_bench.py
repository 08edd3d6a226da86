#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""Charts from hgemm-bench JSON: TFLOP/s against size per kernel (cuBLAS as the reference line),
and the ladder as bars with each rung's speed-up over cuda.naive. One panel per accumulation and
types (A/B → C/D); a strided batch counts all its products. Older files (f16 only, no batch) read
as f16 → f16 single products.

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
        for r in data["rows"]:
            if r.get("error"):
                continue
            r.setdefault("dtype", "f16")
            r.setdefault("out_dtype", "f16")
            r.setdefault("batch", 1)
            rows.append(r)
    return header, rows


def shape_key(r):
    return (r["m"], r["n"], r["k"], r["batch"])


def shape_label(key):
    m, n, k, batch = key
    size = f"{m}³" if m == n == k else f"{m}×{n}×{k}"
    return size if batch == 1 else f"{batch}×{size}"


def work(r):
    """Multiply-adds of the row's problem, every product of a batch."""
    return r["m"] * r["n"] * r["k"] * r["batch"]


def panel_key(r):
    return (r["accum"], r["dtype"], r["out_dtype"])


def panel_title(key):
    accum, dtype, out_dtype = key
    types = "" if dtype == out_dtype == "f16" else f", {dtype} → {out_dtype}"
    return f"{accum} accumulation{types}"


def title_suffix(header):
    parts = [header.get("gpu", ""), header.get("date", "")[:10]]
    return " — ".join(p for p in parts if p)


def plot_tflops_vs_size(header, rows, out_path):
    panels = sorted({panel_key(r) for r in rows})
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 5), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        series = defaultdict(list)
        order = []
        for r in rows:
            if panel_key(r) != panel:
                continue
            # Batched problems are a series of their own: their size mixes batch count and shape.
            name = r["kernel"] + (" (batched)" if r["batch"] > 1 else "")
            if name not in series:
                order.append(name)
            series[name].append(r)
        for kernel in order:
            pts = sorted(series[kernel], key=work)
            xs = [work(r) ** (1 / 3) for r in pts]
            ys = [r["tflops"] for r in pts]
            baseline = kernel.startswith("cublas.")
            style = ("k:" if "(batched)" in kernel else "k--") if baseline else "-"
            ax.plot(xs, ys, style, marker="o", label=kernel + (" (reference)" if baseline else ""),
                    linewidth=2.5 if baseline else 1.5)
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("size: (batch·M·N·K)^(1/3)")
        ax.set_ylabel("TFLOP/s (median)")
        ax.set_title(panel_title(panel))
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7, loc="center right")
    fig.suptitle("hgemm vs cuBLAS, same run — " + title_suffix(header))
    fig.tight_layout()
    fig.savefig(out_path, dpi=120)
    plt.close(fig)


def plot_ladder(header, rows, out_path):
    """Bars of the largest shape that has a cuda.naive row, per accumulation and types."""
    panels = sorted({panel_key(r) for r in rows if r["kernel"] == "cuda.naive"}) or [None]
    fig, axes = plt.subplots(1, len(panels), figsize=(7 * len(panels), 5), squeeze=False)
    for ax, panel in zip(axes[0], panels):
        acc_rows = [r for r in rows if panel_key(r) == panel]
        with_naive = [shape_key(r) for r in acc_rows if r["kernel"] == "cuda.naive"]
        if not with_naive:
            ax.set_visible(False)
            continue
        key = max(with_naive, key=lambda s: s[0] * s[1] * s[2] * s[3])
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
        ax.set_title(f"ladder at {shape_label(key)}, {panel_title(panel)} (labels: speed-up over naive)")
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
