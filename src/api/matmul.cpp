// SPDX-License-Identifier: Apache-2.0
// The typed entry point: validation, the choice of what runs (a named entry or auto's, with an
// engine entry's plan, all from src/dispatch/), and the launch. Everything up to the launch runs
// on the host.
#include <cuda_runtime_api.h>

#include <string>

#include "api/errors.h"
#include "api/matmul.h"
#include "api/validate.h"
#include "common/convert.h"
#include "common/device.h"
#include "dispatch/policy.h"
#include "registry/registry.h"

namespace hgemm {
namespace detail {

namespace {
thread_local std::string g_last_error;
}  // namespace

Status fail(Status s, std::string message) {
  g_last_error = std::move(message);
  return s;
}
Status fail_in(Status s, const std::string& prefix) {
  g_last_error = prefix + g_last_error;
  return s;
}
void clear_error() { g_last_error.clear(); }

namespace {

// Whether p's epilogue needs its own pass after entry e (auto's choice of a kernel that does
// not fuse it).
bool needs_epilogue_pass(const KernelEntry& e, const Matmul& p) { return p.epilogue.enabled() && !e.fuses_epilogue; }

// D = epilogue(D) over every product, after a kernel that wrote alpha·op(A)·op(B) + beta·C.
Status run_epilogue_pass(const Matmul& p, cudaStream_t stream, std::string* message) {
  const TypedMatrices d{p.d, p.d_type, p.ldd, p.stride_d};
  return finish_matrices(d, 1.f, d, fused_epilogue(p.epilogue), p.m, p.n, p.batch, stream, message);
}

// C copied into D (same type, f16) where the ladder's in-place kernels need it there.
Status copy_c_into_d(const Matmul& q, cudaStream_t stream, std::string* message) {
  const cudaError_t err = cudaMemcpy2DAsync(q.d, q.ldd * 2, q.c, q.ldc * 2, q.n * 2, q.m, cudaMemcpyDeviceToDevice, stream);
  if (err == cudaSuccess) return Status::Success;
  cudaGetLastError();
  *message = std::string("copying C into D failed: ") + cudaGetErrorString(err);
  return Status::CudaError;
}

// A ladder entry runs product by product, each in place on D.
Status run_ladder(const KernelEntry& e, const Matmul& p, cudaStream_t stream, std::string* message) {
  for (std::int64_t i = 0; i < p.batch; ++i) {
    const Matmul q = p.product(i);
    Status s = q.c_read() && q.c != q.d ? copy_c_into_d(q, stream, message) : Status::Success;
    if (s == Status::Success) s = e.launch(ladder_problem(q), stream, message);
    if (s != Status::Success) {
      if (p.batch > 1) *message = "batch entry " + std::to_string(i) + ": " + *message;
      return s;
    }
  }
  return Status::Success;
}

// The chosen entry on p: an engine entry carries out the choice's plan, a typed entry runs p, a
// ladder entry runs it product by product.
Status run_entry(const Choice& c, const Matmul& p, cudaStream_t stream, std::string* message) {
  const KernelEntry& e = *c.entry;
  if (e.run_plan) return e.run_plan(c.plan, p, stream, message);
  return e.run ? e.run(p, stream, message) : run_ladder(e, p, stream, message);
}

}  // namespace

Status prepare_matmul(const Matmul& p, std::string_view id, bool check_pointers, Choice* choice) {
  if (Status s = validate_arguments(p); s != Status::Success) return s;
  if (id != "auto" && !find_kernel(std::string(id)))
    return fail(Status::UnknownKernel, "no kernel named '" + std::string(id) + "' (see hgemm::kernels())");
  if (p.batch == 0) {  // an empty batch: nothing to run, no device needed
    *choice = Choice{};
    return Status::Success;
  }
  Device device;
  std::string message;
  if (Status s = current_device(&device, &message); s != Status::Success) return fail(s, message);
  if (check_pointers)
    if (Status s = validate_pointers_accessible(p); s != Status::Success) return s;
  std::string why;
  if (Status s = choose_kernel(p, id, device, choice, &why); s != Status::Success) return fail(s, why);
  return Status::Success;
}

Status run_matmul(const Choice& c, const Matmul& problem, cudaStream_t stream) {
  clear_error();
  const Matmul p = run_of(c, problem);
  if (!c.entry || !p.d_used()) return Status::Success;  // empty D: nothing to compute
  const KernelEntry& e = *c.entry;
  std::string message;
  if (needs_epilogue_pass(e, p)) {
    Matmul q = p;
    q.epilogue = Epilogue{};
    Status s = run_entry(c, q, stream, &message);
    if (s != Status::Success) return fail(s, e.info.id + ": " + message);
    s = run_epilogue_pass(p, stream, &message);
    return s == Status::Success ? s : fail(s, "epilogue pass: " + message);
  }
  const Status s = run_entry(c, p, stream, &message);
  return s == Status::Success ? s : fail(s, e.info.id + ": " + message);
}

Matmul typed_problem(const MatmulArgs& args, Accum accum) {
  Matmul p;
  static_cast<MatmulArgs&>(p) = args;
  p.accum = accum;
  return p;
}

}  // namespace detail

const std::string& last_error_message() { return detail::g_last_error; }

const char* data_type_name(DataType t) {
  switch (t) {
    case DataType::F16: return "f16";
    case DataType::BF16: return "bf16";
    case DataType::F32: return "f32";
  }
  return "unknown";
}

const char* activation_name(Activation a) {
  switch (a) {
    case Activation::None: return "none";
    case Activation::ReLU: return "relu";
    case Activation::GELU: return "gelu";
    case Activation::GELUTanh: return "gelu_tanh";
    case Activation::SiLU: return "silu";
  }
  return "unknown";
}

const std::vector<KernelInfo>& kernels() {
  static const std::vector<KernelInfo> list = [] {
    std::vector<KernelInfo> out;
    for (const detail::KernelEntry* e : detail::registry()) out.push_back(e->info);
    return out;
  }();
  return list;
}

Status matmul(const MatmulArgs& args, const MatmulOptions& options) {
  detail::Matmul p = detail::typed_problem(args, options.accum);
  p.aux_by_tma = options.aux_by_tma;
  detail::Choice choice;
  if (Status s = detail::prepare_matmul(p, options.kernel, options.check_pointers, &choice); s != Status::Success)
    return s;
  return detail::run_matmul(choice, p, options.stream);
}

Status resolve_matmul(const MatmulArgs& args, const MatmulOptions& options, std::string* kernel_id) {
  detail::Matmul p = detail::typed_problem(args, options.accum);
  p.aux_by_tma = options.aux_by_tma;
  detail::Choice choice;
  const Status s = detail::prepare_matmul(p, options.kernel, options.check_pointers, &choice);
  const detail::KernelEntry* entry = choice.entry;
  if (kernel_id) {
    *kernel_id = s == Status::Success && entry ? entry->info.id : std::string();
    if (s == Status::Success && entry && detail::needs_epilogue_pass(*entry, p)) *kernel_id += "+epilogue";
  }
  if (s == Status::Success) detail::clear_error();
  return s;
}

}  // namespace hgemm
