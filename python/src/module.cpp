// The Python extension module hgemm._hgemm: the typed hgemm::matmul and hgemm::grouped_matmul over
// any DLPack array (torch, cupy, jax, numpy for the error paths). Arrays are used in place: strides
// give the leading dimension, a transposed view becomes op T and a batch stride of 0 repeats a
// matrix, without a copy; each array's dtype is its operand's DataType. python/hgemm/__init__.py
// wraps this.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "hgemm/hgemm.h"

namespace nb = nanobind;

namespace {

using Array = nb::ndarray<nb::ro>;
using MutArray = nb::ndarray<>;

// View::type of an array whose dtype the library has no DataType for.
constexpr int kNoType = -1;

// The name Python (numpy, torch, cupy) gives each DataType.
const char* python_type_name(hgemm::DataType t) {
  switch (t) {
    case hgemm::DataType::F16: return "float16";
    case hgemm::DataType::BF16: return "bfloat16";
    case hgemm::DataType::F32: return "float32";
  }
  return "unknown";
}

// "float64", "int32", "bool", ...: the dtype of an array the library cannot take, for the error.
std::string dlpack_type_name(const nb::dlpack::dtype& t) {
  using Code = nb::dlpack::dtype_code;
  const char* kind = nullptr;
  switch (static_cast<Code>(t.code)) {
    case Code::Int: kind = "int"; break;
    case Code::UInt: kind = "uint"; break;
    case Code::Float: kind = "float"; break;
    case Code::Bfloat: kind = "bfloat"; break;
    case Code::Complex: kind = "complex"; break;
    case Code::Bool: kind = "bool"; break;
    default: break;
  }
  std::string name = !kind ? "DLPack type code " + std::to_string(t.code) + " of " + std::to_string(t.bits) + " bits"
                     : static_cast<Code>(t.code) == Code::Bool ? std::string(kind)
                                                                : kind + std::to_string(t.bits);
  if (t.lanes != 1) name += " in vectors of " + std::to_string(t.lanes);
  return name;
}

// What matmul needs to know of one 2-D array or 3-D batch of matrices, whether it came through DLPack
// or as plain numbers from the torch fast path (python/hgemm/__init__.py). A 2-D array is a batch of
// one with batch stride 0.
struct View {
  const char* name;
  std::uintptr_t data = 0;
  std::int64_t ndim = 2, rows = 0, cols = 0, s0 = 0, s1 = 0;  // one matrix: shape and strides in elements
  std::int64_t batch = 1, sb = 0;                             // the batch dimension of a 3-D array
  int type = kNoType;  // a hgemm::DataType, or kNoType
  bool on_gpu = false;
  int device = -1;
  std::string dtype_text;  // for the error message
  std::string where_text;

  hgemm::DataType data_type() const { return static_cast<hgemm::DataType>(type); }
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
  const bool is_float = t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float) && t.lanes == 1;
  const bool is_bfloat = t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bfloat) && t.lanes == 1;
  v.type = is_float && t.bits == 16   ? static_cast<int>(hgemm::DataType::F16)
           : is_bfloat && t.bits == 16 ? static_cast<int>(hgemm::DataType::BF16)
           : is_float && t.bits == 32  ? static_cast<int>(hgemm::DataType::F32)
                                       : kNoType;
  v.dtype_text = v.type == kNoType ? dlpack_type_name(t) : python_type_name(v.data_type());
  const int type = a.device_type();
  v.on_gpu = type == nb::device::cuda::value || type == nb::device::cuda_managed::value;
  v.where_text = "DLPack device type " + std::to_string(type);
  v.device = a.device_id();
  v.data = reinterpret_cast<std::uintptr_t>(a.data());
  return v;
}

// (data_ptr, rows, cols, stride0, stride1, device or -1 for the CPU, dtype code: 0 float16,
// 1 bfloat16, 2 float32 as in hgemm::DataType) from Python, and for a 3-D array two more: (batch,
// batch stride). Python maps other dtypes to a TypeError before calling.
View view_of_numbers(const nb::tuple& t, const char* name) {
  if (t.size() != 7 && t.size() != 9) throw nb::type_error("internal: a view is 7 numbers, or 9 for a batch");
  View v;
  v.name = name;
  v.data = nb::cast<std::uintptr_t>(t[0]);
  v.rows = nb::cast<std::int64_t>(t[1]), v.cols = nb::cast<std::int64_t>(t[2]);
  v.s0 = nb::cast<std::int64_t>(t[3]), v.s1 = nb::cast<std::int64_t>(t[4]);
  v.device = nb::cast<int>(t[5]);
  v.on_gpu = v.device >= 0;
  v.type = nb::cast<int>(t[6]);
  if (v.type < 0 || v.type > static_cast<int>(hgemm::DataType::F32))
    throw nb::type_error("internal: a view's dtype code is 0 (float16), 1 (bfloat16) or 2 (float32)");
  v.dtype_text = python_type_name(v.data_type());
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

void check_matrices(const View& v) {
  if (v.ndim != 2 && v.ndim != 3)
    throw nb::value_error(
        (std::string(v.name) + " must be 2-D or 3-D (a batch of matrices), got " + std::to_string(v.ndim) + "-D")
            .c_str());
}

// A and B: f16 or bf16, both the same; out (C and D): f16, bf16 or f32; f16 accumulation only with
// all three f16. The library refuses the same with Status::UnsupportedType; checked here so that the
// message names the arrays, and so that describe_gemm refuses what matmul would.
void check_types(const View& a, const View& b, const View& out, hgemm::Accum accum) {
  for (const View* v : {&a, &b})
    if (v->type != static_cast<int>(hgemm::DataType::F16) && v->type != static_cast<int>(hgemm::DataType::BF16))
      throw nb::type_error(
          (std::string(v->name) + " must have dtype float16 or bfloat16 (" + v->dtype_text + " given)").c_str());
  if (a.type != b.type)
    throw nb::type_error(("a is " + a.dtype_text + " but b is " + b.dtype_text + ": both must have one dtype").c_str());
  if (out.type == kNoType)
    throw nb::type_error(("out must have dtype float16, bfloat16 or float32 (" + out.dtype_text + " given)").c_str());
  const int f16 = static_cast<int>(hgemm::DataType::F16);
  if (accum == hgemm::Accum::F16 && (a.type != f16 || out.type != f16))
    throw nb::type_error(("accum='f16' needs float16 a, b and out (a and b are " + a.dtype_text + ", out is " +
                          out.dtype_text + "); use accum='f32'")
                             .c_str());
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
    case hgemm::Status::UnsupportedType:  // a dtype, or a kernel named for a dtype it does not take
      throw nb::type_error(text.c_str());
    default:
      throw nb::value_error(text.c_str());
  }
}

// The library call worked out from the arrays: out is both C and D (updated in place, read when
// beta ≠ 0), and `device` is the GPU the arrays are on. alpha and beta are set per call.
struct Call {
  hgemm::MatmulArgs args;
  int device = -1;
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
Call prepare(const View& a, const View& b, const View& out, bool trans_a, bool trans_b, hgemm::Accum accum,
             bool need_gpu = true) {
  for (const View* v : {&a, &b, &out}) check_matrices(*v);
  check_types(a, b, out, accum);
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
  Call call;
  call.device = a.device;
  hgemm::MatmulArgs& x = call.args;
  x.op_a = trans_a ? flip(la.op) : la.op, x.op_b = trans_b ? flip(lb.op) : lb.op;
  x.m = m, x.n = n, x.k = k;
  x.a = reinterpret_cast<const void*>(a.data), x.lda = la.ld, x.a_type = a.data_type();
  x.b = reinterpret_cast<const void*>(b.data), x.ldb = lb.ld, x.b_type = b.data_type();
  x.d = reinterpret_cast<void*>(out.data), x.ldd = lc.ld, x.d_type = out.data_type();
  x.batch = batch, x.stride_a = batch_stride(a), x.stride_b = batch_stride(b);
  x.stride_d = batch > 1 ? batch_stride(out) : 0;
  if (need_gpu) {
    for (const View* v : {&a, &b, &out}) check_cuda(*v);
    if (a.device != b.device || a.device != out.device) throw nb::value_error("a, b and out must be on the same GPU");
  }
  if (lc.op == hgemm::Op::T) {
    // out is a transposed view: compute outᵀ = op(b)ᵀ·op(a)ᵀ into its row-major storage.
    const hgemm::Op op_a = x.op_a;
    x.op_a = flip(x.op_b), x.op_b = flip(op_a);
    std::swap(x.m, x.n);
    std::swap(x.a, x.b), std::swap(x.lda, x.ldb), std::swap(x.a_type, x.b_type), std::swap(x.stride_a, x.stride_b);
  }
  // One B for every product, and the A and out matrices stacked one under the other (a contiguous
  // batch, say): the batch is a single (batch·M)×K by K×N product, one launch instead of `batch`.
  if (x.batch > 1 && x.stride_b == 0 && x.op_a == hgemm::Op::N && x.stride_a == x.m * x.lda &&
      x.stride_d == x.m * x.ldd) {
    x.m *= x.batch;
    x.batch = 1, x.stride_a = x.stride_d = 0;
  }
  x.c = x.d, x.ldc = x.ldd, x.c_type = x.d_type, x.stride_c = x.stride_d;  // C is D: beta reads out
  return call;
}

// Runs on the array's GPU, restoring the caller's current device.
hgemm::Status run(const hgemm::MatmulArgs& args, int device, const hgemm::MatmulOptions& opt) {
  int previous = 0;
  cudaGetDevice(&previous);
  if (previous != device) cudaSetDevice(device);
  const hgemm::Status s = hgemm::matmul(args, opt);
  if (previous != device) cudaSetDevice(previous);
  return s;
}

hgemm::MatmulOptions options(hgemm::Accum accum, const std::string& kernel, std::uintptr_t stream) {
  hgemm::MatmulOptions o;
  o.accum = accum;
  o.kernel = kernel;
  o.stream = reinterpret_cast<cudaStream_t>(stream);
  return o;
}

void matmul_call(const View& a, const View& b, const View& out, float alpha, float beta, const std::string& accum,
                 const std::string& kernel, bool trans_a, bool trans_b, std::uintptr_t stream) {
  const hgemm::Accum acc = parse_accum(accum);
  Call call = prepare(a, b, out, trans_a, trans_b, acc);
  call.args.alpha = alpha, call.args.beta = beta;
  const hgemm::MatmulOptions opt = options(acc, kernel, stream);
  hgemm::Status s;
  {
    nb::gil_scoped_release release;
    s = run(call.args, call.device, opt);
  }
  if (s != hgemm::Status::Success) raise_status(s);
}

void gemm(const Array& a, const Array& b, MutArray out, float alpha, float beta, const std::string& accum,
          const std::string& kernel, bool trans_a, bool trans_b, std::uintptr_t stream) {
  matmul_call(view_of(a, "a"), view_of(b, "b"), view_of(out, "out"), alpha, beta, accum, kernel, trans_a, trans_b,
              stream);
}

// The same from plain numbers (torch fast path: no DLPack capsule per call).
void gemm_views(const nb::tuple& a, const nb::tuple& b, const nb::tuple& out, float alpha, float beta,
                const std::string& accum, const std::string& kernel, bool trans_a, bool trans_b,
                std::uintptr_t stream) {
  matmul_call(view_of_numbers(a, "a"), view_of_numbers(b, "b"), view_of_numbers(out, "out"), alpha, beta, accum,
              kernel, trans_a, trans_b, stream);
}

// What gemm would pass to the library for these arrays, launching nothing and accepting host
// memory: lets tests check the layout and type logic (ops, leading dimensions, batch strides, the
// one-launch batch, the operand types) without a GPU.
nb::dict describe_gemm(const Array& a, const Array& b, const Array& out, bool trans_a, bool trans_b,
                       const std::string& accum) {
  const hgemm::Accum acc = parse_accum(accum);
  const hgemm::MatmulArgs x =
      prepare(view_of(a, "a"), view_of(b, "b"), view_of(out, "out"), trans_a, trans_b, acc, false).args;
  nb::dict d;
  d["op_a"] = x.op_a == hgemm::Op::N ? "n" : "t";
  d["op_b"] = x.op_b == hgemm::Op::N ? "n" : "t";
  d["m"] = x.m, d["n"] = x.n, d["k"] = x.k;
  d["lda"] = x.lda, d["ldb"] = x.ldb, d["ldc"] = x.ldc, d["ldd"] = x.ldd;
  d["a"] = reinterpret_cast<std::uintptr_t>(x.a), d["b"] = reinterpret_cast<std::uintptr_t>(x.b);
  d["c"] = reinterpret_cast<std::uintptr_t>(x.c), d["d"] = reinterpret_cast<std::uintptr_t>(x.d);
  d["batch"] = x.batch, d["stride_a"] = x.stride_a, d["stride_b"] = x.stride_b;
  d["stride_c"] = x.stride_c, d["stride_d"] = x.stride_d;
  d["a_type"] = hgemm::data_type_name(x.a_type), d["b_type"] = hgemm::data_type_name(x.b_type);
  d["c_type"] = hgemm::data_type_name(x.c_type), d["d_type"] = hgemm::data_type_name(x.d_type);
  d["accum"] = acc == hgemm::Accum::F16 ? "f16" : "f32";
  return d;
}

// Host time per call of `iters` back-to-back hgemm::matmul calls made from C++, timed before the
// closing sync: the enqueue cost, the baseline for the Python binding's per-call overhead. Keep
// `iters` well under the launch queue's depth (~1000) so the host never waits for the GPU.
double cpp_seconds_per_call(const Array& a, const Array& b, MutArray out, const std::string& kernel, int iters,
                            std::uintptr_t stream) {
  Call call = prepare(view_of(a, "a"), view_of(b, "b"), view_of(out, "out"), false, false, hgemm::Accum::F32);
  call.args.alpha = 1.f, call.args.beta = 0.f;
  const hgemm::MatmulOptions opt = options(hgemm::Accum::F32, kernel, stream);
  nb::gil_scoped_release release;
  cudaStreamSynchronize(opt.stream);
  const auto start = std::chrono::steady_clock::now();
  hgemm::Status s = hgemm::Status::Success;
  for (int i = 0; i < iters && s == hgemm::Status::Success; ++i) s = run(call.args, call.device, opt);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  cudaStreamSynchronize(opt.stream);
  if (s != hgemm::Status::Success) {
    nb::gil_scoped_acquire acquire;
    raise_status(s);
  }
  return seconds / iters;
}

// ---- grouped products (hgemm::grouped_matmul) ----

// The group sizes of a grouped call: offs (contiguous layout, cumulative end rows) or m_valid (masked
// layout, rows per group), int32 in GPU memory, read only by the kernel.
struct Sizes {
  const char* name;
  std::uintptr_t data = 0;
  std::int64_t count = 0;
  bool on_gpu = false;
  int device = -1;
  std::string where_text;
};

Sizes sizes_of(const Array& s, const char* name) {
  if (s.ndim() != 1)
    throw nb::value_error((std::string(name) + " must be 1-D (one entry per group), got " + std::to_string(s.ndim()) +
                           "-D")
                              .c_str());
  const nb::dlpack::dtype t = s.dtype();
  if (t.code != static_cast<std::uint8_t>(nb::dlpack::dtype_code::Int) || t.bits != 32 || t.lanes != 1)
    throw nb::type_error((std::string(name) + " must have dtype int32 (" + dlpack_type_name(t) + " given)").c_str());
  if (s.shape(0) > 1 && s.stride(0) != 1)
    throw nb::value_error((std::string(name) + " must be contiguous (stride 1)").c_str());
  Sizes z;
  z.name = name;
  z.data = reinterpret_cast<std::uintptr_t>(s.data());
  z.count = static_cast<std::int64_t>(s.shape(0));
  const int type = s.device_type();
  z.on_gpu = type == nb::device::cuda::value || type == nb::device::cuda_managed::value;
  z.device = s.device_id();
  z.where_text = "DLPack device type " + std::to_string(type);
  return z;
}

// (data_ptr, count, device or -1 for the CPU) of a contiguous int32 tensor, from the torch fast path.
Sizes sizes_of_numbers(const nb::tuple& t, const char* name) {
  if (t.size() != 3) throw nb::type_error("internal: group sizes are 3 numbers (data_ptr, count, device)");
  Sizes z;
  z.name = name;
  z.data = nb::cast<std::uintptr_t>(t[0]);
  z.count = nb::cast<std::int64_t>(t[1]);
  z.device = nb::cast<int>(t[2]);
  z.on_gpu = z.device >= 0;
  z.where_text = "the CPU";
  return z;
}

struct GroupedCall {
  hgemm::GroupedMatmulArgs args;
  int device = -1;
};

// The contiguous layout (masked = false): a is ΣM×K (2-D; a transposed view is op T), b G×K×N,
// out ΣM×N, sizes the G cumulative end rows. The masked layout: a G×M×K, b G×K×N, out G×M×N,
// sizes the G row counts. b's matrices may be transposed views (op T) or one matrix repeated
// (batch stride 0); out's rows must be row-major, since the groups are its rows.
GroupedCall prepare_grouped(const View& a, const View& b, const View& out, const Sizes& sizes, bool masked,
                            bool need_gpu = true) {
  for (const View* v : {&a, &b, &out}) check_matrices(*v);
  check_types(a, b, out, hgemm::Accum::F32);
  if (a.ndim != (masked ? 3 : 2)) {
    const char* want = masked ? "the masked layout takes a 3-D a (groups×M×K)"
                              : "the contiguous layout takes a 2-D a (the rows of every group × K)";
    throw nb::value_error((want + (", got " + std::to_string(a.ndim)) + "-D").c_str());
  }
  if (b.ndim != 3) throw nb::value_error(("b must be 3-D (groups×K×N), got " + std::to_string(b.ndim) + "-D").c_str());
  const std::int64_t groups = b.batch, m = a.rows, k = a.cols, n = b.cols;
  if (sizes.count != groups)
    throw nb::value_error((std::string(sizes.name) + " has " + std::to_string(sizes.count) + " entries but b has " +
                           std::to_string(groups) + " groups")
                              .c_str());
  if (masked && a.batch != groups)
    throw nb::value_error(("a has " + std::to_string(a.batch) + " groups but b has " + std::to_string(groups)).c_str());
  if (b.rows != k)
    throw nb::value_error(("shapes do not match: a's rows are " + std::to_string(k) + " wide but b's matrices are " +
                           std::to_string(b.rows) + "x" + std::to_string(n))
                              .c_str());
  if (out.ndim != a.ndim || out.rows != m || out.cols != n || (masked && out.batch != groups))
    throw nb::value_error(("out must be " + (masked ? std::to_string(groups) + "x" : std::string()) +
                           std::to_string(m) + "x" + std::to_string(n) + ", got " + dims(out))
                              .c_str());
  const Layout la = layout_of(a), lb = layout_of(b), lo = layout_of(out);
  if (lo.op != hgemm::Op::N)
    throw nb::value_error("out must have row-major rows (unit column stride): the groups are its rows");
  if (!masked && la.op != hgemm::Op::N)
    throw nb::value_error("the contiguous layout takes a with row-major rows (unit column stride): its groups start "
                          "at any row; pass a row-major copy");
  GroupedCall call;
  call.device = a.device;
  hgemm::GroupedMatmulArgs& x = call.args;
  x.layout = masked ? hgemm::GroupedLayout::Masked : hgemm::GroupedLayout::Contiguous;
  x.op_a = la.op, x.op_b = lb.op;
  x.groups = groups, x.m = m, x.n = n, x.k = k;
  (masked ? x.m_valid : x.offsets) = reinterpret_cast<const std::int32_t*>(sizes.data);
  x.a = reinterpret_cast<const void*>(a.data), x.lda = la.ld, x.a_type = a.data_type();
  x.b = reinterpret_cast<const void*>(b.data), x.ldb = lb.ld, x.b_type = b.data_type();
  x.d = reinterpret_cast<void*>(out.data), x.ldd = lo.ld, x.d_type = out.data_type();
  x.stride_b = batch_stride(b);
  if (masked) x.stride_a = batch_stride(a), x.stride_d = batch_stride(out);
  if (need_gpu) {
    for (const View* v : {&a, &b, &out}) check_cuda(*v);
    if (!sizes.on_gpu)
      throw nb::type_error((std::string(sizes.name) + " is not in CUDA memory (" + sizes.where_text +
                            "); the kernel reads the group sizes on the GPU")
                               .c_str());
    if (a.device != b.device || a.device != out.device || a.device != sizes.device)
      throw nb::value_error(("a, b, out and " + std::string(sizes.name) + " must be on the same GPU").c_str());
  }
  return call;
}

void grouped_call(const View& a, const View& b, const View& out, const Sizes& sizes, bool masked,
                  std::uintptr_t stream) {
  const GroupedCall call = prepare_grouped(a, b, out, sizes, masked);
  hgemm::MatmulOptions opt;
  opt.stream = reinterpret_cast<cudaStream_t>(stream);
  hgemm::Status s;
  {
    nb::gil_scoped_release release;
    int previous = 0;
    cudaGetDevice(&previous);
    if (previous != call.device) cudaSetDevice(call.device);
    s = hgemm::grouped_matmul(call.args, opt);
    if (previous != call.device) cudaSetDevice(previous);
  }
  if (s != hgemm::Status::Success) raise_status(s);
}

void grouped_gemm(const Array& a, const Array& b, MutArray out, const Array& sizes, bool masked,
                  std::uintptr_t stream) {
  grouped_call(view_of(a, "a"), view_of(b, "b"), view_of(out, "out"),
               sizes_of(sizes, masked ? "m_valid" : "offs"), masked, stream);
}

void grouped_gemm_views(const nb::tuple& a, const nb::tuple& b, const nb::tuple& out, const nb::tuple& sizes,
                        bool masked, std::uintptr_t stream) {
  grouped_call(view_of_numbers(a, "a"), view_of_numbers(b, "b"), view_of_numbers(out, "out"),
               sizes_of_numbers(sizes, masked ? "m_valid" : "offs"), masked, stream);
}

// What grouped_gemm would pass to the library, launching nothing and accepting host memory (for
// the CPU tests of the layout logic).
nb::dict describe_grouped(const Array& a, const Array& b, const Array& out, const Array& sizes, bool masked) {
  const hgemm::GroupedMatmulArgs x =
      prepare_grouped(view_of(a, "a"), view_of(b, "b"), view_of(out, "out"),
                      sizes_of(sizes, masked ? "m_valid" : "offs"), masked, false)
          .args;
  nb::dict d;
  d["layout"] = masked ? "masked" : "contiguous";
  d["op_a"] = x.op_a == hgemm::Op::N ? "n" : "t";
  d["op_b"] = x.op_b == hgemm::Op::N ? "n" : "t";
  d["groups"] = x.groups, d["m"] = x.m, d["n"] = x.n, d["k"] = x.k;
  d["lda"] = x.lda, d["ldb"] = x.ldb, d["ldd"] = x.ldd;
  d["stride_a"] = x.stride_a, d["stride_b"] = x.stride_b, d["stride_d"] = x.stride_d;
  d["a"] = reinterpret_cast<std::uintptr_t>(x.a), d["b"] = reinterpret_cast<std::uintptr_t>(x.b);
  d["d"] = reinterpret_cast<std::uintptr_t>(x.d);
  d["sizes"] = reinterpret_cast<std::uintptr_t>(masked ? x.m_valid : x.offsets);
  d["a_type"] = hgemm::data_type_name(x.a_type), d["b_type"] = hgemm::data_type_name(x.b_type);
  d["d_type"] = hgemm::data_type_name(x.d_type);
  return d;
}

// "f16", "bf16", "f32" for the DataType bits of KernelInfo::in_types / out_types.
std::vector<std::string> type_names(unsigned bits) {
  std::vector<std::string> names;
  for (hgemm::DataType t : {hgemm::DataType::F16, hgemm::DataType::BF16, hgemm::DataType::F32})
    if (bits & hgemm::type_bit(t)) names.push_back(hgemm::data_type_name(t));
  return names;
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
    d["in_types"] = type_names(k.in_types);
    d["out_types"] = type_names(k.out_types);
    out.append(d);
  }
  return out;
}

}  // namespace

NB_MODULE(_hgemm, m) {
  m.doc() = "hgemm: GEMM kernels (D = alpha·op(A)·op(B) + beta·C) on DLPack arrays; A and B float16 or "
            "bfloat16, C and D float16, bfloat16 or float32";
  m.def("kernels", &kernel_list, "Every registered kernel, as dicts.");
  m.def("gemm", &gemm, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("alpha"), nb::arg("beta"),
        nb::arg("accum"), nb::arg("kernel"), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("stream"),
        "out = alpha·op(a)·op(b) + beta·out, in place, on `stream` (a cudaStream_t as an int). a and b are "
        "float16 or bfloat16 (one dtype), out float16, bfloat16 or float32. a, b and out are 2-D, or 3-D "
        "batches with torch.matmul's broadcasting (a 2-D operand or a batch of one is shared).");
  m.def("gemm_views", &gemm_views, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("alpha"), nb::arg("beta"),
        nb::arg("accum"), nb::arg("kernel"), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("stream"),
        "gemm with each array given as (data_ptr, rows, cols, stride0, stride1, device or -1, dtype code: "
        "0 float16, 1 bfloat16, 2 float32), plus (batch, batch stride) for a 3-D array.");
  m.def("describe_gemm", &describe_gemm, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("trans_a") = false,
        nb::arg("trans_b") = false, nb::arg("accum") = "f32",
        "The library call gemm would make for these arrays (ops, sizes, leading dimensions, pointers, batch, "
        "batch strides and operand types), without launching anything.");
  m.def("grouped_gemm", &grouped_gemm, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("sizes"),
        nb::arg("masked"), nb::arg("stream"),
        "hgemm::grouped_matmul into out, on `stream`. Contiguous layout (masked=False): a ΣM×K, b G×K×N, "
        "out ΣM×N, sizes the G cumulative end rows (int32, GPU). Masked: a G×M×K, b G×K×N, out G×M×N, sizes "
        "the G row counts. Rows of out past a group's rows are not written.");
  m.def("grouped_gemm_views", &grouped_gemm_views, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("sizes"),
        nb::arg("masked"), nb::arg("stream"),
        "grouped_gemm with the arrays given as gemm_views takes them, and sizes as (data_ptr, count, device).");
  m.def("describe_grouped", &describe_grouped, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("sizes"),
        nb::arg("masked"),
        "The hgemm::grouped_matmul call grouped_gemm would make for these arrays, without launching anything.");
  m.def("cpp_seconds_per_call", &cpp_seconds_per_call, nb::arg("a"), nb::arg("b"), nb::arg("out"),
        nb::arg("kernel"), nb::arg("iters"), nb::arg("stream"),
        "Host seconds per hgemm::matmul call made from C++ (for measuring the binding's overhead).");
}
