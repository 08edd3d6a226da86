// SPDX-License-Identifier: Apache-2.0
// TMA tensor maps of the sm90 kernels and the engine: A's and B's 128B-swizzled maps, with
// operands TMA cannot read in place (pointer not 16-byte aligned, leading dimension not a multiple
// of 16 bytes) first copied into aligned workspace, and the maps C is stored through.
#pragma once

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>

#include "common/workspace.h"
#include "hgemm/hgemm.h"

namespace hgemm::detail::sm90 {

/// One operand as stored: rows × width elements of a 16-bit type, leading dimension ld; for a
/// batch, `batch` such matrices `stride` elements apart (0: one matrix for every product).
struct StoredOperand {
  const void* ptr = nullptr;
  DataType type = DataType::F16;
  std::int64_t ld = 0, rows = 0, width = 0;
  std::int64_t batch = 1, stride = 0;
};

/// Whether TMA can read a 16-bit matrix in place: 16-byte aligned, ld a multiple of 8.
bool tma_readable(const void* ptr, std::int64_t ld);
/// ... and a batch of them: the stride a multiple of 8 too.
bool tma_readable(const StoredOperand& op);

/// Where TMA cannot read `a` or `b` in place, copies it (one launch for both, every matrix of a
/// batch, queued on `stream`) into `workspace` with ld rounded up to a multiple of 8, the matrices
/// one after another, and points the operand at the copy.
Status make_tma_readable(StoredOperand* a, StoredOperand* b, StreamWorkspace& workspace, cudaStream_t stream,
                         std::string* message);

/// The map of an operand tile (common/sm90/operand_tile.cuh): the box is one 128-byte row deep in
/// the stored width; K-major operands take `rows` rows per box, MN-major ones 64 k-rows (a
/// [64 k][64 mn] block).
Status encode_operand_map(CUtensorMap* map, const StoredOperand& op, bool mn_major, int rows, std::string* message);

/// The same map of rank 3 over the operand's batch (OperandTile::load_batched reads it).
Status encode_batched_operand_map(CUtensorMap* map, const StoredOperand& op, bool mn_major, int rows,
                                  std::string* message);

/// A 128B-swizzled map of a row-major rows × width matrix of `type` with a box_w × box_h box
/// (box_w · element size ≤ 128 bytes), for the TMA stores of C.
Status encode_store_map(CUtensorMap* map, void* ptr, DataType type, std::int64_t width, std::int64_t rows,
                        std::int64_t ld, int box_w, int box_h, std::string* message);

/// The same of rank 3 over `batch` matrices `stride` elements apart (a 16-byte multiple).
Status encode_batched_store_map(CUtensorMap* map, void* ptr, DataType type, std::int64_t width, std::int64_t rows,
                                std::int64_t ld, std::int64_t batch, std::int64_t stride, int box_w, int box_h,
                                std::string* message);

}  // namespace hgemm::detail::sm90
