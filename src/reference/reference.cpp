// SPDX-License-Identifier: Apache-2.0
#include "reference/reference.h"

#include <algorithm>
#include <cmath>

#include "reference/parallel.h"
#include "reference/random.h"
#include "reference/typed_data.h"

namespace hgemm::ref {

namespace {

// op(X) as a dense rows×cols fp64 matrix, row-major; `transposed_out` stores its transpose instead.
std::vector<double> densify(Op op, const void* x, DataType t, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                            bool transposed_out) {
  std::vector<double> out(static_cast<std::size_t>(rows * cols));
  parallel_for(rows, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r)
      for (std::int64_t c = 0; c < cols; ++c) {
        const std::int64_t src = op == Op::N ? r * ld + c : c * ld + r;
        const std::int64_t dst = transposed_out ? c * rows + r : r * cols + c;
        out[static_cast<std::size_t>(dst)] = load(x, t, src);
      }
  });
  return out;
}

double dot(const double* x, const double* y, std::int64_t k) {
  double s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  std::int64_t i = 0;
  for (; i + 4 <= k; i += 4) {
    s0 += x[i] * y[i];
    s1 += x[i + 1] * y[i + 1];
    s2 += x[i + 2] * y[i + 2];
    s3 += x[i + 3] * y[i + 3];
  }
  for (; i < k; ++i) s0 += x[i] * y[i];
  return (s0 + s1) + (s2 + s3);
}

// One product: D = alpha·op(A)·op(B) + beta·C over typed inputs; C is not read when beta = 0.
Reference reference_product(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                            const void* a, DataType a_type, std::int64_t lda, const void* b, DataType b_type,
                            std::int64_t ldb, double beta, const void* c, DataType c_type, std::int64_t ldc) {
  Reference ref;
  ref.m = m, ref.n = n, ref.alpha = alpha, ref.beta = beta;
  ref.c.assign(static_cast<std::size_t>(m * n), 0.0);
  ref.c_in.assign(static_cast<std::size_t>(m * n), 0.0);
  ref.a_row_norm.assign(static_cast<std::size_t>(m), 0.0);
  ref.b_col_norm.assign(static_cast<std::size_t>(n), 0.0);
  const std::vector<double> da = densify(op_a, a, a_type, lda, m, k, /*transposed_out=*/false);  // m×k
  const std::vector<double> db = densify(op_b, b, b_type, ldb, k, n, /*transposed_out=*/true);   // n×k
  for (std::int64_t i = 0; i < m; ++i) ref.a_row_norm[i] = std::sqrt(dot(da.data() + i * k, da.data() + i * k, k));
  for (std::int64_t j = 0; j < n; ++j) ref.b_col_norm[j] = std::sqrt(dot(db.data() + j * k, db.data() + j * k, k));
  parallel_for(m, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double v = alpha * dot(da.data() + i * k, db.data() + j * k, k);
        if (beta != 0) {
          const double bc = beta * load(c, c_type, i * ldc + j);
          v += bc;
          ref.c_in[i * n + j] = std::fabs(bc);
        }
        ref.c[i * n + j] = v;
      }
  });
  return ref;
}

}  // namespace

float random_value(std::uint64_t seed, std::uint64_t index, Fill fill) {
  if (fill == Fill::SmallInts) return static_cast<float>(static_cast<int>(random_bits(seed, index) % 5) - 2);
  return static_cast<float>(random_uniform(seed, index));
}

void fill_random(__half* data, std::size_t count, std::uint64_t seed, Fill fill) {
  fill_random(static_cast<void*>(data), DataType::F16, count, seed, fill);
}

Reference reference_gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                         const __half* a, std::int64_t lda, const __half* b, std::int64_t ldb, double beta,
                         const __half* c, std::int64_t ldc) {
  return reference_product(op_a, op_b, m, n, k, alpha, a, DataType::F16, lda, b, DataType::F16, ldb, beta, c,
                           DataType::F16, ldc);
}

std::vector<Reference> reference_matmul(const MatmulArgs& args) {
  auto at = [](const void* base, DataType t, std::int64_t i, std::int64_t stride) -> const void* {
    return base ? static_cast<const unsigned char*>(base) + i * stride * data_type_size(t) : nullptr;
  };
  std::vector<Reference> out;
  for (std::int64_t i = 0; i < args.batch; ++i)
    out.push_back(reference_product(args.op_a, args.op_b, args.m, args.n, args.k, args.alpha,
                                    at(args.a, args.a_type, i, args.stride_a), args.a_type, args.lda,
                                    at(args.b, args.b_type, i, args.stride_b), args.b_type, args.ldb, args.beta,
                                    at(args.c, args.c_type, i, args.stride_c), args.c_type, args.ldc));
  return out;
}

double activate(Activation a, double z) {
  switch (a) {
    case Activation::ReLU: return z < 0 ? 0 : z;
    case Activation::GELU: return 0.5 * z * (1 + std::erf(z / std::sqrt(2.0)));
    case Activation::GELUTanh: return 0.5 * z * (1 + std::tanh(0.79788456080286535588 * (z + 0.044715 * z * z * z)));
    case Activation::SiLU: return z / (1 + std::exp(-z));
    default: return z;
  }
}

ErrorStats compare(const Reference& ref, const void* d, DataType d_type, std::int64_t ldd) {
  // Below the smallest normal number of D's type only absolute precision is left (for f16, the
  // subnormal spacing 2^-24), so the scale never drops below it.
  const double floor = std::ldexp(1.0, d_type == DataType::F16 ? -14 : -126);
  ErrorStats st;
  double err2 = 0, ref2 = 0;
  for (std::int64_t i = 0; i < ref.m; ++i)
    for (std::int64_t j = 0; j < ref.n; ++j) {
      const double want = ref.c[i * ref.n + j];
      const double got = load(d, d_type, i * ldd + j);
      ref2 += want * want;
      if (!std::isfinite(got)) {
        if (st.nonfinite++ == 0) st.worst_row = i, st.worst_col = j;
        continue;
      }
      const double e = std::fabs(got - want);
      err2 += e * e;
      st.max_abs = std::max(st.max_abs, e);
      const double scale =
          std::fabs(ref.alpha) * ref.a_row_norm[i] * ref.b_col_norm[j] + ref.c_in[i * ref.n + j] + floor;
      const double scaled = e / scale;
      if (scaled > st.max_scaled) {
        st.max_scaled = scaled;
        if (st.nonfinite == 0) st.worst_row = i, st.worst_col = j;
      }
    }
  st.rel_fro = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  return st;
}

ErrorStats compare(const Reference& ref, const __half* c, std::int64_t ldc) {
  return compare(ref, static_cast<const void*>(c), DataType::F16, ldc);
}

}  // namespace hgemm::ref
