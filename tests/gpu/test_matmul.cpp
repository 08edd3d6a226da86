// SPDX-License-Identifier: Apache-2.0
// The typed matmul on a device: every kernel that takes more than f16 (by KernelInfo::in_types
// and out_types), and "auto", over every A/B × C × D type combination it takes and every case of
// matmul_cases(), against the fp64 reference. Each run also checks that nothing outside D's
// matrices is written (padding, gaps between batch matrices, guard zones), that C is left as it
// was, and that a second run gives the same bits.
#include <cctype>
#include <ostream>
#include <tuple>

#include "matmul_util.h"
#include "random_shapes.h"

namespace hgemm::test {
namespace {

struct MatmulParam {
  std::string kernel;  // an id from kernels(), or "auto"
  DataType in, c, d;
  MatmulCase problem;
  int align = 1;  // the entry's KernelInfo::align
};

// How gtest shows a parameter (instead of its bytes).
void PrintTo(const MatmulParam& p, std::ostream* os) {
  *os << p.kernel << ", A/B " << data_type_name(p.in) << ", C " << data_type_name(p.c) << ", D " << data_type_name(p.d)
      << ", " << p.problem.name() << " (seed " << p.problem.seed << ")";
}

constexpr DataType kInTypes[] = {DataType::F16, DataType::BF16};
constexpr DataType kOutTypes[] = {DataType::F16, DataType::BF16, DataType::F32};

std::string param_name(const testing::TestParamInfo<MatmulParam>& info) {
  const MatmulParam& p = info.param;
  std::string s = p.kernel + "_in_" + data_type_name(p.in) + "_c_" + data_type_name(p.c) + "_d_" +
                  data_type_name(p.d) + "_" + p.problem.name();
  for (char& ch : s)
    if (!std::isalnum(static_cast<unsigned char>(ch))) ch = '_';
  return s;
}

// Which entries a set of parameters covers: auto, the cuBLAS baselines, or every other entry.
enum class Entries { Auto, Cublas, Kernels };

// "auto" (every type), or each entry of the group that takes a type other than f16 with f32
// accumulation: a typed entry added to the registry is tested here without further changes.
std::vector<MatmulParam> matmul_params(Entries group) {
  std::vector<KernelInfo> entries;
  if (group == Entries::Auto) {
    KernelInfo any;
    any.id = "auto", any.ops = kAllOps, any.align = 1, any.in_types = any.out_types = 0;
    for (DataType t : kOutTypes) any.in_types |= type_bit(t), any.out_types |= type_bit(t);
    entries.push_back(any);
  }
  for (const KernelInfo& k : kernels())
    if (group != Entries::Auto && (k.family == "cublas") == (group == Entries::Cublas) &&
        (k.in_types | k.out_types) != type_bit(DataType::F16) && (k.accums & kAccF32))
      entries.push_back(k);
  std::vector<MatmulParam> out;
  for (const KernelInfo& k : entries)
    for (DataType in : kInTypes)
      for (DataType c : kOutTypes)
        for (DataType d : kOutTypes) {
          if (!(k.in_types & type_bit(in)) || !(k.out_types & type_bit(c)) || !(k.out_types & type_bit(d))) continue;
          for (const MatmulCase& mc : matmul_cases())
            if (mc.allows(in, c, d) && (k.ops & op_bit(mc.op_a, mc.op_b))) out.push_back({k.id, in, c, d, mc, k.align});
        }
  return out;
}

// "auto" over seeded random cases (random_shapes.h; HGEMM_RANDOM_CASES, default 150), each with
// one random type combination: random ops, alpha and beta, padding, 2-byte-aligned pointers, C
// apart, in place or null, strided batches with shared operands, small-integer data.
std::vector<MatmulParam> random_params() {
  std::vector<MatmulParam> out;
  Draw r(random_seed() + 1);
  const int count = random_case_count(150);
  std::int64_t limit = INT64_MAX;
  if (const char* env = std::getenv("HGEMM_TEST_MAX_DIM")) limit = std::atoll(env);
  for (int i = 0; i < count; ++i) {
    const RandomShape s = random_shape(r);
    MatmulCase c;
    c.what = "random" + std::to_string(i) + s.kind;
    c.m = s.m, c.n = s.n, c.k = s.k, c.batch = s.batch;
    std::tie(c.op_a, c.op_b) = random_ops(r, s);
    // Small integers with integer alpha and beta: every D is an integer within bound(), exact
    // in any type that holds the bound (allows); fractions would make it depend on the data.
    const bool exact = r.chance(0.25);
    c.alpha = exact ? r.pick({1.f, -1.f, 2.f}) : r.pick({1.f, 1.f, -1.5f, 0.5f, 2.f});
    c.beta = exact ? r.pick({0.f, 0.f, 1.f, -1.f}) : r.pick({0.f, 0.f, 0.f, 1.f, -0.5f, 0.75f});
    c.c_mode = r.chance(0.15) ? CMode::InPlace : c.beta == 0.f && r.chance(0.3) ? CMode::Null : CMode::Separate;
    c.every_c_type = c.beta == 0.f && r.chance(0.3);
    if (exact) c.fill = ref::Fill::SmallInts, c.exact = true;
    c.lda_pad = r.padding(c.op_a == Op::N ? c.k : c.m), c.ldb_pad = r.padding(c.op_b == Op::N ? c.n : c.k);
    c.ldc_pad = r.padding(c.n), c.ldd_pad = r.padding(c.n);
    c.offset = r.chance(0.15);
    if (c.batch > 1) {
      c.repeat_a = r.chance(0.25), c.repeat_c = c.c_mode == CMode::Separate && r.chance(0.25);
      c.aligned_batch = r.chance(0.5);
    }
    c.seed = 90001 + static_cast<std::uint64_t>(i);
    // One type combination the case allows (an exact case needs D to hold its bound). Drawn
    // before the size limit applies, so case i is the same case under any limit.
    for (int tries = 0; tries < 20; ++tries) {
      const DataType in = r.pick({DataType::F16, DataType::BF16});
      const DataType d = r.pick({DataType::F16, DataType::BF16, DataType::F32});
      const DataType ct = c.c_mode == CMode::InPlace ? d : r.pick({DataType::F16, DataType::BF16, DataType::F32});
      if (c.allows(in, ct, d)) {
        if (c.m <= limit && c.n <= limit && c.k <= limit) out.push_back({"auto", in, ct, d, c, 1});
        break;
      }
    }
  }
  return out;
}

// Whether the problem meets an entry's `align` (in 2-byte units, as check_supported reads it):
// pointers of every product and leading dimensions.
bool meets_alignment(const MatmulArgs& a, int align) {
  if (align <= 1) return true;
  const bool c_read = a.beta != 0.f && a.m > 0 && a.n > 0 && a.batch > 0;
  auto ptr_ok = [&](const void* p, DataType t, std::int64_t stride, bool used) {
    for (std::int64_t i = 0; used && i < (a.batch > 1 ? 2 : 1); ++i)
      if ((reinterpret_cast<std::uintptr_t>(p) + i * stride * data_type_size(t)) % (2u * align) != 0) return false;
    return true;
  };
  return a.lda % align == 0 && a.ldb % align == 0 && a.ldd % align == 0 && (!c_read || a.ldc % align == 0) &&
         ptr_ok(a.a, a.a_type, a.stride_a, a.m > 0 && a.k > 0) &&
         ptr_ok(a.b, a.b_type, a.stride_b, a.k > 0 && a.n > 0) &&
         ptr_ok(a.c, a.c_type, a.stride_c, c_read) && ptr_ok(a.d, a.d_type, a.stride_d, true);
}

const KernelInfo* find_info(const std::string& id) {
  for (const KernelInfo& k : kernels())
    if (k.id == id) return &k;
  return nullptr;
}

class TypedMatmul : public testing::TestWithParam<MatmulParam> {};

TEST_P(TypedMatmul, MatchesReference) {
  HGEMM_SKIP_WITHOUT_GPU();
  const MatmulParam& p = GetParam();
  const MatmulCase& c = p.problem;
  DeviceProblem dev(c, p.in, p.c, p.d);
  MatmulOptions options;
  options.kernel = p.kernel;
  std::string id;
  const Status resolved = resolve_matmul(dev.args(), options, &id);
  if (resolved == Status::UnsupportedArch) GTEST_SKIP() << last_error_message();
  if (!meets_alignment(dev.args(), p.align)) {  // refused with a clear status, before any launch
    EXPECT_EQ(resolved, Status::Misaligned) << last_error_message();
    EXPECT_EQ(matmul(dev.args(), options), Status::Misaligned) << last_error_message();
    return;
  }
  ASSERT_EQ(resolved, Status::Success) << status_string(resolved) << ": " << last_error_message();
  if (!id.empty()) {  // what runs takes these types (an empty batch runs nothing)
    const KernelInfo* info = find_info(id);
    ASSERT_NE(info, nullptr) << id;
    EXPECT_TRUE((info->in_types & type_bit(p.in)) && (info->out_types & type_bit(p.d)) &&
                (c.beta == 0.f || (info->out_types & type_bit(p.c))))
        << id << " does not take these types";
  }

  const Status s = matmul(dev.args(), options);
  ASSERT_EQ(s, Status::Success) << status_string(s) << ": " << last_error_message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess) << cudaGetErrorString(cudaGetLastError());
  const ref::TypedData got = dev.d_buffer();
  const std::string ran =
      " (ran " + (id.empty() ? std::string("nothing") : id) + ", seed " + std::to_string(c.seed) + ")";
  expect_d_matches(c, p.d, dev.data(), dev.initial_d(), got, ran);
  if (c.c_mode == CMode::Separate) EXPECT_TRUE(dev.c_buffer() == dev.data().c) << "C was written" << ran;

  // Same call, same inputs: same bits, everywhere in D's buffer.
  dev.reset();
  ASSERT_EQ(matmul(dev.args(), options), Status::Success) << last_error_message();
  ASSERT_EQ(cudaDeviceSynchronize(), cudaSuccess);
  EXPECT_TRUE(dev.d_buffer() == got) << "results differ between two runs" << ran;
}

// cuBLAS in its own instantiation, which sanitizer runs leave out (as for the f16 suite).
INSTANTIATE_TEST_SUITE_P(Auto, TypedMatmul, testing::ValuesIn(matmul_params(Entries::Auto)), param_name);
INSTANTIATE_TEST_SUITE_P(Kernels, TypedMatmul, testing::ValuesIn(matmul_params(Entries::Kernels)), param_name);
INSTANTIATE_TEST_SUITE_P(Cublas, TypedMatmul, testing::ValuesIn(matmul_params(Entries::Cublas)), param_name);
INSTANTIATE_TEST_SUITE_P(Random, TypedMatmul, testing::ValuesIn(random_params()), param_name);

// The harness itself, without a device: a kernel that rounds the exact result once into D's
// type passes every case with every type combination, the random ones included (so the exact
// cases are exact in D's type and the tolerances hold), and one element written into D's
// padding or guard zones is caught.
TEST(TypedMatmulCases, ACorrectlyRoundedResultPassesEveryCheck) {
  std::vector<MatmulParam> params = matmul_params(Entries::Auto);  // every entry runs a subset of these
  const std::vector<MatmulParam> drawn = random_params();
  params.insert(params.end(), drawn.begin(), drawn.end());
  for (const MatmulParam& p : params) {
    const MatmulCase& c = p.problem;
    const MatmulData data = matmul_data(c, p.in, p.c);
    const ref::TypedData initial = initial_d_buffer(c, p.d, data);
    ref::TypedData got = initial;
    for (std::int64_t b = 0; b < c.batch; ++b)
      for (std::int64_t i = 0; i < c.m; ++i)
        for (std::int64_t j = 0; j < c.n; ++j) {
          const double want = data.reference[static_cast<std::size_t>(b)].c[static_cast<std::size_t>(i * c.n + j)];
          got.set(static_cast<std::size_t>(d_origin(c) + b * c.stride_d() + i * c.ldd() + j), static_cast<float>(want));
        }
    const std::string name = " (" + param_name({p, 0}) + ")";
    expect_d_matches(c, p.d, data, initial, got, name);
    if (testing::Test::HasFailure()) return;  // one case's failures are enough to read
    for (std::int64_t at : {std::int64_t{0}, d_origin(c) - 1, d_origin(c) + c.ldd() - 1,
                            static_cast<std::int64_t>(got.size()) - 1}) {
      if (c.m > 0 && c.batch > 0 && at == d_origin(c) + c.ldd() - 1 && c.ldd() == c.n) continue;  // inside D
      ref::TypedData stray = got;
      stray.set(static_cast<std::size_t>(at), 1.f);
      EXPECT_EQ(first_write_outside(c, initial, stray), at) << name;
    }
  }
}

}  // namespace
}  // namespace hgemm::test
