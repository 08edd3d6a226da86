// SPDX-License-Identifier: Apache-2.0
// The engine's grouped kernel (mixture-of-experts layouts, group sizes on the device): the
// persistent mainloop and epilogue of the engine over the units of the grouped scheduler.
// Every CTA first reads the group sizes and builds the scheduler's table in shared memory (all
// its threads, a block-wide scan); then a producer thread fills the ring by TMA (A by a 2-D map
// over all rows, or a rank-3 one over the masked groups; B by a rank-3 map over the groups) and
// two consumer warpgroups run wgmma and store each tile clipped at its group's last row. The
// K-grouped layout walks each group's slice of K instead, clearing what its last slice holds
// past the group's end.
#pragma once

#include "common/sm90/accumulators.cuh"
#include "engine/sm90/epilogue.cuh"
#include "engine/sm90/grouped.h"
#include "engine/sm90/grouped_schedule.h"
#include "engine/sm90/kernel_launcher.cuh"
#include "engine/sm90/mainloop.cuh"

namespace hgemm::detail::engine {

/// The exclusive prefix (sum, or maximum of non-negative values) of every thread's `value` in
/// thread order, for a block of `threads` (a multiple of 32); `scratch` holds `threads` ints.
/// Warp 0 scans: each lane a run of threads / 32 values, then the lanes' totals by shuffles.
template <bool MAX>
__device__ int block_exclusive_scan(int value, int* scratch, int threads) {
  const int t = threadIdx.x, lane = t % 32, per_lane = threads / 32;
  auto op = [](int a, int b) { return MAX ? (a > b ? a : b) : a + b; };
  scratch[t] = value;
  __syncthreads();
  if (t < 32) {
    int own = 0;
    for (int i = 0; i < per_lane; ++i) own = op(own, scratch[lane * per_lane + i]);
    int inclusive = own;
    for (int d = 1; d < 32; d *= 2) {
      const int other = __shfl_up_sync(0xffffffff, inclusive, d);
      if (lane >= d) inclusive = op(inclusive, other);
    }
    int run = __shfl_up_sync(0xffffffff, inclusive, 1);
    if (lane == 0) run = 0;
    for (int i = 0; i < per_lane; ++i) {
      const int x = scratch[lane * per_lane + i];
      scratch[lane * per_lane + i] = run;
      run = op(run, x);
    }
  }
  __syncthreads();
  const int prefix = scratch[t];
  __syncthreads();  // scratch may be reused
  return prefix;
}

/// The scheduler's table from the sizes on the device, by every thread of the block, each over a
/// run of consecutive groups: the same table as build_grouped_table. Contiguous and K-grouped
/// ends are the running maximum of the offsets clamped to the bound.
template <int ROWS>
__device__ void build_grouped_table_in_block(const GroupedParams& p, int tiles_n, int* ends, int* first_unit,
                                             int* scratch) {
  const int threads = blockDim.x, per = (p.groups + threads - 1) / threads;
  const int lo = min(p.groups, static_cast<int>(threadIdx.x) * per), hi = min(p.groups, lo + per);
  int prev = 0;
  if (!p.masked()) {
    int most = 0;
    for (int g = lo; g < hi; ++g) most = max(most, p.sizes[g]);
    prev = min(p.bound, block_exclusive_scan<true>(most, scratch, threads));  // the end of group lo - 1
  }
  int units = 0;
  for (int g = lo; g < hi; ++g) {
    const int rows = grouped_entry(p.layout, p.sizes[g], &prev, p.bound, p.rows_each, &ends[g]);
    first_unit[g] = rows;  // for now: the rows; the first unit below
    units += (rows + ROWS - 1) / ROWS * tiles_n;
  }
  int run = block_exclusive_scan<false>(units, scratch, threads);
  for (int g = lo; g < hi; ++g) {
    const int rows = first_unit[g];
    first_unit[g] = run;
    run += (rows + ROWS - 1) / ROWS * tiles_n;
  }
  if (threadIdx.x == threads - 1) first_unit[p.groups] = run;
  __syncthreads();
}

/// The grouped kernel of configuration C (single CTAs, unswapped, whole tiles) for up to
/// MAX_GROUPS groups, staging D through BUFFERS chunks per consumer.
template <typename C, int MAX_GROUPS, int BUFFERS, bool A_MN, bool B_MN, typename Acc, typename In>
struct GroupedKernel {
  static_assert(C::CLUSTER == 1 && !C::SWAPPED && !C::STREAM_K, "single CTAs, whole tiles");
  using Loop = Mainloop<C, A_MN, B_MN, Acc, In>;
  static constexpr int BN = C::BN, STAGES = C::STAGES;
  using Schedule = GroupedSchedule<BM, BN, GROUP>;
  using Reg = typename Loop::Reg;
  static constexpr int kRegs = Loop::kRegs;
  using Staged = StagedEpilogue<BN, Reg, kRegs>;
  struct Smem {
    typename Loop::Stage stage[STAGES];
    alignas(1024) std::uint8_t c_chunk[CONSUMERS][BUFFERS][kCChunkBytes];
    std::uint64_t full[STAGES], empty[STAGES];
    int first_unit[MAX_GROUPS + 1];
    int ends[MAX_GROUPS];
  };
  static_assert(aligned_smem_bytes<Smem>() <= kSmemLimit, "shared memory");
  static_assert(sizeof(typename Loop::Stage) >= sizeof(int) * THREADS, "the table's scan borrows the first slot");
  static constexpr int kSmemBytes = aligned_smem_bytes<Smem>();
  static constexpr int kThreads = THREADS;
  static constexpr unsigned kConsumersBarrier = 1 + CONSUMERS;  // both consumers' 256 threads

  /// The k-slices of unit w: all of K, or (K-grouped) its group's slice of K, which starts at
  /// first_k and may end inside its last slice.
  static __device__ int first_k(const GroupedParams& p, const typename Schedule::Unit& w) {
    return p.k_grouped() ? w.k_begin : 0;
  }
  static __device__ int slices(const GroupedParams& p, const typename Schedule::Unit& w) {
    const std::int64_t depth = p.k_grouped() ? w.k_end - w.k_begin : p.k;
    return static_cast<int>((depth + BK - 1) / BK);
  }

  /// The producer thread: every slice of every unit of this CTA, in order, into the ring.
  static __device__ void produce(Smem& s, const Schedule& sched, const GroupedParams& p, const CUtensorMap* map_a,
                                 const CUtensorMap* map_b) {
    unsigned it = 0;  // the ring position
    const int total = sched.total();
    for (int u = blockIdx.x; u < total; u += gridDim.x) {
      const typename Schedule::Unit w = sched.unit(u);
      const int kt_end = slices(p, w), k0 = first_k(p, w);
      for (int kt = 0; kt < kt_end; ++kt, ++it) {
        const unsigned slot = it % STAGES;
        const int k = k0 + kt * BK;
        mbar_wait(&s.empty[slot], ((it / STAGES) & 1) ^ 1);
        std::uint64_t* full = &s.full[slot];
        mbar_arrive_expect_tx(full, Loop::TileA::kBytes + Loop::TileB::kBytes);
        if (p.masked())
          Loop::TileA::load_batched(s.stage[slot].a, map_a, w.m0, k, w.group * p.a_steps, full);
        else  // rows past the group's end belong to the next group (their D is not stored) or are zeros past M
          Loop::TileA::load(s.stage[slot].a, map_a, w.row0 + w.m0, k, full);
        Loop::TileB::load_batched(s.stage[slot].b, map_b, w.n0, k, w.group * p.b_steps, full);
      }
    }
  }

  /// K-grouped: zeroes k rows [valid, BK) of a slot, which belong to the next group (or are TMA's
  /// zeros past K), in both operands, so that no value of the next group (an Inf would make NaN)
  /// reaches the product. Both operands are MN-major: whole 128-byte rows of 64-wide blocks,
  /// whatever the swizzle. Consumer c clears its own block of A and every other block of B; then
  /// the two wait for each other, the writes made visible to the tensor cores' async proxy.
  static __device__ void clear_slice_tail(typename Loop::Stage& slot, int valid, int consumer) {
    if constexpr (A_MN && B_MN) {
      const int t = threadIdx.x % 128, units = (BK - valid) * kSwizzleRow / 16;
      auto clear = [&](std::uint8_t* block) {
        uint4* from = reinterpret_cast<uint4*>(block + valid * kSwizzleRow);
        for (int i = t; i < units; i += 128) from[i] = make_uint4(0, 0, 0, 0);
      };
      clear(slot.a + consumer * Loop::TileA::kBlockBytes);
      for (int j = consumer; j < BN / 64; j += CONSUMERS) clear(slot.b + j * Loop::TileB::kBlockBytes);
      fence_proxy_async();
      named_barrier_sync(kConsumersBarrier, CONSUMERS * 128);
    }
  }

  /// A consumer warpgroup: each unit's 64 rows of this consumer, accumulated over the unit's
  /// slices and stored into the group's rows of D only.
  static __device__ void consume(Smem& s, const Schedule& sched, const GroupedParams& p, int consumer) {
    const int row = 64 * consumer;
    const unsigned barrier_id = 1 + consumer;  // a named barrier for the consumer's 128 threads
    const int total = sched.total();
    unsigned it = 0;
    std::uint64_t desc_a, desc_b;
    Loop::descriptors(s, row, &desc_a, &desc_b);
    Reg acc[kRegs];
    zero_accumulators(acc);
    const int size = data_type_size(p.out.d_type);
    typename Schedule::Unit next = blockIdx.x < total ? sched.unit(blockIdx.x) : typename Schedule::Unit{};
    for (int u = blockIdx.x; u < total; u += gridDim.x) {
      const typename Schedule::Unit w = next;
      const bool more = u + static_cast<int>(gridDim.x) < total;
      typename Loop::Unit whole{};
      whole.k_begin = 0, whole.k_end = slices(p, w);
      if (whole.k_end > 0) {
        const int tail = p.k_grouped() ? (w.k_end - w.k_begin) % BK : 0;  // valid k of a last, partial slice
        Loop::template accumulate<1, true>(
            s, whole, it, acc, desc_a, desc_b,
            [&](int) {
              if (more) next = sched.unit(u + gridDim.x);  // while the unit's first wgmmas run
            },
            [&](int kt, unsigned slot) {
              if (tail != 0 && kt == whole.k_end - 1) clear_slice_tail(s.stage[slot], tail, consumer);
            });
      } else {  // no k: D = 0 on the group's rows
        zero_accumulators(acc);
        if (more) next = sched.unit(u + gridDim.x);
      }
      Output o = p.out;
      const std::int64_t first =
          p.masked() || p.k_grouped() ? w.group * p.out.stride_d : static_cast<std::int64_t>(w.row0) * p.out.ldd;
      o.d = static_cast<char*>(p.out.d) + first * size;
      o.m = w.rows;
      // No C and no fused epilogue: f32 D from registers (f32 accumulators only), 16-bit D by rows.
      if (is_f32_output<Reg>(p.out))
        store_accumulators_as<float, BN>(o, w.m0 + row, w.n0, acc);
      else
        Staged::store_rows(s.c_chunk[consumer], o, acc, w.m0 + row, w.n0, barrier_id);
    }
  }

  static __device__ __forceinline__ void run(const GroupedParams& p, const CUtensorMap& map_a,
                                             const CUtensorMap& map_b) {
    Smem& s = aligned_smem<Smem>();
    const int warpgroup = __shfl_sync(0xffffffff, static_cast<int>(threadIdx.x / 128), 0);
    if (threadIdx.x == 0) {
      if (p.k > 0) prefetch_tensor_map(&map_a), prefetch_tensor_map(&map_b);
      Loop::init_barriers(s);
      fence_barrier_init();
    }
    // The ring is idle until the table is built: its first slot holds the scan's scratch.
    const int tiles_n = static_cast<int>((p.n + BN - 1) / BN);
    build_grouped_table_in_block<BM>(p, tiles_n, s.ends, s.first_unit, reinterpret_cast<int*>(&s.stage[0]));
    const Schedule sched{s.first_unit, s.ends, p.groups, tiles_n, p.layout, p.rows_each};
    if (warpgroup == 0) {
      release_registers<PRODUCER_REGS>();
      if (threadIdx.x == 0) produce(s, sched, p, &map_a, &map_b);
    } else {
      claim_registers<CONSUMER_REGS>();
      consume(s, sched, p, warpgroup - 1);
    }
  }
};

/// The __global__ entry of the grouped kernels.
template <typename K>
__global__ void __launch_bounds__(K::kThreads, 1)
    grouped_kernel(GroupedParams p, const __grid_constant__ CUtensorMap map_a, const __grid_constant__ CUtensorMap map_b) {
  K::run(p, map_a, map_b);
}

/// A grouped kernel family: BN-wide tiles, STAGES ring slots, up to MAX_GROUPS groups, BUFFERS
/// staging chunks per consumer; F16_ACCUM = false builds f32 accumulators only.
template <int BN, int STAGES, int MAX_GROUPS, int BUFFERS, bool F16_ACCUM>
struct GroupedTiles {
  template <bool A_MN, bool B_MN, typename Acc, typename In>
  using Kernel = GroupedKernel<Persistent<BN, 1, STAGES, false>, MAX_GROUPS, BUFFERS, A_MN, B_MN, Acc, In>;

  /// Launches the instantiation for l's operand majors and types on l.grid CTAs.
  static Status launch(const KernelLaunch& l, const GroupedParams& p, std::string* message) {
    return with_kernel<Kernel, F16_ACCUM>(l, message, [&](auto tag) {
      using K = typename decltype(tag)::type;
      const void* fn = reinterpret_cast<const void*>(&grouped_kernel<K>);
      if (Status s = sm90::set_smem_limit(fn, K::kSmemBytes, message); s != Status::Success) return s;
      grouped_kernel<K><<<l.grid, K::kThreads, K::kSmemBytes, l.stream>>>(p, l.map_a, l.map_b);
      return launch_status(message);
    });
  }
};

}  // namespace hgemm::detail::engine
