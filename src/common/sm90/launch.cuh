// Launch side shared by the sm90 rungs: the kernel template is instantiated for the problem's
// operand majors (the wgmma transpose bits) and accumulator, K = 0 becomes C = beta·C, the
// operands' tensor maps are encoded, and the kernel is launched with its dynamic shared memory
// (and, for cluster kernels, its cluster shape).
#pragma once

#include <cuda.h>

#include <type_traits>

#include "common/launch.cuh"
#include "common/sm90/host.h"

namespace hgemm::detail::sm90 {

/// The __global__ entry of every sm90 kernel: K::run does the work (kernels cannot be members).
template <typename K>
__global__ void __launch_bounds__(K::kThreads, 1)
    kernel_entry(Problem p, const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b,
                 const __grid_constant__ CUtensorMap map_c, EpilogueMode mode) {
  K::run(p, map_a, map_b, map_c, mode);
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

/// Launches kernel_entry<KernelT<…>>(p, maps of A, B, C, epilogue mode) with KernelT<…>::kThreads threads and
/// kSmemBytes of shared memory; `plan(kernel, smem, &mode, workspace)` returns the grid size
/// and may turn on split-K in `mode` (taking its partial sums from `workspace`) (0: error, with
/// `message` set). A kernel whose kClusterSize > 1 runs in clusters of that many CTAs along x, and
/// so does a plan that sets mode.cluster_splits > 1 (cluster split-K) in clusters of that many.
template <template <bool, bool, typename> class KernelT, typename Plan>
Status launch_kernel(const Problem& p, TileShape shape, cudaStream_t stream, std::string* message, Plan plan) {
  if (p.k == 0) return scale_c(p, stream, message);
  StreamWorkspace workspace(stream);
  OperandMaps maps{};
  EpilogueMode mode;
  if (Status s = encode_operand_maps(p, shape, workspace, stream, &maps, &mode, message); s != Status::Success)
    return s;
  return dispatch_kernel<KernelT>(p, [&](auto tag) {
    using K = typename decltype(tag)::type;
    const void* fn = reinterpret_cast<const void*>(&kernel_entry<K>);
    if (Status s = set_smem_limit(fn, K::kSmemBytes, message); s != Status::Success) return s;
    const unsigned blocks = plan(fn, K::kSmemBytes, &mode, workspace);
    if (blocks == 0) return Status::CudaError;
    cudaLaunchConfig_t config{};
    config.gridDim = dim3(blocks);
    config.blockDim = dim3(K::kThreads);
    config.dynamicSmemBytes = K::kSmemBytes;
    config.stream = stream;
    const int cluster_size = mode.cluster_splits > 1 ? mode.cluster_splits : K::kClusterSize;
    cudaLaunchAttribute cluster[1] = {cluster_dims(cluster_size)};
    if (cluster_size > 1) {
      config.attrs = cluster;
      config.numAttrs = 1;
    }
    if (cudaError_t err = cudaLaunchKernelEx(&config, &kernel_entry<K>, p, maps.a, maps.b, maps.c, mode); err != cudaSuccess) {
      cudaGetLastError();
      *message = std::string("kernel launch failed: ") + cudaGetErrorString(err);
      return Status::CudaError;
    }
    if (Status s = launch_status(message); s != Status::Success) return s;
    return mode.partials ? reduce_splits(p, mode, stream, message) : Status::Success;
  });
}

/// One CTA per BM×BN tile of C (the non-persistent rungs).
template <int BM, int BN>
auto one_block_per_tile(const Problem& p, std::string* message) {
  return [&p, message](const void*, int, EpilogueMode*, StreamWorkspace&) -> unsigned {
    dim3 grid;
    return tile_grid<BM, BN>(p, &grid, message) == Status::Success ? grid.x : 0u;
  };
}

}  // namespace hgemm::detail::sm90
