// SPDX-License-Identifier: Apache-2.0
// hgemm — GEMM kernels for NVIDIA GPUs, from the textbook naive kernel up.
//
//   D = alpha · op(A) · op(B) + beta · C        (row-major storage)
//
// and, with MatmulArgs::epilogue (fused into the engine's store of D):
//
//   D = act(alpha · op(A) · op(B) + beta · C + bias) · row_scale[r] · col_scale[c]
//
// matmul() is the typed call: A and B in f16 or bf16, C and D each in f16, bf16 or f32, f32
// accumulation, D separate from C or the same memory, single or strided-batched. gemm() and its
// batched forms are the f16 shorthand (C = alpha·op(A)·op(B) + beta·C, in place).
//
// op(A) is M×K: with op_a = Op::N, A is stored M×K with lda ≥ K; with Op::T, A is stored K×M
// with lda ≥ M. Likewise op(B) is K×N, and C and D are M×N with ldc, ldd ≥ N. Every leading
// dimension must also be ≥ 1. beta = 0 never reads C (it may hold NaN, or be null); K = 0 gives
// D = beta·C (then the epilogue: D = act(beta·C + bias)·scales).
//
// Results are deterministic: the same call on the same inputs gives the same bits. Where K is
// split between CTAs the partial sums are added in a fixed order, so a result can depend on the
// problem's shape (M, N, K) and the GPU's SM count, never on timing.
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
  InvalidSize,        ///< M, N, K, a batch count or a stride negative
  InvalidLeadingDim,  ///< lda/ldb/ldc/ldd smaller than the stored width (or < 1), or overlapping batch matrices
  NullPointer,        ///< A, B, C or D null while it is read or written
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
  UnsupportedType,    ///< a data type or type combination the library or the kernel does not implement
  InvalidArgument,    ///< an argument outside its domain (e.g. C and D overlapping with different layouts)
  UnsupportedEpilogue,  ///< a kernel named in the options that cannot apply MatmulArgs::epilogue
};

/// A short, fixed description of a status value.
const char* status_string(Status s);

/// The detailed message of the last non-Success status returned on this thread
/// (e.g. "ldb = 5 is smaller than N = 7 (op(B) = N)"). Empty after a success.
const std::string& last_error_message();

/// Element types of the typed call (matmul).
enum class DataType : std::uint8_t { F16 = 0, BF16 = 1, F32 = 2 };

/// "f16", "bf16" or "f32".
const char* data_type_name(DataType t);

/// Bytes of one element.
constexpr int data_type_size(DataType t) { return t == DataType::F32 ? 4 : 2; }

/// The bit of a type in KernelInfo::in_types and out_types.
constexpr unsigned type_bit(DataType t) { return 1u << static_cast<unsigned>(t); }

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
  unsigned in_types = 1u;   ///< bits (1 << DataType) of the A and B types it takes; 1: f16 only
  unsigned out_types = 1u;  ///< bits (1 << DataType) of the C and D types it takes; 1: f16 only
};

/// Every registered kernel, in ladder order within each family.
const std::vector<KernelInfo>& kernels();

/// The activation of the fused epilogue, applied to Z = alpha·acc + beta·C + bias in f32.
/// NaN stays NaN; ±Inf gives what the formula gives in IEEE arithmetic (GELU(-Inf) and
/// SiLU(-Inf) are NaN: -Inf · 0).
enum class Activation : std::uint8_t {
  None = 0,
  ReLU = 1,      ///< max(z, 0) (NaN passes through)
  GELU = 2,      ///< z · Φ(z) = z/2 · (1 + erf(z/√2)), PyTorch's gelu(approximate="none")
  GELUTanh = 3,  ///< z/2 · (1 + tanh(√(2/π) · (z + 0.044715 z³))), gelu(approximate="tanh")
  SiLU = 4,      ///< z · sigmoid(z) = z / (1 + e^-z)
};

/// "none", "relu", "gelu", "gelu_tanh" or "silu".
const char* activation_name(Activation a);

/// Which dimension of D a bias vector runs along.
enum class BiasAlong : std::uint8_t {
  None = 0,  ///< no bias
  N = 1,     ///< one value per column of D: bias[c] (nn.Linear's bias; cuBLASLt's EPILOGUE_BIAS)
  M = 2,     ///< one value per row of D: bias[r]
};

/// Operations fused into the store of D (the default is none of them):
///
///   Z = alpha·op(A)·op(B) + beta·C + bias            (f32)
///   aux = Z                                          (optional, rounded to aux_type)
///   D = act(Z) · row_scale[r] · col_scale[c]         (rounded once to D's type)
///
/// Each part is switched on by its own field (bias_along, activation, aux_output, scale_rows,
/// scale_cols); a pointer whose switch is off is never read. Vectors and aux are device memory,
/// aligned to their element size; for a strided batch, vector i (or aux matrix i) starts
/// i·stride elements on (0: one vector for every product). aux is M×N row-major with
/// ldaux ≥ N, the pre-activation for a backward pass (cuBLASLt's GELU_AUX), and must not overlap
/// D or C. On Hopper the engine applies all of it in its epilogue, once per element, on every
/// schedule (split-K and stream-K after the partial sums are added); elsewhere `auto` runs the
/// product and then one elementwise pass over D, named "<kernel>+epilogue" by resolve_matmul
/// (there Z is D's rounded value: one more rounding than fused), as does a cuBLAS baseline named
/// in the options. A ladder kernel named in the options refuses an epilogue
/// (Status::UnsupportedEpilogue).
struct Epilogue {
  BiasAlong bias_along = BiasAlong::None;
  const void* bias = nullptr;       ///< N (BiasAlong::N) or M (BiasAlong::M) values
  DataType bias_type = DataType::F32;
  std::int64_t stride_bias = 0;     ///< elements between the vectors of a batch; 0: shared

  Activation activation = Activation::None;

  bool aux_output = false;          ///< write Z to aux
  void* aux = nullptr;
  DataType aux_type = DataType::F16;
  std::int64_t ldaux = 0;
  std::int64_t stride_aux = 0;      ///< ≥ ldaux·M when batch > 1

  bool scale_rows = false, scale_cols = false;  ///< multiply D by row_scale[r] / col_scale[c] (f32)
  const float* row_scale = nullptr;  ///< M values
  const float* col_scale = nullptr;  ///< N values
  std::int64_t stride_row_scale = 0, stride_col_scale = 0;

  /// Whether any part is switched on.
  bool enabled() const {
    return bias_along != BiasAlong::None || activation != Activation::None || aux_output || scale_rows || scale_cols;
  }
};

/// One typed matrix product, or a strided batch of them:
///
///   D_i = alpha · op(A_i) · op(B_i) + beta · C_i        for i in [0, batch)
///
/// (then the fused `epilogue`, when one is set: bias, activation, aux, scales), where matrix i
/// of each operand starts `i · stride_x` elements after x. Sizes, ops and
/// leading dimensions are as in the file comment. Types:
///   * a_type and b_type: F16 or BF16, both the same;
///   * c_type and d_type: F16, BF16 or F32, independently of each other and of A's type.
/// C is read only when beta ≠ 0 (it may be null otherwise). C may be the same memory as D (then
/// with the same type and leading dimension, as in gemm's in-place update); any other overlap of
/// D with A, B or C is undefined. Every pointer must be aligned to its element size.
/// Batches: a stride of 0 repeats one A, B or C for every product; D's matrices must not
/// overlap (stride_d ≥ ldd·M when batch > 1).
struct MatmulArgs {
  Op op_a = Op::N, op_b = Op::N;
  std::int64_t m = 0, n = 0, k = 0;
  float alpha = 1.f, beta = 0.f;
  const void* a = nullptr;
  std::int64_t lda = 0;
  DataType a_type = DataType::F16;
  const void* b = nullptr;
  std::int64_t ldb = 0;
  DataType b_type = DataType::F16;
  const void* c = nullptr;
  std::int64_t ldc = 0;
  DataType c_type = DataType::F16;
  void* d = nullptr;
  std::int64_t ldd = 0;
  DataType d_type = DataType::F16;
  std::int64_t batch = 1;
  std::int64_t stride_a = 0, stride_b = 0, stride_c = 0, stride_d = 0;  ///< in elements of each operand
  Epilogue epilogue;  ///< bias, activation, aux output, scales (see Epilogue); none by default
};

/// Options of one matmul or gemm call.
struct GemmOptions {
  Accum accum = Accum::F32;  ///< F16 only with f16 A, B, C and D
  cudaStream_t stream = nullptr;  ///< the launch is asynchronous on this stream
  std::string_view kernel = "auto";  ///< a kernel id from kernels(), or "auto"
  /// Whether each call asks the driver where its pointers live (cudaPointerGetAttributes per
  /// matrix and vector) to refuse host memory with Status::InvalidPointer. A caller whose arrays
  /// are known to be device, managed or mapped memory (a framework's CUDA tensors) can skip it;
  /// a host pointer then faults in the kernel instead.
  bool check_pointers = true;
  /// gemm_batched with host pointer arrays: lets a list of independent products whose matrices
  /// are not evenly spaced run in one launch on Hopper's engine (a kernel writes each product's
  /// tensor maps on the device, then one grid runs every product) instead of one launch per
  /// product. Off by default (see gemm_batched); device pointer arrays always run so.
  bool pointer_batch_in_one_launch = false;
  /// Hopper's engine: a fused epilogue's aux, where TMA can store it, staged in shared memory and
  /// stored by TMA on whole tiles instead of from registers (16-byte stores of half a sector
  /// each). On by default; false keeps the register stores, to compare the two.
  bool aux_by_tma = true;
};

using MatmulOptions = GemmOptions;

/// D = alpha·op(A)·op(B) + beta·C for the typed problem `args` (see MatmulArgs). Every argument
/// is validated before anything is launched (Status and last_error_message() say what is wrong);
/// the launch is asynchronous on options.stream, and errors inside a kernel surface at the next
/// synchronisation. A ladder kernel named in options.kernel takes f16 only.
Status matmul(const MatmulArgs& args, const MatmulOptions& options = {});

/// The kernel id that matmul would run for `args` and `options` (empty string and a status if
/// none can). Arguments are validated as in matmul; nothing is launched.
Status resolve_matmul(const MatmulArgs& args, const MatmulOptions& options, std::string* kernel_id);

/// How the groups of a grouped_matmul (mixture-of-experts) lie in A and D.
enum class GroupedLayout : std::uint8_t {
  /// MoE forward: A is M×K (op N only) and D is M×N, their rows sorted by group; offsets[g] is the END row of group g (cumulative, like torch._grouped_mm's
  /// `offs`), so group g is rows [offsets[g-1], offsets[g]) with offsets[-1] = 0. M is only an
  /// upper bound of the rows (what A and D hold); rows of D from offsets[G-1] on are not written.
  Contiguous = 0,
  /// MoE decode (CUDA graphs with a fixed shape): A_g and D_g are M×K (or K×M) and M×N matrices
  /// stride_a and stride_d apart; m_valid[g] rows of group g count, and D_g's rows from
  /// m_valid[g] on are not written.
  Masked = 1,
  /// MoE weight gradient: the groups split K. offsets[g] is the END of group g along K (as in
  /// Contiguous), and D_g (M×N, stride_d elements after D_{g-1}) = alpha · op(A)[:, K_g] ·
  /// op(B)[K_g, :] over group g's slice K_g of the K dimension. K is the outer dimension of both
  /// operands: op_a = T (A is K×M) and op_b = N (B is K×N), as X and dY are stored in the
  /// backward pass of a contiguous forward. K is only an upper bound of Σ K_g (what A and B
  /// hold); an empty group writes zeros to its D_g.
  KGrouped = 2,
};

/// A grouped product, one launch for every group, with the group sizes on the device:
///
///   D_g = alpha · op(A_g) · op(B_g)        for g in [0, groups)
///
/// B_g is matrix g of B (K×N with op N, N×K with op T), stride_b elements after B_{g-1} (0: one
/// B for every group; KGrouped: must be 0, A and B being split along K). The sizes (offsets or
/// m_valid: int32, device memory) are never read by the host, so the call needs no
/// synchronisation and a captured CUDA graph replays correctly with new sizes written into the
/// same memory. A size outside [0, M] (KGrouped: [0, K]) is clamped to it, and decreasing
/// offsets give empty groups: nothing outside D's M rows (KGrouped: A's and B's K rows) is ever
/// read or written.
/// Types as in MatmulArgs (A and B f16 or bf16, D f16, bf16 or f32); there is no C (beta = 0).
/// K = 0 writes zeros to the groups' rows. Whole tiles only: the result does not depend on the
/// other groups, the SM count or timing (bitwise repeatable).
struct GroupedMatmulArgs {
  GroupedLayout layout = GroupedLayout::Contiguous;
  Op op_a = Op::N, op_b = Op::N;
  std::int64_t groups = 0;         ///< G, at most kMaxGroupedGroups
  std::int64_t m = 0;              ///< Contiguous: rows of A and D (≥ Σ group rows); Masked, KGrouped: rows per group
  std::int64_t n = 0, k = 0;       ///< KGrouped: k is the rows of A and B (≥ Σ group sizes)
  float alpha = 1.f;
  const std::int32_t* offsets = nullptr;  ///< Contiguous, KGrouped: G cumulative ends (rows; k), device memory
  const std::int32_t* m_valid = nullptr;  ///< Masked only: G row counts, device memory
  const void* a = nullptr;
  std::int64_t lda = 0;
  std::int64_t stride_a = 0;  ///< Masked: elements from A_g to A_{g+1} (0: one A); Contiguous, KGrouped: must be 0
  DataType a_type = DataType::F16;
  const void* b = nullptr;
  std::int64_t ldb = 0;
  std::int64_t stride_b = 0;  ///< elements from B_g to B_{g+1} (0: one B for every group)
  DataType b_type = DataType::F16;
  void* d = nullptr;
  std::int64_t ldd = 0;
  std::int64_t stride_d = 0;  ///< Masked, KGrouped: elements from D_g to D_{g+1} (≥ ldd·M); Contiguous: must be 0
  DataType d_type = DataType::F16;
};

/// The most groups one grouped_matmul takes (the kernel keeps a table of them in shared memory).
constexpr std::int64_t kMaxGroupedGroups = 4096;

/// Runs `args` (see GroupedMatmulArgs) in one launch on options.stream. Needs an sm_90 GPU and a
/// build with sm_90a code (else UnsupportedArch); options.kernel must be "auto" or
/// "engine.sm90". Arguments are validated before anything is launched (Status and
/// last_error_message() say what is wrong).
Status grouped_matmul(const GroupedMatmulArgs& args, const MatmulOptions& options = {});

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
/// sizes, ops and leading dimensions; every one is validated before anything is launched. On
/// Hopper the engine runs the whole batch in one launch; other kernels launch once per product.
Status gemm_strided_batched(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, float alpha,
                            const __half* a, std::int64_t lda, std::int64_t stride_a, const __half* b,
                            std::int64_t ldb, std::int64_t stride_b, float beta, __half* c, std::int64_t ldc,
                            std::int64_t stride_c, std::int64_t batch, const GemmOptions& options = {});

/// As gemm_strided_batched, with the matrices given by arrays of `batch` pointers to device
/// memory (product i: C_i = alpha·op(A_i)·op(B_i) + beta·C_i at a[i], b[i], c[i]). The arrays
/// themselves may be host or device memory; each call asks the driver which
/// (cudaPointerGetAttributes on the three arrays), and all three must be of one kind. An array
/// that is null (batch > 0) is NullPointer; one the driver cannot place, or device memory of
/// another GPU, InvalidPointer; batch < 0 InvalidSize, batch above INT32_MAX ProblemTooLarge.
///
/// Host arrays (ordinary, pinned or managed memory) are read during the call, not kept. Every
/// product is validated as gemm validates it before anything is launched (with check_pointers,
/// every matrix's memory too). Matrices evenly spaced in memory (as a strided tensor's are) run as
/// one strided batch where the products are independent (no C shares memory with another C or
/// with any A or B). With pointer_batch_in_one_launch, other independent lists of products too
/// small to fill the GPU on their own (fewer 128×128 tiles than SMs) run in one launch where the
/// engine runs the call (kernel "auto" or "engine.sm90" on an sm_90 GPU), K > 0, and
/// TMA can read every matrix in place (every pointer 16-byte aligned; lda, ldb, ldc multiples of
/// 8). Everything else runs one launch per product, in order (so a product may read a C that an
/// earlier one wrote).
///
/// Device arrays (cublasGemmBatchedEx's convention) are never read by the host: the call queues
/// one kernel that writes every product's tensor maps from the arrays, then one launch of every
/// product, with no synchronisation, so a captured CUDA graph replays with the pointers the arrays
/// hold at replay. They need the engine (kernel "auto" or "engine.sm90" on an sm_90 GPU, else
/// UnsupportedArch or InvalidArgument). The host checks the arrays (non-null, 8-byte aligned, on
/// the current device, not running past the end of the address space) and everything the
/// products share: sizes, ops, alpha and beta, leading dimensions (lda, ldb, ldc multiples of 8:
/// else Misaligned). It cannot see the entries, so the caller guarantees, as cuBLAS asks: every
/// entry points to a matrix of the call's shape in device memory of the current device, and the
/// products are independent (they run at once, in no order; overlaps are not detected). An entry
/// that is null or not 16-byte aligned is caught on the device: that product is skipped, its C
/// left as it was, and the others run. check_pointers does not apply to device arrays.
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
