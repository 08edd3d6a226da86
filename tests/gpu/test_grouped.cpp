// SPDX-License-Identifier: Apache-2.0
// grouped_matmul on a real device, against the fp64 reference of every group: the three
// layouts (K-grouped: groups splitting K, each group's last slice ending inside a tile), every
// op and type pair, uneven group sizes with empty groups first, in the middle and last,
// sizes that are not tile multiples, G = 1, thousands of groups, K = 0, odd leading dimensions,
// one B for every group, f16 accumulation. D starts as NaN and every element outside the groups'
// rows (past the last offset, past m_valid, the ld padding, the gaps) must keep its bits; each
// case runs twice and must give the same bits. A captured CUDA graph replays with new sizes.
// Tolerances: ref::matmul_tolerance (f32 accumulation), tolerance_*(Accum::F16) for f16; exact
// small-integer cases must match bit for bit.
#include <cstring>
#include <numeric>
#include <ostream>
#include <random>
#include <thread>

#include "matmul_util.h"

namespace hgemm::test {
namespace {

struct GroupedCase {
  std::string what;
  GroupedLayout layout = GroupedLayout::Contiguous;
  Op op_a = Op::N, op_b = Op::T;
  std::vector<int> rows;  ///< each group's rows (contiguous: offsets are their running sums); K-grouped: its k
  std::int64_t m = 0;     ///< contiguous: rows of A and D (≥ the sum); masked, K-grouped: rows per group
  std::int64_t n = 0, k = 0;  ///< K-grouped: k ≥ the sum
  float alpha = 1.f;
  std::int64_t lda_pad = 0, ldd_pad = 0;
  bool shared_b = false;  ///< stride_b = 0
  bool exact = false;     ///< small integers: D must equal the reference
  bool every_type = false;

  bool masked() const { return layout == GroupedLayout::Masked; }
  bool k_grouped() const { return layout == GroupedLayout::KGrouped; }
  bool d_per_group() const { return layout != GroupedLayout::Contiguous; }
  std::int64_t groups() const { return static_cast<std::int64_t>(rows.size()); }
  std::int64_t a_rows() const { return op_a == Op::N ? m : k; }
  std::int64_t lda() const { return std::max<std::int64_t>(1, op_a == Op::N ? k : m) + lda_pad; }
  std::int64_t b_rows() const { return op_b == Op::N ? k : n; }
  std::int64_t ldb() const { return std::max<std::int64_t>(1, op_b == Op::N ? n : k); }
  std::int64_t ldd() const { return std::max<std::int64_t>(1, n) + ldd_pad; }
  // Gaps of 8 elements between the groups' matrices (untouched, and still TMA-readable).
  std::int64_t stride_a() const { return masked() ? a_rows() * lda() + 8 : 0; }
  std::int64_t stride_b() const { return shared_b ? 0 : b_rows() * ldb() + 8; }
  std::int64_t stride_d() const { return d_per_group() ? m * ldd() + 8 : 0; }
  std::int64_t a_count() const { return masked() ? groups() * stride_a() : a_rows() * lda(); }
  std::int64_t b_count() const { return shared_b ? b_rows() * ldb() : groups() * stride_b(); }
  std::int64_t d_count() const { return d_per_group() ? groups() * stride_d() : m * ldd(); }
  /// The sizes as the device holds them: cumulative end rows, or the rows themselves.
  std::vector<std::int32_t> sizes() const {
    std::vector<std::int32_t> s;
    int end = 0;
    for (int r : rows) s.push_back(masked() ? r : (end += r));
    return s;
  }
  std::string name() const {
    std::string s = what + (masked() ? "_masked_" : k_grouped() ? "_kgrouped_" : "_contig_") + "g" + std::to_string(rows.size()) + "_" +
                    std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + "_" +
                    (op_a == Op::N ? "n" : "t") + (op_b == Op::N ? "n" : "t");
    return s;
  }
};

struct GroupedRun {
  GroupedCase c;
  DataType in, d;
  Accum accum;
};

std::vector<int> random_rows(int groups, int most, std::uint64_t seed) {
  std::mt19937 rng(static_cast<unsigned>(seed));
  std::vector<int> rows(groups);
  for (int& r : rows) r = rng() % 5 == 0 ? 0 : static_cast<int>(rng() % (most + 1));
  return rows;
}

std::vector<GroupedCase> grouped_cases() {
  std::vector<GroupedCase> out;
  auto add = [&](std::string what, GroupedLayout layout, Op oa, Op ob, std::vector<int> rows, std::int64_t m,
                 std::int64_t n, std::int64_t k) -> GroupedCase& {
    GroupedCase c;
    c.what = std::move(what), c.layout = layout, c.op_a = oa, c.op_b = ob, c.rows = std::move(rows);
    c.m = m, c.n = n, c.k = k;
    out.push_back(c);
    return out.back();
  };
  const auto C = GroupedLayout::Contiguous, M = GroupedLayout::Masked;
  // Uneven groups, empty ones first, in the middle and last; rows past the last offset.
  {
    GroupedCase& c = add("uneven", C, Op::N, Op::T, {0, 130, 1, 0, 257, 64, 127, 0}, 579 + 45, 200, 136);
    c.every_type = true, c.alpha = 0.75f;
  }
  {
    GroupedCase& c = add("exact", C, Op::N, Op::T, {65, 0, 190, 1}, 300, 130, 63);
    c.every_type = true, c.exact = true;
  }
  for (auto [oa, ob] : {std::pair{Op::N, Op::N}, std::pair{Op::T, Op::N}, std::pair{Op::T, Op::T}}) {
    if (oa == Op::N) add("ops", C, oa, ob, {0, 129, 3, 0, 200, 0}, 340, 136, 72).every_type = true;  // A is M×K only
    add("ops", M, oa, ob, {0, 200, 1, 129, 64}, 200, 136, 200).every_type = oa == Op::T && ob == Op::N;
  }
  add("masked", M, Op::N, Op::T, {0, 200, 1, 129, 64}, 200, 136, 200).every_type = true;
  {
    GroupedCase& c = add("exact", M, Op::N, Op::T, {3, 128, 0, 127}, 128, 200, 63);
    c.every_type = true, c.exact = true;
  }
  add("one", C, Op::N, Op::T, {300}, 300, 256, 256);
  add("one", C, Op::N, Op::N, {77}, 128, 129, 130);
  add("one", M, Op::N, Op::T, {128}, 128, 128, 64);
  {
    GroupedCase& c = add("unaligned", C, Op::N, Op::T, {50, 0, 140}, 200, 131, 100);
    c.lda_pad = 3, c.ldd_pad = 1, c.every_type = true;
  }
  add("unaligned", M, Op::T, Op::N, {33, 0, 90}, 90, 77, 45).lda_pad = 5;
  add("sharedb", C, Op::N, Op::T, {10, 300, 0, 5}, 400, 192, 128).shared_b = true;
  add("sharedb", M, Op::N, Op::N, {64, 1, 0}, 64, 96, 64).shared_b = true;
  add("k0", C, Op::N, Op::T, {0, 5, 130}, 140, 70, 0).every_type = true;
  add("k0", M, Op::N, Op::T, {0, 5, 64}, 64, 70, 0);
  add("many", C, Op::N, Op::T, random_rows(4096, 3, 1), 0, 64, 64);  // m set below
  add("many", M, Op::N, Op::T, random_rows(1000, 16, 2), 16, 40, 48);
  // N > 128 takes the 256-wide kernel up to its table's 2048 groups, the 128-wide one past them.
  add("many", C, Op::N, Op::T, random_rows(2048, 3, 4), 0, 200, 64);
  add("many", C, Op::N, Op::T, random_rows(2049, 3, 5), 0, 136, 64);
  add("many", M, Op::N, Op::T, random_rows(1000, 16, 6), 16, 136, 48);
  add("deep", C, Op::N, Op::T, {512, 0, 700, 300, 129, 1000, 64, 0}, 2705, 384, 1024);
  // K-grouped (A K×M, B K×N, one of each): each group's k ends anywhere inside a slice; K bounds the sum.
  const auto KG = GroupedLayout::KGrouped;
  {
    GroupedCase& c = add("kuneven", KG, Op::T, Op::N, {0, 130, 1, 0, 257, 64, 127, 0}, 200, 136, 579 + 45);
    c.every_type = true, c.alpha = 0.75f;
  }
  // |sums| ≤ 4·63 < 256: exact in bf16 too; group 2 starts at k 40 and crosses a slice.
  add("kexact", KG, Op::T, Op::N, {40, 0, 63, 1}, 130, 64, 120).exact = true;
  out.back().every_type = true;
  add("kexact", KG, Op::T, Op::N, {40, 0, 63, 1}, 130, 300, 120).exact = true;  // 256-wide tiles
  out.back().every_type = true;
  add("kone", KG, Op::T, Op::N, {300}, 256, 256, 300);
  add("kone", KG, Op::T, Op::N, {64}, 64, 64, 64);
  add("kunaligned", KG, Op::T, Op::N, {50, 0, 140}, 131, 100, 200).lda_pad = 3;
  out.back().ldd_pad = 1, out.back().every_type = true;
  add("k0", KG, Op::T, Op::N, {0, 0, 0}, 70, 70, 0).every_type = true;
  add("kmany", KG, Op::T, Op::N, random_rows(300, 40, 3), 64, 64, 0);  // k set below
  add("kdeep", KG, Op::T, Op::N, {4096, 0, 1000, 3, 8191}, 256, 384, 13290);
  for (GroupedCase& c : out) {
    if (c.k_grouped()) c.shared_b = true;  // one B, split along K
    if (c.what == "many" && !c.masked()) c.m = std::accumulate(c.rows.begin(), c.rows.end(), 0) + 10;
    if (c.what == "kmany") c.k = std::accumulate(c.rows.begin(), c.rows.end(), 0) + 10;
  }
  return out;
}

std::vector<GroupedRun> grouped_runs() {
  std::vector<GroupedRun> runs;
  for (const GroupedCase& c : grouped_cases()) {
    if (c.every_type) {
      for (DataType in : {DataType::F16, DataType::BF16})
        for (DataType d : {DataType::F16, DataType::BF16, DataType::F32}) runs.push_back({c, in, d, Accum::F32});
    } else {
      runs.push_back({c, DataType::F16, DataType::F16, Accum::F32});
    }
    if (!c.exact && (c.what == "uneven" || c.what == "masked" || c.what == "kuneven")) runs.push_back({c, DataType::F16, DataType::F16, Accum::F16});
  }
  return runs;
}

// How gtest shows a parameter (instead of its bytes).
void PrintTo(const GroupedRun& r, std::ostream* os) {
  *os << r.c.name() << ", A/B " << data_type_name(r.in) << ", D " << data_type_name(r.d)
      << (r.accum == Accum::F16 ? ", f16 accumulation" : "");
}

std::string run_name(const testing::TestParamInfo<GroupedRun>& info) {
  const GroupedRun& r = info.param;
  std::string s = std::to_string(info.index) + "_" + r.c.name() + "_" + data_type_name(r.in) + "_" +
                  data_type_name(r.d) + (r.accum == Accum::F16 ? "_acc16" : "");
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

/// A case's host inputs and its device buffers (D poisoned with NaN).
class GroupedProblem {
 public:
  GroupedProblem(const GroupedCase& c, DataType in, DataType d_type)
      : c_(c),
        a_(in, static_cast<std::size_t>(c.a_count())),
        b_(in, static_cast<std::size_t>(c.b_count())),
        initial_d_(d_type, static_cast<std::size_t>(c.d_count())),
        da_(a_.bytes() + 16),
        db_(b_.bytes() + 16),
        dd_(initial_d_.bytes() + 16),
        dsizes_(sizeof(std::int32_t) * std::max<std::size_t>(1, c.rows.size())) {
    const ref::Fill fill = c.exact ? ref::Fill::SmallInts : ref::Fill::Uniform;
    ref::fill_random(a_, 101 + c.rows.size(), fill);
    ref::fill_random(b_, 202 + c.rows.size(), fill);
    initial_d_.fill_bits(ref::nan_bits(d_type));
    da_.upload(a_), db_.upload(b_);
    set_sizes(c.sizes());
  }

  void set_sizes(const std::vector<std::int32_t>& sizes, cudaStream_t stream = nullptr) {
    sizes_ = sizes;
    ASSERT_EQ(cudaMemcpyAsync(dsizes_.get(), sizes.data(), sizes.size() * sizeof(std::int32_t), cudaMemcpyHostToDevice,
                              stream),
              cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
  }
  void poison_d() { dd_.upload(initial_d_); }

  GroupedMatmulArgs args() const {
    GroupedMatmulArgs g;
    g.layout = c_.layout, g.op_a = c_.op_a, g.op_b = c_.op_b;
    g.groups = c_.groups(), g.m = c_.m, g.n = c_.n, g.k = c_.k, g.alpha = c_.alpha;
    const auto* sizes = reinterpret_cast<const std::int32_t*>(dsizes_.get());
    (c_.masked() ? g.m_valid : g.offsets) = sizes;
    g.a = da_.get(), g.lda = c_.lda(), g.stride_a = c_.stride_a(), g.a_type = a_.type();
    g.b = db_.get(), g.ldb = c_.ldb(), g.stride_b = c_.stride_b(), g.b_type = b_.type();
    g.d = dd_.get(), g.ldd = c_.ldd(), g.stride_d = c_.stride_d(), g.d_type = initial_d_.type();
    return g;
  }

  ref::TypedData d_buffer() const { return dd_.download(initial_d_.type(), initial_d_.size()); }

  /// D against the reference of every group for the sizes last set, and nothing written elsewhere.
  void expect_correct(const ref::TypedData& got, Accum accum, const std::string& context) const {
    const DataType d_type = initial_d_.type();
    std::vector<char> inside(got.size(), 0);
    int row0 = 0;  // the group's first row of A and D (contiguous) or first k (K-grouped)
    for (std::size_t g = 0; g < sizes_.size(); ++g) {
      // The sizes the header promises: clamped sizes (the tests give sizes inside the bounds).
      const int size = c_.masked() ? sizes_[g] : sizes_[g] - row0;
      const int rows = c_.k_grouped() ? static_cast<int>(c_.m) : size;
      const std::int64_t depth = c_.k_grouped() ? size : c_.k;
      const std::int64_t base = c_.d_per_group() ? static_cast<std::int64_t>(g) * c_.stride_d() : row0 * c_.ldd();
      for (std::int64_t i = 0; i < rows; ++i)
        for (std::int64_t j = 0; j < c_.n; ++j) inside[static_cast<std::size_t>(base + i * c_.ldd() + j)] = 1;
      if (rows > 0) {
        MatmulArgs h;
        h.op_a = c_.op_a, h.op_b = c_.op_b, h.m = rows, h.n = c_.n, h.k = depth, h.alpha = c_.alpha;
        const std::int64_t a_at = c_.masked()      ? static_cast<std::int64_t>(g) * c_.stride_a()
                                  : c_.k_grouped() ? row0 * c_.lda()
                                  : c_.op_a == Op::N ? row0 * c_.lda()
                                                     : row0;
        const std::int64_t b_at = c_.k_grouped() ? row0 * c_.ldb() : c_.shared_b ? 0 : g * c_.stride_b();
        h.a = a_.at(static_cast<std::size_t>(a_at)), h.lda = c_.lda(), h.a_type = a_.type();
        h.b = b_.at(static_cast<std::size_t>(b_at)), h.ldb = c_.ldb();
        h.b_type = b_.type();
        h.ldc = c_.n > 0 ? c_.n : 1, h.c_type = d_type;
        const ref::Reference want = ref::reference_matmul(h).at(0);
        const ref::ErrorStats e = ref::compare(want, got.at(static_cast<std::size_t>(base)), d_type, c_.ldd());
        const std::string where = "group " + std::to_string(g) + " (" + std::to_string(rows) + " rows, k " +
                                  std::to_string(depth) + "), worst at row " + std::to_string(e.worst_row) +
                                  ", col " + std::to_string(e.worst_col) + context;
        // The tolerance of the group's own depth: one slice lost or added from a neighbour shows.
        const std::int64_t k_tol = std::max<std::int64_t>(1, depth);
        EXPECT_EQ(e.nonfinite, 0) << "NaN/Inf in D: unwritten rows; " << where;
        if (c_.exact) {
          EXPECT_EQ(e.max_abs, 0.0) << "small-integer data must give D exactly; " << where;
        } else if (accum == Accum::F16) {
          EXPECT_LE(e.max_scaled, tolerance_max_scaled(Accum::F16, k_tol)) << where;
          EXPECT_LE(e.rel_fro, tolerance_rel_fro(Accum::F16, k_tol)) << where;
        } else {
          EXPECT_LE(e.max_scaled, ref::matmul_tolerance(d_type, k_tol)) << where;
          EXPECT_LE(e.rel_fro, ref::matmul_tolerance(d_type, k_tol)) << where;
        }
      }
      if (!c_.masked()) row0 += size;
    }
    for (std::size_t e = 0; e < got.size(); ++e)
      if (!inside[e] && got.bits(e) != initial_d_.bits(e)) {
        ADD_FAILURE() << "D written outside the groups' rows at element " << e << " (row " << e / c_.ldd()
                      << ", col " << e % c_.ldd() << ")" << context;
        break;
      }
  }

 private:
  const GroupedCase& c_;
  ref::TypedData a_, b_, initial_d_;
  DeviceBytes da_, db_, dd_, dsizes_;
  std::vector<std::int32_t> sizes_;
};

/// Skips (with the reason) where grouped_matmul cannot run: no GPU, not sm_90 or no sm_90a code.
#define SKIP_WITHOUT_GROUPED()                                                                                   \
  do {                                                                                                           \
    HGEMM_SKIP_WITHOUT_GPU();                                                                                    \
    int dev_ = 0, major_ = 0;                                                                                    \
    cudaGetDevice(&dev_);                                                                                        \
    cudaDeviceGetAttribute(&major_, cudaDevAttrComputeCapabilityMajor, dev_);                                    \
    if (major_ != 9) GTEST_SKIP() << "grouped_matmul runs on sm_90 only";                                       \
  } while (0)

class Grouped : public testing::TestWithParam<GroupedRun> {};

TEST_P(Grouped, EveryGroupMatchesReferenceAndNothingElseIsWritten) {
  SKIP_WITHOUT_GROUPED();
  const GroupedRun& r = GetParam();
  GroupedProblem prob(r.c, r.in, r.d);
  prob.poison_d();
  MatmulOptions opt;
  opt.accum = r.accum;
  Status s = grouped_matmul(prob.args(), opt);
  if (s == Status::UnsupportedArch) GTEST_SKIP() << last_error_message();
  ASSERT_EQ(s, Status::Success) << status_string(s) << ": " << last_error_message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const ref::TypedData first = prob.d_buffer();
  prob.expect_correct(first, r.accum, "");
  // Bitwise repeatable, from a poisoned D again.
  prob.poison_d();
  ASSERT_EQ(grouped_matmul(prob.args(), opt), Status::Success) << last_error_message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(prob.d_buffer() == first) << "a second run gave other bits";
}

INSTANTIATE_TEST_SUITE_P(Api, Grouped, testing::ValuesIn(grouped_runs()), run_name);

// Sizes beyond the bounds are clamped: offsets that fall back or pass M, m_valid past M.
TEST(GroupedClamp, SizesOutsideTheBoundsStayInside) {
  SKIP_WITHOUT_GROUPED();
  GroupedCase c;
  c.what = "clamp", c.rows = {10, 0, 290}, c.m = 300, c.n = 64, c.k = 64;
  GroupedProblem prob(c, DataType::F16, DataType::F16);
  prob.poison_d();
  // Device sizes {10, 5, 400}: groups [0, 10), empty, [10, 300); checked as {10, 10, 300}.
  const std::vector<std::int32_t> raw = {10, 5, 400};
  ASSERT_EQ(cudaMemcpy(const_cast<std::int32_t*>(prob.args().offsets), raw.data(), 12, cudaMemcpyHostToDevice),
            cudaSuccess);
  ASSERT_EQ(grouped_matmul(prob.args()), Status::Success) << last_error_message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  prob.expect_correct(prob.d_buffer(), Accum::F32, " (offsets 10, 5, 400 over 300 rows)");
}

// A thread whose first call into hgemm is made while it captures a graph (the first tensor map
// it encodes binds the device's context): the capture stays valid and the graph computes D.
TEST(GroupedGraph, FirstCallOnANewThreadIsCaptured) {
  SKIP_WITHOUT_GROUPED();
  GroupedCase c;
  c.what = "thread", c.layout = GroupedLayout::KGrouped, c.op_a = Op::T, c.op_b = Op::N, c.shared_b = true;
  c.rows = {100, 0, 29}, c.m = 130, c.n = 72, c.k = 200;
  GroupedProblem prob(c, DataType::F16, DataType::F16);
  prob.poison_d();
  cudaError_t end = cudaErrorUnknown, launch = cudaErrorUnknown;
  Status status = Status::CudaError;
  std::thread([&] {
    cudaStream_t s;
    if (cudaStreamCreate(&s) != cudaSuccess) return;
    cudaGraph_t graph = nullptr;
    cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal);
    MatmulOptions opt;
    opt.stream = s;
    status = grouped_matmul(prob.args(), opt);
    end = cudaStreamEndCapture(s, &graph);
    cudaGraphExec_t exec;
    if (end == cudaSuccess && cudaGraphInstantiate(&exec, graph, 0) == cudaSuccess) {
      launch = cudaGraphLaunch(exec, s);
      cudaStreamSynchronize(s);
      cudaGraphExecDestroy(exec);
    }
    if (graph) cudaGraphDestroy(graph);
    cudaStreamDestroy(s);
  }).join();
  ASSERT_EQ(status, Status::Success) << last_error_message();
  ASSERT_EQ(end, cudaSuccess) << cudaGetErrorString(end);
  ASSERT_EQ(launch, cudaSuccess) << cudaGetErrorString(launch);
  prob.expect_correct(prob.d_buffer(), Accum::F32, " (captured on a new thread)");
}

// One capture, replayed with new sizes written into the same device memory between replays.
TEST(GroupedGraph, ReplaysWithNewSizes) {
  SKIP_WITHOUT_GROUPED();
  for (GroupedLayout layout : {GroupedLayout::Contiguous, GroupedLayout::Masked, GroupedLayout::KGrouped}) {
    GroupedCase c;
    c.what = "graph", c.layout = layout, c.n = 200, c.k = 128;
    c.rows = {100, 0, 200, 50, 0, 130};
    c.m = layout == GroupedLayout::Contiguous ? 600 : 200;
    if (layout == GroupedLayout::KGrouped)  // the sizes split K = 600 of one A (600×200) and one B
      c.op_a = Op::T, c.op_b = Op::N, c.k = 600, c.shared_b = true;
    GroupedProblem prob(c, DataType::BF16, DataType::BF16);
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    cudaGraph_t graph;
    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    MatmulOptions opt;
    opt.stream = s;
    const Status st = grouped_matmul(prob.args(), opt);
    ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
    ASSERT_EQ(st, Status::Success) << last_error_message();
    cudaGraphExec_t exec;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    const std::vector<std::vector<int>> replays = {
        {100, 0, 200, 50, 0, 130}, {0, 0, 0, 0, 0, 200}, {1, 2, 3, 4, 5, 6}, {200, 0, 0, 0, 0, 0}, {0, 0, 0, 0, 0, 0}};
    for (const std::vector<int>& rows : replays) {
      GroupedCase now = c;
      now.rows = rows;
      prob.poison_d();
      prob.set_sizes(now.sizes(), s);
      ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      std::string what = " (replay with rows";
      for (int r : rows) what += " " + std::to_string(r);
      prob.expect_correct(prob.d_buffer(), Accum::F32, what + ")");
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(s);
  }
}

}  // namespace
}  // namespace hgemm::test
