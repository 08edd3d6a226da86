#include "registry/registry.h"

#include <cstdint>

namespace hgemm::detail {

const std::vector<const KernelEntry*>& registry() {
  static const std::vector<const KernelEntry*> table = {
      // CUDA-core ladder of the Toy-HGEMM technical report, then one rung beyond it.
      &entry_cuda_naive(),
      &entry_cuda_sliced_k(),
      &entry_cuda_t8x8_f16x4(),
      &entry_cuda_t8x8_f16x4_pack(),
      &entry_cuda_t8x8_f16x4_bcf(),
      &entry_cuda_t8x8_f16x8_pack_bcf(),
      &entry_cuda_t8x8_f16x8_pack_bcf_dbuf(),
      &entry_cuda_t8x8_hfma2(),
      // Tensor cores, sm_80 style: nvcuda::wmma, then mma.sync PTX with ldmatrix.
      &entry_wmma_m16n16k16_naive(),
      &entry_wmma_m16n16k16_mma4x2_warp2x4(),
      &entry_wmma_m16n16k16_stages(),
      &entry_mma_m16n8k16_naive(),
      &entry_mma_m16n8k16_mma2x4_warp4x4(),
      &entry_mma_m16n8k16_stages(),
      &entry_mma_m16n8k16_stages_swizzle(),
      // Decode shapes: M <= 16 streamed against B stored N x K.
      &entry_skinny_m16_mma_nt(),
      // Hopper: wgmma, TMA, mbarrier pipelines, warp specialisation, persistence, clusters.
      &entry_sm90_wgmma_tma(),
      &entry_sm90_wgmma_tma_ws(),
      &entry_sm90_wgmma_tma_ws_persistent(),
      &entry_sm90_wgmma_tma_small_tiles(),
      // Baselines.
      &entry_cublas_acc16(),
      &entry_cublas_acc32(),
  };
  return table;
}

const KernelEntry* find_kernel(const std::string& id) {
  for (const KernelEntry* e : registry())
    if (e->info.id == id) return e;
  return nullptr;
}

namespace {

bool aligned(const void* ptr, int elements) {
  return reinterpret_cast<std::uintptr_t>(ptr) % (2u * static_cast<unsigned>(elements)) == 0;
}

const char* op_name(Op op) { return op == Op::N ? "N" : "T"; }

}  // namespace

Status check_supported(const KernelEntry& entry, const Problem& p, int cc, std::string* why) {
  const KernelInfo& info = entry.info;
  if ((info.ops & op_bit(p.op_a, p.op_b)) == 0) {
    *why = info.id + " does not implement op(A) = " + op_name(p.op_a) + ", op(B) = " + op_name(p.op_b);
    return Status::UnsupportedOp;
  }
  if ((info.accums & accum_bit(p.accum)) == 0) {
    *why = info.id + " does not implement " + (p.accum == Accum::F16 ? "f16" : "f32") + " accumulation";
    return Status::UnsupportedAccum;
  }
  if (cc < info.min_cc || (info.max_cc != 0 && cc > info.max_cc)) {
    *why = info.id + " needs compute capability " + std::to_string(info.min_cc / 10) + "." +
           std::to_string(info.min_cc % 10) +
           (info.max_cc ? " to " + std::to_string(info.max_cc / 10) + "." + std::to_string(info.max_cc % 10)
                        : std::string(" or newer")) +
           "; this GPU is " + std::to_string(cc / 10) + "." + std::to_string(cc % 10);
    return Status::UnsupportedArch;
  }
  if (info.align > 1) {
    const int al = info.align;
    const bool ok = aligned(p.a, al) && aligned(p.b, al) && aligned(p.c, al) && p.lda % al == 0 &&
                    p.ldb % al == 0 && p.ldc % al == 0;
    if (!ok) {
      *why = info.id + " needs A, B, C aligned to " + std::to_string(2 * al) +
             " bytes and lda, ldb, ldc multiples of " + std::to_string(al);
      return Status::Misaligned;
    }
  }
  return entry.extra_check ? entry.extra_check(p, why) : Status::Success;
}

}  // namespace hgemm::detail
