#include "reference/reference.h"

#include "reference/random.h"

#include <algorithm>
#include <cmath>
#include <thread>

namespace hgemm::ref {

namespace {

// Runs body(begin, end) over [0, count) split across the machine's cores.
template <typename Body>
void parallel_for(std::int64_t count, Body body) {
  const std::int64_t threads =
      std::max<std::int64_t>(1, std::min<std::int64_t>(std::thread::hardware_concurrency(), count / 16 + 1));
  if (threads == 1) {
    body(std::int64_t{0}, count);
    return;
  }
  std::vector<std::thread> pool;
  const std::int64_t chunk = (count + threads - 1) / threads;
  for (std::int64_t t = 0; t < threads; ++t) {
    const std::int64_t begin = t * chunk, end = std::min(count, begin + chunk);
    if (begin < end) pool.emplace_back([=] { body(begin, end); });
  }
  for (auto& th : pool) th.join();
}

// op(X) as a dense rows×cols fp64 matrix, row-major; `transposed_out` stores its transpose instead.
std::vector<double> densify(Op op, const __half* x, std::int64_t ld, std::int64_t rows, std::int64_t cols,
                            bool transposed_out) {
  std::vector<double> out(static_cast<std::size_t>(rows * cols));
  parallel_for(rows, [&](std::int64_t r0, std::int64_t r1) {
    for (std::int64_t r = r0; r < r1; ++r)
      for (std::int64_t c = 0; c < cols; ++c) {
        const std::int64_t src = op == Op::N ? r * ld + c : c * ld + r;
        const std::int64_t dst = transposed_out ? c * rows + r : r * cols + c;
        out[static_cast<std::size_t>(dst)] = static_cast<double>(__half2float(x[src]));
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

}  // namespace

float random_value(std::uint64_t seed, std::uint64_t index, Fill fill) {
  if (fill == Fill::SmallInts) return static_cast<float>(static_cast<int>(random_bits(seed, index) % 5) - 2);
  return static_cast<float>(random_uniform(seed, index));
}

void fill_random(__half* data, std::size_t count, std::uint64_t seed, Fill fill) {
  parallel_for(static_cast<std::int64_t>(count), [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i)
      data[i] = __float2half(random_value(seed, static_cast<std::uint64_t>(i), fill));
  });
}

Reference reference_gemm(Op op_a, Op op_b, std::int64_t m, std::int64_t n, std::int64_t k, double alpha,
                         const __half* a, std::int64_t lda, const __half* b, std::int64_t ldb, double beta,
                         const __half* c, std::int64_t ldc) {
  Reference ref;
  ref.m = m, ref.n = n, ref.alpha = alpha, ref.beta = beta;
  ref.c.assign(static_cast<std::size_t>(m * n), 0.0);
  ref.c_in.assign(static_cast<std::size_t>(m * n), 0.0);
  ref.a_row_norm.assign(static_cast<std::size_t>(m), 0.0);
  ref.b_col_norm.assign(static_cast<std::size_t>(n), 0.0);
  const std::vector<double> da = densify(op_a, a, lda, m, k, /*transposed_out=*/false);  // m×k
  const std::vector<double> db = densify(op_b, b, ldb, k, n, /*transposed_out=*/true);   // n×k
  for (std::int64_t i = 0; i < m; ++i) ref.a_row_norm[i] = std::sqrt(dot(&da[i * k], &da[i * k], k));
  for (std::int64_t j = 0; j < n; ++j) ref.b_col_norm[j] = std::sqrt(dot(&db[j * k], &db[j * k], k));
  parallel_for(m, [&](std::int64_t i0, std::int64_t i1) {
    for (std::int64_t i = i0; i < i1; ++i)
      for (std::int64_t j = 0; j < n; ++j) {
        double v = alpha * dot(&da[i * k], &db[j * k], k);
        if (beta != 0) {
          const double bc = beta * static_cast<double>(__half2float(c[i * ldc + j]));
          v += bc;
          ref.c_in[i * n + j] = std::fabs(bc);
        }
        ref.c[i * n + j] = v;
      }
  });
  return ref;
}

ErrorStats compare(const Reference& ref, const __half* c, std::int64_t ldc) {
  ErrorStats st;
  double err2 = 0, ref2 = 0;
  for (std::int64_t i = 0; i < ref.m; ++i)
    for (std::int64_t j = 0; j < ref.n; ++j) {
      const double want = ref.c[i * ref.n + j];
      const double got = static_cast<double>(__half2float(c[i * ldc + j]));
      ref2 += want * want;
      if (!std::isfinite(got)) {
        if (st.nonfinite++ == 0) st.worst_row = i, st.worst_col = j;
        continue;
      }
      const double e = std::fabs(got - want);
      err2 += e * e;
      st.max_abs = std::max(st.max_abs, e);
      // Below 2^-14 (the smallest normal fp16) an fp16 output has only absolute precision
      // (subnormal spacing 2^-24), so the scale never drops below it.
      const double scale = std::fabs(ref.alpha) * ref.a_row_norm[i] * ref.b_col_norm[j] +
                           ref.c_in[i * ref.n + j] + std::ldexp(1.0, -14);
      const double scaled = e / scale;
      if (scaled > st.max_scaled) {
        st.max_scaled = scaled;
        if (st.nonfinite == 0) st.worst_row = i, st.worst_col = j;
      }
    }
  st.rel_fro = ref2 > 0 ? std::sqrt(err2 / ref2) : std::sqrt(err2);
  return st;
}

}  // namespace hgemm::ref
