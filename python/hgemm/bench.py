# SPDX-License-Identifier: Apache-2.0
"""python -m hgemm.bench [hgemm-bench options]: runs the C++ benchmark that ships with the package
(or the one named by $HGEMM_BENCH, or hgemm-bench on PATH), e.g.

    python -m hgemm.bench --kernels 'cuda.*' --shapes 4096x4096x4096 --json out.json
"""
import os
import shutil
import subprocess
import sys


def executable():
    here = os.path.join(os.path.dirname(__file__), "bin", "hgemm-bench")
    for candidate in (os.environ.get("HGEMM_BENCH"), here, shutil.which("hgemm-bench")):
        if candidate and os.path.exists(candidate):
            return candidate
    raise FileNotFoundError("hgemm-bench not found: reinstall hgemm, or set HGEMM_BENCH")


def main(argv=None):
    return subprocess.call([executable()] + list(sys.argv[1:] if argv is None else argv))


if __name__ == "__main__":
    sys.exit(main())
