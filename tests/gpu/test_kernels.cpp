// SPDX-License-Identifier: Apache-2.0
// Every registered kernel against the fp64 CPU reference, over the standard case set, for each
// accumulation type and op combination the kernel implements.
#include <cstring>
#include <ostream>

#include "gpu_util.h"

namespace hgemm::test {
namespace {

struct KernelCase {
  std::string kernel;
  Accum accum;
  Case problem;
  int align = 1;  // the entry's alignment requirement (KernelInfo::align)
};

// How gtest shows a parameter (instead of its bytes).
void PrintTo(const KernelCase& p, std::ostream* os) {
  *os << p.kernel << (p.accum == Accum::F16 ? ", f16 accumulation, " : ", f32 accumulation, ") << p.problem.name()
      << " (seed " << p.problem.seed << ")";
}

// Whether the case meets an entry's alignment: pointers and leading dimensions multiples of it.
bool meets_alignment(const Case& c, int align) {
  return align <= 1 || (c.offset % align == 0 && c.lda() % align == 0 && c.ldb() % align == 0 && c.ldc() % align == 0);
}

std::string param_name(const testing::TestParamInfo<KernelCase>& info) {
  const KernelCase& p = info.param;
  std::string rung = p.kernel.substr(p.kernel.find('.') + 1);
  std::string s = rung + (p.accum == Accum::F16 ? "_acc16_" : "_acc32_") + p.problem.name();
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

// Every (kernel, accumulation, case) of one family that the kernel's entry says it supports,
// over the standard cases with at most `max_m` rows (a limit of the skinny family), then `extra`.
std::vector<KernelCase> family_cases(const std::string& family, std::int64_t max_m = INT64_MAX,
                                     const std::vector<Case>& extra = {}) {
  std::vector<KernelCase> out;
  for (const KernelInfo& k : kernels()) {
    if (k.family != family) continue;
    for (Accum acc : {Accum::F16, Accum::F32}) {
      if (!(k.accums & accum_bit(acc))) continue;
      for (const std::vector<Case>* set : {&standard_cases(), &extra})
        for (const Case& c : *set)
          if (k.ops & op_bit(c.op_a, c.op_b) && c.m <= max_m) out.push_back({k.id, acc, c, k.align});
    }
  }
  return out;
}

constexpr unsigned short kPoison = 0x7FFF;  // a NaN: any element left unwritten fails the comparison

bool is_poison(__half h) {
  unsigned short bits;
  std::memcpy(&bits, &h, 2);
  return bits == kPoison;
}

// C as stored on the device: the case's C inside, NaN where beta = 0 (it must not be read), and
// poison in the ld padding (which must not be written).
std::vector<__half> initial_c(const Case& c, const CaseData& d) {
  std::vector<__half> host = d.c;
  __half poison;
  std::memcpy(&poison, &kPoison, 2);
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t j = 0; j < c.ldc(); ++j)
      if (j >= c.n || c.beta == 0.f) host[i * c.ldc() + j] = poison;
  return host;
}

// Runs the kernel once on fresh device copies of the case and returns C as stored.
std::vector<__half> run_once(const KernelCase& p, const CaseData& d, cudaStream_t stream) {
  const Case& c = p.problem;
  DeviceHalves a(d.a.size() + c.offset), b(d.b.size() + c.offset), dc(d.c.size() + c.offset);
  a.upload(d.a, c.offset);
  b.upload(d.b, c.offset);
  dc.upload(initial_c(c, d), c.offset);
  GemmOptions opt;
  opt.accum = p.accum;
  opt.kernel = p.kernel;
  opt.stream = stream;
  const Status s = gemm(c.op_a, c.op_b, c.m, c.n, c.k, c.alpha, a.get() + c.offset, c.lda(), b.get() + c.offset,
                        c.ldb(), c.beta, dc.get() + c.offset, c.ldc(), opt);
  EXPECT_EQ(s, Status::Success) << status_string(s) << ": " << last_error_message();
  EXPECT_EQ(cudaStreamSynchronize(stream), cudaSuccess) << cudaGetErrorString(cudaGetLastError());
  return dc.download(d.c.size(), c.offset);
}

// A kernel built for another architecture (the sm90 family on an sm_80 GPU) is skipped, not failed.
#define HGEMM_SKIP_IF_ARCH_UNSUPPORTED(kernel_id)                                                        \
  do {                                                                                             \
    GemmOptions probe;                                                                             \
    probe.kernel = kernel_id;                                                                      \
    __half* dummy = nullptr;                                                                       \
    if (resolve_kernel(Op::N, Op::N, 0, 0, 0, dummy, 1, dummy, 1, dummy, 1, probe, nullptr) ==     \
        Status::UnsupportedArch)                                                                   \
      GTEST_SKIP() << last_error_message();                                                        \
  } while (0)

class RaggedShapes : public testing::TestWithParam<KernelCase> {};

TEST_P(RaggedShapes, MatchesReference) {
  HGEMM_SKIP_WITHOUT_GPU();
  const KernelCase& p = GetParam();
  const Case& c = p.problem;
  HGEMM_SKIP_IF_ARCH_UNSUPPORTED(p.kernel);
  if (!meets_alignment(c, p.align)) {  // refused with a clear status, before any launch
    GemmOptions o;
    o.kernel = p.kernel;
    o.accum = p.accum;
    DeviceHalves a(64), b(64), dc(64);
    const Status s = gemm(c.op_a, c.op_b, c.m, c.n, c.k, c.alpha, a.get() + c.offset, c.lda(), b.get() + c.offset,
                          c.ldb(), c.beta, dc.get() + c.offset, c.ldc(), o);
    EXPECT_EQ(s, Status::Misaligned) << last_error_message();
    return;
  }
  const CaseData& d = case_data(c);
  cudaStream_t stream;
  ASSERT_EQ(cudaStreamCreate(&stream), cudaSuccess);
  const std::vector<__half> got = run_once(p, d, stream);

  // The padding beyond column N of every row is untouched.
  std::int64_t padding_written = 0;
  for (std::int64_t i = 0; i < c.m; ++i)
    for (std::int64_t j = c.n; j < c.ldc(); ++j) padding_written += !is_poison(got[i * c.ldc() + j]);
  EXPECT_EQ(padding_written, 0) << "elements written past column N";

  const ref::ErrorStats e = ref::compare(d.reference, got.data(), c.ldc());
  const std::string where = " (seed " + std::to_string(c.seed) + ", worst at row " + std::to_string(e.worst_row) +
                            ", col " + std::to_string(e.worst_col) + ")";
  EXPECT_EQ(e.nonfinite, 0) << "NaN/Inf in C: unwritten or read where beta = 0" << where;
  if (c.exact) {
    EXPECT_EQ(e.max_abs, 0.0) << "small-integer data must be reproduced exactly" << where;
  } else {
    EXPECT_LE(e.rel_fro, tolerance_rel_fro(p.accum, c.k)) << "relative Frobenius error" << where;
    EXPECT_LE(e.max_scaled, tolerance_max_scaled(p.accum, c.k)) << "scaled max error" << where;
  }

  // Same inputs, same bits: a result that moves between runs is a race.
  const std::vector<__half> again = run_once(p, d, stream);
  EXPECT_EQ(std::memcmp(got.data(), again.data(), got.size() * sizeof(__half)), 0) << "results differ between runs";
  cudaStreamDestroy(stream);
}

INSTANTIATE_TEST_SUITE_P(CudaCore, RaggedShapes, testing::ValuesIn(family_cases("cuda")), param_name);
INSTANTIATE_TEST_SUITE_P(Wmma, RaggedShapes, testing::ValuesIn(family_cases("wmma")), param_name);
INSTANTIATE_TEST_SUITE_P(Mma, RaggedShapes, testing::ValuesIn(family_cases("mma")), param_name);
INSTANTIATE_TEST_SUITE_P(Skinny, RaggedShapes, testing::ValuesIn(family_cases("skinny", 16, skinny_cases())),
                         param_name);
// The engine's schedulers, tile shapes and store paths (on a 132-SM H200, each of these takes
// the path its comment in gpu_util.cpp names).
std::vector<Case> sm90_extra_cases() {
  std::vector<Case> cases = tile_choice_cases();
  cases.insert(cases.end(), odd_ld_cases().begin(), odd_ld_cases().end());
  cases.insert(cases.end(), stream_k_cases().begin(), stream_k_cases().end());
  cases.insert(cases.end(), many_tiles_cases().begin(), many_tiles_cases().end());
  return cases;
}
INSTANTIATE_TEST_SUITE_P(Sm90, RaggedShapes, testing::ValuesIn(family_cases("sm90", INT64_MAX, odd_ld_cases())),
                         param_name);
INSTANTIATE_TEST_SUITE_P(Engine, RaggedShapes, testing::ValuesIn(family_cases("engine", INT64_MAX, sm90_extra_cases())),
                         param_name);
INSTANTIATE_TEST_SUITE_P(Cublas, RaggedShapes, testing::ValuesIn(family_cases("cublas")), param_name);

// Every kernel (each family, ladder rungs and the engine alike) over the seeded random cases.
std::vector<KernelCase> random_kernel_cases() {
  std::vector<KernelCase> out;
  for (const KernelInfo& k : kernels())
    for (Accum acc : {Accum::F16, Accum::F32})
      if (k.accums & accum_bit(acc))
        for (const Case& c : random_cases())
          if (k.ops & op_bit(c.op_a, c.op_b) && (k.family != "skinny" || c.m <= 16))
            out.push_back({k.id, acc, c, k.align});
  return out;
}
INSTANTIATE_TEST_SUITE_P(Random, RaggedShapes, testing::ValuesIn(random_kernel_cases()), param_name);

// The harness itself, without a device, on the random cases: C rounded once to f16 from the
// reference passes both tolerances (and the exact cases exactly) for either accumulation.
TEST(RaggedShapeCases, ACorrectlyRoundedResultPassesEveryCheck) {
  for (const Case& c : random_cases()) {
    const CaseData& d = case_data(c);
    std::vector<__half> got(static_cast<std::size_t>(std::max<std::int64_t>(c.m * c.ldc(), 1)));
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < c.n; ++j)
        got[static_cast<std::size_t>(i * c.ldc() + j)] =
            __double2half(d.reference.c[static_cast<std::size_t>(i * c.n + j)]);
    const ref::ErrorStats e = ref::compare(d.reference, got.data(), c.ldc());
    EXPECT_EQ(e.nonfinite, 0) << c.name();
    if (c.exact) EXPECT_EQ(e.max_abs, 0.0) << c.name() << ": the exact result is not an f16 value";
    for (Accum acc : {Accum::F16, Accum::F32}) {
      EXPECT_LE(e.rel_fro, tolerance_rel_fro(acc, c.k)) << c.name();
      EXPECT_LE(e.max_scaled, tolerance_max_scaled(acc, c.k)) << c.name();
    }
  }
}

}  // namespace
}  // namespace hgemm::test
