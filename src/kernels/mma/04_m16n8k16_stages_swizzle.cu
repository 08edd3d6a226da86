// 04_m16n8k16_stages_swizzle.cu — mma.m16n8k16_stages_swizzle
// Adds over 03_m16n8k16_stages three things.
//  * XOR swizzle instead of padding: 16-byte chunk u of shared-memory row r is stored at chunk
//    u ^ f(r) (f(r) = (r / 2) % 4 for 64-byte rows, r % 8 for 256-byte rows), so the eight row
//    addresses of one ldmatrix matrix fall in eight different bank groups with no wasted bytes.
//  * Block swizzle: blocks take tiles in groups of GROUP tile-rows, column after column, so the
//    blocks resident at one time share rows of A and columns of B in L2.
//  * C through shared memory: the accumulators are parked in shared memory (the ring is free by
//    then) and written out row-wise, 8 elements per thread with 16-byte loads and stores.
// Same ring, warps, operand forms and alignment requirement as rung 03.
#include <algorithm>

#include "common/launch.cuh"
#include "common/tc.cuh"
#include "registry/registry.h"

namespace hgemm::detail {
namespace mma_m16n8k16_stages_swizzle {

constexpr int BM = 128, BN = 128, BK = 32, STAGES = 3, GROUP = 8;
constexpr int WARPS_M = 2, WARPS_N = 4, MMA_M = 4, MMA_N = 4;
constexpr int THREADS = 32 * WARPS_M * WARPS_N;

/// Element offset of (r, c) in a swizzled tile with rows of ROW halves (c a multiple of 8 for the
/// chunk, plus an offset inside it).
template <int ROW>
__host__ __device__ constexpr int swizzled(int r, int c) {
  static_assert(ROW == 32 || ROW == 128, "64- or 256-byte rows");
  const int f = ROW == 32 ? (r / 2) % 4 : r % 8;
  return r * ROW + (((c / 8) ^ f) * 8) + c % 8;
}

template <Op OB, typename Acc>
struct Layout {
  static constexpr int A_SIZE = BM * BK, B_SIZE = BK * BN, STAGE = A_SIZE + B_SIZE;
  static constexpr int B_ROW = OB == Op::N ? BN : BK;  // [BK][BN] or [BN][BK]
  static constexpr int C_LD = BN + 8;                  // parked accumulators, padded rows
  static constexpr int SMEM_BYTES = std::max<int>(STAGES * STAGE * 2, BM * C_LD * sizeof(Acc));
};

/// The tile of C of this block in grouped order.
__device__ __forceinline__ TileOrigin grouped_tile(const Problem& p) {
  const std::int64_t tiles_m = (p.m + BM - 1) / BM, tiles_n = (p.n + BN - 1) / BN;
  const std::int64_t L = blockIdx.x, per_group = GROUP * tiles_n, first = L / per_group * GROUP;
  const std::int64_t rows = tiles_m - first < GROUP ? tiles_m - first : GROUP, r = L % per_group;
  return {(first + r % rows) * BM, (r / rows) * BN};
}

template <Op OB, typename Acc>
__global__ void __launch_bounds__(THREADS) kernel(Problem p) {
  using L = Layout<OB, Acc>;
  extern __shared__ __align__(16) __half smem[];
  const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
  const int wm = warp / WARPS_N, wn = warp % WARPS_N;
  const TileOrigin tile = grouped_tile(p);
  const std::int64_t slices = (p.k + BK - 1) / BK;

  auto load_slice = [&](std::int64_t kt) {
    if (kt < slices) {
      __half* a = smem + (kt % STAGES) * L::STAGE;
      __half* b = a + L::A_SIZE;
      async_tile<BM, BK, THREADS>(a, p.a, p.lda, p.m, p.k, tile.row, kt * BK, tid, swizzled<BK>);
      if constexpr (OB == Op::N)
        async_tile<BK, BN, THREADS>(b, p.b, p.ldb, p.k, p.n, kt * BK, tile.col, tid, swizzled<BN>);
      else
        async_tile<BN, BK, THREADS>(b, p.b, p.ldb, p.n, p.k, tile.col, kt * BK, tid, swizzled<BK>);
    }
    cp_async_commit();
  };
  struct Frags {
    std::uint32_t a[MMA_M][4], b[MMA_N][2];
  };
  auto load_frags = [&](Frags& f, const __half* a, const __half* b, int kk) {
#pragma unroll
    for (int i = 0; i < MMA_M; ++i)
      ldmatrix_x4(f.a[i], a + swizzled<BK>(wm * 64 + i * 16 + lane % 16, kk + (lane / 16) * 8));
#pragma unroll
    for (int j = 0; j < MMA_N; j += 2) {
      std::uint32_t r[4];
      if constexpr (OB == Op::N)
        ldmatrix_x4_trans(r, b + swizzled<BN>(kk + lane % 16, wn * 32 + j * 8 + (lane / 16) * 8));
      else
        ldmatrix_x4(r, b + swizzled<BK>(wn * 32 + j * 8 + (lane / 16) * 8 + lane % 8, kk + ((lane / 8) % 2) * 8));
      f.b[j][0] = r[0], f.b[j][1] = r[1], f.b[j + 1][0] = r[2], f.b[j + 1][1] = r[3];
    }
  };

  MmaAcc<Acc> acc[MMA_M][MMA_N];
#pragma unroll
  for (int s = 0; s < STAGES - 1; ++s) load_slice(s);
  for (std::int64_t kt = 0; kt < slices; ++kt) {
    cp_async_wait<STAGES - 2>();
    __syncthreads();
    load_slice(kt + STAGES - 1);
    const __half* a = smem + (kt % STAGES) * L::STAGE;
    const __half* b = a + L::A_SIZE;
    Frags f[2];
    load_frags(f[0], a, b, 0);
#pragma unroll
    for (int step = 0; step < BK / 16; ++step) {
      if (step + 1 < BK / 16) load_frags(f[(step + 1) % 2], a, b, (step + 1) * 16);
#pragma unroll
      for (int i = 0; i < MMA_M; ++i)
#pragma unroll
        for (int j = 0; j < MMA_N; ++j) mma_m16n8k16(acc[i][j], f[step % 2].a[i], f[step % 2].b[j]);
    }
  }
  cp_async_wait<0>();
  __syncthreads();  // the ring is free: park the accumulators there

  Acc* s_c = reinterpret_cast<Acc*>(smem);
#pragma unroll
  for (int i = 0; i < MMA_M; ++i)
#pragma unroll
    for (int j = 0; j < MMA_N; ++j) {
      const int r = wm * 64 + i * 16 + lane / 4, c = wn * 32 + j * 8 + 2 * (lane % 4);
      const Acc* v = reinterpret_cast<const Acc*>(acc[i][j].r);  // (r, c), (r, c + 1), then row r + 8
      s_c[r * L::C_LD + c] = v[0], s_c[r * L::C_LD + c + 1] = v[1];
      s_c[(r + 8) * L::C_LD + c] = v[2], s_c[(r + 8) * L::C_LD + c + 1] = v[3];
    }
  __syncthreads();
  for (int s = tid; s < BM * BN / 8; s += THREADS) {
    const int r = s / (BN / 8), c = (s % (BN / 8)) * 8;
    store_c<8>(p, tile.row + r, tile.col + c, &s_c[r * L::C_LD + c]);
  }
}

Status launch(const Problem& p, cudaStream_t stream, std::string* message) {
  dim3 grid;
  if (Status s = tile_grid<BM, BN>(p, &grid, message); s != Status::Success) return s;
  return dispatch_ops_accum(p, [&](auto, auto ob, auto acc) {
    constexpr Op OB = decltype(ob)::value;
    using Acc = typename decltype(acc)::type;
    auto fn = kernel<OB, Acc>;
    cudaFuncSetAttribute(fn, cudaFuncAttributeMaxDynamicSharedMemorySize, Layout<OB, Acc>::SMEM_BYTES);
    fn<<<grid, THREADS, Layout<OB, Acc>::SMEM_BYTES, stream>>>(p);
    return launch_status(message);
  });
}

}  // namespace mma_m16n8k16_stages_swizzle

const KernelEntry& entry_mma_m16n8k16_stages_swizzle() {
  static const KernelEntry e{{"mma.m16n8k16_stages_swizzle", "mma", 4,
                              "XOR-swizzled shared memory, grouped block order, C parked in shared memory and stored 16 bytes at a time",
                              80, 0, kOpNN | kOpNT, kBothAccums, 8, false},
                             &mma_m16n8k16_stages_swizzle::launch, /*auto_priority=*/15};
  return e;
}

}  // namespace hgemm::detail
