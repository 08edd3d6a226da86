#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ab_compare.py --before F [F ...] --after F [F ...] [--kernel auto] [--tolerance 0.02] [--json OUT]

Compares two builds from hgemm-bench JSON written in one device call (gpu-check's `ab` step): each
row's speed is its ratio to the baseline timed in the same run (cuBLAS), so the two builds are
compared through the baseline they both ran against, not through absolute times. Several files
per side are rounds of the same command; a row's ratio is its median over them.

The verdict is the regression bar of a refactor: every row of the `after` build within TOLERANCE
of the `before` build's ratio, and the geometric mean of the ratios not lower. A row that is
missing, failed its check, or has no baseline on one side fails it too. Exit status: 0 when the
bar holds, 1 when it does not, 2 on bad input."""
import argparse
import json
import math
import statistics
import sys

# What makes two rows the same problem (fields a file may lack read as their defaults: schema 1
# rows are single f16 -> f16 products without an epilogue).
KEY_FIELDS = (("m", 0), ("n", 0), ("k", 0), ("ld", 0), ("op", "nn"), ("accum", "f32"), ("dtype", "f16"),
              ("out_dtype", "f16"), ("batch", 1), ("groups", 0), ("epilogue", "none"))


def row_key(row):
    return tuple(default if row.get(name) is None else row[name] for name, default in KEY_FIELDS)


def key_name(key):
    f = dict(zip((name for name, _ in KEY_FIELDS), key))
    shape = f"{f['m']}x{f['n']}x{f['k']}" + (f":ld{f['ld']}" if f["ld"] else "")
    shape += f"b{f['batch']}" if f["batch"] > 1 else ""
    shape += f"g{f['groups']}" if f["groups"] else ""
    extra = "" if f["epilogue"] == "none" else f" {f['epilogue']}"
    return f"{shape} {f['op']} {f['dtype']}->{f['out_dtype']} acc {f['accum']}{extra}"


def ratio_of(row):
    """The row's speed as a multiple of its same-run baseline, or None."""
    if row.get("vs_baseline") is not None:
        return float(row["vs_baseline"])
    if row.get("pct_cublas") is not None:
        return float(row["pct_cublas"]) / 100.0
    return None


def load_side(paths, kernel):
    """{key: median ratio or None} over the files of one build; None: not ok or no baseline in
    some round."""
    rounds = {}
    for path in paths:
        with open(path) as f:
            doc = json.load(f)
        for row in doc.get("rows", []):
            if row.get("kernel") != kernel:
                continue
            r = ratio_of(row) if row.get("ok", True) else None
            rounds.setdefault(row_key(row), []).append(r)
    return {k: (None if any(r is None or r <= 0 for r in rs) else statistics.median(rs)) for k, rs in rounds.items()}


def geomean(values):
    return math.exp(sum(math.log(v) for v in values) / len(values)) if values else float("nan")


def compare(before, after, tolerance):
    rows, failures = [], []
    for key in sorted(set(before) | set(after), key=key_name):
        b, a = before.get(key), after.get(key)
        change = a / b if a is not None and b is not None else None
        ok = change is not None and change >= 1.0 - tolerance
        rows.append({"shape": key_name(key), "before": b, "after": a, "after_over_before": change, "within": ok})
        if not ok:
            failures.append(key_name(key))
    both = [k for k in before if k in after and before[k] is not None and after[k] is not None]
    gb, ga = geomean([before[k] for k in both]), geomean([after[k] for k in both])
    return {
        "rows": rows,
        "compared": len(both),
        "geomean_before": gb,
        "geomean_after": ga,
        "geomean_after_over_before": ga / gb if both else float("nan"),
        "outside_tolerance": failures,
        "tolerance": tolerance,
        "holds": bool(both) and not failures and ga >= gb,
    }


def fmt(v):
    return "    -" if v is None else f"{v:6.3f}"


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[1], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--before", nargs="+", required=True, help="JSON of the build compared against (rounds)")
    ap.add_argument("--after", nargs="+", required=True, help="JSON of the build under test (rounds)")
    ap.add_argument("--kernel", default="auto", help="the kernel column to compare (default: auto)")
    ap.add_argument("--tolerance", type=float, default=0.02, help="allowed loss per row (default 0.02)")
    ap.add_argument("--json", help="also write the comparison as JSON here")
    args = ap.parse_args(argv)
    try:
        before, after = load_side(args.before, args.kernel), load_side(args.after, args.kernel)
    except (OSError, ValueError) as e:
        print(f"ab_compare: {e}", file=sys.stderr)
        return 2
    if not before or not after:
        print(f"ab_compare: no rows of kernel '{args.kernel}' on the {'before' if not before else 'after'} side",
              file=sys.stderr)
        return 2
    result = compare(before, after, args.tolerance)
    print(f"{'shape':<52} {'before':>6} {'after':>6} {'after/before':>12}")
    for r in result["rows"]:
        mark = "" if r["within"] else "  <-"
        print(f"{r['shape']:<52} {fmt(r['before'])} {fmt(r['after'])} {fmt(r['after_over_before']):>12}{mark}")
    print(f"geomean x baseline over {result['compared']} rows: before {result['geomean_before']:.3f}, after "
          f"{result['geomean_after']:.3f} ({result['geomean_after_over_before']:.3f}); "
          f"{len(result['outside_tolerance'])} rows more than {args.tolerance:.0%} behind; "
          f"bar {'holds' if result['holds'] else 'does not hold'}")
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
    return 0 if result["holds"] else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
