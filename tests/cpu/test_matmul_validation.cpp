// SPDX-License-Identifier: Apache-2.0
// Argument validation of the typed matmul: every rule that needs no device, each refusal checked
// for its Status and for a message that names the problem. A call that passes validation goes
// on to the device: NoDevice without a GPU, InvalidPointer with one (the pointers are fake).
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "api/validate.h"
#include "hgemm/hgemm.h"
#include "validation_util.h"

namespace hgemm {
namespace {

using test::accepted;
using test::refused;

// A distinct, 256-byte-aligned, never-dereferenced address per operand, plus `bytes`.
void* fake(std::uintptr_t i, std::uintptr_t bytes = 0) { return reinterpret_cast<void*>(0x100000 * i + bytes); }

// D (4×5) = op(A) (4×6) · op(B) (6×5) + beta·C with beta = 1, tight leading dimensions.
MatmulArgs args(DataType in = DataType::F16, DataType c = DataType::F16, DataType d = DataType::F16) {
  MatmulArgs p;
  p.m = 4, p.n = 5, p.k = 6, p.beta = 1.f;
  p.a = fake(1), p.lda = 6, p.a_type = in;
  p.b = fake(2), p.ldb = 5, p.b_type = in;
  p.c = fake(3), p.ldc = 5, p.c_type = c;
  p.d = fake(4), p.ldd = 5, p.d_type = d;
  return p;
}

Status call(const MatmulArgs& p, Accum accum = Accum::F32, const char* kernel = "auto") {
  MatmulOptions o;
  o.accum = accum;
  o.kernel = kernel;
  return matmul(p, o);
}

TEST(TypedMatmulValidation, EveryTypeCombinationOfTheHeaderIsAccepted) {
  for (DataType in : {DataType::F16, DataType::BF16})
    for (DataType c : {DataType::F16, DataType::BF16, DataType::F32})
      for (DataType d : {DataType::F16, DataType::BF16, DataType::F32})
        EXPECT_TRUE(accepted(call(args(in, c, d))))
            << data_type_name(in) << " " << data_type_name(c) << " " << data_type_name(d);
}

TEST(TypedMatmulValidation, AAndBAreOneSixteenBitType) {
  MatmulArgs p = args(DataType::F16);
  p.b_type = DataType::BF16;
  EXPECT_TRUE(refused(call(p), Status::UnsupportedType, "A is f16 but B is bf16"));
  p.a_type = DataType::BF16, p.b_type = DataType::F16;
  EXPECT_TRUE(refused(call(p), Status::UnsupportedType, "A is bf16 but B is f16"));
  for (DataType a : {DataType::F16, DataType::F32})
    for (DataType b : {DataType::F16, DataType::F32}) {
      if (a == DataType::F16 && b == DataType::F16) continue;
      p.a_type = a, p.b_type = b;
      EXPECT_TRUE(refused(call(p), Status::UnsupportedType, "f32 inputs are not supported"))
          << data_type_name(a) << " " << data_type_name(b);
    }
}

TEST(TypedMatmulValidation, DataTypeValuesOutsideTheEnumAreRefused) {
  for (int operand = 0; operand < 4; ++operand)
    for (int value : {3, 255}) {
      MatmulArgs p = args();
      DataType* field[] = {&p.a_type, &p.b_type, &p.c_type, &p.d_type};
      *field[operand] = static_cast<DataType>(value);
      EXPECT_TRUE(refused(call(p), Status::UnsupportedType, "unknown DataType value " + std::to_string(value)))
          << "operand " << "ABCD"[operand];
    }
}

TEST(TypedMatmulValidation, F16AccumulationNeedsF16Everywhere) {
  EXPECT_TRUE(accepted(call(args(), Accum::F16)));
  for (const MatmulArgs& p : {args(DataType::F16, DataType::F16, DataType::BF16),
                              args(DataType::F16, DataType::F16, DataType::F32),
                              args(DataType::F16, DataType::F32, DataType::F16),
                              args(DataType::F16, DataType::BF16, DataType::F16),
                              args(DataType::BF16, DataType::F16, DataType::F16),
                              args(DataType::BF16, DataType::BF16, DataType::BF16)})
    EXPECT_TRUE(refused(call(p, Accum::F16), Status::UnsupportedType, "f16 accumulation needs f16 A, B, C and D"))
        << data_type_name(p.a_type) << " " << data_type_name(p.c_type) << " " << data_type_name(p.d_type);
  // beta = 0 never reads C, so C's type does not matter then.
  MatmulArgs unread = args(DataType::F16, DataType::F32, DataType::F16);
  unread.beta = 0.f;
  EXPECT_TRUE(accepted(call(unread, Accum::F16)));
}

TEST(TypedMatmulValidation, PointersAreAlignedToTheirElementSize) {
  const std::string text = "aligned to its element size";
  struct Shift {
    int operand;  // 0..3: A, B, C, D
    DataType in, c, d;
    std::uintptr_t bytes;
    bool ok;
  };
  const DataType h = DataType::F16, b = DataType::BF16, f = DataType::F32;
  for (const Shift& s : {Shift{3, h, h, f, 2, false}, Shift{3, h, h, f, 4, true}, Shift{3, b, b, f, 6, false},
                         Shift{3, h, h, h, 1, false}, Shift{3, h, h, h, 2, true}, Shift{3, b, b, b, 3, false},
                         Shift{2, h, f, h, 2, false}, Shift{2, b, f, b, 8, true}, Shift{2, h, b, h, 1, false},
                         Shift{0, h, h, h, 1, false}, Shift{0, b, h, h, 2, true}, Shift{1, b, h, h, 1, false},
                         Shift{1, h, h, h, 6, true}}) {
    MatmulArgs p = args(s.in, s.c, s.d);
    if (s.operand == 0) p.a = fake(1, s.bytes);
    if (s.operand == 1) p.b = fake(2, s.bytes);
    if (s.operand == 2) p.c = fake(3, s.bytes);
    if (s.operand == 3) p.d = fake(4, s.bytes);
    const std::string what = std::string("ABCD").substr(s.operand, 1) + " of " +
                             data_type_name(s.operand < 2 ? s.in : s.operand == 2 ? s.c : s.d) + " at +" +
                             std::to_string(s.bytes) + " bytes";
    if (s.ok) {
      EXPECT_TRUE(accepted(call(p))) << what;
    } else {
      EXPECT_TRUE(refused(call(p), Status::Misaligned, text)) << what;
    }
  }
  // A C that is not read (beta = 0) may be anywhere.
  MatmulArgs unread = args(DataType::F16, DataType::F32, DataType::F16);
  unread.c = fake(3, 2), unread.beta = 0.f;
  EXPECT_TRUE(accepted(call(unread)));
  unread.beta = 0.5f;
  EXPECT_TRUE(refused(call(unread), Status::Misaligned, "4 for f32"));
}

TEST(TypedMatmulValidation, CAndDInPlaceShareTypeLeadingDimensionAndStride) {
  MatmulArgs p = args(DataType::BF16, DataType::F32, DataType::F32);
  p.d = const_cast<void*>(p.c);
  EXPECT_TRUE(accepted(call(p)));
  p.d_type = DataType::BF16;
  EXPECT_TRUE(refused(call(p), Status::InvalidArgument, "C and D are the same memory"));
  p.d_type = DataType::F32, p.ldd = 6;
  EXPECT_TRUE(refused(call(p), Status::InvalidArgument, "leading dimension"));
  p.ldd = 5, p.batch = 2, p.stride_c = 20, p.stride_d = 24;
  EXPECT_TRUE(refused(call(p), Status::InvalidArgument, "batch stride"));
  p.stride_d = 20;
  EXPECT_TRUE(accepted(call(p)));
  // With beta = 0, C is not read: D may be the same memory in another type.
  p.beta = 0.f, p.d_type = DataType::F16, p.ldd = 6, p.stride_d = 24;
  EXPECT_TRUE(accepted(call(p)));
}

TEST(TypedMatmulValidation, NullPointers) {
  MatmulArgs p = args();
  p.c = nullptr;
  EXPECT_TRUE(refused(call(p), Status::NullPointer, "C is null but beta"));
  p.beta = 0.f;  // C is never read
  EXPECT_TRUE(accepted(call(p)));
  p.d = nullptr;
  EXPECT_TRUE(refused(call(p), Status::NullPointer, "D is null"));
  p = args(), p.a = nullptr;
  EXPECT_TRUE(refused(call(p), Status::NullPointer, "A is null"));
  p = args(), p.b = nullptr;
  EXPECT_TRUE(refused(call(p), Status::NullPointer, "B is null"));
  // K = 0: A and B are not read (D = beta·C).
  p = args(), p.k = 0, p.a = p.b = nullptr;
  EXPECT_TRUE(accepted(call(p)));
}

TEST(TypedMatmulValidation, SizesBatchAndStridesAreNonNegative) {
  MatmulArgs p = args();
  p.n = -3;
  EXPECT_TRUE(refused(call(p), Status::InvalidSize, "N = -3"));
  p = args(), p.batch = -1;
  EXPECT_TRUE(refused(call(p), Status::InvalidSize, "negative batch count -1"));
  for (const char* name : {"stride_a", "stride_b", "stride_c", "stride_d"}) {
    p = args(), p.batch = 2, p.stride_a = 24, p.stride_b = 30, p.stride_c = p.stride_d = 20;
    const char which = name[7];  // "stride_X"
    (which == 'a' ? p.stride_a : which == 'b' ? p.stride_b : which == 'c' ? p.stride_c : p.stride_d) = -7;
    EXPECT_TRUE(refused(call(p), Status::InvalidSize, std::string(name) + " = -7")) << name;
  }
}

TEST(TypedMatmulValidation, BatchedDMatricesMustNotOverlap) {
  // D's matrices are 4 rows of ldd = 5: stride_d ≥ 20.
  MatmulArgs p = args();
  p.batch = 3, p.stride_a = 24, p.stride_b = 30, p.stride_c = 20, p.stride_d = 19;
  EXPECT_TRUE(refused(call(p), Status::InvalidLeadingDim, "the D matrices would overlap"));
  EXPECT_NE(last_error_message().find("stride_d = 19"), std::string::npos) << last_error_message();
  p.stride_d = 0;
  EXPECT_TRUE(refused(call(p), Status::InvalidLeadingDim, "overlap"));
  p.stride_d = 20;
  EXPECT_TRUE(accepted(call(p)));
  // A stride of 0 repeats A, B or C in every product.
  p.stride_a = p.stride_b = p.stride_c = 0;
  EXPECT_TRUE(accepted(call(p)));
  // One product: D's stride is never used.
  p.batch = 1, p.stride_d = 0;
  EXPECT_TRUE(accepted(call(p)));
}

// Sizes no GPU can hold are refused before any size arithmetic could overflow 64 bits, and a
// matrix may not wrap around the end of the address space.
TEST(TypedMatmulValidation, ExtentsBeyondAnyGpuAreRefused) {
  MatmulArgs p = args();
  p.m = std::int64_t(1) << 40, p.lda = p.ldd = p.ldc = std::int64_t(1) << 40;
  EXPECT_TRUE(refused(call(p), Status::ProblemTooLarge, "A spans more than 2^56 bytes"));
  p = args(), p.ldd = INT64_MAX, p.beta = 0.f;  // D of 4 rows with the largest ld
  EXPECT_TRUE(refused(call(p), Status::ProblemTooLarge, "D spans more than 2^56 bytes"));
  p = args(), p.batch = INT64_MAX, p.stride_a = 24, p.stride_b = 30, p.stride_c = p.stride_d = 20;
  EXPECT_TRUE(refused(call(p), Status::ProblemTooLarge, "A spans"));
  p.stride_a = p.stride_b = 0;  // one A and one B, but C and D still span the batch
  EXPECT_TRUE(refused(call(p), Status::ProblemTooLarge, "C spans"));
  p = args(), p.beta = 0.f, p.epilogue.aux_output = true, p.epilogue.aux = fake(5), p.epilogue.ldaux = INT64_MAX;
  EXPECT_TRUE(refused(call(p), Status::ProblemTooLarge, "epilogue.aux spans"));
  p = args(), p.b = reinterpret_cast<const void*>(UINTPTR_MAX - 31);  // 6 rows of 5 f16 from there wrap
  EXPECT_TRUE(refused(call(p), Status::InvalidPointer, "B would run past the end of the address space"));
  // The largest a GPU could hold still passes: 2^40 elements of A in one row each of 2^20 rows.
  p = args(), p.m = std::int64_t(1) << 20, p.k = std::int64_t(1) << 20, p.lda = p.k, p.ldb = 5, p.beta = 0.f;
  EXPECT_TRUE(accepted(call(p)));
}

// Products of sizes in messages are printed whole, not wrapped around 64 bits.
TEST(BatchedValidationMessages, AProductOfSizesBeyond64BitsIsPrintedWhole) {
  __half* c = static_cast<__half*>(fake(3));
  const Status s = gemm_strided_batched(Op::N, Op::N, INT64_MAX, 5, 6, 1.f, static_cast<const __half*>(fake(1)), 6, 0,
                                        static_cast<const __half*>(fake(2)), 5, 0, 0.f, c, 4, 1, 2);
  EXPECT_TRUE(refused(s, Status::InvalidLeadingDim, "ldc * M = 36893488147419103228"));
}

TEST(TypedMatmulValidation, LeadingDimensionsOfCAndD) {
  MatmulArgs p = args();
  p.ldd = 4;
  EXPECT_TRUE(refused(call(p), Status::InvalidLeadingDim, "ldd = 4 is smaller than N = 5"));
  p = args(), p.ldc = 4;
  EXPECT_TRUE(refused(call(p), Status::InvalidLeadingDim, "ldc = 4 is smaller than N = 5"));
  p.beta = 0.f;  // C unread: its leading dimension does not matter
  EXPECT_TRUE(accepted(call(p)));
  p = args(), p.op_a = Op::T, p.lda = 3;  // A stored K×M: lda ≥ M = 4
  EXPECT_TRUE(refused(call(p), Status::InvalidLeadingDim, "lda = 3 is smaller than M (op(A) = T)"));
}

TEST(TypedMatmulValidation, EmptyBatchSucceedsWithoutADevice) {
  MatmulArgs p = args(DataType::BF16, DataType::F32, DataType::BF16);
  p.batch = 0, p.a = p.b = p.c = nullptr, p.d = nullptr;
  EXPECT_EQ(call(p), Status::Success) << last_error_message();
  EXPECT_EQ(last_error_message(), "");
  std::string id = "unchanged";
  EXPECT_EQ(resolve_matmul(p, {}, &id), Status::Success);
  EXPECT_EQ(id, "");
  // The rest of the call is still validated.
  p.a_type = p.b_type = DataType::F32;
  EXPECT_TRUE(refused(call(p), Status::UnsupportedType, "f32 inputs"));
  p.a_type = p.b_type = DataType::BF16, p.lda = 2;
  EXPECT_TRUE(refused(call(p), Status::InvalidLeadingDim, "lda = 2"));
}

TEST(TypedMatmulValidation, ResolveMatmulValidatesAsMatmulDoes) {
  MatmulArgs p = args(DataType::BF16, DataType::F32, DataType::F32);
  p.d = fake(4, 2);  // f32 D at a 2-byte offset
  std::string id = "unchanged";
  EXPECT_TRUE(refused(resolve_matmul(p, {}, &id), Status::Misaligned, "aligned to its element size"));
  EXPECT_EQ(id, "");
  MatmulOptions o;
  o.kernel = "engine.no_such_kernel";
  EXPECT_TRUE(refused(resolve_matmul(args(), o, &id), Status::UnknownKernel, "engine.no_such_kernel"));
  EXPECT_TRUE(refused(call(args(), Accum::F32, "engine.no_such_kernel"), Status::UnknownKernel, "no kernel named"));
}

// A batch given by pointers may run at once only where no product writes what another reads or
// writes: each matrix counted as the span from its first element to its last (padding included).
TEST(PointerBatchIndependence, WritesMustMeetNothingElse) {
  detail::Matmul shape;  // 4×5 = (4×6)·(6×5), f16, ld 8 throughout: a matrix spans 3·8 + 6 halves
  shape.m = 4, shape.n = 5, shape.k = 6, shape.lda = shape.ldb = shape.ldc = shape.ldd = 8;
  auto at = [](std::uintptr_t halves) { return reinterpret_cast<void*>(0x100000 + 2 * halves); };
  const std::uintptr_t b_span = 5 * 8 + 5, d_span = 3 * 8 + 5;
  // Three products: A, B and D each in a region of their own, D in any order.
  const void* a[3] = {at(0), at(100), at(200)};
  const void* b[3] = {at(1000), at(1100), at(1000)};  // B shared by products 0 and 2: reads only
  void* d[3] = {at(2200), at(2000), at(2000 + d_span)};  // adjacent, not overlapping
  EXPECT_TRUE(detail::products_independent(shape, a, b, d, 3));
  void* same_d[3] = {at(2000), at(2100), at(2000)};
  EXPECT_FALSE(detail::products_independent(shape, a, b, same_d, 3)) << "two products write one D";
  void* one_off[3] = {at(2000), at(2100), at(2000 + d_span - 1)};
  EXPECT_FALSE(detail::products_independent(shape, a, b, one_off, 3)) << "the last element of a D";
  void* interleaved[3] = {at(2000), at(2100), at(2005)};  // inside the first D's row padding
  EXPECT_FALSE(detail::products_independent(shape, a, b, interleaved, 3)) << "spans are compared, padding included";
  const void* chained_a[3] = {at(0), at(2000), at(200)};  // product 1 reads product 0's D ...
  void* chained_d[3] = {at(2000), at(2100), at(2200)};
  EXPECT_FALSE(detail::products_independent(shape, chained_a, b, chained_d, 3));
  const void* touching_b[3] = {at(1000), at(2100 - b_span), at(1100)};  // ... or a B that ends where a D starts
  EXPECT_TRUE(detail::products_independent(shape, a, touching_b, chained_d, 3));
  const void* into_b[3] = {at(1000), at(2100 - b_span + 1), at(1100)};
  EXPECT_FALSE(detail::products_independent(shape, a, into_b, chained_d, 3));
  shape.k = 0;  // A and B are not read: only the D matrices count
  EXPECT_TRUE(detail::products_independent(shape, chained_a, into_b, chained_d, 3));
}

// The same test against every pair compared directly, over random lists: A, B and D matrices
// scattered over a few kilobytes in any order, often touching, overlapping or shared.
TEST(PointerBatchIndependence, MatchesAComparisonOfEveryPair) {
  std::mt19937_64 rng(7);
  detail::Matmul shape;
  for (int draw = 0; draw < 3000; ++draw) {
    shape.op_a = rng() % 2 ? Op::N : Op::T, shape.op_b = rng() % 2 ? Op::N : Op::T;
    shape.m = 1 + static_cast<std::int64_t>(rng() % 4), shape.n = 1 + static_cast<std::int64_t>(rng() % 4);
    shape.k = static_cast<std::int64_t>(rng() % 4);
    shape.lda = 4 + static_cast<std::int64_t>(rng() % 3), shape.ldb = 4 + static_cast<std::int64_t>(rng() % 3);
    shape.ldc = shape.ldd = 4 + static_cast<std::int64_t>(rng() % 3);
    const std::int64_t batch = 1 + static_cast<std::int64_t>(rng() % 6);
    auto at = [&] { return reinterpret_cast<void*>(0x100000 + 2 * (rng() % 400)); };
    std::vector<const void*> a, b;
    std::vector<void*> d;
    for (std::int64_t i = 0; i < batch; ++i) a.push_back(at()), b.push_back(at()), d.push_back(at());
    auto span = [](const void* p, std::int64_t rows, std::int64_t width, std::int64_t ld) {
      const auto begin = reinterpret_cast<std::uintptr_t>(p);
      return std::pair{begin, begin + static_cast<std::uintptr_t>(((rows - 1) * ld + width) * 2)};
    };
    auto meet = [](std::pair<std::uintptr_t, std::uintptr_t> x, std::pair<std::uintptr_t, std::uintptr_t> y) {
      return x.first < y.second && y.first < x.second;
    };
    bool independent = true;
    for (std::int64_t i = 0; i < batch; ++i) {
      const auto di = span(d[i], shape.m, shape.n, shape.ldd);
      for (std::int64_t j = 0; j < batch; ++j) {
        if (j != i && meet(di, span(d[j], shape.m, shape.n, shape.ldd))) independent = false;
        const bool a_n = shape.op_a == Op::N, b_n = shape.op_b == Op::N;
        if (shape.k > 0 && meet(di, span(a[j], a_n ? shape.m : shape.k, a_n ? shape.k : shape.m, shape.lda)))
          independent = false;
        if (shape.k > 0 && meet(di, span(b[j], b_n ? shape.k : shape.n, b_n ? shape.n : shape.k, shape.ldb)))
          independent = false;
      }
    }
    ASSERT_EQ(detail::products_independent(shape, a.data(), b.data(), d.data(), batch), independent) << "draw " << draw;
  }
}

}  // namespace
}  // namespace hgemm
