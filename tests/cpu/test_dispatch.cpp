// SPDX-License-Identifier: Apache-2.0
// The dispatch policy against described devices (an H200, an A100, an L4): every choice auto
// makes over the auto benchmark suite and edge shapes is pinned in tests/data/dispatch_golden.txt.
// A rule that changes shows up here as the rows it moves. After a deliberate change, regenerate
// the table with HGEMM_UPDATE_GOLDEN=1 and review its diff.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "api/matmul.h"
#include "config.h"
#include "dispatch/engine_policy.h"
#include "dispatch/policy.h"
#include "engine/sm90/pingpong_build.h"
#include "registry/registry.h"

namespace hgemm::detail {
namespace {

// A distinct, 16-byte-aligned fake device address per operand (the policy never dereferences).
const void* fake(int i, std::int64_t byte_offset = 0) {
  return reinterpret_cast<const void*>(std::uintptr_t(0x100000) * i + static_cast<std::uintptr_t>(byte_offset));
}

struct Row {
  std::string shape;
  Op op_a, op_b;
  Accum accum;
  DataType in, out;
  std::int64_t m, n, k, ld = 0;
  std::int64_t offset = 0;  // bytes added to every pointer
  float beta = 0.f;
  std::int64_t batch = 1;   // a strided batch, the matrices one after another
  enum class Epi { None, Linear, Scaled } epilogue = Epi::None;  // bias, tanh-GELU and aux; then also scales
  bool shared_b = false;    // a batch of products with one B (stride 0)
};

Matmul problem(const Row& r) {
  Matmul p;
  p.op_a = r.op_a, p.op_b = r.op_b, p.m = r.m, p.n = r.n, p.k = r.k, p.accum = r.accum, p.beta = r.beta;
  p.a_type = p.b_type = r.in, p.c_type = p.d_type = r.out;
  p.lda = r.ld ? r.ld : std::max<std::int64_t>(1, r.op_a == Op::N ? r.k : r.m);
  p.ldb = r.ld ? r.ld : std::max<std::int64_t>(1, r.op_b == Op::N ? r.n : r.k);
  p.ldc = p.ldd = r.ld ? r.ld : std::max<std::int64_t>(1, r.n);
  p.a = fake(1, r.offset), p.b = fake(2, r.offset), p.c = fake(3, r.offset);
  p.d = const_cast<void*>(fake(3, r.offset));
  if (r.epilogue != Row::Epi::None) {
    Epilogue& e = p.epilogue;
    e.bias_along = BiasAlong::N, e.bias = fake(5), e.bias_type = r.out;
    e.activation = Activation::GELUTanh;
    e.aux_output = true, e.aux = const_cast<void*>(fake(6)), e.aux_type = r.out, e.ldaux = r.n;
    if (r.epilogue == Row::Epi::Scaled)
      e.scale_rows = e.scale_cols = true, e.row_scale = static_cast<const float*>(fake(7)),
      e.col_scale = static_cast<const float*>(fake(8));
  }
  p.batch = r.batch;
  if (r.batch > 1) {
    p.stride_a = p.lda * (r.op_a == Op::N ? r.m : r.k), p.stride_b = p.ldb * (r.op_b == Op::N ? r.k : r.n);
    p.stride_c = p.stride_d = p.ldd * r.m;
    if (r.shared_b) p.stride_b = 0;
    if (r.epilogue != Row::Epi::None) p.epilogue.stride_aux = p.epilogue.ldaux * r.m;
  }
  return p;
}

std::vector<Row> rows() {
  std::vector<Row> out;
  auto add = [&](const bench::Shape& s, Op oa, Op ob, Accum acc, DataType in, DataType o) {
    out.push_back({s.str(), oa, ob, acc, in, o, s.m, s.n, s.k, s.ld});
  };
  for (auto [oa, ob] : {std::pair{Op::N, Op::T}, std::pair{Op::N, Op::N}})
    for (const bench::Shape& s : bench::suite_shapes("auto"))
      for (Accum acc : {Accum::F16, Accum::F32}) add(s, oa, ob, acc, DataType::F16, DataType::F16);
  // The other ops, the typed combinations, and edges: K = 0, a single row or column, sizes past
  // what TMA can index, 2-byte-aligned pointers, beta reading C.
  for (auto [oa, ob] : {std::pair{Op::T, Op::N}, std::pair{Op::T, Op::T}})
    for (const bench::Shape& s : bench::parse_shapes("4096x4096x4096,128x4096x4096,16x4096x4096,1000x1000x1000"))
      add(s, oa, ob, Accum::F32, DataType::F16, DataType::F16);
  for (DataType in : {DataType::F16, DataType::BF16})
    for (DataType o : {DataType::F16, DataType::BF16, DataType::F32})
      for (const bench::Shape& s : bench::parse_shapes("4096x4096x4096,16x4096x4096,4095x4097x4093"))
        add(s, Op::N, Op::T, Accum::F32, in, o);
  for (const bench::Shape& s : bench::parse_shapes("127x129x0,0x129x7,7x0x7,0x0x0,1x1x1,1x4096x1,4096x1x4096,3000000000x8x8,8x8x3000000000"))
    add(s, Op::N, Op::T, Accum::F32, DataType::F16, DataType::F16);
  // Shapes at the edges of the engine's rules: each scheduler (stream-K for a ragged last round
  // and for few tiles, split-K, cluster split-K), each tile-per-CTA shape and the swapped kernels.
  const struct {
    const char* shapes;
    Op oa, ob;
  } edges[] = {
      {"17000x200x1600,100x60x30000,120x1500x8700,12x2500x777,1x8456x300,5x6000x4100,2304x2048x200", Op::N, Op::N},
      {"2300x2800x3100,3000x3000x3000,4096x4352x4096,128x4100x300,64x4000x1500,100x3000x2000,16x64x65536,"
       "7x3500x1000,24x3000x2000,128x4000x700,600x2000x700,16x4093x1000,32x3700x777,17x16001x200,"
       "128x2048x4096,128x1024x4096,128x8576x4096,100x1000x4000,40x1000x3000,2304x2816x2560,16x1024x4096,"
       "32x1000x4000,64x512x8192,16x512x8192,1x1024x16384",
       Op::N, Op::T},
      {"16900x250x1700,24x2200x8300,64x3000x900,7x9x300000", Op::T, Op::N},
      {"17100x256x1700,100x17024x1600,1024x8448x128", Op::T, Op::T},
  };
  for (const auto& e : edges)
    for (const bench::Shape& s : bench::parse_shapes(e.shapes)) add(s, e.oa, e.ob, Accum::F32, DataType::F16, DataType::F16);
  // Strided batches (one launch on the engine).
  for (const bench::Shape& s : bench::suite_shapes("batched"))
    for (auto [oa, ob] : {std::pair{Op::N, Op::N}, std::pair{Op::N, Op::T}}) {
      add(s, oa, ob, Accum::F32, DataType::F16, DataType::F16);
      out.back().batch = s.batch;
    }
  // Narrow products (N ≤ 128): 128×128 persistent tiles, or a tile per CTA over a long K.
  for (const bench::Shape& s : bench::parse_shapes("1024x64x4096,1024x64x1024,1024x128x1024,1024x128x256")) {
    add(s, Op::N, Op::N, Accum::F32, DataType::F16, DataType::F16);
    out.back().batch = 64;
  }
  // Batches of small products (one side ≤ 64, the other ≤ 128, K ≤ 128): 64×64 tiles per CTA;
  // past each bound, the persistent kernels; 128×128 ones where 256×256 tiles would waste half,
  // or a quarter over a K of at least 512 (on each side of both bounds).
  for (const bench::Shape& s :
       bench::parse_shapes("64x64x64b512,64x128x128b512,128x64x64b512,16x100x32b512,64x64x129b512,128x128x64b512,"
                           "65x65x64b512,64x129x64b512,64x64x64b2,384x384x384b128,640x640x256b64,384x640x384b64,"
                           "640x640x512b32,640x640x511b32,896x896x896b16,2432x640x512b4,1152x1152x512b16")) {
    add(s, Op::N, Op::T, Accum::F32, DataType::F16, DataType::F16);
    out.back().batch = s.batch;
  }
  // One B for every product: a batch whose A and D rows follow one another is one product of
  // batch·M rows; op(A) = T, a vector along M and unshared vectors along N keep the batch.
  for (const bench::Shape& s : bench::parse_shapes("512x4096x4096b8,100x4096x4096b5,64x64x64b512,16x4096x4096b4"))
    for (auto [oa, ob] : {std::pair{Op::N, Op::T}, std::pair{Op::N, Op::N}, std::pair{Op::T, Op::N}}) {
      add(s, oa, ob, Accum::F32, DataType::F16, DataType::F16);
      out.back().batch = s.batch, out.back().shared_b = true;
    }
  for (const bench::Shape& s : bench::parse_shapes("512x4096x4096b8,100x4096x4096b5"))
    for (Row::Epi epi : {Row::Epi::Linear, Row::Epi::Scaled}) {
      add(s, Op::N, Op::T, Accum::F32, DataType::BF16, DataType::BF16);
      out.back().batch = s.batch, out.back().shared_b = true, out.back().epilogue = epi;
    }
  for (const bench::Shape& s : bench::parse_shapes("16384x64x4096,65536x64x1024,16384x128x4096"))
    add(s, Op::N, Op::T, Accum::F32, DataType::F16, DataType::F16);
  for (const bench::Shape& s : bench::parse_shapes("4096x4096x4096,8x4096x4096")) {
    add(s, Op::N, Op::T, Accum::F32, DataType::F16, DataType::F16);
    out.back().offset = 2;
    add(s, Op::N, Op::T, Accum::F32, DataType::F16, DataType::F16);
    out.back().beta = 0.5f;
  }
  // Fused epilogues: the instantiation that runs (the plan's store code) follows the epilogue,
  // the accumulators and the store path; the schedule does not.
  for (DataType o : {DataType::F16, DataType::BF16, DataType::F32})
    for (const bench::Shape& s : bench::parse_shapes(
             "4096x4096x4096,4096x4096x128,8192x8192x8192,128x4096x4096,16x4096x4096,1000x1000x1000,2047x2047x2047"))
      for (Row::Epi epi : {Row::Epi::Linear, Row::Epi::Scaled}) {
        add(s, Op::N, Op::T, Accum::F32, o == DataType::F16 ? DataType::F16 : DataType::BF16, o);
        out.back().epilogue = epi;
      }
  for (const bench::Shape& s : bench::parse_shapes("4096x4096x4096,256x256x128")) {
    add(s, Op::N, Op::T, Accum::F16, DataType::F16, DataType::F16);
    out.back().epilogue = Row::Epi::Linear;
  }
  return out;
}

std::string label(const Row& r) {
  std::ostringstream s;
  s << (r.op_a == Op::N ? "n" : "t") << (r.op_b == Op::N ? "n" : "t") << " " << (r.accum == Accum::F16 ? "acc16" : "acc32")
    << " " << data_type_name(r.in) << "->" << data_type_name(r.out) << " " << r.shape;
  if (r.offset) s << " +" << r.offset << "B";
  if (r.beta != 0.f) s << " beta";
  if (r.shared_b) s << " shared B";
  if (r.epilogue != Row::Epi::None) s << (r.epilogue == Row::Epi::Linear ? " +bias,gelu_tanh,aux" : " +bias,gelu_tanh,aux,scales");
  return s.str();
}

std::vector<std::string> table() {
  std::vector<std::string> lines;
  for (const Device& d : {described_h200(), described_a100(), described_l4()})
    for (const Row& r : rows()) {
      Choice c;
      std::string why;
      const Status s = choose_auto(problem(r), d, &c, &why);
      lines.push_back(d.name + " | " + label(r) + " | " + (s == Status::Success ? describe(c) : std::string("refused: ") + status_string(s)));
    }
  return lines;
}

std::string golden_path() { return std::string(HGEMM_SOURCE_DIR) + "/tests/data/dispatch_golden.txt"; }

TEST(Dispatch, ChoicesMatchTheGoldenTable) {
  const std::vector<std::string> got = table();
  if (std::getenv("HGEMM_UPDATE_GOLDEN")) {
    std::ofstream f(golden_path());
    for (const std::string& l : got) f << l << "\n";
    GTEST_SKIP() << "wrote " << got.size() << " rows to " << golden_path();
  }
  std::ifstream f(golden_path());
  ASSERT_TRUE(f) << "missing " << golden_path() << " (generate it with HGEMM_UPDATE_GOLDEN=1)";
  std::vector<std::string> want;
  for (std::string l; std::getline(f, l);) want.push_back(l);
  ASSERT_EQ(got.size(), want.size()) << "the table has another number of rows: regenerate it and review the diff";
  int moved = 0;
  for (std::size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i] && ++moved <= 20) ADD_FAILURE() << "row " << i << "\n  golden: " << want[i] << "\n  now:    " << got[i];
  EXPECT_EQ(moved, 0) << moved << " choices moved";
}

// Whatever auto picks must itself accept the problem: never a choice that would refuse.
TEST(Dispatch, EveryChoiceSupportsItsProblem) {
  for (const Device& d : {described_h200(), described_a100(), described_l4()})
    for (const Row& r : rows()) {
      Choice c;
      std::string why;
      if (choose_auto(problem(r), d, &c, &why) != Status::Success) continue;
      EXPECT_EQ(check_supported(*c.entry, run_of(c, problem(r)), d.cc, &why), Status::Success)
          << d.name << " " << label(r) << ": " << why;
    }
}

// Off Hopper nothing of sm_90a runs; bf16 and f32 outputs go to a kernel that takes them.
TEST(Dispatch, DevicesGetOnlyWhatTheyRun) {
  for (const Device& d : {described_a100(), described_l4()})
    for (const Row& r : rows()) {
      Choice c;
      std::string why;
      ASSERT_EQ(choose_auto(problem(r), d, &c, &why), Status::Success) << label(r) << ": " << why;
      EXPECT_NE(c.entry->info.family, "sm90") << d.name << " " << label(r);
    }
}

// engine.sm90_pingpong's plans: 2-CTA clusters of 64×256 units, whole tiles where C has enough
// of them, split-K where it has too few, never the schedulers the kernel lacks.
TEST(Dispatch, PingPongPlansUseOnlyItsSchedulers) {
  const Device d = described_h200();
  for (const Row& r : rows()) {
    const Matmul p = problem(r);
    const engine::Plan plan = plan_pingpong(p, d);
    EXPECT_EQ(plan.choice.shape, engine::KernelShape::PingPong) << label(r);
    EXPECT_TRUE(plan.choice.scheduler == engine::Scheduler::WholeTiles ||
                plan.choice.scheduler == engine::Scheduler::SplitK)
        << label(r) << ": " << engine::describe(plan);
    EXPECT_EQ(plan.cluster, 2) << label(r);
    EXPECT_EQ(plan.bm * plan.cluster, 128) << label(r);
    EXPECT_EQ(plan.bn, 256) << label(r);
  }
  Row square{"4096x4096x4096", Op::N, Op::T, Accum::F32, DataType::BF16, DataType::BF16, 4096, 4096, 4096};
  const engine::Plan whole = plan_pingpong(problem(square), d);
  EXPECT_EQ(whole.choice.scheduler, engine::Scheduler::WholeTiles);
  EXPECT_EQ(whole.store, engine::StorePath::Tma);
  EXPECT_LE(whole.clusters, d.clusters[2]);
  Row deep{"256x256x65536", Op::N, Op::T, Accum::F32, DataType::F16, DataType::F16, 256, 256, 65536};
  const engine::Plan split = plan_pingpong(problem(deep), d);
  EXPECT_EQ(split.choice.scheduler, engine::Scheduler::SplitK) << engine::describe(split);
  EXPECT_GT(split.splits, 1);
  EXPECT_EQ(split.store, engine::StorePath::Partials);
}

// Every field of a plan (describe leaves some out).
bool same_plan(const engine::Plan& a, const engine::Plan& b) {
  return a.choice.shape == b.choice.shape && a.choice.scheduler == b.choice.scheduler &&
         a.choice.splits == b.choice.splits && a.choice.clusters == b.choice.clusters && a.swapped == b.swapped &&
         a.m == b.m && a.n == b.n && a.k == b.k && a.batch == b.batch && a.bm == b.bm && a.bn == b.bn &&
         a.cluster == b.cluster && a.clusters == b.clusters && a.grid == b.grid && a.splits == b.splits &&
         a.store == b.store && a.repack_a == b.repack_a && a.repack_b == b.repack_b &&
         a.partials_bytes == b.partials_bytes && a.handover_bytes == b.handover_bytes &&
         a.repack_bytes == b.repack_bytes;
}

// The engine's entries run only a plan they are given (run_plan): they have no launch of their
// own that could plan again, and no other entry takes a plan.
TEST(Dispatch, OnlyEngineEntriesTakeAPlanAndTheyTakeNothingElse) {
  int engines = 0;
  for (const KernelEntry* e : registry()) {
    if (e->info.family != "engine") {
      EXPECT_EQ(e->run_plan, nullptr) << e->info.id;
      continue;
    }
    ++engines;
    EXPECT_NE(e->run_plan, nullptr) << e->info.id;
    EXPECT_EQ(e->run, nullptr) << e->info.id << " has a launch without the dispatch's plan";
    EXPECT_EQ(e->launch, nullptr) << e->info.id;
  }
  EXPECT_EQ(engines, 2);
}

// An engine entry named by id gets its plan where auto's choice gets it: engine.sm90 named runs
// the plan auto makes for it, engine.sm90_pingpong the ping-pong kernel's plan for the problem.
TEST(Dispatch, NamedEngineEntriesGetThePlanOfThePolicy) {
  const Device d = described_h200();
  const KernelEntry* engine = find_kernel("engine.sm90");
  const KernelEntry* pingpong = find_kernel("engine.sm90_pingpong");
  ASSERT_TRUE(engine && pingpong);
  int compared = 0, compared_pingpong = 0;
  for (const Row& r : rows()) {
    const Matmul p = problem(r);
    Choice automatic, named;
    std::string why;
    ASSERT_EQ(choose_kernel(p, "auto", d, &automatic, &why), Status::Success) << label(r) << ": " << why;
    if (automatic.entry != engine) continue;
    ASSERT_EQ(choose_kernel(p, "engine.sm90", d, &named, &why), Status::Success) << label(r) << ": " << why;
    EXPECT_EQ(named.entry, engine);
    EXPECT_TRUE(named.engine && automatic.engine) << label(r);
    EXPECT_TRUE(same_plan(named.plan, automatic.plan))
        << label(r) << "\n  named: " << describe(named) << "\n  auto:  " << describe(automatic);
    ++compared;
    const Status pingpong_runs = check_supported(*pingpong, p, d.cc, &why);
    if (!engine::pingpong_built() && pingpong_runs == Status::UnsupportedArch) {  // as a missing arch, named
      EXPECT_NE(why.find("HGEMM_ENGINE_PINGPONG"), std::string::npos) << why;
      ++compared_pingpong;
    }
    if (pingpong_runs != Status::Success) continue;
    ASSERT_EQ(choose_kernel(p, "engine.sm90_pingpong", d, &named, &why), Status::Success) << label(r) << ": " << why;
    EXPECT_EQ(named.entry, pingpong);
    EXPECT_TRUE(named.engine) << label(r);
    EXPECT_TRUE(same_plan(named.plan, plan_pingpong(run_of(named, p), d))) << label(r) << ": " << describe(named);
    ++compared_pingpong;
  }
  EXPECT_GT(compared, 100);
  EXPECT_GT(compared_pingpong, 50) << "engine.sm90_pingpong's plans (or refusals, without the kernel)";
}

// A kernel named by id is refused on the host as before the dispatch chose for it.
TEST(Dispatch, NamedEntriesRefuseAsBefore) {
  const Device d = described_h200();
  Row square{"256x256x256", Op::N, Op::T, Accum::F32, DataType::F16, DataType::F16, 256, 256, 256};
  Matmul p = problem(square);
  Choice c;
  std::string why;
  EXPECT_EQ(choose_kernel(p, "engine.no_such_kernel", d, &c, &why), Status::UnknownKernel);
  EXPECT_EQ(why, "no kernel named 'engine.no_such_kernel' (see hgemm::kernels())");
  EXPECT_EQ(choose_kernel(p, "engine.sm90", described_a100(), &c, &why), Status::UnsupportedArch) << why;
  p.epilogue.activation = Activation::ReLU;
  EXPECT_EQ(choose_kernel(p, "mma.m16n8k16_stages", d, &c, &why), Status::UnsupportedEpilogue);
  EXPECT_NE(why.find("mma.m16n8k16_stages cannot apply a fused epilogue"), std::string::npos) << why;
  ASSERT_EQ(choose_kernel(p, "cublas.acc32", d, &c, &why), Status::Success) << why;  // then the epilogue pass
  EXPECT_FALSE(c.engine);
  ASSERT_EQ(choose_kernel(p, "engine.sm90", d, &c, &why), Status::Success) << why;
  EXPECT_TRUE(c.engine);
}

engine::Plan g_ran_plan;
Matmul g_ran_problem;
int g_runs = 0;
Status record_plan(const engine::Plan& plan, const Matmul& p, cudaStream_t, std::string*) {
  g_ran_plan = plan;
  g_ran_problem = p;
  ++g_runs;
  return Status::Success;
}

// run_matmul hands the entry the choice's plan as it is: a plan no rule would make (its grid
// marked) reaches the entry unchanged, so nothing between the dispatch and the launch plans again.
TEST(Dispatch, TheEntryRunsThePlanItWasChosenWith) {
  const Device d = described_h200();
  KernelEntry recorder = *find_kernel("engine.sm90");
  recorder.run_plan = &record_plan;
  int ran = 0;
  for (const Row& r : rows()) {
    const Matmul p = problem(r);
    Choice c;
    std::string why;
    if (choose_kernel(p, "auto", d, &c, &why) != Status::Success || !c.engine || !p.d_used()) continue;
    c.entry = &recorder;
    c.plan.grid = 0xC0FFEEu;
    g_runs = 0;
    ASSERT_EQ(run_matmul(c, p, nullptr), Status::Success) << label(r);
    ASSERT_EQ(g_runs, 1) << label(r);
    EXPECT_TRUE(same_plan(g_ran_plan, c.plan)) << label(r) << ": " << engine::describe(g_ran_plan);
    ++ran;
  }
  EXPECT_GT(ran, 100);
}

// A batch that shares B and stacks A's and D's rows (and C's and aux's) runs as one product of
// batch·M rows: the choice says so, is made for that product, and the entry receives it; a
// transposed A, a vector along M, vectors along N that differ per product or any matrix strided
// otherwise keep the batch.
TEST(Dispatch, ABatchSharingBRunsAsOneProduct) {
  const Device d = described_h200();
  Row r{"512x4096x4096b8", Op::N, Op::T, Accum::F32, DataType::F16, DataType::F16, 512, 4096, 4096};
  r.batch = 8, r.shared_b = true;
  const Matmul p = problem(r);
  Choice c;
  std::string why;
  ASSERT_EQ(choose_kernel(p, "auto", d, &c, &why), Status::Success) << why;
  EXPECT_TRUE(c.one_product);
  EXPECT_NE(describe(c).find("(the batch as one product)"), std::string::npos) << describe(c);
  EXPECT_EQ(describe(c).find("batch of"), std::string::npos) << describe(c);
  Row single{"4096x4096x4096", Op::N, Op::T, Accum::F32, DataType::F16, DataType::F16, 4096, 4096, 4096};
  Choice whole;
  ASSERT_EQ(choose_auto(problem(single), d, &whole, &why), Status::Success) << why;
  EXPECT_TRUE(same_plan(c.plan, whole.plan)) << engine::describe(c.plan) << " against " << engine::describe(whole.plan);

  KernelEntry recorder = *find_kernel("engine.sm90");
  recorder.run_plan = &record_plan;
  c.entry = &recorder;
  g_runs = 0;
  ASSERT_EQ(run_matmul(c, p, nullptr), Status::Success);
  ASSERT_EQ(g_runs, 1);
  EXPECT_EQ(g_ran_problem.m, 8 * 512);
  EXPECT_EQ(g_ran_problem.batch, 1);
  EXPECT_EQ(g_ran_problem.stride_a, 0);
  EXPECT_EQ(g_ran_problem.a, p.a);
  EXPECT_EQ(g_ran_problem.d, p.d);

  auto folds = [&](Matmul q) {
    Choice x;
    std::string reason;
    EXPECT_EQ(choose_kernel(q, "engine.sm90", d, &x, &reason), Status::Success) << reason;
    return x.one_product;
  };
  EXPECT_TRUE(folds(p)) << "a named engine entry too";
  Matmul b_steps = p;
  b_steps.stride_b = 4096 * 4096;
  EXPECT_FALSE(folds(b_steps)) << "B per product";
  Matmul a_apart = p;
  a_apart.stride_a = p.stride_a + 8;
  EXPECT_FALSE(folds(a_apart)) << "A's matrices apart";
  Matmul d_apart = p;
  d_apart.stride_d = p.stride_d + 8;
  EXPECT_FALSE(folds(d_apart)) << "D's matrices apart";
  Matmul c_apart = p;
  c_apart.beta = 1.f, c_apart.c = fake(9), c_apart.stride_c = p.stride_d + 8;
  EXPECT_FALSE(folds(c_apart)) << "C read, its matrices apart";
  c_apart.stride_c = p.stride_d;
  EXPECT_TRUE(folds(c_apart)) << "C read, stacked as D";
  Matmul a_t = p;
  a_t.op_a = Op::T, a_t.lda = 512, a_t.stride_a = 512 * 4096;
  EXPECT_FALSE(folds(a_t)) << "op(A) = T: the products' rows are A's columns";
  Matmul linear = p;
  linear.epilogue.bias_along = BiasAlong::N, linear.epilogue.bias = fake(5), linear.epilogue.bias_type = DataType::F16;
  linear.epilogue.aux_output = true, linear.epilogue.aux = const_cast<void*>(fake(6)), linear.epilogue.ldaux = 4096;
  linear.epilogue.stride_aux = 512 * 4096;
  EXPECT_TRUE(folds(linear)) << "one bias along N, aux stacked as D";
  Matmul aux_apart = linear;
  aux_apart.epilogue.stride_aux += 8;
  EXPECT_FALSE(folds(aux_apart)) << "aux's matrices apart";
  Matmul bias_each = linear;
  bias_each.epilogue.stride_bias = 4096;
  EXPECT_FALSE(folds(bias_each)) << "a bias per product";
  Matmul bias_m = linear;
  bias_m.epilogue.bias_along = BiasAlong::M;
  EXPECT_FALSE(folds(bias_m)) << "a bias along M";
  Matmul rows = linear;
  rows.epilogue.scale_rows = true, rows.epilogue.row_scale = static_cast<const float*>(fake(7));
  EXPECT_FALSE(folds(rows)) << "row scales";
}

}  // namespace
}  // namespace hgemm::detail
