# SPDX-License-Identifier: Apache-2.0
"""hgemm: 16-bit matrix multiply kernels on any DLPack GPU array.

    import torch, hgemm
    a = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    b = torch.randn(4096, 4096, device="cuda", dtype=torch.float16)
    c = hgemm.matmul(a, b)                       # fp32 accumulation, kernel "auto"
    hgemm.matmul(a.T, b, out=c, kernel_id="cuda.t8x8_hfma2", accum="f16")  # a.T: no copy, op T
    d = hgemm.matmul(a.bfloat16(), b.bfloat16(), out_dtype="f32")      # bfloat16 in, float32 out
    bias = torch.randn(4096, device="cuda", dtype=torch.float16)
    y = hgemm.matmul(a, b, bias=bias, activation="gelu")  # gelu(a·b + bias), fused into the product

a and b are float16 or bfloat16 (one dtype for both), out float16, bfloat16 or float32.
Arrays are used where they lie: a row-major array with a padded row (stride > width) is a
leading dimension, a transposed view is op T, and 3-D arrays (N-D torch tensors) are batches of
matrices with torch.matmul's broadcasting. torch and cupy inputs get a new array of their own kind when `out` is
None; for other frameworks pass `out`. grouped_mm is torch._grouped_mm's mixture-of-experts product
(one launch for every group, the group sizes read on the GPU). matmul's bias, activation and aux_out
are computed in the product's epilogue, on the f32 sum, before its one rounding.

Where torch is installed, `import hgemm` registers torch.ops.hgemm.mm, hgemm.matmul, hgemm.addmm
(bias and activation fused) and hgemm.grouped_mm (autograd, autocast, torch.compile, torch.export,
CUDA graphs), so that a saved program that calls them loads after `import hgemm` alone
(HGEMM_NO_TORCH=1 skips this). `hgemm.nn.Linear` is a drop-in for torch.nn.Linear (with an
optional fused activation). Without torch, `import hgemm` works as well, on any DLPack array.
"""

import sys

from . import _checks
from ._hgemm import gemm as _gemm
from ._hgemm import gemm_views as _gemm_views
from ._hgemm import grouped_gemm as _grouped_gemm
from ._hgemm import grouped_gemm_views as _grouped_gemm_views
from ._hgemm import kernels as _kernels

__all__ = ["matmul", "grouped_mm", "kernels"]


def __getattr__(name):
    # hgemm.nn and hgemm.torch_ops import torch: loaded on first use, never by `import hgemm`.
    if name in ("nn", "torch_ops"):
        import importlib

        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def kernels():
    """Every registered kernel: id, family, ladder position, summary, min_arch, ops, accums."""
    return _kernels()


def _framework(x):
    return type(x).__module__.split(".")[0]


_TORCH = []  # torch, once seen: torch.compile then traces a list, not sys.modules (which other threads change)


def _torch():
    """torch if the caller has imported it (hgemm never imports a framework itself)."""
    if _TORCH:
        return _TORCH[0]
    torch = sys.modules.get("torch")
    if torch is not None:
        _TORCH.append(torch)
    return torch


def _dtype_name(dtype, where="hgemm.matmul"):
    """"float16", "bfloat16" or "float32" for an out_dtype (see _checks.out_dtype); else TypeError."""
    return _checks.out_dtype(where, dtype)


_TORCH_CODE = {}  # torch dtype -> the dtype code of a native view (hgemm::DataType)
_TORCH_OUT = {}   # out_dtype as given -> the torch dtype


def _torch_codes(torch):
    _TORCH_CODE.update({torch.float16: 0, torch.bfloat16: 1, torch.float32: 2})
    return _TORCH_CODE


def _torch_dtype(torch, dtype, where="hgemm.matmul"):
    """The torch dtype of an out_dtype (a torch dtype, or a name _dtype_name takes)."""
    if isinstance(dtype, torch.dtype) and dtype in (_TORCH_CODE or _torch_codes(torch)):
        return dtype
    known = _TORCH_OUT.get(dtype) if isinstance(dtype, str) else None
    if known is None:
        known = getattr(torch, _dtype_name(dtype, where))
        if isinstance(dtype, str):
            _TORCH_OUT[dtype] = known
    return known


def _torch_view(torch, t, name, where="hgemm.matmul"):
    """(data_ptr, rows, cols, stride0, stride1, device, dtype code) of a 2-D torch tensor, plus
    (batch, batch stride) of a 3-D one: the fast path, which skips building a DLPack capsule per
    array per call. The code is 0, 1, 2 for float16, bfloat16, float32; another dtype is a
    TypeError naming `name` (which of a, b and out it is)."""
    code = (_TORCH_CODE or _torch_codes(torch)).get(t.dtype)
    if code is None:
        _checks.dtype(where, name, t.dtype, _checks.OPERAND_DTYPES if name in ("a", "b") else _checks.OUTPUT_DTYPES)
    if t.dim() == 2:
        rows, cols = t.shape
        s0, s1 = t.stride()
        return (t.data_ptr(), rows, cols, s0, s1, t.get_device(), code)
    if t.dim() == 3:
        batch, rows, cols = t.shape
        sb, s0, s1 = t.stride()
        return (t.data_ptr(), rows, cols, s0, s1, t.get_device(), code, batch, sb)
    _checks.ndim(where, name, t.dim(), (2, 3), "2-D or 3-D (a batch of matrices)")


def _torch_vector(torch, t, name, columns=None, where="hgemm.matmul"):
    """(data_ptr, length, stride, device, dtype code) of a 1-D torch tensor: the bias for the native
    layer (which checks its stride and device)."""
    code = (_TORCH_CODE or _torch_codes(torch)).get(t.dtype) if isinstance(t, torch.Tensor) else None
    if code is None or t.dim() != 1 or (columns is not None and t.shape[0] != columns):
        _checks.bias(where, t, columns, lambda x: isinstance(x, torch.Tensor))
    return (t.data_ptr(), t.shape[0], t.stride(0), t.get_device(), code)


_ACTIVATIONS = _checks.ACTIVATIONS  # the fused epilogue's (hgemm::Activation), by the library's names


def _activation(activation, where="hgemm.matmul"):
    """The library's name of an activation given as None (none) or one of its names; else ValueError."""
    return _checks.activation(where, activation)


_RAW_STREAM = {}


def _torch_stream(torch, device):
    raw = _RAW_STREAM.get("fn")
    if raw is None:  # torch._C._cuda_getCurrentRawStream: the stream handle without a Stream object
        raw = _RAW_STREAM["fn"] = getattr(torch._C, "_cuda_getCurrentRawStream", None) or (
            lambda d: torch.cuda.current_stream(d).cuda_stream)
    return raw(device)


def _default_stream(x):
    """The caller's current stream for x's framework (torch, cupy), else the default stream."""
    fw = _framework(x)
    if fw == "torch" and getattr(x, "is_cuda", False):
        return _torch_stream(_torch(), x.get_device())
    if fw == "cupy":
        import cupy

        return cupy.cuda.get_current_stream().ptr
    return 0


def _new_like(x, shape, dtype, where="hgemm.matmul"):
    """A new array of x's framework on x's device, of out_dtype `dtype` (None: x's dtype)."""
    fw = _framework(x)
    if fw == "torch":
        import torch

        return torch.empty(shape, dtype=x.dtype if dtype is None else _torch_dtype(torch, dtype), device=x.device)
    if fw == "cupy":
        import cupy

        name = None if dtype is None else _dtype_name(dtype)
        if name == "bfloat16":
            _checks.fail(TypeError, where, "out_dtype", "expected float16 or float32 with cupy (cupy has "
                         "no bfloat16 arrays), got bfloat16")
        with x.device:
            return cupy.empty(shape, dtype=x.dtype if name is None else name)
    if type(x).__module__ == "numpy":
        _checks.cuda(where, "a", "cpu")  # host memory: what the native layer would say
    _checks.fail(TypeError, where, "out", f"expected an array: hgemm cannot allocate a {type(x).__name__} "
                 "array, pass out=")


def _check_out_dtype(out, dtype, where="hgemm.matmul"):
    """TypeError unless the given out has out_dtype `dtype` (an out of a dtype no name is found for
    is left to the dtype check of out)."""
    want = _dtype_name(dtype, where)
    got = _checks.dtype_text(getattr(out, "dtype", None))
    if got in _checks.OUTPUT_DTYPES:
        _checks.out_matches(where, got, want)


def _shape(x, name, where="hgemm.matmul"):
    return _checks.array_shape(where, name, x)


def _out_shape(sa, sb, trans_a, trans_b, where="hgemm.matmul"):
    """op(a)·op(b)'s shape, with torch.matmul's broadcasting of a 2-D operand or a batch of one."""
    m, _, n = _checks.contraction(where, sa, sb, trans_a, trans_b)
    if len(sa) == 2 and len(sb) == 2:
        return (m, n)
    batch = _checks.batches(where, sa[0] if len(sa) == 3 else 1, sb[0] if len(sb) == 3 else 1)
    return (batch, m, n)


def _accum(accum, where="hgemm.matmul"):
    """"f32" or "f16" for accum given so, or as torch.float32 / torch.float16 (or numpy's)."""
    return _checks.accum(where, accum)


def _stream_handle(stream, where="hgemm.matmul"):
    """A cudaStream_t as an int, from an int, a torch.cuda.Stream or a cupy Stream."""
    return _checks.stream(where, stream)


def _kernel_keyword(kernel_id, kernel):
    """kernel_id, or the older keyword kernel= with a DeprecationWarning."""
    if kernel is None:
        return kernel_id
    import warnings

    warnings.warn("hgemm.matmul(kernel=...) is now kernel_id=, the keyword of the torch operators",
                  DeprecationWarning, stacklevel=3)
    if kernel_id != "auto" and kernel_id != kernel:
        _checks.fail(ValueError, "hgemm.matmul", "kernel", f"expected kernel_id's value {kernel_id!r} (kernel= is "
                     f"kernel_id's deprecated name: give kernel_id only), got {kernel!r}")
    return kernel


def _readable(t):
    """t, or a contiguous copy when one of its matrices is neither row-major with a leading dimension
    nor a transposed view of one (the layouts the library reads in place): what the operators do,
    so that a tensor is taken with and without grad alike."""
    shape, stride = t.shape, t.stride()
    if len(shape) < 2:
        return t
    rows, cols = shape[-2], shape[-1]
    s0, s1 = stride[-2], stride[-1]
    if (((s1 == 1 or cols <= 1) and (rows <= 1 or s0 >= cols))
            or ((s0 == 1 or rows <= 1) and (cols <= 1 or s1 >= rows))):
        return t
    return t.contiguous()


def _to_3d(torch, a, b, where="hgemm.matmul"):
    """(a', b', shape) for torch tensors of which one is more than 3-D: a' and b' 2-D or 3-D, whose
    product, viewed as `shape`, is torch.matmul(a, b) with its broadcasting of the batch dimensions.
    A 2-D b flattens a's batch into rows (a view when a is contiguous); otherwise each operand is
    expanded to the common batch and flattened (a copy only where the expansion repeats data)."""
    for name, t in (("a", a), ("b", b)):
        if t.dim() < 2:
            _checks.ndim(where, name, t.dim(), (), "2 or more dimensions")
    m, k, n = _checks.contraction(where, a.shape, b.shape)
    try:
        batch = tuple(torch.broadcast_shapes(a.shape[:-2], b.shape[:-2]))
    except RuntimeError:
        _checks.fail(ValueError, where, "b", f"expected batch dimensions that broadcast with a's "
                     f"{tuple(a.shape[:-2])}, got {tuple(b.shape[:-2])} (batch sizes do not broadcast)")
    shape = batch + (m, n)
    if b.dim() == 2:
        return a.reshape(-1, k), b, shape

    def flat(t, rows, cols):
        if t.dim() == 2:
            return t
        if t.shape[:-2].numel() == 1:
            return t.reshape(1, rows, cols)  # a batch of one is shared
        return t.expand(batch + (rows, cols)).reshape(-1, rows, cols)

    return flat(a, m, k), flat(b, k, n), shape


def _check_kernel(kernel, where="hgemm.matmul"):
    _checks.kernel_id(where, kernel, _kernels)


def matmul(a, b, *, out=None, out_dtype=None, alpha=1.0, beta=0.0, accum="f32", kernel_id="auto", trans_a=False,
           trans_b=False, stream=None, bias=None, activation=None, aux_out=None, kernel=None):
    """out = act(alpha · op(a) · op(b) + beta · out + bias), with op(x) = x.T when trans_x, else x.

    a, b: GPU arrays (anything with __dlpack__), both float16 or both bfloat16; out: float16,
    bfloat16 or float32. Each is 2-D, or a 3-D batch of matrices with torch.matmul's broadcasting
    (a 2-D operand, or a batch of one, is used for every product; out is batch×M×N). Returns out: a
    new array of a's framework when out is None (beta must then be 0), of dtype out_dtype, default
    a's dtype. torch tensors may have more dimensions: torch.matmul's broadcasting of the batch
    dimensions ((2, 1, M, K) by (3, K, N) is 2×3×M×N). out_dtype: a torch/numpy/cupy dtype or "f16",
    "bf16", "f32", "float16", "bfloat16", "float32" (cupy has no bfloat16); with out given it must
    name out's dtype. accum: "f32" (default) or "f16", or torch.float32 / torch.float16 (f16:
    float16 a, b and out only). kernel_id: an id from kernels() or "auto" (the ladder's rungs take
    float16 only; kernel= is its older, deprecated name). stream: a cudaStream_t as an int, or a
    torch.cuda.Stream / cupy Stream; default: the current stream of a's framework (torch, cupy),
    else the default stream. torch tensors whose matrices the library cannot read in place (such
    as a column slice x[:, ::2]) are copied, with and without grad alike.

    The fused epilogue, applied to the f32 sum before out's one rounding: bias (default none) is a
    contiguous 1-D array of float16, bfloat16 or float32 with one value per column of out (as
    nn.Linear's), shared by a batch; activation is None, "relu", "gelu" (erf, torch's
    gelu(approximate="none")), "gelu_tanh" (gelu(approximate="tanh")) or "silu"; aux_out, an array
    of out's shape and layout (float16, bfloat16 or float32), receives the pre-activation
    Z = alpha·op(a)·op(b) + beta·out + bias (what a backward pass needs). The kernel "auto" fuses it
    into the product on Hopper and adds one elementwise pass elsewhere; a ladder kernel named in
    `kernel_id` refuses it (ValueError).

    torch tensors that need grad (bias included), tensor subclasses and calls under torch.compile
    go through torch.ops.hgemm.mm / hgemm.matmul, or hgemm.addmm with a bias or an activation
    (autograd, tracing), which take only a, b, out_dtype, accum and kernel_id, plus bias and
    activation (fused for a 2-D b, a batched a then flattened into rows; with a batched b the
    bias and activation are applied by torch after the product). Raises TypeError (not an array,
    a dtype or dtype combination not supported, not on a GPU), ValueError (shapes, strides,
    unknown or unsupported kernel, arguments the library refuses), RuntimeError (CUDA errors),
    each message of the form "hgemm.matmul: argument 'b': expected ..., got ..." (see
    hgemm._checks; the operators' messages name the operator, hgemm::mm, instead).
    """
    if accum != "f32" and accum != "f16":
        accum = _accum(accum)
    if kernel is not None:
        kernel_id = _kernel_keyword(kernel_id, kernel)
    kernel = kernel_id
    if kernel != "auto":
        _check_kernel(kernel)
    if stream is not None and not isinstance(stream, int):
        stream = _stream_handle(stream)
    epilogue = bias is not None or activation is not None or aux_out is not None
    if activation is not None:
        activation = _activation(activation)
    torch = _torch()
    if torch is not None and isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if a.dim() > 3 or b.dim() > 3:
            return _matmul_nd(torch, a, b, out, out_dtype, alpha, beta, accum, kernel, trans_a, trans_b, stream,
                              bias, activation, aux_out)
        plain = _PLAIN or _plain_types(torch)
        if (type(a) not in plain or type(b) not in plain or torch.compiler.is_compiling()
                or ((a.requires_grad or b.requires_grad) and torch.is_grad_enabled())
                or (bias is not None and isinstance(bias, torch.Tensor)
                    and (type(bias) not in plain or (bias.requires_grad and torch.is_grad_enabled())))):
            return _matmul_op(torch, a, b, out, out_dtype, alpha, beta, accum, kernel, trans_a, trans_b, stream,
                              bias, activation, aux_out)
        if (out is None or type(out) is torch.Tensor) and (aux_out is None or type(aux_out) is torch.Tensor):
            if epilogue:
                return _matmul_torch(torch, a, b, out, out_dtype, alpha, beta, accum, kernel, trans_a, trans_b,
                                     stream, bias, activation, aux_out)
            return _matmul_torch(torch, a, b, out, out_dtype, alpha, beta, accum, kernel, trans_a, trans_b, stream)
    sa, sb = _shape(a, "a"), _shape(b, "b")
    ab = _operand_dtypes(a, b)
    shape = _out_shape(sa, sb, trans_a, trans_b)
    if out is None:
        _beta_reads_out(beta)
        out = _new_like(a, shape, out_dtype)
    elif out_dtype is not None:
        _check_out_dtype(out, out_dtype)
    out_text = _checks.dtype_text(getattr(out, "dtype", None))
    if getattr(out, "dtype", None) is not None:
        _checks.dtype("hgemm.matmul", "out", out.dtype, _checks.OUTPUT_DTYPES)
    if accum == "f16" and ab is not None:
        _checks.accum_f16("hgemm.matmul", ab, out_text)
    if bias is not None:
        _checks.bias("hgemm.matmul", bias, shape[-1])
    if aux_out is not None and getattr(aux_out, "dtype", None) is not None:
        _checks.dtype("hgemm.matmul", "aux_out", aux_out.dtype, _checks.OUTPUT_DTYPES)
    if stream is None:
        stream = _default_stream(a)
    try:
        if epilogue:
            _gemm(a, b, out, float(alpha), float(beta), accum, kernel, bool(trans_a), bool(trans_b), int(stream),
                  bias=bias, activation=activation or "none", aux_out=aux_out)
        else:
            _gemm(a, b, out, float(alpha), float(beta), accum, kernel, bool(trans_a), bool(trans_b), int(stream))
    except (TypeError, ValueError, RuntimeError) as e:
        raise _checks.native("hgemm.matmul", e) from None
    return out


def _beta_reads_out(beta, where="hgemm.matmul"):
    if beta != 0:
        _checks.fail(ValueError, where, "beta", f"expected 0 without out= (beta != 0 reads out: pass out=), got {beta}")


def _operand_dtypes(a, b, where="hgemm.matmul"):
    """The checks of a's and b's dtypes for arrays of any framework (by name): their dtype's name,
    or None where an array has no dtype the checks can read (the native layer then checks it)."""
    da, db = getattr(a, "dtype", None), getattr(b, "dtype", None)
    if da is None or db is None:
        return None
    return _checks.operands(where, da, db)


def _matmul_nd(torch, a, b, out, out_dtype, alpha, beta, accum, kernel, trans_a, trans_b, stream, bias, activation,
               aux_out):
    """matmul of torch tensors of which one is more than 3-D, as a 2-D or 3-D product (_to_3d)."""
    a, b = (a.mT if trans_a else a), (b.mT if trans_b else b)
    a3, b3, shape = _to_3d(torch, a, b)
    flat = (-1, shape[-1]) if b3.dim() == 2 else (-1,) + shape[-2:]

    def view(t, name):
        if t is None:
            return None
        if tuple(t.shape) != shape:
            _checks.fail(ValueError, "hgemm.matmul", name, f"expected shape {tuple(shape)}, got {tuple(t.shape)}")
        try:
            return t.view(flat)
        except RuntimeError:
            _checks.fail(ValueError, "hgemm.matmul", name, "expected a tensor contiguous over its batch dimensions "
                         "(it is written as one batch), got strides " + str(tuple(t.stride())))

    y = matmul(a3, b3, out=view(out, "out"), out_dtype=out_dtype, alpha=alpha, beta=beta, accum=accum,
               kernel_id=kernel, stream=stream, bias=bias, activation=activation, aux_out=view(aux_out, "aux_out"))
    return out if out is not None else y.view(shape)


def _matmul_torch(torch, a, b, out, out_dtype, alpha, beta, accum, kernel, trans_a, trans_b, stream, bias=None,
                  activation=None, aux_out=None):
    a, b = _readable(a), _readable(b)  # kept alive until the launch is enqueued
    if bias is not None and getattr(bias, "dim", None) and bias.dim() == 1 and bias.shape[0] > 1 \
            and bias.stride(0) != 1:
        bias = bias.contiguous()  # a strided bias is copied, as the operators do
    va, vb = _torch_view(torch, a, "a"), _torch_view(torch, b, "b")
    if va[6] != vb[6]:
        _checks.operands("hgemm.matmul", a.dtype, b.dtype)
    if (va[1] if trans_a else va[2]) != (vb[2] if trans_b else vb[1]) or len(va) != 7 or len(vb) != 7:
        shape = _out_shape(a.shape, b.shape, trans_a, trans_b)
    else:
        shape = (va[2] if trans_a else va[1], vb[1] if trans_b else vb[2])
    if out is None:
        _beta_reads_out(beta)
        out = torch.empty(shape, dtype=a.dtype if out_dtype is None else _torch_dtype(torch, out_dtype),
                          device=a.device)
    elif out_dtype is not None:
        _check_out_dtype(out, out_dtype)
    if stream is None:
        stream = _torch_stream(torch, va[5]) if va[5] >= 0 else 0
    vo = _torch_view(torch, out, "out")
    if accum == "f16" and (va[6] != 0 or vo[6] != 0):
        _checks.accum_f16("hgemm.matmul", _checks.dtype_text(a.dtype), _checks.dtype_text(out.dtype))
    vbias = vaux = None
    if bias is not None:
        vbias = _torch_vector(torch, bias, "bias", out.shape[-1])
    if aux_out is not None:
        vaux = _torch_view(torch, aux_out, "aux_out")
    try:
        if bias is None and activation is None and aux_out is None:
            _gemm_views(va, vb, vo, float(alpha), float(beta), accum, kernel, bool(trans_a), bool(trans_b),
                        int(stream))
        else:
            _gemm_views(va, vb, vo, float(alpha), float(beta), accum, kernel, bool(trans_a), bool(trans_b),
                        int(stream), bias=vbias, activation=activation or "none", aux_out=vaux)
    except (TypeError, ValueError, RuntimeError) as e:
        raise _checks.native("hgemm.matmul", e) from None
    return out


_OPS = {}
_PLAIN = []  # the tensor types the fast path reads directly; subclasses go through the operators


def _plain_types(torch):
    _PLAIN.extend((torch.Tensor, torch.nn.Parameter))
    return _PLAIN


def _matmul_op(torch, a, b, out, out_dtype, alpha, beta, accum, kernel, trans_a, trans_b, stream, bias=None,
               activation=None, aux_out=None):
    """Through torch.ops.hgemm.mm (2-D) or hgemm.matmul (batched), or hgemm.addmm for a bias or an
    activation: the product, and the epilogue without aux_out."""
    if (out is not None or alpha != 1 or beta != 0 or trans_a or trans_b or stream is not None
            or aux_out is not None):
        raise ValueError("hgemm.matmul with tensors that require grad (or under torch.compile) takes only "
                         "a, b, out_dtype, accum, kernel, bias and activation: out=, aux_out=, alpha, beta, "
                         "trans_a, trans_b and stream would drop the gradient (use a.T for op T, or run under "
                         "torch.no_grad())")
    ops = _OPS.get("ops")
    if ops is None:
        from . import torch_ops

        ops = _OPS["ops"] = (torch_ops.mm, torch_ops.matmul, torch_ops.addmm)
    if bias is not None or activation is not None:
        if bias is not None and not isinstance(bias, torch.Tensor):
            _checks.bias("hgemm.matmul", bias, None, lambda x: False)
        if b.dim() != 2:
            # a batch of b: the operators' product, then the bias and activation by torch on its f32
            # values (hgemm::addmm takes a 2-D b), so that the direct path's inputs are taken here too
            y = _matmul_op(torch, a, b, None, out_dtype, 1.0, 0.0, accum, kernel, False, False, None)
            if bias is not None:
                _torch_vector(torch, bias, "bias", y.shape[-1])
                _checks.same_device("hgemm.matmul", "bias", bias.device, a.device)
                z = y.float() + bias.float()
            else:
                z = y.float()
            from .nn import _TORCH_ACT

            return _TORCH_ACT[activation or "none"](z).to(y.dtype)
        rows = a.reshape(-1, a.shape[-1]) if a.dim() > 2 else a
        kwargs = {"activation": activation or "none", "accum": accum, "kernel_id": kernel}
        if out_dtype is not None:
            kwargs["out_dtype"] = _torch_dtype(torch, out_dtype)
        y = ops[2](bias, rows, b, **kwargs)
        return y.view(*a.shape[:-1], b.shape[-1]) if a.dim() > 2 else y
    op = ops[0 if a.dim() == 2 and b.dim() == 2 else 1]
    if out_dtype is None:
        return op(a, b, accum=accum, kernel_id=kernel)
    return op(a, b, accum=accum, kernel_id=kernel, out_dtype=_torch_dtype(torch, out_dtype))


# ---- grouped products (mixture of experts) ----

_GROUPED = "hgemm.grouped_mm"
_K_GROUPED = ("hgemm.grouped_mm: a 2-D a and a 2-D b (the K-grouped product of weight gradients, "
              "out[g] = a[:, s_g:e_g] · b[s_g:e_g, :]) takes torch tensors and offs")
_COLS_GROUPED = ("hgemm.grouped_mm: a 3-D a and a 2-D b (groups along b's columns, out[:, s_g:e_g] = "
                 "a[g] · b[:, s_g:e_g]) takes torch tensors and offs")


def grouped_mm(a, b, offs=None, *, out_dtype=None, out=None, m_valid=None):
    """Grouped products in one launch, as torch._grouped_mm (mixture-of-experts layers):

    * a 2-D (ΣM×K, the rows of every group sorted by group), b 3-D (G×K×N) and offs (G int32, the
      groups' cumulative END rows, on the GPU): out[s_g:e_g] = a[s_g:e_g] · b[g], with s_g = offs[g-1]
      (0 for g = 0) and e_g = offs[g]; out is ΣM×N and its rows from offs[-1] on are not written.
    * a 3-D (G×M×K), b 2-D (K×ΣN) and offs (G int32, the groups' cumulative ends along b's
      columns): out[:, s_g:e_g] = a[g] · b[:, s_g:e_g], M×ΣN, its columns from offs[-1] on not
      written. torch tensors only: the transposed problem in the first form, then outᵀ copied to
      rows (one copy of out, and of b unless b is a transposed view of ΣN×K rows).
    * a 2-D (M×ΣK) and b 2-D (ΣK×N) with offs (G int32, the groups' cumulative ends along K): the
      K-grouped product of weight gradients, out[g] = a[:, s_g:e_g] · b[s_g:e_g, :], G×M×N (an
      empty group gives zeros). torch tensors only; a is read in place when column-major (as x.t()
      of the forward's x) and b when row-major (as dy), other layouts are copied.
    * a and b 3-D (G×M×K and G×K×N), no offs: out[g] = a[g] · b[g], G×M×N. hgemm's own keyword
      m_valid (G int32 on the GPU) counts the rows of each group that matter: rows of out[g] from
      m_valid[g] on are then not written (the masked layout: a fixed shape for CUDA graphs).

    The group sizes are read on the GPU only (no synchronisation; a captured CUDA graph replays with
    new sizes written into the same tensor). A size outside [0, rows] is clamped, decreasing offsets
    give empty groups. a and b are float16 or both bfloat16; out_dtype float16, bfloat16 or float32
    (default a's dtype; as torch._grouped_mm, which takes both 16-bit types). Any strides: a transposed view (such
    as weights stored G×N×K passed as w.transpose(-2, -1)) is op T, without a copy. out, when given,
    must have row-major rows. torch tensors that need grad, tensor subclasses and calls under
    torch.compile go through torch.ops.hgemm.grouped_mm (autograd for every form; out= is then
    refused). Raises TypeError (dtypes, not on a GPU), ValueError (shapes, strides), RuntimeError
    (CUDA errors).
    """
    sa, sb = (_checks.array_shape(_GROUPED, name, x, what="2-D or 3-D") for name, x in (("a", a), ("b", b)))
    _checks.operands(_GROUPED, a.dtype, b.dtype)
    shape = _checks.grouped_shape(_GROUPED, sa, sb, offs is not None, m_valid is not None)
    if shape[0] is None:
        return _k_grouped_mm(a, b, offs, shape, out_dtype, out)
    if len(sa) == 3 and len(sb) == 2:
        return _cols_grouped_mm(a, b, offs, out_dtype, out)
    sizes, masked = (m_valid, True) if len(sa) == 3 else (offs, False)
    if sizes is not None:
        _checks.group_sizes(_GROUPED, "m_valid" if masked else "offs", sizes, sb[0])
    torch = _torch()
    if (torch is not None and isinstance(a, torch.Tensor) and sizes is not None and not masked
            and a.stride(-1) != 1 and a.shape[-1] > 1):
        a = a.contiguous()  # the contiguous layout takes A row-major (its groups start at any row)
    if torch is not None and isinstance(a, torch.Tensor) and isinstance(b, torch.Tensor):
        if _needs_the_operator(torch, a, b):
            return _grouped_op(torch, a, b, offs, out_dtype, out, m_valid)
        if out is None:
            out = torch.empty(shape, dtype=a.dtype if out_dtype is None else _torch_dtype(torch, out_dtype),
                              device=a.device)
        elif out_dtype is not None:
            _check_out_dtype(out, out_dtype, _GROUPED)
        if type(out) is torch.Tensor and (sizes is None or type(sizes) is torch.Tensor):
            va, vb, vo = _torch_view(torch, a, "a"), _torch_view(torch, b, "b"), _torch_view(torch, out, "out")
            stream = _torch_stream(torch, va[5]) if va[5] >= 0 else 0
            try:
                if sizes is None:  # a plain batch: the batched matmul, one launch
                    _gemm_views(va, vb, vo, 1.0, 0.0, "f32", "auto", False, False, stream)
                else:
                    _grouped_gemm_views(va, vb, vo, _torch_sizes(torch, sizes, "m_valid" if masked else "offs"),
                                        masked, stream)
            except (TypeError, ValueError) as e:
                raise _checks.native(_GROUPED, e) from None
            return out
    if out is None:
        out = _new_like(a, shape, out_dtype, _GROUPED)
    elif out_dtype is not None:
        _check_out_dtype(out, out_dtype, _GROUPED)
    stream = _default_stream(a)
    try:
        if sizes is None:
            _gemm(a, b, out, 1.0, 0.0, "f32", "auto", False, False, int(stream))
        else:
            _grouped_gemm(a, b, out, sizes, masked, int(stream))
    except (TypeError, ValueError) as e:
        raise _checks.native(_GROUPED, e) from None
    return out


def _needs_the_operator(torch, a, b):
    """Whether torch tensors a and b go through torch.ops.hgemm.grouped_mm: a gradient to record,
    a tensor subclass, or a trace under torch.compile."""
    plain = _PLAIN or _plain_types(torch)
    return (type(a) not in plain or type(b) not in plain or torch.compiler.is_compiling()
            or ((a.requires_grad or b.requires_grad) and torch.is_grad_enabled()))


def _grouped_op(torch, a, b, offs, out_dtype, out, m_valid=None):
    """torch.ops.hgemm.grouped_mm(a, b, offs, m_valid=m_valid) with out_dtype; out must be None."""
    if out is not None:
        _checks.fail(ValueError, _GROUPED, "out", "expected None with tensors that require grad (or under "
                     "torch.compile: the result is a new tensor, and out= would drop the gradient), got a tensor")
    from . import torch_ops

    return torch_ops.grouped_mm(a, b, offs, None, None if out_dtype is None else _torch_dtype(torch, out_dtype),
                                m_valid)


def _k_grouped_mm(a, b, offs, shape, out_dtype, out):
    """grouped_mm's 2-D × 2-D form (see grouped_mm)."""
    torch = _torch()
    if torch is None or not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise NotImplementedError(_K_GROUPED)
    _checks.group_sizes(_GROUPED, "offs", offs, -1)
    if _needs_the_operator(torch, a, b):
        return _grouped_op(torch, a, b, offs, out_dtype, out)
    _torch_sizes(torch, offs, "offs")  # contiguous
    shape = (int(offs.shape[0]), shape[1], shape[2])
    if out is None:
        out = torch.empty(shape, dtype=a.dtype if out_dtype is None else _torch_dtype(torch, out_dtype),
                          device=a.device)
    else:
        if out_dtype is not None:
            _check_out_dtype(out, out_dtype, _GROUPED)
        _checks.out_shape(_GROUPED, out.shape, shape)
    from . import torch_ops

    return torch_ops.k_grouped_into(a, b, offs, out, _GROUPED)


def _cols_grouped_mm(a, b, offs, out_dtype, out):
    """grouped_mm's 3-D × 2-D form (see grouped_mm): always the operator, whose result out= takes
    as a copy."""
    torch = _torch()
    if torch is None or not isinstance(a, torch.Tensor) or not isinstance(b, torch.Tensor):
        raise NotImplementedError(_COLS_GROUPED)
    if _needs_the_operator(torch, a, b) or out is None:
        return _grouped_op(torch, a, b, offs, out_dtype, out)
    if out_dtype is not None:
        _check_out_dtype(out, out_dtype, _GROUPED)
    _checks.out_shape(_GROUPED, out.shape, (a.shape[1], b.shape[1]))  # checked before the product
    return out.copy_(_grouped_op(torch, a, b, offs, out.dtype, None))  # computed in out's dtype


def _torch_sizes(torch, t, name, where=_GROUPED):
    """(data_ptr, count, device) of a tensor of group sizes for the native layer: a contiguous
    one, its dtype and length already checked by _checks.group_sizes."""
    if t.dim() != 1 or (t.shape[0] > 1 and t.stride(0) != 1):
        _checks.fail(ValueError, where, name, f"expected a contiguous 1-D tensor, got shape {tuple(t.shape)} and "
                                              f"strides {t.stride()}")
    return (t.data_ptr(), t.shape[0], t.get_device())


def _register_torch():
    """Registers torch.ops.hgemm.* where torch is installed, so that a saved torch.export program
    calling them loads after `import hgemm`; imports nothing when torch is absent."""
    import importlib.util
    import os

    if os.environ.get("HGEMM_NO_TORCH", "") not in ("", "0") or importlib.util.find_spec("torch") is None:
        return
    try:
        from . import torch_ops  # noqa: F401
    except Exception as e:  # a torch too old or broken must not make hgemm unusable on other arrays
        import warnings

        warnings.warn(f"hgemm: torch.ops.hgemm not registered ({type(e).__name__}: {e})", RuntimeWarning)


_register_torch()
