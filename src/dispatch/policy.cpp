// SPDX-License-Identifier: Apache-2.0
#include "dispatch/policy.h"

#include <vector>

#include "dispatch/batch_fold.h"
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

/// An engine entry's plan for p on d: engine.sm90 takes the engine's rules (plan_engine), the
/// ping-pong entry its one kernel for every shape. False for an entry without a planner here.
bool plan_entry(const KernelEntry& e, const Matmul& p, const Device& d, engine::Plan* out) {
  if (&e == &entry_engine_sm90()) {
    *out = plan_engine(p, d);
    return true;
  }
  if (&e == &entry_engine_sm90_pingpong()) {
    *out = plan_pingpong(p, d);
    return true;
  }
  return false;
}

/// Entry e, which supports p, as what runs p: with its plan where it runs one.
Status choice_of(const KernelEntry& e, const Matmul& p, const Device& d, Choice* out, std::string* why) {
  Choice c;
  c.entry = &e;
  c.engine = e.run_plan != nullptr;
  if (c.engine && !plan_entry(e, p, d, &c.plan)) {
    *why = e.info.id + " runs a plan, and the dispatch has no planner for it";
    return Status::UnknownKernel;
  }
  *out = c;
  return Status::Success;
}

}  // namespace

Status choose_auto(const Matmul& problem, const Device& d, Choice* out, std::string* why) {
  const bool one_product = batch_is_one_product(problem);
  const Matmul p = one_product ? as_one_product(problem) : problem;
  Status first = Status::Success;
  std::string first_why, reason;
  for (const char* id : candidates(p, d)) {
    const KernelEntry* e = find_kernel(id);
    if (!e) continue;
    const Status s = check_supported(*e, p, d.cc, &reason);
    if (s == Status::Success) {
      const Status chosen = choice_of(*e, p, d, out, why);
      out->one_product = one_product;
      return chosen;
    }
    if (first == Status::Success) first = s, first_why = reason;
  }
  *why = "no registered kernel can run this problem; first refusal: " + first_why;
  return first == Status::Success ? Status::UnknownKernel : first;
}

Status choose_kernel(const Matmul& problem, std::string_view id, const Device& d, Choice* out, std::string* why) {
  if (id == "auto") return choose_auto(problem, d, out, why);
  const bool one_product = batch_is_one_product(problem);
  const Matmul p = one_product ? as_one_product(problem) : problem;
  const KernelEntry* e = find_kernel(std::string(id));
  if (!e) {
    *why = "no kernel named '" + std::string(id) + "' (see hgemm::kernels())";
    return Status::UnknownKernel;
  }
  if (Status s = check_supported(*e, p, d.cc, why); s != Status::Success) return s;
  // A baseline (cuBLAS) named with an epilogue runs as auto would run it: then the elementwise
  // pass. A ladder rung is a lesson in one kernel, and refuses.
  if (p.epilogue.enabled() && !e->fuses_epilogue && !e->info.baseline) {
    *why = e->info.id + " cannot apply a fused epilogue (bias, activation, aux, scales); use kernel \"auto\", "
                        "which follows such a kernel with an elementwise pass, or \"engine.sm90\" on Hopper";
    return Status::UnsupportedEpilogue;
  }
  const Status chosen = choice_of(*e, p, d, out, why);
  out->one_product = one_product;
  return chosen;
}

Matmul run_of(const Choice& c, const Matmul& p) { return c.one_product ? as_one_product(p) : p; }

std::string describe(const Choice& c) {
  if (!c.entry) return "(none)";
  const std::string what = c.engine ? c.entry->info.id + ": " + engine::describe(c.plan) : c.entry->info.id;
  return c.one_product ? what + " (the batch as one product)" : what;
}

}  // namespace hgemm::detail
