// SPDX-License-Identifier: Apache-2.0
#include "pointers.h"

#include <cublas_v2.h>
#include <cuda_runtime_api.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <functional>
#include <memory>
#include <numeric>
#include <random>
#include <stdexcept>

#include "device_data.h"
#include "device_info.h"
#include "spin.cuh"

namespace hgemm::bench {
namespace {

constexpr const char* kPointerBaseline = "cublas.batched";

void check_cublas(cublasStatus_t s, const char* what) {
  if (s != CUBLAS_STATUS_SUCCESS) throw std::runtime_error(std::string(what) + ": " + cublasGetStatusName(s));
}
cublasOperation_t to_cublas(Op op) { return op == Op::N ? CUBLAS_OP_N : CUBLAS_OP_T; }

double quantile(std::vector<float> ms, double q) {
  std::sort(ms.begin(), ms.end());
  const double pos = q * (ms.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(pos), hi = std::min(lo + 1, ms.size() - 1);
  return ms[lo] + (pos - lo) * (ms[hi] - ms[lo]);
}

/// One input set: every product's A, B and C in one buffer, in shuffled order with gaps of 8 to
/// 64 halves (16-byte aligned, no common stride), and the device pointer arrays: ours (A, B, C)
/// and cuBLAS's, whose column-major view swaps A and B.
struct PointerSet {
  std::unique_ptr<DeviceBuffer> data, arrays;
  std::vector<const __half*> a, b;
  std::vector<__half*> c;
  const __half* const* dev_a() const { return static_cast<const __half* const*>(arrays->ptr); }
  const __half* const* dev_b() const { return dev_a() + a.size(); }
  __half* const* dev_c() const { return static_cast<__half* const*>(arrays->ptr) + 2 * a.size(); }
};

/// The kernels one call queues, counted in a CUDA graph captured from it on a stream of its own
/// (-1 where the capture fails): whether host arrays ran in one launch or one per product.
int kernels_queued(const std::function<std::string(cudaStream_t)>& call) {
  cudaStream_t stream = nullptr;
  check_cuda(cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking), "cudaStreamCreate");
  cudaGraph_t graph = nullptr;
  int kernels = -1;
  if (cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal) == cudaSuccess) {
    const bool ran = call(stream).empty();
    if (cudaStreamEndCapture(stream, &graph) == cudaSuccess && ran) {
      std::size_t count = 0;
      cudaGraphGetNodes(graph, nullptr, &count);
      std::vector<cudaGraphNode_t> nodes(count);
      cudaGraphGetNodes(graph, nodes.data(), &count);
      kernels = 0;
      for (cudaGraphNode_t n : nodes) {
        cudaGraphNodeType type{};
        kernels += cudaGraphNodeGetType(n, &type) == cudaSuccess && type == cudaGraphNodeTypeKernel;
      }
    }
    if (graph) cudaGraphDestroy(graph);
  }
  cudaGetLastError();
  cudaStreamDestroy(stream);
  return kernels;
}

PointerSet make_set(std::int64_t batch, std::int64_t a_n, std::int64_t b_n, std::int64_t c_n, std::uint64_t seed) {
  std::mt19937_64 r(seed);
  std::vector<std::int64_t> order(static_cast<std::size_t>(batch));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), r);
  std::vector<std::int64_t> at_a(order.size()), at_b(order.size()), at_c(order.size());
  std::int64_t total = 0;
  auto place = [&](std::int64_t n) {
    const std::int64_t at = total;
    total += (n + 7) / 8 * 8 + 8 * static_cast<std::int64_t>(1 + r() % 8);
    return at;
  };
  for (std::int64_t i : order) {
    const auto u = static_cast<std::size_t>(i);
    at_a[u] = place(a_n), at_b[u] = place(b_n), at_c[u] = place(c_n);
  }
  PointerSet s;
  s.data = std::make_unique<DeviceBuffer>(static_cast<std::size_t>(total) * 2);
  fill_random(s.data->ptr, DataType::F16, static_cast<std::size_t>(total), seed);
  auto* base = static_cast<__half*>(s.data->ptr);
  for (std::size_t i = 0; i < order.size(); ++i)
    s.a.push_back(base + at_a[i]), s.b.push_back(base + at_b[i]), s.c.push_back(base + at_c[i]);
  std::vector<const void*> host;
  host.insert(host.end(), s.a.begin(), s.a.end());
  host.insert(host.end(), s.b.begin(), s.b.end());
  host.insert(host.end(), s.c.begin(), s.c.end());
  s.arrays = std::make_unique<DeviceBuffer>(host.size() * sizeof(void*));
  check_cuda(cudaMemcpy(s.arrays->ptr, host.data(), host.size() * sizeof(void*), cudaMemcpyHostToDevice),
             "pointer arrays");
  return s;
}

}  // namespace

std::vector<Row> run_pointer_benchmark(const RunOptions& opt, void (*progress)(const std::string&),
                                       std::vector<std::string>* notes) {
  if (opt.in_type != DataType::F16 ||
      std::find(opt.out_types.begin(), opt.out_types.end(), DataType::F16) == opt.out_types.end()) {
    if (notes) notes->push_back("--pointers: gemm_batched takes f16 A, B and C only; nothing ran");
    return {};
  }
  if (notes && opt.out_types.size() > 1)
    notes->push_back("--pointers: gemm_batched takes f16 C only; the other output types were left out");
  if (notes && opt.epilogue.enabled())
    notes->push_back("--pointers: gemm_batched has no fused epilogue; --epilogue was left out");
  cublasHandle_t handle = nullptr;
  check_cublas(cublasCreate(&handle), "cublasCreate");
  std::unique_ptr<cublasContext, cublasStatus_t (*)(cublasHandle_t)> handle_owner(handle, cublasDestroy);
  int dev = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  const std::string op = op_string(opt.op_a, opt.op_b);
  std::vector<Row> rows;

  for (const Shape& shape : opt.shapes) {
    const std::int64_t M = shape.m, N = shape.n, K = shape.k, B = std::max<std::int64_t>(1, shape.batch);
    // Stored shapes, tight rows (the suite's sizes are multiples of 8).
    const std::int64_t lda = opt.op_a == Op::N ? K : M, ldb = opt.op_b == Op::N ? N : K, ldc = N;
    const std::int64_t a_n = M * K, b_n = K * N, c_n = M * N;
    const std::size_t set_bytes = 2 * static_cast<std::size_t>(B * (a_n + b_n + c_n));
    std::size_t free_b = 0, total_b = 0;
    check_cuda(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    const int sets = static_cast<int>(std::max<std::size_t>(
        1, std::min<std::size_t>({16, 1 + 2 * static_cast<std::size_t>(prop.l2CacheSize) / std::max<std::size_t>(set_bytes, 1),
                                  free_b / 2 / std::max<std::size_t>(set_bytes, 1)})));
    std::vector<PointerSet> data;
    for (int s = 0; s < sets; ++s) data.push_back(make_set(B, a_n, b_n, c_n, opt.seed * 1000 + 7 * s));
    // The reference: cuBLAS per product, f32 accumulation and output, on set 0's inputs.
    DeviceBuffer ref(static_cast<std::size_t>(B * c_n) * sizeof(float));
    for (std::int64_t i = 0; i < B; ++i) {
      MatmulArgs x;
      x.op_a = opt.op_a, x.op_b = opt.op_b, x.m = M, x.n = N, x.k = K;
      x.a = data[0].a[static_cast<std::size_t>(i)], x.lda = lda, x.b = data[0].b[static_cast<std::size_t>(i)], x.ldb = ldb;
      x.d = static_cast<float*>(ref.ptr) + i * c_n, x.ldd = ldc, x.d_type = DataType::F32;
      MatmulOptions o;
      o.kernel = "cublas.acc32";
      if (matmul(x, o) != Status::Success)
        throw std::runtime_error("the reference (cublas.acc32 per product) failed on " + shape.str() + ": " +
                                 last_error_message());
    }

    for (Accum accum : opt.accums) {
      const __half alpha16 = __float2half(1.f), beta16 = __float2half(0.f);
      const float alpha32 = 1.f, beta32 = 0.f;
      auto ours = [&](int s, bool device_arrays, cudaStream_t stream = nullptr) {
        GemmOptions o;
        o.accum = accum, o.pointer_batch_in_one_launch = true, o.stream = stream;
        const PointerSet& p = data[s];
        const Status st = device_arrays ? gemm_batched(opt.op_a, opt.op_b, M, N, K, 1.f, p.dev_a(), lda, p.dev_b(), ldb,
                                                       0.f, p.dev_c(), ldc, B, o)
                                        : gemm_batched(opt.op_a, opt.op_b, M, N, K, 1.f, p.a.data(), lda, p.b.data(), ldb,
                                                       0.f, p.c.data(), ldc, B, o);
        return st == Status::Success ? std::string() : std::string(status_string(st)) + ": " + last_error_message();
      };
      // Row-major C = op(A)·op(B) is column-major Cᵀ = op(B)ᵀ·op(A)ᵀ: cuBLAS's A array is our B.
      auto cublas = [&](int s) {
        const PointerSet& p = data[s];
        const bool half = accum == Accum::F16;
        const cublasStatus_t st = cublasGemmBatchedEx(
            handle, to_cublas(opt.op_b), to_cublas(opt.op_a), static_cast<int>(N), static_cast<int>(M),
            static_cast<int>(K), half ? static_cast<const void*>(&alpha16) : &alpha32,
            reinterpret_cast<const void* const*>(p.dev_b()), CUDA_R_16F, static_cast<int>(ldb),
            reinterpret_cast<const void* const*>(p.dev_a()), CUDA_R_16F, static_cast<int>(lda),
            half ? static_cast<const void*>(&beta16) : &beta32, reinterpret_cast<void* const*>(p.dev_c()), CUDA_R_16F,
            static_cast<int>(ldc), static_cast<int>(B), half ? CUBLAS_COMPUTE_16F : CUBLAS_COMPUTE_32F,
            CUBLAS_GEMM_DEFAULT);
        return st == CUBLAS_STATUS_SUCCESS ? std::string() : std::string("cublasGemmBatchedEx: ") + cublasGetStatusName(st);
      };
      const std::vector<std::string> ids = {"pointers.host", "pointers.device", kPointerBaseline};
      auto launch = [&](int i, int s) { return i == 2 ? cublas(s) : ours(s, i == 1); };
      std::vector<Row> shape_rows;
      std::vector<int> timed;
      for (int i = 0; i < 3; ++i) {
        Row r;
        r.kernel = ids[i], r.dtype = "f16", r.out_dtype = "f16", r.op = op, r.accum = accum_string(accum);
        r.m = M, r.n = N, r.k = K, r.batch = B, r.baseline = kPointerBaseline, r.input_sets = sets;
        r.tolerance = error_tolerance(accum, DataType::F16, K);
        if (i == 2) {
          r.resolved = "cublasGemmBatchedEx";
        } else {  // what the call queues: the map writers and the one launch, or a launch per product
          const int n = kernels_queued([&](cudaStream_t st) { return ours(0, i == 1, st); });
          r.resolved = std::string(i == 1 ? "device arrays" : "host arrays") + ", " +
                       (n < 0 ? std::string("capture failed") : std::to_string(n) + (n == 1 ? " kernel" : " kernels"));
        }
        // The check: set 0's C matrices poisoned, every product compared with the reference.
        for (__half* c : data[0].c) poison(c, static_cast<std::size_t>(c_n) * 2);
        r.error = launch(i, 0);
        if (r.error.empty()) {
          for (std::int64_t p = 0; p < B; ++p)
            r.max_err = std::max(r.max_err, relative_max_error(data[0].c[static_cast<std::size_t>(p)], DataType::F16,
                                                               static_cast<const float*>(ref.ptr) + p * c_n,
                                                               static_cast<std::size_t>(c_n), N, ldc));
          r.ok = r.max_err <= r.tolerance;
          timed.push_back(i);
        } else {
          r.ok = false;
        }
        shape_rows.push_back(r);
      }
      // Interleaved timing: each round launches every entry once in a rotating order, each launch
      // on the next input set; the same launch count for each.
      const int nk = static_cast<int>(timed.size());
      int next = 0;
      const std::vector<std::vector<float>> times = time_interleaved(nk, opt.warmup, opt.iters, [&](int j) {
        const std::string e = launch(timed[j], next++ % sets);
        Row& r = shape_rows[timed[j]];
        if (!e.empty() && r.error.empty()) r.error = e + " (while timed)", r.ok = false;
      });
      const int clock = current_sm_clock_mhz();
      const double flops = 2.0 * M * N * K * B, bytes = 2.0 * B * (a_n + b_n + c_n);
      for (int j = 0; j < nk; ++j) {
        std::vector<float> ms = times[j];
        Row& row = shape_rows[timed[j]];
        row.median_ms = quantile(ms, 0.5), row.min_ms = *std::min_element(ms.begin(), ms.end());
        row.max_ms = *std::max_element(ms.begin(), ms.end());
        row.p10_ms = quantile(ms, 0.1), row.p90_ms = quantile(ms, 0.9);
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
      // Host time per call: the mean of 50 calls of each (asynchronous; the queue drained after).
      auto host_us = [&](int i) {
        if (!shape_rows[i].error.empty()) return -1.0;
        check_cuda(cudaDeviceSynchronize(), "before host timing");
        const auto t0 = std::chrono::steady_clock::now();
        for (int n = 0; n < 50; ++n) launch(i, n % sets);
        const auto t1 = std::chrono::steady_clock::now();
        check_cuda(cudaDeviceSynchronize(), "after host timing");
        return std::chrono::duration<double, std::micro>(t1 - t0).count() / 50;
      };
      char line[256];
      std::snprintf(line, sizeof line,
                    "--pointers %s %s %s: host time per call %.1f us (host arrays), %.1f us (device arrays), "
                    "%.1f us (cublasGemmBatchedEx)",
                    shape.str().c_str(), op.c_str(), accum_string(accum), host_us(0),
                    host_us(1), host_us(2));
      if (notes) notes->push_back(line);
      if (progress) progress(line);
      rows.insert(rows.end(), shape_rows.begin(), shape_rows.end());
      if (progress)
        progress(shape.str() + " " + op + " " + accum_string(accum) + ": done (pointer batch, SM clock " +
                 std::to_string(clock) + " MHz)");
    }
  }
  return rows;
}

}  // namespace hgemm::bench
