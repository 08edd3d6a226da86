#include "common/convert.h"

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <algorithm>

#include "common/fused_epilogue.cuh"
#include "common/launch.cuh"

namespace hgemm::detail {
namespace {

__device__ __forceinline__ float load_as_float(const void* base, DataType t, std::int64_t i) {
  switch (t) {
    case DataType::F16: return __half2float(static_cast<const __half*>(base)[i]);
    case DataType::BF16: return __bfloat162float(static_cast<const __nv_bfloat16*>(base)[i]);
    default: return static_cast<const float*>(base)[i];
  }
}

__device__ __forceinline__ void store_from_float(void* base, DataType t, std::int64_t i, float v) {
  switch (t) {
    case DataType::F16: static_cast<__half*>(base)[i] = __float2half_rn(v); break;
    case DataType::BF16: static_cast<__nv_bfloat16*>(base)[i] = __float2bfloat16_rn(v); break;
    default: static_cast<float*>(base)[i] = v; break;
  }
}

// Grid-stride over all batch × rows × cols elements; consecutive threads take consecutive
// columns of a row.
__global__ void scale_matrices_kernel(TypedMatrices src, float scale, TypedMatrices dst, std::int64_t rows,
                                      std::int64_t cols, std::int64_t total) {
  const bool read = src.ptr != nullptr && scale != 0.f;
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t b = e / (rows * cols), r = e / cols % rows, c = e % cols;
    const float v = read ? scale * load_as_float(src.ptr, src.type, b * src.stride + r * src.ld + c) : 0.f;
    store_from_float(const_cast<void*>(dst.ptr), dst.type, b * dst.stride + r * dst.ld + c, v);
  }
}

__global__ void finish_matrices_kernel(TypedMatrices src, float scale, TypedMatrices dst, FusedEpilogue epi,
                                       std::int64_t rows, std::int64_t cols, std::int64_t total) {
  const bool read = src.ptr != nullptr && scale != 0.f;
  for (std::int64_t e = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; e < total;
       e += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t b = e / (rows * cols), r = e / cols % rows, c = e % cols;
    const float z = read ? scale * load_as_float(src.ptr, src.type, b * src.stride + r * src.ld + c) : 0.f;
    store_from_float(const_cast<void*>(dst.ptr), dst.type, b * dst.stride + r * dst.ld + c,
                     finish_element(epi, b, r, c, z));
  }
}

}  // namespace

Status finish_matrices(TypedMatrices src, float scale, TypedMatrices dst, const FusedEpilogue& epilogue,
                       std::int64_t rows, std::int64_t cols, std::int64_t batch, cudaStream_t stream,
                       std::string* message) {
  const std::int64_t total = rows * cols * batch;
  if (total == 0) return Status::Success;
  const std::int64_t blocks = std::min<std::int64_t>((total + 255) / 256, 65535 * 8);
  finish_matrices_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(src, scale, dst, epilogue, rows, cols,
                                                                              total);
  return launch_status(message);
}

Status scale_matrices(TypedMatrices src, float scale, TypedMatrices dst, std::int64_t rows, std::int64_t cols,
                      std::int64_t batch, cudaStream_t stream, std::string* message) {
  const std::int64_t total = rows * cols * batch;
  if (total == 0) return Status::Success;
  const std::int64_t blocks = std::min<std::int64_t>((total + 255) / 256, 65535 * 8);
  scale_matrices_kernel<<<static_cast<unsigned>(blocks), 256, 0, stream>>>(src, scale, dst, rows, cols, total);
  return launch_status(message);
}

}  // namespace hgemm::detail
