#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/install-deps.sh: installs what the build and tests need on Debian/Ubuntu, only what is
# missing (no network when everything is present). apt-get as root or with passwordless sudo;
# otherwise prints the command to run and exits 1. pip falls back to --break-system-packages.
set -euo pipefail
export DEBIAN_FRONTEND=noninteractive
PATH=$PATH:/usr/local/cuda/bin
missing=()
have_pkg() { dpkg-query -W -f='${Status}' "$1" 2>/dev/null | grep -q "install ok installed"; }
cmake_ok() {
  command -v cmake >/dev/null || return 1
  local v; v=$(cmake --version | head -1 | grep -oE '[0-9]+\.[0-9]+' | head -1)
  [ "$(printf '%s\n3.24\n' "$v" | sort -V | head -1)" = 3.24 ]
}
cmake_ok || missing+=(cmake)
command -v ninja >/dev/null || missing+=(ninja-build)
command -v g++ >/dev/null || missing+=(g++)
command -v make >/dev/null || missing+=(make)
for p in libgtest-dev libgmock-dev nlohmann-json3-dev libcli11-dev python3 python3-pip; do
  have_pkg "$p" || missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  if ! command -v apt-get >/dev/null; then
    echo "install-deps: missing ${missing[*]} and no apt-get here; install them by hand" >&2; exit 1
  fi
  if [ "$(id -u)" = 0 ]; then sudo_=()
  elif command -v sudo >/dev/null && sudo -n true 2>/dev/null; then sudo_=(sudo -n)
  else
    echo "install-deps: missing ${missing[*]}; run as root:" >&2
    echo "  apt-get update && apt-get install -y ${missing[*]}" >&2
    echo "(or skip this check: make ... DEPS=0)" >&2
    exit 1
  fi
  echo "install-deps: apt-get install ${missing[*]}"
  "${sudo_[@]}" apt-get update -qq
  "${sudo_[@]}" apt-get install -y -qq "${missing[@]}" >/dev/null
fi
pip_missing=()
for m in matplotlib nanobind scikit_build_core pytest numpy; do
  python3 -c "import $m" 2>/dev/null || pip_missing+=("${m//_/-}")
done
if [ ${#pip_missing[@]} -gt 0 ]; then
  echo "install-deps: pip install ${pip_missing[*]}"
  python3 -m pip install -q "${pip_missing[@]}" 2>/dev/null ||
    python3 -m pip install -q --break-system-packages "${pip_missing[@]}"
fi
if ! command -v nvcc >/dev/null; then
  echo "install-deps: nvcc not found (PATH or /usr/local/cuda/bin): install the CUDA toolkit 12.8 or newer" >&2
  exit 1
fi
# apt may have installed a CMake older than the build needs (Ubuntu 22.04 ships 3.22): check what
# is there now, and say how to get a newer one.
if ! cmake_ok; then
  echo "install-deps: CMake $(cmake --version 2>/dev/null | head -1 | grep -oE '[0-9][0-9.]*' || echo '(none)') is" \
       "older than the 3.24 the build needs. Install a newer one from PyPI and put it first on PATH:" >&2
  echo "  python3 -m pip install 'cmake>=3.24'   # then: hash -r; cmake --version" >&2
  exit 1
fi
cuda=$(nvcc --version | grep -oE 'release [0-9]+\.[0-9]+' | grep -oE '[0-9]+\.[0-9]+')
if [ "$(printf '%s\n12.8\n' "$cuda" | sort -V | head -1)" != 12.8 ]; then
  echo "install-deps: $(command -v nvcc) is CUDA $cuda; hgemm needs 12.8 or newer (the sm_90a kernels'" \
       "PTX). Install a newer CUDA toolkit and put its bin/ first on PATH (or set CUDACXX to its nvcc)." >&2
  exit 1
fi
