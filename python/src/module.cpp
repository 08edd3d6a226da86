// The Python extension module hgemm._hgemm: hgemm::gemm over any DLPack array (torch, cupy,
// jax, numpy for the error paths). Arrays are used in place: strides give the leading dimension,
// and a transposed view becomes op T without a copy. python/hgemm/__init__.py wraps this.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <chrono>
#include <cstdint>
#include <string>

#include "hgemm/hgemm.h"

namespace nb = nanobind;

namespace {

using Array = nb::ndarray<nb::ro>;
using MutArray = nb::ndarray<>;

// How a 2-D array lies in memory: row-major rows×cols with leading dimension ld, seen either
// as itself (op N) or as its transpose (op T) by the array's shape.
struct Layout {
  hgemm::Op op;
  std::int64_t ld;
};

template <typename A>
std::int64_t dim(const A& a, int i) { return static_cast<std::int64_t>(a.shape(i)); }

template <typename A>
void check_2d_half(const A& a, const char* name) {
  if (a.ndim() != 2)
    throw nb::value_error((std::string(name) + " must be 2-D, got " + std::to_string(a.ndim()) + "-D").c_str());
  const nb::dlpack::dtype t = a.dtype();
  if (t.code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float) || t.bits != 16 || t.lanes != 1)
    throw nb::type_error((std::string(name) + " must have dtype float16 (code " + std::to_string(t.code) +
                          ", " + std::to_string(t.bits) + " bits given)")
                             .c_str());
}

template <typename A>
Layout layout_of(const A& a, const char* name) {
  const std::int64_t r = dim(a, 0), c = dim(a, 1), s0 = a.stride(0), s1 = a.stride(1);
  if (s0 < 0 || s1 < 0) throw nb::value_error((std::string(name) + " has a negative stride").c_str());
  if ((s1 == 1 || c <= 1) && (r <= 1 || s0 >= c)) return {hgemm::Op::N, r <= 1 ? std::max<std::int64_t>(c, 1) : std::max<std::int64_t>(s0, 1)};
  if ((s0 == 1 || r <= 1) && (c <= 1 || s1 >= r)) return {hgemm::Op::T, c <= 1 ? std::max<std::int64_t>(r, 1) : s1};
  throw nb::value_error((std::string(name) + " has strides (" + std::to_string(s0) + ", " + std::to_string(s1) +
                         "): one of the two dimensions must be contiguous (stride 1)")
                            .c_str());
}

template <typename A>
void check_cuda(const A& a, const char* name) {
  const int t = a.device_type();
  if (t != nb::device::cuda::value && t != nb::device::cuda_managed::value)
    throw nb::type_error((std::string(name) + " is not in CUDA memory (DLPack device type " + std::to_string(t) +
                          "); hgemm needs GPU arrays (torch CUDA tensors, cupy arrays, ...)")
                             .c_str());
}

hgemm::Op flip(hgemm::Op op) { return op == hgemm::Op::N ? hgemm::Op::T : hgemm::Op::N; }

hgemm::Accum parse_accum(const std::string& s) {
  if (s == "f32") return hgemm::Accum::F32;
  if (s == "f16") return hgemm::Accum::F16;
  throw nb::value_error(("accum must be 'f16' or 'f32', not '" + s + "'").c_str());
}

void raise_status(hgemm::Status s) {
  const std::string text = std::string(hgemm::status_string(s)) + ": " + hgemm::last_error_message();
  switch (s) {
    case hgemm::Status::NoDevice:
    case hgemm::Status::CudaError:
    case hgemm::Status::CublasError:
      throw std::runtime_error(text);
    default:
      throw nb::value_error(text.c_str());
  }
}

// Everything gemm needs, worked out from the arrays.
struct Call {
  hgemm::Op op_a, op_b;
  std::int64_t m, n, k, lda, ldb, ldc;
  const __half *a, *b;
  __half* c;
  int device;
};

Call prepare(const Array& a, const Array& b, const MutArray& out, bool trans_a, bool trans_b) {
  check_2d_half(a, "a");
  check_2d_half(b, "b");
  check_2d_half(out, "out");
  const std::int64_t m = trans_a ? dim(a, 1) : dim(a, 0), k = trans_a ? dim(a, 0) : dim(a, 1);
  const std::int64_t kb = trans_b ? dim(b, 1) : dim(b, 0), n = trans_b ? dim(b, 0) : dim(b, 1);
  if (k != kb)
    throw nb::value_error(("shapes do not match: op(a) is " + std::to_string(m) + "x" + std::to_string(k) +
                           " but op(b) is " + std::to_string(kb) + "x" + std::to_string(n))
                              .c_str());
  if (dim(out, 0) != m || dim(out, 1) != n)
    throw nb::value_error(("out must be " + std::to_string(m) + "x" + std::to_string(n) + ", got " +
                           std::to_string(dim(out, 0)) + "x" + std::to_string(dim(out, 1)))
                              .c_str());
  const Layout la = layout_of(a, "a"), lb = layout_of(b, "b"), lc = layout_of(out, "out");
  check_cuda(a, "a");
  check_cuda(b, "b");
  check_cuda(out, "out");
  if (a.device_id() != b.device_id() || a.device_id() != out.device_id())
    throw nb::value_error("a, b and out must be on the same GPU");
  Call call{trans_a ? flip(la.op) : la.op, trans_b ? flip(lb.op) : lb.op, m, n, k, la.ld, lb.ld, lc.ld,
            static_cast<const __half*>(a.data()), static_cast<const __half*>(b.data()),
            static_cast<__half*>(out.data()), a.device_id()};
  if (lc.op == hgemm::Op::T) {
    // out is a transposed view: compute outᵀ = op(b)ᵀ·op(a)ᵀ into its row-major storage.
    call = Call{flip(call.op_b), flip(call.op_a), n, m, k, lb.ld, la.ld, lc.ld, call.b, call.a, call.c, call.device};
  }
  return call;
}

// Runs on the array's GPU, restoring the caller's current device.
hgemm::Status run(const Call& c, float alpha, float beta, const hgemm::GemmOptions& opt) {
  int previous = 0;
  cudaGetDevice(&previous);
  if (previous != c.device) cudaSetDevice(c.device);
  const hgemm::Status s =
      hgemm::gemm(c.op_a, c.op_b, c.m, c.n, c.k, alpha, c.a, c.lda, c.b, c.ldb, beta, c.c, c.ldc, opt);
  if (previous != c.device) cudaSetDevice(previous);
  return s;
}

hgemm::GemmOptions options(const std::string& accum, const std::string& kernel, std::uintptr_t stream) {
  hgemm::GemmOptions o;
  o.accum = parse_accum(accum);
  o.kernel = kernel;
  o.stream = reinterpret_cast<cudaStream_t>(stream);
  return o;
}

void gemm(const Array& a, const Array& b, MutArray out, float alpha, float beta, const std::string& accum,
          const std::string& kernel, bool trans_a, bool trans_b, std::uintptr_t stream) {
  const Call call = prepare(a, b, out, trans_a, trans_b);
  const hgemm::GemmOptions opt = options(accum, kernel, stream);
  hgemm::Status s;
  {
    nb::gil_scoped_release release;
    s = run(call, alpha, beta, opt);
  }
  if (s != hgemm::Status::Success) raise_status(s);
}

// Host time per call of `iters` back-to-back hgemm::gemm calls made from C++ (then a sync): the
// baseline for the Python binding's per-call overhead.
double cpp_seconds_per_call(const Array& a, const Array& b, MutArray out, const std::string& kernel, int iters,
                            std::uintptr_t stream) {
  const Call call = prepare(a, b, out, false, false);
  const hgemm::GemmOptions opt = options("f32", kernel, stream);
  nb::gil_scoped_release release;
  const auto start = std::chrono::steady_clock::now();
  for (int i = 0; i < iters; ++i)
    if (hgemm::Status s = run(call, 1.f, 0.f, opt); s != hgemm::Status::Success) {
      nb::gil_scoped_acquire acquire;
      raise_status(s);
    }
  cudaStreamSynchronize(opt.stream);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / iters;
}

nb::list kernel_list() {
  nb::list out;
  for (const hgemm::KernelInfo& k : hgemm::kernels()) {
    nb::dict d;
    d["id"] = k.id;
    d["family"] = k.family;
    d["ladder"] = k.ladder;
    d["summary"] = k.summary;
    d["min_arch"] = std::to_string(k.min_cc / 10) + "." + std::to_string(k.min_cc % 10);
    std::vector<std::string> ops;
    for (auto [bit, name] : {std::pair{hgemm::kOpNN, "nn"}, {hgemm::kOpNT, "nt"}, {hgemm::kOpTN, "tn"}, {hgemm::kOpTT, "tt"}})
      if (k.ops & bit) ops.push_back(name);
    d["ops"] = ops;
    std::vector<std::string> accums;
    if (k.accums & hgemm::kAccF16) accums.push_back("f16");
    if (k.accums & hgemm::kAccF32) accums.push_back("f32");
    d["accums"] = accums;
    d["align"] = k.align;
    d["baseline"] = k.baseline;
    out.append(d);
  }
  return out;
}

}  // namespace

NB_MODULE(_hgemm, m) {
  m.doc() = "hgemm: half-precision GEMM kernels (C = alpha·op(A)·op(B) + beta·C) on DLPack arrays";
  m.def("kernels", &kernel_list, "Every registered kernel, as dicts.");
  m.def("gemm", &gemm, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("alpha"), nb::arg("beta"),
        nb::arg("accum"), nb::arg("kernel"), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("stream"),
        "out = alpha·op(a)·op(b) + beta·out, in place, on `stream` (a cudaStream_t as an int).");
  m.def("cpp_seconds_per_call", &cpp_seconds_per_call, nb::arg("a"), nb::arg("b"), nb::arg("out"),
        nb::arg("kernel"), nb::arg("iters"), nb::arg("stream"),
        "Host seconds per hgemm::gemm call made from C++ (for measuring the binding's overhead).");
}
