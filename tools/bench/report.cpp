// SPDX-License-Identifier: Apache-2.0
#include "report.h"

#include "config.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>
#include <tuple>

namespace hgemm::bench {

std::string shape_string(const Row& r) { return Shape{r.m, r.n, r.k, r.ld, r.batch, r.groups}.str(); }

std::vector<Summary> summarize(const std::vector<Row>& rows) {
  using Key = std::tuple<std::string, std::string, std::string, std::string>;
  std::map<Key, std::vector<const Row*>> groups;
  std::vector<Key> order;
  for (const Row& r : rows) {
    if (r.kernel == r.baseline || r.kernel.rfind("cublas.", 0) == 0 || !r.error.empty() || r.vs_baseline <= 0)
      continue;
    Key key{r.kernel, r.dtype, r.out_dtype, r.accum};
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(&r);
  }
  std::vector<Summary> out;
  for (const Key& key : order) {
    Summary s;
    std::tie(s.kernel, s.dtype, s.out_dtype, s.accum) = key;
    double log_sum = 0;
    s.worst_ratio = INFINITY;
    for (const Row* r : groups[key]) {
      log_sum += std::log(r->vs_baseline);
      if (r->vs_baseline < s.worst_ratio) s.worst_ratio = r->vs_baseline, s.worst_shape = shape_string(*r) + " " + r->op;
    }
    s.shapes = static_cast<int>(groups[key].size());
    s.geomean_ratio = std::exp(log_sum / s.shapes);
    out.push_back(s);
  }
  return out;
}

std::string format_summary(const std::vector<Summary>& summaries) {
  std::ostringstream out;
  char line[400];
  std::snprintf(line, sizeof line, "%-40s %-10s %-4s %6s %14s %12s  %s\n", "kernel", "types", "acc", "shapes",
                "geomean ratio", "worst ratio", "worst shape");
  out << line;
  for (const Summary& s : summaries) {
    const std::string types = s.dtype + "/" + s.out_dtype;
    std::snprintf(line, sizeof line, "%-40s %-10s %-4s %6d %14.3f %12.3f  %s\n", s.kernel.c_str(), types.c_str(),
                  s.accum.c_str(), s.shapes, s.geomean_ratio, s.worst_ratio, s.worst_shape.c_str());
    out << line;
  }
  return out.str();
}

nlohmann::json to_json(const Header& h, const std::vector<Row>& rows) {
  nlohmann::json j;
  j["header"] = {{"schema", kJsonSchema},
                 {"gpu", h.gpu},
                 {"compute_capability", h.compute_capability},
                 {"sm_count", h.sm_count},
                 {"l2_bytes", h.l2_bytes},
                 {"sm_clock_max_mhz", h.sm_clock_max_mhz},
                 {"driver", h.driver},
                 {"cuda_runtime", h.cuda_runtime},
                 {"cublas", h.cublas},
                 {"date", h.date},
                 {"warmup", h.warmup},
                 {"iters", h.iters},
                 {"command", h.command},
                 {"notes", h.notes}};
  j["rows"] = nlohmann::json::array();
  for (const Row& r : rows) {
    j["rows"].push_back({{"kernel", r.kernel},
                         {"resolved", r.resolved},
                         {"dtype", r.dtype},
                         {"out_dtype", r.out_dtype},
                         {"op", r.op},
                         {"m", r.m},
                         {"n", r.n},
                         {"k", r.k},
                         {"ld", r.ld},
                         {"batch", r.batch},
                         {"groups", r.groups},
                         {"epilogue", r.epilogue},
                         {"accum", r.accum},
                         {"median_ms", r.median_ms},
                         {"min_ms", r.min_ms},
                         {"max_ms", r.max_ms},
                         {"p10_ms", r.p10_ms},
                         {"p90_ms", r.p90_ms},
                         {"tflops", r.tflops},
                         {"tbps", r.tbps},
                         {"baseline", r.baseline},
                         {"vs_baseline", r.vs_baseline},
                         {"pct_cublas", r.pct_cublas},
                         {"max_err", r.max_err},
                         {"tolerance", r.tolerance},
                         {"ok", r.ok},
                         {"input_sets", r.input_sets},
                         {"launches", r.launches},
                         {"sm_clock_mhz", r.sm_clock_mhz},
                         {"error", r.error}});
  }
  j["summary"] = nlohmann::json::array();
  for (const Summary& s : summarize(rows))
    j["summary"].push_back({{"kernel", s.kernel},
                            {"dtype", s.dtype},
                            {"out_dtype", s.out_dtype},
                            {"accum", s.accum},
                            {"shapes", s.shapes},
                            {"geomean_ratio", s.geomean_ratio},
                            {"worst_ratio", s.worst_ratio},
                            {"worst_shape", s.worst_shape}});
  return j;
}

std::vector<Row> rows_from_json(const nlohmann::json& j) {
  std::vector<Row> rows;
  for (const nlohmann::json& x : j.at("rows")) {
    Row r;
    r.kernel = x.at("kernel").get<std::string>();
    r.resolved = x.value("resolved", "");
    r.dtype = x.value("dtype", "f16"), r.out_dtype = x.value("out_dtype", "f16");
    r.op = x.value("op", "nn"), r.accum = x.value("accum", "f32"), r.epilogue = x.value("epilogue", "none");
    r.m = x.at("m").get<std::int64_t>(), r.n = x.at("n").get<std::int64_t>(), r.k = x.at("k").get<std::int64_t>();
    r.ld = x.value("ld", std::int64_t(0)), r.batch = x.value("batch", std::int64_t(1));
    r.groups = x.value("groups", std::int64_t(0));
    r.median_ms = x.value("median_ms", 0.0), r.min_ms = x.value("min_ms", 0.0), r.max_ms = x.value("max_ms", 0.0);
    r.p10_ms = x.value("p10_ms", 0.0), r.p90_ms = x.value("p90_ms", 0.0);
    r.tflops = x.value("tflops", 0.0), r.tbps = x.value("tbps", 0.0);
    r.pct_cublas = x.value("pct_cublas", 0.0);
    // Older files: the baseline was cuBLAS with the row's accumulation, given only as a percentage.
    r.baseline = x.value("baseline", std::string(baseline_for(r.accum == "f16" ? Accum::F16 : Accum::F32)));
    r.vs_baseline = x.value("vs_baseline", r.pct_cublas / 100);
    r.max_err = x.value("max_err", 0.0), r.tolerance = x.value("tolerance", 0.0);
    r.ok = x.value("ok", true);
    r.input_sets = x.value("input_sets", 0), r.launches = x.value("launches", 0);
    r.sm_clock_mhz = x.value("sm_clock_mhz", 0);
    r.error = x.value("error", "");
    rows.push_back(r);
  }
  return rows;
}

namespace {

std::string csv_field(const std::string& s) {
  if (s.find_first_of(",\"\n") == std::string::npos) return s;
  std::string out = "\"";
  for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
  return out + "\"";
}

}  // namespace

std::string to_csv(const std::vector<Row>& rows) {
  std::ostringstream out;
  out << "kernel,resolved,dtype,out_dtype,op,m,n,k,ld,batch,groups,epilogue,accum,median_ms,min_ms,max_ms,p10_ms,"
         "p90_ms,tflops,tbps,baseline,vs_baseline,pct_cublas,max_err,tolerance,ok,input_sets,launches,sm_clock_mhz,"
         "error\n";
  out.precision(9);
  for (const Row& r : rows)
    out << csv_field(r.kernel) << ',' << csv_field(r.resolved) << ',' << r.dtype << ',' << r.out_dtype << ',' << r.op
        << ',' << r.m << ',' << r.n << ',' << r.k << ',' << r.ld << ',' << r.batch << ',' << r.groups << ','
        << csv_field(r.epilogue) << ',' << r.accum << ',' << r.median_ms << ',' << r.min_ms << ',' << r.max_ms << ','
        << r.p10_ms << ',' << r.p90_ms << ',' << r.tflops << ',' << r.tbps << ',' << csv_field(r.baseline) << ','
        << r.vs_baseline << ',' << r.pct_cublas << ',' << r.max_err << ',' << r.tolerance << ',' << (r.ok ? 1 : 0)
        << ',' << r.input_sets << ',' << r.launches << ',' << r.sm_clock_mhz << ',' << csv_field(r.error) << '\n';
  return out.str();
}

std::string format_table(const std::vector<Row>& rows) {
  std::ostringstream out;
  char line[400];
  const char* fmt_head = "%-32s %-24s %-3s %-9s %-4s %10s %9s %6s %9s %19s %9s  %s\n";
  std::snprintf(line, sizeof line, fmt_head, "kernel", "shape", "op", "types", "acc", "median ms", "TFLOP/s", "TB/s",
                "vs cuBLAS", "p10-p90 ms", "max err", "status");
  out << line;
  for (const Row& r : rows) {
    const std::string shape = shape_string(r), types = r.dtype + "/" + r.out_dtype;
    const std::string status = !r.ok ? "FAIL (error above tolerance)" : r.resolved.empty() ? "ok" : "ok: " + r.resolved;
    if (!r.error.empty()) {
      std::snprintf(line, sizeof line, fmt_head, r.kernel.c_str(), shape.c_str(), r.op.c_str(), types.c_str(),
                    r.accum.c_str(), "-", "-", "-", "-", "-", "-", r.error.c_str());
    } else {
      char spread[40];
      std::snprintf(spread, sizeof spread, "%.4f-%.4f", r.p10_ms, r.p90_ms);
      std::snprintf(line, sizeof line, "%-32s %-24s %-3s %-9s %-4s %10.4f %9.2f %6.2f %8.3fx %19s %9.2e  %s\n",
                    r.kernel.c_str(), shape.c_str(), r.op.c_str(), types.c_str(), r.accum.c_str(), r.median_ms,
                    r.tflops, r.tbps, r.vs_baseline, spread, r.max_err, status.c_str());
    }
    out << line;
  }
  return out.str();
}

}  // namespace hgemm::bench
