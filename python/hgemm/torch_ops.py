# SPDX-License-Identifier: Apache-2.0
"""hgemm as torch operators, with autograd computed by hgemm, fake (meta) kernels for
torch.compile / FakeTensorMode, and CUDA-graph-safe launches on the current torch stream.

`import hgemm` imports this module where torch is installed (HGEMM_NO_TORCH=1 skips it), so the
operators exist whenever hgemm does: a saved torch.export program that calls them loads after
`import hgemm`.

    hgemm::mm(Tensor a, Tensor b, *, str accum="f32", str kernel_id="auto", ScalarType? out_dtype=None) -> Tensor
    hgemm::matmul(Tensor a, Tensor b, *, str accum="f32", str kernel_id="auto", ScalarType? out_dtype=None) -> Tensor
    hgemm::addmm(Tensor? bias, Tensor a, Tensor b, *, Scalar beta=1, Scalar alpha=1, str activation="none",
                 str accum="f32", str kernel_id="auto",
                 ScalarType? out_dtype=None) -> Tensor
    hgemm::grouped_mm(Tensor a, Tensor b, Tensor? offs=None, Tensor? bias=None, ScalarType? out_dtype=None,
                      Tensor? m_valid=None) -> Tensor

mm: a is M×K, b is K×N. matmul: operands of 2 or more dimensions with torch.matmul's
broadcasting: M×K by batch×K×N, batch×M×K by K×N, two batches of equal size (a batch of one is
shared), or N-D batches that broadcast ((2, 1, M, K) by (3, K, N) is 2×3×M×N; B×H×S×D attention
products). Both take
CUDA tensors, a and b both float16 or both bfloat16, with any strides: a matrix with padded rows
is a leading dimension, a transposed view is op T and a batch stride of 0 repeats a matrix (no
copy); any other layout is copied first. A batch whose matrices lie one under the other, times one
shared matrix, is a single (batch·M)×K product. The output is a new contiguous tensor of dtype
out_dtype (float16, bfloat16 or float32; None: a's dtype); accum is "f32" or "f16" (float16 a, b
and output only), kernel_id "auto" or an id from hgemm.kernels() (not `kernel`: inductor's
fallback kernels take that name themselves). Gradients come in the inputs' dtype.

addmm: act(alpha·a·b + beta·bias), as torch.addmm(bias, a, b, beta=beta, alpha=alpha) followed by an activation, with the bias and
the activation applied in the product's epilogue, on the f32 sum before the output's one rounding.
a is M×K and b K×N as for mm; bias is None or a 1-D tensor of N values (one per output column, as
nn.Linear's bias; float16, bfloat16 or float32, on a's device); activation is "none", "relu",
"gelu" (erf: torch's gelu(approximate="none")), "gelu_tanh" (gelu(approximate="tanh")) or "silu".
Under torch.autocast every operator casts its floating-point inputs (float64 aside) to the
autocast dtype first, as torch.mm and torch.addmm do.

Its backward needs the pre-activation Z = a·b + bias for gelu, gelu_tanh and silu: when a gradient
is wanted, the forward runs hgemm::_addmm_aux, which returns (out, Z) from the one product (Z in the
output's dtype, written by the same epilogue), and saves Z; relu's backward reads the output.

grouped_mm: torch._grouped_mm's four forms with its positional arguments (a, b, offs, bias,
out_dtype; bias must be None), then hgemm's m_valid (the masked layout): 2-D a by 3-D b with offs
along M, 3-D a by 2-D b with offs along N, 2-D a by 2-D b with offs along K (G×M×N) and 3-D by
3-D; see hgemm.grouped_mm and the autograd section below.

The operators are registered with torch.library.Library define/impl rather than
torch.library.custom_op, whose wrapper costs more host time per call.
"""

import torch

from . import _checks
from . import _ACTIVATIONS, _check_kernel, _out_shape, _to_3d, _torch_codes, _torch_stream, _torch_view
from ._hgemm import gemm_views as _gemm_views
from ._hgemm import grouped_gemm_views as _grouped_gemm_views
from ._hgemm import k_grouped_gemm_views as _k_grouped_gemm_views

__all__ = ["mm", "matmul", "addmm", "grouped_mm"]

F16, BF16, F32 = torch.float16, torch.bfloat16, torch.float32
_CODE = _torch_codes(torch)  # dtype -> the dtype code of a native view

_lib = torch.library.Library("hgemm", "DEF")
_lib.define('mm(Tensor a, Tensor b, *, str accum="f32", str kernel_id="auto", ScalarType? out_dtype=None) -> Tensor')
_lib.define('matmul(Tensor a, Tensor b, *, str accum="f32", str kernel_id="auto", ScalarType? out_dtype=None) '
            '-> Tensor')


# ---- checks shared by the CUDA and the fake kernels: the same errors with and without data ----

def _check_args(name, a, b, accum, kernel, out_dtype):
    dtype = a.dtype
    if b.dtype is dtype and (dtype is F16 or dtype is BF16) and accum == "f32" and kernel == "auto" \
            and out_dtype is None:
        return  # the common call, checked in one line
    where = f"hgemm::{name}"
    _checks.operands(where, dtype, b.dtype)
    if out_dtype is not None and out_dtype not in _CODE:
        _checks.out_dtype(where, out_dtype)
    if accum != "f32":
        _checks.accum(where, accum)
        out_text = _checks.dtype_text(dtype if out_dtype is None else out_dtype)
        _checks.accum_f16(where, _checks.dtype_text(dtype), out_text)
    if kernel != "auto":
        _check_kernel(kernel, where)


def _two_d_shape(name, a, b, hint):
    """(M, N) of the product of 2-D a and b; ValueError, naming the argument and `hint`, otherwise."""
    where = f"hgemm::{name}"
    for arg, t in (("a", a), ("b", b)):
        if t.dim() != 2:
            _checks.ndim(where, arg, t.dim(), (2,), f"a 2-D tensor ({hint})")
    m, _, n = _checks.contraction(where, a.shape, b.shape)
    return m, n


def _mm_shape(a, b, accum, kernel, out_dtype):
    _check_args("mm", a, b, accum, kernel, out_dtype)
    return _two_d_shape("mm", a, b, "hgemm::matmul takes batches")


def _matmul_shape(a, b, accum, kernel, out_dtype):
    _check_args("matmul", a, b, accum, kernel, out_dtype)
    if a.dim() > 3 or b.dim() > 3 or a.dim() < 2 or b.dim() < 2:
        return _to_3d(torch, a, b, "hgemm::matmul")[2]
    return _out_shape(a.shape, b.shape, False, False, "hgemm::matmul")


# ---- CUDA kernels ----
#
# The checks that the native layer makes anyway (shapes, batches, strides, devices, accum) are left
# to it: its ValueError / TypeError carry the same information, and the host time per call is most
# of what a small product costs.

def _view(t, where="hgemm::matmul"):
    """(the tensor read, its native view (see hgemm._torch_view)): t itself, or a contiguous copy
    when one of its matrices is neither row-major with a leading dimension nor a transposed view of
    one (the layouts the library reads in place, with any batch stride). The caller keeps the
    tensor until the launch is enqueued: a copy freed before then could become the output."""
    shape, stride = t.shape, t.stride()
    if len(shape) != 2 and len(shape) != 3:
        return t, _torch_view(torch, t, "a", where)  # raises the ValueError naming the dimensions
    rows, cols = shape[-2], shape[-1]
    s0, s1 = stride[-2], stride[-1]
    if not (((s1 == 1 or cols <= 1) and (rows <= 1 or s0 >= cols))
            or ((s0 == 1 or rows <= 1) and (cols <= 1 or s1 >= rows))):
        t = t.contiguous()
        stride = t.stride()
        s0, s1 = stride[-2], stride[-1]
    if len(shape) == 2:
        return t, (t.data_ptr(), rows, cols, s0, s1, t.get_device(), _CODE[t.dtype])
    return t, (t.data_ptr(), rows, cols, s0, s1, t.get_device(), _CODE[t.dtype], shape[0], stride[0])


def _stream(device):
    """torch's current stream of the device (what CUDA-graph capture and torch.cuda.stream(...)
    expect); 0 for the host."""
    return _torch_stream(torch, device) if device >= 0 else 0


def _new_output(like, shape, dtype, device):
    """(a new tensor of `shape` and dtype on like's device (ordinal `device`), its native view)."""
    # new_empty takes a slower path when given a dtype: name it only when it differs.
    out = like.new_empty(shape) if dtype is like.dtype else like.new_empty(shape, dtype=dtype)
    rows, cols = shape[-2], shape[-1]
    vo = (out.data_ptr(), rows, cols, cols, 1, device, _CODE[dtype])
    if len(shape) == 3:
        vo += (shape[0], rows * cols)
    return out, vo


def _launch(a, va, vb, shape, dtype, accum, kernel, where="hgemm::matmul"):
    device = va[5]
    out, vo = _new_output(a, shape, dtype, device)
    try:
        _gemm_views(va, vb, vo, 1.0, 0.0, accum, kernel, False, False, _stream(device))
    except (TypeError, ValueError, RuntimeError) as e:
        raise _checks.native(where, e) from None
    return out


def _two_d_product(name, a, b, accum, kernel_id, out_dtype):
    """a·b of 2-D a and b; the shapes are checked by the native layer."""
    _check_args(name, a, b, accum, kernel_id, out_dtype)
    a, va = _view(a)
    b, vb = _view(b)
    return _launch(a, va, vb, (va[1], vb[2]), a.dtype if out_dtype is None else out_dtype, accum, kernel_id,
                   f"hgemm::{name}")


# The CUDA kernels take their options by position too: the Autograd kernels call them so.
def _mm_cuda(a, b, accum="f32", kernel_id="auto", out_dtype=None):
    if a.dim() != 2 or b.dim() != 2:
        _mm_shape(a, b, accum, kernel_id, out_dtype)  # raises the error naming the dimensions
    return _two_d_product("mm", a, b, accum, kernel_id, out_dtype)


def _matmul_cuda(a, b, accum="f32", kernel_id="auto", out_dtype=None):
    if a.dim() == 2 and b.dim() == 2:
        return _two_d_product("matmul", a, b, accum, kernel_id, out_dtype)
    if a.dim() > 3 or b.dim() > 3:  # N-D batches: one 2-D or 3-D product, viewed back
        _check_args("matmul", a, b, accum, kernel_id, out_dtype)
        a3, b3, shape = _to_3d(torch, a, b, "hgemm::matmul")
        return _matmul_cuda(a3, b3, accum, kernel_id, out_dtype).view(shape)
    shape = _matmul_shape(a, b, accum, kernel_id, out_dtype)
    a, va = _view(a)
    b, vb = _view(b)
    return _launch(a, va, vb, shape, a.dtype if out_dtype is None else out_dtype, accum, kernel_id)


def _refuse_device(where, tensors):
    """The TypeError for CPU tensors, naming the first argument not on a CUDA device."""
    for arg, t in tensors:
        if t is not None and not t.is_cuda:
            _checks.cuda(where, arg, t.device)


def _refuse_cpu(name):
    # the arguments are checked first, as on CUDA, so that a mistake is named alike on any device
    shape = _mm_shape if name == "mm" else _matmul_shape

    def refuse(a, b, *, accum="f32", kernel_id="auto", out_dtype=None):
        shape(a, b, accum, kernel_id, out_dtype)
        _refuse_device(f"hgemm::{name}", (("a", a), ("b", b)))
    return refuse


def _mm_fake(a, b, *, accum="f32", kernel_id="auto", out_dtype=None):
    return a.new_empty(_mm_shape(a, b, accum, kernel_id, out_dtype), dtype=a.dtype if out_dtype is None else out_dtype)


def _matmul_fake(a, b, *, accum="f32", kernel_id="auto", out_dtype=None):
    return a.new_empty(_matmul_shape(a, b, accum, kernel_id, out_dtype),
                       dtype=a.dtype if out_dtype is None else out_dtype)


for _name, _cuda, _fake in (("mm", _mm_cuda, _mm_fake), ("matmul", _matmul_cuda, _matmul_fake)):
    _lib.impl(_name, _cuda, "CUDA")
    _lib.impl(_name, _refuse_cpu(_name), "CPU")  # a TypeError naming the device, not "no kernel for CPU"
    torch.library.register_fake(f"hgemm::{_name}", _fake, lib=_lib)


# ---- autograd ----
#
# D = op(A)·op(B) gives dA = dD·op(B)ᵀ and dB = op(A)ᵀ·dD, each computed only when its input needs it,
# from transposed views (op T, no copies). A gradient is laid out like its input (when the input is
# a transposed view, the transposed product is computed), so that a weight used as W.t() gets a
# row-major gradient that autograd accumulates without a copy. An operand shared by a batch (2-D,
# or a batch of one) gets the sum over the batch, computed as one product over the batch laid side
# by side. Gradients come in the inputs' dtype: an incoming gradient of another dtype (out_dtype
# given) is cast to it first, since the library takes A and B in 16 bits only.

def _transposed(t):
    """Whether t's matrices are column-major (a transposed view of row-major storage)."""
    return t.stride(-2) == 1 and t.stride(-1) != 1


def _product(x, y, like_transposed):
    """x·y (2-D, or batches with broadcasting) by hgemm, as the transpose of yᵀ·xᵀ when the result
    should be column-major."""
    if like_transposed:
        x, y = y.mT, x.mT
    out = (torch.ops.hgemm.mm.default if x.dim() == 2 and y.dim() == 2 else torch.ops.hgemm.matmul.default)(x, y)
    return out.mT if like_transposed else out


def _setup_context(ctx, a, b, output):
    need_a, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
    # dA reads b, dB reads a: save only what a needed gradient reads.
    ctx.save_for_backward(b if need_a else None, a if need_b else None)
    ctx.a_dim, ctx.b_dim = a.dim(), b.dim()
    ctx.a_shared = output.dim() == 3 and (a.dim() == 2 or a.shape[0] != output.shape[0])
    ctx.b_shared = output.dim() == 3 and (b.dim() == 2 or b.shape[0] != output.shape[0])
    ctx.a_transposed, ctx.b_transposed = _transposed(a), _transposed(b)
    ctx.dtype = a.dtype


def _backward(ctx, grad):
    b, a = ctx.saved_tensors
    if grad.dtype != ctx.dtype:
        grad = grad.to(ctx.dtype)
    da = db = None
    if ctx.needs_input_grad[0]:
        if ctx.a_shared:
            # dA = Σᵢ dDᵢ·op(Bᵢ)ᵀ = [dD₁ … dDₙ]·[op(B₁)ᵀ; …; op(Bₙ)ᵀ]: one M×(n·N) by (n·N)×K product.
            m, k = grad.shape[1], b.shape[-2]
            da = _product(grad.transpose(0, 1).reshape(m, -1), b.mT.reshape(-1, k), ctx.a_transposed)
            if ctx.a_dim == 3:
                da = da.unsqueeze(0)
        else:
            da = _product(grad, b.mT, ctx.a_transposed)
    if ctx.needs_input_grad[1]:
        if ctx.b_shared:
            # dB = Σᵢ op(Aᵢ)ᵀ·dDᵢ: the batch stacked into one (n·M)×K matrix (a view when contiguous).
            k, n = a.shape[-1], grad.shape[-1]
            db = _product(a.reshape(-1, k).mT, grad.reshape(-1, n), ctx.b_transposed)
            if ctx.b_dim == 3:
                db = db.unsqueeze(0)
        else:
            db = _product(a.mT, grad, ctx.b_transposed)
    return da, db, None, None, None, None


# The Autograd kernel. torch.library.register_autograd would do the same with an autograd.Function,
# but its kernel always re-enters the dispatcher from Python, even when nothing needs a gradient,
# which roughly doubles an operator call's host time. Here a call without gradients whose only key
# left below autograd is CUDA (a plain CUDA tensor, no mode or tracing active) runs the CUDA kernel
# directly, as the dispatcher would; every other call is redispatched, as register_autograd does.

_AFTER_AUTOGRAD = torch._C._after_autograd_keyset
_is_grad_enabled = torch._C.is_grad_enabled
_CUDA_KEY = torch._C.DispatchKey.CUDA
_NEXT_IS_CUDA = {}  # DispatchKeySet.raw_repr() -> whether the next kernel below autograd is CUDA's


def _next_is_cuda(keyset):
    raw = keyset.raw_repr()
    known = _NEXT_IS_CUDA.get(raw)
    if known is None:
        known = _NEXT_IS_CUDA[raw] = (keyset & _AFTER_AUTOGRAD).highestPriorityTypeId() == _CUDA_KEY
    return known


def _register_autograd(name, cuda_kernel):
    op = getattr(torch.ops.hgemm, name).default

    def below_autograd(keyset, a, b, accum, kernel_id, out_dtype):
        with torch._C._AutoDispatchBelowAutograd():
            return op.redispatch(keyset & _AFTER_AUTOGRAD, a, b, accum=accum, kernel_id=kernel_id,
                                 out_dtype=out_dtype)

    class Product(torch.autograd.Function):
        # forward(ctx, ...) rather than a separate setup_context: the older form costs less per call.
        @staticmethod
        def forward(ctx, a, b, accum, kernel_id, out_dtype, keyset):
            out = below_autograd(keyset, a, b, accum, kernel_id, out_dtype)
            _setup_context(ctx, a, b, out)
            return out

        backward = staticmethod(_backward)

    Product.__name__ = Product.__qualname__ = f"HgemmBackward_{name}"

    def autograd_kernel(keyset, a, b, accum="f32", kernel_id="auto", out_dtype=None):
        if _is_grad_enabled() and (a.requires_grad or b.requires_grad):
            if a.dim() > 3 or b.dim() > 3:
                # N-D batches: torch's expand and reshape carry the gradient (summed over broadcast
                # dimensions) to and from a 2-D or 3-D product, whose backward is Product's.
                a3, b3, shape = _to_3d(torch, a, b)
                op3 = torch.ops.hgemm.mm.default if a3.dim() == 2 and b3.dim() == 2 else torch.ops.hgemm.matmul.default
                return op3(a3, b3, accum=accum, kernel_id=kernel_id, out_dtype=out_dtype).view(shape)
            return Product.apply(a, b, accum, kernel_id, out_dtype, keyset)
        if _next_is_cuda(keyset):
            return cuda_kernel(a, b, accum, kernel_id, out_dtype)
        return below_autograd(keyset, a, b, accum, kernel_id, out_dtype)

    _lib.impl(name, autograd_kernel, "Autograd", with_keyset=True)


_register_autograd("mm", _mm_cuda)
_register_autograd("matmul", _matmul_cuda)

mm = torch.ops.hgemm.mm.default
matmul = torch.ops.hgemm.matmul.default


# ---- addmm: the product with the fused epilogue (bias, activation) ----
#
# hgemm::addmm is the forward of nn.Linear with a fused bias and activation; hgemm::_addmm_aux is the
# same with the pre-activation Z as a second output (the epilogue's aux), which the backward of
# gelu, gelu_tanh and silu reads. Both are differentiable (Z's gradient adds to dZ).

_lib.define('addmm(Tensor? bias, Tensor a, Tensor b, *, Scalar beta=1, Scalar alpha=1, str activation="none", str accum="f32", '
            'str kernel_id="auto", ScalarType? out_dtype=None) -> Tensor')
_lib.define('_addmm_aux(Tensor? bias, Tensor a, Tensor b, *, Scalar beta=1, Scalar alpha=1, str activation="none", str accum="f32", '
            'str kernel_id="auto", ScalarType? out_dtype=None) -> (Tensor, Tensor)')


def _addmm_shape(name, bias, a, b, activation, accum, kernel, out_dtype):
    _check_args(name, a, b, accum, kernel, out_dtype)
    shape = _two_d_shape(name, a, b, "flatten a batch of rows into a, as hgemm.nn.linear does")
    where = f"hgemm::{name}"
    if activation not in _ACTIVATIONS:
        _checks.activation(where, activation)
    if bias is not None:
        if bias.dtype not in _CODE or bias.dim() != 1 or bias.shape[0] != shape[1]:
            _checks.bias(where, bias, shape[1])
        if bias.device != a.device:
            _checks.same_device(where, "bias", bias.device, a.device)
    return shape


def _launch_epilogue(bias, a, b, activation, accum, kernel_id, out_dtype, with_aux, beta=1, alpha=1,
                     where="hgemm::addmm"):
    """act(a·b + bias) into a new tensor, and with_aux: Z = a·b + bias into another of the same
    dtype, from one product."""
    a, va = _view(a)
    b, vb = _view(b)
    shape = (va[1], vb[2])
    dtype = a.dtype if out_dtype is None else out_dtype
    out, vo = _new_output(a, shape, dtype, va[5])
    vbias = aux = vaux = None
    if beta != 1 and bias is not None:
        bias = None if beta == 0 else bias * beta  # beta = 0 ignores the bias, as torch.addmm
    if bias is not None:
        if not bias.is_contiguous():
            bias = bias.contiguous()
        vbias = (bias.data_ptr(), len(bias), 1, bias.get_device(), _CODE[bias.dtype])
    if with_aux:
        aux, vaux = _new_output(a, shape, dtype, va[5])
    # The epilogue's arguments by position: keywords cost the binding a lookup each.
    try:
        _gemm_views(va, vb, vo, float(alpha), 0.0, accum, kernel_id, False, False, _stream(va[5]), vbias, "n",
                    activation, vaux)
    except (TypeError, ValueError, RuntimeError) as e:
        raise _checks.native(where, e) from None
    return (out, aux) if with_aux else out


def _addmm_cuda(bias, a, b, activation="none", accum="f32", kernel_id="auto", out_dtype=None, beta=1, alpha=1):
    _addmm_shape("addmm", bias, a, b, activation, accum, kernel_id, out_dtype)
    return _launch_epilogue(bias, a, b, activation, accum, kernel_id, out_dtype, False, beta, alpha)


def _addmm_aux_cuda(bias, a, b, activation="none", accum="f32", kernel_id="auto", out_dtype=None, beta=1, alpha=1):
    _addmm_shape("_addmm_aux", bias, a, b, activation, accum, kernel_id, out_dtype)
    return _launch_epilogue(bias, a, b, activation, accum, kernel_id, out_dtype, True, beta, alpha, "hgemm::_addmm_aux")


def _addmm_fake(bias, a, b, *, beta=1, alpha=1, activation="none", accum="f32", kernel_id="auto", out_dtype=None):
    shape = _addmm_shape("addmm", bias, a, b, activation, accum, kernel_id, out_dtype)
    return a.new_empty(shape, dtype=a.dtype if out_dtype is None else out_dtype)


def _addmm_aux_fake(bias, a, b, *, beta=1, alpha=1, activation="none", accum="f32", kernel_id="auto",
                    out_dtype=None):
    shape = _addmm_shape("_addmm_aux", bias, a, b, activation, accum, kernel_id, out_dtype)
    dtype = a.dtype if out_dtype is None else out_dtype
    return a.new_empty(shape, dtype=dtype), a.new_empty(shape, dtype=dtype)


def _refuse_cpu_addmm(name):
    def refuse(bias, a, b, *, beta=1, alpha=1, activation="none", accum="f32", kernel_id="auto", out_dtype=None):
        _addmm_shape(name, bias, a, b, activation, accum, kernel_id, out_dtype)
        _refuse_device(f"hgemm::{name}", (("a", a), ("b", b), ("bias", bias)))
    return refuse


for _name, _cuda, _fake in (("addmm", _addmm_cuda, _addmm_fake), ("_addmm_aux", _addmm_aux_cuda, _addmm_aux_fake)):
    _lib.impl(_name, _cuda, "CUDA")
    _lib.impl(_name, _refuse_cpu_addmm(_name), "CPU")
    torch.library.register_fake(f"hgemm::{_name}", _fake, lib=_lib)


# Autograd of addmm. D = act(Z), Z = A·B + bias gives
#   dZ = dD·act'(Z) (plus Z's own gradient for _addmm_aux), by torch's elementwise derivatives:
#        threshold_backward for relu (reading D: D > 0 exactly where Z > 0), gelu_backward (erf or
#        tanh form) and silu_backward (reading Z, which the forward wrote in the same launch);
#   dbias = the column sums of dZ, in the bias's dtype (accumulated in f32);
#   dA = dZ·Bᵀ and dB = Aᵀ·dZ by hgemm, from transposed views as mm's backward (_product).
# Each gradient only when its input needs it; Z is kept only for the activations that read it.
# The backward is once differentiable (a second derivative raises): Z, saved from below autograd,
# carries no graph back to a, b and the bias.

_READS_Z = ("gelu", "gelu_tanh", "silu")


def _activation_backward(grad, saved, activation):
    """dZ = grad·act'(Z): saved is Z for gelu, gelu_tanh and silu, act(Z) for relu."""
    if activation == "relu":
        return torch.ops.aten.threshold_backward.default(grad, saved, 0)
    if activation == "gelu":
        return torch.ops.aten.gelu_backward.default(grad, saved)
    if activation == "gelu_tanh":
        return torch.ops.aten.gelu_backward.default(grad, saved, approximate="tanh")
    if activation == "silu":
        return torch.ops.aten.silu_backward.default(grad, saved)
    return grad


class _Addmm(torch.autograd.Function):
    @staticmethod
    def forward(ctx, bias, a, b, activation, accum, kernel_id, out_dtype, keyset, with_aux, beta=1, alpha=1):
        keys = keyset & _AFTER_AUTOGRAD
        with torch._C._AutoDispatchBelowAutograd():
            if with_aux or activation in _READS_Z:
                out, z = torch.ops.hgemm._addmm_aux.default.redispatch(
                    keys, bias, a, b, beta=beta, alpha=alpha, activation=activation, accum=accum, kernel_id=kernel_id,
                    out_dtype=out_dtype)
            else:
                out = torch.ops.hgemm.addmm.default.redispatch(
                    keys, bias, a, b, beta=beta, alpha=alpha, activation=activation, accum=accum, kernel_id=kernel_id,
                    out_dtype=out_dtype)
        need_a, need_b = ctx.needs_input_grad[1], ctx.needs_input_grad[2]
        saved = z if activation in _READS_Z else out if activation == "relu" else None
        ctx.save_for_backward(b if need_a else None, a if need_b else None, saved)
        ctx.set_materialize_grads(False)
        ctx.activation = activation
        ctx.dtype = a.dtype
        ctx.bias_dtype = None if bias is None else bias.dtype
        ctx.beta, ctx.alpha = beta, alpha
        ctx.a_transposed, ctx.b_transposed = _transposed(a), _transposed(b)
        return (out, z) if with_aux else out

    @staticmethod
    @torch.autograd.function.once_differentiable
    def backward(ctx, grad, grad_z=None):
        b, a, saved = ctx.saved_tensors
        dz = None if grad is None else _activation_backward(grad, saved, ctx.activation)
        if grad_z is not None:
            dz = grad_z if dz is None else dz + grad_z
        dbias = da = db = None
        if dz is not None:
            if ctx.needs_input_grad[0]:
                dbias = dz.sum(0, dtype=ctx.bias_dtype)
                if ctx.beta != 1:
                    dbias = dbias * ctx.beta
            if dz.dtype != ctx.dtype:
                dz = dz.to(ctx.dtype)
            if ctx.alpha != 1:  # Z = alpha·A·B + beta·bias
                dz = dz * ctx.alpha
            if ctx.needs_input_grad[1]:
                da = _product(dz, b.mT, ctx.a_transposed)
            if ctx.needs_input_grad[2]:
                db = _product(a.mT, dz, ctx.b_transposed)
        return dbias, da, db, None, None, None, None, None, None, None, None


_Addmm.__name__ = _Addmm.__qualname__ = "HgemmBackward_addmm"


def _register_addmm_autograd(name, cuda_kernel, with_aux):
    op = getattr(torch.ops.hgemm, name).default

    def autograd_kernel(keyset, bias, a, b, activation="none", accum="f32", kernel_id="auto", out_dtype=None, beta=1,
                        alpha=1):
        if _is_grad_enabled() and (a.requires_grad or b.requires_grad or (bias is not None and bias.requires_grad)):
            return _Addmm.apply(bias, a, b, activation, accum, kernel_id, out_dtype, keyset, with_aux, beta, alpha)
        if _next_is_cuda(keyset):
            return cuda_kernel(bias, a, b, activation, accum, kernel_id, out_dtype, beta, alpha)
        with torch._C._AutoDispatchBelowAutograd():
            return op.redispatch(keyset & _AFTER_AUTOGRAD, bias, a, b, beta=beta, alpha=alpha, activation=activation,
                                 accum=accum, kernel_id=kernel_id, out_dtype=out_dtype)

    _lib.impl(name, autograd_kernel, "Autograd", with_keyset=True)


_register_addmm_autograd("addmm", _addmm_cuda, False)
_register_addmm_autograd("_addmm_aux", _addmm_aux_cuda, True)

addmm = torch.ops.hgemm.addmm.default


# ---- grouped_mm ----
#
# hgemm::grouped_mm is hgemm.grouped_mm as an operator, with torch._grouped_mm's four forms and its
# positional arguments (a, b, offs, bias, out_dtype), and hgemm's m_valid after them:
#   rows:  a 2-D (ΣM×K) by b 3-D (G×K×N), offs along M: the contiguous layout, one launch;
#   batch: a and b 3-D, no offs: the batched matmul; with m_valid the masked layout;
#   k:     a 2-D (M×ΣK) by b 2-D (ΣK×N), offs along K: G×M×N, hgemm's K-grouped layout, one launch;
#   cols:  a 3-D (G×M×K) by b 2-D (K×ΣN), offs along N: M×ΣN, the rows form of the transposed
#          problem (outᵀ = bᵀ by each aᵀ_g), then outᵀ copied to rows.
# The group sizes stay on the GPU, so the operator is CUDA-graph safe with sizes that change between
# replays. hgemm::_k_grouped_mm is the K-grouped product that gradients take (see below).

# m_valid is not keyword-only: register_autograd takes no keyword-only tensors.
_lib.define("grouped_mm(Tensor a, Tensor b, Tensor? offs=None, Tensor? bias=None, ScalarType? out_dtype=None, "
            "Tensor? m_valid=None) -> Tensor")
_lib.define("_k_grouped_mm(Tensor a, Tensor b, Tensor offs) -> Tensor")


def _grouped_form(a, b):
    return {(2, 3): "rows", (3, 3): "batch", (2, 2): "k", (3, 2): "cols"}[(a.dim(), b.dim())]


def _grouped_mm_shape(a, b, offs, bias, out_dtype, m_valid):
    where = "hgemm::grouped_mm"
    _check_args("grouped_mm", a, b, "f32", "auto", out_dtype)
    shape = _checks.grouped_shape(where, tuple(a.shape), tuple(b.shape), offs is not None, m_valid is not None)
    if bias is not None:
        raise NotImplementedError("hgemm::grouped_mm: argument 'bias': expected None (a bias on grouped products "
                                  "is not implemented), got a tensor")
    if shape[0] is None:  # the K-grouped form: one product per entry of offs
        _checks.group_sizes(where, "offs", offs, -1)
        return (offs.shape[0],) + tuple(shape[1:])
    for name, sizes in (("offs", offs), ("m_valid", m_valid)):
        if sizes is not None:
            _checks.group_sizes(where, name, sizes, a.shape[0] if _grouped_form(a, b) == "cols" else b.shape[0])
    return shape


def _grouped_mm_cuda(a, b, offs=None, bias=None, out_dtype=None, m_valid=None):
    shape = _grouped_mm_shape(a, b, offs, bias, out_dtype, m_valid)
    dtype = a.dtype if out_dtype is None else out_dtype
    form = _grouped_form(a, b)
    if form == "k":
        return k_grouped_into(a, b, offs, a.new_empty(shape, dtype=dtype), "hgemm::grouped_mm")
    if form == "cols":
        return _cols_via_rows(a, b, offs, dtype, _grouped_mm_cuda)
    if offs is not None and a.stride(-1) != 1 and a.shape[-1] > 1:
        a = a.contiguous()  # the contiguous layout takes A row-major (its groups start at any row)
    a, va = _view(a)
    b, vb = _view(b)
    sizes = offs if offs is not None else m_valid
    if sizes is None:  # a plain batch: the batched matmul
        return _launch(a, va, vb, shape, dtype, "f32", "auto")
    sizes = sizes.contiguous()
    out, vo = _new_output(a, shape, dtype, va[5])
    _grouped_gemm_views(va, vb, vo, (sizes.data_ptr(), sizes.shape[0], sizes.get_device()), m_valid is not None,
                        _stream(va[5]))
    return out


def _cols_via_rows(a, b, offs, dtype, rows_product):
    """The cols form (a G×M×K, b K×ΣN, offs along N) as the rows form of the transposed problem:
    outᵀ[s_g:e_g] = bᵀ[s_g:e_g] · a_gᵀ, then laid out as M×ΣN rows. rows_product(a, b, offs, None,
    dtype) is the rows form (a parameter, so that the CPU tests check this algebra on a reference)."""
    return rows_product(b.mT, a.mT, offs, None, dtype).mT.contiguous()


def _grouped_mm_fake(a, b, offs=None, bias=None, out_dtype=None, m_valid=None):
    shape = _grouped_mm_shape(a, b, offs, bias, out_dtype, m_valid)
    return a.new_empty(shape, dtype=a.dtype if out_dtype is None else out_dtype)


def _k_grouped_shape(a, b, offs):
    where = "hgemm::_k_grouped_mm"
    _checks.ndim(where, "a", a.dim(), (2,), "a 2-D tensor (P×S)")
    _checks.ndim(where, "b", b.dim(), (2,), "a 2-D tensor (S×Q)")
    _checks.contraction(where, a.shape, b.shape)
    _checks.group_sizes(where, "offs", offs, -1)
    _checks.operands(where, a.dtype, b.dtype)
    return (offs.shape[0], a.shape[0], b.shape[1])


def _k_grouped_mm_cuda(a, b, offs):
    """out[g] = a[:, s_g:e_g] · b[s_g:e_g, :] over the slices of K that offs ends (clamped to [0, S]
    and made nondecreasing on the device, as the forward's): hgemm's K-grouped layout, one launch
    that reads the offsets on the GPU (no synchronisation, CUDA-graph safe)."""
    return k_grouped_into(a, b, offs, a.new_empty(_k_grouped_shape(a, b, offs)))


def k_grouped_into(a, b, offs, out, where="hgemm::_k_grouped_mm"):
    """The K-grouped product into out (G×P×Q with row-major rows, any of float16, bfloat16 and
    float32). The layout takes a column-major (as x.t() of a row-major x) and b row-major (as dy);
    other layouts are copied."""
    groups, m, n = out.shape
    for name, t in (("a", a), ("b", b), ("offs", offs), ("out", out)):
        if not t.is_cuda:
            _checks.cuda(where, name, t.device)
    if out.numel() == 0:
        return out
    if a.shape[1] == 0:
        return out.zero_()
    (rows, cols), (s0, s1) = a.shape, a.stride()
    if not ((s0 == 1 or rows <= 1) and (cols <= 1 or s1 >= rows)):
        a = a.t().contiguous().t()
    if not ((b.stride(1) == 1 or b.shape[1] <= 1) and (b.shape[0] <= 1 or b.stride(0) >= b.shape[1])):
        b = b.contiguous()
    offs = offs.contiguous()
    a, va = _view(a)  # in place: the layouts are the ones _view reads
    b, vb = _view(b)
    device = va[5]
    vo = (out.data_ptr(), m, n, out.stride(1), out.stride(2), device, _CODE[out.dtype], groups, out.stride(0))
    _k_grouped_gemm_views(va, vb, vo, (offs.data_ptr(), groups, offs.get_device()), _stream(device))
    return out


def _k_grouped_mm_fake(a, b, offs):
    return a.new_empty(_k_grouped_shape(a, b, offs))


def _grouped_mm_refuse_cpu(a, b, offs=None, bias=None, out_dtype=None, m_valid=None):
    _grouped_mm_shape(a, b, offs, bias, out_dtype, m_valid)  # checked first, as on CUDA
    _refuse_device("hgemm::grouped_mm", (("a", a), ("b", b), ("offs", offs), ("m_valid", m_valid)))


def _k_grouped_mm_refuse_cpu(a, b, offs):
    _k_grouped_shape(a, b, offs)
    _refuse_device("hgemm::_k_grouped_mm", (("a", a), ("b", b), ("offs", offs)))


for _name, _cuda, _refuse, _fake in (
        ("grouped_mm", _grouped_mm_cuda, _grouped_mm_refuse_cpu, _grouped_mm_fake),
        ("_k_grouped_mm", _k_grouped_mm_cuda, _k_grouped_mm_refuse_cpu, _k_grouped_mm_fake)):
    _lib.impl(_name, _cuda, "CUDA")
    _lib.impl(_name, _refuse, "CPU")
    torch.library.register_fake(f"hgemm::{_name}", _fake, lib=_lib)


# Autograd of grouped_mm. D_g = A_g·B_g for the rows of group g gives
#   dA_g = dD_g·B_gᵀ: grouped_mm itself on the same sizes, with b's matrices as transposed views
#        (op T, no copy); rows of a in no group get zeros (no output depends on them);
#   dB_g = A_gᵀ·dD_g: for the contiguous layout the K-grouped product (_k_grouped_mm: hgemm's
#        K-grouped layout, one launch reading offs on the device); for the masked layout a
#        batched hgemm product of a and dD with the rows past m_valid zeroed; for a plain batch
#        the batched product.
# The other two forms take the same two launches: for the K-grouped one (D_g = A[:, g]·B[g, :])
# dAᵀ[g] = B[g, :]·dD_gᵀ and dB[g, :] = A[:, g]ᵀ·dD_g are the rows form; for the cols form
# (D[:, g] = A_g·B[:, g]) dA_g = dD[:, g]·B[:, g]ᵀ is the K-grouped product and dBᵀ[g] = dD[:, g]ᵀ·A_g
# the rows form. Gradients come in the inputs' dtype; offs and m_valid get none.

def _rows_op(a, b, offs):
    """The rows form (a 2-D, b 3-D, offs along a's rows), in a's dtype."""
    return torch.ops.hgemm.grouped_mm.default(a, b, offs)


def _k_op(a, b, offs):
    """The K-grouped form (a P×S, b S×Q, offs along S): G×P×Q in a's dtype."""
    return torch.ops.hgemm._k_grouped_mm.default(a, b, offs)


def _rows_in_groups(x, offs):
    """x (the rows form's output) with its rows in no group (from max(offs) on) zeroed."""
    rows = x.shape[0]
    unused = torch.arange(rows, device=x.device) >= offs.max().clamp(0, rows)
    return x.masked_fill_(unused.unsqueeze(1), 0)


def _grouped_setup(ctx, inputs, output):
    a, b, offs, _bias, _out_dtype, m_valid = inputs
    need_a, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
    ctx.save_for_backward(a if need_b else None, b if need_a else None, offs, m_valid)
    ctx.dtype, ctx.form = a.dtype, _grouped_form(a, b)
    ctx.a_shape, ctx.b_shape = tuple(a.shape), tuple(b.shape)
    ctx.a_transposed, ctx.b_transposed = _transposed(a), _transposed(b)


def _grouped_backward(ctx, grad):
    a, b, offs, m_valid = ctx.saved_tensors
    need_a, need_b = ctx.needs_input_grad[0], ctx.needs_input_grad[1]
    if grad.dtype != ctx.dtype:
        grad = grad.to(ctx.dtype)
    da = db = None
    if ctx.form in ("k", "cols") and offs.shape[0] == 0:  # no groups: nothing depends on a or b
        zeros = lambda shape: grad.new_zeros(shape)  # noqa: E731
        return (zeros(ctx.a_shape) if need_a else None, zeros(ctx.b_shape) if need_b else None,
                None, None, None, None)
    if ctx.form == "k":  # a M×ΣK, b ΣK×N, grad G×M×N
        if need_a:
            da = _rows_in_groups(_rows_op(b, grad.mT, offs), offs).mT
        if need_b:
            db = _rows_in_groups(_rows_op(a.mT, grad, offs), offs)
    elif ctx.form == "cols":  # a G×M×K, b K×ΣN, grad M×ΣN
        if need_a:
            da = _k_op(grad, b.mT, offs)
        if need_b:
            db = _rows_in_groups(_rows_op(grad.mT, a, offs), offs).mT
    elif offs is not None:
        rows = grad.shape[0]
        if need_a:
            if offs.shape[0] == 0:
                da = grad.new_zeros(rows, b.shape[1])
            else:
                da = _rows_in_groups(_rows_op(grad, b.mT, offs), offs)
        if need_b:
            if ctx.b_transposed:  # b views G×N×K storage: dBᵀ_g = dD_gᵀ·A_g, laid out like b
                db = _k_op(grad.mT, a, offs).mT
            else:
                db = _k_op(a.mT, grad, offs)
    elif m_valid is not None:
        unused = (torch.arange(grad.shape[1], device=grad.device) >= m_valid.unsqueeze(1)).unsqueeze(2)
        if need_a:
            da = torch.ops.hgemm.grouped_mm.default(grad, b.mT, None, None, None, m_valid).masked_fill_(unused, 0)
        if need_b:
            # rows past m_valid take no part: zeroed in both factors (a's may hold anything, even NaN)
            db = _product(a.masked_fill(unused, 0).mT, grad.masked_fill(unused, 0), ctx.b_transposed)
    else:
        if need_a:
            da = _product(grad, b.mT, ctx.a_transposed)
        if need_b:
            db = _product(a.mT, grad, ctx.b_transposed)
    return da, db, None, None, None, None


torch.library.register_autograd("hgemm::grouped_mm", _grouped_backward, setup_context=_grouped_setup, lib=_lib)

grouped_mm = torch.ops.hgemm.grouped_mm.default


# ---- autocast ----
#
# Under torch.autocast the operators cast floating-point inputs (float64 aside) to the autocast
# dtype, as torch.mm and torch.addmm do, then run with autocast excluded. torch.library's
# register_autocast takes one fixed dtype; this reads the autocast dtype at each call.

_AUTOCAST_KEYS = (torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCUDA)
                  | torch._C.DispatchKeySet(torch._C.DispatchKey.AutocastCPU))
_autocast_dtype = getattr(torch, "get_autocast_dtype", None) or (
    lambda device: torch.get_autocast_gpu_dtype() if device == "cuda" else torch.get_autocast_cpu_dtype())


def _cast(x, dtype):
    if isinstance(x, torch.Tensor) and x.is_floating_point() and x.dtype is not dtype and x.dtype is not torch.float64:
        return x.to(dtype)
    return x


def _autocast_kernel(op, device):
    def kernel(*args, **kwargs):
        dtype = _autocast_dtype(device)
        args = tuple(_cast(x, dtype) for x in args)
        with torch._C._ExcludeDispatchKeyGuard(_AUTOCAST_KEYS):
            return op(*args, **kwargs)
    return kernel


for _name in ("mm", "matmul", "addmm", "grouped_mm"):
    _op = getattr(torch.ops.hgemm, _name).default
    _lib.impl(_name, _autocast_kernel(_op, "cuda"), "AutocastCUDA")
    _lib.impl(_name, _autocast_kernel(_op, "cpu"), "AutocastCPU")
