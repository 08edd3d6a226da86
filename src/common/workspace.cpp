// SPDX-License-Identifier: Apache-2.0
#include "common/workspace.h"

#include <cstdint>
#include <map>
#include <mutex>

#include "common/capture.h"

namespace hgemm::detail {
namespace {

std::mutex g_mutex;
std::map<int, cudaMemPool_t> g_pools;  // one per device ordinal

Status pool_of_current_device(cudaMemPool_t* pool, std::string* message) {
  int device = 0;
  if (cudaError_t err = cudaGetDevice(&device); err != cudaSuccess) {
    *message = std::string("cudaGetDevice: ") + cudaGetErrorString(err);
    return Status::CudaError;
  }
  std::lock_guard<std::mutex> lock(g_mutex);
  auto it = g_pools.find(device);
  if (it != g_pools.end()) {
    *pool = it->second;
    return Status::Success;
  }
  cudaMemPoolProps props{};
  props.allocType = cudaMemAllocationTypePinned;
  props.location.type = cudaMemLocationTypeDevice;
  props.location.id = device;
  cudaMemPool_t created = nullptr;
  // The first call may come while this thread captures a CUDA graph, which forbids creating a
  // pool: relaxed for these two calls (they touch no stream).
  const cudaError_t err = [&] {
    const RelaxedCapture relaxed;
    const cudaError_t created_err = cudaMemPoolCreate(&created, &props);
    std::uint64_t keep_all = UINT64_MAX;
    if (created_err == cudaSuccess) cudaMemPoolSetAttribute(created, cudaMemPoolAttrReleaseThreshold, &keep_all);
    return created_err;
  }();
  if (err != cudaSuccess) {
    *message = std::string("cudaMemPoolCreate: ") + cudaGetErrorString(err);
    return Status::CudaError;
  }
  *pool = g_pools[device] = created;
  return Status::Success;
}

}  // namespace

Status StreamWorkspace::allocate(std::size_t bytes, void** out, std::string* message) {
  cudaMemPool_t pool = nullptr;
  if (Status s = pool_of_current_device(&pool, message); s != Status::Success) return s;
  if (cudaError_t err = cudaMallocFromPoolAsync(out, bytes, pool, stream_); err != cudaSuccess) {
    cudaGetLastError();
    *message = "workspace of " + std::to_string(bytes) + " bytes: " + cudaGetErrorString(err);
    return Status::CudaError;
  }
  blocks_.push_back(*out);
  return Status::Success;
}

StreamWorkspace::~StreamWorkspace() {
  for (void* p : blocks_) cudaFreeAsync(p, stream_);
}

}  // namespace hgemm::detail

namespace hgemm {

Status release_workspace() {
  std::lock_guard<std::mutex> lock(detail::g_mutex);
  for (auto& [device, pool] : detail::g_pools) {
    if (cudaMemPoolTrimTo(pool, 0) != cudaSuccess) {
      cudaGetLastError();
      return Status::CudaError;
    }
  }
  return Status::Success;
}

}  // namespace hgemm
