// SPDX-License-Identifier: Apache-2.0
// The shared-memory bank model: each rule on hand-checked requests, then the ladder's tables
// pinned, so that a kernel change that adds a conflict fails here.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <stdexcept>

#include "analysis/bank_model.h"
#include "analysis/ladder.h"
#include "hgemm/hgemm.h"
#include "banks_report.h"

namespace hgemm::banks {
namespace {

// A request where lane l accesses address(l).
template <typename F>
Request request(int width, F address, bool store = false) {
  Request r;
  r.width = width, r.store = store;
  for (int l = 0; l < kWarp; ++l) r.lanes[l] = {true, static_cast<std::uint32_t>(address(l))};
  return r;
}

TEST(BankModel, ConsecutiveWordsTakeOneWavefront) {
  const Cost c = cost(request(4, [](int l) { return 4 * l; }));
  EXPECT_EQ(c.wavefronts, 1);
  EXPECT_EQ(c.ways, 1);
}

TEST(BankModel, SameWordIsBroadcast) {
  EXPECT_EQ(cost(request(4, [](int) { return 64; })).wavefronts, 1);
  // Two halves of one word are one word.
  EXPECT_EQ(cost(request(2, [](int l) { return 2 * (l % 2); })).wavefronts, 1);
}

TEST(BankModel, TwoWordsInABankAreTwoWay) {
  // Lanes 0–15 and 16–31 read rows 128 bytes apart: every bank holds two distinct words.
  const Cost c = cost(request(4, [](int l) { return (l % 16) * 4 + (l / 16) * 128; }));
  EXPECT_EQ(c.wavefronts, 2);
  EXPECT_EQ(c.ways, 2);
}

TEST(BankModel, ColumnOfA32x32FloatMatrixIs32Way) {
  const Cost c = cost(request(4, [](int l) { return l * 128; }));
  EXPECT_EQ(c.wavefronts, 32);
  EXPECT_EQ(c.ways, 32);
}

TEST(BankModel, PaddingOneWordRemovesTheColumnConflict) {
  EXPECT_EQ(cost(request(4, [](int l) { return l * (128 + 4); })).wavefronts, 1);
}

TEST(BankModel, XorSwizzleRemovesTheColumnConflict) {
  // Element (row l, column 0) of a 32×32 word matrix stored at column (0 ^ row).
  EXPECT_EQ(cost(request(4, [](int l) { return l * 128 + ((0 ^ l) % 32) * 4; })).wavefronts, 1);
}

TEST(BankModel, EightByteAccessesGoByHalfWarps) {
  // 32 lanes × 8 contiguous bytes = 256 bytes: two half-warp phases of 128 bytes each.
  const Cost c = cost(request(8, [](int l) { return 8 * l; }));
  EXPECT_EQ(c.phases, 2);
  EXPECT_EQ(c.wavefronts, 2);
  EXPECT_EQ(c.ways, 1);
  // Within a half-warp, stride 16 bytes spans 256 bytes: 2-way.
  EXPECT_EQ(cost(request(8, [](int l) { return 16 * (l % 16); })).ways, 2);
}

TEST(BankModel, SixteenByteAccessesGoByQuarterWarps) {
  const Cost c = cost(request(16, [](int l) { return 16 * l; }));
  EXPECT_EQ(c.phases, 4);
  EXPECT_EQ(c.wavefronts, 4);
  EXPECT_EQ(c.ways, 1);
}

TEST(BankModel, PairedLanesHalveThePhasesOfWideLoads) {
  // Lanes n and n^1 share an address: 16 distinct 16-byte pieces, 2 wavefronts instead of 4.
  const Request paired = request(16, [](int l) { return 16 * (l / 2); });
  EXPECT_TRUE(pairs_share_addresses(paired));
  EXPECT_EQ(cost(paired).wavefronts, 2);
  // Lanes n and n^2 sharing works too.
  EXPECT_EQ(cost(request(16, [](int l) { return 16 * ((l / 4) * 2 + l % 2); })).wavefronts, 2);
  // Stores are not paired.
  EXPECT_EQ(cost(request(16, [](int l) { return 16 * (l / 2); }, /*store=*/true)).wavefronts, 4);
  // Sharing with another lane (n^16) is not the pairing rule.
  const Request far = request(16, [](int l) { return 16 * (l % 16); });
  EXPECT_FALSE(pairs_share_addresses(far));
  EXPECT_EQ(cost(far).wavefronts, 4);
}

TEST(BankModel, InactiveLanesCostNothing) {
  Request r;
  r.width = 4;
  EXPECT_EQ(cost(r).wavefronts, 0);
  r.lanes[5] = {true, 20};
  EXPECT_EQ(cost(r).wavefronts, 1);
}

TEST(BankModel, RejectsBadWidthsAndMisalignedAddresses) {
  EXPECT_THROW(cost(request(3, [](int l) { return 3 * l; })), std::invalid_argument);
  EXPECT_THROW(cost(request(16, [](int l) { return 8 + 16 * l; })), std::invalid_argument);
}

// The ladder's tables: wavefronts per request and worst n-way of every instruction. A kernel
// change that makes any of these worse must show up here (and in docs/bank-conflicts.md).
struct Pinned {
  const char* kernel;
  const char* instruction;
  double wavefronts;
  int ways;
};
const Pinned kPinned[] = {
    {"cuda.sliced_k", "STS.U16 s_a (A element)", 1, 1},
    {"cuda.sliced_k", "STS.U16 s_b (B element)", 1, 1},
    {"cuda.sliced_k", "LDS.64 s_a (4 k of A's row)", 1, 1},
    {"cuda.sliced_k", "LDS.U16 s_b (B at one k)", 1, 1},
    {"cuda.t8x8_f16x4", "STS.32 s_a (half2 of A)", 2, 2},
    {"cuda.t8x8_f16x4", "STS.32 s_b (half2 of B)", 2, 2},
    {"cuda.t8x8_f16x4", "LDS.64 s_a (4 k of one A row)", 2, 1},
    {"cuda.t8x8_f16x4", "LDS.64 s_b (4 columns of B)", 4, 2},
    {"cuda.t8x8_f16x4_pack", "STS.64 s_a (4 halves of A)", 2, 1},
    {"cuda.t8x8_f16x4_pack", "STS.64 s_b (4 halves of B)", 2, 1},
    {"cuda.t8x8_f16x4_pack", "LDS.64 s_a (4 k of one A row)", 2, 1},
    {"cuda.t8x8_f16x4_pack", "LDS.64 s_b (4 columns of B)", 4, 2},
    {"cuda.t8x8_f16x4_bcf", "STS.U16 s_a (A transposed)", 2, 2},
    {"cuda.t8x8_f16x4_bcf", "STS.64 s_b (4 halves of B)", 2, 1},
    {"cuda.t8x8_f16x4_bcf", "LDS.64 s_a (A quadrant)", 1, 1},
    {"cuda.t8x8_f16x4_bcf", "LDS.64 s_b (B quadrant)", 2, 1},
    {"cuda.t8x8_f16x8_pack_bcf", "STS.U16 s_a (A transposed)", 1, 1},
    {"cuda.t8x8_f16x8_pack_bcf", "STS.64 s_b (4 halves of B)", 2, 1},
    {"cuda.t8x8_f16x8_pack_bcf", "LDS.128 s_a (8 rows of A)", 2, 1},
    {"cuda.t8x8_f16x8_pack_bcf", "LDS.128 s_b (8 columns of B)", 4, 1},
    {"cuda.t8x8_f16x8_pack_bcf_dbuf", "STS.U16 s_a (A transposed)", 2, 2},
    {"cuda.t8x8_f16x8_pack_bcf_dbuf", "STS.128 s_b (8 halves of B)", 4, 1},
    {"cuda.t8x8_f16x8_pack_bcf_dbuf", "LDS.128 s_a (8 rows of A)", 2, 1},
    {"cuda.t8x8_f16x8_pack_bcf_dbuf", "LDS.128 s_b (8 columns of B)", 4, 1},
    {"cuda.t8x8_hfma2", "STS.32 s_a (k-pair of A, transposed)", 1, 1},
    {"cuda.t8x8_hfma2", "STS.128 s_b (4 columns of a B row pair)", 8, 2},
    {"cuda.t8x8_hfma2", "LDS.128 s_a (k-pairs of 4 rows)", 2, 1},
    {"cuda.t8x8_hfma2", "LDS.128 s_b (k-pairs of 4 columns)", 4, 1},
};

TEST(LadderBanks, TablesArePinned) {
  int checked = 0;
  for (const KernelSmem& k : ladder_kernels())
    for (const SmemInstruction& ins : k.instructions) {
      const Pinned* pin = nullptr;
      for (const Pinned& p : kPinned)
        if (k.id == p.kernel && ins.name == p.instruction) pin = &p;
      ASSERT_NE(pin, nullptr) << k.id << " / " << ins.name << " is not pinned: add it to kPinned";
      const InstructionCost c = analyse(k, ins);
      EXPECT_DOUBLE_EQ(c.wavefronts_per_request, pin->wavefronts) << k.id << " / " << ins.name;
      EXPECT_EQ(c.worst_ways, pin->ways) << k.id << " / " << ins.name;
      ++checked;
    }
  EXPECT_EQ(checked, static_cast<int>(std::size(kPinned)));
}

TEST(LadderBanks, EveryTiledKernelOfTheRegistryIsAnalysed) {
  std::vector<std::string> analysed;
  for (const KernelSmem& k : ladder_kernels()) analysed.push_back(k.id);
  for (const KernelInfo& info : kernels())
    if (info.family == "cuda" && info.id != "cuda.naive")  // naive uses no shared memory
      EXPECT_NE(std::find(analysed.begin(), analysed.end(), info.id), analysed.end()) << info.id;
}

TEST(LadderBanks, PredictedRequestCountsFollowTheGrid) {
  for (const KernelSmem& k : ladder_kernels()) {
    if (k.id != "cuda.t8x8_f16x8_pack_bcf") continue;
    // 2048³: 256 blocks × 256 slices × 8 warps × 16 LDS.128 (what ncu counted on the H200).
    const KernelTotals t = predict(k, 2048, 2048, 2048);
    EXPECT_DOUBLE_EQ(t.load_requests, 256.0 * 256 * 8 * 16);
    EXPECT_DOUBLE_EQ(t.load_wavefronts / t.load_requests, 3.0);
  }
}

TEST(BanksReport, ReadsNcuCsvAndMatchesKernelsByNamespace) {
  const std::string path = testing::TempDir() + "/ncu_fixture.csv";
  std::ofstream(path) << "==PROF== Connected\n"
                         "\"ID\",\"Kernel Name\",\"Metric Name\",\"Metric Unit\",\"Metric Value\"\n"
                         "\"0\",\"void cuda_t8x8_f16x4::kernel<__half>(Problem)\",\"smsp__inst_executed_op_shared_ld.sum\",\"inst\",\"16,777,216\"\n"
                         "\"0\",\"void cuda_t8x8_f16x4::kernel<__half>(Problem)\",\"l1tex__data_pipe_lsu_wavefronts_mem_shared_op_ld.sum\",\"\",\"50331648\"\n"
                         "\"1\",\"void cuda_t8x8_f16x4::kernel<__half>(Problem)\",\"smsp__inst_executed_op_shared_ld.sum\",\"inst\",\"1\"\n"
                         "\"2\",\"void cuda_t8x8_f16x4::kernel<float>(Problem)\",\"smsp__inst_executed_op_shared_ld.sum\",\"inst\",\"7\"\n"
                         "\"3\",\"nvjet_sm90_hsh\",\"smsp__inst_executed_op_shared_ld.sum\",\"inst\",\"9\"\n";
  const std::vector<Measured> m = read_ncu_csv(path);
  ASSERT_EQ(m.size(), 1u);
  EXPECT_EQ(m[0].id, "cuda.t8x8_f16x4");
  EXPECT_EQ(m[0].load_requests, 16777216.0);  // the first launch, thousands separators dropped
  EXPECT_EQ(m[0].load_wavefronts, 50331648.0);
  EXPECT_THROW(read_ncu_csv(path + ".missing"), std::runtime_error);
}

TEST(BanksReport, MarkdownHasTheSeedTableAndEveryKernel) {
  std::vector<const KernelSmem*> all;
  for (const KernelSmem& k : ladder_kernels()) all.push_back(&k);
  const std::string md = markdown_report(all, {}, Shape{});
  EXPECT_NE(md.find("| t_8x8_f16x4 | `cuda.t8x8_f16x4` | none / 2-way | 16-way / none"), std::string::npos) << md;
  for (const KernelSmem* k : all) EXPECT_NE(md.find("### `" + k->id + "`"), std::string::npos) << k->id;
}

}  // namespace
}  // namespace hgemm::banks
