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

// What gemm needs to know of one 2-D array, whether it came through DLPack or as plain numbers
// from the torch fast path (python/hgemm/__init__.py).
struct View {
  const char* name;
  std::uintptr_t data = 0;
  std::int64_t ndim = 2, rows = 0, cols = 0, s0 = 0, s1 = 0;  // shape and strides in elements
  bool is_half = false;
  bool on_gpu = false;
  int device = -1;
  std::string dtype_text;  // for the error message
  std::string where_text;
};

template <typename Arr>
View view_of(const Arr& a, const char* name) {
  View v;
  v.name = name;
  v.ndim = static_cast<std::int64_t>(a.ndim());
  if (v.ndim == 2) v.rows = a.shape(0), v.cols = a.shape(1), v.s0 = a.stride(0), v.s1 = a.stride(1);
  const nb::dlpack::dtype t = a.dtype();
  v.is_half = t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float) && t.bits == 16 && t.lanes == 1;
  v.dtype_text = "DLPack type code " + std::to_string(t.code) + ", " + std::to_string(t.bits) + " bits";
  const int type = a.device_type();
  v.on_gpu = type == nb::device::cuda::value || type == nb::device::cuda_managed::value;
  v.where_text = "DLPack device type " + std::to_string(type);
  v.device = a.device_id();
  v.data = reinterpret_cast<std::uintptr_t>(a.data());
  return v;
}

// (data_ptr, rows, cols, stride0, stride1, device or -1 for the CPU, is_float16) from Python.
View view_of_numbers(const nb::tuple& t, const char* name) {
  if (t.size() != 7) throw nb::type_error("internal: a view is 7 numbers");
  View v;
  v.name = name;
  v.data = nb::cast<std::uintptr_t>(t[0]);
  v.rows = nb::cast<std::int64_t>(t[1]), v.cols = nb::cast<std::int64_t>(t[2]);
  v.s0 = nb::cast<std::int64_t>(t[3]), v.s1 = nb::cast<std::int64_t>(t[4]);
  v.device = nb::cast<int>(t[5]);
  v.on_gpu = v.device >= 0;
  v.is_half = nb::cast<bool>(t[6]);
  v.dtype_text = "a dtype other than float16";
  v.where_text = "the CPU";
  return v;
}

// How a 2-D array lies in memory: row-major rows×cols with leading dimension ld, seen either
// as itself (op N) or as its transpose (op T) by the array's shape.
struct Layout {
  hgemm::Op op;
  std::int64_t ld;
};

void check_2d_half(const View& v) {
  if (v.ndim != 2)
    throw nb::value_error((std::string(v.name) + " must be 2-D, got " + std::to_string(v.ndim) + "-D").c_str());
  if (!v.is_half)
    throw nb::type_error((std::string(v.name) + " must have dtype float16 (" + v.dtype_text + " given)").c_str());
}

Layout layout_of(const View& v) {
  const std::int64_t r = v.rows, c = v.cols, s0 = v.s0, s1 = v.s1;
  if (s0 < 0 || s1 < 0) throw nb::value_error((std::string(v.name) + " has a negative stride").c_str());
  if ((s1 == 1 || c <= 1) && (r <= 1 || s0 >= c))
    return {hgemm::Op::N, r <= 1 ? std::max<std::int64_t>(c, 1) : std::max<std::int64_t>(s0, 1)};
  if ((s0 == 1 || r <= 1) && (c <= 1 || s1 >= r)) return {hgemm::Op::T, c <= 1 ? std::max<std::int64_t>(r, 1) : s1};
  throw nb::value_error((std::string(v.name) + " has strides (" + std::to_string(s0) + ", " + std::to_string(s1) +
                         "): one of the two dimensions must be contiguous (stride 1)")
                            .c_str());
}

void check_cuda(const View& v) {
  if (!v.on_gpu)
    throw nb::type_error((std::string(v.name) + " is not in CUDA memory (" + v.where_text +
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

Call prepare(const View& a, const View& b, const View& out, bool trans_a, bool trans_b) {
  for (const View* v : {&a, &b, &out}) check_2d_half(*v);
  const std::int64_t m = trans_a ? a.cols : a.rows, k = trans_a ? a.rows : a.cols;
  const std::int64_t kb = trans_b ? b.cols : b.rows, n = trans_b ? b.rows : b.cols;
  if (k != kb)
    throw nb::value_error(("shapes do not match: op(a) is " + std::to_string(m) + "x" + std::to_string(k) +
                           " but op(b) is " + std::to_string(kb) + "x" + std::to_string(n))
                              .c_str());
  if (out.rows != m || out.cols != n)
    throw nb::value_error(("out must be " + std::to_string(m) + "x" + std::to_string(n) + ", got " +
                           std::to_string(out.rows) + "x" + std::to_string(out.cols))
                              .c_str());
  const Layout la = layout_of(a), lb = layout_of(b), lc = layout_of(out);
  for (const View* v : {&a, &b, &out}) check_cuda(*v);
  if (a.device != b.device || a.device != out.device) throw nb::value_error("a, b and out must be on the same GPU");
  Call call{trans_a ? flip(la.op) : la.op, trans_b ? flip(lb.op) : lb.op, m, n, k, la.ld, lb.ld, lc.ld,
            reinterpret_cast<const __half*>(a.data), reinterpret_cast<const __half*>(b.data),
            reinterpret_cast<__half*>(out.data), a.device};
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

void gemm_call(const Call& call, float alpha, float beta, const std::string& accum, const std::string& kernel,
               std::uintptr_t stream) {
  const hgemm::GemmOptions opt = options(accum, kernel, stream);
  hgemm::Status s;
  {
    nb::gil_scoped_release release;
    s = run(call, alpha, beta, opt);
  }
  if (s != hgemm::Status::Success) raise_status(s);
}

void gemm(const Array& a, const Array& b, MutArray out, float alpha, float beta, const std::string& accum,
          const std::string& kernel, bool trans_a, bool trans_b, std::uintptr_t stream) {
  gemm_call(prepare(view_of(a, "a"), view_of(b, "b"), view_of(out, "out"), trans_a, trans_b), alpha, beta, accum,
            kernel, stream);
}

// The same from plain numbers (torch fast path: no DLPack capsule per call).
void gemm_views(const nb::tuple& a, const nb::tuple& b, const nb::tuple& out, float alpha, float beta,
                const std::string& accum, const std::string& kernel, bool trans_a, bool trans_b,
                std::uintptr_t stream) {
  gemm_call(prepare(view_of_numbers(a, "a"), view_of_numbers(b, "b"), view_of_numbers(out, "out"), trans_a, trans_b), alpha, beta, accum,
            kernel, stream);
}

// Host time per call of `iters` back-to-back hgemm::gemm calls made from C++, timed before the
// closing sync: the enqueue cost, the baseline for the Python binding's per-call overhead. Keep
// `iters` well under the launch queue's depth (~1000) so the host never waits for the GPU.
double cpp_seconds_per_call(const Array& a, const Array& b, MutArray out, const std::string& kernel, int iters,
                            std::uintptr_t stream) {
  const Call call = prepare(view_of(a, "a"), view_of(b, "b"), view_of(out, "out"), false, false);
  const hgemm::GemmOptions opt = options("f32", kernel, stream);
  nb::gil_scoped_release release;
  cudaStreamSynchronize(opt.stream);
  const auto start = std::chrono::steady_clock::now();
  hgemm::Status s = hgemm::Status::Success;
  for (int i = 0; i < iters && s == hgemm::Status::Success; ++i) s = run(call, 1.f, 0.f, opt);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cudaStreamSynchronize(opt.stream);
  if (s != hgemm::Status::Success) {
    nb::gil_scoped_acquire acquire;
    raise_status(s);
  }
  return seconds / iters;
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
  m.def("gemm_views", &gemm_views, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("alpha"), nb::arg("beta"),
        nb::arg("accum"), nb::arg("kernel"), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("stream"),
        "gemm with each array given as (data_ptr, rows, cols, stride0, stride1, device or -1, is_float16).");
  m.def("cpp_seconds_per_call", &cpp_seconds_per_call, nb::arg("a"), nb::arg("b"), nb::arg("out"),
        nb::arg("kernel"), nb::arg("iters"), nb::arg("stream"),
        "Host seconds per hgemm::gemm call made from C++ (for measuring the binding's overhead).");
}
