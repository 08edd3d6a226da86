// SPDX-License-Identifier: Apache-2.0
// Mechanics shared by the sm_80-style tensor-core ladders (wmma/, mma/): staging a tile of op(A)
// or op(B) into shared memory with zeros outside the matrix (synchronously, or slice by slice with
// cp.async), ldmatrix, mma.sync m16n8k16, and writing an m16n8 accumulator fragment through the
// common epilogue.
#pragma once

#include <cuda_fp16.h>

#include <cstdint>

#include "common/accum.cuh"
#include "common/epilogue.cuh"
#include "common/operand.cuh"
#include "common/shared_address.cuh"

namespace hgemm::detail {

/// Copies the R×C tile of op(X) (rows×cols) whose corner is (row0, col0) into `dst` (row
/// stride LDS halves), zeros outside op(X); the THREADS threads of the block share the work.
/// op N reads 8-halves row segments (16-byte loads where aligned); op T reads elements, with
/// consecutive threads on consecutive stored elements.
template <Op O, int R, int C, int LDS, int THREADS>
__device__ __forceinline__ void stage_tile(__half* dst, const __half* x, std::int64_t ld, std::int64_t rows,
                                           std::int64_t cols, std::int64_t row0, std::int64_t col0, int tid) {
  if constexpr (O == Op::N) {
    static_assert(C % 8 == 0, "row segments of 8");
    for (int s = tid; s < R * C / 8; s += THREADS) {
      const int r = s / (C / 8), c = (s % (C / 8)) * 8;
      st_vec<8>(dst + r * LDS + c, load_row_segment<8>(x, ld, rows, cols, row0 + r, col0 + c));
    }
  } else {
    for (int e = tid; e < R * C; e += THREADS) {
      const int r = e % R, c = e / R;
      dst[r * LDS + c] = load_op_element<Op::T>(x, ld, rows, cols, row0 + r, col0 + c);
    }
  }
}

/// Four 8×8 matrices from shared memory: lane l gives the address of row l % 8 of matrix l / 8.
__device__ __forceinline__ void ldmatrix_x4(std::uint32_t (&r)[4], const __half* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(row_address)));
}

/// Two 8×8 matrices, transposed on the way (for B stored k-major in shared memory).
__device__ __forceinline__ void ldmatrix_x2_trans(std::uint32_t (&r)[2], const __half* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x2.trans.shared.b16 {%0, %1}, [%2];"
               : "=r"(r[0]), "=r"(r[1])
               : "r"(shared_address(row_address)));
}

/// Four 8×8 matrices, transposed on the way.
__device__ __forceinline__ void ldmatrix_x4_trans(std::uint32_t (&r)[4], const __half* row_address) {
  asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];"
               : "=r"(r[0]), "=r"(r[1]), "=r"(r[2]), "=r"(r[3])
               : "r"(shared_address(row_address)));
}

/// Asynchronous 16-byte copy global → shared; only the first `bytes` (0..16) are read, the rest
/// of the 16 bytes is zero-filled.
__device__ __forceinline__ void cp_async_16(void* dst, const void* src, int bytes) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16, %2;" ::"r"(shared_address(dst)), "l"(src), "r"(bytes) : "memory");
}
/// Asynchronous 16-byte copy global → shared, all 16 bytes read.
__device__ __forceinline__ void cp_async_16(void* dst, const void* src) {
  asm volatile("cp.async.cg.shared.global [%0], [%1], 16;" ::"r"(shared_address(dst)), "l"(src) : "memory");
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;" ::: "memory"); }
/// Waits until at most N committed groups of this thread's copies are still in flight.
template <int N>
__device__ __forceinline__ void cp_async_wait() {
  asm volatile("cp.async.wait_group %0;" ::"n"(N) : "memory");
}

/// The main loop of the cp.async "stages" rungs: a ring of STAGES slots with STAGES - 1 slices in
/// flight ahead of the one being computed. `load_slice(kt)` issues slice kt's copies into slot
/// kt % STAGES and commits one group (an empty one past the last slice, so that the wait count
/// stays uniform); `compute(kt)` runs the math on slice kt, landed in slot kt % STAGES. Returns
/// with all of this thread's copies landed.
template <int STAGES, typename LoadSlice, typename Compute>
__device__ __forceinline__ void run_cp_async_ring(std::int64_t slices, LoadSlice&& load_slice, Compute&& compute) {
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) load_slice(s);
  for (std::int64_t kt = 0; kt < slices; ++kt) {
    cp_async_wait<STAGES - 2>();  // slice kt has landed (this thread's copies) ...
    __syncthreads();              // ... everyone's, and slot (kt - 1) % STAGES is free again
    load_slice(kt + STAGES - 1);
    compute(kt);
  }
  cp_async_wait<0>();
}

/// Which way a tile walks through its matrix from one K slice to the next: a K-major operand
/// tile (A, or B stored N×K) moves right by its width, a B stored K×N moves down by its height.
enum class Walk { Right, Down };

/// The cp.async copies, slice after slice, of an R×C tile of a row-major rows×cols matrix whose
/// rows are 16-byte aligned (ld % 8 == 0, aligned base), 8 halves per copy, shared by THREADS
/// threads. A thread's copies all sit in one column of 8 halves, on rows ROW_STEP apart, so what
/// does not change between slices (its source pointer, the distance between its rows, how much of
/// the matrix lies beyond its first row and column) is worked out once. A slice whose copies all
/// lie inside the matrix (every slice of an inside tile) then issues plain 16-byte copies; one
/// that reaches the edge tests each copy: zero-filled past the matrix, partly at the right edge.
/// (Recomputing 64-bit coordinates per copy and slice, the first version, took 12 instructions
/// for every mma.sync of the stages rungs.)
template <int R, int C, int THREADS, Walk W>
class AsyncTileCopier {
 public:
  static constexpr int COPIES = R * C / 8 / THREADS, ROW_STEP = THREADS / (C / 8);
  static_assert(C % 8 == 0 && THREADS % (C / 8) == 0 && (R * C / 8) % THREADS == 0, "whole copies per thread");

  /// The tile whose corner is (row0, col0), copied by thread `tid`.
  __device__ AsyncTileCopier(const __half* x, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                             std::int64_t row0, std::int64_t col0, int tid)
      : base_(x),
        row_(tid / (C / 8)),
        col_((tid % (C / 8)) * 8),
        rows_left_(rows - row0 - row_),
        cols_left_(cols - col0 - col_),
        ld_(ld),
        src_(x + (row0 + row_) * ld + col0 + col_) {}

  /// Issues this slice's copies into `dst` (tile element (r, c) at `dst + at(r, c)`, c a multiple
  /// of 8: padding or swizzle), then moves to the next slice.
  template <typename At>
  __device__ __forceinline__ void copy_and_advance(__half* dst, At at) {
    if (rows_left_ > (COPIES - 1) * ROW_STEP && cols_left_ >= 8) {  // all inside: no per-copy tests
#pragma unroll
      for (int i = 0; i < COPIES; ++i) cp_async_16(dst + at(row_ + i * ROW_STEP, col_), src_ + i * ROW_STEP * ld_);
    } else {
      const int row_bytes = cols_left_ <= 0 ? 0 : cols_left_ >= 8 ? 16 : static_cast<int>(cols_left_) * 2;
#pragma unroll
      for (int i = 0; i < COPIES; ++i) {
        const bool inside = i * ROW_STEP < rows_left_ && row_bytes > 0;
        cp_async_16(dst + at(row_ + i * ROW_STEP, col_), inside ? src_ + i * ROW_STEP * ld_ : base_,
                    inside ? row_bytes : 0);
      }
    }
    if constexpr (W == Walk::Right) {
      src_ += C, cols_left_ -= C;
    } else {
      src_ += R * ld_, rows_left_ -= R;
    }
  }

 private:
  const __half* base_;  // any readable address, for the copies that read nothing
  int row_, col_;       // this thread's first row and its column in the tile
  std::int64_t rows_left_, cols_left_;  // rows and columns of the matrix from there on
  std::int64_t ld_;
  const __half* src_;  // the first row's source in the current slice
};

/// The copiers of a block's A tiles (BM×BK, walking right along K) and B tiles (op N: BK×BN,
/// walking down; op T: BN×BK, walking right), from the first slice on.
template <int BM, int BK, int THREADS>
__device__ __forceinline__ AsyncTileCopier<BM, BK, THREADS, Walk::Right> a_tile_copier(const Problem& p,
                                                                                        std::int64_t row0, int tid) {
  return {p.a, p.lda, p.m, p.k, row0, 0, tid};
}
template <Op OB, int BK, int BN, int THREADS>
__device__ __forceinline__ auto b_tile_copier(const Problem& p, std::int64_t col0, int tid) {
  if constexpr (OB == Op::N)
    return AsyncTileCopier<BK, BN, THREADS, Walk::Down>(p.b, p.ldb, p.k, p.n, 0, col0, tid);
  else
    return AsyncTileCopier<BN, BK, THREADS, Walk::Right>(p.b, p.ldb, p.n, p.k, col0, 0, tid);
}

/// Accumulator registers of one m16n8 tile: four floats, or two half2 (as 32-bit words).
template <typename Acc> struct MmaAcc;
template <> struct MmaAcc<float> { float r[4] = {0.f, 0.f, 0.f, 0.f}; };
template <> struct MmaAcc<__half> { std::uint32_t r[2] = {0u, 0u}; };

/// The ldmatrix fragments of one 16-deep k-step of a warp: A of its MMA_M m16 rows, B of its
/// MMA_N n8 columns.
template <int MMA_M, int MMA_N>
struct MmaFrags {
  std::uint32_t a[MMA_M][4], b[MMA_N][2];
};

/// D += A·B for one m16n8k16 tile (A: 4 registers, B: 2, in the ldmatrix fragment layout).
__device__ __forceinline__ void mma_m16n8k16(MmaAcc<float>& d, const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
      "{%0, %1, %2, %3};"
      : "+f"(d.r[0]), "+f"(d.r[1]), "+f"(d.r[2]), "+f"(d.r[3])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}
__device__ __forceinline__ void mma_m16n8k16(MmaAcc<__half>& d, const std::uint32_t (&a)[4], const std::uint32_t (&b)[2]) {
  asm volatile(
      "mma.sync.aligned.m16n8k16.row.col.f16.f16.f16.f16 {%0, %1}, {%2, %3, %4, %5}, {%6, %7}, {%0, %1};"
      : "+r"(d.r[0]), "+r"(d.r[1])
      : "r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "r"(b[0]), "r"(b[1]));
}

/// The STEPS k16-steps of one slice, with the fragments double-buffered in registers: step s + 1's
/// are loaded (`load_frags(frags, kk)`, kk its first k) while step s's mmas run.
template <int STEPS, int MMA_M, int MMA_N, typename Acc, typename LoadFrags>
__device__ __forceinline__ void mma_steps_double_buffered(MmaAcc<Acc> (&acc)[MMA_M][MMA_N], LoadFrags&& load_frags) {
  MmaFrags<MMA_M, MMA_N> f[2];
  load_frags(f[0], 0);
#pragma unroll
  for (int step = 0; step < STEPS; ++step) {
    if (step + 1 < STEPS) load_frags(f[(step + 1) % 2], (step + 1) * 16);
#pragma unroll
    for (int i = 0; i < MMA_M; ++i)
#pragma unroll
      for (int j = 0; j < MMA_N; ++j) mma_m16n8k16(acc[i][j], f[step % 2].a[i], f[step % 2].b[j]);
  }
}

/// Writes an m16n8 accumulator tile whose corner is C(row0, col0): lane l holds columns
/// 2(l % 4), +1 of rows l / 4 and l / 4 + 8 (PTX ISA, mma.m16n8k16 D fragment).
template <typename Acc>
__device__ __forceinline__ void store_mma_tile(const Problem& p, std::int64_t row0, std::int64_t col0,
                                               const MmaAcc<Acc>& d, int lane) {
  const std::int64_t row = row0 + lane / 4, col = col0 + 2 * (lane % 4);
  if constexpr (sizeof(Acc) == 4) {
    store_c<2>(p, row, col, &d.r[0]);
    store_c<2>(p, row + 8, col, &d.r[2]);
  } else {
    store_c<2>(p, row, col, reinterpret_cast<const __half*>(&d.r[0]));
    store_c<2>(p, row + 8, col, reinterpret_cast<const __half*>(&d.r[1]));
  }
}

/// Writes a warp's MMA_M × MMA_N grid of m16n8 accumulator tiles whose corner is C(row0, col0).
template <int MMA_M, int MMA_N, typename Acc>
__device__ __forceinline__ void store_mma_tiles(const Problem& p, std::int64_t row0, std::int64_t col0,
                                                const MmaAcc<Acc> (&acc)[MMA_M][MMA_N], int lane) {
#pragma unroll
  for (int i = 0; i < MMA_M; ++i)
#pragma unroll
    for (int j = 0; j < MMA_N; ++j) store_mma_tile(p, row0 + i * 16, col0 + j * 8, acc[i][j], lane);
}

}  // namespace hgemm::detail
