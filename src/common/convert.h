// SPDX-License-Identifier: Apache-2.0
// Elementwise passes over typed matrices: D = scale·S converted between f16, bf16 and f32 (the
// whole GEMM when K = 0, and the copies the cuBLAS fallback needs around its in-place update),
// and the fused epilogue as a pass of its own (K = 0, and kernels that do not fuse it).
#pragma once

#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "common/fused_epilogue.h"
#include "hgemm/hgemm.h"

namespace hgemm::detail {

/// A batch of row-major matrices of one type: matrix i at element offset i·stride from ptr.
struct TypedMatrices {
  const void* ptr = nullptr;
  DataType type = DataType::F16;
  std::int64_t ld = 0, stride = 0;
};

/// dst_i = scale · src_i for `batch` matrices of rows × cols, rounded once to dst's type. A null
/// src (or scale = 0) writes zeros without reading anything. Queued on `stream`.
Status scale_matrices(TypedMatrices src, float scale, TypedMatrices dst, std::int64_t rows, std::int64_t cols,
                      std::int64_t batch, cudaStream_t stream, std::string* message);

/// dst_i = epilogue(scale · src_i) for `batch` matrices of rows × cols: Z = scale·src (0 for a
/// null src or scale = 0, nothing read), then bias, aux, activation and scales as the engine's
/// epilogue applies them (common/fused_epilogue.cuh), rounded once to dst's type. src may be dst
/// (the pass after a kernel that does not fuse the epilogue). Queued on `stream`.
Status finish_matrices(TypedMatrices src, float scale, TypedMatrices dst, const FusedEpilogue& epilogue,
                       std::int64_t rows, std::int64_t cols, std::int64_t batch, cudaStream_t stream,
                       std::string* message);

}  // namespace hgemm::detail
