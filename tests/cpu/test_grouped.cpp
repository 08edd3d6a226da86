// SPDX-License-Identifier: Apache-2.0
// grouped_matmul on the CPU: the grouped scheduler's table and unit mapping
// (src/engine/sm90/grouped_schedule.h) cover every tile of every group exactly once, in group
// order, with the sizes clamped as the header promises; the plan's grid never exceeds the units
// the sizes can make; and every argument the host can check is refused with its Status and a
// message that names it.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <set>
#include <string>
#include <tuple>
#include <vector>

#include "dispatch/engine_policy.h"
#include "engine/sm90/grouped.h"
#include "engine/sm90/grouped_schedule.h"
#include "hgemm/hgemm.h"
#include "validation_util.h"

namespace hgemm::detail::engine {
namespace {

constexpr int kRows = 128, kCols = 128;
using Schedule = GroupedSchedule<kRows, kCols, 8>;

// The table of a launch, built on the host, and the schedule over it.
struct Table {
  std::vector<int> ends, first_unit;
  int tiles_n = 0, rows_each = 0;
  GroupedLayout layout = GroupedLayout::Contiguous;
  Schedule schedule() const {
    return Schedule{first_unit.data(), ends.data(), static_cast<int>(ends.size()), tiles_n, layout, rows_each};
  }
};

// bound: what the sizes are clamped to (M, or K when K-grouped, whose groups all have rows_each rows).
Table table(const std::vector<std::int32_t>& sizes, GroupedLayout layout, int bound, std::int64_t n,
            int rows_each = 0) {
  Table t;
  const int groups = static_cast<int>(sizes.size());
  t.tiles_n = static_cast<int>((n + kCols - 1) / kCols), t.layout = layout, t.rows_each = rows_each;
  t.ends.assign(groups, -1);
  t.first_unit.assign(groups + 1, -1);
  build_grouped_table<kRows>(sizes.data(), groups, layout, bound, rows_each, t.tiles_n, t.ends.data(),
                             t.first_unit.data());
  return t;
}
Table table(const std::vector<std::int32_t>& sizes, bool masked, int bound, std::int64_t n) {
  return table(sizes, masked ? GroupedLayout::Masked : GroupedLayout::Contiguous, bound, n);
}

// Every unit maps to a tile inside its group, groups never go back as units rise, and the tiles
// of every group (rows[g] of them, by N's columns) come out exactly once.
void expect_exact_cover(const Table& t, const std::vector<int>& rows, std::int64_t n, const std::string& what) {
  const Schedule s = t.schedule();
  std::set<std::tuple<int, int, int>> seen;
  int last_group = 0;
  for (int u = 0; u < s.total(); ++u) {
    const Schedule::Unit x = s.unit(u);
    ASSERT_GE(x.group, last_group) << what << ", unit " << u;
    last_group = x.group;
    ASSERT_EQ(x.rows, rows[x.group]) << what << ", unit " << u;
    ASSERT_LT(x.m0, x.rows) << what << ", unit " << u;
    ASSERT_LT(x.n0, n) << what << ", unit " << u;
    ASSERT_EQ(x.m0 % kRows, 0);
    ASSERT_EQ(x.n0 % kCols, 0);
    ASSERT_TRUE(seen.insert({x.group, x.m0, x.n0}).second) << what << ": unit " << u << " repeats a tile";
  }
  std::size_t want = 0;
  for (int r : rows) want += static_cast<std::size_t>((r + kRows - 1) / kRows * ((n + kCols - 1) / kCols));
  EXPECT_EQ(seen.size(), want) << what;
}

TEST(GroupedSchedule, ContiguousGroupsCoverEveryTileOnce) {
  // Empty groups first, in the middle and last; sizes around the tile's multiples; rows past the end.
  const std::vector<std::int32_t> ends = {0, 0, 130, 131, 131, 387, 515, 516, 516};
  const Table t = table(ends, false, 600, 300);
  std::vector<int> rows;
  for (std::size_t g = 0; g < ends.size(); ++g) rows.push_back(ends[g] - (g ? ends[g - 1] : 0));
  expect_exact_cover(t, rows, 300, "contiguous");
  EXPECT_EQ(t.schedule().total(), (2 + 1 + 2 + 1 + 1) * 3);
  EXPECT_EQ(t.schedule().unit(0).group, 2);  // the empty groups own no unit
  EXPECT_EQ(t.schedule().unit(0).row0, 0);
  EXPECT_EQ(t.schedule().unit(t.schedule().total() - 1).group, 7);
  EXPECT_EQ(t.schedule().unit(t.schedule().total() - 1).row0, 515);
}

TEST(GroupedSchedule, MaskedGroupsCoverTheirValidRows) {
  const std::vector<std::int32_t> valid = {0, 200, 1, 129, 128, 0};
  const Table t = table(valid, true, 200, 129);
  expect_exact_cover(t, {0, 200, 1, 129, 128, 0}, 129, "masked");
  for (int u = 0; u < t.schedule().total(); ++u) EXPECT_EQ(t.schedule().unit(u).row0, 0);
}

TEST(GroupedSchedule, SizesOutsideTheBoundAreClamped) {
  // Offsets that fall back (an empty group), run negative or past M: nothing outside [0, M).
  const Table c = table({10, 5, -3, 400, 500}, false, 300, 64);
  EXPECT_EQ(c.ends, (std::vector<int>{10, 10, 10, 300, 300}));
  expect_exact_cover(c, {10, 0, 0, 290, 0}, 64, "clamped offsets");
  const Table m = table({-1, 7, 1000}, true, 256, 64);
  EXPECT_EQ(m.ends, (std::vector<int>{0, 7, 256}));
  expect_exact_cover(m, {0, 7, 256}, 64, "clamped m_valid");
}

TEST(GroupedSchedule, RandomSizesAndTheGridsWalk) {
  std::mt19937 rng(7);
  for (int trial = 0; trial < 200; ++trial) {
    const bool masked = trial % 2 == 1;
    const int groups = 1 + static_cast<int>(rng() % (trial < 100 ? 40 : 4096));
    const int bound = static_cast<int>(rng() % 3000);
    const std::int64_t n = 1 + rng() % 700;
    std::vector<std::int32_t> sizes(groups);
    std::vector<int> rows(groups);
    int end = 0;
    for (int g = 0; g < groups; ++g) {
      const int r = rng() % 4 == 0 ? 0 : static_cast<int>(rng() % (masked ? bound + 1 : 200));
      if (masked) {
        sizes[g] = r, rows[g] = r;
      } else {
        const int next = std::min(bound, end + r);
        rows[g] = next - end, end = next, sizes[g] = end;
      }
    }
    const Table t = table(sizes, masked, bound, n);
    expect_exact_cover(t, rows, n, "trial " + std::to_string(trial));
    // The host's bound on the units, which sizes the grid, holds whatever the sizes are.
    const GroupedLayout layout = masked ? GroupedLayout::Masked : GroupedLayout::Contiguous;
    EXPECT_LE(t.schedule().total(), grouped_units_bound(layout, groups, bound, n, kRows, kCols)) << trial;
  }
}

TEST(GroupedSchedule, KGroupedGroupsHaveEveryRowAndTheirSliceOfK) {
  // Offsets along K = 300: empty groups (which still own their tiles: D_g = 0), one falling back,
  // one past K; every group has all M = 200 rows.
  const std::vector<std::int32_t> offsets = {0, 64, 64, 65, 40, 300, 1000};
  const Table t = table(offsets, GroupedLayout::KGrouped, 300, 129, 200);
  EXPECT_EQ(t.ends, (std::vector<int>{0, 64, 64, 65, 65, 300, 300}));
  expect_exact_cover(t, std::vector<int>(offsets.size(), 200), 129, "k-grouped");
  EXPECT_EQ(t.schedule().total(), 7 * 2 * 2);
  const std::vector<std::pair<int, int>> slices = {{0, 0}, {0, 64}, {64, 64}, {64, 65}, {65, 65}, {65, 300}, {300, 300}};
  for (int u = 0; u < t.schedule().total(); ++u) {
    const Schedule::Unit x = t.schedule().unit(u);
    EXPECT_EQ(x.row0, 0);
    EXPECT_EQ(x.k_begin, slices[x.group].first) << u;
    EXPECT_EQ(x.k_end, slices[x.group].second) << u;
  }
  EXPECT_EQ(grouped_units_bound(GroupedLayout::KGrouped, 7, 200, 129, kRows, kCols), t.schedule().total());
}

// A contiguous MoE layer of `groups` experts, B_g stored N×K, tight leading dimensions.
GroupedMatmul moe_layer(std::int64_t groups, std::int64_t m, std::int64_t n, std::int64_t k) {
  GroupedMatmul p;
  p.groups = groups, p.m = m, p.n = n, p.k = k, p.op_b = Op::T;
  p.lda = p.k, p.ldb = p.k, p.ldd = p.n;
  p.a = p.b = p.d = reinterpret_cast<void*>(0x100000);
  return p;
}

TEST(GroupedPlan, GridIsTheSmsOrTheUnitsTheSizesCanMake) {
  const Device d = described_h200();
  GroupedMatmul p = moe_layer(8, 16384, 4096, 7168);
  Plan plan = plan_grouped(p, d);
  EXPECT_EQ(plan.choice.shape, KernelShape::Grouped128x256);
  EXPECT_EQ(plan.bn, 256);
  EXPECT_EQ(plan.choice.scheduler, Scheduler::Grouped);
  EXPECT_EQ(plan.grid, 132u);
  EXPECT_EQ(plan.store, StorePath::StagedRows);
  EXPECT_EQ(plan.workspace_bytes(), 0u);
  p.m = 64, p.n = 512;  // at most one tile row per group (8), by 2 columns
  EXPECT_EQ(plan_grouped(p, d).grid, 16u);
  p.d_type = DataType::F32;
  EXPECT_EQ(plan_grouped(p, d).store, StorePath::Registers);
  p.lda = 7171;  // not a multiple of 8: A is copied
  EXPECT_TRUE(plan_grouped(p, d).repack_a);
  p.n = 0;
  EXPECT_EQ(plan_grouped(p, d).grid, 0u);
  EXPECT_NE(describe(plan).find("grouped"), std::string::npos);
}

TEST(GroupedPlan, WideTilesOnlyWhereTheyFit) {
  const Device d = described_h200();
  GroupedMatmul p = moe_layer(64, 32768, 2048, 4096);
  EXPECT_EQ(plan_grouped(p, d).choice.shape, KernelShape::Grouped128x256);
  p.n = 128;  // a 256-wide tile would be half empty
  EXPECT_EQ(plan_grouped(p, d).choice.shape, KernelShape::Grouped128x128);
  p.n = 2048, p.groups = kGroupedWideMaxGroups + 1;  // more than the wide kernel's table holds
  EXPECT_EQ(plan_grouped(p, d).choice.shape, KernelShape::Grouped128x128);
  p.groups = kGroupedWideMaxGroups;
  EXPECT_EQ(plan_grouped(p, d).choice.shape, KernelShape::Grouped128x256);
  p.accum = Accum::F16;  // the wide kernel is built for f32 accumulators only
  EXPECT_EQ(plan_grouped(p, d).choice.shape, KernelShape::Grouped128x128);
  p.accum = Accum::F32, p.layout = GroupedLayout::KGrouped, p.groups = 8, p.m = 4096, p.n = 7168;
  EXPECT_EQ(plan_grouped(p, d).bn, 256);
}

}  // namespace
}  // namespace hgemm::detail::engine

namespace hgemm {
namespace {

using test::refused;

// Past every check the host makes without a device (a GPU other than Hopper included).
testing::AssertionResult accepted(Status got) { return test::accepted(got, /*other_gpus=*/true); }

std::int32_t* fake_sizes() { return reinterpret_cast<std::int32_t*>(0x500000); }
void* fake(std::uintptr_t i) { return reinterpret_cast<void*>(0x100000 * i); }

// 5 contiguous groups over at most 100 rows of A (100×64) and D (100×48), B 5 × 48×64 (op T).
GroupedMatmulArgs contiguous() {
  GroupedMatmulArgs p;
  p.layout = GroupedLayout::Contiguous, p.op_a = Op::N, p.op_b = Op::T;
  p.groups = 5, p.m = 100, p.n = 48, p.k = 64;
  p.offsets = fake_sizes();
  p.a = fake(1), p.lda = 64;
  p.b = fake(2), p.ldb = 64, p.stride_b = 48 * 64;
  p.d = fake(3), p.ldd = 48;
  return p;
}

GroupedMatmulArgs masked() {
  GroupedMatmulArgs p = contiguous();
  p.layout = GroupedLayout::Masked;
  p.offsets = nullptr, p.m_valid = fake_sizes();
  p.m = 20, p.stride_a = 20 * 64, p.stride_d = 20 * 48;
  return p;
}

// 4 groups splitting K = 96 of A (96×20, op T) and B (96×48, op N); D 4 × 20×48.
GroupedMatmulArgs k_grouped() {
  GroupedMatmulArgs p;
  p.layout = GroupedLayout::KGrouped, p.op_a = Op::T, p.op_b = Op::N;
  p.groups = 4, p.m = 20, p.n = 48, p.k = 96;
  p.offsets = fake_sizes();
  p.a = fake(1), p.lda = 20;
  p.b = fake(2), p.ldb = 48;
  p.d = fake(3), p.ldd = 48, p.stride_d = 20 * 48;
  return p;
}

Status call(const GroupedMatmulArgs& p, Accum accum = Accum::F32, const char* kernel = "auto") {
  MatmulOptions o;
  o.accum = accum, o.kernel = kernel;
  return grouped_matmul(p, o);
}

TEST(GroupedValidation, AcceptsBothLayoutsEveryOpAndType) {
  for (GroupedMatmulArgs p : {contiguous(), masked()})
    for (Op oa : {Op::N, Op::T})
      for (Op ob : {Op::N, Op::T}) {
        if (p.layout == GroupedLayout::Contiguous && oa == Op::T) continue;  // A is M×K only
        for (DataType in : {DataType::F16, DataType::BF16})
          for (DataType d : {DataType::F16, DataType::BF16, DataType::F32}) {
            p.op_a = oa, p.op_b = ob, p.a_type = p.b_type = in, p.d_type = d;
            p.lda = oa == Op::N ? p.k : p.m, p.ldb = ob == Op::N ? p.n : p.k;
            EXPECT_TRUE(accepted(call(p)));
          }
      }
  GroupedMatmulArgs p = contiguous();
  EXPECT_TRUE(accepted(call(p, Accum::F16)));
  EXPECT_TRUE(accepted(call(p, Accum::F32, "engine.sm90")));
  p.stride_b = 0;  // one B for every group
  EXPECT_TRUE(accepted(call(p)));
  p.groups = kMaxGroupedGroups;
  EXPECT_TRUE(accepted(call(p)));
}

TEST(GroupedValidation, AcceptsKGroupedEveryType) {
  for (DataType in : {DataType::F16, DataType::BF16})
    for (DataType d : {DataType::F16, DataType::BF16, DataType::F32}) {
      GroupedMatmulArgs p = k_grouped();
      p.a_type = p.b_type = in, p.d_type = d;
      EXPECT_TRUE(accepted(call(p)));
    }
  GroupedMatmulArgs p = k_grouped();
  p.k = 0, p.a = p.b = nullptr;  // every D_g = 0
  EXPECT_TRUE(accepted(call(p)));
  p = k_grouped(), p.groups = 1, p.stride_d = 0;
  EXPECT_TRUE(accepted(call(p)));
}

TEST(GroupedValidation, RefusesKGroupedLayoutsItCannotRead) {
  GroupedMatmulArgs p = k_grouped();
  p.op_a = Op::N, p.lda = p.k;
  EXPECT_TRUE(refused(call(p), Status::UnsupportedOp, "op_a = T"));
  p = k_grouped(), p.op_b = Op::T, p.ldb = p.k;
  EXPECT_TRUE(refused(call(p), Status::UnsupportedOp, "op_b = N"));
  p = k_grouped(), p.stride_b = 48;
  EXPECT_TRUE(refused(call(p), Status::InvalidArgument, "stride_b must be 0"));
  p = k_grouped(), p.stride_a = 20;
  EXPECT_TRUE(refused(call(p), Status::InvalidArgument, "stride_a and stride_b must be 0"));
  p = k_grouped(), p.stride_d = 20 * 48 - 1;
  EXPECT_TRUE(refused(call(p), Status::InvalidLeadingDim, "overlap"));
  p = k_grouped(), p.m_valid = fake_sizes();
  EXPECT_TRUE(refused(call(p), Status::InvalidArgument, "K-grouped layout reads offsets"));
  p = k_grouped(), p.offsets = nullptr;
  EXPECT_TRUE(refused(call(p), Status::NullPointer, "offsets is null"));
}

TEST(GroupedValidation, NothingToWriteSucceedsWithoutADevice) {
  for (auto empty : {+[](GroupedMatmulArgs& p) { p.groups = 0; }, +[](GroupedMatmulArgs& p) { p.m = 0; },
                     +[](GroupedMatmulArgs& p) { p.n = 0; }}) {
    GroupedMatmulArgs p = contiguous();
    empty(p);
    p.offsets = nullptr, p.a = p.b = nullptr, p.d = nullptr;
    EXPECT_EQ(call(p), Status::Success) << last_error_message();
  }
}

TEST(GroupedValidation, RefusesBadSizesAndLayouts) {
  GroupedMatmulArgs p = contiguous();
  p.groups = -1;
  EXPECT_TRUE(refused(call(p), Status::InvalidSize, "groups = -1"));
  p = contiguous(), p.k = -2;
  EXPECT_TRUE(refused(call(p), Status::InvalidSize, "K = -2"));
  p = contiguous(), p.groups = kMaxGroupedGroups + 1;
  EXPECT_TRUE(refused(call(p), Status::ProblemTooLarge, "4097"));
  p = contiguous(), p.layout = static_cast<GroupedLayout>(7);
  EXPECT_TRUE(refused(call(p), Status::InvalidArgument, "GroupedLayout"));
  p = contiguous(), p.stride_a = 64;
  EXPECT_TRUE(refused(call(p), Status::InvalidArgument, "stride_a and stride_d must be 0"));
  p = contiguous(), p.op_a = Op::T, p.lda = p.m;
  EXPECT_TRUE(refused(call(p), Status::UnsupportedOp, "op_a = N"));
  p = contiguous(), p.stride_b = -1;
  EXPECT_TRUE(refused(call(p), Status::InvalidSize, "stride_b = -1"));
  p = masked(), p.stride_d = 20 * 48 - 1;
  EXPECT_TRUE(refused(call(p), Status::InvalidLeadingDim, "overlap"));
  p = contiguous(), p.m = std::int64_t(1) << 31;
  p.lda = p.k;
  EXPECT_TRUE(refused(call(p), Status::ProblemTooLarge, "below 2^31"));
}

TEST(GroupedValidation, RefusesBadLeadingDimensions) {
  GroupedMatmulArgs p = contiguous();
  p.lda = 63;
  EXPECT_TRUE(refused(call(p), Status::InvalidLeadingDim, "lda = 63"));
  p = masked(), p.op_a = Op::T, p.lda = p.m - 1;
  EXPECT_TRUE(refused(call(p), Status::InvalidLeadingDim, "M (op(A) = T)"));
  p = contiguous(), p.ldb = 10;
  EXPECT_TRUE(refused(call(p), Status::InvalidLeadingDim, "ldb = 10"));
  p = contiguous(), p.ldd = 47;
  EXPECT_TRUE(refused(call(p), Status::InvalidLeadingDim, "ldd = 47"));
}

TEST(GroupedValidation, RefusesBadTypes) {
  GroupedMatmulArgs p = contiguous();
  p.a_type = p.b_type = DataType::F32;
  EXPECT_TRUE(refused(call(p), Status::UnsupportedType, "f32 inputs"));
  p = contiguous(), p.b_type = DataType::BF16;
  EXPECT_TRUE(refused(call(p), Status::UnsupportedType, "both must be one type"));
  p = contiguous(), p.d_type = DataType::BF16;
  EXPECT_TRUE(refused(call(p, Accum::F16), Status::UnsupportedType, "f16 accumulation"));
  p = contiguous(), p.d_type = static_cast<DataType>(9);
  EXPECT_TRUE(refused(call(p), Status::UnsupportedType, "DataType value 9"));
}

TEST(GroupedValidation, RefusesBadPointersAndKernels) {
  GroupedMatmulArgs p = contiguous();
  p.offsets = nullptr;
  EXPECT_TRUE(refused(call(p), Status::NullPointer, "offsets is null"));
  p = masked(), p.m_valid = nullptr;
  EXPECT_TRUE(refused(call(p), Status::NullPointer, "m_valid is null"));
  p = contiguous(), p.m_valid = fake_sizes();
  EXPECT_TRUE(refused(call(p), Status::InvalidArgument, "m_valid must be null"));
  p = contiguous(), p.a = nullptr;
  EXPECT_TRUE(refused(call(p), Status::NullPointer, "A is null"));
  p = contiguous(), p.d = nullptr;
  EXPECT_TRUE(refused(call(p), Status::NullPointer, "D is null"));
  p = contiguous(), p.d_type = DataType::F32, p.d = static_cast<char*>(fake(3)) + 2;
  EXPECT_TRUE(refused(call(p), Status::Misaligned, "D is not aligned"));
  p = contiguous(), p.offsets = reinterpret_cast<std::int32_t*>(0x500002);
  EXPECT_TRUE(refused(call(p), Status::Misaligned, "offsets"));
  p = contiguous(), p.k = 0, p.a = p.b = nullptr;  // K = 0 reads neither
  EXPECT_TRUE(accepted(call(p)));
  EXPECT_TRUE(refused(call(contiguous(), Accum::F32, "cublas.acc32"), Status::InvalidArgument, "engine only"));
}

}  // namespace
}  // namespace hgemm
