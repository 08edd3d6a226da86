// SPDX-License-Identifier: Apache-2.0
#include "grouped.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <memory>
#include <stdexcept>

#include "device_data.h"
#include "device_info.h"
#include "spin.cuh"

namespace hgemm::bench {
namespace {

constexpr const char* kGroupedBaseline = "cublas.grouped";

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS)
    throw std::runtime_error(std::string(what) + ": " + cublasGetStatusName(s));
}

cudaDataType_t to_cuda(DataType t) {
  return t == DataType::F16 ? CUDA_R_16F : t == DataType::BF16 ? CUDA_R_16BF : CUDA_R_32F;
}
cublasOperation_t to_cublas(Op op) { return op == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; }

double median_of(std::vector<float> ms, double q) {
  std::sort(ms.begin(), ms.end());
  const double pos = q * (ms.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(pos), hi = std::min(lo + 1, ms.size() - 1);
  return ms[lo] + (pos - lo) * (ms[hi] - ms[lo]);
}

// One input set of a grouped shape: A (all rows), the groups' B, D, and the device arrays of
// the cuBLAS grouped call (one problem per non-empty group).
struct GroupedSet {
  std::unique_ptr<DeviceBuffer> a, b, d, pointers;
};

}  // namespace

std::vector<Row> run_grouped_benchmark(const RunOptions& opt, void (*progress)(const std::string&)) {
  int dev = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  cublasHandle_t handle = nullptr;
  check_cublas(cublasCreate(&handle), "cublasCreate");
  std::unique_ptr<cublasContext, cublasStatus_t (*)(cublasHandle_t)> handle_owner(handle, cublasDestroy);
  const std::string op = op_string(opt.op_a, opt.op_b);
  const std::size_t in_size = data_type_size(opt.in_type);
  std::vector<Row> rows;

  for (const Shape& shape : opt.shapes) {
    if (shape.groups <= 0) continue;
    const std::int64_t G = shape.groups, M = shape.m, N = shape.n, K = shape.k;
    const std::vector<std::int64_t> group_rows = grouped_rows(G, M);
    std::vector<std::int32_t> offsets;
    std::vector<std::int64_t> begin;
    std::int64_t end = 0;
    for (std::int64_t r : group_rows) begin.push_back(end), offsets.push_back(static_cast<std::int32_t>(end += r));
    // Stored shapes (row-major, tight): A is M×K (op N) or K×M, B_g K×N (op N) or N×K.
    const std::int64_t lda = opt.op_a == Op::N ? K : M, ldb = opt.op_b == Op::N ? N : K, ldd = N;
    const std::int64_t a_n = M * K, b_each = K * N, b_n = G * b_each, d_n = M * N;
    DeviceBuffer d_offsets(offsets.size() * sizeof(std::int32_t));
    check_cuda(cudaMemcpy(d_offsets.ptr, offsets.data(), offsets.size() * 4, cudaMemcpyHostToDevice), "offsets");
    std::size_t out_size = 0;
    for (DataType t : opt.out_types) out_size = std::max<std::size_t>(out_size, data_type_size(t));
    const std::size_t set_bytes = in_size * (a_n + b_n) + out_size * d_n;
    std::size_t free_b = 0, total_b = 0;
    check_cuda(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    const int sets = static_cast<int>(std::max<std::size_t>(
        1, std::min<std::size_t>({32, 1 + 2 * static_cast<std::size_t>(prop.l2CacheSize) / std::max<std::size_t>(set_bytes, 1),
                                  free_b / 2 / std::max<std::size_t>(set_bytes, 1)})));
    std::vector<GroupedSet> data(sets);
    for (int s = 0; s < sets; ++s) {
      data[s].a = std::make_unique<DeviceBuffer>(a_n * in_size);
      data[s].b = std::make_unique<DeviceBuffer>(b_n * in_size);
      data[s].d = std::make_unique<DeviceBuffer>(d_n * out_size);
      data[s].pointers = std::make_unique<DeviceBuffer>(3 * G * sizeof(void*));
      fill_random(data[s].a->ptr, opt.in_type, a_n, opt.seed * 1000 + 3 * s);
      fill_random(data[s].b->ptr, opt.in_type, b_n, opt.seed * 1000 + 3 * s + 1);
    }
    DeviceBuffer ref(d_n * sizeof(float)), check(d_n * out_size);
    auto at = [](const DeviceBuffer& buf, std::int64_t elements, std::size_t size) {
      return static_cast<char*>(buf.ptr) + elements * size;
    };
    // Group g of set s as a single product for hgemm::matmul.
    auto group_args = [&](int s, std::int64_t g, void* d, DataType d_type) {
      MatmulArgs x;
      x.op_a = opt.op_a, x.op_b = opt.op_b, x.m = group_rows[g], x.n = N, x.k = K;
      x.a = at(*data[s].a, opt.op_a == Op::N ? begin[g] * lda : begin[g], in_size), x.lda = lda, x.a_type = opt.in_type;
      x.b = at(*data[s].b, g * b_each, in_size), x.ldb = ldb, x.b_type = opt.in_type;
      x.d = static_cast<char*>(d) + begin[g] * ldd * data_type_size(d_type), x.ldd = ldd, x.d_type = d_type;
      x.c = x.d, x.ldc = ldd, x.c_type = d_type;
      return x;
    };
    auto loop = [&](int s, void* d, DataType d_type, Accum accum) {
      MatmulOptions o;
      o.accum = accum, o.kernel = accum == Accum::F16 ? "cublas.acc16" : "cublas.acc32";
      for (std::int64_t g = 0; g < G; ++g)
        if (group_rows[g] > 0)
          if (Status st = matmul(group_args(s, g, d, d_type), o); st != Status::Success) return st;
      return Status::Success;
    };
    // The reference: cuBLAS per group, f32 accumulation and output, on set 0.
    if (loop(0, ref.ptr, DataType::F32, Accum::F32) != Status::Success)
      throw std::runtime_error("the reference (cublas.acc32 per group) failed on " + shape.str() + ": " +
                               last_error_message());

    for (DataType out : opt.out_types)
      for (Accum accum : opt.accums) {
        if (!accum_takes(accum, opt.in_type, out)) continue;
        // The cuBLAS grouped call: row-major D_g = op(A_g)·op(B_g) is column-major
        // D_gᵀ = op(B_g)ᵀ·op(A_g)ᵀ; one problem per non-empty group.
        std::vector<int> ms, ns, ks, ldas, ldbs, ldcs, sizes;
        std::vector<cublasOperation_t> ta, tb;
        std::vector<float> alpha32, beta32;
        std::vector<__half> alpha16, beta16;
        std::vector<std::int64_t> used;
        for (std::int64_t g = 0; g < G; ++g)
          if (group_rows[g] > 0) {
            used.push_back(g);
            ta.push_back(to_cublas(opt.op_b)), tb.push_back(to_cublas(opt.op_a));
            ms.push_back(static_cast<int>(N)), ns.push_back(static_cast<int>(group_rows[g])), ks.push_back(static_cast<int>(K));
            ldas.push_back(static_cast<int>(ldb)), ldbs.push_back(static_cast<int>(lda)), ldcs.push_back(static_cast<int>(ldd));
            sizes.push_back(1);
            alpha32.push_back(1.f), beta32.push_back(0.f), alpha16.push_back(__float2half(1.f)), beta16.push_back(__float2half(0.f));
          }
        const int count = static_cast<int>(used.size());
        for (int s = 0; s < sets; ++s) {
          std::vector<const void*> host(3 * G);
          for (int i = 0; i < count; ++i) {
            const MatmulArgs x = group_args(s, used[i], data[s].d->ptr, out);
            host[i] = x.b, host[G + i] = x.a, host[2 * G + i] = x.d;
          }
          check_cuda(cudaMemcpy(data[s].pointers->ptr, host.data(), host.size() * sizeof(void*), cudaMemcpyHostToDevice),
                     "cuBLAS pointer arrays");
        }
        auto cublas_grouped = [&](int s, void* d) {
          // The pointer arrays of set s point at its own D; the check run writes set 0's D.
          (void)d;
          const void* const* p = static_cast<const void* const*>(data[s].pointers->ptr);
          const bool half = accum == Accum::F16;
          return cublasGemmGroupedBatchedEx(
              handle, ta.data(), tb.data(), ms.data(), ns.data(), ks.data(),
              half ? static_cast<const void*>(alpha16.data()) : alpha32.data(), p, to_cuda(opt.in_type), ldas.data(),
              p + G, to_cuda(opt.in_type), ldbs.data(), half ? static_cast<const void*>(beta16.data()) : beta32.data(),
              const_cast<void* const*>(p + 2 * G), to_cuda(out), ldcs.data(), count, sizes.data(),
              half ? CUBLAS_COMPUTE_16F : CUBLAS_COMPUTE_32F);
        };
        auto ours = [&](int s, void* d) {
          GroupedMatmulArgs x;
          x.layout = GroupedLayout::Contiguous, x.op_a = opt.op_a, x.op_b = opt.op_b;
          x.groups = G, x.m = M, x.n = N, x.k = K;
          x.offsets = static_cast<const std::int32_t*>(d_offsets.ptr);
          x.a = data[s].a->ptr, x.lda = lda, x.a_type = opt.in_type;
          x.b = data[s].b->ptr, x.ldb = ldb, x.stride_b = b_each, x.b_type = opt.in_type;
          x.d = d, x.ldd = ldd, x.d_type = out;
          MatmulOptions o;
          o.accum = accum;
          return grouped_matmul(x, o);
        };
        const std::vector<std::string> ids = {"auto", "cublas.loop", kGroupedBaseline};
        auto launch = [&](int i, int s, void* d) -> std::string {
          if (i == 0) {
            const Status st = ours(s, d);
            return st == Status::Success ? "" : std::string(status_string(st)) + ": " + last_error_message();
          }
          if (i == 1) {
            const Status st = loop(s, d, out, accum);
            return st == Status::Success ? "" : std::string(status_string(st)) + ": " + last_error_message();
          }
          const cublasStatus_t st = cublas_grouped(s, d);
          return st == CUBLAS_STATUS_SUCCESS ? "" : std::string("cublasGemmGroupedBatchedEx: ") + cublasGetStatusName(st);
        };
        std::vector<Row> shape_rows;
        std::vector<int> timed;
        for (int i = 0; i < 3; ++i) {
          Row r;
          r.kernel = ids[i], r.dtype = data_type_name(opt.in_type), r.out_dtype = data_type_name(out), r.op = op;
          r.accum = accum_string(accum), r.m = M, r.n = N, r.k = K, r.batch = 1, r.groups = G;
          r.baseline = kGroupedBaseline, r.input_sets = sets, r.tolerance = error_tolerance(accum, out, K);
          if (i == 0) r.resolved = "engine.sm90 (grouped)";
          // The check: set 0, into a poisoned D (the cuBLAS grouped call writes set 0's own D).
          void* d = i == 2 ? data[0].d->ptr : check.ptr;
          poison(d, d_n * data_type_size(out));
          r.error = launch(i, 0, d);
          if (r.error.empty()) {
            r.max_err = relative_max_error(d, out, static_cast<const float*>(ref.ptr), d_n, N, ldd);
            r.ok = r.max_err <= r.tolerance;
            timed.push_back(i);
          } else {
            r.ok = false;
          }
          shape_rows.push_back(r);
        }
        // Interleaved timing, as the other suites: each round launches every entry once in a
        // rotating order, each launch on the next input set.
        const int nk = static_cast<int>(timed.size());
        int next = 0;
        const std::vector<std::vector<float>> times = time_interleaved(nk, opt.warmup, opt.iters, [&](int j) {
          const int s = next++ % sets;
          const std::string e = launch(timed[j], s, data[s].d->ptr);
          Row& r = shape_rows[timed[j]];
          if (!e.empty() && r.error.empty()) r.error = e + " (while timed)", r.ok = false;
        });
        const int clock = current_sm_clock_mhz();
        const double flops = 2.0 * M * N * K;
        const double bytes = in_size * double(a_n + b_n) + data_type_size(out) * double(d_n);
        for (int j = 0; j < nk; ++j) {
          std::vector<float> ms_ = times[j];
          Row& row = shape_rows[timed[j]];
          std::sort(ms_.begin(), ms_.end());
          row.median_ms = median_of(ms_, 0.5), row.min_ms = ms_.front(), row.max_ms = ms_.back();
          row.p10_ms = median_of(ms_, 0.1), row.p90_ms = median_of(ms_, 0.9);
          row.tflops = row.median_ms > 0 ? flops / (row.median_ms * 1e-3) / 1e12 : 0;
          row.tbps = row.median_ms > 0 ? bytes / (row.median_ms * 1e-3) / 1e12 : 0;
          row.launches = opt.iters, row.sm_clock_mhz = clock;
        }
        const Row& base = shape_rows.back();
        for (Row& r : shape_rows)
          if (r.error.empty() && base.error.empty() && r.median_ms > 0 && base.median_ms > 0) {
            r.vs_baseline = base.median_ms / r.median_ms;
            r.pct_cublas = 100.0 * r.vs_baseline;
          }
        rows.insert(rows.end(), shape_rows.begin(), shape_rows.end());
        if (progress)
          progress(shape.str() + " " + op + " " + data_type_name(opt.in_type) + "/" + data_type_name(out) + " " +
                   accum_string(accum) + ": done (grouped, SM clock " + std::to_string(clock) + " MHz)");
      }
  }
  return rows;
}

}  // namespace hgemm::bench
