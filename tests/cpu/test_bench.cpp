// SPDX-License-Identifier: Apache-2.0
// The host-side pieces of hgemm-bench: argument parsing, suites, kernel selection, reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <set>
#include <stdexcept>
#include <tuple>

#include "config.h"
#include "report.h"

namespace hgemm::bench {
namespace {

TEST(BenchConfig, ParsesShapes) {
  const auto s = parse_shapes("4096x4096x4096, 1x7X129");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[1].m, 1);
  EXPECT_EQ(s[1].n, 7);
  EXPECT_EQ(s[1].k, 129);
  EXPECT_EQ(s[0].str(), "4096x4096x4096");
  for (const char* bad : {"", "4096x4096", "1x2x3x4", "ax2x3", "-1x2x3", "1x2x3.5", "1x2x3:ld", "1x2x3:ld0",
                          "1x2x3:4", "1x2x3:ldx"})
    EXPECT_THROW(parse_shapes(bad), std::invalid_argument) << bad;
}

// The message of the std::invalid_argument that `f` throws ("" when it throws nothing).
template <typename F>
std::string error_of(F f) {
  try {
    f();
  } catch (const std::invalid_argument& e) {
    return e.what();
  }
  return "";
}

// m, n, k, ld and batch of a shape, to compare in one line.
std::tuple<std::int64_t, std::int64_t, std::int64_t, std::int64_t, std::int64_t> fields(const Shape& s) {
  return {s.m, s.n, s.k, s.ld, s.batch};
}

TEST(BenchConfig, ParsesBatchedShapes) {
  const auto s = parse_shapes("64x64x64b1024, 4096x4096x512B8:ld4104, 7x7x7b1");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(fields(s[0]), std::make_tuple(64, 64, 64, 0, 1024));
  EXPECT_EQ(fields(s[1]), std::make_tuple(4096, 4096, 512, 4104, 8));
  EXPECT_EQ(fields(s[2]), std::make_tuple(7, 7, 7, 0, 1));
  EXPECT_EQ(s[0].str(), "64x64x64b1024");
  EXPECT_EQ(s[1].str(), "4096x4096x512b8:ld4104");
  EXPECT_EQ(s[2].str(), "7x7x7");  // a batch of one is a single product
  for (const Shape& x : s) EXPECT_EQ(fields(parse_shapes(x.str())[0]), fields(x)) << x.str();
  for (const char* bad : {"64x64x64b", "64x64x64b0", "64x64x64b-2", "64x64x64bx", "64x64x64b2b3", "b2x64x64",
                          "64b2x64x64", "64x64x64:ld72b4", "64x64x64b2.5"}) {
    const std::string why = error_of([&] { parse_shapes(bad); });
    EXPECT_NE(why.find(bad), std::string::npos) << "the message names the shape: " << why;
  }
  EXPECT_NE(error_of([] { parse_shapes("64x64x64b0"); }).find("batch count must be positive"), std::string::npos);
  EXPECT_NE(error_of([] { parse_shapes("64x64"); }).find("MxNxK[bB][:ldL]"), std::string::npos);
}

TEST(BenchConfig, ParsesBatchOption) {
  EXPECT_EQ(parse_batch("16"), 16);
  EXPECT_EQ(parse_batch("1"), 1);
  for (const char* bad : {"", "0", "-1", "2x", "1.5", "many"})
    EXPECT_NE(error_of([&] { parse_batch(bad); }).find("positive integer"), std::string::npos) << bad;
  // --batch fills in shapes without a batch of their own and leaves the others.
  const auto s = with_batch(parse_shapes("128x128x128,64x64x64b1024"), 32);
  EXPECT_EQ(s[0].batch, 32);
  EXPECT_EQ(s[1].batch, 1024);
}

TEST(BenchConfig, ParsesTypes) {
  EXPECT_EQ(parse_input_type("f16"), DataType::F16);
  EXPECT_EQ(parse_input_type("BF16"), DataType::BF16);
  for (const char* bad : {"f32", "fp16", "", "bf16,f16"})
    EXPECT_NE(error_of([&] { parse_input_type(bad); }).find("f16 or bf16"), std::string::npos) << bad;
  EXPECT_EQ(parse_output_types("f16"), std::vector<DataType>{DataType::F16});
  EXPECT_EQ(parse_output_types("bf16, F32"), (std::vector<DataType>{DataType::BF16, DataType::F32}));
  EXPECT_EQ(parse_output_types("f32,f16,bf16").size(), 3u);
  EXPECT_NE(error_of([] { parse_output_types("f16,f64"); }).find("'f64'"), std::string::npos);
  EXPECT_NE(error_of([] { parse_output_types("f32,f32"); }).find("twice"), std::string::npos);
  EXPECT_NE(error_of([] { parse_output_types(" , "); }).find("no output type"), std::string::npos);
}

TEST(BenchConfig, LayoutStridesAreMatrixSizes) {
  // op(A) = N: A stored M×K; op(B) = T: B stored N×K; C M×N; every product right after the last.
  const Layout p = layout_of({64, 32, 16, 0, 4}, Op::N, Op::T);
  EXPECT_EQ(std::make_tuple(p.lda, p.ldb, p.ldc), std::make_tuple(16, 16, 32));
  EXPECT_EQ(std::make_tuple(p.stride_a, p.stride_b, p.stride_c), std::make_tuple(64 * 16, 32 * 16, 64 * 32));
  EXPECT_EQ(std::make_tuple(p.a_count, p.b_count, p.c_count), std::make_tuple(4 * 64 * 16, 4 * 32 * 16, 4 * 64 * 32));
  const Layout padded = layout_of({64, 32, 16, 40, 2}, Op::N, Op::N);  // the padding is part of the stride
  EXPECT_EQ(std::make_tuple(padded.stride_a, padded.stride_b, padded.stride_c),
            std::make_tuple(64 * 40, 16 * 40, 64 * 40));
  EXPECT_THROW(layout_of({64, 32, 16, 20, 1}, Op::N, Op::N), std::invalid_argument);  // B and C are 32 wide
  EXPECT_THROW(layout_of({64, 32, 16, 40, 1}, Op::T, Op::N), std::invalid_argument);  // A stored K×M, 64 wide
}

TEST(BenchConfig, ParsesLeadingDimensions) {
  const auto s = parse_shapes("4096x4096x4096:ld4099,7x7x7");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(s[0].ld, 4099);
  EXPECT_EQ(s[1].ld, 0);
  EXPECT_EQ(s[0].str(), "4096x4096x4096:ld4099");
  EXPECT_EQ(parse_shapes(s[0].str())[0].ld, 4099);
}

TEST(BenchConfig, AutoSuiteCoversTheGrid) {
  const auto s = suite_shapes("auto");
  auto has = [&](std::int64_t m, std::int64_t n, std::int64_t k, std::int64_t ld = 0) {
    return std::any_of(s.begin(), s.end(), [&](const Shape& x) { return x.m == m && x.n == n && x.k == k && x.ld == ld; });
  };
  for (std::int64_t d : {256, 4095, 4096, 8191, 16384}) EXPECT_TRUE(has(d, d, d)) << d;
  for (std::int64_t m : {1, 2, 4, 8, 16, 32, 64, 128})
    for (std::int64_t nk : {4096, 8192}) EXPECT_TRUE(has(m, nk, nk)) << m << " " << nk;
  for (const Shape& x : suite_shapes("llm")) EXPECT_TRUE(has(x.m, x.n, x.k)) << x.str();
  EXPECT_TRUE(has(4095, 4097, 4093));
  EXPECT_TRUE(has(4096, 4096, 4096, 4099));
  std::set<std::string> names;
  for (const Shape& x : s) EXPECT_TRUE(names.insert(x.str()).second) << "listed twice: " << x.str();
}

TEST(BenchConfig, BatchedSuiteCarriesItsBatches) {
  const auto s = suite_shapes("batched");
  std::set<std::string> names;
  for (const Shape& x : s) names.insert(x.str());
  for (const char* want : {"64x64x64b1024", "256x256x256b256", "1024x1024x128b32", "512x512x64b512",
                           "4096x4096x512b8", "4096x4096x4096b4"})
    EXPECT_TRUE(names.count(want)) << want;
  for (const Shape& x : s) EXPECT_GT(x.batch, 1) << x.str();
  for (const std::string& other : {"square", "llm", "auto"})
    for (const Shape& x : suite_shapes(other)) EXPECT_EQ(x.batch, 1) << other << " " << x.str();
  // --batch leaves the suite's own batch counts alone.
  for (const Shape& x : with_batch(s, 3)) EXPECT_GT(x.batch, 3) << x.str();
}

TEST(BenchConfig, GroupedSuiteHasItsGroupsAndUnevenSizes) {
  std::set<std::string> names;
  for (const Shape& x : suite_shapes("grouped")) {
    names.insert(x.str());
    const std::vector<std::int64_t> rows = grouped_rows(x.groups, x.m);
    ASSERT_EQ(static_cast<std::int64_t>(rows.size()), x.groups);
    std::int64_t sum = 0, empty = 0;
    for (std::int64_t r : rows) {
      EXPECT_EQ(r % 16, 0) << x.str();
      sum += r, empty += r == 0;
    }
    EXPECT_EQ(sum, x.m) << x.str();
    EXPECT_GE(empty, 1) << x.str();
    EXPECT_NE(*std::min_element(rows.begin(), rows.end()), *std::max_element(rows.begin(), rows.end())) << x.str();
  }
  for (const char* want : {"16384x4096x7168g8", "32768x2048x4096g64", "4096x1536x2048g128", "64x4096x7168g8"})
    EXPECT_TRUE(names.count(want)) << want;
  EXPECT_EQ(grouped_rows(8, 64), (std::vector<std::int64_t>{16, 0, 16, 16, 0, 16, 0, 0}));
  EXPECT_EQ(grouped_rows(1, 48), (std::vector<std::int64_t>{48}));
  EXPECT_THROW(grouped_rows(4, 100), std::invalid_argument);
  for (const Shape& x : with_groups(parse_shapes("4096x4096x4096"), 16)) EXPECT_EQ(x.groups, 16);
  EXPECT_THROW(parse_groups("0"), std::invalid_argument);
  EXPECT_EQ(parse_groups("64"), 64);
}

TEST(BenchConfig, SuitesExist) {
  for (const std::string& name : suite_names()) EXPECT_FALSE(suite_shapes(name).empty()) << name;
  EXPECT_THROW(suite_shapes("huge"), std::invalid_argument);
  const std::vector<std::string> names = suite_names();
  EXPECT_NE(std::find(names.begin(), names.end(), "batched"), names.end());
  bool has_4096 = false;
  for (const Shape& s : suite_shapes("ladder")) has_4096 |= s.m == 4096 && s.n == 4096 && s.k == 4096;
  EXPECT_TRUE(has_4096);
  for (const Shape& s : suite_shapes("ragged")) EXPECT_TRUE(s.m % 8 || s.n % 8 || s.k % 8) << s.str();
}

TEST(BenchConfig, ParsesOpsAndAccumulations) {
  EXPECT_EQ(parse_op("TN"), std::make_pair(Op::T, Op::N));
  EXPECT_EQ(op_string(Op::N, Op::T), "nt");
  EXPECT_THROW(parse_op("nx"), std::invalid_argument);
  EXPECT_EQ(parse_accums("both").size(), 2u);
  EXPECT_EQ(parse_accums("F16"), std::vector<Accum>{Accum::F16});
  EXPECT_THROW(parse_accums("f64"), std::invalid_argument);
  EXPECT_STREQ(baseline_for(Accum::F16), "cublas.acc16");
  EXPECT_STREQ(baseline_for(Accum::F32), "cublas.acc32");
}

const KernelInfo* info_of(const std::string& id) {
  for (const KernelInfo& k : kernels())
    if (k.id == id) return &k;
  return nullptr;
}

TEST(BenchConfig, TimesOnlyKernelsThatTakeTheTypes) {
  std::vector<std::string> selected = select_kernels("auto");
  for (const std::string& id : select_kernels("")) selected.push_back(id);
  const std::vector<std::pair<DataType, DataType>> combos = {
      {DataType::F16, DataType::F16}, {DataType::F16, DataType::F32}, {DataType::BF16, DataType::BF16},
      {DataType::BF16, DataType::F32}, {DataType::F16, DataType::BF16}};
  for (const auto& [in, out] : combos) {
    std::vector<std::string> skipped;
    const auto ids = kernels_to_time(selected, Accum::F32, in, out, &skipped);
    const std::string types = std::string(data_type_name(in)) + " -> " + data_type_name(out);
    ASSERT_GE(ids.size(), 2u) << types;
    EXPECT_EQ(ids.front(), "auto") << "auto always runs: " << types;
    EXPECT_EQ(ids.back(), "cublas.acc32") << "the baseline comes last: " << types;
    std::size_t f32_kernels = 0;
    for (const std::string& id : selected) f32_kernels += id != "auto" && (info_of(id)->accums & kAccF32) ? 1 : 0;
    EXPECT_EQ(ids.size() - 2 + skipped.size(), f32_kernels) << "each kernel timed or noted: " << types;
    for (std::size_t i = 1; i + 1 < ids.size(); ++i) {
      const KernelInfo* k = info_of(ids[i]);
      EXPECT_TRUE((k->in_types & type_bit(in)) && (k->out_types & type_bit(out))) << ids[i] << " " << types;
    }
    for (const std::string& note : skipped) EXPECT_NE(note.find(types), std::string::npos) << note;
  }
  // The f16 ladder takes f16 only: with bf16 it is noted, not timed.
  std::vector<std::string> skipped;
  const auto bf16 = kernels_to_time({"cuda.naive"}, Accum::F32, DataType::BF16, DataType::BF16, &skipped);
  EXPECT_EQ(bf16, std::vector<std::string>{"cublas.acc32"});
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_EQ(skipped[0].rfind("cuda.naive", 0), 0u) << skipped[0];
  // f16 accumulation runs with f16 throughout only, against cublas.acc16.
  EXPECT_EQ(kernels_to_time({"auto"}, Accum::F16, DataType::F16, DataType::F16, nullptr),
            (std::vector<std::string>{"auto", "cublas.acc16"}));
  skipped.clear();
  EXPECT_TRUE(kernels_to_time({"auto"}, Accum::F16, DataType::F16, DataType::F32, &skipped).empty());
  ASSERT_EQ(skipped.size(), 1u);
  EXPECT_NE(skipped[0].find("f16 accumulation"), std::string::npos) << skipped[0];
  EXPECT_FALSE(accum_takes(Accum::F16, DataType::BF16, DataType::BF16));
  EXPECT_TRUE(accum_takes(Accum::F32, DataType::BF16, DataType::F16));
}

TEST(BenchConfig, ErrorToleranceFollowsOutputTypeAndAccumulation) {
  const double eps16 = 1.0 / 1024;
  EXPECT_DOUBLE_EQ(error_tolerance(Accum::F32, DataType::F16, 4096), 2 * eps16);
  EXPECT_DOUBLE_EQ(error_tolerance(Accum::F32, DataType::BF16, 4096), 2.0 / 128);
  EXPECT_DOUBLE_EQ(error_tolerance(Accum::F32, DataType::F32, 512), 1e-5);
  EXPECT_DOUBLE_EQ(error_tolerance(Accum::F32, DataType::F32, 4096), 2e-5);  // grows like sqrt(K) past 1024
  EXPECT_DOUBLE_EQ(error_tolerance(Accum::F16, DataType::F16, 4096), eps16 * (4 + 64));
  EXPECT_LT(error_tolerance(Accum::F32, DataType::F32, 16384), error_tolerance(Accum::F32, DataType::F16, 16384));
  EXPECT_GT(error_tolerance(Accum::F16, DataType::F16, 1), error_tolerance(Accum::F32, DataType::F16, 1));
}

TEST(BenchConfig, GlobMatching) {
  EXPECT_TRUE(glob_match("cuda.*", "cuda.naive"));
  EXPECT_TRUE(glob_match("*dbuf", "cuda.t8x8_f16x8_pack_bcf_dbuf"));
  EXPECT_TRUE(glob_match("cuda.t8x8_f16x?_pack", "cuda.t8x8_f16x4_pack"));
  EXPECT_TRUE(glob_match("cuda.naive", "cuda.naive"));
  EXPECT_FALSE(glob_match("cuda.naive", "cuda.naive2"));
  EXPECT_FALSE(glob_match("*.bcf", "cuda.t8x8_f16x4_bcf_x"));
  EXPECT_TRUE(glob_match("*", ""));
}

TEST(BenchConfig, SelectsKernelsInRegistryOrder) {
  const auto all = select_kernels("");
  ASSERT_FALSE(all.empty());
  EXPECT_EQ(all.front(), "cuda.naive");
  for (const std::string& id : all) EXPECT_EQ(id.rfind("cublas.", 0), std::string::npos) << "baselines are implicit";
  const auto some = select_kernels("*dbuf,cuda.naive");
  EXPECT_EQ(some, (std::vector<std::string>{"cuda.naive", "cuda.t8x8_f16x8_pack_bcf_dbuf"}));
  EXPECT_THROW(select_kernels("cuda.nothing*"), std::invalid_argument);
  EXPECT_EQ(select_kernels("auto"), std::vector<std::string>{"auto"});
  EXPECT_EQ(select_kernels("cuda.naive,auto"), (std::vector<std::string>{"auto", "cuda.naive"}));
}

Row sample_row() {
  Row r;
  r.kernel = "cuda.naive", r.op = "nn", r.accum = "f16", r.m = 4096, r.n = 4096, r.k = 4096;
  r.median_ms = 25.5, r.tflops = 5.39, r.vs_baseline = 0.0072, r.pct_cublas = 0.72, r.max_err = 1e-3;
  r.baseline = "cublas.acc16", r.launches = 20;
  return r;
}

Row typed_row() {
  Row r;
  r.kernel = "auto", r.resolved = "sm90.wgmma_tma_ws_persistent", r.dtype = "bf16", r.out_dtype = "f32";
  r.op = "nt", r.accum = "f32", r.m = 64, r.n = 64, r.k = 64, r.ld = 72, r.batch = 1024;
  r.median_ms = 0.125, r.min_ms = 0.12, r.max_ms = 0.2, r.p10_ms = 0.121, r.p90_ms = 0.15;
  r.tflops = 4.29, r.tbps = 0.5, r.baseline = "cublas.acc32", r.vs_baseline = 1.25, r.pct_cublas = 125;
  r.max_err = 3e-6, r.tolerance = 1e-5, r.input_sets = 6, r.launches = 20, r.sm_clock_mhz = 1980;
  return r;
}

TEST(BenchReport, JsonCarriesHeaderAndRows) {
  Header h;
  h.gpu = "NVIDIA H200", h.driver = "580.159.04", h.cublas = "13.1.0", h.date = "2026-11-30T00:00:00Z";
  h.sm_clock_max_mhz = 1980, h.command = "hgemm-bench --suite batched --dtype bf16";
  h.notes = {"cuda.naive does not take bf16 -> f32: skipped"};
  Row failed = sample_row();
  failed.kernel = "cuda.t8x8_hfma2", failed.error = "unsupported", failed.ok = false;
  const nlohmann::json j = to_json(h, {sample_row(), failed, typed_row()});
  const nlohmann::json& head = j["header"];
  EXPECT_EQ(std::make_tuple(head["gpu"], head["sm_clock_max_mhz"], head["schema"], head["command"]),
            std::make_tuple("NVIDIA H200", 1980, kJsonSchema, h.command));
  EXPECT_EQ(head["notes"].size(), 1u);
  for (const char* key : {"driver", "cuda_runtime", "cublas", "date"}) EXPECT_TRUE(head.contains(key)) << key;
  ASSERT_EQ(j["rows"].size(), 3u);
  for (const char* key : {"kernel", "resolved", "dtype", "out_dtype", "op", "m", "n", "k", "ld", "batch", "groups",
                          "epilogue", "accum", "median_ms", "p10_ms", "p90_ms", "tflops", "tbps", "baseline",
                          "vs_baseline", "pct_cublas", "max_err", "ok", "input_sets", "launches", "sm_clock_mhz"})
    for (const auto& row : j["rows"]) EXPECT_TRUE(row.contains(key)) << key;
  const nlohmann::json& plain = j["rows"][0];  // f16 throughout, one product
  EXPECT_EQ(std::make_tuple(plain["m"], plain["dtype"], plain["out_dtype"], plain["batch"], plain["groups"]),
            std::make_tuple(4096, "f16", "f16", 1, 0));
  EXPECT_EQ(plain["epilogue"], "none");
  EXPECT_DOUBLE_EQ(plain["median_ms"].get<double>(), 25.5);
  EXPECT_EQ(j["rows"][1]["ok"], false);
  EXPECT_EQ(std::make_tuple(j["rows"][2]["out_dtype"], j["rows"][2]["batch"]), std::make_tuple("f32", 1024));
  EXPECT_DOUBLE_EQ(j["rows"][2]["vs_baseline"].get<double>(), 1.25);
  // Round trip through text.
  EXPECT_EQ(nlohmann::json::parse(j.dump()), j);
}

TEST(BenchReport, RowsReadBackFromJson) {
  Row failed = sample_row();
  failed.error = "unsupported", failed.ok = false;
  const nlohmann::json written = to_json(Header{}, {typed_row(), failed});
  const std::vector<Row> rows = rows_from_json(nlohmann::json::parse(written.dump()));
  ASSERT_EQ(rows.size(), 2u);
  EXPECT_EQ(to_json(Header{}, rows)["rows"], written["rows"]) << "every field survives the round trip";
  const Row& r = rows[0];
  EXPECT_EQ(r.dtype + "/" + r.out_dtype + " " + r.resolved, "bf16/f32 sm90.wgmma_tma_ws_persistent");
  EXPECT_EQ(std::make_tuple(r.m, r.n, r.k, r.ld, r.batch, r.groups), std::make_tuple(64, 64, 64, 72, 1024, 0));
  EXPECT_EQ(r.baseline, "cublas.acc32");
  EXPECT_DOUBLE_EQ(r.vs_baseline, 1.25);
  EXPECT_DOUBLE_EQ(r.p90_ms, 0.15);
  EXPECT_FALSE(rows[1].ok);
  EXPECT_EQ(rows[1].error, "unsupported");
}

TEST(BenchReport, OlderFilesReadAsF16SingleProducts) {
  std::ifstream in(std::string(HGEMM_SOURCE_DIR) + "/tests/data/bench_fixture.json");
  ASSERT_TRUE(in) << "tests/data/bench_fixture.json";
  const std::vector<Row> rows = rows_from_json(nlohmann::json::parse(in));
  ASSERT_FALSE(rows.empty());
  const Row& old = rows.front();  // written before types and batches: no dtype, batch, vs_baseline
  EXPECT_EQ(old.kernel, "cuda.naive");
  EXPECT_EQ(old.dtype, "f16");
  EXPECT_EQ(old.out_dtype, "f16");
  EXPECT_EQ(old.batch, 1);
  EXPECT_EQ(old.baseline, "cublas.acc16");
  EXPECT_NEAR(old.vs_baseline, old.pct_cublas / 100, 1e-15);
  EXPECT_GT(old.vs_baseline, 0);
  const auto typed = std::find_if(rows.begin(), rows.end(), [](const Row& r) { return r.dtype == "bf16"; });
  ASSERT_NE(typed, rows.end()) << "the fixture also holds rows with types";
  const auto batched = std::find_if(rows.begin(), rows.end(), [](const Row& r) { return r.batch > 1; });
  ASSERT_NE(batched, rows.end()) << "the fixture also holds batched rows";
  EXPECT_EQ(batched->baseline, "cublas.acc32");
}

TEST(BenchReport, SummaryGivesGeometricMeanAndWorstShape) {
  std::vector<Row> rows;
  auto add = [&](const char* kernel, std::int64_t m, double ratio, const char* out = "f16") {
    Row r = sample_row();
    r.kernel = kernel, r.m = m, r.vs_baseline = ratio, r.pct_cublas = 100 * ratio, r.out_dtype = out;
    rows.push_back(r);
  };
  add("auto", 1, 2), add("auto", 2, 0.5), add("auto", 3, 1), add("cublas.acc16", 1, 1);
  add("auto", 1, 0.9, "f32"), add("auto", 2, 0.4, "f32");
  Row failed = sample_row();
  failed.kernel = "auto", failed.error = "unsupported";
  rows.push_back(failed);
  Row batched = sample_row();
  batched.kernel = "auto", batched.dtype = "bf16", batched.batch = 8, batched.vs_baseline = 1.5;
  rows.push_back(batched);
  const std::vector<Summary> s = summarize(rows);
  ASSERT_EQ(s.size(), 3u);  // one per (kernel, dtype, out_dtype, accum); baselines and failed runs left out
  EXPECT_EQ(s[0].kernel, "auto");
  EXPECT_EQ(s[0].out_dtype, "f16");
  EXPECT_EQ(s[0].shapes, 3);
  EXPECT_NEAR(s[0].geomean_ratio, 1.0, 1e-12);  // (2 · 0.5 · 1)^(1/3)
  EXPECT_NEAR(s[0].worst_ratio, 0.5, 1e-12);
  EXPECT_EQ(s[0].worst_shape, "2x4096x4096 nn");
  EXPECT_EQ(s[1].out_dtype, "f32");
  EXPECT_NEAR(s[1].geomean_ratio, std::sqrt(0.9 * 0.4), 1e-12);
  EXPECT_EQ(s[2].dtype, "bf16");
  EXPECT_EQ(s[2].worst_shape, "4096x4096x4096b8 nn");
  const std::string text = format_summary(s);
  EXPECT_NE(text.find("2x4096x4096 nn"), std::string::npos);
  EXPECT_NE(text.find("f16/f32"), std::string::npos) << text;
  const nlohmann::json j = to_json(Header{}, rows);
  EXPECT_EQ(j["summary"][0]["worst_ratio"], 0.5);
  EXPECT_EQ(j["summary"][1]["out_dtype"], "f32");
}

TEST(BenchReport, CsvHasOneLinePerRowAndQuotes) {
  Row r = sample_row();
  r.error = "bad, \"really\"";
  const std::string csv = to_csv({sample_row(), r});
  EXPECT_EQ(csv.rfind("kernel,resolved,dtype,out_dtype,op,m,n,k,ld,batch,groups,epilogue,accum,median_ms", 0), 0u);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_NE(csv.find("\"bad, \"\"really\"\"\""), std::string::npos) << csv;
}

TEST(BenchReport, TableShowsEveryRowWithTypesAndBatch) {
  Row r = sample_row();
  r.ok = false;
  const std::string t = format_table({sample_row(), r, typed_row()});
  EXPECT_NE(t.find("vs cuBLAS"), std::string::npos);
  EXPECT_NE(t.find("4096x4096x4096 "), std::string::npos);
  EXPECT_NE(t.find("FAIL"), std::string::npos);
  EXPECT_NE(t.find("f16/f16"), std::string::npos);
  EXPECT_NE(t.find("bf16/f32"), std::string::npos);
  EXPECT_NE(t.find("64x64x64b1024:ld72"), std::string::npos) << t;
  EXPECT_NE(t.find("1.250x"), std::string::npos) << t;
}

}  // namespace
}  // namespace hgemm::bench

namespace hgemm::bench {
namespace {

TEST(BenchConfig, ParsesEpilogues) {
  EXPECT_FALSE(parse_epilogue("").enabled());
  EXPECT_EQ(parse_epilogue("none").str(), "none");
  const EpilogueSpec e = parse_epilogue("GELU_tanh,bias,aux");
  EXPECT_EQ(e.bias, BiasAlong::N);
  EXPECT_EQ(e.act, Activation::GELUTanh);
  EXPECT_TRUE(e.aux);
  EXPECT_EQ(e.str(), "bias,gelu_tanh,aux");
  EXPECT_EQ(parse_epilogue("bias_m,silu,scale").str(), "bias_m,silu,scale");
  EXPECT_THROW(parse_epilogue("bias,relu,gelu"), std::invalid_argument);
  EXPECT_THROW(parse_epilogue("bias,bias_m"), std::invalid_argument);
  EXPECT_THROW(parse_epilogue("bias,tanh"), std::invalid_argument);
}

TEST(BenchConfig, NamesTheMatchingCublasLtEpilogue) {
  EXPECT_EQ(cublaslt_epilogue_name(parse_epilogue("bias")), "CUBLASLT_EPILOGUE_BIAS");
  EXPECT_EQ(cublaslt_epilogue_name(parse_epilogue("bias,relu")), "CUBLASLT_EPILOGUE_RELU_BIAS");
  EXPECT_EQ(cublaslt_epilogue_name(parse_epilogue("bias,gelu_tanh")), "CUBLASLT_EPILOGUE_GELU_BIAS");
  EXPECT_EQ(cublaslt_epilogue_name(parse_epilogue("bias,gelu_tanh,aux")), "CUBLASLT_EPILOGUE_GELU_AUX_BIAS");
  for (const char* none : {"bias,gelu", "bias,silu", "bias_m,relu", "bias,relu,scale", "bias,relu,aux"})
    EXPECT_EQ(cublaslt_epilogue_name(parse_epilogue(none)), "") << none;
}

}  // namespace
}  // namespace hgemm::bench
