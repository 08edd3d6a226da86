#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/ptxas-check.sh [UNIT.cu ...] — ptxas over the Hopper engine's units, without a GPU.
# Each unit goes to sm_90a PTX (cicc, the build's flags) and through ptxas -O3 -v, all units in
# parallel; the script prints each unit's kernels, most registers, spills and stack frames, and
# fails if any kernel spills or keeps a stack frame, or a unit holds other than as many kernels
# as src/engine/sm90/instantiations.counts (the manifest's count) says. The PTX-only CI build
# never runs ptxas, so this is where a spill shows up before a GPU run. Default units: src/engine/sm90/*.cu and
# src/common/sm90/*.cu. Environment: JOBS (default nproc), NVCC (default nvcc on PATH, else
# /usr/local/cuda/bin/nvcc), PTXAS_CHECK_DIR (work folder, default a temporary one).
set -uo pipefail
cd "$(dirname "$0")/.."
NVCC=${NVCC:-$(command -v nvcc || echo /usr/local/cuda/bin/nvcc)}
PTXAS=$(dirname "$NVCC")/ptxas
[ -x "$NVCC" ] && [ -x "$PTXAS" ] || { echo "ptxas-check: nvcc and ptxas are needed (NVCC=$NVCC)" >&2; exit 2; }
JOBS=${JOBS:-$(nproc)}
WORK=${PTXAS_CHECK_DIR:-$(mktemp -d)}
mkdir -p "$WORK"
if [ $# -gt 0 ]; then units=("$@"); else units=(src/engine/sm90/*.cu src/common/sm90/*.cu); fi

# One unit: PTX, then ptxas's report (one line per kernel: registers, spills, stack).
check_unit() {
  local unit=$1 work=$2 nvcc=$3 ptxas=$4
  local name
  name=$(echo "$unit" | tr '/' '_')
  "$nvcc" -DHGEMM_HAS_SM90A=1 -DHGEMM_ENGINE_PINGPONG=1 -Iinclude -Isrc -O3 -DNDEBUG -std=c++17 --expt-relaxed-constexpr \
    -arch=compute_90a -x cu -ptx "$unit" -o "$work/$name.ptx" 2> "$work/$name.cicc" ||
    { echo "$unit: PTX failed"; cat "$work/$name.cicc"; return 1; }
  "$ptxas" -arch=sm_90a -O3 -v "$work/$name.ptx" -o /dev/null > "$work/$name.log" 2>&1 ||
    { echo "$unit: ptxas failed"; tail -5 "$work/$name.log"; return 1; }
  python3 - "$unit" "$work/$name.log" <<'EOF'
import re, sys
unit, log = sys.argv[1], open(sys.argv[2]).read()
kernels = regs = 0
bad = []
# ptxas -v: "Compiling entry function 'X'", then "N bytes stack frame, N bytes spill stores, N bytes
# spill loads" and "Used N registers" for it.
for block in log.split("Compiling entry function")[1:]:
    name = block.split("'")[1]
    kernels += 1
    m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", block)
    r = re.search(r"Used (\d+) registers", block)
    if r: regs = max(regs, int(r.group(1)))
    if m and any(int(x) for x in m.groups()):
        bad.append(f"  {name}: {m.group(1)} B stack, {m.group(2)} B spill stores, {m.group(3)} B spill loads")
print(f"{unit}: {kernels} kernels, at most {regs} registers, {len(bad)} with spills or stack")
for b in bad: print(b)
sys.exit(1 if bad else 0)
EOF
}
export -f check_unit
t0=$(date +%s)
printf '%s\n' "${units[@]}" | xargs -P "$JOBS" -I{} bash -c 'check_unit "$@"' _ {} "$WORK" "$NVCC" "$PTXAS" > "$WORK/report.txt"
rc=$?
cat "$WORK/report.txt"
# Each unit of the manifest holds as many kernels as src/engine/sm90/instantiations.counts says.
python3 - "$WORK/report.txt" src/engine/sm90/instantiations.counts <<'EOF' || rc=1
import re, sys
seen = {m.group(1).split("/")[-1]: int(m.group(2))
        for m in re.finditer(r"^(\S+\.cu): (\d+) kernels", open(sys.argv[1]).read(), re.M)}
wrong = 0
for line in open(sys.argv[2]):
    if not line.strip() or line.startswith("#"): continue
    unit, want = line.split()
    if unit in seen and seen[unit] != int(want):
        print(f"{unit}: ptxas counts {seen[unit]} kernels, instantiations.counts {want}")
        wrong += 1
sys.exit(1 if wrong else 0)
EOF
echo "ptxas-check: ${#units[@]} units in $(( $(date +%s) - t0 )) s, $JOBS jobs"
[ $rc = 0 ] || { echo "ptxas-check: FAILED (a spill, a stack frame, a failed unit or a wrong kernel count above)" >&2; exit 1; }
