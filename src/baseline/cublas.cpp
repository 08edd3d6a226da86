// cuBLAS behind the same interface as the hand-written kernels: the reference every benchmark
// row is compared with. cublasGemmEx with tensor ops, compute type 16F (cublas.acc16) or 32F
// (cublas.acc32). Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ, so A and B swap.
#include <cublas_v2.h>

#include <climits>
#include <unordered_map>

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

Status run(const Problem& p, cudaStream_t stream, std::string* message, cublasComputeType_t compute) {
  cublasHandle_t handle = nullptr;
  cublasStatus_t s = handle_for_current_device(&handle);
  if (s == CUBLAS_STATUS_SUCCESS) s = cublasSetStream(handle, stream);
  if (s == CUBLAS_STATUS_SUCCESS) {
    const int m = static_cast<int>(p.m), n = static_cast<int>(p.n), k = static_cast<int>(p.k);
    const int lda = static_cast<int>(p.lda), ldb = static_cast<int>(p.ldb), ldc = static_cast<int>(p.ldc);
    const __half alpha16 = __float2half(p.alpha), beta16 = __float2half(p.beta);
    const void* alpha = compute == CUBLAS_COMPUTE_16F ? static_cast<const void*>(&alpha16) : &p.alpha;
    const void* beta = compute == CUBLAS_COMPUTE_16F ? static_cast<const void*>(&beta16) : &p.beta;
    s = cublasGemmEx(handle, to_cublas(p.op_b), to_cublas(p.op_a), n, m, k, alpha, p.b, CUDA_R_16F, ldb, p.a,
                     CUDA_R_16F, lda, beta, p.c, CUDA_R_16F, ldc, compute, CUBLAS_GEMM_DEFAULT);
  }
  if (s != CUBLAS_STATUS_SUCCESS) {
    *message = std::string("cuBLAS: ") + cublasGetStatusName(s) + ": " + cublasGetStatusString(s);
    return Status::CublasError;
  }
  return Status::Success;
}

Status launch_acc16(const Problem& p, cudaStream_t stream, std::string* message) {
  return run(p, stream, message, CUBLAS_COMPUTE_16F);
}
Status launch_acc32(const Problem& p, cudaStream_t stream, std::string* message) {
  return run(p, stream, message, CUBLAS_COMPUTE_32F);
}

// cublasGemmEx takes 32-bit sizes and leading dimensions.
Status fits_int32(const Problem& p, std::string* why) {
  for (std::int64_t v : {p.m, p.n, p.k, p.lda, p.ldb, p.ldc})
    if (v > INT_MAX) {
      *why = "cuBLAS takes 32-bit sizes and leading dimensions; " + std::to_string(v) + " does not fit";
      return Status::ProblemTooLarge;
    }
  return Status::Success;
}

}  // namespace

const KernelEntry& entry_cublas_acc16() {
  static const KernelEntry e{{"cublas.acc16", "cublas", 1,
                              "cublasGemmEx, tensor ops, compute 16F (alpha and beta rounded to half)", 50, 0, kAllOps,
                              kAccF16, 1, true},
                             &launch_acc16, 0, &fits_int32};
  return e;
}

const KernelEntry& entry_cublas_acc32() {
  static const KernelEntry e{{"cublas.acc32", "cublas", 2, "cublasGemmEx, tensor ops, compute 32F", 50, 0, kAllOps,
                              kAccF32, 1, true},
                             &launch_acc32, 0, &fits_int32};
  return e;
}

}  // namespace hgemm::detail
