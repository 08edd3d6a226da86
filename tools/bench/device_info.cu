// SPDX-License-Identifier: Apache-2.0
#include "device_info.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <array>
#include <cstdio>
#include <ctime>
#include <memory>
#include <stdexcept>
#include <string>

#include "device_data.h"

namespace hgemm::bench {

namespace {

std::string run_command(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return "";
  std::string out;
  std::array<char, 256> buf{};
  while (fgets(buf.data(), buf.size(), pipe.get())) out += buf.data();
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string pci_bus_id() {
  int dev = 0;
  char id[32] = {0};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetPCIBusId(id, sizeof id, dev) != cudaSuccess) return "0";
  return id;
}

}  // namespace

int current_sm_clock_mhz() {
  const std::string s =
      run_command("nvidia-smi --query-gpu=clocks.sm --format=csv,noheader,nounits -i " + pci_bus_id() + " 2>/dev/null");
  try {
    return s.empty() ? 0 : std::stoi(s);
  } catch (const std::exception&) {
    return 0;
  }
}

bool device_available(std::string* why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    *why = err != cudaSuccess ? std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err)
                              : "cudaGetDeviceCount reports 0 devices";
    cudaGetLastError();
    return false;
  }
  return true;
}

Header describe_device() {
  Header h;
  int dev = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  h.gpu = prop.name;
  h.compute_capability = prop.major * 10 + prop.minor;
  h.sm_count = prop.multiProcessorCount;
  h.l2_bytes = prop.l2CacheSize;
  int khz = 0;
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev);
  h.sm_clock_max_mhz = khz / 1000;
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  const std::string smi_driver =
      run_command("nvidia-smi --query-gpu=driver_version --format=csv,noheader -i " + pci_bus_id() + " 2>/dev/null");
  h.driver = (smi_driver.empty() ? std::string() : smi_driver + " ") + "(CUDA " + std::to_string(drv / 1000) + "." +
             std::to_string(drv % 1000 / 10) + ")";
  h.cuda_runtime = std::to_string(rt / 1000) + "." + std::to_string(rt % 1000 / 10);
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  h.cublas = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  h.date = date;
  return h;
}

}  // namespace hgemm::bench
