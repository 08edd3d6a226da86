#include "report.h"

#include <cstdio>
#include <sstream>

namespace hgemm::bench {

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
                         {"m", r.m},
                         {"n", r.n},
                         {"k", r.k},
                         {"op", r.op},
                         {"accum", r.accum},
                         {"median_ms", r.median_ms},
                         {"min_ms", r.min_ms},
                         {"max_ms", r.max_ms},
                         {"p10_ms", r.p10_ms},
                         {"p90_ms", r.p90_ms},
                         {"tflops", r.tflops},
                         {"pct_cublas", r.pct_cublas},
                         {"max_err", r.max_err},
                         {"ok", r.ok},
                         {"launches", r.launches},
                         {"input_sets", r.input_sets},
                         {"sm_clock_mhz", r.sm_clock_mhz},
                         {"error", r.error}});
  }
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
  out << "kernel,m,n,k,op,accum,median_ms,min_ms,max_ms,p10_ms,p90_ms,tflops,pct_cublas,max_err,ok,launches,"
         "input_sets,sm_clock_mhz,error\n";
  out.precision(9);
  for (const Row& r : rows)
    out << csv_field(r.kernel) << ',' << r.m << ',' << r.n << ',' << r.k << ',' << r.op << ',' << r.accum << ','
        << r.median_ms << ',' << r.min_ms << ',' << r.max_ms << ',' << r.p10_ms << ',' << r.p90_ms << ','
        << r.tflops << ',' << r.pct_cublas << ',' << r.max_err << ',' << (r.ok ? 1 : 0) << ',' << r.launches
        << ',' << r.input_sets << ',' << r.sm_clock_mhz << ',' << csv_field(r.error) << '\n';
  return out.str();
}

std::string format_table(const std::vector<Row>& rows) {
  std::ostringstream out;
  char line[320];
  std::snprintf(line, sizeof line, "%-32s %-17s %-3s %-4s %10s %9s %9s %19s %9s  %s\n", "kernel", "shape", "op",
                "acc", "median ms", "TFLOP/s", "% cuBLAS", "p10-p90 ms", "max err", "status");
  out << line;
  for (const Row& r : rows) {
    const std::string shape = std::to_string(r.m) + "x" + std::to_string(r.n) + "x" + std::to_string(r.k);
    if (!r.error.empty()) {
      std::snprintf(line, sizeof line, "%-32s %-17s %-3s %-4s %10s %9s %9s %19s %9s  %s\n", r.kernel.c_str(),
                    shape.c_str(), r.op.c_str(), r.accum.c_str(), "-", "-", "-", "-", "-", r.error.c_str());
    } else {
      char spread[40];
      std::snprintf(spread, sizeof spread, "%.4f-%.4f", r.p10_ms, r.p90_ms);
      std::snprintf(line, sizeof line, "%-32s %-17s %-3s %-4s %10.4f %9.2f %8.1f%% %19s %9.2e  %s\n",
                    r.kernel.c_str(), shape.c_str(), r.op.c_str(), r.accum.c_str(), r.median_ms, r.tflops,
                    r.pct_cublas, spread, r.max_err, r.ok ? "ok" : "FAIL (error above tolerance)");
    }
    out << line;
  }
  return out.str();
}

}  // namespace hgemm::bench
