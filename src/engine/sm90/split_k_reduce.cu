// SPDX-License-Identifier: Apache-2.0
#include "engine/sm90/split_k_reduce.h"

#include "common/launch.cuh"
#include "engine/sm90/stores.cuh"

namespace hgemm::detail::engine {
namespace {

// The sum of element i's partial sums, in split order: deterministic.
__device__ __forceinline__ float reduce_element(const float* partials, int splits, std::int64_t slice, std::int64_t i) {
  float sum = 0.f;
#pragma unroll 4
  for (int s = 0; s < splits; ++s) sum += partials[s * slice + i];
  return sum;
}

__device__ __forceinline__ void wait_for_gemm() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 900
  asm volatile("griddepcontrol.wait;" ::: "memory");  // launched early (PDL): wait for the GEMM's sums
#endif
}

// One thread per element of D (every product of the batch); consecutive threads read consecutive
// sums and write consecutive elements of a row.
__global__ void reduce_splits_kernel(KernelParams p) {
  wait_for_gemm();
  const std::int64_t matrix = p.m * p.n, slice = matrix * p.batch;
  for (std::int64_t i = blockIdx.x * std::int64_t(blockDim.x) + threadIdx.x; i < slice;
       i += std::int64_t(gridDim.x) * blockDim.x) {
    const std::int64_t e = i % matrix;
    store_element(p.out.of_product(static_cast<int>(i / matrix)), e / p.n, e % p.n,
                  reduce_element(p.partials, p.splits, slice, i));
  }
}

// p ran the swapped problem: its element (r, c) is D(c, r). A 32×32 block of sums is read along
// p's rows and written along D's rows, through shared memory, so that both sides are coalesced.
constexpr int kTransposeTile = 32, kTransposeRows = 8;  // block: 32 × 8 threads
__global__ void reduce_splits_transposed_kernel(KernelParams p) {
  __shared__ float tile[kTransposeTile][kTransposeTile + 1];  // +1: column reads hit 32 banks
  wait_for_gemm();
  const std::int64_t slice = p.m * p.n * p.batch, first = p.m * p.n * blockIdx.z;  // product blockIdx.z
  const Output out = p.out.of_product(static_cast<int>(blockIdx.z));
  const std::int64_t r0 = static_cast<std::int64_t>(blockIdx.x) * kTransposeTile;
  const std::int64_t c0 = static_cast<std::int64_t>(blockIdx.y) * kTransposeTile;
  const int tx = threadIdx.x, ty = threadIdx.y;
  for (int j = ty; j < kTransposeTile; j += kTransposeRows)
    if (r0 + j < p.m && c0 + tx < p.n)
      tile[j][tx] = reduce_element(p.partials, p.splits, slice, first + (r0 + j) * p.n + c0 + tx);
  __syncthreads();
  for (int j = ty; j < kTransposeTile; j += kTransposeRows)  // D's row c0 + j, columns r0 + tx
    if (c0 + j < p.n && r0 + tx < p.m) store_element(out, c0 + j, r0 + tx, tile[tx][j]);
}

// The swapped problem with few columns (D's rows, at most kFewColumns): a block takes kFewRows
// rows of p, one thread per element, reads their sums in p's order into shared memory and writes
// them along D's rows, so that both sides are coalesced and every thread has work (the 32×32
// tiles above would leave most threads idle; measured: docs/ladder.md#split-k).
constexpr int kFewColumns = 16, kFewRows = 64;
__global__ void reduce_splits_columns_kernel(KernelParams p) {
  __shared__ float tile[kFewColumns][kFewRows + 1];
  wait_for_gemm();
  const std::int64_t slice = p.m * p.n * p.batch, r0 = static_cast<std::int64_t>(blockIdx.x) * kFewRows;
  const std::int64_t first = p.m * p.n * blockIdx.y;  // product blockIdx.y
  const Output out = p.out.of_product(static_cast<int>(blockIdx.y));
  const int cols = static_cast<int>(p.n), rows = static_cast<int>(p.m - r0 < kFewRows ? p.m - r0 : kFewRows);
  if (cols == 1) {  // D's one row is p's one column: nothing to transpose
    for (int e = threadIdx.x; e < rows; e += blockDim.x)
      store_element(out, 0, r0 + e, reduce_element(p.partials, p.splits, slice, first + r0 + e));
    return;
  }
  for (int e = threadIdx.x; e < rows * cols; e += blockDim.x)  // p's row-major order
    tile[e % cols][e / cols] = reduce_element(p.partials, p.splits, slice, first + r0 * cols + e);
  __syncthreads();
  for (int e = threadIdx.x; e < rows * cols; e += blockDim.x)  // D's row e / rows, columns r0 + e % rows
    store_element(out, e / rows, r0 + e % rows, tile[e / rows][e % rows]);
}

// Many splits over few elements (a tiny C with a long K): each block sums 32 consecutive elements
// (in p's order), its 8 warps taking every 8th split, then adds the 8 warps' sums in warp order
// (deterministic).
constexpr int kSplitWarps = 8;
__global__ void reduce_many_splits_kernel(KernelParams p, bool transposed) {
  __shared__ float sums[kSplitWarps][32];
  wait_for_gemm();
  const std::int64_t slice = p.m * p.n * p.batch, i = std::int64_t(blockIdx.x) * 32 + threadIdx.x;
  const int warp = threadIdx.y;
  float sum = 0.f;
  if (i < slice) {
#pragma unroll 4
    for (int s = warp; s < p.splits; s += kSplitWarps) sum += p.partials[s * slice + i];
  }
  sums[warp][threadIdx.x] = sum;
  __syncthreads();
  if (warp != 0 || i >= slice) return;
  float total = 0.f;
#pragma unroll
  for (int w = 0; w < kSplitWarps; ++w) total += sums[w][threadIdx.x];
  const std::int64_t e = i % (p.m * p.n), r = e / p.n, c = e % p.n;
  store_element(p.out.of_product(static_cast<int>(i / (p.m * p.n))), transposed ? c : r, transposed ? r : c, total);
}

// A grid-stride grid of 256-thread blocks for `items` elements.
unsigned elementwise_grid(std::int64_t items) {
  const std::int64_t blocks = (items + 255) / 256;
  return static_cast<unsigned>(blocks < 65535 * 16 ? (blocks > 0 ? blocks : 1) : 65535 * 16);
}

}  // namespace

Status reduce_splits(const KernelParams& p, bool transposed, cudaStream_t stream, std::string* message) {
  // Programmatic dependent launch: the reduction is launched while the GEMM kernel drains and
  // waits in griddepcontrol.wait for its results, hiding one launch latency.
  cudaLaunchConfig_t config{};
  config.stream = stream;
  cudaLaunchAttribute early[1];
  early[0].id = cudaLaunchAttributeProgrammaticStreamSerialization;
  early[0].val.programmaticStreamSerializationAllowed = 1;
  config.attrs = early;
  config.numAttrs = 1;
  cudaError_t err;
  if (p.splits > kSplitWarps) {
    config.gridDim = dim3(static_cast<unsigned>((p.m * p.n * p.batch + 31) / 32));
    config.blockDim = dim3(32, kSplitWarps);
    err = cudaLaunchKernelEx(&config, reduce_many_splits_kernel, p, transposed);
  } else if (transposed && p.n <= kFewColumns) {
    config.gridDim = dim3(static_cast<unsigned>((p.m + kFewRows - 1) / kFewRows), static_cast<unsigned>(p.batch));
    config.blockDim = dim3(static_cast<unsigned>(kFewRows * p.n));
    err = cudaLaunchKernelEx(&config, reduce_splits_columns_kernel, p);
  } else if (transposed) {
    config.gridDim = dim3(static_cast<unsigned>((p.m + kTransposeTile - 1) / kTransposeTile),
                          static_cast<unsigned>((p.n + kTransposeTile - 1) / kTransposeTile), static_cast<unsigned>(p.batch));
    config.blockDim = dim3(kTransposeTile, kTransposeRows);
    err = cudaLaunchKernelEx(&config, reduce_splits_transposed_kernel, p);
  } else {
    config.gridDim = dim3(elementwise_grid(p.m * p.n * p.batch));
    config.blockDim = dim3(256);
    err = cudaLaunchKernelEx(&config, reduce_splits_kernel, p);
  }
  if (err != cudaSuccess) {
    cudaGetLastError();
    *message = std::string("split-K reduction launch failed: ") + cudaGetErrorString(err);
    return Status::CudaError;
  }
  return launch_status(message);
}

}  // namespace hgemm::detail::engine
