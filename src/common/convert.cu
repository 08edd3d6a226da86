// SPDX-License-Identifier: Apache-2.0
#include "common/convert.h"

#include "common/elementwise.cuh"
#include "common/fused_epilogue.cuh"
#include "common/launch.cuh"

namespace hgemm::detail {
namespace {

using namespace elementwise;

__global__ void scale_matrices_kernel(TypedMatrices src, float scale, TypedMatrices dst, std::int64_t rows,
                                      std::int64_t cols, std::int64_t batch) {
  const bool read = src.ptr != nullptr && scale != 0.f;
  for_each_element(rows, cols, batch, [&](std::int64_t b, std::int64_t r, std::int64_t c) {
    const float v = read ? scale * load_typed(src.ptr, src.type, b * src.stride + r * src.ld + c) : 0.f;
    store_typed(const_cast<void*>(dst.ptr), dst.type, b * dst.stride + r * dst.ld + c, v);
  });
}

__global__ void finish_matrices_kernel(TypedMatrices src, float scale, TypedMatrices dst, FusedEpilogue epi,
                                       std::int64_t rows, std::int64_t cols, std::int64_t batch) {
  const bool read = src.ptr != nullptr && scale != 0.f;
  for_each_element(rows, cols, batch, [&](std::int64_t b, std::int64_t r, std::int64_t c) {
    const float z = read ? scale * load_typed(src.ptr, src.type, b * src.stride + r * src.ld + c) : 0.f;
    store_typed(const_cast<void*>(dst.ptr), dst.type, b * dst.stride + r * dst.ld + c,
                     finish_element(epi, b, r, c, z));
  });
}

}  // namespace

Status finish_matrices(TypedMatrices src, float scale, TypedMatrices dst, const FusedEpilogue& epilogue,
                       std::int64_t rows, std::int64_t cols, std::int64_t batch, cudaStream_t stream,
                       std::string* message) {
  const std::int64_t total = rows * cols * batch;
  if (total == 0) return Status::Success;
  finish_matrices_kernel<<<element_grid(rows, cols, batch), kThreads, 0, stream>>>(src, scale, dst, epilogue, rows,
                                                                                     cols, batch);
  return launch_status(message);
}

Status scale_matrices(TypedMatrices src, float scale, TypedMatrices dst, std::int64_t rows, std::int64_t cols,
                      std::int64_t batch, cudaStream_t stream, std::string* message) {
  const std::int64_t total = rows * cols * batch;
  if (total == 0) return Status::Success;
  scale_matrices_kernel<<<element_grid(rows, cols, batch), kThreads, 0, stream>>>(src, scale, dst, rows, cols, batch);
  return launch_status(message);
}

}  // namespace hgemm::detail
