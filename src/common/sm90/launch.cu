// SPDX-License-Identifier: Apache-2.0
#include "common/sm90/launch.h"

#include <climits>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>
#include <tuple>

#include "common/convert.h"
#include "common/launch.cuh"
#include "common/sm90/c_chunk.cuh"
#include "common/sm90/tensor_maps.h"
#include "common/workspace.h"

namespace hgemm::detail::sm90 {

Status supports(const Matmul& p, std::string* why) {
#ifndef HGEMM_HAS_SM90A
  if (p.m >= 0) {  // always; keeps the code below reachable for the compiler
    *why = "this build of hgemm has no sm_90a code (add 90a to HGEMM_CUDA_ARCHS)";
    return Status::UnsupportedArch;
  }
#endif
  // TMA coordinates are 32-bit signed, its strides below 2^40 bytes; tile counts fit an int.
  const std::int64_t limit = INT_MAX - 512;
  if (p.m > limit || p.n > limit || p.k > limit || ((p.m + 127) / 128) * ((p.n + 127) / 128) > INT_MAX) {
    *why = "the sm90 kernels need M, N, K below 2^31 - 512 and fewer than 2^31 tiles of 128x128";
    return Status::ProblemTooLarge;
  }
  if (p.lda > (std::int64_t(1) << 38) || p.ldb > (std::int64_t(1) << 38)) {
    *why = "the sm90 kernels need lda and ldb below 2^38";
    return Status::ProblemTooLarge;
  }
  // A batch is a dimension of the tensor maps: strides below 2^40 bytes, products counted in int.
  const std::int64_t most = std::int64_t(1) << 37;
  if (p.batch > INT_MAX / 2 || (p.batch > 1 && (p.stride_a > most || p.stride_b > most || p.stride_d > most)) ||
      ((p.m + 127) / 128) * ((p.n + 127) / 128) * p.batch > INT_MAX) {
    *why = "the sm90 kernels need batch strides below 2^37 elements and fewer than 2^31 tiles in a batch";
    return Status::ProblemTooLarge;
  }
  return Status::Success;
}

Status encode_ladder_maps(const Problem& p, TileShape shape, StreamWorkspace& workspace, cudaStream_t stream,
                          OperandMaps* maps, std::string* message) {
  // TMA stores clip a ragged N only to whole 16-byte units (measured: N = 127 with ldc = 128
  // wrote column 127 of every row), so N must be a multiple of 8 too.
  maps->c_by_tma = shape.c_tma_store && p.beta == 0.f && tma_readable(p.c, p.ldc) && p.n % 8 == 0;
  if (maps->c_by_tma)
    if (Status s = encode_store_map(&maps->c, p.c, DataType::F16, p.n, p.m, p.ldc, kCChunkCols, kCStoreRows, message);
        s != Status::Success)
      return s;
  StoredOperand a{p.a, DataType::F16, p.lda, a_mn_major(p) ? p.k : p.m, a_mn_major(p) ? p.m : p.k};
  StoredOperand b{p.b, DataType::F16, p.ldb, b_mn_major(p) ? p.k : p.n, b_mn_major(p) ? p.n : p.k};
  if (Status s = make_tma_readable(&a, &b, workspace, stream, message); s != Status::Success) return s;
  if (Status s = encode_operand_map(&maps->a, a, a_mn_major(p), shape.bm, message); s != Status::Success) return s;
  return encode_operand_map(&maps->b, b, b_mn_major(p), shape.bn / shape.b_parts, message);
}

Status scale_c(const Problem& p, cudaStream_t stream, std::string* message) {
  const TypedMatrices c{p.c, DataType::F16, p.ldc, 0};
  return scale_matrices(c, p.beta, c, p.m, p.n, 1, stream, message);
}

Status set_smem_limit(const void* kernel, int bytes, std::string* message) {
  static std::mutex mutex;
  static std::set<std::tuple<const void*, int, int>> allowed;  // (kernel, device, bytes) already set
  int device = 0;
  cudaGetDevice(&device);
  const auto key = std::make_tuple(kernel, device, bytes);
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (allowed.count(key)) return Status::Success;
  }
  if (cudaError_t err = cudaFuncSetAttribute(kernel, cudaFuncAttributeMaxDynamicSharedMemorySize, bytes);
      err != cudaSuccess) {
    cudaGetLastError();
    *message = "cannot allow " + std::to_string(bytes) + " bytes of shared memory: " + cudaGetErrorString(err);
    return Status::CudaError;
  }
  std::lock_guard<std::mutex> lock(mutex);
  allowed.insert(key);
  return Status::Success;
}

cudaLaunchAttribute cluster_dims(int cluster) {
  cudaLaunchAttribute attr{};
  attr.id = cudaLaunchAttributeClusterDimension;
  attr.val.clusterDim.x = cluster;
  attr.val.clusterDim.y = 1;
  attr.val.clusterDim.z = 1;
  return attr;
}

unsigned resident_clusters(const void* kernel, int threads, int smem_bytes, int cluster, std::string* message) {
  static std::mutex mutex;
  static std::map<std::tuple<const void*, int, int>, unsigned> cache;  // (kernel, device, cluster)
  int device = 0;
  cudaGetDevice(&device);
  std::lock_guard<std::mutex> lock(mutex);
  const std::string cannot = "cannot place a cluster of " + std::to_string(cluster) + " CTAs: ";
  auto it = cache.find({kernel, device, cluster});
  if (it != cache.end()) {
    if (it->second == 0) *message = cannot + "occupancy is 0";
    return it->second;
  }
  cudaLaunchConfig_t config{};
  config.gridDim = dim3(cluster);
  config.blockDim = dim3(threads);
  config.dynamicSmemBytes = smem_bytes;
  cudaLaunchAttribute attr[1] = {cluster_dims(cluster)};
  config.attrs = attr;
  config.numAttrs = 1;
  int clusters = 0;
  if (cudaError_t err = cudaOccupancyMaxActiveClusters(&clusters, kernel, &config); err != cudaSuccess || clusters < 1) {
    cudaGetLastError();
    *message = cannot + (err != cudaSuccess ? cudaGetErrorString(err) : "occupancy is 0");
    if (err == cudaSuccess) cache[{kernel, device, cluster}] = 0;  // asked again, the answer is the same
    return 0;
  }
  return cache[{kernel, device, cluster}] = static_cast<unsigned>(clusters);
}

}  // namespace hgemm::detail::sm90
