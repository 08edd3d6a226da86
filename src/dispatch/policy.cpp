#include "dispatch/policy.h"

#include <algorithm>
#include <cstdint>
#include <vector>

#include "kernels/sm90/small_tiles.h"

namespace hgemm::detail {
namespace {

std::int64_t tiles(const Matmul& p, std::int64_t bm, std::int64_t bn) { return ((p.m + bm - 1) / bm) * ((p.n + bn - 1) / bn); }

/// Few rows against many columns with op(A) = N: the rows become wgmma's narrow N when the
/// operands are swapped (C^T = op(B)^T·op(A)^T).
bool runs_swapped(const Matmul& p) { return p.m <= 64 && p.n > p.m && p.op_a == Op::N && p.k > 0; }

/// C with at most a quarter of the SMs' worth of 256×256 tiles and K ≤ 4096: 128×128 tiles on one
/// warpgroup beat the larger-tile kernels there (measured: docs/ladder.md#auto).
bool few_tiles_short_k(const Matmul& p, const Device& d) { return tiles(p, 256, 256) * 4 <= d.sms && p.k <= 4096; }

/// Whether the small-tile kernel runs p faster than the persistent one: C with fewer 128×128 tiles
/// than SMs, except the swapped skinny shapes it does not take (M ≤ 64 with op(A) = N, unless
/// M > 32 and K ≤ 4096) and a long K over a C too small even for 64×16 tiles; and the decode
/// shapes it runs swapped in one wave (measured: docs/ladder.md#small-tiles, #decode-shapes).
bool small_tiles_suit(const Matmul& p, const Device& d) {
  if (runs_swapped(p) && p.m <= sm90_wgmma_tma_small_tiles::kSwappedMaxRows &&
      sm90_wgmma_tma_small_tiles::swapped_tile_rows(p.n, d.sms) > 0)
    return true;
  if (tiles(p, 128, 128) >= d.sms) return false;
  if (runs_swapped(p) && !(p.m > 32 && p.k <= 4096)) return false;
  const std::int64_t smallest = p.op_b == Op::N ? tiles(p, 64, 64) : tiles(p, 64, 16);
  return smallest * 2 >= d.sms || p.k <= 8192;
}

/// The decode kernel leaves a long K over few columns to kernels that split K.
bool decode_kernel_suits(const Matmul& p) { return (p.n + 7) / 8 >= 64 || p.k <= 16384; }

/// The ladder entries auto takes off Hopper, fastest first (measured: docs/ladder.md#auto).
const char* const kLadderByPreference[] = {
    "mma.m16n8k16_stages_swizzle", "mma.m16n8k16_stages",      "wmma.m16n16k16_stages",
    "mma.m16n8k16_mma2x4_warp4x4", "wmma.m16n16k16_mma4x2_warp2x4", "mma.m16n8k16_naive",
    "wmma.m16n16k16_naive",        "cuda.t8x8_hfma2",           "cuda.t8x8_f16x8_pack_bcf_dbuf",
    "cuda.t8x8_f16x8_pack_bcf",    "cuda.t8x8_f16x4_bcf",       "cuda.t8x8_f16x4_pack",
    "cuda.t8x8_f16x4",             "cuda.sliced_k",             "cuda.naive",
};

std::vector<const char*> candidates(const Matmul& p, const Device& d) {
  std::vector<const char*> out;
  if (p.all_f16()) {
    if (d.hopper()) {
      if (small_tiles_suit(p, d)) out.push_back("sm90.wgmma_tma_small_tiles");
      if (p.m <= 128 || !few_tiles_short_k(p, d)) out.push_back("sm90.wgmma_tma_ws_persistent");
      out.push_back("sm90.wgmma_tma");
    }
    if (decode_kernel_suits(p)) out.push_back("skinny.m16_mma_nt");
    out.insert(out.end(), std::begin(kLadderByPreference), std::end(kLadderByPreference));
  }
  out.push_back(p.accum == Accum::F16 ? "cublas.acc16" : "cublas.acc32");
  return out;
}

}  // namespace

Status choose_auto(const Matmul& p, const Device& d, Choice* out, std::string* why) {
  Status first = Status::Success;
  std::string first_why, reason;
  for (const char* id : candidates(p, d)) {
    const KernelEntry* e = find_kernel(id);
    if (!e) continue;
    const Status s = check_supported(*e, p, d.cc, &reason);
    if (s == Status::Success) {
      out->entry = e;
      return Status::Success;
    }
    if (first == Status::Success) first = s, first_why = reason;
  }
  *why = "no registered kernel can run this problem; first refusal: " + first_why;
  return first == Status::Success ? Status::UnknownKernel : first;
}

std::string describe(const Choice& c) { return c.entry ? c.entry->info.id : std::string("(none)"); }

}  // namespace hgemm::detail
