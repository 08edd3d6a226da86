#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
"""fold_results.py ARCHIVE FILE...: moves result files into one JSON archive, keyed by file name
(JSON files as objects, others as text), and deletes them, so that bench/results keeps one
canonical file per suite. `python3 scripts/fold_results.py --extract ARCHIVE NAME` prints one."""
import json
import os
import sys


def main(argv):
    if argv and argv[0] == "--extract":
        entry = json.load(open(argv[1]))[argv[2]]
        print(entry if isinstance(entry, str) else json.dumps(entry, indent=1))
        return 0
    archive, files = argv[0], argv[1:]
    folded = json.load(open(archive)) if os.path.exists(archive) else {}
    for path in files:
        text = open(path).read()
        folded[os.path.basename(path)] = json.loads(text) if path.endswith(".json") else text
    with open(archive, "w") as f:
        json.dump(dict(sorted(folded.items())), f, indent=1)
        f.write("\n")
    for path in files:
        os.remove(path)
    print(f"{archive}: {len(folded)} files")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
