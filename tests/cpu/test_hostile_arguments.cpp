// SPDX-License-Identifier: Apache-2.0
// Hostile arguments: valid problems with fields replaced at random by values that break size
// arithmetic (negative, zero, one, 2^31 and around it, 2^40, 2^62, INT64_MAX and INT64_MIN),
// out-of-range enums, null, misaligned and overlapping pointers, NaN and Inf scalars, through
// every public entry. Each call must come back with a status of the enum and, unless Success, a
// message saying why: no crash, no exception. Under -fsanitize=address,undefined (make sanitize)
// the same draw also shows any overflow in the host's checks. Without a GPU a call that passes
// every host check ends with NoDevice; nothing is launched, and no pointer is dereferenced.
#include <gtest/gtest.h>

#include <climits>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "hgemm/hgemm.h"
#include "random_shapes.h"

namespace hgemm {
namespace {

constexpr std::int64_t kSizes[] = {-1, 0, 1, 7, 64, 4096, INT_MAX, std::int64_t(INT_MAX) + 1,
                                   std::int64_t(1) << 40, std::int64_t(1) << 62, INT64_MAX, INT64_MIN};

// One of the values that break size arithmetic.
std::int64_t extreme(test::Draw& r) { return r.pick(kSizes); }

// A valid problem, then each field replaced by a hostile value now and then (about two per
// problem), so that every check meets extreme values while the others pass: the sizes, leading
// dimensions, batch and strides by extremes, enums by values outside them, pointers by null,
// one byte off or the top of the address space, scalars by NaN and Inf.
MatmulArgs hostile_args(test::Draw& r) {
  const double q = 0.06;
  auto size = [&](std::int64_t valid) { return r.chance(q) ? extreme(r) : valid; };
  auto pointer = [&](int i) -> const void* {
    const auto base = reinterpret_cast<const char*>(std::uintptr_t(0x100000000) * i);
    if (!r.chance(q)) return base;
    return r.pick<const void*>({nullptr, base + 1, reinterpret_cast<const void*>(UINTPTR_MAX - 15)});
  };
  auto enum_value = [&](auto valid, int count) {
    return r.chance(q) ? static_cast<decltype(valid)>(r.pick({count, 7, 200, 255})) : valid;
  };
  MatmulArgs p;
  p.op_a = enum_value(r.pick({Op::N, Op::T}), 2), p.op_b = enum_value(r.pick({Op::N, Op::T}), 2);
  p.m = size(r.between(0, 300)), p.n = size(r.between(0, 300)), p.k = size(r.between(0, 300));
  p.alpha = r.chance(q) ? r.pick({NAN, INFINITY, -INFINITY}) : 1.f;
  p.beta = r.chance(q) ? r.pick({NAN, INFINITY, -INFINITY}) : r.pick({0.f, 1.f});
  p.a = pointer(1), p.b = pointer(2), p.c = pointer(3);
  p.d = const_cast<void*>(r.chance(0.2) ? p.c : pointer(4));
  auto width = [](std::int64_t w) { return w > 1 ? w : 1; };
  p.lda = size(width(p.op_a == Op::N ? p.k : p.m)), p.ldb = size(width(p.op_b == Op::N ? p.n : p.k));
  p.ldc = size(width(p.n)), p.ldd = p.d == p.c ? p.ldc : size(width(p.n));
  const DataType in = r.pick({DataType::F16, DataType::BF16});
  p.a_type = enum_value(in, 3), p.b_type = enum_value(in, 3);
  p.d_type = enum_value(r.pick({DataType::F16, DataType::BF16, DataType::F32}), 3);
  p.c_type = p.d == p.c ? p.d_type : enum_value(r.pick({DataType::F16, DataType::BF16, DataType::F32}), 3);
  p.batch = size(r.pick<std::int64_t>({1, 1, 3}));
  auto matrix = [](std::int64_t rows, std::int64_t ld) {  // a tight stride, where it is a plain number
    return rows > 0 && ld > 0 && rows < (std::int64_t(1) << 31) && ld < (std::int64_t(1) << 31) ? rows * ld : 0;
  };
  p.stride_a = size(matrix(p.op_a == Op::N ? p.m : p.k, p.lda));
  p.stride_b = size(matrix(p.op_b == Op::N ? p.k : p.n, p.ldb));
  p.stride_d = size(matrix(p.m, p.ldd)), p.stride_c = p.d == p.c ? p.stride_d : size(matrix(p.m, p.ldc));
  if (r.chance(0.3)) {
    Epilogue& e = p.epilogue;
    e.bias_along = enum_value(r.pick({BiasAlong::None, BiasAlong::N, BiasAlong::M}), 3);
    e.bias = pointer(5), e.bias_type = enum_value(DataType::F32, 3), e.stride_bias = size(0);
    e.activation = enum_value(r.pick({Activation::None, Activation::ReLU, Activation::SiLU}), 5);
    e.aux_output = r.chance(0.5), e.aux = const_cast<void*>(pointer(6));
    e.aux_type = enum_value(DataType::F16, 3), e.ldaux = size(width(p.n)), e.stride_aux = size(matrix(p.m, e.ldaux));
    e.scale_rows = r.chance(0.3), e.scale_cols = r.chance(0.3);
    e.row_scale = static_cast<const float*>(pointer(7)), e.col_scale = static_cast<const float*>(pointer(8));
    e.stride_row_scale = size(0), e.stride_col_scale = size(0);
  }
  return p;
}

// A valid grouped problem of a random layout, then hostile fields as above.
GroupedMatmulArgs hostile_grouped(test::Draw& r) {
  const MatmulArgs base = hostile_args(r);  // sizes, pointers, types, leading dimensions, strides
  GroupedMatmulArgs g;
  g.layout = r.chance(0.05) ? static_cast<GroupedLayout>(7)
                            : r.pick({GroupedLayout::Contiguous, GroupedLayout::Masked, GroupedLayout::KGrouped});
  g.op_a = base.op_a, g.op_b = base.op_b, g.m = base.m, g.n = base.n, g.k = base.k, g.alpha = base.alpha;
  g.groups = r.chance(0.06) ? r.pick(kSizes) : r.between(0, 64);
  if (r.chance(0.05)) g.groups = kMaxGroupedGroups + 1;
  const auto* sizes = static_cast<const std::int32_t*>(r.chance(0.9) ? base.c : nullptr);
  (g.layout == GroupedLayout::Masked ? g.m_valid : g.offsets) = sizes;
  g.a = base.a, g.lda = base.lda, g.a_type = base.a_type, g.b = base.b, g.ldb = base.ldb, g.b_type = base.b_type;
  g.d = base.d, g.ldd = base.ldd, g.d_type = base.d_type;
  const bool masked = g.layout == GroupedLayout::Masked;
  g.stride_a = masked ? base.stride_a : (r.chance(0.06) ? base.stride_a : 0);
  g.stride_b = g.layout == GroupedLayout::KGrouped && r.chance(0.9) ? 0 : base.stride_b;
  g.stride_d = g.layout == GroupedLayout::Contiguous && r.chance(0.9) ? 0 : base.stride_d;
  return g;
}

// A status of the enum, and a message whenever it is not Success.
testing::AssertionResult answered(Status s, const std::string& call) {
  if (static_cast<int>(s) < 0 || s > Status::UnsupportedEpilogue)
    return testing::AssertionFailure() << call << ": status value " << static_cast<int>(s);
  if (s != Status::Success && last_error_message().empty())
    return testing::AssertionFailure() << call << ": " << status_string(s) << " without a message";
  return testing::AssertionSuccess();
}

TEST(HostileArguments, EveryEntryAnswersWithAStatusAndAMessage) {
  test::Draw r(test::random_seed() + 4);
  const int count = test::random_case_count(4000);
  for (int i = 0; i < count && !testing::Test::HasFailure(); ++i) {
    const MatmulArgs p = hostile_args(r);
    MatmulOptions o;
    o.accum = r.chance(0.05) ? static_cast<Accum>(9) : r.chance(0.15) ? Accum::F16 : Accum::F32;
    o.kernel = r.pick({"auto", "auto", "engine.sm90", "cuda.naive", "cublas.acc32", "no.such_kernel"});
    const std::string at = "draw " + std::to_string(i);
    std::string id;
    EXPECT_TRUE(answered(matmul(p, o), at + " matmul"));
    EXPECT_TRUE(answered(resolve_matmul(p, o, &id), at + " resolve_matmul"));

    // The f16 shorthand over the same sizes, as one product, a strided batch and pointer arrays.
    const auto* a = static_cast<const __half*>(p.a);
    const auto* b = static_cast<const __half*>(p.b);
    auto* c = static_cast<__half*>(p.d);
    EXPECT_TRUE(answered(gemm(p.op_a, p.op_b, p.m, p.n, p.k, p.alpha, a, p.lda, b, p.ldb, p.beta, c, p.ldc, o),
                         at + " gemm"));
    EXPECT_TRUE(answered(resolve_kernel(p.op_a, p.op_b, p.m, p.n, p.k, a, p.lda, b, p.ldb, c, p.ldc, o, &id),
                         at + " resolve_kernel"));
    EXPECT_TRUE(answered(gemm_strided_batched(p.op_a, p.op_b, p.m, p.n, p.k, p.alpha, a, p.lda, p.stride_a, b, p.ldb,
                                              p.stride_b, p.beta, c, p.ldc, p.stride_c, p.batch, o),
                         at + " gemm_strided_batched"));
    const std::int64_t listed = p.batch >= 0 && p.batch <= 3 ? p.batch : 3;  // the arrays hold 3
    std::vector<const __half*> as(3, a), bs(3, b);
    std::vector<__half*> cs(3, c);
    if (r.chance(0.3)) as[1] = nullptr;
    EXPECT_TRUE(answered(grouped_matmul(hostile_grouped(r), o), at + " grouped_matmul"));
    EXPECT_TRUE(answered(gemm_batched(p.op_a, p.op_b, p.m, p.n, p.k, p.alpha, as.data(), p.lda, bs.data(), p.ldb,
                                      p.beta, cs.data(), p.ldc, r.chance(0.8) ? listed : -listed, o),
                         at + " gemm_batched"));
  }
}

}  // namespace
}  // namespace hgemm
