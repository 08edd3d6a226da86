// SPDX-License-Identifier: Apache-2.0
// The typed storage, the typed fp64 reference and the typed compare, against hand-computed values.
#include <gtest/gtest.h>

#include <cmath>
#include <cstring>
#include <vector>

#include "reference/reference.h"
#include "reference/typed_data.h"

namespace hgemm::ref {
namespace {

constexpr DataType kTypes[] = {DataType::F16, DataType::BF16, DataType::F32};

TypedData typed(DataType t, std::initializer_list<float> values) {
  TypedData x(t, values.size());
  std::size_t i = 0;
  for (float v : values) x.set(i++, v);
  return x;
}

TEST(TypedData, RoundsToNearestTiesToEven) {
  const float p = std::ldexp(1.f, -8), q = std::ldexp(1.f, -11);
  // bf16 keeps 8 significant bits (ulp of 1 = 2^-7): ties go to the even neighbour.
  EXPECT_EQ(round_to(DataType::BF16, 1 + p), 1.f);
  EXPECT_EQ(round_to(DataType::BF16, 1 + 3 * p), 1 + 4 * p);
  EXPECT_EQ(round_to(DataType::BF16, 1 + p + std::ldexp(1.f, -20)), 1 + 2 * p);
  EXPECT_EQ(round_to(DataType::BF16, 257.f), 256.f);
  EXPECT_EQ(round_to(DataType::BF16, 259.f), 260.f);
  // f16 keeps 11 (ulp of 1 = 2^-10).
  EXPECT_EQ(round_to(DataType::F16, 1 + q), 1.f);
  EXPECT_EQ(round_to(DataType::F16, 1 + 3 * q), 1 + 4 * q);
  EXPECT_EQ(round_to(DataType::F16, 2049.f), 2048.f);
  EXPECT_EQ(round_to(DataType::F32, 0.1f), 0.1f);
  // Past the largest finite value: infinity, as the device's conversions give.
  EXPECT_TRUE(std::isinf(round_to(DataType::F16, 70000.f)));
  EXPECT_EQ(round_to(DataType::F16, 65504.f), 65504.f);
  EXPECT_TRUE(std::isinf(round_to(DataType::BF16, static_cast<float>(max_finite(DataType::F32)))));
  EXPECT_EQ(round_to(DataType::BF16, static_cast<float>(max_finite(DataType::BF16))), max_finite(DataType::BF16));
  for (DataType t : kTypes) {
    EXPECT_EQ(round_to(t, static_cast<float>(exact_integer_limit(t))), exact_integer_limit(t));
    EXPECT_NE(round_to(t, static_cast<float>(exact_integer_limit(t) + 1)), exact_integer_limit(t) + 1);
  }
}

TEST(TypedData, StoresTheDeviceBitPatterns) {
  const TypedData h = typed(DataType::F16, {1.5f, -2.f}), b = typed(DataType::BF16, {1.5f, -2.f}),
                  f = typed(DataType::F32, {1.5f, -2.f});
  EXPECT_EQ(h.bits(0), 0x3E00u);
  EXPECT_EQ(h.bits(1), 0xC000u);
  EXPECT_EQ(b.bits(0), 0x3FC0u);
  EXPECT_EQ(b.bits(1), 0xC000u);
  EXPECT_EQ(f.bits(0), 0x3FC00000u);
  EXPECT_EQ(h.bytes(), 4u);
  EXPECT_EQ(f.bytes(), 8u);
  for (DataType t : kTypes) {
    TypedData x(t, 3);
    x.fill_bits(nan_bits(t));
    EXPECT_TRUE(std::isnan(x.get(2))) << data_type_name(t);
    x.set(1, 0.75f);
    EXPECT_EQ(x.get(1), 0.75);
    EXPECT_EQ(load(x.data(), t, 1), 0.75);
  }
}

TEST(TypedData, RandomValuesAreRoundedToTheTypeAndReproducible) {
  for (DataType t : kTypes) {
    TypedData x(t, 5000), y(t, 5000), ints(t, 1000);
    fill_random(x, 42, Fill::Uniform);
    fill_random(y, 42, Fill::Uniform);
    fill_random(ints, 42, Fill::SmallInts);
    EXPECT_EQ(x, y) << data_type_name(t);
    int zeros = 0;
    for (std::size_t i = 0; i < x.size(); ++i) {
      const double v = x.get(i);
      ASSERT_EQ(round_to(t, static_cast<float>(v)), v) << data_type_name(t) << " element " << i;
      ASSERT_GE(v, -1.0);
      ASSERT_LE(v, 1.0);
      // The type's rounding of the stream's value: the same numbers in every type.
      ASSERT_EQ(v, round_to(t, random_value(42, i, Fill::Uniform)));
      zeros += v == 0;
    }
    EXPECT_LT(zeros, 10) << data_type_name(t);
    for (std::size_t i = 0; i < ints.size(); ++i) ASSERT_EQ(ints.get(i), random_value(42, i, Fill::SmallInts));
  }
  // The typed f16 fill is the f16 fill.
  std::vector<__half> h(5000);
  fill_random(h.data(), h.size(), 42, Fill::Uniform);
  TypedData x(DataType::F16, h.size());
  fill_random(x, 42, Fill::Uniform);
  EXPECT_EQ(std::memcmp(h.data(), x.data(), x.bytes()), 0);
}

// A host problem over typed buffers: A is M×K (op N), B is K×N (op N), C and D M×N, no padding.
MatmulArgs host_args(const TypedData& a, const TypedData& b, const TypedData* c, std::int64_t m, std::int64_t n,
                     std::int64_t k) {
  MatmulArgs args;
  args.m = m, args.n = n, args.k = k;
  args.a = a.data(), args.a_type = a.type(), args.lda = std::max<std::int64_t>(k, 1);
  args.b = b.data(), args.b_type = b.type(), args.ldb = std::max<std::int64_t>(n, 1);
  if (c) args.c = c->data(), args.c_type = c->type();
  args.ldc = args.ldd = std::max<std::int64_t>(n, 1);
  return args;
}

TEST(ReferenceMatmul, ReadsTheStoredTypesLayoutsAndOps) {
  // op(A) = Aᵀ, A bf16 stored 3×2 with lda = 3 (the third column is padding): op(A) =
  // [1 2 3; 4 5 6], where 1 + 2^-8 was stored as 1 (bf16 ties to even). op(B) = Bᵀ, B bf16
  // stored 2×3: op(B) = [1 0; 0 1; 1 1]. C is f32 [0.1 0; 0 2], 0.1 not representable in bf16.
  const float tie = 1 + std::ldexp(1.f, -8);
  const TypedData a = typed(DataType::BF16, {tie, 4, NAN, 2, 5, NAN, 3, 6, NAN});
  const TypedData b = typed(DataType::BF16, {1, 0, 1, 0, 1, 1});
  const TypedData c = typed(DataType::F32, {0.1f, 0, 0, 2});
  MatmulArgs args;
  args.op_a = Op::T, args.op_b = Op::T, args.m = 2, args.n = 2, args.k = 3, args.alpha = 2.f, args.beta = -1.f;
  args.a = a.data(), args.lda = 3, args.a_type = DataType::BF16;
  args.b = b.data(), args.ldb = 3, args.b_type = DataType::BF16;
  args.c = c.data(), args.ldc = 2, args.c_type = DataType::F32;
  const std::vector<Reference> r = reference_matmul(args);
  ASSERT_EQ(r.size(), 1u);
  // 2·[4 5; 10 11] − [0.1 0; 0 2], with 0.1 as the f32 value it is stored as.
  EXPECT_EQ(r[0].c, (std::vector<double>{8 - static_cast<double>(0.1f), 10, 20, 20}));
  EXPECT_DOUBLE_EQ(r[0].a_row_norm[0], std::sqrt(14.0));
  EXPECT_DOUBLE_EQ(r[0].b_col_norm[1], std::sqrt(2.0));
  EXPECT_DOUBLE_EQ(r[0].c_in[0], static_cast<double>(0.1f));
}

TEST(ReferenceMatmul, BetaZeroReadsNoCAndKZeroGivesBetaC) {
  const TypedData a = typed(DataType::F16, {1, 2}), b = typed(DataType::F16, {3, 4});
  const TypedData nan_c = typed(DataType::F32, {NAN});
  MatmulArgs args = host_args(a, b, &nan_c, 1, 1, 2);
  EXPECT_EQ(reference_matmul(args)[0].c[0], 11.0);
  args.c = nullptr;
  EXPECT_EQ(reference_matmul(args)[0].c[0], 11.0);
  const TypedData c = typed(DataType::BF16, {3, -5});
  MatmulArgs k0 = host_args(a, b, &c, 1, 2, 0);
  k0.a = k0.b = nullptr, k0.beta = 0.5f;
  EXPECT_EQ(reference_matmul(k0)[0].c, (std::vector<double>{1.5, -2.5}));
}

TEST(ReferenceMatmul, StridedBatchRepeatsOperandsOfStrideZero) {
  // Three products of 2×2×2; A and C repeated (stride 0), B matrix i at 5·i (one padding element).
  const TypedData a = typed(DataType::BF16, {1, 2, 3, 4});
  const TypedData b = typed(DataType::BF16, {1, 0, 0, 1, NAN, 2, 0, 0, 2, NAN, 0, 1, 1, 0, NAN});
  const TypedData c = typed(DataType::F16, {1, 1, 1, 1});
  MatmulArgs args = host_args(a, b, &c, 2, 2, 2);
  args.batch = 3, args.stride_b = 5, args.beta = 1.f;
  const std::vector<Reference> r = reference_matmul(args);
  ASSERT_EQ(r.size(), 3u);
  EXPECT_EQ(r[0].c, (std::vector<double>{2, 3, 4, 5}));    // A·I + 1
  EXPECT_EQ(r[1].c, (std::vector<double>{3, 5, 7, 9}));    // 2A + 1
  EXPECT_EQ(r[2].c, (std::vector<double>{3, 2, 5, 4}));    // A with its columns swapped, + 1
  args.batch = 0;
  EXPECT_TRUE(reference_matmul(args).empty());
}

TEST(ReferenceMatmul, AgreesWithTheF16Reference) {
  const std::int64_t m = 37, n = 29, k = 53;
  TypedData a(DataType::F16, m * k), b(DataType::F16, k * n), c(DataType::F16, m * n);
  fill_random(a, 1, Fill::Uniform), fill_random(b, 2, Fill::Uniform), fill_random(c, 3, Fill::Uniform);
  MatmulArgs args = host_args(a, b, &c, m, n, k);
  args.alpha = -1.5f, args.beta = 0.25f;
  const Reference typed_ref = reference_matmul(args)[0];
  const Reference f16_ref =
      reference_gemm(Op::N, Op::N, m, n, k, -1.5, static_cast<const __half*>(a.data()), k,
                     static_cast<const __half*>(b.data()), n, 0.25, static_cast<const __half*>(c.data()), n);
  EXPECT_EQ(typed_ref.c, f16_ref.c);
  EXPECT_EQ(typed_ref.c_in, f16_ref.c_in);
  EXPECT_EQ(typed_ref.a_row_norm, f16_ref.a_row_norm);
}

TEST(CompareTyped, MeasuresErrorsInEachOutputType) {
  const TypedData a = typed(DataType::BF16, {1, 2, 3, 4}), b = typed(DataType::BF16, {1, 0, 0, 1});
  const Reference r = reference_matmul(host_args(a, b, nullptr, 2, 2, 2))[0];  // A·I = A
  for (DataType t : kTypes) {
    EXPECT_EQ(compare(r, typed(t, {1, 2, 3, 4}).data(), t, 2).max_abs, 0.0) << data_type_name(t);
    const ErrorStats e = compare(r, typed(t, {1, 2, 3, 4.5f}).data(), t, 2);
    EXPECT_DOUBLE_EQ(e.max_abs, 0.5);
    EXPECT_DOUBLE_EQ(e.rel_fro, 0.5 / std::sqrt(30.0));
    EXPECT_EQ(e.worst_row, 1);
    EXPECT_EQ(e.worst_col, 1);
    // D stored with ldd = 3: the padding (NaN) is not compared.
    EXPECT_EQ(compare(r, typed(t, {1, 2, NAN, 3, 4, NAN}).data(), t, 3).nonfinite, 0);
    const ErrorStats nan = compare(r, typed(t, {1, 2, NAN, 4}).data(), t, 2);
    EXPECT_EQ(nan.nonfinite, 1);
    EXPECT_EQ(nan.worst_row, 1);
    EXPECT_EQ(nan.worst_col, 0);
  }
  // Scaled by ‖row 1 of A‖·‖column 1 of B‖ = 5, plus the floor of the type.
  EXPECT_DOUBLE_EQ(compare(r, typed(DataType::F32, {1, 2, 3, 4.5f}).data(), DataType::F32, 2).max_scaled,
                   0.5 / (5 + std::ldexp(1.0, -126)));
}

TEST(CompareTyped, TheFloorIsTheSmallestNormalOfTheOutputType) {
  // K = 0, D = C = 2^-30: far below f16's normal range (f16 must give 0 and passes), well inside
  // bf16's and f32's, where a 0 is a 100% error.
  const TypedData c = typed(DataType::F32, {std::ldexp(1.f, -30)});
  MatmulArgs args;
  args.m = args.n = 1, args.k = 0, args.beta = 1.f, args.lda = args.ldb = args.ldc = args.ldd = 1;
  args.c = c.data(), args.c_type = DataType::F32;
  const Reference r = reference_matmul(args)[0];
  EXPECT_LT(compare(r, typed(DataType::F16, {0}).data(), DataType::F16, 1).max_scaled, std::ldexp(1.0, -15));
  EXPECT_GT(compare(r, typed(DataType::BF16, {0}).data(), DataType::BF16, 1).max_scaled, 0.99);
  EXPECT_EQ(compare(r, typed(DataType::BF16, {std::ldexp(1.f, -30)}).data(), DataType::BF16, 1).max_abs, 0.0);
  EXPECT_GT(compare(r, typed(DataType::F32, {0}).data(), DataType::F32, 1).max_scaled, 0.99);
}

}  // namespace
}  // namespace hgemm::ref
