// The Python extension module hgemm._hgemm: hgemm::gemm and hgemm::gemm_strided_batched over any
// DLPack array (torch, cupy, jax, numpy for the error paths). Arrays are used in place: strides give
// the leading dimension, a transposed view becomes op T and a batch stride of 0 repeats a matrix,
// without a copy. python/hgemm/__init__.py wraps this.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>

#include "hgemm/hgemm.h"

namespace nb = nanobind;

namespace {

using Array = nb::ndarray<nb::ro>;
using MutArray = nb::ndarray<>;

// What gemm needs to know of one 2-D array or 3-D batch of matrices, whether it came through DLPack
// or as plain numbers from the torch fast path (python/hgemm/__init__.py). A 2-D array is a batch of
// one with batch stride 0.
struct View {
  const char* name;
  std::uintptr_t data = 0;
  std::int64_t ndim = 2, rows = 0, cols = 0, s0 = 0, s1 = 0;  // one matrix: shape and strides in elements
  std::int64_t batch = 1, sb = 0;                             // the batch dimension of a 3-D array
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
  if (v.ndim == 2 || v.ndim == 3) {
    const std::size_t d = v.ndim == 3 ? 1 : 0;
    v.rows = a.shape(d), v.cols = a.shape(d + 1), v.s0 = a.stride(d), v.s1 = a.stride(d + 1);
    if (v.ndim == 3) v.batch = a.shape(0), v.sb = a.stride(0);
  }
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

// (data_ptr, rows, cols, stride0, stride1, device or -1 for the CPU, is_float16) from Python, and
// for a 3-D array two more: (batch, batch stride).
View view_of_numbers(const nb::tuple& t, const char* name) {
  if (t.size() != 7 && t.size() != 9) throw nb::type_error("internal: a view is 7 numbers, or 9 for a batch");
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
  if (t.size() == 9) v.ndim = 3, v.batch = nb::cast<std::int64_t>(t[7]), v.sb = nb::cast<std::int64_t>(t[8]);
  return v;
}

// How a 2-D array lies in memory: row-major rows×cols with leading dimension ld, seen either
// as itself (op N) or as its transpose (op T) by the array's shape.
struct Layout {
  hgemm::Op op;
  std::int64_t ld;
};

void check_matrices_half(const View& v) {
  if (v.ndim != 2 && v.ndim != 3)
    throw nb::value_error(
        (std::string(v.name) + " must be 2-D or 3-D (a batch of matrices), got " + std::to_string(v.ndim) + "-D")
            .c_str());
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

// Everything gemm or gemm_strided_batched needs, worked out from the arrays. batch = 1 is one gemm.
struct Call {
  hgemm::Op op_a, op_b;
  std::int64_t m, n, k, lda, ldb, ldc;
  const __half *a, *b;
  __half* c;
  int device;
  std::int64_t batch = 1, stride_a = 0, stride_b = 0, stride_c = 0;
};

std::string dims(const View& v) {
  return (v.ndim == 3 ? std::to_string(v.batch) + "x" : std::string()) + std::to_string(v.rows) + "x" +
         std::to_string(v.cols);
}

// The batch stride the library gets for an operand: 0 (its one matrix repeated) unless it has a
// batch of more than one.
std::int64_t batch_stride(const View& v) {
  if (v.ndim == 3 && v.batch > 1 && v.sb < 0)
    throw nb::value_error((std::string(v.name) + " has a negative batch stride").c_str());
  return v.ndim == 3 && v.batch > 1 ? v.sb : 0;
}

// Batches follow torch.matmul's broadcasting: a 2-D operand, or a batch of one, is used for every
// product; otherwise a's and b's batch sizes must be equal. out is 2-D when a and b are, else
// batch×M×N.
Call prepare(const View& a, const View& b, const View& out, bool trans_a, bool trans_b, bool need_gpu = true) {
  for (const View* v : {&a, &b, &out}) check_matrices_half(*v);
  const std::int64_t m = trans_a ? a.cols : a.rows, k = trans_a ? a.rows : a.cols;
  const std::int64_t kb = trans_b ? b.cols : b.rows, n = trans_b ? b.rows : b.cols;
  if (k != kb)
    throw nb::value_error(("shapes do not match: op(a) is " + std::to_string(m) + "x" + std::to_string(k) +
                           " but op(b) is " + std::to_string(kb) + "x" + std::to_string(n))
                              .c_str());
  const std::int64_t ba = a.ndim == 3 ? a.batch : 1, bb = b.ndim == 3 ? b.batch : 1;
  if (ba != bb && ba != 1 && bb != 1)
    throw nb::value_error(("batch sizes do not broadcast: a has " + std::to_string(ba) + " matrices, b has " +
                           std::to_string(bb))
                              .c_str());
  const std::int64_t batch = std::max(ba, bb);
  const bool batched = a.ndim == 3 || b.ndim == 3;
  if (out.rows != m || out.cols != n || (out.ndim == 3) != batched || (batched && out.batch != batch))
    throw nb::value_error(("out must be " + (batched ? std::to_string(batch) + "x" : std::string()) +
                           std::to_string(m) + "x" + std::to_string(n) + ", got " + dims(out))
                              .c_str());
  const Layout la = layout_of(a), lb = layout_of(b), lc = layout_of(out);
  Call call{trans_a ? flip(la.op) : la.op, trans_b ? flip(lb.op) : lb.op, m, n, k, la.ld, lb.ld, lc.ld,
            reinterpret_cast<const __half*>(a.data), reinterpret_cast<const __half*>(b.data),
            reinterpret_cast<__half*>(out.data), a.device, batch, batch_stride(a), batch_stride(b),
            batch > 1 ? batch_stride(out) : 0};
  if (need_gpu) {
    for (const View* v : {&a, &b, &out}) check_cuda(*v);
    if (a.device != b.device || a.device != out.device) throw nb::value_error("a, b and out must be on the same GPU");
  }
  if (lc.op == hgemm::Op::T) {
    // out is a transposed view: compute outᵀ = op(b)ᵀ·op(a)ᵀ into its row-major storage.
    call = Call{flip(call.op_b), flip(call.op_a), n, m, k, lb.ld, la.ld, lc.ld, call.b, call.a, call.c, call.device,
                batch, call.stride_b, call.stride_a, call.stride_c};
  }
  // One B for every product, and the A and C matrices stacked one under the other (a contiguous
  // batch, say): the batch is a single (batch·M)×K by K×N product, one launch instead of `batch`.
  if (call.batch > 1 && call.stride_b == 0 && call.op_a == hgemm::Op::N && call.stride_a == call.m * call.lda &&
      call.stride_c == call.m * call.ldc) {
    call.m *= call.batch;
    call.batch = 1, call.stride_a = call.stride_c = 0;
  }
  return call;
}

// Runs on the array's GPU, restoring the caller's current device.
hgemm::Status run(const Call& c, float alpha, float beta, const hgemm::GemmOptions& opt) {
  int previous = 0;
  cudaGetDevice(&previous);
  if (previous != c.device) cudaSetDevice(c.device);
  const hgemm::Status s =
      c.batch == 1 ? hgemm::gemm(c.op_a, c.op_b, c.m, c.n, c.k, alpha, c.a, c.lda, c.b, c.ldb, beta, c.c, c.ldc, opt)
                   : hgemm::gemm_strided_batched(c.op_a, c.op_b, c.m, c.n, c.k, alpha, c.a, c.lda, c.stride_a, c.b,
                                                 c.ldb, c.stride_b, beta, c.c, c.ldc, c.stride_c, c.batch, opt);
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
  gemm_call(prepare(view_of_numbers(a, "a"), view_of_numbers(b, "b"), view_of_numbers(out, "out"), trans_a, trans_b),
            alpha, beta, accum, kernel, stream);
}

// What gemm would pass to the library for these arrays, launching nothing and accepting host
// memory: lets tests check the layout logic (ops, leading dimensions, batch strides, the one-launch
// batch) without a GPU.
nb::dict describe_gemm(const Array& a, const Array& b, const Array& out, bool trans_a, bool trans_b) {
  const Call c = prepare(view_of(a, "a"), view_of(b, "b"), view_of(out, "out"), trans_a, trans_b, false);
  nb::dict d;
  d["op_a"] = c.op_a == hgemm::Op::N ? "n" : "t";
  d["op_b"] = c.op_b == hgemm::Op::N ? "n" : "t";
  d["m"] = c.m, d["n"] = c.n, d["k"] = c.k, d["lda"] = c.lda, d["ldb"] = c.ldb, d["ldc"] = c.ldc;
  d["a"] = reinterpret_cast<std::uintptr_t>(c.a), d["b"] = reinterpret_cast<std::uintptr_t>(c.b);
  d["c"] = reinterpret_cast<std::uintptr_t>(c.c);
  d["batch"] = c.batch, d["stride_a"] = c.stride_a, d["stride_b"] = c.stride_b, d["stride_c"] = c.stride_c;
  return d;
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
        "out = alpha·op(a)·op(b) + beta·out, in place, on `stream` (a cudaStream_t as an int). a, b and out are "
        "2-D, or 3-D batches with torch.matmul's broadcasting (a 2-D operand or a batch of one is shared).");
  m.def("gemm_views", &gemm_views, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("alpha"), nb::arg("beta"),
        nb::arg("accum"), nb::arg("kernel"), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("stream"),
        "gemm with each array given as (data_ptr, rows, cols, stride0, stride1, device or -1, is_float16), "
        "plus (batch, batch stride) for a 3-D array.");
  m.def("describe_gemm", &describe_gemm, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("trans_a") = false,
        nb::arg("trans_b") = false,
        "The library call gemm would make for these arrays (ops, sizes, leading dimensions, pointers, batch "
        "and batch strides), without launching anything.");
  m.def("cpp_seconds_per_call", &cpp_seconds_per_call, nb::arg("a"), nb::arg("b"), nb::arg("out"),
        nb::arg("kernel"), nb::arg("iters"), nb::arg("stream"),
        "Host seconds per hgemm::gemm call made from C++ (for measuring the binding's overhead).");
}
