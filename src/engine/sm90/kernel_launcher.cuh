// SPDX-License-Identifier: Apache-2.0
// The launch of one engine kernel template for a KernelLaunch: the instantiation for the
// operands' majors and types is picked at run time, and launched with its shared memory and
// cluster shape. Included by the kernels_*.cu translation units only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "common/launch.cuh"
#include "common/sm90/launch.h"
#include "engine/sm90/launch.h"

namespace hgemm::detail::engine {

/// The __global__ entry of every engine kernel: K::run does the work.
template <typename K>
__global__ void __launch_bounds__(K::kThreads, 1)
    engine_kernel(KernelParams p, const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                  const __grid_constant__ CUtensorMap map_d) {
  K::run(p, map_a, map_b, map_d);
}

/// Calls f(TypeTag<KernelT<A_MN, B_MN, Acc, In>>{}) for the launch's majors and types: f16 inputs
/// with f16 or f32 accumulators, bf16 inputs with f32 ones. F16_ACCUM = false: a kernel built for
/// f32 accumulators only (the policy never asks it for f16 ones).
template <template <bool, bool, typename, typename> class KernelT, bool F16_ACCUM = true, typename F>
Status with_kernel(const KernelLaunch& l, F&& f) {
  auto majors = [&](auto acc, auto in) {
    using Acc = typename decltype(acc)::type;
    using In = typename decltype(in)::type;
    if (!l.a_mn)
      return l.b_mn ? f(TypeTag<KernelT<false, true, Acc, In>>{}) : f(TypeTag<KernelT<false, false, Acc, In>>{});
    return l.b_mn ? f(TypeTag<KernelT<true, true, Acc, In>>{}) : f(TypeTag<KernelT<true, false, Acc, In>>{});
  };
  if constexpr (F16_ACCUM) {
    if (l.accum == Accum::F16) return majors(TypeTag<__half>{}, TypeTag<__half>{});
  } else if (l.accum == Accum::F16) {
    return Status::UnsupportedAccum;
  }
  if (l.in == DataType::BF16) return majors(TypeTag<float>{}, TypeTag<__nv_bfloat16>{});
  return majors(TypeTag<float>{}, TypeTag<__half>{});
}

/// Launches the instantiation of KernelT for l on l.grid CTAs in clusters of l.cluster
/// (F16_ACCUM: as with_kernel).
template <template <bool, bool, typename, typename> class KernelT, bool F16_ACCUM = true>
Status launch_kernel_template(const KernelLaunch& l, std::string* message) {
  return with_kernel<KernelT, F16_ACCUM>(l, [&](auto tag) {
    using K = typename decltype(tag)::type;
    const void* fn = reinterpret_cast<const void*>(&engine_kernel<K>);
    if (Status s = sm90::set_smem_limit(fn, K::kSmemBytes, message); s != Status::Success) return s;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(l.grid);
    config.blockDim = dim3(K::kThreads);
    config.dynamicSmemBytes = K::kSmemBytes;
    config.stream = l.stream;
    cudaLaunchAttribute cluster[1] = {sm90::cluster_dims(l.cluster)};
    if (l.cluster > 1) {
      config.attrs = cluster;
      config.numAttrs = 1;
    }
    if (cudaError_t err = cudaLaunchKernelEx(&config, &engine_kernel<K>, l.params, l.map_a, l.map_b, l.map_d);
        err != cudaSuccess) {
      cudaGetLastError();
      *message = std::string("kernel launch failed: ") + cudaGetErrorString(err);
      return Status::CudaError;
    }
    return launch_status(message);
  });
}

}  // namespace hgemm::detail::engine
