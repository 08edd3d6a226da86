// SPDX-License-Identifier: Apache-2.0
#include "common/device.h"

#include <cuda_runtime_api.h>

#include <map>
#include <mutex>

namespace hgemm::detail {
namespace {

// A kernel that needs a whole SM (all of its shared memory) and a block as large as the engine's,
// for asking the runtime how many clusters of each size fit at once. Never launched.
constexpr int kProbeThreads = 384;
__global__ void __launch_bounds__(kProbeThreads, 1) whole_sm_probe() {}

void read_cluster_occupancy(int device, Device* d) {
  int smem = 0;
  if (cudaDeviceGetAttribute(&smem, cudaDevAttrMaxSharedMemoryPerBlockOptin, device) != cudaSuccess ||
      cudaFuncSetAttribute(whole_sm_probe, cudaFuncAttributeMaxDynamicSharedMemorySize, smem) != cudaSuccess) {
    cudaGetLastError();
    return;
  }
  for (int n = 1; n <= 8; ++n) {
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(n);
    config.blockDim = dim3(kProbeThreads);
    config.dynamicSmemBytes = static_cast<std::size_t>(smem);
    cudaLaunchAttribute attr{};
    attr.id = cudaLaunchAttributeClusterDimension;
    attr.val.clusterDim.x = n, attr.val.clusterDim.y = 1, attr.val.clusterDim.z = 1;
    config.attrs = &attr;
    config.numAttrs = 1;
    int clusters = 0;
    if (cudaOccupancyMaxActiveClusters(&clusters, whole_sm_probe, &config) != cudaSuccess) {
      cudaGetLastError();
      clusters = 0;
    }
    d->clusters[n] = clusters;
  }
}

}  // namespace

Status current_device(Device* out, std::string* message) {
  int device = 0, count = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    *message = std::string("no usable CUDA device: ") + (err != cudaSuccess ? cudaGetErrorString(err) : "device count is 0");
    return Status::NoDevice;
  }
  static std::mutex mutex;
  static std::map<int, Device> cache;
  std::lock_guard<std::mutex> lock(mutex);
  if (auto it = cache.find(device); it != cache.end()) {
    *out = it->second;
    return Status::Success;
  }
  cudaDeviceProp prop{};
  if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
    cudaGetLastError();
    *message = "cannot read the properties of device " + std::to_string(device);
    return Status::NoDevice;
  }
  Device d;
  d.name = prop.name;
  d.cc = prop.major * 10 + prop.minor;
  d.sms = prop.multiProcessorCount;
#ifdef HGEMM_HAS_SM90A
  d.sm90a_code = d.cc == 90;
#endif
  if (d.cc >= 90) read_cluster_occupancy(device, &d);
  *out = cache[device] = d;
  return Status::Success;
}

Device described_h200() {
  Device d;
  d.name = "NVIDIA H200 (described)";
  d.cc = 90, d.sms = 132, d.sm90a_code = true;
  const int clusters[9] = {0, 132, 66, 39, 30, 22, 17, 15, 15};  // read on an H200 by ApiGpu.DescribesTheDevice
  for (int n = 0; n <= 8; ++n) d.clusters[n] = clusters[n];
  return d;
}

Device described_a100() {
  Device d;
  d.name = "NVIDIA A100 (described)";
  d.cc = 80, d.sms = 108;
  return d;
}

Device described_l4() {
  Device d;
  d.name = "NVIDIA L4 (described)";
  d.cc = 89, d.sms = 58;
  return d;
}

}  // namespace hgemm::detail
