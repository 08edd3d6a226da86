#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""ncu_summary.py PROFILE_CSV — one line per profiled kernel launch of an `ncu --csv` run (as
written by gpu-check's profile step): its name, grid, and each metric's value, in launch order."""
import csv
import sys
from collections import OrderedDict


def main(path: str) -> int:
    with open(path, newline="") as f:
        lines = [line for line in f if line.startswith('"')]  # ncu's CSV rows; the bench's own output is not quoted
    launches: "OrderedDict[str, dict]" = OrderedDict()
    for row in csv.DictReader(lines):
        key = row["ID"]
        entry = launches.setdefault(key, {"name": f'{row["Kernel Name"][:48]} {row.get("Grid Size", "")}', "metrics": OrderedDict()})
        entry["metrics"][row["Metric Name"]] = row["Metric Value"]
    for key, entry in launches.items():
        metrics = " ".join(f"{name.split('.')[0]}={value}" for name, value in entry["metrics"].items())
        print(f"{key:>4} {entry['name']:<60} {metrics}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
