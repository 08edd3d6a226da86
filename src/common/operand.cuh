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

/// N consecutive elements of row `row` of a row-major rows×cols matrix from column `col` on;
/// zeros outside the matrix. Wide load when in bounds and aligned (see vec.cuh).
template <int N>
__device__ __forceinline__ Halves<N> load_row_segment(const __half* x, std::int64_t ld, std::int64_t rows,
                                                      std::int64_t cols, std::int64_t row, std::int64_t col) {
  const bool row_ok = row < rows;
  return load_halves<N>(x + (row_ok ? row : 0) * ld + col, row_ok ? cols - col : 0);
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

}  // namespace hgemm::detail
