#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""scripts/spdx.py [--check]: the SPDX license line at the top of every tracked source file.

Without --check it adds the line where it is missing (after a #! line); with --check it lists
the files without one and exits 1 if there are any (a ctest runs it; 77, skipped, outside a git
checkout)."""
import pathlib
import subprocess
import sys

TAG = "SPDX-License-Identifier: Apache-2.0"
SLASH = {".cpp", ".h", ".cu", ".cuh"}
HASH = {".py", ".sh", ".cmake", ".toml", ".in"}
HASH_NAMES = {"CMakeLists.txt", "Makefile"}


def comment_of(path: pathlib.Path):
    if path.suffix in SLASH:
        return "// "
    if path.suffix in HASH or path.name in HASH_NAMES or path.as_posix() == ".ci/run":
        return "# "
    return None


def main() -> int:
    root = pathlib.Path(__file__).resolve().parent.parent
    listed = subprocess.run(["git", "ls-files"], cwd=root, capture_output=True, text=True)
    if listed.returncode != 0:  # not a git checkout (an sdist): nothing to list
        print("spdx: not a git checkout, skipped")
        return 77
    files = listed.stdout.split()
    missing = []
    for name in files:
        path = pathlib.Path(name)
        comment = comment_of(path)
        if comment is None or not (root / path).is_file():
            continue
        text = (root / path).read_text()
        if TAG in "\n".join(text.split("\n")[:3]):
            continue
        missing.append(name)
        if "--check" not in sys.argv:
            lines = text.split("\n")
            lines.insert(1 if lines and lines[0].startswith("#!") else 0, comment + TAG)
            (root / path).write_text("\n".join(lines))
    if "--check" in sys.argv:
        for name in missing:
            print(f"no SPDX line in its first three lines: {name}")
        return 1 if missing else 0
    print(f"added the SPDX line to {len(missing)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main())
