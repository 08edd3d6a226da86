// SPDX-License-Identifier: Apache-2.0
#include "runner.h"

#include <cuda_runtime_api.h>

#include <algorithm>
#include <map>
#include <memory>
#include <stdexcept>
#include <string_view>
#include <utility>

#include "common/convert.h"
#include "common/fused_epilogue.h"
#include "cublaslt_epilogue.h"
#include "device_data.h"
#include "device_info.h"
#include "spin.cuh"

namespace hgemm::bench {

namespace {

double percentile(const std::vector<float>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * (sorted.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
}

// Each launch takes the next of the returned number of input sets, so that between two launches
// on one set the others cover twice the L2 and no launch finds its inputs cached (up to 32 sets:
// problems smaller than 1/16 of the L2 are partly cached still), as far as half the free memory goes.
int input_set_count(std::size_t set_bytes, std::size_t l2_bytes) {
  std::size_t free_b = 0, total_b = 0;
  check_cuda(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
  const std::size_t bytes = std::max<std::size_t>(set_bytes, 1);
  const int sets = static_cast<int>(std::min<std::size_t>(32, 1 + (2 * l2_bytes + bytes - 1) / bytes));
  return std::max(1, std::min<int>(sets, static_cast<int>(std::min<std::size_t>(free_b / 2 / bytes, 32))));
}

using Plan = std::map<std::pair<DataType, Accum>, std::vector<std::string>>;

// What each (output type, accumulation) times; the kernels left out for their types go to notes.
Plan plan_runs(const RunOptions& opt, void (*progress)(const std::string&), std::vector<std::string>* notes) {
  Plan plan;
  for (DataType out : opt.out_types)
    for (Accum accum : opt.accums) {
      std::vector<std::string> skipped;
      plan[{out, accum}] = kernels_to_time(opt.kernels, accum, opt.in_type, out, &skipped);
      for (const std::string& s : skipped) {
        if (progress) progress("note: " + s);
        if (notes) notes->push_back(s);
      }
    }
  return plan;
}

constexpr const char* kUnfused = "+unfused";
constexpr const char* kPlain = "+plain";

bool ends_with(const std::string& id, const char* suffix) {
  const std::size_t n = std::string(suffix).size();
  return id.size() > n && id.compare(id.size() - n, n, suffix) == 0;
}
std::string without_suffix(const std::string& id, const char* suffix) {
  return id.substr(0, id.size() - std::string(suffix).size());
}

// With an epilogue: each kernel fused, plain (the product alone: what the epilogue costs) and
// unfused, then the baseline (cuBLASLt with the same epilogue, or the first kernel unfused) last.
std::vector<std::string> with_epilogue_runs(const std::vector<std::string>& ids, const EpilogueSpec& e, Accum accum) {
  if (ids.empty()) return ids;
  std::vector<std::string> out;
  for (std::size_t i = 0; i + 1 < ids.size(); ++i)
    out.push_back(ids[i]), out.push_back(ids[i] + kPlain), out.push_back(ids[i] + kUnfused);
  const std::string lt = cublaslt_epilogue_name(e);
  if (!lt.empty() && accum == Accum::F32) {
    out.push_back("cublaslt:" + lt);
  } else if (!out.empty()) {  // the first kernel's unfused run is the baseline: move it last
    const std::string base = out[2];
    out.erase(out.begin() + 2);
    out.push_back(base);
  }
  return out;
}

}  // namespace

std::vector<Row> run_benchmark(const RunOptions& opt, void (*progress)(const std::string&),
                               std::vector<std::string>* notes) {
  int dev = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  const std::string op = op_string(opt.op_a, opt.op_b);
  const Plan plan = plan_runs(opt, progress, notes);
  const std::size_t in_size = data_type_size(opt.in_type);
  std::size_t out_size = 0;
  for (DataType t : opt.out_types) out_size = std::max<std::size_t>(out_size, data_type_size(t));
  std::vector<Row> rows;

  for (const Shape& shape : opt.shapes) {
    const Layout lay = layout_of(shape, opt.op_a, opt.op_b);
    const std::size_t a_n = lay.a_count, b_n = lay.b_count, c_n = lay.c_count;  // every product of the batch
    const int sets = input_set_count(in_size * (a_n + b_n) + out_size * c_n, prop.l2CacheSize);
    std::vector<std::unique_ptr<DeviceBuffer>> as, bs, ds;
    for (int s = 0; s < sets; ++s) {
      as.push_back(std::make_unique<DeviceBuffer>(a_n * in_size));
      bs.push_back(std::make_unique<DeviceBuffer>(b_n * in_size));
      ds.push_back(std::make_unique<DeviceBuffer>(c_n * out_size));
      fill_random(as.back()->ptr, opt.in_type, a_n, opt.seed * 1000 + 3 * s);
      fill_random(bs.back()->ptr, opt.in_type, b_n, opt.seed * 1000 + 3 * s + 1);
    }
    DeviceBuffer ref(c_n * sizeof(float)), check(c_n * out_size);
    // The epilogue's vectors (bias in D's type: the largest is f32) and an aux per input set.
    const bool epi = opt.epilogue.enabled();
    const std::size_t vec_n = static_cast<std::size_t>(std::max(shape.m, shape.n) * shape.batch);
    DeviceBuffer bias(vec_n * 4), row_scale(vec_n * 4), col_scale(vec_n * 4);
    std::vector<std::unique_ptr<DeviceBuffer>> auxes;
    if (epi) {
      fill_random(row_scale.ptr, DataType::F32, vec_n, opt.seed * 1000 + 997);
      fill_random(col_scale.ptr, DataType::F32, vec_n, opt.seed * 1000 + 998);
      for (int s = 0; s < sets && opt.epilogue.aux; ++s) auxes.push_back(std::make_unique<DeviceBuffer>(c_n * out_size));
    }

    // C is D (beta = 0 never reads it: the NaN poison of the checked run would show if it did).
    auto args_for = [&](int set, void* d, DataType d_type) {
      MatmulArgs a;
      a.op_a = opt.op_a, a.op_b = opt.op_b, a.m = shape.m, a.n = shape.n, a.k = shape.k, a.alpha = 1.f, a.beta = 0.f;
      a.a = as[set]->ptr, a.lda = lay.lda, a.a_type = opt.in_type;
      a.b = bs[set]->ptr, a.ldb = lay.ldb, a.b_type = opt.in_type;
      a.c = d, a.ldc = lay.ldc, a.c_type = d_type;
      a.d = d, a.ldd = lay.ldc, a.d_type = d_type;
      a.batch = shape.batch, a.stride_a = lay.stride_a, a.stride_b = lay.stride_b;
      a.stride_c = a.stride_d = lay.stride_c;
      if (epi) {
        Epilogue& e = a.epilogue;
        e.bias_along = opt.epilogue.bias, e.bias = bias.ptr, e.bias_type = d_type;
        e.stride_bias = opt.epilogue.bias == BiasAlong::M ? shape.m : shape.n;
        e.activation = opt.epilogue.act;
        e.aux_output = opt.epilogue.aux && !auxes.empty();
        e.aux = e.aux_output ? auxes[set]->ptr : nullptr, e.aux_type = d_type, e.ldaux = lay.ldc, e.stride_aux = lay.stride_c;
        e.scale_rows = e.scale_cols = opt.epilogue.scales;
        e.row_scale = static_cast<const float*>(row_scale.ptr), e.col_scale = static_cast<const float*>(col_scale.ptr);
        e.stride_row_scale = shape.m, e.stride_col_scale = shape.n;
      }
      return a;
    };
    // One launch of a timed entry: fused (matmul with the epilogue), unfused (the plain product,
    // then the elementwise pass over D) or cuBLASLt.
    auto launch_entry = [&](const std::string& id, const MatmulArgs& args, Accum accum) -> std::string {
      if (id.rfind("cublaslt:", 0) == 0) {
        std::string error;
        return cublaslt_matmul(args, opt.epilogue, &error) ? std::string() : error;
      }
      MatmulOptions o;
      o.accum = accum;
      const bool plain_only = ends_with(id, kPlain), unfused = ends_with(id, kUnfused);
      if (!plain_only && !unfused) {
        o.kernel = id;
        const Status s = matmul(args, o);
        return s == Status::Success ? std::string() : std::string(status_string(s)) + ": " + last_error_message();
      }
      const std::string base = without_suffix(id, plain_only ? kPlain : kUnfused);  // o.kernel points into it
      o.kernel = base;
      MatmulArgs plain = args;
      plain.epilogue = Epilogue{};
      if (const Status s = matmul(plain, o); s != Status::Success)
        return std::string(status_string(s)) + ": " + last_error_message();
      if (plain_only) return std::string();
      const detail::TypedMatrices d{args.d, args.d_type, args.ldd, args.stride_d};
      std::string message;
      if (detail::finish_matrices(d, 1.f, d, detail::fused_epilogue(args.epilogue), args.m, args.n, args.batch,
                                  nullptr, &message) != Status::Success)
        return "epilogue pass: " + message;
      return std::string();
    };
    auto options_for = [](std::string_view id, Accum accum) {
      MatmulOptions o;
      o.accum = accum, o.kernel = id;
      return o;
    };

    // The reference: cuBLAS with f32 accumulation and an f32 output, on input set 0.
    MatmulArgs plain_ref = args_for(0, ref.ptr, DataType::F32);
    plain_ref.epilogue = Epilogue{};  // the epilogue is added per output type below
    if (Status s = matmul(plain_ref, options_for("cublas.acc32", Accum::F32)); s != Status::Success)
      throw std::runtime_error("the reference (cublas.acc32, f32 output) failed on " + shape.str() + ": " +
                               last_error_message());

    for (DataType out : opt.out_types)
      for (Accum accum : opt.accums) {
        const std::vector<std::string> ids =  // the baseline last
            epi ? with_epilogue_runs(plan.at({out, accum}), opt.epilogue, accum) : plan.at({out, accum});
        // The reference of this output type: the f32 product, then the epilogue in f32 (with
        // the vectors in this D's type; aux is checked by the tests, not here).
        DeviceBuffer epi_ref(epi ? c_n * sizeof(float) : 1);
        const void* want = ref.ptr;
        if (epi) {
          fill_random(bias.ptr, out, vec_n, opt.seed * 1000 + 999);
          MatmulArgs r = args_for(0, nullptr, out);
          r.epilogue.aux_output = false;
          const detail::TypedMatrices src{ref.ptr, DataType::F32, lay.ldc, lay.stride_c};
          const detail::TypedMatrices dst{epi_ref.ptr, DataType::F32, lay.ldc, lay.stride_c};
          std::string message;
          if (detail::finish_matrices(src, 1.f, dst, detail::fused_epilogue(r.epilogue), shape.m, shape.n, shape.batch,
                                      nullptr, &message) != Status::Success)
            throw std::runtime_error("the epilogue's reference failed: " + message);
          want = epi_ref.ptr;
        }
        if (ids.empty()) continue;
        std::vector<Row> shape_rows;
        std::vector<std::string> timed;
        for (const std::string& id : ids) {
          Row r;
          r.kernel = id, r.dtype = data_type_name(opt.in_type), r.out_dtype = data_type_name(out), r.op = op;
          r.accum = accum_string(accum), r.m = shape.m, r.n = shape.n, r.k = shape.k, r.ld = shape.ld;
          r.batch = shape.batch, r.baseline = ids.back(), r.input_sets = sets;
          r.epilogue = opt.epilogue.str();
          r.tolerance = error_tolerance(accum, out, shape.k);
          const MatmulArgs args = args_for(0, check.ptr, out);
          if (id == "auto") resolve_matmul(args, options_for(id, accum), &r.resolved);
          poison(check.ptr, c_n * data_type_size(out));
          if (const std::string error = launch_entry(id, args, accum); !error.empty()) {
            r.ok = false;
            r.error = error;
          } else {
            const void* expected = ends_with(id, kPlain) ? ref.ptr : want;  // a plain row: the product alone
            r.max_err = relative_max_error(check.ptr, out, static_cast<const float*>(expected), c_n, shape.n, lay.ldc);
            r.ok = r.max_err <= r.tolerance;
            timed.push_back(id);
          }
          shape_rows.push_back(r);
        }

        // Interleaved timing: every round launches each kernel once, in a rotating order, each
        // launch on the next input set; all kernels get the same number of launches. Separate
        // input sets keep a kernel from finding the previous kernel's B in L2.
        const int nk = static_cast<int>(timed.size());
        int launch = 0;  // launches so far: each takes the next input set
        std::vector<std::string> timing_errors(nk);  // a call refused while timed (it passed the check)
        const std::vector<std::vector<float>> times = time_interleaved(nk, opt.warmup, opt.iters, [&](int i) {
          const int set = launch++ % sets;
          const std::string error = launch_entry(timed[i], args_for(set, ds[set]->ptr, out), accum);
          if (!error.empty() && timing_errors[i].empty()) timing_errors[i] = error + " (while timed)";
        });
        const int clock = current_sm_clock_mhz();
        // Every product of the batch counts: its FLOPs, and A, B and D each moved once.
        const double b = static_cast<double>(shape.batch);
        const double flops = 2.0 * shape.m * shape.n * shape.k * b;
        const double bytes =
            b * (in_size * double(shape.m * shape.k + shape.k * shape.n) + data_type_size(out) * double(shape.m * shape.n));
        for (int i = 0; i < nk; ++i) {
          std::vector<float> ms = times[i];
          std::sort(ms.begin(), ms.end());
          Row& row = *std::find_if(shape_rows.begin(), shape_rows.end(), [&](const Row& x) { return x.kernel == timed[i]; });
          row.median_ms = percentile(ms, 0.5), row.min_ms = ms.front(), row.max_ms = ms.back();
          row.p10_ms = percentile(ms, 0.1), row.p90_ms = percentile(ms, 0.9);
          row.tflops = row.median_ms > 0 ? flops / (row.median_ms * 1e-3) / 1e12 : 0;
          row.tbps = row.median_ms > 0 ? bytes / (row.median_ms * 1e-3) / 1e12 : 0;
          row.launches = opt.iters, row.sm_clock_mhz = clock;
          if (!timing_errors[i].empty()) row.ok = false, row.error = timing_errors[i];
        }
        const Row& base = shape_rows.back();
        for (Row& r : shape_rows)
          if (r.error.empty() && base.error.empty() && r.median_ms > 0) {
            r.vs_baseline = base.median_ms / r.median_ms;
            r.pct_cublas = 100.0 * r.vs_baseline;
          }
        rows.insert(rows.end(), shape_rows.begin(), shape_rows.end());
        if (progress)
          progress(shape.str() + " " + op + " " + data_type_name(opt.in_type) + "/" + data_type_name(out) + " " +
                   accum_string(accum) + ": done (" + std::to_string(nk) + " kernels, SM clock " +
                   std::to_string(clock) + " MHz)");
      }
  }
  return rows;
}

}  // namespace hgemm::bench
