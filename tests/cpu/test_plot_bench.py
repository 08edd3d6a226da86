# SPDX-License-Identifier: Apache-2.0
"""Renders the benchmark charts from a small JSON fixture and checks that real PNGs come out.
Usage: test_plot_bench.py PLOT_SCRIPT FIXTURE OUT_DIR. Exit code 77 (ctest: skipped) without matplotlib."""
import os
import subprocess
import sys

try:
    import matplotlib  # noqa: F401
except ImportError:
    print("matplotlib is not installed (pip install matplotlib): skipping")
    sys.exit(77)

script, fixture, out_dir = sys.argv[1:4]
for name in ("tflops_vs_size.png", "ladder.png"):
    path = os.path.join(out_dir, name)
    if os.path.exists(path):
        os.remove(path)
subprocess.run([sys.executable, script, fixture, "--out-dir", out_dir], check=True)
for name in ("tflops_vs_size.png", "ladder.png"):
    path = os.path.join(out_dir, name)
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path} is not a PNG"
    assert len(data) > 10000, f"{path} is suspiciously small ({len(data)} bytes)"
print("ok")
