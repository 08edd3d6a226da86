// SPDX-License-Identifier: Apache-2.0
// Seeded random problems (tests/common/random_shapes.h, larger than any GPU test computes) against
// the dispatch policy and the engine's plans, on described devices (an H200, Hopper GPUs of 114
// and 16 SMs, an A100, an L4), without a GPU:
//  * auto finds an entry for every valid problem, the entry accepts it, and off Hopper it is
//    never sm_90a code;
//  * every engine plan on a Hopper GPU is one its kernels can run: a grid of whole clusters that fit
//    the GPU where the schedule needs them resident at once, narrow tiles only over a K-major B,
//    a TMA store only where D's alignment allows it, workspace sized to the plan, run bounds in
//    32 bits;
//  * its persistent schedule computes every slice of every tile exactly once and pairs its
//    stream-K hand-overs (schedule_coverage.h);
//  * so is the ping-pong kernel's plan (engine.sm90_pingpong) for every problem with f32
//    accumulators.
// HGEMM_RANDOM_SEED and HGEMM_RANDOM_CASES (environment) choose the draw and its length.
#include <gtest/gtest.h>

#include <climits>
#include <cstdint>
#include <string>
#include <tuple>

#include "api/validate.h"
#include "dispatch/engine_policy.h"
#include "dispatch/policy.h"
#include "engine/sm90/instantiations.h"
#include "engine/sm90/schedule.h"
#include "random_shapes.h"
#include "schedule_coverage.h"

namespace hgemm::detail {
namespace {

using engine::KernelShape;
using engine::Plan;
using engine::Scheduler;
using engine::StorePath;
using engine::TileSchedule;

// A distinct, 16-byte-aligned fake device address per matrix (nothing is dereferenced).
const void* fake(int i, std::int64_t byte_offset) {
  return reinterpret_cast<const void*>(std::uintptr_t(0x10000000000) * i + static_cast<std::uintptr_t>(byte_offset));
}

std::int64_t ceil_div(std::int64_t a, std::int64_t b) { return (a + b - 1) / b; }

// A random valid-looking problem: a shape of a random kind (batches of any size up to 4096),
// ops, types, accumulation, padding, element-aligned pointers, shared operands, C apart, in
// place or unread, and a fused epilogue now and then.
Matmul random_problem(test::Draw& r) {
  const test::RandomShape s = test::random_shape(r, 1e30);
  Matmul p;
  p.m = s.m, p.n = s.n, p.k = s.k, p.batch = s.batch;
  if (r.chance(0.05)) p.batch = r.between(65, 4096);
  if (r.chance(0.05)) p.k = 0;
  std::tie(p.op_a, p.op_b) = test::random_ops(r, s);
  p.a_type = p.b_type = r.pick({DataType::F16, DataType::BF16});
  p.d_type = r.pick({DataType::F16, DataType::BF16, DataType::F32});
  p.c_type = r.pick({DataType::F16, DataType::BF16, DataType::F32});
  p.alpha = r.pick({1.f, -0.5f});
  p.beta = r.pick({0.f, 0.f, 1.f});
  const bool in_place = p.beta != 0.f && r.chance(0.3);
  if (in_place) p.c_type = p.d_type;
  if (p.a_type == DataType::F16 && p.d_type == DataType::F16 && (p.beta == 0.f || p.c_type == DataType::F16) &&
      r.chance(0.3))
    p.accum = Accum::F16;
  auto pad = [&](std::int64_t width) {  // none, to a multiple of 8, odd, or a whole extra row of 64
    const std::int64_t w = std::max<std::int64_t>(width, 1);
    return w + r.pick<std::int64_t>({0, 0, (8 - w % 8) % 8, r.between(1, 9), 64});
  };
  p.lda = pad(p.op_a == Op::N ? p.k : p.m), p.ldb = pad(p.op_b == Op::N ? p.n : p.k);
  p.ldd = pad(p.n), p.ldc = in_place ? p.ldd : pad(p.n);
  auto offset = [&](DataType t) { return r.chance(0.15) ? std::int64_t{data_type_size(t)} : 0; };
  p.a = fake(1, offset(p.a_type)), p.b = fake(2, offset(p.b_type));
  p.d = const_cast<void*>(fake(3, offset(p.d_type)));
  p.c = in_place ? p.d : p.beta != 0.f || r.chance(0.5) ? fake(4, offset(p.c_type)) : nullptr;
  if (p.batch > 1) {
    auto stride = [&](std::int64_t rows, std::int64_t ld) {
      return rows * ld + r.pick<std::int64_t>({0, 8, r.between(1, 9)});
    };
    p.stride_a = r.chance(0.2) ? 0 : stride(p.op_a == Op::N ? p.m : p.k, p.lda);
    p.stride_b = r.chance(0.2) ? 0 : stride(p.op_b == Op::N ? p.k : p.n, p.ldb);
    p.stride_d = stride(p.m, p.ldd);
    p.stride_c = in_place ? p.stride_d : r.chance(0.2) ? 0 : stride(p.m, p.ldc);
  }
  if (r.chance(0.3)) {
    Epilogue& e = p.epilogue;
    e.bias_along = r.pick({BiasAlong::None, BiasAlong::N, BiasAlong::M});
    e.bias = fake(5, 0), e.bias_type = r.pick({DataType::F16, DataType::BF16, DataType::F32});
    e.activation =
        r.pick({Activation::None, Activation::ReLU, Activation::GELU, Activation::GELUTanh, Activation::SiLU});
    e.aux_output = r.chance(0.3);
    e.aux = const_cast<void*>(fake(6, 0)), e.aux_type = p.d_type, e.ldaux = p.n + 3, e.stride_aux = (p.n + 3) * p.m;
    e.scale_cols = r.chance(0.2), e.col_scale = static_cast<const float*>(fake(7, 0));
  }
  return p;
}

std::string label(const Matmul& p) {
  return std::to_string(p.batch) + " x " + std::to_string(p.m) + "x" + std::to_string(p.n) + "x" +
         std::to_string(p.k) + " op " + (p.op_a == Op::N ? "n" : "t") + (p.op_b == Op::N ? "n" : "t") + " " +
         data_type_name(p.a_type) + "->" + data_type_name(p.d_type) + (p.accum == Accum::F16 ? " acc16" : "") +
         " lda " + std::to_string(p.lda) + " ldb " + std::to_string(p.ldb) + " ldd " + std::to_string(p.ldd) +
         (p.c_read() ? " beta" : "") + (p.epilogue.enabled() ? " epilogue" : "");
}

// The schedule the persistent kernel of `plan` builds (persistent.cuh: from the plan's problem,
// splits, grid over its compiled cluster size and the stream-K flag), checked as in
// test_tile_schedule.cpp; cluster split-K: one unit per CTA, its split the CTA's rank.
template <int ROWS, int COLS>
void check_schedule(const Plan& plan, int compiled_cluster, const std::string& what) {
  const bool stream_k = plan.choice.scheduler == Scheduler::StreamK;
  const int clusters = static_cast<int>(plan.grid) / compiled_cluster;
  const TileSchedule<ROWS, COLS, 8, 64> s(plan.m, plan.n, plan.k, plan.splits, clusters, stream_k,
                                          static_cast<int>(plan.batch));
  ASSERT_EQ(s.splits, plan.splits) << what;
  ASSERT_LE(static_cast<std::int64_t>(s.tiles) * s.splits, INT_MAX) << what;
  if (stream_k) ASSERT_LE(static_cast<std::int64_t>(s.sk_slices) * (s.clusters + 1), INT_MAX) << "run bounds, " << what;
  if (plan.choice.scheduler == Scheduler::ClusterSplitK)
    for (int g = 0; g < s.clusters; ++g) {
      ASSERT_EQ(s.units(g), 1) << what;
      ASSERT_EQ(s.unit(g, 0).split, g % plan.splits) << what;
    }
  if (static_cast<std::int64_t>(s.tiles) * s.slices <= 200000) engine::check_coverage(s, what.c_str());
}

void check_engine_plan(const Matmul& p, const Device& d, const Plan& plan) {
  const std::string what = label(p) + ": " + engine::describe(plan);
  SCOPED_TRACE(what);
  if (!p.d_used() || p.k == 0) return;  // nothing is launched, or D = beta·C by the elementwise pass
  ASSERT_EQ(plan.m, plan.swapped ? p.n : p.m);
  ASSERT_EQ(plan.n, plan.swapped ? p.m : p.n);
  if (plan.swapped) EXPECT_EQ(p.op_a, Op::N) << "the swapped problem reads A as its K-major B";
  // B narrower than 64 columns per tile comes only K-major (an N-major B is loaded 64 wide).
  const bool b_k_major = plan.swapped ? p.op_a == Op::N : p.op_b == Op::T;
  if (plan.bn < 64) EXPECT_TRUE(b_k_major) << "a " << plan.bn << "-wide tile over an N-major B";
  ASSERT_GE(plan.grid, 1u);
  ASSERT_LE(plan.grid, static_cast<unsigned>(INT_MAX));
  ASSERT_EQ(static_cast<std::int64_t>(plan.grid), static_cast<std::int64_t>(plan.cluster) * plan.clusters);
  ASSERT_GE(plan.cluster, 1);
  ASSERT_LE(plan.cluster, 8);
  ASSERT_GE(d.clusters[plan.cluster], 1) << "clusters of " << plan.cluster << " do not fit";
  const Scheduler sched = plan.choice.scheduler;
  if (sched == Scheduler::TilePerCta) {
    EXPECT_EQ(plan.grid, static_cast<unsigned>(ceil_div(plan.m, plan.bm) * ceil_div(plan.n, plan.bn) * p.batch));
  } else {
    // Stream-K and split-K clusters wait on each other or share a grid-wide schedule: all resident.
    EXPECT_LE(plan.clusters, d.clusters[plan.cluster]) << "more clusters than fit at once";
  }
  if (sched == Scheduler::ClusterSplitK) {
    EXPECT_EQ(plan.cluster, plan.splits);
    EXPECT_GE(plan.splits, 2);
  }
  if (sched == Scheduler::SplitK) {
    EXPECT_EQ(plan.store, StorePath::Partials);
    EXPECT_EQ(plan.partials_bytes, static_cast<std::size_t>(plan.splits) * p.batch * plan.m * plan.n * sizeof(float));
  }
  if (sched == Scheduler::StreamK) EXPECT_GT(plan.handover_bytes, 0u);
  const int size = data_type_size(p.d_type);
  if (plan.store == StorePath::Tma) {
    EXPECT_FALSE(p.c_read()) << "a TMA store does not read C";
    EXPECT_FALSE(plan.swapped);
    EXPECT_EQ(reinterpret_cast<std::uintptr_t>(p.d) % 16, 0u);
    EXPECT_EQ(p.ldd * size % 16, 0);
    EXPECT_EQ(p.n * size % 16, 0);
    if (p.batch > 1) EXPECT_EQ(p.stride_d * size % 16, 0);
    if (!engine::is_persistent(plan.choice.shape)) EXPECT_EQ(plan.bn % 64, 0);
  }
  if (plan.store == StorePath::StagedRows) {
    EXPECT_FALSE(p.c_read());
    EXPECT_EQ(size, 2) << "staged rows store 16-bit D";
  }
  // The instantiation the plan names is compiled, and has the code its problem needs.
  const auto inst = engine::instantiation_of(plan, p);
  ASSERT_TRUE(inst.has_value()) << "the launch refuses the plan";
  bool listed = false;
  for (const engine::Instantiation& i : engine::manifest()) listed = listed || i == *inst;
  EXPECT_TRUE(listed) << "not compiled: " << engine::describe(*inst);
  const bool persistent = engine::is_persistent(plan.choice.shape);
  if (plan.finish == engine::TileFinish::Plain) {
    EXPECT_FALSE(p.c_read() || p.epilogue.enabled() || plan.swapped) << "the plain code stores alpha·acc alone";
    EXPECT_NE(plan.store, StorePath::Partials);
    EXPECT_NE(sched, Scheduler::ClusterSplitK);
    if (persistent) EXPECT_EQ(plan.store, StorePath::Tma);
  }
  if (plan.finish == engine::TileFinish::FusedInRegisters) {
    EXPECT_TRUE(plan.choice.shape == KernelShape::Wide || plan.choice.shape == KernelShape::Narrow);
    EXPECT_EQ(plan.store, StorePath::Tma);
    EXPECT_EQ(p.accum, Accum::F32);
    EXPECT_TRUE(p.epilogue.enabled() && !p.epilogue.scale_rows && !p.epilogue.scale_cols && !p.c_read());
  }
  if (plan.short_k) {
    EXPECT_EQ(sched, Scheduler::TilePerCta);
    EXPECT_FALSE(plan.swapped);
    EXPECT_EQ(plan.bm, 64);
    EXPECT_LE(plan.k, engine::kShortK);
    EXPECT_EQ(p.accum, Accum::F32);
  }
  switch (plan.choice.shape) {
    case KernelShape::Wide: return check_schedule<256, 256>(plan, 2, what);
    case KernelShape::Narrow: return check_schedule<128, 128>(plan, 1, what);
    case KernelShape::Skinny16: return check_schedule<128, 16>(plan, 1, what);
    case KernelShape::Skinny32: return check_schedule<128, 32>(plan, 1, what);
    case KernelShape::Skinny64: return check_schedule<128, 64>(plan, 1, what);
    case KernelShape::PingPong:  // a cluster's units are 2 × 64 rows; its consumers take them in turns
      EXPECT_TRUE(sched == Scheduler::WholeTiles || sched == Scheduler::SplitK) << "the ping-pong kernel's schedulers";
      EXPECT_EQ(plan.cluster, 2);
      EXPECT_EQ(plan.bm, 64);
      EXPECT_FALSE(plan.swapped);
      EXPECT_EQ(plan.handover_bytes, 0u);
      return check_schedule<128, 256>(plan, 2, what);
    default: EXPECT_EQ(sched, Scheduler::TilePerCta); return;
  }
}

// A Hopper GPU of another size than the H200, with the clusters of each size that fit at once
// (as the runtime reports them; fewer than SMs / n, the GPCs' limits): an H100 PCIe's 114 SMs,
// and a MIG slice's 16.
Device hopper(const char* name, int sms, const int (&clusters)[9]) {
  Device d = described_h200();
  d.name = name, d.sms = sms;
  for (int n = 0; n <= 8; ++n) d.clusters[n] = clusters[n];
  return d;
}

TEST(RandomPlans, AutoRunsEveryValidProblemAndEveryEnginePlanIsSound) {
  test::Draw r(test::random_seed() + 3);
  const int count = test::random_case_count(3000);
  const Device h200 = described_h200(), a100 = described_a100(), l4 = described_l4();
  const Device h100_pcie = hopper("Hopper, 114 SMs (described)", 114, {0, 114, 57, 33, 26, 19, 15, 13, 12});
  const Device mig = hopper("Hopper MIG slice, 16 SMs (described)", 16, {0, 16, 8, 4, 4, 2, 2, 2, 2});
  int valid = 0, engine_plans = 0;
  for (int i = 0; i < count && !testing::Test::HasFatalFailure(); ++i) {
    const Matmul p = random_problem(r);
    if (validate_arguments(p) != Status::Success) continue;
    ++valid;
    for (const Device* d : {&h200, &h100_pcie, &mig, &a100, &l4}) {
      Choice c;
      std::string why;
      ASSERT_EQ(choose_auto(p, *d, &c, &why), Status::Success) << d->name << " " << label(p) << ": " << why;
      const Matmul runs = run_of(c, p);  // the batch as one product where it folds
      ASSERT_EQ(check_supported(*c.entry, runs, d->cc, &why), Status::Success)
          << d->name << " " << label(p) << ": " << why;
      if (!d->hopper()) {
        EXPECT_NE(c.entry->info.family, "sm90") << d->name << " " << label(p);
        EXPECT_NE(c.entry->info.family, "engine") << d->name << " " << label(p);
      } else if (c.engine) {
        ++engine_plans;
        check_engine_plan(runs, *d, c.plan);
      }
      if (d->hopper() && p.accum == Accum::F32) {
        const Plan pingpong = plan_pingpong(p, *d);
        ASSERT_EQ(pingpong.choice.shape, KernelShape::PingPong);
        check_engine_plan(p, *d, pingpong);
      }
    }
  }
  EXPECT_GE(valid, count * 3 / 4) << "the draw should give mostly valid problems";
  EXPECT_GE(engine_plans, valid * 3 / 2);  // three Hopper devices
}

}  // namespace
}  // namespace hgemm::detail
