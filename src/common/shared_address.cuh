// SPDX-License-Identifier: Apache-2.0
// The 32-bit shared-window address of a pointer into shared memory: the operand PTX's
// shared-memory instructions (ldmatrix, cp.async, mbarrier, TMA, wgmma descriptors) take.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>

namespace hgemm::detail {

__device__ __forceinline__ std::uint32_t shared_address(const void* p) {
  return static_cast<std::uint32_t>(__cvta_generic_to_shared(p));
}

}  // namespace hgemm::detail
