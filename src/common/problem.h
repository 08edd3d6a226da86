// SPDX-License-Identifier: Apache-2.0
// The problem every kernel receives: one validated GEMM call, with op flags and sizes already
// checked by src/api/. Plain data, usable on host and device (passed to kernels by value).
#pragma once

#include <cstdint>

#include "hgemm/hgemm.h"

namespace hgemm::detail {

struct Problem {
  std::int64_t m = 0, n = 0, k = 0;
  Op op_a = Op::N, op_b = Op::N;
  float alpha = 1.f, beta = 0.f;
  const __half* a = nullptr;
  std::int64_t lda = 0;
  const __half* b = nullptr;
  std::int64_t ldb = 0;
  __half* c = nullptr;
  std::int64_t ldc = 0;
  Accum accum = Accum::F32;
};

}  // namespace hgemm::detail
