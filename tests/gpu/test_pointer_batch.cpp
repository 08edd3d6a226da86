// SPDX-License-Identifier: Apache-2.0
// Pointer batches in one launch on a real device: gemm_batched with device arrays (always the one
// launch) and with host arrays and pointer_batch_in_one_launch, against the fp64 reference.
// Products lie scattered in one buffer at no common stride, in shuffled order, with row padding
// and gaps that must come back bit for bit; every op pair, ragged sizes, K = 0, alpha and beta,
// f16 and f32 accumulation, 1, 1,024 and 2,500 products, small-integer data exact. Then: the launch count
// of an opted-in call, bitwise repeatability, CUDA graph capture and replay (device arrays
// rewritten between replays), entries the map writer refuses, and dependent products in order.
#include <algorithm>
#include <array>
#include <functional>
#include <cstring>
#include <numeric>
#include <ostream>
#include <random>

#include "gpu_util.h"

namespace hgemm::test {
namespace {

struct PointerCase {
  Op op_a, op_b;
  std::int64_t m, n, k, count;
  bool device_arrays;
  float alpha = 0.75f, beta = -0.5f;
  Accum accum = Accum::F32;
  ref::Fill fill = ref::Fill::Uniform;

  // Rows padded past their width to the next multiple of 8, plus 8: ld > width, TMA-readable.
  std::int64_t pad(std::int64_t width) const { return (std::max<std::int64_t>(width, 1) + 7) / 8 * 8 + 8; }
  std::int64_t lda() const { return pad(op_a == Op::N ? k : m); }
  std::int64_t ldb() const { return pad(op_b == Op::N ? n : k); }
  std::int64_t ldc() const { return pad(n); }
  std::int64_t a_elems() const { return (op_a == Op::N ? m : k) * lda(); }
  std::int64_t b_elems() const { return (op_b == Op::N ? k : n) * ldb(); }
  std::int64_t c_elems() const { return m * ldc(); }
};

std::string label(const PointerCase& c) {
  std::string s = std::string(c.device_arrays ? "device_" : "host_") + (c.op_a == Op::N ? "n" : "t") +
                  (c.op_b == Op::N ? "n" : "t") + "_" + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                  std::to_string(c.k) + "_x" + std::to_string(c.count) + (c.beta != 0.f ? "_beta" : "") +
                  (c.accum == Accum::F16 ? "_acc16" : "") + (c.fill == ref::Fill::SmallInts ? "_ints" : "");
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}
void PrintTo(const PointerCase& c, std::ostream* os) { *os << label(c); }

/// Where each product's A, B and C start in one buffer (halves, multiples of 8): the products in
/// shuffled order, random gaps between every two matrices, so no two lists have a common stride.
struct Scatter {
  std::vector<std::int64_t> a, b, c;
  std::int64_t total = 0;
};

Scatter scatter(const PointerCase& pc, std::uint64_t seed) {
  std::mt19937_64 r(seed);
  std::vector<std::int64_t> order(static_cast<std::size_t>(pc.count));
  std::iota(order.begin(), order.end(), 0);
  std::shuffle(order.begin(), order.end(), r);
  Scatter s;
  s.a.resize(order.size()), s.b.resize(order.size()), s.c.resize(order.size());
  auto place = [&](std::int64_t elems) {
    const std::int64_t at = s.total;
    s.total += (elems + 7) / 8 * 8 + 8 * static_cast<std::int64_t>(1 + r() % 8);
    return at;
  };
  for (std::int64_t i : order) {
    const auto u = static_cast<std::size_t>(i);
    s.c[u] = place(pc.c_elems()), s.a[u] = place(pc.a_elems()), s.b[u] = place(pc.b_elems());
  }
  return s;
}

/// The three pointer arrays of a call, in host memory and, where asked, copied to the device.
class PointerArrays {
 public:
  PointerArrays(const Scatter& s, __half* base, bool on_device) : on_device_(on_device) {
    for (std::size_t i = 0; i < s.a.size(); ++i)
      a_.push_back(base + s.a[i]), b_.push_back(base + s.b[i]), c_.push_back(base + s.c[i]);
    if (on_device) {
      for (void** p : {&da_, &db_, &dc_}) EXPECT_EQ(cudaMalloc(p, a_.size() * sizeof(void*) + 8), cudaSuccess);
      upload();
    }
  }
  ~PointerArrays() {
    for (void* p : {da_, db_, dc_}) cudaFree(p);
  }
  PointerArrays(const PointerArrays&) = delete;
  PointerArrays& operator=(const PointerArrays&) = delete;

  /// Copies the host lists into the device arrays (after they were changed).
  void upload() {
    if (!on_device_) return;
    EXPECT_EQ(cudaMemcpy(da_, a_.data(), a_.size() * sizeof(void*), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(db_, b_.data(), b_.size() * sizeof(void*), cudaMemcpyHostToDevice), cudaSuccess);
    EXPECT_EQ(cudaMemcpy(dc_, c_.data(), c_.size() * sizeof(void*), cudaMemcpyHostToDevice), cudaSuccess);
  }
  const __half* const* a() const { return on_device_ ? static_cast<const __half* const*>(da_) : a_.data(); }
  const __half* const* b() const { return on_device_ ? static_cast<const __half* const*>(db_) : b_.data(); }
  __half* const* c() const { return on_device_ ? static_cast<__half* const*>(dc_) : c_.data(); }
  std::vector<const __half*> a_, b_;
  std::vector<__half*> c_;

 private:
  bool on_device_;
  void *da_ = nullptr, *db_ = nullptr, *dc_ = nullptr;
};

GemmOptions one_launch(const PointerCase& pc, cudaStream_t stream = nullptr) {
  GemmOptions o;
  o.accum = pc.accum;
  o.pointer_batch_in_one_launch = true;
  o.stream = stream;
  return o;
}

Status run(const PointerCase& pc, const PointerArrays& p, const GemmOptions& o) {
  return gemm_batched(pc.op_a, pc.op_b, pc.m, pc.n, pc.k, pc.alpha, p.a(), pc.lda(), p.b(), pc.ldb(), pc.beta, p.c(),
                      pc.ldc(), pc.count, o);
}

/// Skips where the engine cannot run (no Hopper GPU, or a build without sm_90a code).
#define SKIP_WITHOUT_ENGINE()                                                                                \
  do {                                                                                                       \
    HGEMM_SKIP_WITHOUT_GPU();                                                                                \
    GemmOptions probe_;                                                                                      \
    probe_.kernel = "engine.sm90";                                                                           \
    const __half* none_ = nullptr;                                                                           \
    if (resolve_kernel(Op::N, Op::N, 0, 0, 0, none_, 1, none_, 1, none_, 1, probe_, nullptr) ==              \
        Status::UnsupportedArch)                                                                             \
      GTEST_SKIP() << last_error_message();                                                                  \
  } while (0)

/// Every product i not in `skipped` against the fp64 reference (exact for small integers), and
/// every element outside the written C matrices bit for bit as it was.
void expect_products(const PointerCase& pc, const Scatter& s, const std::vector<__half>& before,
                     const std::vector<__half>& after, const std::vector<std::int64_t>& skipped = {}) {
  std::vector<char> written(before.size(), 0);
  for (std::int64_t i = 0; i < pc.count; ++i) {
    const auto u = static_cast<std::size_t>(i);
    if (std::find(skipped.begin(), skipped.end(), i) != skipped.end()) continue;
    const ref::Reference want = ref::reference_gemm(pc.op_a, pc.op_b, pc.m, pc.n, pc.k, pc.alpha, before.data() + s.a[u],
                                                    pc.lda(), before.data() + s.b[u], pc.ldb(), pc.beta,
                                                    before.data() + s.c[u], pc.ldc());
    const ref::ErrorStats e = ref::compare(want, after.data() + s.c[u], pc.ldc());
    ASSERT_EQ(e.nonfinite, 0) << "product " << i;
    if (pc.fill == ref::Fill::SmallInts && pc.accum == Accum::F32)
      ASSERT_EQ(e.max_abs, 0.0) << "product " << i;
    ASSERT_LE(e.rel_fro, tolerance_rel_fro(pc.accum, pc.k)) << "product " << i;
    ASSERT_LE(e.max_scaled, tolerance_max_scaled(pc.accum, pc.k)) << "product " << i;
    for (std::int64_t r = 0; r < pc.m; ++r)
      std::fill_n(written.begin() + s.c[u] + r * pc.ldc(), pc.n, 1);
  }
  for (std::size_t x = 0; x < before.size(); ++x)
    if (!written[x]) ASSERT_EQ(std::memcmp(&before[x], &after[x], 2), 0) << "element " << x << " written";
}

std::vector<PointerCase> pointer_cases() {
  using O = Op;
  std::vector<PointerCase> out;
  for (bool dev : {true, false}) {
    out.push_back({O::N, O::N, 64, 64, 64, 1024, dev});
    out.push_back({O::N, O::T, 37, 129, 41, 100, dev, 1.f, 0.f});
    out.push_back({O::T, O::N, 129, 37, 200, 50, dev});
    out.push_back({O::T, O::T, 200, 136, 72, 64, dev, -1.25f, 0.f});
    out.push_back({O::N, O::T, 300, 200, 1000, 12, dev});  // a K longer than the ring: the producer warp
    out.push_back({O::N, O::N, 256, 256, 256, 32, dev, 1.f, 0.f});
    out.push_back({O::N, O::N, 64, 96, 128, 300, dev, 1.f, 1.f, Accum::F32, ref::Fill::SmallInts});
    out.push_back({O::N, O::T, 64, 64, 64, 200, dev, 0.5f, 0.25f, Accum::F16});
    out.push_back({O::T, O::T, 50, 70, 0, 10, dev});  // K = 0: D = beta·C
  }
  out.push_back({O::T, O::N, 100, 100, 100, 1, true});  // one product
  // More host pointers than one map writer takes in its parameters: three writer launches.
  out.push_back({O::N, O::T, 16, 24, 32, 2500, false});
  return within_max_dim(out);
}

class PointerBatches : public testing::TestWithParam<PointerCase> {};

TEST_P(PointerBatches, EveryProductMatchesReference) {
  SKIP_WITHOUT_ENGINE();
  const PointerCase& pc = GetParam();
  const Scatter s = scatter(pc, 7 + pc.count);
  std::vector<__half> host(static_cast<std::size_t>(s.total));
  ref::fill_random(host.data(), host.size(), 31 + pc.count, pc.fill);
  DeviceHalves dev(host.size());
  dev.upload(host);
  PointerArrays p(s, dev.get(), pc.device_arrays);
  const Status st = run(pc, p, one_launch(pc));
  ASSERT_EQ(st, Status::Success) << status_string(st) << ": " << last_error_message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_products(pc, s, host, dev.download(host.size()));
}

INSTANTIATE_TEST_SUITE_P(Api, PointerBatches, testing::ValuesIn(pointer_cases()),
                         [](const testing::TestParamInfo<PointerCase>& info) { return label(info.param); });

/// The kernel nodes a call queues, counted in a captured graph.
std::size_t kernels_queued(const std::function<Status(cudaStream_t)>& call) {
  cudaStream_t stream;
  EXPECT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  cudaGraph_t graph;
  EXPECT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
  const Status s = call(stream);
  EXPECT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
  EXPECT_EQ(s, Status::Success) << last_error_message();
  std::size_t count = 0;
  EXPECT_EQ(cudaGraphGetNodes(graph, nullptr, &count), cudaSuccess);
  std::vector<cudaGraphNode_t> nodes(count);
  EXPECT_EQ(cudaGraphGetNodes(graph, nodes.data(), &count), cudaSuccess);
  std::size_t kernels = 0;
  for (cudaGraphNode_t n : nodes) {
    cudaGraphNodeType type;
    EXPECT_EQ(cudaGraphNodeGetType(n, &type), cudaSuccess);
    kernels += type == cudaGraphNodeTypeKernel;
  }
  cudaGraphDestroy(graph);
  cudaStreamDestroy(stream);
  return kernels;
}

// Opted in, 1,024 scattered products queue the map writer and one launch; by default, one
// launch per product. Device arrays take one writer whatever their count, host arrays one per
// 1,024 products.
TEST(PointerBatchLaunches, HostArraysRunInOneLaunchWhenAsked) {
  SKIP_WITHOUT_ENGINE();
  const PointerCase pc{Op::N, Op::N, 64, 64, 64, 1024, false};
  const Scatter s = scatter(pc, 3);
  DeviceHalves dev(static_cast<std::size_t>(s.total));
  PointerArrays p(s, dev.get(), false);
  EXPECT_EQ(kernels_queued([&](cudaStream_t st) { return run(pc, p, one_launch(pc, st)); }), 2u);
  GemmOptions plain;
  EXPECT_EQ(kernels_queued([&](cudaStream_t st) {
              plain.stream = st;
              return run(pc, p, plain);
            }),
            1024u);
  PointerArrays q(s, dev.get(), true);
  EXPECT_EQ(kernels_queued([&](cudaStream_t st) { return run(pc, q, one_launch(pc, st)); }), 2u);
  // 2,500 host pointers: a map writer per 1,024 of them, then the one launch.
  const PointerCase many{Op::N, Op::N, 16, 16, 16, 2500, false};
  const Scatter sm = scatter(many, 4);
  DeviceHalves dm(static_cast<std::size_t>(sm.total));
  PointerArrays pm(sm, dm.get(), false);
  EXPECT_EQ(kernels_queued([&](cudaStream_t st) { return run(many, pm, one_launch(many, st)); }), 4u);
}

// The same call twice gives the same bits, on device and on host arrays.
TEST(PointerBatchLaunches, BitwiseRepeatable) {
  SKIP_WITHOUT_ENGINE();
  for (bool on_device : {true, false}) {
    const PointerCase pc{Op::T, Op::N, 129, 200, 300, 40, on_device, 1.f, 0.f};
    const Scatter s = scatter(pc, 5);
    std::vector<__half> host(static_cast<std::size_t>(s.total));
    ref::fill_random(host.data(), host.size(), 9, ref::Fill::Uniform);
    DeviceHalves dev(host.size());
    dev.upload(host);
    PointerArrays p(s, dev.get(), on_device);
    ASSERT_EQ(run(pc, p, one_launch(pc)), Status::Success) << last_error_message();
    const std::vector<__half> first = dev.download(host.size());
    ASSERT_EQ(run(pc, p, one_launch(pc)), Status::Success) << last_error_message();
    const std::vector<__half> second = dev.download(host.size());
    ASSERT_EQ(std::memcmp(first.data(), second.data(), first.size() * 2), 0) << (on_device ? "device" : "host");
  }
}

// A captured call replays the pointers the device arrays hold at replay: the same graph run
// again over other matrices (the lists swapped) computes those. Host arrays replay as captured.
TEST(PointerBatchLaunches, GraphCaptureAndReplay) {
  SKIP_WITHOUT_ENGINE();
  for (bool on_device : {true, false}) {
    const PointerCase pc{Op::N, Op::T, 96, 80, 128, 33, on_device, 1.f, 0.f};
    const Scatter s = scatter(pc, 11);
    Scatter other = s;  // product i takes product (i + 1)'s matrices
    std::rotate(other.a.begin(), other.a.begin() + 1, other.a.end());
    std::rotate(other.b.begin(), other.b.begin() + 1, other.b.end());
    std::rotate(other.c.begin(), other.c.begin() + 1, other.c.end());
    std::vector<__half> host(static_cast<std::size_t>(s.total));
    ref::fill_random(host.data(), host.size(), 13, ref::Fill::Uniform);
    DeviceHalves dev(host.size());
    dev.upload(host);
    PointerArrays p(s, dev.get(), on_device);
    cudaStream_t stream;
    ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
    cudaGraph_t graph;
    cudaGraphExec_t exec;
    ASSERT_EQ(cudaStreamBeginCapture(stream, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    const Status st = run(pc, p, one_launch(pc, stream));
    ASSERT_EQ(cudaStreamEndCapture(stream, &graph), cudaSuccess);
    ASSERT_EQ(st, Status::Success) << last_error_message();
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
    ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
    expect_products(pc, s, host, dev.download(host.size()));
    if (on_device) {
      dev.upload(host);
      PointerArrays moved(other, dev.get(), false);
      p.a_ = moved.a_, p.b_ = moved.b_, p.c_ = moved.c_;
      p.upload();
      ASSERT_EQ(cudaGraphLaunch(exec, stream), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(stream), cudaSuccess);
      expect_products(pc, other, host, dev.download(host.size()));
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(stream);
  }
}

// Entries of device arrays the map writer refuses (a null A, a B not 16-byte aligned, a null C)
// skip their products, C untouched; the others run.
TEST(PointerBatchLaunches, RefusedDeviceEntriesSkipTheirProducts) {
  SKIP_WITHOUT_ENGINE();
  const PointerCase pc{Op::N, Op::N, 64, 72, 96, 20, true};
  const Scatter s = scatter(pc, 17);
  std::vector<__half> host(static_cast<std::size_t>(s.total));
  ref::fill_random(host.data(), host.size(), 19, ref::Fill::Uniform);
  DeviceHalves dev(host.size());
  dev.upload(host);
  PointerArrays p(s, dev.get(), true);
  p.a_[3] = nullptr, p.b_[7] = p.b_[7] + 1, p.c_[11] = nullptr;
  p.upload();
  ASSERT_EQ(run(pc, p, one_launch(pc)), Status::Success) << last_error_message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  expect_products(pc, s, host, dev.download(host.size()), {3, 7, 11});
}

// Host arrays of products that depend on each other keep the ordered launches when opted in: a
// chain where product 1 reads the C product 0 writes, and two products adding into one C.
TEST(PointerBatchLaunches, DependentHostProductsRunInOrder) {
  SKIP_WITHOUT_ENGINE();
  constexpr std::int64_t n = 64;
  for (const std::vector<std::array<int, 3>>& list :
       {std::vector<std::array<int, 3>>{{0, 1, 3}, {3, 4, 5}}, {{0, 1, 6}, {2, 3, 6}, {4, 5, 7}}}) {
    std::vector<__half> host(static_cast<std::size_t>(8 * n * n));
    ref::fill_random(host.data(), host.size(), 23, ref::Fill::SmallInts);
    DeviceHalves dev(host.size());
    dev.upload(host);
    std::vector<const __half*> pa, pb;
    std::vector<__half*> pc;
    for (const auto& [a, b, c] : list)
      pa.push_back(dev.get() + a * n * n), pb.push_back(dev.get() + b * n * n), pc.push_back(dev.get() + c * n * n);
    GemmOptions o;
    o.pointer_batch_in_one_launch = true;
    ASSERT_EQ(gemm_batched(Op::N, Op::N, n, n, n, 1.f, pa.data(), n, pb.data(), n, 1.f, pc.data(), n,
                           static_cast<std::int64_t>(list.size()), o),
              Status::Success)
        << last_error_message();
    const std::vector<__half> got = dev.download(host.size());
    std::vector<__half> want = host;
    for (const auto& [a, b, c] : list) {
      const ref::Reference r = ref::reference_gemm(Op::N, Op::N, n, n, n, 1.0, want.data() + a * n * n, n,
                                                   want.data() + b * n * n, n, 1.0, want.data() + c * n * n, n);
      for (std::int64_t x = 0; x < n * n; ++x)
        want[static_cast<std::size_t>(c * n * n + x)] = __float2half(static_cast<float>(r.c[static_cast<std::size_t>(x)]));
    }
    for (std::size_t x = 0; x < host.size(); ++x)
      ASSERT_EQ(__half2float(got[x]), __half2float(want[x])) << "element " << x;
  }
}

// Device arrays answer with a status where the call cannot run: a named ladder kernel, lda not
// a multiple of 8, host and device arrays mixed.
TEST(PointerBatchLaunches, DeviceArraysRefusedWithAStatus) {
  SKIP_WITHOUT_ENGINE();
  const PointerCase pc{Op::N, Op::N, 64, 64, 64, 4, true};
  const Scatter s = scatter(pc, 29);
  DeviceHalves dev(static_cast<std::size_t>(s.total));
  PointerArrays p(s, dev.get(), true);
  GemmOptions o = one_launch(pc);
  o.kernel = "cuda.naive";
  EXPECT_EQ(run(pc, p, o), Status::InvalidArgument) << last_error_message();
  EXPECT_EQ(gemm_batched(Op::N, Op::N, 64, 64, 60, 1.f, p.a(), 60, p.b(), 64, 0.f, p.c(), 64, 4), Status::Misaligned);
  EXPECT_EQ(gemm_batched(Op::N, Op::N, 64, 64, 64, 1.f, p.a(), 64, p.a_.data(), 64, 0.f, p.c(), 64, 4),
            Status::InvalidArgument);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

}  // namespace
}  // namespace hgemm::test
