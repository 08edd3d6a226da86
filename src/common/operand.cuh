// SPDX-License-Identifier: Apache-2.0
// Addressing op(A) and op(B) in row-major storage, and the tile a thread block owns.
#pragma once

#include <cstdint>

#include "common/problem.h"
#include "common/vec.cuh"

namespace hgemm::detail {

/// Offset of element (row, col) of op(X), X stored row-major with leading dimension ld.
template <Op O>
__host__ __device__ __forceinline__ std::int64_t op_offset(std::int64_t row, std::int64_t col, std::int64_t ld) {
  return O == Op::N ? row * ld + col : col * ld + row;
}

/// Element (row, col) of op(X) of size rows×cols, zero outside it.
template <Op O>
__device__ __forceinline__ __half load_op_element(const __half* x, std::int64_t ld, std::int64_t rows,
                                                  std::int64_t cols, std::int64_t row, std::int64_t col) {
  return (row < rows && col < cols) ? x[op_offset<O>(row, col, ld)] : __ushort_as_half(0);
}

/// How a block's global loads meet the matrix edges.
///  * Checked: each load tests the edges and the address's alignment, so any shape, ld and
///    pointer work (zeros are read outside the matrix).
///  * Interior: the block's tile, every slice of K it reads and every vector it loads lie inside
///    the matrix and are aligned, so loads are plain vector loads. The host launches this only
///    on tiles where that holds (TileSplit): the edge tests cost registers and instructions in
///    the main loop, and on the CUDA-core rungs registers decide how many blocks fit on an SM.
enum class Edges { Checked, Interior };

/// N consecutive elements of row `row` of a row-major rows×cols matrix from column `col` on;
/// zeros outside the matrix. Checked: a wide load when in bounds and aligned (see vec.cuh).
template <int N, Edges E = Edges::Checked>
__device__ __forceinline__ Halves<N> load_row_segment(const __half* x, std::int64_t ld, std::int64_t rows,
                                                      std::int64_t cols, std::int64_t row, std::int64_t col) {
  if constexpr (E == Edges::Interior) {
    return ld_global_in_order<N>(x + row * ld + col);
  } else {
    const bool row_ok = row < rows;
    return load_halves<N>(x + (row_ok ? row : 0) * ld + col, row_ok ? cols - col : 0);
  }
}

/// Top-left corner of the BM×BN tile of C owned by this block. The grid is one-dimensional
/// (no 65535 limit on grid.y); tiles are numbered row by row.
struct TileOrigin {
  std::int64_t row, col;
};
template <int BM, int BN>
__device__ __forceinline__ TileOrigin tile_origin(std::int64_t n) {
  const std::int64_t tiles_n = (n + BN - 1) / BN;
  const std::int64_t tile = blockIdx.x;
  return {(tile / tiles_n) * BM, (tile % tiles_n) * BN};
}

/// The BM×BN tiles of C for op NN, split into interior tiles, which a block running
/// Edges::Interior can compute (whole tile inside C, K a multiple of the slice depth BK, rows of A
/// and B aligned for VA- and VB-wide loads), and the rest. Tiles are numbered interior first,
/// row by row; then the ragged last tile column, top to bottom; then the ragged last tile row.
/// The interior kernel takes tiles [0, interior_tiles) and the checked kernel the rest, each from
/// blockIdx.x; when the loads cannot be aligned or K is ragged, every tile is checked.
template <int BM, int BN, int BK, int VA, int VB>
struct TileSplit {
  __host__ __device__ static bool interior_loads_possible(const Problem& p) {
    return p.k % BK == 0 && p.lda % VA == 0 && p.ldb % VB == 0 &&
           reinterpret_cast<std::uintptr_t>(p.a) % (2 * VA) == 0 &&
           reinterpret_cast<std::uintptr_t>(p.b) % (2 * VB) == 0;
  }
  __host__ __device__ static std::int64_t interior_tiles(const Problem& p) {
    return interior_loads_possible(p) ? (p.m / BM) * (p.n / BN) : 0;
  }
  __host__ __device__ static std::int64_t all_tiles(const Problem& p) {
    return ((p.m + BM - 1) / BM) * ((p.n + BN - 1) / BN);
  }
  /// Corner of tile `index` in the numbering above.
  __device__ static TileOrigin tile_at(const Problem& p, std::int64_t index) {
    const std::int64_t full_m = p.m / BM, full_n = p.n / BN, ragged_n = p.n % BN != 0 ? 1 : 0;
    if (index < full_m * full_n) return {(index / full_n) * BM, (index % full_n) * BN};
    index -= full_m * full_n;
    if (index < full_m * ragged_n) return {index * BM, full_n * BN};
    return {full_m * BM, (index - full_m * ragged_n) * BN};
  }
  /// The tile of this block of the kernel that runs with edges E.
  template <Edges E>
  __device__ static TileOrigin this_tile(const Problem& p) {
    return tile_at(p, (E == Edges::Interior ? 0 : interior_tiles(p)) + blockIdx.x);
  }
};

}  // namespace hgemm::detail
