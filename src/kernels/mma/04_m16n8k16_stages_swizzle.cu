// SPDX-License-Identifier: Apache-2.0
// 04_m16n8k16_stages_swizzle.cu — mma.m16n8k16_stages_swizzle
// Adds over 03_m16n8k16_stages three things, and takes larger tiles.
//  * XOR swizzle instead of padding: 16-byte chunk u of shared-memory row r is stored at chunk
//    u ^ f(r) (f(r) = (r / 2) % 4 for 64-byte rows, r % 8 for rows of 128 bytes or more), so the
//    eight row addresses of one ldmatrix matrix fall in eight different bank groups with no
//    wasted bytes.
//  * Block swizzle: blocks take tiles in groups of GROUP tile-rows, column after column, so the
//    blocks resident at one time share rows of A and columns of B in L2.
//  * C through shared memory: the accumulators are parked in shared memory (the ring is free by
//    then) and written out row-wise, 8 elements per thread with 16-byte loads and stores.
//  * Larger warp tiles, 4 warps per block: each ldmatrix.x4 feeds more mma.sync. The tile differs
//    per accumulator type, each the fastest measured on the H200 (docs/ladder.md): f16 takes
//    128×256 blocks of 64×128 warps (128 accumulator registers), 32-deep slices in a 3-slice ring;
//    f32, whose accumulators take twice the registers, 128×128 blocks of 64×64 warps, 64-deep
//    slices in a 3-slice ring.
// Same operand forms and alignment requirement as rung 03.
#include <algorithm>
#include <type_traits>

#include "common/launch.cuh"
#include "common/swizzle.h"
#include "common/tc.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace mma_m16n8k16_stages_swizzle {

template <int BM_, int BN_, int BK_, int WARPS_M_, int WARPS_N_, int STAGES_>
struct Config {
  static constexpr int BM = BM_, BN = BN_, BK = BK_, WARPS_M = WARPS_M_, WARPS_N = WARPS_N_, STAGES = STAGES_;
  static constexpr int WM = BM / WARPS_M, WN = BN / WARPS_N;  // warp tile
  static constexpr int MMA_M = WM / 16, MMA_N = WN / 8;       // m16n8 tiles per warp
  static constexpr int THREADS = 32 * WARPS_M * WARPS_N, GROUP = 8;
  static_assert(WM % 16 == 0 && WN % 16 == 0 && BK % 16 == 0, "whole ldmatrix.x4 tiles");
};

/// Two adjacent accumulators into shared memory with one 4- or 8-byte store.
__device__ __forceinline__ void park_pair(__half* dst, __half x, __half y) {
  *reinterpret_cast<__half2*>(dst) = __halves2half2(x, y);
}
__device__ __forceinline__ void park_pair(float* dst, float x, float y) {
  *reinterpret_cast<float2*>(dst) = make_float2(x, y);
}

/// WORDS 16-byte loads from shared memory (both sides 16-byte aligned).
template <int WORDS, typename T>
__device__ __forceinline__ void copy_16_byte_words(T* dst, const T* src) {
#pragma unroll
  for (int w = 0; w < WORDS; ++w) reinterpret_cast<uint4*>(dst)[w] = reinterpret_cast<const uint4*>(src)[w];
}

template <typename C, Op OB, typename Acc>
struct Layout {
  static constexpr int A_SIZE = C::BM * C::BK, B_SIZE = C::BK * C::BN, STAGE = A_SIZE + B_SIZE;
  static constexpr int C_LD = C::BN + 8;  // parked accumulators, padded rows
  static constexpr int SMEM_BYTES = std::max<int>(C::STAGES * STAGE * 2, C::BM * C_LD * sizeof(Acc));
};

/// The tile of C of this block in grouped order.
template <typename C>
__device__ __forceinline__ TileOrigin grouped_tile(const Problem& p) {
  const std::int64_t tiles_m = (p.m + C::BM - 1) / C::BM, tiles_n = (p.n + C::BN - 1) / C::BN;
  const std::int64_t L = blockIdx.x, per_group = C::GROUP * tiles_n, first = L / per_group * C::GROUP;
  const std::int64_t rows = tiles_m - first < C::GROUP ? tiles_m - first : C::GROUP, r = L % per_group;
  return {(first + r % rows) * C::BM, (r / rows) * C::BN};
}

template <typename C, Op OB, typename Acc>
__global__ void __launch_bounds__(C::THREADS) kernel(Problem p) {
  using L = Layout<C, OB, Acc>;
  constexpr int BM = C::BM, BN = C::BN, BK = C::BK, STAGES = C::STAGES, THREADS = C::THREADS;
  constexpr int MMA_M = C::MMA_M, MMA_N = C::MMA_N;
  extern __shared__ __align__(16) __half smem[];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / C::WARPS_N, wn = warp % C::WARPS_N;
  const TileOrigin tile = grouped_tile<C>(p);
  const std::int64_t slices = (p.k + BK - 1) / BK;

  auto copy_a = a_tile_copier<BM, BK, THREADS>(p, tile.row, tid);
  auto copy_b = b_tile_copier<OB, BK, BN, THREADS>(p, tile.col, tid);
  auto load_slice = [&](std::int64_t kt) {  // called for kt = 0, 1, 2, ... in turn
    if (kt < slices) {
      __half* a = smem + (kt % STAGES) * L::STAGE;
      copy_a.copy_and_advance(a, swizzled<BK>);
      copy_b.copy_and_advance(a + L::A_SIZE, swizzled<OB == Op::N ? BN : BK>);
    }
    cp_async_commit();
  };
  auto load_frags = [&](MmaFrags<MMA_M, MMA_N>& f, const __half* a, const __half* b, int kk) {
#pragma unroll
    for (int i = 0; i < MMA_M; ++i)
      ldmatrix_x4(f.a[i], a + swizzled<BK>(wm * C::WM + i * 16 + lane % 16, kk + (lane / 16) * 8));
#pragma unroll
    for (int j = 0; j < MMA_N; j += 2) {
      std::uint32_t r[4];
      if constexpr (OB == Op::N)
        ldmatrix_x4_trans(r, b + swizzled<BN>(kk + lane % 16, wn * C::WN + j * 8 + (lane / 16) * 8));
      else
        ldmatrix_x4(r, b + swizzled<BK>(wn * C::WN + j * 8 + (lane / 16) * 8 + lane % 8, kk + ((lane / 8) % 2) * 8));
      f.b[j][0] = r[0], f.b[j][1] = r[1], f.b[j + 1][0] = r[2], f.b[j + 1][1] = r[3];
    }
  };

  MmaAcc<Acc> acc[MMA_M][MMA_N];
  run_cp_async_ring<STAGES>(slices, load_slice, [&](std::int64_t kt) {
    const __half* a = smem + (kt % STAGES) * L::STAGE;
    const __half* b = a + L::A_SIZE;
    mma_steps_double_buffered<BK / 16>(acc, [&](MmaFrags<MMA_M, MMA_N>& f, int kk) { load_frags(f, a, b, kk); });
  });
  __syncthreads();  // the ring is free: park the accumulators there

  Acc* s_c = reinterpret_cast<Acc*>(smem);
#pragma unroll
  for (int i = 0; i < MMA_M; ++i)
#pragma unroll
    for (int j = 0; j < MMA_N; ++j) {
      const int r = wm * C::WM + i * 16 + lane / 4, c = wn * C::WN + j * 8 + 2 * (lane % 4);
      const Acc* v = reinterpret_cast<const Acc*>(acc[i][j].r);  // (r, c), (r, c + 1), then row r + 8
      park_pair(&s_c[r * L::C_LD + c], v[0], v[1]);
      park_pair(&s_c[(r + 8) * L::C_LD + c], v[2], v[3]);
    }
  __syncthreads();
  for (int s = tid; s < BM * BN / 8; s += THREADS) {
    const int r = s / (BN / 8), c = (s % (BN / 8)) * 8;
    alignas(16) Acc row_piece[8];
    copy_16_byte_words<sizeof(row_piece) / 16>(row_piece, &s_c[r * L::C_LD + c]);
    store_c<8>(p, tile.row + r, tile.col + c, row_piece);
  }
}

template <typename Acc>
using ConfigFor = std::conditional_t<sizeof(Acc) == 2, Config<128, 256, 32, 2, 2, 3>, Config<128, 128, 64, 2, 2, 3>>;

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  return dispatch_ops_accum(p, [&](auto, auto ob, auto acc) {
    constexpr Op OB = decltype(ob)::value;
    using Acc = typename decltype(acc)::type;
    using C = ConfigFor<Acc>;
    return launch_tiles_with_smem<C::BM, C::BN>(kernel<C, OB, Acc>, p, C::THREADS, Layout<C, OB, Acc>::SMEM_BYTES,
                                                stream, message);
  });
}

}  // namespace mma_m16n8k16_stages_swizzle

const KernelEntry& entry_mma_m16n8k16_stages_swizzle() {
  static const KernelEntry e{{"mma.m16n8k16_stages_swizzle", "mma", 4,
                              "XOR-swizzled shared memory, grouped block order, C stored 16 bytes at a time through shared memory, 64x128 (f16) or 64x64 (f32) warp tiles",
                              80, 0, kOpNN | kOpNT, kBothAccums, 8, false},
                             &mma_m16n8k16_stages_swizzle::launch};
  return e;
}

}  // namespace hgemm::detail
