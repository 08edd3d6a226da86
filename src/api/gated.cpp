// SPDX-License-Identifier: Apache-2.0
// hgemm::swiglu and its gradient (hgemm/gated.h): every argument checked, then one elementwise
// pass (common/gate.cu).
#include "hgemm/gated.h"

#include <cstdint>
#include <string>

#include "api/errors.h"
#include "api/validate.h"
#include "common/device.h"
#include "common/gate.h"

namespace hgemm {
namespace detail {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

constexpr std::int64_t kMostN = std::int64_t(1) << 61;  ///< 2N and its byte counts fit 64 bits

/// One matrix operand of the pass: `cols` wide, as the caller gave it.
struct Operand {
  const char* name;
  const char* ld_name;
  const char* stride_name;
  const void* ptr;
  std::int64_t ld, stride, cols;
  DataType type;
};

Status check_operand(const Operand& o, std::int64_t m, std::int64_t batch) {
  if (o.type != DataType::F16 && o.type != DataType::BF16 && o.type != DataType::F32)
    return fail(Status::UnsupportedType, std::string("unknown DataType value ") + str(static_cast<int>(o.type)) +
                                             " of " + o.name);
  if (o.stride < 0) return fail(Status::InvalidSize, std::string("negative batch stride of ") + o.name);
  if (o.ld < 1 || o.ld < o.cols)
    return fail(Status::InvalidLeadingDim, std::string(o.ld_name) + " = " + str(o.ld) + " is smaller than " + o.name +
                                               "'s width " + str(o.cols > 1 ? o.cols : 1));
  if (m == 0 || o.cols == 0 || batch == 0) return Status::Success;
  if (!o.ptr) return fail(Status::NullPointer, std::string(o.name) + " is null");
  if (reinterpret_cast<std::uintptr_t>(o.ptr) % data_type_size(o.type) != 0)
    return fail(Status::Misaligned, std::string(o.name) + " is not aligned to its element size");
  return validate_extent(o.name, o.ptr, span(batch, o.stride, m, o.ld, o.cols), o.type);
}

/// Whether matrix i of x and matrix i of y share a byte.
bool overlap(const Operand& x, const Operand& y, std::int64_t m, std::int64_t i) {
  auto range = [&](const Operand& o, std::uintptr_t* begin, std::uintptr_t* end) {
    const std::size_t size = data_type_size(o.type);
    *begin = reinterpret_cast<std::uintptr_t>(o.ptr) + static_cast<std::uintptr_t>(i * o.stride) * size;
    *end = *begin + static_cast<std::uintptr_t>(span(1, 0, m, o.ld, o.cols)) * size;
  };
  std::uintptr_t xb, xe, yb, ye;
  range(x, &xb, &xe);
  range(y, &yb, &ye);
  return xb < ye && yb < xe;
}

/// Sizes, types, leading dimensions, pointers, extents and overlaps of the pass that writes
/// `out` from `ins`; then, when there is work, that every pointer is device memory.
Status check_pass(const GateArgs& a, const Operand* ins, int n_ins, const Operand& out) {
  if (a.layout != GateLayout::Halves && a.layout != GateLayout::Blocks8)
    return fail(Status::InvalidArgument, "unknown GateLayout value " + str(static_cast<int>(a.layout)));
  if (a.m < 0 || a.n < 0 || a.batch < 0)
    return fail(Status::InvalidSize, "negative size: M = " + str(a.m) + ", N = " + str(a.n) + ", batch = " + str(a.batch));
  if (a.n > kMostN)
    return fail(Status::ProblemTooLarge, "N = " + str(a.n) + ": Z's 2N columns would not fit 64 bits");
  if (a.layout == GateLayout::Blocks8 && a.n % 8 != 0)
    return fail(Status::InvalidArgument, "GateLayout::Blocks8 needs N a multiple of 8 (N = " + str(a.n) + ")");
  for (int i = 0; i < n_ins; ++i)
    if (Status s = check_operand(ins[i], a.m, a.batch); s != Status::Success) return s;
  if (Status s = check_operand(out, a.m, a.batch); s != Status::Success) return s;
  if (a.m == 0 || a.n == 0 || a.batch == 0) return Status::Success;
  if (a.batch > 1)
    if (Status s = matrices_apart(out.stride_name, out.stride, out.ld_name, out.ld, a.m,
                                  (std::string("the ") + out.name + " matrices").c_str());
        s != Status::Success)
      return s;
  for (int i = 0; i < n_ins; ++i)
    for (std::int64_t b : {std::int64_t(0), a.batch - 1})
      if (overlap(ins[i], out, a.m, b))
        return fail(Status::InvalidArgument, std::string(out.name) + " overlaps " + ins[i].name);
  Device device;
  std::string message;
  if (Status s = current_device(&device, &message); s != Status::Success) return fail(s, message);
  for (int i = 0; i < n_ins; ++i)
    if (Status s = validate_accessible(ins[i].ptr, ins[i].name); s != Status::Success) return s;
  return validate_accessible(out.ptr, out.name);
}

/// Z's width 2N, saturated where N is past what check_pass accepts (it refuses that N first).
std::int64_t z_width(const GateArgs& a) { return a.n > kMostN ? INT64_MAX : 2 * a.n; }
Operand z_of(const GateArgs& a) { return {"Z", "ldz", "stride_z", a.z, a.ldz, a.stride_z, z_width(a), a.z_type}; }
TypedMatrices typed(const Operand& o) { return {o.ptr, o.type, o.ld, o.stride}; }

}  // namespace
}  // namespace detail

const char* gate_layout_name(GateLayout l) {
  switch (l) {
    case GateLayout::Halves: return "halves";
    case GateLayout::Blocks8: return "blocks8";
  }
  return "unknown";
}

Status swiglu(const GateArgs& args, cudaStream_t stream) {
  using namespace detail;
  clear_error();
  const Operand z = z_of(args), d{"D", "ldd", "stride_d", args.d, args.ldd, args.stride_d, args.n, args.d_type};
  if (Status s = check_pass(args, &z, 1, d); s != Status::Success) return s;
  std::string message;
  if (Status s = gate_matrices(typed(z), typed(d), args.layout, args.m, args.n, args.batch, stream, &message);
      s != Status::Success)
    return fail(s, message);
  return Status::Success;
}

Status swiglu_backward(const GateArgs& forward, const GateGradArgs& grad, cudaStream_t stream) {
  using namespace detail;
  clear_error();
  const Operand ins[2] = {z_of(forward), {"dD", "lddd", "stride_dd", grad.dd, grad.lddd, grad.stride_dd, forward.n, grad.dd_type}};
  const Operand dz{"dZ", "lddz", "stride_dz", grad.dz, grad.lddz, grad.stride_dz, z_width(forward), grad.dz_type};
  if (Status s = check_pass(forward, ins, 2, dz); s != Status::Success) return s;
  std::string message;
  if (Status s = gate_gradient_matrices(typed(ins[0]), typed(ins[1]), typed(dz), forward.layout, forward.m, forward.n,
                                        forward.batch, stream, &message);
      s != Status::Success)
    return fail(s, message);
  return Status::Success;
}

}  // namespace hgemm
