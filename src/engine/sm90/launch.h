// SPDX-License-Identifier: Apache-2.0
// Carrying out a plan: workspace from the stream-ordered pool, operands TMA cannot read copied,
// tensor maps encoded, the planned kernel launched, split-K partial sums reduced. Mechanical:
// every decision was made in the plan.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>

#include "common/matmul.h"
#include "engine/sm90/plan.h"

namespace hgemm::detail::engine {

/// Runs p (every product of its batch, in one launch) as `plan` says, on `stream`.
Status launch(const Plan& plan, const Matmul& p, cudaStream_t stream, std::string* message);

/// One kernel launch as the per-kernel launchers (kernels_*.cu) receive it.
struct KernelLaunch {
  KernelParams params;
  CUtensorMap map_a{}, map_b{}, map_d{};
  CUtensorMap map_aux{};  ///< Plan::aux_by_tma: aux, boxed as D's map is
  bool a_mn = false, b_mn = false;  ///< the kernel's operands are stored MN-major (wgmma transpose)
  Accum accum = Accum::F32;
  DataType in = DataType::F16;      ///< A's and B's type
  unsigned grid = 0;
  int cluster = 1;
  cudaStream_t stream = nullptr;
  /// The plan's instantiation (Plan::finish, Plan::short_k): the PLAIN or FusedInRegisters
  /// instantiation of the kernel, its short-K entry.
  bool plain = false, fused_in_registers = false, short_k = false;
};

// The per-kernel launchers, one translation unit each (they compile in parallel).
Status launch_wide(const KernelLaunch& l, std::string* message);
Status launch_wide_stream_k(const KernelLaunch& l, std::string* message);
Status launch_pingpong(const KernelLaunch& l, std::string* message);
Status launch_narrow(const KernelLaunch& l, bool stream_k, std::string* message);
Status launch_skinny(const KernelLaunch& l, KernelShape shape, bool stream_k, std::string* message);
Status launch_tiles(const KernelLaunch& l, KernelShape shape, std::string* message);
Status launch_swapped_tiles(const KernelLaunch& l, KernelShape shape, std::string* message);

}  // namespace hgemm::detail::engine
