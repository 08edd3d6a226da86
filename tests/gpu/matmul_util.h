// SPDX-License-Identifier: Apache-2.0
// Helpers of the typed matmul tests: the case list, the inputs of a case in given types with
// their fp64 reference (computed once per process), and the device buffers of one run, laid out
// with poisoned padding, gaps between batch matrices and guard zones around D.
#pragma once

#include <memory>

#include "gpu_util.h"
#include "reference/tolerance.h"
#include "reference/typed_data.h"

namespace hgemm::test {

/// A device allocation of raw bytes, freed on destruction.
class DeviceBytes {
 public:
  explicit DeviceBytes(std::size_t bytes);
  ~DeviceBytes();
  DeviceBytes(const DeviceBytes&) = delete;
  DeviceBytes& operator=(const DeviceBytes&) = delete;
  unsigned char* get() const { return ptr_; }
  void upload(const ref::TypedData& host, std::size_t byte_offset = 0);
  ref::TypedData download(DataType t, std::size_t count, std::size_t byte_offset = 0) const;

 private:
  unsigned char* ptr_ = nullptr;
  std::size_t bytes_ = 0;
};

/// Where C is: its own memory, D's memory (in place), or nowhere (null, beta = 0).
enum class CMode { Separate, InPlace, Null };

/// One typed matmul problem of the test set, run for every type combination it allows.
struct MatmulCase {
  std::string what = "ragged";  ///< what the case covers: the first word of its name
  std::int64_t m = 0, n = 0, k = 0;
  Op op_a = Op::N, op_b = Op::N;
  float alpha = 1.f, beta = 0.f;
  std::int64_t lda_pad = 0, ldb_pad = 0, ldc_pad = 0, ldd_pad = 0;  ///< in place, ldc_pad is D's too
  bool offset = false;  ///< every pointer one element past a 128-byte boundary
  CMode c_mode = CMode::Separate;
  ref::Fill fill = ref::Fill::Uniform;
  bool exact = false;   ///< small integers: D must equal the reference exactly
  float c_scale = 1.f;  ///< C's random values times this power of two
  bool every_c_type = false;  ///< with beta = 0, still run every C type (else only C's type = D's)
  std::int64_t batch = 1;
  bool repeat_a = false, repeat_c = false;  ///< stride 0: one A / one C for every product
  bool aligned_batch = false;  ///< gaps of 8 elements between the matrices: each as aligned as the first
  std::uint64_t seed = 0;

  std::int64_t a_rows() const { return op_a == Op::N ? m : k; }
  std::int64_t b_rows() const { return op_b == Op::N ? k : n; }
  std::int64_t lda() const { return std::max<std::int64_t>(1, op_a == Op::N ? k : m) + lda_pad; }
  std::int64_t ldb() const { return std::max<std::int64_t>(1, op_b == Op::N ? n : k) + ldb_pad; }
  std::int64_t ldd() const { return std::max<std::int64_t>(1, n) + (c_mode == CMode::InPlace ? ldc_pad : ldd_pad); }
  std::int64_t ldc() const { return c_mode == CMode::InPlace ? ldd() : std::max<std::int64_t>(1, n) + ldc_pad; }
  // Batch strides: odd gaps between the matrices (untouched, and every matrix differently
  // aligned), or gaps of 8 (aligned_batch).
  std::int64_t gap(std::int64_t odd) const { return batch > 1 ? (aligned_batch ? 8 : odd) : 0; }
  std::int64_t stride_a() const { return repeat_a ? 0 : a_rows() * lda() + gap(3); }
  std::int64_t stride_b() const { return b_rows() * ldb() + gap(5); }
  std::int64_t stride_d() const { return m * ldd() + gap(7); }
  std::int64_t stride_c() const {
    return c_mode == CMode::InPlace ? stride_d() : repeat_c ? 0 : m * ldc() + gap(7);
  }
  /// The largest |D| the data can give (small-integer cases): |alpha|·K·2·2 + |beta|·2·c_scale.
  double bound() const;
  /// Whether the case runs with these types: in place needs C's type to be D's, an exact case
  /// needs its bound to be exact in D's type, C's values must be finite in C's type.
  bool allows(DataType in, DataType c, DataType d) const;
  std::string name() const;  ///< e.g. "ragged_127x129x129_nn_ab_ld"
};

/// The typed correctness set: exact small-integer cases, ragged shapes around tile edges, every
/// op, ld > width, NaN in an unread C and a null C, K = 0, alpha/beta ≠ 1/0, in place,
/// 2-byte-aligned pointers, C beyond D's range, strided batches with stride-0 operands, empty
/// batch and empty D. HGEMM_TEST_MAX_DIM (environment) drops the cases with a larger dimension.
const std::vector<MatmulCase>& matmul_cases();

/// A case's inputs in given types, as uploaded, and the reference of every product (held in a
/// process-wide cache: the large references are computed once, and once for every C type when
/// C is not read).
struct MatmulData {
  const ref::TypedData& a;
  const ref::TypedData& b;
  const ref::TypedData& c;  ///< C's buffer; in place, D's initial matrices; empty for a null C
  const std::vector<ref::Reference>& reference;
};
MatmulData matmul_data(const MatmulCase& c, DataType in, DataType c_type);

/// Element of D's buffer where D (product 0, row 0, column 0) starts: after a guard zone, and
/// one element further with `offset`.
std::int64_t d_origin(const MatmulCase& c);

/// D's buffer before a run: NaN everywhere (padding, gaps, guard zones before and after), but
/// C's matrices where D's are for an in-place case.
ref::TypedData initial_d_buffer(const MatmulCase& c, DataType d_type, const MatmulData& data);

/// Bits of D's buffer outside D's matrices that differ from the initial buffer (padding, gaps
/// between products, guard zones); -1 for none, else the first such element.
std::int64_t first_write_outside(const MatmulCase& c, const ref::TypedData& initial, const ref::TypedData& now);

/// The checks of D's buffer after a run (gtest expectations): nothing written outside D's
/// matrices, no NaN or Inf in them, each product exactly the reference (exact cases) or within
/// ref::matmul_tolerance. `context` is added to every failure.
void expect_d_matches(const MatmulCase& c, DataType d_type, const MatmulData& data, const ref::TypedData& initial,
                      const ref::TypedData& got, const std::string& context);

/// The device buffers of one case: A, B and C as in MatmulData (one element further with
/// `offset`), and D inside a buffer poisoned with NaN, guard zones before and after it.
class DeviceProblem {
 public:
  DeviceProblem(const MatmulCase& c, DataType in, DataType c_type, DataType d_type);
  const MatmulArgs& args() const { return args_; }
  const MatmulData& data() const { return data_; }
  /// Uploads the inputs and D's initial buffer again (before a second run).
  void reset();
  /// D's whole buffer as it is now, and as it was uploaded.
  ref::TypedData d_buffer() const { return d_.download(initial_d_.type(), initial_d_.size()); }
  const ref::TypedData& initial_d() const { return initial_d_; }
  /// C's buffer as it is now (CMode::Separate only).
  ref::TypedData c_buffer() const;

 private:
  const MatmulCase& case_;
  const MatmulData data_;
  ref::TypedData initial_d_;
  DeviceBytes a_, b_, d_;
  std::unique_ptr<DeviceBytes> c_;
  MatmulArgs args_;
};

}  // namespace hgemm::test
