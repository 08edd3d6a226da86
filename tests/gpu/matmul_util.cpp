// SPDX-License-Identifier: Apache-2.0
#include "matmul_util.h"

#include <cmath>
#include <cstdlib>
#include <map>
#include <mutex>
#include <stdexcept>
#include <tuple>

namespace hgemm::test {

DeviceBytes::DeviceBytes(std::size_t bytes) : bytes_(bytes) {
  if (cudaMalloc(reinterpret_cast<void**>(&ptr_), std::max<std::size_t>(bytes, 1)) != cudaSuccess)
    throw std::runtime_error("cudaMalloc failed");
}
DeviceBytes::~DeviceBytes() { cudaFree(ptr_); }

void DeviceBytes::upload(const ref::TypedData& host, std::size_t byte_offset) {
  if (byte_offset + host.bytes() > bytes_) throw std::out_of_range("upload past the end of a device buffer");
  if (cudaMemcpy(ptr_ + byte_offset, host.data(), host.bytes(), cudaMemcpyHostToDevice) != cudaSuccess)
    throw std::runtime_error("cudaMemcpy to device failed");
}

ref::TypedData DeviceBytes::download(DataType t, std::size_t count, std::size_t byte_offset) const {
  ref::TypedData host(t, count);
  if (byte_offset + host.bytes() > bytes_) throw std::out_of_range("download past the end of a device buffer");
  if (cudaMemcpy(host.data(), ptr_ + byte_offset, host.bytes(), cudaMemcpyDeviceToHost) != cudaSuccess)
    throw std::runtime_error("cudaMemcpy to host failed");
  return host;
}

double MatmulCase::bound() const {
  const double largest = fill == ref::Fill::SmallInts ? 2 : 1;  // |a|, |b|, |c| ≤ largest
  return std::fabs(alpha) * static_cast<double>(k) * largest * largest + std::fabs(beta) * largest * c_scale;
}

bool MatmulCase::allows(DataType, DataType c, DataType d) const {
  if (c_mode == CMode::InPlace && c != d) return false;
  if (beta == 0.f && !every_c_type && c != d) return false;  // C unread: its type changes nothing
  if (exact && bound() > ref::exact_integer_limit(d)) return false;
  if (beta != 0.f && 2.0 * c_scale > ref::max_finite(c)) return false;
  return true;
}

std::string MatmulCase::name() const {
  std::string s = what + "_" + std::to_string(m) + "x" + std::to_string(n) + "x" + std::to_string(k) + "_" +
                  (op_a == Op::N ? "n" : "t") + (op_b == Op::N ? "n" : "t");
  if (alpha != 1.f || beta != 0.f) s += "_ab";
  if (lda_pad || ldb_pad || ldc_pad || ldd_pad) s += "_ld";
  if (offset) s += "_off";
  if (c_mode == CMode::InPlace) s += "_cd";
  if (batch != 1) s += "_b" + std::to_string(batch);
  if (repeat_a) s += "_a0";
  if (repeat_c) s += "_c0";
  if (exact) s += "_exact";
  return s;
}

namespace {

std::vector<MatmulCase> build_matmul_cases() {
  std::vector<MatmulCase> cases;
  auto add = [&](const char* what, std::int64_t m, std::int64_t n, std::int64_t k, Op op_a = Op::N,
                 Op op_b = Op::N) -> MatmulCase& {
    MatmulCase c;
    c.what = what, c.m = m, c.n = n, c.k = k, c.op_a = op_a, c.op_b = op_b;
    cases.push_back(c);
    return cases.back();
  };
  auto exact = [](MatmulCase& c) -> MatmulCase& {
    c.fill = ref::Fill::SmallInts, c.exact = true;
    return c;
  };
  const std::pair<Op, Op> all_ops[] = {{Op::N, Op::N}, {Op::N, Op::T}, {Op::T, Op::N}, {Op::T, Op::T}};

  // Small integers: f32 sums of products of {-2..2} are exact, and so is every D up to bound():
  // K ≤ 63 keeps it ≤ 256, exact even in bf16, so these run for every type combination; longer
  // K runs where D's type holds its bound (f16 to 2048, f32 to 2^24).
  exact(add("exact", 1, 1, 1)).beta = 1.f;
  for (auto [oa, ob] : all_ops) exact(add("exact", 129, 127, 63, oa, ob)).beta = 1.f;
  {
    MatmulCase& c = exact(add("exact", 300, 520, 31, Op::N, Op::T));
    c.alpha = 2.f, c.beta = -1.f, c.lda_pad = 3, c.ldb_pad = 1, c.ldc_pad = 5, c.ldd_pad = 7;
  }
  exact(add("exact", 127, 129, 500, Op::T, Op::N)).beta = 1.f;
  {
    MatmulCase& c = exact(add("exact", 129, 127, 4093, Op::N, Op::T));
    c.alpha = -1.f, c.beta = 1.f;
  }
  // K = 0: D = beta·C, exactly; zeros over a NaN C when beta = 0, whatever C's type.
  exact(add("k0", 127, 129, 0)).beta = 0.5f;
  exact(add("k0", 127, 129, 0, Op::T, Op::T)).every_c_type = true;
  {
    MatmulCase& c = exact(add("inplace", 129, 127, 63, Op::T, Op::T));
    c.c_mode = CMode::InPlace, c.beta = -1.f;
  }
  // C beyond f16's range (2^17), brought into it by beta = 2^-8: D = alpha·A·B + beta·C must not
  // round C to D's type before scaling it.
  {
    MatmulCase& c = exact(add("widec", 64, 48, 40));
    c.beta = 1.f / 256, c.c_scale = 65536.f;
  }

  // Uniform data, held to ref::matmul_tolerance: shapes around tile edges (M, N, K one off
  // multiples of 64 and 128, primes, 1), ld > width, each op.
  add("ragged", 1, 1, 1);
  {
    MatmulCase& c = add("ragged", 127, 129, 129);
    c.beta = 0.5f, c.lda_pad = 3, c.ldb_pad = 5, c.ldc_pad = 9, c.ldd_pad = 7;
  }
  {
    MatmulCase& c = add("ragged", 129, 127, 4093, Op::T, Op::N);
    c.alpha = -1.5f, c.beta = 0.75f;
  }
  add("ragged", 16, 1000, 4093, Op::N, Op::T).beta = 0.5f;
  {
    MatmulCase& c = add("ragged", 300, 520, 200, Op::T, Op::T);
    c.alpha = 0.5f, c.beta = -2.f, c.ldb_pad = 8, c.ldd_pad = 1;
  }
  add("ragged", 4095, 257, 1000);
  for (auto [oa, ob] : all_ops)
    if (oa != Op::N || ob != Op::N) add("ops", 127, 129, 129, oa, ob).beta = -1.f;
  // beta = 0: C holds NaN (every C type) or is null, and must not be read.
  add("nanc", 129, 127, 257).every_c_type = true;
  add("nullc", 127, 129, 129, Op::N, Op::T).c_mode = CMode::Null;
  // D in place of C (same type, leading dimension), read then written.
  {
    MatmulCase& c = add("inplace", 300, 520, 200);
    c.c_mode = CMode::InPlace, c.beta = -1.f;
  }
  {
    MatmulCase& c = add("inplace", 129, 127, 129, Op::T, Op::N);
    c.c_mode = CMode::InPlace, c.alpha = 2.f, c.beta = 0.5f, c.ldc_pad = 3;
  }
  // Pointers one element past a 16-byte boundary: aligned only to their element size.
  {
    MatmulCase& c = add("unaligned", 127, 129, 130);
    c.offset = true, c.beta = -1.f;
  }
  {
    MatmulCase& c = add("unaligned", 129, 127, 131, Op::N, Op::T);
    c.offset = true, c.c_mode = CMode::InPlace, c.beta = 0.5f;
  }
  // beta = 0 into rows of D that do not keep column pairs aligned (an odd ldd, a pointer one
  // element off) with columns past N and alpha ≠ 1: the checked register stores of the tiles
  // per CTA (64×16 and 128×64 tiles) and of the persistent kernels (f32 D).
  {
    MatmulCase& c = add("oddrows", 257, 131, 300, Op::N, Op::T);
    c.alpha = -0.5f, c.ldd_pad = 3, c.offset = true;
  }
  {
    MatmulCase& c = add("oddrows", 1001, 999, 200, Op::T, Op::N);
    c.alpha = 0.5f, c.ldd_pad = 2;
  }
  {
    MatmulCase& c = add("oddrows", 2047, 1031, 129);
    c.alpha = 1.5f, c.ldd_pad = 2;
  }
  {
    MatmulCase& c = add("alpha0", 128, 128, 128);
    c.alpha = 0.f, c.beta = 2.f;
  }
  // Strided batches: one A and one C for every product (stride 0), in place, and empty.
  {
    MatmulCase& c = add("batch", 37, 129, 41);
    c.batch = 3, c.repeat_a = c.repeat_c = true, c.alpha = 0.75f, c.beta = -0.5f;
  }
  {
    MatmulCase& c = exact(add("batch", 65, 33, 47));
    c.batch = 3, c.repeat_a = c.repeat_c = true, c.beta = 1.f;
  }
  {
    MatmulCase& c = add("batch", 7, 300, 130, Op::T, Op::N);
    c.batch = 3, c.c_mode = CMode::InPlace, c.beta = 1.f;
  }
  // Batches of many small products with a short K: a shared A, ragged products, C in place.
  {
    MatmulCase& c = exact(add("batch", 64, 64, 63, Op::N, Op::T));
    c.batch = 200, c.repeat_a = true, c.beta = 1.f;
  }
  {
    MatmulCase& c = add("batch", 65, 70, 200, Op::T, Op::T);
    c.batch = 160, c.alpha = 0.5f, c.beta = -1.f, c.ldd_pad = 3;
  }
  {
    MatmulCase& c = add("batch", 130, 64, 64);
    c.batch = 70, c.c_mode = CMode::InPlace, c.beta = 0.5f;
  }
  // Batches of small products on 64×64 tiles per CTA, D stored by TMA (beta = 0, aligned
  // matrices): whole tiles; ragged ones whose rows and columns TMA clips, with operands repacked;
  // a padded D.
  {
    MatmulCase& c = exact(add("batch", 64, 64, 64, Op::N, Op::T));
    c.batch = 300, c.aligned_batch = true;
  }
  {
    MatmulCase& c = add("batch", 50, 120, 100, Op::T, Op::N);
    c.batch = 129, c.aligned_batch = true, c.alpha = -0.5f;
  }
  {
    MatmulCase& c = add("batch", 128, 40, 72);
    c.batch = 33, c.aligned_batch = true, c.ldd_pad = 8;
  }
  {
    MatmulCase& c = add("batch", 127, 129, 129);
    c.batch = 0, c.beta = 0.5f;
  }
  // More tiles than the persistent kernels have clusters, D stored by TMA (beta = 0, aligned, N a
  // multiple of 8), for every type of D: a tile's last chunks wait in registers and are stored
  // under the next tile's first slices, or at its end when K has fewer slices than chunks wait.
  // On an H200: 90 tiles of 256×256 with one slice each; 72 tiles of four slices (the last
  // ragged) on 36 clusters, two each.
  add("manytiles", 2560, 2304, 64, Op::N, Op::T);
  add("manytiles", 2304, 2048, 200).alpha = -1.5f;
  // An empty D: nothing is written.
  add("empty", 0, 129, 7).beta = 0.5f;
  add("empty", 7, 0, 7).beta = 0.5f;

  std::uint64_t seed = 6001;
  for (MatmulCase& c : cases) c.seed = seed++;
  return within_max_dim(std::move(cases));  // small cases only in sanitizer runs
}

// Elements spanned by `count` matrices of rows × ld, `stride` apart.
std::size_t extent(std::int64_t count, std::int64_t rows, std::int64_t ld, std::int64_t stride) {
  return static_cast<std::size_t>(std::max<std::int64_t>(count - 1, 0) * stride + rows * ld);
}

std::int64_t stored(const MatmulCase& c, bool repeated) { return repeated ? 1 : std::max<std::int64_t>(c.batch, 1); }

// C's buffer: NaN wherever C must not be read (its padding, the gaps, all of it when beta = 0).
ref::TypedData make_c(const MatmulCase& c, DataType c_type) {
  if (c.c_mode == CMode::Null) return ref::TypedData(c_type, 0);
  const std::int64_t count = stored(c, c.repeat_c && c.c_mode == CMode::Separate);
  ref::TypedData x(c_type, extent(count, c.m, c.ldc(), c.stride_c()));
  x.fill_bits(ref::nan_bits(c_type));
  if (c.beta != 0.f)
    for (std::int64_t p = 0; p < count; ++p)
      for (std::int64_t i = 0; i < c.m; ++i)
        for (std::int64_t j = 0; j < c.n; ++j) {
          const std::int64_t at = p * c.stride_c() + i * c.ldc() + j;
          x.set(static_cast<std::size_t>(at),
                c.c_scale * ref::random_value(c.seed * 3 + 2, static_cast<std::uint64_t>(at), c.fill));
        }
  return x;
}

// A, B and the reference over them and C.
struct Inputs {
  ref::TypedData a, b;
  std::vector<ref::Reference> reference;
};

Inputs make_inputs(const MatmulCase& c, DataType in, const ref::TypedData& c_data) {
  Inputs d;
  d.a = ref::TypedData(in, extent(stored(c, c.repeat_a), c.a_rows(), c.lda(), c.stride_a()));
  d.b = ref::TypedData(in, extent(stored(c, false), c.b_rows(), c.ldb(), c.stride_b()));
  ref::fill_random(d.a, c.seed * 3, c.fill);
  ref::fill_random(d.b, c.seed * 3 + 1, c.fill);
  MatmulArgs host;
  host.op_a = c.op_a, host.op_b = c.op_b, host.m = c.m, host.n = c.n, host.k = c.k;
  host.alpha = c.alpha, host.beta = c.beta, host.batch = c.batch;
  host.a = d.a.data(), host.lda = c.lda(), host.a_type = in, host.stride_a = c.stride_a();
  host.b = d.b.data(), host.ldb = c.ldb(), host.b_type = in, host.stride_b = c.stride_b();
  host.c = c.c_mode == CMode::Null ? nullptr : c_data.data(), host.ldc = c.ldc(), host.c_type = c_data.type();
  host.stride_c = c.stride_c();
  d.reference = ref::reference_matmul(host);
  return d;
}

constexpr std::int64_t kLeadGuard = 64, kTailGuard = 256;  // elements of D's type around D

}  // namespace

const std::vector<MatmulCase>& matmul_cases() {
  static const std::vector<MatmulCase> cases = build_matmul_cases();
  return cases;
}

MatmulData matmul_data(const MatmulCase& c, DataType in, DataType c_type) {
  static std::mutex mutex;
  static std::map<std::pair<std::string, DataType>, ref::TypedData> c_cache;
  static std::map<std::tuple<std::string, DataType, DataType>, Inputs> cache;
  std::lock_guard<std::mutex> lock(mutex);
  auto c_it = c_cache.find({c.name(), c_type});
  if (c_it == c_cache.end()) c_it = c_cache.emplace(std::make_pair(c.name(), c_type), make_c(c, c_type)).first;
  // An unread C changes nothing in the reference: one entry serves every C type.
  const auto key = std::make_tuple(c.name(), in, c.beta == 0.f ? DataType::F16 : c_type);
  auto it = cache.find(key);
  if (it == cache.end()) it = cache.emplace(key, make_inputs(c, in, c_it->second)).first;
  return MatmulData{it->second.a, it->second.b, c_it->second, it->second.reference};
}

std::int64_t d_origin(const MatmulCase& c) { return kLeadGuard + (c.offset ? 1 : 0); }

ref::TypedData initial_d_buffer(const MatmulCase& c, DataType d_type, const MatmulData& data) {
  ref::TypedData d(d_type, static_cast<std::size_t>(kLeadGuard + 1 + kTailGuard) +
                               extent(std::max<std::int64_t>(c.batch, 1), c.m, c.ldd(), c.stride_d()));
  d.fill_bits(ref::nan_bits(d_type));
  if (c.c_mode == CMode::InPlace)  // D starts as C: same type, same layout
    for (std::size_t i = 0; i < data.c.size(); ++i)
      d.set_bits(static_cast<std::size_t>(d_origin(c)) + i, data.c.bits(i));
  return d;
}

std::int64_t first_write_outside(const MatmulCase& c, const ref::TypedData& initial, const ref::TypedData& now) {
  std::vector<char> inside(initial.size(), 0);
  for (std::int64_t p = 0; p < c.batch; ++p)
    for (std::int64_t i = 0; i < c.m; ++i)
      for (std::int64_t j = 0; j < c.n; ++j)
        inside[static_cast<std::size_t>(d_origin(c) + p * c.stride_d() + i * c.ldd() + j)] = 1;
  for (std::size_t e = 0; e < initial.size(); ++e)
    if (!inside[e] && initial.bits(e) != now.bits(e)) return static_cast<std::int64_t>(e);
  return -1;
}

void expect_d_matches(const MatmulCase& c, DataType d_type, const MatmulData& data, const ref::TypedData& initial,
                      const ref::TypedData& got, const std::string& context) {
  ASSERT_EQ(got.size(), initial.size());
  const std::int64_t outside = first_write_outside(c, initial, got);
  EXPECT_EQ(outside, -1) << "D's buffer written outside D's matrices, at element " << outside << " (D starts at "
                         << d_origin(c) << ")" << context;
  const double tol = ref::matmul_tolerance(d_type, c.k);
  for (std::int64_t i = 0; i < c.batch; ++i) {
    const ref::ErrorStats e = ref::compare(data.reference[static_cast<std::size_t>(i)],
                                           got.at(static_cast<std::size_t>(d_origin(c) + i * c.stride_d())), d_type,
                                           c.ldd());
    const std::string where = "product " + std::to_string(i) + ", worst at row " + std::to_string(e.worst_row) +
                              ", col " + std::to_string(e.worst_col) + context;
    EXPECT_EQ(e.nonfinite, 0) << "NaN/Inf in D: unwritten, or C read where beta = 0; " << where;
    if (c.exact) {
      EXPECT_EQ(e.max_abs, 0.0) << "small-integer data must give D exactly; " << where;
    } else {
      EXPECT_LE(e.max_scaled, tol) << "scaled max error; " << where;
      EXPECT_LE(e.rel_fro, tol) << "relative Frobenius error; " << where;
    }
  }
}

DeviceProblem::DeviceProblem(const MatmulCase& c, DataType in, DataType c_type, DataType d_type)
    : case_(c),
      data_(matmul_data(c, in, c_type)),
      initial_d_(initial_d_buffer(c, d_type, data_)),
      a_(data_.a.bytes() + 4),
      b_(data_.b.bytes() + 4),
      d_(initial_d_.bytes()) {
  if (c.c_mode == CMode::Separate) c_ = std::make_unique<DeviceBytes>(data_.c.bytes() + 4);
  const std::size_t off = c.offset ? 1 : 0;
  args_.op_a = c.op_a, args_.op_b = c.op_b, args_.m = c.m, args_.n = c.n, args_.k = c.k;
  args_.alpha = c.alpha, args_.beta = c.beta, args_.batch = c.batch;
  args_.a = a_.get() + off * data_type_size(in), args_.lda = c.lda(), args_.a_type = in;
  args_.b = b_.get() + off * data_type_size(in), args_.ldb = c.ldb(), args_.b_type = in;
  args_.d = d_.get() + d_origin(c) * data_type_size(d_type), args_.ldd = c.ldd(), args_.d_type = d_type;
  args_.c = c.c_mode == CMode::Separate ? c_->get() + off * data_type_size(c_type)
            : c.c_mode == CMode::InPlace ? args_.d
                                         : nullptr;
  args_.ldc = c.ldc(), args_.c_type = c_type;
  args_.stride_a = c.stride_a(), args_.stride_b = c.stride_b(), args_.stride_c = c.stride_c();
  args_.stride_d = c.stride_d();
  reset();
}

void DeviceProblem::reset() {
  const std::size_t off = case_.offset ? 1 : 0;
  a_.upload(data_.a, off * static_cast<std::size_t>(data_type_size(data_.a.type())));
  b_.upload(data_.b, off * static_cast<std::size_t>(data_type_size(data_.b.type())));
  if (c_) c_->upload(data_.c, off * static_cast<std::size_t>(data_type_size(data_.c.type())));
  d_.upload(initial_d_);
}

ref::TypedData DeviceProblem::c_buffer() const {
  const std::size_t off = case_.offset ? 1 : 0;
  return c_->download(data_.c.type(), data_.c.size(), off * static_cast<std::size_t>(data_type_size(data_.c.type())));
}

}  // namespace hgemm::test
