// SPDX-License-Identifier: Apache-2.0
// The kernel table: one KernelEntry per registered kernel. Tests, the benchmark and "auto" all
// iterate over it, so a kernel is tested and benchmarked the moment it is listed here.
#pragma once

#include <cuda_runtime_api.h>

#include <string>
#include <vector>

#include "common/matmul.h"
#include "common/problem.h"
#include "hgemm/hgemm.h"

namespace hgemm::detail {

namespace engine {
struct Plan;
}  // namespace engine

/// A ladder entry's launch: an f16 problem, C updated in place (C = alpha·op(A)·op(B) + beta·C),
/// on `stream`. The problem satisfies every requirement of the entry's KernelInfo. Returns the
/// status of the launch; `message` gets details on failure.
using LaunchFn = Status (*)(const Problem& p, cudaStream_t stream, std::string* message);

/// A typed entry's launch (cuBLAS): the whole typed problem, batch included.
using MatmulFn = Status (*)(const Matmul& p, cudaStream_t stream, std::string* message);

/// An engine entry's launch: the whole typed problem with the plan the dispatch made for it
/// (src/dispatch/), carried out as it is. The plan is made once, where the entry is chosen, so
/// the entry never plans and the plan a test pins is the plan that runs.
using PlannedFn = Status (*)(const engine::Plan& plan, const Matmul& p, cudaStream_t stream, std::string* message);

/// An optional extra test beyond the KernelInfo fields (e.g. a size limit or a build option);
/// returns Success, or the reason the problem cannot run with `why` filled.
using ExtraCheckFn = Status (*)(const Matmul& p, std::string* why);

/// One kernel of the table: a ladder entry has `launch`, a typed entry `run`, an engine entry
/// `run_plan`. Which entry runs, and an engine entry's plan, is decided in src/dispatch/,
/// nowhere else.
struct KernelEntry {
  KernelInfo info;
  LaunchFn launch = nullptr;
  ExtraCheckFn extra_check = nullptr;
  MatmulFn run = nullptr;
  /// Applies MatmulArgs::epilogue itself; other entries run only under `auto`, which follows
  /// them with the elementwise epilogue pass.
  bool fuses_epilogue = false;
  PlannedFn run_plan = nullptr;
};

/// All entries, in ladder order within each family.
const std::vector<const KernelEntry*>& registry();

/// The entry with this id, or nullptr.
const KernelEntry* find_kernel(const std::string& id);

/// Whether `entry` can run `p` on a device of compute capability `cc`: op, accumulation, types,
/// alignment (of every product of a batch), architecture and the entry's extra check. Returns
/// Success or the reason. Reads no memory and calls no CUDA function.
Status check_supported(const KernelEntry& entry, const Matmul& p, int cc, std::string* why);

/// Product `p` (batch = 1, all types f16) as the ladder's in-place problem, C being D.
Problem ladder_problem(const Matmul& p);

// Each kernel file defines one accessor; registry.cpp lists them in ladder order.
const KernelEntry& entry_cuda_naive();
const KernelEntry& entry_cuda_sliced_k();
const KernelEntry& entry_cuda_t8x8_f16x4();
const KernelEntry& entry_cuda_t8x8_f16x4_pack();
const KernelEntry& entry_cuda_t8x8_f16x4_bcf();
const KernelEntry& entry_cuda_t8x8_f16x8_pack_bcf();
const KernelEntry& entry_cuda_t8x8_f16x8_pack_bcf_dbuf();
const KernelEntry& entry_cuda_t8x8_hfma2();
const KernelEntry& entry_wmma_m16n16k16_naive();
const KernelEntry& entry_wmma_m16n16k16_mma4x2_warp2x4();
const KernelEntry& entry_wmma_m16n16k16_stages();
const KernelEntry& entry_mma_m16n8k16_naive();
const KernelEntry& entry_mma_m16n8k16_mma2x4_warp4x4();
const KernelEntry& entry_mma_m16n8k16_stages();
const KernelEntry& entry_mma_m16n8k16_stages_swizzle();
const KernelEntry& entry_skinny_m16_mma_nt();
const KernelEntry& entry_sm90_wgmma_tma();
const KernelEntry& entry_sm90_wgmma_tma_ws();
const KernelEntry& entry_sm90_wgmma_tma_ws_persistent();
const KernelEntry& entry_engine_sm90();
const KernelEntry& entry_engine_sm90_pingpong();
const KernelEntry& entry_cublas_acc16();
const KernelEntry& entry_cublas_acc32();

}  // namespace hgemm::detail
