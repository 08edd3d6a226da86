// SPDX-License-Identifier: Apache-2.0
// The grouped problem the engine receives: one validated grouped_matmul call (the public
// GroupedMatmulArgs, checked by src/api/grouped.cpp) and its accumulation. Plain data, host side.
#pragma once

#include "hgemm/hgemm.h"

namespace hgemm::detail {

struct GroupedMatmul : GroupedMatmulArgs {
  Accum accum = Accum::F32;

  bool masked() const { return layout == GroupedLayout::Masked; }
  bool k_grouped() const { return layout == GroupedLayout::KGrouped; }
  /// Whether D is one matrix per group (masked, K-grouped), stride_d apart.
  bool d_per_group() const { return layout != GroupedLayout::Contiguous; }
  /// The group sizes on the device: offsets or m_valid.
  const std::int32_t* sizes() const { return masked() ? m_valid : offsets; }
  /// Whether any element of D can be written.
  bool d_used() const { return groups > 0 && m > 0 && n > 0; }
};

}  // namespace hgemm::detail
