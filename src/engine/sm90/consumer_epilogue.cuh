// SPDX-License-Identifier: Apache-2.0
// One consumer warpgroup's epilogue in the persistent kernels (the cooperative one, where two
// consumers share a tile, and the ping-pong one, where each has its own): its accumulators, a
// 64 × BN tile or split of the problem the kernel runs, → D by the launch's store path, through
// the warpgroup's own two staging buffers and its own named barrier.
#pragma once

#include "engine/sm90/epilogue.cuh"

namespace hgemm::detail::engine {

/// SWAPPED: the kernel runs the swapped problem and writes D transposed; FINISH: the store code
/// compiled in (TileFinish). Reg/R: the accumulators.
template <int BN, bool SWAPPED, TileFinish FINISH, typename Reg, int R>
struct ConsumerEpilogue {
  using Staged = StagedEpilogue<BN, Reg, R>;
  using Buffers = std::uint8_t[2][kCChunkBytes];

  /// The fused epilogue (p.out.epi): the accumulators become D's finished values in place. In
  /// registers it touches no shared memory, so it waits for nothing; otherwise it goes through
  /// the staging buffers, once their earlier TMA stores have read them and the warpgroup is done
  /// copying staged rows out of them.
  static __device__ void finish_fused(Buffers& buffers, const KernelParams& p, int batch, Reg (&acc)[R], int m0,
                                      int n0, unsigned barrier_id) {
    if (!finishes_in_registers<Reg>(p.out)) {
      if (threadIdx.x % 32 == 0) bulk_wait_read<0>();
      named_barrier_sync(barrier_id, 128);
    }
    finish_accumulators<BN, SWAPPED>(p.out, batch, p.m, p.n, m0, n0, acc, reinterpret_cast<float*>(buffers));
  }

  /// FusedInRegisters: the bias of the warpgroup's 64 rows at (m0, n0) of unit u, for store.
  template <typename Unit>
  static __device__ __forceinline__ void load_bias(const KernelParams& p, const Unit& u, int m0, int n0,
                                                   TileBias<BN>& bias) {
    if constexpr (FINISH == TileFinish::FusedInRegisters) load_tile_bias<BN, false>(p.out.epi, u.batch, p.m, p.n, m0, n0, bias);
  }

  /// A finished tile (or split) of unit u, the warpgroup's 64 rows at (m0, n0), → D by the
  /// launch's path (with the fused epilogue, the values it finished, stored as they are).
  /// FusedInRegisters: `bias` is what load_bias loaded for the same tile; AUX_BY_TMA, the code
  /// that stores aux by TMA through `map_aux` where p.aux_by_tma.
  template <bool AUX_BY_TMA = false, typename Unit>
  static __device__ void store(Buffers& buffers, const KernelParams& p, const CUtensorMap* map_d, const Unit& u,
                               Reg (&acc)[R], int m0, int n0, unsigned barrier_id, typename Staged::Pending& pending,
                               const TileBias<BN>* bias = nullptr, const CUtensorMap* map_aux = nullptr) {
    const int z = p.batched ? u.batch : -1;
    if constexpr (FINISH == TileFinish::Plain) {
      Staged::store_tile(buffers, map_d, acc, m0, n0, z, p.out.of_product(u.batch), pending);
    } else if constexpr (FINISH == TileFinish::FusedInRegisters) {
      static_assert(std::is_same_v<Reg, float> && !SWAPPED, "the fused epilogue in registers needs f32 accumulators");
      add_tile_bias<BN, false>(p.out, *bias, acc);
      if (p.out.epi.aux) {
        if (AUX_BY_TMA && p.aux_by_tma)
          Staged::store_aux_tile(buffers, map_aux, acc, m0, n0, z, p.out.epi.aux_type);
        else
          store_aux_by_type<BN, false>(p.out, u.batch, p.m, p.n, m0, n0, acc);
      }
      activate_accumulators<BN>(p.out, acc);
      Staged::store_tile(buffers, map_d, acc, m0, n0, z, p.out.of_product(u.batch).finished(), pending);
    } else {
      store_by_path(buffers, p, map_d, u, acc, m0, n0, barrier_id, pending);
    }
  }

  /// store for the general kernels: any store path, the fused epilogue first.
  template <typename Unit>
  static __device__ void store_by_path(Buffers& buffers, const KernelParams& p, const CUtensorMap* map_d,
                                       const Unit& u, Reg (&acc)[R], int m0, int n0, unsigned barrier_id,
                                       typename Staged::Pending& pending) {
    if (p.store == StorePath::Partials) {
      const std::int64_t slice = static_cast<std::int64_t>(u.split) * p.batch + u.batch;  // [split][product][m][n]
      store_partials<BN>(p.m, p.n, p.partials + slice * p.m * p.n, m0, n0, acc);
      return;
    }
    const bool fused = p.out.epi.on;
    if (fused) finish_fused(buffers, p, u.batch, acc, m0, n0, barrier_id);
    const Output o = fused ? p.out.of_product(u.batch).finished() : p.out.of_product(u.batch);
    if constexpr (SWAPPED) {
      store_accumulators_transposed<BN>(o, p.m, m0, n0, acc);
    } else {
      if (p.store == StorePath::Tma)
        Staged::store_tile(buffers, map_d, acc, m0, n0, p.batched ? u.batch : -1, o, pending);
      else if (p.store == StorePath::StagedRows)
        Staged::store_rows(buffers, o, acc, m0, n0, barrier_id);
      else
        store_accumulators<BN>(o, m0, n0, acc);
    }
  }
};

}  // namespace hgemm::detail::engine
