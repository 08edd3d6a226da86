// SPDX-License-Identifier: Apache-2.0
// hgemm::swiglu and swiglu_backward on a real device against an fp64 reference over the same
// rounded inputs: both layouts, every pair of Z and D types, ragged sizes, ld > width with the
// padding poisoned and checked unchanged, strided batches with gaps, bitwise repeatability.
// Tolerances: D rounded once to its type (half its unit roundoff, relative) on top of f32 math
// (a few ulp of f32 on each factor, scaled by the factors' size, which covers the cancellation in
// the gradient's 1 + x·(1 − s)).
#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include <cmath>
#include <cstring>
#include <random>

#include "gpu_util.h"
#include "hgemm/gated.h"

namespace hgemm::test {
namespace {

std::size_t size_of(DataType t) { return t == DataType::F32 ? 4 : 2; }

// A typed value stored in host bytes, and back.
void put(std::vector<unsigned char>& buf, DataType t, std::int64_t i, double v) {
  unsigned char* p = buf.data() + static_cast<std::size_t>(i) * size_of(t);
  if (t == DataType::F32) {
    const float f = static_cast<float>(v);
    std::memcpy(p, &f, 4);
  } else if (t == DataType::F16) {
    const __half h = __float2half_rn(static_cast<float>(v));
    std::memcpy(p, &h, 2);
  } else {
    const __nv_bfloat16 h = __float2bfloat16_rn(static_cast<float>(v));
    std::memcpy(p, &h, 2);
  }
}

double get(const std::vector<unsigned char>& buf, DataType t, std::int64_t i) {
  const unsigned char* p = buf.data() + static_cast<std::size_t>(i) * size_of(t);
  if (t == DataType::F32) {
    float f;
    std::memcpy(&f, p, 4);
    return f;
  }
  if (t == DataType::F16) {
    __half h;
    std::memcpy(&h, p, 2);
    return __half2float(h);
  }
  __nv_bfloat16 h;
  std::memcpy(&h, p, 2);
  return __bfloat162float(h);
}

double unit_roundoff(DataType t) { return t == DataType::F32 ? 0x1p-24 : t == DataType::F16 ? 0x1p-11 : 0x1p-8; }

class DeviceBytes {
 public:
  explicit DeviceBytes(const std::vector<unsigned char>& host) : bytes_(host.size()) {
    EXPECT_EQ(cudaMalloc(&ptr_, bytes_ ? bytes_ : 1), cudaSuccess);
    if (bytes_) EXPECT_EQ(cudaMemcpy(ptr_, host.data(), bytes_, cudaMemcpyHostToDevice), cudaSuccess);
  }
  ~DeviceBytes() { cudaFree(ptr_); }
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  void* get() const { return ptr_; }
  std::vector<unsigned char> download() const {
    std::vector<unsigned char> out(bytes_);
    EXPECT_EQ(cudaMemcpy(out.data(), ptr_, bytes_, cudaMemcpyDeviceToHost), cudaSuccess);
    return out;
  }

 private:
  void* ptr_ = nullptr;
  std::size_t bytes_;
};

struct GateCase {
  std::int64_t m, n, batch;
  GateLayout layout;
  DataType z_type, d_type;
};

std::string label(const GateCase& c) {
  auto t = [](DataType x) { return std::string(data_type_name(x)); };
  return std::to_string(c.m) + "x" + std::to_string(c.n) + "_x" + std::to_string(c.batch) + "_" +
         gate_layout_name(c.layout) + "_z" + t(c.z_type) + "_d" + t(c.d_type);
}
void PrintTo(const GateCase& c, std::ostream* os) { *os << label(c); }

std::vector<GateCase> gate_cases() {
  std::vector<GateCase> out;
  const DataType types[] = {DataType::F16, DataType::BF16, DataType::F32};
  for (GateLayout l : {GateLayout::Halves, GateLayout::Blocks8})
    for (DataType z : types)
      for (DataType d : types) {
        out.push_back({37, l == GateLayout::Blocks8 ? 40 : 45, 1, l, z, d});
        out.push_back({129, l == GateLayout::Blocks8 ? 1024 : 1031, 1, l, z, d});
        out.push_back({5, 8, 3, l, z, d});
        out.push_back({1, 4096, 2, l, z, d});
      }
  return out;
}

class GateTest : public ::testing::TestWithParam<GateCase> {};

// Columns of Z for column c of D, as GateLayout documents them.
std::int64_t gate_col(const GateCase& c, std::int64_t j) { return c.layout == GateLayout::Halves ? j : 16 * (j / 8) + j % 8; }
std::int64_t up_col(const GateCase& c, std::int64_t j) { return gate_col(c, j) + (c.layout == GateLayout::Halves ? c.n : 8); }

constexpr double kPoison = -12345.0;

TEST_P(GateTest, ForwardAndBackwardMatchTheReference) {
  HGEMM_SKIP_WITHOUT_GPU();
  const GateCase c = GetParam();
  const std::int64_t ldz = 2 * c.n + 6, ldd = c.n + 3, lddz = 2 * c.n + 10, lddd = c.n + 5;
  const std::int64_t sz = ldz * c.m + 16, sd = ldd * c.m + 8, sdz = lddz * c.m + 24, sdd = lddd * c.m + 4;
  const std::int64_t zn = sz * c.batch, dn = sd * c.batch, dzn = sdz * c.batch, ddn = sdd * c.batch;
  const DataType dz_type = c.z_type, dd_type = c.d_type;
  std::mt19937_64 rng(static_cast<std::uint64_t>(c.m * 7919 + c.n * 31 + c.batch));
  std::uniform_real_distribution<double> uni(-6.0, 6.0);
  std::vector<unsigned char> z(zn * size_of(c.z_type)), dd(ddn * size_of(dd_type));
  std::vector<unsigned char> d(dn * size_of(c.d_type)), dz(dzn * size_of(dz_type));
  for (std::int64_t i = 0; i < zn; ++i) put(z, c.z_type, i, uni(rng));
  for (std::int64_t i = 0; i < ddn; ++i) put(dd, dd_type, i, uni(rng) / 3);
  for (std::int64_t i = 0; i < dn; ++i) put(d, c.d_type, i, kPoison);
  for (std::int64_t i = 0; i < dzn; ++i) put(dz, dz_type, i, kPoison);
  DeviceBytes z_dev(z), dd_dev(dd), d_dev(d), dz_dev(dz);

  GateArgs a;
  a.m = c.m, a.n = c.n, a.layout = c.layout, a.batch = c.batch;
  a.z = z_dev.get(), a.ldz = ldz, a.z_type = c.z_type, a.stride_z = sz;
  a.d = d_dev.get(), a.ldd = ldd, a.d_type = c.d_type, a.stride_d = sd;
  GateGradArgs g;
  g.dd = dd_dev.get(), g.lddd = lddd, g.dd_type = dd_type, g.stride_dd = sdd;
  g.dz = dz_dev.get(), g.lddz = lddz, g.dz_type = dz_type, g.stride_dz = sdz;
  ASSERT_EQ(swiglu(a), Status::Success) << last_error_message();
  ASSERT_EQ(swiglu_backward(a, g), Status::Success) << last_error_message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  const std::vector<unsigned char> d_out = d_dev.download(), dz_out = dz_dev.download();

  std::vector<bool> d_written(static_cast<std::size_t>(dn), false), dz_written(static_cast<std::size_t>(dzn), false);
  const double ud = unit_roundoff(c.d_type), udz = unit_roundoff(dz_type), f32 = 8 * 0x1p-24;
  int bad = 0;
  for (std::int64_t b = 0; b < c.batch; ++b)
    for (std::int64_t r = 0; r < c.m; ++r)
      for (std::int64_t j = 0; j < c.n; ++j) {
        const std::int64_t gi = b * sz + r * ldz + gate_col(c, j), ui = b * sz + r * ldz + up_col(c, j);
        const double x = get(z, c.z_type, gi), u = get(z, c.z_type, ui);
        const double s = 1 / (1 + std::exp(-x)), silu = x * s;
        const std::int64_t di = b * sd + r * ldd + j;
        d_written[static_cast<std::size_t>(di)] = true;
        const double want = silu * u, got = get(d_out, c.d_type, di);
        if (!(std::fabs(got - want) <= ud * std::fabs(want) + f32 * std::fabs(silu * u) + 1e-30) && bad++ < 5)
          ADD_FAILURE() << "D(" << b << "," << r << "," << j << ") = " << got << ", want " << want;
        const double grad = get(dd, dd_type, b * sdd + r * lddd + j);
        const double want_g = grad * u * s * (1 + x * (1 - s)), want_u = grad * silu;
        const double scale_g = std::fabs(grad * u * s) * (1 + std::fabs(x));
        const std::int64_t zg = b * sdz + r * lddz + gate_col(c, j), zu = b * sdz + r * lddz + up_col(c, j);
        dz_written[static_cast<std::size_t>(zg)] = dz_written[static_cast<std::size_t>(zu)] = true;
        const double got_g = get(dz_out, dz_type, zg), got_u = get(dz_out, dz_type, zu);
        if (!(std::fabs(got_g - want_g) <= udz * std::fabs(want_g) + f32 * scale_g + 1e-30) && bad++ < 5)
          ADD_FAILURE() << "dZ gate(" << b << "," << r << "," << j << ") = " << got_g << ", want " << want_g;
        if (!(std::fabs(got_u - want_u) <= udz * std::fabs(want_u) + f32 * std::fabs(want_u) + 1e-30) && bad++ < 5)
          ADD_FAILURE() << "dZ up(" << b << "," << r << "," << j << ") = " << got_u << ", want " << want_u;
      }
  // Padding, gaps between matrices and (for Halves) nothing else: every element not written is
  // the poison still.
  for (std::int64_t i = 0; i < dn && bad < 10; ++i)
    if (!d_written[static_cast<std::size_t>(i)] && get(d_out, c.d_type, i) != get(d, c.d_type, i))
      ADD_FAILURE() << "D element " << i << " outside the matrices was written", ++bad;
  for (std::int64_t i = 0; i < dzn && bad < 10; ++i)
    if (!dz_written[static_cast<std::size_t>(i)] && get(dz_out, dz_type, i) != get(dz, dz_type, i))
      ADD_FAILURE() << "dZ element " << i << " outside the matrices was written", ++bad;
  EXPECT_EQ(bad, 0);

  // Bitwise repeatability.
  ASSERT_EQ(swiglu(a), Status::Success) << last_error_message();
  ASSERT_EQ(swiglu_backward(a, g), Status::Success) << last_error_message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(d_dev.download() == d_out) << "D differs between two runs";
  EXPECT_TRUE(dz_dev.download() == dz_out) << "dZ differs between two runs";
}

INSTANTIATE_TEST_SUITE_P(Gated, GateTest, ::testing::ValuesIn(gate_cases()),
                         [](const ::testing::TestParamInfo<GateCase>& i) { return label(i.param); });

// A device array that is plain host memory is refused before anything runs.
TEST(GatedPointers, HostMemoryIsRefused) {
  HGEMM_SKIP_WITHOUT_GPU();
  std::vector<float> host(64 * 2);
  DeviceBytes d(std::vector<unsigned char>(64 * 4));
  GateArgs a;
  a.m = 1, a.n = 64, a.z = host.data(), a.ldz = 128, a.z_type = DataType::F32;
  a.d = d.get(), a.ldd = 64, a.d_type = DataType::F32;
  EXPECT_EQ(swiglu(a), Status::InvalidPointer);
  EXPECT_NE(last_error_message().find("Z"), std::string::npos) << last_error_message();
}

}  // namespace
}  // namespace hgemm::test
