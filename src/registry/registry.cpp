// SPDX-License-Identifier: Apache-2.0
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
      // The production engine that "auto" runs on Hopper, for every type.
      &entry_engine_sm90(),
      &entry_engine_sm90_pingpong(),
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

bool aligned(const void* ptr, int bytes) { return reinterpret_cast<std::uintptr_t>(ptr) % static_cast<unsigned>(bytes) == 0; }

const char* op_name(Op op) { return op == Op::N ? "N" : "T"; }

std::string type_list(unsigned bits) {
  std::string out;
  for (DataType t : {DataType::F16, DataType::BF16, DataType::F32})
    if (bits & type_bit(t)) out += std::string(out.empty() ? "" : ", ") + data_type_name(t);
  return out;
}

}  // namespace

Status check_supported(const KernelEntry& entry, const Matmul& p, int cc, std::string* why) {
  const KernelInfo& info = entry.info;
  if ((info.ops & op_bit(p.op_a, p.op_b)) == 0) {
    *why = info.id + " does not implement op(A) = " + op_name(p.op_a) + ", op(B) = " + op_name(p.op_b);
    return Status::UnsupportedOp;
  }
  if ((info.accums & accum_bit(p.accum)) == 0) {
    *why = info.id + " does not implement " + (p.accum == Accum::F16 ? "f16" : "f32") + " accumulation";
    return Status::UnsupportedAccum;
  }
  const bool in_ok = (info.in_types & type_bit(p.a_type)) && (info.in_types & type_bit(p.b_type));
  const bool out_ok = (info.out_types & type_bit(p.d_type)) && (!p.c_read() || (info.out_types & type_bit(p.c_type)));
  if (!in_ok || !out_ok) {
    *why = info.id + " takes A and B in " + type_list(info.in_types) + ", C and D in " + type_list(info.out_types) +
           " (given A " + data_type_name(p.a_type) + ", B " + data_type_name(p.b_type) + ", C " +
           (p.c_read() ? data_type_name(p.c_type) : "unread") + ", D " + data_type_name(p.d_type) + ")";
    return Status::UnsupportedType;
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
    // `align` elements of 2 bytes, for every product of a batch (the strides move the pointers).
    const int al = info.align, bytes = 2 * al;
    bool ok = p.lda % al == 0 && p.ldb % al == 0 && p.ldd % al == 0 && (!p.c_read() || p.ldc % al == 0);
    for (std::int64_t i = 0; ok && i < (p.batch > 1 ? 2 : 1); ++i) {  // products 0 and 1 cover every stride
      const Matmul q = p.product(i);
      ok = (!p.a_used() || aligned(q.a, bytes)) && (!p.b_used() || aligned(q.b, bytes)) && aligned(q.d, bytes) &&
           (!p.c_read() || aligned(q.c, bytes));
    }
    if (!ok) {
      *why = info.id + " needs A, B, C and D aligned to " + std::to_string(bytes) +
             " bytes and lda, ldb, ldc, ldd (and batch strides) multiples of " + std::to_string(al);
      return Status::Misaligned;
    }
  }
  return entry.extra_check ? entry.extra_check(p, why) : Status::Success;
}

Problem ladder_problem(const Matmul& p) {
  Problem q;
  q.m = p.m, q.n = p.n, q.k = p.k, q.op_a = p.op_a, q.op_b = p.op_b, q.alpha = p.alpha, q.beta = p.beta;
  q.a = static_cast<const __half*>(p.a), q.lda = p.lda;
  q.b = static_cast<const __half*>(p.b), q.ldb = p.ldb;
  q.c = static_cast<__half*>(p.d), q.ldc = p.ldd;
  q.accum = p.accum;
  return q;
}

}  // namespace hgemm::detail
