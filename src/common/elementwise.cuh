// SPDX-License-Identifier: Apache-2.0
// The elementwise passes' walk over the elements of a batch of row-major matrices (convert.cu,
// gate.cu); their typed loads and stores are fused_epilogue.cuh's load_typed and store_typed.
#pragma once

#include <algorithm>
#include <cstdint>

#include "common/fused_epilogue.cuh"

namespace hgemm::detail::elementwise {

// Blocks over row segments: blockIdx.x takes kSegment columns, blockIdx.y (grid-stride) a row of
// one product, consecutive threads consecutive columns. No division per element: 64-bit
// divisions would make these passes many times slower than the memory they move.
constexpr int kThreads = 256, kPerThread = 4, kSegment = kThreads * kPerThread;

template <typename F>
__device__ __forceinline__ void for_each_element(std::int64_t rows, std::int64_t cols, std::int64_t batch, F&& f) {
  const std::int64_t c0 = blockIdx.x * std::int64_t(kSegment) + threadIdx.x;
  const bool narrow = batch * rows <= 0xffffffffLL;  // 32-bit division, a third of the instructions
  for (std::int64_t row = blockIdx.y; row < batch * rows; row += gridDim.y) {
    const std::int64_t b = narrow ? static_cast<unsigned>(row) / static_cast<unsigned>(rows) : row / rows;
    const std::int64_t r = row - b * rows;
#pragma unroll 1  // f is large (the epilogue's every branch): one copy; the grid gives the parallelism
    for (int i = 0; i < kPerThread; ++i)
      if (c0 + i * kThreads < cols) f(b, r, c0 + i * kThreads);
  }
}

inline dim3 element_grid(std::int64_t rows, std::int64_t cols, std::int64_t batch) {
  return dim3(static_cast<unsigned>((cols + kSegment - 1) / kSegment),
              static_cast<unsigned>(std::min<std::int64_t>(rows * batch, 65535)));
}

}  // namespace hgemm::detail::elementwise
