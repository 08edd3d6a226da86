// SPDX-License-Identifier: Apache-2.0
// Host side of the sm90 launches, for the ladder rungs and the engine: the checks an sm90 entry
// makes before it accepts a problem, shared-memory limits and cluster shapes, and the ladder's
// launch of an f16 problem (tensor maps, K = 0, the kernel).
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>

#include "common/matmul.h"
#include "common/problem.h"
#include "common/workspace.h"

namespace hgemm::detail::sm90 {

/// Whether the library holds sm_90a code for the sm90 kernels, and the sizes TMA can index;
/// the extra_check of every sm90 entry.
Status supports(const Matmul& p, std::string* why);

/// Allows `kernel` `bytes` of dynamic shared memory on the current device (once per kernel,
/// device and size: later calls return at once, so launches do not pay for the attribute call).
Status set_smem_limit(const void* kernel, int bytes, std::string* message);

/// The launch attribute that runs a grid in clusters of `cluster` CTAs along x.
cudaLaunchAttribute cluster_dims(int cluster);

/// Clusters of `cluster` CTAs of `kernel` that fit on the GPU at once (a persistent grid),
/// cached per kernel, device and cluster size; 0 with `message` set on error.
unsigned resident_clusters(const void* kernel, int threads, int smem_bytes, int cluster, std::string* message);

/// The shape of a ladder kernel's operand tiles: rows of A and B per tile, into how many parts
/// B's load is split (cluster CTAs load one part each), and whether it can store C by TMA.
struct TileShape {
  int bm = 128, bn = 128;
  int b_parts = 1;
  bool c_tma_store = false;
};

/// A's, B's and (for a C stored by TMA) C's maps of an f16 problem.
struct OperandMaps {
  CUtensorMap a, b, c;
  bool c_by_tma = false;  ///< C is stored by TMA: beta = 0, C 16-byte aligned, ldc and N multiples of 8
};

/// Whether op(A) is stored M-major / op(B) N-major (the wgmma transpose bits).
inline bool a_mn_major(const Problem& p) { return p.op_a == Op::T; }
inline bool b_mn_major(const Problem& p) { return p.op_b == Op::N; }

/// Builds the maps of p's operands, copying any TMA cannot read in place into `workspace`.
Status encode_ladder_maps(const Problem& p, TileShape shape, StreamWorkspace& workspace, cudaStream_t stream,
                          OperandMaps* maps, std::string* message);

/// C = beta·C (zeros when beta = 0, without reading C): the whole GEMM when K = 0.
Status scale_c(const Problem& p, cudaStream_t stream, std::string* message);

}  // namespace hgemm::detail::sm90
