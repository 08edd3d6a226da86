#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""check_wheel.py WHEEL [SDIST]: fails (exit 1) when the wheel carries what only a C++ install
needs (static library, headers, CMake files), more than one hgemm-bench, or more than 20 MB, or
when either archive lacks the license files."""
import os
import sys
import tarfile
import zipfile

LIMIT = 20 * 1024 * 1024


def check_wheel(path):
    errors = []
    with zipfile.ZipFile(path) as z:
        names = z.namelist()
    with zipfile.ZipFile(path) as z:
        size = sum(i.file_size for i in z.infolist())


    on_disk = os.path.getsize(path)
    if on_disk > LIMIT:
        errors.append(f"{path} is {on_disk / 2**20:.1f} MB, over 20 MB")
    if not any(n.startswith("hgemm/_hgemm.") for n in names):
        errors.append("no hgemm/_hgemm module")
    extra = [n for n in names if n.endswith((".a", ".h", ".cmake")) or n.startswith(("lib/", "include/"))]
    if extra:
        errors.append(f"carries files for C++ users: {extra[:5]}")
    bench = [n for n in names if n.endswith("/hgemm-bench")]
    if len(bench) > 1:
        errors.append(f"hgemm-bench more than once: {bench}")
    for want in ("LICENSE", "NOTICE"):
        if not any(n.endswith(f".dist-info/licenses/{want}") for n in names):
            errors.append(f"no {want} in the wheel's dist-info")
    print(f"{path}: {on_disk / 2**20:.1f} MB, {len(names)} files ({size / 2**20:.1f} MB unpacked)")
    return errors


def check_sdist(path):
    with tarfile.open(path) as t:
        names = {n.split("/", 1)[1] for n in t.getnames() if "/" in n}
    errors = [f"{path} lacks {w}" for w in ("LICENSE", "NOTICE", "pyproject.toml", "CMakeLists.txt") if w not in names]
    built = sorted(n for n in names if n.startswith(("build/", "bench/out/")))
    if built:
        errors.append(f"{path} carries build outputs: {built[:5]}")
    print(f"{path}: {len(names)} entries")
    return errors


def main(argv):
    errors = check_wheel(argv[0])
    if len(argv) > 1:
        errors += check_sdist(argv[1])
    for e in errors:
        print("check_wheel:", e, file=sys.stderr)
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
