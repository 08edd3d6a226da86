#include "report.h"

#include "config.h"

#include <cmath>
#include <cstdio>
#include <map>
#include <sstream>

namespace hgemm::bench {

namespace {

std::string shape_of(const Row& r) { return Shape{r.m, r.n, r.k, r.ld}.str(); }

}  // namespace

std::vector<Summary> summarize(const std::vector<Row>& rows) {
  std::map<std::pair<std::string, std::string>, std::vector<const Row*>> groups;
  std::vector<std::pair<std::string, std::string>> order;
  for (const Row& r : rows) {
    if (r.kernel.rfind("cublas.", 0) == 0 || !r.error.empty() || r.pct_cublas <= 0) continue;
    auto key = std::make_pair(r.kernel, r.accum);
    if (!groups.count(key)) order.push_back(key);
    groups[key].push_back(&r);
  }
  std::vector<Summary> out;
  for (const auto& key : order) {
    Summary s;
    s.kernel = key.first, s.accum = key.second;
    double log_sum = 0;
    s.worst_ratio = INFINITY;
    for (const Row* r : groups[key]) {
      const double ratio = r->pct_cublas / 100;
      log_sum += std::log(ratio);
      if (ratio < s.worst_ratio) s.worst_ratio = ratio, s.worst_shape = shape_of(*r) + " " + r->op;
    }
    s.shapes = static_cast<int>(groups[key].size());
    s.geomean_ratio = std::exp(log_sum / s.shapes);
    out.push_back(s);
  }
  return out;
}

std::string format_summary(const std::vector<Summary>& summaries) {
  std::ostringstream out;
  char line[320];
  std::snprintf(line, sizeof line, "%-40s %-4s %6s %14s %12s  %s\n", "kernel", "acc", "shapes", "geomean ratio",
                "worst ratio", "worst shape");
  out << line;
  for (const Summary& s : summaries) {
    std::snprintf(line, sizeof line, "%-40s %-4s %6d %14.3f %12.3f  %s\n", s.kernel.c_str(), s.accum.c_str(), s.shapes,
                  s.geomean_ratio, s.worst_ratio, s.worst_shape.c_str());
    out << line;
  }
  return out.str();
}

nlohmann::json to_json(const Header& h, const std::vector<Row>& rows) {
  nlohmann::json j;
  j["header"] = {{"gpu", h.gpu},
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
                 {"command", h.command}};
  j["rows"] = nlohmann::json::array();
  for (const Row& r : rows) {
    j["rows"].push_back({{"kernel", r.kernel},
                         {"resolved", r.resolved},
                         {"m", r.m},
                         {"n", r.n},
                         {"k", r.k},
                         {"ld", r.ld},
                         {"op", r.op},
                         {"accum", r.accum},
                         {"median_ms", r.median_ms},
                         {"min_ms", r.min_ms},
                         {"max_ms", r.max_ms},
                         {"p10_ms", r.p10_ms},
                         {"p90_ms", r.p90_ms},
                         {"tflops", r.tflops},
                         {"tbps", r.tbps},
                         {"pct_cublas", r.pct_cublas},
                         {"max_err", r.max_err},
                         {"ok", r.ok},
                         {"launches", r.launches},
                         {"input_sets", r.input_sets},
                         {"sm_clock_mhz", r.sm_clock_mhz},
                         {"error", r.error}});
  }
  j["summary"] = nlohmann::json::array();
  for (const Summary& s : summarize(rows))
    j["summary"].push_back({{"kernel", s.kernel},
                            {"accum", s.accum},
                            {"shapes", s.shapes},
                            {"geomean_ratio", s.geomean_ratio},
                            {"worst_ratio", s.worst_ratio},
                            {"worst_shape", s.worst_shape}});
  return j;
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
  out << "kernel,resolved,m,n,k,ld,op,accum,median_ms,min_ms,max_ms,p10_ms,p90_ms,tflops,tbps,pct_cublas,max_err,ok,"
         "launches,input_sets,sm_clock_mhz,error\n";
  out.precision(9);
  for (const Row& r : rows)
    out << csv_field(r.kernel) << ',' << csv_field(r.resolved) << ',' << r.m << ',' << r.n << ',' << r.k << ','
        << r.ld << ',' << r.op << ',' << r.accum << ',' << r.median_ms << ',' << r.min_ms << ',' << r.max_ms << ','
        << r.p10_ms << ',' << r.p90_ms << ',' << r.tflops << ',' << r.tbps << ',' << r.pct_cublas << ',' << r.max_err << ',' << (r.ok ? 1 : 0) << ',' << r.launches
        << ',' << r.input_sets << ',' << r.sm_clock_mhz << ',' << csv_field(r.error) << '\n';
  return out.str();
}

std::string format_table(const std::vector<Row>& rows) {
  std::ostringstream out;
  char line[320];
  std::snprintf(line, sizeof line, "%-32s %-22s %-3s %-4s %10s %9s %6s %9s %19s %9s  %s\n", "kernel", "shape", "op",
                "acc", "median ms", "TFLOP/s", "TB/s", "% cuBLAS", "p10-p90 ms", "max err", "status");
  out << line;
  for (const Row& r : rows) {
    const std::string shape = shape_of(r);
    const std::string status = !r.ok ? "FAIL (error above tolerance)" : r.resolved.empty() ? "ok" : "ok: " + r.resolved;
    if (!r.error.empty()) {
      std::snprintf(line, sizeof line, "%-32s %-22s %-3s %-4s %10s %9s %6s %9s %19s %9s  %s\n", r.kernel.c_str(),
                    shape.c_str(), r.op.c_str(), r.accum.c_str(), "-", "-", "-", "-", "-", "-", r.error.c_str());
    } else {
      char spread[40];
      std::snprintf(spread, sizeof spread, "%.4f-%.4f", r.p10_ms, r.p90_ms);
      std::snprintf(line, sizeof line, "%-32s %-22s %-3s %-4s %10.4f %9.2f %6.2f %8.1f%% %19s %9.2e  %s\n",
                    r.kernel.c_str(), shape.c_str(), r.op.c_str(), r.accum.c_str(), r.median_ms, r.tflops, r.tbps,
                    r.pct_cublas, spread, r.max_err, status.c_str());
    }
    out << line;
  }
  return out.str();
}

}  // namespace hgemm::bench
