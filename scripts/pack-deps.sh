#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# Copies the Debian packages the build needs (GoogleTest, nlohmann-json, CLI11: headers, static
# libraries, CMake package files) into .deps/ (git-ignored), for a machine that has the CUDA
# toolkit and CMake but cannot install packages, such as a lent GPU machine without network.
# scripts/gpu-check.sh adds .deps/usr to CMAKE_PREFIX_PATH when it exists.
set -euo pipefail
cd "$(dirname "$0")/.."
rm -rf .deps
for pkg in libgtest-dev libgmock-dev nlohmann-json3-dev libcli11-dev; do
  dpkg -L "$pkg" | grep -v '^/usr/share/doc' | while read -r f; do
    if [ -f "$f" ]; then install -D -m 644 "$f" ".deps$f"; fi
  done
done
du -sh .deps
