// SPDX-License-Identifier: Apache-2.0
// How many blocks of a kernel the current GPU holds at once, for grids sized to one wave.
#pragma once

#include <cstddef>

namespace hgemm::detail {

/// The current device's SM count, cached per device; 0 if CUDA cannot say.
int sm_count();

/// Blocks of `kernel` (launched with `threads` threads and `smem_bytes` of dynamic shared memory)
/// resident at once on the current device: SMs × blocks per SM. Cached per (kernel, device);
/// 0 if CUDA cannot say.
int resident_blocks(const void* kernel, int threads, std::size_t smem_bytes = 0);

}  // namespace hgemm::detail
