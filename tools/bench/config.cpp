// SPDX-License-Identifier: Apache-2.0
#include "config.h"

#include <algorithm>
#include <cctype>
#include <cmath>
#include <sstream>
#include <stdexcept>

namespace hgemm::bench {

namespace {

std::vector<std::string> split(const std::string& text, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(text);
  std::string item;
  while (std::getline(ss, item, sep)) {
    item.erase(0, item.find_first_not_of(" \t"));
    item.erase(item.find_last_not_of(" \t") + 1);
    if (!item.empty()) out.push_back(item);
  }
  return out;
}

std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(), [](unsigned char c) { return std::tolower(c); });
  return s;
}

std::int64_t parse_dim(const std::string& text, const std::string& whole) {
  std::size_t used = 0;
  long long v = -1;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (used != text.size() || v < 0)
    throw std::invalid_argument("bad shape '" + whole + "': expected MxNxK[bB][:ldL] with non-negative integers");
  return v;
}

}  // namespace

std::string Shape::str() const {
  return std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) +
         (batch != 1 ? "b" + std::to_string(batch) : "") + (groups > 0 ? "g" + std::to_string(groups) : "") +
         (ld ? ":ld" + std::to_string(ld) : "");
}

Layout layout_of(const Shape& s, Op op_a, Op op_b) {
  Layout o;
  o.a_rows = op_a == Op::N ? s.m : s.k, o.a_cols = op_a == Op::N ? s.k : s.m;
  o.b_rows = op_b == Op::N ? s.k : s.n, o.b_cols = op_b == Op::N ? s.n : s.k;
  o.lda = s.ld ? s.ld : std::max<std::int64_t>(o.a_cols, 1);
  o.ldb = s.ld ? s.ld : std::max<std::int64_t>(o.b_cols, 1);
  o.ldc = s.ld ? s.ld : std::max<std::int64_t>(s.n, 1);
  if (o.lda < o.a_cols || o.ldb < o.b_cols || o.ldc < s.n)
    throw std::invalid_argument("shape " + s.str() + ": ld " + std::to_string(s.ld) + " is smaller than a stored width");
  o.stride_a = o.a_rows * o.lda, o.stride_b = o.b_rows * o.ldb, o.stride_c = s.m * o.ldc;
  o.a_count = o.stride_a * s.batch, o.b_count = o.stride_b * s.batch, o.c_count = o.stride_c * s.batch;
  return o;
}

std::vector<Shape> parse_shapes(const std::string& text) {
  std::vector<Shape> shapes;
  for (const std::string& item : split(text, ',')) {
    std::string dims_text = lower(item);
    std::int64_t ld = 0;
    if (const std::size_t colon = dims_text.find(':'); colon != std::string::npos) {
      const std::string suffix = dims_text.substr(colon + 1);
      if (suffix.rfind("ld", 0) != 0)
        throw std::invalid_argument("bad shape '" + item + "': expected MxNxK:ldL, e.g. 4096x4096x4096:ld4099");
      ld = parse_dim(suffix.substr(2), item);
      if (ld == 0) throw std::invalid_argument("bad shape '" + item + "': the leading dimension must be positive");
      dims_text.resize(colon);
    }
    std::int64_t batch = 1;
    if (const std::size_t b = dims_text.find('b'); b != std::string::npos) {
      batch = parse_dim(dims_text.substr(b + 1), item);
      if (batch == 0) throw std::invalid_argument("bad shape '" + item + "': the batch count must be positive");
      dims_text.resize(b);
    }
    const std::vector<std::string> dims = split(dims_text, 'x');
    if (dims.size() != 3)
      throw std::invalid_argument("bad shape '" + item +
                                  "': expected MxNxK[bB][:ldL], e.g. 4096x4096x4096 or 64x64x64b1024");
    shapes.push_back({parse_dim(dims[0], item), parse_dim(dims[1], item), parse_dim(dims[2], item), ld, batch});
  }
  if (shapes.empty()) throw std::invalid_argument("no shapes given");
  return shapes;
}

std::vector<std::string> suite_names() { return {"square", "llm", "ragged", "ladder", "auto", "batched", "grouped"}; }

std::vector<Shape> suite_shapes(const std::string& name) {
  if (name == "square")
    return {{256, 256, 256}, {512, 512, 512}, {1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096},
            {8192, 8192, 8192}};
  if (name == "llm")  // projection shapes of transformer layers, prefill and decode
    return {{4096, 14336, 4096}, {16384, 4096, 4096}, {8192, 8192, 1024}, {4096, 4096, 128},
            {128, 4096, 4096},   {16, 4096, 4096},    {1, 4096, 4096}};
  if (name == "ragged")  // sizes that are multiples of no tile, odd leading dimensions
    return {{4095, 4097, 4093}, {1001, 999, 1003}, {4093, 127, 129}, {129, 4093, 1000}, {8191, 8191, 8191}};
  if (name == "ladder") return {{1024, 1024, 1024}, {2048, 2048, 2048}, {4096, 4096, 4096}};
  if (name == "auto") {
    std::vector<Shape> s;
    auto add = [&](const Shape& x) {  // each shape once (llm and the skinny grid share some)
      if (std::find_if(s.begin(), s.end(), [&](const Shape& y) { return y.str() == x.str(); }) == s.end())
        s.push_back(x);
    };
    for (std::int64_t d : {256, 512, 1000, 1024, 2047, 2048, 4095, 4096, 8191, 8192, 16384}) add({d, d, d});
    for (const char* other : {"llm", "ragged"})
      for (const Shape& x : suite_shapes(other)) add(x);
    for (std::int64_t nk : {4096, 8192})
      for (std::int64_t m : {1, 2, 4, 8, 16, 32, 64, 128}) add({m, nk, nk});
    add({16, 64, 65536});  // skinny with few columns: auto_suits sends it elsewhere
    add({4096, 4096, 4096, 4099});
    add({2048, 2048, 2048, 2049});
    return s;
  }
  if (name == "batched")  // attention-sized heads (scores and P·V), many small products, and a few large ones
    return {{64, 64, 64, 0, 1024},  {256, 256, 256, 0, 256}, {1024, 1024, 128, 0, 32},
            {512, 512, 64, 0, 512}, {4096, 4096, 512, 0, 8},  {4096, 4096, 4096, 0, 4},
            {1024, 64, 1024, 0, 128}};
  if (name == "grouped")  // MoE layers (groups, rows in all, N, K): prefill, many experts, decode; grouped_rows
    return {{16384, 4096, 7168, 0, 1, 8}, {32768, 2048, 4096, 0, 1, 64}, {4096, 1536, 2048, 0, 1, 128},
            {64, 4096, 7168, 0, 1, 8}};
  throw std::invalid_argument("unknown suite '" + name + "' (square, llm, ragged, ladder, auto, batched, grouped)");
}

std::vector<std::int64_t> grouped_rows(std::int64_t groups, std::int64_t total) {
  if (total % 16 != 0 || total < 0)
    throw std::invalid_argument("a grouped shape's M (" + std::to_string(total) + ") must be a multiple of 16");
  std::vector<std::int64_t> rows(static_cast<std::size_t>(groups), 0);
  auto empty = [&](std::int64_t g) { return (groups > 1 && g == 1) || (groups >= 4 && g == groups - 1); };
  std::int64_t weights = 0;
  for (std::int64_t g = 0; g < groups; ++g) weights += empty(g) ? 0 : 1 + (5 * g + 2) % 7;
  std::int64_t blocks = total / 16, given = 0;
  for (std::int64_t g = 0; g < groups; ++g)
    if (!empty(g)) given += rows[g] = blocks * (1 + (5 * g + 2) % 7) / weights;
  for (std::int64_t g = 0; given < blocks; g = (g + 1) % groups)
    if (!empty(g)) ++rows[g], ++given;
  for (std::int64_t& r : rows) r *= 16;
  return rows;
}

std::int64_t parse_groups(const std::string& text) {
  try {
    return parse_batch(text);  // the same rule: a positive integer
  } catch (const std::invalid_argument&) {
    throw std::invalid_argument("bad groups '" + text + "': expected a positive integer (groups of a grouped shape)");
  }
}

std::vector<Shape> with_groups(std::vector<Shape> shapes, std::int64_t groups) {
  for (Shape& s : shapes)
    if (s.groups == 0) s.groups = groups;
  return shapes;
}

std::pair<Op, Op> parse_op(const std::string& text) {
  const std::string t = lower(text);
  if (t.size() == 2 && (t[0] == 'n' || t[0] == 't') && (t[1] == 'n' || t[1] == 't'))
    return {t[0] == 'n' ? Op::N : Op::T, t[1] == 'n' ? Op::N : Op::T};
  throw std::invalid_argument("bad op '" + text + "': expected nn, nt, tn or tt");
}

std::string op_string(Op a, Op b) { return std::string(a == Op::N ? "n" : "t") + (b == Op::N ? "n" : "t"); }

std::vector<Accum> parse_accums(const std::string& text) {
  const std::string t = lower(text);
  if (t == "f16") return {Accum::F16};
  if (t == "f32") return {Accum::F32};
  if (t == "both") return {Accum::F16, Accum::F32};
  throw std::invalid_argument("bad accumulation '" + text + "': expected f16, f32 or both");
}

const char* accum_string(Accum a) { return a == Accum::F16 ? "f16" : "f32"; }

bool glob_match(const std::string& pattern, const std::string& id) {
  // Iterative wildcard match with backtracking to the last '*'.
  std::size_t p = 0, s = 0, star = std::string::npos, mark = 0;
  while (s < id.size()) {
    if (p < pattern.size() && (pattern[p] == '?' || pattern[p] == id[s])) {
      ++p, ++s;
    } else if (p < pattern.size() && pattern[p] == '*') {
      star = p++, mark = s;
    } else if (star != std::string::npos) {
      p = star + 1, s = ++mark;
    } else {
      return false;
    }
  }
  while (p < pattern.size() && pattern[p] == '*') ++p;
  return p == pattern.size();
}

std::vector<std::string> select_kernels(const std::string& patterns) {
  std::vector<std::string> pats = split(patterns, ',');
  std::vector<std::string> out;
  if (const auto it = std::find(pats.begin(), pats.end(), "auto"); it != pats.end()) {
    out.push_back("auto");
    pats.erase(std::remove(pats.begin(), pats.end(), "auto"), pats.end());
    if (pats.empty()) return out;
  }
  for (const std::string& pat : pats) {
    bool any = false;
    for (const KernelInfo& k : kernels())
      if (glob_match(pat, k.id)) any = true;
    if (!any) throw std::invalid_argument("no kernel matches '" + pat + "' (hgemm-bench --list shows them)");
  }
  for (const KernelInfo& k : kernels()) {
    if (k.baseline && pats.empty()) continue;
    const bool wanted = pats.empty() || std::any_of(pats.begin(), pats.end(),
                                                     [&](const std::string& p) { return glob_match(p, k.id); });
    if (wanted) out.push_back(k.id);
  }
  return out;
}

const char* baseline_for(Accum a) { return a == Accum::F16 ? "cublas.acc16" : "cublas.acc32"; }

std::int64_t parse_batch(const std::string& text) {
  std::size_t used = 0;
  long long v = 0;
  try {
    v = std::stoll(text, &used);
  } catch (const std::exception&) {
    used = 0;
  }
  if (text.empty() || used != text.size() || v < 1)
    throw std::invalid_argument("bad batch '" + text + "': expected a positive integer (products per strided batch)");
  return v;
}

std::vector<Shape> with_batch(std::vector<Shape> shapes, std::int64_t batch) {
  for (Shape& s : shapes)
    if (s.batch == 1) s.batch = batch;
  return shapes;
}

namespace {

std::optional<DataType> type_named(const std::string& text) {
  const std::string t = lower(text);
  if (t == "f16") return DataType::F16;
  if (t == "bf16") return DataType::BF16;
  if (t == "f32") return DataType::F32;
  return std::nullopt;
}

}  // namespace

DataType parse_input_type(const std::string& text) {
  const std::optional<DataType> t = type_named(text);
  if (!t || *t == DataType::F32)
    throw std::invalid_argument("bad input type '" + text + "': A and B are f16 or bf16");
  return *t;
}

std::vector<DataType> parse_output_types(const std::string& text) {
  std::vector<DataType> out;
  for (const std::string& item : split(text, ',')) {
    const std::optional<DataType> t = type_named(item);
    if (!t)
      throw std::invalid_argument("bad output type '" + item + "': expected f16, bf16 or f32 (comma-separated for several)");
    if (std::find(out.begin(), out.end(), *t) != out.end())
      throw std::invalid_argument("output type '" + item + "' given twice");
    out.push_back(*t);
  }
  if (out.empty()) throw std::invalid_argument("no output type given: expected f16, bf16 or f32");
  return out;
}

std::string EpilogueSpec::str() const {
  std::string s;
  auto add = [&](const char* part) { s += (s.empty() ? "" : ",") + std::string(part); };
  if (bias == BiasAlong::N) add("bias");
  if (bias == BiasAlong::M) add("bias_m");
  if (act != Activation::None) add(activation_name(act));
  if (aux) add("aux");
  if (scales) add("scale");
  return s.empty() ? "none" : s;
}

EpilogueSpec parse_epilogue(const std::string& text) {
  EpilogueSpec e;
  if (text.empty() || text == "none") return e;
  for (const std::string& raw : split(text, ',')) {
    std::string part = raw;
    std::transform(part.begin(), part.end(), part.begin(), [](unsigned char c) { return std::tolower(c); });
    const Activation acts[] = {Activation::ReLU, Activation::GELU, Activation::GELUTanh, Activation::SiLU};
    const Activation* act = std::find_if(std::begin(acts), std::end(acts), [&](Activation a) { return part == activation_name(a); });
    if (act != std::end(acts)) {
      if (e.act != Activation::None) throw std::invalid_argument("--epilogue: two activations ('" + text + "')");
      e.act = *act;
    } else if (part == "bias" || part == "bias_m") {
      if (e.bias != BiasAlong::None) throw std::invalid_argument("--epilogue: two biases ('" + text + "')");
      e.bias = part == "bias" ? BiasAlong::N : BiasAlong::M;
    } else if (part == "aux") {
      e.aux = true;
    } else if (part == "scale") {
      e.scales = true;
    } else {
      throw std::invalid_argument("--epilogue: unknown part '" + raw +
                                  "': expected bias, bias_m, relu, gelu, gelu_tanh, silu, aux, scale (comma-separated)");
    }
  }
  return e;
}

std::string cublaslt_epilogue_name(const EpilogueSpec& e) {
  if (e.bias == BiasAlong::M || e.scales) return "";
  const bool bias = e.bias == BiasAlong::N;
  switch (e.act) {
    case Activation::None:
      return e.aux ? "" : bias ? "CUBLASLT_EPILOGUE_BIAS" : "CUBLASLT_EPILOGUE_DEFAULT";
    case Activation::ReLU:  // cuBLASLt's ReLU aux is a bit mask, not Z
      return e.aux ? "" : bias ? "CUBLASLT_EPILOGUE_RELU_BIAS" : "CUBLASLT_EPILOGUE_RELU";
    case Activation::GELUTanh:
      if (e.aux) return bias ? "CUBLASLT_EPILOGUE_GELU_AUX_BIAS" : "CUBLASLT_EPILOGUE_GELU_AUX";
      return bias ? "CUBLASLT_EPILOGUE_GELU_BIAS" : "CUBLASLT_EPILOGUE_GELU";
    default: return "";
  }
}

bool accum_takes(Accum a, DataType in, DataType out) {
  return a == Accum::F32 || (in == DataType::F16 && out == DataType::F16);
}

std::vector<std::string> kernels_to_time(const std::vector<std::string>& selected, Accum a, DataType in,
                                         DataType out, std::vector<std::string>* skipped) {
  const std::string types = std::string(data_type_name(in)) + " -> " + data_type_name(out);
  auto note = [&](const std::string& line) {
    if (skipped) skipped->push_back(line);
  };
  if (!accum_takes(a, in, out)) {
    note(std::string(accum_string(a)) + " accumulation takes f16 A, B, C and D only: skipped for " + types);
    return {};
  }
  std::vector<std::string> ids;
  for (const std::string& id : selected) {
    if (id == "auto") {
      ids.push_back(id);
      continue;
    }
    const auto& all = kernels();
    const auto it = std::find_if(all.begin(), all.end(), [&](const KernelInfo& k) { return k.id == id; });
    if (it == all.end() || it->baseline || !(it->accums & accum_bit(a))) continue;
    if (!(it->in_types & type_bit(in)) || !(it->out_types & type_bit(out))) {
      note(id + " does not take " + types + ": skipped");
      continue;
    }
    ids.push_back(id);
  }
  ids.push_back(baseline_for(a));
  return ids;
}

double error_tolerance(Accum accum, DataType out, std::int64_t k) {
  // The output's rounding (half an ulp, 2^-11 for f16 and 2^-8 for bf16 relative to an element)
  // with a margin of 4, and for f32 the drift between two f32 accumulation orders, a random walk
  // over K. f16 accumulation adds a walk of K roundings to f16: sqrt(K) · 2^-11 of a typical
  // element, with margin.
  const double eps16 = 1.0 / 1024, kk = static_cast<double>(std::max<std::int64_t>(k, 1));
  const double output = out == DataType::F16    ? 2 * eps16
                        : out == DataType::BF16 ? 2.0 / 128
                                                : 1e-5 * std::max(1.0, std::sqrt(kk / 1024));
  return output + (accum == Accum::F16 ? eps16 * (2 + std::sqrt(kk)) : 0.0);
}

}  // namespace hgemm::bench
