#include "runner.h"

#include "reference/random.h"
#include "spin.cuh"

#include <cublas_v2.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <memory>
#include <stdexcept>

namespace hgemm::bench {

namespace {

void check_cuda(cudaError_t err, const char* what) {
  if (err != cudaSuccess)
    throw std::runtime_error(std::string(what) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err));
}

struct DeviceBuffer {
  __half* ptr = nullptr;
  std::size_t count = 0;
  explicit DeviceBuffer(std::size_t n) : count(n) {
    check_cuda(cudaMalloc(&ptr, std::max<std::size_t>(n, 1) * sizeof(__half)), "cudaMalloc");
  }
  ~DeviceBuffer() { cudaFree(ptr); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
};

// Uniform values in [-1, 1): random, never zero-filled (zeros run faster on a power-capped GPU).
__global__ void fill_uniform(__half* p, std::size_t n, std::uint64_t seed) {
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x)
    p[i] = __float2half(static_cast<float>(ref::random_uniform(seed, i)));
}

// Over the `cols` first elements of each row of stride `ld` (the padding beyond is skipped):
// out[0] = max |c − ref| (NaN and Inf count as +inf), out[1] = max |ref|; floats ≥ 0 compare as ints.
__global__ void max_errors(const __half* c, const __half* ref, std::size_t n, std::size_t cols, std::size_t ld,
                           unsigned* out) {
  float err = 0.f, mag = 0.f;
  for (std::size_t i = blockIdx.x * std::size_t(blockDim.x) + threadIdx.x; i < n; i += std::size_t(gridDim.x) * blockDim.x) {
    if (i % ld >= cols) continue;
    const float x = __half2float(c[i]), r = __half2float(ref[i]);
    const float e = fabsf(x - r);
    err = fmaxf(err, isfinite(x) ? e : INFINITY);
    mag = fmaxf(mag, fabsf(r));
  }
  atomicMax(&out[0], __float_as_uint(err));
  atomicMax(&out[1], __float_as_uint(mag));
}

void fill(DeviceBuffer& b, std::uint64_t seed) {
  fill_uniform<<<1024, 256>>>(b.ptr, b.count, seed);
  check_cuda(cudaGetLastError(), "fill_uniform");
}

std::string run_command(const std::string& cmd) {
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(popen(cmd.c_str(), "r"), pclose);
  if (!pipe) return "";
  std::string out;
  std::array<char, 256> buf{};
  while (fgets(buf.data(), buf.size(), pipe.get())) out += buf.data();
  while (!out.empty() && (out.back() == '\n' || out.back() == ' ')) out.pop_back();
  return out;
}

std::string pci_bus_id() {
  int dev = 0;
  char id[32] = {0};
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetPCIBusId(id, sizeof id, dev) != cudaSuccess) return "0";
  return id;
}

int current_sm_clock_mhz() {
  const std::string s =
      run_command("nvidia-smi --query-gpu=clocks.sm --format=csv,noheader,nounits -i " + pci_bus_id() + " 2>/dev/null");
  try {
    return s.empty() ? 0 : std::stoi(s);
  } catch (const std::exception&) {
    return 0;
  }
}

double percentile(const std::vector<float>& sorted, double q) {
  if (sorted.empty()) return 0;
  const double pos = q * (sorted.size() - 1);
  const std::size_t lo = static_cast<std::size_t>(pos);
  const std::size_t hi = std::min(lo + 1, sorted.size() - 1);
  return sorted[lo] + (pos - lo) * (sorted[hi] - sorted[lo]);
}

struct Operands {
  std::int64_t a_rows, a_cols, b_rows, b_cols;  // stored shapes (row-major)
  std::int64_t lda, ldb, ldc;                   // the shape's ld, else the stored widths
};

Operands stored_shapes(const Shape& s, Op op_a, Op op_b) {
  Operands o;
  o.a_rows = op_a == Op::N ? s.m : s.k, o.a_cols = op_a == Op::N ? s.k : s.m;
  o.b_rows = op_b == Op::N ? s.k : s.n, o.b_cols = op_b == Op::N ? s.n : s.k;
  o.lda = s.ld ? s.ld : std::max<std::int64_t>(o.a_cols, 1);
  o.ldb = s.ld ? s.ld : std::max<std::int64_t>(o.b_cols, 1);
  o.ldc = s.ld ? s.ld : std::max<std::int64_t>(s.n, 1);
  if (o.lda < o.a_cols || o.ldb < o.b_cols || o.ldc < s.n)
    throw std::runtime_error("shape " + s.str() + ": ld " + std::to_string(s.ld) + " is smaller than a stored width");
  return o;
}

}  // namespace

double error_tolerance(Accum accum, std::int64_t k) {
  // Errors relative to max |C|. f32 accumulation: fp16 rounding of the output (2^-11 relative)
  // plus cuBLAS's own rounding, with margin. f16 accumulation: each of the K additions rounds
  // to fp16, a random walk growing like sqrt(K) · 2^-11 relative to a typical element.
  const double eps16 = 1.0 / 1024;
  return accum == Accum::F32 ? 2 * eps16 : eps16 * (4 + std::sqrt(static_cast<double>(k)));
}

bool device_available(std::string* why) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    *why = err != cudaSuccess ? std::string(cudaGetErrorName(err)) + ": " + cudaGetErrorString(err)
                              : "cudaGetDeviceCount reports 0 devices";
    cudaGetLastError();
    return false;
  }
  return true;
}

Header describe_device() {
  Header h;
  int dev = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  h.gpu = prop.name;
  h.compute_capability = prop.major * 10 + prop.minor;
  h.sm_count = prop.multiProcessorCount;
  h.l2_bytes = prop.l2CacheSize;
  int khz = 0;
  cudaDeviceGetAttribute(&khz, cudaDevAttrClockRate, dev);
  h.sm_clock_max_mhz = khz / 1000;
  int drv = 0, rt = 0;
  cudaDriverGetVersion(&drv);
  cudaRuntimeGetVersion(&rt);
  const std::string smi_driver =
      run_command("nvidia-smi --query-gpu=driver_version --format=csv,noheader -i " + pci_bus_id() + " 2>/dev/null");
  h.driver = (smi_driver.empty() ? std::string() : smi_driver + " ") + "(CUDA " + std::to_string(drv / 1000) + "." +
             std::to_string(drv % 1000 / 10) + ")";
  h.cuda_runtime = std::to_string(rt / 1000) + "." + std::to_string(rt % 1000 / 10);
  int major = 0, minor = 0, patch = 0;
  cublasGetProperty(MAJOR_VERSION, &major);
  cublasGetProperty(MINOR_VERSION, &minor);
  cublasGetProperty(PATCH_LEVEL, &patch);
  h.cublas = std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
  char date[32];
  const std::time_t now = std::time(nullptr);
  std::strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", std::gmtime(&now));
  h.date = date;
  return h;
}

std::vector<Row> run_benchmark(const RunOptions& opt, void (*progress)(const std::string&)) {
  int dev = 0;
  check_cuda(cudaGetDevice(&dev), "cudaGetDevice");
  cudaDeviceProp prop{};
  check_cuda(cudaGetDeviceProperties(&prop, dev), "cudaGetDeviceProperties");
  const std::string op = op_string(opt.op_a, opt.op_b);
  std::vector<Row> rows;

  for (const Shape& shape : opt.shapes) {
    const Operands st = stored_shapes(shape, opt.op_a, opt.op_b);
    const std::size_t a_n = st.a_rows * st.lda, b_n = st.b_rows * st.ldb, c_n = shape.m * st.ldc;
    const std::size_t set_bytes = 2 * (a_n + b_n + c_n);
    // Each launch takes the next of `sets` input sets, so that between two launches on one set the
    // others cover twice the L2 and no launch finds its inputs cached (up to 32 sets: problems
    // smaller than 1/16 of the L2 are partly cached still).
    std::size_t free_b = 0, total_b = 0;
    check_cuda(cudaMemGetInfo(&free_b, &total_b), "cudaMemGetInfo");
    int sets = static_cast<int>(std::min<std::size_t>(
        32, 1 + (2 * prop.l2CacheSize + set_bytes - 1) / std::max<std::size_t>(set_bytes, 1)));
    sets = std::max(1, std::min<int>(sets, static_cast<int>(free_b / 2 / std::max<std::size_t>(set_bytes, 1))));
    std::vector<std::unique_ptr<DeviceBuffer>> as, bs, cs;
    for (int s = 0; s < sets; ++s) {
      as.push_back(std::make_unique<DeviceBuffer>(a_n));
      bs.push_back(std::make_unique<DeviceBuffer>(b_n));
      cs.push_back(std::make_unique<DeviceBuffer>(c_n));
      fill(*as.back(), opt.seed * 1000 + 3 * s);
      fill(*bs.back(), opt.seed * 1000 + 3 * s + 1);
      fill(*cs.back(), opt.seed * 1000 + 3 * s + 2);
    }
    DeviceBuffer c_ref(c_n), c_check(c_n);
    unsigned* d_err = nullptr;
    check_cuda(cudaMalloc(&d_err, 2 * sizeof(unsigned)), "cudaMalloc");
    std::unique_ptr<unsigned, decltype(&cudaFree)> err_guard(d_err, cudaFree);

    auto call = [&](const std::string& id, Accum accum, int set, __half* c) {
      GemmOptions o;
      o.accum = accum;
      o.kernel = id;
      return gemm(opt.op_a, opt.op_b, shape.m, shape.n, shape.k, 1.f, as[set]->ptr, st.lda, bs[set]->ptr, st.ldb, 0.f,
                  c, st.ldc, o);
    };
    auto resolved = [&](const std::string& id, Accum accum) {
      GemmOptions o;
      o.accum = accum;
      o.kernel = id;
      std::string chosen;
      resolve_kernel(opt.op_a, opt.op_b, shape.m, shape.n, shape.k, as[0]->ptr, st.lda, bs[0]->ptr, st.ldb,
                     cs[0]->ptr, st.ldc, o, &chosen);
      return chosen;
    };

    for (Accum accum : opt.accums) {
      // The kernels of this accumulation, then their cuBLAS baseline.
      std::vector<std::string> ids;
      for (const std::string& id : opt.kernels) {
        const auto& all = kernels();
        auto it = std::find_if(all.begin(), all.end(), [&](const KernelInfo& k) { return k.id == id; });
        if (id == "auto" || (it != all.end() && (it->accums & accum_bit(accum)) && !it->baseline)) ids.push_back(id);
      }
      ids.push_back(baseline_for(accum));

      // Reference result: cuBLAS with fp32 accumulation on input set 0.
      if (Status s = call("cublas.acc32", Accum::F32, 0, c_ref.ptr); s != Status::Success)
        throw std::runtime_error("cublas.acc32 failed: " + last_error_message());

      std::vector<Row> shape_rows;
      std::vector<std::string> timed;
      for (const std::string& id : ids) {
        Row r;
        r.kernel = id, r.op = op, r.accum = accum_string(accum), r.m = shape.m, r.n = shape.n, r.k = shape.k;
        r.ld = shape.ld;
        if (id == "auto") r.resolved = resolved(id, accum);
        r.input_sets = sets;
        check_cuda(cudaMemset(c_check.ptr, 0xFF, c_n * sizeof(__half)), "cudaMemset");  // NaN poison
        const Status s = call(id, accum, 0, c_check.ptr);
        if (s != Status::Success) {
          r.ok = false;
          r.error = std::string(status_string(s)) + ": " + last_error_message();
        } else {
          check_cuda(cudaMemset(d_err, 0, 2 * sizeof(unsigned)), "cudaMemset");
          max_errors<<<1024, 256>>>(c_check.ptr, c_ref.ptr, c_n, shape.n, st.ldc, d_err);
          unsigned h_err[2];
          check_cuda(cudaMemcpy(h_err, d_err, sizeof h_err, cudaMemcpyDeviceToHost), id.c_str());
          float e, mag;
          std::memcpy(&e, &h_err[0], 4);
          std::memcpy(&mag, &h_err[1], 4);
          r.max_err = c_n == 0 ? 0.0 : mag > 0 ? e / mag : e;
          r.ok = r.max_err <= error_tolerance(accum, shape.k);
          timed.push_back(id);
        }
        shape_rows.push_back(r);
      }

      // Interleaved timing: every round launches each kernel once, in a rotating order, each
      // launch on the next input set; all kernels get the same number of launches. Separate input
      // sets keep a kernel from finding the previous kernel's B in L2.
      const int nk = static_cast<int>(timed.size());
      std::vector<cudaEvent_t> events(2 * static_cast<std::size_t>(nk) * opt.iters);
      for (auto& e : events) check_cuda(cudaEventCreate(&e), "cudaEventCreate");
      int launch = 0;  // launches so far: each takes the next input set
      for (int w = 0; w < opt.warmup; ++w)
        for (int i = 0; i < nk; ++i, ++launch) call(timed[i], accum, launch % sets, cs[launch % sets]->ptr);
      for (int r = 0; r < opt.iters; ++r) {
        spin<<<1, 1>>>(2'000'000);
        for (int j = 0; j < nk; ++j, ++launch) {
          const int i = (j + r) % nk;
          cudaEvent_t* ev = &events[2 * (static_cast<std::size_t>(i) * opt.iters + r)];
          check_cuda(cudaEventRecord(ev[0]), "cudaEventRecord");
          call(timed[i], accum, launch % sets, cs[launch % sets]->ptr);
          check_cuda(cudaEventRecord(ev[1]), "cudaEventRecord");
        }
      }
      check_cuda(cudaDeviceSynchronize(), "benchmark launches");
      const int clock = current_sm_clock_mhz();
      const double flops = 2.0 * shape.m * shape.n * shape.k;
      const double bytes = 2.0 * (shape.m * shape.k + shape.k * shape.n + shape.m * shape.n);
      for (int i = 0; i < nk; ++i) {
        std::vector<float> ms(opt.iters);
        for (int r = 0; r < opt.iters; ++r) {
          cudaEvent_t* ev = &events[2 * (static_cast<std::size_t>(i) * opt.iters + r)];
          check_cuda(cudaEventElapsedTime(&ms[r], ev[0], ev[1]), "cudaEventElapsedTime");
        }
        std::sort(ms.begin(), ms.end());
        Row& row = *std::find_if(shape_rows.begin(), shape_rows.end(), [&](const Row& x) { return x.kernel == timed[i]; });
        row.median_ms = percentile(ms, 0.5), row.min_ms = ms.front(), row.max_ms = ms.back();
        row.p10_ms = percentile(ms, 0.1), row.p90_ms = percentile(ms, 0.9);
        row.tflops = row.median_ms > 0 ? flops / (row.median_ms * 1e-3) / 1e12 : 0;
        row.tbps = row.median_ms > 0 ? bytes / (row.median_ms * 1e-3) / 1e12 : 0;
        row.launches = opt.iters, row.sm_clock_mhz = clock;
      }
      for (auto& e : events) cudaEventDestroy(e);
      const Row& base = shape_rows.back();
      for (Row& r : shape_rows)
        if (r.error.empty() && base.error.empty() && r.median_ms > 0) r.pct_cublas = 100.0 * base.median_ms / r.median_ms;
      rows.insert(rows.end(), shape_rows.begin(), shape_rows.end());
      if (progress) progress(shape.str() + " " + op + " " + accum_string(accum) + ": done (" + std::to_string(nk) +
                             " kernels, SM clock " + std::to_string(clock) + " MHz)");
    }
  }
  return rows;
}

}  // namespace hgemm::bench
