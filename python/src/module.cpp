// SPDX-License-Identifier: Apache-2.0
// The Python extension module hgemm._hgemm: the typed hgemm::matmul and hgemm::grouped_matmul over
// any DLPack array (torch, cupy, jax, numpy for the error paths). Arrays are used in place: strides
// give the leading dimension, a transposed view becomes op T and a batch stride of 0 repeats a
// matrix, without a copy; each array's dtype is its operand's DataType. The fused epilogue
// (hgemm::Epilogue: bias, activation, the pre-activation written to aux_out, row and column scales)
// comes as keyword arguments, its vectors and aux_out checked here like the operands.
// python/hgemm/__init__.py wraps this.
#include <nanobind/nanobind.h>
#include <nanobind/ndarray.h>
#include <nanobind/stl/optional.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <optional>
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

// The hgemm::DataType of a DLPack dtype (as an int), or kNoType.
int type_code(const nb::dlpack::dtype& t) {
  const bool is_float = t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Float) && t.lanes == 1;
  const bool is_bfloat = t.code == static_cast<std::uint8_t>(nb::dlpack::dtype_code::Bfloat) && t.lanes == 1;
  return is_float && t.bits == 16    ? static_cast<int>(hgemm::DataType::F16)
         : is_bfloat && t.bits == 16 ? static_cast<int>(hgemm::DataType::BF16)
         : is_float && t.bits == 32  ? static_cast<int>(hgemm::DataType::F32)
                                     : kNoType;
}

// What a View and a Vec take from any DLPack array: its dtype, device and data pointer.
template <typename A, typename T>
void describe_array(const A& a, T* v) {
  const nb::dlpack::dtype t = a.dtype();
  v->type = type_code(t);
  v->dtype_text = v->type == kNoType ? dlpack_type_name(t) : python_type_name(v->data_type());
  const int type = a.device_type();
  v->on_gpu = type == nb::device::cuda::value || type == nb::device::cuda_managed::value;
  v->where_text = "DLPack device type " + std::to_string(type);
  v->device = a.device_id();
  v->data = reinterpret_cast<std::uintptr_t>(a.data());
}

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
  describe_array(a, &v);
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

template <typename V>
void check_cuda(const V& v) {
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

// ---- the fused epilogue's arguments ----

// One vector of the epilogue (the bias, the row or column scales), from DLPack or as numbers from
// the torch fast path.
struct Vec {
  const char* name;
  std::uintptr_t data = 0;
  std::int64_t ndim = 1, length = 0, stride = 1;
  int type = kNoType;
  bool on_gpu = false;
  int device = -1;
  std::string dtype_text;
  std::string where_text;

  hgemm::DataType data_type() const { return static_cast<hgemm::DataType>(type); }
};

Vec vec_of(const Array& a, const char* name) {
  Vec v;
  v.name = name;
  v.ndim = static_cast<std::int64_t>(a.ndim());
  if (v.ndim == 1) v.length = a.shape(0), v.stride = a.stride(0);
  describe_array(a, &v);
  return v;
}

// (data_ptr, length, stride, device or -1 for the CPU, dtype code as in view_of_numbers) of a 1-D
// tensor. Python maps other dtypes and dimensions to errors before calling.
Vec vec_of_numbers(const nb::tuple& t, const char* name) {
  if (t.size() != 5) throw nb::type_error("internal: a vector is 5 numbers (data_ptr, length, stride, device, dtype)");
  Vec v;
  v.name = name;
  v.data = nb::cast<std::uintptr_t>(t[0]);
  v.length = nb::cast<std::int64_t>(t[1]), v.stride = nb::cast<std::int64_t>(t[2]);
  v.device = nb::cast<int>(t[3]);
  v.on_gpu = v.device >= 0;
  v.type = nb::cast<int>(t[4]);
  if (v.type < 0 || v.type > static_cast<int>(hgemm::DataType::F32))
    throw nb::type_error("internal: a vector's dtype code is 0 (float16), 1 (bfloat16) or 2 (float32)");
  v.dtype_text = python_type_name(v.data_type());
  v.where_text = "the CPU";
  return v;
}

// The epilogue as the caller sees it: in out's rows and columns, before prepare() turns a
// transposed out into the transposed problem.
struct EpilogueIn {
  std::optional<Vec> bias;
  bool bias_per_row = false;  // bias_along="m": one value per row of out; "n" (default): per column
  hgemm::Activation activation = hgemm::Activation::None;
  std::optional<View> aux;    // aux_out: Z, the pre-activation, out's shape
  std::optional<Vec> row_scale, col_scale;
};

hgemm::Activation parse_activation(const std::string& s) {
  if (s == "none") return hgemm::Activation::None;
  if (s == "relu") return hgemm::Activation::ReLU;
  if (s == "gelu") return hgemm::Activation::GELU;
  if (s == "gelu_tanh") return hgemm::Activation::GELUTanh;
  if (s == "silu") return hgemm::Activation::SiLU;
  throw nb::value_error(
      ("activation must be 'none', 'relu', 'gelu', 'gelu_tanh' or 'silu', not '" + s + "'").c_str());
}

bool parse_bias_along(const std::string& s) {
  if (s == "n") return false;
  if (s == "m") return true;
  throw nb::value_error(("bias_along must be 'n' (one value per column of out) or 'm' (per row), not '" + s + "'")
                            .c_str());
}

EpilogueIn epilogue_in(std::optional<Vec> bias, const std::string& bias_along, const std::string& activation,
                       std::optional<View> aux, std::optional<Vec> row_scale, std::optional<Vec> col_scale) {
  EpilogueIn e;
  e.bias = std::move(bias);
  e.bias_per_row = parse_bias_along(bias_along);
  e.activation = parse_activation(activation);
  e.aux = std::move(aux);
  e.row_scale = std::move(row_scale), e.col_scale = std::move(col_scale);
  return e;
}

// A vector of `want` values, one per `per` ("column of out", ...): 1-D, of a type the library
// takes for it (float32 only for the scales), with unit stride.
void check_vector(const Vec& v, std::int64_t want, const char* per, bool f32_only) {
  if (v.ndim != 1)
    throw nb::value_error((std::string(v.name) + " must be 1-D (one value per " + per + "), got " +
                           std::to_string(v.ndim) + "-D")
                              .c_str());
  if (f32_only ? v.type != static_cast<int>(hgemm::DataType::F32) : v.type == kNoType)
    throw nb::type_error((std::string(v.name) + " must have dtype " +
                          (f32_only ? "float32" : "float16, bfloat16 or float32") + " (" + v.dtype_text + " given)")
                             .c_str());
  if (v.length != want)
    throw nb::value_error((std::string(v.name) + " must have " + std::to_string(want) + " values (one per " + per +
                           "), got " + std::to_string(v.length))
                              .c_str());
  if (v.length > 1 && v.stride != 1)
    throw nb::value_error((std::string(v.name) + " must be contiguous (stride 1), got stride " +
                           std::to_string(v.stride))
                              .c_str());
}

// The leading dimension of aux_out, which the library writes as D's layout: row-major when out is
// (op N), a transposed view when out is one (op T: the problem is then computed transposed).
std::int64_t aux_leading_dim(const View& v, hgemm::Op out_op) {
  const std::int64_t r = v.rows, c = v.cols, s0 = v.s0, s1 = v.s1;
  if (s0 >= 0 && s1 >= 0) {
    if (out_op == hgemm::Op::N && (s1 == 1 || c <= 1) && (r <= 1 || s0 >= c))
      return r <= 1 ? std::max<std::int64_t>(c, 1) : std::max<std::int64_t>(s0, 1);
    if (out_op == hgemm::Op::T && (s0 == 1 || r <= 1) && (c <= 1 || s1 >= r))
      return c <= 1 ? std::max<std::int64_t>(r, 1) : s1;
  }
  const char* want = out_op == hgemm::Op::N ? "row-major rows (unit column stride), as out has"
                                            : "a transposed view (unit row stride), as out is";
  throw nb::value_error((std::string(v.name) + " has strides (" + std::to_string(s0) + ", " + std::to_string(s1) +
                         "): it must be laid out like out, " + want)
                            .c_str());
}

// Sets x.epilogue from e: x is the problem prepare() made (after the transpose of a transposed
// out, so that bias along out's columns is along the problem's rows then, and the scales trade
// places); out_op is out's layout.
void set_epilogue(const EpilogueIn& e, const View& out, hgemm::Op out_op, int device, bool need_gpu,
                  hgemm::MatmulArgs& x) {
  hgemm::Epilogue& ep = x.epilogue;
  const bool swapped = out_op == hgemm::Op::T;
  if (e.bias) {
    const Vec& v = *e.bias;
    check_vector(v, e.bias_per_row ? out.rows : out.cols, e.bias_per_row ? "row of out" : "column of out", false);
    ep.bias_along = e.bias_per_row != swapped ? hgemm::BiasAlong::M : hgemm::BiasAlong::N;
    ep.bias = reinterpret_cast<const void*>(v.data), ep.bias_type = v.data_type();
  }
  ep.activation = e.activation;
  if (e.aux) {
    const View& v = *e.aux;
    check_matrices(v);
    if (v.type == kNoType)
      throw nb::type_error(
          (std::string(v.name) + " must have dtype float16, bfloat16 or float32 (" + v.dtype_text + " given)").c_str());
    if (v.ndim != out.ndim || v.rows != out.rows || v.cols != out.cols || (v.ndim == 3 && v.batch != out.batch))
      throw nb::value_error(
          (std::string(v.name) + " must have out's shape, " + dims(out) + ", got " + dims(v)).c_str());
    ep.aux_output = true;
    ep.aux = reinterpret_cast<void*>(v.data), ep.aux_type = v.data_type();
    ep.ldaux = aux_leading_dim(v, out_op);
    ep.stride_aux = x.batch > 1 ? batch_stride(v) : 0;
  }
  for (auto [scale, per_row] : {std::pair{&e.row_scale, true}, {&e.col_scale, false}}) {
    if (!*scale) continue;
    const Vec& v = **scale;
    check_vector(v, per_row ? out.rows : out.cols, per_row ? "row of out" : "column of out", true);
    const float* p = reinterpret_cast<const float*>(v.data);
    if (per_row != swapped)
      ep.scale_rows = true, ep.row_scale = p;
    else
      ep.scale_cols = true, ep.col_scale = p;
  }
  if (!need_gpu) return;
  for (const std::optional<Vec>* v : {&e.bias, &e.row_scale, &e.col_scale}) {
    if (!*v) continue;
    check_cuda(**v);
    if ((*v)->device != device)
      throw nb::value_error(("a, b, out and " + std::string((*v)->name) + " must be on the same GPU").c_str());
  }
  if (e.aux) {
    check_cuda(*e.aux);
    if (e.aux->device != device)
      throw nb::value_error(("a, b, out and " + std::string(e.aux->name) + " must be on the same GPU").c_str());
  }
}

// Batches follow torch.matmul's broadcasting: a 2-D operand, or a batch of one, is used for every
// product; otherwise a's and b's batch sizes must be equal. out is 2-D when a and b are, else
// batch×M×N.
Call prepare(const View& a, const View& b, const View& out, bool trans_a, bool trans_b, hgemm::Accum accum,
             bool need_gpu = true, const EpilogueIn* epilogue = nullptr) {
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
  // (A batch that shares B and stacks a's and out's matrices runs as one product: the library's
  // dispatch folds it.)
  if (epilogue) set_epilogue(*epilogue, out, lc.op, a.device, need_gpu, x);
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

// Every array of a launch was checked to be in CUDA (or managed) memory on one GPU (check_cuda),
// so the library need not ask the driver where each pointer lives.
hgemm::MatmulOptions options(hgemm::Accum accum, const std::string& kernel, std::uintptr_t stream) {
  hgemm::MatmulOptions o;
  o.accum = accum;
  o.kernel = kernel;
  o.stream = reinterpret_cast<cudaStream_t>(stream);
  o.check_pointers = false;
  return o;
}

void matmul_call(const View& a, const View& b, const View& out, float alpha, float beta, const std::string& accum,
                 const std::string& kernel, bool trans_a, bool trans_b, std::uintptr_t stream,
                 const EpilogueIn& epilogue) {
  const hgemm::Accum acc = parse_accum(accum);
  Call call = prepare(a, b, out, trans_a, trans_b, acc, true, &epilogue);
  call.args.alpha = alpha, call.args.beta = beta;
  const hgemm::MatmulOptions opt = options(acc, kernel, stream);
  hgemm::Status s;
  {
    nb::gil_scoped_release release;
    s = run(call.args, call.device, opt);
  }
  if (s != hgemm::Status::Success) raise_status(s);
}

// The epilogue's keyword arguments, from DLPack arrays.
EpilogueIn epilogue_of(const std::optional<Array>& bias, const std::string& bias_along, const std::string& activation,
                       const std::optional<MutArray>& aux_out, const std::optional<Array>& row_scale,
                       const std::optional<Array>& col_scale) {
  return epilogue_in(bias ? std::optional<Vec>(vec_of(*bias, "bias")) : std::nullopt, bias_along, activation,
                     aux_out ? std::optional<View>(view_of(*aux_out, "aux_out")) : std::nullopt,
                     row_scale ? std::optional<Vec>(vec_of(*row_scale, "row_scale")) : std::nullopt,
                     col_scale ? std::optional<Vec>(vec_of(*col_scale, "col_scale")) : std::nullopt);
}

void gemm(const Array& a, const Array& b, MutArray out, float alpha, float beta, const std::string& accum,
          const std::string& kernel, bool trans_a, bool trans_b, std::uintptr_t stream,
          const std::optional<Array>& bias, const std::string& bias_along, const std::string& activation,
          const std::optional<MutArray>& aux_out, const std::optional<Array>& row_scale,
          const std::optional<Array>& col_scale) {
  matmul_call(view_of(a, "a"), view_of(b, "b"), view_of(out, "out"), alpha, beta, accum, kernel, trans_a, trans_b,
              stream, epilogue_of(bias, bias_along, activation, aux_out, row_scale, col_scale));
}

// The same from plain numbers (torch fast path: no DLPack capsule per call); the vectors as
// vec_of_numbers takes them, aux_out as view_of_numbers.
void gemm_views(const nb::tuple& a, const nb::tuple& b, const nb::tuple& out, float alpha, float beta,
                const std::string& accum, const std::string& kernel, bool trans_a, bool trans_b,
                std::uintptr_t stream, const std::optional<nb::tuple>& bias, const std::string& bias_along,
                const std::string& activation, const std::optional<nb::tuple>& aux_out,
                const std::optional<nb::tuple>& row_scale, const std::optional<nb::tuple>& col_scale) {
  EpilogueIn e = epilogue_in(bias ? std::optional<Vec>(vec_of_numbers(*bias, "bias")) : std::nullopt, bias_along,
                             activation,
                             aux_out ? std::optional<View>(view_of_numbers(*aux_out, "aux_out")) : std::nullopt,
                             row_scale ? std::optional<Vec>(vec_of_numbers(*row_scale, "row_scale")) : std::nullopt,
                             col_scale ? std::optional<Vec>(vec_of_numbers(*col_scale, "col_scale")) : std::nullopt);
  matmul_call(view_of_numbers(a, "a"), view_of_numbers(b, "b"), view_of_numbers(out, "out"), alpha, beta, accum,
              kernel, trans_a, trans_b, stream, e);
}

// What gemm would pass to the library for these arrays, launching nothing and accepting host
// memory: lets tests check the layout and type logic (ops, leading dimensions, batch strides, the
// one-launch batch, the operand types) without a GPU.
nb::dict describe_gemm(const Array& a, const Array& b, const Array& out, bool trans_a, bool trans_b,
                       const std::string& accum, const std::optional<Array>& bias, const std::string& bias_along,
                       const std::string& activation, const std::optional<MutArray>& aux_out,
                       const std::optional<Array>& row_scale, const std::optional<Array>& col_scale) {
  const hgemm::Accum acc = parse_accum(accum);
  const EpilogueIn epilogue = epilogue_of(bias, bias_along, activation, aux_out, row_scale, col_scale);
  const hgemm::MatmulArgs x =
      prepare(view_of(a, "a"), view_of(b, "b"), view_of(out, "out"), trans_a, trans_b, acc, false, &epilogue).args;
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
  const hgemm::Epilogue& e = x.epilogue;
  d["bias_along"] = e.bias_along == hgemm::BiasAlong::M ? "m" : e.bias_along == hgemm::BiasAlong::N ? "n" : "none";
  d["bias"] = reinterpret_cast<std::uintptr_t>(e.bias), d["bias_type"] = hgemm::data_type_name(e.bias_type);
  d["stride_bias"] = e.stride_bias;
  d["activation"] = hgemm::activation_name(e.activation);
  d["aux_output"] = e.aux_output, d["aux"] = reinterpret_cast<std::uintptr_t>(e.aux);
  d["aux_type"] = hgemm::data_type_name(e.aux_type), d["ldaux"] = e.ldaux, d["stride_aux"] = e.stride_aux;
  d["scale_rows"] = e.scale_rows, d["row_scale"] = reinterpret_cast<std::uintptr_t>(e.row_scale);
  d["scale_cols"] = e.scale_cols, d["col_scale"] = reinterpret_cast<std::uintptr_t>(e.col_scale);
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

// A grouped launch's arrays and group sizes: all in CUDA memory, on one GPU.
void check_grouped_on_gpu(const View& a, const View& b, const View& out, const Sizes& sizes) {
  for (const View* v : {&a, &b, &out}) check_cuda(*v);
  if (!sizes.on_gpu)
    throw nb::type_error((std::string(sizes.name) + " is not in CUDA memory (" + sizes.where_text +
                          "); the kernel reads the group sizes on the GPU")
                             .c_str());
  if (a.device != b.device || a.device != out.device || a.device != sizes.device)
    throw nb::value_error(("a, b, out and " + std::string(sizes.name) + " must be on the same GPU").c_str());
}

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
  if (need_gpu) check_grouped_on_gpu(a, b, out, sizes);
  return call;
}

void run_grouped(const GroupedCall& call, std::uintptr_t stream) {
  hgemm::MatmulOptions opt = options(hgemm::Accum::F32, "auto", stream);
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

void grouped_call(const View& a, const View& b, const View& out, const Sizes& sizes, bool masked,
                  std::uintptr_t stream) {
  run_grouped(prepare_grouped(a, b, out, sizes, masked), stream);
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

// The K-grouped layout (a weight gradient): out[g] (M×N) = a[:, K_g] · b[K_g, :] over group g's
// slice of K (offs: the G cumulative ends). a is M×K column-major (a K×M matrix transposed) and b
// K×N row-major, so that K is both operands' outer dimension; out is G×M×N with row-major rows.
GroupedCall prepare_k_grouped(const View& a, const View& b, const View& out, const Sizes& offs) {
  for (const View* v : {&a, &b, &out}) check_matrices(*v);
  check_types(a, b, out, hgemm::Accum::F32);
  if (a.ndim != 2 || b.ndim != 2 || out.ndim != 3)
    throw nb::value_error(("the K-grouped layout takes a 2-D a (M×K), a 2-D b (K×N) and a 3-D out (groups×M×N), got " +
                           std::to_string(a.ndim) + "-D, " + std::to_string(b.ndim) + "-D and " +
                           std::to_string(out.ndim) + "-D")
                              .c_str());
  const std::int64_t m = a.rows, k = a.cols, n = b.cols, groups = out.batch;
  if (b.rows != k)
    throw nb::value_error(("shapes do not match: a is " + dims(a) + " but b is " + dims(b)).c_str());
  if (out.rows != m || out.cols != n)
    throw nb::value_error(("out must be groups×" + std::to_string(m) + "x" + std::to_string(n) + ", got " + dims(out))
                              .c_str());
  if (offs.count != groups)
    throw nb::value_error((std::string(offs.name) + " has " + std::to_string(offs.count) + " entries but out has " +
                           std::to_string(groups) + " groups")
                              .c_str());
  const Layout la = layout_of(a), lb = layout_of(b), lo = layout_of(out);
  if (la.op != hgemm::Op::T || lb.op != hgemm::Op::N)
    throw nb::value_error("the K-grouped layout takes a column-major a (unit row stride, as x.t() of a row-major x) "
                          "and a row-major b: each group's slice of K starts anywhere; pass copies in those layouts");
  if (lo.op != hgemm::Op::N) throw nb::value_error("out must have row-major rows (unit column stride)");
  GroupedCall call;
  call.device = a.device;
  hgemm::GroupedMatmulArgs& x = call.args;
  x.layout = hgemm::GroupedLayout::KGrouped, x.op_a = hgemm::Op::T, x.op_b = hgemm::Op::N;
  x.groups = groups, x.m = m, x.n = n, x.k = k;
  x.offsets = reinterpret_cast<const std::int32_t*>(offs.data);
  x.a = reinterpret_cast<const void*>(a.data), x.lda = la.ld, x.a_type = a.data_type();
  x.b = reinterpret_cast<const void*>(b.data), x.ldb = lb.ld, x.b_type = b.data_type();
  x.d = reinterpret_cast<void*>(out.data), x.ldd = lo.ld, x.d_type = out.data_type();
  x.stride_d = batch_stride(out);
  check_grouped_on_gpu(a, b, out, offs);
  return call;
}

void k_grouped_gemm_views(const nb::tuple& a, const nb::tuple& b, const nb::tuple& out, const nb::tuple& offs,
                          std::uintptr_t stream) {
  run_grouped(prepare_k_grouped(view_of_numbers(a, "a"), view_of_numbers(b, "b"), view_of_numbers(out, "out"),
                                sizes_of_numbers(offs, "offs")),
              stream);
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
        nb::arg("accum"), nb::arg("kernel"), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("stream"), nb::kw_only(),
        nb::arg("bias") = nb::none(), nb::arg("bias_along") = "n", nb::arg("activation") = "none",
        nb::arg("aux_out") = nb::none(), nb::arg("row_scale") = nb::none(), nb::arg("col_scale") = nb::none(),
        "out = alpha·op(a)·op(b) + beta·out, in place, on `stream` (a cudaStream_t as an int). a and b are "
        "float16 or bfloat16 (one dtype), out float16, bfloat16 or float32. a, b and out are 2-D, or 3-D "
        "batches with torch.matmul's broadcasting (a 2-D operand or a batch of one is shared).\n\n"
        "The fused epilogue: out = act(alpha·op(a)·op(b) + beta·out + bias)·row_scale[r]·col_scale[c], in f32 "
        "and rounded once. bias: a contiguous 1-D float16, bfloat16 or float32 vector, one value per column of "
        "out (bias_along='n') or per row ('m'), shared by a batch. activation: 'none', 'relu', 'gelu' (erf), "
        "'gelu_tanh' or 'silu'. aux_out: an array of out's shape and layout (float16, bfloat16 or float32) "
        "that receives the pre-activation Z = alpha·op(a)·op(b) + beta·out + bias. row_scale, col_scale: "
        "contiguous float32 vectors, one value per row / column of out.");
  m.def("gemm_views", &gemm_views, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("alpha"), nb::arg("beta"),
        nb::arg("accum"), nb::arg("kernel"), nb::arg("trans_a"), nb::arg("trans_b"), nb::arg("stream"),
        nb::arg("bias") = nb::none(), nb::arg("bias_along") = "n", nb::arg("activation") = "none",
        nb::arg("aux_out") = nb::none(), nb::arg("row_scale") = nb::none(), nb::arg("col_scale") = nb::none(),
        "gemm with each array given as (data_ptr, rows, cols, stride0, stride1, device or -1, dtype code: "
        "0 float16, 1 bfloat16, 2 float32), plus (batch, batch stride) for a 3-D array; aux_out likewise, and "
        "the vectors (bias, row_scale, col_scale) as (data_ptr, length, stride, device or -1, dtype code).");
  m.def("describe_gemm", &describe_gemm, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("trans_a") = false,
        nb::arg("trans_b") = false, nb::arg("accum") = "f32", nb::kw_only(), nb::arg("bias") = nb::none(),
        nb::arg("bias_along") = "n", nb::arg("activation") = "none", nb::arg("aux_out") = nb::none(),
        nb::arg("row_scale") = nb::none(), nb::arg("col_scale") = nb::none(),
        "The library call gemm would make for these arrays (ops, sizes, leading dimensions, pointers, batch, "
        "batch strides, operand types and the epilogue's fields), without launching anything.");
  m.def("grouped_gemm", &grouped_gemm, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("sizes"),
        nb::arg("masked"), nb::arg("stream"),
        "hgemm::grouped_matmul into out, on `stream`. Contiguous layout (masked=False): a ΣM×K, b G×K×N, "
        "out ΣM×N, sizes the G cumulative end rows (int32, GPU). Masked: a G×M×K, b G×K×N, out G×M×N, sizes "
        "the G row counts. Rows of out past a group's rows are not written.");
  m.def("grouped_gemm_views", &grouped_gemm_views, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("sizes"),
        nb::arg("masked"), nb::arg("stream"),
        "grouped_gemm with the arrays given as gemm_views takes them, and sizes as (data_ptr, count, device).");
  m.def("k_grouped_gemm_views", &k_grouped_gemm_views, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("offs"),
        nb::arg("stream"),
        "hgemm::grouped_matmul's K-grouped layout on `stream`: out[g] = a[:, K_g] · b[K_g, :] for the G slices of K "
        "that offs ends (int32, GPU); a M×K column-major, b K×N row-major, out G×M×N, as gemm_views takes views.");
  m.def("describe_grouped", &describe_grouped, nb::arg("a"), nb::arg("b"), nb::arg("out"), nb::arg("sizes"),
        nb::arg("masked"),
        "The hgemm::grouped_matmul call grouped_gemm would make for these arrays, without launching anything.");
  m.def("cpp_seconds_per_call", &cpp_seconds_per_call, nb::arg("a"), nb::arg("b"), nb::arg("out"),
        nb::arg("kernel"), nb::arg("iters"), nb::arg("stream"),
        "Host seconds per hgemm::matmul call made from C++ (for measuring the binding's overhead).");
}
