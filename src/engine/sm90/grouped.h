// SPDX-License-Identifier: Apache-2.0
// The engine's grouped launches (mixture-of-experts layouts, sizes on the device): what the
// kernel receives, its plan and its launch. The scheduler is grouped_schedule.h, the kernel
// grouped.cuh, its instantiations kernels_grouped.cu (128×128) and kernels_grouped_wide.cu (128×256).
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "common/device.h"
#include "common/grouped_matmul.h"
#include "engine/sm90/launch.h"
#include "engine/sm90/params.h"
#include "engine/sm90/plan.h"

namespace hgemm::detail::engine {

/// The grouped kernels' tiles: 128 rows (two consumer warpgroups) by 128 or 256 columns, single
/// CTAs. The 128-wide kernel has a 5-slot ring and room in shared memory for the table of up to
/// kMaxGroupedGroups; the 256-wide one, which reads half the shared memory per MAC, has 4 slots,
/// one staging buffer per consumer and a table of up to kGroupedWideMaxGroups.
constexpr int kGroupedBM = 128, kGroupedNarrowBN = 128, kGroupedWideBN = 256;
constexpr int kGroupedWideMaxGroups = 2048;

struct GroupedParams {
  std::int64_t n = 0, k = 0;
  int bound = 0;      ///< what the sizes are clamped to: M (contiguous: rows of A and D; masked: rows per group) or K
  int rows_each = 0;  ///< K-grouped: M, the rows of every group
  int groups = 0;
  GroupedLayout layout = GroupedLayout::Contiguous;
  const std::int32_t* sizes = nullptr;  ///< offsets or m_valid, device memory
  int a_steps = 1, b_steps = 1;         ///< whether A (masked) and B step with the group (0: one shared matrix)
  Output out;  ///< D, alpha and D's type; stride_d between masked or K-grouped groups (m is set per group)

  HGEMM_HOST_DEVICE bool masked() const { return layout == GroupedLayout::Masked; }
  HGEMM_HOST_DEVICE bool k_grouped() const { return layout == GroupedLayout::KGrouped; }
};

/// The plan of a grouped problem: the grid is the SMs, or fewer when the sizes cannot make
/// that many units (grouped_units_bound); the store path by D's type (staged rows for 16-bit D,
/// registers for f32: both clip at a group's last row).
Plan make_grouped_plan(const GroupedMatmul& p, const Device& d, const EngineChoice& choice);

/// Launch the 128×128 (kernels_grouped.cu) and 128×256 (kernels_grouped_wide.cu) grouped kernels
/// for l's operand majors and types.
Status launch_grouped_narrow(const KernelLaunch& l, const GroupedParams& p, std::string* message);
Status launch_grouped_wide(const KernelLaunch& l, const GroupedParams& p, std::string* message);

/// Runs p as `plan` says on `stream` (nothing when the plan's grid is 0).
Status launch_grouped(const Plan& plan, const GroupedMatmul& p, cudaStream_t stream, std::string* message);

}  // namespace hgemm::detail::engine
