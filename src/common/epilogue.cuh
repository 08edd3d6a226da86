// SPDX-License-Identifier: Apache-2.0
// The epilogue: C = alpha·acc + beta·C for N consecutive elements of one row, computed in
// float and rounded once to half. beta = 0 never reads C. Ragged rows/columns are skipped.
#pragma once

#include "common/accum.cuh"
#include "common/problem.h"
#include "common/vec.cuh"

namespace hgemm::detail {

template <int N, typename Acc>
__device__ __forceinline__ void store_c_segment(__half* c, std::int64_t valid, const Acc* acc, float alpha,
                                                float beta) {
  if (valid <= 0) return;
  Halves<N> old;
  if (beta != 0.f) old = load_halves<N>(c, valid);
  Halves<N> out;
#pragma unroll
  for (int i = 0; i < N; ++i) {
    float v = alpha * to_float(acc[i]);
    if (beta != 0.f) v = fmaf(beta, __half2float(old.h[i]), v);
    out.h[i] = __float2half_rn(v);
  }
  store_halves<N>(c, out, valid);
}

/// Writes acc[0..N) to C(row, col..col+N) of the problem, skipping what lies outside C.
template <int N, typename Acc>
__device__ __forceinline__ void store_c(const Problem& p, std::int64_t row, std::int64_t col, const Acc* acc) {
  if (row >= p.m) return;
  store_c_segment<N>(p.c + row * p.ldc + col, p.n - col, acc, p.alpha, p.beta);
}

}  // namespace hgemm::detail
