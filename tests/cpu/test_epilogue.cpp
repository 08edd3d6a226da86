// SPDX-License-Identifier: Apache-2.0
// The fused epilogue on the CPU: every refusal of its validation (Status and message, before any
// CUDA call), the policy's choices with an epilogue (the engine's plan does not change; off
// Hopper auto takes a kernel that does not fuse it, and matmul adds the elementwise pass), and
// the shapes the GPU tests use to reach each scheduler.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <set>
#include <string>
#include <vector>

#include "dispatch/policy.h"
#include "hgemm/hgemm.h"
#include "validation_util.h"

namespace hgemm {
namespace {

using test::accepted;
using test::refused;

// A distinct, 256-byte-aligned, never-dereferenced address per operand, plus `bytes`.
void* fake(std::uintptr_t i, std::uintptr_t bytes = 0) { return reinterpret_cast<void*>(0x100000 * i + bytes); }

// D (4×5) = op(A) (4×6) · op(B) (6×5), with a bias along N, GELU, aux and both scales.
MatmulArgs args() {
  MatmulArgs p;
  p.m = 4, p.n = 5, p.k = 6;
  p.a = fake(1), p.lda = 6;
  p.b = fake(2), p.ldb = 5;
  p.d = fake(4), p.ldd = 5;
  Epilogue& e = p.epilogue;
  e.bias_along = BiasAlong::N, e.bias = fake(5), e.bias_type = DataType::BF16;
  e.activation = Activation::GELU;
  e.aux_output = true, e.aux = fake(6), e.aux_type = DataType::F32, e.ldaux = 5;
  e.scale_rows = e.scale_cols = true;
  e.row_scale = static_cast<const float*>(fake(7)), e.col_scale = static_cast<const float*>(fake(8));
  return p;
}

TEST(EpilogueValidation, EveryPartAndTypeIsAccepted) {
  EXPECT_TRUE(accepted(matmul(args())));
  for (DataType t : {DataType::F16, DataType::BF16, DataType::F32})
    for (BiasAlong along : {BiasAlong::N, BiasAlong::M})
      for (Activation act : {Activation::None, Activation::ReLU, Activation::GELU, Activation::GELUTanh, Activation::SiLU}) {
        MatmulArgs p = args();
        p.epilogue.bias_type = p.epilogue.aux_type = t;
        p.epilogue.bias_along = along;
        p.epilogue.activation = act;
        EXPECT_TRUE(accepted(matmul(p))) << data_type_name(t) << " " << activation_name(act);
      }
}

TEST(EpilogueValidation, NullVectorsWithTheirSwitchOnAreRefused) {
  MatmulArgs p = args();
  p.epilogue.bias = nullptr;
  EXPECT_TRUE(refused(matmul(p), Status::NullPointer, "epilogue.bias is null but bias_along = N"));
  p.epilogue.bias_along = BiasAlong::M;
  EXPECT_TRUE(refused(matmul(p), Status::NullPointer, "bias_along = M"));
  p.epilogue.bias_along = BiasAlong::None;  // a null pointer whose switch is off is not looked at
  EXPECT_TRUE(accepted(matmul(p)));
  p = args();
  p.epilogue.aux = nullptr;
  EXPECT_TRUE(refused(matmul(p), Status::NullPointer, "epilogue.aux is null but aux_output is set"));
  p = args();
  p.epilogue.row_scale = nullptr;
  EXPECT_TRUE(refused(matmul(p), Status::NullPointer, "epilogue.row_scale is null"));
  p = args();
  p.epilogue.col_scale = nullptr;
  EXPECT_TRUE(refused(matmul(p), Status::NullPointer, "epilogue.col_scale is null"));
  p.epilogue.scale_cols = false;
  EXPECT_TRUE(accepted(matmul(p)));
}

TEST(EpilogueValidation, AnEmptyDNeedsNoVectors) {
  MatmulArgs p = args();
  p.m = 0;
  p.epilogue.bias = p.epilogue.aux = nullptr;
  p.epilogue.row_scale = p.epilogue.col_scale = nullptr;
  EXPECT_TRUE(accepted(matmul(p)));  // then, with a device, nothing runs
  p.batch = 0;  // an empty batch needs no device either
  EXPECT_EQ(matmul(p), Status::Success) << last_error_message();
}

TEST(EpilogueValidation, MisalignedVectorsAreRefused) {
  MatmulArgs p = args();
  p.epilogue.bias = fake(5, 2);  // bf16: 2 bytes is aligned
  EXPECT_TRUE(accepted(matmul(p)));
  p.epilogue.bias_type = DataType::F32;
  EXPECT_TRUE(refused(matmul(p), Status::Misaligned, "epilogue.bias is not aligned"));
  p = args();
  p.epilogue.aux = fake(6, 2);  // f32
  EXPECT_TRUE(refused(matmul(p), Status::Misaligned, "epilogue.aux is not aligned"));
  p.epilogue.aux_type = DataType::F16;
  EXPECT_TRUE(accepted(matmul(p)));
  p = args();
  p.epilogue.row_scale = static_cast<const float*>(fake(7, 2));
  EXPECT_TRUE(refused(matmul(p), Status::Misaligned, "epilogue.row_scale is not aligned"));
  p = args();
  p.epilogue.col_scale = static_cast<const float*>(fake(8, 1));
  EXPECT_TRUE(refused(matmul(p), Status::Misaligned, "epilogue.col_scale is not aligned"));
}

TEST(EpilogueValidation, EnumAndTypeValuesOutsideTheirRangeAreRefused) {
  MatmulArgs p = args();
  p.epilogue.activation = static_cast<Activation>(5);
  EXPECT_TRUE(refused(matmul(p), Status::InvalidArgument, "unknown Activation value 5"));
  p = args();
  p.epilogue.bias_along = static_cast<BiasAlong>(3);
  EXPECT_TRUE(refused(matmul(p), Status::InvalidArgument, "unknown BiasAlong value 3"));
  p = args();
  p.epilogue.bias_type = static_cast<DataType>(3);
  EXPECT_TRUE(refused(matmul(p), Status::UnsupportedType, "of the bias"));
  p = args();
  p.epilogue.aux_type = static_cast<DataType>(7);
  EXPECT_TRUE(refused(matmul(p), Status::UnsupportedType, "of aux"));
}

TEST(EpilogueValidation, AuxLayoutIsChecked) {
  MatmulArgs p = args();
  p.epilogue.ldaux = 4;
  EXPECT_TRUE(refused(matmul(p), Status::InvalidLeadingDim, "epilogue.ldaux = 4 is smaller than N = 5"));
  p = args();
  p.epilogue.stride_aux = -1;
  EXPECT_TRUE(refused(matmul(p), Status::InvalidSize, "negative epilogue stride"));
  p = args();
  p.epilogue.stride_bias = -3;
  EXPECT_TRUE(refused(matmul(p), Status::InvalidSize, "stride_bias = -3"));
  // A batch of 2: aux matrices must not overlap each other.
  p = args();
  p.batch = 2, p.stride_a = 24, p.stride_b = 30, p.stride_d = 20;
  p.epilogue.stride_aux = 19;
  EXPECT_TRUE(refused(matmul(p), Status::InvalidLeadingDim, "the aux matrices would overlap"));
  p.epilogue.stride_aux = 20;
  EXPECT_TRUE(accepted(matmul(p)));
}

TEST(EpilogueValidation, AuxMustNotOverlapDOrC) {
  MatmulArgs p = args();
  p.epilogue.aux = p.d;
  EXPECT_TRUE(refused(matmul(p), Status::InvalidArgument, "epilogue.aux overlaps D"));
  p.epilogue.aux = fake(4, 4 * 5 * 2 - 4);  // D is 4×5 f16: its last element
  EXPECT_TRUE(refused(matmul(p), Status::InvalidArgument, "epilogue.aux overlaps D"));
  p.epilogue.aux = fake(4, 4 * 5 * 2);  // just past D
  EXPECT_TRUE(accepted(matmul(p)));
  p = args();
  p.beta = 1.f, p.c = fake(3), p.ldc = 5;
  p.epilogue.aux = fake(3, 8);
  EXPECT_TRUE(refused(matmul(p), Status::InvalidArgument, "epilogue.aux overlaps C"));
  p.beta = 0.f;  // C unread
  EXPECT_TRUE(accepted(matmul(p)));
}

TEST(EpilogueValidation, SwitchedOffPartsAreNotLookedAt) {
  MatmulArgs p = args();
  p.epilogue = Epilogue{};
  p.epilogue.bias = fake(5, 1), p.epilogue.aux = p.d, p.epilogue.ldaux = -4;
  p.epilogue.row_scale = static_cast<const float*>(fake(7, 1));
  EXPECT_FALSE(p.epilogue.enabled());
  EXPECT_TRUE(accepted(matmul(p)));
}

TEST(EpilogueNames, ActivationsAndTheNewStatusHaveNames) {
  EXPECT_STREQ(activation_name(Activation::None), "none");
  EXPECT_STREQ(activation_name(Activation::ReLU), "relu");
  EXPECT_STREQ(activation_name(Activation::GELU), "gelu");
  EXPECT_STREQ(activation_name(Activation::GELUTanh), "gelu_tanh");
  EXPECT_STREQ(activation_name(Activation::SiLU), "silu");
  EXPECT_STRNE(status_string(Status::UnsupportedEpilogue), "unknown status");
}

}  // namespace

namespace detail {
namespace {

Matmul problem(std::int64_t m, std::int64_t n, std::int64_t k, Op op_a, Op op_b, bool epilogue, float beta = 0.f) {
  Matmul p;
  p.op_a = op_a, p.op_b = op_b, p.m = m, p.n = n, p.k = k, p.beta = beta;
  p.lda = op_a == Op::N ? k : m, p.ldb = op_b == Op::N ? n : k, p.ldc = p.ldd = n;
  p.a = fake(1), p.b = fake(2), p.c = fake(3), p.d = fake(4);
  if (epilogue) p.epilogue = args().epilogue;
  return p;
}

// The plan without the instantiation's store code (Plan::finish), which an epilogue changes.
std::string schedule_of(Choice c) {
  c.plan.finish = engine::TileFinish::Any;
  return describe(c);
}

// The engine applies the epilogue on whatever path its plan takes: the plan, store path
// included, is the same with and without one; only the instantiation's store code differs.
TEST(EpilogueDispatch, TheEnginePlanDoesNotDependOnTheEpilogue) {
  const Device h200 = described_h200();
  for (const char* shape : {"1000x1000x1000", "2048x2048x2048", "2047x2047x2047", "16x4096x4096", "7x3500x1000",
                            "16x64x65536", "100x60x30000", "8192x8192x8192", "64x8192x8192"})
    for (float beta : {0.f, 1.f}) {
      std::int64_t m, n, k;
      ASSERT_EQ(std::sscanf(shape, "%ldx%ldx%ld", &m, &n, &k), 3);
      Choice plain, fused;
      std::string why;
      ASSERT_EQ(choose_auto(problem(m, n, k, Op::N, Op::T, false, beta), h200, &plain, &why), Status::Success) << why;
      ASSERT_EQ(choose_auto(problem(m, n, k, Op::N, Op::T, true, beta), h200, &fused, &why), Status::Success) << why;
      EXPECT_EQ(schedule_of(plain), schedule_of(fused)) << shape;
      EXPECT_TRUE(fused.entry->fuses_epilogue) << shape;
    }
}

// Which instantiation's store code runs (Plan::finish): the plain one for alpha·op(A)·op(B)
// alone, the fused-in-registers one of Wide and Narrow for a bias, aux and activation stored by
// TMA with f32 accumulators, the general one for everything else.
TEST(EpilogueDispatch, ThePlanNamesTheStoreCodeThatRuns) {
  using engine::TileFinish;
  const Device h200 = described_h200();
  auto finish = [&](Matmul p) {
    Choice c;
    std::string why;
    EXPECT_EQ(choose_auto(p, h200, &c, &why), Status::Success) << why;
    return c.plan.finish;
  };
  // A Linear layer's epilogue: bias, aux, activation (problem()'s, without its scales).
  auto linear = [](std::int64_t m, std::int64_t n, std::int64_t k, float beta = 0.f) {
    Matmul p = problem(m, n, k, Op::N, Op::T, true, beta);
    p.epilogue.scale_rows = p.epilogue.scale_cols = false;
    return p;
  };
  auto with_f16_accum = [](Matmul p) {
    p.accum = Accum::F16;
    return p;
  };
  for (const char* shape : {"2048x2048x2048", "4096x4096x128", "100x17024x1600", "8192x8192x8192"}) {
    SCOPED_TRACE(shape);
    std::int64_t m, n, k;
    ASSERT_EQ(std::sscanf(shape, "%ldx%ldx%ld", &m, &n, &k), 3);
    EXPECT_EQ(finish(problem(m, n, k, Op::N, Op::T, false)), TileFinish::Plain);
    EXPECT_EQ(finish(linear(m, n, k)), TileFinish::FusedInRegisters);
    EXPECT_EQ(finish(linear(m, n, k, 1.f)), TileFinish::Any) << "C read";
    EXPECT_EQ(finish(problem(m, n, k, Op::N, Op::T, false, 1.f)), TileFinish::Any) << "C read";
    EXPECT_EQ(finish(problem(m, n, k, Op::N, Op::T, true)), TileFinish::Any) << "scales";
    EXPECT_EQ(finish(with_f16_accum(linear(m, n, k))), TileFinish::Any) << "f16 accumulators";
  }
  // Staged rows (a ragged D), split-K partials, cluster split-K and the swapped kernels: the
  // general code with or without an epilogue.
  for (const char* shape : {"2047x2047x2047", "16x64x65536", "24x2200x8300", "16x4096x4096", "64x8192x8192"})
    for (bool epilogue : {false, true}) {
      std::int64_t m, n, k;
      ASSERT_EQ(std::sscanf(shape, "%ldx%ldx%ld", &m, &n, &k), 3);
      EXPECT_EQ(finish(epilogue ? linear(m, n, k) : problem(m, n, k, Op::N, Op::T, false)), TileFinish::Any)
          << shape << " " << epilogue;
    }
  // A tile per CTA has a plain instantiation for any store path, and no fused-in-registers one.
  EXPECT_EQ(finish(problem(1000, 1000, 1000, Op::N, Op::T, false)), TileFinish::Plain);
  EXPECT_EQ(finish(linear(1000, 1000, 1000)), TileFinish::Any);
}

// aux goes by TMA (Plan::aux_by_tma) where the fused-in-registers code runs whole tiles and TMA
// can store aux as it stores D: the GPU's aux-by-TMA shapes reach Wide and Narrow, whole tiles
// (by TMA) and stream-K (from registers); an aux TMA cannot take (rows, pointer, batch stride)
// and any other store code keep the stores from registers.
TEST(EpilogueDispatch, AuxGoesByTmaWhereTmaCanStoreIt) {
  const Device h200 = described_h200();
  auto plan_of = [&](const Matmul& p) {
    Choice c;
    std::string why;
    EXPECT_EQ(choose_auto(p, h200, &c, &why), Status::Success) << why;
    return c.plan;
  };
  auto linear = [](std::int64_t m, std::int64_t n, std::int64_t k, Op op_a, Op op_b, DataType aux_type) {
    Matmul p = problem(m, n, k, op_a, op_b, true);
    p.epilogue.scale_rows = p.epilogue.scale_cols = false;
    p.epilogue.aux_type = aux_type, p.epilogue.ldaux = n;
    EXPECT_TRUE(p.aux_by_tma) << "GemmOptions::aux_by_tma is on by default";
    return p;
  };
  const struct {
    std::int64_t m, n, k;
    Op op_a, op_b;
    const char* plan;
    bool by_tma;
  } shapes[] = {
      {2048, 2048, 512, Op::N, Op::T, "wide 128x256 c2, whole tiles", true},
      {4000, 4096, 128, Op::N, Op::T, "wide 128x256 c2, whole tiles", true},
      {4100, 2056, 64, Op::N, Op::N, "wide 128x256 c2, whole tiles", true},
      {128, 32768, 512, Op::N, Op::T, "narrow 128x128, whole tiles", true},
      {3000, 3000, 3000, Op::T, Op::N, "wide 128x256 c2, stream-K", false},
      {100, 17024, 1600, Op::T, Op::T, "narrow 128x128, stream-K", false},
  };
  for (const auto& c : shapes)
    for (DataType t : {DataType::F16, DataType::BF16, DataType::F32}) {
      SCOPED_TRACE(std::to_string(c.m) + "x" + std::to_string(c.n) + "x" + std::to_string(c.k) + " aux " +
                   data_type_name(t));
      Matmul p = linear(c.m, c.n, c.k, c.op_a, c.op_b, t);
      const engine::Plan plan = plan_of(p);
      const std::string text = engine::describe(plan);
      EXPECT_EQ(plan.aux_by_tma, c.by_tma) << text;
      EXPECT_NE(text.find(c.plan), std::string::npos) << text;
      EXPECT_NE(text.find(c.by_tma ? "fused in registers, aux by TMA" : "fused in registers"), std::string::npos) << text;
      if (!c.by_tma) continue;
      Matmul register_stores = p;
      register_stores.aux_by_tma = false;
      EXPECT_FALSE(plan_of(register_stores).aux_by_tma) << "GemmOptions::aux_by_tma = false";
      Matmul odd_rows = p;
      odd_rows.epilogue.ldaux = c.n + 5;
      EXPECT_FALSE(plan_of(odd_rows).aux_by_tma) << "ldaux = N + 5";
      Matmul misaligned = p;
      misaligned.epilogue.aux = fake(6, 4);
      EXPECT_FALSE(plan_of(misaligned).aux_by_tma) << "aux 4 bytes past a 16-byte boundary";
      Matmul scaled = p;
      scaled.epilogue.scale_rows = true;
      EXPECT_FALSE(plan_of(scaled).aux_by_tma) << "scales: the general code";
      Matmul no_aux = p;
      no_aux.epilogue.aux_output = false;
      EXPECT_FALSE(plan_of(no_aux).aux_by_tma) << "no aux";
      Matmul batch = p;
      batch.batch = 2, batch.stride_a = c.m * c.k, batch.stride_b = c.n * c.k, batch.stride_d = c.m * c.n;
      batch.epilogue.stride_aux = c.m * c.n + 64;
      const engine::Plan batched = plan_of(batch);
      EXPECT_EQ(batched.aux_by_tma, batched.finish == engine::TileFinish::FusedInRegisters &&
                                        batched.choice.scheduler != engine::Scheduler::StreamK)
          << "a batch whose aux matrices start on 16-byte boundaries: " << engine::describe(batched);
      batch.epilogue.stride_aux = c.m * c.n + 3;
      EXPECT_FALSE(plan_of(batch).aux_by_tma) << "aux matrices 3 elements apart from rows of N";
    }
}

// The short-K entry of the tiles per CTA: 64-row tiles, f32 accumulators, K of two slices at most.
TEST(EpilogueDispatch, TheShortKEntryIsInThePlan) {
  const Device h200 = described_h200();
  auto plan_of = [&](Matmul p) {
    Choice c;
    std::string why;
    EXPECT_EQ(choose_auto(p, h200, &c, &why), Status::Success) << why;
    return c.plan;
  };
  for (std::int64_t k : {1, 64, 128, 129, 512}) {
    const engine::Plan plan = plan_of(problem(256, 256, k, Op::N, Op::T, false));
    EXPECT_EQ(plan.bm, 64) << k;
    EXPECT_EQ(plan.short_k, k <= engine::kShortK) << k << ": " << engine::describe(plan);
    Matmul f16 = problem(256, 256, k, Op::N, Op::T, false);
    f16.accum = Accum::F16;
    EXPECT_FALSE(plan_of(f16).short_k) << k;
  }
  EXPECT_FALSE(plan_of(problem(4096, 4096, 128, Op::N, Op::T, false)).short_k) << "a persistent kernel";
}

// Off Hopper auto takes the same kernel as without an epilogue, one that does not fuse it:
// matmul then adds the elementwise pass (resolve_matmul names it "<id>+epilogue").
TEST(EpilogueDispatch, OffHopperAutoTakesAKernelThatDoesNotFuse) {
  for (const Device& d : {described_a100(), described_l4()})
    for (const char* shape : {"1000x1000x1000", "16x4096x4096"}) {
      std::int64_t m, n, k;
      ASSERT_EQ(std::sscanf(shape, "%ldx%ldx%ld", &m, &n, &k), 3);
      Choice plain, fused;
      std::string why;
      ASSERT_EQ(choose_auto(problem(m, n, k, Op::N, Op::T, false), d, &plain, &why), Status::Success) << why;
      ASSERT_EQ(choose_auto(problem(m, n, k, Op::N, Op::T, true), d, &fused, &why), Status::Success) << why;
      EXPECT_EQ(plain.entry, fused.entry) << d.name << " " << shape;
      EXPECT_FALSE(fused.entry->fuses_epilogue) << d.name << " " << shape;
    }
}

// The shapes tests/gpu/test_epilogue.cpp takes to reach each scheduler and store path of the
// engine, pinned to their plans on an H200 (f16 in and out, f32 accumulation, beta = 0).
TEST(EpilogueDispatch, TheGpuTestShapesReachEachScheduler) {
  const struct {
    std::int64_t m, n, k;
    Op op_a, op_b;
    const char* plan;
  } cases[] = {
      {1000, 1000, 1000, Op::N, Op::T, "tile 128x64, a tile per CTA"},
      {16, 4096, 4096, Op::N, Op::T, "swapped tile 64x16, a tile per CTA"},
      {17, 16001, 200, Op::N, Op::T, "swapped tile 128x32"},
      {2048, 2048, 2048, Op::N, Op::T, "wide 128x256 c2, whole tiles, 128 CTAs, TMA store"},
      {2047, 2047, 2047, Op::N, Op::T, "wide 128x256 c2, whole tiles, 128 CTAs, staged rows"},
      {100, 60, 30000, Op::N, Op::N, "narrow 128x128, stream-K, 20 CTAs, staged rows"},
      {100, 17024, 1600, Op::T, Op::T, "narrow 128x128, stream-K, 132 CTAs, TMA store"},
      {64, 8192, 8192, Op::N, Op::T, "swapped persistent 128x64, stream-K"},
      {16, 64, 65536, Op::N, Op::T, "swapped persistent 128x16, split-K 128, 128 CTAs, partials + reduce"},
      {7, 3500, 1000, Op::N, Op::T, "swapped persistent 128x16, cluster split-K 4"},
      {24, 2200, 8300, Op::T, Op::N, "narrow 128x128, cluster split-K 5"},
      // the decode cases, whose epilogue runs in registers on the swapped kernels
      {16, 4096, 512, Op::N, Op::T, "swapped tile 64x16, a tile per CTA"},
      {32, 4096, 512, Op::N, Op::T, "swapped tile 64x32, a tile per CTA"},
      {16, 16384, 256, Op::N, Op::T, "swapped tile 128x16, a tile per CTA"},
      {30, 12000, 512, Op::N, Op::T, "swapped tile 128x32, a tile per CTA"},
      {5, 6000, 300, Op::N, Op::T, "swapped tile 64x16, a tile per CTA"},
      {30, 280, 64, Op::N, Op::T, "swapped persistent 128x32, whole tiles"},
      {9, 256, 128, Op::N, Op::T, "swapped persistent 128x16, whole tiles"},
  };
  for (const auto& c : cases) {
    Choice choice;
    std::string why;
    ASSERT_EQ(choose_auto(problem(c.m, c.n, c.k, c.op_a, c.op_b, true), described_h200(), &choice, &why),
              Status::Success)
        << why;
    EXPECT_NE(describe(choice).find(c.plan), std::string::npos)
        << c.m << "x" << c.n << "x" << c.k << ": " << describe(choice) << ", expected " << c.plan;
  }
}

// The scratch of the engine's in-place epilogue (params.h: finish_scratch_float): the 4 warps'
// 16 × 64 floats fill the 16 KB once, each warp inside the rows it stages for its own TMA store
// (so no warp waits for another), and the two access patterns meet no bank conflict.
TEST(EpilogueScratch, WarpsShareTheBuffersWithoutOverlapOrBankConflicts) {
  using engine::finish_scratch_float;
  std::vector<int> owner(4096, -1);
  for (int w = 0; w < 4; ++w)
    for (int rr = 0; rr < 16; ++rr)
      for (int cc = 0; cc < 64; ++cc) {
        const int f = finish_scratch_float(w, rr, cc);
        ASSERT_GE(f, 0);
        ASSERT_LT(f, 4096);
        EXPECT_EQ(owner[f], -1) << "float " << f << " taken twice";
        owner[f] = w;
        const int byte_in_buffer = f * 4 % 8192;  // the warp's TMA rows: [2048w, 2048w + 2048)
        EXPECT_EQ(byte_in_buffer / 2048, w) << "warp " << w << " row " << rr << " column " << cc;
      }
  for (int w = 0; w < 4; ++w)
    for (int half = 0; half < 2; ++half)
      for (int h = 0; h < 2; ++h)
        for (int block = 0; block < 8; ++block) {
          // A float2 store of accumulator pairs: lanes 16·half .. +15 of the warp, each 8 bytes,
          // rows lane/4 + 8h, columns 8·block + 2(lane % 4): 32 distinct banks.
          std::set<int> banks;
          for (int lane = 16 * half; lane < 16 * half + 16; ++lane) {
            const int f = finish_scratch_float(w, lane / 4 + 8 * h, 8 * block + 2 * (lane % 4));
            banks.insert(f % 32), banks.insert((f + 1) % 32);
          }
          EXPECT_EQ(banks.size(), 32u) << "warp " << w << " block " << block;
        }
  for (int w = 0; w < 4; ++w)
    for (int rr = 0; rr < 16; ++rr)
      for (int c0 = 0; c0 < 64; c0 += 32) {  // the rolled loop: 32 lanes along one row
        std::set<int> banks;
        for (int lane = 0; lane < 32; ++lane) banks.insert(finish_scratch_float(w, rr, c0 + lane) % 32);
        EXPECT_EQ(banks.size(), 32u) << "warp " << w << " row " << rr;
      }
}

}  // namespace
}  // namespace detail
}  // namespace hgemm
