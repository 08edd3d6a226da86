// SPDX-License-Identifier: Apache-2.0
// The fused epilogue (MatmulArgs::epilogue) on a device, against the fp64 reference: every
// activation, bias along N and along M in every type, aux, row and column scales, beta·C (apart
// and in place), strided batches with per-product and shared vectors, K = 0, NaN and Inf, on
// shapes that reach every scheduler and store path of the engine (tests/cpu/test_epilogue.cpp
// pins their plans), through the elementwise pass after a kernel that does not fuse it, and
// the refusal of a ladder rung. Every run checks that nothing outside D's and aux's matrices is
// written (NaN padding and guard zones) and that a second run gives the same bits.
//
// Tolerance of element (r, c), with S = |alpha|·‖a_r‖·‖b_c‖ + |beta·C(r, c)| the scale of the
// product (reference.h), u_acc = 2^-24 (f32 accumulation; 2^-11 for f16), u_out the unit roundoff
// of the output's type, Z the reference's pre-activation and s = |row_scale·col_scale|:
//   Z:   e_z = (2K + 8)·u_acc·S + 4·2^-24·(|Z| + |bias|)        (the product, then + bias in f32)
//   aux: e_z + 2·u_aux·|Z|
//   D:   s·(1.2·e_z + 16·2^-24·(|Z| + |act(Z)|)) + 2·u_out·|D|
// 1.2 bounds the slope of every activation (GELU's largest is 1.13, SiLU's 1.1); 16·2^-24
// covers erff, ex2.approx and rcp.approx (≤ 2 ulp each; ex2's argument rounds once) and the few
// roundings of each formula and the scales.
// Results under the smallest normal number of the output's type get its absolute spacing.
// The elementwise pass after a kernel that does not fuse (cuBLAS here) reads Z back from D, so
// its Z carries D's rounding too: e_z += u_out·|Z|.
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <map>
#include <tuple>

#include <gtest/gtest-spi.h>

#include "matmul_util.h"
#include "random_shapes.h"
#include "reference/reference.h"

namespace hgemm::test {
namespace {

struct EpiCase {
  std::string what;  // the first word of the test's name
  std::int64_t m = 0, n = 0, k = 0;
  Op op_a = Op::N, op_b = Op::T;
  DataType in = DataType::F16, d = DataType::F16, c = DataType::F16;
  float alpha = 1.f, beta = 0.f;
  bool in_place = false;  // C is D's memory
  BiasAlong along = BiasAlong::N;
  DataType bias_type = DataType::F32;
  Activation act = Activation::GELU;
  bool aux = true;
  DataType aux_type = DataType::F32;
  bool scales = true;
  std::int64_t batch = 1;
  bool shared_vectors = false;  // batch strides of 0 for the vectors
  Accum accum = Accum::F32;
  ref::Fill fill = ref::Fill::Uniform;
  std::string kernel = "auto";
  bool special = false;  // NaN and ±Inf in C (beta = 1)
  std::int64_t ld_pad = 3;  // of D (poisoned with NaN); 0 with N a multiple of 8: D as TMA stores it
  std::int64_t a_pad = 1, b_pad = 2;  // of A's and B's rows: odd by default, so the operands are repacked
  std::int64_t aux_pad = 5;  // of aux's rows; 0 with N a multiple of 8: aux as TMA stores it
  bool aux_by_tma = true;    // GemmOptions::aux_by_tma (false: aux stored from registers)

  std::int64_t ldd() const { return n + ld_pad; }
  std::int64_t ldaux() const { return n + aux_pad; }
  std::int64_t lda() const { return std::max<std::int64_t>(1, op_a == Op::N ? k : m) + a_pad; }
  std::int64_t ldb() const { return std::max<std::int64_t>(1, op_b == Op::N ? n : k) + b_pad; }
  std::int64_t a_rows() const { return op_a == Op::N ? m : k; }
  std::int64_t b_rows() const { return op_b == Op::N ? k : n; }
  std::int64_t stride_d() const { return m * ldd() + (ld_pad == 0 ? 64 : 7); }  // 64: aligned for TMA too
  std::int64_t stride_aux() const { return m * ldaux() + (aux_pad == 0 ? 64 : 9); }
  std::int64_t bias_len() const { return along == BiasAlong::M ? m : n; }

  std::string name() const {
    std::string s = what + "_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + "_" +
                    (op_a == Op::N ? "n" : "t") + (op_b == Op::N ? "n" : "t") + "_" + data_type_name(in) + "_to_" +
                    data_type_name(d) + "_bias" + (along == BiasAlong::N ? "N_" : along == BiasAlong::M ? "M_" : "none_") +
                    data_type_name(bias_type) + "_" + activation_name(act) + (aux ? std::string("_aux_") + data_type_name(aux_type) : "") +
                    (scales ? "_scaled" : "") + (beta != 0.f ? (in_place ? "_beta_inplace" : "_beta") : "") +
                    (batch > 1 ? "_b" + std::to_string(batch) + (shared_vectors ? "shared" : "") : "") +
                    (accum == Accum::F16 ? "_acc16" : "") + (kernel != "auto" ? "_" + kernel : "") +
                    (ld_pad == 0 ? "_ldn" : "") + (aux && aux_pad == 0 ? "_auxldn" : "") + (aux && !aux_by_tma ? "_auxregs" : "");
    for (char& ch : s)
      if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
    return s;
  }
};

void PrintTo(const EpiCase& c, std::ostream* os) { *os << c.name(); }

// The host inputs of a case and their reference, computed once per (shape, types, beta).
struct Inputs {
  ref::TypedData a, b, c, bias, row_scale, col_scale;
  std::vector<ref::Reference> reference;  // alpha·op(A)·op(B) + beta·C per product
};

const Inputs& inputs(const EpiCase& e) {
  static std::map<std::string, std::unique_ptr<Inputs>> cache;
  const std::string key = std::to_string(e.m) + "x" + std::to_string(e.n) + "x" + std::to_string(e.k) +
                          (e.op_a == Op::N ? "n" : "t") + (e.op_b == Op::N ? "n" : "t") + data_type_name(e.in) +
                          data_type_name(e.in_place ? e.d : e.c) + data_type_name(e.bias_type) + std::to_string(e.alpha) + "," +
                          std::to_string(e.beta) + (e.in_place ? "i" : "") + std::to_string(e.batch) +
                          (e.fill == ref::Fill::SmallInts ? "s" : "") + (e.special ? "x" : "") +
                          std::to_string(static_cast<int>(e.along)) + "p" + std::to_string(e.a_pad) + "," +
                          std::to_string(e.b_pad) + (e.in_place ? "," + std::to_string(e.ld_pad) : "");
  auto& slot = cache[key];
  if (slot) return *slot;
  auto in = std::make_unique<Inputs>();
  const std::uint64_t seed = std::hash<std::string>()(key);
  in->a = ref::TypedData(e.in, static_cast<std::size_t>(e.batch * e.a_rows() * e.lda()));
  in->b = ref::TypedData(e.in, static_cast<std::size_t>(e.batch * e.b_rows() * e.ldb()));
  ref::fill_random(in->a, seed, e.fill);
  ref::fill_random(in->b, seed + 1, e.fill);
  const DataType c_type = e.in_place ? e.d : e.c;
  const std::int64_t ldc = e.in_place ? e.ldd() : e.n, stride_c = e.in_place ? e.stride_d() : e.m * e.n;
  in->c = ref::TypedData(c_type, static_cast<std::size_t>(e.batch * stride_c));
  ref::fill_random(in->c, seed + 2, ref::Fill::Uniform);
  if (e.special)  // NaN, +Inf, -Inf in a few places of C
    for (std::int64_t i = 0; i < e.m * e.n; i += 37) {
      const std::int64_t r = i / e.n, col = i % e.n;
      const float v = (i / 37) % 3 == 0 ? NAN : (i / 37) % 3 == 1 ? INFINITY : -INFINITY;
      in->c.set(static_cast<std::size_t>(r * ldc + col), v);
    }
  const std::int64_t vectors = e.batch;
  in->bias = ref::TypedData(e.bias_type, static_cast<std::size_t>(vectors * e.bias_len()));
  ref::fill_random(in->bias, seed + 3, ref::Fill::Uniform);
  in->row_scale = ref::TypedData(DataType::F32, static_cast<std::size_t>(vectors * e.m));
  in->col_scale = ref::TypedData(DataType::F32, static_cast<std::size_t>(vectors * e.n));
  ref::fill_random(in->row_scale, seed + 4, ref::Fill::Uniform);
  ref::fill_random(in->col_scale, seed + 5, ref::Fill::Uniform);
  MatmulArgs host;
  host.op_a = e.op_a, host.op_b = e.op_b, host.m = e.m, host.n = e.n, host.k = e.k;
  host.alpha = e.alpha, host.beta = e.beta;
  host.a = in->a.data(), host.a_type = e.in, host.lda = e.lda(), host.stride_a = e.a_rows() * e.lda();
  host.b = in->b.data(), host.b_type = e.in, host.ldb = e.ldb(), host.stride_b = e.b_rows() * e.ldb();
  host.c = in->c.data(), host.c_type = c_type, host.ldc = ldc, host.stride_c = stride_c;
  host.batch = e.batch;
  in->reference = ref::reference_matmul(host);
  slot = std::move(in);
  return *slot;
}

class FusedEpilogue : public testing::TestWithParam<EpiCase> {
 protected:
  void SetUp() override {
    HGEMM_SKIP_WITHOUT_GPU();
    if (GetParam().kernel == "auto") return;
    GemmOptions probe;  // a named kernel this build or GPU has no code for (engine.sm90_pingpong)
    probe.kernel = GetParam().kernel;
    __half* none = nullptr;
    if (resolve_kernel(Op::N, Op::N, 0, 0, 0, none, 1, none, 1, none, 1, probe, nullptr) == Status::UnsupportedArch)
      GTEST_SKIP() << last_error_message();
  }
};

// Index of element (r, c) of product b inside a poisoned buffer: a guard zone of 64 first.
constexpr std::int64_t kGuard = 64;

// The outcome of one run: D's and aux's whole buffers.
struct RunResult {
  Status status;
  std::string message;
  ref::TypedData d, aux;
};

RunResult run_case(const EpiCase& e, const Inputs& in) {
  const std::int64_t d_count = kGuard + e.batch * e.stride_d() + kGuard;
  const std::int64_t aux_count = kGuard + e.batch * e.stride_aux() + kGuard;
  ref::TypedData d0(e.d, static_cast<std::size_t>(d_count)), aux0(e.aux_type, static_cast<std::size_t>(aux_count));
  d0.fill_bits(ref::nan_bits(e.d));
  aux0.fill_bits(ref::nan_bits(e.aux_type));
  if (e.in_place)  // C's matrices where D's are (the padding stays NaN)
    for (std::int64_t i = 0; i < e.batch * e.stride_d(); ++i)
      if (i % e.stride_d() < e.m * e.ldd() && i % e.stride_d() % e.ldd() < e.n)
        d0.set_bits(static_cast<std::size_t>(kGuard + i), in.c.bits(static_cast<std::size_t>(i)));
  DeviceBytes a(in.a.bytes()), b(in.b.bytes()), c(in.c.bytes()), bias(in.bias.bytes());
  DeviceBytes rs(in.row_scale.bytes()), cs(in.col_scale.bytes()), d(d0.bytes()), aux(aux0.bytes());
  a.upload(in.a), b.upload(in.b), c.upload(in.c), bias.upload(in.bias), rs.upload(in.row_scale),
      cs.upload(in.col_scale), d.upload(d0), aux.upload(aux0);
  const int ds = data_type_size(e.d), as = data_type_size(e.aux_type);
  MatmulArgs p;
  p.op_a = e.op_a, p.op_b = e.op_b, p.m = e.m, p.n = e.n, p.k = e.k, p.alpha = e.alpha, p.beta = e.beta;
  p.a = a.get(), p.a_type = e.in, p.lda = e.lda(), p.stride_a = e.a_rows() * e.lda();
  p.b = b.get(), p.b_type = e.in, p.ldb = e.ldb(), p.stride_b = e.b_rows() * e.ldb();
  p.d = d.get() + kGuard * ds, p.d_type = e.d, p.ldd = e.ldd(), p.stride_d = e.stride_d();
  if (e.in_place)
    p.c = p.d, p.c_type = e.d, p.ldc = e.ldd(), p.stride_c = e.stride_d();
  else
    p.c = c.get(), p.c_type = e.c, p.ldc = e.n, p.stride_c = e.m * e.n;
  p.batch = e.batch;
  Epilogue& x = p.epilogue;
  x.bias_along = e.along, x.bias = bias.get(), x.bias_type = e.bias_type;
  x.stride_bias = e.shared_vectors ? 0 : e.bias_len();
  x.activation = e.act;
  x.aux_output = e.aux, x.aux = aux.get() + kGuard * as, x.aux_type = e.aux_type, x.ldaux = e.ldaux();
  x.stride_aux = e.stride_aux();
  x.scale_rows = x.scale_cols = e.scales;
  x.row_scale = reinterpret_cast<const float*>(rs.get()), x.col_scale = reinterpret_cast<const float*>(cs.get());
  x.stride_row_scale = e.shared_vectors ? 0 : e.m, x.stride_col_scale = e.shared_vectors ? 0 : e.n;
  MatmulOptions o;
  o.accum = e.accum, o.kernel = e.kernel, o.aux_by_tma = e.aux_by_tma;
  RunResult r;
  r.status = matmul(p, o);
  r.message = last_error_message();
  const cudaError_t err = cudaDeviceSynchronize();
  if (r.status == Status::Success && err != cudaSuccess) r.status = Status::CudaError, r.message = cudaGetErrorString(err);
  r.d = d.download(e.d, static_cast<std::size_t>(d_count));
  r.aux = aux.download(e.aux_type, static_cast<std::size_t>(aux_count));
  return r;
}

// Whether the device is a Hopper GPU, where auto fuses the epilogue (elsewhere it adds a pass).
bool on_hopper() {
  static const bool hopper = [] {
    int major = 0;
    cudaDeviceGetAttribute(&major, cudaDevAttrComputeCapabilityMajor, 0);
    return major == 9;
  }();
  return hopper;
}

enum class Kind { NaN, PosInf, NegInf, Finite };
Kind kind(double v) { return std::isnan(v) ? Kind::NaN : std::isinf(v) ? (v > 0 ? Kind::PosInf : Kind::NegInf) : Kind::Finite; }

double smallest_normal(DataType t) { return std::ldexp(1.0, t == DataType::F16 ? -14 : -126); }

// Checks one run against the reference; returns the number of failures (at most a few reported).
void expect_matches(const EpiCase& e, const Inputs& in, const RunResult& r) {
  const double u = std::ldexp(1.0, -24), u_acc = e.accum == Accum::F16 ? std::ldexp(1.0, -11) : u;
  const double u_out = ref::unit_roundoff(e.d), u_aux = ref::unit_roundoff(e.aux_type);
  const bool unfused = e.kernel.rfind("cublas", 0) == 0 || (e.kernel == "auto" && !on_hopper());
  int reported = 0;
  auto report = [&](const std::string& what) {
    if (++reported <= 5) ADD_FAILURE() << e.name() << ": " << what;
  };
  for (std::int64_t b = 0; b < e.batch; ++b) {
    const ref::Reference& ref = in.reference[static_cast<std::size_t>(b)];
    const std::int64_t v = e.shared_vectors ? 0 : b;
    for (std::int64_t i = 0; i < e.m; ++i)
      for (std::int64_t j = 0; j < e.n; ++j) {
        const double bias = e.along == BiasAlong::None ? 0 : in.bias.get(v * e.bias_len() + (e.along == BiasAlong::M ? i : j));
        const double s = e.scales ? in.row_scale.get(v * e.m + i) * in.col_scale.get(v * e.n + j) : 1;
        const double z = ref.c[i * e.n + j] + bias;
        const double want = ref::activate(e.act, z) * s;
        const double scale = ref.a_row_norm[i] * ref.b_col_norm[j] * std::fabs(e.alpha) + ref.c_in[i * e.n + j];
        double e_z = (2.0 * e.k + 8) * u_acc * scale + 4 * u * (std::fabs(z) + std::fabs(bias));
        // Unfused, D holds alpha·AB + beta·C = z - bias rounded to D's type before the pass adds the bias.
        if (unfused) e_z += u_out * (std::fabs(z) + std::fabs(bias)) + smallest_normal(e.d) * u_out;
        const double got = r.d.get(kGuard + b * e.stride_d() + i * e.ldd() + j);
        const std::string at = " at product " + std::to_string(b) + " (" + std::to_string(i) + ", " + std::to_string(j) + ")";
        if (kind(got) != kind(want)) {
          report("D = " + std::to_string(got) + ", reference " + std::to_string(want) + at);
        } else if (kind(want) == Kind::Finite) {
          const double tol = std::fabs(s) * (1.2 * e_z + 16 * u * (std::fabs(z) + std::fabs(want / (s != 0 ? s : 1)))) +
                             2 * u_out * (std::fabs(want) + smallest_normal(e.d));
          if (std::fabs(got - want) > tol)
            report("D = " + std::to_string(got) + ", reference " + std::to_string(want) + ", error " +
                   std::to_string(std::fabs(got - want)) + " > " + std::to_string(tol) + at);
        }
        if (!e.aux) continue;
        const double aux = r.aux.get(kGuard + b * e.stride_aux() + i * e.ldaux() + j);
        if (kind(aux) != kind(z)) {
          report("aux = " + std::to_string(aux) + ", reference " + std::to_string(z) + at);
        } else if (kind(z) == Kind::Finite) {
          const double tol = e_z + 2 * u_aux * (std::fabs(z) + smallest_normal(e.aux_type));
          if (std::fabs(aux - z) > tol)
            report("aux = " + std::to_string(aux) + ", reference " + std::to_string(z) + ", error " +
                   std::to_string(std::fabs(aux - z)) + " > " + std::to_string(tol) + at);
        }
      }
  }
  if (reported > 5) ADD_FAILURE() << e.name() << ": " << reported << " failures in all";
}

// Nothing outside the matrices is written: every element outside them still holds its NaN.
void expect_padding_untouched(const EpiCase& e, const RunResult& r) {
  auto inside = [](std::int64_t i, std::int64_t batch, std::int64_t stride, std::int64_t m, std::int64_t ld,
                   std::int64_t n) {
    if (i < kGuard) return false;
    const std::int64_t x = i - kGuard, b = x / stride, in = x % stride;
    return b < batch && in < m * ld && in % ld < n;
  };
  const ref::TypedData* bufs[] = {&r.d, &r.aux};
  for (int w = 0; w < (e.aux ? 2 : 1); ++w) {
    const ref::TypedData& buf = *bufs[w];
    const DataType t = w == 0 ? e.d : e.aux_type;
    const std::int64_t stride = w == 0 ? e.stride_d() : e.stride_aux(), ld = w == 0 ? e.ldd() : e.ldaux();
    for (std::int64_t i = 0; i < static_cast<std::int64_t>(buf.size()); ++i)
      if (!inside(i, e.batch, stride, e.m, ld, e.n) && buf.bits(static_cast<std::size_t>(i)) != ref::nan_bits(t)) {
        ADD_FAILURE() << e.name() << ": " << (w == 0 ? "D" : "aux") << "'s buffer written outside its matrices at element " << i;
        break;
      }
  }
}

TEST_P(FusedEpilogue, MatchesTheReferenceAndRepeats) {
  const EpiCase& e = GetParam();
  const Inputs& in = inputs(e);
  const RunResult first = run_case(e, in);
  ASSERT_EQ(first.status, Status::Success) << status_string(first.status) << ": " << first.message;
  expect_matches(e, in, first);
  expect_padding_untouched(e, first);
  const RunResult second = run_case(e, in);
  ASSERT_EQ(second.status, Status::Success) << second.message;
  EXPECT_TRUE(first.d == second.d) << "D differs between two runs";
  EXPECT_TRUE(first.aux == second.aux) << "aux differs between two runs";
}

constexpr Activation kActivations[] = {Activation::None, Activation::ReLU, Activation::GELU, Activation::GELUTanh,
                                       Activation::SiLU};
constexpr DataType kInTypes[] = {DataType::F16, DataType::BF16};
constexpr DataType kOutTypes[] = {DataType::F16, DataType::BF16, DataType::F32};

EpiCase shape(const char* what, std::int64_t m, std::int64_t n, std::int64_t k, Op op_a = Op::N, Op op_b = Op::T) {
  EpiCase e;
  e.what = what, e.m = m, e.n = n, e.k = k, e.op_a = op_a, e.op_b = op_b;
  return e;
}

// Each activation, with a bias along N, aux and scales, on a ragged tile-per-CTA shape and a
// persistent one, in every A/B and D type.
std::vector<EpiCase> activation_cases() {
  std::vector<EpiCase> out;
  for (EpiCase e : {shape("activation", 127, 129, 257), shape("activation", 300, 520, 200, Op::T, Op::N)})
    for (Activation act : kActivations)
      for (DataType in : kInTypes)
        for (DataType d : kOutTypes) {
          e.act = act, e.in = in, e.d = d, e.aux_type = d;
          out.push_back(e);
        }
  return out;
}

// The bias alone (no activation, no scales), along N and along M, in every type.
std::vector<EpiCase> bias_cases() {
  std::vector<EpiCase> out;
  for (BiasAlong along : {BiasAlong::N, BiasAlong::M})
    for (DataType t : kOutTypes)
      for (DataType in : kInTypes)
        for (DataType d : kOutTypes) {
          EpiCase e = shape("bias", 133, 250, 96);
          e.along = along, e.bias_type = t, e.in = in, e.d = d, e.act = Activation::None, e.aux = false, e.scales = false;
          out.push_back(e);
          if (along == BiasAlong::M && t == DataType::F32 && in == DataType::F16) {  // swapped decode kernels
            e.m = 9, e.n = 1500, e.k = 320;
            out.push_back(e);
          }
        }
  return out;
}

// D as the TMA store takes it (ldd = N, aligned), on the persistent kernels: the bias alone (added
// in registers) and with an activation, aux and scales (through shared memory), single and batched.
std::vector<EpiCase> tma_store_cases() {
  std::vector<EpiCase> out;
  for (EpiCase e : {shape("tma", 2048, 2048, 512), shape("tma", 1024, 768, 256, Op::T, Op::N)})
    for (bool alone : {true, false})
      for (auto [in, d] : {std::pair{DataType::F16, DataType::F16}, std::pair{DataType::BF16, DataType::BF16},
                           std::pair{DataType::F16, DataType::F32}})
        for (BiasAlong along : {BiasAlong::N, BiasAlong::M}) {
          e.ld_pad = 0, e.in = in, e.d = d, e.along = along, e.bias_type = d;
          e.act = alone ? Activation::None : Activation::GELUTanh, e.aux = !alone, e.scales = !alone;
          e.aux_type = d, e.batch = along == BiasAlong::M ? 2 : 1;
          out.push_back(e);
        }
  // Tiles per CTA: a single product, and batches of small products (64×64 tiles, rows and
  // columns clipped by TMA in the second).
  for (EpiCase e : {shape("tmatiles", 1024, 1024, 1024), shape("tmatiles", 64, 64, 64),
                    shape("tmatiles", 50, 120, 100, Op::T, Op::N)})
    for (bool alone : {true, false})
      for (auto [in, d] : {std::pair{DataType::F16, DataType::F16}, std::pair{DataType::BF16, DataType::F32}})
        for (BiasAlong along : {BiasAlong::N, BiasAlong::M}) {
          e.ld_pad = 0, e.in = in, e.d = d, e.along = along, e.bias_type = d;
          e.act = alone ? Activation::None : Activation::SiLU, e.aux = !alone, e.scales = !alone;
          e.aux_type = d, e.batch = e.m == 1024 ? 1 : 40;
          out.push_back(e);
        }
  return out;
}

// aux as TMA stores it (ldaux = N, aligned) with D stored by TMA, a bias, an activation and no
// scales: the fused-in-registers kernels stage aux through shared memory on whole tiles and
// store it from registers with stream-K (plans pinned in tests/cpu/test_epilogue.cpp), on Wide
// and Narrow, ragged in M and in N (a multiple of 8), short and long K, single and batched, every
// type of aux and D; each case also with GemmOptions::aux_by_tma = false (the register stores).
std::vector<EpiCase> aux_tma_cases() {
  std::vector<EpiCase> out;
  const EpiCase shapes[] = {shape("auxtma", 2048, 2048, 512),        shape("auxtma", 4000, 4096, 128),
                            shape("auxtma", 4100, 2056, 64, Op::N, Op::N), shape("auxtma", 128, 32768, 512),
                            shape("auxtma", 3000, 3000, 3000, Op::T, Op::N), shape("auxtma", 100, 17024, 1600, Op::T, Op::T)};
  const std::pair<DataType, DataType> types[] = {{DataType::F16, DataType::F16}, {DataType::BF16, DataType::BF16},
                                                 {DataType::F16, DataType::F32}, {DataType::BF16, DataType::F16}};
  int i = 0;
  for (EpiCase e : shapes)
    for (auto [in, d] : types) {
      e.in = in, e.d = d, e.ld_pad = 0, e.aux_pad = 0, e.scales = false, e.aux_by_tma = true;
      e.aux_type = kOutTypes[i % 3], e.bias_type = kOutTypes[(i + 1) % 3];
      e.act = kActivations[i % 5], e.along = i % 4 == 1 ? BiasAlong::M : BiasAlong::N;
      e.batch = e.m * e.n <= 2048 * 2048 && i % 2 ? 3 : 1;
      ++i;
      out.push_back(e);
      e.aux_by_tma = false;
      out.push_back(e);
    }
  return out;
}

// Every scheduler and store path of the engine (plans pinned in tests/cpu/test_epilogue.cpp),
// each with bias, GELU, aux and scales, in three type combinations, along M on the swapped ones.
std::vector<EpiCase> scheduler_cases() {
  std::vector<EpiCase> out;
  const EpiCase shapes[] = {
      shape("tiles", 1000, 1000, 1000),
      shape("swappedtile", 16, 4096, 4096),
      shape("swappedtile", 17, 16001, 200),
      shape("widetma", 2048, 2048, 2048),
      shape("widestaged", 2047, 2047, 2047),
      shape("narrowstreamk", 100, 60, 30000, Op::N, Op::N),
      shape("narrowstreamk", 100, 17024, 1600, Op::T, Op::T),
      shape("swappedstreamk", 64, 8192, 8192),
      shape("splitk", 16, 64, 65536),
      shape("clustersplitk", 7, 3500, 1000),
      shape("clustersplitk", 24, 2200, 8300, Op::T, Op::N),
  };
  for (EpiCase e : shapes)
    for (auto [in, d] : {std::pair{DataType::F16, DataType::F16}, std::pair{DataType::BF16, DataType::F32},
                         std::pair{DataType::F16, DataType::BF16}}) {
      e.in = in, e.d = d, e.aux_type = DataType::BF16;
      e.along = e.m <= 64 ? BiasAlong::M : BiasAlong::N;
      out.push_back(e);
    }
  return out;
}

// The epilogue in registers on the swapped (decode) kernels: no C and no scales, a bias along N
// (the tile's rows) or along M (its columns), aux stored transposed, each activation, on every
// swapped tile per CTA and the swapped persistent kernels, whole tiles and stream-K (plans pinned
// in tests/cpu/test_epilogue.cpp), ragged in M and N.
std::vector<EpiCase> decode_cases() {
  std::vector<EpiCase> out;
  const EpiCase shapes[] = {shape("decode", 16, 4096, 512),  shape("decode", 32, 4096, 512),
                            shape("decode", 16, 16384, 256), shape("decode", 30, 12000, 512),
                            shape("decode", 5, 6000, 300),   shape("decode", 64, 8192, 8192),
                            shape("decode", 30, 280, 64),    shape("decode", 9, 256, 128)};
  const std::pair<DataType, DataType> types[] = {
      {DataType::F16, DataType::F16}, {DataType::BF16, DataType::F32}, {DataType::F16, DataType::BF16}};
  int i = 0;
  for (EpiCase e : shapes)
    for (BiasAlong along : {BiasAlong::N, BiasAlong::M})
      for (auto [in, d] : types) {
        if (e.k > 4096 && d != DataType::F16) continue;  // the stream-K shape once per bias
        e.in = in, e.d = d, e.along = along, e.scales = false;
        e.bias_type = kOutTypes[i % 3], e.aux_type = kOutTypes[(i + 1) % 3];
        e.act = kActivations[i % 5], e.aux = i % 4 != 3, e.batch = 1;
        ++i;
        out.push_back(e);
      }
  return out;
}

// beta·C read by the epilogue (C apart and in place), alpha ≠ 1, strided batches with
// per-product and shared vectors, K = 0, f16 accumulation, small-integer data, and the
// elementwise pass after cuBLAS.
std::vector<EpiCase> other_cases() {
  std::vector<EpiCase> out;
  for (EpiCase e : {shape("beta", 300, 500, 200), shape("beta", 2048, 2048, 512), shape("beta", 8, 3000, 700)})
    for (bool in_place : {false, true}) {
      e.alpha = 0.75f, e.beta = -0.5f, e.in_place = in_place, e.c = DataType::F32, e.act = Activation::SiLU;
      out.push_back(e);
    }
  for (bool shared : {false, true})
    for (EpiCase e : {shape("batch", 200, 300, 100), shape("batch", 12, 1000, 300), shape("batch", 64, 64, 64)}) {
      e.batch = 3, e.shared_vectors = shared, e.act = Activation::GELUTanh, e.d = DataType::BF16;
      out.push_back(e);
    }
  for (float beta : {0.f, 2.f})
    for (Activation act : {Activation::ReLU, Activation::GELU}) {
      EpiCase e = shape("kzero", 65, 130, 0);
      e.beta = beta, e.act = act, e.batch = 2, e.c = DataType::BF16;
      out.push_back(e);
    }
  {
    EpiCase e = shape("acc16", 250, 300, 64);
    e.accum = Accum::F16, e.fill = ref::Fill::SmallInts, e.bias_type = DataType::F16, e.aux_type = DataType::F16;
    out.push_back(e);
    e.m = 2048, e.n = 2048;  // TMA store from f16 accumulators
    out.push_back(e);
  }
  for (const char* kernel : {"cublas.acc32"})
    for (DataType d : kOutTypes) {
      EpiCase e = shape("unfused", 300, 500, 200);
      e.kernel = kernel, e.d = d, e.beta = 1.f, e.c = d, e.in_place = true, e.batch = 2;
      out.push_back(e);
    }
  return out;
}

// NaN and ±Inf in C: the classes (NaN, +Inf, -Inf, finite) of every element match the fp64
// formulas, fused on each path and unfused (cuBLAS then the elementwise pass).
std::vector<EpiCase> special_cases() {
  std::vector<EpiCase> out;
  for (EpiCase e : {shape("special", 130, 250, 100), shape("special", 2048, 2048, 256), shape("special", 16, 64, 65536)})
    for (Activation act : kActivations)
      for (const char* kernel : {"auto", "cublas.acc32"}) {
        e.act = act, e.beta = 1.f, e.special = true, e.c = DataType::F32, e.d = DataType::F32, e.kernel = kernel;
        e.scales = false;  // a negative scale would turn +Inf into -Inf: classes stay comparable without
        out.push_back(e);
      }
  return out;
}

// Seeded random cases (random_shapes.h; HGEMM_RANDOM_CASES, default 120): a random shape kind,
// ops, types, padding of A, B and D, bias (none, along N or M, any type), activation, aux,
// scales, beta·C apart or in place, batches with shared or per-product vectors, f16
// accumulation, NaN and ±Inf in C, and now and then the unfused path after cuBLAS.
std::vector<EpiCase> random_cases() {
  std::vector<EpiCase> out;
  Draw r(random_seed() + 2);
  const int count = random_case_count(120);
  for (int i = 0; static_cast<int>(out.size()) < count; ++i) {
    const RandomShape s = random_shape(r, 1e8);
    EpiCase e = shape("random", s.m, s.n, s.k);
    e.what = "random" + std::to_string(i) + s.kind;
    e.batch = s.batch;
    std::tie(e.op_a, e.op_b) = random_ops(r, s);
    e.in = r.pick({DataType::F16, DataType::BF16});
    e.d = r.pick(kOutTypes), e.c = r.pick(kOutTypes);
    e.alpha = r.pick({1.f, 1.f, -0.75f, 1.5f});
    e.beta = r.pick({0.f, 0.f, 0.f, 0.5f, -1.f});
    e.in_place = e.beta != 0.f && r.chance(0.3);
    e.along = r.pick({BiasAlong::N, BiasAlong::N, BiasAlong::M, BiasAlong::None});
    e.bias_type = r.pick(kOutTypes);
    e.act = r.pick({Activation::None, Activation::ReLU, Activation::GELU, Activation::GELUTanh, Activation::SiLU});
    e.aux = r.chance(0.4), e.aux_type = r.pick(kOutTypes);
    e.scales = r.chance(0.3);
    e.shared_vectors = e.batch > 1 && r.chance(0.4);
    e.a_pad = r.padding(e.op_a == Op::N ? e.k : e.m), e.b_pad = r.padding(e.op_b == Op::N ? e.n : e.k);
    e.ld_pad = r.padding(e.n);
    if (e.in == DataType::F16 && e.d == DataType::F16 && e.c == DataType::F16 && e.k <= 500 && r.chance(0.25))
      e.accum = Accum::F16, e.fill = ref::Fill::SmallInts;  // sums of at most 2000: exact in f16
    if (e.beta != 0.f && !e.in_place && r.chance(0.15)) {  // NaN and ±Inf in C, compared by class
      e.special = true, e.beta = 1.f, e.c = DataType::F32, e.d = DataType::F32, e.scales = false;
      e.accum = Accum::F32, e.fill = ref::Fill::Uniform;
    }
    if (r.chance(0.1)) e.kernel = "cublas.acc32", e.accum = Accum::F32;
    out.push_back(e);
  }
  return out;
}

// The ping-pong kernel (engine.sm90_pingpong: f32 accumulators, whole tiles or split-K) on the
// TMA-store, scheduler and other cases and a third of the random ones: every store path, C read
// and in place, batches, K = 0, each shape on its own 64×256 units.
std::vector<EpiCase> pingpong_cases() {
  std::vector<EpiCase> out;
  auto add = [&](const std::vector<EpiCase>& cases, std::size_t every) {
    for (std::size_t i = 0; i < cases.size(); i += every) {
      EpiCase e = cases[i];
      if (e.accum != Accum::F32 || e.kernel != "auto") continue;
      e.kernel = "engine.sm90_pingpong";
      out.push_back(e);
    }
  };
  add(tma_store_cases(), 1);
  add(scheduler_cases(), 1);
  add(other_cases(), 1);
  add(random_cases(), 3);
  return out;
}

std::string case_name(const testing::TestParamInfo<EpiCase>& info) { return info.param.name(); }

// HGEMM_TEST_MAX_DIM (environment) drops the cases with a larger dimension (sanitizer runs).
std::vector<EpiCase> limited(std::vector<EpiCase> cases) { return within_max_dim(std::move(cases)); }

// The harness itself, without a device, on the random cases (the others are too large to
// compute here): D and aux rounded once from the fp64 formulas pass every check, NaN and Inf
// classes included, and one element written into D's padding is caught.
TEST(FusedEpilogueCases, ACorrectlyRoundedResultPassesEveryCheck) {
  for (const EpiCase& e : random_cases()) {
    const Inputs& in = inputs(e);
    RunResult r{Status::Success, "", ref::TypedData(e.d, static_cast<std::size_t>(kGuard + e.batch * e.stride_d() + kGuard)),
                ref::TypedData(e.aux_type, static_cast<std::size_t>(kGuard + e.batch * e.stride_aux() + kGuard))};
    r.d.fill_bits(ref::nan_bits(e.d));
    r.aux.fill_bits(ref::nan_bits(e.aux_type));
    for (std::int64_t b = 0; b < e.batch; ++b) {
      const std::int64_t v = e.shared_vectors ? 0 : b;
      for (std::int64_t i = 0; i < e.m; ++i)
        for (std::int64_t j = 0; j < e.n; ++j) {
          const double bias =
              e.along == BiasAlong::None ? 0 : in.bias.get(v * e.bias_len() + (e.along == BiasAlong::M ? i : j));
          const double s = e.scales ? in.row_scale.get(v * e.m + i) * in.col_scale.get(v * e.n + j) : 1;
          const double z = in.reference[static_cast<std::size_t>(b)].c[i * e.n + j] + bias;
          r.d.set(static_cast<std::size_t>(kGuard + b * e.stride_d() + i * e.ldd() + j),
                  static_cast<float>(ref::activate(e.act, z) * s));
          if (e.aux)
            r.aux.set(static_cast<std::size_t>(kGuard + b * e.stride_aux() + i * e.ldaux() + j), static_cast<float>(z));
        }
    }
    expect_matches(e, in, r);
    expect_padding_untouched(e, r);
    if (testing::Test::HasFailure()) return;  // one case's failures are enough to read
    if (e.m > 0 && e.n > 0 && e.ld_pad > 0) {  // a stray write past D's last column is seen
      RunResult stray = r;
      stray.d.set(static_cast<std::size_t>(kGuard + e.n), 1.f);
      testing::TestPartResultArray failures;
      {
        using Reporter = testing::ScopedFakeTestPartResultReporter;
        Reporter catcher(Reporter::INTERCEPT_ONLY_CURRENT_THREAD, &failures);
        expect_padding_untouched(e, stray);
      }
      EXPECT_EQ(failures.size(), 1) << e.name() << ": a write into D's padding went unseen";
    }
  }
}

INSTANTIATE_TEST_SUITE_P(Activations, FusedEpilogue, testing::ValuesIn(limited(activation_cases())), case_name);
INSTANTIATE_TEST_SUITE_P(Bias, FusedEpilogue, testing::ValuesIn(limited(bias_cases())), case_name);
INSTANTIATE_TEST_SUITE_P(TmaStore, FusedEpilogue, testing::ValuesIn(limited(tma_store_cases())), case_name);
INSTANTIATE_TEST_SUITE_P(AuxTma, FusedEpilogue, testing::ValuesIn(limited(aux_tma_cases())), case_name);
INSTANTIATE_TEST_SUITE_P(Schedulers, FusedEpilogue, testing::ValuesIn(limited(scheduler_cases())), case_name);
INSTANTIATE_TEST_SUITE_P(Decode, FusedEpilogue, testing::ValuesIn(limited(decode_cases())), case_name);
INSTANTIATE_TEST_SUITE_P(PingPong, FusedEpilogue, testing::ValuesIn(limited(pingpong_cases())), case_name);
INSTANTIATE_TEST_SUITE_P(Other, FusedEpilogue, testing::ValuesIn(limited(other_cases())), case_name);
INSTANTIATE_TEST_SUITE_P(Special, FusedEpilogue, testing::ValuesIn(limited(special_cases())), case_name);
INSTANTIATE_TEST_SUITE_P(Random, FusedEpilogue, testing::ValuesIn(limited(random_cases())), case_name);

class FusedEpilogueApi : public testing::Test {
 protected:
  void SetUp() override { HGEMM_SKIP_WITHOUT_GPU(); }
};

// What runs is named: the engine fuses on Hopper; a baseline named with an epilogue is followed
// by the elementwise pass; a ladder rung refuses.
TEST_F(FusedEpilogueApi, ResolveNamesWhatRunsAndLadderRungsRefuse) {
  DeviceBytes a(64 * 64 * 2), b(64 * 64 * 2), d(64 * 64 * 2), bias(64 * 4);
  MatmulArgs p;
  p.op_a = Op::N, p.op_b = Op::T, p.m = p.n = p.k = 64;
  p.a = a.get(), p.lda = 64, p.b = b.get(), p.ldb = 64, p.d = d.get(), p.ldd = 64;
  p.epilogue.bias_along = BiasAlong::N, p.epilogue.bias = bias.get(), p.epilogue.activation = Activation::ReLU;
  int cc_major = 0;
  cudaDeviceGetAttribute(&cc_major, cudaDevAttrComputeCapabilityMajor, 0);
  std::string id;
  ASSERT_EQ(resolve_matmul(p, {}, &id), Status::Success) << last_error_message();
  if (cc_major == 9)
    EXPECT_EQ(id, "engine.sm90");
  else
    EXPECT_NE(id.find("+epilogue"), std::string::npos) << id;
  MatmulOptions o;
  o.kernel = "cublas.acc32";
  ASSERT_EQ(resolve_matmul(p, o, &id), Status::Success) << last_error_message();
  EXPECT_EQ(id, "cublas.acc32+epilogue");
  o.kernel = "cuda.naive";
  EXPECT_EQ(resolve_matmul(p, o, &id), Status::UnsupportedEpilogue);
  EXPECT_NE(last_error_message().find("cuda.naive cannot apply a fused epilogue"), std::string::npos)
      << last_error_message();
  EXPECT_EQ(matmul(p, o), Status::UnsupportedEpilogue);
  p.epilogue = Epilogue{};  // without one the rung runs
  EXPECT_EQ(resolve_matmul(p, o, &id), Status::Success) << last_error_message();
}

// Vectors in plain host memory are refused before anything runs.
TEST_F(FusedEpilogueApi, HostVectorsAreRefused) {
  DeviceBytes a(64 * 64 * 2), b(64 * 64 * 2), d(64 * 64 * 2);
  std::vector<float> host_bias(64);
  MatmulArgs p;
  p.op_a = Op::N, p.op_b = Op::T, p.m = p.n = p.k = 64;
  p.a = a.get(), p.lda = 64, p.b = b.get(), p.ldb = 64, p.d = d.get(), p.ldd = 64;
  p.epilogue.bias_along = BiasAlong::N, p.epilogue.bias = host_bias.data();
  EXPECT_EQ(matmul(p), Status::InvalidPointer);
  EXPECT_NE(last_error_message().find("epilogue.bias"), std::string::npos) << last_error_message();
}

}  // namespace
}  // namespace hgemm::test
