// SPDX-License-Identifier: Apache-2.0
#include "analysis/ladder.h"

#include <cuda_runtime_api.h>  // __host__ __device__ in the layouts

#define HGEMM_LAYOUT_ONLY
#include "kernels/cuda_core/02_sliced_k.cu"
#include "kernels/cuda_core/03_t8x8_f16x4.cu"
#include "kernels/cuda_core/04_t8x8_f16x4_pack.cu"
#include "kernels/cuda_core/05_t8x8_f16x4_bcf.cu"
#include "kernels/cuda_core/06_t8x8_f16x8_pack_bcf.cu"
#include "kernels/cuda_core/07_t8x8_f16x8_pack_bcf_dbuf.cu"
#include "kernels/cuda_core/08_t8x8_hfma2.cu"
#undef HGEMM_LAYOUT_ONLY

namespace hgemm::banks {

namespace {

using Addr = std::optional<std::uint32_t>;
constexpr std::uint32_t kHalf = 2, kHalf2 = 4;  // bytes per element

// 1-D blocks of 256: thread tid = 32·warp + lane, thread tile (ty, tx) = (tid / 16, tid % 16).
int tid_of(int warp, int lane) { return warp * 32 + lane; }
int tx_of(int warp, int lane) { return tid_of(warp, lane) % 16; }
int ty_of(int warp, int lane) { return tid_of(warp, lane) / 16; }

KernelSmem sliced_k() {
  namespace L = hgemm::detail::cuda_sliced_k;
  // A 32×32 block: warp = ty, lane = tx. The compiler reads a row of s_a 4 halves at a time
  // (LDS.64) and s_b one half at a time (LDS.U16).
  KernelSmem k{"cuda.sliced_k", 32, L::BM, L::BN, L::BK, 1, {}};
  k.instructions = {
      {"STS.U16 s_a (A element)", "s_a", true, 2, 1, [](int w, int l, int, int) -> Addr { return L::Smem::a_store(w, l) * kHalf; }},
      {"STS.U16 s_b (B element)", "s_b", true, 2, 1, [](int w, int l, int, int) -> Addr { return L::Smem::b_store(w, l) * kHalf; }},
      {"LDS.64 s_a (4 k of A's row)", "s_a", false, 8, L::BK / 4,
       [](int w, int, int i, int) -> Addr { return L::Smem::a_read(w, 4 * i) * kHalf; }},
      {"LDS.U16 s_b (B at one k)", "s_b", false, 2, L::BK, [](int, int l, int i, int) -> Addr { return L::Smem::b_read(l, i) * kHalf; }},
  };
  return k;
}

// Rungs 03 and 04 read A and B with the same LDS.64s: 4 consecutive k of one A row, and 4
// consecutive columns of B at one k.
template <typename S>
std::vector<SmemInstruction> t8x8_reads() {
  return {
      {"LDS.64 s_a (4 k of one A row)", "s_a", false, 8, 16,
       [](int w, int l, int i, int) -> Addr { return S::a_read(ty_of(w, l), i / 2, 4 * (i % 2)) * kHalf; }},
      {"LDS.64 s_b (4 columns of B)", "s_b", false, 8, 16,
       [](int w, int l, int i, int) -> Addr { return S::b_read(tx_of(w, l), 4 * (i % 2), i / 2) * kHalf; }},
  };
}

KernelSmem t8x8_f16x4() {
  namespace L = hgemm::detail::cuda_t8x8_f16x4;
  KernelSmem k{"cuda.t8x8_f16x4", 8, L::BM, L::BN, L::BK, 1, {}};
  k.instructions = {
      {"STS.32 s_a (half2 of A)", "s_a", true, 4, 2,
       [](int w, int l, int i, int) -> Addr { return L::Smem::a_store(tid_of(w, l), 2 * i) * kHalf; }},
      {"STS.32 s_b (half2 of B)", "s_b", true, 4, 2,
       [](int w, int l, int i, int) -> Addr { return L::Smem::b_store(tid_of(w, l), 2 * i) * kHalf; }},
  };
  for (auto& r : t8x8_reads<L::Smem>()) k.instructions.push_back(r);
  return k;
}

KernelSmem t8x8_f16x4_pack() {
  namespace L = hgemm::detail::cuda_t8x8_f16x4_pack;
  KernelSmem k{"cuda.t8x8_f16x4_pack", 8, L::BM, L::BN, L::BK, 1, {}};
  k.instructions = {
      {"STS.64 s_a (4 halves of A)", "s_a", true, 8, 1, [](int w, int l, int, int) -> Addr { return L::Smem::a_store(tid_of(w, l)) * kHalf; }},
      {"STS.64 s_b (4 halves of B)", "s_b", true, 8, 1, [](int w, int l, int, int) -> Addr { return L::Smem::b_store(tid_of(w, l)) * kHalf; }},
  };
  for (auto& r : t8x8_reads<L::Smem>()) k.instructions.push_back(r);
  return k;
}

KernelSmem t8x8_f16x4_bcf() {
  namespace L = hgemm::detail::cuda_t8x8_f16x4_bcf;
  KernelSmem k{"cuda.t8x8_f16x4_bcf", 8, L::BM, L::BN, L::BK, 1, {}};
  k.instructions = {
      {"STS.U16 s_a (A transposed)", "s_a", true, 2, 4,
       [](int w, int l, int i, int) -> Addr { return L::Smem::a_store(tid_of(w, l), i) * kHalf; }},
      {"STS.64 s_b (4 halves of B)", "s_b", true, 8, 1, [](int w, int l, int, int) -> Addr { return L::Smem::b_store(tid_of(w, l)) * kHalf; }},
      {"LDS.64 s_a (A quadrant)", "s_a", false, 8, 2 * L::BK,
       [](int w, int l, int i, int) -> Addr { return L::Smem::a_read(ty_of(w, l), i % 2, i / 2) * kHalf; }},
      {"LDS.64 s_b (B quadrant)", "s_b", false, 8, 2 * L::BK,
       [](int w, int l, int i, int) -> Addr { return L::Smem::b_read(tx_of(w, l), i % 2, i / 2) * kHalf; }},
  };
  return k;
}

KernelSmem t8x8_f16x8_pack_bcf() {
  namespace L = hgemm::detail::cuda_t8x8_f16x8_pack_bcf;
  KernelSmem k{"cuda.t8x8_f16x8_pack_bcf", 8, L::BM, L::BN, L::BK, 1, {}};
  k.instructions = {
      {"STS.U16 s_a (A transposed)", "s_a", true, 2, 4,
       [](int w, int l, int i, int) -> Addr { return L::Smem::a_store(tid_of(w, l), i) * kHalf; }},
      {"STS.64 s_b (4 halves of B)", "s_b", true, 8, 1, [](int w, int l, int, int) -> Addr { return L::Smem::b_store(tid_of(w, l)) * kHalf; }},
      {"LDS.128 s_a (8 rows of A)", "s_a", false, 16, L::BK,
       [](int w, int l, int i, int) -> Addr { return L::Smem::a_read(ty_of(w, l), i) * kHalf; }},
      {"LDS.128 s_b (8 columns of B)", "s_b", false, 16, L::BK,
       [](int w, int l, int i, int) -> Addr { return L::Smem::b_read(tx_of(w, l), i) * kHalf; }},
  };
  return k;
}

KernelSmem t8x8_f16x8_pack_bcf_dbuf() {
  namespace L = hgemm::detail::cuda_t8x8_f16x8_pack_bcf_dbuf;
  // Slice s computes from buffer s mod 2 and stores the next slice into the other one.
  KernelSmem k{"cuda.t8x8_f16x8_pack_bcf_dbuf", 8, L::BM, L::BN, L::BK, 2, {}};
  k.instructions = {
      {"STS.U16 s_a (A transposed)", "s_a", true, 2, L::A_PER,
       [](int w, int l, int i, int s) -> Addr { return L::Smem::a_store((s + 1) % 2, tid_of(w, l), i) * kHalf; }},
      {"STS.128 s_b (8 halves of B)", "s_b", true, 16, 1,
       [](int w, int l, int, int s) -> Addr { return L::Smem::b_store((s + 1) % 2, tid_of(w, l)) * kHalf; }},
      {"LDS.128 s_a (8 rows of A)", "s_a", false, 16, L::BK,
       [](int w, int l, int i, int s) -> Addr { return L::Smem::a_read(s % 2, ty_of(w, l), i) * kHalf; }},
      {"LDS.128 s_b (8 columns of B)", "s_b", false, 16, L::BK,
       [](int w, int l, int i, int s) -> Addr { return L::Smem::b_read(s % 2, tx_of(w, l), i) * kHalf; }},
  };
  return k;
}

KernelSmem t8x8_hfma2() {
  namespace L = hgemm::detail::cuda_t8x8_hfma2;
  // s_a and s_b hold k-pairs as half2: their offsets count 4-byte elements.
  KernelSmem k{"cuda.t8x8_hfma2", 8, L::BM, L::BN, L::BK, 2, {}};
  k.instructions = {
      {"STS.32 s_a (k-pair of A, transposed)", "s_a", true, 4, L::A_LOADS * L::A_CHUNK / 2,
       [](int w, int l, int i, int s) -> Addr {
         return L::Smem::a_store((s + 1) % 2, tid_of(w, l), i / (L::A_CHUNK / 2), i % (L::A_CHUNK / 2)) * kHalf2;
       }},
      {"STS.128 s_b (4 columns of a B row pair)", "s_b", true, 16, L::B_LOADS * L::B_PER / 4,
       [](int w, int l, int i, int s) -> Addr {
         return (L::Smem::b_store((s + 1) % 2, tid_of(w, l), i / (L::B_PER / 4)) + 4 * (i % (L::B_PER / 4))) * kHalf2;
       }},
      {"LDS.128 s_a (k-pairs of 4 rows)", "s_a", false, 16, 2 * L::KP,
       [](int w, int l, int i, int s) -> Addr { return (L::Smem::a_read(s % 2, ty_of(w, l), i / 2) + 4 * (i % 2)) * kHalf2; }},
      {"LDS.128 s_b (k-pairs of 4 columns)", "s_b", false, 16, 2 * L::KP,
       [](int w, int l, int i, int s) -> Addr { return L::Smem::b_read(s % 2, tx_of(w, l), i / 2, i % 2) * kHalf2; }},
  };
  return k;
}

}  // namespace

const std::vector<KernelSmem>& ladder_kernels() {
  static const std::vector<KernelSmem> list = {sliced_k(),      t8x8_f16x4(),          t8x8_f16x4_pack(),
                                               t8x8_f16x4_bcf(), t8x8_f16x8_pack_bcf(), t8x8_f16x8_pack_bcf_dbuf(),
                                               t8x8_hfma2()};
  return list;
}

InstructionCost analyse(const KernelSmem& k, const SmemInstruction& ins) {
  InstructionCost c;
  double wavefronts = 0, phases = 0, requests = 0;
  for (int s = 0; s < k.slice_period; ++s)
    for (int w = 0; w < k.warps; ++w)
      for (int i = 0; i < ins.per_slice; ++i) {
        Request r;
        r.width = ins.width, r.store = ins.store;
        for (int l = 0; l < kWarp; ++l)
          if (const Addr a = ins.address(w, l, i, s)) r.lanes[l] = {true, *a};
        const Cost cost_ = cost(r);
        wavefronts += cost_.wavefronts, phases += cost_.phases, requests += 1;
        c.worst_ways = std::max(c.worst_ways, cost_.ways);
      }
  c.wavefronts_per_request = wavefronts / requests;
  c.ideal_wavefronts_per_request = phases / requests;
  c.requests_per_block_slice = static_cast<std::int64_t>(k.warps) * ins.per_slice;
  return c;
}

KernelTotals predict(const KernelSmem& k, std::int64_t m, std::int64_t n, std::int64_t kdim) {
  const double blocks = double((m + k.bm - 1) / k.bm) * double((n + k.bn - 1) / k.bn);
  const double slices = double((kdim + k.bk - 1) / k.bk);
  KernelTotals t;
  for (const SmemInstruction& ins : k.instructions) {
    const InstructionCost c = analyse(k, ins);
    const double requests = blocks * slices * double(c.requests_per_block_slice);
    (ins.store ? t.store_requests : t.load_requests) += requests;
    (ins.store ? t.store_wavefronts : t.load_wavefronts) += requests * c.wavefronts_per_request;
  }
  return t;
}

}  // namespace hgemm::banks
