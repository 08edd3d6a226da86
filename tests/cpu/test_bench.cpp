// The host-side pieces of hgemm-bench: argument parsing, suites, kernel selection, reports.
#include <gtest/gtest.h>

#include <algorithm>
#include <set>
#include <stdexcept>

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

TEST(BenchConfig, SuitesExist) {
  for (const std::string& name : suite_names()) EXPECT_FALSE(suite_shapes(name).empty()) << name;
  EXPECT_THROW(suite_shapes("huge"), std::invalid_argument);
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
  r.median_ms = 25.5, r.tflops = 5.39, r.pct_cublas = 0.72, r.max_err = 1e-3, r.launches = 20;
  return r;
}

TEST(BenchReport, JsonCarriesHeaderAndRows) {
  Header h;
  h.gpu = "NVIDIA H200", h.driver = "580.159.04", h.cublas = "13.1.0", h.date = "2026-11-30T00:00:00Z";
  h.sm_clock_max_mhz = 1980;
  Row failed = sample_row();
  failed.kernel = "cuda.t8x8_hfma2", failed.error = "unsupported", failed.ok = false;
  const nlohmann::json j = to_json(h, {sample_row(), failed});
  EXPECT_EQ(j["header"]["gpu"], "NVIDIA H200");
  EXPECT_EQ(j["header"]["sm_clock_max_mhz"], 1980);
  ASSERT_EQ(j["rows"].size(), 2u);
  for (const char* key : {"kernel", "m", "n", "k", "op", "accum", "median_ms", "tflops", "pct_cublas", "max_err"})
    EXPECT_TRUE(j["rows"][0].contains(key)) << key;
  EXPECT_EQ(j["rows"][0]["m"], 4096);
  EXPECT_DOUBLE_EQ(j["rows"][0]["median_ms"].get<double>(), 25.5);
  EXPECT_EQ(j["rows"][1]["ok"], false);
  // Round trip through text.
  EXPECT_EQ(nlohmann::json::parse(j.dump()), j);
}

TEST(BenchReport, SummaryGivesGeometricMeanAndWorstShape) {
  std::vector<Row> rows;
  auto add = [&](const char* kernel, std::int64_t m, double pct) {
    Row r = sample_row();
    r.kernel = kernel, r.m = m, r.pct_cublas = pct;
    rows.push_back(r);
  };
  add("auto", 1, 200), add("auto", 2, 50), add("auto", 3, 100), add("cublas.acc16", 1, 100);
  Row failed = sample_row();
  failed.kernel = "auto", failed.error = "unsupported";
  rows.push_back(failed);
  const std::vector<Summary> s = summarize(rows);
  ASSERT_EQ(s.size(), 1u);  // baselines and failed runs are left out
  EXPECT_EQ(s[0].kernel, "auto");
  EXPECT_EQ(s[0].shapes, 3);
  EXPECT_NEAR(s[0].geomean_ratio, 1.0, 1e-12);  // (2 · 0.5 · 1)^(1/3)
  EXPECT_NEAR(s[0].worst_ratio, 0.5, 1e-12);
  EXPECT_EQ(s[0].worst_shape, "2x4096x4096 nn");
  EXPECT_NE(format_summary(s).find("2x4096x4096 nn"), std::string::npos);
  EXPECT_EQ(to_json(Header{}, rows)["summary"][0]["worst_ratio"], 0.5);
}

TEST(BenchReport, CsvHasOneLinePerRowAndQuotes) {
  Row r = sample_row();
  r.error = "bad, \"really\"";
  const std::string csv = to_csv({sample_row(), r});
  EXPECT_EQ(csv.rfind("kernel,resolved,m,n,k,ld,op,accum,median_ms", 0), 0u);
  EXPECT_EQ(std::count(csv.begin(), csv.end(), '\n'), 3);
  EXPECT_NE(csv.find("\"bad, \"\"really\"\"\""), std::string::npos) << csv;
}

TEST(BenchReport, TableShowsEveryRow) {
  Row r = sample_row();
  r.ok = false;
  const std::string t = format_table({sample_row(), r});
  EXPECT_NE(t.find("% cuBLAS"), std::string::npos);
  EXPECT_NE(t.find("4096x4096x4096"), std::string::npos);
  EXPECT_NE(t.find("FAIL"), std::string::npos);
}

}  // namespace
}  // namespace hgemm::bench
