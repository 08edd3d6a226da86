// SPDX-License-Identifier: Apache-2.0
// The launch of one engine kernel template for a KernelLaunch: the instantiation for the
// operands' majors and types is picked at run time, and launched with its shared memory and
// cluster shape. Included by the kernels_*.cu translation units only.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <string>
#include <type_traits>

#include "common/launch.cuh"
#include "common/sm90/launch.h"
#include "engine/sm90/launch.h"

namespace hgemm::detail::engine {

/// Whether kernel K stores aux by TMA (K::kStoresAuxByTma), and so takes aux's map.
template <typename K, typename = void>
struct StoresAuxByTma : std::false_type {};
template <typename K>
struct StoresAuxByTma<K, std::enable_if_t<K::kStoresAuxByTma>> : std::true_type {};

/// The __global__ entry of every engine kernel: K::run does the work.
template <typename K>
__global__ void __launch_bounds__(K::kThreads, 1)
    engine_kernel(KernelParams p, const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                  const __grid_constant__ CUtensorMap map_d, const __grid_constant__ CUtensorMap map_aux) {
  if constexpr (StoresAuxByTma<K>::value)
    K::run(p, map_a, map_b, map_d, &map_aux);
  else
    K::run(p, map_a, map_b, map_d);
}

// The instantiations this build compiles (CMake's HGEMM_ENGINE_SUBSET, for quick builds): a bit
// per operand majors, 2·A_MN + B_MN, and one per accumulator and input pair (kTypes*). A full
// build has them all.
#ifndef HGEMM_ENGINE_MAJORS
#define HGEMM_ENGINE_MAJORS 0xF
#endif
#ifndef HGEMM_ENGINE_TYPES
#define HGEMM_ENGINE_TYPES 0x7
#endif
constexpr unsigned kTypesF16Acc16 = 1, kTypesF16 = 2, kTypesBF16 = 4;
constexpr bool majors_compiled(bool a_mn, bool b_mn) { return (HGEMM_ENGINE_MAJORS >> (2 * a_mn + b_mn)) & 1u; }
constexpr bool types_compiled(unsigned types) { return (HGEMM_ENGINE_TYPES & types) != 0; }

/// The status and message of a launch whose instantiation the build's subset leaves out.
inline Status left_out_of_subset(Status s, const std::string& what, std::string* message) {
  *message = "this build compiles the engine's kernels for part of the problems only (HGEMM_ENGINE_SUBSET), "
             "not for " + what;
  return s;
}

/// Calls f(TypeTag<KernelT<A_MN, B_MN, Acc, In>>{}) for the launch's majors and types: f16 inputs
/// with f16 or f32 accumulators, bf16 inputs with f32 ones. F16_ACCUM = false: a kernel built for
/// f32 accumulators only (the policy never asks it for f16 ones). Only the instantiations of the
/// build's subset are compiled; a launch of another fails with a message.
template <template <bool, bool, typename, typename> class KernelT, bool F16_ACCUM = true, typename F>
Status with_kernel(const KernelLaunch& l, std::string* message, F&& f) {
  auto majors = [&](auto acc, auto in, auto types) -> Status {
    using Acc = typename decltype(acc)::type;
    using In = typename decltype(in)::type;
    if constexpr (!types_compiled(decltype(types)::value)) {
      return left_out_of_subset(Status::UnsupportedType, "these input and accumulator types", message);
    } else {
      auto one = [&](auto a_mn, auto b_mn) -> Status {
        if constexpr (majors_compiled(decltype(a_mn)::value, decltype(b_mn)::value))
          return f(TypeTag<KernelT<decltype(a_mn)::value, decltype(b_mn)::value, Acc, In>>{});
        else
          return left_out_of_subset(Status::UnsupportedOp, std::string("A stored ") + (l.a_mn ? "MN" : "K") +
                                                               "-major and B " + (l.b_mn ? "MN" : "K") + "-major",
                                    message);
      };
      using Yes = std::true_type;
      using No = std::false_type;
      if (!l.a_mn) return l.b_mn ? one(No{}, Yes{}) : one(No{}, No{});
      return l.b_mn ? one(Yes{}, Yes{}) : one(Yes{}, No{});
    }
  };
  using F16Acc16 = std::integral_constant<unsigned, kTypesF16Acc16>;
  using F16 = std::integral_constant<unsigned, kTypesF16>;
  using BF16 = std::integral_constant<unsigned, kTypesBF16>;
  if constexpr (F16_ACCUM) {
    if (l.accum == Accum::F16) return majors(TypeTag<__half>{}, TypeTag<__half>{}, F16Acc16{});
  } else if (l.accum == Accum::F16) {
    return Status::UnsupportedAccum;
  }
  if (l.in == DataType::BF16) return majors(TypeTag<float>{}, TypeTag<__nv_bfloat16>{}, BF16{});
  return majors(TypeTag<float>{}, TypeTag<__half>{}, F16{});
}

/// Launches the instantiation of KernelT for l on l.grid CTAs in clusters of l.cluster
/// (F16_ACCUM: as with_kernel).
template <template <bool, bool, typename, typename> class KernelT, bool F16_ACCUM = true>
Status launch_kernel_template(const KernelLaunch& l, std::string* message) {
  return with_kernel<KernelT, F16_ACCUM>(l, message, [&](auto tag) {
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
    if (cudaError_t err = cudaLaunchKernelEx(&config, &engine_kernel<K>, l.params, l.map_a, l.map_b, l.map_d, l.map_aux);
        err != cudaSuccess) {
      cudaGetLastError();
      *message = std::string("kernel launch failed: ") + cudaGetErrorString(err);
      return Status::CudaError;
    }
    return launch_status(message);
  });
}

}  // namespace hgemm::detail::engine
