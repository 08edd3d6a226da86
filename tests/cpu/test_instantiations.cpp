// SPDX-License-Identifier: Apache-2.0
// The engine's list of instantiations (src/engine/sm90/instantiations.h) against its plans:
//  * the list names each instantiation once, and per unit as many as instantiations.counts says
//    (which scripts/ptxas-check.sh holds against ptxas's own count);
//  * every plan of every shape under each of its schedulers runs a listed instantiation, and
//    every listed instantiation is run by one of them (auto's plans and the ping-pong entry's on
//    random problems are checked against the list in test_random_plans.cpp).
#include <gtest/gtest.h>

#include <fstream>
#include <map>
#include <set>
#include <sstream>
#include <string>

#include "common/device.h"
#include "engine/sm90/instantiations.h"

namespace hgemm::detail {
namespace {

using engine::Instantiation;
using engine::KernelShape;
using engine::Scheduler;

int index_in_manifest(const Instantiation& i) {
  const auto& m = engine::manifest();
  for (std::size_t j = 0; j < m.size(); ++j)
    if (m[j] == i) return static_cast<int>(j);
  return -1;
}

// A distinct, 16-byte-aligned fake device address per matrix (nothing is dereferenced).
void* fake(int i) { return reinterpret_cast<void*>(std::uintptr_t(0x1000000) * static_cast<std::uintptr_t>(i)); }

// What the epilogue asks of the store code: nothing, a bias and tanh-GELU (in registers where
// the accumulators are f32), the same with column scales, or C read (beta = 1).
enum class Finish { Plain, Linear, Scaled, ReadsC };

Matmul problem(std::int64_t m, std::int64_t n, std::int64_t k, Op op_a, Op op_b, Accum accum, DataType in,
               Finish finish) {
  Matmul p;
  p.op_a = op_a, p.op_b = op_b, p.m = m, p.n = n, p.k = k, p.accum = accum;
  p.a_type = p.b_type = in, p.c_type = p.d_type = accum == Accum::F16 ? DataType::F16 : in;
  p.lda = op_a == Op::N ? k : m, p.ldb = op_b == Op::N ? n : k, p.ldc = p.ldd = n;
  p.a = fake(1), p.b = fake(2), p.c = fake(3), p.d = fake(4);
  if (finish == Finish::Linear || finish == Finish::Scaled) {
    p.epilogue.bias_along = BiasAlong::N, p.epilogue.bias = fake(5), p.epilogue.bias_type = DataType::F32;
    p.epilogue.activation = Activation::GELUTanh;
  }
  if (finish == Finish::Scaled) p.epilogue.scale_cols = true, p.epilogue.col_scale = static_cast<const float*>(fake(6));
  if (finish == Finish::ReadsC) p.beta = 1.f;
  return p;
}

TEST(Instantiations, EachIsListedOnceAndTheUnitsHoldWhatPtxasCounts) {
  const auto& m = engine::manifest();
  std::set<std::string> names;
  std::map<std::string, int> per_unit;
  for (const Instantiation& i : m) {
    EXPECT_TRUE(names.insert(engine::describe(i)).second) << engine::describe(i) << " listed twice";
    ++per_unit[engine::unit_of(i)];
  }
  // The counts that scripts/ptxas-check.sh also checks against ptxas's report.
  std::map<std::string, int> ptxas;
  std::ifstream counts(HGEMM_SOURCE_DIR "/src/engine/sm90/instantiations.counts");
  ASSERT_TRUE(counts) << "src/engine/sm90/instantiations.counts is missing";
  for (std::string line; std::getline(counts, line);) {
    if (line.empty() || line[0] == '#') continue;
    std::istringstream fields(line);
    std::string unit;
    int kernels = -1;
    fields >> unit >> kernels;
    ASSERT_GT(kernels, 0) << "bad line in instantiations.counts: " << line;
    ptxas[unit] = kernels;
  }
  EXPECT_EQ(per_unit, ptxas);
}

// Every shape under every scheduler it has, for each op, type and kind of finish.
TEST(Instantiations, EveryPlanRunsAListedOneAndEveryListedOneRuns) {
  std::vector<int> runs(engine::manifest().size(), 0);
  const Device d = described_h200();
  auto run = [&](const engine::Plan& plan, const Matmul& p, bool must_run) {
    if (p.k == 0 || !p.d_used()) return;  // no kernel
    const auto i = engine::instantiation_of(plan, p);
    if (!i) {
      EXPECT_FALSE(must_run) << "the launch refuses " << engine::describe(plan);
      return;
    }
    const int j = index_in_manifest(*i);
    ASSERT_GE(j, 0) << "not listed: " << engine::describe(*i) << " (" << engine::describe(plan) << ")";
    ++runs[j];
  };
  // Forced choices: each shape, its schedulers, both majors of each operand, each type and each
  // kind of finish, over a short and a long K.
  for (const engine::ShapeInfo& s : engine::kKernelShapes) {
    if (s.shape == KernelShape::Grouped128x128 || s.shape == KernelShape::Grouped128x256) continue;
    std::vector<Scheduler> schedulers;
    if (s.persistent) {
      schedulers = {Scheduler::WholeTiles, Scheduler::SplitK};
      if (s.stream_k) schedulers.push_back(Scheduler::StreamK);
      if (s.cluster_split_k) schedulers.push_back(Scheduler::ClusterSplitK);
    } else {
      schedulers = {Scheduler::TilePerCta};
    }
    for (Scheduler sched : schedulers)
      for (Op oa : {Op::N, Op::T})
        for (Op ob : {Op::N, Op::T})
          for (auto [accum, in] : {std::pair{Accum::F16, DataType::F16}, std::pair{Accum::F32, DataType::F16},
                                   std::pair{Accum::F32, DataType::BF16}})
            for (Finish finish : {Finish::Plain, Finish::Linear, Finish::Scaled, Finish::ReadsC})
              for (std::int64_t k : {128, 4096}) {
                // the swapped kernels read A as their K-major B: A stored M×K (op N)
                if (s.swapped && oa != Op::N) continue;
                const std::int64_t m = s.swapped ? 40 : 1024, n = 2048;
                const Matmul p = problem(m, n, k, oa, ob, accum, in, finish);
                const engine::EngineChoice choice{s.shape, sched, sched == Scheduler::SplitK || sched == Scheduler::ClusterSplitK ? 4 : 1, 0};
                run(engine::make_plan(p, d, choice), p, false);
              }
  }
  for (std::size_t j = 0; j < runs.size(); ++j)
    EXPECT_GT(runs[j], 0) << "no plan runs " << engine::describe(engine::manifest()[j]);
}

}  // namespace
}  // namespace hgemm::detail
