# SPDX-License-Identifier: Apache-2.0
"""The A/B verdict of scripts/ab_compare.py on hand-made hgemm-bench JSON: medians over rounds,
both JSON schemas, the per-row tolerance, the geomean rule, failed and missing rows.
Usage: test_ab_compare.py AB_COMPARE_SCRIPT WORK_DIR."""
import json
import os
import subprocess
import sys

script, work = sys.argv[1:3]
os.makedirs(work, exist_ok=True)


def schema1(name, ratios):
    """A file of the build before the engine: single f16 products, speed as pct_cublas."""
    rows = []
    for (m, n, k), r in ratios.items():
        rows.append({"kernel": "auto", "m": m, "n": n, "k": k, "ld": 0, "op": "nt", "accum": "f32", "ok": True,
                     "pct_cublas": 100.0 * r, "median_ms": 1.0})
        rows.append({"kernel": "cublas.acc32", "m": m, "n": n, "k": k, "ld": 0, "op": "nt", "accum": "f32",
                     "ok": True, "pct_cublas": 100.0, "median_ms": r})
    return write(name, rows)


def schema2(name, ratios, failed=()):
    rows = []
    for (m, n, k), r in ratios.items():
        rows.append({"kernel": "auto", "m": m, "n": n, "k": k, "ld": 0, "op": "nt", "accum": "f32", "dtype": "f16",
                     "out_dtype": "f16", "batch": 1, "groups": 0, "epilogue": "none", "ok": (m, n, k) not in failed,
                     "vs_baseline": r, "baseline": "cublas.acc32"})
    return write(name, rows)


def write(name, rows):
    path = os.path.join(work, name)
    with open(path, "w") as f:
        json.dump({"header": {}, "rows": rows}, f)
    return path


def run(before, after, *extra):
    out = os.path.join(work, "result.json")
    if os.path.exists(out):
        os.remove(out)
    p = subprocess.run([sys.executable, script, "--before", *before, "--after", *after, "--json", out, *extra],
                       capture_output=True, text=True)
    result = json.load(open(out)) if os.path.exists(out) else None
    return p.returncode, result, p.stdout + p.stderr


A, B, C = (1, 4096, 4096), (1000, 1000, 1000), (4096, 4096, 4096)
# The before side's three rounds: B's middle round is an outlier the median drops.
before = [schema1("b1.json", {A: 1.10, B: 0.80, C: 1.00}), schema1("b2.json", {A: 1.12, B: 1.30, C: 1.01}),
          schema1("b3.json", {A: 1.11, B: 0.80, C: 1.02})]

# Within 2% on every row, geomean higher: the bar holds.
rc, res, log = run(before, [schema2("a1.json", {A: 1.10, B: 0.80, C: 1.03})])
assert rc == 0 and res["holds"], log
assert res["compared"] == 3 and abs(res["geomean_before"] - (1.11 * 0.80 * 1.01) ** (1 / 3)) < 1e-9, res
row_b = next(r for r in res["rows"] if r["shape"].startswith("1000x1000x1000"))
assert abs(row_b["before"] - 0.80) < 1e-12 and row_b["within"], row_b  # the median, not the mean

# One row 3% behind: the bar fails on that row, whatever the geomean.
rc, res, log = run(before, [schema2("a2.json", {A: 1.11 * 0.97, B: 0.90, C: 1.01})])
assert rc == 1 and not res["holds"], log
assert [s.split()[0] for s in res["outside_tolerance"]] == ["1x4096x4096"], res["outside_tolerance"]
assert res["geomean_after"] > res["geomean_before"], res

# Every row 1.5% behind: inside the tolerance, but the geomean is lower.
rc, res, log = run(before, [schema2("a3.json", {A: 1.11 * 0.985, B: 0.80 * 0.985, C: 1.01 * 0.985})])
assert rc == 1 and not res["outside_tolerance"] and res["geomean_after"] < res["geomean_before"], log
# A looser tolerance does not excuse the geomean either.
rc, res, log = run(before, [schema2("a3.json", {A: 1.11 * 0.985, B: 0.80 * 0.985, C: 1.01 * 0.985})],
                   "--tolerance", "0.05")
assert rc == 1, log

# A row that failed its check in any round, or is missing on one side, fails the bar.
rc, res, log = run(before, [schema2("a4.json", {A: 1.2, B: 0.9, C: 1.1}), schema2("a5.json", {A: 1.2, B: 0.9, C: 1.1}, failed=(B,))])
assert rc == 1 and any(s.startswith("1000x1000x1000") for s in res["outside_tolerance"]), log
rc, res, log = run(before, [schema2("a6.json", {A: 1.2, C: 1.1})])
assert rc == 1 and any(s.startswith("1000x1000x1000") for s in res["outside_tolerance"]), log

# No rows of the kernel asked for: bad input.
rc, res, log = run(before, [schema2("a1.json", {A: 1.10, B: 0.80, C: 1.03})], "--kernel", "engine.sm90")
assert rc == 2 and res is None, log
print("ok")
