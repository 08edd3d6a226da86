// hgemm — half-precision GEMM kernels, from the textbook naive kernel up.
//
//   C = alpha · op(A) · op(B) + beta · C        (fp16 in and out, row-major storage)
//
// op(A) is M×K: with op_a = Op::N, A is stored M×K with lda ≥ K; with Op::T, A is stored K×M
// with lda ≥ M. Likewise op(B) is K×N and C is M×N with ldc ≥ N. Every leading dimension must
// also be ≥ 1. beta = 0 never reads C (it may hold NaN); K = 0 gives C = beta·C.
//
// This header declares no kernel code; it only needs the CUDA runtime and cuda_fp16.h.
#pragma once

#include <cuda_fp16.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace hgemm {

enum class Op : std::uint8_t { N = 0, T = 1 };

/// Type of the accumulator inside the kernel. F32 is the accurate default; F16 is the seed
/// report's choice (fastest on CUDA cores, but its error grows with sqrt(K)).
enum class Accum : std::uint8_t { F16 = 0, F32 = 1 };

enum class Status : int {
  Success = 0,
  InvalidSize,        ///< M, N or K negative
  InvalidLeadingDim,  ///< lda/ldb/ldc smaller than the stored width (or < 1)
  NullPointer,        ///< A, B or C null while the matrix is not empty
  InvalidPointer,     ///< a pointer the GPU cannot access (plain host memory)
  UnknownKernel,      ///< no registered kernel has that id
  UnsupportedOp,      ///< the kernel does not implement this op(A)/op(B) combination
  UnsupportedAccum,   ///< the kernel does not implement this accumulation type
  Misaligned,         ///< the kernel needs aligned pointers / leading dimensions
  UnsupportedArch,    ///< the GPU's compute capability is outside what the kernel supports
  ProblemTooLarge,    ///< a size or leading dimension beyond what the kernel can index
  NoDevice,           ///< no usable CUDA device
  CudaError,          ///< a CUDA runtime call or a kernel launch failed
  CublasError,        ///< a cuBLAS call failed (baseline kernels only)
  UnsupportedShape,   ///< the kernel handles only some shapes (e.g. skinny.m16_mma_nt: M <= 16)
};

/// A short, fixed description of a status value.
const char* status_string(Status s);

/// The detailed message of the last non-Success status returned on this thread
/// (e.g. "ldb = 5 is smaller than N = 7 (op(B) = N)"). Empty after a success.
const std::string& last_error_message();

/// Bit sets over Op pairs and Accum values, used in KernelInfo.
enum OpMask : unsigned {
  kOpNN = 1u << 0,  // op(A) = N, op(B) = N
  kOpNT = 1u << 1,
  kOpTN = 1u << 2,
  kOpTT = 1u << 3,
  kAllOps = 0xFu,
};
enum AccumMask : unsigned { kAccF16 = 1u << 0, kAccF32 = 1u << 1, kBothAccums = 3u };

constexpr unsigned op_bit(Op op_a, Op op_b) {
  return 1u << (static_cast<unsigned>(op_a) * 2u + static_cast<unsigned>(op_b));
}
constexpr unsigned accum_bit(Accum a) { return 1u << static_cast<unsigned>(a); }

/// One registered kernel, as `kernels()` lists it.
struct KernelInfo {
  std::string id;       ///< "family.rung", e.g. "cuda.t8x8_f16x4_bcf"
  std::string family;   ///< "cuda", "cublas", ...
  int ladder = 0;       ///< position in the family's ladder (1 = first rung)
  std::string summary;  ///< one line: what this rung adds over the previous one
  int min_cc = 0;       ///< minimum compute capability, e.g. 80 for 8.0
  int max_cc = 0;       ///< maximum compute capability (0 = no maximum)
  unsigned ops = 0;     ///< OpMask bits it implements
  unsigned accums = 0;  ///< AccumMask bits it implements
  int align = 1;        ///< required alignment in elements of pointers (×2 bytes) and lds; 1 = none
  bool baseline = false;  ///< a reference implementation (cuBLAS), never chosen by "auto" unless nothing else runs
};

/// Every registered kernel, in ladder order within each family.
const std::vector<KernelInfo>& kernels();

/// Options of one gemm call.
struct GemmOptions {
  Accum accum = Accum::F32;
  cudaStream_t stream = nullptr;  ///< the launch is asynchronous on this stream
  std::string_view kernel = "auto";  ///< a kernel id from kernels(), or "auto"
};

/// The kernel that `gemm` would run for this problem with kernel = "auto" (empty string and a
/// status if none can). Sizes and pointers are validated as in gemm; nothing is launched.
Status resolve_kernel(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k,
                      const __half* a, std::int64_t lda, const __half* b, std::int64_t ldb,
                      const __half* c, std::int64_t ldc, const GemmOptions& options,
                      std::string* kernel_id);

/// C = alpha·op(A)·op(B) + beta·C. Arguments are validated before anything is launched; the
/// return value reports launch errors too (errors inside the kernel surface at the next sync).
Status gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
            const __half* a, std::int64_t lda, const __half* b, std::int64_t ldb, float beta,
            __half* c, std::int64_t ldc, const GemmOptions& options = {});

/// `batch` independent GEMMs C_i = alpha·op(A_i)·op(B_i) + beta·C_i, matrix i of each operand at
/// element offset i·stride from its base (a stride of 0 repeats one A or B for every product;
/// C's matrices must not overlap: stride_c ≥ ldc·M, or the call is refused). All problems share
/// sizes, ops and leading dimensions; every one is validated and its kernel chosen before the
/// first launch. Each product is one launch of the chosen kernel on options.stream.
Status gemm_strided_batched(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                            const __half* a, std::int64_t lda, std::int64_t stride_a, const __half* b,
                            std::int64_t ldb, std::int64_t stride_b, float beta, __half* c, std::int64_t ldc,
                            std::int64_t stride_c, std::int64_t batch, const GemmOptions& options = {});

/// As gemm_strided_batched, with the matrices given by arrays of `batch` device pointers. The
/// arrays themselves are host memory (read during the call, not kept).
Status gemm_batched(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                    const __half* const* a, std::int64_t lda, const __half* const* b, std::int64_t ldb, float beta,
                    __half* const* c, std::int64_t ldc, std::int64_t batch, const GemmOptions& options = {});

/// The sm90 kernels take scratch memory from a private, stream-ordered CUDA memory pool of the
/// current device: operands they cannot read in place (a pointer not 16-byte aligned or a leading
/// dimension not a multiple of 8) copied into aligned rows, split-K partial sums, and the
/// accumulators stream-K hands between CTAs (up to 17 MB per call on an H200, f32). The pool is
/// reused from call to call (no cudaMalloc on the hot path) and keeps its memory until this call
/// gives the unused part back. A call captured into a CUDA graph replays correctly (tested for
/// the top sm90 rung with whole tiles, split-K and stream-K).
Status release_workspace();

}  // namespace hgemm
