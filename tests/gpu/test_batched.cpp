// SPDX-License-Identifier: Apache-2.0
// The batched API on a real device: every product of a batch against the fp64 reference, for
// batch = 1, 3 and 64, ragged shapes, strided (including a broadcast A with stride 0) and
// pointer-array forms, through "auto" and explicitly named kernels of each family. Pointer arrays
// come evenly spaced (run as one strided launch) and in reverse order (one launch per product);
// products that depend on each other run in order.
#include <algorithm>
#include <cstring>
#include <ostream>

#include "gpu_util.h"

namespace hgemm::test {
namespace {

struct BatchCase {
  std::string kernel;
  Accum accum;
  Op op_a, op_b;
  std::int64_t m, n, k, batch;
  bool pointer_arrays;
  bool broadcast_a;  // stride_a = 0: one A for every product
  bool aligned = false;  // leading dimensions and strides multiples of 8 (for aligned-only kernels)
  bool reversed = false;  // pointer arrays from the last matrix to the first: no common stride
};

std::string batch_label(const BatchCase& c) {
  std::string s = c.kernel + (c.accum == Accum::F16 ? "_acc16_" : "_acc32_") + (c.op_a == Op::N ? "n" : "t") +
                  (c.op_b == Op::N ? "n" : "t") + "_" + std::to_string(c.m) + "x" + std::to_string(c.n) + "x" +
                  std::to_string(c.k) + "_b" + std::to_string(c.batch) + (c.pointer_arrays ? "_ptrs" : "_strided") +
                  (c.broadcast_a ? "_bcastA" : "") + (c.aligned ? "_aligned" : "") + (c.reversed ? "_reversed" : "");
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

std::string batch_name(const testing::TestParamInfo<BatchCase>& info) { return batch_label(info.param); }

// How gtest shows a parameter (instead of its bytes).
void PrintTo(const BatchCase& c, std::ostream* os) { *os << batch_label(c); }

std::vector<BatchCase> batch_cases() {
  std::vector<BatchCase> out;
  for (const char* kernel : {"auto", "cuda.sliced_k", "sm90.wgmma_tma_ws_persistent", "engine.sm90", "cublas.acc32"})
    for (std::int64_t batch : {1, 3, 64})
      for (bool ptrs : {false, true}) {
        out.push_back({kernel, Accum::F32, Op::N, Op::N, 37, 129, 41, batch, ptrs, false});
        const Accum second = std::string(kernel) == "cublas.acc32" ? Accum::F32 : Accum::F16;
        out.push_back({kernel, second, Op::T, Op::N, 7, 300, 130, batch, ptrs, !ptrs});
      }
  out.push_back({"auto", Accum::F32, Op::N, Op::T, 129, 7, 1000, 3, false, true});
  out.push_back({"auto", Accum::F32, Op::N, Op::N, 16, 1000, 2048, 3, false, false});  // skinny, split-K
  // Aligned rows, for the paths auto takes only then: the decode kernel (M <= 16, op nt) and, on
  // Hopper, the engine's TMA-stored tiles.
  for (std::int64_t batch : {1, 3, 64}) {
    out.push_back({"auto", Accum::F32, Op::N, Op::T, 16, 1000, 2048, batch, batch == 3, false, true});
    out.push_back({"skinny.m16_mma_nt", Accum::F16, Op::N, Op::T, 7, 300, 130, batch, batch != 3, batch == 3, true});
    out.push_back({"auto", Accum::F16, Op::N, Op::N, 300, 200, 500, batch, batch == 64, false, true});
  }
  // Many small products with a short K (the persistent kernels over many tiles on Hopper).
  out.push_back({"auto", Accum::F32, Op::N, Op::T, 64, 64, 64, 300, false, false, true});
  out.push_back({"auto", Accum::F16, Op::T, Op::T, 130, 70, 200, 100, false, true});
  out.push_back({"engine.sm90", Accum::F32, Op::T, Op::N, 33, 200, 256, 150, false, false});
  out.push_back({"engine.sm90_pingpong", Accum::F32, Op::T, Op::N, 33, 200, 256, 150, false, false});
  out.push_back({"engine.sm90_pingpong", Accum::F32, Op::N, Op::T, 300, 520, 700, 5, false, false, true});
  for (const char* kernel : {"auto", "engine.sm90", "engine.sm90_pingpong"})
    for (std::int64_t batch : {3, 64}) {
      out.push_back({kernel, Accum::F32, Op::N, Op::N, 37, 129, 41, batch, true, false, false, true});
      out.push_back({kernel, Accum::F32, Op::T, Op::T, 200, 136, 72, batch, true, false, true, true});
    }
  return out;
}

class Batched : public testing::TestWithParam<BatchCase> {};

TEST_P(Batched, EveryProductMatchesReference) {
  HGEMM_SKIP_WITHOUT_GPU();
  const BatchCase& bc = GetParam();
  {
    GemmOptions probe;
    probe.kernel = bc.kernel;
    __half* none = nullptr;
    if (std::string(bc.kernel) != "auto" &&
        resolve_kernel(Op::N, Op::N, 0, 0, 0, none, 1, none, 1, none, 1, probe, nullptr) == Status::UnsupportedArch)
      GTEST_SKIP() << last_error_message();
  }
  const std::int64_t a_rows = bc.op_a == Op::N ? bc.m : bc.k, a_cols = bc.op_a == Op::N ? bc.k : bc.m;
  const std::int64_t b_rows = bc.op_b == Op::N ? bc.k : bc.n, b_cols = bc.op_b == Op::N ? bc.n : bc.k;
  // Odd padding between matrices (strides not multiples of 8) and inside rows (ld > width), or
  // for aligned cases the next multiple of 8 plus 8.
  auto pad = [&](std::int64_t width, std::int64_t odd) { return bc.aligned ? (width + 7) / 8 * 8 + 8 : width + odd; };
  const std::int64_t lda = pad(a_cols, 3), ldb = pad(b_cols, 1), ldc = pad(bc.n, 2);
  const std::int64_t gap = bc.aligned ? 8 : 0;  // strides below: +5, +3, +7 halves, or 8
  const std::int64_t stride_a = bc.broadcast_a ? 0 : a_rows * lda + (gap ? gap : 5),
                     stride_b = b_rows * ldb + (gap ? gap : 3), stride_c = bc.m * ldc + (gap ? gap : 7);
  const std::int64_t batch = bc.batch;
  const std::int64_t a_count = bc.broadcast_a ? 1 : batch;
  std::vector<__half> a(static_cast<std::size_t>(a_count * (a_rows * lda + (gap ? gap : 5)))),
      b(static_cast<std::size_t>(batch * stride_b)), c(static_cast<std::size_t>(batch * stride_c));
  ref::fill_random(a.data(), a.size(), 11 + batch, ref::Fill::Uniform);
  ref::fill_random(b.data(), b.size(), 12 + batch, ref::Fill::Uniform);
  ref::fill_random(c.data(), c.size(), 13 + batch, ref::Fill::Uniform);
  const float alpha = 0.75f, beta = -0.5f;

  DeviceHalves da(a.size()), db(b.size()), dc(c.size());
  da.upload(a, 0), db.upload(b, 0), dc.upload(c, 0);
  GemmOptions opt;
  opt.accum = bc.accum;
  opt.kernel = bc.kernel;
  Status s;
  if (bc.pointer_arrays) {
    std::vector<const __half*> pa, pb;
    std::vector<__half*> pc;
    for (std::int64_t i = 0; i < batch; ++i) {
      pa.push_back(da.get() + i * stride_a), pb.push_back(db.get() + i * stride_b), pc.push_back(dc.get() + i * stride_c);
    }
    if (bc.reversed)  // product i is still A_i·B_i into C_i, listed from the last
      std::reverse(pa.begin(), pa.end()), std::reverse(pb.begin(), pb.end()), std::reverse(pc.begin(), pc.end());
    s = gemm_batched(bc.op_a, bc.op_b, bc.m, bc.n, bc.k, alpha, pa.data(), lda, pb.data(), ldb, beta, pc.data(), ldc,
                     batch, opt);
  } else {
    s = gemm_strided_batched(bc.op_a, bc.op_b, bc.m, bc.n, bc.k, alpha, da.get(), lda, stride_a, db.get(), ldb,
                             stride_b, beta, dc.get(), ldc, stride_c, batch, opt);
  }
  ASSERT_EQ(s, Status::Success) << status_string(s) << ": " << last_error_message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<__half> got = dc.download(c.size(), 0);

  for (std::int64_t i = 0; i < batch; ++i) {
    const ref::Reference want =
        ref::reference_gemm(bc.op_a, bc.op_b, bc.m, bc.n, bc.k, alpha, a.data() + i * stride_a, lda,
                            b.data() + i * stride_b, ldb, beta, c.data() + i * stride_c, ldc);
    const ref::ErrorStats e = ref::compare(want, got.data() + i * stride_c, ldc);
    EXPECT_EQ(e.nonfinite, 0) << "product " << i;
    EXPECT_LE(e.rel_fro, tolerance_rel_fro(bc.accum, bc.k)) << "product " << i;
    EXPECT_LE(e.max_scaled, tolerance_max_scaled(bc.accum, bc.k)) << "product " << i;
    // The gaps between C matrices (and the ld padding) are untouched.
    for (std::int64_t r = 0; r < bc.m; ++r)
      for (std::int64_t j = bc.n; j < ldc; ++j) {
        const std::size_t at = static_cast<std::size_t>(i * stride_c + r * ldc + j);
        ASSERT_EQ(std::memcmp(&got[at], &c[at], 2), 0) << "padding written, product " << i;
      }
    for (std::int64_t g = bc.m * ldc; g < stride_c; ++g) {
      const std::size_t at = static_cast<std::size_t>(i * stride_c + g);
      ASSERT_EQ(std::memcmp(&got[at], &c[at], 2), 0) << "gap after product " << i << " written";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Api, Batched, testing::ValuesIn(batch_cases()), batch_name);

/// gemm_batched of square n×n products over one buffer of n×n matrices: product i reads A at
/// matrix a[i], B at b[i] and updates C at c[i] (beta = 1); the host computes the same products
/// one after another, in order, each rounded to f16, as launches in order would. Small integers
/// (every sum exact in fp32), so the two agree bit for bit.
void expect_products_in_order(const std::vector<int>& a, const std::vector<int>& b, const std::vector<int>& c) {
  constexpr std::int64_t n = 64;  // aligned: only the products' dependence keeps them apart
  const int matrices = 1 + std::max({*std::max_element(a.begin(), a.end()), *std::max_element(b.begin(), b.end()),
                                     *std::max_element(c.begin(), c.end())});
  std::vector<__half> host(static_cast<std::size_t>(matrices * n * n));
  ref::fill_random(host.data(), host.size(), 5, ref::Fill::SmallInts);
  DeviceHalves dev(host.size());
  dev.upload(host);
  std::vector<const __half*> pa, pb;
  std::vector<__half*> pc;
  for (std::size_t i = 0; i < a.size(); ++i)
    pa.push_back(dev.get() + a[i] * n * n), pb.push_back(dev.get() + b[i] * n * n), pc.push_back(dev.get() + c[i] * n * n);
  const Status s = gemm_batched(Op::N, Op::N, n, n, n, 1.f, pa.data(), n, pb.data(), n, 1.f, pc.data(), n,
                                static_cast<std::int64_t>(a.size()));
  ASSERT_EQ(s, Status::Success) << last_error_message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<__half> got = dev.download(host.size());
  std::vector<__half> want = host;
  for (std::size_t i = 0; i < a.size(); ++i) {
    const ref::Reference r = ref::reference_gemm(Op::N, Op::N, n, n, n, 1.0, want.data() + a[i] * n * n, n,
                                                 want.data() + b[i] * n * n, n, 1.0, want.data() + c[i] * n * n, n);
    for (std::int64_t x = 0; x < n * n; ++x)
      want[static_cast<std::size_t>(c[i] * n * n + x)] = __float2half(static_cast<float>(r.c[static_cast<std::size_t>(x)]));
  }
  for (std::size_t x = 0; x < host.size(); ++x)
    ASSERT_EQ(__half2float(got[x]), __half2float(want[x])) << "element " << x << " (matrix " << x / (n * n) << ")";
}

// Later products read the C that product 0 writes. Two products' pointers are always evenly
// spaced, and the three here are too (A 3, B 1 and C 7 matrices apart): still they run in order,
// each seeing the update before it.
TEST(BatchedOrder, AProductReadsTheCBeforeIt) {
  HGEMM_SKIP_WITHOUT_GPU();
  expect_products_in_order({0, 3}, {1, 4}, {3, 5});
  expect_products_in_order({0, 3, 6}, {1, 2, 3}, {3, 10, 17});
}

// Two products update one C: both updates land, one after the other.
TEST(BatchedOrder, ProductsSharingACAddUp) {
  HGEMM_SKIP_WITHOUT_GPU();
  expect_products_in_order({0, 2, 4}, {1, 3, 5}, {6, 6, 7});
}

}  // namespace
}  // namespace hgemm::test
