// SPDX-License-Identifier: Apache-2.0
// The grouped entry point (mixture-of-experts layouts): validation of every argument the host
// can check (the group sizes are on the device and never read here), the device and its
// pointers, then the engine's plan and launch.
#include <cuda_runtime_api.h>

#include <climits>
#include <cstdint>
#include <string>

#include "api/errors.h"
#include "api/validate.h"
#include "common/device.h"
#include "common/grouped_matmul.h"
#include "dispatch/engine_policy.h"
#include "engine/sm90/grouped.h"
#include "engine/sm90/grouped_schedule.h"

namespace hgemm {
namespace detail {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

bool valid_type(DataType t) { return t == DataType::F16 || t == DataType::BF16 || t == DataType::F32; }

Status validate_shape(const GroupedMatmul& p) {
  if (p.layout != GroupedLayout::Contiguous && p.layout != GroupedLayout::Masked &&
      p.layout != GroupedLayout::KGrouped)
    return fail(Status::InvalidArgument, "unknown GroupedLayout value " + str(static_cast<int>(p.layout)));
  for (Op op : {p.op_a, p.op_b})
    if (op != Op::N && op != Op::T) return fail(Status::InvalidArgument, "unknown Op value " + str(static_cast<int>(op)));
  if (p.accum != Accum::F16 && p.accum != Accum::F32)
    return fail(Status::InvalidArgument, "unknown Accum value " + str(static_cast<int>(p.accum)));
  if (p.groups < 0 || p.m < 0 || p.n < 0 || p.k < 0)
    return fail(Status::InvalidSize, "negative size: groups = " + str(p.groups) + ", M = " + str(p.m) +
                                         ", N = " + str(p.n) + ", K = " + str(p.k));
  if (p.groups > kMaxGroupedGroups)
    return fail(Status::ProblemTooLarge, "groups = " + str(p.groups) + " is more than grouped_matmul takes (" +
                                             str(kMaxGroupedGroups) + ")");
  if (p.stride_a < 0 || p.stride_b < 0 || p.stride_d < 0)
    return fail(Status::InvalidSize, "negative stride: stride_a = " + str(p.stride_a) + ", stride_b = " +
                                         str(p.stride_b) + ", stride_d = " + str(p.stride_d));
  if (p.layout == GroupedLayout::Contiguous && (p.stride_a != 0 || p.stride_d != 0))
    return fail(Status::InvalidArgument, "the contiguous layout has one A and one D (all groups' rows): stride_a "
                                         "and stride_d must be 0");
  // A group starts at any row; a K×M A would have its groups start at any column, where its
  // tensor map's boxes cannot begin (illegal instruction on the H200).
  if (p.layout == GroupedLayout::Contiguous && p.op_a == Op::T)
    return fail(Status::UnsupportedOp, "the contiguous layout takes A stored M×K (op_a = N); copy a K×M A first");
  if (p.k_grouped() && (p.stride_a != 0 || p.stride_b != 0))
    return fail(Status::InvalidArgument, "the K-grouped layout splits one A and one B along K: stride_a and "
                                         "stride_b must be 0");
  // Likewise K-grouped: a group's slice of K starts at any k, so K must be the operands' outer dimension.
  if (p.k_grouped() && (p.op_a != Op::T || p.op_b != Op::N))
    return fail(Status::UnsupportedOp, "the K-grouped layout takes A stored K×M (op_a = T) and B stored K×N "
                                       "(op_b = N), as the backward pass of a grouped forward has them; copy the "
                                       "operands to that layout first");
  return Status::Success;
}

Status validate_types(const GroupedMatmul& p) {
  for (DataType t : {p.a_type, p.b_type, p.d_type})
    if (!valid_type(t)) return fail(Status::UnsupportedType, "unknown DataType value " + str(static_cast<int>(t)));
  if (Status s = validate_input_types(p.a_type, p.b_type); s != Status::Success) return s;
  if (p.accum == Accum::F16 && (p.a_type != DataType::F16 || p.d_type != DataType::F16))
    return fail(Status::UnsupportedType, "f16 accumulation needs f16 A, B and D; use Accum::F32");
  return Status::Success;
}

Status validate_leading_dims(const GroupedMatmul& p) {
  auto check_ld = [](const char* name, std::int64_t ld, std::int64_t width, const char* what) {
    if (ld >= 1 && ld >= width) return Status::Success;
    return fail(Status::InvalidLeadingDim,
                std::string(name) + " = " + str(ld) + " is smaller than " + what + " = " + str(width > 1 ? width : 1));
  };
  Status s = check_ld("lda", p.lda, p.op_a == Op::N ? p.k : p.m, p.op_a == Op::N ? "K (op(A) = N)" : "M (op(A) = T)");
  if (s == Status::Success)
    s = check_ld("ldb", p.ldb, p.op_b == Op::N ? p.n : p.k, p.op_b == Op::N ? "N (op(B) = N)" : "K (op(B) = T)");
  if (s == Status::Success) s = check_ld("ldd", p.ldd, p.n, "N");
  if (s != Status::Success) return s;
  if (p.d_per_group() && p.groups > 1)
    return matrices_apart("stride_d", p.stride_d, "ldd", p.ldd, p.m, "the groups' D matrices");
  return Status::Success;
}

Status validate_pointers(const GroupedMatmul& p) {
  if (!p.d_used()) return Status::Success;
  const std::int32_t* sizes = p.sizes();
  const char* sizes_name = p.masked() ? "m_valid" : "offsets";
  if (!sizes) return fail(Status::NullPointer, std::string(sizes_name) + " is null but there are " + str(p.groups) + " groups");
  if ((p.masked() ? p.offsets : p.m_valid) != nullptr)
    return fail(Status::InvalidArgument, p.masked()      ? "the masked layout reads m_valid: offsets must be null"
                                         : p.k_grouped() ? "the K-grouped layout reads offsets: m_valid must be null"
                                                         : "the contiguous layout reads offsets: m_valid must be null");
  if (p.k > 0 && !p.a) return fail(Status::NullPointer, "A is null but K = " + str(p.k));
  if (p.k > 0 && !p.b) return fail(Status::NullPointer, "B is null but K = " + str(p.k));
  if (!p.d) return fail(Status::NullPointer, "D is null but D is " + str(p.m) + "x" + str(p.n));
  auto misaligned = [](const void* ptr, int size) { return reinterpret_cast<std::uintptr_t>(ptr) % size != 0; };
  const char* off = p.k > 0 && misaligned(p.a, data_type_size(p.a_type))   ? "A"
                    : p.k > 0 && misaligned(p.b, data_type_size(p.b_type)) ? "B"
                    : misaligned(p.d, data_type_size(p.d_type))            ? "D"
                    : misaligned(sizes, 4)                                 ? sizes_name
                                                                           : nullptr;
  if (off)
    return fail(Status::Misaligned, std::string(off) + " is not aligned to its element size (2 bytes for f16 and "
                                                       "bf16, 4 for f32 and the int32 sizes)");
  return Status::Success;
}

// What the kernel can index: TMA coordinates are 32-bit signed, strides below 2^40 bytes, and
// the units of the grid walk fit an int.
Status validate_limits(const GroupedMatmul& p) {
  const std::int64_t limit = INT_MAX - 512, most = std::int64_t(1) << 37;
  if (p.m > limit || p.n > limit || p.k > limit)
    return fail(Status::ProblemTooLarge, "grouped_matmul needs M, N and K below 2^31 - 512");
  if (p.lda > (std::int64_t(1) << 38) || p.ldb > (std::int64_t(1) << 38) || p.stride_a > most || p.stride_b > most ||
      p.stride_d > most)
    return fail(Status::ProblemTooLarge, "grouped_matmul needs lda and ldb below 2^38 and strides below 2^37 elements");
  const std::int64_t units =
      engine::grouped_units_bound(p.layout, p.groups, p.m, p.n, engine::kGroupedBM, engine::kGroupedNarrowBN);
  if (units > INT_MAX / 2)
    return fail(Status::ProblemTooLarge, "grouped_matmul needs fewer than 2^30 tiles of 128x128 over all groups");
  return Status::Success;
}

Status accessible(const void* ptr, const char* name) {
  cudaPointerAttributes attr{};
  if (cudaPointerGetAttributes(&attr, ptr) != cudaSuccess) {
    cudaGetLastError();
    return fail(Status::InvalidPointer, std::string(name) + ": cudaPointerGetAttributes failed");
  }
  if (attr.type == cudaMemoryTypeUnregistered)
    return fail(Status::InvalidPointer, std::string(name) +
                                            " points to ordinary host memory; pass device, managed or pinned (mapped) "
                                            "memory (the kernel reads the group sizes on the device)");
  return Status::Success;
}

Status validate_device(const GroupedMatmul& p, bool check_pointers, Device* device) {
  std::string message;
  if (Status s = current_device(device, &message); s != Status::Success) return fail(s, message);
  if (!device->hopper())
    return fail(Status::UnsupportedArch,
                device->cc != 90 ? "grouped_matmul runs on sm_90 GPUs only (this one is sm_" + str(device->cc) + ")"
                                 : std::string("this build of hgemm has no sm_90a code, which grouped_matmul needs "
                                               "(add 90a to HGEMM_CUDA_ARCHS)"));
  if (!check_pointers) return Status::Success;
  if (Status s = accessible(p.sizes(), p.masked() ? "m_valid" : "offsets"); s != Status::Success) return s;
  if (p.k > 0) {
    if (Status s = accessible(p.a, "A"); s != Status::Success) return s;
    if (Status s = accessible(p.b, "B"); s != Status::Success) return s;
  }
  return accessible(p.d, "D");
}

}  // namespace
}  // namespace detail

Status grouped_matmul(const GroupedMatmulArgs& args, const MatmulOptions& options) {
  using namespace detail;
  GroupedMatmul p;
  static_cast<GroupedMatmulArgs&>(p) = args;
  p.accum = options.accum;
  for (auto check : {validate_shape, validate_types, validate_leading_dims, validate_pointers, validate_limits})
    if (Status s = check(p); s != Status::Success) return s;
  if (options.kernel != "auto" && options.kernel != "engine.sm90")
    return fail(Status::InvalidArgument, "grouped_matmul runs on the engine only: options.kernel must be \"auto\" or "
                                         "\"engine.sm90\", not \"" + std::string(options.kernel) + "\"");
  clear_error();
  if (!p.d_used()) return Status::Success;  // no row of D to write: nothing runs, no device needed
  Device device;
  if (Status s = validate_device(p, options.check_pointers, &device); s != Status::Success) return s;
  std::string message;
  const Status s = engine::launch_grouped(plan_grouped(p, device), p, options.stream, &message);
  return s == Status::Success ? s : fail(s, "engine.sm90 (grouped): " + message);
}

}  // namespace hgemm
