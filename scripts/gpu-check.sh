#!/usr/bin/env bash
# SPDX-License-Identifier: Apache-2.0
# scripts/gpu-check.sh [OUT_DIR] — the one command to run on a GPU machine:
#   build     configure and build (Release, every core) for the local GPU's architecture
#   test      the CPU tests, then every GPU test (each registered kernel over the full case set)
#   sanitize  compute-sanitizer memcheck and racecheck over a small-shape run of every kernel
#   bench     hgemm-bench: the ladder suite, both accumulations (and 8192³ when HGEMM_CHECK_BIG=1),
#             then --peak (HFMA2, HFMA, FFMA and mma.sync rates, the DRAM read rate)
#   sm90      hgemm-bench of the Hopper rungs and the engine against cuBLAS: 4096³, 8192³ (and 16384³ when
#             HGEMM_CHECK_BIG=1) for op nn and nt, then the llm suite (bench-sm90.json, bench-llm.json)
#   tc        hgemm-bench of the sm_80-style tensor-core ladder (wmma.*, mma.*) against cuBLAS:
#             4096³ and 8192³, op nn and nt (bench-tc-{nn,nt}.json)
#   auto      hgemm-bench --kernels auto --suite auto (op nt; HGEMM_AUTO_OPS for more): the
#             library's own choice against cuBLAS over squares, llm, skinny, ragged and odd-ld
#             shapes, with the geometric-mean ratio and the worst shape (bench-auto-<op>.json)
#   unaligned hgemm-bench of the top rung on odd sizes and leading dimensions next to their aligned
#             neighbours, op nt and nn (bench-unaligned-<op>.json)
#   types     the typed call against cuBLAS with the same types: the top kernels (HGEMM_SM90_TOP,
#             here default auto) at 4096³, 8192³ (and 16384³ when HGEMM_CHECK_BIG=1), op nt and nn, with
#             bf16 inputs to bf16 and f32 outputs and f16 inputs to an f32 output
#             (bench-types-<dtype>-<op>.json), then the llm suite in bf16 (bench-llm-bf16.json)
#   batched   the batched suite (strided batches, 4 to 1024 products) in f16 and bf16 against cuBLAS's
#             strided-batched call, op nt, for HGEMM_SM90_TOP (default auto) (bench-batched-<dtype>.json)
#   grouped   the grouped suite (MoE layers, contiguous layout, group sizes on the device) in f16 and
#             bf16, op nt, against cublasGemmGroupedBatchedEx and a loop of cuBLAS calls (bench-grouped-<dtype>.json)
#   epilogue  the fused epilogue against cuBLASLt's matching epilogue and against the unfused form
#             (the plain product, then one elementwise pass): bias, bias+relu, bias+gelu_tanh,
#             bias+gelu_tanh+aux, bias+gelu, bias+silu, on the llm suite, op nt, f16
#             and bf16 (bench-epilogue-<dtype>.json)
#   ab        the A/B of a refactor: this build and another build's hgemm-bench (HGEMM_AB_BEFORE),
#             interleaved over HGEMM_AB_ROUNDS rounds (default 3) on the auto suite (HGEMM_AUTO_OPS,
#             default "nt nn"; both accumulations, --iters 10) and on 4096³, 8192³, 16384³ (op nt),
#             then scripts/ab_compare.py on each: every row's ratio to the same-run cuBLAS against
#             the other build's, the rows more than 2% behind and the geomeans (ab-<suite>.txt).
#             The last round is kept as bench-auto-<op>.json and bench-ab-before-auto-<op>.json
#             (and bench-ab[-before]-squares-nt.json)
#   python    the Python package's tests (pytest, against torch) on the module built by 'build'
#   profile   ncu's time, DRAM and L2 counters for every GEMM kernel (ours and cuBLAS's) launched on
#             HGEMM_PROFILE_SHAPES (profile.csv, summarised in the log): where a shape's time goes
#   banks     ncu's shared-memory counters for every kernel at 2048³ (banks_ncu.csv), compared with
#             the bank model by hgemm-banks (docs/bank-conflicts.md is generated from that CSV)
# Logs and JSON go to OUT_DIR (default: $OUT, else bench/out/gpu-check); a summary is printed last.
# Environment:
#   HGEMM_CHECK_STEPS   steps to run (default "build test sanitize bench banks python"; also "sm90",
#                       "tc", "auto", "unaligned", "decode", "types", "batched", "grouped", "epilogue",
#                       "profile")
#   HGEMM_CUDA_ARCHS    architectures to compile (default: the GPU's own, 90a on an H100/H200)
#   HGEMM_BUILD_DIR     build folder (default build-gpu)
#   HGEMM_BENCH_ARGS    extra hgemm-bench arguments (e.g. --kernels 'cuda.*')
#   HGEMM_TEST_FILTER   gtest filter of the GPU test run (default: all)
#   HGEMM_TEST_TIMEOUT  seconds allowed to the GPU test run (default 900)
#   HGEMM_SANITIZE_FILTER  gtest filter of the sanitizer runs (default: every kernel family but cuBLAS;
#                       of the random cases, those of auto and the fused epilogue)
#   HGEMM_SANITIZE_TIMEOUT seconds allowed to each sanitizer run (default 300)
#   HGEMM_RESULTS_PREFIX  prefix of the canonical copies of the JSON (default: the GPU's name, last
#                       word lowercased, e.g. h200): bench-sm90-nn.json is also written as h200-sm90-nn.json
#   HGEMM_RESULTS_DIR   where to copy those canonical files too (e.g. bench/results)
#   decode    (step) auto on decode shapes (bench-decode-<op>.json)
#   HGEMM_AB_BEFORE     (step ab) the other build's hgemm-bench; HGEMM_AB_ROUNDS its rounds (default 3),
#                       HGEMM_AB_ITERS the timed launches of each shape (default 10)
set -uo pipefail
cd "$(dirname "$0")/.."
out=${1:-${OUT:-bench/out/gpu-check}}
mkdir -p "$out"
steps=${HGEMM_CHECK_STEPS:-build test sanitize bench banks python}
build=${HGEMM_BUILD_DIR:-build-gpu}
log="$out/gpu-check.log"
: >"$log"
summary=()
note() { echo "$*" | tee -a "$log"; }
want() { [[ " $steps " == *" $1 "* ]]; }

if ! nvidia-smi >>"$log" 2>&1; then
  note "gpu-check: nvidia-smi failed: no GPU here. This script is for a machine with an NVIDIA GPU."
  exit 2
fi
gpu=$(nvidia-smi --query-gpu=name,compute_cap,driver_version,clocks.max.sm,power.limit --format=csv,noheader | head -1)
note "GPU: $gpu"

if [ -z "${HGEMM_CUDA_ARCHS:-}" ]; then
  cap=$(nvidia-smi --query-gpu=compute_cap --format=csv,noheader | head -1 | tr -d '.')
  HGEMM_CUDA_ARCHS=$cap
  [ "$cap" = 90 ] && HGEMM_CUDA_ARCHS=90a  # wgmma needs the arch-specific target
fi

if want build; then
  prefix=()
  [ -d .deps/usr ] && prefix=(-DCMAKE_PREFIX_PATH="$PWD/.deps/usr")  # scripts/pack-deps.sh
  gen=()
  command -v ninja >/dev/null && gen=(-G Ninja)
  start=$(date +%s)
  # The ping-pong kernel too (off by default), so that a GPU check runs every kernel.
  if cmake -S . -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DHGEMM_CUDA_ARCHS="$HGEMM_CUDA_ARCHS" \
       -DHGEMM_ENGINE_PINGPONG=ON \
       "${prefix[@]}" >>"$log" 2>&1 &&
     cmake --build "$build" -j "$(nproc)" >>"$log" 2>&1; then
    summary+=("build: ok ($HGEMM_CUDA_ARCHS, $(( $(date +%s) - start )) s)")
  else
    summary+=("build: FAILED (see gpu-check.log)")
    tail -30 "$log"
  fi
  grep -i "spill" "$log" | grep -v " 0 bytes spill" | sort -u | head -5 | while read -r l; do note "spill: $l"; done
fi

gtest_result() {  # summary of a gtest log: passed / failed / skipped counts
  local f=$1
  local passed failed skipped
  passed=$(grep -oE '\[  PASSED  \] [0-9]+' "$f" | grep -oE '[0-9]+' | tail -1)
  failed=$(grep -oE '[0-9]+ FAILED TESTS?' "$f" | grep -oE '[0-9]+' | tail -1)
  skipped=$(grep -oE '\[  SKIPPED \] [0-9]+' "$f" | grep -oE '[0-9]+' | tail -1)
  echo "passed ${passed:-0}, failed ${failed:-0}, skipped ${skipped:-0}"
}

if want test; then
  start=$(date +%s)
  cpu_log=$(mktemp)
  "$build/tests/hgemm_cpu_tests" --gtest_brief=1 >"$cpu_log" 2>&1
  rc_cpu=$?
  summary+=("cpu tests: rc $rc_cpu, $(gtest_result "$cpu_log")")
  cat "$cpu_log" >>"$log"
  # Not brief: after a hang (killed by the timeout) the log's last line names the test.
  timeout "${HGEMM_TEST_TIMEOUT:-900}" "$build/tests/hgemm_gpu_tests" --gtest_filter="${HGEMM_TEST_FILTER:-*}" \
    >"$out/gpu_tests.log" 2>&1
  rc=$?
  summary+=("gpu tests: rc $rc, $(gtest_result "$out/gpu_tests.log"), $(( $(date +%s) - start )) s")
  grep -E "FAILED|Failure|error" "$out/gpu_tests.log" | head -40
fi

if want sanitize; then
  filter=${HGEMM_SANITIZE_FILTER:-*:-Cublas/*:Random/RaggedShapes*:ApiGpu.OffsetsBeyond2To31:ApiGpu.ThreadsCanCallConcurrently}
  for tool in memcheck racecheck; do
    start=$(date +%s)
    HGEMM_TEST_MAX_DIM=260 timeout "${HGEMM_SANITIZE_TIMEOUT:-300}" compute-sanitizer --tool "$tool" --error-exitcode 99 \
      "$build/tests/hgemm_gpu_tests" --gtest_brief=1 --gtest_filter="$filter" >"$out/$tool.log" 2>&1
    rc=$?
    errors=$(grep -E "ERROR SUMMARY|RACECHECK SUMMARY" "$out/$tool.log" | tail -1)
    summary+=("$tool: rc $rc, $(gtest_result "$out/$tool.log"), ${errors:-no summary line}, $(( $(date +%s) - start )) s")
  done
fi

if want bench; then
  : >"$out/bench.txt"
  # shellcheck disable=SC2086
  "$build/tools/hgemm-bench" --suite ladder --accum both --json "$out/bench-ladder.json" ${HGEMM_BENCH_ARGS:-} \
    >>"$out/bench.txt" 2>>"$log"
  summary+=("bench ladder: rc $?")
  "$build/tools/hgemm-bench" --peak >>"$out/bench.txt" 2>>"$log"  # the roofs: FMAs, mma.sync, DRAM reads
  summary+=("bench peak: rc $?")
  if [ "${HGEMM_CHECK_BIG:-0}" = 1 ]; then
    # shellcheck disable=SC2086
    "$build/tools/hgemm-bench" --shapes 8192x8192x8192 --accum f16 --iters 10 --warmup 2 \
      --json "$out/bench-8192.json" ${HGEMM_BENCH_ARGS:-} >>"$out/bench.txt" 2>>"$log"
    summary+=("bench 8192: rc $?")
  fi
fi

if want sm90; then
  shapes=4096x4096x4096,8192x8192x8192
  [ "${HGEMM_CHECK_BIG:-0}" = 1 ] && shapes=$shapes,16384x16384x16384
  : >"$out/bench-sm90.txt"
  rm -f "$out/bench-sm90.json"
  for op in nn nt; do
    # shellcheck disable=SC2086
    timeout 300 "$build/tools/hgemm-bench" --kernels "${HGEMM_SM90_KERNELS:-sm90.*,engine.sm90}" --shapes "$shapes" --op $op --accum both \
      --json "$out/bench-sm90-$op.json" >>"$out/bench-sm90.txt" 2>>"$log"
    summary+=("bench sm90 $op: rc $?")
  done
  if [ "${HGEMM_CHECK_LLM:-1}" = 1 ]; then
    # 100 launches each: the decode shapes take 15 µs and their launches spread by 15-40% (p10-p90)
    timeout 300 "$build/tools/hgemm-bench" --kernels "${HGEMM_SM90_TOP:-engine.sm90}" --suite llm --op nt \
      --accum both --iters 100 --json "$out/bench-llm.json" >>"$out/bench-sm90.txt" 2>>"$log"
    summary+=("bench llm: rc $?")
  fi
fi

if want unaligned; then
  # Ragged shapes next to their aligned neighbours, and one shape per unaligned operand
  # (N = 4095: only C; K = 4095: A and B, not C), for the top rung (HGEMM_SM90_TOP) and auto.
  shapes=4096x4096x4096,4095x4097x4093,4095x4095x4095,4096x4096x4096:ld4099,4096x4095x4096,4096x4096x4095
  shapes=$shapes,8192x8192x8192,8191x8191x8191
  for op in ${HGEMM_UNALIGNED_OPS:-nt nn}; do
    timeout 300 "$build/tools/hgemm-bench" --kernels "${HGEMM_SM90_TOP:-engine.sm90}" --shapes "$shapes" \
      --op "$op" --accum both --json "$out/bench-unaligned-$op.json" >>"$out/bench-unaligned.txt" 2>>"$log"
    summary+=("bench unaligned $op: rc $?")
  done
  cat "$out/bench-unaligned.txt" >>"$log"
fi

if want types; then
  shapes=4096x4096x4096,8192x8192x8192
  [ "${HGEMM_CHECK_BIG:-0}" = 1 ] && shapes=$shapes,16384x16384x16384
  kernels=${HGEMM_SM90_TOP:-auto}
  : >"$out/bench-types.txt"
  for op in nt nn; do
    # bf16 to bf16 and to f32 in one run (A and B are shared), then f16 to f32.
    for types in "bf16 bf16,f32" "f16 f32"; do
      read -r dtype outs <<<"$types"
      timeout 400 "$build/tools/hgemm-bench" --kernels "$kernels" --shapes "$shapes" --op $op --dtype "$dtype" \
        --out "$outs" --accum f32 --json "$out/bench-types-$dtype-$op.json" >>"$out/bench-types.txt" 2>>"$log"
      summary+=("bench types $dtype -> $outs $op: rc $?")
    done
  done
  timeout 300 "$build/tools/hgemm-bench" --kernels "$kernels" --suite llm --op nt --dtype bf16 --out bf16 --accum f32 \
    --iters 100 --json "$out/bench-llm-bf16.json" >>"$out/bench-types.txt" 2>>"$log"
  summary+=("bench llm bf16: rc $?")
  cat "$out/bench-types.txt" >>"$log"
fi

if want batched; then
  : >"$out/bench-batched.txt"
  for dtype in f16 bf16; do
    # f16 accumulation takes f16 throughout: the bf16 run notes it and skips it.
    timeout 400 "$build/tools/hgemm-bench" --kernels "${HGEMM_SM90_TOP:-auto}" --suite batched --op nt \
      --dtype "$dtype" --out "$dtype" --accum both --json "$out/bench-batched-$dtype.json" \
      >>"$out/bench-batched.txt" 2>>"$log"
    summary+=("bench batched $dtype: rc $?")
  done
  cat "$out/bench-batched.txt" >>"$log"
fi

if want grouped; then
  : >"$out/bench-grouped.txt"
  for dtype in f16 bf16; do
    timeout 600 "$build/tools/hgemm-bench" --suite grouped --op nt --dtype "$dtype" --out "$dtype" --accum f32 \
      --json "$out/bench-grouped-$dtype.json" >>"$out/bench-grouped.txt" 2>>"$log"
    summary+=("bench grouped $dtype: rc $?")
  done
  cat "$out/bench-grouped.txt" >>"$log"
fi

if want tc; then
  for op in nn nt; do
    timeout 300 "$build/tools/hgemm-bench" --kernels 'wmma.*,mma.*' --shapes 4096x4096x4096,8192x8192x8192 --op $op \
      --accum both --json "$out/bench-tc-$op.json" >>"$out/bench.txt" 2>>"$log"
    summary+=("bench tc $op: rc $?")
  done
fi

if want auto; then
  for op in ${HGEMM_AUTO_OPS:-nt}; do
    timeout 400 "$build/tools/hgemm-bench" --kernels auto --suite auto --op "$op" --accum both \
      --json "$out/bench-auto-$op.json" >>"$out/bench.txt" 2>>"$log"
    summary+=("bench auto $op: rc $?")
  done
fi

if want ab; then
  before=${HGEMM_AB_BEFORE:-}
  if [ -z "$before" ] || [ ! -x "$before" ]; then
    summary+=("ab: skipped (HGEMM_AB_BEFORE names no executable hgemm-bench: '$before')")
  else
    mkdir -p "$out/ab"
    squares=4096x4096x4096,8192x8192x8192,16384x16384x16384
    rounds=${HGEMM_AB_ROUNDS:-3}
    ops=${HGEMM_AUTO_OPS:-nt nn}
    iters=${HGEMM_AB_ITERS:-10}
    for round in $(seq 1 "$rounds"); do  # old, new, old, new, ...: both builds see the same clocks
      for side in before after; do
        bench=$build/tools/hgemm-bench
        [ "$side" = before ] && bench=$before
        for op in $ops; do
          timeout 400 "$bench" --kernels auto --suite auto --op "$op" --accum both --iters "$iters" \
            --json "$out/ab/$side-$round-auto-$op.json" >>"$out/ab/bench.txt" 2>>"$log"
        done
        timeout 400 "$bench" --kernels auto --shapes "$squares" --op nt --accum both --iters "$iters" \
          --json "$out/ab/$side-$round-squares-nt.json" >>"$out/ab/bench.txt" 2>>"$log"
      done
    done
    for suite in $(printf 'auto-%s ' $ops) squares-nt; do
      python3 scripts/ab_compare.py --before "$out"/ab/before-*-"$suite".json --after "$out"/ab/after-*-"$suite".json \
        --json "$out/ab-$suite.json" >"$out/ab-$suite.txt" 2>>"$log"
      rc=$?
      summary+=("ab $suite: $(tail -1 "$out/ab-$suite.txt") (rc $rc)")
      [ "${suite%%-*}" = auto ] && new_name=bench-$suite.json || new_name=bench-ab-$suite.json
      cp "$out/ab/after-$rounds-$suite.json" "$out/$new_name" 2>>"$log"
      cp "$out/ab/before-$rounds-$suite.json" "$out/bench-ab-before-$suite.json" 2>>"$log"
    done
  fi
fi

if want decode; then
  shapes=1x4096x4096,8x4096x4096,16x4096x4096,32x4096x4096,1x8192x8192,16x8192x8192,16x14336x4096
  shapes=$shapes,16x4096x14336,4x14336x4096,16x1024x4096,16x28672x4096
  for op in ${HGEMM_DECODE_OPS:-nt nn}; do
    timeout 300 "$build/tools/hgemm-bench" --kernels "${HGEMM_DECODE_KERNELS:-auto}" \
      --shapes "$shapes" --op "$op" --accum both --iters 60 --json "$out/bench-decode-$op.json" >>"$out/bench.txt" 2>>"$log"
    summary+=("bench decode $op: rc $?")
  done
fi

if want profile; then
  metrics=gpu__time_duration.sum,dram__throughput.avg.pct_of_peak_sustained_elapsed,dram__bytes_read.sum
  metrics=$metrics,dram__bytes_write.sum,lts__t_sector_hit_rate.pct,sm__throughput.avg.pct_of_peak_sustained_elapsed
  metrics=$metrics,launch__grid_size,launch__block_size,launch__registers_per_thread
  # shellcheck disable=SC2086
  timeout 300 ncu --clock-control none --csv --kernel-name-base function -k 'regex:kernel|gemm|xmma|cutlass|splitK|reduce|nvjet' \
    --metrics "$metrics" "$build/tools/hgemm-bench" --kernels "${HGEMM_PROFILE_KERNELS:-auto}" \
    --shapes "${HGEMM_PROFILE_SHAPES:-64x8192x8192,128x4096x4096}" --op "${HGEMM_PROFILE_OP:-nt}" \
    --accum "${HGEMM_PROFILE_ACCUM:-f32}" --iters 2 --warmup 0 >"$out/profile.csv" 2>>"$log"
  summary+=("profile (ncu): rc $?")
  python3 scripts/ncu_summary.py "$out/profile.csv" | tee -a "$log"
fi

if want banks; then
  start=$(date +%s)
  metrics=smsp__inst_executed_op_shared_ld.sum,smsp__inst_executed_op_shared_st.sum
  metrics=$metrics,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum,l1tex__data_pipe_lsu_wavefronts_mem_shared_op_st.sum
  metrics=$metrics,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_ld.sum,l1tex__data_bank_conflicts_pipe_lsu_mem_shared_op_st.sum
  ncu --clock-control none --csv -k regex:kernel --metrics "$metrics" \
    "$build/tools/hgemm-bench" --kernels 'cuda.*' --shapes 2048x2048x2048 --accum f16 --iters 1 --warmup 0 \
    >"$out/banks_ncu.csv" 2>>"$log"
  rc=$?
  "$build/tools/hgemm-banks" --ncu-csv "$out/banks_ncu.csv" --shape 2048x2048x2048 >>"$log" 2>&1
  summary+=("banks (ncu): rc $rc, hgemm-banks rc $?, $(( $(date +%s) - start )) s")
fi

if want python; then
  start=$(date +%s)
  if [ -d "$build/python/hgemm" ]; then
    py_log=$(mktemp)
    PYTHONPATH="$PWD/$build/python" python3 -m pytest -q -s tests/python >"$py_log" 2>&1
    rc=$?
    cat "$py_log" >>"$log"
    summary+=("python: rc $rc, $(tail -1 "$py_log"), $(grep -o 'overhead [0-9.]* us' "$py_log" | head -1), $(( $(date +%s) - start )) s")
  else
    summary+=("python: not built (nanobind missing?)")
  fi
fi
if want epilogue; then
  : >"$out/bench-epilogue.txt"
  for dtype in f16 bf16; do
    files=()
    for epi in bias bias,relu bias,gelu_tanh bias,gelu_tanh,aux bias,gelu bias,silu; do
      f="$out/bench-epilogue-$dtype-${epi//,/-}.json"
      timeout 400 "$build/tools/hgemm-bench" --kernels "${HGEMM_SM90_TOP:-auto}" --suite llm \
        --op nt --dtype "$dtype" --out "$dtype" --accum f32 --epilogue "$epi" --json "$f" \
        >>"$out/bench-epilogue.txt" 2>>"$log"
      summary+=("bench epilogue $dtype $epi: rc $?")
      files+=("$f")
    done
    # One file per type: the rows of every epilogue run (each row names its epilogue and baseline).
    python3 -c 'import json,sys; fs=[json.load(open(f)) for f in sys.argv[2:]]; h=fs[0]; h["rows"]=[r for f in fs for r in f["rows"]]; json.dump(h,open(sys.argv[1],"w"),indent=2)' \
      "$out/bench-epilogue-$dtype.json" "${files[@]}" 2>>"$log" && rm -f "${files[@]}"
  done
  cat "$out/bench-epilogue.txt" >>"$log"
fi

# Canonical copies: bench-<suite>.json as <prefix>-<suite>.json (bench/results/README.md).
prefix=${HGEMM_RESULTS_PREFIX:-$(echo "$gpu" | cut -d, -f1 | awk '{print tolower($NF)}')}
for f in "$out"/bench-*.json "$out/banks_ncu.csv"; do
  [ -f "$f" ] || continue
  name=$(basename "$f"); name=${name#bench-}; [ "$name" = banks_ncu.csv ] && name=banks.csv
  cp "$f" "$out/$prefix-$name"
  if [ -n "${HGEMM_RESULTS_DIR:-}" ]; then mkdir -p "$HGEMM_RESULTS_DIR" && cp "$f" "$HGEMM_RESULTS_DIR/$prefix-$name"; fi
done

echo
[ -f "$out/bench.txt" ] && cat "$out/bench.txt"
[ -f "$out/bench-sm90.txt" ] && cat "$out/bench-sm90.txt"
[ -f "$out/bench-types.txt" ] && cat "$out/bench-types.txt"
[ -f "$out/bench-batched.txt" ] && cat "$out/bench-batched.txt"
[ -f "$out/bench-grouped.txt" ] && cat "$out/bench-grouped.txt"
[ -f "$out/bench-epilogue.txt" ] && cat "$out/bench-epilogue.txt"
echo
echo "== gpu-check summary ($gpu)"
printf '  %s\n' "${summary[@]}" | tee -a "$log"
