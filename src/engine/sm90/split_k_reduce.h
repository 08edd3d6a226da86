// SPDX-License-Identifier: Apache-2.0
// The second pass of split-K: D = alpha·(the sum of the splits' fp32 partial sums) + beta·C.
#pragma once

#include <cuda_runtime_api.h>

#include <string>

#include "engine/sm90/params.h"

namespace hgemm::detail::engine {

/// Adds p.splits slices of p.batch × p.m × p.n partial sums (p.partials) and writes D through p.out
/// (transposed: the kernel ran the swapped problem, whose (r, c) is D(c, r)). The order of the
/// additions is fixed (deterministic): split order, or with more than 8 splits, every 8th split
/// in order by each of 8 warps and the 8 sums in warp order. Launched early (programmatic
/// dependent launch): it waits in the kernel for the GEMM's sums.
Status reduce_splits(const KernelParams& p, bool transposed, cudaStream_t stream, std::string* message);

}  // namespace hgemm::detail::engine
