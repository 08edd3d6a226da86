// SPDX-License-Identifier: Apache-2.0
// The public API on a real device: dispatch, "auto", pointer checks, streams, 64-bit offsets.
#include <cstring>
#include <iostream>
#include <thread>

#include "common/device.h"
#include "gpu_util.h"

namespace hgemm::test {
namespace {

class ApiGpu : public testing::Test {
 protected:
  void SetUp() override { HGEMM_SKIP_WITHOUT_GPU(); }
};

std::string resolve(Op oa, Op ob, Accum acc, std::int64_t m, std::int64_t n, std::int64_t k, const __half* a,
                    const __half* b, __half* c) {
  GemmOptions o;
  o.accum = acc;
  std::string id;
  const Status s = resolve_kernel(oa, ob, m, n, k, a, oa == Op::N ? k : m, b, ob == Op::N ? n : k, c, n, o, &id);
  EXPECT_EQ(s, Status::Success) << last_error_message();
  return id;
}

// On the device: "auto" names what runs, as the policy decides it for this GPU (the choices
// themselves are pinned on described devices by tests/cpu/test_dispatch.cpp): on an sm_90 GPU
// with sm_90a code the engine for every shape; elsewhere the decode kernel for M <= 16 with B
// stored N×K and the sm_80-style tensor-core ladder.
TEST_F(ApiGpu, AutoPicksTheEngineOnHopperAndTheLadderElsewhere) {
  DeviceHalves a(64 * 64), b(64 * 64), c(64 * 64);
  GemmOptions probe;
  probe.kernel = "engine.sm90";
  const bool hopper = resolve_kernel(Op::N, Op::N, 64, 64, 64, a.get(), 64, b.get(), 64, c.get(), 64, probe,
                                     nullptr) == Status::Success;
  // resolve_kernel reads no memory: the sizes below need not fit the buffers.
  const std::string engine = "engine.sm90";
  EXPECT_EQ(resolve(Op::N, Op::N, Accum::F16, 4096, 4096, 4096, a.get(), b.get(), c.get()),
            hopper ? engine : "mma.m16n8k16_stages_swizzle");
  EXPECT_EQ(resolve(Op::T, Op::N, Accum::F32, 4096, 4096, 4096, a.get(), b.get(), c.get()),
            hopper ? engine : "mma.m16n8k16_mma2x4_warp4x4");
  EXPECT_EQ(resolve(Op::N, Op::N, Accum::F16, 512, 512, 512, a.get(), b.get(), c.get()),
            hopper ? engine : "mma.m16n8k16_stages_swizzle");
  EXPECT_EQ(resolve(Op::N, Op::T, Accum::F16, 16, 4096, 4096, a.get(), b.get(), c.get()),
            hopper ? engine : "skinny.m16_mma_nt");
  EXPECT_EQ(resolve(Op::N, Op::T, Accum::F32, 17, 4096, 4096, a.get(), b.get(), c.get()),
            hopper ? engine : "mma.m16n8k16_stages_swizzle");
  // ... but not a long K over few columns, which a split-K kernel spreads wider.
  EXPECT_NE(resolve(Op::N, Op::T, Accum::F32, 16, 64, 65536, a.get(), b.get(), c.get()), "skinny.m16_mma_nt");
}

// The device the policy plans for, read from CUDA: on Hopper, cluster occupancy for every cluster
// size the engine launches (the described H200 of the CPU tests carries these numbers).
TEST_F(ApiGpu, DescribesTheDevice) {
  detail::Device d;
  std::string message;
  ASSERT_EQ(detail::current_device(&d, &message), Status::Success) << message;
  std::cout << "device: " << d.name << ", cc " << d.cc << ", " << d.sms << " SMs, clusters that fit:";
  for (int n = 1; n <= 8; ++n) std::cout << " " << n << ":" << d.clusters[n];
  std::cout << "\n";
  EXPECT_GT(d.sms, 0);
  if (d.cc < 90) return;
  EXPECT_EQ(d.clusters[1], d.sms) << "one CTA per SM";
  for (int n = 2; n <= 8; ++n) {
    EXPECT_LE(d.clusters[n] * n, d.sms) << "clusters of " << n;
    EXPECT_GE(d.clusters[n], 1) << "clusters of " << n;
  }
}

TEST_F(ApiGpu, ShapeLimitedKernelRefusesOtherShapes) {
  DeviceHalves a(64 * 64), b(64 * 64), c(64 * 64);
  GemmOptions o;
  o.kernel = "skinny.m16_mma_nt";
  EXPECT_EQ(gemm(Op::N, Op::T, 17, 64, 64, 1.f, a.get(), 64, b.get(), 64, 0.f, c.get(), 64, o),
            Status::UnsupportedShape);
  EXPECT_NE(last_error_message().find("M = 17"), std::string::npos) << last_error_message();
  EXPECT_EQ(gemm(Op::N, Op::T, 16, 64, 64, 1.f, a.get(), 64, b.get(), 64, 0.f, c.get(), 64, o), Status::Success)
      << last_error_message();
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST_F(ApiGpu, AutoNeverPicksAnEntryThatRefusesTheProblem) {
  DeviceHalves a(200 * 200 + 1), b(200 * 200 + 1), c(200 * 200 + 1);
  for (const Case& cs : standard_cases()) {
    if (cs.m > 200 || cs.n > 200 || cs.k > 200) continue;
    for (Accum acc : {Accum::F16, Accum::F32}) {
      GemmOptions o;
      o.accum = acc;
      std::string id;
      ASSERT_EQ(resolve_kernel(cs.op_a, cs.op_b, cs.m, cs.n, cs.k, a.get() + cs.offset, cs.lda(), b.get() + cs.offset,
                               cs.ldb(), c.get() + cs.offset, cs.ldc(), o, &id),
                Status::Success)
          << cs.name() << ": " << last_error_message();
      o.kernel = id;  // asking for that kernel explicitly must be accepted too
      std::string again;
      EXPECT_EQ(resolve_kernel(cs.op_a, cs.op_b, cs.m, cs.n, cs.k, a.get() + cs.offset, cs.lda(), b.get() + cs.offset,
                               cs.ldb(), c.get() + cs.offset, cs.ldc(), o, &again),
                Status::Success)
          << cs.name() << " " << id << ": " << last_error_message();
    }
  }
}

TEST_F(ApiGpu, AutoMatchesReferenceOnEveryOp) {
  for (const Case& cs : standard_cases()) {
    if (cs.name().find("127x129x129_") != 0 && cs.name().find("129x127x1000_") != 0) continue;
    const CaseData& d = case_data(cs);
    for (Accum acc : {Accum::F16, Accum::F32}) {
      DeviceHalves a(d.a.size()), b(d.b.size()), c(d.c.size());
      a.upload(d.a), b.upload(d.b), c.upload(d.c);
      GemmOptions o;
      o.accum = acc;
      ASSERT_EQ(gemm(cs.op_a, cs.op_b, cs.m, cs.n, cs.k, cs.alpha, a.get(), cs.lda(), b.get(), cs.ldb(), cs.beta,
                     c.get(), cs.ldc(), o),
                Status::Success)
          << last_error_message();
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
      const std::vector<__half> got = c.download(d.c.size());
      const ref::ErrorStats e = ref::compare(d.reference, got.data(), cs.ldc());
      EXPECT_EQ(e.nonfinite, 0) << cs.name();
      EXPECT_LE(e.rel_fro, tolerance_rel_fro(acc, cs.k)) << cs.name();
    }
  }
}

TEST_F(ApiGpu, ExplicitKernelRefusesWhatItDoesNotImplement) {
  DeviceHalves a(64 * 64), b(64 * 64), c(64 * 64);
  GemmOptions o;
  o.kernel = "cuda.t8x8_hfma2";
  o.accum = Accum::F32;
  EXPECT_EQ(gemm(Op::N, Op::N, 64, 64, 64, 1.f, a.get(), 64, b.get(), 64, 0.f, c.get(), 64, o), Status::UnsupportedAccum);
  EXPECT_NE(last_error_message().find("f32"), std::string::npos) << last_error_message();
  o.kernel = "cuda.t8x8_f16x8_pack_bcf_dbuf";
  EXPECT_EQ(gemm(Op::T, Op::N, 64, 64, 64, 1.f, a.get(), 64, b.get(), 64, 0.f, c.get(), 64, o), Status::UnsupportedOp);
  o.kernel = "cuda.nope";
  EXPECT_EQ(gemm(Op::N, Op::N, 64, 64, 64, 1.f, a.get(), 64, b.get(), 64, 0.f, c.get(), 64, o), Status::UnknownKernel);
}

TEST_F(ApiGpu, HostPointersAreRefusedBeforeLaunch) {
  std::vector<__half> host(64 * 64);
  DeviceHalves b(64 * 64), c(64 * 64);
  EXPECT_EQ(gemm(Op::N, Op::N, 64, 64, 64, 1.f, host.data(), 64, b.get(), 64, 0.f, c.get(), 64), Status::InvalidPointer);
  EXPECT_NE(last_error_message().find("A"), std::string::npos);
  EXPECT_EQ(gemm(Op::N, Op::N, 64, 64, 64, 1.f, b.get(), 64, b.get(), 64, 0.f, host.data(), 64), Status::InvalidPointer);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);  // nothing was launched, the context is healthy
}

// check_pointers = false skips the driver's answer (resolving launches nothing, so a host pointer
// is safe to pass there) and changes no bit of a product.
TEST_F(ApiGpu, UncheckedPointersSkipOnlyTheCheck) {
  std::vector<__half> host(64 * 64);
  DeviceHalves a(64 * 64), b(64 * 64), c(64 * 64);
  GemmOptions o;
  std::string id;
  EXPECT_EQ(resolve_kernel(Op::N, Op::N, 64, 64, 64, host.data(), 64, b.get(), 64, c.get(), 64, o, &id),
            Status::InvalidPointer);
  o.check_pointers = false;
  EXPECT_EQ(resolve_kernel(Op::N, Op::N, 64, 64, 64, host.data(), 64, b.get(), 64, c.get(), 64, o, &id),
            Status::Success)
      << last_error_message();
  std::vector<__half> values(64 * 64);
  for (std::size_t i = 0; i < values.size(); ++i) values[i] = __float2half(static_cast<float>(i % 13) - 6.f);
  a.upload(values), b.upload(values);
  std::vector<__half> got[2];
  for (bool check : {true, false}) {
    o.check_pointers = check;
    ASSERT_EQ(gemm(Op::N, Op::T, 64, 64, 64, 1.f, a.get(), 64, b.get(), 64, 0.f, c.get(), 64, o), Status::Success)
        << last_error_message();
    ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
    got[check] = c.download(64 * 64);
  }
  EXPECT_EQ(std::memcmp(got[0].data(), got[1].data(), 64 * 64 * sizeof(__half)), 0);
}

TEST_F(ApiGpu, EmptyProblemsSucceedWithoutLaunching) {
  DeviceHalves a(64), b(64), c(64);
  // M = 0: C is empty; B (8×8) is still validated. N = 0 likewise with A.
  EXPECT_EQ(gemm(Op::N, Op::N, 0, 8, 8, 1.f, nullptr, 8, b.get(), 8, 0.f, nullptr, 8), Status::Success)
      << last_error_message();
  EXPECT_EQ(gemm(Op::N, Op::N, 8, 0, 8, 1.f, a.get(), 8, nullptr, 1, 0.f, nullptr, 1), Status::Success)
      << last_error_message();
  EXPECT_EQ(gemm(Op::N, Op::N, 0, 8, 8, 1.f, nullptr, 8, nullptr, 8, 0.f, nullptr, 8), Status::NullPointer);
  EXPECT_EQ(cudaDeviceSynchronize(), cudaSuccess);
}

TEST_F(ApiGpu, ThreadsCanCallConcurrently) {
  const Case* cs = nullptr;
  for (const Case& c : standard_cases())
    if (c.name() == "127x128x129_nn") cs = &c;
  ASSERT_NE(cs, nullptr);
  const CaseData& d = case_data(*cs);
  std::vector<std::thread> threads;
  std::vector<double> errors(4, 1.0);
  for (int t = 0; t < 4; ++t)
    threads.emplace_back([&, t] {
      DeviceHalves a(d.a.size()), b(d.b.size()), c(d.c.size());
      a.upload(d.a), b.upload(d.b);
      cudaStream_t s;
      cudaStreamCreate(&s);
      GemmOptions o;
      o.stream = s;
      o.kernel = t % 2 ? "cublas.acc32" : "auto";
      if (gemm(Op::N, Op::N, cs->m, cs->n, cs->k, 1.f, a.get(), cs->lda(), b.get(), cs->ldb(), 0.f, c.get(), cs->ldc(),
               o) == Status::Success &&
          cudaStreamSynchronize(s) == cudaSuccess)
        errors[t] = ref::compare(d.reference, c.download(d.c.size()).data(), cs->ldc()).rel_fro;
      cudaStreamDestroy(s);
    });
  for (auto& th : threads) th.join();
  for (double e : errors) EXPECT_LE(e, tolerance_rel_fro(Accum::F32, cs->k));
}

// A GEMM captured into a CUDA graph and replayed computes each replay from that replay's inputs:
// what a launch leaves in its workspace (stream-K's flags and parked sums, split-K partial sums)
// must not stand in for the next replay's. The top sm90 rung, whose shapes here take stream-K,
// split-K and whole tiles on an H200.
TEST_F(ApiGpu, GraphReplaysUseTheirOwnInputs) {
  GemmOptions probe;
  probe.kernel = "sm90.wgmma_tma_ws_persistent";
  if (resolve_kernel(Op::N, Op::N, 0, 0, 0, nullptr, 1, nullptr, 1, nullptr, 1, probe, nullptr) == Status::UnsupportedArch)
    GTEST_SKIP() << probe.kernel << ": " << last_error_message();
  struct Shape {
    std::int64_t m, n, k;
  };
  for (const Shape sh : {Shape{17000, 200, 1600}, Shape{100, 1000, 4000}, Shape{1000, 1000, 1000}}) {
    const std::int64_t m = sh.m, n = sh.n, k = sh.k;
    std::vector<__half> h0(static_cast<std::size_t>(m * k)), h1(h0.size()), hb(static_cast<std::size_t>(k * n));
    ref::fill_random(h0.data(), h0.size(), 91, ref::Fill::Uniform);
    ref::fill_random(h1.data(), h1.size(), 92, ref::Fill::Uniform);
    ref::fill_random(hb.data(), hb.size(), 93, ref::Fill::Uniform);
    DeviceHalves a(h0.size()), b(hb.size()), c(static_cast<std::size_t>(m * n));
    b.upload(hb);
    cudaStream_t s;
    ASSERT_EQ(cudaStreamCreate(&s), cudaSuccess);
    GemmOptions o = probe;
    o.stream = s;
    auto run = [&] { return gemm(Op::N, Op::N, m, n, k, 1.f, a.get(), k, b.get(), n, 0.f, c.get(), n, o); };
    // Reference results: each input set run directly on the stream.
    std::vector<std::vector<__half>> want;
    for (const auto* h : {&h0, &h1}) {
      a.upload(*h);
      ASSERT_EQ(run(), Status::Success) << last_error_message();
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      want.push_back(c.download(static_cast<std::size_t>(m * n)));
    }
    cudaGraph_t graph;
    ASSERT_EQ(cudaStreamBeginCapture(s, cudaStreamCaptureModeThreadLocal), cudaSuccess);
    const Status captured = run();
    ASSERT_EQ(cudaStreamEndCapture(s, &graph), cudaSuccess);
    ASSERT_EQ(captured, Status::Success) << last_error_message();
    cudaGraphExec_t exec;
    ASSERT_EQ(cudaGraphInstantiate(&exec, graph, 0), cudaSuccess);
    for (int replay = 0; replay < 4; ++replay) {
      a.upload(replay % 2 ? h1 : h0);
      ASSERT_EQ(cudaMemset(c.get(), 0xFF, static_cast<std::size_t>(m * n) * sizeof(__half)), cudaSuccess);
      ASSERT_EQ(cudaGraphLaunch(exec, s), cudaSuccess);
      ASSERT_EQ(cudaStreamSynchronize(s), cudaSuccess);
      const std::vector<__half> got = c.download(static_cast<std::size_t>(m * n));
      EXPECT_EQ(std::memcmp(got.data(), want[replay % 2].data(), got.size() * sizeof(__half)), 0)
          << m << "x" << n << "x" << k << ", replay " << replay << " differs from the direct run";
    }
    cudaGraphExecDestroy(exec);
    cudaGraphDestroy(graph);
    cudaStreamDestroy(s);
  }
}

// A has more than 2^31 elements: offsets into it must be 64-bit in every kernel. Kernels that
// need aligned rows (KernelInfo::align > 1) get K and N that are multiples of 8; the others get
// odd ones, so their unaligned paths see the large offsets too.
TEST_F(ApiGpu, OffsetsBeyond2To31) {
  if (std::getenv("HGEMM_TEST_MAX_DIM")) GTEST_SKIP() << "large test skipped under HGEMM_TEST_MAX_DIM";
  struct Shape {
    std::int64_t n, k;
  };
  const std::int64_t m = 65539;                                  // m·k ≥ 2.15e9 > 2^31
  const Shape odd{5, 32771}, aligned{8, 32776};  // buffers sized for the larger, aligned one
  std::vector<__half> ha(static_cast<std::size_t>(m * aligned.k)), hb(static_cast<std::size_t>(aligned.k * aligned.n));
  ref::fill_random(ha.data(), ha.size(), 77, ref::Fill::SmallInts);
  ref::fill_random(hb.data(), hb.size(), 78, ref::Fill::SmallInts);
  DeviceHalves a(ha.size()), b(hb.size()), c(static_cast<std::size_t>(m * aligned.n));
  a.upload(ha), b.upload(hb);
  const std::vector<std::int64_t> rows = {0, 1, 32767, 32768, m / 2, m - 2, m - 1};
  for (const KernelInfo& info : kernels()) {
    if (!(info.ops & kOpNN)) continue;
    const auto [n, k] = info.align > 1 ? aligned : odd;  // A is m×k with lda = k, B k×n, C m×n
    for (Accum acc : {Accum::F16, Accum::F32}) {
      if (!(info.accums & accum_bit(acc))) continue;
      GemmOptions o;
      o.kernel = info.id, o.accum = acc;
      ASSERT_EQ(cudaMemset(c.get(), 0xFF, m * n * sizeof(__half)), cudaSuccess);
      ASSERT_EQ(gemm(Op::N, Op::N, m, n, k, 1.f, a.get(), k, b.get(), n, 0.f, c.get(), n, o), Status::Success)
          << info.id << ": " << last_error_message();
      ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << info.id;
      for (std::int64_t r : rows) {
        const std::vector<__half> got = c.download(n, r * n);
        for (std::int64_t j = 0; j < n; ++j) {
          double want = 0;
          for (std::int64_t kk = 0; kk < k; ++kk)
            want += double(__half2float(ha[r * k + kk])) * double(__half2float(hb[kk * n + j]));
          // Integer data, partial sums of a few hundred (std 2·sqrt(K) ≈ 360): exact in fp32, and in
          // fp16 below 2048; past 2048 fp16 steps by 2, so allow one step there.
          const double tol = (acc == Accum::F16 || std::abs(want) > 2048) ? 2.0 : 0.0;
          EXPECT_NEAR(__half2float(got[j]), want, tol)
              << info.id << (acc == Accum::F32 ? " f32" : " f16") << " row " << r << " col " << j;
        }
      }
    }
  }
}

}  // namespace
}  // namespace hgemm::test
