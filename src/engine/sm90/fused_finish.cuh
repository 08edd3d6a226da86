// SPDX-License-Identifier: Apache-2.0
// The fused epilogue on one consumer warpgroup's accumulators (Output::epi: bias, activation,
// aux, scales): finish_accumulators turns them into D's finished values in place, before any
// store path of epilogue.cuh writes them as they are (Output::finished).
#pragma once

#include <cuda_bf16.h>

#include <type_traits>
#include <utility>

#include "common/fused_epilogue.cuh"
#include "common/sm90/accumulators.cuh"
#include "engine/sm90/params.h"
#include "engine/sm90/stores.cuh"

namespace hgemm::detail::engine {

using namespace sm90;

/// Calls f(std::integral_constant<int, J>{}) for J = 0 .. N-1, in order.
template <typename F, int... J>
__device__ __forceinline__ void static_for(F&& f, std::integer_sequence<int, J...>) {
  (f(std::integral_constant<int, J>{}), ...);
}
template <int N, typename F>
__device__ __forceinline__ void static_for(F&& f) {
  static_for(f, std::make_integer_sequence<int, N>());
}

/// Bytes of scratch finish_accumulators needs per warpgroup: each warp's 16 rows × 64 floats.
constexpr int kFinishScratchBytes = 4 * 16 * 64 * 4;

/// Whether the fused epilogue is a bias, an aux and an activation at most (a Linear layer, its
/// activation and what the backward pass keeps): no C or scales. finish_accumulators applies it
/// in registers.
__device__ __forceinline__ bool in_registers_only(const Output& o) {
  const FusedEpilogue& e = o.epi;
  return o.beta == 0.f && !e.row_scale && !e.col_scale;
}

/// Whether finish_accumulators applies the epilogue in registers (f32 accumulators,
/// in_registers_only), touching no shared memory: its scratch need not be free.
template <typename Reg>
__device__ __forceinline__ bool finishes_in_registers(const Output& o) {
  return std::is_same_v<Reg, float> && in_registers_only(o);
}

/// The pre-activation values in f32 accumulators (unswapped) → aux of type A: each quad of lanes
/// writes 8 consecutive columns of a row, a pair per lane. Where the tile's columns are inside D
/// and aux's pairs aligned, one store per pair (store_pair), else one per value.
template <typename A, int N>
__device__ __forceinline__ void store_aux_from_registers(const FusedEpilogue& e, int b, std::int64_t rows,
                                                         std::int64_t cols, std::int64_t row0, std::int64_t col0,
                                                         const float* d) {
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  const std::int64_t row = row0 + warp * 16 + lane / 4, col = col0 + 2 * (lane % 4);
  if (row >= rows) return;  // and so is row + 8
  A* const base = static_cast<A*>(e.aux) + b * e.stride_aux;
  A* const top = base + row * e.ldaux + col;
  A* const bottom = top + 8 * e.ldaux;
  const bool bottom_in = row + 8 < rows;
  const bool pairs = col0 + N <= cols && e.ldaux % 2 == 0 && reinterpret_cast<std::uintptr_t>(base) % (2 * sizeof(A)) == 0;
  if (pairs) {
#pragma unroll
    for (int q = 0; q < N / 4; ++q) {
      if (q % 2 && !bottom_in) continue;
      const float2 z = accumulator_pair(d, q);
      store_pair<A>((q % 2 ? bottom : top) + (q / 2) * 8, z.x, z.y);
    }
    return;
  }
#pragma unroll
  for (int q = 0; q < N / 4; ++q) {
    if (q % 2 && !bottom_in) continue;
    const float2 z = accumulator_pair(d, q);
    const int c = (q / 2) * 8;
    A* at = (q % 2 ? bottom : top) + c;
    if (col + c < cols) at[0] = convert_to<A>(z.x);
    if (col + c + 1 < cols) at[1] = convert_to<A>(z.y);
  }
}

/// The same for a transposed tile (a swapped kernel's): element (r, c) of the tile is aux(c, r),
/// one store per value (a swapped tile has at most 64 columns, C's few rows).
template <typename A, int N>
__device__ __forceinline__ void store_aux_transposed_from_registers(const FusedEpilogue& e, int b, std::int64_t rows,
                                                                   std::int64_t cols, std::int64_t row0,
                                                                   std::int64_t col0, const float* d) {
  A* const base = static_cast<A*>(e.aux) + b * e.stride_aux;
  for_each_accumulator_pair<N>(rows, row0, col0, d, [&](std::int64_t r, std::int64_t c, float2 z) {
    if (r >= rows) return;
    if (c < cols) base[c * e.ldaux + r] = convert_to<A>(z.x);
    if (c + 1 < cols) base[(c + 1) * e.ldaux + r] = convert_to<A>(z.y);
  });
}

template <typename A, int N, bool TRANSPOSED>
__device__ __forceinline__ void store_aux_in_registers(const FusedEpilogue& e, int b, std::int64_t rows,
                                                       std::int64_t cols, std::int64_t row0, std::int64_t col0,
                                                       const float* d) {
  if constexpr (TRANSPOSED)
    store_aux_transposed_from_registers<A, N>(e, b, rows, cols, row0, col0, d);
  else
    store_aux_from_registers<A, N>(e, b, rows, cols, row0, col0, d);
}

/// bias[i] as a float where `inside`, else -0 (x + -0 = x).
template <typename B>
__device__ __forceinline__ float bias_value(const B* bias, std::int64_t i, bool inside) {
  if constexpr (std::is_same_v<B, float>)
    return inside ? bias[i] : -0.f;
  else if constexpr (std::is_same_v<B, __half>)
    return inside ? __half2float(bias[i]) : -0.f;
  else
    return inside ? __bfloat162float(bias[i]) : -0.f;
}

/// The bias values one lane needs for a warpgroup's m64nN tile, loaded ahead of its epilogue
/// (load_tile_bias), so that the loads' latency passes under the tile's k-loop. A bias along the
/// tile's rows (D's rows; D's columns when TRANSPOSED) is two values per lane, its rows lane/4
/// and 8 further; a bias along its columns is column col0 + lane + 32j in `v[j]`, one round of
/// coalesced loads, from which each lane takes its pairs' values by shuffles (add_tile_bias).
/// No bias: -0 (x + -0 = x).
template <int N>
struct TileBias {
  static constexpr int kPerLane = (N + 31) / 32 > 2 ? (N + 31) / 32 : 2;
  float v[kPerLane];
};

/// What a kernel without the fused epilogue in registers keeps instead of a TileBias.
struct NoTileBias {};

template <typename B, int N, bool TRANSPOSED>
__device__ __forceinline__ void load_tile_bias_as(const FusedEpilogue& e, int b, std::int64_t rows, std::int64_t cols,
                                                  std::int64_t row0, std::int64_t col0, TileBias<N>& t) {
  const int lane = threadIdx.x % 32, warp = threadIdx.x % 128 / 32;
  const B* bias = static_cast<const B*>(e.bias) + (e.bias ? b * e.stride_bias : 0);
  auto value = [&](std::int64_t i, bool inside) { return bias_value(bias, i, inside && e.bias); };
  if (TRANSPOSED ? !e.bias_per_row : e.bias_per_row) {
    const std::int64_t top = row0 + warp * 16 + lane / 4;
    t.v[0] = value(top, top < rows), t.v[1] = value(top + 8, top + 8 < rows);
    return;
  }
#pragma unroll
  for (int j = 0; j < TileBias<N>::kPerLane; ++j) {
    const int i = lane + 32 * j;
    t.v[j] = i < N ? value(col0 + i, col0 + i < cols) : 0.f;
  }
}

/// The bias of the tile at (row0, col0) of product b of the `rows` × `cols` problem the kernel
/// runs, for add_tile_bias.
template <int N, bool TRANSPOSED>
__device__ __forceinline__ void load_tile_bias(const FusedEpilogue& e, int b, std::int64_t rows, std::int64_t cols,
                                               std::int64_t row0, std::int64_t col0, TileBias<N>& t) {
  switch (e.bias_type) {
    case DataType::F16: return load_tile_bias_as<__half, N, TRANSPOSED>(e, b, rows, cols, row0, col0, t);
    case DataType::BF16: return load_tile_bias_as<__nv_bfloat16, N, TRANSPOSED>(e, b, rows, cols, row0, col0, t);
    default: return load_tile_bias_as<float, N, TRANSPOSED>(e, b, rows, cols, row0, col0, t);
  }
}

/// alpha·acc + bias on f32 accumulators, pair by pair in registers. The product rounds before
/// the bias is added (__fmul_rn), as in finish_element. Nothing goes through shared memory, so
/// the epilogue never waits for the previous tile's TMA stores to read their buffers.
template <int N, bool TRANSPOSED>
__device__ __forceinline__ void add_tile_bias(const Output& o, const TileBias<N>& t, float* d) {
  const int lane = threadIdx.x % 32;
  if (TRANSPOSED ? !o.epi.bias_per_row : o.epi.bias_per_row) {
#pragma unroll
    for (int q = 0; q < N / 4; ++q) {
      const float2 v = accumulator_pair(d, q);
      const float add = q % 2 ? t.v[1] : t.v[0];
      set_accumulator_pair(d, q, make_float2(__fmul_rn(o.alpha, v.x) + add, __fmul_rn(o.alpha, v.y) + add));
    }
    return;
  }
#pragma unroll
  for (int jj = 0; jj < N / 8; ++jj) {  // pairs 2jj (row lane/4) and 2jj + 1 (8 rows down) share columns
    // Columns 8jj + 2(lane % 4) and the next: in v[jj / 4] of lanes 8(jj % 4) + 2(lane % 4) and the next.
    const int from = 8 * (jj % 4) + 2 * (lane % 4);
    const float2 add =
        make_float2(__shfl_sync(0xffffffffu, t.v[jj / 4], from), __shfl_sync(0xffffffffu, t.v[jj / 4], from + 1));
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float2 v = accumulator_pair(d, 2 * jj + h);
      set_accumulator_pair(d, 2 * jj + h,
                           make_float2(__fmul_rn(o.alpha, v.x) + add.x, __fmul_rn(o.alpha, v.y) + add.y));
    }
  }
}

/// load_tile_bias and add_tile_bias in one, for the general kernels (whose register allocation
/// this form keeps).
/// alpha·acc + bias on f32 accumulators, pair by pair in registers. The product rounds
/// before the bias is added (__fmul_rn), as in finish_element; no bias adds -0 (x + -0 = x). A
/// bias along the tile's rows (D's rows; D's columns when TRANSPOSED) is two values per lane. A
/// bias along its columns comes in one round of coalesced loads, column col0 + lane + 32j in lane
/// `lane`'s `loaded[j]`, and each lane takes its pairs' values from the lanes holding them by shuffles:
/// nothing goes through shared memory, so the epilogue never waits for the previous tile's TMA
/// stores to read their buffers.
template <typename B, int N, bool TRANSPOSED>
__device__ __forceinline__ void add_bias_in_registers(const Output& o, int b, std::int64_t rows, std::int64_t cols,
                                                      std::int64_t row0, std::int64_t col0, float* d) {
  const FusedEpilogue& e = o.epi;
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  const B* bias = static_cast<const B*>(e.bias) + (e.bias ? b * e.stride_bias : 0);
  auto value = [&](std::int64_t i, bool inside) { return bias_value(bias, i, inside && e.bias); };
  if (TRANSPOSED ? !e.bias_per_row : e.bias_per_row) {
    const std::int64_t top = row0 + warp * 16 + lane / 4;
    const float bias_top = value(top, top < rows), bias_bottom = value(top + 8, top + 8 < rows);
#pragma unroll
    for (int q = 0; q < N / 4; ++q) {
      const float2 v = accumulator_pair(d, q);
      const float add = q % 2 ? bias_bottom : bias_top;
      set_accumulator_pair(d, q, make_float2(__fmul_rn(o.alpha, v.x) + add, __fmul_rn(o.alpha, v.y) + add));
    }
    return;
  }
  constexpr int kPerLane = (N + 31) / 32;
  float loaded[kPerLane];
#pragma unroll
  for (int j = 0; j < kPerLane; ++j) {
    const int i = lane + 32 * j;
    loaded[j] = i < N ? value(col0 + i, col0 + i < cols) : 0.f;
  }
#pragma unroll
  for (int jj = 0; jj < N / 8; ++jj) {  // pairs 2jj (row lane/4) and 2jj + 1 (8 rows down) share columns
    // Columns 8jj + 2(lane % 4) and the next: in loaded[jj / 4] of lanes 8(jj % 4) + 2(lane % 4) and the next.
    const int from = 8 * (jj % 4) + 2 * (lane % 4);
    const float2 add = make_float2(__shfl_sync(0xffffffffu, loaded[jj / 4], from),
                                   __shfl_sync(0xffffffffu, loaded[jj / 4], from + 1));
#pragma unroll
    for (int h = 0; h < 2; ++h) {
      const float2 v = accumulator_pair(d, 2 * jj + h);
      set_accumulator_pair(d, 2 * jj + h,
                           make_float2(__fmul_rn(o.alpha, v.x) + add.x, __fmul_rn(o.alpha, v.y) + add.y));
    }
  }
}

/// The activation ACT on every f32 accumulator, unrolled: independent values, so the tensor
/// cores wait only for the arithmetic, not for its latency.
template <Activation ACT, int N>
__device__ __forceinline__ void activate_in_registers(float* d) {
#pragma unroll
  for (int i = 0; i < N / 2; ++i) d[i] = activate(ACT, d[i]);
}

/// aux (o.epi.aux, of its type) from the pre-activation values in f32 accumulators.
template <int N, bool TRANSPOSED>
__device__ __forceinline__ void store_aux_by_type(const Output& o, int b, std::int64_t rows, std::int64_t cols,
                                                  std::int64_t row0, std::int64_t col0, const float* d) {
  switch (o.epi.aux_type) {
    case DataType::F16: return store_aux_in_registers<__half, N, TRANSPOSED>(o.epi, b, rows, cols, row0, col0, d);
    case DataType::BF16:
      return store_aux_in_registers<__nv_bfloat16, N, TRANSPOSED>(o.epi, b, rows, cols, row0, col0, d);
    default: return store_aux_in_registers<float, N, TRANSPOSED>(o.epi, b, rows, cols, row0, col0, d);
  }
}

/// The activation o.epi.act on every f32 accumulator.
template <int N>
__device__ __forceinline__ void activate_accumulators(const Output& o, float* d) {
  switch (o.epi.act) {
    case Activation::ReLU: return activate_in_registers<Activation::ReLU, N>(d);
    case Activation::GELU: return activate_in_registers<Activation::GELU, N>(d);
    case Activation::GELUTanh: return activate_in_registers<Activation::GELUTanh, N>(d);
    case Activation::SiLU: return activate_in_registers<Activation::SiLU, N>(d);
    default: return;
  }
}

/// After the bias: aux stored from the accumulators, then the activation on them, in registers.
template <int N, bool TRANSPOSED>
__device__ __forceinline__ void aux_and_activation_in_registers(const Output& o, int b, std::int64_t rows,
                                                                std::int64_t cols, std::int64_t row0, std::int64_t col0,
                                                                float* d) {
  if (o.epi.aux) store_aux_by_type<N, TRANSPOSED>(o, b, rows, cols, row0, col0, d);
  activate_accumulators<N>(o, d);
}

/// The fused epilogue applied to one warpgroup's m64nN accumulators in place, for the tile at
/// (row0, col0) of product b of the `rows` × `cols` problem the kernel runs (TRANSPOSED: its
/// (r, c) is D(c, r)): afterwards they hold alpha·acc + beta·C → bias → aux → activation →
/// scales (finish_element's steps), for any store path with Output::finished(). o is the launch's
/// (read where it lies, not copied: the accumulators leave few registers).
///
/// With f32 accumulators and without C and scales it is applied in registers
/// (add_bias_in_registers, then aux_and_activation_in_registers). Otherwise the values go
/// through `scratch` (kFinishScratchBytes) 64 columns at a time, so that each lane
/// owns whole columns of D: it walks down its columns, loading a column's bias and scale once,
/// while consecutive lanes touch consecutive columns of C, aux and the vectors. Two rolled
/// passes per chunk: the pre-activation (C, bias, aux: one copy of the type switches) and, when
/// there is one, the activation and scales (one copy per activation). Five activations unrolled
/// over the accumulators in each of the engine's kernels would be a lot of code and compile time.
/// Each warp uses only the part of the scratch it stages itself for a TMA store
/// (finish_scratch_float), so nothing but the warp waits between this and the store. Unless
/// finishes_in_registers, the caller makes the scratch free.
template <int N, bool TRANSPOSED, typename Reg>
__device__ __forceinline__ void finish_accumulators(const Output& o, int b, std::int64_t rows, std::int64_t cols,
                                                    std::int64_t row0, std::int64_t col0, Reg* d, float* scratch) {
  if constexpr (std::is_same_v<Reg, float>) {
    if (finishes_in_registers<Reg>(o)) {
      switch (o.epi.bias_type) {
        case DataType::F16: add_bias_in_registers<__half, N, TRANSPOSED>(o, b, rows, cols, row0, col0, d); break;
        case DataType::BF16:
          add_bias_in_registers<__nv_bfloat16, N, TRANSPOSED>(o, b, rows, cols, row0, col0, d);
          break;
        default: add_bias_in_registers<float, N, TRANSPOSED>(o, b, rows, cols, row0, col0, d); break;
      }
      return aux_and_activation_in_registers<N, TRANSPOSED>(o, b, rows, cols, row0, col0, d);
    }
  }
  const int t = threadIdx.x % 128, warp = t / 32, lane = t % 32;
  auto at = [&](int rr, int cc) { return scratch + finish_scratch_float(warp, rr, cc); };
  constexpr int kCols = N < 64 ? N : 64, kChunks = N / kCols, kChunkPairs = kCols / 4;
  static_assert(kCols % 8 == 0 && kCols <= 64);
  const std::int64_t first_row = row0 + 16 * warp;
  const FusedEpilogue& e = o.epi;
  const bool post = e.act != Activation::None || e.row_scale || e.col_scale;
  // Pair q of the wgmma fragment (for_each_accumulator_pair): row lane/4 + 8(q % 2) of the warp's
  // 16, column 8(q / 2) + 2(lane % 4) of the tile; chunk j holds pairs [kCols/4·j, kCols/4·(j+1)).
  auto pair_row = [&](int q) { return lane / 4 + 8 * (q % 2); };
  auto pair_col = [&](int q) { return (q / 2) * 8 % kCols + 2 * (lane % 4); };
  // A lane's share of the chunk is one column of D (a tile column, or a tile row when
  // transposed) down some of its rows: column(D's column) runs first, once, and loads what the
  // column shares (a bias along N, the column's scale), which loaded per element would wait
  // behind the previous element's stores; then visit(rr, cc, D's row, D's column, its result) per element.
  constexpr int kLanesPerRow = TRANSPOSED ? 16 : kCols;  // along D's rows: tile rows if transposed
  auto walk = [&](std::int64_t first_col, auto&& column, auto&& visit) {
    const int valid_rows = static_cast<int>(rows - first_row < 16 ? rows - first_row : 16);
    const int valid_cols = static_cast<int>(cols - first_col < kCols ? cols - first_col : kCols);
    if constexpr (!TRANSPOSED) {  // lanes along a row of D: column cc, rows r0, r0 + step, ...
      constexpr int kStep = 32 / kLanesPerRow > 0 ? 32 / kLanesPerRow : 1;
      for (int cc = lane % kCols; cc < kCols; cc += 32) {
        if (cc >= valid_cols) break;
        const float shared = column(first_col + cc);
#pragma unroll 2
        for (int rr = lane / kCols; rr < valid_rows; rr += kStep) visit(rr, cc, first_row + rr, first_col + cc, shared);
      }
    } else {  // lanes along D's row: tile row rr (D's column), tile columns (D's rows) cc0, cc0 + 2, ...
      const int rr = lane % 16;
      if (rr >= valid_rows) return;
      const float shared = column(first_row + rr);
#pragma unroll 2
      for (int cc = lane / 16; cc < valid_cols; cc += 2) visit(rr, cc, first_col + cc, first_row + rr, shared);
    }
  };
  (void)kLanesPerRow;
  const bool bias_per_column = e.bias && !e.bias_per_row;

  // A chunk's pairs are staged and read back by code unrolled for its index (with_chunk), which
  // names the accumulator registers. With few accumulators the chunks run in a rolled loop, so the
  // walks below are one copy of their code, not one per chunk; with many (f32, 256 columns) the
  // loop is unrolled: while a chunk's values wait in shared memory their registers are free for
  // the walks, which would spill otherwise.
  constexpr bool kRolled = (std::is_same_v<Reg, float> ? N / 2 : N / 4) <= 64;
  auto with_chunk = [&](auto j, auto&& f) {
    static_for<kChunks>([&](auto J) {
      if (j == decltype(J)::value) f(J);
    });
  };
  auto finish_chunk = [&](auto j) {
    with_chunk(j, [&](auto J) {
#pragma unroll
      for (int q = J * kChunkPairs; q < (J + 1) * kChunkPairs; ++q)
        *reinterpret_cast<float2*>(at(pair_row(q), pair_col(q))) = accumulator_pair(d, q);
    });
    __syncwarp();
    const std::int64_t first_col = col0 + j * kCols;
    walk(
        first_col, [&](std::int64_t dc) { return bias_per_column ? bias_of(e, b, 0, dc) : -0.f; },
        [&](int rr, int cc, std::int64_t dr, std::int64_t dc, float column_bias) {
          float* x = at(rr, cc);
          float z = __fmul_rn(o.alpha, *x);
          if (o.beta != 0.f) z = fmaf(o.beta, load_element(o.c, o.c_type, b * o.stride_c + dr * o.ldc + dc), z);
          *x = pre_activation(e, b, dr, dc, z, bias_per_column ? column_bias : bias_of(e, b, dr, dc));
        });
    if (post) {
      auto finish = [&](auto act) {
        walk(
            first_col, [&](std::int64_t dc) { return e.col_scale ? e.col_scale[b * e.stride_col_scale + dc] : 1.f; },
            [&](int rr, int cc, std::int64_t dr, std::int64_t, float col_scale) {
              float* x = at(rr, cc);
              const float row_scale = e.row_scale ? e.row_scale[b * e.stride_row_scale + dr] : 1.f;
              *x = post_activation<decltype(act)::value>(*x, row_scale, col_scale);
            });
      };
      switch (e.act) {
        case Activation::ReLU: finish(std::integral_constant<Activation, Activation::ReLU>{}); break;
        case Activation::GELU: finish(std::integral_constant<Activation, Activation::GELU>{}); break;
        case Activation::GELUTanh: finish(std::integral_constant<Activation, Activation::GELUTanh>{}); break;
        case Activation::SiLU: finish(std::integral_constant<Activation, Activation::SiLU>{}); break;
        default: finish(std::integral_constant<Activation, Activation::None>{}); break;
      }
    }
    __syncwarp();
    // Each lane reads back the pairs it staged: the next chunk's staging by the same lane waits for nothing.
    with_chunk(j, [&](auto J) {
#pragma unroll
      for (int q = J * kChunkPairs; q < (J + 1) * kChunkPairs; ++q)
        set_accumulator_pair(d, q, *reinterpret_cast<const float2*>(at(pair_row(q), pair_col(q))));
    });
  };
  if constexpr (kRolled) {
#pragma unroll 1
    for (int j = 0; j < kChunks; ++j) finish_chunk(j);
  } else {
#pragma unroll
    for (int j = 0; j < kChunks; ++j) finish_chunk(j);
  }
  __syncwarp();  // the scratch is free again for the warp's own stores
}

}  // namespace hgemm::detail::engine
