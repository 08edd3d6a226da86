// SPDX-License-Identifier: Apache-2.0
#include "common/occupancy.h"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>
#include <utility>

namespace hgemm::detail {

int sm_count() {
  static std::mutex mutex;
  static std::map<int, int> cache;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return cudaGetLastError(), 0;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(device); it != cache.end()) return it->second;
  int sms = 0;
  if (cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device) != cudaSuccess) return cudaGetLastError(), 0;
  return cache[device] = sms;
}

int resident_blocks(const void* kernel, int threads, std::size_t smem_bytes) {
  static std::mutex mutex;
  static std::map<std::pair<const void*, int>, int> cache;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return cudaGetLastError(), 0;
  const int sms = sm_count();
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find({kernel, device}); it != cache.end()) return it->second;
  int per_sm = 0;
  if (cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, threads, smem_bytes) != cudaSuccess)
    return cudaGetLastError(), 0;
  return cache[{kernel, device}] = per_sm * sms;
}

}  // namespace hgemm::detail
