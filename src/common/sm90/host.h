// Host side of an sm90 launch, shared by the rungs: TMA tensor maps for A and B (with operands
// TMA cannot read in place first copied into aligned workspace), C = beta·C for K = 0, and the
// checks an sm90 entry makes before it accepts a problem.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <string>

#include "common/matmul.h"
#include "common/problem.h"
#include "common/sm90/tile.cuh"
#include "common/workspace.h"

namespace hgemm::detail::sm90 {

/// The shape of a kernel's operand tiles: rows of A and B per tile (M and N extents), and into
/// how many parts each tile's TMA load is split (parts > 1: cluster CTAs load one part each).
struct TileShape {
  int bm = 128, bn = 128;
  int a_parts = 1, b_parts = 1;
  bool c_tma_store = false;  ///< the kernel can store C by TMA (boxes of 16 rows × 64 columns) when C allows it
};

/// A's, B's and C's tensor maps, 128B-swizzled, boxes matching common/sm90/tile.cuh. `c` is
/// encoded only when the epilogue stores C by TMA.
struct OperandMaps {
  CUtensorMap a, b, c;
};

/// Whether op(A) is stored M-major / op(B) N-major (the wgmma transpose bits).
inline bool a_mn_major(const Problem& p) { return p.op_a == Op::T; }
inline bool b_mn_major(const Problem& p) { return p.op_b == Op::N; }

/// Whether the library holds sm_90a code for the sm90 kernels, and the sizes TMA can index;
/// the extra_check of every sm90 entry.
Status supports(const Matmul& p, std::string* why);

/// Whether rung 03 runs p as C^T = op(B)^T·op(A)^T, few rows against many columns (M <= 64,
/// op(A) = N): the rows become wgmma's narrow N and the long N its 64-row M, with split-K.
bool takes_skinny_path(const Problem& p);

/// The problem with A and B swapped: C^T = op(B)^T·op(A)^T, for op(A) = N (its C is p's C^T; the
/// kernels that run it write their C transposed into p's C).
Problem swapped(const Problem& p);

/// Builds the maps for p's A and B. An operand whose pointer is not 16-byte aligned or whose
/// leading dimension is not a multiple of 8 is first repacked into `workspace` (one read, one
/// write, queued on `stream`). With shape.c_tma_store, also C's map when C allows a TMA store
/// (`mode` says which epilogue the kernel takes).
Status encode_operand_maps(const Problem& p, TileShape shape, StreamWorkspace& workspace, cudaStream_t stream,
                           OperandMaps* maps, EpilogueMode* mode, std::string* message);

/// C = beta·C (zeros when beta = 0, without reading C): the whole GEMM when K = 0.
Status scale_c(const Problem& p, cudaStream_t stream, std::string* message);

/// C = alpha·(sum of mode.splits partial sums) + beta·C: the end of a split-K run. The order of
/// the additions is fixed (deterministic): split order, or with more than 8 splits, every 8th
/// split in order by each of 8 warps and the 8 sums in warp order.
Status reduce_splits(const Problem& p, const EpilogueMode& mode, cudaStream_t stream, std::string* message);

/// The launch attribute that runs a grid in clusters of `cluster` CTAs along x.
cudaLaunchAttribute cluster_dims(int cluster);

/// Clusters of `cluster` CTAs of `kernel` that fit on the GPU at once (the persistent rungs'
/// grid), cached per kernel, device and cluster size; 0 with `message` set on error.
unsigned resident_clusters(const void* kernel, int threads, int smem_bytes, int cluster, std::string* message);

/// Allows `kernel` `bytes` of dynamic shared memory on the current device (once per kernel,
/// device and size: later calls return at once, so launches do not pay for the attribute call).
Status set_smem_limit(const void* kernel, int bytes, std::string* message);

}  // namespace hgemm::detail::sm90
