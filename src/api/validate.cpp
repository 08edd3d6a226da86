// SPDX-License-Identifier: Apache-2.0
#include "api/validate.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "api/errors.h"
#include "common/fused_epilogue.h"

namespace hgemm::detail {
namespace {

std::string str(std::int64_t v) { return std::to_string(v); }

bool valid_type(DataType t) { return t == DataType::F16 || t == DataType::BF16 || t == DataType::F32; }

Status validate_sizes(const Matmul& p) {
  if (p.m < 0 || p.n < 0 || p.k < 0)
    return fail(Status::InvalidSize, "negative size: M = " + str(p.m) + ", N = " + str(p.n) + ", K = " + str(p.k));
  if (p.batch < 0) return fail(Status::InvalidSize, "negative batch count " + str(p.batch));
  if (p.stride_a < 0 || p.stride_b < 0 || p.stride_c < 0 || p.stride_d < 0)
    return fail(Status::InvalidSize, "negative stride: stride_a = " + str(p.stride_a) + ", stride_b = " +
                                         str(p.stride_b) + ", stride_c = " + str(p.stride_c) +
                                         ", stride_d = " + str(p.stride_d));
  return Status::Success;
}

Status validate_enums(const Matmul& p) {
  for (Op op : {p.op_a, p.op_b})
    if (op != Op::N && op != Op::T) return fail(Status::InvalidArgument, "unknown Op value " + str(static_cast<int>(op)));
  if (p.accum != Accum::F16 && p.accum != Accum::F32)
    return fail(Status::InvalidArgument, "unknown Accum value " + str(static_cast<int>(p.accum)));
  return Status::Success;
}

Status validate_types(const Matmul& p) {
  for (DataType t : {p.a_type, p.b_type, p.c_type, p.d_type})
    if (!valid_type(t)) return fail(Status::UnsupportedType, "unknown DataType value " + str(static_cast<int>(t)));
  if (Status s = validate_input_types(p.a_type, p.b_type); s != Status::Success) return s;
  if (p.accum == Accum::F16 && !p.all_f16())
    return fail(Status::UnsupportedType, "f16 accumulation needs f16 A, B, C and D; use Accum::F32");
  return Status::Success;
}

// The elements an operand spans: `batch` matrices `stride` apart, each `rows` rows of `width`
// elements `ld` apart, in 128 bits (sizes are non-negative here, so it cannot overflow).
}  // namespace

__int128 span(std::int64_t batch, std::int64_t stride, std::int64_t rows, std::int64_t ld, std::int64_t width) {
  if (batch <= 0 || rows <= 0 || width <= 0) return 0;
  return static_cast<__int128>(batch - 1) * stride + static_cast<__int128>(rows - 1) * ld + width;
}

Status validate_extent(const char* name, const void* ptr, __int128 elements, DataType t) {
  constexpr __int128 kMostBytes = __int128(1) << 56, kAddressSpace = __int128(1) << 64;
  const __int128 bytes = elements * data_type_size(t);
  if (bytes > kMostBytes)
    return fail(Status::ProblemTooLarge, std::string(name) +
                                             " spans more than 2^56 bytes with these sizes, leading dimension and "
                                             "batch stride: more than any GPU can address");
  if (static_cast<__int128>(reinterpret_cast<std::uintptr_t>(ptr)) + bytes > kAddressSpace)
    return fail(Status::InvalidPointer, std::string(name) + " would run past the end of the address space");
  return Status::Success;
}

namespace {

// No operand, aux matrix or vector the call touches spans more than 2^56 bytes (64 PiB, beyond any
// GPU's memory) or runs past the end of the address space: every size and address computed after
// this fits 64 bits.
Status validate_extents(const Matmul& p) {
  auto check = [](const char* name, const void* ptr, __int128 elements, DataType t) {
    return validate_extent(name, ptr, elements, t);
  };
  const bool a_mk = p.op_a == Op::N, b_kn = p.op_b == Op::N;
  Status s = Status::Success;
  if (p.a_used()) s = check("A", p.a, span(p.batch, p.stride_a, a_mk ? p.m : p.k, p.lda, a_mk ? p.k : p.m), p.a_type);
  if (s == Status::Success && p.b_used())
    s = check("B", p.b, span(p.batch, p.stride_b, b_kn ? p.k : p.n, p.ldb, b_kn ? p.n : p.k), p.b_type);
  if (s == Status::Success && p.c_read()) s = check("C", p.c, span(p.batch, p.stride_c, p.m, p.ldc, p.n), p.c_type);
  if (s != Status::Success || !p.d_used()) return s;
  s = check("D", p.d, span(p.batch, p.stride_d, p.m, p.ldd, p.n), p.d_type);
  const Epilogue& e = p.epilogue;
  auto vector = [&](std::int64_t stride, std::int64_t length) { return span(p.batch, stride, 1, 1, length); };
  if (s == Status::Success && e.bias_along != BiasAlong::None)
    s = check("epilogue.bias", e.bias, vector(e.stride_bias, e.bias_along == BiasAlong::M ? p.m : p.n), e.bias_type);
  if (s == Status::Success && e.aux_output)
    s = check("epilogue.aux", e.aux, span(p.batch, e.stride_aux, p.m, e.ldaux, p.n), e.aux_type);
  if (s == Status::Success && e.scale_rows)
    s = check("epilogue.row_scale", e.row_scale, vector(e.stride_row_scale, p.m), DataType::F32);
  if (s == Status::Success && e.scale_cols)
    s = check("epilogue.col_scale", e.col_scale, vector(e.stride_col_scale, p.n), DataType::F32);
  return s;
}

Status validate_leading_dims(const Matmul& p) {
  // Row-major storage: the leading dimension is at least the stored row width, and at least 1.
  const std::int64_t a_width = p.op_a == Op::N ? p.k : p.m;
  const std::int64_t b_width = p.op_b == Op::N ? p.n : p.k;
  auto check_ld = [](const char* name, std::int64_t ld, std::int64_t width, const char* what) {
    if (ld >= 1 && ld >= width) return Status::Success;
    return fail(Status::InvalidLeadingDim,
                std::string(name) + " = " + str(ld) + " is smaller than " + what + " = " + str(width > 1 ? width : 1));
  };
  Status s = check_ld("lda", p.lda, a_width, p.op_a == Op::N ? "K (op(A) = N)" : "M (op(A) = T)");
  if (s == Status::Success) s = check_ld("ldb", p.ldb, b_width, p.op_b == Op::N ? "N (op(B) = N)" : "K (op(B) = T)");
  if (s == Status::Success && p.c_read()) s = check_ld("ldc", p.ldc, p.n, "N");
  const bool in_place = p.d == p.c && p.d != nullptr;  // gemm's form: D is C
  if (s == Status::Success) s = check_ld(in_place ? "ldc" : "ldd", p.ldd, p.n, "N");
  return s;
}

// The bytes from the first element of an M×N operand's first matrix to past the last of its last
// (batches are checked matrix by matrix nowhere: interleaved C and D matrices are legitimate);
// below 2^56 for the matrices validate_extents passed.
std::int64_t extent(const Matmul& p, std::int64_t ld, std::int64_t stride, DataType t) {
  return static_cast<std::int64_t>(span(p.batch, stride, p.m, ld, p.n) * data_type_size(t));
}

bool overlap(const void* a, std::int64_t a_bytes, const void* b, std::int64_t b_bytes) {
  const auto x = reinterpret_cast<std::uintptr_t>(a), y = reinterpret_cast<std::uintptr_t>(b);
  return x < y + static_cast<std::uintptr_t>(b_bytes) && y < x + static_cast<std::uintptr_t>(a_bytes);
}

Status validate_pointers(const Matmul& p) {
  if (p.batch == 0) return Status::Success;
  if (p.a_used() && !p.a) return fail(Status::NullPointer, "A is null but op(A) is " + str(p.m) + "x" + str(p.k));
  if (p.b_used() && !p.b) return fail(Status::NullPointer, "B is null but op(B) is " + str(p.k) + "x" + str(p.n));
  if (p.c_read() && !p.c)
    return fail(Status::NullPointer, "C is null but beta = " + std::to_string(p.beta) + " reads it");
  if (p.d_used() && !p.d) return fail(Status::NullPointer, "D is null but D is " + str(p.m) + "x" + str(p.n));
  auto misaligned = [](const void* ptr, DataType t) {
    return reinterpret_cast<std::uintptr_t>(ptr) % static_cast<unsigned>(data_type_size(t)) != 0;
  };
  const char* off = p.a_used() && misaligned(p.a, p.a_type)   ? "A"
                    : p.b_used() && misaligned(p.b, p.b_type) ? "B"
                    : p.c_read() && misaligned(p.c, p.c_type) ? "C"
                    : p.d_used() && misaligned(p.d, p.d_type) ? "D"
                                                              : nullptr;
  if (off)
    return fail(Status::Misaligned, std::string(off) + " is not aligned to its element size (2 bytes for f16 and "
                                                       "bf16, 4 for f32)");
  if (p.c_read() && p.c == p.d &&
      (p.c_type != p.d_type || p.ldc != p.ldd || (p.batch > 1 && p.stride_c != p.stride_d)))
    return fail(Status::InvalidArgument, "C and D are the same memory but differ in type, leading dimension or "
                                         "batch stride");
  if (p.batch > 1 && p.d_used())
    if (Status s = matrices_apart("stride_d", p.stride_d, "ldd", p.ldd, p.m, "the D matrices"); s != Status::Success)
      return s;
  if (p.batch == 1 && p.c_read() && p.c != p.d && overlap(p.c, extent(p, p.ldc, p.stride_c, p.c_type), p.d,
                                          extent(p, p.ldd, p.stride_d, p.d_type)))
    return fail(Status::InvalidArgument, "C and D overlap without being the same memory");
  return Status::Success;
}

// The fused epilogue's fields (MatmulArgs::epilogue): enums and types always; vectors and aux,
// as the operands, only when D has elements. A pointer whose switch is off is not looked at.
Status validate_epilogue(const Matmul& p) {
  const Epilogue& e = p.epilogue;
  if (e.bias_along != BiasAlong::None && e.bias_along != BiasAlong::N && e.bias_along != BiasAlong::M)
    return fail(Status::InvalidArgument, "unknown BiasAlong value " + str(static_cast<int>(e.bias_along)));
  if (static_cast<unsigned>(e.activation) > static_cast<unsigned>(Activation::SiLU))
    return fail(Status::InvalidArgument, "unknown Activation value " + str(static_cast<int>(e.activation)));
  if (e.bias_along != BiasAlong::None && !valid_type(e.bias_type))
    return fail(Status::UnsupportedType, "unknown DataType value " + str(static_cast<int>(e.bias_type)) + " of the bias");
  if (e.aux_output && !valid_type(e.aux_type))
    return fail(Status::UnsupportedType, "unknown DataType value " + str(static_cast<int>(e.aux_type)) + " of aux");
  if (e.stride_bias < 0 || e.stride_aux < 0 || e.stride_row_scale < 0 || e.stride_col_scale < 0)
    return fail(Status::InvalidSize, "negative epilogue stride: stride_bias = " + str(e.stride_bias) +
                                         ", stride_aux = " + str(e.stride_aux) + ", stride_row_scale = " +
                                         str(e.stride_row_scale) + ", stride_col_scale = " + str(e.stride_col_scale));
  if (e.aux_output && (e.ldaux < 1 || e.ldaux < p.n))
    return fail(Status::InvalidLeadingDim,
                "epilogue.ldaux = " + str(e.ldaux) + " is smaller than N = " + str(p.n > 1 ? p.n : 1));
  if (!p.d_used()) return Status::Success;
  const char* along = e.bias_along == BiasAlong::M ? "M" : "N";
  if (e.bias_along != BiasAlong::None && !e.bias)
    return fail(Status::NullPointer, std::string("epilogue.bias is null but bias_along = ") + along);
  if (e.aux_output && !e.aux) return fail(Status::NullPointer, "epilogue.aux is null but aux_output is set");
  if (e.scale_rows && !e.row_scale) return fail(Status::NullPointer, "epilogue.row_scale is null but scale_rows is set");
  if (e.scale_cols && !e.col_scale) return fail(Status::NullPointer, "epilogue.col_scale is null but scale_cols is set");
  auto misaligned = [](const void* ptr, DataType t) {
    return reinterpret_cast<std::uintptr_t>(ptr) % static_cast<unsigned>(data_type_size(t)) != 0;
  };
  const char* off = e.bias_along != BiasAlong::None && misaligned(e.bias, e.bias_type) ? "epilogue.bias"
                    : e.aux_output && misaligned(e.aux, e.aux_type)                   ? "epilogue.aux"
                    : e.scale_rows && misaligned(e.row_scale, DataType::F32)          ? "epilogue.row_scale"
                    : e.scale_cols && misaligned(e.col_scale, DataType::F32)          ? "epilogue.col_scale"
                                                                                     : nullptr;
  if (off)
    return fail(Status::Misaligned, std::string(off) + " is not aligned to its element size (2 bytes for f16 and "
                                                       "bf16, 4 for f32)");
  if (!e.aux_output) return Status::Success;
  if (p.batch > 1)
    if (Status s = matrices_apart("epilogue.stride_aux", e.stride_aux, "ldaux", e.ldaux, p.m, "the aux matrices");
        s != Status::Success)
      return s;
  // aux is written while D is written and C read: the same product's matrices must be apart
  // (products 0 and batch - 1, as the pointer checks look at them).
  for (std::int64_t i : {std::int64_t(0), p.batch - 1}) {
    const Matmul q = p.product(i);
    const void* aux = element_at(e.aux, e.aux_type, i * e.stride_aux);
    const std::int64_t aux_bytes = extent(q, e.ldaux, 0, e.aux_type);
    if (overlap(aux, aux_bytes, q.d, extent(q, q.ldd, 0, q.d_type)))
      return fail(Status::InvalidArgument, "epilogue.aux overlaps D");
    if (q.c_read() && overlap(aux, aux_bytes, q.c, extent(q, q.ldc, 0, q.c_type)))
      return fail(Status::InvalidArgument, "epilogue.aux overlaps C");
  }
  return Status::Success;
}

}  // namespace

Status validate_accessible(const void* ptr, const char* name) {
  cudaPointerAttributes attr{};
  const cudaError_t err = cudaPointerGetAttributes(&attr, ptr);
  if (err != cudaSuccess) {
    cudaGetLastError();
    return fail(Status::InvalidPointer, std::string(name) + ": cudaPointerGetAttributes failed: " + cudaGetErrorString(err));
  }
  if (attr.type == cudaMemoryTypeUnregistered)
    return fail(Status::InvalidPointer,
                std::string(name) + " points to ordinary host memory; pass device, managed or pinned (mapped) memory");
  return Status::Success;
}


Status validate_arguments(const Matmul& p) {
  if (Status s = validate_enums(p); s != Status::Success) return s;
  if (Status s = validate_sizes(p); s != Status::Success) return s;
  if (Status s = validate_types(p); s != Status::Success) return s;
  if (Status s = validate_extents(p); s != Status::Success) return s;
  if (Status s = validate_leading_dims(p); s != Status::Success) return s;
  if (Status s = validate_pointers(p); s != Status::Success) return s;
  return validate_epilogue(p);
}

Status validate_pointers_accessible(const Matmul& p) {
  if (!p.d_used()) return Status::Success;  // nothing is read or written
  // The first and the last product of a batch: a stride that runs off an allocation shows there.
  // A single product once (gemm_batched asks about its host lists product by product).
  const std::int64_t ends[2] = {0, p.batch - 1};
  for (int end = 0; end < (p.batch > 1 ? 2 : 1); ++end) {
    const std::int64_t i = ends[end];
    const Matmul q = p.product(i);
    if (p.a_used())
      if (Status s = validate_accessible(q.a, "A"); s != Status::Success) return s;
    if (p.b_used())
      if (Status s = validate_accessible(q.b, "B"); s != Status::Success) return s;
    if (p.c_read() && q.c != q.d)  // C in place is D, asked about next
      if (Status s = validate_accessible(q.c, "C"); s != Status::Success) return s;
    if (Status s = validate_accessible(q.d, "D"); s != Status::Success) return s;
    const FusedEpilogue e = fused_epilogue(p.epilogue).of_product(i);
    for (auto [ptr, name] : {std::pair<const void*, const char*>{e.bias, "epilogue.bias"}, {e.aux, "epilogue.aux"},
                             {e.row_scale, "epilogue.row_scale"}, {e.col_scale, "epilogue.col_scale"}})
      if (ptr)
        if (Status s = validate_accessible(ptr, name); s != Status::Success) return s;
  }
  return Status::Success;
}

namespace {

/// The bytes [begin, end) of a matrix of rows × width elements of `size` bytes, rows ld apart.
struct Span {
  std::uintptr_t begin, end;
};

/// The spans of `count` matrices of one shape at p[i], in order of their first byte (sorted only
/// where they are not already: the lists a strided tensor gives are).
std::vector<Span> sorted_spans(const void* const* p, std::int64_t count, std::int64_t rows, std::int64_t width,
                               std::int64_t ld, int size) {
  std::vector<Span> spans(static_cast<std::size_t>(count));
  const auto bytes = static_cast<std::uintptr_t>(span(1, 0, rows, ld, width) * size);
  for (std::int64_t i = 0; i < count; ++i) {
    const auto begin = reinterpret_cast<std::uintptr_t>(p[i]);
    spans[static_cast<std::size_t>(i)] = {begin, begin + bytes};
  }
  auto by_begin = [](const Span& x, const Span& y) { return x.begin < y.begin; };
  if (!std::is_sorted(spans.begin(), spans.end(), by_begin)) std::sort(spans.begin(), spans.end(), by_begin);
  return spans;
}

/// Whether any of the sorted spans `reads` shares a byte with one of the sorted, disjoint spans
/// `writes`: one pass over both, the writes that end before a read starts passed for good.
bool any_meets(const std::vector<Span>& reads, const std::vector<Span>& writes) {
  std::size_t w = 0;
  for (const Span& r : reads) {
    while (w < writes.size() && writes[w].end <= r.begin) ++w;
    if (w < writes.size() && writes[w].begin < r.end) return true;
  }
  return false;
}

}  // namespace

bool products_independent(const Matmul& shape, const void* const* a, const void* const* b, void* const* d,
                          std::int64_t batch) {
  if (!shape.d_used()) return true;
  const std::vector<Span> writes =
      sorted_spans(reinterpret_cast<const void* const*>(d), batch, shape.m, shape.n, shape.ldd, data_type_size(shape.d_type));
  for (std::size_t i = 1; i < writes.size(); ++i)
    if (writes[i].begin < writes[i - 1].end) return false;
  const bool a_n = shape.op_a == Op::N, b_n = shape.op_b == Op::N;
  if (shape.a_used() && any_meets(sorted_spans(a, batch, a_n ? shape.m : shape.k, a_n ? shape.k : shape.m, shape.lda,
                                               data_type_size(shape.a_type)),
                                  writes))
    return false;
  return !(shape.b_used() && any_meets(sorted_spans(b, batch, b_n ? shape.k : shape.n, b_n ? shape.n : shape.k,
                                                    shape.ldb, data_type_size(shape.b_type)),
                                       writes));
}

Status matrices_apart(const char* stride_name, std::int64_t stride, const char* ld_name, std::int64_t ld,
                      std::int64_t rows, const char* matrices) {
  const __int128 least = static_cast<__int128>(ld) * rows;
  if (stride >= least) return Status::Success;
  std::string digits;  // ld·M in decimal (non-negative where stride is): it may be beyond 64 bits
  __int128 x = least;
  do {
    digits.insert(digits.begin(), static_cast<char>('0' + static_cast<int>(x % 10)));
  } while ((x /= 10) != 0);
  return fail(Status::InvalidLeadingDim, std::string(stride_name) + " = " + str(stride) + " is smaller than " + ld_name +
                                             " * M = " + digits + ": " + matrices + " would overlap");
}

Status validate_input_types(DataType a_type, DataType b_type) {
  if (a_type == DataType::F32 || b_type == DataType::F32)
    return fail(Status::UnsupportedType, "A and B must be f16 or bf16 (f32 inputs are not supported)");
  if (a_type != b_type)
    return fail(Status::UnsupportedType, std::string("A is ") + data_type_name(a_type) + " but B is " +
                                             data_type_name(b_type) + ": both must be one type");
  return Status::Success;
}

}  // namespace hgemm::detail
