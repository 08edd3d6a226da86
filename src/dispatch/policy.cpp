#include "dispatch/policy.h"

#include <vector>

#include "dispatch/engine_policy.h"

namespace hgemm::detail {
namespace {

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

/// In order of preference: on Hopper the engine, for any type; for f16 the decode kernel and the
/// tensor-core ladder; cuBLAS last (bf16 and f32 outputs off Hopper, and what nothing else takes).
std::vector<const char*> candidates(const Matmul& p, const Device& d) {
  std::vector<const char*> out;
  if (d.hopper()) out.push_back("engine.sm90");
  if (p.all_f16()) {
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
      out->engine = e->info.family == "engine";
      if (out->engine) out->plan = plan_engine(p, d);
      return Status::Success;
    }
    if (first == Status::Success) first = s, first_why = reason;
  }
  *why = "no registered kernel can run this problem; first refusal: " + first_why;
  return first == Status::Success ? Status::UnknownKernel : first;
}

std::string describe(const Choice& c) {
  if (!c.entry) return "(none)";
  return c.engine ? c.entry->info.id + ": " + engine::describe(c.plan) : c.entry->info.id;
}

}  // namespace hgemm::detail
