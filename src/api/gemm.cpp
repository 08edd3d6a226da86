// Argument validation and dispatch: everything here runs on the host before any launch.
#include <cuda_runtime_api.h>

#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "common/problem.h"
#include "registry/registry.h"

namespace hgemm {

namespace {

thread_local std::string g_last_error;

Status fail(Status s, std::string message) {
  g_last_error = std::move(message);
  return s;
}

std::string str(std::int64_t v) { return std::to_string(v); }

Status validate_sizes(const detail::Problem& p) {
  if (p.m < 0 || p.n < 0 || p.k < 0)
    return fail(Status::InvalidSize, "negative size: M = " + str(p.m) + ", N = " + str(p.n) + ", K = " + str(p.k));
  // Row-major storage: the leading dimension is at least the stored row width, and at least 1.
  const std::int64_t a_width = p.op_a == Op::N ? p.k : p.m;
  const std::int64_t b_width = p.op_b == Op::N ? p.n : p.k;
  auto check_ld = [](const char* name, std::int64_t ld, std::int64_t width, const char* what) {
    if (ld >= 1 && ld >= width) return Status::Success;
    return fail(Status::InvalidLeadingDim, std::string(name) + " = " + str(ld) + " is smaller than " + what +
                                               " = " + str(width > 1 ? width : 1));
  };
  Status s = check_ld("lda", p.lda, a_width, p.op_a == Op::N ? "K (op(A) = N)" : "M (op(A) = T)");
  if (s != Status::Success) return s;
  s = check_ld("ldb", p.ldb, b_width, p.op_b == Op::N ? "N (op(B) = N)" : "K (op(B) = T)");
  if (s != Status::Success) return s;
  return check_ld("ldc", p.ldc, p.n, "N");
}

bool a_used(const detail::Problem& p) { return p.m > 0 && p.k > 0; }
bool b_used(const detail::Problem& p) { return p.k > 0 && p.n > 0; }
bool c_used(const detail::Problem& p) { return p.m > 0 && p.n > 0; }

Status validate_pointers_not_null(const detail::Problem& p) {
  if (a_used(p) && p.a == nullptr) return fail(Status::NullPointer, "A is null but op(A) is " + str(p.m) + "x" + str(p.k));
  if (b_used(p) && p.b == nullptr) return fail(Status::NullPointer, "B is null but op(B) is " + str(p.k) + "x" + str(p.n));
  if (c_used(p) && p.c == nullptr) return fail(Status::NullPointer, "C is null but C is " + str(p.m) + "x" + str(p.n));
  return Status::Success;
}

Status validate_pointer_accessible(const void* ptr, const char* name) {
  cudaPointerAttributes attr{};
  cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return fail(Status::InvalidPointer, std::string(name) + ": cudaPointerGetAttributes failed: " + cudaGetErrorString(err));
  }
  if (attr.type == cudaMemoryTypeUnregistered)
    return fail(Status::InvalidPointer, std::string(name) +
                                            " points to ordinary host memory; pass device, managed or "
                                            "pinned (mapped) memory");
  return Status::Success;
}

Status validate_pointers_accessible(const detail::Problem& p) {
  if (a_used(p)) {
    if (Status s = validate_pointer_accessible(p.a, "A"); s != Status::Success) return s;
  }
  if (b_used(p)) {
    if (Status s = validate_pointer_accessible(p.b, "B"); s != Status::Success) return s;
  }
  if (c_used(p)) return validate_pointer_accessible(p.c, "C");
  return Status::Success;
}

// Compute capability of the current device, cached per device ordinal.
Status current_device_cc(int* cc) {
  int device = 0;
  cudaError_t err = cudaGetDevice(&device);
  int count = 0;
  if (err == cudaSuccess) err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    cudaGetLastError();
    return fail(Status::NoDevice, std::string("no usable CUDA device: ") +
                                      (err != cudaSuccess ? cudaGetErrorString(err) : "device count is 0"));
  }
  static std::mutex mutex;
  static std::unordered_map<int, int> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto it = cache.find(device);
  if (it != cache.end()) {
    *cc = it->second;
    return Status::Success;
  }
  int major = 0, minor = 0;
  if (cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, device) != cudaSuccess ||
      cudaDeviceGetAttribute(&minor, cudaDevAttrComputeCapabilityMinor, device) != cudaSuccess) {
    cudaGetLastError();
    return fail(Status::NoDevice, "cannot read the compute capability of device " + std::to_string(device));
  }
  *cc = cache[device] = major * 10 + minor;
  return Status::Success;
}

// The entry that runs `p`: the named one if it supports the problem, or for "auto" the
// supporting non-baseline entry with the highest priority among those whose auto_suits accepts
// the shape (a baseline only if nothing else runs).
Status choose_kernel(const detail::Problem& p, std::string_view id, int cc, const detail::KernelEntry** out) {
  std::string why;
  if (id != "auto") {
    const detail::KernelEntry* e = detail::find_kernel(std::string(id));
    if (!e) return fail(Status::UnknownKernel, "no kernel named '" + std::string(id) + "' (see hgemm::kernels())");
    Status s = detail::check_supported(*e, p, cc, &why);
    if (s != Status::Success) return fail(s, why);
    *out = e;
    return Status::Success;
  }
  const detail::KernelEntry* best = nullptr;
  Status first_failure = Status::Success;
  std::string first_why;
  for (bool baselines : {false, true}) {
    for (const detail::KernelEntry* e : detail::registry()) {
      if (e->info.baseline != baselines) continue;
      Status s = detail::check_supported(*e, p, cc, &why);
      if (s != Status::Success) {
        if (first_failure == Status::Success) first_failure = s, first_why = why;
        continue;
      }
      if (e->auto_suits && !e->auto_suits(p)) continue;
      if (!best || e->auto_priority > best->auto_priority) best = e;
    }
    if (best) break;
  }
  if (!best) return fail(first_failure, "no registered kernel can run this problem; first refusal: " + first_why);
  *out = best;
  return Status::Success;
}

// Everything that can be checked without a device.
Status validate_arguments(const detail::Problem& p, std::string_view id) {
  if (Status s = validate_sizes(p); s != Status::Success) return s;
  if (Status s = validate_pointers_not_null(p); s != Status::Success) return s;
  if (id != "auto" && !detail::find_kernel(std::string(id)))
    return fail(Status::UnknownKernel, "no kernel named '" + std::string(id) + "' (see hgemm::kernels())");
  return Status::Success;
}

// What needs the device, for arguments validate_arguments has passed: the pointers are device
// memory, and the kernel (named or "auto") supports the problem on this GPU.
Status prepare_validated(const detail::Problem& p, std::string_view id, const detail::KernelEntry** entry) {
  int cc = 0;
  if (Status s = current_device_cc(&cc); s != Status::Success) return s;
  if (Status s = validate_pointers_accessible(p); s != Status::Success) return s;
  return choose_kernel(p, id, cc, entry);
}

Status prepare(const detail::Problem& p, std::string_view id, const detail::KernelEntry** entry) {
  if (Status s = validate_arguments(p, id); s != Status::Success) return s;
  return prepare_validated(p, id, entry);
}

detail::Problem make_problem(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                             const __half* a, std::int64_t lda, const __half* b, std::int64_t ldb, float beta,
                             __half* c, std::int64_t ldc, Accum accum) {
  detail::Problem p;
  p.m = m, p.n = n, p.k = k, p.op_a = op_a, p.op_b = op_b, p.alpha = alpha, p.beta = beta;
  p.a = a, p.lda = lda, p.b = b, p.ldb = ldb, p.c = c, p.ldc = ldc, p.accum = accum;
  return p;
}

// Validates every problem of a batch and picks each one's kernel (problem_at(i) builds product i),
// then launches them in order: nothing is launched unless the whole batch can run.
template <typename ProblemAt>
Status run_batch(std::int64_t batch, std::string_view id, cudaStream_t stream, ProblemAt problem_at) {
  if (batch < 0) return fail(Status::InvalidSize, "negative batch count " + str(batch));
  auto in_entry = [&](std::int64_t i, Status s) {
    if (batch > 1) g_last_error = "batch entry " + str(i) + ": " + g_last_error;
    return s;
  };
  for (std::int64_t i = 0; i < batch; ++i)  // argument errors first, as for gemm: no device needed
    if (Status s = validate_arguments(problem_at(i), id); s != Status::Success) return in_entry(i, s);
  std::vector<const detail::KernelEntry*> entries(static_cast<std::size_t>(batch));
  for (std::int64_t i = 0; i < batch; ++i)
    if (Status s = prepare_validated(problem_at(i), id, &entries[static_cast<std::size_t>(i)]); s != Status::Success)
      return in_entry(i, s);
  g_last_error.clear();
  for (std::int64_t i = 0; i < batch; ++i) {
    const detail::Problem p = problem_at(i);
    if (!c_used(p)) continue;
    std::string message;
    const detail::KernelEntry* e = entries[static_cast<std::size_t>(i)];
    if (Status s = e->launch(p, stream, &message); s != Status::Success)
      return fail(s, "batch entry " + str(i) + ": " + e->info.id + ": " + message);
  }
  return Status::Success;
}

}  // namespace

const std::string& last_error_message() { return g_last_error; }

const std::vector<KernelInfo>& kernels() {
  static const std::vector<KernelInfo> list = [] {
    std::vector<KernelInfo> out;
    for (const detail::KernelEntry* e : detail::registry()) out.push_back(e->info);
    return out;
  }();
  return list;
}

Status resolve_kernel(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, const __half* a,
                      std::int64_t lda, const __half* b, std::int64_t ldb, const __half* c, std::int64_t ldc,
                      const GemmOptions& options, std::string* kernel_id) {
  const detail::Problem p =
      make_problem(op_a, op_b, m, n, k, 1.f, a, lda, b, ldb, 0.f, const_cast<__half*>(c), ldc, options.accum);
  const detail::KernelEntry* entry = nullptr;
  Status s = prepare(p, options.kernel, &entry);
  if (kernel_id) *kernel_id = s == Status::Success ? entry->info.id : std::string();
  if (s == Status::Success) g_last_error.clear();
  return s;
}

Status gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha, const __half* a,
            std::int64_t lda, const __half* b, std::int64_t ldb, float beta, __half* c, std::int64_t ldc,
            const GemmOptions& options) {
  const detail::Problem p = make_problem(op_a, op_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc, options.accum);
  const detail::KernelEntry* entry = nullptr;
  if (Status s = prepare(p, options.kernel, &entry); s != Status::Success) return s;
  g_last_error.clear();
  if (!c_used(p)) return Status::Success;  // empty C: nothing to compute
  std::string message;
  Status s = entry->launch(p, options.stream, &message);
  if (s != Status::Success) return fail(s, entry->info.id + ": " + message);
  return Status::Success;
}

Status gemm_strided_batched(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                            const __half* a, std::int64_t lda, std::int64_t stride_a, const __half* b,
                            std::int64_t ldb, std::int64_t stride_b, float beta, __half* c, std::int64_t ldc,
                            std::int64_t stride_c, std::int64_t batch, const GemmOptions& options) {
  if (stride_a < 0 || stride_b < 0 || stride_c < 0)
    return fail(Status::InvalidSize, "negative stride: stride_a = " + str(stride_a) + ", stride_b = " + str(stride_b) +
                                         ", stride_c = " + str(stride_c));
  if (batch > 1 && m > 0 && n > 0 && stride_c < ldc * m)
    return fail(Status::InvalidLeadingDim, "stride_c = " + str(stride_c) + " is smaller than ldc * M = " +
                                               str(ldc * m) + ": the C matrices would overlap");
  return run_batch(batch, options.kernel, options.stream, [&](std::int64_t i) {
    return make_problem(op_a, op_b, m, n, k, alpha, a ? a + i * stride_a : a, lda, b ? b + i * stride_b : b, ldb, beta,
                        c ? c + i * stride_c : c, ldc, options.accum);
  });
}

Status gemm_batched(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                    const __half* const* a, std::int64_t lda, const __half* const* b, std::int64_t ldb, float beta,
                    __half* const* c, std::int64_t ldc, std::int64_t batch, const GemmOptions& options) {
  if (batch > 0 && (!a || !b || !c))
    return fail(Status::NullPointer, std::string("the ") + (!a ? "A" : !b ? "B" : "C") + " pointer array is null");
  return run_batch(batch, options.kernel, options.stream, [&](std::int64_t i) {
    return make_problem(op_a, op_b, m, n, k, alpha, a[i], lda, b[i], ldb, beta, c[i], ldc, options.accum);
  });
}

}  // namespace hgemm
