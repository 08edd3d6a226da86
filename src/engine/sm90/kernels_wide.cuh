// SPDX-License-Identifier: Apache-2.0
// The Wide configuration, shared by its two units (kernels_wide.cu, kernels_wide_stream_k.cu).
#pragma once

#include "engine/sm90/kernel_launcher.cuh"
#include "engine/sm90/persistent.cuh"

namespace hgemm::detail::engine {

using Wide = Persistent<256, 2, 4, false>;
static_assert(config_matches<Wide>(KernelShape::Wide), "kKernelShapes describes Wide");

}  // namespace hgemm::detail::engine
