// SPDX-License-Identifier: Apache-2.0
// The launch of an sm90 ladder rung: the kernel template is instantiated for the problem's
// operand majors (the wgmma transpose bits) and accumulator, K = 0 becomes C = beta·C, the
// operands' tensor maps are encoded, and the kernel is launched with its dynamic shared memory
// (and, for cluster kernels, its cluster shape) on the grid the rung asks for.
#pragma once

#include <cuda.h>

#include "common/launch.cuh"
#include "common/sm90/launch.h"

namespace hgemm::detail::sm90 {

/// The __global__ entry of every sm90 rung: K::run does the work (kernels cannot be members).
template <typename K>
__global__ void __launch_bounds__(K::kThreads, 1)
    ladder_kernel(Problem p, const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                  const __grid_constant__ CUtensorMap map_c, bool c_by_tma) {
  K::run(p, map_a, map_b, map_c, c_by_tma);
}

/// Calls f(TypeTag<KernelT<A_MN, B_MN, Acc>>{}) for the problem's operand majors and accumulator.
template <template <bool, bool, typename> class KernelT, typename F>
Status dispatch_kernel(const Problem& p, F&& f) {
  return dispatch_accum(p, [&](auto acc) {
    using Acc = typename decltype(acc)::type;
    if (!a_mn_major(p))
      return b_mn_major(p) ? f(TypeTag<KernelT<false, true, Acc>>{}) : f(TypeTag<KernelT<false, false, Acc>>{});
    return b_mn_major(p) ? f(TypeTag<KernelT<true, true, Acc>>{}) : f(TypeTag<KernelT<true, false, Acc>>{});
  });
}

/// Launches ladder_kernel<KernelT<…>> on `grid` CTAs (in clusters of KernelT's kClusterSize)
/// with its kThreads threads and kSmemBytes of shared memory.
template <template <bool, bool, typename> class KernelT>
Status launch_ladder(const Problem& p, TileShape shape, unsigned grid, cudaStream_t stream, std::string* message) {
  if (p.k == 0) return scale_c(p, stream, message);
  StreamWorkspace workspace(stream);
  OperandMaps maps{};
  if (Status s = encode_ladder_maps(p, shape, workspace, stream, &maps, message); s != Status::Success) return s;
  return dispatch_kernel<KernelT>(p, [&](auto tag) {
    using K = typename decltype(tag)::type;
    const void* fn = reinterpret_cast<const void*>(&ladder_kernel<K>);
    if (Status s = set_smem_limit(fn, K::kSmemBytes, message); s != Status::Success) return s;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(grid);
    config.blockDim = dim3(K::kThreads);
    config.dynamicSmemBytes = K::kSmemBytes;
    config.stream = stream;
    cudaLaunchAttribute cluster[1] = {cluster_dims(K::kClusterSize)};
    if (K::kClusterSize > 1) {
      config.attrs = cluster;
      config.numAttrs = 1;
    }
    if (cudaError_t err = cudaLaunchKernelEx(&config, &ladder_kernel<K>, p, maps.a, maps.b, maps.c, maps.c_by_tma);
        err != cudaSuccess) {
      cudaGetLastError();
      *message = std::string("kernel launch failed: ") + cudaGetErrorString(err);
      return Status::CudaError;
    }
    return launch_status(message);
  });
}

}  // namespace hgemm::detail::sm90
