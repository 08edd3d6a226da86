// SPDX-License-Identifier: Apache-2.0
// cuBLAS behind the same interface as the hand-written kernels: the reference every benchmark
// row is compared with, and auto's fallback for what no kernel of this build runs.
// cublasGemmStridedBatchedEx with tensor ops, compute type 16F (cublas.acc16) or 32F
// (cublas.acc32). Row-major D = op(A)·op(B) is column-major Dᵀ = op(B)ᵀ·op(A)ᵀ, so A and B swap.
// cuBLAS updates C in place and pairs each input type with few output types (f16 A: f16 or f32;
// bf16 A: bf16 or f32), so C is first copied into D where it is other memory, and a D of a type
// cuBLAS cannot pair with A (or a C that would not fit D's type before beta scales it) goes
// through f32 workspace and is converted.
#include <cublas_v2.h>

#include <climits>
#include <unordered_map>

#include "common/convert.h"
#include "common/workspace.h"
#include "registry/registry.h"

namespace hgemm::detail {
namespace {

// One handle per thread and device, created on first use and kept for the thread's lifetime
// (cuBLAS handles must not be shared by threads launching concurrently).
cublasStatus_t handle_for_current_device(cublasHandle_t* handle) {
  thread_local std::unordered_map<int, cublasHandle_t> handles;
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) return CUBLAS_STATUS_NOT_INITIALIZED;
  auto it = handles.find(device);
  if (it != handles.end()) {
    *handle = it->second;
    return CUBLAS_STATUS_SUCCESS;
  }
  cublasStatus_t s = cublasCreate(handle);
  if (s == CUBLAS_STATUS_SUCCESS) handles[device] = *handle;
  return s;
}

cublasOperation_t to_cublas(Op op) { return op == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; }

cudaDataType_t to_cuda(DataType t) {
  return t == DataType::F16 ? CUDA_R_16F : t == DataType::BF16 ? CUDA_R_16BF : CUDA_R_32F;
}

Status cublas_failed(cublasStatus_t s, std::string* message) {
  *message = std::string("cuBLAS: ") + cublasGetStatusName(s) + ": " + cublasGetStatusString(s);
  return Status::CublasError;
}

// The in-place update cuBLAS computes: target = alpha·op(A)·op(B) + beta·target.
Status gemm_in_place(const Matmul& p, const TypedMatrices& target, float beta, cublasComputeType_t compute,
                     cudaStream_t stream, std::string* message) {
  cublasHandle_t handle = nullptr;
  cublasStatus_t s = handle_for_current_device(&handle);
  if (s == CUBLAS_STATUS_SUCCESS) s = cublasSetStream(handle, stream);
  if (s != CUBLAS_STATUS_SUCCESS) return cublas_failed(s, message);
  const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
  const __half alpha16 = __float2half(p.alpha), beta16 = __float2half(beta);
  const bool half_scalars = compute == CUBLAS_COMPUTE_16F;
  const void* alpha = half_scalars ? static_cast<const void*>(&alpha16) : &p.alpha;
  const void* b = half_scalars ? static_cast<const void*>(&beta16) : &beta;
  void* c = const_cast<void*>(target.ptr);
  if (p.batch == 1)
    s = cublasGemmEx(handle, to_cublas(p.op_b), to_cublas(p.op_a), n, m, k, alpha, p.b, to_cuda(p.b_type),
                     static_cast<int>(p.ldb), p.a, to_cuda(p.a_type), static_cast<int>(p.lda), b, c,
                     to_cuda(target.type), static_cast<int>(target.ld), compute, CUBLAS_GEMM_DEFAULT);
  else
    s = cublasGemmStridedBatchedEx(handle, to_cublas(p.op_b), to_cublas(p.op_a), n, m, k, alpha, p.b,
                                   to_cuda(p.b_type), static_cast<int>(p.ldb), p.stride_b, p.a, to_cuda(p.a_type),
                                   static_cast<int>(p.lda), p.stride_a, b, c, to_cuda(target.type),
                                   static_cast<int>(target.ld), target.stride, static_cast<int>(p.batch), compute,
                                   CUBLAS_GEMM_DEFAULT);
  return s == CUBLAS_STATUS_SUCCESS ? Status::Success : cublas_failed(s, message);
}

Status run(const Matmul& p, cudaStream_t stream, std::string* message, cublasComputeType_t compute) {
  const TypedMatrices c{p.c, p.c_type, p.ldc, p.stride_c}, d{p.d, p.d_type, p.ldd, p.stride_d};
  if (p.k == 0)  // D = beta·C (zeros when beta = 0, C unread)
    return scale_matrices(p.c_read() ? c : TypedMatrices{}, p.c_read() ? p.beta : 0.f, d, p.m, p.n, p.batch, stream,
                          message);
  const bool pairs = p.d_type == p.a_type || (p.d_type == DataType::F32 && compute == CUBLAS_COMPUTE_32F);
  // C enters through the target before beta scales it: into a 16-bit D only when that is exact
  // (same type, or C is D), else through f32 workspace (a large C times a small beta may fit D
  // where C itself would not).
  const bool c_fits_d = !p.c_read() || p.c == p.d || p.c_type == p.d_type || p.d_type == DataType::F32;
  StreamWorkspace workspace(stream);
  TypedMatrices target = d;
  if (!pairs || !c_fits_d) {
    void* scratch = nullptr;
    const std::size_t bytes = static_cast<std::size_t>(p.m * p.n * p.batch) * sizeof(float);
    if (Status s = workspace.allocate(bytes, &scratch, message); s != Status::Success) return s;
    target = {scratch, DataType::F32, p.n, p.m * p.n};
  }
  // beta·C enters through the target, unless C already is the target.
  if (p.c_read() && p.c != target.ptr)
    if (Status s = scale_matrices(c, 1.f, target, p.m, p.n, p.batch, stream, message); s != Status::Success) return s;
  if (Status s = gemm_in_place(p, target, p.c_read() ? p.beta : 0.f, compute, stream, message); s != Status::Success)
    return s;
  return target.ptr == d.ptr ? Status::Success : scale_matrices(target, 1.f, d, p.m, p.n, p.batch, stream, message);
}

Status run_acc16(const Matmul& p, cudaStream_t stream, std::string* message) {
  return run(p, stream, message, CUBLAS_COMPUTE_16F);
}
Status run_acc32(const Matmul& p, cudaStream_t stream, std::string* message) {
  return run(p, stream, message, CUBLAS_COMPUTE_32F);
}

// cuBLAS takes 32-bit sizes, leading dimensions and batch counts.
Status fits_int32(const Matmul& p, std::string* why) {
  for (std::int64_t v : {p.m, p.n, p.k, p.lda, p.ldb, p.ldc, p.ldd, p.batch})
    if (v > INT_MAX) {
      *why = "cuBLAS takes 32-bit sizes, leading dimensions and batch counts; " + std::to_string(v) + " does not fit";
      return Status::ProblemTooLarge;
    }
  return Status::Success;
}

}  // namespace

const KernelEntry& entry_cublas_acc16() {
  static const KernelEntry e{{"cublas.acc16", "cublas", 1,
                              "cublasGemmEx, tensor ops, compute 16F (alpha and beta rounded to half)", 50, 0, kAllOps,
                              kAccF16, 1, true},
                             nullptr, &fits_int32, &run_acc16};
  return e;
}

const KernelEntry& entry_cublas_acc32() {
  constexpr unsigned in = type_bit(DataType::F16) | type_bit(DataType::BF16);
  constexpr unsigned out = in | type_bit(DataType::F32);
  static const KernelEntry e{{"cublas.acc32", "cublas", 2, "cublasGemmEx, tensor ops, compute 32F", 50, 0, kAllOps,
                              kAccF32, 1, true, in, out},
                             nullptr, &fits_int32, &run_acc32};
  return e;
}

}  // namespace hgemm::detail
